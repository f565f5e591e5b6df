"""Peripheral unit: parameters of the latches with mass, their stops, the capture sensors and the
capture tolerance, validated from plain (SI) dicts and packed into the tables of the kernels in
:mod:`models.peripheral._kernels.latch` (whose docstring gives the model).

Each dataclass is frozen, documents its units, and has ``from_dict(d, prefix)``: unknown keys,
missing keys, non-numbers and values out of range are :class:`~models.errors.InputError`
naming the dotted key (``prefix`` + name, e.g. ``latches[2].stroke``). Geometry that moves with
the ring (each latch's base point and direction) is not here: the unit kernel transforms it
into PU every step.

References
----------
Digest ``docking-contact-models.md`` 5, 7.4, 9.1, 9.7, 9.8.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from models._kernels import contact_layout as _cl
from models.peripheral._kernels import latch as _k
from models.errors import InputError
from models.limits import check_keys, number
from models.peripheral import schema as S
from models.peripheral.schema import GEOMETRY_KEYS

__all__ = ["Latch", "Stop", "CaptureSensor", "CaptureTolerance", "latches_from_list",
           "stops_from_list", "sensors_from_list", "pack_latches", "pack_stops",
           "pack_sensors", "ring_plane", "new_latch_state", "n_pairs"]

_MODELS = {"linear": _cl.MODEL_LINEAR, "hunt-crossley": _cl.MODEL_HUNT_CROSSLEY}


_keys = check_keys
_num = number


def _int(d: Mapping[str, Any], key: str, prefix: str) -> int:
    if key not in d:
        raise InputError("missing", key=prefix + key)
    v = d[key]
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise InputError(f"expected a non-negative integer, got {v!r}", key=prefix + key)
    return int(v)


@dataclass(frozen=True)
class Latch:
    """One latch with mass (digest 9.7), moving along its own axis ``n_L`` (base -> tip).

    Attributes
    ----------
    length : float
        Base point ``A`` to the undeformed tip ``E0`` [m].
    mass : float
        Latch-mechanism mass reduced to the retraction ``x_L`` [kg].
    stiffness : float
        Spring stiffness ``k_L`` [N/m].
    preload : float
        Spring preload ``f_L0`` [N].
    stroke : float
        Largest retraction [m].
    contact_stiffness : float
        Latch-stop guide contact stiffness ``k_LS`` [N/m] (the paper: "arbitrarily large").
    stop : int
        Index of the stop it engages.
    pair : int
        Index of its duplicated pair (9.1).
    max_penetration : float
        Largest admissible penetration of its contacts [m].
    lock_stiffness, lock_damping, lock_friction, lock_friction_velocity : float
        Contact law (5) of the post-trigger contacts: ``k_S`` [N/m] (default
        ``contact_stiffness``), ``c_D`` [N s/m], ``k_Fr`` [-], ``v_eps`` [m/s].
    lock_model : str
        ``"linear"`` (the paper's ``k dn + c dn_dot``) or ``"hunt-crossley"``.
    """

    length: float
    mass: float
    stiffness: float
    preload: float
    stroke: float
    contact_stiffness: float
    stop: int
    pair: int
    max_penetration: float
    lock_stiffness: float | None = None
    lock_damping: float = 0.0
    lock_friction: float = 0.0
    lock_friction_velocity: float = 1e-3
    lock_model: str = "linear"

    def __post_init__(self) -> None:
        for k in ("length", "mass", "stroke", "contact_stiffness", "max_penetration"):
            if not getattr(self, k) > 0.0:
                raise InputError("must be positive", key=f"latch.{k}")
        for k in ("stiffness", "preload", "lock_damping", "lock_friction"):
            if getattr(self, k) < 0.0:
                raise InputError("must not be negative", key=f"latch.{k}")
        if self.lock_model not in _MODELS:
            raise InputError("expected 'linear' or 'hunt-crossley'", key="latch.lock_model")

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], prefix: str = "latch.") -> "Latch":
        """Validate a latch table; errors name ``prefix + key``."""
        # the scenario's [latches] keys, and the three the scenario takes from the ring
        # design (models.peripheral.simulate.Scenario)
        names = S.LATCHES.names() | set(GEOMETRY_KEYS)
        _keys(d, names, prefix)
        model = d.get("lock_model", "linear")
        if model not in _MODELS:
            raise InputError("expected 'linear' or 'hunt-crossley'", key=prefix + "lock_model")
        ks = _num(d, "contact_stiffness", prefix, positive=True)
        return cls(length=_num(d, "length", prefix, positive=True),
                   mass=_num(d, "mass", prefix, positive=True),
                   stiffness=_num(d, "stiffness", prefix, nonneg=True),
                   preload=_num(d, "preload", prefix, nonneg=True),
                   stroke=_num(d, "stroke", prefix, positive=True),
                   contact_stiffness=ks,
                   stop=_int(d, "stop", prefix), pair=_int(d, "pair", prefix),
                   max_penetration=_num(d, "max_penetration", prefix, positive=True),
                   lock_stiffness=_num(d, "lock_stiffness", prefix, ks, positive=True),
                   lock_damping=_num(d, "lock_damping", prefix, 0.0, nonneg=True),
                   lock_friction=_num(d, "lock_friction", prefix, 0.0, nonneg=True),
                   lock_friction_velocity=_num(d, "lock_friction_velocity", prefix, 1e-3,
                                               positive=True),
                   lock_model=model)

    def packed(self) -> np.ndarray:
        """The latch's row of the kernel table (``LP_*``)."""
        row = np.zeros(_k.LP_SIZE)
        row[_k.LP_LEN] = self.length
        row[_k.LP_MASS] = self.mass
        row[_k.LP_IMASS] = 1.0 / self.mass
        row[_k.LP_K] = self.stiffness
        row[_k.LP_F0] = self.preload
        row[_k.LP_STROKE] = self.stroke
        row[_k.LP_KLS] = self.contact_stiffness
        row[_k.LP_STOP] = self.stop
        row[_k.LP_PAIR] = self.pair
        row[_k.LP_DNMAX] = self.max_penetration
        law = row[_k.LP_LAW:_k.LP_LAW + _cl.LAW_SIZE]
        law[_cl.LAW_K] = (self.contact_stiffness if self.lock_stiffness is None
                          else self.lock_stiffness)
        law[_cl.LAW_C] = self.lock_damping
        law[_cl.LAW_MU] = self.lock_friction
        law[_cl.LAW_VEPS] = self.lock_friction_velocity
        law[_cl.LAW_MODEL] = _MODELS[self.lock_model]
        return row


@dataclass(frozen=True)
class Stop:
    """One stop on the passive ring: a solid 45/45 ridge (digest 9.7, with the [reading] on
    the locking-surface orientation; see :mod:`models.peripheral._kernels.latch`).

    Attributes
    ----------
    angle : float
        Angular position about ``X_PU``, from ``Y_PU`` towards ``Z_PU`` [rad].
    half_width : float
        Angular half-width [rad] (0 < half_width < pi/2).
    r_min : float
        Crest radius ``R_Stop,min`` [m].
    r_max : float
        Base radius ``R_Stop,max`` [m] (> r_min).
    x_guide : float
        ``x_Stop,0``: abscissa of the guide face's ``R_Stop,max`` edge [m].
    x_top : float
        ``x_Stop,top``: abscissa of the crest, the plane ``P_Stop`` [m]. For a 45/45 ridge
        whose faces meet at the crest it is ``x_guide + r_max - r_min``; ``from_dict`` derives
        it when absent and refuses a value that differs by more than 1e-9 m (reading: the
        paper's two constants describe one ridge).
    x_wall : float or None
        Abscissa where the passive ring's inner wall ``rho = r_max`` begins (the passive ring
        plane) [m], at most ``x_guide``; latch tips beyond the wall radius behind it are in
        contact with the wall (see :func:`models.peripheral._kernels.latch.
        stop_solid_contact`). None: no wall (the bare ridge).
    fillet : float
        Radius ``r_f`` [m] of the fillet rounding the convex edge where the ring plane meets
        the inner wall (default 5 mm, the reference latches' penetration limit, so the
        flats' normal switch behind the fillet lies beyond the abort depth); 0 leaves the edge
        sharp. It keeps a tip's contact normal continuous as the tip slides over the edge.
        Needs ``x_wall + fillet <= x_guide``. Reading: the paper gives no edge geometry.
    """

    angle: float
    half_width: float
    r_min: float
    r_max: float
    x_guide: float
    x_top: float
    x_wall: float | None = None
    fillet: float = 0.005

    def __post_init__(self) -> None:
        if not 0.0 < self.half_width < 0.5 * math.pi:
            raise InputError("need 0 < half_width < pi/2", key="stop.half_width")
        if not 0.0 < self.r_min < self.r_max:
            raise InputError("need 0 < r_min < r_max", key="stop.r_max")
        if abs(self.x_guide + self.r_max - self.r_min - self.x_top) > 1e-9:
            raise InputError("the 45/45 ridge needs x_top = x_guide + r_max - r_min",
                             key="stop.x_top")
        if self.x_wall is not None and not self.x_wall <= self.x_guide:
            raise InputError("the wall must begin in front of the guide face",
                             key="stop.x_wall")
        if not (math.isfinite(self.fillet) and self.fillet >= 0.0):
            raise InputError("must be finite and >= 0", key="stop.fillet")
        if self.x_wall is not None and not self.x_wall + self.fillet <= self.x_guide:
            raise InputError("the fillet must fit between the ring plane and the guide face "
                             "(x_wall + fillet <= x_guide)", key="stop.fillet")

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], prefix: str = "stop.") -> "Stop":
        """Validate a stop table; errors name ``prefix + key``."""
        _keys(d, {"angle", "half_width", "r_min", "r_max", "x_guide", "x_top", "x_wall",
                  "fillet", "source"}, prefix)
        hw = _num(d, "half_width", prefix, positive=True)
        if hw >= 0.5 * math.pi:
            raise InputError("must be below pi/2", key=prefix + "half_width")
        r_min = _num(d, "r_min", prefix, positive=True)
        r_max = _num(d, "r_max", prefix, positive=True)
        if r_max <= r_min:
            raise InputError("must exceed r_min", key=prefix + "r_max")
        xg = _num(d, "x_guide", prefix)
        x_top = xg + r_max - r_min
        if "x_top" in d:
            given = _num(d, "x_top", prefix)
            if abs(given - x_top) > 1e-9:
                raise InputError(f"the 45/45 ridge needs x_top = x_guide + r_max - r_min = "
                                 f"{x_top!r}", key=prefix + "x_top")
        x_wall = None
        if "x_wall" in d:
            x_wall = _num(d, "x_wall", prefix)
            if x_wall > xg:
                raise InputError("must not exceed x_guide", key=prefix + "x_wall")
        fillet = 0.005
        if "fillet" in d:
            fillet = _num(d, "fillet", prefix)
            if not fillet >= 0.0:
                raise InputError("must be >= 0", key=prefix + "fillet")
            if x_wall is not None and x_wall + fillet > xg:
                raise InputError("must fit between x_wall and x_guide (x_wall + fillet <= "
                                 "x_guide)", key=prefix + "fillet")
        return cls(angle=_num(d, "angle", prefix), half_width=hw, r_min=r_min, r_max=r_max,
                   x_guide=xg, x_top=x_top, x_wall=x_wall, fillet=fillet)

    def packed(self) -> np.ndarray:
        """The stop's row of the kernel table (``SP_*``, with both faces as 45-degree
        primitives of :mod:`models._kernels.contact_layout`)."""
        row = np.zeros(_k.SP_SIZE)
        row[_k.SP_CPHI] = math.cos(self.angle)
        row[_k.SP_SPHI] = math.sin(self.angle)
        row[_k.SP_COSHW] = math.cos(self.half_width)
        row[_k.SP_RMIN] = self.r_min
        row[_k.SP_RMAX] = self.r_max
        row[_k.SP_X0] = self.x_guide
        row[_k.SP_XTOP] = self.x_top
        row[_k.SP_XWALL] = math.inf if self.x_wall is None else self.x_wall
        row[_k.SP_FILLET] = 0.0 if self.x_wall is None else self.fillet
        x_back = self.x_top + (self.r_max - self.r_min)
        for off, rho0, x0, sigma, xlo, xhi in (
                (_k.SP_GUIDE, self.r_max, self.x_guide, -1.0, self.x_guide, self.x_top),
                (_k.SP_LOCK, self.r_min, self.x_top, 1.0, self.x_top, x_back)):
            row[off + _cl.S45_RHO0] = rho0
            row[off + _cl.S45_X0] = x0
            row[off + _cl.S45_SIGMA] = sigma
            row[off + _cl.S45_XLO] = xlo
            row[off + _cl.S45_XHI] = xhi
            row[off + _cl.S45_XCREST] = self.x_top
            row[off + _cl.S45_RCREST] = self.r_min
        return row


