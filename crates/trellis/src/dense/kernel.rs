//! The inner loop shared by the exact trellises.
//!
//! Both the hierarchical trellis (a cluster `S` splits into two children) and
//! the flat trellis (a set `S` is a cluster `C` plus a partition of the rest)
//! sum over the ways to cut `S` into a part `L` holding its lowest point and
//! the rest `R = S ∖ L`. With one table for `L` and one for `R` (the same for
//! the hierarchical trellis), [`sweep`] returns the best `key(L) + key(R)`
//! with its `L` (the MAP step) and the sum `Σ g(L) · g(R)` in scaled
//! arithmetic (the partition-function step).
//!
//! The loop runs four interleaved streams (the two highest points of `S ∖
//! lowest` in or out of `L`), four independent dependency chains per
//! enumeration step. Two forms of it:
//!
//! - [`sweep_fast`] reads compact 16-byte cells ([`Fast`]: the key and `g` as a
//!   plain `f64` scaled by `2^-base` of its size class, zero when more than
//!   `2^300` below the class maximum) and multiplies each term by a per-level
//!   factor for the size of `L` ([`Factors`]): two loads, two multiplies and
//!   two adds per term. If the sum falls below `2^-200` of the reference, the
//!   flushed terms might matter and it gives up; otherwise they are below
//!   `2^-70` of the sum.
//! - [`sweep`] reads the exact cells (mantissa and `i32` exponent) and scales
//!   every term by a power of two built from its exponent bits; if the sum
//!   falls below 2^-900 of its reference it redoes the set with a running
//!   reference ([`sweep_exact`]), exact for any range.

use crate::base::scaled::{Acc, Scaled, ZERO_EXP};

/// The four-stream enumeration shared by the kernels: every subset `x` of
/// `base | h1 | h2` (two high bits `h1`, `h2` outside `base`), as four
/// interleaved streams (`x` = `sub`, `sub | h2`, `sub | h1`, `sub | h1 | h2` for
/// each subset `sub` of `base`, in decreasing order), so each step of the loop
/// runs four independent dependency chains. `$visit!(x, size, acc...)` is
/// invoked with the stream's accumulators (`$a0` .. `$a3`, token groups) and
/// `size` = the number of points of `x` plus `$offset`. With `$skip_top`, the
/// top set `base | h1 | h2` is left out; with `$skip_empty`, the empty set.
/// The first and last rounds are peeled, so the hot loop has no branch.
macro_rules! four_streams {
    ($base:expr, $h1:expr, $h2:expr, $offset:expr, skip_top: $skip_top:expr,
     skip_empty: $skip_empty:expr, $visit:ident, [$($a0:tt)*] [$($a1:tt)*] [$($a2:tt)*] [$($a3:tt)*]) => {{
        let (base, h1, h2) = ($base, $h1, $h2);
        let offset: usize = $offset;
        // First round: sub = base. (`pc` is unused by kernels that ignore sizes.)
        #[allow(unused_variables)]
        let pc = base.count_ones() as usize + offset;
        if !($skip_empty && base == 0) {
            $visit!(base, pc, $($a0)*);
        }
        $visit!(base | h2, pc + 1, $($a1)*);
        $visit!(base | h1, pc + 1, $($a2)*);
        if !$skip_top {
            $visit!(base | h1 | h2, pc + 2, $($a3)*);
        }
        if base != 0 {
            let mut sub = (base - 1) & base;
            while sub != 0 {
                #[allow(unused_variables)]
                let pc = sub.count_ones() as usize + offset;
                $visit!(sub, pc, $($a0)*);
                $visit!(sub | h2, pc + 1, $($a1)*);
                $visit!(sub | h1, pc + 1, $($a2)*);
                $visit!(sub | h1 | h2, pc + 2, $($a3)*);
                sub = (sub - 1) & base;
            }
            // Last round: sub = 0.
            if !$skip_empty {
                $visit!(0, offset, $($a0)*);
            }
            $visit!(h2, offset + 1, $($a1)*);
            $visit!(h1, offset + 1, $($a2)*);
            $visit!(h1 | h2, offset + 2, $($a3)*);
        }
    }};
}

pub(crate) use four_streams;

pub(crate) use crate::base::scaled::SEPARABLE_LOG_LIMIT;
use crate::base::set::{Mask, for_each_level_batch, for_each_split, lowest};

/// One table entry: a log value `key` (for the max) and a scaled linear value
/// `g = mant · 2^exp` (for the sum), 24 bytes so that a term reads two records.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cell {
    pub key: f64,
    pub mant: f64,
    pub exp: i32,
}

impl Cell {
    /// Zero: `key = -∞`, `g = 0`.
    pub const ZERO: Cell = Cell {
        key: f64::NEG_INFINITY,
        mant: 0.0,
        exp: ZERO_EXP,
    };

