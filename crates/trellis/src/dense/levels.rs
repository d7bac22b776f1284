//! The level-by-level schedule shared by the exact trellises (the
//! hierarchical inside and outside passes and the flat trellis).
//!
//! Every subset of one size depends only on subsets of other sizes, so a
//! level is computed in parallel: its masks are enumerated in increasing
//! order (Gosper's hack) in batches, each batch is mapped through the
//! kernel on all threads, and the results are stored before the next batch.
//! A batch holds at most about [`WORK_PER_BATCH`] units of work (and at
//! least two masks per thread), so progress is reported, and cancellation
//! honoured, well within a second.

use crate::base::par;
use crate::base::run::Ticker;
use crate::base::set::{Mask, for_each_level_batch};
use crate::error::Result;

/// Most masks in one batch.
const BATCH: usize = 1 << 13;

/// Work (splits or terms) per batch, about a tenth of a second on two cores.
const WORK_PER_BATCH: u64 = 1 << 27;

/// A batch is run in parallel when it has at least this much work.
const PARALLEL_WORK: u64 = 1 << 15;

/// Masks per batch for a level whose masks cost `work` each.
fn batch_len(work: u64) -> usize {
    let by_work = (WORK_PER_BATCH / work.max(1)).min(BATCH as u64) as usize;
    by_work.max(2 * par::threads()).min(BATCH)
}

/// Computes `kernel(state, s)` for every mask `s` of size `k` over `n`
/// points, each costing `work` units, and stores it with `store(state, s,
/// value)`: the kernel of a batch runs in parallel on a shared view of
/// `state`, then the batch is stored. Advances `ticker` after every batch.
pub(crate) fn solve_level<X: Sync, T: Send>(
    n: usize,
    k: usize,
    work: u64,
    state: &mut X,
    ticker: &mut Ticker<'_>,
    kernel: impl Fn(&X, Mask) -> T + Sync + Send,
    store: impl Fn(&mut X, Mask, T),
) -> Result<()> {
    let mut out = Vec::new();
    let mut result = Ok(());
    for_each_level_batch(n, k, batch_len(work), |batch| {
        if result.is_err() {
            return;
        }
        {
            let state = &*state;
            let parallel = batch.len() as u64 * work >= PARALLEL_WORK;
            par::map_into(batch, parallel, |s| kernel(state, s), &mut out);
        }
        for (&s, v) in batch.iter().zip(out.drain(..)) {
            store(state, s, v);
        }
        result = ticker.advance(batch.len() as u64 * work);
    });
    result
}

/// Sets `table[t] = f(t)` for every mask `t` whose size is in `sizes`, in parallel.
pub(crate) fn update_by_size<T: Send>(
    table: &mut [T],
    sizes: std::ops::RangeInclusive<usize>,
    f: impl Fn(Mask) -> T + Sync + Send,
) {
    par::update_indexed(table, |t, slot| {
        if sizes.contains(&((t as Mask).count_ones() as usize)) {
            *slot = f(t as Mask);
        }
    });
}
