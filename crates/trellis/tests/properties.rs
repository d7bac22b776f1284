//! Property tests: every exact result against the brute-force oracle, `n <= 7`.
//!
//! Inputs are random symmetric weights over several orders of magnitude (up to
//! `1e4`, so `|log ψ|` reaches `1e5..1e7` at `β = 3`), `β ∈ [0, 3]` with the
//! end points drawn often, and user-defined models, general (asymmetric in their
//! arguments, with forbidden splits) and separable (random tables and size
//! factors). Each model runs through the separable kernels (when it has them)
//! and through the general ones (`General(..)`). Proptest shrinks a failing
//! input to a small one. Tolerances come from `Brute::tol_log` and
//! `Brute::tol_p` (in `oracle.rs`): machine epsilon times the magnitude of the
//! summed log-potentials, with the derivation there.

use std::collections::HashSet;

use num_bigint::BigUint;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use trellis::count::{num_trees, num_trees_by_size, num_trees_within};
use trellis::{
    Cluster, Dasgupta, General, Hcc, Mask, Model, Points, Search, Summarize, Tree, Trellis,
    tree_cost,
};

use crate::oracle::{
    self, Brute, Gen, HashModel, NaiveDasgupta, NaiveHcc, RefModel, TableModel, all, low_bit,
};

/// Cases per property; each case runs up to `n = 7` (10395 trees) for several models.
const CASES: u32 = 256;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: CASES,
        // Do not write regression files next to the sources.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// One random weight instance.
#[derive(Clone, Debug)]
struct Instance {
    n: usize,
    w: Vec<Vec<f64>>,
    beta: f64,
    seed: u64,
}

/// Per-case magnitude: a fixed scale, or "mixed" (each weight its own power of ten).
const SCALES: [f64; 6] = [1e-3, 0.5, 1.0, 10.0, 1e3, 1e4];

fn beta_strategy() -> impl Strategy<Value = f64> {
    prop_oneof![1 => Just(0.0), 1 => Just(3.0), 4 => 0.0f64..=3.0]
}

fn instance() -> impl Strategy<Value = Instance> {
    (
        1usize..=oracle::MAX_BRUTE,
        prop::collection::vec((-1.0f64..1.0, 0i32..=4, 0u8..8), 21),
        0usize..=SCALES.len(),
        beta_strategy(),
        any::<u64>(),
    )
        .prop_map(|(n, raw, mode, beta, seed)| {
            let upper: Vec<f64> = raw
                .iter()
                .map(|&(v, e, zero)| {
                    if zero == 0 {
                        0.0 // exact zeros, 1 in 8
                    } else if mode == SCALES.len() {
                        v * 10f64.powi(e)
                    } else {
                        v * SCALES[mode]
                    }
                })
                .collect();
            Instance {
                n,
                w: oracle::symmetric(n, &upper),
                beta,
                seed,
            }
        })
}

fn fail(msg: String) -> TestCaseError {
    TestCaseError::fail(msg)
}

/// Every canonical split `(L, R)` of every cluster over `n` points.
fn all_splits(n: usize) -> Vec<(Mask, Mask)> {
    let mut out = Vec::new();
    for s in 1..=all(n) {
        let low = low_bit(s);
        let rest = s ^ low;
        // Every subset of `rest` except `rest` itself goes with `low` to the left.
        let mut sub: Mask = 0;
        loop {
            if sub != rest {
                out.push((low | sub, rest ^ sub));
            }
            if sub == rest {
                break;
            }
            sub = (sub.wrapping_sub(rest)) & rest; // next subset of `rest`
        }
    }
    out
}

