"""Issue 26: the exact posterior summaries — ``HierarchyPosterior.mcc_tree()``,
``HierarchyPosterior.consensus_tree(threshold)`` and
``PartitionPosterior.binder_partition(cost_split, cost_join)`` — against
brute-force enumeration of every tree and partition, and against the CLI."""

import json
import math
import pickle

import numpy as np
import pytest

import trellis
from trellis import InputError
from brute import all_trees, leaves, partitions


def weights(n, seed):
    rng = np.random.default_rng(seed)
    w = np.round(rng.uniform(-1, 1, size=(n, n)), 3)
    w = (w + w.T) / 2
    np.fill_diagonal(w, 0.0)
    return w


def splits(t):
    if isinstance(t, int):
        return []
    return [(leaves(t[0]), leaves(t[1]))] + splits(t[0]) + splits(t[1])


def hcc_cost(w, left, right):
    """Hierarchical correlation clustering's cost of a split, from the raw matrix."""
    cross = sum(max(w[i, j], 0.0) for i in left for j in right)
    inside = sum(max(-w[i, j], 0.0) for part in (left, right) for i in part for j in part if i < j)
    return cross + inside


def brute_marginals(w, beta):
    """Every non-trivial cluster's marginal, by enumerating every tree."""
    n = len(w)
    trees = all_trees(n)
    log_phi = [-beta * sum(hcc_cost(w, l, r) for l, r in splits(t)) for t in trees]
    top = max(log_phi)
    z = sum(math.exp(x - top) for x in log_phi)
    marginal = {}
    for t, x in zip(trees, log_phi):
        for l, r in splits(t):
            c = tuple(sorted(l | r))
            if len(c) < n:
                marginal[c] = marginal.get(c, 0.0) + math.exp(x - top) / z
    return trees, marginal


def credibility(t, n, marginal):
    return sum(math.log(marginal[tuple(sorted(l | r))]) for l, r in splits(t) if len(l | r) < n)


@pytest.mark.parametrize("beta", [0.5, 2.0, 6.0])
def test_mcc_tree_matches_brute_force(beta):
    n = 6
    w = weights(n, 26)
    trees, marginal = brute_marginals(w, beta)
    best = max(credibility(t, n, marginal) for t in trees)
    post = trellis.exact_hierarchy(w, beta=beta)
    t = post.mcc_tree()
    assert isinstance(t, trellis.Tree) and t.is_binary
    assert t.log_credibility == pytest.approx(best, abs=1e-9)
    assert credibility(t.to_nested(), n, marginal) == pytest.approx(best, abs=1e-9)
    assert len(t.support) == n - 2
    for c, p in t.support.items():
        assert p == pytest.approx(marginal[c], abs=1e-9)
    # Newick carries the support values as labels and reads back as the same tree.
    text = t.to_newick()
    assert trellis.Tree.from_newick(text) == t
    for p in t.support.values():
        assert repr(p) in text
    # A binary MCC tree has heights and a linkage matrix.
    assert t.to_linkage().shape == (n - 1, 4)
    assert pickle.loads(pickle.dumps(t)).support == t.support


@pytest.mark.parametrize("beta", [0.5, 2.0, 6.0])
@pytest.mark.parametrize("threshold", [0.5, 0.8])
def test_consensus_tree_matches_brute_force(beta, threshold):
    n = 6
    w = weights(n, 27)
    _, marginal = brute_marginals(w, beta)
    want = sorted(c for c, p in marginal.items() if (p > threshold if threshold == 0.5 else p >= threshold))
    post = trellis.exact_hierarchy(w, beta=beta)
    t = post.consensus_tree(threshold)
    assert t.log_credibility is None
    assert sorted(t.support) == want
    for c, p in t.support.items():
        assert p == pytest.approx(marginal[c], abs=1e-9)
    assert sorted(c for c in t.clusters() if len(c) < n) == want
    assert t.is_binary == (len(want) == n - 2)


def test_a_multifurcating_consensus_tree():
    w = weights(7, 28)
    post = trellis.exact_hierarchy(w, beta=0.5, names=list("abcdefg"))
    t = post.consensus_tree(0.5)
    assert not t.is_binary
    def widest(x):
        return 0 if isinstance(x, int) else max([len(x)] + [widest(c) for c in x])

    assert widest(t.to_nested()) > 2
    assert t.heights is None
    with pytest.raises(InputError, match="multifurcating"):
        t.to_linkage()
    with pytest.raises(InputError, match="branch lengths"):
        t.to_newick(lengths=True)
    text = t.to_newick()
    assert text.startswith("[&R] (") and ":" not in text
    with pytest.raises(InputError, match="multifurcating"):
        post.subtree_probability(t)
    assert t == pickle.loads(pickle.dumps(t))
    assert hash(t) == hash(pickle.loads(pickle.dumps(t)))
    assert t != post.map_tree
    assert len(t) == 7


