//! The Dirichlet diffusion tree sampler (`trellis::ddt`): densities by quadrature,
//! the MH chain against the exact posterior, constraints, BUILD, triplet distance.
//!
//! # The MCMC frequency test and its bound
//!
//! On 4 leaves (15 topologies) the exact posterior of each topology `T` is
//! `∫ p(T, t) p(X | T, t) dt` normalised, with the 3 divergence times integrated by
//! nested Gauss-Legendre quadrature (checked converged: orders 20 and 28 agree to 1e-7, far below the
//! Monte Carlo error of about 1e-3).
//! The chain's states are correlated, so the test uses **batch means**: the chain
//! of `L` steps is cut into `B = 50` batches; when a batch is much longer than the
//! integrated autocorrelation time (here batches of 40,000 steps against a few
//! steps), the batch frequencies of a topology are approximately i.i.d. normal
//! around the posterior probability `p_T`, so `z_T = (p̂_T - p_T) / (s_T / √B)`
//! (with `s_T` the standard deviation of the batch frequencies) follows Student's
//! t with `B - 1 = 49` degrees of freedom. `P(|t_49| > 5) ≈ 8·10^-6`, so with a
//! union bound over the 15 topologies a correct sampler fails `max |z_T| < 5` with
//! probability about `1.2·10^-4` over the seed. The seed is fixed, so the test is
//! deterministic. To keep a degenerate batch variance from passing anything, `s_T`
//! is floored at `sqrt(p_T (1 - p_T) / (L/B))`, the i.i.d. value (autocorrelation
//! only increases it).
//!
//! **Negative control.** The same chain is compared with the exact posterior of a
//! slightly different model (`c = 1.2` instead of 1; the two exact posteriors are
//! a total variation distance of about 0.03 apart); it must fail the same threshold, which
//! shows the test can see errors of that size.

use std::collections::HashMap;

use trellis::Tree;
use trellis::ddt::{
    Chain, Dataset, Ddt, DdtTree, Hierarchy, LcaDepths, Params, Triplet, build, induced,
    triplet_distance, user_answer,
};

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

fn points_1d(xs: &[f64]) -> Dataset {
    Dataset::new(
        (0..xs.len()).map(|i| format!("p{i}")).collect(),
        xs.iter().map(|&x| vec![x]).collect(),
    )
    .unwrap()
}

fn model(xs: &[f64], c: f64) -> Ddt {
    let p = points_1d(xs);
    let mean = p.mean();
    Ddt::new(
        &p,
        Params {
            c,
            sigma: vec![1.0],
            sigma0: vec![1.0],
            mu0: mean,
            leaf_noise: 0.05,
        },
    )
    .unwrap()
}

fn random_points(n: usize, d: usize, seed: u64) -> Dataset {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    Dataset::new(
        (0..n).map(|i| format!("x{i}")).collect(),
        (0..n)
            .map(|i| {
                (0..d)
                    .map(|_| (i % 3) as f64 * 2.0 + rng.random::<f64>())
                    .collect()
            })
            .collect(),
    )
    .unwrap()
}

fn random_model(n: usize, d: usize, seed: u64) -> Ddt {
    let p = random_points(n, d, seed);
    let params = Params::reference(&p, vec![0.5; d], 0.01);
    Ddt::new(&p, params).unwrap()
}

/// Gauss-Legendre nodes and weights on [-1, 1].
fn gauss_legendre(q: usize) -> Vec<(f64, f64)> {
    (0..q)
        .map(|i| {
            let mut x = (std::f64::consts::PI * (i as f64 + 0.75) / (q as f64 + 0.5)).cos();
            let mut dp = 0.0;
            for _ in 0..100 {
                let (mut p0, mut p1) = (1.0, x);
                for k in 2..=q {
                    let p2 = ((2 * k - 1) as f64 * x * p1 - (k - 1) as f64 * p0) / k as f64;
                    p0 = p1;
                    p1 = p2;
                }
                dp = q as f64 * (x * p1 - p0) / (x * x - 1.0);
                let dx = p1 / dp;
                x -= dx;
                if dx.abs() < 1e-15 {
                    break;
                }
            }
            (x, 2.0 / ((1.0 - x * x) * dp * dp))
        })
        .collect()
}

