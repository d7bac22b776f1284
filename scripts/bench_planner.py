"""The planner's estimate against the measured run, as a Markdown table.

For each N and task, the library planner's estimate (``trellis.plan``, the
installed package: run ``scripts/test-python --setup-only`` first) and the
wall-clock time and peak resident memory of the release CLI on
``scripts/random-weights N 1``, median of ``--runs`` runs, with the load
average before each task. Usage, from the repository root::

    .venv-test/bin/python scripts/bench_planner.py --n 18 20 22 24 26 --runs 3

The table goes to stdout (docs/benchmarks.md, "Planner: estimate vs
measured"); progress to stderr.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

import trellis

# `--min-p 0.01` keeps the output to the clusters that matter: without it
# `--json` lists all 2^N clusters, and printing them dominates.
EXTRA = {"marginals": ["--min-p", "0.01"], "sample": ["-n", "100"]}


def human_bytes(b):
    for unit in ["B", "KiB", "MiB", "GiB"]:
        if b < 1024 or unit == "GiB":
            return f"{b:.0f} {unit}" if unit in ("B", "KiB") else f"{b:.1f} {unit}"
        b /= 1024


def seconds(s):
    return f"{s:.3g} s" if s < 100 else f"{s:.0f} s"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, nargs="+", default=[18, 20, 22, 24, 26])
    p.add_argument("--tasks", nargs="+", default=["logz", "map", "sample", "marginals"])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--max-marginals-n", type=int, default=24)
    p.add_argument("--cli", default=os.environ.get("TRELLIS_CLI", "target/release/trellis"))
    a = p.parse_args()
    print(
        "| N | task | estimated | measured (median) | runs (s) | measured / estimated "
        "| peak RSS | memory estimate | load average |"
    )
    print("|---:|---|---:|---:|---|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        weights = os.path.join(tmp, "w.csv")
        timing = os.path.join(tmp, "time")
        for n in a.n:
            with open(weights, "w") as f:
                subprocess.run(["scripts/random-weights", str(n), "1"], stdout=f, check=True)
            for task in a.tasks:
                if task == "marginals" and n > a.max_marginals_n:
                    continue
                est = trellis.plan(n, model="hcc", task=task)
                load = open("/proc/loadavg").read().split()[0]
                runs, rss = [], 0
                for _ in range(a.runs):
                    cmd = [a.cli, "-q", task, "--model", "hcc", "--weights", weights, "--json"]
                    cmd += EXTRA.get(task, [])
                    # (A file, not subprocess.DEVNULL: that is /dev/null opened
                    # read-write, which the CLI takes for a closed stdout.)
                    with open(os.path.join(tmp, "out"), "w") as out:
                        subprocess.run(
                            ["/usr/bin/time", "-f", "%e %M", "-o", timing] + cmd,
                            stdout=out,
                            check=True,
                        )
                    t, kb = open(timing).read().split()
                    runs.append(float(t))
                    rss = max(rss, int(kb) * 1024)
                    print(f"N = {n} {task}: {t} s", file=sys.stderr)
                med = statistics.median(runs)
                print(
                    f"| {n} | {task} | {seconds(est['seconds'])} | {seconds(med)} "
                    f"| {', '.join(f'{r:g}' for r in runs)} | {med / est['seconds']:.2f} "
                    f"| {human_bytes(rss)} | {human_bytes(est['memory_bytes'])} | {load} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
