//! Correctness tests of the `trellis` crate, in one test binary.
//!
//! - `oracle`: an independent brute-force enumerator of all `(2n-3)!!` trees
//!   (and the test models shared by the other modules);
//! - `properties`: property tests against the oracle for `n <= 7`;
//! - `numerics`: invariants and closed forms beyond brute force (`n` up to 18);
//! - `sampling`: the exact sampler against the exact posterior, with derived bounds;
//! - `flat`: the flat cluster trellis against brute force over all Bell(n)
//!   partitions for `n <= 8` (log Z, MAP, marginals, sampling, sparse and
//!   tree-consistent families, Perturb-and-MAP);
//! - `aloi`: MAP costs against the exact optima shipped with the ALOI subsets;
//! - `astar`: exact A* against the DP and brute force, heuristic admissibility
//!   against every sub-problem's optimum, approximate A* invariants, errors.

mod aloi;
mod astar;
mod baselines;
mod data;
mod ddt;
mod flat;
mod ginkgo;
mod numerics;
mod oracle;
mod properties;
mod sampling;
mod simulator;
mod sparse;
