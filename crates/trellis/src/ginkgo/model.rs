//! The Ginkgo likelihood as a trellis model, in both forms the library needs.
//!
//! - [`Ginkgo`] is a [`MergeModel`]: a cluster is its summed 4-momentum and
//!   size, so it scores trees, greedy and beam search, sparse trellises and A*
//!   over jets of any size.
//! - [`DenseGinkgo`] is a [`Potential`] for the dense trellis: the invariant
//!   mass squared of every subset's summed 4-momentum, and its square root,
//!   are tabulated once (`O(2^n)`), so each of the `3^n / 2` splits reads
//!   three of them and evaluates the closed-form likelihood, O(1).
//!
//! Both evaluate the likelihood in its fast form (factors multiplied in
//! linear space, rate constants precomputed), which equals the log-space
//! form of [`split_log_likelihood`](super::split_log_likelihood) to rounding.

use crate::base::memory;
use crate::base::set::{Mask, full};
use crate::error::Result;
use crate::ginkgo::jets::Jet;
use crate::ginkgo::likelihood::{Rate, SplitParams, Variant, add, mass_squared, split_fast};
use crate::models::merge::MergeModel;
use crate::models::potential::Potential;

/// The Ginkgo likelihood of one jet as a [`MergeModel`].
#[derive(Clone, Debug)]
pub struct Ginkgo {
    leaves: Vec<[f64; 4]>,
    params: SplitParams,
    variant: Variant,
    rate: Rate,
    root_rate: Rate,
}

/// A cluster of a [`Ginkgo`] model: summed 4-momentum and number of leaves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Particle {
    /// `(E, px, py, pz)`, the sum over the cluster's leaves.
    pub p: [f64; 4],
    /// Number of leaves.
    pub size: usize,
}

impl Ginkgo {
    /// The model of a jet.
    pub fn new(jet: &Jet, variant: Variant) -> Ginkgo {
        Ginkgo {
            leaves: jet.leaves.clone(),
            params: jet.params,
            variant,
            rate: Rate::new(variant, jet.params.lambda),
            root_rate: Rate::new(variant, jet.params.lambda_root),
        }
    }

    /// The likelihood variant.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The dense form (per-subset tables) for the exact trellis; at most
    /// [`MAX_POINTS`](crate::MAX_POINTS) leaves.
    pub fn dense(&self) -> Result<DenseGinkgo> {
        DenseGinkgo::new(&self.leaves, self.params, self.variant)
    }

    /// `t` of a child as the likelihood sees it (legacy: 0 for a leaf).
    #[inline]
    fn child_t(&self, c: &Particle) -> f64 {
        if self.variant == Variant::Legacy && c.size == 1 {
            0.0
        } else {
            mass_squared(&c.p)
        }
    }
}

impl MergeModel for Ginkgo {
    type Cluster = Particle;

    fn num_points(&self) -> usize {
        self.leaves.len()
    }

    fn leaf(&self, i: usize) -> Particle {
        Particle {
            p: self.leaves[i],
            size: 1,
        }
    }

    fn merge(&self, a: &Particle, b: &Particle) -> Particle {
        Particle {
            p: add(&a.p, &b.p),
            size: a.size + b.size,
        }
    }

    fn log_potential(&self, a: &Particle, b: &Particle) -> f64 {
        let rate = if a.size + b.size == self.leaves.len() {
            &self.root_rate
        } else {
            &self.rate
        };
        let (t_l, t_r) = (self.child_t(a), self.child_t(b));
        let t_p = mass_squared(&add(&a.p, &b.p));
        split_fast(
            self.variant,
            rate,
            self.params.t_cut,
            t_l,
            t_r,
            t_p,
            t_l.max(0.0).sqrt(),
            t_r.max(0.0).sqrt(),
            t_p.max(0.0).sqrt(),
        )
    }
}

/// The Ginkgo likelihood with per-subset tables, for the dense [`Trellis`](crate::Trellis).
#[derive(Clone, Debug)]
pub struct DenseGinkgo {
    n: usize,
    t_cut: f64,
    variant: Variant,
    rate: Rate,
    root_rate: Rate,
    /// `(t, √t)` of every subset (legacy: 0 for singletons; `√` of `max(t, 0)`).
    t: Vec<(f64, f64)>,
}

impl DenseGinkgo {
    fn new(leaves: &[[f64; 4]], params: SplitParams, variant: Variant) -> Result<DenseGinkgo> {
        let n = leaves.len();
        memory::check_dense(n, 8u64 << n.min(63), None)?;
        let mut p = vec![[0.0; 4]; 1 << n];
        let mut t = vec![(0.0, 0.0); 1 << n];
        for s in 1..p.len() {
            let low = s.trailing_zeros() as usize;
            p[s] = add(&p[s & (s - 1)], &leaves[low]);
            let m2 = if variant == Variant::Legacy && s.count_ones() == 1 {
                0.0
            } else {
                mass_squared(&p[s])
            };
            t[s] = (m2, m2.max(0.0).sqrt());
        }
        Ok(DenseGinkgo {
            n,
            t_cut: params.t_cut,
            variant,
            rate: Rate::new(variant, params.lambda),
            root_rate: Rate::new(variant, params.lambda_root),
            t,
        })
    }

    /// `t = E² - |p|²` of a subset's summed 4-momentum.
    pub fn mass_squared(&self, s: Mask) -> f64 {
        self.t[s as usize].0
    }
}

impl Potential for DenseGinkgo {
    fn num_points(&self) -> usize {
        self.n
    }

    #[inline]
    fn log_potential(&self, left: Mask, right: Mask) -> f64 {
        let s = left | right;
        let rate = if s == full(self.n) {
            &self.root_rate
        } else {
            &self.rate
        };
        let ((t_l, s_l), (t_r, s_r), (t_p, s_p)) = (
            self.t[left as usize],
            self.t[right as usize],
            self.t[s as usize],
        );
        split_fast(self.variant, rate, self.t_cut, t_l, t_r, t_p, s_l, s_r, s_p)
    }
}
