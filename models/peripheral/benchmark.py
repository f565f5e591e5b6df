"""Speed figures of the peripheral kernel (used by ``dockrecon bench docking --unit
peripheral`` and ``benchmarks/bench_docking.py``). Timing only; nothing here is asserted in
tests."""
from __future__ import annotations

import time

import numpy as np

from models._kernels import peripheral_run_layout as R
from models.peripheral import simulate as ps

__all__ = ["benchmark"]


def benchmark(scenario: ps.Scenario, *, repeats: int = 5, batch: int = 16, threads: int = 2,
              seed: int = 0) -> dict:
    """Measure the reference run (single core) and the batch entry point in this process.

    Parameters
    ----------
    scenario
        The scenario to run (its own duration, 20 s for the reference).
    repeats
        Timed single runs (after one warm-up); the median is reported.
    batch
        Parameter vectors per batch call (initial conditions perturbed around the
        scenario's by a few mm, mm/s and mrad).
    threads
        numba threads for the batch.
    seed
        Seed of the perturbations.

    Returns
    -------
    dict
        ``simulated_s``, ``wall_s_median``, ``cpu_s_median`` (process CPU time, the figure a
        loaded shared machine disturbs least), ``realtime_factor``, ``batch_evals_per_s``,
        ``batch_cpu_s_per_eval``, ``batch_size``, ``batch_failed``, ``threads``,
        ``compile_s``, ``steps``, ``small_steps``, ``dt_contact``, ``dt_free``,
        ``dt_captured``.
    """
    import numba

    from models.peripheral.unit import PeripheralBatch

    t0 = time.perf_counter()
    tr = ps.simulate(scenario)            # compiles (or loads the cache) and warms up
    compile_s = time.perf_counter() - t0
    walls, cpus = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        c0 = time.process_time()
        tr = ps.simulate(scenario)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    simulated = float(tr.t[-1])
    wall = float(np.median(walls))
    bm = PeripheralBatch(scenario, R.IC_NAMES, ["ring_x", "ring_y", "ring_z"])
    rng = np.random.default_rng(seed)
    base = bm.base
    scale = np.array([0.005, 0.005, 0.005, 0.005, 0.002, 0.002, 0.005, 0.005, 0.005,
                      0.0005, 0.0005, 0.0005])
    theta = base + rng.normal(size=(batch, base.size)) * scale
    n_thr = min(threads, numba.config.NUMBA_NUM_THREADS)
    old = numba.get_num_threads()
    numba.set_num_threads(n_thr)
    try:
        bm.evaluate(theta[:2])            # compile the parallel entry point
        t0 = time.perf_counter()
        c0 = time.process_time()
        _, _, status = bm.evaluate(theta)
        bwall = time.perf_counter() - t0
        bcpu = time.process_time() - c0
    finally:
        numba.set_num_threads(old)
    it = scenario.integration
    return {
        "simulated_s": simulated,
        "wall_s_median": round(wall, 5),
        "cpu_s_median": round(float(np.median(cpus)), 5),
        "realtime_factor": round(simulated / wall, 1),
        "batch_evals_per_s": round(batch / bwall, 2),
        "batch_cpu_s_per_eval": round(bcpu / batch, 5),
        "batch_size": batch,
        "batch_failed": int(np.count_nonzero(status)),
        "threads": n_thr,
        "compile_s": round(compile_s, 3),
        "steps": int(tr.info[R.INFO_STEPS]),
        "small_steps": int(tr.info[R.INFO_SMALL_STEPS]),
        "dt_contact": it.dt_contact,
        "dt_free": it.dt_free,
        "dt_captured": it.dt_captured,
    }
