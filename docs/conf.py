"""Sphinx configuration of the dockrecon documentation (``make docs``).

Built with warnings as errors (``-W --keep-going``). Nothing is fetched at build time: the
theme is Sphinx's own ``alabaster``, there is no intersphinx. Nothing is fetched when a page is
read either: the site loads no script, style sheet, font or image from another host (MathJax
is served from ``_static``, see below; ``tests/test_docs_browser.py`` checks it in Chromium). The page on files
(``files.rst``) includes ``_generated/files_reference.inc``, which
:mod:`dockrecon_files` (``docs/_ext``) writes from the code (the click commands, the
configuration readers) before the build reads any source, so it cannot drift from the code.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE / "_ext"))

# the worked examples draw with matplotlib; never open a window
os.environ.setdefault("MPLBACKEND", "Agg")

project = "dockrecon"
author = "dockrecon developers"
try:
    from importlib.metadata import version as _version

    release = _version("dockrecon")
except Exception:  # pragma: no cover - not installed: the docs still build from the tree
    release = "0.1.0"
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "dockrecon_files",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "_generated", "CONVENTIONS.md", "examples/GALLERY_HEADER.rst",
                    "**/*.inc"]
source_suffix = {".rst": "restructuredtext"}
root_doc = "index"

# -- API reference ------------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
autodoc_typehints = "none"          # numpydoc sections carry the types and units
numpydoc_show_class_members = False  # members are documented by autodoc, once
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

# -- worked examples (sphinx-gallery) ------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    # Executed at build time: every plot_*.py (the reconstruction of the nominal flight, the
    # longest: 70-80 s on 2 cores with the smaller budget it states, ~110 s with a cold
    # numba cache)
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "show_memory": False,
    "capture_repr": ("_repr_html_",),
    # the execution-times page (sg_execution_times) loads jQuery, DataTables and Bootstrap
    # from CDNs: not written. Each example page states its own running time.
    "write_computation_times": False,
}

# -- math ------------------------------------------------------------------------------------
# Sphinx's MathJax extension loads MathJax from a CDN by default, which an offline reader (or
# a reader behind a closed network) does not reach: every formula would stay raw TeX. The
# MathJax 3.2.2 distribution that the PyPI package ``sphinx-mathjax-offline`` ships (the
# ``docs`` extra installs it, so ``make docs`` on a fresh clone has it) is copied into
# ``_static/mathjax`` and loaded from there. The package is used as data only (its own
# ``setup`` is not run). Chosen over the alternatives: ``sphinx.ext.imgmath`` needs LaTeX and
# dvipng / dvisvgm, which are not on PyPI; docutils' own TeX-to-MathML converter knows a
# subset of LaTeX (no ``\big``, and ``\dot\Delta_n`` comes out as an under/over script), and
# Chromium renders MathML Core only, so formulas written for MathJax would render
# differently; the Debian package ``libjs-mathjax`` would need root on the build machine.
def _mathjax_dir() -> Path:
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        static = Path(distribution("sphinx-mathjax-offline").locate_file(
            "sphinx-mathjax-offline/static"))
    except PackageNotFoundError:
        raise RuntimeError("the docs need the package sphinx-mathjax-offline (MathJax for "
                           "offline reading): pip install -e '.[docs]', or make docs") from None
    if not (static / "mathjax" / "tex-chtml.js").is_file():
        raise RuntimeError(f"no mathjax/tex-chtml.js under {static}: the layout of "
                           "sphinx-mathjax-offline changed (docs/conf.py expects 0.0.2's)")
    return static


mathjax_path = "mathjax/tex-chtml.js"   # relative: under _static (MathJax 3: TeX in, CHTML out)

# -- HTML ----------------------------------------------------------------------------------
html_theme = "alabaster"
html_title = f"dockrecon {release}"
# the *contents* of each directory go into _static: <package>/static/mathjax -> _static/mathjax
html_static_path: list[str] = [str(_mathjax_dir())]
html_theme_options = {
    "description": "Post-flight reconstruction and parameter identification of spacecraft docking",
    "fixed_sidebar": False,
    "page_width": "1100px",
}
