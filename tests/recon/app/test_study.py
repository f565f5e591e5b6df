"""Calibration studies (recon.app.study, ``dockrecon study calibration``): the coverage table
against independent binomial arithmetic, the seeded draws and their capture condition, the
scope refusals, the recorder's truth, the report, and (slow) a whole study on a 2-worker
Dask cluster with ``--resume``."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from models.errors import InputError
from recon.calibration import StudySettings, coverage, draw_flights, record_flights

ROOT = Path(__file__).resolve().parents[3]
FLIGHTS = ROOT / "telemetry_samples" / "flights"
SCENARIO = ROOT / "models" / "probe_cone" / "presets" / "reference.toml"


def _binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k), X ~ Binomial(n, p), summed term by term (independent of scipy)."""
    return sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k + 1))


def _records(hits68: list[bool], hits95: list[bool], status=None) -> list[dict]:
    out = []
    for i, (a, b) in enumerate(zip(hits68, hits95)):
        st = (status or {}).get(i, "ok")
        out.append({"flight": f"f{i}", "status": st,
                    "parameters": {"v": {"in68": a, "in95": b, "z": 0.5 * (i - 3),
                                         "laplace_in68": True, "laplace_in95": True}},
                    "joint": {"dof": 1, "d2": float(i), "in68": i < 3, "in95": i < 6},
                    "lr": float(i) - 1.0})
        if st == "ok":      # score_flight scores the highest-density region of ok fits only
            m = 0.1 * (i % 10)   # a posterior mass: 0.0 ... 0.9, repeating
            out[-1]["hpd"] = {"mass_above": m, "se": 0.02, "in68": m <= 0.68, "in95": m <= 0.95}
    return out


def test_coverage_table_is_the_binomial_arithmetic():
    """Ten flights, 5 hits at 68 % and 8 at 95 %, flight 9's fit implausible (its hits
    count as misses): coverage, sampling errors, one-sided binomial p, the flags, the joint
    coverage and the likelihood-ratio summary computed by hand."""
    h68 = [True] * 6 + [False] * 4          # flight 0..5 inside
    h95 = [True] * 8 + [False] + [True]     # flight 9 inside but implausible -> miss
    recs = _records(h68, h95, status={9: "implausible"})
    doc = coverage(recs, ["v"])
    row = doc["table"]["v"]
    assert row["n"] == 10
    assert row["coverage68"] == pytest.approx(0.6) and row["coverage95"] == pytest.approx(0.8)
    assert row["se68"] == pytest.approx(math.sqrt(0.68 * 0.32 / 10))
    assert row["p_low68"] == pytest.approx(_binom_cdf(6, 10, 0.68), rel=1e-12)
    assert row["p_low95"] == pytest.approx(_binom_cdf(8, 10, 0.95), rel=1e-12)
    # 0.8 < 0.95 - 2 * 0.0689 = 0.812: low; family-wise: min p = P(X<=8 | 10, .95) = 0.0861
    # is not below 0.05 / 2
    assert row["low"] and not row["low_familywise"]
    assert doc["tables"]["laplace"]["v"]["coverage95"] == pytest.approx(0.9)   # 9 ok flights
    assert doc["joint"]["coverage95"] == pytest.approx(0.6)
    assert doc["joint"]["p_low95"] == pytest.approx(_binom_cdf(6, 10, 0.95), rel=1e-12)
    # highest-density region: the 9 ok flights, mass above the truth 0.0 ... 0.8
    hpd = doc["hpd"]
    assert hpd["n"] == 9 and hpd["coverage95"] == 1.0
    assert hpd["coverage68"] == pytest.approx(7 / 9)
    assert hpd["p_low68"] == pytest.approx(_binom_cdf(7, 9, 0.68), rel=1e-12)
    assert hpd["mass_above_mean"] == pytest.approx(0.4)
    lr = doc["pooled"]["likelihood_ratio"]
    assert lr["n"] == 10 and lr["search_failures"] == 1 and lr["mean"] == pytest.approx(3.5)
    # |z| = |0.5 (i - 3)|, i = 0..9, sorted 0, .5, .5, 1, 1, 1.5, 1.5, 2, 2.5, 3: median 1.25
    assert doc["pooled"]["median_abs_z"] == pytest.approx(1.25)
    # Kolmogorov-Smirnov distances, by hand: the masses 0.0 ... 0.8 against the uniform, the
    # statistics -1 ... 8 against chi2_1 (cdf erf(sqrt(x / 2)), 0 below 0)
    assert hpd["uniform_d"] == pytest.approx(_ks_distance([0.1 * i for i in range(9)],
                                                          lambda x: x), rel=1e-12)
    assert lr["chi2_d"] == pytest.approx(_ks_distance(
        [i - 1.0 for i in range(10)], lambda x: math.erf(math.sqrt(x / 2)) if x > 0 else 0.0),
        rel=1e-12)
    assert 0.0 < hpd["uniform_p"] <= 1.0 and 0.0 < lr["chi2_p"] <= 1.0


