//! Issue 25: `logz` and `map` of a pair-form model (hcc) as single passes
//! over one 8-byte entry per subset, their terms rebuilt block by block from
//! the weights (`dense/pairs.rs`), on every vector path: against brute force
//! (N ≤ 7), against the full inside pass that reads tables (bit for bit
//! where both run blocked) and the general kernel (N ≤ 16), at β up to
//! 1e300; and their memory check.

use trellis::{ErrorKind, General, Hcc, Options, Trellis, pass_bytes};

use crate::issue12_kernel::{close, on, paths};
use crate::oracle::{Brute, NaiveHcc, lib_weights, random_weights};

/// Weights with many exact ties (small integers, zeros among them): the
/// MAP tree is then rarely unique, and the tie rule must hold.
fn integer_weights(n: usize, seed: u64) -> Vec<Vec<f64>> {
    random_weights(n, seed, 1.0)
        .into_iter()
        .map(|r| r.into_iter().map(|v| (3.0 * v).round()).collect())
        .collect()
}

#[test]
fn issue25_single_passes_match_brute_force() {
    for n in 2..=7 {
        for seed in 0..2u64 {
            for (kind, w) in [
                (
                    "uniform",
                    random_weights(n, 2500 + 10 * n as u64 + seed, 1.0),
                ),
                ("integer", integer_weights(n, 2600 + 10 * n as u64 + seed)),
            ] {
                for beta in [0.25, 1.0, 5.0, 60.0, 1e300] {
                    let brute = Brute::new(&NaiveHcc { w: w.clone(), beta });
                    let hcc = Hcc::new(&lib_weights(&w), beta).unwrap();
                    for path in paths() {
                        let what = format!("n={n} {kind} seed={seed} β={beta} {path}");
                        let tol = brute.tol_log();
                        let log_z = Trellis::log_z_only(&hcc, &on(path)).unwrap();
                        close(&format!("log Z {what}"), log_z, brute.log_z, tol);
                        let map = Trellis::map_only(&hcc, &on(path)).unwrap();
                        close(&format!("MAP {what}"), map.log_potential, brute.map, tol);
                        // The tree is a MAP tree (ties are allowed to go either way).
                        let general = Trellis::new(General(&hcc)).unwrap();
                        let v = general.tree_log_potential(&map.tree).unwrap();
                        close(&format!("the MAP tree {what}"), v, brute.map, tol);
                    }
                }
            }
        }
    }
}

#[test]
fn issue25_single_passes_match_the_full_inside_pass_and_the_general_kernel() {
    let (mut blocked, mut fell_back) = (0, 0);
    for n in [9, 12, 14, 16] {
        for (kind, w) in [
            ("uniform", random_weights(n, 2700 + n as u64, 1.0)),
            ("integer", integer_weights(n, 2800 + n as u64)),
        ] {
            for beta in [0.5, 3.0, 60.0, 1e300] {
                let hcc = Hcc::new(&lib_weights(&w), beta).unwrap();
                let general = Trellis::new(General(&hcc)).unwrap();
                let tol = 1e-12 * general.log_z().abs().max(1.0);
                let map_tol = 1e-12 * general.map().log_potential.abs().max(1.0);
                for path in paths() {
                    let what = format!("n={n} {kind} β={beta} {path}");
                    let full = Trellis::with_options(&hcc, &on(path)).unwrap();
                    let log_z = Trellis::log_z_only(&hcc, &on(path)).unwrap();
                    close(
                        &format!("log Z vs general {what}"),
                        log_z,
                        general.log_z(),
                        tol,
                    );
                    close(&format!("log Z vs full {what}"), log_z, full.log_z(), tol);
                    let map = Trellis::map_only(&hcc, &on(path)).unwrap();
                    let best = general.map().log_potential;
                    close(
                        &format!("MAP vs general {what}"),
                        map.log_potential,
                        best,
                        map_tol,
                    );
                    let v = general.tree_log_potential(&map.tree).unwrap();
                    close(&format!("the MAP tree {what}"), v, best, map_tol);
                    // At moderate β the full pass runs blocked too (at β = 60
                    // and 1e300 the keys spread beyond its window, and it
                    // falls back): it read the same terms (tables made by
                    // the same additions), so the same bits.
                    if beta <= 3.0 {
                        blocked += 1;
                        assert_eq!(map.tree, full.map().tree, "{what}");
                        assert_eq!(
                            map.log_potential.to_bits(),
                            full.map().log_potential.to_bits(),
                            "{what}"
                        );
                    } else {
                        fell_back += 1;
                    }
                }
            }
        }
    }
    assert!(
        blocked > 0 && fell_back > 0,
        "{blocked} blocked, {fell_back} fell back"
    );
}

