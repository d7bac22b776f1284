"""Type stubs of the compiled core, ``trellis._core``."""

from collections.abc import Iterable, Sequence
from typing import Any, Literal, final

import numpy as np
import numpy.typing as npt

MAX_JOBS: int
__version__: str

class TrellisError(ValueError): ...
class InputError(TrellisError): ...
class TooLargeError(TrellisError): ...

_Nested = int | list[Any]

@final
class Tree:
    @staticmethod
    def from_newick(text: str, names: Sequence[str] | None = None) -> Tree: ...
    @staticmethod
    def from_nested(obj: _Nested, names: Sequence[str] | None = None) -> Tree: ...
    @staticmethod
    def from_linkage(z: npt.ArrayLike, names: Sequence[str] | None = None) -> Tree: ...
    @property
    def n(self) -> int: ...
    @property
    def names(self) -> list[str] | None: ...
    @property
    def heights(self) -> list[float] | None: ...
    def to_nested(self) -> _Nested: ...
    def clusters(self) -> list[tuple[int, ...]]: ...
    def to_newick(
        self, support: HierarchyPosterior | Sequence[float] | None = None, lengths: bool = True
    ) -> str: ...
    def to_linkage(self, heights: Literal["cost", "rank"] | None = None) -> npt.NDArray[np.float64]: ...
    def __len__(self) -> int: ...
    def _repr_svg_(self) -> str | None: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class HierarchyPosterior:
    @property
    def n(self) -> int: ...
    @property
    def log_z(self) -> float: ...
    @property
    def num_trees(self) -> int: ...
    @property
    def map_tree(self) -> Tree: ...
    @property
    def map_cost(self) -> float: ...
    @property
    def map_log_potential(self) -> float: ...
    def cluster_marginals(self, min_p: float = 0.01) -> list[tuple[tuple[int, ...], float]]: ...
    def marginal(self, members: Iterable[int | str]) -> float: ...
    def subtree_probability(self, tree: Tree | str | _Nested) -> float: ...
    def sample(self, k: int, seed: int = 0) -> list[Tree]: ...
    def _repr_html_(self) -> str | None: ...

@final
class PartitionPosterior:
    @property
    def n(self) -> int: ...
    @property
    def log_z(self) -> float: ...
    @property
    def num_partitions(self) -> int: ...
    @property
    def map_labels(self) -> npt.NDArray[np.int64]: ...
    @property
    def map_log_energy(self) -> float: ...
    def cluster_marginals(self, min_p: float = 0.01) -> list[tuple[tuple[int, ...], float]]: ...
    def pairwise_marginals(self) -> npt.NDArray[np.float64]: ...
    def sample(self, k: int, seed: int = 0) -> list[npt.NDArray[np.int64]]: ...
    def _repr_html_(self) -> str | None: ...

@final
class AstarResult:
    @property
    def tree(self) -> Tree: ...
    @property
    def cost(self) -> float: ...
    @property
    def exact(self) -> bool: ...
    @property
    def explored(self) -> int: ...
    @property
    def log_potential(self) -> float: ...

