"""Pieces shared by the report builders: display units, number formatting, the parameter table
of the project's result schema, and channel-fit figures from a ``NAME`` / ``NAME_fit`` table."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from reports.document import Paragraph, Table, figure_png
from reports.figures import new_figure
from reports.figures_recon import plot_channel_fit, plot_residuals

__all__ = ["display", "fmt", "interval", "with_interval", "prior_text", "parameter_table",
           "read_fit", "channel_figures", "residual_figure"]

# SI unit -> (display factor, display unit)
_DISPLAY = {"m": (1e3, "mm"), "rad": (180.0 / np.pi, "deg"), "rad/s": (180.0 / np.pi, "deg/s"),
            "m/s": (1.0, "m/s"), "Pa": (1e-6, "MPa"), "N": (1e-3, "kN"), "N*m": (1.0, "N m"), "N m": (1.0, "N m"),
            "J": (1.0, "J"),
            "s": (1.0, "s"), "": (1.0, "-"), "1": (1.0, "0/1")}

def _channel_units() -> dict[str, str]:
    """SI unit of every channel of every registered docking unit (``""`` for a flag)."""
    from models.unit import all_channels

    return {n: c.unit for n, c in all_channels().items()}


def display(unit: str | None) -> tuple[float, str]:
    return _DISPLAY.get(unit or "", (1.0, unit or "-"))


def fmt(value: Any, unit: str | None, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return "n/a"
    scale, shown = display(unit)
    return f"{float(value) * scale:.{digits}g}"


def digits_for(entry: dict, least: int = 4, most: int = 8) -> int:
    """Significant digits that resolve an entry's 68 % interval: a closing velocity of
    0.21988 m/s known to 1e-4 needs 5, where 4 print both ends as 0.2199."""
    c = entry.get("median", entry.get("map"))
    lo, hi = (entry.get("ci68") or [None, None])[:2]
    try:
        width = abs(float(hi) - float(lo))
        mag = abs(float(c))
    except (TypeError, ValueError):
        return least
    if not (np.isfinite(width) and np.isfinite(mag)) or width <= 0 or mag <= 0:
        return least
    return int(np.clip(np.ceil(np.log10(mag / width)) + 2, least, most))


def interval(entry: dict, key: str, digits: int | None = None) -> str:
    lo, hi = (entry.get(key) or [None, None])[:2]
    unit = entry.get("unit")
    if lo is None or hi is None:
        return "n/a"
    d = digits_for(entry) if digits is None else digits
    return f"[{fmt(lo, unit, d)}, {fmt(hi, unit, d)}]"


def with_interval(entry: dict | None) -> str:
    if not entry:
        return "n/a"
    unit = entry.get("unit")
    centre = entry.get("median", entry.get("map"))
    d = digits_for(entry)
    return f"{fmt(centre, unit, d)} {display(unit)[1]}  (95 %: {interval(entry, 'ci95', d)})"


def prior_text(prior: Any, unit: str | None = None) -> str:
    """``uniform(lower=-300, upper=300)``, location and scale values in display units."""
    if not isinstance(prior, dict):
        return str(prior) if prior is not None else ""
    prior = dict(prior)
    kind = prior.pop("kind", None) or prior.pop("type", "")
    bounds = prior.pop("bounds", None)
    if isinstance(bounds, (list, tuple)) and len(bounds) == 2:
        prior = {"lower": bounds[0], "upper": bounds[1], **prior}
    scale = display(unit)[0] if kind in ("uniform", "normal", "fixed", "truncnormal") else 1.0
    parts = []
    for k, v in prior.items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            parts.append(f"{k}={v * scale:.4g}")
        else:
            parts.append(f"{k}={v}")
    return f"{kind}({', '.join(parts)})" if parts else kind


def parameter_table(data: dict) -> Table:
    params = data.get("parameters", {})
    ident = data.get("identifiability") or {}
    flagged = set(ident.get("unconstrained", [])) | set(ident.get("not_separable", []))
    rows, flags = [], []
    for name, e in params.items():
        unit = e.get("unit")
        d = digits_for(e)
        rows.append((name, display(unit)[1], fmt(e.get("map"), unit, d),
                     fmt(e.get("median"), unit, d), interval(e, "ci68", d), interval(e, "ci95", d),
                     prior_text(e.get("prior"), unit),
                     "not identifiable" if name in flagged else ""))
        flags.append(name in flagged)
    return Table(("parameter", "unit", "MAP", "median", "68 %", "95 %", "prior", "flag"),
                 tuple(rows), caption="Posterior summary; highlighted rows are parameters the "
                 "data do not constrain (interval nearly as wide as the prior).", flags=tuple(flags))


def directions_table(data: dict) -> tuple:
    """What the record determines, direction by direction (``identifiability.directions``,
    :func:`identification.result.directions`): a sentence and a table, highlighted where a
    combination stays at its prior; empty for results without them."""
    dirs = (data.get("identifiability") or {}).get("directions") or []
    if not dirs:
        return ()
    n_det = sum(d["verdict"] == "determined" for d in dirs)
    at_prior = [d for d in dirs if d["verdict"] == "at prior"]
    text = (f"The record determines {n_det} of the {len(dirs)} directions of the free "
            "parameters (posterior at most half as wide as the prior along them, in units of "
            "each prior's spread)")
    if at_prior:
        text += (f"; {len(at_prior)} stay at their prior, the record does not tell them "
                 "apart: fix one parameter of each such combination, or give it a narrower "
                 "prior.")
    else:
        text += "; none stays at its prior."

    def combo(c: Mapping[str, float]) -> str:
        return " ".join(f"{'+' if v >= 0 else '-'} {abs(v):.2f} {n}"
                        for n, v in c.items()).lstrip("+ ")

    rows = tuple((str(k + 1), f"{d['width']:.3g}", d["verdict"], combo(d["combination"]))
                 for k, d in enumerate(dirs))
    return (Paragraph(text, "warning" if at_prior else "note"),
            Table(("direction", "width / prior", "verdict", "combination (prior-scaled)"),
                  rows, caption="Eigen-directions of the record's information about the free "
                  "parameters, each parameter in units of its prior's spread; highlighted: "
                  "combinations the record leaves at their prior.",
                  flags=tuple(d["verdict"] == "at prior" for d in dirs)))


def missing_note(data: dict, directory: Path,
                 bad: Mapping[str, str] | None = None) -> Paragraph | None:
    """A note naming the files the result says it wrote (``files``) that are not in
    ``directory``, or whose bytes are not those written (``digests``: cut, replaced), and what
    the report leaves out for want of them; None when all are there as written. ``bad`` is
    :func:`recon.results.check_files`'s answer when the caller has it already (the check hashes
    every file)."""
    if bad is None:
        from recon.results import check_files

        bad = check_files(data, directory)
    if not bad:
        return None
    gone = [f"{f} ({why})" for f, why in sorted(bad.items())]
    return Paragraph(f"Incomplete result directory: {', '.join(gone)} in {directory}; the "
                     f"sections drawn from {'it' if len(gone) == 1 else 'them'} are left out "
                     "of this report.", "warning")


def read_fit(directory: Path, name: str = "fit.parquet"):
    path = directory / name
    if not path.exists():
        return None
    from recon.io import read_table

    frame, _ = read_table(path)
    return frame


def channel_figures(fit, events=(), units: dict | None = None, per_figure: int = 3) -> list:
    """One figure per ``per_figure`` channels of a fit table (``NAME``, ``NAME_fit``, band).

    With a ``fitted`` column (a reconstruction's fit table) only the rows of the fitted span
    are drawn: the model was not compared with the others."""
    units = {**_channel_units(), **(units or {})}
    channels = [c for c in fit.columns if f"{c}_fit" in fit.columns]
    figures = []
    if "fitted" in fit.columns:
        fit = fit[fit["fitted"].to_numpy() > 0.5]
    t = fit["t"].to_numpy()
    for start in range(0, len(channels), per_figure):
        chunk = channels[start:start + per_figure]
        fig, axes = new_figure(len(chunk), 1, height_in=1.9 * len(chunk) + 0.4)
        for ax, name in zip(axes[:, 0], chunk):
            y = fit[name].to_numpy()
            m = np.isfinite(y)
            best = fit[f"{name}_fit"].to_numpy()
            band = None
            if f"{name}_lo" in fit.columns:
                lo, hi = fit[f"{name}_lo"].to_numpy()[m], fit[f"{name}_hi"].to_numpy()[m]
                band = (lo, hi)
            binary = set(np.unique(y[m])) <= {0.0, 1.0}
            unit = "1" if binary else units.get(name, "rad/s" if "rate" in name else "")
            scale, shown = display(unit)
            plot_channel_fit(t[m], y[m], t[m], best[m], band, label=name, unit=shown, scale=scale,
                             events=events, binary=binary, ax=ax)
            ax.legend(loc="best", fontsize=6.5)
        what = ("Telemetry (points), best fit (line) and 95 % posterior predictive band: "
                if any(f"{c}_lo" in fit.columns for c in chunk) else
                "Record (points) and best fit (line): ")
        figures.append(figure_png(fig, what + ", ".join(chunk), name=f"fit_{start // per_figure}"))
    return figures


def residual_figure(fit, units: dict | None = None, per_figure: int = 4) -> list:
    """Residual figures (telemetry minus best fit) of the analogue channels, ``per_figure``
    channels each."""
    units = {**_channel_units(), **(units or {})}
    channels = [c for c in fit.columns if f"{c}_fit" in fit.columns]
    analog = [c for c in channels if not set(np.unique(fit[c].dropna())) <= {0.0, 1.0}]
    t = fit["t"].to_numpy()
    figures = []
    for start in range(0, len(analog), per_figure):
        chunk = analog[start:start + per_figure]
        fig, axes = new_figure(len(chunk), 1, height_in=1.5 * len(chunk) + 0.4)
        for ax, name in zip(axes[:, 0], chunk):
            y, best = fit[name].to_numpy(), fit[f"{name}_fit"].to_numpy()
            m = np.isfinite(y) & np.isfinite(best)
            unit = units.get(name, "rad/s" if "rate" in name else "")
            scale, shown = display(unit)
            plot_residuals(t[m], y[m] - best[m], label=name, unit=shown, scale=scale, ax=ax)
        figures.append(figure_png(fig, "Residuals (telemetry minus best fit): " + ", ".join(chunk),
                                  name=f"residuals_{start // per_figure}"))
    return figures
