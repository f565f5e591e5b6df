"""Mechanism numbers as free parameters of a reconstruction, by their scenario paths: what a
run configuration may free (the absorbers' characteristic numbers, masses, contact and latch
numbers; with units, angles included) and one clear refusal, naming the key, for a path the
scenario does not hold, one that is not a number, and a number the kernel cannot change per
evaluation."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FLIGHTS = ROOT / "telemetry_samples" / "flights"
PROBE = ROOT / "models" / "probe_cone" / "presets" / "reference.toml"


def _config(tmp_path, extra: str) -> Path:
    path = tmp_path / "run.toml"
    path.write_text((FLIGHTS / "run.toml").read_text() + "\n" + extra)
    return path


def test_a_run_configuration_frees_absorber_numbers_by_their_paths(cli_run, tmp_path):
    """A lognormal prior on a stage rate given in N m/deg (an angle in the unit, which pint
    alone would drop) and a uniform one on the brake's spring force: accepted, and the
    problem's parameter space holds them in SI."""
    from recon.flight import flight_problem

    cfg = _config(tmp_path, """
[parameters."probe.axial_absorber.spring_force"]
lower = 600.0
upper = 1000.0
unit = "N"
[parameters."probe.lateral_absorber.stage2_rate"]
prior = "lognormal"
median = 104.72    # N m / deg = 6000 N m / rad
sigma = 0.2
lower = 20.0
unit = "N*m/deg"
""")
    r = cli_run("validate", FLIGHTS / "nominal.parquet", "--scenario", PROBE, "--config", cfg)
    assert r.exit_code == 0, r.output
    flight = flight_problem(FLIGHTS / "nominal.parquet", PROBE, config=cfg)
    sp = flight.problem.space
    p = sp["probe.lateral_absorber.stage2_rate"]
    assert p.unit == "N*m/rad" and p.prior.a == pytest.approx(104.72 * 180 / 3.141592653589793,
                                                              rel=1e-12)
    assert sp["probe.axial_absorber.spring_force"].prior.upper == 1000.0


@pytest.mark.parametrize("path, says", [
    ("probe.head_radius", "cannot change per evaluation"),
    ("probe.axial_absorber.nonsense", "no such key in the scenario reference.toml"),
    ("cone.meridian", "not a number in the scenario"),
])
def test_a_path_that_cannot_be_freed_is_refused_naming_the_key(cli_run, tmp_path, path, says):
    cfg = _config(tmp_path, f'[parameters."{path}"]\nlower = 0.01\nupper = 1.0\n')
    r = cli_run("validate", FLIGHTS / "nominal.parquet", "--scenario", PROBE, "--config", cfg)
    assert r.exit_code == 2, r.output
    line = r.stderr.strip()
    assert line.count("\n") == 0 and f"'parameters.{path}'" in line and says in line, line
    assert str(cfg) in line and "Traceback" not in r.output


def test_a_short_name_and_its_path_freed_together_are_refused(cli_run, tmp_path):
    """Two names of one number would be two columns of one packed entry, the later silently
    overriding the earlier: refused, naming both."""
    cfg = _config(tmp_path, "[parameters.brake_slip_force]\nlower = 1000.0\nupper = 2000.0\n"
                  '[parameters."probe.axial_absorber.slip_force"]\nlower = 1000.0\n'
                  "upper = 2000.0\n")
    r = cli_run("validate", FLIGHTS / "nominal.parquet", "--scenario", PROBE, "--config", cfg)
    assert r.exit_code == 2, r.output
    assert "'parameters.probe.axial_absorber.slip_force'" in r.stderr
    assert "the same number as brake_slip_force" in r.stderr and str(cfg) in r.stderr


def _wrong_unit(tmp_path, old: str, new: str) -> Path:
    text = PROBE.read_text()
    assert old in text
    path = tmp_path / "wrong.toml"
    path.write_text(text.replace(old, new))
    return path


@pytest.mark.parametrize("old, new, wanted, sign", [
    # the flight's unit slips at 1500 N; the scenario says 1200 N
    ("slip_force = 1500.0", "slip_force = 1200.0",
     {"probe.axial_absorber.slip_force", "brake_slip_force"}, +1),
    # the flight's lateral absorbers' first stage is 2000 N m/rad; the scenario says 3000
    ("stage1_rate = 2000.0", "stage1_rate = 3000.0",
     {"probe.lateral_absorber.stage1_rate", "lateral_spring_scale"}, -1),
])
def test_the_hint_names_the_number_the_scenario_has_wrong(tmp_path, old, new, wanted, sign):
    """The shipped nominal flight (the preset's unit) against a scenario with one absorber
    number wrong, at the flight's true initial conditions: the score test ranks that number
    (or its short-name scale) first among the ~50 the run left fixed, asking for a change
    towards the truth. Without a fit, so the test isolates the ranking."""
    import json
    from types import SimpleNamespace

    import numpy as np

    from identification.engines.least_squares import jacobian
    from recon.flight import flight_problem
    from recon.hints import mechanism_hints

    scenario = _wrong_unit(tmp_path, old, new)
    problem = flight_problem(FLIGHTS / "nominal.parquet", scenario,
                             config=FLIGHTS / "run.toml").problem
    truth = json.loads((FLIGHTS / "nominal.truth.json").read_text())["parameters"]
    x = np.array([truth[n] for n in problem.space.free_names])
    fit = SimpleNamespace(x_opt=x, diagnostics={},
                          jacobian=jacobian(problem, x, diff_step=1e-2, with_prior=True))
    hints = mechanism_hints(problem, fit)
    first = hints["parameters"][0]
    assert first["name"] in wanted, [(p["name"], p["cost_reduction"])
                                     for p in hints["parameters"]]
    assert np.sign(first["step"]) == sign
    assert hints["considered"] >= 30 and first["cost_reduction"] > 0
    assert set(first["channels"]) <= set(problem.bound.channel_slices())
