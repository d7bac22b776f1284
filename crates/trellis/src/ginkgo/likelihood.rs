//! The Ginkgo split likelihood, in its two published forms.
//!
//! Ginkgo (Cranmer, Macaluso, Pappadopulo) is a toy parton shower: a parent of
//! invariant mass squared `t_P` decays into two children whose masses squared
//! are drawn from truncated exponentials scaled by the parent's, until a
//! child falls below the cut `t_cut`; then it is a leaf (an observed
//! particle). The likelihood of a split is the density of the children's
//! masses given the parent's, times `1/(4π)` for the uniform decay direction.
//! A tree's log-likelihood is the sum over its internal nodes; the root split
//! uses the rate `λ_root`, every other split `λ`.
//!
//! Notation: `t = E² - |p|²` of the summed 4-momentum of a cluster, and the
//! single-child term
//!
//! ```text
//! g(T, t) = c + ln λ - ln T - λ t / T        if the child splits further (t > t_cut)
//!         = c + ln(1 - exp(-λ min(T, t_cut) / T))   if it stops (a leaf: t <= t_cut)
//! ```
//!
//! **Current** (the simulator's stored values and the reference trellis;
//! `c = -ln(1 - e^{-0.999 λ})` because the simulator truncates its draws at
//! `0.999`): the simulator samples either child first with probability 1/2, so
//!
//! ```text
//! ln ψ = ln( ½ e^{g(t_P, t_L) + g((√t_P - √t_L)², t_R)} + ½ e^{g(t_P, t_R) + g((√t_P - √t_R)², t_L)} ) - ln 4π
//! ```
//!
//! and the split is impossible (`-∞`) unless `t_P > t_cut`, `t_L, t_R < 0.999 t_P`
//! and `√t_L + √t_R ≤ √t_P`.
//!
//! **Legacy** (the AISTATS paper's tables, StandardHC's greedy and beam
//! search): leaves carry `t = 0` by convention, the larger child is always
//! taken first, `c = -ln(1 - e^{-λ})`, the stop term uses `t_cut / T`, and only
//! `t_P < t_cut` is impossible:
//!
//! ```text
//! ln ψ = g(t_P, t_max) + g((√t_P - √t_max)², t_min) - ln 4π
//! ```
//!
//! (`t > 0` decides "splits further" here.) Both forms are transcribed from the
//! authors' code as documented in `shared/reference/ginkgo.md` §a; the only
//! deliberate deviation: an undefined value (NaN, from degenerate kinematics
//! the legacy form does not exclude) counts as an impossible split.

use std::f64::consts::{LN_2, PI};

/// Which Ginkgo likelihood (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// The current reference likelihood (two-ordering sum).
    Current,
    /// The paper-era likelihood (larger child first, leaves at `t = 0`).
    Legacy,
}

/// The model parameters of a jet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SplitParams {
    /// Decay rate of non-root splits.
    pub lambda: f64,
    /// Decay rate of the root split.
    pub lambda_root: f64,
    /// The mass-squared cut `t_cut` below which a particle does not split.
    pub t_cut: f64,
}

/// `E² - |p|²` of a 4-momentum `(E, px, py, pz)`.
#[inline]
pub fn mass_squared(p: &[f64; 4]) -> f64 {
    p[0] * p[0] - (p[1] * p[1] + p[2] * p[2] + p[3] * p[3])
}

/// Sum of two 4-momenta.
#[inline]
pub fn add(a: &[f64; 4], b: &[f64; 4]) -> [f64; 4] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]]
}

/// `ln(e^a + e^b)`.
#[inline]
fn log_add_exp(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    if lo == f64::NEG_INFINITY {
        hi
    } else {
        hi + (lo - hi).exp().ln_1p()
    }
}

/// The log-likelihood of the split of a parent with mass squared `t_p` into
/// children with `t_l`, `t_r` (for `Legacy`, `t` of a leaf child must be
/// passed as 0), with rate `lambda`.
#[inline]
pub fn split_log_likelihood(
    variant: Variant,
    t_l: f64,
    t_r: f64,
    t_p: f64,
    t_cut: f64,
    lambda: f64,
) -> f64 {
    let v = match variant {
        Variant::Current => current(t_l, t_r, t_p, t_cut, lambda),
        Variant::Legacy => legacy(t_l, t_r, t_p, t_cut, lambda),
    };
    if v.is_nan() { f64::NEG_INFINITY } else { v }
}