def test_engine_counts_say_which_path_served_each_flight():
    """The study counts the flights the learned proposal served in one round, those it
    started but the screen had to finish, those screened from the start, and the
    posteriors left to importance sampling or sent to emcee."""
    from recon.calibration import engines

    recs = [{"search_path": "learned", "search_rounds": 1, "method": "importance",
             "ess": 300.0, "pareto_k": 0.2, "pareto_k_limit": 0.7},
            {"search_path": "learned", "search_rounds": 2, "method": "mcmc"},
            {"search_path": "learned", "search_rounds": 1, "method": "mcmc"},
            {"search_path": "screen", "search_rounds": 1, "method": "importance",
             "ess": 300.0, "pareto_k": 0.9, "pareto_k_limit": 0.7},
            {"method": "importance", "ess": 50.0}]
    assert engines(recs) == {"learned": 2, "learned_then_screen": 1, "screen": 1,
                             "unknown": 1, "importance": 3, "mcmc": 2, "importance_short": 2}


def _ks_distance(values, cdf) -> float:
    """sup |F_n - F|, from the sorted sample: max over i of i/n - F(x_i), F(x_i) - (i-1)/n."""
    xs, n = sorted(values), len(values)
    return max(max((i + 1) / n - cdf(x), cdf(x) - i / n) for i, x in enumerate(xs))


def test_whole_study_tests_see_a_posterior_too_narrow_and_a_likelihood_off():
    """The uniformity of the highest-density mass and the chi-square law of the truth's
    statistic, on seeded samples (400 flights): drawn from the laws they test, neither is
    rejected at 1 %; masses piled towards 1 (intervals too narrow) and statistics 1.5 times
    too large (noise understated by a factor 1.22) are rejected at 1e-6."""
    from scipy.stats import chi2

    rng = np.random.default_rng(3)
    n, k = 400, 12

    def recs(masses, stats):
        return [{"flight": f"f{i}", "status": "ok", "lr": float(s),
                 "parameters": {"v": {"in68": True, "in95": True, "z": 0.0}},
                 "hpd": {"mass_above": float(m), "se": 0.01, "in68": m <= 0.68,
                         "in95": m <= 0.95}} for i, (m, s) in enumerate(zip(masses, stats))]

    free = ["v"] + [f"p{j}" for j in range(1, k)]     # k free parameters, one scored
    good = coverage(recs(rng.uniform(size=n), chi2(k).rvs(n, random_state=rng)), free)
    assert good["pooled"]["likelihood_ratio"]["dof"] == k
    assert good["hpd"]["uniform_p"] > 0.01
    assert good["pooled"]["likelihood_ratio"]["chi2_p"] > 0.01
    bad = coverage(recs(rng.uniform(size=n) ** 0.5, 1.5 * chi2(k).rvs(n, random_state=rng)),
                   free)
    assert bad["hpd"]["uniform_p"] < 1e-6
    assert bad["pooled"]["likelihood_ratio"]["chi2_p"] < 1e-6


def test_familywise_flag_needs_the_bonferroni_level():
    """Twenty flights with 14 hits at 95 %: P(X <= 14 | 20, 0.95) = 3.3e-4 < 0.05 / 2."""
    recs = _records([True] * 20, [True] * 14 + [False] * 6)
    row = coverage(recs, ["v"])["table"]["v"]
    assert row["p_low95"] == pytest.approx(_binom_cdf(14, 20, 0.95), rel=1e-12)
    assert row["p_low95"] < 0.025 and row["low_familywise"]


@pytest.fixture(scope="module")
def study_space():
    from recon.config import RunConfig, load_scenario
    from recon.io import load_toml

    unit, scenario, _ = load_scenario(SCENARIO)
    cfg = RunConfig.from_dict(load_toml(FLIGHTS / "run.toml"))
    return unit, scenario, cfg


