//! Issue 22: the checks of the `csv_names` and `newick_names` fuzz targets
//! (`fuzz/checks.rs`), run on every `cargo test` since CI does not run the
//! nightly fuzzer, over inputs that proptest generates:
//!
//! - RFC-4180-ish CSV with a names column (quoted fields, doubled quotes,
//!   commas inside quotes, CRLF, blank lines, a byte-order mark, names that
//!   start with `#` or are digits) and random junk: read or refused, never a
//!   panic, and a table that reads keeps its invariants; a table we write
//!   reads as exactly its names and numbers.
//! - Newick over a small alphabet of names (quoted labels, underscores,
//!   branch lengths, internal labels, nested and unary parentheses, a
//!   rooting comment) and junk: a tree we write reads as exactly that tree;
//!   a label that is not a name is refused naming it; any text keeps the
//!   invariants of `read_tree`.

use proptest::prelude::*;
use trellis::Tree;
use trellis::io::{NamesColumn, ReadOptions};

use crate::issue11_fuzz::checks;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        // Do not write regression files next to the sources.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------
// CSV with names.

/// A name as the reader returns it: plain words, digits, `#`-leading, text
/// full of commas, quotes and inner blanks, values in literal quotes (never
/// blank at either end: fields are trimmed; never empty).
fn raw_name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{1,5}",
        "[0-9]{1,3}",
        "#[a-z0-9]{0,3}",
        "[a-z\",'#][a-z ,\"'#;]{0,6}[a-z\",'#]",
        "\"[a-z, ]{0,3}\"",
        Just("Smith, J.".to_string()),
        Just("The \"big\" one".to_string()),
        "\\PC{1,4}".prop_map(|s| s.trim().to_string()),
    ]
    .prop_filter("a non-empty trimmed name", |s| {
        !s.is_empty() && s.trim() == s && !s.contains(['\n', '\r'])
    })
}

/// A name that the reader reads back as written.
fn name() -> impl Strategy<Value = String> {
    raw_name()
}

/// A finite number, ordinary or extreme.
fn number() -> impl Strategy<Value = f64> {
    prop_oneof![
        (-1000i32..1000).prop_map(f64::from),
        -1e6..1e6f64,
        Just(-0.0),
        Just(5e-324),
        Just(1e300),
        Just(-1.7976931348623157e308),
        any::<f64>().prop_filter("finite", |x| x.is_finite()),
    ]
}

/// A field as RFC 4180 allows it: quoted when it must be, and sometimes
/// when it need not be; blanks around a bare field, and before a quoted one
/// without a comma (RFC 4180 has quotes open a field; the reader also takes
/// `a, "b"`, but a comma there would split the field).
fn field(text: &str, style: u8) -> String {
    if text.contains([',', '"']) || style % 3 == 0 {
        let quoted = format!("\"{}\"", text.replace('"', "\"\""));
        if style % 5 == 0 && !text.contains(',') {
            format!(" {quoted}")
        } else {
            quoted
        }
    } else if style % 4 == 1 {
        format!(" {text} ")
    } else {
        text.to_string()
    }
}

/// A table of names and numbers, and its text with random quoting, line
/// ends, blank lines and an optional byte-order mark.
#[derive(Debug, Clone)]
struct Written {
    names: Vec<String>,
    rows: Vec<Vec<f64>>,
    text: String,
}

