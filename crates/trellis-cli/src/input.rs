//! From command-line arguments to a validated problem: a weight matrix (for
//! the cost models) or a jets file (for the Ginkgo likelihood).

use anyhow::{Context, Result, bail};
use trellis::ginkgo::{JetsFile, Variant};
use trellis::{Similarity, Weights, Workload};

use crate::{DataArgs, ModelArgs, ModelKind, SimilarityKind};

/// What the commands run on.
pub enum Input {
    /// One dataset of pairwise weights (`--weights` or `--points`).
    Weights(Weights),
    /// Many jets (`--jets`), each its own problem.
    Jets(JetsFile),
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
/// the exact trellis will run: a weight matrix's tables must fit in memory
/// (checked on the number of points, before any similarity is computed),
/// and every jet must be small enough (checked before any work starts).
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
    let point_flags = data.similarity.is_some() || data.gamma.is_some() || data.center;
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
        if point_flags {
            bail!("--similarity, --gamma and --center apply to --points, not to --jets");
        }
        let file = JetsFile::read(path)?;
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
    let limit = memory_limit(args);
    let weights = read_weights_checked(data, &|n| {
        check_points(n)?;
        if let Some(workload) = dense {
            trellis::check_memory(n, workload, limit)
                .map_err(|e| anyhow::anyhow!("{e} (for example --sparse beam)"))?;
        }
        Ok(())
    })?;
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

/// Reads `--weights`, or `--points` with their similarity, with
/// `check_points(n)` called on the number of points before the `N x N`
/// weights are built.
pub fn read_weights_checked(
    data: &DataArgs,
    check_points: &dyn Fn(usize) -> Result<()>,
) -> Result<Weights> {
    let point_flags = data.similarity.is_some() || data.gamma.is_some() || data.center;
    if let Some(path) = &data.weights {
        if point_flags {
            bail!("--similarity, --gamma and --center apply to --points, not to --weights");
        }
        let m = trellis::io::read_matrix(path, false)?;
        // A matrix that is not square is reported as such by `from_matrix`.
        if m.rows == m.cols {
            check_points(m.rows)?;
        }
        return Weights::from_matrix(&m)
            .with_context(|| format!("in --weights {}", path.display()));
    }
    let path = data.points.as_ref().expect("clap requires an input");
    let m = trellis::io::read_matrix(path, true)?;
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
    check_points(m.rows)?;
    Weights::from_points(&m, similarity, data.center)
        .with_context(|| format!("in --points {}", path.display()))
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
