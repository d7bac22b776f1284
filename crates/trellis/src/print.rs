//! Results as people and other tools read them, the same at every door:
//! trees as rooted Newick (the points' names, branch lengths, support
//! values) or SciPy linkage matrices (JSON rows or CSV), a scored tree's
//! readable summary with each split's cost, and cluster lists, partitions
//! and probability matrices labelled by the points' names. The JSON of a
//! result is its type in [`crate::report`].
//!
//! # Heights
//!
//! A tree gets merge heights from a [`Dendrogram`]: by cost (the cumulative
//! cost of each subtree under the model, made monotone; the Ginkgo
//! likelihood's split costs for jets) or by rank (1 + the larger child's
//! rank, leaves 0). Costs of the weight models do not depend on β, so they
//! are computed at β = 1.
//!
//! Cost: linear in the tree's size (a split's cost is the model's summary
//! of its two children, `O(n)` each for the pair models).

use crate::Result;
use crate::flat::Partition;
use crate::ginkgo::{Ginkgo, Jet, Variant};
use crate::input::{NamedWeights, Pairwise};
use crate::job::FlatRun;
use crate::models::{CostModel, ModelName};
use crate::posterior::Sparsity;
use crate::report::{ClusterJson, InferJson, MarginalsJson, TreeJson};
use crate::summary::BinderPartition;
use crate::{Dendrogram, Mask, Newick, Search, Tree};

/// How merge heights are chosen (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Heights {
    /// The cumulative cost of each subtree, made monotone.
    Cost,
    /// 1 + the larger child's rank (leaves 0).
    Rank,
}

impl crate::Named for Heights {
    const WHAT: &'static str = "merge heights";
    const CHOICES: &'static [(&'static str, Heights, &'static str)] = &[
        (
            "cost",
            Heights::Cost,
            "The cumulative cost of the subtree under the model (for jets, the Ginkgo \
             likelihood's split costs), made monotone",
        ),
        (
            "rank",
            Heights::Rank,
            "1 + the larger child's rank (leaves 0)",
        ),
    ];
}

/// A linkage tree drawn with each merge's height (its dendrogram's), under
/// `title`, for a tree no model scores.
pub fn merge_heights(d: &Dendrogram, title: &str, names: Option<&[String]>) -> String {
    let mut height_of = std::collections::HashMap::new();
    for (c, h) in d.clusters().iter().zip(d.heights()) {
        height_of.insert((c[0], c.len()), *h);
    }
    let tree = d.tree();
    let n = tree.num_leaves();
    let mut s = format!("{title} of {n} points (no --model: merge heights only)\n");
    s += &tree.draw(&|i| crate::report::label(names, i), &|l, r| {
        let key = (
            l.min_leaf().min(r.min_leaf()),
            l.num_leaves() + r.num_leaves(),
        );
        height_of.get(&key).map(|h| format!("height {h:.6}"))
    });
    s
}

/// How a tree is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TreeFormat {
    /// Rooted Newick (`[&R] ...;`) with branch lengths.
    Newick,
    /// The SciPy linkage matrix as one JSON array of rows.
    Linkage,
    /// The linkage matrix as CSV rows `a,b,height,size`.
    LinkageCsv,
}

/// The dendrogram of a tree under a model.
///
/// # Errors
///
/// A tree that does not fit the model (see [`Dendrogram::by_cost`]).
pub fn dendrogram<M: Search + ?Sized>(
    model: &M,
    tree: Tree,
    heights: Heights,
) -> Result<Dendrogram> {
    match heights {
        Heights::Cost => Dendrogram::by_cost(model, tree),
        Heights::Rank => Ok(Dendrogram::by_rank(tree)),
    }
}

/// The dendrogram of a tree over pairwise data under the cost model
/// `model` (at β = 1: costs do not depend on β).
///
/// # Errors
///
/// The model's (data it refuses) and [`dendrogram`]'s.
pub fn weights_dendrogram(
    model: ModelName,
    data: &Pairwise,
    tree: Tree,
    heights: Heights,
) -> Result<Dendrogram> {
    if heights == Heights::Rank {
        return Ok(Dendrogram::by_rank(tree));
    }
    let model = CostModel::build(model, data.view(), 1.0)?;
    crate::with_cost_model!(model, |m| dendrogram(&m, tree, heights))
}

/// The linkage matrix of a jet's tree under the Ginkgo likelihood.
///
/// # Errors
///
/// A tree that is not over the jet's leaves.
pub fn jet_linkage(
    jet: &Jet,
    variant: Variant,
    tree: &Tree,
    heights: Heights,
) -> Result<Vec<[f64; 4]>> {
    dendrogram(&Ginkgo::new(jet, variant), tree.clone(), heights)?.linkage()
}

/// A dendrogram written as `format`, with the points' names (Newick leaves)
/// and optionally each internal node's support value (Newick labels).
///
/// # Errors
///
/// Support values that do not fit the tree.
pub fn tree_text(
    d: &Dendrogram,
    names: Option<&[String]>,
    support: Option<&[f64]>,
    format: TreeFormat,
) -> Result<String> {
    match format {
        TreeFormat::Newick => Ok(d.to_newick(&Newick {
            names,
            support,
            ..Newick::default()
        })? + "\n"),
        TreeFormat::Linkage => linkage_json(&d.linkage()?),
        TreeFormat::LinkageCsv => Ok(csv_rows(&d.linkage()?)),
    }
}

