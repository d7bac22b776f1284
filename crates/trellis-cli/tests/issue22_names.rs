//! Issue 22, class 1: our own Newick is read back as the same tree. When the
//! points have names, Newick leaf labels are names (`score --tree`,
//! `marginals --subtree`, `flat ... --sparse tree --tree`); a label that is
//! not a name is refused naming it; without names, labels are indices.

use crate::util::*;

/// Points whose names are digits in another order than their rows (the
/// sweep's case), or words that Newick must quote.
fn points(names: &[&str]) -> String {
    let rows = [[1.0, 0.1], [1.0, 0.3], [0.1, 5.0], [0.3, 4.0], [2.0, 2.5]];
    let mut s = String::from("name,x,y\n");
    for (name, r) in names.iter().zip(rows) {
        s += &format!("\"{name}\",{},{}\n", r[0], r[1]);
    }
    s
}

fn cost(v: &serde_json::Value) -> f64 {
    v["cost"].as_f64().expect("a cost")
}

#[test]
fn issue22_map_newick_scores_as_the_map_tree() {
    let d = dir("issue22_names_roundtrip");
    for (k, names) in [
        ["2", "1", "0", "4", "3"],
        ["setosa a", "o'brien", "x_y", "(p)", "#5"],
    ]
    .iter()
    .enumerate()
    {
        let p = file(&d, &format!("p{k}.csv"), &points(names));
        let p = p.to_str().unwrap();
        let map = json(&["map", "--model", "hcc", "--points", p, "--center", "--json"]);
        let newick = stdout(&[
            "map", "--model", "hcc", "--points", p, "--center", "--newick",
        ]);
        let scored = json(&[
            "score", "--model", "hcc", "--points", p, "--center", "--tree", &newick, "--json",
        ]);
        assert_eq!(scored["tree"], map["tree"], "names {names:?}");
        assert!((cost(&scored) - cost(&map)).abs() <= 1e-12 * cost(&map).abs().max(1.0));
        // Every other tree, written with names, scores as its index form.
        let tree = "[[[0,2],1],[3,4]]";
        let by_index = json(&[
            "score", "--model", "hcc", "--points", p, "--center", "--tree", tree, "--json",
        ]);
        let named = format!(
            "((({},{}),{}),({},{}));",
            quote(names[0]),
            quote(names[2]),
            quote(names[1]),
            quote(names[3]),
            quote(names[4])
        );
        let by_name = json(&[
            "score", "--model", "hcc", "--points", p, "--center", "--tree", &named, "--json",
        ]);
        assert_eq!(by_name["tree"], by_index["tree"]);
        assert_eq!(by_name["cost"], by_index["cost"]);
    }
}

fn quote(name: &str) -> String {
    if name.chars().all(|c| c.is_ascii_alphanumeric()) {
        name.to_string()
    } else {
        format!("'{}'", name.replace('\'', "''"))
    }
}

#[test]
fn issue22_a_label_that_is_not_a_name_is_refused_naming_it() {
    let d = dir("issue22_names_stranger");
    let p = file(&d, "p.csv", &points(&["a", "b", "c", "d", "e"]));
    let p = p.to_str().unwrap();
    // Indices are not names when the points have names.
    fails(
        &[
            "score",
            "--model",
            "hcc",
            "--points",
            p,
            "--center",
            "--tree",
            "((0,1),((2,3),4));",
        ],
        "leaf \"0\" that is not among the points' names",
    );
    fails(
        &[
            "score",
            "--model",
            "hcc",
            "--points",
            p,
            "--center",
            "--tree",
            "((a,b),((c,zz),e));",
        ],
        "\"zz\"",
    );
    fails(
        &[
            "score",
            "--model",
            "hcc",
            "--points",
            p,
            "--center",
            "--tree",
            "((a,b),((c,a),e));",
        ],
        "\"a\" appears twice",
    );
    // A JSON list holds indices, with or without names.
    json(&[
        "score",
        "--model",
        "hcc",
        "--points",
        p,
        "--center",
        "--tree",
        "[[0,1],[[2,3],4]]",
        "--json",
    ]);
}

#[test]
fn issue22_without_names_newick_labels_are_indices() {
    let d = dir("issue22_names_none");
    let w = file(&d, "w.csv", &weights_csv(5, 3));
    let w = w.to_str().unwrap();
    let a = json(&[
        "score",
        "--model",
        "hcc",
        "--weights",
        w,
        "--tree",
        "((0,2),((1,3),4));",
        "--json",
    ]);
    let b = json(&[
        "score",
        "--model",
        "hcc",
        "--weights",
        w,
        "--tree",
        "[[0,2],[[1,3],4]]",
        "--json",
    ]);
    assert_eq!(a["cost"], b["cost"]);
    fails(
        &[
            "score",
            "--model",
            "hcc",
            "--weights",
            w,
            "--tree",
            "((a,b),((c,d),e));",
        ],
        "not a 0-based point index",
    );
}

#[test]
fn issue22_subtree_and_flat_tree_read_names() {
    let d = dir("issue22_names_subtree");
    let names = ["3", "4", "0", "1", "2"];
    let p = file(&d, "p.csv", &points(&names));
    let p = p.to_str().unwrap();
    // The sub-hierarchy ((row 0, row 2), row 1) named as the rows' names.
    let by_index = json(&[
        "marginals",
        "--model",
        "hcc",
        "--points",
        p,
        "--center",
        "--subtree",
        "[[0,2],1]",
        "--json",
    ]);
    let by_name = json(&[
        "marginals",
        "--model",
        "hcc",
        "--points",
        p,
        "--center",
        "--subtree",
        "((3,0),4);",
        "--json",
    ]);
    assert_eq!(by_index["subtree_p"], by_name["subtree_p"]);
    let other = json(&[
        "marginals",
        "--model",
        "hcc",
        "--points",
        p,
        "--center",
        "--subtree",
        "((0,2),1);",
        "--json",
    ]);
    assert_ne!(
        other["subtree_p"], by_name["subtree_p"],
        "names, not indices"
    );
    fails(
        &[
            "marginals",
            "--model",
            "hcc",
            "--points",
            p,
            "--center",
            "--subtree",
            "((3,9),4);",
        ],
        "\"9\"",
    );
    // The family of tree cuts of a named tree.
    let flat = |tree: &str| {
        json(&[
            "flat", "logz", "--model", "cc", "--points", p, "--center", "--sparse", "tree",
            "--tree", tree, "--json",
        ])
    };
    assert_eq!(
        flat("((3,0),(4,(1,2)));")["log_z"],
        flat("[[0,2],[1,[3,4]]]")["log_z"]
    );
}
