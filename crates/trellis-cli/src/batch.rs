//! Running a command on every jet of a jets file: the library's batch
//! runner (`trellis::batch`: results in input order, one JSON object per
//! jet per line, small jets in parallel, large ones one at a time) with a
//! progress bar (that every jet fits the exact trellis is checked by
//! `trellis::job::Job::check_jets_fit`). A failing jet fails the whole
//! command before anything is printed, with an error naming the jet.

use anyhow::Result;
use serde::Serialize;
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
