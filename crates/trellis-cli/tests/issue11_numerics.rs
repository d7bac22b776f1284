//! Issue 11, numerics, through the command line: exact answers at extreme β
//! (flat and hierarchical), overflowing costs refused up front (exit 2, empty
//! stdout, one sentence), and all-impossible clusters answered with the
//! all-singletons partition.

use crate::util::s;
use crate::util::*;

fn num(v: &serde_json::Value, field: &str) -> f64 {
    v[field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} is not a number in {v}"))
}

fn ln_bell(n: usize) -> f64 {
    // Bell numbers by the triangle; exact in f64 for n <= 12.
    let mut row = vec![1.0f64];
    for _ in 1..n {
        let mut next = vec![*row.last().unwrap()];
        for x in &row {
            next.push(next.last().unwrap() + x);
        }
        row = next;
    }
    row.last().unwrap().ln()
}

fn ln_double_factorial(mut k: usize) -> f64 {
    let mut s = 0.0;
    while k > 1 {
        s += (k as f64).ln();
        k -= 2;
    }
    s
}

/// A few ulps of a log value, and 1e-9 absolute.
fn slack(x: f64) -> f64 {
    8.0 * f64::EPSILON * x.abs() + 1e-9
}

fn sorted_partition(p: &serde_json::Value) -> Vec<Vec<u64>> {
    let mut out: Vec<Vec<u64>> = p
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let mut c: Vec<u64> = c
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i.as_u64().unwrap())
                .collect();
            c.sort_unstable();
            c
        })
        .collect();
    out.sort();
    out
}

/// Extreme β, flat: `flat logz` at β = 1e10 on an 8×8 matrix gave log Z ≈
/// -1.5e9 against a MAP log-energy of 3e10; at larger β `log_z` was `null`,
/// every cluster had p = 1 and samples were not the MAP.
#[test]
fn extreme_beta_flat() {
    let n = 8;
    let d = dir("issue11_extreme_beta_flat");
    let w = file(&d, "w.csv", &weights_csv(n, 21));
    let at_one = json(&["flat", "map", "--model", "cc", "--weights", s(&w), "--json"]);
    for beta in ["1e10", "1e50", "1e300"] {
        let base = |cmd: &'static str| {
            vec![
                "flat",
                cmd,
                "--model",
                "cc",
                "--weights",
                s(&w),
                "--beta",
                beta,
                "--json",
            ]
        };
        let map = json(&base("map"));
        let e = num(&map, "log_energy");
        assert!(e.is_finite() && e > 0.0, "β {beta}: {map}");
        // The MAP does not depend on β > 0 (these weights have no ties).
        assert_eq!(
            sorted_partition(&map["clusters"]),
            sorted_partition(&at_one["clusters"]),
            "β {beta}"
        );
        let z = num(&json(&base("logz")), "log_z");
        assert!(
            z >= e - slack(e) && z <= e + ln_bell(n) + slack(e),
            "β {beta}: log Z {z} outside [{e}, {e} + ln Bell({n})]"
        );
        let m = json(&base("marginals"));
        assert_eq!(num(&m, "log_z"), z);
        let clusters = m["clusters"].as_array().unwrap();
        for c in clusters {
            let p = num(c, "p");
            assert!((0.0..=1.0).contains(&p), "β {beta}: {c}");
        }
        for i in 0..n as u64 {
            let total: f64 = clusters
                .iter()
                .filter(|c| {
                    c["members"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|x| x.as_u64() == Some(i))
                })
                .map(|c| num(c, "p"))
                .sum();
            assert!((total - 1.0).abs() < 1e-9, "β {beta}: point {i}: {total}");
        }
        let certain = clusters.iter().filter(|c| num(c, "p") > 1.0 - 1e-9).count();
        assert_eq!(
            certain,
            map["clusters"].as_array().unwrap().len(),
            "β {beta}"
        );
        let mut a = base("sample");
        a.extend(["-n", "20", "--seed", "3"]);
        for p in json(&a)["samples"].as_array().unwrap() {
            assert_eq!(
                sorted_partition(p),
                sorted_partition(&map["clusters"]),
                "β {beta}"
            );
        }
    }
}

