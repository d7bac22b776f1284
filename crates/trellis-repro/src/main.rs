//! `trellis-repro`: the reproductions of the papers' experiments, tables and
//! figures, on top of the `trellis` library.
//!
//! This is research code, not a product: the `trellis` command (crate
//! `trellis-cli`) is the tool; this binary regenerates the numbers and figures
//! committed under `docs/`. It depends only on the library (and third-party
//! crates), never on the CLI.
//!
//! # The reproductions
//!
//! | subcommand | paper | makes | committed output |
//! |---|---|---|---|
//! | `ginkgo` | trellis paper §4.2 | Table 1, Fig. 6 (posterior sampling), Fig. 7 (sparse trellises) | `docs/ginkgo.md`, `docs/figures/fig6-posterior.svg`, `docs/figures/fig7-sparse-{current,legacy}.svg` |
//! | `flat` | flat cluster trellis paper §5.3 | Figs. 2-5 (energies vs exact and Perturb-and-MAP marginals) | `docs/flat.md`, `docs/figures/flat/fig{2,3,4,5}-*.svg` |
//! | `astar` | A* paper §5-6 | Figs. 5-7 (Ginkgo jets), Figs. 8-9 (ALOI) | `docs/astar.md` (Results), `docs/figures/astar/fig{5..9}-*.svg` |
//! | `astar-wide` | A* paper Fig. 9 beyond 128 points (issue 15) | ALOI 100-599 points against average linkage; Ginkgo jets of 200 and 500 leaves against beam search | `docs/astar.md` (Beyond 128 points), `docs/figures/astar/fig9-aloi-wide.svg` |
//! | `astar-bench` | A* paper (speed) | exact A* against the exact DP | the A* tables of `docs/astar.md` and `docs/benchmarks.md` |
//! | `interactive` | Vikram & Dasgupta 2016 | Fig. 6a (Iris), Fig. S3a (Zoo), Fig. S3b (20 Newsgroups), and the balanced-rebuild ablation | `docs/interactive.md`, `docs/figures/interactive/*.svg` |
//!
//! # The benchmarks
//!
//! | subcommand | measures | committed output |
//! |---|---|---|
//! | `bench` | the dense trellis (MAP + log Z, outside pass; `--general`, `--model dasgupta`), the flat trellis (`--flat`), exact MAP + log Z over a jets file (`--jets`) | the Performance table of `README.md`, `docs/benchmarks.md` |
//! | `interactive-bench` | the DDT sampler's MH proposals per second | `docs/interactive.md` (Speed) |
//!
//! # Regenerating `docs/`
//!
//! From the repository root, with the shared data beside it (`../shared/data`):
//!
//! ```sh
//! # docs/ginkgo.md, docs/figures/fig6-posterior.svg, docs/figures/fig7-sparse-*.svg
//! cargo run --release -p trellis-cli -- ginkgo generate --n-jets 5000 --min-leaves 5 --max-leaves 10 --seed 2021 > ginkgo510.json
//! cargo run --release -p trellis-repro -- ginkgo --jets ginkgo510.json --svg docs/figures
//!
//! # docs/flat.md, docs/figures/flat/*.svg
//! cargo run --release -p trellis-repro -- flat --svg docs/figures/flat
//!
//! # docs/astar.md (Results), docs/figures/astar/*.svg
//! cargo run --release -p trellis-repro -- astar --aloi ../shared/data/aloi --svg docs/figures/astar
//!
//! # docs/astar.md (Beyond 128 points), docs/figures/astar/fig9-aloi-wide.svg
//! cargo run --release -p trellis-repro -- astar-wide --aloi ../shared/data/aloi --jets 0 --all-linkages --svg docs/figures/astar
//!
//! # the "Exact A* against the DP" tables of docs/benchmarks.md and docs/astar.md
//! cargo run --release -p trellis-repro -- astar-bench --model hcc --sizes 10,14,16,18,20 --repeats 2
//! cargo run --release -p trellis-repro -- astar-bench --model ginkgo --sizes 10,12,13,14 --repeats 2
//! cargo run --release -p trellis-repro -- astar-bench --model dasgupta --sizes 10,12,14 --repeats 2
//!
//! # README.md (Performance) and docs/benchmarks.md
//! cargo run --release -p trellis-repro -- bench --sizes 10,14,18,20 --repeats 3 --marginals
//! cargo run --release -p trellis-repro -- bench --sizes 10,14,18,20 --repeats 3 --marginals --model dasgupta
//! cargo run --release -p trellis-repro -- bench --sizes 10,14,18 --repeats 2 --marginals --general
//! cargo run --release -p trellis-repro -- bench --flat --sizes 10,14,18,20 --repeats 3
//!
//! # docs/interactive.md, docs/figures/interactive/*.svg
//! cargo build --release -p trellis-repro
//! D=../shared/data/ibhc
//! T=target/release/trellis-repro
//! $T --threads 1 interactive --points $D/iris.csv --target $D/iris_target.nwk \
//!    --sigma 1/9 --queries 400 --seeds 4 --svg docs/figures/interactive/iris.svg
//! $T --threads 1 interactive --points $D/zoo.csv --target $D/zoo_target.nwk \
//!    --sigma var/4 --jitter 0.01 --queries 600 --seeds 4 --svg docs/figures/interactive/zoo.svg
//! $T --threads 1 interactive --points $D/20news150.csv --target $D/20news150_target.nwk \
//!    --sigma var/2 --queries 400 --seeds 4 --svg docs/figures/interactive/20news.svg
//! $T --threads 1 interactive --points $D/iris.csv --target $D/iris_target.nwk \
//!    --sigma 1/9 --queries 400 --seeds 4 --rebuild balanced --svg docs/figures/interactive/iris-balanced.svg
//! $T --threads 1 interactive --points $D/zoo.csv --target $D/zoo_target.nwk \
//!    --sigma var/4 --jitter 0.01 --queries 600 --seeds 4 --rebuild balanced --svg docs/figures/interactive/zoo-balanced.svg
//! ```
//!
//! Every reproduction prints a Markdown report (the tables pasted into the
//! page) or, with `--json`, one JSON object with every number. Everything but
//! the wall times is seeded: the same command gives the same numbers and
//! figures (the A* time figure aside).
//!
//! # Figures
//!
//! The SVG figures come from the small hand-written plotter in `svg.rs`
//! rather than a plotting crate. It needs no dependency and writes
//! byte-for-byte deterministic files (so a re-run that changes no number
//! changes no committed figure), in about 400 lines.

