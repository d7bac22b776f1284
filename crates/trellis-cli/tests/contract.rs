//! The CLI contract of issue #2: commands, flags and exact JSON field names.

use crate::util::s;
use crate::util::*;

#[test]
fn map_json_fields_and_beta_independence() {
    let d = dir("map_json");
    let w = file(&d, "w.csv", &weights_csv(7, 1));
    let a = json(&["map", "--model", "hcc", "--weights", s(&w), "--json"]);
    assert_eq!(keys(&a), ["cost", "log_potential", "n", "tree"]);
    assert_eq!(a["n"], 7);
    assert_eq!(leaves(&a["tree"]), (0..7).collect::<Vec<u64>>());
    let cost = a["cost"].as_f64().unwrap();
    assert!(cost >= 0.0);
    assert_eq!(a["log_potential"].as_f64().unwrap(), -cost);
    // The MAP tree and its cost do not depend on beta; log_potential = -beta * cost.
    let b = json(&[
        "map",
        "--model",
        "hcc",
        "--weights",
        s(&w),
        "--beta",
        "2.5",
        "--json",
    ]);
    assert_eq!(b["tree"], a["tree"]);
    assert_eq!(b["cost"], a["cost"]);
    assert_eq!(b["log_potential"].as_f64().unwrap(), -2.5 * cost);
}

#[test]
fn map_newick_matches_json_tree() {
    let d = dir("map_newick");
    let w = file(&d, "w.csv", &weights_csv(6, 2));
    let j = json(&["map", "--model", "hcc", "--weights", s(&w), "--json"]);
    let nwk = stdout(&["map", "--model", "hcc", "--weights", s(&w), "--newick"]);
    let from_newick = trellis::Tree::parse(nwk.trim()).unwrap();
    assert!(nwk.trim().ends_with(';'));
    assert_eq!(from_newick.to_string(), j["tree"].to_string());
}

#[test]
fn map_text_draws_a_dendrogram() {
    let d = dir("map_text");
    let w = file(&d, "w.csv", &weights_csv(5, 3));
    let out = stdout(&["map", "--model", "hcc", "--weights", s(&w)]);
    assert!(out.contains("MAP hierarchy of 5 points"), "{out}");
    assert!(out.contains("└─") && out.contains("● cost"), "{out}");
}

#[test]
fn logz_json_and_uniform_case() {
    let d = dir("logz");
    let w = file(&d, "w.csv", &weights_csv(8, 4));
    let v = json(&["logz", "--model", "hcc", "--weights", s(&w), "--json"]);
    assert_eq!(keys(&v), ["log_z", "n"]);
    // beta = 0: every tree has potential 1, so Z = (2n-3)!! = 13!! = 135135.
    let v = json(&[
        "logz",
        "--model",
        "dasgupta",
        "--weights",
        s(&file(&d, "a.csv", &abs_csv(8, 4))),
        "--beta",
        "0",
        "--json",
    ]);
    assert!((v["log_z"].as_f64().unwrap() - 135135f64.ln()).abs() < 1e-12);
    let text = stdout(&["logz", "--model", "hcc", "--weights", s(&w)]);
    assert!(text.starts_with("log Z = "), "{text}");
}

