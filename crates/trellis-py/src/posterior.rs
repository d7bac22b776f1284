//! The exact posteriors: `exact_hierarchy` (the hierarchical trellis) and
//! `exact_partition` (the flat trellis), with their result classes.

use std::sync::Arc;

use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use trellis::ddt::Triplet;
use trellis::flat::FlatMarginals;
use trellis::models::{CostModel, InputKind, ModelName, PairwiseData, Structure};
use trellis::posterior::{Need, Posterior};
use trellis::{CorrelationClustering, Dendrogram, Distances, Mask, Search};

use crate::errors::{input, to_py};
use crate::tree::PyTree;

/// A hierarchical cost model of the library's registry (`model`, a model id
/// such as ``"hcc"`` or ``"linkage-average"``) at `beta` over a numpy matrix:
/// `kind` says whether it holds weights, distances or points (Euclidean
/// distances between the rows, for the linkage potentials).
pub fn cost_model(
    data: &PyReadonlyArray2<'_, f64>,
    kind: &str,
    model: &str,
    beta: f64,
) -> PyResult<CostModel> {
    let name: ModelName = model.parse().map_err(to_py)?;
    let info = name.info();
    let cost_model = |i: &trellis::models::ModelInfo| {
        i.structure == Structure::Hierarchy && !i.takes(InputKind::Jets)
    };
    if !cost_model(info) {
        let ids: Vec<&str> = ModelName::all()
            .map(ModelName::info)
            .filter(|i| cost_model(i))
            .map(|i| i.id)
            .collect();
        return Err(input(format!(
            "model {model:?} is not a cost model of hierarchies over weights or distances \
             ({})",
            ids.join(", ")
        )));
    }
    let distances = info.takes(InputKind::Distances);
    let built = match (kind, distances) {
        ("weights", false) => {
            let w = crate::weights(data)?;
            CostModel::build(name, PairwiseData::Weights(&w), beta)
        }
        ("distances", true) => {
            let (rows, cols) = data.as_array().dim();
            if rows != cols {
                return Err(input(format!(
                    "distances must be a square (n, n) matrix, not {rows} x {cols}"
                )));
            }
            let d = Distances::from_matrix(&crate::matrix(data)?).map_err(to_py)?;
            CostModel::build(name, PairwiseData::Distances(&d), beta)
        }
        ("points", true) => {
            let d = Distances::from_points(&crate::matrix(data)?).map_err(to_py)?;
            CostModel::build(name, PairwiseData::Distances(&d), beta)
        }
        (_, false) => {
            return Err(input(format!(
                "model {model:?} runs on weights (similarities): give weights= \
                 (for points, weights=trellis.similarity(points, ...))"
            )));
        }
        (_, true) => {
            return Err(input(format!(
                "model {model:?} runs on distances: give distances= or points= \
                 (Euclidean distances between the rows), not weights="
            )));
        }
    };
    built.map_err(to_py)
}

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

