"""Exact and approximate inference over clusterings with the cluster trellis.

The compiled core (``trellis._core``) does the work; this package adds
numpy conversions (float32, Fortran order and nested lists are accepted),
the scikit-learn style estimators and the jets and interactive modules.
"""

from __future__ import annotations

import numpy as _np

from . import _args, _core
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
    "score",
    "similarity",
]


def __getattr__(name):
    # The estimators live in ``trellis.sklearn``, imported on first use so
    # that ``import trellis`` does not import scikit-learn.
    if name in ("TrellisHierarchical", "TrellisFlat"):
        from . import sklearn as _sk

        return getattr(_sk, name)
    raise AttributeError(f"module 'trellis' has no attribute {name!r}")


# The argument checks (``trellis._args``) under the names the estimators
# of ``trellis.sklearn`` import.
_matrix = _args.matrix
_names = _args.names
_jobs = _args.jobs
_memory = _args.memory
_str = _args.text


def _float(x, what: str) -> float:
    """``x`` as a Python float (``InputError`` when it is not a real number)."""
    return _args.number(x, what)


def _int(x, what: str, minimum=None, optional=True):
    """``x`` as a Python int (``None`` kept when ``optional``)."""
    return _args.integer(x, what, minimum, optional=optional)


def similarity(points, kind="cosine", gamma=None, center=False):
    """Pairwise similarities of the rows of ``points``: an ``(n, n)`` float64 array.

    Parameters
    ----------
    points : array_like, shape (n, d)
        One point per row (float64 or float32, any memory order, or nested
        lists of numbers).
    kind : str
        ``"cosine"`` (the cosine of the angle between two rows; a row of
        zeros has none and is refused), ``"rbf"`` (``exp(-gamma |x - y|^2)``),
        ``"dot"`` (the dot product) or ``"expneg"`` (``exp(-|x - y|)``).
    gamma : float or None
        The width of ``"rbf"``, ``> 0``; default ``1 / d``. Only for
        ``kind="rbf"``.
    center : bool
        Subtract the mean off-diagonal similarity, so that correlation
        clustering sees both attraction (positive weights) and repulsion
        (negative ones).

    Raises
    ------
    InputError
        For a bad argument.
    """
    gamma = _args.number(gamma, "gamma", optional=True)
    return _core.similarity(_matrix(points, "points"), _str(kind, "kind"), gamma, _args.flag(center, "center"))


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
                    *, distances=None, points=None, triplets=None):
    """The exact posterior over every binary hierarchy (the cluster trellis).

    ``P(H) = exp(-beta * cost(H)) / Z`` over the ``(2n - 3)!!`` binary trees
    ``H`` of the points, in ``O(3^n)`` time and ``O(2^n)`` memory. Give exactly
    one of ``weights``, ``distances`` and ``points``; ``n <= 30`` within the
    memory available.

    Parameters
    ----------
    weights : array_like, shape (n, n), optional
        A symmetric matrix of similarities (positive attracts, negative
        repels; the diagonal is ignored), for ``model="hcc"`` or
        ``"dasgupta"`` (whose weights must be ``>= 0``).
    model : str
        The cost of a tree, summed over its splits ``(L, R)``: ``"hcc"``
        (hierarchical correlation clustering), ``"dasgupta"`` (Dasgupta's
        cost), or over distances the linkage potentials
        ``"linkage-average"``, ``"linkage-complete"``, ``"linkage-single"``
        (the average, largest or smallest distance between ``L`` and ``R``;
        the MAP tree minimises the summed merge heights: for single linkage
        it is SciPy's single-linkage tree, for average and complete often
        cheaper than SciPy's greedy one).
    beta : float
        The inverse temperature, any finite value ``>= 0``.
    names : sequence of str, optional
        One distinct, non-empty label per point, used by the trees (Newick
        output, ``marginal`` and ``subtree_probability`` by name).
    max_memory : float, optional
        Bytes the tables may use; default what the operating system reports
        available.
    n_jobs : int, optional
        Threads: ``None`` for the default pool (one per core), ``-1`` every
        core, else 1 to ``MAX_JOBS``.
    distances : array_like, shape (n, n), optional, keyword-only
        A symmetric matrix of distances ``>= 0`` for the linkage potentials.
    points : array_like, shape (n, d), optional, keyword-only
        Points for the linkage potentials: their Euclidean distances.
    triplets : sequence of (a, b, c), optional, keyword-only
        A person's feedback: each ``(a, b, c)`` says ``a`` and ``b`` are
        closer to each other than to ``c`` (``({a, b}, c)``), by index or,
        with ``names``, by name. The posterior is the model's restricted to
        the trees in which every triplet holds (its log Z, MAP tree, every
        marginal and samples); triplets that no tree satisfies raise
        ``InputError`` naming one of the conflict. A constrained run keeps
        the model's kernel (hcc: the blocked one).

    Returns
    -------
    HierarchyPosterior

    Raises
    ------
    InputError
        For bad input.
    TooLargeError
        When it would not fit (the message says the memory needed).
    """
    data, kind = _pairwise(weights, distances, points, model)
    names = _names(names)
    triplets = _args.point_tuples(triplets, 3, "triplets", names, data.shape[0])
    return _core.exact_hierarchy(
        data, kind, _str(model, "model"), _float(beta, "beta"), names,
        _memory(max_memory), _jobs(n_jobs), triplets,
    )


