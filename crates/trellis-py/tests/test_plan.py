"""The planner (issue 21): trellis._plan.plan, the library's estimate."""

import pytest

from trellis import InputError, TooLargeError
from trellis._plan import plan

KEYS = {"n", "model", "task", "memory_bytes", "seconds", "splits", "kernel", "threads", "method", "summary"}


def test_plan_fields():
    p = plan(20, model="hcc", task="logz", n_jobs=2)
    assert set(p) == KEYS
    assert (p["n"], p["model"], p["task"], p["threads"]) == (20, "hcc", "logz", 2)
    # (3^n - 2^(n+1) + 1) / 2 splits of one pass; the 8-byte pass (issue 25):
    # one f64 per subset, 16 bytes per block of 2^10 and 8 MiB of pair blocks.
    assert p["splits"] == (3**20 - 2**21 + 1) / 2
    assert p["memory_bytes"] == 8 * 2**20 + 16 * 2**10 + 8 * 2**20
    assert p["kernel"].startswith("blocked")
    assert 0 < p["seconds"] < 10
    assert p["method"] == "exact"
    assert "log Z over 20 points" in p["summary"]


def test_plan_grows_with_n_and_tasks():
    last = None
    for n in range(10, 31):
        p = plan(n, model="linkage-average", task="marginals", n_jobs=1)
        assert p["kernel"] == "general"
        if last is not None:
            assert p["seconds"] > last["seconds"]
            assert p["memory_bytes"] > last["memory_bytes"]
        last = p
    logz = plan(24, task="logz", n_jobs=2)
    marginals = plan(24, task="marginals", n_jobs=2)
    # The weight and outside passes (the outside pass has twice the terms);
    # infer adds the MAP tree's key pass.
    assert marginals["splits"] == 3 * logz["splits"]
    assert marginals["seconds"] > logz["seconds"]
    infer = plan(24, task="infer", n_jobs=2)
    assert infer["splits"] == 4 * logz["splits"] and infer["seconds"] > marginals["seconds"]
    assert plan(24, n_jobs=1)["seconds"] > plan(24, n_jobs=2)["seconds"]
    assert plan(20, model="cc", task="map")["kernel"].startswith("flat blocked")


def test_plan_linkage_summaries_count():
    avg = plan(20, model="linkage-average")
    complete = plan(20, model="linkage-complete")
    assert complete["memory_bytes"] - avg["memory_bytes"] == (8 * 20 + 16) * 2**20


def test_plan_budget_chooses_the_method():
    assert plan(26, max_memory=2**40, time_limit=3600, n_jobs=2)["method"] == "exact"
    # N = 26 log Z needs 521 MiB in the 8-byte pass: it fits 1 GiB, not 256 MiB.
    assert plan(26, max_memory=2**30, time_limit=3600, n_jobs=2)["method"] == "exact"
    assert plan(26, max_memory=2**28, time_limit=3600, n_jobs=2)["method"] == "approximate"
    assert plan(26, max_memory=2**40, time_limit=1, n_jobs=2)["method"] == "approximate"


def test_plan_errors():
    with pytest.raises(TooLargeError, match="31 points is too many"):
        plan(31)
    with pytest.raises(InputError, match="unknown model"):
        plan(10, model="ward")
    with pytest.raises(InputError, match="unknown task"):
        plan(10, task="partition")
    with pytest.raises(InputError, match="n_jobs"):
        plan(10, n_jobs=0)
    with pytest.raises(InputError, match="time_limit"):
        plan(10, time_limit=-1)
    with pytest.raises(InputError, match="max_memory"):
        plan(10, max_memory=0)
    with pytest.raises(InputError):
        plan(0)
    with pytest.raises(InputError):
        plan(2.5)
