"""The peripheral (androgynous ring) docking unit as a :class:`models.unit.DockingUnit`: its
channels with units and kinds, parameters, events, the batch runner over its compiled kernel,
loads and energy from histories, and the analytic first guess of a reconstruction from
telemetry (the closing velocity from the ring's peak axial stroke).

The physics is :mod:`models.peripheral._kernels.kernel`; the readable layer
:mod:`models.peripheral.simulate`. Quantities the probe-cone unit also has carry its names
(``interface_force_x``, ``energy_dissipated_brake``, ``peak_axial_force``, ...).

The kernel starts at ``t = 0`` with the rings apart; with ``t_pre > 0``
(:meth:`PeripheralUnit.batch`, :meth:`PeripheralBatch.derive`) its output begins ``t_pre``
earlier (rounded up to the output grid) with the vehicles' free flight before the start: the
ring at rest, the flags 0 and the body rates torque-free
(:func:`models.peripheral._kernels.kernel._free_flight_before`), so a reconstruction can fit a
record whose span begins before the start plane.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from models.peripheral._kernels import run_layout as R
from models.peripheral import simulate as ps
from models.peripheral.schema import SCENARIO as SCENARIO_SCHEMA
from models.peripheral.simulate import FILE_CHANNELS, PARAMETERS, PeripheralBatch
from models.peripheral.sensors import SENSORS
from models.trace import Trace, TraceSettings
from models.unit import (Channel, DockingUnit, calibration_guess, ledger_channels, row_last,
                         row_peak, vehicle_channels)

__all__ = ["PeripheralUnit", "PeripheralBatch", "UnitTrajectory", "UNIT", "PARAMETERS"]

_PI = math.pi

_PARAMETER_UNITS = {
    **{n: ("m" if "pos" in n else "m/s" if "vel" in n else "rad/s" if "rate" in n else "rad")
       for n in R.IC_NAMES},
    "leg_brake_force": "N", "leg_damping": "N*s/m", "contact_friction": "",
    "contact_stiffness": "N/m", "contact_damping": "N*s/m", "thrust_x": "N",
    # scenario paths
    "active.mass": "kg", "passive.mass": "kg", "mechanism.ring_mass": "kg",
    "mechanism.spring_rate": "N/m", "mechanism.spring_preload": "N",
    "mechanism.damping": "N*s/m", "mechanism.brake_force_compression": "N",
    "mechanism.brake_force_extension": "N", "mechanism.stop_rate": "N/m",
    "contact.friction": "", "contact.stiffness": "N/m", "contact.damping": "N*s/m",
}

def _channels() -> dict[str, Channel]:
    """Every kernel output channel (``t`` aside) with its SI unit, kind and range."""
    out: dict[str, Channel] = {}

    def add(name, unit, kind, text, sensor=False, rng=None):
        out[name] = Channel(name, unit, kind, text, sensor, rng)

    for a in "xyz":
        add(f"ring_{a}", "m", "continuous", f"docking ring centre in the active unit frame "
            f"(q1..q3), {a}", True, (-1.0, 1.0))
    for a in ("roll", "pitch", "yaw"):
        add(f"ring_{a}", "rad", "continuous", f"docking ring {a} relative to the active unit",
            True, (-_PI / 2, _PI / 2))
    for i in range(1, 7):
        add(f"leg_{i}", "m", "continuous", f"length of leg {i}", True, (0.0, 5.0))
    add("contact", "", "binary", "any ring-ring contact", True, (0.0, 1.0))
    for i in range(1, 4):
        add(f"capture_sensor_{i}", "", "binary", f"capture sensor {i} switched", True,
            (0.0, 1.0))
    add("capture", "", "binary", "ring planes aligned and one latch of each pair behind its "
        "stop", True, (0.0, 1.0))
    for i in range(1, 7):
        add(f"latch_{i}", "", "binary", f"latch {i} behind its stop", True, (0.0, 1.0))
    for i in range(1, 7):
        add(f"leg_force_{i}", "N", "continuous", f"axial force of leg {i}, compression "
            f"positive: absorber (spring and brake), end stop and damper")
    vehicle_channels(add)
    ledger_channels(add, (("kinetic", "kinetic energy of both vehicles and the ring"),
                          ("stored", "energy stored in the leg springs and stops, contacts "
                           "and sensor springs"),
                          ("dissipated_brake", "work of the leg brakes"),
                          ("dissipated_dampers", "leg damper dissipation"),
                          ("dissipated_contact", "contact dissipation"),
                          ("latch", "latch springs and latch kinetic energy"),
                          ("dissipated_latch", "latch dissipation (implicit Euler and stops)")),
                    (("latch_work", "work of the held latch forces on the vehicles and the "
                      "ring"),))
    missing = set(ps.CHANNELS) - {"t"} - set(out)
    assert not missing, missing
    return out


@dataclass
class UnitTrajectory:
    """One simulation as the unit interface returns it: ``t`` [s], ``channels`` (name ->
    array, SI), ``events`` (name -> time [s] or None), ``steps`` and ``small_steps``."""

    t: np.ndarray
    channels: dict
    events: dict
    steps: int = 0
    small_steps: int = 0
    trace: Trace | None = None     # models.trace.Trace when simulated with a trace

    def __getitem__(self, name: str) -> np.ndarray:
        return self.t if name == "t" else self.channels[name]

    @property
    def captured(self) -> bool:
        return self.events.get("capture") is not None

    def to_frame(self, telemetry_only: bool = True):
        """pandas DataFrame with ``t`` and the file channels (every channel with
        ``telemetry_only=False``)."""
        import pandas as pd

        names = FILE_CHANNELS if telemetry_only else tuple(self.channels)
        return pd.DataFrame({"t": self.t, **{n: self.channels[n] for n in names}})

    def event_list(self) -> list[dict]:
        """``[{"name": ..., "t": ...}]`` of the events that happened, in time order."""
        ev = [{"name": k, "t": v} for k, v in self.events.items() if v is not None]
        return sorted(ev, key=lambda e: e["t"])


# --------------------------------------------------------------------------------------------
class PeripheralUnit(DockingUnit):
    """The peripheral unit (module docstring)."""

    name = "peripheral"
    supports_trace = True
    title = "peripheral (androgynous ring) docking unit"
    scenario_schema = SCENARIO_SCHEMA
    channels = _channels()
    parameters = _PARAMETER_UNITS
    initial_conditions = R.IC_NAMES
    events = ps.EVENT_NAMES
    # capture needs aligned ring planes and latches: one sharp switch; contact may chatter
    clock_events = (("capture", "capture"), ("contact", "first_contact"))
    # the kernel records each of these events at the step its flag rises (kernel
    # models/peripheral/_kernels/kernel.py: the latches and capture stay set once set)
    flag_events = (("contact", "first_contact"), ("capture", "capture"),
                   *((f"latch_{i + 1}", f"latch_{i + 1}") for i in range(6)))
    sensor_suite = SENSORS
    fitted_channels = ("ring_x", "ring_y", "ring_z", "ring_roll", "ring_pitch", "ring_yaw",
                       "capture",
                       "active_rate_x", "active_rate_y", "active_rate_z",
                       "passive_rate_x", "passive_rate_y", "passive_rate_z")
    trajectory_channels = (
        *R.IC_NAMES,
        "interface_force_x", "interface_force_y", "interface_force_z",
        "interface_moment_x", "interface_moment_y", "interface_moment_z",
        "ring_x", "ring_y", "ring_z", "ring_roll", "ring_pitch", "ring_yaw",
        *(f"leg_{i}" for i in range(1, 7)),
        *(f"leg_force_{i}" for i in range(1, 7)),
    )
    load_channels = ("interface_force_x", "interface_force_y", "interface_force_z",
                     "interface_moment_x", "interface_moment_y", "interface_moment_z",
                     *(f"leg_force_{i}" for i in range(1, 7)))
    energy_channels = ("energy_kinetic", "energy_stored", "energy_dissipated_brake",
                       "energy_dissipated_dampers", "energy_dissipated_contact",
                       "energy_dissipated_latch", "thrust_work", "latch_work")
    summary_quantities = (
        ("loads", "peak_axial_force", "peak axial force"),
        ("loads", "peak_lateral_force", "peak lateral force"),
        ("loads", "peak_bending_moment", "peak bending moment"),
        ("loads", "peak_torsion_moment", "peak torsion moment"),
        ("loads", "peak_leg_compression_force", "peak leg compression force"),
        ("energy", "dissipated_brake", "energy absorbed by the leg brakes"),
        ("energy", "dissipated_dampers", "energy dissipated by the leg dampers"),
        ("energy", "stored_final", "energy stored in the springs (end)"),
        ("energy", "kinetic_initial", "initial kinetic energy"),
    )

    absorber_figure = ("Leg absorber loads: axial force of each leg (compression positive: "
                       "spring and brake, end stop, damper)",
                       tuple(((f"leg_force_{i}", f"leg {i} force"),
                              (f"leg_force_{i + 1}", f"leg {i + 1} force"))
                             for i in (1, 3, 5)))
    absorber_loops = tuple((f"leg_force_{i}", f"leg {i} force", f"leg_{i}", f"leg {i} length")
                           for i in range(1, 7))
    history_figures = (
        ("ring_trajectory", "Docking ring pose relative to the active unit",
         ((("ring_x", "ring x (axial)"), ("ring_roll", "ring roll")),
          (("ring_y", "ring y"), ("ring_pitch", "ring pitch")),
          (("ring_z", "ring z"), ("ring_yaw", "ring yaw")))),
    )

    def scenario(self, table: Mapping[str, Any]) -> ps.Scenario:
        return ps.Scenario.from_dict({"unit": self.name, **table})

    def batch(self, scenario: ps.Scenario, parameters: Sequence[str],
              channels: Sequence[str], *, rate: float | None = None,
              duration: float | None = None, t_pre: float = 0.0) -> PeripheralBatch:
        return PeripheralBatch(scenario, tuple(parameters), tuple(channels), rate=rate,
                               duration=duration, t_pre=t_pre)

    def output_rate(self, scenario: ps.Scenario) -> float:
        return float(scenario.integration.output_rate)

    def simulate(self, scenario: ps.Scenario, initial: Mapping[str, float] | None = None, *,
                 rate: float | None = None, duration: float | None = None,
                 t_pre: float = 0.0, trace: TraceSettings | None = None) -> UnitTrajectory:
        """As :meth:`models.unit.DockingUnit.simulate`; ``trace`` records the routines of a
        window (:mod:`models.trace`), returned as ``trace`` of the result."""
        ic = None if initial is None else self.initial(initial)
        tr = ps.simulate(scenario, ic, rate, duration, trace=trace, t_pre=t_pre)
        ch = {n: v for n, v in tr.channels.items() if n != "t"}
        ev = {n: (None if math.isnan(v) else float(v)) for n, v in tr.events.items()}
        return UnitTrajectory(t=tr.t, channels=ch, events=ev,
                              steps=int(tr.info[R.INFO_STEPS]),
                              small_steps=int(tr.info[R.INFO_SMALL_STEPS]), trace=tr.trace)

    def passive_rate(self, scenario: ps.Scenario) -> np.ndarray:
        return np.asarray(scenario.config.passive_initial_rate, float)

    def preset(self, name: str):
        return ps.PRESETS / f"{name}.toml"

    def benchmark(self, scenario: ps.Scenario, *, repeats: int = 5, batch: int = 16) -> dict:
        from models.peripheral.benchmark import benchmark

        return benchmark(scenario, repeats=repeats, batch=batch)

    def loads(self, histories: Mapping[str, np.ndarray]
              ) -> tuple[dict[str, np.ndarray], dict[str, str]]:
        """Peak interface loads at the passive unit over each row's span (PU axes, X the
        docking axis): ``peak_axial_force``, ``peak_lateral_force``, ``peak_force`` [N],
        ``peak_bending_moment``, ``peak_torsion_moment`` [N m] (largest magnitude); and the
        largest axial compression force of any leg, ``peak_leg_compression_force`` [N]."""
        ch = histories
        fx, fy, fz = (ch[f"interface_force_{a}"] for a in "xyz")
        mx, my, mz = (ch[f"interface_moment_{a}"] for a in "xyz")
        vals = {"peak_axial_force": row_peak(np.abs(fx)),
                "peak_lateral_force": row_peak(np.hypot(fy, fz)),
                "peak_force": row_peak(np.sqrt(fx ** 2 + fy ** 2 + fz ** 2)),
                "peak_bending_moment": row_peak(np.hypot(my, mz)),
                "peak_torsion_moment": row_peak(np.abs(mx)),
                "peak_leg_compression_force": row_peak(np.fmax.reduce(
                    [ch[f"leg_force_{i}"] for i in range(1, 7)]))}
        return vals, {k: ("N" if "force" in k else "N*m") for k in vals}

    def energy(self, histories: Mapping[str, np.ndarray]
               ) -> tuple[dict[str, np.ndarray], dict[str, str]]:
        """Initial kinetic energy and what each absorber took by the end of each row's span
        [J]; ``dissipated_total`` adds the leg brakes, dampers, contacts and latches."""
        ch = histories
        vals = {"kinetic_initial": ch["energy_kinetic"][:, 0],
                "kinetic_final": row_last(ch["energy_kinetic"]),
                "stored_final": row_last(ch["energy_stored"]),
                "thrust_work": row_last(ch["thrust_work"]),
                "latch_work": row_last(ch["latch_work"])}
        for k in ("brake", "dampers", "contact", "latch"):
            vals[f"dissipated_{k}"] = row_last(ch[f"energy_dissipated_{k}"])
        vals["dissipated_total"] = sum(vals[f"dissipated_{k}"] for k in
                                       ("brake", "dampers", "contact", "latch"))
        return vals, {k: "J" for k in vals}

    def first_guess(self, problem: Any) -> np.ndarray:
        """The closing velocity from the record's peak axial stroke of the ring (the largest
        ``-ring_x``, the ring pushed back towards its base once the latches hold the rings
        together) read through a calibration curve made by the forward model
        (:func:`models.unit.calibration_guess`); the other free parameters at their start
        values (the prior's centre). The relative rates (from the gyros before contact) and
        the clock offset (from the capture edge) are the reconstruction's own steps
        (:func:`recon.search.first_guess`).

        Reference preset, 6 s from the start plane: the peak stroke grows from 10.5 mm at
        0.04 m/s to 35.8 mm at 0.1 m/s and 80.6 mm at 0.2 m/s, and a 40 mm lateral offset
        lowers it by 3-7 mm (the petals take energy before capture), so the curve reads a
        closing velocity to within about 0.01-0.02 m/s of an offset docking's. Read from the ring
        pose at capture instead, the lateral offset and the angles at the start would be no
        better than the prior's centre: the petals have turned and shifted the vehicles by
        then (random dockings: ring and relative pose at capture unrelated in sign and size
        to the start's)."""
        return calibration_guess(problem, "rel_vel_x", "ring_x", sign=-1.0)


#: the registered instance
UNIT = PeripheralUnit()
