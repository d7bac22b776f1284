//! `trellis interactive`: the JSON Lines contract of `simulate`, `sample` under
//! triplets, `bench`, and clear errors on bad input.

use std::path::{Path, PathBuf};

use crate::util::{dir, fails, file, keys, run, stdout};

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

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn lines(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

#[test]
fn simulate_json_lines_contract_for_every_strategy() {
    let d = dir("interactive_contract");
    let (points, target) = data(&d);
    for strategy in [
        "vanilla",
        "simple",
        "random",
        "active",
        "interleaved",
        "smart",
    ] {
        let out = stdout(&[
            "interactive",
            "simulate",
            "--points",
            p(&points),
            "--target",
            p(&target),
            "--strategy",
            strategy,
            "--queries",
            "5",
            "--iters-per-query",
            "20",
            "--subset-size",
            "5",
            "--seed",
            "3",
            "--json",
        ]);
        let v = lines(&out);
        assert_eq!(v.len(), 6, "{strategy}: {out}");
        let mut last_m = 0;
        for (k, line) in v.iter().enumerate() {
            let mut want = vec!["constraints", "log_likelihood", "query", "triplet_distance"];
            if k == 5 {
                want.extend(["tree", "triplets"]);
                want.sort();
            }
            assert_eq!(keys(line), want, "{strategy} line {k}");
            assert_eq!(line["query"], k);
            let td = line["triplet_distance"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&td));
            assert!(line["log_likelihood"].as_f64().unwrap().is_finite());
            let m = line["constraints"].as_u64().unwrap();
            assert!(m >= last_m && m <= k as u64);
            last_m = m;
        }
        let last = &v[5];
        if strategy == "vanilla" {
            assert_eq!(last_m, 0);
        }
        let triplets = last["triplets"].as_array().unwrap();
        assert_eq!(triplets.len() as u64, last_m);
        // The final tree holds every point once and satisfies every triplet.
        let h = trellis::ddt::Hierarchy::parse_newick(last["tree"].as_str().unwrap()).unwrap();
        let names: Vec<String> = (0..12).map(|i| format!("p{i}")).collect();
        let lca = h.lca_depths(&names).unwrap();
        for t in triplets {
            let idx: Vec<usize> = t
                .as_array()
                .unwrap()
                .iter()
                .map(|s| names.iter().position(|n| n == s.as_str().unwrap()).unwrap())
                .collect();
            let tr = trellis::ddt::Triplet::new(idx[0], idx[1], idx[2]).unwrap();
            assert!(lca.satisfies(&tr), "{strategy}: {t} violated");
        }
    }
}

