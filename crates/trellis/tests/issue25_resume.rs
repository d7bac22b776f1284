//! Issue 25, item 3: checkpoints of the full trellis (`marginals`: its MAP
//! and weight passes, then the blocked outside pass) and of the flat passes
//! (`flat logz`, `flat map`, the flat trellis). A run stopped after any
//! progress report, or resumed from any prefix of its finished levels,
//! gives the identical answer, bit for bit; a damaged level file and a
//! directory of another run (another β) are refused.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use trellis::flat::FlatTrellis;
use trellis::{CorrelationClustering, ErrorKind, Hcc, Options, Progress, Tree, Trellis};

use crate::issue12_kernel::{on, paths};
use crate::oracle::{lib_weights, random_weights};

/// Points of every run here: 6 high bits (levels 1 to 6) over blocks of 10.
const N: usize = 16;

/// A fresh directory under the system's temporary directory.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "trellis-issue25-resume-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The level files of `dir` (not the run file) with their bytes, in the
/// order the passes write them: by pass in `order` (name prefixes), then by
/// level.
fn level_files(dir: &Path, order: &[&str]) -> Vec<(PathBuf, Vec<u8>)> {
    // A run stopped at its first report may not have made the directory.
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<(usize, PathBuf)> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ckpt"))
        .filter(|p| !p.ends_with("run.ckpt"))
        .map(|p| {
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            let rank = order
                .iter()
                .position(|o| name.starts_with(o))
                .unwrap_or_else(|| panic!("unexpected file {name}"));
            (rank, p)
        })
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|(_, p)| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect()
}

/// Runs `f` with the options of `base` and `dir`, its progress counted;
/// it is cancelled after `stop` reports when given. Returns the answer and
/// the units read from the checkpoint.
fn with_dir<T>(
    base: &Options<'_>,
    dir: &Path,
    stop: Option<usize>,
    f: impl FnOnce(&Options<'_>) -> trellis::Result<T>,
) -> (trellis::Result<T>, u64) {
    let reports = AtomicUsize::new(0);
    let resumed = AtomicU64::new(0);
    let watch = |p: Progress<'_>| {
        resumed.fetch_add(p.resumed, Ordering::Relaxed);
        let k = reports.fetch_add(1, Ordering::Relaxed) + 1;
        match stop {
            Some(s) if k > s => ControlFlow::Break(()),
            _ => ControlFlow::Continue(()),
        }
    };
    let options = Options {
        checkpoint: Some(dir),
        progress: Some(&watch),
        ..*base
    };
    let out = f(&options);
    (out, resumed.load(Ordering::Relaxed))
}

/// The number of progress reports of `f` run to the end.
fn reports<T>(base: &Options<'_>, f: impl FnOnce(&Options<'_>) -> trellis::Result<T>) -> usize {
    let count = AtomicUsize::new(0);
    let watch = |_: Progress<'_>| {
        count.fetch_add(1, Ordering::Relaxed);
        ControlFlow::Continue(())
    };
    let options = Options {
        progress: Some(&watch),
        ..*base
    };
    assert!(f(&options).is_ok(), "an uninterrupted run");
    count.load(Ordering::Relaxed)
}

/// Everything `marginals` answers, bit for bit: log Z, the MAP tree and its
/// value, and `log P(S)` of every subset.
#[derive(Debug, PartialEq)]
struct MarginalsBits {
    log_z: u64,
    map: Tree,
    map_value: u64,
    log_p: Vec<u64>,
}

fn marginals<M: trellis::Model>(hcc: M, options: &Options<'_>) -> trellis::Result<MarginalsBits> {
    let t = Trellis::with_options(hcc, options)?;
    let m = t.marginals_with(options)?;
    Ok(MarginalsBits {
        log_z: t.log_z().to_bits(),
        map: t.map().tree.clone(),
        map_value: t.map().log_potential.to_bits(),
        log_p: (0..1u32 << N).map(|s| m.log_p(s).to_bits()).collect(),
    })
}

/// The passes of a marginals run, in order.
const MARGINALS_PASSES: [&str; 3] = ["keys+map", "weights-", "outside-"];

