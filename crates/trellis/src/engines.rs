//! A posterior of a model chosen by name, on the engine a door asks for:
//! the dense trellis (optionally restricted by triplets), or a sparse
//! trellis built from beam-search trees (pairwise data, jets) or from
//! Ginkgo simulator trees (jets). Every door builds its [`Posterior`] here,
//! so the same flags give the same trees, seeds and answers everywhere.
//!
//! # The sparse trellis of pairwise data
//!
//! Beam search of width `max(K, W)` on the model at β = 1 (merges ranked by
//! cost, whatever β is) gives its best `K` final beams; the trellis holds
//! their clusters and the model at β runs on it. Under triplets, beam search
//! and inference run on the restricted model and the starts are those that
//! satisfy the triplets plus the greedy tree under them
//! ([`Constrained::satisfying_starts`]), so the trellis realises at least
//! one allowed tree. Clusters are `u128` sets up to
//! [`MAX_SPARSE_POINTS`] points and wide sets beyond, and the triplets'
//! cluster masks the same type ([`crate::constraints::WideConstrained`]
//! beyond 128 points): [`sparse_pairwise_as`] forces the type.
//!
//! # Flat clusterings
//!
//! [`flat_dense`] is the flat trellis over every partition, restricted by
//! must-links and cannot-links when there are some; [`flat_tree_cuts`] the
//! partitions that cut one hierarchy (by default the average-linkage tree of
//! the weights' distances, linear time); [`flat_clusters`] the partitions
//! made of a family of clusters (`u128` sets up to
//! [`MAX_SET_POINTS`](crate::MAX_SET_POINTS) points, wide sets beyond).
//!
//! # Memory
//!
//! [`sparse_bytes`] bounds what the `K` trees and the beam search that makes
//! them hold, to check before anything is built. The dense trellis checks
//! its own tables.

use crate::constraints::{Constrained, ConstrainedEnergy, Restricted, TripletRule};
use crate::ddt::Triplet;
use crate::error::Result;
use crate::flat::Partition;
use crate::ginkgo::{Ginkgo, Jet, LeafOrdering, SparseJet, Variant, beam_trees, simulator_trees};
use crate::models::{CostModel, ModelName, PairwiseData};
use crate::posterior::{Need, PartitionPosterior, Posterior};
use crate::sparse::{MAX_SPARSE_POINTS, SparseTrellis};
use crate::{CorrelationClustering, Energy, Options, Points, Set, SetRepr, Tree, WideSet};

/// The trees a sparse trellis is built from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SparseSource {
    /// The best final beams of beam search of this width (raised to the
    /// number of trees if below).
    Beam {
        /// The beam width.
        width: usize,
    },
    /// Jets only: Ginkgo simulator trees with the jet's number of leaves
    /// and parameters, matched to its leaves by `ordering`.
    Simulator {
        /// How simulated leaves are matched to the jet's.
        ordering: LeafOrdering,
        /// The seed of the run (jet `index` of a file draws from its own
        /// stream).
        seed: u64,
    },
}

/// A sparse trellis: how many trees, and where they come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SparseSpec {
    /// The number of input trees (at least 1).
    pub trees: usize,
    /// Their source.
    pub source: SparseSource,
}

/// The bytes the `spec.trees` trees of a sparse trellis over `n` points
/// hold, with the beam search that makes them (an upper bound, to check
/// before building; the trellis's own vertices come on top).
pub fn sparse_bytes(n: usize, spec: &SparseSpec) -> u128 {
    let needed = crate::plan::tree_bytes(n).saturating_mul(2 * spec.trees as u128);
    match spec.source {
        SparseSource::Beam { width } => {
            needed.saturating_add(crate::plan::beam_bytes(n, spec.trees.max(width)))
        }
        SparseSource::Simulator { .. } => needed,
    }
}

/// The dense trellis of a cost model built by name, restricted to the trees
/// in which every triplet holds when there are triplets, computing what
/// `need` says.
///
/// # Errors
///
/// Those of [`Constrained::new`] and [`Posterior::dense`].
pub fn dense(
    model: CostModel,
    triplets: Vec<Triplet>,
    need: Need,
    options: &Options<'_>,
) -> Result<Posterior> {
    crate::with_cost_model!(model, |m| {
        if triplets.is_empty() {
            Posterior::dense(m, need, options)
        } else {
            Posterior::dense(Constrained::new(m, triplets)?, need, options)
        }
    })
}

/// The sparse trellis of model `name` at `beta` over pairwise data, from
/// `trees` beam-search trees of width `width` (see the module docs), under
/// `triplets` when there are some.
///
/// # Errors
///
/// The model's (a bad β or data), the triplets' (see
/// [`Constrained::new`]), and those of building and running the trellis.
pub fn sparse_pairwise(
    name: ModelName,
    data: PairwiseData<'_>,
    beta: f64,
    triplets: &[Triplet],
    trees: usize,
    width: usize,
) -> Result<Posterior> {
    if data.n() <= MAX_SPARSE_POINTS {
        sparse_pairwise_as::<Set>(name, data, beta, triplets, trees, width)
    } else {
        sparse_pairwise_as::<WideSet>(name, data, beta, triplets, trees, width)
    }
}

