//! The built-in models over pairwise weights: hierarchical correlation
//! clustering, Dasgupta's cost and flat correlation clustering.
//!
//! A cluster's summary holds sums of weights over the pairs inside it; two
//! clusters merge by adding their sums and the sums over the pairs across
//! them (`O(|A|·|B|)`), so the summary of a subset built one point at a time
//! costs `O(|S|)` and a split's cost is O(1) by inclusion-exclusion: the sum
//! across `L × R` is the sum inside `L ∪ R` minus those inside `L` and `R`.
//!
//! **Hierarchical correlation clustering** ([`Hcc`]; A* paper Eq. 9, the
//! genomics energy of the trellis paper Eq. 7-8 over unordered pairs):
//!
//! ```text
//! cost(L, R) = Σ_{i∈L, j∈R} max(w_ij, 0) + Σ_{i<j ∈ L} max(-w_ij, 0) + Σ_{i<j ∈ R} max(-w_ij, 0)
//!            = Pos(S) + A(L) + A(R),   A(T) = Neg(T) - Pos(T),
//! ```
//!
//! with `Pos(T)`, `Neg(T)` the sums of positive weights and of |negative|
//! weights over pairs inside `T`: cutting a positive edge or keeping a negative
//! edge together costs its weight. `log ψ = -β · cost` is separable with
//! `f ≡ -β`, `P = Pos`, `C = A`. A* heuristic (Prop. 1): `H(X) = Pos(X)`.
//! Every pair of a cluster is cut exactly once in any hierarchy below it, and
//! a cut positive pair costs its weight, so every hierarchy over `X` costs at
//! least `Pos(X)` (the negative terms only add).
//!
//! **Dasgupta's cost** ([`Dasgupta`]; trellis paper Eq. 4, weights ≥ 0):
//!
//! ```text
//! cost(L, R) = |S| · Σ_{i∈L, j∈R} w_ij = |S| · (W(S) - W(L) - W(R)),
//! ```
//!
//! with `W(T)` the total weight inside `T`: separable with `f(k) = -β·k`,
//! `P = W`, `C = -W`. A* heuristic (A* paper Appendix A.8, tightened): a
//! tree's cost is linear in the weights, and with all weights equal to 1
//! every binary tree over `m` points costs the same, `(m³ - m) / 3`
//! (induction: a root split `a + b = m` costs `m·a·b`, and
//! `m·a·b + (a³-a)/3 + (b³-b)/3 = (m³-m)/3`). Writing `w = w_min + (w - w_min)`
//! with `w_min` the smallest weight inside `X`:
//!
//! ```text
//! H(X) = w_min (m³ - m) / 3 + 2 Σ_{i<j∈X} (w_ij - w_min)
//! ```
//!
//! The first term is exact for the uniform part; the second uses that every
//! pair is cut exactly once, at a cluster holding both of its points, so of
//! size at least 2. The paper's Prop. 2, `H(X) = W(X)`, is the special case
//! that also drops the uniform part and bounds the size by 1: admissible too,
//! but much looser.
//!
//! **Flat correlation clustering** ([`CorrelationClustering`], an
//! [`Energy`]; the flat paper's model): `log E(c) = β Σ_{i<j ∈ c} w_ij`, so
//! singletons have energy 1 and a partition's log-energy is β times the
//! weight it keeps inside its clusters.
//!
//! # Range
//!
//! Every value these models produce must be a finite number (or `-∞` where a
//! cluster is truly impossible), so the constructors refuse weights whose
//! costs could overflow `f64`, and a β whose product with them could. With
//! `Σ|w|` the sum of `|w_ij|` over the pairs: a hierarchy's cost is at most
//! `n Σ|w|` for both hierarchical models (HCC: every positive pair is cut
//! once and a negative pair is kept together by at most `n - 2` splits;
//! Dasgupta: every pair is cut once, at a cluster of at most `n` points), and
//! every intermediate sum of the separable form is at most `3 n Σ|w|`; both
//! that bound and β times it must stay below [`MAX_MAGNITUDE`]. For
//! correlation clustering the log-energy of a partition is at most `β Σ w⁺`
//! (the positive weights): that and `Σ w⁺` must stay below it. Its negative
//! side may overflow to `-∞`: such a cluster's energy is below `e^(-10^306)`
//! of the all-singletons partition's (energy 1), so it is 0 at any precision,
//! unless β is below 10^-300 (refused then).

