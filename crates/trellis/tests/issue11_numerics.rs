//! Issue 11, numerics: exact answers at any temperature, and no overflowing
//! costs.
//!
//! Property tests over both trellises (hierarchical: the separable kernel and
//! the general one, `General(..)`; flat: the scaled kernel and the log-space
//! one, chosen by the range of the energies), `n` up to 12, β drawn
//! log-uniformly up to 1e300 and weights up to 1e150 (their product kept
//! within `f64`, which the models check: see `overflowing_costs_are_refused`).
//! The invariants, at every β:
//!
//! - `log Z` within `[log φ(MAP), log φ(MAP) + ln #structures]` (trees or
//!   partitions), and `log P(MAP)` within `[-ln #structures, 0]`;
//! - hierarchies: `P({x}) = P(X) = 1`, every `P(S)` in `[0, 1]`, and the
//!   non-singleton proper clusters sum to `n - 2`;
//! - partitions: every point's cluster marginals sum to 1, and the pairwise
//!   matrix is in `[0, 1]` with a unit diagonal and equals the sums of the
//!   cluster marginals;
//! - when `β · max |w|` is at least 1e20, every sample is a MAP structure: its
//!   log-potential (log-energy) is the MAP value up to rounding (`1e3` nats
//!   plus `1e-12` of the magnitudes summed) and its probability at least
//!   `1 / #structures`. (Mathematically tied structures, which hierarchical
//!   correlation clustering has many of, differ in the last bits of their
//!   costs; times β that decides between them, so "the" MAP is any of them.)
//!
//! and against brute force for `n <= 7`: the MAP value and `log Z` within the
//! oracle's `tol_log`; every marginal within `tol_p` when `tol_log` is small;
//! and at any β, when the structures within rounding of the MAP are separated
//! from all others by more than 60 nats, a cluster in all of them has
//! probability 1 and a cluster in none of them 0 (to 1e-9).

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use trellis::count::bell;
use trellis::flat::{FlatTrellis, tree_partitions};
use trellis::sparse::SparseTrellis;
use trellis::{
    Cluster, CorrelationClustering, Dasgupta, Energy, ErrorKind, General, Hcc, Mask, Model, Points,
    Set, Summarize, Trellis, Weights, baselines, tree_cost, tree_log_potential,
};

use crate::oracle::{
    self, Brute, EPS, NaiveDasgupta, NaiveHcc, RefModel, all, ln_double_factorial, log_sum_exp,
    points, tol_log,
};

/// Cases per property: each runs up to `n = 12` on four hierarchical trellises
/// and a flat one, about a second in all in the test profile.
const CASES: u32 = 40;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: CASES,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// One random problem: weights in `[-scale, scale]` and an inverse temperature.
#[derive(Clone, Debug)]
struct Instance {
    n: usize,
    w: Vec<Vec<f64>>,
    beta: f64,
    /// `β · scale`: at least 1e20 makes the samples MAP structures.
    beta_scale: f64,
}

/// `n` in `2..=max_n`, β = 10^U(-3, 300) (and 0 one time in eight), weights
/// of scale 10^U(-3, min(150, 300 - log10 β)).
fn instance(max_n: usize) -> impl Strategy<Value = Instance> {
    (
        2usize..=max_n,
        -3.0f64..=300.0,
        0.0f64..=1.0,
        any::<u64>(),
        0u8..8,
    )
        .prop_map(|(n, log_beta, u, seed, zero)| {
            let top = 150f64.min(300.0 - log_beta.max(0.0));
            let log_scale = -3.0 + u * (top + 3.0);
            let scale = 10f64.powf(log_scale);
            let beta = if zero == 0 { 0.0 } else { 10f64.powf(log_beta) };
            Instance {
                n,
                w: oracle::random_weights(n, seed, scale),
                beta,
                beta_scale: beta * scale,
            }
        })
}

/// Is the instance cold enough for the samples to be MAP structures?
fn cold(inst: &Instance) -> bool {
    inst.beta_scale >= 1e20
}

/// `ln Bell(n)`.
fn ln_bell(n: usize) -> f64 {
    bell(n).to_string().parse::<f64>().unwrap().ln()
}

/// Rounding slack of a log value `x`: a few ulps, and 1e-9 absolute.
fn slack(x: f64) -> f64 {
    8.0 * EPS * x.abs() + 1e-9
}

fn ensure(ok: bool, msg: impl FnOnce() -> String) -> Result<(), TestCaseError> {
    if ok {
        Ok(())
    } else {
        Err(TestCaseError::fail(msg()))
    }
}

// ---------------------------------------------------------------------------
// Hierarchies.

