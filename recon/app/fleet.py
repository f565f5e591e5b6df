"""A fleet fit: flights of one unit share its mechanism (``dockrecon fleet MANIFEST -o DIR``).

The manifest is a campaign's (:func:`recon.app.campaign.load_manifest`) with one more
table::

    [fleet]
    shared = ["probe.axial_absorber.slip_force", "contact.friction"]   # free in every flight
    shared_draws = 400      # optional: identification.engines.fleet.FleetSettings
    inner = 24
    rounds = 2

Every flight's run configuration frees the shared parameters with the same prior. The fit has
two stages, both on the campaign's Dask cluster:

1. each flight is reconstructed on its own into ``DIR/<flight>/`` (a campaign:
   :func:`recon.app.campaign.run_campaign`, ``--resume`` keeps the finished ones);
2. their posteriors are combined into the joint posterior of the shared parameters and each
   flight's own parameters given them (:func:`identification.engines.fleet.combine`: the
   product of the flights' posteriors corrected by importance sampling on the joint
   likelihood, each flight's forward runs one task per round).

``DIR/fleet.json`` holds the shared parameters' posterior beside each flight's own estimate of
them, each flight's parameters given the fleet, the engine's diagnostics (effective sample
size, Pareto k-hat), the settings, seed, inputs' digests and versions;
``DIR/fleet_draws.parquet`` the equally weighted joint draws (one column per shared parameter
and ``<flight>/<parameter>`` per flight's own); ``DIR/report.html`` and ``.pdf`` the report.
A flight that is not a plausible reconstruction is not combined: the fleet fit stops naming
it.
"""
from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from models.errors import InputError
from recon.manifest import FLEET_TABLE

__all__ = ["load_fleet", "run_fleet", "fleet_round_task", "FLEET_KEYS"]

#: keys of the ``[fleet]`` table besides ``shared`` (FleetSettings fields) and their ranges
#: (whole number?, lowest, highest), from their declarations (recon.manifest.FLEET_TABLE)
FLEET_KEYS: dict[str, tuple[bool, float, float]] = {
    k.name: (k.type == "integer", k.limits()[0], k.limits()[2])
    for k in FLEET_TABLE.keys() if k.name != "shared"}


def load_fleet(path: str | os.PathLike):
    """The flights, the shared parameter names and the engine settings of a fleet manifest
    (module docstring); errors name the manifest and the key."""
    from identification.engines.fleet import FleetSettings
    from models.limits import checked_table
    from recon.app.campaign import load_manifest
    from recon.io import load_toml

    src = str(path)
    doc = load_toml(path)
    table = doc.get("fleet")
    if not isinstance(table, Mapping):
        raise InputError("a fleet manifest needs a [fleet] table with shared = [...]",
                         key="fleet", source=src)
    shared = table.get("shared")
    if (not isinstance(shared, list) or not shared
            or not all(isinstance(s, str) for s in shared) or len(set(shared)) != len(shared)):
        raise InputError("must be a list of distinct parameter names",
                         key="fleet.shared", source=src)
    rest = checked_table({k: v for k, v in table.items() if k != "shared"}, FLEET_KEYS,
                         "fleet", others=("shared",)) if len(table) > 1 else {}
    specs = load_manifest(path, extra_tables=("fleet",))
    if len(specs) < 2:
        raise InputError("a fleet needs at least two flights", key="flight", source=src)
    return specs, tuple(shared), dataclasses.replace(FleetSettings(), **rest)


def _flight_gaussian(spec, problem, out: Path, shared: Sequence[str]):
    """A flight's posterior as the combination's Gaussian (:class:`identification.engines.
    fleet.FlightGaussian`) and its ``result.json``: centred on its most probable point, with
    the Laplace covariance there (the Jacobian with the flight's own finite-difference step).
    Not the moments of its posterior draws: an importance posterior of a few tens of effective
    draws gives a covariance too narrow in some directions, and the conditional proposals of
    the flight's own parameters built on it missed (log-weight spread 64 on the shipped
    nominal flight against 11 on the misaligned one); the importance weights correct the
    Laplace approximation's errors exactly."""
    from identification.engines.fleet import FlightGaussian
    from identification.engines.laplace import laplace_covariance
    from identification.engines.least_squares import jacobian
    doc = json.loads((out / spec.name / "result.json").read_text())
    names = tuple(problem.names)
    x = np.array([doc["parameters"][n]["map"] for n in names], float)
    step = float((doc.get("settings") or {}).get("engine", {}).get("jac_step", 1e-2))
    cov = laplace_covariance(jacobian(problem, x, diff_step=step, with_prior=True))
    s = np.array([names.index(n) for n in shared], int)
    o = np.array([j for j, n in enumerate(names) if n not in shared], int)
    return FlightGaussian(names, x, 0.5 * (cov + cov.T), s, o), doc


