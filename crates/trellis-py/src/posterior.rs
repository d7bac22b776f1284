//! The exact posteriors: `exact_hierarchy` (the hierarchical trellis) and
//! `exact_partition` (the flat trellis), with their result classes.

use std::sync::{Arc, OnceLock};

use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use trellis::flat::{FlatMarginals, FlatTrellis};
use trellis::{
    CorrelationClustering, Dasgupta, Dendrogram, Hcc, Marginals, Mask, Search, Trellis, Weights,
};

use crate::errors::{input, to_py};
use crate::tree::PyTree;

/// The models of hierarchies over weights.
pub enum HierModel {
    Hcc(Hcc),
    Dasgupta(Dasgupta),
}

impl HierModel {
    /// `model` ("hcc" or "dasgupta") at `beta` over `w`.
    pub fn new(model: &str, w: &Weights, beta: f64) -> PyResult<HierModel> {
        match model {
            "hcc" => Hcc::new(w, beta).map(HierModel::Hcc).map_err(to_py),
            "dasgupta" => Dasgupta::new(w, beta)
                .map(HierModel::Dasgupta)
                .map_err(to_py),
            other => Err(input(format!(
                "model must be \"hcc\" or \"dasgupta\", not {other:?}"
            ))),
        }
    }
}

/// Runs `$body` with `$m` bound to the concrete model of a [`HierModel`].
macro_rules! with_model {
    ($model:expr, |$m:ident| $body:expr) => {
        match $model {
            $crate::posterior::HierModel::Hcc($m) => $body,
            $crate::posterior::HierModel::Dasgupta($m) => $body,
        }
    };
}
pub(crate) use with_model;

/// A tree from a model: names and cumulative-cost heights.
pub fn model_tree<M: Search + ?Sized>(
    model: &M,
    tree: trellis::Tree,
    names: &Option<Arc<Vec<String>>>,
) -> PyResult<PyTree> {
    let heights = Dendrogram::by_cost(model, tree.clone())
        .ok()
        .map(|d| d.heights().to_vec());
    Ok(PyTree::new(tree, names.clone(), heights))
}

enum Hier {
    Hcc(Trellis<Hcc>, OnceLock<Marginals<Hcc>>),
    Dasgupta(Trellis<Dasgupta>, OnceLock<Marginals<Dasgupta>>),
}

macro_rules! with_trellis {
    ($h:expr, |$t:ident, $marg:ident| $body:expr) => {
        match $h {
            Hier::Hcc($t, $marg) => $body,
            Hier::Dasgupta($t, $marg) => $body,
        }
    };
}

/// The exact posterior over every binary hierarchy of the points, from
/// ``exact_hierarchy``: ``log_z``, the MAP tree, the marginal probability of
/// every cluster and of any sub-hierarchy, and exact samples.
#[pyclass(module = "trellis", frozen)]
pub struct HierarchyPosterior {
    inner: Hier,
    names: Option<Arc<Vec<String>>>,
    n_jobs: Option<i64>,
    max_memory: Option<f64>,
}

/// A list of point indices (or names, when the points have names) as a mask.
fn members_mask(
    members: &Bound<'_, PyAny>,
    n: usize,
    names: &Option<Arc<Vec<String>>>,
) -> PyResult<Mask> {
    let mut mask: Mask = 0;
    for item in members.try_iter()? {
        let item = item?;
        let i: usize = if let Ok(i) = item.extract::<i64>() {
            if i < 0 || i as usize >= n {
                return Err(input(format!("point {i} is not among the {n} points")));
            }
            i as usize
        } else if let Ok(s) = item.extract::<String>() {
            let names = names.as_ref().ok_or_else(|| {
                input(format!("the points have no names, so {s:?} names no point"))
            })?;
            names
                .iter()
                .position(|x| *x == s)
                .ok_or_else(|| input(format!("no point is called {s:?}")))?
        } else {
            return Err(input("members are point indices or names"));
        };
        if mask & (1 << i) != 0 {
            return Err(input(format!("point {i} is listed twice")));
        }
        mask |= 1 << i;
    }
    if mask == 0 {
        return Err(input("a cluster needs at least one point"));
    }
    Ok(mask)
}

fn mask_tuple<'py>(py: Python<'py>, mask: Mask) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, trellis::members(mask).collect::<Vec<usize>>())
}

