//! Issue 12: the blocked kernel (`dense/blocked.rs`) on every vector path
//! this CPU has, against brute force, against the general (log-space)
//! kernel, and path against path (bit for bit). The whole test binary also
//! runs with `TRELLIS_KERNEL=portable` in CI, so every exactness test of the
//! other modules passes on both paths.

use trellis::flat::FlatTrellis;
use trellis::{CorrelationClustering, General, Hcc, KernelPath, Options, Trellis};

use crate::flat::{FlatBrute, check_against_brute};
use crate::oracle::{self, Brute, Gen, NaiveHcc, lib_weights, random_weights, symmetric};

pub(crate) fn paths() -> Vec<KernelPath> {
    let paths: Vec<KernelPath> = KernelPath::ALL
        .into_iter()
        .filter(|p| p.available())
        .collect();
    assert!(paths.contains(&KernelPath::Portable));
    paths
}

pub(crate) fn on(path: KernelPath) -> Options<'static> {
    Options {
        kernel: Some(path),
        ..Options::default()
    }
}

pub(crate) fn close(what: &str, got: f64, want: f64, tol: f64) {
    assert!(
        (got - want).abs() <= tol,
        "{what}: {got} vs {want} (tolerance {tol:e})"
    );
}

#[test]
fn one_quantity_commands_match_brute_force_on_every_path() {
    for n in 1..=7 {
        for seed in 0..3u64 {
            let w = random_weights(n, 1200 + 10 * n as u64 + seed, 1.0);
            for beta in [0.3, 1.0, 4.0] {
                let brute = Brute::new(&NaiveHcc { w: w.clone(), beta });
                let tol = brute.tol_log();
                let hcc = Hcc::new(&lib_weights(&w), beta).unwrap();
                for path in paths() {
                    let what = format!("n={n} seed={seed} β={beta} {path}");
                    let log_z = Trellis::log_z_only(&hcc, &on(path)).unwrap();
                    close(&format!("log_z_only {what}"), log_z, brute.log_z, tol);
                    let map = Trellis::map_only(&hcc, &on(path)).unwrap();
                    close(
                        &format!("map_only {what}"),
                        map.log_potential,
                        brute.map,
                        tol,
                    );
                    let t = Trellis::with_options(&hcc, &on(path)).unwrap();
                    let v = t.tree_log_potential(&map.tree).unwrap();
                    close(&format!("the MAP tree's value {what}"), v, brute.map, tol);
                    // The fused pass: every cluster marginal from the tables.
                    close(&format!("log Z {what}"), t.log_z(), brute.log_z, tol);
                    let m = t.marginals().unwrap();
                    for s in 1..(1u32 << n) {
                        let want = brute.log_marg[s as usize].exp();
                        close(&format!("P({s:#b}) {what}"), m.p(s), want, brute.tol_p());
                    }
                }
            }
        }
    }
}

#[test]
fn one_quantity_commands_match_the_general_kernel_and_the_trellis() {
    // n = 9..=13 crosses the block widths (4 to 8 low bits, 5 high bits).
    for n in 9..=13 {
        let w = random_weights(n, 77 + n as u64, 1.0);
        for beta in [0.5, 2.0] {
            let hcc = Hcc::new(&lib_weights(&w), beta).unwrap();
            let general = Trellis::new(General(&hcc)).unwrap();
            let tol = 1e-11 * general.log_z().abs().max(1.0);
            for path in paths() {
                let what = format!("n={n} β={beta} {path}");
                let map = Trellis::map_only(&hcc, &on(path)).unwrap();
                let full = Trellis::with_options(&hcc, &on(path)).unwrap();
                // The MAP pass adds the same floating-point keys as the
                // level-order kernel: the same value, bit for bit, and tree.
                assert_eq!(map.tree, full.map().tree, "{what}");
                assert_eq!(map.log_potential, full.map().log_potential, "{what}");
                close(&what, map.log_potential, general.map().log_potential, tol);
                let log_z = Trellis::log_z_only(&hcc, &on(path)).unwrap();
                close(&format!("log_z_only {what}"), log_z, general.log_z(), tol);
                close(&format!("log Z {what}"), full.log_z(), general.log_z(), tol);
                let (m, g) = (full.marginals().unwrap(), general.marginals().unwrap());
                for s in [0b11u32, 0b101, (1 << (n - 1)) - 1, (1 << n) - 2] {
                    close(&format!("P({s:#b}) {what}"), m.p(s), g.p(s), 1e-10);
                }
            }
        }
    }
}

