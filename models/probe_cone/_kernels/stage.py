"""Probe-cone kernel, part 2: the stage derivative :func:`_rhs` (one RK4 stage: frames,
mechanism forces, contacts, held latch forces, Newton-Euler) and its helpers. The head and
housing contacts and their force sums are in :mod:`models.probe_cone._kernels.contacts`
(re-exported here). Layouts in :mod:`models.probe_cone._kernels.layout`."""
from __future__ import annotations

import math

from numba import njit

from models._kernels import NJIT, NJIT_LEAF
from models._kernels import contact as ck
from models._kernels import hysteresis as hk
from models.probe_cone._kernels import trace as pct
from models._kernels.contact_force import point_velocity
from models.probe_cone._kernels.contacts import (  # noqa: F401  (re-exported)
    _contact_apply, _housing_contacts, _sphere_contacts, acc_add3)
from models.probe_cone._kernels.layout import (_SQRT1_2, _cr, _diff_pu, _latch_dirs, _matmul, _mtv,
                                               _mv)
from models._kernels.rigid_body import euler_rhs, quat_deriv, quat_to_dcm
from models.probe_cone._kernels.layout import *  # noqa: F401,F403  (the P_/Y_/O_ layouts)
from models._kernels.trace_layout import R_PC_HEAD, R_PC_LATCH_SLOT, TX_MASK


@njit(inline="always", **NJIT)
def _solve3(A, bx, by, bz):
    """Solution of ``A x = b`` for a 3x3 ``A`` (Cramer's rule; ``A`` here is symmetric
    positive definite, so the determinant is positive)."""
    c00 = A[1, 1] * A[2, 2] - A[1, 2] * A[2, 1]
    c01 = A[1, 2] * A[2, 0] - A[1, 0] * A[2, 2]
    c02 = A[1, 0] * A[2, 1] - A[1, 1] * A[2, 0]
    idet = 1.0 / (A[0, 0] * c00 + A[0, 1] * c01 + A[0, 2] * c02)
    x = (bx * c00 + by * (A[0, 2] * A[2, 1] - A[0, 1] * A[2, 2])
         + bz * (A[0, 1] * A[1, 2] - A[0, 2] * A[1, 1])) * idet
    yv = (bx * c01 + by * (A[0, 0] * A[2, 2] - A[0, 2] * A[2, 0])
          + bz * (A[0, 2] * A[1, 0] - A[0, 0] * A[1, 2])) * idet
    z = (bx * c02 + by * (A[0, 1] * A[2, 0] - A[0, 0] * A[2, 1])
         + bz * (A[0, 0] * A[1, 1] - A[0, 1] * A[1, 0])) * idet
    return x, yv, z


# --------------------------------------------------------------------------------------------
# frames of one evaluation
@njit(inline="always", **NJIT)
def _unit_frame(y, P, o_r, o_v, o_q, o_w, o_l, A, G, AU, fr, f_r, f_v, f_w, f_l):
    """One vehicle and its docking unit: the DCM ``A`` of the quaternion ``y[o_q:o_q+4]``,
    the unit's ``AU = G A``; into ``fr`` (inertial axes): the unit origin ``r + l`` at
    ``f_r`` [m], its velocity ``v + w x l`` at ``f_v`` [m/s], the body rate ``w`` at ``f_w``
    [rad/s] and ``l`` at ``f_l`` [m], with ``l = A^T P[o_l:o_l+3]`` (centre of mass -> unit
    origin) and ``r``, ``v``, ``w`` (body axes) from ``y[o_r:]``, ``y[o_v:]``, ``y[o_w:]``.
    Inlined at numba IR level (``inline="always"``): an out-of-line call (four array
    arguments, not inlined by LLVM) costs 7 % of the reference run."""
    quat_to_dcm(y, o_q, A)
    _matmul(G, A, AU)
    lx, ly, lz = _mtv(A, P[o_l], P[o_l + 1], P[o_l + 2])
    wx, wy, wz = _mtv(A, y[o_w], y[o_w + 1], y[o_w + 2])
    cx, cy, cz = _cr(wx, wy, wz, lx, ly, lz)
    fr[f_r] = y[o_r] + lx
    fr[f_r + 1] = y[o_r + 1] + ly
    fr[f_r + 2] = y[o_r + 2] + lz
    fr[f_v] = y[o_v] + cx
    fr[f_v + 1] = y[o_v + 1] + cy
    fr[f_v + 2] = y[o_v + 2] + cz
    fr[f_w] = wx
    fr[f_w + 1] = wy
    fr[f_w + 2] = wz
    fr[f_l] = lx
    fr[f_l + 1] = ly
    fr[f_l + 2] = lz


@njit(**NJIT_LEAF)
def _frames(y, P, A1, A2, AAU, APU, G1, G2, fr):
    """Poses and velocities of the unit frames (inertial axes), written into ``fr``
    (``FR_*``); the DCMs ``A1``, ``A2`` from the state's quaternions and ``A_AU = G1 A1``,
    ``A_PU = G2 A2``."""
    _unit_frame(y, P, Y_R1, Y_V1, Y_Q1, Y_W1, P_L1, A1, G1, AAU, fr, FR_R_AU, FR_V_AU, FR_W1,
                FR_L1)
    _unit_frame(y, P, Y_R2, Y_V2, Y_Q2, Y_W2, P_L2, A2, G2, APU, fr, FR_R_PU, FR_V_PU, FR_W2,
                FR_L2)




