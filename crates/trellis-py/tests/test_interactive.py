"""trellis.interactive: seeds, triplet constraints in the tree, conflicts,
queries and the triplet distance against brute force."""

import itertools

import numpy as np
import pytest

import trellis
from trellis.interactive import Sampler, triplet_distance


def blobs(seed=0, per=4, d=2):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0] * d, [4.0] * d, [0.0, 8.0] + [0.0] * (d - 2)])
    return np.concatenate([c + 0.3 * rng.standard_normal((per, d)) for c in centres])


NAMES = [f"p{i}" for i in range(12)]


def satisfied(tree, a, b, c):
    """({a, b}, c) holds: some cluster holds a and b but not c (from the tree's clusters)."""
    return any(a in s and b in s and c not in s for s in tree.clusters())


def test_same_seed_same_run():
    x = blobs()
    runs = []
    for _ in range(2):
        s = Sampler(x, names=NAMES, seed=3)
        s.run(300)
        q = s.query("random")
        s.add_triplet("p0", "p5", "p9")
        s.run(200)
        runs.append((s.tree.to_newick(), s.tree.heights, q.to_newick(), s.log_likelihood, s.triplets))
    assert runs[0] == runs[1]
    other = Sampler(x, names=NAMES, seed=4).run(300)
    assert other.tree.n == 12


def test_tree_names_and_heights():
    s = Sampler(blobs(), names=NAMES, seed=1).run(200)
    t = s.tree
    assert t.names == NAMES and t.n == 12
    h = t.heights
    assert len(h) == 11 and all(0 < v < 1 for v in h)
    # Heights grow towards the root (the root is the earliest divergence).
    z = t.to_linkage()
    assert z[-1, 2] == max(h)
    hierarchy = pytest.importorskip("scipy.cluster.hierarchy")
    assert hierarchy.is_valid_linkage(z) and hierarchy.is_monotonic(z)
    # Float32 and Fortran-ordered points give the same run.
    u = Sampler(np.asfortranarray(blobs().astype(np.float32)), names=NAMES, seed=1).run(200)
    assert u.tree.n == 12


def test_triplets_enforced_in_every_later_tree():
    s = Sampler(blobs(), seed=2)
    s.run(100)
    # Points 0 and 5 are in different blobs, 1 with 0: the data disagree with the triplet.
    triplets = [(0, 5, 1), (2, 9, 3), ("10", 4, 11)]
    for t in triplets:
        s.add_triplet(*t)
    idx = [tuple(int(p) for p in t) for t in triplets]
    assert s.triplets == idx
    for _ in range(20):
        s.run(25)
        for a, b, c in idx:
            assert satisfied(s.tree, a, b, c)


def test_conflict_raises_and_changes_nothing():
    s = Sampler(blobs(), names=NAMES, seed=0).run(50)
    s.add_triplet("p0", "p1", "p2")
    before = s.tree
    with pytest.raises(trellis.InputError, match="p0|p1|p2"):
        s.add_triplet("p0", "p2", "p1")
    assert s.triplets == [("p0", "p1", "p2")]
    assert s.tree == before
    for bad in [("p0", "p0", "p1"), ("p0", "nobody", "p1"), (0, 1, 99), (0, 1, 2.5)]:
        with pytest.raises(trellis.InputError):
            s.add_triplet(*bad)


def test_queries():
    s = Sampler(blobs(), names=NAMES, seed=5, subset_size=5, candidates=4).run(150)
    assert s.query("vanilla") is None
    q = s.query("simple")
    assert q.n == 3 and set(q.names) <= set(NAMES)
    for strategy in ["random", "active", "interleaved"]:
        q = s.query(strategy)
        assert q.n == 5 and len(set(q.names)) == 5
        # The shown tree is the current tree restricted to those points.
        shown = [NAMES.index(n) for n in q.names]
        full = {frozenset(c) & frozenset(shown) for c in s.tree.clusters()}
        assert {frozenset(shown[i] for i in c) for c in q.clusters()} <= full
    assert s.query("smart") == s.tree
    with pytest.raises(trellis.InputError, match="strategy"):
        s.query("clever")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(points=np.ones((2, 2))), "at least 3"),
        (dict(points=blobs(), names=["a"]), "names"),
        (dict(points=blobs(), sigma=-1.0), "sigma"),
        (dict(points=blobs(), sigma="var/0"), "sigma"),
        (dict(points=blobs(), sigma=[1.0, 2.0, 3.0]), "features"),
        (dict(points=blobs(), c=0.0), "c must"),
        (dict(points=blobs(), rebuild="fast"), "rebuild"),
        (dict(points=blobs(), subset_size=2), "subset_size"),
        (dict(points=np.array([[0.0, np.nan]] * 4)), "finite|NaN|non"),
        (dict(points=np.ones(5)), "2-D"),
    ],
)
def test_bad_input(kwargs, match):
    with pytest.raises(trellis.InputError, match=match):
        Sampler(**kwargs)


