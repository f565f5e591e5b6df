"""Regenerate the small stored results the report tests render (run from the repository root).

* ``reconstruction/result.json``, ``fit.parquet``: ``dockrecon reconstruct
  telemetry_samples/flights/nominal.parquet --scenario models/probe_cone/presets/reference.toml
  --config telemetry_samples/flights/run.toml --no-mcmc --seed 1 -o tests/reports/data/reconstruction``
  (then the report files removed);
* ``reconstruction/chains.h5``: written by this script: two short emcee ensembles (24 walkers,
  30 steps, seed 7) sampling the Laplace (Gaussian) approximation of that result, in the layout
  ``recon.sample`` writes (groups ``ensemble_k`` of an emcee HDF backend), so the chain and
  corner figures have real chains to draw;
* ``hysteresis.json``: ``dockrecon identify hysteresis telemetry_samples/static/lateral_double_loop.csv
  --element telemetry_samples/static/lateral_double_loop.start.toml --output tests/reports/data/hysteresis.json``;
* ``rig/``: ``dockrecon identify rig telemetry_samples/rig/step.parquet --config
  telemetry_samples/rig/actuator.toml --output tests/reports/data/rig``.
"""
from __future__ import annotations

import json
from pathlib import Path

import emcee
import numpy as np

HERE = Path(__file__).resolve().parent


def write_chains() -> None:
    data = json.loads((HERE / "reconstruction" / "result.json").read_text())
    free = [n for n, e in data["parameters"].items() if e["prior"].get("kind") != "fixed"]
    mean = np.array([data["parameters"][n]["map"] for n in free])
    sd = np.array([max(data["parameters"][n]["stderr"], 1e-9) for n in free])
    path = HERE / "reconstruction" / "chains.h5"
    path.unlink(missing_ok=True)
    rng = np.random.default_rng(7)

    def log_prob(x):
        return -0.5 * np.sum(((x - mean) / sd) ** 2, axis=-1)

    for k in range(2):
        backend = emcee.backends.HDFBackend(str(path), name=f"ensemble_{k}", compression="gzip")
        backend.reset(24, len(free))
        sampler = emcee.EnsembleSampler(24, len(free), log_prob, vectorize=True, backend=backend)
        sampler.random_state = np.random.RandomState(7 + k).get_state()
        sampler.run_mcmc(mean + sd * rng.normal(size=(24, len(free))), 30, progress=False)


if __name__ == "__main__":
    write_chains()
