//! Issue 11, readers: the header rule, point names, the byte-order mark,
//! malformed `.npy` headers, bounded reads and sizes checked before allocating.

use std::path::{Path, PathBuf};

use trellis::ddt::Dataset;
use trellis::io::{
    NamesColumn, ReadOptions, Table, parse_npy, parse_table, read_bytes, read_table,
};
use trellis::{ErrorKind, Matrix, Similarity, Weights};

fn points(text: &str) -> trellis::Result<Table> {
    parse_table(text, &ReadOptions::points())
}

fn points_with(text: &str, names: NamesColumn) -> trellis::Result<Table> {
    parse_table(text, &ReadOptions::points().with_names(names))
}

fn error(r: trellis::Result<Table>) -> String {
    r.expect_err("expected an error").to_string()
}

fn assert_contains(text: &str, needle: &str) {
    assert!(text.contains(needle), "{text:?} lacks {needle:?}");
}

/// A fresh temporary directory for one test.
fn temp_dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("issue11_readers_{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn header_rule_a_first_row_with_a_number_is_data() {
    // `1e` is a malformed number, not a header field.
    let e = error(points("1e,2\n3,4\n5,6\n7,8\n"));
    assert_contains(&e, "line 1, column 1");
    assert_contains(&e, "\"1e\" is not a number");
    // One number makes the first row data, whatever the other fields hold.
    assert_contains(&error(points("x,2\n3,4\n")), "line 1, column 1: \"x\"");
    assert_contains(&error(points("1,x\n3,4\n")), "line 1, column 2");
    // A row without numbers is a header.
    let t = points("x,y\n1,2\n3,4\n").unwrap();
    assert_eq!((t.matrix.rows, t.matrix.cols), (2, 2));
    assert_eq!(t.names, None);
    // Weights take no header: the message says so.
    let e = error(parse_table("a,b\n0,1\n1,0\n", &ReadOptions::weights()));
    assert_contains(&e, "line 1, column 1");
    assert_contains(&e, "no header");
}

#[test]
fn header_rule_the_header_field_count_is_checked() {
    assert_contains(
        &error(points("x,y,z\n1,2\n3,4\n")),
        "line 2: 2 fields but the header has 3",
    );
    assert_contains(
        &error(points("x\n1,2\n3,4\n")),
        "line 2: 2 fields but the header has 1",
    );
    assert_contains(
        &error(points("1,2\n3,4,5\n")),
        "line 2: 3 fields but line 1 has 2",
    );
}

