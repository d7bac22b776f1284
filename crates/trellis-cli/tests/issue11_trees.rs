//! Issue 11, trees: trees nested 30,000 deep on the command line or in a
//! target file are refused with a message or answered, never aborted; a
//! byte-order mark is accepted in jets, Newick and triplet files; a jet's `N`
//! must be its number of leaves and no field may hold NaN.
//!
//! The inline trees stay below Linux's limit of 128 KiB per argument.

use std::path::{Path, PathBuf};

use crate::util::{dir, fails, file, json, run, s, stdout, weights_csv};

/// Deeper than the recursive readers and drops survived on an 8 MiB stack.
const DEEP: usize = 30_000;

/// The caterpillar `((((0,0),0),0)...,0)` nested `DEEP` levels: 4 bytes a
/// level, so it fits one argument (its leaves repeat, which is refused).
fn deep_caterpillar() -> String {
    format!("{}0{}", "(".repeat(DEEP), ",0)".repeat(DEEP))
}

/// `tree` inside `DEEP` levels of one-child groups (Newick) or one-element
/// lists (JSON), which stand for their child: the same tree, nested deep.
fn deep_unary(tree: &str) -> String {
    if tree.starts_with('[') {
        format!("{}{tree}{}", "[".repeat(DEEP), "]".repeat(DEEP))
    } else {
        format!("{}{tree}{};", "(".repeat(DEEP), ")".repeat(DEEP))
    }
}

