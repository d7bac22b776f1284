//! Issue 24 in the web app: one writer per session (a second server is
//! refused while the first keeps working), answers with ids and undo by id
//! (only the last answer in force; two concurrent undos of one answer: one
//! succeeds), support values on the tree, and the exact panel conditioned on
//! the triplets in force.

use std::net::SocketAddr;

use serde_json::{Value, json};
use trellis::ddt::Strategy;
use trellis_web::{Config, Running};

use super::{config, get, post, query, start, twelve};

/// Answers the current query with `body` (`accept` or a `triplet`); the answer's id.
fn answer(addr: SocketAddr, body: Value) -> u64 {
    let q = query(addr);
    let mut b = body;
    b["id"] = q["id"].clone();
    let (status, r) = post(addr, "/api/answer", &b);
    assert_eq!(status, 200, "{b}: {r}");
    r["answer"].as_u64().expect("an answer id")
}

fn smart(dir: &std::path::Path) -> Config {
    let mut c = config(dir, twelve(dir));
    c.strategy = Strategy::Smart;
    c
}

#[test]
fn issue24_answers_have_ids_and_undo_takes_back_only_the_last() {
    let dir = tempfile::tempdir().unwrap();
    let c = smart(dir.path());
    let server = start(&c);
    let a = server.addr;
    assert_eq!(get(a, "/api/session").1["last_answer"], Value::Null);
    let k1 = answer(a, json!({"triplet": ["a0", "a1", "b0"]}));
    let k2 = answer(a, json!({"accept": true}));
    let k3 = answer(a, json!({"triplet": ["b1", "b2", "a3"]}));
    assert!(k1 < k2 && k2 < k3, "{k1} {k2} {k3}");
    assert_eq!(get(a, "/api/session").1["last_answer"], json!(k3));
    // Not the last: 409, and nothing changes.
    for k in [k1, k2, k3 + 100] {
        let (status, r) = post(a, "/api/undo", &json!({ "answer": k }));
        assert_eq!(status, 409, "{k}: {r}");
        assert_eq!(r["last_answer"], json!(k3), "{r}");
        assert!(
            r["error"]
                .as_str()
                .unwrap()
                .contains(&format!("answer {k} is not the last answer in force")),
            "{r}"
        );
    }
    assert_eq!(get(a, "/api/session").1["answers"], 3);
    // Malformed undos: 400.
    for body in [
        json!({}),
        json!({"answer": "x"}),
        json!({"answer": -1}),
        json!({"answer": k3, "more": 1}),
        json!([k3]),
    ] {
        let (status, r) = post(a, "/api/undo", &body);
        assert_eq!(status, 400, "{body}: {r}");
    }
    let (status, r) = post(a, "/api/undo", &json!({ "answer": k3 }));
    assert_eq!(status, 200, "{r}");
    assert_eq!(
        (&r["answer"], &r["last_answer"], &r["undone"]),
        (&json!(k3), &json!(k2), &json!(["b1", "b2", "a3"]))
    );
    // The same undo again: 409.
    let (status, _) = post(a, "/api/undo", &json!({ "answer": k3 }));
    assert_eq!(status, 409);
    let (status, r) = post(a, "/api/undo", &json!({ "answer": k2 }));
    assert_eq!((status, &r["undone"]), (200, &json!("accept")), "{r}");
    server.stop().unwrap();
    // A restart replays the undos by id: k1 is the last answer in force.
    let server = start(&c);
    let (_, s) = get(server.addr, "/api/session");
    assert_eq!(s["last_answer"], json!(k1), "{s}");
    assert_eq!(s["triplets"], json!([["a0", "a1", "b0"]]));
    let (status, _) = post(server.addr, "/api/undo", &json!({ "answer": k1 }));
    assert_eq!(status, 200);
    assert_eq!(get(server.addr, "/api/session").1["answers"], 0);
    server.stop().unwrap();
}

