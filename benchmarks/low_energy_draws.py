"""Noise draws of the low-energy peripheral flight at its fixed truth: is the likelihood
biased on this record? (docs/design/shipped_records.rst.)

    .venv/bin/python benchmarks/low_energy_draws.py 0,2,3 [--lr] [--out DIR]

For each draw ``d`` the record is made as ``generate.py`` makes the shipped one
(:func:`generate_flight` with ``generate()``'s seed rule, 2026 + 2 + 1000 d; the shipped
record is draw ``FLIGHTS["low_energy"]["draw"]``) and, with the
shipped run.toml, prints ``2 cost`` at the truth against the residual count, per channel
(with the right noise model each is about its count). With ``--lr`` it also polishes from the
truth (``multistart(first_guess=truth, max_nfev=100, diff_step=1e-3)``) and prints the
truth's likelihood-ratio statistic against that polish, ``2 (cost(truth) - cost(polish))``, a
lower bound of the statistic against the global optimum (chi2_12 if the likelihood is right
and the cost smooth; a bias would push every draw's up), with the drop per channel.
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time

import numpy as np

from identification.engines import multistart
from recon.flight import flight_problem
from telemetry_samples import SAMPLES_DIR
from telemetry_samples.flights.peripheral import generate as g

FLIGHTS = SAMPLES_DIR / "flights" / "peripheral"
SCENARIO = "models/peripheral/presets/reference.toml"
SEED = 2026   # generate()'s default, the shipped records' seed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("draws", help="comma-separated draw numbers")
    ap.add_argument("--lr", action="store_true")
    ap.add_argument("--out", default=None, help="directory for the records (default: temporary)")
    a = ap.parse_args()
    k = list(g.FLIGHTS).index("low_energy")      # generate(): seed + k + 1000 draw
    out = a.out or tempfile.mkdtemp(prefix="low_energy_draws_")
    for d in (int(s) for s in a.draws.split(",")):
        path = g.generate_flight("low_energy", f"{out}/d{d}", SEED + k + 1000 * d)
        truth = json.loads(path.with_name("low_energy.truth.json").read_text())["parameters"]
        prob = flight_problem(str(path), SCENARIO, config=FLIGHTS / "run.toml").problem
        names = list(prob.names)
        xt = np.array([truth[n] for n in names])
        r = prob.least_squares_residuals(xt)
        slices = prob.bound.channel_slices()
        line = (f"draw {d}: 2 cost(truth) {float(r @ r):.1f} for {r.size}; "
                + ", ".join(f"{c} {float(r[s] @ r[s]):.1f}/{s.stop - s.start}"
                            for c, s in slices.items()))
        if a.lr:
            t0 = time.time()
            best = min(multistart(prob, 0, first_guess=xt, max_nfev=100, diff_step=1e-3),
                       key=lambda s: s.cost)
            rb = prob.least_squares_residuals(best.x)
            line += (f"\n   LR from a polish at the truth {float(r @ r) - 2 * best.cost:.2f} "
                     f"({time.time() - t0:.0f} s); drop per channel: "
                     + ", ".join(f"{c} {float(r[s] @ r[s] - rb[s] @ rb[s]):.1f}"
                                 for c, s in slices.items()))
        print(line, flush=True)


if __name__ == "__main__":
    main()
