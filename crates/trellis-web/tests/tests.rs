//! API tests of `trellis interactive serve`, against a server started in this
//! process on a free loopback port and spoken to over plain HTTP/1.1. (The
//! `kill -9` durability test runs the `trellis` binary as a child process:
//! `crates/trellis-cli/tests/serve.rs`.)

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use trellis::ddt::Strategy;
use trellis_web::{Config, Running};

mod issue22_bodies;
mod issue24_images;
mod issue24_web;
mod issue26_exact;

/// A raw HTTP/1.1 request; returns the status, the headers (lower-case names)
/// and the body.
fn raw(addr: SocketAddr, request: &[u8]) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(request).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head.to_ascii_lowercase(), body.to_string())
}

fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut req = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req += &format!("Host: 127.0.0.1:{}\r\n", addr.port());
    }
    for (k, v) in headers {
        req += &format!("{k}: {v}\r\n");
    }
    req += &format!("Content-Length: {}\r\n\r\n{body}", body.len());
    raw(addr, req.as_bytes())
}

fn get(addr: SocketAddr, path: &str) -> (u16, Value) {
    let (status, _, body) = http(addr, "GET", path, &[], "");
    (
        status,
        serde_json::from_str(&body).unwrap_or(Value::String(body)),
    )
}

fn post(addr: SocketAddr, path: &str, body: &Value) -> (u16, Value) {
    post_text(addr, path, &body.to_string())
}

fn post_text(addr: SocketAddr, path: &str, body: &str) -> (u16, Value) {
    let (status, _, body) = http(
        addr,
        "POST",
        path,
        &[("Content-Type", "application/json")],
        body,
    );
    (
        status,
        serde_json::from_str(&body).unwrap_or(Value::String(body)),
    )
}

/// Twelve points in two groups of six (`a0`..`a5` near 0, `b0`..`b5` near 5), with a text column.
fn twelve(dir: &Path) -> PathBuf {
    let mut csv = String::from("name,x,text,y\n");
    for (g, base) in [("a", 0.0), ("b", 5.0)] {
        for i in 0..6 {
            let v = base + 0.1 * i as f64;
            csv += &format!("{g}{i},{v},\"point {g}{i}, group {g}\",{}\n", v * 0.5);
        }
    }
    let p = dir.join("twelve.csv");
    std::fs::write(&p, csv).unwrap();
    p
}

fn config(dir: &Path, points: PathBuf) -> Config {
    Config {
        db: dir.join("sessions.sqlite"),
        port: 0,
        sigma: "1".into(),
        background_iters: 2_000,
        ..Config::new(points)
    }
}

fn start(config: &Config) -> Running {
    Running::start(config.clone()).expect("the server starts")
}

fn query(addr: SocketAddr) -> Value {
    let (status, q) = get(addr, "/api/query");
    assert_eq!(status, 200, "{q}");
    q
}

fn names(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

/// The leaf sets of every internal node of a JSON tree.
fn clusters(v: &Value, out: &mut Vec<Vec<String>>) -> Vec<String> {
    match v.get("children") {
        None => vec![v["name"].as_str().unwrap().to_string()],
        Some(kids) => {
            let mut all = Vec::new();
            for k in kids.as_array().unwrap() {
                all.extend(clusters(k, out));
            }
            out.push(all.clone());
            all
        }
    }
}

/// Whether the JSON tree satisfies ({a, b}, c): some cluster holds a and b but not c.
fn satisfies(tree: &Value, t: &[String]) -> bool {
    let mut cs = Vec::new();
    clusters(tree, &mut cs);
    cs.iter()
        .any(|c| c.contains(&t[0]) && c.contains(&t[1]) && !c.contains(&t[2]))
}

#[test]
fn session_and_query() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&config(dir.path(), twelve(dir.path())));
    let (status, s) = get(server.addr, "/api/session");
    assert_eq!(status, 200);
    assert_eq!(s["n"], 12);
    assert_eq!(names(&s["names"])[0], "a0");
    assert_eq!(s["triplets"], json!([]));
    assert_eq!(s["answers"], 0);
    assert!(s["iterations"].as_u64().is_some());
    assert_eq!(s["strategy"], "active");
    assert_eq!(s["session"], "twelve.csv");
    assert_eq!(s["hover"][0], "point a0, group a");
    let q1 = query(server.addr);
    let q2 = query(server.addr);
    assert_eq!(q1, q2, "the same query until it is answered");
    let points = names(&q1["points"]);
    assert_eq!(points.len(), 10);
    let tree = q1["tree"].as_str().unwrap();
    assert!(tree.ends_with(';'));
    for p in &points {
        assert!(tree.contains(p.as_str()), "{p} in {tree}");
    }
    server.stop().unwrap();
}

