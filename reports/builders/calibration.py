"""Calibration-study report: ``DIR/calibration.json`` (:mod:`recon.app.study`) and the campaign's
``DIR/catalog.parquet``.

First the verdict (is any parameter's coverage low for the table as a whole), then the
coverage table and its figure, the truth's standardised errors and likelihood-ratio
statistics against their reference distributions, the flights, and the parameters across
flights.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from reports.builders.campaign import parameter_figures, read_catalog
from reports.document import Paragraph, Report, Section, Summary, Table, figure_png, report_date
from reports.figures import new_figure
from reports.figures_campaign import plot_coverage, plot_lr_qq, plot_z_histogram

__all__ = ["build_calibration_report"]


def _coverage_table(tab: dict, caption: str) -> Table:
    rows, flags = [], []
    for name, r in tab.items():
        flag = ("low (family-wise)" if r["low_familywise"] else "low" if r["low"] else "")
        rows.append((name, str(r.get("n", "")), f"{r['coverage68']:.2f}",
                     f"{r['coverage95']:.2f}", f"{r['p_low68']:.3f}", f"{r['p_low95']:.3f}",
                     flag))
        flags.append(bool(r["low_familywise"]))
    return Table(("parameter", "flights", "68 %", "95 %", "p low 68", "p low 95", "flag"),
                 tuple(rows), caption=caption, flags=tuple(flags))


def _flight_rows(doc: dict) -> Table:
    rows, flags = [], []
    for r in doc.get("flights") or []:
        params = r.get("parameters") or {}
        miss = [n for n, p in params.items() if not p.get("in95")]
        joint = r.get("joint") or {}
        d2 = joint.get("d2")
        lr = r.get("lr")
        hpd = r.get("hpd") or {}
        ok = r.get("status", "ok") == "ok"
        rows.append((r["flight"], r.get("status", ""), str(r.get("method") or ""),
                     "" if r.get("ess") is None else f"{r['ess']:.0f}",
                     "" if lr is None else f"{lr:.1f}",
                     "inf" if d2 is None else f"{d2:.1f}",
                     f"{hpd['mass_above']:.2f}" if hpd else "",
                     ", ".join(miss) or "-"))
        flags.append(not ok or not joint.get("in95", False) or not hpd.get("in95", True))
    return Table(("flight", "status", "intervals", "importance ESS", "LR", "joint d2",
                  "HPD mass", "outside its 95 %"), tuple(rows), flags=tuple(flags),
                 caption="Every scored flight: LR = 2 (cost(truth) - best cost); joint d2: "
                 "the truth's squared distance in the posterior's Gaussian region of the "
                 "initial conditions; HPD mass: the posterior mass at higher density than "
                 "the truth's, over all free parameters (inside the 95 % region when at most "
                 "0.95). Highlighted: not ok, or the truth outside the joint or the "
                 "highest-density 95 % region.")


def _part_text(part: dict) -> str:
    """One part of a merged study: its file (its directory's name for a calibration.json),
    the flights it scored and, when it was run for more, what it was run for."""
    from recon.calibration import flight_index, format_only

    file = Path(part["file"])
    name = file.parent.name if file.name == "calibration.json" else file.name
    scored = format_only([i for i in map(flight_index, part.get("flights") or [])
                          if i is not None]) or "none"
    run_for = part.get("only")
    return f"{name}: {scored}" + (f" (run for {run_for})" if run_for and run_for != scored
                                  else "")


def build_calibration_report(doc: dict, path: Path) -> Report:
    """Report of a calibration study (``dockrecon study calibration``)."""
    directory = path.parent
    n = doc.get("n_flights", 0)
    study = (doc.get("settings") or {}).get("study") or {}
    tab = doc.get("table") or {}
    pooled = doc.get("pooled") or {}
    joint = doc.get("joint")
    low = [k for k, r in tab.items() if r["low_familywise"]]
    lr = pooled.get("likelihood_ratio")
    items = [("flights scored", str(n)),
             ("records", str(study.get("records", ""))),
             ("seed", str(doc.get("seed", ""))),
             ("scenario", Path(str(study.get("scenario", ""))).name),
             ("run configuration", Path(str(study.get("config", ""))).name),
             ("reconstruct options", str(study.get("options", {})))]
    if pooled.get("coverage68") is not None:
        items.append(("pooled coverage 68 % / 95 %",
                      f"{pooled['coverage68']:.3f} / {pooled['coverage95']:.3f}"))
    if pooled.get("median_abs_z") is not None:
        items.append(("median |z| (0.67 if calibrated)", f"{pooled['median_abs_z']:.2f}"))
    if joint:
        items.append((f"joint region of the initial conditions (chi2_{joint['dof']}) 68 % / "
                      "95 %", f"{joint['coverage68']:.2f} / {joint['coverage95']:.2f}"))
    hpd = doc.get("hpd")
    if hpd:
        items.append((f"highest-density region of all free parameters 68 % / 95 % "
                      f"({hpd['n']} flights; mean mass above the truth, 0.5 if calibrated)",
                      f"{hpd['coverage68']:.2f} / {hpd['coverage95']:.2f} "
                      f"({hpd['mass_above_mean']:.2f})"))
        if hpd.get("uniform_p") is not None:      # studies before the test have none
            items.append(("mass above the truth uniform on [0, 1]: Kolmogorov-Smirnov "
                          "distance, p", f"{hpd['uniform_d']:.3f}, {hpd['uniform_p']:.3f}"))
    if lr:
        items.append(("likelihood ratio of the truth: mean (dof), inside chi2 95 %",
                      f"{lr['mean']:.1f} ({lr['dof']}), {lr['inside95']:.2f}"))
        if lr.get("chi2_p") is not None:
            items.append((f"likelihood ratio of the truth against chi2_{lr['dof']}: "
                          "Kolmogorov-Smirnov distance, p",
                          f"{lr['chi2_d']:.3f}, {lr['chi2_p']:.3f}"))
        items.append(("search failures (LR < 0)", str(lr["search_failures"])))
    eng = doc.get("engines")
    if eng:
        items.append(("search from the learned proposal / learned then screened / screened"
                      "; posterior from importance sampling / emcee",
                      f"{eng['learned']} / {eng['learned_then_screen']} / {eng['screen']}; "
                      f"{eng['importance']} / {eng['mcmc']}"
                      + (f" ({eng['unknown']} flights scored without the record)"
                         if eng.get("unknown") else "")
                      + (f"; {eng['importance_short']} importance posteriors the hybrid "
                         "engine would send to emcee (k-hat above its limit or ESS below 100)"
                         if eng.get("importance_short") else "")))
    kept = doc.get("flights_resumed") or 0
    parts = (doc.get("settings") or {}).get("merged_from") or []
    if study.get("only") and not parts:
        items.append(("flights of the study run here", f"{study['only']} of "
                      f"{study.get('flights', '')}"))
    if parts:
        items.append((f"merged from {len(parts)} parts (dockrecon study merge): the flights "
                      "each scored", "; ".join(_part_text(m) for m in parts)))
        items.append(("wall time, summed over the parts",
                      f"{doc.get('wall_s', 0.0) / 60:.1f} min"))
    else:
        items.append(("wall time of the last run" if kept else "wall time",
                      f"{doc.get('wall_s', 0.0) / 60:.1f} min"
                      + (f" ({kept} flights kept from an earlier run)" if kept else "")))
    verdict = (Paragraph("Coverage low for the table as a whole (one-sided binomial, "
                         f"Bonferroni at 5 %): {', '.join(low)}.", "warning") if low else
               Paragraph("No parameter's coverage is low for the table as a whole "
                         "(one-sided binomial test of each cell at 5 % / cells). Cells "
                         "flagged 'low' alone (2 sampling errors) are expected in about 40 % "
                         "of calibrated studies of 12 parameters.", "note"))
    sections = [Section("Summary", (Summary(tuple(items)), verdict))]
    if tab:
        fig, axes = new_figure(1, 1, height_in=2.8)
        names = list(tab)
        plot_coverage(names, np.array([tab[k]["coverage68"] for k in names]),
                      np.array([tab[k]["coverage95"] for k in names]),
                      np.array([tab[k].get("n", n) for k in names]), ax=axes[0, 0])
        sections.append(Section("Coverage", (
            _coverage_table(tab, "Fraction of flights whose reported interval holds the "
                            "truth; p low: one-sided binomial probability of so few hits if "
                            "the intervals were calibrated. A flight whose fit is not ok "
                            "counts as a miss."),
            figure_png(fig, "Coverage of each parameter's 68 % (circles) and 95 % (squares) "
                       "interval; bands: nominal +- 2 binomial sampling errors.",
                       name="coverage"))))
        lap = (doc.get("tables") or {}).get("laplace")
        if lap:
            sections[-1] = Section("Coverage", sections[-1].blocks + (
                _coverage_table(lap, "The same flights scored with the Laplace intervals at "
                                "the optimum that every result also records "
                                "(diagnostics.laplace)."),))
    recs = doc.get("flights") or []
    z = [p["z"] for r in recs for p in (r.get("parameters") or {}).values()
         if p.get("z") is not None]
    lrs = [r["lr"] for r in recs if r.get("lr") is not None]
    figs = []
    if z:
        fig, axes = new_figure(1, 1, height_in=2.6)
        plot_z_histogram(np.array(z), ax=axes[0, 0])
        figs.append(figure_png(fig, "Standardised error of the truth, z = (truth - median) / "
                               "(68 % half-width), over every flight and parameter, against "
                               "N(0, 1) (values beyond the axes drawn at its ends).",
                               name="z"))
    if lrs and lr:
        fig, axes = new_figure(1, 1, height_in=2.8, width_in=3.6)
        plot_lr_qq(np.array(lrs), int(lr["dof"]), ax=axes[0, 0])
        figs.append(figure_png(fig, "Quantiles of the truth's likelihood-ratio statistic "
                               f"against chi-square({lr['dof']}): on the diagonal if the "
                               "likelihood is right and the search finds the optimum.",
                               name="lr"))
    if figs:
        sections.append(Section("The truth against the posterior", tuple(figs)))
    if recs:
        sections.append(Section("Flights", (_flight_rows(doc),)))
    catalog = read_catalog(directory)
    if catalog is not None:
        flights = list(dict.fromkeys(catalog["flight"]))
        pf = parameter_figures(catalog, flights)
        if pf:
            sections.append(Section("Parameters across flights", tuple(pf)))
    vers = tuple((k, str(v)) for k, v in (doc.get("versions") or {}).items())
    sections.append(Section("Settings and versions", (
        Paragraph(str(doc.get("settings", {})), "note"), Table(("item", "value"), vers))))
    title = "Calibration study" + (" (coverage low)" if low else "")
    return Report(title=title, subtitle=f"{n} flights, seed {doc.get('seed')}",
                  date=report_date(), sections=tuple(sections))