#[test]
fn every_path_gives_the_same_bits() {
    let n = 14;
    let w = lib_weights(&random_weights(n, 1414, 1.0));
    let hcc = Hcc::new(&w, 1.0).unwrap();
    let cc = CorrelationClustering::new(&w, 1.0).unwrap();
    let answers = |path| {
        let t = Trellis::with_options(&hcc, &on(path)).unwrap();
        let m = t.marginals().unwrap();
        let f = FlatTrellis::with_options(&cc, &on(path)).unwrap();
        (
            Trellis::log_z_only(&hcc, &on(path)).unwrap().to_bits(),
            Trellis::map_only(&hcc, &on(path)).unwrap(),
            t.log_z().to_bits(),
            (1..1u32 << n).map(|s| m.p(s).to_bits()).collect::<Vec<_>>(),
            f.log_z().to_bits(),
            f.map().clone(),
        )
    };
    let portable = answers(KernelPath::Portable);
    for path in paths() {
        assert!(answers(path) == portable, "{path} differs from portable");
    }
}

#[test]
fn weights_beyond_the_blocked_range_fall_back_to_the_exact_kernel() {
    // At these β the keys of one size spread over far more than the weight
    // pass can hold: the level-order scaled kernel (β = 60) or the log-space
    // kernel (β = 1e300) answers, exactly as without the blocked kernel.
    let n = 10;
    let w = random_weights(n, 4242, 1.0);
    for beta in [60.0, 1e300] {
        let hcc = Hcc::new(&lib_weights(&w), beta).unwrap();
        let general = Trellis::new(General(&hcc)).unwrap();
        let tol = 1e-12 * general.log_z().abs().max(1.0);
        for path in paths() {
            let what = format!("β={beta} {path}");
            close(
                &what,
                Trellis::log_z_only(&hcc, &on(path)).unwrap(),
                general.log_z(),
                tol,
            );
            // hcc has MAP trees that tie exactly (every cluster whose pairs
            // are all positive adds 0 to the cost), and its tables round the
            // sums of the weights in another order than the summaries do:
            // the tree must be a MAP tree, not the general kernel's one.
            let map = Trellis::map_only(&hcc, &on(path)).unwrap();
            let best = general.map().log_potential;
            let map_tol = 1e-12 * best.abs().max(1.0);
            close(&what, map.log_potential, best, map_tol);
            close(
                &what,
                general.tree_log_potential(&map.tree).unwrap(),
                best,
                map_tol,
            );
            let t = Trellis::with_options(&hcc, &on(path)).unwrap();
            close(&what, t.log_z(), general.log_z(), tol);
        }
    }
}

#[test]
fn flat_trellis_matches_brute_force_on_every_path() {
    for n in 1..=8 {
        for seed in 0..2u64 {
            let w = random_weights(n, 3100 + 10 * n as u64 + seed, 1.0);
            for beta in [0.3, 1.0, 4.0] {
                let brute = FlatBrute::cc(&w, beta);
                let cc = CorrelationClustering::new(&lib_weights(&w), beta).unwrap();
                for path in paths() {
                    let t = FlatTrellis::with_options(&cc, &on(path)).unwrap();
                    check_against_brute(&format!("cc n={n} β={beta} {path}"), &t, &brute);
                }
            }
        }
    }
}

