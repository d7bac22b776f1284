//! Issue 24, exact inference under feedback: the dense trellis and exact A*
//! restricted to the trees that satisfy a person's triplets, and the flat
//! trellis restricted by must-link and cannot-link pairs, against brute-force
//! enumeration of every tree and every partition.

use trellis::constraints::{Constrained, ConstrainedEnergy};
use trellis::ddt::Triplet;
use trellis::models::{Dasgupta, LinkageKind, LinkagePotential};
use trellis::posterior::{Need, PartitionPosterior, Posterior};
use trellis::{CorrelationClustering, Distances, ErrorKind, Hcc, Matrix, Options, Tree, Weights};

use crate::oracle::{Gen, enumerate_trees, log_sum_exp};

fn matrix(n: usize, seed: u64, low: f64) -> Vec<Vec<f64>> {
    let mut g = Gen(seed);
    let mut m = vec![vec![0.0; n]; n];
    for (i, j) in (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j))) {
        let v = low + (1.0 - low) * g.unit();
        m[i][j] = v;
        m[j][i] = v;
    }
    m
}

fn weights(n: usize, seed: u64, low: f64) -> Weights {
    Weights::from_matrix(&Matrix::from_rows(matrix(n, seed, low)).unwrap()).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
}

/// The depth of the lowest common ancestor of `a` and `b` in `t`, by
/// counting the clusters that hold both.
fn together(t: &Tree, a: usize, b: usize) -> usize {
    t.clusters()
        .iter()
        .filter(|c| c.contains(&a) && c.contains(&b))
        .count()
}

/// Whether `({a, b}, c)` holds in `t`: a and b meet strictly below c.
fn holds(t: &Tree, x: &Triplet) -> bool {
    together(t, x.a, x.b) > together(t, x.a, x.c)
}

/// `k` triplets that a random tree over `n` points satisfies (so they are
/// consistent), drawn from `seed`.
fn consistent_triplets(n: usize, k: usize, seed: u64) -> Vec<Triplet> {
    let mut g = Gen(seed);
    let trees = enumerate_trees(n);
    let truth = &trees[(g.unit() * trees.len() as f64) as usize % trees.len()];
    let mut out = Vec::new();
    while out.len() < k {
        let mut p: Vec<usize> = (0..n).collect();
        for i in 0..3 {
            let j = i + (g.unit() * (n - i) as f64) as usize % (n - i);
            p.swap(i, j);
        }
        let (a, b, c) = (p[0], p[1], p[2]);
        // The pair that meets first in the true tree.
        let t = [(a, b, c), (a, c, b), (b, c, a)]
            .into_iter()
            .map(|(a, b, c)| Triplet::new(a, b, c).unwrap())
            .find(|t| holds(truth, t))
            .expect("a binary tree resolves every triple");
        out.push(t);
    }
    out
}

/// Checks the constrained dense posterior of `model` and exact A* against
/// every tree over `n` points that satisfies `triplets`.
fn check_hierarchy<M>(model: M, triplets: &[Triplet], beta: f64, what: &str)
where
    M: trellis::Search + Clone + Send + Sync + 'static,
{
    let n = model.num_points();
    let o = Options::default();
    let allowed: Vec<(Tree, f64)> = enumerate_trees(n)
        .into_iter()
        .filter(|t| triplets.iter().all(|x| holds(t, x)))
        .map(|t| {
            let cost = trellis::tree_cost(&model, &t).unwrap();
            (t, cost)
        })
        .collect();
    let clusters: Vec<Vec<Vec<usize>>> = allowed.iter().map(|(t, _)| t.clusters()).collect();
    assert!(!allowed.is_empty());
    let constrained = Constrained::new(model.clone(), triplets.to_vec()).unwrap();
    let post = Posterior::dense(constrained.clone(), Need::All, &o).unwrap();
    let log_z = log_sum_exp(allowed.iter().map(|(_, c)| -beta * c));
    assert!(close(post.log_z().unwrap(), log_z), "{what}: log Z");
    let best = allowed
        .iter()
        .map(|(_, c)| *c)
        .fold(f64::INFINITY, f64::min);
    let map = post.map().unwrap().tree;
    assert!(
        triplets.iter().all(|x| holds(&map, x)),
        "{what}: the MAP tree breaks a triplet"
    );
    assert!(
        close(trellis::tree_cost(&model, &map).unwrap(), best),
        "{what}: MAP"
    );
    // Every cluster marginal.
    for (members, p) in post.cluster_marginals(0.0, &o).unwrap() {
        let brute: f64 = (allowed.iter().zip(&clusters))
            .filter(|(_, cs)| cs.contains(&members))
            .map(|((_, c), _)| (-beta * c - log_z).exp())
            .sum();
        assert!(
            (p - brute).abs() < 1e-9,
            "{what}: P({members:?}) = {p}, brute {brute}"
        );
    }
    // Exact A* finds a tree of the same cost, which satisfies the triplets.
    let out = trellis::astar::exact(&constrained, &o).unwrap();
    assert!(out.exact);
    assert!(
        close(out.cost, best),
        "{what}: A* cost {} vs {best}",
        out.cost
    );
    assert!(triplets.iter().all(|x| holds(&out.best.tree, x)));
    // Samples satisfy every triplet, and their frequencies follow the
    // restricted posterior (total variation over the allowed trees).
    let k = 20_000;
    let samples = post.samples(k, 11).unwrap();
    assert!(samples.iter().all(|t| triplets.iter().all(|x| holds(t, x))));
    if allowed.len() <= 200 {
        let mut counts = std::collections::HashMap::new();
        for s in samples {
            *counts.entry(s.canonical()).or_insert(0usize) += 1;
        }
        let mut tv = 0.0;
        for (t, c) in &allowed {
            let seen = counts.get(&t.clone().canonical()).copied().unwrap_or(0);
            tv += (seen as f64 / k as f64 - (-beta * c - log_z).exp()).abs();
        }
        assert!(tv / 2.0 < 0.05, "{what}: total variation {}", tv / 2.0);
    }
}

