//! `trellis greedy`, `trellis beam` and `trellis linkage`: the agglomerative
//! baselines the exact trellis is compared with, on the same inputs and with
//! the same output as `map` (the tree's `log_potential`, and `cost` for the
//! cost models, under `--model`).

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::{ArgGroup, Args};
use trellis::baselines::{Linkage, Method, Metric, linkage_input};
use trellis::ginkgo::Jet;
use trellis::input::Naming;

use crate::batch::per_jet;
use crate::commands::{check_jets_outputs, printer};
use crate::input::{Input, choice, ginkgo_variant, load_checked, memory_limit, sources};
use crate::trees::DendrogramArgs;
use crate::{BudgetArgs, DataArgs, ModelArgs, ModelName};
use trellis::print::{self, Heights};

/// Output flags shared by the baselines.
#[derive(Args, Debug)]
pub struct TreeOutput {
    /// Print one JSON object {"n", "log_potential", "cost", "tree"} (with --jets: one per
    /// jet per line, with "id").
    #[arg(long, conflicts_with = "newick")]
    pub json: bool,
    /// Print the tree in rooted Newick with branch lengths (see --heights).
    #[arg(long)]
    pub newick: bool,
    #[command(flatten)]
    pub dendrogram: DendrogramArgs,
}

#[derive(Args, Debug)]
pub struct GreedyArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub output: TreeOutput,
}

#[derive(Args, Debug)]
pub struct BeamArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Beam width: partial clusterings kept per level [default: N(N-1)/2 up to 40 points,
    /// 1000 above, as in the A* paper]. Time grows about linearly and memory at most
    /// quadratically with the width (about 100 MB at width 1000 and 200 points).
    #[arg(long, value_name = "W")]
    pub width: Option<usize>,
    #[command(flatten)]
    pub output: TreeOutput,
}

#[derive(Args, Debug)]
#[command(group(ArgGroup::new("input").required(true).args(["weights", "points", "jets", "distances"])))]
#[command(mut_arg("beta", |a| a.help("Inverse temperature of --model: log psi = -beta * cost")))]
#[command(mut_arg("max_memory", |a| a.help("Refuse to run if the input and the search need more \
    than this many GiB [default: the memory available]")))]
pub struct LinkageArgs {
    /// Score the tree under this model and report its "log_potential" and "cost" (hcc,
    /// dasgupta over --weights or the points' similarity; ginkgo, ginkgo-legacy for
    /// --jets, where it is required). Not with --distances.
    #[arg(long, value_name = "MODEL", value_parser = crate::input::hierarchy_model, conflicts_with = "distances")]
    pub model: Option<ModelName>,

    /// Jets file (JSON): linkage on the angles between the leaves' 3-momenta; one JSON
    /// object per jet per line.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["distances", "metric"])]
    pub jets: Option<PathBuf>,

    /// What the linkage of --points runs on: `euclidean` distances between the rows (as
    /// SciPy's `linkage(points)`), or `similarity`: max(s) - s for the points'
    /// similarity s (--similarity, --center; the behaviour before --metric, and the
    /// weights --model scores with) [default: euclidean].
    #[arg(long, value_parser = choice::<Metric>(), requires = "points", conflicts_with = "distances")]
    pub metric: Option<Metric>,

    /// Dissimilarities: an N x N symmetric matrix of distances >= 0 (CSV without header
    /// or .npy, `-` for standard input; the diagonal is ignored), or SciPy's condensed
    /// vector of the N(N-1)/2 distances d01, d02, ..., d12, ... as one row or one column (of
    /// more than one value: a single value is the 1 x 1 matrix of one point).
    /// The linkage matrix equals SciPy's `linkage` on the same distances.
    #[arg(long, value_name = "FILE")]
    pub distances: Option<PathBuf>,

    #[command(flatten)]
    pub data: DataArgs,

    #[command(flatten)]
    pub budget: BudgetArgs,

    /// Linkage: distances are those of --distances, the Euclidean distances of --points
    /// (see --metric), max(similarity) - similarity for --weights, and the angle between
    /// the leaves' 3-momenta for jets.
    #[arg(long, value_parser = choice::<Linkage>())]
    pub method: Linkage,
    #[command(flatten)]
    pub output: TreeOutput,
}

impl LinkageArgs {
    /// The model arguments of `--model`.
    fn model_args(&self, model: ModelName) -> ModelArgs {
        ModelArgs {
            model,
            jets: self.jets.clone(),
            distances: self.distances.clone(),
            data: self.data.clone(),
            budget: self.budget.clone(),
            time_limit: None,
        }
    }
}

