"""Flight telemetry: read, convert to SI and validate.

A telemetry file is a table (Parquet preferred, CSV accepted) with a column ``t`` [s] and one
column per channel; NaN where a channel has no sample at that time stamp (channels may be
sampled at different rates). Units come from the Parquet field metadata key ``unit`` or CSV
headers ``name[unit]`` and are converted to SI with pint (:func:`recon.io.read_table`).

Channels on separate time bases (a recorder per subsystem: gyros on their own clock ticks,
mechanism channels on another) come as several files, each with its own ``t``, all on the
same telemetry clock: :func:`load_telemetry` takes a list of paths, validates each file on its
own (rows and columns in the findings are those of that file) and merges them on the union of
their time stamps, NaN where a channel has no sample. A channel may appear in one file only.

Validation never stops at the first problem: :func:`validate` returns every finding with its
row (1-based data row, header excluded, as :class:`models.errors.InputError`) and column.
Findings of severity ``"error"`` make the telemetry unusable (:class:`models.errors.DataError`,
exit 65); ``"warning"`` findings are reported and the data are used.

Which failures are which exit code
----------------------------------
* The path does not exist, is a directory or has an unknown suffix: a wrong argument,
  :class:`~models.errors.InputError` (exit 2).
* The file exists but is empty, truncated, unparsable, has no ``t``, backwards or duplicate
  time stamps, a channel without any sample, non-finite values (``inf``; NaN means "no
  sample"), a unit pint does not know or whose dimension is wrong for a known channel, or a
  binary channel with values other than 0 and 1: unusable telemetry,
  :class:`~models.errors.DataError` (exit 65).
* Unknown channels, gaps longer than ``max_gap``, flat runs at a limit (saturation), flags in
  an order no docking makes (capture before the first contact, latches closing with the
  capture signal off to the end): warnings.
"""
from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from models.errors import DataError, InputError
from recon.io import read_table

__all__ = [
    "known_channels",
    "physical_ranges",
    "MIN_ROWS",
    "binary_channels",
    "Finding",
    "ValidationReport",
    "Telemetry",
    "read_telemetry",
    "validate",
    "load_telemetry",
]

#: fewest rows of a usable record (a channel's noise, a gap, an edge need more than one)
MIN_ROWS = 10


def known_channels() -> dict[str, str]:
    """Every channel a registered docking unit produces and its SI unit (``""`` = a 0/1 flag
    or dimensionless): the channel list lives with the units (:mod:`models.unit`)."""
    from models.unit import all_channels

    return {n: c.unit for n, c in all_channels().items()}


def physical_ranges() -> dict[str, tuple[float, float]]:
    """Every channel's physical range [SI] as its docking unit states it
    (:attr:`models.unit.Channel.range`): a reading outside it is not a measurement."""
    from models.unit import all_channels

    return {n: tuple(c.range) for n, c in all_channels().items() if c.range is not None}


def binary_channels() -> frozenset[str]:
    """Channels that are 0/1 flags (compared through their switching times)."""
    from models.unit import all_channels

    return frozenset(n for n, c in all_channels().items() if c.binary)


