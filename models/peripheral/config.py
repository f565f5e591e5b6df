"""Peripheral (androgynous ring) unit configuration: the two vehicles and the ring design.

Frozen dataclasses built from the plain (SI) dict of a scenario TOML (see
``presets/reference.toml``). The ring design is one table ``[ring]`` with the subtables
``[ring.stops]``, ``[ring.latches]`` and ``[ring.capture_sensors]``: the unit is androgynous,
so the active and the passive ring are the same design (digest 9.1); the active ring uses its
petals, latches and capture sensors, the passive ring its petals and stops. Unknown keys are
errors naming the dotted key and, when given, the file; angles are in radians, lengths in
metres.

Frames of the design (the ring's own axes, digest 9.1): origin at the ring centre, ``X``
along the ring axis towards the mating unit (petals protrude towards ``+X``), ring plane
``x = 0``, azimuth ``phi`` measured from ``+Y`` towards ``+Z``. Depths ("behind the ring
plane") are measured into the ring's own body, i.e. towards ``-X``.

References
----------
Digest ``docking-contact-models.md`` sections 9.1 (ring geometry), 9.3-9.8, 12, 13.
"""
from __future__ import annotations

import math
from dataclasses import MISSING, dataclass, fields
from typing import Any, Mapping

import numpy as np

from models.errors import InputError
from models.limits import check_keys as _check_keys, number as _num
from models.peripheral import schema as S
from models.rigid_body import RigidBody

__all__ = [
    "RingGeometry",
    "StopGeometry",
    "LatchGeometry",
    "CaptureSensorGeometry",
    "RingDesign",
    "PeripheralConfig",
]

_DEG = math.pi / 180.0


def _floats(cls, table, d: Mapping[str, Any], prefix: str, *,
            skip: tuple[str, ...] = ()) -> dict:
    """Every field of ``cls`` but ``skip`` as a number from ``d`` (defaults from the
    dataclass); keys other than those the declaration ``table`` names
    (:mod:`models.peripheral.schema`) are errors naming ``prefix + key``."""
    _check_keys(d, table.names(), prefix)
    kw = {}
    for f in fields(cls):
        if f.name in skip:
            continue
        default = None if f.default is MISSING else f.default
        kw[f.name] = _num(d, f.name, prefix, default)
    return kw


def _sourced(build, d: Mapping[str, Any], source: str | None):
    """``build(d)``; an :class:`InputError` leaving it names ``source`` (the file)."""
    try:
        return build(d)
    except InputError as exc:
        if source is not None:
            exc.with_source(source)
        raise


# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RingGeometry:
    """Docking ring and its three guide petals (digest 9.1), in the ring's own axes.

    Parameters
    ----------
    inner_radius
        ``R_R`` [m]: inner boundary circle of the ring plane; the petals' conical surface
        meets the ring plane on it (points ``B1``, ``B2``).
    max_lateral_penetration
        ``Delta_max`` [m]: the largest admissible lateral penetration; the generator starts
        and the extended side-face edges start on the circle ``R_R,max = R_R + Delta_max``
        below the ring plane.
    face_outer_radius
        [m] outer radius of the ring face: the ring-plane annulus is ``R_R .. face_outer_radius``.
    petal_count
        Number of petals [-]; the digest's unit and this model have 3.
    petal_height
        ``h`` [m]: height of the petal top edge ``A1 A2`` above the ring plane.
    petal_span
        [rad] angular span of the petal at its base, between ``B1`` and ``B2`` (the span of
        the generator fan).
    petal_top_span
        [rad] angular span of the top edge, between the apexes ``A1`` and ``A2`` of the side
        faces (< ``petal_span``: the petal narrows towards its top).
    cone_angle
        ``alpha`` [rad]: angle between the ring axis and the generators of the petals' conical
        surface; the cone passes through the ``R_R`` circle in the ring plane and narrows
        towards ``+X``: ``rho(x) = R_R - x tan(alpha)``.
    lower_point_radius, lower_point_x
        [m] radius and abscissa of the lower side-face points ``E1``, ``E2`` (design data: the
        inner corner of the petal's flank at its base).
    lower_point_span
        [rad] angular span between ``E1`` and ``E2``.
    generator_bits
        ``N`` [-]: each petal's conical surface is ``2^N + 1`` generator segments (paper:
        ``N = 8``, 257 generators).
    first_petal_azimuth
        [rad] azimuth of petal 1's centre line; petal ``k`` is at ``+ 2 pi k / 3``. The
        androgynous turn (:data:`models.peripheral.geometry.ANDROGYNOUS_TURN`) interleaves the
        two rings only for ``0`` or ``pi / 3`` (modulo ``2 pi / 3``).
    """

    inner_radius: float
    max_lateral_penetration: float
    face_outer_radius: float
    petal_height: float
    petal_span: float
    petal_top_span: float
    cone_angle: float
    lower_point_radius: float
    lower_point_x: float = 0.0
    lower_point_span: float = 0.0
    generator_bits: float = 8
    petal_count: float = 3
    first_petal_azimuth: float = 0.0

    def __post_init__(self) -> None:
        p = "ring."
        for k in ("inner_radius", "max_lateral_penetration", "petal_height", "petal_span",
                  "petal_top_span", "cone_angle", "lower_point_radius"):
            if not getattr(self, k) > 0.0:
                raise InputError("must be positive", key=p + k)
        if self.petal_count != 3:
            raise InputError("the peripheral unit has 3 petals per ring", key=p + "petal_count")
        n = self.generator_bits
        if n != int(n) or not 1 <= n <= 16:
            raise InputError("must be a whole number in [1, 16]", key=p + "generator_bits")
        object.__setattr__(self, "generator_bits", int(n))
        object.__setattr__(self, "petal_count", int(self.petal_count))
        if self.lower_point_span == 0.0:
            object.__setattr__(self, "lower_point_span", float(self.petal_span))
        if self.face_outer_radius <= self.inner_radius:
            raise InputError(f"must exceed ring.inner_radius = {self.inner_radius:g} m",
                             key=p + "face_outer_radius")
        if not self.cone_angle < 80.0 * _DEG:
            raise InputError("must be below 80 deg (1.396 rad)", key=p + "cone_angle")
        top = self.top_radius
        if top <= 0.0:
            raise InputError(f"the petal top radius R_R - h tan(alpha) = {top:g} m is not "
                             "positive: lower the petal height or the cone angle",
                             key=p + "petal_height")
        if not self.petal_top_span < self.petal_span:
            raise InputError(f"must be below ring.petal_span = {self.petal_span:g} rad (the "
                             "petal narrows towards its top)", key=p + "petal_top_span")
        if not self.petal_span < 2.0 * math.pi / 3.0:
            raise InputError("must be below 2 pi / 3", key=p + "petal_span")
        if not self.lower_point_span < 2.0 * math.pi / 3.0:
            raise InputError("must be below 2 pi / 3", key=p + "lower_point_span")
        if not self.lower_point_radius < self.inner_radius:
            raise InputError(f"must be below ring.inner_radius = {self.inner_radius:g} m "
                             "(E1, E2 are the inner corners of the petal base)",
                             key=p + "lower_point_radius")
        if not -self.petal_height < self.lower_point_x < self.petal_height:
            raise InputError("must lie within +- ring.petal_height of the ring plane",
                             key=p + "lower_point_x")

    @property
    def max_radius(self) -> float:
        """``R_R,max = R_R + Delta_max`` [m]."""
        return self.inner_radius + self.max_lateral_penetration

    @property
    def top_radius(self) -> float:
        """Radius of the petal top edge, ``R_R - h tan(alpha)`` [m]."""
        return self.inner_radius - self.petal_height * math.tan(self.cone_angle)

    def surface_radius(self, x: float) -> float:
        """Radius of the petals' conical surface at abscissa ``x`` [m] (ring axes) [m]."""
        return self.inner_radius - x * math.tan(self.cone_angle)

    @classmethod
    def _build(cls, d: Mapping[str, Any]) -> "RingGeometry":
        sub = {t.name for t in S.RING.tables()}
        _check_keys(d, S.RING.names(), "ring.")
        return cls(**_floats(cls, S.RING, {k: v for k, v in d.items() if k not in sub},
                             "ring."))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, source: str | None = None):
        """Build from the ``[ring]`` table (its subtables are skipped); errors
        name the key and ``source``."""
        return _sourced(cls._build, d, source)


# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StopGeometry:
    """Stops of a ring (digest 9.7), one in each gap between its petals.

    Each stop is a ridge of two 45-degree conical fragments about the ring axis, within an
    angular sector: the **guide surface** ``rho = max_radius - (depth - guide_depth)`` from
    ``max_radius`` at ``guide_depth`` down to the crest ``min_radius`` at
    ``crest_depth = guide_depth + (max_radius - min_radius)`` (plane ``P_Stop``), then the
    **locking surface** ``rho = min_radius + (depth - crest_depth)`` up to ``locking_depth``.
    The material is outside (``rho`` larger). The locking surface's orientation is the
    digest's corrected reading (9.7, low-to-medium confidence): it faces the ring plane's far
    side, so a latch behind the crest resists separation.

    Parameters
    ----------
    azimuths
        [rad] mid-azimuths of the stops (own axes), one per gap, three values.
    min_radius, max_radius
        ``R_Stop,min`` (crest) and ``R_Stop,max`` [m].
    guide_depth
        [m] depth behind the ring plane where the guide surface has ``max_radius``.
    locking_depth
        [m] depth where the locking surface ends (> ``crest_depth``).
    half_width
        [rad] angular half-width of each stop's sector.
    """

    azimuths: tuple[float, ...]
    min_radius: float
    max_radius: float
    guide_depth: float
    locking_depth: float
    half_width: float

    def __post_init__(self) -> None:
        p = "ring.stops."
        if not 0.0 < self.min_radius < self.max_radius:
            raise InputError(f"need 0 < min_radius < max_radius = {self.max_radius:g} m "
                             "(R_Stop,min < R_Stop,max)", key=p + "min_radius")
        if self.guide_depth < 0.0:
            raise InputError("must not be negative (behind the ring plane)",
                             key=p + "guide_depth")
        if not self.locking_depth > self.crest_depth:
            raise InputError(f"must exceed the crest depth guide_depth + max_radius - "
                             f"min_radius = {self.crest_depth:g} m", key=p + "locking_depth")
        if not 0.0 < self.half_width < math.pi / 3.0:
            raise InputError("must be in (0, pi / 3)", key=p + "half_width")
        if len(self.azimuths) != 3:
            raise InputError("expected three azimuths, one per gap", key=p + "azimuths")

    @property
    def crest_depth(self) -> float:
        """Depth of the crest (plane ``P_Stop``) behind the ring plane [m]."""
        return self.guide_depth + (self.max_radius - self.min_radius)

    @classmethod
    def _build(cls, d: Mapping[str, Any]) -> "StopGeometry":
        p = "ring.stops."
        if not isinstance(d, Mapping):
            raise InputError("expected a table", key="ring.stops")
        kw = _floats(cls, S.STOPS, d, p, skip=("azimuths",))
        if "azimuths" not in d:
            raise InputError("missing", key=p + "azimuths")
        try:
            az = np.asarray(d["azimuths"], dtype=float).reshape(-1)
        except (TypeError, ValueError):
            raise InputError("expected three numbers [rad]", key=p + "azimuths") from None
        if az.shape != (3,) or not np.all(np.isfinite(az)):
            raise InputError("expected three finite numbers [rad]", key=p + "azimuths")
        return cls(azimuths=tuple(float(a) for a in az), **kw)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, source: str | None = None):
        """Build from ``[ring.stops]``; errors name the key and ``source``."""
        return _sourced(cls._build, d, source)


# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LatchGeometry:
    """Latches of a ring (digest 9.1, 9.7): a duplicated pair on each petal.

    Each latch is a spring plunger moving along its own line (the paper: approximately
    translational) with a roller at its tip. The pair of petal ``k`` sits symmetrically about
    the petal's centre line, at azimuths ``phi_k -+ pair_half_angle``; both engage the stop
    in the mating ring's gap that receives petal ``k``. Which arrangement flight hardware has
    is not in the public sources; the paper's rule (capture when at least one latch of each
    pair is behind its stop) only needs the pairs, and a pair on each petal keeps the three
    petals alike.

    Parameters
    ----------
    base_x, base_radius
        [m] abscissa (above the ring plane) and radius of the base point ``A`` (inside the
        petal).
    pair_half_angle
        [rad] half the angle between the two latches of a pair.
    elevation
        [rad] angle of the latch direction ``n_L`` (base -> tip) above the radial direction,
        towards ``+X``: ``n_L = (sin e, cos e rho_hat)``. The tip leans towards the mating
        unit, so that the latch segment crosses the stop's crest plane once triggered
        (digest 9.7 step 3).
    extended_length
        [m] ``|A E_0|``, base to tip with the spring at its internal stop.
    """

    base_x: float
    base_radius: float
    pair_half_angle: float
    elevation: float
    extended_length: float

    def __post_init__(self) -> None:
        p = "ring.latches."
        for k in ("base_radius", "extended_length"):
            if not getattr(self, k) > 0.0:
                raise InputError("must be positive", key=p + k)
        if not 0.0 <= self.pair_half_angle < math.pi / 3.0:
            raise InputError("must be in [0, pi / 3)", key=p + "pair_half_angle")
        if not 0.0 < self.elevation < math.pi / 2.0:
            raise InputError("must be in (0, pi / 2): the tip leans towards the mating unit",
                             key=p + "elevation")

    @classmethod
    def _build(cls, d: Mapping[str, Any]) -> "LatchGeometry":
        return cls(**_floats(cls, S.RING_LATCHES, d, "ring.latches."))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, source: str | None = None):
        """Build from ``[ring.latches]``; errors name the key and ``source``."""
        return _sourced(cls._build, d, source)


# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CaptureSensorGeometry:
    """The three capture sensors (digest 9.8): spheres protruding beyond the ring plane near
    the bases of the petals, pressed by the mating ring face (sphere vs plane, digest 7.4).

    Parameters
    ----------
    radius
        [m] sphere radius.
    centre_x
        [m] abscissa of the sphere centre (ring axes); the sphere protrudes
        ``centre_x + radius > 0`` beyond the ring plane.
    centre_radius
        [m] distance of the centre from the ring axis (on the ring face).
    azimuth_offset
        [rad] azimuth of sensor ``k`` relative to petal ``k``'s centre line.
    """

    radius: float
    centre_x: float
    centre_radius: float
    azimuth_offset: float = 0.0

    def __post_init__(self) -> None:
        p = "ring.capture_sensors."
        if not self.radius > 0.0:
            raise InputError("must be positive", key=p + "radius")
        if not -self.radius < self.centre_x < 0.0:
            raise InputError("need -radius < centre_x < 0: the centre below the ring plane, "
                             "the sphere protruding beyond it", key=p + "centre_x")
        if not self.centre_radius > 0.0:
            raise InputError("must be positive", key=p + "centre_radius")

    @property
    def protrusion(self) -> float:
        """How far the sphere protrudes beyond the ring plane [m]."""
        return self.centre_x + self.radius

    @classmethod
    def _build(cls, d: Mapping[str, Any]) -> "CaptureSensorGeometry":
        return cls(**_floats(cls, S.RING_CAPTURE_SENSORS, d, "ring.capture_sensors."))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, source: str | None = None):
        """Build from ``[ring.capture_sensors]``; errors name the key and
        ``source``."""
        return _sourced(cls._build, d, source)


# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RingDesign:
    """The ring design shared by both rings: petals, stops, latches, capture sensors.

    The cross-checks that need the built geometry (latches reach the stops, petals clear the
    stops, the rings interleave, the sensors land on the mating face) are made by
    :func:`models.peripheral.geometry.build_geometry`, which every user of the design calls.
    """

    ring: RingGeometry
    stops: StopGeometry
    latches: LatchGeometry
    sensors: CaptureSensorGeometry

    @classmethod
    def _build(cls, d: Mapping[str, Any]) -> "RingDesign":
        if not isinstance(d, Mapping):
            raise InputError("expected a table", key="ring")
        for k in ("stops", "latches", "capture_sensors"):
            if k not in d:
                raise InputError("missing table", key=f"ring.{k}")
        return cls(ring=RingGeometry.from_dict(d),
                   stops=StopGeometry.from_dict(d["stops"]),
                   latches=LatchGeometry.from_dict(d["latches"]),
                   sensors=CaptureSensorGeometry.from_dict(d["capture_sensors"]))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, source: str | None = None):
        """Build from ``[ring]`` with its subtables; errors name the key and
        ``source``."""
        return _sourced(cls._build, d, source)


# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PeripheralConfig:
    """The two vehicles and the ring design of a peripheral docking scenario.

    Reads the tables ``unit`` (must be ``"peripheral"``), ``[meta]``, ``[active]``,
    ``[passive]`` (:class:`models.rigid_body.RigidBody`, the probe-cone unit's spacecraft
    block; ``[passive]`` may also hold ``initial_rate``, 3 values [rad/s]) and ``[ring]``.
    The scenario's other tables (mechanism, latch dynamics, contact, integration, initial
    conditions, envelope) belong to the modules that read them and are not checked here.
    """

    active: RigidBody
    passive: RigidBody
    design: RingDesign
    passive_initial_rate: tuple[float, float, float] = (0.0, 0.0, 0.0)
    name: str = "scenario"
    description: str = ""

    @classmethod
    def _build(cls, d: Mapping[str, Any]) -> "PeripheralConfig":
        if d.get("unit", "peripheral") != "peripheral":
            raise InputError(f"a peripheral scenario has unit = \"peripheral\", not "
                             f"{d['unit']!r}", key="unit")
        for k in ("active", "passive", "ring"):
            if k not in d:
                raise InputError("missing table", key=k)
        meta = d.get("meta", {})
        _check_keys(meta, S.META.names(), "meta.")
        passive = dict(d["passive"])
        rate = passive.pop("initial_rate", [0.0, 0.0, 0.0])
        try:
            rate_a = np.asarray(rate, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            raise InputError("expected 3 numbers [rad/s]", key="passive.initial_rate") from None
        if rate_a.shape != (3,) or not np.all(np.isfinite(rate_a)):
            raise InputError("expected 3 finite numbers [rad/s]", key="passive.initial_rate")
        return cls(active=RigidBody.from_dict(d["active"], "active"),
                   passive=RigidBody.from_dict(passive, "passive"),
                   design=RingDesign.from_dict(d["ring"]),
                   passive_initial_rate=tuple(float(v) for v in rate_a),
                   name=str(meta.get("name", "scenario")),
                   description=str(meta.get("description", "")))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, source: str | None = None):
        """Build from the plain dict of a scenario TOML (SI); errors name the
        dotted key and ``source`` (the file)."""
        return _sourced(cls._build, d, source)
