"""Hydraulic test-rig identification report: ``DIR/result.json`` and ``DIR/fitted.parquet``."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from reports.builders._common import (channel_figures, missing_note, parameter_table, read_fit,
                                      residual_figure)
from reports.document import Paragraph, Report, Section, Summary, Table, report_date

__all__ = ["build_rig_report"]


def build_rig_report(data: dict, path: Path) -> Report:
    """Report of a rig identification (``dockrecon identify rig``)."""
    from identification.rig import RECORD_UNITS

    ident = data.get("identifiability") or {}
    diag = data.get("diagnostics") or {}
    not_sep = ident.get("not_separable") or []
    items = [("record", str(data.get("record", ""))), ("record kind", str(data.get("record_kind", ""))),
             ("configuration", str(data.get("config", ""))),
             ("free parameters", str(len([p for p in data.get("parameters", {}).values()
                                          if (p.get("prior") or {}).get("kind") != "fixed"])))]
    for key in ("cost", "nfev", "status", "message", "fisher_rank"):
        if key in diag:
            value = diag[key]
            items.append((key.replace("_", " "),
                          f"{value:.6g}" if isinstance(value, float) else str(value)))
    if "fisher_rank" in ident:
        items.append(("Fisher information rank", str(ident["fisher_rank"])))
    items.append(("not separable by this record", ", ".join(map(str, not_sep)) or "none"))
    from recon.results import check_files

    bad = check_files(data, path.parent)
    note = missing_note(data, path.parent, bad)
    sections = [Section("Summary", (Summary(tuple(items)),) + ((note,) if note else ())),
                Section("Parameters", (parameter_table(data),
                                       Paragraph(str(data.get("method", "")), "note")))]
    fit = None if "fitted.parquet" in bad else read_fit(path.parent, "fitted.parquet")
    if fit is not None:
        units = {k: v for k, v in RECORD_UNITS.items() if v}
        sections.append(Section("Record against the identified model",
                                tuple(channel_figures(fit, (), units))))
        residuals = residual_figure(fit, units)
        if residuals:
            sections.append(Section("Residuals", tuple(residuals)))
    corr = ident.get("correlation")
    names = ident.get("names")
    if corr is not None and names:
        corr = np.asarray(corr, float)
        rows = tuple((n, *(f"{c:+.2f}" for c in corr[i])) for i, n in enumerate(names))
        sections.append(Section("Parameter correlation", (Table(("", *names), rows),)))
    rows = tuple((k, str(v)) for k, v in (data.get("versions") or {}).items())
    sections.append(Section("Settings and versions", (
        Paragraph(str(data.get("settings", {})), "note"), Table(("item", "value"), rows))))
    return Report(title="Hydraulic test-rig identification", subtitle=Path(str(data.get("record", ""))).name,
                  date=report_date(), sections=tuple(sections))
