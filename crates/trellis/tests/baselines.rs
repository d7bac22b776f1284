//! Agglomerative baselines (`trellis::baselines`) against the reference
//! implementations and against exact inference.
//!
//! - Ginkgo (`shared/data/ginkgo`; the 78 public small jets and the authors' 30
//!   example jets, i.e. every jet with a reference record). The reference ran
//!   StandardHC's greedy and beam search twice: with the current likelihood
//!   swapped in (`greedy`, `beam_search`) and unmodified, with the legacy
//!   likelihood (`*_standardhc_native_lh`). Every record stores the returned
//!   tree, its current log-likelihood (`log_likelihood`) and its legacy one
//!   (`log_likelihood_legacy_model`). So our greedy / beam search with the
//!   *current* model must give `log_likelihood`, and with the *legacy* model
//!   `log_likelihood_legacy_model` (the value that search maximised) and, once
//!   its tree is re-scored with the current model, `log_likelihood`.
//!   - Greedy: every tree and value is reproduced (108 + 108).
//!   - Beam search (width = the reference's `beam_size`): 105 of 108 (current)
//!     and 104 of 108 (legacy) reproduced; the others are listed in
//!     [`KNOWN_BEAM_DIFFERENCES`] with the cause (exact-equality deduplication
//!     decided by the last bits of floating-point sums).
//! - ALOI (`shared/data/aloi`): the reference greedy baseline is average
//!   linkage on `max(sim) - sim` (higra, float32). Our float64 average linkage
//!   gives the same cost on all 40 public and 30 authors' subsets (float32
//!   rounding, below 1e-6 relative) and the same tree except at one exact tie.
//! - Properties on random weights: beam search with width 1 is greedy; beam
//!   search never beats the exact MAP (trellis), and with an unbounded width
//!   and distinct scores it finds it; linkage trees are complete, their merge
//!   heights non-decreasing and equal to the method's cluster distance; single
//!   linkage merges at Kruskal's minimum-spanning-tree edge lengths.
//!   Beam search is *not* always at least as good as greedy: a pinned
//!   counterexample is below.
//!
//! Skipped, with a message, when `../shared/data` is absent.

use std::time::Instant;

use proptest::prelude::*;
use serde_json::Value;
use trellis::baselines::{
    Linkage, LinkageStep, beam_search, default_beam_width, distances_from_similarities, greedy,
    linkage, linkage_steps,
};
use trellis::ginkgo::{Ginkgo, Jet, JetsFile, Variant};

use crate::data::{self, read_json};
use trellis::{
    Dasgupta, Hcc, Matrix, Model, ScoredTree, Tree, Trellis, Weights, tree_log_potential,
};

fn rel_close(got: f64, want: f64, tol: f64) -> bool {
    got == want || (got - want).abs() <= tol * want.abs().max(1.0)
}

fn tree_of(v: &Value) -> Tree {
    let t = match v {
        Value::String(s) => Tree::parse(s),
        other => Tree::from_json(other),
    };
    t.expect("a reference tree").canonical()
}

fn num(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

// ---------------------------------------------------------------------------
// Ginkgo

/// Every jet with a reference record, with the record.
fn ginkgo_cases() -> Option<Vec<(Jet, Value)>> {
    let dir = data::dir("ginkgo")?;
    let mut out = Vec::new();
    for (jets, results) in [
        ("ginkgo_small.json", "reference_results.json"),
        ("reference_examples.json", "reference_examples_results.json"),
    ] {
        let file = JetsFile::read(&dir.join(jets)).unwrap();
        let reference = read_json(&dir.join(results));
        for jet in file.jets {
            if let Some(r) = reference.get(&jet.id) {
                out.push((jet, r.clone()));
            }
        }
    }
    assert_eq!(out.len(), 108, "78 public small jets + 30 example jets");
    for (jet, _) in &out {
        // StandardHC scores every merge with lambda; the reference re-scores
        // with lambda_root at the root. With equal rates the two agree, which
        // is what makes the comparison below exact.
        assert_eq!(jet.params.lambda, jet.params.lambda_root, "{}", jet.id);
    }
    Some(out)
}

/// The reference record of a search, and the field holding the value that
/// search maximised under the model `variant`.
fn record<'a>(r: &'a Value, variant: Variant, search: &str) -> (&'a Value, &'static str) {
    match variant {
        Variant::Current => (&r[search], "log_likelihood"),
        Variant::Legacy => (
            &r[format!("{search}_standardhc_native_lh")],
            "log_likelihood_legacy_model",
        ),
    }
}

