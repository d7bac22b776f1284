//! `trellis-repro astar` (the A* paper's Figs. 5-9) and `trellis-repro
//! astar-bench` (exact A* against the DP) on tiny sizes.

use crate::util::*;

/// `a` equals `b` up to `tol` relative (absolute below magnitude 1).
fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1.0)
}

/// `trellis-repro astar` on tiny sizes: the report's tables, the JSON runs, the
/// figures, and the exact methods agreeing with each other.
#[test]
fn runs_small() {
    let d = dir("astar");
    let aloi = d.join("aloi");
    std::fs::create_dir_all(aloi.join("subsets")).unwrap();
    // A 6-point ALOI-like subset: the loader reads "id" and "weights".
    let w = weights(6, 9);
    let subset = serde_json::json!({"id": "public_aloi_N6_s0", "weights": w});
    std::fs::write(
        aloi.join("subsets/public_aloi_N6_s0.json"),
        subset.to_string(),
    )
    .unwrap();
    let svg = d.join("svg");
    let args = [
        "astar",
        "--exact-sizes",
        "5,6",
        "--approx-sizes",
        "9",
        "--jets",
        "2",
        "--aloi",
        s(&aloi),
    ];
    let report = stdout(&[&args[..], &["--svg", s(&svg)]].concat());
    assert!(
        report.contains("## Ginkgo jets") && report.contains("## ALOI"),
        "{report}"
    );
    for f in [
        "fig5-jets-cost-minus-greedy.svg",
        "fig6-jets-time.svg",
        "fig7-jets-explored.svg",
        "fig8-aloi-cost.svg",
        "fig9-aloi-improvement.svg",
    ] {
        assert!(svg.join(f).is_file(), "{f} missing");
    }
    let v = json(&[&args[..], &["--json"]].concat());
    let jets = v["jets"].as_array().unwrap();
    // Per exact-size jet: greedy, beam, dp, astar-h0, astar-h1, approx; per approx-size jet: 3.
    assert_eq!(jets.len(), 2 * 2 * 6 + 2 * 3);
    for id in ["N5_k0", "N5_k1", "N6_k0", "N6_k1"] {
        let cost = |m: &str| {
            jets.iter()
                .find(|r| r["dataset"] == id && r["method"] == m)
                .unwrap_or_else(|| panic!("{id} {m}"))["cost"]
                .as_f64()
                .unwrap()
        };
        let dp = cost("dp");
        assert!(close(cost("astar-h0"), dp, 1e-9), "{id}");
        for m in ["greedy", "beam", "astar-h1", "approx-astar"] {
            assert!(
                cost(m) >= dp - 1e-9 * dp.abs().max(1.0),
                "{id} {m} below the optimum"
            );
        }
        assert!(
            cost("approx-astar") <= cost("beam") + 1e-9 * dp.abs().max(1.0),
            "{id}"
        );
    }
    let aloi_runs = v["aloi"].as_array().unwrap();
    let cost = |m: &str| {
        aloi_runs.iter().find(|r| r["method"] == m).unwrap()["cost"]
            .as_f64()
            .unwrap()
    };
    assert!(
        cost("astar") <= cost("approx-astar") + 1e-12
            && cost("approx-astar") <= cost("greedy") + 1e-12
    );
    fails(&["astar", "--jets", "0"], "nothing to run");
    fails(&["astar", "--exact-sizes", "20", "--jets", "1"], "too long");
}

/// `trellis-repro astar-bench` on tiny sizes: one JSON row per size for every
/// model (the command itself checks that A* and the DP agree), and the table.
#[test]
fn astar_bench_runs_small() {
    for model in ["hcc", "dasgupta", "ginkgo", "ginkgo-legacy"] {
        let out = stdout(&[
            "astar-bench",
            "--model",
            model,
            "--sizes",
            "5,7",
            "--repeats",
            "1",
            "--json",
        ]);
        let rows: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(rows.len(), 2, "{model}: {out}");
        assert_eq!(rows[1]["n"], 7);
        // The registry's model id (`ginkgo-legacy`), as every other command spells it.
        assert_eq!(rows[1]["model"], model);
        assert_eq!(rows[1]["dp_splits"], (3u64.pow(7) + 1 - (2 << 7)) / 2);
        assert!(rows[1]["explored"].as_u64().unwrap() >= 1, "{model}");
    }
    let table = stdout(&["astar-bench", "--sizes", "6", "--repeats", "1"]);
    assert!(
        table.starts_with("exact A* vs the exact DP") && table.lines().count() == 3,
        "{table}"
    );
}
