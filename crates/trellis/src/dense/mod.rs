//! The dense hierarchical cluster trellis: partition function and MAP tree.
//!
//! # The inside pass
//!
//! For every cluster `S` (every non-empty subset, bottom-up by size), with the
//! splits `{L, S∖L}` enumerated once each by keeping the lowest point of `S`
//! in `L` (Propositions 1 and 2 of the trellis paper):
//!
//! ```text
//! Z(S)   = Σ_L  ψ(L, S∖L) · Z(L) · Z(S∖L)            Z({x}) = 1
//! M(S)   = max_L ψ(L, S∖L) · M(L) · M(S∖L)            (MAP value)
//! ```
//!
//! `Z(X)` is the partition function over all `(2n-3)!!` binary trees and
//! `M(X)` the potential of the MAP tree. Every cluster keeps `log M(S)` and
//! the *relative* part `r(S) = log Z(S) - log M(S)`, between 0 and
//! `ln((2|S|-3)!!)`, rather than `log Z(S)` itself: at extreme β both logs are
//! huge (10^300 at β = 10^300) and agree in every bit, and the probabilities
//! of the outside pass and of the sampler are differences of such logs. They
//! are computed instead from `r` and from `log ψ(L, R) + log M(L) + log M(R)
//! - log M(S)`, which is exactly 0 for the MAP split (the same floating-point
//! sum as in the MAP pass), so they stay exact at any temperature. The hot loop keeps no argmax: the
//! `n - 1` splits of the MAP tree are recovered afterwards by a scan of each
//! MAP cluster's splits with the same arithmetic and tie rule (`O(2^n)` in
//! all). Time `O(3^n)` (exactly `(3^n - 2^(n+1) + 1)/2` splits), memory
//! `O(2^n)`.
//!
//! The model is first tabulated over all subsets (see `potentials.rs`): the
//! summary of every subset, or for a separable model its tables `P` and `C`.
//!
//! Three kernels implement it. For a separable model whose factor does not
//! depend on the cluster size (hierarchical correlation clustering), the
//! cache-blocked, vectorised kernel of `blocked.rs` runs the MAP pass and the
//! partition-function pass separately over 8-byte tables
//! ([`Trellis::map_only`] and [`Trellis::log_z_only`] run one of them,
//! [`Trellis::new`] both), falling back to the kernels below when its range
//! does not hold the weights. For any other separable model (see [`crate::models`])
//! `log ψ = f_k · (P(S) + C(L) + C(R))` with `f_k = scale·σ(k)` for clusters of
//! size `k`, so
//!
//! ```text
//! log M(S) = f_k P(S) + max_L [ key(L) + key(S∖L) ],   key(T) = f_k C(T) + log M(T)
//! Z(S)     = e^{f_k P(S)} · Σ_L g(L) · g(S∖L),          g(T)   = e^{f_k C(T)} · Z(T)
//! ```
//!
//! with `key` and `g` tabulated once per size level: each split is one
//! addition and compare for the MAP and one multiply-add for `Z`, `g` being held
//! in scaled arithmetic (mantissa and power of two, see `scaled.rs`) so no
//! value overflows or underflows for `|log ψ|` up to about 10^6 at any `n`.
//! For any other model, and for separable models beyond that range, the
//! general kernel calls `log ψ` per split and sums in log space relative to
//! the MAP value (`RelativeSum` in `scaled.rs`), which is exact for any
//! finite potential.
//!
//! Clusters of one size depend only on smaller ones, so each size level is
//! processed in parallel in batches of masks (`levels.rs`), with progress
//! reported and cancellation honoured between batches.
//!
//! MAP ties are broken deterministically: the first best split in the
//! enumeration order (decreasing `L`) wins.

pub(crate) mod blocked;
pub(crate) mod checkpoint;
pub(crate) mod kernel;
pub(crate) mod levels;
mod outside;
pub(crate) mod pairs;
pub(crate) mod potentials;
mod sample;

pub use crate::base::kernel_path::KernelPath;
pub use outside::Marginals;
pub(crate) use outside::clusters_above;
pub use sample::Sampler;
pub(crate) use sample::cache_bytes as sampler_cache_bytes;

/// Bytes of the bit set of forbidden clusters the pair form keeps under
/// `triplets` triplets over `n` points (0 without).
pub(crate) fn forbidden_bytes(n: usize, triplets: usize) -> u64 {
    PairBlocks::forbidden_bytes(n, triplets)
}

use std::sync::{Arc, OnceLock};

use num_bigint::BigUint;

use crate::base::count;
use crate::base::memory::{self, INSIDE_PEAK_BYTES};
use crate::base::par;
use crate::base::run::{Options, Ticker};
use crate::base::scaled::{RelativeSum, Scaled, ZERO_EXP, relative_of};
use crate::base::set::{Mask, for_each_split, full, lowest, splits_of_size, total_splits};
use crate::base::tree::{ScoredTree, Tree};
use crate::dense::blocked::Terms;
use crate::dense::checkpoint::Run;
use crate::dense::kernel::{Cell, Factors, Fast, level_max_exp, sweep, sweep_fast};
use crate::dense::levels::{solve_level, update_by_size};
use crate::dense::pairs::PairBlocks;
use crate::dense::potentials::{Potentials, SeparableTables, scaled_range_holds};
use crate::error::{Error, ErrorKind, Result};
use crate::models::Model;

/// The dense trellis over all subsets of a model's points, with the
/// partition function and MAP of every cluster computed.
///
/// Build it with [`Trellis::new`]; then read [`log_z`](Trellis::log_z) and
/// [`map`](Trellis::map), compute every cluster marginal with
/// [`marginals`](Trellis::marginals), or draw exact posterior samples with
/// [`samples`](Trellis::samples). The trellis owns its model (pass `&model`
/// to keep it) and shares its tables: cloning it is cheap, and the
/// [`Marginals`] and [`Sampler`] made from it hold their own reference, so
/// they can outlive it.
pub struct Trellis<M: Model> {
    inner: Arc<Inside<M>>,
}

