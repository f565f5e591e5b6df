"""One reconstruction, start to finish: optimize, sample, summarize, write DIR.

:func:`reconstruct` is what ``dockrecon reconstruct`` calls once the telemetry, the forward
model, the parameter space and the observation model are built. It works with any forward
model (:class:`recon.problem.ReconstructionProblem`).
"""
from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from recon.optimize import jacobian, multistart
from recon.problem import ReconstructionProblem
from recon.result import (ReconstructionResult, fit_table, identifiability,
                          importance_samples, laplace_samples,
                          summarize, summarize_derived, write_result)
from recon.sample import SamplerSettings, run_ensembles
from recon.trajectory import (BAND_SUFFIXES, TrajectoryFn, clock_offsets, event_summary,
                              trajectory_table)

__all__ = ["ReconstructSettings", "Derived", "reconstruct", "find_modes", "gof_limit"]

log = logging.getLogger("dockrecon.reconstruct")

#: ``derived(full_params (n, n_all), names) -> ({quantity: (n,)}, {quantity: unit})``: loads
#: and energies of each posterior draw, computed by the forward model.
Derived = Callable[[np.ndarray, tuple[str, ...]], tuple[Mapping[str, np.ndarray], Mapping[str, str]]]


#: Importance sampling below this effective sample size does not seed the MCMC walkers
MIN_START_ESS = 100

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


@dataclasses.dataclass(frozen=True)
class ReconstructSettings:
    """Engine settings of one reconstruction."""

    starts: int = 8
    max_nfev: int | None = None
    pre_nfev: int | None = None   # two-phase polish (recon.optimize.multistart)
    pre_keep: int = 2
    # searches again (``search_again`` of :func:`reconstruct`) while the best cost is above
    # gof_limit, at most this many times
    search_retries: int = 0
    # without MCMC: 0 = Laplace draws; N > 0 = importance sampling of the posterior with N
    # Laplace-t proposal draws (recon.result.importance_samples)
    importance: int = 0
    mcmc: bool = True
    # with MCMC and importance sampling: run emcee only when the importance effective sample
    # size is below this (None: always). The calibrated engine of the probe-cone study
    # (benchmarks/calibration_docking.py) is ``MIN_START_ESS``.
    mcmc_below_ess: float | None = None
    sampler: SamplerSettings = SamplerSettings()
    draws: int = 200          # posterior draws for loads, energy and the predictive band
    trajectory_draws: int = 200  # posterior draws for the bands of trajectory.parquet
    width_ratio: float = 0.8  # identifiability flag threshold
    # finite-difference step of the optimizer's and the Laplace Jacobian, fraction of each
    # prior's spread; models with event-driven contact need a secant wider than their
    # switching jitter (see recon.config.RunConfig)
    jac_step: float = 1e-4

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        return d


