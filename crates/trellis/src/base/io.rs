//! Reading matrices from CSV and NumPy `.npy` files.
//!
//! - CSV: one row per line, values separated by commas (or, when a line has no
//!   comma, by whitespace). Blank lines and lines starting with `#` are
//!   skipped. With `allow_header`, a first row that is not all numbers is a
//!   header and is skipped.
//! - `.npy` (format versions 1-3): a 2-D array of little- or big-endian `f8`
//!   or `f4`, C or Fortran order. A 1-D array reads as one column.
//!
//! The format is chosen by the file extension (`.npy`, anything else is CSV).

use std::path::Path;

use crate::base::weights::Matrix;
use crate::error::{Error, ErrorKind, Result};

/// Reads a matrix from a CSV or `.npy` file (see the module docs).
pub fn read_matrix(path: &Path, allow_header: bool) -> Result<Matrix> {
    let bytes = std::fs::read(path).map_err(|source| {
        Error::new(ErrorKind::Io {
            path: path.to_path_buf(),
            source,
        })
    })?;
    let is_npy = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"));
    let with_path = |e: Error| e.with_path(path);
    if is_npy {
        parse_npy(&bytes).map_err(with_path)
    } else {
        let text = String::from_utf8(bytes)
            .map_err(|_| Error::parse(Some(path), "the file is not UTF-8 text (CSV expected)"))?;
        parse_csv(&text, allow_header).map_err(with_path)
    }
}

/// Parses a family of clusters over `n` points: one cluster per line, 0-based
/// point indices separated by whitespace or commas (blank lines and lines
/// starting with `#` are skipped). Errors name the line.
pub fn parse_clusters(text: &str, n: usize) -> Result<Vec<crate::Set>> {
    if n > crate::MAX_SET_POINTS {
        return Err(Error::parse(
            None,
            format!(
                "a family of clusters holds at most {} points, not {n}",
                crate::MAX_SET_POINTS
            ),
        ));
    }
    let mut out = Vec::new();
    for (k, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut set: crate::Set = 0;
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
            set |= 1u128 << i;
        }
        out.push(set);
    }
    Ok(out)
}

/// Parses CSV text into a matrix (see the module docs).
pub fn parse_csv(text: &str, allow_header: bool) -> Result<Matrix> {
    parse_csv_text(text, allow_header).map_err(|detail| Error::parse(None, detail))
}

fn parse_csv_text(text: &str, allow_header: bool) -> std::result::Result<Matrix, String> {
    let mut rows: Vec<Vec<f64>> = Vec::new();
    let mut width = None;
    let mut first = true;
    for (lineno, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = if line.contains(',') {
            line.split(',').map(str::trim).collect()
        } else {
            line.split_whitespace().collect()
        };
        let parsed: Vec<Option<f64>> = fields.iter().map(|f| parse_number(f)).collect();
        if first {
            first = false;
            if parsed.iter().any(Option::is_none) {
                if allow_header {
                    continue;
                }
                return Err(format!(
                    "line {}: {:?} is not a number (this input takes no header row)",
                    lineno + 1,
                    fields[parsed.iter().position(Option::is_none).unwrap()]
                ));
            }
        }
        let mut row = Vec::with_capacity(fields.len());
        for (col, (f, v)) in fields.iter().zip(&parsed).enumerate() {
            match v {
                Some(v) => row.push(*v),
                None => {
                    return Err(format!(
                        "line {}, column {}: {:?} is not a number",
                        lineno + 1,
                        col + 1,
                        f
                    ));
                }
            }
        }
        match width {
            None => width = Some(row.len()),
            Some(w) if w != row.len() => {
                return Err(format!(
                    "line {} has {} values but the first row has {w}",
                    lineno + 1,
                    row.len()
                ));
            }
            _ => {}
        }
        rows.push(row);
    }
    if rows.is_empty() {
        return Err("the file holds no data rows".into());
    }
    Matrix::from_rows(rows).map_err(|e| e.to_string())
}

/// A float, including `nan`/`inf` spellings (rejected later with a clear message).
fn parse_number(field: &str) -> Option<f64> {
    let f = field.trim().trim_matches('"');
    if f.is_empty() {
        return None;
    }
    f.parse::<f64>().ok()
}

