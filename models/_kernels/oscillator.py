"""Kernels of the single-mode nonlinear oscillator of the resonance test and of a two-mode
system with a conservative polynomial cross-coupling (digest B.2, B.3, B.8).

Single mode ((2.2) / (4.1) of the resonance paper, ``e = 1``)::

    mu x'' + H(x') + D(x) x' + phi(x) = F(t)

``phi``, ``H`` and ``D`` are piecewise-linear tables (abscissae non-decreasing; a repeated
abscissa is a jump, e.g. a preload ``F0 sign x``; linear extrapolation beyond the ends).

Packed arrays (SI units)
------------------------
``table``  float64[n, 3]   ``[abscissa, value, slope]`` rows (``TAB_X, TAB_F, TAB_S``), slope of
                           the segment to the next row (0 for a zero-length segment)
``par1``   float64[1]      ``[1/mu 1/kg]`` (``P1_INV_MASS``)
``par2``   float64[6]      ``[mu_p, h_p, gamma_p, mu_s, h_s, gamma_s]`` (``P2_*``): masses [kg],
                           viscous coefficients [N s/m], stiffnesses [N/m] of the two modes
``coef``   float64[K]      coupling ``f_sp(x_p) = sum_k coef[k] x_p^k`` [N/m^k]; it enters as
                           ``+f_sp(x_p)`` on mode s and ``+x_s f_sp'(x_p)`` on mode p (gradient
                           of the pair potential ``W = x_s f_sp(x_p)``, digest B.2)
``force``  float64[2N+1]   applied force at the half steps ``t0 + j h/2`` [N]

Integration: classical RK4 with step ``h``; the force at the stage times comes from the
half-step samples, so the forcing is exact at every stage. Status: ``STATUS_OK`` or
``STATUS_NONFINITE`` (the state left the finite range; the output is filled up to there).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from models._kernels import NJIT

__all__ = ["TAB_X", "TAB_F", "TAB_S", "P1_INV_MASS", "P1_SIZE",
           "P2_MU_P", "P2_H_P", "P2_G_P", "P2_MU_S", "P2_H_S", "P2_G_S", "P2_SIZE",
           "STATUS_OK", "STATUS_NONFINITE", "table_eval", "simulate_single",
           "simulate_single_sensitivity", "simulate_two_mode"]

TAB_X, TAB_F, TAB_S = 0, 1, 2
P1_INV_MASS, P1_SIZE = 0, 1
P2_MU_P, P2_H_P, P2_G_P, P2_MU_S, P2_H_S, P2_G_S, P2_SIZE = 0, 1, 2, 3, 4, 5, 6
STATUS_OK, STATUS_NONFINITE = 0, 1


@njit(**NJIT)
def table_eval(table, x):
    """Piecewise-linear table at ``x`` (binary search; right-continuous at a jump)."""
    n = table.shape[0]
    lo = 0
    hi = n - 1
    if x < table[1, TAB_X]:
        i = 0
    elif x >= table[n - 1, TAB_X]:
        i = n - 2  # the readable layer guarantees end segments of positive length
    else:
        # invariant: table[lo] <= x < table[hi]
        while hi - lo > 1:
            mid = (lo + hi) >> 1
            if table[mid, TAB_X] <= x:
                lo = mid
            else:
                hi = mid
        i = lo
    return table[i, TAB_F] + table[i, TAB_S] * (x - table[i, TAB_X])


@njit(**NJIT)
def _acc1(x, v, f, phi, hv, dx, inv_m):
    return (f - table_eval(hv, v) - table_eval(dx, x) * v - table_eval(phi, x)) * inv_m


@njit(**NJIT)
def simulate_single(phi, hv, dx, par1, x0, v0, h, force, stride, out_x, out_v):
    """RK4 of the single-mode oscillator; every ``stride`` steps the state goes to
    ``out_x``/``out_v`` (length ``N // stride + 1``; ``N = (len(force) - 1) // 2`` steps).
    Returns the status."""
    inv_m = par1[P1_INV_MASS]
    n_steps = (force.shape[0] - 1) // 2
    x = x0
    v = v0
    out_x[0] = x
    out_v[0] = v
    half = 0.5 * h
    sixth = h / 6.0
    k = 1
    for j in range(n_steps):
        f0 = force[2 * j]
        f1 = force[2 * j + 1]
        f2 = force[2 * j + 2]
        a1 = _acc1(x, v, f0, phi, hv, dx, inv_m)
        x2 = x + half * v
        v2 = v + half * a1
        a2 = _acc1(x2, v2, f1, phi, hv, dx, inv_m)
        x3 = x + half * v2
        v3 = v + half * a2
        a3 = _acc1(x3, v3, f1, phi, hv, dx, inv_m)
        x4 = x + h * v3
        v4 = v + h * a3
        a4 = _acc1(x4, v4, f2, phi, hv, dx, inv_m)
        x = x + sixth * (v + 2.0 * v2 + 2.0 * v3 + v4)
        v = v + sixth * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
        if not (np.isfinite(x) and np.isfinite(v)):
            return STATUS_NONFINITE
        if (j + 1) % stride == 0:
            out_x[k] = x
            out_v[k] = v
            k += 1
    return STATUS_OK


@njit(**NJIT)
def _segment(table, x):
    """Index ``i`` of the segment :func:`table_eval` uses at ``x`` and the weight ``w`` of row
    ``i + 1`` in its value (``(1 - w) F_i + w F_{i+1}``; outside ``[0, 1]`` beyond the ends)."""
    n = table.shape[0]
    lo = 0
    hi = n - 1
    if x < table[1, TAB_X]:
        i = 0
    elif x >= table[n - 1, TAB_X]:
        i = n - 2
    else:
        while hi - lo > 1:
            mid = (lo + hi) >> 1
            if table[mid, TAB_X] <= x:
                lo = mid
            else:
                hi = mid
        i = lo
    return i, (x - table[i, TAB_X]) / (table[i + 1, TAB_X] - table[i, TAB_X])


@njit(**NJIT)
def _acc_sens(x, v, f, phi, hv, dx, inv_m, sx, sv, out):
    """Acceleration at ``(x, v)`` and, into ``out``, its derivative with respect to the
    parameters whose state sensitivities are ``sx``, ``sv`` (columns: ``x0``, ``v0``, the
    rows of ``phi``, the rows of ``hv``)."""
    ip, wp = _segment(phi, x)
    ih, wh = _segment(hv, v)
    d = table_eval(dx, x)
    dphi = phi[ip, TAB_S]
    dh = hv[ih, TAB_S]
    idd, _ = _segment(dx, x)
    ddx = dx[idd, TAB_S] * v
    cx = -(dphi + ddx) * inv_m
    cv = -(dh + d) * inv_m
    for k in range(out.shape[0]):
        out[k] = cx * sx[k] + cv * sv[k]
    np_ = phi.shape[0]
    out[2 + ip] -= (1.0 - wp) * inv_m
    out[3 + ip] -= wp * inv_m
    out[2 + np_ + ih] -= (1.0 - wh) * inv_m
    out[3 + np_ + ih] -= wh * inv_m
    a = phi[ip, TAB_F] + dphi * (x - phi[ip, TAB_X])
    hval = hv[ih, TAB_F] + dh * (v - hv[ih, TAB_X])
    return (f - hval - d * v - a) * inv_m


@njit(**NJIT)
def simulate_single_sensitivity(phi, hv, dx, par1, x0, v0, h, force, stride, out_x, out_s):
    """:func:`simulate_single` with the exact derivative of its RK4 map: every ``stride``
    steps the displacement goes to ``out_x`` and its derivative with respect to ``x0``,
    ``v0``, the values of the rows of ``phi`` and the values of the rows of ``hv`` to the row
    of ``out_s`` (``(len(out_x), 2 + len(phi) + len(hv))``). The stages are differentiated as
    they are computed (chain rule through each RK4 stage), so the result is the derivative
    of the discrete solution wherever no stage sits on a table node. Returns the status."""
    inv_m = par1[P1_INV_MASS]
    n_steps = (force.shape[0] - 1) // 2
    K = out_s.shape[1]
    sx = np.zeros(K)
    sv = np.zeros(K)
    sx[0] = 1.0
    sv[1] = 1.0
    s2x = np.empty(K)
    s2v = np.empty(K)
    s3x = np.empty(K)
    s3v = np.empty(K)
    s4x = np.empty(K)
    s4v = np.empty(K)
    d1 = np.empty(K)
    d2 = np.empty(K)
    d3 = np.empty(K)
    d4 = np.empty(K)
    x = x0
    v = v0
    out_x[0] = x
    out_s[0, :] = sx
    half = 0.5 * h
    sixth = h / 6.0
    k = 1
    for j in range(n_steps):
        f0 = force[2 * j]
        f1 = force[2 * j + 1]
        f2 = force[2 * j + 2]
        a1 = _acc_sens(x, v, f0, phi, hv, dx, inv_m, sx, sv, d1)
        x2 = x + half * v
        v2 = v + half * a1
        for q in range(K):
            s2x[q] = sx[q] + half * sv[q]
            s2v[q] = sv[q] + half * d1[q]
        a2 = _acc_sens(x2, v2, f1, phi, hv, dx, inv_m, s2x, s2v, d2)
        x3 = x + half * v2
        v3 = v + half * a2
        for q in range(K):
            s3x[q] = sx[q] + half * s2v[q]
            s3v[q] = sv[q] + half * d2[q]
        a3 = _acc_sens(x3, v3, f1, phi, hv, dx, inv_m, s3x, s3v, d3)
        x4 = x + h * v3
        v4 = v + h * a3
        for q in range(K):
            s4x[q] = sx[q] + h * s3v[q]
            s4v[q] = sv[q] + h * d3[q]
        a4 = _acc_sens(x4, v4, f2, phi, hv, dx, inv_m, s4x, s4v, d4)
        x = x + sixth * (v + 2.0 * v2 + 2.0 * v3 + v4)
        v = v + sixth * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
        for q in range(K):
            sx[q] = sx[q] + sixth * (sv[q] + 2.0 * s2v[q] + 2.0 * s3v[q] + s4v[q])
            sv[q] = sv[q] + sixth * (d1[q] + 2.0 * d2[q] + 2.0 * d3[q] + d4[q])
        if not (np.isfinite(x) and np.isfinite(v)):
            return STATUS_NONFINITE
        if (j + 1) % stride == 0:
            out_x[k] = x
            out_s[k, :] = sx
            k += 1
    return STATUS_OK


@njit(**NJIT)
def _poly(coef, x):
    s = 0.0
    for k in range(coef.shape[0] - 1, -1, -1):
        s = s * x + coef[k]
    return s


@njit(**NJIT)
def _dpoly(coef, x):
    s = 0.0
    for k in range(coef.shape[0] - 1, 0, -1):
        s = s * x + k * coef[k]
    return s


@njit(**NJIT)
def _rhs2(y, f, par2, coef, inv_mp, inv_ms, out):
    xp, vp, xs, vs = y[0], y[1], y[2], y[3]
    out[0] = vp
    out[1] = (f - par2[P2_H_P] * vp - par2[P2_G_P] * xp + xs * _dpoly(coef, xp)) * inv_mp
    out[2] = vs
    out[3] = (-par2[P2_H_S] * vs - par2[P2_G_S] * xs + _poly(coef, xp)) * inv_ms


@njit(**NJIT)
def simulate_two_mode(par2, coef, y0, h, force, stride, out):
    """RK4 of the two-mode system; state ``[x_p, v_p, x_s, v_s]`` every ``stride`` steps into
    ``out`` (shape ``(N // stride + 1, 4)``). The force acts on mode p. Returns the status."""
    n_steps = (force.shape[0] - 1) // 2
    inv_mp = 1.0 / par2[P2_MU_P]
    inv_ms = 1.0 / par2[P2_MU_S]
    y = y0.copy()
    k1 = np.empty(4)
    k2 = np.empty(4)
    k3 = np.empty(4)
    k4 = np.empty(4)
    tmp = np.empty(4)
    out[0, :] = y
    row = 1
    for j in range(n_steps):
        _rhs2(y, force[2 * j], par2, coef, inv_mp, inv_ms, k1)
        for i in range(4):
            tmp[i] = y[i] + 0.5 * h * k1[i]
        _rhs2(tmp, force[2 * j + 1], par2, coef, inv_mp, inv_ms, k2)
        for i in range(4):
            tmp[i] = y[i] + 0.5 * h * k2[i]
        _rhs2(tmp, force[2 * j + 1], par2, coef, inv_mp, inv_ms, k3)
        for i in range(4):
            tmp[i] = y[i] + h * k3[i]
        _rhs2(tmp, force[2 * j + 2], par2, coef, inv_mp, inv_ms, k4)
        for i in range(4):
            y[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])
        if not np.isfinite(y[0] + y[1] + y[2] + y[3]):
            return STATUS_NONFINITE
        if (j + 1) % stride == 0:
            out[row, :] = y
            row += 1
    return STATUS_OK
