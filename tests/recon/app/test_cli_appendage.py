"""`dockrecon simulate appendage`: columns, units, events, bad input."""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from models.appendage import preset_path
from recon.app.cli import cli
from recon.io import read_table

PRESET = str(preset_path("appendage_pulse.toml"))
# (every column is listed: recon.io.read_table rejects a unit column it is not told about)
EXPECTED = {"t": "s", "u_Cx": "m", "u_Cy": "m", "theta_C": "rad", "v_Cx": "m/s", "v_Cy": "m/s",
            "Omega": "rad/s", **{f"{s}_{k}": "rad" for s in ("phi", "alpha", "beta")
                                 for k in (1, 2)}}


def _short_config(tmp_path, extra=""):
    text = open(PRESET).read().replace("duration = 20.0", "duration = 2.0").replace(
        "output_points = 2001", "output_points = 201")
    path = tmp_path / "case.toml"
    path.write_text(text + extra)
    return path


CLAMP = """
[[clamps]]
hinge = 1
threshold = 0.2
stiffness = 5000.0
damping = 50.0
"""


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_writes_the_specified_columns_with_units_and_events(tmp_path, suffix):
    # hinge 1 starts at 0 relative angle, so its clamp engages at t = 0
    cfg = _short_config(tmp_path, CLAMP)
    out = tmp_path / f"run.{suffix}"
    ev = tmp_path / "ev.json"
    r = CliRunner().invoke(cli, ["simulate", "appendage", str(cfg), "--output", str(out),
                                 "--events", str(ev)])
    assert r.exit_code == 0, r.output
    frame, units = read_table(out, EXPECTED)
    assert list(frame.columns) == ["t", "u_Cx", "u_Cy", "theta_C", "v_Cx", "v_Cy", "Omega",
                                   "phi_1", "phi_2", "alpha_1", "alpha_2", "beta_1", "beta_2"]
    assert units["t"] == "s" and units["v_Cy"] == "m/s" and units["alpha_1"] == "rad"
    assert len(frame) == 201 and frame["t"].iloc[-1] == pytest.approx(2.0)
    assert np.max(np.abs(frame["theta_C"])) > 0.01  # the moment pulse turned the spacecraft
    events = json.loads(ev.read_text())
    assert events["kind"] == "appendage_events"
    assert events["clamps"] == [{"hinge": 1, "t": 0.0}]
    assert events["settings"]["formulation"] == "reduced"


def test_bad_key_is_one_line_exit_2_and_nothing_written(tmp_path):
    cfg = tmp_path / "bad.toml"
    cfg.write_text(open(PRESET).read().replace("bending_stiffness = 2000.0\ntip_mass = 1.0",
                                               "bending_stiffnes = 2000.0\ntip_mass = 1.0"))
    out = tmp_path / "run.csv"
    r = CliRunner().invoke(cli, ["simulate", "appendage", str(cfg), "--output", str(out)])
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [
        f"error: {cfg}: 'rods[1].bending_stiffnes': unknown key (allowed: length, "
        "linear_mass, bending_stiffness, tip_mass)"]
    assert not out.exists()


def test_unknown_output_type_is_rejected(tmp_path):
    r = CliRunner().invoke(cli, ["simulate", "appendage", PRESET, "--output",
                                 str(tmp_path / "x.txt")])
    assert r.exit_code == 2 and "--output" in r.output


def test_formulation_and_bias_options_are_applied_and_recorded(tmp_path):
    cfg = _short_config(tmp_path)
    ev = tmp_path / "ev.json"
    out = tmp_path / "run.csv"
    r = CliRunner().invoke(cli, ["simulate", "appendage", str(cfg), "-o", str(out),
                                 "--events", str(ev), "--formulation", "full",
                                 "--no-second-order-bending"])
    assert r.exit_code == 0, r.output
    settings = json.loads(ev.read_text())["settings"]
    assert settings["formulation"] == "full"
    assert settings["second_order_bending_terms"] is False
    frame, _ = read_table(out, EXPECTED)
    # full formulation: bending starts from zero (reduced would start at the quasi-static
    # bending under the pulse already acting at t = 0)
    assert frame["alpha_1"].iloc[0] == 0.0
