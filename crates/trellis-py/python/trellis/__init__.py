"""Exact and approximate inference over clusterings with the cluster trellis.

The compiled core (``trellis._core``) does the work; this package adds
numpy conversions (float32, Fortran order and nested lists are accepted),
the scikit-learn style estimators and the jets and interactive modules.
"""

from __future__ import annotations

import numpy as _np

from . import _core
from ._core import (
    AstarResult,
    HierarchyPosterior,
    InputError,
    PartitionPosterior,
    TooLargeError,
    Tree,
    TrellisError,
)

__all__ = [
    "AstarResult",
    "HierarchyPosterior",
    "InputError",
    "PartitionPosterior",
    "TooLargeError",
    "Tree",
    "TrellisError",
    "astar",
    "beam",
    "exact_hierarchy",
    "exact_partition",
    "greedy",
    "linkage",
    "similarity",
]


def _matrix(a, what: str) -> _np.ndarray:
    """A 2-D float64 array (no copy when ``a`` already is one)."""
    try:
        m = _np.asarray(a, dtype=_np.float64)
    except (TypeError, ValueError) as e:
        raise InputError(f"{what} must be a 2-D array of numbers: {e}") from None
    if m.ndim != 2:
        raise InputError(f"{what} must be a 2-D array, not {m.ndim}-D")
    return m


def _names(names):
    return None if names is None else [str(x) for x in names]


def similarity(points, kind="cosine", gamma=None, center=False):
    """Pairwise similarities of the rows of ``points`` as an ``(n, n)`` array.

    ``kind``: ``"cosine"``, ``"rbf"`` (``exp(-gamma |x - y|^2)``, ``gamma``
    defaults to ``1 / n_features``), ``"dot"`` or ``"expneg"``
    (``exp(-|x - y|)``). ``center`` subtracts the mean off-diagonal
    similarity, so that correlation clustering sees both attraction and
    repulsion.
    """
    return _core.similarity(_matrix(points, "points"), kind, gamma, center)


def exact_hierarchy(weights, model="hcc", beta=1.0, names=None, max_memory=None, n_jobs=None):
    """The exact posterior over every binary hierarchy (the cluster trellis).

    ``weights``: an ``(n, n)`` symmetric matrix (positive attracts, negative
    repels; the diagonal is ignored), ``n <= 30`` and within the memory
    available. ``model``: ``"hcc"`` (hierarchical correlation clustering) or
    ``"dasgupta"`` (Dasgupta's cost; weights must be ``>= 0``). ``beta``:
    the inverse temperature of ``P(H) ∝ exp(-beta · cost(H))``, any finite
    value. ``names``: one label per point, used in trees' Newick output.
    ``max_memory``: bytes the tables may use (default: what the OS reports
    available). ``n_jobs``: threads (default: every core).

    Returns a ``HierarchyPosterior``. Raises ``InputError`` for bad input and
    ``TooLargeError`` (with the memory needed) when it would not fit.
    """
    return _core.exact_hierarchy(
        _matrix(weights, "weights"), model, float(beta), _names(names), max_memory, n_jobs
    )


def exact_partition(weights, model="cc", beta=1.0, names=None, max_memory=None, n_jobs=None):
    """The exact posterior over every flat clustering (the flat trellis).

    ``model="cc"``: correlation clustering, ``P(C) ∝ Π_c exp(beta · Σ_{i<j in c} w_ij)``.
    Other arguments as ``exact_hierarchy``. Returns a ``PartitionPosterior``.
    """
    return _core.exact_partition(
        _matrix(weights, "weights"), model, float(beta), _names(names), max_memory, n_jobs
    )


def astar(weights, model="hcc", approx=False, seed=0, beta=1.0, names=None,
          max_explored=None, time_limit=None, max_memory=None, n_jobs=None):
    """The MAP hierarchy by A* search (exact, or approximate with ``approx=True``).

    Returns an ``AstarResult`` with ``tree``, ``cost``, ``exact`` and ``explored``.
    """
    return _core.astar(
        _matrix(weights, "weights"), model, approx, seed, float(beta), _names(names),
        max_explored, time_limit, max_memory, n_jobs,
    )


def greedy(weights, model="hcc", beta=1.0, names=None):
    """Greedy agglomerative search for the model's best tree (a ``Tree``).

    On ``"hcc"`` its myopic split cost is 0 for negative weights, so it merges
    the most dissimilar points early: prefer ``astar(..., approx=True)`` there.
    """
    return _core.greedy(_matrix(weights, "weights"), model, float(beta), _names(names))


def beam(weights, model="hcc", beta=1.0, width=None, names=None):
    """Beam search (``width`` states per step, default ``n(n-1)/2``); a ``Tree``."""
    return _core.beam(_matrix(weights, "weights"), model, float(beta), width, _names(names))


def linkage(points=None, distances=None, method="average", names=None):
    """Classic linkage clustering as SciPy's (single, complete, average, ward).

    Give ``points`` (Euclidean distances between rows) or ``distances`` (an
    ``(n, n)`` symmetric matrix). The returned ``Tree`` keeps the merge
    distances as heights: ``tree.to_linkage()`` is SciPy's matrix.
    """
    p = None if points is None else _matrix(points, "points")
    d = None if distances is None else _matrix(distances, "distances")
    return _core.linkage(p, d, method, _names(names))
