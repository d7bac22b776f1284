//! CSV weights and points: any text is parsed or refused, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        for header in [false, true] {
            if let Ok(m) = trellis::io::parse_csv(text, header) {
                assert!(m.rows > 0 && m.cols > 0);
                // Validation as weights: refused or square, finite, symmetric.
                let _ = trellis::Weights::from_matrix(&m);
            }
        }
        let _ = trellis::io::parse_clusters(text, 12);
    }
});
