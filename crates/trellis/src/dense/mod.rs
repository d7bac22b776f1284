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
//! M(S)   = max_L ψ(L, S∖L) · M(L) · M(S∖L)            (MAP value, with backpointer)
//! ```
//!
//! `Z(X)` is the partition function over all `(2n-3)!!` binary trees and
//! `M(X)` the potential of the MAP tree, recovered by following the
//! backpointers. Time `O(3^n)` (exactly `(3^n - 2^(n+1) + 1)/2` splits),
//! memory `O(2^n)`.
//!
//! Two kernels implement it. For a separable model (see [`crate::models::potential`])
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
//! general kernel calls `log ψ` per split and sums in log space, which is
//! exact for any finite potential.
//!
//! Clusters of one size depend only on smaller ones, so each size level is
//! processed in parallel (rayon) in batches of masks.
//!
//! MAP ties are broken deterministically: the first best split in the
//! enumeration order (decreasing `L`) wins.

pub(crate) mod kernel;
mod outside;
mod sample;

pub use outside::Marginals;
pub use sample::Sampler;

use num_bigint::BigUint;
use rayon::prelude::*;

use crate::base::count;
use crate::base::memory::{self, INSIDE_PEAK_BYTES};
use crate::base::scaled::{LogSumExp, Scaled, ZERO_EXP};
use crate::base::set::{
    Mask, for_each_level_batch, for_each_split, full, lowest, splits_of_size, total_splits,
};
use crate::base::tree::Tree;
use crate::dense::kernel::{Cell, Factors, Fast, level_max_exp, sweep, sweep_fast};
use crate::error::{Error, ErrorKind, Result};
use crate::models::potential::{Potential, Separable};

/// Masks per parallel batch within a size level.
pub(crate) const BATCH: usize = 1 << 13;

/// A batch is run in parallel when it has at least this many splits.
pub(crate) const PARALLEL_WORK: u64 = 1 << 15;

/// A progress callback: `(stage, done, total)`, counting splits.
pub type ProgressFn<'a> = &'a (dyn Fn(&str, u64, u64) + Sync);

/// Options of the exact algorithms.
#[derive(Clone, Copy, Default)]
pub struct Options<'a> {
    /// Refuse to allocate more than this many bytes of tables; `None` uses the
    /// memory the operating system reports as available.
    pub memory_limit: Option<u64>,
    /// Called after each batch of clusters with the number of splits done.
    pub progress: Option<ProgressFn<'a>>,
}

impl std::fmt::Debug for Options<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("memory_limit", &self.memory_limit)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

pub(crate) struct Ticker<'a> {
    f: Option<ProgressFn<'a>>,
    stage: &'static str,
    done: u64,
    total: u64,
}

impl<'a> Ticker<'a> {
    pub(crate) fn new(f: Option<ProgressFn<'a>>, stage: &'static str, total: u64) -> Ticker<'a> {
        let t = Ticker {
            f,
            stage,
            done: 0,
            total,
        };
        t.report();
        t
    }

    pub(crate) fn advance(&mut self, splits: u64) {
        self.done += splits;
        self.report();
    }

    fn report(&self) {
        if let Some(f) = self.f {
            f(self.stage, self.done.min(self.total), self.total);
        }
    }
}

/// Maps a batch of masks through `f`, in parallel when the batch is big enough.
pub(crate) fn map_batch<T: Send>(
    batch: &[Mask],
    work_per_mask: u64,
    f: impl Fn(Mask) -> T + Sync,
    out: &mut Vec<T>,
) {
    if batch.len() as u64 * work_per_mask >= PARALLEL_WORK {
        batch.par_iter().map(|&s| f(s)).collect_into_vec(out);
    } else {
        out.clear();
        out.extend(batch.iter().map(|&s| f(s)));
    }
}

/// Sets `table[t] = f(t)` for every mask `t` whose size is in `sizes`, in parallel.
pub(crate) fn fill_by_size<T: Send>(
    table: &mut [T],
    sizes: std::ops::RangeInclusive<usize>,
    f: impl Fn(Mask) -> T + Sync,
) {
    const CHUNK: usize = 1 << 12;
    table
        .par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(ci, chunk)| {
            for (j, slot) in chunk.iter_mut().enumerate() {
                let t = (ci * CHUNK + j) as Mask;
                if sizes.contains(&(t.count_ones() as usize)) {
                    *slot = f(t);
                }
            }
        });
}

