"""Readable entry points of the probe-cone docking model: ``pack``, ``simulate``, ``Trajectory``
and the batch evaluator used by the reconstruction.

The physics is all in :mod:`models.probe_cone._kernels.kernel` (one compiled time loop); this
module builds its packed arrays once from a :class:`~models.probe_cone.config.Scenario`, runs it
and names the output. With ``trace=TraceSettings(t0, t1, groups)`` :func:`simulate` also records
every selected routine per RK4 stage in that window (:mod:`models.trace`), returned as
:attr:`Trajectory.trace`; an abort's message gives the ``--trace`` window to rerun with.

Packed parameter vector (the reconstruction's contract)
-------------------------------------------------------
``Packed.P`` is a float64 vector of length ``NP`` (layout ``P_*`` in the kernel module). Any
entry can be overridden per evaluation by name with :data:`PARAMETERS`:

* the 12 initial conditions ``rel_pos_x`` ... ``rel_rate_z`` (SI, see
  :class:`~models.unit.InitialConditions`);
* ``brake_slip_force`` [N]: slip threshold of the axial friction brake (the brake element's
  table is rebuilt inside the kernel, keeping the stiff segment slopes);
* ``axial_spring_scale``, ``lateral_spring_scale`` [-]: factors on the forces of the axial
  (spring + brake, applied so that the slip threshold stays ``brake_slip_force``) and lateral
  hysteresis elements;
* ``contact_friction`` [-]: friction coefficient k_Fr of every contact;
* ``contact_stiffness`` [N/m], ``contact_damping`` [N s/m], ``axial_damping`` [N s/m],
  ``latch_preload`` [N], ``latch_stiffness`` [N/m], ``head_mass`` [kg],
  ``sensor_friction`` [N] (axial friction of the capture sensors after capture),
  ``thrust_x`` [N] (body X of the active vehicle; on during ``[thrust.start, thrust.stop)``),
  ``bending_stiffness`` [N m/rad], ``bending_damping`` [N m s/rad] (probe bending about the
  support bearing), ``housing_inertia`` [kg m^2] (movable housing about its joint);
* the absorbers' characteristic numbers by their scenario paths,
  ``probe.axial_absorber.<name>`` (``common_stroke`` [m], ``common_force`` [N],
  ``spring_stroke`` [m], ``spring_force`` [N], ``unloading_force`` [N], ``stiff_rate`` [N/m],
  ``tension_slip_force`` [N]; ``slip_force`` is ``brake_slip_force``) and
  ``probe.lateral_absorber.<name>`` / ``probe.torsion_absorber.<name>`` (``common_angle``
  [rad], ``stage1_rate`` [N m/rad], ``stage1_angle`` [rad], ``stage2_rate`` [N m/rad],
  ``range_angle`` [rad], ``stop_rate`` [N m/rad], ``unloading_ratio`` [-]): a run that sets
  any of them rebuilds that element's table from its numbers inside the kernel
  (:mod:`models.probe_cone._kernels.absorbers`; numbers that make no valid element end the
  run with ``ST_BAD_TABLE``).

:class:`BatchModel` evaluates ``theta`` of shape (n, k) for k chosen names in parallel and
returns the chosen channels at the output rate, the event times and a status per row.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Mapping, Sequence

import numpy as np

from models.batch import KernelBatch
from models.errors import InputError, SimulationError
from models.trace import Trace, TraceSettings, arm, kernel_failure
from models.probe_cone._kernels import kernel as kp
from models.probe_cone._kernels.absorbers import AXIAL_FIELDS, LATERAL_FIELDS
from models.unit import IC_NAMES, InitialConditions
from models.probe_cone.config import IMPLICIT_FRICTION, Scenario, housing_primitives

__all__ = [
    "Packed",
    "pack",
    "simulate",
    "Trajectory",
    "BatchModel",
    "SimulationError",
    "PARAMETERS",
    "CHANNELS",
    "CHANNEL_UNITS",
    "TELEMETRY_CHANNELS",
    "EVENT_NAMES",
]

CHANNELS = kp.channel_names()

_UNITS = {"t": "s", "stroke": "m", "gimbal_pitch": "rad", "gimbal_yaw": "rad",
          "rel_pos_x": "m", "rel_pos_y": "m", "rel_pos_z": "m",
          "rel_vel_x": "m/s", "rel_vel_y": "m/s", "rel_vel_z": "m/s",
          "rel_roll": "rad", "rel_pitch": "rad", "rel_yaw": "rad",
          "rel_rate_x": "rad/s", "rel_rate_y": "rad/s", "rel_rate_z": "rad/s",
          "thrust_work": "J", "absorber_axial_force": "N",
          "absorber_pitch_moment": "N m", "absorber_yaw_moment": "N m",
          "bending_pitch": "rad", "bending_yaw": "rad", "housing_contact": "0/1"}
CHANNEL_UNITS: dict[str, str] = {}
for _n in CHANNELS:
    if _n in _UNITS:
        CHANNEL_UNITS[_n] = _UNITS[_n]
    elif _n in ("contact", "bottom_contact", "capture") or _n.startswith("latch_"):
        CHANNEL_UNITS[_n] = "0/1"
    elif "_rate_" in _n:
        CHANNEL_UNITS[_n] = "rad/s"
    elif _n.startswith("interface_force"):
        CHANNEL_UNITS[_n] = "N"
    elif _n.startswith("interface_moment"):
        CHANNEL_UNITS[_n] = "N m"
    elif _n.startswith("energy_"):
        CHANNEL_UNITS[_n] = "J"
    elif _n.startswith("momentum_"):
        CHANNEL_UNITS[_n] = "kg m/s"
    elif _n.startswith("angular_momentum_"):
        CHANNEL_UNITS[_n] = "kg m^2/s"
    else:  # pragma: no cover - every channel is covered above
        raise AssertionError(_n)

#: channels written to the trajectory file (the issue's list; momenta and thrust work are
#: diagnostics kept on the :class:`Trajectory`).
TELEMETRY_CHANNELS = tuple(n for n in CHANNELS if not n.startswith(("momentum_",
                                                                    "angular_momentum_",
                                                                    "thrust_work")))

EVENT_NAMES = ("first_contact", "bottom_contact", "latch_1", "latch_2", "latch_3", "latch_4",
               "capture", "separation")

PARAMETERS: dict[str, int] = {name: kp.P_IC + i for i, name in enumerate(IC_NAMES)}
PARAMETERS.update({
    "brake_slip_force": kp.P_F_SLIP,
    "axial_spring_scale": kp.P_S_AX,
    "lateral_spring_scale": kp.P_S_LAT,
    "contact_friction": kp.P_LAW + 2,
    "contact_stiffness": kp.P_LAW + 0,
    "contact_damping": kp.P_LAW + 1,
    "axial_damping": kp.P_CAX,
    "latch_preload": kp.P_LATCH_F0,
    "latch_stiffness": kp.P_LATCH_K,
    "head_mass": kp.P_MH,
    "thrust_x": kp.P_THRUST,
    "sensor_friction": kp.P_SENS_FR,
    "bending_stiffness": kp.P_KB,
    "bending_damping": kp.P_CB,
    "housing_inertia": kp.P_JM,
})
#: scenario paths of the numbers that are packed entries as they stand (several the same
#: entries as the short names above, which stay as aliases)
PARAMETERS.update({
    "active.mass": kp.P_M1,
    "passive.mass": kp.P_M2,
    "probe.head_mass": kp.P_MH,
    "probe.axial_damping": kp.P_CAX,
    "probe.spin_inertia": kp.P_JT,
    "probe.torsion_damping": kp.P_CTOR,
    "probe.housing_inertia": kp.P_JM,
    "probe.bending_stiffness": kp.P_KB,
    "probe.bending_damping": kp.P_CB,
    "probe.axial_absorber.slip_force": kp.P_F_SLIP,
    "latches.preload": kp.P_LATCH_F0,
    "latches.stiffness": kp.P_LATCH_K,
    "capture_sensors.preload": kp.P_SENS_F0,
    "capture_sensors.stiffness": kp.P_SENS_K,
    "capture_sensors.friction_force": kp.P_SENS_FR,
    "contact.stiffness": kp.P_LAW + 0,
    "contact.damping": kp.P_LAW + 1,
    "contact.friction": kp.P_LAW + 2,
})
#: the absorbers' characteristic numbers by their scenario paths: the kernel rebuilds the
#: element's table from them in a run where one of them is set (``P_REBUILD``, the bit here)
REBUILD_BITS: dict[int, int] = {}
for _key, _off, _names, _bit in (("axial_absorber", kp.P_AXC, AXIAL_FIELDS, kp.REBUILD_AXIAL),
                                 ("lateral_absorber", kp.P_LATC, LATERAL_FIELDS,
                                  kp.REBUILD_LATERAL),
                                 ("torsion_absorber", kp.P_TORC, LATERAL_FIELDS,
                                  kp.REBUILD_TORSION)):
    for _i, _n in enumerate(_names):
        PARAMETERS[f"probe.{_key}.{_n}"] = _off + _i
        REBUILD_BITS[_off + _i] = _bit


def rebuild_mask(names) -> float:
    """``P_REBUILD`` for a run that sets the packed parameters ``names``: the bits of the
    absorbers whose characteristic numbers are among them."""
    bits = 0
    for n in names:
        bits |= REBUILD_BITS.get(PARAMETERS[n], 0)
    return float(bits)

# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Packed:
    """The kernel's arrays for one scenario (built once by :func:`pack`)."""

    P: np.ndarray
    mer: np.ndarray
    slots: np.ndarray
    hc: np.ndarray
    table: np.ndarray
    toff: np.ndarray

    @property
    def n_out(self) -> int:
        return int(round(self.P[kp.P_T_END] / self.P[kp.P_DT_OUT])) + 1


