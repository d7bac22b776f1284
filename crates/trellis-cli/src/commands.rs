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

use anyhow::{Result, bail};
use serde::Serialize;
use serde_json::json;
use trellis::ginkgo::{Ginkgo, Jet};
use trellis::input::Naming;
use trellis::job::Job;
use trellis::posterior::Posterior;
use trellis::{ProgressFn, ScoredTree, Tree, total_splits, tree_log_potential};

use crate::batch::per_jet;
use crate::input::{Input, NamedWeights, load_checked, memory_limit, variant};
use crate::output::{ClusterJson, put};
use crate::progress::{Bar, options};
use crate::sparse::SparseArgs;
use crate::trees::DendrogramArgs;
use crate::{
    InferArgs, LogzArgs, MapArgs, MarginalsArgs, ModelArgs, RunArgs, SampleArgs, ScoreArgs,
};
use trellis::plan::{Task, listed_bytes};
use trellis::print::{self, Format, Heights, Printer, Samples, TreeFormat};
pub use trellis::report::{InferJson, MarginalsJson, TreeJson, WithLinkage, with_sparsity};

/// How results over `weights` are printed: scored under `--model` at
/// `--beta`, trees with merge `heights`.
pub fn printer<'a>(args: &ModelArgs, weights: &'a NamedWeights, heights: Heights) -> Printer<'a> {
    Printer {
        weights,
        model: args.model,
        beta: args.budget.beta,
        heights,
    }
}

/// The linkage matrix of a jet's tree when `--linkage` asks for it.
pub fn jet_linkage(
    jet: &Jet,
    variant: trellis::ginkgo::Variant,
    tree: &Tree,
    flags: &DendrogramArgs,
) -> Result<Option<Vec<[f64; 4]>>> {
    let linkage = flags
        .any()
        .then(|| print::jet_linkage(jet, variant, tree, flags.heights()));
    Ok(linkage.transpose()?)
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

/// The library's description of the run the flags ask for (`--sparse`
/// refuses `--time-limit`).
pub(crate) fn job<'a>(
    args: &'a ModelArgs,
    sparse: &SparseArgs,
    triplets: Option<&'a Path>,
    checkpoint: Option<&'a Path>,
) -> Result<Job<'a>> {
    let sparse = sparse.flags();
    if sparse.is_some() {
        crate::input::refuse_time_limit(args, "--sparse")?;
    }
    Ok(Job {
        model: args.model,
        sparse,
        triplets,
        memory_limit: memory_limit(args),
        time_limit: args.time_limit,
        checkpoint,
        naming: Naming::Flags,
    })
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

