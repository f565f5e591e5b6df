r"""Harmonic extraction from a resonance-test record and the monotone amplitude sequence.

Windows of ``k`` excitation periods (default 6, which holds whole periods of the 1/2 and 1/3
subharmonics and so rejects them, [P] section 4) slide by one period. In each window the
Fourier coefficients of (4.3),

.. math::

    \begin{Bmatrix}s_n\\ c_n\end{Bmatrix} = \frac{\nu}{\pi k}\int_T^{T+2\pi k/\nu}
    y(t)\begin{Bmatrix}\sin n\nu t\\ \cos n\nu t\end{Bmatrix}dt,

of the response ``x`` and of the applied force are computed by the trapezoid rule on the
samples, with the window ends placed exactly (partial trapezoids), so no leakage comes from a
non-integer number of samples per period.

Conventions (digest B.9 readings, checked against the Russian original (4.3)):

* ``a0 = c0 = 2 mean(x)`` (the OCR's ``a0 = c0/2`` would halve the even restoring force);
* the phase reference is the *measured force* ``e sin(nu t + alpha_F)``, not ``t = 0``:
  ``theta = alpha_F - alpha_x`` with ``alpha = atan2(c1, s1)``, wrapped to ``(-pi, pi]``; for
  ``alpha_F = 0`` this is the digest's ``theta = atan2(-c1, s1)``, in ``(0, pi)`` for a
  dissipative system (a bare arctangent would lose the quadrant at phase resonance);
* second harmonic relative to ``psi = nu t + alpha_x``:
  ``b2 = s2 cos 2 alpha_x + c2 sin 2 alpha_x``, ``a2 = -s2 sin 2 alpha_x + c2 cos 2 alpha_x``
  (= ``s2 cos 2 theta - c2 sin 2 theta`` and ``s2 sin 2 theta + c2 cos 2 theta`` at
  ``alpha_F = 0``);
* ``e`` is the first-harmonic amplitude of the force in the same window (the digest's "e at
  the window centre" for a linear ramp, and robust to any ramp law).

Measured quantities (digest B.4): :math:`\omega^2 = \nu^2 + e\cos\theta/(\mu b)`,
:math:`\lambda = e\sin\theta/(b\nu)`, velocity amplitude ``v = b nu``.

Ramp correction ([impl], beyond [P]): under a ramped force the amplitude and phase drift, and
the stationary balance is biased by the drift terms of first-order averaging,

.. math::

    2\mu\nu\dot b = e\sin\theta - \lambda\nu b,\qquad
    2\mu\nu b\dot\theta = e\cos\theta - \mu(\omega^2 - \nu^2) b,

so by default :math:`\lambda = (e\sin\theta - 2\mu\nu\dot b)/(b\nu)` and
:math:`\omega^2 = \nu^2 + (e\cos\theta - 2\mu\nu b\dot\theta)/(\mu b)`, with the
rates from a local quadratic fit (Savitzky-Golay, ``2k + 1`` windows) of ``b`` and ``theta``
against the window centre, within each stretch between jumps. The bias it removes is of order
``(db/dt / b) * 2 mu / lambda``: 5 % in ``lambda`` for a force ramp of 2.5 % per damping time
constant (measured, ``tests/identification/resonance/test_harmonics.py``);
``ramp_correction=False`` gives [P]'s stationary formulas.

Amplitude sequence: windows that start before the hold time ``skip`` are dropped (transients);
the windows are taken in the direction of the ramp (increasing or decreasing amplitude); the
per-window relative increments of the amplitude (of ``log b``, so that linear and exponential
ramps look alike) are compared with their median, and a run of increments above
``jump_factor`` times the median is an **amplitude jump** (the response left one branch of the
amplitude-frequency curve for another, [P] section 4): it is reported with the amplitudes
either side, the windows that straddle it (non-stationary mixtures of both branches) are
dropped, and so are the windows of the settling time after it (the response beats about its
new branch; :func:`~.conditioning.settling_time`). The remaining windows are *conditioned*
(:mod:`~.conditioning`): sorted by amplitude and merged in bins of relative width
``rel_step``, so the sequence is strictly increasing with no near-duplicate amplitudes, and
every window counts (a non-monotone one is pooled with the windows of its amplitude, not
dropped). The gap a jump leaves (``Jump.b_lo`` to ``Jump.b_hi``, consecutive nodes) holds no
data.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from models.errors import DataError, InputError

from .conditioning import N_TAU, REL_STEP, merge_windows, settling_time

__all__ = ["estimate_frequency", "WindowHarmonics", "window_harmonics", "Jump",
           "AmplitudeSequence", "amplitude_sequence"]


def estimate_frequency(t: np.ndarray, force: np.ndarray) -> float:
    """Excitation frequency [rad/s] of a sinusoidal force record.

    The periodogram peak (FFT of the resampled, mean-removed force, Hann window), refined by
    maximising :math:`|\\sum_j F_j e^{-i\\nu t_j}|` with a bounded scalar search within one
    FFT bin; accurate to a small fraction of a bin for a slowly ramped amplitude.
    """
    from scipy.optimize import minimize_scalar

    t = np.asarray(t, float)
    f = np.asarray(force, float) - np.mean(force)
    n = len(t)
    tu = np.linspace(t[0], t[-1], n)
    fu = np.interp(tu, t, f) * np.hanning(n)
    spec = np.abs(np.fft.rfft(fu))
    spec[0] = 0.0
    k = int(np.argmax(spec))
    df = 2 * np.pi / (tu[-1] - tu[0]) * (n - 1) / n
    if k == 0:
        raise DataError("the force has no oscillating component", key="force")

    def neg(nu):
        return -abs(np.sum(f * np.exp(-1j * nu * t)))

    res = minimize_scalar(neg, bounds=((k - 1) * df, (k + 1) * df), method="bounded",
                          options={"xatol": 1e-10 * k * df})
    return float(res.x)


def _cumtrapz(t, g):
    c = np.empty_like(g)
    c[0] = 0.0
    np.cumsum(0.5 * (g[1:] + g[:-1]) * np.diff(t), out=c[1:])
    return c


def _cum_at(t, g, C, T):
    """Trapezoid integral of the linear interpolant of ``g`` from ``t[0]`` to each ``T``."""
    i = np.clip(np.searchsorted(t, T, side="right") - 1, 0, len(t) - 2)
    d = T - t[i]
    w = t[i + 1] - t[i]
    return C[i] + g[i] * d + (g[i + 1] - g[i]) * d * d / (2.0 * w)


@dataclass(frozen=True)
class WindowHarmonics:
    """Fourier coefficients (4.3) per window.

    Attributes
    ----------
    t_start, t_mid
        Window start and centre [s].
    s, c
        ``(n_windows, n_max + 1)`` sine and cosine coefficients, column ``n`` for harmonic
        ``n`` [unit of the signal].
    """

    t_start: np.ndarray
    t_mid: np.ndarray
    s: np.ndarray
    c: np.ndarray


def window_harmonics(t: np.ndarray, y: np.ndarray, nu: float, *, k: int = 6, n_max: int = 2,
                     t_first: float | None = None, stride: float = 1.0,
                     modulated: bool = False) -> WindowHarmonics:
    """Coefficients (4.3) of ``y(t)`` over windows of ``k`` periods ``2 pi / nu``.

    Parameters
    ----------
    t
        Strictly increasing sample times [s].
    y
        Signal samples.
    nu
        Excitation frequency [rad/s].
    k
        Periods per window.
    n_max
        Highest harmonic.
    t_first
        Start of the first window [s] (default ``t[0]``).
    stride
        Window step in periods (1: sliding by one period).
    modulated
        False: the quadratures (4.3). True ([impl]): least-squares fit, on the samples of each
        window, of a constant, a linear drift and every harmonic with a linearly varying
        amplitude (``(1 + r (t - t_mid))`` times ``sin``/``cos``); the coefficients at the
        window centre are returned. Under a ramp, (4.3) leaks the growing first harmonic into
        the other coefficients by about ``(db/dt)/nu`` (35 % of the mean offset in
        ``test_harmonics.py``); the fit does not.
    """
    t = np.asarray(t, float)
    y = np.asarray(y, float)
    period = 2 * np.pi / nu
    t0 = t[0] if t_first is None else max(t_first, t[0])
    n_win = int(np.floor((t[-1] - t0 - k * period) / (stride * period) + 1e-9)) + 1
    if n_win < 1:
        raise DataError(f"record shorter than one window of {k} periods "
                        f"({k * period:.4g} s after the hold time)", key="t")
    T0 = t0 + stride * period * np.arange(n_win)
    T1 = T0 + k * period
    scale = nu / (np.pi * k)
    s = np.zeros((n_win, n_max + 1))
    c = np.zeros((n_win, n_max + 1))
    if modulated:
        lo = np.searchsorted(t, T0, side="left")
        hi = np.searchsorted(t, T1, side="right")
        for w in range(n_win):
            tw = t[lo[w]:hi[w]]
            tau = (tw - (T0[w] + 0.5 * k * period)) / period
            cols = [np.ones_like(tw), tau]
            for n in range(1, n_max + 1):
                sn, cn = np.sin(n * nu * tw), np.cos(n * nu * tw)
                cols += [sn, cn, tau * sn, tau * cn]
            coef = np.linalg.lstsq(np.column_stack(cols), y[lo[w]:hi[w]], rcond=None)[0]
            c[w, 0] = 2.0 * coef[0]
            for n in range(1, n_max + 1):
                s[w, n], c[w, n] = coef[4 * n - 2], coef[4 * n - 1]
        return WindowHarmonics(t_start=T0, t_mid=T0 + 0.5 * k * period, s=s, c=c)
    for n in range(n_max + 1):
        for arr, fn in ((s, np.sin), (c, np.cos)):
            g = y * fn(n * nu * t)
            C = _cumtrapz(t, g)
            arr[:, n] = scale * (_cum_at(t, g, C, T1) - _cum_at(t, g, C, T0))
    return WindowHarmonics(t_start=T0, t_mid=T0 + 0.5 * k * period, s=s, c=c)


@dataclass(frozen=True)
class Jump:
    """An amplitude jump between two kept windows.

    Attributes
    ----------
    t_before, t_after
        Centres of the last window before and the first window after the jump [s].
    b_before, b_after
        First-harmonic amplitudes either side [m]; nothing was measured in between.
    ratio
        Largest per-window increment of ``log b`` in the jump over the median one.
    windows_dropped
        Windows straddling the jump, excluded from the sequence.
    settle_s, windows_settling
        Settling time after the jump [s] and the windows dropped within it.
    b_lo, b_hi
        The gap in the conditioned sequence: consecutive nodes either side of the jump [m];
        the characteristics between them are interpolated, not identified.
    """

    t_before: float
    t_after: float
    b_before: float
    b_after: float
    ratio: float
    windows_dropped: int
    settle_s: float = 0.0
    windows_settling: int = 0
    b_lo: float | None = None
    b_hi: float | None = None

    def as_dict(self) -> dict:
        return {"t_before": self.t_before, "t_after": self.t_after, "b_before": self.b_before,
                "b_after": self.b_after, "increment_over_median": self.ratio,
                "windows_dropped": self.windows_dropped, "settle_s": self.settle_s,
                "windows_settling": self.windows_settling, "gap": [self.b_lo, self.b_hi]}


@dataclass(frozen=True)
class AmplitudeSequence:
    """Monotone sequence of equivalent-linearization quantities (one entry per kept window).

    Attributes
    ----------
    nu : float
        Excitation frequency [rad/s].
    mu : float
        Reduced mass [kg].
    t : ndarray
        Window centres [s].
    b : ndarray
        First-harmonic amplitude [m], strictly increasing.
    theta : ndarray
        Phase lag of the response behind the force [rad].
    e : ndarray
        Force amplitude [N].
    omega2 : ndarray
        Backbone [rad^2/s^2].
    lam : ndarray
        Equivalent viscous coefficient [N s/m].
    a0 : ndarray
        Zero harmonic, twice the mean [m].
    b2, a2 : ndarray
        Second harmonic relative to psi [m].
    force_mean : ndarray
        Mean applied force per window [N].
    jumps : list
        Detected amplitude jumps, with the gaps they leave.
    n_windows : ndarray
        Windows merged into each node.
    periods : int
        Periods per analysis window.
    windows : dict
        The kept windows in time order (``b``, ``member``: node index, and every per-window
        quantity), for the bootstrap of the bands.
    all_t, all_b : ndarray
        Centres [s] and amplitudes [m] of all windows, for plots and diagnostics.
    """

    nu: float
    mu: float
    t: np.ndarray
    b: np.ndarray
    theta: np.ndarray
    e: np.ndarray
    omega2: np.ndarray
    lam: np.ndarray
    a0: np.ndarray
    b2: np.ndarray
    a2: np.ndarray
    force_mean: np.ndarray
    jumps: list = field(default_factory=list)
    all_t: np.ndarray | None = None
    all_b: np.ndarray | None = None
    n_windows: np.ndarray | None = None
    periods: int = 6
    windows: dict | None = None

    @property
    def gaps(self) -> list[tuple[float, float]]:
        """``(b_lo, b_hi)`` of every gap between consecutive nodes left by jumps [m]
        (successive jumps that leave the same gap give it once)."""
        return sorted({(j.b_lo, j.b_hi) for j in self.jumps if j.b_lo is not None})

    @property
    def v(self) -> np.ndarray:
        """Velocity amplitude ``b nu`` [m/s]."""
        return self.b * self.nu


def _rates(t, b, theta, k):
    """d b/dt and d theta/dt at the window centres ``t`` of one stationary stretch."""
    from scipy.signal import savgol_filter

    n = len(t)
    if n < 3:
        return np.zeros(n), np.zeros(n)
    th = np.unwrap(theta)
    dt = np.median(np.diff(t))
    width = min(2 * k + 1, n if n % 2 else n - 1)
    if width < 3 or np.ptp(np.diff(t)) > 1e-6 * dt:
        return np.gradient(b, t), np.gradient(th, t)
    poly = min(2, width - 1)
    return (savgol_filter(b, width, poly, deriv=1, delta=dt, mode="interp"),
            savgol_filter(th, width, poly, deriv=1, delta=dt, mode="interp"))


def _wrap(a):
    return (a + np.pi) % (2 * np.pi) - np.pi


def amplitude_sequence(t: np.ndarray, x: np.ndarray, force: np.ndarray, nu: float, mu: float,
                       *, k: int = 6, skip: float | None = None, jump_factor: float = 8.0,
                       min_windows: int = 8, ramp_correction: bool = True,
                       rel_step: float = REL_STEP, n_tau: float = N_TAU) -> AmplitudeSequence:
    """Windowed first approximation (2.3) of a ramped constant-frequency resonance test.

    Parameters
    ----------
    t, x, force
        Record: times [s], response of the mode [m], applied force [N].
    nu
        Excitation frequency [rad/s].
    mu
        Reduced mass [kg].
    k
        Periods per window (a multiple of 6 rejects the 1/2 and 1/3 subharmonics).
    skip
        Hold time after the record start before the first window [s]; default ``2 k``
        periods.
    jump_factor
        An increment of ``b`` above this many times the median increment marks a jump.
    min_windows
        Fewest kept windows accepted.
    ramp_correction
        Correct for the ramp ([impl], beyond the paper's stationary formulas; see the module
        docstring): harmonics fitted with linearly varying amplitudes
        (``window_harmonics(modulated=True)``) and the drift terms of the averaged equations.
        False: [P]'s quadratures (4.3) and stationary formulas as printed.
    rel_step
        Relative width of the amplitude bins the windows are merged in
        (:func:`~.conditioning.merge_windows`; 0: sorting only).
    n_tau
        Settling time after a jump in free-decay time constants ``2 mu / lambda``.
    """
    t = np.asarray(t, float)
    if len(t) < 8 or np.any(np.diff(t) <= 0):
        raise DataError("time must be strictly increasing with at least 8 samples", key="t")
    if not (np.isfinite(nu) and nu > 0):
        raise InputError("excitation frequency must be positive [rad/s]", key="frequency")
    if not (np.isfinite(mu) and mu > 0):
        raise InputError("reduced mass must be positive [kg]", key="mass")
    if k < 1:
        raise InputError("window must hold at least one period", key="periods")
    if not (np.isfinite(rel_step) and 0 <= rel_step < 0.5):
        raise InputError("relative amplitude step must be in [0, 0.5)", key="rel_step")
    period = 2 * np.pi / nu
    hold = 2 * k * period if skip is None else float(skip)
    hx = window_harmonics(t, x, nu, k=k, n_max=2, t_first=t[0] + hold, modulated=ramp_correction)
    hf = window_harmonics(t, force, nu, k=k, n_max=1, t_first=t[0] + hold,
                          modulated=ramp_correction)
    b = np.hypot(hx.s[:, 1], hx.c[:, 1])
    e = np.hypot(hf.s[:, 1], hf.c[:, 1])
    alpha_x = np.arctan2(hx.c[:, 1], hx.s[:, 1])
    alpha_f = np.arctan2(hf.c[:, 1], hf.s[:, 1])
    theta = _wrap(alpha_f - alpha_x)
    two = 2 * alpha_x
    b2 = hx.s[:, 2] * np.cos(two) + hx.c[:, 2] * np.sin(two)
    a2 = -hx.s[:, 2] * np.sin(two) + hx.c[:, 2] * np.cos(two)
    a0 = hx.c[:, 0]
    fmean = 0.5 * hf.c[:, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        lam_static = e * np.sin(theta) / (b * nu)

    order = np.arange(len(b))
    if len(b) > 1 and np.polyfit(order, b, 1)[0] < 0:
        order = order[::-1]  # a decreasing ramp: build the sequence backwards in time
    bo = b[order]
    db = np.diff(np.log(np.maximum(bo, 1e-300)))  # relative increments: any ramp law
    pos = db[db > 0]
    typical = np.median(pos) if len(pos) else 0.0
    abnormal = np.r_[db > jump_factor * typical, False] if typical > 0 else np.zeros(len(bo), bool)
    keep = np.ones(len(bo), bool)
    segment = np.zeros(len(bo), int)  # stationary stretches between jumps
    jumps: list[Jump] = []
    edges = []  # (last index before, first index after) of each jump, ramp order
    j = 0
    while j < len(bo) - 1:
        if abnormal[j]:
            start = j
            while abnormal[j]:
                j += 1
            keep[start + 1:j] = False  # windows straddling the transition
            segment[j:] += 1
            # settling: the response beats about its new branch for a few 2 mu / lambda
            settle = settling_time(mu, lam_static[order[j:]], n_tau)
            t_first = hx.t_start[order[j]]
            n_settle = 0
            m = j
            while m < len(bo) and abs(hx.t_start[order[m]] - t_first) < settle:
                keep[m] = False
                n_settle += 1
                m += 1
            edges.append((start, m))
            jumps.append(Jump(t_before=float(hx.t_mid[order[start]]),
                              t_after=float(hx.t_mid[order[j]]),
                              b_before=float(bo[start]), b_after=float(bo[j]),
                              ratio=float(db[start:j].max() / typical),
                              windows_dropped=int(j - start - 1), settle_s=settle,
                              windows_settling=int(n_settle)))
            # the beating within the settling time is this jump's transient, not new jumps
            j = max(j, m - 1)
        j += 1

    # time derivatives of b and theta within each stationary stretch (time order)
    bdot = np.zeros(len(b))
    thdot = np.zeros(len(b))
    seg_t = np.empty(len(b), int)
    seg_t[order] = segment
    keep_t = np.empty(len(b), bool)
    keep_t[order] = keep
    if ramp_correction:
        for sgm in np.unique(seg_t):
            ii = np.flatnonzero((seg_t == sgm) & keep_t)
            bdot[ii], thdot[ii] = _rates(hx.t_mid[ii], b[ii], theta[ii], k)

    sel = np.flatnonzero(keep_t)
    if len(sel) < min_windows:
        raise DataError(f"only {len(sel)} usable windows (need {min_windows}); record too "
                        "short or amplitude not ramped", key="x")
    bs, es, ths = b[sel], e[sel], theta[sel]
    omega2 = nu * nu + (es * np.cos(ths) - 2 * mu * nu * bs * thdot[sel]) / (mu * bs)
    lam = (es * np.sin(ths) - 2 * mu * nu * bdot[sel]) / (bs * nu)
    per_window = {"t": hx.t_mid[sel], "theta": ths, "e": es, "omega2": omega2, "lam": lam,
                  "a0": a0[sel], "b2": b2[sel], "a2": a2[sel], "force_mean": fmean[sel]}
    b_nodes, nodes, count, member = merge_windows(bs, per_window, rel_step)
    if len(b_nodes) < min_windows:
        raise DataError(f"only {len(b_nodes)} distinct amplitudes (need {min_windows}); "
                        "amplitude not ramped", key="x")
    # the gap of each jump: the nodes of the last window before and the first kept after it
    node_of = np.full(len(b), -1)
    node_of[sel] = member
    rank = np.empty(len(b), int)
    rank[order] = np.arange(len(b))
    for n_j, (before, after) in enumerate(edges):
        lo = node_of[order[:before + 1]]
        hi = node_of[order[after:]]
        lo, hi = lo[lo >= 0], hi[hi >= 0]
        if len(lo) and len(hi) and lo.max() < hi.min():
            jumps[n_j] = replace(jumps[n_j], b_lo=float(b_nodes[lo.max()]),
                                 b_hi=float(b_nodes[hi.min()]))
    return AmplitudeSequence(nu=float(nu), mu=float(mu), t=nodes["t"], b=b_nodes,
                             theta=nodes["theta"], e=nodes["e"], omega2=nodes["omega2"],
                             lam=nodes["lam"], a0=nodes["a0"], b2=nodes["b2"], a2=nodes["a2"],
                             force_mean=nodes["force_mean"], jumps=jumps, all_t=hx.t_mid,
                             all_b=b, n_windows=count, periods=int(k),
                             windows={"b": bs, "member": member, **per_window})
