"""Issue 21, the one reader: ``trellis.read_points`` is the library's reader,
so ``examples/quoted-names.csv`` (RFC 4180: quoted commas, doubled quotes,
CRLF, a name starting with ``#``) gives the names and rows that the CLI and
the web app give; an unterminated quote raises ``InputError``."""

from __future__ import annotations

import json
import pathlib
import subprocess

import numpy as np
import pytest

import trellis

ROOT = pathlib.Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "quoted-names.csv"
NAMES = ["Smith, J.", 'The "big" one', "#3 looks like a comment", "plain"]
ROWS = [[5.1, 3.5], [4.9, 3.0], [4.7, 3.2], [4.6, 3.1]]


def test_read_points_rfc4180_names_and_rows():
    names, x = trellis.read_points(EXAMPLE)
    assert names == NAMES
    assert x.dtype == np.float64 and x.shape == (4, 2)
    np.testing.assert_array_equal(x, np.array(ROWS))
    # Without a names column every column must be numeric.
    with pytest.raises(trellis.InputError, match="not a number"):
        trellis.read_points(EXAMPLE, names_column=None)


def test_read_points_equals_the_cli(cli):
    out = subprocess.run(
        [cli, "-q", "map", "--model", "hcc", "--points", str(EXAMPLE), "--similarity", "rbf", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout)["names"] == NAMES
    names, x = trellis.read_points(EXAMPLE)
    w = trellis.similarity(x, "rbf")
    post = trellis.exact_hierarchy(w, names=names)
    assert post.map_tree.names == NAMES
    assert json.loads(out.stdout)["cost"] == pytest.approx(post.map_cost, rel=1e-12)


def test_unterminated_quote_and_hash_rows(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text('name,x,y\na,1,2\n"b,3,4\nc,5,6\n')
    with pytest.raises(trellis.InputError, match="line 3: a quoted field opens here and is never closed"):
        trellis.read_points(bad)
    hashed = tmp_path / "hash.csv"
    hashed.write_text("name,x\na,1\n#b,2\n")
    names, x = trellis.read_points(hashed)
    assert names == ["a", "#b"] and x.shape == (2, 1)


def test_read_weights(tmp_path):
    p = tmp_path / "w.csv"
    p.write_text("0,1\r\n1,0\r\n")
    np.testing.assert_array_equal(trellis.read_weights(p), [[0.0, 1.0], [1.0, 0.0]])
    with pytest.raises(trellis.TrellisError, match="missing.csv"):
        trellis.read_weights(tmp_path / "missing.csv")


def test_version_is_the_workspace_version():
    """``trellis.__version__`` is the version Cargo builds the package with."""
    import re
    from pathlib import Path

    cargo = (Path(__file__).resolve().parents[3] / "Cargo.toml").read_text()
    expected = re.search(r'^version = "([^"]+)"', cargo, re.M).group(1)
    assert trellis.__version__ == expected
