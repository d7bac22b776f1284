//! `trellis-repro flat`: the gene-expression analysis of the flat
//! cluster trellis paper (§5.3), on an expression matrix or on a seeded
//! synthetic stand-in for the paper's TCGA data (which is not redistributable
//! here).
//!
//! Pipeline (paper §5.2): keep the `--top-genes` features of largest variance
//! across the samples, take `log(x + 1e-9)`, compute the Euclidean distance
//! between samples, the similarity `exp(-d / scale)` and subtract its mean
//! (so weights are positive and negative). The paper leaves the distance
//! scale unstated; ours is the root-mean-square per gene (`scale = √genes`),
//! so the similarity does not vanish for thousands of genes. Correlation
//! clustering with `log E(c) = β Σ_{i<j∈c} w_ij` then gives:
//!
//! - **Fig. 2**: the pairwise energy `β w_ij` (the log-energy of the cluster
//!   `{i, j}`) against the exact pairwise marginal `P(i ~ j)`, with their
//!   correlations, and the pair whose marginal is high despite the lowest
//!   energy (and the third sample that pulls the two together);
//! - **Fig. 3**: Perturb-and-MAP pairwise marginals (Gumbel noise on the pairwise
//!   energies, MAP per draw; §5.3.1) against the exact ones, with the number
//!   of pairs over- and under-estimated beyond 4 Monte Carlo standard errors;
//! - **Figs. 4 and 5**: heatmaps of the pairwise energies and of the exact
//!   pairwise marginals;
//! - **the Binder-optimal partition** (issue 26, `trellis::summary`): the
//!   partition minimising the posterior expected Binder loss (equal costs),
//!   against the MAP partition: the expected loss of each and the pairs they
//!   disagree on, with their exact marginals.
//!
//! The synthetic data: `--samples` patients in `--subtypes` subtypes (sizes
//! in proportion 9:7:4:..., named A1, A2, ..., B1, ...), `--genes` genes with
//! a log-normal base level `N(1, 2²)` in log space; each subtype shifts a
//! random 3% of the genes by `±N(1, 0.3²)`, each patient a random 5% by
//! `±N(1.5, 0.3²)` (heterogeneity within a subtype), and measurement noise is
//! `N(0, 0.6²)`; expression values are the exponentials (FPKM-like). Every
//! draw comes from one generator, `trellis::random::rng(seed)`, with the
//! library's normal sampler (`trellis::random::standard_normal`).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Result, bail};
use clap::Args;
use rand::RngExt;
use serde::Serialize;
use trellis::CorrelationClustering;
use trellis::flat::{FlatTrellis, perturb_and_map};
use trellis::random::{SeededRng, standard_normal};
use trellis::{Matrix, Weights};

use crate::svg::{Heatmap, Plot, Series, Style};

#[derive(Args, Debug)]
pub struct FlatExperimentArgs {
    /// An expression matrix instead of the synthetic data: CSV (rows are
    /// samples, columns genes, non-negative values such as FPKM-UQ; a header
    /// row is skipped) or .npy.
    #[arg(long, value_name = "FILE")]
    pub points: Option<PathBuf>,
    /// Synthetic data: number of samples (patients).
    #[arg(long, default_value_t = 11, value_name = "N")]
    pub samples: usize,
    /// Synthetic data: number of genes.
    #[arg(long, default_value_t = 5000, value_name = "G")]
    pub genes: usize,
    /// Synthetic data: number of subtypes.
    #[arg(long, default_value_t = 3, value_name = "K")]
    pub subtypes: usize,
    /// Features of largest variance kept (the paper keeps 3000).
    #[arg(long, default_value_t = 3000, value_name = "G")]
    pub top_genes: usize,
    /// Inverse temperature of the correlation clustering energy.
    #[arg(long, default_value_t = 200.0, value_name = "B")]
    pub beta: f64,
    /// Perturb-and-MAP draws.
    #[arg(long, default_value_t = 2000, value_name = "K")]
    pub perturb_samples: usize,
    /// Seed of the synthetic data and of the Perturb-and-MAP noise.
    #[arg(long, default_value_t = 0, value_name = "S")]
    pub seed: u64,
    /// Write the figures (fig2-energy-vs-marginal.svg, fig3-perturb-vs-exact.svg,
    /// fig4-energies.svg, fig5-marginals.svg) into this directory.
    #[arg(long, value_name = "DIR")]
    pub svg: Option<PathBuf>,
    /// Print the results as one JSON object instead of a Markdown report.
    #[arg(long)]
    pub json: bool,
}

