"""Probe-cone kernel: the absorbers' hysteresis tables rebuilt from their characteristic
numbers at the start of a run, so that a reconstruction can fit those numbers per evaluation
(the tables are otherwise packed once per scenario by :func:`models.probe_cone.simulate.pack`).

Each builder is the compiled twin of the Python one it replaces, arithmetic for arithmetic:

* :func:`axial_table` of :meth:`models.probe_cone.config.AxialAbsorber.branches` (the spring
  mechanism in series with the friction brake; digest A.10), its slip level given apart
  (``P_F_SLIP``, which :func:`~models.probe_cone._kernels.layout.apply_slip_force` also sets);
* :func:`lateral_table` of :meth:`models.probe_cone.config.LateralAbsorber.branches` (the
  two-stage spring mechanisms, and the torsion element of the same form; digest A.2-A.8);

then the slopes, the mirrored negative block, the transition slopes and the end-point
tolerance exactly as :meth:`models.hysteresis.HysteresisElement.table` packs them, so a table
rebuilt here from the preset's numbers is bit-identical to the packed one (tested). Each
builder returns 0, or 1 when the numbers do not make a valid element, with the checks of the
dataclass (``__post_init__``), of the builder, and the consistency constraints of digest A.3
(:func:`models.hysteresis._validate_side`): the run then ends with ``ST_BAD_TABLE``, which a
reconstruction reads as zero likelihood, as the Python constructors would have refused the
scenario.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from models._kernels import NJIT
from models._kernels import hysteresis as hk

__all__ = ["AXIAL_FIELDS", "LATERAL_FIELDS", "axial_table", "lateral_table", "check_side"]

#: the axial absorber's numbers in ``P_AXC`` (order), the slip level apart (``P_F_SLIP``)
AXIAL_FIELDS = ("common_stroke", "common_force", "spring_stroke", "spring_force",
                "unloading_force", "stiff_rate", "tension_slip_force")
#: the lateral and torsion absorbers' numbers in ``P_LATC`` and ``P_TORC`` (order)
LATERAL_FIELDS = ("common_angle", "stage1_rate", "stage1_angle", "stage2_rate", "range_angle",
                  "stop_rate", "unloading_ratio")


@njit(**NJIT)
def _branch_force(q, Q, k, n, x):
    """:meth:`models.hysteresis.Branch.force` at one abscissa (signed branch arrays)."""
    sgn = 1.0 if q[n - 1] > 0 else -1.0
    xx = sgn * x
    if xx <= sgn * q[0]:
        return 0.0
    j = 0
    for i in range(n):
        if sgn * q[i] <= xx:
            j = i
    return Q[j] + k[j] * (x - q[j])


@njit(**NJIT)
def check_side(qF, QF, kF, qB, QB, kB, n, k3, sign, brake):
    """The consistency constraints of digest A.3 on one side, as
    :func:`models.hysteresis._validate_side` checks them (signed arrays, ``sign`` +1 or -1):
    0 when they hold, else 1."""
    scale = 0.0
    fscale = 0.0
    for j in range(n):
        scale = max(scale, abs(qF[j]), abs(qB[j]))
        fscale = max(fscale, abs(QF[j]), abs(QB[j]))
    if scale == 0.0:
        scale = 1.0
    if fscale == 0.0:
        fscale = 1.0
    for br in range(2):
        q = qF if br == 0 else qB
        Q = QF if br == 0 else QB
        k = kF if br == 0 else kB
        if sign * q[0] < 0.0:
            return 1
        for j in range(n - 1):
            if not sign * q[j + 1] - sign * q[j] > 0.0:
                return 1
            if not k[j] >= 0.0:
                return 1
        if abs(Q[0]) > 1e-12 * fscale:
            return 1
        for j in range(1, n):
            if sign * Q[j] < -1e-12 * fscale:
                return 1
    rq = 1e-9 * scale
    rQ = 1e-9 * fscale
    for j in (0, 1, n - 1):
        if abs(qF[j] - qB[j]) > rq or abs(QF[j] - QB[j]) > rQ:
            return 1
    if not (k3 > 0.0 and np.isfinite(k3)):
        return 1
    kmax_work = 0.0
    for j in range(n - 1):
        kmax_work = max(kmax_work, kF[j], kB[j])
    if kmax_work > k3 * (1 + 1e-9):
        return 1
    if not brake and abs(kB[n - 2] - k3) > 1e-6 * k3:
        return 1
    # loading above unloading at every node of both branches
    for br in range(2):
        q = qF if br == 0 else qB
        for j in range(1, n):
            gap = sign * (_branch_force(qF, QF, kF, n, q[j]) - _branch_force(qB, QB, kB, n, q[j]))
            if gap < -1e-9 * fscale:
                return 1
    return 0


@njit(**NJIT)
def _slopes(q, Q, k, n, k_beyond):
    for j in range(n - 1):
        k[j] = (Q[j + 1] - Q[j]) / (q[j + 1] - q[j])
    k[n - 1] = k_beyond


@njit(**NJIT)
def _write(table, t0, kind, k3p, k3n, sides, n):
    """Header and both blocks of one element (``sides``: (qF, QF, kF, qB, QB, kB) of the
    positive then of the negative side, signed), as ``HysteresisElement.table``."""
    table[t0 + hk.H_KIND] = kind
    table[t0 + hk.H_NP] = n
    table[t0 + hk.H_NN] = n
    table[t0 + hk.H_K3P] = k3p
    table[t0 + hk.H_K3N] = k3n
    qmax = 0.0
    for j in range(n):
        qmax = max(qmax, abs(sides[0, j]), abs(sides[6, j]))
    tol = 1e-9 * qmax
    table[t0 + hk.H_TOL] = tol
    for j in range(hk.H_TOL + 1, hk.H_SIZE):      # reserved
        table[t0 + j] = 0.0
    if tol >= 0.5 * min(sides[0, 1] - sides[0, 0], sides[6, 0] - sides[6, 1]):
        return 1
    pos = t0 + hk.H_SIZE
    for s in range(2):
        sgn = 1.0 if s == 0 else -1.0
        for br in range(2):
            a = 6 * s + 3 * br
            for j in range(n):
                table[pos + j] = sgn * sides[a, j]
                table[pos + n + j] = sgn * sides[a + 1, j]
                table[pos + 2 * n + j] = sides[a + 2, j]
            pos += 3 * n
    return 0


@njit(**NJIT)
def axial_table(table, t0, c, slip_force):
    """Rebuild the axial absorber's element at ``table[t0:]`` from ``c`` (the numbers of
    :data:`AXIAL_FIELDS`) and ``slip_force`` [N], as ``AxialAbsorber(...).element().table()``;
    0, or 1 when they make no valid element (the table is then partly written)."""
    cs, cf, ss, sf, uf, ks, ts = c[0], c[1], c[2], c[3], c[4], c[5], c[6]
    if not 0.0 < cs < ss:
        return 1
    if not 0.0 < cf < uf < sf < slip_force:
        return 1
    k_spring = (sf - cf) / (ss - cs)
    if ks <= max(k_spring, cf / cs):
        return 1
    if ts <= 0.0:
        return 1
    n = 4
    s = np.zeros((12, n))
    k0 = cf / cs
    q_slip = ss + (slip_force - sf) / ks
    qb2 = q_slip - (slip_force - uf) / ks
    s[0, 0], s[0, 1], s[0, 2], s[0, 3] = 0.0, cs, ss, q_slip
    s[1, 0], s[1, 1], s[1, 2], s[1, 3] = 0.0, cf, sf, slip_force
    s[3, 0], s[3, 1], s[3, 2], s[3, 3] = 0.0, cs, qb2, q_slip
    s[4, 0], s[4, 1], s[4, 2], s[4, 3] = 0.0, cf, uf, slip_force
    qe = 0.5 * cs
    Fe = k0 * qe
    ka = 0.5 * ks
    qs = qe + (ts - Fe) / ka
    qm = 0.5 * (qe + qs)
    qb = qs - 0.25 * (qs - qe)
    Fb = ts - ks * (qs - qb)
    s[6, 0], s[6, 1], s[6, 2], s[6, 3] = -0.0, -qe, -qm, -qs
    s[7, 0], s[7, 1], s[7, 2], s[7, 3] = -0.0, -Fe, -(Fe + ka * (qm - qe)), -ts
    s[9, 0], s[9, 1], s[9, 2], s[9, 3] = -0.0, -qe, -qb, -qs
    s[10, 0], s[10, 1], s[10, 2], s[10, 3] = -0.0, -Fe, -Fb, -ts
    for a in (0, 3, 6, 9):
        _slopes(s[a], s[a + 1], s[a + 2], n, 0.0)
    if check_side(s[0], s[1], s[2], s[3], s[4], s[5], n, ks, 1.0, True) != 0:
        return 1
    if check_side(s[6], s[7], s[8], s[9], s[10], s[11], n, ks, -1.0, True) != 0:
        return 1
    return _write(table, t0, float(hk.KIND_BRAKE), ks, ks, s, n)


@njit(**NJIT)
def lateral_table(table, t0, c):
    """Rebuild a lateral (or torsion) absorber's element at ``table[t0:]`` from ``c`` (the
    numbers of :data:`LATERAL_FIELDS`), as ``LateralAbsorber(...).element().table()``; 0, or
    1 when they make no valid element."""
    q0, k1, q1, k2, qr, kmax, ratio = c[0], c[1], c[2], c[3], c[4], c[5], c[6]
    if not 0.0 < q0 < q1 < qr:
        return 1
    if min(k1, k2) <= 0.0:
        return 1
    if kmax <= max(k1, k2):
        return 1
    if not 0.0 < ratio < 1.0:
        return 1
    F0 = k1 * q0
    F1 = F0 + k1 * (q1 - q0)
    q_top = qr
    q_pre = qr - 0.04 * (qr - q1)
    F_pre = F1 + k2 * (q_pre - q1)
    F_top = F1 + k2 * (qr - q1)
    FB1 = F0 + ratio * (F1 - F0)
    FBpre = F_top - kmax * (q_top - q_pre)
    if not (FB1 < FBpre < F_pre):
        FBpre = 0.5 * (FB1 + F_pre)
        q_pre = q_top - (F_top - FBpre) / kmax
        F_pre = F1 + k2 * (q_pre - q1)
    if not (q1 < q_pre < q_top and FB1 < FBpre < F_pre):
        return 1
    n = 5
    s = np.zeros((12, n))
    qv = (0.0, q0, q1, q_pre, q_top)
    Fv = (0.0, F0, F1, F_pre, F_top)
    Bv = (0.0, F0, FB1, FBpre, F_top)
    for j in range(n):
        s[0, j] = qv[j]
        s[1, j] = Fv[j]
        s[3, j] = qv[j]
        s[4, j] = Bv[j]
        s[6, j] = -qv[j]
        s[7, j] = -Fv[j]
        s[9, j] = -qv[j]
        s[10, j] = -Bv[j]
    for a in (0, 3, 6, 9):
        _slopes(s[a], s[a + 1], s[a + 2], n, kmax)
    if check_side(s[0], s[1], s[2], s[3], s[4], s[5], n, kmax, 1.0, False) != 0:
        return 1
    if check_side(s[6], s[7], s[8], s[9], s[10], s[11], n, kmax, -1.0, False) != 0:
        return 1
    return _write(table, t0, float(hk.KIND_CONSTANT), kmax, kmax, s, n)
