//! The cache-blocked, vectorised inside pass of the dense trellises.
//!
//! # What it computes
//!
//! For a separable model whose factor does not depend on the cluster size
//! (`log ψ(L, R) = f · (P(S) + C(L) + C(R))`, hierarchical correlation
//! clustering and any user model declaring that form), the inside pass of
//! `mod.rs` becomes two recurrences over the subsets of the points, each in
//! its own semiring:
//!
//! ```text
//! K(S) = f·(C(S) + P(S)) + max_L [ K(L) + K(S∖L) ]     K({i}) = f·C({i})       (max-plus)
//! G(S) = e^{f·(C(S) + P(S)) + b} · Σ_L G(L) · G(S∖L)    G({i}) = e^{f·C({i}) - a - b}
//! ```
//!
//! `K(S) = f·C(S) + log M(S)` is the key of the MAP pass (one 8-byte value per
//! subset) and `G(S) = e^{f·C(S)} Z(S) · e^{-(a|S| + b)}` the scaled weight of
//! the partition-function pass: the factor `e^{-(a|S|+b)}` is affine in the
//! subset's size, so the product of two children carries the parent's scale
//! up to the constant `e^{-b}` folded into the parent's own term. No table
//! entry needs an exponent of its own, and the two passes run separately:
//! `map` computes only `K`, `logz` only `G`, and a trellis kept for marginals
//! or samples runs both.
//!
//! The outside pass (every cluster's marginal, see `outside.rs` and
//! [`outside`]) is the same kernel on a third shape: over the complements
//! `T = X ∖ S`, `F(T) = own(T) · Σ_{R ⊆ T, R ≠ ∅} F(T ∖ R) · G(R)`, a subset
//! convolution of the table being built with the finished weights.
//!
//! # The blocked schedule
//!
//! A mask is `(high << bits) | low` with `bits` = 8 low bits (fewer for small
//! `n`), so a *block* (the `2^bits` subsets sharing a high part) is 2 KiB of
//! one table and sits in L1. Blocks are processed by increasing popcount of
//! their high part `H`; the blocks of one popcount are independent and run in
//! parallel. For each block:
//!
//! 1. **Cross pairs**: for every `H_L ⊊ H` holding the lowest bit of `H` (so
//!    every unordered split is met once) and `H_R = H ∖ H_L`, the complete
//!    subset convolution of block `H_L` with block `H_R` over the low bits:
//!    `acc(H, x ∪ y) ⊕= v(H_L, x) ⊗ v(H_R, y)` for all disjoint `x`, `y`.
//!    Both input blocks are final (smaller high popcount) and in L1: `3^bits`
//!    terms on `2 · 2^bits` inputs, compute-bound.
//! 2. **In-block pairs**: the splits whose one side has no high bit,
//!    `L = (H, x ∖ y)`, `R = (∅, y)`, `y ≠ ∅`, walking the low parts in
//!    increasing order so that every `(H, x')` with `x' ⊊ x` is final; then the
//!    cell is finalised (the parent's own term).
//!
//! Block 0 (no high bit) is the plain recurrence over the low bits. The work
//! is exactly the level-order pass's `(3^n - 2^(n+1) + 1)/2` splits; the
//! memory `O(2^n)` 8-byte entries per pass, read block by block.
//!
//! The cross pairs of a block run four at a time (`Grouped`, `cross4`):
//! the four left blocks are copied interleaved (entry `x` of pair `k` at
//! `4x + k`, a 4 × 4 transpose per 4 entries), and so are the right ones, so
//! that one 4-lane vector holds the same entry of four pairs and every lane
//! product is a split. For each output chunk (8 entries: the 3 lowest low
//! bits, 8 accumulator vectors kept in registers) and each left chunk under
//! it, the 27 products `b ⊆ a` of those bits are unrolled; the four lanes of
//! an accumulator are added together once, at the end of the block. A group
//! of three pairs is padded with the semiring's zero; the last one or two
//! pairs of a block (and the in-block pairs) take the single-pair step: the
//! 3 lowest bits in the 8 lanes of two vectors, for each right lane `y` the
//! left chunk permuted by `t ↦ t ⊕ y` (lanes not holding `y` get the zero)
//! and combined with the broadcast right entry, 27 useful lane pairs in 12
//! vector products, the permutations of a left chunk made once and reused
//! for every right chunk it meets. The grouped step does 27 vector products
//! for 108 splits where the single-pair step does 48 for 108: on this
//! project's 2-core AMD EPYC VM `logz` and `map` at N = 22 take 1.25× and
//! 1.5× less CPU time (`docs/benchmarks.md`).
//!
//! # Vector paths
//!
//! The kernel is written once over a 4-lane vector type and compiled twice:
//! with AVX2 intrinsics in a function compiled for AVX2, and with plain
//! arrays for the baseline target. The path is chosen at run time
//! ([`KernelPath`]): AVX2 when the CPU has it, or the one named by
//! `TRELLIS_KERNEL` (`avx2`, `portable`) or by [`crate::Options::kernel`].
//! Both paths perform the same floating-point operations in the same order
//! (no fused multiply-add), so they give bit-identical answers. There is no
//! AVX-512 path: the machines this crate is built and tested on have no
//! AVX-512, so such a path could not be tested. `unsafe` appears only in the
//! AVX2 lanes and their call, each block with the reason it is sound.
//!
//! # Range
//!
//! `G` is a plain `f64`. The scale `(a, b)` is fitted to the keys (`log G(S)
//! = K(S) + r(S) - a|S| - b` with `0 ≤ r(S) ≤ ln((2|S|-3)!!)`), and every entry
//! must land in `[2^-480, 2^480]`: then every product of two entries is a
//! normal number (full relative precision) and no sum of up to `2^29` of
//! them overflows. A pass whose entries leave that window reports it, and
//! the caller falls back to the exact scaled kernel of `mod.rs` (extreme β,
//! weights whose keys spread over more than about 600 nats at one size).

pub(crate) use crate::base::kernel_path::KernelPath;
use crate::base::par;
use crate::base::run::Ticker;
use crate::base::set::{Mask, for_each_split, total_splits};
use crate::dense::checkpoint::{PassCheckpoint, Run};
use crate::dense::pairs::{PairBlocks, Term, block_bits};
use crate::dense::potentials::SeparableTables;
use crate::error::Result;
use std::cell::Cell;
use std::path::Path;

/// Lanes of one chunk: the lowest 3 low bits.
const LANES: usize = 8;

/// Smallest entry of the weight pass, `2^-480` (see the module docs).
const G_MIN: f64 = 1.0
    / (1u128 << 120) as f64
    / (1u128 << 120) as f64
    / (1u128 << 120) as f64
    / (1u128 << 120) as f64;

/// Largest entry of the weight pass, `2^480`.
const G_MAX: f64 = 1.0 / G_MIN;

/// Widest spread, in nats, of `log G` the scale fit accepts (the window is
/// `960 ln 2 ≈ 665` nats; the rest is margin for the relative parts).
const FIT_WIDTH: f64 = 600.0;

/// Four lanes of `f64`: the vector unit of the kernel (an `__m256d` on the
/// AVX2 path, an array on the portable one). A chunk of 8 entries is two
/// of them: `lo` (lanes `t = 0..4`) and `hi` (`t = 4..8`).
trait Quad: Copy {
    fn load(x: &[f64; 4]) -> Self;
    fn store(self, x: &mut [f64; 4]);
    fn splat(x: f64) -> Self;
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    /// Lane-wise `if o > self { o } else { self }`.
    fn max(self, o: Self) -> Self;
    /// Lane `q` takes lane `q ⊕ Y` (`Y = 1, 2, 3`).
    fn swap<const Y: i32>(self) -> Self;
    /// Lane `q` of `self` where `q ⊇ Y`, of `zero` elsewhere.
    fn keep<const Y: i32>(self, zero: Self) -> Self;
    /// The 4 × 4 transpose: lane `k` of vector `q` of the result is lane
    /// `q` of vector `k` of `rows`.
    fn transpose(rows: [Self; 4]) -> [Self; 4];
}

/// The portable lanes.
#[derive(Clone, Copy)]
struct Plain([f64; 4]);

