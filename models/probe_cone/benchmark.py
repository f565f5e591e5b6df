"""Speed figures of the probe-cone kernel (used by ``dockrecon bench docking`` and
``benchmarks/bench_docking.py``). Timing only; nothing here is asserted in tests."""
from __future__ import annotations

from models.probe_cone._kernels import kernel as kp
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
        figure that a loaded shared machine disturbs least), ``realtime_factor``,
        ``batch_evals_per_s`` (wall clock: on a shared machine it falls with the load),
        ``batch_cpu_s_per_eval`` (process CPU time per evaluation, all threads: ``threads /
        batch_cpu_s_per_eval`` is the rate on idle cores),
        ``batch_size``, ``short_*`` (the same for the ``short_s`` window), ``threads``,
        ``compile_s``, ``steps``, ``small_steps``. Timing core: :mod:`models.kernel_bench`.
    """
    from models.kernel_bench import batch_runs, perturbed, single_runs

    tr, single = single_runs(lambda: simulate(scenario), repeats)
    simulated = float(tr.t[-1])
    channels = ["stroke", "gimbal_pitch", "gimbal_yaw"]
    bm = BatchModel(scenario, channels=channels)
    # the second batch: a reconstruction's simulated span (about 6 s of flight from
    # first-contact conditions), same parameter vectors
    bm6 = BatchModel(scenario, channels=channels, duration=short_s)
    theta = perturbed(bm.base, batch, seed)
    n_thr, (full, short) = batch_runs([bm.evaluate, bm6.evaluate], theta, threads)
    pk = pack(scenario)
    return {
        "simulated_s": simulated,
        "wall_s_median": single["wall_s_median"],
        "cpu_s_median": single["cpu_s_median"],
        "realtime_factor": round(simulated / single["wall_s_median"], 1),
        "batch_evals_per_s": full["evals_per_s"],
        "batch_cpu_s_per_eval": full["cpu_s_per_eval"],
        "batch_size": batch,
        "short_duration_s": short_s,
        "short_evals_per_s": short["evals_per_s"],
        "short_cpu_s_per_eval": short["cpu_s_per_eval"],
        "batch_failed": full["failed"],
        "threads": n_thr,
        "compile_s": single["compile_s"],
        "steps": tr.steps,
        "small_steps": tr.small_steps,
        "dt_contact": float(pk.P[kp.P_H_SMALL]),
        "dt_captured": float(pk.P[kp.P_H_CAPT]),
        "implicit_friction": scenario.integration.implicit_friction,
    }