#[test]
fn issue25_memory_is_checked_for_the_single_pass_before_allocating() {
    let n = 16;
    let hcc = Hcc::new(&lib_weights(&random_weights(n, 2900, 1.0)), 1.0).unwrap();
    let need = pass_bytes(n);
    let capped = |limit: u64| Options {
        memory_limit: Some(limit),
        ..Options::default()
    };
    for run in [
        Trellis::log_z_only(&hcc, &capped(need - 1)).map(|_| ()),
        Trellis::map_only(&hcc, &capped(need - 1)).map(|_| ()),
    ] {
        let e = run.unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::OutOfMemory { needed, capped: true, .. } if *needed == need),
            "{e}"
        );
    }
    assert!(Trellis::log_z_only(&hcc, &capped(need)).is_ok());
    assert!(Trellis::map_only(&hcc, &capped(need)).is_ok());
}

/// A fresh directory under the system's temporary directory.
fn fresh_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("trellis-issue25-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The level files of `dir` whose name starts with `pass`, sorted.
fn level_files(dir: &std::path::Path, pass: &str) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ckpt"))
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with(pass))
        .collect();
    files.sort();
    files
}

#[test]
fn issue25_checkpoints_resume_to_the_identical_answer() {
    use std::ops::ControlFlow;
    use std::sync::Mutex;
    use trellis::Progress;
    let n = 17;
    let hcc = Hcc::new(&lib_weights(&random_weights(n, 3000, 1.0)), 2.0).unwrap();
    for path in paths() {
        let want_z = Trellis::log_z_only(&hcc, &on(path)).unwrap();
        let want_map = Trellis::map_only(&hcc, &on(path)).unwrap();
        // Stop after the k-th progress report, then run to the end.
        for stop in [1usize, 2, 4, 6] {
            let dir = fresh_dir(&format!("resume-{path}-{stop}"));
            for task in ["logz", "map"] {
                let reports = Mutex::new(Vec::<Progress<'static>>::new());
                let cancel = |p: Progress<'_>| {
                    let mut r = reports.lock().unwrap();
                    r.push(Progress {
                        stage: "inside",
                        ..p
                    });
                    if r.len() > stop {
                        ControlFlow::Break(())
                    } else {
                        ControlFlow::Continue(())
                    }
                };
                let options = Options {
                    checkpoint: Some(&dir),
                    progress: Some(&cancel),
                    ..on(path)
                };
                let first = match task {
                    "logz" => Trellis::log_z_only(&hcc, &options).map(|_| ()),
                    _ => Trellis::map_only(&hcc, &options).map(|_| ()),
                };
                let e = first.unwrap_err();
                assert!(matches!(e.kind(), ErrorKind::Cancelled), "{e}");
                let pass = if task == "logz" { "weights" } else { "keys" };
                let saved = level_files(&dir, pass).len();
                let seen = Mutex::new(0u64);
                let watch = |p: Progress<'_>| {
                    *seen.lock().unwrap() = p.resumed;
                    ControlFlow::Continue(())
                };
                let options = Options {
                    checkpoint: Some(&dir),
                    progress: Some(&watch),
                    ..on(path)
                };
                let what = format!("{task} {path} stopped after report {stop}");
                match task {
                    "logz" => {
                        let z = Trellis::log_z_only(&hcc, &options).unwrap();
                        assert_eq!(z.to_bits(), want_z.to_bits(), "{what}");
                    }
                    _ => {
                        let m = Trellis::map_only(&hcc, &options).unwrap();
                        assert_eq!(m.tree, want_map.tree, "{what}");
                        assert_eq!(m.log_potential.to_bits(), want_map.log_potential.to_bits());
                    }
                }
                // Levels saved before the stop were read, not recomputed.
                assert_eq!(
                    *seen.lock().unwrap() > 0,
                    saved > 0,
                    "{what}: {saved} files"
                );
            }
            // A finished run's levels answer a rerun on their own.
            let options = Options {
                checkpoint: Some(&dir),
                ..on(path)
            };
            assert_eq!(
                Trellis::log_z_only(&hcc, &options).unwrap().to_bits(),
                want_z.to_bits()
            );
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
}

#[test]
fn issue25_damaged_or_foreign_checkpoints_are_refused() {
    let n = 15;
    let w = lib_weights(&random_weights(n, 3100, 1.0));
    let hcc = Hcc::new(&w, 2.0).unwrap();
    let dir = fresh_dir("refuse");
    let options = Options {
        checkpoint: Some(&dir),
        ..Options::default()
    };
    Trellis::log_z_only(&hcc, &options).unwrap();
    let files = level_files(&dir, "weights");
    assert!(files.len() >= 3, "{files:?}");
    let refused = |what: &str, want: &str| {
        let e = Trellis::log_z_only(&hcc, &options).unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::Checkpoint { .. }) && e.to_string().contains(want),
            "{what}: {e}"
        );
    };
    // Another β (the same weights) or other weights: another run.
    let other = Hcc::new(&w, 2.5).unwrap();
    let e = Trellis::log_z_only(&other, &options).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Checkpoint { .. }) && e.to_string().contains("another run"),
        "{e}"
    );
    let e = Trellis::map_only(&other, &options).unwrap_err();
    assert!(e.to_string().contains("another run"), "{e}");
    // One flipped bit in an entry.
    let file = &files[1];
    let mut bytes = std::fs::read(file).unwrap();
    let good = bytes.clone();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x10;
    std::fs::write(file, &bytes).unwrap();
    refused("a flipped bit", "checksum");
    // Truncated.
    std::fs::write(file, &good[..good.len() - 9]).unwrap();
    refused("truncated", "bytes");
    // Not a checkpoint at all.
    std::fs::write(file, b"hello").unwrap();
    refused("not a checkpoint", "truncated");
    std::fs::write(file, &good).unwrap();
    Trellis::log_z_only(&hcc, &options).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn issue25_checkpoints_are_refused_where_no_pass_keeps_them() {
    let n = 9;
    let w = lib_weights(&random_weights(n, 3200, 1.0));
    let hcc = Hcc::new(&w, 1.0).unwrap();
    let dir = fresh_dir("nowhere");
    let options = Options {
        checkpoint: Some(&dir),
        ..Options::default()
    };
    // The level-order inside pass (a factor that depends on the size). (A
    // restricted model's single pass keeps its levels: issue25_resume.rs.)
    let nonneg: Vec<Vec<f64>> = random_weights(n, 3200, 1.0)
        .into_iter()
        .map(|r| r.into_iter().map(f64::abs).collect())
        .collect();
    let dasgupta = trellis::Dasgupta::new(&lib_weights(&nonneg), 1.0).unwrap();
    let e = Trellis::with_options(&dasgupta, &options).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Parameter { .. }), "{e}");
    // A directory that cannot be made: a failed write, not a refusal.
    let file = fresh_dir("a-file");
    std::fs::write(&file, b"").unwrap();
    let options = Options {
        checkpoint: Some(&file),
        ..Options::default()
    };
    let e = Trellis::log_z_only(&hcc, &options).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::CheckpointWrite { .. }), "{e}");
    std::fs::remove_file(&file).unwrap();
}