#[test]
fn names_from_a_name_id_or_label_header() {
    for header in ["name", "ID", "Label", ""] {
        let t = points(&format!("{header},x,y\n0,1,2\n1,3,4\n2,5,6\n")).unwrap();
        assert_eq!(t.names, Some(vec!["0".into(), "1".into(), "2".into()]));
        assert_eq!(
            (t.matrix.rows, t.matrix.cols, t.matrix.data.clone()),
            (3, 2, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
            "{header}"
        );
    }
    // Any other header leaves a numeric first column a feature.
    let t = points("idx,x\n0,1\n1,3\n").unwrap();
    assert_eq!((t.names, t.matrix.cols), (None, 2));
}

#[test]
fn names_from_a_first_column_without_numbers() {
    let t = points("cat,1,2\ndog,3,4\n").unwrap();
    assert_eq!(t.names, Some(vec!["cat".into(), "dog".into()]));
    assert_eq!(t.matrix.data, vec![1.0, 2.0, 3.0, 4.0]);
    // Quoted names and whitespace-separated fields.
    let t = points("\"a b\",1\n\"c\",2\n").unwrap();
    assert_eq!(t.names, Some(vec!["a b".into(), "c".into()]));
    let t = points("a 1 2\nb 3 4\n").unwrap();
    assert_eq!(t.names, Some(vec!["a".into(), "b".into()]));
    assert_eq!(t.matrix.cols, 2);
}

#[test]
fn names_column_override() {
    let t = points_with("x,y,tag\n1,2,a\n3,4,b\n", NamesColumn::Column(2)).unwrap();
    assert_eq!(t.names, Some(vec!["a".into(), "b".into()]));
    assert_eq!(t.matrix.data, vec![1.0, 2.0, 3.0, 4.0]);
    // A numeric column taken as names.
    let t = points_with("x,y\n1,2\n3,4\n", NamesColumn::Column(0)).unwrap();
    assert_eq!(t.names, Some(vec!["1".into(), "3".into()]));
    assert_eq!(t.matrix.data, vec![2.0, 4.0]);
    // No names column: a "name" header then names a feature.
    let t = points_with("name,x\n0,1\n1,2\n", NamesColumn::None).unwrap();
    assert_eq!((t.names, t.matrix.cols), (None, 2));
    let e = error(points_with("a,1\nb,2\n", NamesColumn::None));
    assert_contains(&e, "line 1, column 1: \"a\" is not a number");
    let e = error(points_with("x,y\n1,2\n", NamesColumn::Column(2)));
    assert_contains(&e, "no column 2");
}

#[test]
fn names_errors_name_their_lines() {
    // Another non-number: line as in the file (blank lines count; data files
    // have no comment syntax since issue 21).
    let e = error(points("\n\nname,x,y\na,1,2\nb,3,z\n"));
    assert_contains(&e, "line 5, column 3: \"z\" is not a number");
    let e = error(points("name,x\na,1\n,2\n"));
    assert_contains(&e, "line 3, column 1: the name is empty");
    let e = error(points("name,x\na,1\nb,2\na,3\n"));
    assert_contains(&e, "line 4: the name \"a\" was already used on line 2");
    // Names but no numbers.
    assert_contains(&error(points("name\na\nb\n")), "no numbers");
    // A first column of numbers with one typo is not a names column.
    let e = error(points("x,y\n1,2\n3o,4\n"));
    assert_contains(&e, "line 3, column 1: \"3o\" is not a number");
    assert_contains(&e, "name, id or label");
}

#[test]
fn names_of_iris_are_its_id_column() {
    let Some(dir) = crate::data::dir("ibhc") else {
        return;
    };
    let t = read_table(&dir.join("iris.csv"), &ReadOptions::points()).unwrap();
    assert_eq!((t.matrix.rows, t.matrix.cols), (150, 4));
    let names = t.names.expect("iris.csv has a name column");
    assert_eq!(names.len(), 150);
    assert_eq!((names[0].as_str(), names[149].as_str()), ("0", "149"));
    assert_eq!(&t.matrix.data[..4], &[5.1, 3.5, 1.4, 0.2]);
    // The compatibility reader drops the names, not a feature.
    let m = trellis::io::read_matrix(&dir.join("iris.csv"), true).unwrap();
    assert_eq!(m, t.matrix);
}

#[test]
fn byte_order_mark_is_accepted() {
    let t = points("\u{feff}name,x\na,1\nb,2\n").unwrap();
    assert_eq!(t.names, Some(vec!["a".into(), "b".into()]));
    let t = parse_table("\u{feff}0,1\n1,0\n", &ReadOptions::weights()).unwrap();
    assert_eq!(t.matrix.data, vec![0.0, 1.0, 1.0, 0.0]);
    let d = Dataset::parse_csv("\u{feff}name,f1,f2\na,1,2\nb,3,4\n").unwrap();
    assert_eq!(d.names(), &["a".to_string(), "b".to_string()]);
    assert_eq!(d.dim(), 2);
    // Through a file too.
    let dir = temp_dir("bom");
    let p = dir.join("w.csv");
    std::fs::write(&p, b"\xef\xbb\xbf0,2\n2,0\n").unwrap();
    let w = Weights::from_matrix(&trellis::io::read_matrix(&p, false).unwrap()).unwrap();
    assert_eq!(w.get(0, 1), 2.0);
    let p = dir.join("ddt.csv");
    std::fs::write(&p, b"\xef\xbb\xbfname,f\na,1\nb,2\n").unwrap();
    assert_eq!(Dataset::read(&p).unwrap().len(), 2);
}

#[test]
fn ddt_points_follow_the_same_rules() {
    // No header: the first row is data when it holds a number.
    let d = Dataset::parse_csv("a,1\nb,2\n").unwrap();
    assert_eq!(d.len(), 2);
    let e = Dataset::parse_csv("name,f\n,1\nb,2\n")
        .unwrap_err()
        .to_string();
    assert_contains(&e, "line 2, column 1: the name is empty");
    let e = Dataset::parse_csv("name,f\na,1\nb,x\n")
        .unwrap_err()
        .to_string();
    assert_contains(&e, "line 3, column 2: \"x\" is not a number");
    let e = Dataset::parse_csv("name,f,g\na,1,2\nb,3\n")
        .unwrap_err()
        .to_string();
    assert_contains(&e, "2 fields but the header has 3");
}

/// A version-1 `.npy` file with this header dictionary and data.
fn npy(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    let header = format!("{dict}\n");
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

fn npy_error(bytes: &[u8]) -> String {
    parse_npy(bytes).expect_err("malformed .npy").to_string()
}

#[test]
fn npy_huge_shapes_are_refused_without_panic() {
    for shape in ["(4294967296, 4294967296)", "(4611686018427387904, 1)"] {
        let dict = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': {shape}, }}");
        let e = npy_error(&npy(&dict, &[0u8; 16]));
        assert_contains(&e, "too large");
        assert_contains(&e, shape);
    }
    // A shape that does not overflow but is longer than the data.
    let dict = "{'descr': '<f4', 'fortran_order': True, 'shape': (1000000, 1000000), }";
    assert_contains(&npy_error(&npy(dict, &[0u8; 16])), "truncated");
    // A version-2 header length beyond the file.
    let mut v2 = b"\x93NUMPY\x02\x00".to_vec();
    v2.extend_from_slice(&u32::MAX.to_le_bytes());
    v2.extend_from_slice(b"{}");
    assert_contains(&npy_error(&v2), "truncated");
}

#[test]
fn npy_fortran_order_must_be_a_python_bool() {
    let data: Vec<u8> = [1.0f64, 2.0, 3.0, 4.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let dict = "{'descr': '<f8', 'fortran_order': 'yes', 'shape': (2, 2), }";
    assert_contains(&npy_error(&npy(dict, &data)), "'fortran_order' is 'yes'");
    let dict = "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2), }";
    let m = parse_npy(&npy(dict, &data)).unwrap();
    assert_eq!(m.data, vec![1.0, 3.0, 2.0, 4.0]);
}

#[test]
fn npy_trailing_bytes_are_refused() {
    let m = Matrix::from_rows(vec![vec![0.0, 1.0], vec![1.0, 0.0]]).unwrap();
    let mut bytes = trellis::io::to_npy(&m);
    assert_eq!(parse_npy(&bytes).unwrap(), m);
    bytes.push(0);
    assert_contains(&npy_error(&bytes), "1 bytes follow the array data");
}

#[test]
fn npy_on_any_path_is_recognised_by_its_magic_string() {
    let dir = temp_dir("npy_magic");
    let m = Matrix::from_rows(vec![vec![0.0, 1.0], vec![1.0, 0.0]]).unwrap();
    let p = dir.join("weights.bin");
    std::fs::write(&p, trellis::io::to_npy(&m)).unwrap();
    assert_eq!(trellis::io::read_matrix(&p, false).unwrap(), m);
    let e = read_table(
        &p,
        &ReadOptions::points().with_names(NamesColumn::Column(0)),
    )
    .unwrap_err()
    .to_string();
    assert_contains(&e, "no names column");
}

#[test]
fn reads_are_bounded() {
    let dir = temp_dir("bounded");
    let p = dir.join("w.csv");
    std::fs::write(&p, "0,1\n1,0\n").unwrap();
    assert_eq!(read_bytes(&p, 8).unwrap(), b"0,1\n1,0\n");
    let e = read_bytes(&p, 7).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Io { source, .. } if source.kind() == std::io::ErrorKind::FileTooLarge),
        "{e}"
    );
    assert_contains(&e.to_string(), "holds");
    let e = read_table(&p, &ReadOptions::weights().with_max_bytes(4)).unwrap_err();
    assert_contains(&e.to_string(), "more than the limit");
    // An endless stream stops at the limit.
    for endless in ["/dev/zero", "/dev/urandom"] {
        if Path::new(endless).exists() {
            let e = read_bytes(Path::new(endless), 1 << 20).unwrap_err();
            assert_contains(&e.to_string(), "larger than the limit of 1.0 MiB");
        }
    }
    // The default limit is a share of the memory, at least 1 MiB.
    assert_eq!(trellis::io::input_limit(Some(1 << 30)), (1 << 30) / 5);
    assert_eq!(trellis::io::input_limit(Some(1000)), 1 << 20);
}

#[test]
fn os_error_text_appears_once() {
    let e = read_bytes(Path::new("/nonexistent/w.csv"), 1 << 20).unwrap_err();
    assert!(std::error::Error::source(&e).is_none());
    let text = e.to_string();
    assert_contains(&text, "cannot read /nonexistent/w.csv");
    assert_eq!(text.matches("os error").count(), 1, "{text}");
}

#[test]
fn weight_matrix_size_is_checked_before_allocating() {
    let e = Weights::check_memory(100_000, Some(1 << 30)).unwrap_err();
    assert!(
        matches!(
            e.kind(),
            ErrorKind::TooLarge {
                needed: 80_000_000_000,
                limit: 1_073_741_824,
                ..
            }
        ),
        "{e}"
    );
    assert_contains(&e.to_string(), "would need 74.5 GiB");
    // Up to 1 MiB (362 points) is always allowed, even under a smaller cap.
    assert!(Weights::check_memory(362, Some(1000)).is_ok());
    assert!(Weights::check_memory(363, Some(1000)).is_err());
    assert!(Weights::check_memory(1000, Some(8_000_000)).is_ok());
    assert!(Weights::check_memory(usize::MAX, Some(u64::MAX - 1)).is_err());
    // 2^20 points need 8 TiB of similarities: refused before any is computed.
    let n = 1 << 20;
    let pts = Matrix {
        rows: n,
        cols: 1,
        data: vec![1.0; n],
    };
    let e = Weights::from_points(&pts, Similarity::Dot, false).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::TooLarge { .. }), "{e}");
    assert_contains(&e.to_string(), "8.0 TiB");
    // An inconsistent matrix (public fields) is a shape error, not a panic.
    let bad = Matrix {
        rows: 3,
        cols: 3,
        data: vec![0.0; 4],
    };
    assert!(matches!(
        Weights::from_matrix(&bad).unwrap_err().kind(),
        ErrorKind::Shape { .. }
    ));
    assert!(matches!(
        Weights::from_points(&bad, Similarity::Dot, false)
            .unwrap_err()
            .kind(),
        ErrorKind::Shape { .. }
    ));
}

