//! Issue 26: `trellis summary --kind mcc|consensus` and `trellis flat
//! summary --loss binder` against brute-force enumeration of every tree and
//! every partition (N = 6), with triplets and a sparse trellis, and the
//! refusals (exit code 2).

use std::collections::BTreeMap;

use serde_json::Value;
use trellis::{Hcc, Matrix, Tree, Weights};

use crate::util::{all_trees, dir, fails, file, json, stdout, weights, weights_csv};

/// The non-trivial clusters (2 to n - 1 points) of a tree.
fn nontrivial(t: &Tree, n: usize) -> Vec<Vec<usize>> {
    t.clusters()
        .into_iter()
        .filter(|c| c.len() >= 2 && c.len() < n)
        .collect()
}

/// Brute force: every tree's probability under hcc at `beta` (restricted to
/// the trees `keep` accepts), and every cluster's marginal.
struct Brute {
    trees: Vec<Tree>,
    marginal: BTreeMap<Vec<usize>, f64>,
}

fn brute(n: usize, seed: u64, beta: f64, keep: impl Fn(&Tree) -> bool) -> Brute {
    let weights = Weights::from_matrix(&Matrix::from_rows(weights(n, seed)).unwrap()).unwrap();
    let model = Hcc::new(&weights, beta).unwrap();
    let trees: Vec<Tree> = all_trees(n).into_iter().filter(|t| keep(t)).collect();
    let log_phi: Vec<f64> = trees
        .iter()
        .map(|t| trellis::tree_log_potential(&model, t).unwrap())
        .collect();
    let top = log_phi.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let z: f64 = log_phi.iter().map(|l| (l - top).exp()).sum();
    let mut marginal = BTreeMap::new();
    for (t, l) in trees.iter().zip(&log_phi) {
        for c in nontrivial(t, n) {
            *marginal.entry(c).or_insert(0.0) += (l - top).exp() / z;
        }
    }
    Brute { trees, marginal }
}

impl Brute {
    fn p(&self, c: &[usize]) -> f64 {
        self.marginal.get(c).copied().unwrap_or(0.0)
    }
    fn credibility(&self, t: &Tree, n: usize) -> f64 {
        nontrivial(t, n).iter().map(|c| self.p(c).ln()).sum()
    }
    fn best_credibility(&self, n: usize) -> f64 {
        self.trees
            .iter()
            .map(|t| self.credibility(t, n))
            .fold(f64::NEG_INFINITY, f64::max)
    }
}

