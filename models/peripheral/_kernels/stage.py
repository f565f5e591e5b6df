"""Peripheral unit kernel, stage part: the frames of one state and the state derivative (one
RK4 stage): legs, both vehicles, the ring, every ring-ring contact, the post-trigger latch
contacts, the capture sensors and the held latch forces.

Order inside a stage (why: massless legs make the leg forces a function of the state, so
there is no algebraic loop): leg forces from the ring pose -> base reaction and thrust give
the active vehicle's accelerations -> the AU frame's inertial ``a_O``, ``Omega``, ``alpha`` ->
contacts in PU with both twists -> the ring's ``q''`` (:func:`~models._kernels.
peripheral_mechanism.ring_accel`) and the passive vehicle's accelerations.

All contacts are evaluated in PU axes; forces on the ring are accumulated in PU with moments
about the ring centre, forces on the passive unit with moments about the PU origin, in the
accumulator layout ``A_*`` of :mod:`models.peripheral._kernels.latch`. Every force acts on
both bodies at one point, so linear and angular momentum are conserved to rounding.

Work arrays: ``M`` (``NM`` x 3 x 3) the DCMs ``M_*``; ``sc`` the float scratch ``SC_*``;
``kw`` the mechanism workspace (``KW_*``); ``ea`` the active edges in PU (12 x 6); ``lg``
the latch geometry in PU (``LG_*``); ``ps`` the sensor sphere centres in PU; ``cap`` the
active inner circle in PU (``C_*``).
"""
from __future__ import annotations

import math

from numba import njit

from models._kernels import NJIT, NJIT_LEAF
from models.peripheral._kernels import implicit as pi
from models.peripheral._kernels import latch as pl
from models.peripheral._kernels import mechanism as km
from models.peripheral._kernels import trace as pt
from models._kernels.contact_force import contact_force, point_velocity
from models._kernels.contact_layout import (
    C_BX, C_BY, C_BZ, C_R, C_UX, C_UY, C_UZ, C_SIZE, CONTACT, GEOMETRY_RANGE, LAW_K, LAW_SIZE,
    NONE, PL_RMAX, TW_O, TW_SIZE,
    TW_V, TW_W)
from models._kernels.contact_revolution import sphere_vs_plane
from models._kernels.contact_segments import fan_vs_circle, segment_vs_circle, segment_vs_segment
from models.peripheral._kernels.layout import (EDGES_PER_PETAL, LA_AX, LA_NX, N_PETALS, SE_CX,
                                               SEG_NCOL)
from models.peripheral._kernels.run_layout import *  # noqa: F401,F403
from models.peripheral._kernels.run_layout import (P_DNMAX, P_EXHAUSTIVE, P_G1, P_G2, P_IM1, P_IM2,
                                                   P_L1, P_L2, P_LAW, P_MP, P_PRUNE, P_T_OFF,
                                                   P_T_ON, P_THRUST, PAIR_EDGE_ACTIVE_CIRCLE,
                                                   PAIR_EDGE_EDGE, PAIR_EDGE_PASSIVE_CIRCLE,
                                                   PAIR_FAN_ACTIVE, PAIR_FAN_PASSIVE,
                                                   PAIR_LATCH_LOCK, PAIR_NONE,
                                                   PAIR_POINT_ACTIVE_PLANE,
                                                   PAIR_POINT_PASSIVE_PLANE, ST_GEOMETRY, ST_OK,
                                                   ST_PENETRATION, Y_DQR, Y_ECDISS, Y_ECEL,
                                                   Y_EDAMP, Y_Q1, Y_Q2, Y_QR, Y_R1, Y_R2, Y_V1,
                                                   Y_V2, Y_W1, Y_W2, Y_WLATCH, Y_WTHR)
from models._kernels.rigid_body import quat_deriv, quat_to_dcm
from models._kernels.trace_layout import R_FAN_SEARCH_ACTIVE, R_FAN_SEARCH_PASSIVE, TX_MASK

__all__ = [
    "M_A1", "M_A2", "M_AAU", "M_APU", "M_APR", "M_APAU", "M_G1", "M_G2", "M_J1", "M_JI1",
    "M_J2", "M_JI2", "M_I", "NM",
    "SC_W1I", "SC_W2I", "SC_RAU", "SC_VAU", "SC_RPU", "SC_VPU", "SC_RC", "SC_VC", "SC_WRI",
    "SC_TWR", "SC_TWP", "SC_BW", "SC_F", "SC_FEXT", "SC_MEXT", "SC_OM", "SC_AL", "SC_AO",
    "SC_DDQ", "SC_ACC", "SC_FIF", "SC_MIF", "SC_NCONT", "SC_VOA", "SC_BV", "SC_HIMP", "SC_D6",
    "SC_IW", "SC_AIN", "SC_DW", "SC_X0", "NSC",
    "BV_EH_A", "BV_EH_P", "BV_EM_P", "BV_SPH_A", "BV_SPH_P", "BV_CA", "BV_PNEAR", "BV_SIZE",
    "PRUNE_EPS", "ring_bounds",
    "frames", "stage", "point_velocity", "moving_geometry",
]

# ---- DCMs M[k] -----------------------------------------------------------------------------
M_A1 = 0      # inertial -> body 1
M_A2 = 1      # inertial -> body 2
M_AAU = 2     # inertial -> AU
M_APU = 3     # inertial -> PU
M_APR = 4     # PU -> ring axes
M_APAU = 5    # PU -> AU
M_G1 = 6      # body 1 -> AU (from P)
M_G2 = 7      # body 2 -> PU
M_J1 = 8      # inertias and inverses, body axes
M_JI1 = 9
M_J2 = 10
M_JI2 = 11
M_I = 12      # identity (the frame of the passive tables, which are in PU already)
NM = 13

# ---- float scratch sc ----------------------------------------------------------------------
SC_W1I = 0      # inertial angular velocity of body 1, inertial axes (3)
SC_W2I = 3      # of body 2
SC_RAU = 6      # AU origin, inertial (3)
SC_VAU = 9      # its velocity (3)
SC_RPU = 12     # PU origin, inertial (3)
SC_VPU = 15     # its velocity (3)
SC_RC = 18      # ring centre, inertial (3)
SC_VC = 21      # its velocity (3)
SC_WRI = 24     # ring angular velocity, inertial axes (3)
SC_TWR = 27     # ring twist in PU axes (TW_SIZE): velocity of the ring centre, omega, centre
SC_TWP = SC_TWR + TW_SIZE   # passive twist in PU axes: velocity of the PU origin, omega, 0
SC_BW = SC_TWP + TW_SIZE    # base wrench of the legs on vehicle 1, AU axes (6)
SC_F = SC_BW + 6            # leg forces (6) [N]
SC_FEXT = SC_F + 6          # contact force on the ring, AU axes (3)
SC_MEXT = SC_FEXT + 3       # its moment about the ring centre, AU axes (3)
SC_OM = SC_MEXT + 3         # Omega of AU, AU axes (3)
SC_AL = SC_OM + 3           # alpha of AU, AU axes (3)
SC_AO = SC_AL + 3           # a_O of AU, AU axes (3)
SC_DDQ = SC_AO + 3          # ring q'' (6)
SC_ACC = SC_DDQ + 6         # contact accumulator (peripheral_latch A_*)
SC_FIF = SC_ACC + pl.A_SIZE     # interface force on the passive unit, PU (3)
SC_MIF = SC_FIF + 3             # interface moment about the PU origin, PU (3)
SC_NCONT = SC_MIF + 3           # number of ring-ring contacts of the last stage
SC_VOA = SC_NCONT + 1           # inertial velocity of the AU origin, AU axes (3)
SC_BV = SC_VOA + 3              # bounding volumes of the ring tables (BV_*, ring_bounds)