/// Parses the bytes of a `.npy` file.
pub fn parse_npy(bytes: &[u8]) -> Result<Matrix> {
    parse_npy_bytes(bytes).map_err(|detail| Error::parse(None, detail))
}

fn parse_npy_bytes(bytes: &[u8]) -> std::result::Result<Matrix, String> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err("not a .npy file (missing the \\x93NUMPY magic string)".into());
    }
    let major = bytes[6];
    let (header_len, start) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err("truncated .npy header".into());
            }
            (
                u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
                12,
            )
        }
        v => return Err(format!("unsupported .npy format version {v}")),
    };
    let header = bytes
        .get(start..start + header_len)
        .ok_or("truncated .npy header")?;
    let header = std::str::from_utf8(header).map_err(|_| "the .npy header is not text")?;
    let descr = dict_value(header, "descr").ok_or("the .npy header has no 'descr'")?;
    let descr = descr.trim_matches(|c| c == '\'' || c == '"');
    let fortran = dict_value(header, "fortran_order")
        .ok_or("the .npy header has no 'fortran_order'")?
        .starts_with("True");
    let shape_text = dict_value(header, "shape").ok_or("the .npy header has no 'shape'")?;
    let shape: Vec<usize> = shape_text
        .trim_matches(|c| c == '(' || c == ')')
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<usize>()
                .map_err(|_| format!("bad shape {shape_text}"))
        })
        .collect::<std::result::Result<_, _>>()?;
    let (rows, cols) = match shape.as_slice() {
        [r, c] => (*r, *c),
        [r] => (*r, 1),
        _ => {
            return Err(format!(
                "expected a 2-D array, found shape {shape_text} ({} dimensions)",
                shape.len()
            ));
        }
    };
    let (width, big, float32) = match descr {
        "<f8" | "=f8" | "|f8" => (8, false, false),
        ">f8" => (8, true, false),
        "<f4" | "=f4" | "|f4" => (4, false, true),
        ">f4" => (4, true, true),
        other => {
            return Err(format!(
                "unsupported dtype {other:?}: only float64 ('<f8') and float32 ('<f4') arrays are read"
            ));
        }
    };
    let data = &bytes[start + header_len..];
    let count = rows * cols;
    if data.len() < count * width {
        return Err(format!(
            "the array data is truncated: shape {shape_text} needs {} bytes, found {}",
            count * width,
            data.len()
        ));
    }
    let values: Vec<f64> = data[..count * width]
        .chunks_exact(width)
        .map(|c| match (float32, big) {
            (false, false) => f64::from_le_bytes(c.try_into().unwrap()),
            (false, true) => f64::from_be_bytes(c.try_into().unwrap()),
            (true, false) => f32::from_le_bytes(c.try_into().unwrap()) as f64,
            (true, true) => f32::from_be_bytes(c.try_into().unwrap()) as f64,
        })
        .collect();
    let data = if fortran {
        let mut t = vec![0.0; count];
        for i in 0..rows {
            for j in 0..cols {
                t[i * cols + j] = values[j * rows + i];
            }
        }
        t
    } else {
        values
    };
    Ok(Matrix { rows, cols, data })
}

/// The raw text of `key`'s value in a Python dict literal (the `.npy` header).
fn dict_value<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let at = header
        .find(&format!("'{key}'"))
        .or_else(|| header.find(&format!("\"{key}\"")))?;
    let rest = &header[at + key.len() + 2..];
    let rest = rest.trim_start().strip_prefix(':')?.trim_start();
    let end = if rest.starts_with('(') {
        rest.find(')')? + 1
    } else {
        rest.find([',', '}']).unwrap_or(rest.len())
    };
    Some(rest[..end].trim())
}

/// Encodes a matrix as `.npy` (version 1, little-endian `f8`, C order).
pub fn to_npy(m: &Matrix) -> Vec<u8> {
    let dict = format!(
        "{{'descr': '<f8', 'fortran_order': False, 'shape': ({}, {}), }}",
        m.rows, m.cols
    );
    // Pad so that the data starts on a 64-byte boundary, header ends with '\n'.
    let unpadded = 10 + dict.len() + 1;
    let pad = (64 - unpadded % 64) % 64;
    let header = format!("{dict}{}\n", " ".repeat(pad));
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for v in &m.data {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
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
        assert!(parse_csv("1,x\n3,4\n", true).is_ok()); // first row is a header
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
