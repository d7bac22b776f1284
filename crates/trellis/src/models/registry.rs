//! The model registry: every built-in model is named and described once, and
//! every door (the `trellis` command, the web app, the Python package) asks
//! this module which models exist, what input each takes, which engines run
//! it, and builds it by name.
//!
//! - [`ModelName`] is the closed list of built-in models, parsed from and
//!   printed as its id (`hcc`, `dasgupta`, `linkage-average`, …).
//! - [`ModelInfo`] ([`ModelName::info`]) says what a model is, whether it
//!   scores hierarchies or partitions, which [`InputKind`]s it takes and which
//!   [`Engine`]s support it.
//! - [`CostModel`] is a hierarchical cost model built by name over pairwise
//!   data ([`PairwiseData`]: weights or distances), one concrete type per
//!   variant. The [`with_cost_model!`](crate::with_cost_model) macro runs a
//!   generic computation on the concrete model inside, so the library's
//!   kernels are monomorphised for each model and the separable fast path
//!   stays available.
//!
//! # Adding a model
//!
//! A new cost model is its own file under `models/` (its [`Summarize`],
//! [`Model`] and [`Search`] implementations and its tests), one entry in
//! [`ModelName`] and [`MODELS`], one variant of [`CostModel`] with its arm in
//! [`CostModel::build`] and in `with_cost_model!`. The doors list, parse and
//! run it from there.
//!
//! ```
//! use trellis::models::{CostModel, Engine, InputKind, ModelName, PairwiseData};
//! use trellis::{Distances, Matrix, Trellis};
//!
//! let name: ModelName = "linkage-average".parse()?;
//! assert!(name.info().takes(InputKind::Distances));
//! assert!(name.info().supports(Engine::AstarExact));
//! let d = Distances::from_matrix(&Matrix::from_rows(vec![
//!     vec![0.0, 1.0, 4.0],
//!     vec![1.0, 0.0, 3.0],
//!     vec![4.0, 3.0, 0.0],
//! ])?)?;
//! let model = CostModel::build(name, PairwiseData::Distances(&d), 1.0)?;
//! let log_z = trellis::with_cost_model!(model, |m| Trellis::new(m)?.log_z());
//! assert!(log_z.is_finite());
//! # Ok::<(), trellis::Error>(())
//! ```

use std::fmt;
use std::str::FromStr;

use crate::base::weights::Weights;
use crate::error::{Error, Result};
use crate::models::linkage::{Distances, LinkageKind, LinkagePotential};
use crate::models::pairwise::{Dasgupta, Hcc};
#[cfg(doc)]
use crate::models::{Model, Search, Summarize};

/// What a model scores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Structure {
    /// Binary hierarchies (the dense and sparse trellises, A*, greedy, beam).
    Hierarchy,
    /// Flat partitions (the flat trellis).
    Partition,
}

/// An input a model can be built from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InputKind {
    /// An `N x N` symmetric matrix of pairwise weights (similarities).
    Weights,
    /// Points, one per row, turned into weights by a similarity, or into
    /// Euclidean distances for the distance models.
    Points,
    /// An `N x N` symmetric matrix of distances `>= 0`.
    Distances,
    /// A jets file (the Ginkgo likelihood).
    Jets,
}

/// An inference engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Engine {
    /// The dense hierarchical trellis (exact; `log Z`, MAP, marginals,
    /// samples).
    Dense,
    /// Sparse hierarchical trellises (exact over a family of clusters).
    Sparse,
    /// Exact A* for the MAP tree (an admissible heuristic).
    AstarExact,
    /// Approximate A* from initial trees (any number of points).
    AstarApprox,
    /// Greedy agglomeration under the model's split cost.
    Greedy,
    /// Beam search under the model's split cost.
    Beam,
    /// The flat trellis (exact over partitions).
    Flat,
}

