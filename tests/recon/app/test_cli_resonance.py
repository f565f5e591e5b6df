"""`dockrecon identify resonance`: schema, jump reporting, bad input."""
import json

import numpy as np
from click.testing import CliRunner

from recon.app.cli import cli
from telemetry_samples import sample_path


def test_resonance_command_writes_the_schema(tmp_path):
    out = tmp_path / "out.json"
    rec = sample_path("resonance", "jump.csv")
    res = CliRunner().invoke(cli, ["identify", "resonance", str(rec), "--frequency", "28",
                                   "--mass", "2", "--refine", "never", "--draws", "40",
                                   "--output", str(out)])
    assert res.exit_code == 0, res.output
    d = json.loads(out.read_text())
    assert set(d) == {"kind", "status", "status_reason", "warnings", "parameters",
                      "diagnostics", "restoring_force", "damping", "amplitude_sequence",
                      "jumps", "gaps", "bands", "refinement_policy", "settings", "versions",
                      "seed", "files", "digests"}
    assert d["kind"] == "resonance" and d["status"] == "ok"
    x = np.array(d["restoring_force"]["x"])
    b = np.array(d["amplitude_sequence"]["b"])
    assert x[0] == -b[-1] and x[-1] == b[-1]  # x spans [-b_max, b_max]
    assert d["damping"]["v"][0] == 0.0
    assert set(d["amplitude_sequence"]) == {"b", "theta", "omega2", "lambda", "a0",
                                            "n_windows"}
    assert len(d["jumps"]) == 1 and d["jumps"][0]["b_after"] > 0.07
    # the gap is flagged, and the force across it marked interpolated, only there
    (lo, hi), = d["gaps"]
    assert d["jumps"][0]["gap"] == [lo, hi] and lo < 0.016 and hi > 0.07
    interp = np.array(d["restoring_force"]["interpolated"])
    np.testing.assert_array_equal(interp, (np.abs(x) > lo) & (np.abs(x) < hi))
    assert "interpolated" in res.stderr
    # bands bracket the curve where it was identified
    f = np.array(d["restoring_force"]["f"])
    rf = d["restoring_force"]
    lo95, hi95 = np.array(rf["lo95"]), np.array(rf["hi95"])
    assert np.all(lo95 <= np.array(rf["lo68"])) and np.all(np.array(rf["hi68"]) <= hi95)
    m = (np.abs(x) > b[0]) & ~interp
    assert np.mean((f[m] >= lo95[m]) & (f[m] <= hi95[m])) > 0.9
    assert d["refinement_policy"]["applied"] is False


def test_frequency_is_estimated_when_absent(tmp_path):
    out = tmp_path / "o.json"
    rec = sample_path("resonance", "preload.csv")
    res = CliRunner().invoke(cli, ["identify", "resonance", str(rec), "--mass", "2",
                                   "--refine", "never", "--draws", "20", "--output", str(out)])
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


def test_bad_options_are_one_line_and_exit_2(tmp_path):
    rec = sample_path("resonance", "preload.csv")
    for args, where in ((["--delta-mass", "0.1"], "--added-mass"),
                        (["--rel-step", "nan"], "--rel-step"),
                        (["--added-mass", str(rec), "--delta-mass", "0.1", "--mass", "2"],
                         "--mass")):
        res = CliRunner().invoke(cli, ["identify", "resonance", str(rec), *args,
                                       "--output", str(tmp_path / "o.json")])
        assert res.exit_code == 2, (args, res.output)
        assert where in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_refine_adds_the_fit_result_and_keeps_the_curves_schema(tmp_path):
    """A bare --refine applies the refinement (always) and reports its change."""
    out = tmp_path / "r.json"
    rec = sample_path("resonance", "preload.csv")
    res = CliRunner().invoke(cli, ["identify", "resonance", str(rec), "--mass", "2",
                                   "--refine", "--draws", "20", "--output", str(out)])
    assert res.exit_code == 0, res.output
    d = json.loads(out.read_text())
    assert {"restoring_force", "damping", "amplitude_sequence", "jumps", "settings",
            "versions", "refinement_policy", "refinement"} <= set(d)
    pol = d["refinement_policy"]
    assert pol["mode"] == "always" and pol["applied"] is True
    assert {"lowers_misfit", "inside_bands", "change_restoring_percent",
            "change_damping_percent", "rms_before_m", "rms_after_m", "reason"} <= set(pol)
    assert "refinement changed the restoring force by up to" in res.stderr
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


def test_added_mass_recovers_the_shipped_truth_within_its_interval(tmp_path):
    truth = json.loads(sample_path("resonance", "added_mass.truth.json").read_text())
    p = truth["parameters"]
    out = tmp_path / "am.json"
    res = CliRunner().invoke(cli, ["identify", "resonance",
                                   str(sample_path("resonance", "added_mass_a.csv")),
                                   "--added-mass", str(sample_path("resonance",
                                                                   "added_mass_b.csv")),
                                   "--delta-mass", str(p["delta_mass"]), "--refine", "never",
                                   "--draws", "20", "--output", str(out)])
    assert res.exit_code == 0, res.output
    d = json.loads(out.read_text())
    m = d["added_mass"]["reduced_mass"]
    assert {"map", "median", "ci68", "ci95", "unit", "prior", "stderr"} <= set(m)
    # measured 1.9989 kg, 95 % [1.9961, 2.0029] against the true 2.0
    assert m["ci95"][0] <= p["mass"] <= m["ci95"][1]
    assert abs(m["map"] / p["mass"] - 1) < 0.005
    assert d["settings"]["mass_kg"] == m["map"]
    assert d["settings"]["mass_source"] == "added-mass method"
    assert "reduced mass" in res.stderr


def test_added_mass_records_regenerate_from_the_script():
    from recon.io import read_table
    from telemetry_samples.resonance import generate as G

    for key, q in G.added_mass_cases().items():
        t, x, f = G.simulate_case(q)
        fr, _ = read_table(sample_path("resonance", f"added_mass_{key}.csv"),
                           {"t": "s", "x": "m", "force": "N"})
        # CSV holds 10 significant digits
        np.testing.assert_allclose(fr.x.to_numpy(), x, rtol=1e-8, atol=1e-14)
        np.testing.assert_allclose(fr.force.to_numpy(), f, rtol=1e-8, atol=1e-12)
