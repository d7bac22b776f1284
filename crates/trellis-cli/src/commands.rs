//! The inference commands: each returns the complete text for stdout.
//!
//! Every command runs on a weight matrix (one JSON object, or a readable
//! summary) or on a jets file (`--jets`: one JSON object per jet per line,
//! each with the jet's `"id"` and the fields of the single-problem output).
//! `sample` on a weight matrix writes each sample as it is drawn; the memory
//! of what is held for the output (every jet's samples, the clusters listed
//! by `marginals`) is checked with the tables before anything runs.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::Serialize;
use serde_json::json;
use trellis::ddt::Triplet;
use trellis::ginkgo::{Ginkgo, Jet};
use trellis::posterior::{Need, Posterior};
use trellis::{Dendrogram, Search, Tree, Workload, total_splits, tree_log_potential};

use crate::batch::{dense_work, per_jet};
use crate::input::{
    Input, NamedWeights, Pairwise, load, load_checked, memory_limit, time_limit, variant,
};
use crate::output::{self, ClusterJson, put};
use crate::progress::{Bar, options};
use crate::sparse::SparseArgs;
use crate::trees::{self, DendrogramArgs, HeightsKind};
use crate::{
    InferArgs, LogzArgs, MapArgs, MarginalsArgs, ModelArgs, SampleArgs, ScoreArgs, TripletArgs,
    with_cost_model,
};
use trellis::plan::Task;
pub use trellis::report::{
    InferJson, MapJson, MarginalsJson, TreeJson, WithLinkage, with_sparsity,
};

/// Largest N accepted by `count` (the number has about N·log10(2N) digits).
const MAX_COUNT_N: usize = 100_000;

/// Runs whose estimate (the library's planner) is longer print it on stderr.
const NOTE_SECONDS: f64 = 10.0;

/// A result as one line of JSON (see `trellis::report`).
pub fn to_json<T: Serialize>(value: &T) -> Result<String> {
    Ok(trellis::report::to_json(value)?)
}

/// A tree over a weight matrix with its cost (from the weights, any number of
/// points, independent of β) and `log_potential = -β · cost`.
pub fn weights_tree_json(args: &ModelArgs, weights: &Pairwise, tree: Tree) -> Result<TreeJson> {
    // The model at the user's β (the cost does not depend on it) so that its
    // range check refuses a β whose product with the cost overflows.
    let cost = with_cost_model!(args.model, weights, args.beta, |model| trellis::tree_cost(
        &model, &tree
    )?);
    Ok(TreeJson {
        n: weights.n(),
        log_potential: trellis::report::clean(-args.beta * cost),
        cost: Some(cost),
        tree,
    })
}

/// The cost of the split of `l ∪ r` into `l` and `r` under a model.
pub fn split_cost<M: Search>(model: &M, l: &Tree, r: &Tree) -> f64 {
    let node = Tree::node(l.clone(), r.clone());
    let cost = |t: &Tree| trellis::tree_cost(model, t).unwrap_or(f64::NAN);
    cost(&node) - cost(l) - cost(r)
}

/// Prints a tree over a weight matrix as `map` does: JSON, Newick, or a
/// summary with the tree drawn and the cost of every split. The cost is
/// computed from the weights (any number of points) and does not depend on
/// β; `log_potential = -β · cost`. When the points have names, they label
/// the leaves (Newick, the drawing) and JSON gets a `"names"` array.
///
/// Newick (rooted, with branch lengths) and the linkage matrix of
/// `dendrogram` take their heights from `--heights` (default: cost).
pub fn weights_tree_output(
    args: &ModelArgs,
    weights: &NamedWeights,
    tree: Tree,
    title: &str,
    json: bool,
    newick: bool,
    dendrogram: &DendrogramArgs,
) -> Result<String> {
    if newick || dendrogram.any() {
        let heights = dendrogram.heights.unwrap_or(HeightsKind::Cost);
        let d = trees::of_weights(args.model, weights, tree, heights)?;
        return dendrogram_output(&d, weights, dendrogram);
    }
    let out = weights_tree_json(args, weights, tree)?;
    let cost = out.cost.expect("a cost model");
    if json {
        return to_json(&weights.with_names(out));
    }
    let mut s = format!(
        "{title} of {} points ({} model): cost {cost:.6}, log potential {:.6} at beta {}\n",
        out.n, args.model, out.log_potential, args.beta
    );
    with_cost_model!(args.model, weights, 1.0, |model| {
        s += &out.tree.draw(&|i| weights.label(i), &|l, r| {
            Some(format!("cost {:.4}", split_cost(&model, l, r)))
        })
    });
    Ok(s)
}

