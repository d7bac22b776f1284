//! The planner: how long and how much memory an exact computation will take,
//! before it starts, and whether to run it exactly or approximately.
//!
//! Every door (the `trellis` command, the web app, the Python package) asks
//! this module, so that they agree on what is feasible and say so the same
//! way: [`estimate`] gives an [`Estimate`] of one exact computation,
//! [`choose`] picks [`Method::Exact`] when it fits a [`Budget`] and
//! [`Method::Approximate`] (approximate A*, a sparse trellis with beam
//! search) otherwise, and [`check`] turns a budget that is too small into a
//! clear error.
//!
//! ```
//! use trellis::models::ModelName;
//! use trellis::plan::{self, Budget, Method, Task};
//!
//! let e = plan::estimate(26, ModelName::Hcc, Task::LogZ, 2)?;
//! println!("{e}"); // exact log Z over 26 points: 1.3e12 splits on the blocked kernel …
//! assert!(e.seconds > 10.0 && e.seconds < 1000.0);
//! let budget = Budget { memory_bytes: Some(256 << 20), seconds: Some(3600.0) };
//! let (method, _) = plan::choose(26, ModelName::Hcc, Task::LogZ, 2, &budget)?;
//! assert_eq!(method, Method::Approximate); // a 521 MiB table does not fit in 256 MiB
//! # Ok::<(), trellis::Error>(())
//! ```
//!
//! # How the estimate is made
//!
//! **Work.** The dense (hierarchical) trellis evaluates every split `{L, S∖L}`
//! of every subset `S` once per pass: `(3^n - 2^(n+1) + 1)/2` splits for an
//! inside pass (`log Z`, the MAP value), and `3^n - 2^(n+1) + 1` terms for the
//! outside pass of the marginals (every pair of a cluster and a disjoint
//! sibling). The flat trellis (partitions, the `cc` model) evaluates
//! `(3^n - 1)/2` terms per pass (the cluster holding one fixed point of every
//! subset), and its marginals are an `O(2^n)` sweep of the tables.
//!
//! **Which passes run** depends on the task and on the kernel the library
//! picks for the model (`dense/mod.rs`, `flat/mod.rs`):
//!
//! | model | kernel | [`Task::LogZ`] | [`Task::Map`] | [`Task::Sample`] | [`Task::Marginals`], [`Task::Infer`] |
//! |---|---|---|---|---|---|
//! | `hcc` | blocked (AVX2 or portable) | weight pass | key (max-plus) pass | both | both + blocked outside |
//! | `dasgupta` | level-order scaled | fused inside pass | fused inside pass | fused inside pass | + level-order outside |
//! | linkage, Ginkgo | general (log ψ per split) | log-space inside | max-plus inside | log-space inside | + log-space outside |
//! | `cc` | flat blocked | weight pass | key pass | both | both (+ `O(2^n)` sweep) |
//!
//! The posterior summaries of [`crate::summary`] need the marginals first:
//! [`Task::Consensus`] is the work of [`Task::Marginals`] (its `O(2^n)` scan
//! of the marginals is counted with the per-subset work), and [`Task::Mcc`]
//! adds one max-plus pass over the clade-credibility model, which runs on
//! the blocked kernel (key pass) whatever the model: `inside + outside + one
//! more inside` splits, and the model's tabulation once more per subset.
//! Both summarise posteriors over hierarchies (the `cc` model's summary is
//! the Binder-optimal partition, not a task here).
//!
//! The blocked kernel needs a separable potential whose factor does not
//! depend on the cluster size (hierarchical correlation clustering at any
//! β); Dasgupta's `σ(|S|) = |S|` factor keeps it on the level-order kernel.
//! The path of the blocked kernel is the one the run will take
//! ([`KernelPath::choose`] with no request: `TRELLIS_KERNEL`, else the
//! fastest the CPU has). At extreme β or with huge weights a separable model
//! leaves the range of the scaled kernels and falls back to slower ones (the
//! blocked kernel to the level-order one, that to the log-space one); the
//! estimate assumes the common case, weights and β in range.
//!
//! **Time** is `overhead + (per-subset work + Σ units · ns per unit per
//! core) / threads` over the passes. The nanoseconds per split per core of
//! each kernel path were fitted to the median wall-clock times of the
//! release `trellis` command on 2 threads (`seconds · 2 / units`), on the
//! project's machine kind (2-core AMD EPYC Zen 4 VM, AVX2): `logz`, `map`
//! and `marginals` of `hcc` at `n = 18 … 26`, the linkage potentials at
//! `n = 12 … 16`, Dasgupta's cost at `n = 16 … 20`, `cc` at `n = 18 … 22`.
//! The machine was shared with a build during most runs, so the constants
//! sit between the quiet figures and the loaded ones (the blocked key pass:
//! 0.17 ns quiet, up to 0.47 loaded, 0.27 here). The fixed overhead (0.01 s)
//! and the per-subset term (tabulating the model, 8 ns per subset) matter
//! only below about 20 points. Threads are taken to scale linearly (one
//! thread, `logz` at `n = 22`: 3.2 s estimated, 2.8-3.2 s measured).
//!
//! **Memory** is the library's own check, [`memory_needed`] for the task's
//! [`Workload`] (the peak of the tables, the built-in models' tables
//! included), plus, for `linkage-complete` and `linkage-single`, the heap
//! bytes of their summaries (`8n + 16` bytes per subset, see
//! [`Summarize::summary_heap_bytes`](crate::Summarize::summary_heap_bytes)).
//! For [`Task::Mcc`] the posterior keeps its model tables, the inside pass's
//! kept tables and the log marginals (16 + 16 + 8 bytes per subset) while
//! the MCC pass, with the memory the library checks for it
//! ([`Workload::Inside`]), runs: the larger of that sum (112 bytes per
//! subset) and the marginals' own peak (72).
//! `logz` and `map` of `hcc` (without triplets) are single passes of the
//! blocked kernel over one 8-byte entry per subset, their terms rebuilt
//! block by block from the weights
//! ([`Trellis::log_z_only`](crate::Trellis::log_z_only),
//! [`Trellis::map_only`](crate::Trellis::map_only)): their memory is
//! `pass_bytes` (8 bytes per subset plus a few MiB; 8.4 bytes per subset
//! at `n = 24`, measured peak resident), unless β is so large that the
//! weights leave the kernel's range; that rare run falls back to the full
//! inside pass and checks its own, larger memory before it allocates.
//! `marginals` and `consensus` of `hcc` (without triplets) keep the weight
//! pass's table and the outside pass's, which becomes the log marginals in
//! place ([`WeightTable::with_marginals`](crate::WeightTable::with_marginals)):
//! `pass_marginals_bytes`, 16 bytes per subset, with the same fallback;
//! so does `infer`, whose MAP pass runs beside the weights before the
//! outside pass.
//!
//! # Accuracy
//!
//! Measured on the machine the constants were fitted on, for `hcc` with
//! `n = 18 … 26` and `logz`, `map` and `marginals`: every estimate within
//! 2x of the measured median time, and of the quiet-machine figures (`logz`
//! at `n = 26`: 127 s estimated, 81 s quiet, 189 s with a build running);
//! the table is in `docs/benchmarks.md`, "Planner: estimate vs measured".
//! The other kernels were within 2x at the sizes above. Not remeasured: the
//! Ginkgo figure (67 ns per split per core, 4 `exp` and 1 `ln`, from jets of
//! 5-10 leaves) and the level-order kernel beyond `n = 20` (1.35x per point,
//! from the design notes). Other machines scale with their memory bandwidth
//! and vector width; a loaded machine is slower than estimated.

