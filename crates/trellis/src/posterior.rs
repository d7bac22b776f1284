//! One posterior over binary hierarchies, whatever the model and the engine:
//! the type every door (the `trellis` command, the Python package, the web
//! app) holds and asks for `log Z`, the MAP tree, cluster marginals, support
//! values and samples.
//!
//! A [`Posterior`] is built once, by
//!
//! - [`Posterior::dense`]: the dense trellis over all `(2n-3)!!` trees. With
//!   [`Need::All`] it answers everything and runs the outside pass (every
//!   cluster marginal) on the first question that needs it: for
//!   hierarchical correlation clustering from the weight pass's 8-byte
//!   table and the MAP tree of its own max-plus pass (at most 16 bytes per
//!   subset at any time, under triplets too), for other models from the
//!   whole trellis (the inside pass's tables); with [`Need::LogZ`] or
//!   [`Need::Map`] it runs the single pass that computes that one quantity
//!   (`Trellis::log_z_only`, `Trellis::map_only`:
//!   less memory, and the MAP pass skips partition-function terms) and
//!   answers nothing else; with [`Need::Samples`] `log Z` and exact samples
//!   from the weight pass's single 8-byte table where the model has it
//!   (hierarchical correlation clustering: `WeightTable`), else the whole
//!   trellis; with [`Need::Marginals`] those and every cluster marginal
//!   (support values, sub-hierarchies, the MCC and consensus trees) from
//!   that table and the blocked outside pass's, 16 bytes per subset, but no
//!   MAP tree; with [`Need::Everything`] those and the MAP tree of its own
//!   max-plus pass (what `trellis infer` prints);
//! - [`Posterior::sparse`]: a sparse trellis (a family of trees or clusters),
//!   the exact posterior restricted to the trees it realises, optionally
//!   over a permutation of the points (jets order their leaves).
//!
//! and erases the model's type: the doors hold one `Posterior` for
//! hierarchical correlation clustering, Dasgupta's cost, the linkage
//! potentials or the Ginkgo likelihood alike. Questions that need the outside
//! pass take [`Options`] (a memory limit, a progress callback that can
//! cancel); the pass runs once and is kept.
//!
//! | question | dense | sparse | cost |
//! |---|---|---|---|
//! | [`log_z`](Posterior::log_z), [`map`](Posterior::map) | kept from the inside pass | kept | `O(1)` |
//! | [`cluster_marginals`](Posterior::cluster_marginals), [`support`](Posterior::support) | one outside pass, `O(3^n)`, kept | `O(splits)`, kept | per cluster `O(1)` |
//! | [`subtree`](Posterior::subtree) | outside pass, then `O(size)` | not available | |
//! | [`mcc_tree`](Posterior::mcc_tree) | outside pass, then one max-plus pass `O(3^n)` | `O(splits)` | |
//! | [`consensus_tree`](Posterior::consensus_tree) | outside pass, then `O(2^n)` | `O(clusters)` | |
//! | [`each_sample`](Posterior::each_sample) | `O(Σ 2^{|S|})` per tree, cached | `O(splits)` per tree | |
//!
//! [`PartitionPosterior`] is the same for flat clusterings: the flat trellis
//! over all partitions (again with [`Need`]), the cuts of a tree, or the
//! partitions made of a family of clusters.

use std::ops::ControlFlow;
use std::sync::OnceLock;

use num_bigint::BigUint;

use crate::base::run::Options;
use crate::base::set::{Mask, SetRepr, mask_of};
use crate::base::tree::{ScoredTree, Tree};
use crate::dendrogram::Dendrogram;
use crate::dense::{Marginals, Trellis, WeightTable};
use crate::error::{Error, Result};
use crate::flat::{FlatMarginals, FlatTrellis, Partition, ScoredPartition, tree_partitions};
use crate::models::{Energy, Search, tree_cost};
use crate::sparse::{SparseInference, SparseMarginals, SparseTrellis};
use crate::summary::{BinderPartition, SupportTree, nontrivial};

/// What a dense posterior computes up front (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// `log Z` alone (one pass, no MAP, no marginals, no samples).
    LogZ,
    /// The MAP tree alone (one max-product pass).
    Map,
    /// `log Z`, the MAP tree, samples, and the marginals on first use. For a
    /// separable model with a constant factor whose weights fit the blocked
    /// passes' windows: the weight pass's table (`log Z`, samples) and the
    /// MAP tree of its own max-plus pass up front, the outside pass on the
    /// first question about marginals (`WeightTable::marginals`), at most
    /// 16 bytes per subset at any time for a pair-form model
    /// (`memory::pass_marginals_bytes`, checked up front); else the whole
    /// trellis ([`Trellis`], its outside pass on first use).
    All,
    /// `log Z` and exact samples: one 8-byte weight per subset for a
    /// separable model with a constant factor (hierarchical correlation
    /// clustering, under triplets too), else as [`Need::All`]. Flat
    /// posteriors take it as [`Need::All`].
    Samples,
    /// What [`Need::Samples`] gives and every cluster marginal (support
    /// values, sub-hierarchies, the MCC and consensus trees), but not the
    /// MAP tree: the blocked inside and outside passes at two 8-byte
    /// entries per subset where the model has the separable form with a
    /// constant factor and its weights fit the passes' windows
    /// (`WeightTable::with_marginals`), else as [`Need::All`]. Flat
    /// posteriors take it as [`Need::All`].
    Marginals,
    /// Everything, computed up front: [`Need::All`] with its outside pass run
    /// at once (the weight pass, the MAP tree from its own max-plus pass
    /// beside the weights, then the outside pass beside them: 16 bytes per
    /// subset at any time for a pair-form model). What `trellis infer`
    /// prints.
    Everything,
}

