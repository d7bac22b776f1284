//! The DDT model: hyper-parameters, the prior density of a tree with divergence
//! times and the Gaussian data term with the internal locations integrated out.
//!
//! # Prior
//!
//! With divergence function `a(t) = c / (1 - t)` and cumulative hazard
//! `A(t) = -c ln(1 - t)`, a binary tree with times `0 < t_v < 1` at its internal
//! nodes has the density (Neal 2003; Knowles & Ghahramani 2015)
//!
//! ```text
//! p(T, t) = Π_{internal v, parent u} a(t_v) · exp[(A(t_u) - A(t_v)) · H_{m(v)-1}]
//!                                   · Γ(l(v)) Γ(r(v)) / Γ(m(v))
//! ```
//!
//! where `m(v)` counts the leaves below `v`, `l(v)` and `r(v)` those below its two
//! children, `H_k = 1 + 1/2 + ... + 1/k`, and the parent of the top node is the
//! start of the process at `t = 0`. Derivation: the `k`-th of the `m(v)` points
//! that go through the segment `[u, v]` does not diverge on it with probability
//! `exp[-(A(t_v) - A(t_u)) / (k - 1)]` (the product over `k` gives `H_{m(v)-1}`);
//! the point that creates `v` diverges with density `a(t_v) / (j - 1)` when it is
//! the `j`-th point there, and the later branch choices in proportion to the
//! counts multiply, whatever the arrival order, to `(l-1)! (r-1)! / (m-1)!`. The
//! density is symmetric in child order and integrates to 1 over topologies and
//! times (checked by quadrature in the tests).
//!
//! # Likelihood
//!
//! The locations follow a Brownian motion with diagonal covariance `Σ` per unit
//! time, starting at `z(0) ~ N(μ0, Σ0)`; leaf `i` is observed at `t = 1` as
//! `x_i ~ N(z_i(1), ε Σ)` (the leaf noise `ε ≥ 0`, as if observed at time
//! `1 + ε`; it keeps the posterior proper when points coincide). Because every
//! dimension is independent, the internal locations are integrated out exactly by
//! one upward pass of Gaussian messages per dimension: a node keeps
//! `p(data below v | z_v) = K_v · N(z_v; μ_v, s_v)`, a branch of length `τ` adds
//! `τ σ²` to `s_v`, and a node multiplies the messages of its two children. The
//! pass costs `O(N d)`; a change below a node only invalidates its ancestors.
//!
//! # Range
//!
//! [`Ddt::new`] refuses parameters with which the log density would not be a
//! finite number with room to spare (a sampler would then never move): a
//! variance so large that the message variances come within [`HEADROOM`] of
//! overflowing, so small next to the spread of the points that their squared
//! distances over it do, points whose squared spread overflows, or a
//! divergence constant `c` outside [`MIN_C`] to [`MAX_C`], where the
//! sampler's divergence times lose their precision (times within rounding of
//! 1 for a small `c`, of the parent's for a large one).

use crate::error::{Error, Result, number};

/// Smallest divergence constant `c` accepted.
pub const MIN_C: f64 = 0.05;
/// Largest divergence constant `c` accepted.
pub const MAX_C: f64 = 1e10;
/// Largest magnitude accepted for the likelihood's variances and for the
/// squared spread of the points over a variance: far below `f64::MAX`, so
/// that the sums and ratios of the likelihood of every tree the sampler
/// visits stay finite.
pub const HEADROOM: f64 = 1e200;

/// Hyper-parameters of the Dirichlet diffusion tree.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// Divergence constant `c` in `a(t) = c / (1 - t)` (> 0).
    pub c: f64,
    /// Brownian-motion variance per unit time, one per dimension (the diagonal of `Σ`).
    pub sigma: Vec<f64>,
    /// Variance of the start location, one per dimension (the diagonal of `Σ0`).
    pub sigma0: Vec<f64>,
    /// Mean of the start location `μ0`.
    pub mu0: Vec<f64>,
    /// Leaf observation noise `ε ≥ 0`, in units of `Σ` (see the module docs).
    pub leaf_noise: f64,
}