impl Quad for Plain {
    #[inline(always)]
    fn load(x: &[f64; 4]) -> Self {
        Plain(*x)
    }
    #[inline(always)]
    fn store(self, x: &mut [f64; 4]) {
        *x = self.0;
    }
    #[inline(always)]
    fn splat(x: f64) -> Self {
        Plain([x; 4])
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Plain(std::array::from_fn(|q| self.0[q] + o.0[q]))
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        Plain(std::array::from_fn(|q| self.0[q] * o.0[q]))
    }
    #[inline(always)]
    fn max(self, o: Self) -> Self {
        Plain(std::array::from_fn(|q| {
            if o.0[q] > self.0[q] {
                o.0[q]
            } else {
                self.0[q]
            }
        }))
    }
    #[inline(always)]
    fn swap<const Y: i32>(self) -> Self {
        Plain(std::array::from_fn(|q| self.0[q ^ Y as usize]))
    }
    #[inline(always)]
    fn keep<const Y: i32>(self, zero: Self) -> Self {
        let y = Y as usize;
        Plain(std::array::from_fn(|q| {
            if q & y == y { self.0[q] } else { zero.0[q] }
        }))
    }
    #[inline(always)]
    fn transpose(rows: [Self; 4]) -> [Self; 4] {
        std::array::from_fn(|q| Plain(std::array::from_fn(|k| rows[k].0[q])))
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    //! The AVX2 lanes. Every function here is inlined into `block_avx2`,
    //! compiled with AVX2 enabled and run only where the CPU reports AVX2
    //! (see `run_block`); that is what makes each `unsafe` block sound.
    use std::arch::x86_64::*;

    use super::Quad;

    #[derive(Clone, Copy)]
    pub(super) struct Avx2(__m256d);

    impl Quad for Avx2 {
        #[inline(always)]
        fn load(x: &[f64; 4]) -> Self {
            // SAFETY: `x` is 4 readable f64 (unaligned load); AVX2 is
            // present (module docs).
            Avx2(unsafe { _mm256_loadu_pd(x.as_ptr()) })
        }
        #[inline(always)]
        fn store(self, x: &mut [f64; 4]) {
            // SAFETY: `x` is 4 writable f64; AVX2 is present (module docs).
            unsafe { _mm256_storeu_pd(x.as_mut_ptr(), self.0) }
        }
        #[inline(always)]
        fn splat(x: f64) -> Self {
            // SAFETY: AVX2 is present (module docs).
            Avx2(unsafe { _mm256_set1_pd(x) })
        }
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            // SAFETY: AVX2 is present (module docs).
            Avx2(unsafe { _mm256_add_pd(self.0, o.0) })
        }
        #[inline(always)]
        fn mul(self, o: Self) -> Self {
            // SAFETY: AVX2 is present (module docs).
            Avx2(unsafe { _mm256_mul_pd(self.0, o.0) })
        }
        #[inline(always)]
        fn max(self, o: Self) -> Self {
            // `maxpd a, b` returns b unless a > b: `max(o, self)` is
            // `if o > self { o } else { self }`, as the portable lanes.
            // SAFETY: AVX2 is present (module docs).
            Avx2(unsafe { _mm256_max_pd(o.0, self.0) })
        }
        #[inline(always)]
        fn swap<const Y: i32>(self) -> Self {
            // SAFETY: AVX2 is present (module docs).
            Avx2(unsafe {
                match Y {
                    1 => _mm256_permute_pd::<0b0101>(self.0),
                    2 => _mm256_permute4x64_pd::<0x4E>(self.0),
                    _ => _mm256_permute4x64_pd::<0x1B>(self.0),
                }
            })
        }
        #[inline(always)]
        fn keep<const Y: i32>(self, zero: Self) -> Self {
            // SAFETY: AVX2 is present (module docs).
            Avx2(unsafe {
                match Y {
                    1 => _mm256_blend_pd::<0b1010>(zero.0, self.0),
                    2 => _mm256_blend_pd::<0b1100>(zero.0, self.0),
                    _ => _mm256_blend_pd::<0b1000>(zero.0, self.0),
                }
            })
        }
        #[inline(always)]
        fn transpose(rows: [Self; 4]) -> [Self; 4] {
            let [r0, r1, r2, r3] = rows.map(|r| r.0);
            // SAFETY: AVX2 is present (module docs).
            unsafe {
                // Lanes (r0[0], r1[0], r0[2], r1[2]) and (r0[1], r1[1], r0[3], r1[3]), ...
                let t0 = _mm256_unpacklo_pd(r0, r1);
                let t1 = _mm256_unpackhi_pd(r0, r1);
                let t2 = _mm256_unpacklo_pd(r2, r3);
                let t3 = _mm256_unpackhi_pd(r2, r3);
                // ... whose low and high halves pair up into the columns.
                [
                    Avx2(_mm256_permute2f128_pd::<0x20>(t0, t2)),
                    Avx2(_mm256_permute2f128_pd::<0x20>(t1, t3)),
                    Avx2(_mm256_permute2f128_pd::<0x31>(t0, t2)),
                    Avx2(_mm256_permute2f128_pd::<0x31>(t1, t3)),
                ]
            }
        }
    }
}

/// A semiring of the passes: `⊗` combines a split's two children, `⊕`
/// accumulates splits; `ZERO` is `⊕`'s identity and absorbs `⊗`.
trait Semiring {
    const ZERO: f64;
    fn times(a: f64, b: f64) -> f64;
    fn plus(a: f64, b: f64) -> f64;
    fn vtimes<V: Quad>(a: V, b: V) -> V;
    fn vplus<V: Quad>(a: V, b: V) -> V;
}

/// `(max, +)`: the MAP pass.
struct MaxPlus;

impl Semiring for MaxPlus {
    const ZERO: f64 = f64::NEG_INFINITY;
    #[inline(always)]
    fn times(a: f64, b: f64) -> f64 {
        a + b
    }
    #[inline(always)]
    fn plus(a: f64, b: f64) -> f64 {
        if b > a { b } else { a }
    }
    #[inline(always)]
    fn vtimes<V: Quad>(a: V, b: V) -> V {
        a.add(b)
    }
    #[inline(always)]
    fn vplus<V: Quad>(a: V, b: V) -> V {
        a.max(b)
    }
}

/// `(+, ·)`: the partition-function pass.
struct SumProduct;

impl Semiring for SumProduct {
    const ZERO: f64 = 0.0;
    #[inline(always)]
    fn times(a: f64, b: f64) -> f64 {
        a * b
    }
    #[inline(always)]
    fn plus(a: f64, b: f64) -> f64 {
        a + b
    }
    #[inline(always)]
    fn vtimes<V: Quad>(a: V, b: V) -> V {
        a.mul(b)
    }
    #[inline(always)]
    fn vplus<V: Quad>(a: V, b: V) -> V {
        a.add(b)
    }
}

type Chunk = [f64; LANES];

/// The two halves of a chunk.
#[inline(always)]
fn halves(c: &Chunk) -> (&[f64; 4], &[f64; 4]) {
    let (lo, hi) = c.split_at(4);
    (
        lo.try_into().expect("4 lanes"),
        hi.try_into().expect("4 lanes"),
    )
}

/// The left chunk's half `h` permuted for every right lane `y = 0..4`:
/// lane `q` holds `h[q ⊕ y]` where `y ⊆ q`, else the zero.
#[inline(always)]
fn permutations<V: Quad>(h: V, zero: V) -> [V; 4] {
    [
        h,
        h.swap::<1>().keep::<1>(zero),
        h.swap::<2>().keep::<2>(zero),
        h.swap::<3>().keep::<3>(zero),
    ]
}

/// One cross pair of a block (the single-pair step, see the module docs and
/// [`Grouped`] for the grouped one): `acc(x ∪ y) ⊕= left(x) ⊗ right(y)` over the
/// disjoint low parts, chunk by chunk (`left`, `right`, `acc` hold `2^bits`
/// entries as chunks of 8).
///
/// Output lane `t = 4h + q` of chunk `x_u ∪ y_u` gathers, over the right
/// lanes `y = 4y_h + y_q ⊆ t`, `left[x_u][t ⊕ y] ⊗ right[y_u][y]`: for `y < 4`
/// the low half of the left chunk feeds the low half and the high half the
/// high half, both permuted by `y`; for `y ≥ 4` only the high half gets
/// terms, from the low half permuted by `y - 4`. The terms are combined as a
/// balanced tree in a fixed order, so every path gives the same bits.
#[inline(always)]
fn cross<S: Semiring, V: Quad>(acc: &mut [Chunk], left: &[f64], right: &[f64], zero: f64) {
    for xu in 0..acc.len() {
        spread::<S, V>(acc, xu, chunk(left, xu), right, zero, true);
    }
}

/// Block pairs side by side in the lanes of the grouped cross step.
const GROUP: usize = 4;

/// The grouped cross step of one block (`acc(x ∪ y) ⊕= left_k(x) ⊗
/// right_k(y)` over block pairs `k`), four pairs at a time: the pairs'
/// blocks are copied interleaved (entry `x` of pair `k` at `4x + k`), so that
/// one vector holds the same entry of four pairs and every lane of every
/// vector product is a split; the 3 lowest bits are unrolled in registers
/// ([`cross4`]). A group of three is padded with the semiring's zero; the
/// last one or two pairs go through [`cross`] (padding them would cost
/// more than the lanes save).
struct Grouped<'t> {
    /// The pairs not yet run.
    pending: [(&'t [f64], &'t [f64]); GROUP],
    len: usize,
    /// Interleaved left and right blocks of a group, and the accumulators
    /// (`GROUP` per entry), all `GROUP · 2^bits` entries.
    left: Vec<f64>,
    right: Vec<f64>,
    acc: Vec<f64>,
    /// Entries per block.
    size: usize,
    /// A block of zeros, the padding of a short group.
    zeros: Vec<f64>,
}

impl<'t> Grouped<'t> {
    /// For blocks of `size` entries; the buffers are made when a group
    /// first runs.
    fn new(size: usize) -> Grouped<'t> {
        Grouped {
            pending: [(&[], &[]); GROUP],
            len: 0,
            size,
            left: Vec::new(),
            right: Vec::new(),
            acc: Vec::new(),
            zeros: Vec::new(),
        }
    }

    /// Adds the pair `(left, right)`; runs a group when four are pending.
    #[inline(always)]
    fn push<S: Semiring, V: Quad>(&mut self, left: &'t [f64], right: &'t [f64], zero: f64) {
        self.pending[self.len] = (left, right);
        self.len += 1;
        if self.len == GROUP {
            self.run::<S, V>(GROUP, zero);
        }
    }

    /// Runs the first `count` pending pairs as one group (fewer than four:
    /// padded).
    #[inline(always)]
    fn run<S: Semiring, V: Quad>(&mut self, count: usize, zero: f64) {
        if self.acc.is_empty() {
            self.left = vec![zero; GROUP * self.size];
            self.right = vec![zero; GROUP * self.size];
            self.acc = vec![zero; GROUP * self.size];
            self.zeros = vec![zero; self.size];
        }
        let zeros = &self.zeros[..];
        let side = |k: usize, right: bool| -> &[f64] {
            match (k < count, right) {
                (false, _) => zeros,
                (true, false) => self.pending[k].0,
                (true, true) => self.pending[k].1,
            }
        };
        for (blocks, out) in [(false, &mut self.left), (true, &mut self.right)] {
            let rows: [&[f64]; GROUP] = std::array::from_fn(|k| side(k, blocks));
            for (x, out) in out.chunks_exact_mut(GROUP * 4).enumerate() {
                let quads = V::transpose(std::array::from_fn(|k| {
                    V::load(rows[k][4 * x..4 * x + 4].try_into().expect("4 lanes"))
                }));
                for (q, v) in quads.into_iter().enumerate() {
                    v.store((&mut out[4 * q..4 * q + 4]).try_into().expect("4 lanes"));
                }
            }
        }
        cross4::<S, V>(&mut self.acc, &self.left, &self.right);
        self.pending.copy_within(count..self.len, 0);
        self.len -= count;
    }

    /// Runs what is pending and adds every lane to `acc`: `acc(x) ⊕= (a_0 ⊕
    /// a_1) ⊕ (a_2 ⊕ a_3)` in this order on every path.
    #[inline(always)]
    fn finish<S: Semiring, V: Quad>(mut self, acc: &mut [Chunk], zero: f64) {
        if self.len * 4 >= GROUP * 3 {
            self.run::<S, V>(self.len, zero);
        }
        for &(l, r) in &self.pending[..self.len] {
            cross::<S, V>(acc, l, r, zero);
        }
        for (x, a) in self.acc.chunks_exact(GROUP).enumerate() {
            let lanes = S::plus(S::plus(a[0], a[1]), S::plus(a[2], a[3]));
            let cell = &mut acc[x / LANES][x % LANES];
            *cell = S::plus(*cell, lanes);
        }
    }
}

