//! `trellis greedy`, `trellis beam` and `trellis linkage`: the agglomerative
//! baselines the exact trellis is compared with, on the same inputs and with
//! the same output as `map` (the tree's `log_potential`, and `cost` for the
//! cost models, under `--model`).

use anyhow::Result;
use clap::{Args, ValueEnum};
use trellis::baselines::{self as agglomerative, Linkage};
use trellis::ginkgo::{Ginkgo, Jet};
use trellis::{Model, Tree, Weights};

use crate::batch::per_jet;
use crate::commands::{TreeJson, weights_tree_output};
use crate::input::{Input, ginkgo_variant, load_checked, memory_limit};
use crate::{ModelArgs, limits, with_cost_model};

/// Output flags shared by the baselines.
#[derive(Args, Debug)]
pub struct TreeOutput {
    /// Print one JSON object {"n", "log_potential", "cost", "tree"} (with --jets: one per
    /// jet per line, with "id").
    #[arg(long, conflicts_with = "newick")]
    pub json: bool,
    /// Print the tree in Newick.
    #[arg(long)]
    pub newick: bool,
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
    /// Beam width: partial clusterings kept per level [default: N(N-1)/2, as in the paper].
    #[arg(long, value_name = "W")]
    pub width: Option<usize>,
    #[command(flatten)]
    pub output: TreeOutput,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkageMethod {
    /// Nearest neighbour.
    Single,
    /// Mean distance (UPGMA); the A* paper's greedy baseline.
    Average,
    /// Farthest neighbour.
    Complete,
    /// Ward's minimum variance.
    Ward,
}

#[derive(Args, Debug)]
pub struct LinkageArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Linkage: distances are max(similarity) - similarity for weights and points, and
    /// the angle between the leaves' 3-momenta for jets.
    #[arg(long, value_enum)]
    pub method: LinkageMethod,
    #[command(flatten)]
    pub output: TreeOutput,
}

/// The tree of a jets-file baseline, scored under the jet model.
fn jet_tree_json(jet: &Jet, model: &Ginkgo, tree: Tree) -> Result<TreeJson> {
    Ok(TreeJson {
        n: jet.len(),
        log_potential: trellis::tree_log_potential(model, &tree)?,
        cost: None,
        tree,
    })
}

/// The problem a baseline runs on.
#[derive(Clone, Copy)]
enum Problem<'a> {
    Weights(&'a Weights),
    Jet(&'a Jet),
}

/// A search of a baseline over any model (greedy and beam search), or over
/// the distances of the problem (linkage).
trait Baseline: Sync {
    /// The tree of the search on `model` of `problem`.
    fn search<M: Model>(&self, model: &M, problem: Problem<'_>) -> Result<Tree>;
}

/// Runs a baseline on the input of `args` and prints its tree like `map`.
/// `work(n)` estimates the cost of one search over `n` points (progress bar);
/// `memory(n)` the bytes it holds, checked before anything runs (with one
/// search per thread for a jets file).
fn run(
    args: &ModelArgs,
    output: &TreeOutput,
    progress: bool,
    work: impl Fn(usize) -> u64 + Sync,
    memory: impl Fn(usize) -> u128,
    title: &str,
    baseline: &impl Baseline,
) -> Result<String> {
    // The memory of a weight matrix and of the search over it is checked
    // before the weights are built.
    let check_points = |n: usize| {
        limits::check(
            &format!("{} over {n} points", title.to_lowercase()),
            memory(n).saturating_add(limits::weights_bytes(n)),
            memory_limit(args),
        )
    };
    let input = load_checked(args, None, &check_points)?;
    let (n, parallel) = match &input {
        Input::Jets(file) => (
            file.jets.iter().map(|j| j.len()).max().unwrap_or(0),
            rayon::current_num_threads(),
        ),
        Input::Weights(w) => (w.n(), 1),
    };
    limits::check(
        &format!("{} over {n} points", title.to_lowercase()),
        memory(n).saturating_mul(parallel as u128),
        memory_limit(args),
    )?;
    match input {
        Input::Jets(file) => {
            let variant = ginkgo_variant(args.model).expect("a jet model");
            per_jet(
                &file,
                progress,
                |jet| work(jet.len()),
                |_, jet| {
                    let model = Ginkgo::new(jet, variant);
                    jet_tree_json(jet, &model, baseline.search(&model, Problem::Jet(jet))?)
                },
            )
        }
        Input::Weights(weights) => {
            // Search at beta = 1 (the choices do not depend on beta > 0), report -beta * cost.
            let problem = Problem::Weights(&weights);
            let tree = with_cost_model!(args.model, &weights, 1.0, |m| baseline
                .search(&m, problem)?);
            weights_tree_output(args, &weights, tree, title, output.json, output.newick)
        }
    }
}

/// Pair evaluations of an `O(n³)` search.
fn cubic(n: usize) -> u64 {
    (n as u64).pow(3)
}

struct Greedy;

impl Baseline for Greedy {
    fn search<M: Model>(&self, model: &M, _: Problem<'_>) -> Result<Tree> {
        Ok(agglomerative::greedy(model)?.tree)
    }
}

pub fn greedy(a: &GreedyArgs, progress: bool) -> Result<String> {
    run(
        &a.model,
        &a.output,
        progress,
        cubic,
        |n| limits::beam_bytes(n, 1),
        "Greedy hierarchy",
        &Greedy,
    )
}

/// Beam search, `None`: the paper's default width.
struct Beam(Option<usize>);

impl Beam {
    fn width(&self, n: usize) -> usize {
        self.0
            .unwrap_or_else(|| agglomerative::default_beam_width(n))
    }
}

impl Baseline for Beam {
    fn search<M: Model>(&self, model: &M, _: Problem<'_>) -> Result<Tree> {
        let width = self.width(model.num_points());
        Ok(agglomerative::beam_search(model, width)?
            .swap_remove(0)
            .tree)
    }
}

pub fn beam(a: &BeamArgs, progress: bool) -> Result<String> {
    if a.width == Some(0) {
        anyhow::bail!("--width must be at least 1");
    }
    let beam = Beam(a.width);
    run(
        &a.model,
        &a.output,
        progress,
        |n| (beam.width(n) as u64).saturating_mul(cubic(n)),
        |n| limits::beam_bytes(n, beam.width(n)),
        "Beam-search hierarchy",
        &beam,
    )
}

/// Linkage on the distances of the problem: `max(w) - w` for weights, the
/// angles between leaves for jets.
struct ClassicLinkage(Linkage);

impl Baseline for ClassicLinkage {
    fn search<M: Model>(&self, _: &M, problem: Problem<'_>) -> Result<Tree> {
        Ok(match problem {
            Problem::Weights(w) => agglomerative::linkage(
                &agglomerative::distances_from_similarities(w),
                w.n(),
                self.0,
            )?,
            Problem::Jet(jet) => agglomerative::linkage(&jet.angle_distances(), jet.len(), self.0)?,
        })
    }
}

pub fn linkage(a: &LinkageArgs, progress: bool) -> Result<String> {
    let method = match a.method {
        LinkageMethod::Single => Linkage::Single,
        LinkageMethod::Average => Linkage::Average,
        LinkageMethod::Complete => Linkage::Complete,
        LinkageMethod::Ward => Linkage::Ward,
    };
    run(
        &a.model,
        &a.output,
        progress,
        cubic,
        |n| 8 * (n as u128) * (n as u128),
        &format!("{:?} linkage hierarchy", a.method),
        &ClassicLinkage(method),
    )
}