def test_draws_are_seeded_and_capture_in_time(study_space):
    """The same seed gives the same flights; each captures by the window end minus 1 s (cut
    records), re-checked by simulating the draw independently at a finer output rate."""
    unit, scenario, cfg = study_space
    a = draw_flights(unit, scenario, cfg.space, 2, 11, records="cut", window=5.0)
    b = draw_flights(unit, scenario, cfg.space, 2, 11, records="cut", window=5.0)
    c = draw_flights(unit, scenario, cfg.space, 2, 12, records="cut", window=5.0)
    assert a == b and a[0]["draw"] != c[0]["draw"]
    for f in a:
        assert f["capture_t"] <= 4.0
        ic = {k: f["draw"][k] for k in unit.initial_conditions}
        tr = unit.simulate(scenario, ic, duration=5.0, rate=400.0)
        assert tr.events["capture"] == pytest.approx(f["capture_t"], abs=0.011)
        for p in cfg.space.free:           # inside the prior's support
            lo, hi = cfg.space.prior_interval(1.0)[cfg.space.free_names.index(p.name)]
            assert lo <= f["draw"][p.name] <= hi


def test_recorded_flight_carries_its_truth(study_space, tmp_path):
    """A cut record: the recorder's truth is the drawn state and clock offset; the telemetry
    reads back with the unit's fitted channels."""
    from recon.telemetry import load_telemetry

    unit, scenario, cfg = study_space
    flights = draw_flights(unit, scenario, cfg.space, 1, 3, records="cut", window=5.0)
    st = StudySettings(scenario=str(SCENARIO), config=str(FLIGHTS / "run.toml"), flights=1,
                       seed=3, records="cut")
    rec = record_flights(unit, scenario, flights, tmp_path, st, 5.0)[0]
    for k in (*unit.initial_conditions, "clock_offset"):
        assert rec["truth"][k] == pytest.approx(flights[0]["draw"][k], abs=1e-12), k
    tel = load_telemetry(rec["telemetry"][0])
    assert {"stroke", "capture", "active_rate_x"} <= set(tel.channels)


def test_study_refuses_what_it_cannot_simulate(tmp_path):
    """A configuration freeing a number of the unit by a short name, or leaving out an
    initial condition, is refused with the file and the key before any flight is drawn."""
    from models.probe_cone.unit import UNIT
    from recon.app.study import _study_config

    text = (FLIGHTS / "run.toml").read_text()
    free_mech = tmp_path / "mech.toml"
    free_mech.write_text(text + '\n[parameters.brake_slip_force]\nlower = 100.0\n'
                         'upper = 900.0\nunit = "N"\n')
    with pytest.raises(InputError) as exc:
        _study_config(str(free_mech), UNIT, {})
    assert "brake_slip_force" in str(exc.value) and "mech.toml" in str(exc.value)
    cut = tmp_path / "cut.toml"
    cut.write_text(re.sub(r"\[parameters\.rel_pos_x\][^\[]*", "", text))
    with pytest.raises(InputError) as exc:
        _study_config(str(cut), UNIT, {})
    assert "rel_pos_x" in str(exc.value)