/// The invariants of one hierarchical trellis. `mag` bounds the summed
/// magnitudes of a tree's log-potentials (for the sample check).
fn check_hierarchy<M: Model>(
    name: &str,
    t: &Trellis<M>,
    cold: bool,
    mag: f64,
) -> Result<(), TestCaseError> {
    let n = t.num_points();
    let ln_k = ln_double_factorial(2 * n - 3);
    let (log_z, map) = (t.log_z(), t.map().log_potential);
    ensure(log_z.is_finite() && map.is_finite(), || {
        format!("{name}: log Z {log_z}, MAP {map}")
    })?;
    ensure(
        log_z >= map - slack(map) && log_z <= map + ln_k + slack(map),
        || format!("{name}: log Z {log_z} outside [{map}, {map} + {ln_k}]"),
    )?;
    let v = t.tree_log_potential(&t.map().tree).unwrap();
    ensure((v - map).abs() <= 1e-12 * mag + 1e-9, || {
        format!("{name}: log φ(MAP tree) {v} vs {map}")
    })?;
    let lp = t.log_probability(&t.map().tree).unwrap();
    ensure(lp <= 0.0 && lp >= -ln_k - 1e-9, || {
        format!("{name}: log P(MAP) = {lp}, ln #trees = {ln_k}")
    })?;
    let m = t.marginals().unwrap();
    for i in 0..n {
        ensure((m.p(1 << i) - 1.0).abs() <= 1e-9, || {
            format!("{name}: P({{{i}}}) = {}", m.p(1 << i))
        })?;
    }
    ensure((m.p(t.root()) - 1.0).abs() <= 1e-9, || {
        format!("{name}: P(root) = {}", m.p(t.root()))
    })?;
    let mut sum = 0.0;
    for s in 1..t.root() {
        let p = m.p(s);
        ensure((0.0..=1.0).contains(&p), || {
            format!("{name}: P({s:#b}) = {p}")
        })?;
        if s.count_ones() >= 2 {
            sum += p;
        }
    }
    let want = n as f64 - 2.0;
    ensure((sum - want).abs() <= 1e-9 * want.max(1.0), || {
        format!("{name}: Σ P(S) = {sum}, want {want}")
    })?;
    ensure(
        (m.subtree(&t.map().tree).unwrap() - lp.exp()).abs() <= 1e-9,
        || format!("{name}: P(MAP as a subtree) vs P(MAP)"),
    )?;
    if cold {
        for tree in t.samples(8, 7) {
            let v = t.tree_log_potential(&tree).unwrap();
            ensure((v - map).abs() <= 1e3 + 1e-12 * mag, || {
                format!("{name}: sample {tree} has log φ {v}, the MAP {map}")
            })?;
            let lp = t.log_probability(&tree).unwrap();
            ensure(lp >= -ln_k - 1e-9, || {
                format!("{name}: sample {tree} has log P {lp}")
            })?;
        }
    }
    Ok(())
}

/// Brute-force checks of a hierarchical trellis against a reference model.
fn check_hierarchy_brute<M: Model>(
    name: &str,
    t: &Trellis<M>,
    reference: &dyn RefModel,
) -> Result<(), TestCaseError> {
    let n = t.num_points();
    let b = Brute::new(reference);
    let tol = b.tol_log();
    let map = t.map().log_potential;
    ensure((map - b.map).abs() <= tol, || {
        format!("{name}: MAP {map} vs brute {} (tol {tol})", b.map)
    })?;
    ensure((t.log_z() - b.log_z).abs() <= tol, || {
        format!(
            "{name}: log Z {} vs brute {} (tol {tol})",
            t.log_z(),
            b.log_z
        )
    })?;
    let m = t.marginals().unwrap();
    if tol <= 1e-4 {
        for s in 1..=all(n) {
            ensure((m.p(s) - b.p(s)).abs() <= b.tol_p(), || {
                format!("{name}: P({s:#b}) {} vs brute {}", m.p(s), b.p(s))
            })?;
        }
    }
    // Trees within rounding of the MAP, and whether all others are far below.
    let delta = 2.0 * tol;
    let trees = oracle::trees(n);
    let near: Vec<usize> = (0..trees.len())
        .filter(|&k| b.log_phi[k] >= b.map - delta)
        .collect();
    let separated = b
        .log_phi
        .iter()
        .all(|&v| v >= b.map - delta || v < b.map - delta - 60.0);
    if separated {
        for s in 1..all(n) {
            if s.count_ones() < 2 {
                continue;
            }
            let holds = |k: &usize| trees[*k].splits.iter().any(|&(l, r)| l | r == s);
            let p = m.p(s);
            if near.iter().all(holds) {
                ensure(p >= 1.0 - 1e-9, || {
                    format!("{name}: P({s:#b}) = {p}, in every MAP tree")
                })?;
            } else if !near.iter().any(holds) {
                ensure(p <= 1e-9, || {
                    format!("{name}: P({s:#b}) = {p}, in no MAP tree")
                })?;
            }
        }
    }
    Ok(())
}

