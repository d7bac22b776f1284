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
from . import interactive, jets
from ._plan import plan

#: The package's version (the Rust workspace's, which builds it).
__version__: str = _core.__version__

__all__ = [
    "AstarResult",
    "HierarchyPosterior",
    "InputError",
    "PartitionPosterior",
    "TooLargeError",
    "Tree",
    "TrellisError",
    "TrellisFlat",
    "TrellisHierarchical",
    "astar",
    "beam",
    "exact_hierarchy",
    "exact_partition",
    "greedy",
    "interactive",
    "jets",
    "linkage",
    "plan",
    "read_points",
    "read_weights",
    "similarity",
]


def __getattr__(name):
    # The estimators live in ``trellis.sklearn``, imported on first use so
    # that ``import trellis`` does not import scikit-learn.
    if name in ("TrellisHierarchical", "TrellisFlat"):
        from . import sklearn as _sk

        return getattr(_sk, name)
    raise AttributeError(f"module 'trellis' has no attribute {name!r}")


def _matrix(a, what: str) -> _np.ndarray:
    """A 2-D float64 array (no copy when ``a`` already is one)."""
    if _np.iscomplexobj(a):
        raise InputError(f"{what} must be real numbers, not complex")
    try:
        m = _np.asarray(a, dtype=_np.float64)
    except (TypeError, ValueError) as e:
        raise InputError(f"{what} must be a 2-D array of numbers: {e}") from None
    if m.ndim != 2:
        raise InputError(f"{what} must be a 2-D array, not {m.ndim}-D")
    return m


def _names(names):
    """``names`` as a list of strings (one per point), or ``None``."""
    if names is None:
        return None
    if isinstance(names, (str, bytes)):
        raise InputError("names must be a sequence of one name per point, not a single string")
    try:
        return [str(x) for x in names]
    except TypeError:
        raise InputError(f"names must be a sequence of one name per point, not {type(names).__name__}") from None


def _float(x, what: str) -> float:
    """``x`` as a Python float (``InputError`` when it is not a real number)."""
    if isinstance(x, (str, bytes, bool)) or _np.iscomplexobj(x):
        raise InputError(f"{what} must be a real number, not {x!r}")
    try:
        return float(x)
    except (TypeError, ValueError):
        raise InputError(f"{what} must be a real number, not {x!r}") from None


def _int(x, what: str, minimum=None, optional=True):
    """``x`` as a Python int (``None`` kept when ``optional``)."""
    if x is None and optional:
        return None
    if isinstance(x, bool) or not isinstance(x, (int, _np.integer)):
        raise InputError(f"{what} must be an integer, not {x!r}")
    x = int(x)
    if minimum is not None and x < minimum:
        raise InputError(f"{what} must be at least {minimum}, not {x}")
    return x


def _jobs(n_jobs):
    """``n_jobs`` checked for type (its range is checked by the core)."""
    return _int(n_jobs, "n_jobs")


def _memory(max_memory):
    return None if max_memory is None else _float(max_memory, "max_memory")


def _str(x, what: str) -> str:
    if not isinstance(x, str):
        raise InputError(f"{what} must be a string, not {x!r}")
    return x


def similarity(points, kind="cosine", gamma=None, center=False):
    """Pairwise similarities of the rows of ``points`` as an ``(n, n)`` array.

    ``kind``: ``"cosine"``, ``"rbf"`` (``exp(-gamma |x - y|^2)``, ``gamma``
    defaults to ``1 / n_features``), ``"dot"`` or ``"expneg"``
    (``exp(-|x - y|)``). ``center`` subtracts the mean off-diagonal
    similarity, so that correlation clustering sees both attraction and
    repulsion.
    """
    gamma = None if gamma is None else _float(gamma, "gamma")
    return _core.similarity(_matrix(points, "points"), _str(kind, "kind"), gamma, bool(center))


def _pairwise(weights, distances, points, model):
    """The one matrix a cost model runs on, and what it holds."""
    given = [(k, v) for k, v in (("weights", weights), ("distances", distances), ("points", points)) if v is not None]
    if len(given) != 1:
        raise InputError(
            "give exactly one of weights= (hcc, dasgupta), distances= or points= "
            f"(the linkage potentials), not {len(given)}"
        )
    kind, value = given[0]
    return _matrix(value, kind), kind


