"""Probe-cone kernel, part 2: the stage derivative :func:`_rhs` (one RK4 stage: frames,
mechanism forces, contacts, held latch forces, Newton-Euler) and its helpers.
Layouts in :mod:`models._kernels.probe_cone_layout`."""
from __future__ import annotations

import math

from numba import njit

from models._kernels import NJIT
from models._kernels import contact as ck
from models._kernels import hysteresis as hk
from models._kernels.probe_cone_layout import (_SQRT1_2, _cr, _latch_dirs, _matmul, _mtv,
                                               _mv)
from models._kernels.rigid_body import euler_rhs, quat_deriv, quat_to_dcm
from models._kernels.probe_cone_layout import *  # noqa: F401,F403  (the P_/Y_/O_ layouts)


# --------------------------------------------------------------------------------------------
# frames of one evaluation
@njit(**NJIT)
def _frames(y, P, A1, A2, AAU, APU, G1, G2, fr):
    """Poses and velocities of the unit frames (inertial), written into ``fr``:
    0 r_AU, 3 v_AU, 6 w1 (inertial), 9 r_PU, 12 v_PU, 15 w2 (inertial), 18 l1 (inertial),
    21 l2 (inertial)."""
    quat_to_dcm(y, Y_Q1, A1)
    quat_to_dcm(y, Y_Q2, A2)
    _matmul(G1, A1, AAU)
    _matmul(G2, A2, APU)
    l1x, l1y, l1z = _mtv(A1, P[P_L1], P[P_L1 + 1], P[P_L1 + 2])
    l2x, l2y, l2z = _mtv(A2, P[P_L2], P[P_L2 + 1], P[P_L2 + 2])
    w1x, w1y, w1z = _mtv(A1, y[Y_W1], y[Y_W1 + 1], y[Y_W1 + 2])
    w2x, w2y, w2z = _mtv(A2, y[Y_W2], y[Y_W2 + 1], y[Y_W2 + 2])
    c1x, c1y, c1z = _cr(w1x, w1y, w1z, l1x, l1y, l1z)
    c2x, c2y, c2z = _cr(w2x, w2y, w2z, l2x, l2y, l2z)
    fr[0] = y[Y_R1] + l1x
    fr[1] = y[Y_R1 + 1] + l1y
    fr[2] = y[Y_R1 + 2] + l1z
    fr[3] = y[Y_V1] + c1x
    fr[4] = y[Y_V1 + 1] + c1y
    fr[5] = y[Y_V1 + 2] + c1z
    fr[6] = w1x
    fr[7] = w1y
    fr[8] = w1z
    fr[9] = y[Y_R2] + l2x
    fr[10] = y[Y_R2 + 1] + l2y
    fr[11] = y[Y_R2 + 2] + l2z
    fr[12] = y[Y_V2] + c2x
    fr[13] = y[Y_V2 + 1] + c2y
    fr[14] = y[Y_V2 + 2] + c2z
    fr[15] = w2x
    fr[16] = w2y
    fr[17] = w2z
    fr[18] = l1x
    fr[19] = l1y
    fr[20] = l1z
    fr[21] = l2x
    fr[22] = l2y
    fr[23] = l2z


@njit(**NJIT)
def _probe_coords(y, AAU, fr):
    """Head position ``p`` and its rate ``pdot`` (relative, AU axes) [m, m/s]."""
    px, py, pz = _mv(AAU, y[Y_RH] - fr[0], y[Y_RH + 1] - fr[1], y[Y_RH + 2] - fr[2])
    dvx, dvy, dvz = _mv(AAU, y[Y_VH] - fr[3], y[Y_VH + 1] - fr[4], y[Y_VH + 2] - fr[5])
    wx, wy, wz = _mv(AAU, fr[6], fr[7], fr[8])
    cx, cy, cz = _cr(wx, wy, wz, px, py, pz)
    return px, py, pz, dvx - cx, dvy - cy, dvz - cz


