//! Exactness of the Ginkgo likelihood and of the trellis on jets, against the
//! reference answers in `shared/data/ginkgo` (issue #3, part 1).
//!
//! - Truth trees: our log-likelihood of every jet's truth tree equals the
//!   reference's `truth_log_likelihood_recomputed` (current likelihood, internal
//!   momenta summed from the leaves) to 1e-9 relative, and the legacy value
//!   `truth_log_likelihood_legacy_model` likewise. The simulator's own stored
//!   value carries float32 rounding (README: up to ~1e-5), so it is checked to 1e-5.
//! - The exact trellis: log Z and the MAP value equal the reference trellis to
//!   1e-7 relative (the bound), the MAP tree's own log-likelihood equals
//!   the MAP value, and the number of trees with non-zero likelihood equals the
//!   reference's `n_trees_nonzero_likelihood` exactly.
//! - Legacy: the trellis on the authors' `truth_9` jets reproduces their stored
//!   paper-era results (`_validation` of `reference_examples_results.json`).
//!
//! Skipped, with a message, when `../shared/data` is absent.

use serde_json::Value;
use trellis::ginkgo::{Ginkgo, JetsFile, Variant};
use trellis::{Trellis, num_positive_trees, tree_log_potential};

use crate::data::{self, read_json};

fn rel_close(got: f64, want: f64, tol: f64) -> bool {
    (got - want).abs() <= tol * want.abs().max(1.0)
}

