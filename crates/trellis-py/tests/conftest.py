"""Shared fixtures: the CLI binary built from this checkout and the Ginkgo data."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def cli():
    """Path of the `trellis` CLI (TRELLIS_CLI, else target/release or target/debug)."""
    candidates = [os.environ.get("TRELLIS_CLI"), ROOT / "target/release/trellis", ROOT / "target/debug/trellis"]
    for c in candidates:
        if c and pathlib.Path(c).is_file():
            return str(c)
    pytest.skip("the trellis CLI is not built (cargo build --release -p trellis-cli)")


@pytest.fixture(scope="session")
def run_cli(cli):
    """Runs the CLI and returns its stdout."""

    def run(*args):
        out = subprocess.run([cli, *map(str, args)], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        return out.stdout

    return run


@pytest.fixture(scope="session")
def ginkgo_dir():
    """The shared Ginkgo jets files."""
    for d in (os.environ.get("TRELLIS_GINKGO_DATA"), ROOT.parent / "shared/data/ginkgo", "/work/shared/data/ginkgo"):
        if d and (pathlib.Path(d) / "ginkgo_small.json").is_file():
            return pathlib.Path(d)
    pytest.skip("the shared Ginkgo data is not available")