/// A dendrogram over weights printed as the flags say: its linkage matrix
/// (JSON or CSV) with `--linkage`/`--linkage-csv`, else rooted Newick with
/// branch lengths and the points' names.
pub fn dendrogram_output(
    d: &Dendrogram,
    weights: &NamedWeights,
    flags: &DendrogramArgs,
) -> Result<String> {
    if flags.any() {
        return trees::linkage_text(&d.linkage()?, flags.linkage_csv);
    }
    trees::weights_newick(d, weights)
}

/// The linkage matrix of a jet's tree when `--linkage` asks for it: heights
/// by the Ginkgo likelihood's cumulative split cost (made monotone) or by rank.
pub fn jet_linkage(
    jet: &Jet,
    variant: trellis::ginkgo::Variant,
    tree: &Tree,
    flags: &DendrogramArgs,
) -> Result<Option<Vec<[f64; 4]>>> {
    if !flags.any() {
        return Ok(None);
    }
    let heights = flags.heights.unwrap_or(HeightsKind::Cost);
    let d = trees::of_model(&Ginkgo::new(jet, variant), tree.clone(), heights)?;
    Ok(Some(d.linkage()?))
}

/// Refuses the output flags that a jets file cannot take (its output is
/// JSON lines): `--newick` (and so `--support`) and `--linkage-csv`.
pub fn check_jets_outputs(args: &ModelArgs, flags: &DendrogramArgs, newick: bool) -> Result<()> {
    if args.jets.is_some() && newick {
        bail!(
            "--newick prints one tree; with --jets the output is one JSON line per jet, whose \"tree\" field is its tree (add --linkage for a SciPy linkage matrix per jet)"
        );
    }
    if args.jets.is_some() && flags.linkage_csv {
        bail!(
            "--linkage-csv needs --weights or --points; with --jets, --linkage adds a \"linkage\" field to each jet's line"
        );
    }
    Ok(())
}

/// The inference of the model at `beta` on weights or distances: the dense
/// trellis (computing what `need` says), or a sparse one with `--sparse`.
fn weights_posterior(
    args: &ModelArgs,
    sparse: &SparseArgs,
    weights: &Pairwise,
    beta: f64,
    progress: bool,
    task: Task,
    triplets: Vec<Triplet>,
) -> Result<Posterior> {
    if sparse.sparse.is_some() {
        return sparse.weights(args, weights, beta, &triplets);
    }
    let n = weights.n();
    plan(args, n, task, !triplets.is_empty())?;
    let splits = total_splits(n) as u64;
    let bar = Bar::new(progress, splits);
    let callback = bar.callback();
    let mut options = options(memory_limit(args), callback.as_ref());
    options.time_limit = time_limit(args);
    options.checkpoint = args.checkpoint.as_deref();
    let need = match task {
        Task::LogZ => Need::LogZ,
        Task::Map => Need::Map,
        Task::Sample => Need::Samples,
        _ => Need::All,
    };
    let model = trellis::models::CostModel::build(args.model, weights.view(), beta)?;
    Ok(trellis::engines::dense(model, triplets, need, &options)?)
}

/// Reads `--triplets` over the points of `weights`: their names, or indices
/// when they have none.
pub(crate) fn read_triplets(
    path: &Path,
    weights: &NamedWeights,
    limit: Option<u64>,
) -> Result<Vec<Triplet>> {
    let text = crate::input::read_text(path, limit)?;
    let indices: Vec<String>;
    let names = match weights.names() {
        Some(names) => names,
        None => {
            indices = (0..weights.n()).map(|i| i.to_string()).collect();
            &indices
        }
    };
    let triplets = trellis::ddt::parse_triplets(&text, names)
        .with_context(|| format!("in --triplets {}", path.display()))?;
    // Contradictions are named by the points' names.
    trellis::ddt::build(names.len(), &triplets)
        .map_err(|e| anyhow::anyhow!(trellis::ddt::named_message(&e, names)))
        .with_context(|| format!("in --triplets {}", path.display()))?;
    Ok(triplets)
}