/// A tree in rooted Newick with the printer's branch lengths and each
/// internal node's cluster marginal as its support value (see
/// [`Posterior::support`]).
fn support_newick(
    post: &Posterior,
    args: &ModelArgs,
    p: &Printer<'_>,
    tree: Tree,
    progress: bool,
) -> Result<String> {
    let d = p.dendrogram(tree)?;
    let support = outside(post, args, progress, |o| post.support(&d.clusters(), o))?;
    let (names, newick) = (p.weights.names(), TreeFormat::Newick);
    Ok(print::tree_text(&d, names, Some(&support), newick)?)
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
    trellis::until_error(
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

/// Runs `f` on the posterior of every problem of the input: one JSON line per
/// jet, or `weights(weights, posterior)` for a weight matrix (with the
/// points' names, if any), computing what the planner's `task` needs (see
/// `trellis::job` for the checks, all made before anything runs).
///
/// `prepare` sees the points' names (none for jets) once the input is read,
/// before anything runs. `output(n)` is the memory the output holds for a
/// problem of `n` points (in addition to the trellis).
#[allow(clippy::too_many_arguments)]
pub(crate) fn run<T: Serialize + Send>(
    run: &RunArgs,
    task: Task,
    beta: f64,
    progress: bool,
    output: impl Fn(usize) -> u128,
    prepare: impl FnOnce(Option<&[String]>) -> Result<()>,
    jet: impl Fn(&Jet, &Posterior, usize) -> Result<T> + Sync,
    weights: impl FnOnce(&NamedWeights, &Posterior) -> Result<String>,
) -> Result<String> {
    let args = &run.model;
    let (triplets, checkpoint) = (run.feedback.triplets.as_deref(), run.checkpoint.as_deref());
    let job = job(args, &run.sparse, triplets, checkpoint)?;
    let input = load_checked(
        args,
        job.dense_workload(task),
        &|n| Ok(job.check_points(n)?),
    )?;
    prepare(match &input {
        Input::Jets(file) => {
            job.check_jets_fit(file)?;
            None
        }
        Input::Weights(w) => w.names(),
    })?;
    if let Some(note) = job.check(&input, task, &output)? {
        // A closed or full stderr is no reason to stop.
        let _ = writeln!(std::io::stderr(), "note: {note}");
    }
    match input {
        Input::Jets(file) => per_jet(
            &file,
            progress && job.dense(),
            |j| job.jet_work(j),
            |index, j| {
                let post = job.jet_posterior(j, index, task)?;
                Ok(with_sparsity(jet(j, &post, index)?, post.sparsity()))
            },
        ),
        Input::Weights(w) => {
            let bar = Bar::new(
                progress && job.dense(),
                total_splits(w.n().min(trellis::MAX_POINTS)) as u64,
            );
            let callback = bar.callback();
            let post = job.posterior(
                &w,
                beta,
                task,
                callback.as_ref().map(|f| f as ProgressFn<'_>),
            )?;
            weights(&w, &post)
        }
    }
}

pub fn map(a: &MapArgs, progress: bool) -> Result<String> {
    let (args, json, newick) = (&a.run.model, a.json, a.newick);
    let flags = &a.dendrogram;
    check_jets_outputs(args, flags, newick)?;
    // Support values need the outside pass as well (and the MAP tree: the
    // work of `infer`).
    let task = if a.support { Task::Infer } else { Task::Map };
    // The MAP tree does not depend on beta > 0: search at beta = 1 so that
    // rounding cannot make the answer depend on it, then report -beta * cost.
    // Support values are marginals at --beta.
    let beta = if a.support { args.budget.beta } else { 1.0 };
    run(
        &a.run,
        task,
        beta,
        progress,
        |_| 0,
        |_| Ok(()),
        |jet, post, _| {
            let map = post.map()?;
            let linkage = jet_linkage(jet, variant(args), &map.tree, flags)?;
            Ok(WithLinkage {
                result: TreeJson::unscored(jet.len(), map),
                linkage,
            })
        },
        |weights, post| {
            let tree = post.map()?.tree;
            let p = printer(args, weights, flags.heights());
            if a.support {
                return support_newick(post, args, &p, tree, progress);
            }
            let title = if post.sparsity().is_some() {
                "Sparse-trellis MAP hierarchy"
            } else {
                "MAP hierarchy"
            };
            Ok(p.tree(tree, title, post.sparsity(), flags.output(json, newick))?)
        },
    )
}

/// `trellis score`: the value of a given tree (or of each jet's truth tree).
pub fn score(a: &ScoreArgs) -> Result<String> {
    let (args, truth, json) = (&a.model, a.truth, a.json);
    crate::input::refuse_time_limit(args, "score")?;
    let input = load_checked(args, None, &|_| Ok(()))?;
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
                let scored = ScoredTree {
                    tree,
                    log_potential,
                };
                Ok(TreeJson::unscored(jet.len(), scored))
            },
        ),
        Input::Weights(weights) => {
            if truth {
                bail!("--truth reads each jet's truth tree: it needs --jets");
            }
            let tree = given.expect("clap requires --tree or --truth");
            tree.validate(weights.n(), true)?;
            let format = DendrogramArgs::default().output(json, false);
            let p = printer(args, &weights, Heights::Cost);
            Ok(p.tree(tree, "Tree", None, format)?)
        }
    }
}

