//! The CLI contract of issue #5: `trellis astar`, exact (equal to the DP's MAP,
//! "exact": true) and approximate (between the DP optimum and beam search,
//! reproducible per seed), on weights and on jets, and its refusals (exit 2,
//! nothing on stdout, an "error:" line on stderr).

use crate::util::*;

use crate::util::s;
use std::path::{Path, PathBuf};

/// Every field of the JSON output, sorted.
const FIELDS: [&str; 15] = [
    "bytes_per_split",
    "bytes_per_vertex",
    "cost",
    "exact",
    "explored",
    "heuristic",
    "iterations",
    "log_potential",
    "n",
    "peak_bytes",
    "rounds",
    "sets",
    "splits",
    "tree",
    "vertices",
];

/// `a` equals `b` up to `tol` relative (absolute below magnitude 1).
fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1.0)
}

fn f(v: &serde_json::Value, field: &str) -> f64 {
    v[field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} is not a number in {v}"))
}

/// Runs `cmd --model model --weights w extra... --json` and expects exactly one
/// JSON object on one line.
fn one(cmd: &str, model: &str, w: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![cmd, "--model", model, "--weights", s(w)];
    args.extend(extra);
    args.push("--json");
    let out = stdout(&args);
    assert_eq!(out.lines().count(), 1, "{args:?}: not one line: {out}");
    assert!(out.ends_with('\n'));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v.is_object(), "{v}");
    v
}

fn astar(model: &str, w: &Path, extra: &[&str]) -> serde_json::Value {
    let v = one("astar", model, w, extra);
    assert_eq!(keys(&v), FIELDS, "{v}");
    let n = v["n"].as_u64().unwrap();
    assert_eq!(leaves(&v["tree"]), (0..n).collect::<Vec<u64>>(), "{v}");
    v
}

/// The cost of `tree` according to `trellis score`.
fn score(model: &str, w: &Path, tree: &serde_json::Value) -> f64 {
    let t = tree.to_string();
    f(&one("score", model, w, &["--tree", &t]), "cost")
}

/// A matrix of absolute values: Dasgupta's cost needs non-negative weights.
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
        + "\n"
}

/// (N, seed) of the random instances: N from 5 to 10.
const CASES: [(usize, u64); 6] = [(5, 11), (6, 12), (7, 13), (8, 14), (9, 15), (10, 16)];

#[test]
fn exact_hcc_equals_the_dp_with_a_valid_tree() {
    let d = dir("astar_hcc_dp");
    for (n, seed) in CASES {
        let w = file(&d, &format!("w{n}.csv"), &weights_csv(n, seed));
        let a = astar("hcc", &w, &[]);
        assert_eq!(a["n"], n);
        assert_eq!(a["exact"], true, "{a}");
        assert_eq!(a["heuristic"], "hcc");
        assert_eq!(a["rounds"], 1);
        let cost = f(&a, "cost");
        assert_eq!(f(&a, "log_potential"), -cost);
        let dp = f(&one("map", "hcc", &w, &[]), "cost");
        assert!(close(cost, dp, 1e-9), "N={n}: A* cost {cost} != DP {dp}");
        // The reported cost is the cost of the reported tree.
        let scored = score("hcc", &w, &a["tree"]);
        assert!(
            close(cost, scored, 1e-9),
            "N={n}: {cost} vs scored {scored}"
        );
        // Accounting: some vertices explored, never more splits than the trellis has.
        let full = (3u64.pow(n as u32) + 1 - (2 << n)) / 2;
        assert!(a["explored"].as_u64().unwrap() >= 1);
        assert!(a["splits"].as_u64().unwrap() <= full, "{a}");
    }
}

#[test]
fn exact_dasgupta_equals_the_dp() {
    let d = dir("astar_dasgupta_dp");
    for (n, seed) in CASES {
        let w = file(&d, &format!("w{n}.csv"), &abs_csv(n, seed));
        let a = astar("dasgupta", &w, &[]);
        assert_eq!(a["exact"], true, "{a}");
        assert_eq!(a["heuristic"], "dasgupta");
        let cost = f(&a, "cost");
        let dp = f(&one("map", "dasgupta", &w, &[]), "cost");
        assert!(close(cost, dp, 1e-9), "N={n}: A* cost {cost} != DP {dp}");
        let scored = score("dasgupta", &w, &a["tree"]);
        assert!(
            close(cost, scored, 1e-9),
            "N={n}: {cost} vs scored {scored}"
        );
    }
}

