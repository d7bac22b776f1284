//! `trellis-repro astar`: the A* paper's experiments (Figs. 5-9).
//!
//! - **Ginkgo jets** (§5): simulated jets of each leaf count; greedy, beam
//!   search, the exact trellis DP, exact A* (`h0`, `h1`) and approximate A*.
//!   Reported: cost (negative log-likelihood) minus greedy's (Fig. 5), wall
//!   time (Fig. 6), splits scored over `3^N` (Fig. 7), and how often
//!   approximate A* beats beam search.
//! - **ALOI** (§6): hierarchical correlation clustering cost of greedy
//!   (average linkage), approximate A* and, where it fits, exact A* on the
//!   shipped subsets (Figs. 8-9).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use serde::Serialize;
use trellis::astar::{self, ApproxOptions};
use trellis::baselines::{self as agglomerative, Linkage};
use trellis::ginkgo::{Ginkgo, Heuristic, Jet, SimulatorParams, Variant, generate_jet};
use trellis::{Hcc, Matrix, Options, Tree, Trellis, Weights, tree_cost};

use crate::svg::{Plot, Series, Style};
use crate::timing::best_of;

#[derive(Args, Debug)]
pub struct AstarExperimentArgs {
    /// Leaf counts run with every method, exact ones included.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "5,6,7,8,9,10,11,12,13",
        value_name = "N,..."
    )]
    pub exact_sizes: Vec<usize>,
    /// Leaf counts run with greedy, beam search and approximate A* only.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "20,30,40,50,75,100",
        value_name = "N,..."
    )]
    pub approx_sizes: Vec<usize>,
    /// Jets per leaf count.
    #[arg(long, default_value_t = 5, value_name = "K")]
    pub jets: usize,
    /// Seed of the jet simulator (jet k of size N uses the seed (seed + N, k)) and of
    /// approximate A*.
    #[arg(long, default_value_t = 0, value_name = "S")]
    pub seed: u64,
    /// ALOI subsets (the `subsets` and `authors` folders of shared/data/aloi) for
    /// Figs. 8-9; skipped when not given.
    #[arg(long, value_name = "DIR")]
    pub aloi: Option<PathBuf>,
    /// ALOI subsets up to this size also run exact A*.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub aloi_exact_max: usize,
    /// Write the figures (fig5 ... fig9 .svg) into this directory.
    #[arg(long, value_name = "DIR")]
    pub svg: Option<PathBuf>,
    /// Print the raw results as one JSON object instead of the Markdown report.
    #[arg(long)]
    pub json: bool,
}

/// One method on one problem.
#[derive(Serialize, Clone)]
struct Run {
    dataset: String,
    n: usize,
    method: &'static str,
    cost: f64,
    seconds: f64,
    /// Splits scored (A* only).
    splits: Option<u64>,
    /// Vertices explored (A* only).
    explored: Option<u64>,
}

#[derive(Serialize)]
struct Report {
    jets: Vec<Run>,
    aloi: Vec<Run>,
}

/// The jet simulator settings per leaf count, so that jets of that size are
/// typical: QCD-like up to 12 leaves, W-like above with a lower cut for more
/// leaves.
pub fn jet_params(n: usize) -> SimulatorParams {
    let mut p = if n <= 12 {
        SimulatorParams::qcd()
    } else {
        SimulatorParams::w()
    };
    if n > 60 {
        p.t_cut = 0.5;
    } else if n > 30 {
        p.t_cut = 1.5;
    }
    p
}

fn approx_options(seed: u64) -> ApproxOptions {
    ApproxOptions {
        seed,
        ..ApproxOptions::default()
    }
}

