//! The planner (`trellis::plan`): the time and memory of an exact
//! computation, estimated before it starts, and whether it fits a budget.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use trellis::input::Naming;
use trellis::models::ModelName;
use trellis::plan::{Budget, Task, choose, default_threads};

use crate::errors::{input, to_py};

/// The threads `n_jobs` stands for: `None` the default pool (one per core),
/// `-1` every core, else `n_jobs` (1 to `MAX_JOBS`).
fn threads(n_jobs: Option<i64>) -> PyResult<usize> {
    match n_jobs {
        None => Ok(default_threads()),
        Some(-1) => Ok(std::thread::available_parallelism().map_or(1, |c| c.get())),
        Some(k) if k >= 1 && k as usize <= crate::MAX_JOBS => Ok(k as usize),
        Some(k) => Err(input(format!(
            "n_jobs must be -1 (every core) or between 1 and {}, not {k}",
            crate::MAX_JOBS
        ))),
    }
}

/// `plan(n, model, task, n_jobs, max_memory, time_limit)`: the estimate of
/// an exact computation as a dict (see `trellis.plan`).
#[pyfunction]
#[pyo3(name = "plan", signature = (n, model="hcc", task="logz", n_jobs=None, max_memory=None, time_limit=None))]
fn estimate<'py>(
    py: Python<'py>,
    n: usize,
    model: &str,
    task: &str,
    n_jobs: Option<i64>,
    max_memory: Option<f64>,
    time_limit: Option<f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let model: ModelName = model.parse().map_err(to_py)?;
    let task: Task = task.parse().map_err(to_py)?;
    trellis::job::time_limit(time_limit, Naming::Keywords).map_err(to_py)?;
    let budget = Budget {
        memory_bytes: crate::memory_limit(max_memory)?,
        seconds: time_limit,
    };
    let (method, e) = choose(n, model, task, threads(n_jobs)?, &budget).map_err(to_py)?;
    let d = PyDict::new(py);
    d.set_item("n", e.n)?;
    d.set_item("model", e.model.id())?;
    d.set_item("task", e.task.name())?;
    d.set_item("memory_bytes", e.memory_bytes)?;
    d.set_item("seconds", e.seconds)?;
    d.set_item("splits", e.splits)?;
    d.set_item("kernel", e.kernel)?;
    d.set_item("threads", e.threads)?;
    d.set_item("method", method.name())?;
    d.set_item("summary", e.to_string())?;
    Ok(d)
}

/// Adds `plan` to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(estimate, m)?)?;
    Ok(())
}
