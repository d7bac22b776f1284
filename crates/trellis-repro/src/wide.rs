//! `trellis-repro astar-wide`: approximate A* at the paper's scale (issue 15).
//!
//! - **Fig. 9 on ALOI.** The A* paper's Fig. 9 plots, on benchmark subsets
//!   too large for the exact search, the cost of approximate A* minus the
//!   cost of the greedy baseline (average linkage), mean ± s.e. over 5
//!   stratified samples per size. Its setting (§6): cosine similarity, the
//!   mean similarity subtracted, hierarchical correlation clustering cost,
//!   approximate A* started from the greedy tree with top-K sampling, rounds
//!   and the `h_cc` heuristic. The paper states no budget; ours is a
//!   deterministic number of explored vertices (`--max-explored`).
//!
//!   The ALOI features we have are the 599 distinct points (29 classes)
//!   inside the authors' subsets (`../shared/data/aloi`, both folders). A
//!   subset of `N` points is drawn stratified by class (each class gets its
//!   share of `N`, largest remainders first, points drawn uniformly within
//!   it) with seed `s`; `N = 599` is every point (the seeds then differ only
//!   in the search's sampler). Weights: `S = X Xᵀ` on the unit-normalised
//!   features, minus the mean of all `N²` entries, zero diagonal (the
//!   recipe of the data's README).
//! - **Ginkgo jets of 200 and 500 leaves** (`--jet-sizes`): approximate A*
//!   from beam search (width `--beam-width`, the paper's 1000 by default)
//!   and greedy, against beam search itself: how often it is better.
//!
//! When the ALOI folder is missing (a clean clone without `../shared/data`)
//! the ALOI part is skipped with a note on stderr; with no jet sizes either
//! the command prints nothing and exits 0 (see `docs/astar.md`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use rand::seq::SliceRandom;
use serde::Serialize;
use trellis::astar::{self, ApproxOptions};
use trellis::baselines::{self as agglomerative, Linkage};
use trellis::ginkgo::{Ginkgo, Heuristic, Jet, SimulatorParams, Variant, generate_jet};
use trellis::{Hcc, Matrix, Options, Tree, Weights, tree_cost};

use crate::astar::mean_sem;
use crate::svg::{Plot, Series, Style};

#[derive(Args, Debug)]
pub struct WideArgs {
    /// The ALOI data folder (with `subsets/` and `authors/`); skipped with a note
    /// when missing.
    #[arg(long, default_value = "../shared/data/aloi", value_name = "DIR")]
    pub aloi: PathBuf,
    /// ALOI subset sizes (at most 599).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "100,200,400,599",
        value_name = "N,..."
    )]
    pub sizes: Vec<usize>,
    /// Stratified samples (and search seeds) per size.
    #[arg(long, default_value_t = 5, value_name = "K")]
    pub seeds: u64,
    /// Explored-vertex budget of approximate A* per problem (deterministic).
    #[arg(long, default_value_t = 20_000, value_name = "E")]
    pub max_explored: u64,
    /// Wall-clock limit per problem in seconds (0: none). Not deterministic.
    #[arg(long, default_value_t = 0.0, value_name = "S")]
    pub time_limit: f64,
    /// Initial trees on ALOI besides average linkage (the paper's greedy): also
    /// complete and Ward linkage.
    #[arg(long)]
    pub all_linkages: bool,
    /// Jet leaf counts (comma-separated; empty: no jets).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "200,500",
        value_name = "N,..."
    )]
    pub jet_sizes: Vec<usize>,
    /// Jets per leaf count (0: no jets).
    #[arg(long, default_value_t = 10, value_name = "K")]
    pub jets: usize,
    /// Beam width on jets (the paper's 1000 above 40 leaves).
    #[arg(long, default_value_t = 1000, value_name = "W")]
    pub beam_width: usize,
    /// Explored-vertex budget of approximate A* per jet.
    #[arg(long, default_value_t = 5_000, value_name = "E")]
    pub jet_max_explored: u64,
    /// Write fig9-aloi-wide.svg into this directory.
    #[arg(long, value_name = "DIR")]
    pub svg: Option<PathBuf>,
    /// Print the raw results as JSON instead of the Markdown report.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize, Clone)]
struct AloiRun {
    n: usize,
    seed: u64,
    greedy: f64,
    best_linkage: f64,
    approx: f64,
    seconds: f64,
    explored: u64,
    peak_bytes: u64,
}