/// The dense trellis over all subsets of a model's points, with the
/// partition function and MAP of every cluster computed.
///
/// Build it with [`Trellis::new`]; then read [`log_z`](Trellis::log_z) and
/// [`map_tree`](Trellis::map_tree), compute every cluster marginal with
/// [`marginals`](Trellis::marginals), or draw exact posterior samples with
/// [`sample`](Trellis::sample). The trellis owns its model (pass `&model` to
/// keep it).
pub struct Trellis<P> {
    model: P,
    n: usize,
    log_z: Vec<f64>,
    map: Vec<f64>,
    memory_limit: Option<u64>,
}

impl<P> std::fmt::Debug for Trellis<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trellis")
            .field("n", &self.n)
            .field("log_z", &self.log_z.last())
            .finish_non_exhaustive()
    }
}

impl<P: Potential> Trellis<P> {
    /// Runs the inside pass (partition function and MAP of every cluster).
    pub fn new(model: P) -> Result<Trellis<P>> {
        Trellis::with_options(model, &Options::default())
    }

    /// [`Trellis::new`] with a memory limit and a progress callback.
    pub fn with_options(model: P, options: &Options<'_>) -> Result<Trellis<P>> {
        let n = model.num_points();
        memory::check_dense(n, INSIDE_PEAK_BYTES << n.min(63), options.memory_limit)?;
        let size = 1usize << n;
        let mut t = Trellis {
            model,
            n,
            log_z: vec![f64::NEG_INFINITY; size],
            map: vec![f64::NEG_INFINITY; size],
            memory_limit: options.memory_limit,
        };
        for i in 0..n {
            t.log_z[1 << i] = 0.0;
            t.map[1 << i] = 0.0;
        }
        let mut ticker = Ticker::new(options.progress, "inside", total_splits(n) as u64);
        let Trellis {
            model, log_z, map, ..
        } = &mut t;
        match model.separable().filter(|s| s.within_scaled_range(n)) {
            Some(sep) => inside_separable(n, &sep, log_z, map, &mut ticker),
            None => inside_general(n, &*model, log_z, map, &mut ticker),
        }
        t.check_root()?;
        Ok(t)
    }