/// The convolution of four interleaved block pairs (see [`Grouped`]) into
/// their interleaved accumulators: for every output chunk `m` (8 entries,
/// 8 vectors held in registers) and every chunk `i ⊆ m` of the left block,
/// with `j = m ∖ i` on the right, the 27 products of the 3 lowest bits
/// (`b ⊆ a`: `acc[a] ⊕= left[b] ⊗ right[a ⊕ b]`), in a fixed order.
#[inline(always)]
fn cross4<S: Semiring, V: Quad>(acc: &mut [f64], left: &[f64], right: &[f64]) {
    const W: usize = GROUP * LANES;
    let quad = |s: &[f64; W], k: usize| -> V {
        V::load(s[GROUP * k..GROUP * (k + 1)].try_into().expect("4 lanes"))
    };
    for (m, out) in acc.chunks_exact_mut(W).enumerate() {
        let out: &mut [f64; W] = out.try_into().expect("a chunk of 4 pairs");
        let mut a: [V; LANES] = std::array::from_fn(|k| quad(out, k));
        let mut i = m;
        loop {
            let l: &[f64; W] = left[i * W..(i + 1) * W].try_into().expect("a chunk");
            let j = m ^ i;
            let r: &[f64; W] = right[j * W..(j + 1) * W].try_into().expect("a chunk");
            // `term!(b; a...)`: every `a ⊇ b` of the 3 bits.
            macro_rules! term {
                ($b:literal; $($a:literal),*) => {{
                    let lb = quad(l, $b);
                    $( a[$a] = S::vplus(a[$a], S::vtimes(lb, quad(r, $a ^ $b))); )*
                }};
            }
            term!(0; 0, 1, 2, 3, 4, 5, 6, 7);
            term!(1; 1, 3, 5, 7);
            term!(2; 2, 3, 6, 7);
            term!(3; 3, 7);
            term!(4; 4, 5, 6, 7);
            term!(5; 5, 7);
            term!(6; 6, 7);
            term!(7; 7);
            if i == 0 {
                break;
            }
            i = (i - 1) & m;
        }
        for (k, v) in a.iter().enumerate() {
            let q: &mut [f64; GROUP] = (&mut out[GROUP * k..GROUP * (k + 1)])
                .try_into()
                .expect("4 lanes");
            v.store(q);
        }
    }
}

/// Chunk `i` of a table slice (8 entries).
#[inline(always)]
fn chunk(s: &[f64], i: usize) -> &Chunk {
    s[i * LANES..(i + 1) * LANES].try_into().expect("8 lanes")
}

/// The contributions of the left chunk `l` (at chunk index `xu`) to every
/// output chunk `xu ∪ yu`, `yu` disjoint from `xu` (and not empty unless
/// `with_empty`): `acc[xu ∪ yu] ⊕= l ⊛ right[yu]` lane by lane (see
/// [`cross`]).
#[inline(always)]
fn spread<S: Semiring, V: Quad>(
    acc: &mut [Chunk],
    xu: usize,
    l: &Chunk,
    right: &[f64],
    zero: f64,
    with_empty: bool,
) {
    let top = acc.len() - 1;
    let z = V::splat(zero);
    let t = |a: V, b: f64| S::vtimes(a, V::splat(b));
    let p = |a: V, b: V| S::vplus(a, b);
    let (l_lo, l_hi) = halves(l);
    let lo = permutations(V::load(l_lo), z);
    let hi = permutations(V::load(l_hi), z);
    let comp = !xu & top;
    let mut yu = comp;
    loop {
        if yu == 0 && !with_empty {
            break;
        }
        // `xu | yu` and `yu` are below `chunks`, a power of two.
        let r = chunk(right, yu & top);
        let sum_lo = p(
            p(t(lo[0], r[0]), t(lo[1], r[1])),
            p(t(lo[2], r[2]), t(lo[3], r[3])),
        );
        let sum_hi = p(
            p(
                p(t(hi[0], r[0]), t(hi[1], r[1])),
                p(t(hi[2], r[2]), t(hi[3], r[3])),
            ),
            p(
                p(t(lo[0], r[4]), t(lo[1], r[5])),
                p(t(lo[2], r[6]), t(lo[3], r[7])),
            ),
        );
        let out = &mut acc[(xu | yu) & top];
        let (o_lo, o_hi) = out.split_at_mut(4);
        let (o_lo, o_hi): (&mut [f64; 4], &mut [f64; 4]) = (
            o_lo.try_into().expect("4 lanes"),
            o_hi.try_into().expect("4 lanes"),
        );
        p(V::load(o_lo), sum_lo).store(o_lo);
        p(V::load(o_hi), sum_hi).store(o_hi);
        if yu == 0 {
            break;
        }
        yu = (yu - 1) & comp;
    }
}

/// The separable terms `P` and `C` a pass finishes its cells with.
#[derive(Clone, Copy)]
pub(crate) enum Terms<'a> {
    /// Tables by mask.
    Tables(SeparableTables<'a>),
    /// Rebuilt block by block from a pair-form model (`pairs.rs`), with
    /// the model's constant factor `f`.
    Pairs { factor: f64, blocks: &'a PairBlocks },
}

impl<'a> Terms<'a> {
    /// The constant factor `f`.
    pub(crate) fn factor(&self) -> f64 {
        match self {
            Terms::Tables(sep) => sep.factors[1],
            Terms::Pairs { factor, .. } => *factor,
        }
    }

    /// `(P(s), C(s))`.
    pub(crate) fn at(&self, s: Mask) -> (f64, f64) {
        match self {
            Terms::Tables(sep) => (sep.parent[s as usize], sep.child[s as usize]),
            Terms::Pairs { blocks, .. } => (blocks.at(Term::Parent, s), blocks.at(Term::Child, s)),
        }
    }

    /// `P` and `C` of block `high`, from the tables or rebuilt into `scratch`.
    #[inline]
    fn block<'t>(
        &self,
        high: usize,
        bits: usize,
        scratch: &'t mut [Vec<f64>; 2],
    ) -> (&'t [f64], &'t [f64])
    where
        'a: 't,
    {
        match *self {
            Terms::Tables(sep) => (
                chunks(sep.parent, high, bits),
                chunks(sep.child, high, bits),
            ),
            Terms::Pairs { blocks, .. } => {
                let [p, c] = scratch;
                p.resize(1 << bits, 0.0);
                c.resize(1 << bits, 0.0);
                blocks.fill(Term::Parent, high, p);
                blocks.fill(Term::Child, high, c);
                (&p[..], &c[..])
            }
        }
    }
}

/// `P` and `C` of the subsets `s ^ flip` of block `high` for a pass with
/// terms (the block of the high part `high ^ (flip >> bits)`, read at `x ^
/// (flip & low)` by [`term`]), or two empty slices.
#[inline(always)]
fn block_terms<'t>(
    terms: Option<Terms<'t>>,
    high: usize,
    bits: usize,
    flip: usize,
    scratch: &'t mut [Vec<f64>; 2],
) -> (&'t [f64], &'t [f64]) {
    match terms {
        Some(t) => t.block(high ^ (flip >> bits), bits, scratch),
        None => (&[], &[]),
    }
}

/// The term of the subset `(high, x) ^ flip` from its block (see
/// [`block_terms`]; 0 for a pass without terms).
#[inline(always)]
fn term(block: &[f64], x: usize, flip: usize) -> f64 {
    block
        .get(x ^ (flip & (block.len().wrapping_sub(1))))
        .copied()
        .unwrap_or(0.0)
}

/// Everything one block needs besides the table.
struct BlockJob<'a, F> {
    bits: usize,
    /// The separable terms the cells are finished with (none for the flat
    /// pass, whose `finish` reads its own tables), of the subset `s ^ flip`
    /// for the cell of `s`: the outside pass runs over complements, so
    /// its `flip` is the whole set (else 0).
    terms: Option<Terms<'a>>,
    flip: usize,
    /// The finished table entries (blocks of smaller high popcount are final).
    table: &'a [f64],
    /// The cell's value from its accumulated splits (`acc` is the zero for a
    /// single point) and its terms `P`, `C`.
    finish: &'a F,
    /// The recurrence.
    shape: Shape<'a>,
}

