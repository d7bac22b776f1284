//! Marginals of every cluster at once: the outside pass.
//!
//! The trellis paper (§2.4, Appendix A.4) obtains the marginal of one cluster
//! `X_i` by re-running the partition-function recursion with `X_i` merged into a
//! leaf: one `O(3^n)` pass per cluster. Here one top-down *outside* pass gives
//! all `2^n` of them in `O(3^n)` total, as the inside-outside algorithm does for
//! parse trees. Let `O(S)` be the summed potential of everything *outside* the
//! subtree rooted at `S`, over the trees that contain `S`:
//!
//! ```text
//! O(X) = 1,    O(S) = Σ_{T ⊆ X∖S, T ≠ ∅}  O(S ∪ T) · ψ(S, T) · Z(T)
//! ```
//!
//! (the parent of `S` is `S ∪ T`, its sibling `T`). Then the probability that
//! `S` is a cluster of the hierarchy is
//!
//! ```text
//! P(S | X) = O(S) · Z(S) / Z(X),
//! ```
//!
//! and the marginal of a whole sub-hierarchy `H_i` rooted at `X_i` (§2.4) is
//! `φ(H_i) · O(X_i) / Z(X)`. Every `(S, T)` pair is one term, `3^n - 2^(n+1) + 1`
//! terms in all; sizes are processed from large to small, each level in
//! parallel. Separable models again avoid any `exp` in the inner loop.
//!
//! When the inside pass ran on the blocked kernel (a separable model with a
//! constant factor, such as hierarchical correlation clustering), the
//! outside pass runs there too ([`blocked::outside`]): with `F(S) = P(S) /
//! G(S)`, `G` the scaled weights of the inside pass, the recursion is a
//! subset convolution over the complements `X ∖ S` of the table being built
//! with `G`, the same blocks and vector lanes as the inside pass, about 0.13
//! ns per term per core instead of 2. Its window follows the run's weights
//! (every product of two entries a normal number) and its table is shifted
//! to the window's top; it falls back to the level-order kernel below,
//! every entry with its own exponent, when an entry leaves it (at large β:
//! clusters whose marginals are hundreds of nats below 1, the more often
//! under triplets). The blocked pass holds its table and `G` (16 bytes per
//! subset) and turns its table into the log marginals in place; for a
//! pair-form model the terms of each block are rebuilt from the pairs, so
//! a `WeightTable` with its marginals (`WeightTable::with_marginals`) holds
//! nothing else.
//!
//! Checks that hold exactly: every singleton and the root have probability 1,
//! and the probabilities of the non-singleton proper clusters sum to `n - 2`
//! (every binary tree has `n - 2` of them).
//!
//! The log-space (general) kernel computes `P(S)` directly instead, top-down
//! from the split probabilities of the inside pass,
//!
//! ```text
//! P(S) = Σ_{T ⊆ X∖S, T ≠ ∅}  P(S ∪ T) · p(S, T | S ∪ T),
//! p(L, R | S) = ψ(L, R) Z(L) Z(R) / Z(S),
//! ```
//!
//! with `log p` from the MAP values and the relative parts of `Z` (see the
//! trellis module docs), so that no difference of huge logs enters: at β =
//! 10^300, `log O(S) + log Z(S) - log Z(X)` would have lost every digit,
//! while the split probabilities are exact. The scaled kernel (whose values
//! are bounded, see `potentials.rs`) keeps the outside values above.

use std::sync::Arc;

use crate::base::memory::{self, OUTSIDE_BYTES};
use crate::base::par;
use crate::base::run::{Options, Ticker};
use crate::base::scaled::{Acc, LogSumExp, Scaled, ZERO_EXP};
use crate::base::set::{Mask, full, lowest};
use crate::base::tree::Tree;
use crate::dense::blocked::{self, KernelPath, Scale, Terms};
use crate::dense::kernel::{four_streams, level_max_exp};
use crate::dense::levels::{solve_level, update_by_size};
use crate::dense::potentials::SeparableTables;
use crate::dense::{Inside, Trellis};
use crate::error::{Error, Result};
use crate::models::Model;

