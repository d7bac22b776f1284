//! Issue 22 (hardening, round 2), the classes fixed so far: counts that
//! make no answer are refused (`flat perturb-map -n 0`).

use crate::util::*;

#[test]
fn issue22_perturb_and_map_with_no_samples_is_refused() {
    let d = dir("issue22_perturb");
    let w = file(&d, "w.csv", &weights_csv(4, 1));
    fails(
        &[
            "flat",
            "perturb-map",
            "--model",
            "cc",
            "--weights",
            w.to_str().unwrap(),
            "-n",
            "0",
        ],
        "-n must be at least 1",
    );
}

/// Issue 22, class 4: no flag is silently dropped. With `--jets` the output
/// is JSON Lines, so `--newick` (and `--support`, which labels it) is refused
/// on every command that takes both; `--support` with `--json` is refused.
#[test]
fn issue22_flags_that_cannot_be_honoured_are_refused() {
    let d = dir("issue22_flags");
    let jets = stdout(&[
        "ginkgo",
        "generate",
        "--n-jets",
        "2",
        "--min-leaves",
        "4",
        "--max-leaves",
        "5",
    ]);
    let jets = file(&d, "jets.json", &jets);
    let jets = jets.to_str().unwrap();
    let w = file(&d, "w.csv", &weights_csv(4, 2));
    let w = w.to_str().unwrap();
    let commands: [&[&str]; 7] = [
        &["map"],
        &["sample", "-n", "2"],
        &["infer"],
        &["greedy"],
        &["beam"],
        &["astar"],
        &["linkage", "--method", "average"],
    ];
    for command in commands {
        for extra in [&["--newick"][..], &["--newick", "--support"][..]] {
            if extra.len() == 2 && command[0] != "map" {
                continue; // --support is a flag of map only
            }
            let mut args = command.to_vec();
            args.extend(["--model", "ginkgo", "--jets", jets]);
            args.extend(extra);
            fails(&args, "with --jets the output is one JSON line per jet");
        }
    }
    fails(
        &[
            "map",
            "--model",
            "hcc",
            "--weights",
            w,
            "--json",
            "--support",
        ],
        "'--json' cannot be used with '--support'",
    );
    // The honoured forms still work: Newick with support on weights, and a
    // linkage matrix per jet.
    let newick = stdout(&[
        "map",
        "--model",
        "hcc",
        "--weights",
        w,
        "--newick",
        "--support",
    ]);
    assert!(newick.starts_with("[&R] (") && newick.trim_end().ends_with(';'));
    let lines = stdout(&["map", "--model", "ginkgo", "--jets", jets, "--linkage"]);
    for line in lines.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(v["linkage"].is_array(), "{line}");
    }
}

