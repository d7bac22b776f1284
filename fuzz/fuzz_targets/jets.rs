//! Jets files: any text is read or refused; a file that reads writes back
//! to a file that reads to the same jets.
#![no_main]
use libfuzzer_sys::fuzz_target;
use trellis::ginkgo::JetsFile;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(file) = JetsFile::parse(text)
    {
        let again = JetsFile::parse(&file.to_json_string()).expect("our own output reads back");
        assert_eq!(again.jets.len(), file.jets.len());
    }
});
