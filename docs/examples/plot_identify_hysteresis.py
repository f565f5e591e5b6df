"""
Identify a static hysteresis loop
=================================

A lateral absorber (two-stage spring mechanism with backlash) was loaded and unloaded
quasi-statically in both directions; the record ``telemetry_samples/static/
lateral_double_loop.csv`` holds the deflection ``q[mm]`` and the force ``force[N]`` in the
order they were taken. We fit the branch tables of a constant-parameter hysteresis element
(Yaskevich, :doc:`/theory/hysteresis`) from the start tables
``lateral_double_loop.start.toml`` (the truth perturbed by 5-12 %), as::

    dockrecon identify hysteresis telemetry_samples/static/lateral_double_loop.csv \\
        --element telemetry_samples/static/lateral_double_loop.start.toml \\
        --output out/hysteresis_lateral.json --plot out/hysteresis_lateral.png

and compare the fitted breakpoints with the truth the sample was generated from.

**Run time**: about half a minute on 2 cores (four local fits of the state machine driven
through the whole record).
"""

# %%
import json
import time
from pathlib import Path

import matplotlib.pyplot as plt

import telemetry_samples
from models.hysteresis import element_from_dict
from identification.hysteresis_fit import identify_hysteresis
from recon.io import load_toml, read_table
from reports.figures_hysteresis import hysteresis_fit_figure

static = Path(telemetry_samples.__file__).parent / "static"
start = element_from_dict(load_toml(static / "lateral_double_loop.start.toml"))
q_unit, f_unit, _ = start.units            # SI units of the element: m, N
frame, file_units = read_table(static / "lateral_double_loop.csv",
                               {"q": q_unit, "force": f_unit}, required=("q", "force"))
print(f"{len(frame)} samples; file units {file_units}, converted to {q_unit}, {f_unit}")

t0 = time.perf_counter()
result = identify_hysteresis(frame["q"].to_numpy(), frame["force"].to_numpy(), start,
                             n_starts=4, seed=0)
print(f"fitted in {time.perf_counter() - t0:.1f} s; residual RMS "
      f"{result.residual_rms:.3g} {result.residual_rms_unit}")

# %%
# Fitted parameters against the truth
# -----------------------------------
# Each parameter carries the project's schema (MAP, median, 68 and 95 % intervals, unit).
truth = json.loads((static / "lateral_double_loop.truth.json").read_text())["parameters"]
for name in ("pos_q0", "pos_q1", "pos_qF2", "pos_QF2", "pos_qN", "pos_QN", "pos_k3",
             "neg_q0", "neg_qN", "neg_QN"):
    p = result.parameters[name]
    print(f"{name:8s} {p['map']:11.5g}  95 % [{p['ci95'][0]:.5g}, {p['ci95'][1]:.5g}] "
          f"{p['unit']:4s} truth {truth[name]:.5g}")

# %%
fitted = result.fitted
fig = hysteresis_fit_figure(fitted["q"], fitted["force"], fitted["model"],
                            element_from_dict(result.element), rms=result.residual_rms,
                            title="lateral_double_loop")
plt.show()
