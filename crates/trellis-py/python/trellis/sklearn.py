"""scikit-learn estimators: ``TrellisHierarchical`` and ``TrellisFlat``.

Both follow scikit-learn's conventions and pass its
``sklearn.utils.estimator_checks.check_estimator`` with their default
parameters: the constructor only stores its parameters, ``fit`` validates
them and the data (with scikit-learn's own ``validate_data``, so sparse,
complex, object, empty and non-finite input get scikit-learn's messages),
does the work and returns ``self``, and what was learned is kept in
attributes whose names end in ``_``. Fitted estimators pickle.

When scikit-learn is importable the estimators inherit from
``sklearn.base.ClusterMixin`` and ``BaseEstimator`` (so ``clone``, pipelines
and grid search work); otherwise a small stand-in gives the same
``get_params`` / ``set_params`` / ``fit_predict`` and the package checks the
data itself.

With the default ``method="auto"`` an estimator is exact when the planner
(``trellis.plan``) says the exact computation fits the memory available and
``max_exact_seconds``, and approximate beyond: approximate A* for the
hierarchy, and for flat clusterings the partitions that cut the approximate
A* tree (a sparse flat trellis whose MAP partition and marginals are exact
*within that family* of partitions). ``method_`` says which ran.

Example::

    import numpy as np
    import trellis

    X = np.random.default_rng(0).normal(size=(12, 3))
    est = trellis.TrellisHierarchical(n_clusters=3).fit(X)
    est.labels_, est.log_z_, est.linkage_matrix_, est.method_
"""

from __future__ import annotations

import inspect
import math
import warnings

import numpy as np

from . import (
    InputError,
    TooLargeError,
    _float,
    _int,
    _jobs,
    _matrix,
    _memory,
    astar,
    beam,
    exact_hierarchy,
    exact_partition,
    greedy,
    similarity,
)
from ._plan import plan

__all__ = ["TrellisFlat", "TrellisHierarchical"]

#: The ways of turning ``X`` into pairwise weights.
SIMILARITIES = ("cosine", "rbf", "dot", "expneg", "precomputed")
#: The methods of ``TrellisHierarchical``.
METHODS = ("auto", "exact", "astar", "approx", "greedy", "beam")
#: The methods of ``TrellisFlat``.
FLAT_METHODS = ("auto", "exact", "approx")
#: The models of ``TrellisHierarchical`` (both take weights).
MODELS = ("hcc", "dasgupta")
#: The models of ``TrellisFlat``.
FLAT_MODELS = ("cc",)
#: The trees ``TrellisHierarchical`` can report (``summary``).
SUMMARIES = ("map", "mcc")
#: The methods that give the exact posterior ``summary="mcc"`` needs.
POSTERIOR_METHODS = ("auto", "exact")
#: The default time budget of ``method="auto"`` for the exact computation.
MAX_EXACT_SECONDS = 5.0

try:  # pragma: no cover - which branch runs depends on the environment
    from sklearn.base import BaseEstimator as _BaseEstimator
    from sklearn.base import ClusterMixin as _ClusterMixin

    _HAVE_SKLEARN = True
    try:
        from sklearn.utils.validation import validate_data as _validate_data
    except ImportError:  # scikit-learn before 1.6: the estimator's method
        _validate_data = None
except ImportError:  # pragma: no cover
    _HAVE_SKLEARN = False
    _validate_data = None

    class _BaseEstimator:
        """``get_params`` / ``set_params`` as scikit-learn's ``BaseEstimator``."""

        @classmethod
        def _get_param_names(cls):
            sig = inspect.signature(cls.__init__)
            return sorted(
                p.name
                for p in sig.parameters.values()
                if p.name != "self" and p.kind != p.VAR_KEYWORD
            )

        def get_params(self, deep=True):
            """The constructor's parameters as a dict (``deep`` is accepted
            for compatibility: the parameters hold no estimators)."""
            return {name: getattr(self, name) for name in self._get_param_names()}

        def set_params(self, **params):
            """Sets constructor parameters by name; returns ``self``."""
            valid = self._get_param_names()
            for name, value in params.items():
                if name not in valid:
                    raise ValueError(
                        f"invalid parameter {name!r} for estimator {type(self).__name__}; "
                        f"valid parameters are {valid}"
                    )
                setattr(self, name, value)
            return self

        def __repr__(self):
            args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
            return f"{type(self).__name__}({args})"

    class _ClusterMixin:
        """``fit_predict`` as scikit-learn's ``ClusterMixin``."""

        _estimator_type = "clusterer"

        def fit_predict(self, X, y=None, **kwargs):
            """``fit(X)`` and return ``labels_``."""
            return self.fit(X, **kwargs).labels_


