//! The inference commands: each returns the complete text for stdout.
//!
//! Every command runs on a weight matrix (one JSON object, or a readable
//! summary) or on a jets file (`--jets`: one JSON object per jet per line,
//! each with the jet's `"id"` and the fields of the single-problem output).
//! `sample` on a weight matrix writes each sample as it is drawn; the memory
//! of what is held for the output (every jet's samples, the clusters listed
//! by `marginals`) is checked with the tables before anything runs.

use std::cell::OnceCell;
use std::io::Write;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Result, bail};
use serde::Serialize;
use serde_json::json;
use trellis::ginkgo::{Ginkgo, Jet};
use trellis::{
    Dendrogram, Marginals, Model, ScoredTree, Search, Tree, Trellis, Weights, Workload,
    total_splits, tree_log_potential,
};

use crate::batch::{dense_trellis, dense_work, per_jet};
use crate::input::{Input, NamedWeights, ginkgo_variant, load, load_checked, memory_limit};
use crate::limits;
use crate::output::{self, put};
use crate::progress::{Bar, note_long, options};
use crate::sparse::SparseArgs;
use crate::trees::{self, DendrogramArgs, HeightsKind};
use crate::{
    InferArgs, LogzArgs, MapArgs, MarginalsArgs, ModelArgs, SampleArgs, ScoreArgs, with_cost_model,
};

/// Largest N accepted by `count` (the number has about N·log10(2N) digits).
const MAX_COUNT_N: usize = 100_000;

/// Splits per second assumed when warning about long runs (measured on 2 cores).
const WARN_SPLITS_PER_S: f64 = 5e8;

/// Builds the trellis with a progress bar and the memory limit of the arguments.
pub fn build<M: Model>(model: M, args: &ModelArgs, progress: bool) -> Result<Trellis<M>> {
    let n = model.num_points();
    let splits = total_splits(n) as u64;
    let what = format!("exact inference over {n} points evaluates, per pass,");
    note_long(&what, splits as f64, WARN_SPLITS_PER_S);
    let bar = Bar::new(progress, splits);
    let callback = bar.callback();
    let options = options(memory_limit(args), callback.as_ref());
    Ok(Trellis::with_options(model, &options)?)
}

/// `-0.0` prints as `-0.0` in JSON; normalise it.
fn clean(x: f64) -> f64 {
    x + 0.0
}

pub fn to_json<T: Serialize>(value: &T) -> Result<String> {
    Ok(serde_json::to_string(value)? + "\n")
}

/// The variant of a jets command's model (checked by `input::load`).
pub fn variant(args: &ModelArgs) -> trellis::ginkgo::Variant {
    ginkgo_variant(args.model).expect("a jet model")
}

/// A tree with its value, the output of `map` and `score`.
#[derive(Serialize)]
pub struct TreeJson {
    pub n: usize,
    pub log_potential: f64,
    /// The tree's total cost (cost models only; does not depend on β).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    pub tree: Tree,
}

