//! The built-in cost models: hierarchical correlation clustering and Dasgupta's cost.
//!
//! Both are Gibbs potentials `log ψ(L, R) = -β · cost(L, R)` over pairwise
//! weights, and both have the separable form of [`crate::models::potential`], so every
//! split costs O(1) after `O(n · 2^n)` table building.
//!
//! **Hierarchical correlation clustering** (`hcc`; A* paper Eq. 9, the genomics
//! energy of the trellis paper Eq. 7-8 over unordered pairs):
//!
//! ```text
//! cost(L, R) = Σ_{i∈L, j∈R} max(w_ij, 0) + Σ_{i<j ∈ L} max(-w_ij, 0) + Σ_{i<j ∈ R} max(-w_ij, 0)
//!            = Pos(S) + A(L) + A(R),   A(T) = Neg(T) - Pos(T),
//! ```
//!
//! with `Pos(T)`, `Neg(T)` the sums of positive weights and of |negative|
//! weights over pairs inside `T`: cutting a positive edge or keeping a negative
//! edge together costs its weight.
//!
//! **Dasgupta's cost** (trellis paper Eq. 4, weights ≥ 0):
//!
//! ```text
//! cost(L, R) = |S| · Σ_{i∈L, j∈R} w_ij = |S| · (W(S) - W(L) - W(R)),
//! ```
//!
//! with `W(T)` the total weight inside `T`.

use crate::base::memory::{self, MODEL_BYTES};
use crate::base::set::Mask;
use crate::base::tree::Tree;
use crate::base::weights::Weights;
use crate::error::{Error, ErrorKind, Result};
use crate::models::potential::{Potential, Separable};

/// A Gibbs model `log ψ = -β · cost` whose split cost is known.
pub trait CostModel: Potential {
    /// The inverse temperature β.
    fn beta(&self) -> f64;

    /// `cost(left, right)` from the precomputed tables, O(1).
    fn split_cost(&self, left: Mask, right: Mask) -> f64;

    /// Total cost of a tree, summed split by split straight from the weights
    /// (independent of the tables; works for any number of leaves).
    fn tree_cost(&self, tree: &Tree) -> f64;
}

pub(crate) fn check_beta(beta: f64) -> Result<()> {
    if beta.is_finite() && beta >= 0.0 {
        Ok(())
    } else {
        Err(Error::parameter(format!(
            "beta must be a finite number >= 0, not {beta}"
        )))
    }
}

fn check_size(w: &Weights) -> Result<()> {
    let n = w.n();
    memory::check_dense(n, MODEL_BYTES << n.min(63), None)
}

/// Sums of a pairwise function over the pairs inside every subset,
/// `T(S) = Σ_{i<j ∈ S} f(w_ij)`, in `O(n · 2^n)`: the subset with its highest
/// point `h` removed was done before, and the new pairs are `(h, j)`.
pub(crate) fn pair_sums(w: &Weights, f: impl Fn(f64) -> f64 + Sync) -> Vec<f64> {
    use rayon::prelude::*;
    let n = w.n();
    let mut table = vec![0.0; 1usize << n];
    for h in 0..n {
        let (done, todo) = table.split_at_mut(1 << h);
        let row = w.row(h);
        let fill = |(rest, out): (usize, &mut f64)| {
            let mut s = done[rest];
            let mut bits = rest;
            while bits != 0 {
                let j = bits.trailing_zeros() as usize;
                s += f(row[j]);
                bits &= bits - 1;
            }
            *out = s;
        };
        let todo = &mut todo[..1 << h];
        if h >= 14 {
            todo.par_iter_mut().enumerate().for_each(fill);
        } else {
            todo.iter_mut().enumerate().for_each(fill);
        }
    }
    table
}

/// `cost(L, R)` of hierarchical correlation clustering, straight from the
/// weights (any number of points).
pub fn hcc_split_cost(w: &Weights, left: &[usize], right: &[usize]) -> f64 {
    let mut c = 0.0;
    for &i in left {
        for &j in right {
            c += w.get(i, j).max(0.0);
        }
    }
    for part in [left, right] {
        for (k, &i) in part.iter().enumerate() {
            for &j in &part[k + 1..] {
                c += (-w.get(i, j)).max(0.0);
            }
        }
    }
    c
}

/// Dasgupta's `cost(L, R) = |L ∪ R| · Σ_{i∈L, j∈R} w_ij`, straight from the weights.
pub fn dasgupta_split_cost(w: &Weights, left: &[usize], right: &[usize]) -> f64 {
    let cut: f64 = left
        .iter()
        .flat_map(|&i| right.iter().map(move |&j| w.get(i, j)))
        .sum();
    (left.len() + right.len()) as f64 * cut
}

/// The tables of a Gibbs cost model in separable form,
/// `cost(L, R) = σ(|S|) · (P(S) + C(L) + C(R))`, `log ψ = -β · cost`.
#[derive(Clone, Debug)]
struct CostTables {
    weights: Weights,
    beta: f64,
    /// σ(k) for k = 0..=n.
    sizes: Vec<f64>,
    /// P(S), per mask.
    parent: Vec<f64>,
    /// C(T), per mask.
    child: Vec<f64>,
}

impl CostTables {
    #[inline]
    fn split_cost(&self, left: Mask, right: Mask) -> f64 {
        let s = left | right;
        self.sizes[s.count_ones() as usize]
            * (self.parent[s as usize] + self.child[left as usize] + self.child[right as usize])
    }

    fn separable(&self) -> Separable<'_> {
        Separable {
            scale: -self.beta,
            size_factor: &self.sizes,
            parent: &self.parent,
            child: &self.child,
        }
    }
}