/// A linkage matrix as one JSON array of rows and a newline.
///
/// # Errors
///
/// None in practice (serialising numbers).
pub fn linkage_json(rows: &[[f64; 4]]) -> Result<String> {
    Ok(crate::report::to_json(&rows)? + "\n")
}

/// CSV rows `a,b,height,size` (ids and sizes as integers).
pub fn csv_rows(rows: &[[f64; 4]]) -> String {
    rows.iter()
        .map(|r| format!("{},{},{},{}\n", r[0], r[1], r[2], r[3]))
        .collect()
}

/// A tree over pairwise data scored under the cost model `model` at `beta`:
/// its cost (independent of β) and `log_potential = -β · cost`.
///
/// # Errors
///
/// The model's (a β whose product with the cost overflows is refused by the
/// model at that β) and a tree that does not fit the points.
pub fn scored(model: ModelName, data: &Pairwise, beta: f64, tree: Tree) -> Result<TreeJson> {
    let built = CostModel::build(model, data.view(), beta)?;
    let cost = crate::with_cost_model!(built, |m| crate::tree_cost(&m, &tree))?;
    Ok(TreeJson {
        n: data.n(),
        log_potential: crate::report::clean(-beta * cost),
        cost: Some(cost),
        tree,
    })
}

/// The cost of the split of `l ∪ r` into `l` and `r` under a model.
pub fn split_cost<M: Search + ?Sized>(model: &M, l: &Tree, r: &Tree) -> f64 {
    let node = Tree::node(l.clone(), r.clone());
    let cost = |t: &Tree| crate::tree_cost(model, t).unwrap_or(f64::NAN);
    cost(&node) - cost(l) - cost(r)
}

/// The readable summary of a scored tree over named weights: a title line
/// (`{title} of n points (model): cost .., log potential .. at beta ..`),
/// then the tree drawn with each split's cost and the points' names.
///
/// # Errors
///
/// The model's (see [`scored`]).
pub fn tree_summary(
    model: ModelName,
    weights: &NamedWeights,
    scored: &TreeJson,
    title: &str,
    beta: f64,
) -> Result<String> {
    let mut s = format!(
        "{title} of {} points ({model} model): cost {:.6}, log potential {:.6} at beta {beta}\n",
        scored.n,
        scored.cost.unwrap_or(f64::NAN),
        scored.log_potential,
    );
    let built = CostModel::build(model, weights.view(), 1.0)?;
    crate::with_cost_model!(built, |m| {
        s += &scored.tree.draw(&|i| weights.label(i), &|l, r| {
            Some(format!("cost {:.4}", split_cost(&m, l, r)))
        })
    });
    Ok(s)
}

/// A problem over named pairwise data as its results are printed: the
/// data, the cost model that scores its trees at `beta`, and the merge
/// heights of the trees written as Newick or linkage matrices. Every
/// hierarchical command prints through one.
#[derive(Clone, Copy)]
pub struct Printer<'a> {
    /// The data and the points' names.
    pub weights: &'a NamedWeights,
    /// The model that scores the trees.
    pub model: ModelName,
    /// The inverse temperature of the log-potentials.
    pub beta: f64,
    /// The merge heights of written trees.
    pub heights: Heights,
}