@njit(**NJIT)
def _contact_apply(st, dn, nx, ny, nz, cpx, cpy, cpz, hx, hy, hz, twa, twp, law, acc):
    """Force law for one contact (PU axes) and accumulation into ``acc``:
    0 force on passive (PU), 3 moment about the PU origin (PU), 6 moment of the head's force
    about the head centre (PU, carried to vehicle 1), 9 dissipated power, 10 elastic power
    k dn dn_dot, 11 sum of 1/2 k dn^2, 12 contact count."""
    fn, dd, fx, fy, fz, mpx, mpy, mpz, max_, may, maz = ck.contact_wrench(
        dn, nx, ny, nz, cpx, cpy, cpz, twa, twp, law)
    # relative velocity at the point (active - passive) to get the absorbed power f.v_rel
    ax_ = cpx - twa[ck.TW_O]
    ay_ = cpy - twa[ck.TW_O + 1]
    az_ = cpz - twa[ck.TW_O + 2]
    vax = twa[ck.TW_V] + twa[ck.TW_W + 1] * az_ - twa[ck.TW_W + 2] * ay_
    vay = twa[ck.TW_V + 1] + twa[ck.TW_W + 2] * ax_ - twa[ck.TW_W] * az_
    vaz = twa[ck.TW_V + 2] + twa[ck.TW_W] * ay_ - twa[ck.TW_W + 1] * ax_
    vpx = twp[ck.TW_V] + twp[ck.TW_W + 1] * cpz - twp[ck.TW_W + 2] * cpy
    vpy = twp[ck.TW_V + 1] + twp[ck.TW_W + 2] * cpx - twp[ck.TW_W] * cpz
    vpz = twp[ck.TW_V + 2] + twp[ck.TW_W] * cpy - twp[ck.TW_W + 1] * cpx
    p_abs = fx * (vax - vpx) + fy * (vay - vpy) + fz * (vaz - vpz)
    kel = law[ck.LAW_K] * dn
    acc[0] += fx
    acc[1] += fy
    acc[2] += fz
    acc[3] += mpx
    acc[4] += mpy
    acc[5] += mpz
    acc[6] += max_
    acc[7] += may
    acc[8] += maz
    acc[9] += p_abs - kel * dd
    acc[10] += kel * dd
    acc[11] += 0.5 * kel * dn
    acc[12] += 1.0