def find_modes(problem: ReconstructionProblem, opt, jac_best: np.ndarray, *,
               diff_step: float, delta: float = 25.0, max_modes: int = 5
               ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Distinct optima among the optimizer's starts, for a multi-mode proposal.

    A start counts if its cost is within ``delta`` of the best (a density ratio of e^-25:
    anything worse carries no posterior mass) and it lies outside the 99.9 % Laplace ellipsoid
    of every mode already kept; its Jacobian (with the prior rows) is computed at its end point.
    Returns the mode centres and Jacobians, best first (the first is the optimum itself).
    """
    from scipy.stats import chi2

    best = opt.best
    modes = [np.asarray(best.x, float)]
    jacs = [jac_best]
    precs = [jac_best.T @ jac_best]
    limit = float(chi2.ppf(0.999, best.x.size))
    for s in sorted(opt.starts, key=lambda s: s.cost):
        if len(modes) >= max_modes:
            break
        if not np.isfinite(s.cost) or s.cost > best.cost + delta:
            continue
        x = np.asarray(s.x, float)
        if any(float((x - m) @ p @ (x - m)) < limit for m, p in zip(modes, precs)):
            continue
        j = jacobian(problem, x, diff_step=diff_step, with_prior=True)
        modes.append(x)
        jacs.append(j)
        precs.append(j.T @ j)
    return modes, jacs


def reconstruct(problem: ReconstructionProblem, output: str | os.PathLike, *,
                settings: ReconstructSettings = ReconstructSettings(), seed: int = 0,
                resume: bool = False,
                first_guess: np.ndarray | Callable[[ReconstructionProblem], np.ndarray] | None = None,
                search_again: Callable[[ReconstructionProblem, int], np.ndarray] | None = None,
                loads: Derived | None = None, energy: Derived | None = None,
                trajectory: TrajectoryFn | None = None,
                extra_settings: Mapping[str, Any] | None = None,
                progress: Callable[[str, int, int], None] | None = None) -> ReconstructionResult:
    """Run the reconstruction and write ``output``/{chains.h5, fit.parquet, trajectory.parquet,
    result.json}.

    A stale ``result.json`` is removed first, so the directory never looks complete while the
    run is under way or after it failed.

    Parameters
    ----------
    problem
        The problem to solve.
    output
        Result directory.
    settings
        Engine settings.
    seed
        Seeds the Latin hypercube, the emcee ensembles and the predictive draws.
    resume
        Continue the chains of an interrupted run in ``output``/chains.h5.
    first_guess
        Extra optimizer start (analytic first guess).
    search_again
        ``search_again(problem, k)``: new starts for search round ``k`` = 1, 2, ... (another
        seed of a global screen), polished while the best cost exceeds :func:`gof_limit`, at
        most ``settings.search_retries`` times. Each round's starts are kept (origin
        ``"search k"``); ``diagnostics.search`` records the rounds and their best costs.
    loads, energy
        Derived quantities of a batch of full parameter vectors (see :data:`Derived`).
    trajectory
        Histories of a batch of full parameter vectors for trajectory.parquet and the events
        (:mod:`recon.trajectory`); None: no trajectory file.
    progress
        ``progress(stage, done, total)`` with stage ``"optimize"`` or ``"sample"``.
    """
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    (out / "result.json").unlink(missing_ok=True)
    for stale in ("trajectory.parquet", "fit.parquet"):  # not left from an earlier run
        (out / stale).unlink(missing_ok=True)
    ss = np.random.SeedSequence(seed).spawn(4)  # children 0-2 as before the trajectory (3)
    sp = problem.space

    opt = multistart(problem, settings.starts, seed=int(ss[0].generate_state(1)[0]),
                     first_guess=first_guess, max_nfev=settings.max_nfev,
                     diff_step=settings.jac_step, pre_nfev=settings.pre_nfev,
                     pre_keep=settings.pre_keep,
                     progress=(lambda d, t: progress("optimize", d, t)) if progress else None)
    limit = gof_limit(problem.n_residuals)
    round_best = [float(opt.best.cost)]
    while (search_again is not None and round_best[-1] > limit
           and len(round_best) <= settings.search_retries):
        k = len(round_best)
        log.warning("best cost %.1f above %.1f (the most a fit of %d residuals plausibly has): "
                    "search round %d", opt.best.cost, limit, problem.n_residuals, k + 1)
        extra = multistart(problem, 0, first_guess=lambda prob: search_again(prob, k),
                           max_nfev=settings.max_nfev, diff_step=settings.jac_step,
                           pre_nfev=settings.pre_nfev, pre_keep=settings.pre_keep)
        opt = dataclasses.replace(opt, starts=opt.starts + tuple(
            dataclasses.replace(st, origin=f"search {k + 1}") for st in extra.starts))
        round_best.append(float(extra.best.cost))
    search = {"rounds": len(round_best), "round_best_cost": round_best, "gof_limit": limit}
    rng = np.random.default_rng(ss[2])

    def at_optimum(opt):
        """Optimum, its Jacobians (data rows; with the prior rows), Laplace draws and
        standard errors, and the optimizer's diagnostics."""
        x = opt.x
        j_all = jacobian(problem, x, diff_step=settings.jac_step, with_prior=True)
        draws, stderr = laplace_samples(sp, x, j_all, 4000, rng)
        diag = {"best_cost": opt.best.cost, "n_starts": len(opt.starts),
                "costs": [s.cost for s in opt.starts],
                "success": [s.success for s in opt.starts],
                "origins": [s.origin for s in opt.starts],
                "x": [s.x for s in opt.starts], "best_x": x,
                "n_residuals": problem.n_residuals}
        # the data rows come first in the Jacobian with the prior rows
        return x, j_all[:problem.n_residuals], j_all, draws, stderr, diag

    run_settings = {"engine": settings.to_dict(), "resume": resume,
                    "parameters": {p.name: {"unit": p.unit, "fixed": p.fixed} for p in
                                   sp.parameters},
                    "channels": list(problem.observation.names),
                    "telemetry": problem.record.source, **dict(extra_settings or {})}
    if not np.isfinite(problem.log_probability(opt.x[None, :])[0]):
        return _failed(out, problem, opt, search, run_settings, seed,
                       "the forward model failed, or the parameters left the prior, at every "
                       "point the search reached: no parameter vector gave a finite "
                       "likelihood (check the scenario and the priors against the record)")
    x_opt, jac_data, jac_all, lap, se, opt_diag = at_optimum(opt)
    diagnostics: dict[str, Any] = {"optimizer": opt_diag, "search": search}
    is_draws = None
    if settings.importance > 0:
        # importance sampling over the optima found (recon.result.importance_samples): the
        # --no-mcmc answer, and with MCMC the walkers' start, spread over the modes. A
        # proposal draw more probable than the optimum by more than e^2 means the polish
        # stopped short (rough cost, slow flights): polish again from that draw (twice at
        # most) and sample again.
        for attempt in range(3):
            modes, jacs = find_modes(problem, opt, jac_all, diff_step=settings.jac_step)
            try:
                is_draws, is_se, is_info = importance_samples(problem, modes, jacs,
                                                              settings.importance, rng)
            except RuntimeError as exc:
                return _failed(out, problem, opt, search, run_settings, seed,
                               f"importance sampling around the optimum: {exc}")
            lp_opt = float(problem.log_probability(x_opt[None, :])[0])
            if attempt == 2 or not is_info["best_log_prob"] > lp_opt + 2.0:
                break
            extra = multistart(problem, 0, first_guess=is_info["best_draw"],
                               max_nfev=settings.max_nfev, diff_step=settings.jac_step)
            log.info("importance draw beats the optimum by %.1f: polished again to cost %.2f",
                     is_info["best_log_prob"] - lp_opt, extra.best.cost)
            opt = dataclasses.replace(opt, starts=opt.starts + tuple(
                dataclasses.replace(st, origin="importance") for st in extra.starts))
            x_opt, jac_data, jac_all, lap, se, diagnostics["optimizer"] = at_optimum(opt)
        is_info["mode_x"] = modes
        is_info["restarts"] = attempt
        diagnostics["importance"] = is_info
    # after the importance block, which may have polished further
    best_cost = float(diagnostics["optimizer"]["best_cost"])
    search["plausible"] = bool(best_cost <= limit)
    status, status_reason = "ok", (f"plausible fit: cost {best_cost:.1f} within {limit:.1f}, "
                                   f"the most a fit of {problem.n_residuals} residuals "
                                   "plausibly has")
    if not search["plausible"]:
        status = "implausible"
        status_reason = (f"the best fit's cost {best_cost:.1f} exceeds {limit:.1f}, the most a "
                         f"fit of {problem.n_residuals} residuals plausibly has, after "
                         f"{search['rounds']} search round(s): the search missed the basin, "
                         "or the model does not describe this record (scenario, mechanism "
                         "parameters, sensor model)")
        log.warning("%s", status_reason)
    is_ess = diagnostics["importance"]["ess"] if is_draws is not None else None
    run_mcmc = settings.mcmc
    if run_mcmc and status != "ok":
        run_mcmc = False
        diagnostics["mcmc_skipped"] = ("the fit is implausible: sampling its posterior would "
                                       "not make it a reconstruction")
    if (run_mcmc and settings.mcmc_below_ess is not None and is_ess is not None
            and is_ess >= settings.mcmc_below_ess):
        run_mcmc = False
        diagnostics["mcmc_skipped"] = (f"importance ESS {is_ess:.0f} >= "
                                       f"{settings.mcmc_below_ess:g}")
        log.info("no MCMC: %s", diagnostics["mcmc_skipped"])
    if is_ess is not None and is_ess < MIN_START_ESS:
        log.warning("importance sampling: effective sample size %.0f of %d proposal draws%s",
                    is_ess, diagnostics["importance"]["n_proposal"],
                    "; MCMC follows" if run_mcmc else "; the intervals are rough (run MCMC)")
    if run_mcmc:
        if is_ess is None:
            start, start_how = None, "ball of 1 sd"
            width = np.where(np.isfinite(se), se, np.inf)
        elif is_ess >= MIN_START_ESS:
            start, start_how = is_draws, "importance draws"
            width = np.where(np.isfinite(se), se, np.inf)
        else:
            # Importance draws with a small effective sample size sit on a few points, often
            # in one narrow pocket of a rough posterior: in the calibration study (24 flights,
            # seed 7) the 21 flights with ESS >= 100 cover at 0.70 / 0.95, the 3 below it at
            # 0.47 / 0.72. Walkers started from so few points stay near them. Start from a
            # wide ball instead, 4 x the larger of the Laplace and importance standard
            # deviations (on calibration flight cal04 such a start converged, split R-hat
            # <= 1.013 after 1500 steps, with every truth inside its 95 % interval).
            start = None
            start_how = f"ball of 4 sd (importance ESS {is_ess:.0f} < {MIN_START_ESS})"
            width = 4.0 * np.fmax(np.where(np.isfinite(se), se, 0.0), is_se)
            log.info("MCMC walkers start from a %s", start_how)
        scale = np.clip(width, 1e-6 * sp.prior_scale(), 0.5 * sp.prior_scale())
        res = run_ensembles(problem.log_probability, x_opt, scale, sp.lower, sp.upper,
                            out / "chains.h5", names=problem.names, settings=settings.sampler,
                            seed=int(ss[1].generate_state(1)[0]), resume=resume,
                            start=start,
                            progress=(lambda d, t: progress("sample", d, t)) if progress else None)
        samples = res.samples
        lp_opt = float(problem.log_probability(x_opt[None, :])[0])
        i = int(np.argmax(res.samples_log_prob)) if res.samples_log_prob.size else -1
        x_map = samples[i] if i >= 0 and res.samples_log_prob[i] > lp_opt else x_opt
        diagnostics["method"] = "mcmc"
        diagnostics["mcmc"] = res.diagnostics.to_dict(problem.names)
        diagnostics["mcmc"]["n_samples"] = int(samples.shape[0])
        diagnostics["mcmc"]["start"] = start_how
        stderr = np.std(samples, axis=0)
        log.info("sampling stopped: %s (%s)", res.diagnostics.status, res.diagnostics.reason)
    elif is_draws is not None:
        samples, stderr, x_map = is_draws, is_se, x_opt
        diagnostics["method"] = "importance"
    else:
        samples, x_map, stderr = lap, x_opt, se
        diagnostics["method"] = "laplace"
    ident = identifiability(sp, samples, jac_data, threshold=settings.width_ratio)
    parameters = summarize(sp, samples, x_map, stderr)
    if diagnostics["method"] != "laplace":
        # the Laplace intervals at the optimum, for comparison (calibration studies)
        lp_sum = summarize(sp, lap, x_opt, se)
        diagnostics["laplace"] = {n: {k: v[k] for k in ("median", "ci68", "ci95")}
                                  for n, v in lp_sum.items()
                                  if v["prior"].get("kind") != "fixed"}

    k = min(settings.draws, samples.shape[0])
    draws = samples[rng.choice(samples.shape[0], size=k, replace=False)] if k else samples[:0]
    derived_out = {}
    for key, fn in (("loads", loads), ("energy", energy)):
        if fn is None or k == 0:
            derived_out[key] = {}
            continue
        full = sp.full(np.vstack([x_map[None, :], draws]))
        vals, units = fn(full, sp.names)
        at_map = {q: float(np.asarray(v)[0]) for q, v in vals.items()}
        derived_out[key] = summarize_derived({q: np.asarray(v)[1:] for q, v in vals.items()},
                                             units, at_map)
    fit = fit_table(problem, x_map, draws[: min(100, k)], rng)
    traj, events, traj_info = None, None, None
    traj_fn = trajectory
    if traj_fn is not None:
        rng_t = np.random.default_rng(ss[3])
        kt = min(settings.trajectory_draws, samples.shape[0])
        tdraws = samples[rng_t.choice(samples.shape[0], size=kt, replace=False)]
        full = sp.full(np.vstack([x_map[None, :], tdraws]))
        hist = traj_fn(full, sp.names, problem.sim_end(full))
        clock = clock_offsets(full, sp.names, problem.observation.clock_offset)
        traj = trajectory_table(hist, clock)
        events = event_summary(hist, clock)
        traj_info = {"file": "trajectory.parquet", "draws": kt,
                     "failed": int(np.count_nonzero(np.asarray(hist.status[1:]) != 0)),
                     "source": diagnostics["method"], "clock_offset": float(clock[0]),
                     "channels": list(hist.channels), "bands": dict(BAND_SUFFIXES)}
    result = ReconstructionResult(parameters, diagnostics, ident.to_dict(), derived_out["loads"],
                                  derived_out["energy"], run_settings, seed, events=events,
                                  trajectory=traj_info, status=status,
                                  status_reason=status_reason)
    write_result(out, result, fit, traj)
    return result


def _failed(out: Path, problem: ReconstructionProblem, opt, search: dict,
            run_settings: dict, seed: int, reason: str) -> ReconstructionResult:
    """Write the result of a reconstruction that could not produce a posterior: status
    ``failed`` with the reason, the search's diagnostics, each parameter's best value found
    and no intervals."""
    log.error("reconstruction failed: %s", reason)
    sp = problem.space
    x = np.asarray(opt.x, float)
    parameters = summarize(sp, x[None, :], x)
    for name, entry in parameters.items():
        if entry["prior"].get("kind") != "fixed":
            entry.update(median=None, ci68=None, ci95=None, stderr=None)
    search = {**search, "plausible": False}
    diagnostics = {"method": "none", "search": search,
                   "optimizer": {"best_cost": float(opt.best.cost), "n_starts": len(opt.starts),
                                 "costs": [s.cost for s in opt.starts],
                                 "origins": [s.origin for s in opt.starts],
                                 "x": [s.x for s in opt.starts], "best_x": x,
                                 "n_residuals": problem.n_residuals}}
    result = ReconstructionResult(parameters, diagnostics, {}, {}, {}, run_settings, seed,
                                  status="failed", status_reason=reason)
    write_result(out, result)
    return result