#[test]
fn answers_are_counted_and_the_sampler_runs_between_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path(), twelve(dir.path()));
    c.background_iters = 0;
    c.iters_per_answer = 150;
    c.strategy = Strategy::Smart;
    let server = start(&c);
    let q = query(server.addr);
    let before = get(server.addr, "/api/session").1["iterations"]
        .as_u64()
        .unwrap();
    let (status, r) = post(
        server.addr,
        "/api/answer",
        &json!({"id": q["id"], "accept": true}),
    );
    assert_eq!(status, 200, "{r}");
    assert_eq!((&r["triplets"], &r["answers"]), (&json!(0), &json!(1)));
    assert!(r["answer"].as_u64().is_some(), "the answer's id: {r}");
    let q2 = query(server.addr);
    assert_ne!(q["id"], q2["id"]);
    let after = get(server.addr, "/api/session").1["iterations"]
        .as_u64()
        .unwrap();
    assert_eq!(
        after - before,
        150,
        "exactly --iters-per-answer iterations, no background"
    );
    // A triplet over the shown points.
    let (status, r) = post(
        server.addr,
        "/api/answer",
        &json!({"id": q2["id"], "triplet": ["a0", "b0", "a1"]}),
    );
    assert_eq!((status, &r["triplets"]), (200, &json!(1)));
    let (_, s) = get(server.addr, "/api/session");
    assert_eq!(s["triplets"], json!([["a0", "b0", "a1"]]));
    assert_eq!(s["answers"], 2);
    let (_, tree) = get(server.addr, "/api/tree?format=json");
    assert!(satisfies(&tree, &names(&s["triplets"][0])));
    // A stale id.
    let (status, r) = post(
        server.addr,
        "/api/answer",
        &json!({"id": q2["id"], "accept": true}),
    );
    assert_eq!(status, 409, "{r}");
    assert!(
        r["error"]
            .as_str()
            .unwrap()
            .contains("not the current query")
    );
    server.stop().unwrap();
}

#[test]
fn malformed_answers_are_400() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path(), twelve(dir.path()));
    c.strategy = Strategy::Simple;
    let server = start(&c);
    let q = query(server.addr);
    let id = q["id"].clone();
    let shown = names(&q["points"]);
    assert_eq!(shown.len(), 3);
    let outside = ["a0", "a1", "a2", "a3", "b0"]
        .into_iter()
        .find(|p| !shown.iter().any(|s| s == p))
        .unwrap();
    let cases: Vec<(String, &str)> = vec![
        ("not json".into(), "not valid JSON"),
        ("[1, 2]".into(), "JSON object"),
        (json!({"accept": true}).to_string(), "missing \"id\""),
        (
            json!({"id": "x", "accept": true}).to_string(),
            "non-negative integer",
        ),
        (
            json!({"id": -1, "accept": true}).to_string(),
            "non-negative integer",
        ),
        (json!({"id": id}).to_string(), "give \"accept\""),
        (
            json!({"id": id, "accept": false}).to_string(),
            "must be true",
        ),
        (
            json!({"id": id, "accept": true, "triplet": shown}).to_string(),
            "not both",
        ),
        (
            json!({"id": id, "triplet": [shown[0], shown[1]]}).to_string(),
            "[a, b, c]",
        ),
        (
            json!({"id": id, "triplet": [shown[0], shown[1], 3]}).to_string(),
            "point names",
        ),
        (
            json!({"id": id, "triplet": [shown[0], shown[1], "zz"]}).to_string(),
            "not a point name",
        ),
        (
            json!({"id": id, "triplet": [shown[0], shown[0], shown[1]]}).to_string(),
            "three different",
        ),
        (
            json!({"id": id, "triplet": [shown[0], shown[1], outside]}).to_string(),
            "not one of the query's points",
        ),
        (
            json!({"id": id, "accept": true, "extra": 1}).to_string(),
            "unknown field",
        ),
    ];
    for (body, expect) in cases {
        let (status, r) = post_text(server.addr, "/api/answer", &body);
        assert_eq!(status, 400, "{body}: {r}");
        let e = r["error"].as_str().unwrap();
        assert!(e.contains(expect), "{body}: {e:?} should say {expect:?}");
    }
    // Nothing was stored, and the query is still the same.
    let (_, s) = get(server.addr, "/api/session");
    assert_eq!(s["answers"], 0);
    assert_eq!(query(server.addr)["id"], id);
    server.stop().unwrap();
}

