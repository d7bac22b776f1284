//! Models: the one way to describe what the trellises, A* and the baselines
//! score.
//!
//! # Split potentials over cluster summaries
//!
//! The energy-based model of the trellis paper (Definition 2) scores a binary
//! hierarchy `H` by a product over its internal nodes of a potential of the
//! node's two children, `φ(H) = Π ψ(L, R)`, so `P(H) = φ(H) / Z`. Every
//! algorithm of this crate only ever needs `log ψ` of splits of the clusters
//! it builds, so a model describes a cluster by a **summary**, the little it
//! needs to know about it:
//!
//! - [`Summarize`]: the summary of a single point ([`leaf`](Summarize::leaf))
//!   and of the union of two disjoint clusters ([`merge`](Summarize::merge),
//!   which also sees the clusters' [`Points`]);
//! - [`Model`]: `log ψ` of splitting a cluster into two, from the three
//!   summaries ([`log_potential`](Model::log_potential));
//! - [`Search`]: the optional A* extension: a lower bound on the cost of every
//!   hierarchy over a cluster ([`heuristic`](Search::heuristic));
//! - [`Energy`]: flat clusterings score each cluster of a partition,
//!   `P(C) = Π E(c) / Z`, with `log E` from the same summaries.
//!
//! Everything else derives from these: the dense trellis tabulates the summary
//! of each of the `2^n` subsets once (`O(2^n)` merges) and then evaluates
//! `log ψ` of its `3^n / 2` splits from the table; sparse trellises and A*
//! keep the summaries of the clusters they create; greedy and beam search
//! merge summaries as they agglomerate, for any number of points.
//!
//! # The separable fast path
//!
//! Models whose log-potential has the *separable form*
//!
//! ```text
//! log ψ(L, R) = f(|S|) · ( P(S) + C(L) + C(R) ),   S = L ∪ R,
//! ```
//!
//! with `P` and `C` functions of a cluster's summary, say so through
//! [`Model::separable`]. The dense trellises then tabulate `P` and `C` and
//! run a kernel whose inner loop is one addition (MAP) and one multiply-add in
//! scaled arithmetic (partition function), with no `exp` and no call per
//! split. `log_potential` must describe the same function: it is what every
//! other algorithm uses, and what the dense trellis falls back to when the
//! values are too large for scaled arithmetic. Both built-in Gibbs models are
//! separable: hierarchical correlation clustering (`f ≡ -β`) and Dasgupta's
//! cost (`f(k) = -β·k`).
//!
//! # Built-in models
//!
//! | model | what | summary |
//! |---|---|---|
//! | [`Hcc`] | hierarchical correlation clustering, weights of any sign | positive and negative weight inside |
//! | [`Dasgupta`] | Dasgupta's cost, weights ≥ 0 | weight inside and size |
//! | [`CorrelationClustering`] | flat correlation clustering (an [`Energy`]) | weight inside |
//! | [`Ginkgo`](crate::ginkgo::Ginkgo) | the jet shower likelihood | summed 4-momentum |
//! | [`LinkagePotential`] | average, complete or single linkage distance across a split, over [`Distances`] (not separable; see [`linkage`]) | size and distance inside (average); per-point max/min distance, `8 n` bytes (complete, single) |
//!
//! # A user-defined model
//!
//! Any function of the two clusters works. Here the potential favours merging
//! clusters whose total "mass" is close; a cluster's summary is its mass:
//!
//! ```
//! use trellis::{Cluster, Model, Summarize, Trellis};
//!
//! struct MassBalance(Vec<f64>);
//!
//! impl Summarize for MassBalance {
//!     type Summary = f64;
//!     fn num_points(&self) -> usize {
//!         self.0.len()
//!     }
//!     fn leaf(&self, i: usize) -> f64 {
//!         self.0[i]
//!     }
//!     fn merge(&self, a: Cluster<'_, f64>, b: Cluster<'_, f64>) -> f64 {
//!         a.summary + b.summary
//!     }
//! }
//!
//! impl Model for MassBalance {
//!     fn log_potential(&self, _parent: &f64, left: &f64, right: &f64) -> f64 {
//!         -(left - right).abs()
//!     }
//! }
//!
//! let trellis = Trellis::new(MassBalance(vec![1.0, 2.0, 3.0, 1.5, 0.5]))?;
//! let map = trellis.map();
//! println!("MAP {} with log φ = {:.3}, log Z = {:.3}", map.tree, map.log_potential, trellis.log_z());
//! assert!(trellis.log_z() >= map.log_potential);
//! # Ok::<(), trellis::Error>(())
//! ```
//!
//! The same model runs unchanged on a sparse trellis, with A* (given a
//! heuristic) and with greedy or beam search over any number of points.