impl<M: Model> Clone for Trellis<M> {
    fn clone(&self) -> Self {
        Trellis {
            inner: Arc::clone(&self.inner),
        }
    }
}

/// What the inside pass computes and keeps.
pub(crate) struct Inside<M: Model> {
    model: M,
    n: usize,
    potentials: Potentials<M::Summary>,
    /// `r(S) = log Z(S) - log M(S)` (see the module docs).
    rel: Vec<f64>,
    /// `log M(S)`, the MAP value of every cluster.
    map: Vec<f64>,
    map_tree: ScoredTree,
    /// The scale of the blocked weight pass when it made `rel` (the outside
    /// pass then runs blocked at the same scale).
    blocked_scale: Option<blocked::Scale>,
    memory_limit: Option<u64>,
    /// The checkpoint directory the trellis was built with: its outside
    /// pass keeps its levels there too.
    checkpoint: Option<Run>,
}

impl<M: Model> std::fmt::Debug for Trellis<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trellis")
            .field("n", &self.inner.n)
            .field("log_z", &self.log_z())
            .finish_non_exhaustive()
    }
}

/// Bytes per subset the dense trellis needs for `model`: at its peak, and
/// kept once built.
fn bytes_needed<M: Model + ?Sized>(model: &M) -> (u64, u64) {
    let (kept, build) = Potentials::<M::Summary>::bytes_per_subset(model);
    (
        (kept + INSIDE_PEAK_BYTES).max(build),
        kept + memory::INSIDE_KEPT_BYTES,
    )
}

/// Refuses a trellis whose tables would exceed the memory limit.
fn check_memory<M: Model + ?Sized>(model: &M, options: &Options<'_>) -> Result<()> {
    let n = model.num_points();
    let (peak, _) = bytes_needed(model);
    memory::check_dense(
        n,
        peak.saturating_mul(1u64 << n.min(63)),
        options.memory_limit,
    )
}

/// Refuses a checkpoint directory for a computation that keeps none.
fn refuse_checkpoint(options: &Options<'_>, what: &str) -> Result<()> {
    match options.checkpoint {
        Some(_) => Err(Error::parameter(format!(
            "this run needs {what} (a model without a constant factor, a user model, or \
             weights beyond the blocked passes' range), which keeps no checkpoints; run it \
             without a checkpoint directory"
        ))),
        None => Ok(()),
    }
}

/// The pair form of a separable model with a constant factor whose terms
/// stay within the range of the scaled kernels, with its factor: the
/// blocked passes of `logz` and `map` then rebuild `P` and `C` block by
/// block (`pairs.rs`) and hold one 8-byte entry per subset. Refuses such a
/// pass when its memory exceeds the limit (checked before anything of size
/// `2^n` is made); `None` for any other model.
fn pair_blocks<M: Model + ?Sized>(
    model: &M,
    options: &Options<'_>,
    bytes: u64,
) -> Result<Option<(f64, PairBlocks)>> {
    let n = model.num_points();
    let Some(sep) = model.separable() else {
        return Ok(None);
    };
    let Some(pairs) = sep.pairs else {
        return Ok(None);
    };
    let used = &sep.factors[1..=n];
    if pairs.n != n || used.windows(2).any(|w| w[0] != w[1]) {
        return Ok(None);
    }
    let forbidden = PairBlocks::forbidden_bytes(n, pairs.forbidden.len());
    memory::check_dense(n, bytes.saturating_add(forbidden), options.memory_limit)?;
    let blocks = PairBlocks::new(&pairs, pairs::block_bits(n));
    let (p, c) = blocks.extremes();
    Ok(scaled_range_holds(n, &sep.factors, p, c).then_some((sep.factors[1], blocks)))
}

