"""The probe-cone (central) docking unit as a :class:`models.unit.DockingUnit`: its channels
with units and kinds, parameters, events, loads and energy from histories, and the analytic
first guess of a reconstruction.

The physics is :mod:`models.probe_cone._kernels.kernel`; the readable layer
:mod:`models.probe_cone.simulate`.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from models.unit import IC_NAMES, InitialConditions
from models.probe_cone.config import Scenario
from models.probe_cone.schema import SCENARIO as SCENARIO_SCHEMA
from models.probe_cone.sensors import SENSORS
from models.probe_cone.simulate import CHANNELS, EVENT_NAMES, PARAMETERS, BatchModel, simulate
from models.unit import (Channel, DockingUnit, calibration_guess, ledger_channels,
                         row_last, row_peak, vehicle_channels)

__all__ = ["ProbeConeUnit", "UNIT", "peak_stroke_velocity"]

_PI = math.pi


def _channels() -> dict[str, Channel]:
    """Every kernel output channel (``t`` aside) with its SI unit, kind and range."""
    out: dict[str, Channel] = {}

    def add(name, unit, kind, text, sensor=False, rng=None):
        out[name] = Channel(name, unit, kind, text, sensor, rng)

    add("stroke", "m", "continuous", "probe stroke (retraction of the head from extended)",
        True, (-0.1, 1.0))
    add("gimbal_pitch", "rad", "continuous", "housing pitch angle q1", True,
        (-_PI / 2, _PI / 2))
    add("gimbal_yaw", "rad", "continuous", "housing yaw angle q2", True, (-_PI / 2, _PI / 2))
    for flag, text in (("contact", "any head contact"), ("bottom_contact", "head on the socket "
                       "bottom"), ("capture", "all four latches triggered")):
        add(flag, "", "binary", text, True, (0.0, 1.0))
    for i in range(1, 5):
        add(f"latch_{i}", "", "binary", f"latch {i} triggered", True, (0.0, 1.0))
    vehicle_channels(add)
    ledger_channels(add, (("kinetic", "kinetic energy of all bodies"),
                          ("stored", "energy stored in springs and contacts"),
                          ("dissipated_brake", "work of the friction brake"),
                          ("dissipated_dampers", "viscous damper dissipation"),
                          ("dissipated_hysteresis", "hysteresis dissipation of the springs"),
                          ("dissipated_contact", "contact dissipation")))
    add("absorber_axial_force", "N", "continuous", "axial absorber force on the stroke")
    add("absorber_pitch_moment", "N m", "continuous", "lateral absorber moment on the gimbal "
        "pitch")
    add("absorber_yaw_moment", "N m", "continuous", "lateral absorber moment on the gimbal yaw")
    add("bending_pitch", "rad", "continuous", "probe bending relative to the housing, pitch")
    add("bending_yaw", "rad", "continuous", "probe bending relative to the housing, yaw")
    add("housing_contact", "", "binary", "a limiter pad or alignment roller touches the cone")
    missing = set(CHANNELS) - {"t"} - set(out)
    assert not missing, missing
    return out


_PARAMETER_UNITS = {
    **{n: ("m" if "pos" in n else "m/s" if "vel" in n else "rad/s" if "rate" in n else "rad")
       for n in IC_NAMES},
    "brake_slip_force": "N", "axial_spring_scale": "", "lateral_spring_scale": "",
    "contact_friction": "", "contact_stiffness": "N/m", "contact_damping": "N*s/m",
    "axial_damping": "N*s/m", "latch_preload": "N", "latch_stiffness": "N/m",
    "head_mass": "kg", "thrust_x": "N", "sensor_friction": "N",
    "bending_stiffness": "N*m/rad", "bending_damping": "N*m*s/rad", "housing_inertia": "kg*m**2",
    # scenario paths: the numbers packed as they stand, then the absorbers' characteristic
    # numbers (their tables rebuilt in the kernel)
    "active.mass": "kg", "passive.mass": "kg", "probe.head_mass": "kg",
    "probe.axial_damping": "N*s/m", "probe.spin_inertia": "kg*m**2",
    "probe.torsion_damping": "N*m*s/rad", "probe.housing_inertia": "kg*m**2",
    "probe.bending_stiffness": "N*m/rad", "probe.bending_damping": "N*m*s/rad",
    "latches.preload": "N", "latches.stiffness": "N/m", "capture_sensors.preload": "N",
    "capture_sensors.stiffness": "N/m", "capture_sensors.friction_force": "N",
    "contact.stiffness": "N/m", "contact.damping": "N*s/m", "contact.friction": "",
    **{f"probe.axial_absorber.{n}": u for n, u in (
        ("common_stroke", "m"), ("common_force", "N"), ("spring_stroke", "m"),
        ("spring_force", "N"), ("unloading_force", "N"), ("stiff_rate", "N/m"),
        ("slip_force", "N"), ("tension_slip_force", "N"))},
    **{f"probe.{a}.{n}": u for a in ("lateral_absorber", "torsion_absorber") for n, u in (
        ("common_angle", "rad"), ("stage1_rate", "N*m/rad"), ("stage1_angle", "rad"),
        ("stage2_rate", "N*m/rad"), ("range_angle", "rad"), ("stop_rate", "N*m/rad"),
        ("unloading_ratio", ""))},
}
assert set(_PARAMETER_UNITS) == set(PARAMETERS)


class ProbeConeUnit(DockingUnit):
    """The probe-cone unit (module docstring)."""

    name = "probe_cone"
    supports_trace = True
    title = "probe-cone (central) docking unit"
    scenario_schema = SCENARIO_SCHEMA
    channels = _channels()
    parameters = _PARAMETER_UNITS
    initial_conditions = IC_NAMES
    events = EVENT_NAMES
    # capture is one sharp switch of all four latches; first contact may chatter
    clock_events = (("capture", "capture"), ("contact", "first_contact"))
    fitted_channels = ("stroke", "gimbal_pitch", "gimbal_yaw", "capture",
                       "active_rate_x", "active_rate_y", "active_rate_z",
                       "passive_rate_x", "passive_rate_y", "passive_rate_z")
    trajectory_channels = (
        *IC_NAMES,
        "interface_force_x", "interface_force_y", "interface_force_z",
        "interface_moment_x", "interface_moment_y", "interface_moment_z",
        "stroke", "gimbal_pitch", "gimbal_yaw",
        "absorber_axial_force", "absorber_pitch_moment", "absorber_yaw_moment",
    )
    load_channels = ("interface_force_x", "interface_force_y", "interface_force_z",
                     "interface_moment_x", "interface_moment_y", "interface_moment_z",
                     "absorber_axial_force", "absorber_pitch_moment", "absorber_yaw_moment")
    energy_channels = ("energy_kinetic", "energy_stored", "energy_dissipated_brake",
                       "energy_dissipated_dampers", "energy_dissipated_hysteresis",
                       "energy_dissipated_contact")
    summary_quantities = (
        ("loads", "peak_axial_force", "peak axial force"),
        ("loads", "peak_lateral_force", "peak lateral force"),
        ("loads", "peak_bending_moment", "peak bending moment"),
        ("loads", "peak_torsion_moment", "peak torsion moment"),
        ("loads", "peak_absorber_axial_force", "peak axial absorber force"),
        ("energy", "dissipated_brake", "energy absorbed by the brake"),
        ("energy", "stored_final", "energy stored in the springs (end)"),
        ("energy", "dissipated_hysteresis", "energy dissipated by spring hysteresis"),
        ("energy", "kinetic_initial", "initial relative kinetic energy"),
    )
    absorber_figure = ("Absorber loads: axial force on the probe stroke, generalized moments "
                       "of the lateral absorber on the gimbal pitch and yaw",
                       ((("absorber_axial_force", "axial force"),),
                        (("absorber_pitch_moment", "pitch moment"),),
                        (("absorber_yaw_moment", "yaw moment"),)))
    absorber_loops = (
        ("absorber_axial_force", "axial absorber force", "stroke", "probe stroke"),
        ("absorber_pitch_moment", "absorber pitch moment", "gimbal_pitch", "gimbal pitch"),
        ("absorber_yaw_moment", "absorber yaw moment", "gimbal_yaw", "gimbal yaw"),
    )

    sensor_suite = SENSORS

    def scenario(self, table: Mapping[str, Any]) -> Scenario:
        return Scenario.from_dict(table)

    def batch(self, scenario: Scenario, parameters: Sequence[str], channels: Sequence[str], *,
              rate: float | None = None, duration: float | None = None,
              t_pre: float = 0.0) -> BatchModel:
        return BatchModel(scenario, parameters=tuple(parameters), channels=tuple(channels),
                          rate=rate, duration=duration, t_pre=t_pre)

    def output_rate(self, scenario: Scenario) -> float:
        return float(scenario.integration.output_rate)

    def simulate(self, scenario: Scenario, initial: Mapping[str, float] | None = None, *,
                 rate: float | None = None, duration: float | None = None,
                 t_pre: float = 0.0, trace=None):
        """As :meth:`models.unit.DockingUnit.simulate`; ``trace``
        (:class:`models.trace.TraceSettings`) records the routines of a window, returned as
        ``trace`` of the result."""
        ic = None if initial is None else InitialConditions.from_dict(dict(initial), prefix="")
        return simulate(scenario, ic, rate=rate, duration=duration, t_pre=t_pre, trace=trace)

    def passive_rate(self, scenario: Scenario) -> np.ndarray:
        return np.asarray(scenario.passive_initial_rate, float)

    def preset(self, name: str):
        from models.probe_cone import preset_path

        return preset_path(name)

    def benchmark(self, scenario: Scenario, *, repeats: int = 5, batch: int = 16) -> dict:
        from models.probe_cone.benchmark import benchmark

        return benchmark(scenario, repeats=repeats, batch=batch)

    def loads(self, histories: Mapping[str, np.ndarray]
              ) -> tuple[dict[str, np.ndarray], dict[str, str]]:
        """Peak interface loads at the passive unit and peak absorber loads over each row's
        span: ``peak_axial_force``, ``peak_lateral_force``, ``peak_force`` [N],
        ``peak_bending_moment``, ``peak_torsion_moment`` [N m], ``peak_absorber_axial_force``
        [N], ``peak_absorber_pitch_moment``, ``peak_absorber_yaw_moment`` [N m] (largest
        magnitude)."""
        ch = histories
        fx, fy, fz = (ch[f"interface_force_{a}"] for a in "xyz")
        mx, my, mz = (ch[f"interface_moment_{a}"] for a in "xyz")
        vals = {"peak_axial_force": row_peak(np.abs(fx)),
                "peak_lateral_force": row_peak(np.hypot(fy, fz)),
                "peak_force": row_peak(np.sqrt(fx ** 2 + fy ** 2 + fz ** 2)),
                "peak_bending_moment": row_peak(np.hypot(my, mz)),
                "peak_torsion_moment": row_peak(np.abs(mx)),
                "peak_absorber_axial_force": row_peak(np.abs(ch["absorber_axial_force"])),
                "peak_absorber_pitch_moment": row_peak(np.abs(ch["absorber_pitch_moment"])),
                "peak_absorber_yaw_moment": row_peak(np.abs(ch["absorber_yaw_moment"]))}
        return vals, {k: ("N" if "force" in k else "N*m") for k in vals}

    def energy(self, histories: Mapping[str, np.ndarray]
               ) -> tuple[dict[str, np.ndarray], dict[str, str]]:
        """Initial kinetic energy of the relative motion and what each absorber took by the
        end of each row's span [J]."""
        ch = histories
        vals = {"kinetic_initial": ch["energy_kinetic"][:, 0],
                "kinetic_final": row_last(ch["energy_kinetic"]),
                "stored_final": row_last(ch["energy_stored"])}
        for k in ("brake", "dampers", "hysteresis", "contact"):
            vals[f"dissipated_{k}"] = row_last(ch[f"energy_dissipated_{k}"])
        vals["dissipated_total"] = sum(vals[f"dissipated_{k}"] for k in
                                       ("brake", "dampers", "hysteresis", "contact"))
        return vals, {k: "J" for k in vals}

    def first_guess(self, problem: Any) -> np.ndarray:
        """The closing velocity from the peak probe stroke (:func:`peak_stroke_velocity`);
        the other free parameters at their start values."""
        return peak_stroke_velocity(problem)


def peak_stroke_velocity(problem: Any, *, n_cal: int = 9) -> np.ndarray:
    """First guess of the closing velocity: the record's peak probe stroke read through a
    calibration curve of ``n_cal`` forward runs over the prior's range of ``rel_vel_x``
    (:func:`models.unit.calibration_guess`). Returns the start values with ``rel_vel_x``
    replaced (unchanged when it is not free or the record has no stroke)."""
    return calibration_guess(problem, "rel_vel_x", "stroke", n_cal=n_cal)


#: the registered instance
UNIT = ProbeConeUnit()
