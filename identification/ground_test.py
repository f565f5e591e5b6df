"""What every ground-test identification shares: parameters with uniform priors on their
boxes, noise levels re-estimated from the residuals, and quantities derived from the
parameters.

Each ground-test fit (:func:`identification.hysteresis_fit.identify_hysteresis`,
:func:`identification.rig.identify_rig`,
:func:`identification.resonance.refine.refine_resonance`) is a
:class:`~identification.problem.ResidualProblem` run through the same engines as a
reconstruction::

    result = least_squares(problem, ...)          # multi-start (and staged) polish
    problem = reweight(problem, result)           # noise levels from the residuals
    result = laplace(problem, result, ...)        # the Gaussian at the optimum

Noise. A ground-test record states no noise level the fit could trust, so every fit runs
first with a stated or unit noise level (its optimum does not depend on it under the flat
priors used here), then re-estimates the level of each channel from the residuals at the
optimum (:meth:`identification.problem.ResidualProblem.noise_estimate`, the reduced
chi-square) and takes the Laplace posterior with it. ``diagnostics.noise`` records both
levels.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from identification.problem import ResidualProblem
from identification.result import Result, summarize_derived
from identification.space import Parameter, ParameterSpace, Prior

__all__ = ["box_space", "reweight", "derived_parameters"]


def box_space(names: Sequence[str], units: Sequence[str], values: Sequence[float],
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
