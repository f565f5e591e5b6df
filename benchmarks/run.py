"""Run every ``benchmarks/bench_*.py`` in its own process and collect the figures.

    python benchmarks/run.py [NAME ...]      # e.g. hysteresis docking; default: all

Each benchmark script prints one JSON object on its last stdout line and is responsible for its
own warm-up (compile time is measured separately and reported as ``compile_s``). The figures
are written to ``benchmarks/results/<name>.json`` with their provenance (the machine, the
commit and the command that reproduces the file: ``benchmarks/_record.py``), and a table is
printed; ``make bench`` then regenerates ``benchmarks/README.md`` from the results files.
Benchmarks are never timed assertions in tests: the machines are shared and noisy.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from _record import provenance

HERE = Path(__file__).resolve().parent
NAMES = sorted(p.stem.removeprefix("bench_") for p in HERE.glob("bench_*.py"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", metavar="NAME",
                    help="benchmarks to run (default: all): " + ", ".join(NAMES))
    args = ap.parse_args(argv)
    unknown = [n for n in args.names if n not in NAMES]
    if unknown:
        ap.error(f"no benchmarks/bench_{unknown[0]}.py (one of: {', '.join(NAMES)})")
    only = set(args.names)
    results_dir = HERE / "results"
    results_dir.mkdir(exist_ok=True)
    failed = 0
    for name in NAMES:
        if only and name not in only:
            continue
        script = HERE / f"bench_{name}.py"
        print(f"== {name}", flush=True)
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
        if proc.returncode != 0:
            failed += 1
            print(proc.stdout + proc.stderr, file=sys.stderr)
            continue
        figures = json.loads(proc.stdout.strip().splitlines()[-1])
        record = {
            "benchmark": name,
            "figures": figures,
            "wall_s_total": round(time.perf_counter() - start, 3),
            # the command that rewrites this one file
            "provenance": provenance(__file__, [name]),
        }
        (results_dir / f"{name}.json").write_text(json.dumps(record, indent=2) + "\n")
        for key, value in figures.items():
            print(f"   {key:40s} {value}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
