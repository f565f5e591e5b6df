"""Probe-cone docking kernel: two rigid spacecraft, the probe mechanism, penalty contact.

One compiled function, :func:`run`, holds the whole time loop (fixed-step RK4, two rates);
:func:`run_batch` evaluates many packed parameter vectors in parallel (``prange``).
The readable layer is :mod:`models.probe_cone`; the layouts below are its contract.

Model (what the kernel integrates)
----------------------------------
* Active (1) and passive (2) spacecraft: rigid 6-DOF bodies, inertial position and velocity of
  the centre of mass, scalar-first quaternion (inertial -> body DCM ``A``), body rates
  ``w``; Newton-Euler in body axes. Optional constant thrust of the active vehicle (body axes)
  on ``[t_on, t_off)``.
* Probe mechanism on the active unit (frame AU, origin at the housing universal joint):
  the probe head is a low-mass point body (mass ``m_H``) at ``p`` (AU axes) from the joint.
  Its three coordinates are the paper's housing angles and probe stroke
  (``A_AUB,1 = R_z(q2) R_y(q1)``, ``r_AUB,2 = A^T [L_M + L_H, 0, 0]``):

  .. math::

      s = L_0 - |\\mathbf p|,\\qquad
      \\psi = p_y / p_x \\;(=\\tan q_2\\text{-like}),\\qquad
      \\theta = -p_z / p_x \\;(=\\tan q_1).

  Axial absorber: a friction-brake hysteresis element (spring mechanism SMx + brake FB,
  variable parameters, digest A.10) on ``s``, times the scale ``P_S_AX``, plus the magnetic
  damper ``c_ax \\dot s``. Lateral absorber: two constant-parameter hysteresis elements on
  ``psi`` and ``theta`` (SM1, SM2 in perpendicular planes), times ``P_S_LAT``, and two viscous
  dampers on ``(psi +- theta)/sqrt2`` (planes at 45 degrees). Generalized forces act on the
  head through the exact gradients of ``s, psi, theta`` (so the mechanism is conservative
  apart from its dissipative elements); the base gets the opposite force at the head point,
  which is statically exact for a massless housing and probe.
  The head's orientation follows the housing (minimal rotation of ``X_AU`` onto ``p``); the
  probe's bending and torsion compliances are not modelled (rigid), so contact moments about
  the head centre are carried to the active vehicle as couples.
* Passive unit: receiving cone, socket cylinder and bottom as one surface of revolution
  (meridian table of :mod:`models._kernels.contact`), four slots. Head sphere vs that surface
  (penalty law of the contact paper, digest §5); four latches: before triggering, zero-inertia
  spring latches (radially retracting tips, preload ``f_L0`` and stiffness ``k_L``) whose
  resistance is computed between steps and held during the next step (digest §8.4); a latch
  triggers when its tip lies inside its slot window; capture when all four have triggered;
  after triggering, the latch's reverse segment contacts its slot (digest §8.5).
* Energy ledger integrated with the motion (RK4, the same forces): work into each absorber
  element, brake work while slipping, damper and contact dissipation, elastic contact work,
  latch-spring work and thrust work.

Common path: one reciprocal for ``1/|p|``, one for ``1/p_x``, one for the housing rotation per
stage; no transcendental function (``atan2``/``asin`` only when a sample is written).

Layouts
-------
``P`` (float64[NP]) packed parameters, indices ``P_*``; ``Y`` state ``Y_*``; output channels
``O_*`` (``NCH`` columns); events ``EV_*``; status ``ST_*``.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from models._kernels import NJIT
from models._kernels import contact as ck
from models._kernels import hysteresis as hk
from models._kernels.rigid_body import (dcm_to_quat, euler_rhs, quat_deriv, quat_normalize,
                                        quat_to_dcm)

__all__ = [
    "NP", "NY", "NCH", "N_EV", "N_LATCH",
    "run", "run_batch", "apply_slip_force", "initial_state", "channel_names",
]

# --------------------------------------------------------------------------------------------
# packed parameters P
P_M1 = 0      # active mass [kg]
P_J1 = 1      # active inertia, body axes, row-major (9) [kg m^2]
P_JI1 = 10    # its inverse (9)
P_L1 = 19     # AU origin from the active CoM, body axes (3) [m]
P_G1 = 22     # body -> AU DCM (9)
P_M2 = 31     # passive: same fields
P_J2 = 32
P_JI2 = 41
P_L2 = 50
P_G2 = 53
P_MH = 62     # probe head mass [kg]
P_L0 = 63     # joint -> head centre, probe extended [m]
P_RH = 64     # head sphere radius [m]
P_CAX = 65    # axial magnetic damper [N s/m]
P_CD1 = 66    # lateral damper in the +45 deg plane [N m s/rad]
P_CD2 = 67    # lateral damper in the -45 deg plane [N m s/rad]
P_LAW = 68    # contact law (ck.LAW_SIZE = 5): k_S [N/m], c_D [N s/m], k_Fr [-], v_eps, model
P_DNMAX = 73  # largest admissible penetration [m]
P_LATCH_X = 74     # latch tip abscissa in the head frame [m]
P_LATCH_R = 75     # latch tip radius, undeflected [m]
P_LATCH_RIN = 76   # inner end of the reverse segment (radius) [m]
P_LATCH_F0 = 77    # latch spring preload, at the tip [N]
P_LATCH_K = 78     # latch spring stiffness, at the tip [N/m]
P_LATCH_TRAVEL = 79  # largest tip retraction [m]
P_THRUST = 80      # active thrust, body axes (3) [N]
P_T_ON = 83        # thrust interval [s]
P_T_OFF = 84
P_H_SMALL = 85     # step near contact [s]
P_H_LARGE = 86     # step elsewhere [s]
P_GAP = 87         # gap margin for the small step [m]
P_T_END = 88       # duration [s]
P_DT_OUT = 89      # output interval [s]
P_S_AX = 90        # axial absorber force scale [-]
P_S_LAT = 91       # lateral absorber force scale [-]
P_F_SLIP = 92      # brake slip force [N] (applied with apply_slip_force; <= 0: table value)
P_W2 = 93          # passive initial body rates (3) [rad/s]
P_IC = 96          # the 12 initial conditions (IC_NAMES order)
P_IM1 = 108        # derived by run(): 1/m1, 1/m2, 1/m_H (never set by the caller)
P_IM2 = 109
P_IMH = 110
NP = 111
NSC = 64           # float scratch of one rhs evaluation

IC_NAMES = ("rel_pos_x", "rel_pos_y", "rel_pos_z", "rel_vel_x", "rel_vel_y", "rel_vel_z",
            "rel_roll", "rel_pitch", "rel_yaw", "rel_rate_x", "rel_rate_y", "rel_rate_z")

# --------------------------------------------------------------------------------------------
# continuous state Y
Y_R1 = 0
Y_V1 = 3
Y_Q1 = 6
Y_W1 = 10
Y_R2 = 13
Y_V2 = 16
Y_Q2 = 19
Y_W2 = 23
Y_RH = 26
Y_VH = 29
Y_W_AX = 32     # work done on the axial absorber element [J]
Y_W_BRAKE = 33  # part of it done while the brake slips (state +-10)
Y_W_LAT = 34    # work done on the lateral elements
Y_E_DAMP = 35   # dissipated by the viscous dampers
Y_E_CONT = 36   # dissipated by contacts (damping, friction, tensile clamp)
Y_W_CK = 37     # elastic contact work, integral of k dn d(dn)
Y_W_LATCH = 38  # work done on the latch springs before triggering
Y_W_THRUST = 39  # work done by the thrust
NY = 40

# --------------------------------------------------------------------------------------------
# hysteresis elements (index into toff)
E_AX = 0
E_PSI = 1
E_THETA = 2
N_ELEM = 3

N_LATCH = 4

# events
EV_FIRST = 0
EV_BOTTOM = 1
EV_LATCH = 2   # 2..5
EV_CAPTURE = 6
EV_SEPARATION = 7
N_EV = 8

# status
ST_OK = 0
ST_PENETRATION = 1
ST_GEOMETRY = 2
ST_HYSTERESIS = 3
ST_BAD_TABLE = 4

# output channels
O_T = 0
O_STROKE = 1
O_GPITCH = 2
O_GYAW = 3
O_CONTACT = 4
O_BOTTOM = 5
O_CAPTURE = 6
O_LATCH = 7      # 7..10
O_AR = 11        # active rates (3)
O_PR = 14        # passive rates (3)
O_REL = 17       # relative state (12), IC_NAMES order
O_FIF = 29       # interface force on the passive unit, PU axes (3)
O_MIF = 32       # interface moment about the PU origin, PU axes (3)
O_EK = 35
O_ES = 36
O_EBRAKE = 37
O_EDAMP = 38
O_EHYST = 39
O_ECONT = 40
O_WTHRUST = 41   # work done by thrust (ledger input)
O_PLIN = 42      # total linear momentum, inertial (3)
O_PANG = 45      # total angular momentum about the inertial origin, inertial (3)
NCH = 48

# work array (per simulation scratch, float64[NWK])
WK_FIF = 0      # interface force (3) and moment (3) of the last rhs evaluation
WK_MIF = 3
WK_ESC = 6      # sum of 1/2 k dn^2 over current contacts
WK_CONTACT = 7  # any contact (1.0 / 0.0)
WK_BOTTOM = 8   # head on the socket bottom
WK_STATUS = 9
NWK = 10

# latch scratch LF (float64[N_LATCH, NLF]): held force on the passive unit and its point (PU)
LF_F = 0
LF_P = 3
LF_DELTA = 6
NLF = 7

_SQRT1_2 = 0.7071067811865476


def channel_names() -> tuple:
    """Names of the output channels in column order (``O_*``)."""
    names = ["t", "stroke", "gimbal_pitch", "gimbal_yaw", "contact", "bottom_contact",
             "capture", "latch_1", "latch_2", "latch_3", "latch_4",
             "active_rate_x", "active_rate_y", "active_rate_z",
             "passive_rate_x", "passive_rate_y", "passive_rate_z", *IC_NAMES,
             "interface_force_x", "interface_force_y", "interface_force_z",
             "interface_moment_x", "interface_moment_y", "interface_moment_z",
             "energy_kinetic", "energy_stored", "energy_dissipated_brake",
             "energy_dissipated_dampers", "energy_dissipated_hysteresis",
             "energy_dissipated_contact", "thrust_work",
             "momentum_x", "momentum_y", "momentum_z",
             "angular_momentum_x", "angular_momentum_y", "angular_momentum_z"]
    assert len(names) == NCH
    return tuple(names)


# --------------------------------------------------------------------------------------------
# small helpers
@njit(**NJIT)
def _m3(P, o, M):
    for i in range(3):
        for j in range(3):
            M[i, j] = P[o + 3 * i + j]


@njit(**NJIT)
def _mv(A, x, y, z):
    return (A[0, 0] * x + A[0, 1] * y + A[0, 2] * z,
            A[1, 0] * x + A[1, 1] * y + A[1, 2] * z,
            A[2, 0] * x + A[2, 1] * y + A[2, 2] * z)


@njit(**NJIT)
def _mtv(A, x, y, z):
    return (A[0, 0] * x + A[1, 0] * y + A[2, 0] * z,
            A[0, 1] * x + A[1, 1] * y + A[2, 1] * z,
            A[0, 2] * x + A[1, 2] * y + A[2, 2] * z)


@njit(**NJIT)
def _cr(ax, ay, az, bx, by, bz):
    return (ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx)


@njit(**NJIT)
def _matmul(A, B, C):
    for i in range(3):
        for j in range(3):
            C[i, j] = A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + A[i, 2] * B[2, j]


@njit(**NJIT)
def _housing_rot(ux, uy, uz, vx, vy, vz):
    """Rotate ``v`` (housing axes) into AU axes by the minimal rotation taking ``X`` onto the
    unit vector ``u`` (no twist about the probe axis): ``v + k x v + k x (k x v)/(1 + c)`` with
    ``k = X x u``, ``c = u_x``."""
    kx = 0.0
    ky = -uz
    kz = uy
    c1 = 1.0 / (1.0 + ux)
    ax, ay, az = _cr(kx, ky, kz, vx, vy, vz)
    bx, by, bz = _cr(kx, ky, kz, ax, ay, az)
    return vx + ax + bx * c1, vy + ay + by * c1, vz + az + bz * c1


@njit(**NJIT)
def _branch_potential(table, b, n, x):
    """Integral from 0 to ``x`` (side frame, x >= 0) of the branch whose ``q`` array starts at
    ``table[b]`` (hysteresis kernel layout)."""
    if x <= table[b]:
        return 0.0
    e = 0.0
    for j in range(n):
        lo = table[b + j]
        if x <= lo:
            break
        hi = x
        if j + 1 < n and table[b + j + 1] < x:
            hi = table[b + j + 1]
        Q0 = table[b + n + j]
        k = table[b + 2 * n + j]
        d = hi - lo
        e += Q0 * d + 0.5 * k * d * d
    return e


@njit(**NJIT)
def _elem_stored(table, t0, istate, i0, fstate, f0, q):
    """Energy an element would return when unloaded along its backward (unloading) branch from
    ``q`` [J]; for a brake, deformation beyond the slip point stores nothing."""
    n_p = int(table[t0 + hk.H_NP])
    x = q - fstate[f0 + hk.S_SHIFT]
    s = istate[i0 + hk.I_STATE]
    if s > 0 or (s == 0 and x >= 0.0):
        xs = x
        base = t0 + hk.H_SIZE
        n = n_p
    else:
        xs = -x
        base = t0 + hk.H_SIZE + 6 * n_p
        n = int(table[t0 + hk.H_NN])
    if table[t0 + hk.H_KIND] == hk.KIND_BRAKE and xs > table[base + n - 1]:
        xs = table[base + n - 1]
    return _branch_potential(table, base + 3 * n, n, xs)


@njit(**NJIT)
def apply_slip_force(table, t0, f_slip):
    """Set the slip level of a brake element (positive side) to ``f_slip`` (table units),
    keeping the stiff last working segments (slope ``k`` of node ``n-2``, assumption 5): moves
    the common node ``q[n-1]`` and the backward node ``q_B[n-2]``. Returns 0, or 1 when the
    requested level is not above the nodes it must clear (the table is left unchanged)."""
    n = int(table[t0 + hk.H_NP])
    b = t0 + hk.H_SIZE
    bb = b + 3 * n
    kf = table[b + 2 * n + n - 2]
    kb = table[bb + 2 * n + n - 2]
    if kf <= 0.0 or kb <= 0.0 or n < 4:
        return 1
    qn = table[b + n - 2] + (f_slip - table[b + n + n - 2]) / kf
    qb = qn - (f_slip - table[bb + n + n - 2]) / kb
    if qn <= table[b + n - 2] or qb <= table[bb + n - 3] or qb >= qn:
        return 1
    table[b + n - 1] = qn
    table[b + n + n - 1] = f_slip
    table[bb + n - 1] = qn
    table[bb + n + n - 1] = f_slip
    table[bb + n - 2] = qb
    table[bb + 2 * n + n - 3] = (table[bb + n + n - 2] - table[bb + n + n - 3]) / (
        qb - table[bb + n - 3])
    return 0


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
    """Derivative of the state; returns a status code. ``M`` is a scratch of 3x3 matrices
    (8, 3, 3), ``sc`` a float scratch (NSC); ``wk`` receives interface loads and contact
    flags. Allocation-free."""
    A1 = M[0]
    A2 = M[1]
    AAU = M[2]
    APU = M[3]
    G1 = M[4]
    G2 = M[5]
    J1 = M[6]
    J2 = M[7]
    _m3(P, P_G1, G1)
    _m3(P, P_G2, G2)
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
    dy[Y_E_DAMP] = P[P_CAX] * sd * sd + md1 * d1d + md2 * d2d
    fmIx, fmIy, fmIz = _mtv(AAU, fmx, fmy, fmz)

    # ---------------- contacts (PU axes) ----------------
    hIx = y[Y_RH] - fr[9]
    hIy = y[Y_RH + 1] - fr[10]
    hIz = y[Y_RH + 2] - fr[11]
    hx, hy, hz = _mv(APU, hIx, hIy, hIz)
    twa = sc[24:24 + ck.TW_SIZE]
    twp = sc[33:33 + ck.TW_SIZE]
    twa[0], twa[1], twa[2] = _mv(APU, y[Y_VH], y[Y_VH + 1], y[Y_VH + 2])
    # head angular velocity: vehicle 1 plus the housing rotation p x pdot / |p|^2 (AU axes)
    gx, gy, gz = _cr(px, py, pz, pdx, pdy, pdz)
    il2 = il * il
    gIx, gIy, gIz = _mtv(AAU, gx * il2, gy * il2, gz * il2)
    twa[3], twa[4], twa[5] = _mv(APU, fr[6] + gIx, fr[7] + gIy, fr[8] + gIz)
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
        # housing axes -> PU axes: R_PU<-AU (APU AAU^T) after the housing rotation
        for i in range(N_LATCH):
            if latch[i] == 0:
                continue
            ey = 0.0
            ez = 0.0
            if i == 0:
                ey = 1.0
            elif i == 1:
                ez = 1.0
            elif i == 2:
                ey = -1.0
            else:
                ez = -1.0
            xl = P[P_LATCH_X]
            r_in = P[P_LATCH_RIN]
            r_out = P[P_LATCH_R]
            ax, ay, az = _housing_rot(ux, uy, uz, xl, r_in * ey, r_in * ez)
            bx, by, bz = _housing_rot(ux, uy, uz, xl, r_out * ey, r_out * ez)
            aIx, aIy, aIz = _mtv(AAU, ax, ay, az)
            bIx, bIy, bIz = _mtv(AAU, bx, by, bz)
            p1x, p1y, p1z = _mv(APU, aIx, aIy, aIz)
            p2x, p2y, p2z = _mv(APU, bIx, bIy, bIz)
            p1x += hx
            p1y += hy
            p1z += hz
            lx = p2x + hx - p1x
            ly = p2y + hy - p1y
            lz = p2z + hz - p1z
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
    # latches before triggering: held quasi-static forces (force on passive, PU axes)
    p_latch = 0.0
    for i in range(N_LATCH):
        if latch[i] != 0 or LF[i, LF_DELTA] <= 0.0:
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
    caIx, caIy, caIz = _mtv(APU, acc[6], acc[7], acc[8])
    cAx, cAy, cAz = _mv(AAU, caIx, caIy, caIz)
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
    _m3(P, P_J1, J1)
    _m3(P, P_J2, J2)
    JI = M[4]  # G1 no longer needed
    _m3(P, P_JI1, JI)
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
    _m3(P, P_JI2, JI)
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


# --------------------------------------------------------------------------------------------
# initial state
@njit(**NJIT)
def _rot3(axis, a, R):
    """Frame rotation about axis 0/1/2 by ``a`` [rad] (maps old to new components)."""
    c = math.cos(a)
    s = math.sin(a)
    for i in range(3):
        for j in range(3):
            R[i, j] = 0.0
    if axis == 0:
        R[0, 0] = 1.0
        R[1, 1] = c
        R[1, 2] = s
        R[2, 1] = -s
        R[2, 2] = c
    elif axis == 1:
        R[0, 0] = c
        R[0, 2] = -s
        R[1, 1] = 1.0
        R[2, 0] = s
        R[2, 2] = c
    else:
        R[0, 0] = c
        R[0, 1] = s
        R[1, 0] = -s
        R[1, 1] = c
        R[2, 2] = 1.0


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
    _rot3(0, ic[6], Rx)
    _rot3(1, ic[7], Ry)
    _rot3(2, ic[8], Rz)
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


# --------------------------------------------------------------------------------------------
# between steps
@njit(**NJIT)
def _latch_dirs(i):
    if i == 0:
        return 1.0, 0.0
    if i == 1:
        return 0.0, 1.0
    if i == 2:
        return -1.0, 0.0
    return 0.0, -1.0


@njit(**NJIT)
def _between(t, y, P, mer, slots, table, toff, istate, fstate, latch, LF, ev, M, sc, info):
    """Discrete updates after an accepted step: hysteresis states, latch resistance and
    triggering, capture. Returns (status, near_contact)."""
    A1 = M[0]
    A2 = M[1]
    AAU = M[2]
    APU = M[3]
    G1 = M[4]
    G2 = M[5]
    _m3(P, P_G1, G1)
    _m3(P, P_G2, G2)
    fr = sc[0:24]
    _frames(y, P, A1, A2, AAU, APU, G1, G2, fr)
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
    psid = -psi * rx * pdx + rx * pdy
    thd = -th * rx * pdx - rx * pdz
    qs = (s, psi, th)
    qds = (sd, psid, thd)
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
            info[0] = t
            info[1] = e
            info[2] = stt
            return ST_HYSTERESIS, True
    # head centre in PU
    hx, hy, hz = _mv(APU, y[Y_RH] - fr[9], y[Y_RH + 1] - fr[10], y[Y_RH + 2] - fr[11])
    near = False
    # gap test: the head sphere inflated by the margin
    st, dn, nx, ny, nz, cpx, cpy, cpz, f = ck.sphere_vs_revolution(
        hx, hy, hz, P[P_RH] + P[P_GAP], mer, 1e300, 0)
    if st != ck.NONE:
        near = True
    ntrig = 0
    for i in range(N_LATCH):
        if latch[i] != 0:
            ntrig += 1
            continue
        ey, ez = _latch_dirs(i)
        # tip and radial direction, housing -> AU -> inertial -> PU
        ax, ay, az = _housing_rot(ux, uy, uz, P[P_LATCH_X], P[P_LATCH_R] * ey,
                                  P[P_LATCH_R] * ez)
        aIx, aIy, aIz = _mtv(AAU, ax, ay, az)
        tx, ty, tz = _mv(APU, aIx, aIy, aIz)
        tx += hx
        ty += hy
        tz += hz
        bx, by, bz = _housing_rot(ux, uy, uz, 0.0, ey, ez)
        bIx, bIy, bIz = _mtv(AAU, bx, by, bz)
        erx, ery, erz = _mv(APU, bIx, bIy, bIz)
        # trigger (digest 8.4 step 6): the reverse segment (inner end -> tip) crosses the slot
        # plane inside the narrow part of the window, so that the locking contact starts
        # without penetration
        sl = slots[i]
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
            if delta > P[P_LATCH_TRAVEL]:
                delta = P[P_LATCH_TRAVEL]
            fmag = (P[P_LATCH_F0] + P[P_LATCH_K] * delta) / cosr
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


# --------------------------------------------------------------------------------------------
# output
@njit(**NJIT)
def _record(t, y, P, table, toff, istate, fstate, latch, LF, wk, M, sc, chan, row):
    A1 = M[0]
    A2 = M[1]
    AAU = M[2]
    APU = M[3]
    G1 = M[4]
    G2 = M[5]
    J1 = M[6]
    J2 = M[7]
    _m3(P, P_G1, G1)
    _m3(P, P_G2, G2)
    fr = sc[0:24]
    _frames(y, P, A1, A2, AAU, APU, G1, G2, fr)
    px, py, pz, pdx, pdy, pdz = _probe_coords(y, AAU, fr)
    ell = math.sqrt(px * px + py * py + pz * pz)
    v = sc[64:64 + NCH]
    v[O_T] = t
    v[O_STROKE] = P[P_L0] - ell
    v[O_GPITCH] = math.atan2(-pz, px)
    v[O_GYAW] = math.asin(py / ell)
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
    a, b, c = _mv(APU, fr[0] - fr[9], fr[1] - fr[10], fr[2] - fr[11])
    v[O_REL] = a
    v[O_REL + 1] = b
    v[O_REL + 2] = c
    a, b, c = _mv(APU, fr[3] - fr[12], fr[4] - fr[13], fr[5] - fr[14])
    v[O_REL + 3] = a
    v[O_REL + 4] = b
    v[O_REL + 5] = c
    APAU = M[6]
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
    a, b, c = _mv(APU, fr[6] - fr[15], fr[7] - fr[16], fr[8] - fr[17])
    v[O_REL + 9] = a
    v[O_REL + 10] = b
    v[O_REL + 11] = c
    for k in range(3):
        v[O_FIF + k] = wk[WK_FIF + k]
        v[O_MIF + k] = wk[WK_MIF + k]
    # energies and momenta
    _m3(P, P_J1, J1)
    _m3(P, P_J2, J2)
    ek = 0.0
    m1 = P[P_M1]
    m2 = P[P_M2]
    mh = P[P_MH]
    plx = 0.0
    ply = 0.0
    plz = 0.0
    for k in range(3):
        ek += 0.5 * (m1 * y[Y_V1 + k] ** 2 + m2 * y[Y_V2 + k] ** 2 + mh * y[Y_VH + k] ** 2)
    h1x, h1y, h1z = _mv(J1, y[Y_W1], y[Y_W1 + 1], y[Y_W1 + 2])
    h2x, h2y, h2z = _mv(J2, y[Y_W2], y[Y_W2 + 1], y[Y_W2 + 2])
    ek += 0.5 * (h1x * y[Y_W1] + h1y * y[Y_W1 + 1] + h1z * y[Y_W1 + 2])
    ek += 0.5 * (h2x * y[Y_W2] + h2y * y[Y_W2 + 1] + h2z * y[Y_W2 + 2])
    plx = m1 * y[Y_V1] + m2 * y[Y_V2] + mh * y[Y_VH]
    ply = m1 * y[Y_V1 + 1] + m2 * y[Y_V2 + 1] + mh * y[Y_VH + 1]
    plz = m1 * y[Y_V1 + 2] + m2 * y[Y_V2 + 2] + mh * y[Y_VH + 2]
    L1x, L1y, L1z = _mtv(A1, h1x, h1y, h1z)
    L2x, L2y, L2z = _mtv(A2, h2x, h2y, h2z)
    lx = L1x + L2x
    ly = L1y + L2y
    lz = L1z + L2z
    for (ro, vo, m) in ((Y_R1, Y_V1, m1), (Y_R2, Y_V2, m2), (Y_RH, Y_VH, mh)):
        cx, cy, cz = _cr(y[ro], y[ro + 1], y[ro + 2], y[vo], y[vo + 1], y[vo + 2])
        lx += m * cx
        ly += m * cy
        lz += m * cz
    s_ax = P[P_S_AX]
    s_lat = P[P_S_LAT]
    rx = 1.0 / px
    qs = (P[P_L0] - ell, py * rx, -pz * rx)
    eh = 0.0
    for e in range(N_ELEM):
        sc_ = s_ax if e == E_AX else s_lat
        eh += sc_ * _elem_stored(table, toff[e], istate, e * hk.I_SIZE, fstate,
                                 e * hk.F_SIZE, qs[e])
    el = 0.0
    for i in range(N_LATCH):
        if latch[i] == 0:
            d = LF[i, LF_DELTA]
            if d > 0.0:
                el += P[P_LATCH_F0] * d + 0.5 * P[P_LATCH_K] * d * d
    v[O_EK] = ek
    v[O_ES] = wk[WK_ESC] + eh + el
    v[O_EBRAKE] = y[Y_W_BRAKE]
    v[O_EDAMP] = y[Y_E_DAMP]
    v[O_EHYST] = y[Y_W_AX] - y[Y_W_BRAKE] + y[Y_W_LAT] - eh
    v[O_ECONT] = y[Y_E_CONT] + y[Y_W_LATCH] - el
    v[O_WTHRUST] = y[Y_W_THRUST]
    v[O_PLIN] = plx
    v[O_PLIN + 1] = ply
    v[O_PLIN + 2] = plz
    v[O_PANG] = lx
    v[O_PANG + 1] = ly
    v[O_PANG + 2] = lz
    for j in range(chan.shape[0]):
        row[j] = v[chan[j]]


# --------------------------------------------------------------------------------------------
# the time loop
@njit(**NJIT)
def _inv3(A, B):
    det = (A[0, 0] * (A[1, 1] * A[2, 2] - A[1, 2] * A[2, 1])
           - A[0, 1] * (A[1, 0] * A[2, 2] - A[1, 2] * A[2, 0])
           + A[0, 2] * (A[1, 0] * A[2, 1] - A[1, 1] * A[2, 0]))
    idet = 1.0 / det
    B[0, 0] = (A[1, 1] * A[2, 2] - A[1, 2] * A[2, 1]) * idet
    B[0, 1] = (A[0, 2] * A[2, 1] - A[0, 1] * A[2, 2]) * idet
    B[0, 2] = (A[0, 1] * A[1, 2] - A[0, 2] * A[1, 1]) * idet
    B[1, 0] = (A[1, 2] * A[2, 0] - A[1, 0] * A[2, 2]) * idet
    B[1, 1] = (A[0, 0] * A[2, 2] - A[0, 2] * A[2, 0]) * idet
    B[1, 2] = (A[0, 2] * A[1, 0] - A[0, 0] * A[1, 2]) * idet
    B[2, 0] = (A[1, 0] * A[2, 1] - A[1, 1] * A[2, 0]) * idet
    B[2, 1] = (A[0, 1] * A[2, 0] - A[0, 0] * A[2, 1]) * idet
    B[2, 2] = (A[0, 0] * A[1, 1] - A[0, 1] * A[1, 0]) * idet


@njit(**NJIT)
def run(P_in, mer, slots, table_in, toff, chan, out, ev, info):
    """Simulate one docking.

    Parameters
    ----------
    P_in : float64[NP]
        Packed parameters (``P_*``); not modified.
    mer : float64[n, ck.M_NCOL]
        Meridian table of the receiving cone, socket and bottom (last face = bottom).
    slots : float64[N_LATCH, ck.SL_SIZE]
        The four socket slots.
    table_in, toff : float64[:], int64[N_ELEM]
        Hysteresis elements (axial brake element, lateral psi, lateral theta); not modified.
    chan : int64[:]
        Output channels to record (``O_*`` indices).
    out : float64[n_out, len(chan)]
        Samples at ``t = k dt_out``, ``k = 0..n_out-1`` (written).
    ev : float64[N_EV]
        Event times [s] (written; NaN = did not happen).
    info : float64[8]
        ``[t_fail, element/latch, detail, n_steps, n_small_steps, t_end, 0, 0]``.

    Returns
    -------
    int
        ``ST_OK`` or the first failure (``ST_PENETRATION``, ``ST_GEOMETRY``,
        ``ST_HYSTERESIS``, ``ST_BAD_TABLE``); samples after a failure are NaN.
    """
    P = P_in.copy()
    P[P_IM1] = 1.0 / P[P_M1]
    P[P_IM2] = 1.0 / P[P_M2]
    P[P_IMH] = 1.0 / P[P_MH]
    J = np.empty((3, 3))
    JI = np.empty((3, 3))
    for (oj, oi) in ((P_J1, P_JI1), (P_J2, P_JI2)):
        _m3(P, oj, J)
        _inv3(J, JI)
        for i in range(3):
            for j in range(3):
                P[oi + 3 * i + j] = JI[i, j]
    table = table_in.copy()
    for k in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[k, j] = np.nan
    for k in range(N_EV):
        ev[k] = np.nan
    for k in range(info.shape[0]):
        info[k] = 0.0
    if P[P_F_SLIP] > 0.0:
        if apply_slip_force(table, toff[E_AX], P[P_F_SLIP] / P[P_S_AX]) != 0:
            return ST_BAD_TABLE
    istate = np.zeros(N_ELEM * hk.I_SIZE, dtype=np.int64)
    fstate = np.zeros(N_ELEM * hk.F_SIZE)
    latch = np.zeros(N_LATCH, dtype=np.int64)
    LF = np.zeros((N_LATCH, NLF))
    M = np.empty((8, 3, 3))
    sc = np.zeros(NSC + NCH)
    wk = np.zeros(NWK)
    y = np.empty(NY)
    initial_state(P, y)
    k1 = np.empty(NY)
    k2 = np.empty(NY)
    k3 = np.empty(NY)
    k4 = np.empty(NY)
    yt = np.empty(NY)
    n_out = out.shape[0]
    dt_out = P[P_DT_OUT]
    h_small = P[P_H_SMALL]
    h_large = P[P_H_LARGE]
    t = 0.0
    k_out = 0
    n_steps = 0
    n_small = 0
    was_contact = False
    status = ST_OK
    while True:
        st, near = _between(t, y, P, mer, slots, table, toff, istate, fstate, latch, LF, ev,
                            M, sc, info)
        if st != ST_OK:
            status = st
            break
        st = _rhs(t, y, P, mer, slots, table, toff, istate, fstate, latch, LF, k1, wk, M, sc)
        if st != ST_OK:
            status = st
            info[0] = t
            break
        contact = wk[WK_CONTACT] > 0.0
        if contact:
            near = True
            if math.isnan(ev[EV_FIRST]):
                ev[EV_FIRST] = t
            ev[EV_SEPARATION] = np.nan
        elif was_contact:
            ev[EV_SEPARATION] = t
        was_contact = contact
        if wk[WK_BOTTOM] > 0.0 and math.isnan(ev[EV_BOTTOM]):
            ev[EV_BOTTOM] = t
        t_next = k_out * dt_out
        if t >= t_next - 1e-9 * dt_out:
            _record(t, y, P, table, toff, istate, fstate, latch, LF, wk, M, sc, chan,
                    out[k_out])
            k_out += 1
            if k_out >= n_out:
                break
            t_next = k_out * dt_out
        h = h_small if near else h_large
        land = False
        if t + h >= t_next - 1e-9 * dt_out:
            h = t_next - t
            land = True
        hh = 0.5 * h
        for i in range(NY):
            yt[i] = y[i] + hh * k1[i]
        st = _rhs(t + hh, yt, P, mer, slots, table, toff, istate, fstate, latch, LF, k2, wk,
                  M, sc)
        if st == ST_OK:
            for i in range(NY):
                yt[i] = y[i] + hh * k2[i]
            st = _rhs(t + hh, yt, P, mer, slots, table, toff, istate, fstate, latch, LF, k3,
                      wk, M, sc)
        if st == ST_OK:
            for i in range(NY):
                yt[i] = y[i] + h * k3[i]
            st = _rhs(t + h, yt, P, mer, slots, table, toff, istate, fstate, latch, LF, k4,
                      wk, M, sc)
        if st != ST_OK:
            status = st
            info[0] = t
            break
        h6 = h / 6.0
        for i in range(NY):
            y[i] += h6 * (k1[i] + 2.0 * (k2[i] + k3[i]) + k4[i])
        quat_normalize(y, Y_Q1)
        quat_normalize(y, Y_Q2)
        t = t_next if land else t + h
        n_steps += 1
        if near:
            n_small += 1
    if math.isnan(ev[EV_CAPTURE]) is False:
        ev[EV_SEPARATION] = np.nan
    info[3] = n_steps
    info[4] = n_small
    info[5] = t
    return status


@njit(cache=True, nogil=True, error_model="numpy", parallel=True)
def run_batch(Pb, mer, slots, table, toff, chan, out, ev, info, status):
    """:func:`run` over the rows of ``Pb`` (n, NP) in parallel; ``out`` (n, n_out, n_chan),
    ``ev`` (n, N_EV), ``info`` (n, 8), ``status`` int64 (n) are written."""
    for b in prange(Pb.shape[0]):
        status[b] = run(Pb[b], mer, slots, table, toff, chan, out[b], ev[b], info[b])
