"""Campaigns (recon.app.campaign, ``dockrecon campaign``): the manifest and its errors, the
catalog of a result, and whole campaigns on an embedded 2-worker Dask cluster: the same
numbers as serial ``reconstruct`` runs with the same seeds, refused flights recorded without
stopping the campaign, ``--resume`` keeping finished flights."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from models.errors import InputError
from recon.app.campaign import (FLIGHT_STAMP, FlightSpec, catalog_rows, completed, load_manifest,
                                spec_digest)
from tests.recon._fast import fast_config

ROOT = Path(__file__).resolve().parents[3]
FLIGHTS = ROOT / "telemetry_samples" / "flights"
SCENARIO = ROOT / "models" / "probe_cone" / "presets" / "reference.toml"
STORED = ROOT / "tests" / "reports" / "data" / "reconstruction" / "result.json"


def _manifest(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "campaign.toml"
    path.write_text(body)
    return path


def test_manifest_flights_globs_defaults_and_relative_paths(tmp_path):
    cfg = fast_config(tmp_path)
    for n in ("nominal", "misaligned"):
        shutil.copy(FLIGHTS / f"{n}.parquet", tmp_path / f"{n}.parquet")
        shutil.copy(FLIGHTS / f"{n}.truth.json", tmp_path / f"{n}.truth.json")
    (tmp_path / "sub").mkdir()
    shutil.copy(FLIGHTS / "slow.parquet", tmp_path / "sub" / "slow.parquet")
    m = _manifest(tmp_path, f"""
[defaults]
scenario = "{SCENARIO}"
config = "run.toml"
seed = 3
[defaults.options]
mcmc = false

[[flight]]
name = "first"
telemetry = "nominal.parquet"
truth = "nominal.truth.json"
seed = 5
options = {{ starts = 2 }}

[[glob]]
pattern = "*.parquet"

[[glob]]
pattern = "sub/*.parquet"
config = "{FLIGHTS / 'slow.run.toml'}"
""")
    specs = load_manifest(m)
    assert [s.name for s in specs] == ["first", "misaligned", "nominal", "slow"]
    first = specs[0]
    assert first.seed == 5 and first.options == {"mcmc": False, "starts": 2}
    assert first.telemetry == (str(tmp_path / "nominal.parquet"),)
    assert first.truth == str(tmp_path / "nominal.truth.json") and first.config == str(cfg)
    assert specs[1].seed == 3 and specs[1].truth == str(tmp_path / "misaligned.truth.json")
    assert specs[3].truth is None and specs[3].config == str(FLIGHTS / "slow.run.toml")
    # the digest follows the files' contents and the settings, not the paths' spelling
    d = spec_digest(first)
    assert d == spec_digest(FlightSpec(**{**first.to_dict(),
                                          "telemetry": tuple(first.telemetry)}))
    assert d != spec_digest(FlightSpec(**{**first.to_dict(), "telemetry": first.telemetry,
                                          "seed": 6}))
    # a TOML file counts by its tables: a comment does not make the flight stale, a value does
    legacy = spec_digest(first, parsed=False)
    cfg.write_text(cfg.read_text() + "\n# edited\n")
    assert spec_digest(first) == d and spec_digest(first, parsed=False) != legacy
    cfg.write_text(cfg.read_text().replace("screen = 32", "screen = 33", 1))
    assert spec_digest(first) != d


def _bookkeeping_worker(spec, out: str) -> dict:
    """A campaign job that reconstructs nothing: an empty result and the stamp, all the
    campaign's bookkeeping (``resume``, ``on_flight``) looks at."""
    d = Path(out) / spec.name
    d.mkdir(parents=True, exist_ok=True)
    (d / "result.json").write_text("{}")
    stamp = {"digest": spec_digest(spec), "status": "ok", "wall_s": 0.0, "score": spec.name}
    (d / FLIGHT_STAMP).write_text(json.dumps(stamp))
    return stamp