def fleet_round_task(spec, names: Sequence[str], gaussian, m: np.ndarray, inner: int,
                     seed: int, df: float, inflate: float) -> tuple[np.ndarray, np.ndarray]:
    """One flight's share of a round (a Dask task): its problem built from ``spec`` (as its
    reconstruction built it), then :func:`identification.engines.fleet.flight_draws`."""
    from identification.engines.fleet import flight_draws
    from recon.calibration import study_problem

    problem = study_problem(spec)
    if tuple(problem.names) != tuple(names):
        raise InputError(f"flight {spec.name}: its free parameters changed since it was "
                         "reconstructed (run the fleet again without --resume)")
    return flight_draws(problem.log_probability, gaussian, m, inner,
                        np.random.default_rng(seed), df=df, inflate=inflate)


def _prior_of(spec, problem, shared: Sequence[str]):
    """The shared parameters' priors of one flight (its ``problem``): (log prior function,
    Gaussian precision and mean, a comparable description)."""
    sp = problem.space
    missing = [n for n in shared if n not in sp.free_names]
    if missing:
        raise InputError(f"flight {spec.name} does not free the shared parameter(s) "
                         f"{', '.join(missing)}: free them in its run configuration with the "
                         "prior the other flights give them", key="fleet.shared",
                         source=spec.config or spec.scenario)
    idx = [sp.free_names.index(n) for n in shared]
    priors = [sp.free[i].prior for i in idx]
    desc = [(p.kind, p.lower, p.upper, p.a, p.b) for p in priors]
    prec = np.diag([1.0 / p.b ** 2 if p.kind == "normal" else 0.0 for p in priors])
    mean = np.array([p.a if p.kind == "normal" else 0.0 for p in priors])

    def log_prior(m: np.ndarray) -> np.ndarray:
        m = np.atleast_2d(m)
        return np.sum([np.asarray(p.logpdf(m[:, j]), float) for j, p in enumerate(priors)],
                      axis=0)

    return log_prior, prec, mean, desc


