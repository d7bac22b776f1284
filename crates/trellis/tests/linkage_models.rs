//! The linkage potentials (`linkage-average`, `linkage-complete`,
//! `linkage-single`) against brute force over all `(2n-3)!!` trees, `n <= 7`.
//!
//! The reference model here computes `d(L, R)` straight from the raw matrix
//! (a mean, max or min over the pairs across the split), not from the
//! library's summaries; the oracle (`oracle.rs`) enumerates the trees and
//! gives `log Z`, the MAP value and every cluster marginal. Checked for each
//! kind, on random distance matrices (continuous, with ties and zeros, large
//! values) and Euclidean distances of random points, at β from 0 to large:
//!
//! - split costs and log-potentials from the summaries, split by split;
//! - the dense trellis: `log Z`, the MAP value and tree cost, every cluster
//!   marginal, and sampled tree frequencies (total-variation bound as in
//!   `sampling.rs`);
//! - the sparse trellis on random families and on the full family;
//! - exact A* (the brute-force minimum cost) and approximate A*;
//! - greedy and beam search (valid trees, costs recomputed by `tree_cost`),
//!   greedy against classic linkage, and the single-linkage optimum (MST);
//! - the MST heuristic against the optimum of every sub-cluster;
//! - the validation of `Distances` and of the model's parameters.

use std::collections::{HashMap, HashSet};

use trellis::astar::{ApproxOptions, approximate, exact};
use trellis::baselines::{beam_search, default_beam_width, euclidean_distances, greedy, linkage};
use trellis::sparse::SparseTrellis;
use trellis::{
    Cluster, Distances, ErrorKind, LinkageKind, LinkagePotential, LinkageSummary, Mask, Matrix,
    Model, Options, Points, Search, Set, Summarize, Tree, Trellis, Weights, tree_cost,
    tree_log_potential,
};

use crate::oracle::{self, Brute, Gen, RefModel, all, points};

const KINDS: [LinkageKind; 3] = LinkageKind::ALL;

/// Inverse temperatures: 0 (uniform over trees), moderate, and large (the
/// posterior concentrates on the MAP tree; `|log ψ|` reaches hundreds).
const BETAS: [f64; 4] = [0.0, 0.7, 3.0, 60.0];

// ---------------------------------------------------------------------------
// The reference model.

/// A linkage potential computed naively from the raw matrix.
#[derive(Clone, Debug)]
struct NaiveLinkage {
    d: Vec<Vec<f64>>,
    kind: LinkageKind,
    beta: f64,
}

impl NaiveLinkage {
    fn cross(&self, l: Mask, r: Mask) -> Vec<f64> {
        let mut v = Vec::new();
        for i in points(l) {
            for j in points(r) {
                v.push(self.d[i][j]);
            }
        }
        v
    }

    /// `d(L, R)` from the matrix.
    fn cost(&self, l: Mask, r: Mask) -> f64 {
        let v = self.cross(l, r);
        match self.kind {
            LinkageKind::Average => v.iter().sum::<f64>() / v.len() as f64,
            LinkageKind::Complete => v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            LinkageKind::Single => v.iter().copied().fold(f64::INFINITY, f64::min),
        }
    }

    /// Bound on the intermediate values of `cost(l, r)`: the library's
    /// average is `(W(S) - W(L) - W(R)) / (|L| |R|)`; max and min are exact.
    fn cost_magnitude(&self, l: Mask, r: Mask) -> f64 {
        match self.kind {
            LinkageKind::Average => {
                let inside = |s: Mask| {
                    let p = points(s);
                    let mut t = 0.0;
                    for (a, &i) in p.iter().enumerate() {
                        for &j in &p[a + 1..] {
                            t += self.d[i][j];
                        }
                    }
                    t
                };
                (inside(l | r) + inside(l) + inside(r))
                    / (l.count_ones() as f64 * r.count_ones() as f64)
            }
            _ => self.cost(l, r),
        }
    }

    /// The cost of a tree over `0..n`, from its canonical splits.
    fn tree_cost(&self, t: &Tree) -> f64 {
        oracle::canonical_splits(t)
            .into_iter()
            .map(|(l, r)| self.cost(l, r))
            .sum()
    }

    /// The cheapest hierarchy over `s` (brute force over the relabelled trees
    /// of `|s|` points).
    fn optimum(&self, s: Mask) -> f64 {
        let p = points(s);
        let relabel = |m: Mask| -> Mask { points(m).iter().fold(0, |acc, &i| acc | (1 << p[i])) };
        oracle::trees(p.len())
            .iter()
            .map(|t| {
                t.splits
                    .iter()
                    .map(|&(l, r)| self.cost(relabel(l), relabel(r)))
                    .sum::<f64>()
            })
            .fold(f64::INFINITY, f64::min)
    }
}

