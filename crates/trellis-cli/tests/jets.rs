//! The jets contract of issue #3: `--jets` on every command (JSON Lines, one
//! object per jet with its "id", input order), `score`, the baselines,
//! `ginkgo generate`, and the bad-input classes (error naming the jet, exit 2,
//! nothing on stdout even when the bad jet is not the first).

use crate::util::s;
use crate::util::*;

/// A small generated jets file (8 jets of 4-7 leaves).
fn jets_file(name: &str) -> std::path::PathBuf {
    let d = dir(name);
    let text = stdout(&[
        "ginkgo",
        "generate",
        "--n-jets",
        "8",
        "--min-leaves",
        "4",
        "--max-leaves",
        "7",
        "--seed",
        "5",
    ]);
    file(&d, "jets.json", &text)
}

fn lines(out: &str) -> Vec<serde_json::Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn ids(path: &std::path::Path) -> Vec<String> {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["jets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn every_command_prints_one_line_per_jet_in_order() {
    let f = jets_file("jets_lines");
    let want = ids(&f);
    let cases: &[(&[&str], &[&str])] = &[
        (&["map"], &["id", "log_potential", "n", "tree"]),
        (&["logz"], &["id", "log_z", "n"]),
        (
            &["marginals", "--min-p", "0.5"],
            &["clusters", "id", "log_z", "n"],
        ),
        (
            &["sample", "-n", "3", "--seed", "1"],
            &["id", "n", "samples"],
        ),
        (&["score", "--truth"], &["id", "log_potential", "n", "tree"]),
        (&["greedy"], &["id", "log_potential", "n", "tree"]),
        (
            &["beam", "--width", "5"],
            &["id", "log_potential", "n", "tree"],
        ),
        (
            &["linkage", "--method", "average"],
            &["id", "log_potential", "n", "tree"],
        ),
    ];
    for (cmd, fields) in cases {
        let mut args: Vec<&str> = cmd.to_vec();
        args.extend(["--model", "ginkgo", "--jets", s(&f)]);
        let out = lines(&stdout(&args));
        assert_eq!(
            out.iter()
                .map(|l| l["id"].as_str().unwrap().to_string())
                .collect::<Vec<_>>(),
            want,
            "{cmd:?}"
        );
        for l in &out {
            assert_eq!(keys(l), *fields, "{cmd:?}");
        }
    }
}

#[test]
fn the_map_is_at_least_every_baseline_and_truth() {
    let f = jets_file("jets_order");
    let run = |cmd: &[&str]| {
        let mut args: Vec<&str> = cmd.to_vec();
        args.extend(["--model", "ginkgo", "--jets", s(&f)]);
        // A tree of zero likelihood has log_potential -inf, written as null (JSON has no infinity).
        lines(&stdout(&args))
            .iter()
            .map(|l| l["log_potential"].as_f64().unwrap_or(f64::NEG_INFINITY))
            .collect::<Vec<f64>>()
    };
    let map = run(&["map"]);
    let logz: Vec<f64> = {
        let mut args = vec!["logz", "--model", "ginkgo", "--jets", s(&f)];
        args.truncate(5);
        lines(&stdout(&args))
            .iter()
            .map(|l| l["log_z"].as_f64().unwrap())
            .collect()
    };
    for other in [
        run(&["score", "--truth"]),
        run(&["greedy"]),
        run(&["beam"]),
        run(&["linkage", "--method", "single"]),
    ] {
        for (k, (&m, &o)) in map.iter().zip(&other).enumerate() {
            assert!(o <= m + 1e-9 * m.abs(), "jet {k}: {o} > MAP {m}");
            assert!(m <= logz[k], "jet {k}: MAP {m} > log Z {}", logz[k]);
        }
    }
}

#[test]
fn score_truth_equals_the_generated_log_likelihood() {
    let f = jets_file("jets_score");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    let out = lines(&stdout(&[
        "score",
        "--model",
        "ginkgo",
        "--jets",
        s(&f),
        "--truth",
    ]));
    for (jet, line) in v["jets"].as_array().unwrap().iter().zip(&out) {
        let want = jet["truth_log_likelihood"].as_f64().unwrap();
        assert!((line["log_potential"].as_f64().unwrap() - want).abs() <= 1e-9 * want.abs());
        assert_eq!(line["tree"], jet["truth"]);
    }
    // A given tree, the same for every jet, must cover each jet's leaves.
    fails(
        &[
            "score",
            "--model",
            "ginkgo",
            "--jets",
            s(&f),
            "--tree",
            "[0,1]",
        ],
        "missing",
    );
}

#[test]
fn reference_jet_map_and_log_z() {
    let d = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/ginkgo"
    ));
    if !d.is_dir() {
        eprintln!("SKIPPED: {} not found", d.display());
        return;
    }
    let reference: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("reference_results.json")).unwrap())
            .unwrap();
    let f = d.join("ginkgo_small.json");
    let maps = lines(&stdout(&["map", "--model", "ginkgo", "--jets", s(&f)]));
    let logz = lines(&stdout(&["logz", "--model", "ginkgo", "--jets", s(&f)]));
    let mut checked = 0;
    for (m, z) in maps.iter().zip(&logz) {
        let Some(r) = reference.get(m["id"].as_str().unwrap()) else {
            continue;
        };
        let (want_map, want_z) = (
            r["trellis"]["map_log_likelihood"].as_f64().unwrap(),
            r["trellis"]["log_Z"].as_f64().unwrap(),
        );
        assert!((m["log_potential"].as_f64().unwrap() - want_map).abs() <= 1e-7 * want_map.abs());
        assert!((z["log_z"].as_f64().unwrap() - want_z).abs() <= 1e-7 * want_z.abs());
        checked += 1;
    }
    assert_eq!(checked, 78);
}

