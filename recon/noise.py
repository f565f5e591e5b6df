"""Sensor noise estimated from the record (``sigma = "auto"``).

Before first contact nothing touches the mechanism and the vehicles fly free: a mechanism
sensor reads a constant (its rest value) and a gyro a slowly varying rate (torque-free
rotation; small over a few seconds). Each continuous channel's noise is estimated from its
samples in the **pre-contact segment**, from ``PRE_CONTACT_WINDOW`` seconds before the record's
first contact edge to ``margin`` before it (the margin keeps the first impact, which may come
up to one contact-flag sample before the edge, out of it), as the maximum-likelihood standard
deviation of the samples about a quadratic trend in time:

* without quantization, :math:`\\hat\\sigma = \\sqrt{RSS / (n - 3)}` of the least-squares
  quadratic (unbiased variance);
* with quantization step :math:`q` (stated, or detected as the grid of the readings:
  :func:`detect_quantum`), the readings are modelled exactly as the reconstruction models
  them (:mod:`recon.observation`: the Gaussian mass of each reading's bin) and the trend and
  :math:`\\sigma` maximize that likelihood. Sheppard's :math:`\\sigma^2 \\approx s^2 - q^2/12`
  fails where it matters here: a stroke sensor with :math:`\\sigma = 0.4 q` reading two or three
  levels. The estimate is floored at :math:`q / 10` (readings that never change before
  contact carry no information on :math:`\\sigma` below the step; a warning says so).

A channel with fewer than ``MIN_SAMPLES`` samples in the segment (a record cut close to first
contact: the shipped 5-s misaligned flight has 8 gyro samples before it) falls back to the
whole record: the robust scale of its second differences,
:math:`s = 1.4826\\,\\mathrm{MAD}(\\Delta^2 y) / \\sqrt 6` (white noise of variance
:math:`s^2` gives :math:`\\Delta^2 y` variance :math:`6 s^2`; the median ignores the few
differences that straddle an impact), less the quantization's share,
:math:`\\sigma = \\sqrt{\\max(s^2 - q^2/12, (q/10)^2)}` (:func:`estimate_noise_whole`). It is
coarser (measured on the shipped 5-s flights' gyros, true 2e-4 rad/s: 1.5e-4 ... 3.0e-4) and
a warning says so; with fewer than ``MIN_SAMPLES`` samples in the whole record the error names
the channel and asks for a stated ``sigma``. The alternative, a per-channel noise scale
fitted with the initial conditions, would let model error (the contact phase is where the
model is least exact) inflate the noise; the pre-contact segment measures the sensor alone.

A binary channel's ``sigma`` is the timing noise of its switch [s], which no record shows
(only the bracket of the two samples around an edge, which the observation model adds
anyway, :math:`\\Delta\\tau^2 / 12`). ``"auto"`` gives it a tenth of the channel's median
sample interval: 2 ms at 50 Hz, the value the shipped run configurations state.

The estimates, the samples they rest on and the method are written to ``result.json``
(``settings.noise``).
"""
from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from typing import Any

import numpy as np

from models.errors import InputError

__all__ = ["NoiseEstimate", "detect_quantum", "estimate_noise", "estimate_noise_whole",
           "resolve_auto",
           "PRE_CONTACT_WINDOW", "MIN_SAMPLES"]

log = logging.getLogger(__name__)

#: [s] longest stretch before first contact that the estimate uses (the quadratic trend of a
#: free-flight gyro is exact to well below its noise over this long)
PRE_CONTACT_WINDOW = 10.0
#: fewest pre-contact samples of a channel for an estimate
MIN_SAMPLES = 10
#: floor of a quantized channel's estimate, in quantization steps
SIGMA_FLOOR_Q = 0.1