#[test]
fn issue24_triplets_restrict_every_answer_to_the_trees_that_satisfy_them() {
    for n in 4..=7 {
        for (k, seed) in [(1usize, 1u64), (2, 2), (4, 3)] {
            let triplets = consistent_triplets(n, k, seed + 10 * n as u64);
            let beta = 1.7;
            let w = weights(n, seed, -1.0);
            check_hierarchy(
                Hcc::new(&w, beta).unwrap(),
                &triplets,
                beta,
                &format!("hcc n={n} k={k}"),
            );
            let w = weights(n, seed, 0.0);
            check_hierarchy(
                Dasgupta::new(&w, beta).unwrap(),
                &triplets,
                beta,
                &format!("dasgupta n={n} k={k}"),
            );
            let d = Distances::from_matrix(&Matrix::from_rows(matrix(n, seed + 5, 0.1)).unwrap())
                .unwrap();
            check_hierarchy(
                LinkagePotential::new(&d, LinkageKind::Complete, beta).unwrap(),
                &triplets,
                beta,
                &format!("linkage-complete n={n} k={k}"),
            );
        }
    }
}

#[test]
fn issue24_contradictory_or_bad_triplets_are_refused() {
    let w = weights(5, 1, -1.0);
    let model = Hcc::new(&w, 1.0).unwrap();
    let t = |a, b, c| Triplet::new(a, b, c).unwrap();
    let e = Constrained::new(model.clone(), vec![t(0, 1, 2), t(0, 2, 1)]).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::UnrealisableTriplets { .. }),
        "{e}"
    );
    let e = Constrained::new(model.clone(), vec![t(0, 1, 7)]).unwrap_err();
    assert!(e.to_string().contains("only 5 points"), "{e}");
    // No triplet: the model's own posterior.
    let o = Options::default();
    let free = Posterior::dense(
        Constrained::new(model.clone(), vec![]).unwrap(),
        Need::All,
        &o,
    )
    .unwrap();
    let plain = Posterior::dense(model, Need::All, &o).unwrap();
    assert!(close(free.log_z().unwrap(), plain.log_z().unwrap()));
}

/// Every partition of `0..n` as lists of clusters.
fn partitions(n: usize) -> Vec<Vec<Vec<usize>>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for p in partitions(n - 1) {
        for k in 0..=p.len() {
            let mut q = p.clone();
            if k == p.len() {
                q.push(vec![n - 1]);
            } else {
                q[k].push(n - 1);
            }
            out.push(q);
        }
    }
    out
}

fn same(p: &[Vec<usize>], i: usize, j: usize) -> bool {
    p.iter().any(|c| c.contains(&i) && c.contains(&j))
}

