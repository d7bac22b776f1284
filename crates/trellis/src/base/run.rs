//! Options of the long computations, with progress reports that can cancel.
//!
//! Every exact algorithm (the dense and flat trellises and their outside
//! passes), A* and the samplers take [`Options`]: a memory limit checked
//! before anything is allocated, an optional time limit, and an optional
//! progress callback. The callback is called from the calling thread between
//! batches of work, each batch at most about a second of work; returning
//! [`ControlFlow::Break`] stops the computation, which then fails with
//! [`ErrorKind::Cancelled`].

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind, Result};

/// A progress report: `done` of `total` units of work (splits, terms,
/// vertices or iterations, named by `stage`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress<'a> {
    /// What is being computed, e.g. `"inside"`, `"outside"`, `"search"`.
    pub stage: &'a str,
    /// Units done so far.
    pub done: u64,
    /// Units in all (an upper bound when the total is not known in advance).
    pub total: u64,
    /// Units of `done` read from a checkpoint rather than computed.
    pub resumed: u64,
}

impl Progress<'_> {
    /// A label for a progress bar: the stage, and the share read from a
    /// checkpoint when a run resumed (`"log Z (25% resumed)"`).
    pub fn label(&self) -> String {
        if self.resumed == 0 || self.total == 0 {
            return self.stage.to_string();
        }
        let share = 100.0 * self.resumed as f64 / self.total as f64;
        format!("{} ({share:.0}% resumed)", self.stage)
    }
}

/// Runs a stream that hands each item to a sink that may stop it (e.g.
/// [`Posterior::each_sample`](crate::posterior::Posterior::each_sample))
/// with a fallible consumer `each`, whose first error (a door's failed
/// write) stops the stream and is returned.
///
/// # Errors
///
/// The stream's, and the first of `each`.
pub fn until_error<T, E: From<Error>>(
    stream: impl FnOnce(&mut dyn FnMut(T) -> ControlFlow<()>) -> Result<()>,
    each: &mut dyn FnMut(T) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    let mut failed = None;
    stream(&mut |item| match each(item) {
        Ok(()) => ControlFlow::Continue(()),
        Err(e) => {
            failed = Some(e);
            ControlFlow::Break(())
        }
    })?;
    failed.map_or(Ok(()), Err)
}

/// A progress callback: return [`ControlFlow::Break`] to cancel.
pub type ProgressFn<'a> = &'a (dyn Fn(Progress<'_>) -> ControlFlow<()> + Sync);

/// Limits and progress reporting of a computation.
#[derive(Clone, Copy, Default)]
pub struct Options<'a> {
    /// Refuse to allocate more than this many bytes of tables (A*: of
    /// vertices and heap entries); `None` uses the memory the operating
    /// system reports as available (A*: half of it).
    pub memory_limit: Option<u64>,
    /// Stop with [`ErrorKind::TimeLimit`] (approximate A*: with the best tree
    /// so far) after this long; `None` for no limit (and so is a limit too
    /// long for the clock to represent).
    pub time_limit: Option<Duration>,
    /// Called between batches of work; may cancel.
    pub progress: Option<ProgressFn<'a>>,
    /// The vector path of the blocked dense kernel
    /// ([`KernelPath`](crate::base::kernel_path::KernelPath)); `None` takes the one named by the
    /// `TRELLIS_KERNEL` environment variable, else the fastest the CPU has.
    pub kernel: Option<crate::base::kernel_path::KernelPath>,
    /// A directory where the blocked passes keep their finished levels: a
    /// run killed part-way resumes from them and gives the identical answer
    /// (see `dense/checkpoint.rs`). `None`: no checkpoints. Read by
    /// [`Trellis::log_z_only`](crate::Trellis::log_z_only) and
    /// [`Trellis::map_only`](crate::Trellis::map_only) (a model in pair
    /// form: hierarchical correlation clustering),
    /// [`Trellis::with_options`](crate::Trellis::with_options) and
    /// [`Trellis::marginals_with`](crate::Trellis::marginals_with) (a
    /// separable model with a constant factor; the outside pass uses the
    /// directory the trellis was built with), and the flat trellis's
    /// [`log_z_only`](crate::flat::FlatTrellis::log_z_only),
    /// [`map_only`](crate::flat::FlatTrellis::map_only) and
    /// [`with_options`](crate::flat::FlatTrellis::with_options). Where such a
    /// computation needs a pass that keeps none (another model, weights or
    /// energies beyond the blocked passes' range) it refuses the directory.
    /// Other computations do not read it.
    pub checkpoint: Option<&'a std::path::Path>,
}

impl std::fmt::Debug for Options<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("memory_limit", &self.memory_limit)
            .field("time_limit", &self.time_limit)
            .field("progress", &self.progress.is_some())
            .field("kernel", &self.kernel)
            .field("checkpoint", &self.checkpoint)
            .finish()
    }
}

