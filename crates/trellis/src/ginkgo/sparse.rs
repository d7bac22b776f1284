//! Sparse trellises for jets: building strategies and leaf orderings (trellis
//! paper §3.1 and Appendix A.12).
//!
//! A sparse trellis is built from a sample of trees. When the trees come from
//! *other* jets with the same number of leaves (the simulator trellis, or
//! beam search over a training set), their leaves must be matched with the
//! jet's: every jet's leaves are put in an order ([`LeafOrdering`]), a
//! training tree is written over *positions* in its jet's order, and the
//! trellis over positions is applied to a jet by reading its leaves in the same
//! order. The paper's default sorts by increasing `|p|` (the norm of the
//! 3-momentum); it also studies random orders and the simulator's own order.
//!
//! - [`simulator_trees`]: `k` trees of the Ginkgo simulator with the jet's
//!   number of leaves and parameters (its rates, cut, mass and momentum);
//! - [`beam_trees`]: the best distinct final beams of beam search on a jet.
//!
//! [`SparseJet`] holds the trellis over positions with the jet's order, runs
//! inference with the Ginkgo model on the reordered leaves, and maps trees
//! back to the jet's own leaf indices.

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::base::set::{Set, SetRepr};
use crate::base::tree::Tree;
use crate::baselines::{beam_search, compact_beam_width};
use crate::error::Result;
use crate::ginkgo::jets::Jet;
use crate::ginkgo::likelihood::Variant;
use crate::ginkgo::model::Ginkgo;
use crate::ginkgo::simulator::{SimulatorParams, generate_jet};
use crate::models::Model;
use crate::sparse::SparseTrellis;

/// How a jet's leaves are put in order (their *positions*).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeafOrdering {
    /// Increasing norm of the 3-momentum `|p|` (the paper's "pT" ordering).
    Momentum,
    /// A random order, seeded (per jet: the seed is mixed with a jet number).
    Random(u64),
    /// The order of the jet's leaves as given (the simulator's DFS order).
    Given,
}

/// The jet's leaves in order: position `r` holds leaf `order[r]`.
pub fn leaf_order(leaves: &[[f64; 4]], ordering: LeafOrdering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..leaves.len()).collect();
    match ordering {
        LeafOrdering::Given => {}
        LeafOrdering::Momentum => {
            let norm = |p: &[f64; 4]| p[1] * p[1] + p[2] * p[2] + p[3] * p[3];
            order.sort_by(|&a, &b| {
                norm(&leaves[a])
                    .total_cmp(&norm(&leaves[b]))
                    .then(a.cmp(&b))
            });
        }
        LeafOrdering::Random(seed) => {
            order.shuffle(&mut Xoshiro256PlusPlus::seed_from_u64(seed));
        }
    }
    order
}

/// A tree over a jet's leaf indices, rewritten over positions in `order`.
pub fn to_positions(tree: &Tree, order: &[usize]) -> Tree {
    let mut position = vec![0; order.len()];
    for (r, &leaf) in order.iter().enumerate() {
        position[leaf] = r;
    }
    tree.relabel(|leaf| position[leaf])
}

/// The ordering of the `k`-th jet of a sample (random orders differ per jet).
fn jet_ordering(ordering: LeafOrdering, k: usize) -> LeafOrdering {
    match ordering {
        LeafOrdering::Random(seed) => LeafOrdering::Random(crate::random::stream_seed(seed, k)),
        other => other,
    }
}

/// `k` simulator trees with the jet's number of leaves and parameters (its
/// rates and cut; the mass and 3-momentum of its summed leaves), over
/// positions in `ordering`. Reproducible from `seed`.
pub fn simulator_trees(
    jet: &Jet,
    k: usize,
    ordering: LeafOrdering,
    seed: u64,
) -> Result<Vec<Tree>> {
    let params = SimulatorParams::like(jet);
    let n = jet.len();
    (0..k)
        .map(|i| {
            let sim = generate_jet(&params, seed, i, n, n)?;
            let order = leaf_order(&sim.leaves, jet_ordering(ordering, i + 1));
            Ok(to_positions(
                sim.truth.as_ref().expect("simulated truth"),
                &order,
            ))
        })
        .collect()
}

/// The best `k` distinct final beams of beam search on a model, over the
/// model's own leaf indices. `width` is the beam width; `None` takes
/// `max(k, min(3N, N(N-1)/2))`: the width of the reference's experiment
/// pipeline, or `k` if larger (the paper's `N(N-1)/2` costs `O(N⁵)`, too much
/// for the large jets sparse trellises are for). A width below `k` is raised
/// to `k`. Time grows about linearly with the width.
pub fn beam_trees<M: Model + ?Sized>(
    model: &M,
    k: usize,
    width: Option<usize>,
) -> Result<Vec<Tree>> {
    let width = k.max(width.unwrap_or_else(|| compact_beam_width(model.num_points())));
    Ok(beam_search(model, width)?
        .into_iter()
        .take(k.max(1))
        .map(|a| a.tree)
        .collect())
}

/// A sparse trellis over positions, applied to one jet; clusters are stored
/// as `S` (`u128` sets up to 128 leaves, [`WideSet`](crate::WideSet) for
/// any number).
#[derive(Clone, Debug)]
pub struct SparseJet<S: SetRepr = Set> {
    /// The trellis, over positions `0..N`.
    pub trellis: SparseTrellis<S>,
    /// Position `r` holds the jet's leaf `order[r]`.
    pub order: Vec<usize>,
    /// The Ginkgo model of the jet's leaves in position order.
    pub model: Ginkgo,
}

impl<S: SetRepr> SparseJet<S> {
    /// The trellis of `trees` (over positions) applied to `jet`, whose leaves
    /// are put in `ordering` (an error if the jet has more leaves than `S`
    /// holds).
    pub fn new(
        jet: &Jet,
        variant: Variant,
        trees: &[Tree],
        ordering: LeafOrdering,
    ) -> Result<SparseJet<S>> {
        let trellis = SparseTrellis::<S>::from_trees_as(jet.len(), trees)?;
        let order = leaf_order(&jet.leaves, jet_ordering(ordering, 0));
        let mut reordered = jet.clone();
        reordered.leaves = order.iter().map(|&i| jet.leaves[i]).collect();
        reordered.truth = None;
        Ok(SparseJet {
            trellis,
            order,
            model: Ginkgo::new(&reordered, variant),
        })
    }

    /// A tree over positions, rewritten over the jet's leaf indices.
    pub fn to_jet_leaves(&self, tree: &Tree) -> Tree {
        tree.relabel(|r| self.order[r]).canonical()
    }
}
