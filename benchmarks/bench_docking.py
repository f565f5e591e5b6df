"""Probe-cone docking kernel speed: the reference 20-s scenario on one core, the batch entry
point on two cores, for the reference preset (``after``: 2 ms steps after capture with the
implicit head friction) and for the same preset with the explicit friction and 1 ms steps
after capture (``before``: the preset until the implicit friction, issue 21), measured in
the same process, interleaved. Prints one JSON object (last line); ``make bench`` records
it."""
import dataclasses
import json

from models.probe_cone import load_preset
from models.probe_cone.benchmark import benchmark


def explicit_1ms(scenario):
    """``scenario`` with the explicit friction and ``dt_contact`` after capture."""
    it = scenario.integration
    return dataclasses.replace(scenario, integration=dataclasses.replace(
        it, dt_captured=it.dt_contact, implicit_friction="never"))


if __name__ == "__main__":
    ref = load_preset("reference")
    variants = {"after": ref, "before": explicit_1ms(ref)}
    figures = {k: benchmark(s) for k, s in variants.items()}
    # a second pass in the other order: on a shared machine the load drifts
    for k in reversed(list(variants)):
        again = benchmark(variants[k])
        for key in ("cpu_s_median", "batch_cpu_s_per_eval", "short_cpu_s_per_eval"):
            figures[k][key] = min(figures[k][key], again[key])
    figures["speedup_20s_cpu"] = round(figures["before"]["cpu_s_median"]
                                       / figures["after"]["cpu_s_median"], 2)
    figures["speedup_short_cpu"] = round(figures["before"]["short_cpu_s_per_eval"]
                                         / figures["after"]["short_cpu_s_per_eval"], 2)
    print(json.dumps(figures))
