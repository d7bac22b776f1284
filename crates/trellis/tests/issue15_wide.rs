//! Issue 15: clusters beyond 128 points ([`WideSet`]).
//!
//! - the wide set's operations against `u128` on the same bits (order,
//!   lowest point, union, difference, splits);
//! - approximate A* gives the same tree, cost and counters through the
//!   `u128` path and the wide path on ≤ 128 points (hcc, Dasgupta, Ginkgo);
//! - the sparse trellis over wide sets: exact against brute force over the
//!   realised trees for small `n`, and equal to the `u128` trellis;
//! - approximate A* is never worse than its initial trees, and runs beyond
//!   128 points (a small smoke test).

use trellis::astar::{ApproxOptions, Candidates, Outcome, approximate, approximate_with};
use trellis::baselines::{self, Linkage, beam_search, greedy};
use trellis::ginkgo::{Ginkgo, Heuristic, SimulatorParams, Variant, generate_jet};
use trellis::sparse::SparseTrellis;
use trellis::{
    Dasgupta, Hcc, Options, Points, Search, Set, SetRepr, Tree, Weights, WideSet, tree_cost,
    tree_log_potential,
};

use crate::oracle::{self, Gen, lib_weights};

/// The wide set of the same points as a `u128`.
fn wide(s: Set, n: usize) -> WideSet {
    WideSet::from_points(Points::Set(s).iter(), n)
}

fn random_set(g: &mut Gen, n: usize) -> Set {
    let bits = (g.next_u64() as u128) << 64 | g.next_u64() as u128;
    bits & trellis::full_set(n)
}

#[test]
fn wide_sets_agree_with_u128() {
    let mut g = Gen(15);
    for n in [1, 5, 63, 64, 65, 100, 127, 128] {
        assert_eq!(wide(trellis::full_set(n), n), WideSet::full(n));
        for _ in 0..200 {
            let (a, b) = (random_set(&mut g, n), random_set(&mut g, n));
            let (wa, wb) = (wide(a, n), wide(b, n));
            assert_eq!(wa.cmp(&wb), a.cmp(&b), "order, n = {n}");
            assert_eq!(wa.len(), a.len());
            assert_eq!(wa.is_empty(), a.is_empty());
            if a != 0 {
                assert_eq!(wa.is_singleton(), SetRepr::is_singleton(&a));
                assert_eq!(wa.lowest(), a.lowest());
            }
            assert_eq!(wa.union(&wb), wide(a | b, n));
            assert_eq!(wa.minus(&wb), wide(a & !b, n));
            assert_eq!(wa.is_subset(&wb), a & !b == 0);
            assert!(wa.fits(n));
            let i = g.below(n);
            assert_eq!(wa.contains(i), a >> i & 1 == 1);
            assert_eq!(wa.with(i), wide(a | 1 << i, n));
            assert_eq!(wa.without(i), wide(a & !(1 << i), n));
            assert_eq!(
                wa.points().iter().collect::<Vec<_>>(),
                Points::Set(a).iter().collect::<Vec<_>>()
            );
            assert_eq!(wa.points().len(), a.count_ones() as usize);
        }
        // Splits in the same order on both.
        for _ in 0..20 {
            let mut s = random_set(&mut g, n);
            while s.count_ones() > 9 {
                s &= s - 1;
            }
            if s.count_ones() < 2 {
                continue;
            }
            let (mut narrow, mut broad) = (Vec::new(), Vec::new());
            s.all_splits(n, &mut narrow);
            wide(s, n).all_splits(n, &mut broad);
            let expect: Vec<(WideSet, WideSet)> = narrow
                .iter()
                .map(|&(l, r)| (wide(l, n), wide(r, n)))
                .collect();
            assert_eq!(broad, expect);
            assert_eq!(narrow.len() as u64, (1u64 << (s.count_ones() - 1)) - 1);
        }
    }
    // Beyond 128 points.
    let n = 1000;
    let s = WideSet::from_points([3, 64, 500, 999], n);
    assert_eq!(s.points().iter().collect::<Vec<_>>(), vec![3, 64, 500, 999]);
    assert_eq!((s.len(), s.lowest()), (4, 3));
    assert!(s.fits(n) && !s.fits(500));
    assert_eq!(WideSet::full(n).len(), n);
    assert!(WideSet::singleton(999, n).is_singleton());
    assert!(WideSet::singleton(200, n) > WideSet::singleton(199, n));
    assert!(WideSet::singleton(999, n) > WideSet::from_points(0..999, n));
}

/// Weights of a hierarchical mixture: points in 2-level groups, positive
/// inside a subgroup, weaker inside a group, negative across, plus noise.
#[allow(clippy::needless_range_loop)]
pub fn mixture(n: usize, seed: u64) -> Weights {
    let mut g = Gen(seed);
    let mut w = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in i + 1..n {
            let base = if i % 8 == j % 8 {
                0.8
            } else if i % 4 == j % 4 {
                0.2
            } else {
                -0.5
            };
            let v = base + 0.6 * (g.unit() - 0.5);
            w[i][j] = v;
            w[j][i] = v;
        }
    }
    lib_weights(&w)
}

