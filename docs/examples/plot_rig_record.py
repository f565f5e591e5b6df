"""
Identify a hydraulic actuator from a rig record
===============================================

One actuator of the 6-DOF docking test rig on the bench, driven by a step of the valve
command: ``telemetry_samples/rig/step.parquet`` holds the command ``u`` [V], the spool
position ``x_v``, the chamber pressures ``p_A``, ``p_B`` [Pa] and the piston position
``x_p`` [m]. ``telemetry_samples/rig/actuator.toml`` gives the start values of the actuator
parameters and, in ``[identify]``, which of them are fitted and their boxes
(Strashnov & Mironenko, :doc:`/theory/hydraulic`). This is::

    dockrecon identify rig telemetry_samples/rig/step.parquet \\
        --config telemetry_samples/rig/actuator.toml --output out/rig_step

**Run time**: about 10 s on 2 cores (an output-error least-squares fit that re-simulates
the actuator for each parameter vector), plus kernel compilation on the first run.
"""

# %%
import json
import time
from pathlib import Path

import matplotlib.pyplot as plt

import telemetry_samples
from identification.rig import RECORD_UNITS, IdentifySettings, RigRecord
from models.hydraulic import RigConfig
from identification.rig import identify_rig
from recon.io import load_toml, read_table

rig = Path(telemetry_samples.__file__).parent / "rig"
config = RigConfig.from_dict(load_toml(rig / "actuator.toml"))
kind = IdentifySettings.from_dict(config.identify).kind
frame, file_units = read_table(rig / "step.parquet", RECORD_UNITS, required=("t",))
record = RigRecord.from_frame(frame, kind, source="step.parquet")
print(f"{kind} record: {len(frame)} samples, columns {list(frame.columns)}")

t0 = time.perf_counter()
result = identify_rig(config, record)
print(f"fitted in {time.perf_counter() - t0:.1f} s")

# %%
# Parameters with their 95 % intervals, against the truth the record was generated with
truth = json.loads((rig / "truth.json").read_text())["parameters"]
for name, p in result.parameters.items():
    print(f"{name:24s} {p['map']:12.5g}  [{p['ci95'][0]:.5g}, {p['ci95'][1]:.5g}] "
          f"{p['unit']:15s} truth {truth[name]:.5g}")
print("not separable by this record:", result.identifiability["not_separable"] or "none")

# %%
fig, axes = plt.subplots(3, 1, sharex=True, figsize=(7, 7))
axes[0].plot(frame["t"], frame["u"])
axes[0].set_ylabel("u [V]")
axes[1].plot(frame["t"], frame["p_A"] / 1e5, label="p_A")
axes[1].plot(frame["t"], frame["p_B"] / 1e5, label="p_B")
axes[1].set_ylabel("pressure [bar]")
axes[1].legend()
axes[2].plot(frame["t"], frame["x_p"] * 1e3)
axes[2].set_ylabel("x_p [mm]")
axes[2].set_xlabel("t [s]")
fig.tight_layout()