fn current(t_l: f64, t_r: f64, t_p: f64, t_cut: f64, lambda: f64) -> f64 {
    if t_p <= 0.0 || t_l < 0.0 || t_r < 0.0 || t_p <= t_cut {
        return f64::NEG_INFINITY;
    }
    let limit = (1.0 - 1e-3) * t_p;
    if t_l >= limit || t_r >= limit {
        return f64::NEG_INFINITY;
    }
    let (s_p, s_l, s_r) = (t_p.sqrt(), t_l.sqrt(), t_r.sqrt());
    if s_l + s_r > s_p {
        return f64::NEG_INFINITY;
    }
    let c = -(-(-(1.0 - 1e-3) * lambda).exp()).ln_1p();
    let ln_lambda = lambda.ln();
    let g = |big_t: f64, t: f64| {
        if t > t_cut {
            c + ln_lambda - big_t.ln() - lambda * t / big_t
        } else {
            c + (-(-lambda * big_t.min(t_cut) / big_t).exp()).ln_1p()
        }
    };
    let (t_p_lr, t_p_rl) = ((s_p - s_l).powi(2), (s_p - s_r).powi(2));
    let l_first = -LN_2 + g(t_p, t_l) + g(t_p_lr, t_r);
    let r_first = -LN_2 + g(t_p, t_r) + g(t_p_rl, t_l);
    log_add_exp(l_first, r_first) - (4.0 * PI).ln()
}

fn legacy(t_l: f64, t_r: f64, t_p: f64, t_cut: f64, lambda: f64) -> f64 {
    if t_p < t_cut {
        return f64::NEG_INFINITY;
    }
    let (t_max, t_min) = if t_l >= t_r { (t_l, t_r) } else { (t_r, t_l) };
    let t_p2 = (t_p.sqrt() - t_max.sqrt()).powi(2);
    let c = -(-(-lambda).exp()).ln_1p();
    let ln_lambda = lambda.ln();
    let g = |big_t: f64, t: f64| {
        if t > 0.0 {
            c + ln_lambda - big_t.ln() - lambda * t / big_t
        } else {
            c + (-(-lambda * t_cut / big_t).exp()).ln_1p()
        }
    };
    g(t_p, t_max) + g(t_p2, t_min) - (4.0 * PI).ln()
}

/// The constants of one rate λ for the fast form of the likelihood.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Rate {
    lambda: f64,
    /// `e^c`, the truncation normaliser of the stop term.
    stop: f64,
    /// `e^c · λ`, the prefactor of the density term.
    density: f64,
    /// `c = ln(e^c)` and `ln(e^c · λ)`, for [`split_bound`].
    ln_stop: f64,
    ln_density: f64,
    /// Whether to try the linear-space form (`λ ≤ 300`); factors outside
    /// `[1e-100, 1e100]` send a split to the log-space form.
    linear: bool,
}

impl Rate {
    pub(crate) fn new(variant: Variant, lambda: f64) -> Rate {
        let truncation = match variant {
            Variant::Current => 1.0 - 1e-3,
            Variant::Legacy => 1.0,
        };
        let stop = 1.0 / -(-truncation * lambda).exp_m1();
        Rate {
            lambda,
            stop,
            density: stop * lambda,
            ln_stop: stop.ln(),
            ln_density: (stop * lambda).ln(),
            linear: lambda <= 300.0,
        }
    }

    /// `e^{g(T, t)}`; `splits` decides between the density and the stop term.
    #[inline(always)]
    fn term(&self, big_t: f64, t: f64, splits: bool, t_cut: f64) -> f64 {
        if splits {
            self.density / big_t * (-self.lambda * t / big_t).exp()
        } else {
            self.stop * -(-self.lambda * big_t.min(t_cut) / big_t).exp_m1()
        }
    }

