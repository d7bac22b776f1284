//! Issue 24: clade support (`trellis::ddt::clade_support`, `SupportWindow`)
//! against a direct count: for every cluster of a shown tree, the number of
//! trees of the window whose cluster lists hold it, over random trees and
//! over the trees of a chain (which share most clusters); the sliding window
//! against the count over its last trees; the session's window.

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use trellis::Tree;
use trellis::ddt::{
    Answer, Chain, Dataset, Ddt, DdtTree, Params, QueryOptions, SUPPORT_THIN, SUPPORT_WINDOW,
    Session, Strategy, SupportWindow, Triplet, clade_support,
};

/// A random binary tree over `0..n` (random merges) with depth times.
fn random_tree(n: usize, rng: &mut Xoshiro256PlusPlus) -> DdtTree {
    let mut pool: Vec<Tree> = (0..n).map(Tree::Leaf).collect();
    while pool.len() > 1 {
        let i = rng.random_range(0..pool.len());
        let a = pool.swap_remove(i);
        let j = rng.random_range(0..pool.len());
        let b = pool.swap_remove(j);
        pool.push(Tree::node(a, b));
    }
    DdtTree::with_depth_times(&pool[0]).unwrap()
}

/// The clusters of `t`'s internal nodes in pre-order (sorted point lists).
fn preorder_clusters(t: &Tree, out: &mut Vec<Vec<usize>>) {
    if let Tree::Node(l, r) = t {
        let mut all = t.leaves();
        all.sort_unstable();
        out.push(all);
        preorder_clusters(l, out);
        preorder_clusters(r, out);
    }
}

/// The direct count: per internal node of `shown` (pre-order of its
/// topology), the fraction of `window`'s trees whose clusters include its
/// cluster.
fn direct(window: &[DdtTree], shown: &DdtTree) -> Vec<f64> {
    let mut mine = Vec::new();
    preorder_clusters(&shown.topology(), &mut mine);
    let theirs: Vec<Vec<Vec<usize>>> = window.iter().map(|t| t.topology().clusters()).collect();
    mine.iter()
        .map(|c| theirs.iter().filter(|cs| cs.contains(c)).count() as f64 / window.len() as f64)
        .collect()
}

fn model(n: usize, seed: u64) -> Ddt {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let names = (0..n).map(|i| format!("p{i}")).collect();
    let rows = (0..n)
        .map(|i| {
            vec![
                (i % 3) as f64 * 2.0 + rng.random::<f64>(),
                rng.random::<f64>(),
            ]
        })
        .collect();
    let points = Dataset::new(names, rows).unwrap();
    let params = Params::reference(&points, vec![1.0, 1.0], 0.01);
    Ddt::new(&points, params).unwrap()
}

#[test]
fn clade_support_equals_a_direct_count_over_random_trees() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(24);
    for round in 0..60 {
        // Small n: random trees share clusters often; up to 130: several words.
        let n = [3, 4, 5, 6, 8, 70, 130][round % 7];
        let k = rng.random_range(1..12);
        let window: Vec<DdtTree> = (0..k).map(|_| random_tree(n, &mut rng)).collect();
        // Shown: a tree of the window, or another.
        let shown = if round % 2 == 0 {
            window[rng.random_range(0..k)].clone()
        } else {
            random_tree(n, &mut rng)
        };
        let got = clade_support(&window, &shown).unwrap();
        let want = direct(&window, &shown);
        assert_eq!(got, want, "n = {n}, {k} trees");
        assert_eq!(got.len(), n - 1);
        assert_eq!(got[0], 1.0, "the root is in every tree");
        if round % 2 == 0 {
            assert!(got.iter().all(|&s| s >= 1.0 / k as f64), "{got:?}");
        }
    }
    // The supports are not all 1: the test can fail.
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    let window: Vec<DdtTree> = (0..20).map(|_| random_tree(6, &mut rng)).collect();
    let s = clade_support(&window, &window[0]).unwrap();
    assert!(s.iter().any(|&x| x < 1.0), "{s:?}");
}

#[test]
fn the_sliding_window_counts_its_last_trees_of_a_chain() {
    let mut chain = Chain::new(model(9, 3), 11);
    let mut trees = Vec::new();
    let mut w = SupportWindow::new(7);
    for step in 0..40 {
        chain.run(5);
        trees.push(chain.tree().clone());
        w.push(chain.tree());
        let last = &trees[trees.len().saturating_sub(7)..];
        assert_eq!(w.len(), last.len());
        let shown = &trees[step / 2];
        assert_eq!(
            w.support(shown).unwrap(),
            direct(last, shown),
            "step {step}"
        );
    }
    w.clear();
    assert!(w.is_empty() && w.support(&trees[0]).is_err());
    assert!(clade_support(&[], &trees[0]).is_err());
    let other = random_tree(5, &mut Xoshiro256PlusPlus::seed_from_u64(1));
    assert!(clade_support(&trees, &other).is_err(), "other points");
}

#[test]
fn newick_with_support_labels_every_internal_node() {
    // ((0,1),2) twice, ((0,2),1) twice: (0,1) has support 1/2.
    let a = DdtTree::with_depth_times(&Tree::node(
        Tree::node(Tree::Leaf(0), Tree::Leaf(1)),
        Tree::Leaf(2),
    ))
    .unwrap();
    let b = DdtTree::with_depth_times(&Tree::node(
        Tree::node(Tree::Leaf(0), Tree::Leaf(2)),
        Tree::Leaf(1),
    ))
    .unwrap();
    let s = clade_support(&[a.clone(), b.clone(), a.clone(), b], &a).unwrap();
    assert_eq!(s, [1.0, 0.5]);
    let names: Vec<String> = ["x", "y", "z"].iter().map(|s| s.to_string()).collect();
    let nwk = a.to_newick_with_support(&names, &s);
    let plain = a.to_newick(&names);
    assert!(
        nwk.contains("x:") && nwk.contains(")0.500:") && nwk.contains(")1.000:"),
        "{nwk}"
    );
    // The labels are the only difference.
    assert_eq!(nwk.replace(")0.500:", "):").replace(")1.000:", "):"), plain);
}

#[test]
fn the_session_samples_every_thin_iterations_and_restarts_on_new_constraints() {
    let mut s = Session::new(
        model(12, 9),
        Strategy::Smart,
        QueryOptions::default(),
        vec![],
        None,
        4,
    )
    .unwrap();
    assert_eq!(s.support_samples(), 1, "the starting tree");
    s.run(3 * SUPPORT_THIN as usize + 7);
    assert_eq!(s.support_samples(), 4);
    s.run(SUPPORT_WINDOW * SUPPORT_THIN as usize);
    assert_eq!(s.support_samples(), SUPPORT_WINDOW);
    let sup = s.support();
    assert_eq!(sup.len(), 11);
    assert!(sup.iter().all(|&x| x > 0.0 && x <= 1.0), "{sup:?}");
    assert_eq!(sup[0], 1.0);
    // An accept changes nothing; a new triplet restarts the window.
    s.query();
    s.apply(Answer::Accept).unwrap();
    assert_eq!(s.support_samples(), SUPPORT_WINDOW);
    s.query();
    s.apply(Answer::Triplet(Triplet::new(0, 11, 5).unwrap()))
        .unwrap();
    assert_eq!(s.support_samples(), 1);
    assert!(s.support().iter().all(|&x| x == 1.0));
    s.run(2 * SUPPORT_THIN as usize);
    assert_eq!(s.support_samples(), 3);
    // Undoing it removes the constraint: another restart.
    s.undo();
    assert_eq!(s.support_samples(), 1);
}