/// For each internal node in pre-order, the pre-order index of its parent.
fn preorder_parents(t: &Tree) -> Vec<Option<usize>> {
    fn go(t: &Tree, parent: Option<usize>, out: &mut Vec<Option<usize>>) {
        if let Tree::Node(l, r) = t {
            let me = out.len();
            out.push(parent);
            go(l, Some(me), out);
            go(r, Some(me), out);
        }
    }
    let mut out = Vec::new();
    go(t, None, &mut out);
    out
}

/// `∫ exp(f(T, t)) dt` over the divergence times of topology `t`.
fn integrate(t: &Tree, q: usize, f: &dyn Fn(&DdtTree) -> f64) -> f64 {
    let parents = preorder_parents(t);
    let gl = gauss_legendre(q);
    // 1 - t of each internal node.
    let mut times = vec![1.0; parents.len()];
    fn rec(
        i: usize,
        t: &Tree,
        parents: &[Option<usize>],
        gl: &[(f64, f64)],
        times: &mut Vec<f64>,
        f: &dyn Fn(&DdtTree) -> f64,
    ) -> f64 {
        if i == parents.len() {
            return f(&DdtTree::with_one_minus_times(t, times).unwrap()).exp();
        }
        // 1 - t = (1 - lo)(1 - u)^3, u in (0, 1): smooths the (1 - t)^α factors at t = 1.
        let up = parents[i].map_or(1.0, |p| times[p]);
        let mut sum = 0.0;
        for &(x, w) in gl {
            let v = (1.0 - x) / 2.0;
            times[i] = up * v * v * v;
            let jac = up * 3.0 * v * v / 2.0;
            sum += w * jac * rec(i + 1, t, parents, gl, times, f);
        }
        sum
    }
    rec(0, t, &parents, &gl, &mut times, f)
}

/// The exact posterior over the topologies of `n` leaves (quadrature of order `q`).
fn exact_posterior(m: &Ddt, n: usize, q: usize) -> Vec<(Tree, f64)> {
    let trees = Tree::all(n);
    let masses: Vec<f64> = trees
        .iter()
        .map(|t| integrate(t, q, &|d| m.log_joint(d)))
        .collect();
    let z: f64 = masses.iter().sum();
    trees
        .into_iter()
        .zip(masses.iter().map(|w| w / z))
        .collect()
}

#[test]
fn prior_integrates_to_one_over_topologies_and_times() {
    for (n, c) in [(2, 1.0), (3, 1.0), (3, 2.5), (4, 1.0), (4, 0.7)] {
        let m = model(
            &vec![0.0; n]
                .iter()
                .enumerate()
                .map(|(i, _)| i as f64)
                .collect::<Vec<_>>(),
            c,
        );
        let masses: Vec<f64> = Tree::all(n)
            .iter()
            .map(|t| integrate(t, 24, &|d| m.log_prior(d)))
            .collect();
        let total: f64 = masses.iter().sum();
        assert!(
            (total - 1.0).abs() < 1e-6,
            "n = {n}, c = {c}: total {total}"
        );
        if n == 3 {
            // Exchangeability: the three labelled topologies are equally likely.
            for w in &masses {
                assert!((w - 1.0 / 3.0).abs() < 1e-7, "{masses:?}");
            }
        }
    }
}

#[test]
fn prior_is_symmetric_in_child_order_and_labels() {
    // ((0,1),(2,3)) with times listed for either child order.
    let a = DdtTree::new(&Tree::parse("[[0,1],[2,3]]").unwrap(), &[0.2, 0.5, 0.7]).unwrap();
    let b = DdtTree::new(&Tree::parse("[[3,2],[1,0]]").unwrap(), &[0.2, 0.7, 0.5]).unwrap();
    let m = model(&[0.0, 0.5, 1.0, 3.0], 1.0);
    assert!((m.log_prior(&a) - m.log_prior(&b)).abs() < 1e-12);
    assert!((m.log_likelihood(&a) - m.log_likelihood(&b)).abs() < 1e-12);
    // Closed form for 2 leaves: a(t) exp(-A(t) H_1) = c (1 - t)^(c - 1).
    let m2 = model(&[0.0, 1.0], 2.0);
    let t = DdtTree::new(&Tree::parse("[0,1]").unwrap(), &[0.3]).unwrap();
    assert!((m2.log_prior(&t) - (2.0f64.ln() + 0.7f64.ln())).abs() < 1e-12);
}