/// Checks a model's trellis and marginals against the oracle.
fn check_model<M: Model>(
    name: &str,
    model: M,
    reference: &dyn RefModel,
    brute: &Brute,
    seed: u64,
) -> Result<(), TestCaseError> {
    let n = brute.n;
    let trees = oracle::trees(n);
    let tol = brute.tol_log();
    let tol_p = brute.tol_p();
    let close = |what: &str, got: f64, want: f64, tol: f64| -> Result<(), TestCaseError> {
        if std::env::var("DBG").is_ok() && (got - want).abs() > 0.0 {
            let r = (got - want).abs() / tol;
            if r > 0.003 {
                eprintln!(
                    "DBG {name} {what} ratio {r:.3e} diff {:e} mag {:e}",
                    (got - want).abs(),
                    brute.mag
                );
            }
        }
        if (got - want).abs() <= tol {
            Ok(())
        } else {
            Err(fail(format!(
                "{name}: {what}: got {got:e}, brute force {want:e}, |diff| {:e} > tol {tol:e} (mag {:e})",
                (got - want).abs(),
                brute.mag
            )))
        }
    };

    let t = Trellis::new(model).map_err(|e| fail(format!("{name}: Trellis::new failed: {e}")))?;
    prop_assert_eq!(t.num_points(), n);
    prop_assert_eq!(t.num_trees(), BigUint::from(trees.len()));

    // Partition function.
    close("log Z", t.log_z(), brute.log_z, tol)?;

    // MAP value, and the MAP tree really achieves it (valued by the oracle).
    close("MAP log φ", t.map().log_potential, brute.map, tol)?;
    let map = t.map().tree.clone();
    prop_assert!(
        oracle::is_complete_over(&map, n),
        "{}: MAP tree {} is not over 0..{}",
        name,
        map,
        n
    );
    prop_assert!(
        oracle::is_canonical(&map),
        "{}: MAP tree {} is not canonical",
        name,
        map
    );
    close(
        "naive log φ(MAP tree)",
        Brute::naive_log_phi(reference, &map),
        brute.map,
        tol,
    )?;
    close(
        "tree_log_potential(MAP tree)",
        t.tree_log_potential(&map).unwrap(),
        t.map().log_potential,
        tol,
    )?;

    // Per-tree potentials and probabilities, trees given with random child order.
    let mut g = Gen(seed);
    let picks: Vec<usize> = if trees.len() <= 105 {
        (0..trees.len()).collect()
    } else {
        (0..60).map(|_| g.below(trees.len())).collect()
    };
    for &i in &picks {
        let tree = oracle::shuffle_children(&trees[i].tree, &mut g);
        let lp = brute.log_phi[i];
        let got = t.tree_log_potential(&tree).unwrap();
        let got_p = t.log_probability(&tree).unwrap();
        if lp == f64::NEG_INFINITY {
            prop_assert_eq!(
                got,
                f64::NEG_INFINITY,
                "{}: log φ({}) must be -inf",
                name,
                tree
            );
            prop_assert_eq!(got_p, f64::NEG_INFINITY);
        } else {
            close(&format!("log φ({tree})"), got, lp, tol)?;
            close(
                &format!("log P({tree})"),
                got_p,
                lp - brute.log_z,
                2.0 * tol,
            )?;
        }
    }

    // The inside tables of random clusters: `log Z(S)` and the MAP tree of `S`
    // against brute force over the trees of S's points (the enumeration over
    // 0..|S| relabelled increasingly, which keeps the canonical argument order).
    // Any tree over S is a subtree of some complete tree, so `tol` applies.
    for _ in 0..4 {
        let s = 1 + g.below(all(n) as usize) as Mask;
        let pts = oracle::points(s);
        let relabel =
            |m: Mask| -> Mask { oracle::points(m).iter().fold(0, |a, &i| a | (1 << pts[i])) };
        let lps: Vec<f64> = oracle::trees(pts.len())
            .iter()
            .map(|t| {
                t.splits
                    .iter()
                    .map(|&(l, r)| reference.log_psi(relabel(l), relabel(r)))
                    .sum()
            })
            .collect();
        let want_z = oracle::log_sum_exp(lps.iter().copied());
        let want_map = lps.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if want_z == f64::NEG_INFINITY {
            prop_assert_eq!(
                t.log_z_of(s).unwrap(),
                f64::NEG_INFINITY,
                "{}: log Z({:#b})",
                name,
                s
            );
            continue;
        }
        close(
            &format!("log Z({s:#b})"),
            t.log_z_of(s).unwrap(),
            want_z,
            tol,
        )?;
        let sub_map = t.map_of(s).unwrap().tree;
        prop_assert_eq!(oracle::mask_of_tree(&sub_map), s);
        prop_assert!(
            oracle::is_canonical(&sub_map),
            "{}: MAP tree of {:#b}: {}",
            name,
            s,
            sub_map
        );
        close(
            &format!("log φ(MAP tree of {s:#b})"),
            Brute::naive_log_phi(reference, &sub_map),
            want_map,
            tol,
        )?;
    }

    // Every cluster marginal, in log space (relative accuracy even for tiny
    // probabilities) and as a probability.
    let m = t
        .marginals()
        .map_err(|e| fail(format!("{name}: marginals failed: {e}")))?;
    prop_assert_eq!(m.p(0), 0.0, "{}: the empty set has probability 0", name);
    if n < 32 {
        prop_assert_eq!(
            m.p(1 << n),
            0.0,
            "{}: a point out of range has probability 0",
            name
        );
    }
    for s in 1..=all(n) {
        let want = brute.log_marg[s as usize];
        let got = m.log_p(s);
        if want == f64::NEG_INFINITY {
            prop_assert_eq!(
                got,
                f64::NEG_INFINITY,
                "{}: cluster {:#b} is impossible",
                name,
                s
            );
        } else {
            close(&format!("log P({s:#b})"), got, want, 4.0 * tol)?;
            close(&format!("P({s:#b})"), m.p(s), want.exp(), tol_p)?;
        }
    }
    // `clusters(min_p)` lists exactly the non-singleton proper clusters with
    // p > 0 and p >= min_p, most probable first.
    for min_p in [0.0, 0.3] {
        let listed = m.clusters(min_p);
        let want: HashSet<Mask> = (1..all(n))
            .filter(|s| s.count_ones() >= 2)
            .filter(|&s| m.p(s) > 0.0 && m.p(s) >= min_p)
            .collect();
        let got: HashSet<Mask> = listed.iter().map(|&(s, _)| s).collect();
        prop_assert_eq!(
            got.len(),
            listed.len(),
            "{}: clusters() repeats a cluster",
            name
        );
        prop_assert_eq!(&got, &want, "{}: clusters({})", name, min_p);
        for pair in listed.windows(2) {
            prop_assert!(pair[0].1 >= pair[1].1, "{}: clusters() not sorted", name);
        }
        for &(s, p) in &listed {
            prop_assert_eq!(p, m.p(s));
        }
    }

    // Sub-hierarchy marginals of random subtrees of random trees (leaves,
    // whole trees and inner subtrees), with random child order.
    for _ in 0..6 {
        let i = g.below(trees.len());
        let subs = oracle::subtrees(&trees[i].tree);
        let sub = oracle::shuffle_children(&subs[g.below(subs.len())], &mut g);
        let want = brute.log_subtree(&sub);
        let got = m
            .subtree(&sub)
            .map_err(|e| fail(format!("{name}: subtree({sub}) failed: {e}")))?;
        close(&format!("P(subtree {sub})"), got, want.exp(), tol_p)?;
    }
    Ok(())
}

