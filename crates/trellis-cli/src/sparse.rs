//! `--sparse beam|simulator`: `map`, `logz`, `marginals` and `sample` on a
//! sparse trellis (paper §3) instead of the full one, for problems too large
//! for it. The JSON output adds `"num_trees_realised"` (the exact number of
//! trees the sparse trellis realises, a decimal string), `"sparsity"`
//! (that number over `(2N-3)!!`, 0 where it underflows) and
//! `"log10_sparsity"` (its `log10`, finite at any size).
//!
//! Any number of points or leaves: clusters are stored as `u128` sets up to
//! 128 and as wide sets beyond. The memory of the `--trees` trees and of
//! the beam search that makes them is checked before any tree is built.

use anyhow::{Result, bail};
use clap::{Args, ValueEnum};
use trellis::ddt::Triplet;
use trellis::engines::{SparseSource, SparseSpec, sparse_bytes};
use trellis::ginkgo::{Jet, JetsFile, LeafOrdering};
use trellis::posterior::Posterior;

use crate::ModelArgs;
use crate::input::{memory_limit, variant};

/// How a sparse trellis is built.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SparseKind {
    /// The clusters of the best distinct final beams of beam search on each problem.
    Beam,
    /// Jets: the clusters of Ginkgo simulator trees with the jet's number of leaves and
    /// parameters (its rates, cut, mass and momentum), matched to its leaves by --ordering.
    Simulator,
}

/// Orders matching a simulated tree's leaves to a jet's.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderingKind {
    /// Increasing |p| (the paper's default).
    Momentum,
    /// Random (seeded by --sparse-seed).
    Random,
    /// As given (the simulator's own order).
    Given,
}

/// The flags of the sparse trellis, shared by `map`, `logz` and `sample`.
#[derive(Args, Debug)]
pub struct SparseArgs {
    /// Use a sparse trellis built from a sample of trees instead of the full trellis
    /// (approximate; for problems too large for the full one).
    #[arg(long, value_enum)]
    pub sparse: Option<SparseKind>,
    /// Number of input trees of the sparse trellis [default: 100].
    #[arg(long, value_name = "K", requires = "sparse")]
    pub trees: Option<usize>,
    /// With --sparse simulator: how simulated leaves are matched to the jet's
    /// [default: momentum].
    #[arg(long, value_enum, requires = "sparse")]
    pub ordering: Option<OrderingKind>,
    /// Seed of the simulator trees and of random orderings [default: 0].
    #[arg(long, value_name = "S", requires = "sparse")]
    pub sparse_seed: Option<u64>,
    /// With --sparse beam: the width of the beam search whose best --trees final beams
    /// make the trellis [default: max(K, min(3N, N(N-1)/2)); raised to K if below].
    /// Its time grows less than linearly with the width and quickly with N (1,000
    /// points on 2 cores: about 45 s at width 100, 75 s at 300), so narrow it for
    /// large inputs.
    #[arg(long, value_name = "W", requires = "sparse")]
    pub beam_width: Option<usize>,
}

impl SparseArgs {
    fn trees(&self) -> Result<usize> {
        match self.trees {
            Some(0) => bail!("--trees must be at least 1"),
            Some(k) => Ok(k),
            None => Ok(100),
        }
    }

    /// The library's description of the sparse trellis over `n` points.
    fn spec(&self, n: usize) -> Result<SparseSpec> {
        let source = match self.sparse.expect("--sparse") {
            SparseKind::Beam => SparseSource::Beam {
                width: self.beam_width(n)?,
            },
            SparseKind::Simulator => SparseSource::Simulator {
                ordering: self.ordering(),
                seed: self.sparse_seed.unwrap_or(0),
            },
        };
        Ok(SparseSpec {
            trees: self.trees()?,
            source,
        })
    }

    /// Checks the memory of the sparse trellis of a problem of `n` points
    /// before anything is built: its trees, and the beam search that makes
    /// them, with `parallel` problems at once.
    fn check_memory(&self, n: usize, parallel: usize, args: &ModelArgs) -> Result<()> {
        let spec = self.spec(n)?;
        trellis::plan::check_bytes(
            &format!(
                "a sparse trellis from --trees {} over {n} points",
                spec.trees
            ),
            sparse_bytes(n, &spec).saturating_mul(parallel as u128),
            memory_limit(args),
        )
        .map_err(anyhow::Error::from)
    }

    /// Checks every jet of a jets file before any work: the memory of the
    /// largest jet's sparse trellis (no-op without `--sparse`).
    pub fn check_jets(&self, file: &JetsFile, args: &ModelArgs) -> Result<()> {
        if self.sparse.is_none() {
            return Ok(());
        }
        if self.sparse == Some(SparseKind::Simulator) && self.beam_width.is_some() {
            bail!("--beam-width applies to --sparse beam");
        }
        let n = file.jets.iter().map(|j| j.len()).max().unwrap_or(0);
        self.check_memory(n, rayon::current_num_threads(), args)
    }

    /// The beam width of `--sparse beam` on `n` points (before raising it to K).
    fn beam_width(&self, n: usize) -> Result<usize> {
        match self.beam_width {
            Some(0) => bail!("--beam-width must be at least 1"),
            Some(w) => Ok(w),
            None => Ok(trellis::baselines::compact_beam_width(n)),
        }
    }

    fn ordering(&self) -> LeafOrdering {
        match self.ordering.unwrap_or(OrderingKind::Momentum) {
            OrderingKind::Momentum => LeafOrdering::Momentum,
            OrderingKind::Random => LeafOrdering::Random(self.sparse_seed.unwrap_or(0)),
            OrderingKind::Given => LeafOrdering::Given,
        }
    }

    /// The inference of a jet's model on its sparse trellis (jet `index` of
    /// the file seeds the simulator).
    pub(crate) fn jet(&self, jet: &Jet, args: &ModelArgs, index: usize) -> Result<Posterior> {
        let spec = self.spec(jet.len())?;
        Ok(trellis::engines::sparse_jet(
            jet,
            variant(args),
            &spec,
            index,
        )?)
    }

    /// Checks the flags and the size of a weight matrix's sparse trellis
    /// before anything is built.
    pub fn check_weights(&self, args: &ModelArgs, n: usize) -> Result<()> {
        if self.sparse == Some(SparseKind::Simulator) {
            bail!(
                "--sparse simulator needs jets (--jets); use --sparse beam for weights and points"
            );
        }
        if self.ordering.is_some() {
            bail!("--ordering applies to --sparse simulator");
        }
        self.check_memory(n, 1, args)
    }

    /// The inference of the model at `beta` on the sparse trellis of a weight
    /// matrix (beam search; under `triplets`, see `trellis::engines`).
    pub(crate) fn weights(
        &self,
        args: &ModelArgs,
        weights: &crate::input::Pairwise,
        beta: f64,
        triplets: &[Triplet],
    ) -> Result<Posterior> {
        let n = weights.n();
        self.check_weights(args, n)?;
        let (k, width) = (self.trees()?, self.beam_width(n)?);
        Ok(trellis::engines::sparse_pairwise(
            args.model,
            weights.view(),
            beta,
            triplets,
            k,
            width,
        )?)
    }
}
