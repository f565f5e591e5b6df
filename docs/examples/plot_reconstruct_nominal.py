"""
Reconstruct the shipped nominal flight
======================================

``telemetry_samples/flights/nominal.parquet`` is a synthetic flight record of the reference
probe-cone unit (stroke, gimbal angles, contact, capture and latch flags, the body rates of
both vehicles), cut to the model (it starts at the start plane and lasts 5 s); its truth is
in ``nominal.truth.json``. ``telemetry_samples/flights/run.toml`` is the run configuration:
the fitted parameters and their priors, the noise of each channel, the optimizer. The
reconstruction draws its first starts from the learned proposal shipped for this unit and
prior (else from a cross-entropy screen of the prior box), polishes the best of them by least
squares, and samples the posterior by importance sampling from a Student-t proposal refitted
in rounds. The result directory holds ``result.json`` (read below),
``fit.parquet``, ``trajectory.parquet`` and the report.

It runs from Python as from the shell (``dockrecon reconstruct``): three lines below, with the
shipped run configuration and no emcee (``mcmc="never"``, what ``make demo`` runs; the
calibrated engine, ``mcmc="auto"``, adds emcee when the importance weights call for it).
``reconstruct`` returns a :class:`recon.Result`, whose printout is the table ``dockrecon
show`` prints: the status and each free parameter's median and 95 % interval in the units of
the run configuration. Without an ``output`` directory its files live in a temporary
directory as long as the result does (``res.save(directory)`` keeps them);
``recon.load_result(directory)`` reads a result back, the CLI's included.

**Run time**: about half a minute on 2 cores (the search starts from the learned proposal
shipped for this unit and prior, ``recon/proposals/``), longer on a fresh clone, where the
numba kernels are compiled first.
"""

# %%
from pathlib import Path

import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import telemetry_samples
from models.probe_cone import preset_path
from reports.figures_recon import plot_channel_fit

flights = Path(telemetry_samples.__file__).parent / "flights"
preset = preset_path("reference")

# %%
# The reconstruction: three lines
# -------------------------------
from recon import reconstruct

res = reconstruct(flights / "nominal.parquet", scenario=preset,
                  config=flights / "run.toml", mcmc="never", seed=1)
print(res)

# %%
# Reading the result
# ------------------
# ``result.json`` is complete when it exists (written last). ``status`` is ``ok`` when the
# best fit is plausible: its cost is below the goodness-of-fit limit of the search.
# Every parameter has the project's schema: MAP, median, 68 and 95 % intervals, unit and
# prior; angles and rates are in SI (rad, rad/s) whatever unit the run configuration used.
# The closing velocity is the best-determined number (its 95 % interval is a fraction of a
# mm/s wide), and its truth (0.22 m/s) sits near an end of that interval on this record: the
# contact, latch and brake switching put kinks in the predictions, which the intervals of
# such a narrow posterior feel (``docs/design/emcee_moves.rst``).
doc, out = res.document, res.directory
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
