"""Figures of resonance-test identification (``dockrecon identify resonance``).

Functions take arrays in SI, draw on ``ax`` (a new figure when ``None``) and return the Axes;
they compute nothing but unit scaling. Displacements are shown in mm, velocities in mm/s.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from reports.figures import axes_or_new

__all__ = ["plot_amplitude_sequence", "plot_restoring_force", "plot_damping",
           "mark_jumps"]


def mark_jumps(ax, jumps: Sequence[int], *, label: bool = True):
    """Vertical dashed lines at the window indices where the amplitude jumps (fold of the
    resonance curve); the first carries the legend label ``jump``."""
    for k, j in enumerate(jumps):
        ax.axvline(float(j), color="C3", ls="--", lw=0.9,
                   label="jump" if (label and k == 0) else None)
    return ax


def plot_amplitude_sequence(b: np.ndarray, theta: np.ndarray, omega2: np.ndarray, *,
                            jumps: Sequence[int] = (), axes=None):
    """Amplitude b [mm], phase lag theta [rad] and the squared-frequency estimate
    omega^2 [rad^2/s^2] against the window index, on three stacked Axes.

    Parameters
    ----------
    b, theta, omega2 : array
        Per-window amplitude [m], phase [rad], omega^2 [1/s^2].
    jumps : sequence of int
        Window indices of amplitude jumps, marked on every panel.
    axes : sequence of 3 Axes, optional
        Where to draw (a new 3-row figure when omitted).

    Returns
    -------
    list of matplotlib.axes.Axes
    """
    if axes is None:
        from reports.figures import new_figure

        _, grid = new_figure(3, 1, height_in=5.2, sharex=True)
        axes = list(grid[:, 0])
    k = np.arange(len(b))
    series = ((np.asarray(b) * 1e3, "amplitude b [mm]", "C0"),
              (np.asarray(theta), "phase θ [rad]", "C1"),
              (np.asarray(omega2), "ω² [rad²/s²]", "C2"))
    for ax, (y, lab, col) in zip(axes, series):
        ax.plot(k, y, ".-", ms=2.5, color=col, label=lab.split(" [")[0])
        ax.set_ylabel(lab)
        mark_jumps(ax, jumps)
        ax.legend(loc="best")
    axes[-1].set_xlabel("window index")
    return axes


def _band(ax, x, band, color):
    """95 % (light) and 68 % (darker) bands ``band = (lo95, lo68, hi68, hi95)``."""
    if band is None:
        return
    lo95, lo68, hi68, hi95 = (np.asarray(b, float) for b in band)
    ax.fill_between(x, lo95, hi95, color=color, alpha=0.15, lw=0, label="95 % band")
    ax.fill_between(x, lo68, hi68, color=color, alpha=0.3, lw=0, label="68 % band")


def plot_restoring_force(x: np.ndarray, f: np.ndarray, *, truth: tuple | None = None,
                         b_range: tuple[float, float] | None = None,
                         gaps: Sequence[tuple[float, float]] = (), band=None,
                         interpolated: np.ndarray | None = None, ax=None):
    """Identified restoring force phi(x) [N] against x [mm], with the truth when given.

    Parameters
    ----------
    x, f : array
        Displacement [m] and identified force [N].
    truth : (x [m], f [N]), optional
        Reference curve (synthetic records).
    b_range : (b_min, b_max) [m], optional
        Measured amplitude range: below b_min (shaded) the force is extrapolated.
    gaps : sequence of (b_before, b_after) [m]
        Amplitude jumps: no data for b_before < |x| < b_after (hatched).
    band : (lo95, lo68, hi68, hi95) [N], optional
        Uncertainty bands at ``x``.
    interpolated : bool array, optional
        Points of ``x`` where the force is interpolated across a gap (drawn dashed).
    """
    ax = axes_or_new(ax)
    x = np.asarray(x) * 1e3
    if b_range is not None:
        lo, hi = b_range[0] * 1e3, b_range[1] * 1e3
        ax.axvspan(-lo, lo, color="0.9", zorder=0, label="below first amplitude")
    for k, (lo, hi) in enumerate(gaps):
        for sgn in (-1, 1):
            ax.axvspan(sgn * lo * 1e3, sgn * hi * 1e3, facecolor="none", edgecolor="C3",
                       hatch="//", lw=0.0, alpha=0.35, zorder=0,
                       label="jump: no data" if (k == 0 and sgn == 1) else None)
    if truth is not None:
        ax.plot(np.asarray(truth[0]) * 1e3, truth[1], "-", color="0.55", lw=2.4,
                label="truth")
    _band(ax, x, band, "C0")
    f = np.asarray(f, float)
    if interpolated is not None and np.any(interpolated):
        ident = np.where(np.asarray(interpolated, bool), np.nan, f)
        ax.plot(x, f, "--", color="C0", lw=0.9, label="interpolated (gap)")
        ax.plot(x, ident, "-", color="C0", label="identified")
    else:
        ax.plot(x, f, "-", color="C0", label="identified")
    ax.set_xlabel("displacement x [mm]")
    ax.set_ylabel("restoring force φ(x) [N]")
    ax.legend(loc="best")
    return ax


def plot_damping(v: np.ndarray, H: np.ndarray, *, truth: tuple | None = None, band=None,
                 ax=None):
    """Identified damping force H(v) [N] against velocity amplitude v [mm/s], with truth and
    the uncertainty bands ``band = (lo95, lo68, hi68, hi95)`` [N] when given."""
    ax = axes_or_new(ax)
    _band(ax, np.asarray(v) * 1e3, band, "C1")
    if truth is not None:
        ax.plot(np.asarray(truth[0]) * 1e3, truth[1], "-", color="0.55", lw=2.4,
                label="truth")
    ax.plot(np.asarray(v) * 1e3, H, "-", color="C1", label="identified")
    ax.set_xlabel("velocity v [mm/s]")
    ax.set_ylabel("damping force H(v) [N]")
    ax.legend(loc="best")
    return ax
