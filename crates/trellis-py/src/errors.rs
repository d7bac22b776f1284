//! The Python exceptions, and the one place library errors become them.
//!
//! - `TrellisError(ValueError)`: the base of every error of the package.
//! - `InputError(TrellisError)`: bad input (a matrix, a parameter, a tree,
//!   a file).
//! - `TooLargeError(TrellisError)`: a problem that would not fit (too many
//!   points for the method, or more memory than allowed), with the memory it
//!   would need in the message.
//!
//! A run cancelled by Ctrl-C raises `KeyboardInterrupt`; a time limit
//! reached raises `TrellisError`.

use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use trellis::ErrorKind;

pyo3::create_exception!(
    trellis,
    TrellisError,
    PyValueError,
    "The base class of every error raised by trellis."
);
pyo3::create_exception!(
    trellis,
    InputError,
    TrellisError,
    "Bad input: a matrix, a parameter, a tree or a file that trellis refuses."
);
pyo3::create_exception!(
    trellis,
    TooLargeError,
    TrellisError,
    "A problem that would not fit: too many points for the method, or more memory than allowed."
);

/// A library error as the Python exception of its class.
pub fn to_py(e: trellis::Error) -> PyErr {
    let message = e.to_string();
    match e.kind() {
        ErrorKind::TooManyPoints { .. }
        | ErrorKind::OutOfMemory { .. }
        | ErrorKind::TooMuchMemory { .. }
        | ErrorKind::TimeBudget { .. } => TooLargeError::new_err(message),
        ErrorKind::Cancelled => PyKeyboardInterrupt::new_err("cancelled"),
        ErrorKind::TimeLimit { .. } | ErrorKind::SearchBudget { .. } | ErrorKind::Io { .. } => {
            TrellisError::new_err(message)
        }
        _ => InputError::new_err(message),
    }
}

/// A bad argument found by the bindings themselves.
pub fn input(message: impl Into<String>) -> PyErr {
    InputError::new_err(message.into())
}

/// Adds the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("TrellisError", py.get_type::<TrellisError>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("TooLargeError", py.get_type::<TooLargeError>())?;
    Ok(())
}