/// The inverse temperature of the built-in Gibbs models (an inherent method
/// of each).
trait Beta {
    fn beta(&self) -> f64;
}

impl Beta for Hcc {
    fn beta(&self) -> f64 {
        Hcc::beta(self)
    }
}

impl Beta for Dasgupta {
    fn beta(&self) -> f64 {
        Dasgupta::beta(self)
    }
}

/// The library's split costs (from its cluster summaries) against the naive
/// costs, split by split, and `tree_cost` (summed by the library over the
/// tree's splits) of the MAP tree.
fn check_costs<C: Search + Beta>(
    name: &str,
    model: &C,
    n: usize,
    beta: f64,
    naive_cost: impl Fn(Mask, Mask) -> f64,
    cost_magnitude: impl Fn(Mask, Mask) -> f64,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(model.beta(), beta);
    for (l, r) in all_splits(n) {
        let want = naive_cost(l, r);
        let tol = oracle::tol_log(cost_magnitude(l, r));
        let sum = |m: Mask| model.summary(Points::Mask(m));
        let (sp, sl, sr) = (sum(l | r), sum(l), sum(r));
        let got = model.split_cost(&sp, &sl, &sr);
        prop_assert!(
            (got - want).abs() <= tol,
            "{}: split_cost({:#b}, {:#b}) = {:e}, naive {:e}",
            name,
            l,
            r,
            got,
            want
        );
        let lp = model.log_potential(&sp, &sl, &sr);
        prop_assert!(
            (lp + beta * want).abs() <= beta * tol,
            "{}: log_potential({:#b}, {:#b}) = {:e}, naive {:e}",
            name,
            l,
            r,
            lp,
            -beta * want
        );
    }
    let map = Trellis::new(model).unwrap().map().tree.clone();
    let splits = oracle::canonical_splits(&map);
    let want: f64 = splits.iter().map(|&(l, r)| naive_cost(l, r)).sum();
    let mag: f64 = splits.iter().map(|&(l, r)| cost_magnitude(l, r)).sum();
    let got = tree_cost(model, &map).unwrap();
    prop_assert!(
        (got - want).abs() <= oracle::tol_log(mag),
        "{}: tree_cost({}) = {:e}, naive {:e}",
        name,
        map,
        got,
        want
    );
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    /// Hierarchical correlation clustering, separable and general kernels.
    #[test]
    fn hcc_matches_brute_force(inst in instance()) {
        let naive = NaiveHcc { w: inst.w.clone(), beta: inst.beta };
        let brute = Brute::new(&naive);
        if inst.beta == 0.0 {
            prop_assert!((brute.log_z - oracle::ln_double_factorial(inst.n)).abs() < 1e-12);
        }
        let hcc = Hcc::new(&oracle::lib_weights(&inst.w), inst.beta).unwrap();
        check_costs("hcc", &hcc, inst.n, inst.beta, |l, r| naive.cost(l, r), |l, r| naive.cost_magnitude(l, r))?;
        check_model("hcc", &hcc, &naive, &brute, inst.seed)?;
        check_model("General(hcc)", General(&hcc), &naive, &brute, inst.seed)?;
    }

    /// Dasgupta's cost on non-negative weights, separable and general kernels.
    #[test]
    fn dasgupta_matches_brute_force(inst in instance()) {
        let w = oracle::abs_matrix(&inst.w);
        let naive = NaiveDasgupta { w: w.clone(), beta: inst.beta };
        let brute = Brute::new(&naive);
        let das = Dasgupta::new(&oracle::lib_weights(&w), inst.beta).unwrap();
        check_costs("dasgupta", &das, inst.n, inst.beta, |l, r| naive.cost(l, r), |l, r| naive.cost_magnitude(l, r))?;
        check_model("dasgupta", &das, &naive, &brute, inst.seed)?;
        check_model("General(dasgupta)", General(&das), &naive, &brute, inst.seed)?;
    }

    /// A user-defined general model: hashed, asymmetric, sometimes forbidden splits.
    #[test]
    fn user_general_model_matches_brute_force(
        n in 1usize..=oracle::MAX_BRUTE,
        seed in any::<u64>(),
        scale in prop::sample::select(vec![0.0, 0.1, 1.0, 10.0, 1e3, 1e4]),
        forbid in prop::sample::select(vec![0u64, 0, 64, 160, 240]),
    ) {
        let model = HashModel { n, seed, scale, forbid };
        let brute = Brute::new(&model);
        prop_assert!(brute.log_z.is_finite());
        check_model("hash", &model, &model, &brute, seed)?;
    }

    /// A user-defined separable model: random tables and size factors (constant
    /// or not, possibly zero or negative), sometimes with `-∞` table entries
    /// (forbidden splits), through both kernels.
    #[test]
    fn user_separable_model_matches_brute_force(
        n in 1usize..=oracle::MAX_BRUTE,
        seed in any::<u64>(),
        amp in prop::sample::select(vec![0.01, 1.0, 30.0, 1e3, 1e4]),
        scale in prop::sample::select(vec![-2.0, -1.0, 0.0, 0.5, 1.0]),
        constant_sigma in any::<bool>(),
        forbid in any::<bool>(),
    ) {
        let model = TableModel::random(n, seed, amp, scale, constant_sigma, forbid);
        let brute = Brute::new(&model);
        prop_assert!(brute.log_z.is_finite());
        check_model("table", &model, &model, &brute, seed)?;
        check_model("General(table)", General(&model), &model, &brute, seed)?;
    }

    /// Tree counts: closed form, size recursion, enumeration, and counts within
    /// random cluster families (sparse trellises) against brute-force counts.
    #[test]
    fn tree_counts_match_enumeration(
        n in 1usize..=oracle::MAX_BRUTE,
        seed in any::<u64>(),
        density in prop::sample::select(vec![0.05, 0.2, 0.5, 0.8, 1.0]),
    ) {
        let trees = oracle::trees(n);
        prop_assert_eq!(num_trees(n), BigUint::from(trees.len()));
        prop_assert_eq!(num_trees_by_size(n), BigUint::from(trees.len()));
        let mut g = Gen(seed);
        for _ in 0..4 {
            // A random family of clusters over 0..n (any masks, singletons included).
            let mut family: Vec<Mask> =
                (1..=all(n)).filter(|_| g.unit() < density).collect();
            // A random root: everything (often) or a random non-empty subset.
            let root = if g.below(2) == 0 { all(n) } else { 1 + g.below(all(n) as usize) as Mask };
            if g.below(4) != 0 && !family.contains(&root) {
                family.push(root);
            }
            // Shuffle the family (the count must not depend on the order).
            for i in (1..family.len()).rev() {
                family.swap(i, g.below(i + 1));
            }
            // Brute force: trees over root's points (relabelled enumeration)
            // whose every non-singleton cluster is in the family.
            let pts = oracle::points(root);
            let fam: HashSet<Mask> = family.iter().copied().collect();
            let relabel = |s: Mask| -> Mask {
                oracle::points(s).iter().fold(0, |m, &i| m | (1 << pts[i]))
            };
            let want = oracle::trees(pts.len())
                .iter()
                .filter(|t| t.splits.iter().all(|&(l, r)| fam.contains(&relabel(l | r))))
                .count();
            prop_assert_eq!(
                num_trees_within(root, &family),
                BigUint::from(want),
                "root {:#b}, family {:?}",
                root,
                family
            );
        }
    }
}

