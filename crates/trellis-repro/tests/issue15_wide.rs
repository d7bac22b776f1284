//! `trellis-repro astar-wide` (issue 15: Fig. 9 beyond 128 points, large jets)
//! on tiny sizes, and its clean skip without the shared data.

use crate::util::*;

#[test]
fn skips_aloi_cleanly_without_the_data() {
    let d = dir("astar_wide_skip");
    let missing = d.join("no-such-aloi");
    let out = run(&["astar-wide", "--aloi", s(&missing), "--jets", "0"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("skipping ALOI"), "{stderr}");
}

#[test]
fn runs_small() {
    let d = dir("astar_wide");
    let aloi = d.join("aloi");
    std::fs::create_dir_all(aloi.join("subsets")).unwrap();
    // 12 points of 3 classes with 4-d features (the loader reads pids, labels
    // and features; the weights are recomputed from the features).
    let w = weights(12, 5);
    let features: Vec<Vec<f64>> = (0..12)
        .map(|i| {
            (0..4)
                .map(|k| 1.0 + w[i][(k + 1) % 12].abs() + (i % 3 == k) as u8 as f64)
                .collect()
        })
        .collect();
    let subset = serde_json::json!({
        "id": "public_aloi_N12_s0",
        "pids": (0..12).collect::<Vec<u32>>(),
        "labels": (0..12).map(|i| i % 3).collect::<Vec<u32>>(),
        "features": features,
    });
    std::fs::write(
        aloi.join("subsets/public_aloi_N12_s0.json"),
        subset.to_string(),
    )
    .unwrap();
    let svg = d.join("svg");
    let args = [
        "astar-wide",
        "--aloi",
        s(&aloi),
        "--sizes",
        "6,12",
        "--seeds",
        "2",
        "--max-explored",
        "40",
        "--jet-sizes",
        "10",
        "--jets",
        "2",
        "--beam-width",
        "4",
        "--jet-max-explored",
        "40",
    ];
    let v = json(&[&args[..], &["--json", "--svg", s(&svg)]].concat());
    let runs = v["aloi"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    for r in runs {
        let (g, a) = (r["greedy"].as_f64().unwrap(), r["approx"].as_f64().unwrap());
        assert!(a <= g, "{r}");
    }
    assert!(svg.join("fig9-aloi-wide.svg").is_file());
    let jets = v["jets"].as_array().unwrap();
    assert_eq!(jets.len(), 2);
    for j in jets {
        let approx = j["approx"].as_f64().unwrap();
        // Never worse than its initial trees: the beams and greedy's.
        assert!(approx <= j["beam"].as_f64().unwrap(), "{j}");
        assert!(approx <= j["greedy"].as_f64().unwrap(), "{j}");
    }
    // Seeded: the same command gives the same numbers; the report has both tables.
    let again = json(&[&args[..], &["--json"]].concat());
    let costs = |v: &serde_json::Value| {
        v["aloi"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["approx"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(costs(&v), costs(&again));
    let report = stdout(&args);
    assert!(
        report.contains("### ALOI") && report.contains("### Ginkgo jets"),
        "{report}"
    );
}
