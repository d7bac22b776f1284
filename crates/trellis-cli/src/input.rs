//! From command-line arguments to a validated problem: a weight matrix (for
//! the cost models), with the points' names when `--points` gives them, or a
//! jets file (for the Ginkgo likelihood).
//!
//! Inputs are read with the library's readers (`trellis::io`): `-` is standard
//! input, and no more bytes are read than a share of the memory limit
//! (`--max-memory`, or the memory available; at least 1 MiB; see
//! `trellis::io::input_limit`), leaving room to parse them; `--weights` for
//! the dense trellis (at most 30 points) is read up to 1 MiB. Sizes are checked before work: the number of
//! points against the command's limit, then the `N x N` weight matrix against
//! the memory limit, and only then are similarities computed.

use std::ops::Deref;
use std::path::Path;

use anyhow::{Context, Result, bail};
use trellis::ginkgo::{JetsFile, Variant};
use trellis::io::{NamesColumn, ReadOptions, Table};
use trellis::{Similarity, Weights, Workload};

use crate::{DataArgs, ModelArgs, ModelKind, SimilarityKind};

/// What the commands run on.
pub enum Input {
    /// One dataset of pairwise weights (`--weights` or `--points`).
    Weights(NamedWeights),
    /// Many jets (`--jets`), each its own problem.
    Jets(JetsFile),
}

/// Pairwise weights with the names of their points, when the input names
/// them. Dereferences to the weights.
pub struct NamedWeights {
    /// The validated weights.
    pub weights: Weights,
    /// One name per point, when the input has a names column.
    pub names: Option<Vec<String>>,
}

impl NamedWeights {
    /// The points' names, when the input gives them.
    pub fn names(&self) -> Option<&[String]> {
        self.names.as_deref()
    }

    /// How point `i` is shown in readable output: its name, or its index.
    pub fn label(&self, i: usize) -> String {
        match self.names().and_then(|names| names.get(i)) {
            Some(name) => name.clone(),
            None => i.to_string(),
        }
    }

    /// The Newick form of a tree over these points, with their names when
    /// they have names.
    pub fn newick(&self, tree: &trellis::Tree) -> String {
        match self.names() {
            Some(names) => tree.to_newick_named(names),
            None => tree.to_newick(),
        }
    }

    /// A JSON result with a `"names"` field after its own when the points
    /// have names (unchanged otherwise).
    pub fn with_names<T: serde::Serialize>(&self, result: T) -> Named<'_, T> {
        Named {
            result,
            names: self.names(),
        }
    }
}

/// A JSON result and the points' names, if any (see
/// [`NamedWeights::with_names`]).
#[derive(serde::Serialize)]
pub struct Named<'a, T> {
    #[serde(flatten)]
    result: T,
    #[serde(skip_serializing_if = "Option::is_none")]
    names: Option<&'a [String]>,
}

impl Deref for NamedWeights {
    type Target = Weights;

    fn deref(&self) -> &Weights {
        &self.weights
    }
}

/// The most bytes of `--weights` read for the dense trellis: its
/// [`trellis::MAX_POINTS`]` x `[`trellis::MAX_POINTS`] matrix with up to
/// 1 KiB of text per value fits in 1 MiB.
const DENSE_WEIGHTS_BYTES: u64 = 1 << 20;

/// What to use instead of the dense trellis over too many points for the
/// cost models (hcc, Dasgupta). Greedy and beam search are poor on hcc (their
/// myopic split cost is 0 for negative weights), so they are not suggested.
const DENSE_ALTERNATIVES: &str = "for the lowest-cost tree over more points, use \
     `trellis astar --approx` (approximate A* from linkage trees, any number of points, \
     never worse than average linkage); for approximate log Z, marginals and samples, \
     --sparse beam (any number of points, within the memory of its beam search)";

/// Whether a flag that applies to `--points` only was given.
fn point_flags(data: &DataArgs) -> bool {
    data.similarity.is_some() || data.gamma.is_some() || data.center || data.names_column.is_some()
}

/// Parses `--names-column`: a 0-based column index, or `none`.
pub fn names_column(s: &str) -> Result<NamesColumn, String> {
    if s.eq_ignore_ascii_case("none") {
        return Ok(NamesColumn::None);
    }
    s.parse::<usize>()
        .map(NamesColumn::Column)
        .map_err(|_| format!("must be a 0-based column index or `none`, not {s:?}"))
}

/// The Ginkgo likelihood variant of a model choice, if it is one.
pub fn ginkgo_variant(kind: ModelKind) -> Option<Variant> {
    match kind {
        ModelKind::Ginkgo => Some(Variant::Current),
        ModelKind::GinkgoLegacy => Some(Variant::Legacy),
        ModelKind::Hcc | ModelKind::Dasgupta => None,
    }
}