pub mod linkage;
pub(crate) mod pairwise;
pub mod registry;

pub use linkage::{Distances, LinkageKind, LinkagePotential, LinkageSummary, condensed_points};
pub use pairwise::{CorrelationClustering, Dasgupta, DasguptaSummary, Hcc, HccSummary};
pub use registry::{
    CostModel, Engine, InputKind, MODELS, ModelInfo, ModelName, PairwiseData, RECIPE_BETA,
    Structure, recipe_description, recipe_weights,
};

use crate::base::set::Points;
use crate::base::tree::Tree;
use crate::error::{Error, Result};

/// A cluster as a model sees it when merging: its points and its summary.
#[derive(Debug)]
pub struct Cluster<'a, S> {
    /// The cluster's points.
    pub points: Points<'a>,
    /// Its summary.
    pub summary: &'a S,
}

impl<S> Clone for Cluster<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for Cluster<'_, S> {}

/// How a model summarises clusters: the base of [`Model`] and [`Energy`].
///
/// # Contract
/// - `merge` is called only with disjoint non-empty clusters of the model's
///   points, and must not depend on how a cluster was assembled: merging the
///   leaves of a set in any order gives the same summary (up to rounding).
/// - Everything is deterministic.
pub trait Summarize: Sync {
    /// What the model keeps about a cluster.
    type Summary: Clone + Send + Sync;

    /// Number of points `n`.
    fn num_points(&self) -> usize;

    /// The summary of the single point `i`.
    fn leaf(&self, i: usize) -> Self::Summary;

    /// The summary of the union of two disjoint clusters.
    fn merge(&self, a: Cluster<'_, Self::Summary>, b: Cluster<'_, Self::Summary>) -> Self::Summary;

    /// Bytes one summary holds on the heap beyond
    /// `size_of::<Self::Summary>()` (0, the default, for summaries that are
    /// plain values). The memory checks of the dense trellis and of A* add it
    /// for every summary they keep, so a model whose summary owns a vector
    /// (the complete and single linkage potentials: `8n` bytes) is refused
    /// before it is allocated, not after.
    fn summary_heap_bytes(&self) -> u64 {
        0
    }

    /// The summary of a non-empty set of points: its leaves merged one at a
    /// time in increasing order (override when there is a faster way).
    fn summary(&self, points: Points<'_>) -> Self::Summary {
        let list: Vec<usize> = points.iter().collect();
        let mut acc = self.leaf(list[0]);
        for k in 1..list.len() {
            let x = self.leaf(list[k]);
            acc = self.merge(
                Cluster {
                    points: Points::List(&list[..k]),
                    summary: &acc,
                },
                Cluster {
                    points: Points::List(&list[k..=k]),
                    summary: &x,
                },
            );
        }
        acc
    }
}

/// A split potential `ψ(L, R) > 0` over cluster summaries (see the module docs).
///
/// # Contract
/// - `log_potential(parent, left, right)` is called with the summaries of a
///   cluster and of a split of it into two disjoint non-empty parts, `left`
///   holding the lowest-indexed point of the cluster, so a model need not be
///   symmetric to be well defined (trees are unordered).
/// - `-∞` (a forbidden split) is allowed; NaN and `+∞` are errors reported by
///   the inference.
/// - If [`separable`](Model::separable) returns a form, it must describe the
///   same function as `log_potential`.
pub trait Model: Summarize {
    /// `log ψ(left, right)`, with `parent` the summary of `left ∪ right`.
    fn log_potential(
        &self,
        parent: &Self::Summary,
        left: &Self::Summary,
        right: &Self::Summary,
    ) -> f64;