#[test]
fn issue24_must_and_cannot_links_restrict_the_flat_posterior() {
    let o = Options::default();
    type Pairs = &'static [(usize, usize)];
    let cases: [(Pairs, Pairs); 4] = [
        (&[(0, 1)], &[]),
        (&[], &[(0, 1), (2, 3)]),
        (&[(0, 2), (2, 4)], &[(1, 4)]),
        (&[(1, 3)], &[(0, 3), (2, 1)]),
    ];
    for n in 5..=7 {
        for (c, (must, cannot)) in cases.iter().enumerate() {
            let beta = 1.3;
            let w = weights(n, 40 + c as u64, -1.0);
            let energy = CorrelationClustering::new(&w, beta).unwrap();
            let allowed: Vec<(Vec<Vec<usize>>, f64)> = partitions(n)
                .into_iter()
                .filter(|p| must.iter().all(|&(i, j)| same(p, i, j)))
                .filter(|p| cannot.iter().all(|&(i, j)| !same(p, i, j)))
                .map(|p| {
                    let e: f64 = p
                        .iter()
                        .map(|c| {
                            let mut s = 0.0;
                            for (x, &i) in c.iter().enumerate() {
                                for &j in &c[x + 1..] {
                                    s += w.get(i, j);
                                }
                            }
                            beta * s
                        })
                        .sum();
                    (p, e)
                })
                .collect();
            let log_z = log_sum_exp(allowed.iter().map(|(_, e)| *e));
            let constrained = ConstrainedEnergy::new(energy, must, cannot).unwrap();
            let post = PartitionPosterior::dense(constrained, Need::All, &o).unwrap();
            let what = format!("n={n} case {c}");
            assert!(close(post.log_z().unwrap(), log_z), "{what}: log Z");
            let best = allowed
                .iter()
                .map(|(_, e)| *e)
                .fold(f64::NEG_INFINITY, f64::max);
            let map = post.map().unwrap();
            assert!(close(map.log_energy, best), "{what}: MAP");
            let m = post.marginals().unwrap();
            for i in 0..n {
                for j in i + 1..n {
                    let brute: f64 = allowed
                        .iter()
                        .filter(|(p, _)| same(p, i, j))
                        .map(|(_, e)| (e - log_z).exp())
                        .sum();
                    assert!(
                        (m.pairwise(i, j).unwrap() - brute).abs() < 1e-9,
                        "{what}: p{i}{j}"
                    );
                }
            }
            for s in post.samples(300, 5).unwrap() {
                assert!(
                    must.iter().all(|&(i, j)| same(&s, i, j)),
                    "{what}: a sample"
                );
                assert!(
                    cannot.iter().all(|&(i, j)| !same(&s, i, j)),
                    "{what}: a sample"
                );
            }
        }
    }
}

#[test]
fn issue24_contradictory_or_bad_pairs_are_refused() {
    let w = weights(5, 1, -1.0);
    let e = CorrelationClustering::new(&w, 1.0).unwrap();
    let err = ConstrainedEnergy::new(e.clone(), &[(0, 1), (1, 2)], &[(2, 0)]).unwrap_err();
    assert!(err.to_string().contains("cannot-link (2, 0)"), "{err}");
    assert!(err.to_string().contains("2 - 1 - 0"), "{err}");
    let err = ConstrainedEnergy::new(e.clone(), &[(0, 5)], &[]).unwrap_err();
    assert!(err.to_string().contains("only 5 points"), "{err}");
    let err = ConstrainedEnergy::new(e, &[], &[(3, 3)]).unwrap_err();
    assert!(err.to_string().contains("twice"), "{err}");
}

/// The planner knows that a constrained run keeps the model's kernel (its
/// separable form survives the restriction): `hcc` keeps its pair form and
/// so the memory of its passes, Dasgupta tabulates larger summaries.
#[test]
fn issue24_the_planner_estimates_constrained_runs_on_the_same_kernel() {
    use trellis::models::ModelName;
    use trellis::plan::{Task, estimate, estimate_constrained};
    for model in [ModelName::Hcc, ModelName::Dasgupta] {
        for task in [Task::LogZ, Task::Map, Task::Marginals] {
            let free = estimate(20, model, task, 2).unwrap();
            let constrained = estimate_constrained(20, model, task, 2).unwrap();
            assert_eq!(constrained.kernel, free.kernel);
            assert_eq!(constrained.seconds, free.seconds);
            // hcc's `logz` and `map` are single 8-byte passes (issue 25), its
            // marginals the weight and outside passes' two tables, with or
            // without triplets (the forbidden clusters are marked block by
            // block); Dasgupta's runs hold the full trellis, and under
            // triplets its summaries while it is tabulated.
            let workload = if task == Task::Marginals {
                trellis::Workload::Marginals
            } else {
                trellis::Workload::Inside
            };
            let full = trellis::memory_needed(20, workload);
            let (want_free, want_constrained) = match (model, task) {
                // Under triplets, one bit per subset: the forbidden clusters.
                (ModelName::Hcc, Task::Marginals) => (
                    trellis::pass_marginals_bytes(20),
                    trellis::pass_marginals_bytes(20) + (1 << 20) / 8,
                ),
                (ModelName::Hcc, _) => (
                    trellis::pass_bytes(20),
                    trellis::pass_bytes(20) + (1 << 20) / 8,
                ),
                _ => (full, full + (32 << 20)),
            };
            assert_eq!(free.memory_bytes, want_free, "{model} {task}");
            assert_eq!(constrained.memory_bytes, want_constrained, "{model} {task}");
        }
    }
}

/// A random binary tree over `n` points (random agglomeration).
fn random_tree(n: usize, g: &mut Gen) -> Tree {
    let mut parts: Vec<Tree> = (0..n).map(Tree::Leaf).collect();
    while parts.len() > 1 {
        let i = g.below(parts.len());
        let a = parts.swap_remove(i);
        let j = g.below(parts.len());
        let b = parts.swap_remove(j);
        parts.push(Tree::node(a, b));
    }
    parts.pop().unwrap()
}

