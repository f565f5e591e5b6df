"""MCMC engine: the analytic posterior of the linear-Gaussian model, ArviZ's R-hat, stop
reasons, resume after a kill, and the posterior as InferenceData."""
import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from models.errors import InputError
from identification.engines.mcmc import (SamplerSettings, _arviz_stats, diagnose, read_chains,
                                         run_ensembles)
from tests.recon._toy import linear_posterior, linear_problem

ROOT = Path(__file__).resolve().parents[2]


def _run(prob, path, settings, seed=7, resume=False, mean=None):
    x0 = np.zeros(3) if mean is None else mean
    return run_ensembles(prob.log_probability, x0, np.full(3, 0.005), prob.space.lower,
                         prob.space.upper, path, names=prob.names, settings=settings, seed=seed,
                         resume=resume)


@pytest.mark.parametrize("moves", ["de-snooker", "stretch"])
def test_linear_gaussian_posterior_is_reproduced(tmp_path, moves):
    prob, _, A, y = linear_problem()
    mean, cov = linear_posterior(A, y)
    sd = np.sqrt(np.diag(cov))
    st = SamplerSettings(walkers=16, ensembles=2, max_steps=1500, check_every=250,
                         min_ess=1500, moves=moves)
    res = _run(prob, tmp_path / "c.h5", st, mean=mean)
    d = res.diagnostics
    ess = d.ess_bulk
    # ArviZ's bulk ESS (walkers as chains) of 2 x 16 walkers x 1500 steps: 590-640 measured
    # (its tail ESS is similar); the checks below scale with it
    assert np.all(ess > 450) and np.all(d.ess_tail > 450), (ess, d.ess_tail)
    s = res.samples
    # Monte Carlo error of a mean: sd / sqrt(ESS); 5 of them (a 1-in-1e6 failure if right)
    assert np.all(np.abs(s.mean(0) - mean) < 5 * sd / np.sqrt(ess))
    # of a standard deviation: ~ sd / sqrt(2 ESS) -> 5 of them <= 12 %
    np.testing.assert_allclose(s.std(0), sd, rtol=0.12)
    # correlations: error ~ (1 - rho^2) / sqrt(ESS) -> 0.15 absolute
    corr = cov / np.outer(sd, sd)
    np.testing.assert_allclose(np.corrcoef(s, rowvar=False), corr, atol=0.15)
    # 95 % interval ends: quantile error ~ 2.4 sd / sqrt(ESS) at 2.5 %; 0.25 sd allows ~3 of them
    lo, hi = np.quantile(s, [0.025, 0.975], axis=0)
    np.testing.assert_allclose(lo, mean - 1.96 * sd, atol=0.25 * sd.min())
    np.testing.assert_allclose(hi, mean + 1.96 * sd, atol=0.25 * sd.min())
    assert np.all(d.rhat < 1.02)
    assert np.all((d.acceptance > 0.2) & (d.acceptance < 0.9))


def test_stops_when_converged_or_at_step_limit(tmp_path):
    prob, _, A, y = linear_problem()
    mean, _ = linear_posterior(A, y)
    easy = SamplerSettings(walkers=16, ensembles=2, max_steps=5000, check_every=200,
                           tau_factor=20, min_ess=200)
    res = _run(prob, tmp_path / "a.h5", easy, mean=mean)
    assert res.diagnostics.status == "converged" and res.diagnostics.steps < 5000
    hard = SamplerSettings(walkers=8, ensembles=2, max_steps=100, check_every=50)
    res = _run(prob, tmp_path / "b.h5", hard, mean=mean)
    assert res.diagnostics.status == "step_limit" and res.diagnostics.steps == 100
    assert "tau" in res.diagnostics.reason


def test_rank_rhat_detects_disagreeing_ensembles():
    # ArviZ's rank-normalised split R-hat over every walker as a chain
    rng = np.random.default_rng(0)
    ch = rng.standard_normal((4, 400, 8, 2))
    rhat, bulk, tail = _arviz_stats(ch)
    # iid draws: R-hat - 1 ~ 1 / (draws per chain) -> < 1.01; ESS near the 12 800 draws
    assert np.all(rhat < 1.01) and np.all(bulk > 8000) and np.all(tail > 8000)
    # R-hat compares ensembles (4 of them, each split in halves): walkers pooled
    stuck_walker = ch.copy()
    stuck_walker[0, :, 0, 1] += 1.0   # one walker of 32 one sd off: a small shift of its ensemble
    assert _arviz_stats(stuck_walker)[0][1] < 1.05
    ch[0, :, :, 1] += 1.0  # one ensemble stuck one sd away
    r = _arviz_stats(ch)[0]
    assert r[0] < 1.01 and r[1] > 1.05
    drift = ch.copy()
    drift[:, 200:, :, 0] += 1.0  # every ensemble shifts half way: split halves catch it
    assert _arviz_stats(drift)[0][0] > 1.1
    d = diagnose(drift, np.full((4, 8), 100), SamplerSettings())
    assert not d.converged and "R-hat" in d.reason


_KILLED = """
import os, signal, sys
import numpy as np
from tests.recon._toy import linear_problem
from tests.identification.test_mcmc import SETTINGS, _run
prob, *_ = linear_problem()
inner = prob.log_probability
calls = [0]
def dying(x):
    calls[0] += 1
    if calls[0] > 260:
        os.kill(os.getpid(), signal.SIGKILL)
    return inner(x)
prob.log_probability = dying
_run(prob, sys.argv[1], SETTINGS)
"""

