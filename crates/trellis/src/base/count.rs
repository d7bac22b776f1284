//! Exact numbers of binary hierarchies, in arbitrary precision.
//!
//! The full trellis over `n` points realises every rooted binary tree with
//! labelled leaves: `(2n-3)!! = 1·3·5···(2n-3)` of them (1 for n = 1, 2), which
//! exceeds `u64` at n = 19 and `u128` at n = 30. A sparse trellis, whose
//! vertices are a chosen family of clusters, realises the trees all of whose
//! clusters belong to the family; [`num_trees_within`] counts them with the
//! trellis recursion `C(S) = Σ_{L ∋ min S} C(L)·C(S∖L)` restricted to the family.
//! Flat clusterings of `n` points are counted by the Bell numbers ([`bell`]).

use std::collections::HashMap;

use num_bigint::BigUint;

use crate::base::set::{Mask, lowest};

/// `(2n-3)!!`, the number of rooted binary trees over `n ≥ 1` labelled leaves.
pub fn num_trees(n: usize) -> BigUint {
    let mut r = BigUint::from(1u32);
    let mut k = 3u64;
    while n >= 2 && k < 2 * n as u64 - 1 {
        r *= k;
        k += 2;
    }
    r
}

/// The same count by the trellis recursion over cluster sizes:
/// `c(k) = Σ_{j=1}^{k-1} C(k-1, j-1)·c(j)·c(k-j)` (the part holding the first
/// point has `j` points). An independent check of [`num_trees`].
pub fn num_trees_by_size(n: usize) -> BigUint {
    let mut binom: Vec<Vec<BigUint>> = Vec::with_capacity(n + 1);
    for k in 0..=n {
        let mut row = vec![BigUint::from(1u32); k + 1];
        for j in 1..k {
            row[j] = &binom[k - 1][j - 1] + &binom[k - 1][j];
        }
        binom.push(row);
    }
    let mut c = vec![BigUint::from(0u32); n.max(1) + 1];
    c[1] = BigUint::from(1u32);
    for k in 2..=n {
        let mut total = BigUint::from(0u32);
        for j in 1..k {
            total += &binom[k - 1][j - 1] * &c[j] * &c[k - j];
        }
        c[k] = total;
    }
    c[n.max(1)].clone()
}

/// Number of binary trees over the points of `root` whose every non-singleton
/// cluster is in `clusters` (singletons are always allowed; `root` must be
/// listed unless it is a single point). This is the count a sparse trellis with
/// these vertices realises. Time `O(|clusters|²)`.
pub fn num_trees_within(root: Mask, clusters: &[Mask]) -> BigUint {
    let mut family: Vec<Mask> = clusters
        .iter()
        .copied()
        .filter(|&c| c & !root == 0 && c.count_ones() >= 2)
        .collect();
    family.sort_by_key(|c| (c.count_ones(), *c));
    family.dedup();
    let mut count: HashMap<Mask, BigUint> = HashMap::new();
    let get = |count: &HashMap<Mask, BigUint>, m: Mask| -> Option<BigUint> {
        if m.count_ones() == 1 {
            Some(BigUint::from(1u32))
        } else {
            count.get(&m).cloned()
        }
    };
    for (idx, &s) in family.iter().enumerate() {
        let low = lowest(s);
        let mut total = BigUint::from(0u32);
        // Left parts: singletons {low} and smaller family members holding `low`.
        let lefts = std::iter::once(low).chain(
            family[..idx]
                .iter()
                .copied()
                .filter(|&l| l & low != 0 && l & !s == 0 && l != s),
        );
        for l in lefts {
            if let (Some(a), Some(b)) = (get(&count, l), get(&count, s ^ l)) {
                total += a * b;
            }
        }
        count.insert(s, total);
    }
    if root.count_ones() == 1 {
        return BigUint::from(1u32);
    }
    count.remove(&root).unwrap_or_default()
}

/// Bell(n), the number of partitions of `n` points (Bell triangle).
pub fn bell(n: usize) -> BigUint {
    let mut row = vec![BigUint::from(1u32)];
    for _ in 1..n.max(1) {
        let mut next = Vec::with_capacity(row.len() + 1);
        next.push(row.last().expect("non-empty").clone());
        for x in &row {
            let v = next.last().expect("non-empty") + x;
            next.push(v);
        }
        row = next;
    }
    if n == 0 {
        BigUint::from(1u32)
    } else {
        row.last().expect("non-empty").clone()
    }
}

/// `log10 x` of a count too large for a float (from its leading 17 decimal
/// digits and its number of digits; `-∞` for 0). Ratios of such counts,
/// e.g. a sparse trellis's share of all trees, are differences of these.
pub fn log10(x: &BigUint) -> f64 {
    let digits = x.to_string();
    let lead: f64 = digits[..digits.len().min(17)].parse().unwrap_or(0.0);
    lead.log10() + (digits.len() - digits.len().min(17)) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bell_numbers() {
        let known = [1u64, 1, 2, 5, 15, 52, 203, 877, 4140, 21147, 115975];
        for (n, &b) in known.iter().enumerate() {
            assert_eq!(bell(n), BigUint::from(b), "Bell({n})");
        }
    }

    #[test]
    fn double_factorial_values() {
        let known = [1u64, 1, 1, 3, 15, 105, 945, 10395, 135135, 2027025];
        for (n, &v) in known.iter().enumerate().skip(1) {
            assert_eq!(num_trees(n), BigUint::from(v), "n = {n}");
        }
        // 57!! for n = 30 exceeds u128.
        assert!(num_trees(30) > BigUint::from(u128::MAX));
    }

    #[test]
    fn size_recursion_agrees_with_closed_form() {
        for n in 1..=60 {
            assert_eq!(num_trees_by_size(n), num_trees(n), "n = {n}");
        }
    }

    #[test]
    fn full_family_realises_every_tree() {
        for n in 1..=9 {
            let all: Vec<Mask> = (1..1u32 << n).collect();
            assert_eq!(
                num_trees_within((1 << n) - 1, &all),
                num_trees(n),
                "n = {n}"
            );
        }
    }

    #[test]
    fn one_tree_family_realises_one_tree() {
        // Clusters of ((0,1),(2,(3,4))).
        let fam = [0b11111, 0b00011, 0b11100, 0b11000];
        assert_eq!(num_trees_within(0b11111, &fam), BigUint::from(1u32));
        // Missing the root: nothing.
        assert_eq!(num_trees_within(0b11111, &fam[1..]), BigUint::from(0u32));
    }
}