#[test]
fn names_label_newick_leaves_quoted_when_needed() {
    use trellis::{NewickOptions, Tree, newick_label};
    let t = Tree::parse("((0,1),(2,3))").unwrap();
    let names: Vec<String> = ["cat", "sea lion", "O'Hara", "a_b"]
        .map(String::from)
        .to_vec();
    assert_eq!(
        t.to_newick_named(&names),
        "((cat,'sea lion'),('O''Hara','a_b'));"
    );
    // The default options are the plain form; a leaf beyond the names is its index.
    assert_eq!(t.to_newick_with(&NewickOptions::default()), t.to_newick());
    assert_eq!(t.to_newick_named(&names[..2]), "((cat,'sea lion'),(2,3));");
    for (name, label) in [
        ("plain", "plain"),
        ("", "''"),
        ("a,b", "'a,b'"),
        ("x:1", "'x:1'"),
        ("(p)", "'(p)'"),
        ("[c]", "'[c]'"),
        ("semi;", "'semi;'"),
        ("tab\t", "'tab\t'"),
    ] {
        assert_eq!(newick_label(name), label);
    }
    // The DDT reader reads the names back.
    let h = trellis::ddt::Hierarchy::parse_newick(&t.to_newick_named(&names)).unwrap();
    let depths = h.lca_depths(&names);
    assert!(depths.is_ok(), "{:?}", depths.err());
    // Any depth: a caterpillar of 100000 named leaves.
    let n = 100_000;
    let mut deep = Tree::Leaf(0);
    for i in 1..n {
        deep = Tree::node(deep, Tree::Leaf(i));
    }
    let names: Vec<String> = (0..n).map(|i| format!("p{i}")).collect();
    let text = deep.to_newick_named(&names);
    assert!(text.starts_with("((((") && text.ends_with(",p99999);"));
}

#[test]
fn reads_of_text_are_bounded_and_name_the_file() {
    let dir = temp_dir("text");
    let p = dir.join("jets.json");
    std::fs::write(&p, "\u{feff}not json").unwrap();
    assert_eq!(
        trellis::io::read_text(&p, 1 << 20).unwrap(),
        "\u{feff}not json"
    );
    let e = trellis::ginkgo::JetsFile::read(&p).unwrap_err().to_string();
    assert_contains(&e, &p.display().to_string());
    let e = trellis::ginkgo::JetsFile::read_limited(&p, 4)
        .unwrap_err()
        .to_string();
    assert_contains(&e, "more than the limit of");
    std::fs::write(&p, b"\xff\xfe").unwrap();
    let e = trellis::io::read_text(&p, 100).unwrap_err().to_string();
    assert_contains(&e, "not UTF-8");
    if Path::new("/dev/zero").exists() {
        let e = trellis::ginkgo::JetsFile::read_limited(Path::new("/dev/zero"), 1 << 16)
            .unwrap_err()
            .to_string();
        assert_contains(&e, "larger than the limit");
    }
    assert_eq!(
        trellis::io::shown(Path::new("-")),
        PathBuf::from("standard input")
    );
}
