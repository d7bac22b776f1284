"""Every ```python block of the repository README's "Python" section runs.

The blocks run in order in one namespace (a later block may use what an
earlier one defined), with the repository root as the working directory, so
a snippet can read ``../shared/data/...`` as the README's commands do.
"""

from __future__ import annotations

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


def test_extraction_of_blocks():
    text = (
        "# T\n\n## Rust\n```python\nnot = 'this'\n```\n"
        "## Python\ntext\n```python\na = 1\n```\n### Sub\n```bash\nls\n```\n```py\nb = a + 1\n```\n"
        "## Next\n```python\nc = 3\n```\n"
    )
    assert python_blocks(python_section(text)) == ["a = 1", "b = a + 1"]
    assert python_section("# T\n## Rust\n") is None


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
    """Every ```python block of the package's own README (crates/trellis-py)."""
    blocks = python_blocks(PACKAGE_README.read_text(encoding="utf-8"))
    assert blocks, "the package README has an example"
    pytest.importorskip("scipy")
    monkeypatch.chdir(README.parent)
    namespace: dict = {"__name__": "__readme__"}
    for k, code in enumerate(blocks, 1):
        exec(compile(code, f"crates/trellis-py/README.md (block {k})", "exec"), namespace)
