"""Campaign report: ``DIR/campaign.json`` and ``DIR/catalog.parquet`` (:mod:`recon.app.campaign`).

What an engineer reads first about a campaign: how many flights were reconstructed, which
were not and why (implausible fit, refused input, lost worker), and the reconstructed
parameters across flights (one row per flight with its intervals up to 40 flights, their
distribution beyond), with the truth and the coverage of the intervals when the manifest
gives truths.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from reports.builders._common import display, fmt
from reports.document import Paragraph, Report, Section, Summary, Table, figure_png, report_date
from reports.figures import new_figure
from reports.figures_campaign import plot_forest, plot_spread

__all__ = ["build_campaign_report", "read_catalog", "flight_table", "parameter_figures"]

#: up to this many flights the parameters are drawn one row per flight, beyond as histograms
FOREST_MAX = 40
#: up to this many flights the report prints the catalog
CATALOG_TABLE_MAX = 20


def read_catalog(directory: Path):
    """The catalog beside a campaign document, or None when absent."""
    path = directory / "catalog.parquet"
    if not path.exists():
        return None
    import pandas as pd

    return pd.read_parquet(path)


def _short(text: str, n: int = 90) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= n else text[: n - 3] + "..."


def _text(value) -> str:
    """A catalog cell as text: '' for a missing value (None, NaN, pandas NA)."""
    import pandas as pd

    return "" if value is None or pd.isna(value) else str(value)


def flight_table(doc: dict, catalog) -> Table:
    """One row per flight: state, status, interval method, diagnostics, wall time and the
    reason or warnings; rows not reconstructed ``ok`` are highlighted."""
    rows, flags = [], []
    first = {} if catalog is None else {
        f: g.iloc[0] for f, g in catalog.groupby("flight", sort=False)}
    for name, f in (doc.get("flights") or {}).items():
        c = first.get(name)
        status = f.get("status") or ("pending" if f.get("state") == "pending" else "error")
        method = "" if c is None else _text(c["method"])
        diag = "" if c is None else _text(c["diagnostics"])
        # an ok flight's status reason only says its fit is plausible: show its warnings
        why = "" if status == "ok" else (f.get("reason") or "")
        if not why and f.get("warnings"):
            why = " | ".join(f["warnings"])
        wall = f.get("wall_s")
        rows.append((name, f.get("state", ""), status, method, _short(diag, 60),
                     "" if wall is None else f"{wall:.0f}",
                     ("(kept) " if f.get("resumed") else "") + _short(why)))
        flags.append(status != "ok")
    return Table(("flight", "state", "status", "intervals", "diagnostics", "wall [s]",
                  "reason / warnings"), tuple(rows), flags=tuple(flags),
                 caption="Every flight of the manifest; highlighted: not reconstructed "
                 "(implausible or failed fit, refused input, lost worker). '(kept)': "
                 "complete from an earlier run (--resume).")


def _parameter_frames(catalog):
    """``{parameter: (unit, frame of its rows in flight order)}`` of the catalog."""
    out = {}
    rows = catalog[catalog["parameter"].notna()]
    for name in dict.fromkeys(rows["parameter"]):
        sub = rows[rows["parameter"] == name]
        out[name] = (str(sub["unit"].iloc[0] or ""), sub)
    return out


def parameter_figures(catalog, flights: list[str]) -> list:
    """The reconstructed parameters across flights: one panel per parameter; a forest (every
    flight's median with its 68 / 95 % intervals, truth crosses) up to :data:`FOREST_MAX`
    flights, histograms of the medians (and of the truths) beyond."""
    params = _parameter_frames(catalog)
    if not params:
        return []
    names = list(params)
    figures = []
    per_fig = 6
    forest = len(flights) <= FOREST_MAX
    for start in range(0, len(names), per_fig):
        chunk = names[start:start + per_fig]
        nrows = (len(chunk) + 2) // 3
        height = (0.16 * len(flights) + 0.7) if forest else 1.9
        fig, axes = new_figure(nrows, 3, height_in=max(1.8, height) * nrows + 0.2)
        for k, ax in enumerate(axes.ravel()):
            if k >= len(chunk):
                ax.set_visible(False)
                continue
            name = chunk[k]
            unit, sub = params[name]
            scale, shown = display(unit)
            sub = sub.set_index("flight").reindex(flights)

            def col(c, sub=sub, scale=scale):
                return sub[c].to_numpy(dtype=float, na_value=np.nan) * scale

            truth = col("truth")
            if forest:
                plot_forest(flights, col("median"),
                            np.column_stack([col("ci68_lo"), col("ci68_hi")]),
                            np.column_stack([col("ci95_lo"), col("ci95_hi")]), truth,
                            title=name, unit=shown, ax=ax, show_labels=k % 3 == 0)
            else:
                plot_spread(col("median"), truth, title=name, unit=shown, ax=ax)
        what = ("Each flight's median (dot), 68 % (thick) and 95 % (thin) interval"
                + (", truth (blue cross)" if catalog["truth"].notna().any() else "")
                if forest else
                "Distribution over flights of the median" + (
                    " (filled) and of the truth (outline)"
                    if catalog["truth"].notna().any() else ""))
        figures.append(figure_png(fig, f"{what}: {', '.join(chunk)}.",
                                  name=f"parameters_{start // per_fig}"))
    return figures


def coverage_rows(catalog) -> tuple[tuple[str, ...], ...]:
    """Per parameter with a known truth: flights, truth inside the 68 % and the 95 %
    interval (count and fraction), median |z|."""
    rows = []
    for name, (unit, sub) in _parameter_frames(catalog).items():
        sub = sub[sub["truth"].notna() & sub["in68"].notna()]
        if sub.empty:
            continue
        n = len(sub)
        k68, k95 = int(sub["in68"].sum()), int(sub["in95"].sum())
        z = np.abs(sub["z"].to_numpy(dtype=float, na_value=np.nan))
        rows.append((name, str(n), f"{k68} ({k68 / n:.2f})", f"{k95} ({k95 / n:.2f})",
                     f"{np.nanmedian(z):.2f}" if np.isfinite(z).any() else "n/a"))
    return tuple(rows)


def build_campaign_report(doc: dict, path: Path) -> Report:
    """Report of a campaign (``dockrecon campaign``)."""
    directory = path.parent
    catalog = read_catalog(directory)
    counts = doc.get("counts") or {}
    settings = doc.get("settings") or {}
    flights = list(doc.get("flights") or {})
    bad = [(n, f) for n, f in (doc.get("flights") or {}).items() if f.get("status") != "ok"]
    where = (f"scheduler {settings['scheduler']}" if settings.get("scheduler")
             else f"embedded cluster, {settings.get('workers')} worker(s)")
    items = (("manifest", str(settings.get("manifest", ""))),
             ("flights", str(counts.get("total", len(flights)))),
             ("reconstructed (ok)", str(sum(f.get("status") == "ok"
                                            for f in (doc.get("flights") or {}).values()))),
             ("implausible fits", str(counts.get("implausible", 0))),
             ("failed (refused input, lost worker)", str(counts.get("failed", 0))),
             ("executor", where),
             ("wall time of the last run", f"{doc.get('wall_s', 0.0):.0f} s"),
             ("source", str((doc.get("versions") or {}).get("dockrecon_source", ""))))
    blocks: list = [Summary(items)]
    if bad:
        blocks.append(Paragraph(
            f"{len(bad)} flight(s) not reconstructed: "
            + "; ".join(f"{n} ({f.get('status') or f.get('state')}: "
                        f"{_short(f.get('reason') or '', 70)})" for n, f in bad)
            + ". Each flight's directory holds its result and report where it has one.",
            "warning"))
    if catalog is None:
        blocks.append(Paragraph(f"No catalog.parquet in {directory}: the per-flight tables "
                                "are left out.", "warning"))
    sections = [Section("Summary", tuple(blocks)),
                Section("Flights", (flight_table(doc, catalog),))]
    if catalog is not None:
        figs = parameter_figures(catalog, flights)
        if figs:
            sections.append(Section("Parameters across flights", tuple(figs)))
        cov = coverage_rows(catalog)
        if cov:
            sections.append(Section("Truth inside the intervals", (Table(
                ("parameter", "flights", "in 68 %", "in 95 %", "median |z|"), cov,
                caption="Flights whose manifest gives a truth. A calibrated reconstruction "
                "holds the truth in about 68 % and 95 % of flights and has median |z| near "
                "0.67 (z: truth minus median over the 68 % half-width); with few flights "
                "these fractions scatter widely (dockrecon study calibration tests them)."),)))
        rows = catalog[catalog["parameter"].notna()]
        if len(flights) > CATALOG_TABLE_MAX:
            sections.append(Section("Catalog", (Paragraph(
                f"{len(rows)} rows: too many to print; catalog.parquet holds them.", "note"),)))
        elif not rows.empty:
            table = []
            for _, r in rows.iterrows():
                unit = r["unit"]
                table.append((str(r["flight"]), str(r["parameter"]), display(unit)[1],
                              fmt(r["median"], unit, 5),
                              f"[{fmt(r['ci95_lo'], unit, 5)}, {fmt(r['ci95_hi'], unit, 5)}]",
                              fmt(r["truth"], unit, 5) if r["truth"] == r["truth"] else ""))
            sections.append(Section("Catalog", (Table(
                ("flight", "parameter", "unit", "median", "95 %", "truth"), tuple(table),
                caption="catalog.parquet in display units (SI in the file)."),)))
    vers = tuple((k, str(v)) for k, v in (doc.get("versions") or {}).items())
    sections.append(Section("Settings and versions", (
        Paragraph(str(settings), "note"), Table(("item", "value"), vers))))
    title = "Docking reconstruction campaign" + (" (with failures)" if bad else "")
    return Report(title=title, subtitle=str(directory.name), date=report_date(),
                  sections=tuple(sections))
