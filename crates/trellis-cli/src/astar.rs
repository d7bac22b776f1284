//! `trellis astar`: the lowest-cost hierarchy by A* search on the trellis,
//! exact (full trellis, admissible heuristic) or approximate (a sparse
//! trellis grown from beam-search trees).
//!
//! The search's memory is bounded by `--max-memory` (by default half the
//! memory available): the exact search stops with an error when exploring a
//! vertex would pass it, the approximate one returns its best tree so far.
//! The sizes of the approximate search's flags (`--samples`, `--beam-width`)
//! are checked before anything runs.
//!
//! Exact A* takes at most 128 points; approximate A* any number (its
//! clusters are wide bitsets beyond 128 points, with the same results).

use anyhow::Result;
use clap::Args;
use trellis::astar::{self, ApproxOptions, AstarJob, Candidates, Start};
use trellis::ginkgo::Heuristic;
use trellis::input::Naming;
use trellis::models::CostModel;
use trellis::report::SearchJson;
use trellis::{Options, ProgressFn};

use crate::ModelArgs;
use crate::batch::per_jet;
use crate::commands::{WithLinkage, check_jets_outputs, jet_linkage, job as job_of, printer};
use crate::input::{Input, ginkgo_variant, load_checked, memory_limit};
use crate::input::{NamedWeights, choice};
use crate::progress::Bar;
use crate::trees::DendrogramArgs;

#[derive(Args, Debug)]
pub struct AstarArgs {
    #[command(flatten)]
    pub model: ModelArgs,

    /// Heuristic for the Ginkgo models [default: h0]. The cost models use their own
    /// admissible bounds: hcc the sum of positive weights inside a cluster (Prop. 1),
    /// dasgupta twice the weight inside it (Prop. 2, tightened).
    #[arg(long, value_parser = choice::<Heuristic>())]
    pub heuristic: Option<Heuristic>,

    /// Approximate A*: search a sparse trellis that starts from the --init trees and
    /// grows by sampled splits, in rounds. Never worse than its initial trees; "exact"
    /// is false. Any number of points (exact A* stops at 128).
    #[arg(long)]
    pub approx: bool,

    /// Initial trees of the approximate search, comma-separated. Which fit which model
    /// (measured, docs/astar.md): for hcc and dasgupta the linkage trees (average,
    /// complete, ward): greedy and beam search merge by a myopic split cost that is 0
    /// for every pair of negatively weighted clusters, so on hcc they start from poor
    /// trees and, beyond about 100 points, cost more time than they return; for the
    /// Ginkgo jets beam search and greedy (linkage has no meaning for momenta)
    /// [default: average,complete,ward for weights, and beam when --beam-width is
    /// given; beam,greedy for jets].
    #[arg(
        long,
        requires = "approx",
        value_parser = choice::<Start>(),
        value_delimiter = ',',
        value_name = "T,..."
    )]
    pub init: Vec<Start>,

    /// Beam width of the beam-search initial trees [default: min(3N, N(N-1)/2)].
    #[arg(long, requires = "approx", value_name = "W")]
    pub beam_width: Option<usize>,

    /// Children added to each explored vertex: the K cheapest candidate splits by
    /// cost + heuristic.
    #[arg(long, requires = "approx", default_value_t = 5, value_name = "K")]
    pub top_k: usize,

    /// Random candidate splits drawn per explored vertex (plus every one-point move of
    /// the splits it already has).
    #[arg(long, requires = "approx", default_value_t = 15, value_name = "S")]
    pub samples: usize,

    /// Vertices of at most this many points get all their splits.
    #[arg(long, requires = "approx", default_value_t = 7, value_name = "M")]
    pub exact_size: usize,

    /// Draw the K children by importance sampling (probability proportional to
    /// exp(-(cost + heuristic))) instead of taking the K best.
    #[arg(long, requires = "approx")]
    pub importance: bool,

    /// Weight w of the heuristic in the approximate search: weighted A*, f = g + w h
    /// [default: 1, plain A*].
    #[arg(
        long,
        requires = "approx",
        value_name = "W",
        conflicts_with = "auto_weight",
        allow_negative_numbers = true
    )]
    pub weight: Option<f64>,

    /// Set the weight to the best initial tree's cost over h(root), scaling the
    /// heuristic to the cost of a known tree.
    #[arg(long, requires = "approx")]
    pub auto_weight: bool,

    /// Deterministic budget of the approximate search: stop after exploring this many
    /// trellis vertices over all rounds (0: no limit) and return the best tree so far.
    #[arg(long, requires = "approx", default_value_t = 50_000, value_name = "E")]
    pub max_explored: u64,

    /// Maximum number of rounds; each reruns A* on the grown trellis.
    #[arg(long, requires = "approx", default_value_t = 5, value_name = "R")]
    pub rounds: usize,

    /// Seed of the approximate search's sampler; same seed, same output.
    #[arg(long, requires = "approx", default_value_t = 0, value_name = "S")]
    pub seed: u64,

    /// Triplet constraints, one per line: `a b c` meaning ({a, b}, c), as for `map
    /// --triplets`. The search finds the best tree among those in which every triplet
    /// holds (a forbidden split costs +infinity; the heuristic stays admissible). With
    /// --approx, the initial trees that break a triplet are dropped and greedy
    /// agglomeration under the triplets is added, so the search starts from trees that
    /// satisfy them and never leaves them.
    #[arg(long, value_name = "FILE", conflicts_with = "jets")]
    pub triplets: Option<std::path::PathBuf>,

    /// Print one JSON object {"n", "log_potential", "cost", "tree", "explored", "exact"}
    /// (plus "splits", "vertices", "iterations", "rounds", "heuristic", and the memory:
    /// "sets" ("u128" up to 128 points, else "wide"), "bytes_per_vertex",
    /// "bytes_per_split" and "peak_bytes", the most the search held against
    /// --max-memory); with --jets one per jet per line, with "id".
    #[arg(long, conflicts_with = "newick")]
    pub json: bool,

    /// Print the tree in rooted Newick with branch lengths (see --heights).
    #[arg(long)]
    pub newick: bool,

    #[command(flatten)]
    pub dendrogram: DendrogramArgs,
}

