//! `--sparse beam|simulator`: `map`, `logz`, `marginals` and `sample` on a
//! sparse trellis (paper §3) instead of the full one, for problems too large
//! for it. The JSON output adds `"num_trees_realised"` (the exact number of
//! trees the sparse trellis realises, a decimal string) and `"sparsity"`
//! (that number over `(2N-3)!!`).

use anyhow::{Result, bail};
use clap::{Args, ValueEnum};
use serde::Serialize;
use trellis::ginkgo::{Ginkgo, Jet, LeafOrdering, SparseJet, beam_trees, simulator_trees};
use trellis::sparse::{SparseInference, SparseTrellis};
use trellis::{Tree, set_points};

use crate::batch::per_jet;
use crate::commands::{
    ClusterJson, LogzJson, SamplesJson, TreeJson, to_json, variant, weights_tree_json,
    weights_tree_output,
};
use crate::input::{Input, load};
use crate::{ModelArgs, with_cost_model};

/// How a sparse trellis is built.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SparseKind {
    /// The clusters of the best distinct final beams of beam search on each problem.
    Beam,
    /// Jets: the clusters of Ginkgo simulator trees with the jet's number of leaves and
    /// parameters (its rates, cut, mass and momentum), matched to its leaves by --ordering.
    Simulator,
}

/// Orders matching a simulated tree's leaves to a jet's.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderingKind {
    /// Increasing |p| (the paper's default).
    Momentum,
    /// Random (seeded by --sparse-seed).
    Random,
    /// As given (the simulator's own order).
    Given,
}

/// The flags of the sparse trellis, shared by `map`, `logz` and `sample`.
#[derive(Args, Debug)]
pub struct SparseArgs {
    /// Use a sparse trellis built from a sample of trees instead of the full trellis
    /// (approximate; for problems too large for the full one).
    #[arg(long, value_enum)]
    pub sparse: Option<SparseKind>,
    /// Number of input trees of the sparse trellis [default: 100].
    #[arg(long, value_name = "K", requires = "sparse")]
    pub trees: Option<usize>,
    /// With --sparse simulator: how simulated leaves are matched to the jet's
    /// [default: momentum].
    #[arg(long, value_enum, requires = "sparse")]
    pub ordering: Option<OrderingKind>,
    /// Seed of the simulator trees and of random orderings [default: 0].
    #[arg(long, value_name = "S", requires = "sparse")]
    pub sparse_seed: Option<u64>,
}

/// A result with the sparse trellis's counts.
#[derive(Serialize)]
struct WithSparsity<T> {
    #[serde(flatten)]
    result: T,
    num_trees_realised: String,
    sparsity: f64,
}

fn with_sparsity<T>(result: T, trellis: &SparseTrellis) -> WithSparsity<T> {
    WithSparsity {
        result,
        num_trees_realised: trellis.num_trees_realised().to_string(),
        sparsity: trellis.sparsity(),
    }
}

impl SparseArgs {
    fn trees(&self) -> Result<usize> {
        match self.trees {
            Some(0) => bail!("--trees must be at least 1"),
            Some(k) => Ok(k),
            None => Ok(100),
        }
    }

    fn ordering(&self) -> LeafOrdering {
        match self.ordering.unwrap_or(OrderingKind::Momentum) {
            OrderingKind::Momentum => LeafOrdering::Momentum,
            OrderingKind::Random => LeafOrdering::Random(self.sparse_seed.unwrap_or(0)),
            OrderingKind::Given => LeafOrdering::Given,
        }
    }

    /// The sparse trellis of one jet.
    fn jet(&self, jet: &Jet, args: &ModelArgs, index: usize) -> Result<SparseJet> {
        let v = variant(args);
        let k = self.trees()?;
        match self.sparse.expect("--sparse") {
            SparseKind::Beam => {
                let trees = beam_trees(&Ginkgo::new(jet, v), k)?;
                Ok(SparseJet::new(jet, v, &trees, LeafOrdering::Given)?)
            }
            SparseKind::Simulator => {
                let seed = trellis::random::stream_seed(self.sparse_seed.unwrap_or(0), index);
                let trees = simulator_trees(jet, k, self.ordering(), seed)?;
                Ok(SparseJet::new(jet, v, &trees, self.ordering())?)
            }
        }
    }

    /// The sparse trellis of a weight matrix (beam search only) and the
    /// inference on it of the model at `beta`.
    fn weights(
        &self,
        args: &ModelArgs,
        weights: &trellis::Weights,
        beta: f64,
    ) -> Result<(SparseTrellis, SparseInference)> {
        if self.sparse == Some(SparseKind::Simulator) {
            bail!(
                "--sparse simulator needs jets (--jets); use --sparse beam for weights and points"
            );
        }
        if self.ordering.is_some() {
            bail!("--ordering applies to --sparse simulator");
        }
        if weights.n() > trellis::sparse::MAX_SPARSE_POINTS {
            bail!(
                "{} points is too many for a sparse trellis, which supports at most {}",
                weights.n(),
                trellis::sparse::MAX_SPARSE_POINTS
            );
        }
        let trees = with_cost_model!(args.model, weights, 1.0, |m| beam_trees(&m, self.trees()?)?);
        let trellis = SparseTrellis::from_trees(weights.n(), &trees)?;
        let inference = with_cost_model!(args.model, weights, beta, |m| trellis.infer(&m)?);
        Ok((trellis, inference))
    }
}