impl Printer<'_> {
    /// A result as one line of JSON with the points' names and the sparse
    /// trellis's counts.
    ///
    /// # Errors
    ///
    /// None in practice (see [`crate::report::to_json`]).
    pub fn json<T: serde::Serialize>(
        &self,
        result: T,
        sparsity: Option<Sparsity>,
    ) -> Result<String> {
        let out = crate::report::with_sparsity(result, sparsity);
        crate::report::to_json(&self.weights.with_names(out))
    }

    /// The dendrogram of a tree (see [`weights_dendrogram`]).
    ///
    /// # Errors
    ///
    /// Those of [`weights_dendrogram`].
    pub fn dendrogram(&self, tree: Tree) -> Result<Dendrogram> {
        weights_dendrogram(self.model, self.weights, tree, self.heights)
    }

    /// A tree written as `format` with the points' names.
    ///
    /// # Errors
    ///
    /// Those of [`weights_dendrogram`] and [`tree_text`].
    pub fn tree_text(&self, tree: Tree, format: TreeFormat) -> Result<String> {
        tree_text(&self.dendrogram(tree)?, self.weights.names(), None, format)
    }

    /// A tree as `format`: its scored JSON (with the sparse trellis's
    /// counts), the tree, or the sparse trellis's note then the readable
    /// summary under `title` (see [`tree_summary`]).
    ///
    /// # Errors
    ///
    /// The model's (see [`scored`]) and [`Printer::tree_text`]'s.
    pub fn tree(
        &self,
        tree: Tree,
        title: &str,
        sparsity: Option<Sparsity>,
        format: Format,
    ) -> Result<String> {
        if let Format::Tree(f) = format {
            return self.tree_text(tree, f);
        }
        let out = scored(self.model, self.weights, self.beta, tree)?;
        if format == Format::Json {
            return self.json(out, sparsity);
        }
        let summary = tree_summary(self.model, self.weights, &out, title, self.beta)?;
        Ok(sparsity_note(sparsity) + &summary)
    }

    /// An A* search's result as `format` (the text: [`search_summary`]
    /// with the tree in Newick); `approximate` says which search ran.
    ///
    /// # Errors
    ///
    /// Those of [`Printer::tree_text`].
    pub fn search(
        &self,
        out: &crate::report::SearchJson,
        approximate: bool,
        format: Format,
    ) -> Result<String> {
        let tree = out.outcome.best.tree.clone();
        let newick = match format {
            Format::Json => return crate::report::to_json(&self.weights.with_names(out)),
            Format::Tree(f) => return self.tree_text(tree, f),
            Format::Text => self.tree_text(tree, TreeFormat::Newick)?,
        };
        let (model, beta) = (self.model, self.beta);
        Ok(search_summary(
            approximate,
            &out.outcome,
            out.n,
            model,
            out.heuristic,
            beta,
            &newick,
        ))
    }

    /// The first line of `k` readable samples drawn from `seed`, then the
    /// sparse trellis's note.
    pub fn samples_title(&self, k: usize, seed: u64, sparsity: Option<Sparsity>) -> String {
        format!(
            "{k} exact posterior samples over {} points ({} model, beta {}, seed {seed}):\n{}",
            self.weights.n(),
            self.model,
            self.beta,
            sparsity_note(sparsity)
        )
    }

    /// A summary tree (a consensus at `threshold`) as `format`: its JSON
    /// (with the sparse trellis's counts), Newick with each cluster's
    /// marginal as its label, or [`summary_text`] listing `top` clusters.
    ///
    /// # Errors
    ///
    /// None in practice (see [`crate::report::to_json`]).
    pub fn summary(
        &self,
        out: crate::report::SummaryJson,
        threshold: f64,
        top: usize,
        sparsity: Option<Sparsity>,
        format: Format,
    ) -> Result<String> {
        let names = self.weights.names();
        Ok(match format {
            Format::Json => return self.json(out, sparsity),
            Format::Tree(_) => out.tree.to_newick(names) + "\n",
            Format::Text => {
                let note = sparsity_note(sparsity);
                summary_text(&out, threshold, self.model, self.beta, &note, top, names)
            }
        })
    }

    /// The readable log Z over the trees, or over those satisfying the
    /// `triplets` file, after the sparse trellis's note.
    pub fn log_z(
        &self,
        log_z: f64,
        triplets: Option<&std::path::Path>,
        sparsity: Option<Sparsity>,
    ) -> String {
        let n = self.weights.n();
        let over = match triplets {
            Some(path) => format!("the hierarchies satisfying {}", path.display()),
            None => format!(
                "{} hierarchies",
                crate::report::approx(&crate::count::num_trees(n))
            ),
        };
        format!(
            "log Z = {log_z:.10}\n({n} points, {over}, {:?} model, beta {})\n{}",
            self.model,
            self.beta,
            sparsity_note(sparsity)
        )
    }

    /// The readable marginals: [`log_z_header`], the `top` clusters listed
    /// with `p >= min_p` (see [`cluster_list`]) and the marginal of the
    /// sub-hierarchy `subtree`, if asked.
    pub fn marginals(
        &self,
        out: &MarginalsJson,
        subtree: Option<&Tree>,
        min_p: f64,
        top: usize,
        sparsity: Option<Sparsity>,
    ) -> String {
        let (n, weights) = (out.n, self.weights);
        let note = sparsity_note(sparsity);
        let mut s = log_z_header(out.log_z, n, self.model, self.beta, &note);
        let proper = (1u128 << n.min(127)).saturating_sub(n as u128 + 2);
        let of = format!(" of the {proper} non-singleton proper clusters");
        s += &cluster_list(&out.clusters, &of, min_p, top, &|i| weights.label(i));
        if let (Some(t), Some(p)) = (subtree, out.subtree_p) {
            s += &format!("sub-hierarchy {}: p = {p:.6e}\n", weights.newick(t));
        }
        s
    }

    /// The readable result of `infer`: [`log_z_header`], the MAP tree's
    /// cost and log potential, the tree drawn, and the `top` clusters
    /// listed with `p >= min_p`.
    pub fn infer(
        &self,
        out: &InferJson,
        min_p: f64,
        top: usize,
        sparsity: Option<Sparsity>,
    ) -> String {
        let weights = self.weights;
        let note = sparsity_note(sparsity);
        let mut s = log_z_header(out.log_z, out.n, self.model, self.beta, &note);
        s += &format!(
            "MAP hierarchy: cost {:.6}, log potential {:.6}\n",
            out.map.cost.unwrap_or(f64::NAN),
            out.map.log_potential
        );
        s += &out.map.tree.draw(&|i| weights.label(i), &|_, _| None);
        s + &cluster_list(&out.clusters, " clusters", min_p, top, &|i| {
            weights.label(i)
        })
    }
}

/// `{a, b, c}` for the points of a cluster, point `i` shown as `label(i)`.
pub fn members(cluster: Mask, label: &dyn Fn(usize) -> String) -> String {
    let names: Vec<String> = crate::members(cluster).map(label).collect();
    format!("{{{}}}", names.join(", "))
}

