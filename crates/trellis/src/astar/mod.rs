//! A* search for the lowest-cost hierarchy on the cluster trellis, exact and
//! approximate (Greenberg, Macaluso et al., *Exact and Approximate
//! Hierarchical Clustering Using A\**, 2021).
//!
//! The dense [`Trellis`](crate::Trellis) finds the MAP tree by visiting every
//! one of the `3^n / 2` splits. A* visits only the splits it needs: the
//! trellis vertices are created lazily, and each *explored* vertex keeps a
//! min-heap of its splits keyed by `f = g + h`, where `g` is the cost of the
//! best partial hierarchy found below that split and `h` is a lower bound (the
//! **heuristic**) on the cost still to be paid below its unexplored clusters.
//!
//! # The nested min-heaps (Algorithm 1)
//!
//! A search state, a partial hierarchy, is not stored: it is read off the
//! heaps by following, from the root, the split at the top of each vertex's
//! heap until reaching singletons or unexplored vertices (Eq. 2). Each
//! iteration
//!
//! 1. walks that partial hierarchy;
//! 2. *explores* its unexplored leaves: every split `(L, R)` of a leaf `X`
//!    enters `X`'s heap with `g = cost(L, R) + g(L) + g(R)` and
//!    `h = h(L) + h(R)`, where a child's `(g, h)` is the top of its heap if it
//!    is explored, `(0, H(child))` if not, and `(0, 0)` for a singleton
//!    (Eq. 4-5);
//! 3. refreshes the walked vertices from the leaves up: the walked split of
//!    each is popped, recomputed from its children's current tops and pushed
//!    back.
//!
//! Every stored `f` is a lower bound on the cost of the best hierarchy that
//! uses its split, provided `H` never overestimates (is *admissible*). The
//! search stops when a walk meets only singletons, the refresh leaves every
//! walked split at the top of its heap and the root's top has `h = 0`: then
//! each walked vertex's top is the exact cost of its walked sub-hierarchy
//! and is no larger than the lower bound of any other split of that vertex,
//! so the walked hierarchy is optimal (Theorem 1). (The paper stops as soon
//! as the root's top has `h = 0`; requiring the walked splits to stay on top
//! after the refresh also covers the case where a vertex shared by several
//! parents changed its top since a parent's entry was computed.)
//!
//! # Heuristics and exactness
//!
//! A [`SearchModel`] supplies the split cost, the heuristic and per-cluster
//! statistics that make both O(1) per split. Built in:
//!
//! | model | heuristic | admissible |
//! |---|---|---|
//! | [`HccSearch`] (hierarchical correlation clustering) | `Σ_{i<j∈X} max(w_ij, 0)` (Prop. 1) | yes |
//! | [`DasguptaSearch`] | `w_min (m³-m)/3 + 2 Σ_{i<j∈X} (w_ij - w_min)` (Prop. 2, tightened; see [`DasguptaSearch`]) | yes |
//! | [`GinkgoSearch`] with [`GinkgoHeuristic::H0`] | per-node bounds derived in [`ginkgo`] | yes (proved there) |
//! | [`GinkgoSearch`] with [`GinkgoHeuristic::H1`] | the paper's level-by-level bound with `t̃_P = t_bound + 2 t_p⁰` | not proven |
//!
//! [`Outcome::exact`] is true only for a complete search of the full trellis
//! with an admissible heuristic.
//!
//! # Approximate A* (§4)
//!
//! [`approximate`] runs the same search on a *sparse* trellis: the clusters
//! of the initial trees (beam search, greedy, average linkage) closed under
//! their splits, extended each time a vertex is explored by the `K` best
//! among sampled and locally moved candidate splits (or `K` drawn by
//! importance sampling), and repeated in rounds that keep every split found
//! so far, within a deterministic budget of explored vertices. The best tree
//! never gets worse than the initial trees (details on [`approximate`]).
//!
//! # Complexity
//!
//! Exploring a vertex of `m` points costs `2^(m-1) - 1` splits (exact) or
//! `O(s · m)` for `s` sampled candidates; with all vertices explored the
//! exact search does the trellis DP's `O(3^n)` work plus heap operations.
//! Memory grows with what is explored: about 32 bytes per heap entry plus
//! one record per vertex created (a budget, [`Options::max_bytes`], turns a
//! runaway search into an error). Points are `u128` bits: at most 128.

