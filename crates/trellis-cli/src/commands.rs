//! The inference commands: each returns the complete text for stdout.

use anyhow::{Result, bail};
use serde::Serialize;
use trellis::{CostModel, Options, Potential, Tree, Trellis, Workload, total_splits};

use crate::input::{load_weights, memory_limit};
use crate::output::{self, leaf_index};
use crate::progress::Bar;
use crate::{ModelArgs, with_model};

/// Largest N accepted by `count` (the number has about N·log10(2N) digits).
const MAX_COUNT_N: usize = 100_000;

/// Splits per second assumed when warning about long runs (measured on 2 cores).
const WARN_SPLITS_PER_S: f64 = 5e8;

/// Builds the trellis with a progress bar and the memory limit of the arguments.
pub fn build<P: Potential>(model: P, args: &ModelArgs, progress: bool) -> Result<Trellis<P>> {
    let n = model.num_points();
    let splits = total_splits(n) as u64;
    warn_if_long(n, splits as f64);
    let bar = Bar::new(progress, splits);
    let callback = bar.callback();
    let options = Options {
        memory_limit: memory_limit(args),
        progress: callback
            .as_ref()
            .map(|f| f as &(dyn Fn(&str, u64, u64) + Sync)),
    };
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

fn to_json<T: Serialize>(value: &T) -> Result<String> {
    Ok(serde_json::to_string(value)? + "\n")
}

#[derive(Serialize)]
struct MapJson<'a> {
    n: usize,
    log_potential: f64,
    cost: f64,
    tree: &'a Tree,
}

pub fn map(args: &ModelArgs, json: bool, newick: bool, progress: bool) -> Result<String> {
    let weights = load_weights(args, Workload::Inside)?;
    let n = weights.n();
    // The MAP tree does not depend on beta > 0: search at beta = 1 so that
    // rounding cannot make the answer depend on it, then report -beta * cost.
    with_model!(args.model, &weights, 1.0, |model| {
        let trellis = build(model, args, progress)?;
        let tree = trellis.map_tree();
        let cost = trellis.model().tree_cost(&tree);
        let log_potential = clean(-args.beta * cost);
        if json {
            to_json(&MapJson {
                n,
                log_potential,
                cost,
                tree: &tree,
            })
        } else if newick {
            Ok(tree.to_newick() + "\n")
        } else {
            let model = trellis.model();
            let mut s = format!(
                "MAP hierarchy of {n} points ({:?} model): cost {cost:.6}, log potential \
                 {log_potential:.6} at beta {}\n",
                args.model, args.beta
            );
            s += &output::dendrogram(&tree, &leaf_index, &|l, r| {
                Some(format!("cost {:.4}", model.split_cost(l.mask(), r.mask())))
            });
            Ok(s)
        }
    })
}

#[derive(Serialize)]
struct LogzJson {
    n: usize,
    log_z: f64,
}

pub fn logz(args: &ModelArgs, json: bool, progress: bool) -> Result<String> {
    let weights = load_weights(args, Workload::Inside)?;
    let n = weights.n();
    let log_z = with_model!(args.model, &weights, args.beta, |model| build(
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

#[derive(Serialize)]
struct ClusterJson {
    members: Vec<usize>,
    p: f64,
}

#[derive(Serialize)]
struct MarginalsJson {
    n: usize,
    log_z: f64,
    clusters: Vec<ClusterJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    subtree_p: Option<f64>,
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
    let weights = load_weights(args, Workload::Marginals)?;
    let n = weights.n();
    if let Some(t) = &subtree {
        t.validate(n, false)?;
    }
    with_model!(args.model, &weights, args.beta, |model| {
        let trellis = build(model, args, progress)?;
        let terms = 3u64.pow(n as u32) + 1 - (2u64 << n);
        let marginals = {
            let bar = Bar::new(progress, terms);
            let callback = bar.callback();
            trellis.marginals_with(&Options {
                memory_limit: memory_limit(args),
                progress: callback
                    .as_ref()
                    .map(|f| f as &(dyn Fn(&str, u64, u64) + Sync)),
            })?
        };
        let subtree_p = subtree.as_ref().map(|t| marginals.subtree(t)).transpose()?;
        let clusters = marginals.clusters(min_p);
        if json {
            to_json(&MarginalsJson {
                n,
                log_z: trellis.log_z(),
                clusters: clusters
                    .iter()
                    .map(|&(s, p)| ClusterJson {
                        members: trellis::members(s).collect(),
                        p,
                    })
                    .collect(),
                subtree_p,
            })
        } else {
            let mut s = format!(
                "log Z = {:.10}   ({n} points, {:?} model, beta {})\n",
                trellis.log_z(),
                args.model,
                args.beta
            );
            s += &format!(
                "{} of the {} non-singleton proper clusters have p > 0{}; the {} most probable:\n",
                clusters.len(),
                (1u64 << n).saturating_sub(n as u64 + 2),
                if min_p > 0.0 {
                    format!(" and p >= {min_p}")
                } else {
                    String::new()
                },
                top.min(clusters.len())
            );
            for &(c, p) in clusters.iter().take(top) {
                s += &format!("  {p:.6}  {}\n", output::members(c, &leaf_index));
            }
            if let (Some(t), Some(p)) = (&subtree, subtree_p) {
                s += &format!("sub-hierarchy {t}: p = {p:.6e}\n");
            }
            Ok(s)
        }
    })
}

#[derive(Serialize)]
struct SamplesJson<'a> {
    n: usize,
    samples: &'a [Tree],
}

pub fn sample(
    args: &ModelArgs,
    k: usize,
    seed: u64,
    json: bool,
    newick: bool,
    progress: bool,
) -> Result<String> {
    let weights = load_weights(args, Workload::Inside)?;
    let n = weights.n();
    with_model!(args.model, &weights, args.beta, |model| {
        let trellis = build(model, args, progress)?;
        let samples = trellis.samples(k, seed);
        if json {
            to_json(&SamplesJson {
                n,
                samples: &samples,
            })
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
