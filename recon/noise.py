r"""Sensor noise estimated from the record (``sigma = "auto"``).

Before first contact nothing touches the mechanism and the vehicles fly free: a mechanism
sensor reads a constant (its rest value) and a gyro a slowly varying rate (torque-free
rotation; small over a few seconds). Each continuous channel's noise is estimated from its
samples in the **pre-contact segment**, from ``PRE_CONTACT_WINDOW`` seconds before the record's
first contact edge to ``margin`` before it (the margin keeps the first impact, which may come
up to one contact-flag sample before the edge, out of it), about a trend in time: a constant
for a mechanism channel (``kind = "continuous"``), a quadratic for a rate (``kind = "rate"``);
``k`` trend coefficients leave :math:`\nu = n - k` degrees of freedom.

* Without quantization the point estimate is :math:`\hat\sigma = \sqrt{RSS / \nu}` of the
  least-squares trend (unbiased variance).
* With quantization step :math:`q` (stated, or detected as the grid of the readings:
  :func:`detect_quantum`), the readings are modelled exactly as the reconstruction models
  them (:mod:`recon.observation`: the Gaussian mass of each reading's bin); the trend and
  :math:`\sigma` maximize that likelihood and :math:`\hat\sigma` is the maximum scaled by
  :math:`\sqrt{n / \nu}` (the same trend correction). Sheppard's
  :math:`\sigma^2 \approx s^2 - q^2/12` fails where it matters here: a stroke sensor with
  :math:`\sigma = 0.4 q` reading two or three levels.

**The likelihood uses an upper bound, not the point.** An estimate from few samples is
uncertain, and the error is not symmetric in its consequences: a noise set too low makes the
posterior overconfident and the goodness-of-fit check call an honest record implausible; set
too high it only widens the intervals. Readings on two adjacent levels of a coarse
quantization (the shipped 5-s misaligned flight's stroke: 19 samples, 17 on one level) do not
determine :math:`\sigma` at all below about :math:`q/2` (a tiny noise about a trend on the
bin edge explains them as well), only bound it above, by the absence of a third level. So
``sigma`` is the one-sided ``BOUND_LEVEL`` (84 %, one standard error) upper confidence bound:

* without quantization the exact bound :math:`\hat\sigma\sqrt{\nu / \chi^2_{1-0.84}(\nu)}`
  (17 % above the point at 20 samples, 3 % at 500);
* with quantization the profile-likelihood bound: the :math:`\sigma > \hat\sigma` at which
  the likelihood, maximized over the trend, has fallen by :math:`\tfrac12 z_{0.84}^2 n / \nu`
  (:math:`n/\nu` the same trend correction);
* below the floor :math:`q / 10` neither is used: the floor is.

Their coverage is tested (``tests/recon/test_noise.py``: the bound lies above the true
:math:`\sigma` in 84 % of seeded series within sampling error, for 20 and 125 samples, 0.3 to
5 steps of noise). The point estimate is kept beside it in ``result.json`` (``sigma_point``).

A channel with fewer than ``MIN_SAMPLES`` samples in the segment (a record cut close to first
contact: the shipped 5-s misaligned flight has 8 gyro samples before it) falls back to the
whole record: the robust scale of its second differences,
:math:`s = 1.4826\,\mathrm{MAD}(\Delta^2 y) / \sqrt 6` (white noise of variance
:math:`s^2` gives :math:`\Delta^2 y` variance :math:`6 s^2`; the median ignores the few
differences that straddle an impact), less the quantization's share,
:math:`\hat\sigma = \sqrt{\max(s^2 - q^2/12, (q/10)^2)}` (:func:`estimate_noise_whole`),
and its bound :math:`\hat\sigma \exp(z_{0.84} \cdot 1.41 / \sqrt n)` (1.41 / sqrt(n) is
the estimator's relative spread measured on white noise, 30 to 1000 samples). It is coarser
(measured on the shipped 5-s flights' gyros, true 2e-4 rad/s: 1.5e-4 ... 3.0e-4 for the
point) and a warning says so; with fewer than ``MIN_SAMPLES`` samples in the whole record the
error names the channel and asks for a stated ``sigma``. The alternative, a per-channel noise
scale fitted with the initial conditions, would let model error (the contact phase is where
the model is least exact) inflate the noise; the pre-contact segment measures the sensor
alone.

A binary channel's ``sigma`` is the timing noise of its switch [s], which no record shows
(only the bracket of the two samples around an edge, which the observation model adds
anyway, :math:`\Delta\tau^2 / 12`). ``"auto"`` gives it a tenth of the channel's median
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
           "resolve_auto", "PRE_CONTACT_WINDOW", "MIN_SAMPLES", "BOUND_LEVEL", "TREND_DEGREE"]

log = logging.getLogger(__name__)

#: [s] longest stretch before first contact that the estimate uses (the quadratic trend of a
#: free-flight gyro is exact to well below its noise over this long)
PRE_CONTACT_WINDOW = 10.0
#: fewest pre-contact samples of a channel for an estimate
MIN_SAMPLES = 10
#: floor of a quantized channel's estimate, in quantization steps
SIGMA_FLOOR_Q = 0.1
#: one-sided confidence level of the noise bound the likelihood uses (module docstring)
BOUND_LEVEL = 0.84
#: relative spread x sqrt(n) of the whole-record second-difference estimator (measured on
#: white noise, 4000 series each of 30, 50, 200, 1000 samples: 1.37 ... 1.43)
WHOLE_SPREAD = 1.41
#: trend degree by channel kind: a mechanism at rest reads a constant, a gyro a slow rate
TREND_DEGREE = {"continuous": 0, "rate": 2}
_HALF_LOG_2PI = 0.5 * np.log(2.0 * np.pi)


@dataclasses.dataclass(frozen=True)
class NoiseEstimate:
    """Noise of one channel estimated from a stretch of its samples.

    Attributes
    ----------
    sigma
        White-noise standard deviation [channel unit] (without the quantization) that the
        likelihood uses: the ``BOUND_LEVEL`` upper confidence bound (module docstring).
    quantum
        Quantization step [channel unit] used (0: none).
    samples
        Samples the estimate rests on.
    start, stop
        Telemetry times [s] of the stretch.
    floored
        True when the estimate sits at the floor ``SIGMA_FLOOR_Q * quantum``.
    sigma_point
        The point estimate [channel unit] (unbiased-variance, or bias-corrected maximum
        likelihood), which ``sigma`` bounds from above.
    method
        How it was obtained, in words.
    """

    sigma: float
    quantum: float
    samples: int
    start: float
    stop: float
    floored: bool = False
    sigma_point: float = float("nan")
    method: str = "pre-contact, maximum likelihood about a trend, 84 % upper bound"

    def to_dict(self) -> dict[str, Any]:
        return {"sigma": self.sigma, "sigma_point": self.sigma_point, "quantum": self.quantum,
                "samples": self.samples, "start": self.start, "stop": self.stop,
                "floored": self.floored, "method": self.method}


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


def _design(t: np.ndarray, degree: int) -> np.ndarray:
    u = (t - t.mean()) / max(float(np.ptp(t)), 1e-12)
    return np.column_stack([u ** j for j in range(degree + 1)])


def _z(level: float) -> float:
    from scipy.special import ndtri

    return float(ndtri(level))


def estimate_noise(t: np.ndarray, y: np.ndarray, *, quantum: float = 0.0, degree: int = 2,
                   level: float = BOUND_LEVEL) -> NoiseEstimate:
    """Noise of samples ``y`` at ``t`` [s] about a polynomial trend of ``degree``, with
    readings quantized to ``quantum`` (0: none): the point estimate and its one-sided
    ``level`` upper bound (module docstring)."""
    from scipy import optimize, stats

    t, y = _samples(t, y)
    n = t.size
    a = _design(t, degree)
    nu = n - a.shape[1]
    coef, *_ = np.linalg.lstsq(a, y, rcond=None)
    rss = float(np.sum((y - a @ coef) ** 2))
    s_ls = np.sqrt(rss / nu)
    if quantum <= 0:
        upper = s_ls * np.sqrt(nu / stats.chi2.ppf(1.0 - level, nu))
        return NoiseEstimate(float(upper), 0.0, n, float(t[0]), float(t[-1]),
                             sigma_point=float(s_ls),
                             method=f"pre-contact, unbiased variance about a degree-{degree} "
                                    f"trend, {100 * level:.0f} % upper bound")
    from recon.observation import _log_bin

    q = float(quantum)
    floor = SIGMA_FLOOR_Q * q

    c_scale = q   # trend coefficients in steps: the optimizer's variables are O(1)

    def nll(p, log_s=None):
        """Negative log likelihood and its gradient in (trend / q, log sigma), or in the
        trend alone at a fixed ``log_s``."""
        if log_s is None:
            c, ls = p[:-1], p[-1]
        else:
            c, ls = p, log_s
        s = np.exp(ls)
        mu = a @ (c_scale * c)
        lo = (y - 0.5 * q - mu) / s
        hi = (y + 0.5 * q - mu) / s
        logp = _log_bin(lo, hi)
        pa = np.exp(-0.5 * lo * lo - _HALF_LOG_2PI - logp)    # phi(lo) / P
        pb = np.exp(-0.5 * hi * hi - _HALF_LOG_2PI - logp)    # phi(hi) / P
        g_c = c_scale * (a.T @ ((pb - pa) / s))
        f = -float(np.sum(logp))
        if log_s is not None:
            return f, g_c
        return f, np.r_[g_c, -np.sum(lo * pa - hi * pb)]

    opts = {"gtol": 1e-9, "maxiter": 500}
    c0 = coef / c_scale
    s0 = np.sqrt(max(s_ls ** 2 - q * q / 12.0, (0.25 * q) ** 2))
    best = None
    # the likelihood of quantized readings is flat across a bin: a few starting scales
    for f in (1.0, 0.5, 2.0):
        r = optimize.minimize(nll, np.r_[c0, np.log(f * s0)], jac=True, method="BFGS",
                              options=opts)
        if best is None or r.fun < best.fun:
            best = r
    s_ml = float(np.exp(best.x[-1]))
    point = max(s_ml * np.sqrt(n / nu), floor)
    # profile likelihood in log sigma above the maximum (trend re-fitted at each sigma; the
    # likelihood is log-concave in the trend, so each fit is one smooth convex problem)
    state = {"c": best.x[:-1].copy()}

    def profile(log_s):
        r = optimize.minimize(nll, state["c"], args=(log_s,), jac=True, method="BFGS",
                              options=opts)
        state["c"] = r.x
        return r.fun

    lo = np.log(max(s_ml, floor))
    ref = min(best.fun, profile(lo))
    # the rise that reproduces the exact chi-square bound for unquantized readings (where
    # the profile is n/2 (u - 1 - ln u), u = sigma_ml^2 / sigma^2), and the same trend
    # correction sqrt(n / nu) as the point
    u = stats.chi2.ppf(1.0 - level, nu) / nu
    rise = 0.5 * n * (u - 1.0 - np.log(u))
    hi = lo
    for _ in range(80):
        hi += np.log(1.5)
        if profile(hi) - ref > rise:
            break
    else:  # pragma: no cover - the likelihood of a finite record falls off at large sigma
        raise ValueError("the noise likelihood does not fall off")
    upper = float(np.exp(optimize.brentq(lambda ls: profile(ls) - ref - rise, lo, hi,
                                         xtol=1e-4))) * np.sqrt(n / nu)
    upper = max(upper, point)
    return NoiseEstimate(upper, q, n, float(t[0]), float(t[-1]), floored=upper <= floor,
                         sigma_point=point,
                         method=f"pre-contact, quantized maximum likelihood about a "
                                f"degree-{degree} trend, {100 * level:.0f} % upper bound")


def estimate_noise_whole(t: np.ndarray, y: np.ndarray, *, quantum: float = 0.0,
                         level: float = BOUND_LEVEL) -> NoiseEstimate:
    """The fallback of the module docstring: noise from the robust scale of the second
    differences of all samples ``y`` (taken in time order ``t`` [s]), and its bound."""
    t, y = _samples(t, y)
    d2 = y[2:] - 2.0 * y[1:-1] + y[:-2]
    s = 1.4826 * float(np.median(np.abs(d2 - np.median(d2)))) / np.sqrt(6.0)
    q = float(quantum)
    floor = SIGMA_FLOOR_Q * q
    var = s * s - q * q / 12.0
    point = float(np.sqrt(max(var, floor * floor)))
    upper = point * float(np.exp(_z(level) * WHOLE_SPREAD / np.sqrt(t.size)))
    return NoiseEstimate(upper, q, int(t.size), float(t[0]), float(t[-1]),
                         floored=point <= floor, sigma_point=point,
                         method="whole record, MAD of second differences (too few samples "
                                f"before contact), {100 * level:.0f} % upper bound")


def _median_dt(t: np.ndarray) -> float:
    d = np.diff(np.asarray(t, float))
    d = d[d > 0]
    return float(np.median(d)) if d.size else float("nan")


def resolve_auto(table: Mapping[str, Any], record, *, contact_flag: str, kind,
                 key: str = "observation") -> tuple[dict[str, Any], dict[str, Any]]:
    """Replace ``sigma = "auto"`` (and ``quantum = "auto"``) in an ``[observation]`` table by
    estimates from ``record`` (module docstring). Returns the resolved table and, per
    resolved channel, what the estimate rests on (for ``result.json``). ``kind(name)`` is
    the channel's kind (``"continuous"``, ``"binary"``, ``"rate"``; a channel the unit does
    not know is given a quadratic trend, as a rate). Errors name the key and the record."""
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
        if kind(name) == "binary":
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
                est = estimate_noise(t[sel], y[sel], quantum=float(q),
                                     degree=TREND_DEGREE.get(kind(name), 2))
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
