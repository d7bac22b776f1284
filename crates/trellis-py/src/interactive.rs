//! The compiled half of `trellis.interactive`: the Dirichlet diffusion tree
//! sampler under triplet constraints (`trellis::ddt`, the library behind
//! `trellis interactive`), its queries, and the triplet distance.

use std::sync::Arc;

use numpy::PyReadonlyArray2;
use pyo3::prelude::*;
use trellis::ddt::{
    Chain, Dataset, Ddt, DdtTree, LcaDepths, Params, Rebuild, Strategy, Triplet, induced,
    named_message, variance,
};

use crate::errors::{input, to_py};
use crate::tree::PyTree;

/// Trees kept from the end of each `run` for active queries (the paper's
/// iterations between queries).
const KEPT_SAMPLES: usize = 100;

/// SplitMix64: the queries' own random numbers (the chain keeps its own).
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform integer in `0..n` (`n >= 1`; the modulo bias is below 2^-40
    /// for the sizes here).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// `k` distinct points of `0..n`, in random order (partial Fisher-Yates).
    fn subset(&mut self, n: usize, k: usize) -> Vec<usize> {
        let mut all: Vec<usize> = (0..n).collect();
        let k = k.min(n);
        for i in 0..k {
            let j = i + self.below(n - i);
            all.swap(i, j);
        }
        all.truncate(k);
        all
    }
}

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

/// Edge counts between the leaves of `t` for the points of a subset
/// (`pos[point]` is its index in the subset): `k × k`, row-major.
fn pair_distances(t: &trellis::Tree, pos: &[usize], k: usize) -> Vec<u32> {
    let mut out = vec![0u32; k * k];
    // Each node's (subset index, depth below it) list, bottom-up.
    t.fold(
        |i| vec![(pos[i], 0u32)],
        |mut a, mut b| {
            for x in a.iter_mut().chain(b.iter_mut()) {
                x.1 += 1;
            }
            for &(i, di) in &a {
                for &(j, dj) in &b {
                    out[i * k + j] = di + dj;
                    out[j * k + i] = di + dj;
                }
            }
            a.extend(b);
            a
        },
    );
    out
}

/// The tree-distance variance of a subset over sampled trees (the paper's
/// Eq. 2): the largest variance of a pair's edge distance in the induced trees.
fn distance_variance(samples: &[DdtTree], n: usize, subset: &[usize]) -> f64 {
    if samples.len() < 2 {
        return 0.0;
    }
    let k = subset.len();
    let mut pos = vec![usize::MAX; n];
    for (i, &p) in subset.iter().enumerate() {
        pos[p] = i;
    }
    let (mut sum, mut sq) = (vec![0.0; k * k], vec![0.0; k * k]);
    for s in samples {
        let d = pair_distances(&induced(s, subset), &pos, k);
        for (i, &x) in d.iter().enumerate() {
            sum[i] += x as f64;
            sq[i] += (x as f64) * (x as f64);
        }
    }
    let m = samples.len() as f64;
    sum.iter()
        .zip(&sq)
        .map(|(s, q)| q / m - (s / m) * (s / m))
        .fold(0.0, f64::max)
}

/// A Dirichlet diffusion tree posterior sampler over points, under triplet
/// constraints given by a user (Vikram & Dasgupta, ICML 2016): the library
/// behind ``trellis interactive``.
#[pyclass(module = "trellis", name = "Sampler")]
pub struct Sampler {
    chain: Chain,
    /// The points' names (their indices as text when none were given).
    names: Arc<Vec<String>>,
    named: bool,
    subset_size: usize,
    candidates: usize,
    rng: SplitMix,
    samples: Vec<DdtTree>,
    queries: usize,
}

