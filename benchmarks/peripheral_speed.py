"""Speed and step-size figures of the peripheral unit's 20-s reference run (benchmarks/README.md,
"Peripheral unit").

``python benchmarks/peripheral_speed.py prune [--repeats N]``: CPU time of the reference run
with the primitive-pair pruning on and off, interleaved in one process (median and minimum of
``process_time``), steps, contact steps and the energy ledger.

``python benchmarks/peripheral_speed.py captured``: the captured step ``dt_captured`` swept
at the preset's leg preload and at zero preload, each against a 0.125-ms captured step of the
same preload: largest differences of the ring position, ring angles and leg lengths over the
samples, capture time, energy-ledger residual over the run (of the initial kinetic energy)
and steps.
"""
from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np

from models._kernels import peripheral_run_layout as R
from models.peripheral.simulate import load_scenario, simulate


def _variant(base, *, preload=None, **integration):
    s = dataclasses.replace(base, integration=dataclasses.replace(base.integration,
                                                                  **integration))
    if preload is not None:
        s = dataclasses.replace(s, mechanism=dataclasses.replace(s.mechanism,
                                                                 spring_preload=preload))
    return s


def _ledger_pct(tr) -> float:
    c = tr.channels
    e = (c["energy_kinetic"] + c["energy_stored"] + c["energy_dissipated_brake"]
         + c["energy_dissipated_dampers"] + c["energy_dissipated_contact"]
         - c["thrust_work"] - c["latch_work"])
    return 100.0 * float(np.max(np.abs(e - e[0]))) / float(c["energy_kinetic"][0])


def prune(repeats: int) -> None:
    base = load_scenario("reference")
    runs = {"prune on": _variant(base, prune=True), "prune off": _variant(base, prune=False)}
    cpu = {k: [] for k in runs}
    last = {}
    for s in runs.values():
        simulate(s)                      # compile or load the cache
    for _ in range(repeats):
        for k, s in runs.items():
            c0 = time.process_time()
            last[k] = simulate(s)
            cpu[k].append(time.process_time() - c0)
    for k, tr in last.items():
        print(f"{k:10s} CPU median {np.median(cpu[k]):.3f} s (min {min(cpu[k]):.3f} s), "
              f"steps {int(tr.info[R.INFO_STEPS])}, contact steps "
              f"{int(tr.info[R.INFO_SMALL_STEPS])}, ledger {_ledger_pct(tr):.3f} %")


def captured() -> None:
    base = load_scenario("reference")
    for preload in (base.mechanism.spring_preload, 0.0):
        ref = simulate(_variant(base, preload=preload, dt_captured=1.25e-4))
        for h in (5e-4, 1e-3, 2e-3):
            s = _variant(base, preload=preload, dt_captured=h)
            c0 = time.process_time()
            tr = simulate(s)
            cpu = time.process_time() - c0
            pos = max(np.max(np.abs(tr[n] - ref[n])) for n in ("ring_x", "ring_y", "ring_z"))
            ang = max(np.max(np.abs(tr[n] - ref[n]))
                      for n in ("ring_roll", "ring_pitch", "ring_yaw"))
            leg = max(np.max(np.abs(tr[f"leg_{i}"] - ref[f"leg_{i}"])) for i in range(1, 7))
            dtc = abs(tr.events["capture"] - ref.events["capture"])
            print(f"preload {preload:5.1f} N, dt_captured {h * 1e3:.3g} ms: ring position "
                  f"{pos * 1e3:.3f} mm, ring angles {ang * 1e3:.3f} mrad, legs "
                  f"{leg * 1e3:.3f} mm, capture {dtc * 1e3:.2f} ms, ledger "
                  f"{_ledger_pct(tr):.3f} %, steps {int(tr.info[R.INFO_STEPS])}, "
                  f"CPU {cpu:.3f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("prune", "captured"))
    ap.add_argument("--repeats", type=int, default=11)
    a = ap.parse_args()
    if a.what == "prune":
        prune(a.repeats)
    else:
        captured()


if __name__ == "__main__":
    main()
