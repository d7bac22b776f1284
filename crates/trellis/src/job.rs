//! One hierarchical inference run as a door describes it: the model by
//! name, its β, the engine (the dense trellis, or a sparse trellis and how
//! to build it), triplet feedback, and the person's memory and time limits.
//! The door reads its input with [`crate::input`]; everything between that
//! and printing is decided here, the same for every door:
//!
//! 1. [`Job::check_points`]: the engine's point and memory limits on the
//!    number of points, before the `N × N` data is built.
//! 2. [`Job::check`]: every jet of a jets file against the engine, the
//!    planner's time estimate against the time limit (refused up front,
//!    [`ErrorKind::TimeBudget`](crate::ErrorKind::TimeBudget)), the tables
//!    and what the door holds for its output against the memory limit;
//!    the estimate's sentence is returned when the run is expected to take
//!    longer than [`NOTE_SECONDS`].
//! 3. [`Job::posterior`] / [`Job::jet_posterior`]: the triplets read over
//!    the points' names (a contradiction names points of the conflict),
//!    then the [`Posterior`] of the engine, computing what the planner's
//!    [`Task`] needs (one 8-byte pass for `hcc`'s log Z, MAP and samples).
//!
//! A flat run ([`FlatJob`]) is the same for partitions: the family (every
//! partition, the cuts of one hierarchy, or a listed family of clusters),
//! must-links and cannot-links read over the points' names and checked
//! before the pass, and the checkpoint directory of the full flat trellis.
//!
//! Cost: the checks are `O(jets)`; the posterior costs what its engine
//! costs (`O(3^N)` dense, the sparse trellis's splits otherwise).

use std::path::Path;

use crate::constraints::ConstrainedEnergy;
use crate::ddt::Triplet;
use crate::engines::{SparseSource, SparseSpec, sparse_bytes};
use crate::error::{Error, Result};
use crate::ginkgo::{Ginkgo, Jet, JetsFile, LeafOrdering};
use crate::input::{Input, NamedWeights, Naming, ginkgo_variant};
use crate::models::{CostModel, ModelName};
use crate::plan::{Budget, Estimate, Task};
use crate::posterior::{Need, PartitionPosterior, Posterior};
use crate::{CorrelationClustering, Options, ProgressFn, Workload};

/// Runs whose estimate is longer than this many seconds are announced by
/// the door (the sentence [`Job::check`] returns).
pub const NOTE_SECONDS: f64 = 10.0;

/// Where the trees of a sparse trellis come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SparseKind {
    /// The best distinct final beams of beam search on each problem.
    Beam,
    /// Jets only: Ginkgo simulator trees matched to the jet's leaves.
    Simulator,
}

impl crate::Named for SparseKind {
    const WHAT: &'static str = "sparse trellis";
    const CHOICES: &'static [(&'static str, SparseKind, &'static str)] = &[
        (
            "beam",
            SparseKind::Beam,
            "The clusters of the best distinct final beams of beam search on each problem",
        ),
        (
            "simulator",
            SparseKind::Simulator,
            "Jets: the clusters of Ginkgo simulator trees with the jet's number of leaves and \
             parameters (its rates, cut, mass and momentum), matched to its leaves",
        ),
    ];
}

/// A sparse trellis as a person asks for it; unset fields take their
/// defaults (100 trees, the compact beam width, momentum ordering, seed 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SparseFlags {
    /// Beam search or the simulator.
    pub kind: SparseKind,
    /// Number of input trees (at least 1).
    pub trees: Option<usize>,
    /// Simulator only: how simulated leaves are matched to the jet's.
    pub ordering: Option<LeafOrdering>,
    /// The seed of the simulator trees.
    pub seed: Option<u64>,
    /// Beam only: the width of the beam search (at least 1).
    pub beam_width: Option<usize>,
}

impl SparseFlags {
    fn trees(&self, naming: Naming) -> Result<usize> {
        match self.trees {
            Some(0) => Err(Error::input(format!(
                "{} must be at least 1",
                naming.name("trees")
            ))),
            Some(k) => Ok(k),
            None => Ok(100),
        }
    }