def _cut(children: np.ndarray, n: int, n_clusters: int) -> np.ndarray:
    """Labels of the ``n_clusters`` clusters left after undoing the last
    ``n_clusters - 1`` merges (rows of ``children``, children before parents),
    numbered by their smallest point."""
    keep = n - n_clusters  # merges that stay
    members = {i: [i] for i in range(n)}
    for k in range(keep):
        a, b = int(children[k, 0]), int(children[k, 1])
        members[n + k] = members.pop(a) + members.pop(b)
    labels = np.empty(n, dtype=np.int64)
    for label, pts in enumerate(sorted(members.values(), key=min)):
        labels[pts] = label
    return labels


def _tree_cost(tree) -> float:
    """The cost of a tree from its cumulative-cost heights (the root's)."""
    h = tree.heights
    return float(h[-1]) if h else 0.0


class _TreeCuts:
    """Correlation clustering restricted to the partitions that cut one
    hierarchy (each cluster a node of the tree): the tree-structured sparse
    flat trellis.

    ``P(C) ∝ Π_{c in C} E(c)`` with ``log E(c) = beta · Σ_{i<j in c} w_ij``
    (``0`` at ``beta = 0``), over the cuts of the tree given by ``children``
    (rows of merges as ``AgglomerativeClustering.children_``). Bottom-up,
    ``Z(v) = E(v) + Z(left) · Z(right)`` gives ``log Z``, and the same
    recursion with a maximum gives the MAP cut (a node stays whole unless
    cutting it is strictly better, as the library's ``tree_partitions``).
    Top-down, the probability of reaching a node (every ancestor cut) times
    ``E(v) / Z(v)`` is the marginal of cluster ``v``; the probability that
    two points share a cluster is the summed marginal of the nodes above
    their lowest common ancestor (itself included). Everything is ``O(n^2)``
    (the weights inside every node) and in log space.
    """

    def __init__(self, weights: np.ndarray, children: np.ndarray, beta: float):
        n = weights.shape[0]
        children = np.asarray(children, dtype=np.intp).reshape(-1, 2)
        m = 2 * n - 1
        root = m - 1
        left, right = children[:, 0], children[:, 1]
        size = np.ones(m, dtype=np.intp)
        for k in range(n - 1):
            size[n + k] = size[left[k]] + size[right[k]]
        # Leaves in the tree's order: every node is a contiguous range.
        start = np.zeros(m, dtype=np.intp)
        for k in range(n - 2, -1, -1):
            start[left[k]] = start[n + k]
            start[right[k]] = start[n + k] + size[left[k]]
        order = np.empty(n, dtype=np.intp)
        order[start[:n]] = np.arange(n)
        # The weights in that order; the blocks summed below are between two
        # disjoint ranges, so the diagonal is never read.
        w = np.asarray(weights, dtype=np.float64)[np.ix_(order, order)]

        inside = np.zeros(m)
        for k in range(n - 1):
            a, b = left[k], right[k]
            cross = w[start[a] : start[a] + size[a], start[b] : start[b] + size[b]].sum()
            inside[n + k] = inside[a] + inside[b] + cross
        log_e = np.zeros(m) if beta == 0.0 else beta * inside
        log_z = log_e.copy()
        best = log_e.copy()
        keep = np.ones(m, dtype=bool)
        for k in range(n - 1):
            v, a, b = n + k, left[k], right[k]
            log_z[v] = np.logaddexp(log_e[v], log_z[a] + log_z[b])
            split = best[a] + best[b]
            keep[v] = not (log_e[v] < split)
            best[v] = max(log_e[v], split)

        # Marginals: log P(every ancestor of v is cut) + log E(v) - log Z(v).
        reach = np.zeros(m)
        for k in range(n - 2, -1, -1):
            v, a, b = n + k, left[k], right[k]
            reach[a] = reach[b] = reach[v] + log_z[a] + log_z[b] - log_z[v]
        with np.errstate(invalid="ignore"):
            p = np.exp(reach + log_e - log_z)
        p[~np.isfinite(p)] = 0.0

        self.n = n
        self._order, self._start, self._size = order, start, size
        self._children = children
        self._p = p
        self.log_z = float(log_z[root])
        self.map_log_energy = float(best[root])

        clusters, stack = [], [root]
        while stack:
            v = stack.pop()
            if v >= n and not keep[v]:
                stack.extend((right[v - n], left[v - n]))
            else:
                clusters.append(self._members(v))
        labels = np.empty(n, dtype=np.int64)
        for label, c in enumerate(sorted(clusters, key=lambda c: c[0])):
            labels[c] = label
        self.map_labels = labels

    def _members(self, v) -> np.ndarray:
        return np.sort(self._order[self._start[v] : self._start[v] + self._size[v]])

    def cluster_marginals(self) -> list[tuple[tuple[int, ...], float]]:
        """Every node with probability ``> 0`` as ``(points, p)``, most
        probable first (ties by the bit mask of the points, as the exact
        posterior's ``cluster_marginals``)."""
        out = []
        for v in range(2 * self.n - 1):
            if self._p[v] > 0.0:
                pts = tuple(int(i) for i in self._members(v))
                out.append((pts, float(self._p[v]), pts[::-1]))
        # Ordering the points from the largest down orders the sets as
        # their bit masks are ordered.
        out.sort(key=lambda t: (-t[1], t[2]))
        return [(pts, p) for pts, p, _ in out]

    def pairwise_marginals(self) -> np.ndarray:
        """The ``(n, n)`` probabilities that two points share a cluster."""
        n, start, size, p = self.n, self._start, self._size, self._p
        above = np.zeros(2 * n - 1)  # summed marginal of v and its ancestors
        above[-1] = p[-1]
        out = np.empty((n, n))
        for k in range(n - 2, -1, -1):
            v, a, b = n + k, self._children[k, 0], self._children[k, 1]
            above[a] = above[v] + p[a]
            above[b] = above[v] + p[b]
            ra = slice(start[a], start[a] + size[a])
            rb = slice(start[b], start[b] + size[b])
            out[ra, rb] = above[v]
            out[rb, ra] = above[v]
        np.fill_diagonal(out, 1.0)
        back = np.empty(n, dtype=np.intp)
        back[self._order] = np.arange(n)
        return out[np.ix_(back, back)]

    def num_partitions(self) -> int:
        """The number of cuts: ``C(v) = 1 + C(left) · C(right)``, ``C(leaf) = 1``."""
        c = [1] * (2 * self.n - 1)
        for k in range(self.n - 1):
            c[self.n + k] = 1 + c[self._children[k, 0]] * c[self._children[k, 1]]
        return c[-1]