/// Runs a baseline on the input of `args` and prints its tree like `map`;
/// what it holds (with one search per thread for a jets file) is checked
/// before anything runs.
fn run(
    args: &ModelArgs,
    output: &TreeOutput,
    progress: bool,
    title: &str,
    method: Method,
) -> Result<String> {
    let (what, limit) = (title.to_lowercase(), memory_limit(args));
    // The memory of a weight matrix and of the search over it is checked
    // before the weights are built.
    let check_points = |n: usize| Ok(method.check_memory(&what, (n, 1), true, limit)?);
    check_jets_outputs(args, &output.dendrogram, output.newick)?;
    let input = load_checked(args, None, &check_points)?;
    let (n, parallel) = match &input {
        Input::Jets(file) => {
            let n = file.jets.iter().map(|j| j.len()).max().unwrap_or(0);
            (n, rayon::current_num_threads())
        }
        Input::Weights(w) => (w.n(), 1),
    };
    method.check_memory(&what, (n, parallel), false, limit)?;
    match input {
        Input::Jets(file) => {
            let variant = ginkgo_variant(args.model).expect("a jet model");
            let flags = &output.dendrogram;
            let linkage = flags.any().then_some(flags.heights);
            let work = |jet: &Jet| method.work(jet.len());
            per_jet(&file, progress, work, |_, jet| {
                Ok(method.jet_tree(jet, variant, linkage)?)
            })
        }
        Input::Weights(weights) => {
            let tree = method.pairwise_tree(args.model, &weights)?;
            let format = output.dendrogram.output(output.json, output.newick);
            let p = printer(args, &weights, output.dendrogram.heights());
            Ok(p.tree(tree, title, None, format)?)
        }
    }
}

pub fn greedy(a: &GreedyArgs, progress: bool) -> Result<String> {
    crate::input::refuse_time_limit(&a.model, "greedy")?;
    run(
        &a.model,
        &a.output,
        progress,
        "Greedy hierarchy",
        Method::Greedy,
    )
}

pub fn beam(a: &BeamArgs, progress: bool) -> Result<String> {
    crate::input::refuse_time_limit(&a.model, "beam")?;
    if a.width == Some(0) {
        anyhow::bail!("--width must be at least 1");
    }
    let method = Method::Beam {
        width: a.width,
        memory_limit: memory_limit(&a.model),
    };
    run(
        &a.model,
        &a.output,
        progress,
        "Beam-search hierarchy",
        method,
    )
}

pub fn linkage(a: &LinkageArgs, progress: bool) -> Result<String> {
    let (method, title) = (a.method, format!("{:?} linkage hierarchy", a.method));
    if a.jets.is_some() {
        let model = a.model.ok_or_else(|| {
            anyhow::anyhow!(
                "--jets needs --model ginkgo or ginkgo-legacy (the likelihood it reports)"
            )
        })?;
        return run(
            &a.model_args(model),
            &a.output,
            progress,
            &title,
            Method::Linkage(method),
        );
    }
    linkage_on_matrix(a, method, &title)
}

/// `linkage` on `--distances`, `--points` or `--weights`: the tree and its
/// merge distances, scored under `--model` when it is given.
fn linkage_on_matrix(a: &LinkageArgs, method: Linkage, title: &str) -> Result<String> {
    a.budget.check()?;
    let flags = &a.output.dendrogram;
    if let Some(m) = a.model
        && ginkgo_variant(m).is_some()
    {
        bail!("--model {m} scores jets: give them with --jets FILE");
    }
    if a.model.is_none() && flags.heights == Some(Heights::Cost) {
        bail!(
            "--heights cost needs --model (hcc or dasgupta) to score the tree; leave it out for \
             the merge distances, or use --heights rank"
        );
    }
    let sources = sources(&a.data, a.distances.as_deref());
    let (metric, scored) = (a.metric.unwrap_or_default(), a.model.is_some());
    let limit = a.budget.memory_limit();
    let run = linkage_input(&sources, metric, method, scored, limit, Naming::Flags)?;
    let format = flags.output(a.output.json, a.output.newick);
    let (model, beta) = (a.model, a.budget.beta);
    Ok(print::linkage_result(
        run,
        model,
        beta,
        flags.heights,
        title,
        format,
    )?)
}
