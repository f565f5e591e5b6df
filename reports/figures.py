"""Common figure set-up: page-sized figures and one style, so every report looks alike.

Figure functions elsewhere in :mod:`reports` take ``ax=None`` and return the Axes; they never
compute or save. Builders call :func:`new_figure` and then those functions.
"""
from __future__ import annotations

__all__ = ["new_figure", "axes_or_new", "TEXT_WIDTH_IN", "STYLE"]

#: Width of the A4 text block with 18 mm margins [inch].
TEXT_WIDTH_IN = 6.85

STYLE = {
    "font.size": 8.5,
    "axes.titlesize": 9,
    "axes.labelsize": 8.5,
    "legend.fontsize": 7.5,
    "xtick.labelsize": 7.5,
    "ytick.labelsize": 7.5,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "lines.linewidth": 1.1,
    "figure.dpi": 100,
    "svg.hashsalt": "dockrecon",
}


def new_figure(nrows: int = 1, ncols: int = 1, height_in: float = 3.0, width_in: float = TEXT_WIDTH_IN,
               **subplot_kw):
    """A matplotlib figure of the text width with ``nrows x ncols`` axes, in the report style.

    Uses the object-oriented API with the Agg canvas (no GUI, no global pyplot state).
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    # Artists read rcParams when they are created (legends, texts added after this call), so the
    # report style is set for the process rather than for this call only.
    matplotlib.rcParams.update(STYLE)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width_in, height_in), squeeze=False,
                             layout="constrained", **subplot_kw)
    return fig, axes


def axes_or_new(ax=None):
    """``ax``, or the single Axes of a new report-style figure when ``ax`` is None (the
    ``ax=None`` convention of the figure functions)."""
    if ax is None:
        _, axes = new_figure()
        ax = axes[0, 0]
    return ax