/// Runs `run` on the terms of `model` for the blocked passes: rebuilt
/// block by block from the pairs for a pair-form model (its memory checked
/// against `bytes`), else the model's separable tables with a constant
/// factor (the full trellis's memory checked); `None` for any other model.
fn with_terms<M: Model + ?Sized, T>(
    model: &M,
    options: &Options<'_>,
    bytes: u64,
    run: impl FnOnce(Terms<'_>) -> Result<Option<T>>,
) -> Result<Option<T>> {
    if let Some((factor, blocks)) = pair_blocks(model, options, bytes)? {
        let blocks = &blocks;
        return run(Terms::Pairs { factor, blocks });
    }
    // Only a constant factor gives terms: ask before tabulating the model
    // (the caller's fallback tabulates it again).
    let constant = model
        .separable()
        .is_some_and(|s| s.factors.windows(2).skip(1).all(|w| w[0] == w[1]));
    if !constant {
        return Ok(None);
    }
    check_memory(model, options)?;
    let potentials = Potentials::new(model);
    match potentials.scaled().filter(|s| s.constant_factor()) {
        Some(sep) => run(Terms::Tables(sep)),
        None => Ok(None),
    }
}

/// The blocked outside pass ([`blocked::outside`]) with its progress stage
/// `"outside"`, counting terms.
fn outside_pass(
    n: usize,
    terms: Terms<'_>,
    weights: &[f64],
    scale: blocked::Scale,
    path: KernelPath,
    run: Option<&Run>,
    options: &Options<'_>,
) -> Result<Option<Vec<f64>>> {
    let terms_count = 3u64.pow(n as u32) + 1 - (2u64 << n);
    let mut ticker = Ticker::new(options, "outside", terms_count)?;
    blocked::outside(n, terms, weights, scale, path, run, &mut ticker)
}

/// The checkpoint run of the full trellis's blocked passes over the tables
/// `sep` of `model` in `dir` (see [`blocked::run_of_tables`]).
fn run_of_model<M: Model + ?Sized>(
    model: &M,
    dir: &std::path::Path,
    sep: SeparableTables<'_>,
    n: usize,
) -> Result<Run> {
    let pairs = model.separable().and_then(|s| s.pairs).filter(|p| p.n == n);
    let blocks = pairs.map(|p| PairBlocks::new(&p, pairs::block_bits(n)));
    blocked::run_of_tables(dir, sep, blocks.as_ref(), n)
}

/// The tree below `cluster` whose every split is `best(S)`.
fn map_tree_by(cluster: Mask, best: &impl Fn(Mask) -> Mask) -> Tree {
    if cluster.count_ones() == 1 {
        return Tree::Leaf(cluster.trailing_zeros() as usize);
    }
    let l = best(cluster);
    Tree::node(map_tree_by(l, best), map_tree_by(cluster ^ l, best))
}

/// The MAP tree of a model without a separable form (Ginkgo jets, user
/// models): the level-order max-plus pass alone, `log M(S) = max_L [log ψ(L,
/// S∖L) + log M(L) + log M(S∖L)]`, with no partition-function term (no `exp`
/// per split), then the same scan and tie rule as the full trellis.
fn map_general<M: Model + ?Sized>(
    model: &M,
    potentials: &Potentials<M::Summary>,
    options: &Options<'_>,
) -> Result<ScoredTree> {
    let n = model.num_points();
    let mut ticker = Ticker::new(options, "inside", total_splits(n) as u64)?;
    let mut map = vec![f64::NEG_INFINITY; 1usize << n];
    for i in 0..n {
        map[1 << i] = 0.0;
    }
    let value = |map: &[f64], l: Mask, r: Mask| {
        potentials.log_potential(model, l, r) + map[l as usize] + map[r as usize]
    };
    for k in 2..=n {
        solve_level(
            n,
            k,
            splits_of_size(k),
            &mut map,
            &mut ticker,
            |map, s| {
                // A split whose potential's bound cannot reach the best so
                // far is skipped: the bound is never below the evaluated
                // potential and float addition is monotone (the sum is formed
                // in the same order as `value`'s), so a skipped split can
                // neither win nor tie.
                let mut best = f64::NEG_INFINITY;
                for_each_split(s, |l, r| {
                    let bound = potentials.log_potential_bound(model, l, r);
                    if bound + map[l as usize] + map[r as usize] < best {
                        return;
                    }
                    best = best.max(value(map, l, r));
                });
                best
            },
            |map, s, v| map[s as usize] = v,
        )?;
    }
    let root = full(n);
    check_root(map[root as usize], map[root as usize])?;
    let best = |s: Mask| blocked::best_split(s, |l, r| value(&map, l, r));
    Ok(ScoredTree {
        tree: map_tree_by(root, &best),
        log_potential: map[root as usize],
    })
}

/// A first scale for the weight pass without the MAP keys: the line through
/// the centres of the single points' keys and of the whole set's, whose key
/// is estimated by the greedy tree (a lower bound of the MAP value).
fn greedy_scale<M: Model + ?Sized>(
    model: &M,
    n: usize,
    terms: Terms<'_>,
) -> Result<blocked::Scale> {
    let f = terms.factor();
    let singles = (0..n).map(|i| f * terms.at(1 << i).1);
    let (lo, hi) = singles.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), k| {
        (lo.min(k), hi.max(k))
    });
    let greedy = crate::baselines::greedy(model)?.log_potential;
    let whole = f * terms.at(full(n)).1 + greedy + blocked::log_double_factorial(n) / 2.0;
    let first = (lo + hi) / 2.0;
    let a = (whole - first) / (n - 1) as f64;
    Ok(blocked::Scale { a, b: first - a })
}

impl<M: Model> Trellis<M> {
    /// Runs the inside pass (partition function and MAP of every cluster).
    pub fn new(model: M) -> Result<Trellis<M>> {
        Trellis::with_options(model, &Options::default())
    }

    /// [`Trellis::new`] with a memory limit and a progress callback (stage
    /// `"inside"`, counting splits; it may cancel).
    pub fn with_options(model: M, options: &Options<'_>) -> Result<Trellis<M>> {
        let n = model.num_points();
        check_memory(&model, options)?;
        let potentials = Potentials::new(&model);
        let run = match (options.checkpoint, potentials.scaled()) {
            (Some(dir), Some(sep)) if n >= 2 && sep.constant_factor() => {
                Some(run_of_model(&model, dir, sep, n)?)
            }
            _ => {
                refuse_checkpoint(options, "the full inside pass")?;
                None
            }
        };
        // The blocked kernel runs two passes (MAP, then the weights).
        let passes = match potentials.scaled() {
            Some(sep) if sep.constant_factor() => 2,
            _ => 1,
        };
        let mut ticker = Ticker::new(options, "inside", passes * total_splits(n) as u64)?;
        let size = 1usize << n;
        let mut rel = vec![0.0; size];
        let mut map = vec![f64::NEG_INFINITY; size];
        for i in 0..n {
            map[1 << i] = 0.0;
        }
        let mut blocked_scale = None;
        match potentials.scaled() {
            Some(sep) => {
                blocked_scale = inside_blocked(
                    n,
                    sep,
                    options,
                    run.as_ref(),
                    &mut rel,
                    &mut map,
                    &mut ticker,
                )?;
                if blocked_scale.is_none() {
                    refuse_checkpoint(options, "the level-order inside pass")?;
                    inside_separable(n, sep, &mut rel, &mut map, &mut ticker)?
                }
            }
            None => inside_general(n, &model, &potentials, &mut rel, &mut map, &mut ticker)?,
        }
        check_root(map[size - 1] + rel[size - 1], map[size - 1])?;
        let mut inside = Inside {
            model,
            n,
            potentials,
            rel,
            map,
            map_tree: ScoredTree {
                tree: Tree::Leaf(0),
                log_potential: 0.0,
            },
            blocked_scale,
            memory_limit: options.memory_limit,
            checkpoint: run,
        };
        inside.map_tree = ScoredTree {
            tree: inside.map_tree_of(full(n)),
            log_potential: inside.map[size - 1],
        };
        Ok(Trellis {
            inner: Arc::new(inside),
        })
    }

