//! Issue 11, readers: every class through the command line (exit code 2,
//! nothing on stdout, the message), and the inputs that are now read right.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

use crate::util::s;
use crate::util::*;

/// `../shared/data/<sub>`, or `None` with a message when it is absent.
fn shared(sub: &str) -> Option<PathBuf> {
    let d = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data")).join(sub);
    if d.is_dir() {
        Some(d)
    } else {
        eprintln!(
            "SKIPPED: {} not found (the shared reference data is absent)",
            d.display()
        );
        None
    }
}

/// Runs `trellis args...` with `input` on standard input.
fn run_stdin(args: &[&str], input: &[u8]) -> std::process::Output {
    Command::cargo_bin("trellis")
        .unwrap()
        .args(args)
        .write_stdin(input.to_vec())
        .output()
        .unwrap()
}

fn logz_points(p: &Path) -> Vec<String> {
    ["logz", "--model", "hcc", "--points", s(p), "--json"]
        .iter()
        .map(|a| a.to_string())
        .collect()
}

fn json_of(args: &[String]) -> serde_json::Value {
    json(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

fn fails_on(args: &[String], needle: &str) {
    fails(&args.iter().map(String::as_str).collect::<Vec<_>>(), needle);
}

#[test]
fn header_rule_first_row_with_a_number_is_data() {
    let d = dir("i11_header");
    // Taken as a header before: four points read as three.
    let p = file(&d, "p.csv", "1e,2\n3,4\n5,6\n7,8\n");
    fails_on(&logz_points(&p), "line 1, column 1: \"1e\" is not a number");
    // A header's field count is checked against the rows.
    let p = file(&d, "h.csv", "x,y,z\n1,2\n3,4\n5,6\n");
    fails_on(&logz_points(&p), "line 2: 2 fields but the header has 3");
    // A header without numbers is still a header.
    let p = file(&d, "ok.csv", "x,y\n1,2\n3,4\n5,7\n");
    assert_eq!(json_of(&logz_points(&p))["n"], 3);
}

#[test]
fn names_column_of_iris_is_not_a_feature() {
    let Some(ibhc) = shared("ibhc") else {
        return;
    };
    let iris = ibhc.join("iris.csv");
    // The same points without the id column give the same tree.
    let text = std::fs::read_to_string(&iris).unwrap();
    let features: String = text
        .lines()
        .map(|l| l.split_once(',').unwrap().1.to_string() + "\n")
        .collect();
    let d = dir("i11_iris");
    let bare = file(&d, "features.csv", &features);
    let greedy = |p: &Path, extra: &[&str]| {
        let mut args = vec!["greedy", "--model", "hcc", "--points", s(p), "--json"];
        args.extend(extra);
        json(&args)
    };
    let named = greedy(&iris, &[]);
    assert_eq!(named["n"], 150);
    assert_eq!(named["names"][149], "149");
    let bare = greedy(&bare, &[]);
    assert_eq!(
        (&named["tree"], &named["cost"]),
        (&bare["tree"], &bare["cost"])
    );
    // --names-column none makes the id a feature again: another answer.
    assert_ne!(
        named["cost"],
        greedy(&iris, &["--names-column", "none"])["cost"]
    );
    assert_eq!(named, greedy(&iris, &["--names-column", "0"]));
}

#[test]
fn names_errors() {
    let d = dir("i11_names");
    let p = file(&d, "other.csv", "name,x,y\na,1,2\nb,3,?\nc,5,6\n");
    fails_on(&logz_points(&p), "line 3, column 3: \"?\" is not a number");
    let p = file(&d, "empty.csv", "name,x\na,1\n\"\",2\nc,3\n");
    fails_on(&logz_points(&p), "line 3, column 1: the name is empty");
    let p = file(&d, "dup.csv", "name,x\na,1\nb,2\na,3\n");
    fails_on(
        &logz_points(&p),
        "line 4: the name \"a\" was already used on line 2",
    );
    // The override: a names column that is not there, or none at all.
    let p = file(&d, "pets.csv", "cat,1,2\ndog,3,4\nemu,5,6\n");
    assert_eq!(json_of(&logz_points(&p))["n"], 3);
    let mut args = logz_points(&p);
    args.extend(["--names-column".into(), "none".into()]);
    fails_on(&args, "line 1, column 1: \"cat\" is not a number");
    let mut args = logz_points(&p);
    args.extend(["--names-column".into(), "3".into()]);
    fails_on(&args, "no column 3");
    let mut args = logz_points(&p);
    args.extend(["--names-column".into(), "first".into()]);
    fails_on(&args, "0-based column index or `none`");
    // Weights have no names column.
    let w = file(&d, "w.csv", "0,1\n1,0\n");
    fails(
        &[
            "logz",
            "--model",
            "hcc",
            "--weights",
            s(&w),
            "--names-column",
            "0",
        ],
        "--names-column apply to --points",
    );
}

#[test]
fn byte_order_mark_is_accepted() {
    let d = dir("i11_bom");
    let plain = file(&d, "w.csv", &weights_csv(5, 3));
    let bom = d.join("bom.csv");
    std::fs::write(&bom, format!("\u{feff}{}", weights_csv(5, 3))).unwrap();
    let logz = |p: &Path| json(&["logz", "--model", "hcc", "--weights", s(p), "--json"]);
    assert_eq!(logz(&plain), logz(&bom));
    let points = d.join("p.csv");
    std::fs::write(&points, "\u{feff}name,x,y\na,1,0\nb,0,1\nc,1,1\n").unwrap();
    assert_eq!(json_of(&logz_points(&points))["n"], 3);
}

/// A version-1 `.npy` file with this header dictionary and data.
fn npy(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    let header = format!("{dict}\n");
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

fn weights_npy(d: &Path, name: &str, bytes: &[u8]) -> Vec<String> {
    let p = d.join(name);
    std::fs::write(&p, bytes).unwrap();
    ["logz", "--model", "hcc", "--weights", s(&p), "--json"]
        .iter()
        .map(|a| a.to_string())
        .collect()
}

#[test]
fn npy_malformed_headers_are_refused_without_panic() {
    let d = dir("i11_npy");
    let dict = |fortran: &str, shape: &str| {
        format!("{{'descr': '<f8', 'fortran_order': {fortran}, 'shape': {shape}, }}")
    };
    for (name, shape) in [
        ("huge.npy", "(4294967296, 4294967296)"),
        ("long.npy", "(4611686018427387904, 1)"),
    ] {
        let args = weights_npy(&d, name, &npy(&dict("False", shape), &[0u8; 24]));
        fails_on(&args, &format!("shape {shape} is too large"));
    }
    let data: Vec<u8> = [0.0f64, 1.0, 1.0, 0.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let args = weights_npy(&d, "yes.npy", &npy(&dict("'yes'", "(2, 2)"), &data));
    fails_on(&args, "'fortran_order' is 'yes', not True or False");
    let mut trailing = npy(&dict("False", "(2, 2)"), &data);
    trailing.extend_from_slice(b"junk");
    let args = weights_npy(&d, "trailing.npy", &trailing);
    fails_on(&args, "4 bytes follow the array data");
    // The well-formed file is read.
    let args = weights_npy(&d, "ok.npy", &npy(&dict("False", "(2, 2)"), &data));
    assert_eq!(json_of(&args)["n"], 2);
}

#[test]
fn standard_input_for_weights_and_points() {
    let d = dir("i11_stdin");
    let csv = weights_csv(6, 7);
    let w = file(&d, "w.csv", &csv);
    let from_file = stdout(&["logz", "--model", "hcc", "--weights", s(&w), "--json"]);
    let out = run_stdin(
        &["logz", "--model", "hcc", "--weights", "-", "--json"],
        csv.as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), from_file);
    // Points, and .npy recognised by its magic string.
    let points = "name,x,y\na,1,0\nb,0.9,0.2\nc,0,1\nd,0.1,1\n";
    let p = file(&d, "p.csv", points);
    let from_file = stdout(&["map", "--model", "hcc", "--points", s(&p), "--json"]);
    let out = run_stdin(
        &["map", "--model", "hcc", "--points", "-", "--json"],
        points.as_bytes(),
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), from_file);
    let data: Vec<u8> = [0.0f64, 0.5, 0.5, 0.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }";
    let out = run_stdin(
        &["logz", "--model", "hcc", "--weights", "-", "--json"],
        &npy(dict, &data),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Errors name standard input.
    let out = run_stdin(
        &["logz", "--model", "hcc", "--weights", "-", "--json"],
        b"0,1\n1,x\n",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("standard input: line 2, column 2"),
        "{stderr}"
    );
}

#[test]
fn unbounded_input_is_refused_at_the_limit() {
    for endless in ["/dev/zero", "/dev/urandom"] {
        if !Path::new(endless).exists() {
            eprintln!("SKIPPED: {endless} is absent");
            continue;
        }
        // 0.01 GiB of memory: at most 1/5 of it, 2 MiB, is read (greedy has
        // no point limit, so no tighter bound).
        fails(
            &[
                "greedy",
                "--model",
                "hcc",
                "--weights",
                endless,
                "--max-memory",
                "0.01",
            ],
            "the input is larger than the limit of 2.0 MiB",
        );
        fails(
            &[
                "logz",
                "--model",
                "hcc",
                "--points",
                endless,
                "--max-memory",
                "0.01",
            ],
            "1/5 of --max-memory",
        );
    }
    // A regular file is refused on its size, before it is read; the limit is
    // never below 1 MiB, so that a small cap (such as A*'s budget) reads small files.
    let d = dir("i11_bounded");
    let w = file(&d, "w.csv", &weights_csv(500, 1));
    fails(
        &[
            "logz",
            "--model",
            "hcc",
            "--weights",
            s(&w),
            "--max-memory",
            "0.0001",
        ],
        "more than the limit of 1.0 MiB",
    );
}

#[test]
fn point_limit_is_checked_before_similarities() {
    let d = dir("i11_many_points");
    let mut text = String::with_capacity(100_000 * 12);
    text.push_str("x,y\n");
    for i in 0..100_000u32 {
        text.push_str(&format!("{},{}\n", i % 317, i % 101));
    }
    let p = file(&d, "big.csv", &text);
    // With a 0.5 GiB cap the 100000 x 100000 similarity matrix (74.5 GiB) is
    // refused by its own check: the message shows that the point limit came first.
    let mut args = logz_points(&p);
    args.extend(["--max-memory".into(), "0.5".into()]);
    fails_on(
        &args,
        "100000 points is too many for exact inference on the dense trellis",
    );
    // Commands without a point limit refuse the similarity matrix (with
    // their own working memory) before allocating it, saying how much it
    // needs and whose cap it exceeds.
    fails(
        &[
            "greedy",
            "--model",
            "hcc",
            "--points",
            s(&p),
            "--max-memory",
            "0.5",
        ],
        "greedy hierarchy over 100000 points needs 74.5 GiB, which exceeds the --max-memory cap of 512.0 MiB",
    );
}

#[test]
fn os_error_is_printed_once() {
    let out = run(&["logz", "--model", "hcc", "--weights", "/nonexistent/w.csv"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("os error 2").count(), 1, "{stderr}");
    assert!(
        stderr.contains("cannot read /nonexistent/w.csv"),
        "{stderr}"
    );
}

/// The first rows of `shared/data/ibhc/iris.csv`, as text (no dependency on
/// the shared data): a numeric `name` column, then four features.
const IRIS_SLICE: &str = "\
name,sepal_length,sepal_width,petal_length,petal_width
0,5.1,3.5,1.4,0.2
1,4.9,3,1.4,0.2
2,4.7,3.2,1.3,0.2
3,4.6,3.1,1.5,0.2
4,5,3.6,1.4,0.2
50,7,3.2,4.7,1.4
51,6.4,3.2,4.5,1.5
100,6.3,3.3,6,2.5
101,5.8,2.7,5.1,1.9
";

#[test]
fn names_column_of_an_iris_slice_is_not_a_feature() {
    let d = dir("i11_iris_slice");
    let iris = file(&d, "iris.csv", IRIS_SLICE);
    let features: String = IRIS_SLICE
        .lines()
        .map(|l| l.split_once(',').unwrap().1.to_string() + "\n")
        .collect();
    let bare = file(&d, "features.csv", &features);
    let map = |p: &Path, extra: &[&str]| {
        let mut args = vec!["map", "--model", "hcc", "--points", s(p), "--json"];
        args.extend(extra);
        json(&args)
    };
    let named = map(&iris, &[]);
    assert_eq!(named["n"], 9);
    assert_eq!(
        named["names"],
        serde_json::json!(["0", "1", "2", "3", "4", "50", "51", "100", "101"])
    );
    // The same tree and cost as the features alone: the id is not a feature.
    let bare = map(&bare, &[]);
    assert_eq!(named["tree"], bare["tree"]);
    assert_eq!(named["cost"], bare["cost"]);
    assert!(bare.get("names").is_none());
    // As a feature (--names-column none) the id changes the answer.
    let as_feature = map(&iris, &["--names-column", "none"]);
    assert!(as_feature.get("names").is_none());
    assert_ne!(named["cost"], as_feature["cost"]);
}

#[test]
fn names_flow_to_newick_json_and_the_readable_tree() {
    let d = dir("i11_names_out");
    // Names that Newick must quote: a blank, an underscore, a quote.
    let p = file(
        &d,
        "p.csv",
        "label,x,y\ncat,1,0\ndog,0.9,0.2\nsea lion,0,1\nO'Hara_2,0.1,1\n",
    );
    let ps = s(&p);
    let newick = stdout(&["map", "--model", "hcc", "--points", ps, "--newick"]);
    // Rooted, with branch lengths (issue 13): the shape and labels are as before.
    assert_eq!(
        crate::issue13_trees::strip_lengths(&newick),
        "[&R] (((cat,'O''Hara_2'),'sea lion'),dog);\n"
    );
    for leaf in ["cat", "dog", "'sea lion'", "'O''Hara_2'"] {
        assert!(newick.contains(leaf), "{newick}");
    }
    let names = serde_json::json!(["cat", "dog", "sea lion", "O'Hara_2"]);
    for cmd in [
        "map",
        "logz",
        "marginals",
        "sample",
        "greedy",
        "beam",
        "astar",
    ] {
        let mut args = vec![cmd, "--model", "hcc", "--points", ps, "--json"];
        if cmd == "sample" {
            args.extend(["-n", "2"]);
        }
        let v = json(&args);
        assert_eq!(v["names"], names, "{cmd}");
        assert_eq!(v["n"], 4, "{cmd}");
    }
    let sparse = json(&[
        "map", "--model", "hcc", "--points", ps, "--sparse", "beam", "--json",
    ]);
    assert_eq!(sparse["names"], names);
    // Newick of other commands.
    for cmd in ["greedy", "astar"] {
        let out = stdout(&[cmd, "--model", "hcc", "--points", ps, "--newick"]);
        assert!(
            out.contains("'sea lion'") && out.contains("cat"),
            "{cmd}: {out}"
        );
    }
    let out = stdout(&[
        "sample", "--model", "hcc", "--points", ps, "-n", "3", "--newick",
    ]);
    assert_eq!(out.lines().count(), 3);
    assert!(out.lines().all(|l| l.contains("'sea lion'")), "{out}");
    // The readable tree and cluster list.
    let out = stdout(&["map", "--model", "hcc", "--points", ps]);
    assert!(
        out.contains("─ sea lion\n") && out.contains("─ cat\n"),
        "{out}"
    );
    let out = stdout(&["marginals", "--model", "hcc", "--points", ps]);
    assert!(out.contains("{cat, dog}"), "{out}");
    // Without names, the outputs are unchanged: no "names", indices as leaves.
    let q = file(&d, "q.csv", "x,y\n1,0\n0.9,0.2\n0,1\n0.1,1\n");
    let v = json(&["map", "--model", "hcc", "--points", s(&q), "--json"]);
    assert!(v.get("names").is_none());
    assert_eq!(
        crate::issue13_trees::strip_lengths(&stdout(&[
            "map",
            "--model",
            "hcc",
            "--points",
            s(&q),
            "--newick"
        ])),
        "[&R] (((0,3),2),1);\n"
    );
}

#[test]
fn standard_input_for_every_file_argument() {
    let d = dir("i11_stdin_all");
    // Jets.
    let jets = stdout(&[
        "ginkgo",
        "generate",
        "--n-jets",
        "2",
        "--min-leaves",
        "4",
        "--max-leaves",
        "5",
        "--seed",
        "3",
    ]);
    let jf = file(&d, "jets.json", &jets);
    let from_file = stdout(&["logz", "--model", "ginkgo", "--jets", s(&jf)]);
    let out = run_stdin(
        &["logz", "--model", "ginkgo", "--jets", "-"],
        jets.as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), from_file);
    // Flat --clusters.
    let w = file(&d, "w.csv", &weights_csv(4, 2));
    let clusters = "0 1\n2 3\n";
    let cf = file(&d, "clusters.txt", clusters);
    let flat = |c: &str| {
        vec![
            "flat",
            "map",
            "--model",
            "cc",
            "--weights",
            s(&w),
            "--sparse",
            "clusters",
            "--clusters",
            c,
            "--json",
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>()
    };
    let from_file = stdout(&flat(s(&cf)).iter().map(String::as_str).collect::<Vec<_>>());
    let args = flat("-");
    let out = run_stdin(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        clusters.as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), from_file);
    // The interactive points, and its target tree.
    let points = "name,f1,f2\na,0,0\nb,0.1,0\nc,3,1\nd,3.1,1\n";
    let target = "((a,b),(c,d));\n";
    let pf = file(&d, "points.csv", points);
    let tf = file(&d, "target.nwk", target);
    let sim = |p: &str, t: &str| {
        vec![
            "interactive",
            "simulate",
            "--points",
            p,
            "--target",
            t,
            "--strategy",
            "random",
            "--queries",
            "2",
            "--iters-per-query",
            "5",
            "--seed",
            "1",
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>()
    };
    let from_file = stdout(
        &sim(s(&pf), s(&tf))
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    for (args, input) in [(sim("-", s(&tf)), points), (sim(s(&pf), "-"), target)] {
        let out = run_stdin(
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
            input.as_bytes(),
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8(out.stdout).unwrap(), from_file);
    }
}

#[test]
fn unbounded_input_for_the_dense_trellis_stops_at_one_mebibyte() {
    // No --max-memory: the dense trellis's 30-point limit bounds --weights.
    for endless in ["/dev/zero", "/dev/urandom"] {
        if !Path::new(endless).exists() {
            continue;
        }
        fails(
            &["logz", "--model", "hcc", "--weights", endless],
            "larger than the limit of 1.0 MiB on what is read into memory (the dense trellis \
             takes at most 30 points",
        );
    }
    // Text inputs are bounded too.
    fails(
        &[
            "logz",
            "--model",
            "ginkgo",
            "--jets",
            "/dev/zero",
            "--max-memory",
            "0.01",
        ],
        "the input is larger than the limit of 2.0 MiB",
    );
}

#[test]
fn names_flow_to_the_flat_outputs() {
    let d = dir("i11_flat_names");
    let p = file(
        &d,
        "p.csv",
        "name,x,y\ncat,1,0\ndog,0.9,0.2\nsea lion,0,1\nseal,0.1,1\n",
    );
    let ps = s(&p);
    let names = serde_json::json!(["cat", "dog", "sea lion", "seal"]);
    for cmd in ["map", "logz", "marginals", "sample", "perturb-map"] {
        let mut args = vec!["flat", cmd, "--model", "cc", "--points", ps, "--json"];
        if cmd == "sample" || cmd == "perturb-map" {
            args.extend(["-n", "2"]);
        }
        let v = json(&args);
        assert_eq!(v["names"], names, "flat {cmd}");
        assert_eq!(v["n"], 4, "flat {cmd}");
    }
    // The readable outputs show the names, not the indices.
    let text = stdout(&["flat", "map", "--model", "cc", "--points", ps, "--center"]);
    assert!(
        text.contains("{cat, dog}") && text.contains("{sea lion, seal}"),
        "{text}"
    );
    let text = stdout(&["flat", "marginals", "--model", "cc", "--points", ps]);
    assert!(text.contains("sea lion"), "{text}");
    let text = stdout(&["flat", "sample", "--model", "cc", "--points", ps, "-n", "3"]);
    assert!(text.contains("cat") && !text.contains("{0"), "{text}");
}