// Samples from the weight table (`Need::Samples`): the top-down draw on the
// 8-byte weights `G` of the single sum-product pass, with the statistical
// bounds of `sampling.rs` (derived from the sample size, not tuned).

/// Tree frequencies of the weight table's samples against brute force (n =
/// 5, every cluster scanned, with the total summed first), on every vector
/// path, with the negative control of `sampling.rs`: samples at another β
/// fail the same bound.
#[test]
fn issue25_weight_table_samples_match_brute_force() {
    use crate::sampling::{empirical_tv, exact_posterior, exact_tv, tv_bound};
    use trellis::WeightTable;
    const N: usize = 5;
    const K: usize = 100_000;
    let w = random_weights(N, 2950, 1.0);
    let exact = exact_posterior(&Brute::new(&NaiveHcc {
        w: w.clone(),
        beta: 1.0,
    }));
    let other = exact_posterior(&Brute::new(&NaiveHcc {
        w: w.clone(),
        beta: 1.8,
    }));
    let bound = tv_bound(exact.len(), K);
    assert!(
        exact_tv(&exact, &other) > 2.0 * bound,
        "the control has no power"
    );
    for path in paths() {
        let draw = |beta: f64, seed: u64| {
            let hcc = Hcc::new(&lib_weights(&w), beta).unwrap();
            let table = WeightTable::new(&hcc, &on(path))
                .unwrap()
                .expect("in the window");
            let brute = Brute::new(&NaiveHcc { w: w.clone(), beta });
            close(
                &format!("log Z β={beta} {path}"),
                table.log_z(),
                brute.log_z,
                brute.tol_log(),
            );
            let mut out = Vec::new();
            table
                .samples_with(K, seed, &on(path), |t| {
                    out.push(t);
                    Ok(())
                })
                .unwrap();
            out
        };
        let samples = draw(1.0, 7);
        let tv = empirical_tv(&samples, &exact);
        assert!(tv <= bound, "{path}: TV {tv} exceeds the bound {bound}");
        let wrong = empirical_tv(&draw(1.8, 7), &exact);
        assert!(
            wrong > bound,
            "{path}: the control passed (TV {wrong}, bound {bound})"
        );
        eprintln!("weight table n=5 {path}: TV {tv:.5}, control {wrong:.5}, bound {bound:.5}");
    }
}