impl Params {
    /// The parameters every front-end builds from its options: `Σ` and
    /// `Σ0` from their specifications (see [`variance`]: `X`, `X/Y` or
    /// `var/K`), `μ0` the points' mean. This is the one place the doors turn
    /// `--sigma`/`sigma=` text into a model.
    ///
    /// # Errors
    ///
    /// A malformed or non-positive variance, named `sigma` or `sigma0`
    /// ([`ErrorKind::Parameter`](crate::ErrorKind::Parameter)); the other
    /// parameters are checked by [`Ddt::new`].
    pub fn from_specs(
        points: &Dataset,
        c: f64,
        sigma: &str,
        sigma0: &str,
        leaf_noise: f64,
    ) -> Result<Params> {
        let named = |what: &str, spec: &str| {
            variance(spec, points).map_err(|e| Error::parameter(format!("{what}: {e}")))
        };
        Ok(Params {
            c,
            sigma: named("sigma", sigma)?,
            sigma0: named("sigma0", sigma0)?,
            mu0: points.mean(),
            leaf_noise,
        })
    }
}

/// A per-dimension variance from a specification: `X` or a fraction `X/Y`
/// (the same in every dimension), or `var/K` (each feature's sample variance
/// of `points` divided by `K`; `var` alone is `var/1`). Every variance must come
/// out positive and finite (a constant feature has sample variance 0).
///
/// The reference's settings of `Σ` are Iris `1/9`, Zoo `var/4` and 20
/// Newsgroups `var/2`.
pub fn variance(spec: &str, points: &Dataset) -> Result<Vec<f64>> {
    let bad = || {
        Error::parameter(format!(
            "a variance must be a positive number, a fraction such as 1/9, or var/K, not {spec:?}"
        ))
    };
    let s = spec.trim();
    let (head, div) = match s.split_once('/') {
        Some((h, k)) => (h.trim(), k.trim().parse::<f64>().map_err(|_| bad())?),
        None => (s, 1.0),
    };
    if !(div > 0.0 && div.is_finite()) {
        return Err(bad());
    }
    let v: Vec<f64> = if head == "var" {
        points.variance().iter().map(|v| v / div).collect()
    } else {
        let x: f64 = head.parse().map_err(|_| bad())?;
        vec![x / div; points.dim()]
    };
    if let Some(j) = v.iter().position(|x| !(*x > 0.0 && x.is_finite())) {
        return Err(Error::parameter(format!(
            "{spec:?} gives variance {} for feature {j} (it must be positive; a constant \
             feature has sample variance 0)",
            v[j]
        )));
    }
    Ok(v)
}

impl Params {
    /// The reference settings: `c = 1`, `μ0` = the data mean, `Σ0 = I/2`, the given
    /// `Σ` diagonal, and leaf noise `ε`.
    pub fn reference(points: &Dataset, sigma: Vec<f64>, leaf_noise: f64) -> Params {
        let d = points.dim();
        Params {
            c: 1.0,
            sigma,
            sigma0: vec![0.5; d],
            mu0: points.mean(),
            leaf_noise,
        }
    }
}

/// Named points in `R^d`, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    names: Vec<String>,
    x: Vec<f64>,
    d: usize,
}

impl Dataset {
    /// Dataset from rows (all of the same length) and their names.
    ///
    /// # Errors
    ///
    /// Rows of different lengths, a non-finite value, or a name count that differs
    /// from the row count.
    pub fn new(names: Vec<String>, rows: Vec<Vec<f64>>) -> Result<Dataset> {
        if rows.is_empty() {
            return Err(Error::new(crate::ErrorKind::Empty));
        }
        if names.len() != rows.len() {
            return Err(Error::shape(format!(
                "{} names for {} points",
                names.len(),
                rows.len()
            )));
        }
        let d = rows[0].len();
        let mut x = Vec::with_capacity(rows.len() * d);
        for (i, r) in rows.iter().enumerate() {
            if r.len() != d {
                return Err(Error::shape(format!(
                    "point {i} has {} features but point 0 has {d}",
                    r.len()
                )));
            }
            if let Some(j) = r.iter().position(|v| !v.is_finite()) {
                return Err(Error::new(crate::ErrorKind::NonFinite { row: i, col: j }));
            }
            x.extend_from_slice(r);
        }
        Ok(Dataset { names, x, d })
    }

