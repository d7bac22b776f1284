"""Tests of the core API against independent computations: brute force over
every tree and partition of a few points, the CLI binary on the same data,
SciPy, and the Newick readers of DendroPy, ete4 and Bio.Phylo.

The CLI comparisons use ``target/release/trellis`` (or ``target/debug``, or
``$TRELLIS_BIN``); they are skipped when no binary has been built
(``cargo build --release -p trellis-cli``).
"""

from __future__ import annotations

import io
import itertools
import json
import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import trellis
from brute import hcc_cost, partitions

REPO = Path(__file__).resolve().parents[3]
SHARED = REPO.parent / "shared" / "data"


# ---------------------------------------------------------------- helpers


def random_weights(n, seed=0, nonneg=False):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, n))
    w = (a + a.T) / 2
    if nonneg:
        w = np.abs(w)
    np.fill_diagonal(w, 0.0)
    return w


def aloi_weights(n, s=0):
    path = SHARED / "aloi" / "subsets" / f"public_aloi_N{n}_s{s}.json"
    if not path.exists():
        pytest.skip(f"shared data not found: {path}")
    return np.array(json.loads(path.read_text())["weights"], dtype=np.float64)


def logsumexp(xs):
    xs = list(xs)
    m = max(xs)
    return m + math.log(sum(math.exp(x - m) for x in xs))


def binary_trees(points):
    """Every rooted binary tree over ``points`` (a tuple) as nested tuples."""
    if len(points) == 1:
        yield points[0]
        return
    first, rest = points[0], points[1:]
    # Each unordered split {L, R} once: L holds the first point.
    for k in range(0, len(rest)):
        for chosen in itertools.combinations(rest, k):
            left = (first,) + chosen
            right = tuple(p for p in rest if p not in chosen)
            for lt in binary_trees(left):
                for rt in binary_trees(right):
                    yield (lt, rt)


def leaves(t):
    return (t,) if isinstance(t, int) else leaves(t[0]) + leaves(t[1])


def internal_clusters(t):
    """Leaf sets of the internal nodes of ``t``."""
    if isinstance(t, int):
        return []
    return internal_clusters(t[0]) + internal_clusters(t[1]) + [tuple(sorted(leaves(t)))]


def dasgupta_cost(t, w):
    """Dasgupta's cost: |L ∪ R| times the weight across the split."""
    if isinstance(t, int):
        return 0.0
    L, R = leaves(t[0]), leaves(t[1])
    c = (len(L) + len(R)) * sum(w[i, j] for i in L for j in R)
    return c + dasgupta_cost(t[0], w) + dasgupta_cost(t[1], w)


def cc_log_energy(p, w, beta):
    return beta * sum(w[i, j] for c in p for i, j in itertools.combinations(c, 2))


def cli_binary():
    env = os.environ.get("TRELLIS_BIN")
    if env:
        return env
    for profile in ("release", "debug"):
        b = REPO / "target" / profile / "trellis"
        if b.exists():
            return str(b)
    return shutil.which("trellis")


@pytest.fixture(scope="module")
def cli():
    b = cli_binary()
    if b is None:
        pytest.skip("the trellis CLI is not built: run `cargo build --release -p trellis-cli`")

    def run(*args):
        out = subprocess.run([b, "-q", *map(str, args)], capture_output=True, text=True)
        if out.returncode != 0:
            raise subprocess.CalledProcessError(out.returncode, out.args, out.stdout, out.stderr)
        return out.stdout

    return run


def write_csv(path, w):
    path.write_text("\n".join(",".join(repr(float(x)) for x in row) for row in w) + "\n")
    return path


# ---------------------------------------------------------------- brute force


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("model", ["hcc", "dasgupta"])
@pytest.mark.parametrize("beta", [1.0, 0.37])
def test_exact_hierarchy_brute_force(n, model, beta):
    w = random_weights(n, seed=n, nonneg=(model == "dasgupta"))
    cost = hcc_cost if model == "hcc" else dasgupta_cost
    trees = list(binary_trees(tuple(range(n))))
    costs = [cost(t, w) for t in trees]
    log_z = logsumexp(-beta * c for c in costs)

    post = trellis.exact_hierarchy(w, model=model, beta=beta)
    assert post.n == n
    assert post.num_trees == len(trees)
    assert post.log_z == pytest.approx(log_z, rel=1e-10, abs=1e-10)
    assert post.map_cost == pytest.approx(min(costs), rel=1e-10, abs=1e-12)
    # The MAP tree is one of the cheapest.
    assert cost(_as_tuple(post.map_tree.to_nested()), w) == pytest.approx(min(costs), abs=1e-10)

    # Cluster marginals: the posterior mass of trees containing the cluster.
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
        assert post.marginal(list(c)) == pytest.approx(p, abs=1e-10)
    ps = [p for _, p in post.cluster_marginals(min_p=0.0)]
    assert ps == sorted(ps, reverse=True)
    if n >= 3:
        # A sub-hierarchy's probability: the mass of trees containing it.
        sub = ((0, 1), 2)
        p_sub = sum(p for t, p in zip(trees, probs) if _contains_subtree(t, sub))
        assert post.subtree_probability([[0, 1], 2]) == pytest.approx(p_sub, abs=1e-10)


