//! Running a command on every jet of a jets file, with the results in input
//! order, one JSON object per jet per line (JSON Lines). Small jets run in
//! parallel over jets (rayon); large ones (over [`BIG_WORK`] splits) one at a
//! time, each with the trellis's own parallelism, so that at most one set of
//! large tables is alive. A failing jet fails the whole command before
//! anything is printed, with an error naming the jet.

use anyhow::{Context, Result};
use rayon::prelude::*;
use serde::Serialize;
use trellis::ginkgo::{Jet, JetsFile};
use trellis::{MAX_POINTS, total_splits};

use crate::progress::Bar;

/// Jets whose work exceeds this many splits (more than 16 leaves for the
/// exact trellis) run one at a time.
const BIG_WORK: u64 = 20_000_000;

/// Runs `f(index, jet)` on every jet and returns the JSON Lines. `work`
/// estimates a jet's cost in splits (scheduling, progress bar).
pub fn per_jet<T: Serialize + Send>(
    file: &JetsFile,
    progress: bool,
    work: impl Fn(&Jet) -> u64 + Sync,
    f: impl Fn(usize, &Jet) -> Result<T> + Sync,
) -> Result<String> {
    let total = file
        .jets
        .iter()
        .fold(0u64, |acc, j| acc.saturating_add(work(j)));
    let bar = Bar::items(progress, file.jets.len() as u64, total);
    let run = |k: usize| {
        let jet = &file.jets[k];
        let r = f(k, jet).with_context(|| format!("jet {}", jet.id));
        bar.inc();
        r
    };
    let (big, small): (Vec<usize>, Vec<usize>) =
        (0..file.jets.len()).partition(|&k| work(&file.jets[k]) > BIG_WORK);
    let mut results: Vec<Option<Result<T>>> = (0..file.jets.len()).map(|_| None).collect();
    let small_results: Vec<Result<T>> = small.par_iter().map(|&k| run(k)).collect();
    for (k, r) in small.into_iter().zip(small_results) {
        results[k] = Some(r);
    }
    for k in big {
        results[k] = Some(run(k));
    }
    drop(bar);
    let results = results.into_iter().map(|r| r.expect("every jet ran"));
    let mut out = String::new();
    for (jet, r) in file.jets.iter().zip(results) {
        out += &serde_json::to_string(&trellis::report::JetLine {
            id: &jet.id,
            result: r?,
        })?;
        out.push('\n');
    }
    Ok(out)
}

/// The splits the exact trellis of a jet evaluates (a progress-bar weight).
pub fn dense_work(jet: &Jet) -> u64 {
    if jet.len() > MAX_POINTS {
        0
    } else {
        total_splits(jet.len()) as u64
    }
}

/// Fails, naming the first such jet, if any jet is too large for the exact
/// trellis (checked before any work starts).
pub fn check_dense(file: &JetsFile) -> Result<()> {
    if let Some(jet) = file.jets.iter().find(|j| j.len() > MAX_POINTS) {
        anyhow::bail!(
            "jet {} has {} leaves; the exact trellis supports at most {MAX_POINTS}: use \
             --sparse beam or --sparse simulator (any number of leaves) for log Z, marginals and \
             samples of larger jets, and `trellis astar --approx` (approximate A* from beam \
             search, never worse than it, any number of leaves) for their MAP tree",
            jet.id,
            jet.len()
        );
    }
    Ok(())
}
