//! `trellis-repro ginkgo`: the jet results of the trellis paper (§4.2),
//! reproduced on a jets file, for both likelihood variants.
//!
//! - **Table 1**: mean ± standard deviation over the jets of the
//!   log-likelihood differences exact − beam search, exact − greedy and
//!   beam search − greedy (beam width `N(N-1)/2`, as in the paper).
//! - **Fig. 6**: exact posterior sampling on a 5-leaf jet: the frequency of
//!   every tree in `--samples` draws against its exact probability, with the
//!   total-variation distance and the bound derived from the sample size.
//! - **Fig. 7**: the sparse trellis: MAP log-likelihood relative to greedy,
//!   averaged over test jets with `--sparse-leaves` leaves, against the
//!   sparsity index, for the simulator trellis and the beam-search trellis.
//!   As in the paper, the trellises are pre-built from training trees and then
//!   applied to the test jets, leaves matched by increasing `|p|`: simulator
//!   trees, or the best beam-search tree of simulated training jets, with the
//!   parameters of the first test jet.

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Args;
use rayon::prelude::*;
use serde::Serialize;
use trellis::baselines::{beam_search, default_beam_width, greedy};
use trellis::ginkgo::{
    Ginkgo, Jet, JetsFile, LeafOrdering, SimulatorParams, Variant, generate_jet, leaf_order,
    simulator_trees, to_positions,
};
use trellis::sparse::SparseTrellis;
use trellis::{Tree, Trellis};

use crate::svg::{Plot, Series, Style};

#[derive(Args, Debug)]
pub struct GinkgoExperimentArgs {
    /// The jets (the test set), e.g. from
    /// `trellis ginkgo generate --n-jets 5000 --min-leaves 5 --max-leaves 10`.
    #[arg(long, value_name = "FILE")]
    pub jets: PathBuf,
    /// Write the figures (fig6-posterior.svg, fig7-sparse-current.svg,
    /// fig7-sparse-legacy.svg) into this directory.
    #[arg(long, value_name = "DIR")]
    pub svg: Option<PathBuf>,
    /// Posterior samples of the sampling check (Fig. 6).
    #[arg(long, default_value_t = 100_000, value_name = "K")]
    pub samples: usize,
    /// Seed of the samples and of the training trees of the sparse trellises.
    #[arg(long, default_value_t = 0, value_name = "S")]
    pub seed: u64,
    /// Leaves of the jets of the sparse-trellis experiment (Fig. 7).
    #[arg(long, default_value_t = 9, value_name = "N")]
    pub sparse_leaves: usize,
    /// Test jets of the sparse-trellis experiment (the first with that many leaves).
    #[arg(long, default_value_t = 100, value_name = "J")]
    pub sparse_jets: usize,
    /// Training trees of the sparse trellises, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "10,30,100,300,1000,3000",
        value_name = "K,..."
    )]
    pub sparse_trees: Vec<usize>,
    /// Print the results as one JSON object instead of a Markdown report.
    #[arg(long)]
    pub json: bool,
}

/// Mean and sample standard deviation.
#[derive(Serialize, Clone, Copy)]
struct Stat {
    mean: f64,
    std: f64,
}

fn stat(xs: &[f64]) -> Stat {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    Stat {
        mean,
        std: var.sqrt(),
    }
}

#[derive(Serialize)]
struct Table1 {
    variant: &'static str,
    jets: usize,
    exact_minus_beam: Stat,
    exact_minus_greedy: Stat,
    beam_minus_greedy: Stat,
    beam_finds_map: usize,
    greedy_finds_map: usize,
    /// Jets where greedy or beam search ended on a zero-likelihood tree (left out).
    zero_likelihood: usize,
}

fn variant_name(v: Variant) -> &'static str {
    match v {
        Variant::Current => "current",
        Variant::Legacy => "legacy",
    }
}

