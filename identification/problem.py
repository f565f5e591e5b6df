"""Problems the engines run: a Gaussian likelihood of whitened residuals over a parameter
space (:class:`GaussianProblem`), and the problem given by a residual function
(:class:`ResidualProblem`) that every ground-test identification is.

:class:`ResidualProblem` is the same engine protocol for a fit given by a residual function
(the ground-test identifications of :mod:`identification`):
model minus data of a batch of parameter vectors, divided by each residual's noise level.

The reconstruction's problem (:class:`recon.problem.ReconstructionProblem`) is the other
:class:`GaussianProblem`: a forward model, telemetry and an observation model.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from identification.space import ParameterSpace

__all__ = ["GaussianProblem", "ResidualProblem"]


class GaussianProblem:
    """What the engines need of a problem with a Gaussian likelihood of whitened residuals,
    written once for :class:`recon.problem.ReconstructionProblem` and
    :class:`ResidualProblem`.

    A subclass sets :attr:`space` (a :class:`ParameterSpace`) and ``_log_norm`` (the
    likelihood's normalizing constant), and defines :meth:`residuals` (whitened, ``(n, m)`` for
    a batch, ``(m,)`` for one vector, NaN where the model failed) and :attr:`n_residuals`.
    """

    space: ParameterSpace
    _log_norm: float

    def residuals(self, theta: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    @property
    def n_residuals(self) -> int:
        raise NotImplementedError

    @property
    def names(self) -> tuple[str, ...]:
        """Names of the free parameters (the engines' vector)."""
        return self.space.free_names

    @property
    def ndim(self) -> int:
        return self.space.ndim

    def log_prior(self, theta: np.ndarray) -> np.ndarray:
        return self.space.log_prior(theta)

    def log_likelihood(self, theta: np.ndarray) -> np.ndarray:
        """Gaussian log-likelihood of a batch ``(n,)``; -inf where the model failed."""
        r = self.residuals(np.atleast_2d(np.asarray(theta, float)))
        ll = -0.5 * np.sum(r * r, axis=1) + self._log_norm
        return np.where(np.isfinite(ll), ll, -np.inf)

    def likelihood_groups(self) -> dict[str, tuple[slice, float]]:
        """The likelihood's parts ``{name: (columns of the residual vector, their share of
        the normalizing constant)}``: one part ``"y"`` here; the reconstruction's problem has
        one per telemetry channel. Their log-likelihoods (:meth:`log_likelihood_terms`) add up
        to :meth:`log_likelihood`."""
        return {"y": (slice(0, self.n_residuals), float(self._log_norm))}

    def log_likelihood_terms(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Log posterior ``(n,)`` of a batch and the log-likelihood of each part of
        :meth:`likelihood_groups` ``(n, parts)`` (-inf where the model failed or the row is
        outside the prior bounds), from one run of the model per row inside the bounds."""
        theta = np.atleast_2d(np.asarray(theta, float))
        groups = list(self.likelihood_groups().values())
        lp = self.log_prior(theta)
        ok = np.isfinite(lp)
        terms = np.full((theta.shape[0], len(groups)), -np.inf)
        if ok.any():
            r = self.residuals(theta[ok])
            t = np.column_stack([-0.5 * np.sum(r[:, cols] ** 2, axis=1) + norm
                                 for cols, norm in groups])
            terms[ok] = np.where(np.isfinite(t), t, -np.inf)
        ll = terms.sum(axis=1)
        return np.where(ok & np.isfinite(ll), lp + ll, -np.inf), terms

    def log_probability(self, theta: np.ndarray) -> np.ndarray:
        """Log posterior (unnormalized) of a batch ``(n, n_free)`` -> ``(n,)``.

        The model runs only on rows inside the prior bounds. Suitable for
        ``emcee.EnsembleSampler(..., vectorize=True)``.
        """
        theta = np.atleast_2d(np.asarray(theta, float))
        lp = self.log_prior(theta)
        ok = np.isfinite(lp)
        out = np.full(theta.shape[0], -np.inf)
        if ok.any():
            out[ok] = lp[ok] + self.log_likelihood(theta[ok])
        return out

    __call__ = log_probability

    def least_squares_residuals(self, theta: np.ndarray) -> np.ndarray:
        """Whitened residuals followed by the prior residuals, for one vector; a failed model
        gives a large finite residual (1e3 per entry) so that optimizers step back."""
        theta = np.asarray(theta, float)
        r = self.residuals(theta)
        r = np.where(np.isfinite(r), r, 1e3)
        return np.concatenate([r, self.space.prior_residuals(theta)])


class ResidualProblem(GaussianProblem):
    """Gaussian likelihood of the residuals of a residual function, for the engines.

    .. math::  \\log p(\\theta \\mid d) = \\log \\pi(\\theta)
               - \\tfrac12 \\sum_i \\bigl(r_i(\\theta) / \\sigma_i\\bigr)^2
               - \\sum_i \\log \\sigma_i - \\tfrac m2 \\log 2\\pi

    Parameters
    ----------
    space
        The parameters (fixed ones included) and their priors.
    residuals_fn
        ``residuals_fn(params) -> (n, m)``: a batch ``(n, len(space.names))`` of *every*
        parameter of ``space``, in its order [SI], to model minus data [data units]; NaN where
        the model fails.
    n_residuals
        ``m``.
    sigma
        Noise standard deviation of each residual [data units], a scalar or ``(m,)``.
    groups
        ``{name: slice}``: residuals that share one noise level (a channel of a record), for
        :meth:`noise_estimate`; default one group ``"all"``.

    Attributes
    ----------
    n_evaluations
        Parameter vectors the residual function has been called with so far (each one a
        forward run of the model).
    """

    def __init__(self, space: ParameterSpace, residuals_fn: Callable[[np.ndarray], np.ndarray],
                 n_residuals: int, *, sigma: float | np.ndarray = 1.0,
                 groups: Mapping[str, slice] | None = None,
                 jacobian_fn: Callable[[np.ndarray], np.ndarray | None] | None = None) -> None:
        self.space = space
        self.residuals_fn = residuals_fn
        self.jacobian_fn = jacobian_fn
        self._m = int(n_residuals)
        sig = np.broadcast_to(np.asarray(sigma, float), (self._m,)).copy()
        if not (np.all(np.isfinite(sig)) and np.all(sig > 0)):
            raise ValueError("every noise level sigma must be finite and positive")
        self.sigma = sig
        self.groups = dict(groups) if groups is not None else {"all": slice(0, self._m)}
        self._log_norm = float(-np.sum(np.log(sig)) - 0.5 * self._m * math.log(2 * math.pi))
        self.n_evaluations = 0

    def with_sigma(self, sigma: float | np.ndarray) -> "ResidualProblem":
        """The same problem with other noise levels (the evaluation count carries over)."""
        out = ResidualProblem(self.space, self.residuals_fn, self._m, sigma=sigma,
                              groups=self.groups, jacobian_fn=self.jacobian_fn)
        out.n_evaluations = self.n_evaluations
        return out

    @property
    def n_residuals(self) -> int:
        return self._m

    def raw_residuals(self, theta: np.ndarray) -> np.ndarray:
        """Model minus data [data units] of a free-parameter batch ``(n, n_free)`` ->
        ``(n, m)``."""
        full = self.space.full(theta)
        self.n_evaluations += full.shape[0]
        r = np.asarray(self.residuals_fn(full), float)
        if r.shape != (full.shape[0], self._m):
            raise ValueError(f"the residual function returned shape {r.shape}, expected "
                             f"{(full.shape[0], self._m)}")
        return r

    def exact_jacobian(self, theta: np.ndarray) -> np.ndarray | None:
        """Derivative of the whitened residuals with respect to the free parameters at one
        vector ``theta``, ``(m, n_free)``, from ``jacobian_fn`` (the model's own derivative
        of its raw residuals with respect to the full parameter vector, ``(m, n_full)``);
        None without one or where it failed (the caller then differences)."""
        if self.jacobian_fn is None:
            return None
        full = self.space.full(np.atleast_2d(np.asarray(theta, float)))[0]
        self.n_evaluations += 1
        J = self.jacobian_fn(full)
        if J is None:
            return None
        J = np.asarray(J, float)[:, self.space.free_index]
        if J.shape[0] != self._m or not np.all(np.isfinite(J)):
            return None
        return J / self.sigma[:, None]

    def noise_estimate(self, theta: np.ndarray, groups: Sequence[str] | None = None
                       ) -> np.ndarray:
        """Noise levels [data units] re-estimated from the residuals at ``theta`` (one free
        parameter vector, the optimum), one per group of :attr:`groups`.

        .. math::  \\hat\\sigma_g^2 = \\frac{\\sum_{i \\in g} r_i^2}{m_g (1 - d / m)}

        (``d`` free parameters, ``m`` residuals: the reduced chi-square of each group, the
        degrees of freedom shared in proportion to the group sizes). Groups not named in
        ``groups`` (default: all) keep their noise level. Returns ``(m,)``, for
        :meth:`with_sigma`.
        """
        r = self.raw_residuals(np.atleast_2d(np.asarray(theta, float)))[0]
        sig = self.sigma.copy()
        dof = 1.0 - self.space.ndim / self._m
        if not dof > 0:
            raise ValueError("no degrees of freedom left to estimate the noise from")
        for name, sl in self.groups.items():
            if groups is not None and name not in groups:
                continue
            rg = r[sl]
            s = float(np.sqrt(np.sum(rg * rg) / (rg.size * dof)))
            sig[sl] = s if s > 0 and np.isfinite(s) else sig[sl]
        return sig

    def residuals(self, theta: np.ndarray) -> np.ndarray:
        """Whitened residuals; ``(n, m)`` for a batch, ``(m,)`` for one vector. NaN where the
        model failed."""
        theta = np.asarray(theta, float)
        r = self.raw_residuals(np.atleast_2d(theta)) / self.sigma[None, :]
        return r[0] if theta.ndim == 1 else r
