//! The Ginkgo generative process: simulated jets with their true showering trees.
//!
//! Ginkgo models a jet as a cascade of binary decays that runs on invariant
//! masses. Write `t = E² - |p|²` for the mass squared of a 4-momentum
//! `p = (E, px, py, pz)`. The jet starts as one particle of mass squared
//! `M²_start` (`Delta_0`) and 3-momentum `P_jet`, so `E = √(|P_jet|² + M²_start)`.
//! Each particle of mass squared `t_P` is visited depth first, left child before
//! right child:
//!
//! 1. **Stop or split.** If `t_P <= t_cut` the particle is a leaf (an observed
//!    final-state particle) and gets the next leaf index: leaves are numbered in
//!    the order this depth-first walk meets them. Otherwise it decays in two.
//! 2. **A direction.** A unit vector `u`, uniform on the sphere, in the parent's
//!    rest frame. (Drawn as `u_z = 2a - 1`, `φ = 2π b` with `a, b` uniform on
//!    `[0, 1)`: by Archimedes' hat-box theorem `u_z` of a uniform point of the
//!    sphere is uniform on `[-1, 1]`; the reference normalises three Gaussians,
//!    which gives the same distribution.)
//! 3. **The children's masses.** Two fractions `r_L, r_R` from an exponential
//!    distribution of rate `λ` (`λ_root` for the split of the jet itself, `λ`
//!    below it), each truncated to `r < 1 - 10⁻³` by rejection: draw
//!    `r = -ln(1 - v)/λ` with `v` uniform on `[0, 1)` (the inverse CDF) until
//!    `r < 0.999`. Then
//!
//!    ```text
//!    t_L = r_L t_P,        t_R = r_R (√t_P - √t_L)²,
//!    ```
//!
//!    so `t_L < 0.999 t_P` and `√t_L + √t_R < √t_P`: the decay is always
//!    kinematically allowed.
//! 4. **Two-body decay at rest.** With `m = √t_P`, energy and momentum
//!    conservation in the parent's rest frame fix
//!
//!    ```text
//!    E*_L = (t_P + t_L - t_R) / (2m),       E*_R = (t_P + t_R - t_L) / (2m) = m - E*_L,
//!    q = |p*| = √((t_P - (√t_L + √t_R)²) (t_P - (√t_L - √t_R)²)) / (2m),
//!    ```
//!
//!    (`q` is the Källén function `λ(t_P, t_L, t_R)^{1/2} / 2m`, factorised so
//!    that it is accurate for nearly massless children), and the children are
//!    `(E*_L, +q u)` and `(E*_R, -q u)`: back to back, summing to `(m, 0)`.
//! 5. **Boost to the lab.** The parent moves with `γ = E_P / m` and
//!    `γβ = P_P / m =: b` (3-vector). A rest-frame 4-vector `(e, k)` becomes
//!
//!    ```text
//!    E_lab = γ e + b·k,        k_lab = k + b (e + (b·k) / (γ + 1)),
//!    ```
//!
//!    the usual `k + (γ - 1)(β̂·k) β̂ + γβ e` written without `β̂`, so a parent
//!    at rest needs no special case (`|b|² = γ² - 1`). The boost is linear, so
//!    the children still sum to the parent's 4-momentum: 4-momentum is conserved
//!    at every split and the leaves sum to the jet.
//! 6. **Random order.** With probability ½ the two children (momenta and
//!    masses) swap places; then the walk continues with the left child's
//!    subtree and afterwards the right child's, each with its own `t` from step 3.
//!
//! The split likelihood of [`split_log_likelihood`](super::split_log_likelihood)
//! ([`Variant::Current`]) is the density of exactly this process: the
//! `½ (L first) + ½ (R first)` sum is step 6, the `1/(1 - e^{-0.999λ})`
//! normaliser is the truncation of step 3 and `1/4π` is step 2.
//!
//! [`simulate`] runs the process once. [`generate`] makes a dataset: jet `k` of
//! a run with seed `s` comes from its own generator,
//! `Xoshiro256PlusPlus::seed_from_u64(jet_seed(s, k))`, which simulates jets
//! until one has a number of leaves `N` in the window (rejection sampling,
//! conditioning the process on `min_leaves <= N <= max_leaves`, both
//! inclusive; the reference code's window excludes its upper end). Jets are
//! therefore independent of each other and of `n_jets`: [`generate_jet`]
//! regenerates jet `k` alone.
//!
//! Differences from the reference Python simulator (`ginkgo`, `invMass_ginkgo.py`),
//! none of which changes the distribution: a different random number generator
//! (so no jet is reproduced bit for bit), all arithmetic in `f64` (the
//! reference mixes in `float32`, so its internal nodes differ from the leaf
//! sums at ~1e-6 relative), the direction drawn as in step 2, and a jet whose
//! leaf count already exceeds `max_leaves` is abandoned early rather than
//! finished and then rejected.
//!
//! ```
//! use rand::SeedableRng;
//! use trellis::ginkgo::{SimulatorParams, simulate, generate};
//!
//! let params = SimulatorParams::qcd();
//! let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
//! let (leaves, truth) = simulate(&params, &mut rng);
//! assert_eq!(truth.num_leaves(), leaves.len());
//!
//! let jets = generate(&params, 3, 5, 9, 42)?;
//! assert!(jets.iter().all(|j| (5..=9).contains(&j.len())));
//! # Ok::<(), trellis::Error>(())
//! ```