impl RefModel for NaiveLinkage {
    fn n(&self) -> usize {
        self.d.len()
    }
    fn log_psi(&self, l: Mask, r: Mask) -> f64 {
        -self.beta * self.cost(l, r)
    }
    fn magnitude(&self, l: Mask, r: Mask) -> f64 {
        self.beta * self.cost_magnitude(l, r)
    }
}

// ---------------------------------------------------------------------------
// Instances.

/// How the random distances are drawn.
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// Uniform in `[0, 1)`.
    Uniform,
    /// From `{0, 0.5, 1, 2}`: ties and zeros everywhere.
    Ties,
    /// Uniform in `[0, 1000)`.
    Large,
    /// Euclidean distances of uniform points in the unit square.
    Points,
}

const SHAPES: [Shape; 4] = [Shape::Uniform, Shape::Ties, Shape::Large, Shape::Points];

/// Random points in the unit square (one per row).
fn random_points(n: usize, g: &mut Gen) -> Vec<Vec<f64>> {
    (0..n).map(|_| vec![g.unit(), g.unit()]).collect()
}

/// A random distance matrix, computed here (Euclidean distances naively).
fn random_distances(n: usize, shape: Shape, g: &mut Gen) -> Vec<Vec<f64>> {
    match shape {
        Shape::Points => {
            let p = random_points(n, g);
            (0..n)
                .map(|i| {
                    (0..n)
                        .map(|j| {
                            let (dx, dy) = (p[i][0] - p[j][0], p[i][1] - p[j][1]);
                            (dx * dx + dy * dy).sqrt()
                        })
                        .collect()
                })
                .collect()
        }
        _ => {
            let upper: Vec<f64> = (0..n * n.saturating_sub(1) / 2)
                .map(|_| match shape {
                    Shape::Ties => [0.0, 0.5, 1.0, 2.0][g.below(4)],
                    Shape::Large => 1000.0 * g.unit(),
                    _ => g.unit(),
                })
                .collect();
            oracle::symmetric(n, &upper)
        }
    }
}

fn lib_distances(d: &[Vec<f64>]) -> Distances {
    Distances::from_matrix(&Matrix::from_rows(d.to_vec()).unwrap()).unwrap()
}

/// The library's model and the naive one over the same matrix.
fn models(d: &[Vec<f64>], kind: LinkageKind, beta: f64) -> (LinkagePotential, NaiveLinkage) {
    let model = LinkagePotential::new(&lib_distances(d), kind, beta).unwrap();
    let naive = NaiveLinkage {
        d: d.to_vec(),
        kind,
        beta,
    };
    (model, naive)
}

/// Every instance of the brute-force tests: `(n, shape, seed)`.
fn instances() -> impl Iterator<Item = (usize, Shape, u64)> {
    (2..=oracle::MAX_BRUTE).flat_map(|n| {
        SHAPES
            .into_iter()
            .enumerate()
            .map(move |(k, shape)| (n, shape, 1000 * n as u64 + k as u64))
    })
}

/// `a` and `b` equal up to `tol`, with a message.
#[track_caller]
fn assert_close(what: &str, got: f64, want: f64, tol: f64) {
    assert!(
        got == want || (got - want).abs() <= tol,
        "{what}: got {got:e}, want {want:e} (diff {:e} > tol {tol:e})",
        (got - want).abs()
    );
}

/// A relative tolerance on costs (sums of at most 6 linkage distances).
fn cost_tol(cost: f64) -> f64 {
    1e-12 * cost.abs().max(1.0)
}

/// The brute-force minimum cost over all trees on `0..n`.
fn min_cost(naive: &NaiveLinkage) -> f64 {
    naive.optimum(all(naive.n()))
}

// ---------------------------------------------------------------------------
// Split costs.

#[test]
fn linkage_split_costs_match_the_direct_computation() {
    for (n, shape, seed) in instances() {
        let d = random_distances(n, shape, &mut Gen(seed));
        for kind in KINDS {
            let (model, naive) = models(&d, kind, 1.7);
            assert_eq!(model.kind(), kind);
            assert_eq!(model.beta(), 1.7);
            for s in 1..=all(n) {
                let low = oracle::low_bit(s);
                let rest = s ^ low;
                let mut sub: Mask = 0;
                loop {
                    if sub != rest {
                        let (l, r) = (low | sub, rest ^ sub);
                        let sum = |m: Mask| model.summary(Points::Mask(m));
                        let (sp, sl, sr) = (sum(s), sum(l), sum(r));
                        let want = naive.cost(l, r);
                        let tol = oracle::tol_log(naive.cost_magnitude(l, r));
                        let what = format!("{kind} {shape:?} n {n} split {l:#b}|{r:#b}");
                        assert_close(&what, model.split_cost(&sp, &sl, &sr), want, tol);
                        assert_close(
                            &what,
                            model.log_potential(&sp, &sl, &sr),
                            -1.7 * want,
                            1.7 * tol,
                        );
                        let direct = model.linkage_distance(&points(l), &points(r));
                        assert_close(&what, direct, want, tol);
                    }
                    if sub == rest {
                        break;
                    }
                    sub = sub.wrapping_sub(rest) & rest;
                }
            }
        }
    }
}

