//! `trellis.Tree`: a binary hierarchy over points `0..n`, with optional leaf
//! names and merge heights, and its SciPy, Newick and nested-list forms.

use std::sync::Arc;

use numpy::{PyArray2, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use trellis::summary::{Clade, SupportTree};
use trellis::{Dendrogram, Newick};

use crate::errors::{input, to_py};

/// A hierarchy over the points ``0..n``: binary, or (a consensus tree)
/// multifurcating.
///
/// Trees come from the inference functions (with names when given and with
/// merge heights: the cumulative cost of each subtree) or from
/// ``Tree.from_newick``, ``Tree.from_nested`` and ``Tree.from_linkage``;
/// they are not built with ``Tree()``. Trees are immutable, hashable and
/// picklable; two trees are equal when they have the same clusters of point
/// indices (names and heights aside).
///
/// The summaries of a posterior (``HierarchyPosterior.mcc_tree()`` and
/// ``consensus_tree()``) carry each cluster's exact marginal (``support``;
/// the MCC tree also its ``log_credibility``), which ``to_newick()`` writes
/// as labels. A consensus tree may be multifurcating (``is_binary`` is
/// false): it has nested lists, clusters and Newick (without branch lengths)
/// but no heights and no linkage matrix.
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
    /// The clusters with their support, for a summary of a posterior (the
    /// MCC or consensus tree); when it is multifurcating, `tree` is only
    /// its resolution and every method reads this instead.
    pub clades: Option<Arc<SupportTree>>,
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
            clades: None,
        }
    }

    /// A summary tree of a posterior: `tree` is its binary form (or a
    /// resolution of a multifurcating one).
    pub fn with_clades(self, clades: SupportTree) -> PyTree {
        PyTree {
            clades: Some(Arc::new(clades)),
            ..self
        }
    }

    /// The summary tree when it is multifurcating.
    fn multi(&self) -> Option<&SupportTree> {
        self.clades.as_deref().filter(|c| !c.is_binary())
    }

    /// An error for what a multifurcating tree does not have.
    fn refuse_multi(&self, what: &str) -> PyResult<()> {
        match self.multi() {
            Some(_) => Err(input(format!(
                "this tree is multifurcating (a consensus tree), so it has no {what}: \
                 a SciPy linkage matrix and heights need a binary tree; to_nested(), \
                 clusters() and to_newick() describe it"
            ))),
            None => Ok(()),
        }
    }

    /// Every non-trivial cluster's support, by members (summary trees).
    fn support_of(&self, members: &[usize]) -> Option<f64> {
        let n = self.n();
        if members.len() < 2 || members.len() >= n {
            return Some(1.0);
        }
        self.clades
            .as_ref()?
            .clades()
            .iter()
            .find(|c| c.members == members)
            .map(|c| c.p)
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

    /// Newick of a multifurcating tree: no branch lengths, the support
    /// labels of `support` (as `to_newick` takes it) or its own.
    fn multi_newick(
        &self,
        py: Python<'_>,
        m: &SupportTree,
        support: Option<&Bound<'_, PyAny>>,
        lengths: Option<bool>,
    ) -> PyResult<String> {
        if lengths == Some(true) {
            return Err(input(
                "this tree is multifurcating (a consensus tree) and has no heights, so no branch lengths: use lengths=False or the default",
            ));
        }
        let names = self.names.as_deref().map(|v| v.as_slice());
        let clusters: Vec<Vec<usize>> = m.clades().iter().map(|c| c.members.clone()).collect();
        let values: Option<Vec<f64>> = match support {
            None => return Ok(m.to_newick(names)),
            Some(s) if s.is_none() => return Ok(m.to_newick_with(names, false, true)),
            Some(s) => {
                if let Some(values) = posterior_support(s, &clusters)? {
                    Some(values)
                } else {
                    // One number per cluster of clusters() but the root.
                    let mut order: Vec<usize> = (0..clusters.len()).collect();
                    order.sort_by(|&a, &b| {
                        let (a, b) = (&clusters[a], &clusters[b]);
                        a.len().cmp(&b.len()).then(a.cmp(b))
                    });
                    let given: Vec<f64> = py
                        .import("numpy")?
                        .getattr("asarray")?
                        .call1((s, "float64"))
                        .and_then(|a| a.extract::<Vec<f64>>())
                        .map_err(|_| {
                            input("support must be a HierarchyPosterior or one number per cluster of clusters()")
                        })?;
                    if given.len() != clusters.len() + 1 {
                        return Err(input(format!(
                            "{} support values were given for a tree with {} clusters",
                            given.len(),
                            clusters.len() + 1
                        )));
                    }
                    let mut v = vec![0.0; clusters.len()];
                    for (pos, &k) in order.iter().enumerate() {
                        v[k] = given[pos];
                    }
                    Some(v)
                }
            }
        };
        let clades = clusters
            .into_iter()
            .zip(values.unwrap_or_default())
            .map(|(members, p)| Clade { members, p })
            .collect();
        let relabelled = SupportTree::new(m.n(), clades).map_err(to_py)?;
        Ok(relabelled.to_newick(names))
    }

    /// The dendrogram with the requested heights.
    fn dendrogram(&self, heights: Option<&str>) -> PyResult<Dendrogram> {
        self.refuse_multi("dendrogram")?;
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

/// The leaf labels of `h` as point indices, when every one is a number:
/// `Some` of the indices as text (`"0"` to `"n - 1"`) when they are exactly
/// those, `None` when some label is not a number, an `InputError` when the
/// numbers are not the indices `0..n` each once.
fn index_labels(h: &trellis::ddt::Hierarchy) -> PyResult<Option<Vec<String>>> {
    let labels = h.leaf_names();
    let n = labels.len();
    if !labels
        .iter()
        .all(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()))
    {
        return Ok(None);
    }
    let mut seen = vec![false; n];
    for label in &labels {
        let i = label.parse::<usize>().ok().filter(|&i| i < n);
        match i {
            Some(i) if !seen[i] && i.to_string() == *label => seen[i] = true,
            _ => {
                return Err(input(format!(
                    "the leaf labels are numbers, read as the point indices 0 to {}, each once; \
                     {label:?} is not one of them (give names= to read the labels as names)",
                    n - 1
                )));
            }
        }
    }
    Ok(Some((0..n).map(|i| i.to_string()).collect()))
}

/// A tree from nested lists of point indices (lists, tuples, ints and numpy
/// integers): written as JSON text without recursion (any depth), then read
/// by the library's reader of nested lists.
pub fn from_nested_obj(obj: &Bound<'_, PyAny>) -> PyResult<trellis::Tree> {
    enum Step<'py> {
        Item(Bound<'py, PyAny>),
        Comma,
        Close,
    }
    let refuse = |x: &Bound<'_, PyAny>| -> PyResult<PyErr> {
        Ok(input(format!(
            "a tree as nested lists holds point indices (ints) in lists of two, not {}",
            crate::args::show(x)?
        )))
    };
    let mut text = String::new();
    let mut stack = vec![Step::Item(obj.clone())];
    while let Some(step) = stack.pop() {
        let x = match step {
            Step::Comma => {
                text.push(',');
                continue;
            }
            Step::Close => {
                text.push(']');
                continue;
            }
            Step::Item(x) => x,
        };
        if x.is_instance_of::<pyo3::types::PyBool>() {
            return Err(refuse(&x)?);
        }
        let items: Option<Vec<Bound<'_, PyAny>>> = if let Ok(l) = x.cast::<pyo3::types::PyList>() {
            Some(l.iter().collect())
        } else if let Ok(t) = x.cast::<pyo3::types::PyTuple>() {
            Some(t.iter().collect())
        } else {
            None
        };
        if let Some(items) = items {
            text.push('[');
            stack.push(Step::Close);
            for (k, item) in items.into_iter().enumerate().rev() {
                stack.push(Step::Item(item));
                if k > 0 {
                    stack.push(Step::Comma);
                }
            }
            continue;
        }
        match x.extract::<i64>() {
            Ok(i) if i >= 0 => text.push_str(&i.to_string()),
            Ok(i) => return Err(input(format!("point indices are >= 0, not {i}"))),
            Err(_) => return Err(refuse(&x)?),
        }
    }
    trellis::Tree::from_json_str(&text).map_err(to_py)
}

