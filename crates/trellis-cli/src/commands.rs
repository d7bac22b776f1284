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
use trellis::{ProgressFn, Tree, total_splits, tree_log_potential};

use crate::batch::per_jet;
use crate::input::{Input, NamedWeights, Pairwise, load, load_checked, memory_limit, variant};
use crate::output::{self, ClusterJson, put};
use crate::progress::{Bar, options};
use crate::sparse::SparseArgs;
use crate::trees::DendrogramArgs;
use crate::{
    InferArgs, LogzArgs, MapArgs, MarginalsArgs, ModelArgs, RunArgs, SampleArgs, ScoreArgs,
};
use trellis::plan::Task;
use trellis::print::{self, Heights, SampleFormat, Samples, TreeFormat};
pub use trellis::report::{
    InferJson, MapJson, MarginalsJson, TreeJson, WithLinkage, with_sparsity,
};

/// Largest N accepted by `count` (the number has about N·log10(2N) digits).
const MAX_COUNT_N: usize = 100_000;

/// A result as one line of JSON (see `trellis::report`).
pub fn to_json<T: Serialize>(value: &T) -> Result<String> {
    Ok(trellis::report::to_json(value)?)
}

/// A tree over weights scored under `--model` at `--beta` (see
/// [`print::scored`]).
pub fn weights_tree_json(args: &ModelArgs, weights: &Pairwise, tree: Tree) -> Result<TreeJson> {
    Ok(print::scored(args.model, weights, args.budget.beta, tree)?)
}

/// Prints a tree over a weight matrix as `map` does: JSON (with the points'
/// `"names"`), Newick or a linkage matrix (heights from `--heights`), or a
/// summary with the tree drawn and the cost of every split.
pub fn weights_tree_output(
    args: &ModelArgs,
    weights: &NamedWeights,
    tree: Tree,
    title: &str,
    json: bool,
    newick: bool,
    dendrogram: &DendrogramArgs,
) -> Result<String> {
    if let Some(format) = dendrogram.format(newick) {
        let d = print::weights_dendrogram(args.model, weights, tree, dendrogram.heights())?;
        return Ok(print::tree_text(&d, weights.names(), None, format)?);
    }
    let out = weights_tree_json(args, weights, tree)?;
    if json {
        return to_json(&weights.with_names(out));
    }
    Ok(print::tree_summary(
        args.model,
        weights,
        &out,
        title,
        args.budget.beta,
    )?)
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

/// A tree in rooted Newick with branch lengths from `heights` and each
/// internal node's cluster marginal as its support value.
fn support_newick(
    post: &Posterior,
    args: &ModelArgs,
    weights: &NamedWeights,
    tree: Tree,
    heights: Heights,
    progress: bool,
) -> Result<String> {
    let d = print::weights_dendrogram(args.model, weights, tree, heights)?;
    let support = support(post, args, progress, &d.clusters())?;
    let names = weights.names();
    Ok(print::tree_text(
        &d,
        names,
        Some(&support),
        TreeFormat::Newick,
    )?)
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
    print::sparsity_note(post.sparsity())
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
        Input::Jets(_) => None,
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
    // Support values need the outside pass as well.
    let task = if a.support {
        Task::Marginals
    } else {
        Task::Map
    };
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
                return support_newick(post, args, weights, tree, flags.heights(), progress);
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
            let (n, log_z) = (weights.n(), post.log_z()?);
            if json {
                return to_json(&weights.with_names(with_sparsity(
                    json!({"n": n, "log_z": log_z}),
                    post.sparsity(),
                )));
            }
            let over = match &a.run.feedback.triplets {
                Some(path) => format!("the hierarchies satisfying {}", path.display()),
                None => format!(
                    "{} hierarchies",
                    output::approx(&trellis::count::num_trees(n))
                ),
            };
            Ok(format!(
                "log Z = {log_z:.10}\n({n} points, {over}, {:?} model, beta {})\n{}",
                args.model,
                args.budget.beta,
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
    let (args, sparse, min_p, top, json) = (
        &a.run.model,
        &a.run.sparse,
        a.list.min_p,
        a.list.top,
        a.json,
    );
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
            let mut s =
                print::log_z_header(out.log_z, n, args.model, args.budget.beta, &note(post));
            let proper = (1u128 << n.min(127)).saturating_sub(n as u128 + 2);
            let of = format!(" of the {proper} non-singleton proper clusters");
            s += &print::cluster_list(&out.clusters, &of, min_p, top, &|i| weights.label(i));
            if let (Some(t), Some(p)) = (subtree, out.subtree_p) {
                s += &format!("sub-hierarchy {}: p = {p:.6e}\n", weights.newick(t));
            }
            Ok(s)
        },
    )
}

pub fn sample(a: &SampleArgs, progress: bool, out: &mut dyn Write) -> Result<String> {
    let (args, k, seed) = (&a.run.model, a.samples.num_samples, a.samples.seed);
    let (json, newick, flags) = (a.json, a.newick, &a.dendrogram);
    check_jets_outputs(args, flags, newick)?;
    // A jet's samples are held for its line; a weight matrix's are written
    // as they are drawn.
    let jets = args.jets.is_some();
    let heights = flags.heights();
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
            let format = match flags.format(newick) {
                Some(f) => SampleFormat::Tree(f),
                None if json => SampleFormat::Json,
                None => SampleFormat::Text,
            };
            // {"n": .., "samples": [..]} and the sparse trellis's counts,
            // as serde writes them.
            let tail = serde_json::to_string(
                &weights.with_names(with_sparsity(json!({}), post.sparsity())),
            )?;
            let log_z = if format == SampleFormat::Text {
                put(
                    out,
                    &format!(
                        "{k} exact posterior samples over {} points ({} model, beta {}, seed {seed}):\n{}",
                        weights.n(),
                        args.model,
                        args.budget.beta,
                        note(post)
                    ),
                )?;
                post.log_z()?
            } else {
                0.0
            };
            let mut samples = Samples::new(
                format,
                args.model,
                weights,
                args.budget.beta,
                heights,
                log_z,
                tail,
            );
            put(out, &samples.head())?;
            each_sample(post, k, seed, deadline, &mut |t| {
                put(out, &samples.item(t)?)
            })?;
            put(out, &samples.foot())?;
            Ok(String::new())
        },
    )
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
    let (args, sparse, min_p, top) = (&a.run.model, &a.run.sparse, a.list.min_p, a.list.top);
    check_jets_outputs(args, &DendrogramArgs::default(), a.newick)?;
    run(
        &a.run,
        Task::Marginals,
        args.budget.beta,
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
                return support_newick(post, args, weights, tree, Heights::Cost, progress);
            }
            let scored = weights_tree_json(args, weights, tree)?;
            let out = InferJson {
                n: weights.n(),
                log_z: post.log_z()?,
                map: scored.into(),
                clusters: clusters(post, args, progress, min_p)?,
            };
            if a.json {
                return to_json(&weights.with_names(with_sparsity(out, post.sparsity())));
            }
            let n = out.n;
            let mut s =
                print::log_z_header(out.log_z, n, args.model, args.budget.beta, &note(post));
            s += &format!(
                "MAP hierarchy: cost {:.6}, log potential {:.6}\n",
                out.map.cost.unwrap_or(f64::NAN),
                out.map.log_potential
            );
            s += &out.map.tree.draw(&|i| weights.label(i), &|_, _| None);
            s += &print::cluster_list(&out.clusters, " clusters", min_p, top, &|i| {
                weights.label(i)
            });
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