#[test]
fn a_contradicting_triplet_is_409_naming_the_conflict() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path(), twelve(dir.path()));
    c.strategy = Strategy::Smart;
    let server = start(&c);
    for t in [["a0", "a1", "b0"], ["b1", "b2", "a3"]] {
        let q = query(server.addr);
        let (status, r) = post(
            server.addr,
            "/api/answer",
            &json!({"id": q["id"], "triplet": t}),
        );
        assert_eq!(status, 200, "{r}");
    }
    let q = query(server.addr);
    let (status, r) = post(
        server.addr,
        "/api/answer",
        &json!({"id": q["id"], "triplet": ["a0", "b0", "a1"]}),
    );
    assert_eq!(status, 409, "{r}");
    assert_eq!(r["conflicts"], json!([["a0", "a1", "b0"]]), "{r}");
    assert!(r["error"].as_str().unwrap().contains("({a0, a1}, b0)"));
    // Refused, not dropped silently: nothing changed and the query stands.
    let (_, s) = get(server.addr, "/api/session");
    assert_eq!(s["answers"], 2);
    assert_eq!(s["triplets"].as_array().unwrap().len(), 2);
    assert_eq!(query(server.addr)["id"], q["id"]);
    server.stop().unwrap();
}

#[test]
fn undo_strategy_and_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path(), twelve(dir.path()));
    c.strategy = Strategy::Smart;
    let server = start(&c);
    let (status, r) = post(server.addr, "/api/undo", &json!({"answer": 1}));
    assert_eq!(status, 409, "nothing to undo: {r}");
    let triplets = [["a0", "a1", "b0"], ["b1", "b2", "a3"], ["a2", "a3", "b5"]];
    let mut ids = Vec::new();
    for t in triplets {
        let q = query(server.addr);
        let (status, r) = post(
            server.addr,
            "/api/answer",
            &json!({"id": q["id"], "triplet": t}),
        );
        assert_eq!(status, 200);
        ids.push(r["answer"].clone());
    }
    for body in ["", "{}"] {
        let (status, r) = post_text(server.addr, "/api/undo", body);
        assert_eq!(status, 400, "an undo names its answer: {r}");
    }
    let (status, r) = post(server.addr, "/api/undo", &json!({"answer": ids[2]}));
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["triplets"], 2);
    assert_eq!(r["undone"], json!(["a2", "a3", "b5"]));
    assert_eq!(r["last_answer"], ids[1]);
    let (status, _) = post(server.addr, "/api/undo", &json!({"all": true}));
    assert_eq!(status, 400);
    // Strategy.
    for bad in [
        json!({"strategy": "vanilla"}),
        json!({"strategy": "best"}),
        json!({"s": "random"}),
        json!("random"),
    ] {
        let (status, r) = post(server.addr, "/api/strategy", &bad);
        assert_eq!(status, 400, "{bad}: {r}");
    }
    let (status, r) = post(server.addr, "/api/strategy", &json!({"strategy": "simple"}));
    assert_eq!((status, r), (200, json!({"strategy": "simple"})));
    assert_eq!(names(&query(server.addr)["points"]).len(), 3);
    server.stop().unwrap();

    // Restart on the same database: the answers, the undo and the strategy survive.
    let server = start(&c);
    let (_, s) = get(server.addr, "/api/session");
    assert_eq!(
        s["triplets"],
        json!([["a0", "a1", "b0"], ["b1", "b2", "a3"]])
    );
    assert_eq!(s["answers"], 2);
    assert_eq!(s["strategy"], "simple");
    let (_, tree) = get(server.addr, "/api/tree?format=json");
    for t in s["triplets"].as_array().unwrap() {
        assert!(satisfies(&tree, &names(t)), "{t}");
    }
    // The event log keeps the undo (append-only).
    let conn = rusqlite_check(&c.db);
    assert_eq!(
        conn,
        vec!["triplet", "triplet", "triplet", "undo", "strategy"]
    );
    server.stop().unwrap();
}

