"""Provenance of a result: the versions of dockrecon, its source commit and the libraries it
ran with, for every result file."""
from __future__ import annotations

import functools
import platform
import sys
from pathlib import Path

__all__ = ["LIBRARIES", "source_revision", "versions"]


@functools.lru_cache(maxsize=1)
def source_revision() -> str | None:
    """The git commit of the dockrecon source tree this process runs (12 hex digits, with
    ``+dirty`` when tracked files differ from it), or None outside a git checkout (an
    installed wheel) or without git."""
    import subprocess

    root = Path(__file__).resolve().parents[1]  # the source tree
    if not (root / ".git").exists():
        return None
    try:
        rev = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
                             capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                "--untracked-files=no"], capture_output=True, text=True,
                               timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if rev.returncode != 0 or not rev.stdout.strip():
        return None
    return rev.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


#: the numerical libraries whose versions a result records when the process has loaded them
LIBRARIES = ("numpy", "scipy", "numba", "pandas", "pyarrow", "emcee", "matplotlib", "arviz",
             "h5py", "lmfit")


def versions() -> dict[str, str]:
    """Versions of dockrecon (and its source commit when run from a git checkout:
    ``dockrecon_source``), Python, and each numerical library of :data:`LIBRARIES` that this
    process has loaded: the libraries the computation could have used, read from the loaded
    modules themselves (a library the process never imported is not named)."""
    from models import __version__

    out = {"python": platform.python_version(), "platform": platform.platform(),
           "dockrecon": __version__}
    for name in LIBRARIES:
        module = sys.modules.get(name)
        if module is not None:
            out[name] = str(getattr(module, "__version__", "unknown"))
    rev = source_revision()
    if rev is not None:
        out["dockrecon_source"] = rev
    return out
