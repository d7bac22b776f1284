//! The shared reference data (`../shared/data` next to the repository), used
//! by the tests that check against external ground truth when it is present.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// `../shared/data/<sub>`, or `None` (with a message) when it is absent.
pub fn dir(sub: &str) -> Option<PathBuf> {
    let d = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data")).join(sub);
    if d.is_dir() {
        Some(d)
    } else {
        eprintln!(
            "SKIPPED: {} not found (the shared reference data is absent)",
            d.display()
        );
        None
    }
}

/// A JSON file, or a panic naming it.
pub fn read_json(path: &Path) -> Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}
