//! Reading inputs: bytes from a path or standard input (bounded), matrices and
//! named points from CSV and NumPy `.npy` files.
//!
//! - [`read_bytes`] (and [`read_text`], for UTF-8 text such as jets, trees
//!   and triplets) reads a file, or standard input when the path is `-`,
//!   refusing more than a given number of bytes (a regular file's size is
//!   checked before anything is read; a stream such as `/dev/zero` is read
//!   until it passes the limit). Every reader of this module goes through it.
//! - CSV ([`parse_table`]), read by the `csv` crate under RFC 4180: values
//!   separated by commas, fields optionally in double quotes (a quoted field
//!   may hold commas and doubled quotes `""`), LF or CRLF line ends, a UTF-8
//!   byte-order mark skipped. A quote that is never closed, and a quoted
//!   field that runs over a line break, are errors naming the line. Text
//!   without any comma is split on whitespace instead (one row per line).
//!   Blank lines are skipped. There is **no comment syntax** in data files:
//!   a row whose first field starts with `#` is a row like any other. Where a
//!   header is allowed, the first row is a header only when **none** of its
//!   fields is a number (so `1e,2` is a data row with a malformed number, not
//!   a header). Every row, header included, must have the same number of
//!   fields. Columns named in [`ReadOptions::text_columns`] are kept as text.
//! - Names ([`NamesColumn`]): with [`NamesColumn::Auto`], the first column holds
//!   the points' names when its header is `name`, `id` or `label` (any case) or
//!   empty, or when none of its values is a number. A column of names is never
//!   a feature. Names must be non-empty and distinct.
//! - Any other field that is not a finite number is an error naming its line
//!   (1-based, as in the file) and column (1-based, names column included).
//! - `.npy` ([`parse_npy`], format versions 1-3): a 2-D array of `f8` or
//!   `f4` in either byte order (`<`, `>`, and NumPy's native `=` and `|`),
//!   C or Fortran order; a 1-D array reads as one column. Other dtypes
//!   (integers, complex, structured, objects) are refused. A NaN or infinite
//!   value is refused naming its row and column (0-based), as in CSV. The
//!   file is read by the maintained `npyz` crate, which decodes the values
//!   (byte order, `f4` widened to `f8`, the layout), and [`to_npy`] writes
//!   with it. Before `npyz` sees a file, its preamble and header dictionary
//!   are checked here, with `py_literal` (the Python-literal parser `npyz`
//!   itself uses), for three measured reasons (npyz 0.9.1): it multiplies
//!   the shape's dimensions unchecked, so a header claiming
//!   `(4294967296, 4294967296)` panics with "attempt to multiply with
//!   overflow" where overflow checks are on (and wraps to 0 values where
//!   they are off); it allocates the header length the preamble states (up
//!   to 4 GiB) before reading it; and it refuses the type strings `=f8` and
//!   `|f8`, which NumPy reads (such a header is restated with the byte order
//!   spelled out, by `npyz`'s writer, and the data read unchanged). The
//!   checks: the magic string and version; the header length within the
//!   file; at most 16 nested brackets (a `.npy` header has two levels; a
//!   fuzzer's `((((...` would recurse in the parser); `fortran_order` a
//!   Python bool; a shape of whole numbers, one or two of them; a float
//!   dtype; and every size computed from the shape, checked for overflow,
//!   with the data exactly as long as the shape says, all before anything
//!   is allocated (a refusal says how much memory the shape would take).
//!   Measured cost of the crate: a 3000 x 3000 `<f8` array (72 MB, in
//!   memory) reads in 112 ms (about 650 MB/s, release build), where the
//!   former hand-written reader took 49 ms; both are far below the time to
//!   compute anything on such a matrix.
//!
//! The format is chosen by the file extension (`.npy`) or, failing that, by
//! the `.npy` magic string at the start of the bytes (so `.npy` data can come
//! on standard input); anything else is CSV.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::base::set::SetRepr;
use crate::base::weights::Matrix;
use crate::error::{Error, ErrorKind, Result, human_bytes, human_bytes_f64};

pub mod images;

/// The path that stands for standard input.
pub const STDIN: &str = "-";

/// Which column of a CSV file holds the points' names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NamesColumn {
    /// The first column, when its header is `name`, `id` or `label` (any
    /// case) or empty, or when none of its values is a number; otherwise none.
    #[default]
    Auto,
    /// This column (0-based).
    Column(usize),
    /// No column holds names: every column is numeric.
    None,
}

/// How a matrix file is read: see the module docs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// Whether the first CSV row may be a header (it is one only when none of
    /// its fields is a number).
    pub header: bool,
    /// Which CSV column holds the points' names (a `.npy` file has none).
    pub names: NamesColumn,
    /// Refuse inputs of more than this many bytes (`None`:
    /// [`input_limit`]`(None)`, a share of the memory available).
    pub max_bytes: Option<u64>,
    /// Columns kept as text rather than numbers, by their header (any case;
    /// the first match outside the names column): a column of free text or
    /// image paths beside the features. Ignored without a header row, and
    /// when the header has no such column.
    pub text_columns: Vec<String>,
}