/// Every built-in model, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ModelName {
    /// Hierarchical correlation clustering over weights of any sign.
    Hcc,
    /// Dasgupta's cost over weights `>= 0`.
    Dasgupta,
    /// The average-linkage potential over distances.
    LinkageAverage,
    /// The complete-linkage potential over distances.
    LinkageComplete,
    /// The single-linkage potential over distances.
    LinkageSingle,
    /// The Ginkgo jet likelihood (current reference form).
    Ginkgo,
    /// The Ginkgo jet likelihood of the trellis paper's tables.
    GinkgoLegacy,
    /// Flat correlation clustering over weights of any sign.
    Cc,
}

/// What the registry knows about a model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelInfo {
    /// The model.
    pub name: ModelName,
    /// Its id, as the doors spell it (`--model ID`, `model="ID"`).
    pub id: &'static str,
    /// One line on what it scores.
    pub help: &'static str,
    /// Hierarchies or partitions.
    pub structure: Structure,
    /// The inputs it is built from.
    pub inputs: &'static [InputKind],
    /// The engines that run it.
    pub engines: &'static [Engine],
    /// Whether an inverse temperature β scales it (the Gibbs models).
    pub beta: bool,
}

impl ModelInfo {
    /// Whether the model is built from `input`.
    pub fn takes(&self, input: InputKind) -> bool {
        self.inputs.contains(&input)
    }

    /// Whether `engine` runs the model.
    pub fn supports(&self, engine: Engine) -> bool {
        self.engines.contains(&engine)
    }
}

/// The engines of the hierarchical cost models: all but the flat trellis.
const HIERARCHY_ENGINES: &[Engine] = &[
    Engine::Dense,
    Engine::Sparse,
    Engine::AstarExact,
    Engine::AstarApprox,
    Engine::Greedy,
    Engine::Beam,
];

/// Every built-in model, in the order the doors list them.
pub const MODELS: [ModelInfo; 8] = [
    ModelInfo {
        name: ModelName::Hcc,
        id: "hcc",
        help: "hierarchical correlation clustering (weights of any sign)",
        structure: Structure::Hierarchy,
        inputs: &[InputKind::Weights, InputKind::Points],
        engines: HIERARCHY_ENGINES,
        beta: true,
    },
    ModelInfo {
        name: ModelName::Dasgupta,
        id: "dasgupta",
        help: "Dasgupta's cost (weights >= 0)",
        structure: Structure::Hierarchy,
        inputs: &[InputKind::Weights, InputKind::Points],
        engines: HIERARCHY_ENGINES,
        beta: true,
    },
    ModelInfo {
        name: ModelName::LinkageAverage,
        id: "linkage-average",
        help: "log psi = -beta * average distance between the children (distances or Euclidean points)",
        structure: Structure::Hierarchy,
        inputs: &[InputKind::Distances, InputKind::Points],
        engines: HIERARCHY_ENGINES,
        beta: true,
    },
    ModelInfo {
        name: ModelName::LinkageComplete,
        id: "linkage-complete",
        help: "log psi = -beta * largest distance between the children",
        structure: Structure::Hierarchy,
        inputs: &[InputKind::Distances, InputKind::Points],
        engines: HIERARCHY_ENGINES,
        beta: true,
    },
    ModelInfo {
        name: ModelName::LinkageSingle,
        id: "linkage-single",
        help: "log psi = -beta * smallest distance between the children",
        structure: Structure::Hierarchy,
        inputs: &[InputKind::Distances, InputKind::Points],
        engines: HIERARCHY_ENGINES,
        beta: true,
    },
    ModelInfo {
        name: ModelName::Ginkgo,
        id: "ginkgo",
        help: "the Ginkgo jet likelihood (current reference form)",
        structure: Structure::Hierarchy,
        inputs: &[InputKind::Jets],
        engines: HIERARCHY_ENGINES,
        beta: false,
    },
    ModelInfo {
        name: ModelName::GinkgoLegacy,
        id: "ginkgo-legacy",
        help: "the Ginkgo jet likelihood of the trellis paper's tables (legacy form)",
        structure: Structure::Hierarchy,
        inputs: &[InputKind::Jets],
        engines: HIERARCHY_ENGINES,
        beta: false,
    },
    ModelInfo {
        name: ModelName::Cc,
        id: "cc",
        help: "flat correlation clustering (weights of any sign)",
        structure: Structure::Partition,
        inputs: &[InputKind::Weights, InputKind::Points],
        engines: &[Engine::Flat],
        beta: true,
    },
];

