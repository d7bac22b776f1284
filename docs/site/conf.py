"""Sphinx configuration of the Trellis documentation site.

Why Sphinx (and not mkdocs-material + mkdocstrings): the site's gallery is
made of executed Python examples whose matplotlib figures are part of the
page, and sphinx-gallery does exactly that (it runs every ``plot_*.py`` in
``examples/``, captures its output and figures, and fails the build when one
raises). autodoc reads the docstrings from the installed package, the
compiled extension ``trellis._core`` included (mkdocstrings reads source files
statically and does not see a compiled module's docstrings), and myst-parser
takes the repository's Markdown pages unchanged. See README.md beside this
file for how to build.

At configuration time this file also writes, under ``_generated/`` (ignored
by git):

- ``cli.md``, the CLI reference, from the ``trellis`` binary's own ``--help``
  (``cli_reference.py``);
- ``guide/``, copies of the repository's ``docs/*.md`` pages and their
  ``docs/figures`` (so their relative links and pictures work unchanged);
- ``python-package.md``, a copy of the package's README
  (``crates/trellis-py/README.md``).
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import sys

from sphinx.util import logging

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
GENERATED = HERE / "_generated"

sys.path.insert(0, str(HERE))
import cli_reference  # noqa: E402

import trellis  # noqa: E402  (the installed package: autodoc documents it)

project = "Trellis"
author = "the Trellis developers"
copyright = "the Trellis developers"
release = version = trellis.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "README.md", "examples/README.txt", "**/.ipynb_checkpoints"]

# --- the pages generated from the repository --------------------------------


def _generate() -> None:
    """The CLI reference and the copies of docs/*.md (see the module docstring)."""
    GENERATED.mkdir(exist_ok=True)
    cli_reference.main(["cli_reference", str(GENERATED / "cli.md")])
    guide = GENERATED / "guide"
    if guide.exists():
        shutil.rmtree(guide)
    guide.mkdir()
    shutil.copy2(ROOT / "crates" / "trellis-py" / "README.md", GENERATED / "python-package.md")
    for page in sorted((ROOT / "docs").glob("*.md")):
        shutil.copy2(page, guide / page.name)
    shutil.copytree(ROOT / "docs" / "figures", guide / "figures")


_generate()

# --- MyST (the Markdown pages) -----------------------------------------------

myst_enable_extensions = ["dollarmath"]
# GitHub-style anchors, so links such as benchmarks.md#flat-trellis resolve.
myst_heading_anchors = 4

# --- autodoc -----------------------------------------------------------------

autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": False}
autodoc_typehints = "description"
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False
# Parameters as a field list whose types are text: a type such as
# "array_like, shape (n, n)" is not a cross-reference (to every attribute `n`).
napoleon_use_param = False

# A paragraph of prose after a numpydoc "Parameters" list, with no section
# heading of its own ("Returns a Tree ..."), is read by napoleon as more
# parameters and rendered as bold nonsense without any warning. This check
# (run after napoleon) makes it a warning, so that -W fails the build: give
# such prose a "Returns", "Raises" or "Notes" section.
_FIELD = re.compile(r"^\s*(?::Parameters:\s*)?\* \*\*(.+?)\*\*")
_log = logging.getLogger("trellis-docs")


def _check_fields(app, what, name, obj, options, lines):
    for line in lines:
        m = _FIELD.match(line)
        if m and re.search(r"[^,]\s", m.group(1)):
            _log.warning(
                "%s: the docstring's prose %r is read as a parameter: give it a section "
                "(Returns, Raises, Notes)", name, m.group(1)[:60],
            )


def setup(app):
    app.connect("autodoc-process-docstring", _check_fields, priority=900)


# --- sphinx-gallery ----------------------------------------------------------

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "_generated/gallery",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py|_data\.py",
    "download_all_examples": False,
    "remove_config_comments": True,
    # An example that raises fails the build (with -W, so does a warning).
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "show_memory": False,
    "within_subsection_order": "FileNameSortKey",
    "image_scrapers": ("matplotlib",),
    "matplotlib_animations": False,
}

# The examples find the repository's data files through this variable.
os.environ.setdefault("TRELLIS_REPO_ROOT", str(ROOT))

# --- HTML --------------------------------------------------------------------

html_theme = "furo"
html_title = f"Trellis {release}"
html_static_path: list[str] = []
