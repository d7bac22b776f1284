//! Similarities, A* search, the greedy and beam baselines and classic
//! linkage clustering.

use std::sync::Arc;

use numpy::{PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use trellis::astar::{self as search, ApproxOptions, AstarJob};
use trellis::baselines::{self, Linkage};
use trellis::input::{Naming, SimilarityKind};
use trellis::{Named, Similarity, Weights};

use crate::errors::{input, to_py};
use crate::posterior::{cost_model, model_tree};
use crate::tree::PyTree;
use trellis::with_cost_model;

/// Pairwise similarities of the rows of ``points`` (one point per row):
/// ``"cosine"``, ``"rbf"`` (``exp(-gamma |x - y|^2)``, ``gamma`` defaults
/// to ``1 / n_features``), ``"dot"`` or ``"expneg"`` (``exp(-|x - y|)``).
/// With ``center``, the mean off-diagonal similarity is subtracted (so that
/// correlation clustering sees attraction and repulsion). Returns an
/// ``(n, n)`` float64 array.
#[pyfunction]
#[pyo3(signature = (points, kind="cosine", gamma=None, center=false))]
fn similarity<'py>(
    py: Python<'py>,
    points: PyReadonlyArray2<'_, f64>,
    kind: &str,
    gamma: Option<f64>,
    center: bool,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let m = crate::matrix(&points)?;
    let w = similarity_weights(&m, kind, gamma, center)?;
    let rows: Vec<Vec<f64>> = (0..w.n()).map(|i| w.row(i).to_vec()).collect();
    PyArray2::from_vec2(py, &rows).map_err(|e| input(e.to_string()))
}

/// The weights of `similarity`.
pub fn similarity_weights(
    m: &trellis::Matrix,
    kind: &str,
    gamma: Option<f64>,
    center: bool,
) -> PyResult<Weights> {
    let kind = SimilarityKind::parse(kind).map_err(to_py)?;
    let sim = match kind {
        SimilarityKind::Cosine => Similarity::Cosine,
        SimilarityKind::Rbf => Similarity::Rbf {
            gamma: gamma.unwrap_or(1.0 / m.cols.max(1) as f64),
        },
        SimilarityKind::Dot => Similarity::Dot,
        SimilarityKind::Expneg => Similarity::ExpNeg,
    };
    if gamma.is_some() && kind != SimilarityKind::Rbf {
        return Err(input("gamma only applies to kind=\"rbf\""));
    }
    Weights::from_points(m, sim, center).map_err(to_py)
}

/// The result of ``astar``: the best tree found, its cost, whether it is
/// proven optimal, and the search's size.
#[pyclass(module = "trellis", frozen, get_all)]
pub struct AstarResult {
    /// The best hierarchy found (names and cost heights).
    tree: Py<PyTree>,
    /// Its cost (without ``beta``).
    cost: f64,
    /// True when the search proved the tree optimal.
    exact: bool,
    /// Vertices explored.
    explored: u64,
    /// Its log-potential ``-beta * cost``.
    log_potential: f64,
}

#[pymethods]
impl AstarResult {
    fn __repr__(&self) -> String {
        format!(
            "AstarResult(cost={}, exact={}, explored={})",
            self.cost, self.exact, self.explored
        )
    }
}

/// The MAP hierarchy by A* search on the trellis.
///
/// ``approx=False``: exact A* (the full trellis, proven optimal when the
/// heuristic is admissible; up to 128 points, memory grows fast beyond ~20).
/// ``approx=True``: approximate A* on a sparse trellis grown from the
/// average, complete and Ward linkage trees (never worse than them; any
/// number of points), with
/// ``max_explored`` vertices (deterministic) and ``time_limit`` seconds as
/// budgets; ``seed`` drives its candidate sampler. With ``triplets``, the
/// best tree among those that satisfy them: the initial trees that break
/// one are dropped and greedy agglomeration under them is added.
#[pyfunction]
#[pyo3(signature = (data, kind="weights", model="hcc", approx=false, seed=0, beta=1.0, names=None, max_explored=None, time_limit=None, max_memory=None, n_jobs=None, triplets=Vec::new()))]
#[allow(clippy::too_many_arguments)]
fn astar(
    py: Python<'_>,
    data: PyReadonlyArray2<'_, f64>,
    kind: &str,
    model: &str,
    approx: bool,
    seed: u64,
    beta: f64,
    names: Option<Vec<String>>,
    max_explored: Option<u64>,
    time_limit: Option<f64>,
    max_memory: Option<f64>,
    n_jobs: Option<i64>,
    triplets: Vec<(usize, usize, usize)>,
) -> PyResult<AstarResult> {
    if max_explored == Some(0) {
        return Err(input("max_explored must be at least 1"));
    }
    let job = AstarJob {
        model: model.parse().map_err(to_py)?,
        heuristic: None,
        approx: approx.then(|| ApproxOptions {
            seed,
            max_explored: max_explored.or(ApproxOptions::default().max_explored),
            ..ApproxOptions::default()
        }),
        init: Vec::new(),
        beam_width: None,
        memory_limit: crate::memory_limit(max_memory)?,
        naming: Naming::Keywords,
    };
    job.check().map_err(to_py)?;
    let time_limit = trellis::job::time_limit(time_limit, Naming::Keywords).map_err(to_py)?;
    let cm = cost_model(&data, kind, model, beta)?;
    let n = cm.data().n();
    job.check_points(n).map_err(to_py)?;
    let names = crate::check_names(names, n)?.map(Arc::new);
    let triplets = crate::posterior::checked_triplets(n, &triplets, names.as_deref())?;
    let request = job.request(n, false);
    let outcome = crate::run(py, n_jobs, max_memory, |o| {
        search::solve(
            &cm,
            &triplets,
            &request,
            &trellis::Options { time_limit, ..*o },
        )
    })?;
    let tree = with_cost_model!(&cm, |m| model_tree(m, outcome.best.tree, &names))?;
    Ok(AstarResult {
        tree: Py::new(py, tree)?,
        cost: outcome.cost,
        exact: outcome.exact,
        explored: outcome.explored,
        log_potential: outcome.best.log_potential,
    })
}