class _TrellisEstimator(_ClusterMixin, _BaseEstimator):
    """What the two estimators share: parameter and data validation, the
    choice of ``method="auto"``, tags and pickling."""

    _methods: tuple = ()
    _models: tuple = ()

    # -- parameters -------------------------------------------------------

    def _choice(self, value, allowed, what):
        if not isinstance(value, str) or value not in allowed:
            raise InputError(f"{what} must be one of {', '.join(repr(a) for a in allowed)}, not {value!r}")
        return value

    def _common_params(self):
        """The parameters both estimators have, checked."""
        p = {
            "method": self._choice(self.method, self._methods, "method"),
            "model": self._choice(self.model, self._models, "model"),
            "similarity": self._choice(self.similarity, SIMILARITIES, "similarity"),
            "beta": _float(self.beta, "beta"),
            "n_jobs": _jobs(self.n_jobs),
            "seed": _int(self.seed, "seed", 0, optional=False),
            "max_memory": _memory(self.max_memory),
            "center": bool(self.center),
        }
        p["gamma"] = None if self.gamma is None else _float(self.gamma, "gamma")
        mem = p["max_memory"]
        if mem is not None and not (math.isfinite(mem) and mem >= 1):
            raise InputError(f"max_memory must be a number of bytes of at least 1 or None, not {mem}")
        if self.max_exact_seconds is None:
            p["max_exact_seconds"] = None
        else:
            t = _float(self.max_exact_seconds, "max_exact_seconds")
            if not (math.isfinite(t) and t > 0):
                raise InputError(f"max_exact_seconds must be a number of seconds > 0 or None, not {t}")
            p["max_exact_seconds"] = t
        return p

    # -- data -------------------------------------------------------------

    def _forget(self):
        """Drops the attributes of an earlier fit."""
        for name in [k for k in self.__dict__ if k.endswith("_") and not k.startswith("__")]:
            del self.__dict__[name]
        self.__dict__.pop("_posterior_args", None)

    def _check_X(self, X):
        """``X`` as a finite 2-D float64 array with at least one row and
        one column: scikit-learn's ``validate_data`` when it is installed
        (its messages; sets ``n_features_in_`` and, for a DataFrame,
        ``feature_names_in_``), else the package's own checks."""
        if _validate_data is not None:
            return _validate_data(self, X, accept_sparse=False, dtype=np.float64)
        if _HAVE_SKLEARN:  # pragma: no cover - scikit-learn before 1.6
            return self._validate_data(X, accept_sparse=False, dtype=np.float64)
        X = _matrix(X, "X")
        if X.shape[0] < 1 or X.shape[1] < 1:
            raise InputError(f"X must have at least one row and one column, not shape {X.shape}")
        if not np.isfinite(X).all():
            raise InputError("X contains NaN or infinity")
        self.n_features_in_ = X.shape[1]
        return X

    def _weights(self, X, p):
        """Pairwise weights from the validated ``X``: similarities of its
        rows, or ``X`` itself with ``similarity="precomputed"``."""
        if p["similarity"] == "precomputed":
            if X.shape[0] != X.shape[1]:
                raise InputError(
                    f"with similarity=\"precomputed\", X must be a square (n, n) weight matrix, "
                    f"not {X.shape[0]} x {X.shape[1]}"
                )
            return X
        return similarity(X, kind=p["similarity"], gamma=p["gamma"], center=bool(p["center"]))

    def _method(self, p, n, task="infer"):
        """The method that runs: ``p["method"]``, or for ``"auto"`` the
        planner's choice (``"exact"`` or ``"approx"``) for ``task``."""
        if p["method"] != "auto":
            return p["method"]
        try:
            est = plan(
                n,
                model=p["model"],
                task=task,
                n_jobs=p["n_jobs"],
                max_memory=p["max_memory"],
                time_limit=p["max_exact_seconds"],
            )
        except TooLargeError:  # more points than any exact trellis takes
            return "approx"
        return "exact" if est["method"] == "exact" else "approx"

    # -- scikit-learn -----------------------------------------------------

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # A precomputed (n, n) matrix is indexed by samples on both axes.
        tags.input_tags.pairwise = self.similarity == "precomputed"
        return tags

    # -- pickling ---------------------------------------------------------
    #
    # The exact posterior (``posterior_``) lives in the compiled core and
    # does not pickle: the pickle keeps how to rebuild it (the weights, at
    # most 30 x 30, and the parameters), and the unpickled estimator rebuilds
    # it on first access. Everything else pickles as it is.

    def __getstate__(self):
        try:
            state = super().__getstate__()
        except AttributeError:  # Python < 3.11 without scikit-learn
            state = None
        state = dict(self.__dict__ if state is None else state)
        state.pop("posterior_", None)
        return state

    def __setstate__(self, state):
        try:
            super().__setstate__(state)
        except AttributeError:
            self.__dict__.update(state)

    def __getattr__(self, name):
        # Only reached for attributes that are missing.
        if name == "posterior_":
            args = self.__dict__.get("_posterior_args")
            if args is not None:
                post = self._exact(*args)
                self.__dict__["posterior_"] = post
                return post
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


