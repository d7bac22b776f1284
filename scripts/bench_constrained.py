#!/usr/bin/env python3
"""Constrained against unconstrained runs of the MCC summary, two builds side by side.

Each seed draws `n` points in 4 Gaussian groups (3-D, centres N(0, 5²), spread 1)
and three triplets that agree with the groups (two points of one group, one of
another), then times `trellis summary --kind mcc --model hcc --similarity rbf
--center --beta B` with and without `--triplets` on both builds, and compares
their answers (the same bytes, the same tree, the largest difference of a
cluster's probability). Made the table "The outside pass's window" in
docs/constraints.md:

    scripts/bench_constrained.py OLD/trellis target/release/trellis 18 8 16
    scripts/bench_constrained.py OLD/trellis target/release/trellis 18 8 32
"""

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def main() -> None:
    before, after, n, seeds, beta = sys.argv[1:6]
    n, seeds = int(n), int(seeds)
    binaries = {"before": before, "after": after}
    with tempfile.TemporaryDirectory(prefix="trellis-bench-constrained-") as tmp:
        run_all(binaries, n, seeds, beta, Path(tmp))


def run_all(binaries: dict, n: int, seeds: int, beta: str, work: Path) -> None:
    """Times every seed's runs, writing their inputs to `work` (the caller removes it)."""
    for seed in range(seeds):
        rng = np.random.default_rng(1000 + seed)
        centres = rng.normal(0, 5, (4, 3))
        group = rng.integers(0, 4, n)
        points = centres[group] + rng.normal(0, 1, (n, 3))
        csv = work / f"points{seed}.csv"
        rows = [f"p{i}," + ",".join(f"{v:.4f}" for v in p) for i, p in enumerate(points)]
        csv.write_text("name,x,y,z\n" + "\n".join(rows) + "\n")
        triplets = []
        for _ in range(3):
            a = rng.integers(n)
            same = [j for j in range(n) if group[j] == group[a] and j != a]
            other = [j for j in range(n) if group[j] != group[a]]
            if same and other:
                triplets.append((a, rng.choice(same), rng.choice(other)))
        tri = work / f"triplets{seed}.txt"
        tri.write_text("".join(f"p{a} p{b} p{c}\n" for a, b, c in triplets))
        seconds, outputs = {}, {}
        for name, binary in binaries.items():
            for constrained in (False, True):
                args = [binary, "summary", "--kind", "mcc", "--model", "hcc",
                        "--points", str(csv), "--similarity", "rbf", "--center",
                        "--beta", beta, "-q", "--json"]
                if constrained:
                    args += ["--triplets", str(tri)]
                start = time.perf_counter()
                run = subprocess.run(args, capture_output=True, text=True, check=True)
                seconds[name, constrained] = time.perf_counter() - start
                outputs[name, constrained] = run.stdout
        a, b = (json.loads(outputs[k, True]) for k in ("before", "after"))
        dp = max(abs(x["p"] - y["p"]) for x, y in zip(a["clusters"], b["clusters"]))
        print(
            f"seed {seed}: before {seconds['before', False]:.2f} / "
            f"{seconds['before', True]:.2f} s (triplets), after "
            f"{seconds['after', False]:.2f} / {seconds['after', True]:.2f} s; "
            f"same bytes {outputs['before', False] == outputs['after', False]}, "
            f"{outputs['before', True] == outputs['after', True]} (triplets); "
            f"same tree {a['tree'] == b['tree']}, max |dp| {dp:.1e}",
            flush=True,
        )


if __name__ == "__main__":
    main()