    /// The MAP tree alone, with its log-potential: for a separable model with
    /// a constant factor (hierarchical correlation clustering) one max-plus
    /// pass over 8-byte keys (see `blocked.rs`), about half the work of
    /// [`Trellis::new`]; for a model without a separable form (Ginkgo jets,
    /// user models) the level-order max-plus pass alone (no `exp` per split);
    /// for other separable models (Dasgupta) the full inside pass. The same
    /// tree and value as `Trellis::new(model)?.map()`.
    pub fn map_only(model: &M, options: &Options<'_>) -> Result<ScoredTree> {
        let n = model.num_points();
        if n >= 2 {
            let map_of = |terms: Terms<'_>| -> Result<ScoredTree> {
                let path = KernelPath::choose(options.kernel)?;
                let mut ticker = Ticker::new(options, "inside", total_splits(n) as u64)?;
                let run = blocked::run_of(options.checkpoint, terms, n)?;
                let keys = blocked::keys(n, terms, path, None, run.as_ref(), &mut ticker)?;
                let split = |l: Mask, r: Mask| keys[l as usize] + keys[r as usize];
                let best = |s: Mask| blocked::best_split(s, split);
                let root = full(n);
                let l = best(root);
                Ok(ScoredTree {
                    tree: map_tree_by(root, &best),
                    log_potential: terms.factor() * terms.at(root).0 + split(l, root ^ l),
                })
            };
            if let Some((factor, blocks)) = pair_blocks(model, options, memory::pass_bytes(n))? {
                let blocks = &blocks;
                return map_of(Terms::Pairs { factor, blocks });
            }
            check_memory(model, options)?;
            let potentials = Potentials::new(model);
            if let Some(sep) = potentials.scaled().filter(|s| s.constant_factor()) {
                return map_of(Terms::Tables(sep));
            }
            if let Potentials::General(_) = potentials {
                refuse_checkpoint(options, "the general kernel's MAP pass")?;
                return map_general(model, &potentials, options);
            }
        }
        Ok(Trellis::with_options(model, options)?.map().clone())
    }

    /// `log Z` alone: for a separable model with a constant factor one
    /// sum-product pass over 8-byte weights (see `blocked.rs`) at a scale
    /// fitted to the greedy tree (and, should its entries leave their range,
    /// a second try at the scale fitted to the MAP keys); for any other
    /// model, or weights the blocked kernel cannot hold, the full inside pass.
    pub fn log_z_only(model: &M, options: &Options<'_>) -> Result<f64> {
        if let Some(table) = WeightTable::new(model, options)? {
            return Ok(table.log_z());
        }
        Ok(Trellis::with_options(model, options)?.log_z())
    }

    pub(crate) fn inside(&self) -> &Arc<Inside<M>> {
        &self.inner
    }

    /// The model.
    pub fn model(&self) -> &M {
        &self.inner.model
    }

    /// Number of points `n`.
    pub fn num_points(&self) -> usize {
        self.inner.n
    }

    /// The mask of all points (the root cluster).
    pub fn root(&self) -> Mask {
        full(self.inner.n)
    }

    /// `log Z`, the natural log of the partition function over all trees.
    pub fn log_z(&self) -> f64 {
        self.inner.log_z(self.root())
    }

    /// `log Z(S)` of the trees over the points of `cluster` alone; an error
    /// for the empty set or points outside the trellis.
    pub fn log_z_of(&self, cluster: Mask) -> Result<f64> {
        self.inner.check_cluster(cluster)?;
        Ok(self.inner.log_z(cluster))
    }

    /// The MAP tree (highest total log-potential, children ordered by their
    /// smallest point) with its log-potential `log φ`.
    pub fn map(&self) -> &ScoredTree {
        &self.inner.map_tree
    }

    /// The MAP tree over the points of `cluster` alone, with its
    /// log-potential; an error for the empty set or points outside the trellis.
    pub fn map_of(&self, cluster: Mask) -> Result<ScoredTree> {
        self.inner.check_cluster(cluster)?;
        Ok(ScoredTree {
            tree: self.inner.map_tree_of(cluster),
            log_potential: self.inner.map[cluster as usize],
        })
    }

    /// Number of trees the trellis realises: `(2n-3)!!` for the dense trellis.
    pub fn num_trees(&self) -> BigUint {
        count::num_trees(self.inner.n)
    }

    /// Number of splits the inside pass evaluated, `(3^n - 2^(n+1) + 1) / 2`.
    pub fn num_splits(&self) -> u64 {
        total_splits(self.inner.n) as u64
    }

    /// `log φ(H)`, the total log-potential of a tree over some of the points.
    pub fn tree_log_potential(&self, tree: &Tree) -> Result<f64> {
        tree.validate(self.inner.n, false)?;
        Ok(tree
            .mask_splits()?
            .into_iter()
            .map(|(a, b)| self.inner.split_log_potential(a, b))
            .sum())
    }

    /// `log P(H)` of a complete tree over all points.
    ///
    /// Computed as the sum of the tree's split probabilities (each from the
    /// MAP values and relative parts, see the module docs), not as `log φ(H) - log Z`, which loses every
    /// digit at extreme β: the MAP tree of a model with a unique MAP has
    /// `log P = 0` at β = 10^300.
    pub fn log_probability(&self, tree: &Tree) -> Result<f64> {
        tree.validate(self.inner.n, true)?;
        let inside = &self.inner;
        let mut total = 0.0;
        for (a, b) in tree.mask_splits()? {
            let (l, r) = if lowest(a | b) & a != 0 {
                (a, b)
            } else {
                (b, a)
            };
            total += inside.split_log_p(l, r);
        }
        Ok(total)
    }
}

impl<M: Model> Inside<M> {
    pub(crate) fn n(&self) -> usize {
        self.n
    }

