//! How much memory the dense trellis needs, and how much there is.
//!
//! Every table of the dense trellis has one entry per subset, `2^n` entries, so
//! memory, not only time, bounds `n`. The estimates here are what the library
//! allocates (per subset: 16 bytes of model tables for the built-in models,
//! 56 bytes while building the inside tables, 16 bytes kept afterwards, and
//! 40 more for the outside pass of the marginals; the flat trellis needs 96
//! bytes per subset, and 8 more for its marginals). A pair-form model's
//! blocked passes hold less: 8 bytes per subset for log Z, the MAP tree or
//! samples ([`pass_bytes`]), 16 for every marginal as well
//! ([`pass_marginals_bytes`]).
//!
//! The limit is the caller's ([`Options::memory_limit`](crate::Options)) or,
//! without one, the memory the operating system reports as available; the
//! errors say which ([`ErrorKind::OutOfMemory`]'s `capped`). The available
//! memory is read once and reused for 0.1 s ([`available_memory`]), so that
//! thousands of small problems (the jets of a jets file) do not each pay for
//! reading it.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind, Result};

/// Largest number of points the dense trellis accepts (subsets are `u32` masks
/// and tables have `2^n` entries).
pub const MAX_POINTS: usize = 30;

// The dense method's name and its least bytes per subset live with the
// error that quotes them, so that `error` imports nothing above it.
pub(crate) use crate::error::{DENSE_METHOD, MODEL_BYTES};
/// Peak of the inside pass (log Z, MAP value, exact and fast working cells).
pub(crate) const INSIDE_PEAK_BYTES: u64 = 8 + 8 + 24 + 16;
/// Kept after the inside pass.
pub(crate) const INSIDE_KEPT_BYTES: u64 = 8 + 8;
/// Outside pass (log outside, two scaled working tables).
pub(crate) const OUTSIDE_BYTES: u64 = 8 + 16 + 16;

/// Bytes of a blocked pass over one 8-byte entry per subset whose terms are
/// rebuilt block by block (`logz` and `map` of a pair-form model): the
/// table, the high parts' terms (16 bytes per block) and the working blocks
/// of one parallel batch (saturating at `u64::MAX`).
pub fn pass_bytes(n: usize) -> u64 {
    if n >= 60 {
        return u64::MAX;
    }
    (8u64 << n) + (16u64 << n.saturating_sub(10)) + (8 << 20)
}

/// Bytes of the blocked passes of every cluster marginal of a pair-form
/// model (`WeightTable::with_marginals`): the weights `G` kept from the
/// inside pass and the outside pass's table, which becomes `log P` in
/// place, 16 bytes per subset, with [`pass_bytes`]'s bookkeeping.
pub fn pass_marginals_bytes(n: usize) -> u64 {
    if n >= 60 {
        return u64::MAX;
    }
    pass_bytes(n).saturating_add(8u64 << n)
}

/// What a run will compute, for [`memory_needed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// Partition function, MAP, sampling.
    Inside,
    /// All of the above plus every cluster marginal.
    Marginals,
    /// The flat trellis: partition function, MAP partition, sampling.
    FlatInside,
    /// The flat trellis and every cluster and pairwise marginal.
    FlatMarginals,
    /// One pass over one 8-byte entry per subset whose terms are rebuilt
    /// block by block: log Z or the MAP tree of a pair-form model without
    /// constraints ([`pass_bytes`]).
    Pass,
    /// One blocked pass of the flat trellis: its log Z or its MAP partition
    /// alone (two 8-byte tables at a time: see `FLAT_PASS_BYTES`).
    FlatPass,
    /// The blocked inside and outside passes of a pair-form model without
    /// constraints: log Z, samples and every cluster marginal at two 8-byte
    /// entries per subset ([`pass_marginals_bytes`]).
    PassMarginals,
}

/// Bytes the dense (hierarchical or flat) trellis over `n` points needs at
/// its peak, model tables of the built-in models included (saturating at
/// `u64::MAX`).
pub fn memory_needed(n: usize, workload: Workload) -> u64 {
    let per_subset = match workload {
        Workload::Pass => return pass_bytes(n),
        Workload::PassMarginals => return pass_marginals_bytes(n),
        Workload::Inside => MODEL_BYTES + INSIDE_PEAK_BYTES,
        Workload::Marginals => {
            MODEL_BYTES
                + INSIDE_KEPT_BYTES
                + OUTSIDE_BYTES.max(INSIDE_PEAK_BYTES - INSIDE_KEPT_BYTES)
        }
        Workload::FlatInside => FLAT_BYTES,
        Workload::FlatPass => FLAT_PASS_BYTES,
        // The marginals add one log-probability per subset.
        Workload::FlatMarginals => FLAT_BYTES + 8,
    };
    if n >= 64 {
        return u64::MAX;
    }
    per_subset.saturating_mul(1u64 << n)
}

/// How long one reading of the available memory is reused.
///
/// Reading `/proc/meminfo` costs a file open and a dozen reads (tens of
/// microseconds of system time), which dominated the memory check of small
/// problems run by the thousand (a jets file checks every jet). One reading
/// serves every check within this interval, from any thread: shorter than the
/// time the operating system itself takes to account for large allocations
/// (pages count only once touched), so no check becomes less strict than the
/// figure is accurate.
const AVAILABLE_REUSE: Duration = Duration::from_millis(100);

/// The last reading of the available memory and when it was taken.
static AVAILABLE: Mutex<Option<(Instant, Option<u64>)>> = Mutex::new(None);