/// Greedy agglomerative search: at each step, the merge with the best
/// split potential. Returns a ``Tree`` (names, cost heights).
#[pyfunction]
#[pyo3(signature = (data, kind="weights", model="hcc", beta=1.0, names=None))]
fn greedy(
    py: Python<'_>,
    data: PyReadonlyArray2<'_, f64>,
    kind: &str,
    model: &str,
    beta: f64,
    names: Option<Vec<String>>,
) -> PyResult<PyTree> {
    let cm = cost_model(&data, kind, model, beta)?;
    let names = crate::check_names(names, cm.data().n())?.map(Arc::new);
    with_cost_model!(&cm, |m| {
        let best = crate::run(py, None, None, |_| baselines::greedy(m))?;
        model_tree(m, best.tree, &names)
    })
}

/// Beam search (the A* paper's baseline): ``width`` partial hierarchies
/// kept per step (default ``n(n - 1)/2``). Returns the best ``Tree``.
#[pyfunction]
#[pyo3(signature = (data, kind="weights", model="hcc", beta=1.0, width=None, names=None))]
#[allow(clippy::too_many_arguments)]
fn beam(
    py: Python<'_>,
    data: PyReadonlyArray2<'_, f64>,
    kind: &str,
    model: &str,
    beta: f64,
    width: Option<usize>,
    names: Option<Vec<String>>,
) -> PyResult<PyTree> {
    let cm = cost_model(&data, kind, model, beta)?;
    let n = cm.data().n();
    let names = crate::check_names(names, n)?.map(Arc::new);
    let width = width.unwrap_or_else(|| baselines::default_beam_width(n));
    if width == 0 {
        return Err(input("width must be at least 1"));
    }
    with_cost_model!(&cm, |m| {
        let trees = crate::run(py, None, None, |_| baselines::beam_search(m, width))?;
        let best = trees
            .into_iter()
            .next()
            .ok_or_else(|| input("beam search found no hierarchy"))?;
        model_tree(m, best.tree, &names)
    })
}

/// Classic linkage clustering, as ``scipy.cluster.hierarchy.linkage``:
/// from ``distances`` (an ``(n, n)`` symmetric matrix), ``condensed`` (the
/// condensed vector SciPy takes) or ``points`` (Euclidean distances between
/// the rows). ``method``: one of SciPy's seven. The tree keeps the merge
/// distances as heights, and ``to_linkage()`` gives SciPy's matrix exactly.
#[pyfunction]
#[pyo3(signature = (points=None, distances=None, method="average", names=None, optimal_ordering=false, condensed=None))]
#[allow(clippy::too_many_arguments)]
fn linkage(
    py: Python<'_>,
    points: Option<PyReadonlyArray2<'_, f64>>,
    distances: Option<PyReadonlyArray2<'_, f64>>,
    method: &str,
    names: Option<Vec<String>>,
    optimal_ordering: bool,
    condensed: Option<PyReadonlyArray1<'_, f64>>,
) -> PyResult<PyTree> {
    let method = Linkage::parse(method).map_err(to_py)?;
    let (d, n) = match (points, distances, condensed) {
        (Some(p), None, None) => {
            let m = crate::matrix(&p)?;
            (baselines::euclidean_distances(&m).map_err(to_py)?, m.rows)
        }
        (None, Some(d), None) => {
            // The library's checks: square, finite, symmetric, >= 0.
            let m = crate::matrix(&d)?;
            let d = trellis::Distances::from_matrix(&m).map_err(to_py)?;
            (d.to_vec(), m.rows)
        }
        (None, None, Some(y)) => {
            let y = y.as_slice().map_err(|e| input(e.to_string()))?;
            let d = trellis::Distances::from_condensed_vector(y).map_err(to_py)?;
            (d.to_vec(), d.n())
        }
        _ => return Err(input("give exactly one of points and distances")),
    };
    let names = crate::check_names(names, n)?.map(Arc::new);
    let (tree, heights, z) = crate::run(py, None, None, |_| {
        let z = baselines::linkage_matrix(&d, n, method, optimal_ordering)?;
        if z.is_empty() {
            return Ok((trellis::Tree::Leaf(0), Vec::new(), z));
        }
        // Optimal ordering orders the leaves: the tree keeps SciPy's order.
        let mut dendrogram = trellis::Dendrogram::from_scipy(z.clone())?;
        if !optimal_ordering {
            dendrogram = dendrogram.canonical();
        }
        let heights = dendrogram.heights().to_vec();
        Ok((dendrogram.into_tree(), heights, z))
    })?;
    Ok(PyTree::new(tree, names, Some(heights)).with_linkage(z))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<AstarResult>()?;
    m.add_function(wrap_pyfunction!(similarity, m)?)?;
    m.add_function(wrap_pyfunction!(astar, m)?)?;
    m.add_function(wrap_pyfunction!(greedy, m)?)?;
    m.add_function(wrap_pyfunction!(beam, m)?)?;
    m.add_function(wrap_pyfunction!(linkage, m)?)?;
    Ok(())
}