def test_flights_kept_by_resume_reach_on_flight_before_the_others(tmp_path):
    """``on_flight`` hears of every flight of the campaign: those kept by ``resume`` (state
    ``resumed``, their stamp as written) before any flight of this sitting ends, so a caller
    that writes a table after every flight (the calibration study) counts them from the
    first write; without ``resume`` no flight is reported as kept."""
    from recon.app.campaign import run_campaign

    cfg = str(fast_config(tmp_path))
    specs = [FlightSpec(name=n, telemetry=(str(FLIGHTS / "nominal.parquet"),),
                        scenario=str(SCENARIO), config=cfg) for n in ("a", "b", "c")]
    out = tmp_path / "out"
    heard: list[tuple] = []

    def on_flight(name, state):
        heard.append((name, bool(state.get("resumed")), state.get("score")))

    run_campaign(specs[:2], out, _bookkeeping_worker, workers=1, on_flight=on_flight)
    assert sorted(heard) == [("a", False, "a"), ("b", False, "b")]
    heard.clear()
    doc = run_campaign(specs, out, _bookkeeping_worker, workers=1, resume=True,
                       on_flight=on_flight)
    assert heard == [("a", True, "a"), ("b", True, "b"), ("c", False, "c")]
    assert doc["counts"]["done"] == 3


def test_resume_accepts_this_and_the_byte_digest_of_a_flight_and_nothing_else(tmp_path):
    """A flight stamped with the digest of earlier versions (every file by its bytes) is still
    complete for ``resume``; any other digest, or a missing result, is not."""
    spec = FlightSpec(name="f", telemetry=(str(FLIGHTS / "nominal.parquet"),),
                      scenario=str(SCENARIO), config=str(fast_config(tmp_path)))
    d = tmp_path / "out" / "f"
    d.mkdir(parents=True)
    for digest, kept in ((spec_digest(spec), True), (spec_digest(spec, parsed=False), True),
                         ("0" * 64, False)):
        (d / FLIGHT_STAMP).write_text(json.dumps({"digest": digest, "status": "ok"}))
        (d / "result.json").write_text("{}")
        assert (completed(spec, tmp_path / "out") is not None) is kept, digest
        (d / "result.json").unlink()
        assert completed(spec, tmp_path / "out") is None


@pytest.mark.parametrize("body, key, what", [
    ('[[flight]]\nname = "a"\ntelemetry = "x.parquet"\nscenario = "S"', "flight[0].telemetry",
     "no such file"),
    ('[defaults]\nscenario = "S"\nbogus = 1', "defaults.bogus", "unknown key"),
    ('[[flight]]\nname = "a/b"\ntelemetry = "T"\nscenario = "S"', "flight[0].name",
     "letters, digits"),
    ('[[flight]]\nname = "a"\ntelemetry = "T"\nscenario = "S"\noptions = { steps = -1 }',
     "flight[0].options.steps", "whole number"),
    ('[[flight]]\nname = "a"\ntelemetry = "T"\nscenario = "S"\noptions = { gibbs = 1 }',
     "flight[0].options.gibbs", "unknown option"),
    ('[[flight]]\nname = "a"\ntelemetry = "T"\nscenario = "S"\n'
     '[[flight]]\nname = "a"\ntelemetry = "T"\nscenario = "S"', "flight", "two flights"),
    ('[[glob]]\npattern = "none/*.parquet"\nscenario = "S"', "glob[0].pattern",
     "matches no file"),
    ('[[flight]]\nname = "a"\ntelemetry = "T"', "flight[0].scenario", "no scenario"),
    ("", None, "no flights"),
])
def test_manifest_errors_name_the_file_and_key(tmp_path, body, key, what):
    (tmp_path / "T").write_text("t")
    (tmp_path / "S").write_text("s")
    m = _manifest(tmp_path, body)
    with pytest.raises(InputError, match=what) as err:
        load_manifest(m)
    assert err.value.source == str(m) and err.value.key == key