use std::fmt;

use crate::base::memory::{
    self, INSIDE_KEPT_BYTES, MAX_POINTS, MODEL_BYTES, Workload, memory_needed,
};
use crate::dense::KernelPath;
use crate::error::{Error, ErrorKind, Result, human_bytes, human_seconds};
use crate::models::{ModelName, Structure};

/// An exact computation the planner estimates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Task {
    /// `log Z` alone ([`Trellis::log_z_only`](crate::Trellis::log_z_only)).
    LogZ,
    /// The MAP tree alone ([`Trellis::map_only`](crate::Trellis::map_only)).
    Map,
    /// Every cluster marginal: the inside pass, then the outside pass.
    Marginals,
    /// MAP, `log Z` and every marginal from one trellis (`trellis infer`):
    /// the same work as [`Task::Marginals`].
    Infer,
    /// Exact samples: the full inside pass (each sample then costs little).
    Sample,
    /// The maximum-clade-credibility tree ([`crate::summary`]): the work of
    /// [`Task::Marginals`], then one more max-plus pass on the blocked kernel
    /// over the clade-credibility model, whatever the model (hierarchies
    /// only).
    Mcc,
    /// The majority-rule consensus tree ([`crate::summary`]): the work of
    /// [`Task::Marginals`] (then an `O(2^n)` scan; hierarchies only).
    Consensus,
}

impl Task {
    /// Every task.
    pub const ALL: [Task; 7] = [
        Task::LogZ,
        Task::Map,
        Task::Marginals,
        Task::Infer,
        Task::Sample,
        Task::Mcc,
        Task::Consensus,
    ];