/// The library planner's estimate of an exact run over `n` points: printed
/// on stderr when it is over 10 s, and refused up front when it exceeds
/// `--time-limit` (the tables' memory is checked with the input).
fn plan(args: &ModelArgs, n: usize, task: Task, constrained: bool) -> Result<()> {
    let estimate = estimate(args, n, task, constrained, rayon::current_num_threads())?;
    check_time(args, &estimate)?;
    if estimate.seconds > NOTE_SECONDS {
        // A closed or full stderr is no reason to stop.
        let _ = writeln!(std::io::stderr(), "note: {estimate}");
    }
    Ok(())
}

/// The planner's estimate of `task` over `n` points of `--model`, restricted
/// by triplets when `constrained`.
fn estimate(
    args: &ModelArgs,
    n: usize,
    task: Task,
    constrained: bool,
    threads: usize,
) -> trellis::Result<trellis::plan::Estimate> {
    if constrained {
        trellis::plan::estimate_constrained(n, args.model, task, threads)
    } else {
        trellis::plan::estimate(n, args.model, task, threads)
    }
}

/// Refuses an estimate longer than `--time-limit` (the tables' memory is
/// checked with the input, not here).
fn check_time(args: &ModelArgs, estimate: &trellis::plan::Estimate) -> trellis::Result<()> {
    let budget = trellis::plan::Budget {
        memory_bytes: Some(u64::MAX),
        seconds: args.time_limit,
    };
    trellis::plan::check(estimate, &budget)
}

/// The planner's task of what a command needs of the dense trellis.
fn task(need: Need, workload: Workload) -> Task {
    match (need, workload) {
        (Need::LogZ, _) => Task::LogZ,
        (Need::Map, _) => Task::Map,
        (Need::All, Workload::Marginals) => Task::Marginals,
        (Need::All | Need::Samples, _) => Task::Sample,
    }
}

/// [`plan`] for the jets of a file: each jet against `--time-limit` (a
/// limit per jet), and the whole batch's estimate (jets run in parallel) on
/// stderr when it is over 10 s.
fn plan_jets(args: &ModelArgs, file: &trellis::ginkgo::JetsFile, task: Task) -> Result<()> {
    let threads = rayon::current_num_threads();
    let mut total = 0.0;
    for jet in &file.jets {
        let estimate = trellis::plan::estimate(jet.len(), args.model, task, 1)?;
        check_time(args, &estimate).with_context(|| format!("jet {}", jet.id))?;
        total += estimate.seconds;
    }
    let total = total / threads as f64;
    if total > NOTE_SECONDS {
        let _ = writeln!(
            std::io::stderr(),
            "note: exact inference over the {} jets takes about {total:.0} s on {threads} threads (estimated)",
            file.jets.len()
        );
    }
    Ok(())
}

/// The inference of a jet's model: the dense trellis, or a sparse one with
/// `--sparse` (jet `index` of the file seeds it).
fn jet_posterior(
    args: &ModelArgs,
    sparse: &SparseArgs,
    jet: &Jet,
    index: usize,
    need: Need,
) -> Result<Posterior> {
    if sparse.sparse.is_some() {
        return sparse.jet(jet, args, index);
    }
    // The jet itself was checked against the dense trellis's limits.
    let options = trellis::Options {
        memory_limit: memory_limit(args),
        time_limit: time_limit(args),
        ..trellis::Options::default()
    };
    let need = if need == Need::LogZ { Need::All } else { need };
    Ok(Posterior::dense(
        Ginkgo::new(jet, variant(args)),
        need,
        &options,
    )?)
}