def _as_tuple(nested):
    return nested if isinstance(nested, int) else (_as_tuple(nested[0]), _as_tuple(nested[1]))


def _canon(t):
    if isinstance(t, int):
        return t
    a, b = _canon(t[0]), _canon(t[1])
    return tuple(sorted((a, b), key=lambda x: min(leaves(x))))


def _contains_subtree(t, sub):
    target = _canon(sub)

    def walk(x):
        if _canon(x) == target:
            return True
        return not isinstance(x, int) and (walk(x[0]) or walk(x[1]))

    return walk(t)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("beta", [1.0, 2.5])
def test_exact_partition_brute_force(n, beta):
    w = random_weights(n, seed=10 + n)
    parts = list(partitions(list(range(n))))
    energies = [cc_log_energy(p, w, beta) for p in parts]
    log_z = logsumexp(energies)

    post = trellis.exact_partition(w, beta=beta)
    assert post.n == n
    assert post.num_partitions == len(parts)
    assert post.log_z == pytest.approx(log_z, rel=1e-10, abs=1e-10)
    assert post.map_log_energy == pytest.approx(max(energies), abs=1e-10)
    labels = post.map_labels
    assert labels.dtype == np.int64 and labels.shape == (n,)
    best = parts[int(np.argmax(energies))]
    assert _partition_of(labels) == {frozenset(c) for c in best}

    probs = [math.exp(e - log_z) for e in energies]
    pair = np.zeros((n, n))
    clusters = {}
    for p, pr in zip(parts, probs):
        for c in p:
            key = tuple(sorted(c))
            clusters[key] = clusters.get(key, 0.0) + pr
            for i in c:
                for j in c:
                    pair[i, j] += pr
    np.testing.assert_allclose(post.pairwise_marginals(), pair, atol=1e-10)
    got = dict(post.cluster_marginals(min_p=0.0))
    assert set(got) == set(clusters)
    for c, p in clusters.items():
        assert got[c] == pytest.approx(p, abs=1e-10)


def _partition_of(labels):
    groups = {}
    for i, label in enumerate(labels):
        groups.setdefault(int(label), set()).add(i)
    return {frozenset(g) for g in groups.values()}


def test_samples_are_seeded_and_valid():
    w = random_weights(6, seed=3)
    post = trellis.exact_hierarchy(w)
    a = post.sample(20, seed=7)
    assert a == post.sample(20, seed=7)
    assert all(t.n == 6 for t in a)
    flat = trellis.exact_partition(w)
    s1, s2 = flat.sample(10, seed=4), flat.sample(10, seed=4)
    assert all((x == y).all() for x, y in zip(s1, s2))
    r1 = trellis.astar(random_weights(12, seed=1), approx=True, seed=5)
    r2 = trellis.astar(random_weights(12, seed=1), approx=True, seed=5)
    assert r1.tree == r2.tree and r1.cost == r2.cost


# ---------------------------------------------------------------- the CLI


@pytest.fixture(scope="module")
def shared_weights(tmp_path_factory):
    """ALOI weights (10 and 12 points) and random weights, as CSV files."""
    d = tmp_path_factory.mktemp("weights")
    out = {}
    for n in (10, 12):
        out[f"aloi{n}"] = (aloi_weights(n), None)
    out["random11"] = (random_weights(11, seed=42), None)
    out["dasgupta10"] = (random_weights(10, seed=5, nonneg=True), None)
    return {k: (w, write_csv(d / f"{k}.csv", w)) for k, (w, _) in out.items()}


