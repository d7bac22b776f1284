//! The flat cluster trellis (`trellis::flat`) against an independent brute
//! force over all Bell(n) partitions, `n <= 8`.
//!
//! # The oracle
//!
//! A partition of the points `0..n` is a restricted-growth string: point 0 is
//! in block 0 and point `i` is in one of the blocks used so far or in a new
//! one. Each string is a distinct partition and every partition has one, so
//! the enumeration below lists exactly Bell(n) partitions (checked against
//! the known values and for distinctness). From that list, with cluster
//! log-energies computed here from the raw weight matrix (or by a test model):
//! `log Z` by a stable log-sum-exp, the MAP value by a max, `log Z(S)` of a
//! subset over the partitions of its points, the marginal of every cluster and
//! the pairwise co-clustering matrix by summing partition probabilities.
//! Only the `Mask` and `Tree` types come from the library.
//!
//! # Tolerances
//!
//! `oracle::tol_log(mag) = 256 ε · mag + 1e-12`, with `mag` the largest, over
//! partitions, of the summed magnitudes of the numbers added to get their
//! log-energy (`β Σ |w_ij|` over the pairs kept inside clusters for
//! correlation clustering, `Σ |log E(c)|` for a model whose log-energies are
//! given). Each cluster's `log E` is a sum of at most 28 weights on either side
//! (`27 ε` each) times β, and a partition adds at most 8 of them: a
//! partition's log-energy is within about `64 ε · mag` on both sides. The sums
//! over partitions (at most `2^7` terms per subset and 8 nested levels in the
//! library, a log-sum-exp of at most 4140 terms here) add a relative error of a
//! few hundred `ε` to `Z`, i.e. below `1e-12` absolute to `log Z`. Probabilities
//! `p = e^{a + b - c}` with each log term within `tol_log` are within
//! `tol_p = 5 tol_log + 1e-12` (as in the oracle); the pairwise matrix adds at
//! most `2^(n-2)` (library) or Bell(n) (here) such probabilities of total at
//! most 1, so it gets `tol_p + Bell(n) ε`.
//!
//! # Sampling bounds
//!
//! As in `sampling.rs`: for `m` outcomes and `K` samples, with probability
//! `>= 1 - δ`, `TV(p̂, p) <= (sqrt((m-1)/K) + sqrt(2 ln(1/δ)/K)) / 2`
//! (expectation by Cauchy-Schwarz, concentration by McDiarmid). For the
//! `N = n(n-1)/2` pairwise co-clustering frequencies, Hoeffding and a union
//! bound give every `|f_ij - P(i~j)| < sqrt(ln(2N/δ) / (2K))`. A negative
//! control at another β, whose exact distance to the target is asserted to be
//! over twice the bound, must fail each bound. `δ = 1e-6`; the seeds are fixed.

use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use num_bigint::BigUint;
use proptest::prelude::*;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use trellis::count::bell;
use trellis::flat::{FlatTrellis, Partition, perturb_and_map, tree_partitions};
use trellis::sparse::SparseTrellis;
use trellis::{
    Cluster, CorrelationClustering, Energy, ErrorKind, Mask, Options, Points, Progress, Set,
    Summarize, Tree,
};

use crate::oracle::{self, EPS, Gen, all, log_sum_exp, points, splitmix, tol_log, unit};

/// The largest `n` enumerated (Bell(8) = 4140 partitions).
const MAX_FLAT: usize = 8;

/// Bell(0..=8), the known values.
const BELL: [u64; 9] = [1, 1, 2, 5, 15, 52, 203, 877, 4140];

const DELTA: f64 = 1e-6;

// ---------------------------------------------------------------------------
// The brute force.

/// Every partition of `0..n` (restricted-growth strings), as cluster masks in
/// order of their smallest point.
fn enumerate_partitions(n: usize) -> Vec<Vec<Mask>> {
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

/// The partitions of `0..n`, `n <= MAX_FLAT`, cached.
fn partitions(n: usize) -> &'static [Vec<Mask>] {
    static CACHE: OnceLock<Vec<Vec<Vec<Mask>>>> = OnceLock::new();
    assert!(n <= MAX_FLAT, "brute force only up to n = {MAX_FLAT}");
    &CACHE.get_or_init(|| (0..=MAX_FLAT).map(enumerate_partitions).collect())[n]
}

/// Every partition of the points of `s` (one, empty, for `s = 0`).
fn partitions_of(s: Mask) -> Vec<Vec<Mask>> {
    let pts = points(s);
    partitions(pts.len())
        .iter()
        .map(|p| {
            p.iter()
                .map(|&b| points(b).into_iter().fold(0, |m, k| m | 1 << pts[k]))
                .collect()
        })
        .collect()
}

/// A partition as the library writes it: sorted clusters of sorted points.
fn to_partition(p: &[Mask]) -> Partition {
    let mut out: Partition = p.iter().map(|&m| points(m)).collect();
    out.sort();
    out
}

/// Checks that `p` is a partition of `0..n` in the library's documented form
/// (non-empty clusters of strictly increasing points, clusters ordered by
/// their smallest point) and returns its masks.
fn check_partition(p: &[Vec<usize>], n: usize) -> Vec<Mask> {
    let mut seen: Mask = 0;
    let mut masks = Vec::new();
    for (k, c) in p.iter().enumerate() {
        assert!(!c.is_empty(), "empty cluster in {p:?}");
        assert!(
            c.windows(2).all(|w| w[0] < w[1]),
            "unsorted cluster in {p:?}"
        );
        if k > 0 {
            assert!(p[k - 1][0] < c[0], "clusters out of order in {p:?}");
        }
        let mut m: Mask = 0;
        for &i in c {
            assert!(i < n, "point {i} out of range in {p:?}");
            m |= 1 << i;
        }
        assert_eq!(seen & m, 0, "overlapping clusters in {p:?}");
        seen |= m;
        masks.push(m);
    }
    assert_eq!(seen, all(n), "{p:?} is not a partition of {n} points");
    masks
}

/// Correlation clustering's `log E(c) = β Σ_{i<j ∈ c} w_ij`, from the raw matrix.
fn cc_log_e(w: &[Vec<f64>], beta: f64, c: Mask) -> f64 {
    let p = points(c);
    let mut total = 0.0;
    for (a, &i) in p.iter().enumerate() {
        for &j in &p[a + 1..] {
            total += w[i][j];
        }
    }
    beta * total
}

/// Bound on the magnitudes summed to get `cc_log_e`: `β Σ |w_ij|`.
fn cc_mag(w: &[Vec<f64>], beta: f64, c: Mask) -> f64 {
    let p = points(c);
    let mut total = 0.0;
    for (a, &i) in p.iter().enumerate() {
        for &j in &p[a + 1..] {
            total += w[i][j].abs();
        }
    }
    beta * total
}

/// Everything the brute force knows about one energy over `n <= 8` points.
pub(crate) struct FlatBrute {
    n: usize,
    /// `log E` of every mask (index 0 unused).
    e: Vec<f64>,
    /// `log E` of every partition, in the order of [`partitions`].
    log_e: Vec<f64>,
    log_z: f64,
    map: f64,
    /// See the module docs.
    mag: f64,
    /// `log P(c)` of every mask (`-∞` for 0).
    log_marg: Vec<f64>,
    /// `P(i ~ j)`.
    pair: Vec<Vec<f64>>,
}