impl ReadOptions {
    /// A weight matrix: no header, no names, at most the memory available.
    pub fn weights() -> ReadOptions {
        ReadOptions {
            header: false,
            names: NamesColumn::None,
            max_bytes: None,
            text_columns: Vec::new(),
        }
    }

    /// Points: an optional header row and an optional names column
    /// ([`NamesColumn::Auto`]), at most the memory available.
    pub fn points() -> ReadOptions {
        ReadOptions {
            header: true,
            names: NamesColumn::Auto,
            max_bytes: None,
            text_columns: Vec::new(),
        }
    }

    /// The same options with another names column.
    pub fn with_names(mut self, names: NamesColumn) -> ReadOptions {
        self.names = names;
        self
    }

    /// The same options with columns kept as text (see
    /// [`ReadOptions::text_columns`]), given by any strings (copied).
    pub fn with_text_columns<I, S>(mut self, columns: I) -> ReadOptions
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.text_columns = columns.into_iter().map(|c| c.as_ref().to_owned()).collect();
        self
    }

    /// The same options with another byte limit.
    pub fn with_max_bytes(mut self, max_bytes: u64) -> ReadOptions {
        self.max_bytes = Some(max_bytes);
        self
    }
}

/// The share of a memory limit that an input may take: parsing CSV text can
/// take four times its size (an 8-byte number per 2-byte field such as `0,`).
pub const INPUT_SHARE: u64 = 5;

/// Inputs of this many bytes are always allowed: they cost less memory than
/// the program itself, and a small memory cap meant for a computation (such
/// as a search budget) should not refuse a small file.
pub const MIN_INPUT_BYTES: u64 = 1 << 20;

/// The most bytes of input read into memory under a memory limit of
/// `memory_limit` bytes (`None`: the memory the operating system reports as
/// available, or no limit where it cannot be read): one [`INPUT_SHARE`]-th of
/// it, leaving room to parse the input, and at least [`MIN_INPUT_BYTES`].
pub fn input_limit(memory_limit: Option<u64>) -> u64 {
    memory_limit
        .or_else(crate::available_memory)
        .map_or(u64::MAX, |bytes| (bytes / INPUT_SHARE).max(MIN_INPUT_BYTES))
}

/// A matrix read from a file, one point (or weight row) per row, with the
/// points' names when the file gives them.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// One name per row, in row order, when the file has a names column.
    pub names: Option<Vec<String>>,
    /// The header's field of every numeric column (the features' names),
    /// when the file has a header row.
    pub columns: Option<Vec<String>>,
    /// The columns kept as text ([`ReadOptions::text_columns`]) that the
    /// header names, in the order asked for.
    pub text: Vec<TextColumn>,
    /// The numbers, without the names and text columns.
    pub matrix: Matrix,
}

/// A column of a CSV file kept as text: its header and one value per row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextColumn {
    /// The column's header, as the file spells it.
    pub name: String,
    /// One value per data row, trimmed and unquoted.
    pub values: Vec<String>,
}

/// How `path` is named in messages: `standard input` for `-`, else the path.
pub fn shown(path: &Path) -> PathBuf {
    if is_stdin(path) {
        PathBuf::from("standard input")
    } else {
        path.to_path_buf()
    }
}

fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == STDIN
}

/// Reads all the bytes of `path`, or of standard input when `path` is `-`.
///
/// # Errors
///
/// [`ErrorKind::Io`] when the file cannot be read, and when it holds more than
/// `max_bytes` bytes (a regular file's size is checked before reading; a
/// stream is read until it passes the limit, so `/dev/zero` fails fast with a
/// small limit). The message names the file (`standard input` for `-`) and
/// the limit. Memory for the bytes is reserved fallibly: a failed allocation
/// is an error, not an abort.
pub fn read_bytes(path: &Path, max_bytes: u64) -> Result<Vec<u8>> {
    let name = shown(path);
    let io_error = |source: std::io::Error| {
        Error::new(ErrorKind::Io {
            path: name.clone(),
            source,
        })
    };
    let too_large = |size: Option<u64>| {
        let detail = match size {
            Some(s) => format!(
                "the input holds {}, more than the limit of {} on what is read into memory",
                human_bytes(s),
                human_bytes(max_bytes)
            ),
            None => format!(
                "the input is larger than the limit of {} on what is read into memory",
                human_bytes(max_bytes)
            ),
        };
        io_error(std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            detail,
        ))
    };
    let mut reader: Box<dyn Read> = if is_stdin(path) {
        Box::new(std::io::stdin().lock())
    } else {
        let file = std::fs::File::open(path).map_err(io_error)?;
        let meta = file.metadata().map_err(io_error)?;
        if meta.is_file() && meta.len() > max_bytes {
            return Err(too_large(Some(meta.len())));
        }
        Box::new(file)
    };
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        let k = match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(k) => k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_error(e)),
        };
        if bytes.len() as u64 + k as u64 > max_bytes {
            return Err(too_large(None));
        }
        bytes.try_reserve(k).map_err(|_| {
            io_error(std::io::Error::new(
                std::io::ErrorKind::OutOfMemory,
                format!(
                    "out of memory after reading {} of it",
                    human_bytes(bytes.len() as u64)
                ),
            ))
        })?;
        bytes.extend_from_slice(&chunk[..k]);
    }
    Ok(bytes)
}