/// A normal deviate `N(mean, sd²)`.
fn normal(rng: &mut SeededRng, mean: f64, sd: f64) -> f64 {
    mean + sd * standard_normal(rng)
}

/// Per-gene shifts: with probability `p`, `±N(m, sd²)`; otherwise 0.
fn shifts(rng: &mut SeededRng, genes: usize, p: f64, m: f64, sd: f64) -> Vec<f64> {
    (0..genes)
        .map(|_| {
            if rng.random::<f64>() < p {
                let sign = if rng.random::<bool>() { 1.0 } else { -1.0 };
                sign * normal(rng, m, sd)
            } else {
                0.0
            }
        })
        .collect()
}

/// The synthetic expression matrix and its sample names.
fn synthetic(samples: usize, genes: usize, subtypes: usize, seed: u64) -> (Vec<String>, Matrix) {
    let mut rng = trellis::random::rng(seed);
    // Subtype sizes in proportion 9:7:4:3:2:... (the largest first).
    let weights: Vec<f64> = (0..subtypes)
        .map(|t| [9.0, 7.0, 4.0, 3.0].get(t).copied().unwrap_or(2.0))
        .collect();
    let total: f64 = weights.iter().sum();
    let mut sizes: Vec<usize> = weights
        .iter()
        .map(|w| ((w / total * samples as f64).floor() as usize).max(1))
        .collect();
    while sizes.iter().sum::<usize>() < samples {
        let t = (0..subtypes)
            .max_by(|&a, &b| {
                let gap = |t: usize| weights[t] / total * samples as f64 - sizes[t] as f64;
                gap(a).total_cmp(&gap(b))
            })
            .expect("a subtype");
        sizes[t] += 1;
    }
    while sizes.iter().sum::<usize>() > samples {
        let t = (0..subtypes).max_by_key(|&t| sizes[t]).expect("a subtype");
        sizes[t] -= 1;
    }
    let base: Vec<f64> = (0..genes).map(|_| normal(&mut rng, 1.0, 2.0)).collect();
    let mut names = Vec::new();
    let mut data = Vec::with_capacity(samples * genes);
    for (t, &size) in sizes.iter().enumerate() {
        let subtype = shifts(&mut rng, genes, 0.03, 1.0, 0.3);
        for p in 0..size {
            names.push(format!("{}{}", (b'A' + (t % 26) as u8) as char, p + 1));
            let own = shifts(&mut rng, genes, 0.05, 1.5, 0.3);
            for g in 0..genes {
                let log = base[g] + subtype[g] + own[g] + normal(&mut rng, 0.0, 0.6);
                data.push(log.exp());
            }
        }
    }
    (
        names,
        Matrix {
            rows: samples,
            cols: genes,
            data,
        },
    )
}

/// The paper's preprocessing and similarity (see the module docs).
fn weights_of(m: &Matrix, top: usize) -> Result<Weights> {
    let (n, g) = (m.rows, m.cols);
    if let Some(v) = m.data.iter().find(|v| !v.is_finite() || **v < 0.0) {
        bail!("expression values must be finite and non-negative; found {v}");
    }
    let mut by_variance: Vec<(f64, usize)> = (0..g)
        .map(|j| {
            let mean = (0..n).map(|i| m.get(i, j)).sum::<f64>() / n as f64;
            let var = (0..n).map(|i| (m.get(i, j) - mean).powi(2)).sum::<f64>();
            (var, j)
        })
        .collect();
    by_variance.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let keep: Vec<usize> = by_variance.iter().take(top.min(g)).map(|x| x.1).collect();
    let log: Vec<Vec<f64>> = (0..n)
        .map(|i| keep.iter().map(|&j| (m.get(i, j) + 1e-9).ln()).collect())
        .collect();
    let scale = (keep.len() as f64).sqrt();
    let mut w = vec![0.0; n * n];
    for i in 0..n {
        for j in i + 1..n {
            let d = log[i]
                .iter()
                .zip(&log[j])
                .map(|(a, b)| (a - b) * (a - b))
                .sum::<f64>()
                .sqrt();
            let s = (-d / scale).exp();
            w[i * n + j] = s;
            w[j * n + i] = s;
        }
    }
    let mut weights = Weights::from_matrix(&Matrix {
        rows: n,
        cols: n,
        data: w,
    })?;
    weights.center();
    Ok(weights)
}

