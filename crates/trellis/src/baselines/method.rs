//! A baseline chosen by a door: greedy, beam search or classic linkage, on
//! any problem (pairwise data under a cost model, or a jet under the
//! Ginkgo likelihood), with its work and memory known before it runs.
//!
//! Greedy and beam search run on the model (pairwise data at β = 1: the
//! choices do not depend on β > 0); linkage runs on the problem's
//! distances: `max(w) - w` for weights, the distances themselves for the
//! linkage potentials, the angles between leaves for jets.

use crate::dendrogram::Dendrogram;
use crate::ginkgo::{Ginkgo, Jet, Variant};
use crate::input::{
    Load, Naming, Pairwise, Sources, read_pairwise, read_points, similarity_weights,
};
use crate::models::{CostModel, InputKind, Model, ModelName, Search};
use crate::plan::weights_bytes;
use crate::print::Heights;
use crate::report::{TreeJson, WithLinkage};
use crate::{Error, Result};
use crate::{Options, Tree};

use super::{Linkage, beam_search_with, default_beam_width, greedy, linkage, linkage_dendrogram};

/// An agglomerative baseline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Method {
    /// Merge the pair with the best split potential ([`greedy`]).
    Greedy,
    /// Beam search ([`beam_search_with`]) of this width (`None`: the A*
    /// paper's default, [`default_beam_width`]) under a memory limit.
    Beam {
        /// The beam width.
        width: Option<usize>,
        /// Bytes the beams may hold (`None`: the memory available).
        memory_limit: Option<u64>,
    },
    /// Classic linkage on the problem's distances (module docs).
    Linkage(Linkage),
}

/// The problem a baseline runs on.
#[derive(Clone, Copy)]
pub enum Problem<'a> {
    /// Pairwise weights or distances.
    Pairwise(&'a Pairwise),
    /// A jet's leaves.
    Jet(&'a Jet),
}

impl Problem<'_> {
    /// The distances linkage runs on, and the number of points.
    fn distances(&self) -> (Vec<f64>, usize) {
        match self {
            Problem::Pairwise(w) => (w.linkage_distances(), w.n()),
            Problem::Jet(jet) => (jet.angle_distances(), jet.len()),
        }
    }
}

impl Method {
    /// The beam width over `n` points (1 for greedy and linkage).
    pub fn width(&self, n: usize) -> usize {
        match self {
            Method::Beam { width, .. } => width.unwrap_or_else(|| default_beam_width(n)),
            _ => 1,
        }
    }

    /// The work of one search over `n` points, in pair evaluations (a
    /// progress bar's and a scheduler's weight): `O(n³)` per beam.
    pub fn work(&self, n: usize) -> u64 {
        (self.width(n) as u64).saturating_mul((n as u64).pow(3))
    }

    /// The bytes one search over `n` points holds beside its input.
    pub fn memory(&self, n: usize) -> u128 {
        match self {
            Method::Linkage(_) => 8 * (n as u128) * (n as u128),
            _ => crate::plan::beam_bytes(n, self.width(n)),
        }
    }

    /// Checks the bytes of `parallel` searches over `n` points (with
    /// `weights`: and of the `N x N` weights they run on, before they are
    /// built) against `limit`; `what` names the search in the message
    /// (e.g. `greedy hierarchy`).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::TooMuchMemory`](crate::ErrorKind::TooMuchMemory) (see [`crate::plan::check_bytes`]).
    pub fn check_memory(
        &self,
        what: &str,
        (n, parallel): (usize, usize),
        weights: bool,
        limit: Option<u64>,
    ) -> Result<()> {
        let weights = if weights {
            crate::plan::weights_bytes(n)
        } else {
            0
        };
        let needed = self.memory(n).saturating_mul(parallel as u128);
        let what = format!("{what} over {n} points");
        crate::plan::check_bytes(&what, needed.saturating_add(weights), limit)
    }

    /// The tree of the search on `model` of `problem`.
    ///
    /// # Errors
    ///
    /// Those of the search (memory, a model it refuses, bad distances).
    pub fn search<M: Model>(&self, model: &M, problem: Problem<'_>) -> Result<Tree> {
        match *self {
            Method::Greedy => Ok(greedy(model)?.tree),
            Method::Beam { memory_limit, .. } => {
                let options = Options {
                    memory_limit,
                    ..Options::default()
                };
                let width = self.width(model.num_points());
                Ok(beam_search_with(model, width, &options)?
                    .swap_remove(0)
                    .tree)
            }
            Method::Linkage(method) => {
                let (d, n) = problem.distances();
                linkage(&d, n, method)
            }
        }
    }

    /// The tree with merge heights: `heights`, or by default by cost (the
    /// merge distances for linkage).
    ///
    /// # Errors
    ///
    /// A tree that does not fit the model.
    pub fn dendrogram<M: Search>(
        &self,
        model: &M,
        problem: Problem<'_>,
        tree: Tree,
        heights: Option<Heights>,
    ) -> Result<Dendrogram> {
        match (self, heights) {
            (Method::Linkage(method), None) => {
                let (d, n) = problem.distances();
                linkage_dendrogram(&d, n, *method)
            }
            (_, h) => crate::print::dendrogram(model, tree, h.unwrap_or(Heights::Cost)),
        }
    }

