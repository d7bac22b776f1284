//! `trellis-repro bench`: wall time and splits per second of the exact passes.
//!
//! Random weights, uniform in [-1, 1] (seeded), for each requested N; each
//! pass is repeated and the fastest run is reported (the least disturbed by
//! other processes on a shared machine).

use anyhow::Result;
use clap::Args;
use rand::RngExt;
use serde::Serialize;
use trellis::{Distances, General, Matrix, Model, Trellis, Weights, Workload, total_splits};

use crate::timing::best_of;
use trellis::models::{CostModel, ModelName, PairwiseData};

/// Parses `--model`: a model of the library's registry.
pub fn model_name(s: &str) -> Result<ModelName, String> {
    s.parse().map_err(|e: trellis::Error| e.to_string())
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Numbers of points to measure, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "10,14,18,20",
        value_name = "N,..."
    )]
    sizes: Vec<usize>,
    /// Runs per size; the fastest is reported.
    #[arg(long, default_value_t = 3, value_name = "R")]
    repeats: usize,
    /// Model of the split potential: hcc, dasgupta (on the absolute weights) or a
    /// linkage potential (linkage-average, linkage-complete, linkage-single; on the
    /// absolute weights as distances).
    #[arg(long, default_value = "hcc", value_parser = model_name)]
    model: ModelName,
    /// Call log psi per split (the kernel user-defined models get) instead of
    /// the separable kernel of the built-in models.
    #[arg(long)]
    general: bool,
    /// Also time the outside pass (every cluster marginal).
    #[arg(long)]
    marginals: bool,
    /// Seed of the random weights.
    #[arg(long, default_value_t = 1, value_name = "S")]
    seed: u64,
    /// Print one JSON object per size instead of a table.
    #[arg(long)]
    json: bool,
    /// Instead of random weights, time the exact MAP + log Z of every jet of this
    /// jets file (Ginkgo likelihood, jets in parallel); reports jets/s and splits/s.
    #[arg(long, value_name = "FILE")]
    jets: Option<std::path::PathBuf>,
    /// With --jets: the paper-era likelihood instead of the current one.
    #[arg(long, requires = "jets")]
    legacy: bool,
    /// Time the flat trellis (correlation clustering over all partitions):
    /// log Z + MAP, then every cluster marginal and the pairwise matrix.
    #[arg(long, conflicts_with_all = ["jets", "general", "marginals"])]
    flat: bool,
}

#[derive(Serialize)]
struct FlatRow {
    n: usize,
    threads: usize,
    terms: u64,
    inside_s: f64,
    terms_per_s: f64,
    marginals_s: f64,
}

/// The flat trellis on random weights: the best of the repeats per size.
fn bench_flat(args: &BenchArgs) -> Result<String> {
    let mut out = String::new();
    if !args.json {
        out += &format!(
            "flat trellis (correlation clustering), {} threads, best of {} runs\n   N           terms   log Z+MAP (s)      terms/s   marginals+pairwise (s)\n",
            rayon::current_num_threads(),
            args.repeats.max(1)
        );
    }
    for &n in &args.sizes {
        let w = random_weights(n, args.seed)?;
        let model = trellis::CorrelationClustering::new(&w, 1.0)?;
        let (inside_s, t) = best_of(args.repeats, || {
            Ok(trellis::flat::FlatTrellis::new(&model)?)
        })?;
        let (marginals_s, _) = best_of(args.repeats, || Ok(t.marginals()))?;
        // Terms: every subset S sums over the 2^(|S|-1) clusters holding its lowest point.
        let terms = (3u64.pow(n as u32) - 1) / 2;
        let row = FlatRow {
            n,
            threads: rayon::current_num_threads(),
            terms,
            inside_s,
            terms_per_s: terms as f64 / inside_s,
            marginals_s,
        };
        if args.json {
            out += &(serde_json::to_string(&row)? + "\n");
        } else {
            out += &format!(
                "{:>4} {:>15} {:>15.6} {:>12.3e} {:>24.6}\n",
                n, terms, inside_s, row.terms_per_s, marginals_s
            );
        }
    }
    Ok(out)
}