fn jet_runs(jet: &Jet, exact: bool, seed: u64) -> Result<Vec<Run>> {
    let n = jet.len();
    let merge = Ginkgo::new(jet, Variant::Current);
    let h0 = merge.clone().with_heuristic(Heuristic::H0);
    let cost_of = |t: &Tree| tree_cost(&h0, t).unwrap_or(f64::NAN);
    let mut runs = Vec::new();
    let mut push = |method, cost: f64, seconds, splits, explored| {
        runs.push(Run {
            dataset: jet.id.clone(),
            n,
            method,
            cost,
            seconds,
            splits,
            explored,
        })
    };
    let (s, greedy) = best_of(1, || Ok(agglomerative::greedy(&merge)?.tree))?;
    push("greedy", cost_of(&greedy), s, None, None);
    let (s, beams) = best_of(1, || {
        Ok(
            agglomerative::beam_search(&merge, agglomerative::compact_beam_width(n))?
                .into_iter()
                .map(|a| a.tree)
                .collect::<Vec<_>>(),
        )
    })?;
    push("beam", cost_of(&beams[0]), s, None, None);
    if exact {
        let (s, dp) = best_of(1, || Ok(-Trellis::new(&merge)?.map().log_potential))?;
        push("dp", dp, s, Some(trellis::total_splits(n) as u64), None);
        for (name, h) in [("astar-h0", Heuristic::H0), ("astar-h1", Heuristic::H1)] {
            let model = merge.clone().with_heuristic(h);
            let (s, o) = best_of(1, || Ok(astar::exact(&model, &Options::default())?))?;
            push(name, o.cost, s, Some(o.splits), Some(o.explored));
        }
    }
    // Approximate A* starts from the beam-search trees and the greedy tree;
    // its time includes building them.
    let (s, o) = best_of(1, || {
        let mut init = agglomerative::beam_search(&merge, agglomerative::compact_beam_width(n))?
            .into_iter()
            .map(|a| a.tree)
            .collect::<Vec<_>>();
        init.push(agglomerative::greedy(&merge)?.tree);
        Ok(astar::approximate(
            &h0,
            &init,
            &approx_options(seed),
            &Options::default(),
        )?)
    })?;
    push("approx-astar", o.cost, s, Some(o.splits), Some(o.explored));
    Ok(runs)
}

fn ginkgo_runs(args: &AstarExperimentArgs) -> Result<Vec<Run>> {
    let mut runs = Vec::new();
    let sizes = args
        .exact_sizes
        .iter()
        .map(|&n| (n, true))
        .chain(args.approx_sizes.iter().map(|&n| (n, false)));
    for (n, exact) in sizes {
        if !(2..=astar::MAX_ASTAR_POINTS).contains(&n) {
            bail!(
                "leaf counts must be between 2 and {}, not {n}",
                astar::MAX_ASTAR_POINTS
            );
        }
        if exact && n > 16 {
            bail!("--exact-sizes above 16 leaves take too long for exact A* (got {n})");
        }
        for k in 0..args.jets {
            let mut jet = generate_jet(&jet_params(n), args.seed + n as u64, k, n, n)?;
            jet.id = format!("N{n}_k{k}");
            eprintln!("jet {} ({n} leaves)", jet.id);
            runs.extend(jet_runs(&jet, exact, args.seed)?);
        }
    }
    Ok(runs)
}

/// A JSON file, errors naming it.
pub(crate) fn read_json(path: &Path) -> Result<serde_json::Value> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("cannot parse {}", path.display()))
}

/// The weight matrix of an ALOI subset file (its "weights" field).
fn read_aloi(path: &Path) -> Result<(String, Weights)> {
    let v = read_json(path)?;
    let id = v["id"].as_str().unwrap_or("?").to_string();
    let mut rows: Vec<Vec<f64>> = serde_json::from_value(v["weights"].clone())
        .with_context(|| format!("{}: no N x N \"weights\" matrix", path.display()))?;
    // The authors' 30-nearest-neighbour graphs (N = 40) are symmetric only up
    // to float32 rounding of their construction: average the two halves.
    let n = rows.len();
    if rows.iter().all(|r| r.len() == n) {
        #[allow(clippy::needless_range_loop)]
        for i in 0..n {
            for j in 0..i {
                let m = 0.5 * (rows[i][j] + rows[j][i]);
                rows[i][j] = m;
                rows[j][i] = m;
            }
        }
    }
    let w = Weights::from_matrix(&Matrix::from_rows(rows)?)
        .with_context(|| format!("in {}", path.display()))?;
    Ok((id, w))
}

/// The ALOI subset files (`*_N*.json`) of the `subsets` and `authors`
/// folders of `dir`, sorted (none when neither folder exists).
pub(crate) fn aloi_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = Vec::new();
    for sub in ["subsets", "authors"] {
        let d = dir.join(sub);
        if !d.is_dir() {
            continue;
        }
        for e in std::fs::read_dir(&d)? {
            let p = e?.path();
            let name = p.file_name().and_then(|s| s.to_str()).unwrap_or("");
            if name.ends_with(".json") && name.contains("_N") {
                files.push(p);
            }
        }
    }
    files.sort();
    Ok(files)
}

