"""Issue 21: the linkage potentials of the trellis paper (``model=
"linkage-average" | "linkage-complete" | "linkage-single"``) from Python,
over ``distances=`` or ``points=`` (Euclidean), against an enumeration of
every tree written here from the definitions."""

from __future__ import annotations

import math

import numpy as np
import pytest

import trellis
from test_core import _as_tuple, binary_trees, internal_clusters, leaves, logsumexp

KINDS = ["linkage-average", "linkage-complete", "linkage-single"]


def linkage_cost(t, d, kind):
    """The summed linkage distances of the merges of ``t``."""
    if isinstance(t, int):
        return 0.0
    cross = [d[i, j] for i in leaves(t[0]) for j in leaves(t[1])]
    link = {"linkage-average": np.mean, "linkage-complete": max, "linkage-single": min}[kind](cross)
    return float(link) + linkage_cost(t[0], d, kind) + linkage_cost(t[1], d, kind)


def euclidean(x):
    return np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(-1))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [3, 5, 6])
@pytest.mark.parametrize("beta", [0.0, 0.8, 4.0])
def test_linkage_posterior_equals_brute_force(kind, n, beta):
    x = np.random.default_rng(n).normal(size=(n, 2))
    d = euclidean(x)
    trees = list(binary_trees(tuple(range(n))))
    costs = [linkage_cost(t, d, kind) for t in trees]
    log_z = logsumexp(-beta * c for c in costs)
    for post in (
        trellis.exact_hierarchy(distances=d, model=kind, beta=beta),
        trellis.exact_hierarchy(points=x, model=kind, beta=beta),
    ):
        assert post.log_z == pytest.approx(log_z, rel=1e-10, abs=1e-10)
        map_cost = linkage_cost(_as_tuple(post.map_tree.to_nested()), d, kind)
        assert post.map_cost == pytest.approx(map_cost, rel=1e-10)
        if beta > 0:  # at beta = 0 every tree is a MAP tree
            assert post.map_cost == pytest.approx(min(costs), rel=1e-10)
        probs = [math.exp(-beta * c - log_z) for c in costs]
        expected = {}
        for t, p in zip(trees, probs):
            for c in internal_clusters(t):
                if 1 < len(c) < n:
                    expected[c] = expected.get(c, 0.0) + p
        got = dict(post.cluster_marginals(min_p=0.0))
        assert set(got) == {c for c, p in expected.items() if p > 0}
        for c, p in expected.items():
            assert got[c] == pytest.approx(p, abs=1e-10)
        for s in post.sample(5, seed=1):
            assert sorted(leaves(_as_tuple(s.to_nested()))) == list(range(n))
    # Exact A*: the brute-force optimum; greedy, beam and approximate A*: valid trees priced right.
    res = trellis.astar(distances=d, model=kind)
    assert res.exact and res.cost == pytest.approx(min(costs), rel=1e-10)
    for t in (
        trellis.greedy(distances=d, model=kind),
        trellis.beam(distances=d, model=kind),
        trellis.astar(points=x, model=kind, approx=True).tree,
    ):
        assert linkage_cost(_as_tuple(t.to_nested()), d, kind) >= min(costs) - 1e-9


def test_single_linkage_exact_tree_costs_the_minimum_spanning_tree():
    x = np.random.default_rng(3).normal(size=(7, 2))
    d = euclidean(x)
    post = trellis.exact_hierarchy(distances=d, model="linkage-single")
    scipy = trellis.linkage(distances=d, method="single")
    assert linkage_cost(_as_tuple(scipy.to_nested()), d, "linkage-single") == pytest.approx(post.map_cost)


def test_linkage_inputs_are_checked():
    x = np.random.default_rng(0).normal(size=(4, 2))
    d = euclidean(x)
    with pytest.raises(trellis.InputError, match="runs on distances"):
        trellis.exact_hierarchy(d, model="linkage-average")
    with pytest.raises(trellis.InputError, match="runs on weights"):
        trellis.exact_hierarchy(distances=d, model="hcc")
    with pytest.raises(trellis.InputError, match="exactly one of"):
        trellis.exact_hierarchy(d, distances=d, model="linkage-average")
    with pytest.raises(trellis.InputError, match="unknown model"):
        trellis.exact_hierarchy(distances=d, model="linkage-median")
    bad = d.copy()
    bad[0, 1] = -1.0
    bad[1, 0] = -1.0
    with pytest.raises(trellis.InputError):
        trellis.exact_hierarchy(distances=bad, model="linkage-complete")