_PARAMS_DOC = """
    beta : float, default=1.0
        Inverse temperature of the distribution (``>= 0``, finite); it
        changes ``log_z_`` and the marginals, not the best tree or partition
        (except ``beta=0``, where every one is equally likely).
    similarity : {"rbf", "cosine", "dot", "expneg", "precomputed"}, default="rbf"
        How ``fit`` turns the rows of ``X`` into pairwise weights
        (``trellis.similarity``): ``"rbf"`` is ``exp(-gamma |x - y|^2)``,
        defined for any rows; ``"cosine"`` is undefined for a row of zeros
        (``fit`` raises); ``"dot"`` is ``x · y``; ``"expneg"`` is
        ``exp(-|x - y|)``. With ``"precomputed"``, ``X`` is the ``(n, n)``
        symmetric weight matrix itself (positive attracts, negative repels;
        the diagonal is ignored), used as given.
    center : bool, default=True
        Subtract the mean off-diagonal similarity, so that the weights both
        attract (above average) and repel (below). Ignored with
        ``similarity="precomputed"``.
    gamma : float or None, default=None
        The ``"rbf"`` similarity's ``gamma``; ``None`` is ``1 / n_features``.
        Ignored by the other similarities.
    max_exact_seconds : float or None, default=5.0
        The time budget of ``method="auto"``: the exact computation runs
        when the planner (``trellis.plan(n, task="infer")``) estimates it
        within this many seconds on ``n_jobs`` threads (``None``: no time
        limit, memory alone decides). The estimate is the planner's
        calibrated one (within about 2x on the machine it was measured on);
        a loaded machine takes longer. Ignored by the other methods.
    max_memory : float or None, default=None
        Bytes the exact computation's tables may use, for ``method="auto"``'s
        choice and for the exact computation itself (``None``: the memory
        the operating system reports as available).
    seed : int, default=0
        Seed of the approximate A* search's sampler: the same seed gives the
        same tree (used by ``method="approx"``, and by ``"auto"`` when it
        chooses it).
    n_jobs : int or None, default=None
        Threads of the exact computation and of A* (``None`` or ``-1``:
        every core).
"""


