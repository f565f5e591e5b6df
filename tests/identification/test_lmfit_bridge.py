"""The parameter space in lmfit's terms (:mod:`identification.lmfit_bridge`): the round trip
to :class:`lmfit.Parameters` and back, what it refuses, and the profile-likelihood intervals
against closed forms (a linear model: the Laplace interval; a parameter entering
exponentially: the log of the linear interval) and a brute-force profile scan."""
from __future__ import annotations

import math

import lmfit
import numpy as np
import pytest
from scipy import stats

from identification.engines import laplace, least_squares
from identification.lmfit_bridge import (NONPARABOLIC, apply_parameters, from_parameters,
                                         minimizer_result, profile_intervals,
                                         result_parameters, to_parameters, attach_profile)
from identification.problem import ResidualProblem
from identification.space import ParameterSpace
from models.errors import InputError

TABLE = {
    "rel_vel_x": {"prior": "uniform", "lower": 0.05, "upper": 0.40, "unit": "m/s"},
    "rel_pos_y": {"prior": "normal", "mean": 1.0, "sd": 50.0, "unit": "mm", "step": 0.5},
    "brake_slip_force": {"prior": "lognormal", "median": 900.0, "sigma": 0.2, "unit": "N"},
    "rel_roll": {"fixed": 0.01, "unit": "rad"},
    "clock_offset": {"anchor": "contact", "lower": -8.0, "upper": -0.5, "unit": "s"},
}


def _space():
    return ParameterSpace.from_dict(TABLE, si_units={"clock_offset": "s"})


def _same(a: ParameterSpace, b: ParameterSpace):
    assert a.names == b.names
    for p, q in zip(a.parameters, b.parameters):
        assert (p.name, p.unit, p.value, p.step, p.fixed) == (q.name, q.unit, q.value, q.step,
                                                              q.fixed)
        if not p.fixed:
            assert p.prior.to_dict() == q.prior.to_dict()


def test_round_trip_keeps_values_bounds_units_priors_and_steps():
    space = _space()
    params = to_parameters(space)
    assert list(params) == list(space.names)
    v = params["rel_pos_y"]
    # SI inside: 1 mm, sd 50 mm -> bounds mean +- 6 sd in metres
    assert v.value == pytest.approx(1e-3) and v.min == pytest.approx(1e-3 - 0.3)
    assert v.max == pytest.approx(1e-3 + 0.3) and v.vary
    assert v.user_data["unit"] == "m" and v.user_data["prior"]["kind"] == "normal"
    assert not params["rel_roll"].vary and params["rel_roll"].value == 0.01
    _same(space, from_parameters(params))
    # through lmfit's own JSON (a notebook saving its parameters) and a copy
    again = lmfit.Parameters().loads(params.dumps())
    _same(space, from_parameters(again.copy()))


def test_edited_parameters_become_the_space_the_user_stated():
    space = _space()
    params = to_parameters(space)
    params["rel_vel_x"].set(value=0.2, min=0.1, max=0.3)
    params["rel_roll"].set(vary=True, min=-0.1, max=0.1)       # fixed -> free, uniform box
    params["brake_slip_force"].set(vary=False, value=1000.0)    # free -> fixed
    out = from_parameters(params)
    assert out["rel_vel_x"].prior.to_dict() == {"kind": "uniform", "lower": 0.1, "upper": 0.3}
    assert out["rel_vel_x"].value == 0.2
    assert out["rel_roll"].prior.to_dict() == {"kind": "uniform", "lower": -0.1, "upper": 0.1}
    assert out["brake_slip_force"].fixed and out["brake_slip_force"].value == 1000.0
    assert out["rel_pos_y"].prior.kind == "normal"               # shape kept with new bounds


def test_plain_parameters_take_unit_and_prior_from_the_space_they_are_applied_to():
    space = _space()
    plain = lmfit.Parameters()
    plain.add("rel_pos_y", value=0.01, min=-0.05, max=0.05)     # no user_data
    out = apply_parameters(space, plain)
    p = out["rel_pos_y"]
    assert p.unit == "m" and p.prior.kind == "normal" and p.prior.a == pytest.approx(1e-3)
    assert (p.prior.lower, p.prior.upper, p.value) == (-0.05, 0.05, 0.01)
    assert p.step == pytest.approx(5e-4)
    _same(ParameterSpace([q for q in space.parameters if q.name != "rel_pos_y"]),
          ParameterSpace([q for q in out.parameters if q.name != "rel_pos_y"]))
    # without a space: no unit, a uniform prior on the box
    alone = from_parameters(plain)
    assert alone["rel_pos_y"].unit == "" and alone["rel_pos_y"].prior.kind == "uniform"


