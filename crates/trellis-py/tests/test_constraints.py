"""Issue 24: exact posteriors conditioned on a person's feedback —
``exact_hierarchy(..., triplets=...)`` and ``exact_partition(..., must_link=...,
cannot_link=...)`` — against brute-force enumeration and the CLI."""

import itertools
import json
import math
import re

import numpy as np
import pytest

import trellis
from trellis import InputError
from brute import all_trees, leaves, log_sum_exp, partitions


def weights(n, seed):
    rng = np.random.default_rng(seed)
    w = np.round(rng.uniform(-1, 1, size=(n, n)), 3)
    return (w + w.T) / 2


def clusters(t):
    if isinstance(t, int):
        return []
    return [frozenset(leaves(t))] + clusters(t[0]) + clusters(t[1])


def holds(t, a, b, c):
    return any(a in s and b in s and c not in s for s in clusters(t))


def test_triplets_restrict_the_hierarchy_posterior_as_brute_force():
    n, beta = 6, 1.4
    w = weights(n, 1)
    names = ["a", "b", "c", "d", "e", "f"]
    triplets = [("a", "b", "c"), ("d", "e", "a")]
    as_index = [(0, 1, 2), (3, 4, 0)]
    post = trellis.exact_hierarchy(w, beta=beta, names=names, triplets=triplets)
    same = trellis.exact_hierarchy(w, beta=beta, triplets=as_index)
    allowed = [t for t in all_trees(n) if all(holds(t, *x) for x in as_index)]
    assert 0 < len(allowed) < len(all_trees(n)) / 4
    cost = {json.dumps(t): trellis.score(t, w, beta=beta) for t in allowed}
    log_z = log_sum_exp([-beta * c for c in cost.values()])
    assert post.log_z == pytest.approx(log_z, rel=1e-12, abs=1e-12)
    assert same.log_z == post.log_z
    assert post.map_cost == pytest.approx(min(cost.values()), abs=1e-12)
    map_nested = post.map_tree.to_nested()
    assert all(holds(map_nested, *x) for x in as_index)
    # Every tree's probability: its Gibbs weight among the allowed, 0 outside.
    for t in all_trees(n)[:200]:
        p = post.subtree_probability(t)
        key = json.dumps(t)
        expected = math.exp(-beta * cost[key] - log_z) if key in cost else 0.0
        assert p == pytest.approx(expected, abs=1e-12)
    # A cluster that breaks a triplet has marginal 0; one that the triplets
    # force has marginal 1 (here {a, b} meets below c: some cluster holds
    # a and b without c, whose marginals sum with the others').
    assert post.marginal(["a", "c"]) == 0.0
    for members, p in post.cluster_marginals(min_p=0.0):
        brute = sum(
            math.exp(-beta * cost[json.dumps(t)] - log_z)
            for t in allowed
            if frozenset(members) in clusters(t)
        )
        assert p == pytest.approx(brute, abs=1e-12)
    for tree in post.sample(300, seed=2):
        assert all(holds(tree.to_nested(), *x) for x in as_index)


def test_triplets_equal_the_cli(tmp_path, run_cli):
    n = 7
    w = weights(n, 3)
    path = tmp_path / "w.csv"
    np.savetxt(path, w, delimiter=",")
    (tmp_path / "t.txt").write_text("0 1 2\n5 6 0\n")
    out = json.loads(run_cli("logz", "--model", "hcc", "--weights", path, "--beta", 2,
                             "--triplets", tmp_path / "t.txt", "--json"))
    post = trellis.exact_hierarchy(np.loadtxt(path, delimiter=","), beta=2.0, triplets=[(0, 1, 2), (5, 6, 0)])
    # `logz` runs the one-pass log Z at the greedy tree's scale, the posterior
    # the two passes at the MAP keys' scale (both on the blocked kernel):
    # equal up to the rounding of the two scales.
    assert post.log_z == pytest.approx(out["log_z"], rel=1e-14, abs=1e-14)
    out = json.loads(run_cli("map", "--model", "hcc", "--weights", path,
                             "--triplets", tmp_path / "t.txt", "--json"))
    assert post.map_tree.to_nested() == trellis.Tree.from_nested(out["tree"]).to_nested()