/// Cluster frequencies against the exact marginals at n = 10 (the root's
/// split distribution cached, the rest scanned), plain and under triplets,
/// and the same seed giving the same trees.
#[test]
fn issue25_weight_table_cluster_frequencies_match_the_marginals() {
    use crate::sampling::check_cluster_frequencies;
    use trellis::constraints::Constrained;
    use trellis::ddt::Triplet;
    use trellis::posterior::{Need, Posterior};
    const K: usize = 40_000;
    let w = random_weights(10, 2960, 1.0);
    let hcc = Hcc::new(&lib_weights(&w), 0.7).unwrap();
    let t = |a, b, c| Triplet::new(a, b, c).unwrap();
    let triplets = vec![t(0, 1, 2), t(3, 4, 5), t(0, 1, 9), t(6, 7, 0)];
    let constrained = Constrained::new(hcc.clone(), triplets.clone()).unwrap();
    let plain = Posterior::dense(hcc.clone(), Need::Samples, &Options::default()).unwrap();
    let restricted =
        Posterior::dense(constrained.clone(), Need::Samples, &Options::default()).unwrap();
    for post in [&plain, &restricted] {
        assert!(format!("{post:?}").contains("Need::Samples"), "{post:?}");
        assert!(post.map().is_err() && post.cluster_marginals(0.0, &Options::default()).is_err());
    }
    let full = Trellis::new(hcc).unwrap();
    let full_c = Trellis::new(constrained).unwrap();
    close("log Z", plain.log_z().unwrap(), full.log_z(), 1e-9);
    close(
        "log Z | triplets",
        restricted.log_z().unwrap(),
        full_c.log_z(),
        1e-9,
    );
    let samples = plain.samples(K, 11).unwrap();
    check_cluster_frequencies("weight table n=10", &full, &samples);
    let samples_c = restricted.samples(K, 12).unwrap();
    for s in &samples_c {
        let clusters = crate::oracle::clusters_of(s);
        for x in &triplets {
            let bit = |i: usize| 1u32 << i;
            let holds = clusters
                .iter()
                .any(|&m| m & bit(x.a) != 0 && m & bit(x.b) != 0 && m & bit(x.c) == 0);
            assert!(holds, "sample {s} breaks ({}, {}; {})", x.a, x.b, x.c);
        }
    }
    check_cluster_frequencies("weight table n=10 | triplets", &full_c, &samples_c);
    assert_eq!(plain.samples(50, 11).unwrap(), samples[..50].to_vec());
}

