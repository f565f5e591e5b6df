"""Multi-start bounded least squares, searched again while the best fit is implausible.

Starts are a seeded Latin hypercube over the priors (every prior marginal stratified), plus
optional given starts (an analytic first guess, a screen's best draws; post-flight practice:
event times and absorber strokes give the closing velocity and the lateral offset;
docking-contact-models.md section 11). Every start is kept, so multi-modality stays visible.

Each start runs :func:`scipy.optimize.least_squares` (trust-region reflective, bounds) on the
whitened data residuals plus the prior residuals, in coordinates scaled by each prior's spread
so the parameters are all of order one. The Jacobian is a central difference evaluated as
*one batch* of ``2 n_free`` forward runs (so a batch kernel works in parallel); the step is
``diff_step`` times the prior spread, or the parameter's own ``step``.

A fit whose cost exceeds :func:`gof_limit` is implausible: twice the cost at a correct fit of
``n`` whitened residuals is about chi-square with ``n`` degrees of freedom. With
``search_again`` the engine runs further search rounds while that is so.

A final polish with a finer step (:func:`refine`) takes the best distinct end points on from
where a coarse secant stopped: a likelihood with small steps in it (event times on a grid)
needs the coarse secant to cross them on the way, but the coarse secant also stops a few units
of cost short of the optimum, and sometimes in the wrong one of two neighbouring minima.

A staged polish (``hold``) first runs each start with some parameters held at the start's
values, then with all free from where the first stage ended: a piecewise-linear model's
breakpoints held while its node values settle, so that the kinks move only once the branches
are in place.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import numpy as np
from scipy import optimize as _opt

from identification.result import Result, Start

__all__ = ["least_squares", "multistart", "refine", "add_runs", "jacobian", "gof_limit",
           "GOF_SIGMAS", "optimizer_diagnostics"]

log = logging.getLogger("dockrecon.engines")

#: A fit whose cost exceeds ``n/2 + GOF_SIGMAS sqrt(n/2)`` (n whitened residuals; twice the
#: cost is chi-square with about n degrees of freedom when the model fits) is implausible:
#: the search missed the basin, or the model does not describe the data.
GOF_SIGMAS = 6.0


def gof_limit(n_residuals: int) -> float:
    """The largest cost a correct fit of ``n_residuals`` whitened residuals plausibly has
    (:data:`GOF_SIGMAS` standard deviations above the chi-square mean; at n = 647, a shipped
    5-s flight, 431 where fits at the truth's basin give 340-360)."""
    h = 0.5 * n_residuals
    return float(h + GOF_SIGMAS * np.sqrt(h))


def jacobian(problem, x: np.ndarray, *, diff_step: float = 1e-4, with_prior: bool = False,
             columns: np.ndarray | None = None) -> np.ndarray:
    """Jacobian of the whitened residuals at ``x`` [per SI unit], ``(m, n_free)``: the
    problem's own derivative when it has one (``problem.exact_jacobian(x)`` not None; prior
    rows differenced, they cost no forward run), else central differences evaluated as one
    batch. Steps are ``diff_step`` x prior spread (or the
    parameter's own ``step``, :meth:`~identification.space.ParameterSpace.fd_steps`), made
    one-sided at a bound. ``columns`` (indices of free parameters) limits the differences to those
    parameters: ``(m, len(columns))``, ``2 len(columns)`` forward runs."""
    x = np.asarray(x, float)
    sp = problem.space
    cols = np.arange(x.size) if columns is None else np.asarray(columns, int)
    exact = getattr(problem, "exact_jacobian", None)
    J = exact(x) if exact is not None else None
    if J is not None:  # the model's own derivative: no differences of forward runs
        J = J[:, cols]
        if with_prior and sp.prior_residuals(x).size:
            h = sp.fd_steps(diff_step)[cols]
            pr = []
            for j, c in enumerate(cols):
                up, dn = x.copy(), x.copy()
                up[c] = min(x[c] + h[j], sp.upper[c])
                dn[c] = max(x[c] - h[j], sp.lower[c])
                pr.append((sp.prior_residuals(up) - sp.prior_residuals(dn)) / (up[c] - dn[c]))
            J = np.concatenate([J, np.array(pr).T], axis=0)
        return J
    h = sp.fd_steps(diff_step)[cols]
    up = np.minimum(x[cols] + h, sp.upper[cols])
    dn = np.maximum(x[cols] - h, sp.lower[cols])
    n = cols.size
    batch = np.repeat(x[None, :], 2 * n, axis=0)
    batch[np.arange(n), cols] = up
    batch[n + np.arange(n), cols] = dn
    r = problem.residuals(batch)
    if with_prior:
        pr = np.array([sp.prior_residuals(b) for b in batch])
        r = np.concatenate([r, pr], axis=1)
    r = np.where(np.isfinite(r), r, 1e3)
    return ((r[:n] - r[n:]) / (up - dn)[:, None]).T


def multistart(problem, n_starts: int = 8, *, seed: int | None = 0,
               first_guess: np.ndarray | Callable | None = None,
               max_nfev: int | None = None, diff_step: float = 1e-4, ftol: float = 1e-10,
               xtol: float = 1e-10, gtol: float = 1e-10, pre_nfev: int | None = None,
               pre_keep: int = 2, origin: str = "first_guess", hold: Sequence[str] = (),
               x_scale: float | str = 1.0,
               progress: Callable[[int, int], None] | None = None) -> list[Start]:
    """Bounded least squares from ``n_starts`` Latin-hypercube starts (and given starts).

    Parameters
    ----------
    problem
        A problem with ``space``, ``residuals`` and ``least_squares_residuals``
        (:class:`recon.problem.ReconstructionProblem` and the identification problems).
    n_starts
        Number of Latin-hypercube starts (seeded by ``seed``).
    first_guess
        Extra start(s) [SI]: one vector, a ``(k, ndim)`` array of starts, or a callable
        ``first_guess(problem)`` returning either; clipped into the bounds. Their origin is
        ``origin``.
    max_nfev
        Limit of residual evaluations per start (default: scipy's).
    diff_step
        Finite-difference step as a fraction of each prior's spread.
    pre_nfev, pre_keep
        Two-phase polish: every start first runs at most ``pre_nfev`` evaluations; only the
        ``pre_keep`` lowest then continue, from where they stopped, up to ``max_nfev``. The
        others are kept as they are (``message`` says so). Default: one phase.
    hold
        Names of free parameters held at each start's values in a first stage; the second
        stage frees them from where the first ended (module docstring). ``nfev`` counts both
        stages; ``max_nfev`` applies to each.
    x_scale
        :func:`scipy.optimize.least_squares`' ``x_scale`` in the prior-scaled coordinates:
        1 (every parameter's prior spread is one unit) or ``"jac"`` (the inverse column norms
        of the Jacobian, for a prior far wider than what the data allow).
    progress
        Called ``progress(done, total)`` after each start.

    Returns
    -------
    list of Start
        Every run, in the order of the starts.
    """
    sp = problem.space
    unknown = set(hold) - set(sp.free_names)
    if unknown:
        raise ValueError(f"hold: not free parameters: {sorted(unknown)}")
    free_in_stage1 = np.array([j for j, n in enumerate(sp.free_names) if n not in hold], int)
    rng = np.random.default_rng(seed)
    x0s: list[tuple[np.ndarray, str]] = []
    if first_guess is not None:
        g = first_guess(problem) if callable(first_guess) else first_guess
        for row in np.atleast_2d(np.asarray(g, float)):
            x0s.append((np.clip(row, sp.lower, sp.upper), origin))
    if n_starts > 0:
        x0s += [(x, "lhs") for x in sp.latin_hypercube(n_starts, rng)]
    scale = sp.prior_scale()
    center = 0.5 * (sp.lower + sp.upper)
    zl, zu = (sp.lower - center) / scale, (sp.upper - center) / scale

    def fun(z):
        return problem.least_squares_residuals(center + scale * z)

    def jac(z, cols=None):
        x = np.clip(center + scale * z, sp.lower, sp.upper)
        c = np.arange(z.size) if cols is None else cols
        return (jacobian(problem, x, diff_step=diff_step, with_prior=True, columns=cols)
                * scale[c][None, :])

    def solve(z0, nfev, cols=None):
        z0 = np.clip(z0, zl, zu)
        # least_squares needs a strictly feasible start
        z0 = np.clip(z0, zl + 1e-9 * (zu - zl), zu - 1e-9 * (zu - zl))
        c = np.arange(z0.size) if cols is None else cols
        # scipy's first trust radius is the norm of the start: a start at the centre of the
        # box (z = 0 up to rounding) would begin with steps of 1e-16. Such a start is solved
        # in coordinates counted from the lower bounds.
        off = zl.copy() if np.linalg.norm(z0[c]) < 1e-6 * np.linalg.norm((zu - zl)[c]) \
            else np.zeros_like(z0)

        def embed(ys):
            z = z0.copy()
            z[c] = ys + off[c]
            return z

        res = _opt.least_squares(lambda ys: fun(embed(ys)), z0[c] - off[c],
                                 jac=lambda ys: jac(embed(ys), cols),
                                 bounds=(zl[c] - off[c], zu[c] - off[c]), method="trf",
                                 x_scale=x_scale, ftol=ftol, xtol=xtol, gtol=gtol,
                                 max_nfev=nfev)
        res.x = embed(res.x)
        return res

    def polish(z0, nfev, staged=True):
        if not (staged and hold) or free_in_stage1.size == 0:
            return solve(z0, nfev)
        first = solve(z0, nfev, free_in_stage1)
        res = solve(first.x, nfev)
        res.nfev += first.nfev
        return res

    two_phase = pre_nfev is not None and len(x0s) > pre_keep
    total = len(x0s) + (pre_keep if two_phase else 0)
    done = 0
    runs = []
    for x0, orig in x0s:
        res = polish((x0 - center) / scale, pre_nfev if two_phase else max_nfev)
        runs.append([x0, orig, res, int(res.nfev), None])
        done += 1
        if progress is not None:
            progress(done, total)
    if two_phase:
        order = np.argsort([r[2].cost for r in runs], kind="stable")
        for i in order[:pre_keep]:
            res = polish(runs[i][2].x, max_nfev, staged=False)
            runs[i][2] = res
            runs[i][3] += int(res.nfev)
            done += 1
            if progress is not None:
                progress(done, total)
        for i in order[pre_keep:]:
            runs[i][4] = f"stopped after the first phase ({pre_nfev} evaluations)"
    return [Start(x0=x0, x=center + scale * res.x, cost=float(res.cost),
                  success=bool(res.success) and note is None,
                  message=note or str(res.message), nfev=nfev, origin=orig)
            for x0, orig, res, nfev, note in runs]


def optimizer_diagnostics(problem, result: Result) -> dict:
    """``diagnostics.optimizer`` of a result: every run's cost, success, origin and end point,
    the best one, and how many residuals the cost sums."""
    best = result.best
    return {"best_cost": best.cost, "n_starts": len(result.starts),
            "costs": [s.cost for s in result.starts],
            "success": [s.success for s in result.starts],
            "origins": [s.origin for s in result.starts],
            "x": [s.x for s in result.starts], "best_x": best.x,
            "n_residuals": problem.n_residuals}


def least_squares(problem, *, starts: int = 8, first_guess=None, seed: int | None = 0,
                  max_nfev: int | None = None, diff_step: float = 1e-4,
                  pre_nfev: int | None = None, pre_keep: int = 2,
                  search_again: Callable | None = None, retries: int = 0,
                  origin: str = "first_guess", hold: Sequence[str] = (),
                  x_scale: float | str = 1.0,
                  progress: Callable[[str, int, int], None] | None = None,
                  result: Result | None = None, kind: str = "fit") -> Result:
    """The least-squares engine: :func:`multistart`, then further search rounds while the
    best cost exceeds :func:`gof_limit`.

    ``search_again(problem, k)`` gives the starts of search round ``k`` = 1, 2, ... (another
    seed of a global screen), or None when the caller's rounds are spent; at most ``retries``
    rounds. Each round's runs are kept (origin
    ``"search k"``). Adds to ``result`` (a new one of ``kind`` when None): the runs
    (:attr:`~identification.result.Result.starts`), the optimum
    :attr:`~identification.result.Result.x_opt`,
    ``diagnostics.optimizer`` and ``diagnostics.search`` (rounds, each round's best cost,
    the limit, ``plausible``). When no run reached a finite likelihood the result is
    ``failed``. ``progress(stage, done, total)`` gets stage ``"optimize"``. ``hold`` and
    ``x_scale`` go to :func:`multistart` (the search rounds too).
    """
    if result is None:
        result = Result(kind, names=tuple(problem.names))
    cb = (lambda d, t: progress("optimize", d, t)) if progress else None
    runs = multistart(problem, starts, seed=seed, first_guess=first_guess, max_nfev=max_nfev,
                      diff_step=diff_step, pre_nfev=pre_nfev, pre_keep=pre_keep, origin=origin,
                      hold=hold, x_scale=x_scale, progress=cb)
    result.starts.extend(runs)
    limit = gof_limit(problem.n_residuals)
    round_best = [min(s.cost for s in runs)]
    while (search_again is not None and result.best.cost > limit
           and len(round_best) <= retries):
        k = len(round_best)
        again = search_again(problem, k)
        if again is None:
            break
        log.warning("best cost %.1f above %.1f (the most a fit of %d residuals plausibly has): "
                    "search round %d", result.best.cost, limit, problem.n_residuals, k + 1)
        extra = multistart(problem, 0, first_guess=again,
                           max_nfev=max_nfev, diff_step=diff_step, pre_nfev=pre_nfev,
                           pre_keep=pre_keep, origin=f"search {k + 1}", hold=hold,
                           x_scale=x_scale)
        result.starts.extend(extra)
        round_best.append(min(s.cost for s in extra))
    result.x_opt = np.asarray(result.best.x, float)
    result.diagnostics["optimizer"] = optimizer_diagnostics(problem, result)
    result.diagnostics["search"] = {"rounds": len(round_best), "round_best_cost": round_best,
                                    "gof_limit": limit,
                                    "plausible": bool(result.best.cost <= limit)}
    if not np.isfinite(problem.log_probability(result.x_opt[None, :])[0]):
        result.diagnostics["search"]["plausible"] = False
        result.fail("the forward model failed, or the parameters left the prior, at every "
                    "point the search reached: no parameter vector gave a finite likelihood "
                    "(check the scenario and the priors against the record)")
    return result


def refine(problem, result: Result, *, diff_step: float, max_nfev: int | None = None,
           keep: int = 4, delta: float = 25.0) -> Result:
    """Polish again, with finite-difference step ``diff_step``, the ``keep`` best distinct end
    points of the result's runs whose cost is within ``delta`` of the best (a density ratio
    of e^-25: anything worse carries no posterior mass); module docstring.

    End points closer than 1e-3 prior spreads in every parameter count as one. The new runs
    are added with origin ``"refine"`` (the old ones stay, so the search stays visible);
    :attr:`~identification.result.Result.x_opt` and ``diagnostics.optimizer`` follow the new best.

    Measured on the shipped low-energy peripheral flight (docs/design/search.rst, the final
    polish): the search's polish at step 1e-2 ended at cost 716.8 (roll +0.011 rad), whose
    polish at 1e-3 reaches 702.5 in 31 evaluations; the 1e-2 importance re-polishes instead
    stopped at 709.4 (roll +0.008 rad).
    """
    scale = problem.space.prior_scale()
    best = result.best.cost
    xs: list[np.ndarray] = []
    for s in sorted(result.starts, key=lambda s: s.cost):
        if len(xs) >= keep:
            break
        if not np.isfinite(s.cost) or s.cost > best + delta:
            continue
        x = np.asarray(s.x, float)
        if any(np.max(np.abs(x - y) / scale) < 1e-3 for y in xs):
            continue
        xs.append(x)
    if not xs:
        return result
    runs = multistart(problem, 0, first_guess=np.array(xs), max_nfev=max_nfev,
                      diff_step=diff_step, origin="refine")
    log.info("refined %d end point(s) with step %g: cost %.2f -> %.2f", len(xs), diff_step,
             best, min(s.cost for s in runs))
    return add_runs(problem, result, runs)


def add_runs(problem, result: Result, runs: Sequence[Start]) -> Result:
    """Add later least-squares runs to a result (a final polish, a re-polish from a sampled
    draw): :attr:`~identification.result.Result.x_opt` and ``diagnostics.optimizer`` follow the new
    best."""
    result.starts.extend(runs)
    result.x_opt = np.asarray(result.best.x, float)
    result.diagnostics["optimizer"] = optimizer_diagnostics(problem, result)
    return result
