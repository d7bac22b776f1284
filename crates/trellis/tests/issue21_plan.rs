//! Issue 21, the planner (`trellis::plan`): estimates grow with `n`, their
//! memory is the library's own check (plus the linkage summaries' heap), the
//! choice between exact and approximate follows the budget, the errors name
//! the estimate and the limit, and the library's passes stop at
//! `Options::time_limit`.

use std::time::Duration;

use trellis::flat::FlatTrellis;
use trellis::models::{ModelName, Structure};
use trellis::plan::{self, Budget, Estimate, Method, Task};
use trellis::{
    CorrelationClustering, Distances, ErrorKind, Hcc, LinkageKind, LinkagePotential, MAX_POINTS,
    Matrix, Options, Trellis, Weights, Workload, memory_needed, pass_bytes,
};

/// Deterministic weights in [-1, 1] over `n` points.
fn weights(n: usize) -> Weights {
    let rows = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    if i == j {
                        0.0
                    } else {
                        let (a, b) = (i.min(j) as f64, i.max(j) as f64);
                        (a * 12.9898 + b * 78.233).sin()
                    }
                })
                .collect()
        })
        .collect();
    Weights::from_matrix(&Matrix::from_rows(rows).unwrap()).unwrap()
}

/// Euclidean distances between `n` points on a spiral.
fn distances(n: usize) -> Distances {
    let p: Vec<(f64, f64)> = (0..n)
        .map(|i| {
            let t = i as f64 * 0.7;
            (t.cos() * (1.0 + t), t.sin() * (1.0 + t))
        })
        .collect();
    let rows = p
        .iter()
        .map(|a| {
            p.iter()
                .map(|b| ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt())
                .collect()
        })
        .collect();
    Distances::from_matrix(&Matrix::from_rows(rows).unwrap()).unwrap()
}

fn limit(ms: u64) -> Options<'static> {
    Options {
        time_limit: Some(Duration::from_millis(ms)),
        ..Options::default()
    }
}

fn assert_time_limit<T>(r: trellis::Result<T>, what: &str) {
    match r {
        Err(e) => assert!(
            matches!(e.kind(), ErrorKind::TimeLimit { .. }),
            "{what}: expected the time limit, got {e}"
        ),
        Ok(_) => panic!("{what}: finished despite a 1 ms time limit"),
    }
}

#[test]
fn issue21_plan_estimates_grow_with_n() {
    for model in ModelName::all() {
        for task in Task::ALL {
            if !task.applies_to(model.info().structure) {
                continue;
            }
            let mut last: Option<Estimate> = None;
            for n in 2..=MAX_POINTS {
                let e = plan::estimate(n, model, task, 2).unwrap();
                assert_eq!((e.n, e.model, e.task, e.threads), (n, model, task, 2));
                assert!(e.seconds.is_finite() && e.seconds > 0.0);
                if let Some(prev) = &last {
                    assert!(e.seconds > prev.seconds, "{model} {task} n = {n}");
                    assert!(e.splits > prev.splits, "{model} {task} n = {n}");
                    assert!(e.memory_bytes > prev.memory_bytes, "{model} {task} n = {n}");
                }
                last = Some(e);
            }
        }
    }
    // More threads, less time; 0 threads is taken as 1.
    let one = plan::estimate(24, ModelName::Hcc, Task::LogZ, 1).unwrap();
    let two = plan::estimate(24, ModelName::Hcc, Task::LogZ, 2).unwrap();
    assert!(two.seconds < one.seconds);
    assert_eq!(
        plan::estimate(24, ModelName::Hcc, Task::LogZ, 0).unwrap(),
        one
    );
}

