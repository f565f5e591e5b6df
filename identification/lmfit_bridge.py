"""The project's parameter space and fits in lmfit's terms: :class:`lmfit.Parameters` in and
out, a ``fit_report`` text, and profile-likelihood intervals by :func:`lmfit.conf_interval`.

Conversion. A :class:`~identification.space.ParameterSpace` parameter is an
:class:`lmfit.Parameter` with ``value`` (the start, or the estimate), ``min`` / ``max`` (its
prior's bounds) and ``vary`` (False for a fixed one). lmfit has no units and no priors, so both
ride in the parameter's ``user_data`` mapping: ``{"unit": SI unit, "prior": Prior.to_dict(),
"step": finite-difference step or None}``; a parameter without them takes its unit and prior
shape from the space it is applied to, else no unit and a uniform prior on ``[min, max]``. An
``expr`` constraint has no counterpart (the space's parameters are independent, each with its
own prior) and is refused with a message naming the parameter.

Profile intervals. For each parameter ``p`` the profile is the least-squares cost with ``p``
held and every other free parameter refitted, :math:`\\chi^2_p(v) = \\min_{\\theta_{-p}}
\\chi^2(v, \\theta_{-p})` (whitened data residuals and the prior residuals, the same objective
the fit minimised, at the noise levels the Laplace posterior used). Its ``level`` interval is
where :math:`\\chi^2_p(v) - \\chi^2_{min} \\le \\chi^2_{1}(\\mathrm{level})` (the likelihood
ratio with the noise known, ``prob_func`` :func:`likelihood_ratio` in place of lmfit's default
F-test, which re-estimates the noise and widens the interval by a Student factor the Laplace
intervals do not have). For a model linear in the parameters with Gaussian noise the profile
is the parabola :math:`(v - \\hat v)^2 / \\sigma_p^2` and the interval is the Laplace one,
:math:`\\hat v \\pm z \\sigma_p`; a profile that reaches a bound of the box first is cut there
(the prior is zero beyond it), as the Laplace draws are clipped there.

Parabolic or not. A profile is called *not parabolic* when, at either level and on either
side, its distance from the estimate differs from the Laplace half-width
:math:`z_{level} \\sigma_p` by more than :data:`NONPARABOLIC` (10 %) of it. Below that the two
intervals agree to within what the reports' four significant digits and the Laplace draws'
quantile noise (about 2 % of the half-width at 4000 draws) show; a 95 % interval 10 % too short
covers 92 %, not 95 %, which is where the distinction starts to matter. Only these parameters
are shown side by side; the result keeps every profiled interval.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy import stats
from scipy.optimize import root_scalar

from models.errors import InputError
from identification.space import Parameter, ParameterSpace, Prior

__all__ = ["NONPARABOLIC", "PROFILE_LEVELS", "INTERVALS", "to_parameters", "from_parameters",
           "apply_parameters", "result_parameters", "minimizer_result", "likelihood_ratio",
           "profile_intervals", "check_profile_names", "attach_profile", "fit_report",
           "profile_lines"]

#: largest relative difference of a profile interval's sides from the Laplace half-width at
#: which the profile still counts as parabolic (module docstring)
NONPARABOLIC = 0.10
#: levels of the profile intervals, those of the Laplace ``ci68`` / ``ci95``
PROFILE_LEVELS = (0.68, 0.95)
#: the values of ``--intervals``: Laplace only, or the profile intervals beside them
INTERVALS = ("laplace", "profile")


def _lmfit():
    import lmfit

    return lmfit


# --------------------------------------------------------------------------------------------
# ParameterSpace <-> lmfit.Parameters
# --------------------------------------------------------------------------------------------
def to_parameters(space: ParameterSpace, values: Mapping[str, float] | None = None):
    """The space as :class:`lmfit.Parameters`, in its order.

    Parameters
    ----------
    space
        The parameter space.
    values
        Values [SI] by name to set instead of the space's start / fixed values.

    Returns
    -------
    lmfit.Parameters
        ``value`` [SI], ``min`` / ``max`` the prior's bounds (unbounded for a fixed one),
        ``vary`` False for a fixed one; ``user_data`` ``{"unit", "prior", "step"}`` (module
        docstring).
    """
    lm = _lmfit()
    out = lm.Parameters()
    for p in space.parameters:
        v = float(values[p.name]) if values is not None and p.name in values else float(p.value)
        try:
            if p.fixed:
                out.add(p.name, value=v, vary=False,
                        user_data={"unit": p.unit, "prior": {"kind": "fixed"}, "step": p.step})
            else:
                out.add(p.name, value=v, min=p.prior.lower, max=p.prior.upper, vary=True,
                        user_data={"unit": p.unit, "prior": p.prior.to_dict(),
                                   "step": p.step})
        except NameError:
            raise InputError("not a valid lmfit parameter name (letters, digits and '_', "
                             "not starting with a digit)", key=f"parameters.{p.name}") from None
    return out


def _parameter(par, base: Parameter | None, key: str) -> Parameter:
    """One :class:`lmfit.Parameter` as a space parameter (``base``: the space's parameter of
    the same name, for the unit, prior shape and step it does not carry)."""
    if par.expr is not None:
        raise InputError(f"has the lmfit constraint expr = {par.expr!r}; a parameter space "
                         "has independent parameters, each with its own prior: fix it "
                         "(vary = False) or give it bounds instead", key=key)
    ud = par.user_data if isinstance(par.user_data, Mapping) else {}
    unit = ud.get("unit", base.unit if base is not None else "")
    step = ud.get("step", base.step if base is not None else None)
    v = float(par.value)
    if not math.isfinite(v):
        raise InputError(f"value must be finite, got {par.value!r}", key=key)
    if not par.vary:
        return Parameter(par.name, unit, v)
    lo, hi = float(par.min), float(par.max)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise InputError(f"a free parameter needs finite min < max (the bounds of its "
                         f"prior), got min = {lo:g}, max = {hi:g}", key=key)
    pd = ud.get("prior")
    if not isinstance(pd, Mapping):
        pd = base.prior.to_dict() if base is not None and base.prior is not None else {}
    kind = pd.get("kind", "uniform")
    anchor = pd.get("anchor") if isinstance(pd.get("anchor"), Mapping) else None
    at = {"anchor": anchor["flag"], "anchor_t": float(anchor["t"])} if anchor else {}
    try:
        if kind in ("uniform", "fixed"):  # a fixed parameter set free: uniform on its box
            prior = Prior("uniform", lo, hi, **at)
        elif kind == "normal":
            prior = Prior("normal", lo, hi, float(pd["mean"]), float(pd["sd"]), **at)
        elif kind == "lognormal":
            prior = Prior("lognormal", lo, hi, float(pd["median"]), float(pd["sigma"]))
        else:
            raise InputError(f"unknown prior '{kind}' in user_data (uniform, normal, "
                             "lognormal)")
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"user_data prior {dict(pd)!r} is incomplete ({exc})",
                         key=key) from None
    except InputError as exc:
        exc.key = exc.key or key
        raise
    if not lo <= v <= hi:
        raise InputError(f"value {v:g} lies outside [min, max] = [{lo:g}, {hi:g}]", key=key)
    return Parameter(par.name, unit, v, prior, step)


def from_parameters(params, like: ParameterSpace | None = None, *,
                    key: str = "params") -> ParameterSpace:
    """A :class:`ParameterSpace` from :class:`lmfit.Parameters` (the inverse of
    :func:`to_parameters`).

    Parameters
    ----------
    params : lmfit.Parameters
        The parameters, in the order of the space made.
    like
        A space whose parameter of the same name gives the unit, prior shape and step where
        ``user_data`` does not.
    key
        Prefix of the key errors name (``key.NAME``).

    Raises
    ------
    InputError
        An ``expr`` constraint, a free parameter without finite bounds, a value outside them,
        an incomplete prior in ``user_data``.
    """
    out = []
    for name, par in params.items():
        base = like[name] if like is not None and name in like.names else None
        out.append(_parameter(par, base, f"{key}.{name}"))
    return ParameterSpace(out)


def apply_parameters(space: ParameterSpace, params, *, key: str = "params") -> ParameterSpace:
    """``space`` with the parameters named in ``params`` (a subset, any order) replaced by
    their :class:`lmfit.Parameters` entries: start value, bounds, ``vary``.

    Raises
    ------
    InputError
        A name the space does not have (the message lists those it has), or what
        :func:`from_parameters` refuses.
    """
    if params is None:
        return space
    unknown = [n for n in params if n not in space.names]
    if unknown:
        raise InputError(f"not a parameter of this fit (its parameters: "
                         f"{', '.join(space.names)})", key=f"{key}.{unknown[0]}")
    return ParameterSpace([_parameter(params[p.name], p, f"{key}.{p.name}")
                           if p.name in params else p for p in space.parameters])


def result_parameters(space: ParameterSpace, result):
    """The fitted parameters as :class:`lmfit.Parameters`: ``value`` the estimate,
    ``init_value`` the start, ``stderr`` and ``correl`` from the Laplace covariance (fixed
    parameters: ``vary`` False, no ``stderr``)."""
    post = result.posteriors.get("laplace", result.posterior)
    x = np.asarray(result.posterior.x_map, float)
    full = space.full(x[None, :])[0]
    out = to_parameters(space)
    cov = post.covariance
    se = np.asarray(post.stderr, float)
    for j, name in enumerate(space.free_names):
        par = out[name]
        par.init_value = float(par.value)
        par.value = float(full[space.names.index(name)])
        par.stderr = float(se[j])
        if cov is not None:
            d = np.sqrt(np.clip(np.diag(cov), 0.0, None))
            par.correl = {other: float(cov[j, k] / (d[j] * d[k])) if d[j] > 0 and d[k] > 0
                          else 0.0 for k, other in enumerate(space.free_names) if k != j}
    return out


def minimizer_result(problem, result, params, *, method: str):
    """An :class:`lmfit.minimizer.MinimizerResult` of the fit at ``result.x_opt`` (what
    :func:`lmfit.fit_report` and :func:`lmfit.conf_interval` read): ``chisqr`` the sum of the
    squared whitened residuals (data and prior rows), ``ndata`` the data residuals,
    ``nvarys`` the free parameters, lmfit's AIC / BIC of that chi-square, ``nfev`` the
    residual evaluations of the fit."""
    lm = _lmfit()
    x = np.asarray(result.x_opt, float)
    r = problem.least_squares_residuals(x)
    m, d = problem.n_residuals, problem.space.ndim
    chisqr = float(r @ r)
    n2ll = m * math.log(max(chisqr, 1e-300) / m)
    best = result.best
    return lm.minimizer.MinimizerResult(
        params=params, var_names=list(problem.space.free_names), method=method,
        nfev=int(sum(s.nfev for s in result.starts)), ndata=m, nvarys=d, nfree=m - d,
        chisqr=chisqr, redchi=chisqr / max(m - d, 1), aic=n2ll + 2 * d,
        bic=n2ll + math.log(m) * d, residual=r, errorbars=True, success=bool(best.success),
        message=best.message)


# --------------------------------------------------------------------------------------------
# profile-likelihood intervals
# --------------------------------------------------------------------------------------------
def likelihood_ratio(best_fit, new_fit) -> float:
    """``prob_func`` of :func:`lmfit.conf_interval`: the chi-square probability of the rise
    of the cost with ``nfix`` parameters held, :math:`F_{\\chi^2_{nfix}}(\\chi^2_{new} -
    \\chi^2_{best})` (the likelihood-ratio test with the noise known)."""
    nfix = best_fit.nvarys - new_fit.nvarys
    return float(stats.chi2.cdf(max(new_fit.chisqr - best_fit.chisqr, 0.0), nfix))


def _z(level: float) -> float:
    return float(stats.norm.ppf(0.5 + 0.5 * level))


def _scan_one(cost, x0: float, se: float, lo: float, hi: float, chi0: float,
              levels: Sequence[float], direction: int, maxiter: int = 200):
    """Profile limits of a single free parameter (no other parameter to refit: the profile
    is the cost itself), bracketed by steps of ``se`` as :func:`lmfit.conf_interval` does."""
    def prob(v):
        return float(stats.chi2.cdf(max(cost(v) - chi0, 0.0), 1))

    bound = hi if direction > 0 else lo
    step = se if 0 < se < abs(bound - x0) else 0.2 * abs(bound - x0)
    limit, p = x0, 0.0
    for _ in range(maxiter):
        limit = limit + direction * step
        if (limit - bound) * direction >= 0:
            limit = bound
        p = prob(limit)
        if p >= max(levels) or limit == bound:
            break
    out, a = [], x0
    for lev in levels:
        if lev > p:
            out.append((lev, direction * math.inf))
            continue
        sol = root_scalar(lambda v: prob(v) - lev, method="toms748",
                          bracket=sorted([a, limit]), rtol=0.5e-4)
        a = sol.root
        out.append((lev, sol.root))
    return out


def check_profile_names(space: ParameterSpace, names: Sequence[str] | None,
                        allowed: Sequence[str] | None = None) -> list[str] | None:
    """``names`` when each is a free parameter of ``space`` (and in ``allowed``, when given);
    else an :class:`InputError` naming the first that is not and listing those that are.
    Checked before a fit, so a misspelt name costs nothing."""
    if names is None:
        return None
    ok = [n for n in space.free_names if allowed is None or n in allowed]
    for n in names:
        if n not in ok:
            raise InputError(f"not a fitted parameter that can be profiled (those: "
                             f"{', '.join(ok)})", key=f"profile.{n}")
    return list(names)


def profile_intervals(problem, result, names: Sequence[str] | None = None, *,
                      levels: Sequence[float] = PROFILE_LEVELS, maxiter: int = 50
                      ) -> dict[str, Any]:
    """Profile-likelihood intervals of free parameters at ``result.x_opt`` (module docstring),
    by :func:`lmfit.conf_interval` with :func:`likelihood_ratio` (one free parameter: the
    cost itself, bracketed the same way).

    Parameters
    ----------
    problem : identification.problem.GaussianProblem
        The problem at the noise levels of the Laplace posterior.
    result : identification.result.Result
        After :func:`identification.engines.laplace` (its ``stderr`` sets the first steps).
    names
        Free parameters to profile (default: all); the others are refitted at every point.
    levels
        Probability levels.
    maxiter
        Steps of the search for a point beyond the largest level.

    Returns
    -------
    dict
        ``intervals``: name -> ``{"ci68": [lo, hi], "ci95": [lo, hi], ...}`` [SI] (a side cut
        at a bound of the box holds the bound; ``at_bound`` lists those sides),
        ``laplace_halfwidth`` and ``deviation`` (:data:`NONPARABOLIC`; None where the
        Laplace half-width is 0) per name,
        ``not_parabolic``: the names past it, ``evaluations``: residual evaluations,
        ``warnings``: lmfit's notes on bounds and stalls, ``method``, ``criterion``.
    """
    lm = _lmfit()
    space = problem.space
    x = np.asarray(result.x_opt, float)
    names = list(space.free_names) if names is None else check_profile_names(space, names)
    post = result.posteriors.get("laplace", result.posterior)
    se = np.asarray(post.stderr, float)
    params = result_parameters(space, result)
    count = [0]

    def fcn(pars):
        count[0] += 1
        theta = np.array([pars[n].value for n in space.free_names], float)
        return problem.least_squares_residuals(theta)

    r0 = problem.least_squares_residuals(x)
    chi0 = float(r0 @ r0)
    levels = sorted(float(v) for v in levels)
    notes: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if not names:
            raw = {}
        elif space.ndim == 1:
            cost = lambda v: float(np.sum(fcn({space.free_names[0]: _Val(v)}) ** 2))  # noqa: E731
            raw = {names[0]: [*_scan_one(cost, x[0], se[0], space.lower[0], space.upper[0],
                                         chi0, levels, -1, maxiter)[::-1],
                              (0.0, float(x[0])),
                              *_scan_one(cost, x[0], se[0], space.lower[0], space.upper[0],
                                         chi0, levels, 1, maxiter)]}
        else:
            for n in names:  # conf_interval refuses a parameter without a usable stderr
                if not params[n].stderr > 0:
                    params[n].stderr = 1e-3 * (space.upper[space.free_names.index(n)]
                                               - space.lower[space.free_names.index(n)])
            mini = lm.Minimizer(fcn, params)
            best = lm.minimizer.MinimizerResult(params=params, chisqr=chi0,
                                                nvarys=space.ndim,
                                                nfree=problem.n_residuals - space.ndim)
            raw = lm.conf_interval(mini, best, p_names=names, sigmas=levels,
                                   prob_func=likelihood_ratio, maxiter=maxiter)
        notes = [str(w.message) for w in caught]
    intervals, dev, half, at_bound = {}, {}, {}, []
    for n in names:
        j = space.free_names.index(n)
        lo_b, hi_b = float(space.lower[j]), float(space.upper[j])
        entry: dict[str, Any] = {}
        worst = 0.0
        for lev in levels:
            key = f"ci{round(100 * lev)}"
            sides = {}
            for p, v in raw[n]:
                if abs(p - lev) < 1e-9:
                    side = "hi" if v > x[j] else "lo"
                    if math.isinf(v):
                        side = "hi" if v > 0 else "lo"
                        v = hi_b if v > 0 else lo_b
                        at_bound.append(f"{n} {key} {'upper' if side == 'hi' else 'lower'}")
                    sides[side] = float(v)
            lo_v, hi_v = sides.get("lo"), sides.get("hi")
            entry[key] = [lo_v, hi_v]
            h = _z(lev) * se[j]
            half.setdefault(n, {})[key] = float(h)
            for d in ((hi_v - x[j]) if hi_v is not None else None,
                      (x[j] - lo_v) if lo_v is not None else None):
                if d is None or not h > 0:
                    worst = math.inf
                else:
                    worst = max(worst, abs(d / h - 1.0))
        intervals[n] = entry
        dev[n] = float(worst)
    not_parabolic = [n for n in names if not dev[n] <= NONPARABOLIC]
    # a side with no Laplace width to compare with (stderr 0) has no finite deviation
    dev = {n: (v if math.isfinite(v) else None) for n, v in dev.items()}
    return {"method": "profile likelihood (lmfit.conf_interval, prob_func: likelihood ratio "
                      "with the noise known; every other free parameter refitted by lmfit's "
                      "leastsq at each point)",
            "criterion": f"not parabolic: a side of a profile interval differs from the "
                         f"Laplace half-width z*stderr by more than {NONPARABOLIC:.0%} of it",
            "levels": levels, "intervals": intervals, "laplace_halfwidth": half,
            "deviation": dev,
            "not_parabolic": not_parabolic,
            "at_bound": at_bound, "evaluations": int(count[0]), "warnings": notes}


class _Val:
    """A bare ``.value`` holder: the single-parameter profile calls the residual function
    with a mapping like lmfit's."""

    def __init__(self, v: float) -> None:
        self.value = float(v)