/// `Need::Samples` at every β: log Z as the full trellis's, and samples of
/// the right support; beyond the weight pass's window (β = 1e300) and for a
/// model without the pair form (Dasgupta) it is the whole trellis.
#[test]
fn issue25_need_samples_at_any_beta_and_for_other_models() {
    use trellis::Dasgupta;
    use trellis::posterior::{Need, Posterior};
    let w = random_weights(7, 2970, 1.0);
    for beta in [1e-300, 1e-3, 1.0, 60.0, 1e300] {
        let brute = Brute::new(&NaiveHcc { w: w.clone(), beta });
        let hcc = Hcc::new(&lib_weights(&w), beta).unwrap();
        let post = Posterior::dense(hcc.clone(), Need::Samples, &Options::default()).unwrap();
        close(
            &format!("log Z β={beta}"),
            post.log_z().unwrap(),
            brute.log_z,
            brute.tol_log(),
        );
        for s in post.samples(200, 3).unwrap() {
            let v = Trellis::new(General(&hcc))
                .unwrap()
                .tree_log_potential(&s)
                .unwrap();
            assert!(
                v.is_finite() && v <= brute.map + brute.tol_log(),
                "β={beta}: {s}"
            );
        }
    }
    let abs: Vec<Vec<f64>> = w
        .iter()
        .map(|r| r.iter().map(|v| v.abs()).collect())
        .collect();
    let d = Dasgupta::new(&lib_weights(&abs), 1.0).unwrap();
    let post = Posterior::dense(d, Need::Samples, &Options::default()).unwrap();
    assert!(format!("{post:?}").contains("dense trellis"), "{post:?}");
    assert!(post.map().is_ok());
}

/// `WeightTable::with_marginals` (`Need::Marginals`): every cluster's
/// marginal from the weights and the outside pass's table, at two 8-byte
/// entries per subset, against brute force (n ≤ 7) on every vector path at
/// β up to 1e300 (beyond the windows the table is `None` and the posterior
/// is the full trellis's, checked the same way).
#[test]
fn issue25_need_marginals_match_brute_force() {
    use trellis::WeightTable;
    use trellis::posterior::{Need, Posterior};
    let (mut tables, mut fell_back) = (0, 0);
    for n in 2..=7 {
        for seed in 0..2u64 {
            let w = random_weights(n, 3000 + 10 * n as u64 + seed, 1.0);
            for beta in [0.25, 1.0, 5.0, 60.0, 1e300] {
                let brute = Brute::new(&NaiveHcc { w: w.clone(), beta });
                let tol = brute.tol_log();
                let hcc = Hcc::new(&lib_weights(&w), beta).unwrap();
                for path in paths() {
                    let what = format!("n={n} seed={seed} β={beta} {path}");
                    let post = Posterior::dense(hcc.clone(), Need::Marginals, &on(path)).unwrap();
                    let table = WeightTable::with_marginals(&hcc, &on(path)).unwrap();
                    let kind = format!("{post:?}");
                    assert_eq!(table.is_some(), kind.contains("Need::Marginals"), "{what}");
                    if let Some(table) = &table {
                        tables += 1;
                        close(&format!("log Z {what}"), table.log_z(), brute.log_z, tol);
                        let log_p = table.log_p_table().unwrap();
                        assert_eq!(log_p.len(), 1 << n);
                        for (s, (&got, &want)) in log_p.iter().zip(&brute.log_marg).enumerate() {
                            if want == f64::NEG_INFINITY {
                                assert_eq!(got, want, "log P({s:#b}) {what}");
                            } else {
                                close(&format!("log P({s:#b}) {what}"), got, want, 4.0 * tol);
                            }
                        }
                        // The MAP needs another pass: not kept.
                        assert!(post.map().is_err(), "{what}");
                    } else {
                        fell_back += 1;
                        assert!(post.map().is_ok(), "{what}");
                    }
                    close(
                        &format!("posterior log Z {what}"),
                        post.log_z().unwrap(),
                        brute.log_z,
                        tol,
                    );
                    let listed = post.cluster_marginals(0.0, &Options::default()).unwrap();
                    for (members, p) in &listed {
                        let s: usize = members.iter().map(|&i| 1usize << i).sum();
                        let want = brute.log_marg[s].exp();
                        close(&format!("P({s:#b}) {what}"), *p, want, brute.tol_p());
                    }
                    // Which clusters have a positive marginal is decided
                    // where the brute force resolves the costs (at β = 1e300
                    // its sums round away differences of 1e284).
                    if brute.tol_p() < 1e-6 {
                        let want_listed = (1..(1usize << n) - 1)
                            .filter(|s| s.count_ones() >= 2 && brute.log_marg[*s].exp() > 0.0)
                            .count();
                        assert_eq!(listed.len(), want_listed, "{what}");
                    }
                }
            }
        }
    }
    assert!(
        tables > 0 && fell_back > 0,
        "{tables} tables, {fell_back} fell back"
    );
}