use crate::base::range;
use crate::base::set::Points;
use crate::base::weights::Weights;
use crate::error::{Error, ErrorKind, Result};
use crate::models::{Cluster, Energy, Model, PairSums, Search, Separable, Summarize};

/// Checks an inverse temperature.
pub(crate) fn check_beta(beta: f64) -> Result<()> {
    if beta.is_finite() && beta >= 0.0 {
        Ok(())
    } else {
        Err(Error::parameter(format!(
            "beta must be a finite number >= 0, not {beta}"
        )))
    }
}

/// The largest cost, log-potential or log-energy the built-in models let a
/// structure reach (see the module docs): `f64::MAX / 64`, so that the sums
/// of the inference (a few more terms, and logs of numbers of structures)
/// stay finite.
pub(crate) const MAX_MAGNITUDE: f64 = f64::MAX / 64.0;

/// `Σ max(w_ij, 0)` and `Σ max(-w_ij, 0)` over the pairs `i < j` (each may
/// overflow to `+∞`).
fn weight_sums(w: &Weights) -> (f64, f64) {
    let (mut pos, mut neg) = (0.0f64, 0.0f64);
    for i in 0..w.n() {
        for &v in &w.row(i)[i + 1..] {
            pos += v.max(0.0);
            neg += (-v).max(0.0);
        }
    }
    (pos, neg)
}

/// A number for a message: in exponent notation when it is very large or
/// very small (1e300 would take 301 digits).
fn number(x: f64) -> String {
    if x != 0.0 && (x.abs() >= 1e9 || x.abs() < 1e-6) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// A magnitude for a message (`+∞` is "more than 1.8e308").
fn magnitude(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.3e}")
    } else {
        format!("more than {:.1e}", f64::MAX)
    }
}

/// "divide the weights by at least 2.5" for a `bound`, linear in the inputs,
/// beyond [`MAX_MAGNITUDE`] (the bound itself may be `+∞`: the sum that
/// gives it overflowed, and then the factor is not known).
pub(crate) fn divide_hint(bound: f64, inputs: &str) -> String {
    if bound.is_finite() {
        let f = range::Magnitude {
            mant: bound,
            exp: 0,
        }
        .divisor(MAX_MAGNITUDE, 1);
        format!("divide the {inputs} by at least {}", range::fmt3(f))
    } else {
        format!(
            "divide the {inputs} by at least {} (a sum over them overflows, so more may be \
             needed)",
            range::fmt3(f64::MAX / MAX_MAGNITUDE)
        )
    }
}

/// Refuses a `bound` on a model's `quantity` (e.g. "the cost of a
/// hierarchy") that is not below [`MAX_MAGNITUDE`], or whose product with
/// `beta` is not.
fn check_range(model: &str, quantity: &str, bound: f64, beta: f64) -> Result<()> {
    if bound.is_nan() || bound > MAX_MAGNITUDE {
        return Err(Error::parameter(format!(
            "the weights are too large for {model}: {quantity} could reach {}, beyond the \
             {MAX_MAGNITUDE:.1e} that inference can represent; {}",
            magnitude(bound),
            divide_hint(bound, "weights"),
        )));
    }
    let scaled = beta * bound;
    if scaled.is_nan() || scaled > MAX_MAGNITUDE {
        return Err(Error::parameter(format!(
            "beta = {} is too large for these weights: under {model} {quantity} could \
             reach {}, and beta times it, {}, is beyond the {MAX_MAGNITUDE:.1e} that inference \
             can represent; use a beta of at most {} or rescale the weights",
            number(beta),
            magnitude(bound),
            magnitude(scaled),
            range::fmt3(range::round_down_3(MAX_MAGNITUDE / bound)),
        )));
    }
    Ok(())
}

