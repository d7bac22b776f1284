//! Running a command on every jet of a jets file: the library's batch
//! runner (`trellis::batch`: results in input order, one JSON object per
//! jet per line, small jets in parallel, large ones one at a time) with a
//! progress bar, and the check that every jet fits the exact trellis. A
//! failing jet fails the whole command before anything is printed, with an
//! error naming the jet.

use anyhow::Result;
use serde::Serialize;
use trellis::MAX_POINTS;
use trellis::ginkgo::{Jet, JetsFile};

use crate::progress::Bar;

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
    let failed = |jet: &Jet, e: anyhow::Error| e.context(format!("jet {}", jet.id));
    trellis::batch::per_jet(file, work, &|| bar.inc(), failed, f)
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
