//! Issue 13: trees with names and heights. Newick with branch lengths, the
//! rooted mark and support values; SciPy linkage matrices from every command
//! that returns a tree; linkage on distances equal to an independent
//! computation (and to SciPy when it is installed); `infer`.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::util::{dir, fails, file, json, run, s, stdout, weights_csv};

/// Newick text without its branch lengths (`:x`), outside quoted labels.
pub fn strip_lengths(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        if c == '\'' {
            quoted = !quoted;
        }
        if c == ':' && !quoted {
            while matches!(chars.peek(), Some(d) if !",);".contains(*d)) {
                chars.next();
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// A parsed Newick node: leaves carry their label, internal nodes their
/// label (support) and children; every node its branch length.
#[derive(Debug)]
struct Node {
    label: String,
    length: Option<f64>,
    children: Vec<Node>,
}

/// A small independent Newick reader (quoted labels, lengths, internal
/// labels, a leading `[&R]`).
fn parse_newick(text: &str) -> Node {
    let t = text.trim();
    let t = t.strip_prefix("[&R]").expect("rooted mark").trim_start();
    let b: Vec<char> = t.chars().collect();
    let mut pos = 0;
    let node = read_node(&b, &mut pos);
    assert_eq!(b.get(pos), Some(&';'), "{text}");
    assert_eq!(pos + 1, b.len(), "{text}");
    node
}

fn read_label(b: &[char], pos: &mut usize) -> String {
    let mut out = String::new();
    if b.get(*pos) == Some(&'\'') {
        *pos += 1;
        loop {
            let c = b[*pos];
            *pos += 1;
            if c == '\'' {
                if b.get(*pos) == Some(&'\'') {
                    out.push('\'');
                    *pos += 1;
                } else {
                    return out;
                }
            } else {
                out.push(c);
            }
        }
    }
    while let Some(&c) = b.get(*pos) {
        if "(),:;".contains(c) {
            break;
        }
        out.push(c);
        *pos += 1;
    }
    out
}

fn read_node(b: &[char], pos: &mut usize) -> Node {
    let mut children = vec![];
    if b[*pos] == '(' {
        *pos += 1;
        loop {
            children.push(read_node(b, pos));
            let c = b[*pos];
            *pos += 1;
            if c == ')' {
                break;
            }
            assert_eq!(c, ',');
        }
    }
    let label = read_label(b, pos);
    let length = if b.get(*pos) == Some(&':') {
        *pos += 1;
        let start = *pos;
        while !",);".contains(b[*pos]) {
            *pos += 1;
        }
        Some(b[start..*pos].iter().collect::<String>().parse().unwrap())
    } else {
        None
    };
    Node {
        label,
        length,
        children,
    }
}

/// Every leaf's label with the summed branch lengths from the root, and
/// every internal node below the root as (its leaves' labels sorted, its label).
fn walk(
    node: &Node,
    depth: f64,
    leaves: &mut Vec<(String, f64)>,
    inner: &mut Vec<(Vec<String>, String)>,
    root: bool,
) -> Vec<String> {
    let d = depth + node.length.unwrap_or(0.0);
    if root {
        assert!(node.length.is_none(), "the root has no length");
    } else {
        let l = node.length.expect("every branch has a length");
        assert!(l >= 0.0, "negative length {l}");
    }
    if node.children.is_empty() {
        leaves.push((node.label.clone(), d));
        return vec![node.label.clone()];
    }
    assert_eq!(node.children.len(), 2, "binary");
    let mut all = vec![];
    for c in &node.children {
        all.extend(walk(c, d, leaves, inner, false));
    }
    all.sort();
    if !root {
        inner.push((all.clone(), node.label.clone()));
    }
    all
}

/// Parses rooted Newick with lengths; checks every leaf is at the same
/// depth (the lengths sum to the root's height) and returns that height and
/// the internal nodes.
fn check_newick(text: &str, n: usize) -> (f64, Vec<(Vec<String>, String)>) {
    assert!(text.starts_with("[&R] "), "{text}");
    let root = parse_newick(text);
    let (mut leaves, mut inner) = (vec![], vec![]);
    walk(&root, 0.0, &mut leaves, &mut inner, true);
    assert_eq!(leaves.len(), n, "{text}");
    if leaves.iter().all(|(l, _)| l.parse::<usize>().is_ok()) {
        // The library reads it back (ignoring lengths and support).
        let tree = trellis::Tree::parse(text).unwrap_or_else(|e| panic!("{e}: {text}"));
        assert_eq!(tree.num_leaves(), n);
    }
    let h = leaves[0].1;
    for (l, d) in &leaves {
        assert!(
            (d - h).abs() <= 1e-9 * h.abs().max(1.0),
            "leaf {l} at {d}, not {h}: {text}"
        );
    }
    (h, inner)
}

/// Checks a SciPy linkage matrix: n - 1 rows, ids below n + row, each used
/// once, sizes right, heights finite, >= 0 and non-decreasing. Returns the
/// rows.
fn check_linkage(v: &Value, n: usize) -> Vec<[f64; 4]> {
    let rows: Vec<[f64; 4]> = v
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|r| {
            let r = r.as_array().unwrap();
            assert_eq!(r.len(), 4);
            [0, 1, 2, 3].map(|k| r[k].as_f64().unwrap())
        })
        .collect();
    check_rows(&rows, n);
    rows
}

fn check_rows(rows: &[[f64; 4]], n: usize) {
    assert_eq!(rows.len(), n - 1);
    let mut size = vec![1.0; n];
    let mut used = vec![false; 2 * n - 1];
    let mut last = 0.0;
    for (i, r) in rows.iter().enumerate() {
        let mut s = 0.0;
        for &x in &r[..2] {
            assert!(
                x.fract() == 0.0 && x >= 0.0 && x < (n + i) as f64,
                "row {i}: {r:?}"
            );
            let id = x as usize;
            assert!(!used[id], "id {id} used twice");
            used[id] = true;
            s += size[id];
        }
        assert_eq!(r[3], s, "row {i}: size");
        size.push(s);
        assert!(r[2].is_finite() && r[2] >= 0.0, "row {i}: height {}", r[2]);
        assert!(r[2] >= last, "row {i}: heights not monotone");
        last = r[2];
    }
    assert!(
        used[..2 * n - 2].iter().all(|&u| u),
        "every id but the root once"
    );
}

fn csv_rows(text: &str) -> Vec<[f64; 4]> {
    text.lines()
        .map(|l| {
            let f: Vec<f64> = l.split(',').map(|x| x.parse().unwrap()).collect();
            [f[0], f[1], f[2], f[3]]
        })
        .collect()
}

fn hcc(cmd: &str, w: &Path, extra: &[&str]) -> Vec<String> {
    let mut a = vec![
        cmd.to_string(),
        "--model".into(),
        "hcc".into(),
        "--weights".into(),
        s(w).into(),
    ];
    if cmd == "linkage" {
        a.extend(["--method".into(), "average".into()]);
    }
    if cmd == "sample" {
        a.extend(["-n".into(), "3".into()]);
    }
    a.extend(extra.iter().map(|x| x.to_string()));
    a
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn newick_has_lengths_summing_to_the_heights_for_every_command() {
    let d = dir("i13_newick");
    let n = 7;
    let w = file(&d, "w.csv", &weights_csv(n, 31));
    for cmd in ["map", "greedy", "beam", "linkage", "astar"] {
        let j = json(&strs(&hcc(cmd, &w, &["--json"])));
        let text = stdout(&strs(&hcc(cmd, &w, &["--newick"])));
        let (h, inner) = check_newick(&text, n);
        assert_eq!(inner.len(), n - 2);
        // Same tree as the JSON output.
        let t = trellis::Tree::parse(&text).unwrap();
        assert_eq!(t.to_string(), j["tree"].to_string(), "{cmd}");
        if cmd != "linkage" {
            // hcc costs are >= 0: the root's height is the tree's cost.
            let cost = j["cost"].as_f64().unwrap();
            assert!((h - cost).abs() < 1e-9, "{cmd}: {h} vs {cost}");
            // The linkage matrix's last height is the same.
            let z = check_linkage(&json(&strs(&hcc(cmd, &w, &["--linkage"]))), n);
            assert!((z[n - 2][2] - cost).abs() < 1e-9, "{cmd}");
        }
        // Rank heights: the root's rank is the tree's depth.
        let text = stdout(&strs(&hcc(cmd, &w, &["--newick", "--heights", "rank"])));
        let (h, _) = check_newick(&text, n);
        assert_eq!(h, t.depth() as f64, "{cmd}");
    }
    // Samples: one tree per line.
    let text = stdout(&strs(&hcc("sample", &w, &["--newick"])));
    assert_eq!(text.lines().count(), 3);
    for line in text.lines() {
        check_newick(line, n);
    }
    // Names are kept, quoted when needed.
    let p = file(
        &d,
        "p.csv",
        "name,x,y\na b,1,0\nc,0.9,0.2\nd,0,1\ne,0.1,1\n",
    );
    let text = stdout(&["map", "--model", "hcc", "--points", s(&p), "--newick"]);
    let (_, _) = check_newick(&text, 4);
    assert!(text.contains("'a b':"), "{text}");
}

#[test]
fn linkage_heights_are_the_merge_distances() {
    let d = dir("i13_linkage_newick");
    let n = 6;
    let w = file(&d, "w.csv", &weights_csv(n, 5));
    // Newick lengths from linkage's own merge distances: root = last row.
    let z = check_linkage(&json(&strs(&hcc("linkage", &w, &["--linkage"]))), n);
    let (h, _) = check_newick(&stdout(&strs(&hcc("linkage", &w, &["--newick"]))), n);
    assert!((h - z[n - 2][2]).abs() < 1e-12);
    // --heights cost scores under the model instead.
    let j = json(&strs(&hcc("linkage", &w, &["--json"])));
    let zc = check_linkage(
        &json(&strs(&hcc(
            "linkage",
            &w,
            &["--linkage", "--heights", "cost"],
        ))),
        n,
    );
    assert!((zc[n - 2][2] - j["cost"].as_f64().unwrap()).abs() < 1e-9);
}

#[test]
fn support_values_equal_the_marginals() {
    let d = dir("i13_support");
    let n = 8;
    let w = file(&d, "w.csv", &weights_csv(n, 77));
    for sparse in [&[][..], &["--sparse", "beam"][..]] {
        let mut a = vec![
            "map",
            "--model",
            "hcc",
            "--weights",
            s(&w),
            "--newick",
            "--support",
            "--beta",
            "0.7",
        ];
        a.extend(sparse);
        let text = stdout(&a);
        let (_, inner) = check_newick(&text, n);
        let mut m = vec![
            "marginals",
            "--model",
            "hcc",
            "--weights",
            s(&w),
            "--json",
            "--beta",
            "0.7",
        ];
        m.extend(sparse);
        let marg = json(&m);
        let p: BTreeMap<Vec<String>, f64> = marg["clusters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let mut k: Vec<String> = c["members"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.to_string())
                    .collect();
                k.sort();
                (k, c["p"].as_f64().unwrap())
            })
            .collect();
        assert_eq!(inner.len(), n - 2);
        for (members, label) in inner {
            let support: f64 = label
                .parse()
                .unwrap_or_else(|_| panic!("support {label:?}"));
            let expected = p[&members];
            assert!(
                (support - expected).abs() <= 1e-12,
                "{members:?}: {support} vs {expected}"
            );
        }
    }
    // --support needs --newick.
    let out = run(&["map", "--model", "hcc", "--weights", s(&w), "--support"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn linkage_matrices_are_valid_for_every_command() {
    let d = dir("i13_linkage_all");
    let n = 9;
    let w = file(&d, "w.csv", &weights_csv(n, 3));
    for cmd in ["map", "greedy", "beam", "linkage", "astar"] {
        let z = check_linkage(&json(&strs(&hcc(cmd, &w, &["--linkage"]))), n);
        let csv = stdout(&strs(&hcc(cmd, &w, &["--linkage-csv"])));
        let zc = csv_rows(&csv);
        check_rows(&zc, n);
        // (serde_json's default float parsing may be off by an ulp.)
        for (a, b) in z.iter().zip(&zc) {
            assert_eq!(a[..2], b[..2], "{cmd}: CSV and JSON agree");
            assert_eq!(a[3], b[3], "{cmd}: CSV and JSON agree");
            assert!((a[2] - b[2]).abs() <= 1e-12 * a[2].abs().max(1.0), "{cmd}");
        }
        let zr = check_linkage(
            &json(&strs(&hcc(cmd, &w, &["--linkage", "--heights", "rank"]))),
            n,
        );
        assert!(zr.iter().all(|r| r[2].fract() == 0.0));
    }
    // Sample: one matrix per sample.
    let v = json(&strs(&hcc("sample", &w, &["--linkage"])));
    let all = v.as_array().unwrap();
    assert_eq!(all.len(), 3);
    let samples = json(&strs(&hcc("sample", &w, &["--json"])));
    for (z, t) in all.iter().zip(samples["samples"].as_array().unwrap()) {
        let rows = check_linkage(z, n);
        // The matrix is the sample's tree.
        let back = trellis::Dendrogram::from_linkage(&rows).unwrap();
        assert_eq!(
            back.tree().clone().canonical().to_string(),
            trellis::Tree::parse(&t.to_string())
                .unwrap()
                .canonical()
                .to_string()
        );
    }
    let csv = stdout(&strs(&hcc("sample", &w, &["--linkage-csv"])));
    let blocks: Vec<&str> = csv.split("\n\n").collect();
    assert_eq!(blocks.len(), 3, "{csv}");
    for b in blocks {
        check_rows(&csv_rows(b), n);
    }
    // Jets: a "linkage" field on each line.
    let jets = stdout(&[
        "ginkgo",
        "generate",
        "--n-jets",
        "3",
        "--min-leaves",
        "4",
        "--max-leaves",
        "7",
        "--seed",
        "2",
    ]);
    let jf = file(&d, "jets.json", &jets);
    for cmd in [
        &["map"][..],
        &["greedy"],
        &["beam"],
        &["astar"],
        &["linkage", "--method", "single"],
    ] {
        let mut a = cmd.to_vec();
        a.extend(["--model", "ginkgo", "--jets", s(&jf), "--linkage"]);
        let out = stdout(&a);
        for line in out.lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            let n = v["n"].as_u64().unwrap() as usize;
            check_linkage(&v["linkage"], n);
        }
    }
    fails(
        &[
            "map",
            "--model",
            "ginkgo",
            "--jets",
            s(&jf),
            "--linkage-csv",
        ],
        "--linkage-csv",
    );
    fails(
        &[
            "map",
            "--model",
            "hcc",
            "--weights",
            s(&w),
            "--linkage",
            "--json",
        ],
        "cannot be used",
    );
}

/// Deterministic uniform numbers in [0, 1).
fn uniform(seed: u64, k: usize) -> Vec<f64> {
    let mut x = seed.wrapping_mul(0x9e3779b97f4a7c15) | 1;
    (0..k)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        })
        .collect()
}

/// Brute-force agglomeration on points with each method's cluster distance
/// defined directly (not by the Lance-Williams update): the sorted merge
/// heights with the cluster each merge makes.
fn brute_force(points: &[Vec<f64>], method: &str) -> Vec<(f64, Vec<usize>)> {
    let dist = |a: usize, b: usize| -> f64 {
        points[a]
            .iter()
            .zip(&points[b])
            .map(|(x, y)| (x - y) * (x - y))
            .sum::<f64>()
            .sqrt()
    };
    let centroid = |c: &[usize]| -> Vec<f64> {
        let dim = points[0].len();
        (0..dim)
            .map(|k| c.iter().map(|&i| points[i][k]).sum::<f64>() / c.len() as f64)
            .collect()
    };
    let linkage = |a: &[usize], b: &[usize]| -> f64 {
        let pairs = a.iter().flat_map(|&i| b.iter().map(move |&j| (i, j)));
        match method {
            "single" => pairs.map(|(i, j)| dist(i, j)).fold(f64::INFINITY, f64::min),
            "complete" => pairs.map(|(i, j)| dist(i, j)).fold(0.0, f64::max),
            "average" => pairs.map(|(i, j)| dist(i, j)).sum::<f64>() / (a.len() * b.len()) as f64,
            "ward" => {
                let (ca, cb) = (centroid(a), centroid(b));
                let e: f64 = ca
                    .iter()
                    .zip(&cb)
                    .map(|(x, y)| (x - y) * (x - y))
                    .sum::<f64>()
                    .sqrt();
                let (na, nb) = (a.len() as f64, b.len() as f64);
                (2.0 * na * nb / (na + nb)).sqrt() * e
            }
            _ => unreachable!(),
        }
    };
    let mut clusters: Vec<Vec<usize>> = (0..points.len()).map(|i| vec![i]).collect();
    let mut out = vec![];
    while clusters.len() > 1 {
        let mut best = (f64::INFINITY, 0, 0);
        for i in 0..clusters.len() {
            for j in i + 1..clusters.len() {
                let h = linkage(&clusters[i], &clusters[j]);
                if h < best.0 {
                    best = (h, i, j);
                }
            }
        }
        let (h, i, j) = best;
        let b = clusters.remove(j);
        clusters[i].extend(b);
        clusters[i].sort();
        out.push((h, clusters[i].clone()));
    }
    out
}

/// The merges of linkage rows: each row's height and the points of its cluster.
fn merges(rows: &[[f64; 4]], n: usize) -> Vec<(f64, Vec<usize>)> {
    let mut members: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
    rows.iter()
        .map(|r| {
            let mut m = members[r[0] as usize].clone();
            m.extend(&members[r[1] as usize]);
            m.sort();
            members.push(m.clone());
            (r[2], m)
        })
        .collect()
}

fn assert_same_merges(a: &[(f64, Vec<usize>)], b: &[(f64, Vec<usize>)], what: &str) {
    assert_eq!(a.len(), b.len());
    for ((ha, ca), (hb, cb)) in a.iter().zip(b) {
        assert!(
            (ha - hb).abs() <= 1e-9 * ha.abs().max(1.0),
            "{what}: height {ha} vs {hb}"
        );
        assert_eq!(ca, cb, "{what}: clusters");
    }
}

#[test]
fn linkage_on_distances_equals_an_independent_computation_and_scipy() {
    let d = dir("i13_distances");
    let (n, dim) = (14, 3);
    let u = uniform(13, n * dim);
    let points: Vec<Vec<f64>> = u
        .chunks(dim)
        .map(|c| c.iter().map(|x| 10.0 * x - 5.0).collect())
        .collect();
    let points_csv: String = points
        .iter()
        .map(|p| {
            p.iter()
                .map(|x| format!("{x:?}"))
                .collect::<Vec<_>>()
                .join(",")
                + "\n"
        })
        .collect();
    let pf = file(&d, "points.csv", &points_csv);
    let dist_csv: String = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    let e: f64 = points[i]
                        .iter()
                        .zip(&points[j])
                        .map(|(x, y)| (x - y) * (x - y))
                        .sum::<f64>()
                        .sqrt();
                    format!("{e:?}")
                })
                .collect::<Vec<_>>()
                .join(",")
                + "\n"
        })
        .collect();
    let df = file(&d, "d.csv", &dist_csv);
    let python = Path::new("/work/venv-py/bin/python");
    for method in ["single", "average", "complete", "ward"] {
        let expected = brute_force(&points, method);
        let z = check_linkage(
            &json(&[
                "linkage",
                "--distances",
                s(&df),
                "--method",
                method,
                "--linkage",
            ]),
            n,
        );
        assert_same_merges(&merges(&z, n), &expected, method);
        // --points: Euclidean distances by default, the same rows.
        let zp = check_linkage(
            &json(&[
                "linkage",
                "--points",
                s(&pf),
                "--method",
                method,
                "--linkage",
            ]),
            n,
        );
        assert_same_merges(&merges(&zp, n), &expected, method);
        // From standard input.
        let out = assert_cmd::Command::cargo_bin("trellis")
            .unwrap()
            .args([
                "linkage",
                "--distances",
                "-",
                "--method",
                method,
                "--linkage-csv",
            ])
            .write_stdin(dist_csv.clone())
            .output()
            .unwrap();
        assert!(out.status.success());
        assert_same_merges(
            &merges(&csv_rows(&String::from_utf8(out.stdout).unwrap()), n),
            &expected,
            method,
        );
        // SciPy, when its virtual environment is present.
        if python.exists() {
            let script = format!(
                "import numpy as np, json, sys\nfrom scipy.cluster.hierarchy import linkage, is_valid_linkage, is_monotonic\n\
                 Z = np.array(json.loads(sys.stdin.read()))\nassert is_valid_linkage(Z) and is_monotonic(Z)\n\
                 X = np.loadtxt('{}', delimiter=',')\nprint(json.dumps(linkage(X, '{method}').tolist()))\n",
                s(&pf)
            );
            let out = std::process::Command::new(python)
                .args(["-c", &script])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .and_then(|mut c| {
                    use std::io::Write;
                    c.stdin
                        .take()
                        .unwrap()
                        .write_all(serde_json::to_string(&z).unwrap().as_bytes())?;
                    c.wait_with_output()
                });
            match out {
                Ok(o) if o.status.success() => {
                    let sz: Vec<[f64; 4]> = serde_json::from_slice(&o.stdout).unwrap();
                    assert_same_merges(&merges(&sz, n), &merges(&z, n), &format!("scipy {method}"));
                }
                // No SciPy in that environment: skip.
                _ => eprintln!("SciPy not available; skipped"),
            }
        }
    }
    // The similarity-based behaviour is kept as --metric similarity.
    let j = json(&[
        "linkage",
        "--points",
        s(&pf),
        "--method",
        "average",
        "--metric",
        "similarity",
        "--json",
    ]);
    assert_eq!(j["n"], n);
    // Bad distances.
    let bad = file(&d, "bad.csv", "0,1\n2,0\n");
    fails(
        &["linkage", "--distances", s(&bad), "--method", "single"],
        "symmetric",
    );
    let neg = file(&d, "neg.csv", "0,-1\n-1,0\n");
    fails(
        &["linkage", "--distances", s(&neg), "--method", "single"],
        "distances must be >= 0, but d[0][1] = -1",
    );
    fails(
        &[
            "linkage",
            "--distances",
            s(&df),
            "--method",
            "single",
            "--model",
            "hcc",
        ],
        "cannot be used",
    );
    fails(
        &[
            "linkage",
            "--distances",
            s(&df),
            "--method",
            "single",
            "--linkage",
            "--heights",
            "cost",
        ],
        "--heights cost needs --model",
    );
}

