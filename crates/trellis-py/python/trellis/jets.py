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

from . import _args, _core
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

    ``Jets(ids, leaves, offsets, params, truth=None, meta=None)``, usually
    from ``load`` or ``simulate``; the arguments are the attributes below,
    checked for shape and consistency (``InputError`` otherwise):

    - ``ids``: one string per jet;
    - ``leaves``: ``(M, 4)`` numbers ``(E, px, py, pz)``, every jet's
      leaves one after the other;
    - ``offsets``: ``len(ids) + 1`` integers rising from 0 to ``M``: jet
      ``k`` is ``leaves[offsets[k]:offsets[k + 1]]``;
    - ``params``: ``(len(ids), 3)`` numbers, each jet's ``lambda``,
      ``lambda_root`` and ``delta_min``;
    - ``truth``: ``None``, or one ``Tree`` (or ``None``) per jet;
    - ``meta``: anything (a file's ``meta`` object).

    ``len(jets)``; ``jets[k]`` is jet ``k``'s ``(n, 4)`` leaves; ``jets[a:b]``
    is a ``Jets`` of those jets; iterating gives each jet's leaves.
    """

    __slots__ = {
        "ids": "The jets' ids, one string per jet (a file's ids, or positions as text).",
        "leaves": "Every jet's leaves one after the other: an (M, 4) float64 array of (E, px, py, pz).",
        "offsets": "len + 1 int64 offsets into leaves: jet k is leaves[offsets[k]:offsets[k + 1]].",
        "params": "A (len, 3) float64 array: each jet's lambda, lambda_root and delta_min.",
        "truth": "The jets' true trees (a Tree or None per jet), or None when there are none.",
        "meta": "The jets file's meta object (a dict), or None.",
    }

    def __init__(self, ids, leaves, offsets, params, truth=None, meta=None):
        """See the class: ``ids``, ``leaves``, ``offsets``, ``params``,
        ``truth`` and ``meta``, checked."""
        if isinstance(ids, (str, bytes)):
            raise InputError("ids must be a sequence of one string per jet, not a single string")
        try:
            ids = list(ids)
        except TypeError:
            raise InputError(f"ids must be a sequence of one string per jet, not {type(ids).__name__}") from None
        bad = next((i for i in ids if not isinstance(i, str)), None)
        if bad is not None:
            raise InputError(f"ids must be strings, not {_args.show(bad)}")
        k = len(ids)
        leaves = _block(leaves, "leaves", 4, "(E, px, py, pz)")
        params = _block(params, "params", 3, "(lambda, lambda_root, delta_min)")
        if len(params) != k:
            raise InputError(f"params must have one row per jet ({k}), not {len(params)}")
        offsets = _offsets(offsets, k, len(leaves))
        if truth is not None:
            if not isinstance(truth, (list, tuple)) or len(truth) != k:
                raise InputError(f"truth must be None or a list of one Tree (or None) per jet ({k})")
            bad = next((t for t in truth if t is not None and not isinstance(t, Tree)), None)
            if bad is not None:
                raise InputError(f"truth holds a Tree or None per jet, not {_args.show(bad)}")
            truth = list(truth)
        self.ids = ids
        self.leaves = np.ascontiguousarray(leaves)
        self.offsets = offsets
        self.params = np.ascontiguousarray(params)
        self.truth = truth
        self.meta = meta

    def __len__(self):
        """The number of jets."""
        return len(self.ids)

    def __getitem__(self, k):
        """Jet ``k``'s ``(n, 4)`` leaves (``k`` an int), or the ``Jets`` of
        a slice of jets (step 1)."""
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
        """Each jet's ``(n, 4)`` leaves, in order."""
        return (self[k] for k in range(len(self)))

    def __repr__(self):
        """``Jets(K jets, M leaves)``."""
        return f"Jets({len(self)} jets, {len(self.leaves)} leaves)"


def _block(a, what, cols, meaning):
    """``a`` as a ``(rows, cols)`` float64 array (an empty ``a`` as
    ``(0, cols)``)."""
    if isinstance(a, (list, tuple)) and len(a) == 0:
        return np.zeros((0, cols))
    if isinstance(a, np.ndarray) and a.size == 0 and a.dtype.kind in "iuf":
        return np.zeros((0, cols))
    m = _args.matrix(a, what)
    if m.shape[1] != cols:
        raise InputError(f"{what} must have {cols} columns {meaning}, not shape {m.shape}")
    return m


def _offsets(offsets, k, m):
    """``offsets`` as ``k + 1`` int64 values rising from 0 to ``m``."""
    try:
        o = np.asarray(offsets)
    except (TypeError, ValueError):
        raise InputError(f"offsets must be a 1-D array of integers, not {_args.show(offsets)}") from None
    if o.ndim != 1 or o.dtype.kind not in "iu" or (o.dtype.kind == "u" and o.size and o.max() > 2**62):
        raise InputError(f"offsets must be a 1-D array of integers, not {_args.show(offsets)}")
    if len(o) != k + 1:
        raise InputError(f"offsets must have one more value than there are jets ({k + 1}), not {len(o)}")
    o = o.astype(np.int64)
    if o[0] != 0 or o[-1] != m or np.any(np.diff(o) < 0):
        raise InputError(f"offsets must rise from 0 to the number of leaves ({m}), not {_args.show(o.tolist())}")
    return np.ascontiguousarray(o)


@dataclass(frozen=True, init=False)
class JetResult:
    """One jet's clustering: ``id``, ``log_likelihood``, ``tree`` and
    ``log_z`` (see each attribute). Immutable, comparable and picklable.

    ``JetResult(id, log_likelihood, tree, log_z=None)``.
    """

    __slots__ = {
        "id": "The jet's id: from the jets file, or its position as text for arrays.",
        "log_likelihood": "The log-likelihood of tree under the Ginkgo likelihood (a float).",
        "tree": (
            "The tree found: a Tree over the jet's leaves (0-based, in input order), whose heights "
            "are each subtree's cumulative cost (its -log-likelihood), made monotone."
        ),
        "log_z": (
            "log Z: the log of the summed likelihood of every binary tree over the jet's leaves "
            "(a float) with method=\"exact\"; None for the other methods."
        ),
    }

    id: str
    log_likelihood: float
    tree: Tree
    log_z: float | None

    def __init__(self, id, log_likelihood, tree, log_z=None):
        """See the attributes: ``id``, ``log_likelihood``, ``tree``, ``log_z``."""
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "log_likelihood", log_likelihood)
        object.__setattr__(self, "tree", tree)
        object.__setattr__(self, "log_z", log_z)

    def __reduce__(self):
        """Pickling: the class and the four fields."""
        return (type(self), (self.id, self.log_likelihood, self.tree, self.log_z))


