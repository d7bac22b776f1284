//! A* on Ginkgo jets minimises the cost `-ln ψ` of a hierarchy; the
//! heuristics are `h0` (admissible, derived here) and `h1` (the paper's
//! approximate bound).
//!
//! Notation as in [`crate::ginkgo`]: a cluster's 4-momentum is the sum of its
//! leaves', `t = E² - |p|²`, and a split of a parent `P` into children `L, R`
//! scores each child `c` with a term `g(T_c, t_c)`: `T_c = t_P` for the child
//! drawn first and `T_c = (√t_P - √t_first)²` for the other, with
//!
//! ```text
//! g(T, t) = c + ln λ - ln T - λ t / T          (a child that splits further)
//! g(T, t) = c + ln(1 - e^{-λ min(T, t_cut)/T})  (a child that stops; legacy: e^{-λ t_cut/T})
//! ```
//!
//! and `-ln 4π` per split (the current form averages the two orders, which is
//! at most their maximum). A hierarchy over `S` of `m` points has `m - 1`
//! splits and scores every node below `S`, `m` leaves and `m - 2` internal
//! nodes, exactly once. So an upper bound on each node's term, summed, bounds
//! the log-likelihood of every hierarchy over `S`, and its negative is an
//! admissible heuristic.
//!
//! # `h0`: the admissible heuristic
//!
//! Physical 4-momenta (`E ≥ |p|`) have non-negative Minkowski products, so
//! masses are super-additive, `√t(A ∪ B) ≥ √t(A) + √t(B)`. Hence, for any
//! node `v` below `S` with parent `P`:
//!
//! - `T_v ≤ t_P ≤ t_S` (masses grow towards the root), and `T_v ≥ t_v`;
//! - an internal node has `t_v > t_cut` (a split of a lighter parent is
//!   impossible) and `t_v ≥ t(i + j)` for any two of its points, so
//!   `t_v ≥ t_lb = max(t_cut, min over pairs of S of t(i + j))`;
//! - a leaf `i` with sibling `Q` has `T_i ≥ (√t_P - √t_Q)² =
//!   ((t_i + 2 p_i·p_Q) / (√t_P + √t_Q))² ≥ ((t_i + 2 min_k p_i·p_k) / (2 √t_S))²`,
//!   with `k` over the other points of `S` (and `t_P` itself is larger).
//!
//! The density term, `-ln T - λ t/T`, is maximal over `T` at `T = λ t`
//! (clamped to the allowed range) and decreases in `t`; the stop term
//! decreases in `T`. Each node's term is therefore bounded by its value at
//! the extreme allowed `(T, t)`, and `h0(S) = -(Σ bounds) + (m - 1) ln 4π`.
//! If `t_S` is at or below the cut (or `t_lb > t_S` with internal nodes to
//! place), no hierarchy over `S` is possible and `h0 = +∞`. Cost per vertex:
//! `O(m²)` once; the bound is tested against the exact optimum of every
//! sub-jet in the test suite.
//!
//! # `h1`: the paper's approximate heuristic
//!
//! Appendix A.7 / Algorithm 2: the leaves' `T` is bounded through the
//! smallest pair mass above the cut, `t_p⁰`; the internal nodes' `t` by a
//! level-by-level list `t_bound` (the smallest pair masses for the first
//! level, then multiples of `t_p⁰` and the lightest leaf mass), their `T`
//! by `t_bound + 2 t_p⁰` and the exponent's `T` by `t_S`. It is cheaper to
//! reason about but not proven to be a bound (the paper checked it on jets
//! of up to 9 leaves), so searches with it report `exact: false`.

use crate::ginkgo::likelihood::{Variant, mass_squared};
#[cfg(doc)]
use crate::ginkgo::model::Heuristic;
use crate::ginkgo::model::{Ginkgo, Particle};

const LN_4PI: f64 = 2.531_024_246_969_290_7;

impl Ginkgo {
    /// `c`, the truncation normaliser of the rate `λ`.
    fn norm(&self, lambda: f64) -> f64 {
        let truncation = match self.variant {
            Variant::Current => 1.0 - 1e-3,
            Variant::Legacy => 1.0,
        };
        -(-(-truncation * lambda).exp()).ln_1p()
    }

    /// The stop term `g(T, ·)` of a child that does not split further.
    fn stop(&self, lambda: f64, big_t: f64) -> f64 {
        let t_cut = self.params.t_cut;
        let x = match self.variant {
            Variant::Current => big_t.min(t_cut) / big_t,
            Variant::Legacy => t_cut / big_t,
        };
        if big_t <= 0.0 {
            return self.norm(lambda);
        }
        self.norm(lambda) + (-(-lambda * x).exp()).ln_1p()
    }

    /// The density term `g(T, t)` of a child that splits further.
    fn density(&self, lambda: f64, big_t: f64, t: f64) -> f64 {
        self.norm(lambda) + lambda.ln() - big_t.ln() - lambda * t / big_t
    }

