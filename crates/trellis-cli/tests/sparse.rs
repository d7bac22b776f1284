//! `marginals --sparse` and `flat ... --sparse`, checked against brute force
//! computed here: over the trees (partitions) the family realises.

use std::collections::HashSet;

use crate::util::{dir, file, json, log_sum_exp, run, s, weights, weights_csv};

/// A binary tree as nested point sets: every internal node's `(left, right)`.
#[derive(Clone, Debug)]
enum T {
    Leaf(usize),
    Node(Box<T>, Box<T>),
}

impl T {
    fn mask(&self) -> u32 {
        match self {
            T::Leaf(i) => 1 << i,
            T::Node(l, r) => l.mask() | r.mask(),
        }
    }

    fn splits(&self, out: &mut Vec<(u32, u32)>) {
        if let T::Node(l, r) = self {
            out.push((l.mask(), r.mask()));
            l.splits(out);
            r.splits(out);
        }
    }
}

/// Every binary tree over the points of `s`.
fn trees(s: u32) -> Vec<T> {
    if s.count_ones() == 1 {
        return vec![T::Leaf(s.trailing_zeros() as usize)];
    }
    let low = s & s.wrapping_neg();
    let rest = s ^ low;
    let mut out = Vec::new();
    let mut sub = rest;
    loop {
        sub = sub.wrapping_sub(1) & rest;
        let (l, r) = (low | sub, rest ^ sub);
        for a in trees(l) {
            for b in trees(r) {
                out.push(T::Node(Box::new(a.clone()), Box::new(b)));
            }
        }
        if sub == 0 {
            break;
        }
    }
    out
}

/// Hierarchical correlation clustering's cost of a split.
fn hcc_cost(w: &[Vec<f64>], l: u32, r: u32) -> f64 {
    let pts = |m: u32| (0..32).filter(move |i| m >> i & 1 == 1);
    let mut c = 0.0;
    for i in pts(l) {
        for j in pts(r) {
            c += w[i][j].max(0.0);
        }
    }
    for part in [l, r] {
        for i in pts(part) {
            for j in pts(part).filter(|&j| j > i) {
                c += (-w[i][j]).max(0.0);
            }
        }
    }
    c
}

fn members_mask(v: &serde_json::Value) -> u32 {
    v.as_array()
        .unwrap()
        .iter()
        .fold(0, |m, i| m | 1 << i.as_u64().unwrap())
}

