"""numba kernels: flat float64 / int64 arrays, SI units, no objects, no I/O, no logging.

Conventions (see docs/CONVENTIONS.md):

* every kernel is ``@njit(**NJIT)`` (``cache=True`` so the compile is paid once per machine),
  or ``@njit(**NJIT_LEAF)`` when it allocates and returns no array (:data:`NJIT_LEAF`);
* discrete state (branch numbers, latch flags) is int64 arrays mutated in place, continuous state
  float64 arrays;
* errors inside kernels are returned as integer status codes and turned into typed exceptions by
  the readable wrapper (numba cannot raise exceptions that carry data).

Where the kernels live: the ones every model shares (contact, frames, rigid bodies,
hysteresis, the trace buffer, free flight; the rod appendage, the hydraulic rig and the
resonance oscillator) here; each docking unit's own kernels in its folder
(``models/probe_cone/_kernels``, ``models/peripheral/_kernels``), which import from here and
never from another unit's (:data:`KERNEL_PACKAGES`).

Cache guard
-----------
numba's on-disk cache (``cache=True``) checks only the source file that defines a cached
function: a kernel whose callee lives in another module (the probe-cone's ``kernel.run``
calling ``contact_revolution.sphere_vs_revolution``, ``hysteresis.hyst_force``,
``rigid_body``...; a constant such as ``contact_layout.PERP_MIN`` frozen into the caller's
machine code) would be loaded stale after an edit of that module. Importing a kernel package
(this one, or a unit's, through :func:`guard_numba_cache`) therefore first compares a SHA-256
digest of the names and bytes of every module of every kernel package
(:func:`sources_digest`; no kernel calls a compiled function outside them) with a stamp kept
beside numba's cache files of that package (:data:`STAMP_NAME` in the directory numba caches
the package in: its ``__pycache__``, or its subdirectory of ``NUMBA_CACHE_DIR`` when that is
set). On a mismatch it deletes the package's cache files (``*.nbi``, ``*.nbc``) and then
writes the new stamp (a temporary file renamed over the old one), so any edit of any kernel
module, shared or a unit's, recompiles every kernel once.

Concurrent imports (pytest-xdist workers) are safe: a file that another process removed first
is skipped, the stamp is replaced atomically, and numba itself treats an index whose data
file has vanished as a miss. A second process that clears the directory after the first has
already written fresh cache files only costs a recompile. The check reads the sources (0.25 MB)
and the stamp: a few milliseconds per kernel package at a process's first import. Setting the
environment variable ``DOCKRECON_KERNEL_CACHE_GUARD`` to ``0`` turns it off (numba's own check
only; ``tests/models/test_kernel_cache.py`` uses it to show the stale result).
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

NJIT = {"cache": True, "nogil": True, "error_model": "numpy"}
#: :data:`NJIT` without numba's reference counting (NRT), for the kernels that only read and
#: write arrays they are given: no array is allocated in them (numba refuses to compile an
#: allocation without NRT), returned by them, or returned to them by a callee (a reference
#: they would never release). numba otherwise counts a reference at the entry of every
#: function for each array argument and for every row view, with an atomic update that is
#: not inlined: on the docking units' stage functions, called ~25 000 times a run with 5-25
#: arrays each, those updates took 20 % of a peripheral 20-s run. Arithmetic is unchanged,
#: so results are bit for bit those with NRT. ``tests/models/test_kernel_leaf.py`` holds
#: the rules.
NJIT_LEAF = {**NJIT, "_nrt": False}

#: file name of the digest of the kernel sources, in numba's cache directory of this package
STAMP_NAME = "kernel_sources.sha256"
#: environment variable that turns the cache guard off when set to ``0``
GUARD_ENV = "DOCKRECON_KERNEL_CACHE_GUARD"

__all__ = ["NJIT", "NJIT_LEAF", "STAMP_NAME", "GUARD_ENV", "KERNEL_PACKAGES", "kernel_dirs",
           "sources_digest", "numba_cache_dir", "guard_numba_cache"]

_HERE = Path(__file__).resolve().parent
_MODELS = _HERE.parent

#: the kernel packages, as folders under ``models/``: the shared one and each docking unit's
KERNEL_PACKAGES = ("_kernels", "probe_cone/_kernels", "peripheral/_kernels")


def kernel_dirs() -> tuple[Path, ...]:
    """The folders of :data:`KERNEL_PACKAGES`."""
    return tuple(_MODELS / p for p in KERNEL_PACKAGES)


def sources_digest() -> str:
    """SHA-256 (hex) of the names and contents of every ``*.py`` of every kernel package."""
    h = hashlib.sha256()
    for folder in kernel_dirs():
        for path in sorted(folder.glob("*.py")):
            h.update(path.relative_to(_MODELS).as_posix().encode())
            h.update(b"\0")
            h.update(path.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


def numba_cache_dir(anchor=None) -> Path | None:
    """The directory in which numba caches the kernels of the package that defines the
    function ``anchor`` (default: this package), or ``None`` when numba has no writable
    one, found by numba's own locators in numba's order: the package's subdirectory of
    ``NUMBA_CACHE_DIR`` when that is set, else ``__pycache__`` beside the sources, else the
    user-wide cache."""
    anchor = numba_cache_dir if anchor is None else getattr(anchor, "py_func", anchor)
    here = Path(anchor.__code__.co_filename).resolve().parent
    try:
        from numba.core.caching import FunctionCache
    except ImportError:
        # numba's internals moved: its documented rule for the two usual places
        root = os.environ.get("NUMBA_CACHE_DIR")
        if root:
            sub = hashlib.sha1(str(here).encode()).hexdigest()
            return Path(os.path.abspath(root)) / f"{here.name}_{sub}"
        return here / "__pycache__"
    try:
        # the cache numba would build for a function of that package
        return Path(FunctionCache(anchor).cache_path)
    except RuntimeError:    # "no locator available": numba does not cache there either
        return None


def guard_numba_cache(anchor=None) -> None:
    """Delete the numba cache files of the kernel package that defines the function
    ``anchor`` (default: this package) when the kernel sources differ from its stamp (see
    the module docstring). Every kernel package calls it when it is imported."""
    if os.environ.get(GUARD_ENV, "") == "0":
        return
    cache = numba_cache_dir(anchor)
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
        cache.mkdir(parents=True, exist_ok=True)
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


guard_numba_cache()
