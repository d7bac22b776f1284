//! Progress bars on stderr for runs that take more than about a second.

use std::ops::ControlFlow;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use trellis::{Options, Progress, ProgressFn};

/// Work (splits or outside terms) below which no bar is drawn: well under a second.
const MIN_WORK: u64 = 300_000_000;

/// A progress bar that exists only when enabled, attended (stderr is a
/// terminal) and the work is large enough to be worth watching.
pub struct Bar {
    bar: Option<ProgressBar>,
}

/// A bar (or spinner) on stderr with a template, `None` when disabled.
fn drawn(enabled: bool, length: Option<u64>, template: &str) -> Bar {
    if !enabled {
        return Bar { bar: None };
    }
    let bar = ProgressBar::with_draw_target(length, ProgressDrawTarget::stderr());
    bar.set_style(ProgressStyle::with_template(template).expect("valid template"));
    Bar { bar: Some(bar) }
}

impl Bar {
    pub fn new(enabled: bool, work: u64) -> Bar {
        let template = "{msg:>8} [{elapsed_precise}] {wide_bar} {percent:>3}% (eta {eta})";
        drawn(enabled && work >= MIN_WORK, Some(work), template)
    }

    /// A spinner with the elapsed time, for a search whose length is not known
    /// in advance (drawn only when enabled and stderr is a terminal).
    pub fn spinner(enabled: bool, message: &str) -> Bar {
        let bar = drawn(enabled, None, "{spinner} {msg} [{elapsed_precise}]");
        if let Some(b) = &bar.bar {
            b.set_message(message.to_string());
            b.enable_steady_tick(std::time::Duration::from_millis(200));
        }
        bar
    }

    /// A bar counting the vertices a search explores, out of `total`
    /// (drawn when enabled and stderr is a terminal).
    pub fn search(enabled: bool, total: u64) -> Bar {
        let template = "{msg:>8} [{elapsed_precise}] {wide_bar} {pos}/{len} explored (eta {eta})";
        let bar = drawn(enabled, Some(total), template);
        if let Some(b) = &bar.bar {
            b.set_message("A* search");
        }
        bar
    }

    /// A bar counting `count` items (jets) whose total work is `work`.
    pub fn items(enabled: bool, count: u64, work: u64) -> Bar {
        let template = "    jets [{elapsed_precise}] {wide_bar} {pos}/{len} (eta {eta})";
        drawn(enabled && work >= MIN_WORK, Some(count), template)
    }

    /// Counts one item done.
    pub fn inc(&self) {
        if let Some(b) = &self.bar {
            b.inc(1);
        }
    }

    /// The callback the library calls with its progress (it never cancels).
    pub fn callback(&self) -> Option<impl Fn(Progress<'_>) -> ControlFlow<()> + Sync + '_> {
        self.bar.as_ref().map(|bar| {
            move |p: Progress<'_>| {
                if bar.length() != Some(p.total) {
                    bar.set_length(p.total);
                }
                let message = p.label();
                if bar.message() != message {
                    bar.set_message(message);
                    // A level read from a checkpoint jumps ahead: the rate
                    // (and so the eta) is measured on the work done since.
                    bar.set_position(p.done);
                    bar.reset_eta();
                }
                bar.set_position(p.done);
                ControlFlow::Continue(())
            }
        })
    }
}

/// Library options with a memory limit and, when there is one, a bar's callback.
pub fn options<'a>(
    memory_limit: Option<u64>,
    callback: Option<&'a (impl Fn(Progress<'_>) -> ControlFlow<()> + Sync + 'a)>,
) -> Options<'a> {
    Options {
        memory_limit,
        progress: callback.map(|f| f as ProgressFn<'a>),
        ..Options::default()
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
