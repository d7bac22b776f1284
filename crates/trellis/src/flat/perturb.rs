//! The Perturb-and-MAP approximation of the co-clustering matrix (the
//! baseline of the flat paper, §5.3.1).

use crate::base::par;
use crate::base::weights::{Matrix, Weights};
use crate::error::Result;
use crate::flat::FlatTrellis;
use crate::models::CorrelationClustering;
use crate::models::pairwise::check_beta;
use rand::RngExt;

/// The Perturb-and-MAP approximation of the pairwise co-clustering matrix
/// (Papandreou & Yuille; flat paper §5.3.1): `k` times, add Gumbel(0, 1) noise
/// to every pairwise log-energy `β w_ij`, find the MAP partition of the
/// perturbed model, and count how often each pair shares a cluster.
/// Reproducible from `seed` (sample `i` uses its own xoshiro256++ stream).
pub fn perturb_and_map(weights: &Weights, beta: f64, k: usize, seed: u64) -> Result<Vec<Vec<f64>>> {
    check_beta(beta)?;
    let n = weights.n();
    let counts = par::collect_range(k, true, |s| {
        let mut rng = crate::random::rng(crate::random::stream_seed(seed, s));
        let mut w = vec![0.0; n * n];
        for i in 0..n {
            for j in i + 1..n {
                let u: f64 = rng.random();
                let gumbel = -(-(u.max(f64::MIN_POSITIVE)).ln()).ln();
                let v = beta * weights.get(i, j) + gumbel;
                w[i * n + j] = v;
                w[j * n + i] = v;
            }
        }
        let perturbed = Weights::from_matrix(&Matrix {
            rows: n,
            cols: n,
            data: w,
        })?;
        let t = FlatTrellis::new(CorrelationClustering::new(&perturbed, 1.0)?)?;
        let mut together = vec![0u32; n * n];
        for c in &t.map().clusters {
            for (a, &i) in c.iter().enumerate() {
                for &j in &c[a + 1..] {
                    together[i * n + j] += 1;
                }
            }
        }
        Ok(together)
    })
    .into_iter()
    .collect::<Result<Vec<_>>>()?;
    let frequency = |i: usize, j: usize| {
        let (a, b) = (i.min(j), i.max(j));
        counts.iter().map(|c| c[a * n + b] as f64).sum::<f64>() / k.max(1) as f64
    };
    Ok((0..n)
        .map(|i| {
            (0..n)
                .map(|j| if i == j { 1.0 } else { frequency(i, j) })
                .collect()
        })
        .collect())
}
