//! Issue 21, one posterior: `trellis::posterior::Posterior` over the dense
//! and sparse trellises and `PartitionPosterior` over the flat trellis and
//! its families give every door the same answers as the engines they wrap,
//! and refuse clearly what they did not compute.

use std::ops::ControlFlow;

use trellis::flat::FlatTrellis;
use trellis::models::{CostModel, ModelName, PairwiseData};
use trellis::posterior::{Need, PartitionPosterior, Posterior};
use trellis::sparse::SparseTrellis;
use trellis::{CorrelationClustering, Hcc, Matrix, Options, Trellis, Weights};

use crate::oracle::{enumerate_trees, log_sum_exp};

fn weights(n: usize, seed: u64) -> Weights {
    let mut g = crate::oracle::Gen(seed);
    let mut upper = vec![0.0; n * n];
    for (k, v) in upper.iter_mut().enumerate() {
        if k / n < k % n {
            *v = g.unit() * 2.0 - 1.0;
        }
    }
    let rows = (0..n)
        .map(|i| (0..n).map(|j| upper[i.min(j) * n + i.max(j)]).collect())
        .collect();
    Weights::from_matrix(&Matrix::from_rows(rows).unwrap()).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
}

#[test]
fn issue21_dense_posterior_answers_as_the_trellis_and_brute_force() {
    let o = Options::default();
    for n in [3usize, 5, 6] {
        let w = weights(n, n as u64);
        let model = Hcc::new(&w, 1.3).unwrap();
        // hcc's `Need::All` is the blocked passes (the weight table, the
        // MAP pass, the outside pass on first use), not the trellis: the
        // same answers to rounding (other sums in another order).
        let post = Posterior::dense(model.clone(), Need::All, &o).unwrap();
        assert!(format!("{post:?}").contains("blocked passes"), "{post:?}");
        let t = Trellis::new(model.clone()).unwrap();
        assert!(close(post.log_z().unwrap(), t.log_z()));
        let map = post.map().unwrap();
        assert!(close(map.log_potential, t.map().log_potential));
        assert!(close(
            t.tree_log_potential(&map.tree).unwrap(),
            t.map().log_potential
        ));
        // Brute force: log Z and the MAP cost over every tree.
        let costs: Vec<f64> = enumerate_trees(n)
            .iter()
            .map(|tree| trellis::tree_cost(&model, tree).unwrap())
            .collect();
        assert!(close(
            post.log_z().unwrap(),
            log_sum_exp(costs.iter().map(|c| -1.3 * c))
        ));
        let min = costs.iter().cloned().fold(f64::INFINITY, f64::min);
        assert!(close(post.map_cost().unwrap(), min));
        // Marginals and support agree with the trellis's.
        let m = t.marginals().unwrap();
        for (c, p) in post.cluster_marginals(0.0, &o).unwrap() {
            assert!(close(p, m.p(trellis::mask_of(c.iter().copied()))));
        }
        let map_clusters = post.map().unwrap().tree.clusters();
        let support = post.support(&map_clusters, &o).unwrap();
        assert_eq!(support.len(), map_clusters.len());
        // Samples: the trellis's own, seed for seed, streamed or not, and a
        // stream that the caller stops.
        assert_eq!(post.samples(7, 3).unwrap(), t.samples(7, 3));
        let mut first = Vec::new();
        post.each_sample(7, 3, &o, &mut |s| {
            first.push(s);
            ControlFlow::Break(())
        })
        .unwrap();
        assert_eq!(first, t.samples(1, 3));
        assert_eq!(post.num_trees(), trellis::count::num_trees(n));
        assert!(post.sparsity().is_none());
    }
}

#[test]
fn issue21_single_pass_posteriors_refuse_what_they_did_not_compute() {
    let o = Options::default();
    let w = weights(6, 1);
    let m = Hcc::new(&w, 2.0).unwrap();
    let t = Trellis::new(m.clone()).unwrap();
    let logz = Posterior::dense(m.clone(), Need::LogZ, &o).unwrap();
    assert!(close(logz.log_z().unwrap(), t.log_z()));
    for e in [
        logz.map().unwrap_err().to_string(),
        logz.cluster_marginals(0.0, &o).unwrap_err().to_string(),
        logz.samples(1, 0).unwrap_err().to_string(),
    ] {
        assert!(
            e.contains("not available from a posterior built for log Z alone"),
            "{e}"
        );
    }
    let map = Posterior::dense(m, Need::Map, &o).unwrap();
    assert_eq!(map.map().unwrap().tree, t.map().tree);
    assert!(map.log_z().unwrap_err().to_string().contains("MAP alone"));
}

