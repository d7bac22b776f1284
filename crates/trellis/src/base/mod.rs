//! Shared foundations: sets of points, scaled arithmetic, memory checks, exact
//! counts, trees, weight matrices, file readers and seeded randomness. Every subsystem builds on
//! these; none of them knows about a trellis.

pub mod count;
pub mod io;
pub(crate) mod kernel_path;
pub(crate) mod memory;
pub(crate) mod named;
pub(crate) mod par;
pub mod random;
pub(crate) mod range;
pub(crate) mod run;
pub(crate) mod scaled;
pub(crate) mod set;
pub(crate) mod tree;
pub(crate) mod weights;