def similarity(
    points: npt.NDArray[np.float64], kind: str = "cosine", gamma: float | None = None, center: bool = False
) -> npt.NDArray[np.float64]: ...
def exact_hierarchy(
    data: npt.NDArray[np.float64],
    kind: str = "weights",
    model: str = "hcc",
    beta: float = 1.0,
    names: Sequence[str] | None = None,
    max_memory: float | None = None,
    n_jobs: int | None = None,
    triplets: Sequence[tuple[int, int, int]] = ...,
) -> HierarchyPosterior: ...
def exact_partition(
    weights: npt.NDArray[np.float64],
    model: str = "cc",
    beta: float = 1.0,
    names: Sequence[str] | None = None,
    max_memory: float | None = None,
    n_jobs: int | None = None,
    must_link: Sequence[tuple[int, int]] = ...,
    cannot_link: Sequence[tuple[int, int]] = ...,
) -> PartitionPosterior: ...
def astar(
    data: npt.NDArray[np.float64],
    kind: str = "weights",
    model: str = "hcc",
    approx: bool = False,
    seed: int = 0,
    beta: float = 1.0,
    names: Sequence[str] | None = None,
    max_explored: int | None = None,
    time_limit: float | None = None,
    max_memory: float | None = None,
    n_jobs: int | None = None,
    triplets: Sequence[tuple[int, int, int]] = ...,
) -> AstarResult: ...
def greedy(
    data: npt.NDArray[np.float64],
    kind: str = "weights",
    model: str = "hcc",
    beta: float = 1.0,
    names: Sequence[str] | None = None,
) -> Tree: ...
def beam(
    data: npt.NDArray[np.float64],
    kind: str = "weights",
    model: str = "hcc",
    beta: float = 1.0,
    width: int | None = None,
    names: Sequence[str] | None = None,
) -> Tree: ...
def score(
    tree: Tree | str | _Nested,
    data: npt.NDArray[np.float64],
    kind: str = "weights",
    model: str = "hcc",
    beta: float = 1.0,
    names: Sequence[str] | None = None,
) -> float: ...
def linkage(
    points: npt.NDArray[np.float64] | None = None,
    distances: npt.NDArray[np.float64] | None = None,
    method: str = "average",
    names: Sequence[str] | None = None,
    optimal_ordering: bool = False,
    condensed: npt.NDArray[np.float64] | None = None,
) -> Tree: ...

# trellis.jets: the jets collections in the flat form (meta as JSON text,
# ids, leaves, offsets, params, truth trees) and their clustering.
_Flat = tuple[
    str,
    list[str],
    npt.NDArray[np.float64],
    npt.NDArray[np.int64],
    npt.NDArray[np.float64],
    list[Tree | None],
]

def jets_read(path: str) -> _Flat: ...
def jets_simulate(n_jets: int, min_leaves: int, max_leaves: int | None, seed: int, preset: str) -> _Flat: ...
def jets_preset_params(preset: str) -> tuple[float, float, float]: ...
def jets_cluster(
    leaves: npt.NDArray[np.float64],
    offsets: npt.NDArray[np.int64],
    params: npt.NDArray[np.float64],
    ids: Sequence[str],
    method: str = "exact",
    likelihood: str = "current",
    n_jobs: int | None = None,
    max_memory: float | None = None,
) -> tuple[npt.NDArray[np.float64], list[Tree], npt.NDArray[np.float64] | None]: ...

# trellis.interactive
_Point = int | str

@final
class Sampler:
    def __new__(
        cls,
        points: npt.NDArray[np.float64],
        names: Sequence[str] | None = None,
        sigma: float | str | Sequence[float] | None = None,
        seed: int = 0,
        c: float = 1.0,
        sigma0: float | str | Sequence[float] | None = None,
        leaf_noise: float = 0.01,
        rebuild: str = "guided",
        subset_size: int = 10,
        candidates: int = 20,
        strategy: str = "active",
        samples: int = 100,
    ) -> Sampler: ...
    def run(self, iterations: int) -> None: ...
    def add_triplet(self, a: _Point, b: _Point, c: _Point) -> bool: ...
    def undo(self) -> tuple[Any, Any, Any] | None: ...
    @property
    def tree(self) -> Tree: ...
    @property
    def triplets(self) -> list[tuple[Any, Any, Any]]: ...
    @property
    def log_likelihood(self) -> float: ...
    @property
    def n(self) -> int: ...
    @property
    def strategy(self) -> str: ...
    @property
    def iterations(self) -> int: ...
    def query(self, strategy: str | None = None) -> Tree | None: ...

def triplet_distance(tree_a: Tree, tree_b: Tree) -> float: ...
def read_table(
    path: str, header: bool = True, names_column: str | int | None = None
) -> tuple[list[str] | None, npt.NDArray[np.float64]]: ...
def plan(
    n: int,
    model: str = "hcc",
    task: str = "logz",
    n_jobs: int | None = None,
    max_memory: float | None = None,
    time_limit: float | None = None,
) -> dict[str, Any]: ...
