//! The result shapes every door prints: one serde type per JSON result
//! (a scored tree, log Z, the cluster marginals, `infer`'s three answers)
//! and the decorations they share (the points' names, a sparse trellis's
//! counts, a jet's id, a linkage matrix), plus the number formats of
//! readable output.
//!
//! The `trellis` command prints these types with `serde_json`; the web app
//! and the Python package can produce the same objects from the same
//! library calls, so a field means the same thing at every door. Field
//! names and their order are a contract (the command's `--json` outputs
//! document them): decorations flatten into the result they wrap and add
//! their fields after its own, and absent optional fields are omitted, not
//! `null`.
//!
//! Every builder is `O(size of the result)`; none computes anything the
//! library has not already computed.

use serde::Serialize;

use crate::posterior::Sparsity as SparseCounts;
use crate::{Mask, Tree};

/// `-0.0` as `0.0` (JSON would print `-0.0`); other values unchanged.
pub fn clean(x: f64) -> f64 {
    x + 0.0
}

/// A value as one line of compact JSON (with its newline).
///
/// # Errors
///
/// A value that serde cannot write (a map with non-string keys).
pub fn to_json<T: Serialize>(value: &T) -> crate::Result<String> {
    serde_json::to_string(value)
        .map(|s| s + "\n")
        .map_err(|e| crate::Error::parameter(format!("cannot write the result as JSON: {e}")))
}

/// A number for a message: plain when that is short (`0.5`, `16`, `900`),
/// else in scientific notation (`1e308`), never a 309-digit integer.
pub fn number(x: f64) -> String {
    crate::error::number(x)
}

/// A large integer (given by its decimal digits) in scientific notation
/// with three significant digits, e.g. `6.32e21` (truncated, not rounded);
/// at most six digits are written as they are.
pub fn approx(x: &impl std::fmt::Display) -> String {
    let digits = x.to_string();
    if digits.len() <= 6 {
        return digits;
    }
    format!("{}.{}e{}", &digits[..1], &digits[1..3], digits.len() - 1)
}

/// A share given by its `log10` (e.g. a sparse trellis's sparsity index):
/// `1.234e-5`, or `10^-2570.3` where a float would underflow.
pub fn share(log10: f64) -> String {
    if log10 >= -300.0 {
        format!("{:.3e}", 10f64.powf(log10))
    } else {
        format!("10^{log10:.1}")
    }
}

/// A tree with its value: the result of `map` and `score`.
#[derive(Serialize, Debug, Clone)]
pub struct TreeJson {
    /// The number of points.
    pub n: usize,
    /// `log φ(tree)`, the sum of its splits' log-potentials.
    pub log_potential: f64,
    /// The tree's total cost (cost models only; does not depend on β).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// The tree.
    pub tree: Tree,
}

impl TreeJson {
    /// A tree over `n` points with its log-potential and no cost (the
    /// Ginkgo likelihood's trees).
    pub fn unscored(n: usize, t: crate::ScoredTree) -> TreeJson {
        TreeJson {
            n,
            log_potential: t.log_potential,
            cost: None,
            tree: t.tree,
        }
    }
}

/// A cluster (its points, ascending) and its marginal probability, as in
/// every list of cluster marginals.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct ClusterJson {
    /// The cluster's points (0-based indices, ascending).
    pub members: Vec<usize>,
    /// Its marginal probability.
    pub p: f64,
}

impl ClusterJson {
    /// The cluster of a dense trellis's mask.
    pub fn of(mask: Mask, p: f64) -> ClusterJson {
        ClusterJson {
            members: crate::members(mask).collect(),
            p,
        }
    }

    /// The clusters of a list of `(members, p)` pairs (as
    /// [`Posterior::cluster_marginals`](crate::posterior::Posterior::cluster_marginals)
    /// gives them).
    pub fn list(pairs: Vec<(Vec<usize>, f64)>) -> Vec<ClusterJson> {
        pairs
            .into_iter()
            .map(|(members, p)| ClusterJson { members, p })
            .collect()
    }
}

/// Log Z and every listed cluster marginal (and optionally that of a
/// sub-hierarchy): the result of `marginals`.
#[derive(Serialize, Debug, Clone)]
pub struct MarginalsJson {
    /// The number of points.
    pub n: usize,
    /// The log partition function.
    pub log_z: f64,
    /// The listed clusters, most probable first.
    pub clusters: Vec<ClusterJson>,
    /// The marginal of the asked sub-hierarchy, when one was asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subtree_p: Option<f64>,
}

