"""scikit-learn style estimators: ``TrellisHierarchical`` and ``TrellisFlat``.

They follow scikit-learn's conventions without depending on it: the
constructor only stores its parameters, ``fit`` validates them, does the
work and returns ``self``, and what was learned is kept in attributes whose
names end in ``_``. When scikit-learn is importable the estimators inherit
from ``sklearn.base.BaseEstimator`` and ``ClusterMixin`` (so ``clone``,
pipelines and grid search work); otherwise a small stand-in gives the same
``get_params`` / ``set_params``.

Example::

    import numpy as np
    import trellis

    X = np.random.default_rng(0).normal(size=(12, 3))
    est = trellis.TrellisHierarchical(n_clusters=3).fit(X)
    est.labels_, est.log_z_, est.linkage_matrix_
"""

from __future__ import annotations

import inspect

import numpy as np

from . import (
    InputError,
    _float,
    _int,
    _jobs,
    _matrix,
    astar,
    beam,
    exact_hierarchy,
    exact_partition,
    greedy,
    similarity,
)

__all__ = ["TrellisFlat", "TrellisHierarchical"]

#: The ways of turning ``X`` into pairwise weights.
SIMILARITIES = ("cosine", "rbf", "dot", "expneg", "precomputed")
#: The methods of ``TrellisHierarchical``.
METHODS = ("exact", "astar", "approx", "greedy", "beam")

try:  # pragma: no cover - which branch runs depends on the environment
    from sklearn.base import BaseEstimator as _BaseEstimator
    from sklearn.base import ClusterMixin as _ClusterMixin
except ImportError:  # pragma: no cover

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

        def fit_predict(self, X, y=None):
            return self.fit(X).labels_


def _weights(X, kind, center, gamma):
    """Pairwise weights from ``X``: similarities of its rows, or ``X``
    itself with ``kind="precomputed"``."""
    if not isinstance(kind, str) or kind not in SIMILARITIES:
        raise InputError(
            f"similarity must be one of {', '.join(repr(s) for s in SIMILARITIES)}, not {kind!r}"
        )
    if kind == "precomputed":
        W = _matrix(X, "X (precomputed weights)")
        if W.shape[0] != W.shape[1]:
            raise InputError(
                f"with similarity=\"precomputed\", X must be a square (n, n) weight matrix, "
                f"not {W.shape[0]} x {W.shape[1]}"
            )
        return W
    return similarity(X, kind=kind, gamma=gamma, center=center)


def _n_features(X, kind):
    return None if kind == "precomputed" else _matrix(X, "X").shape[1]


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