def test_refusals_name_the_parameter():
    space = _space()
    params = to_parameters(space)
    params.add("double", expr="2 * rel_vel_x")
    with pytest.raises(InputError, match="expr") as exc:
        from_parameters(params)
    assert exc.value.key == "params.double"
    params = to_parameters(space)
    params["rel_vel_x"].set(min=-np.inf)
    with pytest.raises(InputError, match="finite min < max") as exc:
        from_parameters(params)
    assert exc.value.key == "params.rel_vel_x"
    extra = lmfit.Parameters()
    extra.add("nonesuch", value=1.0, min=0, max=2)
    with pytest.raises(InputError, match="its parameters: rel_vel_x") as exc:
        apply_parameters(space, extra)
    assert exc.value.key == "params.nonesuch"


# --------------------------------------------------------------------------------------------
# profile intervals
# --------------------------------------------------------------------------------------------
T = np.linspace(0.0, 1.0, 12)
SIGMA = 0.5


def _fit(model, names, x0, boxes, data, fixed=()):
    from identification.ground_test import box_space

    space = box_space(names, [""] * len(names), x0, boxes, fixed)
    problem = ResidualProblem(space, lambda P: np.array([model(r) for r in P]) - data, data.size,
                              sigma=SIGMA)
    result = least_squares(problem, starts=0, first_guess=space.start(), x_scale="jac")
    laplace(problem, result, rng=np.random.default_rng(0), diff_step=1e-6, n_draws=2000)
    result.params = result_parameters(space, result)
    result.lmfit_result = minimizer_result(problem, result, result.params, method="test")
    return problem, result


def test_linear_gaussian_profile_is_the_laplace_interval():
    """y = a + b t with known noise: the profile of each parameter is the parabola of its
    marginal, so the profile interval is x +- z sd with sd from (X^T X)^-1 sigma^2 (closed
    form, independent of the fit). Tolerance 1e-3 of the half-width: the root finder stops at
    rtol 5e-5 and leastsq's refits at ftol 1.5e-8 of a chi-square near 12."""
    rng = np.random.default_rng(3)
    data = 0.3 + 2.0 * T + rng.normal(0, SIGMA, T.size)
    problem, result = _fit(lambda r: r[0] + r[1] * T, ["a", "b"], [0.0, 1.0],
                           [(-50, 50), (-50, 50)], data)
    X = np.column_stack([np.ones_like(T), T])
    xhat = np.linalg.solve(X.T @ X, X.T @ data)
    sd = SIGMA * np.sqrt(np.diag(np.linalg.inv(X.T @ X)))
    prof = profile_intervals(problem, result)
    for j, n in enumerate(("a", "b")):
        for key, lev in (("ci68", 0.68), ("ci95", 0.95)):
            h = stats.norm.ppf(0.5 + lev / 2) * sd[j]
            lo, hi = prof["intervals"][n][key]
            assert lo == pytest.approx(xhat[j] - h, abs=1e-3 * h)
            assert hi == pytest.approx(xhat[j] + h, abs=1e-3 * h)
        assert prof["deviation"][n] < 2e-3
    assert prof["not_parabolic"] == [] and prof["at_bound"] == []
    # the Laplace stderr carried into lmfit.Parameters is the same closed form
    assert result.params["b"].stderr == pytest.approx(sd[1], rel=1e-4)
    assert result.params["a"].correl["b"] == pytest.approx(
        np.linalg.inv(X.T @ X)[0, 1] / np.sqrt(np.prod(np.diag(np.linalg.inv(X.T @ X)))),
        rel=1e-4)