class TrellisHierarchical(_TrellisEstimator):
    """Hierarchical clustering: the best binary tree under a cost model,
    found exactly (with the exact posterior over every tree) or by search.

    Parameters
    ----------
    model : {"hcc", "dasgupta"}, default="hcc"
        The tree cost: hierarchical correlation clustering (weights of any
        sign) or Dasgupta's cost (weights must be ``>= 0``, so use it with
        ``center=False`` and a non-negative similarity).
    method : {"auto", "exact", "astar", "approx", "greedy", "beam"}, default="auto"
        ``"exact"``: the exact posterior over every tree
        (``trellis.exact_hierarchy``; at most 30 points and the memory
        available, ``TooLargeError`` beyond), giving the MAP tree,
        ``log_z_`` and ``cluster_marginals_``. ``"approx"``: approximate A*
        (``trellis.astar(..., approx=True)``; any number of points, in a time
        that grows quickly with it and depends on the data: on two cores
        under a second for the 150 iris flowers, about a minute for 600
        Gaussian points). ``"auto"``: ``"exact"`` when the planner says it fits
        ``max_memory`` and ``max_exact_seconds``, else ``"approx"``
        (``method_`` says which ran). ``"astar"``: exact A* search for the
        best tree alone (at most 128 points). ``"greedy"``, ``"beam"``: the
        agglomerative baselines.
    n_clusters : int or None, default=None
        The clusters of ``labels_``. An int ``k`` cuts the tree top-down
        into ``k`` clusters (undoing its last ``k - 1`` merges). ``None``
        lets the model choose: ``labels_`` is the most probable flat
        clustering among the cuts of ``tree_`` (the partitions whose
        clusters are nodes of the tree) under correlation clustering on the
        same weights and ``beta``, ``P(C) ∝ exp(beta · Σ_{c in C} Σ_{i<j in c} w_ij)``;
        with weights that are all ``>= 0`` that is one cluster.
    summary : {"map", "mcc"}, default="map"
        Which tree of the posterior the estimator reports as ``tree_`` (and
        so ``labels_``, ``children_``, ``distances_``, ``linkage_matrix_``
        and ``cost_``). ``"map"``: the most probable tree (or the best tree
        the search ``method`` finds). ``"mcc"``: the maximum-clade-credibility
        tree, the binary tree whose clusters' exact posterior marginals
        have the largest product (``HierarchyPosterior.mcc_tree()``: one more
        max-plus pass over the trellis after the marginals, ``O(3^n)``); it
        shows the groups the posterior is sure of where the MAP tree is often
        a caterpillar. ``"mcc"`` needs the exact posterior: ``method`` must be
        ``"exact"`` or ``"auto"`` (``ValueError`` otherwise), and ``"auto"``
        asks the planner for the MCC task (``trellis.plan(n, task="mcc")``);
        when that does not fit, ``"auto"`` falls back to approximate A*'s
        tree with a ``UserWarning``, and ``summary_`` says ``"map"``.{params}
    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster labels ``0..n_clusters_-1``, clusters numbered by their
        smallest point (see ``n_clusters``).
    n_clusters_ : int
        Number of clusters in ``labels_``.
    children_ : ndarray of shape (n_samples - 1, 2)
        The merges, as ``AgglomerativeClustering.children_``: values below
        ``n_samples`` are points, ``n_samples + i`` is the cluster formed by
        merge ``i``; children come before their parents.
    distances_ : ndarray of shape (n_samples - 1,)
        The height of each merge: the cumulative cost of the tree below it
        (non-decreasing, as ``linkage_matrix_[:, 2]``).
    linkage_matrix_ : ndarray of shape (n_samples - 1, 4)
        SciPy's linkage matrix of ``tree_`` (valid and monotone).
    tree_ : trellis.Tree
        The tree found (see ``summary``), with cumulative-cost merge heights;
        the MCC tree also carries ``support`` (each non-trivial cluster's
        marginal) and ``log_credibility``.
    cost_ : float
        The model's cost of ``tree_``.
    method_ : str
        The method that ran (``"exact"`` or ``"approx"`` for ``"auto"``).
    summary_ : str
        Which tree ``tree_`` is: ``"mcc"`` (the maximum-clade-credibility
        tree) or ``"map"`` (the MAP tree, or the search method's best tree).
    log_z_ : float
        ``log Z`` over every tree (exact method only).
    cluster_marginals_ : list of (tuple, float)
        Every non-singleton proper cluster of posterior probability at least
        0.01 (the posterior's default ``min_p``) with that probability, most
        probable first (exact method only; ``posterior_.cluster_marginals(min_p=0.0)``
        lists them all).
    posterior_ : trellis.HierarchyPosterior
        The exact posterior itself (exact method only; not pickled, an
        unpickled estimator rebuilds it on first access).
    n_leaves_ : int
        Number of points (leaves of the tree).
    n_features_in_ : int
        Number of columns of ``X`` seen by ``fit`` (``n_samples`` with
        ``similarity="precomputed"``).
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Column names of ``X``, when it is a DataFrame with string column
        names (scikit-learn installed).

    Examples
    --------
    >>> import numpy as np, trellis
    >>> X = np.r_[np.zeros((4, 2)), np.full((4, 2), 5.0)] + np.arange(8)[:, None] * 0.01
    >>> est = trellis.TrellisHierarchical().fit(X)
    >>> est.method_, est.labels_.tolist()
    ('exact', [0, 0, 0, 0, 1, 1, 1, 1])
    """

    _methods = METHODS
    _models = MODELS

    def __init__(
        self,
        model="hcc",
        method="auto",
        n_clusters=None,
        beta=1.0,
        similarity="rbf",
        center=True,
        gamma=None,
        max_exact_seconds=MAX_EXACT_SECONDS,
        max_memory=None,
        seed=0,
        n_jobs=None,
        summary="map",
    ):
        self.model = model
        self.method = method
        self.n_clusters = n_clusters
        self.beta = beta
        self.similarity = similarity
        self.center = center
        self.gamma = gamma
        self.max_exact_seconds = max_exact_seconds
        self.max_memory = max_memory
        self.seed = seed
        self.n_jobs = n_jobs
        self.summary = summary

    def _exact(self, W, model, beta, max_memory, n_jobs):
        return exact_hierarchy(W, model=model, beta=beta, max_memory=max_memory, n_jobs=n_jobs)

    def fit(self, X, y=None):
        """Find the tree of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
            The points, one per row, or the weight matrix with
            ``similarity="precomputed"``.
        y : None
            Ignored.

        Returns
        -------
        self : TrellisHierarchical
            The fitted estimator.
        """
        p = self._common_params()
        n_clusters = _int(self.n_clusters, "n_clusters", 1)
        summary = self._choice(self.summary, SUMMARIES, "summary")
        if summary == "mcc" and p["method"] not in POSTERIOR_METHODS:
            raise InputError(
                f"summary=\"mcc\" needs the exact posterior: method must be \"exact\" or \"auto\", "
                f"not {p['method']!r}"
            )
        self._forget()
        X = self._check_X(X)
        W = self._weights(X, p)
        n = W.shape[0]
        if n_clusters is not None and n_clusters > n:
            raise InputError(f"n_clusters = {n_clusters} is more than the {n} points")

        m = self._method(p, n, task="mcc" if summary == "mcc" else "infer")
        model, beta, n_jobs = p["model"], p["beta"], p["n_jobs"]
        if summary == "mcc" and m != "exact":
            warnings.warn(
                f"the exact posterior over {n} points is beyond max_memory, max_exact_seconds or 30 points: "
                "tree_ is approximate A*'s tree, not the MCC tree (summary_ is \"map\")",
                UserWarning,
                stacklevel=2,
            )
            summary = "map"
        if m == "exact":
            post = self._exact(W, model, beta, p["max_memory"], n_jobs)
            if summary == "mcc":
                tree = post.mcc_tree()
                cost = _tree_cost(tree)
            else:
                tree, cost = post.map_tree, post.map_cost
            self.posterior_ = post
            self._posterior_args = (W, model, beta, p["max_memory"], n_jobs)
            self.log_z_ = post.log_z
            self.cluster_marginals_ = post.cluster_marginals()
        elif m in ("astar", "approx"):
            res = astar(
                W, model=model, approx=(m == "approx"), seed=p["seed"], beta=beta,
                max_memory=p["max_memory"], n_jobs=n_jobs,
            )
            tree, cost = res.tree, res.cost
        elif m == "greedy":
            tree, cost = greedy(W, model=model, beta=beta), None
        else:
            tree, cost = beam(W, model=model, beta=beta), None

        self.tree_ = tree
        self.linkage_matrix_ = tree.to_linkage()
        self.children_ = self.linkage_matrix_[:, :2].astype(np.intp)
        self.distances_ = self.linkage_matrix_[:, 2].copy()
        self.cost_ = float(cost) if cost is not None else _tree_cost(tree)
        self.n_leaves_ = n
        self.method_ = m
        self.summary_ = summary
        if n_clusters is None:
            self.labels_ = _TreeCuts(W, self.children_, beta).map_labels
        else:
            self.labels_ = _cut(self.children_, n, n_clusters)
        self.n_clusters_ = int(self.labels_.max()) + 1
        return self