@njit(**NJIT_LEAF)
def _mech(y, P, AAU, fr, mc):
    """Mechanism coordinates and rates of one state (into ``mc``, ``MC_*``).

    Housing: axis ``u`` (state, inertial) and transverse angular velocity ``w_M`` (state);
    relative to the active unit ``u_A = A_AU u``, ``u_A_dot = A_AU ((w_M - w_1) x u)``.
    Probe: ``d = r_H - r_O - L_M u`` from the support bearing B to the head, ``w = d/|d|``,
    stroke ``s = L_0 - L_M - |d|``. Torsion rate ``phi_dot = spin - w . (w_M + (w_1.u) u)``
    (the housing turns with vehicle 1 about its own axis: universal joint)."""
    ux = y[Y_UM]
    uy = y[Y_UM + 1]
    uz = y[Y_UM + 2]
    wmx = y[Y_WM]
    wmy = y[Y_WM + 1]
    wmz = y[Y_WM + 2]
    mc[MC_U] = ux
    mc[MC_U + 1] = uy
    mc[MC_U + 2] = uz
    uax, uay, uaz = _mv(AAU, ux, uy, uz)
    mc[MC_UA] = uax
    mc[MC_UA + 1] = uay
    mc[MC_UA + 2] = uaz
    # relative rate of u seen from AU
    rx_, ry_, rz_ = _cr(wmx - fr[FR_W1], wmy - fr[FR_W1 + 1], wmz - fr[FR_W1 + 2], ux, uy, uz)
    dax, day, daz = _mv(AAU, rx_, ry_, rz_)
    rx = 1.0 / uax
    psi = uay * rx
    th = -uaz * rx
    mc[MC_PSI] = psi
    mc[MC_TH] = th
    mc[MC_PSID] = (day - psi * dax) * rx
    mc[MC_THD] = (-daz - th * dax) * rx
    mc[MC_RX] = rx
    # probe
    lm = P[P_LM]
    dx = y[Y_RH] - fr[FR_R_AU] - lm * ux
    dy = y[Y_RH + 1] - fr[FR_R_AU + 1] - lm * uy
    dz = y[Y_RH + 2] - fr[FR_R_AU + 2] - lm * uz
    cx, cy, cz = _cr(wmx, wmy, wmz, ux, uy, uz)
    ddx = y[Y_VH] - fr[FR_V_AU] - lm * cx
    ddy = y[Y_VH + 1] - fr[FR_V_AU + 1] - lm * cy
    ddz = y[Y_VH + 2] - fr[FR_V_AU + 2] - lm * cz
    ell = math.sqrt(dx * dx + dy * dy + dz * dz)
    il = 1.0 / ell
    wx = dx * il
    wy = dy * il
    wz = dz * il
    mc[MC_W] = wx
    mc[MC_W + 1] = wy
    mc[MC_W + 2] = wz
    mc[MC_IL] = il
    mc[MC_S] = P[P_L0] - lm - ell
    wdd = wx * ddx + wy * ddy + wz * ddz
    mc[MC_SD] = -wdd
    mc[MC_WD] = (ddx - wx * wdd) * il
    mc[MC_WD + 1] = (ddy - wy * wdd) * il
    mc[MC_WD + 2] = (ddz - wz * wdd) * il
    w1u = fr[FR_W1] * ux + fr[FR_W1 + 1] * uy + fr[FR_W1 + 2] * uz
    mc[MC_W1U] = w1u
    mc[MC_PHID] = y[Y_SPIN] - (wx * (wmx + w1u * ux) + wy * (wmy + w1u * uy)
                               + wz * (wmz + w1u * uz))
    wax, way, waz = _mv(AAU, wx, wy, wz)
    mc[MC_WA] = wax
    mc[MC_WA + 1] = way
    mc[MC_WA + 2] = waz


@njit(inline="always", **NJIT)
def _kinematics(y, P, M, sc):
    """The unit frames (:func:`_frames`, into ``sc[SC_FRAMES:]``) and the mechanism
    coordinates (:func:`_mech`, into ``sc[SC_MECH:]``) of the state ``y``; the DCMs of the
    state into ``M[M_A1]``, ``M[M_A2]``, ``M[M_AAU]``, ``M[M_APU]``. Returns the views
    ``(fr, mc, A1, A2, AAU, APU)``. Every evaluation (stage, between steps, sample) starts
    with it. Inlined at numba IR level (``inline="always"``): an out-of-line call (array
    views returned, reference counted) costs 5-10 % of the reference run."""
    A1 = M[M_A1]
    A2 = M[M_A2]
    AAU = M[M_AAU]
    APU = M[M_APU]
    fr = sc[SC_FRAMES:SC_FRAMES + SC_FRAMES_SIZE]
    _frames(y, P, A1, A2, AAU, APU, M[M_G1], M[M_G2], fr)
    mc = sc[SC_MECH:SC_MECH + SC_MECH_SIZE]
    _mech(y, P, AAU, fr, mc)
    return fr, mc, A1, A2, AAU, APU


