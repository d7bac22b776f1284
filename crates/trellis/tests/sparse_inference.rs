//! The new inference on sparse trellises against brute force: the marginal
//! of every vertex of a hierarchical sparse trellis (over the trees it
//! realises), and exact samples of flat sparse trellises and of the cuts of
//! a hierarchy (over the partitions they realise).

use std::collections::{HashMap, HashSet};

use trellis::flat::{Partition, tree_partitions};
use trellis::sparse::SparseTrellis;
use trellis::{
    CorrelationClustering, Energy, Hcc, Mask, Matrix, Points, Set, Summarize, Tree, Weights,
};

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

fn lib_weights(w: &[Vec<f64>]) -> Weights {
    Weights::from_matrix(&Matrix::from_rows(w.to_vec()).unwrap()).unwrap()
}

/// The clusters of `k` random trees plus `extra` random clusters.
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

/// `log φ` of a tree given by its splits.
type LogPhi<'a> = &'a dyn Fn(&[(Mask, Mask)]) -> f64;

/// Checks every vertex marginal of `model` on `t` against the realised trees
/// weighted by `log_phi`.
fn check_marginals<M: trellis::Model>(
    what: &str,
    n: usize,
    t: &SparseTrellis,
    model: &M,
    log_phi: LogPhi<'_>,
) {
    let vertices: HashSet<Set> = t.clusters().iter().copied().collect();
    let realised: Vec<(Vec<Mask>, f64)> = oracle::trees(n)
        .iter()
        .filter(|e| {
            oracle::clusters_of(&e.tree)
                .iter()
                .all(|&c| vertices.contains(&(c as Set)))
        })
        .map(|e| (oracle::clusters_of(&e.tree), log_phi(&e.splits)))
        .collect();
    let log_z = oracle::log_sum_exp(realised.iter().map(|r| r.1));
    let marginals = t.infer(model).unwrap().marginals();
    let mut total = 0.0;
    for &v in t.clusters() {
        let want: f64 = realised
            .iter()
            .filter(|r| v.count_ones() == 1 || r.0.contains(&(v as Mask)))
            .map(|r| (r.1 - log_z).exp())
            .sum();
        let got = marginals.p(v);
        assert!(
            (got - want).abs() <= 1e-9,
            "{what}, n {n}: P({:?}) = {got}, brute force {want}",
            oracle::points(v as Mask)
        );
        assert!((0.0..=1.0).contains(&got), "{what}: P out of [0, 1]: {got}");
        if v.count_ones() >= 2 && v != oracle::all(n) as Set {
            total += got;
        }
    }
    // Every realised tree has n - 2 non-singleton proper clusters.
    assert!(
        (total - (n as f64 - 2.0).max(0.0)).abs() <= 1e-9 * n as f64,
        "{what}, n {n}: the marginals sum to {total}"
    );
    // The listing agrees with the per-cluster values.
    for (c, p) in marginals.clusters(0.0) {
        assert_eq!(p, marginals.p(c));
    }
    // A set that is not a vertex is in no realised tree.
    let outside = (1..1u128 << n).find(|c| !vertices.contains(c));
    if let Some(c) = outside {
        assert_eq!(marginals.p(c), 0.0);
    }
}

#[test]
fn sparse_marginals_match_brute_force_over_the_realised_trees() {
    let mut g = Gen(77);
    let (mut cases, mut hash_cases) = (0, 0);
    for n in 2..=6 {
        for _ in 0..30 {
            let w = random_weights(n, &mut g);
            let beta = 0.2 + 2.5 * g.unit();
            let family = random_family(n, 1 + g.below(5), g.below(8), &mut g);
            let t = SparseTrellis::from_clusters(n, family.iter().copied()).unwrap();
            let naive = oracle::NaiveHcc { w: w.clone(), beta };
            let model = Hcc::new(&lib_weights(&w), beta).unwrap();
            check_marginals("hcc", n, &t, &model, &|splits| {
                splits.iter().map(|&(l, r)| naive.log_psi(l, r)).sum()
            });
            // An asymmetric user model with forbidden splits.
            let hash = oracle::HashModel {
                n,
                seed: g.next_u64(),
                scale: 3.0,
                forbid: 60,
            };
            if t.infer(&hash).is_ok() {
                check_marginals("hash", n, &t, &hash, &|splits| {
                    splits.iter().map(|&(l, r)| hash.value(l, r)).sum()
                });
                hash_cases += 1;
            }
            cases += 1;
        }
    }
    assert_eq!(cases, 150);
    // Most families keep a tree of non-zero potential under the forbidden splits.
    assert!(
        hash_cases >= 75,
        "only {hash_cases} cases with the hash model"
    );
}