    /// The separable form of the potential, if it has one (see the module docs).
    fn separable(&self) -> Option<Separable<'_, Self::Summary>> {
        None
    }

    /// An upper bound of [`log_potential`](Model::log_potential) (same
    /// arguments) that is much cheaper to evaluate, or `+∞` (the default: no
    /// bound). The dense trellis's MAP search skips a split whose bound plus
    /// its two children's MAP values is below the best split found so far,
    /// so a model with an expensive potential (the Ginkgo likelihood: four
    /// exponentials and a logarithm) gains without changing the answer.
    /// It must never be below the *evaluated* `log_potential`, rounding
    /// included (add a small relative margin); NaN counts as no bound.
    fn log_potential_bound(
        &self,
        _parent: &Self::Summary,
        _left: &Self::Summary,
        _right: &Self::Summary,
    ) -> f64 {
        f64::INFINITY
    }

    /// Whether some tree over all the points can hold every one of
    /// `clusters` (the summaries of disjoint clusters covering the points)
    /// as a cluster without a forbidden split, as far as the model knows it
    /// cheaply. The default is `true`: no restriction known. A model
    /// restricted by triplets ([`crate::constraints::Constrained`]) answers
    /// exactly, so that agglomeration ([`crate::baselines::greedy`], the
    /// scale guess of the blocked kernel) never merges into a dead end.
    fn extendable(&self, _clusters: &[&Self::Summary]) -> bool {
        true
    }
}

/// `(P(S), C(S))` of a cluster from its summary, in a [`Separable`] form.
pub type Terms<'m, S> = Box<dyn Fn(&S) -> (f64, f64) + Sync + 'm>;

/// The separable form `log ψ(L, R) = f(|S|) · (P(S) + C(L) + C(R))`.
pub struct Separable<'m, S> {
    /// `f(k)` for every cluster size `k = 0..=n` (for Gibbs models `-β·σ(k)`).
    pub factors: Vec<f64>,
    /// `(P(S), C(S))` of a cluster from its summary.
    pub terms: Terms<'m, S>,
    /// When both terms are sums over the pairs of a cluster (hierarchical
    /// correlation clustering, Dasgupta's cost), those pair values: the
    /// dense kernels then rebuild `P` and `C` block by block from the
    /// `n × n` pairs instead of tabulating `2^n` summaries, and the passes
    /// of `logz` and `map` hold one 8-byte entry per subset. `None` for any
    /// other form.
    pub pairs: Option<PairSums>,
}

/// `P(S) = Σ_{i<j∈S} parent[i·n + j]` and `C(S) = Σ_{i<j∈S} child[i·n + j]`
/// (so `P` and `C` of a single point are 0): the pair form of a
/// [`Separable`] model. Both matrices are `n × n`, row-major, symmetric;
/// the diagonal is ignored. `terms` of the same model must give these sums
/// (up to rounding).
#[derive(Clone, Debug, PartialEq)]
pub struct PairSums {
    /// The number of points.
    pub n: usize,
    /// The pair values of `P`.
    pub parent: Vec<f64>,
    /// The pair values of `C`.
    pub child: Vec<f64>,
    /// Triplets `[a, b, c]` that forbid clusters (a model restricted to the
    /// trees satisfying them, `constraints.rs`): a cluster holding `c` and
    /// exactly one of `a`, `b` has both terms `forbidden_term` instead of
    /// its pair sums. Empty for a plain model.
    pub forbidden: Vec<[usize; 3]>,
    /// The terms of a forbidden cluster: `-∞` where the factors are
    /// positive, `+∞` where they are negative (so its potential is 0).
    pub forbidden_term: f64,
}

impl<S> std::fmt::Debug for Separable<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Separable")
            .field("factors", &self.factors)
            .finish_non_exhaustive()
    }
}

/// The A* extension of a [`Model`]: costs to minimise and a lower bound on
/// what a cluster still costs.
///
/// A* minimises the total [`split_cost`](Search::split_cost) of a hierarchy.
/// For a Gibbs model `log ψ = -β · cost` it is the cost itself (independent
/// of β, so the optimum is the MAP tree for every β > 0); by default it is
/// `-log ψ`. `+∞` marks an impossible split.
pub trait Search: Model {
    /// `cost(L, R)` of splitting `parent` into `left` (holding its lowest
    /// point) and `right`.
    fn split_cost(
        &self,
        parent: &Self::Summary,
        left: &Self::Summary,
        right: &Self::Summary,
    ) -> f64 {
        -self.log_potential(parent, left, right)
    }

