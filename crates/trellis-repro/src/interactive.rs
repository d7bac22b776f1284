//! `trellis-repro interactive`: the experiment of *Interactive Bayesian
//! Hierarchical Clustering* (Vikram & Dasgupta 2016, Fig. 6 / S3): the
//! simulated interactive loop of the Dirichlet diffusion tree sampler run for
//! every query strategy over several seeds, the triplet distance to the target
//! after each query, against the vanilla DDT and average linkage.
//!
//! The model and loop options are the flags of `trellis interactive
//! simulate`, taken from the CLI crate (`trellis_cli::interactive`).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use rayon::prelude::*;
use serde_json::json;
use trellis::baselines::{Linkage, linkage};
use trellis::ddt::{
    Chain, Dataset, Ddt, LcaDepths, LoopOptions, Params, Record, Strategy, triplet_distance,
};
use trellis_cli::interactive::{
    DdtArgs, LoopArgs, loop_options, new_simulation, read_target, read_text,
};

use crate::svg::{Plot, Series, Style};

#[derive(Args, Debug)]
pub struct ExperimentArgs {
    #[command(flatten)]
    pub model: DdtArgs,
    #[command(flatten)]
    pub run: LoopArgs,
    /// Runs per strategy (seeds 0..N-1), averaged.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub seeds: u64,
    /// Write the plot (triplet distance against queries) to this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    pub svg: Option<PathBuf>,
    /// Title of the plot.
    #[arg(
        long,
        default_value = "Triplet distance to the target",
        value_name = "TEXT"
    )]
    pub title: String,
    /// Print one JSON object with every curve instead of a Markdown table.
    #[arg(long)]
    pub json: bool,
}

/// The curves of the experiment, in plot order: each strategy (vanilla: no
/// queries) and its name.
const CURVES: [(Strategy, &str); 6] = [
    (Strategy::Vanilla, "vanilla"),
    (Strategy::Simple, "simple"),
    (Strategy::Random, "random"),
    (Strategy::Active, "active"),
    (Strategy::Interleaved, "interleaved"),
    (Strategy::Smart, "smart"),
];