def pack(scenario: Scenario, initial: InitialConditions | None = None, *,
         rate: float | None = None, duration: float | None = None) -> Packed:
    """Build the packed arrays of ``scenario`` (initial conditions from ``initial`` or from
    the scenario's ``[initial]`` table; ``rate`` [Hz] and ``duration`` [s] override the
    scenario's integration settings)."""
    ic = initial if initial is not None else scenario.initial
    if ic is None:
        raise InputError("no initial conditions: give --initial ICS.toml or an [initial] table",
                         key="initial")
    P = np.zeros(kp.NP)
    for b, (om, oj, oji, ol, og) in ((scenario.active, (kp.P_M1, kp.P_J1, kp.P_JI1, kp.P_L1,
                                                          kp.P_G1)),
                                     (scenario.passive, (kp.P_M2, kp.P_J2, kp.P_JI2, kp.P_L2,
                                                          kp.P_G2))):
        J = np.asarray(b.inertia, dtype=float)
        P[om] = b.mass
        P[oj:oj + 9] = J.reshape(-1)
        P[oji:oji + 9] = np.linalg.inv(J).reshape(-1)
        P[ol:ol + 3] = b.unit_offset
        P[og:og + 9] = b.unit_dcm.reshape(-1)
    pr = scenario.probe
    P[kp.P_MH] = pr.head_mass
    P[kp.P_L0] = pr.extended_length
    P[kp.P_RH] = pr.head_radius
    P[kp.P_CAX] = pr.axial_damping
    P[kp.P_CD1], P[kp.P_CD2] = pr.lateral_damping
    P[kp.P_JT] = pr.spin_inertia
    P[kp.P_CTOR] = pr.torsion_damping
    P[kp.P_LM] = pr.bearing_offset
    P[kp.P_JM] = pr.housing_inertia
    P[kp.P_KB] = pr.bending_stiffness
    P[kp.P_CB] = pr.bending_damping
    hc = housing_primitives(scenario.pads, scenario.rollers)
    reach = 0.0
    for row in hc:
        if row[kp.HC_KIND] == kp.HC_ROLLER:
            reach = max(reach, float(np.linalg.norm(row[kp.HC_P1:kp.HC_P1 + 3])
                                     + row[kp.HC_R]))
        else:
            reach = max(reach, float(np.linalg.norm(row[kp.HC_P1:kp.HC_P1 + 3])),
                        float(np.linalg.norm(row[kp.HC_P2:kp.HC_P2 + 3])))
    P[kp.P_HC_REACH] = reach
    # mouth circle: the start of the first truncated cone of the meridian (digest 7.6)
    m = np.asarray(scenario.cone.meridian, dtype=float)
    k = int(np.argmax(np.diff(m[:, 0]) > 0.0))
    P[kp.P_MOUTH_X] = m[k, 0]
    P[kp.P_MOUTH_R] = m[k, 1]
    c = scenario.contact
    P[kp.P_LAW:kp.P_LAW + 5] = c.law().packed
    P[kp.P_DNMAX] = c.max_penetration
    la = scenario.latches
    P[kp.P_LATCH_X] = la.axial_offset
    P[kp.P_LATCH_R] = la.tip_radius
    P[kp.P_LATCH_RIN] = la.reverse_inner_radius
    P[kp.P_LATCH_F0] = la.preload
    P[kp.P_LATCH_K] = la.stiffness
    P[kp.P_LATCH_TRAVEL] = la.travel
    se = scenario.sensors
    P[kp.P_SENS_X] = se.axial_offset
    P[kp.P_SENS_R] = se.tip_radius
    P[kp.P_SENS_F0] = se.preload
    P[kp.P_SENS_K] = se.stiffness
    P[kp.P_SENS_TRAVEL] = se.travel
    P[kp.P_SENS_FR] = se.friction_force
    th = scenario.thrust
    P[kp.P_THRUST:kp.P_THRUST + 3] = th.force
    P[kp.P_T_ON] = th.start
    P[kp.P_T_OFF] = th.stop
    it = scenario.integration
    P[kp.P_H_SMALL] = it.dt_contact
    P[kp.P_H_LARGE] = it.dt_free
    P[kp.P_H_CAPT] = it.dt_captured
    P[kp.P_IMPLICIT] = IMPLICIT_FRICTION[it.implicit_friction]
    P[kp.P_GAP] = it.gap_margin
    P[kp.P_T_END] = float(duration) if duration is not None else it.duration
    out_rate = float(rate) if rate is not None else it.output_rate
    if not out_rate > 0.0:
        raise InputError("must be positive", key="rate")
    if P[kp.P_T_END] <= 0.0:
        raise InputError("must be positive", key="duration")
    P[kp.P_DT_OUT] = 1.0 / out_rate
    P[kp.P_S_AX] = 1.0
    P[kp.P_S_LAT] = 1.0
    P[kp.P_F_SLIP] = pr.axial.slip_force
    # the absorbers' characteristic numbers, read by run() only for the tables P_REBUILD
    # names (a reconstruction fitting them; models.probe_cone._kernels.absorbers)
    for off, absorber, names in ((kp.P_AXC, pr.axial, AXIAL_FIELDS),
                                 (kp.P_LATC, pr.lateral, LATERAL_FIELDS),
                                 (kp.P_TORC, pr.torsion, LATERAL_FIELDS)):
        P[off:off + len(names)] = [getattr(absorber, n) for n in names]
    P[kp.P_REBUILD] = 0.0
    P[kp.P_W2:kp.P_W2 + 3] = scenario.passive_initial_rate
    P[kp.P_IC:kp.P_IC + 12] = ic.as_array()
    from models.hysteresis import pack_elements

    pe = pack_elements([pr.axial.element(), pr.lateral.element("lateral_absorber_yaw"),
                        pr.lateral.element("lateral_absorber_pitch"), pr.torsion.element()])
    table, toff = np.array(pe.table), pe.toff
    mer = scenario.cone.meridian_table()
    if pr.head_radius >= scenario.cone.socket_radius:
        raise InputError("head does not fit the socket", key="probe.head_radius")
    if la.tip_radius <= scenario.cone.socket_radius:
        raise InputError("latch tips must protrude beyond the socket radius",
                         key="latches.tip_radius")
    slots = scenario.slots.slot_table(scenario.cone.socket_radius)
    return Packed(P=P, mer=np.ascontiguousarray(mer), slots=slots, hc=hc, table=table, toff=toff)