class TrellisFlat(_TrellisEstimator):
    """Flat clustering with correlation clustering's posterior over
    partitions: exact over every partition, or over the partitions that cut
    an approximate tree.

    Parameters
    ----------
    model : {"cc"}, default="cc"
        Correlation clustering: ``P(C) ∝ Π_{c in C} exp(beta · Σ_{i<j in c} w_ij)``
        (the number of clusters follows from the weights).
    method : {"auto", "exact", "approx"}, default="auto"
        ``"exact"``: the flat trellis over every partition
        (``trellis.exact_partition``; at most 30 points and the memory
        available, about 25 in practice). ``"approx"``: the sparse flat
        trellis over the partitions that cut the tree of approximate A*
        (``trellis.astar(..., model="hcc", approx=True)`` on the same
        weights); ``labels_``, ``log_z_`` and the marginals are then exact
        for the distribution *restricted to that family* of partitions,
        which has ``n_partitions_`` members (at most ``2^(n-1)``), not for
        every partition. ``"auto"``: ``"exact"`` when the planner says it
        fits ``max_memory`` and ``max_exact_seconds``, else ``"approx"``
        (``method_`` says which ran).{params}
    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        The MAP partition (of the family, see ``method``), clusters
        numbered by their smallest point.
    n_clusters_ : int
        Number of clusters in ``labels_``.
    pairwise_marginals_ : ndarray of shape (n_samples, n_samples)
        The probability that two points share a cluster.
    log_z_ : float
        ``log Z`` over the partitions of the family.
    cluster_marginals_ : list of (tuple, float)
        Every cluster of probability at least 0.01 (the posteriors' default
        ``min_p``) with that probability, most probable first.
    n_partitions_ : int
        The number of partitions the distribution ranges over: the Bell
        number of ``n_samples`` for ``"exact"``, the number of cuts of
        ``tree_`` for ``"approx"``.
    method_ : str
        The method that ran (``"exact"`` or ``"approx"`` for ``"auto"``).
    tree_ : trellis.Tree
        The approximate A* tree whose cuts are the family (``"approx"``
        only).
    posterior_ : trellis.PartitionPosterior
        The exact posterior itself (``"exact"`` only; not pickled, an
        unpickled estimator rebuilds it on first access).
    n_features_in_ : int
        Number of columns of ``X`` seen by ``fit`` (``n_samples`` with
        ``similarity="precomputed"``).
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Column names of ``X``, when it is a DataFrame with string column
        names (scikit-learn installed).

    Examples
    --------
    >>> import numpy as np, trellis
    >>> X = np.r_[np.zeros((4, 2)), np.full((4, 2), 5.0)] + np.arange(8)[:, None] * 0.01
    >>> est = trellis.TrellisFlat().fit(X)
    >>> est.method_, est.labels_.tolist(), est.n_partitions_
    ('exact', [0, 0, 0, 0, 1, 1, 1, 1], 4140)
    """

    _methods = FLAT_METHODS
    _models = FLAT_MODELS

    def __init__(
        self,
        model="cc",
        method="auto",
        beta=1.0,
        similarity="rbf",
        center=True,
        gamma=None,
        max_exact_seconds=MAX_EXACT_SECONDS,
        max_memory=None,
        seed=0,
        n_jobs=None,
    ):
        self.model = model
        self.method = method
        self.beta = beta
        self.similarity = similarity
        self.center = center
        self.gamma = gamma
        self.max_exact_seconds = max_exact_seconds
        self.max_memory = max_memory
        self.seed = seed
        self.n_jobs = n_jobs

    def _exact(self, W, model, beta, max_memory, n_jobs):
        return exact_partition(W, model=model, beta=beta, max_memory=max_memory, n_jobs=n_jobs)

    def fit(self, X, y=None):
        """Compute the posterior over partitions of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
            The points, one per row, or the weight matrix with
            ``similarity="precomputed"``.
        y : None
            Ignored.

        Returns
        -------
        self : TrellisFlat
            The fitted estimator.
        """
        p = self._common_params()
        beta = p["beta"]
        if not (math.isfinite(beta) and beta >= 0):
            raise InputError(f"beta must be a finite number >= 0, not {beta}")
        self._forget()
        X = self._check_X(X)
        W = self._weights(X, p)
        n = W.shape[0]

        m = self._method(p, n)
        if m == "exact":
            post = self._exact(W, p["model"], beta, p["max_memory"], p["n_jobs"])
            self.posterior_ = post
            self._posterior_args = (W, p["model"], beta, p["max_memory"], p["n_jobs"])
            self.labels_ = post.map_labels
            self.log_z_ = post.log_z
            self.pairwise_marginals_ = post.pairwise_marginals()
            self.cluster_marginals_ = post.cluster_marginals()
            self.n_partitions_ = int(post.num_partitions)
        else:
            tree = astar(
                W, model="hcc", approx=True, seed=p["seed"], max_memory=p["max_memory"], n_jobs=p["n_jobs"]
            ).tree
            cuts = _TreeCuts(W, tree.to_linkage()[:, :2], beta)
            self.tree_ = tree
            self.labels_ = cuts.map_labels
            self.log_z_ = cuts.log_z
            self.pairwise_marginals_ = cuts.pairwise_marginals()
            self.cluster_marginals_ = [(c, p) for c, p in cuts.cluster_marginals() if p >= 0.01]
            self.n_partitions_ = cuts.num_partitions()
        self.n_clusters_ = int(self.labels_.max()) + 1
        self.method_ = m
        return self


# The parameters both estimators share, documented once.
TrellisHierarchical.__doc__ = TrellisHierarchical.__doc__.replace("{params}", _PARAMS_DOC)
TrellisFlat.__doc__ = TrellisFlat.__doc__.replace("{params}", _PARAMS_DOC)