/// Memory the operating system reports as available (Linux `MemAvailable`),
/// or `None` where it cannot be read. Read at most once per 0.1 s per process
/// (every call within that interval returns the same reading).
pub fn available_memory() -> Option<u64> {
    reading(&AVAILABLE, Instant::now(), read_available)
}

/// The reading in `cache` if it was taken less than [`AVAILABLE_REUSE`]
/// before `now`, otherwise a new one from `read` (stored).
fn reading(
    cache: &Mutex<Option<(Instant, Option<u64>)>>,
    now: Instant,
    read: impl FnOnce() -> Option<u64>,
) -> Option<u64> {
    // The cache holds plain data: a panic elsewhere cannot leave it invalid.
    let mut cache = cache.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((at, value)) = *cache {
        if now.saturating_duration_since(at) < AVAILABLE_REUSE {
            return value;
        }
    }
    let value = read();
    *cache = Some((now, value));
    value
}

/// `MemAvailable` of `/proc/meminfo`, in bytes.
fn read_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Checks `n` against [`MAX_POINTS`] and `needed` bytes against `limit`
/// (or the available memory when `limit` is `None`).
pub fn check_dense(n: usize, needed: u64, limit: Option<u64>) -> Result<()> {
    if n == 0 {
        return Err(Error::new(ErrorKind::Empty));
    }
    if n > MAX_POINTS {
        return Err(Error::new(ErrorKind::TooManyPoints {
            n,
            max: MAX_POINTS,
            method: DENSE_METHOD,
        }));
    }
    if let Some(available) = limit.or_else(available_memory) {
        if needed > available {
            return Err(Error::new(ErrorKind::OutOfMemory {
                n,
                needed,
                available,
                capped: limit.is_some(),
            }));
        }
    }
    Ok(())
}

/// Checks that `needed` bytes for `what` fit in `limit` (or the available
/// memory when `limit` is `None`): for sizes computed before allocating.
pub(crate) fn check_bytes(
    what: impl FnOnce() -> String,
    needed: u64,
    limit: Option<u64>,
) -> Result<()> {
    if let Some(available) = limit.or_else(available_memory) {
        if needed > available {
            return Err(Error::new(ErrorKind::TooMuchMemory {
                what: what(),
                needed,
                limit: available,
                capped: limit.is_some(),
            }));
        }
    }
    Ok(())
}

/// Checks that the dense trellis for `n` points and `workload` fits: call it
/// before building a model to fail fast with a clear message.
pub fn check_memory(n: usize, workload: Workload, limit: Option<u64>) -> Result<()> {
    check_dense(n, memory_needed(n, workload), limit)
}

/// Bytes per subset of the flat trellis: energy and partition-function cells
/// (24 each) and their compact copies (16 each), the relative part of log Z
/// and the MAP value (8 each).
pub(crate) const FLAT_BYTES: u64 = 24 + 24 + 16 + 16 + 8 + 8;

/// Bytes per subset of one blocked pass of the flat trellis (`flat logz`,
/// `flat map`), 8 each: the tabulated summaries of a built-in energy and the
/// log-energies made from them; then the log-energies and the MAP pass's
/// keys, or the scaled energies made from the log-energies and, once those
/// are freed, the weight pass's table.
pub(crate) const FLAT_PASS_BYTES: u64 = 16;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits() {
        assert!(check_memory(10, Workload::Marginals, Some(1 << 30)).is_ok());
        let e = check_memory(31, Workload::Inside, None).unwrap_err();
        assert!(matches!(
            e.kind(),
            ErrorKind::TooManyPoints { n: 31, max: 30, .. }
        ));
        let e = check_memory(28, Workload::Inside, Some(1 << 30)).unwrap_err();
        assert!(e.to_string().contains("needs 18.0 GiB"), "{e}");
        assert!(e.to_string().contains("the memory limit of 1.0 GiB"), "{e}");
        let e = check_memory(40, Workload::Inside, None).unwrap_err();
        assert!(e.to_string().contains("at least 16.0 TiB"), "{e}");
        assert_eq!(memory_needed(64, Workload::Inside), u64::MAX);
        assert!(matches!(
            check_memory(0, Workload::Inside, None).unwrap_err().kind(),
            ErrorKind::Empty
        ));
    }

    #[test]
    fn one_reading_serves_the_interval() {
        let cache = Mutex::new(None);
        let reads = std::cell::Cell::new(0);
        let read = |v| {
            reads.set(reads.get() + 1);
            Some(v)
        };
        let t0 = Instant::now();
        assert_eq!(reading(&cache, t0, || read(7)), Some(7));
        // Within the interval: the first reading, without reading again.
        let soon = t0 + AVAILABLE_REUSE / 2;
        assert_eq!(reading(&cache, soon, || read(8)), Some(7));
        assert_eq!(reads.get(), 1);
        // After it: a new reading.
        let later = t0 + AVAILABLE_REUSE;
        assert_eq!(reading(&cache, later, || read(9)), Some(9));
        assert_eq!(reads.get(), 2);
        // An unreadable figure is reused as well, and replaced in time.
        let cache = Mutex::new(None);
        assert_eq!(reading(&cache, t0, || None), None);
        assert_eq!(reading(&cache, soon, || read(5)), None);
        assert_eq!(reading(&cache, later, || read(5)), Some(5));
        // The process-wide reading agrees with the operating system's.
        assert_eq!(available_memory().is_some(), read_available().is_some());
    }
}