    /// The width of beam search over `n` points (before raising it to the
    /// number of trees).
    fn beam_width(&self, n: usize, naming: Naming) -> Result<usize> {
        match self.beam_width {
            Some(0) => Err(Error::input(format!(
                "{} must be at least 1",
                naming.name("beam-width")
            ))),
            Some(w) => Ok(w),
            None => Ok(crate::baselines::compact_beam_width(n)),
        }
    }

    /// The library's description of the sparse trellis over `n` points.
    fn spec(&self, n: usize, naming: Naming) -> Result<SparseSpec> {
        let source = match self.kind {
            SparseKind::Beam => SparseSource::Beam {
                width: self.beam_width(n, naming)?,
            },
            SparseKind::Simulator => SparseSource::Simulator {
                ordering: self.ordering.unwrap_or(LeafOrdering::Momentum),
                seed: self.seed.unwrap_or(0),
            },
        };
        Ok(SparseSpec {
            trees: self.trees(naming)?,
            source,
        })
    }
}

/// One run: what to infer with, and within which limits.
#[derive(Clone, Copy, Debug)]
pub struct Job<'a> {
    /// The model, by its registry name.
    pub model: ModelName,
    /// `Some`: a sparse trellis; `None`: the dense trellis.
    pub sparse: Option<SparseFlags>,
    /// A triplet file (`a b c` per line, point names or indices) that
    /// restricts the posterior to the trees in which every triplet holds.
    pub triplets: Option<&'a Path>,
    /// The person's memory limit in bytes (`None`: the memory available).
    pub memory_limit: Option<u64>,
    /// The person's time limit in seconds (finite, `>= 0`).
    pub time_limit: Option<f64>,
    /// Where the single passes keep their finished levels.
    pub checkpoint: Option<&'a Path>,
    /// How messages spell the inputs.
    pub naming: Naming,
}

