"""Simulation-based calibration of the reconstruction: the flights of a study, their records,
their scores and the coverage table of ``calibration.json``.

The study itself (its flights reconstructed on a Dask cluster, ``--resume``, parts merged) is
:mod:`recon.app.study` (``dockrecon study calibration``).

Does the 68 % (95 %) interval of each parameter hold the truth 68 % (95 %) of the time, over
flights whose truth is drawn from the very priors the reconstruction uses? The study:

1. draws the free parameters of the run configuration from their priors with a seeded
   generator (``numpy.random.default_rng(seed)``; flight ``i``'s draw depends on every draw
   before it, so the same seed gives the same flights in the same order), and keeps a draw
   only if the scenario captures: within :data:`HORIZON` s of the start plane for
   ``records = "realistic"``, at least 1 s before the end of the model window for ``"cut"``.
   A draw the model aborts (:class:`models.errors.SimulationError`: a penetration or geometry
   limit, i.e. outside the model's range) is rejected like one without capture.
   The kept draws are draws from the prior conditioned on capture; a flight without capture
   has zero likelihood under the recorded capture edge, so the posterior computed with the
   full prior equals the one under the conditioned prior and nominal coverage is still the
   target;
2. records each flight with the docking unit's flight recorder (:mod:`recon.recording` with
   :attr:`models.unit.DockingUnit.sensor_suite`: noise, quantization, sample rates,
   dropouts, clock offset - and,
   for ``"realistic"`` records, an approach before the start plane and 20 s after capture on
   the vehicle's clock), written to ``DIR/telemetry/<flight>.parquet`` with its truth;
3. reconstructs every flight as a campaign (:mod:`recon.app.campaign`: Dask,
   ``--workers`` / ``--scheduler``, ``--resume``) into ``DIR/<flight>/``, with seed ``i``
   for flight ``i``;
4. scores each flight against its truth (:func:`score_flight`): per parameter inside the
   68 / 95 % interval or not and the standardised error ``z``; the initial conditions jointly
   (:func:`recon.validation.joint_check`, the posterior's Gaussian region, chi-square with as
   many degrees of freedom as initial conditions) and all free parameters against the
   posterior's highest-density region (:func:`recon.validation.hpd_check`, from the draws in
   ``posterior.nc``: no covariance estimate, right for a posterior with several modes); the
   truth's likelihood-ratio statistic
   ``2 (cost(truth) - best cost)``, chi-square with as many degrees of freedom as free
   parameters when the likelihood is right and the search found the optimum (negative: the
   search missed a better basin);
5. writes the coverage table (:func:`coverage`) to ``DIR/calibration.json`` after every
   flight, and the study's report at the end.

Coverage of each parameter is a binomial proportion: with N flights its sampling standard
error at the nominal level p is ``sqrt(p (1 - p) / N)``. A parameter is ``low`` when its
coverage is more than 2 such errors below nominal; that rule tests each of the 2 x (free
parameters) cells at about 2.3 %, so a calibrated engine has at least one ``low`` cell in
roughly 40 % of studies of 12 parameters. Each row therefore also carries the one-sided
binomial probability of so few hits (``p_low68``, ``p_low95``) and ``low_familywise``: the
same test at 5 % for the table as a whole (Bonferroni, a cell below 0.05 / cells).

Two tests use every flight at once rather than counting hits. If the posterior is
calibrated, the posterior mass of higher density than the truth's (``hpd.mass_above``) is
uniform on [0, 1] over flights (the rank statistic of simulation-based calibration, for all
free parameters together); ``hpd.uniform_p`` is the two-sided Kolmogorov-Smirnov
probability of so large a departure from the uniform (``uniform_d``, its statistic). A
posterior that is too narrow piles the masses near 1, one that is too wide near 0. And if
the likelihood is right and the search finds the optimum, the truth's likelihood-ratio
statistic follows chi-square with as many degrees of freedom as free parameters (Wilks;
asymptotically, since the model is nonlinear in the initial conditions), and the
``chi2_p`` of ``likelihood_ratio`` is the same test against that distribution. That one
is a property of the likelihood and the search, whatever the sampler: a small ``chi2_p``
points at the records (the recorder's noise against the reconstruction's noise model) or
at a search that stops short of the optimum, not at the intervals.

Scope. The study simulates the drawn initial conditions and the drawn numbers of the unit
that the run configuration frees by their scenario paths
(``[parameters."probe.axial_absorber.slip_force"]``): each flight is simulated and recorded
with a copy of the scenario holding its draw (:func:`scenario_for_draws`), so its unit is
not the preset, as a real one is not, and the reconstruction fits them against the preset's
scenario as it would a flight's. A number freed by a short name (``brake_slip_force``,
``lateral_spring_scale``) is refused (a scale has no place in the scenario to put it): the
study asks for its path. The clock offset of a realistic record is set by the recorder (the
record's clock at the start plane), not drawn.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from models.errors import InputError, SimulationError
from recon.recording import study_recorder

__all__ = ["StudySettings", "draw_flights", "record_flights", "score_flight", "coverage",
           "engines", "truth_cost", "study_problem", "model_window", "flight_recorder", "parse_only",
           "format_only", "flight_index", "HORIZON", "RECORDS"]

#: [s] a realistic study flight must capture within this time of the start plane
HORIZON = 15.0
#: record shapes: as a flight recorder records (approach, 20 s after capture, own clock), or
#: cut to the model window (the shipped 5-s flights)
RECORDS = ("realistic", "cut")
#: draws tried per flight before the study gives up on finding one that captures
MAX_TRIES = 200



@dataclasses.dataclass(frozen=True)
class StudySettings:
    """What defines a calibration study (recorded in ``calibration.json``; ``--resume``
    refuses a directory made with other settings).

    Attributes
    ----------
    scenario, config
        Scenario and run configuration TOML (absolute paths).
    flights
        Number of flights.
    seed
        Seed of the draws and of the recorder (flight ``i``: recorder seed
        ``seed * 1000 + i``, reconstruction seed ``i``).
    records
        ``"realistic"`` or ``"cut"`` (:data:`RECORDS`).
    options
        Reconstruct options of every flight (:data:`recon.app.campaign.OPTION_KEYS`).
    only
        The indices of the flights this run makes (sorted, each below ``flights``), or None
        for all of them (:func:`parse_only`). Recorded as ranges (``"20-39"``), and not at
        all when None, so a directory made before the option existed still resumes.
    """

    scenario: str
    config: str
    flights: int
    seed: int = 7
    records: str = "realistic"
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    only: tuple[int, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["options"] = dict(self.options)
        if self.only is None:
            del d["only"]
        else:
            d["only"] = format_only(self.only)
        return d


def parse_only(text: str, flights: int) -> tuple[int, ...]:
    """The flight indices of an ``--only`` value: comma-separated indices and inclusive
    ranges, 0-based (``"20-39"``, ``"0-4,10"``), each below ``flights``; sorted, without
    repeats. :class:`InputError` (key ``--only``) names what is wrong."""
    out: set[int] = set()
    for part in str(text).split(","):
        part = part.strip()
        lo, sep, hi = part.partition("-")
        try:
            a = int(lo)
            b = int(hi) if sep else a
        except ValueError:
            raise InputError(f"{part!r} is not a flight index or a range of them (0-based: "
                             "'20-39', '0-4,10')", key="--only") from None
        if a < 0 or b < a:
            raise InputError(f"{part!r} is not a range of flight indices (0 <= first <= "
                             "last)", key="--only")
        if b >= flights:
            raise InputError(f"{part!r} goes beyond the study's {flights} flights (indices "
                             f"0-{flights - 1})", key="--only")
        out.update(range(a, b + 1))
    return tuple(sorted(out))


def format_only(indices: Sequence[int]) -> str:
    """Flight indices as the shortest ``--only`` text (``[0, 1, 2, 5]`` -> ``"0-2,5"``)."""
    idx = sorted(set(int(i) for i in indices))
    parts: list[str] = []
    start = prev = None
    for i in idx + [None]:
        if start is not None and (i is None or i != prev + 1):
            parts.append(str(start) if start == prev else f"{start}-{prev}")
            start = None
        if i is not None and start is None:
            start = i
        prev = i
    return ",".join(parts)


def flight_index(name: str) -> int | None:
    """The index of a study flight from its name (``cal07`` -> 7, ``cal0107`` -> 107: the
    names :func:`draw_flights` gives), or None for a name that is not a study flight's."""
    digits = name[3:]
    return int(digits) if name.startswith("cal") and digits.isdigit() else None



