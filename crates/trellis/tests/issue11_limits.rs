//! Issue 11, limits: A*'s memory accounting stops at its budget before
//! allocating past it, durations beyond the clock are no limit, the
//! simulator refuses runaway parameters and finishes on extreme ones, the DDT
//! refuses parameters with which its density is not finite, and the memory
//! messages say whose limit they hit.

use std::time::{Duration, Instant};

use trellis::astar::{ApproxOptions, approximate, exact};
use trellis::ddt::{Chain, Dataset, Ddt, Hierarchy, LoopOptions, Params, Simulation, Strategy};
use trellis::ginkgo::{MAX_JET_LEAVES, SimulatorParams, generate, generate_file, generate_stream};
use trellis::{
    ErrorKind, Hcc, Matrix, Options, Tree, Trellis, Weights, Workload, check_memory, memory_needed,
};

/// A deterministic weight matrix of mixed signs.
#[allow(clippy::needless_range_loop)]
fn weights(n: usize) -> Weights {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        ((x >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    };
    let mut rows = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in i + 1..n {
            let v = next();
            rows[i][j] = v;
            rows[j][i] = v;
        }
    }
    Weights::from_matrix(&Matrix::from_rows(rows).unwrap()).unwrap()
}

fn caterpillar(n: usize) -> Tree {
    (1..n).fold(Tree::Leaf(0), |t, i| Tree::node(t, Tree::Leaf(i)))
}

/// A balanced tree over `lo..hi`.
fn balanced(lo: usize, hi: usize) -> Tree {
    if hi - lo == 1 {
        return Tree::Leaf(lo);
    }
    let mid = (lo + hi) / 2;
    Tree::node(balanced(lo, mid), balanced(mid, hi))
}

// --- A* memory accounting ---------------------------------------------------

#[test]
fn exact_astar_stops_at_its_budget_before_allocating() {
    // The root of 128 points has 2^127 splits: refused before any is listed,
    // with the default budget (half the memory available) as with a cap.
    let model = Hcc::new(&weights(128), 1.0).unwrap();
    for limit in [None, Some(64 << 20)] {
        let options = Options {
            memory_limit: limit,
            ..Options::default()
        };
        let start = Instant::now();
        let e = exact(&model, &options).unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::SearchBudget { explored: 0, .. }),
            "{e}"
        );
        assert!(start.elapsed() < Duration::from_secs(5));
    }
    // A budget reached part way through: the search stops with the error.
    let model = Hcc::new(&weights(22), 1.0).unwrap();
    let options = Options {
        memory_limit: Some(4 << 20),
        ..Options::default()
    };
    let e = exact(&model, &options).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::SearchBudget { bytes, .. } if *bytes == 4 << 20),
        "{e}"
    );
    // The message states the budget; the advice is the caller's (the CLI
    // names its flags).
    assert!(e.to_string().contains("memory budget of 4.0 MiB"), "{e}");
    assert!(!e.to_string().contains("raise"), "{e}");
}

#[test]
fn exact_astar_within_its_budget_is_unchanged() {
    let w = weights(12);
    let model = Hcc::new(&w, 1.0).unwrap();
    let options = Options {
        memory_limit: Some(256 << 20),
        ..Options::default()
    };
    let found = exact(&model, &options).unwrap();
    let dp = Trellis::new(Hcc::new(&w, 1.0).unwrap()).unwrap();
    assert!((found.best.log_potential - dp.map().log_potential).abs() < 1e-9);
    assert!(found.exact);
}

#[test]
fn approximate_astar_at_its_budget_returns_the_best_tree() {
    // Every split of 40-point vertices would be listed: far past the budget,
    // so the search stops and returns its best tree, inexact.
    let model = Hcc::new(&weights(40), 1.0).unwrap();
    let init = [balanced(0, 40)];
    let options = ApproxOptions {
        exact_size: 40,
        ..ApproxOptions::default()
    };
    let run = Options {
        memory_limit: Some(16 << 20),
        ..Options::default()
    };
    let found = approximate(&model, &init, &options, &run).unwrap();
    assert!(!found.exact);
    assert!(found.cost <= trellis::tree_cost(&model, &init[0]).unwrap() + 1e-9);
    // So do absurd numbers of sampled candidates and children.
    let options = ApproxOptions {
        samples: usize::MAX,
        top_k: usize::MAX,
        ..ApproxOptions::default()
    };
    let found = approximate(&model, &init, &options, &run).unwrap();
    assert!(!found.exact);
}

