"""
Reconstruct the shipped nominal flight
======================================

``telemetry_samples/flights/nominal.parquet`` is a synthetic flight record of the reference
probe-cone unit (stroke, gimbal angles, contact, capture and latch flags, the body rates of
both vehicles), cut to the model (it starts at the start plane and lasts 5 s); its truth is
in ``nominal.truth.json``. ``telemetry_samples/flights/run.toml`` is the run configuration:
the fitted parameters and their priors, the noise of each channel, the optimizer. The
reconstruction is an analytic first guess, a cross-entropy screen of the prior box, a
least-squares polish of the best screened points, and importance sampling of the posterior
from a Laplace-t proposal. The result directory holds ``result.json`` (read below),
``fit.parquet``, ``trajectory.parquet`` and the report.

This page runs the shipped run configuration with a smaller budget, so that it runs while
the documentation is built: half the screen (256 points instead of 512), 4 polished starts
instead of 8 and 60 evaluations instead of 100 for the last one, 500 importance draws
instead of 2000, 20 posterior draws for the loads instead of 40, and no emcee. With this
budget the search still reaches the truth's basin (cost 339, limit 431, below) and the
estimates match the shipped budget's to a fraction of their 95 % intervals, but the
importance sampling has a smaller effective sample size, so the intervals are rougher.

**Run time**: 70-80 s on 2 cores (measured while other jobs used them), about 110 s on a
fresh clone, where the numba kernels are compiled first. The shipped budget without emcee,
which is what ``make demo`` runs::

    dockrecon reconstruct telemetry_samples/flights/nominal.parquet \\
        --scenario models/probe_cone/presets/reference.toml \\
        --config telemetry_samples/flights/run.toml --output out/nominal --mcmc never

takes about 2 minutes; the calibrated engine (the same command without ``--mcmc never``: emcee
runs because the importance sampling's effective sample size, 23 of 2000 draws, is below the
configuration's ``mcmc_below_ess = 100``) takes 10-15 minutes on 2 cores
(``docs/design/emcee_moves.rst``, emcee on the shipped flights). Its intervals are the calibrated
ones; the intervals below are not.
"""

# %%
import json
import tempfile
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import telemetry_samples
from models.probe_cone import preset_path
from recon.flight import reconstruct_flight
from recon.io import load_toml
from reports.figures_recon import plot_channel_fit

flights = Path(telemetry_samples.__file__).parent / "flights"
run = load_toml(flights / "run.toml")
# a smaller budget than the shipped one (see above); every other key as shipped
run["optimizer"].update(screen=256, keep=4, pre_keep=1, max_nfev=60, importance=500, draws=20)

out = Path(tempfile.mkdtemp()) / "nominal"
t0 = time.perf_counter()
result = reconstruct_flight(flights / "nominal.parquet", str(preset_path("reference")), out,
                            config=run, seed=1, mcmc=False)
print(f"reconstructed in {time.perf_counter() - t0:.0f} s: status {result.status}")

# %%
# Reading the result
# ------------------
# ``result.json`` is complete when it exists (written last). ``status`` is ``ok`` when the
# best fit is plausible: its cost is below the goodness-of-fit limit of the search.
# Every parameter has the project's schema: MAP, median, 68 and 95 % intervals, unit and
# prior; angles and rates are in SI (rad, rad/s) whatever unit the run configuration used.
# The closing velocity's truth (0.22 m/s) lies at or just outside its 95 % interval: so it
# does with the shipped budget and with emcee (``docs/design/emcee_moves.rst``), a property of the
# posterior (the contact, latch and brake switching put kinks in the predictions), not of
# the small budget.
doc = json.loads((out / "result.json").read_text())
search = doc["diagnostics"]["search"]
print("status:", doc["status"], "| method:", doc["diagnostics"]["method"],
      f"| best cost {search['round_best_cost'][-1]:.1f}, limit {search['gof_limit']:.1f}",
      f"| importance ESS {doc['diagnostics']['importance']['ess']:.0f}")
truth = json.loads((flights / "nominal.truth.json").read_text())["parameters"]
for name, p in doc["parameters"].items():
    tv = truth.get(name)
    print(f"{name:13s} {p['map']:11.5g} 95 % [{p['ci95'][0]:11.5g}, {p['ci95'][1]:11.5g}] "
          f"{p['unit']:6s} truth {tv if tv is not None else '-'}")

# %%
# Loads and energy at the reconstructed initial conditions, with their intervals
for section in ("loads", "energy"):
    print(section)
    for name, e in doc[section].items():
        if isinstance(e, dict) and "median" in e:
            print(f"  {name:28s} {e['median']:10.4g} 95 % [{e['ci95'][0]:.4g}, "
                  f"{e['ci95'][1]:.4g}] {e['unit']}")

# %%
# The fit
# -------
# ``fit.parquet`` holds the whole record and, inside the fitted span (``fitted`` = 1), the
# best fit of each channel and its 95 % predictive band (``_fit``, ``_lo``, ``_hi``). Channels
# on different time bases share the table, so each channel is NaN at the others' stamps and
# where it has no sample (the stroke and gimbal channels of this sample drop out for 0.4 s
# from 2.25 s).
fit = pd.read_parquet(out / "fit.parquet")
events = [(e["name"], e["t"]) for e in doc["events"]
          if e["name"] in ("first_contact", "capture") and e.get("t") is not None]


def channel(name: str):
    """Time [s], telemetry, best fit and 95 % band of one channel, where it has samples."""
    rows = fit[(fit["fitted"] == 1) & np.isfinite(fit[name]) & np.isfinite(fit[f"{name}_fit"])]
    return (rows["t"], rows[name], rows["t"], rows[f"{name}_fit"],
            (rows[f"{name}_lo"], rows[f"{name}_hi"]))


fig, axes = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
plot_channel_fit(*channel("stroke"), label="stroke", unit="mm", scale=1e3, events=events,
                 ax=axes[0])
plot_channel_fit(*channel("active_rate_y"), label="active-vehicle rate y", unit="deg/s",
                 scale=180 / np.pi, events=events, ax=axes[1])
axes[0].legend(loc="upper left")
axes[0].set_xlabel("")
plt.show()