# ---- bounding volumes sc[SC_BV + BV_*] -----------------------------------------------------
# Constant over a run (filled once by ring_bounds) except BV_PNEAR (every stage). Edge e of
# petal k is row EDGES_PER_PETAL k + EDGE_* of the edge tables; petal k's fan is fan[k].
_NE = N_PETALS * EDGES_PER_PETAL
BV_EH_A = 0                     # half-length of each active edge (12) [m]
BV_EH_P = BV_EH_A + _NE         # of each passive edge (12) [m]
BV_EM_P = BV_EH_P + _NE         # midpoint of each passive edge, PU (12 x 3) [m]
BV_SPH_A = BV_EM_P + 3 * _NE    # sphere (centre 3, radius) holding petal k's fan and edges,
                                #   active petals in ring axes (3 x 4) [m]
BV_SPH_P = BV_SPH_A + 4 * N_PETALS   # passive petals in PU (3 x 4) [m]
BV_CA = BV_SPH_P + 4 * N_PETALS      # active petal spheres' centres in PU, this stage (3 x 3)
BV_PNEAR = BV_CA + 3 * N_PETALS      # 1.0 when active petal a and passive petal p may touch
                                     #   (index N_PETALS a + p), this stage (9)
BV_SIZE = BV_PNEAR + N_PETALS * N_PETALS
# ---- implicit contact damping (models.peripheral._kernels.implicit), after the bounding volumes
SC_HIMP = SC_BV + BV_SIZE       # gamma h of the step [s]; 0: the contacts are explicit
SC_D6 = SC_HIMP + 1             # the contacts' velocity Jacobian on the ring, PU (pi.ND)
SC_IW = SC_D6 + pi.ND           # solver work (pi.NW)
SC_AIN = SC_IW + pi.NW          # the ring's inertial accelerations, AU then PU axes (6)
SC_DW = SC_AIN + 6              # the ring's wrench correction, PU axes (6)
SC_X0 = SC_DW + 6               # ring minus passive accelerations, PU axes (6)
NSC = SC_X0 + 6

#: slack [m] added to every pruning bound: far above the rounding of the detectors' own
#: quantities (~1e-16 m on a 1 m ring), so a pair the bound skips is one they find apart
PRUNE_EPS = 1e-6


@njit(**NJIT_LEAF)
def _mm(A, B, C):
    for i in range(3):
        for j in range(3):
            C[i, j] = A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + A[i, 2] * B[2, j]


@njit(**NJIT_LEAF)
def _mmt(A, B, C):
    """``C = A B^T``."""
    for i in range(3):
        for j in range(3):
            C[i, j] = A[i, 0] * B[j, 0] + A[i, 1] * B[j, 1] + A[i, 2] * B[j, 2]


@njit(**NJIT_LEAF)
def _mv(A, v, o, out, oo):
    x = v[o]; y = v[o + 1]; z = v[o + 2]
    out[oo] = A[0, 0] * x + A[0, 1] * y + A[0, 2] * z
    out[oo + 1] = A[1, 0] * x + A[1, 1] * y + A[1, 2] * z
    out[oo + 2] = A[2, 0] * x + A[2, 1] * y + A[2, 2] * z


@njit(**NJIT_LEAF)
def _mtv(A, v, o, out, oo):
    x = v[o]; y = v[o + 1]; z = v[o + 2]
    out[oo] = A[0, 0] * x + A[1, 0] * y + A[2, 0] * z
    out[oo + 1] = A[0, 1] * x + A[1, 1] * y + A[2, 1] * z
    out[oo + 2] = A[0, 2] * x + A[1, 2] * y + A[2, 2] * z


@njit(**NJIT_LEAF)
def frames(y, P, M, sc, kw):
    """Frames, twists and leg kinematics of the state ``y`` into ``M``, ``sc``, ``kw``."""
    MP = P[P_MP:]
    quat_to_dcm(y, Y_Q1, M[M_A1])
    quat_to_dcm(y, Y_Q2, M[M_A2])
    _mm(M[M_G1], M[M_A1], M[M_AAU])
    _mm(M[M_G2], M[M_A2], M[M_APU])
    _mtv(M[M_A1], y, Y_W1, sc, SC_W1I)
    _mtv(M[M_A2], y, Y_W2, sc, SC_W2I)
    t = sc[SC_VOA:SC_VOA + 3]     # SC_VOA used as a temporary first
    for (ab, yr, yv, lo, wi, ro, vo) in ((M_A1, Y_R1, Y_V1, P_L1, SC_W1I, SC_RAU, SC_VAU),
                                         (M_A2, Y_R2, Y_V2, P_L2, SC_W2I, SC_RPU, SC_VPU)):
        _mtv(M[ab], P, lo, t, 0)
        lx = t[0]; ly = t[1]; lz = t[2]
        wx = sc[wi]; wy = sc[wi + 1]; wz = sc[wi + 2]
        sc[ro] = y[yr] + lx
        sc[ro + 1] = y[yr + 1] + ly
        sc[ro + 2] = y[yr + 2] + lz
        sc[vo] = y[yv] + wy * lz - wz * ly
        sc[vo + 1] = y[yv + 1] + wz * lx - wx * lz
        sc[vo + 2] = y[yv + 2] + wx * ly - wy * lx
    km.leg_kinematics(MP, y[Y_QR:Y_QR + 6], y[Y_DQR:Y_DQR + 6], kw)
    # ring centre, velocity and angular velocity, inertial
    A = M[M_AAU]
    qx = y[Y_QR]; qy = y[Y_QR + 1]; qz = y[Y_QR + 2]
    rx = A[0, 0] * qx + A[1, 0] * qy + A[2, 0] * qz
    ry = A[0, 1] * qx + A[1, 1] * qy + A[2, 1] * qz
    rz = A[0, 2] * qx + A[1, 2] * qy + A[2, 2] * qz
    dx = y[Y_DQR]; dy = y[Y_DQR + 1]; dz = y[Y_DQR + 2]
    wx = sc[SC_W1I]; wy = sc[SC_W1I + 1]; wz = sc[SC_W1I + 2]
    sc[SC_RC] = sc[SC_RAU] + rx
    sc[SC_RC + 1] = sc[SC_RAU + 1] + ry
    sc[SC_RC + 2] = sc[SC_RAU + 2] + rz
    sc[SC_VC] = sc[SC_VAU] + wy * rz - wz * ry + A[0, 0] * dx + A[1, 0] * dy + A[2, 0] * dz
    sc[SC_VC + 1] = sc[SC_VAU + 1] + wz * rx - wx * rz + A[0, 1] * dx + A[1, 1] * dy \
        + A[2, 1] * dz
    sc[SC_VC + 2] = sc[SC_VAU + 2] + wx * ry - wy * rx + A[0, 2] * dx + A[1, 2] * dy \
        + A[2, 2] * dz
    _mtv(A, kw, km.KW_OMEGA, sc, SC_WRI)
    for k in range(3):
        sc[SC_WRI + k] += sc[SC_W1I + k]
    # twists in PU axes
    B = M[M_APU]
    for k in range(3):
        t[k] = sc[SC_RC + k] - sc[SC_RPU + k]
    _mv(B, t, 0, sc, SC_TWR + TW_O)
    _mv(B, sc, SC_VC, sc, SC_TWR + TW_V)
    _mv(B, sc, SC_WRI, sc, SC_TWR + TW_W)
    _mv(B, sc, SC_VPU, sc, SC_TWP + TW_V)
    _mv(B, sc, SC_W2I, sc, SC_TWP + TW_W)
    for k in range(3):
        sc[SC_TWP + TW_O + k] = 0.0
    _mv(M[M_AAU], sc, SC_VAU, sc, SC_VOA)
    # PU -> AU and PU -> ring
    _mmt(M[M_AAU], M[M_APU], M[M_APAU])
    AR = kw[km.KW_A:km.KW_A + 9].reshape((3, 3))
    _mm(AR, M[M_APAU], M[M_APR])


