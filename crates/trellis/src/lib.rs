//! Exact and approximate inference over clusterings with the cluster trellis.
//!
//! `n` points have `(2n-3)!!` binary hierarchies: 6.3·10^21 at `n = 20`. The
//! energy-based model of Greenberg, Macaluso et al. (*Data Structures &
//! Algorithms for Exact Inference in Hierarchical Clustering*, AISTATS 2021)
//! scores a hierarchy `H` by a product of split potentials,
//! `P(H | X) = Π ψ(L, R) / Z`. Because the potential of a tree factorises over
//! its splits, the **trellis**, a table over all `2^n` subsets, shares the
//! sub-problems of all trees: the partition function `Z`, the MAP tree, the
//! marginal of every cluster and exact posterior samples all cost `O(3^n)` time
//! and `O(2^n)` memory instead of a sum over `(2n-3)!!` trees.
//!
//! # The three core types
//!
//! - A [`Model`] says what is scored: `log ψ(L, R)` of splitting a cluster
//!   into two, from the clusters' summaries ([`Summarize`]: the summary of one
//!   point, and of the union of two clusters). The built-in [`Hcc`]
//!   (hierarchical correlation clustering) and [`Dasgupta`] (Dasgupta's cost)
//!   are Gibbs potentials `-β · cost` over a validated weight matrix
//!   ([`Weights`]); [`ginkgo::Ginkgo`] is the jet likelihood. Your own model
//!   implements the two traits (see [`models`]) and runs on every algorithm.
//! - A [`Trellis`] is built from a model by the *inside* pass: `log Z` and the
//!   MAP value of every cluster, bottom-up by size. From it: [`Trellis::log_z`],
//!   [`Trellis::map`] (a [`ScoredTree`]) and exact samples
//!   ([`Trellis::samples`], paper Algorithm 2).
//! - [`Marginals`] come from one *outside* pass over the trellis: the
//!   probability of every cluster at once (the paper recomputes one DP per
//!   cluster) and of any sub-hierarchy.
//!
//! Results own their data or share the trellis's tables through an `Arc`,
//! so a caller (a Python object, a web handler) can keep a posterior and
//! answer marginal or sample requests later. Long computations take
//! [`Options`]: a memory limit checked before anything is allocated, a time
//! limit, and a progress callback that can cancel.
//!
//! Trees are [`Tree`] values (nested JSON lists or Newick); [`count`] gives exact
//! tree and partition counts in arbitrary precision.
//!
//! # The crate's layout
//!
//! | module | what |
//! |---|---|
//! | [`models`] | the model traits ([`Summarize`], [`Model`], [`Search`], [`Energy`]), the built-in models and their registry ([`models::ModelName`], [`models::CostModel`]) |
//! | `dense` | the dense hierarchical trellis: inside pass and kernel, outside pass ([`Marginals`]), [`Sampler`] |
//! | [`flat`] | the flat trellis: partitions instead of hierarchies |
//! | [`sparse`] | exact inference restricted to a family of clusters, hierarchical or flat |
//! | [`astar`] | A* search for the MAP tree, exact (up to 128 points) and approximate (any number) |
//! | [`baselines`] | greedy and beam search on any model; classic linkage |
//! | [`ginkgo`] | the jet shower model: likelihood, simulator, jets files, sparse trellises for jets |
//! | [`ddt`] | Dirichlet diffusion tree MCMC with triplet constraints (interactive clustering) |
//! | [`posterior`] | one posterior over hierarchies (and [`posterior::PartitionPosterior`] over partitions), whatever the model and the engine: what every front-end holds |
//! | [`summary`] | exact posterior summaries: the maximum-clade-credibility tree, the majority-rule consensus, the Binder-optimal partition |
//! | [`plan`] | the planner: the memory and time of an exact run, and exact or approximate within a budget |
//! | [`input`] | the one loader of every door: weights, points, distances or jets for a model by name, validated and size-checked |
//! | [`engines`] | a posterior of a named model on the engine asked for: dense (under triplets), sparse from beam or simulator trees, flat (under links, tree cuts, cluster families) |
//! | [`job`] | one hierarchical run as a door describes it: engine flags, triplets, limits; the checks, the plan's note and the posterior |
//! | [`print`](mod@print) | results as people and tools read them: Newick, SciPy linkage (JSON, CSV), a scored tree drawn with its split costs, labelled cluster lists and partitions |
//! | [`batch`] | one computation on every jet of a jets file, as JSON Lines in input order |
//! | [`report`] | the JSON result shapes and number formats every door prints |
//! | foundations | sets ([`Mask`], [`Set`], [`Points`]), trees, weights, [`io`], [`count`], [`random`], [`Options`], errors |
//!
//! # Example
//!
//! Five points in two groups, {0, 1, 2} and {3, 4}: positive weights attract,
//! negative weights repel.
//!
//! ```
//! use trellis::{Hcc, Matrix, Trellis, Weights};
//!
//! let w = Weights::from_matrix(&Matrix::from_rows(vec![
//!     vec![0.0, 0.9, 0.8, -0.5, -0.6],
//!     vec![0.9, 0.0, 0.7, -0.4, -0.5],
//!     vec![0.8, 0.7, 0.0, -0.3, -0.4],
//!     vec![-0.5, -0.4, -0.3, 0.0, 0.9],
//!     vec![-0.6, -0.5, -0.4, 0.9, 0.0],
//! ])?)?;
//! let trellis = Trellis::new(Hcc::new(&w, 2.0)?)?;
//! let map = &trellis.map().tree;
//! // The root split separates the groups. (Inside {0, 1, 2} every weight is
//! // positive, and then every sub-tree costs the same: each pair is cut once.)
//! assert!(map.clusters().contains(&vec![0, 1, 2]));
//! assert!(map.clusters().contains(&vec![3, 4]));
//!
//! let marginals = trellis.marginals()?;
//! let p = marginals.p(0b11000); // the cluster {3, 4}
//! println!("log Z = {:.4}, P({{3,4}}) = {p:.4}", trellis.log_z());
//! assert!(p > 0.5);
//! # Ok::<(), trellis::Error>(())
//! ```
//!
//! # Complexity
//!
//! | what | time | memory |
//! |---|---|---|
//! | inside pass (`log Z` and MAP of every cluster) | `(3^n - 2^(n+1) + 1)/2` splits | 60 B · 2^n peak |
//! | outside pass (every cluster marginal) | `3^n - 2^(n+1) + 1` terms | +40 B · 2^n |
//! | one sample | `O(Σ 2^|S|)` over its clusters; cached for large ones | cache budget |
//! | model tables (built-in models) | `O(n · 2^n)` | 16 B · 2^n |
//!
//! Both passes run in scaled arithmetic (a mantissa and a wide power of two)
//! or in log space, so `log Z` does not overflow for any `n ≤ 30` and any
//! finite potentials. `n` is limited to [`MAX_POINTS`] = 30 and, before any
//! allocation, to the memory available ([`check_memory`]). With the
//! `parallel` feature (default) the passes run on rayon's thread pool;
//! without it the crate never starts a thread.
//!
//! # Testing
//!
//! Every exact result is checked against an independent brute-force
//! enumeration of all `(2n-3)!!` trees for `n ≤ 7` on random weights and β
//! (property tests), the separable kernels against the general ones, the
//! sampler's tree frequencies against the exact posterior with a
//! total-variation bound derived from the sample size, and MAP costs against
//! the exact optima shipped with the ALOI benchmark subsets. Not covered by
//! brute force: `n > 7` (checked by the invariants `Σ P(S) = n - 2` and
//! `P({x}) = 1`, and against closed forms for potentials that depend only on
//! cluster sizes).