    /// The largest density term over `T ∈ [lo, hi]` for a child of mass `t`.
    fn density_bound(&self, lambda: f64, t: f64, lo: f64, hi: f64) -> f64 {
        let big_t = (lambda * t).clamp(lo, hi);
        self.density(lambda, big_t, t)
    }

    /// Whether a leaf of mass squared `t` takes the density term.
    fn leaf_splits(&self, t: f64) -> bool {
        match self.variant {
            Variant::Current => t > self.params.t_cut,
            Variant::Legacy => false,
        }
    }

    /// The rates whose bounds a cluster's terms must respect.
    fn rates(&self, size: usize) -> Vec<f64> {
        if size == self.leaves.len() {
            vec![self.params.lambda, self.params.lambda_root]
        } else {
            vec![self.params.lambda]
        }
    }

    pub(super) fn h0(&self, pts: &[usize], stats: &Particle) -> f64 {
        let n = self.leaves.len();
        let t_cut = self.params.t_cut;
        let t_s = mass_squared(&stats.p);
        let impossible = match self.variant {
            Variant::Current => t_s <= t_cut,
            Variant::Legacy => t_s < t_cut,
        };
        if impossible || t_s <= 0.0 {
            return f64::INFINITY;
        }
        let m = pts.len();
        let mut min_pair = f64::INFINITY;
        let mut bound = -((m - 1) as f64) * LN_4PI;
        let rates = self.rates(m);
        let best = |f: &dyn Fn(f64) -> f64| {
            rates
                .iter()
                .map(|&l| f(l))
                .fold(f64::NEG_INFINITY, f64::max)
        };
        for &i in pts {
            let t_i = mass_squared(&self.leaves[i]).max(0.0);
            let mut min_dot = f64::INFINITY;
            for &k in pts {
                if k != i {
                    min_dot = min_dot.min(self.dot[i * n + k]);
                    if k > i {
                        let pair = self.pair[i * n + k];
                        min_pair = min_pair.min(pair);
                    }
                }
            }
            let lo = ((t_i + 2.0 * min_dot) / (2.0 * t_s.sqrt()))
                .powi(2)
                .max(t_i);
            bound += if self.leaf_splits(t_i) {
                best(&|l| self.density_bound(l, t_i, lo, t_s))
            } else {
                best(&|l| self.stop(l, lo.min(t_s)))
            };
        }
        if m > 2 {
            let t_lb = min_pair.max(t_cut);
            if t_lb > t_s {
                return f64::INFINITY;
            }
            let per_node = best(&|l| self.density_bound(l, t_lb, t_lb, t_s));
            bound += (m - 2) as f64 * per_node;
        }
        -bound
    }

    pub(super) fn h1(&self, pts: &[usize], stats: &Particle) -> f64 {
        let t_cut = self.params.t_cut;
        let lambda = self.params.lambda;
        let m = pts.len();
        let t_s = mass_squared(&stats.p);
        if t_s <= 0.0 {
            return f64::INFINITY;
        }
        let masses: Vec<f64> = {
            let mut v: Vec<f64> = pts
                .iter()
                .map(|&i| mass_squared(&self.leaves[i]).max(0.0))
                .collect();
            v.sort_by(f64::total_cmp);
            v
        };
        // Per point, the lightest pair with it at or above the cut.
        let mut t_min: Vec<f64> = pts
            .iter()
            .map(|&i| {
                pts.iter()
                    .filter(|&&k| k != i)
                    .map(|&k| self.pair[i * self.leaves.len() + k])
                    .filter(|&t| t >= t_cut)
                    .fold(f64::INFINITY, f64::min)
            })
            .map(|t| if t.is_finite() { t } else { t_cut })
            .collect();
        t_min.sort_by(f64::total_cmp);
        let t_p0 = t_min.iter().copied().find(|&t| t > t_cut).unwrap_or(t_cut);
        // Leaves: T = (√t_p⁰ - √t_i)², t_p⁰ itself for the heaviest.
        let mut bound = 0.0;
        for (k, &t_i) in masses.iter().enumerate() {
            let big_t = if k + 1 == m {
                t_p0
            } else {
                (t_p0.sqrt() - t_i.sqrt()).powi(2)
            };
            bound += self.stop(lambda, big_t.max(f64::MIN_POSITIVE));
        }
        if m > 2 {
            // Algorithm 2: the level-by-level lower bounds on internal t.
            let mut t_bound: Vec<f64> = t_min.iter().copied().take(m / 2).collect();
            let (mut i, mut j) = (3usize, m % 2 + m / 2);
            while t_bound.len() < m - 2 {
                t_bound.push((masses[0] * (i % 2) as f64 + t_p0 * (i / 2) as f64) * (j / 2) as f64);
                j = j / 2 + j % 2;
                i += 1;
            }
            let c = self.norm(lambda) + lambda.ln();
            for &t in t_bound.iter().take(m - 2) {
                let big_t = t + 2.0 * t_p0;
                bound += c - big_t.ln() - lambda * t / t_s;
            }
            bound -= (m - 1) as f64 * LN_4PI;
        }
        -bound
    }
}
