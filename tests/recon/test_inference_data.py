"""posterior.nc as ArviZ reads it: its draws, its effective sample size against result.json's,
the log-likelihood by telemetry channel, the observed data, the prior and the weighted draws
of importance sampling."""
import json

import numpy as np
import pytest

from identification.engines import SamplerSettings
from identification.engines.mcmc import _arviz
from recon.pipeline import ReconstructSettings, reconstruct
from tests.recon._toy import oscillator_problem

IMPORTANCE = ReconstructSettings(starts=3, importance=2000, mcmc=False, draws=20,
                                 trajectory_draws=20, importance_adapt="quadratic")
MCMC = ReconstructSettings(starts=3, sampler=SamplerSettings(
    walkers=16, ensembles=2, max_steps=600, check_every=200), draws=20, trajectory_draws=20)


@pytest.fixture(scope="module")
def importance_run(tmp_path_factory):
    problem, _ = oscillator_problem()
    out = tmp_path_factory.mktemp("imp") / "res"
    reconstruct(problem, out, settings=IMPORTANCE, seed=3)
    return problem, out


@pytest.fixture(scope="module")
def mcmc_run(tmp_path_factory):
    problem, _ = oscillator_problem()
    out = tmp_path_factory.mktemp("mcmc") / "res"
    reconstruct(problem, out, settings=MCMC, seed=5)
    return problem, out


def _check_groups(problem, out, library):
    """The groups ArviZ documents, filled from this problem, and result.json listing the
    file."""
    az = _arviz()
    doc = json.loads((out / "result.json").read_text())
    assert "posterior.nc" in doc["files"]
    idata = az.from_netcdf(str(out / "posterior.nc"))
    for g in ("posterior", "sample_stats", "log_likelihood", "observed_data", "prior"):
        assert hasattr(idata, g), g
    names = problem.names
    assert set(idata.posterior.data_vars) == set(names)
    assert idata.posterior["omega"].attrs["unit"] == "rad/s"
    assert set(idata.log_likelihood.data_vars) == {"stroke", "contact"}
    # the observed data are the fitted span's samples of each channel
    for c, (t, y) in problem.bound.observed().items():
        np.testing.assert_array_equal(idata.observed_data[c].values, y)
        np.testing.assert_array_equal(idata.observed_data[f"{c}_time"].values, t)
    # prior draws inside the prior's bounds, as many as written
    lo, hi = problem.space.lower, problem.space.upper
    for j, n in enumerate(names):
        v = idata.prior[n].values.ravel()
        assert v.size == 1000 and np.all((v >= lo[j]) & (v <= hi[j]))
    assert idata.posterior.attrs["inference_library"] == library
    assert idata.posterior.attrs["inference_library_version"]
    assert "created_at" in idata.posterior.attrs
    # the log-likelihood of the channels and the log prior add up to the draw's log posterior,
    # and that is the problem's own log probability (computed without the parts: it checks
    # each channel's share of the normalizing constant)
    x = np.stack([idata.posterior[n].values for n in names], axis=-1).reshape(-1, len(names))
    lp = idata.sample_stats["lp"].values.ravel()
    ll = sum(idata.log_likelihood[c].values.ravel() for c in ("stroke", "contact"))
    np.testing.assert_allclose(ll + problem.space.log_prior(x), lp, rtol=1e-10, atol=1e-8)
    pick = np.random.default_rng(0).choice(x.shape[0], 10, replace=False)
    np.testing.assert_allclose(problem.log_probability(x[pick]), lp[pick], rtol=1e-9,
                               atol=1e-8)
    return doc, idata, x


def test_importance_posterior_file_holds_distinct_draws_whose_arviz_ess_is_the_weights(
        importance_run):
    """An importance result: the posterior group holds as many distinct draws as the weights'
    effective sample size (4 chains, no repeats), so ArviZ's own summary gives that ESS and a
    finite R-hat near 1; the weighted draws and their log weights are beside them.

    Tolerance: ArviZ estimates the ESS of n independent draws from their autocorrelation, with
    a scatter of about 2 / sqrt(n) per figure (0.06 at n = 1200; over 8 resamples of this
    result's weights the median of the 4 bulk figures ranged 0.94-1.08 of the Kish ESS): the
    median of its bulk and tail figures over the parameters is asked within 10 %, each
    figure within 25 % (4 of those scatters)."""
    problem, out = importance_run
    az = _arviz()
    doc, idata, x = _check_groups(problem, out, "dockrecon")
    imp = doc["diagnostics"]["importance"]
    assert doc["diagnostics"]["method"] == "importance"
    ess = imp["ess"]
    assert idata.posterior.sizes["chain"] == 4
    assert x.shape[0] == 4 * (round(ess) // 4)
    assert np.unique(x, axis=0).shape[0] == x.shape[0]          # no draw repeats
    summary = az.summary(idata, var_names=list(problem.names))
    figures = np.concatenate([summary["ess_bulk"], summary["ess_tail"]])
    assert np.median(figures) == pytest.approx(ess, rel=0.10)
    assert np.all(np.abs(figures / ess - 1.0) < 0.25)
    assert np.all(summary["r_hat"] < 1.05)
    # the weighted draws the intervals come from, with weights that sum to one
    w = idata["importance_draws"]
    assert w.sizes["proposal_draw"] == imp["n_proposal"]
    lw = w["log_weight"].values
    assert np.exp(lw[np.isfinite(lw)]).sum() == pytest.approx(1.0, rel=1e-9)
    kish = 1.0 / np.sum(np.exp(2 * lw[np.isfinite(lw)]))
    assert kish == pytest.approx(ess, rel=1e-9)
    # k-hat of the weights, recorded for every importance result
    assert np.isfinite(imp["pareto_k"]) and imp["pareto_k_limit"] > 0


def test_mcmc_posterior_file_is_every_walker_after_burn_in_and_arviz_agrees(mcmc_run):
    """An MCMC result: every walker a chain after burn-in, with the log-likelihood of each
    channel the sampler computed at each draw (emcee's blobs); ArviZ's summary of the file
    gives the bulk ESS and R-hat that result.json records (the same draws and estimator:
    10 % is the issue's bound, the agreement is closer)."""
    problem, out = mcmc_run
    az = _arviz()
    doc, idata, _ = _check_groups(problem, out, "emcee")
    mc = doc["diagnostics"]["mcmc"]
    assert doc["diagnostics"]["method"] == "mcmc"
    assert idata.posterior.sizes["chain"] == 2 * 16
    assert idata.posterior.sizes["draw"] == mc["steps"] - mc["burn"]
    summary = az.summary(idata, var_names=list(problem.names))
    for n in problem.names:
        assert summary.loc[n, "ess_bulk"] == pytest.approx(mc["ess_bulk"][n], rel=0.10)
    assert "importance_draws" not in idata.groups()
