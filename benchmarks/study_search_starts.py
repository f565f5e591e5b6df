"""Would fewer search starts have found the same optimum? Read from a study's flights.

Usage::

    .venv/bin/python benchmarks/study_search_starts.py STUDY_DIR [STUDY_DIR ...] [--keep 2,4,6]
        [--margin 0.5]

A reconstruction's search (``recon.search.screened_starts``) polishes the screen's ``keep``
best draws, best first, and the analytic first guess appended last, each for ``pre_nfev``
evaluations; the ``pre_keep`` lowest then continue to ``max_nfev``
(:func:`identification.engines.multistart`). Every flight's ``result.json`` records each start's
end cost in that order (``diagnostics.optimizer``, origin ``first_guess``). For a smaller
``keep`` this prints, per flight, how far the best end cost of the first ``keep`` starts and
the analytic guess lies above the best of all of them [cost units = log-likelihood units],
and counts the flights where it is more than ``--margin`` above.

It is a reading of the recorded runs, not a re-run: with fewer starts other starts may go on
to ``max_nfev`` (so a small margin may close), and the best end points are then polished on
with a finer step (``identification.engines.refine``), which closes margins inside one basin. A
flight with a large margin is one whose optimum only a start beyond ``keep`` found: the case a
smaller ``keep`` must be re-run on before it is adopted.

A flight whose screen kept the analytic guess among its best draws has one start fewer than
the others, and the guess's place among them is not recorded: such a flight is named and
left out of the counts rather than read wrongly.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np


def margins(costs, origins, keeps) -> dict[int, float]:
    """Best end cost of the first ``k`` screened starts and the analytic guess above the best
    of all starts, for each ``k`` in ``keeps``. ``costs``/``origins`` as in
    ``diagnostics.optimizer``; the screened starts come first, best first, and the analytic
    guess last when the screen did not keep it (then there are ``keep + 1`` starts)."""
    c = np.array([x for x, o in zip(costs, origins) if o == "first_guess"], float)
    best = float(np.nanmin(c))
    out = {}
    for k in keeps:
        pick = np.r_[c[:min(k, c.size - 1)], c[-1]]
        out[k] = float(np.nanmin(pick)) - best
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("studies", nargs="+")
    ap.add_argument("--keep", default="2,4,6", help="comma-separated smaller keeps")
    ap.add_argument("--margin", type=float, default=0.5)
    args = ap.parse_args(argv)
    try:
        keeps = [int(k) for k in args.keep.split(",")]
    except ValueError:
        ap.error(f"--keep {args.keep}: expected integers separated by commas")
    runs = []
    for study in args.studies:
        flights = sorted(p.parent for p in Path(study).glob("*/result.json"))
        if not flights:
            ap.error(f"{study}: no <flight>/result.json in it")
        for f in flights:
            try:
                opt = json.loads((f / "result.json").read_text())["diagnostics"]["optimizer"]
                runs.append((f.name, opt["costs"], opt["origins"]))
            except (ValueError, KeyError, TypeError) as exc:
                ap.error(f"{f / 'result.json'}: no readable diagnostics.optimizer ({exc!r})")
    counts = Counter(o.count("first_guess") for _, _, o in runs)
    n_starts = counts.most_common(1)[0][0]     # the run's keep + 1 (the guess appended)
    rows = []
    for name, costs, origins in runs:
        if origins.count("first_guess") != n_starts:
            print(f"{name}: {origins.count('first_guess')} starts, not {n_starts}: the screen "
                  f"kept the analytic guess, whose place is not recorded; left out")
            continue
        rows.append((name, margins(costs, origins, keeps)))
    print(f"{'flight':8s}" + "".join(f" {'keep ' + str(k):>9s}" for k in keeps))
    for name, m in rows:
        print(f"{name:8s}" + "".join(f" {m[k]:9.3f}" for k in keeps))
    for k in keeps:
        v = np.array([m[k] for _, m in rows])
        print(f"keep {k}: {int((v > args.margin).sum())} of {len(v)} flights more than "
              f"{args.margin:g} above the best (largest {v.max():.2f}: "
              f"{rows[int(v.argmax())][0]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