pub fn logz(a: &LogzArgs, progress: bool) -> Result<String> {
    let (args, json) = (&a.run.model, a.json);
    run(
        &a.run,
        Task::LogZ,
        args.budget.beta,
        progress,
        |_| 0,
        |_| Ok(()),
        |jet, post, _| Ok(json!({"n": jet.len(), "log_z": post.log_z()?})),
        |weights, post| {
            let (p, log_z) = (printer(args, weights, Heights::Cost), post.log_z()?);
            if json {
                let out = json!({"n": weights.n(), "log_z": log_z});
                return Ok(p.json(out, post.sparsity())?);
            }
            let triplets = a.run.feedback.triplets.as_deref();
            Ok(p.log_z(log_z, triplets, post.sparsity()))
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
    let (args, sparse, min_p) = (&a.run.model, &a.run.sparse, a.list.min_p);
    // Read once the points' names are known: Newick labels are names then.
    let subtree = std::sync::OnceLock::new();
    if a.subtree.is_some() && sparse.sparse.is_some() {
        bail!("--subtree is not available with --sparse");
    }
    run(
        &a.run,
        Task::Marginals,
        args.budget.beta,
        progress,
        |n| listed_bytes(sparse.sparse.is_none(), n, min_p),
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
            let p = printer(args, weights, Heights::Cost);
            if a.json {
                return Ok(p.json(out, post.sparsity())?);
            }
            Ok(p.marginals(&out, subtree, min_p, a.list.top, post.sparsity()))
        },
    )
}

pub fn sample(a: &SampleArgs, progress: bool, out: &mut dyn Write) -> Result<String> {
    let (args, k, seed) = (&a.run.model, a.samples.num_samples, a.samples.seed);
    let flags = &a.dendrogram;
    check_jets_outputs(args, flags, a.newick)?;
    // A jet's samples are held for its line; a weight matrix's are written
    // as they are drawn.
    let jets = args.jets.is_some();
    let deadline =
        crate::input::time_limit(args).and_then(|t| std::time::Instant::now().checked_add(t));
    run(
        &a.run,
        Task::Sample,
        args.budget.beta,
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
            let format = flags.output(a.json, a.newick);
            let p = printer(args, weights, flags.heights());
            // {"n": .., "samples": [..]} and the sparse trellis's counts,
            // as serde writes them.
            let tail = p.json(json!({}), post.sparsity())?;
            let log_z = if format == Format::Text {
                put(out, &p.samples_title(k, seed, post.sparsity()))?;
                post.log_z()?
            } else {
                0.0
            };
            let mut samples = Samples::new(format, p, log_z, tail);
            put(out, &samples.head())?;
            each_sample(post, k, seed, deadline, &mut |t| {
                put(out, &samples.item(t)?)
            })?;
            put(out, &samples.foot())?;
            Ok(String::new())
        },
    )
}

/// `trellis infer`: the inside pass (log Z and the MAP), then the outside
/// pass (every cluster marginal) of one trellis at `--beta`.
pub fn infer(a: &InferArgs, progress: bool) -> Result<String> {
    let (args, sparse, min_p, top) = (&a.run.model, &a.run.sparse, a.list.min_p, a.list.top);
    check_jets_outputs(args, &DendrogramArgs::default(), a.newick)?;
    run(
        &a.run,
        Task::Infer,
        args.budget.beta,
        progress,
        |n| listed_bytes(sparse.sparse.is_none(), n, min_p),
        |_| Ok(()),
        |jet, post, _| {
            Ok(InferJson {
                n: jet.len(),
                log_z: post.log_z()?,
                map: post.map()?.into(),
                clusters: clusters(post, args, false, min_p)?,
            })
        },
        |weights, post| {
            let tree = post.map()?.tree;
            let p = printer(args, weights, Heights::Cost);
            if a.newick {
                return support_newick(post, args, &p, tree, progress);
            }
            let out = InferJson {
                n: weights.n(),
                log_z: post.log_z()?,
                map: print::scored(args.model, weights, args.budget.beta, tree)?.into(),
                clusters: clusters(post, args, progress, min_p)?,
            };
            if a.json {
                return Ok(p.json(out, post.sparsity())?);
            }
            Ok(p.infer(&out, min_p, top, post.sparsity()))
        },
    )
}

pub fn count(n: usize, json: bool) -> Result<String> {
    Ok(print::count(n, json)?)
}
