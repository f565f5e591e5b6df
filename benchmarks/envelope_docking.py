"""Robustness study of the probe-cone forward model over the first-contact envelope.

Draws ``--cases`` initial conditions uniformly from the envelope of issue 4 (seeded): start
plane ``rel_pos_x = -1.05 m``, closing velocity 0.1-0.35 m/s, lateral offset <= 0.3 m (uniform
radius and azimuth), angles <= 7 deg and rates <= 1 deg/s per axis, lateral velocity
<= 0.1 m/s; runs each for ``--duration`` s with the reference preset and counts the runs the
kernel stopped with a non-OK status (penetration exceeded, geometry range, hysteresis logic),
the captures, and the worst end-of-run ledger residual relative to the initial kinetic energy.
Prints one JSON object on its last stdout line.

Usage::

    .venv/bin/python benchmarks/envelope_docking.py [--cases 64] [--seed 20261121]
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

from models.probe_cone import InitialConditions, load_preset, simulate
from models.probe_cone.simulate import SimulationError
from identification.provenance import versions


def draw(rng: np.random.Generator) -> np.ndarray:
    """One envelope initial condition in IC_NAMES order (SI)."""
    v = rng.uniform(0.1, 0.35)
    r, ph = rng.uniform(0.0, 0.3), rng.uniform(0.0, 2 * np.pi)
    ang = rng.uniform(-1, 1, 3) * np.deg2rad(7.0)
    vl, ph2 = rng.uniform(0.0, 0.1), rng.uniform(0.0, 2 * np.pi)
    w = rng.uniform(-1, 1, 3) * np.deg2rad(1.0)
    return np.array([-1.05, r * np.cos(ph), r * np.sin(ph), v, vl * np.cos(ph2),
                     vl * np.sin(ph2), *ang, *w])


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=64)
    ap.add_argument("--seed", type=int, default=20261121)
    ap.add_argument("--duration", type=float, default=6.0)
    a = ap.parse_args(argv)
    sc = load_preset("reference")
    rng = np.random.default_rng(a.seed)
    t0 = time.perf_counter()
    failures, captured, worst = [], 0, 0.0
    for k in range(a.cases):
        ic = draw(rng)
        try:
            tr = simulate(sc, InitialConditions.from_array(ic), duration=a.duration)
        except SimulationError as e:
            failures.append({"case": k, "t": e.t, "status": e.status, "message": str(e),
                             "initial": ic.round(4).tolist()})
            continue
        captured += tr.captured
        worst = max(worst, abs(tr.ledger_residual()[-1]) / tr["energy_kinetic"][0])
    res = {"cases": a.cases, "seed": a.seed, "duration_s": a.duration,
           "non_ok": len(failures), "captured": captured,
           "worst_end_ledger_rel": worst, "failures": failures,
           "wall_s": time.perf_counter() - t0, "versions": versions()}
    print(json.dumps(res))
    return res


if __name__ == "__main__":
    main()
