"""The learned proposal (recon.amortized): the network against a closed-form posterior, the
out-of-distribution check, a record's summary against the same flight simulated, the cache
and digest, and a reconstruction that starts from learned draws and says so."""
from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from models.errors import InputError
from recon import amortized as A

ROOT = Path(__file__).resolve().parents[2]
FLIGHTS = ROOT / "telemetry_samples" / "flights"
PROBE = ROOT / "models" / "probe_cone" / "presets" / "reference.toml"
PERIPHERAL = ROOT / "models" / "peripheral" / "presets" / "reference.toml"


def test_network_learns_the_closed_form_posterior_of_a_linear_gaussian_model():
    """theta ~ N(m0, s0^2 I) (2 parameters), x = A theta + noise (6 features, sd s): the
    posterior is Gaussian with a mean linear in x and a constant sd, known in closed form.
    Trained on 8000 draws the network's mean is within 0.5 posterior sd of it on fresh x
    (rms; measured 0.27: a fit of about 1300 weights to 7200 targets each scattered by one
    posterior sd has an estimation error of order sqrt(1300 / 7200) = 0.4 sd) and its sd within
    15 % (measured 1-8 %). Predicting the prior (no learning) misses by 5-7 sd, and a sign or
    scaling error in the loss, its gradient or the standardisation by more."""
    rng = np.random.default_rng(3)
    m0, s0, s = 0.5, 0.1, 0.05
    a = rng.normal(0.0, 1.0, (6, 2))
    theta = m0 + s0 * rng.standard_normal((9000, 2))
    x = theta @ a.T + s * rng.standard_normal((9000, 6))
    net, record = A.Network.fit(x[:8000], theta[:8000], hidden=(32, 32), epochs=200,
                                batch=128, lr=3e-3, seed=1, patience=30)
    prec = np.eye(2) / s0 ** 2 + a.T @ a / s ** 2
    cov = np.linalg.inv(prec)
    mean = (cov @ (m0 / s0 ** 2 + a.T @ x[8000:].T / s ** 2)).T
    mu, sd = net.predict(x[8000:])
    post_sd = np.sqrt(np.diag(cov))
    assert s0 / post_sd.max() > 3.0                      # the data do say something
    z = (mu - mean) / post_sd
    assert np.sqrt(np.mean(z ** 2)) < 0.5, np.sqrt(np.mean(z ** 2))
    np.testing.assert_allclose(np.median(sd, axis=0), post_sd, rtol=0.15)
    assert record["best_epoch"] >= 1 and math.isfinite(record["validation_loss"])


def test_out_of_distribution_check_flags_a_feature_vector_unlike_the_training_set():
    """Training features on a 3-dimensional plane in 20 dimensions: a point drawn like them
    passes, one off the plane (residual) and one far along it (distance) do not."""
    rng = np.random.default_rng(0)
    basis = np.linalg.qr(rng.normal(size=(20, 3)))[0].T
    x = rng.normal(size=(5000, 3)) @ basis + 0.01 * rng.normal(size=(5000, 20))
    ood = A.OutOfDistribution.fit(x, k=3, quantile=0.999)
    inside, _ = ood.check(rng.normal(size=3) @ basis)
    assert inside
    off = rng.normal(size=3) @ basis + 0.5 * np.linalg.svd(basis)[2][-1]
    assert not ood.check(off)[0]
    assert not ood.check(8.0 * basis[0])[0]


def _truth_features(flight: str, summary: A.Summary, unit, scn, gaps=()):
    """The summary of a shipped flight's truth simulated by the batch runner, noise free,
    with the continuous channels bridged over ``gaps`` (``(start, end)`` [s] from the
    contact edge) as a record's dropouts are."""
    truth = json.loads((FLIGHTS / f"{flight}.truth.json").read_text())["parameters"]
    names = [n for n in truth if n in unit.parameters]
    channels = (*summary.continuous, *summary.rates)
    runner = unit.batch(scn, names, channels, rate=200.0, duration=12.0,
                        t_pre=summary.rate_window)
    out, ev, status = runner.evaluate(np.array([[truth[n] for n in names]]))
    assert status[0] == 0
    events = dict((*unit.flag_events, *unit.clock_events))
    contact = ev[:, unit.event_column(events[unit.contact_flag])]
    flags = {f: ev[:, unit.event_column(events[f])] for f in summary.flags}
    t = np.asarray(runner.t, float)
    chans = {c: out[:, :, i].copy() for i, c in enumerate(channels)}
    for g0, g1 in gaps:       # the straight line over the gap, on the simulation's own grid
        for c in summary.continuous:
            x = chans[c][0]
            a, b = np.interp([contact[0] + g0, contact[0] + g1], t, x)
            inside = (t > contact[0] + g0) & (t < contact[0] + g1)
            x[inside] = np.interp(t[inside], [contact[0] + g0, contact[0] + g1], [a, b])
    return summary.of_simulation(t, chans, contact, flags, None)[0]


