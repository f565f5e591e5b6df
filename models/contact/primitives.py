"""Geometric primitives of the contact paper, in SI units, each with its packed kernel form.

Passive primitives have constant parameters in the passive-unit frame (PU); active ones in
their buffer-link frame, brought into PU with :meth:`Sphere.transformed` /
:meth:`Segment.transformed` / :meth:`Circle.transformed` (digest eq. 2.1: ``p_PU = r + A^T
p_link``, ``A`` mapping PU -> link). ``pack()`` builds the float64 array the kernels in
:mod:`models._kernels.contact` read (layouts documented there); it is computed once and cached.

Conventions (digest section 2): ``X_PU`` points along the approach, into the passive
spacecraft; the mouth of the receiving cone lies in the plane ``x = 0``; a contact normal points
from the active body into the passive one.

References
----------
Seed digest ``docking-contact-models.md`` sections 6, 7, 8.1, 8.5, 9.1, 9.7 and 15.2.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Iterable, Sequence

import numpy as np

from models._kernels import contact as _k
from models.errors import InputError

__all__ = ["Sphere", "Segment", "Circle", "SurfaceOfRevolution", "PlaneFragment",
           "StopSurface45", "Slot", "GeneratorFan", "vec3"]


class _FromDict:
    """``from_dict`` for the primitives: a plain dict of SI values, unknown keys are errors."""

    @classmethod
    def from_dict(cls, d: dict, *, key: str | None = None):
        """Build from a plain dict (already in SI units, e.g. from ``recon.io.load_toml``).

        Raises :class:`InputError` naming the dotted key of an unknown or missing entry.
        """
        prefix = key or cls.__name__.lower()
        names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
        if not isinstance(d, dict):
            raise InputError("expected a table", key=prefix)
        unknown = sorted(set(d) - set(names))
        if unknown:
            raise InputError(f"unknown key (expected one of {', '.join(names)})",
                             key=f"{prefix}.{unknown[0]}")
        try:
            return cls(**d)
        except TypeError as exc:
            raise InputError(f"missing entries: {exc}", key=prefix) from exc
        except InputError as exc:
            if exc.key and not exc.key.startswith(prefix):
                exc.key = f"{prefix}.{exc.key.split('.', 1)[-1]}"
            raise


def vec3(value: Iterable[float], key: str) -> tuple[float, float, float]:
    """A finite 3-vector as a tuple of floats, or :class:`InputError` naming ``key``."""
    try:
        arr = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise InputError(f"expected three numbers, got {value!r}", key=key) from exc
    if arr.shape != (3,) or not np.all(np.isfinite(arr)):
        raise InputError(f"expected three finite numbers, got {value!r}", key=key)
    return float(arr[0]), float(arr[1]), float(arr[2])


def _positive(value: float, key: str, *, allow_zero: bool = False) -> float:
    v = float(value)
    if not math.isfinite(v) or v < 0.0 or (v == 0.0 and not allow_zero):
        raise InputError(f"must be {'>= 0' if allow_zero else '> 0'}, got {value!r}", key=key)
    return v


def _unit(v: Sequence[float], key: str) -> tuple[float, float, float]:
    a = np.asarray(v, dtype=float)
    n = float(np.linalg.norm(a))
    if n == 0.0:
        raise InputError("must not be the zero vector", key=key)
    a = a / n
    return float(a[0]), float(a[1]), float(a[2])


def _to_pu(p: Sequence[float], r: np.ndarray, a: np.ndarray) -> np.ndarray:
    return np.asarray(r, float) + np.asarray(a, float).T @ np.asarray(p, float)


@dataclass(frozen=True)
class Sphere(_FromDict):
    """Sphere (or point when ``radius == 0``): probe head, alignment roller, sensor sphere.

    Parameters
    ----------
    center
        Centre in the home frame [m].
    radius
        Radius :math:`R_S` [m] (0 for a point: limiter-pad end, ring-plane point).
    """

    center: tuple[float, float, float]
    radius: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "center", vec3(self.center, "sphere.center"))
        object.__setattr__(self, "radius", _positive(self.radius, "sphere.radius",
                                                     allow_zero=True))

    def transformed(self, r: Sequence[float], a: np.ndarray) -> "Sphere":
        """The sphere in PU, given the home frame's origin ``r`` [m] in PU and DCM ``a``
        (PU -> home)."""
        return Sphere(tuple(_to_pu(self.center, np.asarray(r), np.asarray(a))), self.radius)


@dataclass(frozen=True)
class Segment(_FromDict):
    """Directed segment ``start + t * vector``, ``t`` in [0, 1] (digest 7.5).

    Parameters
    ----------
    start
        Start point :math:`P_1` [m].
    vector
        Direction vector :math:`\\mathbf L = P_2 - P_1` [m] (not normalized).
    """

    start: tuple[float, float, float]
    vector: tuple[float, float, float]

    def __post_init__(self) -> None:
        object.__setattr__(self, "start", vec3(self.start, "segment.start"))
        object.__setattr__(self, "vector", vec3(self.vector, "segment.vector"))
        if not any(self.vector):
            raise InputError("a segment needs a non-zero vector", key="segment.vector")

    @property
    def end(self) -> tuple[float, float, float]:
        """End point :math:`P_2` [m]."""
        return tuple(s + v for s, v in zip(self.start, self.vector))  # type: ignore[return-value]

    def transformed(self, r: Sequence[float], a: np.ndarray) -> "Segment":
        """The segment in PU (start moved like a point, vector rotated with ``a^T``)."""
        a = np.asarray(a, float)
        return Segment(tuple(_to_pu(self.start, np.asarray(r), a)),
                       tuple(a.T @ np.asarray(self.vector)))


@dataclass(frozen=True)
class Circle(_FromDict):
    """Boundary circle (digest 7.6): the mouth of the receiving cone, the socket entry, the
    inner boundary circle of a ring.

    Parameters
    ----------
    center
        Centre :math:`P_B` [m].
    axis
        Direction of the circle's axis from :math:`P_B` **into the material of the body that
        carries the circle** (towards the cone vertex :math:`P_T` for the mouth of the
        receiving cone, i.e. ``+X_PU``); normalized on construction.
    radius
        Radius :math:`R_C` [m].
    on_active
        True if the circle belongs to the active body (peripheral ring); the contact normal is
        then reversed so that it still points from the active into the passive body.
    """

    center: tuple[float, float, float]
    axis: tuple[float, float, float]
    radius: float
    on_active: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "center", vec3(self.center, "circle.center"))
        object.__setattr__(self, "axis", _unit(vec3(self.axis, "circle.axis"), "circle.axis"))
        object.__setattr__(self, "radius", _positive(self.radius, "circle.radius"))

    @cached_property
    def packed(self) -> np.ndarray:
        """``C_*`` layout of :mod:`models._kernels.contact`."""
        p = np.empty(_k.C_SIZE)
        p[_k.C_BX:_k.C_BX + 3] = self.center
        p[_k.C_UX:_k.C_UX + 3] = self.axis
        p[_k.C_R] = self.radius
        p[_k.C_SIDE] = -1.0 if self.on_active else 1.0
        return p

    def pack(self) -> np.ndarray:
        return self.packed

    def transformed(self, r: Sequence[float], a: np.ndarray) -> "Circle":
        """The circle in PU."""
        a = np.asarray(a, float)
        return Circle(tuple(_to_pu(self.center, np.asarray(r), a)),
                      tuple(a.T @ np.asarray(self.axis)), self.radius, self.on_active)


@dataclass(frozen=True, eq=False)
class SurfaceOfRevolution(_FromDict):
    """Surface of revolution about ``X_PU`` given by its meridian polyline.

    Truncated cones (digest 7.1), cylinders (7.3), annular plane fragments normal to the axis
    (7.4) and the rims between them (7.2) are its segments and vertices. The vertices
    ``(x_k, rho_k)`` [m] are listed so that the material lies on the side
    ``n = (-t_rho, t_x)`` of each segment's unit tangent ``t``: for the receiving cone, from the
    outer edge of the interface plane inwards to the mouth, along the cones to the socket
    cylinder, and inwards along the socket bottom. A vertex is a rim (convex) when the wall
    turns towards the axis direction, ``t_prev x t_next > 0``. The end vertices are not contact
    features (the surface stops there).

    Parameters
    ----------
    meridian
        Sequence of ``(x, rho)`` vertices [m], ``rho >= 0``, at least two, no repeated vertex.
    """

    meridian: tuple[tuple[float, float], ...]

    def __post_init__(self) -> None:
        try:
            pts = np.asarray(self.meridian, dtype=float)
        except (TypeError, ValueError) as exc:
            raise InputError(f"expected (x, rho) pairs: {exc}", key="surface.meridian") from exc
        if pts.ndim != 2 or pts.shape[1] != 2 or pts.shape[0] < 2:
            raise InputError("expected at least two (x, rho) vertices", key="surface.meridian")
        if not np.all(np.isfinite(pts)) or np.any(pts[:, 1] < 0.0):
            raise InputError("vertices must be finite with rho >= 0", key="surface.meridian")
        if np.any(np.hypot(*np.diff(pts, axis=0).T) == 0.0):
            raise InputError("repeated vertex", key="surface.meridian")
        object.__setattr__(self, "meridian", tuple((float(x), float(r)) for x, r in pts))

    @cached_property
    def packed(self) -> np.ndarray:
        """Meridian table ``mer[k, M_*]`` of :mod:`models._kernels.contact`."""
        pts = np.asarray(self.meridian)
        n = len(pts)
        m = np.zeros((n, _k.M_NCOL))
        m[:, _k.M_X] = pts[:, 0]
        m[:, _k.M_RHO] = pts[:, 1]
        d = np.diff(pts, axis=0)
        lengths = np.hypot(d[:, 0], d[:, 1])
        m[:-1, _k.M_TX] = d[:, 0] / lengths
        m[:-1, _k.M_TRHO] = d[:, 1] / lengths
        m[:-1, _k.M_LEN] = lengths
        m[:, _k.M_KIND] = _k.KIND_END
        for k in range(1, n - 1):
            tp = m[k - 1, _k.M_TX:_k.M_TRHO + 1]
            tn = m[k, _k.M_TX:_k.M_TRHO + 1]
            cross = tp[0] * tn[1] - tp[1] * tn[0]
            if cross > 1e-12:
                m[k, _k.M_KIND] = _k.KIND_CONVEX
            elif cross < -1e-12:
                m[k, _k.M_KIND] = _k.KIND_CONCAVE
            else:
                m[k, _k.M_KIND] = _k.KIND_STRAIGHT
        return m

    def pack(self) -> np.ndarray:
        return self.packed

    def feature_name(self, feature: int) -> str:
        """Human name of a feature id (``2k`` face k, ``2k - 1`` vertex k)."""
        if feature % 2 == 0:
            k = feature // 2
            (x0, r0), (x1, r1) = self.meridian[k], self.meridian[k + 1]
            if x0 == x1:
                kind = "plane"
            elif r0 == r1:
                kind = "cylinder"
            else:
                kind = "cone"
            return f"face {k} ({kind})"
        k = (feature + 1) // 2
        kind = "rim" if self.packed[k, _k.M_KIND] == _k.KIND_CONVEX else "corner"
        return f"vertex {k} ({kind})"

    def cone_parameters(self, k: int) -> tuple[float, float, float, float]:
        """Paper's parameters of conical face ``k``: ``(R_max, R_min, alpha, x_T)``
        ([m], [m], [rad], [m]): base radii, generator angle to the axis and vertex abscissa
        (digest 7.1). Raises :class:`InputError` for a cylinder or a plane face."""
        (x0, r0), (x1, r1) = self.meridian[k], self.meridian[k + 1]
        if x0 == x1 or r0 == r1:
            raise InputError(f"face {k} is not a cone", key="surface.meridian")
        alpha = math.atan2(abs(r1 - r0), abs(x1 - x0))
        x_t = x0 + r0 * (x1 - x0) / (r0 - r1)
        return max(r0, r1), min(r0, r1), alpha, x_t


@dataclass(frozen=True)
class PlaneFragment(_FromDict):
    """Annular plane fragment normal to ``X_PU`` (digest 7.4, 9.4): socket bottom, ring plane.

    Parameters
    ----------
    x
        Abscissa of the plane [m].
    rho_min, rho_max
        Annulus bounds on the distance of the active point from the axis [m] (inclusive).
    material_side
        +1 if the passive material is at ``x > x`` (the usual case), -1 otherwise.
    """

    x: float
    rho_min: float
    rho_max: float
    material_side: int = 1

    def __post_init__(self) -> None:
        _positive(self.rho_min, "plane.rho_min", allow_zero=True)
        _positive(self.rho_max, "plane.rho_max")
        if self.rho_max < self.rho_min:
            raise InputError("rho_max < rho_min", key="plane.rho_max")
        if self.material_side not in (1, -1):
            raise InputError("must be +1 or -1", key="plane.material_side")

    @cached_property
    def packed(self) -> np.ndarray:
        p = np.empty(_k.PL_SIZE)
        p[_k.PL_X] = self.x
        p[_k.PL_RMIN] = self.rho_min
        p[_k.PL_RMAX] = self.rho_max
        p[_k.PL_SIDE] = float(self.material_side)
        return p

    def pack(self) -> np.ndarray:
        return self.packed


@dataclass(frozen=True)
class StopSurface45(_FromDict):
    """45-degree conical stop surface of the peripheral unit (digest 9.7).

    ``rho_s(x) = rho0 + sigma (x - x0)``, material at ``rho > rho_s``. The guide surface of
    the paper has ``sigma = -1`` (radius decreasing along the approach, normal
    ``(1, rho_hat)/sqrt 2``); the locking (reverse) surface, read from the digest's correction,
    ``sigma = +1`` (normal ``(-1, rho_hat)/sqrt 2``). The digest rates that correction
    low-to-medium confidence: ``sigma`` is a parameter so design data can fix it.

    Parameters
    ----------
    rho0, x0
        A point of the generator line [m].
    sigma
        +1 or -1.
    x_lo, x_hi
        Axial extent of the fragment (abscissa of the foot of the perpendicular) [m].
    x_crest, r_crest
        Plane ``P_Stop`` (``x = x_crest``) and crest radius ``R_Stop,min`` [m] for the segment
        test.
    """

    rho0: float
    x0: float
    sigma: int
    x_lo: float
    x_hi: float
    x_crest: float
    r_crest: float

    def __post_init__(self) -> None:
        if self.sigma not in (1, -1):
            raise InputError("must be +1 or -1", key="stop.sigma")
        if self.x_hi < self.x_lo:
            raise InputError("x_hi < x_lo", key="stop.x_hi")
        _positive(self.r_crest, "stop.r_crest")

    @cached_property
    def packed(self) -> np.ndarray:
        p = np.empty(_k.S45_SIZE)
        p[_k.S45_RHO0] = self.rho0
        p[_k.S45_X0] = self.x0
        p[_k.S45_SIGMA] = float(self.sigma)
        p[_k.S45_XLO] = self.x_lo
        p[_k.S45_XHI] = self.x_hi
        p[_k.S45_XCREST] = self.x_crest
        p[_k.S45_RCREST] = self.r_crest
        return p

    def pack(self) -> np.ndarray:
        return self.packed


@dataclass(frozen=True)
class Slot(_FromDict):
    """Socket slot of a probe-head latch after capture (digest 8.5; Fig. 9 is missing, so the
    profile is the digest's reconstruction).

    The slot lies in the plane through ``vertex`` spanned by ``axial`` and ``lateral``. Along
    ``d1 = (P - vertex).axial`` it has the stop at ``d1 = 0``, a narrow part of half-width
    ``d_ll1`` up to ``d_lx1``, inclined faces at angle ``beta`` to the axis up to ``d_lx2``,
    and a wide part of half-width ``d_ll2`` with its own side walls (the digest says "never
    touched", but a latch that has gone deep into the socket does swing there; without them
    the penetration jumped when it came back into the inclined part).  ``d_ll2`` follows
    from the digest's consistency condition, so the profile is closed. ``d_ll1`` is the
    design value reduced by half the latch width (the latch model is flat).

    Parameters
    ----------
    vertex
        Socket stop point in PU [m].
    axial
        Unit vector along the slot from the stop into the slot, the direction of increasing
        ``d1`` (``+X_PU`` in the digest's reconstruction).
    lateral
        Unit vector across the slot, perpendicular to ``axial``. ``axial x lateral`` must
        point out of the socket, to the side the latch reaches through the window (the
        detector's bore contact pushes the latch back along its opposite).
    d_ll1
        Half-width of the narrow part [m].
    d_lx1, d_lx2
        Axial start and end of the inclined faces [m].
    beta
        Angle of the inclined faces to the axis [rad].
    """

    vertex: tuple[float, float, float]
    axial: tuple[float, float, float]
    lateral: tuple[float, float, float]
    d_ll1: float
    d_lx1: float
    d_lx2: float
    beta: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "vertex", vec3(self.vertex, "slot.vertex"))
        object.__setattr__(self, "axial", _unit(vec3(self.axial, "slot.axial"), "slot.axial"))
        object.__setattr__(self, "lateral", _unit(vec3(self.lateral, "slot.lateral"),
                                                  "slot.lateral"))
        if abs(float(np.dot(self.axial, self.lateral))) > 1e-9:
            raise InputError("must be perpendicular to slot.axial", key="slot.lateral")
        _positive(self.d_ll1, "slot.d_ll1")
        _positive(self.d_lx1, "slot.d_lx1", allow_zero=True)
        if self.d_lx2 <= self.d_lx1:
            raise InputError("d_lx2 must exceed d_lx1", key="slot.d_lx2")
        if not 0.0 <= self.beta < math.pi / 2:
            raise InputError("beta must be in [0, pi/2)", key="slot.beta")

    @property
    def d_ll2(self) -> float:
        """Half-width of the wide part [m], ``d_ll1 + (d_lx2 - d_lx1) tan(beta)``."""
        return self.d_ll1 + (self.d_lx2 - self.d_lx1) * math.tan(self.beta)

    @cached_property
    def packed(self) -> np.ndarray:
        p = np.empty(_k.SL_SIZE)
        p[_k.SL_VX:_k.SL_VX + 3] = self.vertex
        p[_k.SL_EX:_k.SL_EX + 3] = self.axial
        p[_k.SL_ET:_k.SL_ET + 3] = self.lateral
        p[_k.SL_EN:_k.SL_EN + 3] = np.cross(self.axial, self.lateral)
        p[_k.SL_DLL1] = self.d_ll1
        p[_k.SL_DLX1] = self.d_lx1
        p[_k.SL_DLX2] = self.d_lx2
        p[_k.SL_TANB] = math.tan(self.beta)
        p[_k.SL_SINB] = math.sin(self.beta)
        p[_k.SL_COSB] = math.cos(self.beta)
        p[_k.SL_DLL2] = self.d_ll2
        return p

    def pack(self) -> np.ndarray:
        return self.packed


@dataclass(frozen=True, eq=False)
class GeneratorFan:
    """Fan of ``2^N + 1`` generator segments approximating a petal's conical surface
    (digest 9.1, 9.5), in the fan's home frame (the ring frame).

    Parameters
    ----------
    starts
        Start points, shape (n, 3) [m].
    vectors
        Direction vectors (start to end), shape (n, 3) [m].
    """

    starts: np.ndarray = field(repr=False)
    vectors: np.ndarray = field(repr=False)

    def __post_init__(self) -> None:
        s = np.array(self.starts, dtype=float)
        v = np.array(self.vectors, dtype=float)
        if s.ndim != 2 or s.shape[1] != 3 or s.shape != v.shape or len(s) < 2:
            raise InputError("starts and vectors must both have shape (n, 3), n >= 2",
                             key="fan.starts")
        if not (np.all(np.isfinite(s)) and np.all(np.isfinite(v))):
            raise InputError("non-finite generator", key="fan.starts")
        s.setflags(write=False)
        v.setflags(write=False)
        object.__setattr__(self, "starts", s)
        object.__setattr__(self, "vectors", v)

    @classmethod
    def petal(cls, *, n_bits: int, start_radius: float, start_x: float, apex_x: float,
              phi_min: float, phi_max: float, length_max: float, length_min: float,
              edge_fraction: float = 0.2) -> "GeneratorFan":
        """Generators of a petal's conical surface (digest 9.1 dev note, a reconstruction).

        Generator ``k = 0 .. 2^N`` starts at angle ``phi_k`` (uniform over
        ``[phi_min, phi_max]`` [rad]) on the circle of radius ``start_radius`` [m] (the
        ``R_R,max`` circle) in the plane ``x = start_x`` [m] and points at the cone apex
        ``(apex_x, 0, 0)``. Its length is ``length_max`` [m] in the middle of the petal and
        grows linearly from ``length_min`` at the first and last generator over
        ``edge_fraction`` of the span at each end (the generators cut by the inclined side
        faces: monotone length there, as the paper's modified dichotomy assumes). Real petals
        take the lengths from the side-face planes of the design.
        """
        if n_bits < 1:
            raise InputError("n_bits must be >= 1", key="fan.n_bits")
        if not 0.0 < length_min <= length_max:
            raise InputError("need 0 < length_min <= length_max", key="fan.length_min")
        if not 0.0 < edge_fraction <= 0.5:
            raise InputError("must be in (0, 0.5]", key="fan.edge_fraction")
        phi = np.linspace(phi_min, phi_max, 2 ** n_bits + 1)
        starts = np.stack([np.full_like(phi, start_x), start_radius * np.cos(phi),
                           start_radius * np.sin(phi)], axis=1)
        u = np.array([apex_x, 0.0, 0.0]) - starts
        u /= np.linalg.norm(u, axis=1)[:, None]
        frac = np.minimum(np.arange(len(phi)), np.arange(len(phi))[::-1]) / (len(phi) - 1)
        lengths = length_min + (length_max - length_min) * np.minimum(frac / edge_fraction, 1.0)
        return cls(starts, u * lengths[:, None])

    @cached_property
    def packed(self) -> np.ndarray:
        """``fan[i, F_*]`` table of :mod:`models._kernels.contact`."""
        p = np.empty((len(self.starts), _k.F_NCOL))
        p[:, _k.F_PX:_k.F_PX + 3] = self.starts
        p[:, _k.F_LX:_k.F_LX + 3] = self.vectors
        return p

    def pack(self) -> np.ndarray:
        return self.packed