@dataclass(frozen=True)
class CaptureSensor:
    """One capture sensor (digest 9.8): a zero-mass spring plunger with a spherical tip that
    touches the passive ring plane.

    Attributes
    ----------
    radius : float
        Sphere radius ``R_S`` [m].
    preload : float
        Spring preload ``f_s0`` [N].
    stiffness : float
        Spring rate ``k_s`` [N/m].
    travel : float
        Plunger travel [m].
    trigger : float
        Switching stroke ``delta_trig`` [m] (0 < trigger <= travel).
    """

    radius: float
    preload: float
    stiffness: float
    travel: float
    trigger: float

    def __post_init__(self) -> None:
        for k in ("radius", "preload", "stiffness"):
            if getattr(self, k) < 0.0:
                raise InputError("must not be negative", key=f"sensor.{k}")
        if not 0.0 < self.trigger <= self.travel:
            raise InputError("need 0 < trigger <= travel", key="sensor.trigger")

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], prefix: str = "sensor.") -> "CaptureSensor":
        """Validate a sensor table; errors name ``prefix + key``."""
        _keys(d, S.CAPTURE_SENSORS.names() | {"radius"}, prefix)
        travel = _num(d, "travel", prefix, positive=True)
        trig = _num(d, "trigger", prefix, positive=True)
        if trig > travel:
            raise InputError("must not exceed travel", key=prefix + "trigger")
        return cls(radius=_num(d, "radius", prefix, nonneg=True),
                   preload=_num(d, "preload", prefix, nonneg=True),
                   stiffness=_num(d, "stiffness", prefix, nonneg=True),
                   travel=travel, trigger=trig)

    def packed(self) -> np.ndarray:
        """The sensor's row of the kernel table (``SN_*``)."""
        row = np.zeros(_k.SN_SIZE)
        row[_k.SN_R] = self.radius
        row[_k.SN_F0] = self.preload
        row[_k.SN_K] = self.stiffness
        row[_k.SN_TRAVEL] = self.travel
        row[_k.SN_TRIG] = self.trigger
        return row