use rand::{Rng, RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde_json::{Map, Value, json};

use crate::base::tree::Tree;
use crate::error::{Error, Result, number};
use crate::ginkgo::jets::Jet;
use crate::ginkgo::likelihood::{SplitParams, Variant, add, mass_squared};
use crate::ginkgo::model::Ginkgo;
use crate::models::tree_log_potential;

/// Upper end of the truncated exponential draws: `r < 1 - 10⁻³`.
const R_MAX: f64 = 1.0 - 1e-3;

/// Simulator calls allowed per jet before [`generate`] gives up on a leaf-count window.
pub const MAX_TRIES_PER_JET: u64 = 1_000_000;

/// Most leaves a jet of [`generate`] may have: a shower that grows past it
/// (a cut far below the jet's mass squared) is an error rather than a
/// runaway, whatever the leaf-count window. (Scoring a jet's truth tree
/// tabulates its `n²` leaf pairs, 16 bytes each: 64 MiB at this size; no
/// exact or sparse method takes more than 128 leaves.)
pub const MAX_JET_LEAVES: usize = 2048;

/// Largest jet energy accepted: the likelihood squares sums of leaf
/// energies and multiplies masses squared, which must stay finite.
pub const MAX_JET_ENERGY: f64 = 1e75;

/// Largest `E² / t_cut` accepted, `E` the jet's energy. A particle's mass
/// squared is computed as `E² - |p|²`, with a rounding error of about
/// `10⁻¹⁶ E²`; at this bound it is still within about `10⁻⁴` of a mass
/// squared at the cut (beyond about `10¹⁵` the likelihood of the truth
/// tree is no longer even finite).
pub const MAX_BOOST_SQUARED: f64 = 1e12;

/// The parameters of the Ginkgo generative process.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimulatorParams {
    /// Exponential rate of the mass fractions below the root split (`Lambda`).
    pub lambda: f64,
    /// Exponential rate of the root split (`LambdaRoot`).
    pub lambda_root: f64,
    /// Mass squared of the jet, `M²_start` (`Delta_0`).
    pub root_mass_squared: f64,
    /// Mass-squared cut `t_cut`: a particle with `t <= t_cut` does not decay
    /// (`delta_min`; the reference calls it `pt_cut` / `pt_min`).
    pub t_cut: f64,
    /// The jet's 3-momentum `(px, py, pz)`.
    pub jet_momentum: [f64; 3],
}

/// A named parameter set of the simulator ([`SimulatorParams::qcd`],
/// [`SimulatorParams::w`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    /// QCD-like jets.
    Qcd,
    /// W-like jets.
    W,
}

impl Preset {
    /// Its parameters.
    pub fn params(self) -> SimulatorParams {
        match self {
            Preset::Qcd => SimulatorParams::qcd(),
            Preset::W => SimulatorParams::w(),
        }
    }