@pytest.mark.parametrize("bad", [0.49, 1.01, float("nan"), -1, "0.7", True])
def test_bad_thresholds_are_refused(bad):
    post = trellis.exact_hierarchy(weights(5, 29))
    with pytest.raises(InputError):
        post.consensus_tree(bad)


@pytest.mark.parametrize("beta", [0.5, 3.0])
@pytest.mark.parametrize("costs", [(1.0, 1.0), (2.0, 0.5), (0.3, 1.7)])
def test_binder_partition_matches_brute_force(beta, costs):
    n = 6
    a, b = costs
    w = weights(n, 30)
    parts = list(partitions(list(range(n))))
    log_e = [beta * sum(w[i, j] for c in p for i in c for j in c if i < j) for p in parts]
    top = max(log_e)
    z = sum(math.exp(x - top) for x in log_e)
    pair = np.zeros((n, n))
    for p, x in zip(parts, log_e):
        for c in p:
            for i in c:
                for j in c:
                    if i < j:
                        pair[i, j] += math.exp(x - top) / z

    def loss(labels):
        return sum(
            b * (1 - pair[i, j]) if labels[i] == labels[j] else a * pair[i, j]
            for i in range(n)
            for j in range(i + 1, n)
        )

    def labels_of(p):
        out = [0] * n
        for k, c in enumerate(p):
            for i in c:
                out[i] = k
        return out

    best = min(loss(labels_of(p)) for p in parts)
    post = trellis.exact_partition(w, beta=beta)
    labels, expected = post.binder_partition(cost_split=a, cost_join=b)
    assert labels.dtype == np.int64 and labels.shape == (n,)
    assert expected == pytest.approx(best, abs=1e-9)
    assert loss(list(labels)) == pytest.approx(best, abs=1e-9)


@pytest.mark.parametrize("kwargs", [{"cost_split": 0}, {"cost_join": -1.0}, {"cost_split": float("inf")}, {"cost_join": "1"}])
def test_bad_binder_costs_are_refused(kwargs):
    post = trellis.exact_partition(weights(4, 31))
    with pytest.raises(InputError):
        post.binder_partition(**kwargs)


def test_summaries_equal_the_cli(tmp_path, run_cli):
    n = 7
    w = weights(n, 32)
    path = tmp_path / "w.csv"
    np.savetxt(path, w, delimiter=",")
    w = np.loadtxt(path, delimiter=",")
    post = trellis.exact_hierarchy(w, beta=2.0)
    out = json.loads(run_cli("summary", "--model", "hcc", "--weights", path, "--beta", 2, "--kind", "mcc", "--json"))
    t = post.mcc_tree()
    assert t.to_nested() == out["tree"]
    assert t.log_credibility == pytest.approx(out["log_credibility"], rel=1e-12)
    assert {tuple(c["members"]): c["p"] for c in out["clusters"]} == pytest.approx(t.support, rel=1e-12)
    out = json.loads(run_cli("summary", "--model", "hcc", "--weights", path, "--beta", 2, "--kind", "consensus", "--json"))
    c = post.consensus_tree()
    assert c.to_nested() == out["tree"]
    flat = trellis.exact_partition(w, beta=2.0)
    labels, expected = flat.binder_partition(cost_split=2.0)
    out = json.loads(
        run_cli("flat", "summary", "--model", "cc", "--weights", path, "--beta", 2, "--cost-split", 2, "--json")
    )
    assert expected == pytest.approx(out["expected_loss"], rel=1e-12)
    clusters = [[i for i in range(n) if labels[i] == k] for k in range(labels.max() + 1)]
    assert clusters == out["clusters"]


# -- TrellisHierarchical(summary=...) -----------------------------------------


def tree_cost(t, w):
    return sum(hcc_cost(w, l, r) for l, r in splits(t))


