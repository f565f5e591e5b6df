"""The truth of each flight of a calibration study against its posterior's highest-density
95 % region (recon.validation.hpd_check), after the study.

Usage::

    .venv/bin/python benchmarks/study_hpd.py STUDY_DIR [--output FILE.json]

``dockrecon study calibration`` scores the initial conditions jointly with the posterior's
Gaussian region (recon.validation.joint_check); that region needs the draws' covariance,
which an importance posterior of ESS ~100 in 12 dimensions estimates poorly, and it is the
wrong shape for a posterior with several roll modes. This script reads each flight's
posterior draws (``DIR/<flight>/posterior.nc``, SI), rebuilds its problem from the study's
campaign manifest (telemetry, scenario, run configuration) and computes the posterior mass
above the truth's density over all free parameters. Over a calibrated study the truth is
inside the 95 % region on 95 % of the flights (binomial: ``p_low``, the one-sided
probability of so few), and ``mass_above`` is uniform on [0, 1].

Prints one line per flight and the summary; ``--output`` writes them as JSON (with the machine,
commit and command: ``benchmarks/_record.py``). Studies run
since 2026-11-28 score this themselves (``calibration.json``: ``hpd`` per flight and in
summary, :func:`recon.calibration.score_flight`); the script re-scores a study directory of any
age.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def main(argv=None) -> int:
    sys.path.insert(0, str(ROOT))
    from scipy.stats import binom, kstest

    from recon.flight import flight_problem
    from identification.provenance import versions
    from recon.io import write_json
    from recon.results import read_posterior
    from recon.validation import hpd_check

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("study", type=Path)
    ap.add_argument("--output", type=Path, default=None)
    args = ap.parse_args(argv)
    manifest = args.study / "campaign.json"
    if not manifest.is_file():
        ap.error(f"{manifest}: no such file (STUDY_DIR is a `dockrecon study calibration` "
                 "output directory)")
    camp = json.loads(manifest.read_text())
    rows = {}
    for name, entry in sorted(camp["flights"].items()):
        spec = entry["spec"]
        out = args.study / name
        if not (out / "posterior.nc").exists() or not (out / "result.json").exists():
            continue
        doc = json.loads((out / "result.json").read_text())
        flight = flight_problem(spec["telemetry"], spec["scenario"], config=spec["config"])
        problem = flight.problem
        x, lp = read_posterior(out / "posterior.nc", problem.names)
        truth = json.loads(Path(spec["truth"]).read_text())["parameters"]
        diag = doc.get("diagnostics") or {}
        ess = (diag.get("importance") or {}).get("ess") if diag.get("method") == "importance" \
            else None
        h = hpd_check(problem, x, truth, log_prob=lp, ess=ess)
        rows[name] = {"method": diag.get("method"), "ess": ess,
                      "mass_above": h["mass_above"], "se": h["se"], "in95": h["in95"],
                      "in68": h["in68"]}
        print(f"{name}  {diag.get('method'):10s} ESS {ess if ess is None else round(ess, 1)!s:>7}"
              f"  mass above {h['mass_above']:.3f} +- {h['se']:.3f}"
              f"  {'in' if h['in95'] else 'OUT'}", flush=True)
    n = len(rows)
    if n == 0:
        print("no scored flight (no posterior.nc)")
        return 1
    k95 = sum(r["in95"] for r in rows.values())
    k68 = sum(r["in68"] for r in rows.values())
    m = np.array([r["mass_above"] for r in rows.values()])
    summary = {"n_flights": n, "in95": k95 / n, "in68": k68 / n,
               "p_low95": float(binom.cdf(k95, n, 0.95)),
               "p_low68": float(binom.cdf(k68, n, 0.68)),
               "mass_above_mean": float(m.mean()),
               "ks_uniform_p": float(kstest(m, "uniform").pvalue)}
    print(json.dumps(summary, indent=1))
    if args.output:
        from _record import provenance

        write_json({"study": str(args.study), "flights": rows, "summary": summary,
                    "versions": versions(), "provenance": provenance(__file__, argv)},
                   args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