/// Every cluster's marginal probability, from one outside pass over a
/// [`Trellis`]. It shares the trellis's tables, so it can outlive it.
pub struct Marginals<M: Model> {
    inside: Arc<Inside<M>>,
    /// `log P(S)` of every cluster (`-∞` for the empty set).
    log_p: Vec<f64>,
}

impl<M: Model> Clone for Marginals<M> {
    fn clone(&self) -> Self {
        Marginals {
            inside: Arc::clone(&self.inside),
            log_p: self.log_p.clone(),
        }
    }
}

impl<M: Model> std::fmt::Debug for Marginals<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Marginals").finish_non_exhaustive()
    }
}

impl<M: Model> Trellis<M> {
    /// Runs the outside pass: the marginal of every cluster, `O(3^n)`.
    pub fn marginals(&self) -> Result<Marginals<M>> {
        self.marginals_with(&Options {
            memory_limit: self.inside().memory_limit(),
            ..Options::default()
        })
    }

    /// [`Trellis::marginals`] with a memory limit and a progress callback
    /// (stage `"outside"`, counting terms; it may cancel).
    ///
    /// A trellis built with a checkpoint directory ([`Options::checkpoint`]
    /// of [`Trellis::with_options`]; else the one of `options`) keeps the
    /// finished levels of its outside pass there and resumes from them
    /// (`checkpoint.rs`): the blocked outside pass only, the others refuse
    /// a directory.
    pub fn marginals_with(&self, options: &Options<'_>) -> Result<Marginals<M>> {
        let inside = self.inside();
        let n = inside.n();
        memory::check_dense(n, OUTSIDE_BYTES << n.min(63), options.memory_limit)?;
        let terms = 3u64.pow(n as u32) + 1 - (2u64 << n);
        let mut ticker = Ticker::new(options, "outside", terms)?;
        let fresh = || {
            let mut log_p = vec![f64::NEG_INFINITY; 1usize << n];
            log_p[self.root() as usize] = 0.0;
            log_p
        };
        let wanted = inside.checkpoint().is_some() || options.checkpoint.is_some();
        let refuse = || {
            Error::parameter(
                "the marginals of this run need the level-order outside pass (weights beyond \
                 the blocked pass's range, or a model without a constant factor), which keeps \
                 no checkpoints; run it without a checkpoint directory",
            )
        };
        let log_p = match inside.potentials().scaled() {
            Some(sep) => {
                let (map, rel) = (inside.map_table(), inside.rel_table());
                let blocked = match inside.blocked_scale() {
                    Some(scale) => {
                        let path = KernelPath::choose(options.kernel)?;
                        let own_run;
                        let run = match (inside.checkpoint(), options.checkpoint) {
                            (Some(run), _) => Some(run),
                            (None, Some(dir)) => {
                                own_run = inside.run_in(dir, sep)?;
                                Some(&own_run)
                            }
                            (None, None) => None,
                        };
                        let weights = weights_of(sep, map, rel, scale);
                        let terms = Terms::Tables(sep);
                        blocked::outside(n, terms, &weights, scale, path, run, &mut ticker)?
                    }
                    None => None,
                };
                match blocked {
                    Some(log_p) => log_p,
                    None if wanted => return Err(refuse()),
                    None => {
                        let mut log_p = fresh();
                        outside_separable(n, sep, map, rel, &mut log_p, &mut ticker)?;
                        log_p
                    }
                }
            }
            None if wanted => return Err(refuse()),
            None => {
                let mut log_p = fresh();
                outside_general(inside, &mut log_p, &mut ticker)?;
                log_p
            }
        };
        Ok(Marginals {
            inside: Arc::clone(inside),
            log_p,
        })
    }
}

impl<M: Model> Marginals<M> {
    /// `log P(S | X)`: the log-probability that `cluster` is a cluster of the
    /// hierarchy (`-∞` for the empty set or points out of range, which are
    /// never clusters).
    pub fn log_p(&self, cluster: Mask) -> f64 {
        let root = full(self.inside.n());
        if cluster == 0 || cluster & !root != 0 {
            return f64::NEG_INFINITY;
        }
        self.log_p[cluster as usize]
    }

    /// Number of points.
    pub(crate) fn num_points(&self) -> usize {
        self.inside.n()
    }

    /// `log P(S | X)` of every subset mask (`-∞` for the empty set).
    pub(crate) fn log_p_table(&self) -> &[f64] {
        &self.log_p
    }

