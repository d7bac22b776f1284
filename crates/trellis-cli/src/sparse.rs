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
use trellis::constraints::Constrained;
use trellis::ddt::Triplet;
use trellis::ginkgo::JetsFile;
use trellis::ginkgo::{Ginkgo, Jet, LeafOrdering, SparseJet, beam_trees, simulator_trees};
use trellis::sparse::{MAX_SPARSE_POINTS, SparseTrellis};
use trellis::{Set, SetRepr, Tree, WideSet};

use crate::input::memory_limit;
use crate::input::variant;
use crate::{ModelArgs, with_cost_model};
use trellis::posterior::Posterior;

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

    /// Checks the memory of the sparse trellis of a problem of `n` points
    /// before anything is built: its trees, and the beam search that makes
    /// them (width `max(K, --beam-width)`, see `beam_trees`), with
    /// `parallel` problems at once.
    fn check_memory(&self, n: usize, parallel: usize, args: &ModelArgs) -> Result<()> {
        let k = self.trees()?;
        let mut needed = trellis::plan::tree_bytes(n).saturating_mul(2 * k as u128);
        if self.sparse == Some(SparseKind::Beam) {
            let width = k.max(self.beam_width(n)?);
            needed = needed.saturating_add(trellis::plan::beam_bytes(n, width));
        }
        trellis::plan::check_bytes(
            &format!("a sparse trellis from --trees {k} over {n} points"),
            needed.saturating_mul(parallel as u128),
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

    /// The sparse trellis of one jet, with clusters stored as `S`.
    fn sparse_jet<S: SetRepr>(
        &self,
        jet: &Jet,
        args: &ModelArgs,
        index: usize,
    ) -> Result<SparseJet<S>> {
        let v = variant(args);
        let k = self.trees()?;
        match self.sparse.expect("--sparse") {
            SparseKind::Beam => {
                let width = self.beam_width(jet.len())?;
                let trees = beam_trees(&Ginkgo::new(jet, v), k, Some(width))?;
                Ok(SparseJet::new(jet, v, &trees, LeafOrdering::Given)?)
            }
            SparseKind::Simulator => {
                let seed = trellis::random::stream_seed(self.sparse_seed.unwrap_or(0), index);
                let trees = simulator_trees(jet, k, self.ordering(), seed)?;
                Ok(SparseJet::new(jet, v, &trees, self.ordering())?)
            }
        }
    }

    /// The inference of a jet's model on its sparse trellis (clusters as
    /// wide sets beyond 128 leaves).
    pub(crate) fn jet(&self, jet: &Jet, args: &ModelArgs, index: usize) -> Result<Posterior> {
        fn infer<S: SetRepr + 'static>(sj: SparseJet<S>) -> Result<Posterior> {
            Ok(Posterior::sparse(sj.trellis, &sj.model, Some(sj.order))?)
        }
        if jet.len() <= MAX_SPARSE_POINTS {
            infer(self.sparse_jet::<Set>(jet, args, index)?)
        } else {
            infer(self.sparse_jet::<WideSet>(jet, args, index)?)
        }
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
    /// matrix (beam search only).
    ///
    /// With `triplets`, beam search and inference run on the model restricted
    /// to the trees that satisfy them: the beams that break one are dropped
    /// and the greedy tree under the triplets is added, so the sparse
    /// trellis holds at least one tree that satisfies them.
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
        let trees = with_cost_model!(args.model, weights, 1.0, |m| {
            if triplets.is_empty() {
                beam_trees(&m, k, Some(width))?
            } else {
                let c = Constrained::new(m, triplets.to_vec())?;
                c.satisfying_starts(beam_trees(&c, k, Some(width))?)?
            }
        });
        if n <= MAX_SPARSE_POINTS {
            self.infer::<Set>(args, weights, beta, &trees, triplets)
        } else {
            self.infer::<WideSet>(args, weights, beta, &trees, triplets)
        }
    }

    /// The sparse trellis of `trees` with clusters stored as `S`, and the
    /// model's inference on it.
    fn infer<S: SetRepr + 'static>(
        &self,
        args: &ModelArgs,
        weights: &crate::input::Pairwise,
        beta: f64,
        trees: &[Tree],
        triplets: &[Triplet],
    ) -> Result<Posterior> {
        let trellis = SparseTrellis::<S>::from_trees_as(weights.n(), trees)?;
        Ok(with_cost_model!(args.model, weights, beta, |m| {
            if triplets.is_empty() {
                Posterior::sparse(trellis, &m, None)?
            } else {
                Posterior::sparse(trellis, &Constrained::new(m, triplets.to_vec())?, None)?
            }
        }))
    }
}
