"""The timing core of the units' speed figures (``dockrecon bench docking``): median wall and
CPU time of single forward runs, and the rate of a unit's batch entry point over perturbed
initial conditions. Timing only; nothing here is asserted in tests (shared machines are
noisy): the figures are recorded in ``benchmarks/``.

Each unit's ``benchmark`` module (:mod:`models.probe_cone.benchmark`,
:mod:`models.peripheral.benchmark`) passes its own runner and batch model and adds its own
figures (steps, step sizes) to the dict.
"""
from __future__ import annotations

import time
from typing import Callable, Sequence

import numpy as np

__all__ = ["IC_SCALE", "single_runs", "perturbed", "batch_runs"]

#: standard deviations of the batch's initial-condition perturbations, in the 12 initial
#: conditions' order (``rel_pos_*`` [m], ``rel_vel_*`` [m/s], ``rel_roll/pitch/yaw`` [rad],
#: ``rel_rate_*`` [rad/s]): a few mm, mm/s and mrad, the spread of a reconstruction's screen
IC_SCALE = np.array([0.005, 0.005, 0.005, 0.005, 0.002, 0.002, 0.005, 0.005, 0.005,
                     0.0005, 0.0005, 0.0005])
IC_SCALE.setflags(write=False)


def single_runs(run: Callable[[], object], repeats: int) -> tuple[object, dict]:
    """Call ``run()`` once to compile (or load numba's cache) and warm up, then ``repeats``
    times timed.

    Returns
    -------
    result, figures
        The last result and ``{"wall_s_median", "cpu_s_median", "compile_s"}`` [s]; the CPU
        figure is the process CPU time, the one a loaded shared machine disturbs least.
    """
    t0 = time.perf_counter()
    result = run()
    compile_s = time.perf_counter() - t0
    walls, cpus = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        c0 = time.process_time()
        result = run()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return result, {"wall_s_median": round(float(np.median(walls)), 5),
                    "cpu_s_median": round(float(np.median(cpus)), 5),
                    "compile_s": round(compile_s, 3)}


def perturbed(base: np.ndarray, batch: int, seed: int) -> np.ndarray:
    """``batch`` parameter rows: ``base`` (the 12 initial conditions first) plus Gaussian
    perturbations of :data:`IC_SCALE` on the initial conditions (seeded)."""
    base = np.asarray(base, dtype=float)
    scale = np.zeros(base.size)
    scale[:IC_SCALE.size] = IC_SCALE
    return base + np.random.default_rng(seed).normal(size=(batch, base.size)) * scale


def batch_runs(evaluators: Sequence[Callable[[np.ndarray], tuple]], theta: np.ndarray,
               threads: int) -> tuple[int, list[dict]]:
    """Time each batch evaluator on the rows ``theta`` with ``threads`` numba threads (capped
    by ``NUMBA_NUM_THREADS``), after a two-row call that compiles its parallel entry point.

    Each evaluator returns ``(..., status)`` with a per-row status array (0 = ok).

    Returns
    -------
    threads, figures
        The thread count used and, per evaluator, ``{"evals_per_s"`` (wall clock: falls with
        the machine's load), ``"cpu_s_per_eval"`` (process CPU time per row, all threads:
        ``threads / cpu_s_per_eval`` is the rate on idle cores), ``"failed"}``.
    """
    import numba

    n_thr = min(threads, numba.config.NUMBA_NUM_THREADS)
    old = numba.get_num_threads()
    numba.set_num_threads(n_thr)
    out = []
    try:
        for evaluate in evaluators:
            evaluate(theta[:2])
            t0 = time.perf_counter()
            c0 = time.process_time()
            status = evaluate(theta)[-1]
            wall = time.perf_counter() - t0
            cpu = time.process_time() - c0
            out.append({"evals_per_s": round(len(theta) / wall, 2),
                        "cpu_s_per_eval": round(cpu / len(theta), 5),
                        "failed": int(np.count_nonzero(status))})
    finally:
        numba.set_num_threads(old)
    return n_thr, out