def model_window(cfg) -> float:
    """[s] the model window of a cut record: the run configuration's duration (5 s when it
    fits the whole record)."""
    return 5.0 if cfg.duration == "record" else float(cfg.duration)


def _capture_event(unit) -> str:
    return dict(unit.clock_events).get(unit.capture_flag, "capture")


def scenario_for_draws(unit, document: Mapping[str, Any], paths: Sequence[str]
                       ) -> Callable[[Mapping[str, float]], Any]:
    """``scenario(draw)``: the unit's scenario of ``document`` (a scenario TOML's tables)
    with the values of ``draw`` at the dotted ``paths`` (module docstring, 'Scope')."""
    import copy

    def scenario(draw: Mapping[str, float]) -> Any:
        doc = copy.deepcopy(dict(document))
        for path in paths:
            *tables, key = path.split(".")
            node = doc
            for t in tables:
                node = node[t]
            node[key] = float(draw[path])
        return unit.scenario(doc)

    return scenario


def scenario_paths(document: Mapping[str, Any], names: Sequence[str]) -> list[str]:
    """The ``names`` that are numbers of ``document`` (a scenario TOML's tables) by their
    dotted paths; an :class:`InputError` (key ``parameters.NAME``) for one that is not."""
    out = []
    for name in names:
        node: Any = document
        for part in name.split("."):
            node = node.get(part) if isinstance(node, Mapping) else None
        if "." not in name or isinstance(node, bool) or not isinstance(node, (int, float)):
            raise InputError("a calibration study draws a number of the unit by its path in "
                             "the scenario (e.g. \"probe.axial_absorber.slip_force\"), which "
                             "it sets in each flight's scenario; this name is not one "
                             "(recon.calibration, 'Scope')", key=f"parameters.{name}")
        out.append(name)
    return out