#[test]
fn likelihood_matches_the_two_leaf_gaussian() {
    // Two leaves, one dimension: x0 - x1 ~ N(0, 2 σ² (1 - t) + 2 ε σ²) and their
    // weighted mean against the root; check against the bivariate normal directly.
    let (x0, x1, t, s2, s0, eps, mu0) = (0.3, 1.4, 0.35, 0.8, 0.6, 0.05, 0.2);
    let p = points_1d(&[x0, x1]);
    let m = Ddt::new(
        &p,
        Params {
            c: 1.0,
            sigma: vec![s2],
            sigma0: vec![s0],
            mu0: vec![mu0],
            leaf_noise: eps,
        },
    )
    .unwrap();
    let tree = DdtTree::new(&Tree::parse("[0,1]").unwrap(), &[t]).unwrap();
    // Covariance of (x0, x1): shared part s0 + s2 t, own part s2 (1 - t) + eps s2.
    let shared = s0 + s2 * t;
    let own = s2 * (1.0 - t) + eps * s2;
    let (v, cv) = (shared + own, shared);
    let det = v * v - cv * cv;
    let (d0, d1) = (x0 - mu0, x1 - mu0);
    let quad = (v * d0 * d0 - 2.0 * cv * d0 * d1 + v * d1 * d1) / det;
    let want = -(2.0 * std::f64::consts::PI).ln() - 0.5 * det.ln() - 0.5 * quad;
    assert!((m.log_likelihood(&tree) - want).abs() < 1e-12);
}

#[test]
fn incremental_density_matches_scratch_along_constrained_chains() {
    let m = random_model(25, 3, 5);
    let target = random_tree(25, 11);
    let t = LcaDepths::from_tree(&target, 25).unwrap();
    let trips: Vec<Triplet> = t.triplets().into_iter().step_by(97).take(15).collect();
    let mut s = Chain::with_constraints(m.clone(), trips.clone(), 3).unwrap();
    for i in 0..20_000 {
        s.step();
        if i % 500 == 0 {
            s.tree().check().unwrap();
            let scratch = m.log_joint(s.tree());
            assert!(
                (s.log_joint() - scratch).abs() < 1e-8 * scratch.abs().max(1.0),
                "{} vs {scratch}",
                s.log_joint()
            );
        }
    }
    let st = s.stats();
    assert!(st.spr_accepted > 100 && st.time_accepted > 1000, "{st:?}");
}

#[test]
fn same_seed_same_chain() {
    let run = |seed| {
        let mut s = Chain::new(random_model(20, 2, 1), seed);
        s.run(3000);
        s.tree().clone()
    };
    assert_eq!(run(9), run(9));
    assert_ne!(run(9), run(10));
}

/// A uniformly random-ish binary tree over 0..n (random joins).
fn random_tree(n: usize, seed: u64) -> Tree {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut pool: Vec<Tree> = (0..n).map(Tree::Leaf).collect();
    while pool.len() > 1 {
        let i = rng.random_range(0..pool.len());
        let a = pool.swap_remove(i);
        let j = rng.random_range(0..pool.len());
        let b = pool.swap_remove(j);
        pool.push(Tree::node(a, b));
    }
    pool.pop().unwrap()
}

/// Topology frequencies of one chain in `batches` batches.
fn chain_batches(
    s: &mut Chain,
    index: &HashMap<Tree, usize>,
    steps: usize,
    batches: usize,
) -> Vec<Vec<f64>> {
    let len = steps / batches;
    (0..batches)
        .map(|_| {
            let mut f = vec![0.0; index.len()];
            for _ in 0..len {
                s.step();
                f[index[&s.tree().topology()]] += 1.0 / len as f64;
            }
            f
        })
        .collect()
}

