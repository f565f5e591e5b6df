"""Probe-cone kernel, part 3: the initial state and the discrete updates between steps
(hysteresis states, latch and sensor resistance, latch triggering, capture, the gap test
that selects the step). Layouts in :mod:`models.probe_cone._kernels.layout`."""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from models._kernels import NJIT, NJIT_LEAF
from models._kernels import contact as ck
from models._kernels import hysteresis as hk
from models.probe_cone._kernels.layout import (_cr, _diff_pu, _housing_rot, _m3, _matmul, _mtv,
                                               _mv, _plunger)
from models.probe_cone._kernels.stage import _kinematics
from models._kernels.frames import axis_rotation
from models._kernels.rigid_body import dcm_to_quat, quat_to_dcm
from models.probe_cone._kernels.layout import *  # noqa: F401,F403  (the P_/Y_/O_ layouts)


# --------------------------------------------------------------------------------------------
# initial state
@njit(**NJIT)
def initial_state(P, y):
    """Fill the state ``y`` (NY) from the 12 initial conditions ``P[P_IC:]``.

    The passive vehicle starts at the inertial origin, axes aligned, at rest except for its
    body rates ``P[P_W2:]``. The active unit frame is placed at ``rel_pos`` (PU axes) with the
    attitude ``A_PAU = R_x(roll) R_y(pitch) R_z(yaw)``; ``rel_vel`` is the inertial velocity of
    the AU origin minus that of the PU origin, in PU axes; ``rel_rate`` the angular velocity of
    AU minus that of PU, in PU axes. The probe is extended (stroke 0, gimbal angles 0) and
    moves with the active vehicle; all energy accumulators are zero.
    """
    ic = P[P_IC:P_IC + 12]
    for k in range(NY):
        y[k] = 0.0
    y[Y_Q2] = 1.0
    A2 = np.eye(3)
    G1 = np.empty((3, 3))
    G2 = np.empty((3, 3))
    _m3(P, P_G1, G1)
    _m3(P, P_G2, G2)
    APU = G2.copy()
    for k in range(3):
        y[Y_W2 + k] = P[P_W2 + k]
    w2Ix, w2Iy, w2Iz = _mtv(A2, P[P_W2], P[P_W2 + 1], P[P_W2 + 2])
    l2x, l2y, l2z = _mtv(A2, P[P_L2], P[P_L2 + 1], P[P_L2 + 2])
    rPU = np.array([l2x, l2y, l2z])
    cx, cy, cz = _cr(w2Ix, w2Iy, w2Iz, l2x, l2y, l2z)
    vPU = np.array([cx, cy, cz])
    Rx = np.empty((3, 3))
    Ry = np.empty((3, 3))
    Rz = np.empty((3, 3))
    axis_rotation(0, ic[6], Rx)
    axis_rotation(1, ic[7], Ry)
    axis_rotation(2, ic[8], Rz)
    T = np.empty((3, 3))
    APAU = np.empty((3, 3))
    _matmul(Ry, Rz, T)
    _matmul(Rx, T, APAU)
    AAU = np.empty((3, 3))
    _matmul(APAU, APU, AAU)
    A1 = np.empty((3, 3))
    G1T = G1.T.copy()
    _matmul(G1T, AAU, A1)
    q = np.empty(4)
    dcm_to_quat(A1, q)
    for k in range(4):
        y[Y_Q1 + k] = q[k]
    # re-derive A1 from the quaternion so that the state is self-consistent
    quat_to_dcm(y, Y_Q1, A1)
    dx, dy_, dz = _mtv(APU, ic[0], ic[1], ic[2])
    rAU = rPU + np.array([dx, dy_, dz])
    l1x, l1y, l1z = _mtv(A1, P[P_L1], P[P_L1 + 1], P[P_L1 + 2])
    wx, wy, wz = _mtv(APU, ic[9], ic[10], ic[11])
    w1Ix = w2Ix + wx
    w1Iy = w2Iy + wy
    w1Iz = w2Iz + wz
    b1, b2, b3 = _mv(A1, w1Ix, w1Iy, w1Iz)
    y[Y_W1] = b1
    y[Y_W1 + 1] = b2
    y[Y_W1 + 2] = b3
    vx, vy, vz = _mtv(APU, ic[3], ic[4], ic[5])
    vAU = vPU + np.array([vx, vy, vz])
    cx, cy, cz = _cr(w1Ix, w1Iy, w1Iz, l1x, l1y, l1z)
    y[Y_R1] = rAU[0] - l1x
    y[Y_R1 + 1] = rAU[1] - l1y
    y[Y_R1 + 2] = rAU[2] - l1z
    y[Y_V1] = vAU[0] - cx
    y[Y_V1 + 1] = vAU[1] - cy
    y[Y_V1 + 2] = vAU[2] - cz
    # quaternion-consistent AU attitude
    _matmul(G1, A1, AAU)
    hx, hy, hz = _mtv(AAU, P[P_L0], 0.0, 0.0)
    y[Y_RH] = rAU[0] + hx
    y[Y_RH + 1] = rAU[1] + hy
    y[Y_RH + 2] = rAU[2] + hz
    cx, cy, cz = _cr(w1Ix, w1Iy, w1Iz, hx, hy, hz)
    y[Y_VH] = vAU[0] + cx
    y[Y_VH + 1] = vAU[1] + cy
    y[Y_VH + 2] = vAU[2] + cz
    # torsion at rest relative to the housing: spin = w1 . X_AU
    w1Ax, w1Ay, w1Az = _mv(AAU, w1Ix, w1Iy, w1Iz)
    y[Y_SPIN] = w1Ax
    # housing along X_AU, turning with vehicle 1: w_M = w1 - (w1 . u) u
    ux, uy, uz = _mtv(AAU, 1.0, 0.0, 0.0)
    y[Y_UM] = ux
    y[Y_UM + 1] = uy
    y[Y_UM + 2] = uz
    y[Y_WM] = w1Ix - w1Ax * ux
    y[Y_WM + 1] = w1Iy - w1Ax * uy
    y[Y_WM + 2] = w1Iz - w1Ax * uz
    y[Y_PHI] = 0.0
    y[Y_TC] = 1.0
    y[Y_TS] = 0.0