/// Average- and complete-linkage trees of similarity weights.
fn linkage_trees(w: &Weights) -> Vec<Tree> {
    let d = baselines::distances_from_similarities(w);
    [Linkage::Average, Linkage::Complete]
        .into_iter()
        .map(|l| baselines::linkage(&d, w.n(), l).unwrap())
        .collect()
}

fn budget() -> Options<'static> {
    Options {
        memory_limit: Some(1 << 30),
        ..Default::default()
    }
}

fn same(a: &Outcome, b: &Outcome, what: &str) {
    assert_eq!(a.best.tree, b.best.tree, "{what}: trees");
    assert_eq!(a.cost.to_bits(), b.cost.to_bits(), "{what}: cost");
    assert_eq!(
        (a.explored, a.splits, a.vertices, a.iterations, a.rounds),
        (b.explored, b.splits, b.vertices, b.iterations, b.rounds),
        "{what}: counters"
    );
}

fn both<M: Search>(model: &M, init: &[Tree], options: &ApproxOptions, what: &str) -> Outcome {
    let narrow = approximate_with::<Set, _>(model, init, options, &budget()).unwrap();
    let broad = approximate_with::<WideSet, _>(model, init, options, &budget()).unwrap();
    assert_eq!((narrow.sets, broad.sets), ("u128", "wide"));
    same(&narrow, &broad, what);
    // The public entry point takes the `u128` path here.
    same(
        &approximate(model, init, options, &budget()).unwrap(),
        &narrow,
        what,
    );
    narrow
}

#[test]
fn approximate_a_star_is_the_same_on_both_representations() {
    for (n, seed, candidates, max) in [
        (9, 1, Candidates::TopK, 2000),
        (24, 2, Candidates::TopK, 300),
        (40, 3, Candidates::Importance, 200),
        (128, 4, Candidates::TopK, 40),
    ] {
        let w = mixture(n, seed);
        let init = linkage_trees(&w);
        let options = ApproxOptions {
            seed,
            candidates,
            max_explored: Some(max),
            ..ApproxOptions::default()
        };
        let hcc = Hcc::new(&w, 1.0).unwrap();
        let out = both(&hcc, &init, &options, &format!("hcc n = {n}"));
        for t in &init {
            assert!(out.cost <= tree_cost(&hcc, &t.clone().canonical()).unwrap());
        }
        if n <= 40 {
            let raw = oracle::abs_matrix(&oracle::random_weights(n, seed, 1.0));
            let das = Dasgupta::new(&lib_weights(&raw), 1.0).unwrap();
            let weighted = ApproxOptions {
                weight: None,
                ..options.clone()
            };
            both(&das, &init, &weighted, &format!("dasgupta n = {n}"));
        }
    }
    // A jet, from beam search.
    let jet = generate_jet(&SimulatorParams::w(), 7, 0, 20, 20).unwrap();
    let model = Ginkgo::new(&jet, Variant::Current).with_heuristic(Heuristic::H1);
    let init: Vec<Tree> = beam_search(&model, 20)
        .unwrap()
        .into_iter()
        .map(|s| s.tree)
        .collect();
    let options = ApproxOptions {
        max_explored: Some(300),
        ..ApproxOptions::default()
    };
    both(&model, &init, &options, "ginkgo");
}

#[test]
fn approximate_a_star_is_never_worse_than_its_initial_trees() {
    for seed in 0..6u64 {
        let n = 10 + 5 * seed as usize;
        let w = oracle::random_weights(n, seed, 1.0);
        let model = Hcc::new(&lib_weights(&w), 1.0).unwrap();
        let mut init = linkage_trees(model.weights());
        init.push(greedy(&model).unwrap().tree);
        // On canonical forms: the cost of one tree depends on the order of
        // its sum by an ulp, and the result is canonical.
        let best = init
            .iter()
            .map(|t| tree_cost(&model, &t.clone().canonical()).unwrap())
            .fold(f64::INFINITY, f64::min);
        for max in [1, 10, 100] {
            let options = ApproxOptions {
                seed,
                max_explored: Some(max),
                ..ApproxOptions::default()
            };
            let out = approximate(&model, &init, &options, &budget()).unwrap();
            assert!(
                out.cost <= best,
                "seed {seed}, {max}: {} > {best}",
                out.cost
            );
            assert_eq!(out.cost, tree_cost(&model, &out.best.tree).unwrap());
        }
    }
}

