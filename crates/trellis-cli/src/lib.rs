//! `trellis`: exact inference over hierarchical clusterings from the command line.
//!
//! A thin front-end over the `trellis` library: it reads inputs, builds a model,
//! runs the library and prints JSON, Newick or a readable summary. Bad input
//! goes to stderr with exit code 2 and nothing on stdout; a failed write of
//! the output (a full disk, a closed file) is exit code 1 with a message. A
//! closed pipe (`| head`) ends the command quietly with exit code 0. The
//! reproductions of the papers' experiments live in their own binary,
//! `trellis-repro`, which takes the interactive loop's flags from this crate
//! ([`interactive`]).

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{ArgGroup, Args, Parser, Subcommand};
use trellis::input::SimilarityKind;
use trellis::models::ModelName;

mod astar;
mod baselines;
mod batch;
mod commands;
mod flat;
mod generate;
mod input;
pub mod interactive;
mod output;
mod progress;
mod sparse;
mod summary;
mod trees;

/// Exact inference over all binary hierarchies of a dataset with the cluster trellis:
/// partition function, MAP tree, every cluster marginal and exact posterior samples,
/// in O(3^N) time instead of a sum over (2N-3)!! trees.
#[derive(Parser, Debug)]
#[command(name = "trellis", version, propagate_version = true)]
#[command(after_help = "Start with `trellis demo`. Every command explains its flags with --help.")]
struct Cli {
    #[command(subcommand)]
    command: Command,

    /// Number of worker threads, 1 to 256 (default: one per core).
    #[arg(long, global = true, value_name = "N")]
    threads: Option<usize>,

    /// Do not draw progress bars on stderr.
    #[arg(long, short = 'q', global = true)]
    quiet: bool,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// The MAP (lowest-cost) hierarchy.
    Map(MapArgs),
    /// The log partition function, log Z, over all (2N-3)!! hierarchies.
    Logz(LogzArgs),
    /// The marginal probability of every cluster (and optionally of one sub-hierarchy).
    Marginals(MarginalsArgs),
    /// Exact samples from the posterior over hierarchies.
    Sample(SampleArgs),
    /// MAP tree, log Z and every cluster marginal from one trellis (its inside pass, then
    /// its outside pass).
    Infer(InferArgs),
    /// The log-potential (and cost) of a given tree, or of each jet's truth tree.
    Score(ScoreArgs),
    /// An exact summary of the posterior: the maximum-clade-credibility tree or the
    /// majority-rule consensus, each cluster labelled with its exact marginal.
    Summary(summary::SummaryArgs),
    /// Greedy agglomerative clustering: merge the pair with the best split potential.
    ///
    /// Poor on `hcc`: the myopic cost of a split is 0 when the weights across it are
    /// negative, so greedy merges the most dissimilar points first. For hcc and dasgupta,
    /// `trellis astar --approx` (any number of points) finds far better trees; `linkage
    /// --method average` is the classic baseline on similarities. Greedy fits the Ginkgo
    /// jet likelihood, whose splits all have a cost.
    Greedy(baselines::GreedyArgs),
    /// Beam search over agglomerative clusterings (the paper's baseline).
    ///
    /// Poor on `hcc`: the myopic cost of a split is 0 when the weights across it are
    /// negative, so the beam merges the most dissimilar points first. For hcc and
    /// dasgupta, `trellis astar --approx` (any number of points) finds far better trees;
    /// `linkage --method average` is the classic baseline on similarities. Beam search
    /// fits the Ginkgo jet likelihood (the trellis paper's baseline).
    Beam(baselines::BeamArgs),
    /// Classic linkage clustering (single, average, complete, Ward).
    Linkage(baselines::LinkageArgs),
    /// The lowest-cost hierarchy by A* search on the trellis: exact with an admissible
    /// heuristic (exploring only part of the trellis, up to 128 points), or approximate
    /// (--approx) for any number of points.
    Astar(astar::AstarArgs),
    /// Flat clusterings: exact inference over all partitions (the flat cluster trellis).
    #[command(subcommand)]
    Flat(flat::FlatCommand),
    /// Ginkgo jets: the toy parton-shower simulator.
    #[command(subcommand)]
    Ginkgo(GinkgoCommand),
    /// The exact number of binary hierarchies over N points, (2N-3)!!.
    Count(CountArgs),
    /// Run every exact inference on a built-in dataset (12 iris flowers).
    Demo,
    /// Interactive Bayesian hierarchical clustering: the Dirichlet diffusion tree sampler
    /// with triplet constraints and query strategies (Vikram & Dasgupta 2016).
    #[command(subcommand)]
    Interactive(interactive::InteractiveCommand),
}