/// An exact count as a Python int.
fn big_int<'py>(py: Python<'py>, x: num_bigint::BigUint) -> PyResult<Bound<'py, PyAny>> {
    py.get_type::<pyo3::types::PyInt>().call1((x.to_string(),))
}

/// Checks that `k` trees or partitions of `n` points fit in memory.
fn check_samples(k: usize, n: usize) -> PyResult<()> {
    let bytes = (k as u128) * (n as u128 + 1) * 64;
    let available = trellis::available_memory().unwrap_or(u64::MAX) as u128;
    if bytes > available {
        return Err(crate::errors::TooLargeError::new_err(format!(
            "{k} samples of {n} points would need about {:.1} GiB, but {:.1} GiB is available",
            bytes as f64 / (1u64 << 30) as f64,
            available as f64 / (1u64 << 30) as f64
        )));
    }
    Ok(())
}

/// The marginals of `t`, computed on first use (one outside pass, with the
/// interpreter released and Ctrl-C checked).
fn marginals_of<'a, M: trellis::Model + Send + Sync>(
    py: Python<'_>,
    t: &Trellis<M>,
    cell: &'a OnceLock<Marginals<M>>,
    n_jobs: Option<i64>,
    max_memory: Option<f64>,
) -> PyResult<&'a Marginals<M>>
where
    M::Summary: Send + Sync,
{
    if cell.get().is_none() {
        let m = crate::run(py, n_jobs, max_memory, |o| t.marginals_with(o))?;
        let _ = cell.set(m);
    }
    Ok(cell.get().expect("set above"))
}

impl HierarchyPosterior {
    /// The marginals (computed on first use, one outside pass).
    fn with_marginals<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&dyn Fn(Mask) -> f64) -> R,
    ) -> PyResult<R> {
        with_trellis!(&self.inner, |t, cell| {
            let m = marginals_of(py, t, cell, self.n_jobs, self.max_memory)?;
            Ok(f(&|s| m.p(s)))
        })
    }

    /// The posterior marginal of each cluster (sorted point lists).
    pub fn cluster_probabilities(
        &self,
        py: Python<'_>,
        clusters: &[Vec<usize>],
    ) -> PyResult<Vec<f64>> {
        let masks: Vec<Mask> = clusters
            .iter()
            .map(|c| {
                c.iter()
                    .try_fold(0 as Mask, |m, &i| (i < 32).then(|| m | (1 << i)))
                    .ok_or_else(|| input("a cluster holds a point beyond the posterior's points"))
            })
            .collect::<PyResult<_>>()?;
        self.with_marginals(py, |p| masks.iter().map(|&s| p(s)).collect())
    }
}

#[pymethods]
impl HierarchyPosterior {
    /// Number of points.
    #[getter]
    fn n(&self) -> usize {
        with_trellis!(&self.inner, |t, _m| t.num_points())
    }

    /// ``log Z``: the log of the summed potential of every hierarchy.
    #[getter]
    fn log_z(&self) -> f64 {
        with_trellis!(&self.inner, |t, _m| t.log_z())
    }