impl FlatBrute {
    fn new(n: usize, energy: impl Fn(Mask) -> f64, magnitude: impl Fn(Mask) -> f64) -> FlatBrute {
        let size = 1usize << n;
        let e: Vec<f64> = (0..size)
            .map(|c| if c == 0 { 0.0 } else { energy(c as Mask) })
            .collect();
        let m: Vec<f64> = (0..size)
            .map(|c| {
                if c == 0 || e[c] == f64::NEG_INFINITY {
                    0.0
                } else {
                    magnitude(c as Mask)
                }
            })
            .collect();
        let parts = partitions(n);
        let log_e: Vec<f64> = parts
            .iter()
            .map(|p| p.iter().map(|&c| e[c as usize]).sum())
            .collect();
        let mag = parts
            .iter()
            .map(|p| p.iter().map(|&c| m[c as usize]).sum::<f64>())
            .fold(0.0, f64::max);
        let log_z = log_sum_exp(log_e.iter().copied());
        let map = log_e.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mut members: Vec<Vec<f64>> = vec![Vec::new(); size];
        let mut pair = vec![vec![0.0; n]; n];
        for (p, &le) in parts.iter().zip(&log_e) {
            let prob = (le - log_z).exp();
            for &c in p {
                members[c as usize].push(le);
                let pts = points(c);
                for &i in &pts {
                    for &j in &pts {
                        if i != j {
                            pair[i][j] += prob;
                        }
                    }
                }
            }
        }
        for (i, row) in pair.iter_mut().enumerate() {
            row[i] = 1.0;
        }
        let log_marg = members
            .iter()
            .map(|v| log_sum_exp(v.iter().copied()) - log_z)
            .collect();
        FlatBrute {
            n,
            e,
            log_e,
            log_z,
            map,
            mag,
            log_marg,
            pair,
        }
    }

    pub(crate) fn cc(w: &[Vec<f64>], beta: f64) -> FlatBrute {
        FlatBrute::new(w.len(), |c| cc_log_e(w, beta, c), |c| cc_mag(w, beta, c))
    }

    /// `log Z(S)` over the partitions of the points of `s`.
    fn log_z_of(&self, s: Mask) -> f64 {
        log_sum_exp(
            partitions_of(s)
                .iter()
                .map(|p| p.iter().map(|&c| self.e[c as usize]).sum::<f64>())
                .collect::<Vec<f64>>(),
        )
    }

    fn tol_log(&self) -> f64 {
        tol_log(self.mag)
    }

    fn tol_p(&self) -> f64 {
        5.0 * self.tol_log() + 1e-12
    }

    /// Canonical partitions (masks sorted) with their exact probabilities.
    fn distribution(&self) -> HashMap<Vec<Mask>, f64> {
        partitions(self.n)
            .iter()
            .zip(&self.log_e)
            .map(|(p, &le)| (canonical(p), (le - self.log_z).exp()))
            .collect()
    }
}

/// A partition's masks, sorted: the key of a partition.
fn canonical(p: &[Mask]) -> Vec<Mask> {
    let mut v = p.to_vec();
    v.sort_unstable();
    v
}

/// `got` equals `want` within `tol`; `-∞` must be exact.
fn assert_close(what: &str, got: f64, want: f64, tol: f64) {
    if want == f64::NEG_INFINITY {
        assert_eq!(got, f64::NEG_INFINITY, "{what}: got {got}, want -inf");
    } else {
        assert!(
            got.is_finite() && (got - want).abs() <= tol,
            "{what}: got {got}, want {want} (diff {:e}, tol {tol:e})",
            (got - want).abs()
        );
    }
}

// ---------------------------------------------------------------------------
// A user-defined energy.

/// `log E(c) = by_size[|c|] + noise · u(c)` with `u(c)` hashed in `[-1, 1]`;
/// a hashed fraction `forbid / 256` of the clusters is forbidden (`-∞`):
/// only clusters of two points or more, or singletons too when
/// `forbid_singletons` (the whole set never, so `Z > 0`). Counts its calls and
/// checks that it is only asked about non-empty subsets of its points.
struct SizeEnergy {
    n: usize,
    seed: u64,
    by_size: Vec<f64>,
    noise: f64,
    forbid: u64,
    forbid_singletons: bool,
    calls: AtomicUsize,
}

impl SizeEnergy {
    fn random(n: usize, seed: u64, offset: f64, forbid: u64, forbid_singletons: bool) -> Self {
        let mut g = Gen(seed);
        SizeEnergy {
            n,
            seed,
            by_size: (0..=n)
                .map(|k| offset * k as f64 + 4.0 * g.unit() - 2.0)
                .collect(),
            noise: 1.0,
            forbid,
            forbid_singletons,
            calls: AtomicUsize::new(0),
        }
    }

    fn value(&self, c: Mask) -> f64 {
        let h = splitmix(self.seed ^ splitmix(c as u64));
        let k = c.count_ones() as usize;
        if c != all(self.n) && (k >= 2 || self.forbid_singletons) && (h & 0xff) < self.forbid {
            return f64::NEG_INFINITY;
        }
        self.by_size[k] + self.noise * (2.0 * unit(h >> 8) - 1.0)
    }

    fn brute(&self) -> FlatBrute {
        FlatBrute::new(self.n, |c| self.value(c), |c| self.value(c).abs())
    }
}