/// The exact posterior over every binary hierarchy of the points, from
/// ``exact_hierarchy``: ``log_z``, the MAP tree, the marginal probability of
/// every cluster and of any sub-hierarchy, and exact samples.
#[pyclass(module = "trellis", frozen)]
pub struct HierarchyPosterior {
    inner: Posterior,
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
    if members.is_instance_of::<pyo3::types::PyString>() {
        return Err(input(
            "members is a list of point indices or names, not a single string",
        ));
    }
    let items = members.try_iter().map_err(|_| {
        input(format!(
            "members is a list of point indices or names, not {}",
            members
                .get_type()
                .name()
                .map_or_else(|_| "that".into(), |s| s.to_string())
        ))
    })?;
    let mut mask: Mask = 0;
    for item in items {
        let item = item?;
        let i: usize = if item.is_instance_of::<pyo3::types::PyBool>() {
            return Err(input("members are point indices or names, not booleans"));
        } else if let Ok(i) = item.extract::<i64>() {
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

/// Checks that `k` trees or partitions of `n` points fit in memory (the
/// library planner's size, `TooLargeError` naming it).
fn check_samples(k: usize, n: usize) -> PyResult<()> {
    let what = format!("{k} samples of {n} points");
    trellis::plan::check_bytes(&what, trellis::plan::samples_bytes(k, n), None).map_err(to_py)
}

impl HierarchyPosterior {
    /// The posterior marginal of each cluster (point lists): one outside
    /// pass on first use, with the interpreter released and Ctrl-C checked.
    pub fn cluster_probabilities(
        &self,
        py: Python<'_>,
        clusters: &[Vec<usize>],
    ) -> PyResult<Vec<f64>> {
        crate::run(py, self.n_jobs, self.max_memory, |o| {
            self.inner.support(clusters, o)
        })
    }

    /// A tree of the posterior with names and cumulative-cost heights.
    fn tree(&self, tree: trellis::Tree) -> PyTree {
        let heights = self
            .inner
            .dendrogram(tree.clone())
            .ok()
            .map(|d| d.heights().to_vec());
        PyTree::new(tree, self.names.clone(), heights)
    }
}

#[pymethods]
impl HierarchyPosterior {
    /// The notebook display: n, log Z, the MAP tree, the most probable clusters and the MAP tree drawn with support (``trellis.plot.hierarchy_html``; without
    /// matplotlib no picture).
    fn _repr_html_(slf: Bound<'_, Self>) -> PyResult<Option<String>> {
        let plot = slf.py().import("trellis.plot")?;
        plot.call_method1("hierarchy_html", (slf,))?.extract()
    }

    /// Number of points.
    #[getter]
    fn n(&self) -> usize {
        self.inner.n()
    }

    /// The log of the summed potential of every hierarchy, ``log Z``.
    #[getter]
    fn log_z(&self) -> PyResult<f64> {
        self.inner.log_z().map_err(to_py)
    }

    /// The number of binary hierarchies, ``(2n - 3)!!`` (a Python int).
    #[getter]
    fn num_trees<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        big_int(py, self.inner.num_trees())
    }

    /// The most probable hierarchy, with names and cumulative-cost heights.
    #[getter]
    fn map_tree(&self) -> PyResult<PyTree> {
        Ok(self.tree(self.inner.map().map_err(to_py)?.tree))
    }

    /// The cost of the MAP tree (the model's cost, without ``beta``).
    #[getter]
    fn map_cost(&self) -> PyResult<f64> {
        self.inner.map_cost().map_err(to_py)
    }

    /// The log-potential of the MAP tree, ``log φ(MAP)``.
    #[getter]
    fn map_log_potential(&self) -> PyResult<f64> {
        Ok(self.inner.map().map_err(to_py)?.log_potential)
    }

    /// The clusters of the hierarchies with their marginal probabilities:
    /// every non-singleton proper cluster with ``p > 0`` and ``p >= min_p``,
    /// most probable first, as ``(points, p)`` pairs with ``points`` a
    /// sorted tuple of indices.
    ///
    /// ``min_p``: a probability in ``[0, 1]``. The default, ``0.01``, lists
    /// the clusters found in at least one tree in a hundred. A tree has
    /// ``n - 2`` such clusters, so their marginals sum to ``n - 2`` and at
    /// most ``100 (n - 2)`` clusters reach ``0.01``. ``min_p=0.0`` lists
    /// every cluster of positive probability (up to ``2**n - n - 2``: a
    /// billion at 30 points). The first call runs the outside pass.
    #[pyo3(signature = (min_p=0.01))]
    fn cluster_marginals<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = crate::args::min_p)] min_p: f64,
    ) -> PyResult<Vec<(Bound<'py, PyTuple>, f64)>> {
        let clusters = crate::run(py, self.n_jobs, self.max_memory, |o| {
            self.inner.cluster_marginals(min_p, o)
        })?;
        clusters
            .into_iter()
            .map(|(c, p)| Ok((PyTuple::new(py, c)?, p)))
            .collect()
    }

    /// The maximum-clade-credibility (MCC) tree: the binary tree whose
    /// clusters' exact marginals have the largest product, computed
    /// exactly by one max-plus pass over the trellis after the outside pass
    /// (``O(3^n)``). A ``Tree`` with names and cumulative-cost heights whose
    /// ``support`` maps each non-trivial cluster to its marginal and whose
    /// ``log_credibility`` is the sum of their logs; ``to_newick()`` writes
    /// the support values as labels. Ties between equally credible trees are
    /// broken deterministically. For a sparse posterior: the MCC tree among
    /// the trees of the sparse trellis.
    fn mcc_tree(&self, py: Python<'_>) -> PyResult<PyTree> {
        let t = crate::run(py, self.n_jobs, self.max_memory, |o| self.inner.mcc_tree(o))?;
        let tree = t
            .to_binary()
            .ok_or_else(|| input("the MCC tree is binary"))?;
        Ok(self.tree(tree).with_clades(t))
    }

    /// The majority-rule consensus tree: every cluster whose exact marginal
    /// is above one half (``threshold=0.5``) or at least ``threshold``
    /// (between 0.5 and 1; at 1, the clusters of every tree), each with its
    /// marginal in ``support``. Such clusters never overlap, so they form a
    /// tree, generally multifurcating (``is_binary`` false): it has
    /// ``to_nested()`` (lists of more than two children), ``clusters()`` and
    /// ``to_newick()`` (support labels, no branch lengths), but no heights
    /// and no ``to_linkage()`` (``InputError``). A consensus that happens to
    /// be binary is an ordinary ``Tree`` with heights.
    ///
    /// ``threshold``: a number in ``[0.5, 1]`` (``InputError`` otherwise).
    #[pyo3(signature = (threshold=0.5))]
    fn consensus_tree(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = crate::args::threshold)] threshold: f64,
    ) -> PyResult<PyTree> {
        if threshold < 0.5 {
            return Err(input(format!(
                "threshold must be between 0.5 and 1, not {threshold}"
            )));
        }
        let t = crate::run(py, self.n_jobs, self.max_memory, |o| {
            self.inner.consensus_tree(threshold, o)
        })?;
        Ok(match t.to_binary() {
            Some(tree) => self.tree(tree).with_clades(t),
            None => PyTree::new(t.resolved(), self.names.clone(), None).with_clades(t),
        })
    }

    /// The marginal of each cluster (lists of point indices), for the
    /// ``support=`` arguments of ``Tree`` (not public).
    fn _cluster_probabilities(
        &self,
        py: Python<'_>,
        clusters: Vec<Vec<usize>>,
    ) -> PyResult<Vec<f64>> {
        self.cluster_probabilities(py, &clusters)
    }

    /// The probability that ``members`` is a cluster of the hierarchy.
    ///
    /// ``members``: the cluster's points, an iterable of point indices
    /// (ints) or names (when the points have names), each at most once.
    fn marginal(&self, py: Python<'_>, members: &Bound<'_, PyAny>) -> PyResult<f64> {
        let mask = members_mask(members, self.n(), &self.names)?;
        let cluster: Vec<usize> = trellis::members(mask).collect();
        Ok(self.cluster_probabilities(py, &[cluster])?[0])
    }

    /// The probability that the hierarchy contains ``tree`` as a subtree.
    ///
    /// ``tree``: a tree over some of the points -- a ``Tree`` (matched by
    /// name when both it and this posterior have names, else by index),
    /// nested lists of point indices such as ``[[0, 2], 1]``, or Newick text
    /// whose leaf labels are the points' names (their indices when the
    /// points have no names). For a tree over all the points this is the
    /// tree's posterior probability, ``exp(-beta * cost - log_z)``.
    fn subtree_probability(&self, py: Python<'_>, tree: &Bound<'_, PyAny>) -> PyResult<f64> {
        let names = self.names.as_deref().map(Vec::as_slice);
        let tree = crate::tree::tree_arg(tree, names)?;
        crate::run(py, self.n_jobs, self.max_memory, |o| {
            self.inner.subtree(&tree, o)
        })
    }

    /// ``k`` exact samples from the posterior: ``Tree`` objects with the
    /// names and cumulative-cost heights.
    ///
    /// ``k``: the number of trees, ``>= 0`` (``TooLargeError`` when they
    /// would not fit in memory). ``seed``: 0 to ``2**64 - 1``; the same seed
    /// gives the same trees.
    #[pyo3(signature = (k, seed=0))]
    fn sample(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = crate::args::k)] k: usize,
        #[pyo3(from_py_with = crate::args::seed)] seed: u64,
    ) -> PyResult<Vec<PyTree>> {
        check_samples(k, self.n())?;
        let trees = crate::run(py, self.n_jobs, self.max_memory, |_| {
            self.inner.samples(k, seed)
        })?;
        Ok(trees.into_iter().map(|t| self.tree(t)).collect())
    }

    fn __repr__(&self) -> String {
        match self.inner.log_z() {
            Ok(log_z) => format!("HierarchyPosterior(n={}, log_z={log_z})", self.n()),
            Err(_) => format!("HierarchyPosterior(n={})", self.n()),
        }
    }
}