/// `k` triplets that a random tree over `n` points satisfies, for any `n`.
fn triplets_of_random_tree(n: usize, k: usize, seed: u64) -> Vec<Triplet> {
    let mut g = Gen(seed);
    let truth = random_tree(n, &mut g);
    (0..k)
        .map(|_| {
            let mut p: Vec<usize> = (0..n).collect();
            for i in 0..3 {
                let j = i + g.below(n - i);
                p.swap(i, j);
            }
            let (a, b, c) = (p[0], p[1], p[2]);
            [(a, b, c), (a, c, b), (b, c, a)]
                .into_iter()
                .map(|(a, b, c)| Triplet::new(a, b, c).unwrap())
                .find(|t| holds(&truth, t))
                .unwrap()
        })
        .collect()
}

fn on(path: trellis::KernelPath) -> Options<'static> {
    Options {
        kernel: Some(path),
        ..Options::default()
    }
}

/// Triplets keep the models' separable form, so hcc runs on the blocked
/// kernel and Dasgupta on the level-order scaled one: every path, and every
/// one-quantity command, against the general kernel on the same restricted
/// model (`General` hides the separable form), across the block widths.
#[test]
fn issue24_triplets_run_on_the_fast_kernels_and_agree_with_the_general_one() {
    use trellis::{General, KernelPath, Model, Trellis};
    let paths: Vec<KernelPath> = KernelPath::ALL
        .into_iter()
        .filter(|p| p.available())
        .collect();
    for n in [9usize, 11, 13] {
        for (k, beta) in [(2usize, 0.5), (5, 2.0), (3, 60.0)] {
            let triplets = triplets_of_random_tree(n, k, 500 + n as u64 + k as u64);
            let w = weights(n, 40 + n as u64, -1.0);
            let hcc = Constrained::new(Hcc::new(&w, beta).unwrap(), triplets.clone()).unwrap();
            let das = Constrained::new(
                Dasgupta::new(&weights(n, 41, 0.0), beta).unwrap(),
                triplets.clone(),
            )
            .unwrap();
            assert!(hcc.separable().is_some() && das.separable().is_some());
            let g_hcc = Trellis::new(General(&hcc)).unwrap();
            let g_das = Trellis::new(General(&das)).unwrap();
            for path in &paths {
                let what = format!("n={n} k={k} β={beta} {path}");
                let tol = |want: f64| 1e-10 * want.abs().max(1.0);
                let near = |got: f64, want: f64, q: &str| {
                    assert!(
                        (got - want).abs() <= tol(want),
                        "{q} {what}: {got} vs {want}"
                    )
                };
                let o = on(*path);
                near(
                    Trellis::log_z_only(&hcc, &o).unwrap(),
                    g_hcc.log_z(),
                    "hcc log_z_only",
                );
                let map = Trellis::map_only(&hcc, &o).unwrap();
                near(map.log_potential, g_hcc.map().log_potential, "hcc map_only");
                assert!(triplets.iter().all(|x| holds(&map.tree, x)), "{what}");
                let hcc_t = Trellis::with_options(&hcc, &o).unwrap();
                same_posterior(&hcc_t, &g_hcc, n, &triplets, &format!("hcc {what}"));
                let das_t = Trellis::with_options(&das, &o).unwrap();
                same_posterior(&das_t, &g_das, n, &triplets, &format!("dasgupta {what}"));
            }
        }
    }
}

/// Two trellises of one restricted model agree on log Z, the MAP and every
/// cluster marginal, and forbidden clusters have probability 0 exactly.
fn same_posterior<A: trellis::Model, B: trellis::Model>(
    t: &trellis::Trellis<A>,
    g: &trellis::Trellis<B>,
    n: usize,
    triplets: &[Triplet],
    what: &str,
) {
    let near = |got: f64, want: f64, q: &str| {
        assert!(
            (got - want).abs() <= 1e-10 * want.abs().max(1.0),
            "{q} {what}: {got} vs {want}"
        )
    };
    near(t.log_z(), g.log_z(), "log Z");
    near(t.map().log_potential, g.map().log_potential, "MAP");
    assert!(triplets.iter().all(|x| holds(&t.map().tree, x)), "{what}");
    let (m, gm) = (t.marginals().unwrap(), g.marginals().unwrap());
    for s in 1..(1u32 << n) - 1 {
        let (p, q) = (m.p(s), gm.p(s));
        assert!((p - q).abs() <= 1e-9, "P({s:#b}) {what}: {p} vs {q}");
        let members: Vec<usize> = (0..n).filter(|i| s >> i & 1 == 1).collect();
        let forbidden = triplets
            .iter()
            .any(|x| members.contains(&x.c) && (members.contains(&x.a) != members.contains(&x.b)));
        if forbidden {
            assert_eq!(p, 0.0, "P({s:#b}) {what}");
        }
    }
}

