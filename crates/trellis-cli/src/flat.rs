//! `trellis flat ...`: exact inference over all flat clusterings (partitions).

use anyhow::{Result, bail};
use clap::{ArgGroup, Args, Subcommand, ValueEnum};
use serde::Serialize;
use trellis::flat::{CorrelationClustering, FlatTrellis, Partition, perturb_and_map};
use trellis::{Options, Weights};

use crate::DataArgs;
use crate::commands::{ClusterJson, to_json};
use crate::input::read_weights;
use crate::output;
use crate::progress::Bar;

#[derive(Subcommand, Debug)]
pub enum FlatCommand {
    /// The MAP (highest-energy) partition.
    Map(MapArgs),
    /// The log partition function, log Z, over all Bell(N) partitions.
    Logz(LogzArgs),
    /// The marginal of every cluster and the pairwise co-clustering matrix.
    Marginals(MarginalsArgs),
    /// Exact samples of partitions.
    Sample(SampleArgs),
    /// Perturb-and-MAP approximation of the pairwise co-clustering matrix (a
    /// comparator for the exact marginals).
    PerturbMap(PerturbArgs),
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlatModel {
    /// Correlation clustering: log E(c) = beta * (sum of the weights inside c).
    Cc,
}

/// The energy model and its data.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("input").required(true).args(["weights", "points"])))]
pub struct FlatModelArgs {
    /// Cluster energy: `cc`, correlation clustering, log E(c) = beta * sum_{i<j in c} w_ij
    /// (positive weights attract, negative repel; singletons have energy 1).
    #[arg(long, value_enum)]
    pub model: FlatModel,
    #[command(flatten)]
    pub data: DataArgs,
    /// Inverse temperature: scales every log-energy. The MAP does not depend on it.
    #[arg(
        long,
        default_value_t = 1.0,
        value_name = "B",
        allow_negative_numbers = true
    )]
    pub beta: f64,
    /// Refuse to run if the trellis tables need more than this many GiB
    /// [default: the memory available].
    #[arg(long, value_name = "GIB")]
    pub max_memory: Option<f64>,
}