class TrellisHierarchical(_ClusterMixin, _BaseEstimator):
    """A hierarchical clustering: the best binary tree under a model, found
    exactly (with the exact posterior) or by search.

    Parameters
    ----------
    model : {"hcc", "dasgupta"}, default "hcc"
        The tree cost: hierarchical correlation clustering (weights of any
        sign) or Dasgupta's cost (weights must be >= 0, so use
        ``center=False`` with it).
    method : {"exact", "astar", "approx", "greedy", "beam"}, default "exact"
        ``"exact"``: the exact posterior over every tree (``exact_hierarchy``;
        at most 30 points and the memory available), giving the MAP tree,
        ``log_z_`` and ``cluster_marginals_``. ``"astar"``: exact A* search
        for the best tree. ``"approx"``: approximate A* (any number of points).
        ``"greedy"``, ``"beam"``: the agglomerative baselines.
    beta : float, default 1.0
        Inverse temperature of ``P(tree) ∝ exp(-beta · cost)`` (changes
        ``log_z_`` and the marginals, not the best tree).
    similarity : {"cosine", "rbf", "dot", "expneg", "precomputed"}, default "cosine"
        How ``fit`` turns the rows of ``X`` into pairwise weights
        (``trellis.similarity``), or ``"precomputed"``: ``X`` is the
        ``(n, n)`` symmetric weight matrix itself, used as given.
    center : bool, default True
        Subtract the mean off-diagonal similarity (attraction and repulsion
        for ``"hcc"``). Ignored with ``similarity="precomputed"``.
    n_clusters : int or None, default None
        When set, ``labels_`` holds the ``n_clusters`` clusters obtained by
        cutting the tree top-down (undoing its last ``n_clusters - 1``
        merges).
    gamma : float or None, default None
        The ``"rbf"`` similarity's ``gamma`` (default ``1 / n_features``).
    seed : int, default 0
        Seed of the approximate A* search's sampler (same seed, same tree).
    n_jobs : int or None, default None
        Threads for ``"exact"``, ``"astar"`` and ``"approx"`` (``None``:
        every core; ``-1``: every core).

    Attributes
    ----------
    tree_ : trellis.Tree
        The tree found, with cumulative-cost merge heights.
    children_ : ndarray of shape (n - 1, 2)
        The merges, as scikit-learn's ``AgglomerativeClustering.children_``:
        values below ``n`` are points, ``n + i`` is the cluster of merge ``i``.
    linkage_matrix_ : ndarray of shape (n - 1, 4)
        SciPy's linkage matrix of ``tree_`` (valid and monotone).
    labels_ : ndarray of shape (n,)
        Cluster labels ``0..n_clusters-1`` (only when ``n_clusters`` is set).
    cost_ : float
        The model's cost of ``tree_``.
    log_z_ : float
        ``log Z`` over every tree (``method="exact"`` only).
    cluster_marginals_ : list of (tuple, float)
        Every non-singleton proper cluster with its posterior probability,
        most probable first (``method="exact"`` only).
    posterior_ : trellis.HierarchyPosterior
        The posterior itself (``method="exact"`` only).
    n_leaves_ : int
        Number of points.
    n_features_in_ : int
        Number of features of ``X`` (not set with ``"precomputed"``).
    """

    def __init__(
        self,
        model="hcc",
        method="exact",
        beta=1.0,
        similarity="cosine",
        center=True,
        n_clusters=None,
        gamma=None,
        seed=0,
        n_jobs=None,
    ):
        self.model = model
        self.method = method
        self.beta = beta
        self.similarity = similarity
        self.center = center
        self.n_clusters = n_clusters
        self.gamma = gamma
        self.seed = seed
        self.n_jobs = n_jobs

    def fit(self, X, y=None):
        """Finds the tree of ``X`` (points, one per row, or the weight
        matrix with ``similarity="precomputed"``); ``y`` is ignored.
        Returns ``self``."""
        if not isinstance(self.method, str) or self.method not in METHODS:
            raise InputError(
                f"method must be one of {', '.join(repr(m) for m in METHODS)}, not {self.method!r}"
            )
        beta = _float(self.beta, "beta")
        n_jobs = _jobs(self.n_jobs)
        seed = _int(self.seed, "seed", 0, optional=False)
        W = _weights(X, self.similarity, self.center, self.gamma)
        n = W.shape[0]
        n_clusters = _int(self.n_clusters, "n_clusters", 1)
        if n_clusters is not None and n_clusters > n:
            raise InputError(f"n_clusters = {n_clusters} is more than the {n} points")
        for name in ("log_z_", "cluster_marginals_", "posterior_", "labels_", "n_features_in_"):
            self.__dict__.pop(name, None)

        m = self.method
        if m == "exact":
            post = exact_hierarchy(W, model=self.model, beta=beta, n_jobs=n_jobs)
            tree, cost = post.map_tree, post.map_cost
            self.posterior_ = post
            self.log_z_ = post.log_z
            self.cluster_marginals_ = post.cluster_marginals()
        elif m in ("astar", "approx"):
            res = astar(W, model=self.model, approx=(m == "approx"), seed=seed, beta=beta, n_jobs=n_jobs)
            tree, cost = res.tree, res.cost
        elif m == "greedy":
            tree, cost = greedy(W, model=self.model, beta=beta), None
        else:
            tree, cost = beam(W, model=self.model, beta=beta), None

        self.tree_ = tree
        self.linkage_matrix_ = tree.to_linkage()
        self.children_ = self.linkage_matrix_[:, :2].astype(np.intp)
        self.cost_ = float(cost) if cost is not None else _tree_cost(tree)
        self.n_leaves_ = n
        nf = _n_features(X, self.similarity)
        if nf is not None:
            self.n_features_in_ = nf
        if n_clusters is not None:
            self.labels_ = _cut(self.children_, n, n_clusters)
        return self

    def fit_predict(self, X, y=None):
        """``fit(X)`` and return ``labels_`` (needs ``n_clusters``)."""
        if self.n_clusters is None:
            raise InputError("fit_predict needs n_clusters: set it to cut the tree into that many clusters")
        return self.fit(X).labels_