fn pearson(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let cov: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let vx: f64 = x.iter().map(|a| (a - mx).powi(2)).sum();
    let vy: f64 = y.iter().map(|b| (b - my).powi(2)).sum();
    cov / (vx * vy).sqrt()
}

/// Ranks with ties averaged.
fn ranks(x: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..x.len()).collect();
    idx.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
    let mut r = vec![0.0; x.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && x[idx[j + 1]] == x[idx[i]] {
            j += 1;
        }
        for &k in &idx[i..=j] {
            r[k] = (i + j) as f64 / 2.0 + 1.0;
        }
        i = j + 1;
    }
    r
}

fn spearman(x: &[f64], y: &[f64]) -> f64 {
    pearson(&ranks(x), &ranks(y))
}

#[derive(Serialize)]
struct Pair {
    a: String,
    b: String,
    energy: f64,
    marginal: f64,
    perturb_and_map: f64,
}

#[derive(Serialize)]
struct Striking {
    a: String,
    b: String,
    energy: f64,
    marginal: f64,
    /// The sample with the highest smaller energy to both.
    via: String,
    energy_a_via: f64,
    energy_b_via: f64,
}

/// A pair that the MAP and the Binder partitions place differently.
#[derive(Serialize)]
struct Disagreement {
    a: String,
    b: String,
    /// The exact `P(a ~ b)`.
    marginal: f64,
    /// Whether the MAP partition puts them together (the Binder partition
    /// does the opposite).
    map_together: bool,
}

/// The Binder-optimal partition against the MAP partition.
#[derive(Serialize)]
struct Binder {
    clusters: Vec<Vec<String>>,
    /// Its posterior expected Binder loss (equal costs: expected pairs wrong).
    expected_loss: f64,
    /// The MAP partition's.
    map_expected_loss: f64,
    disagreements: Vec<Disagreement>,
}

#[derive(Serialize)]
struct Report {
    data: String,
    names: Vec<String>,
    top_genes: usize,
    beta: f64,
    log_z: f64,
    partitions: String,
    map_log_energy: f64,
    map_clusters: Vec<Vec<String>>,
    binder: Binder,
    pearson_energy_marginal: f64,
    spearman_energy_marginal: f64,
    striking: Option<Striking>,
    perturb_samples: usize,
    perturb_mean_difference: f64,
    perturb_max_abs_difference: f64,
    perturb_overestimated: usize,
    perturb_underestimated: usize,
    exact_seconds: f64,
    perturb_seconds: f64,
    pairs: Vec<Pair>,
    energies: Vec<Vec<f64>>,
    marginals: Vec<Vec<f64>>,
}