def attach_profile(result, profile: Mapping[str, Any]) -> None:
    """Record ``profile`` in ``result``: ``diagnostics.profile`` whole, and ``profile_ci68``,
    ``profile_ci95`` and ``profile_parabolic`` in the entry of every reported parameter that
    was profiled (the Laplace ``ci68`` / ``ci95`` stay as they are)."""
    result.diagnostics["profile"] = dict(profile)
    for n, iv in profile["intervals"].items():
        entry = result.parameters.get(n)
        if entry is None:
            continue
        for key, pair in iv.items():
            entry[f"profile_{key}"] = list(pair)
        entry["profile_parabolic"] = n not in profile["not_parabolic"]


# --------------------------------------------------------------------------------------------
# reports
# --------------------------------------------------------------------------------------------
def _g(v) -> str:
    return "-" if v is None else f"{v:.5g}"


def profile_lines(result, names: Sequence[str] | None = None) -> list[str]:
    """Lines showing the profile and the Laplace intervals side by side for every profiled
    parameter whose profile is not parabolic (empty without a profile)."""
    prof = result.diagnostics.get("profile")
    if not prof:
        return []
    post = result.posteriors.get("laplace", result.posterior) if result.posteriors else None
    shown = [n for n in prof["not_parabolic"] if names is None or n in names]
    out = []
    for n in shown:
        iv = prof["intervals"][n]
        lap = result.parameters.get(n)
        if lap is None and post is not None:   # a fitted parameter that is not reported
            j = result.names.index(n) if n in result.names else None
            lap = None if j is None else {
                "ci68": [float(np.quantile(post.samples[:, j], q)) for q in (0.16, 0.84)],
                "ci95": [float(np.quantile(post.samples[:, j], q)) for q in (0.025, 0.975)]}
        for key in ("ci68", "ci95"):
            if key not in iv:
                continue
            lv = lap[key] if lap is not None else [None, None]
            out.append(f"{n:26s} {key[2:]} %  profile [{_g(iv[key][0])}, {_g(iv[key][1])}]  "
                       f"Laplace [{_g(lv[0])}, {_g(lv[1])}]")
    if shown:
        out.append(f"profile not parabolic (a side {NONPARABOLIC:.0%} or more off the Laplace "
                   f"half-width) for: {', '.join(shown)}")
    return out