/// A partition shown as `{a, b} {c}`, point `i` as `label(i)`.
pub fn partition(p: &[Vec<usize>], label: &dyn Fn(usize) -> String) -> String {
    p.iter()
        .map(|c| {
            let names: Vec<String> = c.iter().map(|&i| label(i)).collect();
            format!("{{{}}}", names.join(", "))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A matrix of probabilities, one row per line.
pub fn matrix(rows: &[Vec<f64>]) -> String {
    rows.iter()
        .map(|r| {
            r.iter()
                .map(|p| format!("{p:5.3}"))
                .collect::<Vec<_>>()
                .join(" ")
                + "\n"
        })
        .collect()
}

/// The first `top` clusters with their marginals, one per line, point `i`
/// shown as `label(i)`.
pub fn clusters(clusters: &[ClusterJson], top: usize, label: &dyn Fn(usize) -> String) -> String {
    clusters
        .iter()
        .take(top)
        .map(|c| {
            let names: Vec<String> = c.members.iter().map(|&i| label(i)).collect();
            format!("  {:.6}  {{{}}}\n", c.p, names.join(", "))
        })
        .collect()
}

/// The readable list of the `top` most probable clusters after a line
/// counting them (`{k}{of} have p > 0`, and `p >= min_p` when it is set).
pub fn cluster_list(
    listed: &[ClusterJson],
    of: &str,
    min_p: f64,
    top: usize,
    label: &dyn Fn(usize) -> String,
) -> String {
    let at_least = if min_p > 0.0 {
        format!(" and p >= {min_p}")
    } else {
        String::new()
    };
    let k = listed.len();
    format!(
        "{k}{of} have p > 0{at_least}; the {} most probable:\n",
        top.min(k)
    ) + &clusters(listed, top, label)
}

/// How a result is written: its JSON, its tree in a tree format, or
/// readable text. For a stream of samples: one JSON object `{"n",
/// "samples": [tree, ..], ..}`; Newick, one tree per line, and linkage
/// matrices as one JSON array of matrices or as CSV matrices separated by
/// an empty line; or each tree (Newick with names, else nested lists) with
/// its log posterior probability, one per line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// The result's JSON (see [`crate::report`]).
    Json,
    /// The tree, in this format.
    Tree(TreeFormat),
    /// Readable text.
    Text,
}

/// A stream of sampled trees over named weights, written one at a time:
/// [`Samples::head`], the text of each tree from [`Samples::item`] (with
/// its separator), then [`Samples::foot`]; memory does not grow with the
/// number of samples.
pub struct Samples<'a> {
    format: Format,
    on: Printer<'a>,
    log_z: f64,
    tail: String,
    written: usize,
}

impl<'a> Samples<'a> {
    /// A stream of trees printed `on` a problem (whose log partition
    /// function is `log_z`, for the text's probabilities); `tail` is a JSON
    /// object whose fields follow the samples array in the JSON format
    /// (e.g. the points' names).
    pub fn new(format: Format, on: Printer<'a>, log_z: f64, tail: String) -> Samples<'a> {
        Samples {
            format,
            on,
            log_z,
            tail,
            written: 0,
        }
    }

    /// What comes before the first tree.
    pub fn head(&self) -> String {
        match self.format {
            Format::Json => format!("{{\"n\":{},\"samples\":[", self.on.weights.n()),
            Format::Tree(TreeFormat::Linkage) => "[".to_string(),
            _ => String::new(),
        }
    }

    /// The text of the next tree, after its separator.
    ///
    /// # Errors
    ///
    /// The model's (see [`scored`], [`weights_dendrogram`]).
    pub fn item(&mut self, tree: Tree) -> Result<String> {
        let separator = match (self.written, self.format) {
            (0, _) => "",
            (_, Format::Json | Format::Tree(TreeFormat::Linkage)) => ",",
            (_, Format::Tree(TreeFormat::LinkageCsv)) => "\n",
            _ => "",
        };
        self.written += 1;
        let (model, weights) = (self.on.model, self.on.weights);
        let text = match self.format {
            Format::Json => crate::report::to_json(&tree)?.trim_end().to_string(),
            Format::Tree(format) => {
                let text = self.on.tree_text(tree, format)?;
                match format {
                    TreeFormat::Linkage => text.trim_end().to_string(),
                    _ => text,
                }
            }
            Format::Text => {
                let log_phi = scored(model, weights, self.on.beta, tree.clone())?.log_potential;
                let shown = match weights.names() {
                    Some(_) => weights.newick(&tree),
                    None => tree.to_string(),
                };
                format!("{shown}   log P = {:.6}\n", log_phi - self.log_z)
            }
        };
        Ok(format!("{separator}{text}"))
    }

    /// What comes after the last tree.
    pub fn foot(&self) -> String {
        match self.format {
            Format::Json => json_samples_foot(&self.tail),
            Format::Tree(TreeFormat::Linkage) => "]\n".to_string(),
            _ => String::new(),
        }
    }
}

/// The end of a JSON object `{"n", "samples": [..], ..tail}` written one
/// sample at a time: `tail` is a JSON object whose fields follow the array.
pub fn json_samples_foot(tail: &str) -> String {
    let rest = tail.trim().trim_start_matches('{').trim_end_matches('}');
    let sep = if rest.is_empty() { "" } else { "," };
    format!("]{sep}{rest}}}\n")
}

/// The readable summary of an A* search (`approximate` or exact) over `n`
/// points of `model` at `beta`: the tree's cost and log potential, whether
/// it is proven optimal, the work done, and the tree in Newick (`newick`).
pub fn search_summary(
    approximate: bool,
    outcome: &crate::astar::Outcome,
    n: usize,
    model: ModelName,
    heuristic: &str,
    beta: f64,
    newick: &str,
) -> String {
    let kind = if approximate { "Approximate" } else { "Exact" };
    let proven = if outcome.exact {
        "Proven"
    } else {
        "Not proven"
    };
    format!(
        "{kind} A* over {n} points ({model} model, heuristic {heuristic}): cost {:.6}, log \
         potential {:.6} at beta {beta}\n{proven} the optimum; explored {} trellis vertices, \
         scored {} splits ({:.2e} of 3^N), {} rounds\n{}\n",
        outcome.cost,
        outcome.best.log_potential,
        outcome.explored,
        outcome.splits,
        outcome.splits as f64 / 3f64.powi(n as i32),
        outcome.rounds,
        newick.trim_end()
    )
}

/// The records of a simulated interactive loop (`trellis interactive
/// simulate`): a readable table, or one JSON object per record whose last
/// adds the final tree (Newick) and the triplets in force (by name).
pub struct LoopRecords<'a> {
    /// JSON lines instead of the table.
    pub json: bool,
    /// The points' names.
    pub names: &'a [String],
}

impl LoopRecords<'_> {
    /// The table's header (nothing for JSON).
    pub fn head(&self, queries: usize, strategy: &str, iters: usize, seed: u64) -> String {
        if self.json {
            return String::new();
        }
        format!(
            "# {queries} queries ({strategy}), {iters} iterations between queries, seed {seed}\n\
             {:>6}  {:>16}  {:>11}  {:>14}  triplet\n",
            "query", "triplet_distance", "constraints", "log_likelihood"
        )
    }

    /// One record (`last`: the final one, which carries the tree in JSON).
    ///
    /// # Errors
    ///
    /// None in practice (serialising numbers and names).
    pub fn line(
        &self,
        r: &crate::ddt::Record,
        sim: &crate::ddt::Simulation,
        last: bool,
    ) -> Result<String> {
        let names = self.names;
        if !self.json {
            let t = r
                .triplet
                .map(|t| format!("({{{}, {}}}, {})", names[t.a], names[t.b], names[t.c]))
                .unwrap_or_default();
            return Ok(format!(
                "{:>6}  {:>16.4}  {:>11}  {:>14.3}  {t}\n",
                r.query, r.triplet_distance, r.constraints, r.log_likelihood
            ));
        }
        let mut v = serde_json::json!({
            "query": r.query,
            "triplet_distance": r.triplet_distance,
            "constraints": r.constraints,
            "log_likelihood": r.log_likelihood,
        });
        if last {
            let chain = sim.sampler();
            let triplets: Vec<[&str; 3]> = chain
                .constraints()
                .iter()
                .map(|t| [&*names[t.a], &*names[t.b], &*names[t.c]])
                .collect();
            v["tree"] = serde_json::json!(chain.tree().to_newick(names));
            v["triplets"] = serde_json::json!(triplets);
        }
        crate::report::to_json(&v)
    }

    /// The table's footer: the moves' acceptance rates and the final tree
    /// (nothing for JSON).
    pub fn foot(&self, sim: &crate::ddt::Simulation) -> String {
        if self.json {
            return String::new();
        }
        let st = sim.sampler().stats();
        format!(
            "# SPR acceptance {:.3}, time-move acceptance {:.3}\n{}\n",
            st.spr_accepted as f64 / st.spr_proposed.max(1) as f64,
            st.time_accepted as f64 / st.time_proposed.max(1) as f64,
            sim.sampler().tree().to_newick(self.names)
        )
    }
}