#[test]
fn linkage_summaries_do_not_depend_on_the_merge_order() {
    let mut g = Gen(5);
    let n = 9;
    let d = random_distances(n, Shape::Uniform, &mut g);
    for kind in KINDS {
        let (model, _) = models(&d, kind, 1.0);
        for _ in 0..50 {
            let s = (g.next_u64() as Mask & all(n)) | 1;
            // Increasing order (the default) against a random split of `s`
            // merged from its halves.
            let whole = model.summary(Points::Mask(s));
            let a = s & (g.next_u64() as Mask | 1);
            let b = s ^ a;
            if b == 0 {
                continue;
            }
            let (sa, sb) = (
                model.summary(Points::Mask(a)),
                model.summary(Points::Mask(b)),
            );
            let merged = model.merge(
                Cluster {
                    points: Points::Mask(b),
                    summary: &sb,
                },
                Cluster {
                    points: Points::Mask(a),
                    summary: &sa,
                },
            );
            match (&whole, &merged) {
                (
                    LinkageSummary::Sum { size, inside },
                    LinkageSummary::Sum {
                        size: size2,
                        inside: inside2,
                    },
                ) => {
                    assert_eq!(size, size2);
                    assert_close("W(S)", *inside2, *inside, 1e-12 * inside.max(1.0));
                }
                // Max and min are exact in any order.
                _ => assert_eq!(whole, merged, "{kind}"),
            }
            // Removing a point undoes adding it.
            for x in points(s).into_iter().filter(|_| s.count_ones() >= 2) {
                let without = model.without(
                    Cluster {
                        points: Points::Mask(s),
                        summary: &whole,
                    },
                    x,
                );
                let direct = model.summary(Points::Mask(s & !(1 << x)));
                match (&without, &direct) {
                    (
                        LinkageSummary::Sum { size, inside },
                        LinkageSummary::Sum {
                            size: size2,
                            inside: inside2,
                        },
                    ) => {
                        assert_eq!(size, size2);
                        assert_close("without", *inside, *inside2, 1e-12 * inside2.max(1.0));
                    }
                    _ => assert_eq!(without, direct, "{kind}"),
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The dense trellis.

#[test]
fn linkage_dense_trellis_matches_brute_force() {
    let mut checked = 0;
    for (n, shape, seed) in instances() {
        let d = random_distances(n, shape, &mut Gen(seed));
        for kind in KINDS {
            for beta in BETAS {
                let (model, naive) = models(&d, kind, beta);
                let brute = Brute::new(&naive);
                let what = format!("{kind} {shape:?} n {n} beta {beta}");
                if beta == 0.0 {
                    assert_close(&what, brute.log_z, oracle::ln_double_factorial(n), 1e-12);
                }
                let trellis = Trellis::new(&model).unwrap();
                let tol = brute.tol_log();
                assert_close(&format!("{what}: log Z"), trellis.log_z(), brute.log_z, tol);
                let map = trellis.map();
                assert!(oracle::is_complete_over(&map.tree, n), "{what}");
                assert_close(&format!("{what}: MAP"), map.log_potential, brute.map, tol);
                assert_close(
                    &format!("{what}: log φ(MAP tree)"),
                    tree_log_potential(&model, &map.tree).unwrap(),
                    brute.map,
                    tol,
                );
                if beta > 0.0 {
                    let best = min_cost(&naive);
                    let got = tree_cost(&model, &map.tree).unwrap();
                    assert_close(&format!("{what}: MAP cost"), got, best, cost_tol(best));
                    assert_close(
                        &format!("{what}: naive MAP cost"),
                        naive.tree_cost(&map.tree),
                        best,
                        cost_tol(best),
                    );
                }
                let marginals = trellis.marginals().unwrap();
                let tol_p = brute.tol_p();
                for s in 1..=all(n) {
                    assert_close(
                        &format!("{what}: P({:?})", points(s)),
                        marginals.p(s),
                        brute.p(s),
                        tol_p,
                    );
                }
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 6 * SHAPES.len() * KINDS.len() * BETAS.len());
}

/// Sampled tree frequencies against the exact posterior: with `m` trees and
/// `K` samples, with probability `>= 1 - δ` the total variation is below
/// `(√((m-1)/K) + √(2 ln(1/δ)/K)) / 2` (derived in `sampling.rs`), δ = 1e-6.
/// The same samples against the posterior at another β must fail the bound
/// (the test has power).
#[test]
fn linkage_samples_follow_the_posterior() {
    const N: usize = 5; // 105 trees
    const K: usize = 60_000;
    let delta: f64 = 1e-6;
    let m = oracle::trees(N).len();
    let bound =
        (((m - 1) as f64 / K as f64).sqrt() + (2.0 * (1.0 / delta).ln() / K as f64).sqrt()) / 2.0;
    let d = random_distances(N, Shape::Points, &mut Gen(77));
    for (k, kind) in KINDS.into_iter().enumerate() {
        let posterior = |beta: f64| -> HashMap<Tree, f64> {
            let naive = NaiveLinkage {
                d: d.clone(),
                kind,
                beta,
            };
            let brute = Brute::new(&naive);
            oracle::trees(N)
                .iter()
                .zip(&brute.log_phi)
                .map(|(t, &lp)| (t.tree.clone().canonical(), (lp - brute.log_z).exp()))
                .collect()
        };
        let (model, _) = models(&d, kind, 4.0);
        let exact = posterior(4.0);
        let samples = Trellis::new(&model).unwrap().samples(K, 11 + k as u64);
        let mut counts: HashMap<Tree, usize> = HashMap::new();
        for t in samples {
            let t = t.canonical();
            assert!(
                exact.contains_key(&t),
                "{kind}: sampled {t} is not a tree over 0..{N}"
            );
            *counts.entry(t).or_default() += 1;
        }
        let tv = |p: &HashMap<Tree, f64>| -> f64 {
            p.iter()
                .map(|(t, &q)| (counts.get(t).copied().unwrap_or(0) as f64 / K as f64 - q).abs())
                .sum::<f64>()
                / 2.0
        };
        let got = tv(&exact);
        assert!(got <= bound, "{kind}: TV {got} > bound {bound}");
        let other = posterior(12.0);
        let power = exact
            .iter()
            .map(|(t, &p)| (p - other[t]).abs())
            .sum::<f64>()
            / 2.0;
        assert!(power > 2.0 * bound, "{kind}: no power ({power})");
        assert!(tv(&other) > bound, "{kind}: the negative control passed");
    }
}

// ---------------------------------------------------------------------------
// The sparse trellis.

/// The clusters of `k` random trees plus `extra` random clusters.
fn random_family(n: usize, k: usize, extra: usize, g: &mut Gen) -> Vec<Set> {
    let trees = oracle::trees(n);
    let mut family = Vec::new();
    for _ in 0..k {
        let t = &trees[g.below(trees.len())].tree;
        family.extend(oracle::clusters_of(t).into_iter().map(|c| c as Set));
    }
    for _ in 0..extra {
        let c = (g.next_u64() as Mask & all(n)) as Set;
        if c != 0 {
            family.push(c);
        }
    }
    family
}

#[test]
fn linkage_sparse_trellis_matches_brute_force_on_its_family() {
    let mut g = Gen(31);
    for (n, shape, seed) in instances() {
        let d = random_distances(n, shape, &mut Gen(seed));
        for kind in KINDS {
            for beta in [0.0, 1.3, 25.0] {
                let (model, naive) = models(&d, kind, beta);
                let what = format!("{kind} {shape:?} n {n} beta {beta}");
                let brute = Brute::new(&naive);
                let full: Vec<Set> = (1..1u128 << n).collect();
                let random = random_family(n, 1 + g.below(4), g.below(6), &mut g);
                for (name, family) in [("full", full), ("random", random)] {
                    let t = SparseTrellis::from_clusters(n, family).unwrap();
                    let set: HashSet<Set> = t.clusters().iter().copied().collect();
                    // The realised trees, with their brute-force log φ.
                    let realised: Vec<(usize, f64)> = oracle::trees(n)
                        .iter()
                        .enumerate()
                        .filter(|(_, e)| {
                            oracle::clusters_of(&e.tree)
                                .iter()
                                .all(|&c| set.contains(&(c as Set)))
                        })
                        .map(|(k, _)| (k, brute.log_phi[k]))
                        .collect();
                    assert!(!realised.is_empty(), "{what} {name}");
                    if name == "full" {
                        assert_eq!(realised.len(), oracle::trees(n).len());
                    }
                    let inf = t.infer(&model).unwrap();
                    let tol = brute.tol_log();
                    let want_z = oracle::log_sum_exp(realised.iter().map(|r| r.1));
                    let want_map = realised
                        .iter()
                        .map(|r| r.1)
                        .fold(f64::NEG_INFINITY, f64::max);
                    assert_close(&format!("{what} {name}: log Z"), inf.log_z(), want_z, tol);
                    let map = inf.map();
                    assert_close(
                        &format!("{what} {name}: MAP"),
                        map.log_potential,
                        want_map,
                        tol,
                    );
                    assert_close(
                        &format!("{what} {name}: log φ(MAP tree)"),
                        tree_log_potential(&model, &map.tree).unwrap(),
                        want_map,
                        tol,
                    );
                    // Marginals restricted to the realised trees: log φ of
                    // the trees holding each cluster.
                    let mut holding: HashMap<Mask, Vec<f64>> = HashMap::new();
                    for &(k, lp) in &realised {
                        let tree = &oracle::trees(n)[k].tree;
                        let singletons = (0..n).map(|i| 1 << i);
                        for c in oracle::clusters_of(tree).into_iter().chain(singletons) {
                            holding.entry(c).or_default().push(lp);
                        }
                    }
                    let marginals = inf.marginals();
                    for &c in t.clusters() {
                        let lps = holding.get(&(c as Mask)).cloned().unwrap_or_default();
                        let want = (oracle::log_sum_exp(lps) - want_z).exp();
                        assert_close(
                            &format!("{what} {name}: P({:?})", points(c as Mask)),
                            marginals.p(c),
                            want,
                            brute.tol_p(),
                        );
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// A*.

#[test]
fn linkage_exact_astar_finds_the_brute_force_minimum() {
    for (n, shape, seed) in instances() {
        let d = random_distances(n, shape, &mut Gen(seed));
        for kind in KINDS {
            // The cost is independent of β; β = 0 still searches the costs.
            for beta in [0.0, 2.0] {
                let (model, naive) = models(&d, kind, beta);
                let what = format!("{kind} {shape:?} n {n} beta {beta}");
                let best = min_cost(&naive);
                let out = exact(&model, &Options::default()).unwrap();
                assert!(out.exact, "{what}: the MST heuristic is admissible");
                assert!(oracle::is_complete_over(&out.best.tree, n), "{what}");
                assert_close(&format!("{what}: A* cost"), out.cost, best, cost_tol(best));
                assert_close(
                    &format!("{what}: naive cost of the A* tree"),
                    naive.tree_cost(&out.best.tree),
                    best,
                    cost_tol(best),
                );
                assert_close(
                    &format!("{what}: log φ"),
                    out.best.log_potential,
                    -beta * out.cost,
                    cost_tol(beta * best),
                );
            }
        }
    }
}

#[test]
fn linkage_approximate_astar_returns_a_valid_tree_no_better_than_the_optimum() {
    let mut g = Gen(3);
    for (n, shape, seed) in instances() {
        let d = random_distances(n, shape, &mut Gen(seed));
        for kind in KINDS {
            let (model, naive) = models(&d, kind, 1.0);
            let what = format!("{kind} {shape:?} n {n}");
            let best = min_cost(&naive);
            // A random initial tree, and the greedy one.
            let random = oracle::trees(n)[g.below(oracle::trees(n).len())]
                .tree
                .clone();
            let greedy_tree = greedy(&model).unwrap().tree;
            let init = [random.clone(), greedy_tree.clone()];
            let options = ApproxOptions {
                seed: g.next_u64(),
                ..ApproxOptions::default()
            };
            let out = approximate(&model, &init, &options, &Options::default()).unwrap();
            assert!(!out.exact, "{what}");
            assert!(oracle::is_complete_over(&out.best.tree, n), "{what}");
            let got = naive.tree_cost(&out.best.tree);
            assert_close(&format!("{what}: cost"), out.cost, got, cost_tol(got));
            assert!(
                got >= best - cost_tol(best),
                "{what}: {got} < optimum {best}"
            );
            let init_best = naive.tree_cost(&random).min(naive.tree_cost(&greedy_tree));
            assert!(
                got <= init_best + cost_tol(init_best),
                "{what}: {got} worse than the initial trees ({init_best})"
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Baselines.

#[test]
fn linkage_greedy_and_beam_search_return_valid_trees_with_their_costs() {
    for (n, shape, seed) in instances() {
        let d = random_distances(n, shape, &mut Gen(seed));
        for kind in KINDS {
            for beta in [0.0, 1.0, 60.0] {
                let (model, naive) = models(&d, kind, beta);
                let what = format!("{kind} {shape:?} n {n} beta {beta}");
                let best = min_cost(&naive);
                let g = greedy(&model).unwrap();
                let mut found = vec![("greedy".to_string(), g.clone())];
                for width in [1, 3, default_beam_width(n)] {
                    let beams = beam_search(&model, width).unwrap();
                    assert!(!beams.is_empty() && beams.len() <= width, "{what}");
                    if width == 1 {
                        assert_eq!(beams[0].tree, g.tree, "{what}: width 1 is greedy");
                    }
                    for w in beams.windows(2) {
                        assert!(w[0].log_potential >= w[1].log_potential, "{what}: order");
                    }
                    found.extend(beams.into_iter().map(|b| (format!("beam {width}"), b)));
                }
                for (name, scored) in found {
                    let what = format!("{what} {name}");
                    assert!(oracle::is_complete_over(&scored.tree, n), "{what}");
                    let cost = tree_cost(&model, &scored.tree).unwrap();
                    let want = naive.tree_cost(&scored.tree);
                    assert_close(&format!("{what}: tree_cost"), cost, want, cost_tol(want));
                    assert!(cost >= best - cost_tol(best), "{what}: below the optimum");
                    assert_close(
                        &format!("{what}: log φ"),
                        scored.log_potential,
                        -beta * want,
                        cost_tol(beta * want),
                    );
                }
            }
        }
    }
}

/// With β > 0 and distinct distances, greedy agglomeration under a linkage
/// potential merges the closest pair of clusters: it is the classic linkage
/// clustering of the same kind (UPGMA, complete, single).
#[test]
fn linkage_greedy_is_classic_linkage_clustering() {
    for (n, shape, seed) in instances().filter(|&(_, s, _)| !matches!(s, Shape::Ties)) {
        let d = random_distances(n, shape, &mut Gen(seed));
        let flat = lib_distances(&d).to_vec();
        for kind in KINDS {
            let (model, _) = models(&d, kind, 1.0);
            let g = greedy(&model).unwrap().tree;
            let classic = linkage(&flat, n, kind.linkage()).unwrap();
            assert_eq!(g, classic, "{kind} {shape:?} n {n}");
        }
    }
}

/// Single linkage: the classic single-linkage tree, greedy agglomeration and
/// the exact MAP tree all cost the MST weight, the brute-force minimum.
#[test]
fn linkage_single_map_cost_is_the_mst_weight() {
    for (n, shape, seed) in instances() {
        let d = random_distances(n, shape, &mut Gen(seed));
        let (model, naive) = models(&d, LinkageKind::Single, 1.0);
        let what = format!("{shape:?} n {n}");
        let best = min_cost(&naive);
        let all_points: Vec<usize> = (0..n).collect();
        assert_close(&what, model.mst_weight(&all_points), best, cost_tol(best));
        let classic = linkage(
            &model.distances().to_vec(),
            n,
            trellis::baselines::Linkage::Single,
        )
        .unwrap();
        let map = Trellis::new(&model).unwrap().map().tree.clone();
        let map_cost = tree_cost(&model, &map).unwrap();
        assert_close(&format!("{what}: MAP"), map_cost, best, cost_tol(best));
        for (name, tree) in [
            ("classic", classic),
            ("greedy", greedy(&model).unwrap().tree),
        ] {
            let cost = tree_cost(&model, &tree).unwrap();
            assert_close(&format!("{what}: {name}"), cost, map_cost, cost_tol(best));
        }
    }
}

// ---------------------------------------------------------------------------
// The heuristic.

fn heuristic_of(model: &LinkagePotential, points: Points<'_>) -> f64 {
    let summary = model.summary(points);
    model.heuristic(Cluster {
        points,
        summary: &summary,
    })
}

/// `H(S) <= optimum(S)` for every cluster of every instance, with equality
/// for single linkage; the same value from every point representation.
#[test]
fn linkage_heuristic_is_admissible() {
    for (n, shape, seed) in instances() {
        let d = random_distances(n, shape, &mut Gen(seed));
        for kind in KINDS {
            let (model, naive) = models(&d, kind, 1.0);
            assert!(model.admissible());
            for s in (1..=all(n)).filter(|s| s.count_ones() >= 2) {
                let what = format!("{kind} {shape:?} n {n} S {:?}", points(s));
                let h = heuristic_of(&model, Points::Mask(s));
                let list = points(s);
                assert_eq!(h, heuristic_of(&model, Points::Set(s as Set)), "{what}");
                assert_eq!(h, heuristic_of(&model, Points::List(&list)), "{what}");
                let opt = naive.optimum(s);
                assert!(h <= opt + cost_tol(opt), "{what}: H = {h} > optimum {opt}");
                if kind == LinkageKind::Single {
                    assert_close(&what, h, opt, cost_tol(opt));
                }
            }
        }
    }
}

/// Random clusters of up to 7 points inside 12 points.
#[test]
fn linkage_heuristic_is_admissible_on_random_clusters() {
    let mut g = Gen(12);
    let n = 12;
    for shape in SHAPES {
        let d = random_distances(n, shape, &mut g);
        for kind in KINDS {
            let (model, naive) = models(&d, kind, 1.0);
            for _ in 0..40 {
                let mut s: Mask = 0;
                let size = 2 + g.below(6);
                while (s.count_ones() as usize) < size {
                    s |= 1 << g.below(n);
                }
                let h = heuristic_of(&model, Points::Mask(s));
                let opt = naive.optimum(s);
                assert!(h <= opt + cost_tol(opt), "{kind} {shape:?}: H {h} > {opt}");
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Validation.

fn m(rows: &[&[f64]]) -> Matrix {
    Matrix::from_rows(rows.iter().map(|r| r.to_vec()).collect()).unwrap()
}

#[test]
fn linkage_distances_validation() {
    let e = Distances::from_matrix(&m(&[&[0.0, 1.0], &[1.5, 0.0]])).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Asymmetric { i: 0, j: 1, .. }),
        "{e}"
    );
    let e = Distances::from_matrix(&m(&[&[0.0, -1.0], &[-1.0, 0.0]])).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Parameter { .. }), "{e}");
    assert!(e.to_string().contains(">= 0"), "{e}");
    let e = Distances::from_matrix(&m(&[&[0.0, f64::NAN], &[f64::NAN, 0.0]])).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::NonFinite { row: 0, col: 1 }),
        "{e}"
    );
    let e =
        Distances::from_matrix(&m(&[&[0.0, f64::INFINITY], &[f64::INFINITY, 0.0]])).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::NonFinite { .. }), "{e}");
    let e = Distances::from_matrix(&m(&[&[0.0, 1.0, 2.0], &[1.0, 0.0, 3.0]])).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Shape { .. }), "{e}");
    let e = Distances::from_matrix(&Matrix {
        rows: 0,
        cols: 0,
        data: vec![],
    })
    .unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Empty), "{e}");
    // Rounding asymmetry is averaged; the diagonal is ignored.
    let d = Distances::from_matrix(&m(&[&[7.0, 1.0], &[1.0 + 1e-12, -3.0]])).unwrap();
    assert_eq!(d.get(0, 0), 0.0);
    assert_eq!(d.get(1, 1), 0.0);
    assert_eq!(d.get(0, 1), d.get(1, 0));
    assert_eq!(d.n(), 2);

    // Condensed (SciPy's pdist order).
    let c = Distances::from_condensed(&[1.0, 2.0, 3.0], 3).unwrap();
    assert_eq!(
        c.to_vec(),
        vec![0.0, 1.0, 2.0, 1.0, 0.0, 3.0, 2.0, 3.0, 0.0]
    );
    assert_eq!(c.max(), 3.0);
    let e = Distances::from_condensed(&[1.0, 2.0], 3).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Shape { .. }), "{e}");
    let e = Distances::from_condensed(&[1.0, -2.0, 3.0], 3).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Parameter { .. }), "{e}");
    let e = Distances::from_condensed(&[1.0, f64::NAN, 3.0], 3).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::NonFinite { row: 0, col: 2 }),
        "{e}"
    );
    assert!(matches!(
        Distances::from_condensed(&[], 0).unwrap_err().kind(),
        ErrorKind::Empty
    ));
    assert_eq!(Distances::from_condensed(&[], 1).unwrap().n(), 1);

    // From similarities: max(w) - w.
    let w = Weights::from_matrix(&m(&[
        &[0.0, 0.5, -1.0],
        &[0.5, 0.0, 0.25],
        &[-1.0, 0.25, 0.0],
    ]))
    .unwrap();
    let s = Distances::from_similarities(&w).unwrap();
    assert_eq!(s.get(0, 1), 0.0);
    assert_eq!(s.get(0, 2), 1.5);
    assert_eq!(s.get(1, 2), 0.25);
}

#[test]
fn linkage_points_far_from_the_origin_give_finite_distances() {
    // Ordinary points: the same distances as `euclidean_distances`, to the bit.
    let mut g = Gen(8);
    let rows: Vec<Vec<f64>> = (0..6)
        .map(|_| vec![g.unit() * 10.0, g.unit() - 0.5, g.unit()])
        .collect();
    let pts = Matrix::from_rows(rows).unwrap();
    assert_eq!(
        Distances::from_points(&pts).unwrap().to_vec(),
        euclidean_distances(&pts).unwrap()
    );
    // Near 1e200 the squares overflow without the scaling (issue 22: the
    // baseline's `euclidean_distances` scales too, and gives the same).
    let pts = m(&[&[0.0, 0.0], &[3e200, 4e200], &[-3e200, -4e200]]);
    let d = Distances::from_points(&pts).unwrap();
    assert_eq!(euclidean_distances(&pts).unwrap(), d.to_vec());
    assert!((d.get(0, 1) / 5e200 - 1.0).abs() < 1e-15, "{}", d.get(0, 1));
    assert!((d.get(1, 2) / 1e201 - 1.0).abs() < 1e-15, "{}", d.get(1, 2));
    assert!(d.to_vec().iter().all(|v| v.is_finite()));
    // And tiny coordinates do not underflow to 0.
    let pts = m(&[&[0.0], &[3e-200], &[-1e-200]]);
    let d = Distances::from_points(&pts).unwrap();
    assert!(
        (d.get(0, 1) / 3e-200 - 1.0).abs() < 1e-15,
        "{}",
        d.get(0, 1)
    );
    assert!(
        (d.get(1, 2) / 4e-200 - 1.0).abs() < 1e-15,
        "{}",
        d.get(1, 2)
    );
    // A model over them runs (the costs are far below the range limit).
    let model = LinkagePotential::new(
        &Distances::from_points(&m(&[&[0.0, 1e200], &[1e200, 0.0], &[3e200, 3e200]])).unwrap(),
        LinkageKind::Average,
        1e-200,
    )
    .unwrap();
    assert!(Trellis::new(&model).unwrap().log_z().is_finite());
    // A distance beyond f64::MAX is refused.
    let e = Distances::from_points(&m(&[&[-1.5e308], &[1.5e308]])).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Parameter { .. }), "{e}");
    assert!(e.to_string().contains("overflow"), "{e}");
    // Non-finite coordinates, no points, no coordinates, a bad shape.
    let e = Distances::from_points(&m(&[&[0.0, 1.0], &[f64::NAN, 2.0]])).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::NonFinite { row: 1, col: 0 }),
        "{e}"
    );
    let e = Distances::from_points(&m(&[&[1e300, 1.0], &[f64::INFINITY, 2.0]])).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::NonFinite { row: 1, col: 0 }),
        "{e}"
    );
    let e = Distances::from_points(&Matrix {
        rows: 0,
        cols: 2,
        data: vec![],
    })
    .unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Empty), "{e}");
    let e = Distances::from_points(&Matrix {
        rows: 2,
        cols: 0,
        data: vec![],
    })
    .unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Shape { .. }), "{e}");
    let e = Distances::from_points(&Matrix {
        rows: 2,
        cols: 2,
        data: vec![1.0; 3],
    })
    .unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Shape { .. }), "{e}");
}