#[test]
fn ginkgo_greedy_reproduces_the_reference() {
    let Some(cases) = ginkgo_cases() else { return };
    let start = Instant::now();
    let mut checked = 0;
    for (jet, r) in &cases {
        let current = Ginkgo::new(jet, Variant::Current);
        for variant in [Variant::Current, Variant::Legacy] {
            let model = Ginkgo::new(jet, variant);
            let g = greedy(&model).unwrap();
            let (rec, field) = record(r, variant, "greedy");
            let want = num(rec, field);
            assert!(
                rel_close(g.log_potential, want, 1e-9),
                "{} {variant:?}: greedy value {} vs reference {want}",
                jet.id,
                g.log_potential
            );
            assert_eq!(
                g.tree,
                tree_of(&rec["tree"]),
                "{} {variant:?}: greedy tree",
                jet.id
            );
            // The same tree under the current likelihood.
            let rescored = tree_log_potential(&current, &g.tree).unwrap();
            assert!(
                rel_close(rescored, num(rec, "log_likelihood"), 1e-9),
                "{} {variant:?}: current re-score {rescored}",
                jet.id
            );
            // Width 1 is greedy.
            assert_eq!(beam_search(&model, 1).unwrap(), vec![g], "{}", jet.id);
            checked += 1;
        }
    }
    eprintln!(
        "ginkgo greedy: {checked} of {checked} (jet, likelihood) cases reproduce the reference \
         tree and value ({:.2?})",
        start.elapsed()
    );
}

/// Beam-search results that are *worse* than the reference's, investigated.
///
/// The reference keeps one partial clustering per *exactly equal* cumulative
/// log-likelihood, a rounding-dependent proxy: two merge orders of the same
/// clustering sum the same split values in different orders and need not come
/// out bit-identical (then both take a slot), and two different clusterings
/// can tie (then one is lost). Ours drops exactly the other merge orders of a
/// partial clustering already kept (by structure; see the module docs of
/// `agglomerative`). The two therefore keep different states in a few runs.
/// Measured on the 216 (jet, likelihood) runs: 203 give the reference's tree
/// and value, 12 give a strictly better value than the reference's (e.g.
/// `ref_truth_9_2` legacy: -52.6726, the value stored in the authors' own 2020
/// pickle `TruthBSGD_9.pkl`, vs the re-run's -55.0783; `pub_small_N9_s1000037`
/// legacy: -53.557 vs -55.185), and one gives a worse value:
const KNOWN_WORSE: &[(&str, Variant)] = &[
    // ours -41.6044 vs the reference's -41.5445. Different beam contents
    // lead to a different final tree; beam search is not monotone in what it
    // keeps (a better partial beam can end worse), so this is no error.
    ("pub_small_N7_s1000053", Variant::Current),
];