/// The recurrence of a pass.
#[derive(Clone, Copy)]
pub(crate) enum Shape<'a> {
    /// The hierarchical trellis: a subset is split into two children, the
    /// one holding its lowest point first.
    Tree,
    /// The flat trellis: a subset is a cluster holding its *highest* point
    /// (its value from `energies`) and a partition of the rest; `empty` is
    /// the value of the empty set. With the highest point, the cluster of a
    /// subset whose high part is not empty always has a high part, so every
    /// term is a cross pair (the energy block of the cluster's high part
    /// with the table block of the rest's), and no in-block step remains.
    Flat { energies: &'a [f64], empty: f64 },
    /// The outside pass over complements: the entry of `T` is made from
    /// `Σ_{R ⊆ T, R ≠ ∅} table(T ∖ R) · weights(R)` (a subset convolution
    /// of the table being built with a finished one), `root` the entry of
    /// the empty set. Cross pairs take the sibling's high part `H_R ⊆ H`,
    /// `H_R ≠ ∅`; the in-block step reads the weights' block 0.
    Outside { weights: &'a [f64], root: f64 },
}

/// Block `h` of a table.
#[inline(always)]
fn chunks(table: &[f64], h: usize, bits: usize) -> &[f64] {
    &table[h << bits..(h + 1) << bits]
}

/// One block `high ≠ 0`: cross pairs, then in-block pairs and the finish.
/// Writes the final entries to `out` and the accumulated splits to `raw`.
#[inline(always)]
fn block<S: Semiring, V: Quad, F: Fn(Mask, f64, f64, f64) -> f64>(
    job: &BlockJob<'_, F>,
    high: usize,
    out: &mut [f64],
    raw: &mut [f64],
) {
    let bits = job.bits;
    let size = 1usize << bits;
    let table = job.table;
    let mut scratch = [Vec::new(), Vec::new()];
    let flip = job.flip;
    let (bp, bc) = block_terms(job.terms, high, bits, flip, &mut scratch);
    let mut acc = vec![[S::ZERO; LANES]; size / LANES];
    let zero = std::hint::black_box(S::ZERO);
    // (No closures here: everything must inline into the caller compiled
    // for the vector path's features.)

    if let Shape::Flat { energies, .. } = job.shape {
        // Clusters `(top | sub, x)`, `sub ⊆ rest`, with the rest `(rest ∖ sub, y)`.
        let top = 1usize << (usize::BITS - 1 - high.leading_zeros());
        let rest = high ^ top;
        let mut grouped = Grouped::new(size);
        let mut sub = rest;
        loop {
            let hc = top | sub;
            grouped.push::<S, V>(
                chunks(energies, hc, bits),
                chunks(table, high ^ hc, bits),
                zero,
            );
            if sub == 0 {
                break;
            }
            sub = (sub - 1) & rest;
        }
        grouped.finish::<S, V>(&mut acc, zero);
        for x in 0..size {
            raw[x] = acc[x / LANES][x % LANES];
            out[x] = (job.finish)(
                ((high << bits) | x) as Mask,
                raw[x],
                term(bp, x, flip),
                term(bc, x, flip),
            );
        }
        return;
    }
    if let Shape::Outside { weights, .. } = job.shape {
        // Siblings `(h_r, y)`, `∅ ≠ h_r ⊆ high`, with the rest `(high ∖ h_r, x)`.
        let mut grouped = Grouped::new(size);
        let mut hr = high;
        while hr != 0 {
            grouped.push::<S, V>(
                chunks(table, high ^ hr, bits),
                chunks(weights, hr, bits),
                zero,
            );
            hr = (hr - 1) & high;
        }
        grouped.finish::<S, V>(&mut acc, zero);
    }
    let low = high & high.wrapping_neg();
    let rest = high ^ low;
    // Left high parts `low | sub`, `sub ⊊ rest`.
    if rest != 0 && matches!(job.shape, Shape::Tree) {
        let mut grouped = Grouped::new(size);
        let mut sub = (rest - 1) & rest;
        loop {
            let hl = low | sub;
            grouped.push::<S, V>(
                chunks(table, hl, bits),
                chunks(table, high ^ hl, bits),
                zero,
            );
            if sub == 0 {
                break;
            }
            sub = (sub - 1) & rest;
        }
        grouped.finish::<S, V>(&mut acc, zero);
    }
    // In-block pairs R = (∅, y), y ≠ ∅, L = (high, x ∖ y) (R from the
    // weights' block 0 for the outside pass), chunk by chunk in
    // increasing order: the lanes of chunk `xu` take the terms with `y` in
    // chunk 0 (lane by lane: they read lanes of the same chunk, already
    // final), then the chunk, final, spreads its terms with `y` in the
    // chunks `yu ≠ 0` to the chunks `xu ∪ yu` above it.
    let row0 = match job.shape {
        Shape::Outside { weights, .. } => &weights[..size],
        _ => &table[..size],
    };
    for xu in 0..size / LANES {
        let first = acc[xu];
        for (t, &start) in first.iter().enumerate() {
            let x = xu * LANES + t;
            let mut a = start;
            let mut yl = t;
            while yl != 0 {
                a = S::plus(a, S::times(out[x ^ yl], row0[yl]));
                yl = (yl - 1) & t;
            }
            raw[x] = a;
            let (p, c) = (term(bp, x, flip), term(bc, x, flip));
            out[x] = (job.finish)(((high << bits) | x) as Mask, a, p, c);
        }
        let chunk: Chunk = out[xu * LANES..(xu + 1) * LANES]
            .try_into()
            .expect("8 lanes");
        spread::<S, V>(&mut acc, xu, &chunk, row0, zero, false);
    }
}

/// Block 0: the plain recurrence over the low bits (the empty set included
/// for the flat trellis).
fn block_zero<S: Semiring, F: Fn(Mask, f64, f64, f64) -> f64>(
    bits: usize,
    terms: Option<Terms<'_>>,
    flip: usize,
    finish: &F,
    shape: Shape<'_>,
    out: &mut [f64],
    raw: &mut [f64],
) {
    match shape {
        Shape::Flat { empty: e, .. } | Shape::Outside { root: e, .. } => {
            out[0] = e;
            raw[0] = e;
        }
        Shape::Tree => {}
    }
    let mut scratch = [Vec::new(), Vec::new()];
    let (bp, bc) = block_terms(terms, 0, bits, flip, &mut scratch);
    for x in 1..1usize << bits {
        let mut a = S::ZERO;
        match shape {
            Shape::Tree => for_each_split(x as Mask, |l, r| {
                a = S::plus(a, S::times(out[l as usize], out[r as usize]))
            }),
            Shape::Flat { energies, .. } => {
                let top = 1usize << (usize::BITS - 1 - x.leading_zeros());
                let rest = x ^ top;
                let mut sub = rest;
                loop {
                    let c = top | sub;
                    a = S::plus(a, S::times(energies[c], out[x ^ c]));
                    if sub == 0 {
                        break;
                    }
                    sub = (sub - 1) & rest;
                }
            }
            Shape::Outside { weights, .. } => {
                let mut y = x;
                while y != 0 {
                    a = S::plus(a, S::times(out[x ^ y], weights[y]));
                    y = (y - 1) & x;
                }
            }
        }
        raw[x] = a;
        out[x] = finish(x as Mask, a, term(bp, x, flip), term(bc, x, flip));
    }
}

/// [`block`] on one vector path.
#[inline]
fn run_block<S: Semiring, F: Fn(Mask, f64, f64, f64) -> f64>(
    path: KernelPath,
    job: &BlockJob<'_, F>,
    high: usize,
    out: &mut [f64],
    raw: &mut [f64],
) {
    match path {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `pass` runs `Avx2` only when the CPU reports AVX2, the one
        // feature `block_avx2` is compiled for.
        KernelPath::Avx2 => unsafe { block_avx2::<S, F>(job, high, out, raw) },
        _ => block::<S, Plain, F>(job, high, out, raw),
    }
}

/// [`block`] with the AVX2 lanes, compiled for AVX2.
///
/// # Safety
///
/// The CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn block_avx2<S: Semiring, F: Fn(Mask, f64, f64, f64) -> f64>(
    job: &BlockJob<'_, F>,
    high: usize,
    out: &mut [f64],
    raw: &mut [f64],
) {
    block::<S, avx2::Avx2, F>(job, high, out, raw)
}

/// Blocks per parallel batch (each batch is followed by a progress report).
const BATCH_BLOCKS: usize = 256;

/// Where a pass keeps its finished levels (`checkpoint.rs`): its checkpoint,
/// and the entries its `keep` writes besides the table, `side[s ^ flip]`
/// for the pass's subset `s`. They are saved with each level and restored
/// with it, since `keep` is not asked again for a level read back.
pub(crate) struct Levels<'a> {
    ck: PassCheckpoint,
    side: Option<(&'a [Cell<f64>], usize)>,
}

impl Levels<'_> {
    /// Values per subset in a level's file.
    fn columns(&self) -> usize {
        1 + usize::from(self.side.is_some())
    }
}