@dataclasses.dataclass(frozen=True)
class Finding:
    """One validation finding.

    Attributes
    ----------
    severity
        ``"error"`` (telemetry unusable) or ``"warning"``.
    code
        Short machine-readable kind (``"backwards_time"``, ``"gap"``, ...).
    message
        What is wrong, in words.
    column
        Channel name, when the finding sits in one column.
    row
        1-based data row (header excluded), when it sits in one row.
    """

    severity: str
    code: str
    message: str
    column: str | None = None
    row: int | None = None

    def text(self, source: str | None = None) -> str:
        """``<source>: row R, 'column': message`` (the log's line: its level says the
        severity)."""
        return str(InputError(self.message, source=source, key=self.column, row=self.row))

    def line(self, source: str | None = None) -> str:
        """One line ``<severity>: <source>: row R, 'column': message``."""
        return f"{self.severity}: {self.text(source)}"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class ValidationReport:
    """All findings on one telemetry file; ``usable`` when there is no error."""

    source: str | None
    findings: tuple[Finding, ...]
    n_rows: int = 0
    channels: tuple[str, ...] = ()

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "warning")

    @property
    def usable(self) -> bool:
        return not self.errors

    def lines(self) -> list[str]:
        return [f.line(self.source) for f in self.findings]

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "usable": self.usable, "n_rows": self.n_rows,
                "channels": list(self.channels), "n_errors": len(self.errors),
                "n_warnings": len(self.warnings),
                "findings": [f.to_dict() for f in self.findings]}

    def raise_if_unusable(self) -> None:
        """Raise :class:`DataError` naming the first error (and how many more there are)."""
        errs = self.errors
        if not errs:
            return
        first = errs[0]
        more = f" (and {len(errs) - 1} more errors; run 'dockrecon validate')" if len(errs) > 1 else ""
        raise DataError(first.message + more, source=self.source, key=first.column, row=first.row)