@pytest.mark.parametrize("flight", ["nominal", "realistic/nominal", "slow"])
def test_a_records_summary_matches_its_truth_simulated(flight):
    """The features of a shipped record (made by the flight recorder: its own clock, sampling,
    sample-and-hold, a dropout of the mechanism channels, noise and quantization) against the
    same flight simulated by the batch runner at 200 Hz, bridged over the record's dropouts:
    every continuous feature within 6 noise sigmas plus a quantum and the change over one
    record sample (the record's contact edge is known to a sample), the gyros' pre-contact
    means within 6 sigma of the mean, the flags' times within 2 record samples. A feature
    anchored on the wrong clock, a dropout read as data, or a gyro window on the wrong side of
    contact misses by far more (a 0.4-s dropout across the first strike: 13 mm of stroke)."""
    from recon.config import load_scenario
    from recon.observation import ObservationModel
    from recon.span import first_edge
    from recon.telemetry import load_telemetry

    unit, scn, _ = load_scenario(PROBE)
    obs = {c.channel: c for c in unit.sensor_suite.sensors}
    model = ObservationModel.from_dict(
        {"channels": {c: {"sigma": obs[c].sigma} for c in
                      ("stroke", "gimbal_pitch", "gimbal_yaw", "capture", "active_rate_x",
                       "active_rate_y", "passive_rate_z")}})
    summary = A.Summary.for_flight(unit, model)
    assert summary.continuous == ("stroke", "gimbal_pitch", "gimbal_yaw")
    assert summary.rates == ("active_rate_x", "active_rate_y", "passive_rate_z")
    assert summary.flags == ("capture",)
    record = load_telemetry(FLIGHTS / f"{flight}.parquet")
    f_rec, why = summary.of_record(record)
    assert f_rec is not None, why
    ts = record.samples("stroke")[0]
    dt = float(np.median(np.diff(ts)))
    t_c = first_edge(record, unit.contact_flag)
    wide = np.flatnonzero(np.diff(ts) > 1.5 * dt)
    gaps = [(ts[j] - t_c, ts[j + 1] - t_c) for j in wide]
    assert gaps                                  # every shipped record has a dropout
    f_sim = _truth_features(flight, summary, unit, scn, gaps)
    k = summary.tau.size
    i = 0
    for c in summary.continuous:
        s = obs[c]
        sim = f_sim[i:i + k]
        g = np.abs(np.gradient(sim, summary.dt))
        slope = np.maximum.reduce([g, np.roll(g, 1), np.roll(g, -1)]) * dt   # near a kink too
        tol = 6 * s.sigma + s.quantum + slope + 1e-9
        worst = np.max(np.abs(f_rec[i:i + k] - sim) / tol)
        assert worst <= 1.0, (c, worst)
        i += k
    kr = summary.tau_rates.size
    for c in summary.rates:
        s = obs[c]
        assert abs(f_rec[i] - f_sim[i]) <= 6 * s.sigma + s.quantum, c
        rec_dt = float(np.median(np.diff(record.samples(c)[0])))
        sim = f_sim[i + 1:i + 1 + kr]
        # a gyro is sampled every rec_dt [s] and held: its value at tau is up to one period old
        slope = np.abs(np.gradient(sim, summary.rate_dt)) * (rec_dt + dt)
        assert np.all(np.abs(f_rec[i + 1:i + 1 + kr] - sim)
                      <= 6 * s.sigma + s.quantum + slope + 1e-9), c
        i += 1 + kr
    assert abs(f_rec[i] - f_sim[i]) <= 2 * dt + 1e-9