    /// `log φ(H)` of a hierarchy of total cost `cost` (`-β · cost` for Gibbs
    /// models, `-cost` by default).
    fn log_potential_of_cost(&self, cost: f64) -> f64 {
        -cost
    }

    /// A lower bound on the cost of the cheapest hierarchy over `cluster`
    /// (at least two points): the A* heuristic `H(X)`.
    fn heuristic(&self, cluster: Cluster<'_, Self::Summary>) -> f64;

    /// Whether [`heuristic`](Search::heuristic) is proven never to overestimate.
    fn admissible(&self) -> bool;

    /// The summary of `cluster` without its point `x` (at least two points):
    /// approximate A* scores many one-point moves with it. The default
    /// recomputes it from the remaining points.
    fn without(&self, cluster: Cluster<'_, Self::Summary>, x: usize) -> Self::Summary {
        let rest: Vec<usize> = cluster.points.iter().filter(|&i| i != x).collect();
        self.summary(Points::List(&rest))
    }
}

/// A cluster energy `E(c) > 0` for flat clusterings, given as `log E(c)` of a
/// cluster's summary.
///
/// `-∞` (a forbidden cluster) is allowed; NaN and `+∞` are errors reported by
/// the inference.
pub trait Energy: Summarize {
    /// `log E(cluster)`.
    fn log_energy(&self, cluster: &Self::Summary) -> f64;
}

impl<M: Summarize + ?Sized> Summarize for &M {
    type Summary = M::Summary;
    fn num_points(&self) -> usize {
        (**self).num_points()
    }
    fn leaf(&self, i: usize) -> M::Summary {
        (**self).leaf(i)
    }
    fn summary_heap_bytes(&self) -> u64 {
        (**self).summary_heap_bytes()
    }
    #[inline]
    fn merge(&self, a: Cluster<'_, M::Summary>, b: Cluster<'_, M::Summary>) -> M::Summary {
        (**self).merge(a, b)
    }
    fn summary(&self, points: Points<'_>) -> M::Summary {
        (**self).summary(points)
    }
}

impl<M: Model + ?Sized> Model for &M {
    #[inline]
    fn log_potential(&self, p: &M::Summary, l: &M::Summary, r: &M::Summary) -> f64 {
        (**self).log_potential(p, l, r)
    }
    fn separable(&self) -> Option<Separable<'_, M::Summary>> {
        (**self).separable()
    }
    #[inline]
    fn log_potential_bound(&self, p: &M::Summary, l: &M::Summary, r: &M::Summary) -> f64 {
        (**self).log_potential_bound(p, l, r)
    }
    fn extendable(&self, clusters: &[&M::Summary]) -> bool {
        (**self).extendable(clusters)
    }
}

impl<M: Search + ?Sized> Search for &M {
    #[inline]
    fn split_cost(&self, p: &M::Summary, l: &M::Summary, r: &M::Summary) -> f64 {
        (**self).split_cost(p, l, r)
    }
    fn log_potential_of_cost(&self, cost: f64) -> f64 {
        (**self).log_potential_of_cost(cost)
    }
    fn heuristic(&self, cluster: Cluster<'_, M::Summary>) -> f64 {
        (**self).heuristic(cluster)
    }
    fn admissible(&self) -> bool {
        (**self).admissible()
    }
    fn without(&self, cluster: Cluster<'_, M::Summary>, x: usize) -> M::Summary {
        (**self).without(cluster, x)
    }
}

impl<M: Energy + ?Sized> Energy for &M {
    fn log_energy(&self, cluster: &M::Summary) -> f64 {
        (**self).log_energy(cluster)
    }
}

/// Hides the separable form of a model, forcing the general kernels, and
/// its [`log_potential_bound`](Model::log_potential_bound), so the MAP
/// search evaluates every split.
///
/// Useful to cross-check the kernels against each other, and to measure
/// what the separable form and the bound buy.
#[derive(Clone, Debug)]
pub struct General<M>(pub M);

impl<M: Summarize> Summarize for General<M> {
    type Summary = M::Summary;
    fn num_points(&self) -> usize {
        self.0.num_points()
    }
    fn leaf(&self, i: usize) -> M::Summary {
        self.0.leaf(i)
    }
    fn summary_heap_bytes(&self) -> u64 {
        self.0.summary_heap_bytes()
    }
    #[inline]
    fn merge(&self, a: Cluster<'_, M::Summary>, b: Cluster<'_, M::Summary>) -> M::Summary {
        self.0.merge(a, b)
    }
    fn summary(&self, points: Points<'_>) -> M::Summary {
        self.0.summary(points)
    }
}

