"""Calibration study of the probe-cone reconstruction (issues 6 and 15 acceptance).

Over ``--flights`` flights simulated from prior draws, does the 68 % (95 %) interval of each
initial condition contain the truth 68 % (95 %) of the time?

Each flight:

1. draws the free parameters of the run configuration from their priors (``rel_pos_x`` is
   fixed there: the start plane) with a seeded generator;
2. keeps the draw only if the reference scenario captures (``--records cut``: at least 1 s
   before the end of the 5-s window; ``realistic``: within 15 s of the start plane). The kept
   draws are draws from the prior *conditioned on capture*; since a flight without capture has
   a likelihood of zero under the recorded capture edge, the posterior the reconstruction
   computes with the full prior equals the one under the conditioned prior, so nominal
   coverage is still the right target;
3. records it (``--records realistic``, the default: as a flight recorder does,
   :func:`telemetry_samples.flights.generate.record_long_flight`: from 3-10 s before the
   start plane to 20 s after capture, the record's clock starting anywhere in -100 ... 5000 s,
   gyros on their own time base, dropouts at random times; the truth is the state at the start
   plane and the clock offset the record's time of it. ``cut``: the 5-s records of the shipped
   ``nominal`` / ``misaligned`` / ``slow`` flights,
   :func:`telemetry_samples.flights.generate.record_flight`, with the drawn clock offset);
4. reconstructs it with ``reconstruct_flight`` and the run configuration (default:
   ``telemetry_samples/flights/realistic/run.toml`` or ``run.toml``; importance sampling,
   ``--mcmc`` to sample every flight with emcee, ``--mcmc-below-ess 100`` to sample with
   emcee only the flights whose importance sampling has an effective sample size below 100,
   the walkers then starting from a wide ball: the calibrated engine);
5. records, per parameter, whether the truth is inside ``ci68`` and ``ci95`` of the reported
   intervals (importance sampling or MCMC) and of the Laplace intervals at the optimum that
   the result also records (``diagnostics.laplace``); a third table applies the rule
   "importance intervals when their effective sample size is >= 100, else Laplace";
6. records the truth jointly: inside the posterior's Gaussian 68 / 95 % region of the initial
   conditions or not (``recon.validation.joint_check``), and the likelihood-ratio statistic
   ``lr = 2 (cost(truth) - best cost)``, chi-square with 12 degrees of freedom if the
   likelihood is right and the search found the optimum (negative: a search failure).

Coverage of each parameter is a binomial proportion: with N flights its sampling standard
error at the nominal level p is ``sqrt(p (1 - p) / N)`` (N = 24: 0.095 at 68 %, 0.044 at 95 %).
The table marks a parameter whose coverage is more than 2 such errors below nominal (``low``).
That rule tests each of the 24 cells (12 parameters x 2 levels) at about 2.3 %, so a perfectly
calibrated engine has at least one ``low`` cell in roughly 40 % of studies; each row therefore
also carries the one-sided binomial probability of so few hits (``p_low68``, ``p_low95``) and
``low_familywise``, the same test at 5 % for the table as a whole (Bonferroni: a cell below
0.05 / 24). ``pooled`` is the coverage over all cells and the median |z| (0.67 if calibrated).

Usage::

    .venv/bin/python benchmarks/calibration_docking.py [--flights 24] [--seed 7]
        [--records realistic|cut] [--mcmc | --mcmc-below-ess 100] [--steps N]

Writes ``benchmarks/results/calibration_docking.json`` (the table, per-flight records with
their wall time, the settings, seed and versions) and prints the table.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent

#: the realistic recorder of the study: approach [s] and record clock at its start [s] drawn
#: uniformly in these ranges, 20 s kept after capture, capture within HORIZON s of the start
#: plane
APPROACH = (3.0, 10.0)
RECORD_START = (-100.0, 5000.0)
AFTER_CAPTURE = 20.0
HORIZON = 15.0


def _draw_capturing(space, rng, scn, t_latest, max_tries=200):
    """One prior draw (full parameter dict, SI) whose flight captures by ``t_latest`` [s]
    after the start plane."""
    from models.probe_cone import IC_NAMES, simulate

    for tries in range(1, max_tries + 1):
        x = space.sample_prior(1, rng)[0]
        full = dict(zip(space.names, space.full(x[None, :])[0]))
        ic = {n: float(full[n]) for n in IC_NAMES if n in full}
        tr = simulate(scn, dataclasses.replace(scn.initial, **ic), duration=t_latest + 0.1,
                      rate=100.0)
        t_cap = tr.events.get("capture")
        if t_cap is not None and np.isfinite(t_cap) and t_cap <= t_latest:
            return full, tries, float(t_cap)
    raise RuntimeError("no capturing draw in %d tries" % max_tries)


def study_flights(space, seed: int, duration: float, n: int, records: str = "cut"):
    """The study's flights in order: ``(i, name, full draw, tries, capture time)``. The same
    seed gives the same flights (each draw depends on all draws before it)."""
    from models.probe_cone import load_preset

    scn = load_preset("reference")
    rng = np.random.default_rng(seed)
    t_latest = HORIZON if records == "realistic" else duration - 1.0
    for i in range(n):
        full, tries, t_cap = _draw_capturing(space, rng, scn, t_latest)
        yield i, f"cal{i:02d}", full, tries, t_cap


def record_study_flight(work: Path, name: str, seed: int, i: int, full: dict,
                        duration: float, records: str = "cut") -> tuple[Path, dict]:
    """Record flight ``i`` of the study with its own sensor (and recorder) seed; returns the
    telemetry path and the truth (the drawn free parameters; for realistic records the clock
    offset is the record's time of the start plane)."""
    from models.probe_cone import IC_NAMES
    from telemetry_samples.flights.generate import record_flight, record_long_flight

    initial = {n: full[n] for n in IC_NAMES}
    truth = {k: float(v) for k, v in full.items()}
    if records == "realistic":
        rec = np.random.default_rng([seed, i])
        path = record_long_flight(name, work, seed * 1000 + i, initial,
                                  approach=float(rec.uniform(*APPROACH)),
                                  after_capture=AFTER_CAPTURE,
                                  record_start=float(rec.uniform(*RECORD_START)))[0]
        truth["clock_offset"] = json.loads((work / f"{name}.truth.json").read_text())[
            "parameters"]["clock_offset"]
        return path, truth
    record_flight(name, work, seed * 1000 + i, initial, float(full["clock_offset"]), duration)
    return work / f"{name}.parquet", truth


def truth_cost(telemetry: Path, config, truth: dict) -> float:
    """The reconstruction cost of the truth on ``telemetry`` (the shipped reference scenario
    and run configuration ``config``)."""
    from models.probe_cone import preset_path
    from recon.flight import flight_problem

    prob = flight_problem(telemetry, preset_path("reference"), config=config).problem
    r = prob.least_squares_residuals(np.array([truth[n] for n in prob.names]))
    return float(0.5 * r @ r)


def load_study(path) -> dict:
    """A study output of this script; one line on stderr and exit status 1 if it cannot be
    read as one."""
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise SystemExit(f"error: {path}: {exc}") from None
    missing = [k for k in ("flights", "settings", "seed")
               if not isinstance(doc, dict) or k not in doc]
    if missing:
        raise SystemExit(f"error: {path}: not a calibration study output (no "
                         f"{', '.join(missing)})")
    return doc


def _write(records, free, args, t_start):
    """Coverage tables of the flights so far, written to ``args.output`` after every flight (an
    interrupted study leaves its partial table); returns the document written."""
    from recon.io import versions, write_json

    n = len(records)
    se68 = float(np.sqrt(0.68 * 0.32 / n))
    se95 = float(np.sqrt(0.95 * 0.05 / n))

    from scipy.stats import binom

    n_cells = 2 * len(free)

    def cover(key68, key95, pick=lambda r: True):
        tab = {}
        for name in free:
            rows = [r["parameters"][name] for r in records if pick(r)]
            rows = [p for p in rows if key68 in p]
            if not rows:
                continue
            k68 = int(sum(p[key68] for p in rows))
            k95 = int(sum(p[key95] for p in rows))
            m = len(rows)
            c68, c95 = k68 / m, k95 / m
            # one-sided binomial probability of so few hits if the intervals were calibrated
            p68 = float(binom.cdf(k68, m, 0.68))
            p95 = float(binom.cdf(k95, m, 0.95))
            tab[name] = {"coverage68": c68, "coverage95": c95, "se68": se68, "se95": se95,
                         "p_low68": p68, "p_low95": p95,
                         "low": bool(c68 < 0.68 - 2 * se68 or c95 < 0.95 - 2 * se95),
                         # the table tests 2 x (parameters) cells: Bonferroni at 5 % overall
                         "low_familywise": bool(min(p68, p95) < 0.05 / n_cells)}
        return tab

    table = cover("in68", "in95")
    tables = {"reported": table, "laplace": cover("laplace_in68", "laplace_in95")}
    # hybrid rule evaluated on the same runs: importance intervals when their effective
    # sample size is at least 100, Laplace otherwise
    for r in records:
        use_is = r.get("ess") is None or r["ess"] >= 100
        for p in r["parameters"].values():
            if "laplace_in68" in p:
                p["hybrid_in68"] = p["in68"] if use_is else p["laplace_in68"]
                p["hybrid_in95"] = p["in95"] if use_is else p["laplace_in95"]
    tables["hybrid_ess100"] = cover("hybrid_in68", "hybrid_in95")
    # the joint check of the initial conditions (flights_docking.joint_check): the truth inside
    # the posterior's Gaussian 68 % / 95 % region; a flight whose fit is not ok is a miss (its
    # record may predate joint_check's status rule: a search failure once counted as inside)
    for r in records:
        if "joint" in r and r.get("status", "ok") != "ok":
            r["joint"] = {**r["joint"], "d2": None, "p": 0.0, "in68": False, "in95": False,
                          "reason": f"status {r['status']}"}
    jr = [r["joint"] for r in records if "joint" in r]
    joint = ({"n": len(jr), "coverage68": float(np.mean([j["in68"] for j in jr])),
              "coverage95": float(np.mean([j["in95"] for j in jr])),
              "d2_median": float(np.median([np.inf if j["d2"] is None else j["d2"]
                                            for j in jr])), "dof": jr[0]["dof"]}
             if jr else None)
    pooled = {f"coverage{lv}": float(np.mean([r["parameters"][nm][f"in{lv}"] for r in records
                                              for nm in free])) for lv in (68, 95)}
    lrs = [r["lr"] for r in records if "lr" in r]
    if lrs:
        from scipy.stats import chi2

        k = len(free)
        pooled["likelihood_ratio"] = {
            "n": len(lrs), "dof": k, "mean": float(np.mean(lrs)),
            "inside95": float(np.mean([v <= chi2.ppf(0.95, k) for v in lrs])),
            "search_failures": int(sum(v < 0 for v in lrs))}
    pooled["median_abs_z"] = float(np.median([abs(r["parameters"][nm]["z"]) for r in records
                                              for nm in free
                                              if r["parameters"][nm]["z"] is not None]))
    out = {"benchmark": "calibration_docking", "n_flights": n, "table": table,
           "tables": tables, "pooled": pooled, "joint": joint,
           "flights": records,
           "settings": {"config": str(args.config), "duration": args.duration,
                        "records": args.records,
                        "mcmc": args.mcmc, "mcmc_below_ess": args.mcmc_below_ess,
                        "steps": args.steps, "only": args.only,
                        "selection": (f"prior draws that capture within {HORIZON:g} s of "
                                      "the start plane" if args.records == "realistic" else
                                      "prior draws that capture >= 1 s before the window end"),
                        **({"recorder": {"approach": APPROACH, "record_start": RECORD_START,
                                         "after_capture": AFTER_CAPTURE}}
                           if args.records == "realistic" else {})},
           "seed": args.seed, "versions": versions(),
           "wall_s_total": round(time.time() - t_start, 1),
           "date": time.strftime("%Y-%m-%d")}
    write_json(out, args.output)
    return out


def _print(out):
    """The summaries and tables of :func:`_write`'s document on stdout."""
    n = out["n_flights"]
    lr = out["pooled"].get("likelihood_ratio")
    if lr:
        print(f"\nlikelihood ratio of the truth, 2 (cost(truth) - best cost), over {lr['n']} "
              f"flights: mean {lr['mean']:.1f} (chi2_{lr['dof']} mean {lr['dof']}); negative "
              f"(search missed a better basin): {lr['search_failures']}")
    joint = out["joint"]
    if joint:
        print(f"\njoint region of the initial conditions (chi2_{joint['dof']}): "
              f"68 % {joint['coverage68']:.2f}, 95 % {joint['coverage95']:.2f} over "
              f"{joint['n']} flights")
    print(f"\ncoverage over {n} flights (sampling error at nominal: "
          f"68 %: {np.sqrt(0.68 * 0.32 / n):.3f}, 95 %: {np.sqrt(0.95 * 0.05 / n):.3f})")
    for label, tab in out["tables"].items():
        print(f"\n{label}\n{'parameter':14s} {'ci68':>6s} {'ci95':>6s} {'p_low68':>8s} "
              f"{'p_low95':>8s}")
        for name, row in tab.items():
            print(f"{name:14s} {row['coverage68']:6.2f} {row['coverage95']:6.2f} "
                  f"{row['p_low68']:8.3f} {row['p_low95']:8.3f}"
                  f"{'  LOW' if row['low'] else ''}"
                  f"{' (also family-wise)' if row['low_familywise'] else ''}")


def main(argv=None) -> int:
    from models.probe_cone import IC_NAMES, preset_path
    from recon.config import RunConfig
    from recon.flight import reconstruct_flight
    from recon.io import load_toml
    from telemetry_samples import SAMPLES_DIR

    from recon.validation import check, joint_check

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flights", type=int, default=24)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--mcmc", action="store_true", help="emcee intervals (default: importance)")
    ap.add_argument("--mcmc-below-ess", type=float, default=None, metavar="N",
                    help="reconstruct again with emcee the flights whose importance sampling "
                         "has an effective sample size below N (the engine's hybrid rule)")
    ap.add_argument("--steps", type=int, default=None, help="emcee step limit")
    ap.add_argument("--merge", nargs="+", metavar="JSON",
                    help="no new flights: join the per-flight records of these study outputs "
                         "(runs of one study split with --only) into one table at --output")
    ap.add_argument("--records", choices=["realistic", "cut"], default="realistic",
                    help="realistic-span flight records (default) or 5-s records cut to the "
                         "model")
    ap.add_argument("--config", default=None,
                    help="run configuration (default: flights/realistic/run.toml, or "
                         "flights/run.toml with --records cut)")
    ap.add_argument("--output", default=str(HERE / "results" / "calibration_docking.json"))
    ap.add_argument("--keep", help="keep the flights and result directories here")
    ap.add_argument("--only", type=int, nargs="+",
                    help="reconstruct only these flight indices (the draws before them are "
                         "still made, so flight i is the same flight as in the full study)")
    args = ap.parse_args(argv)

    if args.merge:
        parts = [load_study(f) for f in args.merge]
        records = sorted((r for d in parts for r in d["flights"]), key=lambda r: r["flight"])
        names = [r["flight"] for r in records]
        if len(set(names)) != len(names):
            raise SystemExit("--merge: a flight appears in two of the files")
        args.duration = parts[0]["settings"]["duration"]
        for k in ("config", "mcmc", "mcmc_below_ess", "steps", "records"):
            setattr(args, k, parts[0]["settings"].get(k, getattr(args, k)))
        args.seed = parts[0].get("seed", args.seed)
        args.only = names
        free = list(records[0]["parameters"])
        out = _write(records, free, args,
                     time.time() - sum(d.get("wall_s_total", 0) for d in parts))
        print(f"{len(records)} flights merged into {args.output}")
        _print(out)
        return 0

    if args.config is None:
        flights = SAMPLES_DIR / "flights"
        args.config = str(flights / "realistic" / "run.toml" if args.records == "realistic"
                          else flights / "run.toml")
    run = load_toml(args.config)
    cfg = RunConfig.from_dict(run)
    # the length of the cut records (their run configuration fits the whole record)
    duration = 5.0 if cfg.duration == "record" else float(cfg.duration)
    args.duration = duration
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="dockrecon-cal-"))
    work.mkdir(parents=True, exist_ok=True)
    free = [n for n in cfg.space.free_names]
    records = []
    t_start = time.time()
    try:
        for i, name, full, tries, t_cap in study_flights(cfg.space, args.seed, duration,
                                                         args.flights, args.records):
            if args.only is not None and i not in args.only:
                continue
            telemetry, truth = record_study_flight(work, name, args.seed, i, full, duration,
                                                   args.records)
            t0 = time.time()

            # --mcmc-below-ess: the engine's hybrid rule (recon.reconstruct,
            # ReconstructSettings.mcmc_below_ess), importance sampling then emcee in one run
            hybrid = args.mcmc_below_ess is not None and not args.mcmc
            reconstruct_flight(telemetry, preset_path("reference"), work / name,
                               config=args.config, seed=i, mcmc=args.mcmc or hybrid,
                               mcmc_below_ess=args.mcmc_below_ess if hybrid else None,
                               steps=args.steps)
            res = json.loads((work / name / "result.json").read_text())
            ess = (res["diagnostics"].get("importance") or {}).get("ess")
            rec = {"flight": name, "draws_tried": tries, "capture_t": t_cap,
                   "wall_s": round(time.time() - t0, 1),
                   "best_cost": res["diagnostics"]["optimizer"]["best_cost"],
                   "method": res["diagnostics"]["method"], "ess": ess}
            lap = res["diagnostics"].get("laplace", {})
            if res["diagnostics"]["method"] == "mcmc":
                m = res["diagnostics"]["mcmc"]
                rec["mcmc"] = {"steps": m.get("steps"), "status": m.get("status"),
                               "start": m.get("start"),
                               "rhat_max": max((m.get("rhat") or {"": float("nan")}).values()),
                               "ess_min": min((m.get("ess") or {"": float("nan")}).values())}
            rec["status"] = res.get("status")
            rec["parameters"] = check(res, {n: truth[n] for n in free})
            # the likelihood-ratio statistic of the truth: 2 (cost(truth) - best cost) is
            # about chi-square with len(free) degrees of freedom when the search found the
            # optimum and the likelihood is right (negative: the search missed a better basin)
            rec["cost_truth"] = truth_cost(telemetry, args.config, truth)
            rec["lr"] = 2.0 * (rec["cost_truth"] - rec["best_cost"])
            rec["gof_limit"] = res["diagnostics"].get("search", {}).get("gof_limit")
            rec["joint"] = joint_check(res, {n: truth[n] for n in free},
                                       [n for n in IC_NAMES if n in free])
            for n in free:
                v = truth[n]
                if n in lap:
                    q = lap[n]
                    rec["parameters"][n]["laplace_in68"] = bool(q["ci68"][0] <= v <= q["ci68"][1])
                    rec["parameters"][n]["laplace_in95"] = bool(q["ci95"][0] <= v <= q["ci95"][1])
            records.append(rec)
            _write(records, free, args, t_start)
            miss = [n for n in free if not rec["parameters"][n]["in95"]]
            print(f"{name}: v={full['rel_vel_x']:.3f} m/s capture {t_cap:.2f} s, "
                  f"cost {rec['best_cost']:.1f}, {rec['wall_s']:.0f} s, outside ci95: "
                  f"{', '.join(miss) or '-'}", flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    _print(_write(records, free, args, t_start))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