    /// One: `key = 0`, `g = 1`.
    pub const ONE: Cell = Cell {
        key: 0.0,
        mant: 1.0,
        exp: 0,
    };

    /// The cell of a key and a scaled value.
    #[inline]
    pub fn of(key: f64, g: Scaled) -> Cell {
        Cell {
            key,
            mant: g.mant,
            exp: g.exp,
        }
    }

    /// The cell of a log value used both as key and as `ln g`.
    #[inline]
    pub fn new(key: f64, ln_g: f64) -> Cell {
        let g = Scaled::from_ln(ln_g);
        Cell {
            key,
            mant: g.mant,
            exp: g.exp,
        }
    }
}

/// A compact cell of the fast path: `key` and `g · 2^-base(size)` (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Fast {
    pub key: f64,
    pub g: f64,
}

impl Fast {
    pub const ZERO: Fast = Fast {
        key: f64::NEG_INFINITY,
        g: 0.0,
    };

    /// The compact form of an exact cell in a size class whose largest exponent is `base`.
    #[inline]
    pub fn of(cell: &Cell, base: i32) -> Fast {
        let d = cell.exp.saturating_sub(base);
        let g = if cell.mant == 0.0 || d < -300 {
            0.0
        } else {
            cell.mant * f64::from_bits(((d.min(0) + 1023) as u64) << 52)
        };
        Fast { key: cell.key, g }
    }
}

/// The largest exponent among the entries of `table` over the subsets of
/// size `k` of `n` points (`ZERO_EXP` when all are zero): the size-class base
/// of the fast path and the reference of the exact one.
pub(crate) fn level_max_exp<T>(table: &[T], n: usize, k: usize, exp: impl Fn(&T) -> i32) -> i32 {
    let mut m = ZERO_EXP;
    for_each_level_batch(n, k, 8192, |batch| {
        m = batch
            .iter()
            .map(|&t| exp(&table[t as usize]))
            .fold(m, i32::max);
    });
    m
}

/// The per-level factors of the fast path for parents of size `k`:
/// `F[j] = 2^(base_left[j] + base_right[k-j] - e_ref)` for `|L| = j`, with
/// `e_ref` the largest exponent sum, and `F[j] = 0` below `2^-400`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Factors {
    pub e_ref: i32,
    pub f: [f64; 34],
}

impl Factors {
    /// The factors for parents of size `k` from the class maxima of the tables
    /// (`ZERO_EXP` for an empty class); `whole` allows `|L| = k`.
    pub fn new(base_left: &[i32], base_right: &[i32], k: usize, whole: bool) -> Factors {
        let top = if whole { k } else { k - 1 };
        let sum = |j: usize| base_left[j].saturating_add(base_right[k - j]);
        let e_ref = (1..=top).map(sum).max().unwrap_or(ZERO_EXP);
        let mut f = [0.0; 34];
        for (j, slot) in f.iter_mut().enumerate().take(top + 1).skip(1) {
            let d = sum(j).saturating_sub(e_ref);
            if d >= -400 && base_left[j] > ZERO_EXP && base_right[k - j] > ZERO_EXP {
                *slot = f64::from_bits(((d + 1023) as u64) << 52);
            }
        }
        Factors { e_ref, f }
    }
}

/// The fast sweep (see the module docs) over the cuts of `s`: `(max key(L) +
/// key(R), Σ g(L)·g(R))`, or `None` when the sum is too small for the flushed
/// terms to be negligible (then use [`sweep`]).
///
/// It keeps only the maxima, not their arguments: that frees the registers
/// four arguments would hold (about 25% faster at n = 20). The trellises
/// recover the arguments they need (the splits of one MAP tree or the
/// clusters of one MAP partition) by a scan afterwards.
#[inline(always)]
pub(crate) fn sweep_fast(
    s: Mask,
    left: &[Fast],
    right: &[Fast],
    factors: &Factors,
    whole: bool,
) -> Option<(f64, Scaled)> {
    let low = lowest(s);
    let rest = s ^ low;
    if rest.count_ones() < 3 {
        return None;
    }
    let h1 = 1 << (31 - rest.leading_zeros());
    let h2 = 1 << (31 - (rest ^ h1).leading_zeros());
    let base = rest ^ h1 ^ h2;
    let last = left.len() - 1;
    let right = &right[..=last];
    let f = &factors.f;
    macro_rules! visit {
        ($sub:expr, $size:expr, $b:ident $s:ident) => {{
            let l = low | $sub;
            let (x, y) = (&left[l as usize & last], &right[(s ^ l) as usize & last]);
            let v = x.key + y.key;
            $b = if v > $b { v } else { $b };
            $s += x.g * y.g * f[$size & 31];
        }};
    }
    let (mut b0, mut b1, mut b2, mut b3) = (
        f64::NEG_INFINITY,
        f64::NEG_INFINITY,
        f64::NEG_INFINITY,
        f64::NEG_INFINITY,
    );
    let (mut s0, mut s1, mut s2, mut s3) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    // The left part is `low | sub`; it is `s` itself only for the top set.
    four_streams!(base, h1, h2, 1, skip_top: !whole, skip_empty: false, visit,
        [b0 s0] [b1 s1] [b2 s2] [b3 s3]);
    let total = (s0 + s1) + (s2 + s3);
    if total.is_nan() || total < f64::from_bits(((1023 - 200) as u64) << 52) {
        return None;
    }
    let mut g = Acc::new();
    g.add(total, factors.e_ref);
    Some((b0.max(b1).max(b2.max(b3)), g.value()))
}