fn aloi_runs(dir: &Path, exact_max: usize, seed: u64) -> Result<Vec<Run>> {
    let files = aloi_files(dir)?;
    if files.is_empty() {
        bail!(
            "no ALOI subset files (*_N*.json) under {}/subsets or {}/authors",
            dir.display(),
            dir.display()
        );
    }
    let mut runs = Vec::new();
    for path in files {
        let (id, w) = read_aloi(&path)?;
        let n = w.n();
        if n > astar::MAX_ASTAR_POINTS {
            continue;
        }
        eprintln!("ALOI {id} ({n} points)");
        let model = Hcc::new(&w, 1.0)?;
        let mut push = |method, cost: f64, seconds, splits, explored| {
            runs.push(Run {
                dataset: id.clone(),
                n,
                method,
                cost,
                seconds,
                splits,
                explored,
            })
        };
        let d = agglomerative::distances_from_similarities(&w);
        let (s, greedy) = best_of(1, || Ok(agglomerative::linkage(&d, n, Linkage::Average)?))?;
        push("greedy", tree_cost(&model, &greedy)?, s, None, None);
        if n <= exact_max {
            let (s, o) = best_of(1, || Ok(astar::exact(&model, &Options::default())?))?;
            push("astar", o.cost, s, Some(o.splits), Some(o.explored));
        }
        let (s, o) = best_of(1, || {
            let mut init: Vec<Tree> =
                agglomerative::beam_search(&model, agglomerative::compact_beam_width(n))?
                    .into_iter()
                    .map(|a| a.tree)
                    .collect();
            init.push(greedy.clone());
            Ok(astar::approximate(
                &model,
                &init,
                &approx_options(seed),
                &Options::default(),
            )?)
        })?;
        push("approx-astar", o.cost, s, Some(o.splits), Some(o.explored));
    }
    Ok(runs)
}

/// Mean and standard error of the mean (NaN for no values).
pub(crate) fn mean_sem(xs: &[f64]) -> (f64, f64) {
    let k = xs.len() as f64;
    if xs.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let m = xs.iter().sum::<f64>() / k;
    let var = if xs.len() > 1 {
        xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (k - 1.0)
    } else {
        0.0
    };
    (m, (var / k).sqrt())
}

/// Runs grouped by (group key, n), in order of first appearance.
fn sizes(runs: &[Run]) -> Vec<usize> {
    let mut v: Vec<usize> = runs.iter().map(|r| r.n).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// For each problem of size `n`, `f(runs of that problem)`.
fn per_problem(runs: &[Run], n: usize) -> Vec<Vec<&Run>> {
    let mut ids: Vec<&str> = runs
        .iter()
        .filter(|r| r.n == n)
        .map(|r| r.dataset.as_str())
        .collect();
    ids.dedup();
    ids.sort_unstable();
    ids.dedup();
    ids.iter()
        .map(|id| runs.iter().filter(|r| r.dataset == *id).collect())
        .collect()
}

fn get<'a>(problem: &[&'a Run], method: &str) -> Option<&'a Run> {
    problem.iter().copied().find(|r| r.method == method)
}

const JET_METHODS: [&str; 6] = [
    "greedy",
    "beam",
    "dp",
    "astar-h0",
    "astar-h1",
    "approx-astar",
];

fn fmt(x: f64, digits: usize) -> String {
    if x.is_nan() {
        "-".into()
    } else {
        format!("{x:.digits$}")
    }
}

