//! Issue 26: the exact posterior summaries (`trellis::summary`) against brute
//! force over all `(2n-3)!!` trees and all Bell(n) partitions: the MCC
//! tree's credibility, optimality and support values, the majority-rule
//! consensus clusters, the Binder-optimal partition's expected loss and
//! optimality; the MCC pass on the blocked kernel against the general
//! kernel on every vector path; the sparse trellis's MCC against the dense
//! one on the full family; the refusals.

use trellis::posterior::{Need, PartitionPosterior, Posterior};
use trellis::summary::{CladeCredibility, SupportTree, binder_loss, consensus_tree, mcc_tree};
use trellis::{CorrelationClustering, Dasgupta, General, Hcc, KernelPath, Mask, Options, Trellis};

use crate::oracle::{
    Brute, NaiveDasgupta, NaiveHcc, TableModel, abs_matrix, lib_weights, points, random_weights,
    trees,
};

/// `Σ log P(C)` over the non-trivial clusters of every enumerated tree.
fn brute_credibilities(b: &Brute) -> Vec<f64> {
    let n = b.n;
    let root = (1u32 << n) - 1;
    trees(n)
        .iter()
        .map(|t| {
            t.splits
                .iter()
                .map(|&(l, r)| l | r)
                .filter(|&s| s != root)
                .map(|s| b.log_marg[s as usize])
                .sum()
        })
        .collect()
}

/// The masks of a summary tree's clusters.
fn masks(t: &SupportTree) -> Vec<Mask> {
    t.clades()
        .iter()
        .map(|c| c.members.iter().fold(0, |m, &i| m | 1 << i))
        .collect()
}

/// Checks an MCC tree against brute force: its credibility is the largest
/// over all trees (by the brute-force marginals of its own clusters too),
/// its support values are the brute-force marginals, and it is binary.
fn check_mcc(t: &SupportTree, b: &Brute, what: &str) {
    let n = b.n;
    let cred = brute_credibilities(b);
    let best = cred.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let tol = 32.0 * b.tol_log() * n as f64 + 1e-10;
    assert!(t.is_binary(), "{what}: the MCC tree is binary");
    let got = t.log_credibility().expect("an MCC tree has a credibility");
    assert!(
        (got - best).abs() <= tol,
        "{what}: log credibility {got} vs brute force {best}"
    );
    let own: f64 = masks(t).iter().map(|&s| b.log_marg[s as usize]).sum();
    assert!(
        (own - best).abs() <= tol,
        "{what}: the tree's brute-force credibility {own} vs the best {best}"
    );
    for (c, s) in t.clades().iter().zip(masks(t)) {
        assert!(
            (c.p - b.p(s)).abs() <= b.tol_p() + 1e-10,
            "{what}: support of {:?}: {} vs {}",
            c.members,
            c.p,
            b.p(s)
        );
    }
    // A unique optimum (by more than the tolerance) is found exactly.
    let mut sorted = cred.clone();
    sorted.sort_by(|a, b| b.total_cmp(a));
    if sorted.len() > 1 && sorted[0] - sorted[1] > 2.0 * tol {
        let k = cred.iter().position(|&c| c == best).unwrap();
        let want = trees(n)[k].tree.clone().canonical();
        assert_eq!(t.to_binary().unwrap(), want, "{what}: the unique MCC tree");
    }
}

/// Checks a consensus tree against brute force: exactly the clusters whose
/// brute-force marginal passes the threshold (cases within rounding of the
/// threshold are skipped), with their marginals.
fn check_consensus(t: &SupportTree, b: &Brute, threshold: f64, what: &str) -> bool {
    let n = b.n;
    let tol = b.tol_p() + 1e-10;
    let root = (1u32 << n) - 1;
    let mut want = Vec::new();
    for s in 1..root {
        if s.count_ones() < 2 {
            continue;
        }
        let p = b.p(s);
        if (p - threshold).abs() <= tol {
            return false; // ambiguous in floating point
        }
        if p > threshold {
            want.push(s);
        }
    }
    let mut got = masks(t);
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want, "{what}: consensus clusters at {threshold}");
    for (c, s) in t.clades().iter().zip(masks(t)) {
        assert!(
            (c.p - b.p(s)).abs() <= tol,
            "{what}: support of {:?}",
            c.members
        );
    }
    true
}

