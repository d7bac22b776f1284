//! `.npy` matrices: any bytes are parsed or refused, never a panic or an
//! allocation larger than the data.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = trellis::io::parse_npy(data) {
        assert!(m.rows.saturating_mul(m.cols) <= data.len());
        let _ = trellis::Weights::from_matrix(&m);
    }
});
