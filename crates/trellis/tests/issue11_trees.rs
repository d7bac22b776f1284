//! Issue 11, trees: no walk over a user's tree recurses on the call stack
//! (parsing, printing, comparing, hashing, cloning, dropping, scoring), the
//! text forms accept a byte-order mark, and jets files check what they say.
//!
//! Deep trees are handled on threads with a 256 KiB stack, where a recursion
//! of a few thousand levels overflows; the iterative walks are checked
//! against recursive reference implementations (written here) on every tree
//! of the oracle's enumeration and on shuffled copies.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use trellis::ddt::{DdtTree, Hierarchy, LcaDepths, Triplet, build, parse_triplets};
use trellis::flat::tree_partitions;
use trellis::ginkgo::JetsFile;
use trellis::{CorrelationClustering, Hcc, Tree, tree_cost, tree_log_potential};

use crate::oracle::{Gen, MAX_BRUTE, lib_weights, random_weights, shuffle_children, trees};

/// Runs `f` on a thread with a 256 KiB stack.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(f)
        .expect("spawn a thread")
        .join()
        .expect("the thread finishes without overflowing its stack")
}

/// The caterpillar `((..((0,1),2)..),n-1)` (deep on the left) or
/// `(0,(1,(..,(n-2,n-1)..)))` (deep on the right), built without recursion.
fn caterpillar(n: usize, left: bool) -> Tree {
    if left {
        (1..n).fold(Tree::Leaf(0), |t, i| Tree::node(t, Tree::Leaf(i)))
    } else {
        (0..n - 1)
            .rev()
            .fold(Tree::Leaf(n - 1), |t, i| Tree::node(Tree::Leaf(i), t))
    }
}

// ---------------------------------------------------------------------------
// Recursive reference implementations (small trees only).

fn rec_json(t: &Tree) -> String {
    match t {
        Tree::Leaf(i) => i.to_string(),
        Tree::Node(l, r) => format!("[{},{}]", rec_json(l), rec_json(r)),
    }
}

fn rec_newick(t: &Tree) -> String {
    fn go(t: &Tree) -> String {
        match t {
            Tree::Leaf(i) => i.to_string(),
            Tree::Node(l, r) => format!("({},{})", go(l), go(r)),
        }
    }
    go(t) + ";"
}

fn rec_debug(t: &Tree) -> String {
    match t {
        Tree::Leaf(i) => format!("Leaf({i})"),
        Tree::Node(l, r) => format!("Node({}, {})", rec_debug(l), rec_debug(r)),
    }
}

fn rec_leaves(t: &Tree) -> Vec<usize> {
    match t {
        Tree::Leaf(i) => vec![*i],
        Tree::Node(l, r) => [rec_leaves(l), rec_leaves(r)].concat(),
    }
}

fn rec_copy(t: &Tree) -> Tree {
    match t {
        Tree::Leaf(i) => Tree::Leaf(*i),
        Tree::Node(l, r) => Tree::node(rec_copy(l), rec_copy(r)),
    }
}

fn rec_same(a: &Tree, b: &Tree) -> bool {
    match (a, b) {
        (Tree::Leaf(x), Tree::Leaf(y)) => x == y,
        (Tree::Node(a, b), Tree::Node(c, d)) => rec_same(a, c) && rec_same(b, d),
        _ => false,
    }
}

fn rec_canonical(t: &Tree) -> Tree {
    match t {
        Tree::Leaf(i) => Tree::Leaf(*i),
        Tree::Node(l, r) => {
            let (l, r) = (rec_canonical(l), rec_canonical(r));
            let min = |t: &Tree| *rec_leaves(t).iter().min().unwrap();
            if min(&l) <= min(&r) {
                Tree::node(l, r)
            } else {
                Tree::node(r, l)
            }
        }
    }
}

fn rec_depth(t: &Tree) -> usize {
    match t {
        Tree::Leaf(_) => 0,
        Tree::Node(l, r) => 1 + rec_depth(l).max(rec_depth(r)),
    }
}

