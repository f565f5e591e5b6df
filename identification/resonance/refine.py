"""Refinement beyond the first approximation: fit the oscillator to the whole record.

The Abel inversions invert the *first approximation* of the periodic response; their bias
(higher harmonics, offset-stiffness coupling, the law below the first amplitude) is of second
order in the nonlinearity. The refinement removes it by simulating the single-mode oscillator

.. math::

    \\mu\\ddot x + H(\\dot x) + \\varphi(x) = F(t)

(:class:`models.oscillator.SingleModeOscillator`, numba RK4) driven by the *measured* force and
fitting the simulated displacement to the measured one over the analysed part of the record
(after the hold time), by Levenberg-Marquardt least squares
(:func:`scipy.optimize.least_squares`, ``method="lm"``, finite-difference Jacobian), starting
from the Abel estimate.

Model ([impl]):

* :math:`\\varphi(x) = F_0\\,\\mathrm{sign}\\,x + p(x)`, ``p`` piecewise linear on
  ``2 n_x`` equal segments over ``[-1.02 b_max, 1.02 b_max]`` with ``p(0) = 0``; the node
  values are free (monotonicity is not imposed: a slope parameterisation with bounds was
  tried and converged far slower); ``F0`` (a preload) starts from the intercept of the Abel
  estimate's first measured points;
* :math:`H(v) = F_c\\,\\mathrm{sign}\\,v + q(v)`, ``q`` odd, piecewise linear on ``n_v``
  equal segments over ``[0, 1.05 v_max]``, ``F_c`` (Coulomb) likewise;
* the initial displacement and velocity are fitted too.

Between samples the force is a cubic spline of the record; the oscillator is integrated with
``substeps`` RK4 steps per sample interval.

The result reports how much the characteristics changed (largest relative change where the
refined value exceeds 10 % of its maximum) and the residual RMS before and after.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from models.oscillator import SingleModeOscillator, half_step_times

from .own import OwnResonanceResult

__all__ = ["RefinementResult", "refine"]


@dataclass(frozen=True)
class RefinementResult:
    """Refined characteristics and what the refinement changed.

    Attributes
    ----------
    x, restoring
        Nodes [m] and restoring force :math:`\\varphi` [N] (piecewise linear between, plus the
        preload jump ``preload`` at 0).
    v, damping
        Nodes ``>= 0`` [m/s] and damping force :math:`H` [N] (plus ``coulomb`` at ``0+``).
    preload, coulomb
        :math:`F_0`, :math:`F_c` [N].
    change_restoring, change_damping
        Largest relative change from the Abel estimate (where the refined value exceeds 10 %
        of its maximum) [-].
    rms_before, rms_after
        Displacement residual RMS of the Abel estimate and of the refined model [m].
    nfev
        Simulations used by the fit.
    """

    x: np.ndarray
    restoring: np.ndarray
    v: np.ndarray
    damping: np.ndarray
    preload: float
    coulomb: float
    change_restoring: float
    change_damping: float
    rms_before: float
    rms_after: float
    nfev: int

    def restoring_force(self, x) -> np.ndarray:
        x = np.asarray(x, float)
        return np.interp(x, self.x, self.restoring) + self.preload * np.sign(x)

    def damping_force(self, v) -> np.ndarray:
        v = np.asarray(v, float)
        return np.sign(v) * (np.interp(np.abs(v), self.v, self.damping) + self.coulomb * (v != 0))

    def summary(self) -> dict:
        return {"change_restoring": self.change_restoring, "change_damping": self.change_damping,
                "rms_before_m": self.rms_before, "rms_after_m": self.rms_after,
                "simulations": self.nfev, "preload_N": self.preload, "coulomb_N": self.coulomb}


class _Model:
    def __init__(self, t, x, force, mu, hold, xn, vn, substeps, decimate):
        from scipy.interpolate import CubicSpline

        self.t, self.x, self.mu = t, x, mu
        dt = np.diff(t)
        if np.ptp(dt) > 1e-4 * dt.mean():  # CSV rounding of t is far below this
            raise ValueError("refinement needs uniformly sampled records")
        self.h = dt.mean() / substeps
        self.substeps = substeps
        self.n_steps = (len(t) - 1) * substeps
        self.force = CubicSpline(t, force)(half_step_times(t[0], self.h, self.n_steps))
        self.fit = t >= t[0] + hold
        self.fit[np.arange(len(t)) % decimate != 0] = False
        self.xn, self.vn = xn, vn
        self.nx = len(xn) - 1
        self.nv = len(vn) - 1
        self.scale = np.std(x[self.fit])

    # parameter vector: [x0, v0, F0, phi at the nodes except x = 0 (nx), Fc, q at v > 0 (nv)]
    def tables(self, p):
        mid = self.nx // 2
        F0 = p[2]
        phi = np.r_[p[3:3 + mid], 0.0, p[3 + mid:3 + self.nx]]
        Fc = p[3 + self.nx]
        qv = np.r_[0.0, p[4 + self.nx:]]
        return F0, phi, Fc, qv

    def oscillator(self, p):
        F0, phi, Fc, qv = self.tables(p)
        xn = self.xn
        mid = self.nx // 2
        xt = np.r_[xn[:mid + 1], xn[mid:]]
        ft = np.r_[phi[:mid + 1] - F0, phi[mid:] + F0]
        vt = np.r_[-self.vn[::-1], self.vn[1:]] if Fc == 0 else \
            np.r_[-self.vn[::-1], self.vn]
        ht = np.r_[-(qv[::-1] + Fc), qv[1:] + Fc] if Fc == 0 else \
            np.r_[-(qv[::-1] + Fc), qv + Fc]
        return SingleModeOscillator(self.mu, (xt, ft), (vt, ht))

    def simulate(self, p):
        osc = self.oscillator(p)
        _, xs, _ = osc.simulate(self.force, t0=self.t[0], h=self.h, n_steps=self.n_steps,
                                x0=p[0], v0=p[1], stride=self.substeps)
        return xs

    def residual(self, p):
        try:
            xs = self.simulate(p)
        except FloatingPointError:
            return np.full(int(self.fit.sum()), 1e3)
        return (xs[self.fit] - self.x[self.fit]) / self.scale


def _intercept(ch) -> float:
    """Positive intercept at 0 of the least-squares line through the measured points in
    ``[x_first, 2 x_first]`` (at least 3): a preload or Coulomb force; else 0."""
    sel = (ch.x >= ch.x_first) & (ch.x <= 2 * ch.x_first)
    if sel.sum() < 3:
        sel = np.flatnonzero(ch.x >= ch.x_first)[:3]
    slope, icpt = np.polyfit(ch.x[sel], ch.value[sel], 1)
    return max(0.0, float(icpt))


def refine(result: OwnResonanceResult, t: np.ndarray, x: np.ndarray, force: np.ndarray, *,
           hold: float | None = None, n_x: int = 24, n_v: int = 24, substeps: int = 4,
           decimate: int = 4, max_nfev: int = 100) -> RefinementResult:
    """Refine the Abel estimate ``result`` by fitting the oscillator to the record.

    Parameters
    ----------
    result
        Abel estimate (its sequence gives ``mu``, ``nu``, ``b_max``, ``v_max``).
    t, x, force
        The record [s], [m], [N], uniformly sampled.
    hold
        Samples before ``t[0] + hold`` are simulated but not fitted [s]; default 12 periods.
    n_x, n_v
        Segments per side of the restoring-force spline; segments of the damping spline.
    substeps
        RK4 steps per sample interval.
    decimate
        Every ``decimate``-th sample enters the residual (8 per period at 32 samples per
        period is ample, and keeps the solver's linear algebra small).
    max_nfev
        Budget of residual evaluations of the least-squares solver.

    Measured on the shipped records (``tests/identification/resonance/test_refine.py``):
    preload 0.70 % / 1.91 % (force / damping, Abel) -> 0.20 % / 0.72 % (44 simulations,
    ~9 s); dead zone 0.33 % / 1.95 % -> 0.71 % / 1.34 % (the kinks at +-delta are not nodes
    of the spline: not below 1 % there).
    """
    from scipy.optimize import least_squares

    seq = result.sequence
    t = np.asarray(t, float)
    x = np.asarray(x, float)
    force = np.asarray(force, float)
    if hold is None:
        hold = 12 * 2 * np.pi / seq.nu
    X = 1.02 * seq.b[-1]
    V = 1.05 * seq.v[-1]
    xn = np.linspace(-X, X, 2 * n_x + 1)
    vn = np.linspace(0.0, V, n_v + 1)
    model = _Model(t, x, force, seq.mu, hold, xn, vn, substeps, decimate)

    # start: Abel estimate at the nodes; preload / Coulomb from the limit at 0+
    F0 = _intercept(result.restoring_odd)
    phi0 = result.restoring_force(xn) - F0 * np.sign(xn)
    sx = np.delete(phi0, n_x)
    Fc = _intercept(result.velocity_damping)
    q0 = result.damping_force(vn) - Fc * (vn > 0)
    sv = q0[1:]
    v0 = (x[1] - x[0]) / (t[1] - t[0])
    p0 = np.r_[x[0], v0, F0, sx, Fc, sv]
    r0 = model.residual(p0)
    sol = least_squares(model.residual, p0, method="lm", x_scale="jac", max_nfev=max_nfev,
                        diff_step=1e-6)
    p = sol.x
    F0r, phi, Fcr, qv = model.tables(p)
    rms_b = float(np.sqrt(np.mean(r0 ** 2)) * model.scale)
    rms_a = float(np.sqrt(np.mean(sol.fun ** 2)) * model.scale)
    out = RefinementResult(x=xn, restoring=phi, v=vn, damping=qv, preload=float(F0r),
                           coulomb=float(Fcr), change_restoring=0.0, change_damping=0.0,
                           rms_before=rms_b, rms_after=rms_a,
                           nfev=int(sol.nfev))
    xs = np.linspace(-seq.b[-1], seq.b[-1], 401)
    new, old = out.restoring_force(xs), result.restoring_force(xs)
    m = np.abs(new) > 0.1 * np.abs(new).max()
    vs = np.linspace(0, seq.v[-1], 201)[1:]
    hnew, hold_ = out.damping_force(vs), result.damping_force(vs)
    mh = np.abs(hnew) > 0.1 * np.abs(hnew).max()
    return RefinementResult(**{**out.__dict__,
                               "change_restoring": float(np.max(np.abs(new - old)[m] / np.abs(new[m]))),
                               "change_damping": float(np.max(np.abs(hnew - hold_)[mh] / np.abs(hnew[mh])))})