    /// Its parameters with the single values a person overrides, checked
    /// (see [`SimulatorParams::validate`]); `naming` spells the options in
    /// messages.
    ///
    /// # Errors
    ///
    /// A root mass that is not a positive number, a momentum of other than
    /// three numbers ([`ErrorKind::Input`](crate::ErrorKind::Input)), and
    /// invalid parameters.
    pub fn with(self, o: &Overrides<'_>, naming: crate::input::Naming) -> Result<SimulatorParams> {
        let mut p = self.params();
        p.lambda = o.lambda.unwrap_or(p.lambda);
        p.lambda_root = o.lambda_root.unwrap_or(p.lambda_root);
        if let Some(m) = o.root_mass {
            if !(m.is_finite() && m > 0.0) {
                return Err(Error::input(format!(
                    "{} must be a positive number, not {}",
                    naming.name("root-mass"),
                    number(m)
                )));
            }
            p.root_mass_squared = m * m;
        }
        p.t_cut = o.t_cut.unwrap_or(p.t_cut);
        if let Some(x) = o.momentum {
            let [px, py, pz] = x[..] else {
                return Err(Error::input(format!(
                    "{} takes three numbers PX,PY,PZ, not {}",
                    naming.name("momentum"),
                    x.len()
                )));
            };
            p.jet_momentum = [px, py, pz];
        }
        p.validate()
            .map_err(|e| e.context("invalid simulator parameters"))?;
        Ok(p)
    }
}

/// Single parameters of a [`Preset`] that a person overrides (`None`: the
/// preset's value).
#[derive(Clone, Copy, Debug, Default)]
pub struct Overrides<'a> {
    /// The rate of the mass fractions below the root split.
    pub lambda: Option<f64>,
    /// The rate of the root split.
    pub lambda_root: Option<f64>,
    /// The jet's invariant mass `M` (not squared).
    pub root_mass: Option<f64>,
    /// The mass-squared cut.
    pub t_cut: Option<f64>,
    /// The jet's 3-momentum (three numbers).
    pub momentum: Option<&'a [f64]>,
}

impl crate::Named for Preset {
    const WHAT: &'static str = "preset";
    const CHOICES: &'static [(&'static str, Preset, &'static str)] = &[
        (
            "qcd",
            Preset::Qcd,
            "QCD-like jets: rates 1.5 (root and below), mass 30 (M2 = 900), t_cut 16 (about \
             4-12 leaves; the `ginkgo_small` datasets)",
        ),
        (
            "w",
            Preset::W,
            "W-like jets: root rate 3.0, other rates 1.5, mass 80 (M2 = 6400), t_cut 4 (about \
             14-32 leaves; the `ginkgo_large_a` dataset)",
        ),
    ];
}

impl SimulatorParams {
    /// The jet 3-momentum of both presets: `|p| = 400` along `(1, 1, 1)/√3`.
    pub fn default_momentum() -> [f64; 3] {
        let c = 400.0 / 3f64.sqrt();
        [c, c, c]
    }

    /// QCD-like jets (the `ginkgo_small` datasets and the authors' example
    /// pickles): `λ = λ_root = 1.5`, `M²_start = 30² = 900`, `t_cut = 16`.
    pub fn qcd() -> SimulatorParams {
        SimulatorParams {
            lambda: 1.5,
            lambda_root: 1.5,
            root_mass_squared: 900.0,
            t_cut: 16.0,
            jet_momentum: SimulatorParams::default_momentum(),
        }
    }

    /// W-like jets (the `ginkgo_large_a` dataset): `λ_root = 3`, `λ = 1.5`,
    /// `M²_start = 80² = 6400`, `t_cut = 4`.
    pub fn w() -> SimulatorParams {
        SimulatorParams {
            lambda: 1.5,
            lambda_root: 3.0,
            root_mass_squared: 6400.0,
            t_cut: 4.0,
            jet_momentum: SimulatorParams::default_momentum(),
        }
    }

