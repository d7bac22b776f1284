//! How much memory the dense trellis needs, and how much there is.
//!
//! Every table of the dense trellis has one entry per subset, `2^n` entries, so
//! memory, not only time, bounds `n`. The estimates here are what the library
//! allocates (per subset: 16 bytes of model tables for the built-in models,
//! 56 bytes while building the inside tables, 16 bytes kept afterwards, and
//! 40 more for the outside pass of the marginals).

use crate::error::{Error, ErrorKind, Result};

/// Largest number of points the dense trellis accepts (subsets are `u32` masks
/// and tables have `2^n` entries).
pub const MAX_POINTS: usize = 30;

/// Model tables of the built-in models, bytes per subset.
pub(crate) const MODEL_BYTES: u64 = 16;
/// Peak of the inside pass (log Z, MAP value, exact and fast working cells).
pub(crate) const INSIDE_PEAK_BYTES: u64 = 8 + 8 + 24 + 16;
/// Kept after the inside pass.
pub(crate) const INSIDE_KEPT_BYTES: u64 = 8 + 8;
/// Outside pass (log outside, two scaled working tables).
pub(crate) const OUTSIDE_BYTES: u64 = 8 + 16 + 16;

/// What a run will compute, for [`memory_needed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// Partition function, MAP, sampling.
    Inside,
    /// All of the above plus every cluster marginal.
    Marginals,
}

/// Bytes the dense trellis over `n` points needs at its peak, model tables of
/// the built-in models included.
pub fn memory_needed(n: usize, workload: Workload) -> u64 {
    let per_subset = MODEL_BYTES
        + match workload {
            Workload::Inside => INSIDE_PEAK_BYTES,
            Workload::Marginals => {
                INSIDE_KEPT_BYTES + OUTSIDE_BYTES.max(INSIDE_PEAK_BYTES - INSIDE_KEPT_BYTES)
            }
        };
    per_subset << n.min(63)
}

/// Memory the operating system reports as available (Linux `MemAvailable`),
/// or `None` where it cannot be read.
pub fn available_memory() -> Option<u64> {
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
            method: "exact inference on the dense trellis (one table entry per subset)",
        }));
    }
    if let Some(available) = limit.or_else(available_memory) {
        if needed > available {
            return Err(Error::new(ErrorKind::OutOfMemory {
                n,
                needed,
                available,
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
        assert!(matches!(
            check_memory(0, Workload::Inside, None).unwrap_err().kind(),
            ErrorKind::Empty
        ));
    }
}