#![deny(missing_docs)]

pub mod astar;
mod base;
pub mod baselines;
pub mod batch;
pub mod constraints;
pub mod ddt;
pub mod demo;
mod dendrogram;
mod dense;
pub mod engines;
mod error;
pub mod flat;
pub mod ginkgo;
pub mod input;
pub mod job;
pub mod models;
pub mod plan;
pub mod posterior;
pub mod print;
pub mod report;
pub mod sparse;
pub mod summary;

pub use base::count;
pub use base::io;
pub use base::memory::{
    MAX_POINTS, Workload, available_memory, check_memory, memory_needed, pass_bytes,
    pass_marginals_bytes,
};
pub use base::named::Named;
pub use base::random;
pub use base::run::{Options, Progress, ProgressFn, until_error};
pub use base::set::{
    MAX_SET_POINTS, Mask, PointIter, Points, Set, SetRepr, WideSet, full, full_set, mask_of,
    members, set_points, splits_of_size, total_splits,
};
pub use base::tree::{NewickOptions, ScoredTree, Tree, newick_label};
pub use base::weights::{Matrix, SYMMETRY_TOLERANCE, Similarity, Weights};
pub use ddt::read_tree;
pub use dendrogram::{Dendrogram, Newick};
pub use dense::{KernelPath, Marginals, Sampler, Trellis, WeightTable, num_positive_trees};
pub use error::{Error, ErrorKind, Result};
pub use models::{
    Cluster, CorrelationClustering, Dasgupta, Distances, Energy, General, Hcc, LinkageKind,
    LinkagePotential, LinkageSummary, Model, PairSums, Search, Separable, Summarize, Terms,
    tree_cost, tree_log_potential,
};

/// The README's code examples, compiled and run as doctests.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