@dataclasses.dataclass(frozen=True)
class NoiseEstimate:
    """Noise of one channel estimated from a stretch of its samples.

    Attributes
    ----------
    sigma
        White-noise standard deviation [channel unit] (without the quantization).
    quantum
        Quantization step [channel unit] used (0: none).
    samples
        Samples the estimate rests on.
    start, stop
        Telemetry times [s] of the stretch.
    floored
        True when the estimate sits at the floor ``SIGMA_FLOOR_Q * quantum``.
    """

    sigma: float
    quantum: float
    samples: int
    start: float
    stop: float
    floored: bool = False
    method: str = "pre-contact, quadratic trend, maximum likelihood"

    @property
    def relative_se(self) -> float:
        """Approximate relative standard error of :attr:`sigma`, ``1 / sqrt(2 (n - 3))``."""
        return float(1.0 / np.sqrt(2.0 * max(self.samples - 3, 1)))

    def to_dict(self) -> dict[str, Any]:
        return {"sigma": self.sigma, "quantum": self.quantum, "samples": self.samples,
                "start": self.start, "stop": self.stop, "floored": self.floored,
                "method": self.method}


def detect_quantum(y: np.ndarray, *, rtol: float = 1e-6) -> float:
    """The quantization step of readings ``y``: the smallest difference between distinct
    values when every value is a whole multiple of it (to ``rtol`` of the step); 0 when the
    readings are not on such a grid or take fewer than three distinct values."""
    v = np.unique(np.asarray(y, float)[np.isfinite(y)])
    if v.size < 3:
        return 0.0
    q = float(np.min(np.diff(v)))
    if not q > 0:
        return 0.0
    k = v / q
    if np.max(np.abs(k - np.round(k))) > rtol * max(1.0, float(np.max(np.abs(k)))) + 1e-9:
        return 0.0
    return q


