//! Helpers: run the binary, write input files, parse JSON.

use std::path::PathBuf;
use std::process::Output;

use assert_cmd::Command;

/// A fresh directory for one test's files.
pub fn dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes `text` to `dir/name` and returns the path.
pub fn file(dir: &std::path::Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A symmetric weight matrix as CSV: a deterministic mix of signs.
pub fn weights_csv(n: usize, seed: u64) -> String {
    let w = weights(n, seed);
    w.iter()
        .map(|r| {
            r.iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

#[allow(clippy::needless_range_loop)]
pub fn weights(n: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut x = seed.wrapping_mul(0x9e3779b97f4a7c15) | 1;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        ((x >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    };
    let mut w = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in i + 1..n {
            let v = (next() * 1000.0).round() / 1000.0;
            w[i][j] = v;
            w[j][i] = v;
        }
    }
    w
}

/// Runs `trellis args...`.
pub fn run(args: &[&str]) -> Output {
    Command::cargo_bin("trellis")
        .unwrap()
        .args(args)
        .output()
        .unwrap()
}

/// Runs and expects success with JSON on stdout.
pub fn json(args: &[&str]) -> serde_json::Value {
    let out = run(args);
    assert!(
        out.status.success(),
        "trellis {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

/// Runs and expects success; returns stdout.
pub fn stdout(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "trellis {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs and expects a failure: exit code 2, empty stdout, stderr containing `needle`.
pub fn fails(args: &[&str], needle: &str) {
    let out = run(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "trellis {args:?}: stderr {stderr}"
    );
    assert!(
        out.stdout.is_empty(),
        "stdout not empty: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        stderr.to_lowercase().contains(&needle.to_lowercase()),
        "trellis {args:?}: stderr {stderr:?} lacks {needle:?}"
    );
}

/// Sorted keys of a JSON object.
pub fn keys(v: &serde_json::Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    k.sort();
    k
}

/// The leaves of a nested-list tree, sorted.
pub fn leaves(t: &serde_json::Value) -> Vec<u64> {
    fn go(t: &serde_json::Value, out: &mut Vec<u64>) {
        match t {
            serde_json::Value::Number(x) => out.push(x.as_u64().unwrap()),
            serde_json::Value::Array(a) => {
                assert_eq!(a.len(), 2, "non-binary node {t}");
                a.iter().for_each(|c| go(c, out));
            }
            _ => panic!("bad tree {t}"),
        }
    }
    let mut out = vec![];
    go(t, &mut out);
    out.sort();
    out
}
