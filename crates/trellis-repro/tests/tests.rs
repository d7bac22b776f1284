//! Integration tests of the `trellis-repro` command: one binary, one module per
//! reproduction.

mod util;

mod astar;
mod bench;
mod flat;
mod ginkgo;
mod interactive;
mod issue11_limits;
mod issue15_wide;