/// Reads a UTF-8 text file, or standard input when `path` is `-`, of at most
/// `max_bytes` bytes (see [`read_bytes`]). A byte-order mark is kept: the
/// parsers skip it.
///
/// # Errors
///
/// Those of [`read_bytes`], and [`ErrorKind::Parse`] when the bytes are not
/// UTF-8.
pub fn read_text(path: &Path, max_bytes: u64) -> Result<String> {
    let bytes = read_bytes(path, max_bytes)?;
    String::from_utf8(bytes).map_err(|e| {
        Error::parse(
            Some(&shown(path)),
            format!("the file is not UTF-8 text ({e})"),
        )
    })
}

/// Reads a matrix, and the points' names if any, from a CSV or `.npy` file or
/// from standard input (`-`); see the module docs.
///
/// # Errors
///
/// [`ErrorKind::Io`] (unreadable, or more than `options.max_bytes` bytes) and
/// [`ErrorKind::Parse`] (malformed, naming the file, line and column).
pub fn read_table(path: &Path, options: &ReadOptions) -> Result<Table> {
    let max_bytes = options.max_bytes.unwrap_or_else(|| input_limit(None));
    let bytes = read_bytes(path, max_bytes)?;
    let name = shown(path);
    let is_npy = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"))
        || bytes.starts_with(NPY_MAGIC);
    if is_npy {
        if let NamesColumn::Column(k) = options.names {
            return Err(Error::parse(
                Some(&name),
                format!(
                    "a .npy file holds numbers only, so it has no names column (column {k} was asked for)"
                ),
            ));
        }
        let matrix = parse_npy(&bytes).map_err(|e| e.with_path(&name))?;
        return Ok(Table {
            names: None,
            columns: None,
            text: Vec::new(),
            matrix,
        });
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| Error::parse(Some(&name), "the file is not UTF-8 text (CSV expected)"))?;
    parse_table(&text, options).map_err(|e| e.with_path(&name))
}

/// Reads a matrix from a CSV or `.npy` file (or standard input, `-`), at most
/// the memory available: without a header row (a weight matrix) or, with
/// `allow_header`, as points (an optional header, and a names column found
/// as [`NamesColumn::Auto`] says, whose names are dropped; use [`read_table`]
/// to keep them).
pub fn read_matrix(path: &Path, allow_header: bool) -> Result<Matrix> {
    let options = if allow_header {
        ReadOptions::points()
    } else {
        ReadOptions::weights()
    };
    Ok(read_table(path, &options)?.matrix)
}

/// Parses a family of clusters over `n` points, as sets of type `S` (a
/// `u128` [`Set`](crate::Set) up to 128 points, a [`WideSet`](crate::WideSet)
/// for any number): one cluster per line, 0-based point indices separated by
/// whitespace or commas (blank lines and lines starting with `#` are
/// skipped). Errors name the line.
pub fn parse_clusters<S: SetRepr>(text: &str, n: usize) -> Result<Vec<S>> {
    if n > S::MAX_POINTS {
        return Err(Error::parse(
            None,
            format!(
                "a family of clusters of this set type holds at most {} points, not {n}",
                S::MAX_POINTS
            ),
        ));
    }
    let mut out = Vec::new();
    let mut points = Vec::new();
    for (k, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        points.clear();
        for field in line
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|f| !f.is_empty())
        {
            let at = |d: String| Error::parse(None, format!("line {}: {d}", k + 1));
            let i: usize = field
                .parse()
                .map_err(|_| at(format!("{field:?} is not a point index")))?;
            if i >= n {
                return Err(at(format!("point {i} is out of range (n = {n})")));
            }
            points.push(i);
        }
        out.push(S::from_points(points.iter().copied(), n));
    }
    Ok(out)
}

/// Parses CSV text into a matrix: with `allow_header` as points (see
/// [`read_matrix`]; names are dropped), otherwise as a weight matrix.
pub fn parse_csv(text: &str, allow_header: bool) -> Result<Matrix> {
    let options = if allow_header {
        ReadOptions::points()
    } else {
        ReadOptions::weights()
    };
    Ok(parse_table(text, &options)?.matrix)
}

/// Parses CSV text into a matrix and the points' names (see the module docs;
/// `options.max_bytes` does not apply).
///
/// # Errors
///
/// [`ErrorKind::Parse`], naming the line and column: a field that is not a
/// finite number outside the names column, an empty or repeated name, rows
/// (header included) of different lengths, no data rows.
pub fn parse_table(text: &str, options: &ReadOptions) -> Result<Table> {
    parse_csv_table(text, options).map_err(|detail| Error::parse(None, detail))
}

