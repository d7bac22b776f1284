"""Interactive Bayesian hierarchical clustering (Vikram & Dasgupta, ICML 2016).

A Dirichlet diffusion tree posterior sampler over points that a user
corrects with triplet constraints ``({a, b}, c)`` ("a and b belong together,
apart from c"), the library behind ``trellis interactive``:

>>> from trellis.interactive import Sampler
>>> s = Sampler(points, names=names, seed=0)
>>> s.run(1000)
>>> shown = s.query("random")        # a Tree over 10 points to show the user
>>> s.add_triplet("cat", "dog", "fish")
>>> s.run(100); s.tree.to_newick()
"""

from __future__ import annotations

import numpy as np

from . import _core
from ._core import InputError, Tree

__all__ = ["Sampler", "triplet_distance"]

STRATEGIES = ("vanilla", "simple", "random", "active", "interleaved", "smart")


class Sampler:
    """A Dirichlet diffusion tree sampler under triplet constraints.

    ``points``: an ``(n, d)`` array (``n >= 3``; float32/64, any order).
    ``names``: one label per point (default none: points are then named by
    their index as text in queries, and ``triplets`` lists indices).
    ``sigma``: the Brownian-motion variance per unit time, a number, one
    number per feature, or ``"var/K"`` (each feature's sample variance over
    ``K``) or ``"X/Y"``; default ``"var/2"`` as the CLI. ``seed``: the
    chain's and the queries' seed (same seed, same trees and queries).
    ``c``: the divergence constant of ``a(t) = c / (1 - t)`` (default 1).
    ``sigma0``: variance of the start location (default 0.5; same forms as
    ``sigma``). ``leaf_noise``: leaf observation noise in units of ``sigma``
    (default 0.01). ``rebuild``: how a violated triplet rebuilds the tree;
    only ``"guided"`` (follow the current tree), the session's.
    ``subset_size`` and ``candidates``: points shown by random and active
    queries, and the candidate subsets of an active query (the paper's 10
    and 20). ``strategy``: the query strategy (``"simple"``, ``"random"``,
    ``"active"``, ``"interleaved"`` or ``"smart"``; ``query`` may change
    it). ``samples``: the trees of the last iterations kept for active
    queries (the paper's 100); they are kept while the strategy is active or
    interleaved.

    This is ``trellis::ddt::Session``, the loop behind ``trellis interactive``
    and its web app: the chain, the queries and their random choices are the
    library's.
    """

    def __init__(self, points, names=None, sigma="var/2", seed=0, c=1.0, sigma0=0.5,
                 leaf_noise=0.01, rebuild="guided", subset_size=10, candidates=20,
                 strategy="active", samples=100):
        try:
            x = np.ascontiguousarray(points, dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise InputError(f"points must be a 2-D array of numbers: {e}") from None
        if x.ndim != 2:
            raise InputError(f"points must be a 2-D (n, d) array, not {x.ndim}-D")
        if isinstance(sigma, np.ndarray):
            sigma = sigma.tolist()
        if isinstance(sigma0, np.ndarray):
            sigma0 = sigma0.tolist()
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise InputError(f"seed must be an integer >= 0, not {seed!r}")
        self._s = _core.Sampler(
            x, None if names is None else [str(n) for n in names], sigma, int(seed), float(c),
            sigma0, float(leaf_noise), rebuild, int(subset_size), int(candidates),
            strategy, int(samples),
        )

    @property
    def n(self) -> int:
        """Number of points."""
        return self._s.n

    def run(self, iterations):
        """Runs ``iterations`` MCMC iterations (an SPR and a divergence-time
        move each); Ctrl-C stops early. Returns ``self``."""
        if int(iterations) < 0:
            raise InputError(f"iterations must be >= 0, not {iterations}")
        self._s.run(int(iterations))
        return self

    def add_triplet(self, a, b, c) -> bool:
        """Enforces ``({a, b}, c)`` (points by name or index): the tree is
        rebuilt at once if it violates it, and every later tree satisfies it.
        It answers the current query when that shows the three points, else
        the whole tree is shown and answered (the interleaved alternation then
        restarts). Raises ``InputError`` naming the conflicting triplets when
        it contradicts the triplets already given (nothing changes then).
        Returns whether the tree was rebuilt."""
        return self._s.add_triplet(*(int(p) if isinstance(p, np.integer) else p for p in (a, b, c)))

    @property
    def tree(self) -> Tree:
        """The current tree (a ``Tree`` with the names and heights ``1 - t``,
        ``t`` the divergence times: leaves at 0, the root highest)."""
        return self._s.tree

    @property
    def triplets(self) -> list:
        """The constraints in force, ``(a, b, c)`` for ``({a, b}, c)``."""
        return self._s.triplets

    @property
    def log_likelihood(self) -> float:
        """``ln p(T, t) + ln p(X | T, t)`` of the current tree and times."""
        return self._s.log_likelihood

    @property
    def strategy(self) -> str:
        """The query strategy (set by the constructor or the last ``query``)."""
        return self._s.strategy

    @property
    def iterations(self) -> int:
        """MCMC iterations run so far."""
        return self._s.iterations

    def query(self, strategy=None):
        """What to show the user, by ``strategy`` (the CLI's names; ``None``
        for the current strategy, another name changes it): ``"simple"``
        three random points not all in one triplet given, ``"random"``
        ``subset_size`` random points, ``"active"`` the subset whose tree
        distances varied most over the last ``samples`` iterations (among
        ``candidates``), ``"interleaved"`` random and active alternately,
        ``"smart"`` all points, ``"vanilla"`` nothing (``None``). A query
        left unanswered counts as accepted when the next one is asked.
        Returns the current tree induced on those points: a ``Tree`` over
        them with heights ``1 - t``, whose names are the points' names (or
        indices as text)."""
        return self._s.query(strategy)

    def undo(self):
        """Takes back the last triplet given and returns it as ``triplets``
        lists it (``None`` when there is none). The current tree stays: it
        satisfies the remaining triplets."""
        return self._s.undo()

    def __repr__(self):
        return repr(self._s)


def triplet_distance(tree_a, tree_b) -> float:
    """The triplet distance (Vikram & Dasgupta, Eq. 1): among the triplets
    ``tree_a`` (the target) resolves, the fraction ``tree_b`` does not
    satisfy. Trees that both have names are matched by name, else by index;
    ``tree_a`` may come from ``Tree.from_newick`` of any binary target."""
    if not isinstance(tree_a, Tree) or not isinstance(tree_b, Tree):
        raise InputError("triplet_distance compares two trellis.Tree objects")
    return _core.triplet_distance(tree_a, tree_b)