@njit(**NJIT_LEAF)
def _apply(dn, nx, ny, nz, px, py, pz, P, sc):
    """Contact law (digest 5) of one ring-ring contact; forces and powers into the
    accumulator (passive ``+f`` at ``p``, ring ``-f`` at ``p``)."""
    vax, vay, vaz = point_velocity(sc, SC_TWR, px, py, pz)
    vpx, vpy, vpz = point_velocity(sc, SC_TWP, px, py, pz)
    rvx = vax - vpx; rvy = vay - vpy; rvz = vaz - vpz
    law = P[P_LAW:P_LAW + LAW_SIZE]
    fn, dd, fx, fy, fz = contact_force(dn, nx, ny, nz, rvx, rvy, rvz, law)
    a = SC_ACC
    rax = px - sc[SC_TWR + TW_O]; ray = py - sc[SC_TWR + TW_O + 1]; raz = pz - sc[SC_TWR + TW_O + 2]
    sc[a + pl.A_FP] += fx
    sc[a + pl.A_FP + 1] += fy
    sc[a + pl.A_FP + 2] += fz
    sc[a + pl.A_FR] -= fx
    sc[a + pl.A_FR + 1] -= fy
    sc[a + pl.A_FR + 2] -= fz
    sc[a + pl.A_MP] += py * fz - pz * fy
    sc[a + pl.A_MP + 1] += pz * fx - px * fz
    sc[a + pl.A_MP + 2] += px * fy - py * fx
    sc[a + pl.A_MR] -= ray * fz - raz * fy
    sc[a + pl.A_MR + 1] -= raz * fx - rax * fz
    sc[a + pl.A_MR + 2] -= rax * fy - ray * fx
    pel = law[LAW_K] * dn * dd
    sc[a + pl.A_PEL] += pel
    sc[a + pl.A_PDISS] += fx * rvx + fy * rvy + fz * rvz - pel
    if sc[SC_HIMP] != 0.0:
        pi.add_contact(sc[SC_D6:SC_D6 + pi.ND], law, fn, dd, dn, nx, ny, nz, rvx, rvy, rvz,
                       rax, ray, raz)


@njit(**NJIT_LEAF)
def _outside_face(res, circ, r_face):
    """Reading: a segment crossing the circle's plane beyond the ring face's outer radius
    passes outside the mating ring (a miss), whatever its lateral "penetration"."""
    dx = res[5] - circ[C_BX]
    dy = res[6] - circ[C_BX + 1]
    dz = res[7] - circ[C_BX + 2]
    return dx * dx + dy * dy + dz * dz > r_face * r_face


@njit(**NJIT_LEAF)
def _bad(st):
    """Status of the unit from a contact status."""
    return ST_GEOMETRY if st == GEOMETRY_RANGE else ST_PENETRATION


@njit(**NJIT_LEAF)
def _petal_sphere(fan, edges, k, out, o):
    """Sphere holding every generator and side-face edge (both end points) of petal ``k``:
    centre of their bounding box and the largest distance from it, into ``out[o:o + 4]``."""
    lo0 = 1e300; lo1 = 1e300; lo2 = 1e300
    hi0 = -1e300; hi1 = -1e300; hi2 = -1e300
    e0 = EDGES_PER_PETAL * k
    for pass_ in range(2):
        r2 = 0.0
        for i in range(fan.shape[0] + EDGES_PER_PETAL):
            for end in range(2):
                if i < fan.shape[0]:
                    x = fan[i, 0] + end * fan[i, 3]
                    y = fan[i, 1] + end * fan[i, 4]
                    z = fan[i, 2] + end * fan[i, 5]
                else:
                    row = e0 + i - fan.shape[0]
                    x = edges[row, 0] + end * edges[row, 3]
                    y = edges[row, 1] + end * edges[row, 4]
                    z = edges[row, 2] + end * edges[row, 5]
                if pass_ == 0:
                    lo0 = min(lo0, x); lo1 = min(lo1, y); lo2 = min(lo2, z)
                    hi0 = max(hi0, x); hi1 = max(hi1, y); hi2 = max(hi2, z)
                else:
                    d2 = (x - out[o]) ** 2 + (y - out[o + 1]) ** 2 + (z - out[o + 2]) ** 2
                    r2 = max(r2, d2)
        if pass_ == 0:
            out[o] = 0.5 * (lo0 + hi0)
            out[o + 1] = 0.5 * (lo1 + hi1)
            out[o + 2] = 0.5 * (lo2 + hi2)
        else:
            out[o + 3] = math.sqrt(r2)