/// The range check of the hierarchical models (see the module docs): `3 n Σ|w|`.
fn check_hierarchy_range(model: &str, w: &Weights, beta: f64) -> Result<()> {
    let (pos, neg) = weight_sums(w);
    let bound = 3.0 * w.n().max(1) as f64 * (pos + neg);
    check_range(model, "the cost of a hierarchy", bound, beta)
}

/// Calls `f(w_ij)` for every pair across two disjoint clusters: for each point
/// of the smaller one, over the points of the larger one in increasing order
/// (one contiguous row of the matrix).
#[inline]
fn for_each_cross(w: &Weights, a: Points<'_>, b: Points<'_>, mut f: impl FnMut(f64)) {
    let (small, large) = if b.len() <= a.len() { (b, a) } else { (a, b) };
    for i in small.iter() {
        let row = w.row(i);
        for j in large.iter() {
            f(row[j]);
        }
    }
}

/// The summary of an [`Hcc`] cluster: the sums of positive weights and of
/// |negative| weights over the pairs inside it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HccSummary {
    /// `Pos(T) = Σ_{i<j∈T} max(w_ij, 0)`.
    pub pos: f64,
    /// `Neg(T) = Σ_{i<j∈T} max(-w_ij, 0)`.
    pub neg: f64,
}

/// The pair form of a separable model whose `P` and `C` sum `parent(w_ij)`
/// and `child(w_ij)` over the pairs of a cluster.
fn pair_sums(w: &Weights, parent: impl Fn(f64) -> f64, child: impl Fn(f64) -> f64) -> PairSums {
    let n = w.n();
    let at = |f: &dyn Fn(f64) -> f64| -> Vec<f64> {
        (0..n * n)
            .map(|k| {
                if k / n == k % n {
                    0.0
                } else {
                    f(w.get(k / n, k % n))
                }
            })
            .collect()
    };
    PairSums {
        n,
        parent: at(&parent),
        child: at(&child),
        forbidden: Vec::new(),
        forbidden_term: f64::NEG_INFINITY,
    }
}

/// Hierarchical correlation clustering: `log ψ(L, R) = -β · cost(L, R)` with
/// the cost of the module docs. Weights of either sign; any number of points.
#[derive(Clone, Debug)]
pub struct Hcc {
    weights: Weights,
    beta: f64,
}

impl Hcc {
    /// The model over a weight matrix at inverse temperature `beta ≥ 0`.
    ///
    /// Fails if a cost or log-potential could overflow (see the module docs).
    pub fn new(weights: &Weights, beta: f64) -> Result<Hcc> {
        check_beta(beta)?;
        check_hierarchy_range("hierarchical correlation clustering", weights, beta)?;
        Ok(Hcc {
            weights: weights.clone(),
            beta,
        })
    }

    /// The same model at another β.
    pub fn with_beta(&self, beta: f64) -> Result<Hcc> {
        Hcc::new(&self.weights, beta)
    }

    /// The weights.
    pub fn weights(&self) -> &Weights {
        &self.weights
    }

    /// The inverse temperature β.
    pub fn beta(&self) -> f64 {
        self.beta
    }
}

impl Summarize for Hcc {
    type Summary = HccSummary;

    fn num_points(&self) -> usize {
        self.weights.n()
    }

    fn leaf(&self, _: usize) -> HccSummary {
        HccSummary::default()
    }

    #[inline]
    fn merge(&self, a: Cluster<'_, HccSummary>, b: Cluster<'_, HccSummary>) -> HccSummary {
        let mut s = HccSummary {
            pos: a.summary.pos + b.summary.pos,
            neg: a.summary.neg + b.summary.neg,
        };
        for_each_cross(&self.weights, a.points, b.points, |v| {
            s.pos += v.max(0.0);
            s.neg += (-v).max(0.0);
        });
        s
    }
}

impl Model for Hcc {
    #[inline]
    fn log_potential(&self, p: &HccSummary, l: &HccSummary, r: &HccSummary) -> f64 {
        -self.beta * (p.pos + (l.neg - l.pos) + (r.neg - r.pos))
    }

