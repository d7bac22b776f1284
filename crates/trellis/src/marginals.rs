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
//! Checks that hold exactly: every singleton and the root have probability 1,
//! and the probabilities of the non-singleton proper clusters sum to `n - 2`
//! (every binary tree has `n - 2` of them).

use crate::error::{Error, Result};
use crate::memory::{self, OUTSIDE_BYTES};
use crate::potential::{Potential, Separable};
use crate::scaled::{Acc, LogSumExp, Scaled};
use crate::subset::{Mask, for_each_level_batch, lowest};
use crate::tree::Tree;
use crate::trellis::{BATCH, Options, Ticker, Trellis, fill_by_size, map_batch};

/// Every cluster's marginal probability, from one outside pass over a [`Trellis`].
pub struct Marginals<'t, P> {
    trellis: &'t Trellis<P>,
    log_out: Vec<f64>,
}

impl<P> std::fmt::Debug for Marginals<'_, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Marginals").finish_non_exhaustive()
    }
}

impl<P: Potential> Trellis<P> {
    /// Runs the outside pass: the marginal of every cluster, `O(3^n)`.
    pub fn marginals(&self) -> Result<Marginals<'_, P>> {
        self.marginals_with(&Options {
            memory_limit: self.memory_limit(),
            progress: None,
        })
    }

    /// [`Trellis::marginals`] with a memory limit and a progress callback.
    pub fn marginals_with(&self, options: &Options<'_>) -> Result<Marginals<'_, P>> {
        let n = self.num_points();
        memory::check_dense(n, OUTSIDE_BYTES << n.min(63), options.memory_limit)?;
        let mut log_out = vec![f64::NEG_INFINITY; 1usize << n];
        log_out[self.root() as usize] = 0.0;
        let terms = 3u64.pow(n as u32) + 1 - (2u64 << n);
        let mut ticker = Ticker::new(options.progress, "outside", terms);
        match self.model().separable() {
            Some(sep) => outside_separable(n, &sep, self.log_z_table(), &mut log_out, &mut ticker),
            None => outside_general(self, &mut log_out, &mut ticker),
        }
        Ok(Marginals {
            trellis: self,
            log_out,
        })
    }
}

impl<P: Potential> Marginals<'_, P> {
    /// `log P(S | X)`: the log-probability that `cluster` is a cluster of the
    /// hierarchy (`-∞` for the empty set or points out of range).
    pub fn log_p(&self, cluster: Mask) -> f64 {
        if cluster == 0 || cluster & !self.trellis.root() != 0 {
            return f64::NEG_INFINITY;
        }
        let t = self.trellis;
        (self.log_out[cluster as usize] + t.log_z_of(cluster) - t.log_z()).min(0.0)
    }

    /// `P(S | X)`, the probability that `cluster` is a cluster of the hierarchy.
    pub fn p(&self, cluster: Mask) -> f64 {
        self.log_p(cluster).exp()
    }

    /// `log O(S)`: the log of the summed potential outside the subtree at `cluster`.
    pub fn log_outside(&self, cluster: Mask) -> f64 {
        self.log_out[cluster as usize]
    }

    /// Every non-singleton proper cluster with probability `> 0` and `>= min_p`,
    /// most probable first (ties by mask).
    pub fn clusters(&self, min_p: f64) -> Vec<(Mask, f64)> {
        let root = self.trellis.root();
        let mut out: Vec<(Mask, f64)> = (1..root)
            .filter(|s| s.count_ones() >= 2)
            .map(|s| (s, self.p(s)))
            .filter(|&(_, p)| p > 0.0 && p >= min_p)
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out
    }

    /// The marginal `P(H_i | X)` of a sub-hierarchy: the probability that the
    /// hierarchy contains `tree` (over some of the points) as a subtree.
    pub fn subtree(&self, tree: &Tree) -> Result<f64> {
        let t = self.trellis;
        tree.validate(t.num_points(), false)?;
        let log_phi = t.tree_log_potential(tree)?;
        let cluster = tree.mask();
        let lp = log_phi + self.log_out[cluster as usize] - t.log_z();
        if lp.is_nan() {
            return Err(Error::tree("the sub-hierarchy's potential is undefined"));
        }
        Ok(lp.min(0.0).exp())
    }
}

