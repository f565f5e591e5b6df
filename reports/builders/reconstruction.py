"""Post-flight reconstruction report: built from a result directory (``result.json``,
``fit.parquet``, ``trajectory.parquet``, ``chains.h5`` when MCMC ran). Reads results; computes
only order statistics for display (no model is run).
"""
from __future__ import annotations

from collections.abc import Container
from pathlib import Path

import numpy as np

from reports.document import Paragraph, Report, Section, Summary, Table, figure_png, report_date
from reports.figures import new_figure
from reports.builders._common import (channel_figures, directions_table, display, fmt, interval,
                                      missing_note, parameter_table, read_fit, residual_figure,
                                      with_interval)
from reports.figures_recon import plot_band, plot_chain, plot_corner, plot_loop

__all__ = ["build_reconstruction_report", "INITIAL_CONDITIONS"]

#: corner-plot display of the small posterior spreads of a flight: velocities in mm/s, rates in
#: millidegrees per second (spreads of a few 1e-3 deg/s would need long tick labels)
_CORNER_DISPLAY = {"m/s": (1e3, "mm/s"), "rad/s": (180e3 / np.pi, "mdeg/s")}

_TRANSLATION = ("rel_pos_x", "rel_pos_y", "rel_pos_z", "rel_vel_x", "rel_vel_y", "rel_vel_z")
_ROTATION = ("rel_roll", "rel_pitch", "rel_yaw", "rel_rate_x", "rel_rate_y", "rel_rate_z")

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


