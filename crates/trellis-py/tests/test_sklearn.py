"""The scikit-learn estimators: they give the core functions' answers, pass
scikit-learn's own ``check_estimator`` with their default parameters, choose
exact or approximate inference with the planner (``method="auto"``), and
match SciPy's and scikit-learn's formats."""

from __future__ import annotations

import itertools
import json
import math
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import trellis
from trellis.sklearn import _TreeCuts

METHODS = ["auto", "exact", "astar", "approx", "greedy", "beam"]


def points(n=10, seed=0, d=3):
    return np.random.default_rng(seed).normal(size=(n, d))


def _partition(labels):
    groups = {}
    for i, label in enumerate(labels):
        groups.setdefault(int(label), set()).add(i)
    return {frozenset(g) for g in groups.values()}


@pytest.mark.parametrize("method", METHODS)
def test_hierarchical_equals_functions(method):
    x = points()
    w = trellis.similarity(x, "rbf", center=True)  # the default similarity
    est = trellis.TrellisHierarchical(method=method)
    assert est.fit(x) is est
    expected = {
        "auto": lambda: trellis.exact_hierarchy(w).map_tree,  # 10 points: exact
        "exact": lambda: trellis.exact_hierarchy(w).map_tree,
        "astar": lambda: trellis.astar(w).tree,
        "approx": lambda: trellis.astar(w, approx=True, seed=0).tree,
        "greedy": lambda: trellis.greedy(w),
        "beam": lambda: trellis.beam(w),
    }[method]()
    assert est.tree_ == expected
    n = len(x)
    assert est.n_leaves_ == n and est.n_features_in_ == 3
    np.testing.assert_array_equal(est.linkage_matrix_, expected.to_linkage())
    assert est.children_.shape == (n - 1, 2) and est.children_.dtype.kind == "i"
    np.testing.assert_array_equal(est.children_, est.linkage_matrix_[:, :2])
    assert est.cost_ == pytest.approx(expected.heights[-1])
    np.testing.assert_array_equal(est.distances_, est.linkage_matrix_[:, 2])
    assert est.method_ == ("exact" if method == "auto" else method)
    # n_clusters=None: the MAP partition among the cuts of the tree.
    np.testing.assert_array_equal(est.labels_, brute_cut_map(w, est.children_, 1.0))
    assert est.n_clusters_ == len(set(est.labels_.tolist()))
    if method in ("exact", "auto"):
        post = trellis.exact_hierarchy(w)
        assert est.log_z_ == post.log_z
        assert est.cluster_marginals_ == post.cluster_marginals()
        assert est.cost_ == pytest.approx(post.map_cost)
    else:
        assert not hasattr(est, "log_z_") and not hasattr(est, "cluster_marginals_")


def test_children_as_sklearn_agglomerative():
    """``children_`` has scikit-learn's meaning: with the same merges,
    AgglomerativeClustering's ``children_`` lists the same clusters."""
    cluster = pytest.importorskip("sklearn.cluster")
    x = points(12, seed=3)
    ours = trellis.TrellisHierarchical(method="exact").fit(x)
    theirs = cluster.AgglomerativeClustering(linkage="average", compute_full_tree=True).fit(x)

    def clusters(children, n):
        members = {i: frozenset([i]) for i in range(n)}
        for k, (a, b) in enumerate(children):
            members[n + k] = members[int(a)] | members[int(b)]
        return {members[n + k] for k in range(n - 1)}

    # Same format: n - 1 merges, ids n + i, children before parents.
    for ch in (ours.children_, theirs.children_):
        assert ch.shape == (11, 2)
        for k, row in enumerate(ch):
            assert all(v < 12 + k for v in row)
    assert clusters(ours.children_, 12) == {frozenset(c) for c in ours.tree_.clusters()}
    assert len(clusters(theirs.children_, 12)) == 11


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("k", [1, 2, 3, 5, 10])
def test_labels_cut_the_tree(method, k):
    x = points(10, seed=4)
    est = trellis.TrellisHierarchical(method=method, n_clusters=k).fit(x)
    labels = est.labels_
    assert labels.shape == (10,) and set(labels.tolist()) == set(range(k))
    groups = _partition(labels)
    assert len(groups) == k
    tree_clusters = {frozenset(c) for c in est.tree_.clusters()}
    # Every group is a cluster of the tree or a single point.
    assert all(len(g) == 1 or g in tree_clusters for g in groups)
    # A top-down cut: undoing the last k - 1 merges of the linkage matrix.
    n = 10
    members = {i: frozenset([i]) for i in range(n)}
    for step, row in enumerate(est.linkage_matrix_[: n - k]):
        a, b = int(row[0]), int(row[1])
        members[n + step] = members.pop(a) | members.pop(b)
    assert groups == set(members.values())
    # Labels are numbered by their smallest point.
    firsts = [min(np.flatnonzero(labels == j)) for j in range(k)]
    assert firsts == sorted(firsts)
    np.testing.assert_array_equal(est.fit_predict(x), labels)