@pytest.mark.parametrize("must, cannot", [
    ([(0, 1)], []),
    ([], [(0, 1), (2, 3)]),
    ([(0, 2), (2, 4)], [(1, 4)]),
])
def test_must_and_cannot_links_restrict_the_partition_posterior(must, cannot):
    n, beta = 6, 1.3
    w = weights(n, 4) + 0.2
    post = trellis.exact_partition(w, beta=beta, must_link=must, cannot_link=cannot)

    def together(p, i, j):
        return any(i in c and j in c for c in p)

    allowed = [
        p for p in partitions(list(range(n)))
        if all(together(p, i, j) for i, j in must) and not any(together(p, i, j) for i, j in cannot)
    ]
    energy = [beta * sum(w[i, j] for c in p for i, j in itertools.combinations(c, 2)) for p in allowed]
    log_z = log_sum_exp(energy)
    assert post.log_z == pytest.approx(log_z, rel=1e-12, abs=1e-12)
    assert post.map_log_energy == pytest.approx(max(energy), abs=1e-12)
    pm = post.pairwise_marginals()
    for i, j in itertools.combinations(range(n), 2):
        brute = sum(math.exp(e - log_z) for p, e in zip(allowed, energy) if together(p, i, j))
        assert pm[i, j] == pytest.approx(brute, abs=1e-12)
    for labels in post.sample(200, seed=1):
        assert all(labels[i] == labels[j] for i, j in must)
        assert all(labels[i] != labels[j] for i, j in cannot)


def test_names_in_pairs():
    w = weights(4, 5)
    names = ["w", "x", "y", "z"]
    a = trellis.exact_partition(w, names=names, must_link=[("w", "z")], cannot_link=[("x", "y")])
    b = trellis.exact_partition(w, must_link=[(0, 3)], cannot_link=[(1, 2)])
    assert a.log_z == b.log_z


@pytest.mark.parametrize("kwargs, message", [
    (dict(triplets=[(0, 1, 2), (0, 2, 1)]), "cannot all hold in one tree"),
    (dict(triplets=[("a", "b", "c"), ("a", "c", "b")], names=list("abcde")), "({a, b}, c)"),
    (dict(triplets=[(0, 1, 9)]), "point 9 is out of range for 5 points"),
    (dict(triplets=[(0, 1)]), "triplets[0] must be 3 points"),
    (dict(triplets=[(0, 0, 1)]), "three different points"),
    (dict(triplets=[("a", "b", "q")], names=list("abcde")), "'q' is not a point name"),
    (dict(triplets=[("a", "b", "c")]), "names need names="),
    (dict(triplets=[(0, 1.5, 2)]), "point indices or names"),
    (dict(triplets="012"), "not a string"),
])
def test_bad_triplets_are_refused(kwargs, message):
    with pytest.raises(InputError, match=re.escape(message)):
        trellis.exact_hierarchy(weights(5, 6), **kwargs)


@pytest.mark.parametrize("kwargs, message", [
    (dict(must_link=[(0, 1), (1, 2)], cannot_link=[(0, 2)]), "cannot-link (0, 2) but must-link joins them (0 - 1 - 2)"),
    (dict(must_link=[(0, 7)]), "point 7 is out of range"),
    (dict(cannot_link=[(2, 2)]), "names one point twice"),
    (dict(must_link=[(0, 1, 2)]), "must_link[0] must be 2 points"),
])
def test_bad_pairs_are_refused(kwargs, message):
    with pytest.raises(InputError, match=re.escape(message)):
        trellis.exact_partition(weights(5, 7), **kwargs)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_astar_with_triplets_finds_the_best_tree_that_satisfies_them(seed):
    n = 6
    w = weights(n, seed)
    as_index = [(0, 1, 2), (3, 4, 0)]
    allowed = [t for t in all_trees(n) if all(holds(t, *x) for x in as_index)]
    best = min(trellis.score(t, w) for t in allowed)
    exact = trellis.astar(w, triplets=as_index)
    assert exact.exact
    assert exact.cost == pytest.approx(best, abs=1e-9)
    assert all(holds(exact.tree.to_nested(), *x) for x in as_index)
    names = ["a", "b", "c", "d", "e", "f"]
    approx = trellis.astar(w, approx=True, names=names, triplets=[("a", "b", "c"), ("d", "e", "a")])
    assert not approx.exact
    assert approx.cost >= best - 1e-9
    # Leaves by index, whatever the names.
    assert all(holds(approx.tree.to_nested(), *x) for x in as_index)
    with pytest.raises(InputError, match="triplets"):
        trellis.astar(w, triplets=[(0, 1, 2), (0, 2, 1)])