/// `Need::All` of a pair-form model (the weight and MAP passes up front,
/// the outside pass on the first question: `WeightTable::marginals`)
/// against brute force (n ≤ 7) on every vector path at β up to 1e300:
/// log Z, the MAP, every marginal (where the weight pass leaves its window
/// the posterior is the full trellis's, checked the same way). The outside
/// pass leaving its window after the weight pass ran (the marginals then
/// come from the full trellis): `issue24_need_all_takes_the_full_trellis_marginals_beyond_the_outside_window`.
#[test]
fn issue25_need_all_computes_marginals_on_first_use_and_matches_brute_force() {
    use trellis::WeightTable;
    use trellis::posterior::{Need, Posterior};
    let (mut passes, mut fell_back) = (0, 0);
    for n in 2..=7 {
        for seed in 0..2u64 {
            let w = random_weights(n, 3300 + 10 * n as u64 + seed, 1.0);
            for beta in [0.25, 1.0, 5.0, 60.0, 1e300] {
                let brute = Brute::new(&NaiveHcc { w: w.clone(), beta });
                let tol = brute.tol_log();
                let hcc = Hcc::new(&lib_weights(&w), beta).unwrap();
                for path in paths() {
                    let what = format!("n={n} seed={seed} β={beta} {path}");
                    let post = Posterior::dense(hcc.clone(), Need::All, &on(path)).unwrap();
                    close(
                        &format!("log Z {what}"),
                        post.log_z().unwrap(),
                        brute.log_z,
                        tol,
                    );
                    let map = post.map().unwrap();
                    close(&format!("MAP {what}"), map.log_potential, brute.map, tol);
                    let listed = post.cluster_marginals(0.0, &on(path)).unwrap();
                    for (members, p) in &listed {
                        let s: usize = members.iter().map(|&i| 1usize << i).sum();
                        close(
                            &format!("P({s:#b}) {what}"),
                            *p,
                            brute.log_marg[s].exp(),
                            brute.tol_p(),
                        );
                    }
                    let Some(table) = WeightTable::new(&hcc, &on(path)).unwrap() else {
                        fell_back += 1;
                        assert!(format!("{post:?}").contains("dense trellis"), "{what}");
                        continue;
                    };
                    passes += 1;
                    assert!(format!("{post:?}").contains("blocked passes"), "{what}");
                    assert!(table.log_p_table().is_none(), "{what}");
                    let log_p = table.marginals(&hcc, &on(path)).unwrap();
                    assert_eq!(log_p.len(), 1 << n, "{what}");
                    for (s, (&got, &want)) in log_p.iter().zip(&brute.log_marg).enumerate() {
                        if want == f64::NEG_INFINITY {
                            assert_eq!(got, want, "log P({s:#b}) {what}");
                        } else {
                            close(&format!("log P({s:#b}) {what}"), got, want, 4.0 * tol);
                        }
                    }
                    // Kept: asked again, the same table.
                    assert_eq!(
                        table.log_p_table().unwrap().as_ptr(),
                        log_p.as_ptr(),
                        "{what}"
                    );
                }
            }
        }
    }
    assert!(
        passes > 0 && fell_back > 0,
        "{passes} by the passes, {fell_back} by the full trellis"
    );
}

