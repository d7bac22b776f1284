//! Models: the split potentials of hierarchies.
//!
//! Three views of one thing live here: [`Potential`] (split potentials over
//! bitmasks, for the dense trellis), [`MergeModel`] (the same over cluster
//! summaries, for any number of points: baselines and sparse trellises) and
//! the built-in Gibbs models [`Hcc`], [`Dasgupta`] and [`Pairwise`].
//!
//! # Split potentials
//!
//! The energy-based model of the trellis paper (Definition 2) scores a binary
//! hierarchy `H` by the product of a potential over its sibling pairs,
//! `φ(H) = Π ψ(L, R)`, so `P(H) = φ(H) / Z`. A model implements
//! [`Potential::log_potential`], `log ψ(L, R)`, for any two disjoint non-empty
//! clusters.
//!
//! The exact algorithms evaluate `log ψ` about `3^n / 2` times, so a model should
//! precompute per-subset tables in its constructor and answer each call in O(1).
//! Models whose log-potential has the *separable form*
//!
//! ```text
//! log ψ(L, R) = scale · σ(|S|) · ( P(S) + C(L) + C(R) ),   S = L ∪ R,
//! ```
//!
//! expose its tables through [`Potential::separable`]; the trellis then runs a
//! kernel whose inner loop is one addition (MAP) and one multiply-add in scaled
//! linear arithmetic (partition function), with no `exp` or call per split.
//! Both built-in models are separable: hierarchical correlation clustering
//! (σ ≡ 1) and Dasgupta's cost (σ(k) = k).
//!
//! # A user-defined model
//!
//! Any function of the two clusters works. Here the potential favours merging
//! clusters whose total "mass" is close, with per-subset masses precomputed so
//! each split costs two loads:
//!
//! ```
//! use trellis::{Mask, Potential, Trellis};
//!
//! struct MassBalance {
//!     n: usize,
//!     mass: Vec<f64>, // mass of every subset, indexed by mask
//! }
//!
//! impl MassBalance {
//!     fn new(point_mass: &[f64]) -> MassBalance {
//!         let n = point_mass.len();
//!         let mut mass = vec![0.0; 1 << n];
//!         for s in 1..mass.len() {
//!             let low = s.trailing_zeros() as usize;
//!             mass[s] = mass[s & (s - 1)] + point_mass[low];
//!         }
//!         MassBalance { n, mass }
//!     }
//! }
//!
//! impl Potential for MassBalance {
//!     fn num_points(&self) -> usize {
//!         self.n
//!     }
//!     fn log_potential(&self, left: Mask, right: Mask) -> f64 {
//!         -(self.mass[left as usize] - self.mass[right as usize]).abs()
//!     }
//! }
//!
//! let trellis = Trellis::new(MassBalance::new(&[1.0, 2.0, 3.0, 1.5, 0.5]))?;
//! let map = trellis.map_tree();
//! println!("MAP {map} with log φ = {:.3}, log Z = {:.3}", trellis.map_log_potential(), trellis.log_z());
//! assert!(trellis.log_z() >= trellis.map_log_potential());
//! # Ok::<(), trellis::Error>(())
//! ```

pub(crate) mod cost;
pub(crate) mod merge;
pub(crate) mod potential;

pub use cost::{CostModel, Dasgupta, Hcc, dasgupta_split_cost, hcc_split_cost};
pub use merge::{Members, MergeModel, Pairwise, PairwiseCost, tree_log_potential};
pub use potential::{General, Potential, Separable};