/// A tree over the points (all or some of them) given as a `Tree`, Newick
/// text or nested lists: the rule of `subtree_probability` and `score`.
/// With `names` (the points' names), a named `Tree` is matched by name and
/// Newick labels are names; without, both are read by index.
pub fn tree_arg(tree: &Bound<'_, PyAny>, names: Option<&[String]>) -> PyResult<trellis::Tree> {
    if let Ok(t) = tree.cast::<PyTree>() {
        let t = t.get();
        if t.multi().is_some() {
            return Err(input(
                "this tree is multifurcating (a consensus tree): a binary hierarchy is needed here",
            ));
        }
        return match (&t.names, names) {
            (Some(own), Some(names)) if own.as_slice() != names => rename(&t.tree, own, names),
            _ => Ok(t.tree.clone()),
        };
    }
    if let Ok(text) = tree.extract::<String>() {
        return trellis::read_tree(&text, names).map_err(to_py);
    }
    if tree.is_instance_of::<pyo3::types::PyBool>() {
        return Err(input(
            "a tree is a Tree, Newick text or nested lists, not a boolean",
        ));
    }
    from_nested_obj(tree)
}

/// `tree` (leaf `i` named `own[i]`) over the points called `names`.
fn rename(tree: &trellis::Tree, own: &[String], names: &[String]) -> PyResult<trellis::Tree> {
    let index: std::collections::HashMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, s)| (s.as_str(), i))
        .collect();
    let mut to = Vec::with_capacity(own.len());
    for name in own {
        to.push(*index.get(name.as_str()).ok_or_else(|| {
            input(format!(
                "the tree has a leaf {name:?} that is not among the points' names"
            ))
        })?);
    }
    Ok(tree.fold(|i| trellis::Tree::Leaf(to[i]), trellis::Tree::node))
}

