from typing import Any

__all__ = ["plan"]

def plan(
    n: int,
    model: str = "hcc",
    task: str = "logz",
    n_jobs: int | None = None,
    max_memory: float | None = None,
    time_limit: float | None = None,
) -> dict[str, Any]: ...