def _exp_problem(with_offset: bool):
    """y = exp(theta) t + c (c fixed at 0 when ``with_offset`` is False): linear in
    phi = exp(theta), so the profile of theta is that of phi mapped through the log."""
    rng = np.random.default_rng(11)
    data = (1.6 * T + 0.2 if with_offset else 1.0 * T) + rng.normal(0, SIGMA, T.size)
    fixed = () if with_offset else ("c",)
    problem, result = _fit(lambda r: np.exp(r[0]) * T + r[1], ["theta", "c"], [0.0, 0.0],
                           [(-6.0, 3.0), (-50, 50)], data, fixed)
    X = np.column_stack([T, np.ones_like(T)]) if with_offset else T[:, None]
    cov = SIGMA ** 2 * np.linalg.inv(X.T @ X)
    phi = np.linalg.solve(X.T @ X, X.T @ data)[0]
    return problem, result, data, phi, math.sqrt(cov[0, 0])


@pytest.mark.parametrize("with_offset", [True, False], ids=["conf_interval", "one_parameter"])
def test_exponential_parameter_has_the_asymmetric_profile_of_the_closed_form(with_offset):
    """theta = ln phi with phi linear: the profile interval of theta is
    [ln(phi - z sd_phi), ln(phi + z sd_phi)] exactly (here sd_phi / phi ~ 0.3: strongly
    asymmetric about theta), while Laplace gives theta +- z sd_phi / phi. Checked against the
    closed form and against a brute-force scan of the profile (c solved in closed form at each
    theta of a fine grid), to 1e-3 of the half-width (root finder and refits, as above; the
    scan's grid step is 2e-5)."""
    problem, result, data, phi, sd_phi = _exp_problem(with_offset)
    assert 0.15 < sd_phi / phi < 0.45
    prof = profile_intervals(problem, result, ["theta"])
    th = math.log(phi)
    assert result.x_opt[0] == pytest.approx(th, abs=1e-6)
    # an independent profile: for each theta on a grid the best c in closed form
    grid = np.arange(th - 3.0, th + 1.5, 2e-5)
    resid = data[None, :] - np.exp(grid)[:, None] * T[None, :]
    c = resid.mean(axis=1) if with_offset else np.zeros(grid.size)
    dchi = (((resid - c[:, None]) / SIGMA) ** 2).sum(axis=1)
    dchi -= dchi.min()
    for key, lev in (("ci68", 0.68), ("ci95", 0.95)):
        z = stats.norm.ppf(0.5 + lev / 2)
        lo, hi = prof["intervals"]["theta"][key]
        inside = grid[dchi <= stats.chi2.ppf(lev, 1)]
        h = z * sd_phi / phi
        assert lo == pytest.approx(math.log(phi - z * sd_phi), abs=1e-3 * h)
        assert hi == pytest.approx(math.log(phi + z * sd_phi), abs=1e-3 * h)
        assert lo == pytest.approx(inside.min(), abs=1e-3 * h)
        assert hi == pytest.approx(inside.max(), abs=1e-3 * h)
        # the Laplace half-width is the linearised sd_phi / phi (Jacobian at the optimum)
        assert prof["laplace_halfwidth"]["theta"][key] == pytest.approx(h, rel=1e-3)
    # strongly asymmetric: the lower side is much longer than the upper
    lo, hi = prof["intervals"]["theta"]["ci95"]
    assert (th - lo) > 1.25 * (hi - th)
    assert prof["not_parabolic"] == ["theta"] and prof["deviation"]["theta"] > NONPARABOLIC


def test_report_shows_profile_beside_laplace_for_a_non_parabolic_profile():
    problem, result, *_ = _exp_problem(True)
    from identification.result import summarize

    post = result.posterior
    result.parameters = summarize(problem.space, post.samples, post.x_map, post.stderr)
    attach_profile(result, profile_intervals(problem, result))
    entry = result.parameters["theta"]
    assert entry["profile_ci95"] == result.diagnostics["profile"]["intervals"]["theta"]["ci95"]
    assert entry["profile_parabolic"] is False and "ci95" in entry   # Laplace kept
    # the offset c enters linearly: its profile is parabolic, not shown side by side
    assert result.parameters["c"]["profile_parabolic"] is True
    text = result.fit_report()
    assert "[[Variables]]" in text and "[[Confidence Intervals]]" in text
    side = [ln for ln in text.splitlines() if ln.strip().startswith("theta") and "profile" in ln]
    assert len(side) == 2 and all("Laplace [" in ln for ln in side)
    lo, hi = entry["profile_ci95"]
    assert f"{lo:.5g}" in side[1] and f"{hi:.5g}" in side[1]
    assert not [ln for ln in text.splitlines() if ln.strip().startswith("c ") and "profile" in ln]