def test_a_study_draws_the_unit_by_its_scenario_paths(study_space, tmp_path):
    """A run configuration freeing the brake's slip force by its scenario path: the study
    draws it with the initial conditions, and each flight is simulated and recorded with a
    scenario holding its draw. The record shows it: its peak stroke is the one a simulation
    with the drawn slip force gives (within 1 mm: noise 0.5 mm, quantum, 100-Hz frames), and
    more than 3 mm away from the preset's. A short name (a scale has no place in the
    scenario) and a path the scenario does not have are refused, naming the key."""
    from models.probe_cone.unit import UNIT
    from recon.app.study import _study_config
    from recon.calibration import scenario_for_draws
    from recon.config import scenario_document
    from recon.telemetry import load_telemetry

    unit, scenario, _ = study_space
    path = "probe.axial_absorber.slip_force"
    run = tmp_path / "mech.toml"
    run.write_text((FLIGHTS / "run.toml").read_text()
                   + f'\n[parameters."{path}"]\nlower = 2000.0\nupper = 2600.0\nunit = "N"\n')
    doc = scenario_document(SCENARIO)
    cfg, free, mechanism = _study_config(str(run), UNIT, doc)
    assert mechanism == [path] and path in free
    scenario_for = scenario_for_draws(unit, doc, mechanism)
    flights = draw_flights(unit, scenario, cfg.space, 1, 5, records="cut", window=5.0,
                           scenario_for=scenario_for)
    drawn = flights[0]["draw"][path]
    assert 2000.0 <= drawn <= 2600.0
    st = StudySettings(scenario=str(SCENARIO), config=str(run), flights=1, seed=5,
                       records="cut")
    rec = record_flights(unit, scenario, flights, tmp_path, st, 5.0,
                         scenario_for=scenario_for)[0]
    assert rec["truth"][path] == drawn
    peak = np.nanmax(load_telemetry(rec["telemetry"][0]).samples("stroke")[1])
    ic = {k: flights[0]["draw"][k] for k in unit.initial_conditions}
    as_drawn = unit.simulate(scenario_for(flights[0]["draw"]), ic, duration=5.0, rate=1000.0)
    preset = unit.simulate(scenario, ic, duration=5.0, rate=1000.0)
    assert abs(peak - np.max(as_drawn.channels["stroke"])) < 1e-3
    assert abs(peak - np.max(preset.channels["stroke"])) > 3e-3
    for name, why in (("brake_slip_force", "by its path"),
                      ("probe.axial_absorber.no_such_number", "by its path")):
        bad = tmp_path / "bad.toml"
        bad.write_text((FLIGHTS / "run.toml").read_text()
                       + f'\n[parameters."{name}"]\nlower = 1.0\nupper = 2.0\n')
        with pytest.raises(InputError) as exc:
            _study_config(str(bad), UNIT, doc)
        assert exc.value.key == f"parameters.{name}" and why in str(exc.value)
        assert "bad.toml" in str(exc.value)


def test_study_command_refusals(cli_run, tmp_path, monkeypatch):
    """One line and exit 2, before any flight is simulated: both executors named, a
    configuration the study cannot simulate (naming its file and key)."""
    text = (FLIGHTS / "run.toml").read_text()
    mech = tmp_path / "mech.toml"
    mech.write_text(text + '\n[parameters.head_mass]\nlower = 8.0\nupper = 12.0\nunit = "kg"\n')
    base = ["study", "calibration", "--scenario", SCENARIO, "--flights", 2, "-o",
            tmp_path / "out"]
    r = cli_run(*base, "--config", FLIGHTS / "run.toml", "--workers", 1, "--scheduler",
                "tcp://127.0.0.1:1")
    assert r.exit_code == 2 and "--workers" in r.stderr and "Traceback" not in r.stderr
    r = cli_run(*base, "--config", mech)
    assert r.exit_code == 2 and "mech.toml" in r.stderr and "head_mass" in r.stderr
    assert not (tmp_path / "out" / "telemetry").exists()
    # a unit without a flight recorder (here the peripheral unit with its recorder taken
    # away): refused naming the scenario, not an internal failure after drawing flights
    from models.peripheral.unit import PeripheralUnit

    monkeypatch.setattr(PeripheralUnit, "sensor_suite", None)
    peripheral = ROOT / "models" / "peripheral" / "presets" / "reference.toml"
    r = cli_run("study", "calibration", "--scenario", peripheral, "--config",
                FLIGHTS / "run.toml", "--flights", 2, "-o", tmp_path / "out")
    assert r.exit_code == 2 and "Traceback" not in r.stderr, r.stderr
    assert "reference.toml" in r.stderr and "flight recorder" in r.stderr
    assert len(r.stderr.strip().splitlines()) <= 2, r.stderr   # the banner and one line
    assert not (tmp_path / "out" / "telemetry").exists()


def test_a_draw_the_model_aborts_is_rejected(study_space):
    """A draw whose simulation stops on a model limit (SimulationError) is rejected like a
    draw without capture: the study goes on to the next draw of the same generator."""
    from models.errors import SimulationError

    unit, scenario, cfg = study_space

    class Refusing:                     # the real unit, whose first simulation is aborted
        def __init__(self):
            self.calls = 0

        def __getattr__(self, name):
            return getattr(unit, name)

        def simulate(self, *a, **k):
            self.calls += 1
            if self.calls == 1:
                raise SimulationError("penetration limit exceeded at t = 0.1 s")
            return unit.simulate(*a, **k)

    a = draw_flights(Refusing(), scenario, cfg.space, 1, 11, records="cut", window=5.0)[0]
    b = draw_flights(unit, scenario, cfg.space, 1, 11, records="cut", window=5.0)[0]
    assert b["tries"] == 1              # seed 11's first draw captures when not aborted
    assert a["tries"] >= 2 and a["draw"] != b["draw"]


