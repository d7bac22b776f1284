"""Type stubs of ``trellis.interactive``."""

from collections.abc import Sequence
from typing import Any, Literal

import numpy.typing as npt

from ._core import Tree

__all__ = ["Sampler", "triplet_distance"]

STRATEGIES: tuple[str, ...]

_Point = int | str
_Variance = float | str | Sequence[float] | npt.NDArray[Any]
_Strategy = Literal["vanilla", "simple", "random", "active", "interleaved", "smart"]

class Sampler:
    def __init__(
        self,
        points: npt.ArrayLike,
        names: Sequence[Any] | None = None,
        sigma: _Variance = "var/2",
        seed: int = 0,
        c: float = 1.0,
        sigma0: _Variance = 0.5,
        leaf_noise: float = 0.01,
        rebuild: Literal["guided"] = "guided",
        subset_size: int = 10,
        candidates: int = 20,
        strategy: _Strategy = "active",
        samples: int = 100,
    ) -> None: ...
    @property
    def n(self) -> int: ...
    def run(self, iterations: int) -> Sampler: ...
    def add_triplet(self, a: _Point, b: _Point, c: _Point) -> bool: ...
    @property
    def tree(self) -> Tree: ...
    @property
    def triplets(self) -> list[tuple[Any, Any, Any]]: ...
    @property
    def log_likelihood(self) -> float: ...
    @property
    def strategy(self) -> str: ...
    @property
    def iterations(self) -> int: ...
    def query(self, strategy: _Strategy | None = None) -> Tree | None: ...
    def undo(self) -> tuple[Any, Any, Any] | None: ...

def triplet_distance(tree_a: Tree, tree_b: Tree) -> float: ...
