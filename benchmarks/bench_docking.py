"""Docking kernel speed against the C toy yardstick (``../shared/calib/toy-ms``), measured in
the same minute: the probe-cone unit's reference 20-s scenario on one core and its batch entry
point on two cores, for the reference preset (``preset``: the head's contact friction implicit,
2 ms steps after capture) and for the explicit friction at 1 ms after capture
(``explicit_1ms``, the settings the implicit law replaced; their accuracy:
``accuracy_docking.py``), interleaved; and the peripheral unit's reference 20-s scenario
(``peripheral``, :mod:`models.peripheral.benchmark`).

Each kernel is measured twice (the probe-cone variants interleaved, the peripheral unit first
and last) and the smaller CPU times kept. The toy runs before and after the kernels; ``toy_ms``
is the smaller of the two (its own best of 7), and ``ratio_to_toy`` of each unit is its 20-s
run's CPU time over it: the figure the
speed targets are stated in, because the shared machines drift by tens of percent. Prints one
JSON object (last line); ``make bench`` records it.
"""
import dataclasses
import json
import subprocess
from pathlib import Path

from models.probe_cone import load_preset
from models.probe_cone.benchmark import benchmark

#: the yardstick, beside the repository (``../shared`` of the checkout)
TOY = Path(__file__).resolve().parents[2] / "shared" / "calib" / "toy-ms"


def toy_ms() -> float | None:
    """The C toy docking kernel's best-of-7 time [ms], None when the yardstick is absent."""
    if not TOY.exists():
        return None
    out = subprocess.run([str(TOY)], capture_output=True, text=True, check=True)
    return float(out.stdout.split()[0])


def explicit_1ms(scenario):
    """``scenario`` with the explicit head friction and 1 ms steps after capture."""
    return dataclasses.replace(scenario, integration=dataclasses.replace(
        scenario.integration, dt_captured=1e-3, implicit_friction="never"))


if __name__ == "__main__":
    from models.peripheral.benchmark import benchmark as peripheral_benchmark
    from models.peripheral.simulate import load_scenario

    toy = [toy_ms()]
    # the peripheral unit first and last, the smaller CPU times kept: the load drifts
    peripheral = peripheral_benchmark(load_scenario("reference"))
    ref = load_preset("reference")
    variants = {"preset": ref, "explicit_1ms": explicit_1ms(ref)}
    figures = {k: benchmark(s) for k, s in variants.items()}
    # a second pass in the other order: on a shared machine the load drifts
    for k in reversed(list(variants)):
        again = benchmark(variants[k])
        for key in ("cpu_s_median", "batch_cpu_s_per_eval", "short_cpu_s_per_eval"):
            figures[k][key] = min(figures[k][key], again[key])
    figures["speedup_20s_cpu"] = round(figures["explicit_1ms"]["cpu_s_median"]
                                       / figures["preset"]["cpu_s_median"], 2)
    figures["speedup_short_cpu"] = round(figures["explicit_1ms"]["short_cpu_s_per_eval"]
                                         / figures["preset"]["short_cpu_s_per_eval"], 2)
    again = peripheral_benchmark(load_scenario("reference"))
    for key in ("cpu_s_median", "batch_cpu_s_per_eval"):
        peripheral[key] = min(peripheral[key], again[key])
    figures["peripheral"] = peripheral
    toy.append(toy_ms())
    if toy[0] is not None:
        figures["toy_ms"] = min(toy)
        figures["toy_ms_runs"] = toy
        for k in ("preset", "explicit_1ms", "peripheral"):
            figures[k]["ratio_to_toy"] = round(figures[k]["cpu_s_median"] * 1e3 / min(toy), 2)
    print(json.dumps(figures))