    /// The number of binary hierarchies, ``(2n - 3)!!`` (a Python int).
    #[getter]
    fn num_trees<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        big_int(py, with_trellis!(&self.inner, |t, _m| t.num_trees()))
    }

    /// The most probable hierarchy, with names and cumulative-cost heights.
    #[getter]
    fn map_tree(&self) -> PyResult<PyTree> {
        with_trellis!(&self.inner, |t, _m| model_tree(
            t.model(),
            t.map().tree.clone(),
            &self.names
        ))
    }

    /// The cost of the MAP tree (the model's cost, without ``beta``).
    #[getter]
    fn map_cost(&self) -> PyResult<f64> {
        with_trellis!(&self.inner, |t, _m| trellis::tree_cost(
            t.model(),
            &t.map().tree
        )
        .map_err(to_py))
    }

    /// The log-potential of the MAP tree, ``log φ(MAP)``.
    #[getter]
    fn map_log_potential(&self) -> f64 {
        with_trellis!(&self.inner, |t, _m| t.map().log_potential)
    }

    /// Every non-singleton proper cluster with marginal probability ``> 0``
    /// and ``>= min_p``, most probable first: a list of ``(points, p)`` with
    /// ``points`` a sorted tuple of indices.
    #[pyo3(signature = (min_p=0.0))]
    fn cluster_marginals<'py>(
        &self,
        py: Python<'py>,
        min_p: f64,
    ) -> PyResult<Vec<(Bound<'py, PyTuple>, f64)>> {
        if min_p.is_nan() {
            return Err(input("min_p must be a number"));
        }
        with_trellis!(&self.inner, |t, cell| {
            let m = marginals_of(py, t, cell, self.n_jobs, self.max_memory)?;
            m.clusters(min_p)
                .into_iter()
                .map(|(s, p)| Ok((mask_tuple(py, s)?, p)))
                .collect()
        })
    }

    /// The probability that ``members`` (point indices, or names) is a
    /// cluster of the hierarchy.
    fn marginal(&self, py: Python<'_>, members: &Bound<'_, PyAny>) -> PyResult<f64> {
        let mask = members_mask(members, self.n(), &self.names)?;
        self.with_marginals(py, |p| p(mask))
    }

    /// The probability that the hierarchy contains ``tree`` (a ``Tree`` over
    /// some of the points, indices as in this posterior) as a subtree.
    fn subtree_probability(&self, py: Python<'_>, tree: &Bound<'_, PyAny>) -> PyResult<f64> {
        let tree: trellis::Tree = match tree.cast::<PyTree>() {
            Ok(t) => t.get().tree.clone(),
            Err(_) => {
                let text: String = py
                    .import("json")?
                    .call_method1("dumps", (tree,))?
                    .extract()?;
                trellis::Tree::from_json_str(&text).map_err(to_py)?
            }
        };
        with_trellis!(&self.inner, |t, cell| {
            marginals_of(py, t, cell, self.n_jobs, self.max_memory)?
                .subtree(&tree)
                .map_err(to_py)
        })
    }

    /// ``k`` exact samples from the posterior (``Tree`` objects with names
    /// and cost heights); the same seed gives the same trees.
    #[pyo3(signature = (k, seed=0))]
    fn sample(&self, py: Python<'_>, k: usize, seed: u64) -> PyResult<Vec<PyTree>> {
        check_samples(k, self.n())?;
        with_trellis!(&self.inner, |t, _m| {
            let trees = crate::run(py, self.n_jobs, self.max_memory, |_| Ok(t.samples(k, seed)))?;
            trees
                .into_iter()
                .map(|tree| model_tree(t.model(), tree, &self.names))
                .collect()
        })
    }

    fn __repr__(&self) -> String {
        format!("HierarchyPosterior(n={}, log_z={})", self.n(), self.log_z())
    }
}

/// The exact posterior over every hierarchy: the hierarchical trellis
/// (``O(3^n)`` time, ``O(2^n)`` memory; at most 30 points and the memory
/// available).
#[pyfunction]
#[pyo3(signature = (weights, model="hcc", beta=1.0, names=None, max_memory=None, n_jobs=None))]
fn exact_hierarchy(
    py: Python<'_>,
    weights: PyReadonlyArray2<'_, f64>,
    model: &str,
    beta: f64,
    names: Option<Vec<String>>,
    max_memory: Option<f64>,
    n_jobs: Option<i64>,
) -> PyResult<HierarchyPosterior> {
    let w = crate::weights(&weights)?;
    let names = crate::check_names(names, w.n())?.map(Arc::new);
    let inner = match HierModel::new(model, &w, beta)? {
        HierModel::Hcc(m) => Hier::Hcc(
            crate::run(py, n_jobs, max_memory, |o| Trellis::with_options(m, o))?,
            OnceLock::new(),
        ),
        HierModel::Dasgupta(m) => Hier::Dasgupta(
            crate::run(py, n_jobs, max_memory, |o| Trellis::with_options(m, o))?,
            OnceLock::new(),
        ),
    };
    Ok(HierarchyPosterior {
        inner,
        names,
        n_jobs,
        max_memory,
    })
}

/// The exact posterior over every flat clustering (partition) of the
/// points, from ``exact_partition``.
#[pyclass(module = "trellis", frozen)]
pub struct PartitionPosterior {
    trellis: FlatTrellis<CorrelationClustering>,
    marginals: OnceLock<FlatMarginals>,
    n_jobs: Option<i64>,
}

/// Labels `0..k` of a partition, clusters numbered in the given order.
fn labels(n: usize, clusters: &[Vec<usize>]) -> Vec<i64> {
    let mut out = vec![0i64; n];
    for (k, c) in clusters.iter().enumerate() {
        for &i in c {
            out[i] = k as i64;
        }
    }
    out
}

