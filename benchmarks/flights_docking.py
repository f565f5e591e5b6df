"""Issue 6 acceptance on the shipped flights: reconstruct ``nominal``, ``misaligned`` and
``slow`` (``telemetry_samples/flights/``) and check every initial condition's truth against
its 95 % interval and the width of the closing velocity's 68 % interval (< 0.01 m/s).

Usage::

    .venv/bin/python benchmarks/flights_docking.py [--mcmc | --mcmc-below-ess 100]
        [--steps N] [--seed 1] [--flights nominal,misaligned,slow] [--output DIR]

Default intervals: the ``--no-mcmc`` engine of the run configuration (optimizer + importance
sampling); ``--mcmc`` runs emcee (``[sampler]`` of the run configuration, ``--steps`` to cap
it); ``--mcmc-below-ess N`` runs emcee only where the importance sampling's effective sample
size is below N (the calibrated hybrid engine). Writes
``benchmarks/results/flights_docking[_mcmc|_hybrid].json`` (per flight: the truth, MAP,
median, intervals, inside or not, z = (truth - median) / half the 68 % width, the joint
check of :func:`joint_check`, wall time; the machine, commit and command:
``benchmarks/_record.py``) and prints a table. The result directories go to
``--output`` (default: a temporary directory).
"""
from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path


HERE = Path(__file__).resolve().parent


def main(argv=None) -> int:
    from models.probe_cone import IC_NAMES, preset_path
    from recon.flight import reconstruct_flight
    from recon.validation import check, joint_check
    from identification.provenance import versions
    from recon.io import write_json
    from telemetry_samples import SAMPLES_DIR

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flights", default="nominal,misaligned,slow")
    ap.add_argument("--mcmc", action="store_true")
    ap.add_argument("--mcmc-below-ess", type=float, default=None, metavar="N")
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--output", default=None, help="keep the result directories here")
    args = ap.parse_args(argv)
    flights_dir = SAMPLES_DIR / "flights"
    work = Path(args.output) if args.output else Path(tempfile.mkdtemp(prefix="dockrecon-fl-"))
    rows = {}
    try:
        for name in args.flights.split(","):
            cfg = flights_dir / ("slow.run.toml" if name == "slow" else "run.toml")
            truth = json.loads((flights_dir / f"{name}.truth.json").read_text())["parameters"]
            t0 = time.time()
            reconstruct_flight(flights_dir / f"{name}.parquet", preset_path("reference"),
                               work / name, config=cfg, seed=args.seed,
                               mcmc=args.mcmc or args.mcmc_below_ess is not None,
                               mcmc_below_ess=None if args.mcmc else args.mcmc_below_ess,
                               steps=args.steps)
            res = json.loads((work / name / "result.json").read_text())
            par = check(res, truth)
            ics = [n for n in IC_NAMES if n in par]
            w68 = par["rel_vel_x"]["ci68"][1] - par["rel_vel_x"]["ci68"][0]
            joint = joint_check(res, truth, ics)
            rows[name] = {"wall_s": round(time.time() - t0, 1),
                          "method": res["diagnostics"]["method"],
                          "best_cost": res["diagnostics"]["optimizer"]["best_cost"],
                          "mcmc": res["diagnostics"].get("mcmc", {}).get("status"),
                          "mcmc_start": res["diagnostics"].get("mcmc", {}).get("start"),
                          "importance": res["diagnostics"].get("importance"),
                          "closing_velocity_w68": w68,
                          "all_ic_in95": all(par[n]["in95"] for n in ics),
                          "joint": joint,
                          "parameters": par}
            miss = [n for n in ics if not par[n]["in95"]]
            print(f"{name}: {rows[name]['method']}, cost {rows[name]['best_cost']:.1f}, "
                  f"{rows[name]['wall_s']:.0f} s; closing-velocity 68 % width "
                  f"{w68 * 1e3:.3f} mm/s; ICs outside ci95: {', '.join(miss) or 'none'}; "
                  f"joint d2 {joint['d2']:.1f} (95 % region: chi2_{joint['dof']} <= "
                  f"{joint['limit95']:.1f}, p {joint['p']:.2f})",
                  flush=True)
            for n in ics:
                p = par[n]
                print(f"    {n:12s} truth {p['truth']:+.5f} median {p['median']:+.5f} "
                      f"ci95 [{p['ci95'][0]:+.5f}, {p['ci95'][1]:+.5f}] z {p['z']:+.2f}")
    finally:
        if not args.output:
            shutil.rmtree(work, ignore_errors=True)
    from _record import provenance

    out = {"benchmark": "flights_docking", "mcmc": args.mcmc,
           "mcmc_below_ess": args.mcmc_below_ess, "steps": args.steps,
           "seed": args.seed, "flights": rows, "versions": versions(),
           "date": time.strftime("%Y-%m-%d"), "provenance": provenance(__file__, argv)}
    tag = ("_mcmc" if args.mcmc else "_hybrid" if args.mcmc_below_ess is not None else "")
    write_json(out, HERE / "results" / f"flights_docking{tag}.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
