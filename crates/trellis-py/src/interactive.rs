//! The compiled half of `trellis.interactive`: a thin layer over
//! [`trellis::ddt::Session`], the interactive loop for a person (the library
//! behind `trellis interactive` and the web app), and the triplet distance.
//!
//! Everything random (the chain, the choice of shown points) and every query
//! strategy is the library's; this file converts points, names and trees.

use std::sync::{Arc, Mutex, MutexGuard};

use numpy::PyReadonlyArray2;
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use trellis::Named;
use trellis::ddt::{
    Answer, Dataset, Ddt, LcaDepths, Params, Query, QueryOptions, Rejection, Session, Strategy,
    Triplet, check_strategy, snapshot, variance,
};
use trellis::input::Naming;

use crate::errors::{TrellisError, input, to_py};
use crate::tree::PyTree;

/// Iterations run between two checks for Ctrl-C.
const CHUNK: usize = 256;

/// A variance (`sigma`, `sigma0`): a number, one number per feature, or a
/// specification string (`"var/2"`, `"1/9"`).
fn variance_of(v: &Bound<'_, PyAny>, points: &Dataset, what: &str) -> PyResult<Vec<f64>> {
    let out = if let Ok(s) = v.extract::<String>() {
        variance(&s, points).map_err(|e| input(format!("{what}: {e}")))?
    } else if let Ok(x) = v.extract::<f64>() {
        vec![x; points.dim()]
    } else if let Ok(x) = v.extract::<Vec<f64>>() {
        if x.len() != points.dim() {
            return Err(input(format!(
                "{what} has {} values but the points have {} features",
                x.len(),
                points.dim()
            )));
        }
        x
    } else {
        return Err(input(format!(
            "{what} must be a number, one number per feature, or a string such as \"var/2\" or \"1/9\""
        )));
    };
    if let Some(x) = out.iter().find(|x| !(x.is_finite() && **x > 0.0)) {
        return Err(input(format!(
            "{what} must be positive and finite, not {x}"
        )));
    }
    Ok(out)
}

/// A strategy by name.
fn strategy_of(name: &str) -> PyResult<Strategy> {
    Strategy::parse(name).map_err(to_py)
}

/// Heights in post-order (as [`PyTree`] keeps them) from values of the
/// internal nodes of `tree` in pre-order (as the library gives `1 - t`).
fn post_order(tree: &trellis::Tree, pre: &[f64]) -> Vec<f64> {
    let mut out = Vec::with_capacity(pre.len());
    let mut next = 0;
    let mut stack = vec![(tree, None)];
    while let Some((t, seen)) = stack.pop() {
        match (t, seen) {
            (trellis::Tree::Leaf(_), _) => {}
            (trellis::Tree::Node(..), Some(i)) => out.push(pre[i]),
            (trellis::Tree::Node(l, r), None) => {
                stack.push((t, Some(next)));
                next += 1;
                stack.push((r, None));
                stack.push((l, None));
            }
        }
    }
    out
}

/// A Dirichlet diffusion tree posterior sampler over points, under triplet
/// constraints given by a user (Vikram & Dasgupta, ICML 2016): the library's
/// interactive session, behind ``trellis interactive`` and the web app.
///
/// Safe to share between threads: the session is behind a lock, taken with
/// the interpreter released (so a thread waiting for it never blocks the
/// others), and the long calls (``run``, ``query``, ``add_triplet``) run
/// with the interpreter released; calls from several threads take turns.
#[pyclass(module = "trellis", name = "Sampler", frozen)]
pub struct Sampler {
    session: Mutex<Session>,
    /// The points' names (their indices as text when none were given).
    names: Arc<Vec<String>>,
    named: bool,
}

/// Why a call changed nothing, found with the interpreter released.
enum Refused {
    /// The session refused a triplet.
    Triplet(Triplet, Rejection),
    /// The session refused another answer.
    Answer(Rejection),
    /// The library failed.
    Error(trellis::Error),
}

