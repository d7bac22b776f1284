"""Type stubs of ``trellis.jets``."""

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from typing import Any, Literal, overload

import numpy as np
import numpy.typing as npt

from ._core import Tree

__all__ = ["JetResult", "Jets", "cluster", "cluster_many", "load", "simulate"]

DEFAULT_PARAMS: dict[str, float]

_Method = Literal["exact", "greedy", "beam", "astar"]
_Likelihood = Literal["current", "legacy"]
_Coords = Literal["EPxPyPz", "PtEtaPhiM"]

class Jets:
    ids: list[str]
    leaves: npt.NDArray[np.float64]
    offsets: npt.NDArray[np.int64]
    params: npt.NDArray[np.float64]
    truth: list[Tree | None] | None
    meta: Any
    def __init__(
        self,
        ids: Sequence[str],
        leaves: npt.ArrayLike,
        offsets: npt.ArrayLike,
        params: npt.ArrayLike,
        truth: list[Tree | None] | None = None,
        meta: Any = None,
    ) -> None: ...
    def __len__(self) -> int: ...
    @overload
    def __getitem__(self, k: int) -> npt.NDArray[np.float64]: ...
    @overload
    def __getitem__(self, k: slice) -> Jets: ...
    def __iter__(self) -> Iterator[npt.NDArray[np.float64]]: ...

@dataclass(frozen=True)
class JetResult:
    id: str
    log_likelihood: float
    tree: Tree
    log_z: float | None = None

_JetsInput = Jets | str | PathLike[str] | Sequence[npt.ArrayLike] | npt.NDArray[np.float64] | Any

def load(path: str | PathLike[str]) -> Jets: ...
def simulate(
    n_jets: int, min_leaves: int = 2, max_leaves: int | None = None, seed: int = 0, preset: Literal["qcd", "w"] = "qcd"
) -> Jets: ...
def cluster(
    jets: _JetsInput,
    method: _Method = "exact",
    likelihood: _Likelihood = "current",
    n_jobs: int | None = None,
    params: Mapping[str, float] | None = None,
    coords: _Coords | None = None,
    max_memory: float | None = None,
) -> list[JetResult]: ...
def cluster_many(
    jets: _JetsInput,
    client: Any = None,
    chunk_size: int = 1000,
    method: _Method = "exact",
    likelihood: _Likelihood = "current",
    n_jobs: int | None = None,
    params: Mapping[str, float] | None = None,
    coords: _Coords | None = None,
) -> list[JetResult]: ...
