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
The jets are simulated by the package's Ginkgo shower
(:func:`trellis.jets.simulate`, the ``qcd`` preset, seed 1): 100 jets of 4 to
12 particles with their true trees; nothing is read or downloaded.
"""

import logging
import time

import matplotlib.pyplot as plt
import numpy as np
from dask.distributed import Client, LocalCluster

from trellis import jets


js = jets.simulate(100, min_leaves=4, max_leaves=12, seed=1)
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
# The MAP tree is the most likely history; ``log Z`` sums over every tree,
# and the gap between the two says how much of the posterior the best tree
# holds. The printed lines below (computed at every build) count the jets
# whose MAP tree is the simulated true tree and give the MAP tree's posterior
# probability, which falls fast with the number of particles: the exact
# ``log Z`` says how little one tree means there.

map_ll = np.array([r.log_likelihood for r in serial])
log_z = np.array([r.log_z for r in serial])
same = sum(set(r.tree.clusters()) == set(t.clusters()) for r, t in zip(serial, js.truth))
print(f"MAP tree = true tree for {same} of {len(js)} jets")
p_map = np.exp(map_ll - log_z)
print(f"posterior probability of the MAP tree, exp(LL_MAP - log Z): median "
      f"{np.median(p_map):.3g}, from {np.min(p_map):.2g} to {np.max(p_map):.2g}")

fig, ax = plt.subplots(figsize=(5, 3.8))
points = ax.scatter(sizes + np.random.default_rng(0).uniform(-0.15, 0.15, len(sizes)),
                    p_map, s=12, c=sizes, cmap="viridis")
ax.set_xlabel("particles in the jet")
ax.set_ylabel("P(MAP tree | jet)")
ax.set_yscale("log")
fig.colorbar(points, ax=ax, label="particles")
fig.tight_layout()
