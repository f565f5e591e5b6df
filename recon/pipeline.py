"""One reconstruction, start to finish, as a chain of engines, written to a directory.

:func:`reconstruct` is what ``dockrecon reconstruct`` runs once the telemetry, the forward
model, the parameter space and the observation model are built
(:func:`recon.flight.flight_problem`); it works with any forward model
(:class:`recon.problem.ReconstructionProblem`)::

    result = least_squares(problem, ...)     # search, polish; searched again while implausible
    result = laplace(problem, result, ...)   # the Gaussian at the optimum
    result = importance(problem, result, ...)  # multi-mode importance sampling
    result = mcmc(problem, result, ...)      # emcee, where importance sampling is not enough
    result = posterior_products(...)         # parameters, identifiability, loads, energy,
                                             # fit and trajectory tables, events

then ``DIR/result.json`` and its files (:mod:`identification.result`).
"""
from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from identification.engines import (MIN_START_ESS, SamplerSettings, check_resumable, importance,
                                    laplace, least_squares, mcmc, refine)
from recon.results import write_inference_data
from recon.problem import ReconstructionProblem
from identification.result import Result, identifiability, summarize_derived, summarize_parameters
from recon.results import write_result
from recon.trajectory import (BAND_SUFFIXES, TrajectoryFn, clock_offsets, event_summary,
                              trajectory_table)

__all__ = ["ReconstructSettings", "Derived", "reconstruct", "fit_table", "judge",
           "posterior_products"]

log = logging.getLogger("dockrecon.pipeline")

#: ``derived(full_params (n, n_all), names) -> ({quantity: (n,)}, {quantity: unit})``: loads
#: and energies of each posterior draw, computed by the forward model.
Derived = Callable[[np.ndarray, tuple[str, ...]], tuple[Mapping[str, np.ndarray], Mapping[str, str]]]


@dataclasses.dataclass(frozen=True)
class ReconstructSettings:
    """Engine settings of one reconstruction."""

    starts: int = 8
    max_nfev: int | None = None
    pre_nfev: int | None = None   # two-phase polish (identification.engines.multistart)
    pre_keep: int = 2
    # searches again (``search_again`` of :func:`reconstruct`) while the best cost is above
    # gof_limit, at most this many times
    search_retries: int = 0
    # 0 = Laplace draws; N > 0 = importance sampling of the posterior with N Laplace-t
    # proposal draws (identification.engines.importance)
    importance: int = 0
    mcmc: bool = True
    # with MCMC and importance sampling: run emcee only when the importance effective sample
    # size is below this (None: always). The calibrated engine of the shipped flights' study
    # (``dockrecon study calibration``, recon.app.study) is ``MIN_START_ESS``.
    mcmc_below_ess: float | None = None
    sampler: SamplerSettings = SamplerSettings()
    draws: int = 200          # posterior draws for loads, energy and the predictive band
    trajectory_draws: int = 200  # posterior draws for the bands of trajectory.parquet
    width_ratio: float = 0.8  # identifiability flag threshold
    # finite-difference step of the optimizer's and the Laplace Jacobian, fraction of each
    # prior's spread; models with event-driven contact need a secant wider than their
    # switching jitter (see recon.config.RunConfig)
    jac_step: float = 1e-4
    # finite-difference step of a final polish of the best distinct end points (and of the
    # importance re-polishes), fraction of each prior's spread; None: no final polish
    # (identification.engines.refine)
    polish_step: float | None = None
    # the importance proposal's refit rule between rounds: "moments" (weighted moments, the
    # population Monte Carlo rule) or "quadratic" (a response-surface fit of the log
    # posterior; identification.engines.importance_samples)
    importance_adapt: str = "moments"
    # at most this many importance draws: extra rounds while the effective sample size is
    # below mcmc_below_ess (None: ``importance``; identification.engines.importance_samples)
    importance_max: int | None = None
    # the importance sampling ends before its ``importance`` draws once their effective sample
    # size reaches this with a trustworthy k-hat (None: never early;
    # identification.engines.importance_samples, ``ess_enough``)
    importance_enough: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@contextlib.contextmanager