/// `Model::extendable` of a triplet-restricted model against enumeration:
/// a set of disjoint clusters covering the points is extendable exactly when
/// some tree that satisfies the triplets holds them all.
#[test]
fn issue24_extendable_answers_whether_a_valid_tree_holds_the_clusters() {
    use trellis::{Model, Points, Summarize};
    let mut g = Gen(2424);
    for n in 4..=6 {
        let trees = enumerate_trees(n);
        for round in 0..12 {
            let triplets = consistent_triplets(n, 1 + round % 3, 900 + round as u64 + n as u64);
            let model = Constrained::new(
                Hcc::new(&weights(n, 3, -1.0), 1.0).unwrap(),
                triplets.clone(),
            )
            .unwrap();
            let valid: Vec<Vec<Vec<usize>>> = trees
                .iter()
                .filter(|t| triplets.iter().all(|x| holds(t, x)))
                .map(|t| t.clusters())
                .collect();
            for _ in 0..30 {
                // A random partition of the points.
                let labels: Vec<usize> = (0..n).map(|_| g.below(3)).collect();
                let parts: Vec<Vec<usize>> = (0..3)
                    .map(|l| (0..n).filter(|&i| labels[i] == l).collect::<Vec<_>>())
                    .filter(|p: &Vec<usize>| !p.is_empty())
                    .collect();
                let summaries: Vec<_> = parts
                    .iter()
                    .map(|p| model.summary(Points::List(p)))
                    .collect();
                let refs: Vec<_> = summaries.iter().collect();
                let want = valid.iter().any(|cs| {
                    parts
                        .iter()
                        .all(|p| p.len() == 1 || p.len() == n || cs.contains(p))
                });
                assert_eq!(
                    model.extendable(&refs),
                    want,
                    "n={n} {triplets:?} {parts:?}"
                );
            }
        }
    }
}

/// Greedy agglomeration under triplets never merges into a dead end: here
/// the best first merge, {1, 3}, is allowed by each triplet's cluster rule
/// but lies in no tree that satisfies both.
#[test]
fn issue24_greedy_avoids_dead_ends_of_the_triplets() {
    let t = |a, b, c| Triplet::new(a, b, c).unwrap();
    let triplets = vec![t(0, 1, 2), t(2, 3, 0)];
    let mut m = vec![vec![0.0; 4]; 4];
    m[1][3] = 1.0;
    m[3][1] = 1.0;
    let w = Weights::from_matrix(&Matrix::from_rows(m).unwrap()).unwrap();
    let model = Constrained::new(Hcc::new(&w, 1.0).unwrap(), triplets.clone()).unwrap();
    let greedy = trellis::baselines::greedy(&model).unwrap();
    assert!(greedy.log_potential.is_finite(), "{greedy:?}");
    assert!(triplets.iter().all(|x| holds(&greedy.tree, x)));
    // And on random problems.
    for seed in 0..40u64 {
        let n = 6 + (seed % 10) as usize;
        let triplets = triplets_of_random_tree(n, 2 + (seed % 6) as usize, seed);
        let model = Constrained::new(
            Hcc::new(&weights(n, seed, -1.0), 1.0).unwrap(),
            triplets.clone(),
        )
        .unwrap();
        let greedy = trellis::baselines::greedy(&model).unwrap();
        assert!(greedy.log_potential.is_finite(), "seed {seed}");
        assert!(
            triplets.iter().all(|x| holds(&greedy.tree, x)),
            "seed {seed}"
        );
    }
}

/// The triplets' cluster masks as wide sets: the restricted model on
/// `WideSet` masks gives the dense trellis the same log Z, MAP and
/// `extendable` answers as on `u128` masks.
#[test]
fn issue24_wide_masks_restrict_the_dense_trellis_as_u128_masks_do() {
    use trellis::constraints::WideConstrained;
    use trellis::{Model, Points, Summarize};
    for seed in 0..6u64 {
        let n = 6 + (seed % 3) as usize;
        let triplets = triplets_of_random_tree(n, 1 + (seed % 4) as usize, 70 + seed);
        let hcc = Hcc::new(&weights(n, seed, -1.0), 1.5).unwrap();
        let narrow = Constrained::new(hcc.clone(), triplets.clone()).unwrap();
        let wide = WideConstrained::new(hcc.clone(), triplets.clone()).unwrap();
        let o = Options::default();
        let a = Posterior::dense(narrow.clone(), Need::All, &o).unwrap();
        let b = Posterior::dense(wide.clone(), Need::All, &o).unwrap();
        assert_eq!(a.log_z().unwrap(), b.log_z().unwrap(), "seed {seed}");
        assert_eq!(a.map().unwrap().tree, b.map().unwrap().tree, "seed {seed}");
        let parts: Vec<Vec<usize>> = vec![(0..n / 2).collect(), (n / 2..n).collect()];
        let s: Vec<_> = parts
            .iter()
            .map(|p| narrow.summary(Points::List(p)))
            .collect();
        let w: Vec<_> = parts
            .iter()
            .map(|p| wide.summary(Points::List(p)))
            .collect();
        assert_eq!(
            narrow.extendable(&s.iter().collect::<Vec<_>>()),
            wide.extendable(&w.iter().collect::<Vec<_>>()),
            "seed {seed}"
        );
    }
}

