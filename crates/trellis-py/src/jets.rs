//! The compiled half of `trellis.jets`: jets files, the Ginkgo simulator,
//! and clustering many jets in one call.
//!
//! Jets cross the boundary in a flat form that numpy and pickle handle
//! cheaply: every leaf of every jet in one `(M, 4)` array of `(E, px, py,
//! pz)`, `offsets` (`n_jets + 1` integers: jet `k` is rows
//! `offsets[k]..offsets[k + 1]`), `params` (`(n_jets, 3)`: `lambda`,
//! `lambda_root`, `delta_min`) and the ids. `jets_cluster` runs every jet in
//! parallel (rayon over jets; jets with more than `BIG_WORK` splits one at a
//! time, each with the trellis's own parallelism, as the CLI does).

use std::path::PathBuf;

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use rayon::prelude::*;
use trellis::baselines;
use trellis::ginkgo::{
    Ginkgo, Heuristic, Jet, JetsFile, Preset, SimulatorParams, SplitParams, Variant,
};
use trellis::{Dendrogram, MAX_POINTS, Named, Options, Trellis, total_splits, tree_log_potential};

use crate::errors::{TooLargeError, input, to_py};
use crate::tree::PyTree;

/// Jets whose exact trellis evaluates more splits run one at a time (as the CLI).
const BIG_WORK: u64 = 20_000_000;

/// A jets collection in the flat form: meta (JSON text), ids, leaves,
/// offsets, params and truth trees.
type Flat<'py> = (
    String,
    Vec<String>,
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray2<f64>>,
    Vec<Option<PyTree>>,
);

fn flatten(py: Python<'_>, file: JetsFile) -> PyResult<Flat<'_>> {
    let meta = serde_json::to_string(&file.meta)
        .map_err(|e| input(format!("the jets file's meta cannot be written: {e}")))?;
    let total: usize = file.jets.iter().map(Jet::len).sum();
    let mut leaves = Vec::with_capacity(total * 4);
    let mut offsets = Vec::with_capacity(file.jets.len() + 1);
    let mut params = Vec::with_capacity(file.jets.len() * 3);
    let mut ids = Vec::with_capacity(file.jets.len());
    let mut truth = Vec::with_capacity(file.jets.len());
    offsets.push(0i64);
    for jet in file.jets {
        for p in &jet.leaves {
            leaves.extend_from_slice(p);
        }
        offsets.push(offsets[offsets.len() - 1] + jet.len() as i64);
        params.extend_from_slice(&[jet.params.lambda, jet.params.lambda_root, jet.params.t_cut]);
        ids.push(jet.id);
        truth.push(jet.truth.map(|t| PyTree::new(t, None, None)));
    }
    let k = ids.len();
    let leaves = Array2::from_shape_vec((total, 4), leaves)
        .map_err(|e| input(e.to_string()))?
        .into_pyarray(py);
    let params = Array2::from_shape_vec((k, 3), params)
        .map_err(|e| input(e.to_string()))?
        .into_pyarray(py);
    Ok((meta, ids, leaves, offsets.into_pyarray(py), params, truth))
}

/// Reads and validates a jets file (the JSON format of `shared/data/ginkgo`,
/// see the library's `trellis::ginkgo` docs) in the flat form.
#[pyfunction]
fn jets_read(py: Python<'_>, path: PathBuf) -> PyResult<Flat<'_>> {
    let file = py.detach(|| JetsFile::read(&path)).map_err(to_py)?;
    flatten(py, file)
}

/// Simulates `n_jets` Ginkgo jets with `min_leaves..=max_leaves` leaves
/// (the library's `generate_file`, as `trellis generate`), in the flat form.
#[pyfunction]
fn jets_simulate<'py>(
    py: Python<'py>,
    n_jets: usize,
    min_leaves: usize,
    max_leaves: Option<usize>,
    seed: u64,
    preset: &str,
) -> PyResult<Flat<'py>> {
    let params = preset_params(preset)?;
    if n_jets == 0 {
        return Err(input("n_jets must be at least 1"));
    }
    let file = crate::run(py, None, None, |_| {
        trellis::ginkgo::generate_file(&params, preset, n_jets, min_leaves, max_leaves, seed)
    })?;
    flatten(py, file)
}

/// The likelihood parameters of the simulator's preset.
#[pyfunction]
fn jets_preset_params(preset: &str) -> PyResult<(f64, f64, f64)> {
    let p = preset_params(preset)?;
    Ok((p.lambda, p.lambda_root, p.t_cut))
}

