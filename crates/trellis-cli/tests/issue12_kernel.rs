//! Issue 12: `map` and `logz` compute their one quantity with the blocked
//! kernel; every vector path (forced with `TRELLIS_KERNEL`) prints the same
//! answers; an unknown path is refused.

use std::process::Output;

use assert_cmd::Command;

use crate::util::{dir, file, weights_csv};

fn run_on(kernel: &str, args: &[&str]) -> Output {
    Command::cargo_bin("trellis")
        .unwrap()
        .env("TRELLIS_KERNEL", kernel)
        .args(args)
        .output()
        .unwrap()
}

fn stdout_on(kernel: &str, args: &[&str]) -> String {
    let out = run_on(kernel, args);
    assert!(
        out.status.success(),
        "TRELLIS_KERNEL={kernel} trellis {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn paths() -> Vec<&'static str> {
    let mut paths = vec!["portable"];
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        paths.push("avx2");
    }
    paths
}

#[test]
fn every_kernel_path_prints_the_same_answers() {
    let d = dir("issue12-paths");
    let w = file(&d, "w13.csv", &weights_csv(13, 12));
    let w = w.to_str().unwrap();
    for args in [
        vec!["-q", "map", "--model", "hcc", "--weights", w, "--json"],
        vec!["-q", "logz", "--model", "hcc", "--weights", w, "--json"],
        vec!["-q", "infer", "--model", "hcc", "--weights", w, "--json"],
        vec![
            "-q",
            "flat",
            "logz",
            "--model",
            "cc",
            "--weights",
            w,
            "--json",
        ],
        vec![
            "-q",
            "flat",
            "map",
            "--model",
            "cc",
            "--weights",
            w,
            "--json",
        ],
    ] {
        let want = stdout_on("portable", &args);
        for path in paths() {
            assert_eq!(stdout_on(path, &args), want, "{path}: {args:?}");
        }
    }
}

#[test]
fn map_and_logz_alone_agree_with_the_fused_pass() {
    let d = dir("issue12-single");
    let w = file(&d, "w12.csv", &weights_csv(12, 3));
    let w = w.to_str().unwrap();
    let json = |args: &[&str]| -> serde_json::Value {
        serde_json::from_str(&stdout_on("", args)).unwrap()
    };
    let infer = json(&["-q", "infer", "--model", "hcc", "--weights", w, "--json"]);
    let map = json(&["-q", "map", "--model", "hcc", "--weights", w, "--json"]);
    let logz = json(&["-q", "logz", "--model", "hcc", "--weights", w, "--json"]);
    assert_eq!(map["tree"], infer["map"]["tree"], "{infer}");
    let (a, b) = (
        logz["log_z"].as_f64().unwrap(),
        infer["log_z"].as_f64().unwrap(),
    );
    assert!((a - b).abs() <= 1e-11 * b.abs().max(1.0), "{a} vs {b}");
}

#[test]
fn an_unknown_kernel_path_is_refused() {
    let d = dir("issue12-unknown");
    let w = file(&d, "w6.csv", &weights_csv(6, 1));
    let out = run_on(
        "avx1024",
        &["logz", "--model", "hcc", "--weights", w.to_str().unwrap()],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(stderr.contains("TRELLIS_KERNEL"), "{stderr}");
}