#[pymethods]
impl PyTree {
    /// The notebook display: a dendrogram with names and heights (``trellis.plot.tree_svg``; without
    /// matplotlib none: the text form shows).
    fn _repr_svg_(slf: Bound<'_, Self>) -> PyResult<Option<String>> {
        if slf.get().multi().is_some() {
            return Ok(None);
        }
        let plot = slf.py().import("trellis.plot")?;
        plot.call_method1("tree_svg", (slf,))?.extract()
    }

    /// Reads a tree from Newick text.
    ///
    /// ``text``: Newick (``((a,b),c);``), optionally rooted (``[&R]``), with
    /// branch lengths and internal labels (read and ignored); every
    /// internal node has two children.
    ///
    /// ``names``: the points' names (one per leaf, distinct, non-empty):
    /// the labels are these names and leaf ``i`` is ``names[i]``, so
    /// ``Tree.from_newick(t.to_newick(), names=t.names) == t`` for a named
    /// tree ``t``. Without ``names``, labels that are exactly ``0`` to
    /// ``n - 1`` are the point indices (so an unnamed tree reads back
    /// equal); other numbers are refused (``InputError``: give ``names``);
    /// words become the tree's names, leaf ``i`` being the ``i``-th label in
    /// sorted order, so that the same tree written in any child order reads
    /// as the same ``Tree``.
    ///
    /// The tree has no heights (``heights`` is ``None``).
    #[staticmethod]
    #[pyo3(signature = (text, names=None))]
    fn from_newick(
        #[pyo3(from_py_with = crate::args::text)] text: String,
        #[pyo3(from_py_with = crate::args::names)] names: Option<Vec<String>>,
    ) -> PyResult<PyTree> {
        let h = trellis::ddt::Hierarchy::parse_newick(&text).map_err(to_py)?;
        if let Some(names) = names {
            let n = names.len();
            let names = crate::check_names(Some(names), n)?.unwrap_or_default();
            let tree = h.to_tree(&names).map_err(to_py)?;
            return complete(tree, Some(names));
        }
        if let Some(indices) = index_labels(&h)? {
            return complete(h.to_tree(&indices).map_err(to_py)?, None);
        }
        let mut names: Vec<String> = h.leaf_names().into_iter().map(String::from).collect();
        names.sort();
        let n = names.len();
        let names = crate::check_names(Some(names), n)?.unwrap_or_default();
        let tree = h.to_tree(&names).map_err(to_py)?;
        complete(tree, Some(names))
    }

