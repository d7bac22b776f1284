//! Python bindings of the trellis library: the extension module
//! `trellis._core` of the `trellis-clustering` package.
//!
//! The bindings are thin: they convert numpy arrays and Python values to the
//! library's types, run the computation with the interpreter released, and
//! wrap the library's owned results in Python classes. The Python package
//! (`python/trellis`) re-exports these and adds the scikit-learn estimators
//! and the Dask scale-out.
//!
//! Every long computation runs on a worker thread (in a rayon pool of
//! `n_jobs` threads when given) while the calling thread waits with the
//! interpreter released and checks for Ctrl-C every 50 ms; Ctrl-C cancels the
//! computation through the library's progress callback and raises
//! `KeyboardInterrupt`.

mod args;
mod errors;
mod interactive;
mod io;
mod jets;
mod plan;
mod posterior;
mod score;
mod search;
mod tree;

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use numpy::PyReadonlyArray2;
use pyo3::prelude::*;
use trellis::{Matrix, Options, Progress, Weights};

use errors::{input, to_py};

/// The largest `n_jobs` accepted (a bound on threads started per call).
const MAX_JOBS: usize = 1024;

/// A thread pool of `n_jobs` threads, or `None` for rayon's global pool.
fn pool(n_jobs: Option<i64>) -> PyResult<Option<rayon::ThreadPool>> {
    let threads = match n_jobs {
        None => return Ok(None),
        Some(k) if k >= 1 && k as usize <= MAX_JOBS => k as usize,
        // scikit-learn's convention: -1 is every core.
        Some(-1) => std::thread::available_parallelism().map_or(1, |c| c.get()),
        Some(k) => {
            return Err(input(format!(
                "n_jobs must be -1 (every core) or between 1 and {MAX_JOBS}, not {k}"
            )));
        }
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map(Some)
        .map_err(|e| errors::TrellisError::new_err(format!("cannot start {threads} threads: {e}")))
}

/// Memory limit in bytes from `max_memory` (bytes; `None` for what the OS
/// reports available).
fn memory_limit(max_memory: Option<f64>) -> PyResult<Option<u64>> {
    match max_memory {
        None => Ok(None),
        Some(b) if b.is_finite() && b >= 1.0 => Ok(Some(b.min(u64::MAX as f64) as u64)),
        Some(b) => Err(input(format!(
            "max_memory is a number of bytes of at least 1, not {b}"
        ))),
    }
}

/// Runs `f` with the interpreter released, on `n_jobs` threads, cancellable
/// with Ctrl-C (see the crate docs).
fn run<T, F>(py: Python<'_>, n_jobs: Option<i64>, max_memory: Option<f64>, f: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce(&Options<'_>) -> trellis::Result<T> + Send,
{
    let pool = pool(n_jobs)?;
    let memory_limit = memory_limit(max_memory)?;
    let cancel = AtomicBool::new(false);
    let mut interrupt = None;
    let outcome = std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel();
        let cancel = &cancel;
        let pool = &pool;
        s.spawn(move || {
            let check = |_: Progress<'_>| {
                if cancel.load(Ordering::Relaxed) {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            };
            let options = Options {
                memory_limit,
                progress: Some(&check),
                ..Options::default()
            };
            let result = match pool {
                Some(p) => p.install(|| f(&options)),
                None => f(&options),
            };
            let _ = tx.send(result);
        });
        let mut rx = rx;
        loop {
            // The receiver is not `Sync`: move it into the released section and back.
            let (received, back) =
                py.detach(move || (rx.recv_timeout(Duration::from_millis(50)), rx));
            rx = back;
            match received {
                Ok(result) => break Some(result),
                Err(mpsc::RecvTimeoutError::Disconnected) => break None,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if interrupt.is_none() {
                        if let Err(e) = py.check_signals() {
                            interrupt = Some(e);
                            cancel.store(true, Ordering::Relaxed);
                        }
                    }
                }
            }
        }
    });
    if let Some(e) = interrupt {
        return Err(e);
    }
    match outcome {
        Some(result) => result.map_err(to_py),
        None => Err(errors::TrellisError::new_err(
            "internal error: the computation stopped without an answer (a bug; please report it)",
        )),
    }
}

/// A square numpy matrix as the library's [`Matrix`].
fn matrix(a: &PyReadonlyArray2<'_, f64>) -> PyResult<Matrix> {
    let view = a.as_array();
    let rows = view.outer_iter().map(|r| r.to_vec()).collect();
    Matrix::from_rows(rows).map_err(to_py)
}

/// Validated pairwise weights from a numpy matrix.
fn weights(a: &PyReadonlyArray2<'_, f64>) -> PyResult<Weights> {
    let (rows, cols) = a.as_array().dim();
    if rows != cols {
        return Err(input(format!(
            "weights must be a square (n, n) matrix, not {rows} x {cols}"
        )));
    }
    Weights::from_matrix(&matrix(a)?).map_err(to_py)
}

/// Checks `names` against `n` points: one non-empty name per point.
fn check_names(names: Option<Vec<String>>, n: usize) -> PyResult<Option<Vec<String>>> {
    if let Some(names) = &names {
        if names.len() != n {
            return Err(input(format!(
                "{} names were given for {n} points",
                names.len()
            )));
        }
        if let Some(i) = names.iter().position(|s| s.is_empty()) {
            return Err(input(format!("the name of point {i} is empty")));
        }
        let mut seen = std::collections::HashSet::new();
        if let Some(s) = names.iter().find(|s| !seen.insert(s.as_str())) {
            return Err(input(format!("the name {s:?} is used twice")));
        }
    }
    Ok(names)
}

/// Exact and approximate inference over clusterings (the compiled core).
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    tree::register(m)?;
    posterior::register(m)?;
    score::register(m)?;
    search::register(m)?;
    jets::register(m)?;
    interactive::register(m)?;
    io::register(m)?;
    plan::register(m)?;
    m.add("MAX_JOBS", MAX_JOBS)?;
    Ok(())
}