#[test]
fn ginkgo_beam_search_reproduces_the_reference() {
    let Some(cases) = ginkgo_cases() else { return };
    let start = Instant::now();
    let (mut matched, mut total) = ([0usize; 2], 0usize);
    let mut same_final_count = 0;
    let mut improved = 0;
    for (jet, r) in &cases {
        let current = Ginkgo::new(jet, Variant::Current);
        for (k, variant) in [Variant::Current, Variant::Legacy].into_iter().enumerate() {
            let model = Ginkgo::new(jet, variant);
            let (rec, field) = record(r, variant, "beam_search");
            let width = rec["beam_size"].as_u64().unwrap() as usize;
            let n = jet.len();
            assert_eq!(width, (3 * n).min(n * (n - 1) / 2), "{}", jet.id);
            let beams = beam_search(&model, width).unwrap();
            let best = &beams[0];
            let want = num(rec, field);

            // Always: a valid result, at least greedy here, at most the MAP.
            assert!(beams.len() <= width);
            let g = greedy(&model).unwrap();
            assert!(best.log_potential >= g.log_potential, "{}", jet.id);
            let map = match variant {
                Variant::Current => Some(num(&r["trellis"], "map_log_likelihood")),
                Variant::Legacy => r
                    .get("trellis_legacy_lh")
                    .map(|t| num(t, "map_log_likelihood")),
            };
            if let Some(map) = map {
                assert!(best.log_potential <= map + 1e-9 * map.abs(), "{}", jet.id);
            }
            // The reference's own tree has the reference's value under our model.
            let ref_tree = tree_of(&rec["tree"]);
            let ref_value = tree_log_potential(&model, &ref_tree).unwrap();
            assert!(rel_close(ref_value, want, 1e-9), "{}", jet.id);

            let same = rel_close(best.log_potential, want, 1e-9) && best.tree == ref_tree;
            let better = best.log_potential > want + 1e-9 * want.abs();
            let known = KNOWN_WORSE.contains(&(jet.id.as_str(), variant));
            if better {
                improved += 1;
            }
            assert!(
                same || better || known,
                "{} {variant:?}: beam search gives {} ({}), worse than the reference {want} \
                 ({ref_tree}); {} final beams vs the reference's {}",
                jet.id,
                best.log_potential,
                best.tree,
                beams.len(),
                rec["n_final_beams"]
            );
            if same {
                matched[k] += 1;
                let rescored = tree_log_potential(&current, &best.tree).unwrap();
                assert!(rel_close(rescored, num(rec, "log_likelihood"), 1e-9));
            }
            if rec["n_final_beams"].as_u64() == Some(beams.len() as u64) {
                same_final_count += 1;
            }
            total += 1;
        }
    }
    eprintln!(
        "ginkgo beam search: reference reproduced for {} of {} jets (current likelihood) and {} \
         of {} (legacy), better in {improved}; the same number of final beams in \
         {same_final_count} of {total} runs ({:.2?})",
        matched[0],
        total / 2,
        matched[1],
        total / 2,
        start.elapsed()
    );
    assert_eq!(
        matched[0] + matched[1] + improved + KNOWN_WORSE.len(),
        total
    );
}

/// On the W-like large jets (`λ_root = 3 ≠ λ = 1.5`) StandardHC ranks the
/// final (root) merges with `λ`, then re-scores the chosen tree with
/// `λ_root`. The beams before the root merge are the same either way, so
/// ranking with the true potential can only pick an equal or better tree.
#[test]
fn ginkgo_root_rate_ranking_is_never_worse() {
    let Some(dir) = data::dir("ginkgo") else {
        return;
    };
    let start = Instant::now();
    let jets = JetsFile::read(&dir.join("ginkgo_large.json")).unwrap();
    let (mut better, mut total) = (0, 0);
    for jet in &jets.jets {
        let n = jet.len();
        assert_ne!(jet.params.lambda, jet.params.lambda_root);
        let width = (3 * n).min(n * (n - 1) / 2);
        let true_model = Ginkgo::new(jet, Variant::Current);
        let mut flat = jet.clone();
        flat.params.lambda_root = flat.params.lambda;
        let reference_style = beam_search(&Ginkgo::new(&flat, Variant::Current), width).unwrap();
        let theirs = tree_log_potential(&true_model, &reference_style[0].tree).unwrap();
        let ours = beam_search(&true_model, width).unwrap()[0].log_potential;
        assert!(ours >= theirs - 1e-9 * theirs.abs(), "{}", jet.id);
        if ours > theirs + 1e-9 * theirs.abs() {
            eprintln!("{} (N = {n}): {ours} instead of {theirs}", jet.id);
            better += 1;
        }
        total += 1;
    }
    eprintln!(
        "ginkgo large jets: ranking the root merge with lambda_root gives a better tree in \
         {better} of {total} ({:.2?})",
        start.elapsed()
    );
}

// ---------------------------------------------------------------------------
// ALOI

fn weights_of(subset: &Value) -> Weights {
    let rows = subset["weights"]
        .as_array()
        .expect("`weights` is a list of rows")
        .iter()
        .map(|row| {
            row.as_array()
                .expect("a row is a list")
                .iter()
                .map(|v| v.as_f64().expect("a weight is a number"))
                .collect()
        })
        .collect();
    Weights::from_matrix(&Matrix::from_rows(rows).unwrap()).unwrap()
}

fn hcc_cost(w: &Weights, tree: &Tree) -> f64 {
    -tree_log_potential(&Hcc::new(w, 1.0).unwrap(), tree).unwrap()
}

/// The reference costs are float32 sums (README: compare to ~1e-5); the
/// largest difference observed is 8e-7.
const ALOI_REL_TOL: f64 = 1e-5;

