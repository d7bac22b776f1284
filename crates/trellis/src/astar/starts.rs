//! The initial trees of approximate A* (the trees whose clusters seed its
//! sparse trellis): classic linkages of the problem's distances, greedy
//! agglomeration and beam search by the model's own split score. Every door
//! takes its defaults from [`default_starts`]: for pairwise data the three
//! linkage trees (greedy and beam search start poorly on hcc, whose myopic
//! split cost is 0 for negative weights), plus beam search when a beam width
//! is asked; for jets, beam search and greedy.
//!
//! Cost: a linkage `O(n²)` memory and `O(n² log n)` time; greedy `O(n³)`;
//! beam search `O(width · n³)`.

use crate::Tree;
use crate::baselines::{self, Linkage};
use crate::error::{Error, Result};
use crate::models::Model;

/// One kind of initial tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// Average linkage on the problem's distances.
    Average,
    /// Complete linkage on the same distances.
    Complete,
    /// Ward linkage on the same distances.
    Ward,
    /// Greedy agglomeration by the model's split score.
    Greedy,
    /// The final beams of beam search by the model's split score.
    Beam,
}

impl crate::Named for Start {
    const WHAT: &'static str = "initial tree";
    const CHOICES: &'static [(&'static str, Start, &'static str)] = &[
        (
            "average",
            Start::Average,
            "Average linkage on d = max(w) - w (the paper's greedy baseline for weights)",
        ),
        (
            "complete",
            Start::Complete,
            "Complete linkage on the same distances",
        ),
        ("ward", Start::Ward, "Ward linkage on the same distances"),
        (
            "greedy",
            Start::Greedy,
            "Greedy agglomeration by the model's own split score",
        ),
        (
            "beam",
            Start::Beam,
            "The final beams of beam search by the model's score",
        ),
    ];
}

impl Start {
    /// Whether this start is a linkage of distances (pairwise data only).
    pub fn is_linkage(self) -> bool {
        matches!(self, Start::Average | Start::Complete | Start::Ward)
    }
}

/// The default starts: for jets beam search and greedy; for pairwise data
/// the average, complete and Ward linkages, and beam search as well when a
/// beam width was asked.
pub fn default_starts(jets: bool, beam_width_asked: bool) -> Vec<Start> {
    if jets {
        vec![Start::Beam, Start::Greedy]
    } else if beam_width_asked {
        vec![Start::Average, Start::Complete, Start::Ward, Start::Beam]
    } else {
        vec![Start::Average, Start::Complete, Start::Ward]
    }
}

/// The trees of `starts`, in order, for `model` (rank merges at β = 1 for a
/// cost model: the choices do not depend on β > 0). `distances` are the
/// condensed distances the linkages run on (see
/// [`PairwiseData::linkage_distances`](crate::models::PairwiseData::linkage_distances));
/// beam search keeps all its final beams, of width `beam_width`.
///
/// # Errors
///
/// A linkage start without distances, and those of the searches.
pub fn start_trees<M: Model + ?Sized>(
    model: &M,
    distances: Option<&[f64]>,
    starts: &[Start],
    beam_width: usize,
) -> Result<Vec<Tree>> {
    let n = model.num_points();
    let mut trees = Vec::new();
    for &start in starts {
        match start {
            Start::Beam => trees.extend(
                baselines::beam_search(model, beam_width)?
                    .into_iter()
                    .map(|a| a.tree),
            ),
            Start::Greedy => trees.push(baselines::greedy(model)?.tree),
            Start::Average | Start::Complete | Start::Ward => {
                let d = distances.ok_or_else(|| {
                    Error::input(format!(
                        "the {start:?} linkage start needs pairwise distances; take beam or greedy"
                    ))
                })?;
                let linkage = match start {
                    Start::Average => Linkage::Average,
                    Start::Complete => Linkage::Complete,
                    _ => Linkage::Ward,
                };
                trees.push(baselines::linkage(d, n, linkage)?);
            }
        }
    }
    Ok(trees)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::{CostModel, ModelName, PairwiseData};
    use crate::{Distances, Matrix};

    #[test]
    fn starts_are_the_searches_trees_in_order() {
        let rows: Vec<Vec<f64>> = (0..5)
            .map(|i| {
                (0..5)
                    .map(|j| {
                        (i as f64 - j as f64).abs() + ((i + j) % 2) as f64 * (i != j) as u8 as f64
                    })
                    .collect()
            })
            .collect();
        let d = Distances::from_matrix(&Matrix::from_rows(rows).unwrap()).unwrap();
        let data = PairwiseData::Distances(&d);
        let cm = CostModel::build(ModelName::LinkageAverage, data, 1.0).unwrap();
        let dist = data.linkage_distances();
        let starts = default_starts(false, true);
        assert_eq!(starts.len(), 4);
        let trees =
            crate::with_cost_model!(cm, |m| start_trees(&m, Some(&dist), &starts, 3)).unwrap();
        assert_eq!(
            trees[0],
            baselines::linkage(&dist, 5, Linkage::Average).unwrap()
        );
        assert_eq!(
            trees[2],
            baselines::linkage(&dist, 5, Linkage::Ward).unwrap()
        );
        // Beam search keeps its final beams (at most the width).
        assert!((4..=6).contains(&trees.len()));
        let cm = CostModel::build(ModelName::LinkageAverage, data, 1.0).unwrap();
        let e =
            crate::with_cost_model!(cm, |m| start_trees(&m, None, &[Start::Ward], 3)).unwrap_err();
        assert!(matches!(e.kind(), crate::ErrorKind::Input { .. }));
        assert_eq!(
            default_starts(true, false),
            vec![Start::Beam, Start::Greedy]
        );
    }
}
