//! File readers: the library's one reader (`trellis::io`, RFC 4180 CSV and
//! `.npy`) as Python functions, so a file gives the same names and rows in
//! Python as in the `trellis` command and the web app.

use std::path::PathBuf;

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray2};
use pyo3::prelude::*;
use trellis::io::{NamesColumn, ReadOptions};

use crate::errors::{input, to_py};

/// The names column as Python gives it: `"auto"`, `None` or `"none"`, or a
/// 0-based index.
fn names_column(names_column: &Bound<'_, PyAny>) -> PyResult<NamesColumn> {
    if names_column.is_none() {
        return Ok(NamesColumn::None);
    }
    if let Ok(s) = names_column.extract::<String>() {
        return match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(NamesColumn::Auto),
            "none" => Ok(NamesColumn::None),
            _ => Err(input(format!(
                "names_column must be \"auto\", None or a 0-based column index, not {s:?}"
            ))),
        };
    }
    match names_column.extract::<i64>() {
        Ok(k) if k >= 0 => Ok(NamesColumn::Column(k as usize)),
        _ => Err(input(format!(
            "names_column must be \"auto\", None or a 0-based column index, not {names_column}"
        ))),
    }
}

/// A table as Python gets it: the names (or `None`) and the numbers.
type Named<'py> = (Option<Vec<String>>, Bound<'py, PyArray2<f64>>);

/// `read_table(path, header, names_column)`: the names (or `None`) and the
/// numbers of a CSV or `.npy` file (see `trellis.read_points`).
#[pyfunction]
#[pyo3(signature = (path, header=true, names_column=None))]
fn read_table<'py>(
    py: Python<'py>,
    path: PathBuf,
    header: bool,
    names_column: Option<&Bound<'py, PyAny>>,
) -> PyResult<Named<'py>> {
    let names = match names_column {
        Some(c) => self::names_column(c)?,
        None => NamesColumn::Auto,
    };
    let mut options = if header {
        ReadOptions::points()
    } else {
        ReadOptions::weights()
    };
    options = options.with_names(names);
    let table = py
        .detach(|| trellis::io::read_table(&path, &options))
        .map_err(to_py)?;
    let m = table.matrix;
    let array = Array2::from_shape_vec((m.rows, m.cols), m.data)
        .map_err(|e| input(e.to_string()))?
        .into_pyarray(py);
    Ok((table.names, array))
}

/// Adds the readers to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(read_table, m)?)?;
    Ok(())
}
