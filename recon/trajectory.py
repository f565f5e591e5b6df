"""Reconstructed trajectory with posterior bands, and the events of the reconstruction.

``DIR/trajectory.parquet`` (written by :func:`recon.pipeline.reconstruct` when it is given a
trajectory function; units in the Parquet field metadata ``unit``)::

    t            [s]   telemetry clock: simulation time + the MAP clock offset (the clock of
                       fit.parquet, so the two tables plot on one axis)
    t_model      [s]   simulation time (from the start plane)
    NAME         [SI]  the history at the MAP parameters
    NAME_lo      [SI]  2.5 % posterior quantile  } 95 % band: the suffixes of fit.parquet
    NAME_hi      [SI]  97.5 % posterior quantile }
    NAME_lo68    [SI]  16 % posterior quantile   } 68 % band
    NAME_hi68    [SI]  84 % posterior quantile   }

for every NAME of the docking unit's trajectory channels
(:attr:`models.unit.DockingUnit.trajectory_channels`: the relative state ``rel_pos_x`` ...
``rel_rate_z``, the interface loads at the passive unit, the mechanism's own histories).

The bands are pointwise quantiles over posterior draws: MCMC samples when the chains ran,
importance-resampled or Laplace draws otherwise. Each draw is read on its own clock: its value
at telemetry time :math:`\\tau` is :math:`x_i(\\tau - \\delta_i)` with its own clock offset
:math:`\\delta_i`, linearly interpolated, so the band also carries the timing uncertainty (as
fit.parquet's predictive band does). A draw has no value outside its simulated span (NaN there;
the quantiles use the others); the table ends where the MAP's simulated span ends. Draws whose
simulation failed are left out and counted in ``result.json`` (``trajectory.failed``).

``result.json["events"]`` lists the events of the MAP trajectory in time order,
``{"name", "t", "t_model", "unit": "s", "probability", "median", "ci68", "ci95"}`` with ``t`` on
the telemetry clock, ``probability`` the fraction of the draws in which the event happened and
the intervals its time over those draws (telemetry clock). Events that did not happen at the MAP
but did in some draws follow with ``t = null``.
"""
from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["BAND_SUFFIXES", "Histories", "TrajectoryFn",
           "clock_offsets", "trajectory_table", "event_summary"]

#: Column suffix -> posterior quantile of the band columns.
BAND_SUFFIXES = {"_lo": 0.025, "_lo68": 0.16, "_hi68": 0.84, "_hi": 0.975}


@dataclasses.dataclass(frozen=True)
class Histories:
    """Simulated histories of a batch of parameter vectors.

    Attributes
    ----------
    t
        Simulation time [s], ``(n_t,)``, increasing.
    channels
        ``{name: (n, n_t)}`` [SI]; NaN rows where the simulation failed.
    units
        SI unit of each channel.
    events
        ``(n, k)`` event times [s] on the simulation clock, NaN where the event did not happen.
    event_names
        Names of the ``k`` event columns.
    status
        ``(n,)`` 0 where the simulation succeeded.
    """

    t: np.ndarray
    channels: Mapping[str, np.ndarray]
    units: Mapping[str, str]
    events: np.ndarray
    event_names: tuple[str, ...]
    status: np.ndarray


#: ``trajectory(full_params (n, n_all), names, t_end (n,)) -> Histories``: row 0 is the MAP,
#: the others posterior draws; row ``i`` is simulated from the start plane to ``t_end[i]`` [s]
#: (the end of its fitted span on its own clock).
TrajectoryFn = Callable[[np.ndarray, tuple[str, ...], np.ndarray], Histories]


def clock_offsets(full: np.ndarray, names: Sequence[str], default: float = 0.0) -> np.ndarray:
    """Clock offset [s] of each row of a full parameter batch (``default`` when it is not a
    parameter): telemetry time = simulation time + offset."""
    full = np.atleast_2d(full)
    if "clock_offset" in names:
        return np.asarray(full[:, list(names).index("clock_offset")], float)
    return np.full(full.shape[0], float(default))


