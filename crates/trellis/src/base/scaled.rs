//! Scaled linear arithmetic: numbers `mant · 2^exp` with a wide integer exponent.
//!
//! The partition function of 25 points with `|log ψ|` up to 1e4 is about
//! `e^(2.4e5)`, far outside `f64`. Log-space sums need an `exp` per term, which
//! would dominate the `O(3^n)` loop. Instead every table value is kept as a
//! mantissa in `[1, 2)` and an `i32` power of two: a product is a multiply and an
//! integer add, and a sum rescales each term by a power of two built directly
//! from its exponent bits (no `exp`, no subnormals: terms more than 2^1022
//! below the running reference are exactly zero, which is far below `f64`
//! precision of the result).
//!
//! The exponent is an `i32` and sums of a few exponents must not overflow it,
//! so scaled numbers only cover `|ln x|` up to `SEPARABLE_LOG_LIMIT` (about
//! 4.6e7, see `dense/kernel.rs`): the trellises check that every value of a
//! problem is in that range before they use them, and otherwise run their
//! log-space kernels, which keep sums relative to their largest term
//! ([`RelativeSum`]) and are exact for any finite potential.

use std::f64::consts::LOG2_E;

/// Exponent used for zero, chosen so that sums of a few of them cannot overflow `i32`.
pub(crate) const ZERO_EXP: i32 = -(1 << 28);

/// `ln 2` split so that `e · LN2_HI` is exact for `|e| < 2^21` (fdlibm's
/// `ln2_hi` and `ln2_lo`, given by their bits).
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);

/// A non-negative number `mant · 2^exp`; `mant` is in `[1, 2)`, or 0 for zero.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Scaled {
    pub mant: f64,
    pub exp: i32,
}

impl Scaled {
    pub const ZERO: Scaled = Scaled {
        mant: 0.0,
        exp: ZERO_EXP,
    };

    /// `e^x` as a scaled number (`x = -∞` gives zero).
    #[inline]
    pub fn from_ln(x: f64) -> Scaled {
        if x == f64::NEG_INFINITY {
            return Scaled::ZERO;
        }
        debug_assert!(
            x.is_finite() && x.abs() <= 2.0 * SEPARABLE_LOG_LIMIT,
            "from_ln({x}) is outside the range of scaled numbers"
        );
        let e = (x * LOG2_E).floor();
        // x - e·ln2 in two steps keeps the reduced argument accurate for large |x|.
        let r = (x - e * LN2_HI) - e * LN2_LO;
        let mut mant = r.exp();
        let mut exp = e as i32;
        // Rounding can push the mantissa just outside [1, 2).
        if mant >= 2.0 {
            mant *= 0.5;
            exp += 1;
        } else if mant < 1.0 {
            mant *= 2.0;
            exp -= 1;
        }
        Scaled { mant, exp }
    }

    /// A mantissa in `[0.25, 4)` (or 0, or NaN) and an exponent, normalised.
    #[inline]
    fn normalised(mut mant: f64, mut exp: i32) -> Scaled {
        if mant == 0.0 {
            return Scaled::ZERO;
        }
        if mant >= 2.0 {
            mant *= 0.5;
            exp += 1;
        } else if mant < 1.0 {
            mant *= 2.0;
            exp -= 1;
        }
        Scaled { mant, exp }
    }

    /// The product (one rounding).
    #[inline]
    pub fn mul(self, other: Scaled) -> Scaled {
        if self.mant == 0.0 || other.mant == 0.0 {
            return Scaled {
                mant: self.mant * other.mant,
                exp: ZERO_EXP,
            };
        }
        Scaled::normalised(self.mant * other.mant, self.exp + other.exp)
    }

    /// The quotient by a non-zero number (one rounding).
    #[inline]
    pub fn div(self, other: Scaled) -> Scaled {
        if self.mant == 0.0 {
            return Scaled {
                mant: self.mant / other.mant,
                exp: ZERO_EXP,
            };
        }
        Scaled::normalised(self.mant / other.mant, self.exp - other.exp)
    }

    /// `e^max · e^rel` for a MAP value `max` and a relative part `rel` (see
    /// [`RelativeSum`]): the same number for the same pair, everywhere it is
    /// rebuilt, and within a few roundings of the sum it was taken from by
    /// [`relative_of`].
    #[inline]
    pub fn from_relative(max: f64, rel: f64) -> Scaled {
        let m = Scaled::from_ln(max);
        if m.mant == 0.0 {
            return m;
        }
        Scaled::normalised(m.mant * rel.exp(), m.exp)
    }