@dataclasses.dataclass(frozen=True, eq=False)
class Telemetry:
    """Telemetry in SI units.

    Attributes
    ----------
    t
        Time stamps [s], shape ``(n,)``.
    channels
        Channel name -> values in SI, shape ``(n,)``; NaN where the channel has no sample.
    file_units
        The unit each column had in the file (None where none was given).
    source
        The file it came from.
    """

    t: np.ndarray
    channels: Mapping[str, np.ndarray]
    file_units: Mapping[str, str | None] = dataclasses.field(default_factory=dict)
    source: str | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.channels)

    def samples(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Time stamps [s] and values (SI) where channel ``name`` has a sample."""
        try:
            y = np.asarray(self.channels[name], dtype=float)
        except KeyError:
            raise InputError("no such channel in the telemetry", source=self.source,
                             key=name) from None
        keep = np.isfinite(y)
        return np.asarray(self.t)[keep], y[keep]

    def select(self, names) -> "Telemetry":
        """The same telemetry restricted to ``names``."""
        return Telemetry(self.t, {n: self.channels[n] for n in names},
                         {n: self.file_units.get(n) for n in ["t", *names]}, self.source)

    def window(self, start: float = -np.inf, stop: float = np.inf) -> "Telemetry":
        """The rows with ``start <= t <= stop`` [s] (the fitted span of a reconstruction)."""
        t = np.asarray(self.t)
        keep = (t >= start) & (t <= stop)
        return Telemetry(t[keep], {n: np.asarray(v)[keep] for n, v in self.channels.items()},
                         self.file_units, self.source)

    def until(self, t_stop: float) -> "Telemetry":
        """The rows with ``t <= t_stop`` [s]."""
        return self.window(stop=t_stop)

    @classmethod
    def merge(cls, parts: "list[Telemetry]") -> "Telemetry":
        """Records of separate time bases (same clock) as one: the union of their time
        stamps, each channel at its own stamps and NaN elsewhere.

        Raises
        ------
        InputError
            A channel appears in two of the records.
        """
        if len(parts) == 1:
            return parts[0]
        owner: dict[str, str | None] = {}
        for p in parts:
            for n in p.channels:
                if n in owner:
                    raise InputError(f"channel is also in {owner[n]}; give each channel in "
                                     "one file only", source=p.source, key=n)
                owner[n] = p.source
        t = np.unique(np.concatenate([np.asarray(p.t, float) for p in parts]))
        channels: dict[str, np.ndarray] = {}
        units: dict[str, str | None] = {"t": "s"}
        for p in parts:
            rows = np.searchsorted(t, np.asarray(p.t, float))
            for n, v in p.channels.items():
                col = np.full(t.size, np.nan)
                col[rows] = np.asarray(v, float)
                channels[n] = col
                units[n] = p.file_units.get(n)
        return cls(t, channels, units, " + ".join(str(p.source) for p in parts))

    @classmethod
    def from_arrays(cls, t, channels: Mapping[str, Any], source: str | None = None) -> "Telemetry":
        """Build from SI arrays (synthetic data, tests)."""
        t = np.asarray(t, dtype=float)
        ch = {k: np.asarray(v, dtype=float) for k, v in channels.items()}
        for k, v in ch.items():
            if v.shape != t.shape:
                raise InputError(f"channel has shape {v.shape}, t has {t.shape}", key=k)
        return cls(t, ch, {}, source)


# --------------------------------------------------------------------------------------------
# reading
# --------------------------------------------------------------------------------------------
_TABLE_SUFFIXES = (".parquet", ".pq", ".csv", ".txt")


def read_telemetry(path: str | os.PathLike, *, extra_channels: Mapping[str, str] | None = None,
                   max_gap: float = 0.5, saturation_run: int = 5,
                   limits: Mapping[str, tuple[float, float]] | None = None,
                   ) -> tuple[Telemetry | None, ValidationReport]:
    """Read and validate a telemetry file.

    Parameters
    ----------
    path
        Parquet or CSV file.
    extra_channels
        Further known channels and their SI units (``{"thrust": "N"}``).
    max_gap
        Longest accepted interval [s] between samples of one channel, or between rows.
    saturation_run
        Number of consecutive equal samples at a limit that counts as saturation.
    limits
        Sensor range per channel ``{name: (lo, hi)}`` [SI]; a flat run at either end is
        saturation. Without a range, a flat interior run at the channel's own extreme is.

    Returns
    -------
    telemetry
        The telemetry, or None when the file could not be read as a table at all.
    report
        Every finding.

    Raises
    ------
    InputError
        The path does not exist, is a directory, or has an unknown suffix.
    """
    path = Path(path)
    src = str(path)
    if not path.exists():
        raise InputError("no such file", source=src)
    if path.is_dir():
        raise InputError("is a directory, expected a telemetry file (.parquet or .csv)", source=src)
    if path.suffix.lower() not in _TABLE_SUFFIXES:
        raise InputError(f"unknown telemetry format '{path.suffix}' (expected .parquet or .csv)",
                         source=src)
    known = known_channels()
    known.update(extra_channels or {})
    units = {"t": "s", **known}
    try:
        frame, file_units = read_table(path, units)
    except InputError as exc:
        code = "unit" if "unit" in exc.what else "unreadable"
        if "empty" in exc.what or "no rows" in exc.what:
            code = "empty"
        return None, ValidationReport(src, (Finding("error", code, exc.what, exc.key, exc.row),))
    cols = {str(c): frame[c].to_numpy(dtype=float) for c in frame.columns}
    if "t" not in cols:
        t = np.full(len(frame), np.nan)
        missing_t = Finding("error", "missing_t",
                            f"no time column 't' (have: {', '.join(cols)})", "t")
    else:
        t = cols.pop("t")
        missing_t = None
    tel = Telemetry(t, cols, dict(file_units), src)
    report = validate(tel, extra_channels=extra_channels, max_gap=max_gap,
                      saturation_run=saturation_run, limits=limits, _has_t=missing_t is None)
    if missing_t is not None:
        report = dataclasses.replace(report, findings=(missing_t, *report.findings))
    return tel, report


def load_telemetry(path: str | os.PathLike | Sequence[str | os.PathLike], **kwargs
                   ) -> Telemetry:
    """Read telemetry and refuse it when unusable (:class:`DataError`, exit 65).

    ``path`` may be a list of files on separate time bases (module docstring): each is
    validated on its own, then they are merged (:meth:`Telemetry.merge`). Warnings are logged;
    keyword arguments go to :func:`read_telemetry`.
    """
    import logging

    paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    if not paths:
        raise InputError("no telemetry file given")
    log = logging.getLogger("dockrecon.telemetry")
    parts = []
    for p in paths:
        tel, report = read_telemetry(p, **kwargs)
        report.raise_if_unusable()
        for finding in report.findings:     # no errors left: warnings (and notes)
            log.warning("%s", finding.text(report.source))
        assert tel is not None
        parts.append(tel)
    _check_clocks(parts, log)
    return Telemetry.merge(parts)


def _check_clocks(parts: Sequence[Telemetry], log) -> None:
    """Files on separate time bases share one clock, so their spans overlap: a file whose span
    misses another's is on another clock (or another flight) and is refused (its merge would
    stretch the fitted span over the gap); an overlap of less than half the shorter span is
    worth a warning."""
    spans = [(float(np.nanmin(p.t)), float(np.nanmax(p.t)), p) for p in parts]
    for i, (a0, a1, pa) in enumerate(spans):
        for b0, b1, pb in spans[:i]:
            overlap = min(a1, b1) - max(a0, b0)
            if overlap <= 0.0:
                raise DataError(f"its time stamps ({a0:.6g} to {a1:.6g} s) do not overlap those "
                                f"of {pb.source} ({b0:.6g} to {b1:.6g} s): files of one record "
                                "share one clock (another clock or another flight?)",
                                source=pa.source, key="t")
            shorter = min(a1 - a0, b1 - b0)
            if overlap < 0.5 * shorter:
                log.warning("%s: 't': overlaps %s for %.3g s only, %.0f %% of the shorter "
                            "record (one clock?)", pa.source, pb.source, overlap,
                            100.0 * overlap / shorter)


# --------------------------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------------------------
def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """Start and stop (exclusive) indices of runs of True in ``mask``."""
    if not mask.any():
        return []
    d = np.diff(np.concatenate(([0], mask.astype(np.int8), [0])))
    return list(zip(np.flatnonzero(d == 1).tolist(), np.flatnonzero(d == -1).tolist()))


def validate(tel: Telemetry, *, extra_channels: Mapping[str, str] | None = None,
             max_gap: float = 0.5, saturation_run: int = 5,
             limits: Mapping[str, tuple[float, float]] | None = None,
             _has_t: bool = True) -> ValidationReport:
    """Check telemetry already in SI; return every finding (see the module docstring).

    Rows in the findings are 1-based data rows of the table.
    """
    findings: list[Finding] = []
    known = known_channels()
    binary = binary_channels()
    ranges = physical_ranges()
    known.update(extra_channels or {})
    limits = dict(limits or {})
    t = np.asarray(tel.t, dtype=float)
    n = t.size

    def add(sev, code, msg, col=None, row=None):
        findings.append(Finding(sev, code, msg, col, None if row is None else int(row) + 1))

    if n == 0:
        add("error", "empty", "table has no rows")
    elif n < MIN_ROWS:
        add("error", "too_short", f"{n} row(s): a record needs at least {MIN_ROWS}")
    if _has_t and n:
        bad = ~np.isfinite(t)
        if bad.any():
            i = np.flatnonzero(bad)
            add("error", "nonfinite_time", f"time stamp is not a finite number ({bad.sum()} rows)",
                "t", i[0])
        ok = np.flatnonzero(~bad)
        if ok.size > 1:
            dt = np.diff(t[ok])
            back = np.flatnonzero(dt < 0)
            if back.size:
                i = ok[back[0] + 1]
                add("error", "backwards_time",
                    f"time goes backwards ({t[i]:.6g} s after {t[ok[back[0]]]:.6g} s; "
                    f"in {back.size} place(s))", "t", i)
            dup = np.flatnonzero(dt == 0)
            if dup.size:
                i = ok[dup[0] + 1]
                add("error", "duplicate_time",
                    f"duplicate time stamp {t[i]:.6g} s (in {dup.size} place(s))", "t", i)
            big = np.flatnonzero(dt > max_gap)
            if big.size:
                i = ok[big[0] + 1]
                add("warning", "gap", f"no rows for {dt[big[0]]:.3g} s (> {max_gap:g} s) before "
                    f"this row ({big.size} such gaps)", "t", i)
    if not tel.channels:
        add("error", "no_channels", "no channel columns besides 't'")

    for name, raw in tel.channels.items():
        y = np.asarray(raw, dtype=float)
        if name not in known:
            add("warning", "unknown_channel", "unknown channel (ignored by the fit unless "
                "configured)", name)
        inf = np.isinf(y)
        if inf.any():
            add("error", "nonfinite", f"infinite value ({inf.sum()} rows)", name,
                np.flatnonzero(inf)[0])
        fin = np.isfinite(y)
        if not fin.any():
            add("error", "all_nan", "channel has no samples (all NaN)", name)
            continue
        idx = np.flatnonzero(fin)
        if name in ranges and name not in binary:
            lo, hi = ranges[name]
            out = fin & ((y < lo) | (y > hi))
            if out.any():
                i = np.flatnonzero(out)[0]
                u = known.get(name) or "(dimensionless)"
                add("error", "out_of_range",
                    f"{y[i]:.6g} {u} is outside the channel's physical range [{lo:g}, {hi:g}] "
                    f"{u} ({out.sum()} rows; a unit in the header missing or wrong?)", name, i)
        if name in binary:
            notbin = fin & (y != 0.0) & (y != 1.0)
            if notbin.any():
                i = np.flatnonzero(notbin)[0]
                add("error", "not_binary", f"flag channel must be 0 or 1, found {y[i]:g}", name, i)
        if _has_t and np.all(np.isfinite(t[idx])) and idx.size > 1:
            dts = np.diff(t[idx])
            big = np.flatnonzero(dts > max_gap)
            if big.size:
                i = idx[big[0] + 1]
                add("warning", "gap", f"no sample for {dts[big[0]]:.3g} s (> {max_gap:g} s) "
                    f"before this row ({big.size} such gaps)", name, i)
        if name not in binary and idx.size >= saturation_run:
            v = y[idx]
            if name in limits:
                lo, hi = limits[name]
                ends = [(lo, "lower"), (hi, "upper")]
            else:
                ends = [(v.min(), "lowest"), (v.max(), "highest")]
            if v.max() > v.min():
                for level, which in ends:
                    for a, b in _runs(v == level):
                        interior = name in limits or (a > 0 and b < v.size)
                        if b - a >= saturation_run and interior:
                            add("warning", "saturation",
                                f"flat at its {which} value {level:.6g} for {b - a} samples "
                                "(saturated sensor?)", name, idx[a])
                            break
    if _has_t and n:
        _check_event_order(t, tel.channels, add)
    return ValidationReport(tel.source, tuple(findings), n, tuple(tel.channels))


def _first_rise(t: np.ndarray, y: np.ndarray) -> tuple[float, int] | None:
    """Time and row of a flag's first sample at 1 (None: it never rises)."""
    on = np.flatnonzero(np.isfinite(y) & (y > 0.5))
    return (float(t[on[0]]), int(on[0])) if on.size else None


