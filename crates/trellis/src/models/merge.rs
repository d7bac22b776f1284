//! Split potentials on cluster summaries, for any number of points.
//!
//! The dense [`Trellis`](crate::Trellis) needs a table over all `2^n` subsets
//! and so at most 30 points. Agglomerative baselines (greedy, beam search),
//! sparse trellises and A* only ever score the clusters they build, so their
//! models describe a cluster by a *summary*: a leaf has one, two merged
//! clusters have the summary of their union, and `log ψ` of two sibling
//! clusters is computed from their summaries. A [`MergeModel`] works for any
//! number of points:
//!
//! - Ginkgo jets: the summary is the cluster's 4-momentum (and size);
//! - [`Pairwise`] hierarchical correlation clustering and Dasgupta's cost: the
//!   summary is the member list with the weight sum inside the cluster, so
//!   `log ψ` only sums the weights across the two clusters (`O(|L|·|R|)`).
//!
//! [`tree_log_potential`] scores a whole tree bottom-up with any such model.

use crate::base::tree::Tree;
use crate::base::weights::Weights;
use crate::error::{Error, Result};
use crate::models::cost::check_beta;

/// A split potential on cluster summaries (see the module docs).
///
/// `log_potential(a, b)` must be symmetric in `a` and `b`, since trees are unordered.
pub trait MergeModel: Sync {
    /// What the model keeps about a cluster.
    type Cluster: Clone + Send + Sync;

    /// Number of points.
    fn num_points(&self) -> usize;

    /// The summary of the singleton `{i}`.
    fn leaf(&self, i: usize) -> Self::Cluster;

    /// The summary of the union of two disjoint clusters.
    fn merge(&self, a: &Self::Cluster, b: &Self::Cluster) -> Self::Cluster;

    /// `log ψ(A, B)` of two disjoint sibling clusters (`-∞`: forbidden).
    fn log_potential(&self, a: &Self::Cluster, b: &Self::Cluster) -> f64;
}

/// `log φ(H)`: the total log-potential of a tree, merged bottom-up. The tree
/// may cover some of the points; leaves must be distinct and in range.
pub fn tree_log_potential<M: MergeModel>(model: &M, tree: &Tree) -> Result<f64> {
    tree.validate(model.num_points(), false)?;
    fn go<M: MergeModel>(m: &M, t: &Tree, total: &mut f64) -> M::Cluster {
        match t {
            Tree::Leaf(i) => m.leaf(*i),
            Tree::Node(l, r) => {
                let (a, b) = (go(m, l, total), go(m, r, total));
                *total += m.log_potential(&a, &b);
                m.merge(&a, &b)
            }
        }
    }
    let mut total = 0.0;
    go(model, tree, &mut total);
    if total.is_nan() {
        return Err(Error::tree("the tree's log-potential is NaN"));
    }
    Ok(total)
}

/// Which pairwise cost a [`Pairwise`] model uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairwiseCost {
    /// Hierarchical correlation clustering (see [`crate::Hcc`]).
    Hcc,
    /// Dasgupta's cost (see [`crate::Dasgupta`]).
    Dasgupta,
}

/// Hierarchical correlation clustering or Dasgupta's cost over a weight
/// matrix, `log ψ = -β · cost`, for any number of points.
#[derive(Clone, Debug)]
pub struct Pairwise {
    weights: Weights,
    cost: PairwiseCost,
    beta: f64,
}

/// A cluster of a [`Pairwise`] model: its points and the sum inside it that
/// the cost needs (hcc: `Σ_{i<j} max(-w_ij, 0)`; Dasgupta: `Σ_{i<j} w_ij`).
#[derive(Clone, Debug, PartialEq)]
pub struct Members {
    /// The points, in increasing order.
    pub points: Vec<usize>,
    /// The weight sum inside the cluster used by the cost.
    pub inside: f64,
}

impl Pairwise {
    /// The model; Dasgupta's cost needs non-negative weights.
    pub fn new(weights: &Weights, cost: PairwiseCost, beta: f64) -> Result<Pairwise> {
        check_beta(beta)?;
        if cost == PairwiseCost::Dasgupta {
            if let Some((i, j, w)) = weights.first_negative() {
                return Err(Error::new(crate::ErrorKind::NegativeWeight { i, j, w }));
            }
        }
        Ok(Pairwise {
            weights: weights.clone(),
            cost,
            beta,
        })
    }

    /// Sums of `max(w, 0)`, `max(-w, 0)` and `w` over the pairs across `a` and `b`.
    fn cross(&self, a: &Members, b: &Members) -> (f64, f64, f64) {
        let (mut pos, mut neg, mut all) = (0.0, 0.0, 0.0);
        for &i in &a.points {
            let row = self.weights.row(i);
            for &j in &b.points {
                let w = row[j];
                pos += w.max(0.0);
                neg += (-w).max(0.0);
                all += w;
            }
        }
        (pos, neg, all)
    }

    /// `cost(A, B)` of two disjoint clusters.
    pub fn split_cost(&self, a: &Members, b: &Members) -> f64 {
        let (pos, _, all) = self.cross(a, b);
        match self.cost {
            PairwiseCost::Hcc => pos + a.inside + b.inside,
            PairwiseCost::Dasgupta => (a.points.len() + b.points.len()) as f64 * all,
        }
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

impl MergeModel for Pairwise {
    type Cluster = Members;

    fn num_points(&self) -> usize {
        self.weights.n()
    }

    fn leaf(&self, i: usize) -> Members {
        Members {
            points: vec![i],
            inside: 0.0,
        }
    }

    fn merge(&self, a: &Members, b: &Members) -> Members {
        let (_, neg, all) = self.cross(a, b);
        let mut points = Vec::with_capacity(a.points.len() + b.points.len());
        points.extend_from_slice(&a.points);
        points.extend_from_slice(&b.points);
        points.sort_unstable();
        let across = match self.cost {
            PairwiseCost::Hcc => neg,
            PairwiseCost::Dasgupta => all,
        };
        Members {
            points,
            inside: a.inside + b.inside + across,
        }
    }

    fn log_potential(&self, a: &Members, b: &Members) -> f64 {
        -self.beta * self.split_cost(a, b)
    }
}