    pub(crate) fn potentials(&self) -> &Potentials<M::Summary> {
        &self.potentials
    }

    /// `log Z(S)` (`-∞` when no tree over `S` has a positive potential).
    #[inline]
    pub(crate) fn log_z(&self, s: Mask) -> f64 {
        // The relative part may be a rounding below 0 (see `relative_of`).
        self.map[s as usize] + self.rel[s as usize].max(0.0)
    }

    /// `r(S) = log Z(S) - log M(S)` of every cluster.
    pub(crate) fn rel_table(&self) -> &[f64] {
        &self.rel
    }

    /// `log M(S)`, the MAP value, of every cluster.
    /// The scale of the blocked weight pass, when it made the tables.
    pub(crate) fn blocked_scale(&self) -> Option<blocked::Scale> {
        self.blocked_scale
    }

    pub(crate) fn map_table(&self) -> &[f64] {
        &self.map
    }

    /// `log ψ(L, R) + log M(L) + log M(R)` of a split of `S = L ∪ R` (`left`
    /// holding the lowest point), as the same floating-point sum the inside
    /// pass maximised: for the MAP split of `S` it equals `log M(S)` exactly.
    #[inline(always)]
    pub(crate) fn split_value(&self, left: Mask, right: Mask) -> f64 {
        let map = &self.map;
        match self.potentials.scaled() {
            Some(sep) => {
                let s = left | right;
                let f = sep.factors[s.count_ones() as usize];
                let key = |t: Mask| f * sep.child[t as usize] + map[t as usize];
                f * sep.parent[s as usize] + (key(left) + key(right))
            }
            None => self.log_potential(left, right) + map[left as usize] + map[right as usize],
        }
    }

    /// `log p(L | S)`, the log-probability that cluster `S = L ∪ R` splits
    /// into `L` (holding its lowest point) and `R`:
    /// `(split_value - log M(S)) + r(L) + r(R) - r(S)`, every term small or
    /// exactly 0 for the MAP split, so it is exact at any β (see the module
    /// docs). `-∞` for a split of zero potential.
    #[inline(always)]
    pub(crate) fn split_log_p(&self, left: Mask, right: Mask) -> f64 {
        let v = self.split_value(left, right);
        if v == f64::NEG_INFINITY {
            return v;
        }
        let (rel, s) = (&self.rel, (left | right) as usize);
        ((v - self.map[s]) + (rel[left as usize] + rel[right as usize]) - rel[s]).min(0.0)
    }

    pub(crate) fn memory_limit(&self) -> Option<u64> {
        self.memory_limit
    }

    /// The checkpoint run the trellis was built with.
    pub(crate) fn checkpoint(&self) -> Option<&Run> {
        self.checkpoint.as_ref()
    }

    /// The checkpoint run of this trellis's blocked passes (tables `sep`) in `dir`.
    pub(crate) fn run_in(&self, dir: &std::path::Path, sep: SeparableTables<'_>) -> Result<Run> {
        run_of_model(&self.model, dir, sep, self.n)
    }

    /// `log ψ` of a split, `left` holding the lowest point of the union.
    #[inline(always)]
    pub(crate) fn log_potential(&self, left: Mask, right: Mask) -> f64 {
        self.potentials.log_potential(&self.model, left, right)
    }

    /// `log ψ` of an unordered split, with the canonical argument order.
    #[inline]
    pub(crate) fn split_log_potential(&self, a: Mask, b: Mask) -> f64 {
        if lowest(a | b) & a != 0 {
            self.log_potential(a, b)
        } else {
            self.log_potential(b, a)
        }
    }

    fn check_cluster(&self, cluster: Mask) -> Result<()> {
        if cluster == 0 || cluster & !full(self.n) != 0 {
            return Err(Error::parameter(format!(
                "cluster {cluster:#b} is not a non-empty subset of the {} points",
                self.n
            )));
        }
        Ok(())
    }

    /// The MAP tree over `cluster` (non-empty, inside the points).
    fn map_tree_of(&self, cluster: Mask) -> Tree {
        map_tree_by(cluster, &|s| self.best_split(s))
    }

    /// The left part of the MAP split of `s` (|s| ≥ 2). The inside pass keeps
    /// only the MAP values, so the `n - 1` splits of a MAP tree are recovered
    /// here by a scan of the `2^(|s|-1) - 1` splits of each, with the same
    /// arithmetic as the inside pass and the same tie rule (the largest `L`).
    fn best_split(&self, s: Mask) -> Mask {
        let map = &self.map;
        match self.potentials.scaled() {
            Some(sep) => {
                let f = sep.factors[s.count_ones() as usize];
                let key = |t: Mask| f * sep.child[t as usize] + map[t as usize];
                blocked::best_split(s, |l, r| key(l) + key(r))
            }
            None => blocked::best_split(s, |l, r| {
                self.log_potential(l, r) + map[l as usize] + map[r as usize]
            }),
        }
    }
}

/// The weights `G(S)` of every subset from the single 8-byte sum-product
/// pass of `blocked.rs` (one `f64` per subset at an affine scale, see its
/// module docs): `log Z`, and exact samples by the top-down draw of
/// `sample.rs`, where the split `(L, S∖L)` of `S` has probability
/// `G(L) · G(S∖L) / Σ_L' G(L') · G(S∖L')` (the parent's own term and the
/// scale are common to every split of `S`, so they cancel). Built for a
/// separable model with a constant factor (hierarchical correlation
/// clustering, under triplets too) whose weights fit the pass's window.
///
/// [`WeightTable::with_marginals`] adds every cluster's marginal from the
/// blocked outside pass (`blocked::outside`), which holds one more 8-byte
/// entry per subset and turns it into `log P(S)` in place: `log Z`, samples
/// and every marginal at 16 bytes per subset, against the 48 at the peak of a
/// [`Trellis`] and its [`Marginals`]; [`WeightTable::marginals`] runs that
/// pass on a table built without them, on first use.
pub struct WeightTable {
    n: usize,
    weights: Vec<f64>,
    /// The scale of `weights` (the outside pass works at it).
    scale: blocked::Scale,
    log_z: f64,
    /// `log P(S)` of every subset, once the marginals are computed.
    log_p: OnceLock<Vec<f64>>,
}