#[test]
fn a_path_the_cpu_lacks_is_refused() {
    for path in KernelPath::ALL {
        let got = KernelPath::choose(Some(path));
        assert_eq!(got.is_ok(), path.available(), "{path}");
    }
    assert_eq!(
        KernelPath::choose(Some(KernelPath::Portable)).unwrap(),
        KernelPath::Portable
    );
}

#[test]
fn progress_counts_both_passes_and_cancels() {
    use std::ops::ControlFlow;
    use std::sync::Mutex;
    let n = 13;
    let hcc = Hcc::new(&lib_weights(&random_weights(n, 5, 1.0)), 1.0).unwrap();
    let seen = Mutex::new(Vec::new());
    let record = |p: trellis::Progress<'_>| {
        seen.lock().unwrap().push((p.done, p.total));
        ControlFlow::Continue(())
    };
    let options = Options::default().with_progress(&record);
    Trellis::with_options(&hcc, &options).unwrap();
    let seen = seen.into_inner().unwrap();
    let total = 2 * trellis::total_splits(n) as u64;
    assert!(seen.iter().all(|&(_, t)| t == total), "{seen:?}");
    assert_eq!(seen.last().unwrap().0, total, "both passes are counted");
    assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0));
    // Cancelling in the first pass stops with an error.
    let stop = |p: trellis::Progress<'_>| {
        if p.done > 0 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let options = Options::default().with_progress(&stop);
    let err = Trellis::log_z_only(&hcc, &options).unwrap_err();
    assert!(matches!(err.kind(), trellis::ErrorKind::Cancelled), "{err}");
    let _ = oracle::all(n);
}

/// Regression (CI, stop 17): one strongly negative weight among zeros at
/// β = 3 made the blocked weight pass lose part of Z (log Z 2.068 instead
/// of ln 8).
#[test]
fn one_large_negative_weight_among_zeros() {
    let mut w = vec![vec![0.0; 4]; 4];
    w[0][1] = -165.00980086749883;
    w[1][0] = w[0][1];
    let beta = 3.0;
    let brute = Brute::new(&NaiveHcc { w: w.clone(), beta });
    let hcc = Hcc::new(&lib_weights(&w), beta).unwrap();
    for path in paths() {
        let t = Trellis::with_options(&hcc, &on(path)).unwrap();
        close(
            &format!("log Z {path}"),
            t.log_z(),
            brute.log_z,
            brute.tol_log(),
        );
        let log_z = Trellis::log_z_only(&hcc, &on(path)).unwrap();
        close(
            &format!("log_z_only {path}"),
            log_z,
            brute.log_z,
            brute.tol_log(),
        );
    }
}

/// The upper triangle of weights over four orders of magnitude, one in six
/// exactly zero, and a β.
fn wide_weights(g: &mut Gen, n: usize) -> (Vec<f64>, f64) {
    let upper = (0..n * (n - 1) / 2)
        .map(|_| {
            if g.below(6) == 0 {
                0.0
            } else {
                (2.0 * g.unit() - 1.0) * 10f64.powi(g.below(4) as i32)
            }
        })
        .collect();
    (upper, [0.1, 1.0, 3.0][g.below(3)])
}

