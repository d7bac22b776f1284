//! `trellis-repro flat`: the flat trellis paper's §5.3 analysis on small
//! synthetic data, checked against the library's exact and Perturb-and-MAP
//! marginals, and its refusals.

use trellis::CorrelationClustering;
use trellis::Weights;
use trellis::flat::{FlatTrellis, perturb_and_map};

use crate::util::*;

/// `trellis-repro flat`: the report's pairwise marginals are those of
/// `trellis flat marginals` on the same energies, the Perturb-and-MAP column
/// is that of `trellis flat perturb-map` (both computed here with the library
/// calls those commands make), the run is reproducible, and the
/// four figures are written.
#[test]
#[allow(clippy::needless_range_loop)]
fn agrees_with_the_flat_commands() {
    let d = dir("flat");
    let figs = d.join("figs");
    let args = [
        "flat",
        "--samples",
        "8",
        "--genes",
        "400",
        "--top-genes",
        "200",
        "--perturb-samples",
        "300",
        "--seed",
        "3",
        "--json",
        "--svg",
        s(&figs),
    ];
    let r = json(&args);
    let n = 8;
    let beta = r["beta"].as_f64().unwrap();
    let energies = r["energies"].as_array().unwrap();
    assert_eq!(energies.len(), n);
    assert_eq!(r["pairs"].as_array().unwrap().len(), n * (n - 1) / 2);
    // The weights behind the report, recovered from the energies β·w_ij.
    let csv: Vec<String> = energies
        .iter()
        .map(|row| {
            row.as_array()
                .unwrap()
                .iter()
                .map(|e| format!("{:e}", e.as_f64().unwrap() / beta))
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    let path = file(&d, "w.csv", &(csv.join("\n") + "\n"));
    // What `trellis flat marginals --model cc --weights w.csv --beta B` computes.
    let w = Weights::from_matrix(&trellis::io::read_matrix(&path, false).unwrap()).unwrap();
    let exact = FlatTrellis::new(CorrelationClustering::new(&w, beta).unwrap()).unwrap();
    assert!((exact.log_z() - r["log_z"].as_f64().unwrap()).abs() < 1e-9);
    let (p, q) = (exact.marginals().pairwise_matrix(), &r["marginals"]);
    for i in 0..n {
        for j in 0..n {
            let (a, b) = (p[i][j], q[i][j].as_f64().unwrap());
            assert!((a - b).abs() < 1e-9, "P({i} ~ {j}): {a} vs {b}");
        }
    }
    // What `trellis flat perturb-map ... -n 300 --seed 3` computes.
    let approx = perturb_and_map(&w, beta, 300, 3).unwrap();
    for pair in r["pairs"].as_array().unwrap() {
        let name = |k: &str| pair[k].as_str().unwrap().to_string();
        let names: Vec<String> = r["names"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        let i = names.iter().position(|x| *x == name("a")).unwrap();
        let j = names.iter().position(|x| *x == name("b")).unwrap();
        let (x, y) = (pair["perturb_and_map"].as_f64().unwrap(), approx[i][j]);
        // Same draws up to the last bits of the weights' round trip through text.
        assert!((x - y).abs() <= 2.0 / 300.0, "{i} ~ {j}: {x} vs {y}");
    }
    // The Binder-optimal partition: its expected loss recomputed from the
    // exact pairwise marginals, never above the MAP partition's, and the
    // listed disagreements are exactly the pairs the two place differently.
    let names: Vec<&str> = r["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let labels = |clusters: &serde_json::Value| {
        let mut l = vec![usize::MAX; n];
        for (k, c) in clusters.as_array().unwrap().iter().enumerate() {
            for x in c.as_array().unwrap() {
                l[names
                    .iter()
                    .position(|y| *y == x.as_str().unwrap())
                    .unwrap()] = k;
            }
        }
        assert!(l.iter().all(|&k| k != usize::MAX));
        l
    };
    let binder = &r["binder"];
    let (lb, lm) = (labels(&binder["clusters"]), labels(&r["map_clusters"]));
    let loss = |l: &[usize]| {
        let mut s = 0.0;
        for i in 0..n {
            for j in i + 1..n {
                s += if l[i] == l[j] { 1.0 - p[i][j] } else { p[i][j] };
            }
        }
        s
    };
    let (eb, em) = (
        binder["expected_loss"].as_f64().unwrap(),
        binder["map_expected_loss"].as_f64().unwrap(),
    );
    assert!((loss(&lb) - eb).abs() < 1e-9 && (loss(&lm) - em).abs() < 1e-9);
    assert!(eb <= em + 1e-12, "Binder {eb} vs MAP {em}");
    let differ = (0..n)
        .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
        .filter(|&(i, j)| (lb[i] == lb[j]) != (lm[i] == lm[j]))
        .count();
    assert_eq!(binder["disagreements"].as_array().unwrap().len(), differ);
    // Reproducible: the same seed gives the same report (timings aside).
    let again = json(&args);
    for key in [
        "pairs",
        "marginals",
        "map_clusters",
        "binder",
        "perturb_mean_difference",
    ] {
        assert_eq!(r[key], again[key], "{key}");
    }
    for f in [
        "fig2-energy-vs-marginal.svg",
        "fig3-perturb-vs-exact.svg",
        "fig4-energies.svg",
        "fig5-marginals.svg",
    ] {
        let text = std::fs::read_to_string(figs.join(f)).unwrap();
        assert!(
            text.starts_with("<svg") && text.trim_end().ends_with("</svg>"),
            "{f}"
        );
    }
}

#[test]
fn bad_input_is_refused() {
    let d = dir("flat_bad");
    let neg = file(&d, "neg.csv", "g1,g2,g3\n1,2,3\n4,-5,6\n7,8,9\n");
    fails(
        &["flat", "--points", s(&neg)],
        "must be finite and non-negative",
    );
    fails(&["flat", "--beta", "0"], "--beta must be positive");
    fails(&["flat", "--samples", "25"], "2 to 20 samples");
}