/// The share of the trees a sparse trellis realises.
#[derive(Clone, Debug, PartialEq)]
pub struct Sparsity {
    /// The clusters (vertices) of the sparse trellis.
    pub clusters: usize,
    /// Its splits.
    pub splits: usize,
    /// The trees it realises, exactly.
    pub trees_realised: BigUint,
    /// `log10` of `trees_realised / (2n-3)!!` (finite at any size).
    pub log10_sparsity: f64,
}

/// One posterior over binary hierarchies (see the module docs).
pub struct Posterior {
    inner: Box<dyn Engine>,
}

impl std::fmt::Debug for Posterior {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Posterior")
            .field("n", &self.n())
            .field("kind", &self.inner.kind())
            .finish_non_exhaustive()
    }
}

/// What a question cannot get from a posterior that did not compute it.
fn missing(what: &str, kind: &str) -> Error {
    Error::parameter(format!("{what} is not available from {kind}"))
}

impl Posterior {
    /// The dense trellis of `model` (at most [`MAX_POINTS`](crate::MAX_POINTS)
    /// points, within `options.memory_limit`), computing what `need` says.
    ///
    /// # Errors
    ///
    /// Those of [`Trellis::with_options`], [`Trellis::log_z_only`] and
    /// [`Trellis::map_only`]: too many points, too little memory, a
    /// cancelled or timed-out pass, a model that gives every tree zero
    /// potential.
    pub fn dense<M>(model: M, need: Need, options: &Options<'_>) -> Result<Posterior>
    where
        M: Search + Send + Sync + 'static,
    {
        let n = model.num_points();
        let inner: Box<dyn Engine> = match need {
            Need::Samples | Need::Marginals => {
                let table = if need == Need::Samples {
                    WeightTable::new(&model, options)?
                } else {
                    WeightTable::with_marginals(&model, options)?
                };
                match table {
                    Some(table) => Box::new(table),
                    None => Box::new(Dense {
                        trellis: Trellis::with_options(model, options)?,
                        marginals: OnceLock::new(),
                    }),
                }
            }
            // The weight pass, the MAP pass beside its table, then (now
            // for `Everything`, on first use for `All`) the outside pass
            // beside it: two 8-byte tables at any time.
            Need::All | Need::Everything => {
                match WeightTable::admitting_marginals(&model, options)? {
                    Some(table) => {
                        let map = Trellis::map_only(&model, options)?;
                        let cost = tree_cost(&model, &map.tree)?;
                        if need == Need::Everything {
                            table.marginals(&model, options)?;
                        }
                        Box::new(Passes {
                            table,
                            map: (map, cost),
                            model,
                        })
                    }
                    None => Box::new(Dense {
                        trellis: Trellis::with_options(model, options)?,
                        marginals: OnceLock::new(),
                    }),
                }
            }
            Need::LogZ => Box::new(Single::log_z(n, Trellis::log_z_only(&model, options)?)),
            Need::Map => {
                let map = Trellis::map_only(&model, options)?;
                let cost = tree_cost(&model, &map.tree)?;
                Box::new(Single::map(n, (map, cost)))
            }
        };
        Ok(Posterior { inner })
    }

    /// The posterior of `model` restricted to the trees of a sparse trellis.
    /// With `order`, position `r` of the trellis is point `order[r]` (a
    /// permutation of `0..n`), and every answer is over the points.
    ///
    /// # Errors
    ///
    /// Those of [`SparseTrellis::infer`], and a bad `order`.
    pub fn sparse<M, S>(
        trellis: SparseTrellis<S>,
        model: &M,
        order: Option<Vec<usize>>,
    ) -> Result<Posterior>
    where
        M: Search + ?Sized,
        S: SetRepr + 'static,
    {
        let n = trellis.num_points();
        if let Some(o) = &order {
            let mut seen = vec![false; n];
            if o.len() != n
                || o.iter()
                    .any(|&i| i >= n || std::mem::replace(&mut seen[i], true))
            {
                return Err(Error::parameter(format!(
                    "the order of a sparse posterior must be a permutation of 0..{n}"
                )));
            }
        }
        let inference = trellis.infer(model)?;
        let map_cost = tree_cost(model, &inference.map().tree)?;
        Ok(Posterior {
            inner: Box::new(Sparse {
                trellis,
                inference,
                order,
                map_cost,
                marginals: OnceLock::new(),
            }),
        })
    }

    /// The number of points.
    pub fn n(&self) -> usize {
        self.inner.n()
    }

    /// `log Z`.
    ///
    /// # Errors
    ///
    /// A posterior built for the MAP tree alone ([`Need::Map`]).
    pub fn log_z(&self) -> Result<f64> {
        self.inner.log_z()
    }

    /// The MAP tree and its log-potential.
    ///
    /// # Errors
    ///
    /// A posterior built for `log Z` alone ([`Need::LogZ`]).
    pub fn map(&self) -> Result<ScoredTree> {
        self.inner.map().map(|(t, _)| t)
    }

    /// The model's cost of the MAP tree ([`Search::split_cost`] summed; for
    /// Gibbs models independent of β).
    ///
    /// # Errors
    ///
    /// As [`Posterior::map`].
    pub fn map_cost(&self) -> Result<f64> {
        self.inner.map().map(|(_, c)| c)
    }

    /// The number of trees the posterior is over: `(2n-3)!!` for the dense
    /// trellis, the trees realised for a sparse one.
    pub fn num_trees(&self) -> BigUint {
        match self.inner.sparsity() {
            Some(s) => s.trees_realised,
            None => crate::count::num_trees(self.n()),
        }
    }

    /// Every non-singleton proper cluster with marginal `p > 0` and
    /// `p >= min_p`, most probable first, as (sorted points, `p`).
    ///
    /// # Errors
    ///
    /// A posterior without the whole trellis, and those of the outside pass
    /// (memory, cancelling) on first use.
    pub fn cluster_marginals(
        &self,
        min_p: f64,
        options: &Options<'_>,
    ) -> Result<Vec<(Vec<usize>, f64)>> {
        self.inner.clusters(min_p, options)
    }

    /// The marginal of each of `clusters` (lists of points, in any order):
    /// the support values of a tree's clusters.
    ///
    /// # Errors
    ///
    /// As [`Posterior::cluster_marginals`], and a point out of range.
    pub fn support(&self, clusters: &[Vec<usize>], options: &Options<'_>) -> Result<Vec<f64>> {
        let n = self.n();
        if let Some(&i) = clusters.iter().flatten().find(|&&i| i >= n) {
            return Err(Error::parameter(format!(
                "point {i} is not among the {n} points"
            )));
        }
        self.inner.support(clusters, options)
    }

    /// The maximum-clade-credibility tree: the binary tree maximising the
    /// product of its clusters' exact marginals, each cluster labelled with
    /// its marginal, with its log clade credibility (see
    /// [`crate::summary`]). Dense trellis: the outside pass (kept), then one
    /// max-plus pass of the blocked kernel, `O(3^n)`; sparse trellis: among
    /// the realised trees, `O(splits)`.
    ///
    /// # Errors
    ///
    /// As [`Posterior::cluster_marginals`], and those of the max-plus pass
    /// (memory, cancelling).
    pub fn mcc_tree(&self, options: &Options<'_>) -> Result<SupportTree> {
        let n = self.n();
        let (tree, log_credibility) = self.inner.mcc(options)?;
        let tree = tree.canonical();
        let clusters = nontrivial(&tree, n);
        let support = self.inner.support(&clusters, options)?;
        SupportTree::of_binary(n, clusters, &support, log_credibility)
    }

    /// The majority-rule consensus tree at `threshold` (in `[0.5, 1]`):
    /// every cluster with marginal `> 1/2` (at 0.5) or `≥ threshold` (above),
    /// each labelled with its marginal; generally multifurcating (see
    /// [`crate::summary`]).
    ///
    /// # Errors
    ///
    /// A threshold outside `[0.5, 1]` or NaN, and as
    /// [`Posterior::cluster_marginals`].
    pub fn consensus_tree(&self, threshold: f64, options: &Options<'_>) -> Result<SupportTree> {
        crate::summary::check_threshold(threshold)?;
        let clusters = self.cluster_marginals(threshold, options)?;
        crate::summary::consensus(self.n(), clusters, threshold)
    }

    /// The probability that the hierarchy contains `tree` (over some of the
    /// points) as a subtree (dense trellis only).
    ///
    /// # Errors
    ///
    /// A sparse posterior or one without the whole trellis, an invalid tree,
    /// and those of the outside pass.
    pub fn subtree(&self, tree: &Tree, options: &Options<'_>) -> Result<f64> {
        tree.validate(self.n(), false)?;
        self.inner.subtree(tree, options)
    }

    /// Draws `k` exact samples from `seed`, handing each to `each` as it is
    /// drawn; `each` may stop the stream with [`ControlFlow::Break`]. The
    /// same seed gives the same trees. `options` carries the progress
    /// callback (stage `"sample"`) and the time limit.
    ///
    /// # Errors
    ///
    /// A posterior without the whole trellis, a cancelled or timed-out run.
    pub fn each_sample(
        &self,
        k: usize,
        seed: u64,
        options: &Options<'_>,
        each: &mut dyn FnMut(Tree) -> ControlFlow<()>,
    ) -> Result<()> {
        self.inner.each_sample(k, seed, options, each)
    }

    /// `k` exact samples from `seed`, in memory (see
    /// [`Posterior::each_sample`]).
    ///
    /// # Errors
    ///
    /// As [`Posterior::each_sample`].
    pub fn samples(&self, k: usize, seed: u64) -> Result<Vec<Tree>> {
        let mut out = Vec::new();
        self.each_sample(k, seed, &Options::default(), &mut |t| {
            out.push(t);
            ControlFlow::Continue(())
        })?;
        Ok(out)
    }

    /// For a sparse posterior, the size of its trellis and its sparsity.
    pub fn sparsity(&self) -> Option<Sparsity> {
        self.inner.sparsity()
    }

    /// `tree` (over the points) with the merge heights of its cumulative
    /// cost under the model ([`Dendrogram::by_cost`]; dense trellis only).
    ///
    /// # Errors
    ///
    /// A sparse posterior or one built for a single quantity, an invalid
    /// tree.
    pub fn dendrogram(&self, tree: Tree) -> Result<Dendrogram> {
        self.inner.dendrogram(tree)
    }
}

/// The engines behind a [`Posterior`].
trait Engine: Send + Sync {
    fn kind(&self) -> &'static str;
    fn n(&self) -> usize;
    fn log_z(&self) -> Result<f64>;
    fn map(&self) -> Result<(ScoredTree, f64)>;
    fn clusters(&self, _: f64, _: &Options<'_>) -> Result<Vec<(Vec<usize>, f64)>> {
        Err(missing("cluster marginals", self.kind()))
    }
    fn support(&self, _: &[Vec<usize>], _: &Options<'_>) -> Result<Vec<f64>> {
        Err(missing("support values", self.kind()))
    }
    fn subtree(&self, _: &Tree, _: &Options<'_>) -> Result<f64> {
        Err(missing("the probability of a sub-hierarchy", self.kind()))
    }
    /// The MCC tree and its log clade credibility.
    fn mcc(&self, _: &Options<'_>) -> Result<(Tree, f64)> {
        Err(missing("the maximum-clade-credibility tree", self.kind()))
    }
    fn each_sample(
        &self,
        k: usize,
        seed: u64,
        options: &Options<'_>,
        each: &mut dyn FnMut(Tree) -> ControlFlow<()>,
    ) -> Result<()>;
    fn sparsity(&self) -> Option<Sparsity> {
        None
    }
    fn dendrogram(&self, _: Tree) -> Result<Dendrogram> {
        Err(missing("the model's merge heights", self.kind()))
    }
}

/// The dense trellis, its marginals computed on first use.
struct Dense<M: Search> {
    trellis: Trellis<M>,
    marginals: OnceLock<Marginals<M>>,
}

impl<M: Search + Send + Sync> Dense<M> {
    fn marginals(&self, options: &Options<'_>) -> Result<&Marginals<M>> {
        if let Some(m) = self.marginals.get() {
            return Ok(m);
        }
        let m = self.trellis.marginals_with(options)?;
        Ok(self.marginals.get_or_init(|| m))
    }
}

/// Clusters by mask with their marginals as (sorted points, `p`).
fn listed(clusters: Vec<(Mask, f64)>) -> Vec<(Vec<usize>, f64)> {
    clusters
        .into_iter()
        .map(|(s, p)| (crate::members(s).collect(), p))
        .collect()
}

/// The points of a cluster as a mask of the dense trellis (at most 30
/// points, checked by [`Posterior::support`]).
fn mask(cluster: &[usize]) -> Mask {
    mask_of(cluster.iter().copied())
}

impl<M: Search + Send + Sync> Engine for Dense<M> {
    fn kind(&self) -> &'static str {
        "the dense trellis"
    }
    fn n(&self) -> usize {
        self.trellis.num_points()
    }
    fn log_z(&self) -> Result<f64> {
        Ok(self.trellis.log_z())
    }
    fn map(&self) -> Result<(ScoredTree, f64)> {
        let map = self.trellis.map().clone();
        let cost = tree_cost(self.trellis.model(), &map.tree)?;
        Ok((map, cost))
    }
    fn clusters(&self, min_p: f64, options: &Options<'_>) -> Result<Vec<(Vec<usize>, f64)>> {
        Ok(listed(self.marginals(options)?.clusters(min_p)))
    }
    fn support(&self, clusters: &[Vec<usize>], options: &Options<'_>) -> Result<Vec<f64>> {
        let m = self.marginals(options)?;
        Ok(clusters.iter().map(|c| m.p(mask(c))).collect())
    }
    fn subtree(&self, tree: &Tree, options: &Options<'_>) -> Result<f64> {
        self.marginals(options)?.subtree(tree)
    }
    fn mcc(&self, options: &Options<'_>) -> Result<(Tree, f64)> {
        let m = self.marginals(options)?;
        crate::summary::mcc_dense(self.n(), m.log_p_table(), options)
    }
    fn dendrogram(&self, tree: Tree) -> Result<Dendrogram> {
        Dendrogram::by_cost(self.trellis.model(), tree)
    }
    fn each_sample(
        &self,
        k: usize,
        seed: u64,
        options: &Options<'_>,
        each: &mut dyn FnMut(Tree) -> ControlFlow<()>,
    ) -> Result<()> {
        stoppable(each, |each| {
            self.trellis.samples_with(k, seed, options, each)
        })
    }
}

