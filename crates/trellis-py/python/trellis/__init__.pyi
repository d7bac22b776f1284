"""Type stubs of the ``trellis`` package."""

import os
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ._core import (
    AstarResult as AstarResult,
    HierarchyPosterior as HierarchyPosterior,
    InputError as InputError,
    PartitionPosterior as PartitionPosterior,
    TooLargeError as TooLargeError,
    Tree as Tree,
    TrellisError as TrellisError,
)
from . import interactive as interactive, jets as jets
from ._plan import plan as plan
from .sklearn import TrellisFlat as TrellisFlat, TrellisHierarchical as TrellisHierarchical

__all__ = [
    "AstarResult",
    "HierarchyPosterior",
    "InputError",
    "PartitionPosterior",
    "TooLargeError",
    "Tree",
    "TrellisError",
    "TrellisFlat",
    "TrellisHierarchical",
    "astar",
    "beam",
    "exact_hierarchy",
    "exact_partition",
    "greedy",
    "interactive",
    "jets",
    "linkage",
    "plan",
    "read_points",
    "read_weights",
    "score",
    "similarity",
]

__version__: str

_ArrayLike = npt.ArrayLike
_Nested = int | list[Any]
_HierModel = Literal["hcc", "dasgupta", "linkage-average", "linkage-complete", "linkage-single"]

def similarity(
    points: _ArrayLike,
    kind: Literal["cosine", "rbf", "dot", "expneg"] = "cosine",
    gamma: float | None = None,
    center: bool = False,
) -> npt.NDArray[np.float64]: ...
def exact_hierarchy(
    weights: _ArrayLike | None = None,
    model: _HierModel = "hcc",
    beta: float = 1.0,
    names: Sequence[str] | None = None,
    max_memory: float | None = None,
    n_jobs: int | None = None,
    *,
    distances: _ArrayLike | None = None,
    points: _ArrayLike | None = None,
    triplets: Sequence[tuple[int | str, int | str, int | str]] | None = None,
) -> HierarchyPosterior: ...
def exact_partition(
    weights: _ArrayLike,
    model: Literal["cc"] = "cc",
    beta: float = 1.0,
    names: Sequence[str] | None = None,
    max_memory: float | None = None,
    n_jobs: int | None = None,
    *,
    must_link: Sequence[tuple[int | str, int | str]] | None = None,
    cannot_link: Sequence[tuple[int | str, int | str]] | None = None,
) -> PartitionPosterior: ...
def astar(
    weights: _ArrayLike | None = None,
    model: _HierModel = "hcc",
    approx: bool = False,
    seed: int = 0,
    beta: float = 1.0,
    names: Sequence[str] | None = None,
    max_explored: int | None = None,
    time_limit: float | None = None,
    max_memory: float | None = None,
    n_jobs: int | None = None,
    *,
    distances: _ArrayLike | None = None,
    points: _ArrayLike | None = None,
    triplets: Sequence[tuple[int | str, int | str, int | str]] | None = None,
) -> AstarResult: ...
def greedy(
    weights: _ArrayLike | None = None,
    model: _HierModel = "hcc",
    beta: float = 1.0,
    names: Sequence[str] | None = None,
    *,
    distances: _ArrayLike | None = None,
    points: _ArrayLike | None = None,
) -> Tree: ...
def beam(
    weights: _ArrayLike | None = None,
    model: _HierModel = "hcc",
    beta: float = 1.0,
    width: int | None = None,
    names: Sequence[str] | None = None,
    *,
    distances: _ArrayLike | None = None,
    points: _ArrayLike | None = None,
) -> Tree: ...
def score(
    tree: Tree | str | _Nested,
    weights: _ArrayLike | None = None,
    model: _HierModel = "hcc",
    beta: float = 1.0,
    names: Sequence[str] | None = None,
    *,
    distances: _ArrayLike | None = None,
    points: _ArrayLike | None = None,
) -> float: ...
def read_points(
    path: str | os.PathLike[str],
    names_column: Literal["auto"] | int | None = "auto",
) -> tuple[list[str] | None, npt.NDArray[np.float64]]: ...
def read_weights(path: str | os.PathLike[str]) -> npt.NDArray[np.float64]: ...
def linkage(
    points: _ArrayLike | None = None,
    distances: _ArrayLike | None = None,
    method: Literal["single", "complete", "average", "weighted", "centroid", "median", "ward"] = "average",
    names: Sequence[str] | None = None,
    optimal_ordering: bool = False,
) -> Tree: ...