/// Checks a checkpointed computation `f` against `want` on `base`: stopped
/// after every progress report and resumed (with the share read back
/// reported), then resumed from every prefix of the finished levels
/// (`order`: the passes' name prefixes in the order they run).
fn resumes_identically<T: PartialEq + std::fmt::Debug>(
    what: &str,
    base: &Options<'_>,
    order: &[&str],
    want: &T,
    f: &dyn Fn(&Options<'_>) -> trellis::Result<T>,
) {
    let total = reports(base, f);
    assert!(total >= 8, "{what}: {total} reports");
    for stop in 0..total {
        let dir = fresh_dir(&format!("{what}-stop{stop}"));
        let (first, _) = with_dir(base, &dir, Some(stop), f);
        let e = first.unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Cancelled), "{what}: {e}");
        let saved = level_files(&dir, order).len();
        let (got, resumed) = with_dir(base, &dir, None, f);
        assert_eq!(&got.unwrap(), want, "{what}: stopped after report {stop}");
        assert_eq!(resumed > 0, saved > 0, "{what}: stop {stop}, {saved} files");
        let _ = std::fs::remove_dir_all(&dir);
    }
    // Every prefix of the levels of an uninterrupted run: the run killed
    // right after writing that level.
    let dir = fresh_dir(&format!("{what}-levels"));
    let (first, resumed) = with_dir(base, &dir, None, f);
    assert_eq!(&first.unwrap(), want, "{what}: checkpointed run");
    assert_eq!(resumed, 0);
    let files = level_files(&dir, order);
    assert!(files.len() >= 6, "{what}: {} level files", files.len());
    for keep in 0..=files.len() {
        for (i, (path, bytes)) in files.iter().enumerate() {
            if i < keep {
                std::fs::write(path, bytes).unwrap();
            } else {
                let _ = std::fs::remove_file(path);
            }
        }
        let (got, resumed) = with_dir(base, &dir, None, f);
        assert_eq!(&got.unwrap(), want, "{what}: the first {keep} level files");
        assert_eq!(
            resumed > 0,
            keep > 0,
            "{what}: the first {keep} level files"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Refuses `f` on `dir` with a checkpoint error naming `want`.
fn refused<T: std::fmt::Debug>(what: &str, want: &str, run: trellis::Result<T>) {
    let e = run.unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Checkpoint { .. }) && e.to_string().contains(want),
        "{what}: {e}"
    );
}

/// Flips one bit in the middle of `path`'s entries, runs `f` (which must
/// refuse it), then restores the file.
fn flipped_bit_refused<T: std::fmt::Debug>(path: &Path, f: impl Fn() -> trellis::Result<T>) {
    let good = std::fs::read(path).unwrap();
    let mut bad = good.clone();
    let middle = bad.len() / 2;
    bad[middle] ^= 0x04;
    std::fs::write(path, &bad).unwrap();
    refused(&format!("{path:?} with a flipped bit"), "checksum", f());
    std::fs::write(path, &good).unwrap();
}

#[test]
fn issue25_marginals_resume_to_the_identical_answer() {
    let hcc = Hcc::new(&lib_weights(&random_weights(N, 3300, 1.0)), 2.0).unwrap();
    for path in paths() {
        let base = on(path);
        let want = marginals(&hcc, &base).unwrap();
        let what = format!("marginals-{path}");
        resumes_identically(&what, &base, &MARGINALS_PASSES, &want, &|o| {
            marginals(&hcc, o)
        });
    }
}