def test_a_record_cut_shortly_before_contact_reads_as_the_whole_one():
    """A record that starts 0.1 s before first contact (less than the summary's 0.3 s) is
    read, its continuous channels held at their first sample before it: the mechanism is at
    rest in free flight, so each held feature lies within 6 noise sigmas plus a quantum of
    the whole record's feature there, and every other feature is the whole record's exactly.
    A record starting at the contact edge has no free flight and is refused."""
    from recon.config import load_scenario
    from recon.observation import ObservationModel
    from recon.span import first_edge
    from recon.telemetry import Telemetry, load_telemetry

    unit, scn, _ = load_scenario(PROBE)
    obs = {c.channel: c for c in unit.sensor_suite.sensors}
    names = ("stroke", "gimbal_pitch", "gimbal_yaw", "capture", "active_rate_x",
             "active_rate_y", "passive_rate_z")
    model = ObservationModel.from_dict({"channels": {c: {"sigma": obs[c].sigma}
                                                     for c in names}})
    summary = A.Summary.for_flight(unit, model)
    record = load_telemetry(FLIGHTS / "nominal.parquet")
    t_c = first_edge(record, unit.contact_flag)
    whole, why = summary.of_record(record)
    assert whole is not None, why
    cut, why = summary.of_record(record.window(t_c - 0.1))
    assert cut is not None, why
    k = summary.tau.size
    i = 0
    for c in summary.continuous:
        first = record.window(t_c - 0.1).samples(c)[0][0]
        held = t_c + summary.tau < first
        assert held.sum() >= 4
        a, b = whole[i:i + k], cut[i:i + k]
        assert np.all(np.abs(a[held] - b[held]) <= 6 * obs[c].sigma + obs[c].quantum), c
        np.testing.assert_array_equal(a[~held], b[~held])
        i += k
    kr = summary.tau_rates.size
    for c in summary.rates:
        # the gyro's pre-contact mean over the 0.1 s the cut record has, against the second
        # the whole one has: within 6 sigma of one sample; its readings after contact equal
        assert abs(whole[i] - cut[i]) <= 6 * obs[c].sigma + obs[c].quantum, c
        np.testing.assert_array_equal(whole[i + 1:i + 1 + kr], cut[i + 1:i + 1 + kr])
        i += 1 + kr
    np.testing.assert_array_equal(whole[i:], cut[i:])
    # the stroke not sampled before the contact edge (the flags are): no free flight
    part = record.window(t_c - 0.1)
    chans = {n: np.asarray(v, float).copy() for n, v in part.channels.items()}
    chans["stroke"][np.asarray(part.t) < t_c] = np.nan
    f, why = summary.of_record(Telemetry.from_arrays(part.t, chans))
    assert f is None and "'stroke' does not cover the free flight" in why


def test_simulated_dropouts_are_bridged_like_a_records():
    """The training features' dropouts: inside a gap the continuous features lie on the
    straight line between the channel's values at the gap's ends, outside it they are the
    channel's own; about ``gap_rate`` of the flights have one."""
    s = A.Summary(("x",), (), (), (0.0,), gap_rate=0.5, max_gap=0.6, jitter=0.0)
    t = np.linspace(-2.0, 5.0, 7001)
    n = 4000
    contact = np.full(n, 1.0)
    x = np.repeat(np.sin(3.0 * t)[None, :], n, axis=0)
    f = s.of_simulation(t, {"x": x}, contact, {}, np.random.default_rng(1))
    own = np.sin(3.0 * (1.0 + s.tau))
    changed = np.any(np.abs(f - own) > 1e-9, axis=1)
    assert 0.3 < changed.mean() < 0.5                 # gaps clipped to the window, some empty
    # a bridged row: one contiguous stretch changed, on a straight line (the grid is uniform)
    n_lines = 0
    for row in f[changed]:
        d = np.flatnonzero(np.abs(row - own) > 1e-9)
        assert np.all(np.diff(d) == 1)
        if d.size >= 3:
            assert np.allclose(np.diff(row[d], 2), 0.0, atol=1e-9)
            n_lines += 1
    assert n_lines > 100


def _config(tmp_path: Path, source: Path, extra: str = "") -> Path:
    text = source.read_text().replace("[optimizer]\n", f"[optimizer]\n{extra}", 1)
    path = tmp_path / source.name
    path.write_text(text)
    return path