/// The model and its input, shared by the inference commands.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("input").required(true).args(["weights", "points", "jets", "distances"])))]
pub struct ModelArgs {
    /// Split potential, log psi = -beta * cost: over weights (--weights, or the
    /// similarity of --points) `hcc` (hierarchical correlation clustering; weights of any
    /// sign) or `dasgupta` (Dasgupta's cost; weights >= 0); over distances (--distances,
    /// or the Euclidean distances of --points) the linkage potentials `linkage-average`,
    /// `linkage-complete`, `linkage-single` (cost: the average, largest or smallest
    /// distance between the two children); for --jets the Ginkgo likelihood: `ginkgo`
    /// (current) or `ginkgo-legacy` (the paper's).
    #[arg(long, value_name = "MODEL", value_parser = input::hierarchy_model)]
    pub model: ModelName,

    /// Jets file (JSON, the format of shared/data/ginkgo): every jet is its own problem
    /// and the output is one JSON object per jet per line, with its "id".
    #[arg(long, value_name = "FILE")]
    pub jets: Option<PathBuf>,

    /// Pairwise distances for the linkage potentials (--model linkage-average,
    /// linkage-complete, linkage-single): an N x N symmetric matrix of distances >= 0 or
    /// SciPy's condensed vector (one row), CSV without header or .npy, or `-` for standard
    /// input; the diagonal is ignored.
    /// (--points gives the Euclidean distances between its rows instead.)
    #[arg(long, value_name = "FILE")]
    pub distances: Option<PathBuf>,

    #[command(flatten)]
    pub data: DataArgs,

    #[command(flatten)]
    pub budget: BudgetArgs,

    /// Wall-clock limit in seconds (per jet with --jets). The exact trellis commands
    /// refuse up front when the library's planner estimates a longer run, and stop with
    /// an error when the limit is reached; `astar` stops its search (the approximate
    /// search returns its best tree so far, the exact one fails). `greedy`, `beam`,
    /// `score` and `--sparse` refuse it. A limit beyond what the clock can represent
    /// (centuries) is no limit.
    #[arg(long, value_name = "S", allow_negative_numbers = true)]
    pub time_limit: Option<f64>,
}

/// What every inference command runs: the model and its input, the engine
/// (the dense trellis or `--sparse`), and the person's feedback.
#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub sparse: sparse::SparseArgs,
    #[command(flatten)]
    pub feedback: TripletArgs,
    /// Keep the finished levels of the exact passes in DIR (created if missing) and resume
    /// from them: a `logz`, `map`, `marginals`, `sample`, `infer` or `summary` run of `hcc`,
    /// with or without --triplets (the blocked inside passes and, for marginals, the
    /// outside pass; a summary's own last pass is recomputed) that is killed part-way gives
    /// the identical answer when run again with the same DIR, which these commands share
    /// for the same input. Each level is written atomically (write, fsync, rename) with a
    /// header naming the run and a SHA-256 checksum; a DIR of another run (points, model,
    /// beta, weights, triplets) or a damaged file is refused (exit 2), never used. Other
    /// models, --jets and --sparse refuse it. Delete DIR when the answer is in.
    #[arg(long, value_name = "DIR", conflicts_with = "jets")]
    pub checkpoint: Option<PathBuf>,
}

