//! Issue 21, the one reader: `examples/quoted-names.csv` (RFC 4180: quoted
//! commas, doubled quotes, CRLF, a name starting with `#`) gives the same
//! names and rows as the library, the web app and Python; an unterminated
//! quote is exit 2 on every command that reads points.

use crate::util::*;

const NAMES: [&str; 4] = [
    "Smith, J.",
    "The \"big\" one",
    "#3 looks like a comment",
    "plain",
];

fn example() -> String {
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/quoted-names.csv"
    )
    .to_string()
}

#[test]
fn issue21_quoted_names_read_as_the_library_reads_them() {
    let path = example();
    let v = json(&[
        "map",
        "--model",
        "hcc",
        "--points",
        &path,
        "--similarity",
        "rbf",
        "--center",
        "--json",
    ]);
    assert_eq!(v["n"], 4);
    let names: Vec<&str> = v["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(names, NAMES);
    // The same rows: the linkage over Euclidean distances of the rows as the
    // library computes them from its own reader.
    let table = trellis::io::read_table(
        std::path::Path::new(&path),
        &trellis::io::ReadOptions::points(),
    )
    .unwrap();
    assert_eq!(table.names.as_deref().unwrap(), NAMES);
    let d = trellis::baselines::euclidean_distances(&table.matrix).unwrap();
    let z = json(&[
        "linkage",
        "--points",
        &path,
        "--method",
        "single",
        "--linkage",
    ]);
    let min_off_diagonal = (0..4)
        .flat_map(|i| (0..4).filter(move |&j| j != i).map(move |j| (i, j)))
        .map(|(i, j)| d[i * 4 + j])
        .fold(f64::INFINITY, f64::min);
    let first_height = z[0][2].as_f64().unwrap();
    assert!((first_height - min_off_diagonal).abs() < 1e-12, "{z}");
    // The DDT's commands read the names too.
    let out = stdout(&[
        "interactive",
        "sample",
        "--points",
        &path,
        "-n",
        "1",
        "--burn-in",
        "10",
    ]);
    assert!(out.contains("'Smith, J.'"), "{out}");
}

#[test]
fn issue21_unterminated_quotes_are_exit_2_everywhere() {
    let d = dir("issue21_unterminated");
    let bad = file(&d, "bad.csv", "name,x,y\na,1,2\n\"b,3,4\nc,5,6\n");
    let bad = bad.to_str().unwrap();
    for args in [
        vec!["map", "--model", "hcc", "--points", bad],
        vec!["logz", "--model", "hcc", "--points", bad],
        vec!["linkage", "--points", bad, "--method", "average"],
        vec!["flat", "map", "--model", "cc", "--points", bad],
        vec!["interactive", "sample", "--points", bad, "-n", "1"],
    ] {
        fails(
            &args,
            "line 3: a quoted field opens here and is never closed",
        );
    }
    // A data row whose name starts with `#` is a row: 3 points, not 2.
    let hash = file(&d, "hash.csv", "name,x,y\na,1,2\n#b,3,4\nc,5,6\n");
    let v = json(&[
        "logz",
        "--model",
        "hcc",
        "--points",
        hash.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(v["n"], 3);
}