    /// `P(S | X)`, the probability that `cluster` is a cluster of the hierarchy.
    pub fn p(&self, cluster: Mask) -> f64 {
        self.log_p(cluster).exp()
    }

    /// `log Z` of the trellis.
    pub fn log_z(&self) -> f64 {
        self.inside.log_z(full(self.inside.n()))
    }

    /// `log O(S)`: the log of the summed potential outside the subtree at
    /// `cluster`, as `log P(S) - log Z(S) + log Z` (`-∞` for the empty set,
    /// points out of range, and clusters of probability 0).
    pub fn log_outside(&self, cluster: Mask) -> f64 {
        let log_p = self.log_p(cluster);
        if log_p == f64::NEG_INFINITY {
            return log_p;
        }
        log_p - self.inside.log_z(cluster) + self.log_z()
    }

    /// Every non-singleton proper cluster with probability `> 0` and `>= min_p`,
    /// most probable first (ties by mask).
    pub fn clusters(&self, min_p: f64) -> Vec<(Mask, f64)> {
        clusters_above(self.inside.n(), &self.log_p, min_p)
    }

    /// The marginal `P(H_i | X)` of a sub-hierarchy: the probability that the
    /// hierarchy contains `tree` (over some of the points) as a subtree.
    ///
    /// It is `P(S) · φ(H_i) / Z(S)` for the root `S` of `tree`, computed as
    /// `P(S)` times the probabilities of the tree's splits (exact at any β).
    pub fn subtree(&self, tree: &Tree) -> Result<f64> {
        let inside = &self.inside;
        tree.validate(inside.n(), false)?;
        let cluster = tree.mask()?;
        let mut lp = self.log_p[cluster as usize];
        for (a, b) in tree.mask_splits()? {
            lp += if lowest(a | b) & a != 0 {
                inside.split_log_p(a, b)
            } else {
                inside.split_log_p(b, a)
            };
        }
        if lp.is_nan() {
            return Err(Error::tree("the sub-hierarchy's potential is undefined"));
        }
        Ok(lp.min(0.0).exp())
    }
}

