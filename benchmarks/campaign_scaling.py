"""Campaign throughput on this machine: flights per hour at 1 and 2 workers.

Runs the same flights (default: the three shipped 5-s probe-cone flights of
``telemetry_samples/flights/campaign.toml``, importance sampling, no emcee) as a campaign
(:func:`recon.app.campaign.run_campaign`, the reconstruction and report of each flight) on an
embedded Dask cluster of 1 worker and of 2 workers, each worker one process with one numba
thread, and reports flights per hour and the parallel efficiency of 2 workers,
``rate(2) / (2 rate(1))``. Also 1 worker with 2 numba threads (what ``--workers 1`` gives on a
2-core machine), for comparison. Run it on a quiet machine: the figure is a property of the
machine's idle cores.

Usage::

    .venv/bin/python benchmarks/campaign_scaling.py [--flights nominal misaligned slow]
        [--repeat 2] [--configs 1x1,2x1,1x2]

The efficiency is given twice: from the campaigns' wall times, and from the mean wall time of
a flight alone and two at a time, which is what a long campaign approaches (the wall-time
figure of a short one also counts the end, when one worker has finished and the other has
not).

Writes ``benchmarks/results/campaign_scaling.json`` (``--output``), with the machine, commit and
command (``benchmarks/_record.py``), and prints a table.
"""
from __future__ import annotations

import argparse
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def main(argv=None) -> int:
    from recon.app.campaign import load_manifest, reconstruct_one, run_campaign
    from identification.provenance import versions
    from recon.io import write_json

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flights", nargs="+", default=["nominal", "misaligned", "slow"])
    ap.add_argument("--repeat", type=int, default=2,
                    help="copies of each flight (so that both workers stay busy)")
    ap.add_argument("--configs", default="1x1,2x1,1x2",
                    help="executors to time, WORKERSxTHREADS, comma-separated (the first two "
                         "must be 1x1 and 2x1 for the efficiency)")
    ap.add_argument("--output", default=str(HERE / "results" / "campaign_scaling.json"))
    args = ap.parse_args(argv)
    import dataclasses

    specs = [s for s in load_manifest(ROOT / "telemetry_samples" / "flights" / "campaign.toml")
             if s.name in args.flights]
    specs = [dataclasses.replace(s, name=f"{s.name}_{k}") for k in range(args.repeat)
             for s in specs]
    runs = []
    configs = [tuple(int(v) for v in c.split("x")) for c in args.configs.split(",")]
    if configs[:2] != [(1, 1), (2, 1)]:
        ap.error("--configs must start with 1x1,2x1")
    for workers, threads in configs:
        out = Path(tempfile.mkdtemp(prefix="dockrecon-scaling-"))
        try:
            t0 = time.perf_counter()
            doc = run_campaign(specs, out, reconstruct_one, workers=workers, threads=threads)
            wall = time.perf_counter() - t0
        finally:
            shutil.rmtree(out, ignore_errors=True)
        per = [f.get("wall_s") for f in doc["flights"].values()]
        runs.append({"workers": workers, "threads_per_worker": threads,
                     "flights": len(specs), "wall_s": round(wall, 1),
                     "flights_per_hour": round(3600.0 * len(specs) / wall, 1),
                     "flight_wall_s": per, "counts": doc["counts"]})
        print(f"{workers} worker(s) x {threads} thread(s): {len(specs)} flights in "
              f"{wall:.0f} s = {3600 * len(specs) / wall:.1f} flights/h", flush=True)
    eff = runs[1]["flights_per_hour"] / (2.0 * runs[0]["flights_per_hour"])
    # the same from the flights' own wall times: what a long campaign approaches, where the
    # last flights' imbalance (one worker idle at the end) no longer counts
    mean = [sum(r["flight_wall_s"]) / len(r["flight_wall_s"]) for r in runs[:2]]
    steady = mean[0] / mean[1]
    print(f"efficiency of 2 workers: {eff:.2f} (wall time); {steady:.2f} from the mean flight "
          f"time ({mean[0]:.0f} s alone, {mean[1]:.0f} s two at a time)")
    from _record import provenance

    write_json({"benchmark": "campaign_scaling", "runs": runs, "efficiency_2_workers": eff,
                "efficiency_2_workers_steady": steady, "repeat": args.repeat,
                "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                            "load_average_end": os.getloadavg()},
                "versions": versions(), "date": time.strftime("%Y-%m-%d"),
                "provenance": provenance(__file__, argv)}, args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
