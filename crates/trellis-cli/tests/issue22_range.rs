//! Issue 22, class 5: finite inputs refused with internal messages. Ward
//! and average linkage on distances near 1e306 failed with "invalid tree:
//! linkage row 4: the height inf"; `linkage --points` near 1e200 said
//! "non-finite value (NaN or infinity) at row 0, column 1" for a file with
//! none; `astar --approx` failed on weights that `map` accepts (its Ward
//! initial tree overflowed). Now each runs, with the heights of the unscaled
//! problem times the scale; a true answer beyond `f64` is refused (exit 2)
//! naming the quantity and the divisor that makes it fit.

use std::path::{Path, PathBuf};

use crate::util::{dir, fails, file, json, s, stdout, weights};

/// A matrix as CSV, every value times `scale`, in round-trip precision.
fn csv(rows: &[Vec<f64>], scale: f64) -> String {
    rows.iter()
        .map(|r| {
            r.iter()
                .map(|v| format!("{:e}", v * scale))
                .collect::<Vec<_>>()
                .join(",")
                + "\n"
        })
        .collect()
}

/// Seven points in 3-D (deterministic, coordinates in [-1, 1]).
fn points() -> Vec<Vec<f64>> {
    let w = weights(7, 5);
    (0..7)
        .map(|i| vec![w[i][(i + 1) % 7], w[i][(i + 2) % 7], w[i][(i + 3) % 7]])
        .collect()
}

fn distances(p: &[Vec<f64>]) -> Vec<Vec<f64>> {
    p.iter()
        .map(|a| {
            p.iter()
                .map(|b| {
                    a.iter()
                        .zip(b)
                        .map(|(x, y)| (x - y) * (x - y))
                        .sum::<f64>()
                        .sqrt()
                })
                .collect()
        })
        .collect()
}

/// The merge heights of `trellis linkage ... --linkage`.
fn heights(args: &[&str]) -> Vec<f64> {
    let mut a = args.to_vec();
    a.push("--linkage");
    let z: Vec<Vec<f64>> = serde_json::from_str(&stdout(&a)).unwrap();
    z.iter().map(|row| row[2]).collect()
}

fn assert_scaled(got: &[f64], base: &[f64], c: f64) {
    assert_eq!(got.len(), base.len());
    for (g, b) in got.iter().zip(base) {
        let e = b * c;
        assert!(
            (g - e).abs() <= 1e-12 * e.abs(),
            "{got:?} vs {base:?} x {c}"
        );
    }
}

fn write(d: &Path, name: &str, rows: &[Vec<f64>], scale: f64) -> PathBuf {
    file(d, name, &csv(rows, scale))
}

#[test]
fn issue22_linkage_on_distances_near_1e306() {
    let d = dir("issue22_linkage_distances");
    let dist = distances(&points());
    let base_path = write(&d, "d.csv", &dist, 1.0);
    for method in ["ward", "average", "complete", "single"] {
        let base = heights(&["linkage", "--method", method, "--distances", s(&base_path)]);
        for (name, c) in [
            ("d306.csv", 3e306),
            ("d307.csv", 1e307),
            ("dtiny.csv", 1e-300),
        ] {
            let p = write(&d, name, &dist, c);
            let got = heights(&["linkage", "--method", method, "--distances", s(&p)]);
            assert_scaled(&got, &base, c);
        }
    }
}

#[test]
fn issue22_linkage_on_points_near_1e200() {
    let d = dir("issue22_linkage_points");
    let p = points();
    let base_path = write(&d, "p.csv", &p, 1.0);
    for method in ["ward", "average"] {
        let base = heights(&["linkage", "--method", method, "--points", s(&base_path)]);
        for (name, c) in [("p200.csv", 1e200), ("p300.csv", 1e300)] {
            let path = write(&d, name, &p, c);
            let got = heights(&["linkage", "--method", method, "--points", s(&path)]);
            assert_scaled(&got, &base, c);
        }
    }
    // A true distance beyond f64::MAX: named, with the divisor.
    let far = file(&d, "far.csv", "1.5e308\n0\n-1.5e308\n");
    fails(
        &["linkage", "--method", "ward", "--points", s(&far)],
        "the Euclidean distance between points 0 and 2 (0-based) overflows: it is about 3e308",
    );
    fails(
        &["linkage", "--method", "ward", "--points", s(&far)],
        "divide them by at least 1.67",
    );
    let ok = file(
        &d,
        "ok.csv",
        &format!("{:e}\n0\n{:e}\n", 1.5e308 / 1.67, -1.5e308 / 1.67),
    );
    stdout(&[
        "linkage",
        "--method",
        "single",
        "--points",
        s(&ok),
        "--linkage",
    ]);
}

#[test]
fn issue22_ward_heights_beyond_f64_are_refused() {
    let d = dir("issue22_ward_over");
    let x = [0.0f64, 0.01, 0.02, 0.03, 0.04, 1.0, 1.01, 1.02, 1.03, 1.04];
    let dist: Vec<Vec<f64>> = x
        .iter()
        .map(|a| x.iter().map(|b| (a - b).abs()).collect())
        .collect();
    let over = write(&d, "two.csv", &dist, 1e308);
    let args = ["linkage", "--method", "ward", "--distances", s(&over)];
    fails(
        &args,
        "Ward linkage's merge height of clusters 16 and 17 (merge 8, 0-based) overflows",
    );
    fails(&args, "divide them by at least 1.25");
    let ok = write(&d, "two_ok.csv", &dist, 1e308 / 1.25);
    let h = heights(&["linkage", "--method", "ward", "--distances", s(&ok)]);
    assert!(h.iter().all(|v| v.is_finite()) && h[8] > 1.7e308, "{h:?}");
    // Average linkage on the same distances stays below the largest one.
    heights(&["linkage", "--method", "average", "--distances", s(&over)]);
}

#[test]
fn issue22_approximate_astar_runs_where_map_does() {
    let d = dir("issue22_astar");
    let w = weights(9, 3);
    for (name, c) in [
        ("w200.csv", 1e200),
        ("w300.csv", 1e300),
        ("wtiny.csv", 1e-300),
    ] {
        let path = write(&d, name, &w, c);
        for beta in ["1", "1e-300"] {
            let base = [
                "--model",
                "hcc",
                "--weights",
                s(&path),
                "--beta",
                beta,
                "--json",
            ];
            let map = json(&[&["map"][..], &base].concat());
            let mut a = vec!["astar", "--approx"];
            a.extend(base);
            let approx = json(&a);
            let (m, x) = (
                map["cost"].as_f64().unwrap(),
                approx["cost"].as_f64().unwrap(),
            );
            assert!(
                x.is_finite() && x >= m * (1.0 - 1e-12),
                "{name} beta {beta}: {x} < {m}"
            );
        }
    }
    // The linkage potentials over distances near 1e300 (the Ward initial tree).
    let dist = write(&d, "d300.csv", &distances(&points()), 1e300);
    for model in ["linkage-average", "linkage-complete", "linkage-single"] {
        let args = ["--model", model, "--distances", s(&dist), "--json"];
        json(&[&["map"][..], &args].concat());
        json(&[&["astar", "--approx"][..], &args].concat());
    }
    // A heuristic weight whose product with H(root) overflows: refused with
    // the largest weight that works.
    let w200 = d.join("w200.csv");
    fails(
        &[
            "astar",
            "--approx",
            "--model",
            "hcc",
            "--weights",
            s(&w200),
            "--weight",
            "1e300",
        ],
        "use a weight of at most",
    );
}
