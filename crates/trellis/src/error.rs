//! The one error type of this crate.

use std::fmt;
use std::path::PathBuf;

/// An error from building a model, reading an input or running an inference.
///
/// Match on [`Error::kind`] to react to a particular failure; the `Display`
/// output is a complete sentence meant for a person.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    /// Where it happened (e.g. `in --weights a.csv`), written before the
    /// message; see [`Error::context`].
    context: Option<String>,
}

/// What went wrong.
#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The dataset has no points.
    Empty,
    /// More points than a method supports (the dense trellises index subsets
    /// by 32-bit masks; sparse trellises and A* hold clusters in 128-bit sets).
    TooManyPoints {
        /// Number of points given.
        n: usize,
        /// Largest supported number of points.
        max: usize,
        /// The method and why it is limited, e.g. "the dense trellis (one
        /// table entry per subset)".
        method: &'static str,
    },
    /// The dense trellis tables would not fit in the memory available.
    OutOfMemory {
        /// Number of points.
        n: usize,
        /// Bytes the tables need.
        needed: u64,
        /// Bytes available (the limit that was applied).
        available: u64,
        /// True when `available` is a limit the caller set
        /// ([`Options::memory_limit`](crate::Options)), false when it is the
        /// memory the operating system reports as available.
        capped: bool,
    },
    /// A request whose memory, computed before anything is allocated, would
    /// exceed the limit (a number of samples, candidates or items).
    TooMuchMemory {
        /// What needs the memory, e.g. "approximate A* with 10 sampled candidates per vertex".
        what: String,
        /// Bytes it needs.
        needed: u64,
        /// The limit that was applied, in bytes.
        limit: u64,
        /// True when `limit` was set by the caller, false when it is the
        /// memory the operating system reports as available.
        capped: bool,
    },
    /// A weight matrix that is not square, or rows of unequal length.
    Shape {
        /// What is wrong, e.g. "3 rows but 4 columns".
        detail: String,
    },
    /// A NaN or infinite value in the input.
    NonFinite {
        /// Row (0-based).
        row: usize,
        /// Column (0-based).
        col: usize,
    },
    /// `m[i][j] != m[j][i]` beyond rounding, in weights or distances.
    Asymmetric {
        /// Row (0-based).
        i: usize,
        /// Column (0-based).
        j: usize,
        /// `w[i][j]`.
        wij: f64,
        /// `w[j][i]`.
        wji: f64,
    },
    /// A negative weight where the model needs non-negative similarities (Dasgupta's cost).
    NegativeWeight {
        /// Row (0-based).
        i: usize,
        /// Column (0-based).
        j: usize,
        /// The weight.
        w: f64,
    },
    /// An invalid parameter value (β, γ, ...).
    Parameter {
        /// What is wrong.
        detail: String,
    },
    /// A tree that is not a binary hierarchy over the expected points.
    InvalidTree {
        /// What is wrong.
        detail: String,
    },
    /// A file that could not be parsed.
    Parse {
        /// The file, when there is one.
        path: Option<PathBuf>,
        /// What is wrong and where.
        detail: String,
    },
    /// A file that could not be read (its message includes the operating
    /// system's, which is therefore not also given as the error's `source`).
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The potential is NaN or +∞ for some split, so no distribution is defined.
    BadPotential {
        /// What was found.
        detail: String,
    },
    /// Every tree has zero potential (all log-potentials are −∞).
    NoTree,
    /// Every partition has zero energy (all log-energies are −∞).
    NoPartition,
    /// An A* search would exceed its memory budget.
    SearchBudget {
        /// The budget, in bytes.
        bytes: u64,
        /// Vertices explored when it was reached.
        explored: u64,
    },
    /// A computation reached its time limit before it finished.
    TimeLimit {
        /// The limit, in seconds.
        seconds: f64,
        /// Units of work done (splits, terms or explored vertices) when it was reached.
        done: u64,
    },
    /// A computation estimated, before it starts, to take longer than the
    /// time budget (see `plan::check`): nothing was computed.
    TimeBudget {
        /// What would run, e.g. "exact log Z over 26 points".
        what: String,
        /// The estimated running time, in seconds.
        needed_seconds: f64,
        /// The time budget, in seconds.
        limit_seconds: f64,
    },
    /// The progress callback asked to stop.
    Cancelled,
    /// A set of triplet constraints that no tree satisfies (BUILD found a connected
    /// Aho graph). Names one triplet of the conflict, as point indices.
    UnrealisableTriplets {
        /// One point of the triplet's close pair.
        a: usize,
        /// The other point of the close pair.
        b: usize,
        /// The odd one out.
        c: usize,
        /// Number of points among which the triplets conflict.
        points: usize,
    },
    /// A checkpoint file that cannot be used: it belongs to another run (its
    /// header names other points, model, β or input, or another kernel
    /// version) or its checksum does not match its contents. Never used.
    Checkpoint {
        /// The file.
        path: PathBuf,
        /// What does not match.
        detail: String,
    },
    /// A checkpoint file that could not be written (a failed write: exit
    /// code 1 in the command-line tool).
    CheckpointWrite {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// Inputs that do not fit the model or each other (an input the model
    /// does not take, options for another input); the message names them.
    Input {
        /// What is wrong, naming the inputs.
        detail: String,
    },
    /// Something the input asks for would need more memory than the limit
    /// (checked before it is allocated).
    TooLarge {
        /// What would be allocated, e.g. "the 100000 x 100000 weight matrix".
        what: String,
        /// Bytes it would need (saturated at `u64::MAX`).
        needed: u64,
        /// The limit, in bytes.
        limit: u64,
    },
}