/// The library's description of the search the flags ask for.
fn job(args: &AstarArgs) -> AstarJob {
    let approx = args.approx.then(|| ApproxOptions {
        top_k: args.top_k,
        samples: args.samples,
        exact_size: args.exact_size,
        rounds: args.rounds,
        candidates: if args.importance {
            Candidates::Importance
        } else {
            Candidates::TopK
        },
        seed: args.seed,
        weight: args.weight.or(Some(1.0)).filter(|_| !args.auto_weight),
        max_explored: (args.max_explored > 0).then_some(args.max_explored),
    });
    AstarJob {
        model: args.model.model,
        heuristic: args.heuristic,
        approx,
        init: args.init.clone(),
        beam_width: args.beam_width,
        memory_limit: memory_limit(&args.model),
        naming: Naming::Flags,
    }
}

/// The run's options: the memory budget, `--time-limit`, and a progress callback.
fn run_options<'a>(args: &AstarArgs, progress: Option<ProgressFn<'a>>) -> Options<'a> {
    Options {
        memory_limit: memory_limit(&args.model),
        time_limit: crate::input::time_limit(&args.model),
        progress,
        ..Options::default()
    }
}

/// The search over a weight matrix, under the triplets of `--triplets`.
fn weights_outcome(
    weights: &NamedWeights,
    args: &AstarArgs,
    search: &AstarJob,
    progress: Option<ProgressFn<'_>>,
) -> Result<SearchJson> {
    let n = weights.n();
    let no_sparse = crate::sparse::SparseArgs::default();
    let triplets =
        job_of(&args.model, &no_sparse, args.triplets.as_deref(), None)?.read_triplets(weights)?;
    let model = CostModel::build(args.model.model, weights.view(), args.model.budget.beta)?;
    let request = search.request(n, false);
    let out = astar::solve(&model, &triplets, &request, &run_options(args, progress))?;
    Ok(SearchJson::new(n, out, search.heuristic_name()))
}

pub fn run(args: &AstarArgs, progress: bool) -> Result<String> {
    let search = job(args);
    search.check()?;
    check_jets_outputs(&args.model, &args.dendrogram, args.newick)?;
    // The point limit and the sizes of the flags are checked before the
    // weights are built.
    let check_points = |n: usize| Ok(search.check_points(n)?);
    match load_checked(&args.model, None, &check_points)? {
        Input::Jets(file) => {
            let variant = ginkgo_variant(args.model.model).expect("a jet model");
            search.check_jets(&file)?;
            let n = file.jets.iter().map(|j| j.len()).max().unwrap_or(0);
            // One large jet searched approximately: a bar of its explored
            // vertices (as for weights) instead of the bar of jets done.
            let one = file.jets.len() == 1 && args.approx && args.max_explored > 0 && n > 40;
            let bar = Bar::search(progress && one, args.max_explored);
            let callback = bar.callback();
            let callback = callback.as_ref().map(|f| f as ProgressFn<'_>);
            per_jet(
                &file,
                progress && !one,
                |jet| (jet.len() as u64).pow(3),
                |_, jet| {
                    let request = search.request(jet.len(), true);
                    let options = run_options(args, callback);
                    let out =
                        astar::solve_jet(jet, variant, search.heuristic(), &request, &options)?;
                    let out = SearchJson::new(jet.len(), out, search.heuristic_name());
                    let tree = &out.outcome.best.tree;
                    let linkage = jet_linkage(jet, variant, tree, &args.dendrogram)?;
                    Ok(WithLinkage {
                        result: out,
                        linkage,
                    })
                },
            )
        }
        Input::Weights(weights) => {
            check_points(weights.n())?;
            // Searches that may take more than a second get a bar (approximate:
            // explored vertices against --max-explored) or a spinner.
            let long = args.approx && weights.n() > 40 || weights.n() >= 18;
            let out = if args.approx && args.max_explored > 0 {
                let bar = Bar::search(progress && long, args.max_explored);
                let callback = bar.callback();
                let callback = callback.as_ref().map(|f| f as ProgressFn<'_>);
                weights_outcome(&weights, args, &search, callback)?
            } else {
                let _bar = Bar::spinner(progress && long, "A* search");
                weights_outcome(&weights, args, &search, None)?
            };
            if args.approx && out.outcome.explored == 0 && out.outcome.rounds == 0 {
                eprintln!(
                    "note: the search stopped at its memory budget or time limit before \
                     exploring a vertex; the tree is the best initial tree"
                );
            }
            let format = args.dendrogram.output(args.json, args.newick);
            let p = printer(&args.model, &weights, args.dendrogram.heights());
            Ok(p.search(&out, args.approx, format)?)
        }
    }
}
