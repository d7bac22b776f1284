//! Issue 21, the linkage potentials through the command line: `--model
//! linkage-average|linkage-complete|linkage-single` over `--distances` or
//! the Euclidean distances of `--points`, on every output (map, logz,
//! marginals, sample, infer, score) and every engine (the dense and sparse
//! trellises, exact and approximate A*, greedy and beam search), against an
//! enumeration of every tree written here from the definitions.

use std::collections::HashMap;

use crate::util::*;
use crate::util::{close, log_sum_exp};

/// A binary tree over point indices, as nested clusters.
#[derive(Clone, Debug)]
enum T {
    Leaf(usize),
    Node(Box<T>, Box<T>),
}

impl T {
    fn leaves(&self) -> Vec<usize> {
        match self {
            T::Leaf(i) => vec![*i],
            T::Node(a, b) => {
                let mut v = a.leaves();
                v.extend(b.leaves());
                v.sort_unstable();
                v
            }
        }
    }

    /// Every internal cluster (sorted members).
    fn clusters(&self, out: &mut Vec<Vec<usize>>) {
        if let T::Node(a, b) = self {
            out.push(self.leaves());
            a.clusters(out);
            b.clusters(out);
        }
    }

    /// The sum of the linkage distances of its merges.
    fn cost(&self, d: &[Vec<f64>], kind: &str) -> f64 {
        match self {
            T::Leaf(_) => 0.0,
            T::Node(a, b) => {
                let (l, r) = (a.leaves(), b.leaves());
                let cross: Vec<f64> = l
                    .iter()
                    .flat_map(|&i| r.iter().map(move |&j| d[i][j]))
                    .collect();
                let link = match kind {
                    "linkage-average" => cross.iter().sum::<f64>() / cross.len() as f64,
                    "linkage-complete" => cross.iter().cloned().fold(f64::MIN, f64::max),
                    _ => cross.iter().cloned().fold(f64::MAX, f64::min),
                };
                link + a.cost(d, kind) + b.cost(d, kind)
            }
        }
    }
}

/// Every binary tree over `points` (sorted, non-empty).
fn all_trees(points: &[usize]) -> Vec<T> {
    if points.len() == 1 {
        return vec![T::Leaf(points[0])];
    }
    let rest = &points[1..];
    let mut out = Vec::new();
    // The left child holds the first point; the right child is non-empty.
    for mask in 0..(1u32 << rest.len()) - 1 {
        let mut left = vec![points[0]];
        let mut right = Vec::new();
        for (k, &p) in rest.iter().enumerate() {
            if mask >> k & 1 == 1 {
                left.push(p);
            } else {
                right.push(p);
            }
        }
        for a in all_trees(&left) {
            for b in all_trees(&right) {
                out.push(T::Node(Box::new(a.clone()), Box::new(b)));
            }
        }
    }
    out
}

