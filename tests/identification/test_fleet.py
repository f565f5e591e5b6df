"""The fleet engine (identification.engines.fleet) against the closed form of a linear
Gaussian fleet: four records sharing two parameters, each with three of its own, normal
priors. Each record's posterior draws are exact; the combined posterior of the shared
parameters and of each record's own ones given the fleet must match the joint posterior
computed from the stacked linear system, within the Monte-Carlo error of the engine's
effective sample size."""
from __future__ import annotations

import numpy as np
import pytest

from identification.engines.fleet import (FleetSettings, combine, flight_draws, gaussian_of,
                                          t_draws, t_logpdf)
from identification.problem import ResidualProblem
from identification.space import ParameterSpace

SD_M, SD_T, SIGMA = 0.8, 1.5, 0.5
K_SHARED, D_OWN, N_FLIGHTS, M_RES = 2, 3, 4, 12


def _fleet(seed=3):
    rng = np.random.default_rng(seed)
    m_true = np.array([0.8, -1.1])
    flights = []
    for i in range(N_FLIGHTS):
        G = rng.normal(size=(M_RES, K_SHARED)) * 0.25
        H = rng.normal(size=(M_RES, D_OWN)) + 0.5 * G[:, :1]      # own parameters correlated
        th = rng.normal(size=D_OWN) * SD_T
        y = G @ m_true + H @ th + SIGMA * rng.normal(size=M_RES)
        flights.append((G, H, y))
    return flights


def _space():
    table = {f"m{j}": {"prior": "normal", "mean": 0.0, "sd": SD_M} for j in range(K_SHARED)}
    table.update({f"t{j}": {"prior": "normal", "mean": 0.0, "sd": SD_T} for j in range(D_OWN)})
    return ParameterSpace.from_dict(table)


def _gaussian_posterior(X, y, prior_sd):
    P = X.T @ X / SIGMA ** 2 + np.diag(prior_sd ** -2.0)
    cov = np.linalg.inv(P)
    return cov @ (X.T @ y) / SIGMA ** 2, cov


def test_combined_posterior_is_the_joint_one_of_a_linear_gaussian_fleet():
    flights = _fleet()
    sp = _space()
    shared = ("m0", "m1")
    rng = np.random.default_rng(11)
    problems, gaussians = [], []
    psd = np.array([SD_M] * K_SHARED + [SD_T] * D_OWN)
    for G, H, y in flights:
        X = np.hstack([G, H])
        problems.append(ResidualProblem(sp, lambda z, X=X, y=y: z @ X.T - y, M_RES,
                                        sigma=SIGMA))
        mu, cov = _gaussian_posterior(X, y, psd)
        draws = rng.multivariate_normal(mu, cov, size=4000)      # the record's own posterior
        gaussians.append(gaussian_of(sp.free_names, draws, shared))
    # the joint posterior: one stacked linear system
    n_all = K_SHARED + N_FLIGHTS * D_OWN
    X = np.zeros((N_FLIGHTS * M_RES, n_all))
    y_all = np.concatenate([y for _, _, y in flights])
    for i, (G, H, _) in enumerate(flights):
        X[i * M_RES:(i + 1) * M_RES, :K_SHARED] = G
        X[i * M_RES:(i + 1) * M_RES, K_SHARED + i * D_OWN:K_SHARED + (i + 1) * D_OWN] = H
    mu, cov = _gaussian_posterior(X, y_all, np.array([SD_M] * K_SHARED + [SD_T] * N_FLIGHTS
                                                     * D_OWN))

    def run_round(m, seed):
        rr = np.random.default_rng(seed)
        return [flight_draws(p.log_probability, g, m, 24, rr) for p, g in
                zip(problems, gaussians)]

    def log_prior_shared(m):
        return -0.5 * np.sum((m / SD_M) ** 2, axis=1)

    res = combine(gaussians, shared, log_prior_shared, run_round,
                  prior_precision=np.eye(K_SHARED) / SD_M ** 2, prior_mean=np.zeros(K_SHARED),
                  settings=FleetSettings(shared_draws=600, n_out=4000), rng=rng)
    ess = res.diagnostics["ess"]
    assert ess > 150, res.diagnostics
    sd = np.sqrt(np.diag(cov))
    # the mean within 4 Monte-Carlo errors of the effective sample; the spread within 15 %
    # (the sd of a sample sd is sd / sqrt(2 ESS): 15 % is 4 of them at ESS 350)
    np.testing.assert_allclose(res.shared.mean(axis=0), mu[:K_SHARED],
                               atol=4 * sd[:K_SHARED].max() / np.sqrt(ess))
    np.testing.assert_allclose(res.shared.std(axis=0), sd[:K_SHARED], rtol=0.15)
    for i, own in enumerate(res.own):
        sl = slice(K_SHARED + i * D_OWN, K_SHARED + (i + 1) * D_OWN)
        np.testing.assert_allclose(own.mean(axis=0), mu[sl], atol=4 * sd[sl].max()
                                   / np.sqrt(ess))
        np.testing.assert_allclose(own.std(axis=0), sd[sl], rtol=0.15)
    # and the fleet knows the shared parameters better than its best record
    single = min(np.sqrt(g.cov[0, 0]) for g in gaussians)
    assert sd[0] < single and res.shared[:, 0].std() < single


def test_t_density_integrates_to_one_and_matches_its_draws():
    rng = np.random.default_rng(2)
    cov = np.array([[2.0, 0.6], [0.6, 1.0]])
    x = t_draws(np.zeros(2), cov, 5.0, 200_000, rng)
    # the t(5) covariance is df / (df - 2) times the scale
    np.testing.assert_allclose(np.cov(x.T), cov * 5.0 / 3.0, rtol=0.03)
    g = np.linspace(-15, 15, 601)
    X, Y = np.meshgrid(g, g)
    dens = np.exp(t_logpdf(np.column_stack([X.ravel(), Y.ravel()]), np.zeros(2), cov, 5.0))
    assert dens.sum() * (g[1] - g[0]) ** 2 == pytest.approx(1.0, abs=0.01)
