"""Synthetic peripheral (androgynous ring) flights with known truth
(``dockrecon samples generate flights --unit peripheral``).

Each flight is the peripheral reference scenario (``models/peripheral/presets/reference.toml``)
simulated from stated initial conditions and recorded by the shared flight recorder
(:mod:`telemetry_samples.flights.recorder`) with the sensor suite :data:`RECORDER`. The suite
is illustrative, a plausible one for a six-leg ring mechanism, not a flight unit's:

* a 200 Hz recorder frame (NaN where a channel has no sample);
* leg lengths ``leg_1..6`` from LVDTs at 50 Hz: 0.1 mm white noise, 0.05 mm steps (a 12-bit
  converter over a 0.2 m stroke);
* the ring pose ``ring_x/y/z``, ``ring_roll/pitch/yaw`` (the unit electronics' solution of the
  leg kinematics, recorded as channels of their own) at 25 Hz: 0.2 mm noise, 0.1 mm steps;
  1 mrad noise, 0.5 mrad steps;
* the flags ``contact``, ``capture_sensor_1..3``, ``capture``, ``latch_1..6`` at 50 Hz, a
  switch timed to 2 ms;
* the six body rates as the probe-cone recorder's gyros: 10 Hz, 2e-4 rad/s noise,
  1e-4 rad/s steps;
* a 0.4 s dropout of the leg and ring-pose channels at 45 % of the record;
* a clock offset: telemetry time = simulation time + ``clock_offset``;
* file units mm, deg, deg/s (converted back to SI on read).

The records are cut to the model window: they start at the start plane (simulation time 0,
telemetry time ``clock_offset``) and end ``duration`` seconds later, a few seconds after
capture. (The probe-cone's cut records start at telemetry time 0 and so, for a positive clock
offset, before the start plane; the peripheral kernel starts at the start plane, so these
records start there.)

Flights (:data:`FLIGHTS`):

``nominal``
    the reference preset's docking (closing 0.1 m/s, 50 mm lateral offset, 0.6 deg angles).
``misaligned``
    large lateral (78 mm, drifting outwards at 17 mm/s) and angular (2.3-2.9 deg)
    misalignment with angular rates; captured at 2.0 s. (From about 0.1 m lateral offset on,
    the petals of the two rings already overlap at the start plane, ``rel_pos_x = -0.70``.)
``low_energy``
    a slow approach, 0.038 m/s, 3 % above the capture threshold :data:`CAPTURE_THRESHOLD`
    (0.0367-0.0369 m/s): below it the last latch pair does not trigger and the rings are not
    captured; below :data:`LATCH_THRESHOLD` (0.0298-0.0300 m/s) no latch triggers at all.

Beside each ``<name>.parquet``: ``<name>.truth.json`` (``{"parameters": {NAME: value}}``, the
names of result.json, SI; the events on the simulation clock). ``run.toml`` is the run
configuration used to reconstruct them.
"""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import numpy as np

from models.errors import InputError
from recon.observation import ChannelModel, ObservationModel
from telemetry_samples.flights.recorder import RecorderTable, record_frames, write_record

__all__ = ["FLIGHTS", "RECORDER", "OBSERVATION", "CAPTURE_THRESHOLD", "LATCH_THRESHOLD",
           "record_flight", "generate_flight", "generate", "record_study_flight"]

#: Closing speeds [m/s] bracketing the capture threshold of the reference scenario (its other
#: initial conditions unchanged, 20 s simulated): at the lower one latches 1-4 trigger, the
#: last pair does not and the rings part; at the upper one all six trigger and the rings are
#: captured (bisection, ``tests/telemetry/test_peripheral_flights.py`` re-checks both ends).
CAPTURE_THRESHOLD = (0.03671875, 0.036875)
#: The same for the first latch to trigger [m/s]: at the lower speed no latch triggers in
#: 20 s (the rings touch and part again), at the upper one latches 1 and 2 trigger and the
#: rings part again without capture.
LATCH_THRESHOLD = (0.029765625, 0.03)

#: Truth of each flight: initial conditions (SI) that differ from the reference, the clock
#: offset [s] and the recorded duration [s] from the start plane.
FLIGHTS: dict[str, dict] = {
    "nominal": {"initial": {}, "clock_offset": 0.25, "duration": 4.0},
    "misaligned": {"initial": {"rel_pos_y": 0.07, "rel_pos_z": -0.035, "rel_vel_x": 0.12,
                               "rel_vel_y": 0.015, "rel_vel_z": -0.008, "rel_roll": 0.04,
                               "rel_pitch": 0.05, "rel_yaw": -0.05, "rel_rate_x": 0.002,
                               "rel_rate_y": -0.003, "rel_rate_z": 0.002},
                   "clock_offset": -0.15, "duration": 4.0},
    "low_energy": {"initial": {"rel_vel_x": 0.038}, "clock_offset": 0.4, "duration": 7.0},
}

_POSE = ("ring_x", "ring_y", "ring_z", "ring_roll", "ring_pitch", "ring_yaw")
_LEGS = tuple(f"leg_{i}" for i in range(1, 7))
_RATES = tuple(f"{b}_rate_{a}" for b in ("active", "passive") for a in "xyz")
_FLAGS = ("contact", "capture_sensor_1", "capture_sensor_2", "capture_sensor_3", "capture",
          *(f"latch_{i}" for i in range(1, 7)))
_DT_FRAME = 0.005  # recorder frame [s]

