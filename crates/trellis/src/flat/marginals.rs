//! Every cluster's marginal and the pairwise co-clustering matrix of a flat
//! trellis, in one `O(2^n)` sweep over its tables (flat paper §3.3):
//! `P(c) = E(c) · Z(D ∖ c) / Z(D)` and `P(i ~ j) = Σ_{c ∋ i, j} P(c)`, the
//! second in `O(n² 2^n)` additions.
//!
//! The first formula is a difference of huge logs at extreme β (every digit
//! of `log E(c) + log Z(D ∖ c) - log Z(D)` is lost at β = 10^300). After the
//! log-space kernel (see the module docs of the flat trellis) the marginals
//! come instead from a top-down pass over the probabilities `p(C | S)` of
//! peeling cluster `C` off the remaining points `S` (lowest point first):
//!
//! ```text
//! Q(D) = 1,   Q(S) = Σ_C Q(S ∪ C) · p(C | S ∪ C),   P(c) = Σ_S Q(S ∪ c) · p(c | S ∪ c),
//! ```
//!
//! `Q(S)` being the probability that `S` is what remains after some of the
//! clusters were peeled. `C` runs over the non-empty subsets of `D ∖ S`
//! holding a point below `min S` (so that `C` holds the lowest point of `S ∪
//! C`), and `S` over the subsets of `D ∖ c` above `min c` (`∅` included):
//! `O(3^n)` terms, one `exp` each, in log space.

use crate::base::par;
use crate::base::scaled::LogSumExp;
use crate::base::set::{Mask, for_each_level_batch, full, lowest, members};
use crate::error::{Error, Result};
use crate::flat::FlatTrellis;
use crate::models::Energy;

impl<E: Energy> FlatTrellis<E> {
    /// The marginal of every cluster and the pairwise co-clustering matrix.
    ///
    /// `O(2^n)` after the scaled kernel; `O(3^n)` after the log-space kernel
    /// (extreme temperatures, see the module docs).
    pub fn marginals(&self) -> FlatMarginals {
        let log_z = self.log_z();
        let log_p = if self.is_scaled() {
            self.direct_log_p()
        } else {
            self.peeled_log_p()
        };
        let n = self.n;
        // P(i ~ j) = Σ over clusters holding both; per-thread accumulators.
        let pairwise = par::fold_range(
            1usize << n,
            || vec![0.0f64; n * n],
            |mut acc, c| {
                let p = log_p[c].exp();
                if p > 0.0 && c.count_ones() >= 2 {
                    let pts: Vec<usize> = members(c as Mask).collect();
                    for (a, &i) in pts.iter().enumerate() {
                        for &j in &pts[a + 1..] {
                            acc[i * n + j] += p;
                        }
                    }
                }
                acc
            },
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                a
            },
        );
        let mut matrix = vec![0.0; n * n];
        for i in 0..n {
            matrix[i * n + i] = 1.0;
            for j in i + 1..n {
                let p = pairwise[i * n + j].min(1.0);
                matrix[i * n + j] = p;
                matrix[j * n + i] = p;
            }
        }
        FlatMarginals {
            n,
            log_z,
            log_p,
            pairwise: matrix,
        }
    }
}

impl<E: Energy> FlatTrellis<E> {
    /// `log P(c)` of every cluster, `E(c) Z(D ∖ c) / Z(D)` formed in scaled
    /// arithmetic from the very numbers the scaled kernel summed (so that
    /// every point's marginals sum to 1 to a few roundings, whatever the
    /// magnitude of the logs).
    fn direct_log_p(&self) -> Vec<f64> {
        let root = full(self.n);
        let z_root = self.z_scaled(root);
        par::collect_range(1usize << self.n, true, |c| {
            if c == 0 {
                f64::NEG_INFINITY
            } else {
                let c = c as Mask;
                let e = self.energy_scaled(c);
                e.mul(self.z_scaled(root ^ c)).div(z_root).ln().min(0.0)
            }
        })
    }

