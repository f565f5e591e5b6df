"""Flights of one as-built probe-cone unit whose mechanism differs from the preset, with their
truth (``python -m telemetry_samples.fleet.generate``).

A real unit is never the preset. This one's brake slips 20 % higher, its lateral absorbers'
first spring stage is 15 % stiffer and its contact friction is 0.21 instead of 0.15
(:data:`AS_BUILT`: the numbers by their scenario paths, the names a run configuration frees).
Five dockings of it (:data:`FLIGHTS`: closing velocities 0.12-0.30 m/s, several lateral and
angular misalignments) are recorded as a flight recorder records them
(:func:`recon.recording.record_realistic`): from seconds of free approach to 20 s after
capture, on the vehicle's own clock, the gyros in a file of their own on their own time base
(``<name>.mechanism.parquet``, ``<name>.gyros.parquet``), dropouts at seeded random times.
``<name>.truth.json`` holds the initial conditions at the start plane, the clock offset and
the as-built numbers.

``run.toml`` reconstructs a flight with the preset scenario and the three numbers freed,
broad priors around the preset; ``fixed.toml`` with the mechanism fixed at the preset (the
fit is then implausible, and the result names what to free). The records regenerate bit for
bit.
"""
from __future__ import annotations

import os
from pathlib import Path

from models.probe_cone import Scenario, preset_path
from models.probe_cone.unit import UNIT
from recon.calibration import scenario_for_draws, scenario_paths
from recon.config import scenario_document
from recon.recording import record_realistic

__all__ = ["AS_BUILT", "FLIGHTS", "as_built_scenario", "generate"]

#: the as-built unit: scenario path -> value (SI); the preset has 1500 N, 2000 N m/rad, 0.15
AS_BUILT: dict[str, float] = {
    "probe.axial_absorber.slip_force": 1800.0,
    "probe.lateral_absorber.stage1_rate": 2300.0,
    "contact.friction": 0.21,
}

#: each flight's initial conditions at the start plane (the others the preset's) and its
#: recording: seconds of approach, seconds kept after capture, the record's clock at its start
FLIGHTS: dict[str, dict] = {
    "flight_1": {"initial": {"rel_vel_x": 0.20, "rel_pos_y": 0.05, "rel_pos_z": -0.03,
                             "rel_vel_y": -0.010, "rel_vel_z": 0.006, "rel_pitch": 0.02,
                             "rel_yaw": -0.01, "rel_rate_y": -0.002},
                 "approach": 7.0, "after_capture": 20.0, "record_start": 503.2},
    "flight_2": {"initial": {"rel_vel_x": 0.28, "rel_pos_y": -0.12, "rel_pos_z": 0.08,
                             "rel_vel_y": 0.020, "rel_vel_z": -0.015, "rel_roll": 0.02,
                             "rel_pitch": -0.05, "rel_yaw": 0.04, "rel_rate_z": 0.004},
                 "approach": 6.0, "after_capture": 20.0, "record_start": 1210.7},
    "flight_3": {"initial": {"rel_vel_x": 0.14, "rel_pos_y": 0.02, "rel_pos_z": 0.06,
                             "rel_vel_y": 0.004, "rel_vel_z": -0.008, "rel_roll": -0.01,
                             "rel_pitch": 0.03, "rel_yaw": 0.02, "rel_rate_x": 0.002},
                 "approach": 9.0, "after_capture": 20.0, "record_start": 77.9},
    "flight_4": {"initial": {"rel_vel_x": 0.24, "rel_pos_y": 0.18, "rel_pos_z": 0.10,
                             "rel_vel_y": -0.030, "rel_vel_z": -0.010, "rel_roll": 0.03,
                             "rel_pitch": 0.07, "rel_yaw": -0.06, "rel_rate_y": 0.006},
                 "approach": 6.5, "after_capture": 20.0, "record_start": 2894.0},
    "flight_5": {"initial": {"rel_vel_x": 0.17, "rel_pos_y": -0.06, "rel_pos_z": -0.07,
                             "rel_vel_y": 0.008, "rel_vel_z": 0.012, "rel_roll": -0.02,
                             "rel_pitch": -0.02, "rel_yaw": -0.03, "rel_rate_z": -0.003},
                 "approach": 8.0, "after_capture": 20.0, "record_start": 640.4},
}


def as_built_scenario() -> Scenario:
    """The preset's scenario with the numbers of :data:`AS_BUILT` at their paths (as a
    calibration study sets its drawn numbers: :func:`recon.calibration.scenario_for_draws`)."""
    doc = scenario_document(preset_path("reference"))
    paths = scenario_paths(doc, list(AS_BUILT))
    return scenario_for_draws(UNIT, doc, paths)(AS_BUILT)


def generate(out_dir: str | os.PathLike, seed: int = 4242) -> list[Path]:
    """Every flight of :data:`FLIGHTS` (flight ``k`` seeded with ``seed + k``)."""
    scn = as_built_scenario()
    out = []
    for k, (name, spec) in enumerate(FLIGHTS.items()):
        out += record_realistic(UNIT, name, out_dir, seed + k, spec["initial"], scenario=scn,
                                approach=spec["approach"], after_capture=spec["after_capture"],
                                record_start=spec["record_start"], split=True,
                                label="as-built (telemetry_samples.fleet.generate.AS_BUILT)",
                                unit_truth=AS_BUILT)
    return out


if __name__ == "__main__":  # pragma: no cover
    for p in generate(Path(__file__).resolve().parent):
        print(p)