impl std::fmt::Debug for WeightTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WeightTable")
            .field("n", &self.n)
            .field("log_z", &self.log_z)
            .finish_non_exhaustive()
    }
}

impl WeightTable {
    /// The table of `model`, or `None` for a model without the separable
    /// form with a constant factor, fewer than 2 points, or weights whose
    /// entries leave the pass's window at both scales tried (the greedy
    /// tree's, then the MAP keys'): the caller then takes the full trellis.
    ///
    /// # Errors
    ///
    /// Too many points, too little memory, a cancelled or timed-out pass,
    /// a bad checkpoint.
    pub fn new<M: Model + ?Sized>(model: &M, options: &Options<'_>) -> Result<Option<WeightTable>> {
        let bytes = memory::pass_bytes(model.num_points());
        WeightTable::build(model, options, false, bytes)
    }

    /// [`WeightTable::new`], refused up front unless the memory limit also
    /// admits the marginals that [`WeightTable::marginals`] may add later
    /// (`memory::pass_marginals_bytes`, which also covers the MAP pass's
    /// table beside the weights).
    pub(crate) fn admitting_marginals<M: Model + ?Sized>(
        model: &M,
        options: &Options<'_>,
    ) -> Result<Option<WeightTable>> {
        let bytes = memory::pass_marginals_bytes(model.num_points());
        WeightTable::build(model, options, false, bytes)
    }

    /// [`WeightTable::new`] and then the blocked outside pass: every
    /// cluster's marginal as well (stage `"outside"` of the progress
    /// callback, counting terms), at 16 bytes per subset for a pair-form
    /// model (`memory::pass_marginals_bytes`); `None` as for
    /// [`WeightTable::new`], and when the outside pass's entries leave its
    /// window at both scales: the caller then takes the full trellis.
    ///
    /// # Errors
    ///
    /// As [`WeightTable::new`].
    pub fn with_marginals<M: Model + ?Sized>(
        model: &M,
        options: &Options<'_>,
    ) -> Result<Option<WeightTable>> {
        let bytes = memory::pass_marginals_bytes(model.num_points());
        WeightTable::build(model, options, true, bytes)
    }

    /// The table (with the marginals when `marginals`), its memory checked
    /// against `bytes` for a pair-form model.
    fn build<M: Model + ?Sized>(
        model: &M,
        options: &Options<'_>,
        marginals: bool,
        bytes: u64,
    ) -> Result<Option<WeightTable>> {
        let n = model.num_points();
        if n < 2 {
            return Ok(None);
        }
        let table_of = |terms: Terms<'_>| -> Result<Option<WeightTable>> {
            let path = KernelPath::choose(options.kernel)?;
            let mut ticker = Ticker::new(options, "inside", total_splits(n) as u64)?;
            let root = full(n);
            let (f, child) = (terms.factor(), terms.at(root).1);
            let run = blocked::run_of(options.checkpoint, terms, n)?;
            let run = run.as_ref();
            // The table at `scale`, with the marginals when asked for
            // (`None` when the outside pass leaves its window).
            let table = |weights: Vec<f64>, scale| -> Result<Option<WeightTable>> {
                let log_p = OnceLock::new();
                if marginals {
                    match outside_pass(n, terms, &weights, scale, path, run, options)? {
                        Some(table) => log_p.get_or_init(|| table),
                        None => return Ok(None),
                    };
                }
                Ok(Some(WeightTable {
                    n,
                    log_z: blocked::log_z_of(weights[root as usize], root, f, child, scale),
                    weights,
                    scale,
                    log_p,
                }))
            };
            let guess = greedy_scale(model, n, terms)?;
            // The greedy tree may have zero potential (constraints): no guess.
            if guess.a.is_finite() && guess.b.is_finite() {
                if let Some(w) = blocked::weights(n, terms, guess, path, run, &mut ticker)? {
                    if let Some(t) = table(w, guess)? {
                        return Ok(Some(t));
                    }
                }
            }
            let keys = blocked::keys(n, terms, path, None, run, &mut ticker)?;
            if let Some(scale) = blocked::Scale::from_keys(n, &keys, blocked::log_double_factorial)
            {
                drop(keys);
                if scale != guess {
                    if let Some(w) = blocked::weights(n, terms, scale, path, run, &mut ticker)? {
                        return table(w, scale);
                    }
                }
            }
            Ok(None)
        };
        with_terms(model, options, bytes, table_of)
    }

    /// `log P(S)` of every subset by mask (`-∞` for the empty set), computed
    /// on first use and kept: the blocked outside pass on this table at its
    /// scale (stage `"outside"` of the progress callback, 8 bytes per subset
    /// more; `model` is the one the table was built from). Where its entries
    /// leave the pass's window, the weights are made again at the MAP keys'
    /// scale for the pass, as [`WeightTable::with_marginals`] does (16 bytes
    /// per subset more while they exist), and where that fails too the full
    /// trellis of `model` is built, asked for its marginals and dropped.
    ///
    /// # Errors
    ///
    /// Too little memory, a cancelled or timed-out pass.
    pub fn marginals<M: Model + ?Sized>(&self, model: &M, options: &Options<'_>) -> Result<&[f64]> {
        if let Some(log_p) = self.log_p.get() {
            return Ok(log_p);
        }
        let n = self.n;
        let bytes = memory::pass_marginals_bytes(n);
        let pass = with_terms(model, options, bytes, |terms| {
            let path = KernelPath::choose(options.kernel)?;
            let run = blocked::run_of(options.checkpoint, terms, n)?;
            let run = run.as_ref();
            if let Some(log_p) =
                outside_pass(n, terms, &self.weights, self.scale, path, run, options)?
            {
                return Ok(Some(log_p));
            }
            // Another scale: the keys' pass and a weight pass beside this
            // table (checked as a third table), then the outside pass.
            memory::check_dense(n, bytes.saturating_add(8 << n), options.memory_limit)?;
            let mut ticker = Ticker::new(options, "inside", 2 * total_splits(n) as u64)?;
            let keys = blocked::keys(n, terms, path, None, run, &mut ticker)?;
            let Some(scale) = blocked::Scale::from_keys(n, &keys, blocked::log_double_factorial)
            else {
                return Ok(None);
            };
            drop(keys);
            if scale == self.scale {
                return Ok(None);
            }
            match blocked::weights(n, terms, scale, path, run, &mut ticker)? {
                Some(weights) => outside_pass(n, terms, &weights, scale, path, run, options),
                None => Ok(None),
            }
        })?;
        let log_p = match pass {
            Some(log_p) => log_p,
            None => {
                let trellis = Trellis::with_options(model, options)?;
                let m = trellis.marginals_with(options)?;
                m.log_p_table().to_vec()
            }
        };
        Ok(self.log_p.get_or_init(|| log_p))
    }

    /// The number of points.
    pub fn num_points(&self) -> usize {
        self.n
    }

    /// `log Z` of all the points.
    pub fn log_z(&self) -> f64 {
        self.log_z
    }

    /// The unnormalised weight of the split `(l, r)` of `l ∪ r`.
    #[inline]
    pub(crate) fn split_weight(&self, l: Mask, r: Mask) -> f64 {
        self.weights[l as usize] * self.weights[r as usize]
    }

    /// `log P(S)` of every subset by mask (`-∞` for the empty set), when
    /// built [`WeightTable::with_marginals`].
    pub fn log_p_table(&self) -> Option<&[f64]> {
        self.log_p.get().map(Vec::as_slice)
    }

    /// The probability that the hierarchy contains `tree` (over some of the
    /// points) as a subtree: `P(S)` of its root times the probability of
    /// each of its splits, `G(L) G(S∖L) / Σ_L' G(L') G(S∖L')` (the split
    /// sums taken anew, `O(2^|S|)` per split); `None` without the marginals.
    ///
    /// # Errors
    ///
    /// An invalid tree.
    pub fn subtree(&self, tree: &Tree) -> Result<Option<f64>> {
        let Some(log_p) = self.log_p.get() else {
            return Ok(None);
        };
        tree.validate(self.n, false)?;
        let mut lp = log_p[tree.mask()? as usize];
        for (a, b) in tree.mask_splits()? {
            let mut sum = 0.0;
            for_each_split(a | b, |l, r| sum += self.split_weight(l, r));
            lp += (self.split_weight(a, b) / sum).ln();
        }
        if lp.is_nan() {
            return Err(Error::tree("the sub-hierarchy's potential is undefined"));
        }
        Ok(Some(lp.min(0.0).exp()))
    }
}

