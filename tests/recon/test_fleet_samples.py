"""The as-built unit's flights (telemetry_samples/fleet): they regenerate bit for bit, their
truth holds the as-built numbers, and the records are that unit's and not the preset's: the
stroke read against a noiseless simulation of the as-built scenario at the truth (1 kHz,
numpy interpolation, not the observation model that made the records) is within its sensor
noise and quantization, against the preset's it is many times off."""
from __future__ import annotations

import json

import numpy as np
import pytest

from models.probe_cone import load_preset, simulate
from recon.telemetry import load_telemetry
from telemetry_samples import SAMPLES_DIR
from telemetry_samples.fleet import generate as fleet

SHIPPED = SAMPLES_DIR / "fleet"


def test_regenerated_bit_identical_to_the_shipped_files(tmp_path):
    fleet.generate(tmp_path)
    names = sorted(p.name for p in SHIPPED.glob("*.parquet")) + \
        sorted(p.name for p in SHIPPED.glob("*.truth.json"))
    assert len(names) == 3 * len(fleet.FLIGHTS)
    for n in names:
        assert (tmp_path / n).read_bytes() == (SHIPPED / n).read_bytes(), n


@pytest.mark.parametrize("name", ["flight_1", "flight_4"])
def test_the_records_are_the_as_built_units(name):
    truth = json.loads((SHIPPED / f"{name}.truth.json").read_text())
    p = truth["parameters"]
    for path, value in fleet.AS_BUILT.items():
        assert p[path] == value
    stroke = truth["settings"]["observation"]["stroke"]
    # white noise and uniform quantization error, rms
    allowed = np.hypot(stroke["sigma"], stroke["quantum"] / np.sqrt(12.0))
    rec = load_telemetry([SHIPPED / f"{name}.mechanism.parquet"])
    t_rec, y = rec.samples("stroke")
    t_sim = t_rec - p["clock_offset"]          # the simulation clock: 0 at the start plane
    keep = (t_sim > 0.0) & (t_sim < 8.0)
    ic = {n: p[n] for n in ("rel_pos_x", "rel_pos_y", "rel_pos_z", "rel_vel_x", "rel_vel_y",
                            "rel_vel_z", "rel_roll", "rel_pitch", "rel_yaw", "rel_rate_x",
                            "rel_rate_y", "rel_rate_z")}
    rms = {}
    for label, scn in (("as_built", fleet.as_built_scenario()), ("preset", load_preset())):
        init = type(scn.initial)(**ic)
        traj = simulate(scn, init, rate=1000.0, duration=8.5)
        model = np.interp(t_sim[keep], traj.t, traj.channels["stroke"])
        rms[label] = float(np.sqrt(np.mean((y[keep] - model) ** 2)))
    assert rms["as_built"] < 1.3 * allowed, rms
    assert rms["preset"] > 5 * allowed, rms