pub fn flat(args: &FlatExperimentArgs) -> Result<String> {
    if args.beta.is_nan() || args.beta <= 0.0 || args.beta.is_infinite() {
        bail!("--beta must be positive and finite");
    }
    if args.top_genes == 0 || args.perturb_samples == 0 {
        bail!("--top-genes and --perturb-samples must be positive");
    }
    // The figures' directory first, so that a bad --svg fails before the runs.
    if let Some(dir) = &args.svg {
        crate::svg::create_dir(dir)?;
    }
    let (source, names, matrix) = match &args.points {
        Some(path) => {
            let m = trellis::io::read_matrix(path, true)?;
            let names = (1..=m.rows).map(|i| format!("s{i}")).collect();
            (path.display().to_string(), names, m)
        }
        None => {
            if !(2..=20).contains(&args.samples) || args.subtypes == 0 {
                bail!("the synthetic data needs 2 to 20 samples and at least one subtype");
            }
            if args.subtypes > args.samples || args.genes == 0 {
                bail!("--subtypes must not exceed --samples, and --genes must be positive");
            }
            let (names, m) = synthetic(args.samples, args.genes, args.subtypes, args.seed);
            let source = format!(
                "synthetic: {} samples, {} genes, {} subtypes, seed {}",
                args.samples, args.genes, args.subtypes, args.seed
            );
            (source, names, m)
        }
    };
    let n = matrix.rows;
    if !(2..=20).contains(&n) {
        bail!(
            "the experiment runs the exact flat trellis: use 2 to 20 samples (this file has {n})"
        );
    }
    let weights = weights_of(&matrix, args.top_genes)?;
    let start = Instant::now();
    let trellis = FlatTrellis::new(CorrelationClustering::new(&weights, args.beta)?)?;
    let marginals = trellis.marginals();
    let exact_seconds = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let approx = perturb_and_map(&weights, args.beta, args.perturb_samples, args.seed)?;
    let perturb_seconds = start.elapsed().as_secs_f64();

    let energies: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    if i == j {
                        0.0
                    } else {
                        args.beta * weights.get(i, j)
                    }
                })
                .collect()
        })
        .collect();
    let exact = marginals.pairwise_matrix();
    let mut pairs = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            pairs.push(Pair {
                a: names[i].clone(),
                b: names[j].clone(),
                energy: energies[i][j],
                marginal: exact[i][j],
                perturb_and_map: approx[i][j],
            });
        }
    }
    let e: Vec<f64> = pairs.iter().map(|p| p.energy).collect();
    let p: Vec<f64> = pairs.iter().map(|p| p.marginal).collect();
    // The pair with the lowest energy among those more likely together than not.
    let mut striking = None;
    let mut lowest = f64::INFINITY;
    for i in 0..n {
        for j in i + 1..n {
            if exact[i][j] > 0.5 && energies[i][j] < lowest {
                lowest = energies[i][j];
                let via = (0..n).filter(|&k| k != i && k != j).max_by(|&a, &b| {
                    energies[i][a]
                        .min(energies[j][a])
                        .total_cmp(&energies[i][b].min(energies[j][b]))
                });
                striking = via.map(|k| Striking {
                    a: names[i].clone(),
                    b: names[j].clone(),
                    energy: energies[i][j],
                    marginal: exact[i][j],
                    via: names[k].clone(),
                    energy_a_via: energies[i][k],
                    energy_b_via: energies[j][k],
                });
            }
        }
    }
    let k = args.perturb_samples as f64;
    let (mut over, mut under) = (0, 0);
    for q in &pairs {
        let se = (q.marginal * (1.0 - q.marginal) / k).sqrt() + 1.0 / k;
        if q.perturb_and_map > q.marginal + 4.0 * se {
            over += 1;
        } else if q.perturb_and_map < q.marginal - 4.0 * se {
            under += 1;
        }
    }
    let diffs: Vec<f64> = pairs
        .iter()
        .map(|q| q.perturb_and_map - q.marginal)
        .collect();
    let map = trellis.map().clusters.clone();
    let binder = binder_report(&marginals, &map, &names)?;
    let report = Report {
        data: source,
        names: names.clone(),
        top_genes: args.top_genes.min(matrix.cols),
        beta: args.beta,
        log_z: trellis.log_z(),
        partitions: trellis.num_partitions().to_string(),
        map_log_energy: trellis.map().log_energy,
        map_clusters: map
            .iter()
            .map(|c| c.iter().map(|&i| names[i].clone()).collect())
            .collect(),
        binder,
        pearson_energy_marginal: pearson(&e, &p),
        spearman_energy_marginal: spearman(&e, &p),
        striking,
        perturb_samples: args.perturb_samples,
        perturb_mean_difference: diffs.iter().sum::<f64>() / diffs.len() as f64,
        perturb_max_abs_difference: diffs.iter().fold(0.0, |m, d| m.max(d.abs())),
        perturb_overestimated: over,
        perturb_underestimated: under,
        exact_seconds,
        perturb_seconds,
        pairs,
        energies,
        marginals: exact,
    };
    if let Some(dir) = &args.svg {
        crate::svg::create_dir(dir)?;
        let files = [
            ("fig2-energy-vs-marginal.svg", fig2(&report).render()),
            ("fig3-perturb-vs-exact.svg", fig3(&report).render()),
            ("fig4-energies.svg", heatmap(&report, false).render()),
            ("fig5-marginals.svg", heatmap(&report, true).render()),
        ];
        for (name, text) in files {
            crate::svg::write_figure(&dir.join(name), &text)?;
        }
    }
    if args.json {
        Ok(serde_json::to_string(&report)? + "\n")
    } else {
        Ok(markdown(&report))
    }
}