fn written() -> impl Strategy<Value = Written> {
    (1usize..7, 1usize..4).prop_flat_map(|(n, d)| {
        (
            prop::collection::hash_set(name(), n),
            prop::collection::vec(prop::collection::vec(number(), d), n),
            prop::collection::vec(any::<u8>(), n * (d + 2) + 2),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(move |(names, rows, style, crlf, bom)| {
                let names: Vec<String> = names.into_iter().collect();
                let eol = if crlf { "\r\n" } else { "\n" };
                let mut text = String::from(if bom { "\u{feff}" } else { "" });
                text += "name";
                for j in 0..d {
                    text += &format!(",x{j}");
                }
                text += eol;
                let mut k = 0;
                let mut next = || {
                    k += 1;
                    style[k - 1]
                };
                for (name, row) in names.iter().zip(&rows) {
                    text += &field(name, next());
                    for x in row {
                        let s = next();
                        let x = if s % 2 == 0 {
                            format!("{x:?}")
                        } else {
                            format!("{x:e}")
                        };
                        text += ",";
                        text += &field(&x, s / 2);
                    }
                    text += eol;
                    if next() % 6 == 0 {
                        text += if crlf { "  \r\n" } else { "\n" };
                    }
                }
                Written { names, rows, text }
            })
    })
}

/// Text that looks like CSV: mostly tables of names and numbers (so that
/// many read), with junk cells, rows of another length, headers or not,
/// blank lines, CRLF, a byte-order mark, and raw junk.
fn csv_junk() -> impl Strategy<Value = String> {
    let junk_cell = || {
        prop_oneof![
            Just(String::new()),
            prop::sample::select(vec!["nan", "inf", "1e400", "0x10", "1,2", "#", "\"open"])
                .prop_map(String::from),
            prop::sample::select(vec!["\"a\nb\"", " \"q\" ", "\"\"", "a\"b", "\"\"\"\""])
                .prop_map(String::from),
            "\\PC{0,3}",
        ]
    };
    let name_cell = prop_oneof![
        12 => (raw_name(), any::<u8>()).prop_map(|(n, style)| field(&n, style)),
        1 => number().prop_map(|x| format!("{x:?}")),
        1 => junk_cell(),
    ];
    let number_cell = prop_oneof![
        40 => (number(), any::<u8>()).prop_map(|(x, style)| field(&format!("{x:e}"), style)),
        1 => junk_cell(),
    ];
    let row = (
        name_cell,
        prop::collection::vec(number_cell, 1..5),
        any::<u8>(),
    );
    let table = (1usize..4, prop::collection::vec(row, 1..7), any::<u8>()).prop_map(
        |(width, rows, style)| {
            let eol = if style % 2 == 0 { "\r\n" } else { "\n" };
            let mut text = String::from(if style % 5 == 0 { "\u{feff}" } else { "" });
            match style % 3 {
                0 => text += &format!("name{}{eol}", ",x".repeat(width)),
                1 => text += &format!("id,text{}{eol}", ",y".repeat(width.saturating_sub(1))),
                _ => {}
            }
            for (name, cells, shape) in rows {
                // Mostly rows of the table's width: a name and `width` numbers.
                let len = if shape % 16 == 0 { cells.len() } else { width };
                let mut row = vec![name];
                row.extend(cells.into_iter().cycle().take(len));
                text += &row.join(",");
                text += if shape % 9 == 0 { "\n\n" } else { eol };
            }
            text
        },
    );
    let junk = prop::collection::vec(
        prop_oneof![
            "[a-z0-9#. +eE-]{0,6}",
            Just(",".to_string()),
            Just("\"".to_string()),
            Just("\r\n".to_string()),
            Just("\n".to_string()),
            "\\PC{0,3}",
        ],
        0..24,
    )
    .prop_map(|p| p.concat());
    prop_oneof![4 => table, 1 => junk]
}

proptest! {
    #![proptest_config(config(256))]

    /// A table written as RFC 4180 reads as exactly its names and numbers,
    /// and keeps every invariant of the fuzz check.
    #[test]
    fn issue22_written_csv_reads_back(w in written()) {
        let options = ReadOptions::points().with_names(NamesColumn::Column(0));
        let table = trellis::io::parse_table(&w.text, &options)
            .map_err(|e| TestCaseError::fail(format!("{e} in {:?}", w.text)))?;
        prop_assert_eq!(table.names.as_ref(), Some(&w.names), "in {:?}", w.text);
        let rows: Vec<Vec<f64>> = (0..table.matrix.rows)
            .map(|i| table.matrix.row(i).to_vec())
            .collect();
        prop_assert_eq!(&rows, &w.rows, "in {:?}", w.text);
        // The automatic names column finds the same names (header `name`).
        let auto = trellis::io::parse_table(&w.text, &ReadOptions::points())
            .map_err(|e| TestCaseError::fail(format!("{e} in {:?}", w.text)))?;
        prop_assert_eq!(auto.names.as_ref(), Some(&w.names));
        checks::csv_names(w.text.as_bytes());
    }

    /// Junk is read or refused, never a panic; what reads keeps the invariants.
    #[test]
    fn issue22_csv_junk_keeps_the_invariants(text in csv_junk()) {
        checks::csv_names(text.as_bytes());
    }
}

// ---------------------------------------------------------------------------
// Newick with names.

/// A binary tree over distinct indices of the alphabet, built from a
/// shuffled subset and split points.
fn named_tree() -> impl Strategy<Value = (Tree, Vec<u8>)> {
    let n = checks::newick_alphabet().len();
    (
        Just((0..n).collect::<Vec<usize>>()).prop_shuffle(),
        1..=n,
        prop::collection::vec(any::<u8>(), 4 * n),
    )
        .prop_map(|(order, k, bytes)| {
            fn build(leaves: &[usize], bytes: &[u8], at: &mut usize) -> Tree {
                if leaves.len() == 1 {
                    return Tree::Leaf(leaves[0]);
                }
                let b = bytes[*at % bytes.len()];
                *at += 1;
                let cut = 1 + b as usize % (leaves.len() - 1);
                let l = build(&leaves[..cut], bytes, at);
                let r = build(&leaves[cut..], bytes, at);
                Tree::node(l, r)
            }
            let mut at = 0;
            let tree = build(&order[..k], &bytes, &mut at);
            (tree, bytes)
        })
}

/// Newick for `tree` over `names`, decorated by `bytes`: each label bare
/// when Newick allows it or quoted (`'o''k'`), branch lengths, internal
/// labels, blanks, unary parentheses, a rooting comment, the final `;`.
fn decorate(tree: &Tree, names: &[String], bytes: &[u8]) -> String {
    let mut k = 0;
    let mut next = || {
        k += 1;
        bytes[(k - 1) % bytes.len()]
    };
    fn go(t: &Tree, names: &[String], next: &mut dyn FnMut() -> u8, out: &mut String) {
        let b = next();
        let unary = b % 11 == 0;
        if unary {
            out.push('(');
        }
        match t {
            Tree::Leaf(i) => {
                let name = &names[*i];
                let bare = matches!(trellis::newick_label(name), std::borrow::Cow::Borrowed(_));
                if bare && b % 2 == 0 {
                    out.push_str(name);
                } else {
                    out.push_str(&format!("'{}'", name.replace('\'', "''")));
                }
            }
            Tree::Node(l, r) => {
                out.push('(');
                go(l, names, next, out);
                out.push_str(if b % 3 == 0 { " , " } else { "," });
                go(r, names, next, out);
                out.push(')');
                match b % 5 {
                    0 => out.push_str("0.95"),
                    1 => out.push_str("'inner label'"),
                    2 => out.push_str("int_1"),
                    _ => {}
                }
            }
        }
        match (b / 16) % 4 {
            0 => out.push_str(":1.5"),
            1 => out.push_str(": 2e-3"),
            2 => out.push_str(":0"),
            _ => {}
        }
        if unary {
            out.push(')');
        }
    }
    let mut out = String::new();
    let head = next();
    if head % 3 == 0 {
        out.push_str("[&R] ");
    }
    go(tree, names, &mut next, &mut out);
    if head % 2 == 0 {
        out.push(';');
    }
    if head % 5 == 0 {
        out.push_str(" \n");
    }
    out
}

/// Newick-ish text: trees over names or indices (Newick or a JSON list)
/// with a few random edits, and raw junk over the same pieces.
fn newick_junk() -> impl Strategy<Value = String> {
    let names: Vec<String> = checks::newick_alphabet();
    let piece = prop_oneof![
        prop::sample::select(names),
        prop::sample::select(vec![
            "(", ")", ",", ";", "'", "''", ":1.5", ":", "[&R]", "[", "]", "_", " ", "\u{feff}",
        ])
        .prop_map(String::from),
        "[0-9]{1,2}",
        "\\PC{0,2}",
    ];
    let edited = (
        named_tree(),
        0..3u8,
        prop::collection::vec(
            (any::<prop::sample::Index>(), any::<bool>(), piece.clone()),
            0..4,
        ),
    )
        .prop_map(|((tree, bytes), form, edits)| {
            let mut text = match form {
                0 => decorate(&tree, &checks::newick_alphabet(), &bytes),
                1 => {
                    let digits: Vec<String> = (0..9).map(|i| i.to_string()).collect();
                    decorate(&tree, &digits, &bytes)
                }
                _ => tree.fold(|i| i.to_string(), |l, r| format!("[{l},{r}]")),
            };
            for (at, delete, piece) in edits {
                let chars: Vec<char> = text.chars().collect();
                let k = at.index(chars.len() + 1);
                let mut out: String = chars[..k].iter().collect();
                if !delete {
                    out += &piece;
                }
                let rest = if delete { (k + 1).min(chars.len()) } else { k };
                out.extend(&chars[rest..]);
                text = out;
            }
            text
        });
    let junk = prop::collection::vec(piece, 0..30).prop_map(|p| p.concat());
    prop_oneof![3 => edited, 1 => junk]
}

proptest! {
    #![proptest_config(config(256))]

    /// A tree written with names in any Newick style reads as that tree.
    #[test]
    fn issue22_named_newick_reads_as_its_tree((tree, bytes) in named_tree()) {
        let names = checks::newick_alphabet();
        let text = decorate(&tree, &names, &bytes);
        let read = trellis::read_tree(&text, Some(&names))
            .map_err(|e| TestCaseError::fail(format!("{e} in {text:?}")))?;
        prop_assert_eq!(&read, &tree, "in {:?}", text);
        checks::newick_names(text.as_bytes());
    }

    /// A label that is not one of the names is refused, naming it.
    #[test]
    fn issue22_a_label_that_is_not_a_name_is_refused(
        (tree, bytes) in named_tree(),
        stranger in prop::sample::select(vec!["zz", "3", "00", "b", "x y", "o'k'"]),
    ) {
        let names = checks::newick_alphabet();
        let text = decorate(&tree, &names, &bytes);
        // Replace the first leaf's label (bare or quoted) by the stranger.
        let first = &names[tree.leaves()[0]];
        let quoted = format!("'{}'", first.replace('\'', "''"));
        let (at, len) = match text.find(&quoted) {
            Some(at) => (at, quoted.len()),
            None => (text.find(first.as_str()).expect("the label is in the text"), first.len()),
        };
        let label = format!("'{}'", stranger.replace('\'', "''"));
        let changed = format!("{}{label}{}", &text[..at], &text[at + len..]);
        match trellis::read_tree(&changed, Some(&names)) {
            Ok(t) => {
                return Err(TestCaseError::fail(format!("{changed:?} read as {t:?}")));
            }
            Err(e) => prop_assert!(
                e.to_string().contains(&format!("{stranger:?}")),
                "{changed:?}: {e}"
            ),
        }
    }

    /// Junk is read or refused, never a panic; what reads keeps the invariants.
    #[test]
    fn issue22_newick_junk_keeps_the_invariants(text in newick_junk()) {
        checks::newick_names(text.as_bytes());
    }
}

/// The fixed cases that the generators reach only by chance.
#[test]
fn issue22_fuzz_checks_on_fixed_inputs() {
    for text in [
        "name,x\n\"#1\",2\n3,4\n",
        "\u{feff}id,x\r\n2,1\r\n1,2\r\n",
        "name,x,text\na,1,\"b, c\"\n",
        "a,1\nb,2\n\"c,3\n",
        "name,x\n\"a\nb\",1\n",
        ",,,\n,,,\n",
        "\"\"\"big\"\"\",1\nb,2\n",
    ] {
        checks::csv_names(text.as_bytes());
    }
    for text in [
        "((2,0),(1,a));",
        "[&R] (('b c':1,x_y),'o''k');",
        "(((('(p)'))));",
        "((a,a),b);",
        "('a',b c);",
        "",
        "(",
        "'unterminated",
        "((0,1),2);",
        "[[0,1],2]",
        "[0,0]",
        "[0,12]",
    ] {
        checks::newick_names(text.as_bytes());
    }
}

/// Found by the issue-22 sweep: a name whose value starts and ends with a
/// double quote (`"big"`, written `"""big"""` as RFC 4180 says) keeps its
/// quotes (the reader unquoted it a second time), as Python's `csv` reads it.
#[test]
fn issue22_a_name_in_quotes_keeps_its_quotes() {
    let options = ReadOptions::points().with_names(NamesColumn::Column(0));
    let t = trellis::io::parse_table("name,x\n\"\"\"big\"\"\",1\nb,2\n", &options).unwrap();
    assert_eq!(t.names.unwrap(), ["\"big\"", "b"]);
}

/// Found by the issue-22 sweep: `read_tree` checks a nested JSON list's
/// indices too: `[0,0]` (a leaf used twice) and `[0,12]` (beyond the names)
/// are refused, with or without names (`((0,0));` too).
#[test]
fn issue22_read_tree_checks_json_lists() {
    let names = checks::newick_alphabet();
    for text in ["[0,0]", "[[1,2],1]", "[0,12]"] {
        assert!(
            trellis::read_tree(text, Some(&names)).is_err(),
            "{text} reads"
        );
    }
    for text in ["[0,0]", "((0,0));", "[[1,2],1]"] {
        assert!(trellis::read_tree(text, None).is_err(), "{text} reads");
    }
}
