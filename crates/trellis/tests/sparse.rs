//! The sparse trellis (issue #3, part 4) against brute force restricted to
//! the trees it realises, and against the dense trellis on the full family.

use std::collections::{HashMap, HashSet};

use trellis::Set;
use trellis::ginkgo::{Ginkgo, JetsFile, Variant};
use trellis::sparse::SparseTrellis;
use trellis::{Hcc, Matrix, Trellis, Weights, tree_log_potential};

use crate::oracle::{self, Gen, RefModel};

#[allow(clippy::needless_range_loop)]
fn random_weights(n: usize, g: &mut Gen) -> Vec<Vec<f64>> {
    let mut w = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in i + 1..n {
            let v = 4.0 * g.unit() - 2.0;
            w[i][j] = v;
            w[j][i] = v;
        }
    }
    w
}

/// The family: the clusters of `k` random trees plus `extra` random clusters.
fn random_family(n: usize, k: usize, extra: usize, g: &mut Gen) -> Vec<Set> {
    let all = oracle::trees(n);
    let mut family = Vec::new();
    for _ in 0..k {
        let t = &all[g.below(all.len())].tree;
        family.extend(oracle::clusters_of(t).into_iter().map(|c| c as Set));
    }
    for _ in 0..extra {
        let c = (g.next_u64() as u32 & oracle::all(n)) as Set;
        if c != 0 {
            family.push(c);
        }
    }
    family
}

#[test]
fn realised_trees_log_z_and_map_match_brute_force() {
    let mut g = Gen(31);
    let mut cases = 0;
    for n in 2..=7 {
        for _ in 0..40 {
            let w = random_weights(n, &mut g);
            let beta = 0.3 + 2.0 * g.unit();
            let family = random_family(n, 1 + g.below(5), g.below(6), &mut g);
            let t = SparseTrellis::from_clusters(n, family.iter().copied()).unwrap();
            let set: HashSet<Set> = t.clusters().iter().copied().collect();
            // Brute force over the realised trees.
            let naive = oracle::NaiveHcc { w: w.clone(), beta };
            let realised: Vec<(trellis::Tree, f64)> = oracle::trees(n)
                .iter()
                .filter(|e| {
                    oracle::clusters_of(&e.tree)
                        .iter()
                        .all(|&c| set.contains(&(c as Set)))
                })
                .map(|e| {
                    (
                        e.tree.clone(),
                        e.splits.iter().map(|&(l, r)| naive.log_psi(l, r)).sum(),
                    )
                })
                .collect();
            assert_eq!(
                t.num_trees_realised(),
                (realised.len() as u64).into(),
                "n {n}"
            );
            let model = Hcc::new(
                &Weights::from_matrix(&Matrix::from_rows(w.clone()).unwrap()).unwrap(),
                beta,
            )
            .unwrap();
            let inf = t.infer(&model).unwrap();
            let want_z = oracle::log_sum_exp(realised.iter().map(|r| r.1));
            let want_map = realised
                .iter()
                .map(|r| r.1)
                .fold(f64::NEG_INFINITY, f64::max);
            let tol = 1e-9 * want_z.abs().max(1.0);
            assert!(
                (inf.log_z() - want_z).abs() <= tol,
                "n {n}: {} vs {want_z}",
                inf.log_z()
            );
            let map = inf.map();
            assert!((map.log_potential - want_map).abs() <= tol);
            let map_tree = map.tree;
            assert!(
                realised
                    .iter()
                    .any(|r| r.0.clone().canonical() == map_tree.clone().canonical())
            );
            let v = tree_log_potential(&model, &map_tree).unwrap();
            assert!((v - want_map).abs() <= tol);
            let sparsity = t.sparsity();
            let want = realised.len() as f64 / oracle::trees(n).len() as f64;
            assert!(
                (sparsity - want).abs() <= 1e-12 * want,
                "{sparsity} vs {want}"
            );
            cases += 1;
        }
    }
    assert_eq!(cases, 240);
}