/// The parameters of the simulator's preset named `name` ("qcd", "w").
fn preset_params(name: &str) -> PyResult<SimulatorParams> {
    let preset = Preset::parse(name).map_err(|e| input(e.to_string()))?;
    Ok(preset.params())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Method {
    Exact,
    Greedy,
    Beam,
    Astar,
}

/// One jet's result: the tree, its log-likelihood, `log Z` (exact only) and
/// the tree's heights.
struct Out {
    tree: trellis::Tree,
    log_likelihood: f64,
    log_z: f64,
    heights: Option<Vec<f64>>,
}

fn cluster_one(
    jet: &Jet,
    variant: Variant,
    method: Method,
    options: &Options<'_>,
) -> trellis::Result<Out> {
    let model = Ginkgo::new(jet, variant);
    let (tree, log_likelihood, log_z, model) = match method {
        Method::Exact => {
            let t = Trellis::with_options(model, options)?;
            let map = t.map().clone();
            let log_z = t.log_z();
            (map.tree, map.log_potential, log_z, t.model().clone())
        }
        Method::Greedy => {
            let tree = baselines::greedy(&model)?.tree;
            let ll = tree_log_potential(&model, &tree)?;
            (tree, ll, f64::NAN, model)
        }
        Method::Beam => {
            let width = baselines::default_beam_width(jet.len());
            let tree = baselines::beam_search_with(&model, width, options)?
                .swap_remove(0)
                .tree;
            let ll = tree_log_potential(&model, &tree)?;
            (tree, ll, f64::NAN, model)
        }
        Method::Astar => {
            let model = model.with_heuristic(Heuristic::H0);
            let out = trellis::astar::exact(&model, options)?;
            (out.best.tree, out.best.log_potential + 0.0, f64::NAN, model)
        }
    };
    let heights = Dendrogram::by_cost(&model, tree.clone())
        .ok()
        .map(|d| d.heights().to_vec());
    Ok(Out {
        tree,
        log_likelihood,
        log_z,
        heights,
    })
}

/// Checks one jet's leaves (as the jets-file reader does).
fn check_leaves(id: &str, rows: &[f64]) -> PyResult<Vec<[f64; 4]>> {
    let n = rows.len() / 4;
    if n < 2 {
        return Err(input(format!(
            "jet {id} has {n} leaf; a hierarchy needs at least 2"
        )));
    }
    let mut out = Vec::with_capacity(n);
    for (i, p) in rows.chunks_exact(4).enumerate() {
        let p = [p[0], p[1], p[2], p[3]];
        if let Some(problem) = trellis::ginkgo::leaf_problem(i, &p) {
            return Err(input(format!("jet {id}: {problem}")));
        }
        out.push(p);
    }
    Ok(out)
}

/// The jets of the flat form, validated.
fn jets_of(
    leaves: &PyReadonlyArray2<'_, f64>,
    offsets: &PyReadonlyArray1<'_, i64>,
    params: &PyReadonlyArray2<'_, f64>,
    ids: Vec<String>,
) -> PyResult<Vec<Jet>> {
    let leaves = leaves.as_array();
    if leaves.ncols() != 4 {
        return Err(input(format!(
            "leaves must have 4 columns (E, px, py, pz), not {}",
            leaves.ncols()
        )));
    }
    let leaves = leaves
        .as_slice()
        .ok_or_else(|| input("leaves must be a C-contiguous array"))?;
    let offsets = offsets.as_array();
    let params = params.as_array();
    let k = ids.len();
    if offsets.len() != k + 1 || params.dim() != (k, 3) {
        return Err(input(format!(
            "{k} ids need {} offsets and ({k}, 3) params, not {} and {:?}",
            k + 1,
            offsets.len(),
            params.dim()
        )));
    }
    let m = (leaves.len() / 4) as i64;
    let mut jets = Vec::with_capacity(k);
    for (j, id) in ids.into_iter().enumerate() {
        let (a, b) = (offsets[j], offsets[j + 1]);
        if a < 0 || b < a || b > m {
            return Err(input(format!(
                "offsets must rise from 0 to the number of leaves ({m}); jet {id} spans {a}..{b}"
            )));
        }
        let rows = &leaves[a as usize * 4..b as usize * 4];
        let jet_leaves = check_leaves(&id, rows)?;
        let p = [params[(j, 0)], params[(j, 1)], params[(j, 2)]];
        for (name, v) in ["lambda", "lambda_root", "delta_min"].iter().zip(p) {
            if !(v.is_finite() && v > 0.0) {
                return Err(input(format!(
                    "jet {id}: params {name} must be a positive number, not {v}"
                )));
            }
        }
        jets.push(Jet {
            id,
            leaves: jet_leaves,
            params: SplitParams {
                lambda: p[0],
                lambda_root: p[1],
                t_cut: p[2],
            },
            truth: None,
            extra: Default::default(),
        });
    }
    Ok(jets)
}

/// A library error of one jet, as the Python exception of its class with
/// the jet's id in front.
fn jet_error(py: Python<'_>, id: &str, e: trellis::Error) -> PyErr {
    let err = to_py(e);
    if err.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
        return err;
    }
    let message = format!("jet {id}: {}", err.value(py));
    PyErr::from_type(err.get_type(py), message)
}

