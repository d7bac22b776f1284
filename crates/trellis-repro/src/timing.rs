//! Wall-clock timing of the reproductions.

use std::time::Instant;

use anyhow::Result;

/// Runs `f` `repeats` times; the fastest wall time in seconds and the last result.
pub fn best_of<T>(repeats: usize, mut f: impl FnMut() -> Result<T>) -> Result<(f64, T)> {
    let mut best = f64::INFINITY;
    let mut last = None;
    for _ in 0..repeats.max(1) {
        let t = Instant::now();
        let v = f()?;
        best = best.min(t.elapsed().as_secs_f64());
        last = Some(v);
    }
    Ok((best, last.unwrap()))
}