    /// `x · 2^exp` for a non-negative normal `x` (or 0): exact.
    #[inline]
    pub fn from_parts(x: f64, exp: i32) -> Scaled {
        if x == 0.0 {
            return Scaled::ZERO;
        }
        debug_assert!(x.is_normal() && x > 0.0, "from_parts({x})");
        let bits = x.to_bits();
        let e = ((bits >> 52) & 0x7ff) as i32 - 1023;
        let mant = f64::from_bits((bits & ((1u64 << 52) - 1)) | (1023u64 << 52));
        Scaled { mant, exp: e + exp }
    }

    /// Natural logarithm (`-∞` for zero).
    #[inline]
    pub fn ln(self) -> f64 {
        if self.mant == 0.0 {
            f64::NEG_INFINITY
        } else {
            let e = self.exp as f64;
            e * LN2_HI + (e * LN2_LO + self.mant.ln())
        }
    }
}

/// `2^d` for `d ≤ 0`, exactly zero when `d < -1022` (never subnormal).
#[inline(always)]
pub(crate) fn pow2_nonpositive(d: i32) -> f64 {
    debug_assert!(d <= 0);
    let d = d.max(-1023);
    f64::from_bits(((d + 1023) as u64) << 52)
}

/// Extra bits of headroom taken when the reference exponent moves up, so that a
/// run of slightly larger terms does not rescale each time.
const HEADROOM: i32 = 8;

/// A running sum of scaled terms with a moving reference exponent.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Acc {
    sum: f64,
    exp: i32,
}

impl Acc {
    #[inline(always)]
    pub fn new() -> Acc {
        Acc {
            sum: 0.0,
            exp: ZERO_EXP,
        }
    }

    /// Adds `mant · 2^exp` (`mant` ≥ 0 and below 2^16). The first non-zero
    /// term sets the reference, wherever it is.
    #[inline(always)]
    pub fn add(&mut self, mant: f64, exp: i32) {
        if self.sum == 0.0 {
            if mant == 0.0 {
                return;
            }
            self.exp = exp + HEADROOM;
        } else if exp > self.exp {
            let new = exp + HEADROOM;
            self.sum *= pow2_nonpositive(self.exp - new);
            self.exp = new;
        }
        self.sum += mant * pow2_nonpositive(exp - self.exp);
    }

    /// The sum as a scaled number.
    #[inline]
    pub fn value(self) -> Scaled {
        if self.sum == 0.0 {
            return Scaled::ZERO;
        }
        let (mut sum, mut exp) = (self.sum, self.exp);
        if sum < f64::MIN_POSITIVE {
            sum *= 2f64.powi(64);
            exp -= 64;
        }
        let bits = sum.to_bits();
        let biased = ((bits >> 52) & 0x7ff) as i32;
        let mant = f64::from_bits((bits & !(0x7ffu64 << 52)) | (1023u64 << 52));
        Scaled {
            mant,
            exp: exp + biased - 1023,
        }
    }
}

/// Streaming log-sum-exp for the general (non-separable) kernels: one `exp` per term.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LogSumExp {
    max: f64,
    sum: f64,
}

impl LogSumExp {
    #[inline(always)]
    pub fn new() -> LogSumExp {
        LogSumExp {
            max: f64::NEG_INFINITY,
            sum: 0.0,
        }
    }

    #[inline(always)]
    pub fn add(&mut self, x: f64) {
        if x > self.max {
            // `exp(-inf - x)` is 0 for the first finite term.
            self.sum = self.sum * (self.max - x).exp() + 1.0;
            self.max = x;
        } else if x > f64::NEG_INFINITY {
            self.sum += (x - self.max).exp();
        } else if x.is_nan() {
            self.max = f64::NAN;
        }
    }

    #[inline]
    pub fn ln(self) -> f64 {
        if self.max == f64::NEG_INFINITY || self.max.is_nan() || self.max == f64::INFINITY {
            self.max
        } else {
            self.max + self.sum.ln()
        }
    }
}

