//! `trellis greedy`, `trellis beam` and `trellis linkage`: the agglomerative
//! baselines the exact trellis is compared with, on the same inputs and with
//! the same output as `map` (the tree's `log_potential`, and `cost` for the
//! cost models, under `--model`).

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{ArgGroup, Args, ValueEnum};
use trellis::baselines::{self as agglomerative, Linkage};
use trellis::ginkgo::{Ginkgo, Jet};
use trellis::io::Table;
use trellis::{Dendrogram, Model, Search, Tree};

use crate::batch::per_jet;
use crate::commands::{TreeJson, WithLinkage, check_jets_outputs, to_json, weights_tree_output};
use crate::input::Pairwise;
use crate::input::{
    Input, NamedWeights, check_beta_and_memory, gib, ginkgo_variant, load_checked, memory_limit,
    read_input, read_points, similarity_weights,
};
use crate::trees::{DendrogramArgs, HeightsKind};
use crate::{DataArgs, ModelArgs, ModelName, with_cost_model};
use trellis::models::InputKind;
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
    /// WPGMA: the plain mean of the two clusters' distances.
    Weighted,
    /// UPGMC: distance between centroids; heights can decrease (the --linkage matrix keeps
    /// them, as SciPy's; tree heights are made monotone).
    Centroid,
    /// WPGMC: distance between midpoints; heights can decrease, as centroid's.
    Median,
}

/// What the linkage of `--points` runs on.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// Euclidean distances between the rows, as SciPy's `linkage` computes from
    /// observations.
    Euclidean,
    /// max(similarity) - similarity, with the points' similarity (--similarity,
    /// --center).
    Similarity,
}

#[derive(Args, Debug)]
#[command(group(ArgGroup::new("input").required(true).args(["weights", "points", "jets", "distances"])))]
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
    #[arg(long, value_enum, requires = "points", conflicts_with = "distances")]
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

    /// Inverse temperature of --model: log psi = -beta * cost.
    #[arg(
        long,
        default_value_t = 1.0,
        value_name = "B",
        allow_negative_numbers = true
    )]
    pub beta: f64,

    /// Refuse to run if the input and the search need more than this many GiB
    /// [default: the memory available].
    #[arg(long, value_name = "GIB")]
    pub max_memory: Option<f64>,

    /// Linkage: distances are those of --distances, the Euclidean distances of --points
    /// (see --metric), max(similarity) - similarity for --weights, and the angle between
    /// the leaves' 3-momenta for jets.
    #[arg(long, value_enum)]
    pub method: LinkageMethod,
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
            beta: self.beta,
            max_memory: self.max_memory,
            time_limit: None,
            checkpoint: None,
        }
    }
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
    Weights(&'a Pairwise),
    Jet(&'a Jet),
}

/// A search of a baseline over any model (greedy and beam search), or over
/// the distances of the problem (linkage).
trait Baseline: Sync {
    /// The tree of the search on `model` of `problem`.
    fn search<M: Model>(&self, model: &M, problem: Problem<'_>) -> Result<Tree>;

    /// The tree with its merge heights (`--heights`, default by cost).
    fn dendrogram<M: Search>(
        &self,
        model: &M,
        _: Problem<'_>,
        tree: Tree,
        heights: Option<Heights>,
    ) -> Result<Dendrogram> {
        Ok(print::dendrogram(
            model,
            tree,
            heights.unwrap_or(Heights::Cost),
        )?)
    }
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
        trellis::plan::check_bytes(
            &format!("{} over {n} points", title.to_lowercase()),
            memory(n).saturating_add(trellis::plan::weights_bytes(n)),
            memory_limit(args),
        )
        .map_err(anyhow::Error::from)
    };
    check_jets_outputs(args, &output.dendrogram, output.newick)?;
    let input = load_checked(args, None, &check_points)?;
    let (n, parallel) = match &input {
        Input::Jets(file) => (
            file.jets.iter().map(|j| j.len()).max().unwrap_or(0),
            rayon::current_num_threads(),
        ),
        Input::Weights(w) => (w.n(), 1),
    };
    trellis::plan::check_bytes(
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
                    let tree = baseline.search(&model, Problem::Jet(jet))?;
                    let linkage = if output.dendrogram.any() {
                        let d = baseline.dendrogram(
                            &model,
                            Problem::Jet(jet),
                            tree.clone(),
                            output.dendrogram.chosen_heights(),
                        )?;
                        Some(d.linkage()?)
                    } else {
                        None
                    };
                    Ok(WithLinkage {
                        result: jet_tree_json(jet, &model, tree)?,
                        linkage,
                    })
                },
            )
        }
        Input::Weights(weights) => {
            // Search at beta = 1 (the choices do not depend on beta > 0), report -beta * cost.
            let problem = Problem::Weights(&weights);
            let tree = with_cost_model!(args.model, &weights, 1.0, |m| baseline
                .search(&m, problem)?);
            weights_tree_output(
                args,
                &weights,
                tree,
                title,
                output.json,
                output.newick,
                &output.dendrogram,
            )
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
    crate::input::refuse_time_limit(&a.model, "greedy")?;
    run(
        &a.model,
        &a.output,
        progress,
        cubic,
        |n| trellis::plan::beam_bytes(n, 1),
        "Greedy hierarchy",
        &Greedy,
    )
}