/// Extreme β, hierarchies: `marginals` drifted from β ≈ 1e9 (Σ P(S) = 7.99 on
/// 10 points) and at β = 1e50 gave 11 clusters of p = 1; huge weights at β = 1
/// did the same.
#[test]
fn extreme_beta_hierarchies() {
    let n = 10;
    let d = dir("issue11_extreme_beta_hierarchies");
    let w = file(&d, "w.csv", &weights_csv(n, 5));
    let huge = weights(n, 5)
        .iter()
        .map(|r| {
            r.iter()
                .map(|v| format!("{:e}", v * 1e200))
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    let wh = file(&d, "huge.csv", &huge);
    let cases = [
        (s(&w), "1e9"),
        (s(&w), "1e50"),
        (s(&w), "1e300"),
        (s(&wh), "1"),
    ];
    for (weights, beta) in cases {
        let base = |cmd: &'static str| {
            vec![
                cmd,
                "--model",
                "hcc",
                "--weights",
                weights,
                "--beta",
                beta,
                "--json",
            ]
        };
        let map = json(&base("map"));
        let v = num(&map, "log_potential");
        let cost = num(&map, "cost");
        assert!(v.is_finite() && cost.is_finite(), "β {beta}: {map}");
        let z = num(&json(&base("logz")), "log_z");
        let ln_k = ln_double_factorial(2 * n - 3);
        assert!(
            z >= v - slack(v) && z <= v + ln_k + slack(v),
            "β {beta}: log Z {z} outside [{v}, {v} + {ln_k}]"
        );
        let m = json(&base("marginals"));
        let clusters = m["clusters"].as_array().unwrap();
        let mut total = 0.0;
        for c in clusters {
            let p = num(c, "p");
            assert!((0.0..=1.0).contains(&p), "β {beta}: {c}");
            total += p;
        }
        assert!(
            (total - (n as f64 - 2.0)).abs() < 1e-9,
            "β {beta}: Σ P = {total}"
        );
        let certain = clusters.iter().filter(|c| num(c, "p") > 1.0 - 1e-9).count();
        assert!(certain <= n - 2, "β {beta}: {certain} clusters of p = 1");
        if beta != "1e9" {
            // Cold enough that every sample is a MAP tree: its cost is the MAP
            // cost up to rounding (tied trees differ in the last bits).
            let mut a = base("sample");
            a.extend(["-n", "5", "--seed", "1"]);
            for t in json(&a)["samples"].as_array().unwrap() {
                let tree = t.to_string();
                let sc = json(&[
                    "score",
                    "--model",
                    "hcc",
                    "--weights",
                    weights,
                    "--tree",
                    &tree,
                    "--json",
                ]);
                let c = num(&sc, "cost");
                assert!(
                    (c - cost).abs() <= 1e-12 * cost.abs().max(1.0),
                    "β {beta}: sample {tree} costs {c}, the MAP {cost}"
                );
            }
        }
    }
}

/// Overflowing costs: `greedy` and `beam` on weights near 1e308 printed
/// `"cost": null` with exit 0 while `map` refused. Every command refuses them
/// up front with the same sentence; just inside the range the costs are
/// finite numbers.
#[test]
fn overflowing_costs() {
    let n = 6;
    let d = dir("issue11_overflowing_costs");
    let csv = |v: f64| {
        (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| {
                        if i == j {
                            "0".to_string()
                        } else {
                            format!("{v:e}")
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
    };
    let over = file(&d, "over.csv", &csv(1e308));
    let neg = file(&d, "neg.csv", &csv(-1e308));
    let inside = file(&d, "inside.csv", &csv(1e300));
    for w in [&over, &neg] {
        for cmd in [
            &["greedy"][..],
            &["beam", "--width", "3"],
            &["map"],
            &["logz"],
        ] {
            for model in ["hcc", "dasgupta"] {
                if model == "dasgupta" && w == &neg {
                    continue; // negative weights are refused for another reason
                }
                let mut a = cmd.to_vec();
                a.extend(["--model", model, "--weights", s(w), "--json"]);
                fails(&a, "weights are too large");
            }
        }
    }
    let mut a = vec![
        "map",
        "--model",
        "hcc",
        "--weights",
        s(&inside),
        "--beta",
        "1e300",
    ];
    a.push("--json");
    fails(&a, "beta = 1e300 is too large");
    for cmd in [&["greedy"][..], &["beam", "--width", "3"], &["map"]] {
        for model in ["hcc", "dasgupta"] {
            let mut a = cmd.to_vec();
            a.extend(["--model", model, "--weights", s(&inside), "--json"]);
            let out = stdout(&a);
            assert!(!out.contains("null"), "{a:?}: {out}");
            for line in out.lines() {
                let v: serde_json::Value = serde_json::from_str(line).unwrap();
                assert!(num(&v, "cost").is_finite() && num(&v, "log_potential").is_finite());
            }
        }
    }
}

/// All-impossible clusters: `flat map` with every weight -1e308 refused with
/// "every hierarchy has zero potential"; the all-singletons partition has
/// energy 1.
#[test]
fn all_impossible_clusters() {
    let n = 6;
    let d = dir("issue11_all_impossible");
    let text = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| if i == j { "0" } else { "-1e308" })
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    let w = file(&d, "w.csv", &text);
    let singletons: Vec<Vec<u64>> = (0..n as u64).map(|i| vec![i]).collect();
    for beta in ["1", "1e300"] {
        let base = |cmd: &'static str| {
            vec![
                "flat",
                cmd,
                "--model",
                "cc",
                "--weights",
                s(&w),
                "--beta",
                beta,
                "--json",
            ]
        };
        let map = json(&base("map"));
        assert_eq!(sorted_partition(&map["clusters"]), singletons, "β {beta}");
        assert_eq!(num(&map, "log_energy"), 0.0);
        assert_eq!(num(&json(&base("logz")), "log_z"), 0.0);
        let mut a = base("sample");
        a.extend(["-n", "3"]);
        for p in json(&a)["samples"].as_array().unwrap() {
            assert_eq!(sorted_partition(p), singletons);
        }
        let text = stdout(&[
            "flat",
            "map",
            "--model",
            "cc",
            "--weights",
            s(&w),
            "--beta",
            beta,
        ]);
        assert!(!text.contains("hierarch"), "{text}");
    }
}