#[test]
fn full_family_equals_the_dense_trellis() {
    let mut g = Gen(7);
    for n in [3usize, 5, 8, 10] {
        let w = random_weights(n, &mut g);
        let weights = Weights::from_matrix(&Matrix::from_rows(w).unwrap()).unwrap();
        let all: Vec<Set> = (1..1u128 << n).collect();
        let t = SparseTrellis::from_clusters(n, all).unwrap();
        let inf = t.infer(&Hcc::new(&weights, 1.3).unwrap()).unwrap();
        let dense = Trellis::new(Hcc::new(&weights, 1.3).unwrap()).unwrap();
        assert!((inf.log_z() - dense.log_z()).abs() <= 1e-9 * dense.log_z().abs().max(1.0));
        assert!(
            (inf.map().log_potential - dense.map().log_potential).abs()
                <= 1e-9 * dense.log_z().abs().max(1.0)
        );
        assert_eq!(t.num_trees_realised(), dense.num_trees());
    }
    // And on Ginkgo jets of the reference data, with the Ginkgo model.
    let Some(dir) = crate::data::dir("ginkgo") else {
        return;
    };
    let jets = JetsFile::read(&dir.join("ginkgo_small.json")).unwrap();
    for jet in jets.jets.iter().filter(|j| j.len() <= 8) {
        let model = Ginkgo::new(jet, Variant::Current);
        let n = jet.len();
        let t = SparseTrellis::from_clusters(n, (1..1u128 << n).collect::<Vec<_>>()).unwrap();
        let inf = t.infer(&model).unwrap();
        let dense = Trellis::new(&model).unwrap();
        assert!(
            (inf.log_z() - dense.log_z()).abs() <= 1e-9 * dense.log_z().abs(),
            "{}",
            jet.id
        );
        assert!(
            (inf.map().log_potential - dense.map().log_potential).abs()
                <= 1e-9 * dense.log_z().abs()
        );
        // The truth tree alone: the MAP is the truth.
        let truth = jet.truth.as_ref().unwrap();
        let one = SparseTrellis::from_trees(n, [truth]).unwrap();
        let inf = one.infer(&model).unwrap();
        let want = tree_log_potential(&model, truth).unwrap();
        assert!((inf.map().log_potential - want).abs() <= 1e-12 * want.abs());
        assert!((inf.log_z() - want).abs() <= 1e-12 * want.abs());
    }
}

/// Sampling on a sparse trellis: tree frequencies against the exact
/// distribution restricted to the realised trees. Bound as in
/// `sampling.rs`: with `m` trees and `K` samples, E‖p̂ - p‖₁ <= √((m-1)/K),
/// and by McDiarmid P(‖p̂ - p‖₁ >= E + ε) <= exp(-K ε²/2); δ = 1e-6.
#[test]
fn samples_follow_the_restricted_posterior() {
    let mut g = Gen(99);
    let n = 6;
    let w = random_weights(n, &mut g);
    let weights = Weights::from_matrix(&Matrix::from_rows(w.clone()).unwrap()).unwrap();
    let family = random_family(n, 6, 4, &mut g);
    let t = SparseTrellis::from_clusters(n, family).unwrap();
    let set: HashSet<Set> = t.clusters().iter().copied().collect();
    let naive = oracle::NaiveHcc { w, beta: 0.7 };
    let realised: Vec<(String, f64)> = oracle::trees(n)
        .iter()
        .filter(|e| {
            oracle::clusters_of(&e.tree)
                .iter()
                .all(|&c| set.contains(&(c as Set)))
        })
        .map(|e| {
            (
                e.tree.clone().canonical().to_string(),
                e.splits
                    .iter()
                    .map(|&(l, r)| naive.log_psi(l, r))
                    .sum::<f64>(),
            )
        })
        .collect();
    let m = realised.len();
    assert!(m >= 5, "the family should realise several trees ({m})");
    let log_z = oracle::log_sum_exp(realised.iter().map(|r| r.1));
    let model = Hcc::new(&weights, 0.7).unwrap();
    let inf = t.infer(&model).unwrap();
    let k = 100_000;
    let check = |samples: &[trellis::Tree], want: &HashMap<String, f64>| -> (f64, f64) {
        let mut counts: HashMap<String, usize> = HashMap::new();
        for s in samples {
            *counts.entry(s.clone().canonical().to_string()).or_default() += 1;
        }
        let tv = 0.5
            * want
                .iter()
                .map(|(tree, p)| {
                    (counts.get(tree).copied().unwrap_or(0) as f64 / k as f64 - p).abs()
                })
                .sum::<f64>();
        let eps = (2.0 * (1e6f64).ln() / k as f64).sqrt();
        (tv, 0.5 * (((m - 1) as f64 / k as f64).sqrt() + eps))
    };
    let want: HashMap<String, f64> = realised
        .iter()
        .map(|(t, v)| (t.clone(), (v - log_z).exp()))
        .collect();
    let samples = inf.samples(k, 5);
    assert!(
        samples
            .iter()
            .all(|s| want.contains_key(&s.clone().canonical().to_string()))
    );
    let (tv, bound) = check(&samples, &want);
    assert!(tv <= bound, "TV {tv} > bound {bound}");
    // Negative control: the same samples against the posterior at another beta.
    let other: HashMap<String, f64> = {
        let lz = oracle::log_sum_exp(realised.iter().map(|r| r.1 * 3.0));
        realised
            .iter()
            .map(|(t, v)| (t.clone(), (3.0 * v - lz).exp()))
            .collect()
    };
    let (tv_other, _) = check(&samples, &other);
    assert!(
        tv_other > bound,
        "the test has no power: TV {tv_other} <= {bound}"
    );
}
