//! The exact sampler against the exact posterior, with bounds derived from the
//! sample size (not tuned), and a negative control showing the tests have power.
//!
//! # Tree frequencies: a total-variation bound
//!
//! Let `p` be the exact distribution over `m` outcomes (trees, or bins of
//! trees) and `p̂` the empirical distribution of `K` independent samples, and
//! `L1 = Σ_i |p̂_i - p_i|`.
//!
//! - Expectation: `E|p̂_i - p_i| <= sqrt(Var p̂_i) = sqrt(p_i (1 - p_i) / K)`, and by
//!   Cauchy-Schwarz `Σ_i sqrt(p_i (1 - p_i)) <= sqrt(m Σ_i p_i (1 - p_i))
//!   <= sqrt(m (1 - 1/m)) = sqrt(m - 1)` (as `Σ p_i² >= 1/m`). So
//!   `E[L1] <= sqrt((m - 1) / K)`.
//! - Concentration: replacing one of the `K` samples moves two counts by one,
//!   so `L1` changes by at most `2/K`; McDiarmid's inequality gives
//!   `P(L1 >= E[L1] + ε) <= exp(-2ε² / (K (2/K)²)) = exp(-K ε² / 2)`.
//!
//! With `δ = 1e-6` and `ε = sqrt(2 ln(1/δ) / K)`, with probability `>= 1 - δ`:
//!
//! ```text
//! TV = L1 / 2 <= ( sqrt((m - 1) / K) + sqrt(2 ln(1/δ) / K) ) / 2.
//! ```
//!
//! The seeds are fixed, so each test is deterministic; over the choice of a
//! seed a correct sampler fails it with probability at most `δ`.
//!
//! **Power.** If the samples come from another distribution `q`, then with
//! probability `>= 1 - δ`, `TV(p̂, p) >= TV(q, p) - TV(p̂, q) >= TV(q, p) - bound`,
//! which exceeds the bound whenever `TV(q, p) > 2 · bound`. The negative control
//! draws samples at another β with `TV(q, p) > 2 · bound` (asserted from the
//! exact posteriors) and checks that they fail the bound.
//!
//! # Cluster frequencies: Hoeffding and a union bound
//!
//! For each of the `N = 2^n - n - 2` non-singleton proper clusters `S`, the
//! frequency of `S` in `K` samples is a mean of `K` independent Bernoulli(`P(S)`)
//! variables: `P(|f_S - P(S)| >= t) <= 2 exp(-2 K t²)` (Hoeffding). A union bound
//! over the clusters gives, with probability `>= 1 - δ`, every
//! `|f_S - P(S)| < t = sqrt(ln(2N/δ) / (2K))`.

use std::collections::HashMap;

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use trellis::{Hcc, Mask, Model, Tree, Trellis};

use crate::oracle::{self, Brute, HashModel, NaiveHcc};

const DELTA: f64 = 1e-6;

/// The TV bound of the module docs for `m` outcomes and `k` samples.
pub(crate) fn tv_bound(m: usize, k: usize) -> f64 {
    let k = k as f64;
    (((m - 1) as f64 / k).sqrt() + (2.0 * (1.0 / DELTA).ln() / k).sqrt()) / 2.0
}

/// The Hoeffding + union bound of the module docs for `clusters` events.
fn cluster_bound(clusters: usize, k: usize) -> f64 {
    ((2.0 * clusters as f64 / DELTA).ln() / (2.0 * k as f64)).sqrt()
}

/// Canonical trees with their exact probabilities, from the oracle.
pub(crate) fn exact_posterior(brute: &Brute) -> HashMap<Tree, f64> {
    let trees = oracle::trees(brute.n);
    let map: HashMap<Tree, f64> = trees
        .iter()
        .zip(&brute.log_phi)
        .map(|(t, &lp)| (t.tree.clone().canonical(), (lp - brute.log_z).exp()))
        .collect();
    assert_eq!(map.len(), trees.len());
    map
}

/// Total variation between the empirical distribution of `samples` and `exact`
/// (samples outside `exact`'s support count fully).
pub(crate) fn empirical_tv(samples: &[Tree], exact: &HashMap<Tree, f64>) -> f64 {
    let mut counts: HashMap<Tree, usize> = HashMap::new();
    for t in samples {
        *counts.entry(t.clone().canonical()).or_default() += 1;
    }
    let k = samples.len() as f64;
    let mut l1: f64 = exact
        .iter()
        .map(|(t, &p)| (counts.get(t).copied().unwrap_or(0) as f64 / k - p).abs())
        .sum();
    l1 += counts
        .iter()
        .filter(|(t, _)| !exact.contains_key(*t))
        .map(|(_, &c)| c as f64 / k)
        .sum::<f64>();
    l1 / 2.0
}

