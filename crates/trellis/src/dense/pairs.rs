//! The terms `P(S)` and `C(S)` of a pair-form separable model, rebuilt block
//! by block from the `n × n` pair values instead of held in `2^n` tables.
//!
//! # The algorithm
//!
//! A model in pair form ([`PairSums`]) has `T(S) = Σ_{i<j∈S} t_ij` for both
//! of its terms. Write a subset as `(H, x)`, its high part `H` (the points
//! from `bits` on) and its low part `x` (the points below `bits`), as the
//! blocked kernel does (`blocked.rs`). Then
//!
//! ```text
//! T(H, x) = T(H) + T(x) + Σ_{i∈x} row_H(i),        row_H(i) = Σ_{j∈H} t_ij,
//! ```
//!
//! with `T(H)` from a table over the `2^(n - bits)` high parts and `T(x)` from
//! one over the `2^bits` low parts, both made once. A block (the `2^bits`
//! subsets of one high part) costs `bits · |H|` additions for its rows and
//! two per subset: `cross(x) = cross(x ∖ {lowest point of x}) + row_H(lowest)`.
//! That is `O(2^n)` for all blocks, against the `O(3^n)` of a pass, and the
//! passes of `logz` and `map` keep one 8-byte entry per subset and no table
//! of terms at all.
//!
//! Every term is formed by the same additions in the same order whichever
//! way it is asked for ([`PairBlocks::fill`] for a block, [`PairBlocks::at`]
//! for one subset, [`PairBlocks::tables`] for all of them), so the kernels
//! that read tables and the ones that rebuild blocks see identical values.

use crate::base::par;
use crate::base::set::Mask;
use crate::models::PairSums;

/// Low bits of a block for `n ≥ 13` points.
const BLOCK_BITS: usize = 10;

/// Low bits per block for `n` points: 10 from 13 points on; fewer below, so
/// that small inputs (and the tests on them) still have high parts.
pub(crate) fn block_bits(n: usize) -> usize {
    if n <= 3 {
        n
    } else {
        BLOCK_BITS.min((n - 3).max(3))
    }
}

/// The pair values of a model's two terms with their high and low tables.
pub(crate) struct PairBlocks {
    n: usize,
    bits: usize,
    /// The pair values of `P` and `C`, `n × n`.
    pairs: [Vec<f64>; 2],
    /// `T(x)` of the low parts, per term.
    low: [Vec<f64>; 2],
    /// `T(H)` of the high parts, per term.
    high: [Vec<f64>; 2],
    /// Which subsets the triplets forbid, one bit per subset (empty without
    /// triplets), and the terms of a forbidden cluster (see
    /// [`PairSums::forbidden`]).
    forbidden: Vec<u64>,
    forbidden_term: f64,
}

/// Which term: `P` (the parent's) or `C` (a child's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Term {
    Parent = 0,
    Child = 1,
}

/// `T` of every subset of `points` (indices into the `n × n` matrix `t`),
/// by mask over their positions: `T(x) = T(x ∖ {top}) + Σ_{j ∈ x∖{top}} t[top][j]`.
fn subset_sums(t: &[f64], n: usize, points: &[usize]) -> Vec<f64> {
    let mut out = vec![0.0; 1usize << points.len()];
    for x in 1..out.len() {
        let top = usize::BITS as usize - 1 - x.leading_zeros() as usize;
        let rest = x ^ (1 << top);
        let row = &t[points[top] * n..(points[top] + 1) * n];
        let mut sum = out[rest];
        let mut r = rest;
        while r != 0 {
            let j = r.trailing_zeros() as usize;
            sum += row[points[j]];
            r &= r - 1;
        }
        out[x] = sum;
    }
    out
}

/// The subsets of `n` points that a triplet `[a, b, c]` forbids (holding
/// `c` and exactly one of `a`, `b`), one bit per subset: `O(2^n ·
/// triplets)` once, so that the passes read one bit per subset however
/// many triplets there are. Empty without triplets.
fn forbidden_bits(n: usize, triplets: &[[usize; 3]]) -> Vec<u64> {
    if triplets.is_empty() {
        return Vec::new();
    }
    let masks: Vec<(usize, usize)> = triplets
        .iter()
        .map(|&[a, b, c]| ((1usize << a) | (1usize << b), 1usize << c))
        .collect();
    let words = 1usize << n.saturating_sub(6);
    par::collect_range(words, n > 16, |w| {
        let mut word = 0u64;
        for bit in 0..64.min(1usize << n) {
            let s = w * 64 + bit;
            if masks
                .iter()
                .any(|&(ab, c)| s & c != 0 && (s & ab).count_ones() == 1)
            {
                word |= 1 << bit;
            }
        }
        word
    })
}