impl Summarize for SizeEnergy {
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

impl Energy for SizeEnergy {
    fn log_energy(&self, cluster: &Mask) -> f64 {
        let cluster = *cluster;
        assert!(
            cluster != 0 && cluster & !all(self.n) == 0,
            "log_energy({cluster:#b}) with n = {}",
            self.n
        );
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.value(cluster)
    }
}

/// An energy given by a closure, for the error cases.
struct FnEnergy<F> {
    n: usize,
    f: F,
    calls: AtomicUsize,
}

impl<F: Fn(Mask) -> f64 + Sync> FnEnergy<F> {
    fn new(n: usize, f: F) -> Self {
        FnEnergy {
            n,
            f,
            calls: AtomicUsize::new(0),
        }
    }
}

impl<F: Fn(Mask) -> f64 + Sync> Summarize for FnEnergy<F> {
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

impl<F: Fn(Mask) -> f64 + Sync> Energy for FnEnergy<F> {
    fn log_energy(&self, cluster: &Mask) -> f64 {
        self.calls.fetch_add(1, Ordering::Relaxed);
        (self.f)(*cluster)
    }
}

/// An energy given by a closure of a cluster's 128-bit set, for the sparse
/// trellis (any number of points up to 128).
struct SetEnergy<F> {
    n: usize,
    f: F,
}

impl<F: Fn(Set) -> f64 + Sync> SetEnergy<F> {
    fn new(n: usize, f: F) -> Self {
        SetEnergy { n, f }
    }
}

impl<F: Fn(Set) -> f64 + Sync> Summarize for SetEnergy<F> {
    type Summary = Set;
    fn num_points(&self) -> usize {
        self.n
    }
    fn leaf(&self, i: usize) -> Set {
        1 << i
    }
    fn merge(&self, a: Cluster<'_, Set>, b: Cluster<'_, Set>) -> Set {
        a.summary | b.summary
    }
}

impl<F: Fn(Set) -> f64 + Sync> Energy for SetEnergy<F> {
    fn log_energy(&self, cluster: &Set) -> f64 {
        (self.f)(*cluster)
    }
}

/// An energy given by a closure of a cluster's sorted points, for the
/// partitions cutting a tree.
struct PointsEnergy<F> {
    n: usize,
    f: F,
}

impl<F: Fn(&[usize]) -> f64 + Sync> PointsEnergy<F> {
    fn new(n: usize, f: F) -> Self {
        PointsEnergy { n, f }
    }
}

impl<F: Fn(&[usize]) -> f64 + Sync> Summarize for PointsEnergy<F> {
    type Summary = Vec<usize>;
    fn num_points(&self) -> usize {
        self.n
    }
    fn leaf(&self, i: usize) -> Vec<usize> {
        vec![i]
    }
    fn merge(&self, a: Cluster<'_, Vec<usize>>, b: Cluster<'_, Vec<usize>>) -> Vec<usize> {
        let mut v = [a.summary.as_slice(), b.summary.as_slice()].concat();
        v.sort_unstable();
        v
    }
}

impl<F: Fn(&[usize]) -> f64 + Sync> Energy for PointsEnergy<F> {
    fn log_energy(&self, cluster: &Vec<usize>) -> f64 {
        (self.f)(cluster)
    }
}

// ---------------------------------------------------------------------------
// Checking a trellis against the brute force.

#[allow(clippy::needless_range_loop)] // (i, j) index two matrices
pub(crate) fn check_against_brute<E: Energy>(name: &str, t: &FlatTrellis<E>, b: &FlatBrute) {
    let n = b.n;
    let (tl, tp) = (b.tol_log(), b.tol_p());
    let tpair = tp + BELL[n] as f64 * EPS;
    assert_eq!(t.num_points(), n, "{name}");
    assert_eq!(t.num_partitions(), BigUint::from(BELL[n]), "{name}");
    for c in 1..=all(n) {
        assert_close(
            &format!("{name}: log E({c:#b})"),
            t.log_energy_of(c).unwrap(),
            b.e[c as usize],
            tl,
        );
    }
    assert_close(&format!("{name}: log Z"), t.log_z(), b.log_z, tl);
    for s in 0..=all(n) {
        assert_close(
            &format!("{name}: log Z({s:#b})"),
            t.log_z_of(s).unwrap(),
            b.log_z_of(s),
            tl,
        );
    }
    // MAP: the value, and a partition achieving it (ties: value, not identity).
    assert_close(&format!("{name}: MAP"), t.map().log_energy, b.map, tl);
    let map = &t.map().clusters;
    let masks = check_partition(map, n);
    let value: f64 = masks.iter().map(|&c| b.e[c as usize]).sum();
    assert_close(&format!("{name}: energy of {map:?}"), value, b.map, tl);
    // The probability of every partition.
    for (p, &le) in partitions(n).iter().zip(&b.log_e) {
        let part = to_partition(p);
        assert_close(
            &format!("{name}: log P({part:?})"),
            t.log_probability(&part).unwrap(),
            le - b.log_z,
            2.0 * tl,
        );
    }
    // Every cluster marginal.
    let m = t.marginals();
    assert_eq!(m.log_z(), t.log_z(), "{name}");
    assert_eq!(m.log_p(0), f64::NEG_INFINITY, "{name}: the empty set");
    for c in 1..=all(n) {
        let want = b.log_marg[c as usize];
        if want == f64::NEG_INFINITY {
            assert_eq!(m.log_p(c), f64::NEG_INFINITY, "{name}: P({c:#b}) must be 0");
        } else {
            let (got, want) = (m.p(c), want.exp());
            assert!(
                (got - want).abs() <= tp,
                "{name}: P({c:#b}) = {got}, brute force {want} (tol {tp:e})"
            );
        }
    }
    // The pairwise matrix: unit diagonal, symmetric, as the brute force.
    let pm = m.pairwise_matrix();
    assert_eq!(pm.len(), n, "{name}");
    for i in 0..n {
        assert_eq!(pm[i].len(), n, "{name}");
        assert_eq!(pm[i][i], 1.0, "{name}: diagonal");
        for j in 0..n {
            assert_eq!(pm[i][j], pm[j][i], "{name}: symmetry at ({i}, {j})");
            assert_eq!(m.pairwise(i, j).unwrap(), pm[i][j], "{name}");
            assert!(
                (pm[i][j] - b.pair[i][j]).abs() <= tpair,
                "{name}: P({i} ~ {j}) = {}, brute force {} (tol {tpair:e})",
                pm[i][j],
                b.pair[i][j]
            );
        }
    }
    // `clusters(min_p)` lists exactly the clusters with `p >= min_p`, most probable first.
    let min_p = 0.05;
    let listed = m.clusters(min_p);
    let want: HashSet<Mask> = (1..=all(n))
        .filter(|&c| m.p(c) > 0.0 && m.p(c) >= min_p)
        .collect();
    assert_eq!(
        listed.iter().map(|&(c, _)| c).collect::<HashSet<_>>(),
        want,
        "{name}: clusters({min_p})"
    );
    assert_eq!(listed.len(), want.len(), "{name}: duplicates in clusters()");
    for w in listed.windows(2) {
        assert!(
            w[0].1 > w[1].1 || (w[0].1 == w[1].1 && w[0].0 < w[1].0),
            "{name}: clusters() out of order: {w:?}"
        );
    }
    for &(c, p) in &listed {
        assert_eq!(p, m.p(c), "{name}: clusters() probability of {c:#b}");
    }
}

// ---------------------------------------------------------------------------
// The oracle itself.

#[test]
fn oracle_enumerates_bell_partitions() {
    for (n, &count) in BELL.iter().enumerate() {
        let parts = partitions(n);
        assert_eq!(parts.len() as u64, count, "Bell({n})");
        assert_eq!(bell(n), BigUint::from(count), "trellis::count::bell({n})");
        let distinct: HashSet<Vec<Mask>> = parts.iter().map(|p| canonical(p)).collect();
        assert_eq!(distinct.len(), parts.len(), "duplicate partitions, n = {n}");
        for p in parts {
            check_partition(&to_partition(p), n);
        }
    }
    // The partitions of a subset are those of its points.
    let sub = partitions_of(0b1010_0100);
    assert_eq!(sub.len(), 5);
    assert!(
        sub.iter()
            .all(|p| p.iter().fold(0, |m, &c| m | c) == 0b1010_0100)
    );
    assert_eq!(partitions_of(0), vec![Vec::<Mask>::new()]);
    // Larger Bell numbers, by the recurrence B(n+1) = Σ_k C(n, k) B(k).
    let mut b: Vec<u128> = vec![1];
    let mut binom: Vec<u128> = vec![1];
    for n in 0..25 {
        b.push(binom.iter().zip(&b).map(|(c, x)| c * x).sum());
        let mut next = vec![1u128; n + 2];
        for k in 1..=n {
            next[k] = binom[k - 1] + binom[k];
        }
        binom = next;
    }
    for (n, &v) in b.iter().enumerate() {
        assert_eq!(bell(n), BigUint::from(v), "Bell({n})");
    }
    assert_eq!(bell(15), BigUint::from(1_382_958_545u64));
    assert_eq!(bell(20), BigUint::from(51_724_158_235_372u64));
}

#[test]
fn oracle_hand_computed_example() {
    // Three points, w01 = 1, w02 = -2, w12 = 0.5, β = 1: the five partitions
    // keep 0, 1, -2, 0.5 and -0.5 inside their clusters.
    let w = vec![
        vec![0.0, 1.0, -2.0],
        vec![1.0, 0.0, 0.5],
        vec![-2.0, 0.5, 0.0],
    ];
    let b = FlatBrute::cc(&w, 1.0);
    let z = log_sum_exp([0.0, 1.0, -2.0, 0.5, -0.5]);
    assert!((b.log_z - z).abs() < 1e-14);
    assert_eq!(b.map, 1.0);
    // {0, 1} is a cluster of {01|2} only; 0 ~ 2 in {02|1} and {012}.
    assert!((b.log_marg[0b011] - (1.0 - z)).abs() < 1e-14);
    assert!((b.pair[0][2] - ((-2f64).exp() + (-0.5f64).exp()) / z.exp()).abs() < 1e-14);
    assert!((b.log_z_of(0b110) - log_sum_exp([0.0, 0.5])).abs() < 1e-14);
}

// ---------------------------------------------------------------------------
// Exact inference against the brute force.

fn cc_trellis(w: &[Vec<f64>], beta: f64) -> FlatTrellis<CorrelationClustering> {
    FlatTrellis::new(CorrelationClustering::new(&oracle::lib_weights(w), beta).unwrap()).unwrap()
}

#[test]
fn correlation_clustering_matches_brute_force() {
    for n in 1..=MAX_FLAT {
        for seed in 0..3u64 {
            let w = oracle::random_weights(n, 1000 * n as u64 + seed, 1.0);
            for beta in [0.3, 1.0, 4.0] {
                let name = format!("cc n={n} seed={seed} β={beta}");
                let t = cc_trellis(&w, beta);
                assert_eq!(t.energy().beta(), beta);
                assert_eq!(t.energy().weights(), &oracle::lib_weights(&w));
                let b = FlatBrute::cc(&w, beta);
                check_against_brute(&name, &t, &b);
                // The energy of a cluster's summary agrees with the tables.
                let cc = CorrelationClustering::new(&oracle::lib_weights(&w), beta).unwrap();
                for c in 1..=all(n) {
                    let got = cc.log_energy(&cc.summary(Points::List(&points(c))));
                    assert_close(&name, got, b.e[c as usize], b.tol_log());
                }
            }
        }
    }
}

#[test]
fn beta_zero_counts_partitions() {
    for n in 1..=MAX_FLAT {
        let w = oracle::random_weights(n, 7, 3.0);
        let t = cc_trellis(&w, 0.0);
        let want = (BELL[n] as f64).ln();
        assert!((t.log_z() - want).abs() < 1e-12, "n = {n}");
        // P(c) = Bell(n - |c|) / Bell(n).
        let m = t.marginals();
        for c in 1..=all(n) {
            let p = BELL[n - c.count_ones() as usize] as f64 / BELL[n] as f64;
            assert!((m.p(c) - p).abs() < 1e-12, "n = {n}, {c:#b}");
        }
    }
}

#[test]
fn large_magnitudes_match_log_space_brute_force() {
    // |log E| up to β · 28 · 1e4 ≈ 1e6 (correlation clustering), and a size
    // energy with an offset of ±1e5 per point: every partition's log-energy is
    // ±1e5 · n plus O(1), so log Z ≈ ±8e5 while the distribution is spread
    // over many partitions (the scaled arithmetic far outside f64's range).
    for n in [5, 8] {
        for (seed, scale, beta) in [
            (1u64, 1e4, 4.0),
            (2, 3e3, 1.0),
            (3, 1e3, 0.3),
            (6, 1e6, 1.0),
        ] {
            let w = oracle::random_weights(n, seed, scale);
            let name = format!("cc n={n} scale={scale} β={beta}");
            let b = FlatBrute::cc(&w, beta);
            assert!(b.mag > 1e3, "{name}: not a large case ({})", b.mag);
            check_against_brute(&name, &cc_trellis(&w, beta), &b);
        }
        for (seed, offset) in [(4u64, 1e5), (5, -1e5)] {
            let e = SizeEnergy::random(n, seed, offset, 0, false);
            let b = e.brute();
            assert!(b.log_z.abs() > 4e5, "not a large case ({})", b.log_z);
            let spread = b.log_marg.iter().filter(|&&l| l > -5.0 && l < -0.1).count();
            assert!(spread > 5, "n={n}: the distribution should be spread");
            check_against_brute(
                &format!("size n={n} offset={offset}"),
                &FlatTrellis::new(&e).unwrap(),
                &b,
            );
        }
    }
}

#[test]
fn user_energy_with_forbidden_clusters_matches_brute_force() {
    for n in 1..=MAX_FLAT {
        for (seed, forbid, singletons) in [
            (1u64, 0u64, false),
            (2, 96, false),
            (3, 200, false),
            (4, 64, true),
            (5, 128, true),
        ] {
            let e = SizeEnergy::random(n, 100 * n as u64 + seed, 0.0, forbid, singletons);
            let name = format!("size n={n} seed={seed} forbid={forbid}/{singletons}");
            let b = e.brute();
            let t = FlatTrellis::new(&e).unwrap();
            // Documented: every subset's energy is evaluated once.
            assert_eq!(e.calls.load(Ordering::Relaxed), (1 << n) - 1, "{name}");
            check_against_brute(&name, &t, &b);
        }
    }
    // The forbidden cases are really exercised: forbidden clusters of every
    // size, partitions and subsets with zero probability.
    let e = SizeEnergy::random(8, 805, 0.0, 128, true);
    let b = e.brute();
    assert!(b.log_e.contains(&f64::NEG_INFINITY));
    assert!((1..all(8)).any(|s| b.log_z_of(s) == f64::NEG_INFINITY));
    assert!((1..all(8)).any(|c| c.count_ones() == 1 && b.e[c as usize] == f64::NEG_INFINITY));
}

/// Weights of every order of magnitude, β in [0, 4] with the ends drawn often.
fn cc_instance() -> impl Strategy<Value = (Vec<Vec<f64>>, f64)> {
    (
        1usize..=MAX_FLAT,
        prop::collection::vec((-1.0f64..1.0, -3i32..=4, 0u8..8), 28),
        prop_oneof![1 => Just(0.0), 1 => Just(4.0), 4 => 0.0f64..=4.0],
    )
        .prop_map(|(n, raw, beta)| {
            let upper: Vec<f64> = raw
                .iter()
                .map(|&(v, e, zero)| if zero == 0 { 0.0 } else { v * 10f64.powi(e) })
                .collect();
            (oracle::symmetric(n, &upper), beta)
        })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 96,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Random weights over seven orders of magnitude.
    #[test]
    fn correlation_clustering_property((w, beta) in cc_instance()) {
        let b = FlatBrute::cc(&w, beta);
        check_against_brute("cc property", &cc_trellis(&w, beta), &b);
    }

    /// The user energy, any seed and forbidden fraction.
    #[test]
    fn user_energy_property(
        n in 1usize..=MAX_FLAT,
        seed in any::<u64>(),
        offset in prop::sample::select(vec![0.0, 3.0, -3.0, 1e4]),
        forbid in 0u64..=255,
        singletons in any::<bool>(),
    ) {
        let e = SizeEnergy::random(n, seed, offset, forbid, singletons);
        check_against_brute("size property", &FlatTrellis::new(&e).unwrap(), &e.brute());
    }
}

// ---------------------------------------------------------------------------
// Sampling.

/// The TV bound of the module docs for `m` outcomes and `k` samples.
fn tv_bound(m: usize, k: usize) -> f64 {
    let k = k as f64;
    (((m - 1) as f64 / k).sqrt() + (2.0 * (1.0 / DELTA).ln() / k).sqrt()) / 2.0
}

/// The Hoeffding + union bound of the module docs for `events` frequencies.
fn hoeffding_bound(events: usize, k: usize) -> f64 {
    ((2.0 * events as f64 / DELTA).ln() / (2.0 * k as f64)).sqrt()
}

/// Checks every sample's form and returns them as canonical masks.
fn sample_masks(samples: &[Partition], n: usize) -> Vec<Vec<Mask>> {
    samples
        .iter()
        .map(|s| canonical(&check_partition(s, n)))
        .collect()
}

/// TV between the empirical distribution of `samples` and `exact` (samples
/// outside `exact` count fully).
fn empirical_tv(samples: &[Vec<Mask>], exact: &HashMap<Vec<Mask>, f64>) -> f64 {
    let mut counts: HashMap<&Vec<Mask>, usize> = HashMap::new();
    for s in samples {
        *counts.entry(s).or_default() += 1;
    }
    let k = samples.len() as f64;
    let mut l1: f64 = exact
        .iter()
        .map(|(p, &q)| (counts.get(p).copied().unwrap_or(0) as f64 / k - q).abs())
        .sum();
    l1 += counts
        .iter()
        .filter(|(p, _)| !exact.contains_key(**p))
        .map(|(_, &c)| c as f64 / k)
        .sum::<f64>();
    l1 / 2.0
}

fn exact_tv(p: &HashMap<Vec<Mask>, f64>, q: &HashMap<Vec<Mask>, f64>) -> f64 {
    p.iter().map(|(k, &a)| (a - q[k]).abs()).sum::<f64>() / 2.0
}

/// How often each pair shares a cluster in the samples.
fn pair_frequencies(n: usize, samples: &[Vec<Mask>]) -> Vec<Vec<f64>> {
    let mut f = vec![vec![0.0; n]; n];
    for s in samples {
        for &c in s {
            let pts = points(c);
            for &i in &pts {
                for &j in &pts {
                    f[i][j] += 1.0;
                }
            }
        }
    }
    let k = samples.len() as f64;
    f.iter()
        .map(|r| r.iter().map(|v| v / k).collect())
        .collect()
}

/// The largest off-diagonal difference between two matrices.
fn max_pair_gap(a: &[Vec<f64>], b: &[Vec<f64>]) -> f64 {
    let n = a.len();
    (0..n)
        .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
        .map(|(i, j)| (a[i][j] - b[i][j]).abs())
        .fold(0.0, f64::max)
}

#[test]
fn sample_frequencies_match_exact_n5() {
    const N: usize = 5; // 52 partitions
    const K: usize = 200_000;
    let (beta, beta_other) = (1.0, 1.8);
    let w = oracle::random_weights(N, 11, 1.0);
    let b = FlatBrute::cc(&w, beta);
    let exact = b.distribution();
    assert_eq!(exact.len(), 52);
    let bound = tv_bound(exact.len(), K);
    let pair_bound = hoeffding_bound(N * (N - 1) / 2, K);
    let t = cc_trellis(&w, beta);
    let samples = sample_masks(&t.samples(K, 2024), N);
    let tv = empirical_tv(&samples, &exact);
    eprintln!("flat n=5: TV(empirical, exact) = {tv:.5}, bound {bound:.5}");
    assert!(tv <= bound, "sampler TV {tv} exceeds the bound {bound}");
    let freq = pair_frequencies(N, &samples);
    let worst = max_pair_gap(&freq, &b.pair);
    eprintln!("flat n=5: max |f_ij - P(i~j)| = {worst:.5}, bound {pair_bound:.5}");
    assert!(
        worst < pair_bound,
        "pair frequency off by {worst} > {pair_bound}"
    );

    // Negative control: samples at another β, whose exact distribution is
    // more than twice the bound away, fail both tests.
    let b_other = FlatBrute::cc(&w, beta_other);
    let gap = exact_tv(&exact, &b_other.distribution());
    assert!(
        gap > 2.0 * bound,
        "control needs TV {gap} > {}",
        2.0 * bound
    );
    let pair_gap = max_pair_gap(&b.pair, &b_other.pair);
    assert!(
        pair_gap > 2.0 * pair_bound,
        "control needs a pair gap {pair_gap} > {}",
        2.0 * pair_bound
    );
    let wrong = sample_masks(&cc_trellis(&w, beta_other).samples(K, 2024), N);
    let tv_wrong = empirical_tv(&wrong, &exact);
    let worst_wrong = max_pair_gap(&pair_frequencies(N, &wrong), &b.pair);
    eprintln!(
        "flat negative control: exact TV {gap:.4}, empirical {tv_wrong:.4}; pair gap {pair_gap:.4}, empirical {worst_wrong:.4}"
    );
    assert!(
        tv_wrong > bound,
        "failed to reject samples at β = {beta_other}"
    );
    assert!(
        worst_wrong >= pair_bound,
        "pair test failed to reject samples at β = {beta_other}"
    );
}

#[test]
fn sample_frequencies_user_energy_with_forbidden_clusters_n6() {
    const N: usize = 6; // 203 partitions, some forbidden
    const K: usize = 100_000;
    let e = SizeEnergy::random(N, 66, 0.0, 100, true);
    let b = e.brute();
    let exact = b.distribution();
    let support = exact.values().filter(|&&p| p > 0.0).count();
    assert!(support < exact.len() && support > 20, "support {support}");
    let t = FlatTrellis::new(&e).unwrap();
    let samples = sample_masks(&t.samples(K, 5), N);
    for s in &samples {
        assert!(exact[s] > 0.0, "sampled a forbidden partition {s:?}");
    }
    let bound = tv_bound(support, K);
    let tv = empirical_tv(&samples, &exact);
    eprintln!("flat user n=6: TV {tv:.5}, bound {bound:.5} (support {support})");
    assert!(tv <= bound, "TV {tv} exceeds the bound {bound}");
    let pair_bound = hoeffding_bound(N * (N - 1) / 2, K);
    let worst = max_pair_gap(&pair_frequencies(N, &samples), &b.pair);
    assert!(
        worst < pair_bound,
        "pair frequency off by {worst} > {pair_bound}"
    );
}

#[test]
fn samples_are_reproducible() {
    let w = oracle::random_weights(8, 5, 1.0);
    let t = cc_trellis(&w, 0.5);
    let a = t.samples(300, 7);
    assert_eq!(a.len(), 300);
    assert_eq!(a, t.samples(300, 7), "same seed, same samples");
    assert_ne!(a, t.samples(300, 8), "different seeds, different samples");
    // Documented: xoshiro256++ seeded from the seed.
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let b: Vec<Partition> = (0..300).map(|_| t.sample(&mut rng)).collect();
    assert_eq!(
        a, b,
        "samples(k, seed) draws from Xoshiro256PlusPlus::seed_from_u64(seed)"
    );
    for s in &a {
        check_partition(s, 8);
        assert!(t.log_probability(s).unwrap().is_finite());
    }
    // A single point has one partition.
    let one = cc_trellis(&[vec![0.0]], 1.0);
    assert_eq!(one.samples(3, 0), vec![vec![vec![0]]; 3]);
    assert_eq!(one.map().clusters, vec![vec![0]]);
    assert_eq!(one.log_z(), 0.0);
}

// ---------------------------------------------------------------------------
// The sparse trellis.

/// The smallest family containing `seed` and all the points, closed under
/// recursive complement (for `x ⊂ y` in the family, `y ∖ x` is too).
fn close_family(n: usize, seed: impl IntoIterator<Item = Mask>) -> Vec<Mask> {
    let mut set: HashSet<Mask> = seed.into_iter().collect();
    set.insert(all(n));
    loop {
        let v: Vec<Mask> = set.iter().copied().collect();
        let mut added = false;
        for &x in &v {
            for &y in &v {
                if x != y && x & !y == 0 && set.insert(y ^ x) {
                    added = true;
                }
            }
        }
        if !added {
            let mut v: Vec<Mask> = set.into_iter().collect();
            v.sort_unstable();
            return v;
        }
    }
}

/// The pairs `(x, y)` of a family with `x ⊂ y` and `y ∖ x` missing (the whole set included).
fn violations(n: usize, family: &[Mask]) -> Vec<(Mask, Mask)> {
    let mut set: HashSet<Mask> = family.iter().copied().collect();
    set.insert(all(n));
    let mut out = Vec::new();
    for &x in &set {
        for &y in &set {
            if x != y && x & !y == 0 && !set.contains(&(y ^ x)) {
                out.push((x, y));
            }
        }
    }
    out
}

/// A random binary tree over `0..n` (random merges of random subtrees).
fn random_tree(n: usize, g: &mut Gen) -> Tree {
    let mut forest: Vec<Tree> = (0..n).map(Tree::Leaf).collect();
    while forest.len() > 1 {
        let a = forest.swap_remove(g.below(forest.len()));
        let b = forest.swap_remove(g.below(forest.len()));
        forest.push(Tree::node(a, b));
    }
    forest.pop().unwrap()
}

/// Every node of a tree (leaves and root included) as a mask.
fn tree_nodes(t: &Tree) -> Vec<Mask> {
    oracle::subtrees(t)
        .iter()
        .map(oracle::mask_of_tree)
        .collect()
}

/// Brute force restricted to the partitions made of clusters in `family`:
/// `(log Z, MAP value, number of partitions)`.
fn restricted(b: &FlatBrute, family: &HashSet<Mask>) -> (f64, f64, usize) {
    let kept: Vec<f64> = partitions(b.n)
        .iter()
        .zip(&b.log_e)
        .filter(|(p, _)| p.iter().all(|c| family.contains(c)))
        .map(|(_, &le)| le)
        .collect();
    let map = kept.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (log_sum_exp(kept.iter().copied()), map, kept.len())
}

/// Runs the flat sparse trellis on a closed family and checks it against the
/// restricted brute force.
fn check_sparse(name: &str, family: &[Mask], b: &FlatBrute) -> (f64, f64) {
    let n = b.n;
    let set: HashSet<Mask> = family.iter().copied().chain([all(n)]).collect();
    let sparse = SparseTrellis::flat(n, family.iter().map(|&c| c as Set)).unwrap();
    assert_eq!(sparse.num_vertices(), set.len(), "{name}");
    let (lz, map, count) = restricted(b, &set);
    assert!(count >= 1, "{name}");
    let tl = b.tol_log();
    let inf = sparse
        .infer_flat(&SetEnergy::new(n, |c| {
            assert!(
                set.contains(&(c as Mask)),
                "{name}: energy of {c:#b}, not in the family"
            );
            b.e[c as usize]
        }))
        .unwrap();
    let (got_z, got_map, part) = (inf.log_z(), inf.map().log_energy, &inf.map().clusters);
    assert_close(&format!("{name}: sparse log Z"), got_z, lz, tl);
    assert_close(&format!("{name}: sparse MAP"), got_map, map, tl);
    let masks = check_partition(part, n);
    for &c in &masks {
        assert!(
            set.contains(&c),
            "{name}: MAP cluster {c:#b} not in the family"
        );
    }
    let value: f64 = masks.iter().map(|&c| b.e[c as usize]).sum();
    assert_close(&format!("{name}: energy of {part:?}"), value, map, tl);
    (got_z, got_map)
}

#[test]
fn sparse_matches_restricted_brute_force() {
    let mut g = Gen(2718);
    let mut sizes = Vec::new();
    for n in 1..=MAX_FLAT {
        for case in 0..12 {
            let w = oracle::random_weights(n, g.next_u64(), 1.0 + 2.0 * g.unit());
            let beta = [0.3, 1.0, 4.0][case % 3];
            let b = FlatBrute::cc(&w, beta);
            let parts = partitions(n);
            let seed: Vec<Mask> = match case / 3 {
                // All nodes of a random tree.
                0 => tree_nodes(&random_tree(n, &mut g)),
                // The clusters of three random partitions.
                1 => (0..3)
                    .flat_map(|_| parts[g.below(parts.len())].clone())
                    .collect(),
                // A tree plus random clusters.
                2 => tree_nodes(&random_tree(n, &mut g))
                    .into_iter()
                    .chain((0..3).map(|_| (g.next_u64() as Mask & all(n)).max(1)))
                    .collect(),
                // Two random clusters, without singletons unless closure adds them.
                _ => (0..2)
                    .map(|_| (g.next_u64() as Mask & all(n)).max(1))
                    .collect(),
            };
            let family = close_family(n, seed);
            assert!(violations(n, &family).is_empty());
            sizes.push(family.len());
            check_sparse(&format!("sparse n={n} case={case}"), &family, &b);
        }
    }
    // Families of many sizes, not all full power sets.
    assert!(sizes.iter().any(|&s| s > 20 && s < 255), "{sizes:?}");
    // A hand-closed family without singletons: {0123}, {01}, {23}.
    let w = oracle::random_weights(4, 9, 1.0);
    let b = FlatBrute::cc(&w, 1.0);
    let (lz, map) = check_sparse("hand", &[0b0011, 0b1100], &b);
    let (whole, halves) = (b.e[0b1111], b.e[0b0011] + b.e[0b1100]);
    assert!((lz - log_sum_exp([whole, halves])).abs() < 1e-14);
    assert_eq!(map, whole.max(halves));
    // The user energy, with forbidden clusters.
    for n in 2..=MAX_FLAT {
        let e = SizeEnergy::random(n, n as u64, 0.0, 96, false);
        let b = e.brute();
        let family = close_family(n, tree_nodes(&random_tree(n, &mut g)));
        check_sparse(&format!("sparse size n={n}"), &family, &b);
    }
}

#[test]
fn sparse_full_family_is_the_dense_trellis() {
    for n in 1..=MAX_FLAT {
        for (seed, beta) in [(1u64, 0.3), (2, 1.0), (3, 4.0)] {
            let w = oracle::random_weights(n, 50 + seed, 1.0);
            let b = FlatBrute::cc(&w, beta);
            let family: Vec<Mask> = (1..=all(n)).collect();
            let (lz, map) = check_sparse(&format!("full n={n}"), &family, &b);
            let t = cc_trellis(&w, beta);
            assert_close("full vs dense log Z", lz, t.log_z(), 2.0 * b.tol_log());
            assert_close(
                "full vs dense MAP",
                map,
                t.map().log_energy,
                2.0 * b.tol_log(),
            );
        }
    }
}

/// The cluster over `8 · width` points made of the blocks `width·b .. width·(b+1)` for the points `b` of `m`.
fn lift(m: Mask, width: usize) -> Set {
    let block: Set = if width == 128 {
        Set::MAX
    } else {
        (1 << width) - 1
    };
    points(m)
        .into_iter()
        .fold(0, |c, b| c | block << (width * b))
}

#[test]
fn sparse_beyond_32_points_by_blocks() {
    // Eight blocks of `width` points each (n = 40 and n = 128): a family of
    // unions of blocks is the family of an 8-point problem lifted, so the
    // sparse trellis over 40 or 128 points must give the 8-point answers.
    let mut g = Gen(77);
    for width in [5usize, 16] {
        let n = 8 * width;
        let w = oracle::random_weights(8, g.next_u64(), 1.0);
        let b = FlatBrute::cc(&w, 1.0);
        let family = close_family(8, tree_nodes(&random_tree(8, &mut g)));
        let (lz, map) = check_sparse("blocks (8 points)", &family, &b);
        let set: HashSet<Mask> = family.iter().copied().collect();
        let sparse = SparseTrellis::flat(n, family.iter().map(|&m| lift(m, width))).unwrap();
        assert_eq!(sparse.num_vertices(), family.len());
        let unlift = |c: Set| -> Mask {
            let m = (0..8).fold(0, |m, b| {
                if c >> (width * b) & 1 == 1 {
                    m | 1 << b
                } else {
                    m
                }
            });
            assert_eq!(lift(m, width), c, "{c:#x} is not a union of blocks");
            m
        };
        let inf = sparse
            .infer_flat(&SetEnergy::new(n, |c| b.e[unlift(c) as usize]))
            .unwrap();
        let (got_z, got_map, part) = (inf.log_z(), inf.map().log_energy, &inf.map().clusters);
        assert_close(&format!("blocks n={n}: log Z"), got_z, lz, b.tol_log());
        assert_close(&format!("blocks n={n}: MAP"), got_map, map, b.tol_log());
        let mut seen = 0;
        for c in part {
            let m = unlift(c.iter().fold(0, |acc: Set, &i| acc | 1 << i));
            assert!(set.contains(&m), "{m:#b}");
            seen += c.len();
        }
        assert_eq!(seen, n);
        let value: f64 = part
            .iter()
            .map(|c| b.e[unlift(c.iter().fold(0, |acc: Set, &i| acc | 1 << i)) as usize])
            .sum();
        assert_close("blocks: MAP energy", value, map, b.tol_log());
        // Not closed once lifted either: drop the complement of a block.
        let open: Vec<Set> = vec![lift(0b1, width)];
        let e = SparseTrellis::flat(n, open).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Parameter { .. }), "{e:?}");
    }
}

