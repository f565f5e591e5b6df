"""Physical ranges of the numbers a scenario may hold: one table, used by every reader.

A finite but absurd value (a vehicle of 1e308 kg, a stroke sensor reading 100 m after a legal
unit conversion, a time step of 1e-300 s) is not a different docking: it is a typo or a unit
slip, and it ends in an overflow or a step-size underflow deep in a kernel, reported as the
wrong thing. Every scenario number whose key matches a row of :data:`RANGES` must lie in that
row's range (by magnitude where the quantity has a sign); the error names the key and the
range. The bounds are deliberately wide: an order of magnitude or more beyond any docking
mechanism or vehicle flown or planned (a 420-t station, a 20-t ring mechanism's 1e5 N loads),
so that they catch slips, never designs; masses and inertias go up to 1e12 kg and 1e18 kg m^2,
the "immovable base" that tests and rig studies give a vehicle.

Telemetry channels carry their own physical range with the docking unit
(:attr:`models.unit.Channel.range`), checked by :func:`recon.telemetry.validate`.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from models.errors import InputError

__all__ = ["RANGES", "COLUMN_RANGES", "check_range", "checked_table", "check_keys", "number",
           "vector"]

#: (pattern on the key's last component, lowest, highest, unit, signed): ``signed`` rows bound
#: the magnitude; the first matching row applies
RANGES: tuple[tuple[str, float, float, str, bool], ...] = (
    (r"^mass$", 1e-3, 1e12, "kg", False),          # a body's mass
    (r"_mass$", 0.0, 1e12, "kg", False),           # an added mass: a tip mass may be none
    (r"inertia$", 1e-6, 1e18, "kg m^2", False),
    (r"(^|_)force$", 0.0, 1e7, "N", False),
    (r"preload$", 0.0, 1e7, "N", False),
    (r"^thrust_[xyz]$", 0.0, 1e7, "N", True),      # a reconstruction's thrust parameter
    (r"_scale$", 0.0, 1e3, "(factor)", False),      # a mechanism characteristic's scale
    (r"^contact_friction$", 0.0, 10.0, "(coefficient)", False),
    (r"stiffness$", 0.0, 1e13, "N/m (N m/rad)", False),
    (r"damping$", 0.0, 1e10, "N s/m (N m s/rad)", False),
    (r"^dt(_|$)", 1e-9, 1.0, "s", False),
    (r"duration$", 0.0, 1e4, "s", False),
    (r"output_rate$", 1e-2, 1e5, "Hz", False),
    (r"^friction$", 0.0, 10.0, "(coefficient)", False),
    (r"^rel_pos_", 0.0, 100.0, "m", True),
    (r"^rel_vel_", 0.0, 100.0, "m/s", True),
    (r"^rel_rate_", 0.0, 10.0, "rad/s", True),
    (r"^rel_(roll|pitch|yaw)$", 0.0, 2.0 * math.pi, "rad", True),
    (r"(length|radius|offset|travel|stroke|half_width|margin|penetration|stop_x)$", 0.0, 100.0,
     "m", True),
    (r"pressure$", 0.0, 1e10, "Pa", True),
    (r"bulk_modulus$", 1.0, 1e12, "Pa", False),
    (r"area$", 0.0, 100.0, "m^2", False),
    (r"volume(_[ab])?$", 0.0, 100.0, "m^3", False),
    (r"frequency$", 0.0, 1e7, "rad/s", False),
)
_COMPILED = tuple((re.compile(p), lo, hi, u, s) for p, lo, hi, u, s in RANGES)


def check_range(key: str, value: float) -> float:
    """``value`` if the row of :data:`RANGES` matching ``key``'s last component holds it
    (or no row matches); :class:`InputError` naming ``key`` otherwise."""
    name = key.rsplit(".", 1)[-1]
    for pat, lo, hi, unit, signed in _COMPILED:
        if pat.search(name):
            v = abs(value) if signed else value
            if not lo <= v <= hi:
                span = f"|value| <= {hi:g}" if signed else f"{lo:g} ... {hi:g}"
                raise InputError(f"{value:g} is outside the physical range of this quantity "
                                 f"({span} {unit}; models.limits)", key=key)
            return value
    return value


def checked_table(table: Mapping[str, Any], keys: Mapping[str, tuple[bool, float, float]],
                  name: str, *, others: Sequence[str] = ()) -> dict[str, Any]:
    """A TOML table of numbers checked against ``keys`` (whole number?, lowest, highest):
    unknown keys, wrong types and values out of range raise :class:`InputError` naming
    ``name.key``. ``others`` are the table's keys that are not numbers (checked by the caller
    and taken out of ``table``), named among the allowed ones."""
    if not isinstance(table, Mapping):
        raise InputError("must be a table", key=name)
    out: dict[str, Any] = {}
    for k, v in table.items():
        if k not in keys:
            raise InputError(f"unknown key (allowed: {', '.join([*keys, *others])})",
                             key=f"{name}.{k}")
        whole, lo, hi = keys[k]
        kind = "a whole number" if whole else "a number"
        if (isinstance(v, bool) or not isinstance(v, (int, float))
                or (whole and v != int(v)) or not lo <= v <= hi):
            raise InputError(f"must be {kind} in [{lo:g}, {hi:g}], got {v!r}",
                             key=f"{name}.{k}")
        out[k] = int(v) if whole else float(v)
    return out


#: magnitude limit [SI] of the columns of ground-test records (static load-deflection, resonance,
#: rig): a reading beyond it is a unit slip or a corrupt file, refused with its row and column
#: by :func:`recon.io.read_table`. Flight channels carry theirs with the docking unit.
COLUMN_RANGES: dict[str, tuple[float, str]] = {
    "q": (100.0, "m or rad"),          # a deflection (static record)
    "x": (100.0, "m"),                 # a displacement (resonance record, hexapod pose)
    "y": (100.0, "m"), "z": (100.0, "m"),
    "roll": (2.0 * math.pi, "rad"), "pitch": (2.0 * math.pi, "rad"), "yaw": (2.0 * math.pi, "rad"),
    "force": (1e8, "N"), "F_load": (1e8, "N"),
    "u": (1e4, "V"),                   # a servo-valve command
    "x_v": (1.0, ""),                  # spool position, normalised to its stroke [-]
    "x_p": (100.0, "m"),
    "p_A": (1e10, "Pa"), "p_B": (1e10, "Pa"),
    "brake": (1.0, ""),
}


def check_keys(d: Mapping[str, Any], known: set[str], prefix: str) -> None:
    """Refuse a table that is not a mapping or has a key outside ``known``
    (:class:`InputError` naming ``prefix + key``; ``prefix`` ends with a dot)."""
    if not isinstance(d, Mapping):
        raise InputError("expected a table", key=prefix.rstrip("."))
    for k in d:
        if k not in known:
            raise InputError(f"unknown key (expected one of: {', '.join(sorted(known))})",
                             key=f"{prefix}{k}")


def number(d: Mapping[str, Any], key: str, prefix: str, default: float | None = None, *,
           positive: bool = False, nonneg: bool = False) -> float:
    """``d[key]`` as a finite float inside its physical range (:func:`check_range`), or
    ``default`` when absent (missing and no default: an error). Errors name ``prefix + key``."""
    if key not in d:
        if default is None:
            raise InputError("missing", key=prefix + key)
        return float(default)
    v = d[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise InputError(f"expected a number, got {v!r}", key=prefix + key)
    v = float(v)
    if not math.isfinite(v):
        raise InputError("must be finite", key=prefix + key)
    if positive and v <= 0.0:
        raise InputError("must be positive", key=prefix + key)
    if nonneg and v < 0.0:
        raise InputError("must not be negative", key=prefix + key)
    return check_range(prefix + key, v)


def vector(d: Mapping[str, Any], key: str, prefix: str, shape: tuple, default=None) -> np.ndarray:
    """``d[key]`` as a finite float array of ``shape`` (``()``: any), or ``default`` when
    absent (missing and no default: an error). Errors name ``prefix + key``."""
    if key not in d:
        if default is None:
            raise InputError("missing", key=prefix + key)
        return np.asarray(default, dtype=float)
    try:
        a = np.asarray(d[key], dtype=float)
    except (TypeError, ValueError):
        raise InputError("expected numbers", key=prefix + key) from None
    if shape and a.shape != shape:
        raise InputError(f"expected shape {shape}, got {a.shape}", key=prefix + key)
    if not np.all(np.isfinite(a)):
        raise InputError("must be finite", key=prefix + key)
    return a


def available_memory() -> int | None:
    """Memory a new allocation can have without swapping [bytes]: Linux's ``MemAvailable``;
    None where it cannot be read."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


#: the share of the available memory one run's arrays may take before it is refused
MEMORY_SHARE = 0.8


def check_memory(nbytes: float, *, key: str, what: str) -> None:
    """Refuse, before allocating, arrays of about ``nbytes`` [bytes] that the machine cannot
    hold (more than :data:`MEMORY_SHARE` of the available memory): :class:`InputError`
    naming ``key``, with the estimate, instead of a MemoryError or the swap after minutes."""
    avail = available_memory()
    if avail is not None and nbytes > MEMORY_SHARE * avail:
        raise InputError(f"{what} needs about {nbytes / 1e9:.3g} GB of memory; this machine "
                         f"has {avail / 1e9:.3g} GB available", key=key)