/// Reads and validates the input of a command. With `dense = Some(workload)`
/// the exact trellis will run: the number of points (checked on the rows read,
/// before any similarity is computed) and the trellis tables must fit, and
/// every jet must be small enough (checked before any work starts).
pub fn load(args: &ModelArgs, dense: Option<Workload>) -> Result<Input> {
    load_checked(args, dense, &|_| Ok(()))
}

/// [`load`], with `check_points(n)` called on the number of points of a
/// weight matrix or points file as soon as it is known, before the `N x N`
/// weights are built (a command's point limit refuses first).
pub fn load_checked(
    args: &ModelArgs,
    dense: Option<Workload>,
    check_points: &dyn Fn(usize) -> Result<()>,
) -> Result<Input> {
    check_beta_and_memory(args.beta, args.max_memory)?;
    let data = &args.data;
    if let Some(path) = &args.jets {
        if ginkgo_variant(args.model).is_none() {
            bail!(
                "--jets needs a jet model: --model ginkgo or --model ginkgo-legacy, not {:?}",
                args.model
            );
        }
        if args.beta != 1.0 {
            bail!(
                "--beta applies to the cost models (hcc, dasgupta), not to the Ginkgo likelihood"
            );
        }
        if point_flags(data) {
            bail!(
                "--similarity, --gamma, --center and --names-column apply to --points, not to --jets"
            );
        }
        let limit = memory_limit(args);
        let file = JetsFile::read_limited(path, trellis::io::input_limit(limit))
            .map_err(|e| explain_limit(e, limit))?;
        if dense.is_some() {
            crate::batch::check_dense(&file)?;
        }
        return Ok(Input::Jets(file));
    }
    if ginkgo_variant(args.model).is_some() {
        bail!(
            "--model {:?} scores jets: give them with --jets FILE",
            args.model
        );
    }
    let weights = read_input(data, memory_limit(args), dense, check_points)?;
    if args.model == ModelKind::Dasgupta {
        if let Some((i, j, w)) = weights.first_negative() {
            bail!(
                "negative weight w[{i}][{j}] = {w}: Dasgupta's cost needs non-negative \
                 similarities (do not use --center with it, or use --model hcc)"
            );
        }
    }
    Ok(Input::Weights(weights))
}

/// Checks `--beta` and `--max-memory`.
pub fn check_beta_and_memory(beta: f64, max_memory: Option<f64>) -> Result<()> {
    if !(beta.is_finite() && beta >= 0.0) {
        bail!("--beta must be a finite number >= 0, not {beta}");
    }
    if let Some(g) = max_memory {
        if !(g.is_finite() && g > 0.0) {
            bail!("--max-memory must be a positive number of GiB, not {g}");
        }
    }
    Ok(())
}

/// Reads `--weights`, or `--points` (with their names) and their similarity.
/// At most `limit` bytes (`None`: the memory available) are read; with
/// `dense = Some(workload)`, the dense trellis's point and memory limits are
/// checked on the number of rows before anything else (after the command's
/// own `check_points(n)`, so that its point limit refuses first); the `N x N`
/// matrix is checked against `limit` before it is allocated.
pub fn read_input(
    data: &DataArgs,
    limit: Option<u64>,
    dense: Option<Workload>,
    check_points: &dyn Fn(usize) -> Result<()>,
) -> Result<NamedWeights> {
    let check_size = |n: usize| -> Result<()> {
        check_points(n)?;
        if let Some(workload) = dense {
            trellis::check_memory(n, workload, limit)
                .map_err(|e| anyhow::anyhow!("{e} ({DENSE_ALTERNATIVES})"))?;
        }
        Weights::check_memory(n, limit).map_err(|e| match limit {
            Some(_) => anyhow::anyhow!("{e} (--max-memory)"),
            None => anyhow::anyhow!("{e} (the memory available)"),
        })
    };
    if let Some(path) = &data.weights {
        if point_flags(data) {
            bail!(
                "--similarity, --gamma, --center and --names-column apply to --points, not to --weights"
            );
        }
        let mut max_bytes = trellis::io::input_limit(limit);
        let mut why = None;
        if dense.is_some() && max_bytes > DENSE_WEIGHTS_BYTES {
            max_bytes = DENSE_WEIGHTS_BYTES;
            why = Some(format!(
                "the dense trellis takes at most {} points, whose weights need less; \
                 for more points, see --sparse",
                trellis::MAX_POINTS
            ));
        }
        let table =
            trellis::io::read_table(path, &ReadOptions::weights().with_max_bytes(max_bytes))
                .map_err(|e| match &why {
                    Some(why) if is_too_large(&e) => anyhow::anyhow!("{e} ({why})"),
                    _ => explain_limit(e, limit),
                })?;
        let m = &table.matrix;
        // A non-square matrix is reported as such by `from_matrix`.
        if m.rows == m.cols {
            check_size(m.rows)?;
        }
        let weights =
            Weights::from_matrix(m).with_context(|| format!("in --weights {}", path.display()))?;
        return Ok(NamedWeights {
            weights,
            names: None,
        });
    }
    let path = data.points.as_ref().expect("clap requires an input");
    let Table { names, matrix: m } = read_points(path, data, limit)?;
    check_size(m.rows)?;
    let weights = similarity_weights(data, &m)?;
    Ok(NamedWeights { weights, names })
}