/// A person's feedback on a hierarchy, which restricts the exact posterior.
#[derive(Args, Debug)]
pub struct TripletArgs {
    /// Triplet constraints, one per line: `a b c` (or `a,b,c`) meaning ({a, b}, c), a and b
    /// closer to each other than to c; point names, or 0-based indices when the points
    /// have none; `#` starts a comment. The answer is the model's posterior restricted to
    /// the trees in which every triplet holds (log Z, MAP, marginals, samples); triplets
    /// that no tree satisfies are refused naming one of the conflict. The model keeps its
    /// kernel (hcc: the blocked one; see docs/constraints.md). With --sparse beam, the
    /// sparse trellis is built from the beams that satisfy the triplets and the greedy
    /// tree under them, and its posterior is restricted the same way.
    #[arg(long, value_name = "FILE", conflicts_with = "jets")]
    pub triplets: Option<PathBuf>,
}

/// The inverse temperature and the memory cap, shared by the hierarchical
/// commands, `linkage` and `flat` (which say what they scale and cap in
/// their own words).
#[derive(Args, Debug, Clone)]
pub struct BudgetArgs {
    /// Inverse temperature: log psi = -beta * cost. Scales log Z, marginals and samples;
    /// the MAP tree does not depend on it.
    #[arg(
        long,
        default_value_t = 1.0,
        value_name = "B",
        allow_negative_numbers = true
    )]
    pub beta: f64,

    /// Refuse to run if the trellis tables need more than this many GiB
    /// [default: the memory available].
    #[arg(long, value_name = "GIB")]
    pub max_memory: Option<f64>,
}

/// The samples a command draws, shared by `sample`, `flat sample`, `flat
/// perturb-map` and `interactive sample` (the last two say what they draw).
#[derive(Args, Debug)]
pub struct SamplesArgs {
    /// Number of samples.
    #[arg(short = 'n', long = "num-samples", value_name = "K")]
    pub num_samples: usize,
    /// Seed of the random number generator (xoshiro256++); same seed, same samples.
    #[arg(long, default_value_t = 0, value_name = "S")]
    pub seed: u64,
}

/// Which clusters the readable marginals list, shared by `marginals`,
/// `infer` and `flat marginals`.
#[derive(Args, Debug)]
pub struct ListArgs {
    /// Only list clusters with probability >= P (clusters with p = 0 are never listed).
    #[arg(long, default_value_t = 0.0, value_name = "P", value_parser = probability)]
    pub min_p: f64,
    /// How many clusters the readable summary lists (JSON lists all).
    #[arg(long, default_value_t = 20, value_name = "K")]
    pub top: usize,
}

/// A dataset given as pairwise weights or as points with a similarity.
#[derive(Args, Debug, Clone)]
pub struct DataArgs {
    /// Pairwise weights: an N x N matrix, CSV without header or .npy (float64/float32),
    /// or `-` for standard input. Must be symmetric (up to 1e-6 relative rounding); the
    /// diagonal is ignored.
    #[arg(long, value_name = "FILE")]
    pub weights: Option<PathBuf>,

    /// Points, one per row: CSV or .npy, or `-` for standard input. A first CSV row is a
    /// header when none of its fields is a number; a first column headed name, id or
    /// label, or holding no number, is the points' names (see --names-column). Weights
    /// are the points' pairwise similarities (see --similarity and --center).
    #[arg(long, value_name = "FILE")]
    pub points: Option<PathBuf>,

    /// The column of --points that holds the points' names: a 0-based index, or `none`
    /// for no names column [default: the first column when its header is name, id or
    /// label (or empty), or when none of its values is a number].
    #[arg(long, requires = "points", value_name = "N|none", value_parser = input::names_column)]
    pub names_column: Option<trellis::io::NamesColumn>,

    /// Similarity for --points: cosine, rbf (exp(-gamma |x-y|^2)), dot product or
    /// expneg (exp(-|x-y|)) [default: cosine].
    #[arg(long, value_parser = input::choice::<SimilarityKind>(), requires = "points")]
    pub similarity: Option<SimilarityKind>,

    /// gamma of the rbf similarity [default: 1 / number of features].
    #[arg(long, requires = "points", value_name = "G")]
    pub gamma: Option<f64>,

    /// Subtract the mean off-diagonal similarity, giving positive and negative weights
    /// (the recipe of the trellis and A* papers for hcc).
    #[arg(long, requires = "points")]
    pub center: bool,
}