def exact_hierarchy(weights=None, model="hcc", beta=1.0, names=None, max_memory=None, n_jobs=None,
                    *, distances=None, points=None):
    """The exact posterior over every binary hierarchy (the cluster trellis).

    The data, one of:

    - ``weights``: an ``(n, n)`` symmetric matrix of similarities (positive
      attracts, negative repels; the diagonal is ignored), for
      ``model="hcc"`` (hierarchical correlation clustering) or
      ``"dasgupta"`` (Dasgupta's cost; weights must be ``>= 0``);
    - ``distances``: an ``(n, n)`` symmetric matrix of distances ``>= 0``, or
      ``points`` (one per row; their Euclidean distances), for the linkage
      potentials ``model="linkage-average"``, ``"linkage-complete"`` or
      ``"linkage-single"``: ``cost(L, R)`` is the average, largest or
      smallest distance between the two children (the trellis paper's
      linkage-function potentials). The MAP tree minimises the summed merge
      heights; for single linkage it is SciPy's single-linkage tree (the
      minimum spanning tree), for average and complete it is often cheaper
      than SciPy's greedy tree.

    ``n <= 30`` and within the memory available. ``beta``: the inverse
    temperature of ``P(H) ∝ exp(-beta · cost(H))``, any finite value >= 0.
    ``names``: one label per point, used in trees' Newick output.
    ``max_memory``: bytes the tables may use (default: what the OS reports
    available). ``n_jobs``: threads (default: every core).

    Returns a ``HierarchyPosterior``. Raises ``InputError`` for bad input and
    ``TooLargeError`` (with the memory needed) when it would not fit.
    """
    data, kind = _pairwise(weights, distances, points, model)
    return _core.exact_hierarchy(
        data, kind, _str(model, "model"), _float(beta, "beta"), _names(names),
        _memory(max_memory), _jobs(n_jobs),
    )


def exact_partition(weights, model="cc", beta=1.0, names=None, max_memory=None, n_jobs=None):
    """The exact posterior over every flat clustering (the flat trellis).

    ``model="cc"``: correlation clustering, ``P(C) ∝ Π_c exp(beta · Σ_{i<j in c} w_ij)``.
    Other arguments as ``exact_hierarchy``. Returns a ``PartitionPosterior``.
    """
    return _core.exact_partition(
        _matrix(weights, "weights"), _str(model, "model"), _float(beta, "beta"), _names(names),
        _memory(max_memory), _jobs(n_jobs),
    )


def astar(weights=None, model="hcc", approx=False, seed=0, beta=1.0, names=None,
          max_explored=None, time_limit=None, max_memory=None, n_jobs=None, *, distances=None, points=None):
    """The MAP hierarchy by A* search (exact, or approximate with ``approx=True``).

    ``weights`` / ``distances`` / ``points``, ``model``, ``beta``, ``names``,
    ``max_memory`` and ``n_jobs`` as in ``exact_hierarchy``. ``approx``:
    search a sparse trellis grown from the average, complete and Ward linkage
    trees (any number of points; never worse than those) instead of the full
    one (exact: up to 128 points; the linkage potentials' heuristic is the
    weight of the minimum spanning tree, admissible). ``seed``: the
    approximate search's sampler seed (same seed, same tree).
    ``max_explored``: a budget of vertices explored (approximate search;
    deterministic). ``time_limit``: seconds before the search stops
    (``TrellisError`` for the exact search; the approximate one returns its
    best tree).

    Returns an ``AstarResult`` with ``tree``, ``cost``, ``exact`` (proven
    optimal) and ``explored``.
    """
    data, kind = _pairwise(weights, distances, points, model)
    return _core.astar(
        data, kind, _str(model, "model"), bool(approx), _int(seed, "seed", 0, False),
        _float(beta, "beta"), _names(names), _int(max_explored, "max_explored", 1),
        None if time_limit is None else _float(time_limit, "time_limit"), _memory(max_memory), _jobs(n_jobs),
    )


def greedy(weights=None, model="hcc", beta=1.0, names=None, *, distances=None, points=None):
    """Greedy agglomerative search for the model's best tree (a ``Tree``).

    The data, ``model``, ``beta`` and ``names`` as in ``exact_hierarchy``.

    On ``"hcc"`` its myopic split cost is 0 for negative weights, so it merges
    the most dissimilar points early: prefer ``astar(..., approx=True)`` there.
    On the linkage potentials it is classic linkage clustering.
    """
    data, kind = _pairwise(weights, distances, points, model)
    return _core.greedy(data, kind, _str(model, "model"), _float(beta, "beta"), _names(names))


