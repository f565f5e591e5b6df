"""Run every ``benchmarks/bench_*.py`` in its own process and collect the figures.

Each benchmark script prints one JSON object on its last stdout line and is responsible for its
own warm-up (compile time is measured separately and reported as ``compile_s``). The figures
are written to ``benchmarks/results/<name>.json`` with the machine and versions, and a table
is printed. Benchmarks are never timed assertions in tests: the machines are shared and noisy.
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    only = set(argv[1:])
    results_dir = HERE / "results"
    results_dir.mkdir(exist_ok=True)
    failed = 0
    for script in sorted(HERE.glob("bench_*.py")):
        name = script.stem.removeprefix("bench_")
        if only and name not in only:
            continue
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
            "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform(),
                        "python": platform.python_version()},
            "date": time.strftime("%Y-%m-%d"),
        }
        (results_dir / f"{name}.json").write_text(json.dumps(record, indent=2) + "\n")
        for key, value in figures.items():
            print(f"   {key:40s} {value}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