def test_catalog_rows_of_a_result_and_of_a_refused_flight():
    doc = json.loads(STORED.read_text())
    free = [n for n, p in doc["parameters"].items() if p["prior"]["kind"] != "fixed"]
    p = doc["parameters"]["rel_vel_x"]
    truth = {"rel_vel_x": p["ci68"][1], "rel_pos_y": doc["parameters"]["rel_pos_y"]["ci95"][1]
             + 1.0}
    rows = catalog_rows("nominal", doc, truth=truth, wall_s=12.5)
    assert [r["parameter"] for r in rows] == free
    r = {row["parameter"]: row for row in rows}
    v = r["rel_vel_x"]
    assert (v["map"], v["median"], v["ci95_lo"], v["unit"]) == (p["map"], p["median"],
                                                                p["ci95"][0], "m/s")
    assert v["in68"] and v["in95"] and v["z"] == pytest.approx(
        (p["ci68"][1] - p["median"]) / (0.5 * (p["ci68"][1] - p["ci68"][0])))
    assert not r["rel_pos_y"]["in95"] and r["rel_roll"]["truth"] is None
    assert v["status"] == "ok" and v["method"] == "mcmc" and "mcmc step_limit" in \
        v["diagnostics"] and v["wall_s"] == 12.5
    bad = catalog_rows("broken", None, status="error", reason="x.parquet: empty file")
    assert len(bad) == 1 and bad[0]["parameter"] is None and bad[0]["status"] == "error"
    assert bad[0]["status_reason"] == "x.parquet: empty file"


def _shipped_manifest(tmp_path: Path, *, broken: bool = False) -> Path:
    cfg = fast_config(tmp_path)
    flights = "".join(f"""
[[flight]]
name = "{n}"
telemetry = "{FLIGHTS / f'{n}.parquet'}"
truth = "{FLIGHTS / f'{n}.truth.json'}"
""" for n in SHIPPED)
    if broken:
        (tmp_path / "empty.parquet").write_bytes(b"")
        flights += '\n[[flight]]\nname = "broken"\ntelemetry = "empty.parquet"\n'
    return _manifest(tmp_path, f"""
[defaults]
scenario = "{SCENARIO}"
config = "{cfg}"
seed = 2
[defaults.options]
mcmc = false
""" + flights)


#: the shipped probe-cone flights cut to the model window
SHIPPED = ("nominal", "misaligned", "slow")


@pytest.mark.slow
def test_campaign_matches_serial_runs_records_refused_flights_and_resumes(cli_run, tmp_path):
    """The three shipped flights and one empty file on a 2-worker LocalCluster: each flight's
    result equals a serial ``reconstruct`` with the same seed and settings (MAP and intervals
    to the last digit: the same computation), the empty file is recorded as refused with
    reconstruct's own one-line reason and exit code 3 says a flight is not reconstructed;
    ``--resume`` redoes nothing complete."""
    m = _shipped_manifest(tmp_path, broken=True)
    out = tmp_path / "camp"
    r = cli_run("campaign", m, "-o", out, "--workers", "2")
    assert r.exit_code == 3, r.output
    assert "not reconstructed: " in r.stderr and "broken" in r.stderr.split(
        "not reconstructed: ")[1] and "Traceback" not in r.output
    assert "campaign: 4/4" not in r.stderr and "3/4 done" in r.stderr
    cat = pd.read_parquet(out / "catalog.parquet")
    doc = json.loads((out / "campaign.json").read_text())
    assert doc["flights"]["broken"]["state"] == "error"
    assert "empty.parquet" in doc["flights"]["broken"]["reason"]
    assert cat[cat.flight == "broken"].parameter.isna().all()
    html = (out / "report.html").read_text()
    assert "Docking reconstruction campaign (with failures)" in html and "broken" in html
    for name in SHIPPED:
        serial = tmp_path / f"serial_{name}"
        s = cli_run("-q", "reconstruct", FLIGHTS / f"{name}.parquet", "--scenario", SCENARIO,
                    "--config", tmp_path / "run.toml", "--seed", 2, "--mcmc", "never", "-o", serial)
        want = json.loads((serial / "result.json").read_text())
        got = json.loads((out / name / "result.json").read_text())
        # fast settings may leave a fit implausible (exit 3): the same in both runs
        assert s.exit_code == {"ok": 0, "implausible": 3}[want["status"]], s.output
        assert got["status"] == want["status"] == doc["flights"][name]["status"], name
        assert got["parameters"] == want["parameters"], name
        assert (out / name / "report.html").exists() and (out / name / FLIGHT_STAMP).exists()
        assert json.loads((out / name / FLIGHT_STAMP).read_text())["kind"] == "campaign_flight"
        assert got["kind"] == "reconstruction" and doc["kind"] == "campaign"
        rows = cat[cat.flight == name].set_index("parameter")
        for pname, p in want["parameters"].items():
            if p["prior"]["kind"] == "fixed":
                continue
            assert rows.loc[pname, "median"] == p["median"]
            assert rows.loc[pname, "ci95_hi"] == p["ci95"][1]
        truth = json.loads((FLIGHTS / f"{name}.truth.json").read_text())["parameters"]
        assert rows.loc["rel_vel_x", "truth"] == truth["rel_vel_x"]
    # resume: the three complete flights are kept (their files untouched), the refused one
    # is tried again
    before = {n: (out / n / "result.json").stat().st_mtime_ns for n in SHIPPED}
    r2 = cli_run("campaign", m, "-o", out, "--workers", "1", "--resume")
    assert r2.exit_code == 3
    assert before == {n: (out / n / "result.json").stat().st_mtime_ns for n in before}
    doc2 = json.loads((out / "campaign.json").read_text())
    assert doc2["flights"]["nominal"]["resumed"] and doc2["counts"]["done"] == 3
    assert pd.read_parquet(out / "catalog.parquet").equals(cat.assign(
        wall_s=pd.read_parquet(out / "catalog.parquet").wall_s))


