"""Synthetic probe-cone flights with known truth (``dockrecon samples generate flights``).

Each flight is the reference scenario (``models/probe_cone/presets/reference.toml``) simulated
from stated initial conditions, then recorded the way flight telemetry is:

* a 200 Hz recorder frame; stroke and gimbal angles at 25 Hz, contact / capture / latch flags
  at 50 Hz, the six body rates at 10 Hz (NaN where a channel has no sample);
* white noise and quantization (stroke 0.2 mm noise, 0.5 mm steps; gimbal angles 1 mrad,
  1 mrad steps; gyros 2e-4 rad/s, 1e-4 rad/s steps);
* a 0.4 s dropout of the stroke and gimbal channels;
* a clock offset: telemetry time = simulation time + ``clock_offset``;
* file units mm, deg, deg/s (converted back to SI on read).

Flights:

``nominal``
    capture at a mid-envelope closing velocity.
``misaligned``
    large lateral (0.25 m) and angular (5-6 deg) misalignment.
``slow``
    slow approach (0.08 m/s): the head rebounds in the cone many times, late capture.

Beside each ``<name>.parquet``: ``<name>.truth.json`` (``{"parameters": {NAME: value}}``, the
names of result.json, SI). ``run.toml`` is the run configuration used to reconstruct them.
"""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import numpy as np

from recon.io import write_json, write_table
from recon.observation import ChannelModel, ObservationModel
from recon.telemetry import Telemetry

__all__ = ["FLIGHTS", "OBSERVATION", "generate_flight", "record_flight", "generate"]

#: Truth of each flight: initial conditions (SI) that differ from the reference, the clock
#: offset [s] and the simulated duration [s].
FLIGHTS: dict[str, dict] = {
    "nominal": {"initial": {"rel_vel_x": 0.22, "rel_vel_y": -0.012, "rel_vel_z": 0.008,
                            "rel_pos_y": 0.06, "rel_pos_z": -0.04, "rel_roll": 0.01,
                            "rel_pitch": 0.02, "rel_yaw": -0.015, "rel_rate_x": 0.002,
                            "rel_rate_y": -0.003, "rel_rate_z": 0.004},
                "clock_offset": 0.25, "duration": 5.0},
    "misaligned": {"initial": {"rel_vel_x": 0.28, "rel_vel_y": -0.04, "rel_vel_z": 0.02,
                               "rel_pos_y": 0.22, "rel_pos_z": 0.12, "rel_roll": 0.03,
                               "rel_pitch": 0.09, "rel_yaw": -0.08, "rel_rate_x": -0.004,
                               "rel_rate_y": 0.01, "rel_rate_z": -0.006},
                   "clock_offset": -0.15, "duration": 5.0},
    "slow": {"initial": {"rel_vel_x": 0.08, "rel_vel_y": 0.005, "rel_vel_z": -0.004,
                         "rel_pos_y": 0.03, "rel_pos_z": 0.02, "rel_roll": -0.01,
                         "rel_pitch": 0.01, "rel_yaw": 0.012, "rel_rate_x": 0.001,
                         "rel_rate_y": 0.002, "rel_rate_z": -0.001},
             "clock_offset": 0.4, "duration": 9.0},
}

_RATES = tuple(f"{b}_rate_{a}" for b in ("active", "passive") for a in "xyz")

#: Sensor model of the recorder (SI). Flags: timing uncertainty of a switch [s].
OBSERVATION = ObservationModel(
    (ChannelModel("stroke", 2e-4, quantum=5e-4),
     ChannelModel("gimbal_pitch", 1e-3, quantum=1e-3),
     ChannelModel("gimbal_yaw", 1e-3, quantum=1e-3),
     ChannelModel("capture", 2e-3),
     *(ChannelModel(r, 2e-4, quantum=1e-4) for r in _RATES)))

_EVERY = {"stroke": 8, "gimbal_pitch": 8, "gimbal_yaw": 8, "capture": 4, "contact": 4,
          "bottom_contact": 4, **{f"latch_{i}": 4 for i in range(1, 5)},
          **{r: 20 for r in _RATES}}