# --------------------------------------------------------------------------------------------
@dataclass
class Trajectory:
    """Output of one simulation: channels at the output rate, events, run information.

    Attributes
    ----------
    t : ndarray
        Sample times [s].
    channels : dict[str, ndarray]
        Every channel of :data:`CHANNELS` except ``t`` (units :data:`CHANNEL_UNITS`).
    events : dict[str, float | None]
        Event times [s] (:data:`EVENT_NAMES`), None when the event did not happen.
    steps, small_steps : int
        RK4 steps taken, and how many of them with the small (contact) step.
    trace : Trace or None
        The trace (:mod:`models.trace`) when simulated with one.
    """

    t: np.ndarray
    channels: dict
    events: dict
    steps: int = 0
    small_steps: int = 0
    units: dict = field(default_factory=lambda: dict(CHANNEL_UNITS))
    trace: Trace | None = None

    def __getitem__(self, name: str) -> np.ndarray:
        if name == "t":
            return self.t
        return self.channels[name]

    @property
    def captured(self) -> bool:
        return self.events.get("capture") is not None

    def ledger_residual(self) -> np.ndarray:
        """Initial kinetic energy plus thrust work minus (kinetic + stored + dissipated) [J]."""
        c = self.channels
        total = (c["energy_kinetic"] + c["energy_stored"] + c["energy_dissipated_brake"]
                 + c["energy_dissipated_dampers"] + c["energy_dissipated_hysteresis"]
                 + c["energy_dissipated_contact"])
        return c["energy_kinetic"][0] + c["thrust_work"] - total

    def to_frame(self, telemetry_only: bool = True):
        """pandas DataFrame with ``t`` and the channels (the file's columns by default)."""
        import pandas as pd

        names = TELEMETRY_CHANNELS if telemetry_only else CHANNELS
        return pd.DataFrame({n: self[n] for n in names})

    def event_list(self) -> list[dict]:
        """``[{"name": ..., "t": ...}]`` of the events that happened, in time order."""
        ev = [{"name": k, "t": v} for k, v in self.events.items() if v is not None]
        return sorted(ev, key=lambda e: e["t"])


