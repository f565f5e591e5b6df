"""Multi-start bounded least squares for a :class:`~recon.problem.ReconstructionProblem`.

Starts are a seeded Latin hypercube over the priors (every prior marginal stratified), plus an
optional analytic first guess (post-flight practice: event times and absorber strokes give the
closing velocity and the lateral offset; docking-contact-models.md section 11). Every start is
kept, so multi-modality stays visible.

Each start runs :func:`scipy.optimize.least_squares` (trust-region reflective, bounds) on the
whitened data residuals plus the prior residuals, in coordinates scaled by each prior's spread
so the parameters are all of order one. The Jacobian is a central difference evaluated as
*one batch* of ``2 n_free`` forward runs (so the batch kernel works in parallel); the step is
``diff_step`` times the prior spread.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
from scipy import optimize as _opt

from recon.problem import ReconstructionProblem

__all__ = ["Start", "OptimizeResult", "multistart", "jacobian"]


@dataclasses.dataclass(frozen=True)
class Start:
    """One optimizer run: start point, end point [SI], cost = 0.5 sum r^2, status."""

    x0: np.ndarray
    x: np.ndarray
    cost: float
    success: bool
    message: str
    nfev: int
    origin: str  # "first_guess" or "lhs"


@dataclasses.dataclass(frozen=True)
class OptimizeResult:
    """All starts of a multi-start run, best first in :attr:`order`."""

    names: tuple[str, ...]
    starts: tuple[Start, ...]
    seed: int | None

    @property
    def order(self) -> np.ndarray:
        return np.argsort([s.cost for s in self.starts], kind="stable")

    @property
    def best(self) -> Start:
        return self.starts[int(self.order[0])]

    @property
    def x(self) -> np.ndarray:
        return self.best.x

    def to_dict(self) -> dict:
        return {"names": list(self.names), "seed": self.seed, "best": int(self.order[0]),
                "starts": [{"x0": s.x0, "x": s.x, "cost": s.cost, "success": s.success,
                            "message": s.message, "nfev": s.nfev, "origin": s.origin}
                           for s in self.starts]}


def _steps(problem: ReconstructionProblem, diff_step: float) -> np.ndarray:
    return problem.space.fd_steps(diff_step)


def jacobian(problem: ReconstructionProblem, x: np.ndarray, *, diff_step: float = 1e-4,
             with_prior: bool = False) -> np.ndarray:
    """Central-difference Jacobian of the whitened residuals at ``x`` [per SI unit],
    ``(m, n_free)``, evaluated as one batch. Steps are ``diff_step`` x prior spread (or the
    parameter's own ``step``, :meth:`~recon.problem.ParameterSpace.fd_steps`), made one-sided
    at a bound."""
    x = np.asarray(x, float)
    sp = problem.space
    h = _steps(problem, diff_step)
    up = np.minimum(x + h, sp.upper)
    dn = np.maximum(x - h, sp.lower)
    n = x.size
    batch = np.repeat(x[None, :], 2 * n, axis=0)
    batch[np.arange(n), np.arange(n)] = up
    batch[n + np.arange(n), np.arange(n)] = dn
    r = problem.residuals(batch)
    if with_prior:
        pr = np.array([sp.prior_residuals(b) for b in batch])
        r = np.concatenate([r, pr], axis=1)
    r = np.where(np.isfinite(r), r, 1e3)
    return ((r[:n] - r[n:]) / (up - dn)[:, None]).T


def multistart(problem: ReconstructionProblem, n_starts: int = 8, *, seed: int | None = 0,
               first_guess: np.ndarray | Callable[[ReconstructionProblem], np.ndarray] | None = None,
               max_nfev: int | None = None, diff_step: float = 1e-4, ftol: float = 1e-10,
               xtol: float = 1e-10, gtol: float = 1e-10, pre_nfev: int | None = None,
               pre_keep: int = 2,
               progress: Callable[[int, int], None] | None = None) -> OptimizeResult:
    """Bounded least squares from ``n_starts`` Latin-hypercube starts (and a first guess).

    Parameters
    ----------
    problem
        The reconstruction problem.
    n_starts
        Number of Latin-hypercube starts (seeded by ``seed``).
    first_guess
        Extra start(s) [SI]: one vector, a ``(k, ndim)`` array of starts, or a callable
        ``first_guess(problem)`` returning either; clipped into the bounds.
    max_nfev
        Limit of residual evaluations per start (default: scipy's).
    diff_step
        Finite-difference step as a fraction of each prior's spread.
    pre_nfev, pre_keep
        Two-phase polish: every start first runs at most ``pre_nfev`` evaluations; only the
        ``pre_keep`` lowest then continue, from where they stopped, up to ``max_nfev``. The
        others are kept as they are (``message`` says so). Default: one phase.
    progress
        Called ``progress(done, total)`` after each start.

    Returns
    -------
    OptimizeResult
        Every start; ``.best`` has the lowest cost.
    """
    sp = problem.space
    rng = np.random.default_rng(seed)
    x0s: list[tuple[np.ndarray, str]] = []
    if first_guess is not None:
        g = first_guess(problem) if callable(first_guess) else first_guess
        for row in np.atleast_2d(np.asarray(g, float)):
            x0s.append((np.clip(row, sp.lower, sp.upper), "first_guess"))
    if n_starts > 0:
        x0s += [(x, "lhs") for x in sp.latin_hypercube(n_starts, rng)]
    scale = sp.prior_scale()
    center = 0.5 * (sp.lower + sp.upper)
    zl, zu = (sp.lower - center) / scale, (sp.upper - center) / scale

    def fun(z):
        return problem.least_squares_residuals(center + scale * z)

    def jac(z):
        x = np.clip(center + scale * z, sp.lower, sp.upper)
        return jacobian(problem, x, diff_step=diff_step, with_prior=True) * scale[None, :]

    def polish(z0, nfev):
        z0 = np.clip(z0, zl, zu)
        # least_squares needs a strictly feasible start
        z0 = np.clip(z0, zl + 1e-9 * (zu - zl), zu - 1e-9 * (zu - zl))
        return _opt.least_squares(fun, z0, jac=jac, bounds=(zl, zu), method="trf",
                                  x_scale=1.0, ftol=ftol, xtol=xtol, gtol=gtol, max_nfev=nfev)

    two_phase = pre_nfev is not None and len(x0s) > pre_keep
    total = len(x0s) + (pre_keep if two_phase else 0)
    done = 0
    runs = []
    for x0, origin in x0s:
        res = polish((x0 - center) / scale, pre_nfev if two_phase else max_nfev)
        runs.append([x0, origin, res, int(res.nfev), None])
        done += 1
        if progress is not None:
            progress(done, total)
    if two_phase:
        order = np.argsort([r[2].cost for r in runs], kind="stable")
        for i in order[:pre_keep]:
            res = polish(runs[i][2].x, max_nfev)
            runs[i][2] = res
            runs[i][3] += int(res.nfev)
            done += 1
            if progress is not None:
                progress(done, total)
        for i in order[pre_keep:]:
            runs[i][4] = f"stopped after the first phase ({pre_nfev} evaluations)"
    starts = [Start(x0=x0, x=center + scale * res.x, cost=float(res.cost),
                    success=bool(res.success) and note is None,
                    message=note or str(res.message), nfev=nfev, origin=origin)
              for x0, origin, res, nfev, note in runs]
    return OptimizeResult(problem.names, tuple(starts), seed)
