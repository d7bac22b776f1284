//! The flags of the tree outputs (Newick with branch lengths, SciPy
//! linkage matrices) shared by every command that returns a tree; the
//! writing is the library's (`trellis::print`).

use clap::Args;
use trellis::print::{Format, Heights, TreeFormat};

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
    #[arg(long, value_parser = crate::input::choice::<Heights>())]
    pub heights: Option<Heights>,
}

impl DendrogramArgs {
    /// Whether a linkage matrix is printed (JSON or CSV).
    pub fn any(&self) -> bool {
        self.linkage || self.linkage_csv
    }

    /// The merge heights (default: cost).
    pub fn heights(&self) -> Heights {
        self.heights.unwrap_or(Heights::Cost)
    }

    /// How the result is written: a linkage matrix, Newick with `newick`,
    /// JSON with `json`, or readable text.
    pub fn output(&self, json: bool, newick: bool) -> Format {
        match self.format(newick) {
            Some(f) => Format::Tree(f),
            None if json => Format::Json,
            None => Format::Text,
        }
    }

    /// How the tree is written: a linkage matrix, Newick with `newick`, or
    /// `None` for the command's JSON or readable output.
    pub fn format(&self, newick: bool) -> Option<TreeFormat> {
        match (self.linkage, self.linkage_csv, newick) {
            (true, _, _) => Some(TreeFormat::Linkage),
            (_, true, _) => Some(TreeFormat::LinkageCsv),
            (_, _, true) => Some(TreeFormat::Newick),
            _ => None,
        }
    }
}