/// The sparse trellis of every cluster gives the dense answers (`n <= 8`).
fn check_sparse_hierarchy<M: Model, T: Model>(
    name: &str,
    model: &M,
    t: &Trellis<T>,
    cold: bool,
    mag: f64,
) -> Result<(), TestCaseError> {
    let n = t.num_points();
    let s = SparseTrellis::from_clusters(n, 1..=all(n) as Set).unwrap();
    let inf = s.infer(model).unwrap();
    let map = t.map().log_potential;
    ensure(
        (inf.log_z() - t.log_z()).abs() <= 1e-12 * mag + 1e-9,
        || format!("{name}: sparse log Z {} vs {}", inf.log_z(), t.log_z()),
    )?;
    ensure(
        inf.log_z() >= inf.map().log_potential - slack(map)
            && inf.log_z() <= inf.map().log_potential + ln_double_factorial(2 * n - 3) + 1e-9,
        || format!("{name}: sparse log Z {} vs its MAP", inf.log_z()),
    )?;
    let m = inf.marginals();
    let sum: f64 = (1..all(n))
        .filter(|c| c.count_ones() >= 2)
        .map(|c| m.p(c as Set))
        .sum();
    ensure((sum - (n as f64 - 2.0)).abs() <= 1e-9 * n as f64, || {
        format!("{name}: sparse Σ P(S) = {sum}")
    })?;
    if cold {
        for tree in inf.samples(8, 3) {
            let v = tree_log_potential(model, &tree).unwrap();
            ensure((v - map).abs() <= 1e3 + 1e-12 * mag, || {
                format!("{name}: sparse sample {tree} has log φ {v}, the MAP {map}")
            })?;
        }
    }
    Ok(())
}

/// `β · 3 n Σ|w|`, a bound on the magnitudes summed for a tree's log-potential.
fn tree_mag(w: &[Vec<f64>], beta: f64) -> f64 {
    let n = w.len();
    let total: f64 = w.iter().flatten().map(|v| v.abs()).sum::<f64>() / 2.0;
    beta * 3.0 * n as f64 * total + 1.0
}