@njit(**NJIT_LEAF)
def ring_bounds(fa, fp, eaa, ep, sc):
    """Fill the run-constant bounding volumes ``sc[SC_BV + BV_*]`` from the ring tables (the
    active ones in ring axes, the passive ones in PU): each edge's half-length, each passive
    edge's midpoint, and each petal's sphere (fan generators and edges). :func:`stage` with
    ``P[P_PRUNE] = 1`` needs them; the time loop calls this once."""
    b = SC_BV
    for i in range(eaa.shape[0]):
        sc[b + BV_EH_A + i] = 0.5 * math.sqrt(eaa[i, 3] ** 2 + eaa[i, 4] ** 2 + eaa[i, 5] ** 2)
    for j in range(ep.shape[0]):
        sc[b + BV_EH_P + j] = 0.5 * math.sqrt(ep[j, 3] ** 2 + ep[j, 4] ** 2 + ep[j, 5] ** 2)
        for k in range(3):
            sc[b + BV_EM_P + 3 * j + k] = ep[j, k] + 0.5 * ep[j, 3 + k]
    for k in range(fa.shape[0]):
        _petal_sphere(fa[k], eaa, k, sc, b + BV_SPH_A + 4 * k)
    for k in range(fp.shape[0]):
        _petal_sphere(fp[k], ep, k, sc, b + BV_SPH_P + 4 * k)
    for k in range(N_PETALS * N_PETALS):
        sc[b + BV_PNEAR + k] = 1.0


@njit(**NJIT_LEAF)
def _apart_from_circle(mx, my, mz, rad, circ):
    """True when no point of the ball (centre ``m`` [m], radius ``rad`` [m]) lies in the plane
    of the circle ``circ`` (``C_*``) outside its radius: then no segment inside the ball can
    cross that plane outside the circle, the only way :func:`segment_vs_circle_xyz` (and so
    :func:`fan_vs_circle`) returns anything but NONE. The ball misses the plane
    (``|(m - B).u| > rad``) or its trace lies inside the circle (``rho_m + rad < R_C``, with
    ``rho_m`` the distance of ``m``'s projection from the axis)."""
    dx = mx - circ[C_BX]; dy = my - circ[C_BY]; dz = mz - circ[C_BZ]
    ax = dx * circ[C_UX] + dy * circ[C_UY] + dz * circ[C_UZ]
    if abs(ax) > rad + PRUNE_EPS:
        return True
    rho2 = dx * dx + dy * dy + dz * dz - ax * ax
    lim = circ[C_R] - rad - PRUNE_EPS
    return lim > 0.0 and rho2 < lim * lim


