//! `trellis-repro interactive`: the experiment of *Interactive Bayesian
//! Hierarchical Clustering* (Fig. 6 / S3) on a small run.

use std::path::{Path, PathBuf};

use crate::util::*;

/// 12 named points in two groups of 6 (2 features), and a target with the groups
/// as clades, each split again into triples.
fn data(d: &Path) -> (PathBuf, PathBuf) {
    let mut csv = String::from("name,f1,f2\n");
    for i in 0..12 {
        let (cx, cy) = if i < 6 { (0.0, 0.0) } else { (3.0, 1.0) };
        let j = (i % 6) as f64;
        csv.push_str(&format!("p{i},{},{}\n", cx + 0.13 * j, cy - 0.07 * j));
    }
    let points = file(d, "points.csv", &csv);
    let target = file(
        d,
        "target.nwk",
        "(((p0,p1,p2),(p3,p4,p5))A,((p6,p7,p8),(p9,p10,p11))B);\n",
    );
    (points, target)
}

#[test]
fn runs_small() {
    let d = dir("interactive");
    let (points, target) = data(&d);
    let svg = d.join("fig.svg");
    let out = stdout(&[
        "interactive",
        "--points",
        s(&points),
        "--target",
        s(&target),
        "--queries",
        "4",
        "--iters-per-query",
        "10",
        "--seeds",
        "2",
        "--svg",
        s(&svg),
    ]);
    for row in [
        "vanilla DDT",
        "simple",
        "random",
        "active",
        "interleaved",
        "smart",
        "average linkage",
    ] {
        assert!(out.contains(&format!("| {row} |")), "{row} missing: {out}");
    }
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
}