/// Runs `f` on a posterior with the options of its outside pass: the memory
/// limit, and a progress bar of the pass's terms for a dense trellis.
pub(crate) fn outside<T>(
    post: &Posterior,
    args: &ModelArgs,
    progress: bool,
    f: impl FnOnce(&trellis::Options<'_>) -> trellis::Result<T>,
) -> Result<T> {
    // A dense trellis (at most 30 points) shows its outside pass's terms.
    let dense = post.sparsity().is_none() && post.n() <= trellis::MAX_POINTS;
    let n = post.n().min(trellis::MAX_POINTS) as u32;
    let terms = 3u64.pow(n) + 1 - (2u64 << n);
    let bar = Bar::new(progress && dense, terms);
    let callback = bar.callback();
    Ok(f(&options(memory_limit(args), callback.as_ref()))?)
}

/// Every listed cluster marginal of a posterior (see
/// [`Posterior::cluster_marginals`]).
fn clusters(
    post: &Posterior,
    args: &ModelArgs,
    progress: bool,
    min_p: f64,
) -> Result<Vec<ClusterJson>> {
    let clusters = outside(post, args, progress, |o| post.cluster_marginals(min_p, o))?;
    Ok(ClusterJson::list(clusters))
}

/// The support values of clusters (see [`Posterior::support`]).
fn support(
    post: &Posterior,
    args: &ModelArgs,
    progress: bool,
    clusters: &[Vec<usize>],
) -> Result<Vec<f64>> {
    outside(post, args, progress, |o| post.support(clusters, o))
}

/// Hands `k` samples from `seed` to `each` as they are drawn; the first
/// error of `each` (a failed write) stops the stream and is returned.
/// Draws `k` samples into `each` as they come, stopping with an error at
/// `deadline` (the end of `--time-limit`, which covers the drawing too).
fn each_sample(
    post: &Posterior,
    k: usize,
    seed: u64,
    deadline: Option<std::time::Instant>,
    each: &mut dyn FnMut(Tree) -> Result<()>,
) -> Result<()> {
    let mut drawn = 0usize;
    output::until_error(
        |sink| post.each_sample(k, seed, &trellis::Options::default(), sink),
        &mut |t| {
            if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                bail!("--time-limit was reached after {drawn} of the {k} samples");
            }
            drawn += 1;
            each(t)
        },
    )
}

/// A line about a sparse trellis for readable output (empty for the dense
/// trellis).
pub(crate) fn note(post: &Posterior) -> String {
    match post.sparsity() {
        Some(s) => format!(
            "sparse trellis: {} clusters, {} splits, {} trees realised (sparsity {})\n",
            s.clusters,
            s.splits,
            output::approx(&s.trees_realised),
            output::share(s.log10_sparsity)
        ),
        None => String::new(),
    }
}

/// Runs `f` on the posterior of every problem of the input: one JSON line per
/// jet, or `weights(weights, posterior)` for a weight matrix (with the
/// points' names, if any). The dense
/// trellis checks `workload` against the memory before anything runs.
///
/// `prepare` sees the points' names (none for jets) once the input is read,
/// before anything runs. `output(n)` is the memory the output holds for a problem of `n` points
/// (in addition to the trellis): it is checked before anything runs, summed
/// over the jets of a jets file (whose lines are all held until printed).
#[allow(clippy::too_many_arguments)]
pub(crate) fn run<T: Serialize + Send>(
    args: &ModelArgs,
    sparse: &SparseArgs,
    feedback: &TripletArgs,
    workload: Workload,
    need: Need,
    beta: f64,
    progress: bool,
    output: impl Fn(usize) -> u128,
    prepare: impl FnOnce(Option<&[String]>) -> Result<()>,
    jet: impl Fn(&Jet, &Posterior, usize) -> Result<T> + Sync,
    weights: impl FnOnce(&NamedWeights, &Posterior) -> Result<String>,
) -> Result<String> {
    let planned = task(need, workload);
    run_planned(
        args, sparse, feedback, need, planned, beta, progress, output, prepare, jet, weights,
    )
}