    /// A tree from nested lists of point indices, e.g. ``[[0, 1], [2, 3]]``.
    ///
    /// ``obj``: a point index (an int, also a numpy integer) is a leaf, a
    /// list or tuple of two trees a node, a list of one tree that tree; the
    /// leaves are exactly ``0`` to ``n - 1``. ``names``: one distinct,
    /// non-empty name per point, or ``None``.
    #[staticmethod]
    #[pyo3(signature = (obj, names=None))]
    fn from_nested(
        obj: &Bound<'_, PyAny>,
        #[pyo3(from_py_with = crate::args::names)] names: Option<Vec<String>>,
    ) -> PyResult<PyTree> {
        complete(from_nested_obj(obj)?, names)
    }

    /// A tree from a SciPy linkage matrix, keeping its heights (made
    /// monotone).
    ///
    /// ``z``: an ``(n - 1, 4)`` array as ``scipy.cluster.hierarchy.linkage``
    /// returns (the two clusters merged, their distance, the size of the
    /// new cluster). ``names``: one distinct, non-empty name per point, or
    /// ``None``.
    #[staticmethod]
    #[pyo3(signature = (z, names=None))]
    fn from_linkage(
        #[pyo3(from_py_with = crate::args::z)] z: Bound<'_, PyArray2<f64>>,
        #[pyo3(from_py_with = crate::args::names)] names: Option<Vec<String>>,
    ) -> PyResult<PyTree> {
        let z = z.readonly();
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

    /// Whether every internal node has two children (false only for a
    /// multifurcating consensus tree).
    #[getter]
    fn is_binary(&self) -> bool {
        self.multi().is_none()
    }

    /// For a summary of a posterior (``mcc_tree()``, ``consensus_tree()``):
    /// each non-trivial cluster (a sorted tuple of point indices) with its
    /// exact posterior marginal; ``None`` for other trees.
    #[getter]
    fn support<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(c) = &self.clades else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        for clade in c.clades() {
            d.set_item(PyTuple::new(py, &clade.members)?, clade.p)?;
        }
        Ok(Some(d))
    }

    /// For the MCC tree: the sum of the log marginals of its non-trivial
    /// clusters (the log of its clade credibility); ``None`` otherwise.
    #[getter]
    fn log_credibility(&self) -> Option<f64> {
        self.clades.as_ref().and_then(|c| c.log_credibility())
    }

    /// The tree as nested lists of point indices, e.g. ``[[0, 1], 2]``
    /// (a multifurcating node is a list of more than two children).
    fn to_nested(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        if let Some(m) = self.multi() {
            let json = py.import("json")?;
            return Ok(json.call_method1("loads", (m.to_string(),))?.unbind());
        }
        // Built bottom-up without recursion: any depth.
        let nested = self.tree.fold(
            |i| Ok(i.into_pyobject(py)?.into_any()),
            |l: PyResult<Bound<'_, PyAny>>, r: PyResult<Bound<'_, PyAny>>| {
                Ok(pyo3::types::PyList::new(py, [l?, r?])?.into_any())
            },
        )?;
        Ok(nested.unbind())
    }

