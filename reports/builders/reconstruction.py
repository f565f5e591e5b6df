"""Post-flight reconstruction report: built from a result directory (``result.json``,
``fit.parquet``, ``chains.h5`` when MCMC ran). Reads results; computes only order statistics
for display (no model is run).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from reports.build import register_builder
from reports.document import Paragraph, Report, Section, Summary, Table, figure_png, report_date
from reports.figures import new_figure
from reports.builders._common import (channel_figures, display, fmt, interval, parameter_table,
                                      read_fit, residual_figure, with_interval)
from reports.figures_recon import plot_chain, plot_corner

__all__ = ["build_reconstruction_report", "INITIAL_CONDITIONS"]

INITIAL_CONDITIONS = ("rel_pos_x", "rel_pos_y", "rel_pos_z", "rel_vel_x", "rel_vel_y", "rel_vel_z",
                      "rel_roll", "rel_pitch", "rel_yaw", "rel_rate_x", "rel_rate_y", "rel_rate_z")

def _events(data: dict, fit=None) -> list[tuple[str, float]]:
    """Events of the best fit: the result's ``events`` when present, else the switching times
    of the fitted binary channels (``capture_fit``, ``latch_k_fit``, ...) in telemetry time."""
    events = data.get("events") or {}
    if not events and fit is not None:
        t = fit["t"].to_numpy()
        out = []
        for name in ("contact", "bottom_contact", "capture"):
            col = f"{name}_fit"
            if col in fit.columns:
                v = fit[col].to_numpy()
                m = np.isfinite(v)
                on = np.flatnonzero(v[m] >= 0.5)
                if on.size:
                    out.append((name, float(t[m][on[0]])))
        return out
    if isinstance(events, dict):
        events = [{"name": k, "t": v} for k, v in events.items()]
    out = []
    for ev in events:
        t = ev.get("t") if isinstance(ev, dict) else None
        if t is not None and np.isfinite(t):
            out.append((str(ev["name"]), float(t)))
    return out


def _summary(data: dict, events: list[tuple[str, float]], has_capture_channel: bool) -> Summary:
    params = data.get("parameters", {})
    items: list[tuple[str, str]] = []
    capture = dict(events).get("capture")
    if capture is not None or has_capture_channel:
        items.append(("capture", f"yes, at {capture:.3f} s (telemetry time)" if capture is not None
                      else "no capture in the fitted window"))
    for name, label in (("rel_vel_x", "closing velocity"), ("rel_pos_y", "lateral offset y"),
                        ("rel_pos_z", "lateral offset z"), ("rel_pitch", "pitch misalignment"),
                        ("rel_yaw", "yaw misalignment"), ("rel_roll", "roll misalignment")):
        if name in params:
            items.append((label, with_interval(params[name])))
    loads = data.get("loads") or {}
    for name, label in (("peak_axial_force", "peak axial force"), ("peak_lateral_force",
                        "peak lateral force"), ("peak_bending_moment", "peak bending moment"),
                        ("peak_torsion_moment", "peak torsion moment")):
        if name in loads:
            items.append((label, with_interval(loads[name])))
    energy = data.get("energy") or {}
    for name, label in (("dissipated_brake", "energy absorbed by the brake"),
                        ("stored_final", "energy stored in the springs (end)"),
                        ("dissipated_hysteresis", "energy dissipated by spring hysteresis"),
                        ("kinetic_initial", "initial relative kinetic energy")):
        if name in energy:
            items.append((label, with_interval(energy[name])))
    diag = data.get("diagnostics", {})
    method = diag.get("method", "")
    status = (diag.get("mcmc") or {}).get("status")
    items.append(("inference", f"{method}" + (f", sampler {status}" if status else "")))
    return Summary(tuple(items), title="Key results (median and 95 % interval)")


def _read_chains(directory: Path):
    path = directory / "chains.h5"
    if not path.exists():
        return None
    import emcee
    import h5py

    with h5py.File(path, "r") as fh:
        groups = sorted(k for k in fh.keys() if k.startswith("ensemble_"))
    chains = []
    for name in groups:
        backend = emcee.backends.HDFBackend(str(path), name=name, read_only=True)
        if backend.iteration > 0:
            chains.append(backend.get_chain())  # (steps, walkers, d), only steps taken
    if not chains:
        return None
    steps = min(c.shape[0] for c in chains)
    return np.concatenate([c[:steps] for c in chains], axis=1)  # (steps, walkers, d)


def _free_names(data: dict) -> list[str]:
    return [n for n, e in data.get("parameters", {}).items()
            if (e.get("prior") or {}).get("kind") != "fixed"]


def build_reconstruction_report(data: dict, path: Path) -> Report:
    """The reconstruction report of ``path`` (a ``result.json``) and the files beside it."""
    directory = path.parent
    settings = data.get("settings", {})
    fit = read_fit(directory)
    events = _events(data, fit)
    has_capture = fit is not None and "capture_fit" in fit.columns
    sections = [Section("Summary", (_summary(data, events, has_capture),))]
    if fit is not None:
        blocks = tuple(channel_figures(fit, events))
        residuals = residual_figure(fit)
        sections.append(Section("Telemetry against the reconstruction", blocks))
        if residuals:
            sections.append(Section("Residuals", tuple(residuals)))
    else:
        sections.append(Section("Telemetry against the reconstruction",
                                (Paragraph("fit.parquet is missing: no channel figures.", "warning"),)))

    sections.append(Section("Parameters", (parameter_table(data),)))

    free = _free_names(data)
    chains = _read_chains(directory)
    diag = data.get("diagnostics", {})
    mcmc = diag.get("mcmc") or {}
    ic_free = [n for n in INITIAL_CONDITIONS if n in free]
    if chains is not None and chains.shape[-1] == len(free):
        burn = chains.shape[0] // 2
        flat = chains[burn:].reshape(-1, chains.shape[-1])
        idx = [free.index(n) for n in ic_free]
        units = [data["parameters"][n].get("unit") for n in ic_free]
        scaled = np.column_stack([flat[:, i] * display(u)[0] for i, u in zip(idx, units)])
        labels = [f"{n} [{display(u)[1]}]" for n, u in zip(ic_free, units)]
        fig = plot_corner(scaled, labels)
        fig.set_size_inches(6.85, 6.85)
        sections.append(Section("Posterior of the initial conditions",
                                (figure_png(fig, "Corner plot of the initial conditions (second "
                                            "half of the chains; 39 % and 86 % contours)",
                                            name="corner"),)))
        fig, axes = new_figure(len(free), 1, height_in=0.9 * len(free) + 0.5)
        for j, (ax, name) in enumerate(zip(axes[:, 0], free)):
            unit = data["parameters"][name].get("unit")
            scale, shown = display(unit)
            plot_chain(chains[:, :, j], label=name, unit=shown, scale=scale, burn=burn, ax=ax)
            if j < len(free) - 1:
                ax.set_xlabel("")
        trace = figure_png(fig, "Walker traces of every free parameter (grey: discarded half)",
                           name="chains")
        rows = tuple((n, f"{(mcmc.get('tau') or {}).get(n, float('nan')):.3g}",
                      f"{(mcmc.get('ess') or {}).get(n, float('nan')):.4g}",
                      f"{(mcmc.get('rhat') or {}).get(n, float('nan')):.4f}") for n in free)
        conv = Table(("parameter", "autocorrelation time [steps]", "effective samples",
                      "split R-hat"), rows)
        status = Paragraph(f"Sampler stopped: {mcmc.get('status', 'n/a')} "
                           f"({mcmc.get('reason', '')}); {mcmc.get('steps', 'n/a')} steps; "
                           f"acceptance fraction per ensemble "
                           f"{', '.join(f'{a:.2f}' for a in mcmc.get('acceptance_fraction', []))}.")
        sections.append(Section("Chains and convergence", (trace, status, conv)))
    else:
        sections.append(Section("Chains and convergence", (Paragraph(
            f"No MCMC chains in this result (method: {diag.get('method', 'n/a')}); intervals come "
            "from the Laplace approximation at the optimum.", "note"),)))

    loads = data.get("loads") or {}
    energy = data.get("energy") or {}
    rows = tuple((name, display(e.get("unit"))[1], fmt(e.get("map"), e.get("unit")),
                  fmt(e.get("median"), e.get("unit")), interval(e, "ci68"), interval(e, "ci95"))
                 for group in (loads, energy) for name, e in group.items() if isinstance(e, dict))
    if rows:
        sections.append(Section("Interface loads and energy", (Table(
            ("quantity", "unit", "MAP", "median", "68 %", "95 %"), rows,
            caption="Peak interface loads at the passive unit and the energy ledger of the "
                    "absorbers, over posterior draws."),)))

    versions = data.get("versions", {})
    rows = tuple((k, str(v)) for k, v in settings.items() if not isinstance(v, (dict, list))) + \
        (("seed", str(data.get("seed"))),) + tuple((k, str(v)) for k, v in versions.items())
    sections.append(Section("Settings, seed and versions", (Table(("item", "value"), rows),)))

    tel = settings.get("telemetry", "")
    return Report(title="Post-flight docking reconstruction",
                  subtitle=f"{Path(str(tel)).name or directory.name}",
                  date=report_date(), sections=tuple(sections))


register_builder("reconstruction", build_reconstruction_report,
                 signature=("parameters", "diagnostics", "loads"))
