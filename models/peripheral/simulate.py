"""Peripheral (androgynous ring) docking: the scenario, its packing for the kernel, and the
readable simulate layer.

:class:`Scenario` reads a scenario TOML dict (``unit = "peripheral"``; tables ``[meta]``,
``[active]``, ``[passive]``, ``[ring]`` with its subtables, ``[mechanism]``, ``[latches]``,
``[capture_sensors]``, ``[capture]``, ``[contact]``, ``[integration]``, ``[initial]`` with the
probe-cone unit's initial-condition names, optional ``[thrust]``); every error names the
dotted key and the file. :func:`pack` builds the flat arrays of
:func:`models.peripheral._kernels.kernel.run` once; :func:`simulate` runs it and returns a
:class:`Trajectory` with named channels (:func:`~models.peripheral._kernels.run_layout.
channel_names`, units :func:`~models.peripheral._kernels.run_layout.channel_units`). With
``trace=TraceSettings(t0, t1, groups)`` the kernel also records every selected routine per
RK4 stage in that window (:mod:`models.trace`), kept as :attr:`Trajectory.trace`. An abort's
message names the model time, the primitive pair and the ``--trace`` window to rerun with.
With ``t_pre`` [s] the output begins before the start plane, at ``-n_pre / rate`` with
``n_pre`` = ``t_pre`` rounded up to the output grid (:func:`pre_rows`): the vehicles' free
flight, the ring at rest and the body rates torque-free
(:func:`models.peripheral._kernels.kernel._free_flight_before`); from ``t = 0`` on the rows are
those of the run without it, bit for bit.

One source of truth for the ring geometry: the stop and latch positions come from
:func:`models.peripheral.geometry.build_geometry`; the latch kernel's tables
(:mod:`models.peripheral.latches`) are built from them here, with only the latch dynamics
(mass, spring, stroke, contact law) read from ``[latches]``.
"""
from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Sequence
from typing import Any, Mapping

import numpy as np

from models._kernels import contact_layout as ck
from models.peripheral._kernels import kernel as kp
from models.peripheral._kernels import layout as L
from models.peripheral._kernels import mechanism as km
from models.peripheral._kernels import run_layout as R
from models.batch import KernelBatch
from models.errors import InputError
from models.peripheral.config import PeripheralConfig, _sourced
from models.peripheral.geometry import Geometry, build_geometry
from models.peripheral.latches import (
    CaptureSensor, CaptureTolerance, Latch, Stop, pack_latches, pack_sensors, pack_stops)
from models.peripheral.mechanism import Mechanism, ready_pose
from models.limits import check_keys as _check_keys, number as _num
from models.peripheral import schema as S
from models.peripheral.schema import GEOMETRY_KEYS
from models.unit import ContactLaw, InitialConditions, Thrust
from models.trace import Trace, TraceSettings, arm, kernel_failure

__all__ = ["Integration", "Scenario", "Packed", "Trajectory", "PRESETS", "load_scenario",
           "pack", "pre_rows", "simulate", "CHANNELS", "UNITS", "EVENT_NAMES", "PARAMETERS",
           "FILE_CHANNELS", "PeripheralBatch"]

PRESETS = Path(__file__).resolve().parent / "presets"
CHANNELS = R.channel_names()
UNITS = R.channel_units()
EVENT_NAMES = ("first_contact", "capture", "separation", *(f"latch_{i + 1}" for i in range(6)))
_MODELS = {"linear": ck.MODEL_LINEAR, "hunt-crossley": ck.MODEL_HUNT_CROSSLEY}
#: values of ``[integration] implicit_contact``
IMPLICIT_CONTACT = ("never", "captured")


