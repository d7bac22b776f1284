//! Issue 11, limits: `--svg` errors name the path (and come before the
//! runs), a failed write of the report is exit code 1, `--threads` is bounded.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{dir, fails, file, s};

#[test]
fn svg_onto_an_existing_file_names_the_path() {
    let d = dir("i11_svg");
    let taken = file(&d, "taken", "not a directory\n");
    let start = Instant::now();
    for cmd in ["flat", "astar"] {
        fails(
            &[cmd, "--svg", s(&taken)],
            &format!("cannot create the --svg directory {}", s(&taken)),
        );
    }
    // Refused before the experiments run.
    assert!(start.elapsed() < Duration::from_secs(20));
    // A figure path under a file.
    let under = taken.join("fig.svg");
    fails(
        &[
            "interactive",
            "--points",
            "none.csv",
            "--target",
            "none.nwk",
            "--queries",
            "1",
            "--svg",
            s(&under),
        ],
        &format!("cannot create the --svg directory {}", s(&taken)),
    );
}

#[test]
fn failed_write_is_exit_1() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = Command::new(assert_cmd::cargo::cargo_bin("trellis-repro"))
        .args([
            "astar-bench",
            "--model",
            "hcc",
            "--sizes",
            "6",
            "--repeats",
            "1",
        ])
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("cannot write the output"), "{stderr}");
}

#[test]
fn threads_are_bounded() {
    fails(&["--threads", "100000", "flat"], "between 1 and 256");
}