@njit(**NJIT_LEAF)
def _rot_columns(AAU, APU, ux, uy, uz, C):
    """Columns of the link -> PU rotation ``A_PU A_AU^T R_g`` into ``C`` (3x3): ``R_g`` is the
    minimal rotation taking ``X_AU`` onto the unit vector ``u`` (AU axes), written out (one
    reciprocal): ``R_g = I + K + K^2 / (1 + u_x)`` with ``K = [X x u]_x``."""
    c1 = 1.0 / (1.0 + ux)
    uyz = uy * uz * c1
    for j in range(3):
        if j == 0:
            ax = 1.0 - (uy * uy + uz * uz) * c1
            ay = uy
            az = uz
        elif j == 1:
            ax = -uy
            ay = 1.0 - uy * uy * c1
            az = -uyz
        else:
            ax = -uz
            ay = -uyz
            az = 1.0 - uz * uz * c1
        aIx, aIy, aIz = _mtv(AAU, ax, ay, az)
        C[0, j], C[1, j], C[2, j] = _mv(APU, aIx, aIy, aIz)


@njit(inline="always", **NJIT)
def _attitude_rhs(y, o_w, o_q, J, JI, tx, ty, tz, sc, dy):
    """Rotational derivative of one vehicle: Newton-Euler in body axes for the rates
    ``y[o_w:o_w+3]`` [rad/s] under the torque ``(tx, ty, tz)`` (body axes [N m]) into
    ``dy[o_w:o_w+3]``, and the quaternion kinematics into ``dy[o_q:o_q+4]``; ``J``, ``JI`` the
    inertia [kg m^2] and its inverse. Uses the scratch ``SC_RATES``, ``SC_TORQUE``,
    ``SC_RATES_DOT``. Inlined at numba IR level (``inline="always"``), as
    :func:`_kinematics`."""
    w = sc[SC_RATES:SC_RATES + SC_RATES_SIZE]
    mm = sc[SC_TORQUE:SC_TORQUE + SC_TORQUE_SIZE]
    dw = sc[SC_RATES_DOT:SC_RATES_DOT + SC_RATES_DOT_SIZE]
    w[0] = y[o_w]
    w[1] = y[o_w + 1]
    w[2] = y[o_w + 2]
    mm[0] = tx
    mm[1] = ty
    mm[2] = tz
    euler_rhs(J, JI, w, mm, dw)
    dy[o_w] = dw[0]
    dy[o_w + 1] = dw[1]
    dy[o_w + 2] = dw[2]
    quat_deriv(y, o_q, w, dy, o_q)