@dataclass(frozen=True)
class Integration:
    """RK4 steps [s]: ``dt_contact`` while the rings are within ``gap_margin`` [m] of touching
    or a leg within ``leg_margin`` [m] of an end stop, ``dt_free`` otherwise, ``dt_captured``
    after capture, and ``dt_settled`` (default ``dt_captured``) from ``settle_time`` [s]
    after capture on (the captured motion's transient resolved, its settled motion on the
    longer step); ``duration`` [s]; ``output_rate`` [Hz]; ``exhaustive``: the fan search by
    brute force instead of the dichotomy (acceptance tests); ``prune``: skip the ring-ring
    primitive pairs that bounding spheres prove apart (exact; off tests every pair);
    ``implicit_contact``: where the ring-ring contacts' damping and friction act implicitly on
    the ring (linearised at ``v + h/2 a``, :mod:`models.peripheral._kernels.implicit`),
    ``"never"`` or ``"captured"`` (the steps after capture, where the ring rattles on its seat
    and the explicit velocity terms bound the step); ``free_until_touch``: the free step
    ``dt_free`` until a step would make the first touch (a ring-ring contact, a capture
    sensor on the passive ring plane or a latch on its stop, found at any stage of the step
    or at its end), whatever the gap margin; that step is retaken from its start with the
    two-rate switch's step, which rules from then on; ``dt_latch``: the latches' sub-step
    (None: one latch step per RK4 step): a step longer than it advances the latches in
    sub-steps of at most ``dt_latch`` over their interpolated geometry, which lifts the bound
    their guide contacts put on ``dt_contact``
    (:func:`models.peripheral._kernels.latch.latches_between_sub`)."""

    dt_contact: float
    dt_free: float
    dt_captured: float
    duration: float
    output_rate: float
    gap_margin: float = 0.02
    leg_margin: float = 0.005
    exhaustive: bool = False
    prune: bool = True
    dt_settled: float | None = None
    settle_time: float = 0.0
    implicit_contact: str = "never"
    free_until_touch: bool = False
    dt_latch: float | None = None

    def __post_init__(self) -> None:
        if self.implicit_contact not in IMPLICIT_CONTACT:
            raise InputError(f"expected one of {', '.join(map(repr, IMPLICIT_CONTACT))}, got "
                             f"{self.implicit_contact!r}", key="integration.implicit_contact")

    @property
    def step_settled(self) -> float:
        """The step once the captured motion has settled [s]: ``dt_settled``, or
        ``dt_captured`` when it is not set."""
        return self.dt_captured if self.dt_settled is None else self.dt_settled

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Integration":
        p = "integration."
        _check_keys(d, S.INTEGRATION.names(), p)
        dc = _num(d, "dt_contact", p, positive=True)
        ex = d.get("exhaustive", False)
        if not isinstance(ex, bool):
            raise InputError("expected true or false", key=p + "exhaustive")
        pr = d.get("prune", True)
        if not isinstance(pr, bool):
            raise InputError("expected true or false", key=p + "prune")
        ft = d.get("free_until_touch", False)
        if not isinstance(ft, bool):
            raise InputError("expected true or false", key=p + "free_until_touch")
        out = cls(dt_contact=dc, dt_free=_num(d, "dt_free", p, positive=True),
                  dt_captured=_num(d, "dt_captured", p, dc, positive=True),
                  duration=_num(d, "duration", p, positive=True),
                  output_rate=_num(d, "output_rate", p, positive=True),
                  gap_margin=_num(d, "gap_margin", p, 0.02, nonneg=True),
                  leg_margin=_num(d, "leg_margin", p, 0.005, nonneg=True), exhaustive=ex,
                  prune=pr,
                  dt_settled=(_num(d, "dt_settled", p, positive=True) if "dt_settled" in d
                              else None),
                  settle_time=_num(d, "settle_time", p, 0.0, nonneg=True),
                  implicit_contact=d.get("implicit_contact", "never"), free_until_touch=ft,
                  dt_latch=(_num(d, "dt_latch", p, positive=True) if "dt_latch" in d
                            else None))
        if out.dt_free < dc:
            raise InputError("must not be shorter than dt_contact", key=p + "dt_free")
        return out