#[test]
fn sparse_rejects_families_not_closed() {
    // {0, 1} inside the whole set {0, 1, 2, 3} without {2, 3}.
    let e = SparseTrellis::flat(4, [0b0011 as Set]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Parameter { .. }), "{e:?}");
    let msg = e.to_string();
    for part in ["[0, 1]", "[0, 1, 2, 3]", "[2, 3]"] {
        assert!(msg.contains(part), "the message should name {part}: {msg}");
    }
    // Random families: accepted exactly when closed; the message names a
    // violating pair and their difference.
    let mut g = Gen(31);
    let (mut open, mut closed) = (0, 0);
    for _ in 0..300 {
        let n = 2 + g.below(MAX_FLAT - 1);
        let mut family = close_family(n, tree_nodes(&random_tree(n, &mut g)));
        // Remove one or two clusters other than the whole set.
        for _ in 0..1 + g.below(2) {
            if family.len() > 1 {
                family.remove(g.below(family.len() - 1));
            }
        }
        let bad = violations(n, &family);
        match SparseTrellis::flat(n, family.iter().map(|&c| c as Set)) {
            Ok(s) => {
                assert!(
                    bad.is_empty(),
                    "accepted a family that is not closed: {family:?}"
                );
                assert_eq!(s.num_vertices(), family.len());
                closed += 1;
            }
            Err(e) => {
                assert!(!bad.is_empty(), "rejected a closed family {family:?}: {e}");
                assert!(matches!(e.kind(), ErrorKind::Parameter { .. }), "{e:?}");
                let msg = e.to_string();
                assert!(
                    bad.iter().any(|&(x, y)| {
                        msg.contains(&format!("{:?}", points(x)))
                            && msg.contains(&format!("{:?}", points(y)))
                            && msg.contains(&format!("{:?}", points(y ^ x)))
                    }),
                    "the message should name a violating pair: {msg} ({family:?})"
                );
                open += 1;
            }
        }
    }
    assert!(open > 50 && closed > 10, "open {open}, closed {closed}");
}