@njit(**NJIT_LEAF)
def _implicit_head(y, P, APU, A2, M, acc, fr, dy, wk, hx, hy, hz, twa, twp, fx, fy, fz):
    """Head acceleration with its contact friction taken implicitly (linearized): the friction
    at the relative velocity the head reaches over the step, ``f(v_r + h a_r) ~ f(v_r) - h D
    a_r`` with ``a_r = a_H - a_P`` (``a_P`` the passive unit's point at the head centre, from
    this stage's forces), so ``(m_H I + h D) a_H = F + h D a_P``. The change of the head force
    ``dF = m_H a_H - F`` acts between the head centre and the passive unit: the passive
    unit's accelerations, the interface loads and the contact dissipation get ``-dF``, so
    momenta and the energy ledger stay exact. ``D`` (``ACC_D``, PU axes) is the friction's
    velocity Jacobian with respect to the head centre's velocity (the head's rotation at the
    contact point and the normal force's rate dependence are left out: they are not what
    makes the step stiff); ``h`` is ``P_H_NOW`` = ``IMPLICIT_GAMMA`` times the step, the same
    in every stage, so that a stiff slip relaxation ``lambda`` enters RK4 as ``lambda / (1 +
    h lambda)``, inside its stability bound for any ``lambda``. A first version without
    ``a_P`` (an added mass ``h D`` against the inertial frame) and with the isotropic ``g (I -
    n n^T)`` for ``D`` was off by 0.24 noise sigma rms on the gyros of the reference docking
    at 1 ms (against a 0.25 ms explicit run); this one by 0.05 (gamma 1). Returns ``-dF`` on
    the passive unit [N], PU axes (the trace's ``head_friction_implicit`` row)."""
    h = P[P_H_NOW]
    Dm = M[M_ROT_HEAD]
    Dp = M[M_ROT_HOUSING]
    Dp[0, 0] = acc[ACC_D]
    Dp[0, 1] = acc[ACC_D + 1]
    Dp[0, 2] = acc[ACC_D + 2]
    Dp[1, 0] = acc[ACC_D + 1]
    Dp[1, 1] = acc[ACC_D + 3]
    Dp[1, 2] = acc[ACC_D + 4]
    Dp[2, 0] = acc[ACC_D + 2]
    Dp[2, 1] = acc[ACC_D + 4]
    Dp[2, 2] = acc[ACC_D + 5]
    # h D in inertial axes: h A^T Dp A (APU maps inertial -> PU)
    for i in range(3):
        for j in range(3):
            Dm[i, j] = h * (APU[0, i] * (Dp[0, 0] * APU[0, j] + Dp[0, 1] * APU[1, j]
                                         + Dp[0, 2] * APU[2, j])
                            + APU[1, i] * (Dp[1, 0] * APU[0, j] + Dp[1, 1] * APU[1, j]
                                           + Dp[1, 2] * APU[2, j])
                            + APU[2, i] * (Dp[2, 0] * APU[0, j] + Dp[2, 1] * APU[1, j]
                                           + Dp[2, 2] * APU[2, j]))
    # passive unit's point at the head centre: a2 + alpha x r + w x (w x r), inertial
    rx = y[Y_RH] - y[Y_R2]
    ry = y[Y_RH + 1] - y[Y_R2 + 1]
    rz = y[Y_RH + 2] - y[Y_R2 + 2]
    alx, aly, alz = _mtv(A2, dy[Y_W2], dy[Y_W2 + 1], dy[Y_W2 + 2])
    w2x = fr[FR_W2]
    w2y = fr[FR_W2 + 1]
    w2z = fr[FR_W2 + 2]
    c1x, c1y, c1z = _cr(alx, aly, alz, rx, ry, rz)
    vx, vy, vz = _cr(w2x, w2y, w2z, rx, ry, rz)
    c2x, c2y, c2z = _cr(w2x, w2y, w2z, vx, vy, vz)
    apx = dy[Y_V2] + c1x + c2x
    apy = dy[Y_V2 + 1] + c1y + c2y
    apz = dy[Y_V2 + 2] + c1z + c2z
    bx = fx + Dm[0, 0] * apx + Dm[0, 1] * apy + Dm[0, 2] * apz
    by = fy + Dm[1, 0] * apx + Dm[1, 1] * apy + Dm[1, 2] * apz
    bz = fz + Dm[2, 0] * apx + Dm[2, 1] * apy + Dm[2, 2] * apz
    mh = P[P_MH]
    Dm[0, 0] += mh
    Dm[1, 1] += mh
    Dm[2, 2] += mh
    ax, ay, az = _solve3(Dm, bx, by, bz)
    dy[Y_VH] = ax
    dy[Y_VH + 1] = ay
    dy[Y_VH + 2] = az
    dfx = mh * ax - fx
    dfy = mh * ay - fy
    dfz = mh * az - fz
    # reaction -dF on the passive unit at the head centre: its linear and angular acceleration
    im2 = P[P_IM2]
    dy[Y_V2] -= dfx * im2
    dy[Y_V2 + 1] -= dfy * im2
    dy[Y_V2 + 2] -= dfz * im2
    cx, cy, cz = _cr(rx, ry, rz, -dfx, -dfy, -dfz)
    tbx, tby, tbz = _mv(A2, cx, cy, cz)
    JI = M[M_JI2]
    dy[Y_W2] += JI[0, 0] * tbx + JI[0, 1] * tby + JI[0, 2] * tbz
    dy[Y_W2 + 1] += JI[1, 0] * tbx + JI[1, 1] * tby + JI[1, 2] * tbz
    dy[Y_W2 + 2] += JI[2, 0] * tbx + JI[2, 1] * tby + JI[2, 2] * tbz
    # interface loads (PU axes, moment about the PU origin) and the dissipated power
    dpx, dpy, dpz = _mv(APU, -dfx, -dfy, -dfz)
    wk[WK_FIF] += dpx
    wk[WK_FIF + 1] += dpy
    wk[WK_FIF + 2] += dpz
    mx_, my_, mz_ = _cr(hx, hy, hz, dpx, dpy, dpz)
    wk[WK_MIF] += mx_
    wk[WK_MIF + 1] += my_
    wk[WK_MIF + 2] += mz_
    vpx = twp[ck.TW_V] + twp[ck.TW_W + 1] * hz - twp[ck.TW_W + 2] * hy
    vpy = twp[ck.TW_V + 1] + twp[ck.TW_W + 2] * hx - twp[ck.TW_W] * hz
    vpz = twp[ck.TW_V + 2] + twp[ck.TW_W] * hy - twp[ck.TW_W + 1] * hx
    dy[Y_E_CONT] += (dpx * (twa[ck.TW_V] - vpx) + dpy * (twa[ck.TW_V + 1] - vpy)
                     + dpz * (twa[ck.TW_V + 2] - vpz))
    return dpx, dpy, dpz