fn check_root(z: f64, m: f64) -> Result<()> {
    if z.is_nan() || m.is_nan() || z == f64::INFINITY || m == f64::INFINITY {
        return Err(Error::new(ErrorKind::BadPotential {
            detail: "log ψ is NaN or +infinity for some split".into(),
        }));
    }
    if z == f64::NEG_INFINITY {
        return Err(Error::new(ErrorKind::NoTree));
    }
    Ok(())
}

/// Number of trees over all the points of `model` whose every split has a
/// positive potential (finite `log ψ`), by the trellis recursion restricted to
/// allowed splits: `O(3^n)` potential evaluations after tabulating the model.
/// Exact in `u128`, so an error for `n ≥ 30` (where `(2n-3)!!` no longer fits)
/// and for no points.
pub fn num_positive_trees<M: Model + ?Sized>(model: &M) -> Result<BigUint> {
    let n = model.num_points();
    if n == 0 {
        return Err(Error::new(ErrorKind::Empty));
    }
    if n >= 30 {
        return Err(Error::parameter(format!(
            "counting trees of positive potential is exact up to 29 points, not {n}"
        )));
    }
    let potentials = Potentials::new(model);
    let mut count = vec![0u128; 1 << n];
    for s in 1..count.len() {
        let s = s as Mask;
        if s.count_ones() == 1 {
            count[s as usize] = 1;
            continue;
        }
        let mut total = 0u128;
        for_each_split(s, |l, r| {
            if potentials.log_potential(model, l, r) > f64::NEG_INFINITY {
                total += count[l as usize] * count[r as usize];
            }
        });
        count[s as usize] = total;
    }
    Ok(BigUint::from(count[count.len() - 1]))
}

/// Per-subset tables of the separable kernel for parents of one size `k`, kept
/// as separate arrays so each pass over splits streams through dense memory:
/// `key(T) = f_k C(T) + log M(T)` and `g(T) = e^{f_k C(T)} Z(T) = mant · 2^exp`.
struct Tables {
    cells: Vec<Cell>,
    /// The compact cells of the fast path.
    fast: Vec<Fast>,
    /// The fast path's factors for the current level.
    factors: Factors,
    /// Largest `exp` among the subsets of each size.
    max_exp: Vec<i32>,
}

impl Tables {
    fn new(n: usize) -> Tables {
        Tables {
            cells: vec![Cell::ZERO; 1usize << n],
            fast: vec![Fast::ZERO; 1usize << n],
            factors: Factors::new(&[ZERO_EXP; 2], &[ZERO_EXP; 2], 1, false),
            max_exp: vec![ZERO_EXP; n + 1],
        }
    }