fn hierarchies(inst: &Instance) -> Result<(), TestCaseError> {
    let (n, beta) = (inst.n, inst.beta);
    let weights = oracle::lib_weights(&inst.w);
    let abs = oracle::abs_matrix(&inst.w);
    let hcc = Hcc::new(&weights, beta).unwrap();
    let das = Dasgupta::new(&oracle::lib_weights(&abs), beta).unwrap();
    let mag = tree_mag(&inst.w, beta) * n as f64;
    let name = format!("n={n} β={beta:e} β·scale={:e}", inst.beta_scale);
    let cold = cold(inst);
    let a = Trellis::new(&hcc).unwrap();
    let b = Trellis::new(General(&hcc)).unwrap();
    let c = Trellis::new(&das).unwrap();
    let d = Trellis::new(General(&das)).unwrap();
    check_hierarchy(&format!("hcc {name}"), &a, cold, mag)?;
    check_hierarchy(&format!("General(hcc) {name}"), &b, cold, mag)?;
    check_hierarchy(&format!("dasgupta {name}"), &c, cold, mag)?;
    check_hierarchy(&format!("General(dasgupta) {name}"), &d, cold, mag)?;
    // The two kernels agree on the MAP value and log Z.
    for (x, y, what) in [
        (&a.log_z(), &b.log_z(), "hcc"),
        (&c.log_z(), &d.log_z(), "das"),
    ] {
        ensure((x - y).abs() <= 1e-12 * mag + 1e-9, || {
            format!("{what} {name}: log Z {x} vs General {y}")
        })?;
    }
    if n <= oracle::MAX_BRUTE {
        let naive_hcc = NaiveHcc {
            w: inst.w.clone(),
            beta,
        };
        let naive_das = NaiveDasgupta { w: abs, beta };
        check_hierarchy_brute(&format!("hcc {name}"), &a, &naive_hcc)?;
        check_hierarchy_brute(&format!("General(hcc) {name}"), &b, &naive_hcc)?;
        check_hierarchy_brute(&format!("dasgupta {name}"), &c, &naive_das)?;
        check_hierarchy_brute(&format!("General(dasgupta) {name}"), &d, &naive_das)?;
        check_sparse_hierarchy(&format!("hcc {name}"), &hcc, &a, cold, mag)?;
        check_sparse_hierarchy(&format!("dasgupta {name}"), &das, &c, cold, mag)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Partitions.

/// Every partition of `0..n` as cluster masks (restricted-growth strings).
fn partitions(n: usize) -> Vec<Vec<Mask>> {
    fn go(i: usize, n: usize, blocks: &mut Vec<Mask>, out: &mut Vec<Vec<Mask>>) {
        if i == n {
            out.push(blocks.clone());
            return;
        }
        for b in 0..blocks.len() {
            blocks[b] |= 1 << i;
            go(i + 1, n, blocks, out);
            blocks[b] &= !(1 << i);
        }
        blocks.push(1 << i);
        go(i + 1, n, blocks, out);
        blocks.pop();
    }
    let mut out = Vec::new();
    go(0, n, &mut Vec::new(), &mut out);
    out
}

/// `Σ log E(c)` of a partition, from the trellis's tabulated energies.
fn partition_log_energy<E: Energy>(t: &FlatTrellis<E>, p: &[Vec<usize>]) -> f64 {
    p.iter()
        .map(|c| {
            t.log_energy_of(c.iter().fold(0, |m, &i| m | 1 << i))
                .unwrap()
        })
        .sum()
}

/// The invariants of one flat trellis. `mag` bounds the summed magnitudes of
/// a partition's log-energies.
fn check_flat<E: Energy>(
    name: &str,
    t: &FlatTrellis<E>,
    cold: bool,
    mag: f64,
) -> Result<(), TestCaseError> {
    let n = t.num_points();
    let ln_b = ln_bell(n);
    let (log_z, map) = (t.log_z(), t.map().log_energy);
    ensure(log_z.is_finite() && map.is_finite(), || {
        format!("{name}: log Z {log_z}, MAP {map}")
    })?;
    ensure(
        log_z >= map - slack(map) && log_z <= map + ln_b + slack(map),
        || format!("{name}: log Z {log_z} outside [{map}, {map} + {ln_b}]"),
    )?;
    let v = partition_log_energy(t, &t.map().clusters);
    ensure((v - map).abs() <= 1e-12 * mag + 1e-9, || {
        format!("{name}: log E(MAP) {v} vs {map}")
    })?;
    let lp = t.log_probability(&t.map().clusters).unwrap();
    ensure(lp <= 0.0 && lp >= -ln_b - 1e-9, || {
        format!("{name}: log P(MAP) = {lp}, ln Bell = {ln_b}")
    })?;
    let m = t.marginals();
    let size = 1u32 << n;
    for i in 0..n {
        let s: f64 = (1..size).filter(|c| c >> i & 1 == 1).map(|c| m.p(c)).sum();
        ensure((s - 1.0).abs() <= 1e-9, || {
            format!("{name}: the clusters of point {i} sum to {s}")
        })?;
    }
    for c in 1..size {
        let p = m.p(c);
        ensure((0.0..=1.0).contains(&p), || {
            format!("{name}: P({c:#b}) = {p}")
        })?;
    }
    for i in 0..n {
        for j in 0..n {
            let p = m.pairwise(i, j).unwrap();
            ensure((0.0..=1.0).contains(&p), || {
                format!("{name}: P({i} ~ {j}) = {p}")
            })?;
            if i == j {
                ensure(p == 1.0, || format!("{name}: P({i} ~ {i}) = {p}"))?;
            } else {
                let sum: f64 = (1..size)
                    .filter(|c| c >> i & 1 == 1 && c >> j & 1 == 1)
                    .map(|c| m.p(c))
                    .sum();
                ensure((p - sum.min(1.0)).abs() <= 1e-9, || {
                    format!("{name}: P({i} ~ {j}) = {p}, Σ P(c) = {sum}")
                })?;
            }
        }
    }
    if cold {
        for p in t.samples(8, 5) {
            let v = partition_log_energy(t, &p);
            ensure((v - map).abs() <= 1e3 + 1e-12 * mag, || {
                format!("{name}: sample {p:?} has log E {v}, the MAP {map}")
            })?;
            let lp = t.log_probability(&p).unwrap();
            ensure(lp >= -ln_b - 1e-9, || {
                format!("{name}: sample {p:?} has log P {lp}")
            })?;
        }
    }
    Ok(())
}

/// Brute force over the Bell(n) partitions of correlation clustering.
fn check_flat_brute<E: Energy>(
    name: &str,
    t: &FlatTrellis<E>,
    w: &[Vec<f64>],
    beta: f64,
) -> Result<(), TestCaseError> {
    let n = t.num_points();
    let cluster = |c: Mask, f: &dyn Fn(f64) -> f64| {
        let p = points(c);
        let mut total = 0.0;
        for (a, &i) in p.iter().enumerate() {
            for &j in &p[a + 1..] {
                total += f(w[i][j]);
            }
        }
        beta * total
    };
    let all_p = partitions(n);
    let log_e: Vec<f64> = all_p
        .iter()
        .map(|p| p.iter().map(|&c| cluster(c, &|v| v)).sum())
        .collect();
    let mag = all_p
        .iter()
        .map(|p| p.iter().map(|&c| cluster(c, &f64::abs)).sum::<f64>())
        .fold(0.0, f64::max);
    let tol = tol_log(mag);
    let b_map = log_e.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let b_log_z = log_sum_exp(log_e.iter().copied());
    ensure((t.map().log_energy - b_map).abs() <= tol, || {
        format!("{name}: MAP {} vs brute {b_map}", t.map().log_energy)
    })?;
    ensure((t.log_z() - b_log_z).abs() <= tol, || {
        format!("{name}: log Z {} vs brute {b_log_z}", t.log_z())
    })?;
    let m = t.marginals();
    let p_of = |c: Mask| {
        let terms: Vec<f64> = all_p
            .iter()
            .zip(&log_e)
            .filter(|(p, _)| p.contains(&c))
            .map(|(_, &v)| v)
            .collect();
        (log_sum_exp(terms.iter().copied()) - b_log_z).exp()
    };
    if tol <= 1e-4 {
        for c in 1..=all(n) {
            ensure((m.p(c) - p_of(c)).abs() <= 5.0 * tol + 1e-12, || {
                format!("{name}: P({c:#b}) {} vs brute {}", m.p(c), p_of(c))
            })?;
        }
    }
    let delta = 2.0 * tol;
    let near: Vec<&Vec<Mask>> = all_p
        .iter()
        .zip(&log_e)
        .filter(|(_, v)| **v >= b_map - delta)
        .map(|(p, _)| p)
        .collect();
    let separated = log_e
        .iter()
        .all(|&v| v >= b_map - delta || v < b_map - delta - 60.0);
    if separated {
        for c in 1..=all(n) {
            let p = m.p(c);
            if near.iter().all(|q| q.contains(&c)) {
                ensure(p >= 1.0 - 1e-9, || {
                    format!("{name}: P({c:#b}) = {p}, in every MAP partition")
                })?;
            } else if !near.iter().any(|q| q.contains(&c)) {
                ensure(p <= 1e-9, || {
                    format!("{name}: P({c:#b}) = {p}, in no MAP partition")
                })?;
            }
        }
    }
    Ok(())
}

fn flat(inst: &Instance) -> Result<(), TestCaseError> {
    let (n, beta) = (inst.n, inst.beta);
    let cc = CorrelationClustering::new(&oracle::lib_weights(&inst.w), beta).unwrap();
    let t = FlatTrellis::new(&cc).unwrap();
    let name = format!("cc n={n} β={beta:e} β·scale={:e}", inst.beta_scale);
    let mag = tree_mag(&inst.w, beta);
    check_flat(&name, &t, cold(inst), mag)?;
    if n <= oracle::MAX_BRUTE {
        check_flat_brute(&name, &t, &inst.w, beta)?;
        // The sparse flat trellis of every cluster, and the cuts of the MAP tree.
        let s = SparseTrellis::flat(n, 1..=all(n) as Set).unwrap();
        let inf = s.infer_flat(&cc).unwrap();
        ensure(
            (inf.log_z() - t.log_z()).abs() <= 1e-12 * mag + 1e-9,
            || format!("{name}: sparse log Z {} vs {}", inf.log_z(), t.log_z()),
        )?;
        let tree = Trellis::new(Hcc::new(&oracle::lib_weights(&inst.w), 1.0).unwrap())
            .unwrap()
            .map()
            .tree
            .clone();
        let cuts = tree_partitions(&cc, &tree).unwrap();
        let cut_map = cuts.map().log_energy;
        ensure(
            cuts.log_z() >= cut_map - slack(cut_map)
                && cuts.log_z()
                    <= cut_map
                        + trellis::count::log10(&cuts.num_partitions()) * std::f64::consts::LN_10
                        + slack(cut_map),
            || format!("{name}: tree cuts log Z {} vs MAP {cut_map}", cuts.log_z()),
        )?;
        if cold(inst) {
            for p in inf.samples(8, 9) {
                let v = partition_log_energy(&t, &p);
                ensure((v - t.map().log_energy).abs() <= 1e3 + 1e-12 * mag, || {
                    format!("{name}: sparse sample {p:?} has log E {v}")
                })?;
            }
            for p in cuts.samples(8, 9) {
                let v = partition_log_energy(&t, &p);
                ensure((v - cut_map).abs() <= 1e3 + 1e-12 * mag, || {
                    format!("{name}: tree-cut sample {p:?} has log E {v}, MAP cut {cut_map}")
                })?;
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    /// Extreme β on the hierarchical trellis, both kernels, `n <= 12`.
    #[test]
    fn extreme_beta_hierarchies(inst in instance(12)) {
        hierarchies(&inst)?;
    }

    /// Extreme β on the flat trellis (scaled and log-space kernels), `n <= 12`.
    #[test]
    fn extreme_beta_partitions(inst in instance(12)) {
        flat(&inst)?;
    }

    /// Extreme β against brute force, `n <= 7`.
    #[test]
    fn extreme_beta_brute_force(inst in instance(oracle::MAX_BRUTE)) {
        hierarchies(&inst)?;
        flat(&inst)?;
    }
}

// ---------------------------------------------------------------------------
// The examples and the other classes.

/// The weights of the examples: `n` points, uniform in `[-1, 1]`.
fn unit_weights(n: usize, seed: u64) -> Weights {
    oracle::lib_weights(&oracle::random_weights(n, seed, 1.0))
}

/// Extreme β: `flat logz` at β = 1e10 on 8 points gave log Z ≈ -1.5e9 (an
/// `i32` exponent wrapped) while the MAP's log-energy was 3e10; at larger β
/// `log Z` was NaN, every cluster had p = 1 and samples were not the MAP.
#[test]
fn extreme_beta_flat_examples() {
    let w = unit_weights(8, 11);
    for beta in [1e8, 1e10, 1e15, 1e50, 1e200, 1e300] {
        let cc = CorrelationClustering::new(&w, beta).unwrap();
        let t = FlatTrellis::new(&cc).unwrap();
        let map = t.map().log_energy;
        assert!(map > 0.0, "β {beta}: the MAP keeps positive weight: {map}");
        let lz = t.log_z();
        assert!(
            lz >= map && lz <= map + ln_bell(8) + slack(map),
            "β {beta}: {lz} vs {map}"
        );
        // The MAP at β = 1 is the MAP at any β > 0 (up to ties).
        let at_one = FlatTrellis::new(CorrelationClustering::new(&w, 1.0).unwrap()).unwrap();
        assert_eq!(t.map().clusters, at_one.map().clusters, "β {beta}");
        let m = t.marginals();
        for c in &t.map().clusters {
            let mask = c.iter().fold(0, |m, &i| m | 1 << i);
            assert!(
                (m.p(mask) - 1.0).abs() < 1e-12,
                "β {beta}: P({c:?}) = {}",
                m.p(mask)
            );
        }
        let total: f64 = (1..1u32 << 8).map(|c| m.p(c)).sum();
        assert!(
            (total - t.map().clusters.len() as f64).abs() < 1e-9,
            "β {beta}: {total}"
        );
        for s in t.samples(20, 1) {
            assert_eq!(s, t.map().clusters, "β {beta}");
        }
    }
}

/// Extreme β: hierarchical `marginals` drifted from β ≈ 1e9 (Σ P(S) = 7.99 on
/// 10 points) and at β = 1e50 gave 11 clusters of p = 1. Huge weights at β = 1
/// did the same.
#[test]
fn extreme_beta_hierarchy_examples() {
    let w = unit_weights(10, 5);
    let scaled = |k: f64| {
        oracle::lib_weights(
            &oracle::random_weights(10, 5, 1.0)
                .iter()
                .map(|r| r.iter().map(|v| v * k).collect())
                .collect::<Vec<Vec<f64>>>(),
        )
    };
    let models = [
        Hcc::new(&w, 1e9).unwrap(),
        Hcc::new(&w, 1e50).unwrap(),
        Hcc::new(&w, 1e300).unwrap(),
        Hcc::new(&scaled(1e200), 1.0).unwrap(),
    ];
    for hcc in &models {
        for general in [false, true] {
            let (log_z, map, m, samples, log_p) = if general {
                let t = Trellis::new(General(hcc)).unwrap();
                let lp = t.log_probability(&t.map().tree).unwrap();
                (
                    t.log_z(),
                    t.map().clone(),
                    t.marginals().unwrap().clusters(0.0),
                    t.samples(10, 2),
                    lp,
                )
            } else {
                let t = Trellis::new(hcc).unwrap();
                let lp = t.log_probability(&t.map().tree).unwrap();
                (
                    t.log_z(),
                    t.map().clone(),
                    t.marginals().unwrap().clusters(0.0),
                    t.samples(10, 2),
                    lp,
                )
            };
            let what = format!("β {} general {general}", hcc.beta());
            let v = map.log_potential;
            assert!(
                log_z >= v - slack(v) && log_z <= v + ln_double_factorial(17) + slack(v),
                "{what}"
            );
            let sum: f64 = m.iter().map(|c| c.1).sum();
            assert!((sum - 8.0).abs() < 1e-9, "{what}: Σ P = {sum}");
            assert!(m.iter().all(|c| c.1 <= 1.0), "{what}");
            let certain = m.iter().filter(|c| c.1 > 1.0 - 1e-9).count();
            assert!(certain <= 8, "{what}: {certain} clusters of p = 1");
            assert!(
                log_p <= 0.0 && log_p >= -ln_double_factorial(17),
                "{what}: {log_p}"
            );
            for s in samples {
                let c = tree_cost(hcc, &s).unwrap();
                let best = tree_cost(hcc, &map.tree).unwrap();
                assert!(
                    (c - best).abs() <= 1e-12 * best.abs().max(1.0),
                    "{what}: {s} costs {c}, MAP {best}"
                );
            }
        }
    }
}

/// The flat kernels agree: an energy with one cluster at `log E = -1e300`
/// runs the log-space kernel, the same with `-∞` the scaled one; the answers
/// are the same (that cluster's energy is 0 at any precision).
#[test]
fn flat_kernels_agree() {
    struct Table {
        n: usize,
        e: Vec<f64>,
    }
    impl Summarize for Table {
        type Summary = Mask;
        fn num_points(&self) -> usize {
            self.n
        }
        fn leaf(&self, i: usize) -> Mask {
            1 << i
        }
        fn merge(&self, a: Cluster<'_, Mask>, b: Cluster<'_, Mask>) -> Mask {
            a.summary | b.summary
        }
    }
    impl Energy for Table {
        fn log_energy(&self, c: &Mask) -> f64 {
            self.e[*c as usize]
        }
    }
    for n in [3usize, 6, 9] {
        let mut g = oracle::Gen(n as u64);
        let e: Vec<f64> = (0..1usize << n).map(|_| 3.0 * g.unit() - 1.5).collect();
        let far = (1u32 << n) - 2; // {1, .., n-1}
        let mut a = e.clone();
        a[far as usize] = -1e300;
        let mut b = e;
        b[far as usize] = f64::NEG_INFINITY;
        let (ta, tb) = (
            FlatTrellis::new(Table { n, e: a }).unwrap(),
            FlatTrellis::new(Table { n, e: b }).unwrap(),
        );
        assert!((ta.log_z() - tb.log_z()).abs() < 1e-12, "n {n}");
        assert_eq!(ta.map(), tb.map(), "n {n}");
        let (ma, mb) = (ta.marginals(), tb.marginals());
        for c in 1..1u32 << n {
            assert!(
                (ma.p(c) - mb.p(c)).abs() < 1e-12,
                "n {n}: P({c:#b}) {} vs {}",
                ma.p(c),
                mb.p(c)
            );
        }
        assert_eq!(ma.p(far), 0.0);
        assert_eq!(ta.samples(50, 3), tb.samples(50, 3), "n {n}");
        let p = &ta.map().clusters;
        assert!((ta.log_probability(p).unwrap() - tb.log_probability(p).unwrap()).abs() < 1e-12);
    }
}

/// All-impossible clusters: every weight -1e308 (every cluster of two or more
/// points has log E = -1e308 or overflows to -∞) used to be refused with
/// "every hierarchy has zero potential"; the all-singletons partition has
/// energy 1.
#[test]
fn all_impossible_clusters_give_singletons() {
    for n in [2usize, 6, 9] {
        let w = oracle::lib_weights(&oracle::symmetric(n, &vec![-1e308; n * (n - 1) / 2]));
        for beta in [1.0, 1e-300, 1e300] {
            let cc = CorrelationClustering::new(&w, beta).unwrap();
            let t = FlatTrellis::new(&cc).unwrap();
            let singletons: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
            assert_eq!(t.map().clusters, singletons, "n {n} β {beta}");
            assert_eq!(t.map().log_energy, 0.0);
            assert_eq!(t.log_z(), 0.0, "n {n} β {beta}");
            let m = t.marginals();
            for i in 0..n {
                assert_eq!(m.p(1 << i), 1.0);
            }
            assert_eq!(t.samples(5, 1), vec![singletons.clone(); 5]);
            assert_eq!(t.log_probability(&singletons).unwrap(), 0.0);
        }
        // β = 0: every energy is 1, even where the weight inside overflowed.
        let t = FlatTrellis::new(CorrelationClustering::new(&w, 0.0).unwrap()).unwrap();
        assert!((t.log_z() - ln_bell(n)).abs() < 1e-12);
    }
    // When nothing at all is allowed the message speaks of partitions.
    struct Nothing;
    impl Summarize for Nothing {
        type Summary = ();
        fn num_points(&self) -> usize {
            3
        }
        fn leaf(&self, _: usize) {}
        fn merge(&self, _: Cluster<'_, ()>, _: Cluster<'_, ()>) {}
    }
    impl Energy for Nothing {
        fn log_energy(&self, _: &()) -> f64 {
            f64::NEG_INFINITY
        }
    }
    let e = FlatTrellis::new(Nothing).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::NoPartition), "{e:?}");
    assert!(
        e.to_string().contains("partition") && !e.to_string().contains("hierarch"),
        "{e}"
    );
}

/// Overflowing costs: the models refuse weights whose costs, or whose
/// log-potentials at β, could overflow `f64` (greedy and beam search printed
/// `"cost": null` on weights near 1e308), with a message saying so; what they
/// accept gives finite costs and log-potentials everywhere.
#[test]
fn overflowing_costs_are_refused() {
    let huge =
        |n: usize, v: f64| oracle::lib_weights(&oracle::symmetric(n, &vec![v; n * (n - 1) / 2]));
    let too_large = |r: trellis::Result<()>, needle: &str| {
        let e = r.unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Parameter { .. }), "{e:?}");
        let msg = e.to_string();
        assert!(msg.contains(needle), "{msg:?} lacks {needle:?}");
        assert!(
            !msg.contains("--"),
            "a library message names no flag: {msg}"
        );
    };
    for v in [1e308, -1e308, 1e306] {
        let w = huge(6, v);
        too_large(Hcc::new(&w, 1.0).map(|_| ()), "weights are too large");
        too_large(Hcc::new(&w, 0.0).map(|_| ()), "weights are too large");
    }
    too_large(
        Dasgupta::new(&huge(6, 1e308), 1.0).map(|_| ()),
        "weights are too large",
    );
    too_large(
        CorrelationClustering::new(&huge(6, 1e308), 1.0).map(|_| ()),
        "weights are too large",
    );
    // β times a finite cost.
    let w = huge(6, 1e10);
    too_large(Hcc::new(&w, 1e300).map(|_| ()), "beta = 1e300 is too large");
    too_large(
        Dasgupta::new(&w, 1e300).map(|_| ()),
        "beta = 1e300 is too large",
    );
    too_large(
        CorrelationClustering::new(&w, 1e300).map(|_| ()),
        "beta = 1e300 is too large",
    );
    let hcc = Hcc::new(&w, 1.0).unwrap();
    too_large(hcc.with_beta(1e300).map(|_| ()), "beta");
    // Huge negative weights with a vanishing β.
    too_large(
        CorrelationClustering::new(&huge(6, -1e308), 1e-305).map(|_| ()),
        "too small",
    );
    // Just inside the range: every value finite, on every algorithm.
    let w = huge(6, 1e300);
    for beta in [0.0, 1.0, 100.0] {
        let hcc = Hcc::new(&w, beta).unwrap();
        let das = Dasgupta::new(&w, beta).unwrap();
        let g = baselines::greedy(&hcc).unwrap();
        assert!(g.log_potential.is_finite() && tree_cost(&hcc, &g.tree).unwrap().is_finite());
        let b = baselines::beam_search(&das, 5).unwrap();
        assert!(b[0].log_potential.is_finite() && tree_cost(&das, &b[0].tree).unwrap().is_finite());
        let t = Trellis::new(&hcc).unwrap();
        assert!(t.log_z().is_finite() && t.map().log_potential.is_finite());
        let lp = tree_log_potential(&das, &t.map().tree).unwrap();
        assert!(lp.is_finite());
        let s = das.summary(Points::Mask(0b111111));
        assert!(s.inside.is_finite());
    }
}

/// Extreme β within the scaled kernel's range: the relative part of `Z(S)`
/// is kept as computed even when a rounding puts it below 0 (`e^{log M(S)}`
/// is rounded from a sum of logs, the sum holds the products themselves), so
/// the flat marginals of every point still sum to 1 to a few roundings. (The
/// clamped parts drifted by `|log Z| · 2^-52`: 3.5e-10 at log Z = 5e6, past
/// 1e-9 near the range limit.)
#[test]
fn extreme_beta_scaled_range_keeps_identities() {
    for n in [8usize, 10] {
        for k in 0..60 {
            let beta = 10f64.powf(2.0 + k as f64 * 0.1);
            let w = unit_weights(n, k as u64 + 100 * n as u64);
            let t = FlatTrellis::new(CorrelationClustering::new(&w, beta).unwrap()).unwrap();
            let m = t.marginals();
            for i in 0..n {
                let s: f64 = (1..1u32 << n)
                    .filter(|c| c >> i & 1 == 1)
                    .map(|c| m.p(c))
                    .sum();
                assert!(
                    (s - 1.0).abs() < 1e-13,
                    "n {n} β {beta:e}: point {i} sums to {s}"
                );
            }
            let map = t.map().log_energy;
            assert!(t.log_z() >= map - slack(map), "n {n} β {beta:e}");
        }
    }
}