fn fig2(r: &Report) -> Plot {
    Plot {
        title: "Fig. 2: pairwise energy vs exact pairwise marginal".into(),
        x_label: "pairwise energy beta*w_ij (log E of the cluster {i, j})".into(),
        y_label: "P(i and j in the same cluster)".into(),
        log_x: false,
        series: vec![Series {
            label: "sample pairs".into(),
            color: "#1f77b4",
            style: Style::Points,
            points: r
                .pairs
                .iter()
                .map(|p| (p.energy, p.marginal, 0.0))
                .collect(),
        }],
        hlines: vec![],
    }
}

fn fig3(r: &Report) -> Plot {
    Plot {
        title: "Fig. 3: Perturb-and-MAP vs exact pairwise marginals".into(),
        x_label: "exact pairwise marginal".into(),
        y_label: format!("Perturb-and-MAP estimate ({} draws)", r.perturb_samples),
        log_x: false,
        series: vec![
            Series {
                label: "y = x".into(),
                color: "#999999",
                style: Style::Line,
                points: vec![(0.0, 0.0, 0.0), (1.0, 1.0, 0.0)],
            },
            Series {
                label: "sample pairs".into(),
                color: "#d62728",
                style: Style::Points,
                points: r
                    .pairs
                    .iter()
                    .map(|p| {
                        let k = r.perturb_samples as f64;
                        let se = (p.perturb_and_map * (1.0 - p.perturb_and_map) / k).sqrt();
                        (p.marginal, p.perturb_and_map, 2.0 * se)
                    })
                    .collect(),
            },
        ],
        hlines: vec![],
    }
}

fn heatmap(r: &Report, marginals: bool) -> Heatmap {
    if marginals {
        Heatmap {
            title: "Fig. 5: exact pairwise marginals P(i ~ j)".into(),
            labels: r.names.clone(),
            values: r.marginals.clone(),
            diverging: false,
            digits: 2,
        }
    } else {
        Heatmap {
            title: "Fig. 4: pairwise energies beta*w_ij".into(),
            labels: r.names.clone(),
            values: r.energies.clone(),
            diverging: true,
            digits: 1,
        }
    }
}

/// The Binder-optimal partition (equal costs) against the MAP partition
/// `map`: both expected losses and the pairs they place differently.
fn binder_report(
    marginals: &trellis::flat::FlatMarginals,
    map: &[Vec<usize>],
    names: &[String],
) -> Result<Binder> {
    let options = trellis::Options::default();
    let b = trellis::summary::binder_partition(marginals, 1.0, 1.0, &options)?;
    let map_expected_loss = trellis::summary::binder_loss(marginals, map, 1.0, 1.0)?;
    let label = |parts: &[Vec<usize>]| {
        let mut l = vec![0; names.len()];
        for (k, c) in parts.iter().enumerate() {
            for &i in c {
                l[i] = k;
            }
        }
        l
    };
    let (lm, lb) = (label(map), label(&b.clusters));
    let mut disagreements = Vec::new();
    for i in 0..names.len() {
        for j in i + 1..names.len() {
            let map_together = lm[i] == lm[j];
            if map_together != (lb[i] == lb[j]) {
                disagreements.push(Disagreement {
                    a: names[i].clone(),
                    b: names[j].clone(),
                    marginal: marginals.pairwise(i, j)?,
                    map_together,
                });
            }
        }
    }
    Ok(Binder {
        clusters: b
            .clusters
            .iter()
            .map(|c| c.iter().map(|&i| names[i].clone()).collect())
            .collect(),
        expected_loss: b.expected_loss,
        map_expected_loss,
        disagreements,
    })
}

