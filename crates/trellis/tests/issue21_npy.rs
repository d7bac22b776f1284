//! Issue 21: `.npy` files through a maintained crate (`npyz`, with the
//! header checked first by `py_literal`, npyz's own parser). Every behaviour
//! of the former hand-written reader is kept: 1-D and 2-D shapes, float64
//! and float32 in either byte order (and NumPy's `=` and `|`), C and Fortran
//! order, versions 1-3, sizes checked before anything is allocated,
//! truncated and over-long data refused; and non-finite values are refused
//! naming their row and column, as in CSV files.

use trellis::Matrix;
use trellis::io::{parse_npy, read_matrix, to_npy};

/// A `.npy` file of this version with this header dictionary and data.
fn npy(version: u8, dict: &str, data: &[u8]) -> Vec<u8> {
    let mut out = b"\x93NUMPY".to_vec();
    out.extend_from_slice(&[version, 0]);
    let header = format!("{dict}\n");
    if version == 1 {
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

fn dict(descr: &str, fortran: bool, shape: &str) -> String {
    let f = if fortran { "True" } else { "False" };
    format!("{{'descr': '{descr}', 'fortran_order': {f}, 'shape': {shape}, }}")
}

fn error(bytes: &[u8]) -> String {
    parse_npy(bytes).expect_err("refused").to_string()
}

fn assert_contains(text: &str, needle: &str) {
    assert!(text.contains(needle), "{text:?} lacks {needle:?}");
}

/// The 2 x 3 matrix [[1, 2, 3], [4, 5, 6]].
fn m23() -> Matrix {
    Matrix::from_rows(vec![vec![1.0, 2.0, 3.0], vec![4.0, 5.0, 6.0]]).unwrap()
}

#[test]
fn issue21_npy_dtypes_byte_orders_and_layouts() {
    let c_order = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let f_order = [1.0, 4.0, 2.0, 5.0, 3.0, 6.0];
    for fortran in [false, true] {
        let values = if fortran { f_order } else { c_order };
        let le8: Vec<u8> = values.iter().flat_map(|v: &f64| v.to_le_bytes()).collect();
        let be8: Vec<u8> = values.iter().flat_map(|v: &f64| v.to_be_bytes()).collect();
        let le4: Vec<u8> = values
            .iter()
            .flat_map(|v| (*v as f32).to_le_bytes())
            .collect();
        let be4: Vec<u8> = values
            .iter()
            .flat_map(|v| (*v as f32).to_be_bytes())
            .collect();
        for (descr, data) in [
            ("<f8", &le8),
            (">f8", &be8),
            ("=f8", &le8),
            ("|f8", &le8),
            ("<f4", &le4),
            (">f4", &be4),
            ("=f4", &le4),
        ] {
            if cfg!(target_endian = "big") && descr.starts_with(['=', '|']) {
                continue;
            }
            for version in [1, 2, 3] {
                let bytes = npy(version, &dict(descr, fortran, "(2, 3)"), data);
                assert_eq!(
                    parse_npy(&bytes).unwrap_or_else(|e| panic!("{descr} v{version}: {e}")),
                    m23(),
                    "{descr} fortran {fortran} v{version}"
                );
            }
        }
    }
    // 1-D: one column; double quotes in the header; a shape given as a list.
    let data: Vec<u8> = [1.0f64, 2.0, 3.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let col = Matrix::from_rows(vec![vec![1.0], vec![2.0], vec![3.0]]).unwrap();
    assert_eq!(
        parse_npy(&npy(1, &dict("<f8", false, "(3,)"), &data)).unwrap(),
        col
    );
    let dq = "{\"descr\": \"<f8\", \"fortran_order\": False, \"shape\": [3]}";
    assert_eq!(parse_npy(&npy(1, dq, &data)).unwrap(), col);
}

#[test]
fn issue21_npy_written_by_npyz_reads_back_aligned() {
    let m = m23();
    let bytes = to_npy(&m);
    // NumPy's layout: the data starts on a 64-byte boundary.
    let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    assert_eq!((10 + header_len) % 64, 0);
    assert_eq!(bytes.len(), 10 + header_len + 6 * 8);
    assert!(bytes[10..10 + header_len].ends_with(b"\n"));
    assert_eq!(parse_npy(&bytes).unwrap(), m);
}

#[test]
fn issue21_npy_refusals() {
    let d8: Vec<u8> = [1.0f64, 2.0, 3.0, 4.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_contains(&error(b"not numpy at all"), "not a .npy file");
    assert_contains(
        &error(&npy(4, &dict("<f8", false, "(2, 2)"), &d8)),
        "version 4",
    );
    // Dtypes other than float64 and float32.
    for descr in ["<i8", "<u4", "<c16", "|b1", "<f2", "|O"] {
        assert_contains(
            &error(&npy(1, &dict(descr, false, "(2, 2)"), &d8)),
            "unsupported dtype",
        );
    }
    assert_contains(
        &error(&npy(
            1,
            "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2,), }",
            &d8[..16],
        )),
        "unsupported dtype",
    );
    // Shapes: 0-D and 3-D, negative, not a tuple.
    assert_contains(&error(&npy(1, &dict("<f8", false, "()"), &d8[..8])), "2-D");
    assert_contains(
        &error(&npy(1, &dict("<f8", false, "(1, 2, 2)"), &d8)),
        "2-D",
    );
    assert_contains(
        &error(&npy(1, &dict("<f8", false, "(-2, 2)"), &d8)),
        "(-2, 2)",
    );
    assert_contains(
        &error(&npy(1, &dict("<f8", false, "4"), &d8)),
        "not a tuple",
    );
    // Keys missing, not a dict, not a literal.
    assert_contains(
        &error(&npy(1, "{'descr': '<f8', 'shape': (2, 2)}", &d8)),
        "no 'fortran_order'",
    );
    assert_contains(&error(&npy(1, "[1, 2]", &d8)), "not a dict");
    assert_contains(
        &error(&npy(1, "{'descr': '<f8'", &d8)),
        "not a Python literal",
    );
    // A header nested like a fuzzer's: refused before it is parsed.
    let deep = format!("{}{}", "(".repeat(100_000), ")".repeat(100_000));
    assert_contains(&error(&npy(2, &deep, &d8)), "nests");
    // A version-2 header length beyond the file: refused without allocating it.
    let mut v2 = b"\x93NUMPY\x02\x00".to_vec();
    v2.extend_from_slice(&u32::MAX.to_le_bytes());
    v2.extend_from_slice(b"{}");
    assert_contains(&error(&v2), "truncated .npy header");
    assert_contains(
        &error(b"\x93NUMPY\x02\x00\x01\x00\x00"),
        "truncated .npy header",
    );
}

#[test]
fn issue21_npy_sizes_are_checked_before_allocating() {
    let d8 = [0u8; 16];
    // Overflowing sizes: refused, saying how much memory it would take.
    let e = error(&npy(
        1,
        &dict("<f8", false, "(4294967296, 4294967296)"),
        &d8,
    ));
    assert_contains(&e, "shape (4294967296, 4294967296) is too large");
    assert_contains(&e, "it would need 128.0 EiB of memory");
    // A large shape that fits in usize but not in the file.
    let e = error(&npy(1, &dict("<f4", true, "(1000000, 1000000)"), &d8));
    assert_contains(
        &e,
        "truncated: shape (1000000, 1000000) needs 4000000000000 bytes (3.6 TiB)",
    );
    // Data longer than the shape.
    let mut bytes = to_npy(&m23());
    bytes.extend_from_slice(b"junk");
    assert_contains(&error(&bytes), "4 bytes follow the array data");
}

#[test]
fn issue21_npy_non_finite_values_are_refused_naming_row_and_column() {
    for (fortran, values, at) in [
        (
            false,
            [1.0, f64::NAN, 3.0, 4.0, 5.0, 6.0],
            "row 0, column 1",
        ),
        (
            true,
            [1.0, 4.0, 2.0, f64::INFINITY, 3.0, 6.0],
            "row 1, column 1",
        ),
    ] {
        let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let e = error(&npy(1, &dict("<f8", fortran, "(2, 3)"), &data));
        assert_contains(
            &e,
            &format!("non-finite value (NaN or infinity) at {at} (0-based)"),
        );
    }
    // Through the reader, the file is named.
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("issue21_npy");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("nan.npy");
    let data: Vec<u8> = [0.0f64, f64::NAN, 1.0, 0.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    std::fs::write(&p, npy(1, &dict("<f8", false, "(2, 2)"), &data)).unwrap();
    let e = read_matrix(&p, false).unwrap_err().to_string();
    assert_contains(&e, "nan.npy");
    assert_contains(&e, "row 0, column 1");
}