/// The counts beyond brute force: the closed form against its own product,
/// the size recursion, and the trellis.
#[test]
fn tree_counts_closed_form() {
    let mut want = BigUint::from(1u32);
    for n in 1..=40usize {
        if n >= 3 {
            want *= 2 * n as u64 - 3;
        }
        assert_eq!(num_trees(n), want, "n = {n}");
        assert_eq!(num_trees_by_size(n), want, "n = {n}");
    }
    let hcc = Hcc::new(
        &oracle::lib_weights(&oracle::random_weights(9, 1, 1.0)),
        1.0,
    )
    .unwrap();
    assert_eq!(
        Trellis::new(&hcc).unwrap().num_trees(),
        BigUint::from(2_027_025u32)
    );
    // 57!! for n = 30 exceeds u128.
    assert!(num_trees(30) > BigUint::from(u128::MAX));
}

/// The only case without any tree: every split forbidden.
#[test]
fn all_splits_forbidden_is_an_error() {
    struct Forbidden;
    impl Summarize for Forbidden {
        type Summary = Mask;
        fn num_points(&self) -> usize {
            4
        }
        fn leaf(&self, i: usize) -> Mask {
            1 << i
        }
        fn merge(&self, a: Cluster<'_, Mask>, b: Cluster<'_, Mask>) -> Mask {
            a.summary | b.summary
        }
    }
    impl Model for Forbidden {
        fn log_potential(&self, _: &Mask, _: &Mask, _: &Mask) -> f64 {
            f64::NEG_INFINITY
        }
    }
    let e = Trellis::new(Forbidden).unwrap_err();
    assert!(matches!(e.kind(), trellis::ErrorKind::NoTree), "{e}");
    struct Nan;
    impl Summarize for Nan {
        type Summary = Mask;
        fn num_points(&self) -> usize {
            4
        }
        fn leaf(&self, i: usize) -> Mask {
            1 << i
        }
        fn merge(&self, a: Cluster<'_, Mask>, b: Cluster<'_, Mask>) -> Mask {
            a.summary | b.summary
        }
    }
    impl Model for Nan {
        fn log_potential(&self, _: &Mask, l: &Mask, _: &Mask) -> f64 {
            if *l == 0b1 { f64::NAN } else { 0.0 }
        }
    }
    let e = Trellis::new(Nan).unwrap_err();
    assert!(
        matches!(e.kind(), trellis::ErrorKind::BadPotential { .. }),
        "{e}"
    );
}

