"""Trace of a docking simulation (the contact paper's debugging practice, digest 10): every
selected routine's inputs, intermediates and outputs at every RK4 stage of a time window,
for both docking units.

The kernels write a float buffer (:mod:`models._kernels.trace_layout`); this module holds the
settings (:class:`TraceSettings`: the window, the groups ``contact``, ``latch``, ``mechanism``,
``search`` and the row cap), builds the buffers a unit's ``simulate`` passes to its kernel, and
names the result (:class:`Trace`).

Table shape: :meth:`Trace.frame` is **long**: one row per value, columns ``t, step, stage,
group, routine, i, j, status, field, value, unit``. Why long and not one wide table: the
routines have different fields (a contact has 26, a capture test 4), so a single wide table
would be mostly empty columns with names that mean different things per routine; the long
form names every value and carries its unit, filters with one expression
(``frame[frame.field == "penetration"]``) and compresses well in Parquet (the repeated
strings are dictionary-encoded). :meth:`Trace.routine` gives the wide table of one routine
(one column per field) for plotting or arithmetic.

``stage``: the RK4 stage 0-3 (0 is the state at ``t`` that the output samples record), or -1
for the between-steps routines (brake slips, latch updates, capture test) at the step's
start. ``step``: the index of the step that starts at the stage's step start.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from models._kernels import trace_layout as TL
from models.errors import InputError, SimulationError

__all__ = ["TraceSettings", "Trace", "DEFAULT_MAX_ROWS", "parse_window", "parse_groups",
           "kernel_buffers", "no_trace_buffers", "arm", "rerun_hint", "kernel_failure",
           "HINT_SPAN"]

#: default cap on the kernel rows of one trace (33 float64 each: 264 MB at the cap; the long
#: frame holds up to 26 values per row)
DEFAULT_MAX_ROWS = 1_000_000
#: length of the window the abort message proposes, ending at the abort [s]
HINT_SPAN = 0.005


def parse_window(text: str, *, key: str = "--trace") -> tuple[float, float]:
    """``"T0:T1"`` [s] -> ``(t0, t1)``; an :class:`InputError` naming ``key`` unless both are
    finite numbers with ``0 <= t0 < t1``."""
    parts = str(text).split(":")
    if len(parts) != 2:
        raise InputError(f"expected T0:T1 in seconds (e.g. 0.5:0.52), got '{text}'", key=key)
    try:
        t0, t1 = float(parts[0]), float(parts[1])
    except ValueError:
        raise InputError(f"expected T0:T1 in seconds (e.g. 0.5:0.52), got '{text}'",
                         key=key) from None
    if not (math.isfinite(t0) and math.isfinite(t1)):
        raise InputError(f"T0 and T1 must be finite, got '{text}'", key=key)
    if t0 < 0.0:
        raise InputError(f"T0 must be >= 0, got {t0:g}", key=key)
    if not t1 > t0:
        raise InputError(f"T1 must be greater than T0, got '{text}'", key=key)
    return t0, t1


def parse_groups(text, *, key: str = "--trace-what") -> tuple[str, ...]:
    """``"contact,latch"`` (or a sequence of names) -> the group names in their canonical
    order; an :class:`InputError` naming ``key`` for an unknown or empty selection."""
    names = [s.strip() for s in (text.split(",") if isinstance(text, str) else text)]
    names = [s for s in names if s]
    if not names:
        raise InputError(f"expected one or more of {', '.join(TL.GROUPS)}", key=key)
    for s in names:
        if s not in TL.GROUPS:
            raise InputError(f"unknown group '{s}' (expected one or more of "
                             f"{', '.join(TL.GROUPS)}, comma-separated)", key=key)
    return tuple(g for g in TL.GROUPS if g in names)


@dataclass(frozen=True)
class TraceSettings:
    """What to trace: the window ``[t0, t1]`` [s] of model time, the ``groups`` (``contact``,
    ``latch``, ``mechanism`` by default; ``search``: every fan search of the peripheral unit with
    its full inputs, to replay it) and the largest number of kernel rows ``max_rows`` (rows past it
    are counted as dropped)."""

    t0: float
    t1: float
    groups: tuple = TL.DEFAULT_GROUPS
    max_rows: int = DEFAULT_MAX_ROWS

    def __post_init__(self):
        parse_window(f"{self.t0!r}:{self.t1!r}", key="trace")
        object.__setattr__(self, "groups", parse_groups(self.groups, key="trace_what"))
        if not (isinstance(self.max_rows, (int, np.integer)) and self.max_rows >= 1):
            raise InputError(f"must be a positive integer, got {self.max_rows!r}",
                             key="trace_max_rows")

    @property
    def mask(self) -> int:
        """Bit mask of :attr:`groups` (``G_*``)."""
        return TL.group_mask(self.groups)


def kernel_buffers(settings: TraceSettings) -> tuple[np.ndarray, np.ndarray]:
    """The trace buffer ``float64[max_rows, TR_NCOL]`` (uninitialised: the pages are only
    touched as rows are written) and the counters ``int64[TRN_SIZE]``."""
    return (np.empty((int(settings.max_rows), TL.TR_NCOL)),
            np.zeros(TL.TRN_SIZE, dtype=np.int64))


def no_trace_buffers() -> tuple[np.ndarray, np.ndarray]:
    """The buffers of a run that does not trace: ``(0, TR_NCOL)`` and the counters."""
    return np.empty((0, TL.TR_NCOL)), np.zeros(TL.TRN_SIZE, dtype=np.int64)


def arm(P: np.ndarray, settings: "TraceSettings | None", o_t0: int, o_t1: int,
        o_mask: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kernel inputs of a run: ``P`` with the trace window and group mask written at the
    unit's offsets (a copy when tracing, ``P`` itself when not) and the buffers
    (:func:`kernel_buffers` or :func:`no_trace_buffers`)."""
    if settings is None:
        return (P, *no_trace_buffers())
    P = P.copy()
    P[o_t0] = settings.t0
    P[o_t1] = settings.t1
    P[o_mask] = float(settings.mask)
    return (P, *kernel_buffers(settings))


