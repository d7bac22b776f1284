//! Correctness tests of the `trellis` crate, in one test binary.
//!
//! - `aloi`: MAP costs against the exact optima shipped with the ALOI subsets;
//! - `astar`: exact A* against the DP and brute force, heuristic admissibility
//!   against every sub-problem's optimum, approximate A* invariants, errors;
//! - `baselines`: greedy, beam search and linkage against the reference
//!   implementations (Ginkgo jets, ALOI) and against exact inference;
//! - `data`: access to the shared reference data (`../shared/data`), skipped
//!   with a message when absent;
//! - `ddt`: the Dirichlet diffusion tree sampler against densities by
//!   quadrature, triplet constraints and their errors;
//! - `flat`: the flat cluster trellis against brute force over all Bell(n)
//!   partitions for `n <= 8` (log Z, MAP, marginals, sampling, sparse and
//!   tree-consistent families, Perturb-and-MAP);
//! - `ginkgo`: the Ginkgo likelihood and the exact trellis on jets against the
//!   reference answers (log Z, MAP, trees of non-zero likelihood);
//! - `issue11_fuzz`: every input the fuzzers found, replayed through their checks.
//! - `issue11_readers`: CSV and `.npy` readers (header rule, names, byte-order
//!   mark, malformed headers, bounded reads) and sizes checked before allocating;
//! - `issue11_limits`: A*'s memory budget, durations beyond the clock, the
//!   simulator's and the DDT's parameter ranges, memory messages (issue 11);
//! - `issue11_numerics`: exact answers at any temperature (β up to 1e300) on
//!   both trellises and both kernels, and the models' overflow checks;
//! - `issue11_trees`: trees of any depth (parsing, printing, walks and drops on
//!   a small stack), byte-order marks, and what jets files check;
//! - `issue12_beam`: beam search's default width (the A* paper's), its memory
//!   estimate checked before allocating, and brute force at an unbounded width;
//! - `issue12_kernel`: the blocked kernel on every vector path against brute
//!   force, the general kernel and each other (bit for bit), its fallback
//!   beyond its range, the flat trellis on every path, progress and cancelling;
//! - `issue14_session`: `ddt::Session`, the interactive loop for a person
//!   (queries, checked answers, named conflicts, undo, resuming);
//! - `issue15_wide`: clusters beyond 128 points: wide sets against `u128`,
//!   approximate A* identical on both, sparse trellises on wide sets exact;
//! - `issue21_npy`: `.npy` files read by `npyz` (dtypes, byte orders, C and
//!   Fortran order, versions 1-3), sizes checked before allocating, malformed
//!   headers and non-finite values refused;
//! - `issue21_plan`: the planner's estimates (monotone, the library's memory
//!   figures, the exact/approximate choice, its errors) and the passes
//!   stopping at their time limit;
//! - `issue21_reader`: the one CSV reader (RFC 4180 through the `csv` crate), no
//!   comment syntax in data files, unterminated quotes refused;
//! - `issue22_fuzz`: the checks of the `csv_names` and `newick_names` fuzz
//!   targets on generated CSV with names and Newick with names (proptest);
//! - `issue22_range`: finite inputs near the ends of `f64` (linkage heights
//!   homogeneous in the distances, Euclidean distances and similarities of
//!   points near 1e200, approximate A* on the weights `map` accepts) and the
//!   refusals that name the overflowing quantity and the divisor;
//! - `issue25_passes`: `logz` and `map` of hcc over one 8-byte entry per
//!   subset (terms rebuilt from the weights) against brute force, the full
//!   inside pass (bit for bit) and the general kernel at β up to 1e300, and
//!   their memory check;
//! - `issue25_resume`: checkpoints of `marginals` (the full trellis's passes
//!   and the blocked outside pass) and of the flat passes, resumed after every
//!   progress report and from every prefix of their levels to the identical
//!   answer; damaged and foreign level files refused;
//! - `issue24_support`: clade support of the DDT session's trees against a
//!   direct count over the window, the sliding window, the Newick labels;
//! - `issue26_summary`: the exact posterior summaries (MCC tree, majority-rule
//!   consensus, Binder-optimal partition) against brute force over all trees
//!   and partitions, the MCC pass on the blocked kernel against the general
//!   one, the sparse MCC against the dense one, and the refusals;
//! - `linkage_models`: the linkage potentials (average, complete, single)
//!   against brute force: dense and sparse trellises, A*, greedy and beam
//!   search, the MST heuristic, and the validation of distances;
//! - `numerics`: invariants and closed forms beyond brute force (`n` up to 18);
//! - `oracle`: an independent brute-force enumerator of all `(2n-3)!!` trees
//!   (and the test models shared by the other modules);
//! - `properties`: property tests against the oracle for `n <= 7`;
//! - `sampling`: the exact sampler against the exact posterior, with derived bounds;
//! - `simulator`: the Ginkgo jet simulator against its distributions and the
//!   reference jets;
//! - `sparse`: the sparse trellis against brute force over the trees it
//!   realises and against the dense trellis on the full family.

mod aloi;
mod astar;
mod baselines;
mod data;
mod ddt;
mod flat;
mod ginkgo;
mod issue11_fuzz;
mod issue11_limits;
mod issue11_numerics;
mod issue11_readers;
mod issue11_trees;
mod issue12_beam;
mod issue12_kernel;
mod issue14_session;
mod issue15_wide;
mod issue21_npy;
mod issue21_plan;
mod issue21_posterior;
mod issue21_reader;
mod issue22_fuzz;
mod issue22_range;
mod issue22_sparse;
mod issue24_constraints;
mod issue24_support;
mod issue25_passes;
mod issue25_resume;
mod issue26_summary;
mod linkage_models;
mod numerics;
mod oracle;
mod properties;
mod sampling;
mod simulator;
mod sparse;
mod sparse_inference;