fn hcc_case(n: usize, seed: u64, beta: f64) -> (Posterior, Brute) {
    let w = random_weights(n, seed, 1.0);
    let model = Hcc::new(&lib_weights(&w), beta).unwrap();
    let post = Posterior::dense(model, Need::All, &Options::default()).unwrap();
    (post, Brute::new(&NaiveHcc { w, beta }))
}

fn dasgupta_case(n: usize, seed: u64, beta: f64) -> (Posterior, Brute) {
    let w = abs_matrix(&random_weights(n, seed, 1.0));
    let model = Dasgupta::new(&lib_weights(&w), beta).unwrap();
    let post = Posterior::dense(model, Need::All, &Options::default()).unwrap();
    (post, Brute::new(&NaiveDasgupta { w, beta }))
}

#[test]
fn mcc_and_consensus_match_brute_force() {
    let mut checked = 0;
    for n in 3..=7 {
        for seed in 0..3u64 {
            for &beta in &[0.3, 2.0, 8.0] {
                let s = 2600 + 100 * n as u64 + seed;
                for (kind, (post, b)) in [
                    ("hcc", hcc_case(n, s, beta)),
                    ("dasgupta", dasgupta_case(n, s, beta)),
                ] {
                    let what = format!("{kind} n={n} seed={s} beta={beta}");
                    let o = Options::default();
                    check_mcc(&post.mcc_tree(&o).unwrap(), &b, &what);
                    for &t in &[0.5, 0.7, 0.95] {
                        let c = post.consensus_tree(t, &o).unwrap();
                        assert!(c.log_credibility().is_none());
                        if check_consensus(&c, &b, t, &what) {
                            checked += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(
        checked > 200,
        "only {checked} consensus cases were unambiguous"
    );
}

#[test]
fn mcc_with_zero_marginals_matches_brute_force() {
    // Forbidden splits (log ψ = -∞) give clusters of marginal 0, log P = -∞.
    let mut zeros = 0;
    for n in 4..=7 {
        for seed in 0..4u64 {
            let model = TableModel::random(n, 2700 + seed + 10 * n as u64, 1.5, 1.0, true, true);
            let b = Brute::new(&model);
            let trellis = Trellis::new(model.clone()).unwrap();
            let m = trellis.marginals().unwrap();
            zeros += (1..(1u32 << n) - 1).filter(|&s| m.p(s) == 0.0).count();
            let what = format!("table n={n} seed={seed}");
            let t = mcc_tree(&m, &Options::default()).unwrap();
            check_mcc(&t, &b, &what);
            assert!(t.log_credibility().unwrap().is_finite());
            assert!(t.clades().iter().all(|c| c.p > 0.0));
            let c = consensus_tree(&m, 0.5).unwrap();
            check_consensus(&c, &b, 0.5, &what);
        }
    }
    assert!(
        zeros > 0,
        "the forbidden splits gave no cluster of marginal 0"
    );
}

#[test]
fn blocked_and_general_kernels_agree_on_the_mcc_pass() {
    for n in [5usize, 9, 12] {
        for seed in 0..3u64 {
            let w = random_weights(n, 2800 + seed, 1.0);
            let model = Hcc::new(&lib_weights(&w), 1.5).unwrap();
            let m = Trellis::new(model).unwrap().marginals().unwrap();
            let table: Vec<f64> = (0..1u32 << n).map(|s| m.log_p(s)).collect();
            let clade = CladeCredibility::new(n, &table).unwrap();
            let general = Trellis::map_only(&General(&clade), &Options::default()).unwrap();
            for path in KernelPath::ALL.into_iter().filter(|p| p.available()) {
                let options = Options {
                    kernel: Some(path),
                    ..Options::default()
                };
                let blocked = Trellis::map_only(&clade, &options).unwrap();
                assert_eq!(blocked.tree, general.tree, "n={n} seed={seed} {path:?}");
                let tol = 1e-12 * (1.0 + general.log_potential.abs());
                assert!(
                    (blocked.log_potential - general.log_potential).abs() <= tol,
                    "{} vs {}",
                    blocked.log_potential,
                    general.log_potential
                );
                let t = mcc_tree(&m, &options).unwrap();
                assert_eq!(t.to_binary().unwrap(), general.tree.clone().canonical());
            }
        }
    }
}

#[test]
fn sparse_mcc_on_the_full_family_is_the_dense_one() {
    for n in 4..=7 {
        let w = random_weights(n, 2900 + n as u64, 1.0);
        let model = Hcc::new(&lib_weights(&w), 2.0).unwrap();
        let family = (1u128..(1u128 << n) - 1).filter(|s| s.count_ones() >= 2);
        let sparse = trellis::sparse::SparseTrellis::from_clusters(n, family).unwrap();
        let sp = Posterior::sparse(sparse, &model, None).unwrap();
        let dense = Posterior::dense(model, Need::All, &Options::default()).unwrap();
        let o = Options::default();
        let (a, b) = (sp.mcc_tree(&o).unwrap(), dense.mcc_tree(&o).unwrap());
        // Both are the MCC tree by brute force (ties may differ between them).
        let brute = Brute::new(&NaiveHcc { w, beta: 2.0 });
        check_mcc(&a, &brute, &format!("sparse n={n}"));
        check_mcc(&b, &brute, &format!("dense n={n}"));
        let (x, y) = (a.log_credibility().unwrap(), b.log_credibility().unwrap());
        assert!((x - y).abs() <= 1e-9, "{x} vs {y}");
        let (a, b) = (
            sp.consensus_tree(0.5, &o).unwrap(),
            dense.consensus_tree(0.5, &o).unwrap(),
        );
        assert_eq!(a.to_string(), b.to_string());
    }
}

#[test]
fn consensus_thresholds_are_checked() {
    let (post, _) = hcc_case(5, 1, 1.0);
    let o = Options::default();
    for bad in [0.49, 1.01, f64::NAN, -1.0] {
        let e = post.consensus_tree(bad, &o).unwrap_err();
        assert!(e.to_string().contains("between 0.5 and 1"), "{e}");
    }
    // At 1, the strict consensus: no cluster is in every tree here, so the star.
    let star = post.consensus_tree(1.0, &o).unwrap();
    assert_eq!(star.to_string(), "[0,1,2,3,4]");
    // A posterior without marginals cannot summarise.
    let w = random_weights(5, 3, 1.0);
    let map = Posterior::dense(Hcc::new(&lib_weights(&w), 1.0).unwrap(), Need::Map, &o).unwrap();
    assert!(map.mcc_tree(&o).is_err());
    assert!(map.consensus_tree(0.5, &o).is_err());
}

/// Every partition of `0..n` as cluster masks.
fn all_partitions(n: usize) -> Vec<Vec<Mask>> {
    fn go(i: usize, n: usize, cur: &mut Vec<Mask>, out: &mut Vec<Vec<Mask>>) {
        if i == n {
            out.push(cur.clone());
            return;
        }
        for k in 0..cur.len() {
            cur[k] |= 1 << i;
            go(i + 1, n, cur, out);
            cur[k] &= !(1 << i);
        }
        cur.push(1 << i);
        go(i + 1, n, cur, out);
        cur.pop();
    }
    let mut out = Vec::new();
    go(0, n, &mut Vec::new(), &mut out);
    out
}

#[test]
fn binder_partition_matches_brute_force() {
    // Cases where the Binder partition is strictly better than the MAP one.
    let mut better_than_map = 0;
    for n in 2..=7 {
        for seed in 0..3u64 {
            for &beta in &[0.5, 2.0, 6.0] {
                let w = random_weights(n, 3000 + 10 * n as u64 + seed, 1.0);
                let energy = CorrelationClustering::new(&lib_weights(&w), beta).unwrap();
                let post =
                    PartitionPosterior::dense(energy, Need::All, &Options::default()).unwrap();
                // Brute force: the posterior over all partitions, from the raw weights.
                let parts = all_partitions(n);
                let log_e: Vec<f64> = parts
                    .iter()
                    .map(|p| {
                        p.iter()
                            .map(|&c| {
                                let pts = points(c);
                                let mut e = 0.0;
                                for (a, &i) in pts.iter().enumerate() {
                                    for &j in &pts[a + 1..] {
                                        e += beta * w[i][j];
                                    }
                                }
                                e
                            })
                            .sum()
                    })
                    .collect();
                let top = log_e.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let z: f64 = log_e.iter().map(|&l| (l - top).exp()).sum();
                // The MAP partition, by brute force.
                let map_part = &parts[log_e.iter().position(|&l| l == top).unwrap()];
                let mut pair = vec![vec![0.0; n]; n];
                for (p, &l) in parts.iter().zip(&log_e) {
                    let prob = (l - top).exp() / z;
                    for &c in p {
                        let pts = points(c);
                        for (a, &i) in pts.iter().enumerate() {
                            for &j in &pts[a + 1..] {
                                pair[i][j] += prob;
                            }
                        }
                    }
                }
                for &(a, b) in &[(1.0, 1.0), (2.0, 1.0), (0.4, 3.0)] {
                    let loss = |p: &[Mask]| {
                        let mut label = vec![0; n];
                        for (k, &c) in p.iter().enumerate() {
                            for i in points(c) {
                                label[i] = k;
                            }
                        }
                        let mut l = 0.0;
                        for i in 0..n {
                            for j in i + 1..n {
                                l += if label[i] == label[j] {
                                    b * (1.0 - pair[i][j])
                                } else {
                                    a * pair[i][j]
                                };
                            }
                        }
                        l
                    };
                    let best = parts.iter().map(|p| loss(p)).fold(f64::INFINITY, f64::min);
                    let got = post.binder_partition(a, b, &Options::default()).unwrap();
                    let what = format!("n={n} seed={seed} beta={beta} costs=({a},{b})");
                    let tol = 1e-9 * (n * n) as f64;
                    assert!(
                        (got.expected_loss - best).abs() <= tol,
                        "{what}: expected loss {} vs brute force {best}",
                        got.expected_loss
                    );
                    let masks: Vec<Mask> = got
                        .clusters
                        .iter()
                        .map(|c| c.iter().fold(0, |m, &i| m | 1 << i))
                        .collect();
                    assert!((loss(&masks) - best).abs() <= tol, "{what}: optimal");
                    let labels = got.labels();
                    assert_eq!(labels.len(), n);
                    let recomputed =
                        binder_loss(post.marginals().unwrap(), &got.clusters, a, b).unwrap();
                    assert_eq!(recomputed, got.expected_loss);
                    // Never worse than the MAP partition (the Bayes estimate
                    // under the loss), and often strictly better.
                    let map_loss = loss(map_part);
                    assert!(
                        got.expected_loss <= map_loss + tol,
                        "{what}: Binder {} vs MAP {map_loss}",
                        got.expected_loss
                    );
                    if got.expected_loss < map_loss - 1e-6 {
                        better_than_map += 1;
                    }
                }
            }
        }
    }
    assert!(better_than_map > 0, "the MAP partition was always optimal");
}

#[test]
fn binder_costs_are_checked() {
    let w = random_weights(4, 7, 1.0);
    let energy = CorrelationClustering::new(&lib_weights(&w), 1.0).unwrap();
    let post = PartitionPosterior::dense(energy, Need::All, &Options::default()).unwrap();
    let o = Options::default();
    for (a, b) in [
        (0.0, 1.0),
        (1.0, -1.0),
        (f64::NAN, 1.0),
        (1.0, f64::INFINITY),
    ] {
        let e = post.binder_partition(a, b, &o).unwrap_err();
        assert!(e.to_string().contains("finite number > 0"), "{e}");
    }
    let m = post.marginals().unwrap();
    assert!(binder_loss(m, &[vec![0, 1], vec![2]], 1.0, 1.0).is_err());
    assert!(binder_loss(m, &[vec![0, 1], vec![1, 2, 3]], 1.0, 1.0).is_err());
}