/// Beam search at a width (`None`: the A* paper's default) under a memory
/// limit (`--max-memory`).
struct Beam(Option<usize>, Option<u64>);

impl Beam {
    fn width(&self, n: usize) -> usize {
        self.0
            .unwrap_or_else(|| agglomerative::default_beam_width(n))
    }
}

impl Baseline for Beam {
    fn search<M: Model>(&self, model: &M, _: Problem<'_>) -> Result<Tree> {
        let width = self.width(model.num_points());
        let options = trellis::Options {
            memory_limit: self.1,
            ..Default::default()
        };
        Ok(agglomerative::beam_search_with(model, width, &options)?
            .swap_remove(0)
            .tree)
    }
}

pub fn beam(a: &BeamArgs, progress: bool) -> Result<String> {
    crate::input::refuse_time_limit(&a.model, "beam")?;
    if a.width == Some(0) {
        anyhow::bail!("--width must be at least 1");
    }
    let beam = Beam(a.width, memory_limit(&a.model));
    run(
        &a.model,
        &a.output,
        progress,
        |n| (beam.width(n) as u64).saturating_mul(cubic(n)),
        |n| trellis::plan::beam_bytes(n, beam.width(n)),
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
            Problem::Weights(w) => agglomerative::linkage(&w.linkage_distances(), w.n(), self.0)?,
            Problem::Jet(jet) => agglomerative::linkage(&jet.angle_distances(), jet.len(), self.0)?,
        })
    }

    /// By default the merge distances.
    fn dendrogram<M: Search>(
        &self,
        model: &M,
        problem: Problem<'_>,
        tree: Tree,
        heights: Option<Heights>,
    ) -> Result<Dendrogram> {
        if let Some(h) = heights {
            return Ok(print::dendrogram(model, tree, h)?);
        }
        Ok(match problem {
            Problem::Weights(w) => {
                agglomerative::linkage_dendrogram(&w.linkage_distances(), w.n(), self.0)?
            }
            Problem::Jet(jet) => {
                agglomerative::linkage_dendrogram(&jet.angle_distances(), jet.len(), self.0)?
            }
        })
    }
}

pub fn linkage(a: &LinkageArgs, progress: bool) -> Result<String> {
    let method = match a.method {
        LinkageMethod::Single => Linkage::Single,
        LinkageMethod::Average => Linkage::Average,
        LinkageMethod::Complete => Linkage::Complete,
        LinkageMethod::Ward => Linkage::Ward,
        LinkageMethod::Weighted => Linkage::Weighted,
        LinkageMethod::Centroid => Linkage::Centroid,
        LinkageMethod::Median => Linkage::Median,
    };
    let title = format!("{:?} linkage hierarchy", a.method);
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
            cubic,
            |n| 8 * (n as u128) * (n as u128),
            &title,
            &ClassicLinkage(method),
        );
    }
    linkage_on_matrix(a, method, &title)
}