/// max over topologies of |z| (see the module docs), and the total variation distance.
fn batch_z(batches: &[Vec<f64>], exact: &[f64], batch_len: usize) -> (f64, f64) {
    let b = batches.len() as f64;
    let mut max_z: f64 = 0.0;
    let mut tv = 0.0;
    for (k, &p) in exact.iter().enumerate() {
        let mean = batches.iter().map(|f| f[k]).sum::<f64>() / b;
        let var = batches.iter().map(|f| (f[k] - mean).powi(2)).sum::<f64>() / (b - 1.0);
        let floor = p * (1.0 - p) / batch_len as f64;
        let se = (var.max(floor) / b).sqrt();
        max_z = max_z.max((mean - p).abs() / se);
        tv += (mean - p).abs() / 2.0;
    }
    (max_z, tv)
}

#[test]
fn chain_topology_frequencies_match_the_exact_posterior_with_negative_control() {
    let xs = [0.0, 0.4, 1.1, 2.0];
    let m = model(&xs, 1.0);
    let exact = exact_posterior(&m, 4, 28);
    // Quadrature converged.
    let coarse = exact_posterior(&m, 4, 20);
    for (a, b) in exact.iter().zip(&coarse) {
        assert!(
            (a.1 - b.1).abs() < 1e-9,
            "quadrature not converged: {} vs {}",
            a.1,
            b.1
        );
    }
    let index: HashMap<Tree, usize> = exact
        .iter()
        .enumerate()
        .map(|(i, (t, _))| (t.clone(), i))
        .collect();
    let p: Vec<f64> = exact.iter().map(|e| e.1).collect();
    let (steps, nb) = (2_000_000, 50);
    let mut s = Chain::new(m, 42);
    s.run(1000);
    let batches = chain_batches(&mut s, &index, steps, nb);
    let (z, tv) = batch_z(&batches, &p, steps / nb);
    eprintln!("unconstrained: max |z| = {z:.2}, TV = {tv:.4}, exact {p:?}");
    assert!(z < 5.0, "max |z| = {z:.2}, TV = {tv:.4}; exact {p:?}");

    // Negative control: the exact posterior of another c.
    let wrong: Vec<f64> = exact_posterior(&model(&xs, 1.2), 4, 20)
        .iter()
        .map(|e| e.1)
        .collect();
    let tv_models: f64 = wrong
        .iter()
        .zip(&p)
        .map(|(a, b)| (a - b).abs())
        .sum::<f64>()
        / 2.0;
    let (z_wrong, _) = batch_z(&batches, &wrong, steps / nb);
    eprintln!("control: max |z| = {z_wrong:.2}, TV between the models {tv_models:.4}");
    assert!(
        z_wrong > 5.0,
        "the control passed: max |z| = {z_wrong:.2} (TV between models {tv_models:.4})"
    );
}

#[test]
fn constrained_chain_matches_the_restricted_posterior() {
    let xs = [0.0, 0.4, 1.1, 2.0];
    let m = model(&xs, 1.0);
    // ({0, 3}, 1) goes against the data, and ({2, 3}, 0) with it.
    let cons = vec![Triplet::new(0, 3, 1).unwrap()];
    let exact = exact_posterior(&m, 4, 28);
    let restricted: Vec<(Tree, f64)> = exact
        .into_iter()
        .filter(|(t, _)| {
            let d = DdtTree::with_depth_times(t).unwrap();
            cons.iter().all(|c| d.satisfies(c))
        })
        .collect();
    let z: f64 = restricted.iter().map(|e| e.1).sum();
    let p: Vec<f64> = restricted.iter().map(|e| e.1 / z).collect();
    assert_eq!(p.len(), 5, "({{0,3}},1) allows 5 of the 15 topologies");
    let index: HashMap<Tree, usize> = restricted
        .iter()
        .enumerate()
        .map(|(i, (t, _))| (t.clone(), i))
        .collect();
    let (steps, nb) = (1_500_000, 50);
    let mut s = Chain::with_constraints(m, cons, 8).unwrap();
    s.run(1000);
    let batches = chain_batches(&mut s, &index, steps, nb);
    let (zmax, tv) = batch_z(&batches, &p, steps / nb);
    eprintln!("constrained: max |z| = {zmax:.2}, TV = {tv:.4}, exact {p:?}");
    assert!(zmax < 5.0, "max |z| = {zmax:.2}, TV = {tv:.4}; exact {p:?}");
}

