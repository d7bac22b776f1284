//! From command-line arguments to a validated problem: a weight matrix (for
//! the weight models), a distance matrix (for the linkage potentials), with
//! the points' names when `--points` gives them, or a jets file (for the
//! Ginkgo likelihood). Which model takes which input is the library's
//! registry (`trellis::models::ModelInfo`).
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
use trellis::models::{InputKind, ModelName, PairwiseData};
use trellis::{Distances, Similarity, Weights, Workload};

use crate::{DataArgs, ModelArgs, SimilarityKind};

/// What the commands run on.
pub enum Input {
    /// One dataset of pairwise weights or distances (`--weights`,
    /// `--distances` or `--points`).
    Weights(NamedWeights),
    /// Many jets (`--jets`), each its own problem.
    Jets(JetsFile),
}

/// The pairwise data of a dataset: weights (the weight models) or distances
/// (the linkage potentials).
pub enum Pairwise {
    /// Validated pairwise weights.
    Weights(Weights),
    /// Validated pairwise distances.
    Distances(Distances),
}

impl Pairwise {
    /// The library's view of the data, to build a model on.
    pub fn view(&self) -> PairwiseData<'_> {
        match self {
            Pairwise::Weights(w) => PairwiseData::Weights(w),
            Pairwise::Distances(d) => PairwiseData::Distances(d),
        }
    }

    /// The number of points.
    pub fn n(&self) -> usize {
        self.view().n()
    }

    /// Distances for the classic linkages (see
    /// `trellis::models::PairwiseData::linkage_distances`).
    pub fn linkage_distances(&self) -> Vec<f64> {
        self.view().linkage_distances()
    }
}

/// Pairwise data with the names of their points, when the input names
/// them. Dereferences to the data.
pub struct NamedWeights {
    /// The validated weights or distances.
    pub data: Pairwise,
    /// One name per point, when the input has a names column.
    pub names: Option<Vec<String>>,
}

impl NamedWeights {
    /// The weights (the input of a weight model; `read_input` with
    /// `InputKind::Weights` gives nothing else).
    pub fn into_weights(self) -> Weights {
        match self.data {
            Pairwise::Weights(w) => w,
            Pairwise::Distances(_) => unreachable!("weights were read"),
        }
    }

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
    pub fn with_names<T: serde::Serialize>(&self, result: T) -> trellis::report::Named<'_, T> {
        trellis::report::with_names(result, self.names())
    }
}

impl Deref for NamedWeights {
    type Target = Pairwise;