def test_calibration_report_renders(tmp_path):
    """The report of a study document: the verdict, the coverage table with the family-wise
    row highlighted, the figures."""
    from reports.build import rebuild_report

    recs = _records([True] * 20, [True] * 14 + [False] * 6)
    for r in recs:
        r.update(method="importance", ess=500.0, status="ok")
    doc = {"kind": "calibration", **coverage(recs, ["v"]), "free": ["v"], "flights": recs,
           "settings": {"study": {"records": "cut", "options": {}}}, "seed": 1,
           "versions": {}, "wall_s": 60.0, "flights_resumed": 2}
    (tmp_path / "calibration.json").write_text(json.dumps(doc))
    paths = rebuild_report(tmp_path)
    html = (tmp_path / "report.html").read_text()
    assert {p.name for p in paths} == {"report.html", "report.pdf"}
    assert "Calibration study (coverage low)" in html
    assert "low (family-wise)" in html and html.count("<img") >= 3
    assert "highest-density region of all free parameters" in html and "HPD mass" in html
    # a resumed study's wall time is its last run's, and the report says so
    assert "wall time of the last run" in html and "2 flights kept from an earlier run" in html


@pytest.mark.slow
def test_study_on_two_workers_scores_every_flight_and_resumes(cli_run, tmp_path):
    """Three cut flights at fast settings on a 2-worker cluster: every flight scored, the
    per-parameter verdicts equal the truth against each result's own intervals, the
    catalog holds the truths; ``--resume`` redoes no flight and gives the same table."""
    from tests.recon._fast import fast_config

    cfg = fast_config(tmp_path)
    out = tmp_path / "study"
    args = ("study", "calibration", "--scenario", SCENARIO, "--config", cfg, "--flights", 3,
            "--records", "cut", "--mcmc", "never", "--seed", 5, "-o", out, "--workers", 2)
    r = cli_run(*args)
    assert r.exit_code in (0, 3), r.output      # 3: fast settings may leave a fit implausible
    doc = json.loads((out / "calibration.json").read_text())
    assert doc["n_flights"] == 3 and len(doc["flights"]) == 3
    for rec in doc["flights"]:
        res = json.loads((out / rec["flight"] / "result.json").read_text())
        truth = json.loads((out / "telemetry" / f"{rec['flight']}.truth.json").read_text())
        for name, p in rec["parameters"].items():
            t = truth["parameters"][name]
            lo, hi = res["parameters"][name]["ci95"]
            assert p["in95"] == (lo <= t <= hi) and p["truth"] == t
        # every ok fit is scored against its posterior's highest-density region too
        assert ("hpd" in rec) == (rec["status"] == "ok")
        if "hpd" in rec:
            h = rec["hpd"]
            assert 0.0 <= h["mass_above"] <= 1.0 and h["in95"] == (h["mass_above"] <= 0.95)
    n_ok = sum(r["status"] == "ok" for r in doc["flights"])
    assert (doc["hpd"] or {"n": 0})["n"] == n_ok
    import pandas as pd

    cat = pd.read_parquet(out / "catalog.parquet")
    assert cat["truth"].notna().all() and set(cat["flight"]) == {"cal00", "cal01", "cal02"}
    assert (out / "report.pdf").exists()
    stamps = {p: p.stat().st_mtime_ns for p in out.glob("cal*/result.json")}
    r2 = cli_run(*args, "--resume")
    assert r2.exit_code == r.exit_code
    assert stamps == {p: p.stat().st_mtime_ns for p in out.glob("cal*/result.json")}
    doc2 = json.loads((out / "calibration.json").read_text())
    assert doc2["table"] == doc["table"] and doc2["flights"] == doc["flights"]
    assert doc["flights_resumed"] == 0 and doc2["flights_resumed"] == 3
    bad = cli_run(*args[:-2], "--resume", "--workers", 1, "--seed", 6)
    assert bad.exit_code == 2 and "other settings" in bad.stderr
    # a part of the study (--only) reconstructs its flight exactly as the whole study did,
    # and cannot be merged with the whole, which scores that flight too
    part = tmp_path / "part"
    r3 = cli_run(*[part if a == out else a for a in args], "--only", 2)
    assert r3.exit_code in (0, 3), r3.output
    doc3 = json.loads((part / "calibration.json").read_text())
    assert [f["flight"] for f in doc3["flights"]] == ["cal02"]
    assert doc3["flights"][0]["parameters"] == doc["flights"][2]["parameters"]
    bad = cli_run("study", "merge", out, part, "-o", tmp_path / "merged")
    assert bad.exit_code == 2 and "cal02" in bad.stderr