/// The log-likelihoods of the exact MAP, the beam search's best tree and the greedy tree.
fn three_values(jet: &Jet, variant: Variant) -> Result<(f64, f64, f64)> {
    let model = Ginkgo::new(jet, variant);
    let exact = Trellis::new(&model)?.map().log_potential;
    let beam = beam_search(&model, default_beam_width(jet.len()))?[0].log_potential;
    Ok((exact, beam, greedy(&model)?.log_potential))
}

fn table1(jets: &[Jet], variant: Variant) -> Result<Table1> {
    let values: Vec<(f64, f64, f64)> = jets
        .par_iter()
        .map(|j| three_values(j, variant))
        .collect::<Result<_>>()?;
    let finite: Vec<&(f64, f64, f64)> = values
        .iter()
        .filter(|v| v.0.is_finite() && v.1.is_finite() && v.2.is_finite())
        .collect();
    let diff =
        |f: fn(&(f64, f64, f64)) -> f64| stat(&finite.iter().map(|v| f(v)).collect::<Vec<_>>());
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(1.0);
    Ok(Table1 {
        variant: variant_name(variant),
        jets: finite.len(),
        exact_minus_beam: diff(|v| v.0 - v.1),
        exact_minus_greedy: diff(|v| v.0 - v.2),
        beam_minus_greedy: diff(|v| v.1 - v.2),
        beam_finds_map: finite.iter().filter(|v| close(v.0, v.1)).count(),
        greedy_finds_map: finite.iter().filter(|v| close(v.0, v.2)).count(),
        zero_likelihood: values.len() - finite.len(),
    })
}

#[derive(Serialize)]
struct TreeProbability {
    tree: Tree,
    log_likelihood: f64,
    exact: f64,
    sampled: f64,
}

#[derive(Serialize)]
struct Posterior {
    jet: String,
    variant: &'static str,
    samples: usize,
    trees_with_nonzero_probability: usize,
    total_variation: f64,
    total_variation_bound: f64,
    max_abs_difference: f64,
    truth_log_likelihood: Option<f64>,
    trees: Vec<TreeProbability>,
}

/// Fig. 6: every tree's sampled frequency against its exact probability.
fn posterior(jet: &Jet, variant: Variant, k: usize, seed: u64) -> Result<Posterior> {
    let model = Ginkgo::new(jet, variant);
    let trellis = Trellis::new(model)?;
    let mut counts = std::collections::HashMap::new();
    for t in trellis.samples(k, seed) {
        *counts.entry(t.canonical().to_string()).or_insert(0usize) += 1;
    }
    let mut trees = Vec::new();
    for t in Tree::all(jet.len()) {
        let lp = trellis.log_probability(&t)?;
        let exact = lp.exp();
        let sampled = counts.get(&t.to_string()).copied().unwrap_or(0) as f64 / k as f64;
        if exact > 0.0 || sampled > 0.0 {
            trees.push(TreeProbability {
                log_likelihood: trellis.tree_log_potential(&t)?,
                tree: t,
                exact,
                sampled,
            });
        }
    }
    trees.sort_by(|a, b| b.exact.total_cmp(&a.exact));
    let m = trees.len();
    let tv = 0.5
        * trees
            .iter()
            .map(|t| (t.sampled - t.exact).abs())
            .sum::<f64>();
    // E‖p̂ − p‖₁ ≤ √((m−1)/K) and McDiarmid: P(‖p̂ − p‖₁ ≥ E + ε) ≤ exp(−Kε²/2), δ = 1e-6.
    let bound =
        0.5 * (((m.max(1) - 1) as f64 / k as f64).sqrt() + (2.0 * 1e6f64.ln() / k as f64).sqrt());
    Ok(Posterior {
        jet: jet.id.clone(),
        variant: variant_name(variant),
        samples: k,
        trees_with_nonzero_probability: trees.iter().filter(|t| t.exact > 0.0).count(),
        total_variation: tv,
        total_variation_bound: bound,
        max_abs_difference: trees
            .iter()
            .map(|t| (t.sampled - t.exact).abs())
            .fold(0.0, f64::max),
        truth_log_likelihood: jet
            .truth
            .as_ref()
            .map(|t| trellis.tree_log_potential(t))
            .transpose()?,
        trees,
    })
}