/// Exact TV between two distributions over the same trees.
pub(crate) fn exact_tv(p: &HashMap<Tree, f64>, q: &HashMap<Tree, f64>) -> f64 {
    p.iter().map(|(t, &a)| (a - q[t]).abs()).sum::<f64>() / 2.0
}

fn hcc_model(n: usize, seed: u64, beta: f64) -> (NaiveHcc, Hcc) {
    let w = oracle::random_weights(n, seed, 1.0);
    let hcc = Hcc::new(&oracle::lib_weights(&w), beta).unwrap();
    (NaiveHcc { w, beta }, hcc)
}

#[test]
fn tree_frequencies_match_posterior_n5() {
    const N: usize = 5; // 105 trees
    const K: usize = 200_000;
    let (beta, beta_other) = (1.0, 1.6);
    let (naive, hcc) = hcc_model(N, 11, beta);
    let exact = exact_posterior(&Brute::new(&naive));
    let bound = tv_bound(exact.len(), K);
    let t = Trellis::new(&hcc).unwrap();
    // The library's posterior is the oracle's (checked in `properties` too).
    for (tree, &p) in &exact {
        assert!((t.log_probability(tree).unwrap().exp() - p).abs() < 1e-12);
    }
    let samples = t.samples(K, 2024);
    for s in samples.iter().take(1000) {
        assert!(
            oracle::is_complete_over(s, N) && oracle::is_canonical(s),
            "sample {s}"
        );
    }
    let tv = empirical_tv(&samples, &exact);
    eprintln!(
        "n=5 hcc: TV(empirical, exact) = {tv:.5}, bound {bound:.5} (m = {}, K = {K})",
        exact.len()
    );
    assert!(tv <= bound, "sampler TV {tv} exceeds the bound {bound}");

    // Negative control: the same test rejects samples from the posterior at
    // another β, whose exact TV to the target exceeds twice the bound.
    let other_naive = NaiveHcc {
        w: naive.w.clone(),
        beta: beta_other,
    };
    let other_exact = exact_posterior(&Brute::new(&other_naive));
    let gap = exact_tv(&exact, &other_exact);
    assert!(
        gap > 2.0 * bound,
        "the control needs TV(p, q) = {gap} > 2 × bound = {}",
        2.0 * bound
    );
    let other = Trellis::new(hcc.with_beta(beta_other).unwrap()).unwrap();
    let wrong = other.samples(K, 2024);
    let tv_wrong = empirical_tv(&wrong, &exact);
    eprintln!("negative control: exact TV {gap:.5}, empirical TV {tv_wrong:.5}, bound {bound:.5}");
    assert!(
        tv_wrong > bound,
        "the test failed to reject samples at β = {beta_other} (TV {tv_wrong})"
    );
}

#[test]
fn tree_frequencies_match_posterior_user_model_n5() {
    // An asymmetric general model with forbidden splits: zero-probability trees
    // must never be sampled, and the frequencies follow the posterior.
    const N: usize = 5;
    const K: usize = 100_000;
    let model = HashModel {
        n: N,
        seed: 99,
        scale: 1.5,
        forbid: 96,
    };
    let brute = Brute::new(&model);
    let exact = exact_posterior(&brute);
    let zero = exact.values().filter(|&&p| p == 0.0).count();
    assert!(zero > 0, "the model should forbid some trees");
    let t = Trellis::new(&model).unwrap();
    let samples = t.samples(K, 5);
    for s in &samples {
        assert!(
            exact[&s.clone().canonical()] > 0.0,
            "sampled a forbidden tree {s}"
        );
    }
    let bound = tv_bound(exact.len() - zero, K);
    let tv = empirical_tv(&samples, &exact);
    eprintln!("n=5 user model: TV {tv:.5}, bound {bound:.5}");
    assert!(tv <= bound, "TV {tv} exceeds the bound {bound}");
}

/// Frequencies of every non-singleton proper cluster in the samples.
fn cluster_frequencies(n: usize, samples: &[Tree]) -> Vec<f64> {
    let mut counts = vec![0usize; 1 << n];
    for s in samples {
        for c in oracle::clusters_of(s) {
            counts[c as usize] += 1;
        }
    }
    counts
        .iter()
        .map(|&c| c as f64 / samples.len() as f64)
        .collect()
}

