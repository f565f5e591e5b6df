"""Multi-start least squares: exact MAP and Laplace errors on the linear-Gaussian model,
seeded recovery on the damped oscillator."""
import numpy as np

from recon.engines import jacobian, laplace_samples, multistart
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