#[test]
fn constrained_chain_on_five_leaves_matches_the_restricted_posterior() {
    // Two constraints against the data, touching every kind of walk restriction.
    let xs = [0.0, 0.3, 0.9, 1.6, 2.4];
    let m = model(&xs, 1.0);
    let cons = vec![
        Triplet::new(0, 4, 2).unwrap(),
        Triplet::new(1, 2, 3).unwrap(),
    ];
    let trees: Vec<Tree> = Tree::all(5)
        .into_iter()
        .filter(|t| satisfies_all(t, 5, &cons))
        .collect();
    let posterior = |q| {
        let w: Vec<f64> = trees
            .iter()
            .map(|t| integrate(t, q, &|d| m.log_joint(d)))
            .collect();
        let z: f64 = w.iter().sum();
        w.into_iter().map(|x| x / z).collect::<Vec<f64>>()
    };
    let p = posterior(16);
    let coarse = posterior(12);
    let quad_err = p
        .iter()
        .zip(&coarse)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(quad_err < 2e-4, "quadrature not converged: {quad_err}");
    let index: HashMap<Tree, usize> = trees
        .iter()
        .enumerate()
        .map(|(i, t)| (t.clone(), i))
        .collect();
    let (steps, nb) = (1_500_000, 50);
    let mut s = Chain::with_constraints(m.clone(), cons, 21).unwrap();
    s.run(1000);
    let batches = chain_batches(&mut s, &index, steps, nb);
    let (zmax, tv) = batch_z(&batches, &p, steps / nb);
    eprintln!(
        "5 leaves, 2 constraints, {} topologies: max |z| = {zmax:.2}, TV = {tv:.4}, quadrature {quad_err:.1e}",
        trees.len()
    );
    assert!(zmax < 5.0, "max |z| = {zmax:.2}, TV = {tv:.4}; exact {p:?}");
}

#[test]
fn constrained_sampler_never_violates_a_constraint() {
    for seed in 0..30u64 {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let n = rng.random_range(6..20);
        let target = random_tree(n, seed + 100);
        let all = LcaDepths::from_tree(&target, n).unwrap().triplets();
        let k = rng.random_range(1..(3 * n).min(all.len()));
        let cons: Vec<Triplet> = (0..k)
            .map(|_| all[rng.random_range(0..all.len())])
            .collect();
        let mut s = Chain::with_constraints(random_model(n, 2, seed), cons.clone(), seed).unwrap();
        for _ in 0..3000 {
            s.step();
            let t = s.tree();
            for c in &cons {
                assert!(
                    t.satisfies(c),
                    "seed {seed}: {c:?} violated by {}",
                    t.topology()
                );
            }
        }
        assert!(
            s.stats().spr_accepted > 0,
            "seed {seed}: the chain never moved"
        );
    }
}

#[test]
fn adding_triplets_one_by_one_keeps_all_of_them() {
    let n = 30;
    let target = random_tree(n, 77);
    let lca = LcaDepths::from_tree(&target, n).unwrap();
    let all = lca.triplets();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    let mut s = Chain::new(random_model(n, 2, 4), 2);
    for _ in 0..60 {
        let t = all[rng.random_range(0..all.len())];
        s.add_constraint(t).unwrap();
        assert!(s.constraints().iter().all(|c| s.tree().satisfies(c)));
        s.tree().check().unwrap();
        let scratch = s.model().log_joint(s.tree());
        assert!((s.log_joint() - scratch).abs() < 1e-8 * scratch.abs());
        for _ in 0..200 {
            s.step();
        }
        assert!(s.constraints().iter().all(|c| s.tree().satisfies(c)));
    }
    // A conflicting triplet is refused and changes nothing.
    let t = s.constraints()[0];
    let before = s.tree().clone();
    let err = s
        .add_constraint(Triplet::new(t.a, t.c, t.b).unwrap())
        .unwrap_err();
    assert!(
        matches!(err.kind(), trellis::ErrorKind::UnrealisableTriplets { .. }),
        "{err}"
    );
    assert_eq!(s.tree(), &before);
    assert_eq!(s.constraints().len(), 60);
}

fn satisfies_all(t: &Tree, n: usize, trips: &[Triplet]) -> bool {
    let l = LcaDepths::from_tree(t, n).unwrap();
    trips.iter().all(|c| l.satisfies(c))
}

