//! A* on Ginkgo jets: cost `-ln ψ`, and the heuristics `h0` (admissible,
//! derived here) and `h1` (the paper's approximate bound).
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

use super::{SearchModel, Set, full_set, is_singleton, points};
use crate::ginkgo::Jet;
use crate::ginkgo::likelihood::{Rate, SplitParams, Variant, add, mass_squared, split_fast};

const LN_4PI: f64 = 2.531_024_246_969_290_7;

/// Which Ginkgo heuristic (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GinkgoHeuristic {
    /// Admissible: searches with it are exact.
    H0,
    /// The paper's faster, approximate heuristic (not proven admissible).
    H1,
}

/// A cluster's statistics: summed 4-momentum, `t` as the likelihood sees it
/// (legacy: 0 for a leaf) and its square root.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JetStats {
    /// Summed 4-momentum.
    pub p: [f64; 4],
    /// `t` of the cluster for the likelihood.
    pub t: f64,
    /// `√max(t, 0)`.
    pub s: f64,
}

/// The Ginkgo likelihood of one jet as an A* model: cost = `-ln ψ`.
#[derive(Clone, Debug)]
pub struct GinkgoSearch {
    leaves: Vec<[f64; 4]>,
    params: SplitParams,
    variant: Variant,
    rate: Rate,
    root_rate: Rate,
    heuristic: GinkgoHeuristic,
    /// Minkowski products `p_i · p_j`, row-major.
    dot: Vec<f64>,
    /// Pair masses `t(p_i + p_j)`, row-major.
    pair: Vec<f64>,
}

impl GinkgoSearch {
    /// The model of a validated jet (at most 128 leaves).
    pub fn new(
        jet: &Jet,
        variant: Variant,
        heuristic: GinkgoHeuristic,
    ) -> crate::Result<GinkgoSearch> {
        let n = jet.leaves.len();
        super::engine::check_points(n)?;
        let mut dot = vec![0.0; n * n];
        let mut pair = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                let (a, b) = (&jet.leaves[i], &jet.leaves[j]);
                dot[i * n + j] = (a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3]).max(0.0);
                pair[i * n + j] = mass_squared(&add(a, b));
            }
        }
        Ok(GinkgoSearch {
            leaves: jet.leaves.clone(),
            params: jet.params,
            variant,
            rate: Rate::new(variant, jet.params.lambda),
            root_rate: Rate::new(variant, jet.params.lambda_root),
            heuristic,
            dot,
            pair,
        })
    }

    /// The heuristic in use.
    pub fn heuristic_kind(&self) -> GinkgoHeuristic {
        self.heuristic
    }

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

    /// The rates whose bounds a set's terms must respect.
    fn rates(&self, set: Set) -> Vec<f64> {
        if set == full_set(self.leaves.len()) {
            vec![self.params.lambda, self.params.lambda_root]
        } else {
            vec![self.params.lambda]
        }
    }

    fn h0(&self, set: Set, stats: &JetStats) -> f64 {
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
        let pts: Vec<usize> = points(set).collect();
        let m = pts.len();
        let mut min_pair = f64::INFINITY;
        let mut bound = -((m - 1) as f64) * LN_4PI;
        let rates = self.rates(set);
        let best = |f: &dyn Fn(f64) -> f64| {
            rates
                .iter()
                .map(|&l| f(l))
                .fold(f64::NEG_INFINITY, f64::max)
        };
        for &i in &pts {
            let t_i = mass_squared(&self.leaves[i]).max(0.0);
            let mut min_dot = f64::INFINITY;
            for &k in &pts {
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

    fn h1(&self, set: Set, stats: &JetStats) -> f64 {
        let t_cut = self.params.t_cut;
        let lambda = self.params.lambda;
        let pts: Vec<usize> = points(set).collect();
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

impl SearchModel for GinkgoSearch {
    type Stats = JetStats;

    fn num_points(&self) -> usize {
        self.leaves.len()
    }

    fn stats(&self, set: Set) -> JetStats {
        let mut p = [0.0; 4];
        for i in points(set) {
            p = add(&p, &self.leaves[i]);
        }
        let t = if self.variant == Variant::Legacy && set.count_ones() == 1 {
            0.0
        } else {
            mass_squared(&p)
        };
        JetStats {
            p,
            t,
            s: t.max(0.0).sqrt(),
        }
    }

    fn moved(&self, set: Set, stats: &JetStats, x: usize, added: bool) -> JetStats {
        let q = &self.leaves[x];
        let p = if added {
            add(&stats.p, q)
        } else {
            [
                stats.p[0] - q[0],
                stats.p[1] - q[1],
                stats.p[2] - q[2],
                stats.p[3] - q[3],
            ]
        };
        let new = if added {
            set | 1u128 << x
        } else {
            set & !(1u128 << x)
        };
        if is_singleton(new) {
            // A singleton: exact momentum, and the legacy convention t = 0.
            return self.stats(new);
        }
        let t = mass_squared(&p);
        JetStats {
            p,
            t,
            s: t.max(0.0).sqrt(),
        }
    }

    #[inline]
    fn split_cost(&self, p: (Set, &JetStats), l: (Set, &JetStats), r: (Set, &JetStats)) -> f64 {
        let rate = if p.0 == full_set(self.leaves.len()) {
            &self.root_rate
        } else {
            &self.rate
        };
        let ll = split_fast(
            self.variant,
            rate,
            self.params.t_cut,
            l.1.t,
            r.1.t,
            p.1.t,
            l.1.s,
            r.1.s,
            p.1.s,
        );
        -ll
    }

    fn heuristic(&self, set: Set, stats: &JetStats) -> f64 {
        match self.heuristic {
            GinkgoHeuristic::H0 => self.h0(set, stats),
            GinkgoHeuristic::H1 => self.h1(set, stats),
        }
    }

    fn admissible(&self) -> bool {
        self.heuristic == GinkgoHeuristic::H0
    }

    fn log_potential(&self, cost: f64) -> f64 {
        -cost
    }
}
