"""The checks of the package's arguments, in one place.

Every public function and method of ``trellis`` checks its arguments with
these (the compiled classes call them too), so a bad argument -- a wrong
type, a negative count, a ragged list, a number out of range -- raises
``InputError`` with one sentence that names the argument, never numpy's or
PyO3's ``TypeError``, ``ValueError`` or ``OverflowError``.
"""

from __future__ import annotations

import os

import numpy as np

from ._core import MAX_JOBS, InputError

#: The largest integer argument accepted anywhere (seeds are 64-bit).
MAX_INT = 2**64 - 1


def show(x) -> str:
    """``repr(x)`` on one line, cut to a readable length for a message."""
    try:
        text = " ".join(repr(x).split())
    except Exception:  # noqa: BLE001 - a broken __repr__ must not hide the error
        text = f"a {type(x).__name__}"
    return text if len(text) <= 60 else text[:57] + "..."


def _ragged(a) -> str | None:
    """How the nested sequence ``a`` is ragged (rows of different lengths,
    or a row that is a number where others are lists), or ``None``."""
    if not isinstance(a, (list, tuple)):
        return None
    lengths: list[int | None] = []
    for row in a:
        if isinstance(row, (str, bytes)) or not hasattr(row, "__len__"):
            lengths.append(None)
        else:
            lengths.append(len(row))
    if len(set(lengths)) <= 1:
        return None
    first = lengths[0]
    i = next(i for i, k in enumerate(lengths) if k != first)

    def describe(k):
        return "a single value" if k is None else f"{k} value{'s' if k != 1 else ''}"

    return f"row 0 has {describe(first)} but row {i} has {describe(lengths[i])}"


def matrix(a, what: str) -> np.ndarray:
    """``a`` as a 2-D float64 array (no copy when it already is one).

    Accepts numbers of any real dtype (float32, integers), any memory order
    and nested lists; refuses ragged lists, strings, booleans, complex
    numbers and anything that is not 2-D, naming ``what``.
    """
    if isinstance(a, (str, bytes)):
        raise InputError(f"{what} must be a 2-D array of numbers, not the string {show(a)}")
    try:
        raw = np.asarray(a)
    except (TypeError, ValueError) as e:
        why = _ragged(a)
        if why is not None:
            raise InputError(f"{what} is a ragged list ({why}): a 2-D array needs rows of one length") from None
        raise InputError(f"{what} must be a 2-D array of numbers: {e}") from None
    kind = raw.dtype.kind
    if kind == "c":
        raise InputError(f"{what} must be real numbers, not complex")
    if kind == "b":
        raise InputError(f"{what} must be numbers, not booleans (convert them with .astype(float))")
    if kind in "USV":
        raise InputError(f"{what} must be numbers, not strings or records (dtype {raw.dtype})")
    if kind in "mM":
        raise InputError(f"{what} must be numbers, not dates or durations (dtype {raw.dtype})")
    if raw.ndim != 2:
        why = _ragged(a) if raw.dtype == object else None
        if why is not None:
            raise InputError(f"{what} is a ragged list ({why}): a 2-D array needs rows of one length")
        raise InputError(f"{what} must be a 2-D array, not {raw.ndim}-D (shape {raw.shape})")
    if kind == "O":
        for x in raw.flat:
            if isinstance(x, (str, bytes, bool, np.bool_)) or _complex(x):
                raise InputError(f"{what} must hold numbers only, not {show(x)}")
    try:
        return np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise InputError(f"{what} must be a 2-D array of numbers: {e}") from None


def names(names, what: str = "names"):
    """``names`` as a list of strings (one per point, each ``str(x)``), or
    ``None``. Their number, emptiness and uniqueness are checked where the
    number of points is known."""
    if names is None:
        return None
    if isinstance(names, (str, bytes)):
        raise InputError(f"{what} must be a sequence of one name per point, not a single string")
    if isinstance(names, np.ndarray) and names.ndim != 1:
        raise InputError(f"{what} must be a flat sequence of names, not a {names.ndim}-D array")
    try:
        return [str(x) for x in names]
    except TypeError:
        raise InputError(f"{what} must be a sequence of one name per point, not {type(names).__name__}") from None


def _complex(x) -> bool:
    """Whether ``x`` is a complex number (or holds complex numbers)."""
    try:
        return bool(np.iscomplexobj(x))
    except (TypeError, ValueError):
        return False