impl Job<'_> {
    /// Whether the dense trellis runs.
    pub fn dense(&self) -> bool {
        self.sparse.is_none()
    }

    /// What the dense trellis holds for `task` (`None` for a sparse trellis),
    /// for the loader's first memory check.
    pub fn dense_workload(&self, task: Task) -> Option<Workload> {
        self.dense()
            .then(|| crate::plan::workload(self.model, task))
    }

    /// Every jet of a jets file against the dense trellis's point limit,
    /// before any work starts (nothing to check for a sparse trellis).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) naming the first jet
    /// that is too large and the engines that take it.
    pub fn check_jets_fit(&self, file: &JetsFile) -> Result<()> {
        let max = crate::MAX_POINTS;
        let too_large = file.jets.iter().find(|j| j.len() > max);
        let (Some(jet), true) = (too_large, self.dense()) else {
            return Ok(());
        };
        let name = |k: &str| self.naming.name(k);
        Err(Error::input(format!(
            "jet {} has {} leaves; the exact trellis supports at most {max}: use \
             {s} beam or {s} simulator (any number of leaves) for log Z, marginals and \
             samples of larger jets, and `trellis astar {}` (approximate A* from beam \
             search, never worse than it, any number of leaves) for their MAP tree",
            jet.id,
            jet.len(),
            name("approx"),
            s = name("sparse"),
        )))
    }

    /// The splits of a jet's run (the batch's scheduling weight).
    pub fn jet_work(&self, jet: &Jet) -> u64 {
        if self.dense() {
            crate::batch::dense_work(jet)
        } else {
            1
        }
    }

    /// Step 1 (module docs): a sparse trellis's flags and memory over `n`
    /// points of pairwise data, before the data is built; a checkpoint
    /// directory goes with the dense trellis.
    ///
    /// # Errors
    ///
    /// A simulator for pairwise data, a flag of another engine, the memory
    /// of the trees and their beam search, and a checkpoint directory with
    /// a sparse trellis.
    pub fn check_points(&self, n: usize) -> Result<()> {
        let name = |k: &str| self.naming.name(k);
        let Some(sparse) = self.sparse else {
            return Ok(());
        };
        if self.checkpoint.is_some() {
            return Err(Error::input(format!(
                "{} is kept by the blocked exact passes of the dense trellis, not with {}",
                name("checkpoint"),
                name("sparse")
            )));
        }
        if sparse.kind == SparseKind::Simulator {
            return Err(Error::input(format!(
                "{} simulator needs jets ({}); use {} beam for weights and points",
                name("sparse"),
                name("jets"),
                name("sparse")
            )));
        }
        if sparse.ordering.is_some() {
            return Err(Error::input(format!(
                "{} applies to {} simulator",
                name("ordering"),
                name("sparse")
            )));
        }
        self.check_sparse_memory(&sparse, n, 1)
    }

    /// The memory of a sparse trellis's trees over `n` points, `parallel`
    /// problems at once.
    fn check_sparse_memory(&self, sparse: &SparseFlags, n: usize, parallel: usize) -> Result<()> {
        let spec = sparse.spec(n, self.naming)?;
        crate::plan::check_bytes(
            &format!(
                "a sparse trellis from {} {} over {n} points",
                self.naming.name("trees"),
                spec.trees
            ),
            sparse_bytes(n, &spec).saturating_mul(parallel as u128),
            self.memory_limit,
        )
    }

    /// The planner's estimate of `task` over `n` points on `threads`.
    fn estimate(&self, n: usize, task: Task, threads: usize) -> Result<Estimate> {
        if self.triplets.is_some() {
            crate::plan::estimate_constrained(n, self.model, task, threads)
        } else {
            crate::plan::estimate(n, self.model, task, threads)
        }
    }

    /// Refuses an estimate longer than the time limit.
    fn check_time(&self, estimate: &Estimate) -> Result<()> {
        let budget = Budget {
            memory_bytes: Some(u64::MAX),
            seconds: self.time_limit,
        };
        crate::plan::check(estimate, &budget)
    }

    /// Step 2 (module docs) on the loaded input, for the planner's `task`;
    /// `output(n)` is what the door holds for the output of a problem of
    /// `n` points (summed over the jets of a file, whose lines are all held
    /// until printed). Returns the estimate's sentence when the run is
    /// expected to take longer than [`NOTE_SECONDS`].
    ///
    /// # Errors
    ///
    /// The sparse trellis's flags and memory, the time budget
    /// ([`ErrorKind::TimeBudget`](crate::ErrorKind::TimeBudget), per jet for
    /// a jets file), and the memory of the tables with the output.
    pub fn check(
        &self,
        input: &Input,
        task: Task,
        output: &dyn Fn(usize) -> u128,
    ) -> Result<Option<String>> {
        let threads = crate::plan::default_threads();
        match input {
            Input::Jets(file) => {
                let note = self.check_jets(file, task, threads)?;
                let total = file
                    .jets
                    .iter()
                    .fold(0u128, |acc, j| acc.saturating_add(output(j.len())));
                crate::plan::check_bytes("the output of every jet", total, self.memory_limit)?;
                Ok(note)
            }
            Input::Weights(w) => {
                let n = w.n();
                self.check_points(n)?;
                let tables = if self.dense() {
                    self.estimate(n, task, 1)?.memory_bytes as u128
                } else {
                    0
                };
                crate::plan::check_bytes(
                    &format!("the output over {n} points, with the trellis tables,"),
                    tables.saturating_add(output(n)),
                    self.memory_limit,
                )?;
                if !self.dense() {
                    return Ok(None);
                }
                let estimate = self.estimate(n, task, threads)?;
                self.check_time(&estimate)?;
                Ok((estimate.seconds > NOTE_SECONDS).then(|| estimate.to_string()))
            }
        }
    }

    /// The jets of a file against the engine: the largest jet's sparse
    /// trellis, or each jet's estimate against the time limit (a limit per
    /// jet) and the note of the whole batch (jets run in parallel).
    fn check_jets(&self, file: &JetsFile, task: Task, threads: usize) -> Result<Option<String>> {
        if let Some(sparse) = self.sparse {
            if sparse.kind == SparseKind::Simulator && sparse.beam_width.is_some() {
                return Err(Error::input(format!(
                    "{} applies to {} beam",
                    self.naming.name("beam-width"),
                    self.naming.name("sparse")
                )));
            }
            let n = file.jets.iter().map(|j| j.len()).max().unwrap_or(0);
            self.check_sparse_memory(&sparse, n, threads)?;
            return Ok(None);
        }
        let mut total = 0.0;
        for jet in &file.jets {
            let estimate = crate::plan::estimate(jet.len(), self.model, task, 1)?;
            self.check_time(&estimate)
                .map_err(|e| e.context(format!("jet {}", jet.id)))?;
            total += estimate.seconds;
        }
        let total = total / threads as f64;
        Ok((total > NOTE_SECONDS).then(|| {
            format!(
                "exact inference over the {} jets takes about {total:.0} s on {threads} threads (estimated)",
                file.jets.len()
            )
        }))
    }

    /// The triplets of the run over the points of `weights` (their names,
    /// or indices when they have none); none without a triplet file.
    ///
    /// # Errors
    ///
    /// The file's (unreadable, too large, a bad line, an unknown point) and
    /// contradicting triplets, named by the points' names.
    pub fn read_triplets(&self, weights: &NamedWeights) -> Result<Vec<Triplet>> {
        let Some(path) = self.triplets else {
            return Ok(Vec::new());
        };
        let context = || format!("in {} {}", self.naming.name("triplets"), path.display());
        let text = crate::input::read_text(path, self.memory_limit, self.naming)?;
        let indices: Vec<String>;
        let names = match weights.names() {
            Some(names) => names,
            None => {
                indices = (0..weights.n()).map(|i| i.to_string()).collect();
                &indices
            }
        };
        let triplets =
            crate::ddt::parse_triplets(&text, names).map_err(|e| e.context(context()))?;
        crate::ddt::build(names.len(), &triplets)
            .map_err(|e| Error::input(crate::ddt::named_message(&e, names)).context(context()))?;
        Ok(triplets)
    }

    /// Step 3 (module docs) for pairwise data: the model at `beta` on the
    /// engine, restricted by the triplets, computing what `task` needs;
    /// `progress` sees the dense passes.
    ///
    /// # Errors
    ///
    /// The triplets' ([`Job::read_triplets`]), the model's (a bad β or
    /// data), and those of the engine (memory, time limit, checkpoints).
    pub fn posterior(
        &self,
        weights: &NamedWeights,
        beta: f64,
        task: Task,
        progress: Option<ProgressFn<'_>>,
    ) -> Result<Posterior> {
        let triplets = self.read_triplets(weights)?;
        if let Some(sparse) = self.sparse {
            let n = weights.n();
            self.check_points(n)?;
            let (k, width) = (
                sparse.trees(self.naming)?,
                sparse.beam_width(n, self.naming)?,
            );
            return crate::engines::sparse_pairwise(
                self.model,
                weights.view(),
                beta,
                &triplets,
                k,
                width,
            );
        }
        let options = Options {
            memory_limit: self.memory_limit,
            time_limit: self.duration(),
            progress,
            checkpoint: self.checkpoint,
            ..Options::default()
        };
        let need = match task {
            Task::LogZ => Need::LogZ,
            Task::Map => Need::Map,
            Task::Sample => Need::Samples,
            Task::Marginals | Task::Mcc | Task::Consensus => Need::Marginals,
            Task::Infer => Need::Everything,
        };
        let model = CostModel::build(self.model, weights.view(), beta)?;
        crate::engines::dense(model, triplets, need, &options)
    }

    /// Step 3 (module docs) for jet `index` of a file (which seeds the
    /// simulator's stream): the Ginkgo likelihood on the engine; the dense
    /// trellis computes the MAP tree alone for [`Task::Map`], else all.
    ///
    /// # Errors
    ///
    /// A model that is not a jet model, and those of the engine.
    pub fn jet_posterior(&self, jet: &Jet, index: usize, task: Task) -> Result<Posterior> {
        let variant = ginkgo_variant(self.model)
            .ok_or_else(|| Error::input(format!("{} scores weights, not jets", self.model)))?;
        if let Some(sparse) = self.sparse {
            let spec = sparse.spec(jet.len(), self.naming)?;
            return crate::engines::sparse_jet(jet, variant, &spec, index);
        }
        let options = Options {
            memory_limit: self.memory_limit,
            time_limit: self.duration(),
            ..Options::default()
        };
        let need = if task == Task::Map {
            Need::Map
        } else {
            Need::All
        };
        Posterior::dense(Ginkgo::new(jet, variant), need, &options)
    }

    /// The time limit as a duration (one too long for a `Duration` is no
    /// limit).
    pub fn duration(&self) -> Option<std::time::Duration> {
        self.time_limit
            .and_then(|t| std::time::Duration::try_from_secs_f64(t).ok())
    }
}