/// Reads `--points` (with their names, see `--names-column`), at most the
/// input limit under `limit`.
pub fn read_points(path: &Path, data: &DataArgs, limit: Option<u64>) -> Result<Table> {
    let options = ReadOptions::points().with_names(data.names_column.unwrap_or_default());
    let options = options.with_max_bytes(trellis::io::input_limit(limit));
    trellis::io::read_table(path, &options).map_err(|e| explain_limit(e, limit))
}

/// The weights of points: their pairwise similarity (`--similarity`,
/// `--gamma`, `--center`).
pub fn similarity_weights(data: &DataArgs, m: &trellis::Matrix) -> Result<Weights> {
    let similarity = match data.similarity.unwrap_or(SimilarityKind::Cosine) {
        SimilarityKind::Cosine => Similarity::Cosine,
        SimilarityKind::Dot => Similarity::Dot,
        SimilarityKind::Expneg => Similarity::ExpNeg,
        SimilarityKind::Rbf => Similarity::Rbf {
            gamma: data.gamma.unwrap_or(1.0 / m.cols.max(1) as f64),
        },
    };
    if data.gamma.is_some() && !matches!(similarity, Similarity::Rbf { .. }) {
        bail!("--gamma only applies to --similarity rbf");
    }
    let path = data.points.as_deref().unwrap_or(Path::new("-"));
    Weights::from_points(m, similarity, data.center)
        .with_context(|| format!("in --points {}", path.display()))
}

/// Reads a text file (`-`: standard input: jets, triplets, trees, clusters)
/// of at most the input limit under the memory limit `limit` (`None`: the
/// memory available); a larger input is refused naming the limit.
pub fn read_text(path: &Path, limit: Option<u64>) -> Result<String> {
    trellis::io::read_text(path, trellis::io::input_limit(limit))
        .map_err(|e| explain_limit(e, limit))
}

/// Whether a reader's error is an input over its byte limit.
fn is_too_large(e: &trellis::Error) -> bool {
    matches!(
        e.kind(),
        trellis::ErrorKind::Io { source, .. }
            if source.kind() == std::io::ErrorKind::FileTooLarge
    )
}

/// An error of the library's readers, with where the byte limit comes from
/// when the input was too large.
fn explain_limit(e: trellis::Error, limit: Option<u64>) -> anyhow::Error {
    match (is_too_large(&e), limit) {
        (true, Some(_)) => anyhow::anyhow!(
            "{e} (1/{} of --max-memory, and at least 1 MiB, leaving room to parse it)",
            trellis::io::INPUT_SHARE
        ),
        (true, None) => anyhow::anyhow!(
            "{e} (1/{} of the memory available, leaving room to parse it)",
            trellis::io::INPUT_SHARE
        ),
        (false, _) => e.into(),
    }
}

/// `--max-memory` in bytes (`None`: the memory available).
pub fn memory_limit(args: &ModelArgs) -> Option<u64> {
    gib(args.max_memory)
}

/// A number of GiB in bytes.
pub fn gib(g: Option<f64>) -> Option<u64> {
    g.map(|g| (g * (1u64 << 30) as f64) as u64)
}

/// Runs `$body` with `$m` bound to the chosen cost model (a concrete type per
/// arm, so the library's generic kernels are monomorphised for each).
#[macro_export]
macro_rules! with_cost_model {
    ($kind:expr, $weights:expr, $beta:expr, |$m:ident| $body:expr) => {
        match $kind {
            $crate::ModelKind::Hcc => {
                let $m = trellis::Hcc::new($weights, $beta)?;
                $body
            }
            $crate::ModelKind::Dasgupta => {
                let $m = trellis::Dasgupta::new($weights, $beta)?;
                $body
            }
            other => anyhow::bail!("--model {other:?} is not a cost model over weights"),
        }
    };
}