/// Largest N whose count [`count`] prints (the number has about
/// N·log10(2N) digits).
pub const MAX_COUNT_N: usize = 100_000;

/// The exact number of binary hierarchies over `n` points, `(2n-3)!!`: one
/// JSON object `{"n", "num_trees": "<decimal string>"}`, or readable.
///
/// # Errors
///
/// `n` of 0 or above [`MAX_COUNT_N`] ([`ErrorKind::Input`](crate::ErrorKind::Input)).
pub fn count(n: usize, json: bool) -> Result<String> {
    if n == 0 {
        return Err(crate::Error::input("N must be at least 1"));
    }
    if n > MAX_COUNT_N {
        return Err(crate::Error::input(format!(
            "N = {n} is too large to print the count; at most {MAX_COUNT_N}"
        )));
    }
    let count = crate::count::num_trees(n);
    if json {
        let out = serde_json::json!({"n": n, "num_trees": count.to_string()});
        return crate::report::to_json(&out);
    }
    Ok(format!(
        "(2N-3)!! = {count}\nbinary hierarchies over N = {n} points (about {})\n",
        crate::report::approx(&count)
    ))
}

/// A line about a sparse trellis for readable output (empty for the
/// dense trellis).
pub fn sparsity_note(sparsity: Option<Sparsity>) -> String {
    match sparsity {
        Some(s) => format!(
            "sparse trellis: {} clusters, {} splits, {} trees realised (sparsity {})\n",
            s.clusters,
            s.splits,
            crate::report::approx(&s.trees_realised),
            crate::report::share(s.log10_sparsity)
        ),
        None => String::new(),
    }
}