#[test]
fn issue24_two_concurrent_undos_of_one_answer_one_succeeds_one_409() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&smart(dir.path()));
    let a = server.addr;
    for round in 0..5 {
        let ids: Vec<u64> = (0..2).map(|_| answer(a, json!({"accept": true}))).collect();
        let before = get(a, "/api/session").1["answers"].as_u64().unwrap();
        let k = ids[1];
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
        let tabs: Vec<_> = (0..2)
            .map(|_| {
                let barrier = barrier.clone();
                std::thread::spawn(move || {
                    barrier.wait();
                    post(a, "/api/undo", &json!({ "answer": k })).0
                })
            })
            .collect();
        let mut codes: Vec<u16> = tabs.into_iter().map(|t| t.join().unwrap()).collect();
        codes.sort();
        assert_eq!(codes, [200, 409], "round {round}");
        let (_, s) = get(a, "/api/session");
        assert_eq!(
            s["answers"].as_u64(),
            Some(before - 1),
            "one answer taken back"
        );
        assert_eq!(s["last_answer"], json!(ids[0]));
    }
    server.stop().unwrap();
}

#[test]
fn issue24_a_second_server_on_the_same_session_is_refused_and_the_first_keeps_working() {
    let dir = tempfile::tempdir().unwrap();
    let c = smart(dir.path());
    let first = start(&c);
    answer(first.addr, json!({"triplet": ["a0", "a1", "b0"]}));
    let e = format!("{:#}", Running::start(c.clone()).err().expect("refused"));
    assert!(
        e.contains("session \"twelve.csv\" of the database")
            && e.contains("is already being served")
            && e.contains(&format!("process {}", std::process::id())),
        "{e}"
    );
    // The refused server wrote nothing: one answer, and the first one answers on.
    answer(first.addr, json!({"triplet": ["b1", "b2", "a3"]}));
    let (_, s) = get(first.addr, "/api/session");
    assert_eq!(s["answers"], 2, "{s}");
    // Another session of the same database may be served beside it.
    let mut other = c.clone();
    other.session = Some("other".into());
    let second = start(&other);
    answer(second.addr, json!({"accept": true}));
    second.stop().unwrap();
    first.stop().unwrap();
    // Stopped: the lease is free again, and the lock files are gone.
    let again = start(&c);
    assert_eq!(get(again.addr, "/api/session").1["answers"], 2);
    again.stop().unwrap();
    let locks: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains(".lock-"))
        .collect();
    if cfg!(unix) {
        assert_eq!(locks, Vec::<String>::new());
    } else {
        // Elsewhere the lock files stay (the module docs of `store` say
        // why); their holder notes are gone.
        assert!(locks.iter().all(|n| !n.ends_with(".holder")), "{locks:?}");
    }
}