impl<M: Model> Model for General<M> {
    #[inline]
    fn log_potential(&self, p: &M::Summary, l: &M::Summary, r: &M::Summary) -> f64 {
        self.0.log_potential(p, l, r)
    }
    fn extendable(&self, clusters: &[&M::Summary]) -> bool {
        self.0.extendable(clusters)
    }
}

impl<M: Search> Search for General<M> {
    fn split_cost(&self, p: &M::Summary, l: &M::Summary, r: &M::Summary) -> f64 {
        self.0.split_cost(p, l, r)
    }
    fn log_potential_of_cost(&self, cost: f64) -> f64 {
        self.0.log_potential_of_cost(cost)
    }
    fn heuristic(&self, cluster: Cluster<'_, M::Summary>) -> f64 {
        self.0.heuristic(cluster)
    }
    fn admissible(&self) -> bool {
        self.0.admissible()
    }
    fn without(&self, cluster: Cluster<'_, M::Summary>, x: usize) -> M::Summary {
        self.0.without(cluster, x)
    }
}

/// Walks a tree bottom-up, merging summaries, and calls `split(parent, left,
/// right)` for every internal node with `left` the child holding the lowest
/// point. The tree must be valid for the model's points. Iterative
/// ([`Tree::fold`]): trees of any depth.
fn for_each_tree_split<M: Summarize + ?Sized>(
    model: &M,
    tree: &Tree,
    mut split: impl FnMut(&M::Summary, &M::Summary, &M::Summary),
) {
    fn merged<M: Summarize + ?Sized>(
        m: &M,
        lp: &[usize],
        ls: &M::Summary,
        rp: &[usize],
        rs: &M::Summary,
    ) -> M::Summary {
        m.merge(
            Cluster {
                points: Points::List(lp),
                summary: ls,
            },
            Cluster {
                points: Points::List(rp),
                summary: rs,
            },
        )
    }
    fn union(mut a: Vec<usize>, b: Vec<usize>) -> Vec<usize> {
        a.extend(b);
        a.sort_unstable();
        a
    }
    tree.fold(
        |i| (vec![i], model.leaf(i)),
        |(mut lp, mut ls), (mut rp, mut rs)| {
            if rp[0] < lp[0] {
                std::mem::swap(&mut lp, &mut rp);
                std::mem::swap(&mut ls, &mut rs);
            }
            let parent = merged(model, &lp, &ls, &rp, &rs);
            split(&parent, &ls, &rs);
            (union(lp, rp), parent)
        },
    );
}

/// `log φ(H)`: the total log-potential of a tree, merged bottom-up. The tree
/// may cover some of the points; leaves must be distinct and in range.
pub fn tree_log_potential<M: Model + ?Sized>(model: &M, tree: &Tree) -> Result<f64> {
    tree.validate(model.num_points(), false)?;
    let mut total = 0.0;
    for_each_tree_split(model, tree, |p, l, r| total += model.log_potential(p, l, r));
    if total.is_nan() {
        return Err(Error::tree("the tree's log-potential is NaN"));
    }
    Ok(total)
}

/// The [`Search::split_cost`] of each split of a tree, in the tree's
/// post-order (children before parents, left before right).
pub(crate) fn tree_split_costs<M: Search + ?Sized>(model: &M, tree: &Tree) -> Result<Vec<f64>> {
    tree.validate(model.num_points(), false)?;
    let mut costs = Vec::new();
    for_each_tree_split(model, tree, |p, l, r| costs.push(model.split_cost(p, l, r)));
    Ok(costs)
}

/// The total [`Search::split_cost`] of a tree (the quantity A* minimises).
/// The tree may cover some of the points; leaves must be distinct and in range.
pub fn tree_cost<M: Search + ?Sized>(model: &M, tree: &Tree) -> Result<f64> {
    tree.validate(model.num_points(), false)?;
    let mut total = 0.0;
    for_each_tree_split(model, tree, |p, l, r| total += model.split_cost(p, l, r));
    if total.is_nan() {
        return Err(Error::tree("the tree's cost is NaN"));
    }
    Ok(total)
}