#[test]
fn issue21_plan_counts_the_passes_of_each_kernel() {
    let inside = |n: i32| (3f64.powi(n) - 2f64.powi(n + 1) + 1.0) / 2.0;
    let e = |model, task| plan::estimate(20, model, task, 2).unwrap();
    // hcc: one blocked pass for log Z, the MAP tree or samples (the weight
    // table); the weight pass and the outside pass (twice the splits) for
    // the marginals alone, and the key pass too for `infer` (the MAP).
    assert_eq!(e(ModelName::Hcc, Task::LogZ).splits, inside(20));
    assert_eq!(e(ModelName::Hcc, Task::Map).splits, inside(20));
    assert_eq!(e(ModelName::Hcc, Task::Sample).splits, inside(20));
    assert_eq!(e(ModelName::Hcc, Task::Marginals).splits, 3.0 * inside(20));
    assert_eq!(e(ModelName::Hcc, Task::Infer).splits, 4.0 * inside(20));
    assert_eq!(
        e(ModelName::Dasgupta, Task::Infer),
        Estimate {
            task: Task::Infer,
            ..e(ModelName::Dasgupta, Task::Marginals)
        }
    );
    assert!(e(ModelName::Hcc, Task::LogZ).kernel.starts_with("blocked"));
    // Dasgupta: the fused level-order pass whatever the task.
    assert_eq!(e(ModelName::Dasgupta, Task::Map).splits, inside(20));
    assert_eq!(
        e(ModelName::Dasgupta, Task::Marginals).splits,
        3.0 * inside(20)
    );
    assert_eq!(e(ModelName::Dasgupta, Task::LogZ).kernel, "level-order");
    for model in [
        ModelName::LinkageAverage,
        ModelName::LinkageSingle,
        ModelName::Ginkgo,
    ] {
        assert_eq!(e(model, Task::LogZ).kernel, "general");
        assert_eq!(e(model, Task::LogZ).splits, inside(20));
    }
    // The flat trellis: (3^n - 1)/2 terms per pass.
    let flat = (3f64.powi(20) - 1.0) / 2.0;
    assert_eq!(e(ModelName::Cc, Task::LogZ).splits, flat);
    assert_eq!(e(ModelName::Cc, Task::Marginals).splits, 2.0 * flat);
    assert!(
        e(ModelName::Cc, Task::Map)
            .kernel
            .starts_with("flat blocked")
    );
    // The general kernel is far slower per split than the blocked one.
    assert!(
        e(ModelName::LinkageAverage, Task::LogZ).seconds
            > 10.0 * e(ModelName::Hcc, Task::LogZ).seconds
    );
}

#[test]
fn issue21_plan_memory_is_the_librarys_own_estimate() {
    for n in [1, 10, 20, 26, 30] {
        for model in ModelName::all() {
            let heap = match model {
                ModelName::LinkageComplete | ModelName::LinkageSingle => (8 * n as u64 + 16) << n,
                _ => 0,
            };
            let flat = model.info().structure == Structure::Partition;
            // (The MCC tree's extra pass: plan.rs's own test.)
            for task in Task::ALL {
                if task == Task::Mcc || !task.applies_to(model.info().structure) {
                    continue;
                }
                let marginals = matches!(task, Task::Marginals | Task::Infer | Task::Consensus);
                let workload = match (flat, marginals) {
                    (false, false) => Workload::Inside,
                    (false, true) => Workload::Marginals,
                    // The flat log Z and MAP are single blocked passes.
                    (true, false) if matches!(task, Task::LogZ | Task::Map) => Workload::FlatPass,
                    (true, false) => Workload::FlatInside,
                    (true, true) => Workload::FlatMarginals,
                };
                let e = plan::estimate(n, model, task, 2).unwrap();
                // hcc's `logz`, `map` and `sample` are single passes over 8-byte
                // entries; its marginals two (`infer`'s MAP pass runs beside
                // the weights before the outside pass: two as well).
                let hcc = model == ModelName::Hcc;
                let single = hcc && matches!(task, Task::LogZ | Task::Map | Task::Sample);
                let two = hcc && matches!(task, Task::Marginals | Task::Consensus | Task::Infer);
                let want = if single {
                    pass_bytes(n)
                } else if two {
                    trellis::pass_marginals_bytes(n)
                } else {
                    memory_needed(n, workload) + heap
                };
                // Samples of hierarchies add the sampler's cache.
                let want = match (task, flat) {
                    (Task::Sample, false) => want + plan::sampler_cache_bytes(n),
                    _ => want,
                };
                assert_eq!(e.memory_bytes, want, "{model} {task} n = {n}");
            }
        }
    }
    // Complete linkage holds n distances per summary: at n = 20, 176 bytes
    // per subset more than average linkage.
    let avg = plan::estimate(20, ModelName::LinkageAverage, Task::LogZ, 2).unwrap();
    let complete = plan::estimate(20, ModelName::LinkageComplete, Task::LogZ, 2).unwrap();
    assert_eq!(
        complete.memory_bytes - avg.memory_bytes,
        (8 * 20 + 16) << 20
    );
}