def beam(weights=None, model="hcc", beta=1.0, width=None, names=None, *, distances=None, points=None):
    """Beam search (the A* paper's baseline): ``width`` partial hierarchies
    kept per step (default ``n(n - 1)/2``); the best ``Tree`` found.

    The data, ``model``, ``beta`` and ``names`` as in ``exact_hierarchy``.
    """
    data, kind = _pairwise(weights, distances, points, model)
    return _core.beam(
        data, kind, _str(model, "model"), _float(beta, "beta"), _int(width, "width", 1), _names(names),
    )


def linkage(points=None, distances=None, method="average", names=None, optimal_ordering=False):
    """Classic linkage clustering, SciPy's exactly: ``scipy.cluster.hierarchy.linkage``.

    Give ``points`` (Euclidean distances between rows) or ``distances``:
    a condensed 1-D vector of ``n (n - 1) / 2`` distances (SciPy's ``y``,
    ``pdist``'s layout) or an ``(n, n)`` symmetric matrix. ``method``:
    ``"single"``, ``"complete"``, ``"average"``, ``"weighted"``,
    ``"centroid"``, ``"median"`` or ``"ward"`` (centroid, median and ward
    apply their updates to the distances given, as SciPy does; centroid and
    median heights can decrease). ``optimal_ordering``: exchange children as
    SciPy's ``optimal_leaf_ordering`` does, so that adjacent leaves are
    close (the tree then keeps that leaf order). ``names``: one label per
    point.

    The returned ``Tree`` keeps SciPy's linkage matrix: ``tree.to_linkage()``
    equals ``scipy.cluster.hierarchy.linkage(y, method,
    optimal_ordering=optimal_ordering)`` entry for entry, the order of rows
    and of ties included, and so do its inversions (centroid and median:
    then ``tree.heights`` are made monotone, the matrix is not).
    """
    p = None if points is None else _matrix(points, "points")
    d = y = None
    if distances is not None:
        if _np.iscomplexobj(distances):
            raise InputError("distances must be real numbers, not complex")
        try:
            a = _np.asarray(distances, dtype=_np.float64)
        except (TypeError, ValueError) as e:
            raise InputError(f"distances must be an array of numbers: {e}") from None
        if a.ndim == 1:
            y = _np.ascontiguousarray(a)
        elif a.ndim == 2:
            d = a
        else:
            raise InputError(
                f"distances must be a condensed 1-D vector or an (n, n) matrix, not {a.ndim}-D"
            )
    if not isinstance(optimal_ordering, (bool, _np.bool_)):
        raise InputError(f"optimal_ordering must be True or False, not {optimal_ordering!r}")
    if p is not None and (d is not None or y is not None):
        raise InputError("give exactly one of points and distances")
    return _core.linkage(p, d, _str(method, "method"), _names(names), bool(optimal_ordering), y)


def read_points(path, names_column="auto"):
    """Reads points from a CSV or ``.npy`` file: ``(names, X)``.

    The reader is the library's, shared with the ``trellis`` command and the
    web app, so a file gives the same names and rows everywhere. CSV follows
    RFC 4180 (quoted fields may hold commas and doubled quotes; CRLF or LF);
    a first row none of whose fields is a number is a header; there is no
    comment syntax (a row whose name starts with ``#`` is a row); an
    unterminated quote raises ``InputError`` naming its line.

    ``names_column``: ``"auto"`` (the first column, when its header is
    ``name``, ``id`` or ``label`` or empty, or when none of its values is a
    number), a 0-based column index, or ``None`` (every column is numeric).
    Returns ``names`` (a list of strings, or ``None`` when the file has no
    names column) and ``X``, an ``(n, d)`` float64 array.
    """
    import os

    return _core.read_table(os.fspath(path), True, "none" if names_column is None else names_column)


def read_weights(path):
    """Reads an ``(n, n)`` matrix (weights or distances) from a CSV file
    without a header, or a ``.npy`` file, with the library's reader (see
    ``read_points``). Returns a float64 array."""
    import os

    return _core.read_table(os.fspath(path), False, "none")[1]
