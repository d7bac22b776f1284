//! Issue 22, class 11: a family of clusters is built and checked for
//! closedness under recursive complement without quadratic work in the
//! number of clusters where the subset relations are few, and a family that
//! would need too many subset tests is refused before any is made.

use trellis::sparse::SparseTrellis;
use trellis::{ErrorKind, Set};

/// Every 3-point cluster over 86 points (102,340 clusters): none is inside
/// another, so only the whole set has subsets; its first one has no
/// complement in the family. Refused naming the pair (checking every pair
/// of clusters, as before, took 9 s here).
#[test]
fn issue22_many_clusters_without_subsets_are_checked_quickly() {
    let n = 86;
    let mut family = Vec::new();
    for a in 0..n {
        for b in a + 1..n {
            for c in b + 1..n {
                family.push((1 as Set) << a | (1 as Set) << b | (1 as Set) << c);
            }
        }
    }
    assert_eq!(family.len(), 102_340);
    let e = SparseTrellis::flat(n, family.iter().copied()).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Parameter { .. }), "{e:?}");
    assert!(
        e.to_string()
            .contains("not closed under recursive complement: [0, 1, 2] is inside"),
        "{e}"
    );
    // As a hierarchical family it is fine: its trellis has the root, the
    // singletons and the triples, and no split of the root.
    let t = SparseTrellis::from_clusters(n, family.iter().copied()).unwrap();
    assert_eq!(t.num_vertices(), 102_340 + n + 1);
}

/// 100,000 distinct clusters that all hold point 0 need about 10^10 subset
/// tests: refused up front, for both kinds, naming the count.
#[test]
fn issue22_a_family_needing_too_many_subset_tests_is_refused() {
    let n = 128;
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut family: Vec<Set> = (0..100_000)
        .map(|_| ((next() as Set) << 64 | next() as Set) | 1)
        .collect();
    family.sort_unstable();
    family.dedup();
    assert!(family.len() > 99_000);
    for result in [
        SparseTrellis::flat(n, family.iter().copied()).map(|_| ()),
        SparseTrellis::from_clusters(n, family.iter().copied()).map(|_| ()),
    ] {
        let e = result.unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Parameter { .. }), "{e:?}");
        assert!(e.to_string().contains("subset tests"), "{e}");
    }
}