impl PartitionPosterior {
    fn marginals(&self, py: Python<'_>) -> PyResult<&FlatMarginals> {
        if self.marginals.get().is_none() {
            let m = crate::run(py, self.n_jobs, None, |_| Ok(self.trellis.marginals()))?;
            let _ = self.marginals.set(m);
        }
        Ok(self.marginals.get().expect("set above"))
    }
}

#[pymethods]
impl PartitionPosterior {
    /// Number of points.
    #[getter]
    fn n(&self) -> usize {
        self.trellis.num_points()
    }

    /// ``log Z``: the log of the summed energy of every partition.
    #[getter]
    fn log_z(&self) -> f64 {
        self.trellis.log_z()
    }

    /// The number of partitions (the Bell number ``B(n)``, a Python int).
    #[getter]
    fn num_partitions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        big_int(py, self.trellis.num_partitions())
    }

    /// The MAP partition as labels ``0..k`` (clusters numbered by their
    /// smallest point).
    #[getter]
    fn map_labels<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        labels(self.n(), &self.trellis.map().clusters).into_pyarray(py)
    }

    /// The log-energy of the MAP partition.
    #[getter]
    fn map_log_energy(&self) -> f64 {
        self.trellis.map().log_energy
    }

    /// Every cluster (singletons included) with marginal probability ``> 0``
    /// and ``>= min_p``, most probable first: ``(points, p)`` pairs.
    #[pyo3(signature = (min_p=0.0))]
    fn cluster_marginals<'py>(
        &self,
        py: Python<'py>,
        min_p: f64,
    ) -> PyResult<Vec<(Bound<'py, PyTuple>, f64)>> {
        if min_p.is_nan() {
            return Err(input("min_p must be a number"));
        }
        self.marginals(py)?
            .clusters(min_p)
            .into_iter()
            .map(|(s, p)| Ok((mask_tuple(py, s)?, p)))
            .collect()
    }

    /// The ``(n, n)`` matrix of the probabilities that two points share a cluster.
    fn pairwise_marginals<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let rows = self.marginals(py)?.pairwise_matrix();
        PyArray2::from_vec2(py, &rows).map_err(|e| input(e.to_string()))
    }

    /// ``k`` exact samples, each an array of labels (as ``map_labels``);
    /// the same seed gives the same samples.
    #[pyo3(signature = (k, seed=0))]
    fn sample<'py>(
        &self,
        py: Python<'py>,
        k: usize,
        seed: u64,
    ) -> PyResult<Vec<Bound<'py, PyArray1<i64>>>> {
        check_samples(k, self.n())?;
        let n = self.n();
        let parts = crate::run(py, self.n_jobs, None, |_| Ok(self.trellis.samples(k, seed)))?;
        Ok(parts
            .iter()
            .map(|p| labels(n, p).into_pyarray(py))
            .collect())
    }

    fn __repr__(&self) -> String {
        format!("PartitionPosterior(n={}, log_z={})", self.n(), self.log_z())
    }
}

/// The exact posterior over every partition: the flat trellis with
/// correlation clustering (``O(3^n)`` time, ``O(2^n)`` memory).
#[pyfunction]
#[pyo3(signature = (weights, model="cc", beta=1.0, names=None, max_memory=None, n_jobs=None))]
fn exact_partition(
    py: Python<'_>,
    weights: PyReadonlyArray2<'_, f64>,
    model: &str,
    beta: f64,
    names: Option<Vec<String>>,
    max_memory: Option<f64>,
    n_jobs: Option<i64>,
) -> PyResult<PartitionPosterior> {
    if model != "cc" {
        return Err(input(format!(
            "model must be \"cc\" (correlation clustering), not {model:?}"
        )));
    }
    let w = crate::weights(&weights)?;
    crate::check_names(names, w.n())?;
    let energy = CorrelationClustering::new(&w, beta).map_err(to_py)?;
    let trellis = crate::run(py, n_jobs, max_memory, |o| {
        FlatTrellis::with_options(energy, o)
    })?;
    Ok(PartitionPosterior {
        trellis,
        marginals: OnceLock::new(),
        n_jobs,
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<HierarchyPosterior>()?;
    m.add_class::<PartitionPosterior>()?;
    m.add_function(wrap_pyfunction!(exact_hierarchy, m)?)?;
    m.add_function(wrap_pyfunction!(exact_partition, m)?)?;
    Ok(())
}