    /// An upper bound of `ln` [`term`](Rate::term) without `exp` or `log`
    /// (see [`split_bound`]); NaN where `ln_below` cannot bound `ln T`.
    #[inline(always)]
    fn term_bound(&self, big_t: f64, t: f64, splits: bool, t_cut: f64) -> f64 {
        if splits {
            self.ln_density - ln_below(big_t) - self.lambda * t / big_t
        } else {
            self.stop_bound(big_t.min(t_cut), big_t)
        }
    }

    /// [`term_bound`](Rate::term_bound) with `T = t_P`, from the parent's
    /// precomputed `1 / t_P` and lower bound of `ln t_P`.
    #[inline(always)]
    fn parent_term_bound(
        &self,
        p: ParentBounds,
        t: f64,
        splits: bool,
        t_p: f64,
        t_cut: f64,
    ) -> f64 {
        if splits {
            self.ln_density - p.ln_t - self.lambda * t * p.inv_t
        } else {
            self.stop_bound(t_p.min(t_cut), t_p)
        }
    }

    /// An upper bound of `ln(e^c (1 - e^{-x}))`, `x = λ a / T`: with
    /// `1 - e^{-x} ≤ min(1, 2x / (2 + x)) = min(1, 2λa / (2T + λa))`.
    #[inline(always)]
    fn stop_bound(&self, a: f64, big_t: f64) -> f64 {
        let la = self.lambda * a;
        self.ln_stop + ln_above(2.0 * la / (2.0 * big_t + la)).min(0.0)
    }
}

/// Whether the current form forbids a split (see the module docs): the
/// parent at or below the cut, a child of negative mass or of 0.999 of the
/// parent's, or masses that do not fit, `√t_L + √t_R > √t_P`.
#[inline(always)]
fn current_impossible(t_cut: f64, [t_l, t_r, t_p]: [f64; 3], [s_l, s_r, s_p]: [f64; 3]) -> bool {
    let limit = (1.0 - 1e-3) * t_p;
    t_p <= 0.0
        || t_l < 0.0
        || t_r < 0.0
        || t_p <= t_cut
        || t_l >= limit
        || t_r >= limit
        || s_l + s_r > s_p
}

/// The legacy form's order: the larger child's `t`, the smaller's, and the
/// mass squared `(√t_P - √t_max)²` left for the second.
#[inline(always)]
fn legacy_order([t_l, t_r]: [f64; 2], [s_l, s_r, s_p]: [f64; 3]) -> (f64, f64, f64) {
    let (t_max, t_min, s_max) = if t_l >= t_r {
        (t_l, t_r, s_l)
    } else {
        (t_r, t_l, s_r)
    };
    (t_max, t_min, (s_p - s_max) * (s_p - s_max))
}

/// `ln(1 / (8π))`: the ½ of the two orderings and the `1/(4π)` of the direction.
const LN_INV_8PI: f64 = -3.224171427529236;
/// `ln(1 / (4π))`.
const LN_INV_4PI: f64 = -2.5310242469692907;

/// [`split_log_likelihood`] from precomputed constants and square roots,
/// multiplying the factors in linear space with one logarithm at the end:
/// the same function, several times faster. `s_*` are the square roots of
/// the `t_*` (for `Legacy`, `t` and `s` of a leaf child are 0).
#[inline]
#[allow(clippy::too_many_arguments)]
pub(crate) fn split_fast(
    variant: Variant,
    rate: &Rate,
    t_cut: f64,
    t_l: f64,
    t_r: f64,
    t_p: f64,
    s_l: f64,
    s_r: f64,
    s_p: f64,
) -> f64 {
    if !rate.linear {
        return split_log_likelihood(variant, t_l, t_r, t_p, t_cut, rate.lambda);
    }
    let v = match variant {
        Variant::Current => {
            if current_impossible(t_cut, [t_l, t_r, t_p], [s_l, s_r, s_p]) {
                return f64::NEG_INFINITY;
            }
            let (l_splits, r_splits) = (t_l > t_cut, t_r > t_cut);
            let (t_p_lr, t_p_rl) = ((s_p - s_l) * (s_p - s_l), (s_p - s_r) * (s_p - s_r));
            let terms = [
                rate.term(t_p, t_l, l_splits, t_cut),
                rate.term(t_p_lr, t_r, r_splits, t_cut),
                rate.term(t_p, t_r, r_splits, t_cut),
                rate.term(t_p_rl, t_l, l_splits, t_cut),
            ];
            if !terms.iter().all(|&x| normal(x)) {
                return split_log_likelihood(variant, t_l, t_r, t_p, t_cut, rate.lambda);
            }
            (terms[0] * terms[1] + terms[2] * terms[3]).ln() + LN_INV_8PI
        }
        Variant::Legacy => {
            if t_p < t_cut {
                return f64::NEG_INFINITY;
            }
            let (t_max, t_min, t_p2) = legacy_order([t_l, t_r], [s_l, s_r, s_p]);
            let first = rate.term(t_p, t_max, t_max > 0.0, t_cut);
            // The legacy stop term uses t_cut / T even when T < t_cut.
            let second = if t_min > 0.0 {
                rate.term(t_p2, t_min, true, t_cut)
            } else {
                rate.stop * -(-rate.lambda * t_cut / t_p2).exp_m1()
            };
            if !(normal(first) && normal(second)) {
                return split_log_likelihood(variant, t_l, t_r, t_p, t_cut, rate.lambda);
            }
            (first * second).ln() + LN_INV_4PI
        }
    };
    if v.is_nan() { f64::NEG_INFINITY } else { v }
}