#[test]
fn linkage_potential_parameters() {
    let d = Distances::from_condensed(&[1.0, 2.0, 3.0], 3).unwrap();
    for kind in KINDS {
        for beta in [f64::NAN, -1.0, f64::INFINITY] {
            let e = LinkagePotential::new(&d, kind, beta).unwrap_err();
            assert!(matches!(e.kind(), ErrorKind::Parameter { .. }), "{e}");
        }
        let model = LinkagePotential::new(&d, kind, 0.0).unwrap();
        assert_eq!(model.with_beta(2.5).unwrap().beta(), 2.5);
        assert!(model.with_beta(-2.5).is_err());
        // β times the largest cost must stay representable.
        let e = LinkagePotential::new(&d, kind, 1e307).unwrap_err();
        assert!(e.to_string().contains("beta"), "{e}");
        let huge = Distances::from_condensed(&[1e307, 2e307, 3e307], 3).unwrap();
        assert!(LinkagePotential::new(&huge, kind, 1.0).is_err());
        // Names.
        assert_eq!(kind.name().parse::<LinkageKind>().unwrap(), kind);
        assert_eq!(kind.to_string(), kind.name());
        assert!(kind.name().starts_with("linkage-"));
    }
    assert_eq!(
        "single".parse::<LinkageKind>().unwrap(),
        LinkageKind::Single
    );
    assert!("ward".parse::<LinkageKind>().is_err());
    // One point: the only tree, log Z = 0.
    let one = Distances::from_condensed(&[], 1).unwrap();
    let t = Trellis::new(LinkagePotential::new(&one, LinkageKind::Complete, 1.0).unwrap()).unwrap();
    assert_eq!(t.log_z(), 0.0);
    assert_eq!(t.map().tree, Tree::Leaf(0));
}
