"""Where one flight's truth lies in its posterior, for a flight of a calibration study that
misses several intervals at once: one displacement along a correlated direction, or a
record in the tail of the likelihood?

Usage::

    .venv/bin/python benchmarks/study_flight_look.py STUDY_DIR FLIGHT [FLIGHT ...]
        [--calibration FILE.json]

Reads the flight's posterior draws (``STUDY_DIR/<flight>/posterior.nc``: equal-weight draws,
SI) and its scores (``STUDY_DIR/calibration.json``, or ``--calibration``: a committed part
in ``benchmarks/results`` whose directory is gone from ``calibration.json`` but whose draws
are still in ``STUDY_DIR``). Prints, per flight:

* the HPD mass above the truth and the truth's likelihood-ratio statistic (from the study);
* ``d2``: the truth's squared distance from the draws' mean in the draws' covariance, over
  all free parameters (chi-square with as many degrees of freedom for a Gaussian
  posterior), and its upper tail probability;
* per parameter: the standardised error ``z`` and, for an interval that misses, by what
  fraction of the interval's half-width;
* the three directions of the draws' correlation matrix (its eigenvectors) that carry most
  of ``d2``, each with the share it carries and its four largest loadings.

A flight whose misses are one offset along a direction the posterior correlates (cal16 in
``docs/design/calibration_studies.rst``) has an ordinary ``d2`` carried by one direction; a flight
whose truth is in the likelihood's tail (cal05, cal08) has a large truth's statistic and ``d2``
alike, whatever the sampler.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def look(draws: np.ndarray, truth: np.ndarray) -> dict:
    """``d2`` and its split over the correlation matrix's eigenvectors (module docstring).
    ``draws`` (n, k), ``truth`` (k,), any consistent units."""
    mu, cov = draws.mean(axis=0), np.cov(draws.T)
    sd = np.sqrt(np.diag(cov))
    z = (truth - mu) / sd
    corr = cov / np.outer(sd, sd)
    w, v = np.linalg.eigh(corr)
    along = v.T @ z
    share = along ** 2 / w          # sums to d2 = z' corr^-1 z
    return {"z": z, "d2": float(share.sum()), "eigenvalues": w, "vectors": v, "share": share}


def main(argv=None) -> int:
    sys.path.insert(0, str(ROOT))
    from scipy.stats import chi2

    from recon.results import read_posterior

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("study")
    ap.add_argument("flights", nargs="+")
    ap.add_argument("--calibration", help="calibration.json with the flights' scores")
    args = ap.parse_args(argv)
    study = Path(args.study)
    doc = json.loads(Path(args.calibration or study / "calibration.json").read_text())
    scored = {f["flight"]: f for f in doc["flights"]}
    unknown = [n for n in args.flights if n not in scored]
    if unknown:
        ap.error(f"{', '.join(unknown)}: not scored in "
                 f"{args.calibration or study / 'calibration.json'}")
    for name in args.flights:
        f = scored[name]
        names = list(f["parameters"])
        draws, _ = read_posterior(study / name / "posterior.nc", names)
        truth = np.array([f["parameters"][n]["truth"] for n in names])
        r = look(draws, truth)
        hpd = (f.get("hpd") or {}).get("mass_above")
        print(f"{name}: ESS {f['ess']:.0f}, HPD mass above the truth "
              f"{'-' if hpd is None else f'{hpd:.3f}'}, truth's statistic {f['lr']:.1f} "
              f"(chi2_{len(names)}), d2 {r['d2']:.1f} (p {chi2.sf(r['d2'], len(names)):.3f})")
        for i, n in enumerate(names):
            p = f["parameters"][n]
            lo, hi = p["ci95"]
            miss = max(lo - p["truth"], p["truth"] - hi, 0.0) / ((hi - lo) / 2)
            print(f"  {n:13s} z {r['z'][i]:+.2f}  in 95 % {'yes' if p['in95'] else 'NO ':3s} "
                  f"in 68 % {'yes' if p['in68'] else 'NO ':3s}"
                  + (f"  misses by {miss:.2f} of the half-width" if miss > 0 else ""))
        for j in np.argsort(r["share"])[::-1][:3]:
            top = np.argsort(-np.abs(r["vectors"][:, j]))[:4]
            print(f"  direction (eigenvalue {r['eigenvalues'][j]:.3f}) carries "
                  f"{r['share'][j]:.1f} of d2: "
                  + ", ".join(f"{names[i]} {r['vectors'][i, j]:+.2f}" for i in top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