def exact_partition(weights, model="cc", beta=1.0, names=None, max_memory=None, n_jobs=None,
                    *, must_link=None, cannot_link=None):
    """The exact posterior over every flat clustering (the flat trellis).

    ``P(C) ∝ exp(beta · Σ_{c in C} Σ_{i<j in c} w_ij)`` over the ``B(n)``
    partitions ``C`` of the points (correlation clustering), in ``O(3^n)``
    time and ``O(2^n)`` memory.

    Parameters
    ----------
    weights : array_like, shape (n, n)
        A symmetric matrix of similarities (the diagonal is ignored).
    model : str
        ``"cc"`` (correlation clustering), the only flat model.
    beta : float
        The inverse temperature, any finite value ``>= 0``.
    names : sequence of str, optional
        One distinct, non-empty label per point (checked; the partitions
        are labels by index).
    max_memory : float, optional
        Bytes the tables may use; default what the operating system reports
        available.
    n_jobs : int, optional
        Threads: ``None`` for the default pool, ``-1`` every core, else 1 to
        ``MAX_JOBS``.
    must_link, cannot_link : sequence of (i, j), optional, keyword-only
        Pairs of points (indices or, with ``names``, names) that must share
        a cluster, or must not. The posterior is restricted to the
        partitions that respect every pair; a cannot-link pair that the
        must-links join raises ``InputError`` naming the chain.

    Returns
    -------
    PartitionPosterior

    Raises
    ------
    InputError
        For bad input.
    TooLargeError
        When it would not fit.
    """
    w = _matrix(weights, "weights")
    names = _names(names)
    n = w.shape[0] if w.ndim == 2 else 0
    must = _args.point_tuples(must_link, 2, "must_link", names, n)
    cannot = _args.point_tuples(cannot_link, 2, "cannot_link", names, n)
    return _core.exact_partition(
        w, _str(model, "model"), _float(beta, "beta"), names,
        _memory(max_memory), _jobs(n_jobs), must, cannot,
    )


