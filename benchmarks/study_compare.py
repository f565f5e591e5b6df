"""Two calibration studies of the same flights, flight for flight: did a cheaper setting
(fewer search starts, fewer importance draws) lose a basin, an ESS, a covered truth?

Usage::

    .venv/bin/python benchmarks/study_compare.py --a PART.json[:STUDY_DIR] [...]
        --b PART.json[:STUDY_DIR] [...] [--label-a A] [--label-b B] [--lost 0.5]

Each side is one study given as its parts (``calibration.json`` files, as ``dockrecon study
merge`` takes them; a flight scored in two parts of one side is refused). ``:STUDY_DIR``
names the directory holding the part's flights (``STUDY_DIR/<flight>/result.json``), for the
evaluations each stage ran; without it those columns are blank.

The flights both sides scored are compared. Prints, per flight: the best cost of the
search's polished starts [cost units of ``result.json``: half the weighted sum of squares]
on each side and A minus B; the truth's cost on each side (the same record and model give
the same figure, so a difference flags flights that are not the same problem, and the
flight is refused); the importance ESS; the Gaussian ``d2`` of the initial conditions; the
95 % / 68 % misses; the evaluations of search + polish + importance. Then a summary: the
flights where A's best cost is above B's by more than ``--lost`` (A's search ended in a
worse basin, or polished it less far), the totals of evaluations, the median ESS, and the
flights outside the Gaussian 95 % region on each side.

Exit 0 after the comparison; 2 for bad arguments or flights that are not the same problem.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

#: relative difference of the truth's cost above which two flights are not the same problem
SAME_PROBLEM_RTOL = 1e-6
STAGES = ("search", "polish", "importance")


def load_side(specs: list[str], error) -> dict[str, dict]:
    """The flights of one side's parts, by name: each the flight's entry of its
    ``calibration.json`` plus ``evaluations`` {stage: n} when a study directory is given.
    ``error(message)`` is called (and must not return) for bad input."""
    flights: dict[str, dict] = {}
    origin: dict[str, str] = {}
    for spec in specs:
        doc_path, study = spec, None
        if not Path(spec).is_file() and ":" in spec:
            doc_path, _, study = spec.rpartition(":")
        if not Path(doc_path).is_file():
            error(f"{doc_path}: no such file")
        try:
            doc = json.loads(Path(doc_path).read_text())
            entries = doc["flights"]
        except (ValueError, KeyError, TypeError) as exc:
            error(f"{doc_path}: not a calibration study's JSON ({exc.__class__.__name__})")
        for f in entries:
            if f.get("status") != "ok" or "best_cost" not in f:
                continue
            name = f["flight"]
            if name in flights:
                error(f"{name}: scored in both {origin[name]} and {doc_path}")
            row = dict(f)
            if study is not None:
                res = Path(study) / name / "result.json"
                if not res.is_file():
                    error(f"{res}: no result for flight {name} of {doc_path}")
                timing = json.loads(res.read_text())["diagnostics"]["timing"]
                row["evaluations"] = {s: int(timing.get(s, {}).get("evaluations", 0))
                                      for s in STAGES}
            flights[name], origin[name] = row, doc_path
    return flights


def compare(a: dict[str, dict], b: dict[str, dict], lost: float) -> dict:
    """Flight-for-flight rows and the summary (module docstring). Raises ``ValueError``
    naming the flights whose truth's cost differs between the sides."""
    common = sorted(set(a) & set(b))
    not_same = [n for n in common
                if abs(a[n]["cost_truth"] - b[n]["cost_truth"])
                > SAME_PROBLEM_RTOL * max(1.0, abs(b[n]["cost_truth"]))]
    if not_same:
        raise ValueError(
            f"not the same problem (the truth's cost differs): {', '.join(not_same)}")
    rows = []
    for n in common:
        fa, fb = a[n], b[n]
        row = {"flight": n, "diff": fa["best_cost"] - fb["best_cost"]}
        for tag, f in (("a", fa), ("b", fb)):
            params = f["parameters"].values()
            row[tag] = {
                "best_cost": f["best_cost"], "cost_truth": f["cost_truth"],
                "ess": f.get("ess"), "d2": f["joint"]["d2"],
                "in_joint95": f["joint"]["in95"],
                "miss95": sum(not p["in95"] for p in params),
                "miss68": sum(not p["in68"] for p in params),
                "evaluations": (sum(f["evaluations"].values()) if "evaluations" in f
                                else None)}
        rows.append(row)

    def total(tag):
        ev = [r[tag]["evaluations"] for r in rows]
        return None if any(e is None for e in ev) else sum(ev)

    def median_ess(tag):
        ess = [r[tag]["ess"] for r in rows if r[tag]["ess"] is not None]
        return statistics.median(ess) if ess else None

    summary = {
        "n": len(rows), "only_a": sorted(set(a) - set(b)), "only_b": sorted(set(b) - set(a)),
        "lost": [r["flight"] for r in rows if r["diff"] > lost],
        "gained": [r["flight"] for r in rows if r["diff"] < -lost],
        "evaluations": {"a": total("a"), "b": total("b")},
        "median_ess": {"a": median_ess("a"), "b": median_ess("b")},
        "out_joint95": {t: [r["flight"] for r in rows if not r[t]["in_joint95"]]
                        for t in ("a", "b")},
        "miss95": {t: sum(r[t]["miss95"] for r in rows) for t in ("a", "b")},
        "miss68": {t: sum(r[t]["miss68"] for r in rows) for t in ("a", "b")},
    }
    return {"rows": rows, "summary": summary}