@dataclass(frozen=True)
class Scenario:
    """A peripheral docking scenario (SI units); build with :meth:`from_dict` or
    :func:`load_scenario`."""

    config: PeripheralConfig
    mechanism: Mechanism
    latch: Latch                  # dynamics of every latch (geometry from the ring design)
    sensor: CaptureSensor         # spring of every capture sensor (sphere from the design)
    capture: CaptureTolerance
    contact: ContactLaw
    integration: Integration
    initial: InitialConditions
    thrust: Thrust
    geometry: Geometry

    @classmethod
    def _build(cls, d: Mapping[str, Any]) -> "Scenario":
        _check_keys(d, S.SCENARIO.names(), "")
        for k in ("mechanism", "latches", "capture_sensors", "capture", "contact",
                  "integration", "initial"):
            if k not in d:
                raise InputError("missing table", key=k)
        cfg = PeripheralConfig.from_dict(d)
        geo = build_geometry(cfg.design)
        lt = dict(d["latches"])
        for k in GEOMETRY_KEYS:
            if k in lt:
                raise InputError("comes from [ring.latches] and the stops (one source of "
                                 "truth)", key="latches." + k)
        latch = Latch.from_dict({**lt, "length": float(geo.latches[0, L.LA_LEN]), "stop": 0,
                                 "pair": 0}, "latches.")
        sd = dict(d["capture_sensors"])
        if "radius" in sd:
            raise InputError("comes from [ring.capture_sensors]", key="capture_sensors.radius")
        sensor = CaptureSensor.from_dict({**sd, "radius": float(geo.sensors[0, L.SE_R])},
                                         "capture_sensors.")
        return cls(config=cfg, mechanism=Mechanism.from_dict(d["mechanism"]), latch=latch,
                   sensor=sensor, capture=CaptureTolerance.from_dict(d["capture"]),
                   contact=ContactLaw.from_dict(d["contact"]),
                   integration=Integration.from_dict(d["integration"]),
                   initial=InitialConditions.from_dict(d["initial"]),
                   thrust=Thrust.from_dict(d.get("thrust", {})), geometry=geo)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, source: str | None = None) -> "Scenario":
        """Validate a scenario dict (SI); errors name the dotted key and ``source``."""
        return _sourced(cls._build, d, source)


def load_scenario(path: str | Path = "reference") -> Scenario:
    """Read a scenario TOML file, or a preset by name (``models/peripheral/presets``)."""
    p = Path(path)
    if not p.suffix:
        p = PRESETS / f"{path}.toml"
    try:
        with open(p, "rb") as fh:
            d = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML: {exc}", source=str(p)) from None
    return Scenario.from_dict(d, source=str(p))


# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Packed:
    """The kernel's inputs: parameter row ``P`` (``NP``) and the tables, in the order of
    :func:`models.peripheral._kernels.kernel.run` (``arrays``)."""

    P: np.ndarray
    arrays: tuple
    n_out: int

    def with_initial(self, initial) -> "Packed":
        """A copy with other initial conditions (12 values, ``IC_NAMES`` order)."""
        P = self.P.copy()
        P[R.P_IC:R.P_IC + 12] = _ic_array(initial)
        return Packed(P=P, arrays=self.arrays, n_out=self.n_out)


def _ic_array(initial) -> np.ndarray:
    if isinstance(initial, InitialConditions):
        return initial.as_array()
    if isinstance(initial, Mapping):
        return InitialConditions.from_dict(initial).as_array()
    a = np.asarray(initial, dtype=float).reshape(-1)
    if a.size != 12:
        raise InputError("expected 12 initial conditions", key="initial")
    return a


def _active_extent(geo: Geometry) -> tuple[float, float, float]:
    """Abscissa range and largest radius of the active ring geometry in ring axes [m]."""
    pts = [geo.active_fans[..., 0:3].reshape(-1, 3),
           (geo.active_fans[..., 0:3] + geo.active_fans[..., 3:6]).reshape(-1, 3),
           geo.active_edges[:, 0:3], geo.active_edges[:, 0:3] + geo.active_edges[:, 3:6],
           geo.active_points, geo.latches[:, 0:3],
           geo.latches[:, 0:3] + geo.latches[:, 3:6] * geo.latches[:, 6:7]]
    s = geo.sensors
    pts.append(s[:, 0:3] + np.array([1.0, 0.0, 0.0]) * s[:, 3:4])
    pts.append(s[:, 0:3] - np.array([1.0, 0.0, 0.0]) * s[:, 3:4])
    a = np.concatenate(pts)
    rad = np.hypot(a[:, 1], a[:, 2]).max() + s[:, 3].max()
    return float(a[:, 0].min()), float(a[:, 0].max()), float(rad)


