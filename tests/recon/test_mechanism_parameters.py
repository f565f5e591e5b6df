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
