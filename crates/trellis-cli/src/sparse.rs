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

use clap::{Args, ValueEnum};
use trellis::ginkgo::LeafOrdering;
use trellis::job::{SparseFlags, SparseKind};

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
#[derive(Args, Debug, Default)]
pub struct SparseArgs {
    /// Use a sparse trellis built from a sample of trees instead of the full trellis
    /// (approximate; for problems too large for the full one).
    #[arg(long, value_parser = crate::input::choice::<SparseKind>())]
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
    /// The library's description of the sparse trellis (`None`: the dense one).
    pub fn flags(&self) -> Option<SparseFlags> {
        let kind = self.sparse?;
        let ordering = self.ordering.map(|o| match o {
            OrderingKind::Momentum => LeafOrdering::Momentum,
            OrderingKind::Random => LeafOrdering::Random(self.sparse_seed.unwrap_or(0)),
            OrderingKind::Given => LeafOrdering::Given,
        });
        Some(SparseFlags {
            kind,
            trees: self.trees,
            ordering,
            seed: self.sparse_seed,
            beam_width: self.beam_width,
        })
    }
}