def pack(scenario: Scenario, initial=None, rate: float | None = None,
         duration: float | None = None) -> Packed:
    """Flat arrays for the kernel; ``initial`` (InitialConditions, dict or 12 values),
    ``rate`` [Hz] and ``duration`` [s] override the scenario's."""
    sc = scenario
    geo = sc.geometry
    cfg = sc.config
    P = np.zeros(R.NP)
    for body, (m, im, j, ji, lo, g) in ((cfg.active, (R.P_M1, R.P_IM1, R.P_J1, R.P_JI1, R.P_L1,
                                                      R.P_G1)),
                                        (cfg.passive, (R.P_M2, R.P_IM2, R.P_J2, R.P_JI2,
                                                       R.P_L2, R.P_G2))):
        P[m] = body.mass
        P[im] = 1.0 / body.mass
        J = np.asarray(body.inertia, dtype=float)
        P[j:j + 9] = J.ravel()
        P[ji:ji + 9] = np.linalg.inv(J).ravel()
        P[lo:lo + 3] = body.unit_offset
        P[g:g + 9] = body.unit_dcm.ravel()
    P[R.P_W2:R.P_W2 + 3] = cfg.passive_initial_rate
    P[R.P_THRUST:R.P_THRUST + 3] = sc.thrust.force
    P[R.P_T_ON] = sc.thrust.start
    P[R.P_T_OFF] = sc.thrust.stop
    P[R.P_IC:R.P_IC + 12] = _ic_array(sc.initial if initial is None else initial)
    c = sc.contact
    P[R.P_LAW + ck.LAW_K] = c.stiffness
    P[R.P_LAW + ck.LAW_C] = c.damping
    P[R.P_LAW + ck.LAW_MU] = c.friction
    P[R.P_LAW + ck.LAW_VEPS] = c.friction_velocity
    P[R.P_LAW + ck.LAW_MODEL] = _MODELS[c.model]
    P[R.P_DNMAX] = c.max_penetration
    it = sc.integration
    rate = it.output_rate if rate is None else float(rate)
    duration = it.duration if duration is None else float(duration)
    if not (rate > 0.0 and duration > 0.0):
        raise InputError("rate and duration must be positive", key="integration")
    P[R.P_H_SMALL] = it.dt_contact
    P[R.P_H_LARGE] = it.dt_free
    P[R.P_H_CAPT] = it.dt_captured
    P[R.P_H_SETTLED] = it.step_settled
    P[R.P_T_SETTLE] = it.settle_time
    P[R.P_IMPLICIT] = 1.0 if it.implicit_contact == "captured" else 0.0
    P[R.P_FREE_TOUCH] = 1.0 if it.free_until_touch else 0.0
    P[R.P_H_LATCH] = 0.0 if it.dt_latch is None else it.dt_latch
    P[R.P_DT_OUT] = 1.0 / rate
    P[R.P_T_END] = duration
    P[R.P_MARGIN] = it.gap_margin
    P[R.P_LEG_MARGIN] = it.leg_margin
    P[R.P_EXHAUSTIVE] = 1.0 if it.exhaustive else 0.0
    P[R.P_PRUNE] = 1.0 if it.prune else 0.0
    P[R.P_COS_TOL] = sc.capture.cos_angle
    P[R.P_GAP_TOL] = sc.capture.gap
    # the guide's reaction normal to the latch axis acts on the vehicles too: without it the
    # face's normal force does work on the latch that the vehicles never supply (with the 45
    # degree faces and 30 degree plungers the latches gained 1.46 times the closing energy)
    P[R.P_FULL_NORMAL] = 1.0
    P[R.P_Q0:R.P_Q0 + 6] = ready_pose(sc.mechanism)
    xlo, xhi, ra = _active_extent(geo)
    P[R.P_XA_LO], P[R.P_XA_HI], P[R.P_RA] = xlo, xhi, ra
    pe = np.concatenate([geo.passive_fans[..., 0:3].reshape(-1, 3),
                         (geo.passive_fans[..., 0:3] + geo.passive_fans[..., 3:6]).reshape(-1, 3),
                         geo.passive_edges[:, 0:3],
                         geo.passive_edges[:, 0:3] + geo.passive_edges[:, 3:6]])
    P[R.P_XP_LO] = float(pe[:, 0].min())
    P[R.P_MP:R.P_MP + km.MP_SIZE] = sc.mechanism.pack()
    # latches and stops from the geometry (one source of truth)
    lt = sc.latch
    latches = [Latch(length=float(row[L.LA_LEN]), mass=lt.mass, stiffness=lt.stiffness,
                     preload=lt.preload, stroke=lt.stroke, contact_stiffness=lt.contact_stiffness,
                     stop=int(row[L.LA_STOP]), pair=int(row[L.LA_PAIR]),
                     max_penetration=lt.max_penetration, lock_stiffness=lt.lock_stiffness,
                     lock_damping=lt.lock_damping, lock_friction=lt.lock_friction,
                     lock_friction_velocity=lt.lock_friction_velocity, lock_model=lt.lock_model)
               for row in geo.latches]
    stops = []
    for row in geo.stops:
        g = row[L.ST_GUIDE:L.ST_GUIDE + ck.S45_SIZE]
        stops.append(Stop(angle=float(row[L.ST_AZ]), half_width=float(row[L.ST_HW]),
                          r_min=float(g[ck.S45_RCREST]), r_max=float(g[ck.S45_RHO0]),
                          x_guide=float(g[ck.S45_X0]), x_top=float(g[ck.S45_XCREST]),
                          x_wall=float(geo.passive_plane[ck.PL_X])))
    sensors = [sc.sensor] * geo.sensors.shape[0]
    table, toff, hi, hf = sc.mechanism.absorber_arrays()
    arrays = (geo.active_fans, geo.passive_fans, geo.active_edges, geo.passive_edges,
              geo.active_points, geo.passive_points, geo.active_circle, geo.passive_circle,
              geo.passive_plane, geo.latches, pack_latches(latches), pack_stops(stops),
              geo.sensors, pack_sensors(sensors), np.ascontiguousarray(table, dtype=float),
              np.ascontiguousarray(toff, dtype=np.int64),
              np.ascontiguousarray(hi, dtype=np.int64), np.ascontiguousarray(hf, dtype=float))
    n_out = int(math.floor(duration * rate + 1e-9)) + 1
    return Packed(P=P, arrays=arrays, n_out=n_out)


# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Trajectory:
    """Result of :func:`simulate`: sample times ``t`` [s], ``channels`` (name -> array, units
    in :data:`UNITS`), ``events`` (name -> time [s] or NaN), kernel ``status`` and ``info``,
    and the ``trace`` (:class:`models.trace.Trace`, None when not traced)."""

    t: np.ndarray
    channels: dict
    events: dict
    status: int
    info: np.ndarray
    trace: Trace | None = None

    def __getitem__(self, name: str) -> np.ndarray:
        return self.channels[name]

    def to_frame(self):
        """The channels as a pandas DataFrame indexed by ``t``."""
        import pandas as pd
        return pd.DataFrame({k: v for k, v in self.channels.items() if k != "t"},
                            index=pd.Index(self.t, name="t"))

    def event_list(self) -> list[dict]:
        """Events that happened, in time order: ``[{"event": name, "t": time}]``."""
        ev = [{"event": k, "t": float(v)} for k, v in self.events.items() if not math.isnan(v)]
        return sorted(ev, key=lambda e: e["t"])


def pre_rows(P: np.ndarray, t_pre: float) -> int:
    """Set the free-flight extension of the packed row ``P`` (in place) to ``t_pre`` [s]
    rounded up to a whole number of output intervals; return that number of rows before
    ``t = 0``. ``t_pre`` must be >= 0 (an :class:`InputError` naming ``t_pre`` otherwise)."""
    if not t_pre >= 0.0:
        raise InputError(f"must be >= 0, got {t_pre}", key="t_pre")
    dt = P[R.P_DT_OUT]
    n_pre = int(np.ceil(t_pre / dt - 1e-9))
    P[R.P_T_PRE] = n_pre * dt
    return n_pre


def _failure_where(info: np.ndarray) -> str:
    """Where the kernel stopped: the primitive pair and its index."""
    return (f"pair: {R.PAIR_NAMES[int(info[R.INFO_PAIR])]}, "
            f"index {int(info[R.INFO_INDEX])}")