def draw_flights(unit, scenario, space, n: int, seed: int, *, records: str, window: float,
                 scenario_for: Callable[[Mapping[str, float]], Any] | None = None
                 ) -> list[dict[str, Any]]:
    """The study's flights in order: ``{"name", "index", "draw" (every parameter, SI),
    "tries", "capture_t"}`` (module docstring, step 1). ``scenario_for(draw)``: the scenario
    of a draw that sets numbers of the unit (:func:`scenario_for_draws`); None: ``scenario``
    for every draw."""
    rng = np.random.default_rng(seed)
    t_latest = HORIZON if records == "realistic" else window - 1.0
    event = _capture_event(unit)
    out = []
    for i in range(n):
        for tries in range(1, MAX_TRIES + 1):
            x = space.sample_prior(1, rng)[0]
            full = dict(zip(space.names, space.full(x[None, :])[0]))
            ic = {k: float(full[k]) for k in unit.initial_conditions if k in full}
            try:
                scn = scenario if scenario_for is None else scenario_for(full)
                tr = unit.simulate(scn, ic, duration=t_latest + 0.1, rate=100.0)
            except SimulationError:     # outside the model's range: rejected (docstring)
                continue
            t_cap = tr.events.get(event)
            if t_cap is not None and np.isfinite(t_cap) and t_cap <= t_latest:
                break
        else:
            raise InputError(f"no prior draw of {MAX_TRIES} captures within {t_latest:g} s "
                             "of the start plane: the priors are not a docking envelope",
                             key="parameters")
        out.append({"name": f"cal{i:02d}" if n <= 100 else f"cal{i:04d}", "index": i,
                    "draw": {k: float(v) for k, v in full.items()}, "tries": tries,
                    "capture_t": float(t_cap)})
    return out