_FILE_UNITS = {"t": "s", "stroke": "mm", "gimbal_pitch": "deg", "gimbal_yaw": "deg",
               **{r: "deg/s" for r in _RATES}}
_DT_FRAME = 0.005  # recorder frame [s]


def generate_flight(name: str, out_dir: str | os.PathLike, seed: int) -> Path:
    """Simulate flight ``name`` of :data:`FLIGHTS`, record it, write it with its truth."""
    spec = FLIGHTS[name]
    return record_flight(name, out_dir, seed, spec["initial"], spec["clock_offset"],
                         spec["duration"])


def record_flight(name: str, out_dir: str | os.PathLike, seed: int, initial: dict,
                  clock_offset: float, duration: float, *, scenario=None) -> Path:
    """Simulate the scenario (default: the reference preset) from ``initial`` (IC names, SI;
    the others from the scenario), record it with the sensor effects of this module and write
    ``out_dir/<name>.parquet`` and ``<name>.truth.json``.

    Parameters
    ----------
    clock_offset
        telemetry time = simulation time + ``clock_offset`` [s].
    duration
        Simulated and recorded window [s]; the stroke and gimbal channels drop out for 0.4 s
        from 45 % of it.
    """
    from models.probe_cone import IC_NAMES, load_preset, simulate

    scn = load_preset("reference") if scenario is None else scenario
    ic = dataclasses.replace(scn.initial, **initial)
    traj = simulate(scn, ic, duration=duration, rate=1000.0)
    rng = np.random.default_rng(seed)
    offset = clock_offset
    n = int(round(duration / _DT_FRAME))
    frame_i = np.arange(n)
    t = frame_i * _DT_FRAME
    drop = (t > 0.45 * duration) & (t < 0.45 * duration + 0.4)
    template = {}
    for ch, every in _EVERY.items():
        has = frame_i % every == 0
        if ch in ("stroke", "gimbal_pitch", "gimbal_yaw"):
            has &= ~drop
        template[ch] = np.where(has, 0.0, np.nan)
    tel0 = Telemetry.from_arrays(t, template, source=name)
    model = ObservationModel(
        (*OBSERVATION.channels,
         *(ChannelModel(c, 2e-3) for c in ("contact", "bottom_contact", "latch_1", "latch_2",
                                            "latch_3", "latch_4"))), clock_offset=offset)
    rec = model.bind(tel0).synthesize(traj.t, traj.channels, rng)
    keep = np.zeros(n, bool)
    for v in rec.channels.values():
        keep |= np.isfinite(v)
    cols = {"t": t[keep], **{k: v[keep] for k, v in rec.channels.items()}}
    from recon.io import from_si

    units = {}
    for k, v in list(cols.items()):
        u = _FILE_UNITS.get(k)
        if u is not None and u != "s":
            si = "m" if k == "stroke" else ("rad/s" if "_rate_" in k else "rad")
            cols[k] = from_si(v, si, u)
        units[k] = u if u is not None else "0/1"
    out_dir = Path(out_dir)
    path = write_table(cols, out_dir / f"{name}.parquet", units)
    truth = {n_: float(getattr(ic, n_)) for n_ in IC_NAMES}
    truth["clock_offset"] = offset
    write_json({"parameters": truth, "events": traj.events,
                "settings": {"seed": seed, "duration": duration,
                             "scenario": "reference" if scenario is None else "custom", "observation": {
                                 c.name: dataclasses.asdict(c) for c in model.channels}}},
               out_dir / f"{name}.truth.json")
    return path


def generate(out_dir: str | os.PathLike, seed: int = 2026) -> list[Path]:
    """All flights of :data:`FLIGHTS` (flight ``k`` seeded with ``seed + k``)."""
    return [generate_flight(name, out_dir, seed + k) for k, name in enumerate(FLIGHTS)]


if __name__ == "__main__":  # pragma: no cover
    for p in generate(Path(__file__).resolve().parent):
        print(p)