/// Runs the arguments and checks that nothing aborted: exit 0 or 2, never a
/// signal (stack overflow) or a panic (101).
fn no_abort(args: &[&str]) {
    let out = run(args);
    let code = out.status.code();
    assert!(
        matches!(code, Some(0 | 2)),
        "exit {code:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn deep_trees_on_the_command_line_are_refused_or_answered_never_aborted() {
    let d = dir("issue11_deep_args");
    let w = file(&d, "w.csv", &weights_csv(4, 3));
    let deep = deep_caterpillar();
    assert!(
        deep.len() < 128 * 1024,
        "one argument holds at most 128 KiB"
    );
    // score --tree: parsed, then refused by the check of its leaves.
    let score = |tree: &str| {
        vec![
            "score",
            "--model",
            "hcc",
            "--weights",
            s(&w),
            "--json",
            "--tree",
        ]
        .into_iter()
        .map(String::from)
        .chain([tree.to_string()])
        .collect::<Vec<_>>()
    };
    let args = score(&deep);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    fails(&args, "leaf 0 appears more than once");
    // The same tree over 4 points nested 30,000 deep (both text forms) is
    // answered, with the value of the shallow tree.
    let plain = json(
        &score("((0,1),(2,3))")
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    for deep in [deep_unary("((0,1),(2,3))"), deep_unary("[[0,1],[2,3]]")] {
        let args = score(&deep);
        let v = json(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(v["log_potential"], plain["log_potential"]);
        assert_eq!(v["tree"], plain["tree"]);
    }
    // marginals --subtree.
    let marginals = |tree: &str| {
        vec![
            "marginals",
            "--model",
            "hcc",
            "--weights",
            s(&w),
            "--json",
            "--subtree",
        ]
        .into_iter()
        .map(String::from)
        .chain([tree.to_string()])
        .collect::<Vec<_>>()
    };
    let args = marginals(&deep);
    fails(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        "leaf 0 appears more than once",
    );
    let plain = json(
        &marginals("(0,1)")
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    let args = marginals(&deep_unary("(0,1)"));
    let v = json(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(v["subtree_p"], plain["subtree_p"]);
    // The flat commands' --sparse tree family, and Newick errors by byte.
    let flat = [
        "flat",
        "logz",
        "--model",
        "cc",
        "--weights",
        s(&w),
        "--json",
        "--sparse",
        "tree",
        "--tree",
    ];
    no_abort(&[&flat[..], &[deep.as_str()]].concat());
    let plain = json(&[&flat[..], &["((0,1),(2,3))"]].concat());
    let nested = deep_unary("((0,1),(2,3))");
    assert_eq!(json(&[&flat[..], &[nested.as_str()]].concat()), plain);
    fails(&[&flat[..], &["((0,1),2));"]].concat(), "at byte 9");
}

/// 12 named points in two groups, and the target tree of their groups.
fn named_points(d: &Path) -> (PathBuf, String) {
    let mut csv = String::from("name,f1,f2\n");
    for i in 0..12 {
        let (cx, cy) = if i < 6 { (0.0, 0.0) } else { (3.0, 1.0) };
        let j = (i % 6) as f64;
        csv.push_str(&format!("p{i},{},{}\n", cx + 0.13 * j, cy - 0.07 * j));
    }
    let target = "(((p0,p1,p2),(p3,p4,p5))A,((p6,p7,p8),(p9,p10,p11))B)".to_string();
    (file(d, "points.csv", &csv), target)
}

fn simulate(points: &Path, target: &Path) -> Vec<String> {
    [
        "interactive",
        "simulate",
        "--points",
        s(points),
        "--target",
        s(target),
        "--strategy",
        "random",
        "--queries",
        "3",
        "--iters-per-query",
        "10",
        "--seed",
        "3",
        "--json",
    ]
    .map(String::from)
    .to_vec()
}

#[test]
fn deep_target_files_are_refused_or_answered_never_aborted() {
    let d = dir("issue11_deep_target");
    let (points, target) = named_points(&d);
    // A caterpillar over 30,000 names: read, then refused (not the points).
    let mut caterpillar = "(".repeat(DEEP - 1) + "p0";
    for i in 1..DEEP {
        caterpillar.push_str(&format!(",x{i}):1"));
    }
    let deep = file(&d, "caterpillar.nwk", &(caterpillar + ";\n"));
    let args = simulate(&points, &deep);
    fails(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        "has a leaf \"x1\" that is not among the points",
    );
    // The 12-point target inside 30,000 one-child groups: the same run.
    let plain = file(&d, "plain.nwk", &format!("{target};\n"));
    let nested = file(&d, "nested.nwk", &(deep_unary(&target) + "\n"));
    let want = stdout(
        &simulate(&points, &plain)
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    let got = stdout(
        &simulate(&points, &nested)
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert_eq!(got, want);
    // Unclosed groups 30,000 deep: a Newick error naming the byte.
    let open = file(&d, "open.nwk", &"(".repeat(DEEP));
    let args = simulate(&points, &open);
    fails(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        &format!("expected a leaf name at byte {DEEP}"),
    );
}

const BOM: &str = "\u{feff}";

#[test]
fn byte_order_marks_are_accepted_in_jets_newick_and_triplet_files() {
    let d = dir("issue11_bom");
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
        "2",
    ]);
    let plain = file(&d, "jets.json", &jets);
    let marked = file(&d, "jets_bom.json", &format!("{BOM}{jets}"));
    let logz = |f: &Path| stdout(&["logz", "--model", "ginkgo", "--jets", s(f)]);
    assert_eq!(logz(&marked), logz(&plain));
    // A Newick target.
    let (points, target) = named_points(&d);
    let plain = file(&d, "target.nwk", &format!("{target};\n"));
    let marked = file(&d, "target_bom.nwk", &format!("{BOM}{target};\n"));
    let run_all = |t: &Path| {
        stdout(
            &simulate(&points, t)
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        )
    };
    assert_eq!(run_all(&marked), run_all(&plain));
    // Triplets.
    let sample = |t: &Path| {
        stdout(&[
            "interactive",
            "sample",
            "--points",
            s(&points),
            "--triplets",
            s(t),
            "-n",
            "2",
            "--seed",
            "5",
            "--burn-in",
            "50",
            "--thin",
            "10",
        ])
    };
    let trips = "p0 p7 p1\np2,p8,p3\n";
    let plain = file(&d, "triplets.txt", trips);
    let marked = file(&d, "triplets_bom.txt", &format!("{BOM}{trips}"));
    assert_eq!(sample(&marked), sample(&plain));
}

/// A generated jets file with `edit` applied to its first jet.
fn edited_jets(name: &str, edit: impl Fn(&mut serde_json::Value)) -> PathBuf {
    let text = stdout(&[
        "ginkgo",
        "generate",
        "--n-jets",
        "2",
        "--min-leaves",
        "4",
        "--max-leaves",
        "4",
        "--seed",
        "9",
    ]);
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    edit(&mut v["jets"][0]);
    file(&dir(name), "jets.json", &serde_json::to_string(&v).unwrap())
}

#[test]
fn jets_with_a_wrong_leaf_count_or_nan_are_refused_naming_the_jet() {
    let f = edited_jets("issue11_jets_n", |j| j["N"] = 5.into());
    let id = "gen_s9_0";
    fails(
        &["map", "--model", "ginkgo", "--jets", s(&f)],
        &format!("jet {id}: N is 5 but the jet has 4 leaves"),
    );
    let f = edited_jets("issue11_jets_n_type", |j| j["N"] = "4".into());
    fails(
        &["logz", "--model", "ginkgo", "--jets", s(&f)],
        &format!("jet {id}: N must be the number of leaves (4), not \"4\""),
    );
    // NaN in a field the library does not read (as Python writes it).
    let f = edited_jets("issue11_jets_nan", |j| {
        j["truth_log_likelihood"] = 12345.5.into()
    });
    let text = std::fs::read_to_string(&f)
        .unwrap()
        .replace("12345.5", "NaN");
    std::fs::write(&f, text).unwrap();
    fails(
        &["logz", "--model", "ginkgo", "--jets", s(&f)],
        &format!("jet {id}: field \"truth_log_likelihood\" holds NaN, which is not JSON"),
    );
}
