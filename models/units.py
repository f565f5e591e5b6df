"""Units: the pint registry and conversions to and from SI.

Everything inside dockrecon is SI (m, kg, s, N, rad); a number given in another unit (a file's
column, a configuration's ``unit`` key) is converted here, once, at the boundary where it is
read, and converted back only where a file is written in another unit.
"""
from __future__ import annotations

import functools

import numpy as np

from models.errors import InputError

__all__ = ["registry", "dimensionless", "angle_power", "to_si", "from_si"]


@functools.cache
def registry():
    """The one pint unit registry (with ``fraction``)."""
    import pint

    ureg = pint.UnitRegistry()
    ureg.define("fraction = [] = frac")
    return ureg


def dimensionless(unit: str | None) -> bool:
    """Whether ``unit`` names no dimension (None, ``""``, ``"1"``, ``"0/1"``, ...)."""
    return unit is None or unit.strip() in ("", "1", "-", "0/1", "bool", "dimensionless")


#: pint's angle units (as it names them, without a prefix), and their power of an angle: pint
#: takes angles as dimensionless, so "%" converts to "rad" and "Hz" to "rad/s" unless the
#: angles are counted apart (:func:`angle_power`)
_ANGLES = {"radian": 1, "degree": 1, "arcminute": 1, "arcsecond": 1, "turn": 1,
           "revolution": 1, "gradian": 1, "revolutions_per_minute": 1,
           "revolutions_per_second": 1, "steradian": 2, "square_degree": 2}


def angle_power(unit: str | None) -> int:
    """The power of an angle in ``unit`` (1 for ``deg`` and ``rad/s``, 0 for ``Hz``, ``%``
    and ``1/s``, 2 for ``sr``); 0 for a dimensionless or unknown unit."""
    if dimensionless(unit):
        return 0
    ureg = registry()
    try:
        parsed = ureg.parse_units(unit)
    except Exception:
        return 0
    power = 0
    for name, exp in parsed._units.items():
        for _, base, _ in ureg.parse_unit_name(name)[:1]:
            power += _ANGLES.get(base, 0) * exp
    return int(round(power))


def to_si(values: np.ndarray | float, unit: str | None, expected: str | None = None, *,
          source: str | None = None, key: str | None = None) -> np.ndarray | float:
    """Convert ``values`` given in ``unit`` to the SI unit ``expected`` (e.g. ``"m"``,
    ``"rad/s"``).

    With ``expected=None`` the values are converted to pint's base (SI) units of ``unit``.
    ``unit`` of ``None``, ``""``, ``"1"`` or ``"0/1"`` means dimensionless.

    Raises
    ------
    InputError
        Unknown unit, or a unit whose dimension differs from ``expected``.
    """
    if dimensionless(unit) and (expected is None or dimensionless(expected)):
        return values
    ureg = registry()
    src = "dimensionless" if dimensionless(unit) else unit
    if expected is None:
        dst = None
    else:
        dst = "dimensionless" if dimensionless(expected) else expected
    try:
        q = ureg.Quantity(np.asarray(values, dtype=float), src)
    except Exception:  # pint raises several types for a bad unit string
        raise InputError(f"unknown unit '{unit}'", source=source, key=key) from None
    try:
        out = q.to(dst) if dst is not None else q.to_base_units()
    except Exception:
        raise InputError(f"unit '{unit}' is not compatible with '{expected}'", source=source,
                         key=key) from None
    if dst is not None and angle_power(src) != angle_power(dst):
        # pint converts these (its angles are dimensionless): an angle read as a percentage,
        # a rate in Hz as rad/s
        a, b = angle_power(dst), angle_power(src)
        raise InputError(f"unit '{unit}' is not compatible with '{expected}': an angle to the "
                         f"power {a} is expected, '{unit}' has {b} (name the angle: deg, rad, "
                         "mrad ...)", source=source, key=key)
    mag = out.magnitude
    return float(mag) if np.ndim(mag) == 0 else np.asarray(mag, dtype=float)


def from_si(values: np.ndarray | float, si_unit: str | None,
            unit: str | None) -> np.ndarray | float:
    """Convert SI ``values`` (in ``si_unit``) to ``unit`` for writing."""
    if unit is None or unit == si_unit or dimensionless(unit):
        return values
    return to_si(values, si_unit, unit)
