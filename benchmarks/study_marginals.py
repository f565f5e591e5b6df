"""Is a calibration study's low coverage cell a shape of the posterior or a count in one band?

Usage::

    .venv/bin/python benchmarks/study_marginals.py PART.json:STUDY_DIR [PART.json:STUDY_DIR ...]
        [--parameter NAME]

Each argument pairs a study's (or a study part's) ``calibration.json`` with the directory
that holds its flights' draws (``STUDY_DIR/<flight>/posterior.nc``: equal-weight draws, SI).
A committed part in ``benchmarks/results`` is paired with the directory it was run in.

Prints, per free parameter, over every flight of the parts:

* the hits at 68 % and 95 % (as the study counts them: the equal-tailed intervals of the
  draws);
* the Kolmogorov-Smirnov p-value of the truth's rank in its marginal (the fraction of draws
  below the truth, the probability integral transform) against the uniform: the test of the
  whole marginal, where the study's cells test two bands of it;
* the standard deviation of the truth's standardised error ``z`` over the flights (1 if
  the marginals are the right width; the header gives its 95 % range for the number of
  flights), and how many flights have ``|z|`` < 0.5, 0.5-1, 1-2 and > 2 (0.38, 0.30, 0.27,
  0.05 of them if ``z`` is standard normal);
* the shape of the marginals: the 68 % and 95 % half-widths in units of the draws' own
  standard deviation (1 and 1.96 for a Gaussian) and the excess kurtosis, averaged over the
  flights.

A marginal more peaked than a Gaussian has a 68 % half-width under 1 sd and a positive
kurtosis, and misses at 68 % while it covers at 95 %; a marginal of the right shape and
width whose truth ranks uniformly but falls too often just outside 1 sd is a count in one
band, which a study of 24 cells shows now and then (``--parameter`` lists its flights).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def marginal_scores(draws: np.ndarray, truth: float) -> dict:
    """The truth's rank and ``z`` in one marginal and the marginal's shape (module
    docstring). ``draws`` (n,), ``truth`` in the same unit."""
    from scipy.stats import kurtosis

    mu, sd = draws.mean(), draws.std()
    q = np.quantile(draws, [0.025, 0.16, 0.84, 0.975])
    return {"pit": float((draws < truth).mean()), "z": float((truth - mu) / sd),
            "w68": float((q[2] - q[1]) / 2.0 / sd), "w95": float((q[3] - q[0]) / 2.0 / sd),
            "kurtosis": float(kurtosis(draws))}


def main(argv=None) -> int:
    sys.path.insert(0, str(ROOT))
    from scipy.stats import chi2, kstest

    from recon.results import read_posterior

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("parts", nargs="+", metavar="PART.json:STUDY_DIR")
    ap.add_argument("--parameter", help="list this parameter's flights one by one")
    args = ap.parse_args(argv)
    rows: dict[str, list] = {}
    for pair in args.parts:
        doc_path, sep, study = pair.rpartition(":")
        if not sep or not doc_path:
            ap.error(f"{pair}: expected PART.json:STUDY_DIR")
        if not Path(doc_path).is_file():
            ap.error(f"{doc_path}: no such file")
        doc = json.loads(Path(doc_path).read_text())
        for f in doc["flights"]:
            if "parameters" not in f:
                continue
            names = list(f["parameters"])
            post = Path(study) / f["flight"] / "posterior.nc"
            if not post.is_file():
                ap.error(f"{post}: no draws for flight {f['flight']} of {doc_path}")
            draws, _ = read_posterior(post, names)
            for k, name in enumerate(names):
                p = f["parameters"][name]
                s = marginal_scores(draws[:, k], p["truth"])
                rows.setdefault(name, []).append(
                    {"flight": f["flight"], "in68": p["in68"], "in95": p["in95"], **s})
    n = max(len(r) for r in rows.values())
    lo, hi = np.sqrt(chi2.ppf([0.025, 0.975], n - 1) / (n - 1))
    print(f"{n} flights; sd z of standard normal errors: {lo:.2f}-{hi:.2f} (95 %); "
          f"z bands |z| < 0.5 / 0.5-1 / 1-2 / > 2 (expected {0.383 * n:.1f} / "
          f"{0.300 * n:.1f} / {0.272 * n:.1f} / {0.046 * n:.1f})")
    print(f"{'parameter':14s} {'68 %':>5s} {'95 %':>5s} {'rank KS p':>9s} {'sd z':>5s} "
          f"{'z bands':>13s} {'w68/sd':>6s} {'w95/sd':>6s} {'kurt':>5s}")
    for name, r in rows.items():
        z = np.array([x["z"] for x in r])
        bands = np.histogram(np.abs(z), [0, 0.5, 1, 2, np.inf])[0]
        print(f"{name:14s} {sum(x['in68'] for x in r):3d}/{len(r):<2d}"
              f"{sum(x['in95'] for x in r):3d}/{len(r):<2d}"
              f"{kstest([x['pit'] for x in r], 'uniform').pvalue:9.2f} "
              f"{z.std(ddof=1):5.2f} {'/'.join(str(b) for b in bands):>13s} "
              f"{np.mean([x['w68'] for x in r]):6.2f} {np.mean([x['w95'] for x in r]):6.2f} "
              f"{np.mean([x['kurtosis'] for x in r]):+5.2f}")
    if args.parameter:
        if args.parameter not in rows:
            ap.error(f"--parameter {args.parameter}: not a free parameter of the study "
                     f"({', '.join(rows)})")
        print(f"\n{args.parameter}:")
        for x in rows[args.parameter]:
            print(f"  {x['flight']}: rank {x['pit']:.3f}, z {x['z']:+.2f}, in 68 % "
                  f"{'yes' if x['in68'] else 'no '}, w68/sd {x['w68']:.2f}, "
                  f"kurtosis {x['kurtosis']:+.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