/// Pre-order `(left mask, right mask)` of every internal node.
fn rec_mask_splits(t: &Tree) -> Vec<(u32, u32)> {
    fn mask(t: &Tree) -> u32 {
        rec_leaves(t).iter().fold(0, |m, i| m | 1 << i)
    }
    fn go(t: &Tree, out: &mut Vec<(u32, u32)>) {
        if let Tree::Node(l, r) = t {
            out.push((mask(l), mask(r)));
            go(l, out);
            go(r, out);
        }
    }
    let mut out = Vec::new();
    go(t, &mut out);
    out
}

/// The depth of the LCA of every pair, by recursion (plain depths).
fn rec_lca(t: &Tree, n: usize) -> Vec<Vec<u16>> {
    fn go(t: &Tree, d: u16, out: &mut Vec<Vec<u16>>) -> Vec<usize> {
        match t {
            Tree::Leaf(i) => vec![*i],
            Tree::Node(l, r) => {
                let (a, b) = (go(l, d + 1, out), go(r, d + 1, out));
                for &i in &a {
                    for &j in &b {
                        out[i][j] = d;
                        out[j][i] = d;
                    }
                }
                [a, b].concat()
            }
        }
    }
    let mut out = vec![vec![0; n]; n];
    go(t, 0, &mut out);
    out
}

fn hash_of(t: &Tree) -> u64 {
    let mut h = DefaultHasher::new();
    t.hash(&mut h);
    h.finish()
}