def test_labels_equal_scipy_fcluster_with_distinct_heights():
    hierarchy = pytest.importorskip("scipy.cluster.hierarchy")
    x = points(12, seed=9)
    for k in (2, 3, 4):
        est = trellis.TrellisHierarchical(n_clusters=k).fit(x)
        z = est.linkage_matrix_
        if len(set(z[:, 2])) < len(z):
            continue  # ties: maxclust may cut differently
        expected = hierarchy.fcluster(z, k, criterion="maxclust")
        assert _partition(est.labels_) == _partition(expected)


def test_precomputed_equals_points():
    x = points(9, seed=5)
    for kind in ("cosine", "rbf", "dot", "expneg"):
        center = kind != "dot"
        w = trellis.similarity(x, kind, center=center)
        a = trellis.TrellisHierarchical(similarity=kind, center=center).fit(x)
        b = trellis.TrellisHierarchical(similarity="precomputed").fit(w)
        assert a.log_z_ == b.log_z_ and a.tree_ == b.tree_
        np.testing.assert_array_equal(a.labels_, b.labels_)
        assert a.n_features_in_ == 3 and b.n_features_in_ == 9  # as scikit-learn's precomputed
        fa = trellis.TrellisFlat(similarity=kind, center=center).fit(x)
        fb = trellis.TrellisFlat(similarity="precomputed").fit(w)
        assert fa.log_z_ == fb.log_z_
    # The rbf gamma reaches the similarity.
    g = trellis.TrellisHierarchical(similarity="rbf", gamma=0.3).fit(x)
    assert g.log_z_ == trellis.exact_hierarchy(trellis.similarity(x, "rbf", gamma=0.3, center=True)).log_z


def test_dasgupta_model():
    x = np.abs(points(8, seed=6))
    est = trellis.TrellisHierarchical(model="dasgupta", similarity="cosine", center=False).fit(x)
    post = trellis.exact_hierarchy(trellis.similarity(x), model="dasgupta")
    assert est.log_z_ == post.log_z and est.tree_ == post.map_tree


def test_beta():
    x = points(8, seed=7)
    w = trellis.similarity(x, "rbf", center=True)
    est = trellis.TrellisHierarchical(beta=2.5).fit(x)
    assert est.log_z_ == trellis.exact_hierarchy(w, beta=2.5).log_z
    f = trellis.TrellisFlat(beta=0.4).fit(x)
    assert f.log_z_ == trellis.exact_partition(w, beta=0.4).log_z


def test_flat_equals_exact_partition():
    x = points(9, seed=8)
    w = trellis.similarity(x, "rbf", center=True)
    est = trellis.TrellisFlat()
    assert est.fit(x) is est
    post = trellis.exact_partition(w)
    np.testing.assert_array_equal(est.labels_, post.map_labels)
    np.testing.assert_array_equal(est.pairwise_marginals_, post.pairwise_marginals())
    assert est.log_z_ == post.log_z
    assert est.cluster_marginals_ == post.cluster_marginals()
    np.testing.assert_array_equal(est.fit_predict(x), post.map_labels)
    assert est.n_features_in_ == 3
    assert est.method_ == "exact" and est.n_partitions_ == post.num_partitions == 21147  # Bell(9)
    assert est.n_clusters_ == len(set(est.labels_.tolist()))
    assert not hasattr(est, "tree_")


def test_float32_and_fortran():
    x = points(9, seed=10)
    ref = trellis.TrellisHierarchical().fit(x)
    assert trellis.TrellisHierarchical().fit(np.asfortranarray(x)).log_z_ == ref.log_z_
    x32 = x.astype(np.float32)
    a = trellis.TrellisHierarchical().fit(x32)
    b = trellis.TrellisHierarchical().fit(x32.astype(np.float64))
    assert a.log_z_ == b.log_z_
    assert trellis.TrellisFlat().fit(np.asfortranarray(x32)).log_z_ == trellis.TrellisFlat().fit(x32).log_z_