    /// The task's name as the doors spell it (`logz`, `map`, `marginals`,
    /// `infer`, `sample`, `mcc`, `consensus`).
    pub fn name(self) -> &'static str {
        match self {
            Task::LogZ => "logz",
            Task::Map => "map",
            Task::Marginals => "marginals",
            Task::Infer => "infer",
            Task::Sample => "sample",
            Task::Mcc => "mcc",
            Task::Consensus => "consensus",
        }
    }

    /// Whether the task is defined for a posterior of this structure: the
    /// summary trees ([`Task::Mcc`], [`Task::Consensus`]) summarise a
    /// posterior over hierarchies, every other task is defined for both.
    pub fn applies_to(self, structure: Structure) -> bool {
        !(matches!(self, Task::Mcc | Task::Consensus) && structure == Structure::Partition)
    }

    /// Whether the task needs every cluster marginal (the outside pass).
    fn needs_marginals(self) -> bool {
        matches!(
            self,
            Task::Marginals | Task::Infer | Task::Mcc | Task::Consensus
        )
    }

    /// What it computes, after "exact" in messages ("log Z", "MAP tree", …).
    fn what(self, structure: Structure) -> &'static str {
        match (self, structure) {
            (Task::LogZ, _) => "log Z",
            (Task::Map, Structure::Hierarchy) => "MAP tree",
            (Task::Map, Structure::Partition) => "MAP partition",
            (Task::Marginals, _) => "cluster marginals",
            (Task::Infer, _) => "MAP, log Z and every marginal",
            (Task::Sample, _) => "samples",
            (Task::Mcc, _) => "maximum-clade-credibility tree",
            (Task::Consensus, _) => "majority-rule consensus tree",
        }
    }

    /// The memory estimate's workload.
    fn workload(self, structure: Structure) -> Workload {
        match (structure, self.needs_marginals()) {
            (Structure::Hierarchy, false) => Workload::Inside,
            (Structure::Hierarchy, true) => Workload::Marginals,
            (Structure::Partition, false) => Workload::FlatInside,
            (Structure::Partition, true) => Workload::FlatMarginals,
        }
    }
}

impl fmt::Display for Task {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Task {
    type Err = Error;

    /// Parses a task name (any case); the error lists every name.
    fn from_str(s: &str) -> Result<Task> {
        Task::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                let names: Vec<&str> = Task::ALL.iter().map(|t| t.name()).collect();
                Error::parameter(format!(
                    "unknown task {s:?}: the tasks are {}",
                    names.join(", ")
                ))
            })
    }
}

/// The planner's estimate of one exact computation.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// Number of points.
    pub n: usize,
    /// The model.
    pub model: ModelName,
    /// The computation.
    pub task: Task,
    /// Peak bytes of the tables (see the module docs).
    pub memory_bytes: u64,
    /// Estimated wall-clock seconds on the given threads.
    pub seconds: f64,
    /// Units of work over all passes: splits of the inside passes and terms
    /// of the outside pass (terms of the flat trellis for `cc`).
    pub splits: f64,
    /// The kernel that will run, e.g. `"blocked (avx2)"`, `"general"`.
    pub kernel: &'static str,
    /// The threads the time is estimated for.
    pub threads: usize,
}

impl Estimate {
    /// Whether the estimate fits `budget` (see [`choose`]).
    pub fn fits(&self, budget: &Budget) -> bool {
        check(self, budget).is_ok()
    }

    /// "exact log Z over 26 points", for messages.
    fn what(&self) -> String {
        let structure = self.model.info().structure;
        format!(
            "exact {} over {} points ({} model)",
            self.task.what(structure),
            self.n,
            self.model
        )
    }
}

impl fmt::Display for Estimate {
    /// One sentence, e.g. "exact log Z over 26 points (hcc model): 1.3e12
    /// splits on the blocked (avx2) kernel, about 80 s on 2 threads, 521.0 MiB".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = match self.model.info().structure {
            Structure::Hierarchy => "splits",
            Structure::Partition => "terms",
        };
        write!(
            f,
            "{}: {:.1e} {unit} on the {} kernel, about {} on {} thread{}, {}",
            self.what(),
            self.splits,
            self.kernel,
            human_seconds(self.seconds),
            self.threads,
            if self.threads == 1 { "" } else { "s" },
            human_bytes(self.memory_bytes)
        )
    }
}

/// The time and memory a caller allows.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Budget {
    /// Bytes of tables allowed; `None` for the memory the operating system
    /// reports as available (as [`Options::memory_limit`](crate::Options)).
    pub memory_bytes: Option<u64>,
    /// Seconds allowed; `None` for no limit.
    pub seconds: Option<f64>,
}

/// How to compute: exactly, or approximately because exact does not fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// The exact trellis fits the budget.
    Exact,
    /// It does not: approximate A* for the MAP tree, a sparse trellis (beam
    /// search's clusters) for `log Z`, marginals and samples.
    Approximate,
}