@pytest.mark.parametrize("key", ["aloi10", "aloi12", "random11", "dasgupta10"])
@pytest.mark.parametrize("beta", [1.0, 0.5])
def test_exact_hierarchy_equals_cli(cli, shared_weights, key, beta):
    w, path = shared_weights[key]
    model = "dasgupta" if key.startswith("dasgupta") else "hcc"
    common = ["--model", model, "--weights", path, "--beta", beta]
    post = trellis.exact_hierarchy(w, model=model, beta=beta)

    logz = json.loads(cli("logz", *common, "--json"))
    assert post.log_z == pytest.approx(logz["log_z"], rel=1e-12)

    m = json.loads(cli("map", *common, "--json"))
    assert post.map_cost == pytest.approx(m["cost"], rel=1e-12)
    assert post.map_log_potential == pytest.approx(m["log_potential"], rel=1e-12)
    assert post.map_tree == trellis.Tree.from_nested(m["tree"])

    marg = json.loads(cli("marginals", *common, "--json"))
    assert post.log_z == pytest.approx(marg["log_z"], rel=1e-12)
    cli_marg = {tuple(c["members"]): c["p"] for c in marg["clusters"]}
    ours = dict(post.cluster_marginals(min_p=0.0))
    # The CLI also lists the root (p = 1) and possibly the singletons.
    cli_marg = {c: p for c, p in cli_marg.items() if 1 < len(c) < post.n}
    assert set(ours) == set(cli_marg)
    for c, p in cli_marg.items():
        assert ours[c] == pytest.approx(p, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("key", ["aloi10", "random11"])
def test_exact_partition_equals_cli(cli, shared_weights, key):
    w, path = shared_weights[key]
    common = ["--model", "cc", "--weights", path]
    post = trellis.exact_partition(w)
    logz = json.loads(cli("flat", "logz", *common, "--json"))
    assert post.log_z == pytest.approx(logz["log_z"], rel=1e-12)
    m = json.loads(cli("flat", "map", *common, "--json"))
    assert post.map_log_energy == pytest.approx(m["log_energy"], rel=1e-12)
    assert _partition_of(post.map_labels) == {frozenset(c) for c in m["clusters"]}
    marg = json.loads(cli("flat", "marginals", *common, "--json"))
    np.testing.assert_allclose(post.pairwise_marginals(), np.array(marg["pairwise"]), rtol=1e-9, atol=1e-15)
    ours = dict(post.cluster_marginals(min_p=0.0))
    for c in marg["clusters"]:
        assert ours[tuple(c["members"])] == pytest.approx(c["p"], rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("key", ["aloi10", "aloi12", "random11", "dasgupta10"])
def test_search_equals_cli(cli, shared_weights, key):
    w, path = shared_weights[key]
    model = "dasgupta" if key.startswith("dasgupta") else "hcc"
    common = ["--model", model, "--weights", path]
    cases = {
        "greedy": trellis.greedy(w, model=model),
        "beam": trellis.beam(w, model=model),
        "astar": trellis.astar(w, model=model).tree,
    }
    for command, tree in cases.items():
        out = json.loads(cli(command, *common, "--json"))
        assert tree == trellis.Tree.from_nested(out["tree"]), command
    exact = trellis.astar(w, model=model)
    out = json.loads(cli("astar", *common, "--json"))
    assert exact.cost == pytest.approx(out["cost"], rel=1e-12)
    # Exact A* finds the trellis's MAP cost.
    assert exact.cost == pytest.approx(trellis.exact_hierarchy(w, model=model).map_cost, rel=1e-12)


def test_points_equal_cli(cli, tmp_path):
    rng = np.random.default_rng(8)
    x = rng.normal(size=(11, 4))
    path = write_csv(tmp_path / "points.csv", x)
    for kind in ("cosine", "rbf", "expneg"):
        w = trellis.similarity(x, kind=kind, center=True)
        out = json.loads(cli("logz", "--model", "hcc", "--points", path, "--similarity", kind, "--center", "--json"))
        assert trellis.exact_hierarchy(w).log_z == pytest.approx(out["log_z"], rel=1e-12)
    w = trellis.similarity(x, center=True)
    for command, tree in (("greedy", trellis.greedy(w)), ("beam", trellis.beam(w))):
        out = json.loads(cli(command, "--model", "hcc", "--points", path, "--center", "--json"))
        assert tree == trellis.Tree.from_nested(out["tree"]), command


# ---------------------------------------------------------------- bad input


def _sym(n, seed=0):
    return random_weights(n, seed=seed)


BAD = {
    "non-square": lambda: trellis.exact_hierarchy(np.zeros((3, 4))),
    "1-D": lambda: trellis.exact_hierarchy(np.zeros(4)),
    "empty": lambda: trellis.exact_hierarchy(np.zeros((0, 0))),
    "strings": lambda: trellis.exact_hierarchy([["a", "b"], ["c", "d"]]),
    "complex": lambda: trellis.exact_hierarchy(np.eye(3, dtype=complex)),
    "NaN": lambda: trellis.exact_hierarchy(_with(_sym(4), 0, 1, np.nan)),
    "inf": lambda: trellis.exact_hierarchy(_with(_sym(4), 2, 1, np.inf)),
    "asymmetric": lambda: trellis.exact_hierarchy(_asym(_sym(4))),
    "asymmetric-flat": lambda: trellis.exact_partition(_asym(_sym(4))),
    "negative-dasgupta": lambda: trellis.exact_hierarchy(_sym(4), model="dasgupta"),
    "negative-dasgupta-astar": lambda: trellis.astar(_sym(4), model="dasgupta"),
    "negative-dasgupta-greedy": lambda: trellis.greedy(_sym(4), model="dasgupta"),
    "beta-nan": lambda: trellis.exact_hierarchy(_sym(4), beta=float("nan")),
    "beta-inf": lambda: trellis.exact_hierarchy(_sym(4), beta=float("inf")),
    "beta-negative": lambda: trellis.exact_hierarchy(_sym(4), beta=-1.0),
    "beta-string": lambda: trellis.exact_hierarchy(_sym(4), beta="x"),
    "beta-flat": lambda: trellis.exact_partition(_sym(4), beta=float("nan")),
    "model-name": lambda: trellis.exact_hierarchy(_sym(4), model="hc"),
    "model-none": lambda: trellis.exact_hierarchy(_sym(4), model=None),
    "model-flat": lambda: trellis.exact_partition(_sym(4), model="hcc"),
    "model-greedy": lambda: trellis.greedy(_sym(4), model="ward"),
    "similarity-kind": lambda: trellis.similarity(np.ones((3, 2)), kind="euclid"),
    "similarity-gamma": lambda: trellis.similarity(np.ones((3, 2)), kind="rbf", gamma=-1.0),
    "similarity-gamma-kind": lambda: trellis.similarity(np.ones((3, 2)), kind="dot", gamma=1.0),
    "similarity-zero-cosine": lambda: trellis.similarity(np.zeros((3, 2))),
    "linkage-method": lambda: trellis.linkage(points=np.ones((3, 2)), method="medoid"),
    "linkage-neither": lambda: trellis.linkage(),
    "linkage-both": lambda: trellis.linkage(points=np.ones((3, 2)), distances=np.zeros((3, 3))),
    "linkage-negative": lambda: trellis.linkage(distances=-np.abs(_sym(4))),
    "linkage-asymmetric": lambda: trellis.linkage(distances=np.abs(_asym(_sym(4)))),
    "linkage-nan": lambda: trellis.linkage(distances=_with(np.abs(_sym(4)), 0, 1, np.nan)),
    "linkage-non-square": lambda: trellis.linkage(distances=np.zeros((3, 4))),
    "names-count": lambda: trellis.exact_hierarchy(_sym(4), names=["a", "b"]),
    "names-duplicate": lambda: trellis.exact_hierarchy(_sym(4), names=["a", "a", "b", "c"]),
    "names-empty": lambda: trellis.exact_hierarchy(_sym(3), names=["a", "", "b"]),
    "names-string": lambda: trellis.exact_hierarchy(_sym(4), names="abcd"),
    "n_jobs-zero": lambda: trellis.exact_hierarchy(_sym(4), n_jobs=0),
    "n_jobs-negative": lambda: trellis.exact_hierarchy(_sym(4), n_jobs=-2),
    "n_jobs-huge": lambda: trellis.exact_hierarchy(_sym(4), n_jobs=10**6),
    "n_jobs-float": lambda: trellis.exact_hierarchy(_sym(4), n_jobs=1.5),
    "n_jobs-flat": lambda: trellis.exact_partition(_sym(4), n_jobs=0),
    "n_jobs-astar": lambda: trellis.astar(_sym(4), n_jobs=0),
    "max_memory": lambda: trellis.exact_hierarchy(_sym(4), max_memory=-5),
    "seed-negative": lambda: trellis.astar(_sym(4), approx=True, seed=-1),
    "seed-string": lambda: trellis.astar(_sym(4), approx=True, seed="x"),
    "max_explored": lambda: trellis.astar(_sym(4), approx=True, max_explored=0),
    "time_limit": lambda: trellis.astar(_sym(4), approx=True, time_limit=-1.0),
    "beam-width": lambda: trellis.beam(_sym(4), width=0),
    "beam-width-negative": lambda: trellis.beam(_sym(4), width=-3),
    "newick-syntax": lambda: trellis.Tree.from_newick("((0,1),2"),
    "newick-range": lambda: trellis.Tree.from_newick("((0,1),3);"),
    "nested-duplicate": lambda: trellis.Tree.from_nested([[0, 1], [0, 2]]),
    "linkage-columns": lambda: trellis.Tree.from_linkage(np.zeros((2, 3))),
    "linkage-rows": lambda: trellis.Tree.from_linkage(np.array([[0, 1, 1, 2], [0, 2, 2, 3.0]])),
    "to_linkage-heights": lambda: trellis.Tree.from_nested([[0, 1], 2]).to_linkage(heights="height"),
    "support-count": lambda: trellis.Tree.from_nested([[0, 1], 2]).to_newick(support=[0.5, 0.2, 0.1]),
    "marginal-duplicate": lambda: trellis.exact_hierarchy(_sym(4)).marginal([0, 0]),
    "marginal-range": lambda: trellis.exact_hierarchy(_sym(4)).marginal([7]),
    "marginal-name": lambda: trellis.exact_hierarchy(_sym(4)).marginal(["a"]),
    "min_p-nan": lambda: trellis.exact_hierarchy(_sym(4)).cluster_marginals(min_p=float("nan")),
}


def _with(w, i, j, v):
    w = w.copy()
    w[i, j] = w[j, i] = v
    return w


def _asym(w):
    w = w.copy()
    w[0, 1] += 1.0
    return w


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_raises_input_error(case):
    with pytest.raises(trellis.InputError) as info:
        BAD[case]()
    msg = str(info.value)
    assert msg and "panic" not in msg.lower() and "\n" not in msg.strip()


def test_errors_hierarchy():
    assert issubclass(trellis.TrellisError, ValueError)
    assert issubclass(trellis.InputError, trellis.TrellisError)
    assert issubclass(trellis.TooLargeError, trellis.TrellisError)


@pytest.mark.parametrize(
    "call, says",
    [
        (lambda: trellis.exact_hierarchy(_sym(31)), "at most 30 points"),
        (lambda: trellis.exact_hierarchy(_sym(12), max_memory=1000), re.compile(r"needs [0-9.]+ [KMG]iB")),
        (lambda: trellis.exact_partition(_sym(40)), "at most 30 points"),
        (lambda: trellis.exact_hierarchy(_sym(4)).sample(10**15), "GiB"),
    ],
    ids=["hierarchy-31", "hierarchy-memory", "partition-40", "samples"],
)
def test_too_large(call, says):
    with pytest.raises(trellis.TooLargeError) as info:
        call()
    if isinstance(says, re.Pattern):
        assert says.search(str(info.value)), str(info.value)
    else:
        assert says in str(info.value)


def test_astar_memory_budget():
    # Exact A* runs until its memory budget is spent: a TrellisError (the
    # search's budget), not bad input.
    with pytest.raises(trellis.TrellisError) as info:
        trellis.astar(_sym(12), max_memory=1000)
    assert not isinstance(info.value, trellis.InputError)
    assert "memory budget" in str(info.value)


# Dasgupta's `marginals` holds the tables exact_hierarchy holds (`logz` of hcc
# runs one 8-byte pass, its `marginals` two).
@pytest.mark.parametrize(
    "n, args",
    [(31, ["logz", "--model", "hcc"]), (12, ["marginals", "--model", "dasgupta", "--max-memory", "1e-6"])],
)
def test_too_large_message_as_cli(cli, tmp_path, n, args):
    model = args[2]
    w = np.abs(_sym(n))
    path = write_csv(tmp_path / "w.csv", w)
    with pytest.raises(subprocess.CalledProcessError) as cli_error:
        cli(*args, "--weights", path)
    with pytest.raises(trellis.TooLargeError) as info:
        trellis.exact_hierarchy(w, model=model, max_memory=None if n == 31 else 1e-6 * 2**30)
    # The CLI adds a hint about its own flags after the library's message,
    # and names its flag for the memory limit.
    lib, cli_err = str(info.value), cli_error.value.stderr
    head, sep, tail = lib.partition(", which exceeds the memory limit of ")
    if sep:
        limit, _, rest = tail.partition("; ")
        assert cli_err.startswith(f"error: {head}, which exceeds the --max-memory cap of {limit}; {rest}")
    else:
        assert cli_err.startswith(f"error: {lib}")


# ---------------------------------------------------------------- SciPy


def _all_method_trees():
    w = random_weights(9, seed=21)
    post = trellis.exact_hierarchy(w)
    x = np.random.default_rng(4).normal(size=(9, 3))
    trees = {
        "exact": post.map_tree,
        "sample": post.sample(1, seed=3)[0],
        "astar": trellis.astar(w).tree,
        "approx": trellis.astar(w, approx=True).tree,
        "greedy": trellis.greedy(w),
        "beam": trellis.beam(w),
        "dasgupta": trellis.exact_hierarchy(np.abs(w), model="dasgupta").map_tree,
        "nested": trellis.Tree.from_nested([[[0, 1], [2, 3]], [[4, [5, 6]], [7, 8]]]),
    }
    for m in ("single", "complete", "average", "ward"):
        trees[f"linkage-{m}"] = trellis.linkage(points=x, method=m)
    return trees


@pytest.mark.parametrize("heights", [None, "rank"])
def test_scipy_accepts_linkage(heights):
    hierarchy = pytest.importorskip("scipy.cluster.hierarchy")
    for name, tree in _all_method_trees().items():
        z = tree.to_linkage(heights=heights)
        assert z.shape == (tree.n - 1, 4) and z.dtype == np.float64, name
        assert hierarchy.is_valid_linkage(z, throw=True), name
        assert hierarchy.is_monotonic(z), name
        d = hierarchy.dendrogram(z, no_plot=True)
        assert sorted(d["leaves"]) == list(range(tree.n)), name
        for k in (1, 2, 3):
            labels = hierarchy.fcluster(z, k, criterion="maxclust")
            assert len(labels) == tree.n and 1 <= len(set(labels)) <= k, name
        # The linkage matrix describes the same tree.
        assert trellis.Tree.from_linkage(z) == tree, name
        # The clusters of the linkage matrix are the tree's.
        assert _linkage_clusters(z) == {frozenset(c) for c in tree.clusters()}, name


def _linkage_clusters(z):
    n = len(z) + 1
    members = {i: frozenset([i]) for i in range(n)}
    for k, row in enumerate(z):
        members[n + k] = members[int(row[0])] | members[int(row[1])]
    return {members[n + k] for k in range(n - 1)}


def test_cost_heights_are_cumulative_costs():
    w = random_weights(7, seed=2)
    post = trellis.exact_hierarchy(w)
    t = post.map_tree
    # The root's height is the tree's cost; each height is its subtree's cost.
    assert t.heights[-1] == pytest.approx(post.map_cost)
    nested = _as_tuple(t.to_nested())
    subtree_costs = {}

    def walk(x):
        if isinstance(x, int):
            return
        subtree_costs[tuple(sorted(leaves(x)))] = hcc_cost(x, w)
        walk(x[0])
        walk(x[1])

    walk(nested)
    for c, h in zip(t.clusters(), t.heights):
        assert h == pytest.approx(subtree_costs[tuple(c)], abs=1e-12)


@pytest.mark.parametrize("n", [2, 3, 10, 57, 200])
@pytest.mark.parametrize("method", ["single", "complete", "average", "ward"])
def test_linkage_equals_scipy(n, method):
    hierarchy = pytest.importorskip("scipy.cluster.hierarchy")
    distance = pytest.importorskip("scipy.spatial.distance")
    rng = np.random.default_rng(n * 7 + len(method))
    x = rng.normal(size=(n, 5))
    expected = hierarchy.linkage(x, method=method)
    d = distance.squareform(distance.pdist(x))
    for tree in (trellis.linkage(points=x, method=method), trellis.linkage(distances=d, method=method)):
        z = tree.to_linkage()
        np.testing.assert_allclose(np.sort(z[:, 2]), np.sort(expected[:, 2]), rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(hierarchy.cophenet(z), hierarchy.cophenet(expected), rtol=1e-9, atol=1e-12)
        assert _linkage_clusters(z) == _linkage_clusters(expected)


# ---------------------------------------------------------------- Newick readers


@pytest.fixture(scope="module")
def named_posterior():
    w = random_weights(7, seed=31)
    names = ["alpha", "b 2", "c:3", "d's", "e", "F", "g(h)"]
    return trellis.exact_hierarchy(w, names=names), names


def _expected_newick_facts(post, names):
    """Per internal cluster (as a frozenset of names, the root excluded):
    support, and branch lengths keyed by node (leaf name or cluster)."""
    t = post.map_tree
    clusters = [tuple(c) for c in t.clusters()]
    heights = dict(zip(clusters, t.heights))
    support = {frozenset(names[i] for i in c): post.marginal(list(c)) for c in clusters[:-1]}
    lengths = {}
    for c in clusters:
        # Each child's branch: parent height minus child height.
        for child in _children(t, c, clusters):
            key = names[child[0]] if len(child) == 1 else frozenset(names[i] for i in child)
            lengths[key] = heights[c] - (heights[child] if len(child) > 1 else 0.0)
    return support, lengths


def _children(t, c, clusters):
    """The two children (tuples) of cluster ``c``: the largest proper clusters or leaves inside it."""
    inside = [d for d in clusters if set(d) < set(c)]
    maximal = [d for d in inside if not any(set(d) < set(e) for e in inside)]
    covered = set().union(*map(set, maximal)) if maximal else set()
    return maximal + [(i,) for i in c if i not in covered]


def test_dendropy_reads_newick(named_posterior):
    dendropy = pytest.importorskip("dendropy")
    post, names = named_posterior
    text = post.map_tree.to_newick(support=post)
    tree = dendropy.Tree.get(data=text, schema="newick", preserve_underscores=True, rooting="default-rooted")
    assert tree.is_rooted
    assert sorted(t.label for t in tree.taxon_namespace) == sorted(names)
    support, lengths = _expected_newick_facts(post, names)
    for node in tree.postorder_node_iter():
        key = node.taxon.label if node.is_leaf() else frozenset(l.taxon.label for l in node.leaf_iter())
        if node.parent_node is None:
            continue
        assert node.edge.length == pytest.approx(lengths[key], rel=1e-12, abs=1e-12)
        if not node.is_leaf():
            assert float(node.label) == pytest.approx(support[key], rel=1e-12)


def test_ete4_reads_newick(named_posterior):
    ete4 = pytest.importorskip("ete4")
    post, names = named_posterior
    text = post.map_tree.to_newick(support=post)
    # ete4 reads internal labels as support with parser 0 (the "flexible with support" format);
    # it refuses the rooted marker [&R] (not NHX), so it is left out.
    tree = ete4.Tree(text.removeprefix("[&R] "), parser=0)
    assert sorted(tree.leaf_names()) == sorted(names)
    support, lengths = _expected_newick_facts(post, names)
    for node in tree.traverse("postorder"):
        if node.is_root:
            continue
        key = node.name if node.is_leaf else frozenset(node.leaf_names())
        assert node.dist == pytest.approx(lengths[key], rel=1e-12, abs=1e-12)
        if not node.is_leaf:
            assert node.support == pytest.approx(support[key], rel=1e-12)


def test_biopython_reads_newick(named_posterior):
    phylo = pytest.importorskip("Bio.Phylo")
    post, names = named_posterior
    text = post.map_tree.to_newick(support=post)
    # Bio.Phylo keeps [&R] as a comment: rootedness is the reader's argument.
    tree = phylo.read(io.StringIO(text), "newick")
    assert sorted(t.name for t in tree.get_terminals()) == sorted(names)
    support, lengths = _expected_newick_facts(post, names)
    for clade in tree.find_clades(order="postorder"):
        if clade is tree.root:
            continue
        key = clade.name if clade.is_terminal() else frozenset(t.name for t in clade.get_terminals())
        assert clade.branch_length == pytest.approx(lengths[key], rel=1e-12, abs=1e-12)
        if not clade.is_terminal():
            assert clade.confidence == pytest.approx(support[key], rel=1e-12)


# ---------------------------------------------------------------- Tree round trips


def test_tree_round_trips():
    w = random_weights(8, seed=12)
    names = [f"p{i}" for i in range(8)]
    t = trellis.exact_hierarchy(w, names=names).map_tree
    assert t.n == len(t) == 8 and t.names == names

    # nested
    u = trellis.Tree.from_nested(t.to_nested())
    assert u == t and u.to_nested() == t.to_nested()
    assert hash(u) == hash(t)

    # linkage (heights kept)
    z = t.to_linkage()
    v = trellis.Tree.from_linkage(z, names=names)
    assert v == t and v.names == names
    np.testing.assert_allclose(v.to_linkage(), z)
    np.testing.assert_allclose(sorted(v.heights), sorted(t.heights))

    # Newick with names (give them: they fix which leaf is which point)
    text = t.to_newick()
    assert text.startswith("[&R] ")
    x = trellis.Tree.from_newick(text, names=names)
    assert x == t and x.names == names
    # Without names, word labels become names, the leaves numbered in
    # their sorted order.
    y = trellis.Tree.from_newick(text)
    assert y.names == sorted(names)
    assert {frozenset(y.names[i] for i in c) for c in y.clusters()} == {
        frozenset(names[i] for i in c) for c in t.clusters()
    }
    # Index Newick without lengths.
    plain = trellis.exact_hierarchy(w).map_tree
    assert trellis.Tree.from_newick(plain.to_newick(lengths=False)) == plain


def test_newick_rooted_marker_round_trip():
    t = trellis.Tree.from_nested([[0, 1], [2, 3]])
    assert trellis.Tree.from_newick(t.to_newick()) == t


# ---------------------------------------------------------------- conversions, threads


def test_float32_and_fortran_input():
    w = random_weights(9, seed=13)
    ref = trellis.exact_hierarchy(w)
    f = trellis.exact_hierarchy(np.asfortranarray(w))
    assert f.log_z == ref.log_z and f.map_tree == ref.map_tree
    w32 = w.astype(np.float32)
    a = trellis.exact_hierarchy(w32)
    b = trellis.exact_hierarchy(w32.astype(np.float64))
    assert a.log_z == b.log_z
    assert trellis.exact_hierarchy(np.asfortranarray(w32)).log_z == b.log_z
    assert trellis.exact_partition(np.asfortranarray(w)).log_z == trellis.exact_partition(w).log_z
    # Nested lists and a non-contiguous view.
    assert trellis.exact_hierarchy(w.tolist()).log_z == ref.log_z
    big = np.zeros((18, 18))
    big[::2, ::2] = w
    assert trellis.exact_hierarchy(big[::2, ::2]).log_z == ref.log_z
    x = np.random.default_rng(2).normal(size=(10, 3))
    np.testing.assert_array_equal(trellis.similarity(np.asfortranarray(x)), trellis.similarity(x))
    np.testing.assert_allclose(
        trellis.similarity(x.astype(np.float32)), trellis.similarity(x.astype(np.float32).astype(np.float64))
    )


def test_n_jobs_one_equals_default():
    w = random_weights(11, seed=14)
    a, b = trellis.exact_hierarchy(w), trellis.exact_hierarchy(w, n_jobs=1)
    assert a.log_z == pytest.approx(b.log_z, rel=1e-13)
    assert a.map_tree == b.map_tree and a.map_cost == pytest.approx(b.map_cost, rel=1e-13)
    ma, mb = dict(a.cluster_marginals(min_p=0.0)), dict(b.cluster_marginals(min_p=0.0))
    assert set(ma) == set(mb)
    for c in ma:
        assert ma[c] == pytest.approx(mb[c], rel=1e-9, abs=1e-15)
    assert [t.to_nested() for t in a.sample(5, seed=1)] == [t.to_nested() for t in b.sample(5, seed=1)]
    fa, fb = trellis.exact_partition(w), trellis.exact_partition(w, n_jobs=1)
    assert fa.log_z == pytest.approx(fb.log_z, rel=1e-13)
    np.testing.assert_allclose(fa.pairwise_marginals(), fb.pairwise_marginals(), rtol=1e-9)
    assert trellis.astar(w).tree == trellis.astar(w, n_jobs=1).tree
    assert trellis.astar(w, approx=True, n_jobs=-1).tree == trellis.astar(w, approx=True, n_jobs=1).tree


def test_similarity_kinds():
    x = np.random.default_rng(5).normal(size=(6, 3))
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    cos = unit @ unit.T
    s = trellis.similarity(x)
    off = ~np.eye(6, dtype=bool)
    np.testing.assert_allclose(s[off], cos[off], atol=1e-12)
    sq = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    np.testing.assert_allclose(trellis.similarity(x, "rbf", gamma=0.5)[off], np.exp(-0.5 * sq)[off], atol=1e-12)
    np.testing.assert_allclose(trellis.similarity(x, "dot")[off], (x @ x.T)[off], atol=1e-12)
    np.testing.assert_allclose(trellis.similarity(x, "expneg")[off], np.exp(-np.sqrt(sq))[off], atol=1e-12)
    c = trellis.similarity(x, center=True)
    np.testing.assert_allclose(c[off], cos[off] - cos[off].mean(), atol=1e-12)


def test_stubs_match_runtime():
    """The .pyi stubs describe the installed package (mypy's stubtest)."""
    pytest.importorskip("mypy.stubtest")
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "trellis", "--ignore-missing-stub"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_issue22_subtree_probability_reads_names():
    """Newick labels are the points' names when the posterior has names; a
    named Tree is matched by name; a stranger is an InputError naming it."""
    w = random_weights(5, seed=11)
    names = ["3", "4", "0", "1", "2"]  # digits in another order than the rows
    post = trellis.exact_hierarchy(w, names=names)
    by_index = post.subtree_probability([[0, 2], 1])
    assert post.subtree_probability("((3,0),4);") == pytest.approx(by_index, abs=1e-15)
    assert post.subtree_probability("((0,2),1);") != pytest.approx(by_index, abs=1e-9)
    # The MAP tree written as Newick and read back (in any leaf order) is
    # the MAP tree, whose probability as a subtree is its own.
    text = post.map_tree.to_newick()
    assert post.subtree_probability(text) == pytest.approx(
        post.subtree_probability(post.map_tree), abs=1e-15
    )
    # Tree.from_newick without names reads digits as indices; word labels
    # become its names in sorted order, matched by name here.
    words = trellis.exact_hierarchy(w, names=["e", "d", "c", "b", "a"])
    read = trellis.Tree.from_newick(words.map_tree.to_newick())
    assert read.names != words.map_tree.names
    assert words.subtree_probability(read) == pytest.approx(
        words.subtree_probability(words.map_tree), abs=1e-15
    )
    with pytest.raises(trellis.InputError, match='"9"'):
        post.subtree_probability("((3,9),4);")
    # Without names, labels are indices.
    plain = trellis.exact_hierarchy(w)
    assert plain.subtree_probability("((0,2),1);") == pytest.approx(
        plain.subtree_probability([[0, 2], 1]), abs=1e-15
    )


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_time_limit_is_one_rule_for_astar_and_plan(bad):
    # The library's check (the CLI's --time-limit too): seconds >= 0.
    message = r"time_limit= must be a number of seconds >= 0"
    with pytest.raises(trellis.InputError, match=message):
        trellis.astar(_sym(4), approx=True, time_limit=bad)
    with pytest.raises(trellis.InputError, match=message):
        trellis.plan(5, time_limit=bad)


def test_a_time_limit_beyond_the_clock_is_no_limit():
    assert trellis.astar(_sym(5), time_limit=1e300).exact
    assert trellis.plan(5, time_limit=1e300)["method"] == "exact"
