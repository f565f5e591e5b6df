"""Figure functions of the post-flight reconstruction report.

Each takes arrays (SI units) and ``ax=None`` and returns the Axes (or the Figure for the corner
plot, which owns a grid of axes); none computes a statistic or saves a file. Units shown on the
axes are the display units passed in (``unit``, ``scale``): the data stay in SI.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from reports.figures import axes_or_new

__all__ = [
    "plot_channel_fit",
    "plot_residuals",
    "plot_band",
    "plot_chain",
    "plot_corner",
    "plot_loop",
    "mark_events",
]

_DATA = "#444444"
_FIT = "#c0392b"
_BAND = "#e6a19a"
_TRUTH = "#1f6fb2"


def mark_events(ax, events: Sequence[tuple[str, float]], *, label_events: bool = True):
    """Vertical dotted lines at event times [s], named along the top of the axes."""
    for i, (name, t) in enumerate(events):
        ax.axvline(t, color="#7f7f7f", lw=0.7, ls=":", zorder=0)
        if label_events:
            # a light box keeps the name readable where it crosses a curve
            ax.annotate(name, xy=(t, 1.0), xycoords=("data", "axes fraction"), xytext=(2, -2 - 8 * (i % 3)),
                        textcoords="offset points", fontsize=6, color="#555555", va="top",
                        bbox={"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none",
                              "alpha": 0.75})
    return ax


def plot_channel_fit(t_obs: np.ndarray, y_obs: np.ndarray, t_model: np.ndarray, y_best: np.ndarray,
                     band: tuple[np.ndarray, np.ndarray] | None = None, *, label: str, unit: str,
                     scale: float = 1.0, events: Sequence[tuple[str, float]] = (), binary: bool = False,
                     ax=None):
    """Telemetry samples against the best fit and the posterior-predictive band.

    Parameters
    ----------
    t_obs, y_obs
        Telemetry time [s] and values [SI].
    t_model, y_best
        Model time [s] and best-fit (MAP) channel [SI].
    band
        (lower, upper) posterior-predictive envelope on ``t_model`` [SI], e.g. 2.5 / 97.5 %.
    scale
        Display factor applied to values (1e3 to show metres as mm); ``unit`` is the display unit.
    binary
        Draw as steps (0/1 channels).
    """
    ax = axes_or_new(ax)
    if band is not None:
        ax.fill_between(t_model, band[0] * scale, band[1] * scale, color=_BAND, alpha=0.6, lw=0,
                        step="post" if binary else None, label="95 % predictive")
    if binary:
        ax.step(t_obs, y_obs * scale, where="post", color=_DATA, lw=1.0, label="telemetry")
        ax.step(t_model, y_best * scale, where="post", color=_FIT, lw=1.0, ls="--", label="best fit")
        ax.set_ylim(-0.15, 1.3)
        ax.set_yticks([0, 1])
    else:
        ax.plot(t_obs, y_obs * scale, ".", ms=2.0, color=_DATA, label="telemetry")
        ax.plot(t_model, y_best * scale, color=_FIT, lw=1.1, label="best fit")
    mark_events(ax, events)
    ax.set_ylabel(f"{label} [{unit}]")
    ax.set_xlabel("time [s]")
    return ax


def plot_residuals(t: np.ndarray, residual: np.ndarray, *, label: str, unit: str, scale: float = 1.0,
                   sigma: float | None = None, ax=None):
    """Residual (telemetry minus best fit) against time, with the +-sigma noise band."""
    ax = axes_or_new(ax)
    ax.plot(t, residual * scale, ".", ms=1.8, color=_DATA, label=f"{label} residual")
    ax.axhline(0.0, color="k", lw=0.6)
    if sigma is not None and np.isfinite(sigma):
        ax.axhspan(-sigma * scale, sigma * scale, color=_BAND, alpha=0.4, lw=0, label="±1σ noise")
    ax.set_ylabel(f"{label}\nresidual [{unit}]")
    ax.set_xlabel("time [s]")
    return ax


def plot_band(t: np.ndarray, best: np.ndarray, band: tuple[np.ndarray, np.ndarray] | None = None,
              band68: tuple[np.ndarray, np.ndarray] | None = None, *, label: str, unit: str,
              scale: float = 1.0, events: Sequence[tuple[str, float]] = (),
              label_events: bool = True, color: str = _FIT, ax=None):
    """A reconstructed history at the MAP with its posterior bands.

    Parameters
    ----------
    t
        Time [s].
    best
        History at the MAP [SI].
    band, band68
        (lower, upper) pointwise 95 % and 68 % posterior bands [SI], or None.
    label, unit, scale
        Quantity name, display unit and display factor (values are multiplied by ``scale``).
    events
        (name, time [s]) marked as dotted lines, named when ``label_events``.
    """
    ax = axes_or_new(ax)
    if band is not None:
        ax.fill_between(t, band[0] * scale, band[1] * scale, color=color, alpha=0.16, lw=0,
                        label="95 % band")
    if band68 is not None:
        ax.fill_between(t, band68[0] * scale, band68[1] * scale, color=color, alpha=0.32, lw=0,
                        label="68 % band")
    ax.plot(t, best * scale, color=color, lw=1.0, label="MAP")
    mark_events(ax, events, label_events=label_events)
    ax.set_xlabel("time [s]")
    ax.set_ylabel(f"{label} [{unit}]")
    return ax


def plot_chain(chain: np.ndarray, *, label: str, unit: str, scale: float = 1.0, burn: int = 0,
               truth: float | None = None, ax=None):
    """Walker traces of one parameter: ``chain`` is (steps, walkers) [SI]."""
    ax = axes_or_new(ax)
    steps = np.arange(chain.shape[0])
    ax.plot(steps, chain * scale, color="#555555", lw=0.3, alpha=0.35)
    if burn:
        ax.axvspan(0, burn, color="#dddddd", alpha=0.6, lw=0)
    if truth is not None:
        ax.axhline(truth * scale, color=_TRUTH, lw=0.9)
    ax.set_ylabel(f"{label} [{unit}]", fontsize=7)
    ax.set_xlabel("step")
    return ax


def plot_corner(samples: np.ndarray, labels: Sequence[str], *, truths: Sequence[float] | None = None,
                fig=None):
    """Corner plot of posterior samples (n, d) with the ``corner`` package; returns the Figure."""
    import corner

    kwargs = dict(labels=list(labels), quantiles=[0.16, 0.5, 0.84], show_titles=False,
                  label_kwargs={"fontsize": 7}, max_n_ticks=3, plot_datapoints=False,
                  fill_contours=True, levels=(0.393, 0.865), smooth=1.0, color="#333333")
    if truths is not None:
        kwargs.update(truths=list(truths), truth_color=_TRUTH)
    fig = corner.corner(np.asarray(samples), fig=fig, **kwargs)
    for ax in fig.axes:
        ax.tick_params(labelsize=6)
    return fig


def plot_loop(deflection: np.ndarray, force: np.ndarray, *, label: str,
              deflection_unit: str = "mm", force_unit: str = "kN", deflection_scale: float = 1e3,
              force_scale: float = 1e-3, deflection_label: str = "deflection",
              force_label: str = "force", mark_ends: bool = False, ax=None, **line_kw):
    """Force against deflection of one absorber element along a path: its hysteresis loop.

    ``mark_ends`` marks the first point (circle) and the last (square) so the direction of
    travel reads off the figure.
    """
    ax = axes_or_new(ax)
    x, f = deflection * deflection_scale, force * force_scale
    (line,) = ax.plot(x, f, label=label, **line_kw)
    if mark_ends:
        ok = np.flatnonzero(np.isfinite(x) & np.isfinite(f))
        if ok.size:
            ax.plot(x[ok[0]], f[ok[0]], "o", ms=4, mfc="white", color=line.get_color(),
                    label="start")
            ax.plot(x[ok[-1]], f[ok[-1]], "s", ms=4, color=line.get_color(), label="end")
    ax.set_xlabel(f"{deflection_label} [{deflection_unit}]")
    ax.set_ylabel(f"{force_label} [{force_unit}]")
    return ax
