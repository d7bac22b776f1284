//! Sets of points as bitmasks: the one set abstraction of the crate.
//!
//! Three widths: a [`Mask`] (`u32`) for the dense trellises, whose tables are
//! indexed by the mask itself (`n ≤ 30`), a [`Set`] (`u128`) for the sparse
//! trellises and A* search, which only hold the clusters they build
//! (`n ≤ 128`), and a [`WideSet`] (a boxed bitset of `⌈n/64⌉` words) for the
//! same engines beyond 128 points.
//!
//! # One engine, two set types
//!
//! The sparse trellises and A* search are generic over [`SetRepr`], the
//! operations they need on a cluster (union, difference, lowest point,
//! size, iteration, hashing, ordering). The public entry points dispatch
//! once on the number of points: up to 128 points they run on `u128`
//! (a set is two machine words, copied in registers), beyond on
//! [`WideSet`]. Both orders agree (a `WideSet` compares as the binary
//! number it spells, most significant word first, exactly as the `u128` of
//! the same bits), so the same computation gives the same result on both:
//! the wide path is the `u128` path with bigger words, tested so.
//!
//! A `WideSet` over `n` points costs `8⌈n/64⌉` bytes on the heap plus the
//! 16-byte box (and the allocator's header, counted as 16 more bytes):
//! 160 bytes at 1,000 points, against 16 for a `u128`. Hashing mixes each
//! word once ([`SetHasher`]), `O(n/64)`.
//!
//! The dense trellis has one vertex per non-empty subset of the `n ≤ 30` points,
//! and a subset is stored as a [`Mask`]: bit `i` set means point `i` is in it.
//! Table entries are indexed by the mask itself, so a vertex lookup is one load.
//!
//! A *split* of a cluster `S` is an unordered pair `{L, R}` with `L ∪ R = S`,
//! `L ∩ R = ∅`, both non-empty. Every split is visited exactly once by fixing the
//! lowest point of `S` in `L` (Proposition 1 of the trellis paper): `S` has
//! `2^(|S|-1) - 1` splits, and the whole trellis `(3^n - 2^(n+1) + 1) / 2`.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt::Debug;
use std::hash::{BuildHasherDefault, Hash, Hasher};

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

    fn write_u64(&mut self, x: u64) {
        let h = (self.0.rotate_left(23) ^ x).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        let h = (h ^ (h >> 31)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 29);
    }

    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A hash map keyed by sets of either representation, with [`SetHasher`].
pub(crate) type SetMapOf<S, V> = HashMap<S, V, BuildHasherDefault<SetHasher>>;

/// The operations the sparse trellises and A* search need on a cluster of
/// points: implemented by [`Set`] (`u128`, up to 128 points) and by
/// [`WideSet`] (any number). Every set of one computation has the same
/// number of points `n` (a `WideSet` holds `⌈n/64⌉` words), and the order
/// ([`Ord`]) is that of the binary number the bits spell, so both types
/// sort the same clusters the same way.
pub trait SetRepr: Clone + Eq + Ord + Hash + Debug + Send + Sync + 'static {
    /// The most points this representation holds.
    const MAX_POINTS: usize;

    /// The set of all `n` points.
    fn full(n: usize) -> Self;

    /// `{i}` among `n` points.
    fn singleton(i: usize, n: usize) -> Self;

    /// The set of the given points (each below `n`).
    fn from_points(points: impl IntoIterator<Item = usize>, n: usize) -> Self;

    /// Number of points.
    fn len(&self) -> usize;

    /// Whether there are no points.
    fn is_empty(&self) -> bool;

    /// Whether a non-empty set has exactly one point.
    fn is_singleton(&self) -> bool {
        self.len() == 1
    }

    /// The lowest point (`MAX_POINTS` for the empty set).
    fn lowest(&self) -> usize;

    /// Whether point `i` is in the set.
    fn contains(&self, i: usize) -> bool;

    /// The set with point `i` added.
    fn with(&self, i: usize) -> Self;

    /// The set with point `i` removed.
    fn without(&self, i: usize) -> Self;

    /// `self ∪ other`.
    fn union(&self, other: &Self) -> Self;

    /// `self ∖ other`.
    fn minus(&self, other: &Self) -> Self;

    /// `self ⊆ other`.
    fn is_subset(&self, other: &Self) -> bool;

    /// Whether this is a set over `n` points (every point below `n`, and
    /// for a [`WideSet`] the word count of `n` points).
    fn fits(&self, n: usize) -> bool;

    /// The points, for a model.
    fn points(&self) -> Points<'_>;

    /// Bytes a set over `n` points holds outside its own `size_of` (its
    /// heap words and the allocator's header): 0 for a `u128`.
    fn heap_bytes(n: usize) -> u64;

    /// Every split `(L, R)` of a set of `2 ≤ m ≤ 63` points, `L` holding
    /// the lowest point, in decreasing order of `L ∖ {lowest}` (read as a
    /// subset of the other `m - 1` points in increasing order), appended
    /// to `out`.
    fn all_splits(&self, n: usize, out: &mut Vec<(Self, Self)>) {
        let pts: Vec<usize> = self.points().iter().collect();
        let m = pts.len();
        debug_assert!((2..64).contains(&m));
        let low = Self::singleton(pts[0], n);
        // Local subsets of the other m - 1 points: bit k is pts[k + 1].
        let rest: u64 = (1u64 << (m - 1)) - 1;
        let global = |local: u64| {
            Self::from_points(
                (0..m - 1)
                    .filter(|k| local >> k & 1 == 1)
                    .map(|k| pts[k + 1]),
                n,
            )
        };
        let mut sub = rest;
        loop {
            sub = sub.wrapping_sub(1) & rest;
            out.push((low.union(&global(sub)), global(rest ^ sub)));
            if sub == 0 {
                break;
            }
        }
    }
}