def _unpack(out: np.ndarray, ev: np.ndarray, info: np.ndarray) -> Trajectory:
    ch = {n: out[:, i].copy() for i, n in enumerate(CHANNELS) if n != "t"}
    events = {n: (None if np.isnan(v) else float(v)) for n, v in zip(EVENT_NAMES, ev)}
    return Trajectory(t=out[:, 0].copy(), channels=ch, events=events,
                      steps=int(info[kp.INFO_STEPS]),
                      small_steps=int(info[kp.INFO_SMALL_STEPS]))


def simulate(scenario: Scenario, initial: InitialConditions | None = None, *,
             rate: float | None = None, duration: float | None = None,
             overrides: Mapping[str, float] | None = None, t_pre: float = 0.0,
             trace: TraceSettings | None = None) -> Trajectory:
    """Simulate a probe-cone docking.

    Parameters
    ----------
    scenario
        Vehicles, unit, contact, integration settings.
    initial
        Initial conditions; default the scenario's ``[initial]`` table.
    rate
        Output rate [Hz]; default ``scenario.integration.output_rate``.
    duration
        Simulated time [s]; default ``scenario.integration.duration``.
    overrides
        Values of named packed parameters (:data:`PARAMETERS`), SI.
    t_pre
        Free-flight extension before the start [s] (:class:`BatchModel`): the trajectory
        begins at ``-t_pre`` (on the output grid), with the sensor channels at rest, the body
        rates propagated backwards and the other channels NaN before ``t = 0``.
    trace
        Record the selected routines in the window (:mod:`models.trace`): kept as
        :attr:`Trajectory.trace`, and on an abort as the error's ``trace``. Tracing does not
        change the results.

    Returns
    -------
    Trajectory

    Raises
    ------
    SimulationError
        When the kernel stops (penetration exceeded, geometry range, hysteresis logic).
    """
    pk = pack(scenario, initial, rate=rate, duration=duration)
    P = pk.P.copy()
    for name, value in (overrides or {}).items():
        if name not in PARAMETERS:
            raise InputError(f"unknown parameter (known: {', '.join(PARAMETERS)})", key=name)
        P[PARAMETERS[name]] = float(value)
    P[kp.P_REBUILD] = rebuild_mask(overrides or {})
    if not t_pre >= 0.0:
        raise InputError(f"must be >= 0, got {t_pre}", key="t_pre")
    n_pre = int(np.ceil(t_pre * P[kp.P_DT_OUT] ** -1 - 1e-9))
    P[kp.P_T_PRE] = n_pre * P[kp.P_DT_OUT]
    n_out = n_pre + pk.n_out
    chan = np.arange(kp.NCH, dtype=np.int64)
    out = np.empty((n_out, kp.NCH))
    ev = np.empty(kp.N_EV)
    info = np.zeros(kp.NINFO)
    P, tr, trn = arm(P, trace, kp.P_TR_T0, kp.P_TR_T1, kp.P_TR_MASK)
    st = kp.run(P, pk.mer, pk.slots, pk.hc, pk.table, pk.toff, chan, out, ev, info, tr, trn)
    traced = None if trace is None else Trace.from_kernel(tr, trn, trace, "probe_cone")
    if st != kp.ST_OK:
        detail = f"element {int(info[kp.INFO_ELEMENT])}" if st == kp.ST_HYSTERESIS else ""
        h_max = max(P[kp.P_H_SMALL], P[kp.P_H_LARGE], P[kp.P_H_CAPT])
        exc = kernel_failure(st, info[kp.INFO_T_FAIL], where=detail, step=h_max)
        exc.trace = traced
        raise exc
    res = _unpack(out, ev, info)
    res.trace = traced
    return res