/// A random family over `n` points: the clusters of two random trees and a
/// few random clusters.
fn random_family(n: usize, g: &mut Gen) -> Vec<Set> {
    let mut family = Vec::new();
    for _ in 0..2 {
        let trees = oracle::trees(n);
        let t = &trees[g.below(trees.len())].tree;
        family.extend(oracle::clusters_of(t).into_iter().map(|c| c as Set));
    }
    for _ in 0..3 {
        let c = (g.next_u64() as u32 & oracle::all(n)) as Set;
        if c != 0 {
            family.push(c);
        }
    }
    family
}

#[test]
fn sparse_trellis_on_wide_sets_is_exact_and_equal_to_u128() {
    let mut g = Gen(1515);
    for n in 3..=7 {
        for case in 0..4 {
            let family = random_family(n, &mut g);
            let raw = oracle::random_weights(n, 100 * n as u64 + case, 2.0);
            let model = Hcc::new(&lib_weights(&raw), 0.7).unwrap();
            let narrow = SparseTrellis::from_clusters(n, family.clone()).unwrap();
            let broad =
                SparseTrellis::from_clusters_as(n, family.iter().map(|&c| wide(c, n))).unwrap();
            assert_eq!(narrow.num_trees_realised(), broad.num_trees_realised());
            assert_eq!(narrow.num_splits(), broad.num_splits());
            // Brute force over the realised trees.
            let vertices: Vec<Set> = narrow.clusters().to_vec();
            assert_eq!(
                broad.clusters().to_vec(),
                vertices.iter().map(|&c| wide(c, n)).collect::<Vec<_>>()
            );
            let realised: Vec<(f64, &Tree)> = oracle::trees(n)
                .iter()
                .filter(|e| {
                    oracle::clusters_of(&e.tree)
                        .iter()
                        .all(|&c| vertices.contains(&(c as Set)))
                })
                .map(|e| (tree_log_potential(&model, &e.tree).unwrap(), &e.tree))
                .collect();
            assert_eq!(
                broad.num_trees_realised(),
                num_bigint::BigUint::from(realised.len())
            );
            let log_z = oracle::log_sum_exp(realised.iter().map(|r| r.0));
            let top = realised
                .iter()
                .map(|r| r.0)
                .fold(f64::NEG_INFINITY, f64::max);
            let (a, b) = (narrow.infer(&model).unwrap(), broad.infer(&model).unwrap());
            assert!((b.log_z() - log_z).abs() <= 1e-9 * log_z.abs().max(1.0));
            assert!((b.map().log_potential - top).abs() <= 1e-9 * top.abs().max(1.0));
            assert_eq!(a.log_z().to_bits(), b.log_z().to_bits());
            assert_eq!(a.map(), b.map());
            assert_eq!(a.samples(20, case), b.samples(20, case));
            let (ma, mb) = (a.marginals(), b.marginals());
            for &c in &vertices {
                assert_eq!(ma.p(c).to_bits(), mb.p(wide(c, n)).to_bits());
                // Brute force: the share of Z of the trees holding `c`.
                let holding = oracle::log_sum_exp(
                    realised
                        .iter()
                        .filter(|r| {
                            c.count_ones() == 1
                                || oracle::clusters_of(r.1).contains(&(c as u32))
                                || c == oracle::all(n) as Set
                        })
                        .map(|r| r.0),
                );
                assert!((mb.p(wide(c, n)) - (holding - log_z).exp()).abs() <= 1e-9);
            }
        }
    }
}

#[test]
fn beyond_128_points_sparse_trellis_and_approximate_a_star_run() {
    let n = 200;
    let w = mixture(n, 200);
    let model = Hcc::new(&w, 1.0).unwrap();
    let init = linkage_trees(&w);
    // The sparse trellis of the initial trees: its MAP is no worse than either.
    let trellis = SparseTrellis::<WideSet>::from_trees_as(n, &init).unwrap();
    let inference = trellis.infer(&model).unwrap();
    let map = inference.map();
    for t in &init {
        assert!(map.log_potential >= tree_log_potential(&model, t).unwrap() - 1e-9);
    }
    assert!(inference.log_z() >= map.log_potential);
    let sample = inference.sample(&mut trellis::random::rng(3));
    assert!(sample.validate(n, true).is_ok());
    // Approximate A*, a few explorations.
    let options = ApproxOptions {
        max_explored: Some(20),
        samples: 5,
        ..ApproxOptions::default()
    };
    let out = approximate(&model, &init, &options, &budget()).unwrap();
    assert_eq!(out.sets, "wide");
    assert!(out.best.tree.validate(n, true).is_ok());
    assert!(out.explored <= 20);
    let best = init
        .iter()
        .map(|t| tree_cost(&model, &t.clone().canonical()).unwrap())
        .fold(f64::INFINITY, f64::min);
    assert!(out.cost <= best);
    assert!(out.bytes_per_vertex > out.bytes_per_split / 4 && out.peak_bytes > 0);
    // Exact A* and u128 sets refuse it with the limit.
    assert!(trellis::astar::exact(&model, &budget()).is_err());
    assert!(approximate_with::<Set, _>(&model, &init, &options, &budget()).is_err());
}