@dataclass(frozen=True)
class CaptureTolerance:
    """When the ring planes count as aligned for capture (digest 9.1): relative ``angle``
    between the ring normals [rad] and axial ``gap`` between the ring planes [m], both
    upper bounds. The paper gives no figures."""

    angle: float
    gap: float

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], prefix: str = "capture.") -> "CaptureTolerance":
        """Validate the tolerance table; errors name ``prefix + key``."""
        _keys(d, S.CAPTURE.names(), prefix)
        a = _num(d, "angle", prefix, positive=True)
        if a >= 0.5 * math.pi:
            raise InputError("must be below pi/2", key=prefix + "angle")
        return cls(angle=a, gap=_num(d, "gap", prefix, positive=True))

    @property
    def cos_angle(self) -> float:
        """``cos(angle)``, the kernel's form of the angular bound."""
        return math.cos(self.angle)


def _list(items: Sequence[Mapping[str, Any]], name: str) -> Sequence[Mapping[str, Any]]:
    if isinstance(items, Mapping) or not isinstance(items, Sequence) or not items:
        raise InputError("expected a non-empty list of tables", key=name)
    return items


def latches_from_list(items: Sequence[Mapping[str, Any]], n_stops: int,
                      name: str = "latches") -> tuple[Latch, ...]:
    """Latches from a list of tables: each stop index below ``n_stops``; pair indices
    ``0 .. n_pairs-1`` each used by exactly two latches (the duplicated pairs of 9.1)."""
    out = tuple(Latch.from_dict(d, f"{name}[{k}].") for k, d in enumerate(_list(items, name)))
    for k, lt in enumerate(out):
        if lt.stop >= n_stops:
            raise InputError(f"no stop {lt.stop} (there are {n_stops})", key=f"{name}[{k}].stop")
    pairs = [lt.pair for lt in out]
    for p in range(max(pairs) + 1):
        if pairs.count(p) != 2:
            k = pairs.index(p) if p in pairs else len(pairs) - 1
            raise InputError(f"pair {p} has {pairs.count(p)} latches; latches come in "
                             f"duplicated pairs 0..n-1", key=f"{name}[{k}].pair")
    return out


