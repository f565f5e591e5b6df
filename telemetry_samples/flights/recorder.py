"""The flight recorder every unit's synthetic flights share: one simulated trajectory ->
the telemetry a recorder with a given sensor suite would have written, and its truth file.

A unit states its sensor suite as a :class:`RecorderTable` (sensor models of every recorded
channel, how often each is sampled on the recorder frame, the unit each is written in, which
channels share a dropout); :func:`record_frames` turns a simulation into telemetry columns
with :meth:`recon.observation.BoundObservation.synthesize` (noise, quantization, clock
offset), and :func:`write_record` writes them as Parquet with the units in the field metadata
(``0/1`` for a flag) and the truth JSON beside it.

Used by :mod:`telemetry_samples.flights.generate` (probe-cone) and
:mod:`telemetry_samples.flights.peripheral.generate` (peripheral).
"""
from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from models.units import from_si
from recon.io import write_json, write_table
from recon.observation import ChannelModel, ObservationModel
from recon.telemetry import Telemetry, known_channels

__all__ = ["RecorderTable", "record_frames", "record_samples", "write_record"]


@dataclasses.dataclass(frozen=True)
class RecorderTable:
    """The sensor suite of a unit's flight recorder.

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

    def observation(self, clock_offset: float, noise_scale: float = 1.0) -> ObservationModel:
        """The observation model of every recorded channel with ``clock_offset`` [s]; the
        white noise of the continuous channels times ``noise_scale``."""
        chans = tuple(c if c.binary or noise_scale == 1.0 else
                      dataclasses.replace(c, sigma=c.sigma * noise_scale)
                      for c in self.channels)
        return ObservationModel(chans, clock_offset=clock_offset)


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


def record_samples(table: RecorderTable, sim_t: np.ndarray, sim: Mapping[str, np.ndarray],
                   stamps: np.ndarray, has: Mapping[str, np.ndarray], clock_offset: float,
                   rng: np.random.Generator, *, source: str = ""
                   ) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """As :func:`record_frames` with the samples of each channel given directly: ``has``
    maps every channel of ``table`` to a boolean mask over ``stamps`` (True where the
    channel has a sample), for channels on time bases of their own."""
    stamps = np.asarray(stamps, float)
    template = {c.name: np.where(has[c.name], 0.0, np.nan) for c in table.channels}
    tel0 = Telemetry.from_arrays(stamps, template, source=source)
    rec = table.observation(clock_offset).bind(tel0).synthesize(sim_t, sim, rng)
    keep = np.zeros(stamps.size, bool)
    for v in rec.channels.values():
        keep |= np.isfinite(v)
    si_units = known_channels()
    cols: dict[str, np.ndarray] = {"t": stamps[keep]}
    units = {"t": "s"}
    for name, v in rec.channels.items():
        u = table.file_units.get(name)
        cols[name] = v[keep] if u is None else from_si(v[keep], si_units[name], u)
        units[name] = u if u is not None else "0/1"
    return cols, units


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