impl PairBlocks {
    /// The high and low tables of `pairs` for blocks of `bits` low bits
    /// (`O(2^bits + 2^(n - bits))` entries per term, a few MiB at most).
    pub(crate) fn new(pairs: &PairSums, bits: usize) -> PairBlocks {
        let n = pairs.n;
        let lows: Vec<usize> = (0..bits).collect();
        let highs: Vec<usize> = (bits..n).collect();
        let both = |f: &dyn Fn(&[f64]) -> Vec<f64>| [f(&pairs.parent), f(&pairs.child)];
        PairBlocks {
            n,
            bits,
            low: both(&|t| subset_sums(t, n, &lows)),
            high: both(&|t| subset_sums(t, n, &highs)),
            pairs: [pairs.parent.clone(), pairs.child.clone()],
            forbidden: forbidden_bits(n, &pairs.forbidden),
            forbidden_term: pairs.forbidden_term,
        }
    }

    /// Whether a triplet forbids the cluster `s` (one bit read).
    #[inline]
    fn forbids(&self, s: usize) -> bool {
        !self.forbidden.is_empty() && self.forbidden[s / 64] >> (s % 64) & 1 == 1
    }

    /// Bytes of the bit set of forbidden clusters for `n` points under
    /// triplets (`2^n / 8`, at least a word), 0 without.
    pub(crate) fn forbidden_bytes(n: usize, triplets: usize) -> u64 {
        if triplets == 0 {
            0
        } else {
            8 * (1u64 << n.saturating_sub(6))
        }
    }

    /// `row_H(i)` of the low points `i < bits`: `Σ_{j ∈ H}` in increasing `j`.
    #[inline]
    fn rows(&self, term: Term, high: usize, rows: &mut [f64]) {
        let t = &self.pairs[term as usize];
        for (i, row) in rows.iter_mut().enumerate().take(self.bits) {
            let line = &t[i * self.n..(i + 1) * self.n];
            let mut sum = 0.0;
            let mut h = high;
            while h != 0 {
                let j = h.trailing_zeros() as usize;
                sum += line[self.bits + j];
                h &= h - 1;
            }
            *row = sum;
        }
    }

    /// The term of every subset of block `high` into `out` (`2^bits`
    /// entries, by low part).
    pub(crate) fn fill(&self, term: Term, high: usize, out: &mut [f64]) {
        self.fill_sums(term, high, out);
        if !self.forbidden.is_empty() {
            for (x, v) in out.iter_mut().enumerate() {
                if self.forbids((high << self.bits) | x) {
                    *v = self.forbidden_term;
                }
            }
        }
    }

    /// The pair sums of block `high`, forbidden clusters included.
    fn fill_sums(&self, term: Term, high: usize, out: &mut [f64]) {
        let mut rows = [0.0; usize::BITS as usize];
        self.rows(term, high, &mut rows);
        let base = self.high[term as usize][high];
        let low = &self.low[term as usize];
        // First `cross(x)` of every low part, then the whole term.
        out[0] = 0.0;
        for x in 1..out.len() {
            out[x] = out[x & (x - 1)] + rows[x.trailing_zeros() as usize];
        }
        for (v, &l) in out.iter_mut().zip(low) {
            // `cross + (T(H) + T(x))`: the sum `at` forms (addition commutes).
            *v += base + l;
        }
    }

    /// The term of one subset: the same additions as [`PairBlocks::fill`].
    pub(crate) fn at(&self, term: Term, s: Mask) -> f64 {
        let s = s as usize;
        if self.forbids(s) {
            return self.forbidden_term;
        }
        let (high, x) = (s >> self.bits, s & ((1usize << self.bits) - 1));
        let mut rows = [0.0; usize::BITS as usize];
        self.rows(term, high, &mut rows);
        // `cross(x) = cross(x ∖ lowest) + row(lowest)`, unrolled from the top.
        let mut cross = 0.0;
        let mut r = x;
        let mut order = [0usize; usize::BITS as usize];
        let mut k = 0;
        while r != 0 {
            order[k] = r.trailing_zeros() as usize;
            r &= r - 1;
            k += 1;
        }
        for &i in order[..k].iter().rev() {
            cross += rows[i];
        }
        (self.high[term as usize][high] + self.low[term as usize][x]) + cross
    }

    /// Feeds what determines every term (`n`, the block width and both pair
    /// matrices, bit for bit) to `update`: a checkpoint's fingerprint.
    pub(crate) fn fingerprint(&self, update: &mut dyn FnMut(&[u8])) {
        update(&(self.n as u64).to_le_bytes());
        update(&(self.bits as u64).to_le_bytes());
        for t in &self.pairs {
            for v in t {
                update(&v.to_bits().to_le_bytes());
            }
        }
        if !self.forbidden.is_empty() {
            update(b"forbidden");
            update(&self.forbidden_term.to_bits().to_le_bytes());
            for w in &self.forbidden {
                update(&w.to_le_bytes());
            }
        }
    }

    /// Both terms of every subset, `(P, C)` by mask: the tables of the
    /// kernels that read tables.
    pub(crate) fn tables(&self) -> (Vec<f64>, Vec<f64>) {
        let size = 1usize << self.bits;
        let table = |term: Term| {
            let mut out = vec![0.0; 1usize << self.n];
            par::update_chunks(&mut out, size, |high, block| self.fill(term, high, block));
            out
        };
        (table(Term::Parent), table(Term::Child))
    }