/// [`sparse_pairwise`] with clusters and the triplets' cluster masks as `S`
/// (`u128` up to 128 points, [`WideSet`] for any number): the same answer
/// on both types.
///
/// # Errors
///
/// Those of [`sparse_pairwise`], and more points than `S` holds.
pub fn sparse_pairwise_as<S: SetRepr + 'static>(
    name: ModelName,
    data: PairwiseData<'_>,
    beta: f64,
    triplets: &[Triplet],
    trees: usize,
    width: usize,
) -> Result<Posterior> {
    let unit = CostModel::build(name, data, 1.0)?;
    let trees = crate::with_cost_model!(unit, |m| {
        if triplets.is_empty() {
            beam_trees(&m, trees, Some(width))?
        } else {
            let c = Restricted::<_, TripletRule<S>>::new(m, triplets.to_vec())?;
            c.satisfying_starts(beam_trees(&c, trees, Some(width))?)?
        }
    });
    let model = CostModel::build(name, data, beta)?;
    let trellis = SparseTrellis::<S>::from_trees_as(model.data().n(), &trees)?;
    crate::with_cost_model!(model, |m| {
        if triplets.is_empty() {
            Posterior::sparse(trellis, &m, None)
        } else {
            let c = Restricted::<_, TripletRule<S>>::new(m, triplets.to_vec())?;
            Posterior::sparse(trellis, &c, None)
        }
    })
}

/// The sparse trellis of a jet (jet `index` of its file, which seeds the
/// simulator's stream) under the Ginkgo likelihood `variant`.
///
/// # Errors
///
/// Those of simulating, of beam search and of building and running the
/// trellis.
pub fn sparse_jet(
    jet: &Jet,
    variant: Variant,
    spec: &SparseSpec,
    index: usize,
) -> Result<Posterior> {
    fn infer<S: SetRepr + 'static>(sj: SparseJet<S>) -> Result<Posterior> {
        Posterior::sparse(sj.trellis, &sj.model, Some(sj.order))
    }
    fn build<S: SetRepr>(
        jet: &Jet,
        variant: Variant,
        spec: &SparseSpec,
        index: usize,
    ) -> Result<SparseJet<S>> {
        match spec.source {
            SparseSource::Beam { width } => {
                let trees = beam_trees(&Ginkgo::new(jet, variant), spec.trees, Some(width))?;
                SparseJet::new(jet, variant, &trees, LeafOrdering::Given)
            }
            SparseSource::Simulator { ordering, seed } => {
                let seed = crate::random::stream_seed(seed, index);
                let trees = simulator_trees(jet, spec.trees, ordering, seed)?;
                SparseJet::new(jet, variant, &trees, ordering)
            }
        }
    }
    if jet.len() <= MAX_SPARSE_POINTS {
        infer(build::<Set>(jet, variant, spec, index)?)
    } else {
        infer(build::<WideSet>(jet, variant, spec, index)?)
    }
}

/// The flat trellis of `energy` over every partition, computing what `need`
/// says; with must-links or cannot-links (pairs of 0-based indices), over
/// the partitions that respect them.
///
/// # Errors
///
/// Contradicting links (see [`ConstrainedEnergy::new`]), and those of
/// [`PartitionPosterior::dense`].
pub fn flat_dense<E: Energy + Send + Sync + 'static>(
    energy: E,
    must: &[(usize, usize)],
    cannot: &[(usize, usize)],
    need: Need,
    options: &Options<'_>,
) -> Result<PartitionPosterior> {
    if must.is_empty() && cannot.is_empty() {
        return PartitionPosterior::dense(energy, need, options);
    }
    PartitionPosterior::dense(ConstrainedEnergy::new(energy, must, cannot)?, need, options)
}

/// The posterior over the partitions that cut `tree`, or, without a tree,
/// the average-linkage tree of the distances `max(w) - w` of the energy's
/// weights `w`.
///
/// # Errors
///
/// A tree that is not over the energy's points, and those of the linkage.
pub fn flat_tree_cuts(
    energy: &CorrelationClustering,
    weights: &crate::Weights,
    tree: Option<&Tree>,
) -> Result<PartitionPosterior> {
    let tree = match tree {
        Some(t) => t.clone(),
        None => crate::baselines::linkage(
            &crate::baselines::distances_from_similarities(weights),
            weights.n(),
            crate::baselines::Linkage::Average,
        )?,
    };
    PartitionPosterior::tree_cuts(energy, &tree)
}

/// The posterior over the partitions made of the clusters listed in `text`
/// (one cluster per line, see [`crate::io::parse_clusters`]).
///
/// # Errors
///
/// A cluster that does not parse, and those of the sparse trellis.
pub fn flat_clusters<E: Energy + ?Sized>(text: &str, energy: &E) -> Result<PartitionPosterior> {
    fn family<S: SetRepr + 'static, E: Energy + ?Sized>(
        text: &str,
        energy: &E,
    ) -> Result<PartitionPosterior> {
        let n = energy.num_points();
        let t = SparseTrellis::flat_as(n, crate::io::parse_clusters::<S>(text, n)?)?;
        PartitionPosterior::sparse(&t, energy)
    }
    if energy.num_points() <= crate::MAX_SET_POINTS {
        family::<Set, E>(text, energy)
    } else {
        family::<WideSet, E>(text, energy)
    }
}

