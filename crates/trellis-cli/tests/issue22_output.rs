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