/// A tree over a weight matrix with its cost (from the weights, any number of
/// points, independent of β) and `log_potential = -β · cost`.
pub fn weights_tree_json(
    args: &ModelArgs,
    weights: &trellis::Weights,
    tree: Tree,
) -> Result<TreeJson> {
    // The model at the user's β (the cost does not depend on it) so that its
    // range check refuses a β whose product with the cost overflows.
    let cost = with_cost_model!(args.model, weights, args.beta, |model| trellis::tree_cost(
        &model, &tree
    )?);
    Ok(TreeJson {
        n: weights.n(),
        log_potential: clean(-args.beta * cost),
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
        "{title} of {} points ({:?} model): cost {cost:.6}, log potential {:.6} at beta {}\n",
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

/// A jet's result with its linkage matrix (`--linkage`).
#[derive(Serialize)]
pub struct WithLinkage<T> {
    #[serde(flatten)]
    pub result: T,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub linkage: Option<Vec<[f64; 4]>>,
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

/// Refuses the dendrogram flags that a jets file cannot take (its output is
/// JSON lines).
pub fn check_jets_dendrogram(args: &ModelArgs, flags: &DendrogramArgs) -> Result<()> {
    if args.jets.is_some() && flags.linkage_csv {
        bail!(
            "--linkage-csv needs --weights or --points; with --jets, --linkage adds a \"linkage\" field to each jet's line"
        );
    }
    Ok(())
}

/// One inference, on the dense trellis or on a sparse one, as the inference
/// commands read it.
pub trait Posterior {
    fn log_z(&self) -> f64;
    fn map(&self) -> Result<ScoredTree>;
    /// Draws `k` samples from `seed`, handing each to `each` as it is drawn.
    fn each_sample(
        &self,
        k: usize,
        seed: u64,
        each: &mut dyn FnMut(Tree) -> Result<()>,
    ) -> Result<()>;
    /// `k` samples from `seed`, in memory.
    fn samples(&self, k: usize, seed: u64) -> Result<Vec<Tree>> {
        let mut out = Vec::new();
        self.each_sample(k, seed, &mut |t| {
            out.push(t);
            Ok(())
        })?;
        Ok(out)
    }
    /// Every non-singleton proper cluster with `p > 0` and `p >= min_p`, most
    /// probable first.
    fn clusters(&self, min_p: f64) -> Result<Vec<ClusterJson>>;
    /// The marginal of each of these clusters (sorted points).
    fn support(&self, clusters: &[Vec<usize>]) -> Result<Vec<f64>>;
    /// The marginal of a sub-hierarchy (dense trellis only).
    fn subtree(&self, _: &Tree) -> Result<f64> {
        bail!("--subtree is not available with --sparse")
    }
    /// For a sparse trellis: the trees it realises (a decimal string) and
    /// `log10` of its sparsity index.
    fn sparsity(&self) -> Option<(String, f64)> {
        None
    }
    /// A line about the trellis for readable output.
    fn note(&self) -> String {
        String::new()
    }
}

/// The dense trellis, with the options of its outside pass.
struct Dense<M: Model> {
    trellis: Trellis<M>,
    memory_limit: Option<u64>,
    progress: bool,
    marginals: OnceCell<Marginals<M>>,
}

impl<M: Model> Dense<M> {
    fn new(trellis: Trellis<M>, memory_limit: Option<u64>, progress: bool) -> Dense<M> {
        Dense {
            trellis,
            memory_limit,
            progress,
            marginals: OnceCell::new(),
        }
    }

    fn marginals(&self) -> Result<&Marginals<M>> {
        if let Some(m) = self.marginals.get() {
            return Ok(m);
        }
        let n = self.trellis.num_points();
        let bar = Bar::new(self.progress, 3u64.pow(n as u32) + 1 - (2u64 << n));
        let callback = bar.callback();
        let m = self
            .trellis
            .marginals_with(&options(self.memory_limit, callback.as_ref()))?;
        Ok(self.marginals.get_or_init(|| m))
    }
}

impl<M: Model + 'static> Posterior for Dense<M> {
    fn log_z(&self) -> f64 {
        self.trellis.log_z()
    }

    fn map(&self) -> Result<ScoredTree> {
        Ok(self.trellis.map().clone())
    }

    fn each_sample(
        &self,
        k: usize,
        seed: u64,
        each: &mut dyn FnMut(Tree) -> Result<()>,
    ) -> Result<()> {
        // The library's callback cannot fail with our error: keep it, and
        // cancel the sampler through its progress callback.
        let stopped = AtomicBool::new(false);
        let stop = |_: trellis::Progress<'_>| {
            if stopped.load(Ordering::Relaxed) {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        let options = trellis::Options::default().with_progress(&stop);
        let mut failed = None;
        let result = self.trellis.samples_with(k, seed, &options, |t| {
            if failed.is_none() {
                if let Err(e) = each(t) {
                    failed = Some(e);
                    stopped.store(true, Ordering::Relaxed);
                }
            }
            Ok(())
        });
        if let Some(e) = failed {
            return Err(e);
        }
        Ok(result?)
    }

    fn clusters(&self, min_p: f64) -> Result<Vec<ClusterJson>> {
        let marginals = self.marginals()?;
        Ok(marginals
            .clusters(min_p)
            .into_iter()
            .map(|(s, p)| ClusterJson::of(s, p))
            .collect())
    }

    fn support(&self, clusters: &[Vec<usize>]) -> Result<Vec<f64>> {
        let marginals = self.marginals()?;
        Ok(clusters
            .iter()
            .map(|c| marginals.p(trellis::mask_of(c.iter().copied())))
            .collect())
    }

    fn subtree(&self, tree: &Tree) -> Result<f64> {
        tree.validate(self.trellis.num_points(), false)?;
        Ok(self.marginals()?.subtree(tree)?)
    }
}

/// The inference of the model at `beta` on weights: the dense trellis, or a
/// sparse one with `--sparse`.
fn weights_posterior(
    args: &ModelArgs,
    sparse: &SparseArgs,
    weights: &Weights,
    beta: f64,
    progress: bool,
    need: Need,
) -> Result<Box<dyn Posterior>> {
    if sparse.sparse.is_some() {
        return sparse.weights(args, weights, beta);
    }
    if need != Need::All {
        let n = weights.n();
        let splits = total_splits(n) as u64;
        note_long(
            &format!("exact inference over {n} points evaluates"),
            splits as f64,
            WARN_SPLITS_PER_S,
        );
        let bar = Bar::new(progress, splits);
        let callback = bar.callback();
        let options = options(memory_limit(args), callback.as_ref());
        return Ok(with_cost_model!(args.model, weights, beta, |model| {
            Box::new(match need {
                Need::Map => Single {
                    map: Some(Trellis::map_only(&model, &options)?),
                    log_z: None,
                },
                _ => Single {
                    map: None,
                    log_z: Some(Trellis::log_z_only(&model, &options)?),
                },
            }) as Box<dyn Posterior>
        }));
    }
    Ok(with_cost_model!(
        args.model,
        weights,
        beta,
        |model| Box::new(Dense::new(
            build(model, args, progress)?,
            memory_limit(args),
            progress
        )) as Box<dyn Posterior>
    ))
}

/// What a command needs of the dense trellis: `map` and `logz` compute their
/// one quantity alone (a single pass for hierarchical correlation
/// clustering, and a MAP pass without partition-function terms for jets);
/// every other command keeps the whole trellis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Need {
    All,
    Map,
    LogZ,
}

/// The MAP tree or log Z computed alone (see [`Need`]).
struct Single {
    map: Option<ScoredTree>,
    log_z: Option<f64>,
}

impl Posterior for Single {
    fn log_z(&self) -> f64 {
        self.log_z.expect("log Z is computed for `logz`")
    }

    fn map(&self) -> Result<ScoredTree> {
        Ok(self
            .map
            .clone()
            .expect("the MAP tree is computed for `map`"))
    }

    fn each_sample(&self, _: usize, _: u64, _: &mut dyn FnMut(Tree) -> Result<()>) -> Result<()> {
        bail!("samples need the whole trellis")
    }

    fn clusters(&self, _: f64) -> Result<Vec<ClusterJson>> {
        bail!("marginals need the whole trellis")
    }

    fn support(&self, _: &[Vec<usize>]) -> Result<Vec<f64>> {
        bail!("support values need the whole trellis")
    }
}

/// The inference of a jet's model: the dense trellis, or a sparse one with
/// `--sparse` (jet `index` of the file seeds it).
fn jet_posterior(
    args: &ModelArgs,
    sparse: &SparseArgs,
    jet: &Jet,
    index: usize,
    need: Need,
) -> Result<Box<dyn Posterior>> {
    if sparse.sparse.is_some() {
        return sparse.jet(jet, args, index);
    }
    if need == Need::Map {
        let options = trellis::Options {
            memory_limit: memory_limit(args),
            ..trellis::Options::default()
        };
        let map = Trellis::map_only(&Ginkgo::new(jet, variant(args)), &options)?;
        return Ok(Box::new(Single {
            map: Some(map),
            log_z: None,
        }));
    }
    let t = dense_trellis(jet, variant(args))?;
    Ok(Box::new(Dense::new(t, memory_limit(args), false)))
}

/// Runs `f` on the posterior of every problem of the input: one JSON line per
/// jet, or `weights(weights, posterior)` for a weight matrix (with the
/// points' names, if any). The dense
/// trellis checks `workload` against the memory before anything runs.
///
/// `output(n)` is the memory the output holds for a problem of `n` points
/// (in addition to the trellis): it is checked before anything runs, summed
/// over the jets of a jets file (whose lines are all held until printed).
#[allow(clippy::too_many_arguments)]
fn run<T: Serialize + Send>(
    args: &ModelArgs,
    sparse: &SparseArgs,
    workload: Workload,
    need: Need,
    beta: f64,
    progress: bool,
    output: impl Fn(usize) -> u128,
    jet: impl Fn(&Jet, &dyn Posterior, usize) -> Result<T> + Sync,
    weights: impl FnOnce(&NamedWeights, &dyn Posterior) -> Result<String>,
) -> Result<String> {
    let dense = sparse.sparse.is_none();
    // The sparse trellis's point limit is checked before the weights are built.
    let input = load_checked(args, dense.then_some(workload), &|n| {
        if dense {
            Ok(())
        } else {
            sparse.check_weights(args, n)
        }
    })?;
    let limit = memory_limit(args);
    match &input {
        Input::Jets(file) => {
            sparse.check_jets(file, args)?;
            let total = file
                .jets
                .iter()
                .fold(0u128, |acc, j| acc.saturating_add(output(j.len())));
            limits::check("the output of every jet", total, limit)?;
        }
        Input::Weights(w) => {
            if !dense {
                sparse.check_weights(args, w.n())?;
            }
            let tables = if dense {
                trellis::memory_needed(w.n(), workload) as u128
            } else {
                0
            };
            limits::check(
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
                Ok(with_sparsity(jet(j, &*post, index)?, &*post))
            })
        }
        Input::Weights(w) => {
            let post = weights_posterior(args, sparse, &w, beta, progress, need)?;
            weights(&w, &*post)
        }
    }
}

/// A result with the counts of the sparse trellis, if any.
#[derive(Serialize)]
struct WithSparsity<T> {
    #[serde(flatten)]
    result: T,
    #[serde(skip_serializing_if = "Option::is_none")]
    num_trees_realised: Option<String>,
    #[serde(flatten)]
    share: Option<crate::output::Sparsity>,
}

fn with_sparsity<T>(result: T, post: &dyn Posterior) -> WithSparsity<T> {
    let s = post.sparsity();
    WithSparsity {
        result,
        num_trees_realised: s.as_ref().map(|x| x.0.clone()),
        share: s.map(|x| crate::output::Sparsity::of(x.1)),
    }
}

pub fn map(a: &MapArgs, progress: bool) -> Result<String> {
    let (args, sparse, json, newick) = (&a.model, &a.sparse, a.json, a.newick);
    let flags = &a.dendrogram;
    check_jets_dendrogram(args, flags)?;
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
        workload,
        need,
        beta,
        progress,
        |_| 0,
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
                let support = post.support(&d.clusters())?;
                return trees::newick(&d, weights.names(), Some(&support));
            }
            if json {
                return to_json(
                    &weights
                        .with_names(with_sparsity(weights_tree_json(args, weights, tree)?, post)),
                );
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
                post.note() + &out
            })
        },
    )
}

