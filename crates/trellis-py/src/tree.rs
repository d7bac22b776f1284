//! `trellis.Tree`: a binary hierarchy over points `0..n`, with optional leaf
//! names and merge heights, and its SciPy, Newick and nested-list forms.

use std::sync::Arc;

use numpy::{PyArray2, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use trellis::{Dendrogram, Newick};

use crate::errors::{input, to_py};
use crate::posterior::HierarchyPosterior;

/// A binary hierarchy over the points ``0..n``.
///
/// Trees come from the inference functions (with names when given and with
/// merge heights: the cumulative cost of each subtree) or from
/// ``Tree.from_newick``, ``Tree.from_nested`` and ``Tree.from_linkage``.
/// Trees are immutable; two trees are equal when they have the same clusters.
#[pyclass(name = "Tree", module = "trellis", frozen)]
pub struct PyTree {
    pub tree: trellis::Tree,
    pub names: Option<Arc<Vec<String>>>,
    /// Heights of the internal nodes in post-order (monotone), when the
    /// tree has its own (costs, linkage heights or divergence times).
    pub heights: Option<Vec<f64>>,
    /// SciPy's linkage matrix of a tree from ``trellis.linkage``, which
    /// ``to_linkage()`` gives back as it is (row order, ties, inversions).
    pub linkage: Option<Arc<Vec<[f64; 4]>>>,
}

impl PyTree {
    /// A tree with optional names and heights.
    pub fn new(
        tree: trellis::Tree,
        names: Option<Arc<Vec<String>>>,
        heights: Option<Vec<f64>>,
    ) -> PyTree {
        PyTree {
            tree,
            names,
            heights,
            linkage: None,
        }
    }

    /// The same tree keeping the linkage matrix `z` it was built from
    /// (empty for one point: none).
    pub fn with_linkage(self, z: Vec<[f64; 4]>) -> PyTree {
        PyTree {
            linkage: (!z.is_empty()).then(|| Arc::new(z)),
            ..self
        }
    }

    fn n(&self) -> usize {
        self.tree.num_leaves()
    }

    /// The dendrogram with the requested heights.
    fn dendrogram(&self, heights: Option<&str>) -> PyResult<Dendrogram> {
        match (heights, &self.heights) {
            (None | Some("cost"), Some(h)) => {
                Dendrogram::new(self.tree.clone(), h.clone()).map_err(to_py)
            }
            (None | Some("rank"), _) => Ok(Dendrogram::by_rank(self.tree.clone())),
            (Some("cost"), None) => Err(input(
                "this tree has no heights of its own (it was not computed from a model or read from a linkage matrix): use heights=\"rank\"",
            )),
            (Some(other), _) => Err(input(format!(
                "heights must be \"cost\" or \"rank\", not {other:?}"
            ))),
        }
    }
}

/// A whole tree over `0..n` from parsed text, with `names` checked.
fn complete(tree: trellis::Tree, names: Option<Vec<String>>) -> PyResult<PyTree> {
    let n = tree.num_leaves();
    tree.validate(n, true).map_err(to_py)?;
    let names = crate::check_names(names, n)?;
    Ok(PyTree::new(tree, names.map(Arc::new), None))
}

#[pymethods]
impl PyTree {
    /// Reads Newick. Leaf labels are either the point indices ``0..n`` or
    /// names: then leaf ``i`` is ``names[i]`` when ``names`` is given, else
    /// the ``i``-th label in the text. Branch lengths and internal labels are
    /// read and ignored; every node has two children.
    #[staticmethod]
    #[pyo3(signature = (text, names=None))]
    fn from_newick(text: &str, names: Option<Vec<String>>) -> PyResult<PyTree> {
        if names.is_none()
            && let Ok(tree) = trellis::Tree::from_newick(text)
        {
            return complete(tree, None);
        }
        let h = trellis::ddt::Hierarchy::parse_newick(text).map_err(to_py)?;
        let names = match names {
            Some(names) => names,
            None => h.leaf_names().into_iter().map(String::from).collect(),
        };
        let tree = h.to_tree(&names).map_err(to_py)?;
        complete(tree, Some(names))
    }

    /// A tree from nested lists of point indices, e.g. ``[[0, 1], [2, 3]]``.
    #[staticmethod]
    #[pyo3(signature = (obj, names=None))]
    fn from_nested(
        py: Python<'_>,
        obj: &Bound<'_, PyAny>,
        names: Option<Vec<String>>,
    ) -> PyResult<PyTree> {
        let text: String = py
            .import("json")?
            .call_method1("dumps", (obj,))?
            .extract()?;
        complete(trellis::Tree::from_json_str(&text).map_err(to_py)?, names)
    }

    /// A tree from a SciPy linkage matrix ``Z`` (``(n - 1, 4)``), keeping its
    /// heights (made monotone).
    #[staticmethod]
    #[pyo3(signature = (z, names=None))]
    fn from_linkage(z: PyReadonlyArray2<'_, f64>, names: Option<Vec<String>>) -> PyResult<PyTree> {
        let view = z.as_array();
        if view.ncols() != 4 {
            return Err(input(format!(
                "a linkage matrix has 4 columns, not {}",
                view.ncols()
            )));
        }
        let rows: Vec<[f64; 4]> = view
            .outer_iter()
            .map(|r| [r[0], r[1], r[2], r[3]])
            .collect();
        let d = Dendrogram::from_linkage(&rows).map_err(to_py)?;
        let n = rows.len() + 1;
        let names = crate::check_names(names, n)?;
        Ok(PyTree::new(
            d.tree().clone(),
            names.map(Arc::new),
            Some(d.heights().to_vec()),
        ))
    }

    /// Number of points (leaves).
    #[getter]
    fn get_n(&self) -> usize {
        self.n()
    }

    /// The points' names (``names[i]`` is point ``i``), or ``None``.
    #[getter]
    fn names(&self) -> Option<Vec<String>> {
        self.names.as_ref().map(|n| n.to_vec())
    }

    /// The heights of the internal nodes, in the order of ``clusters()``, or
    /// ``None`` when the tree has none of its own.
    #[getter]
    fn heights(&self) -> Option<Vec<f64>> {
        self.heights.clone()
    }

    /// The tree as nested lists of point indices, e.g. ``[[0, 1], 2]``.
    fn to_nested(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let text = serde_json::to_string(&self.tree)
            .map_err(|e| input(format!("the tree cannot be written: {e}")))?;
        Ok(py.import("json")?.call_method1("loads", (text,))?.unbind())
    }

    /// The points under each internal node (sorted tuples), children before
    /// parents, the root last.
    fn clusters<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        Dendrogram::by_rank(self.tree.clone())
            .clusters()
            .into_iter()
            .map(|c| PyTuple::new(py, c))
            .collect()
    }

    /// Newick with the leaves' names (or indices), rooted (``[&R]``).
    ///
    /// ``lengths``: branch lengths from the heights (the tree's own, else
    /// ranks). ``support``: a ``HierarchyPosterior`` (each internal node
    /// labelled with its cluster's posterior marginal) or one number per
    /// cluster of ``clusters()``; the root carries none.
    #[pyo3(signature = (support=None, lengths=true))]
    fn to_newick(
        &self,
        py: Python<'_>,
        support: Option<&Bound<'_, PyAny>>,
        lengths: bool,
    ) -> PyResult<String> {
        let d = self.dendrogram(None)?;
        let support: Option<Vec<f64>> = match support {
            None => None,
            Some(s) => {
                if let Ok(post) = s.cast::<HierarchyPosterior>() {
                    Some(post.get().cluster_probabilities(py, &d.clusters())?)
                } else {
                    Some(s.extract()?)
                }
            }
        };
        let names = self.names.as_deref().map(|v| v.as_slice());
        d.to_newick(&Newick {
            names,
            lengths,
            support: support.as_deref(),
            rooted: true,
        })
        .map_err(to_py)
    }

    /// The SciPy linkage matrix, ``(n - 1, 4)`` float64: valid and monotone
    /// (``scipy.cluster.hierarchy.is_valid_linkage``, ``is_monotonic``).
    /// ``heights``: ``"cost"`` (the tree's own heights: cumulative costs for
    /// trees from a model), ``"rank"``, or ``None`` for the tree's own when it
    /// has them, else ranks. A tree from ``trellis.linkage`` gives SciPy's
    /// matrix exactly (with its own heights), inversions of centroid and
    /// median linkage included (not monotone then).
    #[pyo3(signature = (heights=None))]
    fn to_linkage<'py>(
        &self,
        py: Python<'py>,
        heights: Option<&str>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let rows = match (&self.linkage, heights) {
            (Some(z), None | Some("cost")) => z.to_vec(),
            _ => self.dendrogram(heights)?.linkage().map_err(to_py)?,
        };
        let rows: Vec<Vec<f64>> = rows.iter().map(|r| r.to_vec()).collect();
        if rows.is_empty() {
            return Ok(PyArray2::zeros(py, [0, 4], false));
        }
        PyArray2::from_vec2(py, &rows).map_err(|e| input(e.to_string()))
    }

    fn __len__(&self) -> usize {
        self.n()
    }

    /// Pickling: the tree as nested-list JSON text, its names and heights
    /// (and the linkage matrix it keeps).
    #[allow(clippy::type_complexity)]
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(
        Bound<'py, PyAny>,
        (
            String,
            Option<Vec<String>>,
            Option<Vec<f64>>,
            Option<Vec<[f64; 4]>>,
        ),
    )> {
        let text = serde_json::to_string(&self.tree)
            .map_err(|e| input(format!("the tree cannot be written: {e}")))?;
        let restore = py.import("trellis._core")?.getattr("_tree_from_state")?;
        let z = self.linkage.as_ref().map(|z| z.to_vec());
        Ok((restore, (text, self.names(), self.heights.clone(), z)))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        match other.cast::<PyTree>() {
            Ok(o) => self.tree.clone().canonical() == o.get().tree.clone().canonical(),
            Err(_) => false,
        }
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.tree.clone().canonical().hash(&mut h);
        h.finish()
    }

    fn __str__(&self) -> PyResult<String> {
        let names = self.names.as_deref().map(|v| v.as_slice());
        Dendrogram::by_rank(self.tree.clone())
            .to_newick(&Newick {
                names,
                lengths: false,
                support: None,
                rooted: false,
            })
            .map_err(to_py)
    }

    fn __repr__(&self) -> PyResult<String> {
        Ok(format!("Tree({:?})", self.__str__()?))
    }
}

/// Rebuilds a pickled `Tree` (see `Tree.__reduce__`).
#[pyfunction]
#[pyo3(signature = (text, names, heights, linkage=None))]
fn _tree_from_state(
    text: &str,
    names: Option<Vec<String>>,
    heights: Option<Vec<f64>>,
    linkage: Option<Vec<[f64; 4]>>,
) -> PyResult<PyTree> {
    let tree = trellis::Tree::from_json_str(text).map_err(to_py)?;
    let t = PyTree::new(tree, names.map(Arc::new), heights);
    Ok(match linkage {
        Some(z) => t.with_linkage(z),
        None => t,
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTree>()?;
    m.add_function(wrap_pyfunction!(_tree_from_state, m)?)
}