def fit_report(result, *, min_correl: float = 0.1) -> str:
    """lmfit's :func:`lmfit.fit_report` of a ground-test fit (statistics, variables with
    standard errors and start values, correlations), followed by the profile intervals (a
    table like lmfit's :func:`lmfit.ci_report`, absolute values to five significant digits:
    SI magnitudes from 1e-12 to 1e9 sit side by side) and, side by side with the Laplace
    ones, those whose profile is not parabolic, when they were computed."""
    lm = _lmfit()
    mres = result.lmfit_result
    if mres is None:
        raise ValueError("this result has no lmfit parameters (not a ground-test fit)")
    text = lm.fit_report(mres, min_correl=min_correl)
    prof = result.diagnostics.get("profile")
    if prof:
        levels = prof["levels"]
        heads = ([f"{100 * lev:.0f} % lo" for lev in levels[::-1]] + ["estimate"]
                 + [f"{100 * lev:.0f} % hi" for lev in levels])
        width = max(len(n) for n in prof["intervals"])
        rows = ["    " + " " * (width + 1) + "".join(h.rjust(13) for h in heads)]
        for n, iv in prof["intervals"].items():
            vals = ([iv[f"ci{round(100 * lev)}"][0] for lev in levels[::-1]]
                    + [mres.params[n].value]
                    + [iv[f"ci{round(100 * lev)}"][1] for lev in levels])
            rows.append(f"    {n.ljust(width)}:" + "".join(_g(v).rjust(13) for v in vals))
        text += ("\n[[Confidence Intervals]] (profile likelihood; lmfit.conf_interval)\n"
                 + "\n".join(rows))
        lines = profile_lines(result)
        text += ("\n[[Profile beside Laplace]] (profiles that are not parabolic)\n"
                 + "\n".join("    " + ln for ln in lines) if lines else
                 f"\n    every profile parabolic within {NONPARABOLIC:.0%} of the Laplace "
                 "half-width")
    return text
