//! A model's split potentials over all `2^n` subsets: what the dense
//! trellis reads in its inner loops.
//!
//! The summary of every subset is tabulated once, in `O(2^n)` merges: a
//! subset `S` with highest point `h` is `S ∖ {h}` (done before, a smaller
//! mask) merged with the leaf `h`, and each block `[2^h, 2^(h+1))` of masks
//! is filled in parallel. A separable model's tables `P` and `C` are then
//! read off the summaries, which are dropped; any other model keeps the
//! summaries and is called once per split.

use crate::base::par;
use crate::base::set::{Mask, Points, full};
use crate::dense::kernel::SEPARABLE_LOG_LIMIT;
use crate::dense::pairs::{PairBlocks, block_bits};
use crate::models::{Cluster, Model, Separable, Summarize};

/// The summary of every subset of the model's points, indexed by mask
/// (entry 0, the empty set, holds a placeholder).
pub(crate) fn tabulate<M: Summarize + ?Sized>(model: &M) -> Vec<M::Summary> {
    let n = model.num_points();
    let mut table: Vec<M::Summary> = Vec::with_capacity(1usize << n);
    table.push(model.leaf(0));
    for h in 0..n {
        let leaf = model.leaf(h);
        let high = Points::Mask(1 << h);
        let done = &table[..];
        let block = par::collect_range(1usize << h, h >= 12, |rest| {
            if rest == 0 {
                leaf.clone()
            } else {
                model.merge(
                    Cluster {
                        points: Points::Mask(rest as Mask),
                        summary: &done[rest],
                    },
                    Cluster {
                        points: high,
                        summary: &leaf,
                    },
                )
            }
        });
        table.extend(block);
    }
    table
}

/// The split potentials of a model over every subset.
pub(crate) enum Potentials<S> {
    /// `log ψ(L, R) = f[|S|] · (P[S] + C[L] + C[R])`.
    Separable {
        /// `f(k)`, `k = 0..=n`.
        factors: Vec<f64>,
        /// `P(S)` per mask.
        parent: Vec<f64>,
        /// `C(T)` per mask.
        child: Vec<f64>,
        /// Whether every value stays within the range of the scaled-arithmetic
        /// kernels (see [`SEPARABLE_LOG_LIMIT`]); otherwise the log-space
        /// kernels run on these tables.
        scaled: bool,
    },
    /// The summary of every subset; `log ψ` is the model's.
    General(Vec<S>),
}

impl<S: Clone + Send + Sync> Potentials<S> {
    /// Tabulates a model (`O(2^n)` merges).
    pub(crate) fn new<M: Model<Summary = S> + ?Sized>(model: &M) -> Potentials<S> {
        let n = model.num_points();
        if let Some(Separable {
            factors,
            pairs: Some(pairs),
            ..
        }) = model.separable()
        {
            // The same values the blocked passes rebuild block by block.
            let (parent, child) = PairBlocks::new(&pairs, block_bits(n)).tables();
            let scaled = within_scaled_range(n, &factors, &parent, &child);
            return Potentials::Separable {
                factors,
                parent,
                child,
                scaled,
            };
        }
        let summaries = tabulate(model);
        match model.separable() {
            Some(sep) => {
                let terms = &sep.terms;
                let parent = par::collect_range(summaries.len(), true, |s| {
                    if s == 0 { 0.0 } else { terms(&summaries[s]).0 }
                });
                let child = par::collect_range(summaries.len(), true, |s| {
                    if s == 0 { 0.0 } else { terms(&summaries[s]).1 }
                });
                drop(summaries);
                let scaled = within_scaled_range(n, &sep.factors, &parent, &child);
                Potentials::Separable {
                    factors: sep.factors,
                    parent,
                    child,
                    scaled,
                }
            }
            None => Potentials::General(summaries),
        }
    }

    /// Bytes per subset kept after tabulation, and at the peak of it.
    pub(crate) fn bytes_per_subset<M: Model<Summary = S> + ?Sized>(model: &M) -> (u64, u64) {
        let summary = std::mem::size_of::<S>() as u64 + model.summary_heap_bytes();
        let separable = model.separable();
        if separable.as_ref().is_some_and(|s| s.pairs.is_some()) {
            (16, 16)
        } else if separable.is_some() {
            (16, summary + 16)
        } else {
            (summary, summary)
        }
    }

