//! Sets of points as bitmasks: the one set abstraction of the crate.
//!
//! Two widths: a [`Mask`] (`u32`) for the dense trellises, whose tables are
//! indexed by the mask itself (`n ≤ 30`), and a [`Set`] (`u128`) for the
//! sparse trellises and A* search, which only hold the clusters they build
//! (`n ≤ 128`).
//!
//! The dense trellis has one vertex per non-empty subset of the `n ≤ 30` points,
//! and a subset is stored as a [`Mask`]: bit `i` set means point `i` is in it.
//! Table entries are indexed by the mask itself, so a vertex lookup is one load.
//!
//! A *split* of a cluster `S` is an unordered pair `{L, R}` with `L ∪ R = S`,
//! `L ∩ R = ∅`, both non-empty. Every split is visited exactly once by fixing the
//! lowest point of `S` in `L` (Proposition 1 of the trellis paper): `S` has
//! `2^(|S|-1) - 1` splits, and the whole trellis `(3^n - 2^(n+1) + 1) / 2`.

/// A subset of the points, one bit per point (point `i` is bit `i`).
pub type Mask = u32;

/// A cluster of a sparse trellis or an A* search: bit `i` is point `i`
/// (at most [`MAX_SET_POINTS`] points).
pub type Set = u128;

/// Largest number of points a [`Set`] holds: the limit of the sparse
/// trellises and of A* search.
pub const MAX_SET_POINTS: usize = 128;

/// The set of all `n ≤ 128` points.
#[inline]
pub fn full_set(n: usize) -> Set {
    debug_assert!(n <= MAX_SET_POINTS);
    if n >= MAX_SET_POINTS {
        u128::MAX
    } else {
        (1u128 << n) - 1
    }
}

/// Whether a non-empty set has a single point.
#[inline]
pub(crate) fn is_singleton(set: Set) -> bool {
    set & set.wrapping_sub(1) == 0
}

/// The points of a [`Set`] in increasing order.
pub fn set_points(set: Set) -> impl Iterator<Item = usize> {
    let mut rest = set;
    std::iter::from_fn(move || {
        if rest == 0 {
            None
        } else {
            let i = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            Some(i)
        }
    })
}

/// The lowest set bit of `s` (0 for the empty set).
#[inline]
pub fn lowest(s: Mask) -> Mask {
    s & s.wrapping_neg()
}

/// The mask of all `n` points.
#[inline]
pub fn full(n: usize) -> Mask {
    debug_assert!(n <= 32);
    if n == 32 { u32::MAX } else { (1u32 << n) - 1 }
}

/// The points of `s` in increasing order.
pub fn members(s: Mask) -> impl Iterator<Item = usize> {
    let mut rest = s;
    std::iter::from_fn(move || {
        if rest == 0 {
            None
        } else {
            let i = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            Some(i)
        }
    })
}

/// The mask of a set of points (all indices must be < 32).
pub fn mask_of(points: impl IntoIterator<Item = usize>) -> Mask {
    points.into_iter().fold(0, |m, i| m | (1 << i))
}

/// Calls `f(left, right)` for every split of `s` (|s| ≥ 2), with `left`
/// holding the lowest point of `s`. Splits come in decreasing order of `left`.
#[inline(always)]
pub(crate) fn for_each_split(s: Mask, mut f: impl FnMut(Mask, Mask)) {
    let low = lowest(s);
    let rest = s ^ low;
    if rest == 0 {
        return;
    }
    let mut sub = (rest - 1) & rest;
    loop {
        f(low | sub, rest ^ sub);
        if sub == 0 {
            break;
        }
        sub = (sub - 1) & rest;
    }
}

/// Number of splits of a cluster of `k` points: `2^(k-1) - 1`.
pub fn splits_of_size(k: usize) -> u64 {
    if k < 2 { 0 } else { (1u64 << (k - 1)) - 1 }
}

/// Number of splits in the full trellis over `n` points, `(3^n - 2^(n+1) + 1) / 2`.
pub fn total_splits(n: usize) -> u128 {
    let three = 3u128.pow(n as u32);
    (three + 1 - (2u128 << n)) / 2
}

/// All masks over `n` points with exactly `k` members, in increasing order
/// (Gosper's hack), delivered in batches of at most `batch` masks.
pub(crate) fn for_each_level_batch(n: usize, k: usize, batch: usize, mut f: impl FnMut(&[Mask])) {
    if k == 0 || k > n {
        return;
    }
    let limit: u64 = 1u64 << n;
    let mut buf = Vec::with_capacity(batch.min(binomial(n, k) as usize));
    let mut s: u64 = (1u64 << k) - 1;
    while s < limit {
        buf.push(s as Mask);
        if buf.len() == batch {
            f(&buf);
            buf.clear();
        }
        let c = s & s.wrapping_neg();
        let r = s + c;
        s = (((r ^ s) >> 2) / c) | r;
    }
    if !buf.is_empty() {
        f(&buf);
    }
}

/// Binomial coefficient as `u64` (exact for n ≤ 62).
pub(crate) fn binomial(n: usize, k: usize) -> u64 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k);
    let mut r: u64 = 1;
    for i in 0..k {
        r = r * (n - i) as u64 / (i + 1) as u64;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_are_each_unordered_pair_once() {
        for s in 1u32..64 {
            let mut seen = std::collections::HashSet::new();
            for_each_split(s, |l, r| {
                assert_eq!(l | r, s);
                assert_eq!(l & r, 0);
                assert!(l != 0 && r != 0);
                assert!(l & lowest(s) != 0);
                assert!(seen.insert(l));
            });
            assert_eq!(seen.len() as u64, splits_of_size(s.count_ones() as usize));
        }
    }

    #[test]
    fn total_split_count_matches_sum() {
        for n in 1..=12 {
            let brute: u128 = (1u32..1 << n)
                .map(|s| splits_of_size(s.count_ones() as usize) as u128)
                .sum();
            assert_eq!(brute, total_splits(n));
        }
    }

    #[test]
    fn levels_enumerate_every_mask_once() {
        for n in 1..=10 {
            let mut all = vec![];
            for k in 1..=n {
                for_each_level_batch(n, k, 7, |b| {
                    assert!(b.iter().all(|m| m.count_ones() as usize == k));
                    all.extend_from_slice(b);
                });
            }
            all.sort();
            assert_eq!(all, (1u32..1 << n).collect::<Vec<_>>());
        }
    }
}