mod approx;
mod engine;
pub mod ginkgo;
mod models;

pub use approx::{ApproxOptions, Candidates, approximate};
pub use engine::{Outcome, exact};
pub use ginkgo::{GinkgoHeuristic, GinkgoSearch};
pub use models::{DasguptaSearch, HccSearch};

use crate::base::tree::Tree;

pub use crate::base::set::Set;
pub(crate) use crate::base::set::{full_set, is_singleton, set_points as points};

/// Largest number of points A* accepts.
pub const MAX_ASTAR_POINTS: usize = crate::base::set::MAX_SET_POINTS;

/// A cost model for A* search: cost of a split, a heuristic lower bound and
/// the per-cluster statistics that make both cheap.
///
/// Costs are minimised; `+∞` marks an impossible split. The cost of a tree is
/// the sum of its split costs.
pub trait SearchModel: Sync {
    /// What the model keeps about a cluster (e.g. weight sums inside it).
    type Stats: Clone + Send + Sync;

    /// Number of points.
    fn num_points(&self) -> usize;

    /// The statistics of a cluster.
    fn stats(&self, set: Set) -> Self::Stats;

    /// `cost(L, R)` of splitting `parent` into `left` and `right`.
    fn split_cost(
        &self,
        parent: (Set, &Self::Stats),
        left: (Set, &Self::Stats),
        right: (Set, &Self::Stats),
    ) -> f64;

    /// The statistics of `set` with point `x` added (`added`) or removed,
    /// from those of `set`: the approximate search scores many one-point
    /// moves with it. The default recomputes them.
    fn moved(&self, set: Set, stats: &Self::Stats, x: usize, added: bool) -> Self::Stats {
        let _ = stats;
        let bit = 1u128 << x;
        self.stats(if added { set | bit } else { set & !bit })
    }

    /// A lower bound on the cost of the cheapest hierarchy over `set` (at
    /// least two points): the A* heuristic `H(X)`.
    fn heuristic(&self, set: Set, stats: &Self::Stats) -> f64;

    /// Whether [`heuristic`](Self::heuristic) is proven never to overestimate.
    fn admissible(&self) -> bool;

    /// `log φ(H)` of a tree of total cost `cost` (`-β · cost` for the
    /// weight-based models, `-cost` for a likelihood).
    fn log_potential(&self, cost: f64) -> f64;

    /// The cost of a whole tree, split by split.
    fn tree_cost(&self, tree: &Tree) -> f64 {
        fn go<M: SearchModel + ?Sized>(m: &M, t: &Tree, total: &mut f64) -> (Set, M::Stats) {
            match t {
                Tree::Leaf(i) => {
                    let s = 1u128 << i;
                    (s, m.stats(s))
                }
                Tree::Node(l, r) => {
                    let (ls, lst) = go(m, l, total);
                    let (rs, rst) = go(m, r, total);
                    let s = ls | rs;
                    let st = m.stats(s);
                    *total += m.split_cost((s, &st), (ls, &lst), (rs, &rst));
                    (s, st)
                }
            }
        }
        let mut total = 0.0;
        go(self, tree, &mut total);
        total
    }
}

/// Limits of a search.
#[derive(Clone, Debug)]
pub struct Options {
    /// Memory budget in bytes for vertices and heap entries; the search fails
    /// with [`ErrorKind::SearchBudget`](crate::ErrorKind::SearchBudget) when it
    /// would use more.
    pub max_bytes: u64,
    /// Wall-clock limit; `None` for none. The exact search fails when it is
    /// reached, the approximate search returns its best tree so far.
    pub time_limit: Option<std::time::Duration>,
}

impl Default for Options {
    /// A budget of half the memory available (4 GiB if unknown), no time limit.
    fn default() -> Options {
        let available = crate::base::memory::available_memory().unwrap_or(8 << 30);
        Options {
            max_bytes: available / 2,
            time_limit: None,
        }
    }
}