/// The weight pass's table: `log Z` and samples (see [`Need::Samples`]),
/// and with the outside pass every marginal ([`Need::Marginals`]).
impl WeightTable {
    fn log_p_or_missing(&self, what: &str) -> Result<&[f64]> {
        self.log_p_table()
            .ok_or_else(|| missing(what, Engine::kind(self)))
    }
}

impl Engine for WeightTable {
    fn kind(&self) -> &'static str {
        if self.log_p_table().is_some() {
            "a posterior built for log Z, samples and marginals (Need::Marginals)"
        } else {
            "a posterior built for log Z and samples (Need::Samples)"
        }
    }
    fn n(&self) -> usize {
        self.num_points()
    }
    fn log_z(&self) -> Result<f64> {
        Ok(WeightTable::log_z(self))
    }
    fn map(&self) -> Result<(ScoredTree, f64)> {
        Err(missing("the MAP", self.kind()))
    }
    fn clusters(&self, min_p: f64, _: &Options<'_>) -> Result<Vec<(Vec<usize>, f64)>> {
        let log_p = self.log_p_or_missing("cluster marginals")?;
        Ok(listed(crate::dense::clusters_above(self.n(), log_p, min_p)))
    }
    fn support(&self, clusters: &[Vec<usize>], _: &Options<'_>) -> Result<Vec<f64>> {
        let log_p = self.log_p_or_missing("support values")?;
        Ok(clusters
            .iter()
            .map(|c| log_p[mask(c) as usize].exp())
            .collect())
    }
    fn subtree(&self, tree: &Tree, _: &Options<'_>) -> Result<f64> {
        WeightTable::subtree(self, tree)?
            .ok_or_else(|| missing("the probability of a sub-hierarchy", self.kind()))
    }
    fn mcc(&self, options: &Options<'_>) -> Result<(Tree, f64)> {
        let log_p = self.log_p_or_missing("the maximum-clade-credibility tree")?;
        crate::summary::mcc_dense(self.n(), log_p, options)
    }
    fn each_sample(
        &self,
        k: usize,
        seed: u64,
        options: &Options<'_>,
        each: &mut dyn FnMut(Tree) -> ControlFlow<()>,
    ) -> Result<()> {
        stoppable(each, |each| self.samples_with(k, seed, options, each))
    }
}