/// Weights over four orders of magnitude with exact zeros (the property
/// tests' distribution, many more cases): every subset's `log Z` of the
/// blocked passes and every cluster's marginal against the log-space
/// kernels (`General`), on every path.
/// The spreads reach hundreds of nats, so the weight pass runs at scales
/// where single factors `e^x` leave the normal range.
#[test]
fn wide_weights_match_the_log_space_kernel() {
    let mut g = Gen(12_345);
    for case in 0..1500 {
        let n = 3 + g.below(6);
        let (upper, beta) = wide_weights(&mut g, n);
        let w = symmetric(n, &upper);
        let hcc = Hcc::new(&lib_weights(&w), beta).unwrap();
        let reference = Trellis::new(General(&hcc)).unwrap();
        let reference_marginals = reference.marginals().unwrap();
        // |log ψ| summed over a tree is at most β Σ|w| (each pair is cut once).
        let mag: f64 = beta * upper.iter().map(|v| v.abs()).sum::<f64>();
        let tol = 1e-14 * (mag + 1.0) * n as f64;
        for path in paths() {
            let t = Trellis::with_options(&hcc, &on(path)).unwrap();
            for s in 1..1u32 << n {
                let want = reference.log_z_of(s as _).unwrap();
                let got = t.log_z_of(s as _).unwrap();
                close(
                    &format!("case {case} n={n} β={beta} {path} S={s:b}"),
                    got,
                    want,
                    tol,
                );
            }
            let log_z = Trellis::log_z_only(&hcc, &on(path)).unwrap();
            close(
                &format!("log_z_only case {case} {path}"),
                log_z,
                reference.log_z(),
                tol,
            );
            // Marginals: the blocked outside pass against the log-space one.
            let m = t.marginals_with(&on(path)).unwrap();
            for s in 1..1u32 << n {
                let (got, want) = (m.p(s as _), reference_marginals.p(s as _));
                let what = format!("P(S) case {case} n={n} β={beta} {path} S={s:b}");
                close(&what, got, want, tol);
            }
        }
    }
}

/// The flat trellis on the same wide weights, against brute force.
#[test]
fn wide_weights_flat_matches_brute_force() {
    let mut g = Gen(54_321);
    for case in 0..300 {
        let n = 2 + g.below(6);
        let (upper, beta) = wide_weights(&mut g, n);
        let w = symmetric(n, &upper);
        let brute = FlatBrute::cc(&w, beta);
        let cc = CorrelationClustering::new(&lib_weights(&w), beta).unwrap();
        for path in paths() {
            let t = FlatTrellis::with_options(&cc, &on(path)).unwrap();
            check_against_brute(&format!("case {case} n={n} β={beta} {path}"), &t, &brute);
            let map = FlatTrellis::map_only(&cc, &on(path)).unwrap();
            assert_eq!(
                &map,
                t.map(),
                "flat map_only case {case} n={n} β={beta} {path}"
            );
            let log_z = FlatTrellis::log_z_only(&cc, &on(path)).unwrap();
            let what = format!("flat log_z_only case {case} n={n} β={beta} {path}");
            close(&what, log_z, t.log_z(), 1e-12 * t.log_z().abs().max(1.0));
        }
    }
}

/// `FlatTrellis::log_z_only` (one weight pass at a guessed scale, the full
/// trellis where the guess fails) gives the full trellis's log Z on every
/// path: random weights at every β from 0 to 1e300, sizes 1 to 12, clusters
/// all impossible but the singletons, and weights so spread that the guess
/// leaves the kernel's window.
#[test]
fn flat_log_z_only_equals_the_full_trellis() {
    let check = |what: &str, w: &[Vec<f64>], beta: f64| {
        let cc = CorrelationClustering::new(&lib_weights(w), beta).unwrap();
        let full = FlatTrellis::new(&cc).unwrap().log_z();
        for path in paths() {
            let got = FlatTrellis::log_z_only(&cc, &on(path)).unwrap();
            close(
                &format!("{what} β={beta} {path}"),
                got,
                full,
                1e-12 * full.abs().max(1.0),
            );
        }
    };
    for n in 1..=12 {
        let w = random_weights(n, 4500 + n as u64, 1.0);
        for beta in [0.0, 0.5, 3.0, 40.0, 1e10, 1e300] {
            check(&format!("n={n}"), &w, beta);
        }
    }
    check("impossible", &vec![vec![-1e308; 6]; 6], 1.0);
    // One strong block among weak weights: log Z(S) far from any line in |S|.
    let mut w = random_weights(11, 4600, 1.0);
    for (i, row) in w.iter_mut().enumerate().take(5) {
        for (j, x) in row.iter_mut().enumerate().take(5) {
            if i != j {
                *x = 300.0;
            }
        }
    }
    check("block", &w, 1.0);
}