/// A curve's label in the table and the plot.
fn label(s: Strategy, name: &'static str) -> &'static str {
    if s == Strategy::Vanilla {
        "vanilla DDT"
    } else {
        name
    }
}

/// The records of a simulated loop of `queries` queries from `seed`.
fn run_loop(
    model: Ddt,
    target: LcaDepths,
    options: LoopOptions,
    rebuild: trellis::ddt::Rebuild,
    queries: usize,
    seed: u64,
) -> Result<Vec<Record>> {
    let mut sim = new_simulation(model, target, options, rebuild, seed)?;
    let mut records = vec![sim.record(None)];
    for _ in 0..queries {
        records.push(sim.next_query()?);
    }
    Ok(records)
}

/// Runs every curve and returns the Markdown table (or the JSON object).
pub fn experiment(a: &ExperimentArgs) -> Result<String> {
    if a.seeds == 0 {
        bail!("--seeds must be at least 1");
    }
    // The figure's directory first, so that a bad --svg fails before the runs.
    if let Some(path) = &a.svg {
        if path.is_dir() {
            bail!(
                "--svg {} is a directory: give the figure's file name",
                path.display()
            );
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            crate::svg::create_dir(dir)?;
        }
    }
    let (points0, _) = a.model.model(0)?;
    let target = read_target(&a.run.target, &points0)?;
    // Average linkage on Euclidean distances (seed 0's points when jittered).
    let n = points0.len();
    let mut dist = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            dist[i * n + j] = points0
                .row(i)
                .iter()
                .zip(points0.row(j))
                .map(|(x, y)| (x - y) * (x - y))
                .sum::<f64>()
                .sqrt();
        }
    }
    let avg_tree = linkage(&dist, n, Linkage::Average)?;
    let (avg_td, resolved) = triplet_distance(&target, &LcaDepths::from_tree(&avg_tree, n)?);
    let runs: Vec<(Strategy, u64)> = CURVES
        .iter()
        .flat_map(|&(s, _)| (0..a.seeds).map(move |seed| (s, seed)))
        .collect();
    let start = Instant::now();
    let results: Vec<Result<Vec<f64>>> = runs
        .par_iter()
        .map(|&(s, seed)| {
            let (_, model) = a.model.model(seed)?;
            let options = loop_options(&a.run, s)?;
            let records = run_loop(
                model,
                target.clone(),
                options,
                a.run.rebuild,
                a.run.queries,
                seed,
            )?;
            Ok(records.iter().map(|r| r.triplet_distance).collect())
        })
        .collect();
    let seconds = start.elapsed().as_secs_f64();
    // (name, label, mean, sd) per curve.
    let mut curves: Vec<(&str, &str, Vec<f64>, Vec<f64>)> = Vec::new();
    for (k, &(s, name)) in CURVES.iter().enumerate() {
        let mut sum = vec![0.0; a.run.queries + 1];
        let mut sq = vec![0.0; a.run.queries + 1];
        for r in &results[k * a.seeds as usize..(k + 1) * a.seeds as usize] {
            let r = r.as_ref().map_err(|e| anyhow!("{e:#}"))?;
            for (q, &td) in r.iter().enumerate() {
                sum[q] += td;
                sq[q] += td * td;
            }
        }
        let m = a.seeds as f64;
        let mean: Vec<f64> = sum.iter().map(|x| x / m).collect();
        let sd: Vec<f64> = sq
            .iter()
            .zip(&mean)
            .map(|(q, mu)| (q / m - mu * mu).max(0.0).sqrt())
            .collect();
        curves.push((name, label(s, name), mean, sd));
    }
    if let Some(path) = &a.svg {
        let step = a.run.queries.div_ceil(200).max(1);
        let colors = [
            "#7f7f7f", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#d62728",
        ];
        let plot = Plot {
            title: a.title.clone(),
            x_label: format!("queries (one every {} iterations)", a.run.iters_per_query),
            y_label: "triplet distance to the target".into(),
            log_x: false,
            series: curves
                .iter()
                .zip(colors)
                .map(|((_, label, mean, _), color)| Series {
                    label: label.to_string(),
                    color,
                    style: Style::Line,
                    // At most about 200 points per curve keeps the file small.
                    points: mean
                        .iter()
                        .enumerate()
                        .filter(|(q, _)| q % step == 0 || *q == mean.len() - 1)
                        .map(|(q, &y)| (q as f64, y, 0.0))
                        .collect(),
                })
                .collect(),
            hlines: vec![("average linkage".into(), avg_td, "#000000")],
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            crate::svg::create_dir(dir)?;
        }
        crate::svg::write_figure(path, &plot.render())?;
    }
    let q = a.run.queries;
    if a.json {
        let v = json!({
            "points": n,
            "resolved_target_triplets": resolved,
            "queries": q,
            "iters_per_query": a.run.iters_per_query,
            "seeds": a.seeds,
            "seconds": seconds,
            "average_linkage": avg_td,
            "curves": curves.iter().map(|(name, _, mean, sd)| json!({
                "strategy": name, "mean": mean, "sd": sd,
            })).collect::<Vec<_>>(),
        });
        return Ok(serde_json::to_string(&v)? + "\n");
    }
    let mut cols: Vec<usize> = [0, q / 10, q / 4, q / 2, 3 * q / 4, q].to_vec();
    cols.dedup();
    let mut out = String::new();
    writeln!(
        out,
        "Triplet distance (mean ± sd over {} seeds) after k queries, one every {} iterations; \
         {n} points, {resolved} resolved target triplets; {seconds:.1} s.\n",
        a.seeds, a.run.iters_per_query
    )?;
    write!(out, "| strategy |")?;
    for c in &cols {
        write!(out, " k = {c} |")?;
    }
    write!(out, "\n|---|")?;
    for _ in &cols {
        write!(out, "---|")?;
    }
    out.push('\n');
    for (_, label, mean, sd) in &curves {
        write!(out, "| {label} |")?;
        for &c in &cols {
            write!(out, " {:.3} ± {:.3} |", mean[c], sd[c])?;
        }
        out.push('\n');
    }
    write!(out, "| average linkage |")?;
    for _ in &cols {
        write!(out, " {avg_td:.3} |")?;
    }
    out.push('\n');
    Ok(out)
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Dataset (CSV as for simulate) [default: 150 synthetic points in 4 dimensions, 3 clusters].
    #[arg(long, value_name = "FILE.csv")]
    pub points: Option<PathBuf>,
    /// Sigma as for simulate.
    #[arg(long, default_value = "1/9", value_name = "SPEC")]
    pub sigma: String,
    /// Iterations to time (each one SPR and one time proposal).
    #[arg(long, default_value_t = 200_000, value_name = "K")]
    pub iters: usize,
    /// Also time the sampler under this many random triplets of a random tree.
    #[arg(long, default_value_t = 500, value_name = "M")]
    pub constraints: usize,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