def _worker_signal_and_log_levels():
    import logging
    import signal
    return (signal.getsignal(signal.SIGINT) is signal.SIG_IGN,
            {n: logging.getLogger(n).level for n in ("distributed", "tornado",
                                                     "tornado.application")})


@pytest.mark.parametrize("verbose", [False, True])
def test_embedded_workers_leave_ctrl_c_to_the_client_and_keep_quiet(verbose):
    """The embedded cluster's worker processes ignore SIGINT (Ctrl-C reaches the whole process
    group; the client owns it) and, unless the client runs verbose, log only CRITICAL, so no
    worker traceback of a broken connection reaches the user after Ctrl-C."""
    import logging

    from recon.app.campaign import _client, _close

    import signal

    log = logging.getLogger("dockrecon")
    old = log.level
    log.setLevel(logging.INFO if verbose else logging.WARNING)
    # the workers must not inherit an ignored SIGINT (as under a background shell job): only
    # their own set-up may ignore it
    old_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        client, cluster = _client(1, None, 1)
        try:
            (ignored, levels), = client.run(_worker_signal_and_log_levels).values()
        finally:
            _close(client, cluster)
    finally:
        signal.signal(signal.SIGINT, old_int)
        log.setLevel(old)
        from recon.app.dask_worker import quiet_logs
        quiet_logs(True)
    assert ignored
    want = logging.INFO if verbose else logging.CRITICAL
    assert levels == {"distributed": want, "tornado": want, "tornado.application": want}


def _worker_dask_settings(dask_worker):
    import dask
    return ({k: dask.config.get(k) for k in (
                "distributed.worker.profile.enabled",
                "distributed.admin.system-monitor.interval",
                "distributed.admin.tick.interval")},
            sorted(dask_worker.periodic_callbacks),
            dask_worker.periodic_callbacks["monitor"].callback_time,
            dask_worker.periodic_callbacks["tick"].callback_time)


def test_embedded_workers_run_without_the_dashboard_machinery():
    """The embedded cluster has no dashboard, so its workers run with EMBEDDED_DASK_CONFIG:
    no statistical profiler (no 'profile' callbacks), the system monitor every 5 s and the
    event-loop tick every 1 s (callback times in ms), as the scheduler does; the client's own
    Dask configuration is left as it was."""
    import dask
    import distributed  # noqa: F401  (its import adds the distributed.* defaults to dask.config)

    from recon.app.campaign import EMBEDDED_DASK_CONFIG, _client, _close

    keys = list(EMBEDDED_DASK_CONFIG)
    before = {k: dask.config.get(k) for k in keys}
    assert before != EMBEDDED_DASK_CONFIG      # Dask's defaults differ, so the check can fail
    client, cluster = _client(1, None, 1)
    try:
        (conf, callbacks, monitor_ms, tick_ms), = client.run(_worker_dask_settings).values()
        sched_monitor_ms = client.run_on_scheduler(
            lambda dask_scheduler: dask_scheduler.periodic_callbacks["monitor"].callback_time)
    finally:
        _close(client, cluster)
    assert conf == EMBEDDED_DASK_CONFIG
    assert "profile" not in callbacks and "profile-cycle" not in callbacks
    assert {"heartbeat", "monitor", "tick"} <= set(callbacks)
    assert (monitor_ms, tick_ms) == (5000.0, 1000.0)
    assert sched_monitor_ms == 5000.0
    assert {k: dask.config.get(k) for k in keys} == before


