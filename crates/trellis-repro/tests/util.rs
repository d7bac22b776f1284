//! Helpers: run the binary, write input files, parse JSON, and inputs made with
//! the library (what `trellis ginkgo generate` would write).

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;

/// A path as a command-line argument.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A fresh directory for one test's files.
pub fn dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes `text` to `dir/name` and returns the path.
pub fn file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A symmetric weight matrix: a deterministic mix of signs.
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

/// A jets file of `n_jets` QCD-like simulated jets with `min..=max` leaves: the
/// jets of `trellis ginkgo generate --n-jets K --min-leaves A --max-leaves B
/// --seed S`, made with the library.
pub fn jets_json(n_jets: usize, min: usize, max: usize, seed: u64) -> String {
    use trellis::ginkgo::{JetsFile, SimulatorParams, generate};
    let jets = generate(&SimulatorParams::qcd(), n_jets, min, max, seed).unwrap();
    let meta = serde_json::json!({ "seed": seed, "n_jets": n_jets });
    JetsFile { meta, jets }.to_json_string() + "\n"
}

/// Runs `trellis-repro args...`.
pub fn run(args: &[&str]) -> Output {
    Command::cargo_bin("trellis-repro")
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
        "trellis-repro {args:?} failed: {}",
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
        "trellis-repro {args:?} failed: {}",
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
        "trellis-repro {args:?}: stderr {stderr}"
    );
    assert!(
        out.stdout.is_empty(),
        "stdout not empty: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        stderr.to_lowercase().contains(&needle.to_lowercase()),
        "trellis-repro {args:?}: stderr {stderr:?} lacks {needle:?}"
    );
}