def _marked(events: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """The events drawn on time axes: the latch closures are left out when capture (all
    latches closed) is there, so the marks stay readable."""
    names = {n for n, _ in events}
    if "capture" in names:
        return [(n, t) for n, t in events if not n.startswith("latch_")]
    return list(events)


def _unit_of(data: dict):
    """The docking unit of a result: ``settings.unit``, else the registered unit whose
    trajectory channels hold the result's (results written before units were named); None
    when there is no such unit."""
    from models.unit import get_unit, unit_names

    name = (data.get("settings") or {}).get("unit")
    if name in unit_names():
        return get_unit(name)
    channels = set((data.get("trajectory") or {}).get("channels") or ())
    for name in unit_names():
        unit = get_unit(name)
        if channels and channels <= set(unit.trajectory_channels):
            return unit
    return None


def _summary(data: dict, events: list[tuple[str, float]], has_capture_channel: bool) -> Summary:
    params = data.get("parameters", {})
    items: list[tuple[str, str]] = []
    capture = dict(events).get("capture")
    entry = next((e for e in data.get("events") or [] if isinstance(e, dict)
                  and e.get("name") == "capture"), {})
    if capture is not None or has_capture_channel or entry:
        if capture is not None:
            text = f"yes, at {capture:.3f} s (telemetry time)"
            if entry.get("ci95"):
                text += f"  (95 %: [{entry['ci95'][0]:.3f}, {entry['ci95'][1]:.3f}])"
            if entry.get("probability") is not None and entry["probability"] < 1:
                text += f"; in {100 * entry['probability']:.0f} % of the posterior draws"
        else:
            text = "no capture in the fitted window"
            if entry.get("probability"):
                text += f" at the MAP (but in {100 * entry['probability']:.0f} % of the draws)"
        items.append(("capture", text))
    for name, label in (("rel_vel_x", "closing velocity"), ("rel_pos_y", "lateral offset y"),
                        ("rel_pos_z", "lateral offset z"), ("rel_pitch", "pitch misalignment"),
                        ("rel_yaw", "yaw misalignment"), ("rel_roll", "roll misalignment")):
        if name in params:
            items.append((label, with_interval(params[name])))
    unit = _unit_of(data)
    for section, name, label in (unit.summary_quantities if unit is not None else ()):
        entry = (data.get(section) or {}).get(name)
        if entry is not None:
            items.append((label, with_interval(entry)))
    diag = data.get("diagnostics", {})
    method = diag.get("method", "")
    status = (diag.get("mcmc") or {}).get("status")
    if method == "laplace":
        how = "Laplace approximation at the MAP (no MCMC run, --mcmc never)"
    elif method == "importance":
        imp = diag.get("importance") or {}
        how = (f"importance sampling with a Laplace-t proposal ({_why_no_mcmc(diag)}); "
               f"effective sample size {imp.get('ess', float('nan')):.0f} of "
               f"{imp.get('n_proposal', 'n/a')}"
               + (f", Pareto k-hat {imp['pareto_k']:.2f}" if imp.get("pareto_k") is not None
                  else ""))
    else:
        how = f"{method}" + (f", sampler {status}" if status else "")
    items.append(("inference", how))
    opt = diag.get("optimizer") or {}
    search = diag.get("search") or {}
    if opt.get("best_cost") is not None and opt.get("n_residuals"):
        text = f"cost {opt['best_cost']:.1f} over {opt['n_residuals']} residuals"
        if search.get("gof_limit") is not None:
            rounds = int(search.get("rounds", 1))
            text += f" (a fit is plausible up to {search['gof_limit']:.0f}"
            text += f"; {rounds} search rounds)" if rounds > 1 else ")"
            if not search.get("plausible", True):
                text += (": IMPLAUSIBLE, the search may have missed the basin or the model does "
                         "not describe the data")
        items.append(("fit", text))
    span = _span_text(data.get("settings", {}))
    if span is not None:
        items.append(("fitted span", span))
    return Summary(tuple(items), title="Key results (median and 95 % interval)")


def _why_no_mcmc(diag: dict) -> str:
    """Why a result has no chains: ``--mcmc never``, or the hybrid rule found the importance
    sampling good enough (``diagnostics.mcmc_skipped``)."""
    if diag.get("mcmc_skipped"):
        return f"not needed: {diag['mcmc_skipped']}"
    return "--mcmc never"


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


#: Trajectory figures: (file stem, caption, panels as rows of (column, label)).
_TRAJECTORY_FIGURES = (
    ("trajectory_translation", "Relative position (left) and velocity (right) of the active "
     "unit in the passive unit frame",
     ((("rel_pos_x", "x position"), ("rel_vel_x", "x velocity")),
      (("rel_pos_y", "y position"), ("rel_vel_y", "y velocity")),
      (("rel_pos_z", "z position"), ("rel_vel_z", "z velocity")))),
    ("trajectory_rotation", "Relative attitude angles (left) and angular rates (right)",
     ((("rel_roll", "roll"), ("rel_rate_x", "x rate")),
      (("rel_pitch", "pitch"), ("rel_rate_y", "y rate")),
      (("rel_yaw", "yaw"), ("rel_rate_z", "z rate")))),
)

_LOAD_FIGURE = ("interface_loads", "Interface force (left) and moment (right) at the passive "
                "unit", ((("interface_force_x", "axial force Fx"),
                          ("interface_moment_x", "torsion Mx")),
                         (("interface_force_y", "lateral force Fy"),
                          ("interface_moment_y", "moment My")),
                         (("interface_force_z", "lateral force Fz"),
                          ("interface_moment_z", "moment Mz"))))


def _read_trajectory(directory: Path, bad: Container[str] = frozenset()):
    """``trajectory.parquet`` and the unit of each column, or None (also when it is not the
    file written with the result: ``bad``, :func:`recon.results.check_files`)."""
    path = directory / "trajectory.parquet"
    if not path.exists() or path.name in bad:
        return None
    from recon.io import read_table

    return read_table(path, {"t": "s", "t_model": "s"})


def _band(frame, name: str, lo: str, hi: str):
    if f"{name}{lo}" in frame.columns and f"{name}{hi}" in frame.columns:
        return frame[f"{name}{lo}"].to_numpy(), frame[f"{name}{hi}"].to_numpy()
    return None


def _history_figure(frame, units: dict, panels, events, caption: str, name: str):
    """A grid of history panels (rows of (column, label)); None when no column is there."""
    rows = [[p for p in row if p[0] in frame.columns] for row in panels]
    rows = [r for r in rows if r]
    if not rows:
        return None
    ncols = max(len(r) for r in rows)
    fig, axes = new_figure(len(rows), ncols, height_in=1.75 * len(rows) + 0.45)
    t = frame["t"].to_numpy()
    first = True
    for i, row in enumerate(rows):
        for j in range(ncols):
            ax = axes[i, j]
            if j >= len(row):
                ax.set_visible(False)
                continue
            col, label = row[j]
            scale, shown = display(units.get(col))
            plot_band(t, frame[col].to_numpy(), _band(frame, col, "_lo", "_hi"),
                      _band(frame, col, "_lo68", "_hi68"), label=label, unit=shown, scale=scale,
                      events=events, label_events=(i == 0), ax=ax)
            if i < len(rows) - 1:
                ax.set_xlabel("")
            if first:
                handles, labels = ax.get_legend_handles_labels()
                first = False
    # one legend for the figure, above the panels, so it hides no curve
    fig.legend(handles, labels, loc="outside upper center", ncol=len(labels), fontsize=7,
               frameon=False)
    return figure_png(fig, caption + ": MAP (line) with the pointwise 68 % and 95 % posterior "
                      "bands; event times marked (telemetry clock).", name=name)


#: absorber loops drawn side by side before the next row starts
_LOOPS_PER_ROW = 3


def _loop_figure(frame, units: dict, unit):
    loops = [lp for lp in (unit.absorber_loops if unit is not None else ())
             if lp[0] in frame.columns and lp[2] in frame.columns]
    if not loops:
        return None
    ncols = min(len(loops), _LOOPS_PER_ROW)
    nrows = -(-len(loops) // ncols)
    fig, axes = new_figure(nrows, ncols, height_in=2.6 * nrows)
    flat = axes.ravel()
    for ax in flat[len(loops):]:
        ax.set_visible(False)
    for ax, (load, load_label, defl, defl_label) in zip(flat, loops):
        ys, yu = display(units.get(load))
        xs, xu = display(units.get(defl))
        plot_loop(frame[defl].to_numpy(), frame[load].to_numpy(), label="MAP",
                  deflection_unit=xu, force_unit=yu, deflection_scale=xs, force_scale=ys,
                  deflection_label=defl_label, force_label=load_label, mark_ends=True,
                  color="#c0392b", lw=0.9, ax=ax)
    axes[0, 0].legend(loc="best", fontsize=6.5)
    return figure_png(fig, "Absorber hysteresis loops of the MAP trajectory (circle: start of "
                      "the window, square: end). The posterior bands of each load are in the "
                      "absorber histories: a band in the loop plane is not drawn because "
                      "deflection and load are uncertain together.", name="absorber_loops")


def _event_table(data: dict):
    rows = []
    for e in data.get("events") or []:
        if not isinstance(e, dict):
            continue
        t = e.get("t")
        ci = e.get("ci95")
        prob = e.get("probability")
        rows.append((str(e.get("name")), "—" if t is None else f"{t:.3f}",
                     "—" if e.get("t_model") is None else f"{e['t_model']:.3f}",
                     "n/a" if not ci else f"[{ci[0]:.3f}, {ci[1]:.3f}]",
                     "n/a" if prob is None else f"{100 * prob:.0f} %"))
    if not rows:
        return None
    return Table(("event", "time at MAP [s]", "from start [s]", "95 % interval [s]",
                  "in draws"), tuple(rows),
                 caption="Events of the MAP trajectory on the telemetry clock, the time from "
                         "the start of the simulated window, and the spread over the posterior "
                         "draws (— : not at the MAP).")


def _trajectory_sections(data: dict, directory: Path, events,
                         bad: Container[str] = frozenset()) -> list[Section]:
    loaded = _read_trajectory(directory, bad)
    info = data.get("trajectory") or {}
    if loaded is None:
        why = "is not the file written with the result" if (
            directory / "trajectory.parquet").exists() else "is missing"
        return [Section("Reconstructed relative trajectory", (Paragraph(
            f"trajectory.parquet {why}: no trajectory, load or absorber figures.",
            "warning"),))]
    frame, units = loaded
    source = {"mcmc": "MCMC samples", "laplace": "Laplace draws (Gaussian at the MAP)",
              "importance": "importance-resampled posterior draws"}.get(
        info.get("source"), info.get("source", "posterior draws"))
    note = Paragraph(f"Bands are pointwise quantiles over {info.get('draws', 'n/a')} "
                     f"{source}" + (f" ({info['failed']} failed simulations left out)"
                                    if info.get("failed") else "") +
                     "; each draw is read on its own clock, so the bands include the timing "
                     "uncertainty.", "note")
    marks = _marked(events)
    unit = _unit_of(data)
    out = []
    blocks = []
    for name, caption, panels in (*_TRAJECTORY_FIGURES,
                                  *(unit.history_figures if unit is not None else ())):
        fig = _history_figure(frame, units, panels, marks, caption, name)
        if fig is not None:
            blocks.append(fig)
    blocks.append(note)
    table = _event_table(data)
    if table is not None:
        blocks.append(table)
    out.append(Section("Reconstructed relative trajectory", tuple(blocks)))
    fig = _history_figure(frame, units, _LOAD_FIGURE[2], marks, _LOAD_FIGURE[1], _LOAD_FIGURE[0])
    if fig is not None:
        out.append(Section("Interface load histories", (fig,)))
    blocks = []
    fig = _loop_figure(frame, units, unit)
    if fig is not None:
        blocks.append(fig)
    if unit is not None and unit.absorber_figure is not None:
        caption, panels = unit.absorber_figure
        fig = _history_figure(frame, units, panels, marks, caption, "absorber_histories")
        if fig is not None:
            blocks.append(fig)
    if not blocks:
        blocks.append(Paragraph("This result has no absorber channels (a forward model without "
                                "absorber outputs): no hysteresis loops.", "note"))
    out.append(Section("Absorber hysteresis loops", tuple(blocks)))
    return out


#: report title suffix and status box heading of a result that is not a reconstruction
_NOT_OK = {"implausible": ("IMPLAUSIBLE FIT", "The fit is implausible: this is not a "
                           "reconstruction"),
           "failed": ("FAILED", "The reconstruction failed")}


def _status_section(data: dict) -> Section | None:
    """The first section of a result whose status is not ``ok``: what went wrong, and that
    the numbers below are the best fit found, not the flight."""
    status = data.get("status", "ok")
    if status not in _NOT_OK:
        return None
    what = data.get("status_reason") or "no reason recorded"
    what = what[:1].upper() + what[1:]
    after = ("The parameter values and intervals below belong to the best fit found; they are "
             "shown for diagnosis and are not a reconstruction of the flight."
             if status == "implausible" else
             "There is no posterior: the parameter table shows the best values the search "
             "reached, without intervals.")
    return Section(_NOT_OK[status][1], (Paragraph(f"{what}.", "warning"),
                                        Paragraph(after, "warning"),
                                        *_hints_blocks(data)))


def _hints_blocks(data: dict) -> tuple:
    """The unit's numbers whose freeing would lower an implausible fit's cost most
    (``diagnostics.mechanism_hints``, :mod:`recon.hints`) and the channels that carry each
    reduction; empty without them."""
    hints = (data.get("diagnostics") or {}).get("mechanism_hints") or {}
    rows = []
    for p in hints.get("parameters") or []:
        rel = p.get("relative_step")
        chans = [(c, v) for c, v in (p.get("channels") or {}).items() if v > 0]
        total = sum(v for _, v in chans) or 1.0
        carried = ", ".join(f"{c} {100 * v / total:.0f} %" for c, v in chans[:3])
        rows.append((p["name"], f"{p['cost_reduction']:.1f}",
                     f"{fmt(p['value'], p.get('unit'))} {display(p.get('unit'))[1]}",
                     f"{100 * rel:+.0f} %" if rel is not None else f"{p['step']:+.3g}",
                     carried))
    if not rows:
        return ()
    return (Paragraph(
        f"Parameters left at the scenario's values, ranked by how much freeing each would "
        f"lower the cost (best fit {hints['best_cost']:.1f}), to first order at the best fit "
        f"(a score test over {hints['considered']} parameters of the unit; recon.hints). A "
        "change of several times the value points at the model's structure rather than "
        "that number.", "note"),
        Table(("parameter", "cost reduction", "scenario value", "change asked for",
               "channels carrying it"), tuple(rows),
              caption="What to free in the next run: the first-order cost reduction of "
              "freeing each parameter with the initial conditions re-fitted."))


def _span_text(settings: dict) -> str | None:
    """The fitted span of ``settings.fit_span`` in words (None for results without it)."""
    span = settings.get("fit_span")
    if not isinstance(span, dict) or span.get("start") is None:
        return None
    why = span.get("reasons") or {}
    text = (f"{span['start']:.3f} ... {span['stop']:.3f} s of the telemetry clock (from "
            f"{why.get('start', '?')} to {why.get('stop', '?')})")
    left = span.get("left_out") or 0
    text += (f"; {left} samples outside it left out" if left else "; no sample left out")
    return text


def build_reconstruction_report(data: dict, path: Path) -> Report:
    """The reconstruction report of ``path`` (a ``result.json``) and the files beside it."""
    from recon.results import check_files

    directory = path.parent
    settings = data.get("settings", {})
    bad = check_files(data, directory)
    fit = None if "fit.parquet" in bad else read_fit(directory)
    events = _events(data, fit)
    has_capture = fit is not None and "capture_fit" in fit.columns
    status = data.get("status", "ok")
    # the parameter table fits under the summary box: page 1 carries the answer
    note = missing_note(data, directory, bad)
    sections = [Section("Summary", (_summary(data, events, has_capture),)
                        + ((note,) if note else ())),
                Section("Parameters", (parameter_table(data), *directions_table(data)))]
    head = _status_section(data)
    warned = data.get("warnings") or []
    if head is None and warned:
        # an answer with qualifications (identification.result): they come before it
        sections.insert(0, Section("Warnings", tuple(
            Paragraph(w[:1].upper() + w[1:] + ("" if w.endswith(".") else "."), "warning")
            for w in warned)))
    if head is not None:
        sections.insert(0, head)
        sections[1] = Section("Summary of the best fit (not a reconstruction)",
                              sections[1].blocks)
        sections[2] = Section("Parameters of the best fit (not a reconstruction)",
                              sections[2].blocks)
    if fit is not None:
        blocks = tuple(channel_figures(fit, _marked(events)))
        residuals = residual_figure(fit)
        sections.append(Section("Telemetry against the reconstruction", blocks))
        if residuals:
            sections.append(Section("Residuals", tuple(residuals)))
    else:
        sections.append(Section("Telemetry against the reconstruction", (
            Paragraph("fit.parquet is " + ("not the file written with the result"
                                           if "fit.parquet" in bad else "missing")
                      + ": no channel figures.", "warning"),)))

    sections += _trajectory_sections(data, directory, events, bad)

    free = _free_names(data)
    diag = data.get("diagnostics", {})
    mcmc = diag.get("mcmc") or {}
    # chains only of an MCMC run: a --mcmc never rerun into an old directory leaves its
    # chains.h5
    chains = _read_chains(directory) if diag.get("method") == "mcmc" else None
    if chains is not None and chains.shape[-1] == len(free):
        burn = chains.shape[0] // 2
        flat = chains[burn:].reshape(-1, chains.shape[-1])
        corners = []
        for group, what in ((_TRANSLATION, "translation: lateral offsets and velocities"),
                            (_ROTATION, "rotation: attitude angles and rates")):
            names = [n for n in group if n in free]
            if len(names) < 2:
                continue
            units = [_CORNER_DISPLAY.get(data["parameters"][n].get("unit"),
                                         display(data["parameters"][n].get("unit")))
                     for n in names]
            cols = [flat[:, free.index(n)] for n in names]
            # deviations from the posterior median: short tick labels, no offset notation
            scaled = np.column_stack([(c - np.median(c)) * u[0] for c, u in zip(cols, units)])
            labels = [f"Δ{n.removeprefix('rel_')} [{u[1]}]" for n, u in zip(names, units)]
            fig = plot_corner(scaled, labels)
            fig.set_size_inches(6.85, 6.85)
            corners.append(figure_png(fig, f"Corner plot of the initial conditions, {what}: "
                                      "deviation from the posterior median (the median is in "
                                      "the parameter table); second half of the chains; 39 % "
                                      "and 86 % contours, dashed: 16, 50, 84 % quantiles",
                                      name=f"corner_{len(corners)}"))
        if corners:
            sections.append(Section("Posterior of the initial conditions", tuple(corners)))
        ncol = 2 if len(free) > 4 else 1
        nrow = -(-len(free) // ncol)
        fig, axes = new_figure(nrow, ncol, height_in=0.95 * nrow + 0.5, sharex=True)
        for j, name in enumerate(free):
            ax = axes[j % nrow, j // nrow]
            unit = data["parameters"][name].get("unit")
            scale, shown = display(unit)
            plot_chain(chains[:, :, j], label=name, unit=shown, scale=scale, burn=burn, ax=ax)
            if j % nrow < nrow - 1:
                ax.set_xlabel("")
        for j in range(len(free), nrow * ncol):
            axes[j % nrow, j // nrow].set_visible(False)
        trace = figure_png(fig, "Walker traces of every free parameter (grey: discarded half)",
                           name="chains")
        # R-hat is undefined (None) for one ensemble: shown "n/a"
        rows = tuple((n, fmt((mcmc.get("tau") or {}).get(n), None, 3),
                      fmt((mcmc.get("ess") or {}).get(n), None, 4),
                      fmt((mcmc.get("rhat") or {}).get(n), None, 5)) for n in free)
        conv = Table(("parameter", "autocorrelation time [steps]", "effective samples",
                      "split R-hat"), rows)
        status = Paragraph(f"Sampler stopped: {mcmc.get('status', 'n/a')} "
                           f"({mcmc.get('reason', '')}); {mcmc.get('steps', 'n/a')} steps; "
                           f"acceptance fraction per ensemble "
                           f"{', '.join(f'{a:.2f}' for a in mcmc.get('acceptance_fraction', []))}.")
        sections.append(Section("Chains and convergence", (trace, status, conv)))
    elif diag.get("method") == "laplace":
        sections.append(Section("Chains and convergence", (Paragraph(
            "No MCMC run (--mcmc never): intervals are Laplace, i.e. from the Gaussian "
            "approximation of the posterior at the MAP (inverse Gauss-Newton Hessian, clipped "
            "to the prior bounds). No corner plot or chain traces.", "note"),)))
    elif diag.get("method") == "importance":
        imp = diag.get("importance") or {}
        sections.append(Section("Chains and convergence", (Paragraph(
            f"No MCMC run ({_why_no_mcmc(diag)}): intervals are from importance sampling of "
            "the posterior "
            f"with {imp.get('n_proposal', 'n/a')} draws of a Student-t proposal "
            f"(df {imp.get('df', 'n/a')}) centred on the MAP with the inverse Gauss-Newton "
            f"Hessian inflated by {imp.get('inflate', 'n/a')}, each weighted by posterior / "
            f"proposal; effective sample size {imp.get('ess', float('nan')):.0f}. No corner "
            "plot or chain traces.", "note"),)))
    else:
        sections.append(Section("Chains and convergence", (Paragraph(
            f"No chains in this result directory (method: {diag.get('method', 'n/a')}): no "
            "corner plot or chain traces.", "warning"),)))

    loads = data.get("loads") or {}
    energy = data.get("energy") or {}
    rows = tuple((name, display(e.get("unit"))[1], fmt(e.get("map"), e.get("unit")),
                  fmt(e.get("median"), e.get("unit")), interval(e, "ci68"), interval(e, "ci95"))
                 for group in (loads, energy) for name, e in group.items() if isinstance(e, dict))
    if rows:
        sections.append(Section("Interface loads and energy", (Table(
            ("quantity", "unit", "MAP", "median", "68 %", "95 %"), rows,
            caption="Peak interface loads at the passive unit, peak absorber loads and the "
                    "energy ledger of the absorbers, over posterior draws."),)))

    versions = data.get("versions", {})
    rows = tuple((k, str(v)) for k, v in settings.items() if not isinstance(v, (dict, list))) + \
        (("fitted span", _span_text(settings) or "n/a"), ("seed", str(data.get("seed")))) + \
        tuple((k, str(v)) for k, v in versions.items())
    sections.append(Section("Settings, seed and versions", (Table(("item", "value"), rows),)))
    span = (settings.get("fit_span") or {}).get("samples")
    if isinstance(span, dict) and span:
        sections[-1] = Section(sections[-1].title, sections[-1].blocks + (Table(
            ("channel", "fitted", "left out before", "left out after"),
            tuple((c, str(v.get("fitted")), str(v.get("before")), str(v.get("after")))
                  for c, v in span.items()),
            caption="Telemetry samples of each fitted channel inside the fitted span and "
                    "outside it (never compared with the model)."),))

    defaulted = settings.get("defaults") or []
    noise = settings.get("noise") or {}
    if defaulted or noise:
        blocks = []
        if defaulted:
            blocks.append(Paragraph("No run configuration gave these tables; the documented "
                                    "defaults did (recon.config): " + "; ".join(defaulted)
                                    + "."))
        if noise:
            blocks.append(Table(
                ("channel", "sigma used", "point estimate", "quantum", "samples", "from"),
                tuple((c, fmt(v.get("sigma"), None) if v.get("sigma") is not None else "stated",
                       fmt(v.get("sigma_point"), None) if v.get("sigma_point") is not None
                       else "",
                       fmt(v.get("quantum"), None) if v.get("quantum") is not None
                       else "stated",
                       str(v.get("samples", "")), str(v.get("method", "")))
                      for c, v in noise.items()),
                caption='Sensor noise estimated from the record (sigma = "auto", SI: the '
                        "channel's unit; a 0/1 channel's sigma is its switch timing [s]). "
                        "The likelihood uses the 84 % upper confidence bound of each "
                        "estimate, not the point (recon.noise): a noise set too low would "
                        "make the intervals too narrow."))
        sections[-1] = Section(sections[-1].title, sections[-1].blocks + tuple(blocks))

    tel = settings.get("telemetry", "")
    title = "Post-flight docking reconstruction"
    if status in _NOT_OK:
        title += f": {_NOT_OK[status][0]}"
    elif warned:
        title += " (with warnings)"
    return Report(title=title, subtitle=f"{Path(str(tel)).name or directory.name}",
                  date=report_date(), sections=tuple(sections))
