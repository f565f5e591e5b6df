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
    assert res.exit_code == 65          # the file's content: data error (README "Exit codes")
    assert "'force': missing column" in res.stderr
    assert not (tmp_path / "o.json").exists()


def test_refine_adds_the_fit_result_and_keeps_the_curves_schema(tmp_path):
    out = tmp_path / "r.json"
    rec = sample_path("resonance", "preload.csv")
    res = CliRunner().invoke(cli, ["identify", "resonance", str(rec), "--mass", "2",
                                   "--refine", "--output", str(out)])
    assert res.exit_code == 0, res.output
    d = json.loads(out.read_text())
    assert {"restoring_force", "damping", "amplitude_sequence", "jumps", "settings",
            "versions"} < set(d)
    assert set(d["settings"]["refinement"]) == {"change_restoring", "change_damping",
                                                "rms_before_m", "rms_after_m", "simulations",
                                                "preload_N", "coulomb_N"}
    fit = d["refinement"]
    assert fit["kind"] == "resonance_refinement" and fit["status"] == "ok"
    p = fit["parameters"]["preload"]
    assert {"map", "median", "ci68", "ci95", "unit", "prior", "stderr"} <= set(p)
    # the written curve is the refined one: within the refinement's 1 % acceptance of the
    # preload record's truth, 2 N sign(x) + 800 N/m x, where the force exceeds 10 % of its
    # maximum and more than 5 % of the range from the jump at 0 (test_end_to_end.errors;
    # the preload alone trades off against the nodes next to 0)
    x, f = np.array(d["restoring_force"]["x"]), np.array(d["restoring_force"]["f"])
    truth = 2.0 * np.sign(x) + 800.0 * x
    m = (np.abs(truth) > 0.1 * np.abs(truth).max()) & (np.abs(x) > 0.05 * 2 * x.max())
    assert np.max(np.abs(f[m] - truth[m]) / np.abs(truth[m])) < 0.01