    /// Checks that the rates (at least `f64::MIN_POSITIVE`), mass and cut
    /// are positive and finite, the
    /// momentum finite, `t_cut < M²_start` (so that the jet splits), the
    /// jet's energy `E` at most [`MAX_JET_ENERGY`] and `E² / t_cut` at most
    /// [`MAX_BOOST_SQUARED`] (so that every energy and likelihood of its
    /// jets is a finite and accurate number).
    pub fn validate(&self) -> Result<()> {
        for (name, v) in [
            ("lambda", self.lambda),
            ("lambda_root", self.lambda_root),
            ("root_mass_squared", self.root_mass_squared),
            ("t_cut", self.t_cut),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(Error::parameter(format!(
                    "simulator {name} must be a positive finite number, not {}",
                    number(v)
                )));
            }
        }
        // The likelihood's normaliser 1 / (1 - e^{-0.999 λ}) of a subnormal
        // rate is infinite.
        for (name, v) in [("lambda", self.lambda), ("lambda_root", self.lambda_root)] {
            if v < f64::MIN_POSITIVE {
                return Err(Error::parameter(format!(
                    "simulator {name} = {} is too small: rates must be at least {}",
                    number(v),
                    number(f64::MIN_POSITIVE)
                )));
            }
        }
        if let Some(c) = self.jet_momentum.iter().find(|c| !c.is_finite()) {
            return Err(Error::parameter(format!(
                "the jet momentum must be finite, not {}",
                number(*c)
            )));
        }
        if self.t_cut >= self.root_mass_squared {
            return Err(Error::parameter(format!(
                "t_cut = {} must be below the jet's mass squared {} (otherwise the jet never splits)",
                number(self.t_cut),
                number(self.root_mass_squared)
            )));
        }
        let energy = self.jet_4momentum()[0];
        if energy.is_nan() || energy > MAX_JET_ENERGY {
            return Err(Error::parameter(format!(
                "the jet's energy sqrt(|p|^2 + M^2) = {} is above {}: its energies and \
                 likelihoods would overflow (lower the momentum or the mass)",
                number(energy),
                number(MAX_JET_ENERGY)
            )));
        }
        let boost = energy * energy / self.t_cut;
        if boost.is_nan() || boost > MAX_BOOST_SQUARED {
            return Err(Error::parameter(format!(
                "the jet's energy {} is too large next to t_cut = {}: E^2 / t_cut = {} is above \
                 {}, so the masses of its particles would be lost to rounding (lower the \
                 momentum or raise t_cut)",
                number(energy),
                number(self.t_cut),
                number(boost),
                number(MAX_BOOST_SQUARED)
            )));
        }
        Ok(())
    }

    /// The jet 4-momentum `(√(|p|² + M²_start), p)`.
    pub fn jet_4momentum(&self) -> [f64; 4] {
        let [px, py, pz] = self.jet_momentum;
        let e = (px * px + py * py + pz * pz + self.root_mass_squared).sqrt();
        [e, px, py, pz]
    }

    /// The settings that reproduce a jet's kind: its rates and cut, and the
    /// mass and 3-momentum of its summed leaves.
    pub fn like(jet: &Jet) -> SimulatorParams {
        let total = jet.leaves.iter().fold([0.0; 4], |acc, p| add(&acc, p));
        SimulatorParams {
            lambda: jet.params.lambda,
            lambda_root: jet.params.lambda_root,
            root_mass_squared: mass_squared(&total),
            t_cut: jet.params.t_cut,
            jet_momentum: [total[1], total[2], total[3]],
        }
    }

    /// The likelihood parameters of jets from these settings.
    pub fn split_params(&self) -> SplitParams {
        SplitParams {
            lambda: self.lambda,
            lambda_root: self.lambda_root,
            t_cut: self.t_cut,
        }
    }
}

/// A uniform `f64` on `[0, 1)`.
#[inline]
fn uniform<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    rng.random::<f64>()
}

/// Below this probability of a proposal landing under `R_MAX`, the truncated
/// exponential is drawn by its own inverse CDF instead of by rejection.
const MIN_ACCEPTANCE: f64 = 0.01;

/// An exponential(λ) draw truncated to `[0, 0.999)`: by rejection, each
/// proposal by the inverse CDF `-ln(1 - v)/λ`; or, when a proposal would
/// land in range with probability `p = 1 - e^{-0.999λ}` below 1% (a small
/// λ, where rejection would all but never end), by the truncated
/// distribution's inverse CDF `-ln(1 - v p)/λ` in one draw. Both give the
/// same distribution.
fn truncated_exponential<R: Rng + ?Sized>(rng: &mut R, lambda: f64) -> f64 {
    let p = -(-lambda * R_MAX).exp_m1();
    if p < MIN_ACCEPTANCE {
        let r = -(-uniform(rng) * p).ln_1p() / lambda;
        // λ so small that λ R_MAX rounds: the distribution is uniform.
        return if r < R_MAX { r } else { R_MAX * uniform(rng) };
    }
    loop {
        let r = -(-uniform(rng)).ln_1p() / lambda;
        if r < R_MAX {
            return r;
        }
    }
}