#[derive(Serialize, Clone)]
struct JetRun {
    n: usize,
    jet: usize,
    beam: f64,
    /// Greedy's cost (also an initial tree of approximate A*).
    greedy: f64,
    approx: f64,
    beam_seconds: f64,
    approx_seconds: f64,
}

#[derive(Serialize)]
struct Report {
    aloi: Vec<AloiRun>,
    jets: Vec<JetRun>,
}

/// The distinct ALOI points of every subset file: `(features, class)` by point id.
fn aloi_points(dir: &Path) -> Result<Vec<(Vec<f64>, i64)>> {
    let mut points: BTreeMap<i64, (Vec<f64>, i64)> = BTreeMap::new();
    for path in crate::astar::aloi_files(dir)? {
        let v = crate::astar::read_json(&path)?;
        let pids: Vec<i64> = serde_json::from_value(v["pids"].clone())
            .with_context(|| format!("{}: no \"pids\"", path.display()))?;
        let labels: Vec<i64> = serde_json::from_value(v["labels"].clone())
            .with_context(|| format!("{}: no \"labels\"", path.display()))?;
        let features: Vec<Vec<f64>> = serde_json::from_value(v["features"].clone())
            .with_context(|| format!("{}: no \"features\"", path.display()))?;
        for ((p, l), x) in pids.into_iter().zip(labels).zip(features) {
            points.entry(p).or_insert((x, l));
        }
    }
    Ok(points.into_values().collect())
}

/// A stratified sample of `n` of the points (indices, increasing), seeded.
fn stratified(points: &[(Vec<f64>, i64)], n: usize, seed: u64) -> Vec<usize> {
    let mut by_class: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
    for (i, p) in points.iter().enumerate() {
        by_class.entry(p.1).or_default().push(i);
    }
    let total = points.len();
    // Each class's share of n, largest remainders first (ties by class).
    let mut shares: Vec<(i64, usize, f64)> = by_class
        .iter()
        .map(|(&c, v)| {
            let exact = n as f64 * v.len() as f64 / total as f64;
            (c, exact.floor() as usize, exact - exact.floor())
        })
        .collect();
    let mut left = n - shares.iter().map(|s| s.1).sum::<usize>();
    let mut order: Vec<usize> = (0..shares.len()).collect();
    order.sort_by(|&a, &b| shares[b].2.total_cmp(&shares[a].2).then(a.cmp(&b)));
    for k in order {
        if left == 0 {
            break;
        }
        if shares[k].1 < by_class[&shares[k].0].len() {
            shares[k].1 += 1;
            left -= 1;
        }
    }
    let mut rng = trellis::random::rng(seed);
    let mut out = Vec::with_capacity(n);
    for (c, k, _) in shares {
        let mut members = by_class[&c].clone();
        members.shuffle(&mut rng);
        out.extend_from_slice(&members[..k]);
    }
    out.sort_unstable();
    out
}

/// The README's weights: cosine similarity of the unit-normalised features,
/// minus the mean of all `N²` entries, zero diagonal.
fn aloi_weights(points: &[(Vec<f64>, i64)], subset: &[usize]) -> Result<Weights> {
    let n = subset.len();
    let unit: Vec<Vec<f64>> = subset
        .iter()
        .map(|&i| {
            let x = &points[i].0;
            let norm = x
                .iter()
                .map(|v| v * v)
                .sum::<f64>()
                .sqrt()
                .max(f64::MIN_POSITIVE);
            x.iter().map(|v| v / norm).collect()
        })
        .collect();
    let mut s = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..n {
            s[i][j] = unit[i].iter().zip(&unit[j]).map(|(a, b)| a * b).sum();
        }
    }
    let mean = s.iter().flatten().sum::<f64>() / (n * n) as f64;
    for (i, row) in s.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v = if i == j { 0.0 } else { *v - mean };
        }
    }
    Ok(Weights::from_matrix(&Matrix::from_rows(s)?)?)
}

fn run_options(time_limit: f64) -> Options<'static> {
    Options {
        time_limit: (time_limit > 0.0).then(|| Duration::from_secs_f64(time_limit)),
        ..Options::default()
    }
}