impl Method {
    /// `"exact"` or `"approximate"`.
    pub fn name(self) -> &'static str {
        match self {
            Method::Exact => "exact",
            Method::Approximate => "approximate",
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

// Calibration (see the module docs and `docs/benchmarks.md`): nanoseconds
// per unit of work per core, fitted to the median wall-clock times of the
// `trellis` command on 2 threads (seconds · 2 / units), between the figures
// of a quiet machine and of one shared with a build.

/// Fixed seconds of a run: starting, reading the input, the greedy scale.
const OVERHEAD_S: f64 = 0.01;
/// Tabulating the model and the per-subset sweeps around the passes, per
/// subset per core.
const PER_SUBSET_NS: f64 = 8.0;
/// Blocked kernel, AVX2: the max-plus key pass (MAP), per split: the
/// grouped cross step's 0.089-0.092 measured at N = 24-26 on an idle
/// machine (CPU seconds per split), with 20 % for a shared one.
const BLOCKED_KEYS_NS: f64 = 0.11;
/// Blocked kernel, AVX2: the sum-product weight pass (`log Z`, samples),
/// per split: 0.081-0.085 measured at N = 24-28 idle, with 20 %.
const BLOCKED_WEIGHTS_NS: f64 = 0.10;
/// Blocked kernel, AVX2: the outside pass, per term (as the weight pass).
const BLOCKED_OUTSIDE_NS: f64 = 0.16;
/// The portable path of the blocked kernel relative to AVX2 (CPU time of
/// `logz` at `n = 22`, `TRELLIS_KERNEL=portable` against the default).
const PORTABLE_FACTOR: f64 = 2.4;
/// The level-order scaled kernel (Dasgupta): the fused inside pass, per
/// split, while the tables fit in the L3 cache (`n ≤ 20`) ...
const LEVEL_ORDER_NS: f64 = 4.0;
/// ... and the growth per point beyond (random reads of 16-byte cells; from
/// the same kernel's figures at `n = 20 … 25` in the design notes).
const LEVEL_ORDER_GROWTH: f64 = 1.35;
/// The level-order outside pass, per term.
const LEVEL_ORDER_OUTSIDE_NS: f64 = 5.5;
/// The general kernel, per split: average linkage (`O(1)` per `log ψ`).
const GENERAL_AVERAGE_NS: f64 = 30.0;
/// The general kernel, per split and point: complete and single linkage
/// (`O(n)` per `log ψ`).
const GENERAL_LINKAGE_PER_POINT_NS: f64 = 4.0;
/// The general kernel, per split: the Ginkgo likelihood (4 `exp`, 1 `ln`;
/// the jets benchmark of the design notes, not refitted).
const GENERAL_GINKGO_NS: f64 = 67.0;
/// The summary a triplet-restricted model adds per subset while the model is
/// tabulated (`crate::constraints::ConstrainedSummary`: a 128-bit mask and a
/// flag, aligned to 16 bytes).
const CONSTRAINED_SUMMARY_BYTES: u64 = 32;
/// The max-plus pass of the general kernel relative to its log-space pass
/// when the model's bound prunes splits (average linkage, Ginkgo); complete
/// and single linkage gain nothing measurable.
const GENERAL_MAP_FACTOR: f64 = 0.5;
/// The flat blocked kernel, AVX2: the key pass (MAP), per term.
const FLAT_KEYS_NS: f64 = 0.35;
/// The flat blocked kernel, AVX2: the weight pass (`log Z`), per term.
const FLAT_WEIGHTS_NS: f64 = 0.30;

/// The table of log cluster marginals the outside pass leaves, per subset
/// (kept while the MCC pass runs).
const LOG_P_BYTES: u64 = 8;

/// Splits of one inside pass of the dense trellis, `(3^n - 2^(n+1) + 1)/2`.
fn inside_splits(n: usize) -> f64 {
    (3f64.powi(n as i32) - 2f64.powi(n as i32 + 1) + 1.0) / 2.0
}

/// Terms of the outside pass, `3^n - 2^(n+1) + 1`.
fn outside_terms(n: usize) -> f64 {
    2.0 * inside_splits(n)
}

/// Terms of one pass of the flat trellis, `(3^n - 1)/2`.
fn flat_terms(n: usize) -> f64 {
    (3f64.powi(n as i32) - 1.0) / 2.0
}

/// Whether the blocked kernels take their AVX2 path (the one the run will
/// take, see the module docs), and their time relative to it.
fn blocked_path() -> (bool, f64) {
    match KernelPath::choose(None).unwrap_or_else(|_| KernelPath::best()) {
        KernelPath::Avx2 => (true, 1.0),
        KernelPath::Portable => (false, PORTABLE_FACTOR),
    }
}

/// The kernel a model runs on, with the passes of a task: `(name, [(units,
/// ns per unit per core)])`.
fn passes(n: usize, model: ModelName, task: Task) -> (&'static str, Vec<(f64, f64)>) {
    let inside = inside_splits(n);
    let outside = outside_terms(n);
    let marginals = task.needs_marginals();
    let (avx2, factor) = blocked_path();
    match model {
        ModelName::Hcc => {
            let keys = (inside, BLOCKED_KEYS_NS * factor);
            let weights = (inside, BLOCKED_WEIGHTS_NS * factor);
            let name = if avx2 {
                "blocked (avx2)"
            } else {
                "blocked (portable)"
            };
            let passes = match task {
                Task::LogZ => vec![weights],
                Task::Map => vec![keys],
                Task::Sample => vec![weights],
                // The marginals alone start from the greedy tree's scale
                // (`WeightTable::with_marginals`); `infer` needs the MAP.
                Task::Marginals | Task::Mcc | Task::Consensus => {
                    vec![weights, (outside, BLOCKED_OUTSIDE_NS * factor)]
                }
                Task::Infer => vec![keys, weights, (outside, BLOCKED_OUTSIDE_NS * factor)],
            };
            (name, passes)
        }
        ModelName::Cc => {
            let keys = (flat_terms(n), FLAT_KEYS_NS * factor);
            let weights = (flat_terms(n), FLAT_WEIGHTS_NS * factor);
            let name = if avx2 {
                "flat blocked (avx2)"
            } else {
                "flat blocked (portable)"
            };
            match task {
                Task::LogZ => (name, vec![weights]),
                Task::Map => (name, vec![keys]),
                _ => (name, vec![keys, weights]),
            }
        }
        ModelName::Dasgupta => {
            // Beyond the L3 cache every point adds a factor of random reads.
            let growth = LEVEL_ORDER_GROWTH.powi(n.saturating_sub(20) as i32);
            let mut passes = vec![(inside, LEVEL_ORDER_NS * growth)];
            if marginals {
                passes.push((outside, LEVEL_ORDER_OUTSIDE_NS * growth));
            }
            ("level-order", passes)
        }
        ModelName::LinkageAverage
        | ModelName::LinkageComplete
        | ModelName::LinkageSingle
        | ModelName::Ginkgo
        | ModelName::GinkgoLegacy => {
            let (per_split, map_factor) = match model {
                ModelName::LinkageAverage => (GENERAL_AVERAGE_NS, GENERAL_MAP_FACTOR),
                ModelName::Ginkgo | ModelName::GinkgoLegacy => {
                    (GENERAL_GINKGO_NS, GENERAL_MAP_FACTOR)
                }
                _ => (
                    GENERAL_AVERAGE_NS + GENERAL_LINKAGE_PER_POINT_NS * n as f64,
                    1.0,
                ),
            };
            let passes = match task {
                Task::Map => vec![(inside, per_split * map_factor)],
                Task::LogZ | Task::Sample => vec![(inside, per_split)],
                Task::Marginals | Task::Infer | Task::Mcc | Task::Consensus => {
                    vec![(inside, per_split), (outside, per_split)]
                }
            };
            ("general", passes)
        }
    }
}

/// The estimate of `task` over `n` points of `model` on `threads` threads
/// (0 is taken as 1): the dense trellis for the hierarchy models, the flat
/// trellis for `cc` (see the module docs for how).
///
/// # Errors
///
/// [`ErrorKind::Empty`] for no points, [`ErrorKind::TooManyPoints`] beyond
/// [`MAX_POINTS`] (no exact method: use an approximate one).
pub fn estimate(n: usize, model: ModelName, task: Task, threads: usize) -> Result<Estimate> {
    estimate_on(n, model, task, threads, false)
}

/// [`estimate`] for a hierarchy model restricted by triplets
/// ([`crate::constraints::Constrained`]): the same kernels and time (the
/// restriction keeps a model's separable form, and `hcc`'s pair form), and
/// the larger summaries while a model without the pair form is tabulated.
///
/// # Errors
///
/// Those of [`estimate`].
pub fn estimate_constrained(
    n: usize,
    model: ModelName,
    task: Task,
    threads: usize,
) -> Result<Estimate> {
    estimate_on(n, model, task, threads, true)
}

fn estimate_on(
    n: usize,
    model: ModelName,
    task: Task,
    threads: usize,
    constrained: bool,
) -> Result<Estimate> {
    if n == 0 {
        return Err(Error::new(ErrorKind::Empty));
    }
    if n > MAX_POINTS {
        return Err(Error::new(ErrorKind::TooManyPoints {
            n,
            max: MAX_POINTS,
            method: memory::DENSE_METHOD,
        }));
    }
    let threads = threads.max(1);
    let structure = model.info().structure;
    if !task.applies_to(structure) {
        return Err(Error::parameter(format!(
            "the task {task} summarises a posterior over hierarchies, and the {model} model's \
             posterior is over partitions (its summary is the Binder-optimal partition)"
        )));
    }
    let mut subsets = 2f64.powi(n as i32);
    let heap = match model {
        // Complete and single linkage keep `n` distances per summary.
        ModelName::LinkageComplete | ModelName::LinkageSingle => (8 * n as u64 + 16) << n,
        _ => 0,
    };
    let heap = heap
        + if constrained {
            CONSTRAINED_SUMMARY_BYTES << n
        } else {
            0
        };
    let workload = workload(model, task);
    let single_pass = matches!(workload, Workload::Pass | Workload::PassMarginals);
    // `Infer`'s MAP pass runs beside the weights, before the outside pass:
    // two tables as well.
    let mut memory_bytes = memory_needed(n, workload);
    let (kernel, mut passes) = passes(n, model, task);
    if task == Task::Mcc {
        // The clade-credibility model is tabulated and its max-plus pass
        // runs (blocked kernel) while the posterior keeps its tables.
        let (_, factor) = blocked_path();
        passes.push((inside_splits(n), BLOCKED_KEYS_NS * factor));
        subsets *= 2.0;
        // Kept: the weights and log marginals of the blocked passes, or the
        // model tables, the inside pass's tables and the log marginals.
        let kept = if workload == Workload::PassMarginals {
            2 * LOG_P_BYTES
        } else {
            MODEL_BYTES + INSIDE_KEPT_BYTES + LOG_P_BYTES
        };
        memory_bytes =
            memory_bytes.max((kept << n).saturating_add(memory_needed(n, Workload::Inside)));
    }
    // The pair form under triplets keeps a bit per subset: the forbidden
    // clusters.
    let memory_bytes = match (single_pass, constrained) {
        (true, false) => memory_bytes,
        (true, true) => memory_bytes.saturating_add(crate::dense::forbidden_bytes(n, 1)),
        (false, _) => memory_bytes.saturating_add(heap),
    };
    // Samples of hierarchies keep the split distributions of large
    // clusters (128 MiB at most).
    let memory_bytes = match (task, structure) {
        (Task::Sample, Structure::Hierarchy) => memory_bytes.saturating_add(sampler_cache_bytes(n)),
        _ => memory_bytes,
    };
    let splits: f64 = passes.iter().map(|(units, _)| units).sum();
    let core_ns: f64 =
        subsets * PER_SUBSET_NS + passes.iter().map(|(units, ns)| units * ns).sum::<f64>();
    Ok(Estimate {
        n,
        model,
        task,
        memory_bytes,
        seconds: OVERHEAD_S + core_ns * 1e-9 / threads as f64,
        splits,
        kernel,
        threads,
    })
}

/// The most the sampler of the dense trellis keeps between the samples it
/// draws over `n` points, in bytes: the cumulative split probabilities of
/// every cluster of at least 9 points that a draw passes through, up to
/// 128 MiB ([`estimate`] counts them for [`Task::Sample`]).
pub fn sampler_cache_bytes(n: usize) -> u64 {
    crate::dense::sampler_cache_bytes(n)
}

/// What the dense trellis holds for `task` over `model` (restricted by
/// triplets or not), for [`memory_needed`]: one 8-byte pass for
/// log Z, the MAP tree and samples of `hcc` (under triplets too: its pair
/// form marks the forbidden clusters block by block), two for its marginals
/// (the weights and the outside table; `infer`'s MAP pass runs beside the
/// weights before the outside pass), else the tables of the task's
/// structure. (The MCC tree's own pass comes on top: see [`estimate`].)
pub fn workload(model: ModelName, task: Task) -> Workload {
    let pair_form = model == ModelName::Hcc;
    let single_pass = pair_form && matches!(task, Task::LogZ | Task::Map | Task::Sample);
    let structure = model.info().structure;
    if single_pass {
        Workload::Pass
    } else if pair_form
        && matches!(
            task,
            Task::Marginals | Task::Infer | Task::Mcc | Task::Consensus
        )
    {
        Workload::PassMarginals
    } else if structure == Structure::Partition && matches!(task, Task::LogZ | Task::Map) {
        Workload::FlatPass
    } else {
        task.workload(structure)
    }
}

/// [`Method::Exact`] when the estimate of `task` fits `budget` (memory and
/// time), else [`Method::Approximate`]; with the estimate either way.
///
/// # Errors
///
/// Those of [`estimate`]: beyond [`MAX_POINTS`] no exact method exists and
/// the door goes to an approximate one without asking.
pub fn choose(
    n: usize,
    model: ModelName,
    task: Task,
    threads: usize,
    budget: &Budget,
) -> Result<(Method, Estimate)> {
    let e = estimate(n, model, task, threads)?;
    let method = if e.fits(budget) {
        Method::Exact
    } else {
        Method::Approximate
    };
    Ok((method, e))
}

/// Checks an estimate against a budget: [`ErrorKind::OutOfMemory`] when its
/// tables exceed the memory budget (or, without one, the memory the
/// operating system reports as available), [`ErrorKind::TimeBudget`] when it
/// would take longer than the time budget. Both messages name the estimate
/// and the limit and suggest an approximate method.
pub fn check(estimate: &Estimate, budget: &Budget) -> Result<()> {
    if let Some(available) = budget.memory_bytes.or_else(memory::available_memory) {
        if estimate.memory_bytes > available {
            return Err(Error::new(ErrorKind::OutOfMemory {
                n: estimate.n,
                needed: estimate.memory_bytes,
                available,
                capped: budget.memory_bytes.is_some(),
            }));
        }
    }
    if let Some(limit) = budget.seconds {
        if estimate.seconds > limit {
            return Err(Error::new(ErrorKind::TimeBudget {
                what: estimate.what(),
                needed_seconds: estimate.seconds,
                limit_seconds: limit,
            }));
        }
    }
    Ok(())
}

/// The threads parallel work runs on by default: rayon's pool (one per
/// core), or 1 without the `parallel` feature.
pub fn default_threads() -> usize {
    crate::base::par::threads()
}

// The memory of what a front-end holds beside the trellis: the sizes every
// door checks before it allocates, in one place (they were decided in each
// door before).

/// Fails when `needed` bytes for `what` exceed `limit` (a cap the caller
/// set) or, without one, the memory the operating system reports as
/// available: the one check of a size computed before allocating
/// ([`ErrorKind::TooMuchMemory`] naming `what`, how much it needs and whose
/// limit it is).
///
/// # Errors
///
/// [`ErrorKind::TooMuchMemory`] when it does not fit.
pub fn check_bytes(what: &str, needed: u128, limit: Option<u64>) -> Result<()> {
    memory::check_bytes(
        || what.to_string(),
        u64::try_from(needed).unwrap_or(u64::MAX),
        limit,
    )
}

/// Bytes of the `n x n` matrix of pairwise weights or distances.
pub fn weights_bytes(n: usize) -> u128 {
    8 * (n as u128) * (n as u128)
}

/// Bytes of one tree over `n` leaves in memory and as text (Newick or JSON),
/// an upper bound: `2n - 1` boxed nodes, and about a dozen characters a leaf.
pub fn tree_bytes(n: usize) -> u128 {
    let node = std::mem::size_of::<crate::Tree>() as u128 + 16;
    let n = n.max(1) as u128;
    2 * n * node + 12 * n
}

/// Bytes of `k` samples (trees or partitions) over `n` points held at once.
pub fn samples_bytes(k: usize, n: usize) -> u128 {
    (k as u128).saturating_mul(tree_bytes(n))
}

/// Bytes of beam search over `n` points with `width` states per level (two
/// levels of states with their active clusters and ranked candidate
/// merges, and the clusters built; see
/// [`beam_memory`](crate::baselines::beam_memory)).
pub fn beam_bytes(n: usize, width: usize) -> u128 {
    crate::baselines::beam_memory(n, width) as u128
}

/// Bytes of a classic linkage (average, complete, Ward, ...) over `n`
/// points beside its input: the distance matrix and its working copy.
pub fn linkage_bytes(n: usize) -> u128 {
    2 * weights_bytes(n)
}

/// Bytes a candidate split of the approximate A* search may hold while it
/// is scored (two sets, two summaries, its score): an upper bound for the
/// built-in models.
const CANDIDATE_BYTES: u128 = 256;

/// Bytes of the candidate splits one vertex of the approximate A* search
/// scores at once over `n` points: `samples` random ones and up to `n²`
/// one-point moves. (The search's own vertices are bounded by its budget,
/// which stops it with its best tree.)
pub fn approx_candidates_bytes(n: usize, samples: usize) -> u128 {
    (samples as u128)
        .saturating_add(n as u128 * n as u128)
        .saturating_mul(CANDIDATE_BYTES)
}

/// Bytes of Perturb-and-MAP with `samples` perturbed problems over `n`
/// points on `threads` threads: one flat trellis and one perturbed weight
/// matrix per thread at once, and one `n x n` count matrix per sample (the
/// library keeps them all until it averages).
pub fn perturb_map_bytes(n: usize, samples: usize, threads: usize) -> u128 {
    let threads = threads.min(samples.max(1)) as u128;
    let tables = crate::memory_needed(n, Workload::FlatInside) as u128 + weights_bytes(n);
    let counts = (samples as u128).saturating_mul(4 * (n * n) as u128 + 24);
    threads.saturating_mul(tables).saturating_add(counts)
}

/// Bytes of every cluster marginal listed over `n` points (every
/// non-singleton proper cluster at worst): members and probabilities, in
/// memory and as text. Unbounded (`u128::MAX`) from 100 points on.
pub fn clusters_bytes(n: usize) -> u128 {
    if n >= 100 {
        return u128::MAX;
    }
    let per_cluster = 48 + 12 * n as u128;
    per_cluster << n
}

/// Bytes of the clusters a door lists over `n` points with marginal at
/// least `min_p`: up to every subset of the dense trellis
/// ([`clusters_bytes`]), and for `min_p > 0` at most `(n - 2) / min_p` of
/// them (the marginals of the non-singleton proper clusters sum to `n - 2`,
/// the number of such clusters in every binary tree); a sparse trellis's
/// vertices are counted with the trellis (`dense` false: none here).
pub fn listed_bytes(dense: bool, n: usize, min_p: f64) -> u128 {
    if !dense {
        return 0;
    }
    let all = clusters_bytes(n);
    if min_p.is_nan() || min_p <= 0.0 || n >= 100 {
        return all;
    }
    // One more than the bound, for the rounding of the computed marginals.
    let most = (n.saturating_sub(2) as f64 / min_p).floor() + 1.0;
    if most >= 2f64.powi(n as i32) {
        return all;
    }
    (most as u128).saturating_mul(48 + 12 * n as u128)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_clusters_are_bounded_by_the_threshold() {
        let per = |n: u128| 48 + 12 * n;
        assert_eq!(listed_bytes(false, 20, 0.0), 0);
        assert_eq!(listed_bytes(true, 20, 0.0), clusters_bytes(20));
        assert_eq!(listed_bytes(true, 20, f64::NAN), clusters_bytes(20));
        // (26 - 2) / 0.01 = 2400 clusters at most, and one for rounding.
        assert_eq!(listed_bytes(true, 26, 0.01), 2401 * per(26));
        assert_eq!(listed_bytes(true, 30, 1.0), 29 * per(30));
        // Never more than every subset.
        assert_eq!(listed_bytes(true, 4, 1e-9), clusters_bytes(4));
    }

    #[test]
    fn samples_count_the_sampler_cache() {
        // Every cluster of at least 9 points, by enumeration, against the formula.
        for n in [8usize, 9, 12, 14] {
            let entries: u64 = (1u64..1 << n)
                .map(|s| s.count_ones())
                .filter(|&k| k >= 9)
                .map(|k| (1u64 << (k - 1)) - 1)
                .sum();
            assert_eq!(sampler_cache_bytes(n), 8 * entries, "n = {n}");
        }
        // Capped at the budget (128 MiB).
        assert_eq!(sampler_cache_bytes(30), 128 << 20);
        for n in [12, 20, 30] {
            for model in [ModelName::Hcc, ModelName::Dasgupta] {
                let bytes = |task| estimate(n, model, task, 2).unwrap().memory_bytes;
                let cache = sampler_cache_bytes(n);
                if model == ModelName::Hcc {
                    // One pass for log Z and samples, plus the cache.
                    assert_eq!(bytes(Task::Sample), bytes(Task::LogZ) + cache, "n = {n}");
                } else {
                    assert!(bytes(Task::Sample) >= cache, "n = {n}");
                }
            }
        }
    }

    #[test]
    fn the_summaries_count_their_passes_and_memory() {
        for n in [2, 12, 20, 26] {
            for model in ModelName::all() {
                let e = |task| estimate(n, model, task, 2);
                if model.info().structure == Structure::Partition {
                    for task in [Task::Mcc, Task::Consensus] {
                        let err = e(task).unwrap_err().to_string();
                        assert!(err.contains("hierarchies"), "{err}");
                    }
                    continue;
                }
                let marginals = e(Task::Marginals).unwrap();
                let consensus = e(Task::Consensus).unwrap();
                let mcc = e(Task::Mcc).unwrap();
                // Consensus: the marginals' work and memory.
                assert_eq!(
                    consensus,
                    Estimate {
                        task: Task::Consensus,
                        ..marginals.clone()
                    }
                );
                // MCC: one more inside pass of splits, on the blocked key pass.
                assert_eq!(mcc.splits, marginals.splits + inside_splits(n));
                let (_, factor) = blocked_path();
                let extra = (inside_splits(n) * BLOCKED_KEYS_NS * factor
                    + 2f64.powi(n as i32) * PER_SUBSET_NS)
                    * 1e-9
                    / 2.0;
                let d = mcc.seconds - marginals.seconds;
                assert!((d - extra).abs() <= 1e-12 * mcc.seconds, "{model} n = {n}");
                // Memory: the posterior's kept tables (16 + 16 + 8 bytes per
                // subset) and the MCC pass's own check, 112 bytes per subset
                // against 72 for the marginals (plus the same summaries' heap);
                // hcc's blocked passes keep 8 + 8 and hold 16 for the marginals.
                if model == ModelName::Hcc {
                    assert_eq!(marginals.memory_bytes, memory::pass_marginals_bytes(n));
                    assert_eq!(
                        mcc.memory_bytes,
                        (88u64 << n).max(marginals.memory_bytes),
                        "{model} n = {n}"
                    );
                } else {
                    assert_eq!(
                        mcc.memory_bytes - marginals.memory_bytes,
                        40u64 << n,
                        "{model} n = {n}"
                    );
                }
                assert_eq!(mcc.kernel, marginals.kernel);
            }
        }
        // By name, as the doors spell them.
        assert_eq!("mcc".parse::<Task>().unwrap(), Task::Mcc);
        assert_eq!("Consensus".parse::<Task>().unwrap(), Task::Consensus);
        let hcc = estimate(22, ModelName::Hcc, Task::Mcc, 2).unwrap();
        assert!(
            hcc.to_string()
                .starts_with("exact maximum-clade-credibility tree over 22 points"),
            "{hcc}"
        );
    }
}