    /// `log ψ(left, right)` (`left` holds the lowest point of the union).
    #[inline(always)]
    pub(crate) fn log_potential<M: Model<Summary = S> + ?Sized>(
        &self,
        model: &M,
        left: Mask,
        right: Mask,
    ) -> f64 {
        let s = left | right;
        match self {
            Potentials::Separable {
                factors,
                parent,
                child,
                ..
            } => {
                factors[s.count_ones() as usize]
                    * (parent[s as usize] + child[left as usize] + child[right as usize])
            }
            Potentials::General(sum) => {
                model.log_potential(&sum[s as usize], &sum[left as usize], &sum[right as usize])
            }
        }
    }

    /// The model's [`log_potential_bound`](Model::log_potential_bound) of a
    /// split (`+∞` for the separable tables, whose kernels need none).
    #[inline(always)]
    pub(crate) fn log_potential_bound<M: Model<Summary = S> + ?Sized>(
        &self,
        model: &M,
        left: Mask,
        right: Mask,
    ) -> f64 {
        match self {
            Potentials::Separable { .. } => f64::INFINITY,
            Potentials::General(sum) => {
                let s = (left | right) as usize;
                model.log_potential_bound(&sum[s], &sum[left as usize], &sum[right as usize])
            }
        }
    }

    /// The separable tables when the scaled-arithmetic kernels apply to them.
    pub(crate) fn scaled(&self) -> Option<SeparableTables<'_>> {
        match self {
            Potentials::Separable {
                factors,
                parent,
                child,
                scaled: true,
            } => Some(SeparableTables {
                factors,
                parent,
                child,
            }),
            _ => None,
        }
    }
}

/// The tables of a separable model in the range of the scaled kernels.
#[derive(Clone, Copy)]
pub(crate) struct SeparableTables<'a> {
    pub factors: &'a [f64],
    pub parent: &'a [f64],
    pub child: &'a [f64],
}

impl SeparableTables<'_> {
    /// Whether `f` is the same for every size `k ≥ 1` (then per-level tables
    /// can be shared between levels).
    pub(crate) fn constant_factor(&self) -> bool {
        self.factors.windows(2).skip(1).all(|w| w[0] == w[1])
    }
}

/// Whether the scaled-arithmetic kernels are safe for these tables: every
/// `log Z(S)`, MAP value, outside value and table entry is bounded by
/// `(n + 2) · max |log ψ| + ln((2n-3)!!)`, which must stay below
/// [`SEPARABLE_LOG_LIMIT`]. Otherwise the trellis uses the log-space kernels,
/// which are exact for any finite potential.
///
/// A term equal to the infinity that every factor turns into `-∞` (a
/// forbidden cluster of [`crate::constraints::Constrained`]) is left out of
/// the bound: it only makes potentials zero, which the scaled kernels hold
/// exactly, provided the cluster's own `Z` is zero too. The blocked kernel
/// keeps `e^{f C(S)} Z(S)` per cluster, which loses `Z(S)` when `C(S)` is
/// that infinity; so a cluster with an infinite `C` must have an infinite
/// `P` (all its splits forbidden, `Z(S) = 0`), and a single point a finite
/// `C`. Otherwise the log-space kernels run.
fn within_scaled_range(n: usize, factors: &[f64], parent: &[f64], child: &[f64]) -> bool {
    let used = &factors[1..=n];
    let forbidden = if used.iter().all(|&f| f > 0.0) {
        Some(f64::NEG_INFINITY)
    } else if used.iter().all(|&f| f < 0.0) {
        Some(f64::INFINITY)
    } else {
        None
    };
    if let Some(m) = forbidden {
        let lost = par::fold_range(
            child.len(),
            || false,
            |lost, s| lost || (s > 0 && child[s] == m && (s.is_power_of_two() || parent[s] != m)),
            |a, b| a || b,
        );
        if lost {
            return false;
        }
    }
    let max_abs = |v: &[f64]| {
        v.iter()
            .filter(|&&x| Some(x) != forbidden)
            .fold(0.0f64, |m, x| m.max(x.abs()))
    };
    let all = full(n) as usize;
    scaled_range_holds(
        n,
        factors,
        max_abs(&parent[1..=all]),
        max_abs(&child[1..=all]),
    )
}

/// The bound of [`within_scaled_range`] from `max |P(S)|` and `max |C(S)|`
/// over the non-empty subsets.
pub(crate) fn scaled_range_holds(n: usize, factors: &[f64], max_p: f64, max_c: f64) -> bool {
    let max_f = factors.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let bound_psi = max_f * (max_p + 2.0 * max_c);
    let log_trees = (n as f64) * (2.0 * n as f64).ln();
    let bound = (n as f64 + 2.0) * bound_psi + log_trees;
    bound.is_finite() && bound < SEPARABLE_LOG_LIMIT
}