def _samples(t: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The finite samples of ``y`` at ``t``; ValueError when fewer than
    :data:`MIN_SAMPLES`."""
    t = np.asarray(t, float)
    y = np.asarray(y, float)
    ok = np.isfinite(t) & np.isfinite(y)
    if np.count_nonzero(ok) < MIN_SAMPLES:
        raise ValueError(f"{np.count_nonzero(ok)} samples, at least {MIN_SAMPLES} needed")
    return t[ok], y[ok]


def _design(t: np.ndarray) -> np.ndarray:
    u = (t - t.mean()) / max(float(np.ptp(t)), 1e-12)
    return np.column_stack([np.ones_like(u), u, u * u])


def estimate_noise(t: np.ndarray, y: np.ndarray, *, quantum: float = 0.0) -> NoiseEstimate:
    """Maximum-likelihood noise of samples ``y`` at ``t`` [s] about a quadratic trend, with
    readings quantized to ``quantum`` (0: none). See the module docstring."""
    t, y = _samples(t, y)
    n = t.size
    a = _design(t)
    coef, *_ = np.linalg.lstsq(a, y, rcond=None)
    rss = float(np.sum((y - a @ coef) ** 2))
    s_ls = np.sqrt(rss / (n - 3))
    if quantum <= 0:
        return NoiseEstimate(float(s_ls), 0.0, n, float(t[0]), float(t[-1]))
    from scipy import optimize
    from recon.observation import _log_bin

    q = float(quantum)
    floor = SIGMA_FLOOR_Q * q

    def nll(p):
        mu = a @ p[:3]
        s = np.exp(p[3])
        return -float(np.sum(_log_bin((y - 0.5 * q - mu) / s, (y + 0.5 * q - mu) / s)))

    s0 = np.sqrt(max(s_ls ** 2 - q * q / 12.0, (0.25 * q) ** 2))
    best = None
    # the likelihood of quantized readings is flat across a bin: a few starting scales
    for f in (1.0, 0.5, 2.0):
        r = optimize.minimize(nll, np.r_[coef, np.log(f * s0)], method="Nelder-Mead",
                              options={"xatol": 1e-6, "fatol": 1e-9, "maxiter": 4000,
                                       "maxfev": 8000})
        if best is None or r.fun < best.fun:
            best = r
    sigma = float(np.exp(best.x[3]))
    floored = sigma <= floor
    return NoiseEstimate(max(sigma, floor), q, n, float(t[0]), float(t[-1]), floored)


def estimate_noise_whole(t: np.ndarray, y: np.ndarray, *, quantum: float = 0.0
                         ) -> NoiseEstimate:
    """The fallback of the module docstring: noise from the robust scale of the second
    differences of all samples ``y`` (taken in time order ``t`` [s])."""
    t, y = _samples(t, y)
    d2 = y[2:] - 2.0 * y[1:-1] + y[:-2]
    s = 1.4826 * float(np.median(np.abs(d2 - np.median(d2)))) / np.sqrt(6.0)
    q = float(quantum)
    floor = SIGMA_FLOOR_Q * q
    var = s * s - q * q / 12.0
    sigma = float(np.sqrt(max(var, floor * floor)))
    return NoiseEstimate(sigma, q, int(t.size), float(t[0]), float(t[-1]),
                         floored=sigma <= floor,
                         method="whole record, MAD of second differences (too few samples "
                                "before contact)")


def _median_dt(t: np.ndarray) -> float:
    d = np.diff(np.asarray(t, float))
    d = d[d > 0]
    return float(np.median(d)) if d.size else float("nan")


def resolve_auto(table: Mapping[str, Any], record, *, contact_flag: str, binary,
                 key: str = "observation") -> tuple[dict[str, Any], dict[str, Any]]:
    """Replace ``sigma = "auto"`` (and ``quantum = "auto"``) in an ``[observation]`` table by
    estimates from ``record`` (module docstring). Returns the resolved table and, per
    resolved channel, what the estimate rests on (for ``result.json``). ``binary(name)``
    says whether a channel is a 0/1 flag. Errors name the key and the record."""
    from recon.span import first_edge

    chans = table.get("channels")
    if not isinstance(chans, Mapping):
        return dict(table), {}
    out_chans: dict[str, Any] = {}
    report: dict[str, Any] = {}
    t_contact = None
    for name, spec in chans.items():
        if not isinstance(spec, Mapping):
            out_chans[name] = spec
            continue
        spec = dict(spec)
        auto_s = spec.get("sigma") == "auto"
        auto_q = spec.get("quantum") == "auto"
        if not (auto_s or auto_q):
            out_chans[name] = spec
            continue
        k = f"{key}.channels.{name}"
        if name not in record.channels:
            raise InputError('"auto" needs the channel in the record', key=f"{k}.sigma",
                             source=record.source)
        t, y = record.samples(name)
        if binary(name):
            if auto_q:
                raise InputError("a 0/1 channel has no quantization step", key=f"{k}.quantum")
            dt = _median_dt(t)
            spec["sigma"] = 0.1 * dt
            report[name] = {"sigma": spec["sigma"], "method": "0.1 x median sample interval",
                            "sample_interval": dt}
            out_chans[name] = spec
            continue
        if auto_q:
            spec["quantum"] = detect_quantum(y)
        if not auto_s:
            out_chans[name] = spec
            report[name] = {"quantum": spec["quantum"], "method": "quantum: grid of readings"}
            continue
        if t_contact is None:
            t_contact = first_edge(record, contact_flag)
            if not np.isfinite(t_contact):
                raise InputError(f'sigma = "auto" estimates the noise before first contact, '
                                 f"but the record has no rising edge of {contact_flag!r}: "
                                 "state sigma", key=f"{k}.sigma", source=record.source)
            tc, _ = record.samples(contact_flag)
            margin = max(0.1, 2.0 * _median_dt(tc))
        sel = (t < t_contact - margin) & (t >= t_contact - margin - PRE_CONTACT_WINDOW)
        q = spec.get("quantum", 0.0)
        if isinstance(q, bool) or not isinstance(q, (int, float)) or not q >= 0:
            raise InputError('must be a number >= 0 or "auto"', key=f"{k}.quantum")
        try:
            if np.count_nonzero(np.isfinite(y[sel])) >= MIN_SAMPLES:
                est = estimate_noise(t[sel], y[sel], quantum=float(q))
            else:
                est = estimate_noise_whole(t, y, quantum=float(q))
                log.warning("%s: %s has %d samples before first contact (%.6g s): its noise "
                            "comes from the whole record's second differences (coarser)",
                            record.source, name, int(np.count_nonzero(np.isfinite(y[sel]))),
                            t_contact)
        except ValueError as exc:
            raise InputError(f'sigma = "auto": {exc} in the record; state sigma',
                             key=f"{k}.sigma", source=record.source) from None
        if est.floored:
            log.warning("%s: the readings of %s before contact hardly vary: sigma set to "
                        "%.3g, a tenth of its quantization step", record.source, name,
                        est.sigma)
        spec["sigma"] = est.sigma
        spec["quantum"] = est.quantum
        out_chans[name] = spec
        report[name] = est.to_dict()
    return {**table, "channels": out_chans}, report