fn synthetic_points(n: usize, d: usize) -> Dataset {
    use rand::RngExt;
    let mut rng = trellis::random::rng(7);
    let rows = (0..n)
        .map(|i| {
            (0..d)
                .map(|j| ((i % 3) * (j + 1)) as f64 + rng.random::<f64>() - 0.5)
                .collect()
        })
        .collect();
    Dataset::new((0..n).map(|i| i.to_string()).collect(), rows).expect("valid synthetic points")
}

/// `trellis-repro interactive-bench`: the DDT sampler's speed.
pub fn bench(a: &BenchArgs) -> Result<String> {
    let points = match &a.points {
        Some(p) => {
            let text = read_text(p)?;
            Dataset::parse_csv(&text).map_err(|e| anyhow!("cannot parse {}: {e}", p.display()))?
        }
        None => synthetic_points(150, 4),
    };
    let params = Params::from_specs(&points, 1.0, &a.sigma, "0.5", 0.01).context("--sigma")?;
    let model = Ddt::new(&points, params)?;
    let n = points.len();
    let time = |s: &mut Chain| {
        s.run(1000);
        let before = s.stats();
        let t0 = Instant::now();
        s.run(a.iters);
        let secs = t0.elapsed().as_secs_f64();
        let st = s.stats();
        let spr = (st.spr_proposed - before.spr_proposed) as f64;
        let tm = (st.time_proposed - before.time_proposed) as f64;
        let acc = (st.spr_accepted - before.spr_accepted) as f64 / spr;
        ((spr + tm) / secs, acc, secs)
    };
    let mut free = Chain::new(model.clone(), 1);
    let (rate, acc, secs) = time(&mut free);
    // SPR proposals alone.
    let t0 = Instant::now();
    for _ in 0..a.iters {
        free.spr();
    }
    let spr_rate = a.iters as f64 / t0.elapsed().as_secs_f64();
    // Constraints: random triplets of a random tree (a BUILD tree of random triplets).
    let mut s = Chain::new(model, 2);
    let target = Chain::new(Ddt::new(&points, s.model().params().clone())?, 99)
        .tree()
        .lca_depths();
    let all = target.triplets();
    let mut picked = 0;
    let mut k = 0usize;
    while picked < a.constraints && k < all.len() {
        s.add_constraint(all[(k * 7919) % all.len()])?;
        picked += 1;
        k += 1;
    }
    let (c_rate, cacc, csecs) = time(&mut s);
    if a.json {
        return Ok(serde_json::to_string(&json!({
            "points": n,
            "dim": points.dim(),
            "iterations": a.iters,
            "proposals_per_second": rate,
            "spr_proposals_per_second": spr_rate,
            "spr_acceptance": acc,
            "constraints": picked,
            "constrained_proposals_per_second": c_rate,
            "constrained_spr_acceptance": cacc,
        }))? + "\n");
    }
    Ok(format!(
        "{n} points, {} features; {} iterations (one SPR and one time proposal each), one thread\n\
         unconstrained:        {rate:>12.0} proposals/s  ({secs:.2} s, SPR acceptance {acc:.3})\n\
         SPR proposals alone:  {spr_rate:>12.0} proposals/s\n\
         {picked:>4} constraints:     {c_rate:>12.0} proposals/s  ({csecs:.2} s, SPR acceptance {cacc:.3})\n",
        points.dim(),
        a.iters
    ))
}