impl SetRepr for Set {
    const MAX_POINTS: usize = MAX_SET_POINTS;

    #[inline]
    fn full(n: usize) -> Set {
        full_set(n)
    }

    #[inline]
    fn singleton(i: usize, _: usize) -> Set {
        1u128 << i
    }

    #[inline]
    fn from_points(points: impl IntoIterator<Item = usize>, _: usize) -> Set {
        points.into_iter().fold(0, |s, i| s | 1u128 << i)
    }

    #[inline]
    fn len(&self) -> usize {
        self.count_ones() as usize
    }

    #[inline]
    fn is_empty(&self) -> bool {
        *self == 0
    }

    #[inline]
    fn is_singleton(&self) -> bool {
        is_singleton(*self)
    }

    #[inline]
    fn lowest(&self) -> usize {
        self.trailing_zeros() as usize
    }

    #[inline]
    fn contains(&self, i: usize) -> bool {
        self >> i & 1 == 1
    }

    #[inline]
    fn with(&self, i: usize) -> Set {
        self | 1u128 << i
    }

    #[inline]
    fn without(&self, i: usize) -> Set {
        self & !(1u128 << i)
    }

    #[inline]
    fn union(&self, other: &Set) -> Set {
        self | other
    }

    #[inline]
    fn minus(&self, other: &Set) -> Set {
        self & !other
    }

    #[inline]
    fn is_subset(&self, other: &Set) -> bool {
        self & !other == 0
    }

    fn fits(&self, n: usize) -> bool {
        n <= MAX_SET_POINTS && self & !full_set(n) == 0
    }

    #[inline]
    fn points(&self) -> Points<'_> {
        Points::Set(*self)
    }

    fn heap_bytes(_: usize) -> u64 {
        0
    }

    fn all_splits(&self, _: usize, out: &mut Vec<(Set, Set)>) {
        let set = *self;
        let low = set & set.wrapping_neg();
        let rest = set ^ low;
        let mut sub = rest;
        loop {
            sub = sub.wrapping_sub(1) & rest;
            out.push((low | sub, rest ^ sub));
            if sub == 0 {
                break;
            }
        }
    }
}

/// A set of points for any number of points: `⌈n/64⌉` words on the heap,
/// bit `i` of word `i / 64` for point `i` (see the module docs).
/// All the sets of one computation have the same number of words.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct WideSet(Box<[u64]>);

impl WideSet {
    /// The empty set over `n` points.
    pub fn empty(n: usize) -> WideSet {
        WideSet(vec![0u64; n.div_ceil(64).max(1)].into_boxed_slice())
    }

    /// The words, lowest points first.
    pub fn words(&self) -> &[u64] {
        &self.0
    }
}

impl Debug for WideSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.points().iter()).finish()
    }
}

impl Ord for WideSet {
    /// As binary numbers: the highest word decides first (the order of a
    /// `u128` with the same bits).
    fn cmp(&self, other: &WideSet) -> Ordering {
        self.0.iter().rev().cmp(other.0.iter().rev())
    }
}