    fn deref(&self) -> &Pairwise {
        &self.data
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

/// Whether a flag of the points' similarity was given.
fn similarity_flags(data: &DataArgs) -> bool {
    data.similarity.is_some() || data.gamma.is_some() || data.center
}

/// Parses `--model` of the hierarchical commands: a hierarchical model of
/// the library's registry.
pub fn hierarchy_model(s: &str) -> Result<ModelName, String> {
    let name: ModelName = s.parse().map_err(|e: trellis::Error| e.to_string())?;
    if name.info().structure != trellis::models::Structure::Hierarchy {
        return Err(format!(
            "{name} scores flat partitions: use `trellis flat ... --model {name}`"
        ));
    }
    Ok(name)
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
pub fn ginkgo_variant(kind: ModelName) -> Option<Variant> {
    match kind {
        ModelName::Ginkgo => Some(Variant::Current),
        ModelName::GinkgoLegacy => Some(Variant::Legacy),
        _ => None,
    }
}

/// The variant of a jets command's model (checked by `input::load`).
pub fn variant(args: &ModelArgs) -> Variant {
    ginkgo_variant(args.model).expect("a jet model")
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
    if let Some(t) = args.time_limit {
        if !(t.is_finite() && t >= 0.0) {
            bail!("--time-limit must be a number of seconds >= 0, not {t}");
        }
    }
    let data = &args.data;
    if let Some(path) = &args.jets {
        if ginkgo_variant(args.model).is_none() {
            bail!(
                "--jets needs a jet model: --model ginkgo or --model ginkgo-legacy, not {}",
                args.model
            );
        }
        if args.beta != 1.0 {
            bail!(
                "--beta applies to the cost models (hcc, dasgupta, linkage-*), not to the Ginkgo likelihood"
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
            "--model {} scores jets: give them with --jets FILE",
            args.model
        );
    }
    let info = args.model.info();
    let kind = if info.takes(InputKind::Distances) {
        if data.weights.is_some() {
            bail!(
                "--model {} runs on distances: give --distances FILE or --points FILE \
                 (Euclidean distances between the rows), not --weights",
                args.model
            );
        }
        InputKind::Distances
    } else {
        if args.distances.is_some() {
            bail!(
                "--model {} runs on weights (similarities): give --weights or --points; \
                 --distances is for the linkage potentials (--model linkage-average, \
                 linkage-complete, linkage-single)",
                args.model
            );
        }
        InputKind::Weights
    };
    let named = read_input(
        data,
        args.distances.as_deref(),
        memory_limit(args),
        dense,
        check_points,
        kind,
    )?;
    if let (ModelName::Dasgupta, Pairwise::Weights(w)) = (args.model, &named.data) {
        if let Some((i, j, w)) = w.first_negative() {
            bail!(
                "negative weight w[{i}][{j}] = {w}: Dasgupta's cost needs non-negative \
                 similarities (do not use --center with it, or use --model hcc)"
            );
        }
    }
    Ok(Input::Weights(named))
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

/// Reads `--weights`, or `--points` (with their names) and their similarity
/// (`kind` = weights); or `distances` (`--distances`), or the Euclidean distances between
/// `--points` (`kind` = distances). At most `limit` bytes (`None`: the memory
/// available) are read; with `dense = Some(workload)`, the dense trellis's
/// point and memory limits are checked on the number of rows before anything
/// else (after the command's own `check_points(n)`, so that its point limit
/// refuses first); the `N x N` matrix is checked against `limit` before it
/// is allocated.
pub fn read_input(
    data: &DataArgs,
    distances: Option<&Path>,
    limit: Option<u64>,
    dense: Option<Workload>,
    check_points: &dyn Fn(usize) -> Result<()>,
    kind: InputKind,
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
    if kind == InputKind::Distances {
        return read_distances(data, distances, limit, dense, &check_size);
    }
    if distances.is_some() {
        bail!(
            "--distances is for the linkage potentials (--model linkage-average, \
             linkage-complete, linkage-single) and `trellis linkage`; this model runs on \
             weights: give --weights or --points"
        );
    }
    if let Some(path) = &data.weights {
        if point_flags(data) {
            bail!(
                "--similarity, --gamma, --center and --names-column apply to --points, not to --weights"
            );
        }
        let m = read_square(path, limit, dense, &check_size)?;
        let weights =
            Weights::from_matrix(&m).with_context(|| format!("in --weights {}", path.display()))?;
        return Ok(NamedWeights {
            data: Pairwise::Weights(weights),
            names: None,
        });
    }
    let path = data
        .points
        .as_ref()
        .context("give the weights with --weights FILE or --points FILE")?;
    let Table {
        names, matrix: m, ..
    } = read_points(path, data, limit)?;
    check_size(m.rows)?;
    let weights = similarity_weights(data, &m)?;
    Ok(NamedWeights {
        data: Pairwise::Weights(weights),
        names,
    })
}

/// Reads an `N x N` matrix (`--weights`, `--distances`) of at most the input
/// limit under `limit` (for the dense trellis, at most
/// [`DENSE_WEIGHTS_BYTES`]: its 30 points need less), checking
/// `check_size(N)` on a square matrix before anything else (a non-square one
/// is reported by the matrix's validation).
fn read_square(
    path: &Path,
    limit: Option<u64>,
    dense: Option<Workload>,
    check_size: &dyn Fn(usize) -> Result<()>,
) -> Result<trellis::Matrix> {
    let mut max_bytes = trellis::io::input_limit(limit);
    let mut why = None;
    if dense.is_some() && max_bytes > DENSE_WEIGHTS_BYTES {
        max_bytes = DENSE_WEIGHTS_BYTES;
        why = Some(format!(
            "the dense trellis takes at most {} points, whose matrix needs less; \
             for more points, see --sparse",
            trellis::MAX_POINTS
        ));
    }
    let table = trellis::io::read_table(path, &ReadOptions::weights().with_max_bytes(max_bytes))
        .map_err(|e| match &why {
            Some(why) if is_too_large(&e) => anyhow::anyhow!("{e} ({why})"),
            _ => explain_limit(e, limit),
        })?;
    let m = table.matrix;
    if m.rows == m.cols {
        check_size(m.rows)?;
    }
    Ok(m)
}

/// Reads `--distances`, or `--points` as the Euclidean distances between
/// their rows (with their names), checking `check_size(n)` before the
/// `N x N` matrix is built.
fn read_distances(
    data: &DataArgs,
    distances: Option<&Path>,
    limit: Option<u64>,
    dense: Option<Workload>,
    check_size: &dyn Fn(usize) -> Result<()>,
) -> Result<NamedWeights> {
    if similarity_flags(data) {
        bail!(
            "--similarity, --gamma and --center make weights; the linkage potentials run on \
             distances (--distances, or the Euclidean distances between --points)"
        );
    }
    if let Some(path) = distances {
        if data.names_column.is_some() {
            bail!("--names-column applies to --points, not to --distances");
        }
        let m = read_square(path, limit, dense, check_size)?;
        let d = Distances::from_matrix(&m)
            .with_context(|| format!("in --distances {}", path.display()))?;
        return Ok(NamedWeights {
            data: Pairwise::Distances(d),
            names: None,
        });
    }
    let path = data
        .points
        .as_ref()
        .context("give the distances with --distances FILE or --points FILE")?;
    let Table {
        names, matrix: m, ..
    } = read_points(path, data, limit)?;
    check_size(m.rows)?;
    let d =
        Distances::from_points(&m).with_context(|| format!("in --points {}", path.display()))?;
    Ok(NamedWeights {
        data: Pairwise::Distances(d),
        names,
    })
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

/// Refuses `--time-limit` where nothing would honour it (`what`: the
/// command or engine), rather than ignoring it.
pub fn refuse_time_limit(args: &ModelArgs, what: &str) -> Result<()> {
    if args.time_limit.is_some() {
        bail!(
            "--time-limit applies to the exact trellis (map, logz, marginals, sample, infer) \
             and to astar, not to {what}"
        );
    }
    Ok(())
}

/// `--time-limit` as the library's time limit (checked finite and >= 0 by
/// [`load`]; one too long for a `Duration` is no limit).
pub fn time_limit(args: &ModelArgs) -> Option<std::time::Duration> {
    args.time_limit
        .and_then(|t| std::time::Duration::try_from_secs_f64(t).ok())
}

/// `--max-memory` in bytes (`None`: the memory available).
pub fn memory_limit(args: &ModelArgs) -> Option<u64> {
    gib(args.max_memory)
}

/// A number of GiB in bytes.
pub fn gib(g: Option<f64>) -> Option<u64> {
    g.map(|g| (g * (1u64 << 30) as f64) as u64)
}

/// Runs `$body` with `$m` bound to the cost model `$kind` (a
/// [`trellis::models::ModelName`]) built at `$beta` over `$data` (a
/// [`Pairwise`]) by the library's registry, a concrete type per model (see
/// `trellis::with_cost_model!`).
#[macro_export]
macro_rules! with_cost_model {
    ($kind:expr, $data:expr, $beta:expr, |$m:ident| $body:expr) => {{
        let model = trellis::models::CostModel::build($kind, $data.view(), $beta)?;
        trellis::with_cost_model!(model, |$m| $body)
    }};
}