    /// Reads points from a CSV file, or from standard input when `path` is
    /// `-` (see [`Dataset::parse_csv`]; at most the memory available is
    /// read); errors name the file.
    pub fn read(path: &std::path::Path) -> Result<Dataset> {
        let table = crate::io::read_table(path, &Dataset::csv_options())?;
        Dataset::from_table(table)
    }

    /// Parses CSV text: an optional header row (a first row is a header only
    /// when none of its fields is a number), then one point per row, the first
    /// column its name and the others numeric features. A leading UTF-8
    /// byte-order mark is skipped (the rules of [`crate::io`]).
    ///
    /// # Errors
    ///
    /// A non-numeric or non-finite feature, an empty or repeated name, rows of
    /// different lengths (header included), no feature column, no rows
    /// ([`ErrorKind::Parse`](crate::ErrorKind::Parse), naming the line and
    /// column).
    pub fn parse_csv(text: &str) -> Result<Dataset> {
        Dataset::from_table(crate::io::parse_table(text, &Dataset::csv_options())?)
    }

    /// The CSV rules of named points: the first column holds the names.
    fn csv_options() -> crate::io::ReadOptions {
        crate::io::ReadOptions::points().with_names(crate::io::NamesColumn::Column(0))
    }

    /// Named points from a table read by [`crate::io`] (its text columns are
    /// not features and are left out).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Shape`](crate::ErrorKind::Shape) when the table has no
    /// names column.
    pub fn from_table(table: crate::io::Table) -> Result<Dataset> {
        let names = table
            .names
            .ok_or_else(|| Error::shape("the points have no names column"))?;
        Ok(Dataset {
            names,
            x: table.matrix.data,
            d: table.matrix.cols,
        })
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether there are no points (never true for a constructed value).
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Number of features.
    pub fn dim(&self) -> usize {
        self.d
    }

    /// The names, in row order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Point `i`.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.x[i * self.d..(i + 1) * self.d]
    }

    /// The mean of every feature.
    pub fn mean(&self) -> Vec<f64> {
        let n = self.len() as f64;
        (0..self.d)
            .map(|j| (0..self.len()).map(|i| self.row(i)[j]).sum::<f64>() / n)
            .collect()
    }

    /// The sample variance (denominator `N - 1`) of every feature.
    pub fn variance(&self) -> Vec<f64> {
        let mean = self.mean();
        let n = self.len();
        (0..self.d)
            .map(|j| {
                let ss: f64 = (0..n).map(|i| (self.row(i)[j] - mean[j]).powi(2)).sum();
                ss / (n.max(2) - 1) as f64
            })
            .collect()
    }

    /// Adds independent `N(0, sd²)` noise to every feature (the reference's
    /// treatment of Zoo, whose binary features make many points coincide),
    /// drawn from `seed` mixed with a constant (so that the noise does not
    /// repeat the sampler's stream of the same seed). `sd = 0` changes nothing.
    ///
    /// # Errors
    ///
    /// `sd` negative or not finite, or noise so large that a feature's squared
    /// spread overflows ([`ErrorKind::Parameter`](crate::ErrorKind::Parameter));
    /// the points are unchanged then.
    pub fn jitter(&mut self, sd: f64, seed: u64) -> Result<()> {
        if !(sd >= 0.0 && sd.is_finite()) {
            return Err(Error::parameter(format!(
                "the jitter must be a number >= 0, not {}",
                number(sd)
            )));
        }
        if sd == 0.0 {
            return Ok(());
        }
        let mut rng = crate::random::rng(seed ^ JITTER_SEED);
        let jittered: Vec<f64> = (self.x.iter())
            .map(|v| v + sd * crate::random::standard_normal(&mut rng))
            .collect();
        let spread = (0..self.d)
            .map(|j| {
                let column = jittered.iter().skip(j).step_by(self.d.max(1));
                let (lo, hi) = column.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
                    (lo.min(x), hi.max(x))
                });
                hi - lo
            })
            .fold(0.0f64, f64::max);
        if !(spread * spread).is_finite() {
            return Err(Error::parameter(format!(
                "the jitter {} is too large: the jittered features are not finite numbers \
                 (their squared spread overflows)",
                number(sd)
            )));
        }
        self.x = jittered;
        Ok(())
    }
}