#[test]
fn samples_are_reproducible_per_jet() {
    let f = jets_file("jets_sample");
    let a = stdout(&[
        "sample",
        "--model",
        "ginkgo",
        "--jets",
        s(&f),
        "-n",
        "4",
        "--seed",
        "9",
    ]);
    assert_eq!(
        a,
        stdout(&[
            "sample",
            "--model",
            "ginkgo",
            "--jets",
            s(&f),
            "-n",
            "4",
            "--seed",
            "9"
        ])
    );
    assert_ne!(
        a,
        stdout(&[
            "sample",
            "--model",
            "ginkgo",
            "--jets",
            s(&f),
            "-n",
            "4",
            "--seed",
            "10"
        ])
    );
}

#[test]
fn generate_is_deterministic_and_respects_the_window() {
    let a = stdout(&[
        "ginkgo",
        "generate",
        "--n-jets",
        "20",
        "--min-leaves",
        "6",
        "--max-leaves",
        "8",
        "--seed",
        "2",
    ]);
    let b = stdout(&[
        "ginkgo",
        "generate",
        "--n-jets",
        "20",
        "--min-leaves",
        "6",
        "--max-leaves",
        "8",
        "--seed",
        "2",
    ]);
    assert_eq!(a, b);
    let v: serde_json::Value = serde_json::from_str(&a).unwrap();
    for j in v["jets"].as_array().unwrap() {
        let n = j["leaves"].as_array().unwrap().len();
        assert!((6..=8).contains(&n));
    }
    fails(
        &[
            "ginkgo",
            "generate",
            "--n-jets",
            "2",
            "--min-leaves",
            "9",
            "--max-leaves",
            "5",
        ],
        "leaves",
    );
}

/// A jets file with two good jets and one bad one in the middle.
fn with_bad_jet(name: &str, bad: &str) -> std::path::PathBuf {
    let good = |id: &str| {
        format!(
            r#"{{"id": "{id}", "leaves": [[30.3, 11.2, 12.9, 20.0], [22.5, 6.1, 10.0, 14.9], [40.6, 20.0, 17.8, 27.1]],
            "params": {{"lambda": 1.5, "lambda_root": 1.5, "delta_min": 4.0}}}}"#
        )
    };
    let text = format!(
        r#"{{"jets": [{}, {bad}, {}]}}"#,
        good("first"),
        good("last")
    );
    file(&dir(name), "jets.json", &text)
}