    /// The points under each internal node (sorted tuples), children before
    /// parents, the root last.
    fn clusters<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        if let Some(m) = self.multi() {
            let mut all: Vec<Vec<usize>> = m.clades().iter().map(|c| c.members.clone()).collect();
            all.sort_by(|a, b| a.len().cmp(&b.len()).then(a.cmp(b)));
            all.push((0..m.n()).collect());
            return all.into_iter().map(|c| PyTuple::new(py, c)).collect();
        }
        Dendrogram::by_rank(self.tree.clone())
            .clusters()
            .into_iter()
            .map(|c| PyTuple::new(py, c))
            .collect()
    }

    /// The tree as rooted Newick (``[&R] ((a:0.5,b:0.5):1.3,c:1.8);``), the
    /// leaves labelled by their names (or indices).
    ///
    /// ``support``: ``None`` (for a summary of a posterior, its own
    /// support values; else no labels); a ``HierarchyPosterior`` over the
    /// same points (each internal node labelled with its cluster's posterior
    /// marginal); or one number per cluster of ``clusters()`` (the root
    /// carries none). ``lengths``: write branch lengths, from the heights
    /// (the tree's own, else ranks); ``None`` (the default) writes them
    /// for a binary tree and not for a multifurcating one, which has none
    /// (``lengths=True`` is refused there).
    ///
    /// ``Tree.from_newick(t.to_newick(), names=t.names)`` reads a binary
    /// tree back.
    #[pyo3(signature = (support=None, lengths=None))]
    fn to_newick(
        &self,
        py: Python<'_>,
        support: Option<&Bound<'_, PyAny>>,
        #[pyo3(from_py_with = crate::args::optional_lengths)] lengths: Option<bool>,
    ) -> PyResult<String> {
        if let Some(m) = self.multi() {
            return self.multi_newick(py, m, support, lengths);
        }
        let lengths = lengths.unwrap_or(true);
        let d = self.dendrogram(None)?;
        let support: Option<Vec<f64>> = match support {
            None if self.clades.is_some() => Some(
                d.clusters()
                    .iter()
                    .map(|c| self.support_of(c).unwrap_or(f64::NAN))
                    .collect(),
            ),
            None => None,
            Some(s) if s.is_none() => None,
            Some(s) => {
                if let Some(values) = posterior_support(s, &d.clusters())? {
                    Some(values)
                } else if s.is_instance_of::<pyo3::types::PyString>() {
                    return Err(input(
                        "support must be a HierarchyPosterior or one number per cluster, not a string",
                    ));
                } else {
                    let values = py
                        .import("numpy")?
                        .getattr("asarray")?
                        .call1((s, "float64"))
                        .and_then(|a| a.extract::<Vec<f64>>())
                        .map_err(|_| {
                            input(
                                "support must be a HierarchyPosterior or one number per cluster of clusters()",
                            )
                        })?;
                    Some(values)
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
    ///
    /// ``heights``: ``"cost"`` (the tree's own heights: cumulative costs for
    /// trees from a model; an ``InputError`` for a tree without heights),
    /// ``"rank"`` (merge ``k`` at height ``k``), or ``None`` for the tree's
    /// own when it has them, else ranks. A tree from ``trellis.linkage``
    /// gives SciPy's matrix exactly (with its own heights), inversions of
    /// centroid and median linkage included (not monotone then).
    #[pyo3(signature = (heights=None))]
    fn to_linkage<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = crate::args::heights)] heights: Option<String>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        self.refuse_multi("linkage matrix")?;
        let rows = match (&self.linkage, heights.as_deref()) {
            (Some(z), None | Some("cost")) => z.to_vec(),
            (_, h) => self.dendrogram(h)?.linkage().map_err(to_py)?,
        };
        let rows: Vec<Vec<f64>> = rows.iter().map(|r| r.to_vec()).collect();
        if rows.is_empty() {
            return Ok(PyArray2::zeros(py, [0, 4], false));
        }
        PyArray2::from_vec2(py, &rows).map_err(|e| input(e.to_string()))
    }

    /// Number of points (leaves), as ``n``.
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
            Option<Vec<(Vec<usize>, f64)>>,
            Option<f64>,
        ),
    )> {
        let text = serde_json::to_string(&self.tree)
            .map_err(|e| input(format!("the tree cannot be written: {e}")))?;
        let restore = py.import("trellis._core")?.getattr("_tree_from_state")?;
        let z = self.linkage.as_ref().map(|z| z.to_vec());
        let clades = self.clades.as_ref().map(|c| {
            c.clades()
                .iter()
                .map(|c| (c.members.clone(), c.p))
                .collect()
        });
        let credibility = self.clades.as_ref().and_then(|c| c.log_credibility());
        Ok((
            restore,
            (
                text,
                self.names(),
                self.heights.clone(),
                z,
                clades,
                credibility,
            ),
        ))
    }

    /// Whether ``other`` is a ``Tree`` with the same clusters of point
    /// indices (names and heights are not compared).
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        match other.cast::<PyTree>() {
            Ok(o) => match (self.multi(), o.get().multi()) {
                (None, None) => self.tree.clone().canonical() == o.get().tree.clone().canonical(),
                (Some(a), Some(b)) => a.n() == b.n() && a.to_string() == b.to_string(),
                _ => false,
            },
            Err(_) => false,
        }
    }

    /// A hash of the clusters (equal trees hash equal).
    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        match self.multi() {
            Some(m) => m.to_string().hash(&mut h),
            None => self.tree.clone().canonical().hash(&mut h),
        }
        h.finish()
    }

    /// Unrooted Newick without branch lengths, e.g. ``((a,b),c);``.
    fn __str__(&self) -> PyResult<String> {
        let names = self.names.as_deref().map(|v| v.as_slice());
        if let Some(m) = self.multi() {
            return Ok(m.to_newick_with(names, false, false));
        }
        Dendrogram::by_rank(self.tree.clone())
            .to_newick(&Newick {
                names,
                lengths: false,
                support: None,
                rooted: false,
            })
            .map_err(to_py)
    }

    /// ``Tree("((a,b),c);")``.
    fn __repr__(&self) -> PyResult<String> {
        Ok(format!("Tree({:?})", self.__str__()?))
    }
}