#[test]
fn sparse_marginals_of_the_full_family_equal_the_dense_ones() {
    let mut g = Gen(5);
    for n in 3..=7 {
        let w = random_weights(n, &mut g);
        let model = Hcc::new(&lib_weights(&w), 1.3).unwrap();
        let all: Vec<Set> = (1..1u128 << n).collect();
        let sparse = SparseTrellis::from_clusters(n, all)
            .unwrap()
            .infer(&model)
            .unwrap()
            .marginals();
        let dense = trellis::Trellis::new(&model).unwrap().marginals().unwrap();
        for c in 1..1u32 << n {
            assert!(
                (sparse.p(c as Set) - dense.p(c)).abs() <= 1e-10,
                "n {n}, cluster {c:#b}"
            );
        }
    }
}

/// A flat energy given by a function of the cluster's points.
struct FnEnergy<F> {
    n: usize,
    f: F,
}

impl<F: Fn(Set) -> f64 + Sync> Summarize for FnEnergy<F> {
    type Summary = Set;
    fn num_points(&self) -> usize {
        self.n
    }
    fn leaf(&self, i: usize) -> Set {
        1 << i
    }
    fn merge(&self, a: trellis::Cluster<'_, Set>, b: trellis::Cluster<'_, Set>) -> Set {
        a.summary | b.summary
    }
}

impl<F: Fn(Set) -> f64 + Sync> Energy for FnEnergy<F> {
    fn log_energy(&self, c: &Set) -> f64 {
        (self.f)(*c)
    }
}

/// The smallest family holding `seed` and closed under recursive complement.
fn closure(seed: impl IntoIterator<Item = Set>) -> Vec<Set> {
    let mut family: Vec<Set> = seed.into_iter().collect();
    let mut known: HashSet<Set> = family.iter().copied().collect();
    let mut k = 0;
    while k < family.len() {
        for j in 0..family.len() {
            let (x, y) = (family[j], family[k]);
            for (small, big) in [(x, y), (y, x)] {
                if small != big && small & !big == 0 && known.insert(big ^ small) {
                    family.push(big ^ small);
                }
            }
        }
        k += 1;
    }
    family
}

/// Every partition of `s` made of clusters of `family`.
fn partitions_within(s: Set, family: &HashSet<Set>) -> Vec<Vec<Set>> {
    if s == 0 {
        return vec![Vec::new()];
    }
    let low = s & s.wrapping_neg();
    let mut out = Vec::new();
    for &c in family {
        if c & low != 0 && c & !s == 0 {
            for mut rest in partitions_within(s ^ c, family) {
                rest.push(c);
                rest.sort_unstable();
                out.push(rest);
            }
        }
    }
    out
}

fn as_sets(p: &Partition) -> Vec<Set> {
    let mut v: Vec<Set> = p
        .iter()
        .map(|c| c.iter().fold(0, |m, &i| m | 1u128 << i))
        .collect();
    v.sort_unstable();
    v
}

/// A bound on the total variation between the empirical distribution of `k`
/// samples over `m` outcomes and the truth, exceeded with probability below
/// 1e-9: `P(TV > ε) ≤ 2^m exp(-2kε²)`.
fn tv_bound(m: usize, k: usize) -> f64 {
    ((m as f64 * std::f64::consts::LN_2 + 9.0 * std::f64::consts::LN_10) / (2.0 * k as f64)).sqrt()
}

/// Compares samples with the exact distribution `log_w` over `outcomes`.
fn check_frequencies(what: &str, outcomes: &[Vec<Set>], log_w: &[f64], samples: &[Partition]) {
    let log_z = oracle::log_sum_exp(log_w.iter().copied());
    let index: HashMap<&Vec<Set>, usize> =
        outcomes.iter().enumerate().map(|(i, o)| (o, i)).collect();
    let mut counts = vec![0usize; outcomes.len()];
    for s in samples {
        let i = index
            .get(&as_sets(s))
            .unwrap_or_else(|| panic!("{what}: sampled {s:?}, not a realised partition"));
        counts[*i] += 1;
    }
    let k = samples.len() as f64;
    let tv: f64 = counts
        .iter()
        .zip(log_w)
        .map(|(&c, &lw)| (c as f64 / k - (lw - log_z).exp()).abs())
        .sum::<f64>()
        / 2.0;
    let bound = tv_bound(outcomes.len(), samples.len());
    assert!(tv <= bound, "{what}: TV {tv} above {bound}");
}