/// [`Need::All`] and [`Need::Everything`] from the blocked passes: the
/// weight table (with its marginals, or they are computed on first use),
/// the MAP tree of the max-plus pass, and the model (for the marginals'
/// terms and merge heights).
struct Passes<M> {
    table: WeightTable,
    map: (ScoredTree, f64),
    model: M,
}

impl<M: Search + Send + Sync> Passes<M> {
    /// The table with its marginals (the outside pass on first use).
    fn with_marginals(&self, options: &Options<'_>) -> Result<&WeightTable> {
        self.table.marginals(&self.model, options)?;
        Ok(&self.table)
    }
}

impl<M: Search + Send + Sync> Engine for Passes<M> {
    fn kind(&self) -> &'static str {
        "a posterior built by the blocked passes"
    }
    fn n(&self) -> usize {
        self.table.num_points()
    }
    fn log_z(&self) -> Result<f64> {
        Ok(self.table.log_z())
    }
    fn map(&self) -> Result<(ScoredTree, f64)> {
        Ok(self.map.clone())
    }
    fn clusters(&self, min_p: f64, options: &Options<'_>) -> Result<Vec<(Vec<usize>, f64)>> {
        self.with_marginals(options)?.clusters(min_p, options)
    }
    fn support(&self, clusters: &[Vec<usize>], options: &Options<'_>) -> Result<Vec<f64>> {
        self.with_marginals(options)?.support(clusters, options)
    }
    fn subtree(&self, tree: &Tree, options: &Options<'_>) -> Result<f64> {
        Engine::subtree(self.with_marginals(options)?, tree, options)
    }
    fn mcc(&self, options: &Options<'_>) -> Result<(Tree, f64)> {
        self.with_marginals(options)?.mcc(options)
    }
    fn dendrogram(&self, tree: Tree) -> Result<Dendrogram> {
        Dendrogram::by_cost(&self.model, tree)
    }
    fn each_sample(
        &self,
        k: usize,
        seed: u64,
        options: &Options<'_>,
        each: &mut dyn FnMut(Tree) -> ControlFlow<()>,
    ) -> Result<()> {
        self.table.each_sample(k, seed, options, each)
    }
}