/// Mixed into the seed of [`Dataset::jitter`].
const JITTER_SEED: u64 = 0x71_77e5;

/// The model every door builds for interactive clustering: at least 3
/// points (jittered first by the door when asked, see [`Dataset::jitter`]),
/// and the parameters of [`Params::from_specs`] checked by [`Ddt::new`].
///
/// # Errors
///
/// Fewer than 3 points ([`ErrorKind::Shape`](crate::ErrorKind::Shape)); a
/// parameter out of range, named
/// ([`ErrorKind::Parameter`](crate::ErrorKind::Parameter)).
pub fn interactive_model(points: &Dataset, spec: &ModelSpec<'_>) -> Result<Ddt> {
    if points.len() < 3 {
        return Err(Error::shape(format!(
            "interactive clustering needs at least 3 points, not {}",
            points.len()
        )));
    }
    let params = Params::from_specs(points, spec.c, spec.sigma, spec.sigma0, spec.leaf_noise)?;
    Ddt::new(points, params)
}

/// The model of a door's dataset read from `source`: the points jittered
/// by N(0, `jitter`²) noise from `seed` (see [`Dataset::jitter`]), then
/// [`interactive_model`]; errors name the options as `naming` spells them.
///
/// # Errors
///
/// Those of [`Dataset::jitter`] and [`interactive_model`], with context.
pub fn jittered_model(
    points: &mut Dataset,
    spec: &ModelSpec<'_>,
    (jitter, seed): (f64, u64),
    source: &std::path::Path,
    naming: crate::input::Naming,
) -> Result<Ddt> {
    let name = |k: &str| naming.name(k);
    points
        .jitter(jitter, seed)
        .map_err(|e| e.context(name("jitter")))?;
    interactive_model(points, spec).map_err(|e| {
        e.context(format!(
            "the DDT model of {} ({}, {}, {}, {})",
            source.display(),
            name("c"),
            name("sigma"),
            name("sigma0"),
            name("leaf-noise")
        ))
    })
}

/// The options of [`interactive_model`], as the doors take them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModelSpec<'a> {
    /// The divergence constant `c`.
    pub c: f64,
    /// `Σ`'s specification (see [`variance`]).
    pub sigma: &'a str,
    /// `Σ0`'s specification (see [`variance`]).
    pub sigma0: &'a str,
    /// The leaf noise `ε`.
    pub leaf_noise: f64,
}

/// Checks the parameters' range (module docs, "Range"). A starting tree
/// halves `1 - t` at each level, so its branches are at least `2^-n` long.
fn check_range(points: &Dataset, params: &Params) -> Result<()> {
    let n = points.len();
    if !(MIN_C..=MAX_C).contains(&params.c) {
        return Err(Error::parameter(format!(
            "the divergence constant c = {} is out of range: it must be between {} and {} (the \
             sampler's divergence times lose their precision beyond)",
            number(params.c),
            number(MIN_C),
            number(MAX_C)
        )));
    }
    let shortest = 2f64.powi(-(n.min(1000) as i32));
    for j in 0..points.dim() {
        let column = || (0..n).map(|i| points.row(i)[j]);
        let (lo, hi) = column().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        });
        let spread = (hi - lo)
            .max((hi - params.mu0[j]).abs())
            .max((lo - params.mu0[j]).abs());
        let squared = spread * spread;
        if !squared.is_finite() {
            return Err(Error::parameter(format!(
                "feature {j} of the points spans {}: its squared distances overflow",
                number(spread)
            )));
        }
        let sigma = params.sigma[j];
        // The largest variance of a message: a leaf's noise plus two unit
        // branches below the top and the start's variance, summed over the tree.
        let largest = (2.0 * (1.0 + params.leaf_noise) * sigma + params.sigma0[j]) * 4.0 * n as f64;
        if largest.is_nan() || largest > HEADROOM {
            return Err(Error::parameter(format!(
                "sigma = {} (feature {j}) is too large: the likelihood's variances overflow",
                number(sigma)
            )));
        }
        // The smallest: two leaves' noise and the shortest branch.
        let smallest = sigma * (shortest + 2.0 * params.leaf_noise);
        if !(smallest > 0.0 && squared / smallest <= HEADROOM) {
            return Err(Error::parameter(format!(
                "sigma = {} (feature {j}) is too small for points that span {}: the likelihood \
                 underflows to zero",
                number(sigma),
                number(spread)
            )));
        }
        let sigma0 = params.sigma0[j];
        let ratio = squared / sigma0;
        if ratio.is_nan() || ratio > HEADROOM {
            return Err(Error::parameter(format!(
                "sigma0 = {} (feature {j}) is too small for points that span {}: the likelihood \
                 underflows to zero",
                number(sigma0),
                number(spread)
            )));
        }
    }
    Ok(())
}

