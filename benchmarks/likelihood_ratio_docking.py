"""Likelihood-ratio statistic of the truth over the flights of a calibration study.

For each flight ``calNN`` of a ``calibration_docking.py`` output (seed and run configuration
taken from it), regenerate its telemetry (the same draws and sensor seeds as the study) and
compute ``lr = 2 (cost(truth) - best cost)``. If the likelihood is right and the search found
the optimum, ``lr`` is about chi-square with as many degrees of freedom as free parameters;
negative means the search missed a basin better than the one it reported. Studies run after
commit 9522fdb record ``lr`` themselves; this recomputes it for older ones.

Usage::

    .venv/bin/python benchmarks/likelihood_ratio_docking.py STUDY.json [--output OUT.json]
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np


def main(argv=None) -> int:
    from scipy.stats import chi2

    from calibration_docking import load_study, record_study_flight, study_flights, truth_cost
    from recon.config import RunConfig
    from recon.io import load_toml, write_json

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("study")
    ap.add_argument("--output")
    args = ap.parse_args(argv)
    study = load_study(args.study)
    best = {r["flight"]: r["best_cost"] for r in study["flights"]}
    config = study["settings"]["config"]
    duration = float(study["settings"]["duration"])
    seed = int(study["seed"])
    space = RunConfig.from_dict(load_toml(config)).space
    k = len(space.free_names)
    out = {}
    with tempfile.TemporaryDirectory(prefix="dockrecon-lr-") as tmp:
        n = max(int(name[3:]) for name in best) + 1
        records = study["settings"].get("records", "cut")
        for i, name, full, _, _ in study_flights(space, seed, duration, n, records):
            if name not in best:
                continue
            path, truth = record_study_flight(Path(tmp), name, seed, i, full, duration, records)
            c = truth_cost(path, config, truth)
            lr = 2.0 * (c - best[name])
            out[name] = {"cost_truth": c, "best_cost": best[name], "lr": lr, "dof": k,
                         "p": float(chi2.sf(lr, k)) if lr >= 0 else None}
            print(f"{name}: cost at truth {c:.1f}, best {best[name]:.1f}, lr {lr:.1f}", flush=True)
    lrs = np.array([v["lr"] for v in out.values()])
    summary = {"n": len(lrs), "dof": k, "mean": float(lrs.mean()),
               "median": float(np.median(lrs)), "negative": int(np.sum(lrs < 0)),
               "above95": int(np.sum(lrs > chi2.ppf(0.95, k)))}
    print(f"\n{summary['n']} flights: mean lr {summary['mean']:.1f} (chi2_{k}: {k}), median "
          f"{summary['median']:.1f}, negative {summary['negative']}, above the 95 % quantile "
          f"{summary['above95']}")
    if args.output:
        write_json({"benchmark": "likelihood_ratio_docking", "study": str(args.study),
                    "summary": summary, "flights": out}, args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