#[test]
fn log_potential_is_minus_beta_times_cost() {
    let d = dir("astar_beta");
    let w = file(&d, "w.csv", &weights_csv(8, 21));
    let base = astar("hcc", &w, &[]);
    for beta in ["0", "0.5", "2.5"] {
        let b: f64 = beta.parse().unwrap();
        let a = astar("hcc", &w, &["--beta", beta]);
        assert_eq!(a["exact"], true);
        // The optimum does not depend on beta.
        assert!(close(f(&a, "cost"), f(&base, "cost"), 1e-12), "{a}");
        assert!(
            close(f(&a, "log_potential"), -b * f(&a, "cost"), 1e-12),
            "beta {beta}: {a}"
        );
    }
}

#[test]
fn newick_and_readable_output() {
    let d = dir("astar_text");
    let w = file(&d, "w.csv", &weights_csv(7, 22));
    let j = astar("hcc", &w, &[]);
    let nwk = stdout(&["astar", "--model", "hcc", "--weights", s(&w), "--newick"]);
    assert_eq!(nwk.lines().count(), 1, "{nwk}");
    assert!(nwk.trim_end().ends_with(';'), "{nwk}");
    let t = trellis::Tree::parse(nwk.trim()).unwrap();
    assert_eq!(t.to_string(), j["tree"].to_string());

    let text = stdout(&["astar", "--model", "hcc", "--weights", s(&w)]);
    assert!(text.contains("Proven"), "{text}");
    assert!(text.contains("Exact A*"), "{text}");
    let approx = stdout(&["astar", "--model", "hcc", "--weights", s(&w), "--approx"]);
    assert!(approx.contains("Approximate A*"), "{approx}");
    assert!(!approx.contains("Proven"), "{approx}");
    // --json and --newick are exclusive.
    fails(
        &[
            "astar",
            "--model",
            "hcc",
            "--weights",
            s(&w),
            "--json",
            "--newick",
        ],
        "cannot be used",
    );
}

/// A small generated jets file (4 jets of 4-8 leaves).
fn jets_file(name: &str) -> PathBuf {
    let text = stdout(&[
        "ginkgo",
        "generate",
        "--n-jets",
        "4",
        "--min-leaves",
        "4",
        "--max-leaves",
        "8",
        "--seed",
        "3",
    ]);
    file(&dir(name), "jets.json", &text)
}