/// A unit vector uniform on the sphere (Archimedes: `z` uniform on `[-1, 1]`).
fn unit_vector<R: Rng + ?Sized>(rng: &mut R) -> [f64; 3] {
    let z = 2.0 * uniform(rng) - 1.0;
    let phi = std::f64::consts::TAU * uniform(rng);
    let s = (1.0 - z * z).max(0.0).sqrt();
    [s * phi.cos(), s * phi.sin(), z]
}

/// Boosts a rest-frame 4-vector `(e, k)` into the frame where the parent
/// (mass `m`, lab 4-momentum `parent`) moves (module docs, step 5).
fn boost(parent: &[f64; 4], m: f64, e: f64, k: [f64; 3]) -> [f64; 4] {
    let gamma = parent[0] / m;
    let b = [parent[1] / m, parent[2] / m, parent[3] / m];
    let bk = b[0] * k[0] + b[1] * k[1] + b[2] * k[2];
    let c = e + bk / (gamma + 1.0);
    [
        gamma * e + bk,
        k[0] + b[0] * c,
        k[1] + b[1] * c,
        k[2] + b[2] * c,
    ]
}

/// One run of the shower; `cap` abandons it once it has more leaves.
struct Shower<'a, R: ?Sized> {
    params: &'a SimulatorParams,
    rng: &'a mut R,
    leaves: Vec<[f64; 4]>,
    cap: usize,
}

impl<R: Rng + ?Sized> Shower<'_, R> {
    /// The subtree of a particle with 4-momentum `p` and mass squared `t`;
    /// `None` once the leaf cap is exceeded.
    fn particle(&mut self, p: [f64; 4], t: f64, is_root: bool) -> Option<Tree> {
        if t <= self.params.t_cut {
            self.leaves.push(p);
            if self.leaves.len() > self.cap {
                return None;
            }
            return Some(Tree::Leaf(self.leaves.len() - 1));
        }
        let lambda = if is_root {
            self.params.lambda_root
        } else {
            self.params.lambda
        };
        let u = unit_vector(self.rng);
        let r_l = truncated_exponential(self.rng, lambda);
        let r_r = truncated_exponential(self.rng, lambda);
        let m = t.sqrt();
        let t_l = t * r_l;
        let (s_l, s_max) = (t_l.sqrt(), m - t_l.sqrt());
        let t_r = s_max * s_max * r_r;
        let s_r = t_r.sqrt();
        // Two-body decay at rest (step 4).
        let e_l = (t + t_l - t_r) / (2.0 * m);
        let e_r = (t + t_r - t_l) / (2.0 * m);
        let kallen = ((t - (s_l + s_r).powi(2)) * (t - (s_l - s_r).powi(2))).max(0.0);
        let q = kallen.sqrt() / (2.0 * m);
        let k = [q * u[0], q * u[1], q * u[2]];
        let mut left = (boost(&p, m, e_l, k), t_l);
        let mut right = (boost(&p, m, e_r, [-k[0], -k[1], -k[2]]), t_r);
        if self.rng.random::<bool>() {
            std::mem::swap(&mut left, &mut right);
        }
        let l = self.particle(left.0, left.1, false)?;
        let r = self.particle(right.0, right.1, false)?;
        Some(Tree::node(l, r))
    }
}

/// Runs the shower; `None` if it exceeds `cap` leaves.
fn simulate_capped<R: Rng + ?Sized>(
    params: &SimulatorParams,
    rng: &mut R,
    cap: usize,
) -> Option<(Vec<[f64; 4]>, Tree)> {
    let mut shower = Shower {
        params,
        rng,
        leaves: Vec::new(),
        cap,
    };
    let tree = shower.particle(params.jet_4momentum(), params.root_mass_squared, true)?;
    Some((shower.leaves, tree))
}