def test_two_embedded_clusters_start_side_by_side_without_a_warning():
    """Two campaigns on one machine: each embedded scheduler's HTTP server (health and metrics
    routes; no dashboard) takes a free loopback port, so neither warns on the user's terminal
    that port 8787 is in use (Dask's default, which it warns about and then moves off)."""
    import warnings

    from recon.app.campaign import _client, _close

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = _client(1, None, 1)
        try:
            second = _client(1, None, 1)
            try:
                ports = [c.run_on_scheduler(
                    lambda dask_scheduler: (dask_scheduler.http_server.address,
                                            dask_scheduler.http_server.port))
                         for c, _ in (first, second)]
            finally:
                _close(*second)
        finally:
            _close(*first)
    assert not [w for w in caught if "already in use" in str(w.message)], \
        [str(w.message) for w in caught]
    assert ports[0] != ports[1] and {a for a, _ in ports} == {"127.0.0.1"}


def test_the_shipped_manifest_lists_every_shipped_flight_of_both_units():
    """telemetry_samples/flights/campaign.toml: every shipped record with its truth beside it
    (the cut and realistic probe-cone flights, the peripheral flights), each under a scenario
    of its own docking unit (a record of the other unit would be refused:
    :func:`recon.flight.check_record_unit`) and an existing run configuration."""
    from recon.flight import check_record_unit, load_scenario
    from recon.telemetry import load_telemetry

    specs = load_manifest(FLIGHTS / "campaign.toml")
    shipped = {p.relative_to(FLIGHTS).as_posix()
               for p in FLIGHTS.rglob("*.parquet")}
    listed = {Path(s.telemetry[0]).resolve().relative_to(FLIGHTS.resolve()).as_posix()
              for s in specs}
    assert listed == shipped
    units = set()
    for s in specs:
        assert s.truth is not None and Path(s.truth).exists() and Path(s.config).exists()
        unit = load_scenario(s.scenario)[0]
        check_record_unit(load_telemetry(s.telemetry), unit)
        units.add(unit.name)
    assert units == {"probe_cone", "peripheral"}


def test_campaign_mcmc_option_overrides_every_flight(cli_run, tmp_path, monkeypatch):
    """``campaign --mcmc MODE`` sets every flight's ``mcmc`` option over the manifest's (the
    shipped manifest says false); without it the manifest's stands; another word is refused
    by the option, naming it."""
    import recon.app.campaign as campaign

    seen = []

    def stop(specs, *args, **kwargs):
        seen.append([dict(s.options) for s in specs])
        raise SystemExit(9)

    monkeypatch.setattr(campaign, "run_campaign", stop)
    manifest = ROOT / "telemetry_samples" / "flights" / "campaign.toml"
    r = cli_run("campaign", manifest, "-o", tmp_path / "a", "--mcmc", "always")
    assert r.exit_code == 9 and seen[-1] and all(o["mcmc"] == "always" for o in seen[-1])
    r = cli_run("campaign", manifest, "-o", tmp_path / "b")
    assert r.exit_code == 9 and all(o.get("mcmc") is False for o in seen[-1])
    r = cli_run("campaign", manifest, "-o", tmp_path / "c", "--mcmc", "sometimes")
    assert r.exit_code == 2 and "--mcmc" in r.stderr