/// The partitions a flat run is over.
#[derive(Clone, Copy, Debug)]
pub enum FlatFamily<'a> {
    /// Every partition: the full flat trellis (`O(3^N)`), restricted by the
    /// run's must-links and cannot-links.
    All,
    /// The partitions that cut one hierarchy (linear time): this tree (a
    /// nested JSON list of indices, or Newick over the points' names), or by
    /// default the average-linkage tree of `max(w) - w`.
    TreeCuts(Option<&'a str>),
    /// The partitions made of the clusters listed in this file (one cluster
    /// per line), a family closed under recursive complement.
    Clusters(&'a Path),
}

/// A flat run: the family of partitions, the links, the memory limit.
#[derive(Clone, Copy, Debug)]
pub struct FlatJob<'a> {
    /// The person's β (the MAP partition, searched at β = 1, is reported
    /// at it: it must be in the energy's range too).
    pub beta: f64,
    /// The partitions the posterior is over.
    pub family: FlatFamily<'a>,
    /// Pairs (`a b` per line, point names or indices) that must share a
    /// cluster; the full flat trellis only.
    pub must_link: Option<&'a Path>,
    /// Pairs that must be in different clusters.
    pub cannot_link: Option<&'a Path>,
    /// The person's memory limit in bytes (`None`: the memory available).
    pub memory_limit: Option<u64>,
    /// Where the full flat trellis's passes keep their finished levels
    /// (refused with a family of partitions).
    pub checkpoint: Option<&'a Path>,
    /// How messages spell the inputs.
    pub naming: Naming,
}

