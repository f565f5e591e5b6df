"""Speed of the hysteresis kernels: element-steps per second on one core, and compile time.

An element-step is one ``hyst_step`` (state change and the force at the end of the step,
the kernel step function of the issue), called from inside a compiled loop. Four
elements are packed (a lateral two-stage spring pair, an axial spring, a friction brake), and
driven by a history of loading cycles with many reversals (so transitions and slips happen).
Also reported: the RK4 pattern (four pure force evaluations + one update per step), and the
Python-level ``trace`` throughput. Prints one JSON object on its last line.
"""
from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

# A fresh numba cache: compile_s is a cold compile, and the drivers below are never loaded
# stale from a cache written against an older kernel (numba's cache does not track callees).
os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench_hyst_numba_")

import numpy as np  # noqa: E402

T0 = time.perf_counter()
from numba import njit  # noqa: E402

from models._kernels import NJIT  # noqa: E402
from models._kernels import hysteresis as K  # noqa: E402
from models.hysteresis import element_from_dict, pack_elements  # noqa: E402

IMPORT_S = time.perf_counter() - T0
ROOT = Path(__file__).resolve().parents[1]


@njit(**NJIT)
def drive(table, toff, istate, fstate, q, scale):
    """``hyst_step`` (update + force) for every element at every sample; returns (sum of
    forces, status)."""
    acc = 0.0
    n_el = toff.shape[0]
    for k in range(1, q.shape[0]):
        for e in range(n_el):
            x = q[k] * scale[e]
            v = (q[k] - q[k - 1]) * scale[e]
            f, st = K.hyst_step(table, toff[e], istate, e * K.I_SIZE, fstate, e * K.F_SIZE,
                                x, v, 0.0)
            if st != 0:
                return acc, st
            acc += f
    return acc, 0


@njit(**NJIT)
def drive_rk4(table, toff, istate, fstate, q, scale):
    """Four pure force evaluations (the RK4 stages) and one update per element-step."""
    acc = 0.0
    n_el = toff.shape[0]
    for k in range(1, q.shape[0]):
        for e in range(n_el):
            i0 = e * K.I_SIZE
            f0 = e * K.F_SIZE
            xa = q[k - 1] * scale[e]
            xb = q[k] * scale[e]
            xm = 0.5 * (xa + xb)
            acc += K.hyst_force(table, toff[e], istate, i0, fstate, f0, xa)
            acc += 2.0 * K.hyst_force(table, toff[e], istate, i0, fstate, f0, xm)
            acc += 2.0 * K.hyst_force(table, toff[e], istate, i0, fstate, f0, xm)
            acc += K.hyst_force(table, toff[e], istate, i0, fstate, f0, xb)
            st = K.hyst_update(table, toff[e], istate, i0, fstate, f0, xb, xb - xa, 0.0)
            if st != 0:
                return acc, st
    return acc, 0


def elements():
    from recon.io import read_json

    lat = element_from_dict(read_json(ROOT / "telemetry_samples/static/"
                                      "lateral_double_loop.truth.json")["element"])
    brk = element_from_dict(read_json(ROOT / "telemetry_samples/static/"
                                      "axial_brake_two_slips.truth.json")["element"])
    return [lat, lat, lat, brk], np.array([1.0, 0.8, 0.5, 60.0])


def history(n, seed=1):
    """Cycles of random amplitude in [-0.07, 0.07] (m for the springs), ~200 samples each."""
    rng = np.random.default_rng(seed)
    peaks = rng.uniform(-0.07, 0.07, n // 200 + 2)
    q = np.interp(np.arange(n), np.arange(peaks.size) * 200.0, peaks)
    return np.ascontiguousarray(q)


def best_of(fn, repeat=5):
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def median_of(fn, repeat=7):
    """Median wall time and median CPU time of this thread over ``repeat`` runs. On a shared
    machine the wall time includes the time the scheduler gave to other processes; the thread
    CPU time is the one-core throughput itself."""
    wall, cpu = [], []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.thread_time()
        out = fn()
        cpu.append(time.thread_time() - c)
        wall.append(time.perf_counter() - t)
    return float(np.median(wall)), float(np.median(cpu)), out


def main() -> None:
    els, scale = elements()
    packed = pack_elements(els)
    n_el = len(els)
    small = history(1000)
    t = time.perf_counter()
    ist, fst = packed.fresh_state()
    drive(packed.table, packed.toff, ist, fst, small, scale)
    compile_drive = time.perf_counter() - t
    t = time.perf_counter()
    ist, fst = packed.fresh_state()
    drive_rk4(packed.table, packed.toff, ist, fst, small, scale)
    compile_rk4 = time.perf_counter() - t

    q = history(1_000_000)
    steps = (q.size - 1) * n_el

    def run(fn):
        def go():
            i, f = packed.fresh_state()
            return fn(packed.table, packed.toff, i, f, q, scale), i

        return go

    load_before = os.getloadavg()[0]
    t_drive, c_drive, ((_, st), ist) = median_of(run(drive))
    load_after = os.getloadavg()[0]
    assert st == 0
    slips = int(ist[3 * K.I_SIZE + K.I_NSLIP])
    t_rk4, ((_, st), _) = best_of(run(drive_rk4))
    assert st == 0
    qt = history(200_000) * 0.8
    t_trace, _ = best_of(lambda: els[0].trace(qt), repeat=3)
    figures = {
        "element_steps_per_s": round(steps / t_drive),
        "element_steps_per_cpu_s": round(steps / c_drive),
        "repeats_median_of": 7,
        "load_avg_1min": [round(load_before, 2), round(load_after, 2)],
        "rk4_element_steps_per_s": round(steps / t_rk4),
        "trace_samples_per_s": round(qt.size / t_trace),
        "elements": n_el,
        "steps": int(q.size - 1),
        "brake_slips_in_run": slips,
        "compile_s": round(compile_drive, 3),
        "compile_rk4_s": round(compile_rk4, 3),
        "import_s": round(IMPORT_S, 3),
        "note": "element_steps_per_s: median wall time of 7 runs; element_steps_per_cpu_s: "
                "median thread CPU time of the same runs (unaffected by time-slicing with "
                "other processes). compile_s: cold compile of the kernels and the driver "
                "(fresh numba cache); later runs load them from numba's cache",
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