SETTINGS = SamplerSettings(walkers=8, ensembles=2, max_steps=300, check_every=50,
                           min_ess=1e9)


def test_resume_after_kill_continues_the_chain(tmp_path):
    path = tmp_path / "chains.h5"
    proc = subprocess.run([sys.executable, "-c", _KILLED, str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == -9, proc.stderr  # killed by SIGKILL mid-run
    meta, ch, _ = read_chains(path)
    assert 0 < ch.shape[1] < 300  # an interrupted chain is on disk
    prob, *_ = linear_problem()
    resumed = _run(prob, path, SETTINGS, resume=True)
    straight = _run(prob, tmp_path / "straight.h5", SETTINGS)
    assert resumed.chains.shape == (2, 300, 8, 3)
    # the resumed chain is the chain an uninterrupted run makes, bit for bit
    np.testing.assert_array_equal(resumed.chains, straight.chains)
    np.testing.assert_array_equal(resumed.chains[:, : ch.shape[1]], ch)
    with pytest.raises(InputError, match="cannot resume"):
        _run(prob, path, SamplerSettings(walkers=10, ensembles=2), resume=True)
    with pytest.raises(InputError, match="cannot resume: 'moves'"):
        _run(prob, path, dataclasses.replace(SETTINGS, moves="stretch"), resume=True)
    with pytest.raises(InputError, match="nothing to resume"):
        _run(prob, tmp_path / "none.h5", SETTINGS, resume=True)


def test_resume_refuses_chains_of_another_posterior(tmp_path):
    """A resume continues only the posterior the chains were sampled from: another record
    (another flight's noise draw), a changed prior or a changed part of the stored fingerprint
    is refused before a step is taken, and the chain file is left as it was; the same problem
    resumes."""
    path = tmp_path / "chains.h5"
    short = dataclasses.replace(SETTINGS, max_steps=100)
    prob, *_ = linear_problem(seed=1)
    run_ensembles(prob.log_probability, np.zeros(3), np.full(3, 0.005), prob.space.lower,
                  prob.space.upper, path, names=prob.names, settings=short, seed=7,
                  fingerprint=prob.fingerprint())
    before = path.read_bytes()

    def resume(p, fingerprint):
        return run_ensembles(p.log_probability, np.zeros(3), np.full(3, 0.005), p.space.lower,
                             p.space.upper, path, names=p.names, settings=SETTINGS,
                             resume=True, fingerprint=fingerprint)

    other, *_ = linear_problem(seed=2)       # the same model, another flight's record
    with pytest.raises(InputError, match="cannot resume: the chains were sampled with a "
                                         "different record") as e:
        resume(other, other.fingerprint())
    assert str(path) in str(e.value)
    # without the fingerprint (a caller that has none) the log probability still tells
    with pytest.raises(InputError, match="log probability is not the one they were sampled"):
        resume(other, None)
    wider, *_ = linear_problem(seed=1)
    wider.space = type(prob.space)(tuple(dataclasses.replace(
        q, prior=dataclasses.replace(q.prior, b=2.0 * q.prior.b)) for q in prob.space.parameters))
    with pytest.raises(InputError, match="different parameters"):
        resume(wider, wider.fingerprint())
    assert path.read_bytes() == before
    res = resume(prob, prob.fingerprint())
    assert res.chains.shape == (2, 300, 8, 3)


def test_walkers_start_from_given_draws(tmp_path):
    # two well separated start draws: walkers start at them (jittered by 1e-3 * scale), not in
    # a ball around x0, and both are used
    prob, _, A, y = linear_problem()
    lo, hi = prob.space.lower, prob.space.upper
    x0 = np.zeros(3)
    scale = np.full(3, 0.005)
    start = np.array([[0.2, -0.1, 0.4], [0.5, 0.1, 0.6]])
    res = run_ensembles(prob.log_probability, x0, scale, lo, hi, tmp_path / "c.h5",
                        names=prob.names, settings=SamplerSettings(walkers=8, ensembles=2,
                                                                  max_steps=1, check_every=1),
                        seed=4, start=start)
    first = res.chains[:, 0].reshape(-1, 3)
    d = np.abs(first[:, None, :] - start[None, :, :]).max(axis=2)
    # the chain stores positions after the first stretch move: a third of the proposals are
    # accepted, so most walkers are still at their start (within 5e-5, 10x the 5e-6 jitter);
    # a ball around x0 = 0 would put none there
    near = d.min(axis=1) < 5e-5
    assert near.sum() >= 4
    assert set(np.argmin(d[near], axis=1)) == {0, 1}


def test_one_ensemble_has_no_rhat_and_says_so(capsys):
    """R-hat compares ensembles: with one it is undefined (NaN, "n/a" in the report), the
    sampler says why it cannot call the chains converged, and ArviZ is not asked (it printed
    a shape-validation line on stdout and the report then crashed on the missing value)."""
    rng = np.random.default_rng(1)
    ch = rng.standard_normal((1, 400, 8, 2))
    rhat, bulk, _ = _arviz_stats(ch)
    assert np.all(np.isnan(rhat)) and np.all(bulk > 2000)
    d = diagnose(ch, np.full((1, 8), 100), SamplerSettings(ensembles=1))
    assert not d.converged and "one ensemble" in d.reason
    assert "Shape validation" not in capsys.readouterr().out