/// A flat posterior with what its output needs: the energy (each sample's
/// log-energy) and the points' names.
pub struct FlatRun {
    /// The posterior over the family.
    pub post: PartitionPosterior,
    /// The correlation-clustering energy at the run's β.
    pub energy: CorrelationClustering,
    /// The points' names, when the input names them.
    pub names: Option<Vec<String>>,
}

impl FlatRun {
    /// How point `i` is shown: its name, or its index.
    pub fn label(&self, i: usize) -> String {
        crate::report::label(self.names.as_deref(), i)
    }
}

impl FlatJob<'_> {
    /// The memory of every cluster marginal over `n` points of the full
    /// flat trellis, before the weights are built: the tables, their
    /// marginals and the clusters listed (beyond
    /// [`MAX_POINTS`](crate::MAX_POINTS) the trellis refuses on its own).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::TooMuchMemory`](crate::ErrorKind::TooMuchMemory).
    pub fn check_marginals(&self, n: usize) -> Result<()> {
        if n > crate::MAX_POINTS {
            return Ok(());
        }
        let needed = crate::memory_needed(n, Workload::FlatMarginals) as u128;
        crate::plan::check_bytes(
            &format!("the flat marginals over {n} points"),
            needed.saturating_add(crate::plan::clusters_bytes(n)),
            self.memory_limit,
        )
    }

    /// The must-links and cannot-links over `n` points (their names, or
    /// indices without names); empty without link files.
    ///
    /// # Errors
    ///
    /// An unreadable file, a bad line or an unknown point.
    #[allow(clippy::type_complexity)]
    pub fn links(
        &self,
        names: Option<&[String]>,
        n: usize,
    ) -> Result<(Vec<(usize, usize)>, Vec<(usize, usize)>)> {
        let indices: Vec<String>;
        let names = match names {
            Some(names) => names,
            None => {
                indices = (0..n).map(|i| i.to_string()).collect();
                &indices
            }
        };
        let read = |path: Option<&Path>, key: &str| -> Result<Vec<(usize, usize)>> {
            let Some(path) = path else {
                return Ok(Vec::new());
            };
            let text = crate::input::read_text(path, self.memory_limit, self.naming)?;
            crate::io::parse_pairs(&text, names)
                .map_err(|e| e.context(format!("in {} {}", self.naming.name(key), path.display())))
        };
        Ok((
            read(self.must_link, "must-link")?,
            read(self.cannot_link, "cannot-link")?,
        ))
    }

    /// The posterior of correlation clustering at `beta` over the family,
    /// computing what `need` says on the full flat trellis (everything on a
    /// family); `progress` sees the full trellis's pass. The links are read
    /// and checked (a contradiction is refused) before the pass starts.
    ///
    /// # Errors
    ///
    /// Links with a sparse family or that contradict each other, the
    /// energy's (a bad β or weights), the family's file or tree, and those
    /// of the pass (memory).
    pub fn posterior(
        &self,
        weights: NamedWeights,
        beta: f64,
        need: Need,
        progress: Option<ProgressFn<'_>>,
    ) -> Result<FlatRun> {
        let names = weights.names().map(<[String]>::to_vec);
        let w = weights.into_weights();
        if beta != self.beta {
            CorrelationClustering::new(&w, self.beta)?;
        }
        let energy = CorrelationClustering::new(&w, beta)?;
        let linked = self.must_link.is_some() || self.cannot_link.is_some();
        let post = match self.family {
            FlatFamily::All => {
                let (must, cannot) = self.links(names.as_deref(), w.n())?;
                if linked {
                    let what = format!(
                        "{}, {} (points by 0-based index)",
                        self.naming.name("must-link"),
                        self.naming.name("cannot-link")
                    );
                    ConstrainedEnergy::new(&energy, &must, &cannot).map_err(|e| e.context(what))?;
                }
                let options = Options {
                    memory_limit: self.memory_limit,
                    progress,
                    checkpoint: self.checkpoint,
                    ..Options::default()
                };
                crate::engines::flat_dense(energy.clone(), &must, &cannot, need, &options)?
            }
            _ if linked => {
                return Err(Error::input(format!(
                    "{} and {} run on the full flat trellis, not with {}",
                    self.naming.name("must-link"),
                    self.naming.name("cannot-link"),
                    self.naming.name("sparse")
                )));
            }
            _ if self.checkpoint.is_some() => {
                return Err(Error::input(format!(
                    "{} is kept by the full flat trellis, not with {}",
                    self.naming.name("checkpoint"),
                    self.naming.name("sparse")
                )));
            }
            FlatFamily::TreeCuts(text) => {
                let tree = text
                    .map(|t| crate::read_tree(t, names.as_deref()))
                    .transpose()?;
                crate::engines::flat_tree_cuts(&energy, &w, tree.as_ref())?
            }
            FlatFamily::Clusters(path) => {
                let key = self.naming.name("clusters");
                let text = crate::input::read_text(path, self.memory_limit, self.naming)
                    .map_err(|e| e.context(key.clone()))?;
                crate::engines::flat_clusters(&text, &energy)
                    .map_err(|e| e.context(format!("in {key} {}", path.display())))?
            }
        };
        Ok(FlatRun {
            post,
            energy,
            names,
        })
    }
}