def _phase(problem, result: Result, name: str):
    """Time one engine of the chain into ``result.diagnostics["timing"][name]``: its wall
    time [s] and the forward-model evaluations it made (``problem.n_evaluations``, where the
    problem counts them), also logged. Where a reconstruction spends its time, for the
    analyst and the benchmarks (``benchmarks/shipped_walls.py``); the numbers change from
    run to run, nothing reads them back."""
    n0 = getattr(problem, "n_evaluations", None)
    t0 = time.perf_counter()
    try:
        yield
    finally:
        entry: dict[str, Any] = {"wall_s": round(time.perf_counter() - t0, 2)}
        if n0 is not None:
            entry["evaluations"] = int(problem.n_evaluations - n0)
        result.diagnostics.setdefault("timing", {})[name] = entry
        log.info("%s: %.1f s%s", name, entry["wall_s"],
                 f", {entry['evaluations']} forward evaluations" if n0 is not None else "")


def judge(problem, result: Result) -> Result:
    """The result's status from its best cost (after every engine that may have polished
    further): ``ok`` when plausible (:func:`identification.engines.gof_limit`), else
    ``implausible`` with the reason; a failed result stays failed."""
    if result.status == "failed":
        return result
    search = result.diagnostics["search"]
    best_cost = float(result.diagnostics["optimizer"]["best_cost"])
    limit = search["gof_limit"]
    search["plausible"] = bool(best_cost <= limit)
    if search["plausible"]:
        result.status = "ok"
        result.status_reason = (f"plausible fit: cost {best_cost:.1f} within {limit:.1f}, the "
                                f"most a fit of {problem.n_residuals} residuals plausibly has")
    else:
        result.status = "implausible"
        result.status_reason = (f"the best fit's cost {best_cost:.1f} exceeds {limit:.1f}, the "
                                f"most a fit of {problem.n_residuals} residuals plausibly has, "
                                f"after {search['rounds']} search round(s): the search missed "
                                "the basin, or the model does not describe this record "
                                "(scenario, mechanism parameters, sensor model)")
        log.warning("%s", result.status_reason)
    return result


def _mcmc_wanted(settings: ReconstructSettings, result: Result) -> bool:
    """The hybrid rule: emcee unless switched off, the fit is not a reconstruction, or
    importance sampling's weights are trustworthy (Pareto k-hat at most its limit,
    :func:`identification.engines.importance.pareto_k`) and their effective sample size
    reached ``mcmc_below_ess``; the reason it is skipped goes to
    ``diagnostics.mcmc_skipped``, the k-hat that sent it to emcee to
    ``diagnostics.mcmc_reason``."""
    if not settings.mcmc:
        return False
    if result.status != "ok":
        result.diagnostics["mcmc_skipped"] = ("the fit is implausible: sampling its posterior "
                                              "would not make it a reconstruction")
        return False
    imp = result.diagnostics.get("importance") or {}
    is_ess, k_hat = imp.get("ess"), imp.get("pareto_k")
    if k_hat is not None and np.isfinite(k_hat) and k_hat > imp["pareto_k_limit"]:
        # the weights' tail is too heavy for their ESS to mean anything: sample
        log.info("MCMC: importance weights' Pareto k-hat %.2f > %.2f", k_hat,
                 imp["pareto_k_limit"])
        result.diagnostics["mcmc_reason"] = (f"importance weights' Pareto k-hat {k_hat:.2f} "
                                             f"> {imp['pareto_k_limit']:.2f}")
        return True
    if settings.mcmc_below_ess is not None and is_ess is not None \
            and is_ess >= settings.mcmc_below_ess:
        result.diagnostics["mcmc_skipped"] = (f"importance ESS {is_ess:.0f} >= "
                                              f"{settings.mcmc_below_ess:g}")
        log.info("no MCMC: %s", result.diagnostics["mcmc_skipped"])
        return False
    return True


