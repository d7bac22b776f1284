//! The checks of the fuzz targets, shared with the regression test that
//! replays every input the fuzzer ever found (`fuzz/regressions/<target>/`,
//! run by `crates/trellis/tests/issue11_fuzz.rs`). Each check takes any
//! bytes: a refusal is fine, a panic or a broken invariant is a finding.
#![allow(dead_code, clippy::needless_range_loop)]

use trellis::flat::FlatTrellis;
use trellis::ginkgo::JetsFile;
use trellis::io::{NamesColumn, ReadOptions, Table};
use trellis::{CorrelationClustering, Hcc, Matrix, Tree, Trellis, Weights};

/// A finite f64 from 8 bytes: either the raw bits, or a small mantissa
/// times a power of ten (to hit ordinary values as often as extreme ones).
pub fn number(b: &[u8]) -> Option<f64> {
    let bits = u64::from_le_bytes(b.try_into().ok()?);
    let x = if b[0] & 1 == 0 {
        f64::from_bits(bits)
    } else {
        let mantissa = (b[1] as i8) as f64 / 16.0;
        let exponent = (b[2] as i8 as i32).clamp(-300, 300);
        mantissa * 10f64.powi(exponent)
    };
    x.is_finite().then_some(x)
}

/// `log Σ exp(x)` of finite or `-∞` terms.
fn log_sum_exp(xs: impl Iterator<Item = f64>) -> f64 {
    let xs: Vec<f64> = xs.collect();
    let m = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + xs.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
}

/// Agreement up to rounding relative to the magnitudes involved.
fn close(a: f64, b: f64, scale: f64) -> bool {
    (a - b).abs() <= 1e-7 * (1.0 + scale.abs())
}

/// Every partition of `0..n` as lists of clusters (bitmasks).
fn partitions(n: usize) -> Vec<Vec<u32>> {
    let mut out = vec![vec![]];
    for i in 0..n {
        let mut next = Vec::new();
        for p in &out {
            for k in 0..p.len() {
                let mut q = p.clone();
                q[k] |= 1 << i;
                next.push(q);
            }
            let mut q = p.clone();
            q.push(1 << i);
            next.push(q);
        }
        out = next;
    }
    out
}

/// CSV weights and points: any text is parsed or refused, never a panic.
pub fn csv(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        for header in [false, true] {
            if let Ok(m) = trellis::io::parse_csv(text, header) {
                assert!(m.rows > 0 && m.cols > 0);
                // Validation as weights: refused or square, finite, symmetric.
                let _ = trellis::Weights::from_matrix(&m);
            }
        }
        let _ = trellis::io::parse_clusters::<trellis::Set>(text, 12);
        let _ = trellis::io::parse_clusters::<trellis::WideSet>(text, 200);
    }
}

/// `.npy` matrices: any bytes are parsed or refused, never a panic or an
/// allocation larger than the data.
pub fn npy(data: &[u8]) {
    if let Ok(m) = trellis::io::parse_npy(data) {
        assert!(m.rows.saturating_mul(m.cols) <= data.len());
        let _ = trellis::Weights::from_matrix(&m);
    }
}

/// Jets files: any text is read or refused; a file that reads writes back
/// to a file that reads to the same jets.
pub fn jets(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(file) = JetsFile::parse(text)
    {
        let again = JetsFile::parse(&file.to_json_string()).expect("our own output reads back");
        assert_eq!(again.jets.len(), file.jets.len());
    }
}

/// Trees (Newick and nested JSON) and named Newick hierarchies: parsed or
/// refused, at any depth, never a stack overflow; a tree that parses prints
/// to text that parses to the same tree.
pub fn newick(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(t) = trellis::Tree::parse(text) {
            assert_eq!(trellis::Tree::parse(&t.to_newick()).expect("round trip"), t);
            let _ = t.validate(t.num_leaves(), true);
        }
        if let Ok(h) = trellis::ddt::Hierarchy::parse_newick(text) {
            let names: Vec<String> = h.leaf_names().into_iter().map(String::from).collect();
            let _ = h.lca_depths(&names);
        }
    }
}

