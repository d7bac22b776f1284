//! `trellis interactive serve` as a child process: the URL on the first line of
//! stdout, durability under `kill -9`, clean shutdown on Ctrl-C (SIGINT), and
//! start-up errors. (The API itself is tested in `crates/trellis-web/tests`.)

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util;

/// Starts the server; returns the child and its URL (the first stdout line).
pub fn spawn(points: &Path, db: &Path) -> (Child, String) {
    spawn_with(points, db, &[])
}

/// [`spawn`] with more flags.
fn spawn_with(points: &Path, db: &Path, more: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_trellis"))
        .args(["interactive", "serve", "--port", "0", "--sigma", "1"])
        .args(["--strategy", "smart", "--seed", "3"])
        .args(more)
        .arg("--points")
        .arg(points)
        .arg("--db")
        .arg(db)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().to_string();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with('/'),
        "the first line is the URL: {url:?}"
    );
    (child, url)
}

/// A request over plain HTTP/1.1 to the server at `url`; (status, JSON body).
pub fn call(url: &str, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
    let host = url.trim_start_matches("http://").trim_end_matches('/');
    let mut s = TcpStream::connect(host).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

pub fn points(dir: &Path) -> std::path::PathBuf {
    let mut csv = String::from("name,x,y\n");
    for i in 0..8 {
        csv += &format!(
            "p{i},{},{}\n",
            (i / 4) as f64 * 4.0 + 0.2 * i as f64,
            0.1 * i as f64
        );
    }
    util::file(dir, "eight.csv", &csv)
}

/// A consistent set of answers over p0..p7 (from the tree ((p0,p1),(p2,p3)),((p4,p5),(p6,p7))).
fn answer(k: usize) -> Option<[&'static str; 3]> {
    const T: [[&str; 3]; 6] = [
        ["p0", "p1", "p4"],
        ["p2", "p3", "p0"],
        ["p4", "p5", "p6"],
        ["p6", "p7", "p1"],
        ["p0", "p2", "p5"],
        ["p5", "p7", "p3"],
    ];
    (k % 3 != 2).then(|| T[(k / 3 * 2 + k % 3) % T.len()])
}

#[test]
fn kill_9_loses_no_confirmed_answer() {
    let dir = util::dir("serve-kill");
    let (p, db) = (points(&dir), dir.join("s.sqlite"));
    let (mut child, url) = spawn(&p, &db);
    let n = 7;
    let mut given = Vec::new();
    for k in 0..n {
        let (status, q) = call(&url, "GET", "/api/query", None);
        assert_eq!(status, 200);
        let body = match answer(k) {
            Some(t) => {
                given.push(json!(t));
                json!({"id": q["id"], "triplet": t})
            }
            None => json!({"id": q["id"], "accept": true}),
        };
        let (status, r) = call(&url, "POST", "/api/answer", Some(&body));
        assert_eq!(status, 200, "{r}");
    }
    // SIGKILL right after the last confirmation, while the sampler works.
    child.kill().unwrap();
    child.wait().unwrap();
    let (mut child, url) = spawn(&p, &db);
    let (_, s) = call(&url, "GET", "/api/session", None);
    assert_eq!(s["answers"], n, "{s}");
    assert_eq!(s["triplets"], json!(given));
    let (_, tree) = call(&url, "GET", "/api/export", None);
    assert_eq!(tree["triplets"], json!(given));
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn ctrl_c_shuts_down_cleanly() {
    let dir = util::dir("serve-sigint");
    let (p, db) = (points(&dir), dir.join("s.sqlite"));
    let (mut child, url) = spawn(&p, &db);
    let (_, q) = call(&url, "GET", "/api/query", None);
    let (status, _) = call(
        &url,
        "POST",
        "/api/answer",
        Some(&json!({"id": q["id"], "triplet": ["p0", "p1", "p7"]})),
    );
    assert_eq!(status, 200);
    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "no exit after SIGINT"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(status.success(), "exit {status:?}: {err}");
    let (mut child, url) = spawn(&p, &db);
    let (_, s) = call(&url, "GET", "/api/session", None);
    assert_eq!(s["triplets"], json!([["p0", "p1", "p7"]]));
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn start_up_errors_are_one_sentence() {
    let dir = util::dir("serve-errors");
    let db = dir.join("s.sqlite");
    let db = db.to_str().unwrap();
    util::fails(
        &[
            "interactive",
            "serve",
            "--points",
            "/nonexistent.csv",
            "--db",
            db,
            "--port",
            "0",
        ],
        "cannot read /nonexistent.csv",
    );
    let p = points(&dir);
    let p = p.to_str().unwrap();
    util::fails(
        &[
            "interactive",
            "serve",
            "--points",
            p,
            "--db",
            db,
            "--port",
            "0",
            "--strategy",
            "vanilla",
        ],
        "vanilla strategy asks no queries",
    );
    // Options refused before the database is created.
    for (flag, value, message) in [
        (
            "--subset-size",
            "2",
            "--subset-size must be at least 3, got 2",
        ),
        ("--candidates", "0", "--candidates must be at least 1"),
    ] {
        let base = ["interactive", "serve", "--points", p, "--db", db];
        let mut args = base.to_vec();
        args.extend(["--port", "0", flag, value]);
        util::fails(&args, message);
    }
    assert!(
        !Path::new(db).exists(),
        "a refused start created its database"
    );
    let not_db = util::file(
        &dir,
        "not-a-db.sqlite",
        "this is not a database, just some text",
    );
    util::fails(
        &[
            "interactive",
            "serve",
            "--points",
            p,
            "--db",
            not_db.to_str().unwrap(),
            "--port",
            "0",
        ],
        "not a usable SQLite database",
    );
}

#[test]
fn a_changed_data_file_is_refused_at_start() {
    let dir = util::dir("serve-changed");
    let (p, db) = (points(&dir), dir.join("s.sqlite"));
    let (mut child, url) = spawn(&p, &db);
    let (status, q) = call(&url, "GET", "/api/query", None);
    assert_eq!(status, 200);
    let body = json!({"id": q["id"], "triplet": ["p0", "p1", "p4"]});
    assert_eq!(call(&url, "POST", "/api/answer", Some(&body)).0, 200);
    child.kill().unwrap();
    child.wait().unwrap();
    let text = std::fs::read_to_string(&p).unwrap().replace("p7,", "p7,1");
    std::fs::write(&p, text).unwrap();
    util::fails(
        &[
            "interactive",
            "serve",
            "--points",
            p.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
            "--port",
            "0",
            "--sigma",
            "1",
        ],
        "has changed since session \"eight.csv\" began",
    );
}

#[test]
fn a_port_in_use_is_refused() {
    let dir = util::dir("serve-port");
    let (p, db) = (points(&dir), dir.join("s.sqlite"));
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port().to_string();
    util::fails(
        &[
            "interactive",
            "serve",
            "--points",
            p.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
            "--port",
            &port,
        ],
        &format!("cannot listen on 127.0.0.1:{port}"),
    );
    // Issue 22: the port is bound before the database is opened.
    for f in ["s.sqlite", "s.sqlite-wal", "s.sqlite-shm"] {
        assert!(!dir.join(f).exists(), "{f} was created");
    }
}

/// Issue 24: a second server on the same database and session exits 2 naming
/// the first, which keeps answering; after `kill -9` of the first (its lock
/// dies with it) a new server takes the session at once.
#[test]
fn a_second_server_on_one_session_exits_2_and_kill_9_frees_the_session() {
    let dir = util::dir("serve-lease");
    let (p, db) = (points(&dir), dir.join("s.sqlite"));
    let (mut first, url) = spawn(&p, &db);
    util::fails(
        &[
            "interactive",
            "serve",
            "--port",
            "0",
            "--sigma",
            "1",
            "--points",
            p.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
        ],
        &format!(
            "session \"eight.csv\" of the database {} is already being served, by process {}",
            db.display(),
            first.id()
        ),
    );
    let (_, q) = call(&url, "GET", "/api/query", None);
    let body = json!({"id": q["id"], "accept": true});
    let (status, r) = call(&url, "POST", "/api/answer", Some(&body));
    assert_eq!(status, 200, "the first server works on: {r}");
    first.kill().unwrap();
    first.wait().unwrap();
    let (mut next, url) = spawn(&p, &db);
    let (_, s) = call(&url, "GET", "/api/session", None);
    assert_eq!(s["answers"], 1, "{s}");
    next.kill().unwrap();
    next.wait().unwrap();
}

/// Issue 24, item 5: `--images` problems stop the server at start with exit
/// 2, a message naming the row, no URL and no database (the route and every
/// check: `crates/trellis-web/tests/issue24_images.rs`).
#[test]
fn bad_images_exit_2_naming_the_row() {
    let dir = util::dir("serve-images");
    let db = dir.join("s.sqlite");
    std::fs::write(dir.join("ok.png"), b"\x89PNG\r\n\x1a\n0000").unwrap();
    let csv = util::file(
        &dir,
        "pics.csv",
        "name,x,pic\na,0,ok.png\nb,1,../ok.png\nc,2,ok.png\n",
    );
    let args = |column: &'static str| {
        vec![
            "interactive".to_string(),
            "serve".into(),
            "--points".into(),
            csv.to_str().unwrap().into(),
            "--db".into(),
            db.to_str().unwrap().into(),
            "--port".into(),
            "0".into(),
            "--images".into(),
            column.into(),
        ]
    };
    let a = args("pic");
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    util::fails(&a, "--images pic: row 2 (point \"b\"), image \"../ok.png\"");
    let a = args("picture");
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    util::fails(&a, "no column named \"picture\"");
    assert!(!db.exists(), "no database was created");
    let help = util::stdout(&["interactive", "serve", "--help"]);
    assert!(help.contains("--images <COLUMN>"), "{help}");
}

/// Issue 24: the planner alone gates the exact panel, within `--exact-seconds`
/// (default 10); 0 turns the panel off, and a budget that is not a number of
/// seconds >= 0 is refused (the panel itself: `crates/trellis-web/tests`).
#[test]
fn exact_seconds_sets_the_exact_panels_budget_and_0_turns_it_off() {
    let dir = util::dir("serve-exact-seconds");
    let (p, db) = (points(&dir), dir.join("s.sqlite"));
    let (mut child, url) = spawn_with(&p, &db, &["--exact-seconds", "0"]);
    let (status, e) = call(&url, "GET", "/api/exact", None);
    assert_eq!(status, 200);
    assert_eq!(e["status"], "unavailable", "{e}");
    assert!(e["reason"].as_str().unwrap().contains("turned off"), "{e}");
    child.kill().unwrap();
    child.wait().unwrap();
    let (mut child, url) = spawn_with(&p, &db, &["--exact-seconds", "2.5"]);
    let (_, e) = call(&url, "GET", "/api/exact", None);
    assert_ne!(e["status"], "unavailable", "8 points fit 2.5 s: {e}");
    child.kill().unwrap();
    child.wait().unwrap();
    for bad in ["-1", "nan", "inf", "ten"] {
        util::fails(
            &[
                "interactive",
                "serve",
                "--points",
                p.to_str().unwrap(),
                "--db",
                db.to_str().unwrap(),
                "--port",
                "0",
                &format!("--exact-seconds={bad}"),
            ],
            "expected a number of seconds >= 0",
        );
    }
    let help = util::stdout(&["interactive", "serve", "--help"]);
    let words = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("--exact-seconds <S>") && words.contains("0 turns the exact panel off"),
        "{help}"
    );
}