/// The `Potential` and `CostModel` implementations shared by the built-in
/// models, which differ only in their tables and their direct cost function.
macro_rules! cost_model {
    ($model:ident, $direct_cost:ident) => {
        impl $model {
            /// The same model at another β (the tables are reused).
            pub fn with_beta(mut self, beta: f64) -> Result<$model> {
                check_beta(beta)?;
                self.0.beta = beta;
                Ok(self)
            }

            /// The weights.
            pub fn weights(&self) -> &Weights {
                &self.0.weights
            }
        }

        impl Potential for $model {
            fn num_points(&self) -> usize {
                self.0.weights.n()
            }

            #[inline]
            fn log_potential(&self, left: Mask, right: Mask) -> f64 {
                -self.0.beta * self.0.split_cost(left, right)
            }

            fn separable(&self) -> Option<Separable<'_>> {
                Some(self.0.separable())
            }
        }

        impl CostModel for $model {
            fn beta(&self) -> f64 {
                self.0.beta
            }

            #[inline]
            fn split_cost(&self, left: Mask, right: Mask) -> f64 {
                self.0.split_cost(left, right)
            }

            fn tree_cost(&self, tree: &Tree) -> f64 {
                tree.splits()
                    .iter()
                    .map(|(l, r)| $direct_cost(&self.0.weights, l, r))
                    .sum()
            }
        }
    };
}

/// Hierarchical correlation clustering: `log ψ(L, R) = -β · cost(L, R)` with
/// the cost of the module docs. Weights of either sign.
///
/// Separable form: σ ≡ 1, `P = Pos`, `C = A = Neg - Pos`.
#[derive(Clone, Debug)]
pub struct Hcc(CostTables);

impl Hcc {
    /// Builds the per-subset tables (`O(n · 2^n)` time, 16 bytes per subset).
    pub fn new(weights: &Weights, beta: f64) -> Result<Hcc> {
        check_beta(beta)?;
        check_size(weights)?;
        let pos = pair_sums(weights, |v| v.max(0.0));
        let neg = pair_sums(weights, |v| (-v).max(0.0));
        let a = neg.iter().zip(&pos).map(|(n, p)| n - p).collect();
        Ok(Hcc(CostTables {
            weights: weights.clone(),
            beta,
            sizes: vec![1.0; weights.n() + 1],
            parent: pos,
            child: a,
        }))
    }
}

cost_model!(Hcc, hcc_split_cost);

/// Dasgupta's cost: `log ψ(L, R) = -β · |L ∪ R| · Σ_{i∈L, j∈R} w_ij`, weights ≥ 0.
///
/// Separable form: σ(k) = k, `P = W`, `C = -W`, with `W(T)` the weight inside `T`.
#[derive(Clone, Debug)]
pub struct Dasgupta(CostTables);

impl Dasgupta {
    /// Builds the per-subset tables; fails on a negative weight.
    pub fn new(weights: &Weights, beta: f64) -> Result<Dasgupta> {
        check_beta(beta)?;
        if let Some((i, j, w)) = weights.first_negative() {
            return Err(Error::new(ErrorKind::NegativeWeight { i, j, w }));
        }
        check_size(weights)?;
        let inside = pair_sums(weights, |v| v);
        let minus_inside = inside.iter().map(|v| -v).collect();
        Ok(Dasgupta(CostTables {
            weights: weights.clone(),
            beta,
            sizes: (0..=weights.n()).map(|k| k as f64).collect(),
            parent: inside,
            child: minus_inside,
        }))
    }
}

cost_model!(Dasgupta, dasgupta_split_cost);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::set::{for_each_split, members};
    use crate::base::weights::Matrix;

    #[allow(clippy::needless_range_loop)]
    fn weights(n: usize, seed: u64) -> Weights {
        let mut x = seed;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        };
        let mut rows = vec![vec![0.0; n]; n];
        for i in 0..n {
            for j in i + 1..n {
                let v = next();
                rows[i][j] = v;
                rows[j][i] = v;
            }
        }
        Weights::from_matrix(&Matrix::from_rows(rows).unwrap()).unwrap()
    }

    #[test]
    fn tables_match_direct_costs() {
        let w = weights(7, 3);
        let abs = Weights::from_matrix(&Matrix {
            rows: 7,
            cols: 7,
            data: (0..49).map(|k| w.get(k / 7, k % 7).abs()).collect(),
        })
        .unwrap();
        let hcc = Hcc::new(&w, 1.7).unwrap();
        let das = Dasgupta::new(&abs, 0.3).unwrap();
        for s in 1u32..1 << 7 {
            for_each_split(s, |l, r| {
                let (lv, rv): (Vec<_>, Vec<_>) = (members(l).collect(), members(r).collect());
                let direct = hcc_split_cost(&w, &lv, &rv);
                assert!((hcc.split_cost(l, r) - direct).abs() < 1e-12);
                let sep = hcc.separable().unwrap();
                assert!((sep.log_potential(l, r) - hcc.log_potential(l, r)).abs() < 1e-12);
                assert!((hcc.log_potential(l, r) + 1.7 * direct).abs() < 1e-12);
                let direct = dasgupta_split_cost(&abs, &lv, &rv);
                assert!((das.split_cost(l, r) - direct).abs() < 1e-12);
                let sep = das.separable().unwrap();
                assert!((sep.log_potential(l, r) - das.log_potential(l, r)).abs() < 1e-12);
            });
        }
    }

    #[test]
    fn dasgupta_rejects_negative_weights_and_bad_beta() {
        let w = weights(4, 1);
        let e = Dasgupta::new(&w, 1.0).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::NegativeWeight { .. }), "{e}");
        assert!(Hcc::new(&w, f64::NAN).is_err());
        assert!(Hcc::new(&w, -1.0).is_err());
    }
}