#[test]
fn flat_sparse_trellis_log_z_map_and_samples_match_brute_force() {
    let mut g = Gen(9);
    for n in 3..=6 {
        let w = random_weights(n, &mut g);
        let cc = CorrelationClustering::new(&lib_weights(&w), 0.8).unwrap();
        let energy = |c: Set| cc.log_energy(&cc.summary(Points::Set(c)));
        // A closed family: the closure of a random tree's clusters (without
        // singletons, which would close it to every subset).
        let tree = oracle::trees(n)[g.below(oracle::trees(n).len())]
            .tree
            .clone();
        let seed = oracle::clusters_of(&tree).into_iter().map(|c| c as Set);
        let t = SparseTrellis::flat(n, closure(seed)).unwrap();
        let family: HashSet<Set> = t.clusters().iter().copied().collect();
        let outcomes = partitions_within(oracle::all(n) as Set, &family);
        assert_eq!(t.num_partitions_realised(), (outcomes.len() as u64).into());
        let log_w: Vec<f64> = outcomes
            .iter()
            .map(|p| p.iter().map(|&c| energy(c)).sum())
            .collect();
        let inf = t.infer_flat(&cc).unwrap();
        let want_z = oracle::log_sum_exp(log_w.iter().copied());
        assert!((inf.log_z() - want_z).abs() <= 1e-9 * want_z.abs().max(1.0));
        let want_map = log_w.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        assert!((inf.map().log_energy - want_map).abs() <= 1e-9 * want_map.abs().max(1.0));
        let map_sets = as_sets(&inf.map().clusters);
        let map_value: f64 = map_sets.iter().map(|&c| energy(c)).sum();
        assert!((map_value - want_map).abs() <= 1e-9 * want_map.abs().max(1.0));
        check_frequencies(
            &format!("flat sparse n {n}"),
            &outcomes,
            &log_w,
            &inf.samples(20_000, 3),
        );
        // The same seed gives the same samples.
        assert_eq!(inf.samples(50, 11), inf.samples(50, 11));
    }
}

#[test]
fn flat_sparse_samples_avoid_forbidden_clusters() {
    // Clusters holding both 0 and 1 are forbidden.
    let n = 5;
    let f = |c: Set| {
        if c & 0b11 == 0b11 {
            f64::NEG_INFINITY
        } else {
            0.1 * c.count_ones() as f64
        }
    };
    let energy = FnEnergy { n, f };
    let t = SparseTrellis::flat(n, 1..1u128 << n).unwrap();
    let family: HashSet<Set> = t.clusters().iter().copied().collect();
    let all = partitions_within(oracle::all(n) as Set, &family);
    let (outcomes, log_w): (Vec<Vec<Set>>, Vec<f64>) = all
        .into_iter()
        .map(|p| {
            let w: f64 = p.iter().map(|&c| f(c)).sum();
            (p, w)
        })
        .filter(|(_, w)| *w > f64::NEG_INFINITY)
        .unzip();
    let inf = t.infer_flat(&energy).unwrap();
    check_frequencies("forbidden", &outcomes, &log_w, &inf.samples(20_000, 8));
}

#[test]
fn tree_cuts_log_z_map_and_samples_match_brute_force() {
    let mut g = Gen(21);
    for n in 2..=7 {
        let w = random_weights(n, &mut g);
        let cc = CorrelationClustering::new(&lib_weights(&w), 1.1).unwrap();
        let tree: Tree = oracle::trees(n)[g.below(oracle::trees(n).len())]
            .tree
            .clone();
        let nodes: HashSet<Set> = oracle::clusters_of(&tree)
            .into_iter()
            .map(|c| c as Set)
            .chain((0..n).map(|i| 1u128 << i))
            .collect();
        let outcomes = partitions_within(oracle::all(n) as Set, &nodes);
        let log_w: Vec<f64> = outcomes
            .iter()
            .map(|p| {
                p.iter()
                    .map(|&c| cc.log_energy(&cc.summary(Points::Set(c))))
                    .sum()
            })
            .collect();
        let cuts = tree_partitions(&cc, &tree).unwrap();
        assert_eq!(
            cuts.num_partitions(),
            num_bigint::BigUint::from(outcomes.len())
        );
        let want_z = oracle::log_sum_exp(log_w.iter().copied());
        assert!((cuts.log_z() - want_z).abs() <= 1e-9 * want_z.abs().max(1.0));
        let want_map = log_w.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        assert!((cuts.map().log_energy - want_map).abs() <= 1e-9 * want_map.abs().max(1.0));
        check_frequencies(
            &format!("tree cuts n {n}"),
            &outcomes,
            &log_w,
            &cuts.samples(20_000, 4),
        );
    }
}