#[test]
fn issue21_plan_refuses_too_many_points() {
    for r in [
        plan::estimate(MAX_POINTS + 1, ModelName::Hcc, Task::LogZ, 2).map(|_| ()),
        plan::choose(40, ModelName::Cc, Task::Map, 2, &Budget::default()).map(|_| ()),
    ] {
        let e = r.unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::TooManyPoints { max: 30, .. }),
            "{e}"
        );
    }
    let e = plan::estimate(0, ModelName::Hcc, Task::LogZ, 2).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Empty));
}

#[test]
fn issue21_plan_chooses_exact_only_within_the_budget() {
    let roomy = Budget {
        memory_bytes: Some(1 << 40),
        seconds: Some(1e9),
    };
    let (method, e) = plan::choose(12, ModelName::Hcc, Task::Marginals, 2, &roomy).unwrap();
    assert_eq!(method, Method::Exact);
    assert_eq!(
        e,
        plan::estimate(12, ModelName::Hcc, Task::Marginals, 2).unwrap()
    );
    assert!(plan::check(&e, &roomy).is_ok());
    // Too little time.
    let hurried = Budget {
        seconds: Some(1e-6),
        ..roomy
    };
    let (method, _) = plan::choose(12, ModelName::Hcc, Task::Marginals, 2, &hurried).unwrap();
    assert_eq!(method, Method::Approximate);
    // Too little memory.
    let cramped = Budget {
        memory_bytes: Some(1024),
        ..roomy
    };
    let (method, _) = plan::choose(12, ModelName::Hcc, Task::Marginals, 2, &cramped).unwrap();
    assert_eq!(method, Method::Approximate);
    // N = 26: minutes and gigabytes; exact with an hour and 16 GiB, not with a minute.
    let budget = Budget {
        memory_bytes: Some(16 << 30),
        seconds: Some(3600.0),
    };
    let (method, e) = plan::choose(26, ModelName::Hcc, Task::LogZ, 2, &budget).unwrap();
    assert_eq!(method, Method::Exact, "{e}");
    let minute = Budget {
        seconds: Some(20.0),
        ..budget
    };
    assert_eq!(
        plan::choose(26, ModelName::Hcc, Task::LogZ, 2, &minute)
            .unwrap()
            .0,
        Method::Approximate
    );
    // No time limit: time never decides.
    let untimed = Budget {
        memory_bytes: Some(1 << 40),
        seconds: None,
    };
    assert_eq!(
        plan::choose(30, ModelName::LinkageAverage, Task::Infer, 1, &untimed)
            .unwrap()
            .0,
        Method::Exact
    );
}

