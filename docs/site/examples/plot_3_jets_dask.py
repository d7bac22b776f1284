"""
Jets on a Dask cluster
======================

Particle jets are clustered under the Ginkgo shower likelihood (the trellis
paper, section 4.2): each jet's leaves are the observed particles, and the
exact trellis finds the maximum-likelihood showering history (the MAP tree)
and ``log Z``, the log of the summed likelihood of every binary tree.

:func:`trellis.jets.cluster_many` sends chunks of jets to a
``dask.distributed`` cluster, one task per chunk, each running the Rust code
on one thread. Here the cluster is a ``LocalCluster`` of two workers on this
machine; a real cluster's ``Client`` is used the same way. The workers are
threads of this process (the Rust code releases the interpreter, so they run
in parallel): with ``processes=True`` each worker process re-imports a script
run as ``python file.py``, which then needs its code under
``if __name__ == "__main__":``. The package's tests run the same comparison on
worker processes (``crates/trellis-py/tests/test_jets.py``).
The jets are the project's shared Ginkgo data set ``ginkgo_small.json`` (100
jets of 4 to 12 particles, simulated by the authors' Ginkgo simulator with
their true trees), read from ``../shared/data/ginkgo`` beside the
repository (or ``$TRELLIS_GINKGO_DATA``); nothing is downloaded.
"""

import json
import logging
import os
import pathlib
import time

import matplotlib.pyplot as plt
import numpy as np
from dask.distributed import Client, LocalCluster

from trellis import jets


def ginkgo_small():
    """The shared data set, where the project's tests find it too."""
    root = pathlib.Path(os.environ.get("TRELLIS_REPO_ROOT", "."))
    for d in (os.environ.get("TRELLIS_GINKGO_DATA"), root.parent / "shared/data/ginkgo"):
        if d and (pathlib.Path(d) / "ginkgo_small.json").is_file():
            return pathlib.Path(d) / "ginkgo_small.json"
    raise FileNotFoundError(
        "ginkgo_small.json: set TRELLIS_GINKGO_DATA to the folder of the shared Ginkgo data"
    )


js = jets.load(ginkgo_small())
sizes = np.diff(js.offsets)
print(f"{len(js)} jets, {sizes.min()} to {sizes.max()} particles, {len(js.leaves)} in all")

# %%
# The same jets, serially and on the cluster
# ------------------------------------------

t0 = time.perf_counter()
serial = jets.cluster(js, method="exact")
t_serial = time.perf_counter() - t0

logging.getLogger("distributed").setLevel(logging.WARNING)  # Dask's progress messages
with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                  dashboard_address=None) as cluster, Client(cluster) as client:
    t0 = time.perf_counter()
    distributed = jets.cluster_many(js, client=client, chunk_size=10, method="exact")
    t_dask = time.perf_counter() - t0

print(f"in this process: {t_serial:.2f} s; on the LocalCluster (10 tasks): {t_dask:.2f} s")
print("identical results:", distributed == serial)
assert distributed == serial

# %%
# The results through Dask are identical to the serial ones, jet for jet.
# (On 100 small jets the cluster's start-up and transfers cost as much as
# they save; it pays on many jets or many machines.)
#
# The MAP tree against the true tree
# ----------------------------------
# The MAP tree is the most likely history, so its log-likelihood is at least
# the true tree's; ``log Z`` sums over every tree and is larger still. The
# gap between ``log Z`` and the MAP tree's log-likelihood says how much of
# the posterior the best tree holds. On these 100 jets the MAP tree is the
# true tree for 7, and is more likely than the true tree by a median of 4.35
# in log-likelihood; its posterior probability falls from 0.3-0.8 at 4
# particles to 1e-6-1e-4 at 12 (median 0.0026): the exact ``log Z`` says how
# little one tree means there.

records = json.loads(ginkgo_small().read_text())["jets"]
truth_ll = np.array([r["truth_log_likelihood_from_leaves"] for r in records])
map_ll = np.array([r.log_likelihood for r in serial])
log_z = np.array([r.log_z for r in serial])
assert [r["id"] for r in records] == [r.id for r in serial]
print(f"MAP tree = true tree for {sum(set(r.tree.clusters()) == set(t.clusters()) for r, t in zip(serial, js.truth))} of {len(js)} jets")
print(f"log-likelihood, MAP - truth: median {np.median(map_ll - truth_ll):.3f}, max {np.max(map_ll - truth_ll):.3f}")
print(f"posterior probability of the MAP tree, exp(LL_MAP - log Z): median "
      f"{np.median(np.exp(map_ll - log_z)):.3g}, from {np.min(np.exp(map_ll - log_z)):.2g} to {np.max(np.exp(map_ll - log_z)):.2g}")

fig, axes = plt.subplots(1, 2, figsize=(9, 3.8))
ax = axes[0]
ax.scatter(truth_ll, map_ll, s=12, c=sizes, cmap="viridis")
lo, hi = min(truth_ll.min(), map_ll.min()), max(truth_ll.max(), map_ll.max())
ax.plot([lo, hi], [lo, hi], color="0.6", linewidth=0.8)
ax.set_xlabel("log-likelihood of the true tree")
ax.set_ylabel("log-likelihood of the MAP tree")
ax = axes[1]
points = ax.scatter(sizes + np.random.default_rng(0).uniform(-0.15, 0.15, len(sizes)),
                    np.exp(map_ll - log_z), s=12, c=sizes, cmap="viridis")
ax.set_xlabel("particles in the jet")
ax.set_ylabel("P(MAP tree | jet)")
ax.set_yscale("log")
fig.colorbar(points, ax=ax, label="particles")
fig.tight_layout()