def fit_table(problem: ReconstructionProblem, x_map: np.ndarray, draws: np.ndarray,
              rng: np.random.Generator) -> tuple[Any, dict[str, str]]:
    """Telemetry, best-fit model and 95 % posterior predictive band per channel.

    Rows: the whole record; ``fitted`` is 1 inside the fitted span (:mod:`recon.span`), 0
    outside, where the model columns are NaN (the model was not compared with those samples).
    Columns: ``t``, ``fitted``; per channel ``NAME`` (telemetry), ``NAME_fit`` (noise-free
    model at the MAP), ``NAME_lo`` / ``NAME_hi`` (2.5 / 97.5 % of model + sensor noise over
    ``draws``). NaN where the channel has no sample. Binary channels: the band is the range
    of the flag.
    """
    import pandas as pd

    from recon.telemetry import known_channels

    tel = problem.telemetry
    record = problem.record
    t = np.asarray(record.t, float)
    rows = np.searchsorted(t, np.asarray(tel.t, float))  # the span's rows in the record
    best = problem.predict(x_map)
    band = problem.predict(draws) if len(draws) else {}
    fitted = np.zeros(t.size)
    fitted[rows] = 1.0
    channel_units = known_channels()
    cols: dict[str, np.ndarray] = {"t": t, "fitted": fitted}
    units = {"t": "s", "fitted": ""}
    for c in problem.observation.channels:
        name = c.name
        mask = rows[np.isfinite(np.asarray(tel.channels[name], float))]
        cols[name] = np.asarray(record.channels[name], float)
        unit = channel_units.get(name, "")
        for suffix, vals in (("fit", best[name][0]),):
            col = np.full(t.size, np.nan)
            col[mask] = vals
            cols[f"{name}_{suffix}"] = col
        if band:
            pred = band[name]
            if not c.binary:
                pred = pred + rng.normal(0.0, c.sigma_eff, pred.shape)
            lo, hi = np.nanquantile(pred, [0.025, 0.975], axis=0)
            for suffix, vals in (("lo", lo), ("hi", hi)):
                col = np.full(t.size, np.nan)
                col[mask] = vals
                cols[f"{name}_{suffix}"] = col
        for suffix in ("", "_fit", "_lo", "_hi"):
            if unit:
                units[f"{name}{suffix}"] = unit
    return pd.DataFrame(cols), units




def posterior_products(problem: ReconstructionProblem, result: Result, *,
                       settings: ReconstructSettings, rng: np.random.Generator,
                       rng_trajectory: np.random.Generator, loads: Derived | None = None,
                       energy: Derived | None = None,
                       trajectory: TrajectoryFn | None = None) -> Result:
    """What a reconstruction reports from its posterior: the parameter summaries and
    identifiability; loads and energy over ``settings.draws`` posterior draws (and at the
    MAP); the fit table (telemetry, best fit, predictive band); the trajectory table and the
    events over ``settings.trajectory_draws`` draws."""
    sp = problem.space
    post = result.posterior
    samples, x_map = post.samples, post.x_map
    jac_data = result.jacobian[:problem.n_residuals]
    result.sections["identifiability"] = identifiability(
        sp, samples, jac_data, threshold=settings.width_ratio).to_dict()
    summarize_parameters(sp, result)
    k = min(settings.draws, samples.shape[0])
    draws = samples[rng.choice(samples.shape[0], size=k, replace=False)] if k else samples[:0]
    for key, fn in (("loads", loads), ("energy", energy)):
        result.sections[key] = {}
        if fn is None or k == 0:
            continue
        full = sp.full(np.vstack([x_map[None, :], draws]))
        vals, units = fn(full, sp.names)
        at_map = {q: float(np.asarray(v)[0]) for q, v in vals.items()}
        result.sections[key] = summarize_derived({q: np.asarray(v)[1:] for q, v in vals.items()},
                                                 units, at_map)
    result.tables["fit.parquet"] = fit_table(problem, x_map, draws[: min(100, k)], rng)
    if trajectory is not None:
        kt = min(settings.trajectory_draws, samples.shape[0])
        tdraws = samples[rng_trajectory.choice(samples.shape[0], size=kt, replace=False)]
        full = sp.full(np.vstack([x_map[None, :], tdraws]))
        hist = trajectory(full, sp.names, problem.sim_end(full))
        clock = clock_offsets(full, sp.names, problem.observation.clock_offset)
        result.tables["trajectory.parquet"] = trajectory_table(hist, clock)
        result.sections["events"] = event_summary(hist, clock)
        result.sections["trajectory"] = {
            "file": "trajectory.parquet", "draws": kt,
            "failed": int(np.count_nonzero(np.asarray(hist.status[1:]) != 0)),
            "source": post.method, "clock_offset": float(clock[0]),
            "channels": list(hist.channels), "bands": dict(BAND_SUFFIXES)}
    return result


