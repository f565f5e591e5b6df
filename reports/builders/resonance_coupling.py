"""Report of a cross-coupling identification (the OUT.json of
``dockrecon identify resonance-coupling``). Reads the result only; for a shipped synthetic
record (``<record>.truth.json`` beside it, ``parameters`` ``beta_<n>``) the true coupling is
drawn too."""
from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np

from models.errors import InputError
from reports.document import Paragraph, Report, Section, Summary, Table, figure_png, report_date

log = logging.getLogger(__name__)

__all__ = ["build_coupling_report"]


def _truth(settings: dict, path: Path) -> dict | None:
    record = settings.get("record")
    if not record:
        return None
    for cand in (Path(record), path.parent / record, Path(__file__).resolve().parents[2] / record):
        truth = cand.with_suffix(".truth.json")
        if truth.exists():
            try:
                p = json.loads(truth.read_text())["parameters"]
                return {int(k.split("_")[1]): float(v) for k, v in p.items()
                        if k.startswith("beta_")}
            except (KeyError, ValueError, TypeError, IndexError) as exc:
                log.warning("%s: not compared with the truth (%s)", truth, exc)
                return None
    return None


def build_coupling_report(data: dict, path: Path) -> Report:
    """Summary, coefficient table with intervals, the measured l-th harmonic against the fit,
    the identified coupling curve (with the truth when known), settings, versions."""
    from reports.figures import new_figure

    path = Path(path)
    settings = data.get("settings", {}) or {}
    try:
        harm = data["harmonic"]
        bp, fl, l = np.asarray(harm["b_p"], float), np.asarray(harm["f_spl"], float), harm["l"]
        cur = data["coupling"]
        x, f = np.asarray(cur["x"], float), np.asarray(cur["f"], float)
        params = data["parameters"]
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"missing or non-numeric key ({exc})", source=str(path)) from None
    truth = _truth(settings, path)
    rows = []
    for name, c in params.items():
        n = int(name.split("_")[1])
        t = truth.get(n) if truth else None
        rows.append((name, c.get("unit", ""), f"{c['map']:.5g}",
                     f"[{c['ci68'][0]:.5g}, {c['ci68'][1]:.5g}]",
                     f"[{c['ci95'][0]:.5g}, {c['ci95'][1]:.5g}]",
                     "—" if t is None else f"{t:.5g}"))
    table = Table(("coefficient", "unit", "estimate", "68 %", "95 %", "truth"), tuple(rows),
                  caption="Coupling f_sp(x) = Σ β_n x^n; intervals: block bootstrap and the "
                          "drift of the lower-half fit in quadrature.")
    from identification.resonance.analytic import chebyshev_coefficient

    fig, axes = new_figure(1, 2, height_in=3.0)
    ax = axes[0, 0]
    ax.plot(bp * 1e3, fl, ".", ms=2.5, color="C0", label=f"measured f_sp{l}")
    model = sum(c["map"] * chebyshev_coefficient(int(k.split("_")[1]), l)
                * bp ** int(k.split("_")[1]) for k, c in params.items())
    ax.plot(bp * 1e3, model, "-", color="C3", label="fit")
    ax.set_xlabel("amplitude of mode p b_p [mm]")
    ax.set_ylabel(f"{l}-th harmonic of f_sp [N]")
    ax.legend(loc="best")
    ax = axes[0, 1]
    if truth:
        ax.plot(x * 1e3, sum(v * x ** n for n, v in truth.items()), "-", color="0.55", lw=2.4,
                label="truth")
    ax.plot(x * 1e3, f, "-", color="C0", label="fitted powers")
    if "nodes_x" in cur:
        ax.plot(np.asarray(cur["nodes_x"]) * 1e3, cur["nodes_f"], "o", ms=2.5, color="C1",
                label="pointwise inversion")
    ax.set_xlabel("x_p [mm]")
    ax.set_ylabel("coupling force f_sp(x_p) [N]")
    ax.legend(loc="best")
    figure = figure_png(fig, f"Left: the measured {l}-th harmonic of the coupling force "
                        "(f_spl = b_sl / B_sl) against the fitted powers. Right: the identified "
                        "coupling" + (" against the truth of the synthetic record." if truth
                                      else "."), name="coupling")
    items = (("record", str(settings.get("record", "—"))),
             ("modes", str(settings.get("modes", "—"))),
             ("resonance", f"{l} ν_p = ω_s, mode p = {settings.get('p')}, "
                           f"mode s = {settings.get('s')}"),
             ("excitation frequency ν_p", f"{settings.get('frequency_rad_s', float('nan')):.5g}"
                                         f" rad/s ({settings.get('frequency_source', '—')})"),
             ("windows", str(len(bp))),
             ("amplitude range b_p", f"{bp.min() * 1e3:.4g} – {bp.max() * 1e3:.4g} mm"))
    flat = tuple((k, str(v)) for k, v in settings.items())
    vers = tuple((k, str(v)) for k, v in (data.get("versions", {}) or {}).items())
    return Report(
        title="Cross-coupling identification",
        subtitle=f"{Path(str(settings.get('record', path))).name} — non-own resonance",
        date=report_date(),
        sections=(Section("Summary", (Summary(items=items, title="Result"), table,
                                      Paragraph(str(data.get("method", "")), kind="note"))),
                  Section("Coupling", (figure,)),
                  Section("Settings and versions", (
                      Table(("setting", "value"), flat, caption="Settings"),
                      Table(("package", "version"), vers, caption="Versions")))))