def _on_clock(t_model: np.ndarray, shift: np.ndarray, tau: np.ndarray):
    """Indices and weights to read each draw (row) at telemetry times ``tau`` given its clock
    ``shift`` [s]: ``(j, w, outside)``, each ``(n, n_t)``."""
    s = tau[None, :] - shift[:, None]
    j = np.clip(np.searchsorted(t_model, s, side="right") - 1, 0, t_model.size - 2)
    t0 = t_model[j]
    w = (s - t0) / (t_model[j + 1] - t0)
    # a 1e-9 s slack keeps the grid's own end points (rounding of t + offset - offset)
    outside = (s < t_model[0] - 1e-9) | (s > t_model[-1] + 1e-9)
    return j, w, outside


def trajectory_table(hist: Histories, clock: np.ndarray) -> tuple[Any, dict[str, str]]:
    """The trajectory table (see the module docstring) from histories whose row 0 is the MAP
    and whose other rows are posterior draws, with the clock offset of each row [s].

    Returns the pandas DataFrame and the unit of each column.
    """
    import pandas as pd

    t_model = np.asarray(hist.t, float)
    clock = np.asarray(clock, float)
    tau = t_model + clock[0]
    cols: dict[str, np.ndarray] = {"t": tau, "t_model": t_model}
    units = {"t": "s", "t_model": "s"}
    ok = np.flatnonzero(np.asarray(hist.status[1:]) == 0) + 1
    j = w = outside = None
    if ok.size:
        j, w, outside = _on_clock(t_model, clock[ok], tau)
    qs = list(BAND_SUFFIXES.values())
    for name, x in hist.channels.items():
        x = np.asarray(x, float)
        cols[name] = x[0]
        unit = hist.units.get(name, "")
        if ok.size:
            d = x[ok]
            x0 = np.take_along_axis(d, j, axis=1)
            x1 = np.take_along_axis(d, j + 1, axis=1)
            y = np.where(outside, np.nan, x0 + w * (x1 - x0))
            with warnings.catch_warnings():  # all-NaN columns (no draw covers the time) -> NaN
                warnings.simplefilter("ignore", RuntimeWarning)
                q = np.nanquantile(y, qs, axis=0)
        else:
            q = np.full((len(qs), t_model.size), np.nan)
        for suffix, row in zip(BAND_SUFFIXES, q):
            cols[f"{name}{suffix}"] = row
        for suffix in ("", *BAND_SUFFIXES):
            units[f"{name}{suffix}"] = unit
    # the table ends where the MAP's simulated span ends (later grid rows belong to draws
    # whose clocks need a longer simulation)
    keep = np.zeros(t_model.size, bool)
    for x in hist.channels.values():
        keep |= np.isfinite(np.asarray(x, float)[0])
    if keep.any():
        cols = {k: v[: np.flatnonzero(keep)[-1] + 1] for k, v in cols.items()}
    return pd.DataFrame(cols), units


def _q(x: np.ndarray, level: float) -> list[float] | None:
    if x.size == 0:
        return None
    a = 0.5 * (1 - level)
    return [float(v) for v in np.quantile(x, [a, 1 - a])]


def event_summary(hist: Histories, clock: np.ndarray) -> list[dict[str, Any]]:
    """Events of the MAP trajectory (row 0) with their spread over the draws (the other rows);
    see the module docstring."""
    clock = np.asarray(clock, float)
    ev = np.asarray(hist.events, float)
    ok = np.flatnonzero(np.asarray(hist.status[1:]) == 0) + 1
    out = []
    for k, name in enumerate(hist.event_names):
        t_map = ev[0, k]
        d = ev[ok, k] + clock[ok]
        happened = d[np.isfinite(d)]
        prob = float(happened.size / ok.size) if ok.size else None
        if not np.isfinite(t_map) and not happened.size:
            continue
        out.append({"name": name,
                    "t": float(t_map + clock[0]) if np.isfinite(t_map) else None,
                    "t_model": float(t_map) if np.isfinite(t_map) else None, "unit": "s",
                    "probability": prob,
                    "median": float(np.median(happened)) if happened.size else None,
                    "ci68": _q(happened, 0.68), "ci95": _q(happened, 0.95)})
    return sorted(out, key=lambda e: (e["t"] is None, e["t"] if e["t"] is not None else 0.0))
