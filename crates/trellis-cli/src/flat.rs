//! `trellis flat ...`: exact inference over all flat clusterings (partitions).
//!
//! The memory of the tables (and of the marginals listed, and of every
//! perturbed MAP problem of `perturb-map`) is checked against `--max-memory`
//! before anything is built; `sample` writes each partition as it is drawn.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::{ArgGroup, Args, Subcommand, ValueEnum};
use trellis::flat::perturb_and_map;
use trellis::input::Naming;
use trellis::job::{FlatFamily, FlatJob, FlatRun};
use trellis::posterior::Need;
use trellis::print::{self, PartitionSamples};
use trellis::{ProgressFn, Workload};

use crate::input::{NamedWeights, read_input};
use crate::output::put;
use crate::progress::{Bar, options};
use crate::{BudgetArgs, DataArgs, ListArgs, SamplesArgs};

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
    /// The partition minimising the exact posterior expected Binder loss.
    Summary(SummaryArgs),
}

/// A loss whose posterior expectation `flat summary` minimises.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loss {
    /// Binder's loss: sum over pairs i < j of cost-split if the estimate separates a pair
    /// that shares a cluster, cost-join if it joins a pair that does not.
    Binder,
}

#[derive(Args, Debug)]
pub struct SummaryArgs {
    #[command(flatten)]
    model: FlatModelArgs,
    /// The loss: `binder`, whose expectation sum_{i<j} [together: cost-join * (1 - p_ij);
    /// apart: cost-split * p_ij] over the exact co-clustering probabilities p_ij is
    /// minimised exactly (a correlation clustering of the p_ij on the flat trellis).
    #[arg(long, value_enum, default_value = "binder")]
    loss: Loss,
    /// Cost of splitting a pair that belongs together (estimate apart, truth together).
    #[arg(
        long,
        default_value_t = 1.0,
        value_name = "A",
        allow_negative_numbers = true
    )]
    cost_split: f64,
    /// Cost of joining a pair that belongs apart (estimate together, truth apart).
    #[arg(
        long,
        default_value_t = 1.0,
        value_name = "B",
        allow_negative_numbers = true
    )]
    cost_join: f64,
    /// Print one JSON object {"n", "clusters": [[..], ..], "expected_loss"} (plus "names"
    /// when the points have names).
    #[arg(long)]
    json: bool,
}

/// The energy model and its data.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("input").required(true).args(["weights", "points"])))]
#[command(mut_arg("beta", |a| a.help("Inverse temperature: scales every log-energy. \
    The MAP does not depend on it")))]
pub struct FlatModelArgs {
    /// Cluster energy: `cc`, correlation clustering, log E(c) = beta * sum_{i<j in c} w_ij
    /// (positive weights attract, negative repel; singletons have energy 1).
    #[arg(long, value_name = "MODEL", value_parser = crate::input::flat_model)]
    pub model: trellis::models::ModelName,
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// Pairs of points that must share a cluster, one `a b` (or `a,b`) per line: point
    /// names, or 0-based indices when the points have none; `#` starts a comment. The
    /// answer is restricted to the partitions that keep every pair together (map, logz,
    /// marginals, sample; the full flat trellis, not --sparse).
    #[arg(long, value_name = "FILE")]
    pub must_link: Option<PathBuf>,
    /// Pairs of points that must be in different clusters (as --must-link); a pair that
    /// the must-links join is refused.
    #[arg(long, value_name = "FILE")]
    pub cannot_link: Option<PathBuf>,
    /// Keep the finished levels of the full flat trellis's passes in DIR (created if
    /// missing) and resume from them: `map`, `logz`, `marginals`, `sample` or `summary`
    /// killed part-way gives the identical answer when run again with the same DIR. Each
    /// level is written atomically with a header naming the run and a SHA-256 checksum; a
    /// DIR of another run (points, weights, beta) or a damaged file is refused (exit 2).
    /// --sparse and `perturb-map` refuse it. Delete DIR when the answer is in.
    #[arg(long, value_name = "DIR")]
    pub checkpoint: Option<PathBuf>,
}