#[test]
fn aloi_average_linkage_reproduces_the_reference_greedy() {
    let Some(root) = data::dir("aloi") else {
        return;
    };
    let start = Instant::now();
    let (mut total, mut same_tree, mut worst) = (0, 0, 0.0f64);
    for sub in ["subsets", "authors"] {
        let dir = root.join(sub);
        let results = read_json(&dir.join("reference_results.json"));
        let mut ids: Vec<&String> = results.as_object().unwrap().keys().collect();
        ids.sort();
        for id in ids {
            let r = &results[id.as_str()];
            let Some(greedy_ref) = r.get("greedy") else {
                continue;
            };
            let w = weights_of(&read_json(&dir.join(format!("{id}.json"))));
            let tree = linkage(&distances_from_similarities(&w), w.n(), Linkage::Average).unwrap();
            let cost = hcc_cost(&w, &tree);
            let want = num(greedy_ref, "cost");
            let rel = (cost - want).abs() / want.abs();
            worst = worst.max(rel);
            assert!(
                rel <= ALOI_REL_TOL,
                "{id}: average-linkage cost {cost} vs reference {want}"
            );
            let want_tree = tree_of(&greedy_ref["tree"]);
            if tree == want_tree {
                same_tree += 1;
            } else {
                // Only at exact ties: `public_aloi_N30_s4` has
                // w[9][11] == w[11][15] (float32 0.20762908), we merge the
                // smaller pair (9, 11), higra (11, 15); both trees cost the same.
                assert!(
                    rel_close(hcc_cost(&w, &want_tree), cost, 1e-12),
                    "{id}: different tree {tree} vs {want_tree} at a different cost"
                );
            }
            total += 1;
        }
    }
    assert_eq!(
        total, 70,
        "40 public + 30 authors' subsets with a greedy result"
    );
    eprintln!(
        "aloi average linkage: {total} of {total} costs match (worst relative difference \
         {worst:.1e}), {same_tree} identical trees ({:.2?})",
        start.elapsed()
    );
}

// ---------------------------------------------------------------------------
// Properties and pinned examples

/// Beam search can end *below* greedy: the greedy path can be pruned.
/// Dasgupta's cost `|L ∪ R| · Σ w` with β = 1 on 4 points. Greedy merges
/// {2,3} (cost 2), then {0,1} (12, tied with {1,23}), then the root (52): 66.
/// With width 2 the first level keeps {2,3} and {1,2} (cost 4, the first of
/// three ties). At the second level the two extensions of {1,2} (merging
/// {0,3}: total 8; {3} with {1,2}: total 13) beat both extensions of {2,3}
/// (14 each), and they end at costs 72 and 73.
#[test]
fn beam_search_can_be_worse_than_greedy() {
    let w = [
        [0.0, 6.0, 7.0, 2.0],
        [6.0, 0.0, 2.0, 2.0],
        [7.0, 2.0, 0.0, 1.0],
        [2.0, 2.0, 1.0, 0.0],
    ];
    let w =
        Weights::from_matrix(&Matrix::from_rows(w.iter().map(|r| r.to_vec()).collect()).unwrap())
            .unwrap();
    let m = Dasgupta::new(&w, 1.0).unwrap();
    let g = greedy(&m).unwrap();
    assert_eq!(
        (g.tree.to_string(), g.log_potential),
        ("[[0,1],[2,3]]".into(), -66.0)
    );
    let b = beam_search(&m, 2).unwrap();
    assert_eq!(b.len(), 2);
    assert_eq!(
        (b[0].tree.to_string(), b[0].log_potential),
        ("[[0,3],[1,2]]".into(), -72.0)
    );
    assert_eq!(b[1].log_potential, -73.0);
    // The paper's default width, 6, beats greedy but still misses the optimum.
    let best = beam_search(&m, default_beam_width(4)).unwrap();
    let map = Trellis::new(Dasgupta::new(&w, 1.0).unwrap())
        .unwrap()
        .map()
        .log_potential;
    assert_eq!((best[0].log_potential, map), (-62.0, -58.0));
}

fn symmetric(n: usize, upper: &[f64]) -> Vec<Vec<f64>> {
    let mut w = vec![vec![0.0; n]; n];
    let pairs = (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j)));
    for ((i, j), &v) in pairs.zip(upper) {
        w[i][j] = v;
        w[j][i] = v;
    }
    w
}