/// Runs a library stream whose callback returns a `Result` with a callback
/// that may stop it: a break becomes a private error and then success.
fn stoppable(
    each: &mut dyn FnMut(Tree) -> ControlFlow<()>,
    stream: impl FnOnce(&mut dyn FnMut(Tree) -> Result<()>) -> Result<()>,
) -> Result<()> {
    const STOPPED: &str = "the caller stopped the samples";
    match stream(&mut |t| match each(t) {
        ControlFlow::Continue(()) => Ok(()),
        ControlFlow::Break(()) => Err(Error::parameter(STOPPED)),
    }) {
        Err(e) if e.to_string().ends_with(STOPPED) => Ok(()),
        other => other,
    }
}

/// `log Z` or the MAP (a tree with its cost, or a partition) computed
/// alone: what [`Need::LogZ`] and [`Need::Map`] keep, for hierarchies and
/// partitions alike.
struct Single<T> {
    n: usize,
    log_z: Option<f64>,
    map: Option<T>,
}

impl<T: Clone> Single<T> {
    fn log_z(n: usize, log_z: f64) -> Single<T> {
        Single {
            n,
            log_z: Some(log_z),
            map: None,
        }
    }

    fn map(n: usize, map: T) -> Single<T> {
        Single {
            n,
            log_z: None,
            map: Some(map),
        }
    }