/// The sweep over the cuts of `s` (see the module docs): returns
/// `(max key(L) + key(R), its L, Σ g(L)·g(R))`. `L` runs over the subsets of
/// `s` holding its lowest point, `s` itself included when `whole` (then
/// `right[0]` must be the cell of the empty set). `e_ref` bounds every term's
/// exponent (mantissa products are below 4).
#[inline(always)]
pub(crate) fn sweep(
    s: Mask,
    left: &[Cell],
    right: &[Cell],
    whole: bool,
    e_ref: i32,
) -> (f64, Mask, Scaled) {
    let low = lowest(s);
    let rest = s ^ low;
    if rest.count_ones() < 3 {
        return sweep_exact(s, left, right, whole);
    }
    let h1 = 1 << (31 - rest.leading_zeros());
    let h2 = 1 << (31 - (rest ^ h1).leading_zeros());
    let base = rest ^ h1 ^ h2;
    // Every mask is below the table length 2^n: masking with `len - 1` is a
    // no-op that lets the compiler drop the bounds checks of the hot loop.
    let last = left.len() - 1;
    let right = &right[..=last];
    macro_rules! visit {
        ($sub:expr, $size:expr, $b:ident $a:ident $s:ident) => {{
            let l = low | $sub;
            let (x, y) = (&left[l as usize & last], &right[(s ^ l) as usize & last]);
            let v = x.key + y.key;
            let d = (x.exp + y.exp - e_ref).max(-1023);
            let scale = f64::from_bits(((d + 1023) as u64) << 52);
            if v > $b {
                $b = v;
                $a = l;
            }
            $s += x.mant * y.mant * scale;
        }};
    }
    // One accumulator per stream: four independent dependency chains.
    let (mut b0, mut b1, mut b2, mut b3) = (
        f64::NEG_INFINITY,
        f64::NEG_INFINITY,
        f64::NEG_INFINITY,
        f64::NEG_INFINITY,
    );
    let (mut a0, mut a1, mut a2, mut a3) = (0 as Mask, 0 as Mask, 0 as Mask, 0 as Mask);
    let (mut s0, mut s1, mut s2, mut s3) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    four_streams!(base, h1, h2, 1, skip_top: !whole, skip_empty: false, visit,
        [b0 a0 s0] [b1 a1 s1] [b2 a2 s2] [b3 a3 s3]);
    let best = [b0, b1, b2, b3];
    let arg = [a0, a1, a2, a3];
    let total = (s0 + s1) + (s2 + s3);
    if total.is_nan() || total < f64::from_bits(((1023 - 900) as u64) << 52) {
        return sweep_exact(s, left, right, whole);
    }
    let mut q_best = 0;
    for q in 1..4 {
        if best[q] > best[q_best] || (best[q] == best[q_best] && arg[q] > arg[q_best]) {
            q_best = q;
        }
    }
    let mut g = Acc::new();
    g.add(total, e_ref);
    (best[q_best], arg[q_best], g.value())
}

/// [`sweep`] with a running reference exponent: exact for any range.
pub(crate) fn sweep_exact(
    s: Mask,
    left: &[Cell],
    right: &[Cell],
    whole: bool,
) -> (f64, Mask, Scaled) {
    let mut best = f64::NEG_INFINITY;
    let mut arg = 0;
    let mut acc = Acc::new();
    let mut visit = |l: Mask, r: Mask| {
        let (a, b) = (&left[l as usize], &right[r as usize]);
        let v = a.key + b.key;
        if v > best || (v == best && l > arg) {
            best = v;
            arg = l;
        }
        acc.add(a.mant * b.mant, a.exp + b.exp);
    };
    for_each_split(s, &mut visit);
    if whole {
        visit(s, 0);
    }
    (best, arg, acc.value())
}
