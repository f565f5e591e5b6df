"""
A small campaign: three flights on a two-worker Dask cluster
=============================================================

A campaign reconstructs many flights into one directory, each exactly as
``dockrecon reconstruct`` would (same function, same seed, same files and report), and
gathers one catalog over them. The flights are Dask tasks: here an embedded
``LocalCluster`` of two single-threaded worker processes (the command's ``--workers 2``);
``--scheduler tcp://host:port`` sends the same manifest to an existing cluster (README,
"Campaigns").

The manifest below lists the three shipped 5-s probe-cone flights (``nominal``,
``misaligned``, ``slow``) with their truths, as ``telemetry_samples/flights/campaign.toml``
does (that manifest adds the three realistic-span records). So that the page builds in a
couple of minutes, every flight runs with a much smaller budget than the shipped run
configurations: a screen of 128 points, 2 polished starts of at most 40 evaluations, 300
importance draws, 10 posterior draws for the loads, no emcee. That budget is for showing
the campaign machinery, not for results: its intervals are rough (small importance
effective sample sizes) and a flight may come back ``implausible``, which the catalog and the
report then say. The command line equivalent of this page is::

    dockrecon campaign telemetry_samples/flights/campaign.toml -o out/campaign --workers 2

**Run time**: about 3.5 minutes on 2 cores (205 s when this page was first built: the
flights took 78, 124 and 178 s, two at a time; each worker loads the numba kernels from the
on-disk cache, or compiles them on a fresh clone, first).
"""

# %%
import json
import tempfile
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import tomli_w

import telemetry_samples
from models.probe_cone import preset_path
from recon.app.campaign import load_manifest, reconstruct_one, run_campaign
from recon.io import load_toml
from reports.build import rebuild_report
from reports.figures_campaign import plot_forest

flights = Path(telemetry_samples.__file__).parent / "flights"
work = Path(tempfile.mkdtemp())

# the shipped run configurations with the small budget (every other key as shipped)
budget = dict(screen=128, keep=2, pre_keep=1, max_nfev=40, importance=300, draws=10)
for name in ("run.toml", "slow.run.toml"):
    run = load_toml(flights / name)
    run["optimizer"].update(budget)
    (work / name).write_text(tomli_w.dumps(run))

manifest = work / "campaign.toml"
manifest.write_text(f"""
[defaults]
scenario = "{preset_path('reference')}"
config = "run.toml"
seed = 1
[defaults.options]
mcmc = false

[[flight]]
name = "nominal"
telemetry = "{flights / 'nominal.parquet'}"
truth = "{flights / 'nominal.truth.json'}"

[[flight]]
name = "misaligned"
telemetry = "{flights / 'misaligned.parquet'}"
truth = "{flights / 'misaligned.truth.json'}"

[[flight]]
name = "slow"
telemetry = "{flights / 'slow.parquet'}"
truth = "{flights / 'slow.truth.json'}"
config = "slow.run.toml"
""")
specs = load_manifest(manifest)

out = work / "campaign"
t0 = time.perf_counter()
doc = run_campaign(specs, out, reconstruct_one, workers=2,
                   progress=lambda c: print(f"  {c['done']}/{c['total']} done, "
                                            f"{c['running']} running, {c['failed']} failed"))
print(f"campaign of {len(specs)} flights in {time.perf_counter() - t0:.0f} s")
for path in rebuild_report(out):
    print("report:", path.name)

# %%
# The campaign directory
# ----------------------
# ``campaign.json`` holds every flight's specification and state (``done``, ``error`` with
# the reason of a refused input, ``lost`` when the workers running it died too often), the
# executor settings and the versions; each flight's directory is what ``reconstruct``
# writes, with a stamp of the specification it was made from, so that ``--resume`` keeps
# the flights that are complete and redoes the rest.
for name, f in doc["flights"].items():
    print(f"{name:11s} state {f['state']:5s} status {f.get('status')!s:12s} "
          f"{f.get('wall_s', float('nan')):6.1f} s")
print(sorted(p.name for p in out.iterdir()))

# %%
# The catalog
# -----------
# ``catalog.parquet`` has one row per flight and parameter: truth (when the manifest gives
# one), MAP, median, 68 and 95 % bounds in SI, status, the interval method and a summary of
# the diagnostics, wall time, versions. It is the table to compare flights with pandas.
cat = pd.read_parquet(out / "catalog.parquet")
print(cat.columns.tolist())
fitted = cat[cat["parameter"].notna()]
table = fitted.pivot(index="parameter", columns="flight", values="median")
print(table.to_string(float_format=lambda v: f"{v:.4g}"))
inside = ((fitted["truth"] >= fitted["ci95_lo"]) & (fitted["truth"] <= fitted["ci95_hi"]))
known = fitted["truth"].notna()
print(f"truth inside its 95 % interval: {int(inside[known].sum())} of {int(known.sum())}"
      " (rough intervals: the small budget)")

# %%
# The parameters across flights, as the campaign report draws them: each flight's median
# (dot), 68 % (thick) and 95 % (thin) interval, and the truth (blue cross).
names = list(dict.fromkeys(fitted["parameter"]))[:6]
order = [s.name for s in specs]
fig, axes = plt.subplots(2, 3, figsize=(9, 4), constrained_layout=True)
for k, (ax, name) in enumerate(zip(axes.ravel(), names)):
    sub = fitted[fitted["parameter"] == name].set_index("flight").reindex(order)
    plot_forest(order, sub["median"].to_numpy(float),
                sub[["ci68_lo", "ci68_hi"]].to_numpy(float),
                sub[["ci95_lo", "ci95_hi"]].to_numpy(float), sub["truth"].to_numpy(float),
                title=name, unit=str(sub["unit"].iloc[0]), ax=ax, show_labels=k % 3 == 0)
for ax in axes.ravel()[len(names):]:
    ax.set_visible(False)
plt.show()

# %%
# The flights' own results are beside the catalog, each complete (``result.json`` is
# written last):
print(json.loads((out / "nominal" / "result.json").read_text())["status"])
