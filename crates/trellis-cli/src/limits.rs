//! Sizes checked before anything is allocated: the memory a count asks for
//! (samples, beam width, trees, jets, candidates, the marginals listed),
//! against `--max-memory` or, without it, the memory the operating system
//! reports as available. The estimates are upper bounds of what the library
//! and the output hold at once.

use anyhow::{Result, bail};
use trellis::Tree;

use crate::output::bytes;

/// The memory limit in bytes and whether it is the user's `--max-memory`
/// (`None`: no limit is known).
pub fn limit(max_memory: Option<u64>) -> Option<(u64, bool)> {
    match max_memory {
        Some(b) => Some((b, true)),
        None => trellis::available_memory().map(|b| (b, false)),
    }
}

/// Fails when `needed` bytes for `what` exceed the limit, saying how much
/// would be needed and what the limit is.
pub fn check(what: &str, needed: u128, max_memory: Option<u64>) -> Result<()> {
    let Some((limit, capped)) = limit(max_memory) else {
        return Ok(());
    };
    if needed <= limit as u128 {
        return Ok(());
    }
    let needed = bytes(u64::try_from(needed).unwrap_or(u64::MAX));
    if capped {
        bail!(
            "{what} needs {needed}, which exceeds the --max-memory cap of {}",
            bytes(limit)
        );
    }
    bail!(
        "{what} needs {needed}, but only {} is available",
        bytes(limit)
    )
}

/// Bytes of the `N x N` weight matrix over `n` points (its similarities are
/// computed into it).
pub fn weights_bytes(n: usize) -> u128 {
    8 * (n as u128) * (n as u128)
}

/// Bytes of one tree over `n` leaves in memory and as text (Newick or JSON),
/// an upper bound: `2n - 1` boxed nodes, and about a dozen characters a leaf.
pub fn tree_bytes(n: usize) -> u128 {
    let node = std::mem::size_of::<Tree>() as u128 + 16;
    let n = n.max(1) as u128;
    2 * n * node + 12 * n
}

/// Bytes of beam search over `n` points with `width` states per level (the
/// library's estimate: two levels of states with their active clusters and
/// ranked candidate merges, and the clusters built).
pub fn beam_bytes(n: usize, width: usize) -> u128 {
    trellis::baselines::beam_memory(n, width) as u128
}

/// Bytes of the clusters listed by `marginals` for `n` points (every
/// non-singleton proper cluster at worst): their members and probabilities,
/// in memory and as text.
pub fn clusters_bytes(n: usize) -> u128 {
    if n >= 100 {
        return u128::MAX;
    }
    let per_cluster = 48 + 12 * n as u128;
    per_cluster << n
}
