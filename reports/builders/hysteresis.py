"""Static hysteresis-test report: the fitted element against the measured loop
(``dockrecon identify hysteresis`` output)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from reports.builders._common import parameter_table
from reports.document import Paragraph, Report, Section, Summary, Table, figure_png, report_date

__all__ = ["build_hysteresis_report"]


def build_hysteresis_report(data: dict, path: Path) -> Report:
    """Report of a hysteresis fit: the record and the fitted element's force along it are
    the result's ``fitted`` section (the model curve the fit minimised)."""
    from models.hysteresis import element_from_dict
    from reports.figures_hysteresis import plot_hysteresis_loop, plot_residual_per_sample

    element = element_from_dict(data["element"])
    q_unit, f_unit, _ = element.units
    items = [("record", str(data.get("record", ""))), ("element", f"{element.name} ({element.variant})"),
             ("residual RMS", f"{data.get('residual_rms', float('nan')):.4g} {data.get('residual_rms_unit', '')}"),
             ("samples", str(data.get("n_points", ""))),
             ("optimizer", f"{(data.get('optimizer') or {}).get('message', '')}")]
    brake = data.get("brake")
    if brake:
        items.append(("brake slips", f"{brake.get('slips')} (final shift {brake.get('final_shift'):.4g} {q_unit})"))
    sections = [Section("Summary", (Summary(tuple(items)),))]
    record = Path(str(data.get("record", "")))
    fitted = data.get("fitted")
    if fitted:
        q, force, model = (np.asarray(fitted[k], float) for k in ("q", "force", "model"))
        from reports.figures import new_figure

        fig, axes = new_figure(2, 1, height_in=6.2, height_ratios=(3, 1))
        plot_hysteresis_loop(q, force, model=model, element=element, units=(q_unit, f_unit), ax=axes[0, 0])
        plot_residual_per_sample(force - model, unit=f_unit, rms=data.get("residual_rms"),
                                 ax=axes[1, 0])
        sections.append(Section("Measured and fitted loops", (figure_png(
            fig, "Load-deflection record (points) and the fitted element along the same path "
                 "(line), branch nodes marked; residual per sample below.", name="loop"),)))
    else:
        sections.append(Section("Measured and fitted loops", (Paragraph(
            "the result holds no fitted curve: loop figure omitted", "warning"),)))
    sections.append(Section("Fitted parameters", (parameter_table(data),)))
    rows = tuple((k, str(v)) for k, v in (data.get("settings") or {}).items()) + \
        tuple((k, str(v)) for k, v in (data.get("versions") or {}).items())
    sections.append(Section("Settings and versions", (Table(("item", "value"), rows),)))
    return Report(title="Static hysteresis test identification", subtitle=record.name,
                  date=report_date(), sections=tuple(sections))
