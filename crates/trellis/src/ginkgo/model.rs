//! The Ginkgo likelihood of one jet as a model: written once, used by every
//! algorithm.
//!
//! A cluster's summary is a [`Particle`]: its summed 4-momentum, `t` as the
//! likelihood sees it and `√t`, and its number of leaves; two clusters merge
//! by adding momenta. The dense trellis tabulates the particle of every
//! subset once (`O(2^n)`), so each of its `3^n / 2` splits reads three of them
//! and evaluates the closed-form likelihood, O(1); sparse trellises, greedy
//! and beam search, and A* (with the heuristics of `heuristic.rs`) merge
//! particles as they build clusters, for jets of any size.
//!
//! The likelihood is evaluated in its fast form (factors multiplied in
//! linear space, rate constants precomputed), which equals the log-space
//! form of [`split_log_likelihood`](super::split_log_likelihood) to rounding.

use crate::ginkgo::jets::Jet;
use crate::ginkgo::likelihood::{
    ParentBounds, Rate, SplitParams, Variant, add, mass_squared, split_bound, split_fast,
};
use crate::models::{Cluster, Model, Search, Summarize};

/// Which Ginkgo heuristic A* uses: `H0` bounds each cluster's remaining
/// cost from below, `H1` is the paper's estimate (see the [`ginkgo`
/// module](crate::ginkgo) docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Heuristic {
    /// Admissible: searches with it are exact.
    H0,
    /// The paper's faster, approximate heuristic (not proven admissible).
    H1,
}

impl crate::Named for Heuristic {
    const WHAT: &'static str = "heuristic";
    const CHOICES: &'static [(&'static str, Heuristic, &'static str)] = &[
        (
            "h0",
            Heuristic::H0,
            "Admissible (proved in the library docs): the search is exact",
        ),
        (
            "h1",
            Heuristic::H1,
            "The A* paper's faster bound, not proven admissible: results say \"exact\": false",
        ),
    ];
}

/// The Ginkgo likelihood of one jet (see the module docs): `log ψ` is the
/// log-likelihood of a split, and A* minimises its negative.
#[derive(Clone, Debug)]
pub struct Ginkgo {
    pub(super) leaves: Vec<[f64; 4]>,
    pub(super) params: SplitParams,
    pub(super) variant: Variant,
    rate: Rate,
    root_rate: Rate,
    heuristic: Heuristic,
    /// Minkowski products `p_i · p_j` (clamped at 0), row-major (for the heuristics).
    pub(super) dot: Vec<f64>,
    /// Pair masses `t(p_i + p_j)`, row-major (for the heuristics).
    pub(super) pair: Vec<f64>,
}

/// A cluster of a [`Ginkgo`] model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Particle {
    /// `(E, px, py, pz)`, the sum over the cluster's leaves.
    pub p: [f64; 4],
    /// `t = E² - |p|²` as the likelihood sees it (legacy: 0 for a leaf).
    pub t: f64,
    /// `√max(t, 0)`.
    pub s: f64,
    /// Number of leaves.
    pub size: usize,
    /// `1 / t` and a lower bound of `ln t`, for the likelihood's bound.
    bounds: ParentBounds,
}

impl Particle {
    fn new(p: [f64; 4], t: f64, size: usize) -> Particle {
        Particle {
            p,
            t,
            s: t.max(0.0).sqrt(),
            size,
            bounds: ParentBounds::of(t),
        }
    }
}

impl Ginkgo {
    /// The model of a jet, with the admissible heuristic [`Heuristic::H0`]
    /// for A*.
    pub fn new(jet: &Jet, variant: Variant) -> Ginkgo {
        let n = jet.leaves.len();
        let mut dot = vec![0.0; n * n];
        let mut pair = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                let (a, b) = (&jet.leaves[i], &jet.leaves[j]);
                dot[i * n + j] = (a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3]).max(0.0);
                pair[i * n + j] = mass_squared(&add(a, b));
            }
        }
        Ginkgo {
            leaves: jet.leaves.clone(),
            params: jet.params,
            variant,
            rate: Rate::new(variant, jet.params.lambda),
            root_rate: Rate::new(variant, jet.params.lambda_root),
            heuristic: Heuristic::H0,
            dot,
            pair,
        }
    }

    /// The same model with another A* heuristic.
    pub fn with_heuristic(mut self, heuristic: Heuristic) -> Ginkgo {
        self.heuristic = heuristic;
        self
    }

    /// The likelihood variant.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The A* heuristic in use.
    pub fn heuristic_kind(&self) -> Heuristic {
        self.heuristic
    }
}

impl Summarize for Ginkgo {
    type Summary = Particle;

    fn num_points(&self) -> usize {
        self.leaves.len()
    }

    fn leaf(&self, i: usize) -> Particle {
        let p = self.leaves[i];
        let t = match self.variant {
            Variant::Legacy => 0.0,
            Variant::Current => mass_squared(&p),
        };
        Particle::new(p, t, 1)
    }

    #[inline]
    fn merge(&self, a: Cluster<'_, Particle>, b: Cluster<'_, Particle>) -> Particle {
        let p = add(&a.summary.p, &b.summary.p);
        Particle::new(p, mass_squared(&p), a.summary.size + b.summary.size)
    }
}

impl Ginkgo {
    /// The rate of a split of `p`: `λ_root` at the root, `λ` elsewhere.
    #[inline(always)]
    fn rate_of(&self, p: &Particle) -> &Rate {
        if p.size == self.leaves.len() {
            &self.root_rate
        } else {
            &self.rate
        }
    }
}

impl Model for Ginkgo {
    #[inline]
    fn log_potential(&self, p: &Particle, l: &Particle, r: &Particle) -> f64 {
        let rate = self.rate_of(p);
        let t_cut = self.params.t_cut;
        split_fast(self.variant, rate, t_cut, l.t, r.t, p.t, l.s, r.s, p.s)
    }

    /// The likelihood bounded factor by factor (`split_bound` in
    /// `ginkgo/likelihood.rs`): no `exp` or `log`, at most a few tenths of a nat
    /// above the likelihood.
    #[inline]
    fn log_potential_bound(&self, p: &Particle, l: &Particle, r: &Particle) -> f64 {
        let rate = self.rate_of(p);
        let t_cut = self.params.t_cut;
        let (t, s) = ([l.t, r.t, p.t], [l.s, r.s, p.s]);
        split_bound(self.variant, rate, t_cut, t, s, p.bounds)
    }
}

impl Search for Ginkgo {
    fn heuristic(&self, cluster: Cluster<'_, Particle>) -> f64 {
        let pts: Vec<usize> = cluster.points.iter().collect();
        match self.heuristic {
            Heuristic::H0 => self.h0(&pts, cluster.summary),
            Heuristic::H1 => self.h1(&pts, cluster.summary),
        }
    }

    fn admissible(&self) -> bool {
        self.heuristic == Heuristic::H0
    }

    fn without(&self, cluster: Cluster<'_, Particle>, x: usize) -> Particle {
        let size = cluster.summary.size - 1;
        if size == 1 {
            // A singleton: exact momentum, and the legacy convention t = 0.
            let rest = cluster.points.iter().find(|&i| i != x).expect("two points");
            return self.leaf(rest);
        }
        let (s, q) = (&cluster.summary.p, &self.leaves[x]);
        let p = [s[0] - q[0], s[1] - q[1], s[2] - q[2], s[3] - q[3]];
        Particle::new(p, mass_squared(&p), size)
    }
}