/// `trellis score`: the value of a given tree (or of each jet's truth tree).
pub fn score(a: &ScoreArgs) -> Result<String> {
    let (args, truth, json) = (&a.model, a.truth, a.json);
    let given = a.tree.as_deref().map(Tree::parse).transpose()?;
    match load(args, None)? {
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
        Workload::Inside,
        Need::LogZ,
        args.beta,
        progress,
        |_| 0,
        |jet, post, _| Ok(json!({"n": jet.len(), "log_z": post.log_z()})),
        |weights, post| {
            let (n, log_z) = (weights.n(), post.log_z());
            if json {
                return to_json(
                    &weights.with_names(with_sparsity(json!({"n": n, "log_z": log_z}), post)),
                );
            }
            Ok(format!(
                "log Z = {log_z:.10}\n({n} points, {} hierarchies, {:?} model, beta {})\n{}",
                output::approx(&trellis::count::num_trees(n)),
                args.model,
                args.beta,
                post.note()
            ))
        },
    )
}

/// A cluster and its marginal, as in every `marginals` JSON output.
#[derive(Serialize)]
pub(crate) struct ClusterJson {
    pub members: Vec<usize>,
    pub p: f64,
}

impl ClusterJson {
    /// The cluster of a dense trellis's mask.
    pub fn of(mask: trellis::Mask, p: f64) -> ClusterJson {
        ClusterJson {
            members: trellis::members(mask).collect(),
            p,
        }
    }
}

