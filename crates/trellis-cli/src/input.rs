//! From command-line arguments to a validated weight matrix.

use anyhow::{Context, Result};
use trellis::{Similarity, Weights, Workload};

use crate::{ModelArgs, ModelKind, SimilarityKind};

/// Reads `--weights` or `--points`, validates them, and checks that the dense
/// trellis for this many points fits in memory before anything large is allocated.
pub fn load_weights(args: &ModelArgs, workload: Workload) -> Result<Weights> {
    if !(args.beta.is_finite() && args.beta >= 0.0) {
        anyhow::bail!("--beta must be a finite number >= 0, not {}", args.beta);
    }
    if let Some(g) = args.max_memory {
        if !(g.is_finite() && g > 0.0) {
            anyhow::bail!("--max-memory must be a positive number of GiB, not {g}");
        }
    }
    let weights = if let Some(path) = &args.weights {
        if args.similarity.is_some() || args.gamma.is_some() || args.center {
            anyhow::bail!("--similarity, --gamma and --center apply to --points, not to --weights");
        }
        let m = trellis::io::read_matrix(path, false)?;
        Weights::from_matrix(&m).with_context(|| format!("in --weights {}", path.display()))?
    } else {
        let path = args
            .points
            .as_ref()
            .expect("clap requires --weights or --points");
        let m = trellis::io::read_matrix(path, true)?;
        let similarity = match args.similarity.unwrap_or(SimilarityKind::Cosine) {
            SimilarityKind::Cosine => Similarity::Cosine,
            SimilarityKind::Dot => Similarity::Dot,
            SimilarityKind::Rbf => Similarity::Rbf {
                gamma: args.gamma.unwrap_or(1.0 / m.cols.max(1) as f64),
            },
        };
        if args.gamma.is_some() && !matches!(similarity, Similarity::Rbf { .. }) {
            anyhow::bail!("--gamma only applies to --similarity rbf");
        }
        Weights::from_points(&m, similarity, args.center)
            .with_context(|| format!("in --points {}", path.display()))?
    };
    if args.model == ModelKind::Dasgupta {
        if let Some((i, j, w)) = weights.first_negative() {
            anyhow::bail!(
                "negative weight w[{i}][{j}] = {w}: Dasgupta's cost needs non-negative \
                 similarities (do not use --center with it, or use --model hcc)"
            );
        }
    }
    trellis::check_memory(weights.n(), workload, memory_limit(args))?;
    Ok(weights)
}

/// `--max-memory` in bytes (`None`: the memory available).
pub fn memory_limit(args: &ModelArgs) -> Option<u64> {
    args.max_memory.map(|g| (g * (1u64 << 30) as f64) as u64)
}

/// Runs `$body` with `$m` bound to the chosen model (a concrete type per arm,
/// so the library's generic kernels are monomorphised for each).
#[macro_export]
macro_rules! with_model {
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
        }
    };
}