def astar(weights=None, model="hcc", approx=False, seed=0, beta=1.0, names=None,
          max_explored=None, time_limit=None, max_memory=None, n_jobs=None, *, distances=None, points=None,
          triplets=None):
    """The MAP hierarchy by A* search (exact, or approximate with ``approx=True``).

    Parameters
    ----------
    weights, distances, points, model, beta, names, max_memory, n_jobs
        As in ``exact_hierarchy`` (the data: exactly one of ``weights``,
        ``distances`` and ``points``).
    approx : bool
        ``False``: exact A* on the full trellis (up to 128 points; the
        linkage potentials' heuristic is the weight of the minimum spanning
        tree, admissible; memory grows fast beyond ~20 points). ``True``:
        search a sparse trellis grown from the average, complete and Ward
        linkage trees (any number of points; never worse than those trees).
    seed : int
        The approximate search's sampler seed, 0 to ``2**64 - 1`` (same
        seed, same tree).
    max_explored : int, optional
        A budget of trellis vertices explored, ``>= 1`` (approximate search;
        deterministic).
    time_limit : float, optional
        Seconds before the search stops, ``>= 0`` (a limit longer than the
        clock can count is no limit): the exact search then raises
        ``TrellisError``, the approximate one returns its best tree.
    triplets : sequence of (a, b, c), optional, keyword-only
        As in ``exact_hierarchy``: the best tree among those in which every
        triplet holds (a forbidden split costs infinity, so the heuristic
        stays admissible). The approximate search starts from the linkage
        trees that satisfy them and greedy agglomeration under them, and
        never leaves them.

    Returns
    -------
    AstarResult
        With ``tree``, ``cost``, ``exact`` (proven optimal), ``explored`` and
        ``log_potential``.
    """
    data, kind = _pairwise(weights, distances, points, model)
    names = _names(names)
    triplets = _args.point_tuples(triplets, 3, "triplets", names, data.shape[0])
    return _core.astar(
        data, kind, _str(model, "model"), _args.flag(approx, "approx"), _args.seed(seed),
        _float(beta, "beta"), names, _args.integer(max_explored, "max_explored", 1, optional=True),
        _args.number(time_limit, "time_limit", optional=True), _memory(max_memory), _jobs(n_jobs),
        triplets,
    )


def greedy(weights=None, model="hcc", beta=1.0, names=None, *, distances=None, points=None):
    """Greedy agglomerative search for the model's best tree (a ``Tree``).

    At each step, the merge with the best split potential.

    Parameters
    ----------
    weights, distances, points, model, beta, names
        As in ``exact_hierarchy`` (the data: exactly one of ``weights``,
        ``distances`` and ``points``).

    Notes
    -----
    On ``"hcc"`` its myopic split cost is 0 for negative weights, so it merges
    the most dissimilar points early: prefer ``astar(..., approx=True)`` there.
    On the linkage potentials it is classic linkage clustering. The tree has
    the names and cumulative-cost heights.
    """
    data, kind = _pairwise(weights, distances, points, model)
    return _core.greedy(data, kind, _str(model, "model"), _float(beta, "beta"), _names(names))


def beam(weights=None, model="hcc", beta=1.0, width=None, names=None, *, distances=None, points=None):
    """Beam search (the A* paper's baseline): the best ``Tree`` found.

    Parameters
    ----------
    weights, distances, points, model, beta, names
        As in ``exact_hierarchy`` (the data: exactly one of ``weights``,
        ``distances`` and ``points``).
    width : int, optional
        Partial hierarchies kept per step, ``>= 1``; default ``n(n - 1)/2``.
    """
    data, kind = _pairwise(weights, distances, points, model)
    return _core.beam(
        data, kind, _str(model, "model"), _float(beta, "beta"), _int(width, "width", 1), _names(names),
    )