/// Trees that are not hierarchies over the model's points are errors, and the
/// trivial sub-hierarchies have probability 1.
#[test]
fn invalid_trees_are_rejected() {
    let hcc = Hcc::new(
        &oracle::lib_weights(&oracle::random_weights(5, 3, 1.0)),
        1.0,
    )
    .unwrap();
    let t = Trellis::new(&hcc).unwrap();
    let m = t.marginals().unwrap();
    let partial = Tree::node(Tree::Leaf(0), Tree::node(Tree::Leaf(1), Tree::Leaf(2)));
    assert!(
        t.log_probability(&partial).is_err(),
        "a tree missing points has no probability"
    );
    assert!(
        t.tree_log_potential(&partial).is_ok(),
        "a partial tree has a potential"
    );
    let out_of_range = Tree::node(Tree::Leaf(0), Tree::Leaf(5));
    assert!(t.tree_log_potential(&out_of_range).is_err());
    assert!(m.subtree(&out_of_range).is_err());
    let repeated = Tree::node(Tree::Leaf(1), Tree::node(Tree::Leaf(1), Tree::Leaf(2)));
    assert!(t.tree_log_potential(&repeated).is_err());
    assert!(m.subtree(&repeated).is_err());
    for i in 0..5 {
        assert!((m.subtree(&Tree::Leaf(i)).unwrap() - 1.0).abs() <= 1e-12);
    }
    // The whole tree as a sub-hierarchy: its probability.
    let map = t.map().tree.clone();
    let p = t.log_probability(&map).unwrap().exp();
    assert!((m.subtree(&map).unwrap() - p).abs() <= 1e-12);
}