/// The exact posterior over every hierarchy: the hierarchical trellis
/// (``O(3^n)`` time, ``O(2^n)`` memory; at most 30 points and the memory
/// available). `data` holds weights, distances or points as `kind` says
/// (see [`cost_model`]). ``log_z``, the MAP tree and samples are computed
/// here; cluster marginals, support values and the summary trees on the
/// first question that needs them (the outside pass, kept). For ``hcc``
/// this holds at most 16 bytes per subset (the weight pass's table beside
/// the MAP pass's or the outside pass's), under ``triplets`` too; other
/// models keep the whole trellis.
#[pyfunction]
#[pyo3(signature = (data, kind="weights", model="hcc", beta=1.0, names=None, max_memory=None, n_jobs=None, triplets=Vec::new()))]
#[allow(clippy::too_many_arguments)]
fn exact_hierarchy(
    py: Python<'_>,
    data: PyReadonlyArray2<'_, f64>,
    kind: &str,
    model: &str,
    beta: f64,
    names: Option<Vec<String>>,
    max_memory: Option<f64>,
    n_jobs: Option<i64>,
    triplets: Vec<(usize, usize, usize)>,
) -> PyResult<HierarchyPosterior> {
    let model = cost_model(&data, kind, model, beta)?;
    let n = model.data().n();
    let names = crate::check_names(names, n)?.map(Arc::new);
    let triplets = checked_triplets(n, &triplets, names.as_deref())?;
    let inner = crate::run(py, n_jobs, max_memory, |o| {
        trellis::engines::dense(model, triplets, Need::All, o)
    })?;
    Ok(HierarchyPosterior {
        inner,
        names,
        n_jobs,
        max_memory,
    })
}