@njit(**NJIT)
def _rhs(t, y, P, mer, slots, table, toff, istate, fstate, latch, LF, dy, wk, M, sc):
    """Derivative of the state; returns a status code. ``M`` holds 3x3 matrices
    (12, 3, 3; see :func:`run`), ``sc`` a float scratch (NSC); ``wk`` receives interface loads and contact
    flags. Allocation-free."""
    A1 = M[0]
    A2 = M[1]
    AAU = M[2]
    APU = M[3]
    G1 = M[4]
    G2 = M[5]
    J1 = M[6]
    J2 = M[7]
    fr = sc[0:24]
    _frames(y, P, A1, A2, AAU, APU, G1, G2, fr)

    # ---------------- mechanism (AU axes) ----------------
    px, py, pz, pdx, pdy, pdz = _probe_coords(y, AAU, fr)
    ell = math.sqrt(px * px + py * py + pz * pz)
    il = 1.0 / ell
    ux = px * il
    uy = py * il
    uz = pz * il
    s = P[P_L0] - ell
    sd = -(ux * pdx + uy * pdy + uz * pdz)
    rx = 1.0 / px
    psi = py * rx
    th = -pz * rx
    # gradients: dpsi/dp = (-py/px^2, 1/px, 0); dtheta/dp = (pz/px^2, 0, -1/px)
    gpx = -psi * rx
    gpy = rx
    gtx = -th * rx
    gtz = -rx
    psid = gpx * pdx + gpy * pdy
    thd = gtx * pdx + gtz * pdz
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
    # force of the mechanism on the head, AU axes
    fmx = f_ax * ux - m_psi * gpx - m_th * gtx
    fmy = f_ax * uy - m_psi * gpy
    fmz = f_ax * uz - m_th * gtz
    dy[Y_W_AX] = q_ax * sd
    st_ax = istate[E_AX * hk.I_SIZE + hk.I_STATE]
    dy[Y_W_BRAKE] = q_ax * sd if (st_ax == 10 or st_ax == -10) else 0.0
    dy[Y_W_LAT] = q_psi * psid + q_th * thd
    # torsion: phi_dot = spin - (w_housing . u); the housing turns with vehicle 1 and about
    # axes normal to u only (p x pdot / |p|^2)
    w1Ax, w1Ay, w1Az = _mv(AAU, fr[6], fr[7], fr[8])
    w1u = w1Ax * ux + w1Ay * uy + w1Az * uz
    spin = y[Y_SPIN]
    phid = spin - w1u
    q_tor = hk.hyst_force(table, toff[E_TOR], istate, E_TOR * hk.I_SIZE, fstate,
                          E_TOR * hk.F_SIZE, y[Y_PHI])
    m_tor = q_tor + P[P_CTOR] * phid
    dy[Y_PHI] = phid
    dy[Y_TC] = -y[Y_TS] * phid
    dy[Y_TS] = y[Y_TC] * phid
    dy[Y_W_TOR] = q_tor * phid
    dy[Y_E_DAMP] = (P[P_CAX] * sd * sd + md1 * d1d + md2 * d2d
                    + P[P_CTOR] * phid * phid)
    fmIx, fmIy, fmIz = _mtv(AAU, fmx, fmy, fmz)

    # ---------------- contacts (PU axes) ----------------
    hIx = y[Y_RH] - fr[9]
    hIy = y[Y_RH + 1] - fr[10]
    hIz = y[Y_RH + 2] - fr[11]
    hx, hy, hz = _mv(APU, hIx, hIy, hIz)
    twa = sc[24:24 + ck.TW_SIZE]
    twp = sc[33:33 + ck.TW_SIZE]
    twa[0], twa[1], twa[2] = _mv(APU, y[Y_VH], y[Y_VH + 1], y[Y_VH + 2])
    # head angular velocity (AU axes): vehicle 1 without its component along u, the housing
    # rotation p x pdot / |p|^2, and the head spin along u
    gx, gy, gz = _cr(px, py, pz, pdx, pdy, pdz)
    il2 = il * il
    whx = w1Ax + gx * il2 + (spin - w1u) * ux
    why = w1Ay + gy * il2 + (spin - w1u) * uy
    whz = w1Az + gz * il2 + (spin - w1u) * uz
    gIx, gIy, gIz = _mtv(AAU, whx, why, whz)
    twa[3], twa[4], twa[5] = _mv(APU, gIx, gIy, gIz)
    twa[6] = hx
    twa[7] = hy
    twa[8] = hz
    twp[0], twp[1], twp[2] = _mv(APU, fr[12], fr[13], fr[14])
    twp[3], twp[4], twp[5] = _mv(APU, fr[15], fr[16], fr[17])
    twp[6] = 0.0
    twp[7] = 0.0
    twp[8] = 0.0
    law = P[P_LAW:P_LAW + ck.LAW_SIZE]
    dnmax = P[P_DNMAX]
    acc = sc[42:55]
    acc[:] = 0.0
    status = ST_OK
    bottom = 0.0
    rh = P[P_RH]
    nmer = mer.shape[0]
    feat = 0
    while True:
        st, dn, nx, ny, nz, cpx, cpy, cpz, f = ck.sphere_vs_revolution(
            hx, hy, hz, rh, mer, dnmax, feat)
        if st == ck.NONE:
            break
        if st == ck.PENETRATION_EXCEEDED:
            status = ST_PENETRATION
            break
        if st == ck.GEOMETRY_RANGE:
            status = ST_GEOMETRY
            break
        if f == 2 * (nmer - 2):
            bottom = 1.0
        _contact_apply(st, dn, nx, ny, nz, cpx, cpy, cpz, hx, hy, hz, twa, twp, law, acc)
        feat = f + 1
    # latches after triggering: reverse segment vs slot
    any_trig = 0
    for i in range(N_LATCH):
        any_trig += latch[i]
    if any_trig > 0:
        # columns of the housing -> PU rotation (APU AAU^T Rg), built once per evaluation:
        # c0 = image of X_H, c1 = of Y_H, c2 = of Z_H. Rg = I + K + K^2 / (1 + u_x) with
        # K = [X x u]_x written out (the columns of _housing_rot applied to X, Y, Z; one
        # reciprocal instead of three)
        C = M[11]
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
                if st == ck.PENETRATION_EXCEEDED:
                    status = ST_PENETRATION
                    break
                _contact_apply(st, dn, nx, ny, nz, cpx, cpy, cpz, hx, hy, hz, twa, twp, law,
                               acc)
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
        vax = twa[0] + twa[4] * az_ - twa[5] * ay_
        vay = twa[1] + twa[5] * ax_ - twa[3] * az_
        vaz = twa[2] + twa[3] * ay_ - twa[4] * ax_
        vpx = twp[0] + twp[4] * cpz - twp[5] * cpy
        vpy = twp[1] + twp[5] * cpx - twp[3] * cpz
        vpz = twp[2] + twp[3] * cpy - twp[4] * cpx
        p_latch += fx * (vax - vpx) + fy * (vay - vpy) + fz * (vaz - vpz)
        m1, m2, m3 = _cr(cpx, cpy, cpz, fx, fy, fz)
        n1, n2, n3 = _cr(ax_, ay_, az_, fx, fy, fz)
        acc[0] += fx
        acc[1] += fy
        acc[2] += fz
        acc[3] += m1
        acc[4] += m2
        acc[5] += m3
        acc[6] -= n1
        acc[7] -= n2
        acc[8] -= n3
        acc[12] += 1.0
    # capture sensors after capture: their total axial friction on the socket wall (digest
    # 8.4), regularized like the contact friction, at the head centre
    if any_trig == N_LATCH and P[P_SENS_FR] > 0.0:
        vr = twa[0] - (twp[0] + twp[4] * hz - twp[5] * hy)
        ve = law[ck.LAW_VEPS]
        fpx = P[P_SENS_FR] * vr / math.sqrt(vr * vr + ve * ve)
        acc[0] += fpx
        acc[4] += hz * fpx
        acc[5] -= hy * fpx
        acc[9] += fpx * vr
    dy[Y_W_LATCH] = p_latch
    dy[Y_E_CONT] = acc[9]
    dy[Y_W_CK] = acc[10]
    wk[WK_FIF] = acc[0]
    wk[WK_FIF + 1] = acc[1]
    wk[WK_FIF + 2] = acc[2]
    wk[WK_MIF] = acc[3]
    wk[WK_MIF + 1] = acc[4]
    wk[WK_MIF + 2] = acc[5]
    wk[WK_ESC] = acc[11]
    wk[WK_CONTACT] = 1.0 if acc[12] > 0.0 else 0.0
    wk[WK_BOTTOM] = bottom
    wk[WK_FAX] = f_ax
    wk[WK_MPITCH] = m_th
    wk[WK_MYAW] = m_psi

    # ---------------- assemble ----------------
    # contact forces: passive gets f (PU) at the points; head gets -f at its centre plus the
    # couple acc[6:9] carried to vehicle 1
    fIx, fIy, fIz = _mtv(APU, acc[0], acc[1], acc[2])
    # passive: force (inertial) and moment about C2 (body 2 axes)
    mpIx, mpIy, mpIz = _mtv(APU, acc[3], acc[4], acc[5])
    t1x, t1y, t1z = _cr(fr[9] - y[Y_R2], fr[10] - y[Y_R2 + 1], fr[11] - y[Y_R2 + 2],
                        fIx, fIy, fIz)
    M2x, M2y, M2z = _mv(A2, mpIx + t1x, mpIy + t1y, mpIz + t1z)
    # active: mechanism reaction -F_m at the head point, the contact couples, thrust
    rx1 = y[Y_RH] - y[Y_R1]
    ry1 = y[Y_RH + 1] - y[Y_R1 + 1]
    rz1 = y[Y_RH + 2] - y[Y_R1 + 2]
    # couple of the contact forces about the head centre: the head turns with vehicle 1 and
    # with the housing (delta theta = p x delta p / |p|^2), so by virtual work the couple acts
    # on vehicle 1 and as the generalized force (m x p) / |p|^2 on the head point, whose
    # reaction the base takes at the head point
    # Torsion DOF: the component of the couple along u drives the head spin (with the torsion
    # element and damper reacting on the housing); turning the spin axis needs the gyroscopic
    # couple J_t spin u_dot, supplied by the housing. The housing (massless) passes on
    # m_h = m_c - (m_c.u) u + m_tor u - J_t spin u_dot.
    caIx, caIy, caIz = _mtv(APU, acc[6], acc[7], acc[8])
    cAx, cAy, cAz = _mv(AAU, caIx, caIy, caIz)
    mcu = cAx * ux + cAy * uy + cAz * uz
    dy[Y_SPIN] = (mcu - m_tor) * P[P_IJT]
    ud = (ux * pdx + uy * pdy + uz * pdz)
    jts = P[P_JT] * spin * il
    cAx += (m_tor - mcu) * ux - jts * (pdx - ux * ud)
    cAy += (m_tor - mcu) * uy - jts * (pdy - uy * ud)
    cAz += (m_tor - mcu) * uz - jts * (pdz - uz * ud)
    caIx, caIy, caIz = _mtv(AAU, cAx, cAy, cAz)
    fpx, fpy, fpz = _cr(cAx, cAy, cAz, px, py, pz)
    fpIx, fpIy, fpIz = _mtv(AAU, fpx * il2, fpy * il2, fpz * il2)
    fmIx += fpIx
    fmIy += fpIy
    fmIz += fpIz
    t2x, t2y, t2z = _cr(rx1, ry1, rz1, -fmIx, -fmIy, -fmIz)
    M1x, M1y, M1z = _mv(A1, t2x + caIx, t2y + caIy, t2z + caIz)
    F1x = -fmIx
    F1y = -fmIy
    F1z = -fmIz
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
    dy[Y_VH] = (fmIx - fIx) * imh
    dy[Y_VH + 1] = (fmIy - fIy) * imh
    dy[Y_VH + 2] = (fmIz - fIz) * imh
    JI = M[8]
    w = sc[55:58]
    mm = sc[58:61]
    dw = sc[61:64]
    w[0] = y[Y_W1]
    w[1] = y[Y_W1 + 1]
    w[2] = y[Y_W1 + 2]
    mm[0] = M1x
    mm[1] = M1y
    mm[2] = M1z
    euler_rhs(J1, JI, w, mm, dw)
    dy[Y_W1] = dw[0]
    dy[Y_W1 + 1] = dw[1]
    dy[Y_W1 + 2] = dw[2]
    quat_deriv(y, Y_Q1, w, dy, Y_Q1)
    JI = M[9]
    w[0] = y[Y_W2]
    w[1] = y[Y_W2 + 1]
    w[2] = y[Y_W2 + 2]
    mm[0] = M2x
    mm[1] = M2y
    mm[2] = M2z
    euler_rhs(J2, JI, w, mm, dw)
    dy[Y_W2] = dw[0]
    dy[Y_W2 + 1] = dw[1]
    dy[Y_W2 + 2] = dw[2]
    quat_deriv(y, Y_Q2, w, dy, Y_Q2)
    wk[WK_STATUS] = status
    return status
