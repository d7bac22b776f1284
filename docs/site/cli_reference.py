"""Writes the CLI reference page from the `trellis` binary's own help.

Run by ``conf.py`` at every build (and usable alone:
``python docs/site/cli_reference.py OUT.md``). It runs ``trellis --help``, reads
the subcommands from the "Commands:" section of clap's help text, and recurses
into each (``trellis flat --help``, ``trellis flat map --help``, ...), so the
page is the binary's help verbatim and cannot go stale.

The binary is ``$TRELLIS_CLI`` when set, else ``target/release/trellis`` or
``target/debug/trellis`` of this checkout (the newer of the two), else
``trellis`` on the ``PATH``.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def find_cli() -> str:
    """The path of the `trellis` binary to document (see the module docstring)."""
    given = os.environ.get("TRELLIS_CLI")
    if given:
        if not os.access(given, os.X_OK):
            raise SystemExit(f"cli_reference: TRELLIS_CLI={given} is not an executable")
        return given
    built = [ROOT / "target" / kind / "trellis" for kind in ("release", "debug")]
    built = [p for p in built if p.is_file()]
    if built:
        return str(max(built, key=lambda p: p.stat().st_mtime))
    on_path = shutil.which("trellis")
    if on_path:
        return on_path
    raise SystemExit(
        "cli_reference: no trellis binary: build it (cargo build --release -p trellis-cli) "
        "or set TRELLIS_CLI"
    )


def help_text(cli: str, words: list[str]) -> str:
    """``trellis WORDS --help``, checked to succeed."""
    run = subprocess.run(
        [cli, *words, "--help"], capture_output=True, text=True, timeout=60,
        env={**os.environ, "COLUMNS": "100", "NO_COLOR": "1"},
    )
    if run.returncode != 0:
        raise SystemExit(f"cli_reference: `trellis {' '.join(words)} --help` failed: {run.stderr}")
    return run.stdout.rstrip() + "\n"


def subcommands(text: str) -> list[str]:
    """The names listed under clap's ``Commands:`` heading (without ``help``)."""
    names, inside = [], False
    for line in text.splitlines():
        if line.strip() == "Commands:":
            inside = True
            continue
        if inside:
            if not line.startswith("  "):
                break
            word = line.split()[0] if line.split() else ""
            # A wrapped description line is indented further than a name.
            if line.startswith("  " + word) and word and word != "help":
                names.append(word)
    return names


def walk(cli: str, words: list[str]) -> list[tuple[list[str], str]]:
    """Every (subcommand path, help text) below ``words``, depth first."""
    text = help_text(cli, words)
    pages = [(words, text)]
    for name in subcommands(text):
        pages += walk(cli, [*words, name])
    return pages


def render(cli: str) -> str:
    """The reference page as Markdown (MyST)."""
    pages = walk(cli, [])
    if len(pages) < 2:
        # clap's help format changed, or this is not the trellis binary:
        # an empty reference must not pass for a complete one.
        raise SystemExit(f"cli_reference: `{cli} --help` lists no subcommands under 'Commands:'")
    version = subprocess.run([cli, "--version"], capture_output=True, text=True).stdout.strip()
    out = [
        "# CLI reference\n",
        f"Generated at build time from the help of the `trellis` binary ({version}): "
        "each section is `trellis ... --help` verbatim. The repository README has the "
        "overview and examples.\n",
    ]
    for words, text in pages:
        title = " ".join(["trellis", *words])
        heading = "#" * min(2 + max(len(words) - 1, 0), 4)
        out.append(f"{heading} `{title}`\n\n```text\n$ {title} --help\n{text}```\n")
    return "\n".join(out)


def main(argv: list[str]) -> None:
    if len(argv) != 2:
        raise SystemExit("usage: cli_reference.py OUT.md")
    path = pathlib.Path(argv[1])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(find_cli()))


if __name__ == "__main__":
    main(sys.argv)
