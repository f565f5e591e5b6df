"""ResidualProblem: a residual-function fit runs through the same engines as a reconstruction.

Oracle: a linear model :math:`d = A \\theta + e`, :math:`e \\sim N(0, \\sigma^2)`, under flat
priors, whose posterior is exactly Gaussian with mean
:math:`(A^T W A)^{-1} A^T W d` and covariance :math:`(A^T W A)^{-1}`, :math:`W = \\sigma^{-2}`.
"""
import math

import numpy as np
import pytest

from identification.engines import importance, laplace, least_squares
from identification.space import Parameter, ParameterSpace, Prior
from identification.problem import ResidualProblem

# parameters twenty orders of magnitude apart (a bulk modulus beside a leakage coefficient):
# the Laplace covariance must keep the relative precision of both
TRUTH = np.array([1.2e9, 3.0e-12, 0.7])
UNITS = ("Pa", "m**3/(s*Pa)", "")
BOX = ((0.2e9, 5e9), (0.0, 1e-10), (-5.0, 5.0))


def _linear(sigma_by_group=(0.5, 2.0), m_per_group=60, seed=4):
    rng = np.random.default_rng(seed)
    m = 2 * m_per_group
    # design columns scaled so that every parameter moves the data by O(1)
    A = rng.normal(size=(m, 3)) * np.array([1e-9, 1e12, 1.0])[None, :]
    sigma = np.repeat(sigma_by_group, m_per_group)
    d = A @ TRUTH + sigma * rng.standard_normal(m)
    space = ParameterSpace([Parameter(n, u, v, Prior("uniform", lo, hi))
                            for n, u, v, (lo, hi) in zip(("K", "C", "b"), UNITS, TRUTH, BOX)]
                           + [Parameter("offset", "", 0.0)])

    def residuals(full):
        assert full.shape[1] == 4  # every parameter, fixed ones included
        return full[:, :3] @ A.T + full[:, 3:4] - d[None, :]

    groups = {"a": slice(0, m_per_group), "b": slice(m_per_group, m)}
    problem = ResidualProblem(space, residuals, m, sigma=sigma, groups=groups)
    W = 1.0 / sigma ** 2
    cov = np.linalg.inv(A.T @ (W[:, None] * A))
    mean = cov @ A.T @ (W * d)
    return problem, mean, cov, A, d, sigma


def test_engines_give_the_closed_form_map_and_covariance():
    problem, mean, cov, *_ = _linear()
    result = least_squares(problem, starts=3, seed=1, kind="linear")
    # the optimum solves the normal equations: relative 1e-7 of the standard error (the
    # least-squares tolerances are 1e-10 on the cost and the step)
    se = np.sqrt(np.diag(cov))
    assert np.all(np.abs(result.x_opt - mean) < 1e-7 * se)
    laplace(problem, result, rng=np.random.default_rng(0))
    post = result.posterior
    # the central-difference Jacobian of a linear model is exact up to rounding: the
    # covariance matches to 1e-6 relative, the small parameter (3e-12) included
    unit = np.outer(se, se)
    assert post.covariance / unit == pytest.approx(cov / unit, abs=1e-6)
    assert post.stderr == pytest.approx(se, rel=1e-6)
    # 4000 draws: their standard deviation is within 5 % of the exact one (sampling error
    # of an sd estimate from 4000 draws is 1.1 %)
    assert np.std(post.samples, axis=0) == pytest.approx(se, rel=0.05)
    assert problem.names == ("K", "C", "b")


def test_importance_sampling_of_a_gaussian_posterior_matches_it():
    problem, mean, cov, *_ = _linear()
    result = least_squares(problem, starts=2, seed=2)
    laplace(problem, result, rng=np.random.default_rng(1))
    importance(problem, result, n=3000, rng=np.random.default_rng(2))
    post = result.posterior
    se = np.sqrt(np.diag(cov))
    # the proposal is the exact posterior widened (Student t): weights are near uniform, and
    # 3000 resampled draws give the mean within 4 standard errors of the mean (4 / sqrt(ESS))
    assert result.diagnostics["importance"]["ess"] > 1000
    assert np.all(np.abs(post.samples.mean(axis=0) - mean) < 4 * se / np.sqrt(1000))


def test_log_probability_is_the_gaussian_likelihood():
    problem, mean, cov, A, d, sigma = _linear()
    theta = np.array([[1.0e9, 2e-12, 0.1], [1.3e9, 4e-12, 0.9]])
    r = (theta @ A.T - d[None, :]) / sigma[None, :]
    ll = (-0.5 * np.sum(r * r, axis=1) - np.sum(np.log(sigma))
          - 0.5 * d.size * math.log(2 * math.pi))
    assert problem.log_probability(theta) == pytest.approx(ll, rel=1e-12)
    # outside the box the model is not run
    n0 = problem.n_evaluations
    assert problem.log_probability(np.array([[1e11, 2e-12, 0.1]]))[0] == -np.inf
    assert problem.n_evaluations == n0
    assert problem.residuals(theta[0]).shape == (d.size,)
    assert problem.least_squares_residuals(theta[0]).shape == (d.size,)  # flat priors: no rows


def test_noise_estimate_per_group_and_with_sigma():
    problem, mean, *_ = _linear(sigma_by_group=(0.5, 2.0), m_per_group=2000, seed=7)
    sig = problem.noise_estimate(mean)
    # 2000 residuals per group: the estimate is within 5 % (its sampling error is 1.6 %)
    assert sig[0] == pytest.approx(0.5, rel=0.05) and sig[-1] == pytest.approx(2.0, rel=0.05)
    only_a = problem.noise_estimate(mean, groups=["a"])
    assert only_a[-1] == 2.0 and only_a[0] == sig[0]
    p2 = problem.with_sigma(sig)
    assert p2.n_evaluations == problem.n_evaluations and np.all(p2.sigma == sig)


def test_staged_polish_holds_then_frees():
    problem, mean, cov, *_ = _linear()
    se = np.sqrt(np.diag(cov))
    result = least_squares(problem, starts=2, seed=3, hold=("K",), x_scale="jac")
    assert np.all(np.abs(result.x_opt - mean) < 1e-6 * se)
    with pytest.raises(ValueError, match="not free"):
        least_squares(problem, starts=1, hold=("offset",))


def test_a_residual_function_of_the_wrong_shape_is_an_error():
    space = ParameterSpace([Parameter("a", "", 0.0, Prior("uniform", -1.0, 1.0))])
    problem = ResidualProblem(space, lambda full: np.zeros((full.shape[0], 3)), 4)
    with pytest.raises(ValueError, match="shape"):
        problem.residuals(np.zeros(1))
    with pytest.raises(ValueError, match="positive"):
        ResidualProblem(space, lambda full: full, 1, sigma=0.0)
