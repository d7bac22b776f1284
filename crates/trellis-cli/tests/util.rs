//! Helpers: run the binary, write input files, parse JSON, and the
//! brute-force enumerations (every tree, every partition) the tests compare
//! the exact answers with.

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use trellis::Tree;

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

/// A path as the `&str` an argument list takes.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Every binary tree over `0..n` ((2n-3)!! of them): leaf `k` inserted on
/// every edge of every tree over `0..k`, and above its root.
pub fn all_trees(n: usize) -> Vec<Tree> {
    fn insert(t: &Tree, k: usize, out: &mut Vec<Tree>) {
        out.push(Tree::node(t.clone(), Tree::Leaf(k)));
        if let Tree::Node(l, r) = t {
            let mut below = Vec::new();
            insert(l, k, &mut below);
            out.extend(below.drain(..).map(|l2| Tree::node(l2, (**r).clone())));
            insert(r, k, &mut below);
            out.extend(below.drain(..).map(|r2| Tree::node((**l).clone(), r2)));
        }
    }
    let mut trees = vec![Tree::Leaf(0)];
    for k in 1..n {
        let mut next = Vec::new();
        for t in &trees {
            insert(t, k, &mut next);
        }
        trees = next;
    }
    trees
}

/// Every partition of `0..n` (Bell(n) of them), each a list of clusters.
pub fn partitions(n: usize) -> Vec<Vec<Vec<usize>>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for p in partitions(n - 1) {
        for k in 0..=p.len() {
            let mut q = p.clone();
            match q.get_mut(k) {
                Some(c) => c.push(n - 1),
                None => q.push(vec![n - 1]),
            }
            out.push(q);
        }
    }
    out
}

/// Whether the triplet `({a, b}, c)` holds in `t`: some cluster holds `a`
/// and `b` but not `c`.
pub fn holds(t: &Tree, (a, b, c): (usize, usize, usize)) -> bool {
    t.clusters()
        .iter()
        .any(|s| s.contains(&a) && s.contains(&b) && !s.contains(&c))
}

/// `log Σ exp(x)`, stable.
pub fn log_sum_exp(xs: &[f64]) -> f64 {
    let m = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    m + xs.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
}

/// `a` equals `b` up to `tol` relative to `1 + max(|a|, |b|)`.
pub fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}