def _check_event_order(t: np.ndarray, channels: Mapping[str, Any], add) -> None:
    """Warnings on flags in an order no docking makes: capture before the first contact, and
    latches closing while the capture signal stays off to the record's end. Each unit's own
    sequence (the peripheral's latches close shortly before it declares capture) is allowed."""
    contact = _first_rise(t, np.asarray(channels["contact"], float)) \
        if "contact" in channels else None
    capture = _first_rise(t, np.asarray(channels["capture"], float)) \
        if "capture" in channels else None
    if capture is not None and contact is not None and capture[0] < contact[0]:
        add("warning", "capture_before_contact",
            f"capture rises at {capture[0]:.6g} s, before the first contact ({contact[0]:.6g} "
            "s): swapped or mislabelled flags?", "capture", capture[1])
    if capture is None and "capture" in channels:
        latches = [(name, _first_rise(t, np.asarray(v, float)))
                   for name, v in sorted(channels.items()) if name.startswith("latch_")]
        closed = [(name, r) for name, r in latches if r is not None]
        if closed:
            name, (tl, row) = min(closed, key=lambda c: c[1][0])
            add("warning", "latch_without_capture",
                f"{len(closed)} latch(es) close (first at {tl:.6g} s) but the capture signal "
                f"never rises, {t[-1] - tl:.3g} s to the record's end: a capture flag stuck at "
                "0, or mislabelled latches?", name, row)