#[derive(Subcommand, Debug)]
enum GinkgoCommand {
    /// Simulate jets with their true trees and write them as a jets file (JSON) on stdout.
    Generate(generate::GenerateArgs),
}

#[derive(Args, Debug)]
pub struct MapArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Print one JSON object {"n", "log_potential", "cost", "tree"}.
    #[arg(long, conflicts_with = "newick")]
    pub json: bool,
    /// Print the tree in rooted Newick (`[&R] ...;`) with branch lengths from the merge
    /// heights (see --heights); leaves are the points' names, or their 0-based indices.
    #[arg(long)]
    pub newick: bool,
    /// With --newick: write each internal node's posterior cluster marginal (as
    /// `marginals` gives it) as its label, the phylogenetics convention for support
    /// values. Runs the outside pass as well.
    #[arg(long, requires = "newick", conflicts_with = "json")]
    pub support: bool,
    #[command(flatten)]
    pub dendrogram: trees::DendrogramArgs,
}

#[derive(Args, Debug)]
pub struct InferArgs {
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub list: ListArgs,
    /// Print one JSON object {"n", "log_z", "map": {"tree", "log_potential", "cost"},
    /// "clusters": [{"members", "p"}, ...]} (plus "names" when the points have names).
    #[arg(long, conflicts_with = "newick")]
    pub json: bool,
    /// Print the MAP tree in rooted Newick with branch lengths (cumulative cost) and each
    /// internal node's cluster marginal as its support value.
    #[arg(long)]
    pub newick: bool,
}

#[derive(Args, Debug)]
pub struct LogzArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Print one JSON object {"n", "log_z"}.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct MarginalsArgs {
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub list: ListArgs,
    /// Also print the marginal of this sub-hierarchy over some of the points: a nested
    /// JSON list of 0-based indices such as '[[0,1],2]', or Newick '((a,b),c)' whose
    /// leaf labels are the points' names (their indices when the points have no names).
    #[arg(long, value_name = "TREE")]
    pub subtree: Option<String>,
    /// Print one JSON object {"n", "log_z", "clusters": [{"members", "p"}, ...]}
    /// (plus "subtree_p" with --subtree).
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct SampleArgs {
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub samples: SamplesArgs,
    /// Print one JSON object {"n", "samples": [tree, ...]}.
    #[arg(long, conflicts_with = "newick")]
    pub json: bool,
    /// Print one rooted Newick tree per line, with branch lengths (see --heights).
    #[arg(long)]
    pub newick: bool,
    // With --linkage: one JSON array of linkage matrices, one per sample; with
    // --linkage-csv: the matrices one after another, separated by an empty line.
    #[command(flatten)]
    pub dendrogram: trees::DendrogramArgs,
}

#[derive(Args, Debug)]
#[command(group(ArgGroup::new("which").required(true).args(["tree", "truth"])))]
pub struct ScoreArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// The tree over all points (with --jets: over each jet's leaves): a nested JSON
    /// list of 0-based indices such as '[[0,1],[2,3]]', or Newick whose leaf labels are
    /// the points' names (as `map --newick` writes them), or their indices when the
    /// points have no names.
    #[arg(long, value_name = "TREE")]
    pub tree: Option<String>,
    /// Score each jet's "truth" tree (with --jets).
    #[arg(long)]
    pub truth: bool,
    /// Print one JSON object {"n", "log_potential", "cost", "tree"}.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
struct CountArgs {
    /// Number of points (leaves), at least 1.
    #[arg(value_name = "N")]
    n: usize,
    /// Print one JSON object {"n", "num_trees": "<decimal string>"}.
    #[arg(long)]
    json: bool,
}

/// Most worker threads `--threads` accepts.
const MAX_THREADS: usize = 256;

/// The `trellis` command: parses the arguments, runs, prints, and gives
/// the exit code (module docs).
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut out = BufWriter::new(output::stdout());
    let result = run(cli, &mut out).and_then(|text| output::put(&mut out, &text));
    let result = result.and_then(|()| out.flush().map_err(|e| output::WriteError(e).into()));
    let Err(e) = result else {
        return ExitCode::SUCCESS;
    };
    // Whatever is still buffered is not written after an error.
    let _ = out.into_parts();
    if let Some(w) = e.downcast_ref::<output::WriteError>() {
        // A closed pipe (e.g. `| head`) ends the output quietly.
        if w.0.kind() == std::io::ErrorKind::BrokenPipe {
            return ExitCode::SUCCESS;
        }
        let _ = writeln!(std::io::stderr(), "error: {w}");
        return ExitCode::from(1);
    }
    // A checkpoint that could not be written is a failed write.
    if let Some(t) = e.downcast_ref::<trellis::Error>()
        && matches!(t.kind(), trellis::ErrorKind::CheckpointWrite { .. })
    {
        let _ = writeln!(std::io::stderr(), "error: {}", message(&e));
        return ExitCode::from(1);
    }
    let text = message(&e);
    let _ = match flag_hint(&e) {
        Some(hint) => writeln!(std::io::stderr(), "error: {text}; {hint}"),
        None => writeln!(std::io::stderr(), "error: {text}"),
    };
    ExitCode::from(2)
}