def flight_recorder(unit) -> Callable:
    """The study's recorder of ``unit`` (:func:`recon.recording.record_study_flight` with the
    unit's sensor suite); an :class:`InputError` (key ``unit``) when the unit has none."""
    return study_recorder(unit)


def record_flights(unit, scenario, flights: Sequence[Mapping[str, Any]], directory: Path,
                   settings: StudySettings, window: float,
                   scenario_for: Callable[[Mapping[str, float]], Any] | None = None
                   ) -> list[dict[str, Any]]:
    """Record every drawn flight into ``directory`` (module docstring, step 2); adds
    ``"telemetry"`` (file paths) and ``"truth"`` (the free parameters' truth, SI; the clock
    offset of a realistic record is the recorder's) to each and writes
    ``<flight>.truth.json``. ``scenario_for`` as in :func:`draw_flights`."""
    record = flight_recorder(unit)
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for f in flights:
        i = f["index"]
        ic = {k: f["draw"][k] for k in unit.initial_conditions if k in f["draw"]}
        scn = scenario if scenario_for is None else scenario_for(f["draw"])
        paths, truth = record(f["name"], directory, ic, scenario=scn,
                              seed=settings.seed * 1000 + i,
                              rng=np.random.default_rng([settings.seed, i]),
                              records=settings.records,
                              clock_offset=f["draw"].get("clock_offset", 0.0),
                              duration=window, horizon=HORIZON)
        full = {**f["draw"], **{k: float(v) for k, v in truth.items()}}
        out.append({**f, "telemetry": [str(p) for p in paths], "truth": full})
    return out


def study_problem(spec):
    from recon.flight import flight_problem

    return flight_problem(list(spec.telemetry), spec.scenario, config=spec.config).problem


def truth_cost(spec, x: Mapping[str, float], problem=None) -> float:
    """Cost ``0.5 |r|^2`` (whitened residuals and prior terms) of the parameter values ``x``
    on the flight of ``spec`` (its problem built here unless given)."""
    prob = problem if problem is not None else study_problem(spec)
    r = prob.least_squares_residuals(np.array([x[n] for n in prob.names]))
    return float(0.5 * r @ r)