#[derive(Serialize)]
struct JetsRow {
    jets: usize,
    leaves_min: usize,
    leaves_max: usize,
    threads: usize,
    splits: u64,
    seconds: f64,
    jets_per_s: f64,
    splits_per_s: f64,
}

/// Exact MAP + log Z of every jet of a file, in parallel; the best of the repeats.
fn bench_jets(args: &BenchArgs, path: &std::path::Path) -> Result<String> {
    use rayon::prelude::*;
    let file = trellis::ginkgo::JetsFile::read(path)?;
    if let Some(j) = file.jets.iter().find(|j| j.len() > trellis::MAX_POINTS) {
        anyhow::bail!(
            "jet {} has {} leaves: too many for the exact trellis",
            j.id,
            j.len()
        );
    }
    let variant = if args.legacy {
        trellis::ginkgo::Variant::Legacy
    } else {
        trellis::ginkgo::Variant::Current
    };
    let splits: u64 = file.jets.iter().map(|j| total_splits(j.len()) as u64).sum();
    let (seconds, _) = best_of(args.repeats, || {
        file.jets
            .par_iter()
            .map(|jet| {
                let t = Trellis::new(trellis::ginkgo::Ginkgo::new(jet, variant))?;
                Ok(t.map().log_potential + t.log_z())
            })
            .collect::<Result<Vec<f64>>>()
    })?;
    let row = JetsRow {
        jets: file.jets.len(),
        leaves_min: file.jets.iter().map(|j| j.len()).min().unwrap_or(0),
        leaves_max: file.jets.iter().map(|j| j.len()).max().unwrap_or(0),
        threads: rayon::current_num_threads(),
        splits,
        seconds,
        jets_per_s: file.jets.len() as f64 / seconds,
        splits_per_s: splits as f64 / seconds,
    };
    if args.json {
        return Ok(serde_json::to_string(&row)? + "\n");
    }
    Ok(format!(
        "exact MAP + log Z of {} jets ({}-{} leaves, {:?} likelihood), {} threads, best of {} runs:\n\
         {:.2} s, {:.0} jets/s, {:.3e} splits/s ({} splits; parsing not included)\n",
        row.jets,
        row.leaves_min,
        row.leaves_max,
        variant,
        row.threads,
        args.repeats.max(1),
        row.seconds,
        row.jets_per_s,
        row.splits_per_s,
        row.splits
    ))
}

#[derive(Serialize)]
struct Row {
    n: usize,
    threads: usize,
    model: String,
    kernel: &'static str,
    /// The vector path of the blocked kernel (`TRELLIS_KERNEL` or the best).
    path: String,
    splits: u64,
    /// `Trellis::map_only`: the MAP tree alone.
    map_s: f64,
    /// `Trellis::log_z_only`: log Z alone.
    logz_s: f64,
    /// `Trellis::new`: MAP and log Z of every cluster (what marginals and samples need).
    inside_s: f64,
    /// Splits per second of `Trellis::new`.
    splits_per_s: f64,
    /// Nanoseconds per split per core of each.
    map_ns: f64,
    logz_ns: f64,
    inside_ns: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    outside_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    outside_terms_per_s: Option<f64>,
}

pub fn random_weights(n: usize, seed: u64) -> Result<Weights> {
    let mut rng = trellis::random::rng(seed);
    let mut data = vec![0.0; n * n];
    for i in 0..n {
        for j in i + 1..n {
            let v: f64 = rng.random_range(-1.0..1.0);
            data[i * n + j] = v;
            data[j * n + i] = v;
        }
    }
    Ok(Weights::from_matrix(&Matrix {
        rows: n,
        cols: n,
        data,
    })?)
}

/// `|w|`: Dasgupta's cost needs similarities >= 0.
pub fn absolute(w: &Weights) -> Result<Weights> {
    let n = w.n();
    let data = (0..n * n).map(|k| w.get(k / n, k % n).abs()).collect();
    Ok(Weights::from_matrix(&Matrix {
        rows: n,
        cols: n,
        data,
    })?)
}