def test_scheduler_file_gives_the_scheduler_address(cli_run, tmp_path, monkeypatch):
    """``--scheduler-file FILE`` (as ``dask scheduler --scheduler-file`` writes it) connects
    to the address in it; two ways of naming the cluster at once, a missing file and a file
    without an address are refused, naming the option and the file."""
    import recon.app.campaign as campaign
    from recon.app.cli.campaign import check_executor

    sched = tmp_path / "scheduler.json"
    sched.write_text(json.dumps({"type": "Scheduler", "id": "Scheduler-1",
                                 "address": "tcp://10.1.2.3:8786", "services": {}}))
    assert check_executor(None, None, str(sched)) == "tcp://10.1.2.3:8786"
    assert check_executor(None, "tcp://h:1") == "tcp://h:1"
    assert check_executor(3, None) is None
    with pytest.raises(InputError) as e:
        check_executor(2, None, str(sched))
    assert e.value.key == "--workers" and "--scheduler-file" in str(e.value)
    for bad, why in ((tmp_path / "none.json", "no such file"),
                     (tmp_path / "manifest.toml", "not a Dask scheduler file")):
        if bad.suffix == ".toml":
            bad.write_text("[defaults]\n")
        with pytest.raises(InputError) as e:
            check_executor(None, None, str(bad))
        assert e.value.key == "--scheduler-file" and why in str(e.value)
        assert str(bad) in str(e.value)
    seen = {}

    def stop(specs, out, worker, **kwargs):
        seen.update(kwargs)
        raise SystemExit(9)

    monkeypatch.setattr(campaign, "run_campaign", stop)
    manifest = ROOT / "telemetry_samples" / "flights" / "campaign.toml"
    r = cli_run("campaign", manifest, "-o", tmp_path / "a", "--scheduler-file", sched)
    assert r.exit_code == 9 and seen["scheduler"] == "tcp://10.1.2.3:8786"


def test_the_dashboard_is_served_when_asked_for_and_named(cli_run, tmp_path, monkeypatch):
    """``--dashboard``: the embedded cluster serves Dask's dashboard, whose status page
    answers at the address given; the commands hand that address to the user on stderr;
    without Bokeh the option is refused, naming it and the install line."""
    import sys
    import urllib.request

    import recon.app.campaign as campaign
    from recon.app.campaign import _client, _close, check_dashboard

    client, cluster = _client(1, None, 1, dashboard=True)
    try:
        link = client.dashboard_link
        assert link.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(link, timeout=30) as page:
            assert page.status == 200
    finally:
        _close(client, cluster)
    seen = {}

    def stop(specs, out, worker, **kwargs):
        if kwargs["dashboard"] is not None:
            kwargs["dashboard"]("http://127.0.0.1:8787/status")
        seen.update(kwargs)
        raise SystemExit(9)

    monkeypatch.setattr(campaign, "run_campaign", stop)
    manifest = ROOT / "telemetry_samples" / "flights" / "campaign.toml"
    r = cli_run("campaign", manifest, "-o", tmp_path / "a", "--dashboard", "-q")
    assert r.exit_code == 9 and "Dask dashboard: http://127.0.0.1:8787/status" in r.stderr
    r = cli_run("campaign", manifest, "-o", tmp_path / "b")
    assert r.exit_code == 9 and seen["dashboard"] is None
    monkeypatch.setitem(sys.modules, "bokeh", None)     # as if Bokeh were not installed
    with pytest.raises(InputError) as e:
        check_dashboard()
    assert e.value.key == "--dashboard" and "dockrecon[dashboard]" in str(e.value)
    r = cli_run("campaign", manifest, "-o", tmp_path / "c", "--dashboard")
    assert r.exit_code == 2 and "--dashboard" in r.stderr


def test_campaign_seed_is_the_seed_of_flights_the_manifest_gives_none(tmp_path):
    """``campaign --seed N`` (load_manifest's ``seed``): a flight's own seed comes first, then
    [defaults] seed, then N."""
    shutil.copy(FLIGHTS / "nominal.parquet", tmp_path / "nominal.parquet")
    body = f"""
[defaults]
scenario = "{SCENARIO}"
{{seed}}
[[flight]]
name = "own"
telemetry = "nominal.parquet"
seed = 5

[[flight]]
name = "other"
telemetry = "nominal.parquet"
"""
    m = _manifest(tmp_path, body.format(seed=""))
    assert [s.seed for s in load_manifest(m, seed=11)] == [5, 11]
    assert [s.seed for s in load_manifest(m)] == [5, 0]
    m = _manifest(tmp_path, body.format(seed="seed = 3"))
    assert [s.seed for s in load_manifest(m, seed=11)] == [5, 3]