impl ModelName {
    /// What the registry knows about the model.
    pub fn info(self) -> &'static ModelInfo {
        MODELS
            .iter()
            .find(|m| m.name == self)
            .expect("every model has an entry in MODELS")
    }

    /// The model's id (`hcc`, `linkage-average`, …).
    pub fn id(self) -> &'static str {
        self.info().id
    }

    /// Every model, in the order of [`MODELS`].
    pub fn all() -> impl Iterator<Item = ModelName> {
        MODELS.iter().map(|m| m.name)
    }

    /// The models that score `structure` and are built from `input`.
    pub fn taking(structure: Structure, input: InputKind) -> Vec<ModelName> {
        MODELS
            .iter()
            .filter(|m| m.structure == structure && m.takes(input))
            .map(|m| m.name)
            .collect()
    }

    /// The linkage function of a linkage potential, if the model is one.
    pub fn linkage_kind(self) -> Option<LinkageKind> {
        match self {
            ModelName::LinkageAverage => Some(LinkageKind::Average),
            ModelName::LinkageComplete => Some(LinkageKind::Complete),
            ModelName::LinkageSingle => Some(LinkageKind::Single),
            _ => None,
        }
    }
}

impl fmt::Display for ModelName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl FromStr for ModelName {
    type Err = Error;

    /// Parses a model id (any case); the error lists every id.
    fn from_str(s: &str) -> Result<ModelName> {
        MODELS
            .iter()
            .find(|m| m.id.eq_ignore_ascii_case(s.trim()))
            .map(|m| m.name)
            .ok_or_else(|| {
                let ids: Vec<&str> = MODELS.iter().map(|m| m.id).collect();
                Error::parameter(format!(
                    "unknown model {s:?}: the models are {}",
                    ids.join(", ")
                ))
            })
    }
}

/// The pairwise data a hierarchical cost model is built on.
#[derive(Clone, Copy, Debug)]
pub enum PairwiseData<'a> {
    /// Pairwise weights (similarities).
    Weights(&'a Weights),
    /// Pairwise distances.
    Distances(&'a Distances),
}

impl PairwiseData<'_> {
    /// The number of points.
    pub fn n(&self) -> usize {
        match self {
            PairwiseData::Weights(w) => w.n(),
            PairwiseData::Distances(d) => d.n(),
        }
    }

    /// The distances classic linkage clustering runs on: the distances
    /// themselves, or `max(w) - w` for weights (as
    /// [`distances_from_similarities`](crate::baselines::distances_from_similarities)),
    /// row-major `n x n`.
    pub fn linkage_distances(&self) -> Vec<f64> {
        match self {
            PairwiseData::Weights(w) => crate::baselines::distances_from_similarities(w),
            PairwiseData::Distances(d) => d.to_vec(),
        }
    }

    /// What the data is, for messages.
    pub fn kind(&self) -> InputKind {
        match self {
            PairwiseData::Weights(_) => InputKind::Weights,
            PairwiseData::Distances(_) => InputKind::Distances,
        }
    }
}

/// A hierarchical cost model over pairwise data, built by name
/// ([`CostModel::build`]); run a generic computation on the concrete model
/// with [`with_cost_model!`](crate::with_cost_model).
#[derive(Clone, Debug)]
pub enum CostModel {
    /// Hierarchical correlation clustering.
    Hcc(Hcc),
    /// Dasgupta's cost.
    Dasgupta(Dasgupta),
    /// A linkage potential (average, complete or single).
    Linkage(LinkagePotential),
}

