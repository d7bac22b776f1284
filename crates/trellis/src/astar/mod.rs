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
//! Any model with the [`Search`](crate::Search) extension works: it supplies the split cost
//! (from the cluster summaries, so O(1) per split) and the heuristic. Built in:
//!
//! | model | heuristic | admissible |
//! |---|---|---|
//! | [`Hcc`](crate::Hcc) (hierarchical correlation clustering) | `Σ_{i<j∈X} max(w_ij, 0)` (Prop. 1) | yes |
//! | [`Dasgupta`](crate::Dasgupta) | `w_min (m³-m)/3 + 2 Σ_{i<j∈X} (w_ij - w_min)` (Prop. 2, tightened) | yes |
//! | [`Ginkgo`](crate::ginkgo::Ginkgo) with [`Heuristic::H0`](crate::ginkgo::Heuristic::H0) | per-node bounds derived in [`crate::ginkgo`] | yes (proved there) |
//! | [`Ginkgo`](crate::ginkgo::Ginkgo) with [`Heuristic::H1`](crate::ginkgo::Heuristic::H1) | the paper's level-by-level bound with `t̃_P = t_bound + 2 t_p⁰` | not proven |
//!
//! The arguments for each are in the model's docs ([`crate::models`],
//! [`crate::ginkgo`]). [`Outcome::exact`] is true only for a complete search
//! of the full trellis with an admissible heuristic.
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
//! one record per vertex created (a budget, [`Options::memory_limit`](crate::Options),
//! turns a runaway search into an error).
//!
//! # Any number of points
//!
//! Clusters are sets of points ([`SetRepr`]): `u128` up to 128 points,
//! [`WideSet`] (a boxed bitset of `⌈n/64⌉` words) beyond. The engine is
//! generic over the representation and [`approximate`] picks it once from
//! the number of points, so the `u128` path runs as fast as before and the
//! wide path gives the same trees on the same input (tested). Exact A*
//! stays on `u128`: beyond 128 points its `2^(n-1)` root splits are out of
//! reach anyway. [`Outcome`] reports the bytes per vertex and per split of
//! the representation used and the peak bytes held.

mod approx;
mod engine;
mod job;
mod solve;
mod starts;

pub use approx::{ApproxOptions, Candidates, approximate, approximate_with};
pub use engine::{Outcome, exact};
pub use job::AstarJob;
pub use solve::{Request, heuristic_name, solve, solve_as, solve_jet};
pub use starts::{Start, default_starts, start_trees};

pub use crate::base::set::{Set, SetRepr, WideSet};

/// Largest number of points exact A* accepts (its clusters are `u128`
/// sets; approximate A* takes any number).
pub const MAX_ASTAR_POINTS: usize = crate::base::set::MAX_SET_POINTS;