/// Random symmetric weights over `1..=max_n` points; with `round`, some
/// weights are rounded to one decimal so that exact ties occur.
fn weights_strategy(max_n: usize, round: bool) -> impl Strategy<Value = Weights> {
    (
        1usize..=max_n,
        prop::collection::vec((-1.0f64..1.0, 0u8..4), max_n * (max_n - 1) / 2),
    )
        .prop_map(move |(n, raw)| {
            let upper: Vec<f64> = raw
                .iter()
                .map(|&(v, r)| {
                    if round && r == 0 {
                        (v * 10.0).round() / 10.0
                    } else {
                        v
                    }
                })
                .collect();
            Weights::from_matrix(&Matrix::from_rows(symmetric(n, &upper)).unwrap()).unwrap()
        })
}

fn abs_weights(w: &Weights) -> Weights {
    let rows = (0..w.n())
        .map(|i| w.row(i).iter().map(|v| v.abs()).collect())
        .collect();
    Weights::from_matrix(&Matrix::from_rows(rows).unwrap()).unwrap()
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// The checks every search result must pass: complete trees whose value is
/// the reported one, best first with distinct values.
fn check_results<M: Model>(model: &M, results: &[ScoredTree]) -> Result<(), TestCaseError> {
    let n = model.num_points();
    for r in results {
        r.tree.validate(n, true).unwrap();
        prop_assert_eq!(r.tree.clone().canonical(), r.tree.clone());
        let v = tree_log_potential(model, &r.tree).unwrap();
        prop_assert!(
            rel_close(r.log_potential, v, 1e-12),
            "{} vs {v}",
            r.log_potential
        );
    }
    // Best first; distinct trees (ties between different trees are possible).
    for pair in results.windows(2) {
        prop_assert!(pair[0].log_potential >= pair[1].log_potential);
    }
    let distinct: std::collections::HashSet<String> =
        results.iter().map(|r| r.tree.to_string()).collect();
    prop_assert_eq!(distinct.len(), results.len());
    Ok(())
}

/// The points of each cluster a linkage merge creates, and the two merged clusters.
fn step_clusters(n: usize, steps: &[LinkageStep]) -> Vec<(Vec<usize>, Vec<usize>)> {
    let mut members: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
    let mut out = Vec::new();
    for s in steps {
        let (a, b) = (members[s.left].clone(), members[s.right].clone());
        assert_eq!(a.len() + b.len(), s.size, "cluster size");
        members.push([a.clone(), b.clone()].concat());
        out.push((a, b));
    }
    out
}

/// Greedy is beam search at width 0 and 1; beam search at the default width
/// gives valid results, and neither beats the exact MAP value (the dense
/// trellis of the same model).
fn check_beam_search<M: Model>(model: &M) -> Result<(), TestCaseError> {
    let n = model.num_points();
    let g = greedy(model).unwrap();
    check_results(model, std::slice::from_ref(&g))?;
    prop_assert_eq!(&beam_search(model, 1).unwrap(), &vec![g.clone()]);
    prop_assert_eq!(&beam_search(model, 0).unwrap(), &vec![g.clone()]);

    let width = default_beam_width(n);
    let beams = beam_search(model, width).unwrap();
    prop_assert!(!beams.is_empty() && beams.len() <= width);
    check_results(model, &beams)?;
    if n >= 2 {
        let map = Trellis::new(model).unwrap().map().log_potential;
        let tol = 1e-9 * map.abs().max(1.0);
        prop_assert!(
            beams[0].log_potential <= map + tol,
            "beam {} > MAP {map}",
            beams[0].log_potential
        );
        prop_assert!(g.log_potential <= map + tol);
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn beam_search_is_greedy_at_width_one_and_at_most_the_map(
        w in weights_strategy(8, true),
        beta in 0.1f64..3.0,
        dasgupta in any::<bool>(),
    ) {
        if dasgupta {
            let w = abs_weights(&w);
            check_beam_search(&Dasgupta::new(&w, beta).unwrap())?;
        } else {
            check_beam_search(&Hcc::new(&w, beta).unwrap())?;
        }
    }

    /// With positive, continuous weights (no two partial clusterings share a
    /// score) and a width above the number of partial clusterings, beam search
    /// is exhaustive and finds the MAP value.
    #[test]
    fn unbounded_beam_search_finds_the_map(w in weights_strategy(6, false), beta in 0.1f64..3.0) {
        let n = w.n();
        prop_assume!(n >= 2);
        let w = abs_weights(&w);
        let model = Dasgupta::new(&w, beta).unwrap();
        let beams = beam_search(&model, 1 << 20).unwrap();
        let map = Trellis::new(&model).unwrap().map().log_potential;
        prop_assert!(rel_close(beams[0].log_potential, map, 1e-9), "{} vs {map}", beams[0].log_potential);
    }

    #[test]
    fn linkage_trees_are_complete_and_monotone(w in weights_strategy(12, true), method in 0usize..3) {
        let n = w.n();
        let d = distances_from_similarities(&w);
        prop_assert_eq!(d.len(), n * n);
        prop_assert!(d.iter().all(|&x| x >= 0.0));
        let method = [Linkage::Single, Linkage::Average, Linkage::Complete][method];
        let steps = linkage_steps(&d, n, method).unwrap();
        prop_assert_eq!(steps.len(), n - 1);
        let tree = linkage(&d, n, method).unwrap();
        tree.validate(n, true).unwrap();
        prop_assert_eq!(tree.clone().canonical(), tree);
        for pair in steps.windows(2) {
            prop_assert!(pair[1].height >= pair[0].height - 1e-12, "{:?}: {:?}", method, steps);
        }
        // Each height is the method's distance between the two merged clusters.
        for ((a, b), s) in step_clusters(n, &steps).iter().zip(&steps) {
            let d = &d;
            let cross: Vec<f64> = a.iter().flat_map(|&i| b.iter().map(move |&j| d[i * n + j])).collect();
            let want = match method {
                Linkage::Single => cross.iter().copied().fold(f64::INFINITY, f64::min),
                Linkage::Complete => cross.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                _ => cross.iter().sum::<f64>() / cross.len() as f64,
            };
            prop_assert!(rel_close(s.height, want, 1e-12), "{:?}: {} vs {want}", method, s.height);
        }
        if method == Linkage::Single {
            // Kruskal: the edges that join two components, in increasing order.
            let mut edges: Vec<(f64, usize, usize)> = (0..n)
                .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
                .map(|(i, j)| (d[i * n + j], i, j))
                .collect();
            edges.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mut comp: Vec<usize> = (0..n).collect();
            fn find(c: &mut [usize], mut x: usize) -> usize {
                while c[x] != x {
                    x = c[x];
                }
                x
            }
            let mut heights = Vec::new();
            for (h, i, j) in edges {
                let (a, b) = (find(&mut comp, i), find(&mut comp, j));
                if a != b {
                    comp[a] = b;
                    heights.push(h);
                }
            }
            let ours: Vec<f64> = steps.iter().map(|s| s.height).collect();
            prop_assert_eq!(ours, heights);
        }
    }

    /// Ward's Lance-Williams update on Euclidean distances is Ward's criterion:
    /// the height of merging clusters `a` and `b` is
    /// `sqrt(2 |a| |b| / (|a| + |b|)) · |centroid(a) - centroid(b)|`.
    #[test]
    fn ward_heights_match_centroid_distances(
        points in prop::collection::vec(prop::collection::vec(-1.0f64..1.0, 3), 1..12),
    ) {
        let n = points.len();
        let dist = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>().sqrt();
        let d: Vec<f64> = points.iter().flat_map(|p| points.iter().map(|q| dist(p, q))).collect();
        let steps = linkage_steps(&d, n, Linkage::Ward).unwrap();
        let centroid = |c: &[usize]| -> Vec<f64> {
            (0..3).map(|k| c.iter().map(|&i| points[i][k]).sum::<f64>() / c.len() as f64).collect()
        };
        for pair in steps.windows(2) {
            prop_assert!(pair[1].height >= pair[0].height - 1e-12);
        }
        for ((a, b), s) in step_clusters(n, &steps).iter().zip(&steps) {
            let (na, nb) = (a.len() as f64, b.len() as f64);
            let want = (2.0 * na * nb / (na + nb)).sqrt() * dist(&centroid(a), &centroid(b));
            prop_assert!((s.height - want).abs() <= 1e-9, "{} vs {want}", s.height);
        }
        linkage(&d, n, Linkage::Ward).unwrap().validate(n, true).unwrap();
    }
}
