"""Multi-start least squares: exact MAP and Laplace errors on the linear-Gaussian model,
seeded recovery on the damped oscillator."""
import numpy as np
from scipy.optimize import brentq

from identification.engines import jacobian, laplace_samples, multistart
from tests.recon._toy import OSC_TRUTH, linear_posterior, linear_problem, oscillator_problem


def test_linear_gaussian_map_and_errors_are_exact():
    prob, _, A, y = linear_problem()
    mean, cov = linear_posterior(A, y)
    runs = multistart(prob, 4, seed=2, first_guess=np.zeros(3))
    assert len(runs) == 5 and runs[0].origin == "first_guess"
    sd = np.sqrt(np.diag(cov))
    # the posterior is Gaussian, so MAP = mean; least squares converges to round-off
    # (ftol 1e-10): 1e-6 sd
    for s in runs:
        np.testing.assert_allclose(s.x, mean, atol=1e-6 * sd.min())
    # Gauss-Newton Hessian of a linear model is the exact posterior precision; the central
    # difference of a linear function is exact up to round-off: 1e-6 relative
    best = min(runs, key=lambda s: s.cost)
    J = jacobian(prob, best.x, with_prior=True)
    _, se = laplace_samples(prob.space, best.x, J, 2, np.random.default_rng(0))
    np.testing.assert_allclose(se, sd, rtol=1e-6)


def test_oscillator_parameters_are_recovered():
    prob, truth = oscillator_problem(seed=3)
    runs = multistart(prob, 6, seed=0)
    best = min(runs, key=lambda s: s.cost)
    assert len(runs) == 6  # every start kept
    J = jacobian(prob, best.x, with_prior=True)
    se = np.sqrt(np.diag(np.linalg.inv(J.T @ J)))
    z = (best.x - np.array([truth[n] for n in prob.names])) / se
    # a seeded draw: each |z| < 3 (fails with probability ~1 % per parameter if the
    # estimator is unbiased with those errors; this seed gives max |z| ~ 1.7)
    assert np.all(np.abs(z) < 3), dict(zip(prob.names, z))
    # the fit is good: reduced chi^2 near 1 (73 residuals, 4 parameters: 0.6 - 1.5)
    chi2 = 2 * best.cost / (prob.n_residuals - 4)
    assert 0.6 < chi2 < 1.5
    assert set(prob.names) == set(OSC_TRUTH)


def test_two_phase_polish_continues_only_the_best_starts():
    prob, truth = oscillator_problem(seed=3)
    one = multistart(prob, 6, seed=0)
    two = multistart(prob, 6, seed=0, pre_nfev=3, pre_keep=2)
    assert len(two) == len(one)          # every start is kept and reported
    stopped = [s for s in two if "first phase" in s.message]
    assert len(stopped) == len(two) - 2
    assert all(s.nfev <= 3 and not s.success for s in stopped)
    # the continued starts reach the optimum of the one-phase run (same problem, 1e-6 of
    # the cost: both end on ftol 1e-10)
    best1, best2 = (min(s.cost for s in runs) for runs in (one, two))
    assert abs(best2 - best1) <= 1e-6 * best1


def _secant_problem():
    """A nonlinear two-residual fit, cost 0.5 [(e^x - 2)^2 + (x - 1)^2] on x in [-5, 5]: its
    minimum solves e^x (e^x - 2) = 1 - x (x* = 0.7505). A central secant of half-width h
    scales the first residual's slope by sinh(h)/h, so a polish with a coarse secant
    (h = 1: diff_step 0.1 of the prior's spread 10) stops where
    e^x (e^x - 2) sinh(1) = 1 - x (x = 0.7437): trust-region steps on that gradient stop
    short of the minimum."""
    from identification.space import Parameter, ParameterSpace, Prior
    from identification.problem import ResidualProblem

    space = ParameterSpace([Parameter("x", "", 1.0, Prior("uniform", -5.0, 5.0))])
    prob = ResidualProblem(space, lambda p: np.column_stack([np.exp(p[:, 0]) - 2.0,
                                                             p[:, 0] - 1.0]), 2)

    x_star = brentq(lambda x: np.exp(x) * (np.exp(x) - 2.0) - (1.0 - x), 0.0, 1.0)
    return prob, x_star


def test_refine_takes_a_coarse_secant_polish_on_to_the_minimum():
    from identification.engines import least_squares, refine

    prob, x_star = _secant_problem()
    res = least_squares(prob, starts=0, first_guess=np.array([[0.2], [1.6], [1.9]]),
                        diff_step=0.1, max_nfev=200)
    # trust-region steps on the secant's gradient stop between the secant's stationary point
    # and the minimum: measured 0.7496 (8e-4 short), so the test has something to refine
    assert abs(res.x_opt[0] - x_star) > 3e-4
    coarse_cost = res.best.cost
    n_before = len(res.starts)
    refine(prob, res, diff_step=1e-6, max_nfev=200)
    new = res.starts[n_before:]
    # the three starts ended at one point (1e-3 of the spread): refined once
    assert [s.origin for s in new] == ["refine"]
    # ftol 1e-10 on a cost of order 0.1 and a secant of 2e-6: x* to 1e-6
    assert abs(res.x_opt[0] - x_star) < 1e-6 and res.best is new[0]
    assert res.best.cost < coarse_cost
    assert res.diagnostics["optimizer"]["best_x"][0] == res.x_opt[0]
    assert res.diagnostics["optimizer"]["n_starts"] == n_before + 1


def test_refine_keeps_only_the_best_distinct_end_points_within_delta():
    from identification.engines import refine
    from identification.result import Result, Start

    prob, _ = _secant_problem()
    res = Result("fit", names=("x",))
    # three distinct end points; a delta that leaves the worst out
    for x in (0.7, 0.5, 1.5):
        c = 0.5 * float(np.sum(prob.least_squares_residuals(np.array([x])) ** 2))
        res.starts.append(Start(x0=np.array([x]), x=np.array([x]), cost=c, success=True,
                                message="", nfev=1, origin="given"))
    costs = sorted(s.cost for s in res.starts)
    refine(prob, res, diff_step=1e-6, delta=costs[2] - costs[0] - 1e-9, keep=4)
    assert sum(s.origin == "refine" for s in res.starts) == 2
    refine(prob, res, diff_step=1e-6, keep=1)
    assert sum(s.origin == "refine" for s in res.starts) == 3
