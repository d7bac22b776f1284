//! Issue 24: `--triplets FILE` on map, logz, marginals, sample and infer
//! restricts the exact answer to the trees in which every triplet holds,
//! checked against brute-force enumeration of every tree (N = 6).

use serde_json::Value;
use trellis::{Hcc, Matrix, Tree, Weights};

use crate::util::{all_trees, dir, fails, file, holds, json, partitions, weights, weights_csv};

fn tree_of(v: &Value) -> Tree {
    trellis::read_tree(&v.to_string(), None).unwrap()
}

const TRIPLETS: [(usize, usize, usize); 2] = [(0, 1, 2), (3, 4, 0)];

#[test]
fn issue24_triplets_restrict_log_z_map_marginals_and_samples_as_brute_force() {
    let n = 6;
    let d = dir("issue24_triplets");
    let w = file(&d, "w.csv", &weights_csv(n, 3));
    let t = file(&d, "t.txt", "# two answers\n0 1 2\n3,4,0\n");
    let (w, t) = (w.to_str().unwrap(), t.to_str().unwrap());
    let beta = 1.5;
    let weights = Weights::from_matrix(&Matrix::from_rows(weights(n, 3)).unwrap()).unwrap();
    let model = Hcc::new(&weights, beta).unwrap();
    let allowed: Vec<(Tree, f64)> = all_trees(n)
        .into_iter()
        .filter(|t| TRIPLETS.iter().all(|&x| holds(t, x)))
        .map(|t| {
            let cost = trellis::tree_cost(&model, &t).unwrap();
            (t, cost)
        })
        .collect();
    assert_eq!(all_trees(n).len(), 945);
    assert!(allowed.len() < 945 / 4);
    let max = allowed
        .iter()
        .map(|(_, c)| -beta * c)
        .fold(f64::MIN, f64::max);
    let log_z = max
        + allowed
            .iter()
            .map(|(_, c)| (-beta * c - max).exp())
            .sum::<f64>()
            .ln();
    let b = beta.to_string();
    let base = [
        "--model",
        "hcc",
        "--weights",
        w,
        "--beta",
        &b,
        "--triplets",
        t,
    ];
    let with = |cmd: &[&str]| -> Vec<String> {
        cmd.iter()
            .chain(base.iter())
            .map(|s| s.to_string())
            .collect()
    };
    let call = |cmd: &[&str]| json(&with(cmd).iter().map(String::as_str).collect::<Vec<_>>());

    let out = call(&["logz", "--json"]);
    assert!(
        (out["log_z"].as_f64().unwrap() - log_z).abs() < 1e-9,
        "{out}"
    );

    let out = call(&["map", "--json"]);
    let best = allowed
        .iter()
        .map(|(_, c)| *c)
        .fold(f64::INFINITY, f64::min);
    assert!((out["cost"].as_f64().unwrap() - best).abs() < 1e-9);
    assert!(TRIPLETS.iter().all(|&x| holds(&tree_of(&out["tree"]), x)));

    let out = call(&["marginals", "--json", "--min-p", "0"]);
    let clusters = out["clusters"].as_array().unwrap();
    assert!(!clusters.is_empty());
    for c in clusters {
        let members: Vec<usize> = serde_json::from_value(c["members"].clone()).unwrap();
        let brute: f64 = allowed
            .iter()
            .filter(|(t, _)| t.clusters().contains(&members))
            .map(|(_, cost)| (-beta * cost - log_z).exp())
            .sum();
        assert!(
            (c["p"].as_f64().unwrap() - brute).abs() < 1e-9,
            "{members:?}"
        );
    }
    // A cluster that breaks a triplet ({0, 2} without 1) has probability 0.
    assert!(
        clusters
            .iter()
            .all(|c| c["members"] != serde_json::json!([0, 2]))
    );

    let out = call(&["sample", "-n", "2000", "--seed", "4", "--json"]);
    let samples = out["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 2000);
    let trees: Vec<Tree> = samples.iter().map(tree_of).collect();
    assert!(trees.iter().all(|t| TRIPLETS.iter().all(|&x| holds(t, x))));
    // The MAP tree's frequency follows its exact probability.
    let map_tree = tree_of(&call(&["map", "--json"])["tree"]).canonical();
    let seen = trees
        .iter()
        .filter(|t| (*t).clone().canonical() == map_tree)
        .count();
    let p = (-beta * best - log_z).exp();
    let sd = (p * (1.0 - p) / 2000.0).sqrt();
    assert!(
        (seen as f64 / 2000.0 - p).abs() < 5.0 * sd,
        "{seen} of 2000, p = {p}"
    );

    let out = call(&["infer", "--json"]);
    assert!((out["log_z"].as_f64().unwrap() - log_z).abs() < 1e-9);
    assert!((out["map"]["cost"].as_f64().unwrap() - best).abs() < 1e-9);
}

#[test]
fn issue24_triplets_by_name_and_their_refusals() {
    let d = dir("issue24_triplet_names");
    let points = file(
        &d,
        "p.csv",
        "name,x,y\nant,0.1,0.1\nbee,0.2,0.1\ncat,5,5\ndog,5.2,5\nelk,9,1\n",
    );
    let p = points.to_str().unwrap();
    let good = file(&d, "good.txt", "ant cat elk\n");
    let out = json(&[
        "map",
        "--model",
        "hcc",
        "--points",
        p,
        "--similarity",
        "rbf",
        "--center",
        "--json",
        "--triplets",
        good.to_str().unwrap(),
    ]);
    // ant (0) and cat (2) meet below elk (4), against the data's own grouping.
    assert!(holds(&tree_of(&out["tree"]), (0, 2, 4)), "{out}");
    let free = json(&[
        "map",
        "--model",
        "hcc",
        "--points",
        p,
        "--similarity",
        "rbf",
        "--center",
        "--json",
    ]);
    assert!(!holds(&tree_of(&free["tree"]), (0, 2, 4)), "{free}");
    assert!(out["cost"].as_f64().unwrap() > free["cost"].as_f64().unwrap());

    let bad = file(&d, "bad.txt", "ant bee cat\nant cat bee\n");
    fails(
        &[
            "logz",
            "--model",
            "hcc",
            "--points",
            p,
            "--triplets",
            bad.to_str().unwrap(),
        ],
        "cannot all hold in one tree: ({ant, bee}, cat)",
    );
    let unknown = file(&d, "unknown.txt", "ant bee zebra\n");
    fails(
        &[
            "logz",
            "--model",
            "hcc",
            "--points",
            p,
            "--triplets",
            unknown.to_str().unwrap(),
        ],
        "line 1: \"zebra\" is not a point name",
    );
    let twice = file(&d, "twice.txt", "ant ant bee\n");
    fails(
        &[
            "logz",
            "--model",
            "hcc",
            "--points",
            p,
            "--triplets",
            twice.to_str().unwrap(),
        ],
        "line 1: the three points must differ (\"ant\" repeats)",
    );
    let g = good.to_str().unwrap();
    fails(
        &["map", "--model", "ginkgo", "--jets", p, "--triplets", g],
        "cannot be used with",
    );
    // Without names, triplets are 0-based indices.
    let w = file(&d, "w.csv", &weights_csv(5, 1));
    let idx = file(&d, "idx.txt", "0 1 4\n");
    let out = json(&[
        "map",
        "--model",
        "hcc",
        "--weights",
        w.to_str().unwrap(),
        "--json",
        "--triplets",
        idx.to_str().unwrap(),
    ]);
    assert!(holds(&tree_of(&out["tree"]), (0, 1, 4)));
    fails(
        &[
            "map",
            "--model",
            "hcc",
            "--weights",
            w.to_str().unwrap(),
            "--triplets",
            g,
        ],
        "\"ant\" is not a point name",
    );
}

#[test]
fn issue24_must_and_cannot_links_restrict_the_flat_commands_as_brute_force() {
    let n = 6;
    let d = dir("issue24_links");
    let w = file(&d, "w.csv", &weights_csv(n, 8));
    let must = file(&d, "must.txt", "# together\n0 1\n1,3\n");
    let cannot = file(&d, "cannot.txt", "2 4\n0 5\n");
    let (w, must, cannot) = (
        w.to_str().unwrap(),
        must.to_str().unwrap(),
        cannot.to_str().unwrap(),
    );
    let m = weights(n, 8);
    let beta = 0.8;
    let same = |p: &Vec<Vec<usize>>, i: usize, j: usize| {
        p.iter().any(|c| c.contains(&i) && c.contains(&j))
    };
    let allowed: Vec<(Vec<Vec<usize>>, f64)> = partitions(n)
        .into_iter()
        .filter(|p| same(p, 0, 1) && same(p, 1, 3) && !same(p, 2, 4) && !same(p, 0, 5))
        .map(|p| {
            let e: f64 = p
                .iter()
                .flat_map(|c| c.iter().flat_map(|&i| c.iter().map(move |&j| (i, j))))
                .filter(|(i, j)| i < j)
                .map(|(i, j)| beta * m[i][j])
                .sum();
            (p, e)
        })
        .collect();
    let max = allowed.iter().map(|(_, e)| *e).fold(f64::MIN, f64::max);
    let log_z = max
        + allowed
            .iter()
            .map(|(_, e)| (e - max).exp())
            .sum::<f64>()
            .ln();
    let b = beta.to_string();
    let args = |cmd: &str| -> Vec<String> {
        let base = ["flat", cmd, "--model", "cc", "--weights", w, "--beta", &b];
        let links = ["--must-link", must, "--cannot-link", cannot, "--json"];
        base.iter()
            .chain(links.iter())
            .map(|s| s.to_string())
            .collect()
    };
    let call = |cmd: &str| json(&args(cmd).iter().map(String::as_str).collect::<Vec<_>>());
    assert!((call("logz")["log_z"].as_f64().unwrap() - log_z).abs() < 1e-9);
    let map = call("map");
    assert!((map["log_energy"].as_f64().unwrap() - max).abs() < 1e-9);
    let pairwise = call("marginals")["pairwise"].clone();
    for i in 0..n {
        for j in 0..n {
            let brute: f64 = allowed
                .iter()
                .filter(|(p, _)| i == j || same(p, i, j))
                .map(|(_, e)| (e - log_z).exp())
                .sum();
            assert!(
                (pairwise[i][j].as_f64().unwrap() - brute).abs() < 1e-9,
                "{i} {j}"
            );
        }
    }
    let mut sample = args("sample");
    sample.extend(["-n".into(), "100".into()]);
    let out = json(&sample.iter().map(String::as_str).collect::<Vec<_>>());
    for s in out["samples"].as_array().unwrap() {
        let p: Vec<Vec<usize>> = serde_json::from_value(s.clone()).unwrap();
        assert!(same(&p, 0, 1) && same(&p, 1, 3) && !same(&p, 2, 4) && !same(&p, 0, 5));
    }
    // A contradiction, --sparse and perturb-map are refused.
    let chain = file(&d, "chain.txt", "0 2\n2 5\n");
    fails(
        &[
            "flat",
            "logz",
            "--model",
            "cc",
            "--weights",
            w,
            "--must-link",
            chain.to_str().unwrap(),
            "--cannot-link",
            cannot,
        ],
        "cannot-link (0, 5) but must-link joins them (0 - 2 - 5)",
    );
    fails(
        &[
            "flat",
            "map",
            "--model",
            "cc",
            "--weights",
            w,
            "--must-link",
            must,
            "--sparse",
            "tree",
        ],
        "not with --sparse",
    );
    fails(
        &[
            "flat",
            "perturb-map",
            "--model",
            "cc",
            "--weights",
            w,
            "--must-link",
            must,
            "-n",
            "3",
        ],
        "apply to map, logz, marginals and sample",
    );
    let bad = file(&d, "bad.txt", "0 0\n");
    fails(
        &[
            "flat",
            "logz",
            "--model",
            "cc",
            "--weights",
            w,
            "--must-link",
            bad.to_str().unwrap(),
        ],
        "line 1: the two points must differ",
    );
}

/// `astar --triplets`: exact A* finds the best tree that satisfies the
/// triplets (brute force), and approximate A* starts from and returns trees
/// that satisfy them, never better than the exact optimum.
#[test]
fn issue24_astar_with_triplets_stays_among_the_trees_that_satisfy_them() {
    let n = 6;
    let d = dir("issue24_astar_triplets");
    let t = file(&d, "t.txt", "0 1 2\n3 4 0\n");
    for seed in [3u64, 7, 11] {
        let w = file(&d, &format!("w{seed}.csv"), &weights_csv(n, seed));
        let (w, t) = (w.to_str().unwrap(), t.to_str().unwrap());
        let weights = Weights::from_matrix(&Matrix::from_rows(weights(n, seed)).unwrap()).unwrap();
        let model = Hcc::new(&weights, 1.0).unwrap();
        let best = all_trees(n)
            .into_iter()
            .filter(|t| TRIPLETS.iter().all(|&x| holds(t, x)))
            .map(|t| trellis::tree_cost(&model, &t).unwrap())
            .fold(f64::INFINITY, f64::min);
        let exact = json(&[
            "astar",
            "--model",
            "hcc",
            "--weights",
            w,
            "--triplets",
            t,
            "--json",
        ]);
        assert_eq!(exact["exact"], true);
        assert!(
            (exact["cost"].as_f64().unwrap() - best).abs() < 1e-9,
            "{exact}"
        );
        assert!(TRIPLETS.iter().all(|&x| holds(&tree_of(&exact["tree"]), x)));
        for init in ["average", "greedy", "beam"] {
            let approx = json(&[
                "astar",
                "--approx",
                "--model",
                "hcc",
                "--weights",
                w,
                "--triplets",
                t,
                "--init",
                init,
                "--json",
            ]);
            assert!(
                TRIPLETS
                    .iter()
                    .all(|&x| holds(&tree_of(&approx["tree"]), x)),
                "{approx}"
            );
            assert!(approx["cost"].as_f64().unwrap() >= best - 1e-9, "{approx}");
        }
    }
    fails(
        &[
            "astar",
            "--model",
            "hcc",
            "--weights",
            "nowhere.csv",
            "--jets",
            "x.json",
            "--triplets",
            "t",
        ],
        "cannot be used with",
    );
}

/// `--triplets` with `--sparse beam`: the sparse trellis is built from trees
/// that satisfy the triplets and its posterior is restricted to them. Wide
/// enough to hold every tree (N = 5), it is the dense restricted posterior
/// and realises exactly the trees that satisfy the triplets; narrower (N =
/// 8), its MAP tree and samples satisfy them and its log Z is below the
/// dense one's.
#[test]
fn issue24_sparse_beam_with_triplets_stays_among_the_trees_that_satisfy_them() {
    let d = dir("issue24_sparse_triplets");
    let t = file(&d, "t.txt", "0 1 2\n3 4 0\n");
    let t = t.to_str().unwrap();
    let w5 = file(&d, "w5.csv", &weights_csv(5, 5));
    let w5 = w5.to_str().unwrap();
    let allowed = all_trees(5)
        .into_iter()
        .filter(|t| TRIPLETS.iter().all(|&x| holds(t, x)))
        .count();
    let base = ["--model", "hcc", "--weights", w5, "--triplets", t, "--json"];
    let dense = json(&[&["logz"][..], &base].concat());
    let sparse = json(
        &[
            &[
                "logz",
                "--sparse",
                "beam",
                "--trees",
                "105",
                "--beam-width",
                "200",
            ][..],
            &base,
        ]
        .concat(),
    );
    let (a, b) = (
        dense["log_z"].as_f64().unwrap(),
        sparse["log_z"].as_f64().unwrap(),
    );
    assert!((a - b).abs() < 1e-12, "{dense} {sparse}");
    assert_eq!(sparse["num_trees_realised"], allowed.to_string());

    let w8 = file(&d, "w8.csv", &weights_csv(8, 8));
    let w8 = w8.to_str().unwrap();
    let base = ["--model", "hcc", "--weights", w8, "--triplets", t, "--json"];
    let dense = json(&[&["logz"][..], &base].concat());
    let sparse = json(&[&["logz", "--sparse", "beam", "--trees", "5"][..], &base].concat());
    assert!(sparse["log_z"].as_f64().unwrap() <= dense["log_z"].as_f64().unwrap() + 1e-12);
    let map = json(&[&["map", "--sparse", "beam", "--trees", "5"][..], &base].concat());
    assert!(
        TRIPLETS.iter().all(|&x| holds(&tree_of(&map["tree"]), x)),
        "{map}"
    );
    let out = json(
        &[
            &[
                "sample",
                "--sparse",
                "beam",
                "--trees",
                "5",
                "--num-samples",
                "50",
                "--seed",
                "3",
            ][..],
            &base,
        ]
        .concat(),
    );
    for s in out["samples"].as_array().unwrap() {
        assert!(TRIPLETS.iter().all(|&x| holds(&tree_of(s), x)), "{s}");
    }
}

/// Beyond 128 points (wide cluster masks): `--sparse beam` and `astar
/// --approx` under triplets at N = 140 give trees in which every triplet
/// holds.
#[test]
fn issue24_triplets_beyond_128_points_on_the_sparse_trellis_and_approximate_astar() {
    let d = dir("issue24_wide_triplets");
    let w = file(&d, "w.csv", &weights_csv(140, 140));
    let t = file(&d, "t.txt", "0 4 3\n3 7 6\n130 139 135\n");
    let (w, t) = (w.to_str().unwrap(), t.to_str().unwrap());
    let wide: [(usize, usize, usize); 3] = [(0, 4, 3), (3, 7, 6), (130, 139, 135)];
    let base = ["--model", "hcc", "--weights", w, "--triplets", t, "--json"];
    let sparse = ["--sparse", "beam", "--trees", "3", "--beam-width", "4"];
    let map = json(&[&["map"][..], &sparse, &base].concat());
    let tree = tree_of(&map["tree"]);
    assert_eq!(tree.num_leaves(), 140);
    assert!(wide.iter().all(|&x| holds(&tree, x)), "{map}");
    let out = json(
        &[
            &["sample", "--num-samples", "20", "--seed", "1"][..],
            &sparse,
            &base,
        ]
        .concat(),
    );
    for s in out["samples"].as_array().unwrap() {
        assert!(wide.iter().all(|&x| holds(&tree_of(s), x)), "{s}");
    }
    let approx = json(&[&["astar", "--approx", "--max-explored", "500"][..], &base].concat());
    assert_eq!(approx["sets"], "wide");
    assert!(
        wide.iter().all(|&x| holds(&tree_of(&approx["tree"]), x)),
        "{approx}"
    );
}