#[test]
fn sparse_errors() {
    assert!(matches!(
        SparseTrellis::flat(0, []).unwrap_err().kind(),
        ErrorKind::Empty
    ));
    assert!(SparseTrellis::flat(129, []).is_err());
    assert!(SparseTrellis::flat(128, []).is_ok());
    for c in [0 as Set, 0b10000, 1 << 100] {
        let e = SparseTrellis::flat(4, [c]).unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::InvalidTree { .. }),
            "{c:#b}: {e:?}"
        );
    }
    let family = close_family(5, tree_nodes(&random_tree(5, &mut Gen(3))));
    let s = SparseTrellis::flat(5, family.iter().map(|&c| c as Set)).unwrap();
    // A NaN log-energy anywhere in the family is an error.
    for &bad in &family {
        let e = s
            .infer_flat(&SetEnergy::new(5, |c| {
                if c == bad as Set { f64::NAN } else { 0.5 }
            }))
            .unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::BadPotential { .. }),
            "{bad:#b}: {e:?}"
        );
    }
    // Every partition forbidden.
    let e = s
        .infer_flat(&SetEnergy::new(5, |_| f64::NEG_INFINITY))
        .unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::NoPartition), "{e:?}");
    // Only the whole set allowed: one partition.
    let inf = s
        .infer_flat(&SetEnergy::new(5, |c| {
            if c == all(5) as Set {
                2.5
            } else {
                f64::NEG_INFINITY
            }
        }))
        .unwrap();
    let (lz, map, p) = (
        inf.log_z(),
        inf.map().log_energy,
        inf.map().clusters.clone(),
    );
    assert_eq!((lz, map, p), (2.5, 2.5, vec![vec![0, 1, 2, 3, 4]]));
}