fn outside_separable(
    n: usize,
    sep: &Separable<'_>,
    log_z: &[f64],
    log_out: &mut [f64],
    ticker: &mut Ticker<'_>,
) {
    let size = 1usize << n;
    let root = (size - 1) as Mask;
    let f = |k: usize| sep.scale * sep.size_factor[k];
    // o(U) = O(U) · e^{f_|U| P(U)};  g(T) = e^{f_k C(T)} Z(T) for the parent size k.
    let mut o = vec![Scaled::ZERO; size];
    let mut g = vec![Scaled::ZERO; size];
    o[root as usize] = Scaled::from_ln(f(n) * sep.parent[root as usize]);
    let constant = sep.constant_size_factor();
    if constant {
        let f1 = f(n);
        fill_by_size(&mut g, 1..=n, |t| {
            Scaled::from_ln(f1 * sep.child[t as usize] + log_z[t as usize])
        });
    }
    let mut out = Vec::new();
    for s in (1..n).rev() {
        if !constant {
            // Parent of S (size s) and T has size s + |T|.
            fill_by_size(&mut g, 1..=n - s, |t| {
                let k = s + t.count_ones() as usize;
                Scaled::from_ln(f(k) * sep.child[t as usize] + log_z[t as usize])
            });
        }
        let work = (1u64 << (n - s)) - 1;
        for_each_level_batch(n, s, BATCH, |batch| {
            let (o, g) = (&o[..], &g[..]);
            let kernel = |set: Mask| {
                let comp = root ^ set;
                let c = sep.child[set as usize];
                // e^{f_k C(S)} by the size of the sibling, k = s + |T|.
                let mut h = [Scaled::ZERO; 33];
                for (j, slot) in h.iter_mut().enumerate().take(n - s + 1).skip(1) {
                    *slot = Scaled::from_ln(f(s + j) * c);
                }
                let mut acc = Acc::new();
                let mut t = comp;
                while t != 0 {
                    let (a, b, hh) = (
                        o[(set | t) as usize],
                        g[t as usize],
                        h[t.count_ones() as usize],
                    );
                    acc.add(a.mant * b.mant * hh.mant, a.exp + b.exp + hh.exp);
                    t = (t - 1) & comp;
                }
                acc.ln()
            };
            map_batch(batch, work, kernel, &mut out);
            for (&set, &v) in batch.iter().zip(&out) {
                log_out[set as usize] = v;
            }
            ticker.advance(batch.len() as u64 * work);
        });
        let log_out = &*log_out;
        fill_by_size(&mut o, s..=s, |u| {
            Scaled::from_ln(log_out[u as usize] + f(s) * sep.parent[u as usize])
        });
    }
}

fn outside_general<P: Potential>(
    trellis: &Trellis<P>,
    log_out: &mut [f64],
    ticker: &mut Ticker<'_>,
) {
    let n = trellis.num_points();
    let root = trellis.root();
    let log_z = trellis.log_z_table();
    let model = trellis.model();
    let mut out = Vec::new();
    for s in (1..n).rev() {
        let work = (1u64 << (n - s)) - 1;
        for_each_level_batch(n, s, BATCH, |batch| {
            {
                let log_out = &*log_out;
                let kernel = |set: Mask| {
                    let comp = root ^ set;
                    let mut lse = LogSumExp::new();
                    let mut t = comp;
                    while t != 0 {
                        let u = set | t;
                        let lp = if lowest(u) & set != 0 {
                            model.log_potential(set, t)
                        } else {
                            model.log_potential(t, set)
                        };
                        lse.add(log_out[u as usize] + lp + log_z[t as usize]);
                        t = (t - 1) & comp;
                    }
                    lse.ln()
                };
                map_batch(batch, work, kernel, &mut out);
            }
            for (&set, &v) in batch.iter().zip(&out) {
                log_out[set as usize] = v;
            }
            ticker.advance(batch.len() as u64 * work);
        });
    }
}