    fn separable(&self) -> Option<Separable<'_, HccSummary>> {
        Some(Separable {
            factors: vec![-self.beta; self.weights.n() + 1],
            terms: Box::new(|s: &HccSummary| (s.pos, s.neg - s.pos)),
            // `Pos` sums `max(w, 0)`; `Neg - Pos` sums `max(-w, 0) - max(w, 0) = -w`.
            pairs: Some(pair_sums(&self.weights, |w| w.max(0.0), |w| -w)),
        })
    }
}

impl Search for Hcc {
    #[inline]
    fn split_cost(&self, p: &HccSummary, l: &HccSummary, r: &HccSummary) -> f64 {
        (p.pos - l.pos - r.pos).max(0.0) + l.neg + r.neg
    }

    fn log_potential_of_cost(&self, cost: f64) -> f64 {
        -self.beta * cost
    }

    #[inline]
    fn heuristic(&self, cluster: Cluster<'_, HccSummary>) -> f64 {
        cluster.summary.pos
    }

    fn admissible(&self) -> bool {
        true
    }

    fn without(&self, cluster: Cluster<'_, HccSummary>, x: usize) -> HccSummary {
        let mut s = *cluster.summary;
        let row = self.weights.row(x);
        for j in cluster.points.iter().filter(|&j| j != x) {
            s.pos -= row[j].max(0.0);
            s.neg -= (-row[j]).max(0.0);
        }
        s
    }
}

/// The summary of a [`Dasgupta`] cluster: the weight inside it and its size.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DasguptaSummary {
    /// `W(T) = Σ_{i<j∈T} w_ij`.
    pub inside: f64,
    /// `|T|`.
    pub size: usize,
}

/// Dasgupta's cost: `log ψ(L, R) = -β · |L ∪ R| · Σ_{i∈L, j∈R} w_ij`, weights ≥ 0.
#[derive(Clone, Debug)]
pub struct Dasgupta {
    weights: Weights,
    beta: f64,
}

impl Dasgupta {
    /// The model; fails on a negative weight, and if a cost or log-potential
    /// could overflow (see the module docs).
    pub fn new(weights: &Weights, beta: f64) -> Result<Dasgupta> {
        check_beta(beta)?;
        if let Some((i, j, w)) = weights.first_negative() {
            return Err(Error::new(ErrorKind::NegativeWeight { i, j, w }));
        }
        check_hierarchy_range("Dasgupta's cost", weights, beta)?;
        Ok(Dasgupta {
            weights: weights.clone(),
            beta,
        })
    }

    /// The same model at another β.
    pub fn with_beta(&self, beta: f64) -> Result<Dasgupta> {
        Dasgupta::new(&self.weights, beta)
    }

    /// The weights.
    pub fn weights(&self) -> &Weights {
        &self.weights
    }

    /// The inverse temperature β.
    pub fn beta(&self) -> f64 {
        self.beta
    }
}

impl Summarize for Dasgupta {
    type Summary = DasguptaSummary;

    fn num_points(&self) -> usize {
        self.weights.n()
    }

    fn leaf(&self, _: usize) -> DasguptaSummary {
        DasguptaSummary {
            inside: 0.0,
            size: 1,
        }
    }

    #[inline]
    fn merge(
        &self,
        a: Cluster<'_, DasguptaSummary>,
        b: Cluster<'_, DasguptaSummary>,
    ) -> DasguptaSummary {
        let mut inside = a.summary.inside + b.summary.inside;
        for_each_cross(&self.weights, a.points, b.points, |v| inside += v);
        DasguptaSummary {
            inside,
            size: a.summary.size + b.summary.size,
        }
    }
}

impl Model for Dasgupta {
    #[inline]
    fn log_potential(&self, p: &DasguptaSummary, l: &DasguptaSummary, r: &DasguptaSummary) -> f64 {
        -self.beta * p.size as f64 * (p.inside + (-l.inside) + (-r.inside))
    }

    fn separable(&self) -> Option<Separable<'_, DasguptaSummary>> {
        Some(Separable {
            factors: (0..=self.weights.n())
                .map(|k| -self.beta * k as f64)
                .collect(),
            terms: Box::new(|s: &DasguptaSummary| (s.inside, -s.inside)),
            pairs: Some(pair_sums(&self.weights, |w| w, |w| -w)),
        })
    }
}