PERIPHERAL = ROOT / "models" / "peripheral" / "presets" / "reference.toml"
PERIPHERAL_RUN = FLIGHTS / "peripheral" / "run.toml"


def test_peripheral_draws_capture_and_their_records_carry_the_truth(tmp_path):
    """The study works for the peripheral unit: seeded draws from the peripheral run
    configuration's priors capture within the cut window (checked by simulating each draw
    again), and its flight recorder writes a record of the ring sensor channels whose truth is
    the draw."""
    from recon.config import RunConfig, load_scenario
    from recon.io import load_toml
    from recon.telemetry import load_telemetry

    unit, scenario, _ = load_scenario(PERIPHERAL)
    assert unit.name == "peripheral"
    cfg = RunConfig.from_dict(load_toml(PERIPHERAL_RUN))
    flights = draw_flights(unit, scenario, cfg.space, 2, 4, records="cut", window=4.0)
    for f in flights:
        ic = {k: f["draw"][k] for k in unit.initial_conditions}
        tr = unit.simulate(scenario, ic, duration=4.0, rate=200.0)
        assert f["capture_t"] <= 3.0
        assert tr.events["capture"] == pytest.approx(f["capture_t"], abs=0.011)
    st = StudySettings(scenario=str(PERIPHERAL), config=str(PERIPHERAL_RUN), flights=2,
                       seed=4, records="cut")
    rec = record_flights(unit, scenario, flights[:1], tmp_path, st, 4.0)[0]
    for k in (*unit.initial_conditions, "clock_offset"):
        assert rec["truth"][k] == pytest.approx(flights[0]["draw"][k], abs=1e-12), k
    tel = load_telemetry(rec["telemetry"][0])
    assert {"ring_x", "ring_yaw", "leg_6", "capture", "latch_1", "active_rate_x"} \
        <= set(tel.channels)


@pytest.mark.slow
def test_peripheral_study_on_two_workers(cli_run, tmp_path):
    """A two-flight study of the peripheral unit (cut records, fast settings) on a 2-worker
    cluster: both flights reconstructed and scored against their truth, the catalog and the
    report written."""
    from tests.recon._fast import fast_config

    cfg = fast_config(tmp_path, source=PERIPHERAL_RUN)
    out = tmp_path / "study"
    r = cli_run("study", "calibration", "--scenario", PERIPHERAL, "--config", cfg,
                "--flights", 2, "--records", "cut", "--mcmc", "never", "--seed", 4, "-o", out,
                "--workers", 2)
    assert r.exit_code in (0, 3), r.output      # 3: fast settings may leave a fit implausible
    doc = json.loads((out / "calibration.json").read_text())
    assert doc["n_flights"] == 2 and len(doc["flights"]) == 2
    for rec in doc["flights"]:
        res = json.loads((out / rec["flight"] / "result.json").read_text())
        assert res["settings"]["unit"] == "peripheral"
        truth = json.loads((out / "telemetry" / f"{rec['flight']}.truth.json").read_text())
        for name, p in rec["parameters"].items():
            lo, hi = res["parameters"][name]["ci95"]
            assert p["in95"] == (lo <= truth["parameters"][name] <= hi)
    assert (out / "catalog.parquet").exists() and (out / "report.pdf").exists()


def test_only_reads_indices_and_ranges():
    """``--only``: indices and inclusive ranges, 0-based, sorted without repeats, written
    back as the shortest ranges; a bad part is refused naming the option and the part."""
    from recon.calibration import format_only, parse_only

    assert parse_only("20-39", 40) == tuple(range(20, 40))
    assert parse_only(" 10, 0-4,3 ", 40) == (0, 1, 2, 3, 4, 10)
    assert format_only([10, 0, 1, 2, 3, 4, 3]) == "0-4,10"
    assert format_only(parse_only("7", 8)) == "7"
    for bad, word in (("5-2", "5-2"), ("x", "'x'"), ("0-40", "40 flights"), ("-1", "-1"),
                      ("", "''")):
        with pytest.raises(InputError) as exc:
            parse_only(bad, 40)
        assert "--only" in str(exc.value) and word in str(exc.value), (bad, str(exc.value))