def stops_from_list(items: Sequence[Mapping[str, Any]], name: str = "stops") -> tuple[Stop, ...]:
    """Stops from a list of tables."""
    return tuple(Stop.from_dict(d, f"{name}[{k}].") for k, d in enumerate(_list(items, name)))


def sensors_from_list(items: Sequence[Mapping[str, Any]],
                      name: str = "capture_sensors") -> tuple[CaptureSensor, ...]:
    """Capture sensors from a list of tables."""
    return tuple(CaptureSensor.from_dict(d, f"{name}[{k}].")
                 for k, d in enumerate(_list(items, name)))


def pack_latches(latches: Sequence[Latch]) -> np.ndarray:
    """Latch table ``float64[n, LP_SIZE]``."""
    return np.ascontiguousarray(np.array([lt.packed() for lt in latches]).reshape(-1, _k.LP_SIZE))


def pack_stops(stops: Sequence[Stop]) -> np.ndarray:
    """Stop table ``float64[n, SP_SIZE]``."""
    return np.ascontiguousarray(np.array([s.packed() for s in stops]).reshape(-1, _k.SP_SIZE))


def pack_sensors(sensors: Sequence[CaptureSensor]) -> np.ndarray:
    """Sensor table ``float64[n, SN_SIZE]``."""
    return np.ascontiguousarray(np.array([s.packed() for s in sensors]).reshape(-1, _k.SN_SIZE))


