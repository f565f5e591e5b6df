"""Fleet report: ``DIR/fleet.json`` (:mod:`recon.app.fleet`).

What the engineer asks of a fleet fit first: what the unit's shared numbers are, how much
better the fleet knows them than any one flight (each flight's own interval beside the
fleet's), whether the combination can be trusted (effective sample size, Pareto k-hat), and
each flight's own parameters given the unit.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from reports.builders._common import display, fmt
from reports.document import Paragraph, Report, Section, Summary, Table, figure_png, report_date
from reports.figures import new_figure
from reports.figures_campaign import plot_forest

__all__ = ["build_fleet_report"]


def _interval(v, unit) -> str:
    if not v:
        return "n/a"
    return f"[{fmt(v[0], unit)}, {fmt(v[1], unit)}]"


def build_fleet_report(doc: dict, path: Path) -> Report:
    """The report of a fleet fit (module docstring)."""
    shared = doc.get("shared") or {}
    diag = doc.get("diagnostics") or {}
    flights = list((doc.get("flights") or {}).keys())
    items = [("flights", str(len(flights))),
             ("combination", f"{doc.get('status', '')}: {doc.get('status_reason', '')}"),
             ("forward runs of the combination", str(diag.get("evaluations", ""))),
             ("seed", str(doc.get("seed", "")))]
    for name, s in shared.items():
        unit = s.get("unit")
        shown = display(unit)[1]
        text = (f"{fmt(s['median'], unit)} {shown} (95 %: {_interval(s['ci95'], unit)})"
                + (f", {s['narrowing']:.1f}x narrower than the best flight alone"
                   if s.get("narrowing") else "")
                + (f"; truth {fmt(s['truth'], unit)} {'inside' if s.get('in95') else 'OUTSIDE'}"
                   if "truth" in s else ""))
        items.append((name, text))
    blocks = [Summary(tuple(items))]
    if doc.get("status") != "ok":
        blocks.append(Paragraph("The combination's weights are uneven (effective sample size "
                                "below 50 or Pareto k-hat above its limit): the intervals are "
                                "rough; run with more shared_draws or inner draws.", "warning"))
    sections = [Section("Summary", tuple(blocks))]
    if shared:
        n = len(shared)
        fig, axes = new_figure(1, n, height_in=0.25 * (len(flights) + 1) + 0.9)
        axes = np.atleast_1d(axes).ravel()
        for ax, (name, s) in zip(axes, shared.items()):
            scale, shown = display(s.get("unit"))
            labels = [*flights, "fleet"]
            own = [s["flights"].get(f) or {} for f in flights]

            def col(key, i, rows=own):
                return np.array([(r.get(key) or [np.nan, np.nan])[i] for r in rows], float)

            med = np.array([r.get("median", np.nan) or np.nan for r in own] + [s["median"]])
            c68 = np.column_stack([np.append(col("ci68", 0), s["ci68"][0]),
                                   np.append(col("ci68", 1), s["ci68"][1])])
            c95 = np.column_stack([np.append(col("ci95", 0), s["ci95"][0]),
                                   np.append(col("ci95", 1), s["ci95"][1])])
            truth = (np.full(len(labels), s["truth"]) * scale if "truth" in s else None)
            plot_forest(labels, med * scale, c68 * scale, c95 * scale, truth, title=name,
                        unit=shown, ax=ax)
        sections.append(Section("Shared parameters", (figure_png(
            fig, "Each flight's own estimate of the unit's shared parameters (median, 68 % "
            "thick and 95 % thin interval) and the fleet's (last row)"
            + (", truth (blue cross)" if any("truth" in s for s in shared.values()) else "")
            + ".", name="fleet_shared"),)))
    rows = []
    for f, params in (doc.get("flights") or {}).items():
        for name, p in params.items():
            rows.append((f, name, fmt(p["median"], None), _interval(p["ci95"], None),
                         _interval((p.get("own") or {}).get("ci95"), None),
                         fmt(p["truth"], None) if "truth" in p else ""))
    if rows:
        sections.append(Section("Each flight given the fleet", (Table(
            ("flight", "parameter", "median", "95 % given the fleet", "95 % alone", "truth"),
            tuple(rows), caption="Each flight's own parameters [SI] given the unit's shared "
            "ones (the fleet's joint posterior) beside its own reconstruction's."),)))
    rounds = diag.get("rounds") or []
    if rounds:
        sections.append(Section("Combination", (Table(
            ("round", "shared draws", "inner draws", "effective sample size", "Pareto k-hat"),
            tuple((str(i + 1), str(r["draws"]), str(r["inner"]), f"{r['ess']:.0f}",
                   f"{r['pareto_k']:.2f}") for i, r in enumerate(rounds)),
            caption="Importance sampling on the joint likelihood (identification.engines."
            "fleet); the last round is the result."),)))
    return Report("Fleet fit: the unit's shared parameters", str(path.parent.name),
                  report_date(), tuple(sections))