def simulate(scenario: Scenario, initial=None, rate: float | None = None,
             duration: float | None = None, *, raise_on_failure: bool = True,
             trace: TraceSettings | None = None, t_pre: float = 0.0) -> Trajectory:
    """Simulate one docking and name its outputs.

    Parameters
    ----------
    scenario : Scenario
    initial : InitialConditions, dict or 12 values, optional
        Overrides ``[initial]``.
    rate : float, optional
        Output rate [Hz].
    duration : float, optional
        Simulated time [s].
    raise_on_failure : bool
        Raise :class:`~models.errors.SimulationError` naming the model time and primitive pair
        when the kernel aborts; otherwise return the samples up to the failure (NaN after).
    trace : TraceSettings, optional
        Record the selected routines in the window (:mod:`models.trace`); the trace is kept
        in :attr:`Trajectory.trace` and, on an abort, in the raised error's ``trace``
        attribute. Tracing does not change the results.
    t_pre : float
        Free flight before the start [s] (module docstring): ``t`` begins at ``-t_pre``
        rounded up to the output grid; before ``t = 0`` the ring pose, leg lengths, flags and
        interface loads hold their ``t = 0`` values, the body rates are integrated backwards
        (torque-free), every other channel is NaN.
    """
    pk = pack(scenario, initial, rate, duration)
    P = pk.P.copy()
    n_pre = pre_rows(P, t_pre)
    P, tr, trn = arm(P, trace, R.P_TR_T0, R.P_TR_T1, R.P_TR_MASK)
    chan = np.arange(R.NCH, dtype=np.int64)
    out = np.empty((n_pre + pk.n_out, R.NCH))
    ev = np.empty(R.N_EV)
    info = np.empty(R.NINFO)
    status = kp.run(P, *pk.arrays, chan, out, ev, info, tr, trn)
    traced = None if trace is None else Trace.from_kernel(tr, trn, trace, "peripheral")
    if status != R.ST_OK and raise_on_failure:
        h_max = max(P[R.P_H_SMALL], P[R.P_H_LARGE], P[R.P_H_CAPT], P[R.P_H_SETTLED])
        exc = kernel_failure(status, info[R.INFO_T_FAIL],
                                          where=_failure_where(info), step=h_max)
        exc.trace = traced
        raise exc
    names = CHANNELS
    channels = {n: out[:, k].copy() for k, n in enumerate(names)}
    events = {n: float(ev[k]) for k, n in enumerate(EVENT_NAMES)}
    return Trajectory(t=channels["t"], channels=channels, events=events, status=int(status),
                      info=info.copy(), trace=traced)


#: parameters a row may override -> packed index (initial conditions first)
PARAMETERS: dict[str, int] = {n: R.P_IC + i for i, n in enumerate(R.IC_NAMES)}
PARAMETERS.update({
    "leg_brake_force": R.P_MP + km.MP_FBC,     # both slip forces (symmetric brake)
    "leg_damping": R.P_MP + km.MP_C,
    "contact_friction": R.P_LAW + ck.LAW_MU,
    "contact_stiffness": R.P_LAW + ck.LAW_K,
    "contact_damping": R.P_LAW + ck.LAW_C,
    "thrust_x": R.P_THRUST,
    # scenario paths (several the same entries as the short names above, which stay as
    # aliases); the entries derived from them are recomputed per row (PeripheralBatch)
    "active.mass": R.P_M1,
    "passive.mass": R.P_M2,
    "mechanism.ring_mass": R.P_MP + km.MP_MASS,
    "mechanism.spring_rate": R.P_MP + km.MP_K,
    "mechanism.spring_preload": R.P_MP + km.MP_F0,
    "mechanism.damping": R.P_MP + km.MP_C,
    "mechanism.brake_force_compression": R.P_MP + km.MP_FBC,
    "mechanism.brake_force_extension": R.P_MP + km.MP_FBT,
    "mechanism.stop_rate": R.P_MP + km.MP_KSTOP,
    "contact.friction": R.P_LAW + ck.LAW_MU,
    "contact.stiffness": R.P_LAW + ck.LAW_K,
    "contact.damping": R.P_LAW + ck.LAW_C,
})
#: the leg absorber's entries from which its slip deflections (and the cage's deflection at
#: the preload) are derived
_LEG_ABSORBER = {R.P_MP + km.MP_K, R.P_MP + km.MP_F0, R.P_MP + km.MP_FBC, R.P_MP + km.MP_FBT}

