"""Errors shared by every dockrecon package.

The command line turns an :class:`InputError` into one line, ``error: <source>: <what>``, and
its :attr:`InputError.exit_code`; any other exception is an internal failure (exit 1).
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

__all__ = ["DockreconError", "InputError", "DataError", "OutputError", "SimulationError",
           "is_no_space", "no_space", "free_bytes", "check_room"]


class DockreconError(Exception):
    """Base class of dockrecon's own errors."""


class InputError(DockreconError, ValueError):
    """Bad user input: a configuration value, a record, an option.

    Parameters
    ----------
    what
        What is wrong, in words the user can act on.
    source
        The file (or option) the input came from, when known.
    key
        Dotted configuration key (``"mechanism.axial.brake_torque"``) or column name.
    row
        1-based data row of a table (header excluded), when the error sits in one row.
    """

    exit_code = 2

    def __init__(self, what: str, *, source: str | None = None, key: str | None = None,
                 row: int | None = None) -> None:
        super().__init__(what)
        self.what = what
        self.source = source
        self.key = key
        self.row = row

    def with_source(self, source: str) -> "InputError":
        """Return the same error naming ``source`` (kept when already set)."""
        if self.source is None:
            self.source = str(source)
        return self

    def __str__(self) -> str:
        parts = []
        if self.source:
            parts.append(str(self.source))
        where = []
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.key:
            where.append(f"'{self.key}'")
        head = ", ".join(where)
        parts.append(f"{head}: {self.what}" if head else self.what)
        return ": ".join(parts)


class DataError(InputError):
    """Input that reads but cannot be trusted for fitting (unusable telemetry). Exit 65."""

    exit_code = 65


class OutputError(InputError):
    """An output that cannot be written for want of room: the device is full or the user's
    quota is used (``ENOSPC``, ``EDQUOT``). Exit 74 (``sysexits`` EX_IOERR). ``source`` names
    the file being written; what was there before is left as it was."""

    exit_code = 74


#: errno values of "no room to write"
NO_SPACE_ERRNOS = (28, 122)   # ENOSPC, EDQUOT (Linux)


def is_no_space(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception it was raised from) is a full device or quota. Some
    libraries (HDF5, Arrow) put the errno only in their message."""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, OSError) and exc.errno in NO_SPACE_ERRNOS:
            return True
        text = str(exc)
        if "No space left on device" in text or "Disk quota exceeded" in text:
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


class SimulationError(DockreconError):
    """A forward simulation stopped (a docking unit's kernel status: penetration exceeded,
    a closed form used outside its range, an illegal hysteresis transition, ...).

    Attributes
    ----------
    status
        The kernel's status code (:mod:`models._kernels.status`), when a kernel stopped
        (:func:`models.trace.kernel_failure` makes the error of every unit's kernel).
    t
        Model time of the failure [s], when known.
    trace
        The trace of the run (:class:`models.trace.Trace`) when one was recorded.
    """

    def __init__(self, message: str, *, status: int | None = None,
                 t: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.t = t
        self.trace = None


def no_space(path: str | os.PathLike, needed: float | None = None) -> OutputError:
    """The error of a write to ``path`` that found its device full (exit 74), with the room
    left there and, when known, the room the write needs [bytes]."""
    path = Path(path)
    free = free_bytes(path.parent)
    left = f"{_size(free)} free" if free is not None else "room unknown"
    if needed is not None:
        what = f"not enough room on its device: it needs about {_size(needed)}, {left}"
    else:
        what = f"no space left on its device while writing it ({left})"
    return OutputError(what + "; the earlier output is left as it was", source=str(path))


def free_bytes(directory: str | os.PathLike) -> int | None:
    """Room left for this user on the device holding ``directory`` (its nearest existing
    ancestor) [bytes]; None when it cannot be asked."""
    d = Path(directory)
    while not d.exists() and d.parent != d:
        d = d.parent
    try:
        return int(shutil.disk_usage(d).free)
    except OSError:
        return None


def check_room(path: str | os.PathLike, needed: float, *, margin: float = 1 << 20) -> None:
    """Refuse a write of about ``needed`` bytes to ``path`` before it starts, when its device
    has less room than that plus ``margin`` (:class:`OutputError`, exit 74). Used before the
    writes that cannot fail cleanly halfway: HDF5 (chains, ``posterior.nc``), whose library
    can crash the process when the device fills under it."""
    free = free_bytes(Path(path).parent)
    if free is not None and free < needed + margin:
        raise no_space(path, needed)


def _size(n: float) -> str:
    for unit in ("bytes", "kB", "MB", "GB", "TB"):
        if abs(n) < 1000.0 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.3g} {unit}"
        n /= 1000.0
    return f"{n:.3g} TB"
