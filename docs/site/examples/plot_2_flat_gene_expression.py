"""
Real gene expression: exact marginals against energies and Perturb-and-MAP
===========================================================================

The flat cluster trellis paper (Greenberg et al., NeurIPS 2018, section 5)
clusters the expression profiles of 11 breast-cancer patients and asks whether
two cheap proxies can stand in for the exact pairwise marginal
``P(i and j in one cluster)``: the pairwise energy (its Fig. 2) and the
Perturb-and-MAP estimate (its Fig. 3). Its TCGA data cannot be shipped, so
this example runs the same pipeline on **real** expression data that a package
ships: scanpy's bundled ``pbmc68k_reduced`` (700 human blood cells of the 10x
Genomics PBMC 68k data set, 765 genes, with cell-type labels). The file is in
scanpy's wheel, ``scanpy.datasets.pbmc68k_reduced()`` reads it from there:
nothing is downloaded.

Twelve pseudo-bulk samples: for six cell types, the cells are split at random
(seed 0) into two halves and each half's mean expression is one sample, so the
two halves of a type are replicates and the ground truth is known.

The pipeline of the paper's section 5.2: log expression (here
``log(1 + x)`` of the mean normalised counts: the paper's "infinitesimal value"
before the log would make the genes that are zero in a sample dominate the
distances), similarities ``exp(-‖x_i - x_j‖ / √genes)`` (the paper's
exponentiated negative Euclidean distance, with the scale of
``docs/flat.md``), minus their mean, so that they have both signs;
correlation clustering ``P(C) ∝ exp(β Σ_{c∈C} Σ_{i<j∈c} w_ij)`` at ``β = 6``,
so that the pairwise energies ``β w_ij`` are of order one.
"""

import json
import os
import pathlib
import shutil
import subprocess
import tempfile

import matplotlib.pyplot as plt
import numpy as np
import scanpy as sc
from scipy.stats import pearsonr, spearmanr

import trellis
import trellis.plot

adata = sc.datasets.pbmc68k_reduced()
print(adata.shape[0], "cells,", adata.raw.shape[1], "genes")

TYPES = {
    "CD14+ Monocyte": "Mono",
    "Dendritic": "DC",
    "CD19+ B": "B",
    "CD4+/CD25 T Reg": "Treg",
    "CD8+ Cytotoxic T": "CD8",
    "CD8+/CD45RA+ Naive Cytotoxic": "CD8naive",
}
rng = np.random.default_rng(0)
counts = np.expm1(adata.raw.X.toarray())  # the normalised counts
labels = adata.obs["bulk_labels"].to_numpy()
rows, names = [], []
for cell_type, short in TYPES.items():
    cells = rng.permutation(np.flatnonzero(labels == cell_type))
    half = len(cells) // 2
    for r, part in enumerate((cells[:half], cells[half:])):
        rows.append(counts[part].mean(axis=0))
        names.append(f"{short}-{r + 1}")
        print(f"{names[-1]:>10}: mean of {len(part)} {cell_type} cells")
X = np.log1p(np.array(rows))
n, genes = X.shape

BETA = 6.0
W = trellis.similarity(X / np.sqrt(genes), "expneg", center=True)
post = trellis.exact_partition(W, model="cc", beta=BETA, names=names)
print(f"\n{n} samples, {post.num_partitions:,} partitions; log Z = {post.log_z:.4f}")
clusters = {}
for name, c in zip(names, post.map_labels):
    clusters.setdefault(c, []).append(name)
print("MAP partition:", " | ".join(" ".join(c) for c in clusters.values()))

# %%
# The exact pairwise marginals
# ----------------------------
# Every one of the ``Bell(12) = 4,213,597`` partitions counts: the trellis sums
# them in ``O(3^n)``. :func:`trellis.plot.pairwise` draws the matrix with the
# samples grouped by the MAP partition (the paper's Fig. 5).

fig, ax = plt.subplots(figsize=(6, 5))
trellis.plot.pairwise(post, ax=ax, names=names)
ax.set_title("exact P(i, j in one cluster), β = 6")
fig.tight_layout()

# %%
# Perturb-and-MAP, from the ``trellis`` command
# ---------------------------------------------
# Perturb-and-MAP (the paper's reference [10], section 5.3.1) adds Gumbel noise
# to every pairwise energy ``β w_ij``, finds the MAP partition of the perturbed
# problem exactly, and counts how often each pair shares a cluster. The Python
# package has no binding for it; the command has (``trellis flat perturb-map``,
# the library's ``trellis::flat::perturb_and_map``), so the example runs the
# command built from this checkout on the same weights. 2000 draws.


def trellis_cli():
    """The `trellis` binary: $TRELLIS_CLI, this checkout's build, or the PATH."""
    root = pathlib.Path(os.environ.get("TRELLIS_REPO_ROOT", "."))
    for path in (os.environ.get("TRELLIS_CLI"), root / "target/release/trellis", shutil.which("trellis")):
        if path and os.access(path, os.X_OK):
            return str(path)
    raise FileNotFoundError("the trellis command: build it (cargo build --release -p trellis-cli)")


DRAWS = 2000
with tempfile.TemporaryDirectory() as tmp:
    path = pathlib.Path(tmp) / "weights.npy"
    np.save(path, W)
    run = subprocess.run(
        [trellis_cli(), "flat", "perturb-map", "--model", "cc", "--weights", str(path),
         "--beta", str(BETA), "-n", str(DRAWS), "--seed", "0", "--json"],
        capture_output=True, text=True, check=True,
    )
perturbed = np.array(json.loads(run.stdout)["pairwise"])