/// A sum `Σ exp(v_i + r_i)` kept relative to its largest `v`: the log-space
/// kernels' form of `Z = e^M · e^r`, where `M` is the MAP value (huge at
/// extreme β) and `r = ln(Z / e^M)` is small (between 0 and the log of the
/// number of structures).
///
/// A log-space sum of terms of magnitude `V` has an absolute rounding error of
/// about `V · 2^-52`, which swamps every probability once `V` is past 10^16 (and
/// makes them drift well before). Keeping `M` and `r` apart avoids it: `M` is
/// the largest `v` itself (the same floating-point value the MAP pass computes),
/// each term enters as `exp((v - M) + r_i)`, and the difference `v - M` is
/// exactly 0 for the maximising term and for exact ties. Probabilities
/// computed from `(v - M) + r_L + r_R - r_S` are then exact at any magnitude.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RelativeSum {
    max: f64,
    sum: f64,
}

impl RelativeSum {
    #[inline(always)]
    pub fn new() -> RelativeSum {
        RelativeSum {
            max: f64::NEG_INFINITY,
            sum: 0.0,
        }
    }

    /// Adds `exp(v + r)`, with `v` compared for the maximum and `r` small
    /// (finite, or `-∞` for a zero term). A NaN `v` makes the result NaN.
    #[inline(always)]
    pub fn add(&mut self, v: f64, r: f64) {
        if v > self.max {
            // The first finite term: `exp(-∞) = 0` clears the empty sum.
            self.sum = self.sum * (self.max - v).exp() + r.exp();
            self.max = v;
        } else if v > f64::NEG_INFINITY {
            self.sum += ((v - self.max) + r).exp();
        } else if v.is_nan() {
            self.max = f64::NAN;
        }
    }

    /// The largest `v` (`-∞` for an empty sum, NaN if a term was NaN).
    #[inline]
    pub fn max(self) -> f64 {
        self.max
    }

    /// `ln Σ exp(v_i - max + r_i)`: 0 for an empty sum (so that `max + rel`
    /// is `-∞`), NaN if a term was NaN.
    #[inline]
    pub fn rel(self) -> f64 {
        if self.max == f64::NEG_INFINITY {
            0.0
        } else if self.max.is_nan() {
            f64::NAN
        } else {
            self.sum.ln()
        }
    }
}

/// The relative part `rel` of a scaled sum `z` whose largest term is `e^max`
/// (see [`RelativeSum`]), such that [`Scaled::from_relative`]`(max, rel)`
/// gives `z` back within a few roundings, whatever the magnitude of `max`
/// (within the range of scaled numbers): `ln(z / from_ln(max))`, a log of a
/// number near 1, never a difference of two large logs. 0 when there is no
/// term, NaN when either is NaN. It may be a little below 0: `e^max` is
/// rounded from a sum of logs (an error of `|max| · 2^-53`, 1e-9 at
/// `max = 1e7`) while the sum holds the product of the terms themselves, and
/// clamping would break the identities between the rebuilt sums (a point's
/// flat marginals summing to 1); report `max + rel.max(0)` as the log.
#[inline]
pub(crate) fn relative_of(z: Scaled, max: f64) -> f64 {
    if max.is_nan() || z.mant.is_nan() {
        return f64::NAN;
    }
    if max == f64::NEG_INFINITY {
        return if z.mant == 0.0 { 0.0 } else { f64::NAN };
    }
    z.div(Scaled::from_ln(max)).ln()
}