#[test]
fn simulate_is_seeded_and_smart_queries_reach_the_target() {
    let d = dir("interactive_seeded");
    let (points, target) = data(&d);
    let args = |seed: &'static str| {
        vec![
            "interactive",
            "simulate",
            "--points",
            p(&points),
            "--target",
            p(&target),
            "--strategy",
            "smart",
            "--queries",
            "30",
            "--iters-per-query",
            "20",
            "--seed",
            seed,
            "--json",
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>()
    };
    let run_seed = |seed| {
        let a = args(seed);
        stdout(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let one = run_seed("1");
    assert_eq!(one, run_seed("1"));
    assert_ne!(one, run_seed("2"));
    let last = lines(&one).pop().unwrap();
    assert_eq!(
        last["triplet_distance"], 0.0,
        "smart queries fix the whole tree: {last}"
    );
    // The readable form ends with the Newick tree.
    let text = stdout(&[
        "interactive",
        "simulate",
        "--points",
        p(&points),
        "--target",
        p(&target),
        "--strategy",
        "random",
        "--queries",
        "3",
    ]);
    assert!(
        text.contains("triplet_distance") && text.trim_end().ends_with(';'),
        "{text}"
    );
}

#[test]
fn sample_prints_newick_trees_that_keep_the_triplets() {
    let d = dir("interactive_sample");
    let (points, _) = data(&d);
    // Against the data: p0 with p7, apart from p1.
    let trips = file(&d, "triplets.txt", "# ({a,b},c)\np0 p7 p1\np2,p8,p3\n");
    let out = stdout(&[
        "interactive",
        "sample",
        "--points",
        p(&points),
        "--triplets",
        p(&trips),
        "-n",
        "4",
        "--seed",
        "5",
        "--burn-in",
        "500",
        "--thin",
        "50",
    ]);
    let trees: Vec<&str> = out.lines().collect();
    assert_eq!(trees.len(), 4);
    let names: Vec<String> = (0..12).map(|i| format!("p{i}")).collect();
    for t in trees {
        let lca = trellis::ddt::Hierarchy::parse_newick(t)
            .unwrap()
            .lca_depths(&names)
            .unwrap();
        assert!(
            lca.satisfies(&trellis::ddt::Triplet::new(0, 7, 1).unwrap()),
            "{t}"
        );
        assert!(
            lca.satisfies(&trellis::ddt::Triplet::new(2, 8, 3).unwrap()),
            "{t}"
        );
    }
    let again = stdout(&[
        "interactive",
        "sample",
        "--points",
        p(&points),
        "--triplets",
        p(&trips),
        "-n",
        "4",
        "--seed",
        "5",
        "--burn-in",
        "500",
        "--thin",
        "50",
    ]);
    assert_eq!(out, again);
}

#[test]
fn bad_inputs_fail_with_one_clear_sentence() {
    let d = dir("interactive_errors");
    let (points, target) = data(&d);
    let sim = |pts: &Path, tgt: &Path, extra: &[&str], needle: &str| {
        let mut args = vec![
            "interactive",
            "simulate",
            "--points",
            p(pts),
            "--target",
            p(tgt),
            "--strategy",
            "random",
            "--queries",
            "2",
            "--json",
        ];
        args.extend_from_slice(extra);
        fails(&args, needle);
    };
    let missing = file(
        &d,
        "missing.nwk",
        "((p0,p1,p2,p3,p4,p5),(p6,p7,p8,p9,p10));",
    );
    sim(
        &points,
        &missing,
        &[],
        "\"p11\" is not a leaf of the target",
    );
    let extra = file(
        &d,
        "extra.nwk",
        "((p0,p1,p2,p3,p4,p5),(p6,p7,p8,p9,p10,p11,zebra));",
    );
    sim(&points, &extra, &[], "\"zebra\"");
    let bad_nwk = file(&d, "bad.nwk", "((p0,p1,p2,p3,p4,p5),(p6,p7,p8,p9,p10,p11);");
    sim(&points, &bad_nwk, &[], "Newick");
    let text = file(&d, "text.csv", "name,f1\na,1\nb,x\nc,2\n");
    sim(&text, &target, &[], "\"x\" is not a number");
    let nan = file(&d, "nan.csv", "name,f1\na,1\nb,NaN\nc,2\n");
    sim(&nan, &target, &[], "not finite");
    let ragged = file(&d, "ragged.csv", "name,f1,f2\na,1,2\nb,3\nc,2,2\n");
    sim(&ragged, &target, &[], "2 fields but the header has 3");
    sim(&points, &target, &["--sigma", "var/0"], "--sigma");
    sim(&points, &target, &["--sigma=-1"], "--sigma");
    sim(&points, &target, &["--c", "0"], "divergence constant");
    fails(
        &[
            "interactive",
            "simulate",
            "--points",
            "/nonexistent.csv",
            "--target",
            p(&target),
            "--strategy",
            "smart",
            "--queries",
            "1",
        ],
        "cannot read /nonexistent.csv",
    );
    // Unrealisable and malformed triplet files.
    let conflict = file(&d, "conflict.txt", "p0 p1 p2\np0 p2 p1\n");
    fails(
        &[
            "interactive",
            "sample",
            "--points",
            p(&points),
            "--triplets",
            p(&conflict),
            "-n",
            "1",
        ],
        "cannot all hold in one tree: ({p0, p1}, p2)",
    );
    let unknown = file(&d, "unknown.txt", "p0 p1 nobody\n");
    fails(
        &[
            "interactive",
            "sample",
            "--points",
            p(&points),
            "--triplets",
            p(&unknown),
            "-n",
            "1",
        ],
        "\"nobody\" is not a point name",
    );
    // One line on stderr.
    let out = run(&[
        "interactive",
        "simulate",
        "--points",
        p(&nan),
        "--target",
        p(&target),
        "--strategy",
        "smart",
        "--queries",
        "1",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim().lines().count(),
        1
    );
}