# %%
# Energies and Perturb-and-MAP against the exact marginals (Figs. 2 and 3)
# ------------------------------------------------------------------------

exact = post.pairwise_marginals()
i, j = np.triu_indices(n, 1)
energy, p_exact, p_pam = BETA * W[i, j], exact[i, j], perturbed[i, j]
same = np.array([names[a].split("-")[0] == names[b].split("-")[0] for a, b in zip(i, j)])

print(f"{len(i)} pairs; energies from {energy.min():.2f} to {energy.max():.2f}")
print(f"energy vs exact marginal: Pearson {pearsonr(energy, p_exact)[0]:.3f}, "
      f"Spearman {spearmanr(energy, p_exact)[0]:.3f}")
se = np.sqrt(np.maximum(p_pam * (1 - p_pam), 1e-12) / DRAWS)
over = p_pam - p_exact
print(f"Perturb-and-MAP - exact: mean {over.mean():+.3f}, largest {over.max():+.3f}, "
      f"smallest {over.min():+.3f}; overestimated beyond 4 standard errors: "
      f"{np.sum(over > 4 * se)} of {len(i)} pairs, underestimated: {np.sum(over < -4 * se)}")
worst = int(np.argmax(over))
print(f"largest overestimate: {names[i[worst]]} / {names[j[worst]]}, exact {p_exact[worst]:.3f}, "
      f"Perturb-and-MAP {p_pam[worst]:.3f} (energy {energy[worst]:.2f})")
print(f"replicate pairs (the same cell type): exact marginal from {p_exact[same].min():.3f} "
      f"to {p_exact[same].max():.3f}; energies from {energy[same].min():.2f} to {energy[same].max():.2f}")
print(f"pairs of different types: exact marginal at most {p_exact[~same].max():.3f}; energies up to "
      f"{energy[~same].max():.2f}")
print("\nthe replicate pairs:")
for k in np.flatnonzero(same)[np.argsort(-energy[same])]:
    print(f"  {names[i[k]]:>10} / {names[j[k]]:<10} energy {energy[k]:5.2f}  exact {p_exact[k]:.3f}"
          f"  Perturb-and-MAP {p_pam[k]:.3f}")
print("\npairs of similar energy, different marginals (energy 0.6 to 1.2):")
for k in np.argsort(energy):
    if 0.6 <= energy[k] <= 1.2:
        print(f"  {names[i[k]]:>10} / {names[j[k]]:<10} energy {energy[k]:5.2f}  exact {p_exact[k]:.3f}"
              f"  Perturb-and-MAP {p_pam[k]:.3f}")

fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
ax = axes[0]
ax.scatter(energy[same], p_exact[same], s=18, color="tab:blue", label="replicates (same cell type)")
ax.scatter(energy[~same], p_exact[~same], s=18, color="tab:orange", label="different cell types")
ax.set_yscale("log")
ax.set_xlabel("pairwise energy β·w_ij")
ax.set_ylabel("exact pairwise marginal")
ax.set_title("Fig. 2: energy vs exact marginal")
ax.legend(fontsize=8)
ax = axes[1]
ax.errorbar(p_exact, p_pam, yerr=2 * se, fmt="o", markersize=4, color="tab:green", elinewidth=0.8)
ax.plot([0, 1], [0, 1], color="0.6", linewidth=0.8)
ax.set_xlabel("exact pairwise marginal")
ax.set_ylabel(f"Perturb-and-MAP ({DRAWS} draws, ±2 s.e.)")
ax.set_title("Fig. 3: Perturb-and-MAP vs exact")
ax.set_xlim(-0.02, 1.02)
ax.set_ylim(-0.02, 1.02)
fig.tight_layout()

# %%
# What it found
# -------------
# (The numbers of the run above: the data, the split into halves and the
# Gumbel noise are seeded, so every build prints the same.)
#
# - **The model**: log Z = 21.0101 over the 4,213,597 partitions. The MAP
#   partition has three clusters: the myeloid cells (monocytes and dendritic
#   cells), the B cells, and the three T-cell types together; at ``β = 6`` the
#   T-cell subtypes are not told apart. Every replicate pair is in one
#   cluster with probability 0.68 to 0.91.
# - **Fig. 2: the energy is a good proxy for the ranking, not for the
#   probability.** Over the 66 pairs the energy and the exact marginal are
#   strongly correlated (Pearson 0.925, Spearman 0.918), unlike the paper's
#   patients: pseudo-bulk samples of cell types are well separated. But pairs of similar energy have different marginals, and the order is
#   inverted where it matters. The B-cell replicates have the third-highest
#   energy (1.60) and the *lowest* marginal of all replicate pairs (0.678),
#   while Treg-1 / CD8naive-2, two different cell types of energy 1.03, are
#   together with probability 0.898: six T-cell samples attract each other, so
#   each of their pairs is carried by the others (the paper's 74ca / d6fa
#   effect, in a milder form), whereas the two B samples have only each other.
#   Likewise Treg-1 / CD8-2 (energy 0.64) are together with probability 0.860
#   and Mono-1 / DC-2 (0.67) with 0.727.
# - **Fig. 3: Perturb-and-MAP overestimates every pair.** With 2000 draws of
#   Gumbel noise on the pairwise energies it exceeds the exact marginal for
#   all 66 pairs beyond 4 Monte-Carlo standard errors, by 0.371 on average and
#   by up to 0.627 (B-1 / CD8naive-2: 0.713 against an exact 0.086). As in the
#   paper, "the approximate method overestimates many of the pairwise
#   marginals"; here it overestimates all of them, and most the pairs that
#   the model keeps apart: the 43 pairs of exact marginal below 0.1 (0.006 to
#   0.097) are put together in 47% to 72% of the draws.
