//! `trellis interactive`: interactive Bayesian hierarchical clustering with the
//! Dirichlet diffusion tree (Vikram & Dasgupta 2016): the simulated interactive
//! loop and posterior samples under triplet constraints. (The paper's Fig. 6 /
//! S3 experiment is `trellis-repro interactive`, the sampler's benchmark
//! `trellis-repro interactive-bench`.)

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, Subcommand, ValueEnum};
use serde_json::json;
use trellis::ddt::{
    Chain, Dataset, Ddt, Hierarchy, LcaDepths, LoopOptions, Params, Rebuild, Record, Simulation,
    Strategy, Triplet, named_message, parse_triplets, variance,
};

#[derive(Subcommand, Debug)]
pub enum InteractiveCommand {
    /// Simulate the interactive loop: sample, query a simulated user who knows the
    /// target tree, enforce the triplet, repeat; print the triplet distance after
    /// every query.
    Simulate(SimulateArgs),
    /// Draw trees from the DDT posterior under triplet constraints (Newick lines).
    Sample(SampleArgs),
}

/// The DDT model options (defaults: the reference's c = 1, mu0 = data mean, Sigma0 = I/2).
#[derive(Args, Debug, Clone)]
pub struct DdtArgs {
    /// Dataset: CSV (or `-` for standard input) with an optional header row (a first row
    /// without numbers); the first column is the point's name (the leaf names of the
    /// target tree), the others are numeric features.
    #[arg(long, value_name = "FILE.csv")]
    pub points: PathBuf,

