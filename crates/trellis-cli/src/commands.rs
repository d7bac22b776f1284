//! The inference commands: each returns the complete text for stdout.
//!
//! Every command runs on a weight matrix (one JSON object, or a readable
//! summary) or on a jets file (`--jets`: one JSON object per jet per line,
//! each with the jet's `"id"` and the fields of the single-problem output).

use anyhow::{Result, bail};
use serde::Serialize;
use trellis::ginkgo::{Ginkgo, Jet};
use trellis::{Model, Search, Tree, Trellis, Workload, total_splits, tree_log_potential};

use crate::batch::{dense_trellis, dense_work, per_jet};
use crate::input::{Input, ginkgo_variant, load, memory_limit};
use crate::output::{self, leaf_index};
use crate::progress::{Bar, options};
use crate::{ModelArgs, with_cost_model};

/// Largest N accepted by `count` (the number has about N·log10(2N) digits).
const MAX_COUNT_N: usize = 100_000;

/// Splits per second assumed when warning about long runs (measured on 2 cores).
const WARN_SPLITS_PER_S: f64 = 5e8;

/// Builds the trellis with a progress bar and the memory limit of the arguments.
pub fn build<M: Model>(model: M, args: &ModelArgs, progress: bool) -> Result<Trellis<M>> {
    let n = model.num_points();
    let splits = total_splits(n) as u64;
    warn_if_long(n, splits as f64);
    let bar = Bar::new(progress, splits);
    let callback = bar.callback();
    let options = options(memory_limit(args), callback.as_ref());
    Ok(Trellis::with_options(model, &options)?)
}