/// The event kinds of the database, in order, and its journal mode.
fn rusqlite_check(db: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let mut stmt = conn
        .prepare("SELECT kind FROM events ORDER BY seq")
        .unwrap();
    stmt.query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn tree_export_and_exact() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path(), twelve(dir.path()));
    c.strategy = Strategy::Smart;
    let server = start(&c);
    let q = query(server.addr);
    post(
        server.addr,
        "/api/answer",
        &json!({"id": q["id"], "triplet": ["a0", "b0", "a1"]}),
    );
    let (status, head, newick) = http(server.addr, "GET", "/api/tree?format=newick", &[], "");
    assert_eq!(status, 200);
    assert!(head.contains("content-type: text/plain"));
    assert!(newick.trim().ends_with(';'));
    assert!(
        newick.contains("a0:") && newick.contains("b5:"),
        "names and branch lengths: {newick}"
    );
    let (status, tree) = get(server.addr, "/api/tree");
    assert_eq!(status, 200);
    let mut cs = Vec::new();
    assert_eq!(clusters(&tree, &mut cs).len(), 12);
    assert_eq!(cs.len(), 11, "binary");
    assert!(tree["height"].as_f64().unwrap() > 0.0);
    let (status, _) = get(server.addr, "/api/tree?format=xml");
    assert_eq!(status, 400);
    let (status, e) = get(server.addr, "/api/export");
    assert_eq!(status, 200);
    assert_eq!(e["triplets"], json!([["a0", "b0", "a1"]]));
    assert!(e["tree"].as_str().unwrap().ends_with(';'));
    // The exact posterior of 12 points, conditioned on the triplet.
    let mut exact = json!(null);
    for _ in 0..400 {
        exact = get(server.addr, "/api/exact").1;
        if exact["status"] == "ready" {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(exact["status"], "ready", "{exact}");
    assert_eq!(exact["triplets_used"], 1, "{exact}");
    let mut cs = Vec::new();
    clusters(&exact["map"], &mut cs);
    assert_eq!(cs.len(), 11);
    assert!(satisfies(&exact["map"], &names(&json!(["a0", "b0", "a1"]))));
    assert!(
        (exact["map"]["p"].as_f64().unwrap() - 1.0).abs() < 1e-9,
        "the root has p = 1"
    );
    server.stop().unwrap();
    // Too many points for the exact panel: a budget below the planner's
    // estimate for 12 points.
    let mut c = config(dir.path(), twelve(dir.path()));
    let estimate = trellis::plan::estimate_constrained(
        12,
        trellis::models::ModelName::Hcc,
        trellis::plan::Task::Mcc,
        trellis::plan::default_threads(),
    )
    .unwrap();
    c.exact_seconds = estimate.seconds / 2.0;
    c.session = Some("small limit".into());
    let server = start(&c);
    let (_, exact) = get(server.addr, "/api/exact");
    assert_eq!(exact["status"], "unavailable");
    assert!(
        exact["reason"].as_str().unwrap().contains("budget"),
        "{exact}"
    );
    server.stop().unwrap();
}

#[test]
fn security_rules() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&config(dir.path(), twelve(dir.path())));
    let a = server.addr;
    let port = a.port();
    // Host check (DNS rebinding).
    for host in [
        "evil.example",
        "evil.example:80",
        "127.0.0.1:1",
        "localhost",
    ] {
        let (status, _, body) = http(a, "GET", "/api/session", &[("Host", host)], "");
        assert_eq!(status, 403, "Host {host}: {body}");
    }
    let (status, _, _) = raw(a, b"GET /api/session HTTP/1.0\r\n\r\n");
    assert_eq!(status, 403, "no Host at all");
    let local = format!("localhost:{port}");
    let (status, _, _) = http(a, "GET", "/api/session", &[("Host", &local)], "");
    assert_eq!(status, 200, "localhost is the server's own name");
    // A foreign origin.
    let (status, _, _) = http(
        a,
        "POST",
        "/api/undo",
        &[
            ("Origin", "http://evil.example"),
            ("Content-Type", "application/json"),
        ],
        "{}",
    );
    assert_eq!(status, 403);
    // Content type of POSTs.
    for ct in [
        None,
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
    ] {
        let headers: Vec<(&str, &str)> = ct.map(|c| ("Content-Type", c)).into_iter().collect();
        let (status, _, _) = http(
            a,
            "POST",
            "/api/answer",
            &headers,
            r#"{"id": 1, "accept": true}"#,
        );
        assert_eq!(status, 415, "{ct:?}");
    }
    // Body limit.
    let big = format!("{{\"id\": 1, \"pad\": \"{}\"}}", "x".repeat(20_000));
    let (status, _) = post_text(a, "/api/answer", &big);
    assert_eq!(status, 413);
    // Unknown paths, no file access, wrong methods.
    for path in [
        "/nope",
        "/api/nope",
        "/../Cargo.toml",
        "/static/../../etc/passwd",
        "/app.js/x",
    ] {
        let (status, _) = get(a, path);
        assert_eq!(status, 404, "{path}");
    }
    let (status, _, _) = http(a, "GET", "/api/answer", &[], "");
    assert_eq!(status, 405);
    // The page and its assets, with a strict content security policy.
    let (status, head, body) = http(a, "GET", "/", &[], "");
    assert_eq!(status, 200);
    assert!(head.contains("content-type: text/html"));
    assert!(head.contains("content-security-policy: default-src 'self'"));
    assert!(body.contains("/app.js") && !body.contains("http://") && !body.contains("https://"));
    let (status, head, js) = http(a, "GET", "/app.js", &[], "");
    assert_eq!(status, 200);
    assert!(head.contains("text/javascript"));
    assert!(js.contains("/api/answer") && !js.contains("https://"));
    let (status, _, _) = http(a, "GET", "/app.css", &[], "");
    assert_eq!(status, 200);
    server.stop().unwrap();
}

