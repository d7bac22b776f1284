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

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

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

/// A multiply-xorshift hash of a `u128` set (the default SipHash is several
/// times slower and no protection is needed here).
#[derive(Default)]
pub(crate) struct SetHasher(u64);

impl Hasher for SetHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u128(&mut self, x: u128) {
        let h = (x as u64) ^ ((x >> 64) as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        let h = (h ^ (h >> 31)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 29);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A hash map keyed by sets, with [`SetHasher`].
pub(crate) type SetMap<V> = HashMap<Set, V, BuildHasherDefault<SetHasher>>;

/// The points of a [`Set`] in increasing order.
pub fn set_points(set: Set) -> impl Iterator<Item = usize> {
    Points::Set(set).iter()
}

/// The points of a cluster, in whichever form the engine holds them: a
/// dense [`Mask`], a sparse [`Set`] or a sorted list (for any number of
/// points). Models read it when they merge cluster summaries
/// ([`Summarize::merge`](crate::Summarize::merge)) or bound a cluster's cost
/// ([`Search::heuristic`](crate::Search::heuristic)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Points<'a> {
    /// A dense trellis subset.
    Mask(Mask),
    /// A sparse trellis or A* cluster.
    Set(Set),
    /// Distinct points in increasing order.
    List(&'a [usize]),
}

impl<'a> Points<'a> {
    /// The points in increasing order.
    #[inline]
    pub fn iter(self) -> PointIter<'a> {
        match self {
            Points::Mask(m) => PointIter::Bits(m as u128),
            Points::Set(s) => PointIter::Bits(s),
            Points::List(l) => PointIter::List(l.iter()),
        }
    }

    /// Number of points.
    #[inline]
    pub fn len(self) -> usize {
        match self {
            Points::Mask(m) => m.count_ones() as usize,
            Points::Set(s) => s.count_ones() as usize,
            Points::List(l) => l.len(),
        }
    }

    /// Whether there are no points.
    #[inline]
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }
}

/// The iterator of [`Points::iter`].
#[derive(Clone, Debug)]
pub enum PointIter<'a> {
    /// Remaining bits of a mask or set.
    Bits(u128),
    /// Remaining entries of a list.
    List(std::slice::Iter<'a, usize>),
}

impl Iterator for PointIter<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        match self {
            PointIter::Bits(rest) => {
                if *rest == 0 {
                    None
                } else {
                    let i = rest.trailing_zeros() as usize;
                    *rest &= *rest - 1;
                    Some(i)
                }
            }
            PointIter::List(it) => it.next().copied(),
        }
    }
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
    Points::Mask(s).iter()
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
