//! The Ginkgo likelihood as a trellis model, in both forms the library needs.
//!
//! - [`Ginkgo`] is a [`MergeModel`]: a cluster is its summed 4-momentum and
//!   size, so it scores trees, greedy and beam search, sparse trellises and A*
//!   over jets of any size.
//! - [`DenseGinkgo`] is a [`Potential`] for the dense trellis: the 4-momentum
//!   sum and invariant mass of every subset are tabulated once
//!   (`O(2^n)`), so each of the `3^n / 2` splits reads three masses and
//!   evaluates the closed-form likelihood, O(1).

use crate::error::Result;
use crate::ginkgo::jets::Jet;
use crate::ginkgo::likelihood::{SplitParams, Variant, add, mass_squared, split_log_likelihood};
use crate::memory;
use crate::merge::MergeModel;
use crate::potential::Potential;
use crate::subset::{Mask, full};

/// The Ginkgo likelihood of one jet as a [`MergeModel`].
#[derive(Clone, Debug)]
pub struct Ginkgo {
    leaves: Vec<[f64; 4]>,
    params: SplitParams,
    variant: Variant,
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
        let lambda = if a.size + b.size == self.leaves.len() {
            self.params.lambda_root
        } else {
            self.params.lambda
        };
        let t_p = mass_squared(&add(&a.p, &b.p));
        split_log_likelihood(
            self.variant,
            self.child_t(a),
            self.child_t(b),
            t_p,
            self.params.t_cut,
            lambda,
        )
    }
}

/// The Ginkgo likelihood with per-subset tables, for the dense [`Trellis`](crate::Trellis).
#[derive(Clone, Debug)]
pub struct DenseGinkgo {
    n: usize,
    params: SplitParams,
    variant: Variant,
    /// `t` of every subset (legacy: 0 for singletons).
    t: Vec<f64>,
}

impl DenseGinkgo {
    fn new(leaves: &[[f64; 4]], params: SplitParams, variant: Variant) -> Result<DenseGinkgo> {
        let n = leaves.len();
        memory::check_dense(n, 8u64 << n.min(63), None)?;
        let mut p = vec![[0.0; 4]; 1 << n];
        let mut t = vec![0.0; 1 << n];
        for s in 1..p.len() {
            let low = s.trailing_zeros() as usize;
            p[s] = add(&p[s & (s - 1)], &leaves[low]);
            t[s] = if variant == Variant::Legacy && s.count_ones() == 1 {
                0.0
            } else {
                mass_squared(&p[s])
            };
        }
        Ok(DenseGinkgo {
            n,
            params,
            variant,
            t,
        })
    }

    /// `t = E² - |p|²` of a subset's summed 4-momentum.
    pub fn mass_squared(&self, s: Mask) -> f64 {
        self.t[s as usize]
    }
}

impl Potential for DenseGinkgo {
    fn num_points(&self) -> usize {
        self.n
    }

    #[inline]
    fn log_potential(&self, left: Mask, right: Mask) -> f64 {
        let s = left | right;
        let lambda = if s == full(self.n) {
            self.params.lambda_root
        } else {
            self.params.lambda
        };
        split_log_likelihood(
            self.variant,
            self.t[left as usize],
            self.t[right as usize],
            self.t[s as usize],
            self.params.t_cut,
            lambda,
        )
    }
}
