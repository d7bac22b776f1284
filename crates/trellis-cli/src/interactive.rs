//! `trellis interactive`: interactive Bayesian hierarchical clustering with the
//! Dirichlet diffusion tree (Vikram & Dasgupta 2016): the simulated interactive
//! loop and posterior samples under triplet constraints. (The paper's Fig. 6 /
//! S3 experiment is `trellis-repro interactive`, the sampler's benchmark
//! `trellis-repro interactive-bench`.)
//!
//! Both commands write their output as it comes (a tree per sample, a
//! record per query), after every check of the input: the DDT parameters
//! must give a finite likelihood (the library refuses a `--sigma`, `--sigma0`
//! or `--c` out of range), the jittered features must stay finite, and an
//! active query's candidates must fit in memory.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use clap::{Args, Subcommand};
use trellis::Named;
use trellis::ddt::{
    Chain, Dataset, Ddt, Hierarchy, LcaDepths, LoopOptions, ModelSpec, Rebuild, Simulation,
    Strategy, Triplet, jittered_model, named_message, parse_triplets,
};
use trellis::input::Naming;

use crate::input::choice;
use crate::output::put;
use trellis::print::LoopRecords;

#[derive(Subcommand, Debug)]
pub enum InteractiveCommand {
    /// Simulate the interactive loop: sample, query a simulated user who knows the
    /// target tree, enforce the triplet, repeat; print the triplet distance after
    /// every query.
    Simulate(SimulateArgs),
    /// Draw trees from the DDT posterior under triplet constraints (Newick lines).
    Sample(SampleArgs),
    /// Serve the interactive loop to a person: a local web page (127.0.0.1 only) that
    /// shows the sampler's queries and takes answers, stored in SQLite. Prints the URL
    /// as the first line on stdout; Ctrl-C stops it with every answer stored.
    Serve(ServeArgs),
}

/// The DDT model options (defaults: the reference's c = 1, mu0 = data mean, Sigma0 = I/2).
#[derive(Args, Debug, Clone)]
pub struct DdtArgs {
    /// Dataset: CSV (or `-` for standard input) with an optional header row (a first row
    /// without numbers); the first column is the point's name (the leaf names of the
    /// target tree), the others are numeric features.
    #[arg(long, value_name = "FILE.csv")]
    pub points: PathBuf,

    /// Divergence constant c of the divergence function a(t) = c / (1 - t), between
    /// 0.05 and 1e10.
    #[arg(long = "c", default_value_t = 1.0, value_name = "C")]
    pub c: f64,

    /// Brownian-motion variance per unit time, the diagonal of Sigma: a number or a
    /// fraction such as 1/9 (the same in every dimension), or var/K for each feature's
    /// sample variance divided by K. The reference's settings: Iris 1/9, Zoo var/4,
    /// 20 Newsgroups var/2.
    #[arg(long, default_value = "var/2", value_name = "SPEC")]
    pub sigma: String,

    /// Variance of the start location at t = 0 (Sigma0, same syntax as --sigma).
    /// Its mean is the data mean.
    #[arg(long, default_value = "1/2", value_name = "SPEC")]
    pub sigma0: String,

    /// Leaf observation noise, in units of Sigma (as if the leaves were observed at
    /// time 1 + eps); keeps the posterior proper when points coincide. 0 is allowed
    /// when no two points are equal.
    #[arg(long, default_value_t = 0.01, value_name = "EPS")]
    pub leaf_noise: f64,

    /// Add N(0, SD^2) noise to every feature before modelling, seeded by --seed (the
    /// reference used 0.01 for Zoo).
    #[arg(long, default_value_t = 0.0, value_name = "SD")]
    pub jitter: f64,
}

/// The loop's options of `simulate`.
#[derive(Args, Debug, Clone)]
pub struct LoopArgs {
    /// Target tree in Newick (any number of children per node) over the point names.
    #[arg(long, value_name = "TREE.nwk")]
    pub target: PathBuf,

    /// Number of queries.
    #[arg(long, value_name = "Q")]
    pub queries: usize,

    /// Chain iterations (one SPR and one time proposal each) between queries.
    #[arg(long, default_value_t = 100, value_name = "I")]
    pub iters_per_query: usize,

    /// Dataset shown by a subtree query (random, active, interleaved).
    #[arg(long, default_value_t = 10, value_name = "S")]
    pub subset_size: usize,

    /// Random subsets an active query chooses from (L in the paper).
    #[arg(long, default_value_t = 20, value_name = "L")]
    pub candidates: usize,

    /// How a violated triplet rebuilds the subtree under LCA(a, b) with BUILD:
    /// `guided` follows the current tree's splits and times as far as the constraints
    /// allow; `balanced` splits the components by size in random order with times
    /// halving downwards (the reference code's choice).
    #[arg(long, value_parser = choice::<Rebuild>(), default_value = "guided")]
    pub rebuild: Rebuild,
}