#[derive(Args, Debug)]
pub struct MapArgs {
    #[command(flatten)]
    model: FlatModelArgs,
    /// Print one JSON object {"n", "log_energy", "clusters": [[..], ..]}.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
pub struct LogzArgs {
    #[command(flatten)]
    model: FlatModelArgs,
    /// Print one JSON object {"n", "log_z"}.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
pub struct MarginalsArgs {
    #[command(flatten)]
    model: FlatModelArgs,
    /// Only list clusters with probability >= P (clusters with p = 0 are never listed).
    #[arg(long, default_value_t = 0.0, value_name = "P")]
    min_p: f64,
    /// How many clusters the readable summary lists (JSON lists all).
    #[arg(long, default_value_t = 20, value_name = "K")]
    top: usize,
    /// Print one JSON object {"n", "log_z", "clusters": [{"members", "p"}, ..],
    /// "pairwise": [[..], ..]} (n x n, diagonal 1).
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
pub struct SampleArgs {
    #[command(flatten)]
    model: FlatModelArgs,
    /// Number of samples.
    #[arg(short = 'n', long = "num-samples", value_name = "K")]
    num_samples: usize,
    /// Seed of the random number generator (xoshiro256++); same seed, same samples.
    #[arg(long, default_value_t = 0, value_name = "S")]
    seed: u64,
    /// Print one JSON object {"n", "samples": [[[..], ..], ..]} (each sample a list of clusters).
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
pub struct PerturbArgs {
    #[command(flatten)]
    model: FlatModelArgs,
    /// Number of perturbed MAP problems.
    #[arg(short = 'n', long = "num-samples", value_name = "K")]
    num_samples: usize,
    /// Seed of the Gumbel noise (sample i has its own stream).
    #[arg(long, default_value_t = 0, value_name = "S")]
    seed: u64,
    /// Print one JSON object {"n", "num_samples", "pairwise": [[..], ..]}.
    #[arg(long)]
    json: bool,
}

fn weights(a: &FlatModelArgs) -> Result<Weights> {
    if !(a.beta.is_finite() && a.beta >= 0.0) {
        bail!("--beta must be a finite number >= 0, not {}", a.beta);
    }
    if let Some(g) = a.max_memory {
        if !(g.is_finite() && g > 0.0) {
            bail!("--max-memory must be a positive number of GiB, not {g}");
        }
    }
    read_weights(&a.data)
}

/// The flat trellis of correlation clustering at `beta`, with a progress bar.
fn build(
    a: &FlatModelArgs,
    w: &Weights,
    beta: f64,
    progress: bool,
) -> Result<FlatTrellis<CorrelationClustering>> {
    let n = w.n();
    let bar = Bar::new(progress, (3u64.pow(n.min(40) as u32) - 1) / 2);
    let callback = bar.callback();
    let options = Options {
        memory_limit: a.max_memory.map(|g| (g * (1u64 << 30) as f64) as u64),
        progress: callback
            .as_ref()
            .map(|f| f as &(dyn Fn(&str, u64, u64) + Sync)),
    };
    Ok(FlatTrellis::with_options(
        CorrelationClustering::new(w, beta)?,
        &options,
    )?)
}

fn partition_text(p: &Partition) -> String {
    p.iter()
        .map(|c| {
            format!(
                "{{{}}}",
                c.iter()
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[derive(Serialize)]
struct MapJson {
    n: usize,
    log_energy: f64,
    clusters: Partition,
}

pub fn run(cmd: &FlatCommand, progress: bool) -> Result<String> {
    match cmd {
        FlatCommand::Map(a) => {
            let w = weights(&a.model)?;
            // The MAP does not depend on beta > 0: search at beta = 1, report beta * (weight kept).
            let t = build(&a.model, &w, 1.0, progress)?;
            let clusters = t.map_clustering();
            let log_energy = a.model.beta * t.map_log_energy() + 0.0;
            if a.json {
                to_json(&MapJson {
                    n: w.n(),
                    log_energy,
                    clusters,
                })
            } else {
                Ok(format!(
                    "MAP partition of {} points into {} clusters: log energy {log_energy:.6} at beta {}\n{}\n",
                    w.n(),
                    clusters.len(),
                    a.model.beta,
                    partition_text(&clusters)
                ))
            }
        }
        FlatCommand::Logz(a) => {
            let w = weights(&a.model)?;
            let t = build(&a.model, &w, a.model.beta, progress)?;
            if a.json {
                to_json(&serde_json::json!({"n": w.n(), "log_z": t.log_z()}))
            } else {
                Ok(format!(
                    "log Z = {:.10}\n({} points, {} partitions, beta {})\n",
                    t.log_z(),
                    w.n(),
                    output::approx(&t.num_partitions()),
                    a.model.beta
                ))
            }
        }
        FlatCommand::Marginals(a) => {
            if !(0.0..=1.0).contains(&a.min_p) {
                bail!("--min-p must be between 0 and 1, not {}", a.min_p);
            }
            let w = weights(&a.model)?;
            let t = build(&a.model, &w, a.model.beta, progress)?;
            let m = t.marginals();
            let clusters = m.clusters(a.min_p);
            #[derive(Serialize)]
            struct MarginalsJson {
                n: usize,
                log_z: f64,
                clusters: Vec<ClusterJson>,
                pairwise: Vec<Vec<f64>>,
            }
            if a.json {
                return to_json(&MarginalsJson {
                    n: w.n(),
                    log_z: t.log_z(),
                    clusters: clusters
                        .iter()
                        .map(|&(c, p)| ClusterJson {
                            members: trellis::members(c).collect(),
                            p,
                        })
                        .collect(),
                    pairwise: m.pairwise_matrix(),
                });
            }
            let mut s = format!(
                "log Z = {:.10}   ({} points, beta {})\n",
                t.log_z(),
                w.n(),
                a.model.beta
            );
            s += &format!(
                "the {} most probable clusters:\n",
                a.top.min(clusters.len())
            );
            for &(c, p) in clusters.iter().take(a.top) {
                s += &format!("  {p:.6}  {}\n", output::members(c, &output::leaf_index));
            }
            s += "pairwise co-clustering probabilities P(i ~ j):\n";
            for row in m.pairwise_matrix() {
                s += &row
                    .iter()
                    .map(|p| format!("{p:5.3}"))
                    .collect::<Vec<_>>()
                    .join(" ");
                s.push('\n');
            }
            Ok(s)
        }
        FlatCommand::Sample(a) => {
            let w = weights(&a.model)?;
            let t = build(&a.model, &w, a.model.beta, progress)?;
            let samples = t.samples(a.num_samples, a.seed);
            if a.json {
                to_json(&serde_json::json!({"n": w.n(), "samples": samples}))
            } else {
                let mut s = String::new();
                for p in &samples {
                    s += &format!(
                        "{}   log P = {:.6}\n",
                        partition_text(p),
                        t.log_probability(p)?
                    );
                }
                Ok(s)
            }
        }
        FlatCommand::PerturbMap(a) => {
            let w = weights(&a.model)?;
            if w.n() > trellis::MAX_POINTS {
                bail!(
                    "{} points: each perturbed MAP runs the exact trellis, at most {}",
                    w.n(),
                    trellis::MAX_POINTS
                );
            }
            let pairwise = perturb_and_map(&w, a.model.beta, a.num_samples, a.seed)?;
            if a.json {
                to_json(
                    &serde_json::json!({"n": w.n(), "num_samples": a.num_samples, "pairwise": pairwise}),
                )
            } else {
                let mut s = format!(
                    "Perturb-and-MAP pairwise co-clustering frequencies ({} samples, beta {}):\n",
                    a.num_samples, a.model.beta
                );
                for row in &pairwise {
                    s += &row
                        .iter()
                        .map(|p| format!("{p:5.3}"))
                        .collect::<Vec<_>>()
                        .join(" ");
                    s.push('\n');
                }
                Ok(s)
            }
        }
    }
}