#[test]
fn changed_data_or_settings_are_refused_and_sessions_are_separate() {
    let dir = tempfile::tempdir().unwrap();
    let points = twelve(dir.path());
    let mut c = config(dir.path(), points.clone());
    c.strategy = Strategy::Smart;
    let server = start(&c);
    let q = query(server.addr);
    post(
        server.addr,
        "/api/answer",
        &json!({"id": q["id"], "triplet": ["a0", "a1", "b0"]}),
    );
    server.stop().unwrap();
    // Another session in the same database starts empty.
    let mut other = c.clone();
    other.session = Some("second".into());
    let server = start(&other);
    assert_eq!(get(server.addr, "/api/session").1["triplets"], json!([]));
    server.stop().unwrap();
    // Other model settings for the same session.
    let mut sigma = c.clone();
    sigma.sigma = "2".into();
    let e = Running::start(sigma).err().expect("refused").to_string();
    assert!(e.contains("other model settings"), "{e}");
    // The data file changed.
    let text = std::fs::read_to_string(&points)
        .unwrap()
        .replace("b5,5.5", "b5,5.6");
    std::fs::write(&points, text).unwrap();
    let e = Running::start(c.clone())
        .err()
        .expect("refused")
        .to_string();
    assert!(e.contains("has changed since session"), "{e}");
    // The first session is intact in the database.
    assert_eq!(rusqlite_check(&c.db), vec!["triplet"]);
}

#[test]
fn two_tabs_cannot_both_answer_one_query() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&config(dir.path(), twelve(dir.path())));
    let q = query(server.addr);
    let addr = server.addr;
    let body = json!({"id": q["id"], "accept": true});
    let tabs: Vec<_> = (0..4)
        .map(|_| {
            let body = body.clone();
            std::thread::spawn(move || post(addr, "/api/answer", &body).0)
        })
        .collect();
    let mut codes: Vec<u16> = tabs.into_iter().map(|t| t.join().unwrap()).collect();
    codes.sort();
    assert_eq!(codes, vec![200, 409, 409, 409]);
    assert_eq!(get(addr, "/api/session").1["answers"], 1);
    server.stop().unwrap();
}