def kernel_failure(status: int, t: float, *, where: str = "",
                   step: float = 0.0) -> SimulationError:
    """The error of a docking unit's kernel that stopped with ``status`` at model time ``t``
    [s], the one place a kernel status becomes a :class:`models.errors.SimulationError` for
    every unit: what the code means (:data:`models._kernels.status.STATUS_TEXT`), ``where``
    (the unit's detail: the element, the primitive pair) and the ``--trace`` window that
    covers the step it happened in (:func:`rerun_hint`; ``step`` [s] the unit's longest
    step)."""
    from models._kernels.status import STATUS_TEXT

    text = STATUS_TEXT.get(int(status), f"status {int(status)}")
    return SimulationError(f"simulation stopped at t = {t:.6f} s: {text}"
                           + (f" ({where})" if where else "")
                           + f"; to see the steps before it rerun with {rerun_hint(t, step)}",
                           status=int(status), t=float(t))


def rerun_hint(t_fail: float, step: float, span: float = HINT_SPAN) -> str:
    """The ``--trace`` option that records the ``span`` [s] before a failure in the step that
    starts at ``t_fail`` [s], and that whole step (its last stage is at ``t_fail + h``; ``step``
    [s] is the unit's longest step)."""
    t0 = max(0.0, t_fail - span)
    t1 = t_fail + step
    return f"--trace {_fmt(t0, 'floor')}:{_fmt(t1, 'ceil')}"


