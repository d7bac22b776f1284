//! Issue 25: `logz` and `map` of a pair-form model (hcc) as single passes
//! over one 8-byte entry per subset, their terms rebuilt block by block from
//! the weights (`dense/pairs.rs`), on every vector path: against brute force
//! (N ≤ 7), against the full inside pass that reads tables (bit for bit
//! where both run blocked) and the general kernel (N ≤ 16), at β up to
//! 1e300; and their memory check.

use trellis::{ErrorKind, General, Hcc, KernelPath, Options, Trellis, pass_bytes};

use crate::oracle::{Brute, NaiveHcc, lib_weights, random_weights};

fn paths() -> Vec<KernelPath> {
    KernelPath::ALL
        .into_iter()
        .filter(|p| p.available())
        .collect()
}

fn on(path: KernelPath) -> Options<'static> {
    Options {
        kernel: Some(path),
        ..Options::default()
    }
}

fn close(what: &str, got: f64, want: f64, tol: f64) {
    assert!(
        (got - want).abs() <= tol,
        "{what}: {got} vs {want} (tolerance {tol:e})"
    );
}

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
