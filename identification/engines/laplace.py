"""The Laplace engine: the posterior as the Gaussian at the optimum with the inverse
Gauss-Newton Hessian (the whitened Jacobian with the prior rows), clipped to the bounds.

Exact for a linear model with Gaussian priors; elsewhere the proposal of importance sampling
and MCMC's starting scale, and recorded beside them for comparison.

The covariance and the draws are computed in coordinates where every Jacobian column has unit
norm (Jacobi scaling) and mapped back: parameters whose SI magnitudes differ by twenty orders
(a bulk modulus of 1e9 Pa beside a leakage coefficient of 1e-12 m^3/(s Pa)) then keep their
relative precision, which a pseudo-inverse or an eigendecomposition of the unscaled matrix
loses (both resolve eigenvalues only to ``eps`` times the largest).
"""
from __future__ import annotations

import numpy as np

from identification.engines.least_squares import jacobian
from identification.space import ParameterSpace
from identification.result import Posterior, Result

__all__ = ["laplace", "laplace_samples", "laplace_covariance"]


def _scaled_covariance(jac_all: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:math:`(D J^T J D)^+` and the scales :math:`D = \\mathrm{diag}(1 / \\lVert J_{:,j}
    \\rVert)` (1 for a column of zeros: a parameter the residuals do not depend on gets
    variance 0 from the pseudo-inverse)."""
    norms = np.linalg.norm(jac_all, axis=0)
    d = np.where(norms > 0, 1.0 / np.where(norms > 0, norms, 1.0), 1.0)
    js = jac_all * d[None, :]
    return np.linalg.pinv(js.T @ js), d


def laplace_covariance(jac_all: np.ndarray) -> np.ndarray:
    """Covariance :math:`(J^T J)^+` [SI_i SI_j] of the Laplace approximation from the whitened
    Jacobian ``jac_all`` ``(m, d)`` (prior rows included), computed as
    :math:`D (D J^T J D)^+ D` (module docstring)."""
    cov_s, d = _scaled_covariance(jac_all)
    return cov_s * np.outer(d, d)


def laplace_samples(space: ParameterSpace, x: np.ndarray, jac_all: np.ndarray, n: int,
                    rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Draws of the Laplace approximation N(x, (J^T J)^+) clipped to the bounds, and the
    standard errors; ``jac_all`` includes the prior residual rows. The draws are made in the
    Jacobi-scaled coordinates (module docstring)."""
    cov_s, d = _scaled_covariance(jac_all)
    se = d * np.sqrt(np.clip(np.diag(cov_s), 0, None))
    z = rng.multivariate_normal(np.zeros(d.size), cov_s, size=n, method="eigh")
    draws = np.asarray(x, float)[None, :] + z * d[None, :]
    return np.clip(draws, space.lower, space.upper), se


def laplace(problem, result: Result, *, rng: np.random.Generator, diff_step: float = 1e-4,
            n_draws: int = 4000) -> Result:
    """The Laplace engine at ``result.x_opt``: its Jacobian (stored as
    :attr:`~identification.result.Result.jacobian`, data rows first, then the prior rows),
    ``n_draws`` Gaussian draws, standard errors and the covariance, as the ``"laplace"`` posterior
    (the current one)."""
    x = np.asarray(result.x_opt, float)
    j_all = jacobian(problem, x, diff_step=diff_step, with_prior=True)
    draws, stderr = laplace_samples(problem.space, x, j_all, n_draws, rng)
    result.jacobian = j_all
    result.set_posterior(Posterior("laplace", draws, stderr, x,
                                   covariance=laplace_covariance(j_all)))
    return result