impl Sampler {
    /// The session, locked: waits with the interpreter released. A session
    /// whose lock was poisoned (a panic in the library while it ran) is not
    /// used again.
    fn session(&self, py: Python<'_>) -> PyResult<MutexGuard<'_, Session>> {
        self.session.lock_py_attached(py).map_err(|_| {
            TrellisError::new_err(
                "this Sampler stopped in an internal error (a bug; please report it) and cannot be used again",
            )
        })
    }

    /// A refusal as the Python exception.
    fn refused(&self, r: Refused) -> PyErr {
        match r {
            Refused::Triplet(t, r) => self.rejected(&t, r),
            Refused::Answer(r) => input(r.to_string()),
            Refused::Error(e) => to_py(e),
        }
    }

    /// A point given by name or index.
    fn point(&self, x: &Bound<'_, PyAny>) -> PyResult<usize> {
        let n = self.names.len();
        if let Ok(s) = x.extract::<String>() {
            return self
                .names
                .iter()
                .position(|m| *m == s)
                .ok_or_else(|| input(format!("no point is named {s:?}")));
        }
        let not_a_point = || -> PyResult<PyErr> {
            Ok(input(format!(
                "a point is a name (str) or an index (int), not {}",
                crate::args::show(x)?
            )))
        };
        if x.is_instance_of::<pyo3::types::PyBool>() {
            return Err(not_a_point()?);
        }
        match x.extract::<i64>() {
            Ok(i) if i >= 0 && (i as usize) < n => Ok(i as usize),
            Ok(i) => Err(input(format!(
                "point index {i} is out of range for {n} points"
            ))),
            Err(_) => Err(not_a_point()?),
        }
    }

    /// `({a, b}, c)` in the points' names.
    fn show(&self, t: &Triplet) -> String {
        let n = &self.names;
        format!("({{{:?}, {:?}}}, {:?})", n[t.a], n[t.b], n[t.c])
    }

    /// A refused answer as an `InputError`, in the points' names.
    fn rejected(&self, t: &Triplet, r: Rejection) -> PyErr {
        match r {
            Rejection::Conflict(ts) => input(format!(
                "the triplet {} conflicts with the triplets in force {}; nothing was changed",
                self.show(t),
                ts.iter()
                    .map(|c| self.show(c))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            other => input(other.to_string()),
        }
    }

    /// A query as a tree over its points `0..k`, named by the points' names.
    fn shown(&self, q: &Query) -> PyTree {
        let points = q.points();
        let mut pos = vec![usize::MAX; self.names.len()];
        for (i, &p) in points.iter().enumerate() {
            pos[p] = i;
        }
        let tree = q.tree().relabel(|p| pos[p]);
        let heights = post_order(&tree, q.one_minus_times());
        let names = points.iter().map(|&p| self.names[p].clone()).collect();
        PyTree::new(tree, Some(Arc::new(names)), Some(heights))
    }

    /// A triplet as a Python tuple of names (named points) or indices.
    fn triplet_obj(&self, py: Python<'_>, t: &Triplet) -> PyResult<Py<PyAny>> {
        Ok(if self.named {
            let n = &self.names;
            (n[t.a].clone(), n[t.b].clone(), n[t.c].clone())
                .into_pyobject(py)?
                .into_any()
                .unbind()
        } else {
            (t.a, t.b, t.c).into_pyobject(py)?.into_any().unbind()
        })
    }
}

#[pymethods]
impl Sampler {
    /// ``points``: an ``(n, d)`` array, ``n >= 3``. ``names``: one label
    /// per point (default: none; points are then named by their index as
    /// text in queries). ``sigma``: Brownian-motion variance per unit time
    /// (a number, one per feature, or ``"var/K"``: each feature's sample
    /// variance over ``K``; default ``"var/2"`` as the CLI). ``seed``: the
    /// chain's and the queries' seed (same seed, same run). ``c``:
    /// divergence constant of ``a(t) = c / (1 - t)``. ``sigma0``: variance
    /// of the start location (default ``0.5``). ``leaf_noise``: observation
    /// noise in units of ``sigma``. ``rebuild``: how a violated triplet
    /// rebuilds the tree (only ``"guided"``: the session's). ``subset_size``
    /// and ``candidates``: the size of a shown subset and the number of
    /// candidate subsets of an active query. ``strategy``: the session's
    /// query strategy (``query`` may change it). ``samples``: trees kept from
    /// the last iterations for active queries.
    #[new]
    #[pyo3(signature = (points, names=None, sigma=None, seed=0, c=1.0, sigma0=None, leaf_noise=0.01, rebuild="guided", subset_size=10, candidates=20, strategy="active", samples=100))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        points: PyReadonlyArray2<'_, f64>,
        names: Option<Vec<String>>,
        sigma: Option<&Bound<'_, PyAny>>,
        seed: u64,
        c: f64,
        sigma0: Option<&Bound<'_, PyAny>>,
        leaf_noise: f64,
        rebuild: &str,
        subset_size: usize,
        candidates: usize,
        strategy: &str,
        samples: usize,
    ) -> PyResult<Sampler> {
        let view = points.as_array();
        let n = view.nrows();
        if n < 3 {
            return Err(input(format!(
                "interactive clustering needs at least 3 points, not {n}"
            )));
        }
        if view.ncols() == 0 {
            return Err(input("the points need at least one feature"));
        }
        let named = names.is_some();
        let names = crate::check_names(names, n)?
            .unwrap_or_else(|| (0..n).map(|i| i.to_string()).collect());
        let rows = view.outer_iter().map(|r| r.to_vec()).collect();
        let data = Dataset::new(names.clone(), rows).map_err(to_py)?;
        let sigma = match sigma {
            Some(s) => variance_of(s, &data, "sigma")?,
            None => variance("var/2", &data).map_err(|e| input(format!("sigma: {e}")))?,
        };
        let sigma0 = match sigma0 {
            Some(s) => variance_of(s, &data, "sigma0")?,
            None => vec![0.5; data.dim()],
        };
        if !(c.is_finite() && c > 0.0) {
            return Err(input(format!("c must be a positive number, not {c}")));
        }
        if !(leaf_noise.is_finite() && leaf_noise >= 0.0) {
            return Err(input(format!(
                "leaf_noise must be a number >= 0, not {leaf_noise}"
            )));
        }
        match rebuild {
            "guided" => {}
            "balanced" => {
                return Err(input(
                    "rebuild=\"balanced\" is not available here: an interactive session rebuilds \"guided\"",
                ));
            }
            other => {
                return Err(input(format!("rebuild must be \"guided\", not {other:?}")));
            }
        }
        let options = QueryOptions {
            subset_size,
            candidates,
            samples,
        }
        .checked(Naming::Keywords)
        .map_err(to_py)?;
        let strategy = strategy_of(strategy)?;
        check_strategy(strategy).map_err(to_py)?;
        let params = Params {
            c,
            sigma,
            sigma0,
            mu0: data.mean(),
            leaf_noise,
        };
        let model = Ddt::new(&data, params).map_err(to_py)?;
        let session =
            Session::new(model, strategy, options, Vec::new(), None, seed).map_err(to_py)?;
        Ok(Sampler {
            session: Mutex::new(session),
            names: Arc::new(names),
            named,
        })
    }

    /// Runs ``iterations`` Metropolis-Hastings iterations (an SPR and a time
    /// move each) with the interpreter released; Ctrl-C stops early (the
    /// chain keeps the iterations made). ``iterations``: an integer ``>= 0``.
    fn run(&self, py: Python<'_>, iterations: usize) -> PyResult<()> {
        let mut guard = self.session(py)?;
        let session = &mut *guard;
        crate::run(py, None, None, move |o| {
            let mut done = 0;
            while done < iterations {
                if let Some(p) = o.progress {
                    let progress = trellis::Progress {
                        stage: "mcmc",
                        done: done as u64,
                        total: iterations as u64,
                        resumed: 0,
                    };
                    if p(progress).is_break() {
                        break;
                    }
                }
                let k = (iterations - done).min(CHUNK);
                session.run(k);
                done += k;
            }
            Ok(())
        })
    }

    /// Adds the triplet constraint ``({a, b}, c)``: ``a`` and ``b`` belong
    /// together, apart from ``c`` (``a``, ``b``, ``c``: three different
    /// points, each a name or an index). It answers the current query when
    /// that shows the three points; otherwise the whole tree is shown and
    /// answered (the interleaved alternation restarts). The tree is rebuilt
    /// at once if it violates it. Raises ``InputError`` naming the
    /// conflicting triplets when the constraints can no longer all hold
    /// (then nothing changes). Returns whether the tree was rebuilt.
    fn add_triplet(
        &self,
        py: Python<'_>,
        a: &Bound<'_, PyAny>,
        b: &Bound<'_, PyAny>,
        c: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let (a, b, c) = (self.point(a)?, self.point(b)?, self.point(c)?);
        let t =
            Triplet::new(a, b, c).map_err(|_| input("a triplet needs three different points"))?;
        let mut guard = self.session(py)?;
        let session = &mut *guard;
        let outcome = py.detach(move || {
            if let Some(ts) = session.conflicts(t) {
                return Err(Refused::Triplet(t, Rejection::Conflict(ts)));
            }
            let rebuilt = !session.tree().satisfies(&t);
            let shown = session
                .current()
                .is_some_and(|q| [a, b, c].iter().all(|p| q.points().contains(p)));
            let applied = if shown {
                session.apply(Answer::Triplet(t))
            } else {
                let back = session.strategy();
                session
                    .set_strategy(Strategy::Smart)
                    .map_err(Refused::Error)?;
                session.query();
                let applied = session.apply(Answer::Triplet(t));
                session.set_strategy(back).map_err(Refused::Error)?;
                applied
            };
            applied.map_err(|r| Refused::Triplet(t, r))?;
            Ok(rebuilt)
        });
        outcome.map_err(|r| self.refused(r))
    }

    /// Takes back the last triplet given (the current tree stays; it
    /// satisfies the remaining triplets) and returns it, or ``None`` when
    /// there is none.
    fn undo(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let mut session = self.session(py)?;
        while let Some(answer) = session.undo() {
            if let Answer::Triplet(t) = answer {
                return self.triplet_obj(py, &t).map(Some);
            }
        }
        Ok(None)
    }

    /// The current tree: names, and heights ``1 - t`` (``t`` the DDT
    /// divergence times; leaves at 0, so branch lengths are time spans).
    #[getter]
    fn tree(&self, py: Python<'_>) -> PyResult<PyTree> {
        let (topology, one_minus_times) = snapshot(self.session(py)?.tree());
        let heights = post_order(&topology, &one_minus_times);
        let names = self.named.then(|| self.names.clone());
        Ok(PyTree::new(topology, names, Some(heights)))
    }

    /// The triplet constraints in force, in the order given, ``(a, b, c)``
    /// for ``({a, b}, c)``: names when the points have names, else indices.
    #[getter]
    fn triplets(&self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        let session = self.session(py)?;
        let mut seen = std::collections::HashSet::new();
        session
            .answers()
            .iter()
            .filter_map(|a| match a {
                Answer::Triplet(t) => Some(t),
                Answer::Accept => None,
            })
            .filter(|t| seen.insert((t.a.min(t.b), t.a.max(t.b), t.c)))
            .map(|t| self.triplet_obj(py, t))
            .collect()
    }

    /// ``ln p(T, t) + ln p(X | T, t)`` of the current state.
    #[getter]
    fn log_likelihood(&self, py: Python<'_>) -> PyResult<f64> {
        Ok(self.session(py)?.chain().log_joint())
    }

    /// Number of points.
    #[getter]
    fn n(&self) -> usize {
        self.names.len()
    }

    /// The session's query strategy.
    #[getter]
    fn strategy(&self, py: Python<'_>) -> PyResult<&'static str> {
        Ok(self.session(py)?.strategy().name())
    }

    /// Chain iterations run so far.
    #[getter]
    fn iterations(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.session(py)?.iterations())
    }

    /// What to show the user next, by ``strategy`` (the CLI's names; ``None``
    /// for the session's, another name changes it): ``"simple"``,
    /// ``"random"``, ``"active"``, ``"interleaved"``, ``"smart"``, or
    /// ``"vanilla"`` (nothing: ``None``). A query left unanswered counts as
    /// accepted when the next one is asked. Runs with the interpreter
    /// released.
    ///
    /// Returns the current tree induced on the chosen points as a ``Tree``
    /// over them with heights ``1 - t``, named by the points' names (or
    /// indices as text); answer with ``add_triplet``.
    #[pyo3(signature = (strategy=None))]
    fn query(&self, py: Python<'_>, strategy: Option<&str>) -> PyResult<Option<PyTree>> {
        let strategy = strategy.map(strategy_of).transpose()?;
        let mut guard = self.session(py)?;
        let session = &mut *guard;
        let strategy = strategy.unwrap_or_else(|| session.strategy());
        if strategy == Strategy::Vanilla {
            return Ok(None);
        }
        let q = py.detach(move || {
            if strategy != session.strategy() {
                session.set_strategy(strategy).map_err(Refused::Error)?;
            } else if session.current().is_some() {
                session.apply(Answer::Accept).map_err(Refused::Answer)?;
            }
            Ok(session.query().clone())
        });
        let q = q.map_err(|r| self.refused(r))?;
        Ok(Some(self.shown(&q)))
    }

    /// ``Sampler(n=..., triplets=..., strategy=...)``.
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let session = self.session(py)?;
        Ok(format!(
            "Sampler(n={}, triplets={}, strategy={:?})",
            self.names.len(),
            session.constraints().len(),
            session.strategy().name()
        ))
    }
}

/// The triplet distance ``TD(tree_a, tree_b)`` (Vikram & Dasgupta, Eq. 1):
/// among the triplets that ``tree_a`` (the target) resolves, the fraction
/// that ``tree_b`` does not satisfy. Trees with names on both are matched by
/// name; otherwise by point index.
#[pyfunction]
fn triplet_distance(tree_a: PyRef<'_, PyTree>, tree_b: PyRef<'_, PyTree>) -> PyResult<f64> {
    let n = tree_a.tree.num_leaves();
    if tree_b.tree.num_leaves() != n {
        return Err(input(format!(
            "the trees have {n} and {} points; the triplet distance compares trees over the same points",
            tree_b.tree.num_leaves()
        )));
    }
    let b = match (&tree_a.names, &tree_b.names) {
        (Some(na), Some(nb)) => {
            let index: std::collections::HashMap<&str, usize> = na
                .iter()
                .enumerate()
                .map(|(i, s)| (s.as_str(), i))
                .collect();
            let map =
                nb.iter()
                    .map(|s| {
                        index.get(s.as_str()).copied().ok_or_else(|| {
                            input(format!("the point {s:?} of tree_b is not in tree_a"))
                        })
                    })
                    .collect::<PyResult<Vec<usize>>>()?;
            tree_b.tree.relabel(|i| map[i])
        }
        _ => tree_b.tree.clone(),
    };
    let da = LcaDepths::from_tree(&tree_a.tree, n).map_err(to_py)?;
    let db = LcaDepths::from_tree(&b, n).map_err(to_py)?;
    Ok(trellis::ddt::triplet_distance(&da, &db).0)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Sampler>()?;
    m.add_function(wrap_pyfunction!(triplet_distance, m)?)?;
    Ok(())
}
