//! Interactive Bayesian hierarchical clustering with the Dirichlet diffusion tree.
//!
//! Vikram & Dasgupta (*Interactive Bayesian Hierarchical Clustering*, ICML 2016)
//! sample hierarchies from the posterior of a Dirichlet diffusion tree (DDT,
//! Neal 2003) and let a user correct them with triplet constraints
//! `({a, b}, c)`: "a and b belong together, apart from c". This module implements
//! their method with the DDT density done exactly:
//!
//! - [`Ddt`] is the DDT with divergence function `a(t) = c / (1 - t)` and a
//!   Brownian motion with diagonal covariance over named [`Dataset`]: the prior
//!   density of a tree with divergence times ([`Ddt::log_prior`], with the
//!   harmonic-number and `Γ(l)Γ(r)/Γ(m)` terms) and the likelihood with every
//!   internal location integrated out by Gaussian message passing
//!   ([`Ddt::log_likelihood`], `O(N d)`);
//! - [`Chain`] is Metropolis-Hastings over [`DdtTree`]s with SPR moves whose
//!   regraft follows the DDT's path for a new point, restricted exactly to the
//!   regrafts that keep every constraint (the reverse move's probability comes from
//!   the same constrained walk), plus a divergence-time move; each proposal
//!   updates the cached messages along two root paths only;
//! - [`build`] (Aho et al.) finds a tree consistent with a triplet set or names a
//!   conflict; [`Chain::add_constraint`] enforces a new triplet by rebuilding
//!   under the LCA of its pair;
//! - [`triplet_distance`] (Eq. 1) compares a tree with a target [`Hierarchy`]
//!   (binary or not) through [`LcaDepths`];
//! - [`Simulation`] runs the paper's loop with a simulated user and the query
//!   [`Strategy`]s simple, random, active, interleaved and smart;
//! - [`Session`] is the same loop for a real person: the current [`Query`] of a
//!   strategy, an [`Answer`] (accept, or a triplet over the query's points, with
//!   the conflicting constraints named when it cannot hold), and undo; it keeps
//!   a window of recent trees for [`clade_support`] (how many of them hold
//!   each cluster of the current tree).
//!
//! # Example
//!
//! ```
//! use trellis::ddt::{Ddt, Params, Dataset, Chain, Triplet};
//!
//! let points = Dataset::new(
//!     (0..6).map(|i| i.to_string()).collect(),
//!     vec![vec![0.0], vec![0.1], vec![0.2], vec![3.0], vec![3.1], vec![3.3]],
//! )?;
//! let params = Params::reference(&points, vec![1.0], 0.01);
//! let model = Ddt::new(&points, params)?;
//! // Insist that 2 goes with 3 rather than with 0.
//! let mut sampler = Chain::with_constraints(model, vec![Triplet::new(2, 3, 0)?], 7)?;
//! sampler.run(1000);
//! assert!(sampler.tree().satisfies(&Triplet::new(2, 3, 0)?));
//! println!("{}", sampler.tree().to_newick(points.names()));
//! # Ok::<(), trellis::Error>(())
//! ```
//!
//! # Testing
//!
//! The tests check the prior's normalisation by quadrature, the incremental
//! density against the from-scratch one along long chains, the MH chain's
//! topology frequencies on 4 leaves (and on 5 leaves under two constraints) against
//! the exact posterior (times integrated by nested Gauss-Legendre quadrature) with a
//! negative control, that constrained
//! chains never leave the constrained set, BUILD on realisable and unrealisable
//! sets, and the triplet distance on hand-checked trees. Not covered: the mixing
//! speed of the chain on real data (only measured), and posterior exactness beyond
//! 5 leaves.

mod hierarchy;
mod mcmc;
mod model;
mod queries;
mod session;
mod support;
mod tree;
mod triplets;

pub use hierarchy::{Hierarchy, read_tree};
pub use mcmc::{Chain, Rebuild, Stats};
pub use model::{Dataset, Ddt, ModelSpec, Params, interactive_model, jittered_model, variance};
pub use queries::{LoopOptions, Record, Simulation, Strategy, induced, user_answer};
pub use session::{Answer, Query, QueryOptions, Rejection, Session, check_strategy, snapshot};
pub use support::{SUPPORT_THIN, SUPPORT_WINDOW, SupportWindow, clade_support};
pub use tree::DdtTree;
pub use triplets::{LcaDepths, Triplet, build, named_message, parse_triplets, triplet_distance};
