"""Provenance of a benchmark's results file: the machine, the commit of the source tree and the
command line that produced it.

Every script that writes a file in ``benchmarks/results/`` puts :func:`provenance` under the
key ``"provenance"`` of its JSON document; ``benchmarks/make_readme.py`` prints it under each
table of ``benchmarks/README.md``::

    {"machine": {"cpu": "AMD EPYC", "cpus": 2, "platform": "Linux-...-x86_64", "python": "3.11.7"},
     "commit": "0123456789ab",            # git rev-parse --short=12 HEAD, "+dirty" if modified
     "command": "python benchmarks/accuracy_docking.py --draws 60 --seed 11",
     "utc": "2026-01-01T00:00:00Z"}

Standard library only, so that a script can record its provenance before it imports anything
heavy, and so that this module does not move with the packages.
"""
from __future__ import annotations

import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["ROOT", "command", "commit", "machine", "provenance"]

#: the repository (the source tree whose commit is recorded by default)
ROOT = Path(__file__).resolve().parent.parent


def machine() -> dict:
    """The CPU model (``/proc/cpuinfo``, None elsewhere), the number of CPUs, the platform
    (without the C library's suffix) and the Python version."""
    cpu = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": cpu, "cpus": os.cpu_count(),
            "platform": platform.platform().split("-with-")[0],
            "python": platform.python_version()}


def commit(tree: str | os.PathLike = ROOT) -> str | None:
    """``git rev-parse --short=12 HEAD`` of the git checkout holding ``tree`` (a directory or a
    file in it), with ``+dirty`` when tracked files differ from it; None outside a checkout or
    without git."""
    tree = Path(tree).resolve()
    cwd = tree if tree.is_dir() else tree.parent
    try:
        rev = subprocess.run(["git", "-C", str(cwd), "rev-parse", "--short=12", "HEAD"],
                             capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", str(cwd), "status", "--porcelain",
                                "--untracked-files=no"], capture_output=True, text=True,
                               timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if rev.returncode != 0 or not rev.stdout.strip():
        return None
    return rev.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def _arg(value: str) -> str:
    """A path inside the repository relative to it (so that the command runs from any clone);
    anything else as given."""
    if os.path.isabs(value):
        try:
            return os.path.relpath(value, ROOT) if Path(value).resolve().is_relative_to(
                ROOT) else value
        except (OSError, ValueError):
            return value
    return value


def command(script: str | os.PathLike, argv: list[str] | None = None) -> str:
    """The command line that runs ``script`` (a file of ``benchmarks/``) with ``argv`` (default:
    this process's arguments), from the repository's root: ``python benchmarks/NAME.py ...``."""
    if argv is None:
        argv = sys.argv[1:]
    name = os.path.relpath(Path(script).resolve(), ROOT)
    return shlex.join(["python", name, *(_arg(str(a)) for a in argv)])


def provenance(script: str | os.PathLike, argv: list[str] | None = None, *,
               tree: str | os.PathLike = ROOT, cmd: str | None = None) -> dict:
    """The ``"provenance"`` entry of a results file: :func:`machine`, the :func:`commit` of
    ``tree`` (default: this checkout; a script that times another checkout's command passes
    that checkout), and the :func:`command` of ``script`` with ``argv`` (or ``cmd`` as given),
    with the UTC time."""
    return {"machine": machine(), "commit": commit(tree),
            "command": cmd if cmd is not None else command(script, argv),
            "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