#[test]
fn infer_equals_map_logz_and_marginals() {
    let d = dir("i13_infer");
    let p = file(
        &d,
        "p.csv",
        "name,x,y,z\na,1,0,0.2\nb,0.9,0.2,0\nc,0,1,0.1\nd,0.1,1,0.3\ne,0.5,0.5,0.9\nf,-0.2,0.4,1\n",
    );
    let ps = s(&p);
    let base = [
        "--model", "hcc", "--points", ps, "--center", "--beta", "1.3",
    ];
    let with = |cmd: &str, extra: &[&str]| {
        let mut a = vec![cmd];
        a.extend(base);
        a.extend(extra);
        json(&a)
    };
    let inf = with("infer", &["--json"]);
    let map = with("map", &["--json"]);
    let logz = with("logz", &["--json"]);
    let marg = with("marginals", &["--json"]);
    assert_eq!(inf["n"], 6);
    assert_eq!(inf["names"], map["names"]);
    assert_eq!(inf["map"]["tree"], map["tree"]);
    assert!((inf["map"]["cost"].as_f64().unwrap() - map["cost"].as_f64().unwrap()).abs() < 1e-12);
    assert!(
        (inf["map"]["log_potential"].as_f64().unwrap() - map["log_potential"].as_f64().unwrap())
            .abs()
            < 1e-12
    );
    assert!((inf["log_z"].as_f64().unwrap() - logz["log_z"].as_f64().unwrap()).abs() < 1e-12);
    assert_eq!(inf["clusters"], marg["clusters"]);
    // --min-p as marginals'.
    let inf = with("infer", &["--json", "--min-p", "0.2"]);
    assert_eq!(
        inf["clusters"],
        with("marginals", &["--json", "--min-p", "0.2"])["clusters"]
    );
    // --newick: the MAP with its support values, as map --newick --support.
    let mut a = vec!["infer"];
    a.extend(base);
    a.push("--newick");
    let nwk = stdout(&a);
    let mut b = vec!["map"];
    b.extend(base);
    b.extend(["--newick", "--support"]);
    assert_eq!(nwk, stdout(&b));
    check_newick(&nwk, 6);
    // The readable summary.
    let mut r = vec!["infer"];
    r.extend(base);
    let text = stdout(&r);
    assert!(
        text.contains("log Z =") && text.contains("MAP hierarchy"),
        "{text}"
    );
    // Sparse and jets.
    let mut sp = vec!["infer"];
    sp.extend(base);
    sp.extend(["--sparse", "beam", "--json"]);
    let v = json(&sp);
    assert!(v.get("sparsity").is_some());
    let jets = stdout(&[
        "ginkgo",
        "generate",
        "--n-jets",
        "2",
        "--min-leaves",
        "4",
        "--max-leaves",
        "6",
        "--seed",
        "1",
    ]);
    let jf = file(&d, "jets.json", &jets);
    let out = stdout(&["infer", "--model", "ginkgo", "--jets", s(&jf)]);
    let m = stdout(&["map", "--model", "ginkgo", "--jets", s(&jf)]);
    for (line, mline) in out.lines().zip(m.lines()) {
        let v: Value = serde_json::from_str(line).unwrap();
        let mv: Value = serde_json::from_str(mline).unwrap();
        assert_eq!(v["map"]["tree"], mv["tree"]);
        assert!(v["clusters"].as_array().is_some());
    }
}

#[test]
fn help_and_errors_point_to_approximate_astar() {
    for cmd in ["greedy", "beam"] {
        let help = stdout(&[cmd, "--help"]);
        assert!(
            help.contains("hcc") && help.contains("astar --approx"),
            "{help}"
        );
    }
    let d = dir("i13_hint");
    let w = file(&d, "w.csv", &weights_csv(31, 1));
    for cmd in ["map", "marginals"] {
        fails(
            &[cmd, "--model", "hcc", "--weights", s(&w)],
            "astar --approx",
        );
    }
    fails(
        &["map", "--model", "dasgupta", "--weights", s(&w)],
        "at most 30",
    );
}