/// The DDT over a fixed set of points: data, hyper-parameters and tables.
#[derive(Clone, Debug)]
pub struct Ddt {
    pub(crate) n: usize,
    pub(crate) d: usize,
    pub(crate) x: Vec<f64>,
    pub(crate) c: f64,
    pub(crate) ln_c: f64,
    pub(crate) sigma: Vec<f64>,
    pub(crate) sigma0: Vec<f64>,
    pub(crate) mu0: Vec<f64>,
    pub(crate) leaf_var: Vec<f64>,
    /// `H_k`, `k = 0..=n`.
    pub(crate) harmonic: Vec<f64>,
    /// `ln Γ(k) = ln (k-1)!`, `k = 0..=n` (entry 0 unused).
    pub(crate) ln_gamma: Vec<f64>,
    params: Params,
}

pub(crate) const LN_TWO_PI: f64 = 1.837_877_066_409_345_5;

impl Ddt {
    /// A model of `points` under `params`.
    ///
    /// # Errors
    ///
    /// Fewer than 2 points, parameter vectors of the wrong length, a
    /// non-positive or non-finite `c`, `Σ` or `Σ0`, a negative leaf noise, or two
    /// identical points with leaf noise 0 (the posterior would be improper).
    pub fn new(points: &Dataset, params: Params) -> Result<Ddt> {
        let (n, d) = (points.len(), points.dim());
        if n < 2 {
            return Err(Error::parameter(
                "the DDT needs at least 2 points to form a hierarchy",
            ));
        }
        if !(params.c > 0.0 && params.c.is_finite()) {
            return Err(Error::parameter(format!(
                "the divergence constant c must be positive and finite, got {}",
                params.c
            )));
        }
        for (what, v) in [
            ("sigma", &params.sigma),
            ("sigma0", &params.sigma0),
            ("mu0", &params.mu0),
        ] {
            if v.len() != d {
                return Err(Error::parameter(format!(
                    "{what} has {} entries but the points have {d} features",
                    v.len()
                )));
            }
            if let Some(bad) = v.iter().find(|x| !x.is_finite()) {
                return Err(Error::parameter(format!(
                    "{what} has a non-finite entry {bad}"
                )));
            }
            if what != "mu0" {
                if let Some(bad) = v.iter().find(|x| **x <= 0.0) {
                    return Err(Error::parameter(format!(
                        "{what} must be positive in every dimension, got {bad}"
                    )));
                }
            }
        }
        if !(params.leaf_noise >= 0.0 && params.leaf_noise.is_finite()) {
            return Err(Error::parameter(format!(
                "the leaf noise must be >= 0 and finite, got {}",
                params.leaf_noise
            )));
        }
        if params.leaf_noise == 0.0 {
            for i in 0..n {
                for j in i + 1..n {
                    if points.row(i) == points.row(j) {
                        return Err(Error::parameter(format!(
                            "points {:?} and {:?} are identical: with leaf noise 0 the DDT \
                             posterior is improper (use a positive leaf noise or jitter)",
                            points.names()[i],
                            points.names()[j]
                        )));
                    }
                }
            }
        }
        let mut harmonic = vec![0.0; n + 1];
        let mut ln_gamma = vec![0.0; n + 1];
        for k in 1..=n {
            harmonic[k] = harmonic[k - 1] + 1.0 / k as f64;
            if k >= 2 {
                ln_gamma[k] = ln_gamma[k - 1] + ((k - 1) as f64).ln();
            }
        }
        check_range(points, &params)?;
        Ok(Ddt {
            n,
            d,
            x: points.x.clone(),
            c: params.c,
            ln_c: params.c.ln(),
            leaf_var: params.sigma.iter().map(|s| s * params.leaf_noise).collect(),
            sigma: params.sigma.clone(),
            sigma0: params.sigma0.clone(),
            mu0: params.mu0.clone(),
            harmonic,
            ln_gamma,
            params,
        })
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Always false: a model has at least 2 points.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The hyper-parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The prior term of the segment from a parent with `ln(1 - t_u) = lom_u` into
    /// an internal node with `ln(1 - t_v) = lom_v`, `m` leaves split `l + r`.
    #[inline]
    pub(crate) fn segment(&self, lom_v: f64, lom_u: f64, m: usize, l: usize, r: usize) -> f64 {
        self.ln_c - lom_v
            + self.c * (lom_v - lom_u) * self.harmonic[m - 1]
            + self.ln_gamma[l]
            + self.ln_gamma[r]
            - self.ln_gamma[m]
    }

    /// The log prior density `ln p(T, t)` of a tree with times (see the module docs),
    /// computed from scratch in `O(N)`.
    pub fn log_prior(&self, tree: &super::DdtTree) -> f64 {
        let mut total = 0.0;
        for v in tree.n..tree.parent.len() {
            let [a, b] = tree.kids[v];
            let lom_u = match tree.parent[v] {
                super::tree::NONE => 0.0,
                p => tree.lom[p as usize],
            };
            total += self.segment(
                tree.lom[v],
                lom_u,
                tree.count[v] as usize,
                tree.count[a as usize] as usize,
                tree.count[b as usize] as usize,
            );
        }
        total
    }

    /// The log marginal likelihood `ln p(X | T, t)` with every internal location
    /// integrated out, computed from scratch by a recursive message pass in `O(N d)`.
    pub fn log_likelihood(&self, tree: &super::DdtTree) -> f64 {
        let d = self.d;
        // (mean, variance) per dimension, and the accumulated log normaliser.
        fn up(m: &Ddt, t: &super::DdtTree, v: usize, out: &mut Vec<(f64, f64)>) -> f64 {
            let d = m.d;
            if v < t.n {
                out.clear();
                for j in 0..d {
                    out.push((m.x[v * d + j], m.leaf_var[j]));
                }
                return 0.0;
            }
            let [a, b] = t.kids[v];
            let mut ma = Vec::new();
            let mut mb = Vec::new();
            let mut k = up(m, t, a as usize, &mut ma) + up(m, t, b as usize, &mut mb);
            let ta = t.om[v] - t.om[a as usize];
            let tb = t.om[v] - t.om[b as usize];
            out.clear();
            for j in 0..d {
                let sa = ma[j].1 + m.sigma[j] * ta;
                let sb = mb[j].1 + m.sigma[j] * tb;
                let s = sa + sb;
                let diff = ma[j].0 - mb[j].0;
                k += -0.5 * (LN_TWO_PI + s.ln() + diff * diff / s);
                out.push(((ma[j].0 * sb + mb[j].0 * sa) / s, sa * sb / s));
            }
            k
        }
        let mut msg = Vec::with_capacity(d);
        let top = tree.top as usize;
        let mut k = up(self, tree, top, &mut msg);
        let t_top = 1.0 - tree.om[top];
        for (j, &(mean, var)) in msg.iter().enumerate() {
            let s = var + self.sigma0[j] + self.sigma[j] * t_top;
            let diff = mean - self.mu0[j];
            k += -0.5 * (LN_TWO_PI + s.ln() + diff * diff / s);
        }
        k
    }

    /// `ln p(T, t) + ln p(X | T, t)`: the log joint density the sampler targets.
    pub fn log_joint(&self, tree: &super::DdtTree) -> f64 {
        self.log_prior(tree) + self.log_likelihood(tree)
    }
}