#[test]
fn build_is_consistent_and_exactly_detects_unrealisable_sets() {
    // Against brute force over all 105 trees on 5 points: random triplet sets.
    let n = 5;
    let trees = Tree::all(n);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    let (mut ok, mut bad) = (0, 0);
    for _ in 0..400 {
        let k = rng.random_range(1..6);
        let trips: Vec<Triplet> = (0..k)
            .map(|_| {
                let idx = rand::seq::index::sample(&mut rng, n, 3).into_vec();
                Triplet::new(idx[0], idx[1], idx[2]).unwrap()
            })
            .collect();
        let exists = trees.iter().any(|t| satisfies_all(t, n, &trips));
        match build(n, &trips) {
            Ok(t) => {
                assert!(exists);
                assert!(satisfies_all(&t, n, &trips), "{t} violates {trips:?}");
                ok += 1;
            }
            Err(e) => {
                assert!(!exists, "BUILD failed on a realisable set {trips:?}: {e}");
                let trellis::ErrorKind::UnrealisableTriplets { a, b, c, .. } = *e.kind() else {
                    panic!("wrong error kind: {e}");
                };
                assert!(trips.contains(&Triplet { a, b, c }), "{e}");
                bad += 1;
            }
        }
    }
    assert!(ok > 50 && bad > 50, "{ok} realisable, {bad} not");
    // Realisable sets from larger random trees.
    for seed in 0..20 {
        let t = random_tree(40, seed);
        let all = LcaDepths::from_tree(&t, 40).unwrap().triplets();
        let trips: Vec<Triplet> = all.iter().copied().step_by(37).collect();
        let b = build(40, &trips).unwrap();
        assert!(satisfies_all(&b, 40, &trips));
    }
    let err = build(
        3,
        &[
            Triplet::new(0, 1, 2).unwrap(),
            Triplet::new(0, 2, 1).unwrap(),
        ],
    )
    .unwrap_err();
    assert!(err.to_string().contains("cannot all hold"), "{err}");
}

#[test]
fn triplet_distance_on_hand_checked_trees() {
    let td = |target: &str, tree: &str| {
        let h = Hierarchy::parse_newick(target).unwrap();
        let names: Vec<String> = (0..5).map(|i| i.to_string()).collect();
        let n = h.leaf_names().len();
        let tl = h.lca_depths(&names[..n]).unwrap();
        let t = LcaDepths::from_tree(&Tree::parse(tree).unwrap(), n).unwrap();
        triplet_distance(&tl, &t)
    };
    // Binary target: 4 resolved triplets.
    assert_eq!(td("((0,1),(2,3));", "((0,2),(1,3))"), (1.0, 4));
    assert_eq!(td("((0,1),(2,3));", "(((0,1),2),3)"), (0.5, 4));
    assert_eq!(td("((0,1),(2,3));", "((1,0),(3,2))"), (0.0, 4));
    // Multifurcating target: {0,1,2} unresolved, 9 resolved triplets.
    assert_eq!(
        td("((0,1,2)a,(3,4)b);", "(((0,1),(2,3)),4)"),
        (5.0 / 9.0, 9)
    );
    // A refinement of the target has distance 0.
    assert_eq!(td("((0,1,2),(3,4));", "(((0,1),2),(3,4))"), (0.0, 9));
    assert_eq!(td("(0,1,2,3,4);", "(((0,1),2),(3,4))"), (0.0, 0));
}