#[derive(Args, Debug)]
pub struct SimulateArgs {
    #[command(flatten)]
    pub model: DdtArgs,
    #[command(flatten)]
    pub run: LoopArgs,
    /// Query strategy.
    #[arg(long, value_parser = choice::<Strategy>())]
    pub strategy: Strategy,
    /// Seed of the sampler and of the simulated user (xoshiro256++); same seed, same run.
    #[arg(long, default_value_t = 0, value_name = "S")]
    pub seed: u64,
    /// JSON Lines: the state before any query, then one object per query
    /// {"query", "triplet_distance", "constraints", "log_likelihood"}; the last line
    /// also has "tree" (Newick, leaf names) and "triplets" ([a, b, c] names: ({a,b},c)).
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
#[command(mut_arg("num_samples", |a| a.help("Number of trees to print")))]
#[command(mut_arg("seed", |a| a.help("Seed (xoshiro256++); same seed, same trees")))]
pub struct SampleArgs {
    #[command(flatten)]
    pub model: DdtArgs,
    /// Triplet constraints, one per line: three point names `a b c` (or `a,b,c`)
    /// meaning ({a, b}, c); `#` starts a comment.
    #[arg(long, value_name = "FILE")]
    pub triplets: Option<PathBuf>,
    #[command(flatten)]
    pub samples: crate::SamplesArgs,
    /// Iterations before the first tree.
    #[arg(long, default_value_t = 10_000, value_name = "B")]
    pub burn_in: usize,
    /// Iterations between printed trees.
    #[arg(long, default_value_t = 1_000, value_name = "T")]
    pub thin: usize,
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    #[command(flatten)]
    pub model: DdtArgs,
    /// SQLite database of the sessions (created when missing; WAL files beside it).
    #[arg(long, default_value = "trellis-sessions.sqlite", value_name = "FILE")]
    pub db: PathBuf,
    /// Session name; one database holds many [default: the data file's name].
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,
    /// Port on 127.0.0.1; 0 picks a free one.
    #[arg(long, default_value_t = 8000, value_name = "P")]
    pub port: u16,
    /// Seed of the sampler and the queries (xoshiro256++).
    #[arg(long, default_value_t = 0, value_name = "S")]
    pub seed: u64,
    /// Query strategy of a new session (the page can change it; a resumed session
    /// keeps its own): random, active, interleaved, simple or smart.
    #[arg(long, value_parser = choice::<Strategy>(), default_value = "active")]
    pub strategy: Strategy,
    /// Chain iterations between an answer and the next query (at least).
    #[arg(long, default_value_t = 100, value_name = "I")]
    pub iters_per_answer: u64,
    /// Points shown by a random, active or interleaved query.
    #[arg(long, default_value_t = 10, value_name = "S")]
    pub subset_size: usize,
    /// Random subsets an active query chooses from (L in the paper).
    #[arg(long, default_value_t = 20, value_name = "L")]
    pub candidates: usize,
    /// The CSV column that holds each point's image: a path relative to the CSV's
    /// directory (no `..`, not absolute) of a PNG, JPEG, GIF, WebP or SVG file (checked
    /// by extension and contents; at most 8 MiB each, 256 MiB in all). Not a feature.
    /// The page shows the images as thumbnails in the queries, the tree and the search;
    /// any bad row stops the server at start (exit 2) with a message naming it.
    #[arg(long, value_name = "COLUMN")]
    pub images: Option<String>,
    /// Budget of the exact panel: the exact posterior under the triplets in force (every
    /// cluster's marginal, the MAP and MCC trees) is shown when the planner estimates its
    /// computation on this machine's cores at most S seconds (and within the memory
    /// available), and recomputed after every answer; larger datasets get none. The
    /// planner alone decides (as for `--time-limit`), so the number of points it admits
    /// depends on the machine: 22 on 2 cores with the default. 0 turns the exact
    /// panel off.
    #[arg(long, default_value_t = 10.0, value_name = "S", value_parser = seconds)]
    pub exact_seconds: f64,
}

/// A number of seconds >= 0 (`--exact-seconds`).
fn seconds(s: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(t) if t.is_finite() && t >= 0.0 => Ok(t),
        _ => Err(format!("expected a number of seconds >= 0, not {s:?}")),
    }
}

pub fn run(cmd: &InteractiveCommand, out: &mut dyn Write) -> Result<String> {
    match cmd {
        InteractiveCommand::Simulate(a) => simulate(a, out)?,
        InteractiveCommand::Sample(a) => sample(a, out)?,
        InteractiveCommand::Serve(a) => put(out, &serve(a)?)?,
    }
    Ok(String::new())
}