/// `linkage` on `--distances`, `--points` or `--weights`: the tree and its
/// merge distances, scored under `--model` when it is given.
fn linkage_on_matrix(a: &LinkageArgs, method: Linkage, title: &str) -> Result<String> {
    check_beta_and_memory(a.beta, a.max_memory)?;
    let limit = gib(a.max_memory);
    let flags = &a.output.dendrogram;
    if let Some(m) = a.model {
        if ginkgo_variant(m).is_some() {
            bail!("--model {m} scores jets: give them with --jets FILE");
        }
    }
    if a.model.is_none() && flags.heights == Some(HeightsKind::Cost) {
        bail!(
            "--heights cost needs --model (hcc or dasgupta) to score the tree; leave it out for \
             the merge distances, or use --heights rank"
        );
    }
    // The distance matrix, its copy in the search, and the weights.
    let check = |n: usize| {
        trellis::plan::check_bytes(
            &format!("{} over {n} points", title.to_lowercase()),
            (16 * (n as u128) * (n as u128)).saturating_add(trellis::plan::weights_bytes(n)),
            limit,
        )
        .map_err(anyhow::Error::from)
    };
    // (distances, names, weights for --model)
    let (dist, n, names, weights) = if a.distances.is_some() {
        let d = read_input(
            &a.data,
            a.distances.as_deref(),
            limit,
            None,
            &check,
            InputKind::Distances,
        )?;
        (d.linkage_distances(), d.n(), None, None)
    } else if let (Some(path), Metric::Euclidean) =
        (&a.data.points, a.metric.unwrap_or(Metric::Euclidean))
    {
        let Table { names, matrix, .. } = read_points(path, &a.data, limit)?;
        check(matrix.rows)?;
        let weights = match a.model {
            Some(_) => Some(Pairwise::Weights(similarity_weights(&a.data, &matrix)?)),
            None => None,
        };
        let d = agglomerative::euclidean_distances(&matrix)
            .with_context(|| format!("in --points {}", path.display()))?;
        (d, matrix.rows, names, weights)
    } else {
        let w = read_input(&a.data, None, limit, None, &check, InputKind::Weights)?;
        let d = w.linkage_distances();
        if d.iter().any(|x| x.is_infinite()) {
            bail!(
                "the distances max(w) - w overflow: the weights span more than the float range \
                 (up to {}); divide them by at least 2",
                crate::output::number(f64::MAX)
            );
        }
        let n = w.n();
        (d, n, w.names, Some(w.data))
    };
    let dendrogram = agglomerative::linkage_dendrogram(&dist, n, method)?;
    drop(dist);
    let tree = dendrogram.tree().clone();
    let named = |data: Pairwise| NamedWeights {
        data,
        names: names.clone(),
    };
    if a.output.newick || flags.any() {
        let d = match (flags.heights, &weights) {
            (None, _) => dendrogram,
            (Some(HeightsKind::Rank), _) => Dendrogram::by_rank(tree),
            (Some(HeightsKind::Cost), Some(w)) => {
                print::weights_dendrogram(a.model.expect("checked above"), w, tree, Heights::Cost)?
            }
            (Some(HeightsKind::Cost), None) => unreachable!("checked above"),
        };
        let format = flags.format(true).expect("Newick at least");
        return Ok(print::tree_text(&d, names.as_deref(), None, format)?);
    }
    if let (Some(model), Some(w)) = (a.model, weights) {
        let w = named(w);
        return weights_tree_output(
            &a.model_args(model),
            &w,
            tree,
            title,
            a.output.json,
            false,
            &DendrogramArgs::default(),
        );
    }
    if a.output.json {
        #[derive(serde::Serialize)]
        struct Unscored<'a> {
            n: usize,
            tree: &'a Tree,
            #[serde(skip_serializing_if = "Option::is_none")]
            names: Option<&'a [String]>,
        }
        return to_json(&Unscored {
            n,
            tree: &tree,
            names: names.as_deref(),
        });
    }
    // The readable tree with each merge's height.
    let mut height_of = std::collections::HashMap::new();
    for (c, h) in dendrogram.clusters().iter().zip(dendrogram.heights()) {
        height_of.insert((c[0], c.len()), *h);
    }
    let label = |i: usize| match names.as_ref().and_then(|v| v.get(i)) {
        Some(name) => name.clone(),
        None => i.to_string(),
    };
    let mut s = format!("{title} of {n} points (no --model: merge heights only)\n");
    s += &tree.draw(&label, &|l, r| {
        let key = (
            l.min_leaf().min(r.min_leaf()),
            l.num_leaves() + r.num_leaves(),
        );
        height_of.get(&key).map(|h| format!("height {h:.6}"))
    });
    Ok(s)
}