#[test]
fn targets_and_names() {
    let h = Hierarchy::parse_newick("(('a b',c:0.5)x:1,(d,e));").unwrap();
    assert_eq!(h.leaf_names(), vec!["a b", "c", "d", "e"]);
    let names: Vec<String> = ["e", "d", "c", "a b"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let l = h.lca_depths(&names).unwrap();
    assert_eq!(l.resolve(0, 1, 2), Some(Triplet { a: 0, b: 1, c: 2 }));
    let missing: Vec<String> = ["e", "d", "c", "zz"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let err = h.lca_depths(&missing).unwrap_err().to_string();
    assert!(err.contains("zz") || err.contains("a b"), "{err}");
    for bad in ["((a,b);", "(a,,b);", "(a,b)c d;", "(a,a);", "(a:x,b);"] {
        assert!(Hierarchy::parse_newick(bad).is_err(), "{bad}");
    }
    // The sampler's Newick reads back with the same leaves.
    let s = Chain::new(random_model(6, 1, 0), 0);
    let names: Vec<String> = (0..6).map(|i| format!("n({i})")).collect();
    let back = Hierarchy::parse_newick(&s.tree().to_newick(&names)).unwrap();
    assert_eq!(back.leaf_names().len(), 6);
    back.lca_depths(&names).unwrap();
}

#[test]
fn simulated_user_answers_a_violated_target_triplet() {
    let target = Tree::parse("[[[0,1],2],[3,[4,5]]]").unwrap();
    let lca = LcaDepths::from_tree(&target, 6).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(0);
    assert_eq!(user_answer(&lca, &target, &mut rng), None);
    let shown = Tree::parse("[[[0,3],2],[1,[4,5]]]").unwrap();
    let shown_l = LcaDepths::from_tree(&shown, 6).unwrap();
    for _ in 0..20 {
        let t = user_answer(&lca, &shown, &mut rng).unwrap();
        assert!(lca.satisfies(&t) && !shown_l.satisfies(&t), "{t:?}");
        // The root split of the shown tree is examined first: {0,3,2} | {1,4,5}.
        let left = [0, 2, 3];
        let n_left = [t.a, t.b, t.c].iter().filter(|x| left.contains(x)).count();
        assert!(
            n_left == 1 || n_left == 2,
            "{t:?} is not across the root split"
        );
    }
    // Induced subtrees.
    let d = DdtTree::with_depth_times(&shown).unwrap();
    assert_eq!(
        induced(&d, &[0, 2, 5]).canonical(),
        Tree::parse("[[0,2],5]").unwrap()
    );
}

/// The one DDT builder of the doors: the jitter is checked and seeded, a
/// refused jitter leaves the points as they were, and too few points or a
/// parameter out of range is refused by name.
#[test]
fn interactive_model_checks_jitter_points_and_parameters() {
    use trellis::ddt::{ModelSpec, interactive_model};
    let rows = vec![
        vec![0.0, 1.0],
        vec![1.0, 0.5],
        vec![2.0, 2.0],
        vec![0.5, 3.0],
    ];
    let names: Vec<String> = (0..4).map(|i| format!("p{i}")).collect();
    let points = Dataset::new(names.clone(), rows.clone()).unwrap();
    let spec = ModelSpec {
        c: 1.0,
        sigma: "var/2",
        sigma0: "1/2",
        leaf_noise: 0.01,
    };
    assert!(interactive_model(&points, &spec).is_ok());

    let row = |d: &Dataset, i: usize| d.row(i).to_vec();
    let mut same = points.clone();
    same.jitter(0.0, 7).unwrap();
    assert!((0..4).all(|i| row(&same, i) == rows[i]));
    let (mut a, mut b, mut c) = (points.clone(), points.clone(), points.clone());
    a.jitter(0.1, 7).unwrap();
    b.jitter(0.1, 7).unwrap();
    c.jitter(0.1, 8).unwrap();
    assert!((0..4).all(|i| row(&a, i) == row(&b, i)));
    assert!((0..4).any(|i| row(&a, i) != row(&c, i)));
    assert!((0..4).any(|i| row(&a, i) != rows[i]));

    for sd in [-1.0, f64::NAN, f64::INFINITY, 1e308] {
        let mut d = points.clone();
        let e = d.jitter(sd, 0).unwrap_err().to_string();
        assert!(e.contains("jitter"), "{e}");
        assert!(
            (0..4).all(|i| row(&d, i) == rows[i]),
            "sd {sd} changed the points"
        );
    }

    let two = Dataset::new(names[..2].to_vec(), rows[..2].to_vec()).unwrap();
    let e = interactive_model(&two, &spec).unwrap_err().to_string();
    assert!(e.contains("at least 3 points, not 2"), "{e}");
    let e = interactive_model(
        &points,
        &ModelSpec {
            sigma: "var/0",
            ..spec
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("sigma"), "{e}");
    let e = interactive_model(&points, &ModelSpec { c: 1e308, ..spec })
        .unwrap_err()
        .to_string();
    assert!(e.contains("c = 1e308"), "{e}");
}
