"""The completeness of the Python API (issue 23): ``trellis.score`` against
the CLI and the exact posterior, Newick round trips, ``InputError`` for every
bad argument of every public function, a ``Sampler`` shared between threads,
the default ``min_p`` and the docstrings."""

from __future__ import annotations

import functools
import inspect
import itertools
import json
import math
import pathlib
import pickle
import re
import tempfile
import threading
import time

import numpy as np
import pytest

import trellis
from trellis import interactive, jets
from brute import hcc_cost
from trellis.interactive import Sampler

# ---------------------------------------------------------------- helpers


def sym(n, seed=0, nonneg=False):
    """Random symmetric weights with a zero diagonal."""
    a = np.random.default_rng(seed).normal(size=(n, n))
    w = (a + a.T) / 2
    if nonneg:
        w = np.abs(w)
    np.fill_diagonal(w, 0.0)
    return w


def points(n, d=3, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d))


def binary_trees(pts):
    """Every rooted binary tree over the tuple ``pts``, as nested lists."""
    if len(pts) == 1:
        yield pts[0]
        return
    first, rest = pts[0], pts[1:]
    for k in range(len(rest)):
        for chosen in itertools.combinations(rest, k):
            left = (first,) + chosen
            right = tuple(p for p in rest if p not in chosen)
            for lt in binary_trees(left):
                for rt in binary_trees(right):
                    yield [lt, rt]


def leaves(t):
    return [t] if isinstance(t, int) else leaves(t[0]) + leaves(t[1])


def average_linkage_cost(t, d):
    """The linkage-average potential's cost: the mean distance across each split."""
    if isinstance(t, int):
        return 0.0
    a, b = leaves(t[0]), leaves(t[1])
    c = sum(d[i, j] for i in a for j in b) / (len(a) * len(b))
    return c + average_linkage_cost(t[0], d) + average_linkage_cost(t[1], d)


def write_matrix(path, m):
    path.write_text("\n".join(",".join(repr(float(x)) for x in row) for row in m) + "\n")
    return path


def write_points(path, names, x):
    rows = ["name," + ",".join(f"x{j}" for j in range(x.shape[1]))]
    rows += [f"{s}," + ",".join(repr(float(v)) for v in row) for s, row in zip(names, x)]
    path.write_text("\n".join(rows) + "\n")
    return path


def one_line(e):
    msg = str(e)
    return bool(msg) and "\n" not in msg.strip()


# ---------------------------------------------------------------- score


def test_score_is_the_brute_force_cost_for_every_tree_form():
    w = sym(5, seed=1)
    for t in list(binary_trees(tuple(range(5))))[::7]:
        cost = hcc_cost(t, w)
        tree = trellis.Tree.from_nested(t)
        assert trellis.score(t, w) == pytest.approx(cost, abs=1e-12)
        assert trellis.score(tree, w) == pytest.approx(cost, abs=1e-12)
        assert trellis.score(tree.to_newick(), w) == pytest.approx(cost, abs=1e-12)
        assert trellis.score(json.dumps(t), w) == pytest.approx(cost, abs=1e-12)
    # Distances and points for the linkage potentials.
    x = points(5, seed=2)
    d = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    t = [[0, [3, 1]], [2, 4]]
    want = average_linkage_cost(t, d)
    assert trellis.score(t, distances=d, model="linkage-average") == pytest.approx(want, rel=1e-12)
    assert trellis.score(t, points=x, model="linkage-average") == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize(
    "model, data",
    [
        ("hcc", "weights"),
        ("dasgupta", "weights"),
        ("linkage-average", "distances"),
        ("linkage-complete", "points"),
        ("linkage-single", "distances"),
    ],
)
@pytest.mark.parametrize("beta", [1.0, 0.3])
def test_score_is_the_posterior_energy(model, data, beta):
    """Over every tree of 5 points: ``log p(H) = -beta * score(H) - log Z``
    against the exact posterior's probability of the whole tree, and these
    probabilities sum to 1."""
    n = 5
    x = points(n, seed=7)
    if data == "weights":
        kw = {"weights": sym(n, seed=3, nonneg=(model == "dasgupta"))}
    elif data == "distances":
        kw = {"distances": np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))}
    else:
        kw = {"points": x}
    post = trellis.exact_hierarchy(model=model, beta=beta, **kw)
    total = 0.0
    for t in binary_trees(tuple(range(n))):
        cost = trellis.score(t, model=model, beta=beta, **kw)
        log_p = -beta * cost - post.log_z
        assert math.log(post.subtree_probability(t)) == pytest.approx(log_p, abs=1e-9)
        total += math.exp(log_p)
    assert total == pytest.approx(1.0, abs=1e-9)
    assert trellis.score(post.map_tree, model=model, **kw) == pytest.approx(post.map_cost, rel=1e-12)


