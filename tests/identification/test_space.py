"""Parameter space (units, priors, Latin hypercube) and the vectorized log-probability."""
import numpy as np
import pytest
from scipy import stats

from models.errors import InputError
from recon.problem import parameter_space
from identification.space import Prior
from tests.recon._toy import PRIOR_SD, SIGMA, linear_posterior, linear_problem


def test_table_units_priors_and_fixed():
    sp = parameter_space({
        "rel_pos_y": {"prior": "normal", "mean": 10.0, "sd": 50.0, "unit": "mm"},
        "rel_pitch": {"prior": "uniform", "lower": -7.0, "upper": 7.0, "unit": "deg"},
        "rel_roll": {"fixed": 1.0, "unit": "deg"},
        "brake_force": {"prior": "lognormal", "median": 0.9, "sigma": 0.2, "unit": "kN"},
    })
    assert sp.free_names == ("rel_pos_y", "rel_pitch", "brake_force")
    assert sp["rel_pos_y"].unit == "m" and sp["brake_force"].unit == "N"
    pr = sp["rel_pos_y"].prior
    assert (pr.a, pr.b) == pytest.approx((0.01, 0.05))
    assert (pr.lower, pr.upper) == pytest.approx((0.01 - 0.3, 0.01 + 0.3))  # 6 sd default
    assert sp["rel_pitch"].prior.upper == pytest.approx(np.deg2rad(7.0))
    assert sp["brake_force"].prior.a == pytest.approx(900.0)
    full = sp.full(np.array([[0.0, 0.1, 1000.0]]))
    assert full[0, 2] == pytest.approx(np.deg2rad(1.0))


@pytest.mark.parametrize("table,key", [
    ({"a": {"prior": "uniform", "lower": 0.0}}, "parameters.a.upper"),
    ({"a": {"prior": "uniform", "lower": 0.0, "upper": 1.0, "colour": 2}}, "parameters.a.colour"),
    ({"a": {"prior": "cauchy", "lower": 0.0, "upper": 1.0}}, "parameters.a.prior"),
    ({"a": {"fixed": 1.0, "lower": 0.0}}, "parameters.a"),
    ({"rel_vel_x": {"prior": "normal", "mean": 0.2, "sd": 0.1, "unit": "kg"}}, "parameters.rel_vel_x.unit"),
])
def test_bad_tables_name_the_key(table, key):
    with pytest.raises(InputError) as exc:
        parameter_space(table)
    assert exc.value.key == key


def test_truncated_prior_quantiles_match_scipy():
    u = np.linspace(0.01, 0.99, 13)
    p = Prior("normal", -0.5, 2.0, 0.3, 0.8)
    ref = stats.truncnorm((-0.5 - 0.3) / 0.8, (2.0 - 0.3) / 0.8, loc=0.3, scale=0.8).ppf(u)
    np.testing.assert_allclose(p.ppf(u), ref, rtol=1e-10)
    p = Prior("lognormal", 0.5, 5.0, 1.2, 0.4)
    a, b = np.log(0.5), np.log(5.0)
    z = stats.truncnorm((a - np.log(1.2)) / 0.4, (b - np.log(1.2)) / 0.4, loc=np.log(1.2),
                        scale=0.4).ppf(u)
    np.testing.assert_allclose(p.ppf(u), np.exp(z), rtol=1e-10)
    # log densities differ from scipy's lognorm by a constant
    x = np.linspace(0.6, 4.0, 9)
    d = p.logpdf(x) - stats.lognorm(0.4, scale=1.2).logpdf(x)
    np.testing.assert_allclose(d, d[0], atol=1e-12)
    assert np.isneginf(p.logpdf(np.array([0.4, 5.1]))).all()


def test_latin_hypercube_stratifies_every_marginal():
    sp = parameter_space({"a": {"prior": "uniform", "lower": 2.0, "upper": 4.0},
                                   "b": {"prior": "normal", "mean": 0.0, "sd": 1.0}})
    x = sp.latin_hypercube(20, np.random.default_rng(5))
    u_a = (x[:, 0] - 2.0) / 2.0
    u_b = stats.truncnorm(-6, 6).cdf(x[:, 1])
    for u in (u_a, u_b):
        assert sorted(np.floor(u * 20).astype(int)) == list(range(20))


def test_log_probability_is_the_analytic_gaussian_posterior():
    prob, _, A, y = linear_problem()
    mean, cov = linear_posterior(A, y)
    rng = np.random.default_rng(0)
    th = mean + rng.standard_normal((6, 3)) * 0.01
    lp = prob.log_probability(th)
    ref = stats.multivariate_normal(mean, cov).logpdf(th)
    # equal up to a constant (normalization); round-off of sums of ~40 squares: 1e-8
    np.testing.assert_allclose(lp - lp[0], ref - ref[0], atol=1e-8)
    # vectorized == row by row
    np.testing.assert_allclose(lp, [prob.log_probability(t)[0] for t in th], rtol=1e-13)


def test_forward_is_not_run_outside_the_bounds():
    prob, *_ = linear_problem()
    seen = []
    inner = prob.forward

    def spy(params, names, t_end=None):
        seen.append(params.copy())
        return inner(params, names)

    prob.forward = spy
    th = np.array([[0.0, 0.0, 0.0], [7.0, 0.0, 0.0]])  # second row beyond mean + 6 sd
    lp = prob.log_probability(th)
    assert np.isfinite(lp[0]) and np.isneginf(lp[1])
    assert sum(len(s) for s in seen) == 1
    assert PRIOR_SD == 1.0 and SIGMA == 0.01