def brute_triplet_distance(a, b, n):
    """Among triples a resolves, the fraction b resolves otherwise (from clusters)."""
    def resolve(tree, i, j, k):
        best = None
        for c in tree.clusters():
            for pair, odd in (((i, j), k), ((i, k), j), ((j, k), i)):
                if pair[0] in c and pair[1] in c and odd not in c:
                    if best is None or len(c) < best[0]:
                        best = (len(c), odd)
        return None if best is None else best[1]

    resolved = wrong = 0
    for i, j, k in itertools.combinations(range(n), 3):
        ra = resolve(a, i, j, k)
        if ra is None:
            continue
        resolved += 1
        wrong += resolve(b, i, j, k) != ra
    return wrong / resolved


def test_triplet_distance_brute_force():
    s1 = Sampler(blobs(), seed=1).run(100)
    s2 = Sampler(blobs(), seed=9).run(5)
    a, b = s1.tree, s2.tree
    assert triplet_distance(a, a) == 0.0
    assert triplet_distance(a, b) == pytest.approx(brute_triplet_distance(a, b, 12))
    x = trellis.Tree.from_newick("(((a,b),c),(d,e));")
    y = trellis.Tree.from_newick("((e,(c,a)),(b,d));")
    assert triplet_distance(x, y) == pytest.approx(
        brute_triplet_distance(x, trellis.Tree.from_newick("((e,(c,a)),(b,d));", names=list("abcde")), 5))
    with pytest.raises(trellis.InputError):
        triplet_distance(x, trellis.Tree.from_newick("((a,b),c);"))


def test_undo_takes_back_the_last_triplet():
    s = Sampler(blobs(), names=NAMES, seed=6).run(100)
    assert s.undo() is None
    s.add_triplet("p0", "p1", "p2")
    s.add_triplet("p4", "p5", "p0")
    # ({p0, p2}, p4) conflicts with neither; ({p0, p4}, p5) with the second only.
    with pytest.raises(trellis.InputError, match="p4"):
        s.add_triplet("p0", "p4", "p5")
    assert s.undo() == ("p4", "p5", "p0")
    assert s.triplets == [("p0", "p1", "p2")]
    s.add_triplet("p0", "p4", "p5")
    assert s.triplets == [("p0", "p1", "p2"), ("p0", "p4", "p5")]
    for _ in range(10):
        s.run(20)
        assert satisfied(s.tree, 0, 1, 2) and satisfied(s.tree, 0, 4, 5)
    assert s.undo() == ("p0", "p4", "p5") and s.undo() == ("p0", "p1", "p2") and s.undo() is None
    assert s.triplets == []


def test_answering_a_query():
    s = Sampler(blobs(), names=NAMES, seed=7, subset_size=4, strategy="random").run(100)
    assert s.strategy == "random"
    q = s.query()
    assert q.n == 4 and s.strategy == "random"
    a, b, c = q.names[:3]
    # The shown tree resolves (a, b, c) one way; the user insists on another
    # that the tree does not satisfy: the tree is rebuilt, and satisfies it.
    i, j, k = (NAMES.index(x) for x in (a, b, c))
    pair = next(p for p in ((i, j, k), (i, k, j), (j, k, i)) if not satisfied(s.tree, *p))
    assert s.add_triplet(*pair) is True
    assert satisfied(s.tree, *pair)
    assert s.triplets == [tuple(NAMES[p] for p in pair)]
    # A triplet the tree satisfies already: nothing to rebuild.
    held = next(p for p in itertools.permutations(range(12), 3) if satisfied(s.tree, *p) and p[:2] != pair[:2])
    assert s.add_triplet(*held) is False
    # Active queries score the trees kept during the runs; same seed, same queries.
    shown = []
    for _ in range(2):
        t = Sampler(blobs(), names=NAMES, seed=8, subset_size=5, strategy="active").run(150)
        shown.append([t.query().to_newick() for _ in range(3)] + [t.query("interleaved").to_newick()])
    assert shown[0] == shown[1]
    with pytest.raises(trellis.InputError, match="vanilla"):
        Sampler(blobs(), strategy="vanilla")
    with pytest.raises(trellis.InputError, match="guided"):
        Sampler(blobs(), rebuild="balanced")