/// Runs `f` on the sparse inference of every problem of the input.
fn run<T: Serialize + Send>(
    args: &ModelArgs,
    sparse: &SparseArgs,
    beta_for_weights: f64,
    jet_result: impl Fn(&SparseJet, &SparseInference, usize) -> Result<T> + Sync,
    weights_result: impl FnOnce(&trellis::Weights, &SparseTrellis, &SparseInference) -> Result<String>,
) -> Result<String> {
    match load(args, None)? {
        Input::Jets(file) => per_jet(
            &file,
            false,
            |_| 1,
            |index, jet| {
                let sj = sparse.jet(jet, args, index)?;
                let inf = sj.trellis.infer(&sj.model)?;
                Ok(with_sparsity(jet_result(&sj, &inf, index)?, &sj.trellis))
            },
        ),
        Input::Weights(weights) => {
            let (trellis, inf) = sparse.weights(args, &weights, beta_for_weights)?;
            weights_result(&weights, &trellis, &inf)
        }
    }
}

fn summary_line(trellis: &SparseTrellis) -> String {
    format!(
        "sparse trellis: {} clusters, {} splits, {} trees realised (sparsity {:.3e})\n",
        trellis.num_vertices(),
        trellis.num_splits(),
        trellis.num_trees_realised(),
        trellis.sparsity()
    )
}

pub fn map(args: &ModelArgs, sparse: &SparseArgs, json: bool, newick: bool) -> Result<String> {
    run(
        args,
        sparse,
        1.0,
        |sj, inf, _| {
            let map = inf.map();
            Ok(TreeJson {
                n: sj.order.len(),
                log_potential: map.log_potential,
                cost: None,
                tree: sj.to_jet_leaves(&map.tree),
            })
        },
        |weights, trellis, inf| {
            let tree = inf.map().tree.canonical();
            if json {
                to_json(&with_sparsity(
                    weights_tree_json(args, weights, tree)?,
                    trellis,
                ))
            } else if newick {
                Ok(tree.to_newick() + "\n")
            } else {
                Ok(summary_line(trellis)
                    + &weights_tree_output(
                        args,
                        weights,
                        tree,
                        "Sparse-trellis MAP hierarchy",
                        false,
                        false,
                    )?)
            }
        },
    )
}

pub fn logz(args: &ModelArgs, sparse: &SparseArgs, json: bool) -> Result<String> {
    run(
        args,
        sparse,
        args.beta,
        |sj, inf, _| {
            Ok(LogzJson {
                n: sj.order.len(),
                log_z: inf.log_z(),
            })
        },
        |weights, trellis, inf| {
            let out = LogzJson {
                n: weights.n(),
                log_z: inf.log_z(),
            };
            if json {
                to_json(&with_sparsity(out, trellis))
            } else {
                Ok(
                    format!("log Z = {:.10} over the realised trees\n", out.log_z)
                        + &summary_line(trellis),
                )
            }
        },
    )
}

pub fn sample(
    args: &ModelArgs,
    sparse: &SparseArgs,
    k: usize,
    seed: u64,
    json: bool,
    newick: bool,
) -> Result<String> {
    run(
        args,
        sparse,
        args.beta,
        |sj, inf, index| {
            Ok(SamplesJson {
                n: sj.order.len(),
                samples: inf
                    .samples(k, trellis::random::stream_seed(seed, index))
                    .iter()
                    .map(|t| sj.to_jet_leaves(t))
                    .collect(),
            })
        },
        |weights, trellis, inf| {
            let samples: Vec<Tree> = inf
                .samples(k, seed)
                .into_iter()
                .map(Tree::canonical)
                .collect();
            if json {
                to_json(&with_sparsity(
                    SamplesJson {
                        n: weights.n(),
                        samples,
                    },
                    trellis,
                ))
            } else if newick {
                Ok(samples.iter().map(|t| t.to_newick() + "\n").collect())
            } else {
                Ok(summary_line(trellis)
                    + &samples.iter().map(|t| format!("{t}\n")).collect::<String>())
            }
        },
    )
}

/// The marginals of the vertices of a sparse trellis, as `marginals` prints them.
#[derive(Serialize)]
struct SparseMarginalsJson {
    n: usize,
    log_z: f64,
    clusters: Vec<ClusterJson>,
}

fn marginals_json(
    n: usize,
    inf: &SparseInference,
    min_p: f64,
    leaf: impl Fn(usize) -> usize,
) -> SparseMarginalsJson {
    SparseMarginalsJson {
        n,
        log_z: inf.log_z(),
        clusters: inf
            .marginals()
            .clusters(min_p)
            .into_iter()
            .map(|(c, p)| {
                let mut members: Vec<usize> = set_points(c).map(&leaf).collect();
                members.sort_unstable();
                ClusterJson { members, p }
            })
            .collect(),
    }
}

pub fn marginals(
    args: &ModelArgs,
    sparse: &SparseArgs,
    min_p: f64,
    top: usize,
    json: bool,
) -> Result<String> {
    run(
        args,
        sparse,
        args.beta,
        |sj, inf, _| Ok(marginals_json(sj.order.len(), inf, min_p, |r| sj.order[r])),
        |weights, trellis, inf| {
            let out = marginals_json(weights.n(), inf, min_p, |i| i);
            if json {
                return to_json(&with_sparsity(out, trellis));
            }
            let mut s = format!(
                "log Z = {:.10} over the realised trees\n{}{} clusters of the sparse trellis have \
                 p > 0; the {} most probable:\n",
                out.log_z,
                summary_line(trellis),
                out.clusters.len(),
                top.min(out.clusters.len())
            );
            for c in out.clusters.iter().take(top) {
                let names: Vec<String> = c.members.iter().map(usize::to_string).collect();
                s += &format!("  {:.6}  {{{}}}\n", c.p, names.join(", "));
            }
            Ok(s)
        },
    )
}
