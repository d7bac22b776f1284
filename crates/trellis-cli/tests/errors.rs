//! Every class of bad input: a clear message on stderr, exit code 2, nothing on stdout.

use crate::util::s;
use crate::util::*;

fn map(path: &std::path::Path) -> Vec<String> {
    ["map", "--model", "hcc", "--weights", s(path), "--json"]
        .iter()
        .map(|a| a.to_string())
        .collect()
}

fn fails_on(args: Vec<String>, needle: &str) {
    fails(&args.iter().map(String::as_str).collect::<Vec<_>>(), needle);
}

#[test]
fn non_square_matrix() {
    let d = dir("err_square");
    fails_on(map(&file(&d, "w.csv", "0,1,2\n1,0,3\n")), "square");
}

#[test]
fn rows_of_unequal_length() {
    let d = dir("err_ragged");
    fails_on(map(&file(&d, "w.csv", "0,1\n1\n")), "line 2");
}

#[test]
fn asymmetric_weights() {
    let d = dir("err_asym");
    fails_on(
        map(&file(&d, "w.csv", "0,1,2\n1,0,3\n2,3.5,0\n")),
        "not symmetric",
    );
}

#[test]
fn nan_and_infinite_weights() {
    let d = dir("err_nan");
    fails_on(map(&file(&d, "w.csv", "0,nan\nnan,0\n")), "non-finite");
    fails_on(map(&file(&d, "i.csv", "0,inf\ninf,0\n")), "non-finite");
}

#[test]
fn empty_file() {
    let d = dir("err_empty");
    fails_on(map(&file(&d, "w.csv", "")), "no data");
    fails_on(map(&file(&d, "blank.csv", "\n\n")), "no data");
}

#[test]
fn malformed_csv() {
    let d = dir("err_malformed");
    fails_on(map(&file(&d, "w.csv", "0,1\n1,zero\n")), "not a number");
    // Weights take no header row.
    fails_on(map(&file(&d, "h.csv", "a,b\n0,1\n1,0\n")), "no header");
}

#[test]
fn too_many_points() {
    let d = dir("err_large");
    fails_on(
        map(&file(&d, "w.csv", &weights_csv(31, 1))),
        "at most 30 points",
    );
}

#[test]
fn too_much_memory_says_how_much() {
    let d = dir("err_memory");
    let w = file(&d, "w.csv", &weights_csv(20, 1));
    let mut args = map(&w);
    args.extend(["--max-memory".into(), "0.01".into()]);
    // The MAP tree of hcc is one pass over 8 bytes per subset, the high
    // parts' terms and 8 MiB of working blocks (`trellis::pass_bytes`).
    fails_on(args, "needs 16.0 MiB");
}

#[test]
fn unreadable_file() {
    fails_on(
        map(std::path::Path::new("/nonexistent/w.csv")),
        "cannot read /nonexistent/w.csv",
    );
    let d = dir("err_dir");
    fails_on(map(&d), "cannot read");
}

#[test]
fn bad_npy() {
    let d = dir("err_npy");
    fails_on(map(&file(&d, "w.npy", "not numpy")), "not a .npy file");
}

#[test]
fn dasgupta_needs_non_negative_weights() {
    let d = dir("err_dasgupta");
    let w = file(&d, "w.csv", "0,-1\n-1,0\n");
    fails(
        &["map", "--model", "dasgupta", "--weights", s(&w)],
        "negative weight",
    );
}

#[test]
fn bad_beta() {
    let d = dir("err_beta");
    let w = file(&d, "w.csv", &weights_csv(4, 1));
    fails(
        &["logz", "--model", "hcc", "--weights", s(&w), "--beta", "-1"],
        "beta",
    );
    fails(
        &[
            "logz",
            "--model",
            "hcc",
            "--weights",
            s(&w),
            "--beta",
            "nan",
        ],
        "beta",
    );
}

#[test]
fn bad_subtree() {
    let d = dir("err_subtree");
    let w = file(&d, "w.csv", &weights_csv(4, 1));
    let base = [
        "marginals",
        "--model",
        "hcc",
        "--weights",
        s(&w),
        "--json",
        "--subtree",
    ];
    let with = |t: &str| {
        base.iter()
            .map(|a| a.to_string())
            .chain([t.to_string()])
            .collect::<Vec<_>>()
    };
    fails_on(with("[0,9]"), "out of range");
    fails_on(with("[0,1,2]"), "exactly 2 children");
    fails_on(with("[0,[1,0]]"), "more than once");
    fails_on(with("hello"), "expected a nested JSON list");
}

#[test]
fn bad_points() {
    let d = dir("err_points");
    let p = file(&d, "p.csv", "x,y\n0,0\n1,1\n");
    fails(&["map", "--model", "hcc", "--points", s(&p)], "all zeros");
    let p = file(&d, "q.csv", "x,y\n1,2\n3\n");
    fails(&["map", "--model", "hcc", "--points", s(&p)], "line 3");
}

#[test]
fn usage_errors_exit_2() {
    let d = dir("err_usage");
    let w = file(&d, "w.csv", &weights_csv(4, 1));
    // Neither or both inputs.
    fails(&["map", "--model", "hcc"], "required");
    fails(
        &[
            "map",
            "--model",
            "hcc",
            "--weights",
            s(&w),
            "--points",
            s(&w),
        ],
        "cannot be used",
    );
    // --json and --newick are exclusive; --similarity needs --points.
    fails(
        &[
            "map",
            "--model",
            "hcc",
            "--weights",
            s(&w),
            "--json",
            "--newick",
        ],
        "cannot be used",
    );
    fails(
        &[
            "map",
            "--model",
            "hcc",
            "--weights",
            s(&w),
            "--similarity",
            "rbf",
        ],
        "--points",
    );
    fails(
        &["map", "--model", "nope", "--weights", s(&w)],
        "invalid value",
    );
    fails(&["count", "0"], "at least 1");
    fails(
        &["sample", "--model", "hcc", "--weights", s(&w)],
        "--num-samples",
    );
}