def run_fleet(manifest: str | os.PathLike, out: str | os.PathLike, *,
              workers: int | None = None, scheduler: str | None = None, resume: bool = False,
              seed: int = 0, progress: Callable[[str, int, int], None] | None = None,
              dashboard: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The fleet fit of ``manifest`` into ``out`` (module docstring); returns the
    ``fleet.json`` document. ``dashboard``: as :func:`recon.app.campaign.run_campaign` has
    it."""
    from identification.engines.fleet import combine
    from identification.provenance import versions
    from recon.app.campaign import _client, _close, reconstruct_one, run_campaign, spec_digest
    from recon.io import write_json, write_table

    specs, shared, settings = load_fleet(manifest)
    out = Path(out)
    t0 = time.time()
    # the flights' shared parameters and priors checked before any reconstruction
    from recon.calibration import study_problem

    problems = [study_problem(s) for s in specs]   # each flight's, as its reconstruction's
    priors = [_prior_of(s, p, shared) for s, p in zip(specs, problems)]
    for s, p in zip(specs[1:], priors[1:]):
        if p[3] != priors[0][3]:
            raise InputError(f"flight {s.name} gives the shared parameters other priors than "
                             f"{specs[0].name}: one unit, one prior", key="fleet.shared",
                             source=str(manifest))
    run_campaign(specs, out, reconstruct_one, workers=workers, scheduler=scheduler,
                 resume=resume, settings={"manifest": str(manifest), "fleet": list(shared)},
                 progress=(lambda c: progress("flights", c["done"] + c["failed"], c["total"]))
                 if progress else None, dashboard=dashboard)
    camp = json.loads((out / "campaign.json").read_text())
    bad = [f"{n} ({s.get('status', s.get('state'))}: {s.get('reason', '')})"
           for n, s in camp["flights"].items() if s.get("status") != "ok"]
    if bad:
        raise InputError("not every flight is a plausible reconstruction, so the fleet cannot "
                         "combine them: " + "; ".join(bad), source=str(out))
    gaussians, docs = zip(*(_flight_gaussian(s, p, out, shared)
                            for s, p in zip(specs, problems)))
    log_prior, prec, mean, _ = priors[0]
    n_workers = max(1, int(workers or os.cpu_count() or 1))
    client, cluster = _client(n_workers, scheduler, max(1, (os.cpu_count() or 1) // n_workers),
                              dashboard=dashboard is not None)
    if dashboard is not None:       # the combination's cluster is another one
        dashboard(client.dashboard_link)
    try:
        def run_round(m: np.ndarray, round_seed: int):
            futs = [client.submit(fleet_round_task, s, g.names, g, m, settings.inner,
                                  round_seed + 7919 * i, settings.inner_df,
                                  settings.inner_inflate, pure=False)
                    for i, (s, g) in enumerate(zip(specs, gaussians))]
            return client.gather(futs)

        rng = np.random.default_rng(np.random.SeedSequence(seed))
        res = combine(gaussians, shared, log_prior, run_round, prior_precision=prec,
                      prior_mean=mean, settings=settings, rng=rng,
                      progress=(lambda r, t: progress("combine", r, t)) if progress else None)
    finally:
        _close(client, cluster)
    doc = _document(specs, shared, gaussians, docs, res, settings, seed)
    doc.update(versions=versions(), wall_s=round(time.time() - t0, 1),
               inputs={s.name: spec_digest(s) for s in specs},
               settings={"manifest": str(manifest), "workers": n_workers,
                         "scheduler": scheduler, "engine": settings.to_dict()})
    cols = {n: res.shared[:, j] for j, n in enumerate(shared)}
    for s, g, own in zip(specs, gaussians, res.own):
        for j, i in enumerate(g.own):
            cols[f"{s.name}/{g.names[i]}"] = own[:, j]
    import pandas as pd

    write_table(pd.DataFrame(cols), out / "fleet_draws.parquet", {c: "" for c in cols})
    write_json(doc, out / "fleet.json")
    return doc


def _summary(x: np.ndarray) -> dict[str, Any]:
    q = np.quantile(x, [0.025, 0.16, 0.5, 0.84, 0.975])
    return {"median": float(q[2]), "ci68": [float(q[1]), float(q[3])],
            "ci95": [float(q[0]), float(q[4])], "sd": float(np.std(x))}


def _document(specs, shared, gaussians, docs, res, settings, seed) -> dict[str, Any]:
    from recon.app.campaign import read_truth

    shared_out: dict[str, Any] = {}
    for j, n in enumerate(shared):
        per_flight = {}
        for s, d in zip(specs, docs):
            p = d["parameters"][n]
            per_flight[s.name] = {k: p.get(k) for k in ("median", "ci68", "ci95", "stderr")}
        fleet = _summary(res.shared[:, j])
        widths = [f["ci95"][1] - f["ci95"][0] for f in per_flight.values()
                  if f.get("ci95") is not None]
        shared_out[n] = {**fleet, "unit": docs[0]["parameters"][n].get("unit"),
                         "flights": per_flight,
                         "narrowing": (min(widths) / (fleet["ci95"][1] - fleet["ci95"][0])
                                       if widths else None)}
    flights: dict[str, Any] = {}
    for s, g, own, d in zip(specs, gaussians, res.own, docs):
        truth = read_truth(s) or {}
        flights[s.name] = {g.names[i]: {**_summary(own[:, j]),
                                        "own": {k: d["parameters"][g.names[i]].get(k)
                                                for k in ("median", "ci95")},
                                        **({"truth": truth[g.names[i]]}
                                           if g.names[i] in truth else {})}
                           for j, i in enumerate(g.own)}
    truth0 = read_truth(specs[0]) or {}
    for n in shared:
        if n in truth0:
            shared_out[n]["truth"] = truth0[n]
            lo, hi = shared_out[n]["ci95"]
            shared_out[n]["in95"] = bool(lo <= truth0[n] <= hi)
    diag = res.diagnostics
    ok = diag["pareto_k"] is not None and not (diag["pareto_k"] > diag["pareto_k_limit"])
    return {"kind": "fleet", "status": "ok" if ok and diag["ess"] >= 50 else "rough",
            "status_reason": (f"effective sample size {diag['ess']:.0f}, Pareto k-hat "
                              f"{diag['pareto_k']:.2f} (limit {diag['pareto_k_limit']:.2f})"),
            "shared": shared_out, "flights": flights, "diagnostics": diag, "seed": seed,
            "files": ["fleet_draws.parquet"]}