fn jets_report(runs: &[Run]) -> String {
    let mut s = String::from(
        "## Ginkgo jets\n\n### Cost minus greedy cost (mean ± s.e.; lower is better; Fig. 5)\n\n\
         | N | jets | beam | exact DP | exact A* h0 | exact A* h1 | approx. A* | approx. A* vs beam (better/equal/worse) |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for n in sizes(runs) {
        let problems = per_problem(runs, n);
        let diff = |m: &str| {
            let xs: Vec<f64> = problems
                .iter()
                .filter_map(|p| Some(get(p, m)?.cost - get(p, "greedy")?.cost))
                .collect();
            let (mu, se) = mean_sem(&xs);
            if xs.is_empty() {
                "-".to_string()
            } else {
                format!("{} ± {}", fmt(mu, 3), fmt(se, 3))
            }
        };
        let (mut better, mut equal, mut worse) = (0, 0, 0);
        for p in &problems {
            if let (Some(a), Some(b)) = (get(p, "approx-astar"), get(p, "beam")) {
                let tol = 1e-9 * b.cost.abs().max(1.0);
                if a.cost < b.cost - tol {
                    better += 1;
                } else if a.cost > b.cost + tol {
                    worse += 1;
                } else {
                    equal += 1;
                }
            }
        }
        s += &format!(
            "| {n} | {} | {} | {} | {} | {} | {} | {better}/{equal}/{worse} |\n",
            problems.len(),
            diff("beam"),
            diff("dp"),
            diff("astar-h0"),
            diff("astar-h1"),
            diff("approx-astar")
        );
    }
    s += "\n### Wall time per jet in seconds (mean; Fig. 6) and splits scored / 3^N (mean; Fig. 7)\n\n\
          | N | greedy | beam | exact DP | exact A* h0 | exact A* h1 | approx. A* | DP splits/3^N | A* h0 splits/3^N | A* h1 splits/3^N | approx. A* splits/3^N |\n\
          |---|---|---|---|---|---|---|---|---|---|---|\n";
    for n in sizes(runs) {
        let of = |m: &str| {
            runs.iter()
                .filter(|r| r.n == n && r.method == m)
                .collect::<Vec<_>>()
        };
        let time = |m: &str| {
            let xs: Vec<f64> = of(m).iter().map(|r| r.seconds).collect();
            fmt(mean_sem(&xs).0, 4)
        };
        let frac = |m: &str| {
            let xs: Vec<f64> = of(m)
                .iter()
                .filter_map(|r| Some(r.splits? as f64 / 3f64.powi(n as i32)))
                .collect();
            if xs.is_empty() {
                "-".to_string()
            } else {
                format!("{:.2e}", mean_sem(&xs).0)
            }
        };
        s += &format!(
            "| {n} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            time("greedy"),
            time("beam"),
            time("dp"),
            time("astar-h0"),
            time("astar-h1"),
            time("approx-astar"),
            frac("dp"),
            frac("astar-h0"),
            frac("astar-h1"),
            frac("approx-astar")
        );
    }
    s
}

fn aloi_report(runs: &[Run]) -> String {
    let mut s = String::from(
        "## ALOI, hierarchical correlation clustering (Figs. 8-9)\n\n\
         | subsets | N | count | greedy cost | approx. A* cost | exact A* cost | approx. A* - greedy (mean ± s.e.) | approx. = optimum | exact A* time (s) | approx. A* time (s) |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for group in ["public", "ref"] {
        let rs: Vec<Run> = runs
            .iter()
            .filter(|r| r.dataset.starts_with(group))
            .cloned()
            .collect();
        for n in sizes(&rs) {
            let problems = per_problem(&rs, n);
            let mean = |m: &str| {
                let xs: Vec<f64> = problems
                    .iter()
                    .filter_map(|p| Some(get(p, m)?.cost))
                    .collect();
                if xs.is_empty() {
                    "-".to_string()
                } else {
                    fmt(mean_sem(&xs).0, 4)
                }
            };
            let time = |m: &str| {
                let xs: Vec<f64> = problems
                    .iter()
                    .filter_map(|p| Some(get(p, m)?.seconds))
                    .collect();
                if xs.is_empty() {
                    "-".to_string()
                } else {
                    fmt(mean_sem(&xs).0, 3)
                }
            };
            let d: Vec<f64> = problems
                .iter()
                .filter_map(|p| Some(get(p, "approx-astar")?.cost - get(p, "greedy")?.cost))
                .collect();
            let (mu, se) = mean_sem(&d);
            let hits: Vec<bool> = problems
                .iter()
                .filter_map(|p| {
                    let (a, e) = (get(p, "approx-astar")?.cost, get(p, "astar")?.cost);
                    Some((a - e).abs() <= 1e-9 * e.abs().max(1.0))
                })
                .collect();
            let hit = if hits.is_empty() {
                "-".to_string()
            } else {
                format!("{}/{}", hits.iter().filter(|&&h| h).count(), hits.len())
            };
            s += &format!(
                "| {group} | {n} | {} | {} | {} | {} | {} ± {} | {hit} | {} | {} |\n",
                problems.len(),
                mean("greedy"),
                mean("approx-astar"),
                mean("astar"),
                fmt(mu, 4),
                fmt(se, 4),
                time("astar"),
                time("approx-astar")
            );
        }
    }
    s
}

const COLORS: [&str; 6] = [
    "#7f7f7f", "#1f77b4", "#2ca02c", "#d62728", "#ff7f0e", "#9467bd",
];