# --------------------------------------------------------------------------------------------
# between steps
@njit(**NJIT_LEAF)
def _trigger(P, i, sl, ux, uy, uz, ey, ez, AAU, APU, hx, hy, hz, tx, ty, tz):
    """Whether latch ``i``'s reverse segment (inner end -> tip ``t``) crosses its slot plane
    inside the narrow part of the window (``0 <= d1 <= d_LX1``, ``|t| <= d_LL1``)."""
    rin = P[P_LATCH_RIN]
    ix, iy, iz = _housing_rot(ux, uy, uz, P[P_LATCH_X], rin * ey, rin * ez)
    iIx, iIy, iIz = _mtv(AAU, ix, iy, iz)
    qx, qy, qz = _mv(APU, iIx, iIy, iIz)
    qx += hx
    qy += hy
    qz += hz
    en_x = sl[ck.SL_EN]
    en_y = sl[ck.SL_EN + 1]
    en_z = sl[ck.SL_EN + 2]
    den = (tx - qx) * en_x + (ty - qy) * en_y + (tz - qz) * en_z
    num = (sl[ck.SL_VX] - qx) * en_x + (sl[ck.SL_VX + 1] - qy) * en_y + (
        sl[ck.SL_VX + 2] - qz) * en_z
    if den > 0.0 and num >= 0.0 and num <= den:
        tc = num / den
        vx = qx + tc * (tx - qx) - sl[ck.SL_VX]
        vy = qy + tc * (ty - qy) - sl[ck.SL_VX + 1]
        vz = qz + tc * (tz - qz) - sl[ck.SL_VX + 2]
        d1 = vx * sl[ck.SL_EX] + vy * sl[ck.SL_EX + 1] + vz * sl[ck.SL_EX + 2]
        tt = vx * sl[ck.SL_ET] + vy * sl[ck.SL_ET + 1] + vz * sl[ck.SL_ET + 2]
        if d1 >= 0.0 and d1 <= sl[ck.SL_DLX1] and abs(tt) <= sl[ck.SL_DLL1]:
            return True
    return False


