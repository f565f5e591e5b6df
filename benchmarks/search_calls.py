"""Where a reconstruction's search spends its forward evaluations: every least-squares run of
one flight (its evaluation limit, the residual evaluations and Jacobians it took, its end
cost and wall), with the engine's stage timings.

Usage::

    .venv/bin/python benchmarks/search_calls.py TELEMETRY --scenario SCENARIO --config RUN
        [--set optimizer.keep=6 ...] [--seed 0] [--steps 200] [--output FILE.json]

``--set KEY=VALUE`` overrides a key of the run configuration (a table and a key, the value
parsed as TOML), so that a variant of the search (fewer starts, a shorter first phase) is
measured on the same record as the shipped configuration. The flight runs in this process
as ``dockrecon reconstruct`` runs it (hybrid engine, the learned proposal the user cache or
the package holds; ``--steps`` caps emcee where the importance weights send the flight
there). A Jacobian is ``2 n`` forward runs (central differences), so a run's forward
evaluations are ``nfev + 2 n njev``. Prints a table; ``--output`` writes it as JSON with the
provenance (``benchmarks/_record.py``).
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
import tempfile
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from _record import provenance  # noqa: E402


def _overridden(config: str, sets: list[str]) -> dict:
    """The run configuration ``config`` as a dict with ``--set`` overrides applied (paths
    inside it made absolute, as the reader resolves them against the file)."""
    doc = tomllib.loads(Path(config).read_text())
    for item in sets:
        key, _, value = item.partition("=")
        table, _, name = key.partition(".")
        if not name or not _:
            raise SystemExit(f"--set {item!r}: expected TABLE.KEY=VALUE")
        doc.setdefault(table, {})[name] = tomllib.loads(f"v = {value}")["v"]
    return doc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("telemetry")
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--set", dest="sets", action="append", default=[], metavar="TABLE.KEY=V")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--output")
    args = ap.parse_args(argv)

    from scipy import optimize

    ls = importlib.import_module("identification.engines.least_squares")
    calls = []
    solve = optimize.least_squares

    def recorded(fun, x0, jac=None, **kw):
        t0 = time.perf_counter()
        res = solve(fun, x0, jac=jac, **kw)
        n = len(x0)
        calls.append({"max_nfev": kw.get("max_nfev"), "nfev": int(res.nfev),
                      "njev": int(res.njev or 0), "evaluations": int(res.nfev)
                      + 2 * n * int(res.njev or 0), "cost": float(res.cost),
                      "wall_s": round(time.perf_counter() - t0, 2)})
        return res

    class _Optimize:   # the engine module's ``_opt`` with least_squares recorded
        def __getattr__(self, name):
            return recorded if name == "least_squares" else getattr(optimize, name)

    ls._opt = _Optimize()
    from recon.flight import reconstruct_flight

    config = _overridden(args.config, args.sets) if args.sets else args.config
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        res = reconstruct_flight(args.telemetry, args.scenario, out, config=config,
                                 seed=args.seed, mcmc=True, steps=args.steps)
        wall = time.perf_counter() - t0
    d = res.diagnostics
    doc = {"telemetry": args.telemetry, "scenario": args.scenario, "config": args.config,
           "sets": args.sets, "seed": args.seed, "wall_s": round(wall, 1),
           "status": res.status, "best_cost": float(res.best.cost),
           "search": d.get("search", {}), "timing": d.get("timing", {}),
           "importance": {k: d.get("importance", {}).get(k) for k in
                          ("n_proposal", "ess", "pareto_k", "restarts", "discarded", "rounds")},
           "method": getattr(res.posterior, "method", None), "calls": calls,
           "provenance": provenance(__file__, argv)}
    print(f"{'limit':>6} {'nfev':>5} {'njev':>5} {'evals':>6} {'cost':>12} {'wall':>6}")
    for c in calls:
        print(f"{c['max_nfev']!s:>6} {c['nfev']:>5} {c['njev']:>5} {c['evaluations']:>6} "
              f"{c['cost']:>12.2f} {c['wall_s']:>6.1f}")
    starts = doc["search"].get("starts", {})
    print(f"status {res.status}, best cost {res.best.cost:.2f}, starts "
          f"{starts.get('path', '-')}, search rounds {doc['search'].get('rounds')}, "
          f"posterior {doc['method']}, wall {wall:.0f} s")
    for stage, t in doc["timing"].items():
        print(f"  {stage}: {t['wall_s']:.1f} s ({t['evaluations']} evaluations)")
    if args.output:
        Path(args.output).write_text(json.dumps(doc, indent=1, default=float) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