/// Runs one pass over the whole table in semiring `S`: `finish(s, acc, P(s),
/// C(s))` makes the entry of subset `s` from its accumulated splits (the zero
/// for a single point) and its `terms` (0 without; those of the complement
/// `X ∖ s` for [`Shape::Outside`]) and `keep(s, acc, value)` sees every
/// entry once, in block order;
/// it returns false to stop the pass (the result is then `Ok(false)`).
/// Advances `ticker` by the splits done.
// The pass's inputs are independent choices of each caller (shape, terms,
// checkpoint, finish, keep): bundling them would only move the list.
#[allow(clippy::too_many_arguments)]
fn pass<S: Semiring, F, K>(
    n: usize,
    bits: usize,
    path: KernelPath,
    shape: Shape<'_>,
    terms: Option<Terms<'_>>,
    checkpoint: Option<Levels<'_>>,
    finish: &F,
    mut keep: K,
    ticker: &mut Ticker<'_>,
) -> Result<(Vec<f64>, bool)>
where
    F: Fn(Mask, f64, f64, f64) -> f64 + Sync,
    K: FnMut(Mask, f64, f64) -> bool,
{
    // The feature-enabled copies run only where the CPU has the feature.
    let path = if path.available() {
        path
    } else {
        KernelPath::Portable
    };
    let size = 1usize << bits;
    let highs = n - bits;
    let mut table = vec![S::ZERO; 1usize << n];
    let mut raw = vec![S::ZERO; size];
    // The outside pass's cells are complements: their terms are the
    // clusters'.
    let flip = match shape {
        Shape::Outside { .. } => (1usize << n) - 1,
        _ => 0,
    };
    block_zero::<S, F>(
        bits,
        terms,
        flip,
        finish,
        shape,
        &mut table[..size],
        &mut raw,
    );
    let first = match shape {
        Shape::Tree => 1,
        Shape::Flat { .. } | Shape::Outside { .. } => 0,
    };
    for x in first..size {
        if !keep(x as Mask, raw[x], table[x]) {
            return Ok((table, false));
        }
    }
    // Terms of block 0, and of each block of high popcount p.
    let three = 3u64.pow(bits as u32);
    let (work_zero, work_of) = match shape {
        Shape::Tree => (
            total_splits(bits) as u64,
            // 2^(p-1) 3^bits - 2^bits splits.
            (|p: usize, three: u64, size: u64| (1u64 << (p - 1)) * three - size)
                as fn(usize, u64, u64) -> u64,
        ),
        Shape::Flat { .. } => (
            (three - 1) / 2,
            (|p: usize, three: u64, _: u64| (1u64 << (p - 1)) * three)
                as fn(usize, u64, u64) -> u64,
        ),
        // 2^p 3^bits - 2^bits terms (2^p - 1 cross pairs and the in-block ones).
        Shape::Outside { .. } => (
            three - size as u64,
            (|p: usize, three: u64, size: u64| (1u64 << p) * three - size)
                as fn(usize, u64, u64) -> u64,
        ),
    };
    // The outside pass's cell of the whole set (an empty cluster) is not
    // a term of the outside recursion: its `2^n - 1` terms are not counted.
    let uncounted = match shape {
        Shape::Outside { .. } => (1u64 << n) - 1,
        _ => 0,
    };
    let work_zero = if highs == 0 {
        work_zero - uncounted
    } else {
        work_zero
    };
    ticker.advance(work_zero)?;
    let mut batch: Vec<usize> = Vec::with_capacity(BATCH_BLOCKS);
    let mut results: Vec<(Vec<f64>, Vec<f64>)> = Vec::new();
    for p in 1..=highs {
        let work = work_of(p, three, size as u64) - if p == highs { uncounted } else { 0 };
        let mut flush = |batch: &mut Vec<usize>, table: &mut Vec<f64>| -> Result<bool> {
            {
                let job = BlockJob {
                    bits,
                    terms,
                    flip,
                    table: &table[..],
                    finish,
                    shape,
                };
                par::map_into(
                    &batch[..],
                    batch.len() > 1,
                    |high| {
                        let (mut out, mut raw) = (vec![0.0; size], vec![0.0; size]);
                        run_block::<S, F>(path, &job, high, &mut out, &mut raw);
                        (out, raw)
                    },
                    &mut results,
                );
            }
            for (&high, (out, raw)) in batch.iter().zip(results.drain(..)) {
                table[high << bits..(high + 1) << bits].copy_from_slice(&out);
                for x in 0..size {
                    if !keep(((high << bits) | x) as Mask, raw[x], out[x]) {
                        return Ok(false);
                    }
                }
            }
            ticker.advance(work * batch.len() as u64)?;
            batch.clear();
            Ok(true)
        };
        // High parts of popcount p in increasing order (Gosper's hack).
        let mut level = Vec::new();
        let mut high: u64 = (1u64 << p) - 1;
        while high < 1u64 << highs {
            level.push(high as usize);
            let c = high & high.wrapping_neg();
            let r = high + c;
            high = (((r ^ high) >> 2) / c) | r;
        }
        // A level read from a checkpoint passed `keep` when it was made
        // (it is saved only then), and `keep` of a checkpointed pass has
        // no side effects: it is not asked again.
        if let Some(l) = &checkpoint {
            let loaded = l.ck.load(p, &level, l.columns(), |column, i, v| {
                match (column, l.side) {
                    (0, _) => table[i] = v,
                    (_, Some((side, flip))) => side[i ^ flip].set(v),
                    _ => unreachable!("one column without a side table"),
                }
            })?;
            if loaded {
                ticker.resume(work * level.len() as u64)?;
                continue;
            }
        }
        for chunk in level.chunks(BATCH_BLOCKS) {
            batch.extend_from_slice(chunk);
            if !flush(&mut batch, &mut table)? {
                return Ok((table, false));
            }
        }
        if let Some(l) = &checkpoint {
            l.ck.save(p, &level, l.columns(), |column, i| match (column, l.side) {
                (0, _) => table[i],
                (_, Some((side, flip))) => side[i ^ flip].get(),
                _ => unreachable!("one column without a side table"),
            })?;
        }
    }
    Ok((table, true))
}

/// The checkpoint run of the single passes over `terms` in `dir`, when
/// there is a directory: fingerprinted by the `n × n` pairs when the terms
/// are rebuilt from them, else by the tables, bit for bit (a model under
/// triplets), as the full trellis's run ([`run_of_tables`]) is, so that
/// the single passes and the full trellis of one input share a directory.
pub(crate) fn run_of(dir: Option<&Path>, terms: Terms<'_>, n: usize) -> Result<Option<Run>> {
    match (dir, terms) {
        (None, _) => Ok(None),
        (Some(dir), Terms::Pairs { factor, blocks }) => {
            Run::of_pairs(dir, factor, blocks, n, block_bits(n)).map(Some)
        }
        (Some(dir), Terms::Tables(sep)) => run_of_tables(dir, sep, None, n).map(Some),
    }
}

/// The checkpoint run of the full trellis's passes over the tables `sep`
/// in `dir`: the run of the pair form when the model has one (`pairs`, so
/// that `logz`, `map` and the full trellis of one input share a directory
/// and the levels of their common passes), else of the tables, bit for bit.
pub(crate) fn run_of_tables(
    dir: &Path,
    sep: SeparableTables<'_>,
    pairs: Option<&PairBlocks>,
    n: usize,
) -> Result<Run> {
    let factor = sep.factors[1];
    match pairs {
        Some(blocks) => Run::of_pairs(dir, factor, blocks, n, block_bits(n)),
        None => Run::of_tables(dir, factor, sep.parent, sep.child, n, block_bits(n)),
    }
}

/// The levels of pass `pass` of `run`, with `side` (see [`Levels`]).
fn levels<'a>(
    run: Option<&Run>,
    pass: &str,
    side: Option<(&'a [Cell<f64>], usize)>,
) -> Option<Levels<'a>> {
    run.map(|r| Levels {
        ck: r.pass(pass),
        side,
    })
}

/// The MAP keys `K(S)` of every subset (see the module docs), and with `map`
/// given, `log M(S) = f P(S) + max_L [K(L) + K(S∖L)]` stored in it (the same
/// floating-point values the level-order kernel computes).
///
/// `map` needs [`Terms::Tables`] (the full inside pass has them).
///
/// With `run`, the pass keeps its finished levels (and those of `map`) in
/// its directory and resumes from them (`checkpoint.rs`).
pub(crate) fn keys(
    n: usize,
    terms: Terms<'_>,
    path: KernelPath,
    map: Option<&mut [f64]>,
    run: Option<&Run>,
    ticker: &mut Ticker<'_>,
) -> Result<Vec<f64>> {
    let f = terms.factor();
    let finish = |s: Mask, acc: f64, p: f64, c: f64| {
        if s.is_power_of_two() {
            f * c
        } else {
            f * c + (f * p + acc)
        }
    };
    let parent = match (&map, terms) {
        (None, _) => None,
        (Some(_), Terms::Tables(sep)) => Some(sep.parent),
        (Some(_), Terms::Pairs { .. }) => unreachable!("the MAP values are kept with tables"),
    };
    let map = map.map(|m| Cell::from_mut(m).as_slice_of_cells());
    let keep = |s: Mask, acc: f64, _: f64| {
        if let (Some(map), Some(parent)) = (map, parent) {
            let s = s as usize;
            map[s].set(if s.is_power_of_two() {
                0.0
            } else {
                f * parent[s] + acc
            });
        }
        true
    };
    let name = if map.is_some() { "keys+map" } else { "keys" };
    let (table, _) = pass::<MaxPlus, _, _>(
        n,
        block_bits(n),
        path,
        Shape::Tree,
        Some(terms),
        levels(run, name, map.map(|m| (m, 0))),
        &finish,
        keep,
        ticker,
    )?;
    Ok(table)
}

/// The affine scale `log G(S) = log g(S) - (a|S| + b)` of the weight pass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Scale {
    pub a: f64,
    pub b: f64,
}

impl Scale {
    /// The scale that centres the per-size ranges `[lo[k], hi[k]]` (`k =
    /// 1..=n`, index 0 unused) of `log g`, with the slope minimising the
    /// spread (a convex function of it: ternary search); `None` when the
    /// spread is too wide for the weight pass.
    pub fn fit(lo: &[f64], hi: &[f64]) -> Option<Scale> {
        // The sizes present (an empty size class has lo = +∞).
        let sizes: Vec<usize> = (0..lo.len()).filter(|&k| lo[k] <= hi[k]).collect();
        let &first = sizes.first()?;
        if sizes
            .iter()
            .any(|&k| !(lo[k].is_finite() && hi[k].is_finite()))
        {
            return None;
        }
        let spread = |a: f64| {
            let (mut top, mut bottom) = (f64::NEG_INFINITY, f64::INFINITY);
            for &k in &sizes {
                top = top.max(hi[k] - a * k as f64);
                bottom = bottom.min(lo[k] - a * k as f64);
            }
            (top - bottom, (top + bottom) / 2.0)
        };
        // The best slope lies between the slopes from the first size's centre.
        let (mut x0, mut x1) = (0.0f64, 0.0f64);
        let centre = (lo[first] + hi[first]) / 2.0;
        for &k in &sizes[1..] {
            for v in [lo[k], hi[k]] {
                let s = (v - centre) / (k - first) as f64;
                x0 = x0.min(s);
                x1 = x1.max(s);
            }
        }
        for _ in 0..200 {
            let m0 = x0 + (x1 - x0) / 3.0;
            let m1 = x1 - (x1 - x0) / 3.0;
            if spread(m0).0 <= spread(m1).0 {
                x1 = m1;
            } else {
                x0 = m0;
            }
        }
        // Whole powers of two: `e^(a|S| + b) = 2^(α|S| + β)` is then exact,
        // so a weight times it is a scaled number with no rounding.
        let ln2 = std::f64::consts::LN_2;
        let a = ((x0 + x1) / 2.0 / ln2).round() * ln2;
        let (width, centre) = spread(a);
        let b = (centre / ln2).round() * ln2;
        (width.is_finite() && width <= FIT_WIDTH).then_some(Scale { a, b })
    }

