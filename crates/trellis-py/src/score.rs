//! `trellis.score`: the cost of a given tree under a cost model of the
//! library's registry, as `trellis score --tree` computes it.

use numpy::PyReadonlyArray2;
use pyo3::prelude::*;
use trellis::with_cost_model;

use crate::errors::to_py;
use crate::posterior::cost_model;

/// The cost of ``tree`` (over every point) under ``model`` on ``data``
/// (weights, distances or points as ``kind`` says): the library's
/// `tree_cost` of the model built at ``beta``, as the CLI's `score` (the
/// cost does not depend on ``beta``; building the model checks it).
/// ``names``: the points' names, for Newick labels and named trees.
#[pyfunction]
#[pyo3(signature = (tree, data, kind="weights", model="hcc", beta=1.0, names=None))]
fn score(
    tree: &Bound<'_, PyAny>,
    data: PyReadonlyArray2<'_, f64>,
    kind: &str,
    model: &str,
    beta: f64,
    names: Option<Vec<String>>,
) -> PyResult<f64> {
    let cm = cost_model(&data, kind, model, beta)?;
    let n = cm.data().n();
    let names = crate::check_names(names, n)?;
    let tree = crate::tree::tree_arg(tree, names.as_deref())?;
    tree.validate(n, true).map_err(to_py)?;
    with_cost_model!(&cm, |m| trellis::tree_cost(m, &tree)).map_err(to_py)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(score, m)?)?;
    Ok(())
}