/// Triplets `(a, b, c)` of point indices as the library's, checked: three
/// different points below `n` that some tree satisfies (a contradiction is
/// named by the points' names when they have names).
pub(crate) fn checked_triplets(
    n: usize,
    triplets: &[(usize, usize, usize)],
    names: Option<&Vec<String>>,
) -> PyResult<Vec<Triplet>> {
    let list = triplets
        .iter()
        .map(|&(a, b, c)| Triplet::new(a, b, c))
        .collect::<trellis::Result<Vec<_>>>()
        .map_err(|_| input("triplets: a triplet (a, b, c) needs three different points"))?;
    if list.is_empty() {
        return Ok(list);
    }
    let indices: Vec<String>;
    let names = match names {
        Some(names) => names.as_slice(),
        None => {
            indices = (0..n).map(|i| i.to_string()).collect();
            &indices
        }
    };
    trellis::ddt::build(n, &list).map_err(|e| match e.kind() {
        trellis::ErrorKind::UnrealisableTriplets { .. } => input(format!(
            "triplets: {}",
            trellis::ddt::named_message(&e, names)
        )),
        _ => input(format!("triplets: {e}")),
    })?;
    Ok(list)
}

/// The exact posterior over every flat clustering (partition) of the
/// points, from ``exact_partition``.
#[pyclass(module = "trellis", frozen)]
pub struct PartitionPosterior {
    inner: trellis::posterior::PartitionPosterior,
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
    /// The marginals: computed on first use with the interpreter released.
    fn marginals(&self, py: Python<'_>) -> PyResult<&FlatMarginals> {
        crate::run(py, self.n_jobs, None, |_| self.inner.marginals())
    }
}