    /// The name of pass `pass` at this scale (its checkpoint files'), the
    /// scale bit for bit.
    fn name(&self, pass: &str) -> String {
        format!("{pass}-a{}-b{}", self.a.to_bits(), self.b.to_bits())
    }

    /// `(α, β)` with `a = α ln 2`, `b = β ln 2`.
    pub fn exponents(&self) -> (i32, i32) {
        let ln2 = std::f64::consts::LN_2;
        ((self.a / ln2).round() as i32, (self.b / ln2).round() as i32)
    }

    /// The fit from the MAP keys of every subset: `log Z(S) = K(S) + r(S)`
    /// (up to a term the caller knows), `0 ≤ r(S) ≤ slack(|S|)` (the log of
    /// the number of trees or partitions). Subsets whose key is the zero of
    /// the max-plus pass (the empty set of the hierarchical trellis) are
    /// left out.
    pub fn from_keys(n: usize, keys: &[f64], slack: fn(usize) -> f64) -> Option<Scale> {
        let (lo, hi) = par::fold_range(
            keys.len(),
            || (vec![f64::INFINITY; n + 1], vec![f64::NEG_INFINITY; n + 1]),
            |(mut lo, mut hi), s| {
                let k = (s as Mask).count_ones() as usize;
                if keys[s] != MaxPlus::ZERO {
                    lo[k] = lo[k].min(keys[s]);
                    hi[k] = hi[k].max(keys[s]);
                }
                (lo, hi)
            },
            |(mut lo, mut hi), (lo2, hi2)| {
                for k in 0..=n {
                    lo[k] = lo[k].min(lo2[k]);
                    hi[k] = hi[k].max(hi2[k]);
                }
                (lo, hi)
            },
        );
        let hi: Vec<f64> = (0..=n).map(|k| hi[k] + slack(k)).collect();
        Scale::fit(&lo, &hi)
    }
}

/// `ln((2k-3)!!)`, the log of the number of trees over `k` points (0 for `k ≤ 2`).
pub(crate) fn log_double_factorial(k: usize) -> f64 {
    (2..k).map(|j| ((2 * j - 1) as f64).ln()).sum()
}

/// The weights `G(S)` of every subset at `scale` (see the module docs), or
/// `None` when an entry leaves `[2^-480, 2^480]`.
pub(crate) fn weights(
    n: usize,
    terms: Terms<'_>,
    scale: Scale,
    path: KernelPath,
    run: Option<&Run>,
    ticker: &mut Ticker<'_>,
) -> Result<Option<Vec<f64>>> {
    let f = terms.factor();
    let Scale { a, b } = scale;
    // An entry outside the window is marked NaN and stops the pass. A zero
    // is exact when the cluster is forbidden (its own term is `e^{-∞}`, see
    // `constraints.rs`) or no split of it is allowed (`acc` sums products
    // of entries in the window, which cannot underflow).
    let finish = |s: Mask, acc: f64, p: f64, c: f64| {
        let v = if s.is_power_of_two() {
            mul_exp(1.0, f * c - a - b)
        } else {
            mul_exp(acc, f * (c + p) + b)
        };
        if in_window(v) || (v == 0.0 && (acc == 0.0 || f * (c + p) == f64::NEG_INFINITY)) {
            v
        } else {
            f64::NAN
        }
    };
    let keep = |_: Mask, _: f64, v: f64| !v.is_nan();
    let (table, ok) = pass::<SumProduct, _, _>(
        n,
        block_bits(n),
        path,
        Shape::Tree,
        Some(terms),
        levels(run, &scale.name("weights"), None),
        &finish,
        keep,
        ticker,
    )?;
    Ok(ok.then_some(table))
}

/// Whether `v` lies in the weight pass's window `[2^-480, 2^480]`.
#[inline]
fn in_window(v: f64) -> bool {
    (G_MIN..=G_MAX).contains(&v)
}

/// The outside pass on the weights `G` of the inside pass at `scale`:
/// `log P(S)` of every cluster by mask (`-∞` for the empty set, 0 for the
/// whole set and the single points), or `None` when an entry leaves its
/// window (below).
///
/// With `F(S) = P(S) / G(S)` (so `F(X) = 1 / G(X)`) the outside recursion
/// of `outside.rs` becomes, in the scale of the inside pass,
///
/// ```text
/// F(S) = Σ_{R ⊆ X∖S, R ≠ ∅}  H(S ∪ R) · G(R),    H(U) = F(U) · e^{f·(C(U) + P(U)) + b},
/// ```
///
/// (`H(U)` is the parent's own term, the same factor the inside pass puts
/// on `G(U)`), and over complements `T = X ∖ S` it is the subset
/// convolution `F(X ∖ T) = Σ_{R ⊆ T, R ≠ ∅} H(X ∖ (T ∖ R)) · G(R)`: the
/// recurrence of the inside pass with the table `H` (by complements) on
/// the left and the finished `G` on the right, [`Shape::Outside`]. The
/// terms `P`, `C` of each block are those of `terms`, rebuilt block by
/// block for a pair-form model (`pairs.rs`), so the pass holds two 8-byte
/// entries per subset: `G` and `H`. Once it is done, `H` is turned into
/// `log P` in place: `P(S) = F(S) · G(S)` with `F(S) = H(S) e^{-own(S)}`
/// (two roundings more than taking `F` before its factor: a few ulps).
///
/// Every term `H · G` must be a normal number (full relative precision)
/// and no sum may overflow. `G` lies in the window `[2^-480, 2^480]`; `H`
/// need only stay in the window those bounds leave it given the extremes
/// `G_lo`, `G_hi` of this run's nonzero `G`: `[2^-960 / G_lo, 2^960 /
/// G_hi]` (`OutsideWindow`), which is `[2^-480, 2^480]` when `G` spans its
/// whole window and up to `2^480` times wider at each end otherwise. The
/// wider window is what keeps constrained runs here: under triplets,
/// clusters of vanishing marginal make `H` tiny while `G` stays far from
/// its bounds (18 points at β = 16 gave `H = 2^-489`).
///
/// The recursion is linear in `F`, so the pass starts from `2^k F(X)` and
/// computes `2^k H` throughout, `k` chosen to put the bound `H(U) ≤
/// e^{own(U)} / G(U)` (from `P(U) ≤ 1`; equality at the root) at the
/// window's top: the whole window then lies below the largest entry, which
/// keeps the tiny entries of large β in it (13 points under triplets: up
/// to β = 6 instead of 4). `P(S) = 2^-k F(S) · G(S)` is taken as `ln F +
/// ln G - k ln 2` when the product would leave the normal numbers, so it
/// keeps full relative precision too.
///
/// With `run`, the pass keeps its finished levels in its directory and
/// resumes from them (`checkpoint.rs`).
pub(crate) fn outside(
    n: usize,
    terms: Terms<'_>,
    weights: &[f64],
    scale: Scale,
    path: KernelPath,
    run: Option<&Run>,
    ticker: &mut Ticker<'_>,
) -> Result<Option<Vec<f64>>> {
    let full = (1usize << n) - 1;
    let f = terms.factor();
    let b = scale.b;
    let own_of = move |p: f64, c: f64| f * (c + p) + b;
    let own = |u: usize| {
        let (p, c) = terms.at(u as Mask);
        own_of(p, c)
    };
    let window = OutsideWindow::of(&weights[1..full]);
    // The recursion is linear in `F`: starting it from `2^k F(X)` gives
    // `2^k H` everywhere. `k` places the largest `H` the bound allows at the
    // top of the window, so its whole width is left below for the smallest.
    let k = window.shift(largest_outside_log2(n, terms, weights, &own_of));
    let root = ldexp(mul_exp(1.0 / weights[full], own(full)), k);
    if !window.holds(root) {
        return Ok(None);
    }
    // `p`, `c` are the terms of the cluster `X ∖ t` (the pass's flip).
    let finish = |_: Mask, acc: f64, p: f64, c: f64| mul_exp(acc, own_of(p, c));
    let keep = |t: Mask, acc: f64, h: f64| {
        let s = full ^ t as usize;
        if s == 0 || s == full {
            return true;
        }
        // `H` of a single point is never a parent's term. Zeros are exact:
        // `F(S) = 0` for a cluster in no tree of positive weight, `H(S) = 0`
        // for a forbidden one (see [`weights`]).
        let h_ok = s.is_power_of_two()
            || window.holds(h)
            || (h == 0.0 && (acc == 0.0 || own(s) == f64::NEG_INFINITY));
        // `acc` is a sum of normal terms below `2^990`, or 0.
        (acc == 0.0 || (f64::MIN_POSITIVE..=G_MAX * G_MAX).contains(&acc)) && h_ok
    };
    let shape = Shape::Outside { weights, root };
    // A shift is part of what the saved levels mean.
    let name = match k {
        0 => scale.name("outside-h"),
        k => format!("{}-k{k}", scale.name("outside-h")),
    };
    let bits = block_bits(n);
    let (mut table, ok) = pass::<SumProduct, _, _>(
        n,
        bits,
        path,
        shape,
        Some(terms),
        levels(run, &name, None),
        &finish,
        keep,
        ticker,
    )?;
    if !ok {
        return Ok(None);
    }
    // `H` by complements into `log P` by clusters: block `h` of the table
    // holds the clusters of block `h ^ highs`, in reverse order.
    let unshift = f64::from(k) * std::f64::consts::LN_2;
    let size = 1usize << bits;
    let highs = full >> bits;
    par::update_chunks(&mut table, size, |ht, block| {
        let mut scratch = [Vec::new(), Vec::new()];
        let hs = ht ^ highs;
        let (bp, bc) = terms.block(hs, bits, &mut scratch);
        // Swap the block's entries into cluster order, then convert each.
        block.reverse();
        for (x, v) in block.iter_mut().enumerate() {
            let s = (hs << bits) | x;
            *v = log_p_of(s, full, *v, own_of(bp[x], bc[x]), weights[s], unshift);
        }
    });
    // The table is by clusters now: swap the blocks into place.
    let blocks = 1usize << (n - bits);
    for ht in 0..blocks / 2 {
        let hs = ht ^ highs;
        let (lo, hi) = table.split_at_mut(hs << bits);
        lo[ht << bits..(ht + 1) << bits].swap_with_slice(&mut hi[..size]);
    }
    Ok(Some(table))
}

