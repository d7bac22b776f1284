"""The scikit-learn style estimators: they give the core functions' answers,
follow scikit-learn's conventions (and pass its ``clone`` round trip when it
is installed), and match SciPy's and scikit-learn's formats."""

from __future__ import annotations

import numpy as np
import pytest

import trellis

METHODS = ["exact", "astar", "approx", "greedy", "beam"]


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
    w = trellis.similarity(x, "cosine", center=True)
    est = trellis.TrellisHierarchical(method=method)
    assert est.fit(x) is est
    expected = {
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
    assert not hasattr(est, "labels_")
    if method == "exact":
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
        assert not hasattr(b, "n_features_in_")
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
    w = trellis.similarity(x, center=True)
    est = trellis.TrellisHierarchical(beta=2.5).fit(x)
    assert est.log_z_ == trellis.exact_hierarchy(w, beta=2.5).log_z
    f = trellis.TrellisFlat(beta=0.4).fit(x)
    assert f.log_z_ == trellis.exact_partition(w, beta=0.4).log_z


def test_flat_equals_exact_partition():
    x = points(9, seed=8)
    w = trellis.similarity(x, center=True)
    est = trellis.TrellisFlat()
    assert est.fit(x) is est
    post = trellis.exact_partition(w)
    np.testing.assert_array_equal(est.labels_, post.map_labels)
    np.testing.assert_array_equal(est.pairwise_marginals_, post.pairwise_marginals())
    assert est.log_z_ == post.log_z
    assert est.cluster_marginals_ == post.cluster_marginals()
    np.testing.assert_array_equal(est.fit_predict(x), post.map_labels)
    assert est.n_features_in_ == 3


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
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_parameters_raise_at_fit(case):
    est = trellis.TrellisHierarchical(**BAD[case])  # the constructor only stores
    with pytest.raises(trellis.InputError):
        est.fit(points(10))


@pytest.mark.parametrize(
    "params", [dict(model="hcc"), dict(similarity="jaccard"), dict(beta=-1.0), dict(n_jobs=-7)]
)
def test_flat_bad_parameters(params):
    with pytest.raises(trellis.InputError):
        trellis.TrellisFlat(**params).fit(points(6))


def test_bad_data():
    with pytest.raises(trellis.InputError):
        trellis.TrellisHierarchical(similarity="precomputed").fit(np.ones((3, 4)))
    with pytest.raises(trellis.InputError):
        trellis.TrellisHierarchical(similarity="precomputed").fit(np.array([[0, 1.0], [2.0, 0]]))
    with pytest.raises(trellis.InputError):
        trellis.TrellisHierarchical().fit(np.array([[1.0, np.nan], [0.0, 1.0]]))
    with pytest.raises(trellis.TooLargeError):
        trellis.TrellisHierarchical().fit(points(31))
    with pytest.raises(trellis.InputError):
        trellis.TrellisHierarchical().fit_predict(points(5))  # no n_clusters


def test_get_set_params_without_sklearn_conventions():
    est = trellis.TrellisHierarchical(method="beam", n_clusters=3)
    params = est.get_params()
    assert params == {
        "model": "hcc",
        "method": "beam",
        "beta": 1.0,
        "similarity": "cosine",
        "center": True,
        "n_clusters": 3,
        "gamma": None,
        "seed": 0,
        "n_jobs": None,
    }
    assert est.set_params(beta=2.0) is est and est.beta == 2.0
    with pytest.raises(ValueError):
        est.set_params(bogus=1)
    again = type(est)(**est.get_params())
    assert again.get_params() == est.get_params()
    assert trellis.TrellisFlat().get_params() == {
        "model": "cc",
        "beta": 1.0,
        "similarity": "cosine",
        "center": True,
        "gamma": None,
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
assert p["n_clusters"] == 2 and p["beta"] == 0.5 and p["method"] == "exact"
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
print("ok", repr(e))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok TrellisHierarchical(")