fn aloi_runs(args: &WideArgs) -> Result<Vec<AloiRun>> {
    let points = aloi_points(&args.aloi)?;
    let mut runs = Vec::new();
    for &n in &args.sizes {
        if n < 2 || n > points.len() {
            anyhow::bail!("--sizes: {n} is not between 2 and {} points", points.len());
        }
        for seed in 0..args.seeds {
            let subset = stratified(&points, n, seed);
            let w = aloi_weights(&points, &subset)?;
            let model = Hcc::new(&w, 1.0)?;
            let d = agglomerative::distances_from_similarities(&w);
            let start = Instant::now();
            let greedy = agglomerative::linkage(&d, n, Linkage::Average)?;
            let mut init = vec![greedy.clone()];
            if args.all_linkages {
                init.push(agglomerative::linkage(&d, n, Linkage::Complete)?);
                init.push(agglomerative::linkage(&d, n, Linkage::Ward)?);
            }
            let options = ApproxOptions {
                seed,
                max_explored: Some(args.max_explored),
                ..ApproxOptions::default()
            };
            let out = astar::approximate(&model, &init, &options, &run_options(args.time_limit))?;
            let seconds = start.elapsed().as_secs_f64();
            let costs: Vec<f64> = init
                .iter()
                .map(|t| tree_cost(&model, t))
                .collect::<trellis::Result<_>>()?;
            let run = AloiRun {
                n,
                seed,
                greedy: costs[0],
                best_linkage: costs.iter().copied().fold(f64::INFINITY, f64::min),
                approx: out.cost,
                seconds,
                explored: out.explored,
                peak_bytes: out.peak_bytes,
            };
            eprintln!(
                "ALOI N = {n} seed {seed}: greedy {:.3}, approximate A* {:.3} ({:.4}x) in {:.1} s, {} explored",
                run.greedy,
                run.approx,
                run.approx / run.greedy,
                seconds,
                out.explored
            );
            runs.push(run);
        }
    }
    Ok(runs)
}

/// The simulator settings of a large jet of `n` leaves: W-like with a low
/// cut, lower for more leaves (at t_cut = 0.05 the W jets have 60-190
/// leaves, at 0.001 230-600: measured with `trellis ginkgo generate`).
fn big_jet_params(n: usize) -> SimulatorParams {
    let mut p = SimulatorParams::w();
    p.t_cut = if n <= 250 { 0.05 } else { 0.001 };
    p
}

fn jet_runs(args: &WideArgs) -> Result<Vec<JetRun>> {
    let mut runs = Vec::new();
    for &n in &args.jet_sizes {
        for k in 0..args.jets {
            let jet: Jet = generate_jet(&big_jet_params(n), 15 + n as u64, k, n, n)?;
            let model = Ginkgo::new(&jet, Variant::Current).with_heuristic(Heuristic::H1);
            let start = Instant::now();
            let beams = agglomerative::beam_search(&model, args.beam_width)?;
            let beam_seconds = start.elapsed().as_secs_f64();
            let mut init: Vec<Tree> = beams.into_iter().map(|s| s.tree).collect();
            let greedy = agglomerative::greedy(&model)?.tree;
            let greedy_cost = tree_cost(&model, &greedy)?;
            init.push(greedy);
            let beam = tree_cost(&model, &init[0])?;
            let start = Instant::now();
            let options = ApproxOptions {
                seed: k as u64,
                max_explored: Some(args.jet_max_explored),
                ..ApproxOptions::default()
            };
            let out = astar::approximate(&model, &init, &options, &run_options(args.time_limit))?;
            let run = JetRun {
                n,
                jet: k,
                beam,
                greedy: greedy_cost,
                approx: out.cost,
                beam_seconds,
                approx_seconds: start.elapsed().as_secs_f64(),
            };
            eprintln!(
                "jet N = {n} #{k}: beam {:.3} ({:.1} s), greedy {:.3}, approximate A* {:.3} ({:.1} s)",
                run.beam, run.beam_seconds, run.greedy, run.approx, run.approx_seconds
            );
            runs.push(run);
        }
    }
    Ok(runs)
}

fn sizes_of(runs: &[AloiRun]) -> Vec<usize> {
    let mut s: Vec<usize> = runs.iter().map(|r| r.n).collect();
    s.dedup();
    s
}

