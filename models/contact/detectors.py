"""Readable contact detectors: one function per primitive pair, over the numba kernels.

Each takes primitives already expressed in the passive-unit frame (PU) and returns
:class:`Contact` objects (a list for pairs that can touch in several places, otherwise a
``Contact`` or ``None``). A penetration above ``dn_max`` raises :class:`PenetrationExceeded`;
a closed form used outside its validity raises :class:`GeometryRangeError`. The physics lives
only in :mod:`models._kernels.contact`; unit kernels call those functions directly.

References
----------
Seed digest ``docking-contact-models.md`` sections 7, 8.5, 9.5, 9.7 and 12.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from models._kernels import contact as _k
from models.contact.errors import GeometryRangeError, PenetrationExceeded
from models.contact.primitives import (Circle, GeneratorFan, PlaneFragment, Segment, Slot,
                                       Sphere, StopSurface45, SurfaceOfRevolution)
from models.errors import InputError

__all__ = ["Contact", "raise_for_status", "sphere_vs_revolution", "sphere_vs_plane",
           "segment_vs_circle", "segment_vs_segment", "point_vs_stop45",
           "segment_vs_stop45_crest", "segment_vs_slot", "fan_vs_circle", "fan_search"]


@dataclass(frozen=True)
class Contact:
    """One contact point (the paper's point of maximum mutual penetration).

    Attributes
    ----------
    depth
        Penetration :math:`\\Delta_n` [m], > 0.
    normal
        Unit normal :math:`\\mathbf n_R`, PU axes, from the active into the passive body.
    point
        Contact point in PU [m]; both bodies' forces act here.
    feature
        Feature id of the passive primitive (face/vertex of a surface of revolution, slot
        wall, generator index of a fan).
    pair
        Name of the primitive pair.
    """

    depth: float
    normal: tuple[float, float, float]
    point: tuple[float, float, float]
    feature: int
    pair: str


def raise_for_status(result: tuple, pair: str, dn_max: float, *, time: float | None = None,
                     poses: dict[str, Any] | None = None) -> Contact | None:
    """Turn a kernel contact tuple into a :class:`Contact`, ``None`` or a typed exception."""
    st = int(result[0])
    if st == _k.NONE:
        return None
    if st == _k.PENETRATION_EXCEEDED:
        raise PenetrationExceeded(pair, result[1], dn_max, time=time, poses=poses,
                                  feature=int(result[8]))
    if st == _k.GEOMETRY_RANGE:
        raise GeometryRangeError(pair, f"closed form outside its validity at feature "
                                 f"{int(result[8])} (degenerate direction: a point on the "
                                 f"axis, or a segment along the rim tangent)", time=time)
    return Contact(float(result[1]), (float(result[2]), float(result[3]), float(result[4])),
                   (float(result[5]), float(result[6]), float(result[7])), int(result[8]), pair)


def _limit(dn_max: float) -> float:
    v = float(dn_max)
    if not v > 0.0:
        raise InputError(f"must be > 0, got {dn_max!r}", key="dn_max")
    return v


def sphere_vs_revolution(sphere: Sphere, surface: SurfaceOfRevolution, dn_max: float, *,
                         time: float | None = None, pair: str = "sphere / surface"
                         ) -> list[Contact]:
    """All contacts of a sphere (or point) with a surface of revolution (digest 7.1-7.4).

    Nearest-feature classification in the meridian plane: at most one contact, except two at
    a concave corner (socket wall plus bottom). See
    :func:`models._kernels.contact.sphere_vs_revolution`.
    """
    dn_max = _limit(dn_max)
    mer = surface.packed
    x, y, z = sphere.center
    out = []
    start = 0
    while True:
        res = _k.sphere_vs_revolution(x, y, z, sphere.radius, mer, dn_max, start)
        c = raise_for_status(res, pair, dn_max, time=time,
                             poses={"sphere_center": sphere.center})
        if c is None:
            return out
        out.append(c)
        start = c.feature + 1


def sphere_vs_plane(sphere: Sphere, plane: PlaneFragment, dn_max: float, *,
                    time: float | None = None, pair: str = "sphere / plane") -> Contact | None:
    """Sphere (or point) against a plane fragment normal to ``X_PU`` (digest 7.4, 9.4)."""
    dn_max = _limit(dn_max)
    x, y, z = sphere.center
    return raise_for_status(_k.sphere_vs_plane(x, y, z, sphere.radius, plane.packed, dn_max),
                            pair, dn_max, time=time, poses={"sphere_center": sphere.center})


def segment_vs_circle(segment: Segment, circle: Circle, dn_max: float, *,
                      time: float | None = None, pair: str = "segment / circle"
                      ) -> Contact | None:
    """Segment against a boundary circle (digest 7.6, general off-axis form)."""
    dn_max = _limit(dn_max)
    return raise_for_status(_k.segment_vs_circle(*segment.start, *segment.vector,
                                                 circle.packed, dn_max),
                            pair, dn_max, time=time, poses={"segment": segment, "circle": circle})


def segment_vs_segment(active: Segment, passive: Segment, dn_max: float, *,
                       time: float | None = None, pair: str = "segment / segment"
                       ) -> Contact | None:
    """Active segment against passive segment by their common perpendicular (digest 7.7)."""
    dn_max = _limit(dn_max)
    return raise_for_status(_k.segment_vs_segment(*active.start, *active.vector,
                                                  *passive.start, *passive.vector, dn_max),
                            pair, dn_max, time=time, poses={"active": active, "passive": passive})


def point_vs_stop45(point: Sequence[float], stop: StopSurface45, dn_max: float, *,
                    time: float | None = None, pair: str = "latch point / stop"
                    ) -> Contact | None:
    """Latch end point against a 45-degree stop surface (digest 9.7)."""
    dn_max = _limit(dn_max)
    x, y, z = (float(v) for v in point)
    return raise_for_status(_k.point_vs_stop45(x, y, z, stop.packed, dn_max), pair, dn_max,
                            time=time, poses={"point": (x, y, z)})


def segment_vs_stop45_crest(segment: Segment, stop: StopSurface45, dn_max: float, *,
                            time: float | None = None, pair: str = "latch segment / stop crest"
                            ) -> Contact | None:
    """Latch segment against the crest circle of a 45-degree stop (digest 9.7)."""
    dn_max = _limit(dn_max)
    return raise_for_status(_k.segment_vs_stop45_crest(*segment.start, *segment.vector,
                                                       stop.packed, dn_max),
                            pair, dn_max, time=time, poses={"segment": segment})


def segment_vs_slot(segment: Segment, slot: Slot, dn_max: float, *, time: float | None = None,
                    pair: str = "latch / slot") -> list[Contact]:
    """Latch reverse segment against a socket slot (digest 8.5): stop, narrow / inclined /
    wide side wall or the edge between the last two, or the bore beside the window; the stop
    and a side wall may act together (see :func:`models._kernels.contact.segment_vs_slot`)."""
    dn_max = _limit(dn_max)
    out = []
    start = 0
    while True:
        c = raise_for_status(_k.segment_vs_slot(*segment.start, *segment.vector, slot.packed,
                                                dn_max, start),
                             pair, dn_max, time=time, poses={"segment": segment})
        if c is None:
            return out
        out.append(c)
        start = c.feature + 1


def _pose(r: Sequence[float], a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r = np.ascontiguousarray(r, dtype=float).reshape(3)
    a = np.ascontiguousarray(a, dtype=float).reshape(3, 3)
    return r, a


def fan_search(fan: GeneratorFan, r: Sequence[float], a: np.ndarray, circle: Circle, *,
               exhaustive: bool = False) -> tuple[int, float, int]:
    """Index of the generator with the largest characteristic distance to ``circle``, that
    distance [m] and the number of generators evaluated (digest 9.5)."""
    r, a = _pose(r, a)
    i, d2, n = _k.fan_search(fan.packed, r, a, circle.packed, exhaustive)
    return int(i), float(np.sqrt(d2)) if d2 >= 0 else -1.0, int(n)


def fan_vs_circle(fan: GeneratorFan, r: Sequence[float], a: np.ndarray, circle: Circle,
                  dn_max: float, *, exhaustive: bool = False, time: float | None = None,
                  pair: str = "petal fan / circle") -> Contact | None:
    """Petal generator fan against a boundary circle (digest 9.5).

    Parameters
    ----------
    fan
        Generators in the fan's home frame.
    r, a
        Origin [m] of the fan frame in PU and DCM PU -> fan frame.
    circle
        Circle in PU.
    exhaustive
        Search every generator instead of the guarded dichotomy (reference mode).
    """
    dn_max = _limit(dn_max)
    r, a = _pose(r, a)
    return raise_for_status(_k.fan_vs_circle(fan.packed, r, a, circle.packed, dn_max,
                                             exhaustive),
                            pair, dn_max, time=time, poses={"fan_origin": r, "fan_dcm": a})