def score(tree, weights=None, model="hcc", beta=1.0, names=None, *, distances=None, points=None):
    """The cost of one given tree under a model: ``cost(H)``, summed over its splits.

    The same number as ``trellis score --tree`` (the library's
    ``tree_cost``); the tree's log-potential is ``-beta * cost`` and, over
    the same data, its posterior probability is
    ``exp(-beta * cost - exact_hierarchy(...).log_z)``.

    Parameters
    ----------
    tree : Tree, nested lists or str
        A binary tree over all the points: a ``Tree`` (matched to the points
        by name when both it and ``names`` have names, else by index),
        nested lists of 0-based indices such as ``[[0, 1], [2, 3]]``, or
        Newick text whose leaf labels are the points' ``names`` (their
        indices when ``names`` is not given).
    weights, distances, points, model
        The data and the model, as in ``exact_hierarchy`` (exactly one of
        ``weights``, ``distances`` and ``points``).
    beta : float
        The inverse temperature, any finite value ``>= 0``. The cost does not
        depend on it; it is checked as by the other functions, so that a
        ``beta`` whose product with the cost overflows is refused.
    names : sequence of str, optional
        One distinct, non-empty label per point: the Newick labels, and the
        names a named ``Tree`` is matched by.

    Returns
    -------
    float
        The cost.

    Raises
    ------
    InputError
        For bad input, such as a tree that is not binary or does not cover
        every point exactly once.
    """
    data, kind = _pairwise(weights, distances, points, model)
    if not isinstance(tree, (Tree, str, list, tuple, int, _np.integer)):
        raise InputError(
            "tree must be a trellis.Tree, nested lists of point indices or Newick text, "
            f"not {type(tree).__name__}"
        )
    return _core.score(tree, data, kind, _str(model, "model"), _float(beta, "beta"), _names(names))


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
        try:
            a = _np.asarray(distances)
        except (TypeError, ValueError):
            a = None
        if a is not None and a.ndim == 1:
            if a.dtype.kind not in "iuf":
                raise InputError(f"distances must hold real numbers, not {_args.show(distances)}")
            y = _np.ascontiguousarray(a, dtype=_np.float64)
        elif a is not None and a.ndim not in (1, 2):
            raise InputError(
                f"distances must be a condensed 1-D vector or an (n, n) matrix, not {a.ndim}-D"
            )
        else:
            # The matrix reader's checks and messages (ragged rows, types, dimensions).
            d = _matrix(distances, "distances")
    optimal_ordering = _args.flag(optimal_ordering, "optimal_ordering")
    if p is not None and (d is not None or y is not None):
        raise InputError("give exactly one of points and distances")
    return _core.linkage(p, d, _str(method, "method"), _names(names), optimal_ordering, y)


def read_points(path, names_column="auto"):
    """Reads points from a CSV or ``.npy`` file: ``(names, X)``.

    The reader is the library's, shared with the ``trellis`` command and the
    web app, so a file gives the same names and rows everywhere. CSV follows
    RFC 4180 (quoted fields may hold commas and doubled quotes; CRLF or LF);
    a first row none of whose fields is a number is a header; there is no
    comment syntax (a row whose name starts with ``#`` is a row); an
    unterminated quote raises ``InputError`` naming its line.

    Parameters
    ----------
    path : str or os.PathLike
        The file: ``.npy`` (a 2-D float64 or float32 array), else CSV.
    names_column : "auto", int or None
        ``"auto"`` (the first column, when its header is ``name``, ``id`` or
        ``label`` or empty, or when none of its values is a number), a
        0-based column index, or ``None`` (every column is numeric).

    Returns
    -------
    names : list of str or None
        The names, or ``None`` when the file has no names column.
    X : ndarray, shape (n, d)
        The rows, float64.
    """
    if names_column is not None and not isinstance(names_column, str):
        names_column = _args.integer(names_column, "names_column", 0)
    return _core.read_table(_args.path(path), True, "none" if names_column is None else names_column)


def read_weights(path):
    """Reads an ``(n, n)`` matrix (weights or distances) with the library's
    reader (see ``read_points``): a CSV file without a header, or ``.npy``.

    Parameters
    ----------
    path : str or os.PathLike
        The file.

    Returns
    -------
    ndarray, shape (n, n)
        The matrix, float64.
    """
    return _core.read_table(_args.path(path), False, "none")[1]