#[test]
fn durations_beyond_the_clock_are_no_limit() {
    let w = weights(8);
    let model = Hcc::new(&w, 1.0).unwrap();
    let options = Options {
        time_limit: Some(Duration::MAX),
        ..Options::default()
    };
    assert!(exact(&model, &options).unwrap().exact);
    let approx = approximate(
        &model,
        &[caterpillar(8)],
        &ApproxOptions::default(),
        &options,
    );
    assert!(approx.is_ok());
    assert!(Trellis::with_options(Hcc::new(&w, 1.0).unwrap(), &options).is_ok());
}

// --- Memory messages --------------------------------------------------------

#[test]
fn memory_messages_say_whose_limit() {
    let capped = check_memory(20, Workload::Inside, Some(10 << 20)).unwrap_err();
    assert!(matches!(
        capped.kind(),
        ErrorKind::OutOfMemory { capped: true, .. }
    ));
    let text = capped.to_string();
    assert!(text.contains("the memory limit of 10.0 MiB"), "{text}");
    assert!(!text.contains("available"), "{text}");
    // More points than the dense trellis takes: the memory it would need.
    let e = check_memory(40, Workload::Inside, None).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::TooManyPoints { n: 40, .. }));
    assert!(e.to_string().contains("at least 16.0 TiB"), "{e}");
    let e = check_memory(100_000, Workload::Inside, None).unwrap_err();
    assert!(e.to_string().contains("2^100000"), "{e}");
    assert_eq!(memory_needed(70, Workload::Marginals), u64::MAX);
    assert!(memory_needed(20, Workload::FlatMarginals) > memory_needed(20, Workload::FlatInside));
}

// --- The simulator ----------------------------------------------------------

#[test]
fn simulator_finishes_on_tiny_rates() {
    let start = Instant::now();
    for lambda in [1e-10, 1e-300, f64::MIN_POSITIVE] {
        let params = SimulatorParams {
            lambda,
            lambda_root: lambda,
            ..SimulatorParams::qcd()
        };
        let jets = generate(&params, 20, 2, usize::MAX, 1).unwrap();
        assert_eq!(jets.len(), 20);
        for j in &jets {
            assert!(j.leaves.iter().flatten().all(|x| x.is_finite()));
            assert!(j.extra["truth_log_likelihood"].is_number());
        }
    }
    assert!(start.elapsed() < Duration::from_secs(60));
}

#[test]
fn simulator_refuses_runaway_parameters() {
    // A cut far below the mass: the shower would grow without end.
    let runaway = SimulatorParams {
        t_cut: 1e-9,
        lambda: 0.001,
        lambda_root: 0.001,
        jet_momentum: [0.0, 0.0, 0.0],
        ..SimulatorParams::qcd()
    };
    let start = Instant::now();
    let e = generate(&runaway, 2, 2, usize::MAX, 0).unwrap_err();
    assert!(
        e.to_string().contains(&format!("{MAX_JET_LEAVES} leaves")),
        "{e}"
    );
    assert!(start.elapsed() < Duration::from_secs(30));
    // Jets whose numbers would not be finite (or lost to rounding).
    for p in [[1e300, 0.0, 0.0], [1e100, 0.0, 0.0], [1e8, 0.0, 0.0]] {
        let params = SimulatorParams {
            jet_momentum: p,
            ..SimulatorParams::qcd()
        };
        let e = params.validate().unwrap_err();
        assert!(e.to_string().contains("the jet's energy"), "{e}");
    }
    let tiny_cut = SimulatorParams {
        t_cut: 1e-300,
        ..SimulatorParams::qcd()
    };
    let e = tiny_cut.validate().unwrap_err();
    assert!(e.to_string().contains("t_cut = 1e-300"), "{e}");
    // Numbers in messages are never written out as long integers.
    let huge_cut = SimulatorParams {
        t_cut: 1e308,
        ..SimulatorParams::qcd()
    };
    let e = huge_cut.validate().unwrap_err();
    assert!(e.to_string().contains("t_cut = 1e308"), "{e}");
    // A subnormal rate: the likelihood's normaliser is infinite.
    let subnormal = SimulatorParams {
        lambda: 5e-324,
        ..SimulatorParams::qcd()
    };
    assert!(
        subnormal
            .validate()
            .unwrap_err()
            .to_string()
            .contains("too small")
    );
    // A window no jet can reach.
    assert!(
        generate(
            &SimulatorParams::qcd(),
            1,
            MAX_JET_LEAVES + 1,
            usize::MAX,
            0
        )
        .is_err()
    );
}

