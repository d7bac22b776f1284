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

from . import _args, _core
from ._core import InputError, Tree

__all__ = ["Sampler", "triplet_distance"]

#: The query strategies, by the CLI's names.
STRATEGIES = ("vanilla", "simple", "random", "active", "interleaved", "smart")


def _variance(v, what):
    """``sigma`` or ``sigma0`` as the core takes it: a string, a float or a
    list of floats."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, np.ndarray):
        if v.ndim > 1:
            raise InputError(f"{what} must be a number, one number per feature, or a string, not a {v.ndim}-D array")
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        return [_args.number(x, f"every value of {what}") for x in v]
    return _args.number(v, what)


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

    One ``Sampler`` may be shared between threads: its calls take turns on a
    lock, and ``run``, ``query`` and ``add_triplet`` release the interpreter
    while they work (a thread waiting for the lock does not hold it either).

    Every bad argument raises ``InputError`` naming it.
    """

    def __init__(self, points, names=None, sigma="var/2", seed=0, c=1.0, sigma0=0.5,
                 leaf_noise=0.01, rebuild="guided", subset_size=10, candidates=20,
                 strategy="active", samples=100):
        x = np.ascontiguousarray(_args.matrix(points, "points"))
        self._s = _core.Sampler(
            x, _args.names(names), _variance(sigma, "sigma"), _args.seed(seed), _args.number(c, "c"),
            _variance(sigma0, "sigma0"), _args.number(leaf_noise, "leaf_noise"), _args.text(rebuild, "rebuild"),
            _args.integer(subset_size, "subset_size", 0), _args.integer(candidates, "candidates", 0),
            _args.text(strategy, "strategy"), _args.integer(samples, "samples", 0),
        )

    @property
    def n(self) -> int:
        """Number of points."""
        return self._s.n

    def run(self, iterations):
        """Runs ``iterations`` MCMC iterations (an SPR and a divergence-time
        move each; ``iterations`` an integer ``>= 0``) with the interpreter
        released; Ctrl-C stops early. Returns ``self``."""
        self._s.run(_args.integer(iterations, "iterations", 0))
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
        return self._s.query(_args.text(strategy, "strategy", optional=True))

    def undo(self):
        """Takes back the last triplet given and returns it as ``triplets``
        lists it (``None`` when there is none). The current tree stays: it
        satisfies the remaining triplets."""
        return self._s.undo()

    def __repr__(self):
        """``Sampler(n=..., triplets=..., strategy=...)``."""
        return repr(self._s)


def triplet_distance(tree_a, tree_b) -> float:
    """The triplet distance (Vikram & Dasgupta, Eq. 1), in ``[0, 1]``.

    ``tree_a``: the target ``Tree`` (for example from ``Tree.from_newick`` of
    any binary target); ``tree_b``: a ``Tree`` over the same points. Among
    the triplets ``tree_a`` resolves, the fraction ``tree_b`` does not
    satisfy. Trees that both have names are matched by name, else by index.
    """
    if not isinstance(tree_a, Tree) or not isinstance(tree_b, Tree):
        raise InputError("triplet_distance compares two trellis.Tree objects")
    return _core.triplet_distance(tree_a, tree_b)