@pytest.mark.parametrize("model", ["hcc", "dasgupta"])
def test_score_equals_cli_on_weights(run_cli, tmp_path, model):
    w = sym(9, seed=4, nonneg=(model == "dasgupta"))
    path = write_matrix(tmp_path / "w.csv", w)
    for k, tree in enumerate(trellis.exact_hierarchy(w, model=model, beta=0.2).sample(4, seed=1)):
        for text in (json.dumps(tree.to_nested()), tree.to_newick()):
            out = json.loads(run_cli("score", "--model", model, "--weights", path, "--beta", 0.5,
                                     "--tree", text, "--json"))
            ours = trellis.score(text, w, model=model, beta=0.5)
            assert ours == pytest.approx(out["cost"], rel=1e-12, abs=1e-12)
            assert -0.5 * ours == pytest.approx(out["log_potential"], rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("model", ["linkage-average", "linkage-complete", "linkage-single"])
def test_score_equals_cli_on_points_and_distances_with_names(run_cli, tmp_path, model):
    x = points(8, seed=5)
    names = ["kiwi", "fig", "apple", "date", "lime", "pear", "plum", "yuzu"]
    pts = write_points(tmp_path / "p.csv", names, x)
    d = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    dist = write_matrix(tmp_path / "d.csv", d)
    tree = trellis.greedy(points=x, model=model, names=names)
    text = tree.to_newick()  # labels are the names
    by_points = json.loads(run_cli("score", "--model", model, "--points", pts, "--tree", text, "--json"))
    ours = trellis.score(text, points=x, model=model, names=names)
    assert ours == pytest.approx(by_points["cost"], rel=1e-12)
    # The same tree by index on the distances file (no names there).
    plain = json.dumps(tree.to_nested())
    by_distances = json.loads(run_cli("score", "--model", model, "--distances", dist, "--tree", plain, "--json"))
    assert trellis.score(plain, distances=d, model=model) == pytest.approx(by_distances["cost"], rel=1e-12)
    assert by_distances["cost"] == pytest.approx(by_points["cost"], rel=1e-12)
    # The named Tree itself, and the same tree with its names in another
    # order (matched by name, not by index).
    assert trellis.score(tree, points=x, model=model, names=names) == pytest.approx(ours, rel=1e-12)
    shuffled = trellis.Tree.from_newick(text)  # names sorted, indices differ
    assert shuffled.names != names
    assert trellis.score(shuffled, points=x, model=model, names=names) == pytest.approx(ours, rel=1e-12)


def test_score_with_similarity_points_equals_cli(run_cli, tmp_path):
    """``score --points`` on hcc runs on the cosine similarity of the points:
    the same as ``trellis.score`` on ``trellis.similarity``."""
    x = points(7, seed=6)
    names = [f"s{i}" for i in range(7)]
    path = write_points(tmp_path / "p.csv", names, x)
    w = trellis.similarity(x)
    tree = trellis.exact_hierarchy(w, names=names).map_tree
    out = json.loads(run_cli("score", "--model", "hcc", "--points", path, "--tree", tree.to_newick(), "--json"))
    assert trellis.score(tree.to_newick(), w, names=names) == pytest.approx(out["cost"], rel=1e-12)


SCORE_BAD = {
    "missing-point": lambda: trellis.score([[0, 1], 2], sym(4)),
    "repeated-point": lambda: trellis.score([[0, 1], [1, 2]], sym(3)),
    "out-of-range": lambda: trellis.score([[0, 1], 5], sym(3)),
    "not-binary": lambda: trellis.score("(0,1,2);", sym(3)),
    "newick-name-without-names": lambda: trellis.score("((a,b),c);", sym(3)),
    "newick-unknown-name": lambda: trellis.score("((a,b),z);", sym(3), names=["a", "b", "c"]),
    "tree-type": lambda: trellis.score({"a": 1}, sym(3)),
    "tree-float-leaf": lambda: trellis.score([[0, 1.5], 2], sym(3)),
    "tree-bool": lambda: trellis.score(True, sym(3)),
    "tree-none": lambda: trellis.score(None, sym(3)),
    "beta-nan": lambda: trellis.score([[0, 1], 2], sym(3), beta=float("nan")),
    "no-data": lambda: trellis.score([[0, 1], 2]),
    "model-for-distances": lambda: trellis.score([[0, 1], 2], sym(3), model="linkage-average"),
    "named-tree-stranger": lambda: trellis.score(
        trellis.Tree.from_newick("((a,b),q);"), sym(3), names=["a", "b", "c"]
    ),
    "names-count": lambda: trellis.score([[0, 1], 2], sym(3), names=["a", "b"]),
}


@pytest.mark.parametrize("case", sorted(SCORE_BAD))
def test_score_bad_input(case):
    with pytest.raises(trellis.InputError) as info:
        SCORE_BAD[case]()
    assert one_line(info.value)


# ---------------------------------------------------------------- Newick


def test_newick_round_trips_of_unnamed_trees():
    w = sym(7, seed=8)
    post = trellis.exact_hierarchy(w)
    # The example: the MAP tree read back is the MAP tree.
    assert trellis.Tree.from_newick(post.map_tree.to_newick()) == post.map_tree
    for t in post.sample(20, seed=3):
        for text in (t.to_newick(), t.to_newick(lengths=False), t.to_newick(support=post), str(t)):
            u = trellis.Tree.from_newick(text)
            assert u == t and u.names is None and u.clusters() == t.clusters()


@pytest.mark.parametrize(
    "names",
    [["e", "d", "c", "b", "a", "f"], ["3", "4", "0", "1", "2", "5"], ["p10", "p2", "p1", "x y", "é", "Z"]],
    ids=["words", "digits-permuted", "mixed"],
)
def test_newick_round_trips_with_names(names):
    post = trellis.exact_hierarchy(sym(6, seed=9), names=names)
    for t in [post.map_tree, *post.sample(10, seed=2)]:
        u = trellis.Tree.from_newick(t.to_newick(), names=t.names)
        assert u == t and u.names == names
        assert trellis.Tree.from_newick(t.to_newick(support=post, lengths=False), names=names) == t


def test_newick_word_labels_are_numbered_in_sorted_order():
    a = trellis.Tree.from_newick("((b,a),c);")
    b = trellis.Tree.from_newick("(c,(a,b));")
    assert a == b and a.names == b.names == ["a", "b", "c"]
    assert sorted(a.clusters()) == [(0, 1), (0, 1, 2)]
    # Index labels are indices, in any child order.
    assert trellis.Tree.from_newick("(2,(1,0));") == trellis.Tree.from_nested([[0, 1], 2])
    assert trellis.Tree.from_newick("(2,(1,0));").names is None


@pytest.mark.parametrize(
    "text, says",
    [
        ("((1,2),3);", "names="),  # 1-based numbers
        ("((0,1),3);", "names="),  # a gap
        ("((0,01),2);", "names="),  # not written as an index
        ("((0,0),1);", "twice"),  # an index twice
        ("((a,b),a);", "twice"),  # a name twice
    ],
)
def test_newick_labels_that_are_neither_indices_nor_names(text, says):
    with pytest.raises(trellis.InputError, match=re.escape(says)):
        trellis.Tree.from_newick(text)


def test_newick_with_names_reads_names_only():
    assert trellis.Tree.from_newick("((0,1),2);", names=["2", "0", "1"]) == trellis.Tree.from_nested([[1, 2], 0])
    with pytest.raises(trellis.InputError, match='"q"'):
        trellis.Tree.from_newick("((a,b),q);", names=["a", "b", "c"])
    with pytest.raises(trellis.InputError):
        trellis.Tree.from_newick("((a,b),c);", names=["a", "b", "c", "d"])


def test_nested_lists_of_any_depth():
    """A caterpillar of 3000 leaves (depth 2999) in and out of nested lists,
    numpy integers and tuples accepted, without Python's recursion limit."""
    x = 0
    for i in range(1, 3000):
        x = [x, np.int64(i) if i % 2 else (i,)]
    t = trellis.Tree.from_nested(x)
    assert t.n == 3000
    y, depth = t.to_nested(), 0
    while isinstance(y, list):
        assert y[1] == 3000 - 1 - depth
        y, depth = y[0], depth + 1
    assert (y, depth) == (0, 2999)
    assert pickle.loads(pickle.dumps(t)) == t


# ---------------------------------------------------------------- min_p


def test_cluster_marginals_default_min_p():
    n = 9
    post = trellis.exact_hierarchy(sym(n, seed=10), beta=0.5)
    every = post.cluster_marginals(min_p=0.0)
    # All non-singleton proper clusters have p > 0 at a finite beta; the
    # marginals of a tree's n - 2 such clusters sum to n - 2.
    assert len(every) == 2**n - n - 2
    assert sum(p for _, p in every) == pytest.approx(n - 2, rel=1e-9)
    default = post.cluster_marginals()
    assert default == [(c, p) for c, p in every if p >= 0.01]
    assert 0 < len(default) <= 100 * (n - 2) and len(default) < len(every)
    assert post.cluster_marginals(min_p=1.0) == [(c, p) for c, p in every if p >= 1.0]

    flat = trellis.exact_partition(sym(n, seed=10), beta=0.5)
    every = flat.cluster_marginals(min_p=0.0)
    assert len(every) == 2**n - 1
    assert sum(p for _, p in every) <= n + 1e-9
    assert flat.cluster_marginals() == [(c, p) for c, p in every if p >= 0.01]
    assert inspect.signature(trellis.HierarchyPosterior.cluster_marginals).parameters["min_p"].default == 0.01
    assert inspect.signature(trellis.PartitionPosterior.cluster_marginals).parameters["min_p"].default == 0.01


# ---------------------------------------------------------------- InputError everywhere

W5 = sym(5, seed=11)
X6 = points(6, d=2, seed=12)
POST = trellis.exact_hierarchy(W5)
FLAT = trellis.exact_partition(W5)
TREE = POST.map_tree
JET = np.abs(np.random.default_rng(13).normal(size=(4, 4))) + np.array([10.0, 0, 0, 0])
SAMPLER = Sampler(X6, seed=1)


@functools.lru_cache(maxsize=None)
def _path(kind="points"):
    """A small CSV file of points (with names) or of weights (made once)."""
    d = pathlib.Path(tempfile.mkdtemp())
    if kind == "weights":
        return write_matrix(d / "w.csv", W5)
    return write_points(d / "p.csv", [f"n{i}" for i in range(6)], X6)


#: Every public callable with a valid call: its keyword arguments.
CALLS = {
    "similarity": (trellis.similarity, dict(points=X6)),
    "exact_hierarchy": (trellis.exact_hierarchy, dict(weights=W5)),
    "exact_partition": (trellis.exact_partition, dict(weights=W5)),
    "astar": (trellis.astar, dict(weights=W5, approx=True)),
    "greedy": (trellis.greedy, dict(weights=W5)),
    "beam": (trellis.beam, dict(weights=W5)),
    "linkage": (trellis.linkage, dict(points=X6)),
    "score": (trellis.score, dict(tree=TREE, weights=W5)),
    "plan": (trellis.plan, dict(n=5)),
    "read_points": (trellis.read_points, dict(path=None)),
    "read_weights": (trellis.read_weights, dict(path="weights")),
    "Tree.from_newick": (trellis.Tree.from_newick, dict(text="((0,1),2);")),
    "Tree.from_nested": (trellis.Tree.from_nested, dict(obj=[[0, 1], 2])),
    "Tree.from_linkage": (trellis.Tree.from_linkage, dict(z=TREE.to_linkage())),
    "Tree.to_newick": (TREE.to_newick, {}),
    "Tree.to_linkage": (TREE.to_linkage, {}),
    "HierarchyPosterior.cluster_marginals": (POST.cluster_marginals, {}),
    "HierarchyPosterior.marginal": (POST.marginal, dict(members=[0, 1])),
    "HierarchyPosterior.subtree_probability": (POST.subtree_probability, dict(tree=[[0, 1], 2])),
    "HierarchyPosterior.sample": (POST.sample, dict(k=2)),
    "PartitionPosterior.cluster_marginals": (FLAT.cluster_marginals, {}),
    "PartitionPosterior.sample": (FLAT.sample, dict(k=2)),
    "jets.simulate": (jets.simulate, dict(n_jets=2, min_leaves=3, max_leaves=4)),
    "jets.cluster": (jets.cluster, dict(jets=[JET], method="greedy")),
    "jets.cluster_many": (jets.cluster_many, dict(jets=[JET], method="greedy")),
    "jets.Jets": (jets.Jets, dict(ids=["a"], leaves=JET, offsets=[0, 4], params=[[1.5, 1.5, 16.0]])),
    "interactive.Sampler": (Sampler, dict(points=X6)),
    "Sampler.run": (SAMPLER.run, dict(iterations=2)),
    "Sampler.query": (SAMPLER.query, {}),
    "Sampler.add_triplet": (SAMPLER.add_triplet, dict(a=0, b=1, c=2)),
    "triplet_distance": (interactive.triplet_distance, dict(tree_a=TREE, tree_b=TREE)),
}

#: Values that are wrong for (nearly) every argument.
GARBAGE = {
    "string": "x",
    "negative": -1,
    "fraction": 1.5,
    "nan": float("nan"),
    "inf": float("inf"),
    "none": None,
    "ragged": [[1.0, 2.0], [3.0]],
    "object": object(),
    "bool": True,
    "huge": 2**80,
    "bytes": b"x",
    "complex": 1j,
    "array": np.ones((2, 2)),
}


def _call(name, **override):
    f, kwargs = CALLS[name]
    kwargs = dict(kwargs)
    if kwargs.get("path") is None or kwargs.get("path") == "weights":
        if "path" in kwargs:
            kwargs["path"] = _path("points" if kwargs["path"] is None else "weights")
    kwargs.update(override)
    return f(**kwargs)


def _params(name):
    f, _ = CALLS[name]
    return [p for p in inspect.signature(f).parameters if p not in ("self", "client")]


@pytest.mark.parametrize("name", sorted(CALLS))
def test_valid_calls_succeed(name):
    _call(name)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_garbage_raises_only_trellis_errors(name):
    """Each argument of each public callable, set to each garbage value in
    turn: the call succeeds (the value happens to be valid) or raises a
    ``TrellisError`` (``InputError`` for bad input) with a one-line message;
    never numpy's or PyO3's ``TypeError``, ``ValueError`` or
    ``OverflowError``."""
    failures = []
    for param in _params(name):
        for label, value in GARBAGE.items():
            try:
                _call(name, **{param: value})
            except trellis.TrellisError as e:
                if not one_line(e):
                    failures.append(f"{param}={label}: message {str(e)!r}")
            except Exception as e:  # noqa: BLE001 - the failure is the report
                failures.append(f"{param}={label}: {type(e).__name__}: {e}")
    assert not failures, "\n".join(failures)


#: Bad arguments that must raise InputError naming the problem.
BAD = {
    "sample-negative": (lambda: POST.sample(-1), "k must be at least 0"),
    "sample-float": (lambda: POST.sample(2.0), "k must be an integer"),
    "sample-seed-negative": (lambda: POST.sample(1, seed=-1), "seed"),
    "sample-seed-huge": (lambda: POST.sample(1, seed=2**64), "seed"),
    "flat-sample-negative": (lambda: FLAT.sample(-3), "k must be at least 0"),
    "flat-sample-string": (lambda: FLAT.sample("3"), "k must be an integer"),
    "ragged-weights": (lambda: trellis.exact_hierarchy([[0.0, 1.0], [1.0]]), "ragged"),
    "ragged-weights-flat": (lambda: trellis.exact_partition([[0.0, 1.0, 2.0], [1.0, 0.0]]), "ragged"),
    "ragged-points": (lambda: trellis.similarity([[1.0, 2.0], [3.0]]), "ragged"),
    "ragged-distances": (lambda: trellis.astar(distances=[[0.0], [1.0, 0.0]], model="linkage-single"), "ragged"),
    "ragged-linkage-matrix": (lambda: trellis.Tree.from_linkage([[0, 1, 1.0, 2], [2, 3]]), "ragged"),
    "ragged-sampler": (lambda: Sampler([[1.0, 2.0], [1.0], [3.0, 4.0]]), "ragged"),
    "ragged-jet": (lambda: jets.cluster([[[10.0, 1, 2, 3], [10.0, 1]]]), "ragged"),
    "string-weights": (lambda: trellis.exact_hierarchy(np.array([["0", "1"], ["1", "0"]])), "strings"),
    "bool-weights": (lambda: trellis.exact_hierarchy(np.eye(3, dtype=bool)), "booleans"),
    "complex-weights": (lambda: trellis.exact_hierarchy(np.eye(3) * 1j), "complex"),
    "nan-weights": (lambda: trellis.exact_hierarchy(np.full((3, 3), np.nan)), ""),
    "object-weights": (lambda: trellis.exact_hierarchy(np.array([[0, "a"], [1, 0]], dtype=object)), "numbers"),
    "1d-weights": (lambda: trellis.exact_hierarchy([1.0, 2.0]), "2-D"),
    "min_p-negative": (lambda: POST.cluster_marginals(-0.1), "min_p"),
    "min_p-above-one": (lambda: POST.cluster_marginals(1.5), "min_p"),
    "min_p-nan": (lambda: FLAT.cluster_marginals(float("nan")), "min_p"),
    "min_p-string": (lambda: FLAT.cluster_marginals("0.1"), "min_p"),
    "lengths-int": (lambda: TREE.to_newick(lengths=1), "lengths"),
    "support-string": (lambda: TREE.to_newick(support="x"), "support"),
    "support-ragged": (lambda: TREE.to_newick(support=[[1.0], [1.0, 2.0]]), "support"),
    "heights-int": (lambda: TREE.to_linkage(heights=1), "heights"),
    "newick-not-text": (lambda: trellis.Tree.from_newick(5), "text"),
    "newick-names-string": (lambda: trellis.Tree.from_newick("((a,b),c);", names="abc"), "names"),
    "nested-object": (lambda: trellis.Tree.from_nested(object()), "nested"),
    "nested-float": (lambda: trellis.Tree.from_nested([[0, 1.0], 2]), ""),
    "linkage-strings": (lambda: trellis.Tree.from_linkage([["a", "b", "c", "d"]]), "numbers"),
    "marginal-not-iterable": (lambda: POST.marginal(3), "members"),
    "marginal-bool": (lambda: POST.marginal([True, 0]), "booleans"),
    "marginal-string": (lambda: POST.marginal("01"), "members"),
    "subtree-object": (lambda: POST.subtree_probability(object()), "nested"),
    "center-not-bool": (lambda: trellis.similarity(X6, center="yes"), "center"),
    "approx-not-bool": (lambda: trellis.astar(W5, approx=1), "approx"),
    "seed-huge": (lambda: trellis.astar(W5, approx=True, seed=2**64), "seed"),
    "max_explored-huge": (lambda: trellis.astar(W5, approx=True, max_explored=2**64), "max_explored"),
    "width-float": (lambda: trellis.beam(W5, width=2.0), "width"),
    "n_jobs-huge": (lambda: trellis.exact_hierarchy(W5, n_jobs=2**63), "n_jobs"),
    "time_limit-string": (lambda: trellis.astar(W5, time_limit="1"), "time_limit"),
    "max_memory-string": (lambda: trellis.exact_hierarchy(W5, max_memory="1e9"), "max_memory"),
    "plan-n-float": (lambda: trellis.plan(5.0), "n must be an integer"),
    "plan-model": (lambda: trellis.plan(5, model=None), "model"),
    "plan-time_limit": (lambda: trellis.plan(5, time_limit="1"), "time_limit"),
    "read_points-path": (lambda: trellis.read_points(3), "path"),
    "read_points-names_column": (lambda: trellis.read_points(_path(), names_column=1.5), "names_column"),
    "read_weights-path": (lambda: trellis.read_weights(None), "path"),
    "simulate-negative": (lambda: jets.simulate(-1), "n_jets"),
    "simulate-float": (lambda: jets.simulate(2.5), "n_jets"),
    "simulate-string": (lambda: jets.simulate("3"), "n_jets"),
    "simulate-preset": (lambda: jets.simulate(1, preset=1), "preset"),
    "simulate-seed": (lambda: jets.simulate(1, seed=-1), "seed"),
    "load-path": (lambda: jets.load(3), "path"),
    "cluster-n_jobs": (lambda: jets.cluster([JET], n_jobs="2"), "n_jobs"),
    "cluster-max_memory": (lambda: jets.cluster([JET], max_memory="big"), "max_memory"),
    "cluster-params": (lambda: jets.cluster([JET], params={"lambda": "a", "lambda_root": 1, "delta_min": 1}), "lambda"),
    "cluster_many-chunk": (lambda: jets.cluster_many([JET], chunk_size="10"), "chunk_size"),
    "cluster_many-chunk-zero": (lambda: jets.cluster_many([JET], chunk_size=0), "chunk_size"),
    "jets-offsets": (lambda: jets.Jets(["a"], JET, [0, 5], [[1.5, 1.5, 16.0]]), "offsets"),
    "jets-offsets-float": (lambda: jets.Jets(["a"], JET, [0.0, 4.0], [[1.5, 1.5, 16.0]]), "offsets"),
    "jets-params-rows": (lambda: jets.Jets(["a"], JET, [0, 4], [[1.5, 1.5, 16.0]] * 2), "params"),
    "jets-leaves-columns": (lambda: jets.Jets(["a"], JET[:, :3], [0, 4], [[1.5, 1.5, 16.0]]), "leaves"),
    "jets-ids": (lambda: jets.Jets([1], JET, [0, 4], [[1.5, 1.5, 16.0]]), "ids"),
    "jets-truth": (lambda: jets.Jets(["a"], JET, [0, 4], [[1.5, 1.5, 16.0]], truth=["x"]), "truth"),
    "sampler-c": (lambda: Sampler(X6, c="1"), "c must be"),
    "sampler-subset-negative": (lambda: Sampler(X6, subset_size=-1), "subset_size"),
    "sampler-subset-float": (lambda: Sampler(X6, subset_size=4.5), "subset_size"),
    "sampler-seed": (lambda: Sampler(X6, seed=1.0), "seed"),
    "sampler-sigma-bool": (lambda: Sampler(X6, sigma=True), "sigma"),
    "sampler-sigma-ragged": (lambda: Sampler(X6, sigma=[1.0, [2.0]]), "sigma"),
    "sampler-strategy": (lambda: Sampler(X6, strategy=3), "strategy"),
    "sampler-names": (lambda: Sampler(X6, names="abcdef"), "names"),
    "run-negative": (lambda: SAMPLER.run(-1), "iterations"),
    "run-float": (lambda: SAMPLER.run(10.5), "iterations"),
    "run-huge": (lambda: SAMPLER.run(2**80), "iterations"),
    "query-strategy": (lambda: SAMPLER.query(3), "strategy"),
    "add_triplet-bool": (lambda: SAMPLER.add_triplet(True, 1, 2), "index"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_arguments_raise_input_error(case):
    call, says = BAD[case]
    with pytest.raises(trellis.InputError) as info:
        call()
    assert one_line(info.value)
    assert says in str(info.value), str(info.value)


# ---------------------------------------------------------------- Sampler and threads


def _blobs(seed=0, per=5):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [5.0, 5.0], [0.0, 9.0]])
    return np.concatenate([c + 0.3 * rng.standard_normal((per, 2)) for c in centres])


def test_one_sampler_shared_by_two_threads():
    """Two threads hammer one Sampler (runs, queries, triplets, reads): no
    error (before the lock: ``RuntimeError: Already borrowed``), every
    iteration counted, and the triplets hold in the final tree."""
    s = Sampler(_blobs(), seed=5)
    errors = []
    runs = [0, 0]
    start = threading.Barrier(2)

    def runner(k):
        try:
            start.wait()
            for _ in range(40):
                s.run(400)
                runs[k] += 400
                assert s.tree.n == 15
                assert math.isfinite(s.log_likelihood)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    def asker():
        try:
            start.wait()
            for i in range(40):
                q = s.query("random" if i % 2 else "active")
                assert q is not None and q.n >= 3
                s.run(400)
                runs[1] += 400
                _ = s.triplets, s.iterations, s.strategy, repr(s)
            s.add_triplet(0, 1, 14)
            s.add_triplet(5, 6, 0)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=runner, args=(0,)), threading.Thread(target=asker)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "a thread is stuck"
    assert not errors, errors
    assert s.iterations == sum(runs)
    s.run(50)
    clusters = [set(c) for c in s.tree.clusters()]
    for a, b, c in [(0, 1, 14), (5, 6, 0)]:
        assert any(a in k and b in k and c not in k for k in clusters)