#[derive(Serialize)]
struct SparsePoint {
    trees: usize,
    vertices: usize,
    num_trees_realised: String,
    sparsity: f64,
    /// Mean over the test jets of (sparse MAP − greedy), jets with a tree of
    /// non-zero likelihood on the sparse trellis.
    mean_map_minus_greedy: f64,
    /// Test jets on which the sparse trellis realises no tree of non-zero likelihood.
    jets_without_tree: usize,
}

#[derive(Serialize)]
struct SparseCurve {
    variant: &'static str,
    leaves: usize,
    test_jets: usize,
    exact_minus_greedy: f64,
    beam_minus_greedy: f64,
    simulator: Vec<SparsePoint>,
    beam: Vec<SparsePoint>,
}

/// The mean (sparse MAP − greedy) over the test jets of a trellis over positions.
fn evaluate(
    trellis: &SparseTrellis,
    tests: &[(Jet, f64)],
    variant: Variant,
    k: usize,
) -> SparsePoint {
    let results: Vec<Option<f64>> = tests
        .par_iter()
        .map(|(jet, greedy_value)| {
            let order = leaf_order(&jet.leaves, LeafOrdering::Momentum);
            let mut reordered = jet.clone();
            reordered.leaves = order.iter().map(|&i| jet.leaves[i]).collect();
            let model = Ginkgo::new(&reordered, variant);
            trellis
                .infer(&model)
                .ok()
                .map(|inf| inf.map().log_potential - greedy_value)
                .filter(|v| v.is_finite())
        })
        .collect();
    let ok: Vec<f64> = results.iter().flatten().copied().collect();
    SparsePoint {
        trees: k,
        vertices: trellis.num_vertices(),
        num_trees_realised: trellis.num_trees_realised().to_string(),
        sparsity: trellis.sparsity(),
        mean_map_minus_greedy: ok.iter().sum::<f64>() / ok.len().max(1) as f64,
        jets_without_tree: results.len() - ok.len(),
    }
}

/// Fig. 7 for one likelihood variant.
fn sparse_curve(
    tests: &[Jet],
    variant: Variant,
    args: &GinkgoExperimentArgs,
) -> Result<SparseCurve> {
    let n = args.sparse_leaves;
    let values: Vec<(f64, f64, f64)> = tests
        .par_iter()
        .map(|j| three_values(j, variant))
        .collect::<Result<_>>()?;
    let with_greedy: Vec<(Jet, f64)> = tests
        .iter()
        .cloned()
        .zip(values.iter().map(|v| v.2))
        .collect();
    let mean =
        |f: fn(&(f64, f64, f64)) -> f64| values.iter().map(f).sum::<f64>() / values.len() as f64;
    // Training data: the parameters of the first test jet.
    let first = &tests[0];
    let params = SimulatorParams::like(first);
    let max_k = args.sparse_trees.iter().copied().max().unwrap_or(0);
    let simulated = simulator_trees(first, max_k, LeafOrdering::Momentum, args.seed ^ 0x51)?;
    let training_seed = args.seed ^ 0xB5;
    let beam_trees: Vec<Tree> = (0..max_k)
        .into_par_iter()
        .map(|i| {
            let jet = generate_jet(&params, training_seed, i, n, n)?;
            let model = Ginkgo::new(&jet, variant);
            let best = beam_search(&model, default_beam_width(n))?
                .swap_remove(0)
                .tree;
            Ok(to_positions(
                &best,
                &leaf_order(&jet.leaves, LeafOrdering::Momentum),
            ))
        })
        .collect::<Result<_>>()?;
    let curve = |trees: &[Tree]| -> Result<Vec<SparsePoint>> {
        args.sparse_trees
            .iter()
            .map(|&k| {
                Ok(evaluate(
                    &SparseTrellis::from_trees(n, &trees[..k])?,
                    &with_greedy,
                    variant,
                    k,
                ))
            })
            .collect()
    };
    Ok(SparseCurve {
        variant: variant_name(variant),
        leaves: n,
        test_jets: tests.len(),
        exact_minus_greedy: mean(|v| v.0 - v.2),
        beam_minus_greedy: mean(|v| v.1 - v.2),
        simulator: curve(&simulated)?,
        beam: curve(&beam_trees)?,
    })
}

