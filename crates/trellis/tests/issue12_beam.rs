//! Issue 12, beam search at scale: the A* paper's default width, memory that
//! grows with the width (an estimate checked before allocating), and the
//! best tree of brute force when the width covers every partial clustering.

use trellis::baselines::{
    LARGE_WIDTH, SMALL_POINTS, beam_memory, beam_search, beam_search_with, default_beam_width,
    greedy,
};
use trellis::{Dasgupta, ErrorKind, Hcc, Options, tree_log_potential};

use crate::oracle::{abs_matrix, lib_weights, random_weights, trees};

#[test]
fn default_width_follows_the_astar_paper() {
    // N(N-1)/2 up to 40 points, 1000 above (A* paper, §5).
    assert_eq!((SMALL_POINTS, LARGE_WIDTH), (40, 1000));
    assert_eq!(default_beam_width(0), 1);
    assert_eq!(default_beam_width(1), 1);
    assert_eq!(default_beam_width(2), 1);
    assert_eq!(default_beam_width(3), 3);
    assert_eq!(default_beam_width(40), 780);
    assert_eq!(default_beam_width(41), 1000);
    assert_eq!(default_beam_width(200), 1000);
    assert_eq!(default_beam_width(100_000), 1000);
}

#[test]
fn memory_grows_with_the_width_not_the_square_of_the_points() {
    // The default width at 200 points fits well below 1 GB (it took 9.8 GB and
    // more with the width N(N-1)/2 and the cache of every pair's score).
    let at_200 = beam_memory(200, default_beam_width(200));
    assert!(at_200 < 1 << 30, "{at_200} bytes");
    // At a fixed width, twice the points cost less than twice the memory
    // (the candidate lists are bounded by the width) ...
    let at_400 = beam_memory(400, 1000);
    assert!(at_400 < 2 * at_200, "{at_400} vs {at_200}");
    // ... and the estimate grows with the width.
    assert!(beam_memory(200, 100) < beam_memory(200, 1000));
    // Width 1 (greedy) on 10,000 points stays small.
    assert!(beam_memory(10_000, 1) < 64 << 20);
    // A width beyond any memory is refused before anything is allocated.
    let w = lib_weights(&random_weights(8, 1, 1.0));
    let e = beam_search(&Hcc::new(&w, 1.0).unwrap(), 1 << 60).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::TooMuchMemory { .. }), "{e}");
}

#[test]
fn the_estimate_is_checked_before_allocating() {
    let w = lib_weights(&random_weights(30, 7, 1.0));
    let model = Hcc::new(&w, 1.0).unwrap();
    let needed = beam_memory(30, 200);
    let options = Options::default().with_memory_limit(needed - 1);
    let e = beam_search_with(&model, 200, &options).unwrap_err();
    match e.kind() {
        ErrorKind::TooMuchMemory {
            needed: n,
            limit,
            capped,
            ..
        } => {
            assert_eq!((*n, *limit, *capped), (needed, needed - 1, true));
        }
        other => panic!("{other:?}"),
    }
    let text = e.to_string();
    assert!(
        text.contains("beam search over 30 points at width 200"),
        "{text}"
    );
    // At the limit it runs, with the result of the search without a limit.
    let options = Options::default().with_memory_limit(needed);
    assert_eq!(
        beam_search_with(&model, 200, &options).unwrap(),
        beam_search(&model, 200).unwrap()
    );
}

/// With a width above the number of partial clusterings, beam search keeps
/// them all and returns the best tree of the brute-force enumeration.
#[test]
fn an_unbounded_width_finds_the_brute_force_optimum() {
    for n in 2..=7 {
        for seed in 0..4 {
            let raw = random_weights(n, 100 + seed, 1.0);
            let hcc = Hcc::new(&lib_weights(&raw), 1.3).unwrap();
            let das = Dasgupta::new(&lib_weights(&abs_matrix(&raw)), 0.4).unwrap();
            check_exhaustive(&hcc, n);
            check_exhaustive(&das, n);
        }
    }
}

fn brute_best<M: trellis::Model>(model: &M, n: usize) -> f64 {
    trees(n)
        .iter()
        .map(|t| tree_log_potential(model, &t.tree).unwrap())
        .fold(f64::NEG_INFINITY, f64::max)
}

fn check_exhaustive<M: trellis::Model>(model: &M, n: usize) {
    let best = brute_best(model, n);
    let beams = beam_search(model, 1 << 20).unwrap();
    let found = beams[0].log_potential;
    let tol = 1e-9 * best.abs().max(1.0);
    assert!(
        (found - best).abs() <= tol,
        "n {n}: beam {found}, brute force {best}"
    );
    // The tree returned has the value reported.
    let value = tree_log_potential(model, &beams[0].tree).unwrap();
    assert!((value - found).abs() <= tol, "n {n}");
    // Greedy is one of the trees kept.
    let g = greedy(model).unwrap().log_potential;
    assert!(found >= g - tol, "n {n}");
}