/// Every tree of the oracle's enumeration over `1..=MAX_BRUTE` points, each
/// also with its children shuffled at random nodes.
fn small_trees() -> Vec<(usize, Tree)> {
    let mut g = Gen(11);
    let mut out = Vec::new();
    for n in 1..=MAX_BRUTE {
        for e in trees(n) {
            out.push((n, e.tree.clone()));
            out.push((n, shuffle_children(&e.tree, &mut g)));
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Deep trees.

#[test]
fn deep_trees_parse_print_canonicalise_and_drop_on_a_small_stack() {
    on_small_stack(|| {
        const N: usize = 200_000;
        for left in [true, false] {
            let t = caterpillar(N, left);
            assert_eq!(t.depth(), N - 1);
            assert_eq!(t.num_leaves(), N);
            assert_eq!(t.min_leaf(), 0);
            t.validate(N, true).unwrap();
            let json = t.to_string();
            let newick = t.to_newick();
            assert_eq!(serde_json::to_string(&t).unwrap(), json);
            let from_json = Tree::parse(&json).unwrap();
            let from_newick = Tree::parse(&newick).unwrap();
            assert!(from_json == t && from_newick == t);
            assert_eq!(hash_of(&from_json), hash_of(&t));
            let copy = t.clone();
            assert!(copy == t);
            assert!(copy != caterpillar(N, !left));
            let canonical = copy.canonical();
            assert_eq!(canonical.leaves(), t.leaves());
            let relabelled = t.relabel(|i| N - 1 - i);
            assert_eq!(relabelled.min_leaf(), 0);
            assert_eq!(relabelled.clone().canonical().depth(), N - 1);
            assert_eq!(t.fold(|_| 1usize, |a, b| a + b), N);
            assert_eq!(t.post_order().count(), 2 * N - 1);
            let debug = format!("{t:?}");
            assert!(debug.starts_with("Node(") && debug.ends_with(')'));
            assert!(t.mask_splits().is_err(), "leaves beyond a 32-point mask");
            // Dropped here: every tree above, on this thread's small stack.
        }
        // Unary nesting in both text forms.
        let deep_unary = format!("{}0{};", "(".repeat(N), ")".repeat(N));
        assert_eq!(Tree::parse(&deep_unary).unwrap(), Tree::Leaf(0));
        let deep_list = format!("{}[0,1]{}", "[".repeat(N), "]".repeat(N));
        assert_eq!(
            Tree::parse(&deep_list).unwrap(),
            Tree::parse("[0,1]").unwrap()
        );
    });
}

#[test]
fn deep_trees_serialize_as_json_text_beyond_serde_nesting() {
    on_small_stack(|| {
        // Trees deeper than 512 levels (`SERDE_NESTING`) go through raw JSON
        // text; 512 levels of nested serde calls fit this small stack.
        for n in [3, 100, 513, 514, 50_000] {
            let t = caterpillar(n, true);
            let text = serde_json::to_string(&t).unwrap();
            assert_eq!(text, t.to_string(), "n = {n}");
            let scored = trellis::ScoredTree {
                tree: t,
                log_potential: -1.5,
            };
            let text = serde_json::to_string(&scored).unwrap();
            assert!(
                text.starts_with("{\"tree\":[[") && text.ends_with("],\"log_potential\":-1.5}")
            );
        }
        // serde_json values nest up to 128 levels: shallow trees become
        // values, deep ones are an error, never an overflow.
        let v = serde_json::to_value(caterpillar(100, true)).unwrap();
        assert_eq!(Tree::from_json(&v).unwrap(), caterpillar(100, true));
        assert!(serde_json::to_value(caterpillar(5_000, true)).is_err());
    });
}

#[test]
fn deep_target_hierarchies_parse_and_give_lca_depths_on_a_small_stack() {
    on_small_stack(|| {
        const N: usize = 100_000;
        // A caterpillar over named leaves, as a --target file would hold it.
        let mut text = String::with_capacity(12 * N);
        text.push_str(&"(".repeat(N - 1));
        text.push_str("p0");
        for i in 1..N {
            text.push_str(&format!(",p{i}):0.5"));
        }
        text.push(';');
        let h = Hierarchy::parse_newick(&text).unwrap();
        assert_eq!(h.leaf_names().len(), N);
        let h2 = h.clone();
        assert!(h2 == h);
        // Only a few names are points: refused, not walked.
        let few: Vec<String> = (0..4).map(|i| format!("p{i}")).collect();
        assert!(h.lca_depths(&few).is_err());
        // Unary nodes nested without limit around a small tree: the LCA
        // depths count branching nodes only, as if they were not there.
        let unary = format!("{}((a,b),(c,d)){};", "(".repeat(N), ")x:1".repeat(N));
        let names: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        let deep = Hierarchy::parse_newick(&unary)
            .unwrap()
            .lca_depths(&names)
            .unwrap();
        let flat = Hierarchy::parse_newick("((a,b),(c,d));")
            .unwrap()
            .lca_depths(&names)
            .unwrap();
        assert_eq!(deep, flat);
        assert_eq!((deep.get(0, 1), deep.get(0, 2)), (1, 0));
    });
}

#[test]
fn deep_trees_score_and_cut_on_a_small_stack() {
    // A caterpillar over 2,000 points: a recursive walk would need some
    // hundreds of bytes per level, more than the 256 KiB the thread has.
    const N: usize = 2_000;
    let w = random_weights(N, 7, 1.0);
    on_small_stack(move || {
        let weights = lib_weights(&w);
        let t = caterpillar(N, true);
        let hcc = Hcc::new(&weights, 1.0).unwrap();
        let lp = tree_log_potential(&hcc, &t).unwrap();
        let cost = tree_cost(&hcc, &t).unwrap();
        assert!(lp.is_finite() && cost.is_finite());
        // Child order does not matter: the mirror image scores the same.
        let mirror = t.fold(Tree::Leaf, |l, r| Tree::node(r, l));
        assert_eq!(tree_log_potential(&hcc, &mirror).unwrap(), lp);
        let cc = CorrelationClustering::new(&weights, 1.0).unwrap();
        let cuts = tree_partitions(&cc, &t).unwrap();
        assert!(cuts.log_z() >= cuts.map().log_energy);
        let covered: usize = cuts.map().clusters.iter().map(Vec::len).sum();
        assert_eq!(covered, N);
    });
}

#[test]
fn build_of_a_caterpillar_forcing_triplet_set_on_a_small_stack() {
    on_small_stack(|| {
        const N: usize = 3_000;
        // ({k-1, k}, k+1): at every level the last point splits off.
        let triplets: Vec<Triplet> = (1..N - 1)
            .map(|k| Triplet::new(k - 1, k, k + 1).unwrap())
            .collect();
        let t = build(N, &triplets).unwrap();
        assert_eq!(t.depth(), N - 1);
        let lca = LcaDepths::from_tree(&t, N).unwrap();
        assert!(triplets.iter().all(|x| lca.satisfies(x)));
        let ddt = DdtTree::with_depth_times(&t).unwrap();
        assert_eq!(ddt.topology(), t.clone().canonical());
        assert_eq!(ddt.times().len(), N - 1);
        let names: Vec<String> = (0..N).map(|i| format!("p{i}")).collect();
        let back = Hierarchy::parse_newick(&ddt.to_newick(&names)).unwrap();
        assert_eq!(back.lca_depths(&names).unwrap(), lca);
    });
}

// ---------------------------------------------------------------------------
// The iterative walks agree with recursive ones on small trees.

#[test]
fn text_forms_round_trip_like_the_recursive_versions() {
    for (n, t) in small_trees() {
        let json = t.to_string();
        assert_eq!(json, rec_json(&t));
        assert_eq!(t.to_newick(), rec_newick(&t));
        assert_eq!(serde_json::to_string(&t).unwrap(), json);
        assert_eq!(format!("{t:?}"), rec_debug(&t));
        for text in [json.clone(), t.to_newick(), format!("\u{feff} {json} ")] {
            let back = Tree::parse(&text).unwrap();
            assert!(rec_same(&back, &t), "{text}");
        }
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert!(rec_same(&Tree::from_json(&v).unwrap(), &t));
        assert_eq!(serde_json::to_value(&t).unwrap(), v);
        // Spaces, branch lengths and internal labels are ignored.
        let spaced = t.to_newick().replace(',', " , ").replace(')', ")x:0.5 ");
        assert!(rec_same(&Tree::parse(&spaced).unwrap(), &t), "{spaced}");
        assert_eq!(t.leaves(), rec_leaves(&t));
        assert_eq!(t.num_leaves(), n);
        assert_eq!(t.depth(), rec_depth(&t));
    }
}

#[test]
fn walks_agree_with_the_recursive_versions() {
    let all = small_trees();
    for (k, (n, t)) in all.iter().enumerate() {
        let copy = t.clone();
        assert!(rec_same(&copy, t));
        assert!(copy == rec_copy(t));
        assert_eq!(hash_of(t), hash_of(&rec_copy(t)));
        assert!(rec_same(&t.clone().canonical(), &rec_canonical(t)));
        assert_eq!(t.mask_splits().unwrap(), rec_mask_splits(t));
        assert!(rec_same(
            &t.relabel(|i| n - 1 - i),
            &t.fold(|i| Tree::Leaf(n - 1 - i), Tree::node)
        ));
        t.validate(*n, true).unwrap();
        // Equality against a neighbour of the list: as the recursive one.
        let other = &all[(k + 1) % all.len()].1;
        assert_eq!(t == other, rec_same(t, other));
        if *n >= 2 {
            let lca = LcaDepths::from_tree(t, *n).unwrap();
            let want = rec_lca(t, *n);
            for (i, row) in want.iter().enumerate() {
                for (j, &d) in row.iter().enumerate() {
                    if i != j {
                        assert_eq!(lca.get(i, j), d);
                    }
                }
            }
            let names: Vec<String> = (0..*n).map(|i| format!("p{i}")).collect();
            let named = t.to_newick();
            let named = (0..*n).rev().fold(named, |s, i| {
                s.replace(&format!("({i},"), &format!("(p{i},"))
                    .replace(&format!(",{i})"), &format!(",p{i})"))
            });
            let h = Hierarchy::parse_newick(&named).unwrap();
            assert_eq!(h.lca_depths(&names).unwrap(), lca, "{named}");
            let ddt = DdtTree::with_depth_times(t).unwrap();
            assert!(rec_same(&ddt.topology(), &rec_canonical(t)));
            let again = DdtTree::new(&ddt.topology(), &ddt.times()).unwrap();
            assert_eq!(again.times(), ddt.times());
        }
    }
}

// ---------------------------------------------------------------------------
// Errors of the text forms.

#[test]
fn tree_text_errors_are_messages() {
    let err = |text: &str| Tree::parse(text).unwrap_err().to_string();
    assert!(err("[0,1,2]").contains("exactly 2 children (binary hierarchy), found 3"));
    assert!(err("[]").contains("found 0"));
    assert!(err("[0,-1]").contains("leaf -1 is not a non-negative integer"));
    assert!(err("[0,1.5]").contains("leaf 1.5 is not a non-negative integer"));
    assert!(err("[0,{\"a\": 1}]").contains("expected a number or a list, found {\"a\": 1}"));
    assert!(err("[0,1").contains("not valid JSON"));
    assert!(err("[0,1]]").contains("not valid JSON"));
    assert!(err("((0,1),2));").contains("unexpected text after the tree at byte 9"));
    assert!(err("((0,1)(2));").contains("expected ',' or ')' at byte 6"));
    assert!(err("((0,a),2);").contains("leaf label \"a\" is not a 0-based point index at byte 4"));
    assert!(err("(0,1,2);").contains("a node has 3 children"));
    let deep_open = "(".repeat(100_000);
    assert!(Tree::parse(&deep_open).is_err());
    let deep_open = "[".repeat(100_000);
    assert!(
        Tree::parse(&deep_open)
            .unwrap_err()
            .to_string()
            .contains("not valid JSON")
    );
    // Newick positions count the byte-order mark.
    let e = Hierarchy::parse_newick("\u{feff}((a,b),,c);")
        .unwrap_err()
        .to_string();
    assert!(e.contains("at byte 10"), "{e}");
}

// ---------------------------------------------------------------------------
// Byte-order marks.

#[test]
fn byte_order_marks_are_skipped() {
    let want = Tree::parse("((0,1),2)").unwrap();
    assert_eq!(Tree::parse("\u{feff}((0,1),2);").unwrap(), want);
    assert_eq!(Tree::parse("\u{feff}[[0,1],2]").unwrap(), want);
    assert_eq!(Tree::from_newick("\u{feff}((0,1),2);").unwrap(), want);
    let names: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
    let h = Hierarchy::parse_newick("\u{feff}((a,b),c);\n").unwrap();
    assert_eq!(h.leaf_names(), ["a", "b", "c"]);
    let t = parse_triplets("\u{feff}a b c\n", &names).unwrap();
    assert_eq!(t, vec![Triplet::new(0, 1, 2).unwrap()]);
    let file = format!("\u{feff}{}", jets_text(JET));
    assert_eq!(JetsFile::parse(&file).unwrap().jets[0].id, "a");
}

// ---------------------------------------------------------------------------
// Jets files.

const JET: &str = r#"{"id": "a", "N": 3, "leaves": [[10, 1, 2, 3], [20, 3, 2, 1], [30, 1, 1, 1]],
    "params": {"lambda": 1.5, "lambda_root": 3.0, "delta_min": 16.0, "M_hard": 30},
    "truth": [[0, 1], 2], "truth_log_likelihood": -4.5, "seed": 7}"#;

fn jets_text(jet: &str) -> String {
    format!("{{\"meta\": {{\"note\": \"NaN is fine in a string\"}}, \"jets\": [{jet}]}}")
}

fn jets_error(jet: &str) -> String {
    JetsFile::parse(&jets_text(jet)).unwrap_err().to_string()
}

#[test]
fn jets_n_must_be_the_number_of_leaves() {
    let f = JetsFile::parse(&jets_text(JET)).unwrap();
    assert_eq!(f.jets[0].len(), 3);
    // N is optional.
    assert!(JetsFile::parse(&jets_text(&JET.replace("\"N\": 3, ", ""))).is_ok());
    let e = jets_error(&JET.replace("\"N\": 3", "\"N\": 4"));
    assert!(e.contains("jet a: N is 4 but the jet has 3 leaves"), "{e}");
    for bad in ["3.0", "-3", "\"3\"", "null", "NaN"] {
        let e = jets_error(&JET.replace("\"N\": 3", &format!("\"N\": {bad}")));
        assert!(
            e.contains("jet a: N must be the number of leaves (3), not"),
            "{bad}: {e}"
        );
    }
}

#[test]
fn jets_refuse_non_finite_numbers_in_every_field() {
    for (field, bad) in [
        ("truth_log_likelihood", "NaN"),
        ("seed", "Infinity"),
        ("truth_log_likelihood", "-Infinity"),
    ] {
        let jet = JET.replace("\"seed\": 7", "\"seed\": 7, \"other\": [1, {\"x\": 2}]");
        let jet = match field {
            "seed" => jet.replace("\"seed\": 7", &format!("\"seed\": {bad}")),
            _ => jet.replace("-4.5", bad),
        };
        let e = jets_error(&jet);
        assert!(
            e.contains(&format!(
                "jet a: field {field:?} holds {bad}, which is not JSON"
            )),
            "{e}"
        );
    }
    // Nested in a kept object, and in the parameters.
    let e = jets_error(&JET.replace("\"M_hard\": 30", "\"M_hard\": NaN"));
    assert!(e.contains("jet a: field \"params\" holds NaN"), "{e}");
    let e = jets_error(&JET.replace("\"lambda\": 1.5", "\"lambda\": NaN"));
    assert!(
        e.contains("params.lambda must be a positive number, not NaN"),
        "{e}"
    );
    let e = jets_error(&JET.replace("[[0, 1], 2]", "[[0, NaN], 2]"));
    assert!(e.contains("jet a: field \"truth\" holds NaN"), "{e}");
    let e = JetsFile::parse(&jets_text(JET).replace("{\"note\"", "{\"x\": NaN, \"note\""))
        .unwrap_err()
        .to_string();
    assert!(e.contains("meta holds NaN, which is not JSON"), "{e}");
    // Out of the f64 range.
    let e = jets_error(&JET.replace("-4.5", "-1e400"));
    assert!(
        e.contains("jet a: field \"truth_log_likelihood\": number out of range"),
        "{e}"
    );
    // A string "NaN" is a string.
    let f = JetsFile::parse(&jets_text(&JET.replace("\"seed\": 7", "\"seed\": \"NaN\""))).unwrap();
    assert_eq!(f.jets[0].extra["seed"], "NaN");
}

#[test]
fn jets_with_deep_truth_trees_round_trip() {
    // A jet of 3,000 leaves with a caterpillar truth: deeper than any
    // serde_json value may nest.
    const N: usize = 3_000;
    let leaves = vec!["[10, 1, 1, 1]"; N].join(",");
    let truth = caterpillar(N, true);
    let jet = format!(
        r#"{{"id": "deep", "N": {N}, "leaves": [{leaves}], "params": {{"lambda": 1.0, "lambda_root": 1.0, "delta_min": 1.0}}, "truth": {truth}, "z": 1}}"#
    );
    let text = jets_text(&jet);
    on_small_stack(move || {
        let f = JetsFile::parse(&text).unwrap();
        assert!(f.jets[0].truth.as_ref() == Some(&truth));
        let out = f.to_json_string();
        let back = JetsFile::parse(&out).unwrap();
        assert_eq!(back, f);
        assert!(out.contains(&format!("\"truth\":{truth},\"z\":1")));
    });
}