/// An upper bound of [`split_fast`] (the same arguments) evaluated without
/// `exp` or `log`, for the MAP search's pruning (see
/// [`Model::log_potential_bound`](crate::models::Model::log_potential_bound)).
///
/// Each factor of the likelihood is bounded in log space: a density term
/// `ln(e^c λ) - ln T - λ t / T` exactly but for `ln T`, which is bounded
/// below from the float's exponent and mantissa ([`ln_below`]); a stop term
/// `e^c (1 - e^{-x})` by `e^c · min(1, 2x / (2 + x))` (`e^x ≤ (2+x)/(2-x)`
/// for `0 ≤ x < 2`), with its `ln` bounded above ([`ln_above`]). The current
/// form's average of two orderings, `ln(½(A + B))` with `ln A ≤ a` and
/// `ln B ≤ b`, is at most `(a + b)/2 + ln cosh(d/2)`, `d = |a - b|`, and
/// `ln cosh y ≤ min(y²/2, y)`. Impossible splits are `-∞` exactly as in
/// [`split_fast`]; `+∞` (no bound) for the log-space rates (`λ > 300`) and
/// for masses the bounds do not cover. A relative margin of `1e-9` covers
/// the rounding of both this bound and the likelihood.
#[inline]
#[allow(clippy::too_many_arguments)]
pub(crate) fn split_bound(
    variant: Variant,
    rate: &Rate,
    t_cut: f64,
    [t_l, t_r, t_p]: [f64; 3],
    [s_l, s_r, s_p]: [f64; 3],
    parent: ParentBounds,
) -> f64 {
    if !rate.linear {
        return f64::INFINITY;
    }
    let v = match variant {
        Variant::Current => {
            if current_impossible(t_cut, [t_l, t_r, t_p], [s_l, s_r, s_p]) {
                return f64::NEG_INFINITY;
            }
            let (l_splits, r_splits) = (t_l > t_cut, t_r > t_cut);
            let (t_p_lr, t_p_rl) = ((s_p - s_l) * (s_p - s_l), (s_p - s_r) * (s_p - s_r));
            let first =
                |t: f64, splits: bool| rate.parent_term_bound(parent, t, splits, t_p, t_cut);
            let l_first = first(t_l, l_splits) + rate.term_bound(t_p_lr, t_r, r_splits, t_cut);
            let r_first = first(t_r, r_splits) + rate.term_bound(t_p_rl, t_l, l_splits, t_cut);
            let half = 0.5 * (l_first - r_first).abs();
            0.5 * (l_first + r_first) + (0.5 * half * half).min(half) + LN_INV_4PI
        }
        Variant::Legacy => {
            if t_p < t_cut {
                return f64::NEG_INFINITY;
            }
            let (t_max, t_min, t_p2) = legacy_order([t_l, t_r], [s_l, s_r, s_p]);
            let first = rate.parent_term_bound(parent, t_max, t_max > 0.0, t_p, t_cut);
            let second = if t_min > 0.0 {
                rate.term_bound(t_p2, t_min, true, t_cut)
            } else {
                rate.stop_bound(t_cut, t_p2)
            };
            first + second + LN_INV_4PI
        }
    };
    // Rounding of the bound itself: keep it above the evaluated likelihood.
    if v.is_nan() {
        f64::INFINITY
    } else {
        v + 1e-9 * (1.0 + v.abs())
    }
}