    fn check_root(&self) -> Result<()> {
        let root = full(self.n) as usize;
        let (z, m) = (self.log_z[root], self.map[root]);
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

    /// The model.
    pub fn model(&self) -> &P {
        &self.model
    }

    /// Number of points `n`.
    pub fn num_points(&self) -> usize {
        self.n
    }

    /// The mask of all points (the root cluster).
    pub fn root(&self) -> Mask {
        full(self.n)
    }

    pub(crate) fn memory_limit(&self) -> Option<u64> {
        self.memory_limit
    }

    pub(crate) fn log_z_table(&self) -> &[f64] {
        &self.log_z
    }

    /// `log Z`, the natural log of the partition function over all trees.
    pub fn log_z(&self) -> f64 {
        self.log_z[self.root() as usize]
    }

    /// `log Z(S)` of the trees over the points of `cluster` alone.
    pub fn log_z_of(&self, cluster: Mask) -> f64 {
        self.log_z[cluster as usize]
    }

    /// Total log-potential `log φ` of the MAP tree.
    pub fn map_log_potential(&self) -> f64 {
        self.map[self.root() as usize]
    }

    /// The MAP tree (highest total log-potential), children ordered by their
    /// smallest point.
    pub fn map_tree(&self) -> Tree {
        self.map_tree_of(self.root())
    }

    /// The MAP tree over the points of `cluster` alone.
    pub fn map_tree_of(&self, cluster: Mask) -> Tree {
        assert!(
            cluster != 0 && cluster & !self.root() == 0,
            "cluster out of range"
        );
        if cluster.count_ones() == 1 {
            return Tree::Leaf(cluster.trailing_zeros() as usize);
        }
        let l = self.best_split(cluster);
        Tree::node(self.map_tree_of(l), self.map_tree_of(cluster ^ l))
    }

    /// The left part of the MAP split of `s` (|s| ≥ 2). The inside pass keeps
    /// only the MAP values, so the `n - 1` splits of a MAP tree are recovered
    /// here by a scan of the `2^(|s|-1) - 1` splits of each, with the same
    /// arithmetic as the inside pass and the same tie rule (the largest `L`).
    fn best_split(&self, s: Mask) -> Mask {
        let map = &self.map;
        let mut best = f64::NEG_INFINITY;
        let mut arg = 0;
        let mut scan = |l: Mask, v: f64| {
            if v > best || arg == 0 {
                best = v;
                arg = l;
            }
        };
        match self
            .model
            .separable()
            .filter(|sep| sep.within_scaled_range(self.n))
        {
            Some(sep) => {
                let f = sep.scale * sep.size_factor[s.count_ones() as usize];
                let key = |t: Mask| f * sep.child[t as usize] + map[t as usize];
                for_each_split(s, |l, r| scan(l, key(l) + key(r)));
            }
            None => for_each_split(s, |l, r| {
                scan(
                    l,
                    self.model.log_potential(l, r) + map[l as usize] + map[r as usize],
                )
            }),
        }
        arg
    }

    /// Number of trees the trellis realises: `(2n-3)!!` for the dense trellis.
    pub fn num_trees(&self) -> BigUint {
        count::num_trees(self.n)
    }

    /// Number of splits the inside pass evaluated, `(3^n - 2^(n+1) + 1) / 2`.
    pub fn num_splits(&self) -> u64 {
        total_splits(self.n) as u64
    }

    /// `log φ(H)`, the total log-potential of a tree over some of the points.
    pub fn tree_log_potential(&self, tree: &Tree) -> Result<f64> {
        tree.validate(self.n, false)?;
        Ok(tree
            .mask_splits()
            .into_iter()
            .map(|(a, b)| self.split_log_potential(a, b))
            .sum())
    }

    /// `log P(H)` of a complete tree over all points.
    pub fn log_probability(&self, tree: &Tree) -> Result<f64> {
        tree.validate(self.n, true)?;
        Ok(self.tree_log_potential(tree)? - self.log_z())
    }

    /// `log ψ` of an unordered split, with the canonical argument order.
    #[inline]
    pub(crate) fn split_log_potential(&self, a: Mask, b: Mask) -> f64 {
        if lowest(a | b) & a != 0 {
            self.model.log_potential(a, b)
        } else {
            self.model.log_potential(b, a)
        }
    }
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
        log_z: &[f64],
        map: &[f64],
    ) {
        fill_by_size(&mut self.cells, sizes.clone(), |t| {
            let t = t as usize;
            let c = f * child[t];
            Cell::new(c + map[t], c + log_z[t])
        });
        for j in sizes.clone() {
            self.max_exp[j] = level_max_exp(&self.cells, n, j);
        }
        let (cells, max_exp) = (&self.cells, &self.max_exp);
        fill_by_size(&mut self.fast, sizes, |t| {
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

/// Computes `(MAP value, log Z)` of every cluster of size `k` with
/// `kernel(s, log_z, map)`, in parallel batches, and stores them.
fn solve_level(
    n: usize,
    k: usize,
    log_z: &mut [f64],
    map: &mut [f64],
    ticker: &mut Ticker<'_>,
    kernel: impl Fn(Mask, &[f64], &[f64]) -> (f64, f64) + Sync,
) {
    let work = splits_of_size(k);
    let mut out = Vec::new();
    for_each_level_batch(n, k, BATCH, |batch| {
        {
            let (log_z, map) = (&*log_z, &*map);
            map_batch(batch, work, |s| kernel(s, log_z, map), &mut out);
        }
        for (&s, &(m, z)) in batch.iter().zip(&out) {
            map[s as usize] = m;
            log_z[s as usize] = z;
        }
        ticker.advance(batch.len() as u64 * work);
    });
}

fn inside_separable(
    n: usize,
    sep: &Separable<'_>,
    log_z: &mut [f64],
    map: &mut [f64],
    ticker: &mut Ticker<'_>,
) {
    let mut tables = Tables::new(n);
    let constant = sep.constant_size_factor();
    for k in 2..=n {
        let f = sep.scale * sep.size_factor[k];
        // Entries of the clusters below this level, for parents of size k.
        let sizes = if constant && k > 2 {
            k - 1..=k - 1
        } else {
            1..=k - 1
        };
        tables.refresh(n, sizes, f, sep.child, log_z, map);
        tables.factors = Factors::new(&tables.max_exp, &tables.max_exp, k, false);
        let tables = &tables;
        solve_level(n, k, log_z, map, ticker, |s, _, _| {
            let (m, g) = tables.cluster(s, k);
            let p = f * sep.parent[s as usize];
            (p + m, p + g.ln())
        });
    }
}

fn inside_general<P: Potential + ?Sized>(
    n: usize,
    model: &P,
    log_z: &mut [f64],
    map: &mut [f64],
    ticker: &mut Ticker<'_>,
) {
    for k in 2..=n {
        solve_level(n, k, log_z, map, ticker, |s, log_z, map| {
            let mut best_v = f64::NEG_INFINITY;
            let mut first = true;
            let mut lse = LogSumExp::new();
            for_each_split(s, |l, r| {
                let lp = model.log_potential(l, r);
                let v = lp + map[l as usize] + map[r as usize];
                if v > best_v || (first && v.is_nan()) {
                    best_v = v;
                }
                first = false;
                lse.add(lp + log_z[l as usize] + log_z[r as usize]);
            });
            (best_v, lse.ln())
        });
    }
}
