//! Exact samples from the posterior over trees (trellis paper, Algorithm 2).
//!
//! Top-down: the root cluster `S = X` is split into `{L, S∖L}` with probability
//!
//! ```text
//! p(L | S) = ψ(L, S∖L) · Z(L) · Z(S∖L) / Z(S),
//! ```
//!
//! and both parts are split the same way until singletons remain. The product
//! of these probabilities telescopes to `φ(H) / Z(X)` (paper, Appendix A.2), so
//! the trees are exact samples of `P(H | X)`, without enumerating trees.
//!
//! A draw at cluster `S` scans its `2^(|S|-1) - 1` splits. A [`Sampler`]
//! remembers the cumulative distribution of large clusters (up to a memory
//! budget), so repeated draws at the root and at other frequently visited
//! clusters cost a binary search: `K` samples reuse the trellis tables and
//! these distributions.

use std::collections::HashMap;
use std::sync::Arc;

use rand::{Rng, RngExt};

use crate::base::run::{Options, Ticker};
use crate::base::set::{Mask, for_each_split, lowest};
use crate::base::tree::Tree;
use crate::dense::{Inside, Trellis, WeightTable};
use crate::error::Result;
use crate::models::Model;

/// Clusters at least this large get their split distribution cached.
const CACHE_MIN_SIZE: u32 = 9;

/// Default cache budget: this many `f64` entries (128 MiB).
const DEFAULT_BUDGET: usize = 1 << 24;

/// The most the default cache holds when sampling over `n` points, in
/// bytes: `2^(k-1) - 1` entries for each cluster of `k ≥ CACHE_MIN_SIZE`
/// points a draw passes through, up to the budget (the planner counts it).
pub(crate) fn cache_bytes(n: usize) -> u64 {
    let (mut entries, mut choose) = (0.0f64, 1.0f64);
    for k in 1..=n {
        choose = choose * (n + 1 - k) as f64 / k as f64;
        if k >= CACHE_MIN_SIZE as usize {
            entries += choose * (2f64.powi(k as i32 - 1) - 1.0);
        }
    }
    (entries.min(DEFAULT_BUDGET as f64) * 8.0) as u64
}

/// Draws exact posterior samples from a [`Trellis`], caching the split
/// distributions of large clusters between draws. It shares the trellis's
/// tables, so it can outlive it.
pub struct Sampler<M: Model> {
    inside: Arc<Inside<M>>,
    cache: SplitCache,
}

/// The split distributions (cumulative weights) of clusters of at least
/// [`CACHE_MIN_SIZE`] points, kept while the budget of entries lasts.
struct SplitCache {
    cdfs: HashMap<Mask, Vec<f64>>,
    budget: usize,
}

impl<M: Model> std::fmt::Debug for Sampler<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sampler")
            .field("cached_clusters", &self.cache.cdfs.len())
            .finish_non_exhaustive()
    }
}

impl<M: Model> Trellis<M> {
    /// A sampler over this trellis (reuse it for many draws).
    pub fn sampler(&self) -> Sampler<M> {
        Sampler {
            inside: Arc::clone(self.inside()),
            cache: SplitCache::new(),
        }
    }

    /// `k` exact samples from `P(H | X)`, reproducible from `seed`
    /// (see [`crate::random`]).
    pub fn samples(&self, k: usize, seed: u64) -> Vec<Tree> {
        let mut rng = crate::random::rng(seed);
        let mut sampler = self.sampler();
        (0..k).map(|_| sampler.sample(&mut rng)).collect()
    }

    /// [`Trellis::samples`], delivering each sample to `each` as it is drawn
    /// (so many samples need not be held in memory), with a time limit and a
    /// progress callback (stage `"sample"`, counting samples; it may cancel).
    /// The same seed gives the same samples as [`Trellis::samples`].
    pub fn samples_with(
        &self,
        k: usize,
        seed: u64,
        options: &Options<'_>,
        mut each: impl FnMut(Tree) -> Result<()>,
    ) -> Result<()> {
        let mut sampler = self.sampler();
        stream(k, seed, options, &mut each, |rng| sampler.sample(rng))
    }
}

impl<M: Model> Sampler<M> {
    /// Sets how many cached probabilities (8 bytes each) the sampler may keep.
    pub fn with_budget(mut self, entries: usize) -> Self {
        self.cache.budget = entries;
        self
    }

    /// One exact sample from `P(H | X)`.
    pub fn sample<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Tree {
        let root = crate::base::set::full(self.inside.n());
        let Sampler { inside, cache } = self;
        // The split weight `ψ(L, R) Z(L) Z(R) / Z(S)`, from the MAP values and
        // the relative parts of `Z` (exact at any β, see the trellis module
        // docs): a probability.
        let weight = |l: Mask, r: Mask| inside.split_log_p(l, r).exp();
        draw(root, rng, &mut |s, u| cache.choose(s, u, &weight, true))
    }
}