/// `FlatTrellis` reports `+∞` energies as errors (the `Energy` docs: "NaN and
/// `+∞` are errors reported by the inference"); so does
/// `SparseTrellis::infer_flat`.
#[test]
fn sparse_rejects_infinite_energy() {
    let s = SparseTrellis::flat(3, close_family(3, [0b001]).into_iter().map(|c| c as Set)).unwrap();
    let r = s.infer_flat(&SetEnergy::new(3, |c| {
        if c == 0b110 { f64::INFINITY } else { 0.0 }
    }));
    assert!(r.is_err(), "got {r:?}");
}

// ---------------------------------------------------------------------------
// Partitions consistent with a hierarchy.

fn check_tree_partitions(name: &str, tree: &Tree, b: &FlatBrute) {
    let n = b.n;
    let nodes: HashSet<Mask> = tree_nodes(tree).into_iter().collect();
    let (lz, map, count) = restricted(b, &nodes);
    assert!(count >= 1, "{name}");
    let energy = PointsEnergy::new(n, |pts: &[usize]| {
        let c = pts.iter().fold(0, |m, &i| m | 1 << i);
        assert!(nodes.contains(&c), "{name}: energy of {pts:?}, not a node");
        b.e[c as usize]
    });
    let cuts = tree_partitions(&energy, tree).unwrap();
    let (got_z, got_map, part) = (cuts.log_z(), cuts.map().log_energy, &cuts.map().clusters);
    let tl = b.tol_log();
    assert_close(&format!("{name}: log Z"), got_z, lz, tl);
    assert_close(&format!("{name}: MAP"), got_map, map, tl);
    let masks = check_partition(part, n);
    for &c in &masks {
        assert!(
            nodes.contains(&c),
            "{name}: MAP cluster {c:#b} is not a node"
        );
    }
    let value: f64 = masks.iter().map(|&c| b.e[c as usize]).sum();
    assert_close(&format!("{name}: energy of {part:?}"), value, map, tl);
}