fn abs_csv(n: usize, seed: u64) -> String {
    weights(n, seed)
        .iter()
        .map(|r| {
            r.iter()
                .map(|v| v.abs().to_string())
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn marginals_json_lists_every_cluster() {
    let n = 6;
    let d = dir("marginals");
    let w = file(&d, "w.csv", &weights_csv(n, 5));
    let v = json(&[
        "marginals",
        "--model",
        "hcc",
        "--weights",
        s(&w),
        "--beta",
        "0.7",
        "--json",
    ]);
    assert_eq!(keys(&v), ["clusters", "log_z", "n"]);
    let clusters = v["clusters"].as_array().unwrap();
    // Every non-singleton proper cluster has p > 0 here: 2^n - n - 2 of them.
    assert_eq!(clusters.len(), (1 << n) - n - 2);
    let mut total = 0.0;
    let mut last = 1.0;
    for c in clusters {
        assert_eq!(keys(c), ["members", "p"]);
        let m = c["members"].as_array().unwrap();
        assert!(m.len() >= 2 && m.len() < n);
        let p = c["p"].as_f64().unwrap();
        assert!(p > 0.0 && p <= 1.0 && p <= last, "sorted by decreasing p");
        last = p;
        total += p;
    }
    // Every binary tree over n points has n - 2 non-singleton proper clusters.
    assert!((total - (n as f64 - 2.0)).abs() < 1e-9, "{total}");
    // log_z agrees with `logz`.
    let z = json(&[
        "logz",
        "--model",
        "hcc",
        "--weights",
        s(&w),
        "--beta",
        "0.7",
        "--json",
    ]);
    // `logz` runs the weight pass alone, `marginals` the fused pass (MAP
    // values plus relative parts): the same log Z up to rounding, not bit
    // for bit (issue 12: one quantity per command).
    let (a, b) = (z["log_z"].as_f64().unwrap(), v["log_z"].as_f64().unwrap());
    assert!((a - b).abs() <= 1e-13 * b.abs().max(1.0), "{a} vs {b}");
}

#[test]
fn marginals_min_p_and_subtree() {
    let d = dir("marginals_subtree");
    let w = file(&d, "w.csv", &weights_csv(6, 6));
    let all = json(&["marginals", "--model", "hcc", "--weights", s(&w), "--json"]);
    let some = json(&[
        "marginals",
        "--model",
        "hcc",
        "--weights",
        s(&w),
        "--min-p",
        "0.2",
        "--json",
    ]);
    let expected: Vec<_> = all["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["p"].as_f64().unwrap() >= 0.2)
        .cloned()
        .collect();
    assert_eq!(some["clusters"].as_array().unwrap(), &expected);
    // A two-leaf sub-hierarchy is just the cluster: same probability.
    let sub = json(&[
        "marginals",
        "--model",
        "hcc",
        "--weights",
        s(&w),
        "--subtree",
        "[0,1]",
        "--json",
    ]);
    let p01 = all["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["members"] == serde_json::json!([0, 1]))
        .unwrap()["p"]
        .as_f64()
        .unwrap();
    assert!((sub["subtree_p"].as_f64().unwrap() - p01).abs() < 1e-12);
    // A bigger sub-hierarchy has probability at most that of its cluster.
    let sub = json(&[
        "marginals",
        "--model",
        "hcc",
        "--weights",
        s(&w),
        "--subtree",
        "[[0,1],2]",
        "--json",
    ]);
    let p = sub["subtree_p"].as_f64().unwrap();
    let p012 = all["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["members"] == serde_json::json!([0, 1, 2]))
        .map(|c| c["p"].as_f64().unwrap())
        .unwrap_or(0.0);
    assert!(p > 0.0 && p <= p012 + 1e-15);
    // Newick is accepted too.
    let nwk = json(&[
        "marginals",
        "--model",
        "hcc",
        "--weights",
        s(&w),
        "--subtree",
        "((0,1),2);",
        "--json",
    ]);
    assert_eq!(nwk["subtree_p"], sub["subtree_p"]);
}

#[test]
fn sample_json_is_reproducible() {
    let d = dir("sample");
    let w = file(&d, "w.csv", &weights_csv(7, 7));
    let args = |seed: &'static str| {
        vec![
            "sample",
            "--model",
            "hcc",
            "--weights",
            s(&w),
            "-n",
            "25",
            "--seed",
            seed,
            "--json",
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>()
    };
    let a1 = args("3");
    let v = json(&a1.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(keys(&v), ["n", "samples"]);
    let samples = v["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 25);
    for t in samples {
        assert_eq!(leaves(t), (0..7).collect::<Vec<u64>>());
    }
    let again = json(&a1.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(again, v, "same seed, same samples");
    let other = json(&args("4").iter().map(String::as_str).collect::<Vec<_>>());
    assert_ne!(other, v, "another seed, other samples");
    let nwk = stdout(&[
        "sample",
        "--model",
        "hcc",
        "--weights",
        s(&w),
        "-n",
        "25",
        "--seed",
        "3",
        "--newick",
    ]);
    let lines: Vec<_> = nwk.lines().collect();
    assert_eq!(lines.len(), 25);
    for (line, t) in lines.iter().zip(samples) {
        assert_eq!(
            trellis::Tree::parse(line).unwrap().to_string(),
            t.to_string()
        );
    }
}

#[test]
fn count_is_exact() {
    assert_eq!(
        json(&["count", "5", "--json"]),
        serde_json::json!({"n": 5, "num_trees": "105"})
    );
    assert_eq!(json(&["count", "1", "--json"])["num_trees"], "1");
    // 57!! = 1·3·5···57 exceeds u128.
    assert_eq!(
        json(&["count", "30", "--json"])["num_trees"],
        "495179769008019818390136611716089140625"
    );
    assert!(stdout(&["count", "10"]).contains("34459425"));
}

#[test]
fn points_input_with_header_and_similarities() {
    let d = dir("points");
    let p = file(
        &d,
        "p.csv",
        "x,y,z\n1,0,0.1\n0.9,0.1,0\n0,1,0.2\n0.1,0.9,0.1\n0.5,0.5,1\n",
    );
    for sim in ["cosine", "rbf", "dot"] {
        let v = json(&[
            "map",
            "--model",
            "hcc",
            "--points",
            s(&p),
            "--similarity",
            sim,
            "--center",
            "--json",
        ]);
        assert_eq!(v["n"], 5);
    }
    // Centred cosine similarities split {0,1} from {2,3} at the top.
    let v = json(&[
        "marginals",
        "--model",
        "hcc",
        "--points",
        s(&p),
        "--center",
        "--beta",
        "5",
        "--json",
    ]);
    let top: Vec<_> = v["clusters"].as_array().unwrap()[..2]
        .iter()
        .map(|c| c["members"].clone())
        .collect();
    assert!(
        top.contains(&serde_json::json!([0, 1])) && top.contains(&serde_json::json!([2, 3])),
        "{top:?}"
    );
    let v = json(&[
        "logz",
        "--model",
        "hcc",
        "--points",
        s(&p),
        "--similarity",
        "rbf",
        "--gamma",
        "2",
        "--json",
    ]);
    assert!(v["log_z"].as_f64().unwrap().is_finite());
}

#[test]
fn npy_weights_equal_csv_weights() {
    let d = dir("npy");
    let w = weights(6, 9);
    let csv = file(&d, "w.csv", &weights_csv(6, 9));
    let m = trellis::Matrix::from_rows(w).unwrap();
    let npy = d.join("w.npy");
    std::fs::write(&npy, trellis::io::to_npy(&m)).unwrap();
    let a = json(&["logz", "--model", "hcc", "--weights", s(&csv), "--json"]);
    let b = json(&["logz", "--model", "hcc", "--weights", s(&npy), "--json"]);
    assert_eq!(a, b);
}

#[test]
fn demo_runs() {
    let out = stdout(&["demo"]);
    assert!(
        out.contains("MAP hierarchy") && out.contains("log Z =") && out.contains("p = "),
        "{out}"
    );
}

#[test]
fn help_explains_every_flag() {
    let out = stdout(&["map", "--help"]);
    for flag in [
        "--model",
        "--weights",
        "--points",
        "--similarity",
        "--center",
        "--beta",
        "--json",
        "--newick",
        "--gamma",
        "--max-memory",
    ] {
        assert!(out.contains(flag), "map --help lacks {flag}");
    }
    let out = stdout(&["sample", "--help"]);
    assert!(out.contains("--seed") && out.contains("-n"));
}

#[test]
fn npy_points_equal_csv_points() {
    let d = dir("npy_points");
    let rows = vec![
        vec![1.0, 0.0, 0.1],
        vec![0.9, 0.1, 0.0],
        vec![0.0, 1.0, 0.2],
        vec![0.1, 0.9, 0.1],
        vec![0.5, 0.5, 1.0],
    ];
    let csv = file(
        &d,
        "p.csv",
        &rows
            .iter()
            .map(|r| {
                r.iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .collect::<Vec<_>>()
            .join("\n"),
    );
    let npy = d.join("p.npy");
    std::fs::write(
        &npy,
        trellis::io::to_npy(&trellis::Matrix::from_rows(rows).unwrap()),
    )
    .unwrap();
    let a = json(&[
        "marginals",
        "--model",
        "hcc",
        "--points",
        s(&csv),
        "--center",
        "--json",
    ]);
    let b = json(&[
        "marginals",
        "--model",
        "hcc",
        "--points",
        s(&npy),
        "--center",
        "--json",
    ]);
    assert_eq!(a, b);
}