#[test]
fn image_column_keeps_only_inline_images_and_text_is_the_hover() {
    let dir = tempfile::tempdir().unwrap();
    let dot = "data:image/png;base64,iVBORw0KGgo=";
    let mut csv = String::from("name,x,image,text\n");
    for i in 0..6 {
        // An inline image (quoted: it holds a comma), or a path, which is never read.
        let image = if i % 2 == 0 {
            format!("\"{dot}\"")
        } else {
            "/etc/passwd".to_string()
        };
        let text = if i == 5 { "" } else { "a \"\"quoted\"\", text" };
        csv += &format!("p{i},{},{image},\"{text}\"\n", i as f64);
    }
    let points = dir.path().join("images.csv");
    std::fs::write(&points, csv).unwrap();
    let server = start(&config(dir.path(), points));
    let (status, s) = get(server.addr, "/api/session");
    assert_eq!(status, 200, "{s}");
    assert_eq!(s["n"], 6);
    assert_eq!(
        s["images"],
        json!([dot, "", dot, "", dot, ""]),
        "data: URIs only"
    );
    assert_eq!(s["hover"][0], "a \"quoted\", text");
    assert_eq!(s["hover"][5], "x = 5", "no text: the features");
    server.stop().unwrap();
}

#[test]
fn sampler_indicator_is_working_while_it_samples_and_idle_after() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path(), twelve(dir.path()));
    c.background_iters = 0;
    let server = start(&c);
    query(server.addr);
    let (_, s) = get(server.addr, "/api/session");
    assert_eq!(s["sampling"], false, "query ready, no background run: {s}");
    server.stop().unwrap();
    c.background_iters = u64::MAX / 2;
    let server = start(&c);
    query(server.addr);
    let (_, s) = get(server.addr, "/api/session");
    assert_eq!(s["sampling"], true, "background run: {s}");
    server.stop().unwrap();
}

/// Issue 21: the web app reads points with the library's one reader:
/// `examples/quoted-names.csv` (quoted commas, doubled quotes, CRLF, a name
/// starting with `#`) gives the names and rows the CLI and Python give, and
/// an unterminated quote refuses to start the server.
#[test]
fn issue21_points_are_read_by_the_library_reader() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/quoted-names.csv");
    let data = trellis_web::app::Data::read(&example).unwrap();
    assert_eq!(
        data.points.names(),
        [
            "Smith, J.",
            "The \"big\" one",
            "#3 looks like a comment",
            "plain"
        ]
    );
    assert_eq!(data.points.row(3), [4.6, 3.1]);
    assert_eq!(data.hover[0], "sepal length = 5.1, sepal width = 3.5");
    let dir = tempfile::tempdir().unwrap();
    let server = start(&config(dir.path(), example));
    let (status, s) = get(server.addr, "/api/session");
    assert_eq!(status, 200, "{s}");
    assert_eq!(s["n"], 4);
    server.stop().unwrap();
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, "name,x\na,1\n\"b,2\nc,3\n").unwrap();
    let e = Running::start(config(dir.path(), bad))
        .err()
        .expect("refused");
    let e = format!("{e:#}");
    assert!(e.contains("line 3") && e.contains("never closed"), "{e}");
}

/// Issue 22: a server that cannot listen has not created or written its
/// database: not a new one, and not an existing one.
#[test]
fn issue22_a_failed_bind_creates_and_writes_no_database() {
    let dir = tempfile::tempdir().unwrap();
    let points = twelve(dir.path());
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port();
    let c = Config {
        port,
        db: dir.path().join("fresh.sqlite"),
        ..config(dir.path(), points.clone())
    };
    let e = format!("{:#}", Running::start(c.clone()).err().expect("refused"));
    assert!(
        e.contains(&format!("cannot listen on 127.0.0.1:{port}")),
        "{e}"
    );
    let mut left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(left, ["twelve.csv"], "no database, no -wal, no -shm");
    // An existing database, closed cleanly, is not touched either.
    let existing = config(dir.path(), points);
    start(&existing).stop().unwrap();
    let before = std::fs::read(&existing.db).unwrap();
    let modified = std::fs::metadata(&existing.db).unwrap().modified().unwrap();
    let e = Running::start(Config {
        port,
        ..existing.clone()
    })
    .err()
    .expect("refused");
    assert!(format!("{e:#}").contains("cannot listen"), "{e:#}");
    assert_eq!(std::fs::read(&existing.db).unwrap(), before);
    assert_eq!(
        std::fs::metadata(&existing.db).unwrap().modified().unwrap(),
        modified
    );
    assert!(!dir.path().join("sessions.sqlite-wal").exists());
    drop(busy);
}