/// Simulates one jet: its leaves (4-momenta `(E, px, py, pz)` in depth-first,
/// left-first order) and its true tree over leaf indices, with the left and
/// right children as generated. See the module docs for the process.
///
/// The number of leaves is unbounded; it grows quickly as `t_cut / M²_start`
/// shrinks (mostly 4 to 12 for [`SimulatorParams::qcd`], 14 to 35 for [`SimulatorParams::w`]).
///
/// # Panics
///
/// If `params` is invalid ([`SimulatorParams::validate`]).
pub fn simulate<R: Rng + ?Sized>(params: &SimulatorParams, rng: &mut R) -> (Vec<[f64; 4]>, Tree) {
    if let Err(e) = params.validate() {
        panic!("{e}");
    }
    simulate_capped(params, rng, usize::MAX).expect("no leaf cap")
}

/// The seed of jet `k` of a run with seed `seed`:
/// `splitmix64(splitmix64(seed) ^ k)`, where `splitmix64(x)` is the SplitMix64
/// output for state `x` (add `0x9E3779B97F4A7C15`, then the two xor-shift-multiply
/// rounds and a final xor-shift). Jet `k` is simulated with
/// `Xoshiro256PlusPlus::seed_from_u64(jet_seed(seed, k))`.
pub fn jet_seed(seed: u64, k: usize) -> u64 {
    fn splitmix64(x: u64) -> u64 {
        let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    splitmix64(splitmix64(seed) ^ k as u64)
}

/// The parameters, for messages.
fn describe(p: &SimulatorParams) -> String {
    format!(
        "lambda {}, lambda_root {}, M2start {}, t_cut {}",
        number(p.lambda),
        number(p.lambda_root),
        number(p.root_mass_squared),
        number(p.t_cut)
    )
}

fn check_window(min_leaves: usize, max_leaves: usize) -> Result<()> {
    if min_leaves < 2 {
        return Err(Error::parameter(format!(
            "min_leaves = {min_leaves}: every jet has at least 2 leaves"
        )));
    }
    if min_leaves > max_leaves {
        return Err(Error::parameter(format!(
            "min_leaves = {min_leaves} is above max_leaves = {max_leaves}"
        )));
    }
    if min_leaves > MAX_JET_LEAVES {
        return Err(Error::parameter(format!(
            "min_leaves = {min_leaves} is above the {MAX_JET_LEAVES} leaves a jet may have"
        )));
    }
    Ok(())
}

/// Jet `k` of [`generate`]`(params, _, min_leaves, max_leaves, seed)`, alone.
pub fn generate_jet(
    params: &SimulatorParams,
    seed: u64,
    k: usize,
    min_leaves: usize,
    max_leaves: usize,
) -> Result<Jet> {
    params.validate()?;
    check_window(min_leaves, max_leaves)?;
    let per_jet_seed = jet_seed(seed, k);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(per_jet_seed);
    let mut tries = 0u64;
    let cap = max_leaves.min(MAX_JET_LEAVES);
    let (leaves, truth) = loop {
        if tries == MAX_TRIES_PER_JET {
            let window = if max_leaves == usize::MAX {
                format!("at least {min_leaves}")
            } else {
                format!("{min_leaves} to {max_leaves}")
            };
            return Err(Error::parameter(format!(
                "no jet with {window} leaves in {MAX_TRIES_PER_JET} simulations (jet {k}, seed \
                 {seed}); the window is too unlikely for these parameters ({})",
                describe(params)
            )));
        }
        tries += 1;
        match simulate_capped(params, &mut rng, cap) {
            Some((leaves, tree)) if leaves.len() >= min_leaves => break (leaves, tree),
            None if max_leaves > MAX_JET_LEAVES => {
                return Err(Error::parameter(format!(
                    "jet {k} (seed {seed}) grew past {MAX_JET_LEAVES} leaves: t_cut = {} is too \
                     far below the jet's mass squared {} (raise t_cut or set a maximum number \
                     of leaves)",
                    number(params.t_cut),
                    number(params.root_mass_squared)
                )));
            }
            _ => {}
        }
    };
    let jet_p = leaves.iter().fold([0.0; 4], |acc, p| add(&acc, p));
    let mass2 = mass_squared(&jet_p);
    let n = leaves.len();
    let jet_4momentum = params.jet_4momentum();
    let mut extra = Map::new();
    extra.insert("N".into(), Value::from(n));
    extra.insert("seed".into(), Value::from(per_jet_seed));
    extra.insert(
        "params".into(),
        json!({
            "lambda": params.lambda,
            "lambda_root": params.lambda_root,
            "delta_min": params.t_cut,
            "pt_cut": params.t_cut,
            "root_mass_squared": params.root_mass_squared,
            "M_hard": params.root_mass_squared.sqrt(),
            "jet_4momentum_from_leaves": jet_p,
            "jet_mass_squared_from_leaves": mass2,
        }),
    );
    extra.insert(
        "generator".into(),
        json!({
            "code": "trellis ginkgo simulator",
            "rate": [params.lambda_root, params.lambda],
            "lambda": params.lambda,
            "lambda_root": params.lambda_root,
            "M2start": params.root_mass_squared,
            "pt_min": params.t_cut,
            "jet_p": jet_4momentum,
            "run_seed": seed,
            "index": k,
            "rng": "Xoshiro256PlusPlus::seed_from_u64(seed), seed = splitmix64(splitmix64(run_seed) ^ index)",
            "min_leaves": min_leaves,
            "max_leaves": (max_leaves != usize::MAX).then_some(max_leaves),
            "tries": tries,
        }),
    );
    let mut jet = Jet {
        id: format!("gen_s{seed}_{k}"),
        leaves,
        params: params.split_params(),
        truth: Some(truth),
        extra,
    };
    let truth = jet.truth.as_ref().expect("just set");
    let ll = tree_log_potential(&Ginkgo::new(&jet, Variant::Current), truth)?;
    // JSON has no infinity or NaN: a jet whose numbers are not all finite
    // (parameters at the edge of the floating-point range) is an error.
    if !(ll.is_finite() && jet.leaves.iter().flatten().all(|x| x.is_finite())) {
        return Err(Error::parameter(format!(
            "jet {k} (seed {seed}) has a non-finite energy or likelihood: these parameters \
             ({}) are outside the range the simulator computes in",
            describe(params)
        )));
    }
    let ll_value = Value::from(ll);
    jet.extra
        .insert("truth_log_likelihood".into(), ll_value.clone());
    jet.extra
        .insert("truth_log_likelihood_from_leaves".into(), ll_value);
    Ok(jet)
}

/// `n_jets` independent jets with `min_leaves <= N <= max_leaves` leaves
/// (both inclusive; `usize::MAX` for no upper bound), jet `k` generated by
/// [`generate_jet`] from [`jet_seed`]`(seed, k)` (in parallel; the result does
/// not depend on the number of threads).
///
/// Each jet has id `gen_s{seed}_{k}`, its truth tree, and in `extra`: `N`,
/// `seed` (the per-jet seed), `truth_log_likelihood` (current likelihood of
/// the truth tree, from the leaves; equal to `truth_log_likelihood_from_leaves`),
/// `params` (the dataset schema's fields) and `generator` (this simulator's settings).
///
/// Errors: invalid parameters, `min_leaves < 2`, `min_leaves > max_leaves`,
/// or a window so unlikely that [`MAX_TRIES_PER_JET`] simulations of one jet
/// all miss it.
pub fn generate(
    params: &SimulatorParams,
    n_jets: usize,
    min_leaves: usize,
    max_leaves: usize,
    seed: u64,
) -> Result<Vec<Jet>> {
    params.validate()?;
    check_window(min_leaves, max_leaves)?;
    crate::base::par::collect_range(n_jets, true, |k| {
        generate_jet(params, seed, k, min_leaves, max_leaves)
    })
    .into_iter()
    .collect()
}

/// Jets generated per parallel batch of a [`JetStream`].
const BATCH: usize = 256;

/// The jets of [`generate`], made in parallel batches of a few hundred as
/// they are taken, so that many jets need not be held in memory at once
/// (`trellis ginkgo generate` writes each as it comes). The same jets, in
/// the same order, as [`generate`]; after the last, [`JetStream::meta`] is
/// the `meta` of [`generate_file`].
#[derive(Debug)]
pub struct JetStream {
    params: SimulatorParams,
    preset: String,
    n_jets: usize,
    min_leaves: usize,
    max_leaves: Option<usize>,
    seed: u64,
    next: usize,
    batch: std::vec::IntoIter<Result<Jet>>,
    histogram: std::collections::BTreeMap<usize, usize>,
    tried: u64,
}

/// A [`JetStream`] over the jets of [`generate_file`]`(params, preset,
/// n_jets, min_leaves, max_leaves, seed)`.
///
/// # Errors
///
/// Invalid parameters or window (checked before any jet is simulated).
pub fn generate_stream(
    params: &SimulatorParams,
    preset: &str,
    n_jets: usize,
    min_leaves: usize,
    max_leaves: Option<usize>,
    seed: u64,
) -> Result<JetStream> {
    params.validate()?;
    check_window(min_leaves, max_leaves.unwrap_or(usize::MAX))?;
    Ok(JetStream {
        params: *params,
        preset: preset.to_string(),
        n_jets,
        min_leaves,
        max_leaves,
        seed,
        next: 0,
        batch: Vec::new().into_iter(),
        histogram: Default::default(),
        tried: 0,
    })
}

impl Iterator for JetStream {
    type Item = Result<Jet>;

    fn next(&mut self) -> Option<Result<Jet>> {
        if self.batch.len() == 0 {
            if self.next >= self.n_jets {
                return None;
            }
            let start = self.next;
            let len = BATCH.min(self.n_jets - start);
            let (params, seed) = (&self.params, self.seed);
            let (min, max) = (self.min_leaves, self.max_leaves.unwrap_or(usize::MAX));
            self.batch = crate::base::par::collect_range(len, true, |i| {
                generate_jet(params, seed, start + i, min, max)
            })
            .into_iter();
            self.next += len;
        }
        let jet = self.batch.next()?;
        if let Ok(j) = &jet {
            *self.histogram.entry(j.len()).or_default() += 1;
            self.tried += j.extra["generator"]["tries"].as_u64().unwrap_or(0);
        }
        Some(jet)
    }
}

impl JetStream {
    /// How the jets were made (see [`generate_file`]); the histogram and the
    /// number of simulations tried count the jets taken so far.
    pub fn meta(&self) -> Value {
        let params = &self.params;
        let histogram: serde_json::Map<String, Value> = self
            .histogram
            .iter()
            .map(|(n, c)| (n.to_string(), (*c).into()))
            .collect();
        serde_json::json!({
            "generator": "trellis generate (trellis ginkgo simulator)",
            "version": env!("CARGO_PKG_VERSION"),
            "preset": self.preset,
            "params": {
                "lambda": params.lambda,
                "lambda_root": params.lambda_root,
                "root_mass_squared": params.root_mass_squared,
                "M_hard": params.root_mass_squared.sqrt(),
                "t_cut": params.t_cut,
                "jet_momentum": params.jet_momentum,
                "jet_4momentum": params.jet_4momentum(),
            },
            "seed": self.seed,
            "n_jets": self.n_jets,
            "min_leaves": self.min_leaves,
            "max_leaves": self.max_leaves,
            "window": "min_leaves <= N <= max_leaves, both inclusive (jets outside are re-simulated)",
            "per_jet_seed": "jet k: Xoshiro256PlusPlus::seed_from_u64(splitmix64(splitmix64(seed) ^ k))",
            "n_tried": self.tried,
            "leaf_count_histogram_of_kept_jets": histogram,
        })
    }
}

/// [`generate`] as a jets file, whose `meta` records how it was made: the
/// generator and crate version, `preset` (a label of the parameter set),
/// the parameters, the seed and window, the per-jet seeding rule, the number
/// of simulations tried and the histogram of leaf counts of the kept jets.
/// (All in memory; [`generate_stream`] makes the same jets a batch at a time.)
pub fn generate_file(
    params: &SimulatorParams,
    preset: &str,
    n_jets: usize,
    min_leaves: usize,
    max_leaves: Option<usize>,
    seed: u64,
) -> Result<crate::ginkgo::JetsFile> {
    let mut stream = generate_stream(params, preset, n_jets, min_leaves, max_leaves, seed)?;
    let jets = stream.by_ref().collect::<Result<Vec<Jet>>>()?;
    Ok(crate::ginkgo::JetsFile {
        meta: stream.meta(),
        jets,
    })
}
