"""Truth checks against a posterior (recon.validation): the highest-density region."""
import numpy as np
import pytest
from scipy.stats import chi2

from identification.space import Parameter, ParameterSpace, Prior
from identification.problem import ResidualProblem
from recon.validation import hpd_check
from tests.recon._toy import flat_linear_problem


@pytest.mark.parametrize("d2", [2.0, 5.35, 12.6, 20.0])
def test_hpd_mass_of_a_gaussian_posterior_is_the_chi2_cdf(d2):
    """For a Gaussian posterior the mass at higher density than a point at Mahalanobis
    distance d2 is the chi2_k CDF of d2 (k = 6: 0.08, 0.50, 0.95, 0.997). 8000 exact draws:
    binomial sd at most 0.0056, tolerance 4 sd."""
    problem, mean, cov, _ = flat_linear_problem(k=6, m=80, seed=3)
    rng = np.random.default_rng(9)
    draws = rng.multivariate_normal(mean, cov, size=8000)
    u = rng.normal(size=mean.size)
    u *= np.sqrt(d2 / (u @ u))
    point = mean + np.linalg.cholesky(cov) @ u
    out = hpd_check(problem, draws, {f"p{i}": v for i, v in enumerate(point)})
    expect = chi2.cdf(d2, mean.size)
    assert out["mass_above"] == pytest.approx(expect, abs=0.0225)
    assert out["se"] == pytest.approx(np.sqrt(expect * (1 - expect) / 8000), rel=0.35)
    assert out["in95"] == (d2 < chi2.ppf(0.95, mean.size))


def test_hpd_repeated_draws_and_stored_log_prob_agree():
    """Resampled draws (repeats) evaluated once per distinct draw, and a sampler's own log
    posterior passed in, give the same share; the effective sample size sets the error."""
    problem, mean, cov, _ = flat_linear_problem(k=6, m=80, seed=3)
    rng = np.random.default_rng(4)
    base = rng.multivariate_normal(mean, cov, size=300)
    draws = base[rng.integers(0, 300, size=2000)]
    truth = {f"p{i}": v for i, v in enumerate(mean + np.sqrt(np.diag(cov)))}
    a = hpd_check(problem, draws, truth, ess=300.0)
    b = hpd_check(problem, draws, truth, log_prob=problem.log_probability(draws))
    assert a["mass_above"] == b["mass_above"]
    assert a["se"] == pytest.approx(b["se"] * np.sqrt(2000 / 300))
    with pytest.raises(ValueError, match="log_prob"):
        hpd_check(problem, draws, truth, log_prob=np.zeros(5))
    with pytest.raises(KeyError, match="p5"):
        hpd_check(problem, draws, {k: v for k, v in truth.items() if k != "p5"})


def test_hpd_region_follows_a_curved_posterior():
    """A banana: y1 = a, y2 = b + a^2 observed as 0 (sd 1 and 0.05), so the posterior lies
    along b = -a^2 with a unit normal along it. The draws' mean (0, -1) is the centre of the
    Gaussian region (distance 0) but 20 sd off the ridge: the HPD region leaves it out. In
    the coordinates (a, (b + a^2) / 0.05) the posterior is a standard 2-d normal, so a point
    on the ridge at |a| = 1 has mass 1 - exp(-1/2) = 0.393 at higher density (20 000 exact
    draws, binomial sd 0.0035, tolerance 0.02)."""
    space = ParameterSpace([Parameter("a", "", 0.0, Prior("uniform", -8.0, 8.0)),
                            Parameter("b", "", 0.0, Prior("uniform", -80.0, 8.0))])
    sig = np.array([1.0, 0.05])
    problem = ResidualProblem(
        space, lambda th: np.column_stack([th[:, 0], th[:, 1] + th[:, 0] ** 2]) / sig,
        2, sigma=1.0)
    rng = np.random.default_rng(2)
    a = rng.normal(0.0, 1.0, 20000)
    draws = np.column_stack([a, -a ** 2 + rng.normal(0.0, 0.05, 20000)])
    mean, cov = draws.mean(axis=0), np.cov(draws.T)
    dv = np.array([0.0, -1.0]) - mean
    assert dv @ np.linalg.solve(cov, dv) < 0.01
    centre = hpd_check(problem, draws, {"a": 0.0, "b": -1.0})
    assert centre["mass_above"] > 0.999 and not centre["in95"]
    ridge = hpd_check(problem, draws, {"a": 1.0, "b": -1.0})
    assert ridge["mass_above"] == pytest.approx(1 - np.exp(-0.5), abs=0.02) and ridge["in95"]