    /// `max |P(S)|` and `max |C(S)|` over the non-empty subsets, block by
    /// block (for the range check of the scaled kernels); forbidden
    /// clusters count with their pair sums (a bound over the others).
    pub(crate) fn extremes(&self) -> (f64, f64) {
        let size = 1usize << self.bits;
        let blocks = 1usize << (self.n - self.bits);
        let largest = |term: Term| {
            par::fold_range(
                blocks,
                || (0.0f64, vec![0.0; size]),
                |(m, mut scratch), high| {
                    self.fill_sums(term, high, &mut scratch);
                    let first = usize::from(high == 0);
                    let m = scratch[first..].iter().fold(m, |m, v| m.max(v.abs()));
                    (m, scratch)
                },
                |a, b| (a.0.max(b.0), a.1),
            )
            .0
        };
        (largest(Term::Parent), largest(Term::Child))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::set::members;

    fn random_pairs(n: usize, seed: u64) -> PairSums {
        let mut state = seed;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        };
        let mut parent = vec![0.0; n * n];
        let mut child = vec![0.0; n * n];
        for i in 0..n {
            for j in i + 1..n {
                let (p, c) = (next(), next());
                parent[i * n + j] = p;
                parent[j * n + i] = p;
                child[i * n + j] = c;
                child[j * n + i] = c;
            }
        }
        PairSums {
            n,
            parent,
            child,
            forbidden: Vec::new(),
            forbidden_term: f64::NEG_INFINITY,
        }
    }

    #[test]
    fn every_way_of_asking_gives_the_pair_sums_bit_for_bit() {
        for (n, bits) in [(1, 1), (5, 3), (9, 4), (12, 8), (13, 10)] {
            let pairs = random_pairs(n, n as u64 * 31 + bits as u64);
            let blocks = PairBlocks::new(&pairs, bits);
            let (p, c) = blocks.tables();
            let (mut mp, mut mc) = (0.0f64, 0.0f64);
            for s in 1u32..1 << n {
                let m: Vec<usize> = members(s).collect();
                let direct = |t: &[f64]| {
                    let mut sum = 0.0;
                    for (a, &i) in m.iter().enumerate() {
                        for &j in &m[a + 1..] {
                            sum += t[i * n + j];
                        }
                    }
                    sum
                };
                let (dp, dc) = (direct(&pairs.parent), direct(&pairs.child));
                assert!((p[s as usize] - dp).abs() <= 1e-12, "P of {s:b}");
                assert!((c[s as usize] - dc).abs() <= 1e-12, "C of {s:b}");
                assert_eq!(
                    p[s as usize].to_bits(),
                    blocks.at(Term::Parent, s).to_bits()
                );
                assert_eq!(c[s as usize].to_bits(), blocks.at(Term::Child, s).to_bits());
                mp = mp.max(p[s as usize].abs());
                mc = mc.max(c[s as usize].abs());
            }
            assert_eq!(blocks.extremes(), (mp, mc), "n = {n}");
            let mut block = vec![0.0; 1 << bits];
            for high in 0..1usize << (n - bits) {
                blocks.fill(Term::Child, high, &mut block);
                assert_eq!(&block[..], &c[high << bits..(high + 1) << bits]);
            }
        }
    }

    /// Under triplets every way of asking gives the forbidden term for a
    /// cluster holding `c` and exactly one of `a`, `b`, and the pair sums
    /// for every other; the extremes are those of the pair sums.
    #[test]
    fn forbidden_clusters_get_the_forbidden_term_every_way() {
        for (n, bits) in [(5, 3), (9, 4), (13, 10)] {
            let plain = random_pairs(n, 77 + n as u64);
            let triplets = vec![[0, 1, 2], [3, n - 1, 1]];
            let pairs = PairSums {
                forbidden: triplets.clone(),
                forbidden_term: f64::NEG_INFINITY,
                ..plain.clone()
            };
            let (want_p, want_c) = PairBlocks::new(&plain, bits).tables();
            let blocks = PairBlocks::new(&pairs, bits);
            let (p, c) = blocks.tables();
            let mut forbidden = 0;
            for s in 0usize..1 << n {
                let has = |i: usize| s >> i & 1 == 1;
                let f = triplets.iter().any(|&[a, b, c]| has(c) && has(a) != has(b));
                forbidden += usize::from(f);
                for (term, got, want) in [(Term::Parent, &p, &want_p), (Term::Child, &c, &want_c)] {
                    let expect = if f { f64::NEG_INFINITY } else { want[s] };
                    assert_eq!(got[s].to_bits(), expect.to_bits(), "{s:b}");
                    assert_eq!(
                        blocks.at(term, s as Mask).to_bits(),
                        expect.to_bits(),
                        "{s:b}"
                    );
                }
            }
            assert!(forbidden > 0);
            assert_eq!(blocks.extremes(), PairBlocks::new(&plain, bits).extremes());
        }
    }
}