#[test]
fn issue25_marginals_of_a_model_without_pairs_resume_to_the_identical_answer() {
    // Triplets restrict hcc to a model given by its tables alone: the run's
    // fingerprint is then the tables, bit for bit.
    use trellis::constraints::Constrained;
    use trellis::ddt::Triplet;
    let hcc = Hcc::new(&lib_weights(&random_weights(N, 3380, 1.0)), 1.0).unwrap();
    let triplets = vec![
        Triplet::new(0, 1, 2).unwrap(),
        Triplet::new(3, 4, 0).unwrap(),
    ];
    let restricted = Constrained::new(&hcc, triplets.clone()).unwrap();
    let base = Options::default();
    let want = marginals(&restricted, &base).unwrap();
    resumes_identically("restricted", &base, &MARGINALS_PASSES, &want, &|o| {
        marginals(&restricted, o)
    });
    // Other triplets: another run.
    let dir = fresh_dir("restricted-other");
    with_dir(&base, &dir, None, |o| marginals(&restricted, o))
        .0
        .unwrap();
    let other = Constrained::new(&hcc, triplets[..1].to_vec()).unwrap();
    refused(
        "other triplets",
        "another run",
        with_dir(&base, &dir, None, |o| marginals(&other, o)).0,
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn issue25_single_passes_of_a_model_without_pairs_resume_and_share_the_directory() {
    // `logz` and `map` under triplets: single passes over the restricted
    // model's tables, fingerprinted by them as its full trellis is.
    use trellis::constraints::Constrained;
    use trellis::ddt::Triplet;
    let hcc = Hcc::new(&lib_weights(&random_weights(N, 3390, 1.0)), 1.0).unwrap();
    let triplets = vec![
        Triplet::new(0, 1, 2).unwrap(),
        Triplet::new(5, 3, 1).unwrap(),
    ];
    let restricted = Constrained::new(&hcc, triplets.clone()).unwrap();
    let base = Options::default();
    let want_z = Trellis::log_z_only(&restricted, &base).unwrap().to_bits();
    resumes_identically("restricted-logz", &base, &["weights-"], &want_z, &|o| {
        Trellis::log_z_only(&restricted, o).map(f64::to_bits)
    });
    let want_map = Trellis::map_only(&restricted, &base).unwrap();
    resumes_identically("restricted-map", &base, &["keys"], &want_map, &|o| {
        Trellis::map_only(&restricted, o)
    });
    // One directory for log Z, the MAP tree and every marginal of one input
    // (no refusal, the same answers); other triplets are another run.
    let want = marginals(&restricted, &base).unwrap();
    let dir = fresh_dir("restricted-shared");
    let (z, _) = with_dir(&base, &dir, None, |o| Trellis::log_z_only(&restricted, o));
    assert_eq!(z.unwrap().to_bits(), want_z);
    let (m, _) = with_dir(&base, &dir, None, |o| Trellis::map_only(&restricted, o));
    assert_eq!(m.unwrap(), want_map);
    let (got, _) = with_dir(&base, &dir, None, |o| marginals(&restricted, o));
    assert_eq!(got.unwrap(), want);
    // And back: the single passes read their own levels again.
    let (z, resumed) = with_dir(&base, &dir, None, |o| Trellis::log_z_only(&restricted, o));
    assert_eq!(z.unwrap().to_bits(), want_z);
    assert!(resumed > 0, "log Z from its levels");
    let other = Constrained::new(&hcc, triplets[..1].to_vec()).unwrap();
    refused(
        "other triplets",
        "another run",
        with_dir(&base, &dir, None, |o| Trellis::log_z_only(&other, o)).0,
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn issue25_marginals_share_the_directory_of_logz_and_map() {
    // `logz`, `map` and `marginals` of one input are one run: the weight
    // pass's levels of `logz` serve `marginals` when the scales agree, and
    // every answer stays the one without checkpoints.
    let hcc = Hcc::new(&lib_weights(&random_weights(N, 3350, 1.0)), 1.0).unwrap();
    let base = Options::default();
    let want = marginals(&hcc, &base).unwrap();
    let want_z = Trellis::log_z_only(&hcc, &base).unwrap();
    let want_map = Trellis::map_only(&hcc, &base).unwrap();
    let dir = fresh_dir("shared");
    let (z, _) = with_dir(&base, &dir, None, |o| Trellis::log_z_only(&hcc, o));
    assert_eq!(z.unwrap().to_bits(), want_z.to_bits());
    let (m, _) = with_dir(&base, &dir, None, |o| Trellis::map_only(&hcc, o));
    assert_eq!(m.unwrap(), want_map);
    let (got, _) = with_dir(&base, &dir, None, |o| marginals(&hcc, o));
    assert_eq!(got.unwrap(), want);
    let (got, resumed) = with_dir(&base, &dir, None, |o| marginals(&hcc, o));
    assert_eq!(got.unwrap(), want);
    assert!(resumed > 0);
    // The outside pass of a trellis built without a directory keeps its
    // levels in the directory of its own options.
    let t = Trellis::new(&hcc).unwrap();
    let dir2 = fresh_dir("outside-only");
    for _ in 0..2 {
        let options = Options {
            checkpoint: Some(&dir2),
            ..Options::default()
        };
        let m = t.marginals_with(&options).unwrap();
        let bits: Vec<u64> = (0..1u32 << N).map(|s| m.log_p(s).to_bits()).collect();
        assert_eq!(bits, want.log_p);
    }
    assert_eq!(level_files(&dir2, &["outside-"]).len(), N - 10);
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&dir2).unwrap();
}

#[test]
fn issue25_damaged_or_foreign_marginals_checkpoints_are_refused() {
    let w = lib_weights(&random_weights(N, 3400, 1.0));
    let hcc = Hcc::new(&w, 2.0).unwrap();
    let base = Options::default();
    let dir = fresh_dir("marginals-refuse");
    let (want, _) = with_dir(&base, &dir, None, |o| marginals(&hcc, o));
    let want = want.unwrap();
    let files = level_files(&dir, &MARGINALS_PASSES);
    let run = || with_dir(&base, &dir, None, |o| marginals(&hcc, o)).0;
    for pass in MARGINALS_PASSES {
        let (path, _) = files
            .iter()
            .find(|(p, _)| p.file_name().unwrap().to_str().unwrap().starts_with(pass))
            .unwrap();
        flipped_bit_refused(path, run);
    }
    // A truncated outside level.
    let (path, good) = files.last().unwrap();
    std::fs::write(path, &good[..good.len() - 3]).unwrap();
    refused("truncated", "bytes", run());
    std::fs::write(path, good).unwrap();
    // Another β: another run.
    let other = Hcc::new(&w, 2.5).unwrap();
    refused(
        "another β",
        "another run",
        with_dir(&base, &dir, None, |o| marginals(&other, o)).0,
    );
    // A level file of another run put in place of one of this run's.
    let dir2 = fresh_dir("marginals-refuse-other");
    with_dir(&base, &dir2, None, |o| marginals(&other, o))
        .0
        .unwrap();
    let (path, _) = &files[1];
    std::fs::copy(dir2.join(path.file_name().unwrap()), path).unwrap();
    refused("a foreign level", "other input", run());
    std::fs::write(path, &files[1].1).unwrap();
    assert_eq!(run().unwrap(), want);
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&dir2).unwrap();
}

/// Everything a flat run answers, bit for bit: log Z, the MAP partition and
/// its log-energy, and the cluster marginals of the full flat trellis.
#[derive(Debug, PartialEq)]
enum FlatBits {
    LogZ(u64),
    Map(Vec<Vec<usize>>, u64),
    Full(u64, Vec<Vec<usize>>, Vec<u64>),
}

fn flat(
    task: &str,
    cc: &CorrelationClustering,
    options: &Options<'_>,
) -> trellis::Result<FlatBits> {
    Ok(match task {
        "logz" => FlatBits::LogZ(FlatTrellis::log_z_only(cc, options)?.to_bits()),
        "map" => {
            let m = FlatTrellis::map_only(cc, options)?;
            FlatBits::Map(m.clusters, m.log_energy.to_bits())
        }
        _ => {
            let t = FlatTrellis::with_options(cc, options)?;
            let m = t.marginals();
            FlatBits::Full(
                t.log_z().to_bits(),
                t.map().clusters.clone(),
                (1..1u32 << N).map(|c| m.log_p(c).to_bits()).collect(),
            )
        }
    })
}

#[test]
fn issue25_flat_passes_resume_to_the_identical_answer() {
    let cc = CorrelationClustering::new(&lib_weights(&random_weights(N, 3500, 1.0)), 1.5).unwrap();
    for path in paths() {
        let base = on(path);
        for (task, order) in [
            ("logz", &["flat-weights-"][..]),
            ("map", &["flat-keys"][..]),
            ("full", &["flat-keys", "flat-weights-"][..]),
        ] {
            let want = flat(task, &cc, &base).unwrap();
            let what = format!("flat-{task}-{path}");
            resumes_identically(&what, &base, order, &want, &|o| flat(task, &cc, o));
        }
    }
}

#[test]
fn issue25_damaged_or_foreign_flat_checkpoints_are_refused() {
    let w = lib_weights(&random_weights(N, 3600, 1.0));
    let cc = CorrelationClustering::new(&w, 1.5).unwrap();
    let base = Options::default();
    let dir = fresh_dir("flat-refuse");
    for task in ["logz", "map"] {
        let want = flat(task, &cc, &base).unwrap();
        let run = || with_dir(&base, &dir, None, |o| flat(task, &cc, o)).0;
        assert_eq!(run().unwrap(), want);
        let prefix = if task == "logz" {
            "flat-weights-"
        } else {
            "flat-keys"
        };
        let files = level_files(&dir, &["flat-weights-", "flat-keys"]);
        let (path, _) = files
            .iter()
            .find(|(p, _)| p.file_name().unwrap().to_str().unwrap().starts_with(prefix))
            .unwrap();
        flipped_bit_refused(path, run);
        // Another β: another run (the log-energies differ).
        let other = CorrelationClustering::new(&w, 2.5).unwrap();
        refused(
            &format!("flat {task} at another β"),
            "another run",
            with_dir(&base, &dir, None, |o| flat(task, &other, o)).0,
        );
        assert_eq!(run().unwrap(), want);
    }
    // A flat directory is not a hierarchical one.
    let hcc = Hcc::new(&w, 1.5).unwrap();
    refused(
        "hcc logz in a flat directory",
        "another run",
        with_dir(&base, &dir, None, |o| Trellis::log_z_only(&hcc, o)).0,
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