# --------------------------------------------------------------------------------------------
class BatchModel(KernelBatch):
    """Evaluate many parameter vectors of one scenario in parallel (the reconstruction's hot
    call).

    Parameters
    ----------
    scenario, initial
        Base scenario and initial conditions (every non-listed parameter keeps its value).
    parameters
        Names from :data:`PARAMETERS`, the columns of ``theta``.
    channels
        Channel names to return (default: all telemetry channels).
    rate, duration
        Output rate [Hz] and simulated time [s] (default: the scenario's); ``duration`` is the
        longest any row may run (:meth:`evaluate` can end each row earlier).
    t_pre
        Free-flight extension before the start [s]: :attr:`t` begins at ``-t_pre`` (rounded
        to the output grid), and before ``t = 0`` the sensor channels are those of the unit at
        rest and the body rates are propagated backwards (torque-free), the other channels NaN
        (``models.probe_cone._kernels.kernel._free_flight_before``).

    Examples
    --------
    >>> bm = BatchModel(scn, parameters=["rel_vel_x", "brake_slip_force"],
    ...                 channels=["stroke", "gimbal_pitch"])          # doctest: +SKIP
    >>> out, events, status = bm.evaluate(theta)   # theta (n, 2); out (n, n_out, 2)
    """

    def __init__(self, scenario: Scenario, initial: InitialConditions | None = None, *,
                 parameters: Sequence[str] = IC_NAMES,
                 channels: Sequence[str] | None = None,
                 rate: float | None = None, duration: float | None = None,
                 t_pre: float = 0.0) -> None:
        packed = pack(scenario, initial, rate=rate, duration=duration)
        dt = packed.P[kp.P_DT_OUT]
        if not t_pre >= 0.0:
            raise InputError(f"must be >= 0, got {t_pre}", key="t_pre")
        n_pre = int(np.ceil(t_pre / dt - 1e-9))
        P = packed.P.copy()
        P[kp.P_T_PRE] = n_pre * dt
        unknown = [p for p in parameters if p not in PARAMETERS]
        if not unknown:      # else KernelBatch refuses the name
            P[kp.P_REBUILD] = rebuild_mask(parameters)
        self.packed = replace(packed, P=P)
        super().__init__(P, packed.n_out, PARAMETERS, parameters, CHANNELS,
                         tuple(channels) if channels is not None else TELEMETRY_CHANNELS,
                         i_dt_out=kp.P_DT_OUT, i_t_end=kp.P_T_END, n_events=kp.N_EV,
                         n_info=kp.NINFO, n_pre=n_pre)

    def derive(self, channels: Sequence[str] | None = None, *, t_pre: float | None = None
               ) -> "BatchModel":
        """The same scenario, parameters, rate and duration with other output ``channels``
        and / or another free-flight extension ``t_pre`` [s]; shares the packed tables."""
        other = KernelBatch.derive(self, channels)
        if t_pre is not None:
            dt = self.packed.P[kp.P_DT_OUT]
            other.n_pre = int(np.ceil(t_pre / dt - 1e-9))
            P = self.packed.P.copy()
            P[kp.P_T_PRE] = other.n_pre * dt
            other.packed = replace(self.packed, P=P)
            other.P = P
            other._set_channels(other.channels)
        return other

    def _run(self, Pb, out, ev, info, status) -> None:
        pk = self.packed
        kp.run_batch(Pb, pk.mer, pk.slots, pk.hc, pk.table, pk.toff, self.chan, out, ev, info,
                     status)
