"""The Laplace engine: the posterior as the Gaussian at the optimum with the inverse
Gauss-Newton Hessian (the whitened Jacobian with the prior rows), clipped to the bounds.

Exact for a linear model with Gaussian priors; elsewhere the proposal of importance sampling
and MCMC's starting scale, and recorded beside them for comparison.
"""
from __future__ import annotations

import numpy as np

from recon.engines.least_squares import jacobian
from recon.problem import ParameterSpace
from recon.result import Posterior, Result

__all__ = ["laplace", "laplace_samples"]


def laplace_samples(space: ParameterSpace, x: np.ndarray, jac_all: np.ndarray, n: int,
                    rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Draws of the Laplace approximation N(x, (J^T J)^+) clipped to the bounds, and the
    standard errors; ``jac_all`` includes the prior residual rows."""
    cov = np.linalg.pinv(jac_all.T @ jac_all)
    se = np.sqrt(np.clip(np.diag(cov), 0, None))
    draws = rng.multivariate_normal(x, cov, size=n, method="eigh")
    return np.clip(draws, space.lower, space.upper), se


def laplace(problem, result: Result, *, rng: np.random.Generator, diff_step: float = 1e-4,
            n_draws: int = 4000) -> Result:
    """The Laplace engine at ``result.x_opt``: its Jacobian (stored as
    :attr:`~recon.result.Result.jacobian`, data rows first, then the prior rows), ``n_draws``
    Gaussian draws and standard errors, as the ``"laplace"`` posterior (the current one)."""
    x = np.asarray(result.x_opt, float)
    j_all = jacobian(problem, x, diff_step=diff_step, with_prior=True)
    draws, stderr = laplace_samples(problem.space, x, j_all, n_draws, rng)
    result.jacobian = j_all
    result.set_posterior(Posterior("laplace", draws, stderr, x))
    return result
