"""Jets: hierarchical clustering of particle jets under the Ginkgo likelihood.

A jet is a set of observed particles (4-momenta ``(E, px, py, pz)``); its
latent binary tree is the showering history. This module reads jets files
(the JSON format of the Ginkgo datasets, as ``trellis ... --jets FILE``),
simulates jets with the Ginkgo shower, and finds each jet's tree:

>>> from trellis import jets
>>> js = jets.simulate(100, min_leaves=5, max_leaves=9, seed=1)
>>> results = jets.cluster(js, method="exact")         # one call, every core
>>> results[0].log_likelihood, results[0].log_z, results[0].tree

``cluster_many`` runs the same through a ``dask.distributed.Client``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np

from . import _core
from ._core import InputError, Tree

__all__ = ["JetResult", "Jets", "cluster", "cluster_many", "load", "simulate"]

#: The likelihood parameters used for jets given as arrays without
#: ``params``: the simulator's ``qcd`` preset.
DEFAULT_PARAMS = dict(zip(("lambda", "lambda_root", "delta_min"), _core.jets_preset_params("qcd")))

_METHODS = ("exact", "greedy", "beam", "astar")
_LIKELIHOODS = ("current", "legacy")
_COORDS = ("EPxPyPz", "PtEtaPhiM")
# Field names of awkward records, by coordinate system (case-insensitive).
_FIELDS = {
    "EPxPyPz": (("e", "energy", "t"), ("px", "x"), ("py", "y"), ("pz", "z")),
    "PtEtaPhiM": (("pt", "rho"), ("eta",), ("phi",), ("m", "mass", "tau")),
}


class Jets:
    """Many jets in one flat block (cheap to slice, pickle and send to Dask).

    Attributes: ``ids`` (list of str), ``leaves`` (``(M, 4)`` float64 of
    ``(E, px, py, pz)``, every jet's leaves one after the other),
    ``offsets`` (``len + 1`` int64: jet ``k`` is ``leaves[offsets[k]:offsets[k + 1]]``),
    ``params`` (``(len, 3)`` float64: ``lambda``, ``lambda_root``,
    ``delta_min`` of each jet), ``truth`` (a ``Tree`` or ``None`` per jet, or
    ``None``) and ``meta`` (the file's ``meta`` object).

    ``len(jets)``; ``jets[k]`` is jet ``k``'s ``(n, 4)`` leaves; ``jets[a:b]``
    is a ``Jets`` of those jets.
    """

    __slots__ = ("ids", "leaves", "offsets", "params", "truth", "meta")

    def __init__(self, ids, leaves, offsets, params, truth=None, meta=None):
        self.ids = list(ids)
        self.leaves = np.ascontiguousarray(leaves, dtype=np.float64)
        self.offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        self.params = np.ascontiguousarray(params, dtype=np.float64)
        self.truth = truth
        self.meta = meta

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, k):
        if isinstance(k, slice):
            start, stop, step = k.indices(len(self))
            if step != 1:
                raise InputError("jets can be sliced with step 1 only")
            stop = max(start, stop)
            a, b = self.offsets[start], self.offsets[stop]
            return Jets(
                self.ids[start:stop],
                self.leaves[a:b],
                self.offsets[start : stop + 1] - a,
                self.params[start:stop],
                None if self.truth is None else self.truth[start:stop],
                self.meta,
            )
        k = range(len(self))[k]
        return self.leaves[self.offsets[k] : self.offsets[k + 1]]

    def __iter__(self):
        return (self[k] for k in range(len(self)))

    def __repr__(self):
        return f"Jets({len(self)} jets, {len(self.leaves)} leaves)"


@dataclass(frozen=True)
class JetResult:
    """One jet's clustering: its ``id``, the ``tree`` found (a ``Tree`` over
    the jet's leaves, heights the cumulative cost ``-log-likelihood`` of each
    subtree made monotone), that tree's ``log_likelihood``, and ``log_z``
    (the log of the sum of the likelihoods of every tree; ``method="exact"``
    only, else ``None``)."""

    id: str
    log_likelihood: float
    tree: Tree
    log_z: float | None = None


def _flat(parts) -> Jets:
    meta, ids, leaves, offsets, params, truth = parts
    return Jets(ids, leaves, offsets, params, truth, json.loads(meta))


def load(path) -> Jets:
    """Reads a jets file: JSON ``{"meta": ..., "jets": [{"id", "leaves":
    [[E, px, py, pz], ...], "params": {"lambda", "lambda_root", "delta_min"},
    "truth": nested list (optional)}, ...]}``, validated as the CLI's
    ``--jets`` (``InputError`` naming the jet and field otherwise)."""
    return _flat(_core.jets_read(os.fspath(path)))


def simulate(n_jets, min_leaves=2, max_leaves=None, seed=0, preset="qcd") -> Jets:
    """Simulates ``n_jets`` jets with the Ginkgo shower, each with
    ``min_leaves <= N <= max_leaves`` leaves (both inclusive, ``None`` for no
    upper bound; jets outside are re-simulated), and their true trees in
    ``truth``. ``preset``: ``"qcd"`` (rates 1.5, mass 30, ``delta_min`` 16)
    or ``"w"`` (root rate 3, mass 80, ``delta_min`` 4). ``seed``: jet ``k``
    depends only on ``(seed, k)``; the jets equal those of ``trellis generate
    --n-jets K --min-leaves A --max-leaves B --seed S --preset P``."""
    return _flat(_core.jets_simulate(int(n_jets), int(min_leaves),
                                     None if max_leaves is None else int(max_leaves),
                                     int(seed), preset))


def _params_row(params):
    if params is None:
        params = DEFAULT_PARAMS
    if not isinstance(params, dict):
        raise InputError("params must be a dict with lambda, lambda_root and delta_min")
    unknown = set(params) - set(DEFAULT_PARAMS)
    missing = set(DEFAULT_PARAMS) - set(params)
    if unknown or missing:
        raise InputError(
            "params must have exactly the keys lambda, lambda_root and delta_min"
            + (f"; unknown: {sorted(unknown)}" if unknown else "")
            + (f"; missing: {sorted(missing)}" if missing else "")
        )
    try:
        return [float(params[k]) for k in ("lambda", "lambda_root", "delta_min")]
    except (TypeError, ValueError):
        raise InputError("params values must be numbers") from None


def _to_epxpypz(cols, coords):
    """Four columns in ``coords`` as ``(E, px, py, pz)`` columns."""
    if coords == "EPxPyPz":
        return cols
    pt, eta, phi, m = cols
    px, py, pz = pt * np.cos(phi), pt * np.sin(phi), pt * np.sinh(eta)
    return np.sqrt(px * px + py * py + pz * pz + m * m), px, py, pz


def _check_coords(coords, what):
    if coords not in _COORDS:
        raise InputError(f"coords must be \"EPxPyPz\" or \"PtEtaPhiM\" for {what}, not {coords!r}")


def _from_awkward(arr, coords, params) -> Jets:
    import awkward as ak

    if coords is None:
        raise InputError(
            "an awkward array of particles needs coords=\"EPxPyPz\" or coords=\"PtEtaPhiM\": "
            "the coordinate system is never guessed from the field names"
        )
    _check_coords(coords, "awkward input")
    try:
        counts = np.asarray(ak.to_numpy(ak.num(arr, axis=1)), dtype=np.int64)
        flat = ak.flatten(arr, axis=1)
    except Exception as e:  # noqa: BLE001 - awkward raises many kinds
        raise InputError(f"awkward input must be a list of jets, each a list of particle records: {e}") from None
    fields = {f.lower(): f for f in ak.fields(flat)}
    cols = []
    for aliases in _FIELDS[coords]:
        name = next((fields[a] for a in aliases if a in fields), None)
        if name is None:
            raise InputError(
                f"coords={coords!r} needs a field named one of {list(aliases)} (any case); "
                f"the records have {ak.fields(flat)}"
            )
        try:
            cols.append(np.asarray(ak.to_numpy(flat[name]), dtype=np.float64))
        except Exception as e:  # noqa: BLE001
            raise InputError(f"field {name!r} must hold one number per particle: {e}") from None
    leaves = np.stack(_to_epxpypz(cols, coords), axis=1)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    k = len(counts)
    return Jets([str(i) for i in range(k)], leaves, offsets, np.tile(_params_row(params), (k, 1)))


def _from_arrays(seq, coords, params) -> Jets:
    if coords is None:
        coords = "EPxPyPz"
    _check_coords(coords, "arrays")
    blocks = []
    for k, a in enumerate(seq):
        try:
            a = np.asarray(a, dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise InputError(f"jet {k} must be an (n, 4) array of numbers: {e}") from None
        if a.ndim != 2 or a.shape[1] != 4:
            raise InputError(f"jet {k} must be an (n, 4) array of {coords} rows, not shape {a.shape}")
        blocks.append(np.stack(_to_epxpypz(a.T, coords), axis=1))
    if not blocks:
        raise InputError("no jets were given")
    counts = [len(b) for b in blocks]
    offsets = np.concatenate([[0], np.cumsum(counts)])
    k = len(blocks)
    return Jets([str(i) for i in range(k)], np.concatenate(blocks), offsets,
                np.tile(_params_row(params), (k, 1)))


def _as_jets(jets, params=None, coords=None) -> Jets:
    if isinstance(jets, Jets):
        if params is not None or coords is not None:
            raise InputError("params and coords apply to arrays; loaded or simulated jets carry their own")
        return jets
    if isinstance(jets, (str, os.PathLike)):
        if params is not None or coords is not None:
            raise InputError("params and coords apply to arrays; a jets file carries its own")
        return load(jets)
    if type(jets).__module__.split(".")[0] == "awkward":
        return _from_awkward(jets, coords, params)
    if isinstance(jets, np.ndarray) and jets.ndim == 3:
        return _from_arrays(list(jets), coords, params)
    if isinstance(jets, (list, tuple)):
        return _from_arrays(jets, coords, params)
    raise InputError(
        "jets must be loaded or simulated Jets, a path to a jets file, a list of (n, 4) arrays, "
        f"or an awkward array of particle records, not {type(jets).__name__}"
    )


def _check(method, likelihood):
    if method not in _METHODS:
        raise InputError(f"method must be one of {', '.join(map(repr, _METHODS))}, not {method!r}")
    if likelihood not in _LIKELIHOODS:
        raise InputError(f"likelihood must be \"current\" or \"legacy\", not {likelihood!r}")


def cluster(jets, method="exact", likelihood="current", n_jobs=None, params=None, coords=None,
            max_memory=None):
    """Finds the tree of every jet; returns one ``JetResult`` per jet, in input order.

    ``jets``: ``Jets`` from ``load`` or ``simulate`` (each jet with its own
    parameters), a path to a jets file, a list (or ``(k, n, 4)`` array) of
    ``(n, 4)`` arrays, or an awkward array of jets of particle records.
    ``method``: ``"exact"`` (the MAP tree of the exact trellis, with ``log_z``;
    up to 30 leaves; as ``trellis map --jets``), ``"greedy"`` (as ``trellis
    greedy --jets``), ``"beam"`` (width ``n(n-1)/2`` up to 40 leaves, 1000
    above, as ``trellis beam --jets``) or ``"astar"`` (exact A* with the admissible heuristic h0, as
    ``trellis astar --jets``). ``likelihood``: ``"current"`` (the Ginkgo
    likelihood, ``--model ginkgo``) or ``"legacy"`` (the paper-era one,
    ``--model ginkgo-legacy``). ``n_jobs``: threads (default every core);
    jets run in parallel, one call for the whole list, the interpreter released.
    ``params`` (arrays and awkward only): ``{"lambda", "lambda_root",
    "delta_min"}`` for every jet; default ``DEFAULT_PARAMS``, the simulator's
    ``qcd`` preset (1.5, 1.5, 16). ``coords``: for awkward input,
    ``"EPxPyPz"`` (fields ``E``/``px``/``py``/``pz``) or ``"PtEtaPhiM"``
    (fields ``pt``/``eta``/``phi``/``mass``), required, never guessed; for
    arrays, the columns' meaning (default ``"EPxPyPz"``). ``max_memory``:
    bytes the exact tables may use.

    Raises ``InputError`` for bad input (naming the jet) and ``TooLargeError``
    for a jet too large for the method.
    """
    _check(method, likelihood)
    js = _as_jets(jets, params, coords)
    lls, trees, log_z = _core.jets_cluster(js.leaves, js.offsets, js.params, js.ids,
                                           method, likelihood, n_jobs, max_memory)
    if log_z is None:
        return [JetResult(i, float(ll), t) for i, ll, t in zip(js.ids, lls, trees)]
    return [JetResult(i, float(ll), t, float(z)) for i, ll, t, z in zip(js.ids, lls, trees, log_z)]


def _cluster_chunk(chunk, method, likelihood):
    """A Dask task: one chunk on one Rust thread."""
    return cluster(chunk, method=method, likelihood=likelihood, n_jobs=1)


def cluster_many(jets, client=None, chunk_size=1000, method="exact", likelihood="current",
                 n_jobs=None, params=None, coords=None):
    """``cluster`` over a ``dask.distributed.Client``: the jets are split into
    chunks of ``chunk_size``, each chunk a task that runs ``cluster(chunk,
    n_jobs=1)`` (one Rust thread per task, so that Dask's workers and threads
    set the parallelism), and the results come back in input order.
    Without a client, the same as ``cluster(jets, ..., n_jobs=n_jobs)``.
    Other arguments as ``cluster``.
    """
    _check(method, likelihood)
    js = _as_jets(jets, params, coords)
    if client is None:
        return cluster(js, method=method, likelihood=likelihood, n_jobs=n_jobs)
    if int(chunk_size) < 1:
        raise InputError(f"chunk_size must be at least 1, not {chunk_size}")
    chunk_size = int(chunk_size)
    js = Jets(js.ids, js.leaves, js.offsets, js.params)  # truth trees stay here
    chunks = [js[a : a + chunk_size] for a in range(0, len(js), chunk_size)]
    # Scattered first, so that the task graph stays small whatever the data.
    futures = client.map(_cluster_chunk, client.scatter(chunks), method=method,
                         likelihood=likelihood, pure=False)
    return [r for part in client.gather(futures) for r in part]
