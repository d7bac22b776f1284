#!/usr/bin/env python3
"""Time of the Python exact posterior of hcc: build, MAP tree, every marginal.

Builds `trellis.exact_hierarchy(w)` of a random symmetric weight matrix
(uniform in [-1, 1], zero diagonal, numpy seed `n`), reads its `map_tree` and
`cluster_marginals(min_p=0.01)`, and prints each step's wall time on stderr.
Run under `/usr/bin/time` for the peak resident memory; made the table
"`infer`, `exact_hierarchy` and the web app's exact panel at 16 bytes per
subset" in docs/benchmarks.md:

    /usr/bin/time -f "%e s %U u %M KB" python scripts/bench_exact_hierarchy.py 24
"""

import sys
import time

import numpy as np

import trellis


def main() -> None:
    n = int(sys.argv[1])
    rng = np.random.default_rng(n)
    w = rng.uniform(-1, 1, (n, n))
    w = (w + w.T) / 2
    np.fill_diagonal(w, 0)
    t0 = time.time()
    post = trellis.exact_hierarchy(w)
    t1 = time.time()
    post.map_tree
    t2 = time.time()
    clusters = post.cluster_marginals(min_p=0.01)
    t3 = time.time()
    print(
        f"n={n} build {t1 - t0:.1f} s, map {t2 - t1:.2f} s, marginals {t3 - t2:.1f} s, "
        f"log_z {post.log_z!r}, {len(clusters)} clusters",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