impl<'a> Options<'a> {
    /// The same options with a memory limit.
    pub fn with_memory_limit(mut self, bytes: u64) -> Options<'a> {
        self.memory_limit = Some(bytes);
        self
    }

    /// The same options with a progress callback.
    pub fn with_progress(mut self, progress: ProgressFn<'a>) -> Options<'a> {
        self.progress = Some(progress);
        self
    }
}

/// The instant `limit` after `start`, or `None` (no deadline) when that is
/// beyond what the clock can represent (a limit of centuries).
pub(crate) fn deadline(start: Instant, limit: Duration) -> Option<Instant> {
    start.checked_add(limit)
}

/// Counts work done for one stage, reports it and stops on cancellation or
/// at the deadline.
pub(crate) struct Ticker<'a> {
    f: Option<ProgressFn<'a>>,
    stage: &'static str,
    done: u64,
    resumed: u64,
    total: u64,
    deadline: Option<(Instant, Duration)>,
}

impl<'a> Ticker<'a> {
    /// A ticker for `total` units of `stage`; reports 0 done (and may be
    /// cancelled right away).
    pub(crate) fn new(
        options: &Options<'a>,
        stage: &'static str,
        total: u64,
    ) -> Result<Ticker<'a>> {
        let t = Ticker {
            f: options.progress,
            stage,
            done: 0,
            resumed: 0,
            total,
            deadline: options
                .time_limit
                .and_then(|d| Some((deadline(Instant::now(), d)?, d))),
        };
        t.report()?;
        Ok(t)
    }

    /// Records `units` more done; fails if cancelled or past the deadline.
    pub(crate) fn advance(&mut self, units: u64) -> Result<()> {
        self.done = self.done.saturating_add(units);
        self.report()
    }

    /// Records `units` more done by reading them from a checkpoint.
    pub(crate) fn resume(&mut self, units: u64) -> Result<()> {
        self.resumed = self.resumed.saturating_add(units);
        self.advance(units)
    }

    fn report(&self) -> Result<()> {
        if let Some(f) = self.f {
            let p = Progress {
                stage: self.stage,
                done: self.done.min(self.total),
                total: self.total,
                resumed: self.resumed.min(self.total),
            };
            if f(p).is_break() {
                return Err(Error::new(ErrorKind::Cancelled));
            }
        }
        if let Some((deadline, limit)) = self.deadline {
            if Instant::now() >= deadline {
                return Err(Error::new(ErrorKind::TimeLimit {
                    seconds: limit.as_secs_f64(),
                    done: self.done,
                }));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_label_shows_the_resumed_share() {
        let p = |done, resumed| Progress {
            stage: "log Z",
            done,
            total: 400,
            resumed,
        };
        assert_eq!(p(10, 0).label(), "log Z");
        assert_eq!(p(300, 100).label(), "log Z (25% resumed)");
    }
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn a_limit_beyond_the_clock_is_no_limit() {
        let options = Options {
            time_limit: Some(Duration::MAX),
            ..Options::default()
        };
        let mut t = Ticker::new(&options, "test", 10).unwrap();
        assert!(t.advance(5).is_ok());
    }

    #[test]
    fn a_callback_can_cancel() {
        let calls = AtomicU64::new(0);
        let f = |p: Progress<'_>| {
            calls.fetch_add(1, Ordering::Relaxed);
            if p.done >= 10 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        let options = Options::default().with_progress(&f);
        let mut t = Ticker::new(&options, "test", 100).unwrap();
        assert!(t.advance(5).is_ok());
        let e = t.advance(5).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Cancelled));
        assert_eq!(calls.load(Ordering::Relaxed), 3);
    }
}