use std::io::{BufWriter, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod astar;
mod astar_bench;
mod bench;
mod flat;
mod ginkgo;
mod interactive;
mod svg;
mod timing;
mod wide;

/// Reproduce the papers' experiments, tables and figures (see docs/ for the results).
#[derive(Parser, Debug)]
#[command(name = "trellis-repro", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,

    /// Number of worker threads, 1 to 256 (default: one per core).
    #[arg(long, global = true, value_name = "N")]
    threads: Option<usize>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// The jet results of the trellis paper (Table 1, Figs. 6 and 7) on a jets file.
    Ginkgo(ginkgo::GinkgoExperimentArgs),
    /// The gene-expression analysis of the flat trellis paper (§5.3, Figs. 2-5):
    /// pairwise energies vs exact pairwise marginals, exact vs Perturb-and-MAP.
    Flat(flat::FlatExperimentArgs),
    /// The A* paper's experiments: Ginkgo jets (Figs. 5-7: cost, time, explored
    /// fraction of greedy, beam search, exact DP, exact and approximate A*) and ALOI
    /// hierarchical correlation clustering (Figs. 8-9).
    Astar(astar::AstarExperimentArgs),
    /// Time exact A* against the exact DP's MAP (same optimum, checked): random
    /// weights for hcc and dasgupta, simulated jets for --model ginkgo (heuristic h0).
    /// Reports vertices explored and splits scored against the DP's.
    AstarBench(astar_bench::AstarBenchArgs),
    /// Approximate A* beyond 128 points (issue 15): Fig. 9 on stratified ALOI
    /// subsets of 100-599 points against average linkage, and Ginkgo jets of 200
    /// and 500 leaves against beam search (width 1000). Skips ALOI with a note
    /// (exit 0) when the shared data is absent.
    AstarWide(wide::WideArgs),
    /// Wall time and splits per second of the exact passes of the dense and flat
    /// trellises (random weights), or of exact MAP + log Z over a jets file.
    Bench(bench::BenchArgs),
    /// The DDT sampler's speed (MH proposals per second on one core).
    InteractiveBench(interactive::BenchArgs),
    /// Interactive hierarchical clustering, the paper's Fig. 6 / S3: triplet distance
    /// after each query for every strategy, the vanilla DDT and average linkage,
    /// averaged over seeds (table and SVG).
    Interactive(interactive::ExperimentArgs),
}

/// Most worker threads `--threads` accepts.
const MAX_THREADS: usize = 256;

/// Exit codes: 0 done, 1 the report could not be written (a full disk, a
/// closed file; a closed pipe ends quietly with 0), 2 bad input or a failed
/// run.
fn main() -> ExitCode {
    let cli = Cli::parse();
    let text = match run(cli) {
        Ok(text) => text,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {e:#}");
            return ExitCode::from(2);
        }
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            let _ = out.into_parts();
            let _ = writeln!(
                std::io::stderr(),
                "error: cannot write the output to standard output: {e}"
            );
            ExitCode::from(1)
        }
    }
}

/// Runs a reproduction and returns everything it prints on stdout, so that an
/// error leaves stdout empty.
fn run(cli: Cli) -> anyhow::Result<String> {
    if let Some(t) = cli.threads {
        if !(1..=MAX_THREADS).contains(&t) {
            anyhow::bail!("--threads must be between 1 and {MAX_THREADS}, not {t}");
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build_global()?;
    }
    match cli.command {
        Command::Ginkgo(a) => ginkgo::ginkgo(&a),
        Command::Flat(a) => flat::flat(&a),
        Command::Astar(a) => astar::astar(&a),
        Command::AstarBench(a) => astar_bench::run(&a),
        Command::AstarWide(a) => wide::run(&a),
        Command::Interactive(a) => interactive::experiment(&a),
        Command::Bench(a) => bench::run(&a),
        Command::InteractiveBench(a) => interactive::bench(&a),
    }
}