fn report(r: &Report) -> String {
    let mut out = String::new();
    if !r.aloi.is_empty() {
        out.push_str(
            "### ALOI, approximate A* against greedy (average linkage), mean ± s.e. over samples\n\n\
             | N | greedy cost | best initial linkage | approx. A* cost | improvement (approx. − greedy) | ratio | seconds (median) | explored |\n\
             |---|---|---|---|---|---|---|---|\n",
        );
        for n in sizes_of(&r.aloi) {
            let runs: Vec<&AloiRun> = r.aloi.iter().filter(|x| x.n == n).collect();
            let g: Vec<f64> = runs.iter().map(|x| x.greedy).collect();
            let a: Vec<f64> = runs.iter().map(|x| x.approx).collect();
            let d: Vec<f64> = runs.iter().map(|x| x.approx - x.greedy).collect();
            let q: Vec<f64> = runs.iter().map(|x| x.approx / x.greedy).collect();
            let mut secs: Vec<f64> = runs.iter().map(|x| x.seconds).collect();
            secs.sort_by(f64::total_cmp);
            let l: Vec<f64> = runs.iter().map(|x| x.best_linkage).collect();
            let (lm, ls) = mean_sem(&l);
            let (gm, gs) = mean_sem(&g);
            let (am, as_) = mean_sem(&a);
            let (dm, ds) = mean_sem(&d);
            let (qm, qs) = mean_sem(&q);
            let explored = runs.iter().map(|x| x.explored).max().unwrap_or(0);
            out.push_str(&format!(
                "| {n} | {gm:.2} ± {gs:.2} | {lm:.2} ± {ls:.2} | {am:.2} ± {as_:.2} | {dm:.2} ± {ds:.2} | {qm:.4} ± {qs:.4} | {:.1} | ≤ {explored} |\n",
                secs[secs.len() / 2]
            ));
        }
        out.push('\n');
    }
    if !r.jets.is_empty() {
        out.push_str(
            "### Ginkgo jets, approximate A* against beam search\n\n\
             | leaves | jets | A* better than beam | A* − beam cost (mean ± s.e.) | greedy − beam | A* − best initial tree | beam seconds (median) | A* seconds (median) |\n\
             |---|---|---|---|---|---|---|---|\n",
        );
        let mut sizes: Vec<usize> = r.jets.iter().map(|j| j.n).collect();
        sizes.dedup();
        for n in sizes {
            let runs: Vec<&JetRun> = r.jets.iter().filter(|j| j.n == n).collect();
            let better = runs.iter().filter(|j| j.approx < j.beam).count();
            let diff = |f: &dyn Fn(&JetRun) -> f64| {
                let (m, s) = mean_sem(&runs.iter().map(|j| f(j)).collect::<Vec<f64>>());
                format!("{m:.3} ± {s:.3}")
            };
            let versus_beam = diff(&|j| j.approx - j.beam);
            let greedy = diff(&|j| j.greedy - j.beam);
            let own = diff(&|j| j.approx - j.beam.min(j.greedy));
            let median = |mut v: Vec<f64>| {
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            };
            out.push_str(&format!(
                "| {n} | {} | {better} | {versus_beam} | {greedy} | {own} | {:.1} | {:.1} |\n",
                runs.len(),
                median(runs.iter().map(|j| j.beam_seconds).collect()),
                median(runs.iter().map(|j| j.approx_seconds).collect()),
            ));
        }
        out.push('\n');
    }
    out
}

fn figure(r: &Report, dir: &Path) -> Result<()> {
    crate::svg::create_dir(dir)?;
    let points = sizes_of(&r.aloi)
        .into_iter()
        .map(|n| {
            let d: Vec<f64> = r
                .aloi
                .iter()
                .filter(|x| x.n == n)
                .map(|x| x.approx - x.greedy)
                .collect();
            let (m, s) = mean_sem(&d);
            (n as f64, m, s)
        })
        .collect();
    let plot = Plot {
        title: "Fig. 9 (wide): ALOI, approximate A* cost minus greedy cost (mean ± s.e.)".into(),
        x_label: "number of points N".into(),
        y_label: "cost difference (negative: better than greedy)".into(),
        log_x: false,
        series: vec![Series {
            label: "approx-astar".into(),
            color: "#1f77b4",
            style: Style::Points,
            points,
        }],
        hlines: vec![("greedy".into(), 0.0, "#7f7f7f")],
    };
    crate::svg::write_figure(&dir.join("fig9-aloi-wide.svg"), &plot.render())
}

pub fn run(args: &WideArgs) -> Result<String> {
    let aloi = if args.sizes.is_empty() {
        Vec::new()
    } else if !args.aloi.join("subsets").is_dir() && !args.aloi.join("authors").is_dir() {
        eprintln!(
            "note: skipping ALOI (Fig. 9): no ALOI data at {} (the shared data is not part of a \
             clean clone)",
            args.aloi.display()
        );
        Vec::new()
    } else {
        aloi_runs(args)?
    };
    let jets = jet_runs(args)?;
    let r = Report { aloi, jets };
    if let Some(dir) = &args.svg
        && !r.aloi.is_empty()
    {
        figure(&r, dir)?;
    }
    if args.json {
        return Ok(serde_json::to_string(&r)? + "\n");
    }
    Ok(report(&r))
}
