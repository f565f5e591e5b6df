"""The flight recorder: one simulated flight -> the telemetry a unit's recorder would have
written, and its truth file.

Every docking unit states its recorder as data (:attr:`models.unit.DockingUnit.sensor_suite`,
a :class:`models.unit.SensorSuite`: the sensor model of every recorded channel, how often
each is sampled on the recorder frame, the unit each is written in, which channels drop out
together). This module records a simulation with it, for any unit:

* :func:`record_cut`: a record cut to the model window (``duration`` seconds, telemetry
  time = simulation time + ``clock_offset``), the shape of the shipped 5-s flights;
* :func:`record_realistic`: a record as a flight recorder writes it: from ``approach``
  seconds before the start plane (the vehicles closing in free flight, from the state
  :func:`approach_start` finds) to ``after_capture`` seconds after capture, on the vehicle's
  own clock (the record starts at ``record_start``), the gyros on their own time base, and a
  dropout of the mechanism channels and one of the gyros at seeded random times after the
  start plane. Its truth is the relative state at the moment the active unit crosses the
  start plane, where a reconstruction's simulation starts, and the clock offset is that
  moment on the record's clock;
* :func:`record_study_flight`: either of them for a calibration study (:mod:`recon.calibration`),
  with a realistic record's approach and clock drawn in the ranges of :data:`STUDY_RECORDER`.

The sensor effects (white noise, quantization, clock offset) are those of a reconstruction's
observation model (:meth:`recon.observation.BoundObservation.synthesize`): a record is made
with the same model the reconstruction fits it with. Files are Parquet with the units in the
field metadata (``0/1`` for a flag), and ``<name>.truth.json`` beside them:
``{"parameters": truth (SI), "events": times [s] from the start plane, "settings": the
recorder's settings and sensor models}``.

The shipped records (``telemetry_samples/flights/``) are made by the scripts there with these
functions, and regenerate bit for bit.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from models.errors import InputError
from models.unit import DockingUnit, SensorSuite
from models.units import from_si
from recon.io import write_json, write_table
from recon.observation import ChannelModel, ObservationModel
from recon.telemetry import Telemetry, known_channels

__all__ = ["RecorderTable", "recorder_table", "record_frames", "record_samples",
           "write_record", "approach_start", "record_cut", "record_realistic",
           "record_study_flight", "study_recorder", "STUDY_RECORDER"]

#: The recorder of a calibration study's realistic flights (:func:`record_study_flight`):
#: seconds of approach before the start plane and the record's clock at its start drawn
#: uniformly in these ranges, seconds kept after capture
STUDY_RECORDER = {"approach": (3.0, 10.0), "record_start": (-100.0, 5000.0),
                  "after_capture": 20.0}

#: [s] lengths of a realistic record's dropouts: the mechanism channels, the gyros
_DROPOUT = {"mechanism": 0.4, "gyros": 0.6}


@dataclasses.dataclass(frozen=True)
class RecorderTable:
    """A unit's sensor suite as the recorder uses it.

    Attributes
    ----------
    channels
        Sensor model of every recorded channel (SI; a flag's ``sigma`` is its switch-timing
        uncertainty [s]), in the column order of the written file.
    every
        Channel -> recorder frames between two of its samples [-].
    file_units
        Channel -> unit it is written in (channels not named: SI; flags: ``0/1``).
    dropout
        Channels that drop out together (the mechanism's continuous channels).
    dt_frame
        Recorder frame [s].
    """

    channels: tuple[ChannelModel, ...]
    every: Mapping[str, int]
    file_units: Mapping[str, str]
    dropout: tuple[str, ...] = ()
    dt_frame: float = 0.005

    def __post_init__(self) -> None:
        missing = [c.name for c in self.channels if c.name not in self.every]
        if missing:
            raise ValueError(f"no sampling period for {', '.join(missing)}")

    @classmethod
    def from_suite(cls, suite: SensorSuite) -> "RecorderTable":
        """The table of a unit's :class:`models.unit.SensorSuite`."""
        return cls(tuple(ChannelModel(s.channel, s.sigma, quantum=s.quantum)
                         for s in suite.sensors),
                   {s.channel: s.every for s in suite.sensors},
                   {s.channel: s.file_unit for s in suite.sensors if s.file_unit is not None},
                   dropout=tuple(s.channel for s in suite.sensors if s.dropout),
                   dt_frame=suite.dt_frame)

    def observation(self, clock_offset: float, noise_scale: float = 1.0) -> ObservationModel:
        """The observation model of every recorded channel with ``clock_offset`` [s]; the
        white noise of the continuous channels times ``noise_scale``."""
        chans = tuple(c if c.binary or noise_scale == 1.0 else
                      dataclasses.replace(c, sigma=c.sigma * noise_scale)
                      for c in self.channels)
        return ObservationModel(chans, clock_offset=clock_offset)


def _suite(unit: DockingUnit) -> SensorSuite:
    if unit.sensor_suite is None:
        raise InputError(f"names the {unit.title}, which has no flight recorder (no sensor "
                         "suite) to record simulated flights with", key="unit")
    return unit.sensor_suite


def recorder_table(unit: DockingUnit) -> RecorderTable:
    """The recorder table of ``unit``'s sensor suite; an :class:`InputError` (key ``unit``)
    when the unit has none."""
    return RecorderTable.from_suite(_suite(unit))


def record_frames(table: RecorderTable, sim_t: np.ndarray, sim: Mapping[str, np.ndarray],
                  stamps: np.ndarray, frame: np.ndarray, clock_offset: float,
                  rng: np.random.Generator, *, dropout: np.ndarray | None = None,
                  source: str = "") -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Record one simulation on the recorder frames ``stamps`` (file units).

    Parameters
    ----------
    sim_t, sim
        Simulation time [s] and channels (SI) of one run; they must cover every stamp's
        simulation time ``stamp - clock_offset``.
    stamps
        Telemetry time [s] of each recorder frame.
    frame
        Frame number of each stamp (channel ``c`` is sampled where ``frame % every[c] == 0``).
    clock_offset
        Telemetry time minus simulation time [s].
    rng
        Source of the sensor noise.
    dropout
        True on the frames where the :attr:`RecorderTable.dropout` channels have no sample.

    Returns
    -------
    columns, units
        ``{"t": stamps kept, channel: values}`` (rows where no channel has a sample are
        dropped; NaN where a channel has none) and the unit of each column.
    """
    frame = np.asarray(frame)
    has = {}
    for c in table.channels:
        h = frame % table.every[c.name] == 0
        if dropout is not None and c.name in table.dropout:
            h &= ~dropout
        has[c.name] = h
    return record_samples(table, sim_t, sim, stamps, has, clock_offset, rng, source=source)


def _synthesize(table: RecorderTable, sim_t: np.ndarray, sim: Mapping[str, np.ndarray],
                stamps: np.ndarray, has: Mapping[str, np.ndarray], clock_offset: float,
                rng: np.random.Generator, source: str, noise_scale: float) -> Telemetry:
    """The recorded telemetry [SI] on ``stamps`` (NaN where a channel has no sample)."""
    stamps = np.asarray(stamps, float)
    template = {c.name: np.where(has[c.name], 0.0, np.nan) for c in table.channels}
    tel0 = Telemetry.from_arrays(stamps, template, source=source)
    return table.observation(clock_offset, noise_scale).bind(tel0).synthesize(sim_t, sim, rng)


def _columns(table: RecorderTable, rec: Telemetry, names: Sequence[str]
             ) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """The file columns of ``names`` of a record: the rows where any of them has a sample,
    each channel in its file unit (SI when it has none; a flag ``0/1``)."""
    keep = np.zeros(rec.t.size, bool)
    for name in names:
        keep |= np.isfinite(rec.channels[name])
    si_units = known_channels()
    binary = {c.name: c.binary for c in table.channels}
    cols: dict[str, np.ndarray] = {"t": rec.t[keep]}
    units = {"t": "s"}
    for name in names:
        v = rec.channels[name][keep]
        u = table.file_units.get(name)
        cols[name] = v if u is None else from_si(v, si_units[name], u)
        units[name] = u if u is not None else ("0/1" if binary[name] else si_units[name])
    return cols, units


def record_samples(table: RecorderTable, sim_t: np.ndarray, sim: Mapping[str, np.ndarray],
                   stamps: np.ndarray, has: Mapping[str, np.ndarray], clock_offset: float,
                   rng: np.random.Generator, *, source: str = "", noise_scale: float = 1.0
                   ) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """As :func:`record_frames` with the samples of each channel given directly: ``has``
    maps every channel of ``table`` to a boolean mask over ``stamps`` (True where the
    channel has a sample), for channels on time bases of their own; the white noise of the
    continuous channels times ``noise_scale``."""
    rec = _synthesize(table, sim_t, sim, stamps, has, clock_offset, rng, source, noise_scale)
    return _columns(table, rec, list(rec.channels))


def write_record(path: str | os.PathLike, columns: Mapping[str, np.ndarray],
                 units: Mapping[str, str], truth: Mapping[str, float],
                 events: Mapping[str, float | None], settings: Mapping[str, Any],
                 observation: Sequence[ChannelModel]) -> Path:
    """Write a record ``path`` (Parquet, units in the field metadata) and its truth
    ``<stem>.truth.json`` beside it: ``{"parameters": truth (SI), "events": times [s] on the
    simulation clock, "settings": settings + {"observation": the sensor models}}``."""
    path = Path(path)
    out = write_table(dict(columns), path, dict(units))
    write_json({"parameters": dict(truth), "events": dict(events),
                "settings": {**settings, "observation": {
                    c.name: dataclasses.asdict(c) for c in observation}}},
               path.with_name(f"{path.stem}.truth.json"))
    return out


def _events(events: Mapping[str, float | None], shift: float = 0.0) -> dict[str, float | None]:
    """Event times [s] minus ``shift``; None for an event that did not happen."""
    return {k: (None if v is None or math.isnan(v) else float(v) - shift)
            for k, v in events.items()}


def _capture_event(unit: DockingUnit) -> str:
    return dict(unit.clock_events).get(unit.capture_flag, "capture")


def _crossing(unit: DockingUnit, traj, x_plane: float) -> tuple[float, dict[str, float]]:
    """Time [s] at which ``rel_pos_x`` of ``traj`` first reaches ``x_plane`` and the
    relative state there (linear interpolation between output samples)."""
    x = traj.channels["rel_pos_x"]
    j = int(np.argmax(x >= x_plane))
    if j == 0 or x[j] < x_plane:
        raise ValueError("the approach does not reach the start plane")
    w = (x_plane - x[j - 1]) / (x[j] - x[j - 1])
    state = {n: float(traj.channels[n][j - 1] + w * (traj.channels[n][j]
                                                       - traj.channels[n][j - 1]))
             for n in unit.initial_conditions}
    return float(traj.t[j - 1] + w * (traj.t[j] - traj.t[j - 1])), state


def approach_start(unit: DockingUnit, scenario: Any, initial: Mapping[str, float],
                   approach: float, *, iterations: int = 12, tol: float = 1e-9
                   ) -> tuple[dict[str, float], float]:
    """Initial conditions ``approach`` [s] before the start plane from which the free flight
    crosses the start plane (``rel_pos_x = initial["rel_pos_x"]``) exactly in the state
    ``initial`` (every initial condition of ``unit``, SI).

    Relative motion in free flight is not uniform in the unit frames (both vehicles rotate,
    and the unit frames sit metres from their centres of mass), so a straight-line guess is
    corrected by fixed-point iteration on the crossing state, each step one simulation (the
    unit's model at 1000 Hz). Returns ``(initial conditions at the approach start, time of the
    crossing [s])``; the crossing state matches ``initial`` to ``tol`` (SI) or better. The
    passive vehicle must be at rest (its rates at the start plane would otherwise differ from
    the scenario's).
    """
    if np.any(unit.passive_rate(scenario) != 0.0):
        raise ValueError("approach_start needs a passive vehicle at rest (its rates at the "
                         "start plane would differ from the scenario's)")
    names = unit.initial_conditions
    target = np.array([initial[n] for n in names], float)
    guess = target.copy()
    at = {n: i for i, n in enumerate(names)}
    for a in "xyz":                              # positions back along the velocities
        guess[at[f"rel_pos_{a}"]] -= target[at[f"rel_vel_{a}"]] * approach
    for ang, a in zip(("rel_roll", "rel_pitch", "rel_yaw"), "xyz"):   # angles along rates
        guess[at[ang]] -= target[at[f"rel_rate_{a}"]] * approach
    t_star = approach
    i_x = at["rel_pos_x"]
    for _ in range(iterations):
        tr = unit.simulate(scenario, dict(zip(names, guess)), rate=1000.0,
                           duration=approach + 1.0)
        t_star, state = _crossing(unit, tr, float(initial["rel_pos_x"]))
        err = target - np.array([state[n] for n in names])
        err[i_x] = 0.0
        free = np.arange(len(names)) != i_x
        guess[free] += err[free]
        if np.max(np.abs(err)) < tol:
            break
    else:
        raise RuntimeError(f"approach_start did not converge (error {np.max(np.abs(err)):.3g})")
    return dict(zip(names, (float(g) for g in guess))), t_star


def record_cut(unit: DockingUnit, name: str, out_dir: str | os.PathLike, seed: int,
               initial: Mapping[str, float], clock_offset: float, duration: float, *,
               scenario: Any, label: str = "custom") -> Path:
    """Simulate ``scenario`` from ``initial`` (initial conditions by name, SI; the others the
    scenario's), record it with ``unit``'s sensor suite cut to the model window, and write
    ``out_dir/<name>.parquet`` and ``<name>.truth.json``.

    Parameters
    ----------
    seed
        Seed of the sensor noise.
    clock_offset
        telemetry time = simulation time + ``clock_offset`` [s].
    duration
        Recorded window [s] from the record's first frame, which lies at telemetry time 0 or
        at the start plane (:attr:`models.unit.SensorSuite.cut_start`); the dropout channels
        drop out for 0.4 s from 45 % of it.
    label
        The scenario's name in the truth file's settings.

    Raises :class:`models.errors.SimulationError` when the kernel stops.
    """
    suite = _suite(unit)
    table = RecorderTable.from_suite(suite)
    ic = {**unit.scenario_initial(scenario), **initial}
    if suite.cut_start == "record":
        # a positive clock offset puts the record's first samples before the start plane (the
        # model's free flight there), a negative one its last samples after the window
        traj = unit.simulate(scenario, ic, rate=1000.0,
                             duration=duration + max(0.0, -clock_offset),
                             t_pre=max(0.0, clock_offset))
        shift = 0.0
    else:
        traj = unit.simulate(scenario, ic, rate=1000.0, duration=duration)
        shift = clock_offset
    rng = np.random.default_rng(seed)
    frame_i = np.arange(int(round(duration / suite.dt_frame)))
    t = frame_i * suite.dt_frame          # frame time from the record's first frame
    drop = (t > 0.45 * duration) & (t < 0.45 * duration + 0.4)
    sim = {k: v for k, v in traj.channels.items() if k != "t"}
    cols, units = record_frames(table, traj.t, sim, t + shift, frame_i, clock_offset, rng,
                                dropout=drop, source=name)
    truth = {n: float(ic[n]) for n in unit.initial_conditions}
    truth["clock_offset"] = float(clock_offset)
    return write_record(Path(out_dir) / f"{name}.parquet", cols, units, truth,
                        _events(traj.events),
                        {"seed": seed, "duration": duration, "scenario": label},
                        table.channels)


def record_realistic(unit: DockingUnit, name: str, out_dir: str | os.PathLike, seed: int,
                     initial: Mapping[str, float], *, scenario: Any, approach: float = 8.0,
                     after_capture: float = 22.0, record_start: float = 0.0,
                     split: bool = False, horizon: float = 15.0,
                     dropouts: Mapping[str, tuple[float, float]] | None = None,
                     noise_scale: float = 1.0, label: str = "custom",
                     unit_truth: Mapping[str, float] | None = None) -> list[Path]:
    """Record a flight the way a flight recorder does (module docstring) and write it with
    its truth.

    Parameters
    ----------
    initial
        Initial conditions at the start plane (by name, SI; the others the scenario's).
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
        a record noisier or quieter than a run configuration states.
    label
        The scenario's name in the truth file's settings.
    unit_truth
        Numbers of the unit that ``scenario`` holds and a reconstruction may fit, by their
        parameter names (``probe.axial_absorber.slip_force``, SI): written to the truth's
        parameters beside the initial conditions (a unit that is not the preset).

    Returns the telemetry file(s); ``<name>.truth.json`` is written beside them. Raises
    ValueError when there is no capture within ``horizon`` of the start plane.
    """
    suite = _suite(unit)
    table = RecorderTable.from_suite(suite)
    ic = {**unit.scenario_initial(scenario), **initial}
    ic_pre, t_star = approach_start(unit, scenario, ic, approach)
    scn = unit.with_thrust_delay(scenario, t_star)   # the thrust counts from the start plane
    traj = unit.simulate(scn, ic_pre, rate=1000.0, duration=t_star + horizon + after_capture)
    t_cap = traj.events.get(_capture_event(unit))
    if t_cap is None or not t_cap <= t_star + horizon:
        raise ValueError(f"flight {name}: no capture within {horizon:g} s of the start plane")
    t_end = t_cap + after_capture
    rng = np.random.default_rng(seed)
    frame_i = np.arange(int(np.floor(t_end / suite.dt_frame)) + 1)
    t_frame = frame_i * suite.dt_frame
    t_gyro = np.arange(suite.gyro_phase, t_end, suite.gyro_period)
    # dropouts at random times after the start plane
    len_m, len_g = _DROPOUT["mechanism"], _DROPOUT["gyros"]
    drop_m, drop_g = rng.uniform(t_star, t_end - len_m), rng.uniform(t_star, t_end - len_g)
    if dropouts is not None:
        (drop_m, len_m), (drop_g, len_g) = dropouts["mechanism"], dropouts["gyros"]
        drop_m, drop_g = drop_m + t_star, drop_g + t_star
    t_all = np.union1d(t_frame, t_gyro)
    gyros = {c.channel for c in suite.sensors if unit.channels[c.channel].kind == "rate"}
    on_gyro = np.isin(t_all, t_gyro) & ~((t_all > drop_g) & (t_all < drop_g + len_g))
    has = {}
    for c in table.channels:
        if c.name in gyros:
            has[c.name] = on_gyro
            continue
        h = np.isin(t_all, t_frame[frame_i % table.every[c.name] == 0])
        if c.name in table.dropout:
            h &= ~((t_all > drop_m) & (t_all < drop_m + len_m))
        has[c.name] = h
    sim = {k: v for k, v in traj.channels.items() if k != "t"}
    rec = _synthesize(table, traj.t, sim, t_all + record_start, has, record_start, rng, name,
                      noise_scale)
    groups = ({"mechanism": [c for c in rec.channels if c not in gyros],
               "gyros": [c for c in rec.channels if c in gyros]} if split
              else {None: list(rec.channels)})
    out_dir = Path(out_dir)
    paths = []
    for group, chans in groups.items():
        cols, units = _columns(table, rec, chans)
        stem = name if group is None else f"{name}.{group}"
        paths.append(write_table(cols, out_dir / f"{stem}.parquet", units))
    truth = {n: float(ic[n]) for n in unit.initial_conditions}
    truth["clock_offset"] = record_start + t_star
    truth.update({k: float(v) for k, v in (unit_truth or {}).items()})
    write_json({"parameters": truth, "events": _events(traj.events, t_star),
                "settings": {"seed": seed, "approach": approach, "after_capture": after_capture,
                             "noise_scale": noise_scale,
                             "record_start": record_start, "start_plane_crossing": t_star,
                             "record_end": record_start + t_end, "split": split,
                             "dropouts": {"mechanism": [record_start + drop_m, len_m],
                                          "gyros": [record_start + drop_g, len_g]},
                             "scenario": label,
                             "observation": {c.name: dataclasses.asdict(c) for c in
                                             table.observation(record_start,
                                                               noise_scale).channels}}},
               out_dir / f"{name}.truth.json")
    return paths


def record_study_flight(unit: DockingUnit, name: str, out_dir: str | os.PathLike,
                        initial: Mapping[str, float], *, scenario: Any, seed: int,
                        rng: np.random.Generator, records: str = "realistic",
                        clock_offset: float = 0.0, duration: float = 5.0,
                        horizon: float = 15.0) -> tuple[list[Path], dict[str, float]]:
    """A calibration study's flight (:mod:`recon.calibration`) recorded with ``unit``'s
    sensor suite.

    ``records = "realistic"``: :func:`record_realistic` with an approach and a record start
    drawn from ``rng`` in the ranges of :data:`STUDY_RECORDER`; ``"cut"``: :func:`record_cut`
    of ``duration`` [s] with ``clock_offset`` [s]. ``seed`` seeds the sensor noise and the
    dropout times. Returns the telemetry file(s) and the truth (the initial conditions at the
    start plane and the clock offset, SI)."""
    import json

    out_dir = Path(out_dir)
    if records == "realistic":
        approach = float(rng.uniform(*STUDY_RECORDER["approach"]))
        start = float(rng.uniform(*STUDY_RECORDER["record_start"]))
        paths = record_realistic(unit, name, out_dir, seed, initial, approach=approach,
                                 after_capture=STUDY_RECORDER["after_capture"],
                                 record_start=start, scenario=scenario, horizon=horizon)
    elif records == "cut":
        paths = [record_cut(unit, name, out_dir, seed, initial, clock_offset, duration,
                            scenario=scenario)]
    else:
        raise InputError(f"must be 'realistic' or 'cut', got {records!r}", key="records")
    truth = json.loads((out_dir / f"{name}.truth.json").read_text())["parameters"]
    return paths, {k: float(v) for k, v in truth.items()}


def study_recorder(unit: DockingUnit) -> Callable[..., tuple[list[Path], dict[str, float]]]:
    """:func:`record_study_flight` for ``unit``; an :class:`InputError` (key ``unit``) when
    the unit has no sensor suite."""
    _suite(unit)
    return functools.partial(record_study_flight, unit)
