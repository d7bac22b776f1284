//! `trellis-repro ginkgo`: the trellis paper's jet results (Table 1, Figs. 6
//! and 7) on a small simulated jets file.

use crate::util::*;

#[test]
fn reports_every_part() {
    // The jets of `trellis ginkgo generate --n-jets 60 --min-leaves 5 --max-leaves 7 --seed 4`.
    let text = jets_json(60, 5, 7, 4);
    let d = dir("ginkgo");
    let f = file(&d, "jets.json", &text);
    let svg = d.join("figs");
    let report = json(&[
        "ginkgo",
        "--jets",
        s(&f),
        "--samples",
        "2000",
        "--sparse-leaves",
        "6",
        "--sparse-jets",
        "5",
        "--sparse-trees",
        "3,10",
        "--svg",
        s(&svg),
        "--json",
    ]);
    assert_eq!(report["table1"].as_array().unwrap().len(), 2);
    for t in report["table1"].as_array().unwrap() {
        // Exact >= beam search and greedy on every jet: the mean differences are >= 0.
        assert!(t["exact_minus_beam"]["mean"].as_f64().unwrap() >= -1e-12);
        assert!(t["exact_minus_greedy"]["mean"].as_f64().unwrap() >= -1e-12);
    }
    let p = &report["posterior"];
    assert!(p["total_variation"].as_f64().unwrap() <= p["total_variation_bound"].as_f64().unwrap());
    let total: f64 = p["trees"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["exact"].as_f64().unwrap())
        .sum();
    assert!(
        (total - 1.0).abs() < 1e-9,
        "the exact probabilities sum to {total}"
    );
    for c in report["sparse"].as_array().unwrap() {
        assert_eq!(c["simulator"].as_array().unwrap().len(), 2);
    }
    for name in [
        "fig6-posterior.svg",
        "fig7-sparse-current.svg",
        "fig7-sparse-legacy.svg",
    ] {
        assert!(
            std::fs::read_to_string(svg.join(name))
                .unwrap()
                .starts_with("<svg")
        );
    }
}