/// `{a, b} {c}` of named clusters.
fn braces(clusters: &[Vec<String>]) -> String {
    clusters
        .iter()
        .map(|c| format!("{{{}}}", c.join(", ")))
        .collect::<Vec<_>>()
        .join(" ")
}

fn markdown(r: &Report) -> String {
    let mut o = String::new();
    o.push_str(
        "# Flat cluster trellis: pairwise energies, exact and Perturb-and-MAP marginals\n\n",
    );
    o.push_str(&format!(
        "- Data: {} ({} samples; top {} genes by variance, log, exp(-RMS distance), centred)\n",
        r.data,
        r.names.len(),
        r.top_genes
    ));
    o.push_str(&format!(
        "- Correlation clustering, beta = {}: log Z = {:.6} over {} partitions (exact, {:.3} s with all marginals)\n",
        r.beta, r.log_z, r.partitions, r.exact_seconds
    ));
    let clusters: Vec<String> = r
        .map_clusters
        .iter()
        .map(|c| format!("{{{}}}", c.join(", ")))
        .collect();
    o.push_str(&format!(
        "- MAP clustering (log E = {:.4}): {}\n\n",
        r.map_log_energy,
        clusters.join(" ")
    ));
    let b = &r.binder;
    o.push_str("## The Binder-optimal partition vs the MAP partition\n\n");
    o.push_str(&format!(
        "- Binder-optimal partition (equal costs): {}\n- Expected Binder loss: {:.4} \
         (MAP partition: {:.4}) pairs wrong of {}\n",
        braces(&b.clusters),
        b.expected_loss,
        b.map_expected_loss,
        r.pairs.len()
    ));
    if b.disagreements.is_empty() {
        o.push_str("- The two partitions are the same.\n\n");
    } else {
        o.push_str("\n| a | b | exact P(a ~ b) | MAP | Binder |\n|---|---|---:|---|---|\n");
        for d in &b.disagreements {
            let (m, x) = if d.map_together {
                ("together", "apart")
            } else {
                ("apart", "together")
            };
            o.push_str(&format!(
                "| {} | {} | {:.4} | {m} | {x} |\n",
                d.a, d.b, d.marginal
            ));
        }
        o.push('\n');
    }
    o.push_str("## Fig. 2: pairwise energy vs pairwise marginal\n\n");
    o.push_str(&format!(
        "Pearson correlation {:.3}, Spearman {:.3} over {} pairs.\n",
        r.pearson_energy_marginal,
        r.spearman_energy_marginal,
        r.pairs.len()
    ));
    if let Some(s) = &r.striking {
        o.push_str(&format!(
            "The lowest-energy pair that is more likely together than apart: {} and {} \
             (energy {:.2}, marginal {:.3}); both have high energy with {} ({:.2} and {:.2}).\n",
            s.a, s.b, s.energy, s.marginal, s.via, s.energy_a_via, s.energy_b_via
        ));
    }
    o.push_str("\n## Fig. 3: Perturb-and-MAP vs exact\n\n");
    o.push_str(&format!(
        "{} draws ({:.2} s): mean difference (estimate - exact) {:+.4}, largest |difference| {:.4}; \
         {} pairs overestimated and {} underestimated beyond 4 standard errors, of {}.\n\n",
        r.perturb_samples,
        r.perturb_seconds,
        r.perturb_mean_difference,
        r.perturb_max_abs_difference,
        r.perturb_overestimated,
        r.perturb_underestimated,
        r.pairs.len()
    ));
    o.push_str("## Pairs\n\n| a | b | energy | exact P(a ~ b) | Perturb-and-MAP |\n|---|---|---|---|---|\n");
    for p in &r.pairs {
        o.push_str(&format!(
            "| {} | {} | {:.3} | {:.4} | {:.4} |\n",
            p.a, p.b, p.energy, p.marginal, p.perturb_and_map
        ));
    }
    o
}