#[derive(Serialize)]
struct Report {
    jets_file: String,
    table1: Vec<Table1>,
    posterior: Posterior,
    sparse: Vec<SparseCurve>,
}

fn posterior_plot(p: &Posterior) -> Plot {
    let k = p.samples as f64;
    Plot {
        title: format!(
            "Posterior over the trees of jet {} ({} samples)",
            p.jet, p.samples
        ),
        x_label: "tree log-likelihood".into(),
        y_label: "probability".into(),
        log_x: false,
        series: vec![
            Series {
                label: "exact".into(),
                color: "green",
                style: Style::Bars(0.06),
                points: p
                    .trees
                    .iter()
                    .map(|t| (t.log_likelihood, t.exact, 0.0))
                    .collect(),
            },
            Series {
                label: "sampled (±1σ)".into(),
                color: "black",
                style: Style::Points,
                points: p
                    .trees
                    .iter()
                    .map(|t| {
                        (
                            t.log_likelihood,
                            t.sampled,
                            (t.exact * (1.0 - t.exact) / k).sqrt(),
                        )
                    })
                    .collect(),
            },
        ],
        hlines: vec![],
    }
}

fn sparse_plot(c: &SparseCurve) -> Plot {
    let line = |label: &str, color, pts: &[SparsePoint]| Series {
        label: label.into(),
        color,
        style: Style::Line,
        points: pts
            .iter()
            .map(|p| (p.sparsity, p.mean_map_minus_greedy, 0.0))
            .collect(),
    };
    Plot {
        title: format!(
            "Sparse trellises, {} jets with {} leaves ({} likelihood)",
            c.test_jets, c.leaves, c.variant
        ),
        x_label: "sparsity index (realised trees / (2N-3)!!)".into(),
        y_label: "mean MAP log-likelihood - greedy".into(),
        log_x: true,
        series: vec![
            line("Sim. trellis", "royalblue", &c.simulator),
            line("BS trellis", "darkorange", &c.beam),
        ],
        hlines: vec![
            ("exact trellis".into(), c.exact_minus_greedy, "green"),
            ("beam search".into(), c.beam_minus_greedy, "purple"),
            ("greedy".into(), 0.0, "gray"),
        ],
    }
}