/// Calls `row(line, fields)` for every row of delimited text, in order:
/// `line` is the 1-based line where the row starts, `fields` its fields,
/// trimmed and unquoted. Text with a comma anywhere is CSV, read by the `csv`
/// crate under RFC 4180 (quoted fields may hold commas, doubled quotes and
/// line breaks; CRLF and LF line ends); text without one is split on
/// whitespace. A leading byte-order mark and blank lines are skipped; there
/// is no comment syntax: a row that starts with `#` is data.
///
/// # Errors
///
/// A quote that is never closed (naming the line where it opens), text that
/// is not UTF-8, and the first error that `row` returns.
pub(crate) fn for_each_row(
    text: &str,
    mut row: impl FnMut(usize, &[&str]) -> std::result::Result<(), String>,
) -> std::result::Result<(), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if !text.contains(',') {
        let mut fields: Vec<&str> = Vec::new();
        for (k, line) in text.lines().enumerate() {
            fields.clear();
            fields.extend(line.split_whitespace().map(|f| f.trim_matches('"')));
            if !fields.is_empty() {
                row(k + 1, &fields)?;
            }
        }
        return Ok(());
    }
    check_quotes(text)?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::None)
        .from_reader(text.as_bytes());
    let mut record = csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => return Ok(()),
            Ok(true) => {}
            Err(e) => return Err(csv_error(&e)),
        }
        let line = record.position().map_or(0, |p| p.line() as usize);
        // A line of blanks is one empty field: skip it like an empty line.
        if record.len() == 1 && record[0].trim().is_empty() {
            continue;
        }
        if let Some(j) = record.iter().position(|f| f.contains(['\n', '\r'])) {
            return Err(format!(
                "line {line}, column {}: a quoted field runs over more than one line \
                 (a line break inside quotes; is a closing quote missing?)",
                j + 1
            ));
        }
        let unquoted: Vec<std::borrow::Cow<'_, str>> = record.iter().map(field_value).collect();
        let fields: Vec<&str> = unquoted.iter().map(|f| f.as_ref()).collect();
        row(line, &fields)?;
    }
}

/// A field as the `csv` crate read it (untrimmed), trimmed; when blanks came
/// before its opening quote (`a, "b"`) the `csv` crate left it quoted, so
/// its quotes are removed here (`""` read as `"`, the value trimmed like
/// every other). A field the `csv`
/// crate unquoted (its first byte a quote) is never unquoted again:
/// `"""big"""` is `"big"`.
fn field_value(raw: &str) -> std::borrow::Cow<'_, str> {
    let field = raw.trim();
    let blanks_first = field.len() < raw.len() && raw.starts_with(|c: char| c.is_whitespace());
    match field.strip_prefix('"').and_then(|f| f.strip_suffix('"')) {
        Some(inner) if blanks_first && field.len() >= 2 => {
            inner.replace("\"\"", "\"").trim().to_string().into()
        }
        _ => field.into(),
    }
}

/// The message of an error of the `csv` crate (on `&str` input: invalid
/// UTF-8 only), with its line.
fn csv_error(e: &csv::Error) -> String {
    match e.position() {
        Some(p) => format!("line {}: {e}", p.line()),
        None => e.to_string(),
    }
}

/// Checks that every quoted field of CSV text is closed: the `csv` crate reads
/// an unclosed quote to the end of the text without complaint. A field is
/// quoted when its first character is `"`; inside it, `""` is a quote and a
/// single `"` closes it (RFC 4180). Fields start the text and follow a comma
/// or a line break, and a quote opens a field only as its first byte (as the
/// `csv` crate reads it).
fn check_quotes(text: &str) -> std::result::Result<(), String> {
    let bytes = text.as_bytes();
    let (mut line, mut opened) = (1usize, 0usize);
    let mut quoted = false;
    let mut field_start = true;
    let mut k = 0;
    while k < bytes.len() {
        let b = bytes[k];
        if quoted {
            if b == b'"' {
                if bytes.get(k + 1) == Some(&b'"') {
                    k += 1;
                } else {
                    quoted = false;
                }
            }
        } else if b == b'"' && field_start {
            quoted = true;
            opened = line;
        } else {
            field_start = b == b',' || b == b'\n' || b == b'\r';
        }
        if b == b'\n' {
            line += 1;
        }
        k += 1;
    }
    if quoted {
        return Err(format!(
            "line {opened}: a quoted field opens here and is never closed (an unterminated quote)"
        ));
    }
    Ok(())
}

/// Whether a (trimmed, unquoted) field reads as a number, finite or not.
fn is_number(field: &str) -> bool {
    field.parse::<f64>().is_ok()
}

/// Header names that mark a first column of names.
fn is_names_header(field: &str) -> bool {
    field.is_empty() || ["name", "id", "label"].contains(&field.to_ascii_lowercase().as_str())
}

/// What the first pass over a table learns: the first row, its line, the
/// number of data rows and how many of them hold a number in column 0.
struct Shape {
    first_line: usize,
    first: Vec<String>,
    header: bool,
    rows: usize,
    first_column_numbers: usize,
}