/// Rebuilds a pickled `Tree` (see `Tree.__reduce__`).
#[pyfunction]
#[pyo3(signature = (text, names, heights, linkage=None, clades=None, log_credibility=None))]
fn _tree_from_state(
    text: &str,
    names: Option<Vec<String>>,
    heights: Option<Vec<f64>>,
    linkage: Option<Vec<[f64; 4]>>,
    clades: Option<Vec<(Vec<usize>, f64)>>,
    log_credibility: Option<f64>,
) -> PyResult<PyTree> {
    let tree = trellis::Tree::from_json_str(text).map_err(to_py)?;
    let n = tree.num_leaves();
    let t = PyTree::new(tree, names.map(Arc::new), heights);
    let t = match linkage {
        Some(z) => t.with_linkage(z),
        None => t,
    };
    Ok(match clades {
        Some(c) => {
            let c = c
                .into_iter()
                .map(|(members, p)| Clade { members, p })
                .collect();
            let s = SupportTree::new(n, c).map_err(to_py)?;
            t.with_clades(match log_credibility {
                Some(x) => s.with_log_credibility(x),
                None => s,
            })
        }
        None => t,
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTree>()?;
    m.add_function(wrap_pyfunction!(_tree_from_state, m)?)
}

/// The marginals of `clusters` when `support` is a posterior (an object with
/// the `HierarchyPosterior` method `_cluster_probabilities`; asked by name,
/// so that this module stays below the posterior's), else `None`.
fn posterior_support(
    support: &Bound<'_, PyAny>,
    clusters: &[Vec<usize>],
) -> PyResult<Option<Vec<f64>>> {
    match support.getattr("_cluster_probabilities") {
        Ok(method) => method.call1((clusters.to_vec(),))?.extract().map(Some),
        Err(_) => Ok(None),
    }
}