/// The readable summary of a summary tree (a consensus at `threshold`):
/// its title, the run (`model`, `beta`, the sparse trellis's `note`), the
/// tree in Newick and its `top` most probable clusters.
pub fn summary_text(
    out: &crate::report::SummaryJson,
    threshold: f64,
    model: ModelName,
    beta: f64,
    note: &str,
    top: usize,
    names: Option<&[String]>,
) -> String {
    let title = if out.kind == "mcc" {
        format!(
            "Maximum-clade-credibility tree: log credibility {:.6} (the sum of the log \
             marginals of its {} clusters)",
            out.log_credibility.unwrap_or(f64::NAN),
            out.clusters.len()
        )
    } else {
        format!(
            "Consensus tree at {threshold}: the {} clusters with marginal {} {threshold}",
            out.clusters.len(),
            if threshold == 0.5 { ">" } else { ">=" }
        )
    };
    let listed: Vec<ClusterJson> = out
        .clusters
        .iter()
        .map(|c| ClusterJson {
            members: c.members.clone(),
            p: c.p,
        })
        .collect();
    format!(
        "{title}\n({} points, {model:?} model, beta {beta})\n{note}{}\n{}",
        out.n,
        out.tree.to_newick(names),
        clusters(&listed, top, &|i| crate::report::label(names, i))
    )
}

/// The first line of a readable posterior: `log Z = ..   (n points, model,
/// beta ..)`, then the sparse trellis's `note`.
pub fn log_z_header(log_z: f64, n: usize, model: ModelName, beta: f64, note: &str) -> String {
    format!("log Z = {log_z:.10}   ({n} points, {model:?} model, beta {beta})\n{note}")
}

/// A line on the family a flat posterior is restricted to (empty over
/// every partition): how many partitions it realises, and their share.
pub fn family_line(post: &crate::posterior::PartitionPosterior) -> String {
    match post.family() {
        Some(family) => format!(
            "(over the {} partitions of the family, {} of all {})\n",
            crate::report::approx(&family.partitions_realised),
            crate::report::share(family.log10_share),
            crate::report::approx(post.num_partitions())
        ),
        None => String::new(),
    }
}

/// The readable flat marginals: log Z, the `top` most probable clusters
/// and the pairwise co-clustering matrix.
pub fn flat_marginals(
    log_z: f64,
    beta: f64,
    listed: &[ClusterJson],
    pairwise: &[Vec<f64>],
    top: usize,
    names: Option<&[String]>,
) -> String {
    format!(
        "log Z = {log_z:.10}   ({} points, beta {beta})\nthe {} most probable clusters:\n{}\
         pairwise co-clustering probabilities P(i ~ j):\n{}",
        pairwise.len(),
        top.min(listed.len()),
        clusters(listed, top, &|i| crate::report::label(names, i)),
        matrix(pairwise)
    )
}

/// A linkage tree as `format`: scored under `model` at `beta` when one is
/// given (merge heights by cost or rank when `heights` asks, else the
/// linkage's merge distances), or with its merge distances drawn under
/// `title`.
///
/// # Errors
///
/// The model's (see [`Printer::tree`]).
pub fn linkage_result(
    run: crate::baselines::LinkageRun,
    model: Option<ModelName>,
    beta: f64,
    heights: Option<Heights>,
    title: &str,
    format: Format,
) -> Result<String> {
    let (dendrogram, names, weights) = (run.dendrogram, run.names, run.weights);
    let tree = dendrogram.tree().clone();
    if let Format::Tree(f) = format {
        let d = match (heights, &weights, model) {
            (Some(Heights::Cost), Some(w), Some(model)) => {
                weights_dendrogram(model, w, tree, Heights::Cost)?
            }
            (Some(Heights::Rank), ..) => Dendrogram::by_rank(tree),
            _ => dendrogram,
        };
        return tree_text(&d, names.as_deref(), None, f);
    }
    if let (Some(model), Some(data)) = (model, weights) {
        let weights = &NamedWeights { data, names };
        let heights = Heights::Cost;
        return Printer {
            weights,
            model,
            beta,
            heights,
        }
        .tree(tree, title, None, format);
    }
    if format == Format::Json {
        let out = serde_json::json!({"n": tree.num_leaves(), "tree": tree});
        return crate::report::to_json(&crate::report::with_family(out, None, names.as_deref()));
    }
    Ok(merge_heights(&dendrogram, title, names.as_deref()))
}

/// A flat result as one line of JSON with the family's counts and the
/// points' names.
///
/// # Errors
///
/// None in practice (see [`crate::report::to_json`]).
pub fn flat_json<T: serde::Serialize>(result: T, f: &FlatRun) -> Result<String> {
    let out = crate::report::with_family(result, f.post.family(), f.names.as_deref());
    crate::report::to_json(&out)
}