/// The first pass: row lengths (every row as long as the first), the number
/// of data rows, whether column 0 holds numbers.
fn table_shape(text: &str, allow_header: bool) -> std::result::Result<Shape, String> {
    let mut shape: Option<Shape> = None;
    for_each_row(text, |line, fields| {
        let Some(s) = shape.as_mut() else {
            let header = allow_header && !fields.iter().any(|f| is_number(f));
            shape = Some(Shape {
                first_line: line,
                first: fields.iter().map(|f| f.to_string()).collect(),
                header,
                rows: usize::from(!header),
                first_column_numbers: usize::from(!header && is_number(fields[0])),
            });
            return Ok(());
        };
        if fields.len() != s.first.len() {
            let what = if s.header { "the header" } else { "line" };
            let at = if s.header {
                String::new()
            } else {
                format!(" {}", s.first_line)
            };
            return Err(format!(
                "line {line}: {} fields but {what}{at} has {}",
                fields.len(),
                s.first.len()
            ));
        }
        s.rows += 1;
        s.first_column_numbers += usize::from(is_number(fields[0]));
        Ok(())
    })?;
    let shape = shape.ok_or("the file holds no data rows")?;
    if shape.rows == 0 {
        return Err(if shape.header {
            "the file holds no data rows (only a header)".into()
        } else {
            "the file holds no data rows".into()
        });
    }
    Ok(shape)
}

fn parse_csv_table(text: &str, options: &ReadOptions) -> std::result::Result<Table, String> {
    let (allow_header, names) = (options.header, options.names);
    let shape = table_shape(text, allow_header)?;
    let (first, header, width, n) = (&shape.first, shape.header, shape.first.len(), shape.rows);
    let names_column = match names {
        NamesColumn::None => None,
        NamesColumn::Column(k) if k < width => Some(k),
        NamesColumn::Column(k) => {
            return Err(format!(
                "there is no column {k} (0-based) to hold the names: the rows have {width} fields"
            ));
        }
        NamesColumn::Auto => {
            let named = header && is_names_header(&first[0]);
            (named || shape.first_column_numbers == 0).then_some(0)
        }
    };
    // Columns kept as text (by header name), never features.
    let mut text_columns: Vec<usize> = Vec::new();
    for want in &options.text_columns {
        let found = header
            .then(|| {
                first
                    .iter()
                    .enumerate()
                    .position(|(j, h)| Some(j) != names_column && h.eq_ignore_ascii_case(want))
            })
            .flatten();
        if let Some(j) = found {
            text_columns.push(j);
        }
    }
    let is_text = |j: usize| Some(j) == names_column || text_columns.contains(&j);
    let cols = (0..width).filter(|&j| !is_text(j)).count();
    if cols == 0 {
        return Err(if names_column.is_some() && width == 1 {
            "the only column holds names: there are no numbers".into()
        } else {
            "no column holds numbers".into()
        });
    }
    // Hints for the first non-number: a first row taken for data, a first
    // column taken for numbers.
    let no_header = if !allow_header && !first.iter().any(|f| is_number(f)) {
        " (this input takes no header row)"
    } else {
        ""
    };
    let not_names = if names == NamesColumn::Auto && names_column.is_none() {
        " (a first column holds names only when its header is name, id or label, \
         or when none of its values is a number)"
    } else {
        ""
    };
    // Second pass: the values, into memory reserved up front.
    let count = n
        .checked_mul(cols)
        .ok_or_else(|| format!("{n} rows of {cols} values do not fit in memory"))?;
    let mut data = Vec::new();
    data.try_reserve_exact(count)
        .map_err(|_| format!("not enough memory for {n} rows of {cols} values"))?;
    let mut out_names = Vec::new();
    let mut texts: Vec<Vec<String>> = vec![Vec::new(); text_columns.len()];
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut skip_header = header;
    for_each_row(text, |line, fields| {
        if std::mem::take(&mut skip_header) {
            return Ok(());
        }
        for (j, &field) in fields.iter().enumerate() {
            let at = format!("line {line}, column {}", j + 1);
            if Some(j) == names_column {
                if field.is_empty() {
                    return Err(format!("{at}: the name is empty"));
                }
                if let Some(prev) = seen.insert(field.to_string(), line) {
                    return Err(format!(
                        "line {line}: the name {field:?} was already used on line {prev}"
                    ));
                }
                out_names.push(field.to_string());
                continue;
            }
            if let Some(t) = text_columns.iter().position(|&c| c == j) {
                texts[t].push(field.to_string());
                continue;
            }
            let hint = if line == shape.first_line && !no_header.is_empty() {
                no_header
            } else if j == 0 {
                not_names
            } else {
                ""
            };
            match field.parse::<f64>() {
                Ok(v) if v.is_finite() => data.push(v),
                Ok(_) => {
                    return Err(format!(
                        "{at}: {field:?} is not finite (NaN and infinity are non-finite \
                         values, which are refused)"
                    ));
                }
                Err(_) if field.is_empty() => {
                    return Err(format!(
                        "{at}: the field is empty where a number is expected"
                    ));
                }
                Err(_) => return Err(format!("{at}: {field:?} is not a number{hint}")),
            }
        }
        Ok(())
    })?;
    let columns = header.then(|| {
        (0..width)
            .filter(|&j| !is_text(j))
            .map(|j| first[j].clone())
            .collect()
    });
    let text = text_columns
        .iter()
        .zip(texts)
        .map(|(&j, values)| TextColumn {
            name: first[j].clone(),
            values,
        })
        .collect();
    Ok(Table {
        names: names_column.map(|_| out_names),
        columns,
        text,
        matrix: Matrix {
            rows: n,
            cols,
            data,
        },
    })
}

