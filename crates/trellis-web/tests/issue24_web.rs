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
    assert_eq!(locks, Vec::<String>::new());
}