def _fmt(x, spec):
    return "-" if x is None else format(x, spec)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--a", nargs="+", required=True, metavar="PART.json[:STUDY_DIR]")
    ap.add_argument("--b", nargs="+", required=True, metavar="PART.json[:STUDY_DIR]")
    ap.add_argument("--label-a", default="A")
    ap.add_argument("--label-b", default="B")
    ap.add_argument("--lost", type=float, default=0.5,
                    help="best-cost excess of A over B that counts as a lost basin [cost]")
    args = ap.parse_args(argv)
    a, b = load_side(args.a, ap.error), load_side(args.b, ap.error)
    try:
        out = compare(a, b, args.lost)
    except ValueError as exc:
        ap.error(str(exc))
    la, lb = args.label_a, args.label_b
    print(f"{'flight':7s} {'best ' + la:>10s} {'best ' + lb:>10s} {'A-B':>7s} "
          f"{'ESS ' + la:>8s} {'ESS ' + lb:>8s} {'d2 ' + la:>6s} {'d2 ' + lb:>6s} "
          f"{'miss95/68 ' + la:>12s} {'miss95/68 ' + lb:>12s} {'evals ' + la:>8s} "
          f"{'evals ' + lb:>8s}")
    for r in out["rows"]:
        ra, rb = r["a"], r["b"]
        print(f"{r['flight']:7s} {ra['best_cost']:10.2f} {rb['best_cost']:10.2f} "
              f"{r['diff']:+7.2f} {_fmt(ra['ess'], '8.1f')} {_fmt(rb['ess'], '8.1f')} "
              f"{ra['d2']:6.1f} {rb['d2']:6.1f} "
              f"{ra['miss95']:>7d} / {ra['miss68']:<2d} {rb['miss95']:>7d} / {rb['miss68']:<2d} "
              f"{_fmt(ra['evaluations'], '8d')} {_fmt(rb['evaluations'], '8d')}")
    s = out["summary"]
    print(f"\n{s['n']} flights in both; only in {la}: {', '.join(s['only_a']) or 'none'}; "
          f"only in {lb}: {', '.join(s['only_b']) or 'none'}")
    print(f"{la}'s best cost above {lb}'s by > {args.lost}: "
          f"{', '.join(s['lost']) or 'none'}; below by > {args.lost}: "
          f"{', '.join(s['gained']) or 'none'}")
    print(f"evaluations (search + polish + importance): {la} "
          f"{_fmt(s['evaluations']['a'], 'd')}, {lb} {_fmt(s['evaluations']['b'], 'd')}")
    print(f"median ESS: {la} {_fmt(s['median_ess']['a'], '.1f')}, "
          f"{lb} {_fmt(s['median_ess']['b'], '.1f')}")
    print(f"outside the Gaussian 95 % region: {la} "
          f"{', '.join(s['out_joint95']['a']) or 'none'}; {lb} "
          f"{', '.join(s['out_joint95']['b']) or 'none'}")
    print(f"misses of all parameters at 95 % / 68 %: {la} {s['miss95']['a']} / "
          f"{s['miss68']['a']}, {lb} {s['miss95']['b']} / {s['miss68']['b']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