    /// Divergence constant c of the divergence function a(t) = c / (1 - t).
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

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrategyArg {
    /// No queries (the vanilla DDT baseline).
    Vanilla,
    /// Three random points; the user names the odd one out.
    Simple,
    /// The tree induced on --subset-size random points.
    Random,
    /// The subset of highest tree-distance variance among --candidates random ones.
    Active,
    /// Random and active alternately.
    Interleaved,
    /// The whole tree.
    Smart,
}

impl StrategyArg {
    fn strategy(self) -> Strategy {
        let name = self.to_possible_value().expect("every strategy has a name");
        Strategy::from_name(name.get_name()).expect("the library's name")
    }
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
    #[arg(long, value_enum, default_value_t = RebuildArg::Guided)]
    pub rebuild: RebuildArg,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RebuildArg {
    /// Follow the current tree.
    Guided,
    /// Size-balanced, random order (the reference code).
    Balanced,
}

#[derive(Args, Debug)]
pub struct SimulateArgs {
    #[command(flatten)]
    pub model: DdtArgs,
    #[command(flatten)]
    pub run: LoopArgs,
    /// Query strategy.
    #[arg(long, value_enum)]
    pub strategy: StrategyArg,
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
pub struct SampleArgs {
    #[command(flatten)]
    pub model: DdtArgs,
    /// Triplet constraints, one per line: three point names `a b c` (or `a,b,c`)
    /// meaning ({a, b}, c); `#` starts a comment.
    #[arg(long, value_name = "FILE")]
    pub triplets: Option<PathBuf>,
    /// Number of trees to print.
    #[arg(short = 'n', long = "num-samples", value_name = "K")]
    pub num_samples: usize,
    /// Seed (xoshiro256++); same seed, same trees.
    #[arg(long, default_value_t = 0, value_name = "S")]
    pub seed: u64,
    /// Iterations before the first tree.
    #[arg(long, default_value_t = 10_000, value_name = "B")]
    pub burn_in: usize,
    /// Iterations between printed trees.
    #[arg(long, default_value_t = 1_000, value_name = "T")]
    pub thin: usize,
}

pub fn run(cmd: &InteractiveCommand) -> Result<String> {
    match cmd {
        InteractiveCommand::Simulate(a) => simulate(a),
        InteractiveCommand::Sample(a) => sample(a),
    }
}

/// A text file (`-`: standard input), bounded as every input is.
fn read_text(path: &Path) -> Result<String> {
    crate::input::read_text(path, None)
}

fn read_points(args: &DdtArgs, seed: u64) -> Result<Dataset> {
    let mut points = Dataset::read(&args.points)?;
    if points.len() < 3 {
        bail!(
            "{} has {} points; interactive clustering needs at least 3",
            args.points.display(),
            points.len()
        );
    }
    if !(args.jitter >= 0.0 && args.jitter.is_finite()) {
        bail!("--jitter must be >= 0 and finite, got {}", args.jitter);
    }
    if args.jitter > 0.0 {
        points.jitter(args.jitter, seed ^ 0x71_77e5);
    }
    Ok(points)
}

/// The variance of a flag's spec (see [`variance`]).
fn variance_spec(spec: &str, points: &Dataset, flag: &str) -> Result<Vec<f64>> {
    variance(spec, points).with_context(|| flag.to_string())
}

fn model_of(args: &DdtArgs, points: &Dataset) -> Result<Ddt> {
    let params = Params {
        c: args.c,
        sigma: variance_spec(&args.sigma, points, "--sigma")?,
        sigma0: variance_spec(&args.sigma0, points, "--sigma0")?,
        mu0: points.mean(),
        leaf_noise: args.leaf_noise,
    };
    Ok(Ddt::new(points, params)?)
}

fn read_target(path: &Path, points: &Dataset) -> Result<LcaDepths> {
    let text = read_text(path)?;
    let h = Hierarchy::parse_newick(&text)
        .map_err(|e| anyhow!("cannot parse the target {}: {e}", path.display()))?;
    h.lca_depths(points.names())
        .map_err(|e| anyhow!("the target {} does not fit the points: {e}", path.display()))
}

fn loop_options(run: &LoopArgs, strategy: Strategy) -> Result<LoopOptions> {
    if run.subset_size < 3 {
        bail!("--subset-size must be at least 3, got {}", run.subset_size);
    }
    if run.candidates == 0 {
        bail!("--candidates must be at least 1");
    }
    Ok(LoopOptions {
        strategy,
        iters_per_query: run.iters_per_query,
        subset_size: run.subset_size,
        candidates: run.candidates,
    })
}

/// A library error about triplets, with point names instead of indices.
fn named_error(e: trellis::Error, names: &[String]) -> anyhow::Error {
    anyhow!(named_message(&e, names))
}

fn run_loop(
    model: Ddt,
    target: LcaDepths,
    options: LoopOptions,
    rebuild: RebuildArg,
    queries: usize,
    seed: u64,
) -> Result<(Vec<Record>, Simulation)> {
    let mut sampler = Chain::new(model, seed);
    sampler.set_rebuild(match rebuild {
        RebuildArg::Guided => Rebuild::Guided,
        RebuildArg::Balanced => Rebuild::Balanced,
    });
    let mut sim = Simulation::new(sampler, target, options, seed)?;
    Ok((sim.run(queries)?, sim))
}

fn simulate(a: &SimulateArgs) -> Result<String> {
    let points = read_points(&a.model, a.seed)?;
    let model = model_of(&a.model, &points)?;
    let target = read_target(&a.run.target, &points)?;
    let options = loop_options(&a.run, a.strategy.strategy())?;
    let names = points.names();
    let (records, sim) = run_loop(model, target, options, a.run.rebuild, a.run.queries, a.seed)
        .map_err(|e| match e.downcast::<trellis::Error>() {
            Ok(e) => named_error(e, names),
            Err(e) => e,
        })?;
    let tree = sim.sampler().tree().to_newick(names);
    let triplets: Vec<[&str; 3]> = sim
        .sampler()
        .constraints()
        .iter()
        .map(|t| {
            [
                names[t.a].as_str(),
                names[t.b].as_str(),
                names[t.c].as_str(),
            ]
        })
        .collect();
    let mut out = String::new();
    if a.json {
        let last = records.len() - 1;
        for (i, r) in records.iter().enumerate() {
            let mut v = json!({
                "query": r.query,
                "triplet_distance": r.triplet_distance,
                "constraints": r.constraints,
                "log_likelihood": r.log_likelihood,
            });
            if i == last {
                v["tree"] = json!(tree);
                v["triplets"] = json!(triplets);
            }
            out.push_str(&serde_json::to_string(&v)?);
            out.push('\n');
        }
    } else {
        writeln!(
            out,
            "# {} queries ({}), {} iterations between queries, seed {}",
            a.run.queries,
            a.strategy.strategy().name(),
            a.run.iters_per_query,
            a.seed
        )?;
        writeln!(
            out,
            "{:>6}  {:>16}  {:>11}  {:>14}  triplet",
            "query", "triplet_distance", "constraints", "log_likelihood"
        )?;
        for r in &records {
            let t = r
                .triplet
                .map(|t| format!("({{{}, {}}}, {})", names[t.a], names[t.b], names[t.c]))
                .unwrap_or_default();
            writeln!(
                out,
                "{:>6}  {:>16.4}  {:>11}  {:>14.3}  {t}",
                r.query, r.triplet_distance, r.constraints, r.log_likelihood
            )?;
        }
        let st = sim.sampler().stats();
        writeln!(
            out,
            "# SPR acceptance {:.3}, time-move acceptance {:.3}",
            st.spr_accepted as f64 / st.spr_proposed.max(1) as f64,
            st.time_accepted as f64 / st.time_proposed.max(1) as f64
        )?;
        writeln!(out, "{tree}")?;
    }
    Ok(out)
}

fn read_triplets(path: &Path, names: &[String]) -> Result<Vec<Triplet>> {
    parse_triplets(&read_text(path)?, names).with_context(|| path.display().to_string())
}

fn sample(a: &SampleArgs) -> Result<String> {
    let points = read_points(&a.model, a.seed)?;
    let model = model_of(&a.model, &points)?;
    let names = points.names();
    let triplets = match &a.triplets {
        Some(p) => read_triplets(p, names)?,
        None => Vec::new(),
    };
    let mut s =
        Chain::with_constraints(model, triplets, a.seed).map_err(|e| named_error(e, names))?;
    s.run(a.burn_in);
    let mut out = String::new();
    for k in 0..a.num_samples {
        if k > 0 {
            s.run(a.thin);
        }
        out.push_str(&s.tree().to_newick(names));
        out.push('\n');
    }
    Ok(out)
}
