//! Trees with heights: Newick with branch lengths (and support values) and
//! SciPy linkage matrices, for every command that returns a tree.
//!
//! The heights come from the library's [`Dendrogram`]: by cost (the
//! cumulative cost of each subtree under the model, made monotone), by rank,
//! or for `linkage` its own merge distances.

use anyhow::Result;
use clap::{Args, ValueEnum};
use trellis::{Dendrogram, Newick, Search, Tree};

use crate::input::NamedWeights;
use crate::{ModelName, with_cost_model};

/// How merge heights are chosen.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeightsKind {
    /// The cumulative cost of the subtree under the model (for jets, the Ginkgo
    /// likelihood's split costs), made monotone.
    Cost,
    /// 1 + the larger child's rank (leaves 0).
    Rank,
}

/// The flags of the dendrogram outputs, shared by every command that returns a tree.
#[derive(Args, Debug, Clone, Default)]
pub struct DendrogramArgs {
    /// Print the SciPy linkage matrix of the tree: (N-1) rows [a, b, height, size] as a
    /// JSON array of rows (ids below N are points, row i creates cluster N+i; children
    /// come before their parents, heights are monotone; see --heights). `sample`
    /// prints a JSON array of matrices, one per sample. With --jets: a "linkage" field
    /// on each jet's line.
    #[arg(long, conflicts_with_all = ["json", "newick", "linkage_csv"])]
    pub linkage: bool,

    /// As --linkage, as CSV rows `a,b,height,size` without header (`sample`: one
    /// matrix per sample, separated by an empty line).
    #[arg(long, conflicts_with_all = ["json", "newick"])]
    pub linkage_csv: bool,

    /// Merge heights of --linkage and of the Newick branch lengths: `cost` (the
    /// cumulative cost of each subtree, made monotone) or `rank` [default: cost; for
    /// `linkage`, its merge distances].
    #[arg(long, value_enum)]
    pub heights: Option<HeightsKind>,
}

impl DendrogramArgs {
    /// Whether a linkage matrix is printed (JSON or CSV).
    pub fn any(&self) -> bool {
        self.linkage || self.linkage_csv
    }
}

/// The dendrogram of a tree under a model: heights by cost or by rank.
pub fn of_model<M: Search + ?Sized>(
    model: &M,
    tree: Tree,
    heights: HeightsKind,
) -> Result<Dendrogram> {
    Ok(match heights {
        HeightsKind::Cost => Dendrogram::by_cost(model, tree)?,
        HeightsKind::Rank => Dendrogram::by_rank(tree),
    })
}

/// The dendrogram of a tree over weights under a cost model (costs do not
/// depend on beta).
pub fn of_weights(
    kind: ModelName,
    weights: &crate::input::Pairwise,
    tree: Tree,
    heights: HeightsKind,
) -> Result<Dendrogram> {
    if heights == HeightsKind::Rank {
        return Ok(Dendrogram::by_rank(tree));
    }
    Ok(with_cost_model!(kind, weights, 1.0, |m| of_model(
        &m, tree, heights
    )?))
}

/// The rooted Newick text of a dendrogram with branch lengths, the points'
/// names when they have names, and optionally each internal node's support.
pub fn newick(d: &Dendrogram, names: Option<&[String]>, support: Option<&[f64]>) -> Result<String> {
    Ok(d.to_newick(&Newick {
        names,
        support,
        ..Newick::default()
    })? + "\n")
}

/// [`newick`] over named weights.
pub fn weights_newick(d: &Dendrogram, weights: &NamedWeights) -> Result<String> {
    newick(d, weights.names(), None)
}

/// A linkage matrix as one JSON array of rows, or as CSV rows.
pub fn linkage_text(rows: &[[f64; 4]], csv: bool) -> Result<String> {
    if csv {
        return Ok(csv_rows(rows));
    }
    Ok(serde_json::to_string(rows)? + "\n")
}

/// CSV rows `a,b,height,size` (ids and sizes as integers).
pub fn csv_rows(rows: &[[f64; 4]]) -> String {
    rows.iter()
        .map(|r| format!("{},{},{},{}\n", r[0], r[1], r[2], r[3]))
        .collect()
}
