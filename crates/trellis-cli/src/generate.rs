//! `trellis generate`: simulated Ginkgo jets with their true trees, as a jets file.
//!
//! A front-end over `trellis::ginkgo::generate`: parameters from a preset
//! (`qcd`, `w`) with optional overrides, jets conditioned on a leaf-count
//! window by rejection, written in the JSON format of `shared/data/ginkgo`
//! (readable by every command that takes `--jets`).
//!
//! The jets are written as they are simulated, a parallel batch at a time,
//! so any number of them runs in bounded memory; the file's `meta` (with the
//! leaf-count histogram) comes last, after `"jets"`, as in every jets file
//! this tool writes. Parameters whose jets would not be finite numbers are
//! refused, and a shower that grows past `trellis::ginkgo::MAX_JET_LEAVES`
//! leaves is an error rather than a runaway.

use std::io::Write;

use anyhow::{Context, Result, bail};
use clap::Args;
use trellis::Named;
use trellis::ginkgo::{Overrides, Preset, SimulatorParams, generate_stream};
use trellis::input::Naming;

use crate::output::put;

#[derive(Args, Debug)]
pub struct GenerateArgs {
    /// Number of jets to generate.
    #[arg(long, value_name = "K")]
    pub n_jets: usize,
    /// Keep only jets with at least this many leaves (jets with fewer are
    /// re-simulated: the output is conditioned on the leaf count). At least 2.
    #[arg(long, default_value_t = 2, value_name = "A")]
    pub min_leaves: usize,
    /// Keep only jets with at most this many leaves (inclusive; default: no limit).
    #[arg(long, value_name = "B")]
    pub max_leaves: Option<usize>,
    /// Seed of the run. Jet k is simulated from its own generator, seeded from
    /// (seed, k), so it does not depend on --n-jets or the number of threads.
    #[arg(long, default_value_t = 0, value_name = "S")]
    pub seed: u64,
    /// Parameter set to start from; the options below override single values.
    #[arg(long, value_parser = crate::input::choice::<Preset>(), default_value = "qcd")]
    pub preset: Preset,
    /// Exponential rate of the mass fractions of every split below the root.
    #[arg(long, value_name = "RATE")]
    pub lambda: Option<f64>,
    /// Exponential rate of the mass fractions of the root (first) split.
    #[arg(long, value_name = "RATE")]
    pub lambda_root: Option<f64>,
    /// Invariant mass M of the jet (not squared): the shower starts at M2 = M^2.
    #[arg(long, value_name = "M")]
    pub root_mass: Option<f64>,
    /// Mass-squared cut: a particle with t = E^2 - |p|^2 at or below it does not
    /// decay further (written as params.delta_min / pt_cut).
    #[arg(long, value_name = "T")]
    pub t_cut: Option<f64>,
    /// The jet's 3-momentum, three comma-separated numbers (default: |p| = 400 along
    /// (1,1,1)); the jet's energy sqrt(|p|^2 + M^2) must be at most 1e75.
    #[arg(
        long,
        value_name = "PX,PY,PZ",
        value_delimiter = ',',
        num_args = 1..=3,
        allow_hyphen_values = true
    )]
    pub momentum: Option<Vec<f64>>,
}

/// The simulator parameters: the preset with the overrides applied.
fn params(args: &GenerateArgs) -> Result<SimulatorParams> {
    let overrides = Overrides {
        lambda: args.lambda,
        lambda_root: args.lambda_root,
        root_mass: args.root_mass,
        t_cut: args.t_cut,
        momentum: args.momentum.as_deref(),
    };
    Ok(args.preset.with(&overrides, Naming::Flags)?)
}

/// Generates the jets and writes the jets file (JSON, one line) to `out`, a
/// jet at a time. Nothing is written until the first batch of jets is made,
/// so that invalid parameters leave stdout empty.
pub fn run(args: &GenerateArgs, out: &mut dyn Write) -> Result<String> {
    if args.n_jets == 0 {
        bail!("--n-jets must be at least 1");
    }
    let p = params(args)?;
    let mut stream = generate_stream(
        &p,
        args.preset.name(),
        args.n_jets,
        args.min_leaves,
        args.max_leaves,
        args.seed,
    )
    .context("invalid simulator parameters")?;
    // The layout of `JetsFile::to_json_string`: {"jets":[...],"meta":{...}}.
    let mut first = true;
    for jet in stream.by_ref() {
        let jet = jet?;
        let sep = if std::mem::take(&mut first) {
            "{\"jets\":["
        } else {
            ","
        };
        put(
            out,
            &format!("{sep}{}", serde_json::to_string(&jet.to_json())?),
        )?;
    }
    put(
        out,
        &format!("],\"meta\":{}}}\n", serde_json::to_string(&stream.meta())?),
    )?;
    Ok(String::new())
}