def test_n_jobs_one_equals_default():
    x = points(11, seed=11)
    a = trellis.TrellisHierarchical().fit(x)
    b = trellis.TrellisHierarchical(n_jobs=1).fit(x)
    assert a.tree_ == b.tree_ and a.log_z_ == pytest.approx(b.log_z_, rel=1e-13)
    fa, fb = trellis.TrellisFlat().fit(x), trellis.TrellisFlat(n_jobs=1).fit(x)
    assert fa.log_z_ == pytest.approx(fb.log_z_, rel=1e-13)


BAD = {
    "method": dict(method="ward"),
    "method-none": dict(method=None),
    "model": dict(model="cc"),
    "similarity": dict(similarity="euclidean"),
    "beta": dict(beta=float("nan")),
    "beta-string": dict(beta="high"),
    "n_clusters-zero": dict(n_clusters=0),
    "n_clusters-too-many": dict(n_clusters=11),
    "n_clusters-float": dict(n_clusters=2.5),
    "n_jobs-zero": dict(n_jobs=0),
    "n_jobs-float": dict(n_jobs=2.0),
    "seed": dict(method="approx", seed=-1),
    "gamma": dict(similarity="rbf", gamma=-1.0),
    "max_exact_seconds-zero": dict(max_exact_seconds=0),
    "max_exact_seconds-nan": dict(max_exact_seconds=float("nan")),
    "max_exact_seconds-string": dict(max_exact_seconds="1s"),
    "max_memory-zero": dict(max_memory=0),
    "max_memory-negative": dict(max_memory=-1.0, method="greedy"),
    "model-linkage": dict(model="linkage-average"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_parameters_raise_at_fit(case):
    est = trellis.TrellisHierarchical(**BAD[case])  # the constructor only stores
    with pytest.raises(trellis.InputError):
        est.fit(points(10))


@pytest.mark.parametrize(
    "params",
    [
        dict(model="hcc"),
        dict(similarity="jaccard"),
        dict(beta=-1.0),
        dict(beta=-1.0, method="approx"),
        dict(beta=float("inf"), method="approx"),
        dict(n_jobs=-7),
        dict(method="greedy"),
        dict(method="approx", seed=1.5),
        dict(max_exact_seconds=-2.0),
    ],
)
def test_flat_bad_parameters(params):
    with pytest.raises(trellis.InputError):
        trellis.TrellisFlat(**params).fit(points(6))


@pytest.mark.parametrize("cls", ["TrellisHierarchical", "TrellisFlat"])
def test_bad_data(cls):
    est = getattr(trellis, cls)
    with pytest.raises(trellis.InputError):
        est(similarity="precomputed").fit(np.ones((3, 4)))
    with pytest.raises(trellis.InputError):
        est(similarity="precomputed").fit(np.array([[0, 1.0], [2.0, 0]]))
    with pytest.raises(trellis.InputError):
        est(similarity="precomputed", method="approx").fit(np.array([[0, 1.0], [2.0, 0]]))
    with pytest.raises(ValueError):  # scikit-learn's message when it is installed
        est().fit(np.array([[1.0, np.nan], [0.0, 1.0]]))
    with pytest.raises(trellis.InputError):  # a row of zeros has no cosine
        est(similarity="cosine").fit(np.array([[1.0, 2.0], [0.0, 0.0], [2.0, 1.0]]))
    with pytest.raises(trellis.TooLargeError):  # the exact method, asked for, refuses
        est(method="exact").fit(points(31))


def test_get_set_params_without_sklearn_conventions():
    est = trellis.TrellisHierarchical(method="beam", n_clusters=3)
    params = est.get_params()
    assert params == {
        "model": "hcc",
        "method": "beam",
        "beta": 1.0,
        "similarity": "rbf",
        "center": True,
        "n_clusters": 3,
        "gamma": None,
        "max_exact_seconds": 5.0,
        "max_memory": None,
        "seed": 0,
        "n_jobs": None,
        "summary": "map",
    }
    assert est.set_params(beta=2.0) is est and est.beta == 2.0
    with pytest.raises(ValueError):
        est.set_params(bogus=1)
    again = type(est)(**est.get_params())
    assert again.get_params() == est.get_params()
    assert trellis.TrellisFlat().get_params() == {
        "model": "cc",
        "method": "auto",
        "beta": 1.0,
        "similarity": "rbf",
        "center": True,
        "gamma": None,
        "max_exact_seconds": 5.0,
        "max_memory": None,
        "seed": 0,
        "n_jobs": None,
    }


def test_sklearn_clone_round_trip():
    base = pytest.importorskip("sklearn.base")
    for est in (
        trellis.TrellisHierarchical(method="approx", beta=0.5, n_clusters=4, seed=3, n_jobs=1),
        trellis.TrellisFlat(beta=2.0, similarity="rbf", gamma=0.1),
    ):
        assert isinstance(est, base.BaseEstimator) and isinstance(est, base.ClusterMixin)
        c = base.clone(est)
        assert c is not est and type(c) is type(est)
        assert c.get_params() == est.get_params()
        x = points(10, seed=12)
        fitted = est.fit(x)
        c2 = base.clone(fitted)
        assert not hasattr(c2, "labels_")
        np.testing.assert_array_equal(c2.fit(x).labels_, fitted.labels_)
        assert base.is_clusterer(est) if hasattr(base, "is_clusterer") else True
    repr(trellis.TrellisHierarchical(n_clusters=2))


def test_sklearn_pipeline_and_grid():
    pytest.importorskip("sklearn")
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    x = points(10, seed=13)
    pipe = make_pipeline(StandardScaler(), trellis.TrellisHierarchical(n_clusters=3))
    labels = pipe.fit_predict(x)
    expected = trellis.TrellisHierarchical(n_clusters=3).fit_predict(StandardScaler().fit_transform(x))
    np.testing.assert_array_equal(labels, expected)


def test_without_sklearn():
    """With scikit-learn not importable, the estimators still work and keep
    its get_params / set_params / fit_predict conventions."""
    import subprocess
    import sys

    code = """
import sys
sys.modules["sklearn"] = None  # import sklearn now fails
import numpy as np, trellis
e = trellis.TrellisHierarchical(n_clusters=2, beta=0.5)
assert not any(c.__module__.split(".")[0] == "sklearn" for c in type(e).__mro__)
p = e.get_params()
assert p["n_clusters"] == 2 and p["beta"] == 0.5 and p["method"] == "auto"
assert type(e)(**p).get_params() == p
assert e.set_params(method="greedy") is e and e.method == "greedy"
try:
    e.set_params(bogus=1)
    raise SystemExit("set_params accepted a bad name")
except ValueError:
    pass
x = np.random.default_rng(0).normal(size=(8, 3))
labels = e.fit_predict(x)
assert sorted(set(labels.tolist())) == [0, 1]
f = trellis.TrellisFlat().fit(x)
assert (f.fit_predict(x) == f.labels_).all()
# The package's own data checks.
for bad in (np.array([[1.0, np.nan], [0.0, 1.0]]), np.empty((0, 3)), np.empty((3, 0)), np.ones(4)):
    try:
        trellis.TrellisFlat().fit(bad)
        raise SystemExit(f"accepted {bad!r}")
    except trellis.InputError:
        pass
# Pickling, the exact posterior rebuilt on first access.
import pickle
h = trellis.TrellisHierarchical().fit(x)
back = pickle.loads(pickle.dumps(h))
assert back.tree_ == h.tree_ and (back.labels_ == h.labels_).all()
assert back.posterior_.log_z == h.log_z_
big = trellis.TrellisHierarchical().fit(np.random.default_rng(1).normal(size=(40, 3)))
assert big.method_ == "approx" and big.labels_.shape == (40,)
print("ok", repr(e))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok TrellisHierarchical(")


# -- the partitions that cut a tree, by brute force ---------------------------


def tree_members(children, n):
    """The points of every node: leaves ``0..n-1``, merge ``k`` is ``n + k``."""
    members = {i: (i,) for i in range(n)}
    for k, (a, b) in enumerate(children):
        members[n + k] = tuple(sorted(members[int(a)] + members[int(b)]))
    return members


def all_cuts(children, n):
    """Every partition whose clusters are nodes of the tree, enumerated."""
    members = tree_members(children, n)
    kids = {n + k: (int(a), int(b)) for k, (a, b) in enumerate(children)}

    def cuts(v):
        out = [[members[v]]]
        if v in kids:
            a, b = kids[v]
            out += [ca + cb for ca in cuts(a) for cb in cuts(b)]
        return out

    return cuts(2 * n - 2)


def cc_log_energy(w, partition, beta):
    """Correlation clustering: beta times the weight kept inside the clusters."""
    inside = sum(w[i, j] for c in partition for i, j in itertools.combinations(c, 2))
    return 0.0 if beta == 0 else beta * inside


def labels_of(partition, n):
    labels = np.empty(n, dtype=np.int64)
    for label, c in enumerate(sorted(partition, key=min)):
        labels[list(c)] = label
    return labels


def brute_cut_map(w, children, beta):
    """The labels of the best cut (brute force; the best is asserted unique)."""
    n = w.shape[0]
    scored = sorted(((cc_log_energy(w, p, beta), p) for p in all_cuts(children, n)), key=lambda t: -t[0])
    if len(scored) > 1:
        assert scored[0][0] > scored[1][0] + 1e-9, "a tie: the test needs a unique best cut"
    return labels_of(scored[0][1], n)


def random_children(n, rng):
    """The merges of a random binary tree over ``n`` points."""
    active, rows = list(range(n)), []
    for k in range(n - 1):
        i, j = sorted(rng.choice(len(active), size=2, replace=False))
        rows.append((active[i], active[j]))
        active.pop(j)
        active.pop(i)
        active.append(n + k)
    return np.array(rows, dtype=np.intp).reshape(-1, 2)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("beta", [0.0, 0.7, 3.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tree_cuts_equal_brute_force(n, beta, seed):
    """log Z, the MAP cut, every cluster's marginal, the co-clustering
    probabilities and the number of cuts, against enumerating the cuts."""
    rng = np.random.default_rng(100 * n + seed)
    w = rng.normal(size=(n, n))
    w = (w + w.T) / 2
    np.fill_diagonal(w, 5.0)  # ignored
    children = random_children(n, rng)
    cuts = _TreeCuts(w, children, beta)
    parts = all_cuts(children, n)
    log_e = np.array([cc_log_energy(w, p, beta) for p in parts])
    top = log_e.max()
    log_z = top + math.log(np.exp(log_e - top).sum())
    prob = np.exp(log_e - log_z)
    assert cuts.log_z == pytest.approx(log_z, rel=1e-12, abs=1e-12)
    assert cuts.num_partitions() == len(parts)
    best = int(np.argmax(log_e))
    if beta > 0:
        np.testing.assert_array_equal(cuts.map_labels, labels_of(parts[best], n))
        assert cuts.map_log_energy == pytest.approx(top, rel=1e-12, abs=1e-12)
    else:  # every cut is as likely: the tie keeps the root whole
        np.testing.assert_array_equal(cuts.map_labels, np.zeros(n, dtype=np.int64))
    marginal = {}
    pair = np.zeros((n, n))
    for p, part in zip(prob, parts):
        for c in part:
            marginal[c] = marginal.get(c, 0.0) + p
            pair[np.ix_(c, c)] += p
    got = dict(cuts.cluster_marginals())
    assert set(got) == set(marginal)  # the nodes of the tree, each of positive probability
    for c, p in marginal.items():
        assert got[c] == pytest.approx(p, rel=1e-9, abs=1e-12)
    np.testing.assert_allclose(cuts.pairwise_marginals(), pair, rtol=1e-9, atol=1e-12)
    ps = [p for _, p in cuts.cluster_marginals()]
    assert ps == sorted(ps, reverse=True)


def test_tree_cuts_equal_the_library(run_cli, tmp_path):
    """The cuts' log Z, MAP partition and count equal the library's
    (``trellis flat ... --sparse tree --tree``), on a tree of 60 points."""
    x = points(60, seed=21, d=4)
    w = trellis.similarity(x, "rbf", center=True)
    tree = trellis.astar(w, approx=True, seed=3).tree
    np.save(tmp_path / "w.npy", w)
    for beta in (0.5, 2.0):
        cuts = _TreeCuts(w, tree.to_linkage()[:, :2], beta)
        common = ["--model", "cc", "--weights", tmp_path / "w.npy", "--beta", beta,
                  "--sparse", "tree", "--tree", json.dumps(tree.to_nested()), "--json"]
        got_map = json.loads(run_cli("flat", "map", *common))
        got_z = json.loads(run_cli("flat", "logz", *common))
        assert cuts.log_z == pytest.approx(got_z["log_z"], rel=1e-12)
        assert cuts.map_log_energy == pytest.approx(got_map["log_energy"], rel=1e-12)
        np.testing.assert_array_equal(cuts.map_labels, labels_of(got_map["clusters"], 60))
        assert cuts.num_partitions() == int(got_map["num_partitions_realised"])


# -- method="auto": the planner's choice ---------------------------------------


def test_auto_small_is_exact():
    x = points(11, seed=22)
    w = trellis.similarity(x, "rbf", center=True)
    h = trellis.TrellisHierarchical().fit(x)
    post = trellis.exact_hierarchy(w)
    assert h.method_ == "exact" and h.tree_ == post.map_tree and h.log_z_ == post.log_z
    f = trellis.TrellisFlat().fit(x)
    fpost = trellis.exact_partition(w)
    assert f.method_ == "exact" and f.log_z_ == fpost.log_z
    np.testing.assert_array_equal(f.labels_, fpost.map_labels)


def test_auto_large_is_approximate(run_cli, tmp_path):
    """Beyond the exact trellis (40 points): approximate A* for the tree,
    and the partitions that cut that tree for the flat clustering."""
    x = points(40, seed=23)
    w = trellis.similarity(x, "rbf", center=True)
    tree = trellis.astar(w, approx=True, seed=0).tree
    h = trellis.TrellisHierarchical().fit(x)
    assert h.method_ == "approx" and h.tree_ == tree
    assert not hasattr(h, "log_z_") and not hasattr(h, "posterior_")
    f = trellis.TrellisFlat().fit(x)
    assert f.method_ == "approx" and f.tree_ == tree and not hasattr(f, "posterior_")
    # The same tree, the same MAP cut.
    np.testing.assert_array_equal(f.labels_, h.labels_)
    np.save(tmp_path / "w.npy", w)
    common = ["--model", "cc", "--weights", tmp_path / "w.npy", "--sparse", "tree",
              "--tree", json.dumps(tree.to_nested()), "--json"]
    got = json.loads(run_cli("flat", "map", *common))
    np.testing.assert_array_equal(f.labels_, labels_of(got["clusters"], 40))
    assert f.n_partitions_ == int(got["num_partitions_realised"])
    assert f.log_z_ == pytest.approx(json.loads(run_cli("flat", "logz", *common))["log_z"], rel=1e-12)
    # Another seed is its own reproducible search.
    h7 = trellis.TrellisHierarchical(seed=7).fit(x)
    assert h7.tree_ == trellis.astar(w, approx=True, seed=7).tree
    assert trellis.TrellisHierarchical(seed=7).fit(x).tree_ == h7.tree_


@pytest.mark.parametrize("cls, model", [("TrellisHierarchical", "hcc"), ("TrellisFlat", "cc")])
def test_auto_follows_the_planner(cls, model):
    """``method_`` is the planner's answer for the estimator's budget: a
    time or memory budget the exact computation cannot meet makes it
    approximate; no time budget leaves the memory to decide."""
    est = getattr(trellis, cls)
    x = points(16, seed=24)
    budgets = [
        dict(),
        dict(max_exact_seconds=1e-4),  # below the planner's fixed overhead
        dict(max_memory=1024.0),  # 1 KiB: not the trellis tables
        dict(max_exact_seconds=None),
    ]
    seen = set()
    for budget in budgets:
        fitted = est(**budget).fit(x)
        p = trellis.plan(16, model=model, task="infer", max_memory=budget.get("max_memory"),
                         time_limit=budget.get("max_exact_seconds", 5.0))
        assert fitted.method_ == ("exact" if p["method"] == "exact" else "approx"), budget
        seen.add(fitted.method_)
    assert seen == {"exact", "approx"}
    assert est(max_exact_seconds=1e-4).fit(x).method_ == "approx"
    assert est(max_memory=1024.0).fit(x).method_ == "approx"
    # The explicit methods ignore the budget.
    assert est(method="exact", max_exact_seconds=1e-4).fit(x).method_ == "exact"


def test_full_iris_with_defaults(run_cli, tmp_path):
    datasets = pytest.importorskip("sklearn.datasets")
    X, _ = datasets.load_iris(return_X_y=True)
    w = trellis.similarity(X, "rbf", center=True)
    h = trellis.TrellisHierarchical().fit(X)
    f = trellis.TrellisFlat().fit(X)
    assert h.method_ == f.method_ == "approx"
    assert h.tree_ == f.tree_ == trellis.astar(w, approx=True, seed=0).tree
    assert h.labels_.shape == (150,) and h.children_.shape == (149, 2) and h.distances_.shape == (149,)
    assert h.n_leaves_ == 150 and h.n_features_in_ == f.n_features_in_ == 4
    assert np.all(np.diff(h.distances_) >= 0)
    np.testing.assert_array_equal(h.labels_, f.labels_)
    np.save(tmp_path / "w.npy", w)
    common = ["--model", "cc", "--weights", tmp_path / "w.npy", "--sparse", "tree",
              "--tree", json.dumps(h.tree_.to_nested()), "--json"]
    got = json.loads(run_cli("flat", "map", *common))
    np.testing.assert_array_equal(f.labels_, labels_of(got["clusters"], 150))
    assert f.n_clusters_ == len(got["clusters"]) == len(set(f.labels_.tolist()))
    # The marginals of the family: each point is in exactly one cluster.
    pm = f.pairwise_marginals_
    assert pm.shape == (150, 150) and np.allclose(pm, pm.T) and np.all(np.diag(pm) == 1.0)
    assert pm.min() >= 0.0 and pm.max() <= 1.0 + 1e-12
    cover = np.zeros(150)
    for c, p in f.cluster_marginals_:
        cover[list(c)] += p
    np.testing.assert_allclose(cover, 1.0, rtol=1e-9)
    # The fit_predict of the defaults is labels_.
    np.testing.assert_array_equal(trellis.TrellisHierarchical().fit_predict(X), h.labels_)


def test_n_clusters_none_defaults():
    """Without n_clusters: the hierarchy's labels are the best cut of its
    tree (for every method), the flat ones the MAP partition."""
    x = points(9, seed=25)
    w = trellis.similarity(x, "rbf", center=True)
    for method in METHODS:
        est = trellis.TrellisHierarchical(method=method, beta=2.0).fit(x)
        np.testing.assert_array_equal(est.labels_, brute_cut_map(w, est.children_, 2.0))
        np.testing.assert_array_equal(est.fit_predict(x), est.labels_)
    f = trellis.TrellisFlat().fit(x)
    np.testing.assert_array_equal(f.fit_predict(x), trellis.exact_partition(w).map_labels)
    # The best cut is never better than the best partition.
    h = trellis.TrellisHierarchical().fit(x)
    best = cc_log_energy(w, [np.flatnonzero(f.labels_ == k) for k in range(f.n_clusters_)], 1.0)
    cut = cc_log_energy(w, [np.flatnonzero(h.labels_ == k) for k in range(h.n_clusters_)], 1.0)
    assert cut <= best + 1e-12


def test_flat_approx_marginals_are_the_families():
    """``method="approx"`` on few points: the distribution restricted to
    the cuts of the approximate tree, its marginals by brute force."""
    x = points(8, seed=26)
    w = trellis.similarity(x, "rbf", center=True)
    f = trellis.TrellisFlat(method="approx", beta=1.5).fit(x)
    children = f.tree_.to_linkage()[:, :2].astype(int)
    parts = all_cuts(children, 8)
    log_e = np.array([cc_log_energy(w, p, 1.5) for p in parts])
    assert f.log_z_ == pytest.approx(np.log(np.exp(log_e).sum()), rel=1e-12)
    assert f.n_partitions_ == len(parts)
    exact = trellis.TrellisFlat(method="exact", beta=1.5).fit(x)
    assert f.log_z_ <= exact.log_z_  # a subset of the partitions


# -- scikit-learn ---------------------------------------------------------------


@pytest.mark.parametrize(
    "cls, params", [("TrellisHierarchical", ""), ("TrellisHierarchical", 'summary="mcc"'), ("TrellisFlat", "")]
)
def test_check_estimator_with_defaults(cls, params):
    """scikit-learn's own checks, every one run and passed, default
    parameters (and the hierarchy's MCC summary). In a fresh interpreter with
    SCIPY_ARRAY_API=1 (read when SciPy is first imported) so that the array
    API check runs instead of being skipped; check_estimator raises on the
    first failing check."""
    pytest.importorskip("sklearn")
    code = f"""
import json
from sklearn.utils.estimator_checks import check_estimator
import trellis
results = check_estimator(trellis.{cls}({params}))
print(json.dumps([[r["check_name"], r["status"]] for r in results]))
"""
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr[-4000:]
    results = json.loads(out.stdout.strip().splitlines()[-1])
    assert len(results) >= 40
    assert [r for r in results if r[1] != "passed"] == []
    names = {name for name, _ in results}
    for check in ("check_clustering", "check_estimators_pickle", "check_estimator_sparse_array",
                  "check_complex_data", "check_dtype_object", "check_estimators_empty_data_messages",
                  "check_array_api_input", "check_fit2d_1sample"):
        assert check in names


@pytest.mark.parametrize("cls", ["TrellisHierarchical", "TrellisFlat"])
def test_scikit_learn_messages(cls):
    """Sparse, complex, object, empty, 1-D and non-finite input raise what
    scikit-learn's check_array raises, with its message."""
    pytest.importorskip("sklearn")
    sparse = pytest.importorskip("scipy.sparse")
    from sklearn.utils import check_array

    x = points(6, seed=27)
    obj = x.astype(object)
    obj[0, 0] = {"a": 1}
    nan, inf = x.copy(), x.copy()
    nan[1, 1], inf[2, 0] = np.nan, np.inf
    cases = [sparse.csr_matrix(x), sparse.csr_array(x), x + 1j, obj, np.empty((0, 3)), np.empty((6, 0)),
             x[:, 0], nan, inf]
    for bad in cases:
        est = getattr(trellis, cls)()
        with pytest.raises(Exception) as expected:
            check_array(bad, accept_sparse=False, dtype=np.float64, input_name="X", estimator=est)
        with pytest.raises(type(expected.value)) as got:
            est.fit(bad)
        assert str(got.value) == str(expected.value)


def test_attributes_as_agglomerative_clustering():
    """The attributes AgglomerativeClustering has, with its shapes and kinds."""
    cluster = pytest.importorskip("sklearn.cluster")
    x = points(14, seed=28)
    theirs = cluster.AgglomerativeClustering(n_clusters=3, compute_distances=True).fit(x)
    for ours in (trellis.TrellisHierarchical(n_clusters=3).fit(x),
                 trellis.TrellisHierarchical(n_clusters=3, method="approx").fit(x)):
        for name in ("labels_", "children_", "distances_", "n_leaves_", "n_features_in_", "n_clusters_"):
            a, b = getattr(ours, name), getattr(theirs, name)
            if isinstance(b, np.ndarray):
                assert isinstance(a, np.ndarray) and a.shape == b.shape, name
                assert a.dtype.kind == b.dtype.kind, name
            else:
                assert type(a) is type(b) and a == b, name
    flat = trellis.TrellisFlat().fit(x)
    assert flat.labels_.shape == theirs.labels_.shape and flat.labels_.dtype.kind == "i"
    assert flat.n_features_in_ == 3 and isinstance(flat.n_clusters_, int)


def test_tags():
    pytest.importorskip("sklearn")
    from sklearn.utils import get_tags

    for cls in (trellis.TrellisHierarchical, trellis.TrellisFlat):
        tags = get_tags(cls())
        assert tags.estimator_type == "clusterer" and not tags.input_tags.pairwise
        assert not tags.input_tags.sparse and not tags.input_tags.allow_nan
        assert get_tags(cls(similarity="precomputed")).input_tags.pairwise


def _same(a, b):
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize(
    "make",
    [
        lambda: trellis.TrellisHierarchical(),
        lambda: trellis.TrellisHierarchical(method="approx", n_clusters=3),
        lambda: trellis.TrellisHierarchical(method="greedy"),
        lambda: trellis.TrellisFlat(),
        lambda: trellis.TrellisFlat(method="approx"),
    ],
)
def test_pickle_round_trip(make):
    x = points(10, seed=29)
    est = make().fit(x)
    back = pickle.loads(pickle.dumps(est))
    assert type(back) is type(est) and back.get_params() == est.get_params()
    fitted = {k for k in vars(est) if k.endswith("_")}
    assert fitted - {"posterior_"} == {k for k in vars(back) if k.endswith("_")}
    for name in fitted - {"posterior_"}:
        assert _same(getattr(back, name), getattr(est, name)), name
    if "posterior_" in fitted:
        # Not pickled (it lives in the compiled core): rebuilt on first access.
        assert "posterior_" not in est.__getstate__() and "posterior_" not in vars(back)
        post, again = est.posterior_, back.posterior_
        assert again.log_z == pytest.approx(post.log_z, rel=1e-12)
        if isinstance(est, trellis.TrellisHierarchical):
            assert again.map_tree == post.map_tree
        else:
            np.testing.assert_array_equal(again.map_labels, post.map_labels)
        assert "posterior_" in vars(back)
    else:
        assert not hasattr(back, "posterior_")
    # A refit of the unpickled estimator gives the same answer.
    np.testing.assert_array_equal(back.fit(x).labels_, est.labels_)


def test_refit_forgets_the_previous_fit():
    x = points(10, seed=30)
    est = trellis.TrellisHierarchical().fit(x)
    assert est.method_ == "exact" and hasattr(est, "log_z_")
    est.set_params(method="greedy").fit(x)
    assert not hasattr(est, "log_z_") and not hasattr(est, "posterior_")
    f = trellis.TrellisFlat().fit(x)
    f.set_params(method="approx").fit(x)
    assert not hasattr(f, "posterior_") and hasattr(f, "tree_")
    f.set_params(method="exact").fit(x)
    assert not hasattr(f, "tree_") and hasattr(f, "posterior_")


def test_docstring_examples():
    import doctest

    import trellis.sklearn as module

    result = doctest.testmod(module)
    assert result.attempted >= 4 and result.failed == 0
