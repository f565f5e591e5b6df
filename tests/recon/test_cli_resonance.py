"""`dockrecon identify resonance`: schema, jump reporting, bad input."""
import json

import numpy as np
from click.testing import CliRunner

from recon.cli import cli
from telemetry_samples import sample_path


def test_resonance_command_writes_the_schema(tmp_path):
    out = tmp_path / "out.json"
    rec = sample_path("resonance", "jump.csv")
    res = CliRunner().invoke(cli, ["identify", "resonance", str(rec), "--frequency", "28",
                                   "--mass", "2", "--output", str(out)])
    assert res.exit_code == 0, res.output
    d = json.loads(out.read_text())
    assert set(d) == {"restoring_force", "damping", "amplitude_sequence", "jumps", "settings",
                      "versions"}
    x = np.array(d["restoring_force"]["x"])
    b = np.array(d["amplitude_sequence"]["b"])
    assert x[0] == -b[-1] and x[-1] == b[-1]  # x spans [-b_max, b_max]
    assert d["damping"]["v"][0] == 0.0
    assert set(d["amplitude_sequence"]) == {"b", "theta", "omega2", "lambda", "a0"}
    assert len(d["jumps"]) == 1 and d["jumps"][0]["b_after"] > 0.07


def test_frequency_is_estimated_when_absent(tmp_path):
    out = tmp_path / "o.json"
    rec = sample_path("resonance", "preload.csv")
    res = CliRunner().invoke(cli, ["identify", "resonance", str(rec), "--mass", "2",
                                   "--output", str(out)])
    assert res.exit_code == 0, res.output
    d = json.loads(out.read_text())
    assert abs(d["settings"]["frequency_rad_s"] - 18.0) < 1e-3


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("t[s],x[mm]\n0,1\n1,2\n")
    res = CliRunner().invoke(cli, ["identify", "resonance", str(bad), "--output",
                                   str(tmp_path / "o.json")])
    assert res.exit_code == 2
    assert "'force': missing column" in res.stderr
    assert not (tmp_path / "o.json").exists()