fn warn_if_long(n: usize, work: f64) {
    let seconds = work / WARN_SPLITS_PER_S;
    if seconds > 60.0 {
        eprintln!(
            "note: exact inference over {n} points evaluates {work:.2e} splits per pass; \
             expect roughly {:.0} minutes on 2 cores",
            (seconds / 60.0).ceil()
        );
    }
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
    let cost = with_cost_model!(args.model, weights, 1.0, |model| trellis::tree_cost(
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
/// β; `log_potential = -β · cost`.
pub fn weights_tree_output(
    args: &ModelArgs,
    weights: &trellis::Weights,
    tree: Tree,
    title: &str,
    json: bool,
    newick: bool,
) -> Result<String> {
    let out = weights_tree_json(args, weights, tree)?;
    let cost = out.cost.expect("a cost model");
    if json {
        return to_json(&out);
    }
    if newick {
        return Ok(out.tree.to_newick() + "\n");
    }
    let mut s = format!(
        "{title} of {} points ({:?} model): cost {cost:.6}, log potential {:.6} at beta {}\n",
        out.n, args.model, out.log_potential, args.beta
    );
    with_cost_model!(args.model, weights, 1.0, |model| {
        s += &output::dendrogram(&out.tree, &leaf_index, &|l, r| {
            Some(format!("cost {:.4}", split_cost(&model, l, r)))
        })
    });
    Ok(s)
}

pub fn map(args: &ModelArgs, json: bool, newick: bool, progress: bool) -> Result<String> {
    match load(args, Some(Workload::Inside))? {
        Input::Jets(file) => per_jet(&file, progress, dense_work, |_, jet| {
            let t = dense_trellis(jet, variant(args))?;
            Ok(TreeJson {
                n: jet.len(),
                log_potential: t.map().log_potential,
                cost: None,
                tree: t.map().tree.clone(),
            })
        }),
        // The MAP tree does not depend on beta > 0: search at beta = 1 so that
        // rounding cannot make the answer depend on it, then report -beta * cost.
        Input::Weights(weights) => {
            let tree = with_cost_model!(args.model, &weights, 1.0, |model| build(
                model, args, progress
            )?
            .map()
            .tree
            .clone());
            weights_tree_output(args, &weights, tree, "MAP hierarchy", json, newick)
        }
    }
}

/// `trellis score`: the value of a given tree (or of each jet's truth tree).
pub fn score(args: &ModelArgs, tree: Option<&str>, truth: bool, json: bool) -> Result<String> {
    let given = tree.map(Tree::parse).transpose()?;
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
            weights_tree_output(args, &weights, tree, "Tree", json, false)
        }
    }
}

#[derive(Serialize)]
pub struct LogzJson {
    pub n: usize,
    pub log_z: f64,
}

pub fn logz(args: &ModelArgs, json: bool, progress: bool) -> Result<String> {
    match load(args, Some(Workload::Inside))? {
        Input::Jets(file) => per_jet(&file, progress, dense_work, |_, jet| {
            Ok(LogzJson {
                n: jet.len(),
                log_z: dense_trellis(jet, variant(args))?.log_z(),
            })
        }),
        Input::Weights(weights) => {
            let n = weights.n();
            let log_z = with_cost_model!(args.model, &weights, args.beta, |model| build(
                model, args, progress
            )?
            .log_z());
            if json {
                to_json(&LogzJson { n, log_z })
            } else {
                Ok(format!(
                    "log Z = {log_z:.10}\n({n} points, {} hierarchies, {:?} model, beta {})\n",
                    output::approx(&trellis::count::num_trees(n)),
                    args.model,
                    args.beta
                ))
            }
        }
    }
}

/// A cluster and its marginal, as in every `marginals` JSON output.
#[derive(Serialize)]
pub(crate) struct ClusterJson {
    pub members: Vec<usize>,
    pub p: f64,
}

#[derive(Serialize)]
pub(crate) struct MarginalsJson {
    n: usize,
    log_z: f64,
    clusters: Vec<ClusterJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    subtree_p: Option<f64>,
}

/// Every cluster marginal (and the sub-hierarchy's) of a built trellis.
fn marginals_json<M: Model>(
    trellis: &Trellis<M>,
    args: &ModelArgs,
    min_p: f64,
    subtree: Option<&Tree>,
    progress: bool,
) -> Result<MarginalsJson> {
    let n = trellis.num_points();
    let terms = 3u64.pow(n as u32) + 1 - (2u64 << n);
    let marginals = {
        let bar = Bar::new(progress, terms);
        let callback = bar.callback();
        trellis.marginals_with(&options(memory_limit(args), callback.as_ref()))?
    };
    let subtree_p = match subtree {
        Some(t) => {
            t.validate(n, false)?;
            Some(marginals.subtree(t)?)
        }
        None => None,
    };
    Ok(MarginalsJson {
        n,
        log_z: trellis.log_z(),
        clusters: marginals
            .clusters(min_p)
            .into_iter()
            .map(|(s, p)| ClusterJson {
                members: trellis::members(s).collect(),
                p,
            })
            .collect(),
        subtree_p,
    })
}

pub fn marginals(
    args: &ModelArgs,
    min_p: f64,
    subtree: Option<&str>,
    top: usize,
    json: bool,
    progress: bool,
) -> Result<String> {
    if !(0.0..=1.0).contains(&min_p) {
        bail!("--min-p must be between 0 and 1, not {min_p}");
    }
    let subtree = subtree.map(Tree::parse).transpose()?;
    match load(args, Some(Workload::Marginals))? {
        Input::Jets(file) => per_jet(
            &file,
            progress,
            |j| 3 * dense_work(j),
            |_, jet| {
                let t = dense_trellis(jet, variant(args))?;
                marginals_json(&t, args, min_p, subtree.as_ref(), false)
            },
        ),
        Input::Weights(weights) => {
            if let Some(t) = &subtree {
                t.validate(weights.n(), false)?;
            }
            with_cost_model!(args.model, &weights, args.beta, |model| {
                let trellis = build(model, args, progress)?;
                let out = marginals_json(&trellis, args, min_p, subtree.as_ref(), progress)?;
                if json {
                    return to_json(&out);
                }
                let n = out.n;
                let mut s = format!(
                    "log Z = {:.10}   ({n} points, {:?} model, beta {})\n",
                    out.log_z, args.model, args.beta
                );
                s += &format!(
                    "{} of the {} non-singleton proper clusters have p > 0{}; the {} most probable:\n",
                    out.clusters.len(),
                    (1u64 << n).saturating_sub(n as u64 + 2),
                    if min_p > 0.0 {
                        format!(" and p >= {min_p}")
                    } else {
                        String::new()
                    },
                    top.min(out.clusters.len())
                );
                for c in out.clusters.iter().take(top) {
                    let mask = trellis::mask_of(c.members.iter().copied());
                    s += &format!("  {:.6}  {}\n", c.p, output::members(mask, &leaf_index));
                }
                if let (Some(t), Some(p)) = (&subtree, out.subtree_p) {
                    s += &format!("sub-hierarchy {t}: p = {p:.6e}\n");
                }
                Ok(s)
            })
        }
    }
}

#[derive(Serialize)]
pub struct SamplesJson {
    pub n: usize,
    pub samples: Vec<Tree>,
}

pub fn sample(
    args: &ModelArgs,
    k: usize,
    seed: u64,
    json: bool,
    newick: bool,
    progress: bool,
) -> Result<String> {
    match load(args, Some(Workload::Inside))? {
        Input::Jets(file) => per_jet(&file, progress, dense_work, |index, jet: &Jet| {
            let t = dense_trellis(jet, variant(args))?;
            Ok(SamplesJson {
                n: jet.len(),
                samples: t.samples(k, trellis::random::stream_seed(seed, index)),
            })
        }),
        Input::Weights(weights) => {
            let n = weights.n();
            with_cost_model!(args.model, &weights, args.beta, |model| {
                let trellis = build(model, args, progress)?;
                let samples = trellis.samples(k, seed);
                if json {
                    to_json(&SamplesJson { n, samples })
                } else if newick {
                    Ok(samples.iter().map(|t| t.to_newick() + "\n").collect())
                } else {
                    let mut s = format!(
                        "{k} exact posterior samples over {n} points ({:?} model, beta {}, seed {seed}):\n",
                        args.model, args.beta
                    );
                    for t in &samples {
                        s += &format!("{t}   log P = {:.6}\n", trellis.log_probability(t)?);
                    }
                    Ok(s)
                }
            })
        }
    }
}

#[derive(Serialize)]
struct CountJson {
    n: usize,
    num_trees: String,
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
        to_json(&CountJson {
            n,
            num_trees: count.to_string(),
        })
    } else {
        Ok(format!(
            "(2N-3)!! = {count}\nbinary hierarchies over N = {n} points (about {})\n",
            output::approx(&count)
        ))
    }
}