#[pymethods]
impl PartitionPosterior {
    /// The notebook display: n, log Z, the MAP partition, the most probable clusters and the pairwise heat map (``trellis.plot.partition_html``; without
    /// matplotlib no picture).
    fn _repr_html_(slf: Bound<'_, Self>) -> PyResult<Option<String>> {
        let plot = slf.py().import("trellis.plot")?;
        plot.call_method1("partition_html", (slf,))?.extract()
    }

    /// Number of points.
    #[getter]
    fn n(&self) -> usize {
        self.inner.n()
    }

    /// The log of the summed energy of every partition, ``log Z``.
    #[getter]
    fn log_z(&self) -> PyResult<f64> {
        self.inner.log_z().map_err(to_py)
    }

    /// The number of partitions (the Bell number ``B(n)``, a Python int).
    #[getter]
    fn num_partitions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        big_int(py, self.inner.num_partitions().clone())
    }

    /// The MAP partition as labels ``0..k`` (clusters numbered by their
    /// smallest point).
    #[getter]
    fn map_labels<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let map = self.inner.map().map_err(to_py)?;
        Ok(labels(self.n(), &map.clusters).into_pyarray(py))
    }

    /// The log-energy of the MAP partition.
    #[getter]
    fn map_log_energy(&self) -> PyResult<f64> {
        Ok(self.inner.map().map_err(to_py)?.log_energy)
    }

    /// The partition minimising the posterior expected Binder loss, exactly,
    /// and that loss, as ``(labels, expected_loss)``: ``labels`` an int64
    /// array numbering the clusters ``0..k`` by their smallest point,
    /// ``expected_loss`` a float.
    ///
    /// The loss of an estimate against the true partition sums, over the
    /// pairs ``i < j``, ``cost_split`` when the estimate separates a pair
    /// that shares a cluster and ``cost_join`` when it joins a pair that
    /// does not (mcclust's and salso's costs). Its expectation over the exact
    /// co-clustering probabilities ``p_ij`` is ``sum_{i<j} [together:
    /// cost_join * (1 - p_ij); apart: cost_split * p_ij]``, minimised exactly
    /// as a correlation clustering of the ``p_ij`` on the flat trellis
    /// (``O(3^n)``). With equal costs, pairs with ``p_ij > 0.5`` are joined
    /// where that is consistent.
    ///
    /// ``cost_split``, ``cost_join``: finite numbers ``> 0`` (``InputError``
    /// otherwise). Only for the posterior over all partitions (not a
    /// family's).
    #[pyo3(signature = (cost_split=1.0, cost_join=1.0))]
    fn binder_partition<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = crate::args::cost_split)] cost_split: f64,
        #[pyo3(from_py_with = crate::args::cost_join)] cost_join: f64,
    ) -> PyResult<(Bound<'py, PyArray1<i64>>, f64)> {
        self.marginals(py)?;
        let b = crate::run(py, self.n_jobs, None, |o| {
            self.inner.binder_partition(cost_split, cost_join, o)
        })?;
        Ok((
            labels(self.n(), &b.clusters).into_pyarray(py),
            b.expected_loss,
        ))
    }

    /// The clusters of the partitions with their marginal probabilities:
    /// every cluster (singletons included) with ``p > 0`` and ``p >= min_p``,
    /// most probable first, as ``(points, p)`` pairs with ``points`` a
    /// sorted tuple of indices.
    ///
    /// ``min_p``: a probability in ``[0, 1]``. The default, ``0.01``, lists
    /// the clusters found in at least one partition in a hundred. A
    /// partition has at most ``n`` clusters, so their marginals sum to at
    /// most ``n`` and at most ``100 n`` clusters reach ``0.01``.
    /// ``min_p=0.0`` lists every cluster of positive probability (up to
    /// ``2**n - 1``).
    #[pyo3(signature = (min_p=0.01))]
    fn cluster_marginals<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = crate::args::min_p)] min_p: f64,
    ) -> PyResult<Vec<(Bound<'py, PyTuple>, f64)>> {
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

    /// ``k`` exact samples, each an array of labels (as ``map_labels``).
    ///
    /// ``k``: the number of partitions, ``>= 0`` (``TooLargeError`` when
    /// they would not fit in memory). ``seed``: 0 to ``2**64 - 1``; the same
    /// seed gives the same samples.
    #[pyo3(signature = (k, seed=0))]
    fn sample<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = crate::args::k)] k: usize,
        #[pyo3(from_py_with = crate::args::seed)] seed: u64,
    ) -> PyResult<Vec<Bound<'py, PyArray1<i64>>>> {
        check_samples(k, self.n())?;
        let n = self.n();
        let parts = crate::run(py, self.n_jobs, None, |_| self.inner.samples(k, seed))?;
        Ok(parts
            .iter()
            .map(|p| labels(n, p).into_pyarray(py))
            .collect())
    }

    fn __repr__(&self) -> String {
        match self.inner.log_z() {
            Ok(log_z) => format!("PartitionPosterior(n={}, log_z={log_z})", self.n()),
            Err(_) => format!("PartitionPosterior(n={})", self.n()),
        }
    }
}