#: channels of the telemetry / history file (the momenta are diagnostics)
FILE_CHANNELS = tuple(n for n in CHANNELS if n != "t"
                      and not n.startswith(("momentum_", "angular_momentum_")))


# --------------------------------------------------------------------------------------------
class PeripheralBatch(KernelBatch):
    """The peripheral kernel's batch entry point over parameter vectors of one scenario
    (:class:`models.batch.KernelBatch`).

    ``leg_brake_force`` [N] sets both slip forces of every leg brake (compression and
    extension). Entries derived from a set one are recomputed per row exactly as
    :meth:`models.peripheral.mechanism.Mechanism.pack` computes them: the slip deflections
    ``c_p + (F_B - F0) / k`` (``c_p = F0 / k_p``, the preload cage's deflection) from the
    spring rate, preload and slip forces (the linear absorber only), the inverse masses from
    the masses.

    ``t_pre`` [s] adds the free flight before the start (module docstring): :attr:`t` begins
    at ``-n_pre dt`` with ``n_pre`` = ``t_pre / dt`` rounded up; from ``t = 0`` on the rows
    are those of the run without it, bit for bit.
    """

    def __init__(self, scenario: Scenario, parameters: Sequence[str],
                 channels: Sequence[str] | None = None, *, rate: float | None = None,
                 duration: float | None = None, t_pre: float = 0.0) -> None:
        self.packed = pack(scenario, None, rate, duration)
        n_pre = pre_rows(self.packed.P, t_pre)
        linear = self.packed.P[R.P_MP + km.MP_KIND] == km.KIND_LINEAR
        for name in parameters:
            if (name == "leg_brake_force" or PARAMETERS.get(name) in _LEG_ABSORBER) \
                    and not linear:
                raise InputError("applies to the linear leg absorber only", key=name)
        super().__init__(self.packed.P, self.packed.n_out, PARAMETERS, parameters,
                         CHANNELS, FILE_CHANNELS if channels is None else channels,
                         i_dt_out=R.P_DT_OUT, i_t_end=R.P_T_END, n_events=R.N_EV,
                         n_info=R.NINFO, n_pre=n_pre)
        self._brake = "leg_brake_force" in self.parameters
        chosen = {PARAMETERS[n] for n in self.parameters}
        self._slip = bool(chosen & _LEG_ABSORBER)
        self._masses = [(m, im) for m, im in ((R.P_M1, R.P_IM1), (R.P_M2, R.P_IM2),
                                              (R.P_MP + km.MP_MASS, R.P_MP + km.MP_INV_MASS))
                        if m in chosen]

    def derive(self, channels: Sequence[str] | None = None, *, t_pre: float | None = None
               ) -> "PeripheralBatch":
        """The same scenario, parameters, rate and duration with other output ``channels``
        and / or another free-flight extension ``t_pre`` [s]; shares the packed tables."""
        other = KernelBatch.derive(self, channels)
        if t_pre is not None:
            P = self.P.copy()
            other.n_pre = pre_rows(P, t_pre)
            other.P = P
            other._set_channels(other.channels)
        return other

    def _complete(self, Pb: np.ndarray) -> None:
        o = R.P_MP
        if self._brake:
            Pb[:, o + km.MP_FBT] = Pb[:, o + km.MP_FBC]
        if self._slip:
            kp_ = Pb[:, o + km.MP_KP]
            # the cage's deflection at the preload (0 for a rigid cage, packed as k_p = 0)
            cp = np.where(kp_ > 0.0, Pb[:, o + km.MP_F0] / np.where(kp_ > 0.0, kp_, 1.0), 0.0)
            Pb[:, o + km.MP_CP] = cp
            for f, c in ((km.MP_FBC, km.MP_CSLIP_C), (km.MP_FBT, km.MP_CSLIP_T)):
                Pb[:, o + c] = cp + (Pb[:, o + f] - Pb[:, o + km.MP_F0]) / Pb[:, o + km.MP_K]
        for m, im in self._masses:
            Pb[:, im] = 1.0 / Pb[:, m]

    def _run(self, Pb, out, ev, info, status) -> None:
        kp.run_batch(Pb, *self.packed.arrays, self.chan, out, ev, info, status)