def score_flight(spec, result: Mapping[str, Any], truth: Mapping[str, float],
                 initial_conditions: Sequence[str], *,
                 posterior: tuple[np.ndarray, np.ndarray | None] | None = None,
                 problem=None) -> dict[str, Any]:
    """A reconstructed flight against its truth (module docstring, step 4). ``posterior``
    (draws and their log posterior or None, :func:`read_posterior`) adds the truth against
    the highest-density region of all free parameters (``"hpd"``,
    :func:`recon.validation.hpd_check`); ``problem`` is the flight's problem (built here
    when needed and not given)."""
    from recon.validation import check, hpd_check, joint_check

    diag = result.get("diagnostics") or {}
    free = [n for n, p in (result.get("parameters") or {}).items()
            if (p.get("prior") or {}).get("kind") != "fixed"]
    params = check(result, {n: truth[n] for n in free})
    lap = diag.get("laplace") or {}
    for n in free:
        if n in lap:
            v, q = truth[n], lap[n]
            params[n]["laplace_in68"] = bool(q["ci68"][0] <= v <= q["ci68"][1])
            params[n]["laplace_in95"] = bool(q["ci95"][0] <= v <= q["ci95"][1])
    search = diag.get("search") or {}
    rec: dict[str, Any] = {
        "status": result.get("status", "ok"), "method": diag.get("method"),
        "search_path": (search.get("starts") or {}).get("path"),
        "search_rounds": search.get("rounds"),
        "pareto_k": (diag.get("importance") or {}).get("pareto_k"),
        "pareto_k_limit": (diag.get("importance") or {}).get("pareto_k_limit"),
        "best_cost": (diag.get("optimizer") or {}).get("best_cost"),
        "ess": (diag.get("importance") or {}).get("ess"), "parameters": params,
        "joint": joint_check(result, {n: truth[n] for n in free},
                             [n for n in initial_conditions if n in free])}
    if rec["joint"].get("d2") == float("inf"):
        rec["joint"]["d2"] = None      # JSON has no infinity; None reads as "outside"
    mc = diag.get("mcmc") or {}
    if rec["method"] == "mcmc":
        rhat = [v for v in (mc.get("rhat") or {}).values() if v is not None]
        ess = [v for v in (mc.get("ess") or {}).values() if v is not None]
        rec["mcmc"] = {"steps": mc.get("steps"), "status": mc.get("status"),
                       "rhat_max": max(rhat) if rhat else None,
                       "ess_min": min(ess) if ess else None}
    if (rec["best_cost"] is not None or posterior is not None) and problem is None:
        problem = study_problem(spec)
    if rec["best_cost"] is not None:
        rec["cost_truth"] = truth_cost(spec, truth, problem)
        rec["lr"] = 2.0 * (rec["cost_truth"] - rec["best_cost"])
    if posterior is not None and rec["status"] == "ok":
        x, lp = posterior
        # the binomial error of the mass above the truth over the sampler's effective draws
        ess = rec["ess"] if rec["method"] == "importance" else (rec.get("mcmc") or {}).get(
            "ess_min")
        h = hpd_check(problem, x, truth, log_prob=lp, ess=ess)
        rec["hpd"] = {k: h[k] for k in ("mass_above", "se", "in68", "in95")}
    return rec


