"""Time integration of the rod-appendage model: adaptive Dormand-Prince 5(4) inside the kernel,
load-window edges as step boundaries, clamp (latch) events located on the dense output.

Adaptive rather than the project's usual fixed-step RK4 because the point of the reduced
formulation is the step size: the full one is limited by the rods' bending frequencies, the
reduced one by the rigid motion, and each gets the step its own dynamics allow. The
coefficients and the quartic dense output (Shampine) are those of scipy's RK45; the error norm
and the initial step follow scipy too. Packed-array layouts: :mod:`models._kernels.appendage`.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from models._kernels import NJIT
from models._kernels.appendage import (
    CLAMP_HINGE, CLAMP_K, CLAMP_NU, CLAMP_THRESHOLD, FORM_FULL, FORM_FULL_PAPER, FORM_REDUCED,
    HINGE_K, HINGE_NU, LOAD_M, LOAD_T0, LOAD_T1, LOAD_X, LOAD_Y, STAT_NACCEPT, STAT_NFEV,
    STAT_NREJECT, STAT_SIZE, STATUS_MAX_STEPS, STATUS_OK, STATUS_STEP_UNDERFLOW, _full_rhs_ws,
    _reduced_rhs_ws, _Workspace, reduced_operators)

__all__ = ["integrate"]

# Dormand-Prince 5(4) with Shampine's quartic dense output (coefficients as scipy's RK45)
_RK_C = np.array([0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0])
_RK_A = np.array([
    [0.0, 0.0, 0.0, 0.0, 0.0],
    [1 / 5, 0.0, 0.0, 0.0, 0.0],
    [3 / 40, 9 / 40, 0.0, 0.0, 0.0],
    [44 / 45, -56 / 15, 32 / 9, 0.0, 0.0],
    [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0.0],
    [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656]])
_RK_B = np.array([35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84])
_RK_E = np.array([-71 / 57600, 0.0, 71 / 16695, -71 / 1920, 17253 / 339200, -22 / 525, 1 / 40])
_RK_P = np.array([
    [1.0, -8048581381 / 2820520608, 8663915743 / 2820520608, -12715105075 / 11282082432],
    [0.0, 0.0, 0.0, 0.0],
    [0.0, 131558114200 / 32700410799, -68118460800 / 10900136933, 87487479700 / 32700410799],
    [0.0, -1754552775 / 470086768, 14199869525 / 1410260304, -10690763975 / 1880347072],
    [0.0, 127303824393 / 49829197408, -318862633887 / 49829197408, 701980252875 / 199316789632],
    [0.0, -282668133 / 205662961, 2019193451 / 616988883, -1453857185 / 822651844],
    [0.0, 40617522 / 29380423, -110615467 / 29380423, 69997945 / 29380423]])



@njit(**NJIT)
def _rhs(form, y, body, rods, hinges, Q, G, Kt, Dt, Kbb_inv, Kbr, Dbr, dy, bend, W2, W1, I1):
    if form == FORM_FULL:
        return _full_rhs_ws(y, body, rods, hinges, Q, dy, W2, W1, I1, True)
    if form == FORM_FULL_PAPER:
        return _full_rhs_ws(y, body, rods, hinges, Q, dy, W2, W1, I1, False)
    return _reduced_rhs_ws(y, body, rods, Q, G, Kt, Dt, Kbb_inv, Kbr, Dbr, dy, bend,
                           W2, W1, I1)


@njit(**NJIT)
def _engage(clamps, c, t, engaged, clamp_t, hinges):
    """Engage clamp ``c`` at ``t`` [s]: mark it, record the time and put its stiffness and
    damping on its hinge (the reduced operators are the caller's to rebuild)."""
    k = int(clamps[c, CLAMP_HINGE])
    engaged[c] = 1
    clamp_t[c] = t
    hinges[k, HINGE_K] = clamps[c, CLAMP_K]
    hinges[k, HINGE_NU] = clamps[c, CLAMP_NU]


@njit(**NJIT)
def _load_vector(loads, t0, t1, Q):
    """Applied generalised forces on the segment ``[t0, t1)`` (constant there by construction)."""
    for i in range(Q.shape[0]):
        Q[i] = 0.0
    tm = 0.5 * (t0 + t1)
    for i in range(loads.shape[0]):
        if loads[i, LOAD_T0] <= tm < loads[i, LOAD_T1]:
            Q[0] += loads[i, LOAD_X]
            Q[1] += loads[i, LOAD_Y]
            Q[2] += loads[i, LOAD_M]


@njit(**NJIT)
def _rel_angle(y, off, k):
    """Relative chord angle across hinge k: ``phi_{k+1} - phi_k`` with ``phi_0 = 0``."""
    d = y[off + k]
    if k > 0:
        d -= y[off + k - 1]
    return d


@njit(**NJIT)
def _dense(yold, Kst, hs, theta, out):
    """Quartic dense output of the last Dormand-Prince step at ``t_old + theta h``."""
    ny = yold.shape[0]
    th1 = theta
    th2 = theta * theta
    th3 = th2 * theta
    th4 = th3 * theta
    for i in range(ny):
        s = 0.0
        for st in range(7):
            c = (_RK_P[st, 0] * th1 + _RK_P[st, 1] * th2 + _RK_P[st, 2] * th3
                 + _RK_P[st, 3] * th4)
            s += Kst[st, i] * c
        out[i] = yold[i] + hs * s


@njit(**NJIT)
def _dense_rel(yold, Kst, hs, theta, off, k):
    th1 = theta
    th2 = theta * theta
    th3 = th2 * theta
    th4 = th3 * theta
    d = 0.0
    for st in range(7):
        c = _RK_P[st, 0] * th1 + _RK_P[st, 1] * th2 + _RK_P[st, 2] * th3 + _RK_P[st, 3] * th4
        d += Kst[st, off + k] * c
        if k > 0:
            d -= Kst[st, off + k - 1] * c
    return _rel_angle(yold, off, k) + hs * d


@njit(**NJIT)
def _first_entry(y, Kst, hs, off, k, thr):
    """First ``theta`` in (0, 1] of the last step where ``|rel angle of hinge k| < thr``.

    The dense output is sampled at 8 points per step, and a sign change of the relative angle
    between samples (the chord passing straight through the window) is resolved too, so a
    window narrower than the step is not skipped. The entry is then located by bisection to
    1e-12 s. Returns ``(lo, hi)`` with ``hi < 0`` when the condition is not met in the step.
    """
    lo = 0.0
    vprev = _rel_angle(y, off, k)
    for j in range(1, 9):
        th = j / 8.0
        v = _dense_rel(y, Kst, hs, th, off, k)
        if abs(v) < thr or v * vprev < 0.0:
            hi = th
            if not abs(v) < thr:  # passed through zero: bracket the zero crossing first
                a = lo
                va = vprev
                for _ in range(100):
                    if (hi - a) * hs <= 1e-13:
                        break
                    mid = 0.5 * (a + hi)
                    vm = _dense_rel(y, Kst, hs, mid, off, k)
                    if abs(vm) < thr:
                        hi = mid
                        break
                    if vm * va < 0.0:
                        hi = mid
                    else:
                        a = mid
                        va = vm
                if not abs(_dense_rel(y, Kst, hs, hi, off, k)) < thr:
                    vprev = v
                    lo = th
                    continue
            for _ in range(100):
                if (hi - lo) * hs <= 1e-12:
                    break
                mid = 0.5 * (lo + hi)
                if abs(_dense_rel(y, Kst, hs, mid, off, k)) < thr:
                    hi = mid
                else:
                    lo = mid
            return lo, hi
        vprev = v
        lo = th
    return 0.0, -1.0


@njit(**NJIT)
def _write_output(form, y, t, body, rods, hinges, Q, G, Kt, Dt, Kbb_inv, Kbr, Dbr,
                  Y, bend_out, io, dy, bend, W2, W1, I1):
    ny = y.shape[0]
    n = rods.shape[0]
    for i in range(ny):
        Y[io, i] = y[i]
    if form == FORM_REDUCED:
        _rhs(form, y, body, rods, hinges, Q, G, Kt, Dt, Kbb_inv, Kbr, Dbr, dy, bend, W2, W1, I1)
        for i in range(2 * n):
            bend_out[io, i] = bend[i]
    else:
        N = 3 * n + 3
        for i in range(2 * n):
            bend_out[io, i] = y[N + 3 + n + i]


@njit(**NJIT)
def integrate(y0, t_out, body, rods, hinges0, loads, clamps, form, rtol, atol, max_step,
              max_steps, Y, bend_out, clamp_t, stats):
    """Integrate from ``t_out[0]`` to ``t_out[-1]`` with adaptive Dormand-Prince 5(4).

    Parameters
    ----------
    y0 : float64[ny]
        Initial state, full (``ny = 6n + 6``) or reduced (``ny = 2n + 6``) layout.
    t_out : float64[n_out]
        Increasing output times [s].
    form : int
        ``FORM_FULL``, ``FORM_FULL_PAPER`` (full without the second-order bending terms of
        the bias) or ``FORM_REDUCED``.
    rtol, atol : float
        Error control per component (scipy's RMS norm); ``max_step`` [s]; ``max_steps``.
    Y : float64[n_out, ny]
        Output: state at ``t_out``.
    bend_out : float64[n_out, 2n]
        Output: bending angles (alpha, beta) -- state (full) or quasi-static solution (reduced).
    clamp_t : float64[C]
        Output: engagement time of each clamp [s]; NaN if it never engaged.
    stats : int64[STAT_SIZE]
        Output: RHS evaluations, accepted and rejected steps.

    Steps never cross a load window edge (the right-hand side jumps there). A clamp engages
    when ``|phi_{k+1} - phi_k|`` first falls below its threshold: the dense output of each
    accepted step is sampled at 8 points (and zero crossings of the relative angle between
    samples are resolved), the entry is located by bisection to 1e-12 s; the hinge stiffness
    and damping are then replaced (permanently) and the integration restarts from the event
    state. A clamp whose condition holds at
    ``t_out[0]`` engages at ``t_out[0]``.
    """
    n = rods.shape[0]
    N = 3 * n + 3
    R = n + 3
    B = 2 * n
    ny = y0.shape[0]
    off = ny // 2 + 3  # index of phi_1 in the state (both layouts: [p, q])
    hinges = hinges0.copy()
    nclamp = clamps.shape[0]
    engaged = np.zeros(nclamp, dtype=np.int64)
    for c in range(nclamp):
        clamp_t[c] = np.nan
    for i in range(STAT_SIZE):
        stats[i] = 0
    G = np.zeros((R, B))
    Kt = np.zeros((R, R))
    Dt = np.zeros((R, R))
    Kbb_inv = np.zeros((B, B))
    Kbr = np.zeros((B, R))
    Dbr = np.zeros((B, R))
    bend = np.zeros(B)
    Q = np.zeros(N)
    W2, W1, I1 = _Workspace(n)
    y = y0.copy()
    t = t_out[0]
    tf = t_out[t_out.shape[0] - 1]
    n_out = t_out.shape[0]

    # clamps already satisfied at the start
    for c in range(nclamp):
        k = int(clamps[c, CLAMP_HINGE])
        if abs(_rel_angle(y, off, k)) < clamps[c, CLAMP_THRESHOLD]:
            _engage(clamps, c, t, engaged, clamp_t, hinges)
    if form == FORM_REDUCED:
        st = reduced_operators(rods, hinges, G, Kt, Dt, Kbb_inv, Kbr, Dbr)
        if st != STATUS_OK:
            return st

    # load-window edges
    nb = 0
    bps = np.empty(2 * loads.shape[0] + 1)
    for i in range(loads.shape[0]):
        for e in (loads[i, LOAD_T0], loads[i, LOAD_T1]):
            if t < e < tf:
                bps[nb] = e
                nb += 1
    bps[nb] = tf
    nb += 1
    bps = np.sort(bps[:nb])

    ib = 0
    while ib < nb - 1 and bps[ib] <= t:
        ib += 1
    seg_end = bps[ib]
    _load_vector(loads, t, seg_end, Q)

    Kst = np.empty((7, ny))
    ytmp = np.empty(ny)
    ynew = np.empty(ny)
    ydense = np.empty(ny)
    f0 = np.empty(ny)
    st = _rhs(form, y, body, rods, hinges, Q, G, Kt, Dt, Kbb_inv, Kbr, Dbr, f0, bend, W2, W1, I1)
    stats[STAT_NFEV] += 1
    if st != STATUS_OK:
        return st
    io = 0
    while io < n_out and t_out[io] <= t:
        _write_output(form, y, t, body, rods, hinges, Q, G, Kt, Dt, Kbb_inv, Kbr, Dbr,
                      Y, bend_out, io, ytmp, bend, W2, W1, I1)
        io += 1

    # initial step (Hairer, Norsett & Wanner II.4, as scipy's select_initial_step)
    d0 = 0.0
    d1 = 0.0
    for i in range(ny):
        sc = atol + abs(y[i]) * rtol
        d0 += (y[i] / sc) ** 2
        d1 += (f0[i] / sc) ** 2
    d0 = math.sqrt(d0 / ny)
    d1 = math.sqrt(d1 / ny)
    hh = 1e-6 if (d0 < 1e-5 or d1 < 1e-5) else 0.01 * d0 / d1
    hh = min(hh, seg_end - t)
    for i in range(ny):
        ytmp[i] = y[i] + hh * f0[i]
    st = _rhs(form, ytmp, body, rods, hinges, Q, G, Kt, Dt,
              Kbb_inv, Kbr, Dbr, ynew, bend, W2, W1, I1)
    stats[STAT_NFEV] += 1
    if st != STATUS_OK:
        return st
    d2 = 0.0
    for i in range(ny):
        sc = atol + abs(y[i]) * rtol
        d2 += ((ynew[i] - f0[i]) / sc) ** 2
    d2 = math.sqrt(d2 / ny) / hh
    dm = max(d1, d2)
    h1 = max(1e-6, hh * 1e-3) if dm <= 1e-15 else (0.01 / dm) ** 0.2
    h = min(100.0 * hh, h1, max_step)

    nsteps = 0
    while t < tf:
        if nsteps >= max_steps:
            return STATUS_MAX_STEPS
        nsteps += 1
        hs = min(h, max_step)
        hit = False
        if t + hs >= seg_end or seg_end - (t + hs) < 1e-12 * max(1.0, abs(seg_end)):
            hs = seg_end - t
            hit = True
        if hs < 1e-14 * max(1.0, abs(t)):
            return STATUS_STEP_UNDERFLOW
        for i in range(ny):
            Kst[0, i] = f0[i]
        for s_ in range(1, 6):
            for i in range(ny):
                acc = 0.0
                for j in range(s_):
                    acc += _RK_A[s_, j] * Kst[j, i]
                ytmp[i] = y[i] + hs * acc
            st = _rhs(form, ytmp, body, rods, hinges, Q, G, Kt, Dt, Kbb_inv, Kbr, Dbr,
                      Kst[s_], bend, W2, W1, I1)
            stats[STAT_NFEV] += 1
            if st != STATUS_OK:
                return st
        for i in range(ny):
            acc = 0.0
            for j in range(6):
                acc += _RK_B[j] * Kst[j, i]
            ynew[i] = y[i] + hs * acc
        st = _rhs(form, ynew, body, rods, hinges, Q, G, Kt, Dt,
                  Kbb_inv, Kbr, Dbr, Kst[6], bend, W2, W1, I1)
        stats[STAT_NFEV] += 1
        if st != STATUS_OK:
            return st
        err = 0.0
        for i in range(ny):
            e = 0.0
            for j in range(7):
                e += _RK_E[j] * Kst[j, i]
            sc = atol + max(abs(y[i]), abs(ynew[i])) * rtol
            err += (hs * e / sc) ** 2
        err = math.sqrt(err / ny)
        if not err <= 1.0:  # also rejects NaN
            stats[STAT_NREJECT] += 1
            fac = 0.9 * err ** -0.2 if err == err else 0.2
            h = hs * max(0.2, fac)
            continue
        stats[STAT_NACCEPT] += 1

        # clamp events inside the step: earliest first crossing
        te_theta = 2.0
        te_c = -1
        for c in range(nclamp):
            if engaged[c] == 1:
                continue
            k = int(clamps[c, CLAMP_HINGE])
            thr = clamps[c, CLAMP_THRESHOLD]
            lo, hi = _first_entry(y, Kst, hs, off, k, thr)
            if hi >= 0.0:
                if hi < te_theta:
                    te_theta = hi
                    te_c = c
        if te_c >= 0:
            te = t + te_theta * hs
            _dense(y, Kst, hs, te_theta, ydense)
            while io < n_out and t_out[io] <= te:
                _dense(y, Kst, hs, (t_out[io] - t) / hs, ytmp)
                _write_output(form, ytmp, t_out[io], body, rods, hinges, Q, G, Kt, Dt,
                              Kbb_inv, Kbr, Dbr, Y, bend_out, io, ynew, bend, W2, W1, I1)
                io += 1
            _engage(clamps, te_c, te, engaged, clamp_t, hinges)
            if form == FORM_REDUCED:
                st = reduced_operators(rods, hinges, G, Kt, Dt, Kbb_inv, Kbr, Dbr)
                if st != STATUS_OK:
                    return st
            t = te
            for i in range(ny):
                y[i] = ydense[i]
            st = _rhs(form, y, body, rods, hinges, Q, G, Kt, Dt,
                      Kbb_inv, Kbr, Dbr, f0, bend, W2, W1, I1)
            stats[STAT_NFEV] += 1
            if st != STATUS_OK:
                return st
            h = max(te_theta * hs, 1e-6 * hs)  # the stiffened hinge needs a fresh step size
            continue

        tnew = seg_end if hit else t + hs
        while io < n_out and t_out[io] <= tnew:
            _dense(y, Kst, hs, (t_out[io] - t) / hs, ytmp)
            _write_output(form, ytmp, t_out[io], body, rods, hinges, Q, G, Kt, Dt,
                          Kbb_inv, Kbr, Dbr, Y, bend_out, io, ydense, bend, W2, W1, I1)
            io += 1
        t = tnew
        for i in range(ny):
            y[i] = ynew[i]
            f0[i] = Kst[6, i]
        if hit and ib < nb - 1:
            ib += 1
            seg_end = bps[ib]
            _load_vector(loads, t, seg_end, Q)
            st = _rhs(form, y, body, rods, hinges, Q, G, Kt, Dt,
                      Kbb_inv, Kbr, Dbr, f0, bend, W2, W1, I1)
            stats[STAT_NFEV] += 1
            if st != STATUS_OK:
                return st
        fac = 10.0 if err == 0.0 else min(10.0, 0.9 * err ** -0.2)
        h = hs * max(0.2, fac)
    return STATUS_OK
