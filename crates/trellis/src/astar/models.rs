//! A* models over pairwise weights: hierarchical correlation clustering and
//! Dasgupta's cost, with their admissible heuristics.
//!
//! A cluster's statistics are its inside weight sums, computed once per
//! vertex in `O(m²)`; a split then costs O(1) by inclusion-exclusion (the
//! cross sum of `L × R` is the sum inside `L ∪ R` minus those inside `L` and
//! `R`).
//!
//! **Hierarchical correlation clustering** (A* paper Eq. 9):
//! `cost(L, R) = Pos(L ∪ R) - Pos(L) - Pos(R) + Neg(L) + Neg(R)`, with `Pos`
//! and `Neg` the sums of positive weights and of |negative| weights over
//! the pairs inside a cluster. Heuristic (Prop. 1): `H(X) = Pos(X)`. Every
//! pair of a cluster is cut exactly once in any hierarchy below it, and a cut
//! positive pair costs its weight, so every hierarchy over `X` costs at least
//! `Pos(X)` (the negative terms only add).
//!
//! **Dasgupta's cost** (Appendix A.8, weights ≥ 0):
//! `cost(L, R) = |L ∪ R| · (W(L ∪ R) - W(L) - W(R))`. A tree's cost is linear
//! in the weights, and with all weights equal to 1 every binary tree over `m`
//! points costs the same, `(m³ - m) / 3` (induction: a root split `a + b = m`
//! costs `m·a·b`, and `m·a·b + (a³-a)/3 + (b³-b)/3 = (m³-m)/3`). Writing
//! `w = w_min + (w - w_min)` with `w_min` the smallest weight inside `X`:
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

use super::{SearchModel, Set, points};
use crate::base::weights::Weights;
use crate::error::{Error, ErrorKind, Result};
use crate::models::cost::check_beta;

/// Sums over the pairs of `x` with the other points of `set`, as `inside_sums`.
fn point_sums(w: &Weights, set: Set, x: usize) -> (f64, f64, f64) {
    let (mut pos, mut neg, mut all) = (0.0, 0.0, 0.0);
    let row = w.row(x);
    for j in points(set & !(1u128 << x)) {
        let v = row[j];
        pos += v.max(0.0);
        neg += (-v).max(0.0);
        all += v;
    }
    (pos, neg, all)
}

/// `±1`: adding or removing a point.
fn sign(added: bool) -> f64 {
    if added { 1.0 } else { -1.0 }
}

/// Sums over the pairs inside a set of `(max(w, 0), max(-w, 0), w)`.
fn inside_sums(w: &Weights, set: Set) -> (f64, f64, f64) {
    let (mut pos, mut neg, mut all) = (0.0, 0.0, 0.0);
    let mut rest = set;
    while rest != 0 {
        let i = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        let row = w.row(i);
        for j in points(rest) {
            let v = row[j];
            pos += v.max(0.0);
            neg += (-v).max(0.0);
            all += v;
        }
    }
    (pos, neg, all)
}

fn check_n(w: &Weights) -> Result<()> {
    if w.n() > super::MAX_ASTAR_POINTS {
        return Err(Error::new(ErrorKind::TooManyPoints {
            n: w.n(),
            max: super::MAX_ASTAR_POINTS,
        }));
    }
    Ok(())
}

/// Hierarchical correlation clustering for A* (see the module docs), with
/// `log φ = -β · cost`.
#[derive(Clone, Debug)]
pub struct HccSearch {
    weights: Weights,
    beta: f64,
}

impl HccSearch {
    /// The model over a weight matrix (any signs).
    pub fn new(weights: &Weights, beta: f64) -> Result<HccSearch> {
        check_beta(beta)?;
        check_n(weights)?;
        Ok(HccSearch {
            weights: weights.clone(),
            beta,
        })
    }
}

impl SearchModel for HccSearch {
    /// `(Pos, Neg)` inside the cluster.
    type Stats = (f64, f64);

    fn num_points(&self) -> usize {
        self.weights.n()
    }

    fn stats(&self, set: Set) -> (f64, f64) {
        let (pos, neg, _) = inside_sums(&self.weights, set);
        (pos, neg)
    }

    fn moved(&self, set: Set, stats: &(f64, f64), x: usize, added: bool) -> (f64, f64) {
        let (pos, neg, _) = point_sums(&self.weights, set, x);
        (stats.0 + sign(added) * pos, stats.1 + sign(added) * neg)
    }

    #[inline]
    fn split_cost(
        &self,
        p: (Set, &(f64, f64)),
        l: (Set, &(f64, f64)),
        r: (Set, &(f64, f64)),
    ) -> f64 {
        let cut = (p.1.0 - l.1.0 - r.1.0).max(0.0);
        cut + l.1.1 + r.1.1
    }

    #[inline]
    fn heuristic(&self, _: Set, stats: &(f64, f64)) -> f64 {
        stats.0
    }

    fn admissible(&self) -> bool {
        true
    }

    fn log_potential(&self, cost: f64) -> f64 {
        -self.beta * cost
    }
}

/// Dasgupta's cost for A* (see the module docs), `log φ = -β · cost`.
#[derive(Clone, Debug)]
pub struct DasguptaSearch {
    weights: Weights,
    beta: f64,
}

impl DasguptaSearch {
    /// The model; fails on a negative weight.
    pub fn new(weights: &Weights, beta: f64) -> Result<DasguptaSearch> {
        check_beta(beta)?;
        check_n(weights)?;
        if let Some((i, j, w)) = weights.first_negative() {
            return Err(Error::new(ErrorKind::NegativeWeight { i, j, w }));
        }
        Ok(DasguptaSearch {
            weights: weights.clone(),
            beta,
        })
    }
}

impl SearchModel for DasguptaSearch {
    /// `W`, the weight inside the cluster.
    type Stats = f64;

    fn num_points(&self) -> usize {
        self.weights.n()
    }

    fn stats(&self, set: Set) -> f64 {
        inside_sums(&self.weights, set).2
    }

    fn moved(&self, set: Set, stats: &f64, x: usize, added: bool) -> f64 {
        stats + sign(added) * point_sums(&self.weights, set, x).2
    }

    #[inline]
    fn split_cost(&self, p: (Set, &f64), l: (Set, &f64), r: (Set, &f64)) -> f64 {
        let cut = (p.1 - l.1 - r.1).max(0.0);
        p.0.count_ones() as f64 * cut
    }

    fn heuristic(&self, set: Set, stats: &f64) -> f64 {
        let mut w_min = f64::INFINITY;
        let mut rest = set;
        while rest != 0 {
            let i = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let row = self.weights.row(i);
            for j in points(rest) {
                w_min = w_min.min(row[j]);
            }
        }
        let m = set.count_ones() as f64;
        let excess = (stats - w_min * m * (m - 1.0) / 2.0).max(0.0);
        w_min * (m * m * m - m) / 3.0 + 2.0 * excess
    }

    fn admissible(&self) -> bool {
        true
    }

    fn log_potential(&self, cost: f64) -> f64 {
        -self.beta * cost
    }
}
