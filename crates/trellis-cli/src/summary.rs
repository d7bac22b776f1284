//! `trellis summary`: the exact maximum-clade-credibility tree or the
//! majority-rule consensus of the posterior over hierarchies (the library's
//! `trellis::summary`), on the dense trellis or, with `--sparse`, on the
//! posterior restricted to a sparse trellis's trees.

use anyhow::{Result, bail};
use clap::Args;
use trellis::input::Naming;
use trellis::job::consensus_threshold;
use trellis::plan::Task;
use trellis::posterior::Posterior;
use trellis::print::Heights;
use trellis::report::SummaryJson;

use crate::RunArgs;
use crate::commands::{outside, printer, run};
use crate::trees::DendrogramArgs;

#[derive(Args, Debug)]
pub struct SummaryArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// `mcc`: the binary tree maximising the product of its clusters' exact marginals (its
    /// log is "log_credibility"); `consensus`: the tree of every cluster with marginal
    /// above the threshold, generally multifurcating. Each cluster carries its marginal.
    #[arg(long, value_name = "KIND", value_parser = summary_kind)]
    pub kind: Task,
    /// With --kind consensus: keep the clusters with marginal >= P, for P between 0.5 and 1;
    /// at 0.5 (the default, the majority rule) those with marginal > 0.5. At 1, the
    /// clusters of every tree (the strict consensus).
    #[arg(long, value_name = "P", allow_negative_numbers = true)]
    pub threshold: Option<f64>,
    /// How many clusters the readable summary lists (JSON lists all).
    #[arg(long, default_value_t = 20, value_name = "K")]
    pub top: usize,
    /// Print one JSON object {"n", "kind", "tree", "clusters": [{"members", "p"}, ...]}
    /// (plus "log_credibility" for mcc, "names" when the points have names); "tree" is
    /// nested lists of 0-based indices, a list of more than two children where the
    /// consensus is multifurcating.
    #[arg(long, conflicts_with = "newick")]
    pub json: bool,
    /// Print the tree in rooted Newick without branch lengths, each internal node
    /// labelled with its cluster's marginal; leaves are the points' names, or indices.
    #[arg(long)]
    pub newick: bool,
}

/// Parses `--kind`: `mcc` or `consensus` (the planner's names of the two tasks).
fn summary_kind(s: &str) -> Result<Task, String> {
    match s.parse::<Task>() {
        Ok(t @ (Task::Mcc | Task::Consensus)) => Ok(t),
        _ => Err(format!("must be mcc or consensus, not {s:?}")),
    }
}

/// The summary of one posterior, with the options of its outside pass.
fn summarise(
    a: &SummaryArgs,
    post: &Posterior,
    progress: bool,
    threshold: f64,
) -> Result<SummaryJson> {
    let tree = outside(post, &a.run.model, progress, |o| match a.kind {
        Task::Mcc => post.mcc_tree(o),
        _ => post.consensus_tree(threshold, o),
    })?;
    Ok(SummaryJson::of(a.kind.name(), tree))
}

pub fn summary(a: &SummaryArgs, progress: bool) -> Result<String> {
    if a.newick && a.run.model.jets.is_some() {
        bail!("--newick prints one tree; with --jets the output is one JSON line per jet");
    }
    let threshold = consensus_threshold(a.kind, a.threshold, Naming::Flags)?;
    // The planner counts the summary's own pass (the MCC tree's max-plus
    // pass) with the marginals'.
    run(
        &a.run,
        a.kind,
        a.run.model.budget.beta,
        progress,
        |_| 0,
        |_| Ok(()),
        |_, post, _| summarise(a, post, false, threshold),
        |weights, post| {
            let out = summarise(a, post, progress, threshold)?;
            let format = DendrogramArgs::default().output(a.json, a.newick);
            let p = printer(&a.run.model, weights, Heights::Cost);
            Ok(p.summary(out, threshold, a.top, post.sparsity(), format)?)
        },
    )
}