impl Error {
    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    pub(crate) fn new(kind: ErrorKind) -> Error {
        Error {
            kind,
            context: None,
        }
    }

    /// The same error, said to have happened in `what` (e.g. `in --points
    /// a.csv`): its message becomes `what: message`, its kind is kept. A
    /// second context goes before the first.
    pub fn context(self, what: impl Into<String>) -> Error {
        let what = what.into();
        Error {
            kind: self.kind,
            context: Some(match self.context {
                Some(c) => format!("{what}: {c}"),
                None => what,
            }),
        }
    }

    pub(crate) fn input(detail: impl Into<String>) -> Error {
        Error::new(ErrorKind::Input {
            detail: detail.into(),
        })
    }

    pub(crate) fn shape(detail: impl Into<String>) -> Error {
        Error::new(ErrorKind::Shape {
            detail: detail.into(),
        })
    }

    pub(crate) fn parameter(detail: impl Into<String>) -> Error {
        Error::new(ErrorKind::Parameter {
            detail: detail.into(),
        })
    }

    pub(crate) fn tree(detail: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidTree {
            detail: detail.into(),
        })
    }

    /// The same parse error, naming the file it came from.
    pub(crate) fn with_path(self, file: &std::path::Path) -> Error {
        match self.kind {
            ErrorKind::Parse { path: None, detail } => Error::parse(Some(file), detail),
            kind => Error::new(kind),
        }
    }

    pub(crate) fn parse(path: Option<&std::path::Path>, detail: impl Into<String>) -> Error {
        Error::new(ErrorKind::Parse {
            path: path.map(|p| p.to_path_buf()),
            detail: detail.into(),
        })
    }
}