/// [`run`] with the planner's task given: what the command computes after
/// the trellis (e.g. `summary`'s MCC pass), for its estimate.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_planned<T: Serialize + Send>(
    args: &ModelArgs,
    sparse: &SparseArgs,
    feedback: &TripletArgs,
    need: Need,
    planned: Task,
    beta: f64,
    progress: bool,
    output: impl Fn(usize) -> u128,
    prepare: impl FnOnce(Option<&[String]>) -> Result<()>,
    jet: impl Fn(&Jet, &Posterior, usize) -> Result<T> + Sync,
    weights: impl FnOnce(&NamedWeights, &Posterior) -> Result<String>,
) -> Result<String> {
    let dense = sparse.sparse.is_none();
    if !dense {
        crate::input::refuse_time_limit(args, "--sparse")?;
    }
    // What the planner counts for the task: the tables of a dense run, the
    // MCC tree's pass, the 8-byte pass of `hcc`'s log Z and MAP tree.
    let constrained = feedback.triplets.is_some();
    let workload = trellis::plan::workload(args.model, planned, constrained);
    // The sparse trellis's point limit is checked before the weights are built.
    let input = load_checked(args, dense.then_some(workload), &|n| {
        if dense {
            Ok(())
        } else {
            sparse.check_weights(args, n)
        }
    })?;
    prepare(match &input {
        Input::Jets(_) => None,
        Input::Weights(w) => w.names(),
    })?;
    let limit = memory_limit(args);
    match &input {
        Input::Jets(file) => {
            sparse.check_jets(file, args)?;
            if dense {
                plan_jets(args, file, planned)?;
            }
            let total = file
                .jets
                .iter()
                .fold(0u128, |acc, j| acc.saturating_add(output(j.len())));
            trellis::plan::check_bytes("the output of every jet", total, limit)?;
        }
        Input::Weights(w) => {
            if !dense {
                sparse.check_weights(args, w.n())?;
            }
            let tables = if dense {
                estimate(args, w.n(), planned, constrained, 1)?.memory_bytes as u128
            } else {
                0
            };
            trellis::plan::check_bytes(
                &format!("the output over {} points, with the trellis tables,", w.n()),
                tables.saturating_add(output(w.n())),
                limit,
            )?;
        }
    }
    match input {
        Input::Jets(file) => {
            let work = |j: &Jet| if dense { dense_work(j) } else { 1 };
            per_jet(&file, progress && dense, work, |index, j| {
                let post = jet_posterior(args, sparse, j, index, need)?;
                Ok(with_sparsity(jet(j, &post, index)?, post.sparsity()))
            })
        }
        Input::Weights(w) => {
            let triplets = match &feedback.triplets {
                Some(path) => read_triplets(path, &w, limit)?,
                None => Vec::new(),
            };
            let post = weights_posterior(args, sparse, &w, beta, progress, planned, triplets)?;
            weights(&w, &post)
        }
    }
}

pub fn map(a: &MapArgs, progress: bool) -> Result<String> {
    let (args, sparse, json, newick) = (&a.model, &a.sparse, a.json, a.newick);
    let flags = &a.dendrogram;
    check_jets_outputs(args, flags, newick)?;
    // Support values need the outside pass as well.
    let workload = if a.support {
        Workload::Marginals
    } else {
        Workload::Inside
    };
    // The MAP tree does not depend on beta > 0: search at beta = 1 so that
    // rounding cannot make the answer depend on it, then report -beta * cost.
    // Support values are marginals at --beta.
    let beta = if a.support { args.beta } else { 1.0 };
    let need = if a.support { Need::All } else { Need::Map };
    run(
        args,
        sparse,
        &a.feedback,
        workload,
        need,
        beta,
        progress,
        |_| 0,
        |_| Ok(()),
        |jet, post, _| {
            let map = post.map()?;
            let linkage = jet_linkage(jet, variant(args), &map.tree, flags)?;
            Ok(WithLinkage {
                result: TreeJson {
                    n: jet.len(),
                    log_potential: map.log_potential,
                    cost: None,
                    tree: map.tree,
                },
                linkage,
            })
        },
        |weights, post| {
            let tree = post.map()?.tree;
            if a.support {
                let heights = flags.heights.unwrap_or(HeightsKind::Cost);
                let d = trees::of_weights(args.model, weights, tree, heights)?;
                let support = support(post, args, progress, &d.clusters())?;
                return trees::newick(&d, weights.names(), Some(&support));
            }
            if json {
                return to_json(&weights.with_names(with_sparsity(
                    weights_tree_json(args, weights, tree)?,
                    post.sparsity(),
                )));
            }
            let title = if post.sparsity().is_some() {
                "Sparse-trellis MAP hierarchy"
            } else {
                "MAP hierarchy"
            };
            let out = weights_tree_output(args, weights, tree, title, false, newick, flags)?;
            Ok(if newick || flags.any() {
                out
            } else {
                note(post) + &out
            })
        },
    )
}