/// Per-jet results of `jets_cluster`: log-likelihoods, trees and `log Z`
/// (exact only).
type Clustered<'py> = (
    Bound<'py, PyArray1<f64>>,
    Vec<PyTree>,
    Option<Bound<'py, PyArray1<f64>>>,
);

/// Clusters every jet of the flat form in parallel: `method` (`"exact"`,
/// `"greedy"`, `"beam"`, `"astar"`) under `likelihood` (`"current"`,
/// `"legacy"`) on `n_jobs` threads.
#[pyfunction]
#[pyo3(signature = (leaves, offsets, params, ids, method="exact", likelihood="current", n_jobs=None, max_memory=None))]
#[allow(clippy::too_many_arguments)]
fn jets_cluster<'py>(
    py: Python<'py>,
    leaves: PyReadonlyArray2<'_, f64>,
    offsets: PyReadonlyArray1<'_, i64>,
    params: PyReadonlyArray2<'_, f64>,
    ids: Vec<String>,
    method: &str,
    likelihood: &str,
    n_jobs: Option<i64>,
    max_memory: Option<f64>,
) -> PyResult<Clustered<'py>> {
    let method = match method {
        "exact" => Method::Exact,
        "greedy" => Method::Greedy,
        "beam" => Method::Beam,
        "astar" => Method::Astar,
        other => {
            return Err(input(format!(
                "method must be \"exact\", \"greedy\", \"beam\" or \"astar\", not {other:?}"
            )));
        }
    };
    let variant = match likelihood {
        "current" => Variant::Current,
        "legacy" => Variant::Legacy,
        other => {
            return Err(input(format!(
                "likelihood must be \"current\" or \"legacy\", not {other:?}"
            )));
        }
    };
    let jets = jets_of(&leaves, &offsets, &params, ids)?;
    let limit = match method {
        Method::Exact => Some((MAX_POINTS, "the exact trellis")),
        Method::Astar => Some((trellis::astar::MAX_ASTAR_POINTS, "A*")),
        _ => None,
    };
    let too_large = limit.and_then(|(max, what)| {
        let jet = jets.iter().find(|j| j.len() > max)?;
        Some((max, what, jet))
    });
    if let Some((max, what, jet)) = too_large {
        return Err(TooLargeError::new_err(format!(
            "jet {} has {} leaves; {what} supports at most {max}: use method=\"beam\" or \"greedy\" for larger jets",
            jet.id,
            jet.len()
        )));
    }
    let work = |j: &Jet| {
        if method == Method::Exact {
            total_splits(j.len()) as u64
        } else {
            0
        }
    };
    let results = crate::run(py, n_jobs, max_memory, |options| {
        let (big, small): (Vec<usize>, Vec<usize>) =
            (0..jets.len()).partition(|&k| work(&jets[k]) > BIG_WORK);
        let mut results: Vec<Option<trellis::Result<Out>>> =
            (0..jets.len()).map(|_| None).collect();
        let small_results: Vec<trellis::Result<Out>> = small
            .par_iter()
            .map(|&k| cluster_one(&jets[k], variant, method, options))
            .collect();
        for (k, r) in small.into_iter().zip(small_results) {
            results[k] = Some(r);
        }
        for k in big {
            results[k] = Some(cluster_one(&jets[k], variant, method, options));
        }
        Ok(results
            .into_iter()
            .map(|r| r.expect("every jet ran"))
            .collect::<Vec<_>>())
    })?;
    let k = jets.len();
    let mut lls = Vec::with_capacity(k);
    let mut log_z = Vec::with_capacity(k);
    let mut trees = Vec::with_capacity(k);
    for (jet, r) in jets.iter().zip(results) {
        let out = r.map_err(|e| jet_error(py, &jet.id, e))?;
        lls.push(out.log_likelihood);
        log_z.push(out.log_z);
        trees.push(PyTree::new(out.tree, None, out.heights));
    }
    let log_z = (method == Method::Exact).then(|| log_z.into_pyarray(py));
    Ok((lls.into_pyarray(py), trees, log_z))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(jets_read, m)?)?;
    m.add_function(wrap_pyfunction!(jets_simulate, m)?)?;
    m.add_function(wrap_pyfunction!(jets_preset_params, m)?)?;
    m.add_function(wrap_pyfunction!(jets_cluster, m)?)?;
    Ok(())
}