pub(crate) fn check_cluster_frequencies<M: Model>(
    name: &str,
    t: &Trellis<M>,
    samples: &[Tree],
) -> f64 {
    let n = t.num_points();
    let m = t.marginals().unwrap();
    let freq = cluster_frequencies(n, samples);
    let proper: Vec<Mask> = (1..t.root()).filter(|s| s.count_ones() >= 2).collect();
    let bound = cluster_bound(proper.len(), samples.len());
    let mut worst: f64 = 0.0;
    for &s in &proper {
        let d = (freq[s as usize] - m.p(s)).abs();
        worst = worst.max(d);
        assert!(
            d < bound,
            "{name}: cluster {s:#b}: frequency {} vs P = {} (bound {bound})",
            freq[s as usize],
            m.p(s)
        );
    }
    eprintln!("{name}: max |freq - P| = {worst:.5}, bound {bound:.5}");
    bound
}

/// A 10-point model with three groups (strong attraction inside, repulsion
/// across) plus noise, so that a few hundred trees carry most of the mass.
fn grouped_model(beta: f64) -> Hcc {
    let n = 10;
    let group = |i: usize| [0, 0, 0, 1, 1, 1, 1, 2, 2, 2][i];
    let mut g = oracle::Gen(4242);
    let upper: Vec<f64> = (0..n)
        .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
        .map(|(i, j)| {
            let base = if group(i) == group(j) { 1.0 } else { -1.0 };
            base + 0.6 * (2.0 * g.unit() - 1.0)
        })
        .collect();
    let w = oracle::symmetric(n, &upper);
    Hcc::new(&oracle::lib_weights(&w), beta).unwrap()
}

#[test]
fn cluster_frequencies_match_marginals_n10_cached_and_uncached() {
    const K: usize = 60_000;
    // Moderate β on random weights: many clusters with intermediate probabilities.
    let (_, hcc) = hcc_model(10, 31, 0.7);
    let t = Trellis::new(&hcc).unwrap();
    // Default sampler: the root (size 10) and size-9 clusters are cached.
    let mut sampler = t.sampler();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    let cached: Vec<Tree> = (0..K).map(|_| sampler.sample(&mut rng)).collect();
    assert!(
        !format!("{sampler:?}").contains("cached_clusters: 0"),
        "cache unused: {sampler:?}"
    );
    check_cluster_frequencies("n=10 cached", &t, &cached);
    // No cache at all: every draw scans.
    let mut sampler = t.sampler().with_budget(0);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
    let scanned: Vec<Tree> = (0..K).map(|_| sampler.sample(&mut rng)).collect();
    assert!(
        format!("{sampler:?}").contains("cached_clusters: 0"),
        "budget 0 cached: {sampler:?}"
    );
    check_cluster_frequencies("n=10 budget 0", &t, &scanned);
    // A budget for the root only (2^9 - 1 = 511 entries): mixed paths.
    let mut sampler = t.sampler().with_budget(511);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    let mixed: Vec<Tree> = (0..K).map(|_| sampler.sample(&mut rng)).collect();
    assert!(
        format!("{sampler:?}").contains("cached_clusters: 1"),
        "root-only cache: {sampler:?}"
    );
    check_cluster_frequencies("n=10 budget 511", &t, &mixed);
    for s in cached.iter().chain(&scanned).chain(&mixed).take(5000) {
        assert!(
            oracle::is_complete_over(s, 10) && oracle::is_canonical(s),
            "sample {s}"
        );
    }
}

#[test]
fn cluster_frequencies_negative_control_n10() {
    // Samples at another β must fail the Hoeffding bound against the target's
    // marginals: by the triangle inequality they do so (with probability
    // >= 1 - δ) when some cluster's exact marginals differ by more than twice the bound.
    const K: usize = 20_000;
    let (_, hcc) = hcc_model(10, 31, 0.7);
    let t = Trellis::new(&hcc).unwrap();
    let other = Trellis::new(hcc.with_beta(1.0).unwrap()).unwrap();
    let (m, mo) = (t.marginals().unwrap(), other.marginals().unwrap());
    let proper: Vec<Mask> = (1..t.root()).filter(|s| s.count_ones() >= 2).collect();
    let bound = cluster_bound(proper.len(), K);
    let gap = proper
        .iter()
        .map(|&s| (m.p(s) - mo.p(s)).abs())
        .fold(0.0, f64::max);
    assert!(
        gap > 2.0 * bound,
        "the control needs a marginal gap {gap} > {}",
        2.0 * bound
    );
    let wrong = other.samples(K, 9);
    let freq = cluster_frequencies(10, &wrong);
    let worst = proper
        .iter()
        .map(|&s| (freq[s as usize] - m.p(s)).abs())
        .fold(0.0, f64::max);
    eprintln!(
        "cluster negative control: exact gap {gap:.4}, empirical {worst:.4}, bound {bound:.4}"
    );
    assert!(
        worst >= bound,
        "the cluster test failed to reject samples at another β"
    );
}