/// `trellis score`: the value of a given tree (or of each jet's truth tree).
pub fn score(a: &ScoreArgs) -> Result<String> {
    let (args, truth, json) = (&a.model, a.truth, a.json);
    crate::input::refuse_time_limit(args, "score")?;
    let input = load(args, None)?;
    let names = match &input {
        Input::Jets(_) => None,
        Input::Weights(w) => w.names(),
    };
    let given = a
        .tree
        .as_deref()
        .map(|t| trellis::read_tree(t, names))
        .transpose()?;
    match input {
        Input::Jets(file) => per_jet(
            &file,
            false,
            |_| 1,
            |_, jet| {
                let tree = match (&given, truth) {
                    (Some(t), _) => t.clone(),
                    (None, _) => jet
                        .truth
                        .clone()
                        .ok_or_else(|| anyhow::anyhow!("has no \"truth\" tree (use --tree)"))?,
                };
                tree.validate(jet.len(), true)?;
                let log_potential = tree_log_potential(&Ginkgo::new(jet, variant(args)), &tree)?;
                Ok(TreeJson {
                    n: jet.len(),
                    log_potential,
                    cost: None,
                    tree,
                })
            },
        ),
        Input::Weights(weights) => {
            if truth {
                bail!("--truth reads each jet's truth tree: it needs --jets");
            }
            let tree = given.expect("clap requires --tree or --truth");
            tree.validate(weights.n(), true)?;
            weights_tree_output(
                args,
                &weights,
                tree,
                "Tree",
                json,
                false,
                &DendrogramArgs::default(),
            )
        }
    }
}

pub fn logz(a: &LogzArgs, progress: bool) -> Result<String> {
    let (args, sparse, json) = (&a.model, &a.sparse, a.json);
    run(
        args,
        sparse,
        &a.feedback,
        Workload::Inside,
        Need::LogZ,
        args.beta,
        progress,
        |_| 0,
        |_| Ok(()),
        |jet, post, _| Ok(json!({"n": jet.len(), "log_z": post.log_z()?})),
        |weights, post| {
            let (n, log_z) = (weights.n(), post.log_z()?);
            if json {
                return to_json(&weights.with_names(with_sparsity(
                    json!({"n": n, "log_z": log_z}),
                    post.sparsity(),
                )));
            }
            let over = match &a.feedback.triplets {
                Some(path) => format!("the hierarchies satisfying {}", path.display()),
                None => format!(
                    "{} hierarchies",
                    output::approx(&trellis::count::num_trees(n))
                ),
            };
            Ok(format!(
                "log Z = {log_z:.10}\n({n} points, {over}, {:?} model, beta {})\n{}",
                args.model,
                args.beta,
                note(post)
            ))
        },
    )
}

/// Every cluster marginal (and the sub-hierarchy's) of an inference.
fn marginals_json(
    n: usize,
    post: &Posterior,
    args: &ModelArgs,
    progress: bool,
    min_p: f64,
    subtree: Option<&Tree>,
) -> Result<MarginalsJson> {
    Ok(MarginalsJson {
        n,
        log_z: post.log_z()?,
        clusters: clusters(post, args, progress, min_p)?,
        subtree_p: subtree
            .map(|t| outside(post, args, progress, |o| post.subtree(t, o)))
            .transpose()?,
    })
}

pub fn marginals(a: &MarginalsArgs, progress: bool) -> Result<String> {
    let (args, sparse, min_p, top, json) = (&a.model, &a.sparse, a.min_p, a.top, a.json);
    // Read once the points' names are known: Newick labels are names then.
    let subtree = std::sync::OnceLock::new();
    if a.subtree.is_some() && sparse.sparse.is_some() {
        bail!("--subtree is not available with --sparse");
    }
    run(
        args,
        sparse,
        &a.feedback,
        Workload::Marginals,
        Need::All,
        args.beta,
        progress,
        |n| listed_clusters(sparse, n),
        |names| {
            if let Some(text) = a.subtree.as_deref() {
                let _ = subtree.set(trellis::read_tree(text, names)?);
            }
            Ok(())
        },
        |jet, post, _| {
            let subtree = subtree.get();
            marginals_json(jet.len(), post, args, false, min_p, subtree)
        },
        |weights, post| {
            let subtree = subtree.get();
            let out = marginals_json(weights.n(), post, args, progress, min_p, subtree)?;
            if json {
                return to_json(&weights.with_names(with_sparsity(out, post.sparsity())));
            }
            let n = out.n;
            let mut s = format!(
                "log Z = {:.10}   ({n} points, {:?} model, beta {})\n{}",
                out.log_z,
                args.model,
                args.beta,
                note(post)
            );
            let proper = (1u128 << n.min(127)).saturating_sub(n as u128 + 2);
            let of = format!(" of the {proper} non-singleton proper clusters");
            s += &cluster_list(&out.clusters, &of, min_p, top, weights);
            if let (Some(t), Some(p)) = (subtree, out.subtree_p) {
                s += &format!("sub-hierarchy {}: p = {p:.6e}\n", weights.newick(t));
            }
            Ok(s)
        },
    )
}