/// What [`split_bound`] reads of a parent besides its mass: `1 / t` and a
/// lower bound of `ln t`, computed once per cluster ([`ParentBounds::of`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ParentBounds {
    inv_t: f64,
    ln_t: f64,
}

impl ParentBounds {
    /// The bounds of a cluster of mass squared `t` (NaN or `±∞` where `t` is
    /// not a positive normal number: the split bound then says nothing).
    pub(crate) fn of(t: f64) -> ParentBounds {
        ParentBounds {
            inv_t: 1.0 / t,
            ln_t: ln_below(t),
        }
    }
}

/// A lower bound of `ln x` for a positive normal `x = 2^e (1 + u)`,
/// `0 ≤ u < 1`: `ln(1 + u) ≥ u ln 2` (the chord of a concave function; at
/// most 0.061 below); `-∞` for a positive `x` that is not normal (the bound
/// then says nothing), NaN for anything else.
#[inline(always)]
fn ln_below(x: f64) -> f64 {
    match exponent_and_mantissa(x) {
        Some((e, m)) => (e + (m - 1.0)) * LN_2,
        None if x > 0.0 && x.is_finite() => f64::NEG_INFINITY,
        None => f64::NAN,
    }
}

/// An upper bound of `ln x` for a positive normal `x = 2^e m`: the tangent
/// of `ln` at `m = 3/2` (at most 0.072 above); `+∞` for anything else.
#[inline(always)]
fn ln_above(x: f64) -> f64 {
    /// `ln(3/2)`.
    const LN_3_2: f64 = 0.4054651081081644;
    match exponent_and_mantissa(x) {
        Some((e, m)) => e * LN_2 + LN_3_2 + (m - 1.5) * (2.0 / 3.0),
        None => f64::INFINITY,
    }
}

/// `(e, m)` with `x = 2^e · m`, `1 ≤ m < 2`, for a positive normal `x`.
#[inline(always)]
fn exponent_and_mantissa(x: f64) -> Option<(f64, f64)> {
    if !x.is_normal() || x < 0.0 {
        return None;
    }
    let bits = x.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let m = f64::from_bits((bits & ((1u64 << 52) - 1)) | (1023u64 << 52));
    Some((e as f64, m))
}