/// Polls `GET /api/exact` until `done` holds of it (at most 60 s).
fn exact_until(addr: SocketAddr, done: impl Fn(&Value) -> bool) -> Value {
    let mut e = json!(null);
    for _ in 0..1200 {
        e = get(addr, "/api/exact").1;
        if done(&e) {
            return e;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("the exact panel did not get there: {e}");
}

/// The leaf sets of every internal node of a JSON tree, with its support.
fn supported(v: &Value, out: &mut Vec<(Vec<String>, f64)>) -> Vec<String> {
    match v.get("children") {
        None => vec![v["name"].as_str().unwrap().to_string()],
        Some(kids) => {
            let mut all = Vec::new();
            for k in kids.as_array().unwrap() {
                all.extend(supported(k, out));
            }
            all.sort();
            out.push((all.clone(), v["support"].as_f64().expect("support")));
            all
        }
    }
}

fn holds(tree: &Value, t: [&str; 3]) -> bool {
    let mut cs = Vec::new();
    super::clusters(tree, &mut cs);
    cs.iter().any(|c| {
        c.iter().any(|x| x == t[0]) && c.iter().any(|x| x == t[1]) && !c.iter().any(|x| x == t[2])
    })
}

#[test]
fn issue24_every_clade_of_the_tree_has_its_support() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = smart(dir.path());
    c.background_iters = 20_000;
    let server = start(&c);
    let a = server.addr;
    answer(a, json!({"accept": true}));
    // Let the window fill: 20,000 iterations are 400 thinned trees.
    for _ in 0..400 {
        if get(a, "/api/session").1["sampling"] == false {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    let (status, tree) = get(a, "/api/tree?format=json");
    assert_eq!(status, 200);
    assert_eq!(tree["support_window"], 200);
    assert_eq!(tree["support_thin"], 50);
    let k = tree["support_samples"].as_u64().unwrap();
    assert_eq!(k, 200, "a full window after 20,000 iterations: {tree}");
    let mut cs = Vec::new();
    supported(&tree, &mut cs);
    assert_eq!(cs.len(), 11);
    for (members, s) in &cs {
        assert!((0.0..=1.0).contains(s), "{members:?}: {s}");
        // A fraction of the window's trees.
        assert!((s * k as f64 - (s * k as f64).round()).abs() < 1e-9, "{s}");
    }
    let root = cs.iter().find(|(m, _)| m.len() == 12).unwrap();
    assert_eq!(root.1, 1.0);
    // Two well separated groups of six: each group is in (nearly) every tree.
    for g in ["a", "b"] {
        let group: Vec<String> = (0..6).map(|i| format!("{g}{i}")).collect();
        let s = cs.iter().find(|(m, _)| *m == group).map(|c| c.1);
        assert!(s.is_some_and(|s| s > 0.9), "group {g}: {s:?}");
    }
    // Newick: a label on every internal node.
    let (status, _, newick) = super::http(a, "GET", "/api/tree?format=newick", &[], "");
    assert_eq!(status, 200);
    let labels: Vec<f64> = newick
        .split(')')
        .skip(1)
        .map(|rest| {
            let label: String = rest.chars().take_while(|c| *c != ':').collect();
            label
                .parse::<f64>()
                .unwrap_or_else(|_| panic!("{label:?} in {newick}"))
        })
        .collect();
    assert_eq!(labels.len(), 11, "{newick}");
    assert!(labels.iter().all(|s| (0.0..=1.0).contains(s)));
    assert!(labels.contains(&1.0));
    // A new triplet restarts the window (another posterior): it holds the
    // tree of the change and at most one tree per 50 iterations since. (The
    // sampler may refill it before the tree is read; the bound then allows
    // a full window, but it never admits the old one's 200 trees when fewer
    // than 9,950 iterations ran.)
    let before = get(a, "/api/session").1["iterations"].as_u64().unwrap();
    answer(a, json!({"triplet": ["a0", "b0", "a1"]}));
    let (_, tree) = get(a, "/api/tree?format=json");
    let after = get(a, "/api/session").1["iterations"].as_u64().unwrap();
    let k = tree["support_samples"].as_u64().unwrap();
    assert!(
        k <= 1 + (after - before) / 50,
        "{k} trees after {} iterations",
        after - before
    );
    server.stop().unwrap();
}

#[test]
fn issue24_the_exact_panel_is_conditioned_on_the_triplets_in_force() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&smart(dir.path()));
    let a = server.addr;
    let e0 = exact_until(a, |e| e["status"] == "ready");
    assert_eq!(
        (&e0["triplets_used"], &e0["triplets_in_force"]),
        (&json!(0), &json!(0))
    );
    // Unconstrained, the MAP puts the a's together, apart from the b's.
    let t = ["a0", "b0", "a1"];
    assert!(!holds(&e0["map"], t), "{}", e0["map"]);
    let groups = e0["map"]["children"].as_array().unwrap();
    let p = groups[0]["p"].as_f64().unwrap();
    assert!(p > 0.5 && p <= 1.0, "the two groups are clear: {p}");
    let k = answer(a, json!({ "triplet": t }));
    let e1 = exact_until(a, |e| e["status"] == "ready" && e["triplets_used"] == 1);
    assert_eq!(e1["triplets_in_force"], 1);
    assert_eq!(e1["triplets"], json!([["a0", "b0", "a1"]]));
    assert!(
        holds(&e1["map"], t),
        "the MAP tree satisfies the triplet: {}",
        e1["map"]
    );
    assert!(e1["log_z"].as_f64().unwrap() < e0["log_z"].as_f64().unwrap());
    // No listed cluster breaks the triplet (holds a1 and one of a0, b0).
    for c in e1["clusters"].as_array().unwrap() {
        let m: Vec<&str> = c["members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        let forbidden = m.contains(&"a1") && (m.contains(&"a0") != m.contains(&"b0"));
        assert!(!forbidden, "{c}");
    }
    // Undo: back to the unconstrained posterior.
    let (status, _) = post(a, "/api/undo", &json!({ "answer": k }));
    assert_eq!(status, 200);
    let e2 = exact_until(a, |e| e["status"] == "ready" && e["triplets_used"] == 0);
    assert_eq!(e2["map"], e0["map"]);
    assert_eq!(e2["log_z"], e0["log_z"]);
    // Answers in quick succession: the newest wins, stale runs are dropped.
    let ts = [["a0", "a1", "b0"], ["b1", "b2", "a3"], ["a2", "a3", "b5"]];
    for t in ts {
        answer(a, json!({ "triplet": t }));
    }
    let e3 = exact_until(a, |e| e["status"] == "ready");
    assert_eq!(
        (&e3["triplets_used"], &e3["triplets_in_force"]),
        (&json!(3), &json!(3))
    );
    for t in ts {
        assert!(holds(&e3["map"], t), "{t:?}: {}", e3["map"]);
    }
    server.stop().unwrap();
}

#[test]
fn issue24_the_exact_panel_follows_the_planner() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = smart(dir.path());
    // 12 points under triplets: far below a second; no budget: unavailable.
    c.exact_seconds = 0.0;
    let server = start(&c);
    let (_, e) = get(server.addr, "/api/exact");
    assert_eq!(e["status"], "unavailable", "{e}");
    assert!(e["reason"].as_str().unwrap().contains("budget"), "{e}");
    server.stop().unwrap();
}

/// The planner is the only gate of the exact panel: 22 points under the
/// default budget get it exactly when `estimate_constrained` fits the budget
/// on this machine (no fixed number of points).
#[test]
fn issue24_22_points_get_the_exact_panel_as_the_planner_says() {
    use trellis::plan::{Budget, Task, default_threads, estimate_constrained};
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("name,x,y\n");
    for i in 0..22 {
        csv += &format!("p{i},{},{}\n", (i % 4) as f64 * 2.0, 0.1 * i as f64);
    }
    let points = dir.path().join("twentytwo.csv");
    std::fs::write(&points, csv).unwrap();
    let mut c = config(dir.path(), points);
    c.strategy = Strategy::Smart;
    let budget = trellis_web::Config::new("x.csv".into()).exact_seconds;
    assert_eq!(c.exact_seconds, budget, "the default budget");
    let estimate = estimate_constrained(
        22,
        trellis::models::ModelName::Hcc,
        Task::Mcc,
        default_threads(),
    )
    .unwrap();
    let fits = estimate.fits(&Budget {
        memory_bytes: None,
        seconds: Some(budget),
    });
    let server = start(&c);
    let (_, e) = get(server.addr, "/api/exact");
    if fits {
        assert!(
            ["computing", "ready"].contains(&e["status"].as_str().unwrap()),
            "{estimate}: {e}"
        );
    } else {
        assert_eq!(e["status"], "unavailable", "{estimate}: {e}");
        let reason = e["reason"].as_str().unwrap();
        assert!(
            reason.contains(&format!("budget of {budget} s")) && reason.contains("22 points"),
            "{reason}"
        );
    }
    // Stopping cancels a running computation between batches of work.
    server.stop().unwrap();
}

#[test]
fn issue24_the_page_is_told_while_the_exact_panel_is_recomputed() {
    // 17 points: the constrained marginals take about a second, the
    // unconstrained ones (the blocked kernel) a few milliseconds.
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("name,x,y\n");
    for i in 0..17 {
        csv += &format!(
            "p{i},{},{}\n",
            (i % 3) as f64 * 3.0 + 0.1 * i as f64,
            0.05 * i as f64
        );
    }
    let points = dir.path().join("seventeen.csv");
    std::fs::write(&points, csv).unwrap();
    let mut c = config(dir.path(), points);
    c.strategy = Strategy::Smart;
    let server = start(&c);
    let a = server.addr;
    let e0 = exact_until(a, |e| e["status"] == "ready");
    answer(a, json!({"triplet": ["p0", "p1", "p3"]}));
    let (_, e) = get(a, "/api/exact");
    assert_eq!(e["status"], "recomputing", "{e}");
    assert_eq!(
        (&e["triplets_used"], &e["triplets_in_force"]),
        (&json!(0), &json!(1))
    );
    assert_eq!(
        e["map"], e0["map"],
        "the previous result, while it recomputes"
    );
    let e1 = exact_until(a, |e| e["status"] == "ready");
    assert_eq!(e1["triplets_used"], 1);
    assert!(holds(&e1["map"], ["p0", "p1", "p3"]));
    server.stop().unwrap();
}
