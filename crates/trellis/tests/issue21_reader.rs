//! Issue 21, the one reader: RFC 4180 CSV through the `csv` crate (quoted
//! commas, doubled quotes, CRLF, a byte-order mark), no comment syntax in data
//! files, unterminated quotes refused naming their line. The CLI, the web app
//! and Python read `examples/quoted-names.csv` with this reader; their tests
//! check the same names and rows.

use trellis::ddt::Dataset;
use trellis::io::{NamesColumn, ReadOptions, Table, parse_table, read_table};

fn points(text: &str) -> trellis::Result<Table> {
    parse_table(text, &ReadOptions::points())
}

fn error(r: trellis::Result<Table>) -> String {
    r.expect_err("expected an error").to_string()
}

/// The names and rows every door must give for `examples/quoted-names.csv`.
pub const QUOTED_NAMES: [&str; 4] = [
    "Smith, J.",
    "The \"big\" one",
    "#3 looks like a comment",
    "plain",
];
/// Its rows.
pub const QUOTED_ROWS: [[f64; 2]; 4] = [[5.1, 3.5], [4.9, 3.0], [4.7, 3.2], [4.6, 3.1]];

#[test]
fn issue21_the_example_file_reads_with_quoted_commas_doubled_quotes_and_hash_names() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/quoted-names.csv");
    let table = read_table(&path, &ReadOptions::points()).unwrap();
    assert_eq!(table.names.as_deref().unwrap(), QUOTED_NAMES);
    assert_eq!(table.matrix.rows, 4);
    assert_eq!(table.matrix.cols, 2);
    for (i, row) in QUOTED_ROWS.iter().enumerate() {
        assert_eq!(table.matrix.row(i), row);
    }
    assert_eq!(
        table.columns.as_deref().unwrap(),
        ["sepal length", "sepal width"]
    );
    // The DDT's dataset (the web app and `interactive`) reads the same.
    let d = Dataset::read(&path).unwrap();
    assert_eq!(d.names(), QUOTED_NAMES);
    assert_eq!(d.row(1), &QUOTED_ROWS[1]);
}

#[test]
fn issue21_a_row_starting_with_hash_is_data_everywhere() {
    // Headerless, names found by Auto (no number in the first column).
    let t = points("#a,1,2\nb,3,4\n#c,5,6\n").unwrap();
    assert_eq!(t.names.unwrap(), ["#a", "b", "#c"]);
    assert_eq!(t.matrix.rows, 3);
    // A weight matrix whose first row starts with `#` is not shortened: the
    // `#` is a malformed number.
    let e = error(parse_table("#1,2\n3,4\n", &ReadOptions::weights()));
    assert!(e.contains("line 1, column 1"), "{e}");
    let d = Dataset::parse_csv("name,x\n#1,0.5\n#2,0.7\n").unwrap();
    assert_eq!(d.names(), ["#1", "#2"]);
}

#[test]
fn issue21_unterminated_quotes_are_refused_naming_their_line() {
    for (text, line) in [
        ("name,x\na,1\n\"b,2\n", 3),
        ("name,x\na,1\n\"b,2", 3),
        ("name,x\n\"a\",1\n\"b\"\"x,2\nc,3\n", 3),
        ("name,x\na,\"1\n", 2),
    ] {
        let e = error(points(text));
        assert!(
            e.contains(&format!("line {line}")) && e.contains("never closed"),
            "{text:?}: {e}"
        );
    }
    // A quote closed on a later line: a field over a line break.
    let e = error(points("name,x\n\"a\nb\",1\nc,2\n"));
    assert!(
        e.contains("line 2") && e.contains("more than one line"),
        "{e}"
    );
}

#[test]
fn issue21_rfc4180_details() {
    // CRLF, a byte-order mark, blanks around unquoted fields, quoted numbers,
    // a quoted empty name refused, blank lines (and lines of blanks) skipped.
    let t = points("\u{feff}label,\"x\"\r\n\r\n  a , \"1.5\"\r\n   \r\nb,2\r\n").unwrap();
    assert_eq!(t.names.as_deref().unwrap(), ["a", "b"]);
    assert_eq!(t.matrix.data, [1.5, 2.0]);
    let e = error(points("name,x\n\"\",1\n"));
    assert!(e.contains("line 2, column 1: the name is empty"), "{e}");
    // A quoted name may hold a comma and still be checked for duplicates.
    let e = error(points("name,x\n\"a,b\",1\n\"a,b\",2\n"));
    assert!(e.contains("already used on line 2"), "{e}");
    // Ragged rows name the line, also after a quoted comma.
    let e = error(points("name,x\n\"a,b\",1,3\n"));
    assert!(e.contains("line 2: 3 fields but the header has 2"), "{e}");
    // Whitespace-separated text (no comma anywhere) still reads.
    let t = parse_table("1 2\n3 4\n", &ReadOptions::weights()).unwrap();
    assert_eq!(t.matrix.data, [1.0, 2.0, 3.0, 4.0]);
}

#[test]
fn issue21_text_columns_are_kept_by_header_name() {
    let options = ReadOptions::points()
        .with_names(NamesColumn::Column(0))
        .with_text_columns(["text", "image"]);
    let t = parse_table(
        "name,f1,Text,f2\na,1,\"hello, world\",2\nb,3,bye,4\n",
        &options,
    )
    .unwrap();
    assert_eq!(t.matrix.data, [1.0, 2.0, 3.0, 4.0]);
    assert_eq!(t.columns.as_deref().unwrap(), ["f1", "f2"]);
    assert_eq!(t.text.len(), 1);
    assert_eq!(t.text[0].name, "Text");
    assert_eq!(t.text[0].values, ["hello, world", "bye"]);
}

/// Issue 22 (class 8): cosine similarity does not depend on scale, so points
/// of tiny or huge norm get the same similarities as the same points at
/// unit scale (they were refused as "all zeros" or overflowed).
#[test]
fn issue22_cosine_of_tiny_and_huge_points_is_scale_free() {
    use trellis::{Matrix, Similarity, Weights};
    let base = [
        [1.0, 2.0, 0.5],
        [3.0, -1.0, 2.0],
        [0.2, 0.1, -4.0],
        [1.0, 1.0, 1.0],
    ];
    let at = |scale: f64| {
        let rows = base
            .iter()
            .map(|r| r.iter().map(|x| x * scale).collect())
            .collect();
        Weights::from_points(&Matrix::from_rows(rows).unwrap(), Similarity::Cosine, false).unwrap()
    };
    let unit = at(1.0);
    for scale in [1e-200, 3e-200, 1e200, 1e-300] {
        let w = at(scale);
        for i in 0..4 {
            for j in 0..4 {
                assert!(
                    (w.get(i, j) - unit.get(i, j)).abs() < 1e-12,
                    "{scale}: ({i}, {j})"
                );
            }
        }
    }
    let zero = Matrix::from_rows(vec![vec![0.0, 0.0], vec![1.0, 2.0]]).unwrap();
    let e = Weights::from_points(&zero, Similarity::Cosine, false).unwrap_err();
    assert!(
        e.to_string().contains("point 0 (0-based) is all zeros"),
        "{e}"
    );
}