/// `log E` of a partition: the sum of its clusters' log-energies.
pub fn partition_log_energy<E: Energy + ?Sized>(energy: &E, p: &Partition) -> f64 {
    p.iter()
        .map(|c| energy.log_energy(&energy.summary(Points::List(c))))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Distances, Matrix};

    fn distances(n: usize) -> Distances {
        let rows: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| {
                        ((i as f64 - j as f64).abs() * 1.7 + ((i * j) % 3) as f64)
                            * (i != j) as u8 as f64
                    })
                    .collect()
            })
            .collect();
        Distances::from_matrix(&Matrix::from_rows(rows).unwrap()).unwrap()
    }

    /// A sparse trellis holds at most the trees of the full one, so its
    /// log Z is at most the dense trellis's, and its MAP tree is in it;
    /// under triplets the MAP tree satisfies them.
    #[test]
    fn sparse_is_a_lower_bound_of_dense_and_respects_triplets() {
        let d = distances(6);
        let data = PairwiseData::Distances(&d);
        let name = ModelName::LinkageAverage;
        let full = dense(
            CostModel::build(name, data, 0.7).unwrap(),
            Vec::new(),
            Need::All,
            &Options::default(),
        )
        .unwrap();
        let sparse = sparse_pairwise(name, data, 0.7, &[], 5, 5).unwrap();
        assert!(sparse.log_z().unwrap() <= full.log_z().unwrap() + 1e-9);
        assert!(sparse.sparsity().unwrap().clusters > 0);
        let t = vec![Triplet::new(0, 5, 1).unwrap()];
        let under = sparse_pairwise(name, data, 0.7, &t, 5, 5).unwrap();
        let map = under.map().unwrap().tree;
        let restricted = dense(
            CostModel::build(name, data, 0.7).unwrap(),
            t,
            Need::All,
            &Options::default(),
        )
        .unwrap();
        assert!(under.log_z().unwrap() <= restricted.log_z().unwrap() + 1e-9);
        // ({0, 5}, 1): no cluster of the MAP tree holds 1 and just one of 0, 5.
        assert!(
            map.clusters()
                .iter()
                .all(|c| !(c.contains(&1) && (c.contains(&0) != c.contains(&5))))
        );
        assert!(
            sparse_bytes(
                6,
                &SparseSpec {
                    trees: 5,
                    source: SparseSource::Beam { width: 9 }
                }
            ) > 0
        );
    }

    /// The flat builders: links dispatch to the restricted flat trellis,
    /// tree cuts and a cluster family give families.
    #[test]
    fn flat_builders() {
        let n = 5;
        let rows: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| {
                        if i == j {
                            0.0
                        } else {
                            ((i * j + i + j) % 4) as f64 * 0.4 - 0.7
                        }
                    })
                    .collect()
            })
            .collect();
        let w = crate::Weights::from_matrix(&Matrix::from_rows(rows).unwrap()).unwrap();
        let energy = CorrelationClustering::new(&w, 0.9).unwrap();
        // The dispatch: no links is the plain flat trellis, links the
        // restricted one (whose brute-force check is tests/issue24_constraints).
        let plain = flat_dense(energy.clone(), &[], &[], Need::LogZ, &Options::default()).unwrap();
        let direct = PartitionPosterior::dense(energy.clone(), Need::LogZ, &Options::default());
        assert_eq!(plain.log_z().unwrap(), direct.unwrap().log_z().unwrap());
        let post = flat_dense(
            energy.clone(),
            &[(0, 3)],
            &[(1, 2)],
            Need::All,
            &Options::default(),
        )
        .unwrap();
        let restricted = ConstrainedEnergy::new(energy.clone(), &[(0, 3)], &[(1, 2)]).unwrap();
        let direct = PartitionPosterior::dense(restricted, Need::All, &Options::default()).unwrap();
        assert_eq!(post.log_z().unwrap(), direct.log_z().unwrap());
        assert!(post.log_z().unwrap() < plain.log_z().unwrap());
        // A partition's log-energy is the sum of its clusters'.
        let p = vec![vec![0, 3], vec![1], vec![2, 4]];
        let by_cluster: f64 = p
            .iter()
            .map(|c| partition_log_energy(&energy, &vec![c.clone()]))
            .sum();
        assert!((partition_log_energy(&energy, &p) - by_cluster).abs() < 1e-12);
        // The cuts of a tree and a family of clusters are families.
        let cuts = flat_tree_cuts(&energy, &w, None).unwrap();
        assert!(cuts.family().is_some());
        let fam = flat_clusters("0 1\n2 3 4\n", &energy).unwrap();
        assert!(fam.family().is_some());
    }
}