def test_sampler_releases_the_interpreter_while_it_runs():
    """While one thread is in ``run`` (and another waits for the lock), the
    main thread keeps running Python code."""
    s = Sampler(_blobs(1, per=10), seed=2)
    t0 = time.perf_counter()
    s.run(20000)
    rate = 20000 / max(time.perf_counter() - t0, 1e-6)
    iterations = int(min(0.5 * rate, 10**8))  # about half a second
    inside = threading.Event()
    done = threading.Event()

    def long_run():
        inside.set()
        s.run(iterations)
        done.set()

    seen = []

    def wait_for_tree():
        try:
            seen.append(s.tree)
        except Exception as e:  # noqa: BLE001 - reported below
            seen.append(e)

    worker = threading.Thread(target=long_run)
    waiter = threading.Thread(target=wait_for_tree)
    worker.start()
    inside.wait()
    time.sleep(0.01)
    waiter.start()
    ticks = 0
    t0 = time.perf_counter()
    while not done.is_set():
        ticks += 1
        time.sleep(0.002)
    elapsed = time.perf_counter() - t0
    worker.join()
    waiter.join(timeout=60)
    assert not waiter.is_alive()
    # The waiter got the tree (after the run: the lock makes it wait).
    assert len(seen) == 1 and isinstance(seen[0], trellis.Tree), seen
    # With the interpreter held by the run, the loop could not have ticked
    # until it ended; released, it ticks every few milliseconds.
    assert elapsed > 0.1, elapsed
    assert ticks >= 10, (ticks, elapsed)
    assert s.iterations == 20000 + iterations