def coverage(records: Sequence[Mapping[str, Any]], free: Sequence[str]) -> dict[str, Any]:
    """The coverage tables of scored flights (module docstring): ``{"n_flights", "tables":
    {"reported", "laplace"}, "table" (= reported), "joint", "pooled"}``. A flight whose fit
    is not ``ok`` counts as a miss of every interval (an implausible fit is not a
    reconstruction)."""
    from scipy.stats import binom, chi2, kstest

    recs = [r for r in records if r.get("parameters")]
    n = len(recs)
    n_cells = 2 * len(free)

    def inside(r, name, key):
        return bool(r["parameters"][name].get(key)) and r.get("status", "ok") == "ok"

    def table(k68: str, k95: str) -> dict[str, Any]:
        tab = {}
        for name in free:
            rows = [r for r in recs if k68 in r["parameters"].get(name, {})]
            m = len(rows)
            if not m:
                continue
            h68 = sum(inside(r, name, k68) for r in rows)
            h95 = sum(inside(r, name, k95) for r in rows)
            se68, se95 = math.sqrt(0.68 * 0.32 / m), math.sqrt(0.95 * 0.05 / m)
            p68, p95 = float(binom.cdf(h68, m, 0.68)), float(binom.cdf(h95, m, 0.95))
            tab[name] = {"n": m, "coverage68": h68 / m, "coverage95": h95 / m,
                         "se68": se68, "se95": se95, "p_low68": p68, "p_low95": p95,
                         "low": bool(h68 / m < 0.68 - 2 * se68 or h95 / m < 0.95 - 2 * se95),
                         "low_familywise": bool(min(p68, p95) < 0.05 / n_cells)}
        return tab

    tables = {"reported": table("in68", "in95"), "laplace": table("laplace_in68",
                                                                  "laplace_in95")}
    jr = [r["joint"] for r in recs if "joint" in r]
    joint = None
    if jr:
        d2 = [math.inf if j.get("d2") is None else j["d2"] for j in jr]
        joint = {"n": len(jr), "dof": jr[0]["dof"],
                 "coverage68": float(np.mean([j["in68"] for j in jr])),
                 "coverage95": float(np.mean([j["in95"] for j in jr])),
                 "d2_median": float(np.median(d2))}
        joint["p_low95"] = float(binom.cdf(sum(j["in95"] for j in jr), len(jr), 0.95))
    # the highest-density region of all free parameters; a flight that is not ok, or has no
    # posterior draws, is left out (it counts in the tables above)
    hr = [r["hpd"] for r in recs if r.get("hpd")]
    hpd = None
    if hr:
        m = [h["mass_above"] for h in hr]
        hpd = {"n": len(hr), "coverage68": float(np.mean([h["in68"] for h in hr])),
               "coverage95": float(np.mean([h["in95"] for h in hr])),
               "p_low68": float(binom.cdf(sum(h["in68"] for h in hr), len(hr), 0.68)),
               "p_low95": float(binom.cdf(sum(h["in95"] for h in hr), len(hr), 0.95)),
               "mass_above_mean": float(np.mean(m))}
        ks = kstest(m, "uniform")
        hpd["uniform_d"], hpd["uniform_p"] = float(ks.statistic), float(ks.pvalue)
    pooled: dict[str, Any] = {}
    if recs and free:
        for lv in ("68", "95"):
            pooled[f"coverage{lv}"] = float(np.mean([inside(r, nm, f"in{lv}") for r in recs
                                                     for nm in free if nm in r["parameters"]]))
        z = [abs(r["parameters"][nm]["z"]) for r in recs for nm in free
             if nm in r["parameters"] and r["parameters"][nm].get("z") is not None]
        pooled["median_abs_z"] = float(np.median(z)) if z else None
    lrs = [r["lr"] for r in recs if r.get("lr") is not None]
    if lrs:
        k = len(free)
        pooled["likelihood_ratio"] = {
            "n": len(lrs), "dof": k, "mean": float(np.mean(lrs)),
            "inside95": float(np.mean([v <= chi2.ppf(0.95, k) for v in lrs])),
            "search_failures": int(sum(v < 0 for v in lrs))}
        ks = kstest(lrs, chi2(k).cdf)
        pooled["likelihood_ratio"]["chi2_d"] = float(ks.statistic)
        pooled["likelihood_ratio"]["chi2_p"] = float(ks.pvalue)
    return {"n_flights": n, "table": tables["reported"], "tables": tables, "joint": joint,
            "hpd": hpd, "pooled": pooled, "engines": engines(recs)}


def engines(records: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """How the scored flights were reconstructed, counted: the search's first round from
    the learned proposal and enough (``learned``), learned but implausible so the screen
    searched again (``learned_then_screen``), screened from the start (``screen``: no
    proposal, or the record outside its training set); then the posterior from importance
    sampling alone (``importance``) or from emcee after it (``mcmc``: the weights' k-hat
    or effective sample size sent it there); ``importance_short``: importance posteriors
    whose k-hat exceeds its limit or whose effective sample size is below
    :data:`identification.engines.MIN_START_ESS`, the flights the hybrid engine sends to
    emcee (a study run without emcee keeps their importance intervals). Records scored
    before these were kept count under ``unknown``."""
    from identification.engines import MIN_START_ESS

    out = dict.fromkeys(("learned", "learned_then_screen", "screen", "unknown", "importance",
                         "mcmc", "importance_short"), 0)
    for r in records:
        path = r.get("search_path")
        if path == "learned":
            out["learned" if (r.get("search_rounds") or 1) <= 1
                else "learned_then_screen"] += 1
        elif path == "screen":
            out["screen"] += 1
        else:
            out["unknown"] += 1
        if r.get("method") in ("importance", "mcmc"):
            out[r["method"]] += 1
        if r.get("method") == "importance":
            k, lim, ess = r.get("pareto_k"), r.get("pareto_k_limit"), r.get("ess")
            if (k is not None and lim is not None and k > lim) or \
                    (ess is not None and ess < MIN_START_ESS):
                out["importance_short"] += 1
    return out