pub fn sample(a: &SampleArgs, progress: bool, out: &mut dyn Write) -> Result<String> {
    let (args, sparse, k, seed) = (&a.model, &a.sparse, a.num_samples, a.seed);
    let (json, newick, flags) = (a.json, a.newick, &a.dendrogram);
    check_jets_outputs(args, flags, newick)?;
    // A jet's samples are held for its line; a weight matrix's are written
    // as they are drawn.
    let jets = args.jets.is_some();
    let heights = flags.heights.unwrap_or(HeightsKind::Cost);
    let deadline =
        crate::input::time_limit(args).and_then(|t| std::time::Instant::now().checked_add(t));
    run(
        args,
        sparse,
        &a.feedback,
        Workload::Inside,
        Need::All,
        args.beta,
        progress,
        |n| {
            if jets {
                // With --linkage, each sample's matrix as well.
                let per = trellis::plan::tree_bytes(n) * if flags.any() { 2 } else { 1 };
                per.saturating_mul(k as u128)
            } else {
                0
            }
        },
        |_| Ok(()),
        |jet, post, index| {
            let samples = post.samples(k, trellis::random::stream_seed(seed, index))?;
            if flags.any() {
                let linkage = samples
                    .iter()
                    .map(|t| jet_linkage(jet, variant(args), t, flags).map(Option::unwrap))
                    .collect::<Result<Vec<_>>>()?;
                return Ok(json!({"n": jet.len(), "samples": samples, "linkage": linkage}));
            }
            Ok(json!({"n": jet.len(), "samples": samples}))
        },
        |weights, post| {
            let n = weights.n();
            if json {
                // {"n": .., "samples": [..]} and the sparse trellis's counts,
                // as serde writes them, one sample at a time.
                let tail = serde_json::to_string(
                    &weights.with_names(with_sparsity(json!({}), post.sparsity())),
                )?;
                output::stream_samples(out, n, &tail, |sample| {
                    each_sample(post, k, seed, deadline, &mut |t| {
                        sample(serde_json::to_string(&t)?)
                    })
                })?;
                return Ok(String::new());
            }
            if newick {
                each_sample(post, k, seed, deadline, &mut |t| {
                    let d = trees::of_weights(args.model, weights, t, heights)?;
                    put(out, &trees::weights_newick(&d, weights)?)
                })?;
                return Ok(String::new());
            }
            if flags.any() {
                // One JSON array of matrices, or CSV matrices separated by an
                // empty line, one sample at a time.
                let csv = flags.linkage_csv;
                if !csv {
                    put(out, "[")?;
                }
                let mut first = true;
                each_sample(post, k, seed, deadline, &mut |t| {
                    let rows = trees::of_weights(args.model, weights, t, heights)?.linkage()?;
                    let sep = if std::mem::take(&mut first) {
                        ""
                    } else if csv {
                        "\n"
                    } else {
                        ","
                    };
                    let text = if csv {
                        trees::csv_rows(&rows)
                    } else {
                        serde_json::to_string(&rows)?
                    };
                    put(out, &format!("{sep}{text}"))
                })?;
                if !csv {
                    put(out, "]\n")?;
                }
                return Ok(String::new());
            }
            put(
                out,
                &format!(
                    "{k} exact posterior samples over {n} points ({} model, beta {}, seed {seed}):\n{}",
                    args.model,
                    args.beta,
                    note(post)
                ),
            )?;
            let log_z = post.log_z()?;
            each_sample(post, k, seed, deadline, &mut |t| {
                let log_phi = weights_tree_json(args, weights, t.clone())?.log_potential;
                let shown = match weights.names() {
                    Some(_) => weights.newick(&t),
                    None => t.to_string(),
                };
                put(out, &format!("{shown}   log P = {:.6}\n", log_phi - log_z))
            })?;
            Ok(String::new())
        },
    )
}

