"""Report of a resonance-test identification (the OUT.json of ``dockrecon identify resonance``).

Reads the result only. For a synthetic record shipped with dockrecon (a ``<record>.truth.json``
beside the record named in ``settings.record``) the true curves are drawn too.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np

from models.errors import InputError
from reports.document import Paragraph, Report, Section, Summary, Table, figure_png, report_date

log = logging.getLogger(__name__)

__all__ = ["build_resonance_report", "jump_positions"]


def _array(data: dict, group: str, key: str, path: Path) -> np.ndarray:
    try:
        return np.asarray(data[group][key], dtype=float)
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"missing or non-numeric key '{group}.{key}' ({exc})",
                         source=str(path)) from None


def jump_positions(b: np.ndarray, jumps: list[dict]) -> list[float]:
    """Window-index positions (half-integers) between the last amplitude <= ``b_before`` and
    the next one, for each jump of the (ascending) amplitude sequence ``b`` [m]."""
    return [float(np.searchsorted(b, j["b_before"], side="right")) - 0.5 for j in jumps]


def _truth(settings: dict, path: Path):
    """True (phi, H) callables when the record is a shipped synthetic one, else None."""
    record = settings.get("record")
    if not record:
        return None
    rec = Path(record)
    candidates = [rec, path.parent / rec, Path.cwd() / rec]
    # records named relative to the repository root (shipped samples)
    candidates.append(Path(__file__).resolve().parents[2] / rec)
    for cand in candidates:
        truth = cand.with_suffix(".truth.json")
        if truth.exists():
            try:
                from identification.resonance.laws import damping_law, restoring_law

                p = json.loads(truth.read_text())["parameters"]
                return restoring_law(p), damping_law(p)
            except (KeyError, ValueError, TypeError) as exc:
                log.warning("%s: not compared with the truth (%s: %s)", truth,
                            exc.__class__.__name__, exc)
                return None
    return None


def _truth_note(truth, x, f, v, H) -> Paragraph:
    """The largest relative error against the truth, or why it could not be computed: the
    comparison with a shipped truth is a courtesy, and its failure never fails the report of
    an identification that succeeded."""
    try:
        with np.errstate(all="ignore"):
            m = np.abs(truth[0](x)) > 0.1 * np.abs(truth[0](x)).max()
            mh = np.abs(truth[1](v)) > 0.1 * np.abs(truth[1](v)).max()
            ef = np.max(np.abs(f[m] - truth[0](x[m])) / np.abs(truth[0](x[m])))
            eh = np.max(np.abs(H[mh] - truth[1](v[mh])) / np.abs(truth[1](v[mh])))
        if not (np.isfinite(ef) and np.isfinite(eh)):
            raise ValueError("no finite comparison")
    except (ValueError, TypeError, IndexError) as exc:
        return Paragraph(f"Not compared with the truth: {exc}.", kind="note")
    return Paragraph(
        f"Largest relative error against the truth where it exceeds 10 % of its maximum "
        f"(kinks included): restoring force {100 * ef:.2f} %, damping {100 * eh:.2f} %.",
        kind="note")


def _refined(data: dict) -> bool:
    """Whether the written curves are the refined ones (the policy of
    ``identification.resonance.pipeline``, or an older file's ``refine`` flag)."""
    pol = data.get("refinement_policy")
    if pol is not None:
        return bool(pol.get("applied"))
    return (data.get("settings", {}) or {}).get("refine") is True


def _fmt(v, spec: str = ".4g") -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return format(v, spec)
    return str(v)


def build_resonance_report(data: dict, path: Path) -> Report:
    """Summary (method, frequency, mass, amplitude range, jumps), the amplitude sequence, the
    identified restoring and damping forces (with the truth when known), settings, versions."""
    from reports.figures import new_figure
    from reports.figures_resonance import (plot_amplitude_sequence, plot_damping,
                                           plot_restoring_force)

    path = Path(path)
    settings = data.get("settings", {}) or {}
    x = _array(data, "restoring_force", "x", path)
    f = _array(data, "restoring_force", "f", path)
    v = _array(data, "damping", "v", path)
    H = _array(data, "damping", "H", path)
    b = _array(data, "amplitude_sequence", "b", path)
    theta = _array(data, "amplitude_sequence", "theta", path)
    omega2 = _array(data, "amplitude_sequence", "omega2", path)
    jumps = list(data.get("jumps", []) or [])
    nu = settings.get("frequency_rad_s")

    items = [
        ("record", str(settings.get("record", "—"))),
        ("method", f"{settings.get('method', '—')}"
                   f"{' + refinement' if _refined(data) else ''}"),
        ("excitation frequency ν", f"{_fmt(nu)} rad/s ({settings.get('frequency_source', '—')})"
         if nu is not None else "—"),
        ("reduced mass μ", f"{_fmt(settings.get('mass_kg'))} kg"),
        ("windows", str(len(b))),
        ("amplitude range b", f"{b.min() * 1e3:.4g} – {b.max() * 1e3:.4g} mm"),
        ("amplitude jumps", str(len(jumps))),
    ]
    pol = data.get("refinement_policy") or {}
    if "change_restoring_percent" in pol:
        items.append(("refinement",
                      f"changed the restoring force by up to {pol['change_restoring_percent']:.3g} %"
                      f" and the damping by up to {pol['change_damping_percent']:.3g} %: "
                      f"{'applied' if pol.get('applied') else 'not applied'} "
                      f"({pol.get('reason', '')})"))
    elif pol:
        items.append(("refinement", str(pol.get("reason", "not run"))))
    am = (data.get("added_mass") or {}).get("reduced_mass")
    if am:
        items.append(("reduced mass (added-mass method)",
                      f"{am['map']:.5g} kg, 95 % [{am['ci95'][0]:.5g}, {am['ci95'][1]:.5g}]"))
    ref = settings.get("refinement")
    if ref:
        items.append(("refinement: rms residual",
                      f"{ref['rms_before_m'] * 1e6:.3g} → {ref['rms_after_m'] * 1e6:.3g} µm "
                      f"({ref['simulations']} simulations)"))
    summary = Summary(items=tuple(items), title="Result")

    truth = _truth(settings, path)
    blocks_id = []
    fig, axes = new_figure(3, 1, height_in=5.2, sharex=True)
    marks = jump_positions(b, jumps)
    plot_amplitude_sequence(b, theta, omega2, jumps=marks, axes=list(axes[:, 0]))
    seq_fig = figure_png(fig, "Amplitude sequence: first-harmonic amplitude b, phase θ and "
                         "ω² per analysis window (ascending b)"
                         + ("; dashed: amplitude jumps." if jumps else "."),
                         name="amplitude_sequence")

    def band(group):
        g = data.get(group, {}) or {}
        keys = ("lo95", "lo68", "hi68", "hi95")
        return tuple(np.asarray(g[k], float) for k in keys) if all(k in g for k in keys) \
            else None

    gaps = [tuple(g) for g in data.get("gaps", []) or []] or \
        [(j["b_before"], j["b_after"]) for j in jumps]
    interp = data["restoring_force"].get("interpolated")
    fig, axes = new_figure(1, 2, height_in=3.0)
    plot_restoring_force(x, f, truth=(x, truth[0](x)) if truth else None,
                         b_range=(float(b.min()), float(b.max())), gaps=gaps,
                         band=band("restoring_force"),
                         interpolated=None if interp is None else np.asarray(interp, bool),
                         ax=axes[0, 0])
    plot_damping(v, H, truth=(v, truth[1](v)) if truth else None, band=band("damping"),
                 ax=axes[0, 1])
    cap = ("Identified restoring force φ(x) and damping force H(v)"
           + (" against the true curves of the synthetic record" if truth else "")
           + (" with 68 % and 95 % bands (bootstrap over the window-to-window scatter; "
              "noise only, not the method's bias)" if band("restoring_force") else "") + ".")
    if gaps:
        cap += (" Jumps: no data between " + "; ".join(
            f"{lo * 1e3:.3g} and {hi * 1e3:.3g} mm" for lo, hi in gaps)
            + " (hatched; the force there is interpolated, dashed, not identified).")
    forces_fig = figure_png(fig, cap, name="forces")
    blocks_id.append(forces_fig)
    if truth:
        blocks_id.append(_truth_note(truth, x, f, v, H))

    def gap_text(j):
        g = j.get("gap")
        if not g or g[0] is None:
            return "—"
        return f"{g[0] * 1e3:.4g} – {g[1] * 1e3:.4g}"

    jump_rows = tuple((f"{j['t_before']:.4g}", f"{j['t_after']:.4g}",
                       f"{j['b_before'] * 1e3:.4g}", f"{j['b_after'] * 1e3:.4g}",
                       gap_text(j), f"{j.get('windows_dropped', '—')}",
                       f"{j.get('windows_settling', '—')}"
                       + (f" ({j['settle_s']:.3g} s)" if "settle_s" in j else ""))
                      for j in jumps)
    seq_blocks: list = [seq_fig]
    if jump_rows:
        seq_blocks.append(Table(columns=("t before [s]", "t after [s]", "b before [mm]",
                                         "b after [mm]", "gap: no data [mm]",
                                         "windows straddling", "windows settling"),
                                rows=jump_rows, caption="Amplitude jumps: b before / after are "
                                "the windows either side of the jump; the gap runs between the "
                                "amplitudes kept either side, the settling windows after the "
                                "jump (3 free-decay time constants 2μ/λ) being left out",
                                flags=tuple(True for _ in jump_rows)))
        seq_blocks.append(Paragraph("The amplitude jumped: the forces in the gap were not "
                                    "measured; they are interpolated there, not identified.",
                                    kind="warning"))

    flat = []
    for k, val in settings.items():
        if isinstance(val, dict):
            flat += [(f"{k}.{k2}", _fmt(v2)) for k2, v2 in val.items()]
        else:
            flat.append((k, _fmt(val)))
    vers = tuple((k, str(val)) for k, val in (data.get("versions", {}) or {}).items())
    sections = (
        Section("Summary", (summary,)),
        Section("Amplitude sequence", tuple(seq_blocks)),
        Section("Identified forces", tuple(blocks_id)),
        Section("Settings and versions", (
            Table(columns=("setting", "value"), rows=tuple(flat), caption="Settings"),
            Table(columns=("package", "version"), rows=vers, caption="Versions"))),
    )
    return Report(title="Resonance-test identification",
                  subtitle=f"{Path(str(settings.get('record', path))).name} — one mode, "
                           "Abel inversion of the amplitude sequence",
                  date=report_date(), sections=sections)