/// `Need::Marginals` against the full trellis (n = 9 … 14, crossing the
/// block widths): every marginal, the probability of sub-hierarchies, the
/// MCC and consensus trees; under triplets too (the terms then come from
/// tables); and the same answer with the terms from tables and rebuilt.
#[test]
fn issue25_need_marginals_match_the_full_trellis() {
    use trellis::constraints::Constrained;
    use trellis::ddt::Triplet;
    use trellis::posterior::{Need, Posterior};
    let t = |a, b, c| Triplet::new(a, b, c).unwrap();
    for n in [9, 11, 14] {
        let w = random_weights(n, 3100 + n as u64, 1.0);
        for beta in [0.5, 3.0] {
            let hcc = Hcc::new(&lib_weights(&w), beta).unwrap();
            let triplets_of = || vec![t(0, 1, 2), t(3, 4, 5), t(0, 1, 8), t(6, 7, 0)];
            let constrained = Constrained::new(hcc.clone(), triplets_of()).unwrap();
            // The reference is the whole trellis: `General` hides the
            // separable form, so `Need::All` builds a `Trellis`.
            let o = Options::default();
            let general = General(hcc.clone());
            let constrained_general = Constrained::new(general.clone(), triplets_of()).unwrap();
            let cases: [(&str, Posterior, Posterior); 4] = [
                (
                    "plain",
                    Posterior::dense(hcc.clone(), Need::Marginals, &o).unwrap(),
                    Posterior::dense(general.clone(), Need::All, &o).unwrap(),
                ),
                (
                    "triplets",
                    Posterior::dense(constrained.clone(), Need::Marginals, &o).unwrap(),
                    Posterior::dense(constrained_general.clone(), Need::All, &o).unwrap(),
                ),
                // `Need::All` of the pair-form model: the weight and MAP
                // passes, the outside pass on the first question.
                (
                    "plain, Need::All",
                    Posterior::dense(hcc.clone(), Need::All, &o).unwrap(),
                    Posterior::dense(general, Need::All, &o).unwrap(),
                ),
                (
                    "triplets, Need::All",
                    Posterior::dense(constrained, Need::All, &o).unwrap(),
                    Posterior::dense(constrained_general, Need::All, &o).unwrap(),
                ),
            ];
            for (kind, post, full) in &cases {
                let what = format!("n={n} β={beta} {kind}");
                assert!(format!("{full:?}").contains("dense trellis"), "{what}");
                let want_kind = if kind.ends_with("Need::All") {
                    "blocked passes"
                } else {
                    "Need::Marginals"
                };
                assert!(format!("{post:?}").contains(want_kind), "{what}: {post:?}");
                let tol = 1e-12 * full.log_z().unwrap().abs().max(1.0);
                close(
                    &format!("log Z {what}"),
                    post.log_z().unwrap(),
                    full.log_z().unwrap(),
                    tol,
                );
                let got = post.cluster_marginals(0.0, &o).unwrap();
                let want = full.cluster_marginals(0.0, &o).unwrap();
                assert_eq!(got.len(), want.len(), "{what}");
                // Every binary tree has n - 2 non-singleton proper clusters:
                // the marginals sum to that (what bounds the clusters listed
                // above a threshold, `plan::listed_bytes`).
                let sum: f64 = got.iter().map(|(_, p)| p).sum();
                close(&format!("Σ P {what}"), sum, (n - 2) as f64, 1e-10);
                let clusters: Vec<Vec<usize>> = want.iter().map(|(c, _)| c.clone()).collect();
                let support = post.support(&clusters, &o).unwrap();
                for ((c, p), q) in want.iter().zip(&support) {
                    close(&format!("P({c:?}) {what}"), *q, *p, 1e-11);
                }
                // Sub-hierarchies of the MAP tree and of a sample.
                let map = full.map().unwrap().tree;
                let sample = full.samples(1, 5).unwrap().remove(0);
                for tree in [&map, &sample] {
                    for sub in crate::oracle::subtrees(tree) {
                        let (a, b) = (
                            post.subtree(&sub, &o).unwrap(),
                            full.subtree(&sub, &o).unwrap(),
                        );
                        close(
                            &format!("P(subtree {sub}) {what}"),
                            a,
                            b,
                            1e-11 * b.max(1e-300) + 1e-15,
                        );
                    }
                }
                let (a, b) = (post.mcc_tree(&o).unwrap(), full.mcc_tree(&o).unwrap());
                let (ca, cb) = (a.log_credibility().unwrap(), b.log_credibility().unwrap());
                close(&format!("MCC {what}"), ca, cb, 1e-9 * cb.abs().max(1.0));
                let (a, b) = (
                    post.consensus_tree(0.5, &o).unwrap(),
                    full.consensus_tree(0.5, &o).unwrap(),
                );
                assert_eq!(a.resolved(), b.resolved(), "consensus {what}");
                // `Need::Everything`: these passes' answers and the MAP pass's tree.
                let all = match kind.starts_with("plain") {
                    true => Posterior::dense(hcc.clone(), Need::Everything, &o).unwrap(),
                    false => Posterior::dense(
                        Constrained::new(hcc.clone(), triplets_of()).unwrap(),
                        Need::Everything,
                        &o,
                    )
                    .unwrap(),
                };
                assert!(format!("{all:?}").contains("blocked passes"), "{what}");
                assert_eq!(all.log_z().unwrap(), post.log_z().unwrap(), "{what}");
                assert_eq!(
                    all.cluster_marginals(0.0, &o).unwrap(),
                    got,
                    "Need::Everything {what}"
                );
                // A MAP tree of the max-plus pass: hcc has many trees of
                // equal potential, and the general kernel's sums are taken
                // in another order, so the trees may differ; their values
                // agree to rounding.
                let (a, b) = (all.map().unwrap(), full.map().unwrap());
                let map_tol = 1e-12 * b.log_potential.abs().max(1.0);
                close(
                    &format!("MAP {what}"),
                    a.log_potential,
                    b.log_potential,
                    map_tol,
                );
                assert_eq!(post.map().is_ok(), kind.ends_with("Need::All"), "{what}");
                if post.map().is_ok() {
                    assert_eq!(post.map().unwrap(), a, "{what}");
                }
                let (a, b) = (all.map_cost().unwrap(), full.map_cost().unwrap());
                close(&format!("MAP cost {what}"), a, b, 1e-12 * b.abs().max(1.0));
                let tree = all.map().unwrap().tree;
                let heights = all.dendrogram(tree.clone()).unwrap();
                assert_eq!(heights, full.dendrogram(tree).unwrap(), "{what}");
                assert_eq!(all.samples(20, 4).unwrap(), post.samples(20, 4).unwrap());
            }
        }
    }
}