#[test]
fn issue21_plan_check_names_the_estimate_and_the_limit() {
    let e = Estimate {
        n: 26,
        model: ModelName::Hcc,
        task: Task::LogZ,
        memory_bytes: 3 << 30,
        seconds: 80.0,
        splits: 1.27e12,
        kernel: "blocked (avx2)",
        threads: 2,
    };
    let text = e.to_string();
    assert_eq!(
        text,
        "exact log Z over 26 points (hcc model): 1.3e12 splits on the blocked (avx2) kernel, \
         about 80 s on 2 threads, 3.0 GiB"
    );
    let err = plan::check(
        &e,
        &Budget {
            memory_bytes: Some(1 << 40),
            seconds: Some(10.0),
        },
    )
    .unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::TimeBudget { needed_seconds, limit_seconds, .. }
            if *needed_seconds == 80.0 && *limit_seconds == 10.0)
    );
    let msg = err.to_string();
    assert!(msg.contains("exact log Z over 26 points"), "{msg}");
    assert!(msg.contains("about 80 s"), "{msg}");
    assert!(msg.contains("time limit of 10 s"), "{msg}");
    assert!(msg.contains("approximate"), "{msg}");
    let hours = Estimate {
        seconds: 5400.0,
        ..e.clone()
    };
    let msg = plan::check(
        &hours,
        &Budget {
            memory_bytes: Some(1 << 40),
            seconds: Some(90.0),
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        msg.contains("about 1.5 h") && msg.contains("limit of 90 s"),
        "{msg}"
    );
    // Memory first: the library's out-of-memory error, both sizes named.
    let err = plan::check(
        &e,
        &Budget {
            memory_bytes: Some(1 << 30),
            seconds: Some(10.0),
        },
    )
    .unwrap_err();
    assert!(matches!(
        err.kind(),
        ErrorKind::OutOfMemory { capped: true, .. }
    ));
    let msg = err.to_string();
    assert!(
        msg.contains("needs 3.0 GiB") && msg.contains("memory limit of 1.0 GiB"),
        "{msg}"
    );
    assert!(msg.contains("approximate"), "{msg}");
}

#[test]
fn issue21_plan_tasks_and_methods_by_name() {
    for task in Task::ALL {
        assert_eq!(task.name().parse::<Task>().unwrap(), task);
        assert_eq!(task.to_string(), task.name());
    }
    assert_eq!("LogZ".parse::<Task>().unwrap(), Task::LogZ);
    let e = "partition".parse::<Task>().unwrap_err().to_string();
    assert!(e.contains("logz, map, marginals, infer, sample"), "{e}");
    assert_eq!(Method::Exact.to_string(), "exact");
    assert_eq!(Method::Approximate.name(), "approximate");
    assert!(plan::default_threads() >= 1);
}

#[test]
fn issue21_dense_and_flat_passes_stop_at_the_time_limit() {
    // ~20 points on the blocked kernel: each pass is tens of milliseconds or
    // more, and the ticker checks the clock after every batch (the last
    // included), so a 1 ms limit always stops it.
    let hcc = Hcc::new(&weights(20), 1.0).unwrap();
    assert_time_limit(Trellis::log_z_only(&hcc, &limit(1)), "log_z_only");
    assert_time_limit(Trellis::map_only(&hcc, &limit(1)), "map_only");
    assert_time_limit(
        Trellis::with_options(&hcc, &limit(1)),
        "the full inside pass",
    );
    // The outside pass of a finished trellis.
    let small = Trellis::new(Hcc::new(&weights(18), 1.0).unwrap()).unwrap();
    assert_time_limit(small.marginals_with(&limit(1)), "the outside pass");
    // The general (log-space) kernel and its max-plus pass.
    let linkage = LinkagePotential::new(&distances(16), LinkageKind::Average, 1.0).unwrap();
    assert_time_limit(
        Trellis::with_options(&linkage, &limit(1)),
        "the general kernel",
    );
    assert_time_limit(
        Trellis::map_only(&linkage, &limit(1)),
        "the general max-plus pass",
    );
    // The flat trellis.
    let cc = CorrelationClustering::new(&weights(18), 1.0).unwrap();
    assert_time_limit(
        FlatTrellis::with_options(&cc, &limit(1)),
        "the flat trellis",
    );
    assert_time_limit(FlatTrellis::log_z_only(&cc, &limit(1)), "the flat log Z");
    // Without a limit the same problems finish.
    assert!(
        Trellis::log_z_only(&hcc, &Options::default())
            .unwrap()
            .is_finite()
    );
}