#[test]
fn tree_partitions_match_restricted_brute_force() {
    let mut g = Gen(1618);
    for n in 1..=MAX_FLAT {
        for case in 0..10 {
            let tree = random_tree(n, &mut g);
            let beta = [0.3, 1.0, 4.0][case % 3];
            let w = oracle::random_weights(n, g.next_u64(), 1.0);
            check_tree_partitions(
                &format!("tree n={n} case={case}"),
                &tree,
                &FlatBrute::cc(&w, beta),
            );
            let e = SizeEnergy::random(n, g.next_u64(), 0.0, 80, true);
            check_tree_partitions(&format!("tree size n={n} case={case}"), &tree, &e.brute());
        }
    }
    // By hand: ((0,1),2) has the cuts {012}, {01|2} and {0|1|2}.
    let tree = Tree::parse("((0,1),2);").unwrap();
    let e = PointsEnergy::new(3, |pts: &[usize]| match pts {
        [0, 1, 2] => 1.0,
        [0, 1] => 3.0,
        [_] => -1.0,
        other => panic!("{other:?} is not a node"),
    });
    let cuts = tree_partitions(&e, &tree).unwrap();
    let (lz, map, part) = (
        cuts.log_z(),
        cuts.map().log_energy,
        cuts.map().clusters.clone(),
    );
    assert!((lz - log_sum_exp([1.0, 2.0, -3.0])).abs() < 1e-14);
    assert_eq!(map, 2.0);
    assert_eq!(part, vec![vec![0, 1], vec![2]]);
}

// ---------------------------------------------------------------------------
// Perturb-and-MAP.

#[test]
#[allow(clippy::needless_range_loop)]
fn perturb_and_map_is_reproducible_and_well_formed() {
    let w = oracle::lib_weights(&oracle::random_weights(7, 21, 1.0));
    let k = 40;
    let a = perturb_and_map(&w, 1.0, k, 3).unwrap();
    assert_eq!(a, perturb_and_map(&w, 1.0, k, 3).unwrap(), "same seed");
    assert_ne!(
        a,
        perturb_and_map(&w, 1.0, k, 4).unwrap(),
        "different seeds"
    );
    assert_eq!(a.len(), 7);
    let mut fractional = false;
    for i in 0..7 {
        assert_eq!(a[i].len(), 7);
        assert_eq!(a[i][i], 1.0);
        for j in 0..7 {
            let v = a[i][j];
            assert_eq!(v, a[j][i], "symmetry");
            assert!((0.0..=1.0).contains(&v), "{v}");
            // A frequency over k MAP partitions.
            let count = v * k as f64;
            assert!(
                (count - count.round()).abs() < 1e-9,
                "{v} is not a multiple of 1/{k}"
            );
            fractional |= v > 0.0 && v < 1.0;
        }
    }
    assert!(
        fractional,
        "noise at β = 1 should change some MAP partitions"
    );
    for beta in [f64::NAN, -1.0, f64::INFINITY] {
        assert!(perturb_and_map(&w, beta, 5, 0).is_err(), "β = {beta}");
    }
}

