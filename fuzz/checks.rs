//! The checks of the fuzz targets, shared with the regression test that
//! replays every input the fuzzer ever found (`fuzz/regressions/<target>/`,
//! run by `crates/trellis/tests/issue11_fuzz.rs`). Each check takes any
//! bytes: a refusal is fine, a panic or a broken invariant is a finding.
#![allow(dead_code, clippy::needless_range_loop)]

use trellis::flat::FlatTrellis;
use trellis::ginkgo::JetsFile;
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
