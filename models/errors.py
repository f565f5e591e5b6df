"""Errors shared by every dockrecon package.

The command line turns an :class:`InputError` into one line, ``error: <source>: <what>``, and
its :attr:`InputError.exit_code`; any other exception is an internal failure (exit 1).
"""
from __future__ import annotations

__all__ = ["DockreconError", "InputError", "DataError", "SimulationError"]


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