#[derive(Serialize)]
pub(crate) struct MarginalsJson {
    n: usize,
    log_z: f64,
    clusters: Vec<ClusterJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    subtree_p: Option<f64>,
}

/// Every cluster marginal (and the sub-hierarchy's) of an inference.
fn marginals_json(
    n: usize,
    post: &dyn Posterior,
    min_p: f64,
    subtree: Option<&Tree>,
) -> Result<MarginalsJson> {
    Ok(MarginalsJson {
        n,
        log_z: post.log_z(),
        clusters: post.clusters(min_p)?,
        subtree_p: subtree.map(|t| post.subtree(t)).transpose()?,
    })
}

pub fn marginals(a: &MarginalsArgs, progress: bool) -> Result<String> {
    let (args, sparse, min_p, top, json) = (&a.model, &a.sparse, a.min_p, a.top, a.json);
    let subtree = a.subtree.as_deref().map(Tree::parse).transpose()?;
    if subtree.is_some() && sparse.sparse.is_some() {
        bail!("--subtree is not available with --sparse");
    }
    run(
        args,
        sparse,
        Workload::Marginals,
        Need::All,
        args.beta,
        progress,
        // The dense trellis lists up to every subset; a sparse one its vertices.
        |n| {
            if sparse.sparse.is_none() {
                limits::clusters_bytes(n)
            } else {
                0
            }
        },
        |jet, post, _| marginals_json(jet.len(), post, min_p, subtree.as_ref()),
        |weights, post| {
            let out = marginals_json(weights.n(), post, min_p, subtree.as_ref())?;
            if json {
                return to_json(&weights.with_names(with_sparsity(out, post)));
            }
            let n = out.n;
            let mut s = format!(
                "log Z = {:.10}   ({n} points, {:?} model, beta {})\n{}",
                out.log_z,
                args.model,
                args.beta,
                post.note()
            );
            s += &format!(
                "{} of the {} non-singleton proper clusters have p > 0{}; the {} most probable:\n",
                out.clusters.len(),
                (1u128 << n.min(127)).saturating_sub(n as u128 + 2),
                if min_p > 0.0 {
                    format!(" and p >= {min_p}")
                } else {
                    String::new()
                },
                top.min(out.clusters.len())
            );
            s += &output::labelled_clusters(&out.clusters, top, &|i| weights.label(i));
            if let (Some(t), Some(p)) = (&subtree, out.subtree_p) {
                s += &format!("sub-hierarchy {t}: p = {p:.6e}\n");
            }
            Ok(s)
        },
    )
}

