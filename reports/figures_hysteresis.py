"""Figures of static hysteresis tests: the load-deflection loop, the fitted model, its tables.

Matplotlib with the Agg backend (no display needed). Functions take arrays in SI and return
the Axes they drew on; saving is the caller's job (through :func:`recon.io.atomic_path`).
"""
from __future__ import annotations

from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

__all__ = ["plot_hysteresis_loop", "hysteresis_fit_figure", "plot_residual_per_sample"]

# display scale per SI unit of q and Q: (factor, label)
_DISPLAY = {"m": (1e3, "mm"), "rad": (1.0, "rad"), "N": (1.0, "N"), "N*m": (1.0, "N m")}


def plot_hysteresis_loop(q: np.ndarray, force: np.ndarray, *, model: np.ndarray | None = None,
                         element=None, units: Sequence[str] = ("m", "N"), ax=None,
                         title: str | None = None, label: str = "measured"):
    """Load-deflection loop: measured samples, the model force along the same path and the
    element's branch nodes.

    Parameters
    ----------
    q, force : array
        Deformation [m or rad] and measured force [N or N m], in sample order.
    model : array, optional
        Model force at each sample [N or N m] (drawn as a line in sample order).
    element : HysteresisElement, optional
        Its forward / backward nodes are marked (shifted tables are not drawn for brakes).
    units : (str, str)
        SI units of q and force; linear deflections are shown in mm.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on (a new figure when omitted).

    Returns
    -------
    matplotlib.axes.Axes
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 5.0))
    qs, qlabel = _DISPLAY.get(units[0], (1.0, units[0]))
    fs, flabel = _DISPLAY.get(units[1], (1.0, units[1]))
    q = np.asarray(q, dtype=float)
    ax.plot(q * qs, np.asarray(force) * fs, ".", ms=2.0, color="0.6", label=label, zorder=1)
    if model is not None:
        ax.plot(q * qs, np.asarray(model) * fs, "-", lw=1.2, color="C0", label="fitted model",
                zorder=2)
    if element is not None:
        first = True
        for side in (element.positive, element.negative):
            for br, mk, col, name in (
                    (side.forward, "^", "C3", "forward nodes (initial tables)"),
                    (side.backward, "v", "C2", "backward nodes (initial tables)")):
                ax.plot(np.asarray(br.q) * qs, np.asarray(br.Q) * fs, mk, ms=6, color=col,
                        mec="k", mew=0.5, ls="none", zorder=3,
                        label=name if first else None)
            first = False
    ax.axhline(0.0, color="k", lw=0.5)
    ax.axvline(0.0, color="k", lw=0.5)
    kind = "deflection" if units[0] == "m" else "angle"
    ax.set_xlabel(f"{kind} q [{qlabel}]")
    ax.set_ylabel(f"{'force' if units[1] == 'N' else 'moment'} Q [{flabel}]")
    if title:
        ax.set_title(title)
    ax.grid(True, lw=0.3)
    ax.legend(loc="upper left", fontsize=8)
    return ax


def hysteresis_fit_figure(q: np.ndarray, force: np.ndarray, model: np.ndarray, element, *,
                          rms: float | None = None, title: str | None = None):
    """Two panels: the loop with the fitted model and nodes, and the residual per sample.

    ``model`` is the fitted element's force at each sample [N or N m] (the ``fitted`` section
    of a hysteresis result), ``element`` the fitted element, ``rms`` the residual RMS.
    Returns the Figure.
    """
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(8.0, 8.0), height_ratios=(3, 1),
                                 layout="constrained")
    units = element.units[:2]
    plot_hysteresis_loop(q, force, model=model, element=element, units=units, ax=a1,
                         title=title)
    plot_residual_per_sample(np.asarray(force) - np.asarray(model), unit=units[1], rms=rms,
                             ax=a2)
    return fig


def plot_residual_per_sample(residual: np.ndarray, *, unit: str = "N", rms: float | None = None,
                             ax=None):
    """Measured minus model force [N or N m] against sample number, titled with the RMS."""
    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 2.5))
    fs, flabel = _DISPLAY.get(unit, (1.0, unit))
    res = np.asarray(residual, dtype=float) * fs
    ax.plot(np.arange(res.size), res, ".", ms=1.5, color="0.4")
    ax.axhline(0.0, color="k", lw=0.5)
    ax.set_xlabel("sample")
    ax.set_ylabel(f"measured - model [{flabel}]")
    if rms is not None:
        ax.set_title(f"residual RMS {rms * fs:.3g} {flabel} ({res.size} samples)", fontsize=9)
    ax.grid(True, lw=0.3)
    return ax