/// The error's text. The library's "memory limit" is always the user's
/// `--max-memory` here (without it, the library speaks of the memory
/// available), so it is named as such.
fn message(e: &anyhow::Error) -> String {
    format!("{e:#}").replace("the memory limit of", "the --max-memory cap of")
}

/// A probability in [0, 1] (for `--min-p`).
pub fn probability(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(p) if (0.0..=1.0).contains(&p) => Ok(p),
        _ => Err(format!("must be between 0 and 1, not {s}")),
    }
}

/// The command-line flags that address a library error (the library's
/// messages name no flags).
fn flag_hint(e: &anyhow::Error) -> Option<&'static str> {
    use trellis::ErrorKind;
    let kind = e
        .chain()
        .find_map(|c| c.downcast_ref::<trellis::Error>())?
        .kind();
    Some(match kind {
        ErrorKind::SearchBudget { .. } => "raise --max-memory, or use --approx",
        ErrorKind::TimeLimit { .. } => {
            "raise --time-limit, or use an approximate method (astar --approx, --sparse beam)"
        }
        // The estimate's refusal names the ways out; these are their flags.
        ErrorKind::TimeBudget { .. } => "flags: --time-limit S, astar --approx, --sparse beam",
        _ => return None,
    })
}

/// Runs a command and returns what it prints on stdout, so that an error
/// leaves stdout empty. Commands whose output has many items (samples, jets,
/// the interactive loop's records) write them to `out` as they come instead,
/// after every check that can fail on the input.
fn run(cli: Cli, out: &mut dyn Write) -> anyhow::Result<String> {
    if let Some(t) = cli.threads {
        if !(1..=MAX_THREADS).contains(&t) {
            anyhow::bail!("--threads must be between 1 and {MAX_THREADS}, not {t}");
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build_global()?;
    }
    let progress = !cli.quiet;
    match cli.command {
        Command::Map(a) => commands::map(&a, progress),
        Command::Logz(a) => commands::logz(&a, progress),
        Command::Marginals(a) => commands::marginals(&a, progress),
        Command::Sample(a) => commands::sample(&a, progress, out),
        Command::Infer(a) => commands::infer(&a, progress),
        Command::Score(a) => commands::score(&a),
        Command::Summary(a) => summary::summary(&a, progress),
        Command::Count(a) => commands::count(a.n, a.json),
        Command::Greedy(a) => baselines::greedy(&a, progress),
        Command::Beam(a) => baselines::beam(&a, progress),
        Command::Linkage(a) => baselines::linkage(&a, progress),
        Command::Astar(a) => astar::run(&a, progress),
        Command::Flat(c) => flat::run(&c, progress, out),
        Command::Ginkgo(GinkgoCommand::Generate(a)) => generate::run(&a, out),
        Command::Demo => Ok(trellis::demo::run()?),
        Command::Interactive(c) => interactive::run(&c, out),
    }
}