def _flat(parts) -> Jets:
    """The core's flat form as ``Jets``."""
    meta, ids, leaves, offsets, params, truth = parts
    return Jets(ids, leaves, offsets, params, truth, json.loads(meta))


def load(path) -> Jets:
    """Reads a jets file into ``Jets``.

    ``path`` (a ``str`` or ``os.PathLike``): JSON ``{"meta": ..., "jets":
    [{"id", "leaves": [[E, px, py, pz], ...], "params": {"lambda",
    "lambda_root", "delta_min"}, "truth": nested list (optional)}, ...]}``,
    validated as the CLI's ``--jets`` (``InputError`` naming the jet and
    field otherwise)."""
    return _flat(_core.jets_read(_args.path(path)))


def simulate(n_jets, min_leaves=2, max_leaves=None, seed=0, preset="qcd") -> Jets:
    """Simulates jets with the Ginkgo shower, with their true trees in ``truth``.

    ``n_jets``: the number of jets, ``>= 0``. ``min_leaves`` and
    ``max_leaves``: each jet has ``min_leaves <= N <= max_leaves`` leaves
    (both inclusive; ``max_leaves=None`` for no upper bound; jets outside are
    re-simulated). ``seed``: 0 to ``2**64 - 1``; jet ``k`` depends only on
    ``(seed, k)``. ``preset``: ``"qcd"`` (rates 1.5, mass 30, ``delta_min``
    16) or ``"w"`` (root rate 3, mass 80, ``delta_min`` 4). The jets equal
    those of ``trellis generate --n-jets K --min-leaves A --max-leaves B
    --seed S --preset P``."""
    return _flat(_core.jets_simulate(
        _args.integer(n_jets, "n_jets", 0), _args.integer(min_leaves, "min_leaves", 0),
        _args.integer(max_leaves, "max_leaves", 0, optional=True), _args.seed(seed),
        _args.text(preset, "preset"),
    ))


