//! Readable output: dendrograms, cluster lists, large numbers; writing to
//! standard output and sizes in bytes.

use std::io::Write;

pub use trellis::report::ClusterJson;

/// A failed write of the output (exit code 1; a closed pipe ends quietly).
#[derive(Debug)]
pub struct WriteError(pub std::io::Error);

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot write the output to standard output: {}", self.0)
    }
}

impl std::error::Error for WriteError {}

/// Standard output as the program found it: the terminal, file or pipe the
/// caller gave, or [`Closed`] when the caller closed it (`>&-`).
pub fn stdout() -> Box<dyn Write> {
    if stdout_was_closed() {
        Box::new(Closed)
    } else {
        Box::new(std::io::stdout().lock())
    }
}

/// Whether the caller started the program with standard output closed.
/// Rust's runtime then opens `/dev/null` *read-write* in its place before
/// `main`, so writes would vanish with exit code 0; a shell's `> /dev/null`
/// (and `Stdio::null()`) opens it write-only. So: descriptor 1 is
/// `/dev/null` opened read-write (Linux's `/proc` tells; elsewhere, and for
/// an explicit `1<> /dev/null`, the output is discarded as asked).
fn stdout_was_closed() -> bool {
    let null = std::fs::read_link("/proc/self/fd/1").is_ok_and(|p| p == *"/dev/null");
    null && std::fs::read_to_string("/proc/self/fdinfo/1").is_ok_and(|info| {
        info.lines()
            .filter_map(|line| line.strip_prefix("flags:"))
            .filter_map(|flags| u32::from_str_radix(flags.trim(), 8).ok())
            .any(|flags| flags & 0o3 == 0o2)
    })
}

/// The output when standard output was closed: every write fails, so
/// anything printed is exit code 1 with a message, never lost silently.
pub struct Closed;

impl Write for Closed {
    fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
        Err(std::io::Error::other("it is closed (started with `>&-`)"))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Writes `text` to `out`; a failure is a [`WriteError`].
pub fn put(out: &mut dyn Write, text: &str) -> anyhow::Result<()> {
    out.write_all(text.as_bytes())
        .map_err(|e| WriteError(e).into())
}