impl WeightTable {
    /// [`Trellis::samples_with`] from the weight table: `k` exact samples
    /// from `seed`, each handed to `each` as it is drawn, with a time limit
    /// and a progress callback (stage `"sample"`).
    ///
    /// Cost: a draw scans the splits of each cluster it meets that is not
    /// cached, twice (the total, then the choice): `O(2^n)` at the root,
    /// cached while it fits the sampler's budget of 128 MiB (up to 25
    /// points).
    ///
    /// # Errors
    ///
    /// A cancelled or timed-out run, and those of `each`.
    pub fn samples_with(
        &self,
        k: usize,
        seed: u64,
        options: &Options<'_>,
        mut each: impl FnMut(Tree) -> Result<()>,
    ) -> Result<()> {
        let mut cache = SplitCache::new();
        let root = crate::base::set::full(self.num_points());
        let weight = |l: Mask, r: Mask| self.split_weight(l, r);
        stream(k, seed, options, &mut each, |rng| {
            draw(root, rng, &mut |s, u| cache.choose(s, u, &weight, false))
        })
    }
}

/// Hands `k` trees of `sample`, drawn with the generator of `seed`, to
/// `each`, counting them on the progress callback (stage `"sample"`) and
/// stopping at the time limit.
fn stream(
    k: usize,
    seed: u64,
    options: &Options<'_>,
    each: &mut impl FnMut(Tree) -> Result<()>,
    mut sample: impl FnMut(&mut crate::random::SeededRng) -> Tree,
) -> Result<()> {
    let mut ticker = Ticker::new(options, "sample", k as u64)?;
    let mut rng = crate::random::rng(seed);
    for _ in 0..k {
        each(sample(&mut rng))?;
        ticker.advance(1)?;
    }
    Ok(())
}

/// A tree over `s` drawn top-down: `choose(S, u)` gives the left part of
/// the split of `S` for a uniform `u ∈ [0, 1)`.
fn draw<R: Rng + ?Sized>(s: Mask, rng: &mut R, choose: &mut impl FnMut(Mask, f64) -> Mask) -> Tree {
    if s.count_ones() == 1 {
        return Tree::Leaf(s.trailing_zeros() as usize);
    }
    let u: f64 = rng.random();
    let l = choose(s, u);
    let left = draw(l, rng, choose);
    let right = draw(s ^ l, rng, choose);
    Tree::node(left, right)
}

impl SplitCache {
    fn new() -> SplitCache {
        SplitCache {
            cdfs: HashMap::new(),
            budget: DEFAULT_BUDGET,
        }
    }

    /// The left part `L` (holding the lowest point) of a split of `s` drawn
    /// for `u ∈ [0, 1)` by the weights `weight(L, S∖L)`: probabilities that
    /// sum to 1 when `normalised`, else any non-negative weights (their
    /// total is summed first).
    fn choose(
        &mut self,
        s: Mask,
        u: f64,
        weight: &impl Fn(Mask, Mask) -> f64,
        normalised: bool,
    ) -> Mask {
        let k = s.count_ones();
        let entries = (1usize << (k - 1)) - 1;
        if k >= CACHE_MIN_SIZE && (self.cdfs.contains_key(&s) || entries <= self.budget) {
            if !self.cdfs.contains_key(&s) {
                let mut cdf = Vec::with_capacity(entries);
                let mut acc = 0.0;
                for_each_split(s, |l, r| {
                    acc += weight(l, r);
                    cdf.push(acc);
                });
                self.budget -= entries;
                self.cdfs.insert(s, cdf);
            }
            let cdf = &self.cdfs[&s];
            let total = *cdf.last().unwrap();
            let target = u * total;
            let mut i = cdf.partition_point(|&c| c <= target).min(entries - 1);
            // Never return a split of probability zero (possible only at rounding edges).
            while i > 0 && cdf[i] == cdf[i - 1] {
                i -= 1;
            }
            return split_at_index(s, i);
        }
        // Scan; u (times the total) is compared with the running sum.
        let target = if normalised {
            u
        } else {
            let mut total = 0.0;
            for_each_split(s, |l, r| total += weight(l, r));
            u * total
        };
        let mut acc = 0.0;
        let mut chosen = None;
        let mut last_positive = lowest(s);
        for_each_split(s, |l, r| {
            if chosen.is_none() {
                let w = weight(l, r);
                if w > 0.0 {
                    last_positive = l;
                }
                acc += w;
                if acc > target && w > 0.0 {
                    chosen = Some(l);
                }
            }
        });
        chosen.unwrap_or(last_positive)
    }
}

/// The `i`-th split of `s` in [`for_each_split`] order: the left part is the
/// lowest point plus the submask of the other points whose rank, counted
/// downwards from the largest proper submask, is `i`.
fn split_at_index(s: Mask, i: usize) -> Mask {
    let low = lowest(s);
    let rest = s ^ low;
    let m = rest.count_ones();
    let code = ((1u64 << m) - 2 - i as u64) as u32;
    // Deposit the bits of `code` into the positions of `rest`.
    let mut sub = 0;
    let mut bits = rest;
    let mut j = 0;
    while bits != 0 {
        let b = lowest(bits);
        if code >> j & 1 == 1 {
            sub |= b;
        }
        bits ^= b;
        j += 1;
    }
    low | sub
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_index_matches_enumeration_order() {
        for s in [0b1011u32, 0b1111_0110, 0b1_0000_0001, 0b111] {
            let mut i = 0;
            for_each_split(s, |l, _| {
                assert_eq!(split_at_index(s, i), l);
                i += 1;
            });
        }
    }
}