@njit(**NJIT_LEAF)
def _rhs(t, y, P, mer, slots, hc, table, toff, istate, fstate, latch, LF, dy, wk, M, sc, tr,
         trn, tcx):
    """Derivative of the state; returns a status code. ``M`` holds the 3x3 matrices
    (``M_*``), ``sc`` the float scratch (``SC_*``); ``wk`` receives interface loads and
    contact flags (``WK_*``). Allocation-free. ``tr``, ``trn``, ``tcx``: the trace buffer, its
    counters and the stage's trace context (:mod:`models._kernels.trace_layout`;
    ``tcx[TX_MASK] = 0``: nothing is recorded).

    Mechanism (all vectors inertial unless noted; derivation in the package docstring):
    the lateral absorber and its dampers act on the housing angles (torque pair between
    housing and vehicle 1); the axial absorber acts along ``w`` between the head and the
    bearing B; the bending spring ``V_b = k_b |u x w|^2 / 2`` and the structural damper on the
    relative transverse rate act between the probe and the housing at B; the torsion element
    between the probe and the housing about ``w``. The probe is massless apart from the head
    point mass and its spin inertia ``J_t``; the housing has no translational mass (its centre
    of mass is taken at the joint) and a transverse inertia ``J_M``."""
    fr, mc, A1, A2, AAU, APU = _kinematics(y, P, M, sc)

    # ---------------- mechanism ----------------
    ux = mc[MC_U]
    uy = mc[MC_U + 1]
    uz = mc[MC_U + 2]
    wx = mc[MC_W]
    wy = mc[MC_W + 1]
    wz = mc[MC_W + 2]
    wdx = mc[MC_WD]
    wdy = mc[MC_WD + 1]
    wdz = mc[MC_WD + 2]
    wmx = y[Y_WM]
    wmy = y[Y_WM + 1]
    wmz = y[Y_WM + 2]
    il = mc[MC_IL]
    s = mc[MC_S]
    sd = mc[MC_SD]
    psi = mc[MC_PSI]
    th = mc[MC_TH]
    psid = mc[MC_PSID]
    thd = mc[MC_THD]
    rx = mc[MC_RX]
    q_ax = hk.hyst_force(table, toff[E_AX], istate, E_AX * hk.I_SIZE, fstate,
                         E_AX * hk.F_SIZE, s) * P[P_S_AX]
    q_psi = hk.hyst_force(table, toff[E_PSI], istate, E_PSI * hk.I_SIZE, fstate,
                          E_PSI * hk.F_SIZE, psi) * P[P_S_LAT]
    q_th = hk.hyst_force(table, toff[E_THETA], istate, E_THETA * hk.I_SIZE, fstate,
                         E_THETA * hk.F_SIZE, th) * P[P_S_LAT]
    d1d = (psid + thd) * _SQRT1_2
    d2d = (psid - thd) * _SQRT1_2
    md1 = P[P_CD1] * d1d
    md2 = P[P_CD2] * d2d
    f_ax = q_ax + P[P_CAX] * sd
    m_psi = q_psi + (md1 + md2) * _SQRT1_2
    m_th = q_th + (md1 - md2) * _SQRT1_2
    wk[WK_FAX] = f_ax
    wk[WK_MPITCH] = m_th
    wk[WK_MYAW] = m_psi
    # lateral absorber: generalized force -(m_psi grad psi + m_th grad theta) on u_A; torque
    # on the housing u_A x g (AU axes), the opposite on vehicle 1
    gax = (m_psi * psi + m_th * th) * rx
    gay = -m_psi * rx
    gaz = m_th * rx
    tax, tay, taz = _cr(mc[MC_UA], mc[MC_UA + 1], mc[MC_UA + 2], gax, gay, gaz)
    tlx, tly, tlz = _mtv(AAU, tax, tay, taz)
    dy[Y_W_AX] = q_ax * sd
    st_ax = istate[E_AX * hk.I_SIZE + hk.I_STATE]
    dy[Y_W_BRAKE] = q_ax * sd if (st_ax == 10 or st_ax == -10) else 0.0
    dy[Y_W_LAT] = q_psi * psid + q_th * thd
    # bending: moment on the probe -k_b (u.w) (u x w); structural damper on the relative
    # transverse rate (probe rate w x w_dot minus the housing's), normal to w
    uw = ux * wx + uy * wy + uz * wz
    bx, by, bz = _cr(ux, uy, uz, wx, wy, wz)
    kbu = P[P_KB] * uw
    w1u = mc[MC_W1U]
    ox_, oy_, oz_ = _cr(wx, wy, wz, wdx, wdy, wdz)
    ox_ -= wmx + w1u * ux
    oy_ -= wmy + w1u * uy
    oz_ -= wmz + w1u * uz
    ow = ox_ * wx + oy_ * wy + oz_ * wz
    ox_ -= ow * wx
    oy_ -= ow * wy
    oz_ -= ow * wz
    cb = P[P_CB]
    mbx = -kbu * bx - cb * ox_
    mby = -kbu * by - cb * oy_
    mbz = -kbu * bz - cb * oz_
    # torsion about w
    phid = mc[MC_PHID]
    spin = y[Y_SPIN]
    q_tor = hk.hyst_force(table, toff[E_TOR], istate, E_TOR * hk.I_SIZE, fstate,
                          E_TOR * hk.F_SIZE, y[Y_PHI])
    m_tor = q_tor + P[P_CTOR] * phid
    if tcx[TX_MASK] != 0.0:
        pct.mechanism_row(tr, trn, tcx, mc, y[Y_PHI], q_ax, f_ax, q_psi, q_th, m_psi, m_th,
                          q_tor, m_tor, istate)
    dy[Y_PHI] = phid
    dy[Y_TC] = -y[Y_TS] * phid
    dy[Y_TS] = y[Y_TC] * phid
    dy[Y_W_TOR] = q_tor * phid
    dy[Y_E_DAMP] = (P[P_CAX] * sd * sd + md1 * d1d + md2 * d2d
                    + P[P_CTOR] * phid * phid
                    + cb * (ox_ * ox_ + oy_ * oy_ + oz_ * oz_))

    # ---------------- contacts (PU axes) ----------------
    hx, hy, hz = _diff_pu(APU, y, Y_RH, fr, FR_R_PU)
    twa = sc[SC_TW_HEAD:SC_TW_HEAD + SC_TW_HEAD_SIZE]
    twp = sc[SC_TW_PU:SC_TW_PU + SC_TW_PU_SIZE]
    twa[ck.TW_V], twa[ck.TW_V + 1], twa[ck.TW_V + 2] = _mv(APU, y[Y_VH], y[Y_VH + 1],
                                                           y[Y_VH + 2])
    # head angular velocity: probe transverse rate w x w_dot and the spin about w
    gx, gy, gz = _cr(wx, wy, wz, wdx, wdy, wdz)
    twa[ck.TW_W], twa[ck.TW_W + 1], twa[ck.TW_W + 2] = _mv(APU, gx + spin * wx, gy + spin * wy,
                                                           gz + spin * wz)
    twa[ck.TW_O] = hx
    twa[ck.TW_O + 1] = hy
    twa[ck.TW_O + 2] = hz
    twp[ck.TW_V], twp[ck.TW_V + 1], twp[ck.TW_V + 2] = _mv(APU, fr[FR_V_PU], fr[FR_V_PU + 1],
                                                           fr[FR_V_PU + 2])
    twp[ck.TW_W], twp[ck.TW_W + 1], twp[ck.TW_W + 2] = _mv(APU, fr[FR_W2], fr[FR_W2 + 1],
                                                           fr[FR_W2 + 2])
    twp[ck.TW_O] = 0.0
    twp[ck.TW_O + 1] = 0.0
    twp[ck.TW_O + 2] = 0.0
    law = P[P_LAW:P_LAW + ck.LAW_SIZE]
    dnmax = P[P_DNMAX]
    acc = sc[SC_ACC:SC_ACC + SC_ACC_SIZE]
    acc[:] = 0.0
    status, _, on_bottom = _sphere_contacts(hx, hy, hz, P[P_RH], mer, dnmax, twa, twp, law, acc,
                                            0, tr, trn, tcx, R_PC_HEAD, -1, -1)
    bottom = 1.0 if on_bottom else 0.0
    # housing primitives (limiter pads, alignment rollers), gated by their reach
    ox, oy, oz = _diff_pu(APU, fr, FR_R_AU, fr, FR_R_PU)
    if hc.shape[0] > 0 and ox + P[P_HC_REACH] > mer[0, ck.M_X]:
        C = M[M_ROT_HOUSING]
        _rot_columns(AAU, APU, mc[MC_UA], mc[MC_UA + 1], mc[MC_UA + 2], C)
        twm = sc[SC_TW_HOUSING:SC_TW_HOUSING + SC_TW_HOUSING_SIZE]
        twm[ck.TW_V], twm[ck.TW_V + 1], twm[ck.TW_V + 2] = _mv(APU, fr[FR_V_AU], fr[FR_V_AU + 1],
                                                               fr[FR_V_AU + 2])
        twm[ck.TW_W], twm[ck.TW_W + 1], twm[ck.TW_W + 2] = _mv(APU, wmx + w1u * ux,
                                                               wmy + w1u * uy, wmz + w1u * uz)
        twm[ck.TW_O] = ox
        twm[ck.TW_O + 1] = oy
        twm[ck.TW_O + 2] = oz
        st = _housing_contacts(hc, mer, P, C, ox, oy, oz, twm, twp, law, dnmax, acc, tr, trn,
                               tcx)
        if st != ST_OK:
            status = st
    # latches after triggering: reverse segment vs slot
    any_trig = 0
    for i in range(N_LATCH):
        any_trig += latch[i]
    if any_trig > 0:
        # columns of the head -> PU rotation (the head frame follows the probe direction w,
        # twisted by the torsion angle)
        C = M[M_ROT_HEAD]
        _rot_columns(AAU, APU, mc[MC_WA], mc[MC_WA + 1], mc[MC_WA + 2], C)
        xl = P[P_LATCH_X]
        r_in = P[P_LATCH_RIN]
        r_out = P[P_LATCH_R]
        tc = y[Y_TC]
        ts = y[Y_TS]
        for i in range(N_LATCH):
            if latch[i] == 0:
                continue
            ey0, ez0 = _latch_dirs(i)
            ey = tc * ey0 - ts * ez0   # the head is twisted by phi about X_H
            ez = ts * ey0 + tc * ez0
            dx = ey * C[0, 1] + ez * C[0, 2]
            dy_ = ey * C[1, 1] + ez * C[1, 2]
            dz = ey * C[2, 1] + ez * C[2, 2]
            p1x = hx + xl * C[0, 0] + r_in * dx
            p1y = hy + xl * C[1, 0] + r_in * dy_
            p1z = hz + xl * C[2, 0] + r_in * dz
            lx = (r_out - r_in) * dx
            ly = (r_out - r_in) * dy_
            lz = (r_out - r_in) * dz
            sl = slots[i]
            feat = 0
            while True:
                st, dn, nx, ny, nz, cpx, cpy, cpz, f = ck.segment_vs_slot(
                    p1x, p1y, p1z, lx, ly, lz, sl, dnmax, feat)
                if st == ck.NONE:
                    break
                if tcx[TX_MASK] != 0.0:
                    pct.segment_contact_row(tr, trn, tcx, law, twa, twp, R_PC_LATCH_SLOT, i, f,
                                            st, dn, nx, ny, nz, cpx, cpy, cpz, p1x, p1y, p1z, lx,
                                            ly, lz, f)
                if st == ck.PENETRATION_EXCEEDED:
                    status = ST_PENETRATION
                    break
                _contact_apply(st, dn, nx, ny, nz, cpx, cpy, cpz, twa, twp, law, acc, 0)
                feat = f + 1
    # latches before triggering and capture sensors before capture: held quasi-static forces
    # (force on passive, PU axes)
    p_latch = 0.0
    for i in range(N_PL):
        if LF[i, LF_DELTA] <= 0.0 or (i < N_LATCH and latch[i] != 0):
            continue
        fx = LF[i, LF_F]
        fy = LF[i, LF_F + 1]
        fz = LF[i, LF_F + 2]
        cpx = LF[i, LF_P]
        cpy = LF[i, LF_P + 1]
        cpz = LF[i, LF_P + 2]
        ax_ = cpx - hx
        ay_ = cpy - hy
        az_ = cpz - hz
        vax, vay, vaz = point_velocity(twa, 0, cpx, cpy, cpz)
        vpx, vpy, vpz = point_velocity(twp, 0, cpx, cpy, cpz)
        p_latch += fx * (vax - vpx) + fy * (vay - vpy) + fz * (vaz - vpz)
        m1, m2, m3 = _cr(cpx, cpy, cpz, fx, fy, fz)
        n1, n2, n3 = _cr(ax_, ay_, az_, fx, fy, fz)
        acc_add3(acc, ACC_F, fx, fy, fz)
        acc_add3(acc, ACC_M, m1, m2, m3)
        acc_add3(acc, ACC_M_HEAD, -n1, -n2, -n3)
        acc[ACC_N] += 1.0
    # capture sensors after capture: their total axial friction on the socket wall (digest
    # 8.4), regularized like the contact friction, at the head centre
    if any_trig == N_LATCH and P[P_SENS_FR] > 0.0:
        vr = twa[ck.TW_V] - (twp[ck.TW_V] + twp[ck.TW_W + 1] * hz - twp[ck.TW_W + 2] * hy)
        ve = law[ck.LAW_VEPS]
        sq = math.sqrt(vr * vr + ve * ve)
        fpx = P[P_SENS_FR] * vr / sq
        if tcx[TX_MASK] != 0.0:
            pct.sensor_friction_row(tr, trn, tcx, vr, fpx, hx, hy, hz)
        acc[ACC_D] += P[P_SENS_FR] * ve * ve / (sq * sq * sq)   # d fpx / d vr
        acc[ACC_F] += fpx
        acc[ACC_M + 1] += hz * fpx
        acc[ACC_M + 2] -= hy * fpx
        acc[ACC_P_DISS] += fpx * vr
    dy[Y_W_LATCH] = p_latch
    dy[Y_E_CONT] = acc[ACC_P_DISS]
    dy[Y_W_CK] = acc[ACC_P_EL]
    wk[WK_FIF] = acc[ACC_F]
    wk[WK_FIF + 1] = acc[ACC_F + 1]
    wk[WK_FIF + 2] = acc[ACC_F + 2]
    wk[WK_MIF] = acc[ACC_M]
    wk[WK_MIF + 1] = acc[ACC_M + 1]
    wk[WK_MIF + 2] = acc[ACC_M + 2]
    wk[WK_ESC] = acc[ACC_E_EL]
    wk[WK_CONTACT] = 1.0 if acc[ACC_N] > 0.0 else 0.0
    wk[WK_BOTTOM] = bottom
    wk[WK_HCONTACT] = 1.0 if acc[ACC_N_HOUSING] > 0.0 else 0.0

    # ---------------- assemble ----------------
    # passive: every contact force f (PU) at its point
    fIx, fIy, fIz = _mtv(APU, acc[ACC_F], acc[ACC_F + 1], acc[ACC_F + 2])
    mpIx, mpIy, mpIz = _mtv(APU, acc[ACC_M], acc[ACC_M + 1], acc[ACC_M + 2])
    t1x, t1y, t1z = _cr(fr[FR_R_PU] - y[Y_R2], fr[FR_R_PU + 1] - y[Y_R2 + 1],
                        fr[FR_R_PU + 2] - y[Y_R2 + 2], fIx, fIy, fIz)
    M2x, M2y, M2z = _mv(A2, mpIx + t1x, mpIy + t1y, mpIz + t1z)
    # housing contacts: force on the housing -f_M (inertial), moment about the joint
    fhx, fhy, fhz = _mtv(APU, acc[ACC_F_HOUSING], acc[ACC_F_HOUSING + 1],
                         acc[ACC_F_HOUSING + 2])
    chx, chy, chz = _mtv(APU, acc[ACC_M_HOUSING], acc[ACC_M_HOUSING + 1],
                         acc[ACC_M_HOUSING + 2])
    # head contacts: the head point gets -f_H at its centre; the couple m_c about the centre
    # acts on the probe
    fHx = fIx - fhx
    fHy = fIy - fhy
    fHz = fIz - fhz
    mcx, mcy, mcz = _mtv(APU, acc[ACC_M_HEAD], acc[ACC_M_HEAD + 1], acc[ACC_M_HEAD + 2])
    # probe (massless apart from the head point and J_t): axial couple drives the spin; the
    # transverse couple (contact + bending, minus the gyroscopic J_t spin w_dot) is carried
    # by the head point as the force (m x w) / |d|; torsion reacts on the housing
    mcw = mcx * wx + mcy * wy + mcz * wz
    dy[Y_SPIN] = (mcw - m_tor) * P[P_IJT]
    jts = P[P_JT] * spin
    # m_net = (m_c + m_b)_perp(w) - J_t spin w_dot  (m_b is normal to w)
    nx_ = mcx - mcw * wx + mbx - jts * wdx
    ny_ = mcy - mcw * wy + mby - jts * wdy
    nz_ = mcz - mcw * wz + mbz - jts * wdz
    Fx, Fy, Fz = _cr(nx_, ny_, nz_, wx, wy, wz)
    Fx *= il
    Fy *= il
    Fz *= il
    # head: rod force + axial absorber along w - contact force
    Fhx = Fx + f_ax * wx
    Fhy = Fy + f_ax * wy
    Fhz = Fz + f_ax * wz
    # housing: -Fh at B (= joint + L_M u), -m_b and +m_tor w from the probe, the lateral
    # absorber torque, the housing contacts
    lm = P[P_LM]
    tbx, tby, tbz = _cr(ux, uy, uz, -Fhx, -Fhy, -Fhz)
    taux = lm * tbx - mbx + m_tor * wx + tlx + chx
    tauy = lm * tby - mby + m_tor * wy + tly + chy
    tauz = lm * tbz - mbz + m_tor * wz + tlz + chz
    tu = taux * ux + tauy * uy + tauz * uz
    ijm = P[P_IJM]
    dy[Y_WM] = (taux - tu * ux) * ijm
    dy[Y_WM + 1] = (tauy - tu * uy) * ijm
    dy[Y_WM + 2] = (tauz - tu * uz) * ijm
    dy[Y_UM], dy[Y_UM + 1], dy[Y_UM + 2] = _cr(wmx, wmy, wmz, ux, uy, uz)
    # vehicle 1: the housing's applied force at the joint; couple: minus the lateral
    # absorber torque plus the axial part of the housing torque (universal joint)
    F1x = -Fhx - fhx
    F1y = -Fhy - fhy
    F1z = -Fhz - fhz
    t2x, t2y, t2z = _cr(fr[FR_L1], fr[FR_L1 + 1], fr[FR_L1 + 2], F1x, F1y, F1z)
    M1x, M1y, M1z = _mv(A1, t2x - tlx + tu * ux, t2y - tly + tu * uy, t2z - tlz + tu * uz)
    p_thr = 0.0
    if t >= P[P_T_ON] and t < P[P_T_OFF]:
        tx, ty, tz = _mtv(A1, P[P_THRUST], P[P_THRUST + 1], P[P_THRUST + 2])
        F1x += tx
        F1y += ty
        F1z += tz
        p_thr = tx * y[Y_V1] + ty * y[Y_V1 + 1] + tz * y[Y_V1 + 2]
    dy[Y_W_THRUST] = p_thr
    im1 = P[P_IM1]
    im2 = P[P_IM2]
    imh = P[P_IMH]
    for k in range(3):
        dy[Y_R1 + k] = y[Y_V1 + k]
        dy[Y_R2 + k] = y[Y_V2 + k]
        dy[Y_RH + k] = y[Y_VH + k]
    dy[Y_V1] = F1x * im1
    dy[Y_V1 + 1] = F1y * im1
    dy[Y_V1 + 2] = F1z * im1
    dy[Y_V2] = fIx * im2
    dy[Y_V2 + 1] = fIy * im2
    dy[Y_V2 + 2] = fIz * im2
    _attitude_rhs(y, Y_W1, Y_Q1, M[M_J1], M[M_JI1], M1x, M1y, M1z, sc, dy)
    _attitude_rhs(y, Y_W2, Y_Q2, M[M_J2], M[M_JI2], M2x, M2y, M2z, sc, dy)
    fx_h = Fhx - fHx
    fy_h = Fhy - fHy
    fz_h = Fhz - fHz
    if P[P_H_NOW] > 0.0 and acc[ACC_D] + acc[ACC_D + 3] + acc[ACC_D + 5] > 0.0:
        dpx, dpy, dpz = _implicit_head(y, P, APU, A2, M, acc, fr, dy, wk, hx, hy, hz, twa,
                                       twp, fx_h, fy_h, fz_h)
        if tcx[TX_MASK] != 0.0:
            pct.implicit_friction_row(tr, trn, tcx, dpx, dpy, dpz, hx, hy, hz)
    else:
        dy[Y_VH] = fx_h * imh
        dy[Y_VH + 1] = fy_h * imh
        dy[Y_VH + 2] = fz_h * imh
    wk[WK_STATUS] = status
    return status