def test_flight_index_reads_the_study_flight_names():
    """``flight_index`` inverts the names of ``draw_flights`` (two digits up to 100 flights,
    four above), which the merge and the report match flights by, and knows no other name."""
    from recon.calibration import flight_index

    assert [flight_index(f"cal{i:02d}") for i in (0, 7, 39, 99)] == [0, 7, 39, 99]
    assert flight_index("cal0107") == 107
    for other in ("cal", "calx1", "cal-1", "flight07", "CAL07"):
        assert flight_index(other) is None, other


def test_a_part_of_a_study_records_the_same_flights(study_space, tmp_path, monkeypatch):
    """``only``: the part's flights are the whole study's flights with the same index - the
    same draw, the same record (same recorder seed) and the same reconstruction seed - and
    the others are not recorded. The campaign is replaced by one that reports what it was
    given (what it does with the flights is the slow study test's)."""
    import pandas as pd

    import recon.app.campaign
    from recon.app.study import run_study

    given = {}

    def campaign(specs, out, fn, **kw):
        given[Path(out).name] = list(specs)
        return {"flights": {}, "counts": {}}

    monkeypatch.setattr(recon.app.campaign, "run_campaign", campaign)
    base = dict(scenario=str(SCENARIO), config=str(FLIGHTS / "run.toml"), flights=3, seed=5,
                records="cut")
    run_study(StudySettings(**base), tmp_path / "whole")
    doc = run_study(StudySettings(**base, only=(2,)), tmp_path / "part")
    assert doc["settings"]["study"]["only"] == "2"
    assert [s.name for s in given["part"]] == ["cal02"]
    whole = {s.name: s for s in given["whole"]}
    spec = given["part"][0]
    assert spec.seed == whole["cal02"].seed == 2
    assert sorted(p.name for p in (tmp_path / "part" / "telemetry").iterdir()) == \
        ["cal02.parquet", "cal02.truth.json"]
    a = pd.read_parquet(spec.telemetry[0])
    b = pd.read_parquet(whole["cal02"].telemetry[0])
    pd.testing.assert_frame_equal(a, b)
    ta = json.loads(Path(spec.truth).read_text())["parameters"]
    tb = json.loads(Path(whole["cal02"].truth).read_text())["parameters"]
    assert ta == tb
    # the files are recorded by their values, as the campaign's --resume counts them: a
    # comment does not make the next part another study's, a changed value does
    from recon.app.study import _file_digest

    inputs = doc["settings"]["inputs"]
    assert inputs["by"] == "values" and inputs["config"] == _file_digest(base["config"])
    text = Path(base["config"]).read_text()
    (tmp_path / "commented.toml").write_text("# a comment\n" + text)
    (tmp_path / "changed.toml").write_text(text.replace("screen = 512", "screen = 256", 1))
    assert _file_digest(str(tmp_path / "commented.toml")) == inputs["config"]
    assert _file_digest(str(tmp_path / "changed.toml")) != inputs["config"]


def test_a_resumed_study_counts_its_kept_flights_after_every_flight(study_space, tmp_path,
                                                                   monkeypatch):
    """``--resume``: the table written after each flight of the new sitting counts the
    flights kept from the earlier one, so a sitting stopped part way leaves a table of every
    flight done (before, it held the new sitting's flights only, and the kept ones came back
    only when the whole sitting ended). The campaign is replaced by one that reports two
    kept flights, then ends a third and is interrupted before the last."""
    import recon.app.campaign
    import recon.app.study
    from recon.app.study import run_study

    def score(name):
        return {"status": "ok", "lr": 11.0, "parameters": {"rel_roll": {
            "in68": True, "in95": True, "z": 0.1, "laplace_in68": True,
            "laplace_in95": True}}}

    seen = []

    def campaign(specs, out, fn, *, on_flight, **kw):
        names = [s.name for s in specs]
        for name in names[:2]:       # a kept flight's stamp, as on disk, holds no score
            on_flight(name, {"state": "done", "resumed": True})
        on_flight(names[2], {"state": "done", "score": score(names[2])})
        seen.append(json.loads((Path(out) / "calibration.json").read_text()))
        raise KeyboardInterrupt

    monkeypatch.setattr(recon.app.campaign, "run_campaign", campaign)
    monkeypatch.setattr(recon.app.study, "_score", lambda spec, out: score(spec.name))
    settings = StudySettings(scenario=str(SCENARIO), config=str(FLIGHTS / "run.toml"),
                             flights=4, seed=5, records="cut")
    with pytest.raises(KeyboardInterrupt):
        run_study(settings, tmp_path / "s", resume=True)
    doc = json.loads((tmp_path / "s" / "calibration.json").read_text())
    assert seen[0] == doc
    assert [f["flight"] for f in doc["flights"]] == ["cal00", "cal01", "cal02"]
    assert doc["n_flights"] == 3


