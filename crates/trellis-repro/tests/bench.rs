//! The benchmarks: `bench` (the dense and flat trellises) and
//! `interactive-bench` (the DDT sampler) run on small inputs.

use crate::util::{dir, file, s, stdout};

#[test]
fn bench_runs_small() {
    let out = stdout(&[
        "bench",
        "--sizes",
        "5,7",
        "--repeats",
        "1",
        "--marginals",
        "--json",
    ]);
    let rows: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1]["n"], 7);
    assert_eq!(rows[1]["splits"], (3u64.pow(7) + 1 - (2 << 7)) / 2);
    assert!(rows[1]["splits_per_s"].as_f64().unwrap() > 0.0);
    let flat = stdout(&[
        "bench",
        "--flat",
        "--sizes",
        "6",
        "--repeats",
        "1",
        "--json",
    ]);
    let row: serde_json::Value = serde_json::from_str(flat.trim()).unwrap();
    assert_eq!(row["terms"], (3u64.pow(6) - 1) / 2);
}

#[test]
fn interactive_bench_runs_small() {
    let d = dir("interactive_bench");
    let mut csv = String::from("name,f1,f2\n");
    for i in 0..12 {
        let (cx, cy) = if i < 6 { (0.0, 0.0) } else { (3.0, 1.0) };
        let j = (i % 6) as f64;
        csv.push_str(&format!("p{i},{},{}\n", cx + 0.13 * j, cy - 0.07 * j));
    }
    let points = file(&d, "points.csv", &csv);
    let v: serde_json::Value = serde_json::from_str(&stdout(&[
        "interactive-bench",
        "--points",
        s(&points),
        "--iters",
        "2000",
        "--constraints",
        "10",
        "--json",
    ]))
    .unwrap();
    assert!(v["proposals_per_second"].as_f64().unwrap() > 0.0);
    assert_eq!(v["constraints"], 10);
}