/// `log P(S)` of cluster `s` from its outside entry `h = 2^k H(S)`, its own
/// term `own = ln(H(S) / F(S))` and its weight `g = G(S)`, with `unshift =
/// k ln 2` (see [`outside`]).
fn log_p_of(s: usize, full: usize, h: f64, own: f64, g: f64, unshift: f64) -> f64 {
    if s == 0 {
        return f64::NEG_INFINITY;
    }
    // Every tree holds the whole set and each point.
    if s == full || s.is_power_of_two() {
        return 0.0;
    }
    if h == 0.0 || g == 0.0 {
        return f64::NEG_INFINITY;
    }
    let f = mul_exp(h, -own);
    let p = f * g;
    // A product that underflows (to a subnormal or to 0) is taken in logs.
    let log = if p >= f64::MIN_POSITIVE {
        p.ln() - unshift
    } else {
        f.ln() + g.ln() - unshift
    };
    log.min(0.0)
}

/// The window of the outside pass's table `H`: every product `H · G(R)` of
/// an entry in it with a nonzero weight of the inside pass lies in `[2^-960,
/// 2^960]`, so that it is a normal number and a sum of up to `2^30` of them
/// stays below `2^990`.
#[derive(Clone, Copy, Debug)]
struct OutsideWindow {
    lo: f64,
    hi: f64,
}

impl OutsideWindow {
    /// The window for the weights `G` (zeros, the forbidden clusters', are
    /// skipped); every weight lies in `[2^-480, 2^480]`, so the window holds
    /// `[2^-480, 2^480]`.
    fn of(weights: &[f64]) -> OutsideWindow {
        let (mut g_lo, mut g_hi) = (G_MAX, G_MIN);
        for &g in weights {
            if g != 0.0 {
                g_lo = g_lo.min(g);
                g_hi = g_hi.max(g);
            }
        }
        OutsideWindow {
            lo: G_MIN * G_MIN / g_lo.clamp(G_MIN, G_MAX),
            hi: G_MAX * G_MAX / g_hi.clamp(G_MIN, G_MAX),
        }
    }

    /// Whether `h` lies in the window.
    #[inline]
    fn holds(&self, h: f64) -> bool {
        (self.lo..=self.hi).contains(&h)
    }

    /// The power of two `k` that moves a table whose entries are at most
    /// `2^top` to the top of the window (down when `top` is above it), so
    /// that its smallest entries have the most room; 0 when the bound is
    /// not a number.
    fn shift(&self, top: f64) -> i32 {
        if !top.is_finite() {
            return 0;
        }
        (self.hi.log2() - top).floor().clamp(-1000.0, 1000.0) as i32
    }
}

/// A bound on `log2 H(U)` over every parent `U` (`|U| ≥ 2`, `G(U) ≠ 0`):
/// `H(U) = F(U) e^{own(U)} = P(U) e^{own(U)} / G(U)` and `P(U) ≤ 1`, so
/// `H(U) ≤ e^{own(U)} / G(U)`, with equality at the root; `own(P(U),
/// C(U))`. `O(2^n)` logs, block by block, against the pass's `O(3^n)`
/// terms.
fn largest_outside_log2(
    n: usize,
    terms: Terms<'_>,
    weights: &[f64],
    own: &(dyn Fn(f64, f64) -> f64 + Sync),
) -> f64 {
    let bits = block_bits(n);
    let largest = par::fold_range(
        1usize << (n - bits),
        || (f64::NEG_INFINITY, [Vec::new(), Vec::new()]),
        |(mut m, mut scratch), high| {
            let (bp, bc) = terms.block(high, bits, &mut scratch);
            for x in 0..1usize << bits {
                let u = (high << bits) | x;
                if !(u.is_power_of_two() || u == 0 || weights[u] == 0.0) {
                    m = m.max(own(bp[x], bc[x]) - weights[u].ln());
                }
            }
            (m, scratch)
        },
        |a, b| (a.0.max(b.0), a.1),
    );
    largest.0 / std::f64::consts::LN_2
}

/// The flat trellis's MAP values `log M(S)` of every subset (`log M(∅) =
/// 0`) from `log E` of every cluster: `M(S) = max_{C ∋ top(S)} E(C) M(S ∖ C)`
/// with `top(S)` the highest point of `S`.
///
/// With `run`, the pass keeps its finished levels in its directory and
/// resumes from them (`checkpoint.rs`).
pub(crate) fn flat_keys(
    n: usize,
    log_energies: &[f64],
    path: KernelPath,
    run: Option<&Run>,
    ticker: &mut Ticker<'_>,
) -> Result<Vec<f64>> {
    let shape = Shape::Flat {
        energies: log_energies,
        empty: 0.0,
    };
    let finish = |_: Mask, acc: f64, _: f64, _: f64| acc;
    let keep = |_: Mask, _: f64, _: f64| true;
    Ok(pass::<MaxPlus, _, _>(
        n,
        block_bits(n),
        path,
        shape,
        None,
        levels(run, "flat-keys", None),
        &finish,
        keep,
        ticker,
    )?
    .0)
}

/// The flat trellis's weights `Z(S) e^{-(a|S| + b)}` of every subset from
/// the scaled energies `E(C) e^{-a|C|}`, or `None` when an entry leaves
/// `[2^-480, 2^480]` (see the module docs). With `run`, checkpointed as
/// [`flat_keys`].
pub(crate) fn flat_weights(
    n: usize,
    scaled_energies: &[f64],
    scale: Scale,
    path: KernelPath,
    run: Option<&Run>,
    ticker: &mut Ticker<'_>,
) -> Result<Option<Vec<f64>>> {
    let shape = Shape::Flat {
        energies: scaled_energies,
        empty: ldexp(1.0, -scale.exponents().1),
    };
    let finish = |_: Mask, acc: f64, _: f64, _: f64| acc;
    let keep = |_: Mask, _: f64, v: f64| in_window(v);
    let (table, ok) = pass::<SumProduct, _, _>(
        n,
        block_bits(n),
        path,
        shape,
        None,
        levels(run, &scale.name("flat-weights"), None),
        &finish,
        keep,
        ticker,
    )?;
    Ok(ok.then_some(table))
}

/// `m · e^x` with no intermediate overflow or subnormal: the factor `e^x`
/// alone may leave the range of normal numbers (a weight of −165 at β = 3
/// gives `e^-990` beside a product of `e^+495`s) while the result lies in
/// the window, and a subnormal factor would keep only a few bits. `e^x =
/// e^r · 2^k` with `|r| ≤ ln 2 / 2`, and `2^k` applied exactly by [`ldexp`].
#[inline]
fn mul_exp(m: f64, x: f64) -> f64 {
    if x.abs() < 600.0 {
        return m * x.exp();
    }
    let ln2 = std::f64::consts::LN_2;
    let k = (x / ln2).round();
    if !k.is_finite() {
        return m * x.exp();
    }
    let r = x - k * ln2;
    ldexp(m * r.exp(), k.clamp(-1e5, 1e5) as i32)
}

/// `m · 2^e` without intermediate overflow (0 or `∞` beyond the range).
pub(crate) fn ldexp(m: f64, e: i32) -> f64 {
    let pow = |k: i32| f64::from_bits(((k.clamp(-1022, 1023) + 1023) as u64) << 52);
    let half = e / 2;
    m * pow(half) * pow(e - half)
}

/// Whether every scaled energy is finite and below `2^480`, so that no
/// product of the flat weight pass overflows.
pub(crate) fn energies_in_range(scaled_energies: &[f64]) -> bool {
    scaled_energies.iter().all(|&e| e <= G_MAX)
}

/// `log Z(S)` from the weight of `S` at `scale`.
#[inline]
pub(crate) fn log_z_of(weight: f64, s: Mask, f: f64, child: f64, scale: Scale) -> f64 {
    if weight == 0.0 {
        return f64::NEG_INFINITY;
    }
    weight.ln() + scale.a * s.count_ones() as f64 + scale.b - f * child
}