    fn kind(&self) -> &'static str {
        if self.log_z.is_some() {
            "a posterior built for log Z alone (Need::LogZ)"
        } else {
            "a posterior built for the MAP alone (Need::Map)"
        }
    }

    fn get_log_z(&self) -> Result<f64> {
        self.log_z.ok_or_else(|| missing("log Z", self.kind()))
    }

    fn get_map(&self) -> Result<T> {
        self.map
            .clone()
            .ok_or_else(|| missing("the MAP", self.kind()))
    }
}

impl Engine for Single<(ScoredTree, f64)> {
    fn kind(&self) -> &'static str {
        Single::kind(self)
    }
    fn n(&self) -> usize {
        self.n
    }
    fn log_z(&self) -> Result<f64> {
        self.get_log_z()
    }
    fn map(&self) -> Result<(ScoredTree, f64)> {
        self.get_map()
    }
    fn each_sample(
        &self,
        _: usize,
        _: u64,
        _: &Options<'_>,
        _: &mut dyn FnMut(Tree) -> ControlFlow<()>,
    ) -> Result<()> {
        Err(missing("samples", self.kind()))
    }
}

/// A sparse trellis's inference, over positions in `order` when given.
struct Sparse<S: SetRepr> {
    trellis: SparseTrellis<S>,
    inference: SparseInference<S>,
    order: Option<Vec<usize>>,
    map_cost: f64,
    marginals: OnceLock<SparseMarginals<S>>,
}

impl<S: SetRepr> Sparse<S> {
    fn point(&self, r: usize) -> usize {
        self.order.as_ref().map_or(r, |o| o[r])
    }

    fn tree(&self, t: &Tree) -> Tree {
        t.relabel(|r| self.point(r)).canonical()
    }

    fn marginals(&self) -> &SparseMarginals<S> {
        self.marginals.get_or_init(|| self.inference.marginals())
    }
}

impl<S: SetRepr + 'static> Engine for Sparse<S> {
    fn kind(&self) -> &'static str {
        "a sparse trellis"
    }
    fn n(&self) -> usize {
        self.trellis.num_points()
    }
    fn log_z(&self) -> Result<f64> {
        Ok(self.inference.log_z())
    }
    fn map(&self) -> Result<(ScoredTree, f64)> {
        let map = self.inference.map();
        Ok((
            ScoredTree {
                tree: self.tree(&map.tree),
                log_potential: map.log_potential,
            },
            self.map_cost,
        ))
    }
    fn clusters(&self, min_p: f64, _: &Options<'_>) -> Result<Vec<(Vec<usize>, f64)>> {
        Ok(self
            .marginals()
            .clusters(min_p)
            .into_iter()
            .map(|(c, p)| {
                let mut members: Vec<usize> = c.points().iter().map(|r| self.point(r)).collect();
                members.sort_unstable();
                (members, p)
            })
            .collect())
    }
    fn support(&self, clusters: &[Vec<usize>], _: &Options<'_>) -> Result<Vec<f64>> {
        let n = self.n();
        // Point `order[r]` is at position `r`.
        let mut position: Vec<usize> = (0..n).collect();
        if let Some(order) = &self.order {
            for (r, &point) in order.iter().enumerate() {
                position[point] = r;
            }
        }
        let m = self.marginals();
        Ok(clusters
            .iter()
            .map(|c| m.p(S::from_points(c.iter().map(|&i| position[i]), n)))
            .collect())
    }
    fn mcc(&self, _: &Options<'_>) -> Result<(Tree, f64)> {
        let (tree, log_credibility) = self.marginals().mcc();
        Ok((self.tree(&tree), log_credibility))
    }
    fn each_sample(
        &self,
        k: usize,
        seed: u64,
        options: &Options<'_>,
        each: &mut dyn FnMut(Tree) -> ControlFlow<()>,
    ) -> Result<()> {
        // The stream of `SparseInference::samples(k, seed)`, one at a time.
        let mut ticker = crate::base::run::Ticker::new(options, "sample", k as u64)?;
        let mut rng = crate::random::rng(seed);
        for _ in 0..k {
            if each(self.tree(&self.inference.sample(&mut rng))).is_break() {
                break;
            }
            ticker.advance(1)?;
        }
        Ok(())
    }
    fn sparsity(&self) -> Option<Sparsity> {
        Some(Sparsity {
            clusters: self.trellis.num_vertices(),
            splits: self.trellis.num_splits(),
            trees_realised: self.trellis.num_trees_realised(),
            log10_sparsity: self.trellis.log10_sparsity(),
        })
    }
}

/// One posterior over flat partitions, whatever the engine: the flat
/// trellis over all `Bell(n)` partitions, the cuts of a tree
/// ([`tree_partitions`]) or the partitions
/// made of a family of clusters (a sparse flat trellis). As [`Posterior`]
/// for hierarchies, it is what every door holds; marginals are computed on
/// first use (the flat trellis over all partitions only).
pub struct PartitionPosterior {
    inner: Box<dyn FlatEngine>,
    /// Bell(n), computed once (thousands of digits at thousands of points).
    partitions: BigUint,
}

