"""``dockrecon fleet`` (recon.app.fleet): a manifest's refusals before any reconstruction, and
(slow) a fleet of two shipped cut flights sharing the contact friction: each reconstructed, the
combination narrower than either flight alone with the truth inside, its files and report."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[3]
FLIGHTS = ROOT / "telemetry_samples" / "flights"
PROBE = ROOT / "models" / "probe_cone" / "presets" / "reference.toml"

FRICTION = '[parameters."contact.friction"]\nlower = 0.05\nupper = 0.40\n'


def _manifest(tmp_path, config: Path, fleet: str, second_config: Path | None = None) -> Path:
    path = tmp_path / "fleet.toml"
    path.write_text(f"""
{fleet}
[defaults]
scenario = "{PROBE}"
config = "{config}"
seed = 1
[defaults.options]
mcmc = false
[[flight]]
name = "nominal"
telemetry = "{FLIGHTS / 'nominal.parquet'}"
truth = "{FLIGHTS / 'nominal.truth.json'}"
[[flight]]
name = "misaligned"
telemetry = "{FLIGHTS / 'misaligned.parquet'}"
truth = "{FLIGHTS / 'misaligned.truth.json'}"
""" + (f'config = "{second_config}"\n' if second_config else ""))
    return path


@pytest.mark.parametrize("fleet, says, key", [
    ("", "needs a [fleet] table", "'fleet'"),
    ("[fleet]\nshared = []", "distinct parameter names", "'fleet.shared'"),
    ('[fleet]\nshared = ["contact.friction"]\ninner = 1', "must be a whole number",
     "'fleet.inner'"),
    ('[fleet]\nshared = ["contact.stiffness"]', "does not free the shared parameter",
     "'fleet.shared'"),
])
def test_a_fleet_manifest_is_refused_before_any_reconstruction(cli_run, tmp_path, fleet, says,
                                                                key):
    cfg = tmp_path / "run.toml"
    cfg.write_text((FLIGHTS / "run.toml").read_text() + FRICTION)
    out = tmp_path / "out"
    r = cli_run("fleet", _manifest(tmp_path, cfg, fleet), "-o", out)
    assert r.exit_code == 2, r.output
    assert says in r.stderr and key in r.stderr and "Traceback" not in r.output
    assert not (out / "nominal").exists()


def test_other_priors_of_the_shared_parameter_are_refused(cli_run, tmp_path):
    cfg = tmp_path / "run.toml"
    cfg.write_text((FLIGHTS / "run.toml").read_text() + FRICTION)
    other = tmp_path / "other.toml"
    other.write_text((FLIGHTS / "run.toml").read_text() + FRICTION.replace("0.40", "0.50"))
    r = cli_run("fleet", _manifest(tmp_path, cfg, '[fleet]\nshared = ["contact.friction"]',
                                   other), "-o", tmp_path / "out")
    assert r.exit_code == 2 and "other priors" in r.stderr, r.output


@pytest.mark.slow
def test_a_fleet_of_two_flights_knows_the_friction_better_than_either(cli_run, tmp_path):
    from tests.recon._fast import fast_config

    # the shipped search (with the friction free too the misaligned flight's basin needs it:
    # the fast one ends at cost 2330 against 431), the fast sampling
    cfg = fast_config(tmp_path, extra={"screen": "512", "keep": "8", "max_nfev": "100",
                                       "pre_nfev": "20", "search_retries": "2"})
    cfg.write_text(cfg.read_text() + FRICTION)
    manifest = _manifest(tmp_path, cfg, '[fleet]\nshared = ["contact.friction"]\n'
                         "shared_draws = 200\ninner = 16\nn_out = 500")
    out = tmp_path / "fleet"
    r = cli_run("fleet", manifest, "-o", out, "--workers", 2, "--seed", 3)
    assert r.exit_code == 0, r.output
    doc = json.loads((out / "fleet.json").read_text())
    assert doc["kind"] == "fleet"
    mu = doc["shared"]["contact.friction"]
    # the shipped flights are the preset's unit: friction 0.15 (their truth files hold the
    # initial conditions only)
    assert mu["ci95"][0] <= 0.15 <= mu["ci95"][1], (mu, doc["diagnostics"])
    assert mu["narrowing"] >= 1.0, (mu, doc["diagnostics"])
    # the engine's exactness is the closed-form test's (tests/identification/test_fleet.py);
    # here that the weights are not degenerate (measured: 9-59 of 80 shared draws at 80 x 24)
    assert doc["diagnostics"]["ess"] > 10, doc["diagnostics"]
    assert set(doc["flights"]) == {"nominal", "misaligned"}
    assert "rel_vel_x" in doc["flights"]["nominal"]
    draws = pd.read_parquet(out / "fleet_draws.parquet")
    assert "contact.friction" in draws and "misaligned/rel_vel_x" in draws
    assert len(draws) == 500
    assert (out / "report.html").exists() and (out / "nominal" / "result.json").exists()