#[test]
fn issue21_sparse_posterior_over_every_tree_equals_the_dense_one() {
    let o = Options::default();
    let n = 5;
    let w = weights(n, 9);
    let model = Hcc::new(&w, 0.8).unwrap();
    let all = enumerate_trees(n);
    let sparse = SparseTrellis::from_trees(n, all.iter()).unwrap();
    let s = Posterior::sparse(sparse, &model, None).unwrap();
    let d = Posterior::dense(model, Need::All, &o).unwrap();
    assert!(close(s.log_z().unwrap(), d.log_z().unwrap()));
    assert!(close(s.map_cost().unwrap(), d.map_cost().unwrap()));
    let dense: std::collections::HashMap<Vec<usize>, f64> =
        d.cluster_marginals(0.0, &o).unwrap().into_iter().collect();
    for (c, p) in s.cluster_marginals(0.0, &o).unwrap() {
        assert!(close(p, dense[&c]), "{c:?}");
    }
    let sp = s.sparsity().unwrap();
    assert_eq!(sp.trees_realised, trellis::count::num_trees(n));
    assert!(close(sp.log10_sparsity, 0.0));
    // A permutation: the same posterior over relabelled points.
    let order = vec![4, 2, 0, 1, 3];
    let sparse = SparseTrellis::from_trees(n, all.iter()).unwrap();
    let w2 = {
        let rows = (0..n)
            .map(|r| (0..n).map(|c| w.get(order[r], order[c])).collect())
            .collect();
        Weights::from_matrix(&Matrix::from_rows(rows).unwrap()).unwrap()
    };
    let p = Posterior::sparse(sparse, &Hcc::new(&w2, 0.8).unwrap(), Some(order)).unwrap();
    assert!(close(p.log_z().unwrap(), d.log_z().unwrap()));
    for (c, q) in p.cluster_marginals(0.0, &o).unwrap() {
        assert!(close(q, dense[&c]), "{c:?}");
    }
    let bad = SparseTrellis::from_trees(n, all.iter()).unwrap();
    assert!(
        Posterior::sparse(bad, &Hcc::new(&w2, 0.8).unwrap(), Some(vec![0, 0, 1, 2, 3])).is_err()
    );
}

#[test]
fn issue21_partition_posterior_answers_as_the_flat_trellis() {
    let o = Options::default();
    let w = weights(6, 4);
    let e = CorrelationClustering::new(&w, 1.5).unwrap();
    let t = FlatTrellis::new(e.clone()).unwrap();
    let post = PartitionPosterior::dense(e.clone(), Need::All, &o).unwrap();
    assert_eq!(post.log_z().unwrap(), t.log_z());
    assert_eq!(post.map().unwrap(), *t.map());
    assert_eq!(post.samples(5, 2).unwrap(), t.samples(5, 2));
    assert_eq!(
        post.marginals().unwrap().pairwise_matrix(),
        t.marginals().pairwise_matrix()
    );
    assert_eq!(*post.num_partitions(), trellis::count::bell(6));
    assert!(post.family().is_none());
    let logz = PartitionPosterior::dense(e.clone(), Need::LogZ, &o).unwrap();
    assert!(close(logz.log_z().unwrap(), t.log_z()));
    assert!(logz.marginals().is_err() && logz.map().is_err());
    // The cuts of a tree: a family, with its share of all partitions.
    let tree = trellis::Tree::parse("[[0,[1,2]],[[3,4],5]]").unwrap();
    let cuts = PartitionPosterior::tree_cuts(&e, &tree).unwrap();
    let family = cuts.family().unwrap();
    assert!(family.log10_share < 0.0);
    assert!(cuts.log_z().unwrap() <= t.log_z() + 1e-12);
    assert!(cuts.marginals().is_err());
}

#[test]
fn issue21_cost_models_by_name_run_through_one_posterior() {
    let o = Options::default();
    let w = weights(5, 2);
    let d = trellis::Distances::from_similarities(&w).unwrap();
    for name in [
        ModelName::Hcc,
        ModelName::LinkageAverage,
        ModelName::LinkageComplete,
        ModelName::LinkageSingle,
    ] {
        let data = if name == ModelName::Hcc {
            PairwiseData::Weights(&w)
        } else {
            PairwiseData::Distances(&d)
        };
        let model = CostModel::build(name, data, 1.0).unwrap();
        assert_eq!(model.name(), name);
        let post =
            trellis::with_cost_model!(model, |m| Posterior::dense(m, Need::All, &o)).unwrap();
        assert!(post.log_z().unwrap().is_finite());
        let map = post.map().unwrap();
        let d = post.dendrogram(map.tree.clone()).unwrap();
        assert_eq!(d.heights().len(), 4);
    }
    // Weights for a linkage model, distances for a weight model: refused.
    assert!(CostModel::build(ModelName::LinkageAverage, PairwiseData::Weights(&w), 1.0).is_err());
    assert!(CostModel::build(ModelName::Hcc, PairwiseData::Distances(&d), 1.0).is_err());
    assert!(CostModel::build(ModelName::Ginkgo, PairwiseData::Weights(&w), 1.0).is_err());
    assert!(
        "nope"
            .parse::<ModelName>()
            .unwrap_err()
            .to_string()
            .contains("hcc, dasgupta")
    );
}