/// The MAP tree of `infer` (with its cost for the cost models).
#[derive(Serialize, Debug, Clone)]
pub struct MapJson {
    /// The tree.
    pub tree: Tree,
    /// Its log-potential.
    pub log_potential: f64,
    /// Its cost (cost models only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
}

impl From<TreeJson> for MapJson {
    fn from(t: TreeJson) -> MapJson {
        MapJson {
            tree: t.tree,
            log_potential: t.log_potential,
            cost: t.cost,
        }
    }
}

impl From<crate::ScoredTree> for MapJson {
    fn from(t: crate::ScoredTree) -> MapJson {
        MapJson {
            tree: t.tree,
            log_potential: t.log_potential,
            cost: None,
        }
    }
}

/// MAP, log Z and the cluster marginals of one trellis: the result of
/// `infer`.
#[derive(Serialize, Debug, Clone)]
pub struct InferJson {
    /// The number of points.
    pub n: usize,
    /// The log partition function.
    pub log_z: f64,
    /// The MAP tree.
    pub map: MapJson,
    /// The listed clusters, most probable first.
    pub clusters: Vec<ClusterJson>,
}

/// The JSON fields of a sparse trellis's share of all hierarchies or
/// partitions: `"sparsity"` (0 where the float underflows) and
/// `"log10_sparsity"` (finite at any size).
#[derive(Serialize, Debug, Clone, Copy)]
pub struct Sparsity {
    sparsity: f64,
    log10_sparsity: f64,
}

impl Sparsity {
    /// The share whose `log10` is `log10`.
    pub fn of(log10: f64) -> Sparsity {
        Sparsity {
            sparsity: 10f64.powf(log10),
            log10_sparsity: log10,
        }
    }
}

/// A result with the counts of the sparse trellis it came from, if any:
/// `"num_trees_realised"` (a decimal string), `"sparsity"` and
/// `"log10_sparsity"` after the result's own fields.
#[derive(Serialize)]
pub struct WithSparsity<T> {
    #[serde(flatten)]
    result: T,
    #[serde(skip_serializing_if = "Option::is_none")]
    num_trees_realised: Option<String>,
    #[serde(flatten)]
    share: Option<Sparsity>,
}

/// `result` with the counts of a sparse trellis (`None`: the dense
/// trellis, nothing added).
pub fn with_sparsity<T>(result: T, counts: Option<SparseCounts>) -> WithSparsity<T> {
    WithSparsity {
        result,
        num_trees_realised: counts.as_ref().map(|x| x.trees_realised.to_string()),
        share: counts.map(|x| Sparsity::of(x.log10_sparsity)),
    }
}

/// A result and the points' names, if any: a `"names"` array after the
/// result's fields when the points have names.
#[derive(Serialize)]
pub struct Named<'a, T> {
    #[serde(flatten)]
    result: T,
    #[serde(skip_serializing_if = "Option::is_none")]
    names: Option<&'a [String]>,
}

/// `result` with the points' names (`None`: unchanged).
pub fn with_names<T>(result: T, names: Option<&[String]>) -> Named<'_, T> {
    Named { result, names }
}

/// A result with its tree's SciPy linkage matrix, when one was asked: a
/// `"linkage"` field after the result's own.
#[derive(Serialize)]
pub struct WithLinkage<T> {
    /// The result.
    #[serde(flatten)]
    pub result: T,
    /// The linkage matrix (`[left, right, height, size]` rows), if asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub linkage: Option<Vec<[f64; 4]>>,
}

/// An A* search's result: the problem's size, the search's outcome (its
/// fields flattened) and the name of the heuristic it used.
#[derive(Serialize)]
pub struct SearchJson {
    /// The number of points.
    pub n: usize,
    /// The best tree, its cost and the search's work and memory.
    #[serde(flatten)]
    pub outcome: crate::astar::Outcome,
    /// The heuristic (see [`crate::astar::heuristic_name`]).
    pub heuristic: &'static str,
}

impl SearchJson {
    /// The result of a search over `n` points (`-0.0` written as `0.0`).
    pub fn new(n: usize, mut outcome: crate::astar::Outcome, heuristic: &'static str) -> Self {
        outcome.best.log_potential = clean(outcome.best.log_potential);
        outcome.cost = clean(outcome.cost);
        SearchJson {
            n,
            outcome,
            heuristic,
        }
    }
}

/// A flat result with the family's counts when it came from a family of
/// partitions (`"num_partitions_realised"`, a decimal string, `"sparsity"`,
/// `"log10_sparsity"`), then the points' `"names"` when they have names.
#[derive(Serialize)]
pub struct WithFamily<'a, T> {
    #[serde(flatten)]
    result: T,
    #[serde(skip_serializing_if = "Option::is_none")]
    num_partitions_realised: Option<String>,
    #[serde(flatten)]
    share: Option<Sparsity>,
    #[serde(skip_serializing_if = "Option::is_none")]
    names: Option<&'a [String]>,
}