fn serve(a: &ServeArgs) -> Result<String> {
    let config = trellis_web::Config {
        db: a.db.clone(),
        session: a.session.clone(),
        port: a.port,
        seed: a.seed,
        c: a.model.c,
        sigma: a.model.sigma.clone(),
        sigma0: a.model.sigma0.clone(),
        leaf_noise: a.model.leaf_noise,
        jitter: a.model.jitter,
        strategy: a.strategy,
        iters_per_answer: a.iters_per_answer,
        subset_size: a.subset_size,
        candidates: a.candidates,
        images: a.images.clone(),
        exact_seconds: a.exact_seconds,
        ..trellis_web::Config::new(a.model.points.clone())
    };
    trellis_web::serve(&config, |addr| {
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "http://{addr}/").and_then(|_| out.flush());
    })?;
    Ok(String::new())
}

/// A text file (`-`: standard input), bounded as every input is.
pub fn read_text(path: &Path) -> Result<String> {
    Ok(trellis::input::read_text(path, None, Naming::Flags)?)
}

impl DdtArgs {
    /// Reads `--points` and builds the model of the flags with the
    /// library's [`interactive_model`] (the jitter seeded by `seed`).
    pub fn model(&self, seed: u64) -> Result<(Dataset, Ddt)> {
        let mut points = Dataset::read(&self.points)?;
        let spec = ModelSpec {
            c: self.c,
            sigma: &self.sigma,
            sigma0: &self.sigma0,
            leaf_noise: self.leaf_noise,
        };
        let jitter = (self.jitter, seed);
        let model = jittered_model(&mut points, &spec, jitter, &self.points, Naming::Flags)?;
        Ok((points, model))
    }
}

/// The target tree of `--target`, as the depths of its leaves' common ancestors.
pub fn read_target(path: &Path, points: &Dataset) -> Result<LcaDepths> {
    let text = read_text(path)?;
    let h = Hierarchy::parse_newick(&text)
        .map_err(|e| anyhow!("cannot parse the target {}: {e}", path.display()))?;
    h.lca_depths(points.names())
        .map_err(|e| anyhow!("the target {} does not fit the points: {e}", path.display()))
}

/// The loop's options of the flags, checked.
pub fn loop_options(run: &LoopArgs, strategy: Strategy) -> Result<LoopOptions> {
    let options = LoopOptions {
        strategy,
        iters_per_query: run.iters_per_query,
        subset_size: run.subset_size,
        candidates: run.candidates,
    };
    Ok(options.checked(Naming::Flags)?)
}

/// A library error about triplets, with point names instead of indices.
fn named_error(e: trellis::Error, names: &[String]) -> anyhow::Error {
    anyhow!(named_message(&e, names))
}

/// A simulated loop from `seed`: a chain on `model` rebuilding as `rebuild` says.
pub fn new_simulation(
    model: Ddt,
    target: LcaDepths,
    options: LoopOptions,
    rebuild: Rebuild,
    seed: u64,
) -> trellis::Result<Simulation> {
    let mut sampler = Chain::new(model, seed);
    sampler.set_rebuild(rebuild);
    Simulation::new(sampler, target, options, seed)
}

fn simulate(a: &SimulateArgs, out: &mut dyn Write) -> Result<()> {
    let (points, model) = a.model.model(a.seed)?;
    let target = read_target(&a.run.target, &points)?;
    let options = loop_options(&a.run, a.strategy)?;
    let names = points.names();
    let named = |e| named_error(e, names);
    let mut sim = new_simulation(model, target, options, a.run.rebuild, a.seed).map_err(named)?;
    // The state before any query, then one record per query, each written
    // as it comes.
    let records = LoopRecords {
        json: a.json,
        names,
    };
    let strategy = a.strategy.name();
    let (queries, iters) = (a.run.queries, a.run.iters_per_query);
    put(out, &records.head(queries, strategy, iters, a.seed))?;
    let mut record = sim.record(None);
    for q in 0..=queries {
        if q > 0 {
            record = sim.next_query().map_err(named)?;
        }
        put(out, &records.line(&record, &sim, q == queries)?)?;
    }
    put(out, &records.foot(&sim))
}

fn read_triplets(path: &Path, names: &[String]) -> Result<Vec<Triplet>> {
    parse_triplets(&read_text(path)?, names).with_context(|| path.display().to_string())
}

fn sample(a: &SampleArgs, out: &mut dyn Write) -> Result<()> {
    let (points, model) = a.model.model(a.samples.seed)?;
    let names = points.names();
    let triplets = match &a.triplets {
        Some(p) => read_triplets(p, names)?,
        None => Vec::new(),
    };
    let mut s = Chain::with_constraints(model, triplets, a.samples.seed)
        .map_err(|e| named_error(e, names))?;
    s.run(a.burn_in);
    // Each tree is written as it is drawn.
    for k in 0..a.samples.num_samples {
        if k > 0 {
            s.run(a.thin);
        }
        put(out, &(s.tree().to_newick(names) + "\n"))?;
    }
    Ok(())
}