impl PartialOrd for WideSet {
    fn partial_cmp(&self, other: &WideSet) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl SetRepr for WideSet {
    const MAX_POINTS: usize = usize::MAX;

    fn full(n: usize) -> WideSet {
        let mut s = WideSet::empty(n);
        for (k, w) in s.0.iter_mut().enumerate() {
            let bits = n.saturating_sub(64 * k).min(64);
            *w = if bits == 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
        }
        s
    }

    fn singleton(i: usize, n: usize) -> WideSet {
        let mut s = WideSet::empty(n);
        s.0[i / 64] = 1u64 << (i % 64);
        s
    }

    fn from_points(points: impl IntoIterator<Item = usize>, n: usize) -> WideSet {
        let mut s = WideSet::empty(n);
        for i in points {
            s.0[i / 64] |= 1u64 << (i % 64);
        }
        s
    }

    #[inline]
    fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    #[inline]
    fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    #[inline]
    fn is_singleton(&self) -> bool {
        let mut seen = false;
        for &w in self.0.iter() {
            if w != 0 {
                if seen || w & (w - 1) != 0 {
                    return false;
                }
                seen = true;
            }
        }
        seen
    }

    #[inline]
    fn lowest(&self) -> usize {
        self.0
            .iter()
            .position(|&w| w != 0)
            .map_or(usize::MAX, |k| 64 * k + self.0[k].trailing_zeros() as usize)
    }

    #[inline]
    fn contains(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
    }

    fn with(&self, i: usize) -> WideSet {
        let mut s = self.clone();
        s.0[i / 64] |= 1u64 << (i % 64);
        s
    }

    fn without(&self, i: usize) -> WideSet {
        let mut s = self.clone();
        s.0[i / 64] &= !(1u64 << (i % 64));
        s
    }

    fn union(&self, other: &WideSet) -> WideSet {
        WideSet(
            self.0
                .iter()
                .zip(other.0.iter())
                .map(|(a, b)| a | b)
                .collect(),
        )
    }

    fn minus(&self, other: &WideSet) -> WideSet {
        WideSet(
            self.0
                .iter()
                .zip(other.0.iter())
                .map(|(a, b)| a & !b)
                .collect(),
        )
    }

    fn is_subset(&self, other: &WideSet) -> bool {
        self.0.iter().zip(other.0.iter()).all(|(a, b)| a & !b == 0)
    }

    fn fits(&self, n: usize) -> bool {
        self.0.len() == n.div_ceil(64).max(1) && self.is_subset(&WideSet::full(n))
    }

    #[inline]
    fn points(&self) -> Points<'_> {
        Points::Words(&self.0)
    }

    fn heap_bytes(n: usize) -> u64 {
        8 * n.div_ceil(64).max(1) as u64 + 16
    }
}

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
    /// A [`WideSet`]'s words: bit `i % 64` of word `i / 64` is point `i`.
    Words(&'a [u64]),
}

impl<'a> Points<'a> {
    /// The points in increasing order.
    #[inline]
    pub fn iter(self) -> PointIter<'a> {
        match self {
            Points::Mask(m) => PointIter::Bits(m as u128),
            Points::Set(s) => PointIter::Bits(s),
            Points::List(l) => PointIter::List(l.iter()),
            Points::Words(w) => PointIter::Words {
                words: w,
                base: 0,
                rest: w.first().copied().unwrap_or(0),
            },
        }
    }

    /// Number of points.
    #[inline]
    pub fn len(self) -> usize {
        match self {
            Points::Mask(m) => m.count_ones() as usize,
            Points::Set(s) => s.count_ones() as usize,
            Points::List(l) => l.len(),
            Points::Words(w) => w.iter().map(|x| x.count_ones() as usize).sum(),
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
    /// Remaining bits of a [`WideSet`]: `rest` is what is left of the word
    /// of points `base..base + 64`, `words` the words after it.
    Words {
        /// The current word and those after it.
        words: &'a [u64],
        /// The first point of the current word.
        base: usize,
        /// The current word's bits not yet returned.
        rest: u64,
    },
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
            PointIter::Words { words, base, rest } => loop {
                if *rest != 0 {
                    let i = *base + rest.trailing_zeros() as usize;
                    *rest &= *rest - 1;
                    return Some(i);
                }
                if words.len() <= 1 {
                    *words = &[];
                    return None;
                }
                *words = &words[1..];
                *base += 64;
                *rest = words[0];
            },
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