/// A family of clusters for a sparse flat trellis.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// The partitions that cut one hierarchy into some of its nodes (linear time): the
    /// hierarchy of --tree, or by default the average-linkage tree of the weights.
    Tree,
    /// The partitions made of the clusters listed in --clusters FILE, a family closed under
    /// recursive complement (flat paper, Definition 5); any number of points.
    Clusters,
}

/// The flags of a sparse flat trellis, shared by `map`, `logz` and `sample`.
#[derive(Args, Debug)]
pub struct FlatSparseArgs {
    /// Restrict the partitions to a family of clusters (approximate; beyond the 30 points of
    /// the full trellis). The JSON output adds "num_partitions_realised" (a decimal string),
    /// "sparsity" (that number over Bell(N); 0 where it underflows, beyond about 200
    /// points) and "log10_sparsity" (its log10, finite at any size).
    #[arg(long, value_enum)]
    sparse: Option<Family>,
    /// With --sparse tree: the hierarchy over all points, a nested JSON list of indices
    /// or Newick (leaf labels are the points' names when they have names, else indices)
    /// [default: average linkage on max(w) - w].
    #[arg(long, value_name = "TREE", requires = "sparse")]
    tree: Option<String>,
    /// With --sparse clusters: one cluster per line, 0-based point indices separated by
    /// spaces or commas (the whole set is added).
    #[arg(long, value_name = "FILE", requires = "sparse")]
    clusters: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct MapArgs {
    #[command(flatten)]
    model: FlatModelArgs,
    #[command(flatten)]
    sparse: FlatSparseArgs,
    /// Print one JSON object {"n", "log_energy", "clusters": [[..], ..]}.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
pub struct LogzArgs {
    #[command(flatten)]
    model: FlatModelArgs,
    #[command(flatten)]
    sparse: FlatSparseArgs,
    /// Print one JSON object {"n", "log_z"}.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
pub struct MarginalsArgs {
    #[command(flatten)]
    model: FlatModelArgs,
    #[command(flatten)]
    list: ListArgs,
    /// Print one JSON object {"n", "log_z", "clusters": [{"members", "p"}, ..],
    /// "pairwise": [[..], ..]} (n x n, diagonal 1).
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
pub struct SampleArgs {
    #[command(flatten)]
    model: FlatModelArgs,
    #[command(flatten)]
    sparse: FlatSparseArgs,
    #[command(flatten)]
    samples: SamplesArgs,
    /// Print one JSON object {"n", "samples": [[[..], ..], ..]} (each sample a list of clusters).
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
#[command(mut_arg("num_samples", |a| a.help("Number of perturbed MAP problems")))]
#[command(mut_arg("seed", |a| a.help("Seed of the Gumbel noise (sample i has its own stream)")))]
pub struct PerturbArgs {
    #[command(flatten)]
    model: FlatModelArgs,
    #[command(flatten)]
    samples: SamplesArgs,
    /// Print one JSON object {"n", "num_samples", "pairwise": [[..], ..]}.
    #[arg(long)]
    json: bool,
}

/// What to use instead of the full flat trellis over too many points.
const FLAT_ALTERNATIVES: &str = "for more points, `map`, `logz` and `sample` take \
     --sparse tree (the partitions that cut one hierarchy, by default the average-linkage \
     tree; linear time, any number of points) or --sparse clusters --clusters FILE (the \
     partitions made of a family of clusters, any number of points)";

/// Reads the weights. With `dense = Some(workload)` the flat trellis over
/// every subset will run: its point and memory limits are checked on the
/// number of points, before the `N x N` weights are built.
fn weights(a: &FlatModelArgs, dense: Option<Workload>) -> Result<NamedWeights> {
    a.budget.check()?;
    let check = |n: usize| -> Result<()> {
        match dense {
            Some(workload) => trellis::check_memory(n, workload, a.budget.memory_limit())
                .map_err(|e| anyhow::anyhow!("{e} ({FLAT_ALTERNATIVES})")),
            None => Ok(()),
        }
    };
    read_input(
        &a.data,
        None,
        a.budget.memory_limit(),
        None,
        &check,
        trellis::models::InputKind::Weights,
    )
}

/// A progress bar of the `(3^n - 1)/2` terms of a flat trellis pass.
fn bar(n: usize, progress: bool) -> Bar {
    Bar::new(progress, (3u64.pow(n.min(40) as u32) - 1) / 2)
}

/// The library's description of the flat run of `a` over `family`.
fn job<'a>(a: &'a FlatModelArgs, family: FlatFamily<'a>) -> FlatJob<'a> {
    FlatJob {
        beta: a.budget.beta,
        family,
        must_link: a.must_link.as_deref(),
        cannot_link: a.cannot_link.as_deref(),
        memory_limit: a.budget.memory_limit(),
        checkpoint: a.checkpoint.as_deref(),
        naming: Naming::Flags,
    }
}

/// The flat trellis over every partition of the weights of `a` (restricted
/// by the links) at `beta`, computing what `need` says.
fn dense(
    a: &FlatModelArgs,
    named: NamedWeights,
    beta: f64,
    progress: bool,
    need: Need,
) -> Result<FlatRun> {
    let bar = bar(named.n(), progress);
    let callback = bar.callback();
    let progress = callback.as_ref().map(|f| f as ProgressFn<'_>);
    Ok(job(a, FlatFamily::All).posterior(named, beta, need, progress)?)
}

/// Runs the inference asked for by `a` and `sparse` at `beta`: over all
/// partitions only what `need` says (the MAP alone is one max-plus pass, log
/// Z alone one weight pass), over a family everything.
fn infer(
    a: &FlatModelArgs,
    sparse: &FlatSparseArgs,
    beta: f64,
    progress: bool,
    need: Need,
) -> Result<FlatRun> {
    // The log Z and the MAP alone are one blocked pass each.
    let workload = match need {
        Need::LogZ | Need::Map => Workload::FlatPass,
        Need::All | Need::Samples | Need::Marginals | Need::Everything => Workload::FlatInside,
    };
    let named = weights(a, sparse.sparse.is_none().then_some(workload))?;
    let family = match (sparse.sparse, &sparse.tree, &sparse.clusters) {
        (None, None, None) => return dense(a, named, beta, progress, need),
        (None, _, _) => bail!("--tree and --clusters choose the family of --sparse"),
        (Some(Family::Tree), _, Some(_)) => {
            bail!("--clusters goes with --sparse clusters, not --sparse tree")
        }
        (Some(Family::Tree), tree, None) => FlatFamily::TreeCuts(tree.as_deref()),
        (Some(Family::Clusters), Some(_), _) => {
            bail!("--tree goes with --sparse tree, not --sparse clusters")
        }
        (Some(Family::Clusters), None, None) => bail!("--sparse clusters needs --clusters FILE"),
        (Some(Family::Clusters), None, Some(path)) => FlatFamily::Clusters(path),
    };
    Ok(job(a, family).posterior(named, beta, need, None)?)
}

pub fn run(cmd: &FlatCommand, progress: bool, out: &mut dyn Write) -> Result<String> {
    match cmd {
        FlatCommand::Map(a) => {
            // The MAP does not depend on beta > 0: search at beta = 1, report beta * (weight kept).
            let f = infer(&a.model, &a.sparse, 1.0, progress, Need::Map)?;
            Ok(print::flat_map(&f, a.model.budget.beta, a.json)?)
        }
        FlatCommand::Logz(a) => {
            let beta = a.model.budget.beta;
            let f = infer(&a.model, &a.sparse, beta, progress, Need::LogZ)?;
            Ok(print::flat_log_z(&f, beta, a.json)?)
        }
        FlatCommand::Marginals(a) => {
            let named = weights(&a.model, Some(Workload::FlatMarginals))?;
            job(&a.model, FlatFamily::All).check_marginals(named.n())?;
            let beta = a.model.budget.beta;
            let f = dense(&a.model, named, beta, progress, Need::All)?;
            let (min_p, top) = (a.list.min_p, a.list.top);
            Ok(print::flat_marginals_result(&f, beta, min_p, top, a.json)?)
        }
        FlatCommand::Sample(a) => {
            let beta = a.model.budget.beta;
            let f = infer(&a.model, &a.sparse, beta, progress, Need::All)?;
            let (k, seed) = (a.samples.num_samples, a.samples.seed);
            // Each partition is written as it is drawn.
            let mut samples = PartitionSamples::new(&f, a.json)?;
            put(out, &samples.head())?;
            trellis::until_error(|sink| f.post.each_sample(k, seed, sink), &mut |p| {
                put(out, &samples.item(&p)?)
            })?;
            put(out, &samples.foot()?)?;
            Ok(String::new())
        }
        FlatCommand::Summary(a) => summary(a, progress),
        FlatCommand::PerturbMap(a) => perturb_map(a),
    }
}

/// `flat perturb-map`: the co-clustering frequencies of the MAP partitions
/// of `-n` perturbed problems, each over the exact trellis.
fn perturb_map(a: &PerturbArgs) -> Result<String> {
    let k = a.samples.num_samples;
    if k == 0 {
        bail!(
            "-n must be at least 1: Perturb-and-MAP averages the MAP partitions of \
             that many perturbed problems"
        );
    }
    if a.model.must_link.is_some() || a.model.cannot_link.is_some() {
        bail!("--must-link and --cannot-link apply to map, logz, marginals and sample");
    }
    if a.model.checkpoint.is_some() {
        bail!("--checkpoint is kept by the full flat trellis, not by perturb-map");
    }
    let named = weights(&a.model, Some(Workload::FlatInside))?;
    let names = named.names().map(<[String]>::to_vec);
    let w = named.into_weights();
    let n = w.n();
    if n > trellis::MAX_POINTS {
        bail!(
            "{n} points: each perturbed MAP runs the exact trellis, at most {}",
            trellis::MAX_POINTS
        );
    }
    trellis::plan::check_bytes(
        &format!("Perturb-and-MAP with {k} samples over {n} points"),
        trellis::plan::perturb_map_bytes(n, k, rayon::current_num_threads()),
        a.model.budget.memory_limit(),
    )?;
    let beta = a.model.budget.beta;
    let pairwise = perturb_and_map(&w, beta, k, a.samples.seed)?;
    Ok(print::perturb_map(
        &pairwise,
        k,
        beta,
        names.as_deref(),
        a.json,
    )?)
}

/// `flat summary --loss binder`: the Binder-optimal partition and its
/// expected loss (the readable output compares the MAP partition's).
fn summary(a: &SummaryArgs, progress: bool) -> Result<String> {
    for (flag, c) in [("--cost-split", a.cost_split), ("--cost-join", a.cost_join)] {
        if !(c.is_finite() && c > 0.0) {
            bail!("{flag} must be a finite number > 0, not {c}");
        }
    }
    let named = weights(&a.model, Some(Workload::FlatMarginals))?;
    let beta = a.model.budget.beta;
    let n = named.n();
    let f = dense(&a.model, named, beta, progress, Need::All)?;
    let bar = bar(n, progress);
    let callback = bar.callback();
    let costs = (a.cost_split, a.cost_join);
    let options = options(a.model.budget.memory_limit(), callback.as_ref());
    let binder = f.post.binder_partition(costs.0, costs.1, &options)?;
    Ok(print::binder(&f, &binder, costs, beta, a.json)?)
}
