//! Jet physics with Ginkgo, the toy parton shower of the trellis paper (§4.2).
//!
//! A jet is a set of observed particles (4-momenta); the latent binary tree
//! is its showering history. [`Ginkgo`] scores trees with the Ginkgo
//! likelihood ([`Variant::Current`] or the paper-era [`Variant::Legacy`]) on
//! every algorithm of the crate (with A* heuristics, [`Heuristic`]),
//! [`JetsFile`] reads and writes the JSON jets format of `shared/data/ginkgo`,
//! the simulator generates jets with their truth trees, and sparse
//! trellises for jets are built from simulator or beam-search trees.
//!
//! ```
//! use trellis::ginkgo::{Ginkgo, JetsFile, Variant};
//! use trellis::Trellis;
//!
//! let file = JetsFile::parse(r#"{"jets": [{"id": "toy",
//!     "leaves": [[30.3, 11.2, 12.9, 20.0], [22.5, 6.1, 10.0, 14.9], [40.6, 20.0, 17.8, 27.1]],
//!     "params": {"lambda": 1.5, "lambda_root": 1.5, "delta_min": 4.0}}]}"#)?;
//! let model = Ginkgo::new(&file.jets[0], Variant::Current);
//! let trellis = Trellis::new(model)?;
//! let map = trellis.map();
//! println!("MAP {} with log-likelihood {:.3}; log Z = {:.3}",
//!     map.tree, map.log_potential, trellis.log_z());
//! # Ok::<(), trellis::Error>(())
//! ```

mod heuristic;
mod jets;
pub(crate) mod likelihood;
mod model;
mod simulator;
mod sparse;

pub use model::Heuristic;

pub use simulator::{
    JetStream, MAX_BOOST_SQUARED, MAX_JET_ENERGY, MAX_JET_LEAVES, MAX_TRIES_PER_JET, Overrides,
    Preset, SimulatorParams, generate, generate_file, generate_jet, generate_stream, jet_seed,
    simulate,
};

pub use jets::{Jet, JetsFile, leaf_problem};
pub use likelihood::{SplitParams, Variant, add, mass_squared, split_log_likelihood};
pub use model::{Ginkgo, Particle};
pub use sparse::{LeafOrdering, SparseJet, beam_trees, leaf_order, simulator_trees, to_positions};