/// Every non-singleton proper cluster of the `n` points whose probability
/// (from `log_p`, by mask) is `> 0` and `>= min_p`, most probable first
/// (ties by mask).
pub(crate) fn clusters_above(n: usize, log_p: &[f64], min_p: f64) -> Vec<(Mask, f64)> {
    let root = full(n);
    let mut out: Vec<(Mask, f64)> = (1..root)
        .filter(|s| s.count_ones() >= 2)
        .map(|s| (s, log_p[s as usize].exp()))
        .filter(|&(_, p)| p > 0.0 && p >= min_p)
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

/// `Σ_T o(S ∪ T) · g(T) · h(|T|)` over the non-empty `T ⊆ X∖S`, for the outside
/// value of `set` (size `s`), as a scaled number.
///
/// As in the inside kernel, terms are scaled against a reference exponent
/// `e_ref` that bounds them from above (from the per-size maxima of `o`, `g`
/// and `h`), in four interleaved streams; if the result is not at least 2^-900
/// relative to `e_ref`, the cluster is redone with a running reference. With
/// `VARYING` false, σ is constant and `h` is one factor applied at the end.
#[inline(always)]
fn outside_cluster<const VARYING: bool>(
    set: Mask,
    root: Mask,
    o: &[Scaled],
    g: &[Scaled],
    h: &[Scaled; 33],
    e_ref_of_size: &[i32],
) -> Scaled {
    let comp = root ^ set;
    let last = o.len() - 1;
    let g = &g[..=last];
    // Every mask is below 2^n = len: masking drops the bounds checks.
    macro_rules! term {
        ($t:expr) => {{
            let t = $t;
            let (a, b) = (o[(set | t) as usize & last], g[t as usize & last]);
            if VARYING {
                let c = h[t.count_ones() as usize & 31];
                (a.mant * b.mant * c.mant, a.exp + b.exp + c.exp)
            } else {
                (a.mant * b.mant, a.exp + b.exp)
            }
        }};
    }
    let exact = || {
        let mut acc = Acc::new();
        let mut t = comp;
        while t != 0 {
            let (m, e) = term!(t);
            acc.add(m, e);
            t = (t - 1) & comp;
        }
        acc.value()
    };
    if comp.count_ones() < 3 {
        return finish::<VARYING>(exact(), h);
    }
    let e_ref = (1..=comp.count_ones() as usize)
        .map(|j| e_ref_of_size[j])
        .max()
        .unwrap_or(ZERO_EXP);
    let h1 = 1 << (31 - comp.leading_zeros());
    let h2 = 1 << (31 - (comp ^ h1).leading_zeros());
    let base = comp ^ h1 ^ h2;
    let scaled = |(m, e): (f64, i32)| {
        let d = (e - e_ref).max(-1023);
        m * f64::from_bits(((d + 1023) as u64) << 52)
    };
    macro_rules! visit {
        ($t:expr, $size:expr, $s:ident) => {
            $s += scaled(term!($t))
        };
    }
    let (mut s0, mut s1, mut s2, mut s3) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    four_streams!(base, h1, h2, 0, skip_top: false, skip_empty: true, visit,
        [s0] [s1] [s2] [s3]);
    let total = (s0 + s1) + (s2 + s3);
    if total.is_nan() || total < f64::from_bits(((1023 - 900) as u64) << 52) {
        return finish::<VARYING>(exact(), h);
    }
    let mut acc = Acc::new();
    acc.add(total, e_ref);
    finish::<VARYING>(acc.value(), h)
}

/// Applies the constant factor `h` when σ does not vary.
#[inline(always)]
fn finish<const VARYING: bool>(v: Scaled, h: &[Scaled; 33]) -> Scaled {
    if VARYING || v.mant == 0.0 {
        v
    } else {
        let mut acc = Acc::new();
        acc.add(v.mant * h[1].mant, v.exp + h[1].exp);
        acc.value()
    }
}

/// Computes `log O(S)` of every cluster of size `s` with `kernel(S, log_out)`
/// and stores it.
fn solve_outside_level(
    n: usize,
    s: usize,
    log_out: &mut Vec<f64>,
    ticker: &mut Ticker<'_>,
    kernel: impl Fn(Mask, &[f64]) -> f64 + Sync + Send,
) -> Result<()> {
    let work = (1u64 << (n - s)) - 1;
    solve_level(
        n,
        s,
        work,
        log_out,
        ticker,
        |log_out, set| kernel(set, log_out),
        |log_out, set, v| log_out[set as usize] = v,
    )
}

/// The outside pass of the scaled kernel: `log P(S)` of every cluster into
/// `log_p`.
///
/// Every number is kept in scaled arithmetic from the inside tables to the
/// end: `Z(T)` rebuilt from its MAP value and relative part exactly as the
/// inside pass rebuilt it, the outside sums never passed through a log, and
/// `P(S) = O(S) Z(S) / Z(X)` formed as a scaled product. So the marginals
/// satisfy their identities (`Σ P(S) = n - 2`) to a few roundings whatever
/// the magnitude of the logs, which a log-space round trip of `O` or `Z`
/// (an error of `2^-52` times the log) would not.
pub(crate) fn outside_separable(
    n: usize,
    sep: SeparableTables<'_>,
    map: &[f64],
    rel: &[f64],
    log_p: &mut Vec<f64>,
    ticker: &mut Ticker<'_>,
) -> Result<()> {
    let size = 1usize << n;
    let root = (size - 1) as Mask;
    let f = |k: usize| sep.factors[k];
    let z = |t: usize| Scaled::from_relative(map[t], rel[t]);
    let z_root = z(root as usize);
    // o(U) = O(U) · e^{f_|U| P(U)};  g(T) = e^{f_k C(T)} Z(T) for the parent size k
    // (the cells of the inside pass).
    let mut o = vec![Scaled::ZERO; size];
    let mut g = vec![Scaled::ZERO; size];
    let mut max_o = vec![ZERO_EXP; n + 1];
    let mut max_g = vec![ZERO_EXP; n + 1];
    o[root as usize] = Scaled::from_ln(f(n) * sep.parent[root as usize]);
    max_o[n] = o[root as usize].exp;
    let constant = sep.constant_factor();
    if constant {
        let f1 = f(n);
        update_by_size(&mut g, 1..=n, |t| {
            let t = t as usize;
            Scaled::from_ln(f1 * sep.child[t]).mul(z(t))
        });
        for (j, m) in max_g.iter_mut().enumerate().skip(1) {
            *m = level_max_exp(&g, n, j, |v| v.exp);
        }
    }
    for s in (1..n).rev() {
        if !constant {
            // Parent of S (size s) and T has size s + |T|.
            update_by_size(&mut g, 1..=n - s, |t| {
                let k = s + t.count_ones() as usize;
                let t = t as usize;
                Scaled::from_ln(f(k) * sep.child[t]).mul(z(t))
            });
            for (j, m) in max_g.iter_mut().enumerate().take(n - s + 1).skip(1) {
                *m = level_max_exp(&g, n, j, |v| v.exp);
            }
        }
        let mut state = (&mut o, &mut *log_p);
        let (g, top) = (&g, &max_o);
        solve_level(
            n,
            s,
            (1u64 << (n - s)) - 1,
            &mut state,
            ticker,
            |(o, _), set| {
                // e^{f_k C(S)} by the size j of the sibling, k = s + j.
                let c = sep.child[set as usize];
                let mut h = [Scaled::ZERO; 33];
                let mut e_ref = [ZERO_EXP; 33];
                for j in 1..=n - s {
                    h[j] = Scaled::from_ln(f(s + j) * c);
                    let h_exp = if constant { 0 } else { h[j].exp };
                    // Mantissa products stay below 8 = 2^3.
                    e_ref[j] = top[s + j]
                        .saturating_add(max_g[j])
                        .saturating_add(h_exp)
                        .saturating_add(3);
                }
                let out = if constant {
                    outside_cluster::<false>(set, root, o, g, &h, &e_ref)
                } else {
                    outside_cluster::<true>(set, root, o, g, &h, &e_ref)
                };
                let set = set as usize;
                let p = out.mul(z(set)).div(z_root).ln().min(0.0);
                (out.mul(Scaled::from_ln(f(s) * sep.parent[set])), p)
            },
            |(o, log_p), set, (o_set, p)| {
                o[set as usize] = o_set;
                log_p[set as usize] = p;
            },
        )?;
        max_o[s] = level_max_exp(&o, n, s, |v| v.exp);
    }
    Ok(())
}

/// The weights `G(S)` of the blocked inside pass at `scale` (see
/// `blocked.rs`), rebuilt from `log Z(S) = log M(S) + r(S)`: `log G(S) =
/// log Z(S) + f·C(S) - a|S| - b`, within a few units in the last place of
/// the magnitudes summed (the inside pass keeps no third table).
pub(crate) fn weights_of(
    sep: SeparableTables<'_>,
    map: &[f64],
    rel: &[f64],
    scale: Scale,
) -> Vec<f64> {
    let f = sep.factors[1];
    let mut g = vec![0.0; map.len()];
    par::update_indexed(&mut g, |s, g| {
        if s > 0 {
            let k = (s as Mask).count_ones() as f64;
            *g = (map[s] + rel[s] + f * sep.child[s] - scale.a * k - scale.b).exp();
        }
    });
    g
}

/// `log P(S)` of every cluster, top-down: `P(S) = Σ_T P(S ∪ T) · p(S, T |
/// S ∪ T)` (see the module docs), one `log ψ` and one `exp` per term.
fn outside_general<M: Model>(
    inside: &Inside<M>,
    log_p: &mut Vec<f64>,
    ticker: &mut Ticker<'_>,
) -> Result<()> {
    let n = inside.n();
    let root = full(n);
    for s in (1..n).rev() {
        solve_outside_level(n, s, log_p, ticker, |set, log_p| {
            let comp = root ^ set;
            let mut lse = LogSumExp::new();
            let mut t = comp;
            while t != 0 {
                let u = set | t;
                let parent = log_p[u as usize];
                if parent > f64::NEG_INFINITY {
                    let split = if lowest(u) & set != 0 {
                        inside.split_log_p(set, t)
                    } else {
                        inside.split_log_p(t, set)
                    };
                    lse.add(parent + split);
                }
                t = (t - 1) & comp;
            }
            lse.ln().min(0.0)
        })?;
    }
    Ok(())
}