def test_digest_follows_the_priors_not_the_span_or_the_clock():
    """One proposal serves a unit's cut and realistic-span run configurations (same priors
    and channels; another clock prior and span); a changed prior, another unit or another
    scenario value gives another digest."""
    import tomllib

    from recon.config import RunConfig, load_scenario

    def key(scenario, config, edit=None):
        unit, scn, _ = load_scenario(scenario)
        run = tomllib.loads(Path(config).read_text())
        if edit:
            edit(run, scn)
        cfg = RunConfig.from_dict(run)
        return A.digest(unit, scn, cfg.space, cfg.observation,
                        A.Summary.for_flight(unit, cfg.observation))

    cut = key(PROBE, FLIGHTS / "run.toml")
    assert cut == key(PROBE, FLIGHTS / "realistic" / "run.toml")
    assert len(cut) == 64

    def wider(run, scn):
        run["parameters"]["rel_vel_x"]["upper"] = 0.5

    assert key(PROBE, FLIGHTS / "run.toml", wider) != cut
    assert key(PERIPHERAL, FLIGHTS / "peripheral" / "run.toml") != cut
    unit, scn, _ = load_scenario(PROBE)
    cfg = RunConfig.from_dict(tomllib.loads((FLIGHTS / "run.toml").read_text()))
    summary = A.Summary.for_flight(unit, cfg.observation)
    import dataclasses

    heavier = dataclasses.replace(scn, passive=dataclasses.replace(scn.passive, mass=20000.0))
    assert A.digest(unit, heavier, cfg.space, cfg.observation, summary) != cut


def test_resolve_proposal_refuses_a_file_of_another_scenario(tmp_path, monkeypatch):
    """``[optimizer] proposal``: "off" and an empty cache give no proposal and say why; a
    file that is not a proposal, or one trained for other priors, is refused naming the key."""
    import tomllib

    from recon.config import RunConfig, load_scenario

    monkeypatch.setenv(A.CACHE_ENV, str(tmp_path / "cache"))
    unit, scn, _ = load_scenario(PROBE)
    cfg = RunConfig.from_dict(tomllib.loads((FLIGHTS / "run.toml").read_text()))
    prop, info = A.resolve_proposal("off", unit, scn, cfg.space, cfg.observation)
    assert prop is None and "off" in info["reason"]
    # the shipped proposal of the shipped priors, unless the user's cache has its own
    prop, info = A.resolve_proposal("auto", unit, scn, cfg.space, cfg.observation)
    assert prop is not None and info["source"] == "shipped"
    mine = tmp_path / "cache" / "proposals" / f"{prop.digest}.npz"
    mine.parent.mkdir(parents=True)
    mine.write_bytes((A.shipped_dir() / f"{prop.digest}.npz").read_bytes())
    assert A.resolve_proposal("auto", unit, scn, cfg.space, cfg.observation)[1]["source"] \
        == "cache"
    mine.unlink()
    monkeypatch.setattr(A, "SHIPPED_DIR", tmp_path / "none")
    prop, info = A.resolve_proposal("auto", unit, scn, cfg.space, cfg.observation)
    assert prop is None and "dockrecon train" in info["reason"]
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a proposal")
    with pytest.raises(InputError) as e:
        A.resolve_proposal(str(junk), unit, scn, cfg.space, cfg.observation)
    assert e.value.key == "optimizer.proposal"
    summary = A.Summary.for_flight(unit, cfg.observation)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, summary.size))
    net, _ = A.Network.fit(x, rng.random((300, 11)), hidden=(8,), epochs=2)
    other = A.Proposal(summary, net, A.OutOfDistribution.fit(x), tuple("abcdefghijk"),
                       np.zeros(11), np.ones(11), "0" * 64, {})
    path = other.save(tmp_path / "other.npz")
    back = A.Proposal.load(path)
    np.testing.assert_array_equal(back.network.predict(x[:3])[0], net.predict(x[:3])[0])
    assert back.summary == summary and back.names == other.names
    with pytest.raises(InputError, match="trained for another scenario") as e:
        A.resolve_proposal(str(path), unit, scn, cfg.space, cfg.observation)
    assert e.value.key == "optimizer.proposal"
    # a campaign's flights share one read of the file; a rewritten file is read again
    assert A.load_proposal(path) is A.load_proposal(path)
    first = A.load_proposal(path)
    os.utime(path, ns=(0, 0))
    assert A.load_proposal(path) is not first


def test_training_observation_takes_auto_noise_from_the_units_sensor_model():
    from recon.config import load_scenario

    unit, _, _ = load_scenario(PROBE)
    sensors = {s.channel: s for s in unit.sensor_suite.sensors}
    table = A.training_observation(unit, {"channels": {"stroke": {"sigma": "auto",
                                                                  "quantum": "auto"},
                                                       "capture": {"sigma": 0.01}}})
    assert table["channels"]["stroke"] == {"sigma": sensors["stroke"].sigma,
                                           "quantum": sensors["stroke"].quantum}
    assert table["channels"]["capture"] == {"sigma": 0.01}
    default = A.training_observation(unit, None)
    assert set(default["channels"]) == set(unit.fitted_channels)