/// Issue 22, class 7: an approximate-search parameter that parses either
/// works or is refused. A heuristic weight whose product with the root's
/// heuristic overflows is refused with the largest weight that works; a
/// `--top-k` beyond the candidates of a vertex means "all of them" (the same
/// search as any other such K) instead of a search that explores nothing.
#[test]
fn issue22_astar_weight_and_top_k_extremes() {
    let d = dir("issue22_astar_extremes");
    let w = file(&d, "w.csv", &weights_csv(12, 7));
    let w = w.to_str().unwrap();
    let approx = |extra: &[&str]| -> std::process::Output {
        let mut args = vec![
            "astar",
            "--approx",
            "--model",
            "hcc",
            "--weights",
            w,
            "--json",
        ];
        args.extend(extra);
        run(&args)
    };
    let parsed = |out: std::process::Output| -> serde_json::Value {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let refused = approx(&["--weight", "1e308"]);
    let message = String::from_utf8_lossy(&refused.stderr).to_string();
    assert_eq!(refused.status.code(), Some(2), "{message}");
    assert!(refused.stdout.is_empty());
    assert!(message.contains("overflows"), "{message}");
    // The largest weight the message names is accepted.
    let largest = message.rsplit("at most ").next().unwrap().trim();
    parsed(approx(&["--weight", largest]));
    let huge = parsed(approx(&["--top-k", "100000000"]));
    let all = parsed(approx(&["--top-k", "1000000"]));
    assert!(huge["explored"].as_u64().unwrap() > 0, "{huge}");
    assert_eq!(huge, all);
}

/// Issue 22, class 6: approximate A* estimates only what its chosen initial
/// trees need: a beam width that beam search could not hold is no reason to
/// refuse `--init average`, and a `--max-memory` above the memory available
/// is the limit the message quotes.
#[test]
fn issue22_astar_checks_only_the_initial_trees_it_builds() {
    let d = dir("issue22_astar_init");
    let w = file(&d, "w.csv", &weights_csv(12, 5));
    let w = w.to_str().unwrap();
    let args = |init: &'static str, width: &'static str| {
        vec![
            "astar",
            "--approx",
            "--model",
            "hcc",
            "--weights",
            w,
            "--init",
            init,
            "--beam-width",
            width,
            "--json",
        ]
    };
    let out = json(&args("average", "100000000"));
    assert_eq!(out["n"], 12);
    fails(
        &args("beam", "100000000"),
        "beam search of width 100000000 over 12 points needs",
    );
    let mut capped = args("beam", "100000000000");
    capped.extend(["--max-memory", "100000"]);
    fails(&capped, "exceeds the --max-memory cap of 97.7 TiB");
}

/// Issue 22, class 3: with standard output closed (`>&-`) a command that
/// prints is exit code 1 with a message, also while samples stream; an
/// explicit `> /dev/null` still discards the output with exit code 0.
#[cfg(target_os = "linux")]
#[test]
fn issue22_a_closed_standard_output_is_an_error() {
    let d = dir("issue22_closed_stdout");
    let w = file(&d, "w.csv", &weights_csv(4, 1));
    let bin = assert_cmd::cargo::cargo_bin("trellis");
    let shell = |redirect: &str, args: &str| {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("exec \"$0\" {args} {redirect}"))
            .arg(&bin)
            .output()
            .unwrap()
    };
    let sample = format!("sample --model hcc --weights {} -n 50", w.display());
    for args in ["count 6", sample.as_str(), "logz --model hcc --weights -"] {
        let closed = shell(">&- < /dev/null", args);
        let stderr = String::from_utf8_lossy(&closed.stderr);
        if args.ends_with('-') {
            // Nothing to read: refused as bad input before anything is written.
            assert_eq!(closed.status.code(), Some(2), "{args}: {stderr}");
            continue;
        }
        assert_eq!(closed.status.code(), Some(1), "{args}: {stderr}");
        assert!(
            stderr.contains("standard output") && stderr.contains("closed"),
            "{stderr}"
        );
        let null = shell("> /dev/null", args);
        assert_eq!(null.status.code(), Some(0), "{args}");
        assert!(
            null.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&null.stderr)
        );
    }
}

/// Issue 22, class 5: `linkage --weights` whose distances max(w) - w would
/// overflow is refused saying so and how far to scale (not "non-finite value
/// at row 0"); halved, the same weights run.
#[test]
fn issue22_linkage_on_weights_beyond_the_float_range() {
    let d = dir("issue22_linkage_span");
    let big = file(&d, "big.csv", "0,1e308,-1e308\n1e308,0,5\n-1e308,5,0\n");
    fails(
        &[
            "linkage",
            "--method",
            "average",
            "--weights",
            big.to_str().unwrap(),
        ],
        "divide them by at least 2",
    );
    let half = file(&d, "half.csv", "0,5e307,-5e307\n5e307,0,5\n-5e307,5,0\n");
    let out = json(&[
        "linkage",
        "--method",
        "average",
        "--weights",
        half.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(out["tree"], serde_json::json!([[0, 1], 2]));
}