def test_sampler_names_points_in_errors():
    s = Sampler(_blobs(), names=[f"p{i}" for i in range(15)], seed=0)
    with pytest.raises(trellis.InputError, match="three different"):
        s.add_triplet("p0", "p0", "p1")
    with pytest.raises(trellis.InputError, match="no point"):
        s.add_triplet("p0", "p1", "nope")


# ---------------------------------------------------------------- docstrings


def _public(obj):
    return [n for n in dir(obj) if not n.startswith("_")]


def _documented_items():
    """Every public function, class, method and property of the package
    (``trellis.sklearn`` aside: its estimators document themselves by the
    scikit-learn conventions), with the parameters its docstring must name."""
    items = []
    for mod in (trellis, jets, interactive):
        for name in getattr(mod, "__all__", _public(mod)):
            if name in ("TrellisHierarchical", "TrellisFlat"):
                continue
            obj = getattr(mod, name)
            if inspect.ismodule(obj):
                continue
            items.append((f"{mod.__name__}.{name}", obj))
            if inspect.isclass(obj) and not issubclass(obj, BaseException):
                for attr in _public(obj):
                    items.append((f"{mod.__name__}.{name}.{attr}", inspect.getattr_static(obj, attr)))
    return items


def _doc(obj):
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    return inspect.getdoc(obj) or ""