@pytest.mark.slow
def test_train_then_reconstruct_starts_from_learned_draws(cli_run, tmp_path, monkeypatch):
    """``dockrecon train`` writes a proposal into the user cache (``DOCKRECON_CACHE``), and
    ``reconstruct`` of a record of that scenario and priors finds it, starts its search from
    the learned draws and says so in ``result.json`` (a reconstruction that screens says why:
    tests/recon/test_docking.py). A small proposal and fast settings: this checks the plumbing,
    not the accuracy; about 2 minutes of training and reconstruction, so with the slow tests
    (validate refusing a proposal file and the screened reconstruction's record are in the
    default suite)."""
    from tests.recon._fast import fast_config

    monkeypatch.setenv(A.CACHE_ENV, str(tmp_path / "cache"))
    r = cli_run("train", PROBE, "--config", FLIGHTS / "run.toml", "--flights", 600,
                "--epochs", 5, "--seed", 2)
    assert r.exit_code == 0, r.output
    written = list((tmp_path / "cache" / "proposals").glob("*.npz"))
    assert len(written) == 1 and written[0].stem[:16] in r.stdout
    cfg = fast_config(tmp_path)
    out = tmp_path / "learned"
    r = cli_run("reconstruct", FLIGHTS / "nominal.parquet", "--scenario", PROBE, "--config",
                cfg, "--mcmc", "never", "-o", out)
    assert r.exit_code in (0, 3), r.output
    res = json.loads((out / "result.json").read_text())
    starts = res["diagnostics"]["search"]["starts"]
    assert starts["proposal"]["digest"] == written[0].stem[:16]
    assert starts["path"] == "learned", starts
    assert starts["draws"] == 64 and math.isfinite(starts["best_cost"])
    assert res["settings"]["engine"]["search_retries"] == 1     # fast: 0 screens, + learned


def test_train_refuses_a_parameter_it_cannot_learn(cli_run, tmp_path):
    cfg = _config(tmp_path, FLIGHTS / "run.toml")
    cfg.write_text(cfg.read_text() + '\n[parameters.stroke_bias]\nlower = -0.01\nupper = 0.01\n')
    r = cli_run("train", PROBE, "--config", cfg, "--flights", 500)
    assert r.exit_code == 2
    assert "parameters.stroke_bias" in r.output and str(cfg) in r.output


def test_validate_refuses_a_proposal_file_reconstruct_would_refuse(cli_run, tmp_path):
    """``[optimizer] proposal`` naming a file that is not there: ``validate --scenario
    --config`` refuses it as reconstruct would, naming the configuration and the key, before
    any model run; the path counts from the configuration's directory."""
    cfg = _config(tmp_path, FLIGHTS / "run.toml", 'proposal = "nowhere.npz"\n')
    r = cli_run("validate", FLIGHTS / "nominal.parquet", "--scenario", PROBE, "--config", cfg)
    assert r.exit_code == 2, r.output
    assert "optimizer.proposal" in r.output and str(tmp_path / "nowhere.npz") in r.output
    assert "Traceback" not in r.output


#: the units whose shipped flights have a shipped proposal (the peripheral unit's is not
#: trained yet: its flights screen)
SHIPPED_PROPOSAL_UNITS = ("probe_cone",)


def test_every_shipped_flight_finds_the_proposal_shipped_for_it():
    """The package ships a learned proposal for the shipped presets and run configurations
    of :data:`SHIPPED_PROPOSAL_UNITS` (``make proposals``), and only those: every flight of
    the shipped campaign of those units resolves ``proposal = "auto"`` to a shipped file (the
    test session's cache is empty), and every shipped file serves one of them. A preset,
    prior or channel changed without retraining changes the digest and fails here, rather
    than the shipped flights silently screening."""
    from recon.app.campaign import load_manifest
    from recon.flight import flight_problem

    used = set()
    for spec in load_manifest(FLIGHTS / "campaign.toml"):
        flight = flight_problem(list(spec.telemetry), spec.scenario, config=spec.config)
        info = flight.proposal_choice
        if flight.unit.name not in SHIPPED_PROPOSAL_UNITS:
            assert flight.proposal is None, spec.name
            continue
        assert flight.proposal is not None and info.get("source") == "shipped", (spec.name,
                                                                                  info)
        assert flight.proposal.digest[:16] == info["digest"]
        used.add(flight.proposal.digest)
    shipped = {p.stem for p in A.shipped_dir().glob("*.npz")}
    assert shipped == used
    for key in shipped:
        prop = A.load_proposal(A.shipped_dir() / f"{key}.npz")
        assert prop.digest == key and prop.record["training_seed"] == 1