impl CostModel {
    /// The model `name` at inverse temperature `beta` over `data`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Parameter`](crate::ErrorKind::Parameter) when `name` is not a cost model over this
    /// kind of data (weight models take weights, linkage potentials take
    /// distances), and the model's own errors (a bad β, a negative weight
    /// for Dasgupta's cost, values that could overflow).
    pub fn build(name: ModelName, data: PairwiseData<'_>, beta: f64) -> Result<CostModel> {
        match (name, data) {
            (ModelName::Hcc, PairwiseData::Weights(w)) => Hcc::new(w, beta).map(CostModel::Hcc),
            (ModelName::Dasgupta, PairwiseData::Weights(w)) => {
                Dasgupta::new(w, beta).map(CostModel::Dasgupta)
            }
            (_, PairwiseData::Distances(d)) if name.linkage_kind().is_some() => {
                let kind = name.linkage_kind().expect("a linkage model");
                LinkagePotential::new(d, kind, beta).map(CostModel::Linkage)
            }
            _ => Err(Error::parameter(format!(
                "the model {name} is not a cost model over {} (it takes {})",
                match data.kind() {
                    InputKind::Weights => "weights",
                    _ => "distances",
                },
                match name.info().inputs {
                    [InputKind::Jets] => "jets",
                    i if i.contains(&InputKind::Distances) => "distances or points",
                    i if i.contains(&InputKind::Weights) => "weights or points",
                    _ => "other inputs",
                }
            ))),
        }
    }

    /// The data the model was built on.
    pub fn data(&self) -> PairwiseData<'_> {
        match self {
            CostModel::Hcc(m) => PairwiseData::Weights(m.weights()),
            CostModel::Dasgupta(m) => PairwiseData::Weights(m.weights()),
            CostModel::Linkage(m) => PairwiseData::Distances(m.distances()),
        }
    }

    /// The model's name.
    pub fn name(&self) -> ModelName {
        match self {
            CostModel::Hcc(_) => ModelName::Hcc,
            CostModel::Dasgupta(_) => ModelName::Dasgupta,
            CostModel::Linkage(m) => match m.kind() {
                LinkageKind::Average => ModelName::LinkageAverage,
                LinkageKind::Complete => ModelName::LinkageComplete,
                LinkageKind::Single => ModelName::LinkageSingle,
            },
        }
    }
}

/// The inverse temperature of the default recipe ([`recipe_weights`]).
pub const RECIPE_BETA: f64 = 4.0;

/// The default recipe for points that every door uses when it picks the
/// model itself (`trellis demo`, the web app's exact panel): hierarchical
/// correlation clustering at β = [`RECIPE_BETA`] on centred RBF
/// similarities with `γ = 1 / features` (the recipe of the trellis and A*
/// papers: centring gives attraction and repulsion). Returns the weights.
///
/// # Errors
///
/// Those of [`Weights::from_points`].
pub fn recipe_weights(points: &crate::Matrix) -> Result<Weights> {
    let gamma = 1.0 / points.cols.max(1) as f64;
    Weights::from_points(points, crate::Similarity::Rbf { gamma }, true)
}

/// One line naming the default recipe over `features` features.
pub fn recipe_description(features: usize) -> String {
    format!(
        "hierarchical correlation clustering, centred RBF similarities (gamma = 1/{features}), \
         beta = {RECIPE_BETA}"
    )
}

/// Runs an expression on the concrete model inside a
/// [`CostModel`](crate::models::CostModel): `with_cost_model!(model, |m|
/// body)` binds `m` to the [`Hcc`](crate::Hcc),
/// [`Dasgupta`](crate::Dasgupta) or
/// [`LinkagePotential`](crate::LinkagePotential) (by value; match on a
/// reference to bind a reference), so that `body`, generic over
/// [`Search`](crate::Search), is compiled once per model.
#[macro_export]
macro_rules! with_cost_model {
    ($model:expr, |$m:ident| $body:expr) => {
        match $model {
            $crate::models::CostModel::Hcc($m) => $body,
            $crate::models::CostModel::Dasgupta($m) => $body,
            $crate::models::CostModel::Linkage($m) => $body,
        }
    };
}
