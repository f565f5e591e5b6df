"""The ground-test identifications as problems run by the engines, each returning a
:class:`recon.result.Result`.

The models (residual functions, parameters, bounds, start values, derived curves) live in
:mod:`identification`; here each one becomes a :class:`recon.problem.ResidualProblem` and runs
through the same engines as a reconstruction::

    result = least_squares(problem, ...)          # multi-start (and staged) polish
    problem = problem.with_sigma(noise_estimate)  # noise levels from the residuals
    result = laplace(problem, result, ...)        # the Gaussian at the optimum

* :func:`identify_hysteresis` -- branch tables of a hysteresis element from a static
  load-deflection record (kind ``"hysteresis_fit"``);
* :func:`identify_rig` -- actuator characteristics or the platform's transport delay from a
  rig record (kind ``"rig"``);
* :func:`refine_resonance` -- the Abel estimate of a resonance test refined by fitting the
  simulated oscillator to the whole record (kind ``"resonance_refinement"``).

Noise. A ground-test record states no noise level the fit could trust, so every fit runs
first with a stated or unit noise level (its optimum does not depend on it under the flat
priors used here), then re-estimates the level of each channel from the residuals at the
optimum (:meth:`recon.problem.ResidualProblem.noise_estimate`, the reduced chi-square) and
takes the Laplace posterior with it. ``diagnostics.noise`` records both levels.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from models.errors import DataError, InputError
from recon.engines import laplace, least_squares
from recon.problem import Parameter, ParameterSpace, Prior, ResidualProblem
from recon.result import Result, summarize, summarize_derived

__all__ = ["identify_hysteresis", "identify_rig", "refine_resonance", "reweight",
           "derived_parameters"]

log = logging.getLogger("dockrecon.identify")


def _space(names: Sequence[str], units: Sequence[str], values: Sequence[float],
           boxes: Sequence[tuple[float, float]], fixed: Sequence[str] = ()) -> ParameterSpace:
    """Named parameters with uniform priors on their boxes; ``fixed`` ones held at their
    value (clipped into the box)."""
    out = []
    for n, u, v, (lo, hi) in zip(names, units, values, boxes):
        v = float(min(max(v, lo), hi))
        out.append(Parameter(n, u, v) if n in fixed
                   else Parameter(n, u, v, Prior("uniform", float(lo), float(hi))))
    return ParameterSpace(out)


def reweight(problem: ResidualProblem, result: Result,
             groups: Sequence[str] | None = None) -> ResidualProblem:
    """The problem with the noise levels of ``groups`` (default: all) re-estimated from the
    residuals at ``result.x_opt``; records ``diagnostics.noise`` (the levels before and after,
    per group) in ``result``."""
    sigma = problem.noise_estimate(result.x_opt, groups)
    result.diagnostics["noise"] = {
        "method": "reduced chi-square of each group's residuals at the optimum",
        "sigma_start": {g: float(problem.sigma[sl][0]) for g, sl in problem.groups.items()},
        "sigma_estimated": {g: float(sigma[sl][0]) for g, sl in problem.groups.items()}}
    return problem.with_sigma(sigma)


def derived_parameters(result: Result, space: ParameterSpace,
                       derive: Callable[[np.ndarray], Mapping[str, float]],
                       units: Mapping[str, str], *, rel_step: float = 1e-6
                       ) -> dict[str, dict[str, Any]]:
    """Summaries of quantities derived from the parameters, in the result schema.

    ``derive(full)`` maps one full parameter vector (every parameter of ``space``, SI) to
    named quantities. ``map`` is its value at the optimum; ``median``, ``ci68``, ``ci95`` are
    quantiles of the current posterior's draws mapped through it; ``stderr`` is the
    linearised :math:`\\sqrt{g^T C g}` with the Laplace covariance ``C`` and ``g`` the central
    differences of ``derive`` (relative step ``rel_step``), which a few draws clipped to a
    bound cannot disturb.
    """
    post = result.posterior
    x = np.asarray(post.x_map, float)
    full0 = space.full(x[None, :])[0]
    at_map = derive(full0)
    keys = list(at_map)
    draws = space.full(post.samples)
    values = {k: np.empty(draws.shape[0]) for k in keys}
    for i, row in enumerate(draws):
        d = derive(row)
        for k in keys:
            values[k][i] = d[k]
    out = summarize_derived(values, units, at_map)
    lap = result.posteriors.get("laplace")
    if lap is not None and lap.covariance is not None:
        g = np.zeros((len(keys), x.size))
        for j in range(x.size):
            h = rel_step * max(abs(x[j]), 1e-12 * (space.upper[j] - space.lower[j]), 1e-300)
            up, dn = x.copy(), x.copy()
            up[j] += h
            dn[j] -= h
            vu = derive(space.full(up[None, :])[0])
            vd = derive(space.full(dn[None, :])[0])
            g[:, j] = [(vu[k] - vd[k]) / (2 * h) for k in keys]
        var = np.einsum("ij,jk,ik->i", g, lap.covariance, g)
        for k, v in zip(keys, var):
            out[k]["stderr"] = float(np.sqrt(v)) if v >= 0 else None
    return out


# --------------------------------------------------------------------------------------------
# hysteresis
# --------------------------------------------------------------------------------------------
def identify_hysteresis(q: Sequence[float] | np.ndarray, force: Sequence[float] | np.ndarray,
                        start, *, fixed: Sequence[str] = (), n_starts: int = 4,
                        rel_spread: float = 0.08, seed: int = 0,
                        max_nfev: int | None = None, n_draws: int = 4000) -> Result:
    """Fit the branch tables of ``start`` to a quasi-static record
    (:mod:`identification.hysteresis_fit`).

    Parameters
    ----------
    q
        Deformation samples [m or rad], in the order they were taken.
    force
        Measured generalized force [N or N m] at each sample.
    start : HysteresisElement or FrictionBrakeElement
        Start tables; fix N_P, N_N, the variant and the parameter boxes (uniform priors).
    fixed
        Internal parameters held at their start value.
    n_starts
        Local fits: from the start tables, then from seeded draws within ``rel_spread``
        (relative) of them. Each is a staged polish (breakpoints held, then all free;
        :func:`identification.hysteresis_fit.breakpoint_parameters`): the piecewise-linear
        model has local minima where a kink sits on the wrong side of a data feature.
    seed
        Seed of the draws and of the Laplace draws.
    max_nfev
        Limit on residual evaluations of each stage of each local fit.
    n_draws
        Laplace draws behind the intervals.

    Returns
    -------
    Result
        Kind ``"hysteresis_fit"``. ``parameters``: every reported parameter (breakpoints,
        node forces, stiffnesses; derived ones with ``prior: {"kind": "derived"}``) with its
        start value (``start``); sections ``element`` (the fitted, validated tables),
        ``residual_rms`` [N or N m] and its unit, ``n_points``, ``optimizer``, ``brake``
        (slips and final shift of a friction brake, else None) and ``fitted`` (``q``,
        ``force``, ``model``: the record and the fitted element's force along it).
        ``diagnostics.noise`` holds the force noise estimated from the residuals, which
        scales the intervals.

    Raises
    ------
    InputError
        Bad arrays or parameter names.
    DataError
        The record does not follow the element's state table at the start tables, or the
        fit converges to tables that violate the paper's constraints.
    """
    from identification import hysteresis_fit as H

    q, f = H.check_record(q, force, start)
    values0 = H.internal_parameters(start)
    boxes = H.parameter_bounds(start)
    names = list(boxes)
    unknown = set(fixed) - set(names)
    if unknown:
        raise InputError(f"unknown parameter (free ones: {', '.join(names)})",
                         key=f"fixed.{sorted(unknown)[0]}")
    space = _space(names, [H.parameter_unit(n, start) for n in names],
                   [values0[n] for n in names], [boxes[n] for n in names], fixed)
    loop = H.LoopResidual(q, f, start, names)
    problem = ResidualProblem(space, loop, q.size)
    rng = np.random.default_rng(seed)
    x0 = np.array([values0[n] for n in space.free_names])
    starts = [x0] + [x0 * (1.0 + rng.uniform(-rel_spread, rel_spread, x0.size))
                     for _ in range(max(1, n_starts) - 1)]
    result = least_squares(problem, starts=0, first_guess=np.array(starts), seed=seed,
                           max_nfev=max_nfev, origin="start tables", x_scale="jac",
                           hold=H.breakpoint_parameters(space.free_names),
                           kind="hysteresis_fit")
    result.seed = seed
    free_vals = dict(zip(names, space.full(result.x_opt[None, :])[0]))
    vals = H.reported_values(free_vals, start)
    try:
        element = H.element_from_parameters(vals, start)
    except InputError as exc:
        raise DataError(f"the fit converged to invalid tables ({exc}); adjust the start "
                        "tables", key="element") from None
    problem = reweight(problem, result)
    laplace(problem, result, rng=rng, n_draws=n_draws)

    order = list(H.parameter_values(element))
    units = {k: H.parameter_unit(k, start) for k in order}
    derived = derived_parameters(
        result, space, lambda full: H.reported_values(dict(zip(names, full)), start), units)
    free = summarize(space, result.posterior.samples, result.posterior.x_map,
                     result.posterior.stderr)
    start_vals = H.parameter_values(start)
    params = {}
    for k in order:
        entry = dict(derived[k])
        entry["map"] = vals[k]
        entry["prior"] = free[k]["prior"] if k in free else {"kind": "derived"}
        entry["start"] = start_vals.get(k)
        params[k] = entry
    result.parameters = params

    fitted = element.trace(q)
    _, slips, shift = loop.trace(free_vals)
    best = result.best
    result.sections.update({
        "element": element.to_dict(),
        "residual_rms": float(np.sqrt(np.mean((fitted - f) ** 2))),
        "residual_rms_unit": element.units[1],
        "n_points": int(q.size),
        "optimizer": {"method": "multi-start staged least squares (recon.engines."
                                "least_squares: trust-region reflective, breakpoints held, "
                                "then all free)",
                      "n_starts": len(result.starts),
                      "nfev": int(sum(s.nfev for s in result.starts)),
                      "success": bool(best.success), "message": best.message},
        "brake": ({"slips": slips, "final_shift": shift}
                  if element.variant == "friction_brake" else None),
        "fitted": {"q": q, "force": f, "model": np.asarray(fitted, float)},
    })
    result.settings.update({"starts": int(max(1, n_starts)), "seed": seed,
                            "rel_spread": rel_spread, "fixed": list(fixed),
                            "max_nfev": max_nfev, "n_draws": n_draws})
    return result


# --------------------------------------------------------------------------------------------
# hydraulic test rig
# --------------------------------------------------------------------------------------------
def identify_rig(config, record, *, seed: int = 0, diff_step: float = 1e-5,
                 n_draws: int = 4000) -> Result:
    """Fit the ``[identify]`` parameters of a rig configuration to a rig record
    (:mod:`identification.rig`).

    Parameters
    ----------
    config : models.hydraulic.RigConfig
        Start values of the actuator parameters and the ``[identify]`` table.
    record : identification.rig.RigRecord
        The record, in SI.
    seed
        Seed of the Laplace draws.
    diff_step
        Finite-difference step of the Jacobian, as a fraction of each box's spread.
    n_draws
        Laplace draws behind the intervals.

    Returns
    -------
    Result
        Kind ``"rig"``: ``parameters`` (the fitted actuator parameters, uniform priors on
        their boxes); ``diagnostics`` with the engines' entries and ``success``, ``message``,
        ``nfev``, ``cost``, ``n_samples``, ``channels``, ``noise_sigma_start``,
        ``noise_sigma_estimated``, ``residual_rms`` (per channel), ``kind`` and ``nuisance``
        (the fitted initial conditions of an actuator record); sections ``record_kind``,
        ``method`` and ``identifiability``
        (:func:`identification.rig.identifiability_report`); the table ``fitted.parquet``
        (``t``, each channel and its ``_fit``).
    """
    import pandas as pd

    from identification import rig as R

    settings = R.IdentifySettings.from_dict(config.identify)
    names, start, lo, hi = R.parameter_boxes(config, settings)
    nui, nui0, nlo, nhi = R.nuisance_parameters(record, settings.kind)
    channels = R.record_channels(record, settings.kind)
    residual = R.RigResidual(config, record, settings.kind, names + nui, channels)
    n = record.t.size
    groups = {c: slice(k * n, (k + 1) * n) for k, c in enumerate(channels)}
    sigma = np.concatenate([np.full(n, R.noise_of(c, settings)) for c in channels])
    units = [R.FITTABLE[nm] for nm in names] + [R.NUISANCE[nm] for nm in nui]
    space = _space(names + nui, units, np.r_[start, nui0],
                   list(zip(np.r_[lo, nlo], np.r_[hi, nhi])))
    problem = ResidualProblem(space, residual, residual.n_residuals, sigma=sigma,
                              groups=groups)
    fit_kw = dict(starts=0, max_nfev=settings.max_nfev, diff_step=diff_step, x_scale="jac",
                  kind="rig")
    first = least_squares(problem, first_guess=np.r_[start, nui0], origin="start values",
                          **fit_kw)
    # the noise of each channel from the residuals, and one refit with it
    problem = reweight(problem, first)
    result = least_squares(problem, first_guess=first.x_opt,
                           origin="refit with the estimated noise", **fit_kw)
    result.diagnostics["noise"] = first.diagnostics["noise"]
    result.seed = seed
    laplace(problem, result, rng=np.random.default_rng(seed), diff_step=diff_step,
            n_draws=n_draws)
    post = result.posterior
    summary = summarize(space, post.samples, post.x_map, post.stderr)
    result.parameters = {nm: summary[nm] for nm in names}
    k = len(names)
    ident = R.identifiability_report(names, post.x_map[:k], post.covariance[:k, :k],
                                     result.jacobian[:, :k], lo, hi)
    final = residual.channels_of(space.full(result.x_opt[None, :])[0])
    meas = {c: record.columns[c] for c in channels}
    best = result.best
    noise = result.diagnostics["noise"]
    result.diagnostics.update({
        "success": bool(best.success), "message": best.message,
        "nfev": int(sum(s.nfev for s in result.starts)),
        "forward_runs": int(problem.n_evaluations),
        "cost": float(best.cost), "n_samples": int(n), "channels": channels,
        "noise_sigma_start": noise["sigma_start"],
        "noise_sigma_estimated": noise["sigma_estimated"],
        "residual_rms": {c: float(np.sqrt(np.mean((final[c] - meas[c]) ** 2)))
                         for c in channels},
        "kind": settings.kind,
        "nuisance": {nm: float(result.x_opt[k + j]) for j, nm in enumerate(nui)}})
    result.sections.update({"record_kind": settings.kind, "method": R.METHOD,
                            "identifiability": ident})
    table = {"t": record.t}
    for c in channels:
        table[c] = meas[c]
        table[c + "_fit"] = final[c]
    table_units = {c: R.RECORD_UNITS.get(c.removesuffix("_fit"), "") for c in table}
    result.tables["fitted.parquet"] = (pd.DataFrame(table), table_units)
    result.settings.update({"identify": {"kind": settings.kind,
                                         "parameters": list(settings.parameters),
                                         "bounds": {k_: list(v) for k_, v in
                                                    settings.bounds.items()},
                                         "noise": dict(settings.noise),
                                         "max_nfev": settings.max_nfev},
                            "diff_step": diff_step, "n_draws": n_draws})
    return result


# --------------------------------------------------------------------------------------------
# resonance refinement
# --------------------------------------------------------------------------------------------
def refine_resonance(curves, t: np.ndarray, x: np.ndarray, force: np.ndarray, *,
                     max_nfev: int = 100, seed: int = 0, n_draws: int = 4000,
                     diff_step: float = 1e-8, **model_kw) -> Result:
    """Refine the Abel estimate ``curves`` by fitting the simulated oscillator to the record
    (:mod:`identification.resonance.refine`).

    Parameters
    ----------
    curves : identification.resonance.own.ResonanceCurves
        The Abel estimate.
    t, x, force
        The record [s], [m], [N], uniformly sampled.
    max_nfev
        Budget of residual evaluations of the least-squares polish.
    seed
        Seed of the Laplace draws.
    n_draws
        Laplace draws behind the intervals.
    diff_step
        Finite-difference step of the Jacobian, as a fraction of each box's spread (about
        1e-6 N on a node force). The simulated response is rough on a coarser scale (the
        preload jump at x = 0): on the shipped preload record a step of 1e-4 stops the
        polish at 6x the cost a step of 1e-8 reaches, with 1.2 % damping error against 0.2 %.
    **model_kw
        ``hold``, ``n_x``, ``n_v``, ``substeps``, ``decimate``, ``smooth`` of
        :func:`identification.resonance.refine.refinement_model`.

    Returns
    -------
    Result
        Kind ``"resonance_refinement"``: ``parameters`` (initial state, preload, node values
        of the restoring force, Coulomb force, node values of the damping force); sections
        ``curves`` (``x`` nodes [m], ``restoring`` [N], ``preload`` [N], ``v`` nodes [m/s],
        ``damping`` [N], ``coulomb`` [N]: evaluate them with
        :func:`~identification.resonance.refine.restoring_force` and
        :func:`~identification.resonance.refine.damping_force`) and ``refinement``
        (``change_restoring``, ``change_damping`` [-] from the Abel estimate,
        ``rms_before_m``, ``rms_after_m`` [m], ``simulations``, ``preload_N``,
        ``coulomb_N``). The noise (one level for the displacement and the smoothing rows,
        so their balance and the optimum stay as fitted) is estimated from the residuals.
    """
    from identification.resonance import refine as F

    model = F.refinement_model(curves, t, x, force, **model_kw)
    space = _space(model.names, model.units, model.p0, list(zip(model.lower, model.upper)))
    problem = ResidualProblem(space, model, model.n_residuals)
    result = least_squares(problem, starts=0, first_guess=model.p0, max_nfev=max_nfev,
                           diff_step=diff_step, origin="Abel estimate",
                           kind="resonance_refinement")
    result.seed = seed
    r0 = model.residual(model.p0)
    r1 = model.residual(result.x_opt)
    problem = reweight(problem, result)
    laplace(problem, result, rng=np.random.default_rng(seed), diff_step=diff_step,
            n_draws=n_draws)
    post = result.posterior
    result.parameters = summarize(space, post.samples, post.x_map, post.stderr)
    F0, phi, Fc, qv = model.tables(result.x_opt)
    seq = curves.sequence
    xs = np.linspace(-seq.b[-1], seq.b[-1], 401)
    vs = np.linspace(0, seq.v[-1], 201)[1:]
    n_fit = int(model.fit.sum())
    result.sections["curves"] = {"x": model.xn, "restoring": phi, "preload": float(F0),
                                 "v": model.vn, "damping": qv, "coulomb": float(Fc)}
    result.sections["refinement"] = {
        "change_restoring": F.curve_change(F.restoring_force(xs, model.xn, phi, F0),
                                           curves.restoring_force(xs)),
        "change_damping": F.curve_change(F.damping_force(vs, model.vn, qv, Fc),
                                         curves.damping_force(vs)),
        "rms_before_m": float(np.sqrt(np.mean(r0[:n_fit] ** 2)) * model.scale),
        "rms_after_m": float(np.sqrt(np.mean(r1[:n_fit] ** 2)) * model.scale),
        "simulations": int(problem.n_evaluations), "preload_N": float(F0),
        "coulomb_N": float(Fc)}
    result.settings.update({"max_nfev": max_nfev, "diff_step": diff_step,
                            "n_draws": n_draws, **model_kw})
    return result