/// The readable list of the `top` most probable clusters, after a line
/// counting them (`{k}{of} have p > 0`).
fn cluster_list(
    clusters: &[ClusterJson],
    of: &str,
    min_p: f64,
    top: usize,
    weights: &NamedWeights,
) -> String {
    let at_least = if min_p > 0.0 {
        format!(" and p >= {min_p}")
    } else {
        String::new()
    };
    let k = clusters.len();
    format!(
        "{k}{of} have p > 0{at_least}; the {} most probable:\n",
        top.min(k)
    ) + &output::labelled_clusters(clusters, top, &|i| weights.label(i))
}

/// Bytes of the clusters a command lists: up to every subset of the dense
/// trellis; a sparse trellis's vertices are counted with the trellis.
fn listed_clusters(sparse: &SparseArgs, n: usize) -> u128 {
    if sparse.sparse.is_none() {
        trellis::plan::clusters_bytes(n)
    } else {
        0
    }
}

/// `trellis infer`: the inside pass (log Z and the MAP), then the outside
/// pass (every cluster marginal) of one trellis at `--beta`.
pub fn infer(a: &InferArgs, progress: bool) -> Result<String> {
    let (args, sparse, min_p, top) = (&a.model, &a.sparse, a.min_p, a.top);
    check_jets_outputs(args, &DendrogramArgs::default(), a.newick)?;
    run(
        args,
        sparse,
        &a.feedback,
        Workload::Marginals,
        Need::All,
        args.beta,
        progress,
        |n| listed_clusters(sparse, n),
        |_| Ok(()),
        |jet, post, _| {
            let map = post.map()?;
            Ok(InferJson {
                n: jet.len(),
                log_z: post.log_z()?,
                map: MapJson {
                    tree: map.tree,
                    log_potential: map.log_potential,
                    cost: None,
                },
                clusters: clusters(post, args, false, min_p)?,
            })
        },
        |weights, post| {
            let tree = post.map()?.tree;
            if a.newick {
                let d = trees::of_weights(args.model, weights, tree, HeightsKind::Cost)?;
                let support = support(post, args, progress, &d.clusters())?;
                return trees::newick(&d, weights.names(), Some(&support));
            }
            let scored = weights_tree_json(args, weights, tree)?;
            let out = InferJson {
                n: weights.n(),
                log_z: post.log_z()?,
                map: MapJson {
                    tree: scored.tree,
                    log_potential: scored.log_potential,
                    cost: scored.cost,
                },
                clusters: clusters(post, args, progress, min_p)?,
            };
            if a.json {
                return to_json(&weights.with_names(with_sparsity(out, post.sparsity())));
            }
            let n = out.n;
            let mut s = format!(
                "log Z = {:.10}   ({n} points, {:?} model, beta {})\n{}",
                out.log_z,
                args.model,
                args.beta,
                note(post)
            );
            s += &format!(
                "MAP hierarchy: cost {:.6}, log potential {:.6}\n",
                out.map.cost.unwrap_or(f64::NAN),
                out.map.log_potential
            );
            s += &out.map.tree.draw(&|i| weights.label(i), &|_, _| None);
            s += &cluster_list(&out.clusters, " clusters", min_p, top, weights);
            Ok(s)
        },
    )
}

pub fn count(n: usize, json: bool) -> Result<String> {
    if n == 0 {
        bail!("N must be at least 1");
    }
    if n > MAX_COUNT_N {
        bail!("N = {n} is too large to print the count; at most {MAX_COUNT_N}");
    }
    let count = trellis::count::num_trees(n);
    if json {
        to_json(&json!({"n": n, "num_trees": count.to_string()}))
    } else {
        Ok(format!(
            "(2N-3)!! = {count}\nbinary hierarchies over N = {n} points (about {})\n",
            output::approx(&count)
        ))
    }
}