def number(x, what: str, *, optional: bool = False):
    """``x`` as a Python float: an int or a real number, not a string, a
    boolean or a complex number (``None`` kept when ``optional``). Its range
    is the caller's to check."""
    if x is None and optional:
        return None
    if isinstance(x, (str, bytes, bool, np.bool_)) or _complex(x):
        raise InputError(f"{what} must be a real number, not {show(x)}")
    if isinstance(x, np.ndarray) and x.ndim != 0:
        raise InputError(f"{what} must be a single number, not an array of shape {x.shape}")
    try:
        return float(x)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{what} must be a real number, not {show(x)}") from None


def probability(x, what: str) -> float:
    """``x`` as a float in ``[0, 1]``."""
    p = number(x, what)
    if not 0.0 <= p <= 1.0:
        raise InputError(f"{what} must be a probability between 0 and 1, not {p}")
    return p


def integer(x, what: str, minimum=None, maximum=MAX_INT, *, optional: bool = False):
    """``x`` as a Python int (an int or a numpy integer; not a float, a
    string or a boolean) in ``[minimum, maximum]`` (``None`` kept when
    ``optional``)."""
    if x is None and optional:
        return None
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise InputError(f"{what} must be an integer, not {show(x)}")
    x = int(x)
    if minimum is not None and x < minimum:
        raise InputError(f"{what} must be at least {minimum}, not {x}")
    if maximum is not None and x > maximum:
        raise InputError(f"{what} must be at most {maximum}, not {x}")
    return x


def seed(x, what: str = "seed") -> int:
    """A seed: an integer in ``[0, 2**64 - 1]``."""
    return integer(x, what, 0, MAX_INT)


def jobs(n_jobs):
    """``n_jobs``: ``None`` (the default pool), ``-1`` (every core) or a
    number of threads from 1 to ``MAX_JOBS``."""
    k = integer(n_jobs, "n_jobs", None, None, optional=True)
    if k is not None and not (k == -1 or 1 <= k <= MAX_JOBS):
        raise InputError(f"n_jobs must be -1 (every core) or between 1 and {MAX_JOBS}, not {k}")
    return k


def memory(max_memory):
    """``max_memory`` as a float number of bytes, or ``None`` (its range is
    checked by the core)."""
    return number(max_memory, "max_memory", optional=True)


def text(x, what: str, *, optional: bool = False):
    """``x``, a string (``None`` kept when ``optional``)."""
    if x is None and optional:
        return None
    if not isinstance(x, str):
        raise InputError(f"{what} must be a string, not {show(x)}")
    return x


def flag(x, what: str) -> bool:
    """``x``, a boolean (``True``/``False`` or a numpy boolean)."""
    if not isinstance(x, (bool, np.bool_)):
        raise InputError(f"{what} must be True or False, not {show(x)}")
    return bool(x)


def path(p, what: str = "path") -> str:
    """``p`` as a file system path (a ``str`` or an ``os.PathLike``)."""
    try:
        p = os.fspath(p)
    except TypeError:
        raise InputError(f"{what} must be a path (str or os.PathLike), not {show(p)}") from None
    if isinstance(p, bytes):
        p = os.fsdecode(p)
    return p


def point_tuples(items, size: int, what: str, names, n: int) -> list:
    """``items`` (a sequence of ``size``-tuples of points, each a 0-based
    index or, when ``names`` are given, a name) as tuples of indices below
    ``n``; ``[]`` for ``None``."""
    if items is None:
        return []
    if isinstance(items, (str, bytes)):
        raise InputError(f"{what} must be a sequence of {size}-tuples of points, not a string")
    index = {name: i for i, name in enumerate(names)} if names is not None else {}
    out = []
    try:
        entries = list(items)
    except TypeError:
        raise InputError(f"{what} must be a sequence of {size}-tuples of points, not {type(items).__name__}") from None
    for k, entry in enumerate(entries):
        if isinstance(entry, (str, bytes)) or not hasattr(entry, "__len__") or len(entry) != size:
            raise InputError(f"{what}[{k}] must be {size} points, not {show(entry)}")
        points = []
        for x in entry:
            if isinstance(x, str):
                if x not in index:
                    hint = "" if names is not None else " (names need names=)"
                    raise InputError(f"{what}[{k}]: {x!r} is not a point name{hint}")
                points.append(index[x])
            elif isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
                raise InputError(f"{what}[{k}] must hold point indices or names, not {show(x)}")
            elif not 0 <= int(x) < n:
                raise InputError(f"{what}[{k}]: point {int(x)} is out of range for {n} points")
            else:
                points.append(int(x))
        out.append(tuple(points))
    return out