#[test]
fn sparse_marginals_equal_brute_force_over_the_realised_trees() {
    let d = dir("sparse_marginals");
    let n = 6;
    let w = weights(n, 4);
    let path = file(&d, "w.csv", &weights_csv(n, 4));
    let beta = 1.7;
    let out = json(&[
        "marginals",
        "--model",
        "hcc",
        "--weights",
        s(&path),
        "--beta",
        "1.7",
        "--sparse",
        "beam",
        "--trees",
        "4",
        "--json",
    ]);
    let listed: Vec<(u32, f64)> = out["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (members_mask(&c["members"]), c["p"].as_f64().unwrap()))
        .collect();
    assert!(!listed.is_empty());
    // Every cluster of positive marginal is in a realised tree, and hcc gives every
    // tree a positive potential: the realised trees are those made of listed clusters.
    let root = (1u32 << n) - 1;
    let family: HashSet<u32> = listed.iter().map(|c| c.0).chain([root]).collect();
    let realised: Vec<(Vec<(u32, u32)>, f64)> = trees(root)
        .into_iter()
        .filter_map(|t| {
            let mut splits = Vec::new();
            t.splits(&mut splits);
            splits
                .iter()
                .all(|&(l, r)| family.contains(&(l | r)))
                .then(|| {
                    let log_phi =
                        -beta * splits.iter().map(|&(l, r)| hcc_cost(&w, l, r)).sum::<f64>();
                    (splits, log_phi)
                })
        })
        .collect();
    assert_eq!(
        out["num_trees_realised"].as_str().unwrap(),
        realised.len().to_string()
    );
    let log_z = log_sum_exp(&realised.iter().map(|r| r.1).collect::<Vec<_>>());
    assert!((out["log_z"].as_f64().unwrap() - log_z).abs() < 1e-9);
    let mut total = 0.0;
    for &(c, p) in &listed {
        let want: f64 = realised
            .iter()
            .filter(|r| r.0.iter().any(|&(l, r)| l | r == c))
            .map(|r| (r.1 - log_z).exp())
            .sum();
        assert!((p - want).abs() < 1e-9, "cluster {c:#b}: {p} vs {want}");
        total += p;
    }
    assert!((total - (n as f64 - 2.0)).abs() < 1e-9, "{total}");
    // Readable output and the refusal of --subtree.
    let text = run(&[
        "marginals",
        "--model",
        "hcc",
        "--weights",
        s(&path),
        "--sparse",
        "beam",
    ]);
    assert!(text.status.success());
    assert!(String::from_utf8_lossy(&text.stdout).contains("sparse trellis"));
    let refused = run(&[
        "marginals",
        "--model",
        "hcc",
        "--weights",
        s(&path),
        "--sparse",
        "beam",
        "--subtree",
        "[0,1]",
    ]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(refused.stdout.is_empty());
}

/// Every partition of the points of `s` made of sets of `family`.
fn partitions_within(s: u32, family: &HashSet<u32>) -> Vec<Vec<u32>> {
    if s == 0 {
        return vec![Vec::new()];
    }
    let low = s & s.wrapping_neg();
    let mut out = Vec::new();
    for &c in family {
        if c & low != 0 && c & !s == 0 {
            for mut rest in partitions_within(s ^ c, family) {
                rest.push(c);
                out.push(rest);
            }
        }
    }
    out
}

fn inside_weight(w: &[Vec<f64>], c: u32) -> f64 {
    let pts: Vec<usize> = (0..32).filter(|i| c >> i & 1 == 1).collect();
    let mut s = 0.0;
    for (a, &i) in pts.iter().enumerate() {
        for &j in &pts[a + 1..] {
            s += w[i][j];
        }
    }
    s
}

/// Checks `flat logz`, `flat map` and `flat sample` with `sparse` flags
/// against brute force over the partitions made of `family`.
fn check_flat_family(w: &[Vec<f64>], path: &str, sparse: &[&str], family: &HashSet<u32>) {
    let n = w.len();
    let beta = 0.9;
    let parts = partitions_within((1 << n) - 1, family);
    let log_e: Vec<f64> = parts
        .iter()
        .map(|p| beta * p.iter().map(|&c| inside_weight(w, c)).sum::<f64>())
        .collect();
    let args = |cmd: &'static str| -> Vec<String> {
        let mut v: Vec<String> = [
            "flat",
            cmd,
            "--model",
            "cc",
            "--weights",
            path,
            "--beta",
            "0.9",
        ]
        .iter()
        .map(|x| x.to_string())
        .collect();
        v.extend(sparse.iter().map(|x| x.to_string()));
        v.push("--json".into());
        v
    };
    let call = |cmd: &'static str, extra: &[&str]| {
        let mut a = args(cmd);
        a.extend(extra.iter().map(|x| x.to_string()));
        json(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let logz = call("logz", &[]);
    let want = log_sum_exp(&log_e);
    assert!(
        (logz["log_z"].as_f64().unwrap() - want).abs() < 1e-9,
        "{logz} vs {want}"
    );
    assert_eq!(
        logz["num_partitions_realised"].as_str().unwrap(),
        parts.len().to_string()
    );
    let map = call("map", &[]);
    let best = log_e.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    assert!((map["log_energy"].as_f64().unwrap() - best).abs() < 1e-9);
    let sample = call("sample", &["-n", "200", "--seed", "3"]);
    let realised: HashSet<Vec<u32>> = parts
        .iter()
        .map(|p| {
            let mut v = p.clone();
            v.sort_unstable();
            v
        })
        .collect();
    for p in sample["samples"].as_array().unwrap() {
        let mut masks: Vec<u32> = p.as_array().unwrap().iter().map(members_mask).collect();
        masks.sort_unstable();
        assert!(
            realised.contains(&masks),
            "sampled {p}, not a partition of the family"
        );
    }
    assert_eq!(sample, call("sample", &["-n", "200", "--seed", "3"]));
}

#[test]
fn flat_sparse_families_equal_brute_force() {
    let d = dir("flat_sparse");
    let n = 6;
    let w = weights(n, 9);
    let path = file(&d, "w.csv", &weights_csv(n, 9));
    // The cuts of a hierarchy: its nodes and leaves.
    let tree = "[[[0,1],2],[[3,4],5]]";
    let nodes: HashSet<u32> = [
        0b000001, 0b000010, 0b000100, 0b001000, 0b010000, 0b100000, 0b000011, 0b000111, 0b011000,
        0b111000, 0b111111,
    ]
    .into_iter()
    .collect();
    check_flat_family(&w, s(&path), &["--sparse", "tree", "--tree", tree], &nodes);
    // The default hierarchy (average linkage) realises the cuts of some tree of n - 1
    // internal nodes: between n and 2^(n-1) partitions.
    let logz = json(&[
        "flat",
        "logz",
        "--model",
        "cc",
        "--weights",
        s(&path),
        "--sparse",
        "tree",
        "--json",
    ]);
    let k: u64 = logz["num_partitions_realised"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((n as u64..=1 << (n - 1)).contains(&k), "{k}");
    // A family closed under recursive complement, from a file.
    // Three blocks {0,1}, {2,3}, {4,5} and every union of two.
    let family: HashSet<u32> = [
        0b000011, 0b001100, 0b110000, 0b001111, 0b110011, 0b111100, 0b111111,
    ]
    .into_iter()
    .collect();
    let clusters = file(
        &d,
        "clusters.txt",
        "# a closed family\n0 1\n2,3\n4 5\n0 1 2 3\n0 1 4 5\n2 3 4 5\n",
    );
    check_flat_family(
        &w,
        s(&path),
        &["--sparse", "clusters", "--clusters", s(&clusters)],
        &family,
    );
    // A family that is not closed is refused, naming the clusters.
    let open = file(&d, "open.txt", "0 1\n");
    let out = run(&[
        "flat",
        "logz",
        "--model",
        "cc",
        "--weights",
        s(&path),
        "--sparse",
        "clusters",
        "--clusters",
        s(&open),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("recursive complement"));
    // Flags of one family with another are refused.
    let out = run(&[
        "flat",
        "logz",
        "--model",
        "cc",
        "--weights",
        s(&path),
        "--sparse",
        "tree",
        "--clusters",
        s(&open),
    ]);
    assert_eq!(out.status.code(), Some(2));
}

/// Issue 15: `flat --sparse clusters` beyond 128 points (clusters stored as
/// wide sets), against brute force: the family of every union of 5 blocks
/// of points (closed under recursive complement) realises the Bell(5) = 52
/// partitions of the blocks, enumerated here. Also the share of Bell(N) where
/// a float underflows.
#[test]
fn flat_sparse_clusters_beyond_128_points() {
    let beta = 0.9;
    for n in [130, 400] {
        let d = dir(&format!("flat_wide_{n}"));
        let w = weights(n, 16);
        let path = file(&d, "w.csv", &weights_csv(n, 16));
        // Block b holds the points i with i % 5 == b.
        let block = |m: u32| -> Vec<usize> { (0..n).filter(|i| m >> (i % 5) & 1 == 1).collect() };
        let unions: HashSet<u32> = (1..32).collect();
        let lines: Vec<String> = (1..32u32)
            .map(|m| {
                block(m)
                    .iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let clusters = file(&d, "unions.txt", &lines.join("\n"));
        let log_e: Vec<f64> = partitions_within(31, &unions)
            .iter()
            .map(|p| {
                let inside = |m: u32| {
                    let pts = block(m);
                    let pairs = pts.iter().enumerate();
                    pairs
                        .map(|(a, &i)| pts[a + 1..].iter().map(|&j| w[i][j]).sum::<f64>())
                        .sum::<f64>()
                };
                beta * p.iter().map(|&m| inside(m)).sum::<f64>()
            })
            .collect();
        assert_eq!(log_e.len(), 52);
        let by = |cmd: &str| {
            json(&[
                "flat",
                cmd,
                "--model",
                "cc",
                "--weights",
                s(&path),
                "--beta",
                "0.9",
                "--json",
                "--sparse",
                "clusters",
                "--clusters",
                s(&clusters),
            ])
        };
        let close =
            |x: f64, y: f64| assert!((x - y).abs() <= 1e-9 * x.abs().max(1.0), "{x} vs {y}");
        let logz = by("logz");
        assert_eq!(logz["n"], n);
        assert_eq!(logz["num_partitions_realised"], "52");
        close(logz["log_z"].as_f64().unwrap(), log_sum_exp(&log_e));
        let map = by("map");
        let best = log_e.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        close(map["log_energy"].as_f64().unwrap(), best);
        let parts = map["clusters"].as_array().unwrap();
        let covered: usize = parts.iter().map(|c| c.as_array().unwrap().len()).sum();
        assert_eq!(covered, n);
        // 52 of Bell(130) = 10^161.162020192 and of Bell(400) =
        // 10^644.108097992 partitions (Bell triangle, computed in Python): the
        // float share underflows at 400 points, its log10 does not.
        let log10_share = logz["log10_sparsity"].as_f64().unwrap();
        let log10_bell = if n == 130 {
            161.162020192
        } else {
            644.108097992
        };
        assert!(
            (log10_share - (52f64.log10() - log10_bell)).abs() < 1e-8,
            "{log10_share}"
        );
        if n == 400 {
            assert_eq!(logz["sparsity"], 0.0);
        } else {
            close(logz["sparsity"].as_f64().unwrap(), 10f64.powf(log10_share));
        }
    }
}

/// Issue 15: `--sparse beam` on weights beyond 128 points (clusters stored
/// as wide sets): log Z, the MAP tree and marginals are consistent with the
/// trees the family realises (one tree: log Z is its log-potential).
#[test]
fn sparse_beam_beyond_128_points() {
    let d = dir("sparse_wide");
    let w = file(&d, "w.csv", &weights_csv(130, 15));
    let w = s(&w);
    let base = [
        "--model",
        "hcc",
        "--weights",
        w,
        "--sparse",
        "beam",
        "--json",
    ];
    let with = |cmd: &str, extra: &[&str]| json(&[&[cmd][..], &base[..], extra].concat());
    for trees in ["1", "4"] {
        let logz = with("logz", &["--trees", trees]);
        let map = with("map", &["--trees", trees]);
        assert_eq!(logz["n"], 130);
        check_sparse_bounds(&logz, &map, trees == "1");
        let mut leaves = crate::util::leaves(&map["tree"]);
        leaves.sort_unstable();
        assert_eq!(leaves, (0..130).collect::<Vec<u64>>());
        let m = with("marginals", &["--trees", trees]);
        assert_eq!(m["log_z"], logz["log_z"]);
        for c in m["clusters"].as_array().unwrap() {
            let p = c["p"].as_f64().unwrap();
            assert!(p > 0.0 && p <= 1.0 + 1e-12, "{c}");
        }
    }
}

/// A sparse posterior's `logz` and `map` outputs agree: the MAP's
/// log-potential is at most log Z, which is at most the MAP plus the log of
/// the number of trees realised; equal when `one_tree`.
fn check_sparse_bounds(logz: &serde_json::Value, map: &serde_json::Value, one_tree: bool) {
    let realised: f64 = logz["num_trees_realised"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let log_z = logz["log_z"].as_f64().unwrap();
    let best = map["log_potential"].as_f64().unwrap();
    let tol = 1e-9 * log_z.abs().max(1.0);
    assert!(best <= log_z + tol, "{best} > {log_z}");
    assert!(
        log_z <= best + realised.ln() + tol,
        "{log_z} vs {best} + ln {realised}"
    );
    if one_tree {
        assert_eq!(realised, 1.0);
        assert!((log_z - best).abs() <= tol, "{log_z} vs {best}");
    }
}

/// `--sparse beam` on jets beyond 128 leaves (clusters as wide sets) beside
/// a small jet in the same file: per jet, the MAP of the sparse trellis is
/// at most its log Z, which is at most the MAP plus the log of the number of
/// trees realised, with equality for one tree; the MAP tree has every leaf.
#[test]
fn sparse_beam_on_jets_beyond_128_leaves() {
    let d = dir("sparse_wide_jets");
    let generate = |extra: &[&str]| -> serde_json::Value {
        let args = [&["ginkgo", "generate", "--n-jets", "1"][..], extra].concat();
        serde_json::from_str(&crate::util::stdout(&args)).unwrap()
    };
    let mut big = generate(&[
        "--min-leaves",
        "130",
        "--max-leaves",
        "150",
        "--seed",
        "1",
        "--preset",
        "w",
        "--t-cut",
        "0.05",
    ]);
    let small = generate(&["--min-leaves", "6", "--max-leaves", "6", "--seed", "2"]);
    let mut small_jet = small["jets"][0].clone();
    small_jet["id"] = "small".into();
    big["jets"].as_array_mut().unwrap().push(small_jet);
    let f = file(&d, "jets.json", &big.to_string());
    let lines = |cmd: &str, trees: &str| -> Vec<serde_json::Value> {
        let args = [
            cmd,
            "--model",
            "ginkgo",
            "--jets",
            s(&f),
            "--sparse",
            "beam",
            "--trees",
            trees,
        ];
        crate::util::stdout(&args)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    for trees in ["1", "4"] {
        let (logz, map) = (lines("logz", trees), lines("map", trees));
        assert_eq!(logz.len(), 2);
        assert!(logz[0]["n"].as_u64().unwrap() > 128, "{}", logz[0]["n"]);
        assert_eq!(logz[1]["n"], 6);
        for (z, m) in logz.iter().zip(&map) {
            assert_eq!(z["id"], m["id"]);
            check_sparse_bounds(z, m, trees == "1");
            let mut leaves = crate::util::leaves(&m["tree"]);
            leaves.sort_unstable();
            let n = z["n"].as_u64().unwrap();
            assert_eq!(leaves, (0..n).collect::<Vec<u64>>());
        }
    }
}

/// `--beam-width` narrows the beam search of `--sparse beam` (raised to
/// `--trees` if below): every width gives a valid sparse posterior whose
/// MAP is one of its trees, a width of `--trees` realises at most that many
/// trees' clusters, and bad uses are refused before any work.
#[test]
fn sparse_beam_width_flag() {
    let d = dir("sparse_beam_width");
    let w = file(&d, "w.csv", &weights_csv(14, 21));
    let w = s(&w);
    let base = [
        "--model",
        "hcc",
        "--weights",
        w,
        "--sparse",
        "beam",
        "--trees",
        "3",
        "--json",
    ];
    for width in ["1", "3", "50"] {
        let logz = json(&[&["logz"][..], &base[..], &["--beam-width", width]].concat());
        let map = json(&[&["map"][..], &base[..], &["--beam-width", width]].concat());
        check_sparse_bounds(&logz, &map, false);
    }
    crate::util::fails(
        &[&["logz"][..], &base[..], &["--beam-width", "0"]].concat(),
        "--beam-width must be at least 1",
    );
    let jets = file(
        &d,
        "jets.json",
        &crate::util::stdout(&[
            "ginkgo",
            "generate",
            "--n-jets",
            "1",
            "--min-leaves",
            "6",
            "--max-leaves",
            "6",
            "--seed",
            "3",
        ]),
    );
    crate::util::fails(
        &[
            "logz",
            "--model",
            "ginkgo",
            "--jets",
            s(&jets),
            "--sparse",
            "simulator",
            "--beam-width",
            "5",
        ],
        "--beam-width applies to --sparse beam",
    );
}