#[test]
fn perturb_and_map_recovers_the_map_at_large_beta() {
    // The Gumbel noise -ln(-ln u), u in [2^-1022, 1 - 2^-53], lies in
    // [-6.6, 36.8]: a partition's perturbed log-energy moves by at most
    // 40 · n(n-1)/2. When β times the gap between the best and second-best
    // kept weight exceeds twice that, every perturbed MAP is the MAP.
    for (n, seed) in [(5usize, 1u64), (7, 2), (8, 3)] {
        let raw = oracle::random_weights(n, seed, 1.0);
        let b = FlatBrute::cc(&raw, 1.0);
        let mut values = b.log_e.clone();
        values.sort_by(|x, y| y.total_cmp(x));
        let gap = values[0] - values[1];
        assert!(gap > 1e-3, "n={n}: MAP not unique enough ({gap})");
        let noise = 40.0 * (n * (n - 1) / 2) as f64;
        let beta = 2.0 * noise / gap;
        let best = &partitions(n)[b.log_e.iter().position(|&v| v == values[0]).unwrap()];
        let mut want = vec![vec![0.0; n]; n];
        for &c in best {
            for i in points(c) {
                for j in points(c) {
                    want[i][j] = 1.0;
                }
            }
        }
        let got = perturb_and_map(&oracle::lib_weights(&raw), beta, 30, seed).unwrap();
        assert_eq!(got, want, "n={n}, β={beta}");
        // At β = 0 the noise alone decides: not the MAP co-clustering.
        let noisy = perturb_and_map(&oracle::lib_weights(&raw), 0.0, 30, seed).unwrap();
        assert_ne!(noisy, want, "n={n}");
    }
}

// ---------------------------------------------------------------------------
// Errors and options.

/// A NaN or `+∞` log-energy of one cluster is a `BadPotential` error naming it.
fn check_bad_energy(bad_value: f64) {
    for bad in [0b00001 as Mask, 0b10110, 0b11111] {
        let e = FnEnergy::new(5, |c| if c == bad { bad_value } else { 0.1 });
        let err = FlatTrellis::new(&e).unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::BadPotential { .. }),
            "{err:?}"
        );
        let msg = err.to_string();
        assert!(
            msg.contains(&format!("{:?}", points(bad))),
            "the message should name the cluster {:?}: {msg}",
            points(bad)
        );
    }
}

/// `+∞` is documented as an error of the inference (`Energy`); it must be
/// reported, not reach the scaled arithmetic (a debug-build panic before).
#[test]
fn infinite_energy_is_an_error() {
    check_bad_energy(f64::INFINITY);
}

#[test]
fn bad_energies_are_errors() {
    check_bad_energy(f64::NAN);
    // Every partition forbidden.
    let e = FnEnergy::new(4, |c| if c & 1 == 1 { f64::NEG_INFINITY } else { 0.0 });
    let err = FlatTrellis::new(&e).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::NoPartition), "{err:?}");
    // Only the whole set allowed: one partition.
    let e = FnEnergy::new(4, |c| if c == 0b1111 { 0.7 } else { f64::NEG_INFINITY });
    let t = FlatTrellis::new(&e).unwrap();
    assert_eq!(t.map().log_energy, 0.7);
    assert!((t.log_z() - 0.7).abs() <= tol_log(0.7), "{}", t.log_z());
    assert_eq!(t.map().clusters, vec![vec![0, 1, 2, 3]]);
    assert!((t.marginals().p(0b1111) - 1.0).abs() <= 5.0 * tol_log(0.7) + 1e-12);
    assert_eq!(t.samples(4, 1), vec![vec![vec![0, 1, 2, 3]]; 4]);
}

#[test]
fn too_many_points_and_memory_limits_are_errors() {
    let e = FnEnergy::new(31, |_| 0.0);
    let err = FlatTrellis::new(&e).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::TooManyPoints { n: 31, max: 30, .. }),
        "{err:?}"
    );
    let err = FlatTrellis::new(FnEnergy::new(0, |_| 0.0)).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Empty), "{err:?}");
    let small = Options {
        memory_limit: Some(1 << 10),
        ..Default::default()
    };
    let err = FlatTrellis::with_options(&e, &small).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::TooManyPoints { .. }),
        "{err:?}"
    );
    let e10 = FnEnergy::new(10, |_| 0.0);
    let err = FlatTrellis::with_options(&e10, &small).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::OutOfMemory { n: 10, .. }),
        "{err:?}"
    );
    // Refused before any work.
    assert_eq!(e.calls.load(Ordering::Relaxed), 0);
    assert_eq!(e10.calls.load(Ordering::Relaxed), 0);
    let big = Options {
        memory_limit: Some(1 << 30),
        ..Default::default()
    };
    let t = FlatTrellis::with_options(&e10, &big).unwrap();
    assert!((t.log_z() - 115_975f64.ln()).abs() < 1e-12);
    // β must be finite and >= 0.
    let w = oracle::lib_weights(&oracle::random_weights(3, 1, 1.0));
    for beta in [f64::NAN, -0.5, f64::INFINITY] {
        let err = CorrelationClustering::new(&w, beta).unwrap_err();
        assert!(matches!(err.kind(), ErrorKind::Parameter { .. }), "{err:?}");
    }
}

#[test]
fn progress_reaches_the_total() {
    let n = 9;
    let seen: Mutex<Vec<(String, u64, u64)>> = Mutex::new(Vec::new());
    let record = |p: Progress<'_>| {
        seen.lock()
            .unwrap()
            .push((p.stage.to_string(), p.done, p.total));
        ControlFlow::Continue(())
    };
    let options = Options {
        memory_limit: None,
        progress: Some(&record),
        ..Default::default()
    };
    let w = oracle::random_weights(n, 4, 1.0);
    let e = CorrelationClustering::new(&oracle::lib_weights(&w), 1.0).unwrap();
    let t = FlatTrellis::with_options(e, &options).unwrap();
    assert!(t.log_z().is_finite());
    let seen = seen.into_inner().unwrap();
    // Σ_S 2^(|S|-1) = (3^n - 1) / 2 terms per pass; the blocked kernel (issue
    // 12) runs two passes, the MAP values and then the weights.
    let total = 2 * ((3u64.pow(n as u32) - 1) / 2);
    assert!(seen.len() >= 2, "{seen:?}");
    assert!(
        seen.iter().all(|(s, _, t)| s == "inside" && *t == total),
        "{seen:?}"
    );
    assert!(
        seen.windows(2).all(|w| w[0].1 <= w[1].1),
        "not monotone: {seen:?}"
    );
    assert_eq!(seen.last().unwrap().1, total);
}

#[test]
fn invalid_partitions_are_errors() {
    let t = cc_trellis(&oracle::random_weights(4, 1, 1.0), 1.0);
    for bad in [
        vec![vec![0, 1], vec![2]],             // 3 missing
        vec![vec![0, 1], vec![1, 2, 3]],       // 1 twice
        vec![vec![0, 1, 2, 3], vec![4]],       // out of range
        vec![vec![0, 1, 2, 3], vec![]],        // empty cluster
        vec![vec![0, 0], vec![1], vec![2, 3]], // 0 twice in a cluster
    ] {
        let err = t.log_probability(&bad).unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::InvalidTree { .. }),
            "{bad:?}: {err:?}"
        );
    }
    // Any order of clusters and points is accepted.
    let a = t.log_probability(&[vec![3, 1], vec![2, 0]]).unwrap();
    let b = t.log_probability(&[vec![0, 2], vec![1, 3]]).unwrap();
    assert_eq!(a, b);
}