/// Issue 24's open part: the sparse trellis (`--sparse beam`) and
/// approximate A* under triplets beyond 128 points. On at most 128 points,
/// forcing wide sets (clusters and the triplets' masks) gives the `u128`
/// answers exactly.
#[test]
fn issue24_sparse_and_approximate_astar_under_triplets_wide_equals_u128() {
    use trellis::astar::{ApproxOptions, Request, Start, solve_as};
    use trellis::engines::sparse_pairwise_as;
    use trellis::models::{CostModel, ModelName, PairwiseData};
    use trellis::{Set, WideSet};
    for (n, seed) in [(12usize, 1u64), (40, 2), (70, 3)] {
        let w = weights(n, seed, -1.0);
        let triplets = triplets_of_random_tree(n, 6, 100 + seed);
        let data = PairwiseData::Weights(&w);
        let a = sparse_pairwise_as::<Set>(ModelName::Hcc, data, 2.0, &triplets, 4, 6).unwrap();
        let b = sparse_pairwise_as::<WideSet>(ModelName::Hcc, data, 2.0, &triplets, 4, 6).unwrap();
        assert_eq!(a.log_z().unwrap(), b.log_z().unwrap(), "n = {n}");
        assert_eq!(a.map().unwrap(), b.map().unwrap(), "n = {n}");
        assert_eq!(
            a.samples(20, 7).unwrap(),
            b.samples(20, 7).unwrap(),
            "n = {n}"
        );
        let model = CostModel::build(ModelName::Hcc, data, 2.0).unwrap();
        let request = Request::Approximate {
            options: ApproxOptions {
                max_explored: Some(400),
                ..ApproxOptions::default()
            },
            starts: vec![Start::Beam, Start::Average],
            beam_width: 3,
        };
        let o = Options::default();
        let x = solve_as::<Set>(&model, &triplets, &request, &o).unwrap();
        let y = solve_as::<WideSet>(&model, &triplets, &request, &o).unwrap();
        assert_eq!(x.best, y.best, "n = {n}");
        assert_eq!(x.cost, y.cost, "n = {n}");
        assert_eq!(
            (x.explored, x.vertices),
            (y.explored, y.vertices),
            "n = {n}"
        );
        assert_eq!((x.sets, y.sets), ("u128", "wide"));
        assert!(triplets.iter().all(|t| holds(&x.best.tree, t)), "n = {n}");
    }
}

/// Beyond 128 points the doors pick wide sets: every tree the sparse
/// trellis gives (MAP and samples) and approximate A*'s best tree satisfy
/// every triplet, at 140 points; `u128` masks refuse the problem clearly.
#[test]
fn issue24_triplets_hold_beyond_128_points() {
    use trellis::astar::{ApproxOptions, Request, Start, solve};
    use trellis::engines::sparse_pairwise;
    use trellis::models::{CostModel, ModelName, PairwiseData};
    let n = 140;
    let w = weights(n, 140, -1.0);
    let triplets = triplets_of_random_tree(n, 25, 141);
    let data = PairwiseData::Weights(&w);
    let hcc = Hcc::new(&w, 1.0).unwrap();
    let e = Constrained::new(hcc.clone(), triplets.clone()).unwrap_err();
    assert!(e.to_string().contains("at most 128 points"), "{e}");
    // Unconstrained, the best trees break some of the triplets, so the test
    // has teeth.
    let free = sparse_pairwise(ModelName::Hcc, data, 1.0, &[], 3, 4).unwrap();
    assert!(!triplets.iter().all(|t| holds(&free.map().unwrap().tree, t)));
    let post = sparse_pairwise(ModelName::Hcc, data, 1.0, &triplets, 3, 4).unwrap();
    assert!(post.log_z().unwrap().is_finite());
    let mut trees = post.samples(30, 5).unwrap();
    trees.push(post.map().unwrap().tree);
    for tree in &trees {
        assert_eq!(tree.num_leaves(), n);
        assert!(triplets.iter().all(|t| holds(tree, t)), "{tree:?}");
    }
    let model = CostModel::build(ModelName::Hcc, data, 1.0).unwrap();
    let request = Request::Approximate {
        options: ApproxOptions {
            max_explored: Some(300),
            ..ApproxOptions::default()
        },
        starts: vec![Start::Beam, Start::Average],
        beam_width: 3,
    };
    let out = solve(&model, &triplets, &request, &Options::default()).unwrap();
    assert_eq!(out.sets, "wide");
    assert!(out.cost.is_finite());
    assert!(triplets.iter().all(|t| holds(&out.best.tree, t)));
    // Exact A* refuses as it does without triplets (its own limit named).
    let e = solve(&model, &triplets, &Request::Exact, &Options::default()).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::TooManyPoints { n: 140, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("exact A*"), "{e}");
}

