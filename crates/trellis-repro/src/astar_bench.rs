//! `trellis-repro astar-bench`: exact A* against the exact trellis DP (MAP +
//! log Z) on one problem per size: wall time (the fastest of the repeats),
//! vertices explored and splits scored against the DP's. Random weights,
//! uniform in [-1, 1] (seeded), for hcc and Dasgupta (`|w|`); one simulated
//! jet per size for the Ginkgo likelihood (heuristic h0). Every row checks
//! that both find the same optimum.

use anyhow::Result;
use clap::Args;
use serde::Serialize;
use trellis::astar::{self, Outcome};
use trellis::models::ModelName;
use trellis::{Dasgupta, Hcc, Options, Search, Trellis, Workload, total_splits};

use crate::astar::jet_params;
use crate::bench::{absolute, model_name, random_weights};
use crate::timing::best_of;

#[derive(Args, Debug)]
pub struct AstarBenchArgs {
    /// Numbers of points to measure, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "10,14,18,20",
        value_name = "N,..."
    )]
    sizes: Vec<usize>,
    /// Runs per size; the fastest is reported.
    #[arg(long, default_value_t = 3, value_name = "R")]
    repeats: usize,
    /// Model of the split potential: hcc, dasgupta, ginkgo or ginkgo-legacy.
    #[arg(long, default_value = "hcc", value_parser = model_name)]
    model: ModelName,
    /// Seed of the random weights (of the simulated jets for --model ginkgo).
    #[arg(long, default_value_t = 1, value_name = "S")]
    seed: u64,
    /// Print one JSON object per size instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct AstarRow {
    n: usize,
    model: String,
    dp_s: f64,
    dp_splits: u64,
    astar_s: f64,
    explored: u64,
    splits: u64,
    splits_per_s: f64,
    splits_over_3n: f64,
    cost: f64,
}

/// The DP's optimum and exact A*'s outcome on one model, each the best of `repeats` runs:
/// `(DP seconds, DP cost, A* seconds, A* outcome)`.
fn compare<M: Search>(model: &M, repeats: usize) -> Result<(f64, f64, f64, Outcome)> {
    let (dp_s, dp) = best_of(repeats, || Ok(-Trellis::new(model)?.map().log_potential))?;
    let (a_s, o) = best_of(repeats, || Ok(astar::exact(model, &Options::default())?))?;
    Ok((dp_s, dp, a_s, o))
}

/// Exact A* against the DP on one problem per size.
pub fn run(args: &AstarBenchArgs) -> Result<String> {
    use trellis::ginkgo::{Ginkgo, Variant, generate_jet};
    let mut out = String::new();
    if !args.json {
        out += &format!(
            "exact A* vs the exact DP (MAP + log Z), {} model, best of {} runs\n   N   DP (s)    \
             DP splits   A* (s)  explored     A* splits   splits/s   splits/3^N\n",
            format!("{:?}", args.model).to_lowercase(),
            args.repeats.max(1)
        );
    }
    for &n in &args.sizes {
        trellis::check_memory(n, Workload::Inside, None)?;
        let (dp_s, dp, astar_s, o) = match args.model {
            ModelName::Ginkgo | ModelName::GinkgoLegacy => {
                let variant = if args.model == ModelName::Ginkgo {
                    Variant::Current
                } else {
                    Variant::Legacy
                };
                let jet = generate_jet(&jet_params(n), args.seed, 0, n, n)?;
                compare(&Ginkgo::new(&jet, variant), args.repeats)?
            }
            ModelName::Hcc => compare(
                &Hcc::new(&random_weights(n, args.seed)?, 1.0)?,
                args.repeats,
            )?,
            ModelName::Dasgupta => {
                let w = absolute(&random_weights(n, args.seed)?)?;
                compare(&Dasgupta::new(&w, 1.0)?, args.repeats)?
            }
            other => {
                anyhow::bail!("astar-bench runs hcc, dasgupta and the Ginkgo models, not {other}")
            }
        };
        if (o.cost - dp).abs() > 1e-7 * dp.abs().max(1.0) {
            anyhow::bail!("A* and the DP disagree at N = {n}: {} vs {dp}", o.cost);
        }
        let row = AstarRow {
            n,
            model: args.model.to_string(),
            dp_s,
            dp_splits: total_splits(n) as u64,
            astar_s,
            explored: o.explored,
            splits: o.splits,
            splits_per_s: o.splits as f64 / astar_s,
            splits_over_3n: o.splits as f64 / 3f64.powi(n as i32),
            cost: o.cost,
        };
        if args.json {
            out += &(serde_json::to_string(&row)? + "\n");
        } else {
            out += &format!(
                "{:>4} {:>8.4} {:>12} {:>8.4} {:>9} {:>13} {:>10.3e} {:>12.3e}\n",
                row.n,
                row.dp_s,
                row.dp_splits,
                row.astar_s,
                row.explored,
                row.splits,
                row.splits_per_s,
                row.splits_over_3n
            );
        }
    }
    Ok(out)
}