/// Largest magnitude, in nats, that any log-value of the scaled-arithmetic
/// kernels may reach: their scaled numbers keep a power of two in an `i32`,
/// and sums of three exponents must stay clear of `i32` overflow. About
/// `2^26 · ln 2`.
pub(crate) const SEPARABLE_LOG_LIMIT: f64 = 4.6e7;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_huge_and_tiny_values() {
        for &x in &[0.0, 1.0, -1.0, 700.0, -745.5, 1e4, -1e4, 2.4e5, -2.4e5, 0.3] {
            let s = Scaled::from_ln(x);
            assert!((1.0..2.0).contains(&s.mant));
            let back = s.ln();
            assert!(
                (back - x).abs() <= 1e-15 * x.abs().max(1.0) * 4.0,
                "{x} -> {back}"
            );
        }
        assert_eq!(Scaled::from_ln(f64::NEG_INFINITY).ln(), f64::NEG_INFINITY);
    }

    #[test]
    fn sums_match_log_sum_exp() {
        // Terms spanning 10^5 nats: log-sum-exp is the reference.
        let xs = [1e5, 1e5 - 1.0, -3e4, 1e5 + 0.5, 99_990.0, -1e5, 1e5 - 700.0];
        let mut acc = Acc::new();
        let mut lse = LogSumExp::new();
        for &x in &xs {
            let s = Scaled::from_ln(x);
            acc.add(s.mant, s.exp);
            lse.add(x);
        }
        let m = xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let direct = m + xs.iter().map(|x| (x - m).exp()).sum::<f64>().ln();
        assert!(
            (acc.value().ln() - direct).abs() < 1e-10,
            "{} vs {direct}",
            acc.value().ln()
        );
        assert!((lse.ln() - direct).abs() < 1e-10);
    }

    #[test]
    fn relative_sums_are_exact_at_any_magnitude() {
        // Three terms tied at 1e300 with r = 0, 0.5, 1 and one far below: the
        // tie is exact, so the relative part is ln(1 + e^0.5 + e) exactly.
        for m in [0.0, 1e10, 1e300, -1e300] {
            let mut s = RelativeSum::new();
            s.add(m, 0.0);
            s.add(m - m.abs() * 1e-3 - 1.0, 5.0);
            s.add(m, 0.5);
            s.add(f64::NEG_INFINITY, 3.0);
            s.add(m, 1.0);
            assert_eq!(s.max(), m);
            let want = (1.0 + 0.5f64.exp() + 1f64.exp()).ln();
            if m == 0.0 {
                assert!((s.rel() - (want.exp() + (4.0f64).exp()).ln()).abs() < 1e-14);
            } else {
                assert!((s.rel() - want).abs() < 1e-14, "{m}: {}", s.rel());
            }
        }
        let empty = RelativeSum::new();
        assert_eq!((empty.max(), empty.rel()), (f64::NEG_INFINITY, 0.0));
        let mut nan = RelativeSum::new();
        nan.add(1.0, 0.0);
        nan.add(f64::NAN, 0.0);
        nan.add(2.0, 0.0);
        assert!(nan.max().is_nan() && nan.rel().is_nan());
        assert_eq!(relative_of(Scaled::ZERO, f64::NEG_INFINITY), 0.0);
        let below = relative_of(Scaled::from_ln(5.0), 5.0 + 1e-15);
        assert!(below <= 0.0 && below > -1e-14, "{below}");
        assert!(relative_of(Scaled::from_ln(5.0), f64::NAN).is_nan());
    }

    #[test]
    fn relative_parts_round_trip_at_any_magnitude() {
        // z = e^max · (1 + 3e^-2): rebuilding it from (max, rel) gives z back to a
        // few ulps even where max + rel loses every digit of rel.
        for max in [0.0, 3.5, -700.0, 1e5, -2.3e6, 4.5e7, -4.5e7] {
            let top = Scaled::from_ln(max);
            let z = top.mul(Scaled {
                mant: 1.0 + 3.0 * (-2f64).exp(),
                exp: 0,
            });
            let rel = relative_of(z, max);
            assert!(
                (rel - (1.0 + 3.0 * (-2f64).exp()).ln()).abs() < 1e-15,
                "{max}"
            );
            let back = Scaled::from_relative(max, rel);
            assert_eq!(back.exp, z.exp, "{max}");
            assert!((back.mant / z.mant - 1.0).abs() < 1e-15, "{max}");
            let q = back.div(z);
            assert!(q.ln().abs() < 1e-15, "{max}");
        }
        assert_eq!(Scaled::from_relative(f64::NEG_INFINITY, 0.0), Scaled::ZERO);
        assert_eq!(Scaled::ZERO.mul(Scaled::from_ln(3.0)), Scaled::ZERO);
    }

    #[test]
    fn empty_sums_are_zero() {
        assert_eq!(Acc::new().value().ln(), f64::NEG_INFINITY);
        assert_eq!(LogSumExp::new().ln(), f64::NEG_INFINITY);
        let mut acc = Acc::new();
        acc.add(0.0, ZERO_EXP + ZERO_EXP);
        assert_eq!(acc.value().ln(), f64::NEG_INFINITY);
    }
}
