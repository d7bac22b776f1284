//! Seeded randomness shared by every random method of the crate.
//!
//! Every random algorithm takes a `u64` seed and draws from xoshiro256++
//! ([`rng`]); runs that use many independent streams (one per jet, per
//! perturbation, per task) derive stream `k`'s seed with [`stream_seed`], so a
//! result depends only on the seed and the stream's index, never on thread
//! scheduling. [`standard_normal`] is the one normal sampler (Box-Muller).

use rand::{Rng, RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The generator of every seeded method: xoshiro256++ seeded by SplitMix64
/// from `seed`.
pub type SeededRng = Xoshiro256PlusPlus;

/// A generator seeded from `seed`.
pub fn rng(seed: u64) -> SeededRng {
    SeededRng::seed_from_u64(seed)
}

/// The seed of stream `k` of a run seeded with `seed`:
/// `seed ^ ((k + 1) · 0x9E3779B97F4A7C15)` (wrapping), distinct for every
/// `k` and never equal to `seed` itself.
pub fn stream_seed(seed: u64, k: usize) -> u64 {
    seed ^ (k as u64)
        .wrapping_add(1)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// A standard normal draw by Box-Muller (one of the pair):
/// `√(-2 ln u₁) · cos(2π u₂)` with `u₁ ∈ (0, 1]`, `u₂ ∈ [0, 1)`.
pub fn standard_normal<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_draws_have_unit_moments() {
        let mut r = rng(7);
        let k = 200_000;
        let xs: Vec<f64> = (0..k).map(|_| standard_normal(&mut r)).collect();
        let mean = xs.iter().sum::<f64>() / k as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / k as f64;
        // Standard errors: 1/√k ≈ 0.0022 for the mean, √(2/k) ≈ 0.0032 for the variance.
        assert!(mean.abs() < 0.011, "mean {mean}");
        assert!((var - 1.0).abs() < 0.016, "variance {var}");
        assert!(xs.iter().all(|x| x.is_finite()));
    }

    #[test]
    fn streams_differ() {
        let seeds: std::collections::HashSet<u64> = (0..1000).map(|k| stream_seed(5, k)).collect();
        assert_eq!(seeds.len(), 1000);
        assert!(!seeds.contains(&5));
    }
}