impl Search for Dasgupta {
    #[inline]
    fn split_cost(&self, p: &DasguptaSummary, l: &DasguptaSummary, r: &DasguptaSummary) -> f64 {
        p.size as f64 * (p.inside - l.inside - r.inside).max(0.0)
    }

    fn log_potential_of_cost(&self, cost: f64) -> f64 {
        -self.beta * cost
    }

    fn heuristic(&self, cluster: Cluster<'_, DasguptaSummary>) -> f64 {
        let mut w_min = f64::INFINITY;
        let points: Vec<usize> = cluster.points.iter().collect();
        for (k, &i) in points.iter().enumerate() {
            let row = self.weights.row(i);
            for &j in &points[k + 1..] {
                w_min = w_min.min(row[j]);
            }
        }
        let m = points.len() as f64;
        let excess = (cluster.summary.inside - w_min * m * (m - 1.0) / 2.0).max(0.0);
        w_min * (m * m * m - m) / 3.0 + 2.0 * excess
    }

    fn admissible(&self) -> bool {
        true
    }

    fn without(&self, cluster: Cluster<'_, DasguptaSummary>, x: usize) -> DasguptaSummary {
        let row = self.weights.row(x);
        let across: f64 = cluster
            .points
            .iter()
            .filter(|&j| j != x)
            .map(|j| row[j])
            .sum();
        DasguptaSummary {
            inside: cluster.summary.inside - across,
            size: cluster.summary.size - 1,
        }
    }
}

/// Flat correlation clustering (the flat paper's model): `log E(c) = β Σ_{i<j ∈ c} w_ij`.
/// The summary of a cluster is the weight inside it.
#[derive(Clone, Debug)]
pub struct CorrelationClustering {
    weights: Weights,
    beta: f64,
}

impl CorrelationClustering {
    /// The energy over a weight matrix at inverse temperature `beta ≥ 0`.
    ///
    /// Fails if a log-energy could overflow to `+∞` (see the module docs).
    pub fn new(weights: &Weights, beta: f64) -> Result<CorrelationClustering> {
        check_beta(beta)?;
        let (pos, neg) = weight_sums(weights);
        check_range(
            "correlation clustering",
            "the weight a partition keeps inside its clusters",
            pos,
            beta,
        )?;
        if neg > MAX_MAGNITUDE && beta > 0.0 && beta < 1e-300 {
            return Err(Error::parameter(format!(
                "beta = {} is too small for these weights: their negative sum, {}, \
                 overflows floating-point numbers, which is harmless only for beta >= 1e-300 \
                 (or 0); rescale the weights",
                number(beta),
                magnitude(neg)
            )));
        }
        Ok(CorrelationClustering {
            weights: weights.clone(),
            beta,
        })
    }

    /// The weights.
    pub fn weights(&self) -> &Weights {
        &self.weights
    }

    /// The inverse temperature β.
    pub fn beta(&self) -> f64 {
        self.beta
    }
}

impl Summarize for CorrelationClustering {
    type Summary = f64;

    fn num_points(&self) -> usize {
        self.weights.n()
    }

    fn leaf(&self, _: usize) -> f64 {
        0.0
    }

    #[inline]
    fn merge(&self, a: Cluster<'_, f64>, b: Cluster<'_, f64>) -> f64 {
        let mut inside = a.summary + b.summary;
        for_each_cross(&self.weights, a.points, b.points, |v| inside += v);
        inside
    }
}

