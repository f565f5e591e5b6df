"""Central (probe-cone) docking unit: configuration, packed kernel arrays and simulation.

>>> from models.probe_cone import load_preset, simulate   # doctest: +SKIP
>>> traj = simulate(load_preset("reference"))              # doctest: +SKIP
"""
from __future__ import annotations

from pathlib import Path

from models.unit import IC_NAMES, InitialConditions
from models.probe_cone.config import Scenario
from models.probe_cone.simulate import (CHANNEL_UNITS, CHANNELS, EVENT_NAMES, PARAMETERS,
                                        TELEMETRY_CHANNELS, BatchModel, Packed,
                                        SimulationError, Trajectory, pack, simulate)

__all__ = [
    "IC_NAMES", "InitialConditions", "Scenario", "CHANNELS", "CHANNEL_UNITS", "EVENT_NAMES",
    "PARAMETERS", "TELEMETRY_CHANNELS", "BatchModel", "Packed", "SimulationError",
    "Trajectory", "pack", "simulate", "preset_path", "load_preset",
]


def preset_path(name: str) -> Path:
    """Path of a shipped preset TOML (``presets/<name>.toml``, package data beside this
    module)."""
    return Path(__file__).resolve().parent / "presets" / f"{name}.toml"


def load_preset(name: str = "reference") -> Scenario:
    """The shipped scenario ``name`` (reads package data with tomllib; no user file)."""
    import tomllib

    with preset_path(name).open("rb") as fh:
        return Scenario.from_dict(tomllib.load(fh))