def _fmt(t: float, how: str) -> str:
    """``t`` [s] with 6 decimals (1 us), rounded outwards so the window keeps its ends."""
    q = (math.floor if how == "floor" else math.ceil)(t * 1e6 - (1e-6 if how == "ceil" else
                                                                   -1e-6)) / 1e6
    return f"{q:.6f}".rstrip("0").rstrip(".") if q else "0"


@dataclass(frozen=True, eq=False)
class Trace:
    """The rows a kernel traced (``rows``: float64[n, TR_NCOL], columns ``TR_*``), the
    number of rows ``dropped`` because the buffer was full, the ``settings`` and the ``unit``
    name."""

    rows: np.ndarray
    dropped: int
    settings: TraceSettings
    unit: str

    @classmethod
    def from_kernel(cls, tr: np.ndarray, trn: np.ndarray, settings: TraceSettings,
                    unit: str) -> "Trace":
        n = int(trn[TL.TRN_ROWS])
        return cls(rows=tr[:n].copy(), dropped=int(trn[TL.TRN_DROPPED]), settings=settings,
                   unit=unit)

    def __len__(self) -> int:
        return int(self.rows.shape[0])

    def routine(self, name: str):
        """The rows of one routine (by name, :data:`~models._kernels.trace_layout.ROUTINES`)
        as a wide DataFrame: ``t, step, stage, i, j, status`` and one column per field."""
        import pandas as pd

        codes = [c for c, v in TL.ROUTINES.items() if v[1] == name]
        if not codes:
            raise InputError(f"unknown routine '{name}'", key="routine")
        code = codes[0]
        fields = TL.ROUTINES[code][2]
        sel = self.rows[self.rows[:, TL.TR_ROUTINE] == code]
        d = {"t": sel[:, TL.TR_T], "step": sel[:, TL.TR_STEP].astype(np.int64),
             "stage": sel[:, TL.TR_STAGE].astype(np.int64),
             "i": sel[:, TL.TR_I].astype(np.int64), "j": sel[:, TL.TR_J].astype(np.int64),
             "status": sel[:, TL.TR_STATUS].astype(np.int64)}
        for k, f in enumerate(fields):
            if not f.startswith("unused_"):
                d[f] = sel[:, TL.TR_V0 + k]
        return pd.DataFrame(d)

    def frame(self):
        """The long table: one row per traced value that is not NaN (columns in the module
        docstring)."""
        import pandas as pd

        parts = []
        rows = self.rows
        for code, (group, name, fields, units) in TL.ROUTINES.items():
            sel = rows[rows[:, TL.TR_ROUTINE] == code]
            if sel.shape[0] == 0:
                continue
            for k, (f, u) in enumerate(zip(fields, units)):
                v = sel[:, TL.TR_V0 + k]
                ok = ~np.isnan(v)
                if f.startswith("unused_") or not ok.any():
                    continue
                s = sel[ok]
                parts.append(pd.DataFrame({
                    "t": s[:, TL.TR_T], "step": s[:, TL.TR_STEP].astype(np.int64),
                    "stage": s[:, TL.TR_STAGE].astype(np.int8),
                    "group": group, "routine": name,
                    "i": s[:, TL.TR_I].astype(np.int64), "j": s[:, TL.TR_J].astype(np.int64),
                    "status": s[:, TL.TR_STATUS].astype(np.int64),
                    "field": f, "value": v[ok], "unit": u}))
        cols = ["t", "step", "stage", "group", "routine", "i", "j", "status", "field", "value",
                "unit"]
        if not parts:
            return pd.DataFrame({c: [] for c in cols})
        out = pd.concat(parts, ignore_index=True)
        out = out.sort_values(["step", "stage", "t"], kind="stable", ignore_index=True)
        for c in ("group", "routine", "field", "unit"):
            out[c] = out[c].astype("category")
        return out[cols]

    def units(self) -> dict:
        """Units of the long table's numeric columns (``value`` carries its own ``unit``)."""
        return {"t": "s", "step": "1", "stage": "1", "i": "1", "j": "1", "status": "1"}
