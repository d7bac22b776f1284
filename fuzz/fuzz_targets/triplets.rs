//! Triplet files over a few named points: parsed or refused, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let names: Vec<String> = ["a", "b", "c", "d", "e"].map(String::from).to_vec();
        if let Ok(ts) = trellis::ddt::parse_triplets(text, &names) {
            let _ = trellis::ddt::build(names.len(), &ts);
        }
    }
});