#[test]
fn bad_jets_name_the_jet_and_print_nothing() {
    let params = r#""params": {"lambda": 1.5, "lambda_root": 1.5, "delta_min": 4.0}"#;
    let cases = [
        (format!(r#"{{"id": "tachyon", "leaves": [[1, 5, 0, 0], [3, 1, 1, 1]], {params}}}"#), "jet tachyon: leaf 0 is unphysical"),
        (format!(r#"{{"id": "nan", "leaves": [[1, "nan", 0, 0], [3, 1, 1, 1]], {params}}}"#), "jet nan: leaf 0 has a non-numeric"),
        // Python's json writes NaN as a bare token.
        (format!(r#"{{"id": "pynan", "leaves": [[5, 1, 1, 1], [NaN, 1, 1, 1]], {params}}}"#), "jet pynan: leaf 1 has a non-numeric or non-finite"),
        (r#"{"id": "noparams", "leaves": [[5, 1, 1, 1], [3, 1, 1, 1]], "params": {"lambda": 1.5}}"#.to_string(), "jet noparams: missing parameter params.lambda_root"),
        (format!(r#"{{"id": "single", "leaves": [[5, 1, 1, 1]], {params}}}"#), "jet single: has 1 leaf"),
        (
            format!(r#"{{"id": "huge", "leaves": [{}], {params}}}"#, vec!["[5, 1, 1, 1]"; 31].join(",")),
            "jet huge has 31 leaves; the exact trellis supports at most 30: use --sparse",
        ),
    ];
    for (k, (bad, needle)) in cases.iter().enumerate() {
        let f = with_bad_jet(&format!("jets_bad_{k}"), bad);
        fails(&["map", "--model", "ginkgo", "--jets", s(&f)], needle);
    }
    let f = file(&dir("jets_malformed"), "jets.json", "{\"jets\": [");
    fails(
        &["logz", "--model", "ginkgo", "--jets", s(&f)],
        "not valid JSON",
    );
    fails(
        &["logz", "--model", "ginkgo", "--jets", "/nonexistent.json"],
        "cannot read",
    );
}

#[test]
fn jet_options_are_checked() {
    let f = jets_file("jets_options");
    fails(
        &["map", "--model", "hcc", "--jets", s(&f)],
        "needs a jet model",
    );
    fails(&["map", "--model", "ginkgo", "--weights", s(&f)], "--jets");
    fails(
        &["logz", "--model", "ginkgo", "--jets", s(&f), "--beta", "2"],
        "--beta applies to the cost models",
    );
    // Truth trees are required by --truth.
    let no_truth = with_bad_jet(
        "jets_no_truth",
        r#"{"id": "mid", "leaves": [[5, 1, 1, 1], [3, 1, 1, 1]], "params": {"lambda": 1.5, "lambda_root": 1.5, "delta_min": 4.0}}"#,
    );
    fails(
        &[
            "score",
            "--model",
            "ginkgo",
            "--jets",
            s(&no_truth),
            "--truth",
        ],
        "jet first: has no \"truth\" tree",
    );
}

#[test]
fn sparse_trellis_fields_and_bounds() {
    let f = jets_file("jets_sparse");
    let exact_map = lines(&stdout(&["map", "--model", "ginkgo", "--jets", s(&f)]));
    let exact_z = lines(&stdout(&["logz", "--model", "ginkgo", "--jets", s(&f)]));
    for kind in ["beam", "simulator"] {
        let map = lines(&stdout(&[
            "map",
            "--model",
            "ginkgo",
            "--jets",
            s(&f),
            "--sparse",
            kind,
            "--trees",
            "20",
        ]));
        let z = lines(&stdout(&[
            "logz",
            "--model",
            "ginkgo",
            "--jets",
            s(&f),
            "--sparse",
            kind,
            "--trees",
            "20",
        ]));
        let smp = lines(&stdout(&[
            "sample",
            "--model",
            "ginkgo",
            "--jets",
            s(&f),
            "--sparse",
            kind,
            "--trees",
            "20",
            "-n",
            "3",
        ]));
        for k in 0..map.len() {
            assert_eq!(
                keys(&map[k]),
                [
                    "id",
                    "log10_sparsity",
                    "log_potential",
                    "n",
                    "num_trees_realised",
                    "sparsity",
                    "tree"
                ]
            );
            assert_eq!(
                keys(&z[k]),
                [
                    "id",
                    "log10_sparsity",
                    "log_z",
                    "n",
                    "num_trees_realised",
                    "sparsity"
                ]
            );
            assert_eq!(
                keys(&smp[k]),
                [
                    "id",
                    "log10_sparsity",
                    "n",
                    "num_trees_realised",
                    "samples",
                    "sparsity"
                ]
            );
            let realised: f64 = map[k]["num_trees_realised"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap();
            assert!(realised >= 1.0);
            let sparsity = map[k]["sparsity"].as_f64().unwrap();
            assert!(sparsity > 0.0 && sparsity <= 1.0);
            // A sparse trellis sees a subset of the trees: never above the exact answers.
            let (m, em) = (
                map[k]["log_potential"].as_f64().unwrap(),
                exact_map[k]["log_potential"].as_f64().unwrap(),
            );
            assert!(
                m <= em + 1e-9 * em.abs(),
                "{kind}: sparse MAP {m} > exact {em}"
            );
            let (lz, ez) = (
                z[k]["log_z"].as_f64().unwrap(),
                exact_z[k]["log_z"].as_f64().unwrap(),
            );
            assert!(
                lz <= ez + 1e-9 * ez.abs(),
                "{kind}: sparse log Z {lz} > exact {ez}"
            );
            assert!(m <= lz);
            assert_eq!(smp[k]["samples"].as_array().unwrap().len(), 3);
        }
    }
}

#[test]
fn sparse_trellis_reaches_jets_too_large_for_the_full_one() {
    // 40 leaves: refused by the full trellis, fine on a sparse one.
    let text = stdout(&[
        "ginkgo",
        "generate",
        "--n-jets",
        "1",
        "--min-leaves",
        "40",
        "--max-leaves",
        "40",
        "--preset",
        "w",
        "--t-cut",
        "1.21",
        "--seed",
        "1",
    ]);
    let f = file(&dir("jets_large_sparse"), "jets.json", &text);
    fails(
        &["map", "--model", "ginkgo", "--jets", s(&f)],
        "use --sparse",
    );
    let beam = lines(&stdout(&[
        "beam",
        "--model",
        "ginkgo",
        "--jets",
        s(&f),
        "--width",
        "30",
    ]));
    let out = lines(&stdout(&[
        "map",
        "--model",
        "ginkgo",
        "--jets",
        s(&f),
        "--sparse",
        "beam",
        "--trees",
        "30",
    ]));
    assert_eq!(out[0]["n"], 40);
    // The beam trellis holds beam search's trees: its MAP is at least as good.
    let (m, b) = (
        out[0]["log_potential"].as_f64().unwrap(),
        beam[0]["log_potential"].as_f64().unwrap(),
    );
    assert!(m >= b - 1e-9 * b.abs(), "sparse {m} < beam {b}");
}

#[test]
fn sparse_options_are_checked() {
    let d = dir("sparse_weights");
    let w = file(&d, "w.csv", &weights_csv(9, 3));
    let out = json(&[
        "map",
        "--model",
        "hcc",
        "--weights",
        s(&w),
        "--sparse",
        "beam",
        "--json",
    ]);
    assert_eq!(
        keys(&out),
        [
            "cost",
            "log10_sparsity",
            "log_potential",
            "n",
            "num_trees_realised",
            "sparsity",
            "tree"
        ]
    );
    fails(
        &[
            "map",
            "--model",
            "hcc",
            "--weights",
            s(&w),
            "--sparse",
            "simulator",
        ],
        "needs jets",
    );
    fails(
        &["map", "--model", "hcc", "--weights", s(&w), "--trees", "5"],
        "--sparse",
    );
    fails(
        &[
            "map",
            "--model",
            "hcc",
            "--weights",
            s(&w),
            "--sparse",
            "beam",
            "--trees",
            "0",
        ],
        "at least 1",
    );
}
