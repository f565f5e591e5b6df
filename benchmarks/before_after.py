"""The forward-model and log-probability benchmarks of two checkouts, interleaved, for a
before/after table measured in one session and machine state.

    python benchmarks/before_after.py --before /tmp/before --after . [--repeats 5]
        [--output benchmarks/results/before_after_forward.json]

Each checkout needs its own virtual environment (``make -C DIR venv``) and, so that no compile
is timed, a warmed numba cache (run this once with ``--repeats 1`` first, or any benchmark).
Per repeat, before then after, each checkout's ``benchmarks/bench_docking.py`` (the 20-s
reference run: the preset and the implicit 2-ms option) and ``benchmarks/bench_recon.py``
(log-probability evaluations of the nominal flight on all cores) run with that checkout's
``.venv/bin/python`` in that checkout. Interleaving spreads a drift of the machine over both
sides; the median and the smallest of the repeats are printed and written with every raw
figure and the load average around each run, and the provenance (``benchmarks/_record.py``:
the machine, the command, the "after" checkout's commit as ``commit`` and the "before"
checkout's as ``before_commit``).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: (label, script, path into its JSON figures, scale)
FIGURES = (
    ("20-s run, preset, CPU [ms]", "bench_docking.py", ("preset", "cpu_s_median"), 1e3),
    ("20-s run, implicit 2 ms, CPU [ms]", "bench_docking.py", ("implicit_2ms", "cpu_s_median"),
     1e3),
    ("6-s window, preset, CPU per evaluation in the batch [ms]", "bench_docking.py",
     ("preset", "short_cpu_s_per_eval"), 1e3),
    ("log probability, preset, evaluations/s (wall, all cores)", "bench_recon.py",
     ("evals_per_s",), 1.0),
    ("1e5 evaluations, preset, wall [min]", "bench_recon.py", ("minutes_for_1e5_evals",), 1.0),
    ("log probability, implicit 2 ms, evaluations/s", "bench_recon.py",
     ("implicit_2ms", "evals_per_s"), 1.0),
    ("1e5 evaluations, implicit 2 ms, wall [min]", "bench_recon.py",
     ("implicit_2ms", "minutes_for_1e5_evals"), 1.0),
)


def _run(checkout: Path, script: str) -> dict:
    py = checkout / ".venv" / "bin" / "python"
    proc = subprocess.run([str(py), str(checkout / "benchmarks" / script)], cwd=checkout,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{checkout / 'benchmarks' / script}: exit {proc.returncode}\n"
                         f"{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _get(doc: dict, path: tuple) -> float:
    for k in path:
        doc = doc[k]
    return float(doc)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=True, type=Path, help="the 'before' checkout")
    ap.add_argument("--after", required=True, type=Path, help="the 'after' checkout")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--output", type=Path,
                    default=HERE / "results" / "before_after_forward.json")
    args = ap.parse_args(argv)
    sides = {"before": args.before.resolve(), "after": args.after.resolve()}
    for name, d in sides.items():
        if not (d / ".venv" / "bin" / "python").exists():
            ap.error(f"--{name} {d}: no .venv/bin/python (make -C {d} venv)")
    raw: dict[str, list] = {name: [] for name in sides}
    for i in range(args.repeats):
        for name, d in sides.items():
            load0 = [round(x, 2) for x in os.getloadavg()]
            docs = {s: _run(d, s) for s in ("bench_docking.py", "bench_recon.py")}
            raw[name].append({"load_start": load0,
                              "load_end": [round(x, 2) for x in os.getloadavg()], **docs})
            print(f"{name} {i + 1}/{args.repeats} load {load0}", flush=True)
    table = {}
    for label, script, path, scale in FIGURES:
        row = {name: [round(_get(r[script], path) * scale, 2) for r in runs]
               for name, runs in raw.items()}
        table[label] = {name: {"median": round(statistics.median(v), 2), "min": min(v),
                               "values": v} for name, v in row.items()}
        print(f"{label:58s} " + "  ".join(
            f"{name} {t['median']:8.2f} ({t['min']:.2f})" for name, t in table[label].items()))
    sys.path.insert(0, str(HERE.parent))
    from _record import commit, provenance
    from identification.provenance import versions
    from recon.io import write_json
    write_json({"checkouts": {k: str(v) for k, v in sides.items()}, "repeats": args.repeats,
                "figures": table, "raw": raw, "versions": versions(),
                "provenance": {**provenance(__file__, argv, tree=sides["after"]),
                               "before_commit": commit(sides["before"])}}, args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