@pytest.mark.parametrize("n, beta, seed", [(5, 2.0, 40), (6, 0.5, 41), (7, 4.0, 42)])
def test_sklearn_mcc_tree_matches_brute_force(n, beta, seed):
    """TrellisHierarchical(summary="mcc") reports the MCC tree: the most
    credible of all (2n-3)!! trees by the brute-force marginals, with its
    linkage, children, cost and labels; summary="map" keeps the MAP tree."""
    w = weights(n, seed)
    trees, marginal = brute_marginals(w, beta)
    scored = sorted(((credibility(t, n, marginal), t) for t in trees), key=lambda x: -x[0])
    best = scored[0][0]
    est = trellis.TrellisHierarchical(method="exact", summary="mcc", similarity="precomputed", beta=beta)
    assert est.fit(w) is est
    assert est.summary_ == "mcc" and est.method_ == "exact"
    nested = est.tree_.to_nested()
    assert credibility(nested, n, marginal) == pytest.approx(best, abs=1e-9)
    if scored[1][0] < best - 1e-9:  # a unique optimum: the very tree
        assert leaves_sets(nested) == leaves_sets(scored[0][1])
    assert est.tree_.log_credibility == pytest.approx(best, abs=1e-9)
    for c, p in est.tree_.support.items():
        assert p == pytest.approx(marginal[c], abs=1e-9)
    np.testing.assert_array_equal(est.linkage_matrix_, est.tree_.to_linkage())
    np.testing.assert_array_equal(est.children_, est.linkage_matrix_[:, :2])
    np.testing.assert_array_equal(est.distances_, est.linkage_matrix_[:, 2])
    assert est.cost_ == pytest.approx(tree_cost(nested, w), abs=1e-9)
    # The posterior and its marginals are the exact method's, whatever the summary.
    post = trellis.exact_hierarchy(w, beta=beta)
    assert est.log_z_ == post.log_z
    assert est.cluster_marginals_ == post.cluster_marginals()
    # "auto" asks the planner for the MCC task and runs it exactly (few points).
    auto = trellis.TrellisHierarchical(summary="mcc", similarity="precomputed", beta=beta).fit(w)
    assert auto.method_ == "exact" and auto.tree_ == est.tree_
    # n_clusters=2 cuts the MCC tree at its root.
    two = trellis.TrellisHierarchical(
        method="exact", summary="mcc", similarity="precomputed", beta=beta, n_clusters=2
    ).fit(w)
    groups = {}
    for i, label in enumerate(two.labels_.tolist()):
        groups.setdefault(label, set()).add(i)
    assert sorted(map(sorted, groups.values())) == sorted(map(sorted, [leaves(c) for c in nested]))
    # The MAP summary (the default) reports the MAP tree, no more credible.
    m = trellis.TrellisHierarchical(method="exact", similarity="precomputed", beta=beta).fit(w)
    assert m.summary_ == "map" and m.tree_ == post.map_tree
    assert credibility(m.tree_.to_nested(), n, marginal) <= best + 1e-9


def leaves_sets(t):
    return sorted(sorted(l | r) for l, r in splits(t))


def test_sklearn_summary_is_validated_at_fit():
    """A bad summary, or summary="mcc" with a method that has no posterior,
    raises ValueError (InputError) at fit, not in the constructor."""
    x = np.random.default_rng(5).normal(size=(6, 2))
    for bad in ["median", "MCC", 1, None]:
        est = trellis.TrellisHierarchical(summary=bad)  # stores it only
        with pytest.raises(ValueError, match="summary must be one of 'map', 'mcc'"):
            est.fit(x)
    for method in ["astar", "approx", "greedy", "beam"]:
        with pytest.raises(InputError, match="needs the exact posterior"):
            trellis.TrellisHierarchical(summary="mcc", method=method).fit(x)
        # The MAP summary takes every method.
        assert trellis.TrellisHierarchical(method=method).fit(x).summary_ == "map"


def test_sklearn_mcc_beyond_the_budget_falls_back_with_a_warning():
    x = np.random.default_rng(6).normal(size=(8, 2))
    est = trellis.TrellisHierarchical(summary="mcc", max_exact_seconds=1e-9)
    with pytest.warns(UserWarning, match="not the MCC tree"):
        est.fit(x)
    assert est.method_ == "approx" and est.summary_ == "map"
    assert est.tree_ == trellis.astar(trellis.similarity(x, "rbf", center=True), approx=True, seed=0).tree


def test_plan_counts_the_summaries():
    mcc = trellis.plan(20, task="mcc", n_jobs=2)
    marginals = trellis.plan(20, task="marginals", n_jobs=2)
    consensus = trellis.plan(20, task="consensus", n_jobs=2)
    inside = (3**20 - 2**21 + 1) / 2
    assert mcc["splits"] == marginals["splits"] + inside
    assert mcc["seconds"] > marginals["seconds"] and mcc["memory_bytes"] > marginals["memory_bytes"]
    assert consensus["seconds"] == marginals["seconds"] and consensus["task"] == "consensus"
    assert "maximum-clade-credibility" in mcc["summary"]
    with pytest.raises(InputError, match="hierarchies"):
        trellis.plan(10, model="cc", task="mcc")