impl Energy for CorrelationClustering {
    #[inline]
    fn log_energy(&self, inside: &f64) -> f64 {
        // At β = 0 every energy is 1, even where the weight inside overflowed to -∞.
        if self.beta == 0.0 {
            0.0
        } else {
            self.beta * inside
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::set::{for_each_split, members};
    use crate::base::weights::Matrix;

    #[allow(clippy::needless_range_loop)]
    fn weights(n: usize, seed: u64) -> Weights {
        let mut x = seed;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        };
        let mut rows = vec![vec![0.0; n]; n];
        for i in 0..n {
            for j in i + 1..n {
                let v = next();
                rows[i][j] = v;
                rows[j][i] = v;
            }
        }
        Weights::from_matrix(&Matrix::from_rows(rows).unwrap()).unwrap()
    }

    /// `cost(L, R)` of hierarchical correlation clustering straight from the weights.
    fn hcc_direct(w: &Weights, left: &[usize], right: &[usize]) -> f64 {
        let mut c = 0.0;
        for &i in left {
            for &j in right {
                c += w.get(i, j).max(0.0);
            }
        }
        for part in [left, right] {
            for (k, &i) in part.iter().enumerate() {
                for &j in &part[k + 1..] {
                    c += (-w.get(i, j)).max(0.0);
                }
            }
        }
        c
    }

    /// Dasgupta's cost straight from the weights.
    fn dasgupta_direct(w: &Weights, left: &[usize], right: &[usize]) -> f64 {
        let cut: f64 = left
            .iter()
            .flat_map(|&i| right.iter().map(move |&j| w.get(i, j)))
            .sum();
        (left.len() + right.len()) as f64 * cut
    }

    #[test]
    fn summaries_give_the_direct_costs() {
        let w = weights(7, 3);
        let abs = Weights::from_matrix(&Matrix {
            rows: 7,
            cols: 7,
            data: (0..49).map(|k| w.get(k / 7, k % 7).abs()).collect(),
        })
        .unwrap();
        let hcc = Hcc::new(&w, 1.7).unwrap();
        let das = Dasgupta::new(&abs, 0.3).unwrap();
        let (hs, ds) = (hcc.separable().unwrap(), das.separable().unwrap());
        for s in 1u32..1 << 7 {
            for_each_split(s, |l, r| {
                let (lv, rv): (Vec<_>, Vec<_>) = (members(l).collect(), members(r).collect());
                let sum = |m: &Hcc, x: u32| m.summary(Points::Mask(x));
                let (p, a, b) = (sum(&hcc, s), sum(&hcc, l), sum(&hcc, r));
                let direct = hcc_direct(&w, &lv, &rv);
                assert!((hcc.split_cost(&p, &a, &b) - direct).abs() < 1e-12);
                assert!((hcc.log_potential(&p, &a, &b) + 1.7 * direct).abs() < 1e-12);
                let k = s.count_ones() as usize;
                let sep = hs.factors[k] * ((hs.terms)(&p).0 + (hs.terms)(&a).1 + (hs.terms)(&b).1);
                assert!((sep - hcc.log_potential(&p, &a, &b)).abs() < 1e-12);
                let sum = |m: &Dasgupta, x: u32| m.summary(Points::Mask(x));
                let (p, a, b) = (sum(&das, s), sum(&das, l), sum(&das, r));
                let direct = dasgupta_direct(&abs, &lv, &rv);
                assert!((das.split_cost(&p, &a, &b) - direct).abs() < 1e-12);
                assert!((das.log_potential(&p, &a, &b) + 0.3 * direct).abs() < 1e-12);
                let sep = ds.factors[k] * ((ds.terms)(&p).0 + (ds.terms)(&a).1 + (ds.terms)(&b).1);
                assert!((sep - das.log_potential(&p, &a, &b)).abs() < 1e-12);
            });
        }
    }

    #[test]
    fn removing_a_point_undoes_adding_it() {
        let w = weights(9, 5);
        let hcc = Hcc::new(&w, 1.0).unwrap();
        let set = 0b1_0110_1101u32;
        let full = hcc.summary(Points::Mask(set));
        for x in members(set) {
            let cluster = Cluster {
                points: Points::Mask(set),
                summary: &full,
            };
            let without = hcc.without(cluster, x);
            let direct = hcc.summary(Points::Mask(set & !(1 << x)));
            assert!((without.pos - direct.pos).abs() < 1e-12);
            assert!((without.neg - direct.neg).abs() < 1e-12);
        }
    }

    #[test]
    fn dasgupta_rejects_negative_weights_and_bad_beta() {
        let w = weights(4, 1);
        let e = Dasgupta::new(&w, 1.0).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::NegativeWeight { .. }), "{e}");
        assert!(Hcc::new(&w, f64::NAN).is_err());
        assert!(Hcc::new(&w, -1.0).is_err());
        assert!(CorrelationClustering::new(&w, f64::INFINITY).is_err());
    }
}