@njit(**NJIT_LEAF)
def _between(t, y, P, mer, slots, hc, table, toff, istate, fstate, latch, LF, ev, M, sc, info):
    """Discrete updates after an accepted step: hysteresis states, latch resistance and
    triggering, capture. Returns (status, near_contact)."""
    fr, mc, _, _, AAU, APU = _kinematics(y, P, M, sc)
    ux = mc[MC_WA]       # head frame: along the probe direction w (AU axes)
    uy = mc[MC_WA + 1]
    uz = mc[MC_WA + 2]
    qs = (mc[MC_S], mc[MC_PSI], mc[MC_TH], y[Y_PHI])
    qds = (mc[MC_SD], mc[MC_PSID], mc[MC_THD], mc[MC_PHID])
    for e in range(N_ELEM):
        stt = hk.hyst_update(table, toff[e], istate, e * hk.I_SIZE, fstate, e * hk.F_SIZE,
                             qs[e], qds[e], t)
        if stt == hk.ST_ILLEGAL:
            # Workaround (requested from the hysteresis module as a lenient mode): the rate
            # changed sign inside the step (e.g. state 0 left upwards and reversed, 10 -> 2 ->
            # 3, 3 -> 2 -> 3). Replay it as two legal rows: first with the opposite rate sign,
            # then with the end rate. A second failure stops the run as the paper does.
            stt = hk.hyst_update(table, toff[e], istate, e * hk.I_SIZE, fstate,
                                 e * hk.F_SIZE, qs[e], -qds[e], t)
            if stt == hk.ST_OK:
                stt = hk.hyst_update(table, toff[e], istate, e * hk.I_SIZE, fstate,
                                     e * hk.F_SIZE, qs[e], qds[e], t)
        if stt != hk.ST_OK:
            info[INFO_T_FAIL] = t
            info[INFO_ELEMENT] = e
            info[INFO_DETAIL] = stt
            return ST_HYSTERESIS, True
    # head centre in PU
    hx, hy, hz = _diff_pu(APU, y, Y_RH, fr, FR_R_PU)
    near = False
    # gap test: the head sphere inflated by the margin
    st, dn, nx, ny, nz, cpx, cpy, cpz, f = ck.sphere_vs_revolution(
        hx, hy, hz, P[P_RH] + P[P_GAP], mer, 1e300, 0)
    if st != ck.NONE:
        near = True
    # housing primitives within reach (plus the margin) of the cone: small step
    if hc.shape[0] > 0:
        ox, oy, oz = _diff_pu(APU, fr, FR_R_AU, fr, FR_R_PU)
        if ox + P[P_HC_REACH] + P[P_GAP] > mer[0, ck.M_X]:
            near = True
    ntrig = 0
    for i in range(N_LATCH):
        ntrig += latch[i]
    for i in range(N_PL):
        if i < N_LATCH and latch[i] != 0:
            continue
        xl, rl, f0, kl, travel, ey0, ez0 = _plunger(P, i)
        ey = y[Y_TC] * ey0 - y[Y_TS] * ez0   # twisted by phi about X_H
        ez = y[Y_TS] * ey0 + y[Y_TC] * ez0
        if i >= N_LATCH and (ntrig == N_LATCH or (f0 <= 0.0 and kl <= 0.0)):
            LF[i, LF_DELTA] = 0.0   # after capture the sensors only rub (see _rhs)
            continue
        # tip and radial direction, housing -> AU -> inertial -> PU
        ax, ay, az = _housing_rot(ux, uy, uz, xl, rl * ey, rl * ez)
        aIx, aIy, aIz = _mtv(AAU, ax, ay, az)
        tx, ty, tz = _mv(APU, aIx, aIy, aIz)
        tx += hx
        ty += hy
        tz += hz
        bx, by, bz = _housing_rot(ux, uy, uz, 0.0, ey, ez)
        bIx, bIy, bIz = _mtv(AAU, bx, by, bz)
        erx, ery, erz = _mv(APU, bIx, bIy, bIz)
        if i < N_LATCH:
            # trigger (digest 8.4 step 6): the reverse segment (inner end -> tip) crosses the
            # slot plane inside the narrow part of the window, so that the locking contact
            # starts without penetration
            if _trigger(P, i, slots[i], ux, uy, uz, ey, ez, AAU, APU, hx, hy, hz, tx, ty, tz):
                latch[i] = 1
                LF[i, LF_DELTA] = 0.0
                ev[EV_LATCH + i] = t
                ntrig += 1
                continue
        st, dn, nx, ny, nz, cpx, cpy, cpz, f = ck.sphere_vs_revolution(
            tx, ty, tz, 0.0, mer, 1e300, 0)
        if st == ck.CONTACT or st == ck.PENETRATION_EXCEEDED:
            near = True
            cosr = nx * erx + ny * ery + nz * erz
            if cosr < 0.2:
                cosr = 0.2  # a normal nearly across the latch travel: the latch jams
            delta = dn / cosr
            if delta > travel:
                delta = travel
            fmag = (f0 + kl * delta) / cosr
            LF[i, LF_F] = fmag * nx
            LF[i, LF_F + 1] = fmag * ny
            LF[i, LF_F + 2] = fmag * nz
            LF[i, LF_P] = tx
            LF[i, LF_P + 1] = ty
            LF[i, LF_P + 2] = tz
            LF[i, LF_DELTA] = delta
        else:
            LF[i, LF_DELTA] = 0.0
    if ntrig > 0:
        near = True
    if ntrig == N_LATCH and math.isnan(ev[EV_CAPTURE]):
        ev[EV_CAPTURE] = t
    return ST_OK, near