/// The magic string that opens every `.npy` file.
const NPY_MAGIC: &[u8] = b"\x93NUMPY";

/// Header dictionaries nested deeper than this are refused before they are
/// parsed (a `.npy` header is a flat dict with one tuple).
const NPY_MAX_NESTING: usize = 16;

/// Parses the bytes of a `.npy` file (see the module docs).
///
/// # Errors
///
/// [`ErrorKind::Parse`]: no magic string, an unsupported version or dtype, a
/// malformed header (`fortran_order` other than `True` or `False`, a shape
/// that is not 1-D or 2-D or whose size overflows), data shorter or longer
/// than the shape says, a NaN or infinite value (naming its row and column).
pub fn parse_npy(bytes: &[u8]) -> Result<Matrix> {
    parse_npy_bytes(bytes).map_err(|detail| Error::parse(None, detail))
}

/// What the checks of [`npy_header`] found: the array's size and layout.
struct NpyLayout {
    rows: usize,
    cols: usize,
    /// Bytes per value: 8 (`f8`) or 4 (`f4`).
    width: usize,
    /// The header as `npyz` should read it: the file's own, or a canonical
    /// one where the file's type string is one `npyz` refuses.
    header: Option<Vec<u8>>,
    /// Where the data starts in the file.
    data_start: usize,
}

/// Checks the preamble and the header dictionary of a `.npy` file, before
/// `npyz` reads anything (see the module docs for why).
fn npy_header(bytes: &[u8]) -> std::result::Result<NpyLayout, String> {
    use py_literal::Value;
    if bytes.len() < 10 || !bytes.starts_with(NPY_MAGIC) {
        return Err("not a .npy file (missing the \\x93NUMPY magic string)".into());
    }
    let (len_bytes, start) = match bytes[6] {
        1 => (2, 10usize),
        2 | 3 => (4, 12usize),
        v => return Err(format!("unsupported .npy format version {v}")),
    };
    let len_field = bytes.get(8..8 + len_bytes).ok_or("truncated .npy header")?;
    let header_len = len_field
        .iter()
        .rev()
        .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
    let data_start = start
        .checked_add(header_len)
        .ok_or("the .npy header length is too large")?;
    let text = bytes
        .get(start..data_start)
        .ok_or("truncated .npy header")?;
    let text = std::str::from_utf8(text).map_err(|_| "the .npy header is not text")?;
    let nesting = text.chars().filter(|c| "([{".contains(*c)).count();
    if nesting > NPY_MAX_NESTING {
        return Err(format!(
            "the .npy header nests {nesting} brackets: it is not a NumPy array header"
        ));
    }
    let dict: Value = text
        .trim_end()
        .parse()
        .map_err(|e| format!("the .npy header is not a Python literal ({e})"))?;
    let Value::Dict(entries) = &dict else {
        return Err(format!("the .npy header is {dict}, not a dict"));
    };
    let get = |key: &str| {
        entries
            .iter()
            .find(|(k, _)| k.as_string().is_some_and(|k| k == key))
            .map(|(_, v)| v)
            .ok_or_else(|| format!("the .npy header has no '{key}'"))
    };
    let fortran = match get("fortran_order")? {
        Value::Boolean(b) => *b,
        other => {
            return Err(format!(
                "the .npy header's 'fortran_order' is {other}, not True or False"
            ));
        }
    };
    let shape_value = get("shape")?;
    let shape_text = shape_value.to_string();
    let dims = match shape_value {
        Value::Tuple(dims) | Value::List(dims) => dims,
        _ => {
            return Err(format!(
                "the .npy header's shape {shape_text} is not a tuple"
            ));
        }
    };
    let dims: Vec<usize> = dims
        .iter()
        .map(|d| match d {
            Value::Integer(i) => usize::try_from(i).ok(),
            _ => None,
        })
        .collect::<Option<_>>()
        .ok_or_else(|| {
            format!(
                "the array's shape {shape_text} is too large or not a tuple of whole numbers \
                 >= 0"
            )
        })?;
    let (rows, cols) = match dims.as_slice() {
        [r, c] => (*r, *c),
        [r] => (*r, 1),
        _ => {
            return Err(format!(
                "expected a 2-D array, found shape {shape_text} ({} dimensions)",
                dims.len()
            ));
        }
    };
    let descr = match get("descr")? {
        Value::String(d) => d.as_str(),
        other => {
            return Err(format!(
                "unsupported dtype {other}: only float64 ('<f8') and float32 ('<f4') arrays \
                 are read"
            ));
        }
    };
    // npyz refuses the native ('=') and "not applicable" ('|') byte orders,
    // which NumPy reads: such a header is given to npyz with the byte order
    // spelled out.
    let native = if cfg!(target_endian = "big") {
        ">"
    } else {
        "<"
    };
    let (width, canonical) = match descr {
        "<f8" | ">f8" => (8, None),
        "<f4" | ">f4" => (4, None),
        "=f8" | "|f8" => (8, Some(format!("{native}f8"))),
        "=f4" | "|f4" => (4, Some(format!("{native}f4"))),
        other => {
            return Err(format!(
                "unsupported dtype {other:?}: only float64 ('<f8') and float32 ('<f4') arrays \
                 are read"
            ));
        }
    };
    // Sizes, checked before anything is allocated.
    let data = bytes.len() - data_start;
    let count = rows.checked_mul(cols);
    let Some(needed) = count.and_then(|c| c.checked_mul(width)) else {
        return Err(format!(
            "the array's shape {shape_text} is too large: it would need {} of memory (its size \
             overflows), and the file holds only {data} bytes of data",
            human_bytes_f64(rows as f64 * cols as f64 * width as f64),
        ));
    };
    if data < needed {
        return Err(format!(
            "the array data is truncated: shape {shape_text} needs {needed} bytes ({}), found \
             {data}",
            human_bytes(needed as u64)
        ));
    }
    if data > needed {
        return Err(format!(
            "{} bytes follow the array data (shape {shape_text} needs {needed} bytes)",
            data - needed
        ));
    }
    let header = match canonical {
        None => None,
        Some(descr) => {
            let dtype = npyz::DType::Plain(descr.parse().map_err(|e| format!("{e}"))?);
            let shape: Vec<u64> = dims.iter().map(|&d| d as u64).collect();
            let order = if fortran {
                npyz::Order::Fortran
            } else {
                npyz::Order::C
            };
            use npyz::WriterBuilder;
            let out = npyz::WriteOptions::new_header_only()
                .dtype(dtype)
                .shape(&shape)
                .order(order)
                .writer(Vec::new())
                .write_header_only()
                .map_err(|e| format!("cannot restate the .npy header: {e}"))?;
            Some(out)
        }
    };
    Ok(NpyLayout {
        rows,
        cols,
        width,
        header,
        data_start,
    })
}