/// `result` with a family's counts (`None`: every partition) and names.
pub fn with_family<'a, T>(
    result: T,
    family: Option<crate::posterior::Family>,
    names: Option<&'a [String]>,
) -> WithFamily<'a, T> {
    WithFamily {
        result,
        num_partitions_realised: family.as_ref().map(|x| x.partitions_realised.to_string()),
        share: family.map(|x| Sparsity::of(x.log10_share)),
        names,
    }
}

/// How point `i` is shown in readable output: its name when the points have
/// names, else its index.
pub fn label(names: Option<&[String]>, i: usize) -> String {
    match names.and_then(|v| v.get(i)) {
        Some(name) => name.clone(),
        None => i.to_string(),
    }
}

/// One line of a per-jet output: the jet's `"id"`, then the fields of the
/// single-problem result.
#[derive(Serialize)]
pub struct JetLine<'a, T> {
    /// The jet's id.
    pub id: &'a str,
    /// Its result.
    #[serde(flatten)]
    pub result: T,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json<T: Serialize>(v: &T) -> String {
        serde_json::to_string(v).unwrap()
    }

    #[test]
    fn decorations_add_their_fields_after_the_result() {
        let t = TreeJson {
            n: 2,
            log_potential: clean(-0.0),
            cost: None,
            tree: Tree::node(Tree::Leaf(0), Tree::Leaf(1)),
        };
        let names = vec!["a".to_string(), "b".to_string()];
        assert_eq!(
            json(&with_names(t.clone(), Some(&names))),
            r#"{"n":2,"log_potential":0.0,"tree":[0,1],"names":["a","b"]}"#
        );
        assert_eq!(
            json(&with_names(with_sparsity(t.clone(), None), None)),
            r#"{"n":2,"log_potential":0.0,"tree":[0,1]}"#
        );
        let line = JetLine {
            id: "j7",
            result: WithLinkage {
                result: t,
                linkage: Some(vec![[0.0, 1.0, 2.5, 2.0]]),
            },
        };
        assert_eq!(
            json(&line),
            r#"{"id":"j7","n":2,"log_potential":0.0,"tree":[0,1],"linkage":[[0.0,1.0,2.5,2.0]]}"#
        );
    }

    #[test]
    fn sparse_counts_are_a_string_and_a_share() {
        let counts = SparseCounts {
            clusters: 5,
            splits: 4,
            trees_realised: 3u32.into(),
            log10_sparsity: -1.0,
        };
        let v: serde_json::Value = serde_json::from_str(&json(&with_sparsity(
            serde_json::json!({"n": 3}),
            Some(counts),
        )))
        .unwrap();
        assert_eq!(v["num_trees_realised"], "3");
        assert!((v["sparsity"].as_f64().unwrap() - 0.1).abs() < 1e-15);
        assert_eq!(v["log10_sparsity"], -1.0);
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!(number(0.5), "0.5");
        assert_eq!(number(1e308), "1e308");
        assert_eq!(approx(&123456u32), "123456");
        assert_eq!(approx(&6_324_135_u64), "6.32e6");
        assert_eq!(share(-2.0), "1.000e-2");
        assert_eq!(share(-2570.31), "10^-2570.3");
        let c = ClusterJson::of(0b101, 0.25);
        assert_eq!(c.members, vec![0, 2]);
        assert_eq!(ClusterJson::list(vec![(vec![0, 2], 0.25)]), vec![c]);
    }
}

/// The result of `summary`: the maximum-clade-credibility tree or a
/// consensus tree, with every cluster's exact marginal.
#[derive(Serialize, Debug, Clone)]
pub struct SummaryJson {
    /// The number of points.
    pub n: usize,
    /// `"mcc"` or `"consensus"`.
    pub kind: &'static str,
    /// The tree (nested lists; a consensus may multifurcate).
    pub tree: crate::summary::SupportTree,
    /// Its clusters with their marginals, most probable first.
    pub clusters: Vec<crate::summary::Clade>,
    /// `Σ log P(C)` over the MCC tree's clusters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_credibility: Option<f64>,
}

impl SummaryJson {
    /// The result of a summary tree of `kind`.
    pub fn of(kind: &'static str, tree: crate::summary::SupportTree) -> SummaryJson {
        SummaryJson {
            n: tree.n(),
            kind,
            clusters: tree.clades().to_vec(),
            log_credibility: tree.log_credibility(),
            tree,
        }
    }
}
