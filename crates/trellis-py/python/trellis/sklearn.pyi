"""Type stubs of ``trellis.sklearn``."""

from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from typing_extensions import Self

from ._core import HierarchyPosterior, PartitionPosterior, Tree

__all__ = ["TrellisFlat", "TrellisHierarchical"]

SIMILARITIES: tuple[str, ...]
METHODS: tuple[str, ...]

_Similarity = Literal["cosine", "rbf", "dot", "expneg", "precomputed"]

class TrellisHierarchical:
    model: str
    method: str
    beta: float
    similarity: str
    center: bool
    n_clusters: int | None
    gamma: float | None
    seed: int
    n_jobs: int | None
    tree_: Tree
    children_: npt.NDArray[np.intp]
    linkage_matrix_: npt.NDArray[np.float64]
    labels_: npt.NDArray[np.int64]
    cost_: float
    log_z_: float
    cluster_marginals_: list[tuple[tuple[int, ...], float]]
    posterior_: HierarchyPosterior
    n_leaves_: int
    n_features_in_: int
    def __init__(
        self,
        model: Literal["hcc", "dasgupta"] = "hcc",
        method: Literal["exact", "astar", "approx", "greedy", "beam"] = "exact",
        beta: float = 1.0,
        similarity: _Similarity = "cosine",
        center: bool = True,
        n_clusters: int | None = None,
        gamma: float | None = None,
        seed: int = 0,
        n_jobs: int | None = None,
    ) -> None: ...
    def fit(self, X: npt.ArrayLike, y: Any = None) -> Self: ...
    def fit_predict(self, X: npt.ArrayLike, y: Any = None) -> npt.NDArray[np.int64]: ...
    def get_params(self, deep: bool = True) -> dict[str, Any]: ...
    def set_params(self, **params: Any) -> Self: ...

class TrellisFlat:
    model: str
    beta: float
    similarity: str
    center: bool
    gamma: float | None
    n_jobs: int | None
    labels_: npt.NDArray[np.int64]
    pairwise_marginals_: npt.NDArray[np.float64]
    log_z_: float
    cluster_marginals_: list[tuple[tuple[int, ...], float]]
    posterior_: PartitionPosterior
    n_features_in_: int
    def __init__(
        self,
        model: Literal["cc"] = "cc",
        beta: float = 1.0,
        similarity: _Similarity = "cosine",
        center: bool = True,
        gamma: float | None = None,
        n_jobs: int | None = None,
    ) -> None: ...
    def fit(self, X: npt.ArrayLike, y: Any = None) -> Self: ...
    def fit_predict(self, X: npt.ArrayLike, y: Any = None) -> npt.NDArray[np.int64]: ...
    def get_params(self, deep: bool = True) -> dict[str, Any]: ...
    def set_params(self, **params: Any) -> Self: ...