fn parse_npy_bytes(bytes: &[u8]) -> std::result::Result<Matrix, String> {
    let layout = npy_header(bytes)?;
    let (rows, cols) = (layout.rows, layout.cols);
    let count = rows * cols;
    let data = &bytes[layout.data_start..];
    let header = match &layout.header {
        None => &bytes[..layout.data_start],
        Some(header) => header.as_slice(),
    };
    let file = npyz::NpyFile::new(std::io::Read::chain(header, data));
    let file = file.map_err(|e| format!("malformed .npy header ({e})"))?;
    let fortran = file.order() == npyz::Order::Fortran;
    if file.len() != count as u64 {
        return Err(format!(
            "the .npy header holds {} values, not {rows} x {cols}",
            file.len()
        ));
    }
    let mut out: Vec<f64> = Vec::new();
    out.try_reserve_exact(count).map_err(|_| {
        format!(
            "not enough memory for the {rows} x {cols} array ({})",
            human_bytes((count as u64).saturating_mul(8))
        )
    })?;
    out.resize(count, 0.0);
    let values: Box<dyn Iterator<Item = std::io::Result<f64>>> = if layout.width == 8 {
        Box::new(file.data::<f64>().map_err(|e| format!("{e}"))?)
    } else {
        Box::new(
            file.data::<f32>()
                .map_err(|e| format!("{e}"))?
                .map(|v| v.map(f64::from)),
        )
    };
    // Value k of the file is entry (k / cols, k % cols) in C order, and
    // (k % rows, k / rows) in Fortran order.
    for (k, v) in values.enumerate() {
        let v = v.map_err(|e| format!("the array data cannot be read ({e})"))?;
        let (i, j) = if fortran {
            (k % rows, k / rows)
        } else {
            (k / cols, k % cols)
        };
        if !v.is_finite() {
            return Err(format!(
                "non-finite value (NaN or infinity) at row {i}, column {j} (0-based): {v} is \
                 refused"
            ));
        }
        out[i * cols + j] = v;
    }
    Ok(Matrix {
        rows,
        cols,
        data: out,
    })
}

/// Encodes a matrix as `.npy` (little-endian `f8`, C order), with `npyz`'s
/// writer.
pub fn to_npy(m: &Matrix) -> Vec<u8> {
    use npyz::WriterBuilder;
    let mut out = Vec::new();
    let mut writer = npyz::WriteOptions::new()
        .default_dtype()
        .shape(&[m.rows as u64, m.cols as u64])
        .writer(&mut out)
        .begin_nd()
        .expect("writing to memory does not fail");
    writer
        .extend(m.data.iter().copied())
        .expect("writing to memory does not fail");
    // A matrix whose data does not match its shape writes a file that says
    // so when read back (npyz's complaint at the end is not needed).
    let _ = writer.finish();
    out
}