    /// The tree over pairwise data of the cost model `model` (searched at
    /// β = 1: the choices do not depend on β > 0).
    ///
    /// # Errors
    ///
    /// The model's and the search's.
    pub fn pairwise_tree(&self, model: ModelName, data: &Pairwise) -> Result<Tree> {
        let unit = CostModel::build(model, data.view(), 1.0)?;
        crate::with_cost_model!(unit, |m| self.search(&m, Problem::Pairwise(data)))
    }

    /// A jet's tree scored under the Ginkgo likelihood `variant`, with its
    /// linkage matrix when `linkage` is `Some(heights)`.
    ///
    /// # Errors
    ///
    /// The search's.
    pub fn jet_tree(
        &self,
        jet: &Jet,
        variant: Variant,
        linkage: Option<Option<Heights>>,
    ) -> Result<WithLinkage<TreeJson>> {
        let model = Ginkgo::new(jet, variant);
        let tree = self.search(&model, Problem::Jet(jet))?;
        let linkage = match linkage {
            Some(heights) => Some(
                self.dendrogram(&model, Problem::Jet(jet), tree.clone(), heights)?
                    .linkage()?,
            ),
            None => None,
        };
        Ok(WithLinkage {
            result: TreeJson {
                n: jet.len(),
                log_potential: crate::tree_log_potential(&model, &tree)?,
                cost: None,
                tree,
            },
            linkage,
        })
    }
}

/// What classic linkage of a points file runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Metric {
    /// The Euclidean distances between the rows, as SciPy's `linkage(points)`.
    #[default]
    Euclidean,
    /// `max(s) - s` for the points' similarity `s` (its kind, γ and
    /// centring from the [`Sources`]).
    Similarity,
}

impl crate::Named for Metric {
    const WHAT: &'static str = "metric";
    const CHOICES: &'static [(&'static str, Metric, &'static str)] = &[
        (
            "euclidean",
            Metric::Euclidean,
            "Euclidean distances between the rows, as SciPy's `linkage` computes from \
             observations",
        ),
        (
            "similarity",
            Metric::Similarity,
            "max(similarity) - similarity, with the points' similarity (its kind and centring)",
        ),
    ];
}

/// A linkage clustering of a door's pairwise input ([`linkage_input`]).
pub struct LinkageRun {
    /// The tree with the method's merge distances as heights (SciPy's).
    pub dendrogram: Dendrogram,
    /// The points' names, when the input has them.
    pub names: Option<Vec<String>>,
    /// The weights a model scores the tree with: those of the weights
    /// file or of the points' similarity; `None` for distances, and for
    /// points when `scored` was false.
    pub weights: Option<Pairwise>,
}

/// Classic linkage `method` on the pairwise input of `sources`: a distances
/// file as given, a points file by `metric`, a weights file as
/// `max(w) - w`. With `scored`, the weights of points are kept to score the
/// tree ([`LinkageRun::weights`]). The memory of the distances, their copy
/// in the search and the weights is checked under `limit` (`None`: the
/// memory available) as soon as the number of points is known, before any
/// is built.
///
/// # Errors
///
/// The reader's; the memory check; weights whose `max(w) - w` overflows.
pub fn linkage_input(
    sources: &Sources<'_>,
    metric: Metric,
    method: Linkage,
    scored: bool,
    limit: Option<u64>,
    naming: Naming,
) -> Result<LinkageRun> {
    let check = |n: usize| -> Result<()> {
        let what = format!("{} linkage over {n} points", crate::Named::name(method));
        let distances = 16 * (n as u128) * (n as u128);
        crate::plan::check_bytes(&what, distances.saturating_add(weights_bytes(n)), limit)
    };
    let load = Load {
        model: ModelName::Hcc,
        beta: 1.0,
        memory_limit: limit,
        dense: None,
        naming,
        alternatives: "",
    };
    let (distances, n, names, weights) = match (sources.distances, sources.points, metric) {
        (Some(_), ..) => {
            let d = read_pairwise(sources, &load, &check, InputKind::Distances)?;
            (d.linkage_distances(), d.n(), d.names, None)
        }
        (None, Some(path), Metric::Euclidean) => {
            let table = read_points(path, sources.names_column, limit, naming)?;
            let m = &table.matrix;
            check(m.rows)?;
            let weights = if scored {
                Some(Pairwise::Weights(similarity_weights(sources, m, naming)?))
            } else {
                None
            };
            let context = || format!("in {} {}", naming.name("points"), path.display());
            let d = super::euclidean_distances(m).map_err(|e| e.context(context()))?;
            (d, m.rows, table.names, weights)
        }
        (None, ..) => {
            let w = read_pairwise(sources, &load, &check, InputKind::Weights)?;
            let d = w.linkage_distances();
            if d.iter().any(|x| x.is_infinite()) {
                return Err(Error::input(format!(
                    "the distances max(w) - w overflow: the weights span more than the float \
                     range (up to {}); divide them by at least 2",
                    crate::report::number(f64::MAX)
                )));
            }
            (d, w.n(), w.names, Some(w.data))
        }
    };
    let dendrogram = linkage_dendrogram(&distances, n, method)?;
    Ok(LinkageRun {
        dendrogram,
        names,
        weights,
    })
}