    /// Recomputes the entries of the subsets whose size is in `sizes`.
    fn refresh(
        &mut self,
        n: usize,
        sizes: std::ops::RangeInclusive<usize>,
        f: f64,
        child: &[f64],
        rel: &[f64],
        map: &[f64],
    ) {
        update_by_size(&mut self.cells, sizes.clone(), |t| {
            let t = t as usize;
            let c = f * child[t];
            // g = e^{f C(T)} Z(T), with Z(T) rebuilt from its MAP value and
            // relative part exactly as the outside pass rebuilds it.
            let z = Scaled::from_relative(map[t], rel[t]);
            Cell::of(c + map[t], Scaled::from_ln(c).mul(z))
        });
        for j in sizes.clone() {
            self.max_exp[j] = level_max_exp(&self.cells, n, j, |c| c.exp);
        }
        let (cells, max_exp) = (&self.cells, &self.max_exp);
        update_by_size(&mut self.fast, sizes, |t| {
            Fast::of(&cells[t as usize], max_exp[t.count_ones() as usize])
        });
    }

    /// The MAP value `max key(L) + key(S∖L)` and the scaled sum `Σ g(L)
    /// g(S∖L)` of cluster `s` of size `k`: the fast sweep, or the exact one
    /// (whose reference exponent bounds every term from the per-size maxima).
    #[inline(always)]
    fn cluster(&self, s: Mask, k: usize) -> (f64, Scaled) {
        sweep_fast(s, &self.fast, &self.fast, &self.factors, false).unwrap_or_else(|| {
            let e_ref = (1..k)
                .map(|j| self.max_exp[j].saturating_add(self.max_exp[k - j]))
                .max()
                .unwrap_or(ZERO_EXP)
                .saturating_add(2);
            let (m, _, g) = sweep(s, &self.cells, &self.cells, false, e_ref);
            (m, g)
        })
    }
}

/// Computes `(MAP value, r)` of every cluster of size `k` with
/// `kernel(s, rel, map)` and stores them.
fn inside_level(
    n: usize,
    k: usize,
    rel: &mut [f64],
    map: &mut [f64],
    ticker: &mut Ticker<'_>,
    kernel: impl Fn(Mask, &[f64], &[f64]) -> (f64, f64) + Sync + Send,
) -> Result<()> {
    let mut tables = (rel, map);
    solve_level(
        n,
        k,
        splits_of_size(k),
        &mut tables,
        ticker,
        |t, s| kernel(s, t.0, t.1),
        |t, s, (m, r)| {
            t.1[s as usize] = m;
            t.0[s as usize] = r;
        },
    )
}

/// The blocked inside pass (see `blocked.rs`) of a separable model with a
/// constant factor: the MAP pass fills `map`, the weight pass at the scale
/// fitted to its keys fills `rel`; returns that scale. `None` (tables
/// untouched but `map`) when the kernel does not apply or the weights leave
/// its range: then the level-order kernel runs.
fn inside_blocked(
    n: usize,
    sep: SeparableTables<'_>,
    options: &Options<'_>,
    run: Option<&Run>,
    rel: &mut [f64],
    map: &mut [f64],
    ticker: &mut Ticker<'_>,
) -> Result<Option<blocked::Scale>> {
    if n < 2 || !sep.constant_factor() {
        return Ok(None);
    }
    let path = KernelPath::choose(options.kernel)?;
    let keys = blocked::keys(n, Terms::Tables(sep), path, Some(&mut *map), run, ticker)?;
    let Some(scale) = blocked::Scale::from_keys(n, &keys, blocked::log_double_factorial) else {
        return Ok(None);
    };
    drop(keys);
    let Some(weights) = blocked::weights(n, Terms::Tables(sep), scale, path, run, ticker)? else {
        return Ok(None);
    };
    let f = sep.factors[1];
    par::update_indexed(rel, |s, r| {
        if s > 0 {
            let log_z = blocked::log_z_of(weights[s], s as Mask, f, sep.child[s], scale);
            // A cluster of zero weight (forbidden by constraints) has
            // `log M = log Z = -∞` and, as in the other kernels, `r = 0`.
            *r = if map[s] == f64::NEG_INFINITY {
                0.0
            } else {
                log_z - map[s]
            };
        }
    });
    Ok(Some(scale))
}

fn inside_separable(
    n: usize,
    sep: SeparableTables<'_>,
    rel: &mut [f64],
    map: &mut [f64],
    ticker: &mut Ticker<'_>,
) -> Result<()> {
    let mut tables = Tables::new(n);
    let constant = sep.constant_factor();
    for k in 2..=n {
        let f = sep.factors[k];
        // Entries of the clusters below this level, for parents of size k.
        let sizes = if constant && k > 2 {
            k - 1..=k - 1
        } else {
            1..=k - 1
        };
        tables.refresh(n, sizes, f, sep.child, rel, map);
        tables.factors = Factors::new(&tables.max_exp, &tables.max_exp, k, false);
        let tables = &tables;
        inside_level(n, k, rel, map, ticker, |s, _, _| {
            let (m, g) = tables.cluster(s, k);
            let p = f * sep.parent[s as usize];
            let map = p + m;
            // Z(S) = e^{f P(S)} Σ g(L) g(R), kept relative to the MAP value.
            (map, relative_of(Scaled::from_ln(p).mul(g), map))
        })?;
    }
    Ok(())
}

/// The log-space kernel: per split one `log ψ` and one term of a sum
/// relative to the MAP value (see the module docs), exact for any finite
/// potential.
fn inside_general<M: Model + ?Sized>(
    n: usize,
    model: &M,
    potentials: &Potentials<M::Summary>,
    rel: &mut [f64],
    map: &mut [f64],
    ticker: &mut Ticker<'_>,
) -> Result<()> {
    for k in 2..=n {
        inside_level(n, k, rel, map, ticker, |s, rel, map| {
            let mut sum = RelativeSum::new();
            for_each_split(s, |l, r| {
                let lp = potentials.log_potential(model, l, r);
                let v = lp + map[l as usize] + map[r as usize];
                sum.add(v, rel[l as usize] + rel[r as usize]);
            });
            (sum.max(), sum.rel())
        })?;
    }
    Ok(())
}