impl Sampler {
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
        match x.extract::<i64>() {
            Ok(i) if i >= 0 && (i as usize) < n => Ok(i as usize),
            Ok(i) => Err(input(format!(
                "point index {i} is out of range for {n} points"
            ))),
            Err(_) => Err(input(format!(
                "a point is a name (str) or an index (int), not {}",
                x.repr()?
            ))),
        }
    }

    /// The tree induced on `subset`, over `0..k` with the subset's names.
    fn shown(&self, subset: &[usize]) -> PyTree {
        let t = induced(self.chain.tree(), subset);
        let mut pos = vec![usize::MAX; self.names.len()];
        for (i, &p) in subset.iter().enumerate() {
            pos[p] = i;
        }
        let t = t.relabel(|p| pos[p]);
        let names = subset.iter().map(|&p| self.names[p].clone()).collect();
        PyTree::new(t, Some(Arc::new(names)), None)
    }
}

#[pymethods]
impl Sampler {
    /// ``points``: an ``(n, d)`` array, ``n >= 3``. ``names``: one label
    /// per point (default: none; points are then named by their index as
    /// text in queries). ``sigma``: Brownian-motion variance per unit time
    /// (a number, one per feature, or ``"var/K"``: each feature's sample
    /// variance over ``K``; default ``"var/2"`` as the CLI). ``sigma0``:
    /// variance of the start location (default ``0.5``). ``c``: divergence
    /// constant of ``a(t) = c / (1 - t)``. ``leaf_noise``: observation noise
    /// in units of ``sigma``. ``seed``: the chain's and the queries' seed
    /// (same seed, same run). ``rebuild``: how a violated triplet rebuilds
    /// the tree (``"guided"`` or ``"balanced"``). ``subset_size`` and
    /// ``candidates``: the size of a shown subset and the number of
    /// candidate subsets of an active query.
    #[new]
    #[pyo3(signature = (points, names=None, sigma=None, seed=0, c=1.0, sigma0=None, leaf_noise=0.01, rebuild="guided", subset_size=10, candidates=20))]
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
        let rebuild = match rebuild {
            "guided" => Rebuild::Guided,
            "balanced" => Rebuild::Balanced,
            other => {
                return Err(input(format!(
                    "rebuild must be \"guided\" or \"balanced\", not {other:?}"
                )));
            }
        };
        if subset_size < 3 {
            return Err(input(format!(
                "subset_size must be at least 3, not {subset_size}"
            )));
        }
        if candidates == 0 {
            return Err(input("candidates must be at least 1"));
        }
        let params = Params {
            c,
            sigma,
            sigma0,
            mu0: data.mean(),
            leaf_noise,
        };
        let model = Ddt::new(&data, params).map_err(to_py)?;
        let mut chain = Chain::new(model, seed);
        chain.set_rebuild(rebuild);
        Ok(Sampler {
            chain,
            names: Arc::new(names),
            named,
            subset_size,
            candidates,
            rng: SplitMix(seed ^ 0x0005_eed0_f0e1_e5e5),
            samples: Vec::new(),
            queries: 0,
        })
    }

    /// Runs ``iterations`` Metropolis-Hastings iterations (an SPR and a time
    /// move each), the interpreter released; Ctrl-C stops early (the chain
    /// keeps the iterations made). The last 100 trees are kept for active
    /// queries.
    fn run(&mut self, py: Python<'_>, iterations: usize) -> PyResult<()> {
        let chain = &mut self.chain;
        let samples = &mut self.samples;
        crate::run(py, None, None, move |o| {
            let keep = iterations.min(KEPT_SAMPLES);
            chain.run_with(iterations - keep, o)?;
            samples.clear();
            for _ in 0..keep {
                chain.step();
                samples.push(chain.tree().clone());
            }
            Ok(())
        })
    }

    /// Adds the triplet constraint ``({a, b}, c)``: ``a`` and ``b`` belong
    /// together, apart from ``c`` (points by name or index). The tree is
    /// rebuilt at once if it violates it. Raises ``InputError`` naming the
    /// conflict when the constraints can no longer all hold (then nothing
    /// changes). Returns whether the tree was rebuilt.
    fn add_triplet(
        &mut self,
        a: &Bound<'_, PyAny>,
        b: &Bound<'_, PyAny>,
        c: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let (a, b, c) = (self.point(a)?, self.point(b)?, self.point(c)?);
        let t =
            Triplet::new(a, b, c).map_err(|_| input("a triplet needs three different points"))?;
        self.chain
            .add_constraint(t)
            .map_err(|e| input(named_message(&e, &self.names)))
    }

    /// The current tree: names, and heights ``1 - t`` (``t`` the DDT
    /// divergence times; leaves at 0, so branch lengths are time spans).
    #[getter]
    fn tree(&self) -> PyResult<PyTree> {
        let ddt = self.chain.tree();
        let topology = ddt.topology();
        let times = ddt.times();
        // `times` is in pre-order of `topology`; heights go in post-order.
        let mut pre = std::collections::HashMap::new();
        let mut stack = vec![&topology];
        while let Some(t) = stack.pop() {
            if let trellis::Tree::Node(l, r) = t {
                pre.insert(t as *const trellis::Tree, pre.len());
                stack.push(r);
                stack.push(l);
            }
        }
        let heights = topology
            .post_order()
            .filter(|t| matches!(t, trellis::Tree::Node(..)))
            .map(|t| 1.0 - times[pre[&(t as *const trellis::Tree)]])
            .collect();
        let names = self.named.then(|| self.names.clone());
        Ok(PyTree::new(topology, names, Some(heights)))
    }

    /// The triplet constraints in force, ``(a, b, c)`` for ``({a, b}, c)``:
    /// names when the points have names, else indices.
    #[getter]
    fn triplets(&self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        self.chain
            .constraints()
            .iter()
            .map(|t| {
                if self.named {
                    let n = &self.names;
                    Ok((n[t.a].clone(), n[t.b].clone(), n[t.c].clone())
                        .into_pyobject(py)?
                        .into_any()
                        .unbind())
                } else {
                    Ok((t.a, t.b, t.c).into_pyobject(py)?.into_any().unbind())
                }
            })
            .collect()
    }

    /// ``ln p(T, t) + ln p(X | T, t)`` of the current state.
    #[getter]
    fn log_likelihood(&self) -> f64 {
        self.chain.log_joint()
    }

    /// Number of points.
    #[getter]
    fn n(&self) -> usize {
        self.names.len()
    }

    /// What to show the user next, by ``strategy`` (the CLI's names):
    /// ``"simple"`` (three random points), ``"random"`` (``subset_size``
    /// random points), ``"active"`` (of ``candidates`` random subsets, the
    /// one whose tree distances varied most over the last ``run``),
    /// ``"interleaved"`` (random and active alternately, random first),
    /// ``"smart"`` (every point), ``"vanilla"`` (nothing: ``None``).
    ///
    /// Returns the current tree induced on the chosen points as a ``Tree``
    /// over them, named by the points' names (or indices as text); answer
    /// with ``add_triplet`` on a triplet it gets wrong.
    fn query(&mut self, strategy: &str) -> PyResult<Option<PyTree>> {
        let strategy = Strategy::from_name(strategy).ok_or_else(|| {
            input(format!(
                "strategy must be \"vanilla\", \"simple\", \"random\", \"active\", \"interleaved\" or \"smart\", not {strategy:?}"
            ))
        })?;
        let n = self.names.len();
        self.queries += 1;
        let active = match strategy {
            Strategy::Interleaved => self.queries % 2 == 0,
            s => s == Strategy::Active,
        };
        let subset = match strategy {
            Strategy::Vanilla => return Ok(None),
            Strategy::Simple => self.rng.subset(n, 3),
            Strategy::Smart => (0..n).collect(),
            _ if active => {
                let mut best: Option<(f64, Vec<usize>)> = None;
                for _ in 0..self.candidates {
                    let s = self.rng.subset(n, self.subset_size);
                    let v = distance_variance(&self.samples, n, &s);
                    if best.as_ref().is_none_or(|b| v > b.0) {
                        best = Some((v, s));
                    }
                }
                best.expect("at least one candidate").1
            }
            _ => self.rng.subset(n, self.subset_size),
        };
        let mut subset = subset;
        subset.sort_unstable();
        Ok(Some(self.shown(&subset)))
    }

    fn __repr__(&self) -> String {
        format!(
            "Sampler(n={}, triplets={})",
            self.names.len(),
            self.chain.constraints().len()
        )
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
