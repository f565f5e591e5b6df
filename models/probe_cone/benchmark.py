"""Speed figures of the probe-cone kernel (used by ``dockrecon bench docking`` and
``benchmarks/bench_docking.py``). Timing only; nothing here is asserted in tests."""
from __future__ import annotations

import time

import numpy as np

from models._kernels import probe_cone as kp
from models.probe_cone.simulate import BatchModel, pack, simulate

__all__ = ["benchmark"]


def benchmark(scenario, *, repeats: int = 5, batch: int = 16, threads: int = 2,
              seed: int = 0, short_s: float = 6.0) -> dict:
    """Measure the reference run and the batch entry point in this process.

    Parameters
    ----------
    scenario
        The scenario to run (its own duration, 20 s for the reference).
    repeats
        Timed single runs (after one warm-up); the median is reported.
    batch
        Parameter vectors per batch call (initial conditions perturbed around the scenario's).
    threads
        numba threads for the batch.
    seed
        Seed of the perturbations.
    short_s
        Duration [s] of the second batch (the reconstruction's window).

    Returns
    -------
    dict
        ``simulated_s``, ``wall_s_median``, ``cpu_s_median`` (process CPU time: the
        figure that a loaded shared machine disturbs least), ``realtime_factor``, ``batch_evals_per_s`` (wall clock: on a shared machine it
        falls with the load), ``batch_cpu_s_per_eval`` (process CPU time per evaluation, all
        threads: ``threads / batch_cpu_s_per_eval`` is the rate on idle cores),
        ``batch_size``, ``short_*`` (the same for the ``short_s`` window), ``threads``, ``compile_s``, ``steps``, ``small_steps``.
    """
    import numba

    t0 = time.perf_counter()
    tr = simulate(scenario)              # compiles (or loads the cache) and warms up
    compile_s = time.perf_counter() - t0
    walls = []
    cpus = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        c0 = time.process_time()
        tr = simulate(scenario)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    simulated = float(tr.t[-1])
    wall = float(np.median(walls))
    bm = BatchModel(scenario, channels=["stroke", "gimbal_pitch", "gimbal_yaw"])
    rng = np.random.default_rng(seed)
    base = bm.base
    scale = np.array([0.005, 0.005, 0.005, 0.005, 0.002, 0.002, 0.005, 0.005, 0.005,
                      0.0005, 0.0005, 0.0005])
    theta = base + rng.normal(size=(batch, base.size)) * scale
    old = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        bm.evaluate(theta[:2])           # compile the parallel entry point
        t0 = time.perf_counter()
        c0 = time.process_time()
        _, _, status = bm.evaluate(theta)
        bwall = time.perf_counter() - t0
        bcpu = time.process_time() - c0
        # a reconstruction's simulated span (about 6 s of flight from first-contact
        # conditions), same parameter vectors
        bm6 = BatchModel(scenario, channels=["stroke", "gimbal_pitch", "gimbal_yaw"],
                         duration=short_s)
        c0 = time.process_time()
        t0 = time.perf_counter()
        bm6.evaluate(theta)
        swall = time.perf_counter() - t0
        scpu = time.process_time() - c0
    finally:
        numba.set_num_threads(old)
    pk = pack(scenario)
    return {
        "simulated_s": simulated,
        "wall_s_median": round(wall, 5),
        "cpu_s_median": round(float(np.median(cpus)), 5),
        "realtime_factor": round(simulated / wall, 1),
        "batch_evals_per_s": round(batch / bwall, 2),
        "batch_cpu_s_per_eval": round(bcpu / batch, 5),
        "batch_size": batch,
        "short_duration_s": short_s,
        "short_evals_per_s": round(batch / swall, 2),
        "short_cpu_s_per_eval": round(scpu / batch, 5),
        "batch_failed": int(np.count_nonzero(status)),
        "threads": min(threads, numba.config.NUMBA_NUM_THREADS),
        "compile_s": round(compile_s, 3),
        "steps": tr.steps,
        "small_steps": tr.small_steps,
        "dt_contact": float(pk.P[kp.P_H_SMALL]),
        "dt_captured": float(pk.P[kp.P_H_CAPT]),
        "implicit_friction": scenario.integration.implicit_friction,
    }