pub fn sample(a: &SampleArgs, progress: bool, out: &mut dyn Write) -> Result<String> {
    let (args, sparse, k, seed) = (&a.model, &a.sparse, a.num_samples, a.seed);
    let (json, newick, flags) = (a.json, a.newick, &a.dendrogram);
    check_jets_dendrogram(args, flags)?;
    // A jet's samples are held for its line; a weight matrix's are written
    // as they are drawn.
    let jets = args.jets.is_some();
    let heights = flags.heights.unwrap_or(HeightsKind::Cost);
    run(
        args,
        sparse,
        Workload::Inside,
        Need::All,
        args.beta,
        progress,
        |n| {
            if jets {
                // With --linkage, each sample's matrix as well.
                let per = limits::tree_bytes(n) * if flags.any() { 2 } else { 1 };
                per.saturating_mul(k as u128)
            } else {
                0
            }
        },
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
                let tail =
                    serde_json::to_string(&weights.with_names(with_sparsity(json!({}), post)))?;
                put(out, &format!("{{\"n\":{n},\"samples\":["))?;
                let mut first = true;
                post.each_sample(k, seed, &mut |t| {
                    let sep = if std::mem::take(&mut first) { "" } else { "," };
                    put(out, &format!("{sep}{}", serde_json::to_string(&t)?))
                })?;
                let rest = tail.trim_start_matches('{').trim_end_matches('}');
                let rest = if rest.is_empty() {
                    String::new()
                } else {
                    format!(",{rest}")
                };
                put(out, &format!("]{rest}}}\n"))?;
                return Ok(String::new());
            }
            if newick {
                post.each_sample(k, seed, &mut |t| {
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
                post.each_sample(k, seed, &mut |t| {
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
                    "{k} exact posterior samples over {n} points ({:?} model, beta {}, seed {seed}):\n{}",
                    args.model,
                    args.beta,
                    post.note()
                ),
            )?;
            let log_z = post.log_z();
            post.each_sample(k, seed, &mut |t| {
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

/// The output of `infer`: MAP, log Z and the cluster marginals of one trellis.
#[derive(Serialize)]
struct InferJson {
    n: usize,
    log_z: f64,
    map: MapJson,
    clusters: Vec<ClusterJson>,
}

/// The MAP tree of `infer` (its cost for the cost models).
#[derive(Serialize)]
struct MapJson {
    tree: Tree,
    log_potential: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    cost: Option<f64>,
}

/// `trellis infer`: the inside pass (log Z and the MAP), then the outside
/// pass (every cluster marginal) of one trellis at `--beta`.
pub fn infer(a: &InferArgs, progress: bool) -> Result<String> {
    let (args, sparse, min_p, top) = (&a.model, &a.sparse, a.min_p, a.top);
    run(
        args,
        sparse,
        Workload::Marginals,
        Need::All,
        args.beta,
        progress,
        |n| {
            if sparse.sparse.is_none() {
                limits::clusters_bytes(n)
            } else {
                0
            }
        },
        |jet, post, _| {
            let map = post.map()?;
            Ok(InferJson {
                n: jet.len(),
                log_z: post.log_z(),
                map: MapJson {
                    tree: map.tree,
                    log_potential: map.log_potential,
                    cost: None,
                },
                clusters: post.clusters(min_p)?,
            })
        },
        |weights, post| {
            let tree = post.map()?.tree;
            if a.newick {
                let d = trees::of_weights(args.model, weights, tree, HeightsKind::Cost)?;
                let support = post.support(&d.clusters())?;
                return trees::newick(&d, weights.names(), Some(&support));
            }
            let scored = weights_tree_json(args, weights, tree)?;
            let out = InferJson {
                n: weights.n(),
                log_z: post.log_z(),
                map: MapJson {
                    tree: scored.tree,
                    log_potential: scored.log_potential,
                    cost: scored.cost,
                },
                clusters: post.clusters(min_p)?,
            };
            if a.json {
                return to_json(&weights.with_names(with_sparsity(out, post)));
            }
            let n = out.n;
            let mut s = format!(
                "log Z = {:.10}   ({n} points, {:?} model, beta {})\n{}",
                out.log_z,
                args.model,
                args.beta,
                post.note()
            );
            s += &format!(
                "MAP hierarchy: cost {:.6}, log potential {:.6}\n",
                out.map.cost.unwrap_or(f64::NAN),
                out.map.log_potential
            );
            s += &out.map.tree.draw(&|i| weights.label(i), &|_, _| None);
            s += &format!(
                "{} clusters have p > 0{}; the {} most probable:\n",
                out.clusters.len(),
                if min_p > 0.0 {
                    format!(" and p >= {min_p}")
                } else {
                    String::new()
                },
                top.min(out.clusters.len())
            );
            s += &output::labelled_clusters(&out.clusters, top, &|i| weights.label(i));
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