@njit(**NJIT_LEAF)
def _ring_contacts(P, M, sc, fa, fp, eaa, ep, pa, pp, ca, cp, plane, ea, cap, tr, trn, tcx):
    """Every ring-ring primitive pair (module docstring of
    :mod:`models.peripheral._kernels.kernel`). Returns ``(status, pair, index, n_contacts)``.

    With ``P[P_PRUNE]`` set, a pair is skipped when bounding spheres prove that its detector
    would return NONE (or a result this function discards): fans and edges against a circle
    by :func:`_apart_from_circle` (petal sphere, or the edge's midpoint sphere), edge pairs by
    their petals' spheres and then their own midpoint spheres (an edge-edge contact needs
    points of the two segments within ``dn_max``). The pairs tested keep their order, so the
    forces are summed in the same order and the result is bit-identical.

    With tracing on (``tcx[TX_MASK] != 0``) every pair the detector reports (contact or
    failure) is written to ``tr`` (:mod:`models.peripheral._kernels.trace`)."""
    law = P[P_LAW:P_LAW + LAW_SIZE]
    tw = sc[SC_TWR:SC_TWP + TW_SIZE]
    dn_max = P[P_DNMAX]
    prune = P[P_PRUNE] != 0.0
    exh = P[P_EXHAUSTIVE] != 0.0
    r_face = plane[PL_RMAX]
    R = M[M_APR]
    cx = sc[SC_TWR + TW_O]; cy = sc[SC_TWR + TW_O + 1]; cz = sc[SC_TWR + TW_O + 2]
    r = sc[SC_TWR + TW_O:SC_TWR + TW_O + 3]
    n = 0
    # active edges and the active inner circle in PU
    for i in range(eaa.shape[0]):
        _mtv(R, eaa[i], 0, ea[i], 0)
        ea[i, 0] += cx; ea[i, 1] += cy; ea[i, 2] += cz
        _mtv(R, eaa[i], 3, ea[i], 3)
    _mtv(R, ca, C_BX, cap, C_BX)
    cap[C_BX] += cx; cap[C_BX + 1] += cy; cap[C_BX + 2] += cz
    _mtv(R, ca, C_UX, cap, C_UX)
    for k in range(C_UX + 3, C_SIZE):
        cap[k] = ca[k]
    b = SC_BV
    if prune:
        # active petal spheres into PU; the petal pairs whose spheres are within dn_max
        for a in range(N_PETALS):
            o = b + BV_SPH_A + 4 * a
            _mtv(R, sc, o, sc, b + BV_CA + 3 * a)
            qx = sc[b + BV_CA + 3 * a] + cx
            qy = sc[b + BV_CA + 3 * a + 1] + cy
            qz = sc[b + BV_CA + 3 * a + 2] + cz
            sc[b + BV_CA + 3 * a] = qx
            sc[b + BV_CA + 3 * a + 1] = qy
            sc[b + BV_CA + 3 * a + 2] = qz
            for p_ in range(N_PETALS):
                o2 = b + BV_SPH_P + 4 * p_
                lim = sc[o + 3] + sc[o2 + 3] + dn_max + PRUNE_EPS
                d2 = (qx - sc[o2]) ** 2 + (qy - sc[o2 + 1]) ** 2 + (qz - sc[o2 + 2]) ** 2
                sc[b + BV_PNEAR + N_PETALS * a + p_] = 1.0 if d2 <= lim * lim else 0.0
    for k in range(fa.shape[0]):
        if prune and _apart_from_circle(sc[b + BV_CA + 3 * k], sc[b + BV_CA + 3 * k + 1],
                                        sc[b + BV_CA + 3 * k + 2],
                                        sc[b + BV_SPH_A + 4 * k + 3], cp):
            continue
        res = fan_vs_circle(fa[k], r, R, cp, dn_max, exh)
        if tcx[TX_MASK] != 0.0:
            pt.fan_search_row(tr, trn, tcx, R_FAN_SEARCH_ACTIVE, k, res, r, R, cp)
        if res[0] != NONE and not _outside_face(res, cp, r_face):
            if tcx[TX_MASK] != 0.0:
                pt.fan_row(tr, trn, tcx, law, tw, PAIR_FAN_ACTIVE, k, res, r, R, cp)
            if res[0] != CONTACT:
                return _bad(res[0]), PAIR_FAN_ACTIVE, k, n
            _apply(res[1], res[2], res[3], res[4], res[5], res[6], res[7], P, sc)
            n += 1
    # passive fans live in PU: identity frame at the origin
    for k in range(fp.shape[0]):
        o = b + BV_SPH_P + 4 * k
        if prune and _apart_from_circle(sc[o], sc[o + 1], sc[o + 2], sc[o + 3], cap):
            continue
        res = fan_vs_circle(fp[k], sc[SC_TWP + TW_O:SC_TWP + TW_O + 3], M[M_I], cap,
                            dn_max, exh)
        if tcx[TX_MASK] != 0.0:
            pt.fan_search_row(tr, trn, tcx, R_FAN_SEARCH_PASSIVE, k, res,
                              sc[SC_TWP + TW_O:SC_TWP + TW_O + 3], M[M_I], cap)
        if res[0] != NONE and not _outside_face(res, cap, r_face):
            if tcx[TX_MASK] != 0.0:
                pt.fan_row(tr, trn, tcx, law, tw, PAIR_FAN_PASSIVE, k, res,
                           sc[SC_TWP + TW_O:SC_TWP + TW_O + 3], M[M_I], cap)
            if res[0] != CONTACT:
                return _bad(res[0]), PAIR_FAN_PASSIVE, k, n
            _apply(res[1], res[2], res[3], res[4], res[5], res[6], res[7], P, sc)
            n += 1
    for i in range(ea.shape[0]):
        # midpoint sphere of active edge i
        mx = ea[i, 0] + 0.5 * ea[i, 3]; my = ea[i, 1] + 0.5 * ea[i, 4]
        mz = ea[i, 2] + 0.5 * ea[i, 5]
        hi = sc[b + BV_EH_A + i] + dn_max + PRUNE_EPS
        pa_ = N_PETALS * (i // EDGES_PER_PETAL)
        for j in range(ep.shape[0]):
            if prune:
                if sc[b + BV_PNEAR + pa_ + j // EDGES_PER_PETAL] == 0.0:
                    continue
                o = b + BV_EM_P + 3 * j
                lim = hi + sc[b + BV_EH_P + j]
                if (mx - sc[o]) ** 2 + (my - sc[o + 1]) ** 2 + (mz - sc[o + 2]) ** 2 > lim * lim:
                    continue
            res = segment_vs_segment(ea[i, 0], ea[i, 1], ea[i, 2], ea[i, 3], ea[i, 4], ea[i, 5],
                                     ep[j, 0], ep[j, 1], ep[j, 2], ep[j, 3], ep[j, 4], ep[j, 5],
                                     dn_max)
            # reading: a common perpendicular longer than the admissible penetration is two
            # edges side by side (interleaved petals), not a crossing: no contact.
            # Reading: the force acts at the midpoint of the common perpendicular, not at the
            # passive foot C_P (digest 7.7): the only point that does not depend on which
            # ring is called active, so swapping the rings mirrors the friction too
            # (tests/models/test_peripheral_androgyny.py); the normal force and its work
            # are the same at either point
            if res[0] == CONTACT:
                hd = 0.5 * res[1]
                kx = res[5] + hd * res[2]
                ky = res[6] + hd * res[3]
                kz = res[7] + hd * res[4]
                if tcx[TX_MASK] != 0.0:
                    pt.seg_seg_row(tr, trn, tcx, law, tw, i, j,
                                   (res[0], res[1], res[2], res[3], res[4], kx, ky, kz), ea, ep)
                _apply(res[1], res[2], res[3], res[4], kx, ky, kz, P, sc)
                n += 1
        if prune and _apart_from_circle(mx, my, mz, sc[b + BV_EH_A + i], cp):
            continue
        res = segment_vs_circle(ea[i, 0], ea[i, 1], ea[i, 2], ea[i, 3], ea[i, 4], ea[i, 5], cp,
                                dn_max)
        if res[0] != NONE and not _outside_face(res, cp, r_face):
            if tcx[TX_MASK] != 0.0:
                pt.seg_circle_row(tr, trn, tcx, law, tw, PAIR_EDGE_PASSIVE_CIRCLE, i, res, ea[i],
                                  cp)
            if res[0] != CONTACT:
                return _bad(res[0]), PAIR_EDGE_PASSIVE_CIRCLE, i, n
            _apply(res[1], res[2], res[3], res[4], res[5], res[6], res[7], P, sc)
            n += 1
    for j in range(ep.shape[0]):
        o = b + BV_EM_P + 3 * j
        if prune and _apart_from_circle(sc[o], sc[o + 1], sc[o + 2], sc[b + BV_EH_P + j], cap):
            continue
        res = segment_vs_circle(ep[j, 0], ep[j, 1], ep[j, 2], ep[j, 3], ep[j, 4], ep[j, 5], cap,
                                dn_max)
        if res[0] != NONE and not _outside_face(res, cap, r_face):
            if tcx[TX_MASK] != 0.0:
                pt.seg_circle_row(tr, trn, tcx, law, tw, PAIR_EDGE_ACTIVE_CIRCLE, j, res, ep[j],
                                  cap)
            if res[0] != CONTACT:
                return _bad(res[0]), PAIR_EDGE_ACTIVE_CIRCLE, j, n
            _apply(res[1], res[2], res[3], res[4], res[5], res[6], res[7], P, sc)
            n += 1
    # ring-plane points: active B points vs the passive plane (PU), passive B points vs the
    # active ring plane (in ring axes: x = 0, material at x < 0)
    for i in range(pa.shape[0]):
        x = pa[i, 0]; y_ = pa[i, 1]; z = pa[i, 2]
        px = cx + R[0, 0] * x + R[1, 0] * y_ + R[2, 0] * z
        py = cy + R[0, 1] * x + R[1, 1] * y_ + R[2, 1] * z
        pz = cz + R[0, 2] * x + R[1, 2] * y_ + R[2, 2] * z
        res = sphere_vs_plane(px, py, pz, 0.0, plane, dn_max)
        if res[0] != NONE:
            if tcx[TX_MASK] != 0.0:
                pt.point_row(tr, trn, tcx, law, tw, PAIR_POINT_PASSIVE_PLANE, i, res[0], res[1],
                             res[2], res[3], res[4], res[5], res[6], res[7], px, py, pz)
            if res[0] != CONTACT:
                return _bad(res[0]), PAIR_POINT_PASSIVE_PLANE, i, n
            _apply(res[1], res[2], res[3], res[4], res[5], res[6], res[7], P, sc)
            n += 1
    for i in range(pp.shape[0]):
        qx = pp[i, 0] - cx; qy = pp[i, 1] - cy; qz = pp[i, 2] - cz
        x = R[0, 0] * qx + R[0, 1] * qy + R[0, 2] * qz
        y_ = R[1, 0] * qx + R[1, 1] * qy + R[1, 2] * qz
        z = R[2, 0] * qx + R[2, 1] * qy + R[2, 2] * qz
        res = sphere_vs_plane(-x, y_, z, 0.0, plane, dn_max)
        if res[0] != NONE:
            if tcx[TX_MASK] != 0.0:
                pt.point_row(tr, trn, tcx, law, tw, PAIR_POINT_ACTIVE_PLANE, i, res[0], res[1],
                             R[0, 0], R[0, 1], R[0, 2], pp[i, 0], pp[i, 1], pp[i, 2], x, y_, z)
            if res[0] != CONTACT:
                return _bad(res[0]), PAIR_POINT_ACTIVE_PLANE, i, n
            # normal +X_R: pushes the passive point out of the active ring face
            _apply(res[1], R[0, 0], R[0, 1], R[0, 2], pp[i, 0], pp[i, 1], pp[i, 2], P, sc)
            n += 1
    return ST_OK, PAIR_NONE, -1, n


@njit(**NJIT_LEAF)
def moving_geometry(M, sc, latg, seng, lg, ps):
    """Latch base points and directions (``lg``, ``LG_*``) and sensor sphere centres (``ps``)
    in PU from their ring-axes tables (``LA_*``, ``SE_*`` of the geometry)."""
    R = M[M_APR]
    o = SC_TWR + TW_O
    for i in range(latg.shape[0]):
        _mtv(R, latg[i], LA_AX, lg[i], pl.LG_A)
        _mtv(R, latg[i], LA_NX, lg[i], pl.LG_N)
        for k in range(3):
            lg[i, pl.LG_A + k] += sc[o + k]
    for i in range(seng.shape[0]):
        _mtv(R, seng[i], SE_CX, ps[i], 0)
        for k in range(3):
            ps[i, k] += sc[o + k]


@njit(**NJIT_LEAF)
def _passive(y, P, M, acc, dy):
    """The passive vehicle's state derivative (position, velocity, quaternion, body rates)
    from the force and moment about the PU origin in ``acc`` (``A_FP``, ``A_MP``, PU axes)."""
    G2 = M[M_G2]
    A2 = M[M_A2]
    fpx = G2[0, 0] * acc[pl.A_FP] + G2[1, 0] * acc[pl.A_FP + 1] + G2[2, 0] * acc[pl.A_FP + 2]
    fpy = G2[0, 1] * acc[pl.A_FP] + G2[1, 1] * acc[pl.A_FP + 1] + G2[2, 1] * acc[pl.A_FP + 2]
    fpz = G2[0, 2] * acc[pl.A_FP] + G2[1, 2] * acc[pl.A_FP + 1] + G2[2, 2] * acc[pl.A_FP + 2]
    mpx = G2[0, 0] * acc[pl.A_MP] + G2[1, 0] * acc[pl.A_MP + 1] + G2[2, 0] * acc[pl.A_MP + 2]
    mpy = G2[0, 1] * acc[pl.A_MP] + G2[1, 1] * acc[pl.A_MP + 1] + G2[2, 1] * acc[pl.A_MP + 2]
    mpz = G2[0, 2] * acc[pl.A_MP] + G2[1, 2] * acc[pl.A_MP + 1] + G2[2, 2] * acc[pl.A_MP + 2]
    lx = P[P_L2]; ly = P[P_L2 + 1]; lz = P[P_L2 + 2]
    mpx += ly * fpz - lz * fpy
    mpy += lz * fpx - lx * fpz
    mpz += lx * fpy - ly * fpx
    im2 = P[P_IM2]
    for k in range(3):
        dy[Y_R2 + k] = y[Y_V2 + k]
        dy[Y_V2 + k] = (A2[0, k] * fpx + A2[1, k] * fpy + A2[2, k] * fpz) * im2
    w = y[Y_W2:Y_W2 + 3]
    J = M[M_J2]
    hx = J[0, 0] * w[0] + J[0, 1] * w[1] + J[0, 2] * w[2]
    hy = J[1, 0] * w[0] + J[1, 1] * w[1] + J[1, 2] * w[2]
    hz = J[2, 0] * w[0] + J[2, 1] * w[1] + J[2, 2] * w[2]
    tx = mpx - (w[1] * hz - w[2] * hy)
    ty = mpy - (w[2] * hx - w[0] * hz)
    tz = mpz - (w[0] * hy - w[1] * hx)
    Ji = M[M_JI2]
    dy[Y_W2] = Ji[0, 0] * tx + Ji[0, 1] * ty + Ji[0, 2] * tz
    dy[Y_W2 + 1] = Ji[1, 0] * tx + Ji[1, 1] * ty + Ji[1, 2] * tz
    dy[Y_W2 + 2] = Ji[2, 0] * tx + Ji[2, 1] * ty + Ji[2, 2] * tz
    quat_deriv(y, Y_Q2, w, dy, Y_Q2)


@njit(**NJIT_LEAF)
def _implicit_ring(P, M, sc, acc, dy):
    """The ring's wrench correction of :mod:`models.peripheral._kernels.implicit` with
    ``h_g = sc[SC_HIMP]``, from the explicit accelerations of this stage (the ring's in
    ``sc[SC_AIN]``, AU axes; the passive vehicle's in ``dy``), applied to the ring and, opposite,
    to the passive unit in ``acc``, with its power booked as contact dissipation."""
    MP = P[P_MP:]
    x0 = sc[SC_X0:SC_X0 + 6]
    B = M[M_APAU]
    _mtv(B, sc, SC_AIN, x0, 0)
    _mtv(B, sc, SC_AIN + 3, x0, 3)
    # the passive unit's point at the ring centre, PU axes: a_2 + alpha x r + w x (w x r)
    G2 = M[M_G2]
    alx = G2[0, 0] * dy[Y_W2] + G2[0, 1] * dy[Y_W2 + 1] + G2[0, 2] * dy[Y_W2 + 2]
    aly = G2[1, 0] * dy[Y_W2] + G2[1, 1] * dy[Y_W2 + 1] + G2[1, 2] * dy[Y_W2 + 2]
    alz = G2[2, 0] * dy[Y_W2] + G2[2, 1] * dy[Y_W2 + 1] + G2[2, 2] * dy[Y_W2 + 2]
    A = M[M_APU]
    cx = sc[SC_TWR + TW_O]; cy = sc[SC_TWR + TW_O + 1]; cz = sc[SC_TWR + TW_O + 2]
    lx = P[P_L2]; ly = P[P_L2 + 1]; lz = P[P_L2 + 2]
    rx = cx + G2[0, 0] * lx + G2[0, 1] * ly + G2[0, 2] * lz
    ry = cy + G2[1, 0] * lx + G2[1, 1] * ly + G2[1, 2] * lz
    rz = cz + G2[2, 0] * lx + G2[2, 1] * ly + G2[2, 2] * lz
    wx = sc[SC_TWP + TW_W]; wy = sc[SC_TWP + TW_W + 1]; wz = sc[SC_TWP + TW_W + 2]
    ux = wy * rz - wz * ry; uy = wz * rx - wx * rz; uz = wx * ry - wy * rx
    for k in range(3):
        x0[k] -= A[k, 0] * dy[Y_V2] + A[k, 1] * dy[Y_V2 + 1] + A[k, 2] * dy[Y_V2 + 2]
    x0[0] -= aly * rz - alz * ry + wy * uz - wz * uy
    x0[1] -= alz * rx - alx * rz + wz * ux - wx * uz
    x0[2] -= alx * ry - aly * rx + wx * uy - wy * ux
    x0[3] -= alx; x0[4] -= aly; x0[5] -= alz
    dw = sc[SC_DW:SC_DW + 6]
    pi.ring_correction(sc[SC_D6:SC_D6 + pi.ND], sc[SC_HIMP], MP[km.MP_MASS],
                       MP[km.MP_J:km.MP_J + 9], M[M_APR], x0, sc[SC_IW:SC_IW + pi.NW], dw)
    fx = dw[0]; fy = dw[1]; fz = dw[2]
    # relative velocity of the ring centre and angular velocity (ring - passive), PU axes
    vx = sc[SC_TWR + TW_V] - (sc[SC_TWP + TW_V] + wy * cz - wz * cy)
    vy = sc[SC_TWR + TW_V + 1] - (sc[SC_TWP + TW_V + 1] + wz * cx - wx * cz)
    vz = sc[SC_TWR + TW_V + 2] - (sc[SC_TWP + TW_V + 2] + wx * cy - wy * cx)
    for k in range(3):
        acc[pl.A_FR + k] += dw[k]
        acc[pl.A_MR + k] += dw[3 + k]
        acc[pl.A_FP + k] -= dw[k]
        acc[pl.A_MP + k] -= dw[3 + k]
        acc[pl.A_PDISS] -= dw[3 + k] * (sc[SC_TWR + TW_W + k] - sc[SC_TWP + TW_W + k])
    acc[pl.A_MP] -= cy * fz - cz * fy
    acc[pl.A_MP + 1] -= cz * fx - cx * fz
    acc[pl.A_MP + 2] -= cx * fy - cy * fx
    acc[pl.A_PDISS] -= fx * vx + fy * vy + fz * vz


@njit(**NJIT_LEAF)
def stage(t, y, P, M, sc, kw, LS, table, toff, hist_i, hist_f, fa, fp, eaa, ep, pa, pp, ca,
          cp, plane, ea, cap, latg, lat, stp, ls, trig, hf, seng, sen, sw, so, lg, ps, dy, tr,
          trn, tcx):
    """State derivative ``dy`` of ``y`` at time ``t`` [s] (one RK4 stage). ``M``, ``sc`` and
    ``kw`` must hold :func:`frames` of ``y`` (the time loop calls it, once for the state at a
    step's start, which the between-steps updates use too).

    Returns ``(status, pair, index)``: ``ST_OK`` or the failure with the primitive pair
    (``PAIR_*``) and its index. The held latch forces ``hf`` (from the last
    :func:`~models.peripheral._kernels.latch.latches_between`) act at their held points.
    ``tr``, ``trn``, ``tcx``: the trace buffer, its counters and the stage's trace context
    (:mod:`models._kernels.trace_layout`; ``tcx[TX_MASK] = 0``: nothing is recorded)."""
    MP = P[P_MP:]
    F = sc[SC_F:SC_F + 6]
    p_damp = km.leg_forces(MP, kw, LS, table, toff, hist_i, hist_f, F)
    if tcx[TX_MASK] != 0.0:
        pt.legs_row(tr, trn, tcx, MP, kw, LS, table, toff, hist_i, hist_f, F)
    bw = sc[SC_BW:SC_BW + 6]
    km.base_wrench(MP, kw, F, bw)
    # ---- active vehicle: base reaction and thrust
    G1 = M[M_G1]
    A1 = M[M_A1]
    # force in body axes: G1^T f_AU (+ thrust)
    fbx = G1[0, 0] * bw[0] + G1[1, 0] * bw[1] + G1[2, 0] * bw[2]
    fby = G1[0, 1] * bw[0] + G1[1, 1] * bw[1] + G1[2, 1] * bw[2]
    fbz = G1[0, 2] * bw[0] + G1[1, 2] * bw[1] + G1[2, 2] * bw[2]
    mbx = G1[0, 0] * bw[3] + G1[1, 0] * bw[4] + G1[2, 0] * bw[5]
    mby = G1[0, 1] * bw[3] + G1[1, 1] * bw[4] + G1[2, 1] * bw[5]
    mbz = G1[0, 2] * bw[3] + G1[1, 2] * bw[4] + G1[2, 2] * bw[5]
    lx = P[P_L1]; ly = P[P_L1 + 1]; lz = P[P_L1 + 2]
    mbx += ly * fbz - lz * fby
    mby += lz * fbx - lx * fbz
    mbz += lx * fby - ly * fbx
    thr = t >= P[P_T_ON] and t < P[P_T_OFF]
    if thr:
        fbx += P[P_THRUST]; fby += P[P_THRUST + 1]; fbz += P[P_THRUST + 2]
    im1 = P[P_IM1]
    # inertial acceleration of the centre of mass
    for k in range(3):
        dy[Y_R1 + k] = y[Y_V1 + k]
        dy[Y_V1 + k] = (A1[0, k] * fbx + A1[1, k] * fby + A1[2, k] * fbz) * im1
    w = y[Y_W1:Y_W1 + 3]
    J = M[M_J1]
    hx = J[0, 0] * w[0] + J[0, 1] * w[1] + J[0, 2] * w[2]
    hy = J[1, 0] * w[0] + J[1, 1] * w[1] + J[1, 2] * w[2]
    hz = J[2, 0] * w[0] + J[2, 1] * w[1] + J[2, 2] * w[2]
    tx = mbx - (w[1] * hz - w[2] * hy)
    ty = mby - (w[2] * hx - w[0] * hz)
    tz = mbz - (w[0] * hy - w[1] * hx)
    Ji = M[M_JI1]
    d0 = Ji[0, 0] * tx + Ji[0, 1] * ty + Ji[0, 2] * tz
    d1 = Ji[1, 0] * tx + Ji[1, 1] * ty + Ji[1, 2] * tz
    d2 = Ji[2, 0] * tx + Ji[2, 1] * ty + Ji[2, 2] * tz
    dy[Y_W1] = d0; dy[Y_W1 + 1] = d1; dy[Y_W1 + 2] = d2
    quat_deriv(y, Y_Q1, w, dy, Y_Q1)
    # AU frame: Omega, alpha, a_O in AU axes (AU is fixed in body 1)
    _mv(G1, y, Y_W1, sc, SC_OM)
    _mv(G1, dy, Y_W1, sc, SC_AL)
    # body-axes acceleration of the AU origin: A1 a_cm + dw x l + w x (w x l)
    ax = fbx * im1 + d1 * lz - d2 * ly
    ay = fby * im1 + d2 * lx - d0 * lz
    az = fbz * im1 + d0 * ly - d1 * lx
    cx = w[1] * lz - w[2] * ly
    cy = w[2] * lx - w[0] * lz
    cz = w[0] * ly - w[1] * lx
    ax += w[1] * cz - w[2] * cy
    ay += w[2] * cx - w[0] * cz
    az += w[0] * cy - w[1] * cx
    sc[SC_AO] = G1[0, 0] * ax + G1[0, 1] * ay + G1[0, 2] * az
    sc[SC_AO + 1] = G1[1, 0] * ax + G1[1, 1] * ay + G1[1, 2] * az
    sc[SC_AO + 2] = G1[2, 0] * ax + G1[2, 1] * ay + G1[2, 2] * az
    # ---- contacts, latches, sensors (PU)
    for k in range(pl.A_SIZE):
        sc[SC_ACC + k] = 0.0
    if sc[SC_HIMP] != 0.0:
        for k in range(pi.ND):
            sc[SC_D6 + k] = 0.0
    st, pair, idx, n = _ring_contacts(P, M, sc, fa, fp, eaa, ep, pa, pp, ca, cp, plane, ea, cap,
                                      tr, trn, tcx)
    sc[SC_NCONT] = n
    if st != ST_OK:
        return st, pair, idx
    moving_geometry(M, sc, latg, seng, lg, ps)
    acc = sc[SC_ACC:SC_ACC + pl.A_SIZE]
    if tcx[TX_MASK] != 0.0:
        pt.save_acc(tcx, acc)
    lst, li = pl.latches_stage(lg, lat, stp, ls, trig, sc[SC_TWR:SC_TWR + TW_SIZE],
                               sc[SC_TWP:SC_TWP + TW_SIZE], acc)
    if tcx[TX_MASK] != 0.0:
        pt.latches_stage_row(tr, trn, tcx, lg, lat, stp, ls, trig, acc, lst, li)
    if lst != NONE:
        return _bad(lst), PAIR_LATCH_LOCK, li
    pl.sensors_force(ps, sen, plane, sw, so, acc, sc[SC_TWR + TW_O:SC_TWR + TW_O + 3],
                     sc[SC_TWP + TW_O:SC_TWP + TW_O + 3])
    if tcx[TX_MASK] != 0.0:
        pt.sensors_row(tr, trn, tcx, so, sw)
    # held latch forces (on the ring; the passive unit gets the opposite) and their power
    cx = sc[SC_TWR + TW_O]; cy = sc[SC_TWR + TW_O + 1]; cz = sc[SC_TWR + TW_O + 2]
    p_latch = 0.0
    for i in range(hf.shape[0]):
        fx = hf[i, pl.HF_F]; fy = hf[i, pl.HF_F + 1]; fz = hf[i, pl.HF_F + 2]
        if fx == 0.0 and fy == 0.0 and fz == 0.0:
            continue
        px = hf[i, pl.HF_P]; py = hf[i, pl.HF_P + 1]; pz = hf[i, pl.HF_P + 2]
        rx = px - cx; ry = py - cy; rz = pz - cz
        acc[pl.A_FR] += fx; acc[pl.A_FR + 1] += fy; acc[pl.A_FR + 2] += fz
        acc[pl.A_MR] += ry * fz - rz * fy
        acc[pl.A_MR + 1] += rz * fx - rx * fz
        acc[pl.A_MR + 2] += rx * fy - ry * fx
        acc[pl.A_FP] -= fx; acc[pl.A_FP + 1] -= fy; acc[pl.A_FP + 2] -= fz
        acc[pl.A_MP] -= py * fz - pz * fy
        acc[pl.A_MP + 1] -= pz * fx - px * fz
        acc[pl.A_MP + 2] -= px * fy - py * fx
        vax, vay, vaz = point_velocity(sc, SC_TWR, px, py, pz)
        vpx, vpy, vpz = point_velocity(sc, SC_TWP, px, py, pz)
        p_latch += fx * (vax - vpx) + fy * (vay - vpy) + fz * (vaz - vpz)
    # ---- ring, with the contacts' velocity terms implicit when SC_HIMP is set
    B = M[M_APAU]
    _mv(B, acc, pl.A_FR, sc, SC_FEXT)
    _mv(B, acc, pl.A_MR, sc, SC_MEXT)
    ddq = sc[SC_DDQ:SC_DDQ + 6]
    ain = sc[SC_AIN:SC_AIN + 6]
    km.ring_accel(MP, y[Y_QR:Y_QR + 6], y[Y_DQR:Y_DQR + 6], kw, F, sc[SC_FEXT:SC_FEXT + 3],
                  sc[SC_MEXT:SC_MEXT + 3], sc[SC_OM:SC_OM + 3], sc[SC_AL:SC_AL + 3],
                  sc[SC_AO:SC_AO + 3], ddq, ain)
    if sc[SC_HIMP] != 0.0:
        _passive(y, P, M, acc, dy)
        _implicit_ring(P, M, sc, acc, dy)
        _mv(B, acc, pl.A_FR, sc, SC_FEXT)
        _mv(B, acc, pl.A_MR, sc, SC_MEXT)
        km.ring_accel(MP, y[Y_QR:Y_QR + 6], y[Y_DQR:Y_DQR + 6], kw, F,
                      sc[SC_FEXT:SC_FEXT + 3], sc[SC_MEXT:SC_MEXT + 3], sc[SC_OM:SC_OM + 3],
                      sc[SC_AL:SC_AL + 3], sc[SC_AO:SC_AO + 3], ddq, ain)
    for k in range(3):
        sc[SC_FIF + k] = acc[pl.A_FP + k]
        sc[SC_MIF + k] = acc[pl.A_MP + k]
    if tcx[TX_MASK] != 0.0:
        pt.ring_row(tr, trn, tcx, y[Y_QR:Y_QR + 6], sc[SC_FEXT:SC_FEXT + 3],
                    sc[SC_MEXT:SC_MEXT + 3], ddq)
    for k in range(6):
        dy[Y_QR + k] = y[Y_DQR + k]
        dy[Y_DQR + k] = ddq[k]
    _passive(y, P, M, acc, dy)
    # ---- ledger
    dy[Y_EDAMP] = p_damp
    dy[Y_ECDISS] = acc[pl.A_PDISS]
    dy[Y_ECEL] = acc[pl.A_PEL]
    if thr:
        tix = A1[0, 0] * P[P_THRUST] + A1[1, 0] * P[P_THRUST + 1] + A1[2, 0] * P[P_THRUST + 2]
        tiy = A1[0, 1] * P[P_THRUST] + A1[1, 1] * P[P_THRUST + 1] + A1[2, 1] * P[P_THRUST + 2]
        tiz = A1[0, 2] * P[P_THRUST] + A1[1, 2] * P[P_THRUST + 1] + A1[2, 2] * P[P_THRUST + 2]
        dy[Y_WTHR] = tix * y[Y_V1] + tiy * y[Y_V1 + 1] + tiz * y[Y_V1 + 2]
    else:
        dy[Y_WTHR] = 0.0
    dy[Y_WLATCH] = p_latch
    return ST_OK, PAIR_NONE, -1