#: The recorder's sensor suite (module docstring), SI
RECORDER = RecorderTable(
    (*(ChannelModel(c, 2e-4, quantum=1e-4) for c in _POSE[:3]),
     *(ChannelModel(c, 1e-3, quantum=5e-4) for c in _POSE[3:]),
     *(ChannelModel(c, 1e-4, quantum=5e-5) for c in _LEGS),
     *(ChannelModel(c, 2e-3) for c in _FLAGS),
     *(ChannelModel(r, 2e-4, quantum=1e-4) for r in _RATES)),
    {**{c: 8 for c in _POSE}, **{c: 4 for c in _LEGS}, **{c: 4 for c in _FLAGS},
     **{r: 20 for r in _RATES}},
    {**{c: "mm" for c in (*_POSE[:3], *_LEGS)}, **{c: "deg" for c in _POSE[3:]},
     **{r: "deg/s" for r in _RATES}},
    dropout=(*_POSE, *_LEGS), dt_frame=_DT_FRAME)

#: The sensor models a reconstruction fits (``run.toml``): the ring pose, the capture and
#: latch flags and the gyros. The legs are recorded but not fitted: the ring pose is a
#: function of them, and fitting both would count the ring's motion twice.
OBSERVATION = ObservationModel(tuple(
    c for c in RECORDER.channels
    if c.name in (*_POSE, "capture", *(f"latch_{i}" for i in range(1, 7)), *_RATES)))


def record_flight(name: str, out_dir: str | os.PathLike, seed: int, initial: dict,
                  clock_offset: float, duration: float, *, scenario=None) -> Path:
    """Simulate the scenario (default: the peripheral reference preset) from ``initial`` (IC
    names, SI; the others from the scenario), record it with :data:`RECORDER` and write
    ``out_dir/<name>.parquet`` and ``<name>.truth.json``.

    Parameters
    ----------
    seed
        Seed of the sensor noise.
    clock_offset
        telemetry time = simulation time + ``clock_offset`` [s]; the record's first frame is
        stamped ``clock_offset`` (the start plane).
    duration
        Recorded (and simulated) window [s] from the start plane; the leg and ring-pose
        channels drop out for 0.4 s from 45 % of it.

    Raises :class:`models.errors.SimulationError` when the kernel stops.
    """
    from models._kernels.peripheral_run_layout import IC_NAMES
    from models.peripheral import simulate as ps

    scn = ps.load_scenario("reference") if scenario is None else scenario
    ic = dataclasses.replace(scn.initial, **initial)
    traj = ps.simulate(scn, ic, 1000.0, duration)
    sim = {k: v for k, v in traj.channels.items() if k != "t"}
    rng = np.random.default_rng(seed)
    n = int(round(duration / _DT_FRAME))
    frame_i = np.arange(n)
    s = frame_i * _DT_FRAME                      # simulation time of each frame
    drop = (s > 0.45 * duration) & (s < 0.45 * duration + 0.4)
    cols, units = record_frames(RECORDER, traj.t, sim, s + clock_offset, frame_i, clock_offset,
                                rng, dropout=drop, source=name)
    truth = {n_: float(getattr(ic, n_)) for n_ in IC_NAMES}
    truth["clock_offset"] = float(clock_offset)
    events = {k: (None if np.isnan(v) else float(v)) for k, v in traj.events.items()}
    return write_record(Path(out_dir) / f"{name}.parquet", cols, units, truth, events,
                        {"seed": seed, "duration": duration,
                         "scenario": "reference" if scenario is None else "custom"},
                        RECORDER.channels)


def generate_flight(name: str, out_dir: str | os.PathLike, seed: int) -> Path:
    """Simulate flight ``name`` of :data:`FLIGHTS`, record it, write it with its truth."""
    spec = FLIGHTS[name]
    return record_flight(name, out_dir, seed, spec["initial"], spec["clock_offset"],
                         spec["duration"])


def generate(out_dir: str | os.PathLike, seed: int = 2026) -> list[Path]:
    """All flights of :data:`FLIGHTS` (flight ``k`` seeded with ``seed + k``)."""
    return [generate_flight(name, out_dir, seed + k) for k, name in enumerate(FLIGHTS)]


def record_study_flight(name: str, out_dir: str | os.PathLike, initial: dict, *, scenario,
                        seed: int, rng: np.random.Generator, records: str = "cut",
                        clock_offset: float = 0.0, duration: float = 5.0,
                        horizon: float = 15.0) -> tuple[list[Path], dict[str, float]]:
    """The peripheral unit's flight recorder for simulation studies
    (:attr:`models.unit.DockingUnit.recorder`, :mod:`recon.study`).

    ``records = "cut"``: :func:`record_flight` of ``duration`` [s] with ``clock_offset`` [s],
    the sensor noise seeded with ``seed``. ``"realistic"`` (the approach before the start
    plane, a recorder clock of its own) is refused with an :class:`InputError`: this recorder
    records the model window only. ``rng`` and ``horizon`` belong to the realistic records and
    are not used. Returns the telemetry file and the truth (the initial conditions at the
    start plane and the clock offset, SI)."""
    if records == "realistic":
        raise InputError("the peripheral flight recorder records the model window only "
                         "(records = 'cut'); realistic records with the approach before "
                         "the start plane are not available for this unit", key="records")
    if records != "cut":
        raise InputError(f"must be 'realistic' or 'cut', got {records!r}", key="records")
    import json

    out_dir = Path(out_dir)
    path = record_flight(name, out_dir, seed, initial, clock_offset, duration,
                         scenario=scenario)
    truth = json.loads((out_dir / f"{name}.truth.json").read_text())["parameters"]
    return [path], {k: float(v) for k, v in truth.items()}


if __name__ == "__main__":  # pragma: no cover
    for p in generate(Path(__file__).resolve().parent):
        print(p)
