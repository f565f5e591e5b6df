"""CPU that the embedded Dask cluster of ``dockrecon campaign`` / ``study`` takes while idle
(docs/design/campaign_executor.rst: the embedded cluster's own CPU).

``python benchmarks/embedded_cluster_idle.py [--seconds 60] [--workers 2] [--defaults]``
starts the cluster as :func:`recon.app.campaign._client` does (with
:data:`recon.app.campaign.EMBEDDED_DASK_CONFIG`, or Dask's defaults with ``--defaults``), waits
5 s for it to settle, then measures the CPU time (user + system, ``psutil``) of the client
process (which holds the scheduler) and of each worker process over ``--seconds`` of wall with
no task running, and prints it per minute of wall. Run both ways one after the other (or
alternately) on the same machine: the difference is the CPU the dashboard machinery takes
from the flights.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import time


def _cpu(proc) -> float:
    t = proc.cpu_times()
    return t.user + t.system


def measure(seconds: float, workers: int, defaults: bool) -> dict:
    """Idle CPU [s per minute of wall] of the client and of each worker (module docstring)."""
    import psutil

    import recon.app.campaign as rc

    saved = rc.EMBEDDED_DASK_CONFIG
    if defaults:
        rc.EMBEDDED_DASK_CONFIG = {}
    try:
        client, cluster = rc._client(workers, None, 1)
    finally:
        rc.EMBEDDED_DASK_CONFIG = saved
    try:
        pids = [int(p) for p in client.run(os.getpid).values()]
        time.sleep(5.0)
        procs = [psutil.Process()] + [psutil.Process(p) for p in pids]
        c0 = [_cpu(p) for p in procs]
        t0 = time.monotonic()
        time.sleep(seconds)
        wall = time.monotonic() - t0
        c1 = [_cpu(p) for p in procs]
    finally:
        rc._close(client, cluster)
    per_min = [60.0 * (b - a) / wall for a, b in zip(c0, c1)]
    return {"settings": "dask defaults" if defaults else "EMBEDDED_DASK_CONFIG",
            "workers": workers, "seconds": round(wall, 1),
            "load_average": [round(x, 2) for x in os.getloadavg()],
            "cpu_s_per_min": {"client": round(per_min[0], 2),
                              "workers": [round(x, 2) for x in per_min[1:]],
                              "total": round(sum(per_min), 2)}}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--defaults", action="store_true",
                    help="Dask's default settings instead of EMBEDDED_DASK_CONFIG")
    args = ap.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        print(json.dumps(measure(args.seconds, args.workers, args.defaults), indent=1))


if __name__ == "__main__":
    main()