#[test]
fn tree_frequencies_n10_cached_and_uncached() {
    // Trees over 10 points are too many to list (34 459 425), so the outcomes
    // are binned: the distinct trees of an independent pilot run (another
    // seed), and one bin for every other tree. The bins are fixed before the
    // tested samples are drawn, so the TV bound applies with m = bins.
    const K: usize = 40_000;
    let hcc = grouped_model(1.5);
    let t = Trellis::new(&hcc).unwrap();
    let mut pilot: HashMap<Tree, usize> = HashMap::new();
    for s in t.samples(4000, 77) {
        *pilot.entry(s).or_default() += 1;
    }
    let mut bins: Vec<(Tree, usize)> = pilot.into_iter().collect();
    bins.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then_with(|| a.0.to_string().cmp(&b.0.to_string()))
    });
    bins.truncate(150);
    let exact: Vec<f64> = bins
        .iter()
        .map(|(tree, _)| t.log_probability(tree).unwrap().exp())
        .collect();
    let rest = 1.0 - exact.iter().sum::<f64>();
    assert!(
        rest < 0.5,
        "the bins should carry most of the mass (rest {rest})"
    );
    let index: HashMap<&Tree, usize> = bins
        .iter()
        .enumerate()
        .map(|(i, (tree, _))| (tree, i))
        .collect();
    let m = bins.len() + 1;
    let bound = tv_bound(m, K);
    for (name, budget) in [
        ("cached", None),
        ("budget 0", Some(0)),
        ("budget 511", Some(511)),
    ] {
        let mut sampler = match budget {
            None => t.sampler(),
            Some(b) => t.sampler().with_budget(b),
        };
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1000 + budget.unwrap_or(1) as u64);
        let mut counts = vec![0usize; m];
        for _ in 0..K {
            let s = sampler.sample(&mut rng).canonical();
            counts[index.get(&s).copied().unwrap_or(m - 1)] += 1;
        }
        let l1: f64 = counts
            .iter()
            .zip(exact.iter().chain(std::iter::once(&rest)))
            .map(|(&c, &p)| (c as f64 / K as f64 - p).abs())
            .sum();
        let tv = l1 / 2.0;
        eprintln!("n=10 {name}: binned TV {tv:.5}, bound {bound:.5} ({m} bins, rest {rest:.3})");
        assert!(tv <= bound, "n=10 {name}: binned TV {tv} exceeds {bound}");
    }
}

#[test]
fn samples_are_reproducible() {
    let (_, hcc) = hcc_model(10, 5, 0.5);
    let t = Trellis::new(&hcc).unwrap();
    let a = t.samples(300, 7);
    assert_eq!(a, t.samples(300, 7), "same seed, same samples");
    assert_ne!(a, t.samples(300, 8), "different seeds, different samples");
    // Documented: xoshiro256++ seeded by SplitMix64 from the seed, one sampler.
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let mut sampler = t.sampler();
    let b: Vec<Tree> = (0..300).map(|_| sampler.sample(&mut rng)).collect();
    assert_eq!(
        a, b,
        "samples(k, seed) is a sampler driven by Xoshiro256PlusPlus::seed_from_u64(seed)"
    );
    // A one-off draw is a valid tree with finite probability.
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    let one = t.sampler().sample(&mut rng);
    assert!(oracle::is_complete_over(&one, 10) && t.log_probability(&one).unwrap().is_finite());
    // Degenerate sizes.
    for n in [1usize, 2] {
        let (_, h) = hcc_model(n, 1, 1.0);
        let tt = Trellis::new(&h).unwrap();
        for s in tt.samples(5, 0) {
            assert!(oracle::is_complete_over(&s, n), "n={n}: {s}");
        }
    }
}

#[test]
fn forbidden_splits_never_sampled_n10() {
    // A general model with forbidden splits at n = 10 (cached root, size-9
    // clusters) and without cache: every sample has a finite probability.
    let model = HashModel {
        n: 10,
        seed: 3,
        scale: 2.0,
        forbid: 200,
    };
    let t = Trellis::new(&model).unwrap();
    for s in t.samples(3000, 1) {
        assert!(
            t.log_probability(&s).unwrap().is_finite(),
            "sampled a forbidden tree {s}"
        );
    }
    let mut sampler = t.sampler().with_budget(0);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
    for _ in 0..3000 {
        let s = sampler.sample(&mut rng);
        assert!(
            t.log_probability(&s).unwrap().is_finite(),
            "sampled a forbidden tree {s}"
        );
    }
}