/// CSV points with a names column (RFC 4180, the `csv` crate): any text is
/// read or refused under every names rule, never a panic. A table that reads
/// has one distinct non-empty name per row, finite numbers, a text column
/// value per row, and reads back the same from its own RFC 4180 form.
pub fn csv_names(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for names in [
        NamesColumn::Auto,
        NamesColumn::Column(0),
        NamesColumn::Column(1),
        NamesColumn::None,
    ] {
        for header in [true, false] {
            let mut options = ReadOptions::points()
                .with_names(names)
                .with_text_columns(["text"]);
            options.header = header;
            if let Ok(table) = trellis::io::parse_table(text, &options) {
                check_table(&table);
                if names == NamesColumn::None {
                    assert!(table.names.is_none(), "names without a names column");
                }
            }
        }
    }
}

/// The invariants of a table that reads (see [`csv_names`]).
pub fn check_table(t: &Table) {
    let m = &t.matrix;
    assert!(m.rows > 0, "a table without rows");
    assert_eq!(m.data.len(), m.rows * m.cols, "the matrix's shape");
    assert!(
        m.data.iter().all(|x| x.is_finite()),
        "a non-finite number read"
    );
    if let Some(columns) = &t.columns {
        assert_eq!(columns.len(), m.cols, "one header field per numeric column");
    }
    for column in &t.text {
        assert_eq!(column.values.len(), m.rows, "text column {:?}", column.name);
    }
    let Some(names) = &t.names else {
        return;
    };
    assert_eq!(names.len(), m.rows, "one name per row");
    let mut seen = std::collections::HashSet::new();
    for name in names {
        assert!(!name.is_empty(), "an empty name");
        assert!(seen.insert(name.as_str()), "the name {name:?} twice");
    }
    // Every name is trimmed (quoted or not), so each reads back as written.
    if m.cols == 0 {
        return;
    }
    for name in names {
        assert_eq!(name.trim(), name, "a name with surrounding blanks");
    }
    let again = trellis::io::parse_table(
        &to_rfc4180(t),
        &ReadOptions::points().with_names(NamesColumn::Column(0)),
    )
    .expect("a table written as RFC 4180 reads back");
    assert_eq!(
        again.names.as_ref(),
        Some(names),
        "names after a round trip"
    );
    assert_eq!((again.matrix.rows, again.matrix.cols), (m.rows, m.cols));
    assert_eq!(again.matrix.data, m.data, "numbers after a round trip");
}

/// A table with names as RFC 4180 text: a header `name,"c0",..`, every name
/// quoted (doubled quotes inside), numbers in Rust's shortest round-trip
/// form, CRLF line ends.
pub fn to_rfc4180(t: &Table) -> String {
    let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    let m = &t.matrix;
    let mut out = String::from("name");
    for j in 0..m.cols {
        out += &format!(",{}", quote(&format!("c{j}")));
    }
    out += "\r\n";
    let names = t.names.as_ref().expect("a table with names");
    for (i, name) in names.iter().enumerate() {
        out += &quote(name);
        for x in m.row(i) {
            out += &format!(",{x:?}");
        }
        out += "\r\n";
    }
    out
}

/// The names that the Newick checks read labels against: digits in another
/// order than their indices, words that Newick must quote, a quote.
pub fn newick_alphabet() -> Vec<String> {
    ["2", "0", "1", "a", "b c", "x_y", "o'k", "(p)", "#h"]
        .map(String::from)
        .to_vec()
}

/// Newick with the points' names ([`trellis::read_tree`]): any text is read
/// or refused, never a panic. A tree that reads over names has distinct
/// leaves, each an index of a name, and reads back the same from
/// `to_newick_named`; without names, from `to_newick`.
pub fn newick_names(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let names = newick_alphabet();
    if let Ok(t) = trellis::read_tree(text, Some(&names)) {
        check_named_tree(&t, &names, text);
    }
    if let Ok(t) = trellis::read_tree(text, None) {
        let again = trellis::read_tree(&t.to_newick(), None).expect("our own Newick reads back");
        assert_eq!(again, t, "index Newick round trip of {text:?}");
    }
}

/// The invariants of a tree read over `names` (see [`newick_names`]).
pub fn check_named_tree(t: &Tree, names: &[String], text: &str) {
    let mut seen = vec![false; names.len()];
    for i in t.leaves() {
        assert!(
            i < names.len(),
            "leaf {i} beyond the {} names: {text:?}",
            names.len()
        );
        assert!(!seen[i], "leaf {i} twice: {text:?}");
        seen[i] = true;
    }
    let written = t.to_newick_named(names);
    let again = trellis::read_tree(&written, Some(names))
        .unwrap_or_else(|e| panic!("our own Newick {written:?} does not read back: {e}"));
    assert_eq!(
        &again, t,
        "named Newick round trip of {text:?} via {written:?}"
    );
}

