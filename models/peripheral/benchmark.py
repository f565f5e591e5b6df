"""Speed figures of the peripheral kernel (used by ``dockrecon bench docking --unit
peripheral`` and ``benchmarks/bench_docking.py``). Timing only; nothing here is asserted in
tests."""
from __future__ import annotations

import math

from models.peripheral._kernels import run_layout as R
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
        ``dt_captured``, ``dt_settled``, ``settle_time``, ``implicit_contact``,
        ``free_until_touch``, ``t_touch`` (None: no free step retaken). Timing core:
        :mod:`models.kernel_bench`.
    """
    from models.kernel_bench import batch_runs, perturbed, single_runs

    tr, single = single_runs(lambda: ps.simulate(scenario), repeats)
    simulated = float(tr.t[-1])
    bm = ps.PeripheralBatch(scenario, R.IC_NAMES, ["ring_x", "ring_y", "ring_z"])
    theta = perturbed(bm.base, batch, seed)
    n_thr, (full,) = batch_runs([bm.evaluate], theta, threads)
    it = scenario.integration
    t_touch = float(tr.info[R.INFO_T_TOUCH])
    return {
        "simulated_s": simulated,
        "wall_s_median": single["wall_s_median"],
        "cpu_s_median": single["cpu_s_median"],
        "realtime_factor": round(simulated / single["wall_s_median"], 1),
        "batch_evals_per_s": full["evals_per_s"],
        "batch_cpu_s_per_eval": full["cpu_s_per_eval"],
        "batch_size": batch,
        "batch_failed": full["failed"],
        "threads": n_thr,
        "compile_s": single["compile_s"],
        "steps": int(tr.info[R.INFO_STEPS]),
        "small_steps": int(tr.info[R.INFO_SMALL_STEPS]),
        "dt_contact": it.dt_contact,
        "dt_free": it.dt_free,
        "dt_captured": it.dt_captured,
        "dt_settled": it.step_settled,
        "settle_time": it.settle_time,
        "implicit_contact": it.implicit_contact,
        "free_until_touch": it.free_until_touch,
        "t_touch": None if math.isnan(t_touch) else t_touch,
    }