/// The MAP partition of a flat run (searched at β = 1) with its log energy
/// at `beta`: JSON `{"n", "log_energy", "clusters"}` or readable.
///
/// # Errors
///
/// A posterior without the MAP.
pub fn flat_map(f: &FlatRun, beta: f64, json: bool) -> Result<String> {
    let map = f.post.map()?;
    let clusters = map.clusters;
    let log_energy = crate::report::clean(beta * map.log_energy);
    let n = f.post.n();
    if json {
        let out = serde_json::json!({"n": n, "log_energy": log_energy, "clusters": clusters});
        return flat_json(out, f);
    }
    Ok(format!(
        "MAP partition of {n} points into {} clusters: log energy {log_energy:.6} at beta {beta}\n{}{}\n",
        clusters.len(),
        family_line(&f.post),
        partition(&clusters, &|i| f.label(i))
    ))
}

/// The log partition function of a flat run at `beta`: JSON `{"n",
/// "log_z"}` or readable.
///
/// # Errors
///
/// A posterior without log Z.
pub fn flat_log_z(f: &FlatRun, beta: f64, json: bool) -> Result<String> {
    let (n, log_z) = (f.post.n(), f.post.log_z()?);
    if json {
        return flat_json(serde_json::json!({"n": n, "log_z": log_z}), f);
    }
    Ok(format!(
        "log Z = {log_z:.10}\n({n} points, {} partitions, beta {beta})\n{}",
        crate::report::approx(f.post.num_partitions()),
        family_line(&f.post)
    ))
}

/// The cluster marginals of a flat run at `beta` with `p >= min_p` and
/// the pairwise co-clustering matrix: JSON `{"n", "log_z", "clusters",
/// "pairwise"}` or readable ([`flat_marginals`], `top` clusters).
///
/// # Errors
///
/// A posterior without marginals.
pub fn flat_marginals_result(
    f: &FlatRun,
    beta: f64,
    min_p: f64,
    top: usize,
    json: bool,
) -> Result<String> {
    let m = f.post.marginals()?;
    let clusters: Vec<ClusterJson> = m
        .clusters(min_p)
        .into_iter()
        .map(|(c, p)| ClusterJson::of(c, p))
        .collect();
    let (log_z, pairwise) = (f.post.log_z()?, m.pairwise_matrix());
    if json {
        let n = f.post.n();
        let out =
            serde_json::json!({"n": n, "log_z": log_z, "clusters": clusters, "pairwise": pairwise});
        return flat_json(out, f);
    }
    let names = f.names.as_deref();
    Ok(flat_marginals(
        log_z, beta, &clusters, &pairwise, top, names,
    ))
}

/// The Binder-optimal partition of a flat run at `beta` under the costs
/// `cost_split` and `cost_join`: JSON `{"n", "clusters", "expected_loss"}`,
/// or readable beside the MAP partition's expected loss.
///
/// # Errors
///
/// A posterior without the MAP or the marginals.
pub fn binder(
    f: &FlatRun,
    b: &BinderPartition,
    costs: (f64, f64),
    beta: f64,
    json: bool,
) -> Result<String> {
    let (post, n) = (&f.post, f.post.n());
    if json {
        let out =
            serde_json::json!({"n": n, "clusters": b.clusters, "expected_loss": b.expected_loss});
        return flat_json(out, f);
    }
    let (cost_split, cost_join) = costs;
    let map = post.map()?.clusters;
    let map_loss = crate::summary::binder_loss(post.marginals()?, &map, cost_split, cost_join)?;
    let text = |p: &[Vec<usize>]| partition(p, &|i| f.label(i));
    Ok(format!(
        "Binder-optimal partition of {n} points into {} clusters (cost-split {cost_split}, \
         cost-join {cost_join}, beta {beta}): expected loss {:.6}\n{}\nthe MAP partition ({} \
         clusters): expected loss {map_loss:.6}\n{}\n",
        b.clusters.len(),
        b.expected_loss,
        text(&b.clusters),
        map.len(),
        text(&map)
    ))
}

/// The Perturb-and-MAP co-clustering frequencies of `num_samples`
/// perturbed problems at `beta`: JSON `{"n", "num_samples", "pairwise"}`
/// (with the points' names) or readable.
///
/// # Errors
///
/// None in practice (see [`crate::report::to_json`]).
pub fn perturb_map(
    pairwise: &[Vec<f64>],
    num_samples: usize,
    beta: f64,
    names: Option<&[String]>,
    json: bool,
) -> Result<String> {
    if json {
        let out = serde_json::json!({"n": pairwise.len(), "num_samples": num_samples, "pairwise": pairwise});
        return crate::report::to_json(&crate::report::with_family(out, None, names));
    }
    Ok(format!(
        "Perturb-and-MAP pairwise co-clustering frequencies ({num_samples} samples, beta {beta}):\n{}",
        matrix(pairwise)
    ))
}

/// A stream of sampled partitions of a flat run, written one at a time
/// as [`Samples`] writes trees: one JSON object `{"n", "samples":
/// [partition, ..], ..}` (with the family's counts and the names), or the
/// family's line then each partition with its log probability.
pub struct PartitionSamples<'a> {
    f: &'a FlatRun,
    json: bool,
    log_z: f64,
    written: usize,
}

