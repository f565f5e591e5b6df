"""numba kernels: flat float64 / int64 arrays, SI units, no objects, no I/O, no logging.

Conventions (see docs/CONVENTIONS.md):

* every kernel is ``@njit(**NJIT)`` (``cache=True`` so the compile is paid once per machine);
* discrete state (branch numbers, latch flags) is int64 arrays mutated in place, continuous state
  float64 arrays;
* errors inside kernels are returned as integer status codes and turned into typed exceptions by
  the readable wrapper (numba cannot raise exceptions that carry data).

Cache guard
-----------
numba's on-disk cache (``cache=True``) checks only the source file that defines a cached
function: a kernel whose callee lives in another module (``probe_cone.run`` calling
``contact_revolution.sphere_vs_revolution``, ``hysteresis.hyst_force``, ``rigid_body``...; a
constant such as ``contact_layout.PERP_MIN`` frozen into the caller's machine code) would be
loaded stale after an edit of that module. Importing this package therefore first compares a
SHA-256 digest of the names and bytes of every module of the package (``models/_kernels/*.py``;
no kernel calls a compiled function outside it) with a stamp kept beside numba's cache files
(:data:`STAMP_NAME` in the directory numba caches this package in: ``__pycache__`` here, or
the package's subdirectory of ``NUMBA_CACHE_DIR`` when that is set). On a mismatch it deletes
the package's cache files (``*.nbi``, ``*.nbc``) and then writes the new stamp (a temporary
file renamed over the old one), so any edit of any kernel module recompiles every kernel once.

Concurrent imports (pytest-xdist workers) are safe: a file that another process removed first
is skipped, the stamp is replaced atomically, and numba itself treats an index whose data
file has vanished as a miss. A second process that clears the directory after the first has
already written fresh cache files only costs a recompile. The check reads the sources (0.25 MB)
and the stamp: about 1 ms when they match, 3 ms at a process's first import. Setting the
environment variable ``DOCKRECON_KERNEL_CACHE_GUARD`` to ``0`` turns it off (numba's own check
only; ``tests/models/test_kernel_cache.py`` uses it to show the stale result).
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

NJIT = {"cache": True, "nogil": True, "error_model": "numpy"}

#: file name of the digest of the kernel sources, in numba's cache directory of this package
STAMP_NAME = "kernel_sources.sha256"
#: environment variable that turns the cache guard off when set to ``0``
GUARD_ENV = "DOCKRECON_KERNEL_CACHE_GUARD"

__all__ = ["NJIT", "STAMP_NAME", "GUARD_ENV", "sources_digest", "numba_cache_dir"]

_HERE = Path(__file__).resolve().parent


def sources_digest() -> str:
    """SHA-256 (hex) of the names and contents of every ``*.py`` of this package."""
    h = hashlib.sha256()
    for path in sorted(_HERE.glob("*.py")):
        h.update(path.name.encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def numba_cache_dir() -> Path | None:
    """The directory in which numba caches the kernels of this package (``None`` when numba
    has no writable one), found by numba's own locators in numba's order: the package's
    subdirectory of ``NUMBA_CACHE_DIR`` when that is set, else ``__pycache__`` beside the
    sources, else the user-wide cache."""
    try:
        from numba.core.caching import FunctionCache
    except ImportError:
        # numba's internals moved: its documented rule for the two usual places
        root = os.environ.get("NUMBA_CACHE_DIR")
        if root:
            sub = hashlib.sha1(str(_HERE).encode()).hexdigest()
            return Path(os.path.abspath(root)) / f"{_HERE.name}_{sub}"
        return _HERE / "__pycache__"
    try:
        # the cache numba would build for a function of this package (this one)
        return Path(FunctionCache(numba_cache_dir).cache_path)
    except RuntimeError:    # "no locator available": numba does not cache here either
        return None


def _guard_numba_cache() -> None:
    """Delete this package's numba cache files when the kernel sources differ from the stamp
    (see the module docstring)."""
    if os.environ.get(GUARD_ENV, "") == "0":
        return
    cache = numba_cache_dir()
    if cache is None:
        return
    digest = sources_digest()
    stamp = cache / STAMP_NAME
    try:
        if stamp.read_text() == digest:
            return
    except OSError:
        pass
    try:
        for pattern in ("*.nbi", "*.nbc"):
            for path in cache.glob(pattern):
                try:
                    path.unlink()
                except FileNotFoundError:
                    pass    # another process removed it first
        fd, tmp = tempfile.mkstemp(dir=cache, prefix=STAMP_NAME + ".", suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(digest)
            os.replace(tmp, stamp)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        pass    # a directory numba cannot write to either


_guard_numba_cache()
