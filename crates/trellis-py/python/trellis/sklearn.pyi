"""Type stubs of ``trellis.sklearn``."""

from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from typing_extensions import Self

from ._core import HierarchyPosterior, PartitionPosterior, Tree

__all__ = ["TrellisFlat", "TrellisHierarchical"]

SIMILARITIES: tuple[str, ...]
METHODS: tuple[str, ...]
FLAT_METHODS: tuple[str, ...]
MODELS: tuple[str, ...]
FLAT_MODELS: tuple[str, ...]
MAX_EXACT_SECONDS: float
SUMMARIES: tuple[str, ...]
POSTERIOR_METHODS: tuple[str, ...]

_Similarity = Literal["rbf", "cosine", "dot", "expneg", "precomputed"]

class TrellisHierarchical:
    model: str
    method: str
    n_clusters: int | None
    beta: float
    similarity: str
    center: bool
    gamma: float | None
    max_exact_seconds: float | None
    max_memory: float | None
    seed: int
    n_jobs: int | None
    summary: str
    labels_: npt.NDArray[np.int64]
    n_clusters_: int
    children_: npt.NDArray[np.intp]
    distances_: npt.NDArray[np.float64]
    linkage_matrix_: npt.NDArray[np.float64]
    tree_: Tree
    cost_: float
    method_: Literal["exact", "astar", "approx", "greedy", "beam"]
    summary_: Literal["map", "mcc"]
    log_z_: float
    cluster_marginals_: list[tuple[tuple[int, ...], float]]
    posterior_: HierarchyPosterior
    n_leaves_: int
    n_features_in_: int
    feature_names_in_: npt.NDArray[np.object_]
    def __init__(
        self,
        model: Literal["hcc", "dasgupta"] = "hcc",
        method: Literal["auto", "exact", "astar", "approx", "greedy", "beam"] = "auto",
        n_clusters: int | None = None,
        beta: float = 1.0,
        similarity: _Similarity = "rbf",
        center: bool = True,
        gamma: float | None = None,
        max_exact_seconds: float | None = 5.0,
        max_memory: float | None = None,
        seed: int = 0,
        n_jobs: int | None = None,
        summary: Literal["map", "mcc"] = "map",
    ) -> None: ...
    def fit(self, X: npt.ArrayLike, y: Any = None) -> Self: ...
    def fit_predict(self, X: npt.ArrayLike, y: Any = None, **kwargs: Any) -> npt.NDArray[np.int64]: ...
    def get_params(self, deep: bool = True) -> dict[str, Any]: ...
    def set_params(self, **params: Any) -> Self: ...

class TrellisFlat:
    model: str
    method: str
    beta: float
    similarity: str
    center: bool
    gamma: float | None
    max_exact_seconds: float | None
    max_memory: float | None
    seed: int
    n_jobs: int | None
    labels_: npt.NDArray[np.int64]
    n_clusters_: int
    pairwise_marginals_: npt.NDArray[np.float64]
    log_z_: float
    cluster_marginals_: list[tuple[tuple[int, ...], float]]
    n_partitions_: int
    method_: Literal["exact", "approx"]
    tree_: Tree
    posterior_: PartitionPosterior
    n_features_in_: int
    feature_names_in_: npt.NDArray[np.object_]
    def __init__(
        self,
        model: Literal["cc"] = "cc",
        method: Literal["auto", "exact", "approx"] = "auto",
        beta: float = 1.0,
        similarity: _Similarity = "rbf",
        center: bool = True,
        gamma: float | None = None,
        max_exact_seconds: float | None = 5.0,
        max_memory: float | None = None,
        seed: int = 0,
        n_jobs: int | None = None,
    ) -> None: ...
    def fit(self, X: npt.ArrayLike, y: Any = None) -> Self: ...
    def fit_predict(self, X: npt.ArrayLike, y: Any = None, **kwargs: Any) -> npt.NDArray[np.int64]: ...
    def get_params(self, deep: bool = True) -> dict[str, Any]: ...
    def set_params(self, **params: Any) -> Self: ...