impl<'a> PartitionSamples<'a> {
    /// A stream of partitions of `f` (JSON with `json`).
    ///
    /// # Errors
    ///
    /// A posterior without log Z.
    pub fn new(f: &'a FlatRun, json: bool) -> Result<PartitionSamples<'a>> {
        let log_z = if json { 0.0 } else { f.post.log_z()? };
        Ok(PartitionSamples {
            f,
            json,
            log_z,
            written: 0,
        })
    }

    /// What comes before the first partition.
    pub fn head(&self) -> String {
        if self.json {
            format!("{{\"n\":{},\"samples\":[", self.f.post.n())
        } else {
            family_line(&self.f.post)
        }
    }

    /// The text of the next partition, after its separator.
    ///
    /// # Errors
    ///
    /// None in practice (serialising indices).
    pub fn item(&mut self, p: &Partition) -> Result<String> {
        let first = self.written == 0;
        self.written += 1;
        if self.json {
            let sep = if first { "" } else { "," };
            let text = serde_json::to_string(p).map_err(|e| {
                crate::Error::parameter(format!("cannot write the result as JSON: {e}"))
            })?;
            return Ok(format!("{sep}{text}"));
        }
        let log_p = crate::engines::partition_log_energy(&self.f.energy, p) - self.log_z;
        Ok(format!(
            "{}   log P = {log_p:.6}\n",
            partition(p, &|i| self.f.label(i))
        ))
    }

    /// What comes after the last partition.
    ///
    /// # Errors
    ///
    /// None in practice (see [`flat_json`]).
    pub fn foot(&self) -> Result<String> {
        if !self.json {
            return Ok(String::new());
        }
        // {"n": .., "samples": [..]} and the family's counts, as serde
        // writes them.
        Ok(json_samples_foot(&flat_json(
            serde_json::json!({}),
            self.f,
        )?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Matrix, Weights};

    fn weights(n: usize) -> NamedWeights {
        let rows = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| {
                        if i == j {
                            0.0
                        } else {
                            1.0 - (i + j) as f64 / n as f64
                        }
                    })
                    .collect()
            })
            .collect();
        let w = Weights::from_matrix(&Matrix::from_rows(rows).unwrap()).unwrap();
        NamedWeights {
            data: Pairwise::Weights(w),
            names: Some((0..n).map(|i| format!("p{i}")).collect()),
        }
    }

    fn trees() -> Vec<Tree> {
        ["[[0,1],[2,3]]", "[[[0,2],1],3]", "[0,[1,[2,3]]]"]
            .iter()
            .map(|t| Tree::parse(t).unwrap())
            .collect()
    }

    /// Every sample format, streamed, is the whole output of its kind: JSON
    /// that parses with every tree and the tail's fields, a JSON array of
    /// linkage matrices, CSV matrices separated by one empty line, one
    /// Newick line per tree.
    #[test]
    fn a_sample_stream_is_one_document_of_its_format() {
        let w = weights(4);
        let stream = |format: Format| {
            let tail = r#"{"names":["p0","p1","p2","p3"]}"#.to_string();
            let on = Printer {
                weights: &w,
                model: ModelName::Hcc,
                beta: 1.0,
                heights: Heights::Cost,
            };
            let mut s = Samples::new(format, on, 0.0, tail);
            let mut text = s.head();
            for t in trees() {
                text += &s.item(t).unwrap();
            }
            text + &s.foot()
        };
        let json: serde_json::Value = serde_json::from_str(&stream(Format::Json)).unwrap();
        assert_eq!(json["n"], 4);
        assert_eq!(json["samples"].as_array().unwrap().len(), 3);
        assert_eq!(json["names"][3], "p3");
        let linkage: Vec<Vec<[f64; 4]>> =
            serde_json::from_str(&stream(Format::Tree(TreeFormat::Linkage))).unwrap();
        assert_eq!(linkage.len(), 3);
        assert!(linkage.iter().all(|m| m.len() == 3));
        let csv = stream(Format::Tree(TreeFormat::LinkageCsv));
        let blocks: Vec<&str> = csv.trim_end().split("\n\n").collect();
        assert_eq!(blocks.len(), 3);
        assert!(blocks.iter().all(|b| b.lines().count() == 3));
        let newick = stream(Format::Tree(TreeFormat::Newick));
        assert_eq!(newick.lines().count(), 3);
        assert!(newick.lines().all(|l| l.ends_with(';') && l.contains("p3")));
        let text = stream(Format::Text);
        assert_eq!(text.lines().count(), 3);
        assert!(text.lines().all(|l| l.contains("log P = ")));
    }

    /// A scored tree's cost is the sum of its drawn split costs, and its log
    /// potential is -β times the cost.
    #[test]
    fn a_scored_tree_is_the_sum_of_its_splits() {
        let w = weights(4);
        for t in trees() {
            let s = scored(ModelName::Hcc, &w, 2.5, t.clone()).unwrap();
            let model = CostModel::build(ModelName::Hcc, w.view(), 1.0).unwrap();
            let mut total = 0.0;
            crate::with_cost_model!(model, |m| {
                fn walk<M: Search>(m: &M, t: &Tree, total: &mut f64) {
                    if let Tree::Node(l, r) = t {
                        *total += split_cost(m, l, r);
                        walk(m, l, total);
                        walk(m, r, total);
                    }
                }
                walk(&m, &t, &mut total)
            });
            let cost = s.cost.unwrap();
            assert!(
                (total - cost).abs() <= 1e-12 * (1.0 + cost.abs()),
                "{total} {cost}"
            );
            assert_eq!(s.log_potential, crate::report::clean(-2.5 * cost));
        }
    }
}