fn measure<M: Model>(model: M, args: &BenchArgs, n: usize) -> Result<Row> {
    let splits = total_splits(n) as u64;
    let model = &model;
    let options = trellis::Options::default();
    let (map_s, _) = best_of(args.repeats, || Ok(Trellis::map_only(model, &options)?))?;
    let (logz_s, _) = best_of(args.repeats, || Ok(Trellis::log_z_only(model, &options)?))?;
    let (inside_s, trellis) = best_of(args.repeats, || Ok(Trellis::new(model)?))?;
    let outside_s = if args.marginals {
        let (s, _) = best_of(args.repeats, || Ok(trellis.marginals().map(|_| ())?))?;
        Some(s)
    } else {
        None
    };
    let terms = (3u64.pow(n as u32) + 1 - (2u64 << n)) as f64;
    let threads = rayon::current_num_threads();
    let ns = |s: f64| s * 1e9 * threads as f64 / splits as f64;
    Ok(Row {
        n,
        threads,
        model: args.model.to_string(),
        kernel: if args.general { "general" } else { "separable" },
        path: trellis::KernelPath::choose(None)?.to_string(),
        splits,
        map_s,
        logz_s,
        inside_s,
        splits_per_s: splits as f64 / inside_s,
        map_ns: ns(map_s),
        logz_ns: ns(logz_s),
        inside_ns: ns(inside_s),
        outside_s,
        outside_terms_per_s: outside_s.map(|s| terms / s),
    })
}

/// [`measure`] of `model`, or of its general form with `--general`.
fn measure_model<M: Model>(model: M, args: &BenchArgs, n: usize) -> Result<Row> {
    if args.general {
        measure(General(model), args, n)
    } else {
        measure(model, args, n)
    }
}

pub fn run(args: &BenchArgs) -> Result<String> {
    if let Some(path) = &args.jets {
        return bench_jets(args, path);
    }
    if args.flat {
        return bench_flat(args);
    }
    if matches!(args.model, ModelName::Ginkgo | ModelName::GinkgoLegacy) {
        anyhow::bail!(
            "--model ginkgo is benchmarked with --jets FILE (A* against the DP: trellis-repro astar-bench)"
        );
    }
    let mut out = String::new();
    if !args.json {
        out += &format!(
            "exact trellis passes, {} model, {} kernel ({} path), {} threads, best of {} runs\n",
            format!("{:?}", args.model).to_lowercase(),
            if args.general { "general" } else { "separable" },
            trellis::KernelPath::choose(None)?,
            rayon::current_num_threads(),
            args.repeats.max(1)
        );
        out += "(ns = nanoseconds per split per core; MAP+logZ = every cluster's, as marginals and samples need)\n";
        out += "   N          splits    MAP (s)     ns   logZ (s)     ns  MAP+logZ (s)     ns";
        if args.marginals {
            out += "   marginals (s)      terms/s";
        }
        out += "\n";
    }
    for &n in &args.sizes {
        let workload = if args.marginals {
            Workload::Marginals
        } else {
            Workload::Inside
        };
        trellis::check_memory(n, workload, None)?;
        let w = random_weights(n, args.seed)?;
        let positive = absolute(&w)?;
        let d;
        let data = match args.model {
            ModelName::Hcc => PairwiseData::Weights(&w),
            ModelName::Dasgupta => PairwiseData::Weights(&positive),
            _ => {
                d = Distances::from_matrix(&Matrix::from_rows(
                    (0..n).map(|i| positive.row(i).to_vec()).collect(),
                )?)?;
                PairwiseData::Distances(&d)
            }
        };
        let model = CostModel::build(args.model, data, 1.0)?;
        let row = trellis::with_cost_model!(model, |m| measure_model(m, args, n)?);
        if args.json {
            out += &(serde_json::to_string(&row)? + "\n");
        } else {
            out += &format!(
                "{:>4} {:>15} {:>10.4} {:>6.3} {:>10.4} {:>6.3} {:>13.4} {:>6.3}",
                row.n,
                row.splits,
                row.map_s,
                row.map_ns,
                row.logz_s,
                row.logz_ns,
                row.inside_s,
                row.inside_ns
            );
            if let (Some(s), Some(r)) = (row.outside_s, row.outside_terms_per_s) {
                out += &format!(" {s:>15.6} {r:>12.3e}");
            }
            out += "\n";
        }
    }
    Ok(out)
}