impl std::fmt::Debug for PartitionPosterior {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartitionPosterior")
            .field("n", &self.n())
            .field("kind", &self.inner.kind())
            .finish_non_exhaustive()
    }
}

/// The share of the partitions a family realises.
#[derive(Clone, Debug, PartialEq)]
pub struct Family {
    /// The partitions it realises, exactly.
    pub partitions_realised: BigUint,
    /// `log10` of `partitions_realised / Bell(n)` (finite at any size).
    pub log10_share: f64,
}

impl PartitionPosterior {
    /// The flat trellis of `energy` over every partition, computing what
    /// `need` says ([`Need::LogZ`]: one weight pass; [`Need::Map`]: one
    /// max-plus pass; [`Need::All`]: the whole trellis, samples and
    /// marginals).
    ///
    /// # Errors
    ///
    /// Those of [`FlatTrellis::with_options`](crate::flat::FlatTrellis::with_options),
    /// `log_z_only` and `map_only`.
    pub fn dense<E>(energy: E, need: Need, options: &Options<'_>) -> Result<PartitionPosterior>
    where
        E: Energy + Send + Sync + 'static,
    {
        let n = energy.num_points();
        let inner: Box<dyn FlatEngine> = match need {
            Need::All | Need::Samples | Need::Marginals | Need::Everything => Box::new(FlatDense {
                trellis: FlatTrellis::with_options(energy, options)?,
                marginals: OnceLock::new(),
            }),
            Need::LogZ => Box::new(Single::<ScoredPartition>::log_z(
                n,
                FlatTrellis::log_z_only(&energy, options)?,
            )),
            Need::Map => Box::new(Single::map(n, FlatTrellis::map_only(&energy, options)?)),
        };
        Ok(PartitionPosterior {
            inner,
            partitions: crate::count::bell(n),
        })
    }

    /// The posterior of `energy` over the partitions into clusters of
    /// `tree` (its cuts).
    ///
    /// # Errors
    ///
    /// Those of [`tree_partitions`].
    pub fn tree_cuts<E: Energy + ?Sized>(energy: &E, tree: &Tree) -> Result<PartitionPosterior> {
        let cuts = tree_partitions(energy, tree)?;
        let n = energy.num_points();
        Ok(PartitionPosterior {
            inner: Box::new(Sampled {
                n,
                log_z: cuts.log_z(),
                map: cuts.map().clone(),
                realised: cuts.num_partitions(),
                inference: cuts,
                sample: |c, rng| c.sample(rng),
            }),
            partitions: crate::count::bell(n),
        })
    }

    /// The posterior of `energy` over the partitions made of the clusters
    /// of a flat sparse trellis.
    ///
    /// # Errors
    ///
    /// Those of [`SparseTrellis::infer_flat`].
    pub fn sparse<E, S>(trellis: &SparseTrellis<S>, energy: &E) -> Result<PartitionPosterior>
    where
        E: Energy + ?Sized,
        S: SetRepr + 'static,
    {
        let inference = trellis.infer_flat(energy)?;
        let n = trellis.num_points();
        Ok(PartitionPosterior {
            inner: Box::new(Sampled {
                n,
                log_z: inference.log_z(),
                map: inference.map().clone(),
                realised: trellis.num_partitions_realised(),
                inference,
                sample: |i, rng| i.sample(rng),
            }),
            partitions: crate::count::bell(n),
        })
    }

    /// The number of points.
    pub fn n(&self) -> usize {
        self.inner.n()
    }

    /// `log Z`.
    ///
    /// # Errors
    ///
    /// A posterior built for the MAP partition alone.
    pub fn log_z(&self) -> Result<f64> {
        self.inner.log_z()
    }

    /// The MAP partition and its log-energy.
    ///
    /// # Errors
    ///
    /// A posterior built for `log Z` alone.
    pub fn map(&self) -> Result<ScoredPartition> {
        self.inner.map()
    }

    /// `Bell(n)`, the number of all partitions.
    pub fn num_partitions(&self) -> &BigUint {
        &self.partitions
    }

    /// For a family (tree cuts or clusters), the partitions it realises and
    /// their share of all.
    pub fn family(&self) -> Option<Family> {
        self.inner.realised().map(|r| Family {
            log10_share: crate::count::log10(&r) - crate::count::log10(&self.partitions),
            partitions_realised: r,
        })
    }

    /// The marginal of every cluster and the pairwise co-clustering
    /// probabilities (the flat trellis over all partitions; computed on
    /// first use).
    ///
    /// # Errors
    ///
    /// A family's posterior, or one built for a single quantity.
    pub fn marginals(&self) -> Result<&FlatMarginals> {
        self.inner.marginals()
    }

    /// The partition minimising the posterior expected Binder loss with
    /// costs `cost_split` (of splitting a pair that belongs together) and
    /// `cost_join` (of joining a pair that belongs apart), and that loss:
    /// exactly, by the flat trellis's max-plus pass over the pairwise
    /// marginals (see [`crate::summary`]).
    ///
    /// # Errors
    ///
    /// As [`PartitionPosterior::marginals`], a cost that is not finite and
    /// positive, and those of the max-plus pass (memory, cancelling).
    pub fn binder_partition(
        &self,
        cost_split: f64,
        cost_join: f64,
        options: &Options<'_>,
    ) -> Result<BinderPartition> {
        crate::summary::binder_partition(self.marginals()?, cost_split, cost_join, options)
    }

    /// Draws `k` exact samples from `seed`, handing each to `each` as it is
    /// drawn; `each` may stop the stream. The same seed gives the same
    /// partitions.
    ///
    /// # Errors
    ///
    /// A posterior built for a single quantity.
    pub fn each_sample(
        &self,
        k: usize,
        seed: u64,
        each: &mut dyn FnMut(Partition) -> ControlFlow<()>,
    ) -> Result<()> {
        self.inner.each_sample(k, seed, each)
    }

    /// `k` exact samples from `seed`, in memory.
    ///
    /// # Errors
    ///
    /// As [`PartitionPosterior::each_sample`].
    pub fn samples(&self, k: usize, seed: u64) -> Result<Vec<Partition>> {
        let mut out = Vec::new();
        self.each_sample(k, seed, &mut |p| {
            out.push(p);
            ControlFlow::Continue(())
        })?;
        Ok(out)
    }
}

/// The engines behind a [`PartitionPosterior`].
trait FlatEngine: Send + Sync {
    fn kind(&self) -> &'static str;
    fn n(&self) -> usize;
    fn log_z(&self) -> Result<f64>;
    fn map(&self) -> Result<ScoredPartition>;
    fn realised(&self) -> Option<BigUint> {
        None
    }
    fn marginals(&self) -> Result<&FlatMarginals> {
        Err(missing("cluster marginals", self.kind()))
    }
    fn each_sample(&self, k: usize, seed: u64, each: &mut FlatSink<'_>) -> Result<()>;
}

/// Draws `k` samples from `seed` with `sample` (every flat sampler draws
/// from [`crate::random::rng`]`(seed)`).
fn stream<T: ?Sized>(
    inference: &T,
    sample: impl Fn(&T, &mut crate::random::SeededRng) -> Partition,
    k: usize,
    seed: u64,
    each: &mut FlatSink<'_>,
) {
    let mut rng = crate::random::rng(seed);
    for _ in 0..k {
        if each(sample(inference, &mut rng)).is_break() {
            break;
        }
    }
}

/// The flat trellis over all partitions, its marginals on first use.
struct FlatDense<E: Energy> {
    trellis: FlatTrellis<E>,
    marginals: OnceLock<FlatMarginals>,
}

impl<E: Energy + Send + Sync> FlatEngine for FlatDense<E> {
    fn kind(&self) -> &'static str {
        "the flat trellis"
    }
    fn n(&self) -> usize {
        self.trellis.num_points()
    }
    fn log_z(&self) -> Result<f64> {
        Ok(self.trellis.log_z())
    }
    fn map(&self) -> Result<ScoredPartition> {
        Ok(self.trellis.map().clone())
    }
    fn marginals(&self) -> Result<&FlatMarginals> {
        Ok(self.marginals.get_or_init(|| self.trellis.marginals()))
    }
    fn each_sample(&self, k: usize, seed: u64, each: &mut FlatSink<'_>) -> Result<()> {
        stream(&self.trellis, |t, rng| t.sample(rng), k, seed, each);
        Ok(())
    }
}

/// A partition sink, as [`PartitionPosterior::each_sample`] takes it.
type FlatSink<'a> = dyn FnMut(Partition) -> ControlFlow<()> + 'a;

impl FlatEngine for Single<ScoredPartition> {
    fn kind(&self) -> &'static str {
        Single::kind(self)
    }
    fn n(&self) -> usize {
        self.n
    }
    fn log_z(&self) -> Result<f64> {
        self.get_log_z()
    }
    fn map(&self) -> Result<ScoredPartition> {
        self.get_map()
    }
    fn each_sample(&self, _: usize, _: u64, _: &mut FlatSink<'_>) -> Result<()> {
        Err(missing("samples", self.kind()))
    }
}

/// A family's inference (tree cuts or a sparse flat trellis) and its
/// sampler.
struct Sampled<T> {
    n: usize,
    log_z: f64,
    map: ScoredPartition,
    realised: BigUint,
    inference: T,
    sample: fn(&T, &mut crate::random::SeededRng) -> Partition,
}

impl<T: Send + Sync> FlatEngine for Sampled<T> {
    fn kind(&self) -> &'static str {
        "a family of partitions"
    }
    fn n(&self) -> usize {
        self.n
    }
    fn log_z(&self) -> Result<f64> {
        Ok(self.log_z)
    }
    fn map(&self) -> Result<ScoredPartition> {
        Ok(self.map.clone())
    }
    fn realised(&self) -> Option<BigUint> {
        Some(self.realised.clone())
    }
    fn each_sample(&self, k: usize, seed: u64, each: &mut FlatSink<'_>) -> Result<()> {
        stream(&self.inference, self.sample, k, seed, each);
        Ok(())
    }
}
