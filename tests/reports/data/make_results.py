"""Regenerate the small stored results the report tests render (run from the repository root).

* ``reconstruction/``: ``python tests/reports/data/make_results.py`` runs ``dockrecon reconstruct
  telemetry_samples/flights/nominal.parquet --scenario models/probe_cone/presets/reference.toml
  --config telemetry_samples/flights/run.toml --seed 1 --walkers 28 --steps 40
  -o tests/reports/data/reconstruction`` (through :func:`recon.flight.reconstruct_flight`): a real
  but short MCMC run (it stops at its step limit, which the report shows), writing result.json,
  fit.parquet, trajectory.parquet and chains.h5; chains.h5 is then rewritten with gzip
  compression (same datasets, attributes and values: emcee reads it back identically), 1.2 MB
  -> 0.12 MB;
* ``hysteresis.json``: ``dockrecon identify hysteresis telemetry_samples/static/lateral_double_loop.csv
  --element telemetry_samples/static/lateral_double_loop.start.toml --output tests/reports/data/hysteresis.json``;
* ``rig/``: ``dockrecon identify rig telemetry_samples/rig/step.parquet --config
  telemetry_samples/rig/actuator.toml --output tests/reports/data/rig``.
"""
from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent


def write_reconstruction() -> None:
    import shutil

    from models.probe_cone import preset_path
    from recon.flight import reconstruct_flight
    from telemetry_samples import SAMPLES_DIR

    out = HERE / "reconstruction"
    shutil.rmtree(out, ignore_errors=True)
    flights = SAMPLES_DIR / "flights"
    reconstruct_flight(flights / "nominal.parquet", preset_path("reference"), out,
                       config=flights / "run.toml", seed=1, walkers=28, steps=40)
    _recompress(out / "chains.h5")


def _recompress(path: Path) -> None:
    """Rewrite an HDF5 file with gzip-compressed datasets (same groups, datasets, attributes)."""
    import h5py

    tmp = path.with_name(path.name + ".tmp")

    def copy(src, dst):
        for k, v in src.attrs.items():
            dst.attrs[k] = v
        for name, item in src.items():
            if isinstance(item, h5py.Group):
                copy(item, dst.create_group(name))
                continue
            kw = dict(compression="gzip", compression_opts=9, shuffle=True) if item.size > 16 else {}
            resizable = item.maxshape != item.shape
            d = dst.create_dataset(name, data=item[()], maxshape=item.maxshape,
                                   chunks=True if resizable else None, **kw)
            for k, v in item.attrs.items():
                d.attrs[k] = v

    with h5py.File(path, "r") as a, h5py.File(tmp, "w") as b:
        copy(a, b)
    tmp.replace(path)


if __name__ == "__main__":
    write_reconstruction()
