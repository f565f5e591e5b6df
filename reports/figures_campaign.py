"""Figure functions of the campaign and calibration-study reports.

Each takes arrays already in display units and ``ax=None`` and returns the Axes; none
computes a statistic or saves a file.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.ticker import MaxNLocator

from reports.figures import axes_or_new

__all__ = ["plot_forest", "plot_spread", "plot_coverage", "plot_z_histogram", "plot_lr_qq"]

_EST = "#c0392b"
_TRUTH = "#1f6fb2"
_GREY = "#7f7f7f"


def plot_forest(labels: Sequence[str], centre: np.ndarray, ci68: np.ndarray, ci95: np.ndarray,
                truth: np.ndarray | None = None, *, title: str, unit: str, ax=None,
                show_labels: bool = True):
    """One row per flight: the estimate (dot), its 68 % (thick) and 95 % (thin) interval, the
    truth (blue cross) where known. ``ci68``, ``ci95`` have shape (n, 2); NaN rows (a flight
    without a result) are left empty."""
    ax = axes_or_new(ax)
    y = np.arange(len(labels))[::-1]
    c95 = np.asarray(ci95, float).reshape(-1, 2)
    c68 = np.asarray(ci68, float).reshape(-1, 2)
    ax.hlines(y, c95[:, 0], c95[:, 1], color=_EST, lw=0.8, alpha=0.7)
    ax.hlines(y, c68[:, 0], c68[:, 1], color=_EST, lw=2.4)
    ax.plot(centre, y, "o", ms=2.5, color="black", zorder=3)
    if truth is not None and np.isfinite(truth).any():
        ax.plot(truth, y, "x", ms=4.5, mew=1.2, color=_TRUTH, zorder=4, label="truth")
    ax.set_yticks(y)
    ax.set_yticklabels(labels if show_labels else [""] * len(labels), fontsize=6)
    ax.set_ylim(-0.7, len(labels) - 0.3)
    ax.set_title(f"{title} [{unit}]", fontsize=7.5)
    ax.tick_params(axis="x", labelsize=6.5)
    ax.xaxis.set_major_locator(MaxNLocator(4))
    ax.grid(axis="y", alpha=0.15)
    return ax


def plot_spread(values: np.ndarray, truth: np.ndarray | None = None, *, title: str, unit: str,
                ax=None):
    """Distribution over flights of an estimate (histogram), with the truths' distribution
    (step outline) where known: for campaigns too large for one row per flight."""
    ax = axes_or_new(ax)
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    bins = max(5, min(40, int(np.sqrt(max(len(v), 1))) + 3))
    t = None if truth is None else np.asarray(truth, float)
    both = v if t is None or not np.isfinite(t).any() else np.concatenate([v, t[np.isfinite(t)]])
    if both.size:
        edges = np.histogram_bin_edges(both, bins=bins)
        ax.hist(v, bins=edges, color=_EST, alpha=0.6, label="estimate")
        if t is not None and np.isfinite(t).any():
            ax.hist(t[np.isfinite(t)], bins=edges, histtype="step", color=_TRUTH, lw=1.2,
                    label="truth")
    ax.set_title(f"{title} [{unit}]", fontsize=7.5)
    ax.tick_params(labelsize=6.5)
    ax.xaxis.set_major_locator(MaxNLocator(4))
    return ax


def plot_coverage(names: Sequence[str], cov68: np.ndarray, cov95: np.ndarray, n: np.ndarray,
                  ax=None):
    """Coverage of each parameter's 68 % and 95 % intervals (markers) against the nominal
    levels with their +-2 binomial sampling errors (bands) at each parameter's flight count
    ``n``."""
    ax = axes_or_new(ax)
    x = np.arange(len(names))
    n = np.maximum(np.asarray(n, float), 1.0)
    for level, cov, marker, colour in ((0.68, cov68, "o", _EST), (0.95, cov95, "s", _TRUTH)):
        se = np.sqrt(level * (1 - level) / n)
        ax.fill_between(x, level - 2 * se, np.minimum(1.0, level + 2 * se), step="mid",
                        color=colour, alpha=0.15, lw=0)
        ax.axhline(level, color=colour, lw=0.7, ls="--")
        ax.plot(x, cov, marker, color=colour, ms=4, label=f"{level:.0%} interval",
                linestyle="none")
    ax.set_xticks(x)
    ax.set_xticklabels(names, rotation=45, ha="right", fontsize=6.5)
    ax.set_ylim(max(0.0, min(0.4, np.nanmin(np.concatenate([cov68, cov95])) - 0.05)), 1.02)
    ax.set_ylabel("coverage")
    ax.legend(loc="lower left", fontsize=6.5)
    return ax


def plot_z_histogram(z: np.ndarray, ax=None):
    """Histogram of the truth's standardised error ``(truth - median) / (68 % half-width)``
    over every flight and parameter, against the standard normal density."""
    ax = axes_or_new(ax)
    z = np.asarray(z, float)
    z = z[np.isfinite(z)]
    if z.size:
        lim = max(4.0, min(10.0, float(np.max(np.abs(z)))))
        ax.hist(np.clip(z, -lim, lim), bins=np.linspace(-lim, lim, 33), density=True,
                color=_EST, alpha=0.6, label=f"{z.size} (flight, parameter) pairs")
        g = np.linspace(-lim, lim, 200)
        ax.plot(g, np.exp(-0.5 * g * g) / np.sqrt(2 * np.pi), color="black", lw=1.0,
                label="N(0, 1)")
    ax.set_xlabel("z = (truth - median) / 68 % half-width")
    ax.set_ylabel("density")
    ax.legend(loc="upper right", fontsize=6.5)
    return ax


def plot_lr_qq(lr: np.ndarray, dof: int, ax=None):
    """Quantiles of the truth's likelihood-ratio statistic ``2 (cost(truth) - best cost)``
    over flights against those of chi-square with ``dof`` degrees of freedom."""
    from scipy.stats import chi2

    ax = axes_or_new(ax)
    v = np.sort(np.asarray(lr, float)[np.isfinite(lr)])
    if v.size:
        p = (np.arange(1, v.size + 1) - 0.5) / v.size
        q = chi2.ppf(p, dof)
        ax.plot(q, v, "o", ms=3, color=_EST)
        top = max(float(q[-1]), float(v[-1]))
        ax.plot([0, top], [0, top], color=_GREY, lw=0.8, ls="--")
    ax.set_xlabel(f"chi-square({dof}) quantile")
    ax.set_ylabel("2 (cost(truth) - best cost)")
    return ax