#[test]
fn truth_log_likelihoods_match_the_reference() {
    let Some(dir) = data::dir("ginkgo") else {
        return;
    };
    let reference = read_json(&dir.join("reference_results.json"));
    let mut checked = 0;
    for file in ["ginkgo_small.json", "ginkgo_large.json"] {
        let jets = JetsFile::read(&dir.join(file)).unwrap();
        for jet in &jets.jets {
            let truth = jet.truth.as_ref().expect("truth");
            let current = tree_log_potential(&Ginkgo::new(jet, Variant::Current), truth).unwrap();
            let legacy = tree_log_potential(&Ginkgo::new(jet, Variant::Legacy), truth).unwrap();
            // Recomputed from the leaves, as we do: 1e-9.
            let from_leaves = jet.extra["truth_log_likelihood_from_leaves"]
                .as_f64()
                .unwrap();
            assert!(
                rel_close(current, from_leaves, 1e-9),
                "{}: {current} vs {from_leaves}",
                jet.id
            );
            // The simulator's float32 value: 1e-5.
            let stored = jet.extra["truth_log_likelihood"].as_f64().unwrap();
            assert!(
                rel_close(current, stored, 1e-5),
                "{}: {current} vs stored {stored}",
                jet.id
            );
            if let Some(r) = reference.get(&jet.id) {
                let want = r["truth_log_likelihood_recomputed"].as_f64().unwrap();
                assert!(
                    rel_close(current, want, 1e-9),
                    "{}: {current} vs {want}",
                    jet.id
                );
                let want = r["truth_log_likelihood_legacy_model"].as_f64().unwrap();
                assert!(
                    rel_close(legacy, want, 1e-9),
                    "{} legacy: {legacy} vs {want}",
                    jet.id
                );
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 120);
    // The authors' example jets (truth_{4,5,9}.pkl): current and legacy values.
    let results = read_json(&dir.join("reference_examples_results.json"));
    let examples = JetsFile::read(&dir.join("reference_examples.json")).unwrap();
    for jet in &examples.jets {
        let truth = jet.truth.as_ref().expect("truth");
        let r = &results[&jet.id];
        let current = tree_log_potential(&Ginkgo::new(jet, Variant::Current), truth).unwrap();
        let want = r["truth_log_likelihood_recomputed"].as_f64().unwrap();
        assert!(
            rel_close(current, want, 1e-9),
            "{}: {current} vs {want}",
            jet.id
        );
        let legacy = tree_log_potential(&Ginkgo::new(jet, Variant::Legacy), truth).unwrap();
        let want = r["truth_log_likelihood_legacy_model"].as_f64().unwrap();
        assert!(
            rel_close(legacy, want, 1e-9),
            "{} legacy: {legacy} vs {want}",
            jet.id
        );
    }
    assert_eq!(examples.jets.len(), 30);
}

/// Checks the exact trellis of a jet against one reference trellis record.
fn check_trellis(jet: &trellis::ginkgo::Jet, variant: Variant, r: &Value) {
    let model = Ginkgo::new(jet, variant);
    let t = Trellis::new(&model).unwrap();
    let (log_z, map) = (
        r["log_Z"].as_f64().unwrap(),
        r["map_log_likelihood"].as_f64().unwrap(),
    );
    assert!(
        rel_close(t.log_z(), log_z, 1e-7),
        "{} {variant:?}: log Z {} vs {log_z}",
        jet.id,
        t.log_z()
    );
    assert!(
        rel_close(t.map().log_potential, map, 1e-7),
        "{} {variant:?}: MAP {} vs {map}",
        jet.id,
        t.map().log_potential
    );
    // The MAP tree scores its value when its summaries are merged along the
    // tree too (the trellis tabulates them per subset).
    let tree = &t.map().tree;
    let scored = tree_log_potential(&model, tree).unwrap();
    assert!(
        rel_close(scored, map, 1e-9),
        "{}: MAP tree scores {scored} vs {map}",
        jet.id
    );
    let nonzero = r["n_trees_nonzero_likelihood"].as_u64().unwrap();
    assert_eq!(
        num_positive_trees(&model).unwrap(),
        nonzero.into(),
        "{} {variant:?}: trees with non-zero likelihood",
        jet.id
    );
}

#[test]
fn exact_trellis_matches_the_reference_trellis() {
    let Some(dir) = data::dir("ginkgo") else {
        return;
    };
    let reference = read_json(&dir.join("reference_results.json"));
    let jets = JetsFile::read(&dir.join("ginkgo_small.json")).unwrap();
    let (mut current, mut legacy) = (0, 0);
    for jet in &jets.jets {
        let Some(r) = reference.get(&jet.id) else {
            continue;
        };
        check_trellis(jet, Variant::Current, &r["trellis"]);
        current += 1;
        if let Some(l) = r.get("trellis_legacy_lh") {
            check_trellis(jet, Variant::Legacy, l);
            legacy += 1;
        }
    }
    assert_eq!((current, legacy), (78, 34));
}

#[test]
fn legacy_trellis_reproduces_the_papers_stored_results() {
    let Some(dir) = data::dir("ginkgo") else {
        return;
    };
    let results = read_json(&dir.join("reference_examples_results.json"));
    let jets = JetsFile::read(&dir.join("reference_examples.json")).unwrap();
    let stored = results["_validation"]["legacy_trellis_vs_TrellisExactTruth_9_10_jets"]
        .as_array()
        .unwrap();
    for s in stored {
        let id = s["id"].as_str().unwrap();
        let jet = jets.jets.iter().find(|j| j.id == id).unwrap();
        let model = Ginkgo::new(jet, Variant::Legacy);
        let t = Trellis::new(&model).unwrap();
        let (z, m) = (
            s["logZ_stored"].as_f64().unwrap(),
            s["MAP_stored"].as_f64().unwrap(),
        );
        assert!(
            rel_close(t.log_z(), z, 1e-9),
            "{id}: log Z {} vs {z}",
            t.log_z()
        );
        assert!(
            rel_close(t.map().log_potential, m, 1e-9),
            "{id}: MAP {} vs {m}",
            t.map().log_potential
        );
        let count = num_positive_trees(&model).unwrap();
        assert_eq!(
            count,
            (s["Ntrees_stored"].as_f64().unwrap() as u64).into(),
            "{id}"
        );
    }
    assert_eq!(stored.len(), 5);
    // And the current-likelihood trellis of every reference example jet.
    let mut checked = 0;
    for jet in &jets.jets {
        if let Some(r) = results.get(&jet.id) {
            check_trellis(jet, Variant::Current, &r["trellis"]);
            checked += 1;
        }
    }
    assert_eq!(checked, 30);
}