def _parameters(obj):
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if isinstance(obj, property) or not callable(obj):
        return []
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return []
    return [p for p in sig.parameters if p not in ("self", "cls")]


@pytest.mark.parametrize("name, obj", _documented_items(), ids=lambda x: x if isinstance(x, str) else "")
def test_everything_public_is_documented(name, obj):
    doc = _doc(obj)
    assert doc.strip(), f"{name} has no docstring"
    params = _parameters(obj)
    if inspect.isclass(obj) and issubclass(obj, BaseException):
        params = []  # the exceptions take a message, as every exception
    elif inspect.isclass(obj):
        params = _parameters(obj.__init__) if obj.__init__ is not object.__init__ else []
        if obj.__init__ is not object.__init__:
            doc += "\n" + _doc(obj.__init__)
    missing = [p for p in params if not re.search(rf"\b{re.escape(p)}\b", doc)]
    assert not missing, f"{name}'s docstring does not explain {missing}"


def test_jets_fields_are_documented():
    # The slots' docstrings, as help() and inspect.getdoc find them.
    for field in ("ids", "leaves", "offsets", "params", "truth", "meta"):
        assert (inspect.getdoc(jets.Jets.__dict__[field]) or "").strip(), field
    for field in ("id", "log_likelihood", "tree", "log_z"):
        assert (inspect.getdoc(jets.JetResult.__dict__[field]) or "").strip(), field
    assert 'method="exact"' in inspect.getdoc(jets.JetResult.log_z)


def test_jet_results_stay_frozen_comparable_and_picklable():
    r = jets.cluster([JET], method="exact")[0]
    assert r.log_z is not None and r == pickle.loads(pickle.dumps(r))
    assert hash(r) == hash(pickle.loads(pickle.dumps(r)))
    with pytest.raises(AttributeError):
        r.log_z = 1.0  # type: ignore[misc]
    g = jets.cluster([JET], method="greedy")[0]
    assert g.log_z is None and g != r
    import dataclasses

    assert [f.name for f in dataclasses.fields(r)] == ["id", "log_likelihood", "tree", "log_z"]
    assert dataclasses.replace(r, id="x").id == "x"
