//! Issue 22, the session store of `trellis interactive serve`: paths that
//! are not database files are refused before SQLite touches them (exit code
//! 2, the path named, nothing created beside them), and a write-ahead log
//! garbled by a crash is reported (what was kept, what was lost) and kept.
//! (A failed bind creating no database: `serve::a_port_in_use_is_refused`.)

use std::io::Read;
use std::path::Path;

use serde_json::json;

use crate::serve::{call, points, spawn};
use crate::util;

fn serve_db(points: &Path, db: &Path, needle: &str) {
    util::fails(
        &[
            "interactive",
            "serve",
            "--port",
            "0",
            "--points",
            points.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
        ],
        needle,
    );
}

/// The names in a directory, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

#[test]
fn paths_that_are_not_database_files_are_refused() {
    let dir = util::dir("issue22-db-paths");
    let p = points(&dir);
    let need =
        "--db needs a SQLite database file, or the name of a new file in a writable directory";
    let sub = dir.join("sub");
    std::fs::create_dir(&sub).unwrap();
    serve_db(
        &p,
        &sub,
        &format!("the database path {} is a directory; {need}", sub.display()),
    );
    let missing = dir.join("missing").join("s.sqlite");
    serve_db(
        &p,
        &missing,
        &format!(
            "the directory {} of the database {} does not exist",
            dir.join("missing").display(),
            missing.display()
        ),
    );
    // A file that is not a SQLite database is refused and left as it is.
    let text = util::file(&dir, "notes.sqlite", "some notes, not a database\n");
    serve_db(
        &p,
        &text,
        &format!("{} is not a usable SQLite database", text.display()),
    );
    assert_eq!(
        std::fs::read_to_string(&text).unwrap(),
        "some notes, not a database\n"
    );
    #[cfg(unix)]
    {
        serve_db(
            &p,
            Path::new("/dev/null"),
            &format!("the database path /dev/null is a character device, not a file; {need}"),
        );
        for stray in ["/dev/null-journal", "/dev/null-wal", "/dev/null-shm"] {
            assert!(!Path::new(stray).exists(), "{stray} was created");
        }
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        serve_db(
            &p,
            &fifo,
            &format!(
                "the database path {} is a FIFO (named pipe)",
                fifo.display()
            ),
        );
    }
    // Nothing was created beside any of them.
    assert_eq!(names(&sub), Vec::<String>::new());
    let mut expected = vec!["eight.csv", "notes.sqlite", "sub"];
    if cfg!(unix) {
        expected.insert(1, "fifo");
    }
    assert_eq!(names(&dir), expected);
    // A directory that cannot be written (unless this runs as root, who can).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let locked = dir.join("locked");
        std::fs::create_dir(&locked).unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
        if std::fs::write(locked.join("probe"), "").is_err() {
            serve_db(
                &p,
                &locked.join("s.sqlite"),
                &format!(
                    "cannot write in {}, the directory of the database {}",
                    locked.display(),
                    locked.join("s.sqlite").display()
                ),
            );
            assert_eq!(names(&locked), Vec::<String>::new());
        }
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// Answers, `kill -9` (the log is not checkpointed), a byte flipped in a
/// frame in the middle of the log: the next start says which frame failed
/// and what was lost, keeps a copy of the damaged log, and resumes with the
/// answers before it.
#[test]
fn a_garbled_wal_frame_is_reported_and_the_log_kept() {
    let dir = util::dir("issue22-wal");
    let (p, db) = (points(&dir), dir.join("s.sqlite"));
    let (mut child, url) = spawn(&p, &db);
    let n = 10;
    for _ in 0..n {
        let (status, q) = call(&url, "GET", "/api/query", None);
        assert_eq!(status, 200);
        let body = json!({"id": q["id"], "accept": true});
        assert_eq!(call(&url, "POST", "/api/answer", Some(&body)).0, 200);
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let wal_path = dir.join("s.sqlite-wal");
    let mut wal = std::fs::read(&wal_path).unwrap();
    let page = u32::from_be_bytes(wal[8..12].try_into().unwrap()) as usize;
    let frames = (wal.len() - 32) / (24 + page);
    let k = frames / 2;
    wal[32 + k * (24 + page) + 24 + 100] ^= 0x55;
    std::fs::write(&wal_path, &wal).unwrap();

    let (mut child, url) = spawn(&p, &db);
    let (_, s) = call(&url, "GET", "/api/session", None);
    let kept = s["answers"].as_u64().unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(kept < n, "{kept} answers kept");
    for needle in [
        format!(
            "warning: the database {} was not closed cleanly and its write-ahead log",
            db.display()
        ),
        format!("frame {} of {frames} has a bad checksum", k + 1),
        "Lost: ".to_string(),
        format!("session \"eight.csv\" resumes with {kept} answers in force"),
    ] {
        assert!(err.contains(&needle), "stderr {err:?} lacks {needle:?}");
    }
    let copies: Vec<String> = names(&dir)
        .into_iter()
        .filter(|f| f.starts_with("s.sqlite-wal.damaged-"))
        .collect();
    assert_eq!(copies.len(), 1, "{copies:?}");
    assert!(err.contains(&copies[0]), "{err}");
    assert_eq!(std::fs::read(dir.join(&copies[0])).unwrap(), wal);
}