fn members(c: &Value) -> Vec<usize> {
    c["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as usize)
        .collect()
}

/// The clusters of a nested list (any number of children), with the leaves.
fn nested_clusters(t: &Value, out: &mut Vec<Vec<usize>>) -> Vec<usize> {
    match t {
        Value::Number(x) => vec![x.as_u64().unwrap() as usize],
        Value::Array(kids) => {
            assert!(kids.len() >= 2, "a node with fewer than two children: {t}");
            let mut all: Vec<usize> = kids.iter().flat_map(|k| nested_clusters(k, out)).collect();
            all.sort_unstable();
            out.push(all.clone());
            all
        }
        _ => panic!("not a tree: {t}"),
    }
}

#[test]
fn issue26_mcc_matches_brute_force() {
    let n = 6;
    let d = dir("issue26_mcc");
    let w = file(&d, "w.csv", &weights_csv(n, 11));
    let w = w.to_str().unwrap();
    for beta in ["0.5", "2", "6"] {
        let b = brute(n, 11, beta.parse().unwrap(), |_| true);
        let v = json(&[
            "summary",
            "--model",
            "hcc",
            "--weights",
            w,
            "--beta",
            beta,
            "--kind",
            "mcc",
            "--json",
        ]);
        let mut k: Vec<&str> = v.as_object().unwrap().keys().map(|s| s.as_str()).collect();
        k.sort_unstable();
        assert_eq!(k, ["clusters", "kind", "log_credibility", "n", "tree"]);
        assert_eq!(v["kind"], "mcc");
        let best = b.best_credibility(n);
        let got = v["log_credibility"].as_f64().unwrap();
        assert!((got - best).abs() < 1e-9, "beta {beta}: {got} vs {best}");
        let tree = trellis::read_tree(&v["tree"].to_string(), None).unwrap();
        assert!((b.credibility(&tree, n) - best).abs() < 1e-9);
        let clusters = v["clusters"].as_array().unwrap();
        assert_eq!(clusters.len(), n - 2);
        for c in clusters {
            let (m, p) = (members(c), c["p"].as_f64().unwrap());
            assert!(
                (p - b.p(&m)).abs() < 1e-9,
                "support of {m:?}: {p} vs {}",
                b.p(&m)
            );
        }
        // Newick: the same tree, each cluster labelled with its support.
        let newick = stdout(&[
            "summary",
            "--model",
            "hcc",
            "--weights",
            w,
            "--beta",
            beta,
            "--kind",
            "mcc",
            "--newick",
        ]);
        assert!(newick.starts_with("[&R] ("), "{newick}");
        assert_eq!(trellis::read_tree(&newick, None).unwrap(), tree);
        // The labels after each ')' but the root's, one per cluster.
        let labels: Vec<f64> = newick
            .split(')')
            .skip(1)
            .filter_map(|s| {
                let end = s.find([',', ')', ';']).unwrap_or(s.len());
                s[..end].parse().ok()
            })
            .collect();
        assert_eq!(labels.len(), n - 2, "{newick}");
        for l in labels {
            assert!(
                clusters
                    .iter()
                    .any(|c| (c["p"].as_f64().unwrap() - l).abs() < 1e-12),
                "{l} in {newick}"
            );
        }
    }
}

#[test]
fn issue26_consensus_matches_brute_force() {
    let n = 6;
    let d = dir("issue26_consensus");
    let w = file(&d, "w.csv", &weights_csv(n, 12));
    let w = w.to_str().unwrap();
    let mut multifurcating = 0;
    for beta in ["0.5", "2", "6"] {
        let b = brute(n, 12, beta.parse().unwrap(), |_| true);
        for threshold in ["0.5", "0.8"] {
            let t: f64 = threshold.parse().unwrap();
            let v = json(&[
                "summary",
                "--model",
                "hcc",
                "--weights",
                w,
                "--beta",
                beta,
                "--kind",
                "consensus",
                "--threshold",
                threshold,
                "--json",
            ]);
            assert!(v.get("log_credibility").is_none());
            let want: Vec<Vec<usize>> = b
                .marginal
                .iter()
                .filter(|&(_, &p)| if t == 0.5 { p > t } else { p >= t })
                .map(|(c, _)| c.clone())
                .collect();
            let mut got: Vec<Vec<usize>> = v["clusters"]
                .as_array()
                .unwrap()
                .iter()
                .map(members)
                .collect();
            got.sort();
            assert_eq!(got, want, "beta {beta} threshold {threshold}");
            for c in v["clusters"].as_array().unwrap() {
                let m = members(c);
                assert!((c["p"].as_f64().unwrap() - b.p(&m)).abs() < 1e-9);
            }
            // The nested tree holds exactly those clusters (and the root).
            let mut from_tree = Vec::new();
            let all = nested_clusters(&v["tree"], &mut from_tree);
            assert_eq!(all, (0..n).collect::<Vec<_>>());
            from_tree.retain(|c| c.len() < n);
            from_tree.sort();
            assert_eq!(from_tree, want);
            if want.len() < n - 2 {
                multifurcating += 1;
            }
        }
    }
    assert!(multifurcating > 0, "no multifurcating consensus was tested");
}

#[test]
fn issue26_summaries_under_triplets_and_sparse() {
    let n = 6;
    let d = dir("issue26_triplets");
    let w = file(&d, "w.csv", &weights_csv(n, 13));
    let t = file(&d, "t.txt", "0 1 2\n3 4 0\n");
    let (w, t) = (w.to_str().unwrap(), t.to_str().unwrap());
    let holds = |tree: &Tree, (a, b, c): (usize, usize, usize)| {
        tree.clusters()
            .iter()
            .any(|s| s.contains(&a) && s.contains(&b) && !s.contains(&c))
    };
    let b = brute(n, 13, 1.5, |tree| {
        holds(tree, (0, 1, 2)) && holds(tree, (3, 4, 0))
    });
    let v = json(&[
        "summary",
        "--model",
        "hcc",
        "--weights",
        w,
        "--beta",
        "1.5",
        "--kind",
        "mcc",
        "--triplets",
        t,
        "--json",
    ]);
    let got = v["log_credibility"].as_f64().unwrap();
    let best = b.best_credibility(n);
    assert!((got - best).abs() < 1e-9, "{got} vs {best}");
    // A sparse trellis: the summary of the posterior restricted to its trees.
    let v = json(&[
        "summary",
        "--model",
        "hcc",
        "--weights",
        w,
        "--kind",
        "mcc",
        "--sparse",
        "beam",
        "--json",
    ]);
    assert!(v["num_trees_realised"].is_string());
    assert!(v["log_credibility"].as_f64().unwrap().is_finite());
    let v = json(&[
        "summary",
        "--model",
        "hcc",
        "--weights",
        w,
        "--kind",
        "consensus",
        "--sparse",
        "beam",
        "--json",
    ]);
    assert!(v["num_trees_realised"].is_string());
    assert_eq!(v["kind"], "consensus");
}

/// Every partition of `0..n` as lists of points.
fn all_partitions(n: usize) -> Vec<Vec<Vec<usize>>> {
    let mut out = vec![Vec::new()];
    for i in 0..n {
        let mut next = Vec::new();
        for p in &out {
            for k in 0..p.len() {
                let mut q: Vec<Vec<usize>> = p.clone();
                q[k].push(i);
                next.push(q);
            }
            let mut q = p.clone();
            q.push(vec![i]);
            next.push(q);
        }
        out = next;
    }
    out
}

#[test]
fn issue26_flat_binder_matches_brute_force() {
    let n = 6;
    let d = dir("issue26_binder");
    let w = file(&d, "w.csv", &weights_csv(n, 14));
    let w = w.to_str().unwrap();
    let raw = weights(n, 14);
    let parts = all_partitions(n);
    for beta in ["0.5", "3"] {
        let beta_f: f64 = beta.parse().unwrap();
        let log_e: Vec<f64> = parts
            .iter()
            .map(|p| {
                p.iter()
                    .map(|c| {
                        let mut e = 0.0;
                        for (a, &i) in c.iter().enumerate() {
                            for &j in &c[a + 1..] {
                                e += beta_f * raw[i][j];
                            }
                        }
                        e
                    })
                    .sum()
            })
            .collect();
        let top = log_e.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let z: f64 = log_e.iter().map(|l| (l - top).exp()).sum();
        let mut pair = vec![vec![0.0; n]; n];
        for (p, l) in parts.iter().zip(&log_e) {
            for c in p {
                for (a, &i) in c.iter().enumerate() {
                    for &j in &c[a + 1..] {
                        pair[i][j] += (l - top).exp() / z;
                    }
                }
            }
        }
        for (split, join) in [("1", "1"), ("2", "0.5"), ("0.3", "1.7")] {
            let (a, b): (f64, f64) = (split.parse().unwrap(), join.parse().unwrap());
            let loss = |p: &Vec<Vec<usize>>| {
                let mut label = vec![0; n];
                for (k, c) in p.iter().enumerate() {
                    for &i in c {
                        label[i] = k;
                    }
                }
                let mut l = 0.0;
                for i in 0..n {
                    for j in i + 1..n {
                        l += if label[i] == label[j] {
                            b * (1.0 - pair[i][j])
                        } else {
                            a * pair[i][j]
                        };
                    }
                }
                l
            };
            let best = parts.iter().map(loss).fold(f64::INFINITY, f64::min);
            let v = json(&[
                "flat",
                "summary",
                "--model",
                "cc",
                "--weights",
                w,
                "--beta",
                beta,
                "--loss",
                "binder",
                "--cost-split",
                split,
                "--cost-join",
                join,
                "--json",
            ]);
            let mut k: Vec<&str> = v.as_object().unwrap().keys().map(|s| s.as_str()).collect();
            k.sort_unstable();
            assert_eq!(k, ["clusters", "expected_loss", "n"]);
            let got = v["expected_loss"].as_f64().unwrap();
            assert!(
                (got - best).abs() < 1e-9,
                "beta {beta} costs ({split}, {join}): {got} vs {best}"
            );
            let clusters: Vec<Vec<usize>> = serde_json::from_value(v["clusters"].clone()).unwrap();
            assert!((loss(&clusters) - best).abs() < 1e-9);
        }
    }
}

#[test]
fn issue26_refusals_exit_2() {
    let d = dir("issue26_refusals");
    let w = file(&d, "w.csv", &weights_csv(5, 15));
    let w = w.to_str().unwrap();
    let base = ["summary", "--model", "hcc", "--weights", w];
    let with = |extra: &[&str]| -> Vec<String> {
        base.iter().chain(extra).map(|s| s.to_string()).collect()
    };
    let check = |extra: &[&str], needle: &str| {
        let args = with(extra);
        let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        fails(&args, needle);
    };
    check(
        &["--kind", "consensus", "--threshold", "0.4"],
        "between 0.5 and 1",
    );
    check(
        &["--kind", "consensus", "--threshold", "1.5"],
        "between 0.5 and 1",
    );
    check(
        &["--kind", "consensus", "--threshold", "nan"],
        "between 0.5 and 1",
    );
    check(
        &["--kind", "consensus", "--threshold", "-1"],
        "between 0.5 and 1",
    );
    check(&["--kind", "mcc", "--threshold", "0.6"], "--kind consensus");
    // The planner estimates the summary's own work (issue 26): a time
    // limit below any estimate is refused up front, naming the summary.
    check(
        &["--kind", "mcc", "--time-limit", "0.001"],
        "exact maximum-clade-credibility tree over 5 points",
    );
    check(
        &["--kind", "consensus", "--time-limit", "0.001"],
        "exact majority-rule consensus tree over 5 points",
    );
    check(&["--kind", "median"], "invalid value");
    check(
        &["--kind", "mcc", "--json", "--newick"],
        "cannot be used with",
    );
    for (flag, value) in [
        ("--cost-split", "0"),
        ("--cost-split", "-1"),
        ("--cost-join", "inf"),
        ("--cost-join", "nan"),
    ] {
        fails(
            &[
                "flat",
                "summary",
                "--model",
                "cc",
                "--weights",
                w,
                flag,
                value,
            ],
            "must be a finite number > 0",
        );
    }
    fails(
        &[
            "flat",
            "summary",
            "--model",
            "cc",
            "--weights",
            w,
            "--loss",
            "vi",
        ],
        "invalid value",
    );
}

/// The memory check before the trellis counts the MCC tree's own pass
/// (the planner's 112 bytes per subset), not only the marginals' 72: a
/// limit between the two admits the consensus and refuses the MCC tree.
#[test]
fn the_memory_check_counts_the_mcc_pass() {
    let d = dir("issue26-mcc-memory");
    let n = 18;
    let w = file(&d, "w.csv", &weights_csv(n, 3));
    let w = w.to_str().unwrap();
    // 64 bytes per subset, in GiB: the consensus tree's marginals hold 16
    // (the blocked passes' two tables, with 8 MiB of working blocks), the
    // MCC tree keeps those and checks its own pass's 72.
    let limit = format!("{}", (64u64 << n) as f64 / (1u64 << 30) as f64);
    let args = |kind: &'static str| {
        vec![
            "summary".to_string(),
            "--model".into(),
            "hcc".into(),
            "--weights".into(),
            w.into(),
            "--kind".into(),
            kind.into(),
            "--json".into(),
            "--max-memory".into(),
            limit.clone(),
        ]
    };
    let consensus = args("consensus");
    let consensus: Vec<&str> = consensus.iter().map(String::as_str).collect();
    assert_eq!(json(&consensus)["kind"], "consensus");
    let mcc = args("mcc");
    let mcc: Vec<&str> = mcc.iter().map(String::as_str).collect();
    fails(&mcc, "--max-memory");
}