fn series(
    runs: &[Run],
    methods: &[&'static str],
    value: &dyn Fn(&[&Run], &str) -> Option<f64>,
) -> Vec<Series> {
    methods
        .iter()
        .enumerate()
        .map(|(i, &m)| Series {
            label: m.into(),
            color: COLORS[i % COLORS.len()],
            style: Style::Line,
            points: sizes(runs)
                .into_iter()
                .filter_map(|n| {
                    let xs: Vec<f64> = per_problem(runs, n)
                        .iter()
                        .filter_map(|p| value(p, m))
                        .collect();
                    if xs.is_empty() {
                        return None;
                    }
                    let (mu, se) = mean_sem(&xs);
                    Some((n as f64, mu, se))
                })
                .collect(),
        })
        .collect()
}

fn figures(report: &Report, dir: &Path) -> Result<()> {
    crate::svg::create_dir(dir)?;
    let mut plots: Vec<(&str, Plot)> = Vec::new();
    if !report.jets.is_empty() {
        let jets = &report.jets;
        plots.push((
            "fig5-jets-cost-minus-greedy.svg",
            Plot {
                title: "Fig. 5: Ginkgo jets, cost minus greedy cost (mean ± s.e.)".into(),
                x_label: "number of leaves N".into(),
                y_label: "-log likelihood minus greedy's".into(),
                log_x: false,
                series: series(jets, &JET_METHODS, &|p, m| {
                    Some(get(p, m)?.cost - get(p, "greedy")?.cost)
                }),
                hlines: vec![],
            },
        ));
        plots.push((
            "fig6-jets-time.svg",
            Plot {
                title: "Fig. 6: wall time per jet".into(),
                x_label: "number of leaves N".into(),
                y_label: "log10 seconds".into(),
                log_x: false,
                series: series(jets, &JET_METHODS, &|p, m| {
                    Some(get(p, m)?.seconds.max(1e-7).log10())
                }),
                hlines: vec![],
            },
        ));
        plots.push((
            "fig7-jets-explored.svg",
            Plot {
                title: "Fig. 7: splits scored / 3^N".into(),
                x_label: "number of leaves N".into(),
                y_label: "log10(splits / 3^N)".into(),
                log_x: false,
                series: series(
                    jets,
                    &["dp", "astar-h0", "astar-h1", "approx-astar"],
                    &|p, m| {
                        let r = get(p, m)?;
                        Some((r.splits? as f64).log10() - r.n as f64 * 3f64.log10())
                    },
                ),
                hlines: vec![],
            },
        ));
    }
    if !report.aloi.is_empty() {
        let public: Vec<Run> = report
            .aloi
            .iter()
            .filter(|r| r.dataset.starts_with("public"))
            .cloned()
            .collect();
        let small: Vec<Run> = public.iter().filter(|r| r.n <= 20).cloned().collect();
        plots.push((
            "fig8-aloi-cost.svg",
            Plot {
                title: "Fig. 8: ALOI hcc cost, exactly solvable sizes (mean ± s.e.)".into(),
                x_label: "number of points N".into(),
                y_label: "hierarchical correlation clustering cost".into(),
                log_x: false,
                series: series(&small, &["greedy", "approx-astar", "astar"], &|p, m| {
                    Some(get(p, m)?.cost)
                }),
                hlines: vec![],
            },
        ));
        plots.push((
            "fig9-aloi-improvement.svg",
            Plot {
                title: "Fig. 9: ALOI, approximate A* cost minus greedy cost (mean ± s.e.)".into(),
                x_label: "number of points N".into(),
                y_label: "cost difference (negative: better than greedy)".into(),
                log_x: false,
                series: series(&report.aloi, &["approx-astar"], &|p, m| {
                    Some(get(p, m)?.cost - get(p, "greedy")?.cost)
                }),
                hlines: vec![],
            },
        ));
    }
    for (name, plot) in plots {
        crate::svg::write_figure(&dir.join(name), &plot.render())?;
    }
    Ok(())
}

pub fn astar(args: &AstarExperimentArgs) -> Result<String> {
    if args.jets == 0 && args.aloi.is_none() {
        bail!("nothing to run: --jets 0 and no --aloi");
    }
    // The figures' directory first, so that a bad --svg fails before the runs.
    if let Some(dir) = &args.svg {
        crate::svg::create_dir(dir)?;
    }
    let jets = if args.jets > 0 {
        ginkgo_runs(args)?
    } else {
        Vec::new()
    };
    let aloi = match &args.aloi {
        Some(dir) => aloi_runs(dir, args.aloi_exact_max, args.seed)?,
        None => Vec::new(),
    };
    let report = Report { jets, aloi };
    if let Some(dir) = &args.svg {
        figures(&report, dir)?;
    }
    if args.json {
        return Ok(serde_json::to_string(&report)? + "\n");
    }
    let mut s = String::new();
    if !report.jets.is_empty() {
        s += &jets_report(&report.jets);
        s.push('\n');
    }
    if !report.aloi.is_empty() {
        s += &aloi_report(&report.aloi);
    }
    Ok(s)
}