/// Weights of `n` points in four groups (`i mod 4`: +1 within, -1
/// across, with noise) and triplets that pair points of one group against
/// a point of another (the groups' trees).
fn four_groups(n: usize) -> (Weights, Vec<Triplet>) {
    let group = |i: usize| i % 4;
    let mut g = Gen(2024);
    let mut m = vec![vec![0.0; n]; n];
    for (i, j) in (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j))) {
        let base = if group(i) == group(j) { 1.0 } else { -1.0 };
        let v = base + 0.6 * (g.unit() - 0.5);
        m[i][j] = v;
        m[j][i] = v;
    }
    let w = Weights::from_matrix(&Matrix::from_rows(m).unwrap()).unwrap();
    let triplets = [(0, 4, 1), (2, 6, 3), (1, 5, 7)]
        .into_iter()
        .map(|(a, b, c)| Triplet::new(a, b, c).unwrap())
        .collect();
    (w, triplets)
}

/// Beyond the outside pass's window (β = 8, 16 on the data above) the
/// weight pass still runs: `Need::All` keeps its table and MAP pass and
/// takes the marginals from the full trellis, built on the first question
/// and dropped (`WeightTable::marginals`); they equal the general
/// kernel's, the tiny ones included.
#[test]
fn issue24_need_all_takes_the_full_trellis_marginals_beyond_the_outside_window() {
    use trellis::posterior::{Need, Posterior};
    use trellis::{General, Trellis, WeightTable};
    let n = 13;
    let (w, triplets) = four_groups(n);
    for beta in [8.0, 16.0] {
        let what = format!("β={beta}");
        let hcc = Constrained::new(Hcc::new(&w, beta).unwrap(), triplets.clone()).unwrap();
        let o = Options::default();
        // The case: the weight pass runs, the outside pass leaves its window.
        assert!(WeightTable::new(&hcc, &o).unwrap().is_some(), "{what}");
        assert!(
            WeightTable::with_marginals(&hcc, &o).unwrap().is_none(),
            "{what}"
        );
        let post = Posterior::dense(hcc.clone(), Need::All, &o).unwrap();
        assert!(format!("{post:?}").contains("blocked passes"), "{what}");
        let general = Trellis::new(General(&hcc)).unwrap();
        let want = general.marginals().unwrap();
        let listed = post.cluster_marginals(0.0, &o).unwrap();
        assert!(!listed.is_empty(), "{what}");
        for (members, p) in &listed {
            let s: u32 = members.iter().map(|&i| 1u32 << i).sum();
            let q = want.log_p(s).exp();
            assert!((p - q).abs() <= 1e-9 * q, "P({s:#b}) {what}: {p} vs {q}");
        }
        let all: Vec<Vec<usize>> = (1..(1u32 << n) - 1)
            .map(|s| (0..n).filter(|&i| s >> i & 1 == 1).collect())
            .collect();
        let support = post.support(&all, &o).unwrap();
        for (s, p) in (1..(1u32 << n) - 1).zip(support) {
            let b = want.log_p(s);
            if b == f64::NEG_INFINITY {
                assert_eq!(p, 0.0, "P({s:#b}) {what}");
            } else if b > -700.0 {
                let a = p.ln();
                assert!(
                    (a - b).abs() <= 1e-9 * b.abs().max(1.0),
                    "log P({s:#b}) {what}: {a} vs {b}"
                );
            }
        }
        let (a, b) = (post.map().unwrap(), general.map());
        assert!(
            (a.log_potential - b.log_potential).abs() <= 1e-9 * b.log_potential.abs().max(1.0),
            "{what}"
        );
    }
}