/// `Need::Marginals` and `Need::All` of hcc hold two 8-byte tables:
/// admitted at `pass_marginals_bytes`, where the full trellis is refused,
/// and refused one byte below it, before anything is made.
#[test]
fn issue25_need_marginals_is_admitted_at_two_tables() {
    use trellis::pass_marginals_bytes;
    use trellis::posterior::{Need, Posterior};
    let n = 18;
    let hcc = Hcc::new(&lib_weights(&random_weights(n, 3200, 1.0)), 1.0).unwrap();
    let need = pass_marginals_bytes(n);
    let capped = |limit: u64| Options {
        memory_limit: Some(limit),
        ..Options::default()
    };
    let e = Posterior::dense(hcc.clone(), Need::Marginals, &capped(need - 1)).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::OutOfMemory { needed, capped: true, .. } if *needed == need),
        "{e}"
    );
    let post = Posterior::dense(hcc.clone(), Need::Marginals, &capped(need)).unwrap();
    assert!(format!("{post:?}").contains("Need::Marginals"), "{post:?}");
    let clusters = post.cluster_marginals(0.0, &Options::default()).unwrap();
    assert!(!clusters.is_empty() && clusters.iter().all(|(_, p)| *p > 0.0 && *p <= 1.0));
    // `Need::All` holds the weights and, in turn, the MAP pass's or the
    // outside pass's table: admitted at the same bytes, refused below.
    let e = Posterior::dense(hcc.clone(), Need::All, &capped(need - 1)).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::OutOfMemory { needed, capped: true, .. } if *needed == need),
        "{e}"
    );
    let all = Posterior::dense(hcc.clone(), Need::All, &capped(need)).unwrap();
    assert!(format!("{all:?}").contains("blocked passes"), "{all:?}");
    assert_eq!(all.cluster_marginals(0.0, &capped(need)).unwrap(), clusters);
    // The full trellis is refused at these bytes.
    let e = Posterior::dense(General(hcc), Need::All, &capped(need)).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::OutOfMemory { .. }), "{e}");
}