def _tree_cost(tree) -> float:
    """The cost of a tree from its cumulative-cost heights (the root's)."""
    h = tree.heights
    return float(h[-1]) if h else 0.0


class TrellisFlat(_ClusterMixin, _BaseEstimator):
    """A flat clustering with the exact posterior over every partition
    (correlation clustering on the flat trellis; at most ~25 points).

    Parameters
    ----------
    model : {"cc"}, default "cc"
        Correlation clustering: ``P(C) ∝ Π_c exp(beta · Σ_{i<j in c} w_ij)``.
    beta : float, default 1.0
        Inverse temperature.
    similarity : {"cosine", "rbf", "dot", "expneg", "precomputed"}, default "cosine"
        As ``TrellisHierarchical``: how rows of ``X`` become weights, or
        ``"precomputed"`` for a weight matrix used as given.
    center : bool, default True
        Subtract the mean off-diagonal similarity (ignored with
        ``"precomputed"``); without it, non-negative similarities put every
        point in one cluster.
    gamma : float or None, default None
        The ``"rbf"`` similarity's ``gamma``.
    n_jobs : int or None, default None
        Threads (``None`` or ``-1``: every core).

    Attributes
    ----------
    labels_ : ndarray of shape (n,)
        The MAP partition, clusters numbered by their smallest point.
    pairwise_marginals_ : ndarray of shape (n, n)
        The probability that two points share a cluster.
    log_z_ : float
        ``log Z`` over every partition.
    cluster_marginals_ : list of (tuple, float)
        Every cluster (singletons included) with its probability, most
        probable first.
    posterior_ : trellis.PartitionPosterior
        The posterior itself.
    n_features_in_ : int
        Number of features of ``X`` (not set with ``"precomputed"``).
    """

    def __init__(self, model="cc", beta=1.0, similarity="cosine", center=True, gamma=None, n_jobs=None):
        self.model = model
        self.beta = beta
        self.similarity = similarity
        self.center = center
        self.gamma = gamma
        self.n_jobs = n_jobs

    def fit(self, X, y=None):
        """Computes the posterior over partitions of ``X``; returns ``self``."""
        beta = _float(self.beta, "beta")
        n_jobs = _jobs(self.n_jobs)
        W = _weights(X, self.similarity, self.center, self.gamma)
        self.__dict__.pop("n_features_in_", None)
        post = exact_partition(W, model=self.model, beta=beta, n_jobs=n_jobs)
        self.posterior_ = post
        self.labels_ = post.map_labels
        self.log_z_ = post.log_z
        self.pairwise_marginals_ = post.pairwise_marginals()
        self.cluster_marginals_ = post.cluster_marginals()
        nf = _n_features(X, self.similarity)
        if nf is not None:
            self.n_features_in_ = nf
        return self

    def fit_predict(self, X, y=None):
        """``fit(X)`` and return ``labels_`` (the MAP partition)."""
        return self.fit(X).labels_
