//! The arguments of the compiled classes' public methods, checked by the
//! package's own checks (`trellis._args`, shared with the Python functions):
//! a bad argument is an `InputError` naming it, not PyO3's `TypeError` or
//! `OverflowError`. Each function here is a `from_py_with` converter of one
//! argument, so the argument's name is in the message.

use numpy::PyArray2;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The check `trellis._args.<name>`.
fn check<'py>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    obj.py().import("trellis._args")?.getattr(name)
}

/// `k`: a number of samples, an integer `>= 0`.
pub fn k(obj: &Bound<'_, PyAny>) -> PyResult<usize> {
    check(obj, "integer")?
        .call1((obj, "k", 0, usize::MAX))?
        .extract()
}

/// `seed`: an integer in `[0, 2**64 - 1]`.
pub fn seed(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    check(obj, "seed")?.call1((obj, "seed"))?.extract()
}

/// `min_p`: a probability.
pub fn min_p(obj: &Bound<'_, PyAny>) -> PyResult<f64> {
    check(obj, "probability")?.call1((obj, "min_p"))?.extract()
}

/// `lengths`: a boolean.
pub fn lengths(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    check(obj, "flag")?.call1((obj, "lengths"))?.extract()
}

/// `threshold`: a probability (the consensus checks its range).
pub fn threshold(obj: &Bound<'_, PyAny>) -> PyResult<f64> {
    check(obj, "probability")?
        .call1((obj, "threshold"))?
        .extract()
}

/// `cost_split`: a real number (its range is the library's to check).
pub fn cost_split(obj: &Bound<'_, PyAny>) -> PyResult<f64> {
    check(obj, "number")?.call1((obj, "cost_split"))?.extract()
}

/// `cost_join`: a real number (its range is the library's to check).
pub fn cost_join(obj: &Bound<'_, PyAny>) -> PyResult<f64> {
    check(obj, "number")?.call1((obj, "cost_join"))?.extract()
}

/// `lengths`: a boolean or `None`.
pub fn optional_lengths(obj: &Bound<'_, PyAny>) -> PyResult<Option<bool>> {
    if obj.is_none() {
        return Ok(None);
    }
    lengths(obj).map(Some)
}

/// `heights`: a string or `None`.
pub fn heights(obj: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    let kwargs = PyDict::new(obj.py());
    kwargs.set_item("optional", true)?;
    check(obj, "text")?
        .call((obj, "heights"), Some(&kwargs))?
        .extract()
}

/// `text`: a string (Newick).
pub fn text(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    check(obj, "text")?.call1((obj, "text"))?.extract()
}

/// `names`: one name per point (each `str(x)`), or `None`.
pub fn names(obj: &Bound<'_, PyAny>) -> PyResult<Option<Vec<String>>> {
    check(obj, "names")?.call1((obj, "names"))?.extract()
}

/// `z`: a SciPy linkage matrix as a 2-D float64 array.
pub fn z<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray2<f64>>> {
    Ok(check(obj, "matrix")?
        .call1((obj, "z"))?
        .cast_into::<PyArray2<f64>>()?)
}

/// `repr(x)` on one line, cut to a readable length for a message.
pub fn show(x: &Bound<'_, PyAny>) -> PyResult<String> {
    check(x, "show")?.call1((x,))?.extract()
}