def _params_row(params):
    """``params`` (a dict, or ``None`` for ``DEFAULT_PARAMS``) as a row."""
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
    return [_args.number(params[k], f"params[{k!r}]") for k in ("lambda", "lambda_root", "delta_min")]


def _to_epxpypz(cols, coords):
    """Four columns in ``coords`` as ``(E, px, py, pz)`` columns."""
    if coords == "EPxPyPz":
        return cols
    pt, eta, phi, m = cols
    px, py, pz = pt * np.cos(phi), pt * np.sin(phi), pt * np.sinh(eta)
    return np.sqrt(px * px + py * py + pz * pz + m * m), px, py, pz


def _check_coords(coords, what):
    """``coords`` among the coordinate systems known."""
    coords = _args.text(coords, "coords")
    if coords not in _COORDS:
        raise InputError(f"coords must be \"EPxPyPz\" or \"PtEtaPhiM\" for {what}, not {coords!r}")


def _from_awkward(arr, coords, params) -> Jets:
    """An awkward array of jets of particle records as ``Jets``."""
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
    """A list of ``(n, 4)`` arrays as ``Jets``."""
    if coords is None:
        coords = "EPxPyPz"
    _check_coords(coords, "arrays")
    blocks = []
    for k, a in enumerate(seq):
        a = _args.matrix(a, f"jet {k}")
        if a.shape[1] != 4:
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
    """Any accepted form of ``jets`` as ``Jets``."""
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
    """``method`` and ``likelihood`` among the names known."""
    method = _args.text(method, "method")
    likelihood = _args.text(likelihood, "likelihood")
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
    n_jobs, max_memory = _args.jobs(n_jobs), _args.memory(max_memory)
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
    """``cluster`` over a ``dask.distributed.Client``.

    ``client``: a ``dask.distributed.Client``, or ``None`` for the same as
    ``cluster(jets, ..., n_jobs=n_jobs)`` in this process. ``chunk_size``:
    jets per task, ``>= 1``: the jets are split into chunks, each a task that
    runs ``cluster(chunk, n_jobs=1)`` (one Rust thread per task, so that
    Dask's workers and threads set the parallelism), and the results come
    back in input order. ``jets``, ``method``, ``likelihood``, ``n_jobs``
    (without a client only), ``params`` and ``coords`` as in ``cluster``.
    """
    _check(method, likelihood)
    chunk_size = _args.integer(chunk_size, "chunk_size", 1)
    js = _as_jets(jets, params, coords)
    if client is None:
        return cluster(js, method=method, likelihood=likelihood, n_jobs=n_jobs)
    js = Jets(js.ids, js.leaves, js.offsets, js.params)  # truth trees stay here
    chunks = [js[a : a + chunk_size] for a in range(0, len(js), chunk_size)]
    # Scattered first, so that the task graph stays small whatever the data.
    futures = client.map(_cluster_chunk, client.scatter(chunks), method=method,
                         likelihood=likelihood, pure=False)
    return [r for part in client.gather(futures) for r in part]