/// Up to four jets of 6-9 leaves of the shared ginkgo_small dataset, if present.
fn shared_jets_file(name: &str) -> Option<PathBuf> {
    let p = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/ginkgo/ginkgo_small.json"
    ));
    if !p.is_file() {
        eprintln!("SKIPPED: {} not found", p.display());
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    let some: Vec<_> = v["jets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| (6..=9).contains(&j["leaves"].as_array().unwrap().len()))
        .take(4)
        .cloned()
        .collect();
    assert!(!some.is_empty());
    let text = serde_json::json!({ "jets": some }).to_string();
    Some(file(&dir(name), "jets.json", &text))
}

fn ids(path: &Path) -> Vec<String> {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["jets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_str().unwrap().to_string())
        .collect()
}

/// Runs a command on jets and returns its JSON Lines, checking one line per jet,
/// in input order, each starting with "id".
fn jet_lines(jets: &Path, args: &[&str]) -> Vec<serde_json::Value> {
    let mut all = args.to_vec();
    all.extend(["--jets", s(jets)]);
    let out = stdout(&all);
    let want = ids(jets);
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| {
            assert!(
                l.starts_with("{\"id\":"),
                "{all:?}: \"id\" is not first: {l}"
            );
            serde_json::from_str(l).unwrap()
        })
        .collect();
    let got: Vec<String> = lines
        .iter()
        .map(|l| l["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(got, want, "{all:?}");
    lines
}

fn check_jets_h0_h1(jets: &Path) {
    for model in ["ginkgo", "ginkgo-legacy"] {
        let map = jet_lines(jets, &["map", "--model", model, "--json"]);
        let h0 = jet_lines(jets, &["astar", "--model", model, "--json"]);
        let explicit = jet_lines(
            jets,
            &["astar", "--model", model, "--heuristic", "h0", "--json"],
        );
        assert_eq!(h0, explicit, "h0 is the default");
        let h1 = jet_lines(
            jets,
            &["astar", "--model", model, "--heuristic", "h1", "--json"],
        );
        for ((m, a), b) in map.iter().zip(&h0).zip(&h1) {
            let mut want = FIELDS.iter().map(|k| k.to_string()).collect::<Vec<_>>();
            want.push("id".into());
            want.sort();
            assert_eq!(keys(a), want, "{a}");
            assert_eq!(keys(b), want, "{b}");
            assert_eq!(leaves(&a["tree"]), leaves(&m["tree"]));
            assert_eq!(leaves(&b["tree"]), leaves(&m["tree"]));
            assert_eq!(a["n"], m["n"]);
            assert_eq!(a["exact"], true, "{model}: {a}");
            assert_eq!(a["heuristic"], "h0");
            let (lp, want_lp) = (f(a, "log_potential"), f(m, "log_potential"));
            assert!(
                (lp - want_lp).abs() <= 1e-7 * want_lp.abs(),
                "{model} {}: A* {lp} != MAP {want_lp}",
                a["id"]
            );
            assert!(close(f(a, "cost"), -lp, 1e-12), "{a}");
            // h1 is not proven admissible: never claimed exact, never above the MAP.
            assert_eq!(b["exact"], false, "{model}: {b}");
            assert_eq!(b["heuristic"], "h1");
            let lp1 = f(b, "log_potential");
            assert!(
                lp1 <= want_lp + 1e-7 * want_lp.abs(),
                "{model}: h1 {lp1} > MAP"
            );
        }
    }
}

#[test]
fn jets_h0_is_exact_and_h1_is_not() {
    check_jets_h0_h1(&jets_file("astar_jets"));
}

#[test]
fn shared_jets_h0_is_exact_and_h1_is_not() {
    if let Some(f) = shared_jets_file("astar_shared_jets") {
        check_jets_h0_h1(&f);
    }
}

#[test]
fn jets_approx_between_beam_and_map() {
    let jets = jets_file("astar_jets_approx");
    let map = jet_lines(&jets, &["map", "--model", "ginkgo"]);
    let beam = jet_lines(&jets, &["beam", "--model", "ginkgo", "--width", "2"]);
    let args = [
        "astar",
        "--model",
        "ginkgo",
        "--approx",
        "--beam-width",
        "2",
        "--seed",
        "4",
        "--json",
    ];
    let approx = jet_lines(&jets, &args);
    for ((m, b), a) in map.iter().zip(&beam).zip(&approx) {
        assert_eq!(a["exact"], false, "{a}");
        let (lp, lm, lb) = (
            f(a, "log_potential"),
            f(m, "log_potential"),
            f(b, "log_potential"),
        );
        assert!(lp <= lm + 1e-7 * lm.abs(), "approx {lp} > MAP {lm}");
        assert!(lp >= lb - 1e-9 * lb.abs(), "approx {lp} < beam {lb}");
    }
    let mut again = args.to_vec();
    again.extend(["--jets", s(&jets)]);
    assert_eq!(stdout(&again), stdout(&again), "same seed, same output");
}

#[test]
fn approx_lies_between_the_optimum_and_beam_search() {
    let d = dir("astar_approx_bounds");
    for (n, seed) in CASES {
        let w = file(&d, &format!("w{n}.csv"), &weights_csv(n, seed + 100));
        let dp = f(&one("map", "hcc", &w, &[]), "cost");
        for width in ["1", "3"] {
            let beam = f(&one("beam", "hcc", &w, &["--width", width]), "cost");
            let a = astar("hcc", &w, &["--approx", "--beam-width", width]);
            assert_eq!(a["exact"], false, "{a}");
            let cost = f(&a, "cost");
            assert!(
                cost <= beam + 1e-9 * beam.abs().max(1.0),
                "N={n} W={width}: approx {cost} > beam {beam}"
            );
            assert!(
                cost >= dp - 1e-9 * dp.abs().max(1.0),
                "N={n}: approx {cost} < optimum {dp}"
            );
            assert!(close(cost, score("hcc", &w, &a["tree"]), 1e-9), "{a}");
            assert!(close(f(&a, "log_potential"), -cost, 1e-12));
        }
    }
    // Dasgupta too.
    let w = file(&d, "abs.csv", &abs_csv(9, 31));
    let dp = f(&one("map", "dasgupta", &w, &[]), "cost");
    let beam = f(&one("beam", "dasgupta", &w, &["--width", "2"]), "cost");
    let a = astar("dasgupta", &w, &["--approx", "--beam-width", "2"]);
    assert_eq!(a["exact"], false);
    let cost = f(&a, "cost");
    assert!(cost <= beam + 1e-9 * beam.max(1.0) && cost >= dp - 1e-9 * dp.max(1.0));
}

#[test]
fn approx_is_reproducible_per_seed() {
    let d = dir("astar_seed");
    let w = file(&d, "w.csv", &weights_csv(12, 41));
    for extra in [&[][..], &["--importance"][..]] {
        let mut args = vec![
            "astar",
            "--model",
            "hcc",
            "--weights",
            s(&w),
            "--approx",
            "--seed",
            "7",
            "--json",
        ];
        args.extend(extra);
        let a = stdout(&args);
        assert_eq!(a, stdout(&args), "{extra:?}: same seed, same bytes");
        let text: Vec<&str> = args.iter().copied().filter(|&x| x != "--json").collect();
        assert_eq!(stdout(&text), stdout(&text));
    }
}

#[test]
fn approx_options_are_accepted_and_honoured() {
    let d = dir("astar_options");
    let w = file(&d, "w.csv", &weights_csv(10, 51));
    let dp = f(&one("map", "hcc", &w, &[]), "cost");
    let beam = f(&one("beam", "hcc", &w, &["--width", "4"]), "cost");
    let cases: &[&[&str]] = &[
        &["--importance"],
        &["--rounds", "2"],
        &["--top-k", "2"],
        &["--top-k", "1", "--samples", "3", "--exact-size", "3"],
        &["--max-explored", "10"],
        &["--max-explored", "0"],
        &["--weight", "2"],
        &["--weight", "0.5"],
        &["--auto-weight"],
        &["--time-limit", "0"],
        &["--time-limit", "30"],
        &["--max-memory", "0.000001"],
    ];
    for extra in cases {
        let mut args = vec!["--approx", "--beam-width", "4", "--seed", "2"];
        args.extend(*extra);
        let a = astar("hcc", &w, &args);
        assert_eq!(a["exact"], false, "{extra:?}: {a}");
        let cost = f(&a, "cost");
        assert!(
            cost <= beam + 1e-9 * beam.abs().max(1.0) && cost >= dp - 1e-9 * dp.abs().max(1.0),
            "{extra:?}: cost {cost} outside [{dp}, {beam}]"
        );
        match extra {
            ["--rounds", r] => assert!(a["rounds"].as_u64().unwrap() <= r.parse().unwrap()),
            ["--max-explored", "10"] => assert!(a["explored"].as_u64().unwrap() <= 10, "{a}"),
            _ => {}
        }
    }
}

#[test]
fn max_explored_is_a_hard_cap() {
    let d = dir("astar_max_explored");
    let w = file(&d, "w.csv", &weights_csv(10, 51));
    for e in 1..=20u64 {
        let max = e.to_string();
        let a = astar(
            "hcc",
            &w,
            &[
                "--approx",
                "--beam-width",
                "4",
                "--seed",
                "2",
                "--max-explored",
                &max,
            ],
        );
        let explored = a["explored"].as_u64().unwrap();
        assert!(explored <= e, "--max-explored {e}: explored {explored}");
    }
}

/// Expects exit code 2, an empty stdout and a stderr starting with "error:" that
/// contains `needle`; with `one_line`, stderr is that one line.
fn refused(args: &[&str], needle: &str, one_line: bool) {
    fails(args, needle);
    let stderr = String::from_utf8(run(args).stderr).unwrap();
    assert!(stderr.starts_with("error:"), "{args:?}: {stderr:?}");
    if one_line {
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr:?}");
    }
}

#[test]
fn bad_options_are_refused() {
    let d = dir("astar_bad_options");
    let w = file(&d, "w.csv", &weights_csv(6, 61));
    let base = ["astar", "--model", "hcc", "--weights", s(&w)];
    let with = |extra: &[&'static str]| {
        let mut a = base.to_vec();
        a.extend(extra);
        a
    };
    let own: &[(&[&str], &str)] = &[
        (&["--heuristic", "h1"], "--heuristic"),
        (&["--heuristic", "h0"], "--heuristic"),
        (&["--approx", "--top-k", "0"], "--top-k must be at least 1"),
        (
            &["--approx", "--beam-width", "0"],
            "--beam-width must be at least 1",
        ),
        (&["--approx", "--weight=-1"], "--weight must be a positive"),
        (
            &["--approx", "--weight", "0"],
            "--weight must be a positive",
        ),
        (
            &["--approx", "--weight", "nan"],
            "--weight must be a positive",
        ),
        (
            &["--approx", "--rounds", "0"],
            "--rounds must be at least 1",
        ),
        (&["--time-limit=-3"], "--time-limit must be"),
        (&["--approx", "--time-limit=-3"], "--time-limit must be"),
        (&["--time-limit", "nan"], "--time-limit must be"),
    ];
    for (extra, needle) in own {
        refused(&with(extra), needle, true);
    }
    // Usage errors found by the argument parser: exit 2, "error:" first.
    let usage: &[(&[&str], &str)] = &[
        (&["--top-k", "3"], "--approx"),
        (&["--beam-width", "3"], "--approx"),
        (&["--seed", "3"], "--approx"),
        (&["--importance"], "--approx"),
        (
            &["--approx", "--weight", "2", "--auto-weight"],
            "cannot be used",
        ),
        (&["--approx", "--weight", "-1"], "-1"),
        (&["--time-limit", "-3"], "-3"),
        (&["--heuristic", "h2"], "invalid value"),
    ];
    for (extra, needle) in usage {
        refused(&with(extra), needle, false);
    }
}

#[test]
fn negative_values_after_a_space_reach_the_command_check() {
    let d = dir("astar_negative_space");
    let w = file(&d, "w.csv", &weights_csv(6, 62));
    let base = ["astar", "--model", "hcc", "--weights", s(&w)];
    let mut a = base.to_vec();
    a.extend(["--approx", "--weight", "-1"]);
    refused(&a, "--weight must be a positive", true);
    let mut a = base.to_vec();
    a.extend(["--time-limit", "-3"]);
    refused(&a, "--time-limit must be", true);
}

#[test]
fn bad_weights_are_refused() {
    let d = dir("astar_bad_weights");
    let neg = file(&d, "neg.csv", "0,-1,2\n-1,0,3\n2,3,0\n");
    refused(
        &["astar", "--model", "dasgupta", "--weights", s(&neg)],
        "negative weight",
        true,
    );
    refused(
        &[
            "astar",
            "--model",
            "dasgupta",
            "--weights",
            s(&neg),
            "--approx",
        ],
        "negative weight",
        true,
    );
    let nan = file(&d, "nan.csv", "0,nan,1\nnan,0,1\n1,1,0\n");
    refused(
        &["astar", "--model", "hcc", "--weights", s(&nan)],
        "non-finite",
        true,
    );
    let asym = file(&d, "asym.csv", "0,1,2\n1,0,3\n2,3.5,0\n");
    refused(
        &["astar", "--model", "hcc", "--weights", s(&asym), "--json"],
        "not symmetric",
        true,
    );
}

#[test]
fn exact_search_beyond_its_memory_budget_points_to_approx() {
    let d = dir("astar_memory");
    let w = file(&d, "w.csv", &weights_csv(14, 71));
    refused(
        &[
            "astar",
            "--model",
            "hcc",
            "--weights",
            s(&w),
            "--max-memory",
            "0.000001",
        ],
        "memory budget",
        true,
    );
    let out = run(&[
        "astar",
        "--model",
        "hcc",
        "--weights",
        s(&w),
        "--max-memory",
        "0.000001",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--approx"));
    // The exact search fails on a zero time limit too, pointing to --approx.
    refused(
        &[
            "astar",
            "--model",
            "hcc",
            "--weights",
            s(&w),
            "--time-limit",
            "0",
        ],
        "--approx",
        true,
    );
    // With the default budget N = 14 is solved exactly.
    let a = astar("hcc", &w, &[]);
    assert_eq!(a["exact"], true);
    assert!(close(
        f(&a, "cost"),
        f(&one("map", "hcc", &w, &[]), "cost"),
        1e-9
    ));
}

#[test]
fn more_than_128_points_is_refused_by_exact_a_star_only() {
    let d = dir("astar_too_many");
    let w = file(&d, "w.csv", &weights_csv(130, 81));
    refused(
        &["astar", "--model", "hcc", "--weights", s(&w)],
        "at most 128",
        true,
    );
    // Approximate A* takes any number of points (issue 15), on wide sets.
    let a = astar(
        "hcc",
        &w,
        &["--approx", "--max-explored", "3", "--samples", "3"],
    );
    assert_eq!(
        (a["n"].as_u64(), a["sets"].as_str()),
        (Some(130), Some("wide"))
    );
    assert!(f(&a, "explored") <= 3.0 && f(&a, "peak_bytes") > 0.0, "{a}");
}

#[test]
fn jets_need_a_jet_model_and_weights_a_cost_model() {
    let jets = jets_file("astar_jets_models");
    let d = dir("astar_models");
    let w = file(&d, "w.csv", &weights_csv(5, 91));
    refused(
        &["astar", "--model", "hcc", "--jets", s(&jets)],
        "needs a jet model",
        true,
    );
    refused(
        &[
            "astar",
            "--model",
            "dasgupta",
            "--jets",
            s(&jets),
            "--approx",
        ],
        "needs a jet model",
        true,
    );
    refused(
        &["astar", "--model", "ginkgo", "--weights", s(&w)],
        "--jets",
        true,
    );
    refused(
        &[
            "astar",
            "--model",
            "ginkgo",
            "--jets",
            s(&jets),
            "--beta",
            "2",
        ],
        "--beta",
        true,
    );
}