    /// `log P(c)` of every cluster from the peeling probabilities (see the
    /// module docs): exact at any temperature.
    fn peeled_log_p(&self) -> Vec<f64> {
        let n = self.n;
        let root = full(n);
        let size = 1usize << n;
        let mut log_q = vec![f64::NEG_INFINITY; size];
        log_q[root as usize] = 0.0;
        let mut out = Vec::new();
        for k in (1..n).rev() {
            for_each_level_batch(n, k, 1 << 12, |batch| {
                let q = &log_q;
                par::map_into(
                    batch,
                    batch.len() << (n - k) >= 1 << 15,
                    |s| {
                        // C ⊆ D ∖ S holding a point below min S.
                        let comp = root ^ s;
                        let below = comp & (lowest(s) - 1);
                        let mut lse = LogSumExp::new();
                        let mut c = comp;
                        while c != 0 {
                            if c & below != 0 {
                                let u = s | c;
                                let parent = q[u as usize];
                                if parent > f64::NEG_INFINITY {
                                    lse.add(parent + self.cluster_log_p(u, c));
                                }
                            }
                            c = (c - 1) & comp;
                        }
                        lse.ln().min(0.0)
                    },
                    &mut out,
                );
                for (&s, v) in batch.iter().zip(out.drain(..)) {
                    log_q[s as usize] = v;
                }
            });
        }
        let log_q = &log_q;
        par::collect_range(size, true, |c| {
            if c == 0 {
                return f64::NEG_INFINITY;
            }
            let c = c as Mask;
            // S ⊆ D ∖ c above min c, ∅ included.
            let low = lowest(c);
            let above = (root ^ c) & !(low | (low - 1));
            let mut lse = LogSumExp::new();
            let mut s = above;
            loop {
                let u = s | c;
                let parent = log_q[u as usize];
                if parent > f64::NEG_INFINITY {
                    lse.add(parent + self.cluster_log_p(u, c));
                }
                if s == 0 {
                    break;
                }
                s = (s - 1) & above;
            }
            lse.ln().min(0.0)
        })
    }
}

/// Every cluster's marginal and the pairwise co-clustering matrix of a [`FlatTrellis`].
#[derive(Clone, Debug)]
pub struct FlatMarginals {
    n: usize,
    log_z: f64,
    log_p: Vec<f64>,
    pairwise: Vec<f64>,
}

impl FlatMarginals {
    /// `log P(c)`: the log-probability that `cluster` is a cluster of the
    /// partition (`-∞` for the empty set or points out of range, which are
    /// never clusters).
    pub fn log_p(&self, cluster: Mask) -> f64 {
        self.log_p
            .get(cluster as usize)
            .copied()
            .unwrap_or(f64::NEG_INFINITY)
    }

    /// `P(c)`.
    pub fn p(&self, cluster: Mask) -> f64 {
        self.log_p(cluster).exp()
    }

    /// `log Z`.
    pub fn log_z(&self) -> f64 {
        self.log_z
    }

    /// `P(i ~ j)`: the probability that points `i` and `j` share a cluster
    /// (1 on the diagonal); an error for points out of range.
    pub fn pairwise(&self, i: usize, j: usize) -> Result<f64> {
        if i >= self.n || j >= self.n {
            return Err(Error::parameter(format!(
                "point {} is out of range (n = {})",
                i.max(j),
                self.n
            )));
        }
        Ok(self.pairwise[i * self.n + j])
    }

    /// Number of points.
    pub fn num_points(&self) -> usize {
        self.n
    }

    /// The `n × n` co-clustering matrix, row by row.
    pub fn pairwise_matrix(&self) -> Vec<Vec<f64>> {
        self.pairwise.chunks(self.n).map(<[f64]>::to_vec).collect()
    }

    /// Every cluster (singletons included) with probability `> 0` and `>= min_p`,
    /// most probable first (ties by mask).
    pub fn clusters(&self, min_p: f64) -> Vec<(Mask, f64)> {
        let mut out: Vec<(Mask, f64)> = (1..self.log_p.len())
            .map(|c| (c as Mask, self.log_p[c].exp()))
            .filter(|&(_, p)| p > 0.0 && p >= min_p)
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out
    }
}