/// Parses rows of `width` points, one per line, each a point name (with
/// `names`, the points' labels: pass `"0"`, `"1"`, ... for points without
/// names): fields separated by whitespace or commas; `#` starts a comment; a
/// leading UTF-8 byte-order mark is skipped; the points of a row must
/// differ. Errors name the line. The reader of triplet files
/// ([`crate::ddt::parse_triplets`], `width` 3) and of must-link and
/// cannot-link files ([`parse_pairs`]).
pub fn parse_point_rows(text: &str, names: &[String], width: usize) -> Result<Vec<Vec<usize>>> {
    let text = crate::base::tree::strip_bom(text);
    let index: HashMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, s)| (s.as_str(), i))
        .collect();
    let (count, example) = match width {
        2 => ("two", "`a b`"),
        3 => ("three", "`a b c`"),
        _ => ("", ""),
    };
    let mut out = Vec::new();
    for (lineno, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = if line.contains(',') {
            line.split(',').map(str::trim).collect()
        } else {
            line.split_whitespace().collect()
        };
        let at = |detail: String| Error::parse(None, format!("line {}: {detail}", lineno + 1));
        if fields.len() != width {
            return Err(at(format!(
                "expected {count} point names {example}, found {} fields",
                fields.len()
            )));
        }
        let mut row = Vec::with_capacity(width);
        for f in &fields {
            let i = *index
                .get(f)
                .ok_or_else(|| at(format!("{f:?} is not a point name")))?;
            if row.contains(&i) {
                return Err(at(format!(
                    "the {count} points must differ ({f:?} repeats)"
                )));
            }
            row.push(i);
        }
        out.push(row);
    }
    Ok(out)
}

/// Parses pairs of points, one `a b` (or `a,b`) per line, by name (see
/// [`parse_point_rows`]): must-link and cannot-link files.
///
/// # Errors
///
/// A line without exactly two fields, an unknown name or a point paired
/// with itself ([`ErrorKind::Parse`], naming the line).
pub fn parse_pairs(text: &str, names: &[String]) -> Result<Vec<(usize, usize)>> {
    Ok(parse_point_rows(text, names, 2)?
        .into_iter()
        .map(|r| (r[0], r[1]))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_with_and_without_header() {
        let m = parse_csv("a,b\n1,2\n3, 4\n\n", true).unwrap();
        assert_eq!(
            (m.rows, m.cols, m.data.clone()),
            (2, 2, vec![1.0, 2.0, 3.0, 4.0])
        );
        assert!(
            parse_csv("a,b\n1,2\n", false)
                .unwrap_err()
                .to_string()
                .contains("not a number")
        );
        assert!(
            parse_csv("1,2\n3\n", false)
                .unwrap_err()
                .to_string()
                .contains("line 2")
        );
        // A first row with a number is data, not a header (issue 11).
        assert!(
            parse_csv("1,x\n3,4\n", true)
                .unwrap_err()
                .to_string()
                .contains("line 1, column 2")
        );
        assert!(
            parse_csv("1,2\n3,x\n", true)
                .unwrap_err()
                .to_string()
                .contains("column 2")
        );
        assert!(parse_csv("", false).is_err());
        let m = parse_csv("1 2\n3 4\n", false).unwrap();
        assert_eq!(m.data, vec![1.0, 2.0, 3.0, 4.0]);
    }

    #[test]
    fn npy_round_trip_and_fortran_order() {
        let m = Matrix {
            rows: 2,
            cols: 3,
            data: vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
        };
        let bytes = to_npy(&m);
        assert_eq!(bytes.len() % 16, 0);
        assert_eq!(parse_npy(&bytes).unwrap(), m);
        // The same array in Fortran order and float32.
        let dict = "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }";
        let mut f = b"\x93NUMPY\x01\x00".to_vec();
        f.extend_from_slice(&(dict.len() as u16 + 1).to_le_bytes());
        f.extend_from_slice(dict.as_bytes());
        f.push(b'\n');
        for v in [1.0f32, 4.0, 2.0, 5.0, 3.0, 6.0] {
            f.extend_from_slice(&v.to_le_bytes());
        }
        assert_eq!(parse_npy(&f).unwrap(), m);
    }

    #[test]
    fn npy_errors() {
        assert!(
            parse_npy(b"hello")
                .unwrap_err()
                .to_string()
                .contains("magic")
        );
        let m = Matrix {
            rows: 2,
            cols: 2,
            data: vec![1.0; 4],
        };
        let bytes = to_npy(&m);
        assert!(
            parse_npy(&bytes[..bytes.len() - 3])
                .unwrap_err()
                .to_string()
                .contains("truncated")
        );
        let mut bad = bytes.clone();
        let at = bad.windows(3).position(|w| w == b"<f8").unwrap();
        bad[at + 1] = b'i';
        assert!(
            parse_npy(&bad)
                .unwrap_err()
                .to_string()
                .contains("unsupported dtype")
        );
    }
}
