"""The planner: time and memory of an exact computation, before it runs."""

from __future__ import annotations

from typing import Any

from . import _args, _core

__all__ = ["plan"]


def plan(
    n: int,
    model: str = "hcc",
    task: str = "logz",
    n_jobs: int | None = None,
    max_memory: float | None = None,
    time_limit: float | None = None,
) -> dict[str, Any]:
    """Estimate an exact computation over ``n`` points before running it.

    The library's planner (``trellis::plan``, shared with the ``trellis``
    command and the web app) counts the work of the passes that will run --
    ``(3**n - 2**(n+1) + 1) / 2`` splits per inside pass of the hierarchical
    trellis, twice that for the outside pass of the marginals,
    ``(3**n - 1) / 2`` terms per pass of the flat trellis (``model="cc"``) --
    and multiplies it by the measured time per split of the kernel that will
    run, divided by the threads, plus a fixed overhead. Measured accuracy:
    within 2x for hierarchical correlation clustering at 18-26 points on the
    machine it was calibrated on (a 2-core AVX2 server); a loaded or slower
    machine takes longer. The memory is the library's own check (the peak of
    the trellis tables), the same figure that refuses a run that would not
    fit.

    Parameters
    ----------
    n : int
        Number of points, 1 to 30 (the dense trellises' limit).
    model : str
        A model id: ``"hcc"``, ``"dasgupta"``, ``"linkage-average"``,
        ``"linkage-complete"``, ``"linkage-single"``, ``"ginkgo"``,
        ``"ginkgo-legacy"`` (hierarchies) or ``"cc"`` (flat partitions).
    task : str
        ``"logz"`` (log Z alone), ``"map"`` (the MAP tree alone),
        ``"marginals"`` (every cluster marginal: inside and outside pass),
        ``"infer"`` (MAP, log Z and marginals from one trellis, the same
        work as ``"marginals"``), ``"sample"`` (the full inside pass),
        ``"mcc"`` (the maximum-clade-credibility tree: the marginals' work,
        then one more max-plus pass on the blocked kernel, and that pass's
        tables beside the posterior's) or ``"consensus"`` (the majority-rule
        consensus tree: the marginals' work). ``"mcc"`` and ``"consensus"``
        summarise hierarchies: ``InputError`` with ``model="cc"``.
    n_jobs : int or None
        Threads: ``None`` the default pool (one per core), ``-1`` every core.
    max_memory : float or None
        Memory budget in bytes; ``None`` for the memory the operating system
        reports as available.
    time_limit : float or None
        Time budget in seconds; ``None`` for no limit.

    Returns
    -------
    dict
        ``"n"`` (int), ``"model"`` and ``"task"`` (str, as given, normalised);
        ``"memory_bytes"`` (int): peak bytes of the trellis tables;
        ``"seconds"`` (float): estimated wall-clock time on ``"threads"``
        threads; ``"splits"`` (float): units of work over all passes (splits
        and outside terms; flat-trellis terms for ``"cc"``); ``"kernel"``
        (str): the kernel that will run (``"blocked (avx2)"``,
        ``"blocked (portable)"``, ``"level-order"``, ``"general"``,
        ``"flat blocked (avx2)"``, ...); ``"threads"`` (int): the threads
        the time is for; ``"method"`` (str): ``"exact"`` when the estimate
        fits ``max_memory`` and ``time_limit``, else ``"approximate"``
        (use approximate A* -- ``trellis.astar(..., approx=True)`` -- or a
        sparse trellis with beam search); ``"summary"`` (str): the estimate
        as one sentence.

    Raises
    ------
    TooLargeError
        For more than 30 points (no exact method: use an approximate one).
    InputError
        For an unknown model or task, or a bad ``n_jobs``, ``max_memory`` or
        ``time_limit``.

    Examples
    --------
    >>> p = plan(26, model="hcc", task="logz", n_jobs=2)
    >>> p["kernel"].startswith("blocked")
    True
    >>> plan(26, max_memory=2**30)["method"]
    'approximate'
    """
    return _core.plan(
        _args.integer(n, "n", 1), _args.text(model, "model"), _args.text(task, "task"), _args.jobs(n_jobs),
        _args.memory(max_memory), _args.number(time_limit, "time_limit", optional=True),
    )