#[test]
fn the_jet_stream_makes_the_jets_of_generate() {
    let params = SimulatorParams::qcd();
    let all = generate(&params, 600, 3, 10, 9).unwrap();
    let streamed: Vec<_> = generate_stream(&params, "qcd", 600, 3, Some(10), 9)
        .unwrap()
        .collect::<trellis::Result<_>>()
        .unwrap();
    assert_eq!(all.len(), streamed.len());
    for (a, b) in all.iter().zip(&streamed) {
        assert_eq!(a.to_json(), b.to_json());
    }
    let file = generate_file(&params, "qcd", 600, 3, Some(10), 9).unwrap();
    assert_eq!(file.meta["n_jets"], 600);
    let histogram: u64 = file.meta["leaf_count_histogram_of_kept_jets"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(histogram, 600);
}

// --- The DDT ------------------------------------------------------------------

fn points() -> Dataset {
    Dataset::new(
        ["a", "b", "c", "d", "e"].map(String::from).to_vec(),
        vec![
            vec![0.0, 0.0],
            vec![1.0, 0.0],
            vec![0.0, 1.0],
            vec![5.0, 5.0],
            vec![5.0, 6.0],
        ],
    )
    .unwrap()
}

fn params(points: &Dataset, c: f64, sigma: f64, sigma0: f64) -> Params {
    Params {
        c,
        sigma: vec![sigma; 2],
        sigma0: vec![sigma0; 2],
        mu0: points.mean(),
        leaf_noise: 0.01,
    }
}

#[test]
fn ddt_refuses_parameters_without_a_finite_density() {
    let p = points();
    for (c, sigma, sigma0, needle) in [
        (1.0, 1e308, 0.5, "sigma = 1e308"),
        (1.0, 1e-320, 0.5, "sigma = 1e-320"),
        (1.0, 1.0, 1e-320, "sigma0 = 1e-320"),
        (1e308, 1.0, 0.5, "c = 1e308"),
        (1e-300, 1.0, 0.5, "c = 1e-300"),
        (1e20, 1.0, 0.5, "c = 1e20"),
        (1.0, 1e300, 1e300, "sigma = 1e300"),
        (1.0, 1e-300, 1e-300, "sigma = 1e-300"),
    ] {
        let e = Ddt::new(&p, params(&p, c, sigma, sigma0)).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Parameter { .. }));
        assert!(e.to_string().contains(needle), "{e}");
    }
    // Points whose squared spread overflows.
    let far = Dataset::new(
        ["a", "b", "c"].map(String::from).to_vec(),
        vec![vec![0.0], vec![1e200], vec![-1e200]],
    )
    .unwrap();
    let e = Ddt::new(
        &far,
        Params {
            c: 1.0,
            sigma: vec![1.0],
            sigma0: vec![1.0],
            mu0: far.mean(),
            leaf_noise: 0.01,
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("squared distances overflow"), "{e}");
    // In range, up to its edges, the chain's density is finite and it moves.
    for (c, sigma, sigma0) in [
        (1.0, 0.5, 0.5),
        (0.05, 1e-20, 1e-20),
        (1e10, 1e20, 1e20),
        (1.0, 1e-100, 1e-100),
        (1.0, 1e100, 1e100),
    ] {
        let mut chain = Chain::new(Ddt::new(&p, params(&p, c, sigma, sigma0)).unwrap(), 3);
        assert!(chain.log_joint().is_finite(), "c {c} sigma {sigma}");
        chain.run(500);
        assert!(chain.log_joint().is_finite(), "c {c} sigma {sigma}");
        let stats = chain.stats();
        assert!(
            stats.spr_accepted + stats.time_accepted > 0,
            "c {c} sigma {sigma}: the chain never moved"
        );
    }
}

#[test]
fn active_queries_check_their_memory_first() {
    let p = points();
    let model = Ddt::new(&p, params(&p, 1.0, 0.5, 0.5)).unwrap();
    let target = Hierarchy::parse_newick("((a,b,c),(d,e));")
        .unwrap()
        .lca_depths(p.names())
        .unwrap();
    let options = LoopOptions {
        candidates: usize::MAX / 2,
        ..LoopOptions::paper(Strategy::Active)
    };
    let e = Simulation::new(Chain::new(model, 0), target, options, 0).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::TooMuchMemory { .. }), "{e}");
    assert!(e.to_string().contains("needs"), "{e}");
}