def ring_plane(x_plane: float, r_inner: float, r_outer: float) -> np.ndarray:
    """The passive ring plane ``x = x_plane`` [m] as the annulus ``r_inner <= rho <= r_outer``
    [m] the capture sensors touch (contact-layout ``PL_*``, material at ``x > x_plane``)."""
    if not 0.0 <= r_inner < r_outer:
        raise InputError("need 0 <= r_inner < r_outer", key="ring_plane")
    p = np.zeros(_cl.PL_SIZE)
    p[_cl.PL_X] = x_plane
    p[_cl.PL_RMIN] = r_inner
    p[_cl.PL_RMAX] = r_outer
    p[_cl.PL_SIDE] = 1.0
    return p


def n_pairs(latches: Sequence[Latch]) -> int:
    """Number of duplicated pairs."""
    return max(lt.pair for lt in latches) + 1


def new_latch_state(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Zeroed kernel arrays for ``n`` latches: state ``ls[n, LS_SIZE]`` (extended, at rest),
    trigger flags ``trig[n]`` (int64), held forces ``hf[n, HF_SIZE]``, totals ``tot[T_SIZE]``."""
    return (np.zeros((n, _k.LS_SIZE)), np.zeros(n, dtype=np.int64),
            np.zeros((n, _k.HF_SIZE)), np.zeros(_k.T_SIZE))