/// The left part of the best split of `s` (`|s| ≥ 2`) by `value(L, R)`: the
/// first maximum in the order of [`for_each_split`] (decreasing `L`), the
/// tie rule of the MAP pass.
pub(crate) fn best_split(s: Mask, value: impl Fn(Mask, Mask) -> f64) -> Mask {
    let mut best = f64::NEG_INFINITY;
    let mut arg = 0;
    for_each_split(s, |l, r| {
        let v = value(l, r);
        if v > best || arg == 0 {
            best = v;
            arg = l;
        }
    });
    arg
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The recurrence by the definition, one subset at a time.
    fn reference<S: Semiring>(
        n: usize,
        leaf: impl Fn(Mask) -> f64,
        own: impl Fn(Mask) -> f64,
    ) -> Vec<f64> {
        let mut t = vec![S::ZERO; 1 << n];
        for s in 1..(1u32 << n) {
            if s.is_power_of_two() {
                t[s as usize] = leaf(s);
                continue;
            }
            let mut a = S::ZERO;
            for_each_split(s, |l, r| {
                a = S::plus(a, S::times(t[l as usize], t[r as usize]))
            });
            t[s as usize] = S::times(own(s), a);
        }
        t
    }

    fn run<S: Semiring>(
        n: usize,
        bits: usize,
        path: KernelPath,
        finish: impl Fn(Mask, f64) -> f64 + Sync,
    ) -> Vec<f64> {
        run_shape::<S>(n, bits, path, Shape::Tree, finish)
    }

    fn run_shape<S: Semiring>(
        n: usize,
        bits: usize,
        path: KernelPath,
        shape: Shape<'_>,
        finish: impl Fn(Mask, f64) -> f64 + Sync,
    ) -> Vec<f64> {
        let options = crate::Options::default();
        let mut ticker = Ticker::new(&options, "test", 1).unwrap();
        let finish = |s: Mask, a: f64, _: f64, _: f64| finish(s, a);
        pass::<S, _, _>(
            n,
            bits,
            path,
            shape,
            None,
            None,
            &finish,
            |_, _, _| true,
            &mut ticker,
        )
        .unwrap()
        .0
    }

    fn value(s: Mask, salt: u32) -> f64 {
        let h = (s.wrapping_mul(0x9E37_79B9) ^ salt).wrapping_mul(0x85EB_CA6B);
        (h >> 8) as f64 / (1u32 << 24) as f64 - 0.5
    }

    /// Sum-product tables equal to rounding (1e-12 relative).
    fn sums_agree(got: &[f64], want: &[f64], what: &str) {
        for (s, (&g, &w)) in got.iter().zip(want).enumerate() {
            assert!(
                (g - w).abs() <= 1e-12 * w,
                "sum {what} entry {s}: {g} vs {w}"
            );
        }
    }

    #[test]
    fn every_block_width_and_path_matches_the_definition() {
        for n in 1..=11 {
            for bits in (3.min(n)..=n.min(8)).chain([block_bits(n)]) {
                let leaf = |s: Mask| value(s, 1);
                let own = |s: Mask| value(s, 2);
                let want_max = reference::<MaxPlus>(n, leaf, own);
                let want_sum = reference::<SumProduct>(n, |s| leaf(s).exp(), |s| own(s).exp());
                for path in KernelPath::ALL.into_iter().filter(|p| p.available()) {
                    let got = run::<MaxPlus>(n, bits, path, |s, a| {
                        if s.is_power_of_two() {
                            leaf(s)
                        } else {
                            own(s) + a
                        }
                    });
                    assert_eq!(got, want_max, "max n={n} bits={bits} {path}");
                    let got = run::<SumProduct>(n, bits, path, |s, a| {
                        if s.is_power_of_two() {
                            leaf(s).exp()
                        } else {
                            own(s).exp() * a
                        }
                    });
                    sums_agree(
                        &got[1..],
                        &want_sum[1..],
                        &format!("n={n} bits={bits} {path}"),
                    );
                }
            }
        }
    }

    /// The outside shape: `F(∅) = root`, `F(T) = own(T) ⊗ ⊕_{R ⊆ T, R ≠ ∅}
    /// F(T ∖ R) ⊗ W(R)`, one subset at a time, against every block width
    /// and path (max-plus exactly, sum-product to rounding).
    #[test]
    fn the_outside_shape_matches_its_definition() {
        fn reference<S: Semiring>(
            n: usize,
            root: f64,
            w: &[f64],
            own: impl Fn(Mask) -> f64,
        ) -> Vec<f64> {
            let mut t = vec![S::ZERO; 1 << n];
            t[0] = root;
            for x in 1..1usize << n {
                let mut a = S::ZERO;
                let mut y = x;
                while y != 0 {
                    a = S::plus(a, S::times(t[x ^ y], w[y]));
                    y = (y - 1) & x;
                }
                t[x] = S::times(own(x as Mask), a);
            }
            t
        }
        for n in 1..=11 {
            let logs: Vec<f64> = (0..1u32 << n).map(|s| value(s, 5)).collect();
            let exps: Vec<f64> = logs.iter().map(|v| v.exp()).collect();
            let own = |s: Mask| value(s, 6);
            let want_max = reference::<MaxPlus>(n, 0.25, &logs, own);
            let want_sum = reference::<SumProduct>(n, 1.5, &exps, |s| own(s).exp());
            for bits in (3.min(n)..=n.min(8)).chain([block_bits(n)]) {
                for path in KernelPath::ALL.into_iter().filter(|p| p.available()) {
                    let shape = Shape::Outside {
                        weights: &logs,
                        root: 0.25,
                    };
                    let got = run_shape::<MaxPlus>(n, bits, path, shape, |s, a| own(s) + a);
                    assert_eq!(got, want_max, "max n={n} bits={bits} {path}");
                    let shape = Shape::Outside {
                        weights: &exps,
                        root: 1.5,
                    };
                    let got =
                        run_shape::<SumProduct>(n, bits, path, shape, |s, a| own(s).exp() * a);
                    sums_agree(
                        &got,
                        &want_sum,
                        &format!("outside n={n} bits={bits} {path}"),
                    );
                }
            }
        }
    }

    /// The blocked outside pass gives the level-order kernel's marginals
    /// where it runs (moderate weights), and where its window does not hold
    /// the level-order kernel answers (`Trellis::marginals` falls back):
    /// both cases occur among these weights.
    #[test]
    fn the_blocked_outside_pass_gives_the_level_order_marginals() {
        use crate::{Hcc, Matrix, Trellis, Weights};
        let (mut ran_blocked, mut fell_back) = (0, 0);
        for n in [2, 5, 9, 13] {
            for amp in [2.0, 30.0, 60.0, 120.0] {
                let rows: Vec<Vec<f64>> = (0..n)
                    .map(|i| {
                        let v = |j: usize| amp * value((i * j + i + j) as Mask, 7);
                        (0..n).map(|j| if i == j { 0.0 } else { v(j) }).collect()
                    })
                    .collect();
                let w = Weights::from_matrix(&Matrix::from_rows(rows).unwrap()).unwrap();
                let t = Trellis::new(Hcc::new(&w, 1.5).unwrap()).unwrap();
                let inside = t.inside();
                let Some(scale) = inside.blocked_scale() else {
                    continue;
                };
                let sep = inside.potentials().scaled().unwrap();
                let (map, rel) = (inside.map_table(), inside.rel_table());
                let weights = crate::dense::outside::weights_of(sep, map, rel, scale);
                let options = crate::Options::default();
                let mut ticker = Ticker::new(&options, "test", 1).unwrap();
                let mut want = vec![f64::NEG_INFINITY; 1 << n];
                crate::dense::outside::outside_separable(n, sep, map, rel, &mut want, &mut ticker)
                    .unwrap();
                let public = t.marginals().unwrap();
                // The terms rebuilt block by block from the pairs.
                let pairs = crate::models::Model::separable(t.model())
                    .unwrap()
                    .pairs
                    .unwrap();
                let blocks = PairBlocks::new(&pairs, block_bits(n));
                let rebuilt = Terms::Pairs {
                    factor: sep.factors[1],
                    blocks: &blocks,
                };
                for path in KernelPath::ALL.into_iter().filter(|p| p.available()) {
                    let mut run = |terms| {
                        outside(n, terms, &weights, scale, path, None, &mut ticker).unwrap()
                    };
                    let tables = run(Terms::Tables(sep));
                    // Both ways of giving the terms form the same values.
                    let pairs = run(rebuilt);
                    assert_eq!(tables.is_some(), pairs.is_some(), "n={n} amp={amp}");
                    if let (Some(a), Some(b)) = (&tables, &pairs) {
                        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                        assert_eq!(bits(a), bits(b), "n={n} amp={amp} {path}");
                    }
                    let got = if let Some(got) = tables {
                        ran_blocked += 1;
                        assert_eq!(got[0], f64::NEG_INFINITY);
                        assert_eq!(got[(1 << n) - 1], 0.0);
                        got
                    } else {
                        fell_back += 1;
                        (0..1 << n).map(|s| public.log_p(s as Mask)).collect()
                    };
                    for s in 1..(1usize << n) - 1 {
                        assert!(
                            (got[s] - want[s]).abs() <= 1e-12 * (1.0 + want[s].abs()),
                            "n={n} amp={amp} {path} S={s:b}: {} vs {}",
                            got[s],
                            want[s]
                        );
                    }
                }
            }
        }
        assert!(
            ran_blocked > 0 && fell_back > 0,
            "{ran_blocked} blocked, {fell_back} fell back"
        );
    }

    #[test]
    fn every_path_gives_the_same_bits() {
        let n = 13;
        let finish = |s: Mask, a: f64| {
            if s.is_power_of_two() {
                value(s, 3).exp()
            } else {
                value(s, 4).exp() * a * 0.25
            }
        };
        let portable = run::<SumProduct>(n, block_bits(n), KernelPath::Portable, finish);
        for path in KernelPath::ALL.into_iter().filter(|p| p.available()) {
            assert_eq!(
                run::<SumProduct>(n, block_bits(n), path, finish),
                portable,
                "{path}"
            );
        }
    }

    #[test]
    fn the_fit_centres_and_refuses_wide_spreads() {
        // log g = 3k ± 10 at every size: slope 3, spread 20.
        let lo: Vec<f64> = (0..=10).map(|k| 3.0 * k as f64 - 10.0).collect();
        let hi: Vec<f64> = (0..=10).map(|k| 3.0 * k as f64 + 10.0).collect();
        // Size 0 absent (as in the hierarchical trellis) or present: the same fit.
        let (mut lo0, mut hi0) = (lo.clone(), hi.clone());
        (lo0[0], hi0[0]) = (f64::INFINITY, f64::NEG_INFINITY);
        let s0 = Scale::fit(&lo0, &hi0).unwrap();
        // Slope and offset in whole multiples of ln 2 (see `fit`): the slope
        // 3 rounds to 4 ln 2, leaving residuals from -10 to 12.27 (centre
        // 1.13, or 1.25 without size 0), which round to 2 ln 2.
        assert_eq!(s0.exponents(), (4, 2), "{s0:?}");
        let s = Scale::fit(&lo, &hi).unwrap();
        assert_eq!(s.exponents(), (4, 2), "{s:?}");
        let hi: Vec<f64> = (0..=10).map(|k| 3.0 * k as f64 + 700.0).collect();
        assert_eq!(Scale::fit(&lo, &hi), None);
    }

    #[test]
    fn window_bounds_are_powers_of_two() {
        assert_eq!(G_MIN, 2f64.powi(-480));
        assert_eq!(G_MAX, 2f64.powi(480));
    }
}