#: draws from the prior in ``posterior.nc`` (its ``prior`` group)
PRIOR_DRAWS = 1000


def reconstruct(problem: ReconstructionProblem, output: str | os.PathLike, *,
                settings: ReconstructSettings = ReconstructSettings(), seed: int = 0,
                resume: bool = False,
                first_guess: np.ndarray | Callable[[ReconstructionProblem], np.ndarray] | None = None,
                search_again: Callable[[ReconstructionProblem, int], np.ndarray | None] | None = None,
                search_record: Mapping[str, Any] | None = None,
                loads: Derived | None = None, energy: Derived | None = None,
                trajectory: TrajectoryFn | None = None,
                extra_settings: Mapping[str, Any] | None = None,
                explain: Callable[[ReconstructionProblem, Result], Any] | None = None,
                progress: Callable[[str, int, int], None] | None = None) -> Result:
    """Run the reconstruction (module docstring) and write ``output``/{result.json,
    fit.parquet, trajectory.parquet, posterior.nc, chains.h5}.

    A stale ``result.json`` (and the tables of an earlier run) is removed first, so the
    directory never looks complete while the run is under way or after it failed.

    Parameters
    ----------
    problem
        The problem to solve.
    output
        Result directory.
    settings
        Engine settings.
    seed
        Seeds the Latin hypercube, the emcee ensembles and the posterior draws.
    resume
        Continue the chains of an interrupted run in ``output``/chains.h5.
    first_guess
        Extra optimizer start(s), or ``first_guess(problem)`` giving them.
    search_again
        ``search_again(problem, k)``: new starts for search round ``k`` = 1, 2, ... (another
        seed of a global screen; None: no more rounds), polished while the best cost exceeds
        :func:`identification.engines.gof_limit`, at most ``settings.search_retries`` times.
    search_record
        Where the search's starts came from, filled while ``first_guess`` runs (the learned
        proposal or the screen, :func:`recon.flight.reconstruct_flight`): written to
        ``diagnostics.search.starts``.
    loads, energy
        Derived quantities of a batch of full parameter vectors (see :data:`Derived`).
    trajectory
        Histories of a batch of full parameter vectors for trajectory.parquet and the events
        (:mod:`recon.trajectory`); None: no trajectory file.
    explain
        ``explain(problem, result)``: when the fit is implausible, what might make it
        plausible (:func:`recon.hints.mechanism_hints`), kept as
        ``diagnostics.mechanism_hints`` and named in the status reason.
    progress
        ``progress(stage, done, total)`` with stage ``"optimize"``, ``"importance"`` or
        ``"sample"`` (and ``"screen"`` from a screening ``first_guess`` that reports it).
    """
    out = Path(output)
    if resume:
        # the chains must be this problem's (record, priors, sensor models, span, sampler
        # shape), checked before the fit rather than after it
        check_resumable(out / "chains.h5", names=problem.names, settings=settings.sampler,
                        fingerprint=problem.fingerprint())
    out.mkdir(parents=True, exist_ok=True)
    (out / "result.json").unlink(missing_ok=True)
    for stale in ("trajectory.parquet", "fit.parquet", "posterior.nc"):
        (out / stale).unlink(missing_ok=True)
    # streams: search, MCMC, engines, trajectory draws, the prior draws of posterior.nc
    ss = np.random.SeedSequence(seed).spawn(5)
    rng = np.random.default_rng(ss[2])
    sp = problem.space
    run_settings = {"engine": settings.to_dict(), "resume": resume,
                    "parameters": {p.name: {"unit": p.unit, "fixed": p.fixed} for p in
                                   sp.parameters},
                    "channels": list(problem.observation.names),
                    "telemetry": problem.record.source, **dict(extra_settings or {})}
    result = Result("reconstruction", names=tuple(problem.names), seed=seed,
                    settings=run_settings)
    with _phase(problem, result, "search"):
        least_squares(problem, starts=settings.starts, first_guess=first_guess,
                      seed=int(ss[0].generate_state(1)[0]), max_nfev=settings.max_nfev,
                      diff_step=settings.jac_step, pre_nfev=settings.pre_nfev,
                      pre_keep=settings.pre_keep, search_again=search_again,
                      retries=settings.search_retries, progress=progress, result=result)
        if search_record is not None:
            result.diagnostics.setdefault("search", {})["starts"] = dict(search_record)
    if result.status != "failed":
        if settings.polish_step is not None:
            with _phase(problem, result, "polish"):
                refine(problem, result, diff_step=settings.polish_step,
                       max_nfev=settings.max_nfev)
        with _phase(problem, result, "laplace"):
            laplace(problem, result, rng=rng, diff_step=settings.jac_step)
        if settings.importance > 0:
            with _phase(problem, result, "importance"):
                importance(problem, result, n=settings.importance, rng=rng,
                           diff_step=settings.jac_step, max_nfev=settings.max_nfev,
                           polish_step=settings.polish_step, adapt=settings.importance_adapt,
                           n_max=settings.importance_max, ess_target=settings.mcmc_below_ess,
                           ess_enough=settings.importance_enough,
                           progress=progress)
    judge(problem, result)
    if result.status == "implausible" and explain is not None:
        # which number of the unit, freed, would lower the misfit most (recon.hints)
        with _phase(problem, result, "hints"):
            hints = explain(problem, result)
        if hints:
            from recon.hints import hint_text

            result.diagnostics["mechanism_hints"] = hints
            text = hint_text(hints)
            if text:
                result.status_reason += f"; {text}"
    if result.status == "failed":
        log.error("reconstruction failed: %s", result.status_reason)
        return _write_failed(out, problem, result)
    run_mcmc = _mcmc_wanted(settings, result)
    is_ess = (result.diagnostics.get("importance") or {}).get("ess")
    if is_ess is not None and is_ess < MIN_START_ESS:
        log.warning("importance sampling: effective sample size %.0f of %d proposal draws%s",
                    is_ess, result.diagnostics["importance"]["n_proposal"],
                    "; MCMC follows" if run_mcmc else "; the intervals are rough (run MCMC)")
    if run_mcmc:
        with _phase(problem, result, "mcmc"):
            mcmc(problem, result, settings=settings.sampler, path=out / "chains.h5",
                 seed=int(ss[1].generate_state(1)[0]), resume=resume, progress=progress)
    with _phase(problem, result, "products"):
        posterior_products(problem, result, settings=settings, rng=rng,
                           rng_trajectory=np.random.default_rng(ss[3]), loads=loads,
                           energy=energy, trajectory=trajectory)
    write_inference_data(result.posterior, problem.names,
                         [sp[n].unit for n in problem.names], out / "posterior.nc",
                         observed=problem.bound.observed(),
                         prior=problem.space.sample_prior(PRIOR_DRAWS, np.random.default_rng(ss[4])),
                         attrs={"seed": int(seed)})
    write_result(out, result, also=("posterior.nc",))
    return result


def _write_failed(out: Path, problem: ReconstructionProblem, result: Result) -> Result:
    """Write a failed result: the search's diagnostics, each parameter's best value found,
    no intervals, no tables."""
    x = np.asarray(result.x_opt if result.x_opt is not None else result.best.x, float)
    from identification.result import summarize

    parameters = summarize(problem.space, x[None, :], x)
    for entry in parameters.values():
        if entry["prior"].get("kind") != "fixed":
            entry.update(median=None, ci68=None, ci95=None, stderr=None)
    result.parameters = parameters
    result.diagnostics.pop("laplace", None)
    result.diagnostics.setdefault("search", {})["plausible"] = False
    result.tables.clear()
    write_result(out, result)
    return result
