"""Reconstruction hot path: vectorized log-probability evaluations per second of the nominal
shipped flight (probe-cone batch kernel on all cores + sensor model + residuals), as emcee
calls it (one call per half-ensemble).

Prints one JSON object on its last line: ``compile_s``, ``batch``, ``evals_per_s``,
``s_per_eval``, ``minutes_for_1e5_evals`` (issue 6 target: 1e5 within 15 minutes), and the
same from the CPU time of all threads (``cpu_s_per_eval``, ``idle_evals_per_s``,
``idle_minutes_for_1e5_evals``: what two idle cores give; the wall figures depend on the load).
"""
from __future__ import annotations

import json
import time

import numba
import numpy as np

from recon.flight import flight_problem
from telemetry_samples import SAMPLES_DIR


def _figures(scenario, unit) -> dict:
    prob, cfg, _ = flight_problem(SAMPLES_DIR / "flights" / "nominal.parquet", scenario,
                                  unit=unit, config=SAMPLES_DIR / "flights" / "run.toml")
    rng = np.random.default_rng(0)
    batch = 16  # half of a 32-walker ensemble: what one emcee call evaluates
    x = prob.space.start() + 0.01 * prob.space.prior_scale() * rng.standard_normal(
        (batch, prob.space.ndim))
    t0 = time.perf_counter()
    prob.log_probability(x[:2])
    compile_s = time.perf_counter() - t0
    walls, cpus = [], []
    for _ in range(5):
        t0 = time.perf_counter()
        c0 = time.process_time()
        lp = prob.log_probability(x)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    wall = float(np.median(walls))
    rate = batch / wall
    # CPU time of all threads per evaluation: on a shared machine the wall rate falls with
    # the load, the CPU cost does not (much); threads / cpu per evaluation is the rate the
    # batch reaches on idle cores
    threads = int(numba.get_num_threads())
    cpu_per_eval = float(np.median(cpus)) / batch
    return {"compile_s": round(compile_s, 3), "batch": batch,
            "simulated_s_per_eval": round(float(np.mean(prob.sim_end(prob.space.full(x)))), 3),
            "finite": int(np.isfinite(lp).sum()),
            "wall_s_median": round(wall, 4), "evals_per_s": round(rate, 2),
            "s_per_eval": round(1 / rate, 4),
            "minutes_for_1e5_evals": round(1e5 / rate / 60, 1),
            "threads": threads, "cpu_s_per_eval": round(cpu_per_eval, 5),
            "idle_evals_per_s": round(threads / cpu_per_eval, 1),
            "idle_minutes_for_1e5_evals": round(1e5 * cpu_per_eval / threads / 60, 1)}


def main() -> None:
    """The reference preset (implicit head friction, 2 ms steps after capture), and the same
    with the explicit friction at 1 ms after capture (``explicit_1ms``:
    ``benchmarks/bench_docking.py``)."""
    import dataclasses

    from models.probe_cone import load_preset
    from models.unit import get_unit

    ref = load_preset("reference")
    explicit = dataclasses.replace(ref, integration=dataclasses.replace(
        ref.integration, dt_captured=1e-3, implicit_friction="never"))
    unit = get_unit("probe_cone")
    preset_f = _figures(ref, unit)
    explicit_f = _figures(explicit, unit)
    print(json.dumps({**preset_f, "explicit_1ms": explicit_f,
                      "speedup_cpu": round(explicit_f["cpu_s_per_eval"]
                                           / preset_f["cpu_s_per_eval"], 2)}))


if __name__ == "__main__":
    main()