/// `FlatTrellis::map_only` (one max-plus pass) gives the partition and value
/// of the full trellis on every path, also where the full trellis leaves
/// the blocked kernel (β = 1e10, 1e300: the log-space kernel) and where
/// every cluster but the singletons is impossible.
#[test]
fn flat_map_only_equals_the_full_trellis() {
    for n in 1..=10 {
        let w = random_weights(n, 4400 + n as u64, 1.0);
        for beta in [0.0, 0.5, 3.0, 1e10, 1e300] {
            let cc = CorrelationClustering::new(&lib_weights(&w), beta).unwrap();
            let full = FlatTrellis::new(&cc).unwrap();
            for path in paths() {
                let map = FlatTrellis::map_only(&cc, &on(path)).unwrap();
                assert_eq!(&map, full.map(), "n={n} β={beta} {path}");
            }
        }
    }
    let w = vec![vec![-1e308; 6]; 6];
    let cc = CorrelationClustering::new(&lib_weights(&w), 1.0).unwrap();
    let map = FlatTrellis::map_only(&cc, &Options::default()).unwrap();
    assert_eq!(&map, FlatTrellis::new(&cc).unwrap().map());
    assert_eq!(map.clusters.len(), 6);
}

/// `map_only` on jets skips the splits whose likelihood bound cannot win
/// (`Model::log_potential_bound`); `General` hides the bound, so the two runs
/// below are the pruned and the exhaustive search: the same MAP tree and
/// value, bit for bit, and the value is the fused pass's MAP. Both likelihood
/// variants, rates from 0.3 to 400 (the log-space form above 300), cuts from
/// tiny to most of the root's mass, root rates unlike the others.
#[test]
fn jet_map_pruning_changes_nothing() {
    use trellis::ginkgo::{Ginkgo, SimulatorParams, Variant, generate_jet};
    let settings = [
        (1.5, 1.5, 16.0),
        (0.3, 3.0, 1.0),
        (4.0, 0.5, 40.0),
        (400.0, 1.5, 9.0),
        (2.5, 2.5, 0.05),
    ];
    let mut checked = 0;
    for (case, &(lambda, lambda_root, t_cut)) in settings.iter().enumerate() {
        let params = SimulatorParams {
            lambda,
            lambda_root,
            t_cut,
            ..SimulatorParams::qcd()
        };
        for k in 0..12 {
            let Ok(jet) = generate_jet(&params, 77 + case as u64, k, 3, 11) else {
                continue;
            };
            for variant in [Variant::Current, Variant::Legacy] {
                let model = Ginkgo::new(&jet, variant);
                let pruned = Trellis::map_only(&model, &Options::default());
                let every = Trellis::map_only(&General(&model), &Options::default());
                let (pruned, every) = match (pruned, every) {
                    (Ok(p), Ok(e)) => (p, e),
                    (Err(p), Err(e)) => {
                        assert_eq!(p.to_string(), e.to_string());
                        continue;
                    }
                    (p, e) => panic!("case {case} jet {k} {variant:?}: {p:?} vs {e:?}"),
                };
                let what = format!(
                    "case {case} jet {k} ({} leaves) {variant:?}",
                    jet.leaves.len()
                );
                assert_eq!(
                    pruned.log_potential.to_bits(),
                    every.log_potential.to_bits(),
                    "{what}"
                );
                assert_eq!(pruned.tree, every.tree, "{what}");
                let fused = Trellis::new(&model).unwrap().map().log_potential;
                close(&what, pruned.log_potential, fused, 1e-9 * fused.abs());
                checked += 1;
            }
        }
    }
    assert!(checked >= 60, "only {checked} jets checked");
}
