//! The range of `f64`: exact scaling by powers of two, an overflow-safe
//! Euclidean distance, and magnitudes beyond `f64::MAX` for messages.
//!
//! Several derived quantities of finite inputs can leave the range of `f64`
//! although the answer asked for is finite: the squared differences of a
//! Euclidean distance between points near `1e200`, the squared distances of
//! Ward's Lance–Williams update near `1e160`, the weighted sums of average
//! linkage near `1e307`. The cure used throughout the crate is to compute such
//! a quantity on values divided by a power of two, `2^e`, and to multiply the
//! result back. Multiplying by a power of two is exact (short of subnormal
//! results), and rounding commutes with it, so wherever the direct computation
//! neither overflows nor goes subnormal the scaled one gives the same number
//! to the bit; elsewhere it gives the correctly scaled answer instead of
//! `inf` or `0`.
//!
//! When the true answer itself exceeds `f64::MAX`, nothing can represent it:
//! the callers refuse the input, and say by how much it should be divided
//! ([`Magnitude`] carries such a value as a mantissa and a power of two, and
//! formats it).

/// `2^k` for `k` in `-1074..=1023` (subnormal below `-1022`).
pub(crate) fn pow2(k: i32) -> f64 {
    debug_assert!((-1074..=1023).contains(&k), "2^{k} is not an f64");
    if k >= -1022 {
        f64::from_bits(((k + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (k + 1074))
    }
}

/// `x · 2^k` for any `k`, in steps that stay inside the range of `f64`
/// (so `2^k` itself need not be an `f64`). Exact unless the result overflows
/// or is subnormal.
pub(crate) fn mul_pow2(mut x: f64, mut k: i32) -> f64 {
    while k > 1023 {
        x *= pow2(1023);
        k -= 1023;
    }
    while k < -1022 {
        x *= pow2(-1022);
        k += 1022;
    }
    x * pow2(k)
}

/// `floor(log2 |x|)` of a finite non-zero `x`, subnormals included
/// (`-1074..=1023`).
pub(crate) fn exponent(x: f64) -> i32 {
    debug_assert!(x.is_finite() && x != 0.0);
    let bits = x.abs().to_bits();
    let field = (bits >> 52) as i32;
    if field > 0 {
        field - 1023
    } else {
        // Subnormal: the value is mantissa · 2^-1074.
        63 - (bits & ((1u64 << 52) - 1)).leading_zeros() as i32 - 1074
    }
}

/// A non-negative number `mant · 2^exp` that may exceed `f64::MAX`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Magnitude {
    /// A finite `f64` (any size; usually near 1).
    pub mant: f64,
    /// The power of two it is multiplied by.
    pub exp: i32,
}

impl Magnitude {
    /// The value as an `f64`: `+∞` when it exceeds `f64::MAX`.
    pub fn value(self) -> f64 {
        mul_pow2(self.mant, self.exp)
    }

    /// Its base-10 logarithm (`-∞` for 0).
    pub fn log10(self) -> f64 {
        self.mant.log10() + f64::from(self.exp) * std::f64::consts::LOG10_2
    }

    /// By how much the inputs of a quantity homogeneous of `degree` in them
    /// (it scales as `c^degree` when they are multiplied by `c`) must be
    /// divided for this value of it to fit in `limit`: at least 1, rounded
    /// up to three significant digits.
    pub fn divisor(self, limit: f64, degree: i32) -> f64 {
        let ratio = 10f64.powf((self.log10() - limit.log10()) / f64::from(degree));
        round_up_3(ratio.max(1.0))
    }

    /// `about 2.35e308` (three significant digits, beyond `f64` too).
    pub fn about(self) -> String {
        let v = self.value();
        if v.is_finite() {
            return format!("about {}", fmt3(v));
        }
        let l = self.log10();
        let mut e = l.floor();
        let mut m = (10f64.powf(l - e) * 100.0).round() / 100.0;
        if m >= 10.0 {
            m /= 10.0;
            e += 1.0;
        }
        format!("about {m}e{e}")
    }
}

/// `x` rounded to three significant digits.
fn round_3(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(2 - x.abs().log10().floor() as i32);
    let r = (x * scale).round() / scale;
    if r.is_finite() { r } else { x }
}

/// `x > 0` rounded up to three significant digits.
fn round_up_3(x: f64) -> f64 {
    if !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(2 - x.log10().floor() as i32);
    let r = (x * scale * (1.0 + 1e-12)).ceil() / scale;
    if r.is_finite() { r } else { x }
}

/// `x` with three significant digits, for messages: `1.67`, `8.31e307`.
pub(crate) fn fmt3(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    if (1e-4..1e9).contains(&x.abs()) {
        return format!("{}", round_3(x));
    }
    let text = format!("{x:.2e}");
    match text.split_once('e') {
        Some((mant, exp)) => {
            let mant = mant.trim_end_matches('0').trim_end_matches('.');
            format!("{mant}e{exp}")
        }
        None => text,
    }
}

/// `x > 0` rounded down to three significant digits (a largest value that
/// works, for messages).
pub(crate) fn round_down_3(x: f64) -> f64 {
    if !x.is_finite() || x <= 0.0 {
        return x;
    }
    let scale = 10f64.powi(2 - x.log10().floor() as i32);
    let r = (x * scale * (1.0 - 1e-12)).floor() / scale;
    if r.is_finite() && r > 0.0 { r } else { x }
}

/// The Euclidean distance between `a` and `b` (of equal lengths, finite
/// coordinates), computed without overflow or underflow: the differences
/// are divided by the power of two at their largest `|difference|` before
/// they are squared (and halved first where a difference itself overflows,
/// coordinates of opposite signs near `f64::MAX`). Where the direct
/// `sqrt(Σ (a_k - b_k)²)` has no overflowing or subnormal term, the value is
/// the same to the bit.
pub(crate) fn euclidean(a: &[f64], b: &[f64]) -> Magnitude {
    let mut largest = 0.0f64;
    let mut halve = false;
    for (x, y) in a.iter().zip(b) {
        let d = x - y;
        if !d.is_finite() {
            halve = true;
            break;
        }
        largest = largest.max(d.abs());
    }
    let diff = |x: f64, y: f64| if halve { 0.5 * x - 0.5 * y } else { x - y };
    if halve {
        largest = a
            .iter()
            .zip(b)
            .fold(0.0f64, |m, (&x, &y)| m.max(diff(x, y).abs()));
    }
    if largest == 0.0 {
        return Magnitude { mant: 0.0, exp: 0 };
    }
    let e = exponent(largest);
    let sum: f64 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| {
            let d = mul_pow2(diff(x, y), -e);
            d * d
        })
        .sum();
    Magnitude {
        mant: sum.sqrt(),
        exp: e + i32::from(halve),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powers_of_two() {
        assert_eq!(pow2(0), 1.0);
        assert_eq!(pow2(1023), 2f64.powi(1023));
        assert_eq!(pow2(-1074), f64::from_bits(1));
        assert_eq!(pow2(-1022), f64::MIN_POSITIVE);
        assert_eq!(mul_pow2(1.0, 1074), f64::INFINITY);
        assert_eq!(mul_pow2(f64::from_bits(1), 1074), 1.0);
        assert_eq!(mul_pow2(1.5, -1074), f64::from_bits(2));
        for x in [
            1.0,
            1.5,
            3.0,
            1e300,
            1e-300,
            f64::MAX,
            f64::from_bits(1),
            5e-320,
        ] {
            let e = exponent(x);
            assert!(mul_pow2(x, -e) >= 1.0 && mul_pow2(x, -e) < 2.0, "{x} {e}");
        }
    }

    #[test]
    fn distances_in_and_out_of_range() {
        let plain = |a: &[f64], b: &[f64]| {
            a.iter()
                .zip(b)
                .map(|(x, y)| (x - y) * (x - y))
                .sum::<f64>()
                .sqrt()
        };
        let (a, b) = ([0.3, -1.7, 2.25], [1.1, 0.4, -0.6]);
        assert_eq!(euclidean(&a, &b).value(), plain(&a, &b));
        let d = euclidean(&[3e200, 4e200], &[0.0, 0.0]).value();
        assert!((d / 5e200 - 1.0).abs() < 1e-15);
        let d = euclidean(&[3e-200, 4e-200], &[0.0, 0.0]).value();
        assert!((d / 5e-200 - 1.0).abs() < 1e-15);
        // A difference that overflows: the true distance does too.
        let m = euclidean(&[1.5e308], &[-1.5e308]);
        assert!(m.value().is_infinite());
        assert!((m.log10() - (308.0 + 3f64.log10())).abs() < 1e-12);
        assert_eq!(m.about(), "about 3e308");
        assert_eq!(m.divisor(f64::MAX, 1), 1.67);
        // Two coordinates near f64::MAX / 2: finite.
        assert!(
            euclidean(&[8e307, 8e307], &[-8e307, -8e307])
                .value()
                .is_infinite()
        );
        assert!(
            euclidean(&[6e307, 6e307], &[-6e307, -6e307])
                .value()
                .is_finite()
        );
    }
}
