//! Every cluster's marginal and the pairwise co-clustering matrix of a flat
//! trellis, in one `O(2^n)` sweep over its tables (flat paper §3.3):
//! `P(c) = E(c) · Z(D ∖ c) / Z(D)` and `P(i ~ j) = Σ_{c ∋ i, j} P(c)`, the
//! second in `O(n² 2^n)` additions.

use crate::base::par;
use crate::base::set::{Mask, full, members};
use crate::error::{Error, Result};
use crate::flat::FlatTrellis;
use crate::models::Energy;

impl<E: Energy> FlatTrellis<E> {
    /// The marginal of every cluster and the pairwise co-clustering matrix.
    pub fn marginals(&self) -> FlatMarginals {
        let root = full(self.n);
        let log_z = self.log_z();
        let log_p: Vec<f64> = par::collect_range(1usize << self.n, true, |c| {
            if c == 0 {
                f64::NEG_INFINITY
            } else {
                (self.cells[c].key + self.log_z[(root ^ c as Mask) as usize] - log_z).min(0.0)
            }
        });
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
