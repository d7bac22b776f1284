//! Every input the fuzzers found (`fuzz/regressions/<target>/`), replayed
//! through the same checks as the fuzz targets (`fuzz/checks.rs`): each is
//! refused cleanly or answered with the invariants intact.

// Shared with `issue22_fuzz` (one copy of the module in this test binary).
#[path = "../../../fuzz/checks.rs"]
pub mod checks;

use std::path::Path;

fn replay(target: &str, check: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/regressions")
        .join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        let data = std::fs::read(&path).expect("a regression input");
        let outcome = std::panic::catch_unwind(|| check(&data));
        assert!(outcome.is_ok(), "{} fails its check again", path.display());
    }
}

#[test]
fn fuzz_findings_in_the_readers_stay_fixed() {
    replay("csv", checks::csv);
    replay("npy", checks::npy);
    replay("jets", checks::jets);
    replay("newick", checks::newick);
    replay("csv_names", checks::csv_names);
    replay("newick_names", checks::newick_names);
    replay("triplets", checks::triplets);
}

#[test]
fn fuzz_findings_in_the_numeric_core_stay_fixed() {
    replay("numeric", checks::numeric);
}