/// A number for a message: plain when that is short (`0.5`, `16`, `900`),
/// else in scientific notation (`1e308`, `2.5e-12`), never a 309-digit integer.
pub(crate) fn number(x: f64) -> String {
    let a = x.abs();
    if a == 0.0 || !a.is_finite() || (1e-4..1e9).contains(&a) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// Formats a byte count as bytes, KiB, MiB, GiB, TiB, PiB or EiB for messages.
pub(crate) fn human_bytes(bytes: u64) -> String {
    human_bytes_f64(bytes as f64)
}

/// [`human_bytes`] of a count that may exceed `u64` (e.g. `16 · 2^n` bytes);
/// from 1024 EiB on (or infinite) it is written as a power of two.
pub(crate) fn human_bytes_f64(bytes: f64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024.0 {
        return format!("{bytes} bytes");
    }
    let mut value = bytes / 1024.0;
    for unit in UNITS {
        if value < 1024.0 {
            return format!("{value:.1} {unit}");
        }
        value /= 1024.0;
    }
    format!("2^{:.0} bytes", bytes.log2())
}

/// Formats a duration in seconds for messages: `0.04 s`, `15 s`, `4.2 min`,
/// `3.1 h`, `2.5 days`, `1.2e3 years`.
pub(crate) fn human_seconds(seconds: f64) -> String {
    const MINUTE: f64 = 60.0;
    const HOUR: f64 = 3600.0;
    const DAY: f64 = 86400.0;
    const YEAR: f64 = 365.25 * DAY;
    let s = seconds.max(0.0);
    if !s.is_finite() {
        "forever".into()
    } else if s < 0.1 {
        format!("{s:.2} s")
    } else if s < 10.0 {
        format!("{s:.1} s")
    } else if s < 100.0 {
        format!("{s:.0} s")
    } else if s < HOUR {
        format!("{:.1} min", s / MINUTE)
    } else if s < DAY {
        format!("{:.1} h", s / HOUR)
    } else if s < YEAR {
        format!("{:.1} days", s / DAY)
    } else {
        format!("{} years", number((s / YEAR * 10.0).round() / 10.0))
    }
}

/// "which exceeds the memory limit of X" or "but only X is available".
fn limit_phrase(limit: u64, capped: bool) -> String {
    if capped {
        format!("which exceeds the memory limit of {}", human_bytes(limit))
    } else {
        format!("but only {} is available", human_bytes(limit))
    }
}

/// The method named when more than [`MAX_POINTS`](crate::MAX_POINTS) points
/// are given to a dense (hierarchical or flat) trellis; its message adds the
/// memory the tables would need.
pub(crate) const DENSE_METHOD: &str =
    "exact inference on the dense trellis (one table entry per subset)";

/// Model tables of the built-in models, bytes per subset: the least a dense
/// trellis holds per subset (the memory estimates of `base::memory` build
/// on it).
pub(crate) const MODEL_BYTES: u64 = 16;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(c) = &self.context {
            write!(f, "{c}: ")?;
        }
        match &self.kind {
            ErrorKind::Input { detail } => write!(f, "{detail}"),
            ErrorKind::Empty => write!(f, "the dataset is empty: at least one point is needed"),
            ErrorKind::TooManyPoints { n, max, method } => {
                write!(
                    f,
                    "{n} points is too many for {method}, which supports at most {max} points"
                )?;
                if *method == DENSE_METHOD {
                    // One table entry per subset: at least the model's tables.
                    let per_subset = MODEL_BYTES;
                    let bytes = if *n < 1000 {
                        human_bytes_f64(per_subset as f64 * 2f64.powi(*n as i32))
                    } else {
                        format!("{per_subset} x 2^{n} bytes")
                    };
                    write!(
                        f,
                        "; its tables over the 2^{n} subsets would need at least {bytes}"
                    )?;
                }
                Ok(())
            }
            ErrorKind::OutOfMemory {
                n,
                needed,
                available,
                capped,
            } => write!(
                f,
                "exact inference over {n} points needs {} for the trellis tables (2^{n} subsets), \
                 {}; reduce the number of points or use an approximate method",
                human_bytes(*needed),
                limit_phrase(*available, *capped)
            ),
            ErrorKind::TooMuchMemory {
                what,
                needed,
                limit,
                capped,
            } => write!(
                f,
                "{what} needs {}, {}",
                human_bytes(*needed),
                limit_phrase(*limit, *capped)
            ),
            ErrorKind::Shape { detail } => write!(f, "wrong shape: {detail}"),
            ErrorKind::NonFinite { row, col } => write!(
                f,
                "non-finite value (NaN or infinity) at row {row}, column {col} (0-based)"
            ),
            ErrorKind::Asymmetric { i, j, wij, wji } => write!(
                f,
                "the matrix is not symmetric: entry [{i}][{j}] = {wij} but [{j}][{i}] = {wji} (0-based)"
            ),
            ErrorKind::NegativeWeight { i, j, w } => write!(
                f,
                "negative weight w[{i}][{j}] = {w}: Dasgupta's cost needs non-negative similarities \
                 (centred similarities are negative for dissimilar pairs; hierarchical correlation \
                 clustering accepts weights of either sign)"
            ),
            ErrorKind::Parameter { detail } => write!(f, "invalid parameter: {detail}"),
            ErrorKind::InvalidTree { detail } => write!(f, "invalid tree: {detail}"),
            ErrorKind::Parse { path, detail } => match path {
                Some(p) => write!(f, "cannot parse {}: {detail}", p.display()),
                None => write!(f, "cannot parse input: {detail}"),
            },
            ErrorKind::Io { path, source } => write!(f, "cannot read {}: {source}", path.display()),
            ErrorKind::BadPotential { detail } => write!(f, "invalid potential: {detail}"),
            ErrorKind::NoTree => write!(
                f,
                "every hierarchy has zero potential (all log-potentials are -infinity), \
                 so there is no distribution over trees"
            ),
            ErrorKind::NoPartition => write!(
                f,
                "every partition has zero energy (all log-energies are -infinity), \
                 so there is no distribution over partitions"
            ),
            ErrorKind::SearchBudget { bytes, explored } => write!(
                f,
                "the exact A* search reached its memory budget of {} after exploring {explored} \
                 trellis vertices",
                human_bytes(*bytes)
            ),
            ErrorKind::TimeLimit { seconds, done } => write!(
                f,
                "the computation reached its time limit of {seconds} s before finishing \
                 ({done} units of work done)"
            ),
            ErrorKind::TimeBudget {
                what,
                needed_seconds,
                limit_seconds,
            } => write!(
                f,
                "{what} would take about {} (estimated), more than the time limit of {}; \
                 use an approximate method (approximate A* or a sparse trellis with beam \
                 search), fewer points, or a longer time limit",
                human_seconds(*needed_seconds),
                human_seconds(*limit_seconds)
            ),
            ErrorKind::Cancelled => write!(f, "the computation was cancelled"),
            ErrorKind::UnrealisableTriplets { a, b, c, points } => write!(
                f,
                "the triplet constraints cannot all hold in one tree: ({{{a}, {b}}}, {c}) \
                 conflicts with the others among the same {points} points"
            ),
            ErrorKind::Checkpoint { path, detail } => write!(
                f,
                "cannot resume from the checkpoint {}: {detail}; use another --checkpoint \
                 directory or delete this one",
                path.display()
            ),
            ErrorKind::CheckpointWrite { path, source } => {
                write!(
                    f,
                    "cannot write the checkpoint {}: {source}",
                    path.display()
                )
            }
            ErrorKind::TooLarge {
                what,
                needed,
                limit,
            } => write!(
                f,
                "{what} would need {}, more than the memory limit of {}",
                human_bytes(*needed),
                human_bytes(*limit)
            ),
        }
    }
}

/// No error has a `source`: the one wrapped error, the operating system's in
/// [`ErrorKind::Io`], is already part of the message, and error reporters that
/// print the chain (such as `anyhow`'s `{:#}`) would print it twice.
impl std::error::Error for Error {}

/// A `Result` whose error is this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