/// Constrained runs at large β: clusters of vanishing marginal give the
/// blocked outside pass entries far below `2^-480` while the inside
/// weights stay far from their bounds. The pass's window follows this
/// run's weights (`OutsideWindow` in `dense/blocked.rs`) and the table is
/// shifted by `2^k` to its top (the bound `H(U) ≤ e^{own(U)} / G(U)`), so
/// these runs stay on the blocked kernel (a forced path is refused
/// otherwise) and give every log marginal, the tiny ones included, of the
/// general kernel. At β = 4, 73 entries of the outside table lie below the
/// fixed window `[2^-480, 2^480]` the pass used first (a debug print) and
/// 250 marginals are below `e^-200`. Without the shift β = 5 and 6 left the
/// window (the smallest entry `2^-998` at β = 5, the largest `2^176` at β
/// = 4); with it the table spans `2^-637 .. 2^827` at β = 6. At β = 8 its
/// spread exceeds the window and the run takes the level-order kernel (a
/// documented limit).
#[test]
fn issue24_constrained_outside_pass_stays_blocked_at_large_beta() {
    use trellis::{General, KernelPath, Trellis};
    let n = 13;
    let (w, triplets) = four_groups(n);
    let paths: Vec<KernelPath> = KernelPath::ALL
        .into_iter()
        .filter(|p| p.available())
        .collect();
    for beta in [2.0, 4.0, 5.0, 6.0] {
        let hcc = Constrained::new(Hcc::new(&w, beta).unwrap(), triplets.clone()).unwrap();
        let general = Trellis::new(General(&hcc)).unwrap();
        let want = general.marginals().unwrap();
        for path in &paths {
            let what = format!("β={beta} {path}");
            // A checkpoint directory makes the blocked passes the only
            // ones allowed: leaving them is an error.
            let dir = std::env::temp_dir().join(format!(
                "trellis-issue24-outside-{}-{beta}-{path}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            let options = Options {
                checkpoint: Some(&dir),
                ..on(*path)
            };
            let t = Trellis::with_options(&hcc, &options).unwrap();
            let got = t
                .marginals_with(&options)
                .unwrap_or_else(|e| panic!("{what}: the blocked outside pass gave up: {e}"));
            std::fs::remove_dir_all(&dir).unwrap();
            let mut tiny = 0;
            for s in 1..(1u32 << n) - 1 {
                let (a, b) = (got.log_p(s), want.log_p(s));
                if b == f64::NEG_INFINITY {
                    assert_eq!(a, b, "log P({s:#b}) {what}");
                    continue;
                }
                tiny += usize::from(b < -200.0);
                assert!(
                    (a - b).abs() <= 1e-9 * b.abs().max(1.0),
                    "log P({s:#b}) {what}: {a} vs {b}"
                );
            }
            assert!(tiny > 0, "{what}: no marginal below e^-200");
        }
    }
}

/// Under triplets hcc keeps its pair form (the forbidden clusters marked
/// block by block, `PairSums::forbidden`): `logz` and `map` are admitted at
/// one 8-byte table (`pass_bytes`), every marginal at two
/// (`pass_marginals_bytes`), each with one bit per subset for the forbidden
/// clusters, refused one byte below, and the answers equal the general
/// kernel's on the restricted model.
#[test]
fn issue24_constrained_passes_hold_the_unconstrained_memory() {
    use trellis::{General, Trellis, pass_bytes, pass_marginals_bytes};
    let n = 16;
    let (w, triplets) = four_groups(n);
    let hcc = Constrained::new(Hcc::new(&w, 1.5).unwrap(), triplets.clone()).unwrap();
    // No cluster holds `c` and exactly one of `a`, `b`.
    let satisfies = |tree: &Tree| {
        tree.clusters().iter().all(|c| {
            triplets
                .iter()
                .all(|t| !c.contains(&t.c) || c.contains(&t.a) == c.contains(&t.b))
        })
    };
    let capped = |limit: u64| Options {
        memory_limit: Some(limit),
        ..Options::default()
    };
    let general = Trellis::new(General(&hcc)).unwrap();
    let tol = 1e-10 * general.log_z().abs().max(1.0);
    let bits = (1u64 << n) / 8;
    for (need, bytes) in [
        (Need::LogZ, pass_bytes(n) + bits),
        (Need::Map, pass_bytes(n) + bits),
        (Need::Marginals, pass_marginals_bytes(n) + bits),
        (Need::All, pass_marginals_bytes(n) + bits),
    ] {
        let e = Posterior::dense(hcc.clone(), need, &capped(bytes - 1)).unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::OutOfMemory { .. }),
            "{need:?}: {e}"
        );
        let post = Posterior::dense(hcc.clone(), need, &capped(bytes)).unwrap();
        if need != Need::Map {
            let got = post.log_z().unwrap();
            assert!((got - general.log_z()).abs() <= tol, "{need:?}: {got}");
        }
        if matches!(need, Need::Map | Need::All) {
            let got = post.map().unwrap();
            assert!(
                (got.log_potential - general.map().log_potential).abs() <= tol,
                "{need:?}"
            );
            assert!(satisfies(&got.tree), "{need:?}: {}", got.tree);
        }
        if matches!(need, Need::Marginals | Need::All) {
            let want = general.marginals().unwrap();
            for (members, p) in post.cluster_marginals(0.0, &capped(bytes)).unwrap() {
                let s: u32 = members.iter().map(|&i| 1u32 << i).sum();
                let q = want.p(s);
                assert!(
                    (p - q).abs() <= 1e-9 * q.max(1e-300),
                    "{need:?} P({s:#b}): {p} vs {q}"
                );
            }
        }
    }
}
