"""The fitted span: which telemetry samples a reconstruction compares with the model.

The forward model starts at the start plane (simulation time :math:`s = 0`). A sample of
channel :math:`c` stamped :math:`\\tau` on the telemetry clock reads the simulation at
:math:`s = \\tau - \\delta - \\ell_c` (clock offset :math:`\\delta`, sensor latency
:math:`\\ell_c`; :mod:`recon.observation`). Records are not cut to the model: they start during
the approach and run on long after capture, and :math:`\\delta` is a fitted parameter, so which
samples the simulation covers depends on the parameters. A likelihood must compare the same
samples for every parameter vector, so the span is fixed before the fit, from the record, the
run configuration and the prior bounds of :math:`\\delta` and :math:`\\ell_c`:

* **Stop** :math:`\\tau_b`: the smallest of the record's last sample, the record's capture edge
  plus ``after_capture`` (``[model] fit_after_capture``), and, when ``[model] duration`` is a
  number :math:`D` rather than ``"record"``, :math:`\\delta_{lo} + \\ell_{lo} + D` (the last
  stamp that every allowed clock keeps inside :math:`D` seconds of simulation).
* **Start** :math:`\\tau_a`: the record's first sample, or its first-contact edge minus
  ``before_contact`` (``[model] fit_before_contact``) when that is later.
* Samples outside :math:`[\\tau_a, \\tau_b]` are left out (counted per channel in
  ``result.json``, ``settings.fit_span``).

Every row is then simulated as far as its own clock needs, :math:`T(\\theta) = \\tau_b -
\\delta - \\min_c \\ell_c` (the model never compares a sample with a held end value), and the
fitted samples before the start plane, :math:`s < 0`, are covered by propagating the free
flight backwards (the forward model's free-flight extension: before the start plane nothing
touches the docking unit, so its sensor channels are at rest and the body rates follow
Euler's torque-free equations), over :attr:`FitSpan.pre` seconds, the most any allowed clock
needs. Choice: extend rather than leave out, because a clock prior wide enough for a record
whose clock has nothing to do with the start plane would otherwise leave out every sample
before first contact, and with them the gyros' view of the free relative rotation.

References
----------
docking-contact-models.md, section 11 (post-flight workflow).
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from models.errors import InputError

__all__ = ["FitSpan", "choose_span", "first_edge"]


def first_edge(telemetry, flag: str) -> float:
    """Time [s] of the first rising edge of the 0/1 channel ``flag`` (midpoint of the two
    samples that bracket it); NaN when the record has no such channel or edge."""
    from recon.observation import edges

    if flag not in telemetry.channels:
        return float("nan")
    t, y = telemetry.samples(flag)
    r = edges(t, y)[0]
    return float(r[0]) if r.size else float("nan")


@dataclasses.dataclass(frozen=True)
class FitSpan:
    """The fitted span of one record (see the module docstring).

    Attributes
    ----------
    start, stop
        :math:`\\tau_a`, :math:`\\tau_b` [s], telemetry clock.
    pre
        Free-flight extension before the start plane the forward model must provide [s].
    duration
        The longest simulation any allowed parameter vector needs [s].
    clock, latency
        Bounds [s] of the clock offset and of the smallest and largest latency that the
        span was chosen for.
    reasons
        Why the span starts and stops where it does (``{"start": ..., "stop": ...}``).
    samples
        Per channel: samples fitted, left out before the start and after the stop.
    """

    start: float
    stop: float
    pre: float
    duration: float
    clock: tuple[float, float]
    latency: tuple[float, float]
    reasons: Mapping[str, str]
    samples: Mapping[str, Mapping[str, int]]

    def sim_end(self, clock: np.ndarray, latency_min: np.ndarray) -> np.ndarray:
        """Simulated time [s] each row needs to reach :attr:`stop`: ``stop - clock -
        latency_min`` (clock offset and smallest channel latency of each row [s])."""
        return self.stop - np.asarray(clock, float) - np.asarray(latency_min, float)

    @property
    def left_out(self) -> int:
        """Samples of the fitted channels outside the span."""
        return int(sum(v["before"] + v["after"] for v in self.samples.values()))

    def to_dict(self) -> dict[str, Any]:
        return {"start": self.start, "stop": self.stop, "pre": self.pre,
                "duration": self.duration, "clock_bounds": list(self.clock),
                "latency_bounds": list(self.latency), "reasons": dict(self.reasons),
                "left_out": self.left_out,
                "samples": {k: dict(v) for k, v in self.samples.items()}}


def _bounds(space, name: str, default: float) -> tuple[float, float]:
    """Prior bounds of ``name`` (free), its value (fixed), or the observation default."""
    if name in space.names:
        p = space[name]
        if p.fixed:
            return float(p.value), float(p.value)
        return float(p.prior.lower), float(p.prior.upper)
    return float(default), float(default)


def choose_span(telemetry, space, observation, *, duration: float | str = "record",
                before_contact: float | None = None, after_capture: float | None = None,
                contact_flag: str = "contact", capture_flag: str = "capture") -> FitSpan:
    """The fitted span of ``telemetry`` (module docstring).

    Parameters
    ----------
    telemetry
        The whole record (:class:`recon.telemetry.Telemetry`).
    space, observation
        Parameter space and observation model: the bounds of ``clock_offset`` and of each
        fitted channel's ``<channel>_latency`` come from their priors (or fixed values, or the
        observation model's defaults).
    duration
        ``"record"``, or the longest simulation [s] from the start plane.
    before_contact, after_capture
        [s] before the record's first ``contact_flag`` edge / after its first
        ``capture_flag`` edge; None: the record's own start / end.
    """
    defaults = observation.defaults()
    clock = _bounds(space, "clock_offset", defaults["clock_offset"])
    lat = [_bounds(space, f"{c}_latency", defaults[f"{c}_latency"])
           for c in observation.names]
    lat_lo = min(b[0] for b in lat)
    lat_hi = max(b[1] for b in lat)
    stamps = [telemetry.samples(c)[0] for c in observation.names if c in telemetry.channels]
    stamps = [s for s in stamps if s.size]
    if not stamps:
        raise InputError("no sample of any fitted channel", source=telemetry.source)
    first = float(min(s[0] for s in stamps))
    last = float(max(s[-1] for s in stamps))

    stop, why_stop = last, "the record's last sample"
    if after_capture is not None:
        t_cap = first_edge(telemetry, capture_flag)
        if math.isfinite(t_cap):
            if t_cap + after_capture < stop:
                stop = t_cap + after_capture
                why_stop = f"{after_capture:g} s after the record's {capture_flag} edge"
        else:
            why_stop += f" (no {capture_flag} edge in the record)"
    if duration != "record":
        cap = clock[0] + lat_lo + float(duration)
        if cap < stop:
            stop = cap
            why_stop = (f"the last time every allowed clock offset keeps inside the "
                        f"{float(duration):g}-s simulation")
    start, why_start = first, "the record's first sample"
    if before_contact is not None:
        t_con = first_edge(telemetry, contact_flag)
        if math.isfinite(t_con):
            if t_con - before_contact > start:
                start = t_con - before_contact
                why_start = f"{before_contact:g} s before the record's {contact_flag} edge"
        else:
            why_start += f" (no {contact_flag} edge in the record)"
    if not stop > start:
        raise InputError(f"the fitted span is empty: it would start at {start:.6g} s "
                         f"({why_start}) and stop at {stop:.6g} s ({why_stop})",
                         source=telemetry.source)
    pre = max(0.0, clock[1] + lat_hi - start)
    longest = stop - clock[0] - lat_lo
    if not longest > 0.0:
        raise InputError(f"the record ends at {stop:.6g} s, before the simulation can start "
                         f"(clock offset up to {clock[1]:.6g} s)", source=telemetry.source)
    counts = {}
    for c in observation.names:
        t, _ = telemetry.samples(c)
        counts[c] = {"fitted": int(np.count_nonzero((t >= start) & (t <= stop))),
                     "before": int(np.count_nonzero(t < start)),
                     "after": int(np.count_nonzero(t > stop))}
    return FitSpan(start, stop, pre, longest, clock, (lat_lo, lat_hi),
                   {"start": why_start, "stop": why_stop}, counts)
