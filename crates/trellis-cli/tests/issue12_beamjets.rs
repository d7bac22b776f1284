//! Issue 12, beam search and jets through the binary: `beam --help` states
//! the default width (the A* paper's), the default is that width, and a
//! search over the memory cap is refused with the bytes it needs.

use crate::util::{dir, fails, file, json, stdout, weights_csv};

#[test]
fn help_states_the_default_width() {
    let help = stdout(&["beam", "--help"]);
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("[default: N(N-1)/2 up to 40 points, 1000 above, as in the A* paper]"),
        "{help}"
    );
}

#[test]
fn the_default_width_is_the_papers() {
    let d = dir("i12_beam_default");
    let w = file(&d, "w.csv", &weights_csv(12, 3));
    let w = w.to_str().unwrap();
    let base = ["beam", "--model", "hcc", "--weights", w, "--json"];
    let default = json(&base);
    let mut explicit = base.to_vec();
    explicit.extend(["--width", "66"]);
    assert_eq!(default, json(&explicit));
}

#[test]
fn a_search_over_the_cap_names_the_bytes() {
    let d = dir("i12_beam_cap");
    let w = file(&d, "w.csv", &weights_csv(45, 5));
    let w = w.to_str().unwrap();
    // The default width at 45 points is 1000; the message gives what the search
    // and the weights need, in MiB.
    let needed = trellis::baselines::beam_memory(45, 1000) + 8 * 45 * 45;
    assert!(needed > 1 << 20);
    let mib = needed as f64 / (1u64 << 20) as f64;
    fails(
        &[
            "beam",
            "--model",
            "hcc",
            "--weights",
            w,
            "--max-memory",
            "0.001",
        ],
        &format!(
            "beam-search hierarchy over 45 points needs {mib:.1} MiB, which exceeds the \
             --max-memory cap of 1.0 MiB"
        ),
    );
}
