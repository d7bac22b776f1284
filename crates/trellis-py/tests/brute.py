"""Brute-force enumerations shared by the tests: every binary tree, every
set partition, and the costs and sums computed over them, to compare the
exact answers with (small N only: (2N-3)!! trees, Bell(N) partitions)."""

import itertools
import math


def insert(t, k):
    """Every tree made by inserting leaf ``k`` on an edge of ``t`` or above its root."""
    out = [[t, k]]
    if isinstance(t, list):
        out += [[l2, t[1]] for l2 in insert(t[0], k)]
        out += [[t[0], r2] for r2 in insert(t[1], k)]
    return out


def all_trees(n):
    """Every binary tree over 0..n-1 as nested lists."""
    trees = [0]
    for k in range(1, n):
        trees = [t2 for t in trees for t2 in insert(t, k)]
    return trees


def leaves(t):
    """The set of points under a tree node."""
    return {t} if isinstance(t, int) else leaves(t[0]) | leaves(t[1])


def partitions(items):
    """Every set partition of the list ``items``."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for p in partitions(rest):
        for k in range(len(p)):
            yield p[:k] + [[first] + p[k]] + p[k + 1 :]
        yield [[first]] + p


def log_sum_exp(xs):
    """``log(sum(exp(x)))``, stable."""
    xs = list(xs)
    m = max(xs)
    return m + math.log(sum(math.exp(x - m) for x in xs))


def hcc_cost(t, w):
    """Hierarchical correlation clustering cost, summed over the splits: the
    positive weights across each split plus the negative weights (as
    magnitudes) inside its two sides."""
    if isinstance(t, int):
        return 0.0
    a, b = leaves(t[0]), leaves(t[1])
    c = sum(max(w[i, j], 0.0) for i in a for j in b)
    for part in (a, b):
        c += sum(max(-w[i, j], 0.0) for i, j in itertools.combinations(sorted(part), 2))
    return c + hcc_cost(t[0], w) + hcc_cost(t[1], w)