/// A random Euclidean distance matrix (points in the plane, from `seed`).
fn distances(n: usize, seed: u64) -> (Vec<Vec<f64>>, String, String) {
    let w = weights(n, seed);
    let pts: Vec<(f64, f64)> = (0..n)
        .map(|i| (w[i][(i + 1) % n] * 3.0, w[i][(i + 2) % n] * 2.0))
        .collect();
    let d: Vec<Vec<f64>> = pts
        .iter()
        .map(|a| {
            pts.iter()
                .map(|b| ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt())
                .collect()
        })
        .collect();
    let csv = |rows: Vec<Vec<f64>>| {
        rows.iter()
            .map(|r| {
                r.iter()
                    .map(|v| format!("{v:?}"))
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
    };
    let points_csv = csv(pts.iter().map(|p| vec![p.0, p.1]).collect());
    (d.clone(), csv(d), points_csv)
}

/// The JSON tree as a `T`.
fn parse(v: &serde_json::Value) -> T {
    match v {
        serde_json::Value::Array(a) => T::Node(Box::new(parse(&a[0])), Box::new(parse(&a[1]))),
        x => T::Leaf(x.as_u64().unwrap() as usize),
    }
}

const KINDS: [&str; 3] = ["linkage-average", "linkage-complete", "linkage-single"];

#[test]
fn issue21_linkage_models_equal_brute_force_on_every_output() {
    let d = dir("issue21_linkage");
    for n in [2usize, 3, 5, 6] {
        let (dist, dcsv, pcsv) = distances(n, 17 + n as u64);
        let dfile = file(&d, &format!("d{n}.csv"), &dcsv);
        let pfile = file(&d, &format!("p{n}.csv"), &pcsv);
        let points: Vec<usize> = (0..n).collect();
        let trees = all_trees(&points);
        for kind in KINDS {
            for beta in ["0", "0.7", "3"] {
                let b: f64 = beta.parse().unwrap();
                let costs: Vec<f64> = trees.iter().map(|t| t.cost(&dist, kind)).collect();
                let log_z = log_sum_exp(&costs.iter().map(|c| -b * c).collect::<Vec<_>>());
                let min_cost = costs.iter().cloned().fold(f64::INFINITY, f64::min);
                // Every cluster's marginal.
                let mut marginal: HashMap<Vec<usize>, f64> = HashMap::new();
                for (t, c) in trees.iter().zip(&costs) {
                    let p = (-b * c - log_z).exp();
                    let mut cl = Vec::new();
                    t.clusters(&mut cl);
                    for c in cl {
                        *marginal.entry(c).or_default() += p;
                    }
                }
                for input in [
                    ["--distances", dfile.to_str().unwrap()],
                    ["--points", pfile.to_str().unwrap()],
                ] {
                    let base = [
                        "--model", kind, input[0], input[1], "--beta", beta, "--json",
                    ];
                    let with = |cmd: &[&str]| {
                        let mut a: Vec<&str> = cmd.to_vec();
                        a.extend_from_slice(&base);
                        json(&a)
                    };
                    let v = with(&["logz"]);
                    assert!(
                        close(v["log_z"].as_f64().unwrap(), log_z, 1e-9),
                        "{kind} n={n} b={beta}: {v} vs {log_z}"
                    );
                    let v = with(&["map"]);
                    assert!(
                        close(v["cost"].as_f64().unwrap(), min_cost, 1e-9),
                        "{kind} n={n}: {v} vs {min_cost}"
                    );
                    let t = parse(&v["tree"]);
                    assert!(
                        close(t.cost(&dist, kind), min_cost, 1e-9),
                        "{kind}: the MAP tree's own cost"
                    );
                    if n < 3 {
                        continue;
                    }
                    let v = with(&["marginals"]);
                    let listed = v["clusters"].as_array().unwrap();
                    for c in listed {
                        let members: Vec<usize> = c["members"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|x| x.as_u64().unwrap() as usize)
                            .collect();
                        let p = marginal[&members];
                        assert!(
                            close(c["p"].as_f64().unwrap(), p, 1e-9),
                            "{kind} {members:?}: {c} vs {p}"
                        );
                    }
                    let expected = marginal
                        .iter()
                        .filter(|(c, p)| c.len() < n && **p > 0.0)
                        .count();
                    assert_eq!(
                        listed.len(),
                        expected,
                        "{kind}: every proper cluster with p > 0"
                    );
                    let v = with(&["infer"]);
                    assert!(close(v["log_z"].as_f64().unwrap(), log_z, 1e-9));
                    // At beta = 0 every tree is a MAP tree of infer's trellis.
                    if b > 0.0 {
                        assert!(close(v["map"]["cost"].as_f64().unwrap(), min_cost, 1e-9));
                    }
                    // Exact A*, greedy, beam and approximate A*: valid trees with their own costs; exact A* optimal.
                    let v = with(&["astar"]);
                    assert_eq!(v["exact"], true);
                    assert!(
                        close(v["cost"].as_f64().unwrap(), min_cost, 1e-9),
                        "{kind} astar {v}"
                    );
                    for cmd in [vec!["astar", "--approx"], vec!["greedy"], vec!["beam"]] {
                        let v = with(&cmd);
                        let t = parse(&v["tree"]);
                        assert_eq!(t.leaves(), points);
                        let c = v["cost"].as_f64().unwrap();
                        assert!(close(t.cost(&dist, kind), c, 1e-9), "{cmd:?} {kind}: {v}");
                        assert!(c >= min_cost - 1e-9);
                    }
                }
            }
        }
    }
}

#[test]
fn issue21_linkage_sparse_trellis_is_exact_over_its_trees_and_samples_are_valid() {
    let d = dir("issue21_linkage_sparse");
    let n = 6;
    let (dist, dcsv, _) = distances(n, 5);
    let dfile = file(&d, "d.csv", &dcsv);
    for kind in KINDS {
        // The full family of trees (a beam wider than every state): equal to the dense trellis.
        let dense = json(&[
            "logz",
            "--model",
            kind,
            "--distances",
            dfile.to_str().unwrap(),
            "--json",
        ]);
        let sparse = json(&[
            "logz",
            "--model",
            kind,
            "--distances",
            dfile.to_str().unwrap(),
            "--json",
            "--sparse",
            "beam",
            "--trees",
            "945",
            "--beam-width",
            "100000",
        ]);
        assert_eq!(sparse["num_trees_realised"], "945", "{sparse}");
        assert!(close(
            sparse["log_z"].as_f64().unwrap(),
            dense["log_z"].as_f64().unwrap(),
            1e-9
        ));
        // Samples: trees over every point, each no cheaper than the optimum.
        let v = json(&[
            "sample",
            "--model",
            kind,
            "--distances",
            dfile.to_str().unwrap(),
            "-n",
            "20",
            "--seed",
            "3",
            "--json",
        ]);
        let map = json(&[
            "map",
            "--model",
            kind,
            "--distances",
            dfile.to_str().unwrap(),
            "--json",
        ]);
        for t in v["samples"].as_array().unwrap() {
            let t = parse(t);
            assert_eq!(t.leaves(), (0..n).collect::<Vec<_>>());
            assert!(t.cost(&dist, kind) >= map["cost"].as_f64().unwrap() - 1e-9);
        }
        // Scoring a given tree: its cost from the definition.
        let v = json(&[
            "score",
            "--model",
            kind,
            "--distances",
            dfile.to_str().unwrap(),
            "--tree",
            "[[0,1],[[2,3],[4,5]]]",
            "--json",
        ]);
        let t = parse(&serde_json::from_str("[[0,1],[[2,3],[4,5]]]").unwrap());
        assert!(
            close(v["cost"].as_f64().unwrap(), t.cost(&dist, kind), 1e-12),
            "{v}"
        );
    }
}

#[test]
fn issue21_linkage_inputs_are_checked() {
    let d = dir("issue21_linkage_inputs");
    let (_, dcsv, pcsv) = distances(4, 1);
    let dfile = file(&d, "d.csv", &dcsv);
    let pfile = file(&d, "p.csv", &pcsv);
    let (ds, ps) = (dfile.to_str().unwrap(), pfile.to_str().unwrap());
    fails(
        &["map", "--model", "linkage-average", "--weights", ds],
        "runs on distances",
    );
    fails(
        &["map", "--model", "hcc", "--distances", ds],
        "runs on weights",
    );
    fails(
        &[
            "map",
            "--model",
            "linkage-single",
            "--points",
            ps,
            "--similarity",
            "rbf",
        ],
        "linkage potentials run on distances",
    );
    fails(&["map", "--model", "cc", "--points", ps], "flat partitions");
    fails(
        &["map", "--model", "nope", "--points", ps],
        "the models are hcc, dasgupta, linkage-average",
    );
    let neg = file(&d, "neg.csv", "0,-1\n-1,0\n");
    fails(
        &[
            "logz",
            "--model",
            "linkage-complete",
            "--distances",
            neg.to_str().unwrap(),
        ],
        "-1",
    );
    let asym = file(&d, "asym.csv", "0,1,2\n1,0,3\n2,4,0\n");
    fails(
        &[
            "logz",
            "--model",
            "linkage-average",
            "--distances",
            asym.to_str().unwrap(),
        ],
        "symmetric",
    );
    fails(
        &[
            "logz",
            "--model",
            "linkage-average",
            "--distances",
            ds,
            "--beta",
            "-1",
        ],
        "beta",
    );
}

/// Issue 21, the planner: `--time-limit` refuses an exact run whose estimate
/// is longer, before any table is built, naming both times; a generous limit
/// runs.
#[test]
fn issue21_time_limit_refuses_runs_the_planner_estimates_longer() {
    let d = dir("issue21_time_limit");
    let w = file(&d, "w24.csv", &weights_csv(24, 3));
    let w = w.to_str().unwrap();
    for cmd in ["logz", "map", "marginals", "sample"] {
        let mut args = vec![cmd, "--model", "hcc", "--weights", w, "--time-limit", "0.5"];
        if cmd == "sample" {
            args.extend(["-n", "1"]);
        }
        let out = run(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {stderr}");
        assert!(out.stdout.is_empty());
        assert!(
            stderr.contains("time limit of 0.5") && stderr.contains("estimated"),
            "{cmd}: {stderr}"
        );
    }
    let small = file(&d, "w8.csv", &weights_csv(8, 3));
    let v = json(&[
        "logz",
        "--model",
        "hcc",
        "--weights",
        small.to_str().unwrap(),
        "--time-limit",
        "600",
        "--json",
    ]);
    assert!(v["log_z"].as_f64().unwrap().is_finite());
    fails(
        &[
            "logz",
            "--model",
            "hcc",
            "--weights",
            w,
            "--time-limit",
            "-1",
        ],
        "--time-limit must be a number of seconds >= 0",
    );
}
