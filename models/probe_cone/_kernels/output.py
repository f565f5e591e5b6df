"""Probe-cone kernel, part 4: one output sample (:func:`_record`): angles, relative state,
interface loads, the energy ledger and the momenta. Layouts in
:mod:`models.probe_cone._kernels.layout`."""
from __future__ import annotations

import math

from numba import njit

from models._kernels import NJIT
from models._kernels import hysteresis as hk
from models.probe_cone._kernels.layout import _cr, _diff_pu, _housing_rot, _mtv, _mv, _plunger
from models.probe_cone._kernels.stage import _kinematics
from models.probe_cone._kernels.layout import *  # noqa: F401,F403  (the P_/Y_/O_ layouts)


# --------------------------------------------------------------------------------------------
# output
@njit(**NJIT)
def _record(t, y, P, table, toff, istate, fstate, latch, LF, wk, M, sc, chan, row):
    fr, mc, A1, A2, AAU, APU = _kinematics(y, P, M, sc)
    uax = mc[MC_UA]
    uay = mc[MC_UA + 1]
    uaz = mc[MC_UA + 2]
    v = sc[SC_ROW:SC_ROW + SC_ROW_SIZE]
    v[O_T] = t
    v[O_STROKE] = mc[MC_S]
    # housing angles q1 (pitch), q2 (yaw): u_A = (cos q1 cos q2, sin q2, -sin q1 cos q2)
    v[O_GPITCH] = math.atan2(-uaz, uax)
    v[O_GYAW] = math.asin(min(1.0, max(-1.0, uay)))
    # bending: w in the housing frame (minimal rotation of X_AU onto u_A, inverted)
    bx, by, bz = _housing_rot(uax, -uay, -uaz, mc[MC_WA], mc[MC_WA + 1], mc[MC_WA + 2])
    v[O_BPITCH] = math.atan2(-bz, bx)
    v[O_BYAW] = math.asin(min(1.0, max(-1.0, by)))
    v[O_HCONTACT] = wk[WK_HCONTACT]
    v[O_CONTACT] = wk[WK_CONTACT]
    v[O_BOTTOM] = wk[WK_BOTTOM]
    ntr = 0
    for i in range(N_LATCH):
        v[O_LATCH + i] = float(latch[i])
        ntr += latch[i]
    v[O_CAPTURE] = 1.0 if ntr == N_LATCH else 0.0
    for k in range(3):
        v[O_AR + k] = y[Y_W1 + k]
        v[O_PR + k] = y[Y_W2 + k]
    # relative state
    a, b, c = _diff_pu(APU, fr, FR_R_AU, fr, FR_R_PU)
    v[O_REL] = a
    v[O_REL + 1] = b
    v[O_REL + 2] = c
    a, b, c = _diff_pu(APU, fr, FR_V_AU, fr, FR_V_PU)
    v[O_REL + 3] = a
    v[O_REL + 4] = b
    v[O_REL + 5] = c
    APAU = M[M_ROT_HOUSING]
    # A_PAU = AAU APU^T
    for i in range(3):
        for j in range(3):
            APAU[i, j] = AAU[i, 0] * APU[j, 0] + AAU[i, 1] * APU[j, 1] + AAU[i, 2] * APU[j, 2]
    sp = -APAU[0, 2]
    if sp > 1.0:
        sp = 1.0
    if sp < -1.0:
        sp = -1.0
    v[O_REL + 6] = math.atan2(APAU[1, 2], APAU[2, 2])
    v[O_REL + 7] = math.asin(sp)
    v[O_REL + 8] = math.atan2(APAU[0, 1], APAU[0, 0])
    a, b, c = _diff_pu(APU, fr, FR_W1, fr, FR_W2)
    v[O_REL + 9] = a
    v[O_REL + 10] = b
    v[O_REL + 11] = c
    for k in range(3):
        v[O_FIF + k] = wk[WK_FIF + k]
        v[O_MIF + k] = wk[WK_MIF + k]
    # energies and momenta
    ek = 0.0
    m1 = P[P_M1]
    m2 = P[P_M2]
    mh = P[P_MH]
    plx = 0.0
    ply = 0.0
    plz = 0.0
    for k in range(3):
        ek += 0.5 * (m1 * y[Y_V1 + k] ** 2 + m2 * y[Y_V2 + k] ** 2 + mh * y[Y_VH + k] ** 2)
    h1x, h1y, h1z = _mv(M[M_J1], y[Y_W1], y[Y_W1 + 1], y[Y_W1 + 2])
    h2x, h2y, h2z = _mv(M[M_J2], y[Y_W2], y[Y_W2 + 1], y[Y_W2 + 2])
    ek += 0.5 * (h1x * y[Y_W1] + h1y * y[Y_W1 + 1] + h1z * y[Y_W1 + 2])
    ek += 0.5 * (h2x * y[Y_W2] + h2y * y[Y_W2 + 1] + h2z * y[Y_W2 + 2])
    ek += 0.5 * P[P_JT] * y[Y_SPIN] * y[Y_SPIN]
    ek += 0.5 * P[P_JM] * (y[Y_WM] ** 2 + y[Y_WM + 1] ** 2 + y[Y_WM + 2] ** 2)
    plx = m1 * y[Y_V1] + m2 * y[Y_V2] + mh * y[Y_VH]
    ply = m1 * y[Y_V1 + 1] + m2 * y[Y_V2 + 1] + mh * y[Y_VH + 1]
    plz = m1 * y[Y_V1 + 2] + m2 * y[Y_V2 + 2] + mh * y[Y_VH + 2]
    L1x, L1y, L1z = _mtv(A1, h1x, h1y, h1z)
    L2x, L2y, L2z = _mtv(A2, h2x, h2y, h2z)
    lx = L1x + L2x
    ly = L1y + L2y
    lz = L1z + L2z
    # probe spin J_t spin w and housing J_M w_M (inertial)
    hs = P[P_JT] * y[Y_SPIN]
    lx += hs * mc[MC_W] + P[P_JM] * y[Y_WM]
    ly += hs * mc[MC_W + 1] + P[P_JM] * y[Y_WM + 1]
    lz += hs * mc[MC_W + 2] + P[P_JM] * y[Y_WM + 2]
    for (ro, vo, m) in ((Y_R1, Y_V1, m1), (Y_R2, Y_V2, m2), (Y_RH, Y_VH, mh)):
        cx, cy, cz = _cr(y[ro], y[ro + 1], y[ro + 2], y[vo], y[vo + 1], y[vo + 2])
        lx += m * cx
        ly += m * cy
        lz += m * cz
    s_ax = P[P_S_AX]
    s_lat = P[P_S_LAT]
    qs = (mc[MC_S], mc[MC_PSI], mc[MC_TH], y[Y_PHI])
    eh = 0.0
    for e in range(N_ELEM):
        sc_ = s_ax if e == E_AX else (1.0 if e == E_TOR else s_lat)
        eh += sc_ * hk.hyst_stored(table, toff[e], istate, e * hk.I_SIZE, fstate,
                                   e * hk.F_SIZE, qs[e])
    el = 0.0
    for i in range(N_PL):
        if i >= N_LATCH or latch[i] == 0:
            d = LF[i, LF_DELTA]
            if d > 0.0:
                xl, rl, f0, kl, travel, ey, ez = _plunger(P, i)
                el += f0 * d + 0.5 * kl * d * d
    # bending strain energy k_b |u x w|^2 / 2
    b1, b2, b3 = _cr(mc[MC_U], mc[MC_U + 1], mc[MC_U + 2], mc[MC_W], mc[MC_W + 1],
                     mc[MC_W + 2])
    eb = 0.5 * P[P_KB] * (b1 * b1 + b2 * b2 + b3 * b3)
    v[O_EK] = ek
    v[O_ES] = wk[WK_ESC] + eh + el + eb
    v[O_EBRAKE] = y[Y_W_BRAKE]
    v[O_EDAMP] = y[Y_E_DAMP]
    v[O_EHYST] = y[Y_W_AX] - y[Y_W_BRAKE] + y[Y_W_LAT] + y[Y_W_TOR] - eh
    v[O_ECONT] = y[Y_E_CONT] + y[Y_W_LATCH] - el
    v[O_WTHRUST] = y[Y_W_THRUST]
    v[O_PLIN] = plx
    v[O_PLIN + 1] = ply
    v[O_PLIN + 2] = plz
    v[O_PANG] = lx
    v[O_PANG + 1] = ly
    v[O_PANG + 2] = lz
    v[O_FAX] = wk[WK_FAX]
    v[O_MPITCH] = wk[WK_MPITCH]
    v[O_MYAW] = wk[WK_MYAW]
    for j in range(chan.shape[0]):
        row[j] = v[chan[j]]


# --------------------------------------------------------------------------------------------