/// A person's time limit in seconds as the library's [`Options`] take it:
/// `None` for no limit, and for one too long for a [`std::time::Duration`]
/// (beyond the clock, as no limit); `naming` spells the option.
///
/// # Errors
///
/// A limit that is negative or not a finite number
/// ([`ErrorKind::Input`](crate::ErrorKind::Input)).
pub fn time_limit(seconds: Option<f64>, naming: Naming) -> Result<Option<std::time::Duration>> {
    match seconds {
        Some(t) if !(t.is_finite() && t >= 0.0) => Err(Error::input(format!(
            "{} must be a number of seconds >= 0, not {}",
            naming.name("time-limit"),
            crate::error::number(t)
        ))),
        t => Ok(t.and_then(|t| std::time::Duration::try_from_secs_f64(t).ok())),
    }
}

/// The consensus level a door asks for with the summary `kind` (the
/// planner's [`Task::Mcc`] or [`Task::Consensus`]): `threshold`, by default
/// the majority rule's 0.5; `naming` spells the options.
///
/// # Errors
///
/// A threshold with the MCC tree, or outside `[0.5, 1]`
/// ([`ErrorKind::Input`](crate::ErrorKind::Input)).
pub fn consensus_threshold(kind: Task, threshold: Option<f64>, naming: Naming) -> Result<f64> {
    let name = |k: &str| naming.name(k);
    match (kind, threshold) {
        (Task::Mcc, Some(_)) => Err(Error::input(format!(
            "{} sets the consensus level: it goes with {} consensus",
            name("threshold"),
            name("kind")
        ))),
        (_, Some(t)) if !(0.5..=1.0).contains(&t) => Err(Error::input(format!(
            "{} must be between 0.5 and 1, not {t}",
            name("threshold")
        ))),
        (_, t) => Ok(t.unwrap_or(0.5)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::Pairwise;
    use crate::{Matrix, Weights};

    fn input(n: usize) -> Input {
        let rows = (0..n)
            .map(|i| (0..n).map(|j| if i == j { 0.0 } else { 0.5 }).collect())
            .collect();
        let w = Weights::from_matrix(&Matrix::from_rows(rows).unwrap()).unwrap();
        Input::Weights(NamedWeights {
            data: Pairwise::Weights(w),
            names: None,
        })
    }

    fn job(time_limit: Option<f64>) -> Job<'static> {
        Job {
            model: ModelName::Hcc,
            sparse: None,
            triplets: None,
            memory_limit: Some(u64::MAX / 4),
            time_limit,
            checkpoint: None,
            naming: Naming::Flags,
        }
    }

    /// The planner's estimate is announced above ten seconds and refused
    /// beyond the time limit, before anything runs; small runs say nothing.
    #[test]
    fn the_check_announces_long_runs_and_refuses_beyond_the_time_limit() {
        let none = |_: usize| 0u128;
        assert_eq!(job(None).check(&input(8), Task::LogZ, &none).unwrap(), None);
        let note = job(None).check(&input(29), Task::LogZ, &none).unwrap();
        assert!(note.is_some_and(|s| s.contains("29 points")));
        let e = job(Some(1.0))
            .check(&input(29), Task::LogZ, &none)
            .unwrap_err();
        assert!(
            matches!(e.kind(), crate::ErrorKind::TimeBudget { .. }),
            "{e}"
        );
        let e = job(None)
            .check(&input(8), Task::LogZ, &|_| u128::MAX)
            .unwrap_err();
        assert!(e.to_string().contains("the output over 8 points"), "{e}");
    }

    /// A sparse trellis refuses the simulator and the ordering on pairwise
    /// data, and a zero number of trees, naming the flags.
    #[test]
    fn sparse_flags_that_do_not_apply_are_refused() {
        let flags = SparseFlags {
            kind: SparseKind::Beam,
            trees: None,
            ordering: None,
            seed: None,
            beam_width: None,
        };
        let with = |sparse: SparseFlags| Job {
            sparse: Some(sparse),
            ..job(None)
        };
        assert!(with(flags).check_points(50).is_ok());
        let simulator = SparseFlags {
            kind: SparseKind::Simulator,
            ..flags
        };
        let e = with(simulator).check_points(50).unwrap_err().to_string();
        assert!(e.contains("--sparse simulator needs jets"), "{e}");
        let none = SparseFlags {
            trees: Some(0),
            ..flags
        };
        let e = with(none).check_points(50).unwrap_err().to_string();
        assert!(e.contains("--trees must be at least 1"), "{e}");
    }
}