/// Triplet files over a few named points: parsed or refused, never a panic.
pub fn triplets(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let names: Vec<String> = ["a", "b", "c", "d", "e"].map(String::from).to_vec();
        if let Ok(ts) = trellis::ddt::parse_triplets(text, &names) {
            let _ = trellis::ddt::build(names.len(), &ts);
        }
    }
}

/// The numeric core at any temperature: random weights and β over the whole
/// f64 range (read from the input's bytes), checked against the invariants
/// of an exact answer, and against brute-force enumeration for n ≤ 6:
///
/// - hierarchies: `log φ(MAP) ≤ log Z ≤ log φ(MAP) + ln (2n-3)!!`, `log Z`
///   equal to the log-sum-exp over every tree, cluster marginals in [0, 1]
///   summing to `n - 2`, a sample that is a hierarchy over the points;
/// - partitions: the same with the Bell number and every partition.
///
/// A model that refuses its input (an overflowing cost) is a valid answer.
pub fn numeric(data: &[u8]) {
    if data.len() < 10 {
        return;
    }
    let n = 2 + (data[0] as usize % 6);
    let Some(beta) = number(&data[1..9]) else {
        return;
    };
    let rest = &data[9..];
    let mut rows = vec![vec![0.0; n]; n];
    let mut k = 0;
    for i in 0..n {
        for j in i + 1..n {
            let w = rest.get(8 * k..8 * k + 8).and_then(number).unwrap_or(0.0);
            rows[i][j] = w;
            rows[j][i] = w;
            k += 1;
        }
    }
    let Ok(w) = Weights::from_matrix(&Matrix::from_rows(rows).expect("square")) else {
        return;
    };

    if let Ok(model) = Hcc::new(&w, beta)
        && let Ok(trellis) = Trellis::new(model)
    {
        let log_z = trellis.log_z();
        let map = trellis.map().log_potential;
        assert!(
            log_z.is_finite() && map.is_finite(),
            "log Z {log_z}, MAP {map}"
        );
        let trees = Tree::all(n);
        let ln_trees = (trees.len() as f64).ln();
        assert!(
            map <= log_z + 1e-9 * (1.0 + map.abs()),
            "MAP {map} above log Z {log_z}"
        );
        assert!(
            log_z <= map + ln_trees + 1e-9 * (1.0 + map.abs()),
            "log Z {log_z}, MAP {map}"
        );
        let brute = log_sum_exp(trees.iter().map(|t| trellis.tree_log_potential(t).unwrap()));
        assert!(
            close(log_z, brute, map),
            "log Z {log_z} vs brute force {brute}"
        );
        let marginals = trellis.marginals().expect("marginals");
        let all = marginals.clusters(0.0);
        assert!(all.iter().all(|&(_, p)| (0.0..=1.0).contains(&p)));
        let total: f64 = all.iter().map(|&(_, p)| p).sum();
        assert!(
            (total - (n as f64 - 2.0)).abs() < 1e-6,
            "Σ P(S) = {total}, n = {n}"
        );
        let sample = trellis.samples(1, 7).pop().expect("one sample");
        sample
            .validate(n, true)
            .expect("a hierarchy over the points");
    }

    if let Ok(energy) = CorrelationClustering::new(&w, beta)
        && let Ok(flat) = FlatTrellis::new(energy)
    {
        let log_z = flat.log_z();
        let map = flat.map().log_energy;
        assert!(
            log_z.is_finite() && map.is_finite(),
            "flat log Z {log_z}, MAP {map}"
        );
        let parts = partitions(n);
        let ln_parts = (parts.len() as f64).ln();
        assert!(map <= log_z + 1e-9 * (1.0 + map.abs()));
        assert!(log_z <= map + ln_parts + 1e-9 * (1.0 + map.abs()));
        let brute = log_sum_exp(parts.iter().map(|p| {
            p.iter()
                .map(|&c| flat.log_energy_of(c).unwrap())
                .sum::<f64>()
        }));
        assert!(
            close(log_z, brute, map),
            "flat log Z {log_z} vs brute force {brute}"
        );
        let marginals = flat.marginals();
        assert!(
            marginals
                .clusters(0.0)
                .iter()
                .all(|&(_, p)| (0.0..=1.0).contains(&p))
        );
        for i in 0..n {
            let p = marginals.pairwise(i, i).unwrap_or(1.0);
            assert!((0.0..=1.0 + 1e-9).contains(&p));
        }
    }
}