/// The exact posterior over every partition: the flat trellis with
/// correlation clustering (``O(3^n)`` time, ``O(2^n)`` memory).
#[pyfunction]
#[pyo3(signature = (weights, model="cc", beta=1.0, names=None, max_memory=None, n_jobs=None, must_link=Vec::new(), cannot_link=Vec::new()))]
#[allow(clippy::too_many_arguments)]
fn exact_partition(
    py: Python<'_>,
    weights: PyReadonlyArray2<'_, f64>,
    model: &str,
    beta: f64,
    names: Option<Vec<String>>,
    max_memory: Option<f64>,
    n_jobs: Option<i64>,
    must_link: Vec<(usize, usize)>,
    cannot_link: Vec<(usize, usize)>,
) -> PyResult<PartitionPosterior> {
    if model != "cc" {
        return Err(input(format!(
            "model must be \"cc\" (correlation clustering), not {model:?}"
        )));
    }
    let w = crate::weights(&weights)?;
    crate::check_names(names, w.n())?;
    let energy = CorrelationClustering::new(&w, beta).map_err(to_py)?;
    let inner = crate::run(py, n_jobs, max_memory, |o| {
        trellis::engines::flat_dense(energy, &must_link, &cannot_link, Need::All, o)
    })?;
    Ok(PartitionPosterior { inner, n_jobs })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<HierarchyPosterior>()?;
    m.add_class::<PartitionPosterior>()?;
    m.add_function(wrap_pyfunction!(exact_hierarchy, m)?)?;
    m.add_function(wrap_pyfunction!(exact_partition, m)?)?;
    Ok(())
}