def _part(directory: Path, records: list[dict], **study) -> Path:
    settings = {"study": {"scenario": "/a/reference.toml", "config": "/a/run.toml",
                          "flights": 40, "seed": 7, "records": "cut",
                          "options": {"mcmc": False}, **study},
                "inputs": {"scenario": "s" * 64, "config": "c" * 64, "by": "values"}}
    doc = {"kind": "calibration", **coverage(records, ["v"]), "free": ["v"],
           "flights": records, "settings": settings, "seed": 7, "versions": {},
           "wall_s": 600.0, "flights_resumed": None,
           "campaign": {"done": len(records), "failed": 0, "implausible": 0,
                        "total": len(records)}}
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "calibration.json").write_text(json.dumps(doc))
    return directory


def test_merged_parts_give_the_table_of_all_their_flights(tmp_path, cli_run):
    """``study merge``: the table of two parts is the table of their union (computed again
    from the flights, compared with the whole computed directly), the flights are in index
    order, the parts and their wall times are recorded, and the report says it is merged."""
    recs = _records([True] * 12 + [False] * 8, [True] * 18 + [False] * 2)
    for i, r in enumerate(recs):
        r["flight"] = f"cal{i:02d}"
    a = _part(tmp_path / "a", recs[:7], flights=7)     # a whole 7-flight study, grown
    b = _part(tmp_path / "b", recs[7:][::-1], only="7-19")
    r = cli_run("study", "merge", a, b / "calibration.json", "-o", tmp_path / "ab")
    assert r.exit_code in (0, 3), r.output
    doc = json.loads((tmp_path / "ab" / "calibration.json").read_text())
    whole = coverage(recs, ["v"])
    assert doc["table"] == whole["table"] and doc["pooled"] == whole["pooled"]
    assert doc["hpd"] == whole["hpd"] and doc["n_flights"] == 20
    assert [f["flight"] for f in doc["flights"]] == [f"cal{i:02d}" for i in range(20)]
    assert doc["settings"]["study"]["only"] == "0-19" and doc["wall_s"] == 1200.0
    assert doc["settings"]["study"]["flights"] == 40
    assert [m["only"] for m in doc["settings"]["merged_from"]] == [None, "7-19"]
    assert doc["campaign"]["done"] == 20
    html = (tmp_path / "ab" / "report.html").read_text()
    assert "merged from 2 parts" in html and "summed over the parts" in html
    assert "a: 0-6;" in html and "b: 7-19<" in html      # each part's scored flights


def test_merge_refuses_parts_of_different_studies(tmp_path, cli_run):
    """One line naming the file and the setting, exit 2, nothing written: another seed,
    another configuration (by its digest), a flight scored twice, a single part."""
    recs = _records([True] * 4, [True] * 4)
    for i, r in enumerate(recs):
        r["flight"] = f"cal{i:02d}"
    a = _part(tmp_path / "a", recs[:2])
    cases = {"seed": _part(tmp_path / "b1", recs[2:], seed=8),
             "cal01": _part(tmp_path / "b3", recs[1:])}
    other = _part(tmp_path / "b2", recs[2:])
    doc = json.loads((other / "calibration.json").read_text())
    doc["settings"]["inputs"]["config"] = "d" * 64
    (other / "calibration.json").write_text(json.dumps(doc))
    cases["config"] = other
    for word, b in cases.items():
        r = cli_run("study", "merge", a, b, "-o", tmp_path / "out")
        assert r.exit_code == 2 and word in r.stderr and b.name in r.stderr, (word, r.stderr)
        assert "Traceback" not in r.stderr and not (tmp_path / "out").exists()
    r = cli_run("study", "merge", a, "-o", tmp_path / "out")
    assert r.exit_code == 2 and "two parts" in r.stderr
    r = cli_run("study", "merge", a, tmp_path / "b1", "-o", a)
    assert r.exit_code == 2 and "one of the parts" in r.stderr