fn markdown(r: &Report) -> String {
    let mut s = format!(
        "# Ginkgo jets: the trellis paper's results on `{}`\n\n",
        r.jets_file
    );
    s += "## Table 1: log-likelihood differences of the MAP trees (mean ± std)\n\n";
    s += "| likelihood | jets | exact − beam | exact − greedy | beam − greedy | beam = MAP | greedy = MAP |\n|---|---|---|---|---|---|---|\n";
    for t in &r.table1 {
        s += &format!(
            "| {} | {} | {:.2} ± {:.2} | {:.2} ± {:.2} | {:.2} ± {:.2} | {} | {} |\n",
            t.variant,
            t.jets,
            t.exact_minus_beam.mean,
            t.exact_minus_beam.std,
            t.exact_minus_greedy.mean,
            t.exact_minus_greedy.std,
            t.beam_minus_greedy.mean,
            t.beam_minus_greedy.std,
            t.beam_finds_map,
            t.greedy_finds_map
        );
    }
    s += "| paper (legacy, Ginkgo510, 5000 jets) | 5000 | 0.4 ± 0.5 | 1.5 ± 1.1 | 1.1 ± 1.1 | | |\n\n";
    let p = &r.posterior;
    s += &format!(
        "## Fig. 6: exact posterior sampling, jet {} ({} likelihood)\n\n{} samples over the {} trees of non-zero probability: \
         total-variation distance {:.4} (bound for a correct sampler at δ = 1e-6: {:.4}); largest |frequency − probability| {:.4}.{}\n\n",
        p.jet,
        p.variant,
        p.samples,
        p.trees_with_nonzero_probability,
        p.total_variation,
        p.total_variation_bound,
        p.max_abs_difference,
        p.truth_log_likelihood
            .map(|v| format!(" Truth tree log-likelihood: {v:.3}."))
            .unwrap_or_default()
    );
    s += "| tree | log-likelihood | exact p | sampled |\n|---|---|---|---|\n";
    for t in p.trees.iter().take(10) {
        s += &format!(
            "| `{}` | {:.3} | {:.4} | {:.4} |\n",
            t.tree, t.log_likelihood, t.exact, t.sampled
        );
    }
    s += "\n";
    for c in &r.sparse {
        s += &format!(
            "## Fig. 7: sparse trellises, {} test jets with {} leaves ({} likelihood)\n\n\
             Mean log-likelihood of the MAP relative to greedy: exact trellis {:.3}, beam search {:.3}.\n\n\
             | training trees | Sim. trellis sparsity | Sim. MAP − greedy | BS trellis sparsity | BS MAP − greedy |\n|---|---|---|---|---|\n",
            c.test_jets, c.leaves, c.variant, c.exact_minus_greedy, c.beam_minus_greedy
        );
        for (a, b) in c.simulator.iter().zip(&c.beam) {
            let note = |p: &SparsePoint| {
                if p.jets_without_tree > 0 {
                    format!(" ({} jets without a tree)", p.jets_without_tree)
                } else {
                    String::new()
                }
            };
            s += &format!(
                "| {} | {:.2e} | {:.3}{} | {:.2e} | {:.3}{} |\n",
                a.trees,
                a.sparsity,
                a.mean_map_minus_greedy,
                note(a),
                b.sparsity,
                b.mean_map_minus_greedy,
                note(b)
            );
        }
        s += "\n";
    }
    s
}

pub fn ginkgo(args: &GinkgoExperimentArgs) -> Result<String> {
    // The figures' directory first, so that a bad --svg fails before the runs.
    if let Some(dir) = &args.svg {
        crate::svg::create_dir(dir)?;
    }
    let file = JetsFile::read(&args.jets)?;
    if let Some(j) = file.jets.iter().find(|j| j.len() > 12) {
        bail!(
            "jet {} has {} leaves: the experiment runs the exact trellis, use jets with at most 12",
            j.id,
            j.len()
        );
    }
    let Some(five) = file.jets.iter().find(|j| j.len() == 5) else {
        bail!("the posterior check (Fig. 6) needs a jet with 5 leaves in the file");
    };
    let tests: Vec<Jet> = file
        .jets
        .iter()
        .filter(|j| j.len() == args.sparse_leaves)
        .take(args.sparse_jets)
        .cloned()
        .collect();
    if tests.is_empty() {
        bail!(
            "no jet with {} leaves for the sparse-trellis experiment (--sparse-leaves)",
            args.sparse_leaves
        );
    }
    if args.sparse_trees.contains(&0) {
        bail!("--sparse-trees must be positive");
    }
    let variants = [Variant::Current, Variant::Legacy];
    let report = Report {
        jets_file: args.jets.display().to_string(),
        table1: variants
            .iter()
            .map(|&v| table1(&file.jets, v))
            .collect::<Result<_>>()?,
        posterior: posterior(five, Variant::Current, args.samples, args.seed)?,
        sparse: variants
            .iter()
            .map(|&v| sparse_curve(&tests, v, args))
            .collect::<Result<_>>()?,
    };
    if let Some(dir) = &args.svg {
        crate::svg::create_dir(dir)?;
        crate::svg::write_figure(
            &dir.join("fig6-posterior.svg"),
            &posterior_plot(&report.posterior).render(),
        )?;
        for c in &report.sparse {
            crate::svg::write_figure(
                &dir.join(format!("fig7-sparse-{}.svg", c.variant)),
                &sparse_plot(c).render(),
            )?;
        }
    }
    if args.json {
        Ok(serde_json::to_string(&report)? + "\n")
    } else {
        Ok(markdown(&report))
    }
}