/// Whether a factor is far from underflow and overflow, so that products of
/// a few of them keep full precision. Outside that range (possible in the
/// legacy form, which allows `t > T`) the log-space form is used.
#[inline(always)]
fn normal(x: f64) -> bool {
    x > 1e-100 && x < 1e100
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_splits() {
        // Parent below the cut, child heavier than the parent, masses that do not fit.
        assert_eq!(current(1.0, 1.0, 10.0, 16.0, 1.5), f64::NEG_INFINITY);
        assert_eq!(current(899.5, 1.0, 900.0, 16.0, 1.5), f64::NEG_INFINITY);
        assert_eq!(current(400.0, 400.0, 900.0, 16.0, 1.5), f64::NEG_INFINITY);
        assert!(current(100.0, 50.0, 900.0, 16.0, 1.5).is_finite());
        assert_eq!(legacy(0.0, 0.0, 10.0, 16.0, 1.5), f64::NEG_INFINITY);
        assert!(legacy(0.0, 0.0, 20.0, 16.0, 1.5).is_finite());
    }

    #[test]
    fn symmetric_in_the_children() {
        for (l, r) in [(100.0, 50.0), (3.0, 200.0), (0.5, 1.0)] {
            assert_eq!(
                current(l, r, 900.0, 16.0, 1.5),
                current(r, l, 900.0, 16.0, 1.5)
            );
            assert_eq!(
                legacy(l, r, 900.0, 16.0, 1.5),
                legacy(r, l, 900.0, 16.0, 1.5)
            );
        }
    }

    #[test]
    fn fast_form_equals_the_log_space_form() {
        // Deterministic pseudo-random kinematics, including leaves (t <= t_cut),
        // impossible splits and the legacy degenerate cases.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut unit = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        for _ in 0..200_000 {
            let t_p = 900.0 * unit() * 1.2;
            let t_l = t_p * unit() * unit();
            let t_r = t_p * unit() * unit();
            let (t_cut, lambda) = (16.0 * unit() + 0.5, 0.2 + 3.0 * unit());
            for variant in [Variant::Current, Variant::Legacy] {
                let (tl, tr) = if variant == Variant::Legacy && unit() < 0.3 {
                    (0.0, t_r)
                } else {
                    (t_l, t_r)
                };
                let want = split_log_likelihood(variant, tl, tr, t_p, t_cut, lambda);
                let rate = Rate::new(variant, lambda);
                let got = split_fast(
                    variant,
                    &rate,
                    t_cut,
                    tl,
                    tr,
                    t_p,
                    tl.sqrt(),
                    tr.sqrt(),
                    t_p.sqrt(),
                );
                let ok = (got == want) || (got - want).abs() <= 1e-12 * want.abs().max(1.0);
                assert!(
                    ok,
                    "{variant:?} t=({tl}, {tr}, {t_p}) cut {t_cut} λ {lambda}: {got} vs {want}"
                );
            }
        }
        assert_eq!(LN_INV_8PI, -(8.0 * PI).ln());
        assert_eq!(LN_INV_4PI, -(4.0 * PI).ln());
    }

    /// The bound of the MAP search's pruning is never below the evaluated
    /// likelihood (fast or log-space form) and, where both are finite, at
    /// most 1.5 nats above it (the pruning's power: each factor's bound is
    /// within a few tenths of a nat).
    #[test]
    fn split_bound_is_an_upper_bound_and_tight() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut unit = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        let (mut finite, mut worst) = (0, 0.0f64);
        for _ in 0..300_000 {
            let t_p = 900.0 * unit() * 1.2 * 10f64.powi((unit() * 6.0) as i32 - 3);
            let t_l = t_p * unit() * unit();
            let t_r = t_p * unit() * unit();
            let t_cut = t_p * unit() * unit() + 1e-3;
            let lambda =
                [0.2 + 3.0 * unit(), 50.0 * unit() + 1e-3, 250.0, 400.0][(unit() * 4.0) as usize];
            for variant in [Variant::Current, Variant::Legacy] {
                let (tl, tr) = if variant == Variant::Legacy && unit() < 0.3 {
                    (0.0, t_r)
                } else {
                    (t_l, t_r)
                };
                let (t, s) = ([tl, tr, t_p], [tl.sqrt(), tr.sqrt(), t_p.sqrt()]);
                let rate = Rate::new(variant, lambda);
                let got = split_fast(variant, &rate, t_cut, tl, tr, t_p, s[0], s[1], s[2]);
                let exact = split_log_likelihood(variant, tl, tr, t_p, t_cut, lambda);
                let bound = split_bound(variant, &rate, t_cut, t, s, ParentBounds::of(t_p));
                let what = format!("{variant:?} t=({tl}, {tr}, {t_p}) cut {t_cut} λ {lambda}");
                assert!(
                    bound >= got && bound >= exact,
                    "{what}: bound {bound} below {got}"
                );
                if got.is_finite() && bound.is_finite() {
                    finite += 1;
                    worst = worst.max(bound - got);
                }
            }
        }
        assert!(finite > 100_000, "{finite}");
        assert!(worst < 1.5, "bound up to {worst} nats above the likelihood");
    }

    #[test]
    fn density_integrates_to_one_over_the_child_mass() {
        // For the legacy form with a leaf second child, g(t_P, t) as a density
        // of t over (0, t_P) integrates to 1 (the 1/(1-e^-λ) normaliser).
        let (t_p, lambda) = (900.0f64, 1.5f64);
        let c = -(-(-lambda).exp()).ln_1p();
        let steps = 200_000;
        let h = t_p / steps as f64;
        let total: f64 = (0..steps)
            .map(|k| {
                let t = (k as f64 + 0.5) * h;
                (c + lambda.ln() - t_p.ln() - lambda * t / t_p).exp() * h
            })
            .sum();
        assert!((total - 1.0).abs() < 1e-9, "{total}");
    }
}
