"""Every ```python block of the repository README's "Python" section runs.

The blocks run in order in one namespace (a later block may use what an
earlier one defined), with the repository root as the working directory, so
a snippet can read ``../shared/data/...`` as the README's commands do.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[3] / "README.md"
PACKAGE_README = Path(__file__).resolve().parents[1] / "README.md"


def python_section(text: str) -> str | None:
    """The text of the first heading (any level) whose title is or starts
    with "Python", up to the next heading of the same or a higher level;
    ``None`` when there is no such heading. Headings inside code fences are
    not headings."""
    lines = text.splitlines()
    in_fence = False
    start = level = None
    for i, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        depth, title = len(m.group(1)), m.group(2)
        if start is None:
            if re.match(r"^python\b", title, re.IGNORECASE):
                start, level = i + 1, depth
        elif depth <= level:
            return "\n".join(lines[start:i])
    return None if start is None else "\n".join(lines[start:])


def python_blocks(section: str) -> list[str]:
    """The bodies of the ```python (or ```py) fenced blocks, in order."""
    blocks, current = [], None
    for line in section.splitlines():
        stripped = line.strip()
        if current is None:
            if re.match(r"^```\s*(python|py|python3)\b", stripped, re.IGNORECASE):
                current = []
        elif stripped.startswith("```"):
            blocks.append("\n".join(current))
            current = None
        else:
            current.append(line)
    return blocks


def blocks_with_output(text: str) -> list[tuple[str, str | None]]:
    """The ```python blocks of ``text``, each with the output it prints:
    the body of a ```text block that follows it with only blank lines or
    one line of prose between (``None`` when there is none)."""
    lines = text.splitlines()
    out: list[tuple[str, str | None]] = []
    i = 0
    while i < len(lines):
        if not re.match(r"^```\s*(python|py|python3)\b", lines[i].strip(), re.IGNORECASE):
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith("```"):
            j += 1
        code = "\n".join(lines[i + 1 : j])
        # Skip blank lines and at most one line of prose (not a heading or a fence).
        k, prose = j + 1, 0
        while k < len(lines):
            line = lines[k].strip()
            if line and (prose or line.startswith(("#", "```"))):
                break
            prose += bool(line)
            k += 1
        expected = None
        if k < len(lines) and lines[k].strip() in ("```text", "```output"):
            m = k + 1
            while m < len(lines) and not lines[m].strip().startswith("```"):
                m += 1
            expected = "\n".join(lines[k + 1 : m]) + "\n"
            j = m
        out.append((code, expected))
        i = j + 1
    return out


def test_extraction_of_blocks():
    text = (
        "# T\n\n## Rust\n```python\nnot = 'this'\n```\n"
        "## Python\ntext\n```python\na = 1\n```\n### Sub\n```bash\nls\n```\n```py\nb = a + 1\n```\n"
        "## Next\n```python\nc = 3\n```\n"
    )
    assert python_blocks(python_section(text)) == ["a = 1", "b = a + 1"]
    assert python_section("# T\n## Rust\n") is None
    shown = "```python\nprint(1)\n```\n\nprints:\n\n```text\n1\n```\n```python\nx = 2\n```\n## A\n```text\nno\n```\n"
    assert blocks_with_output(shown) == [("print(1)", "1\n"), ("x = 2", None)]


def test_readme_python_section_runs(monkeypatch):
    if not README.exists():
        pytest.skip(f"no README at {README}")
    section = python_section(README.read_text(encoding="utf-8"))
    if section is None:
        pytest.skip("the README has no \"Python\" section yet")
    blocks = python_blocks(section)
    if not blocks:
        pytest.skip("the README's \"Python\" section has no ```python block yet")
    monkeypatch.chdir(README.parent)
    monkeypatch.setenv("MPLBACKEND", "Agg")  # a snippet that plots draws off screen
    namespace: dict = {"__name__": "__readme__"}
    for k, code in enumerate(blocks, 1):
        try:
            exec(compile(code, f"README.md (Python section, block {k})", "exec"), namespace)
        except Exception as e:  # pragma: no cover - the failure is the report
            pytest.fail(f"block {k} of the README's Python section failed: {type(e).__name__}: {e}\n{code}")
    # A snippet that draws must not leave figures open.
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


def test_package_readme_runs(monkeypatch):
    """Every ```python block of the package's own README (crates/trellis-py)
    runs, and prints what the ```text block after it shows."""
    blocks = blocks_with_output(PACKAGE_README.read_text(encoding="utf-8"))
    assert blocks, "the package README has an example"
    assert any(expected for _, expected in blocks), "the package README shows an example's output"
    pytest.importorskip("scipy")
    pytest.importorskip("sklearn")
    monkeypatch.chdir(README.parent)
    namespace: dict = {"__name__": "__readme__"}
    for k, (code, expected) in enumerate(blocks, 1):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(code, f"crates/trellis-py/README.md (block {k})", "exec"), namespace)
        if expected is not None:
            assert printed.getvalue() == expected, f"block {k} printed:\n{printed.getvalue()}"
