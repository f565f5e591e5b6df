"""Peripheral docking unit: the six-leg mechanism that carries the docking ring (kernels).

Model
-----
The docking ring is a rigid body (mass ``m_R``, inertia ``J_R`` about its centre in ring
axes) carried by a 6-6 parallel manipulator (Gough-Stewart platform) of six **massless legs**.
Leg ``i`` joins the base joint ``b_i`` (AU axes: origin where the unit axis meets the plane of
the lower-joint centres, ``X_AU`` along the docking axis) to the ring joint ``rho_i`` (ring
axes, origin at the ring centre). Ring pose (digest 9.2): ``q1..q3`` the ring centre in AU,
``q4..q6`` yaw, pitch, roll with ``A_R = R_x(q6) R_z(q5) R_y(q4)`` (AU -> ring) and the
corrected angular velocity ``omega_R = G(q) [q4', q5', q6']`` (AU components,
:func:`models._kernels.frames.ring_omega_au`).

Why this model: the paper gives no mechanism model for the peripheral unit (digest 12.2: its
refs. [9], [10]); APAS-type units carry the ring on six linear actuators/attenuators between
the ring and the base, which is kinematically a Stewart platform. Massless legs make every
leg a two-force member, so the legs are **force elements**: the leg forces follow from the
state alone, the active vehicle's acceleration depends on the state only (through the base
reaction), and there is no algebraic loop between ring and vehicle. The ring's small mass is
kept (it sets the ring's own dynamics and the stiffness of the system, digest 12.2).

Legs (``l_i = r + A_R^T rho_i - b_i``, length ``L_i = |l_i|``, unit vector ``u_i = l_i/L_i``
from base to ring, rate ``L_i' = u_i . (r' + omega_R x p_i)`` with ``p_i = A_R^T rho_i``).
The leg Jacobian ``J`` (6x6, ``L' = J q'``) has rows ``[u_i^T, (p_i x u_i)^T G(q)]``; since
``J = dL/dq`` it also drives the Newton forward kinematics.

Leg force ``F_i`` [N], **positive in compression** (the leg pushes the ring along ``+u_i``
and the base along ``-u_i``), is the sum of

* the absorber, compression ``c_i = L0_i + s_i - L_i`` (``L0_i`` free length, ``s_i`` the
  accumulated brake shift), one of two kinds (parameter ``MP_KIND``):

  - ``KIND_LINEAR``: a preloaded double-acting spring cartridge in series with a Coulomb
    friction brake that slips in compression at ``F_BC`` and in extension at ``F_BT``. The
    spring is held at its preload ``F0`` by a cage of stiffness ``k_p``: below ``F0`` the
    cage deflects, ``F_s = k_p c`` for ``|c| <= c_p = F0 / k_p``; beyond, the spring moves,
    ``F_s = sign(c) F0 + k (c - sign(c) c_p)``. ``c_p = 0`` (a rigid cage) is the force
    step ``F_s = sign(c) (F0 + k |c|)``. Within an integration step the
    absorber force is ``F_s`` clipped to ``[-F_BT, F_BC]`` (the brake slips at exactly its
    threshold: zero stiffness beyond the slip point, digest A.10 item 1); between steps
    :func:`legs_between` commits the slip as an irreversible shift of the spring's free
    length (A.10 items 2-4), and books the brake work ``threshold x slip``. This is the
    variable-parameter element of A.10 for a linear elastic spring: the hysteresis kernel's
    brake variant cannot represent it, because its unloading branch must end on a segment of
    the maximum stiffness (assumption 5) while an elastic spring unloads along ``k``, and its
    tables cannot carry a preload step at zero.
  - ``KIND_HYSTERESIS``: the absorber of each leg is one element of
    :mod:`models._kernels.hysteresis` driven by ``c_i`` (a constant-parameter spring, or the
    friction-brake variant of A.10 that is a spring in series with a brake, as the probe-cone
    axial absorber); its state is updated between steps by :func:`legs_between`.

* leg end stops: a stiff linear spring ``k_stop`` outside ``[L_min, L_max]``;
* a viscous damper ``-c L_i'`` in parallel with the absorber.

With a rigid cage (``c_p = 0``) the preload is a force step ``F0`` at ``c = 0``; a fixed
RK4 step across it is first-order accurate there (energy error up to ``F0 |L'| h`` per
crossing; the tests measure it), and once the ring settles at ``c = 0`` a long step chatters
across the step and the dampers absorb the chatter. A compliant cage (``c_p > 0``) makes the
law continuous (Lipschitz, kinks at ``+-c_p``), so RK4 keeps its order wherever ``k_p``'s
mode is resolved by the step.

Brake-slip reading (documented choice): the slip of a step is committed from the state at
the end of the step, so a slip that starts and reverses inside one step is lost (the error
is bounded by the slip of one step, ``|L'| h``), as for every discrete state of the
hysteresis paper (digest A.9 [impl]).

Ring dynamics (Newton-Euler in inertial space, written in ``q`` relative to the moving AU
frame). With ``Omega``, ``alpha`` the AU frame's inertial angular velocity and acceleration
and ``a_O`` the inertial acceleration of the AU origin (AU components)::

    m (a_O + r'' + 2 Omega x r' + alpha x r + Omega x (Omega x r)) = f_legs + f_ext
    J_AU eps + w x J_AU w = m_legs + m_ext,        w = Omega + G q_a'
    eps = alpha + G q_a'' + G' q_a' + Omega x (G q_a')

(``J_AU = A_R^T J_R A_R``, moments about the ring centre); :func:`ring_accel` solves them for
``q''`` (``det G = cos q5``). The base reaction on the active vehicle is ``-sum F_i u_i`` at
the base joints (:func:`base_wrench`).

Packed arrays (every offset is named here; :mod:`models.peripheral.mechanism` builds them):

``MP`` (float64, parameters, read-only): ``MP_*``.
``KW`` (float64, kinematics of one state, written by :func:`leg_kinematics`): ``KW_*``.
``LS`` (float64, per-leg discrete state, ``LS_SIZE`` per leg, leg ``i`` at ``i * LS_SIZE``):
``LS_*``. For ``KIND_HYSTERESIS`` the hysteresis element of leg ``i`` is element ``i`` of
``(table, toff, hist_i, hist_f)`` (``models.hysteresis.pack_elements``); for
``KIND_LINEAR`` pass empty arrays.
``FKW`` (float64, scratch of :func:`forward_kinematics`): ``FK_SIZE`` entries.

Units: SI (m, kg, s, N, rad). No function allocates, raises or does I/O.
"""
from __future__ import annotations

import math

from numba import njit

from models._kernels import NJIT, NJIT_LEAF
from models._kernels import hysteresis as hk
from models._kernels.frames import ring_dcm
from models._kernels.status import ST_HYSTERESIS, ST_OK  # noqa: F401  (re-exported)

__all__ = [
    "NL", "KIND_LINEAR", "KIND_HYSTERESIS",
    "MP_MASS", "MP_INV_MASS", "MP_J", "MP_JINV", "MP_BASE", "MP_RING", "MP_L0", "MP_K",
    "MP_F0", "MP_C", "MP_FBC", "MP_FBT", "MP_CSLIP_C", "MP_CSLIP_T", "MP_LMIN", "MP_LMAX",
    "MP_KSTOP", "MP_KIND", "MP_CP", "MP_KP", "MP_SIZE",
    "KW_A", "KW_G", "KW_OMEGA", "KW_P", "KW_U", "KW_L", "KW_LD", "KW_SIZE",
    "LS_SHIFT", "LS_BRAKE_WORK", "LS_SIZE",
    "FK_SIZE", "FK_OK", "FK_NO_CONVERGENCE", "FK_SINGULAR",
    "ST_OK", "ST_HYSTERESIS",
    "leg_kinematics", "leg_jacobian", "leg_forces", "legs_between", "ring_wrench",
    "base_wrench", "ring_accel", "ring_kinetic_energy", "legs_energy", "forward_kinematics",
]

NL = 6   # number of legs

KIND_LINEAR = 0       # preloaded linear spring in series with a Coulomb brake
KIND_HYSTERESIS = 1   # one hysteresis element (constant or friction-brake variant) per leg

# ---- packed parameters MP -------------------------------------------------------------------
MP_MASS = 0        # ring mass [kg]
MP_INV_MASS = 1    # 1 / ring mass [1/kg]
MP_J = 2           # ring inertia about its centre, ring axes, row-major (9) [kg m^2]
MP_JINV = 11       # its inverse (9) [1/(kg m^2)]
MP_BASE = 20       # base joint centres b_i, AU axes (6 x 3) [m]
MP_RING = 38       # ring joint centres rho_i, ring axes (6 x 3) [m]
MP_L0 = 56         # leg free lengths L0_i (6) [m]
MP_K = 62          # absorber spring rate k (KIND_LINEAR) [N/m]
MP_F0 = 63         # spring preload F0 (KIND_LINEAR) [N]
MP_C = 64          # leg damper c [N s/m]
MP_FBC = 65        # brake slip force in compression F_BC (KIND_LINEAR) [N]
MP_FBT = 66        # brake slip force in extension F_BT (KIND_LINEAR) [N]
MP_CSLIP_C = 67    # compression at which the brake slips, c_p + (F_BC - F0) / k [m]
MP_CSLIP_T = 68    # extension at which the brake slips, c_p + (F_BT - F0) / k [m]
MP_LMIN = 69       # shortest leg length before the end stop [m]
MP_LMAX = 70       # longest leg length before the end stop [m]
MP_KSTOP = 71      # end-stop stiffness [N/m]
MP_KIND = 72       # absorber kind (float holding KIND_LINEAR or KIND_HYSTERESIS)
MP_CP = 73         # preload cage deflection c_p = F0 / k_p, 0 for a rigid cage [m]
MP_KP = 74         # preload cage stiffness k_p, 0 for a rigid cage (KIND_LINEAR) [N/m]
MP_SIZE = 75

# ---- kinematics workspace KW ----------------------------------------------------------------
KW_A = 0           # A_R, AU -> ring, row-major (9)
KW_G = 9           # G(q): [q4', q5', q6'] -> omega_R (AU), row-major (9)
KW_OMEGA = 18      # omega_R, ring angular velocity relative to AU, AU axes (3) [rad/s]
KW_P = 21          # p_i = A_R^T rho_i, ring joint from ring centre, AU axes (6 x 3) [m]
KW_U = 39          # u_i, leg unit vectors base -> ring joint, AU axes (6 x 3)
KW_L = 57          # leg lengths L_i (6) [m]
KW_LD = 63         # leg rates L_i' (6) [m/s]
KW_SIZE = 69

# ---- per-leg discrete state LS --------------------------------------------------------------
LS_SHIFT = 0       # brake shift s of the spring's free length (KIND_LINEAR) [m]
LS_BRAKE_WORK = 1  # brake work committed so far (KIND_LINEAR) [J]
LS_SIZE = 2

# ---- forward kinematics ---------------------------------------------------------------------
FK_OK = 0
FK_NO_CONVERGENCE = 1
FK_SINGULAR = 2
_FK_JAC = KW_SIZE            # 6x6 Jacobian / LU (36)
_FK_RES = _FK_JAC + 36       # residual (6)
_FK_DQ = _FK_RES + 6         # Newton step (6)
_FK_QT = _FK_DQ + 6          # trial pose (6)
_FK_ZERO = _FK_QT + 6        # zero rates (6)
FK_SIZE = _FK_ZERO + 6

# ---- status of legs_between: ST_OK or ST_HYSTERESIS (models._kernels.status) ----------------


# ---------------------------------------------------------------------------------------------
# kinematics
@njit(**NJIT_LEAF)
def leg_kinematics(MP, q, dq, kw):
    """Leg lengths, unit vectors and rates of the ring pose ``q`` [m, rad] and rates ``dq``
    [m/s, rad/s] into ``kw`` (``KW_*``); also ``A_R``, ``G(q)`` and ``omega_R``."""
    # A_R in the workspace, through a 3x3 view
    a = kw[KW_A:KW_A + 9].reshape((3, 3))
    ring_dcm(q[3], q[4], q[5], a)
    s4 = math.sin(q[3]); c4 = math.cos(q[3])
    s5 = math.sin(q[4]); c5 = math.cos(q[4])
    g = KW_G
    kw[g] = 0.0; kw[g + 1] = s4; kw[g + 2] = c4 * c5
    kw[g + 3] = 1.0; kw[g + 4] = 0.0; kw[g + 5] = s5
    kw[g + 6] = 0.0; kw[g + 7] = c4; kw[g + 8] = -s4 * c5
    wx = s4 * dq[4] + c4 * c5 * dq[5]
    wy = dq[3] + s5 * dq[5]
    wz = c4 * dq[4] - s4 * c5 * dq[5]
    kw[KW_OMEGA] = wx; kw[KW_OMEGA + 1] = wy; kw[KW_OMEGA + 2] = wz
    for i in range(NL):
        r0 = MP[MP_RING + 3 * i]; r1 = MP[MP_RING + 3 * i + 1]; r2 = MP[MP_RING + 3 * i + 2]
        px = a[0, 0] * r0 + a[1, 0] * r1 + a[2, 0] * r2
        py = a[0, 1] * r0 + a[1, 1] * r1 + a[2, 1] * r2
        pz = a[0, 2] * r0 + a[1, 2] * r1 + a[2, 2] * r2
        kw[KW_P + 3 * i] = px; kw[KW_P + 3 * i + 1] = py; kw[KW_P + 3 * i + 2] = pz
        lx = q[0] + px - MP[MP_BASE + 3 * i]
        ly = q[1] + py - MP[MP_BASE + 3 * i + 1]
        lz = q[2] + pz - MP[MP_BASE + 3 * i + 2]
        L = math.sqrt(lx * lx + ly * ly + lz * lz)
        il = 1.0 / L
        ux = lx * il; uy = ly * il; uz = lz * il
        kw[KW_U + 3 * i] = ux; kw[KW_U + 3 * i + 1] = uy; kw[KW_U + 3 * i + 2] = uz
        kw[KW_L + i] = L
        # joint velocity r' + omega x p
        vx = dq[0] + wy * pz - wz * py
        vy = dq[1] + wz * px - wx * pz
        vz = dq[2] + wx * py - wy * px
        kw[KW_LD + i] = ux * vx + uy * vy + uz * vz


@njit(**NJIT_LEAF)
def leg_jacobian(kw, jac):
    """Leg Jacobian ``J`` (6x6, ``L' = J q'``, also ``dL/dq``) from a filled ``kw`` into
    ``jac`` (float64 (6, 6)): row ``i`` is ``[u_i, (p_i x u_i)^T G]``."""
    for i in range(NL):
        ux = kw[KW_U + 3 * i]; uy = kw[KW_U + 3 * i + 1]; uz = kw[KW_U + 3 * i + 2]
        px = kw[KW_P + 3 * i]; py = kw[KW_P + 3 * i + 1]; pz = kw[KW_P + 3 * i + 2]
        cx = py * uz - pz * uy
        cy = pz * ux - px * uz
        cz = px * uy - py * ux
        jac[i, 0] = ux; jac[i, 1] = uy; jac[i, 2] = uz
        for j in range(3):
            jac[i, 3 + j] = cx * kw[KW_G + j] + cy * kw[KW_G + 3 + j] + cz * kw[KW_G + 6 + j]


# ---------------------------------------------------------------------------------------------
# leg forces and their discrete state
@njit(**NJIT_LEAF)
def _linear_absorber(MP, c):
    """Preloaded spring in its cage, in series with the brake: compression ``c`` [m] ->
    force [N], compression positive.

    ``k_p c`` inside the cage (``|c| <= c_p``), ``sign(c) F0 + k (c - sign(c) c_p)`` beyond,
    clipped to ``[-F_BT, F_BC]``. With ``c_p = 0`` (``MP_KP = 0``) this is the force step
    ``sign(c) (F0 + k |c|)`` bit for bit."""
    cp = MP[MP_CP]
    if c > cp:
        f = MP[MP_F0] + MP[MP_K] * (c - cp)
        if f > MP[MP_FBC]:
            f = MP[MP_FBC]
        return f
    if c < -cp:
        f = -MP[MP_F0] + MP[MP_K] * (c + cp)
        if f < -MP[MP_FBT]:
            f = -MP[MP_FBT]
        return f
    return MP[MP_KP] * c


@njit(**NJIT_LEAF)
def _stop_force(MP, L):
    """End-stop force [N], compression positive."""
    if L < MP[MP_LMIN]:
        return MP[MP_KSTOP] * (MP[MP_LMIN] - L)
    if L > MP[MP_LMAX]:
        return -MP[MP_KSTOP] * (L - MP[MP_LMAX])
    return 0.0


@njit(**NJIT_LEAF)
def leg_forces(MP, kw, LS, table, toff, hist_i, hist_f, F):
    """Axial leg forces ``F`` (6) [N], compression positive, from the lengths and rates in
    ``kw`` and the legs' discrete state (pure: mutates nothing but ``F``).

    Returns the power dissipated in the dampers, ``sum c L_i'^2`` [W] (the energy ledger
    integrates it with the continuous state)."""
    c_d = MP[MP_C]
    hyst = MP[MP_KIND] == KIND_HYSTERESIS
    p = 0.0
    for i in range(NL):
        L = kw[KW_L + i]
        ld = kw[KW_LD + i]
        c = MP[MP_L0 + i] + LS[i * LS_SIZE + LS_SHIFT] - L
        if hyst:
            f = hk.hyst_force(table, toff[i], hist_i, i * hk.I_SIZE, hist_f, i * hk.F_SIZE, c)
        else:
            f = _linear_absorber(MP, c)
        F[i] = f + _stop_force(MP, L) - c_d * ld
        p += c_d * ld * ld
    return p


@njit(**NJIT_LEAF)
def legs_between(MP, kw, LS, table, toff, hist_i, hist_f, t):
    """Discrete update after an accepted step, from ``kw`` at the end of the step (time ``t``
    [s]): commit brake slips (``KIND_LINEAR``: shift ``s_i`` so that the spring sits at its
    slip point again, brake work ``+= threshold x slip``) or the hysteresis elements' state
    changes (``KIND_HYSTERESIS``, with ``qdot = -L'``).

    Returns ``(status, leg)``: ``(ST_OK, -1)`` or ``(ST_HYSTERESIS, i)`` when element ``i``
    refused the transition even after replaying a rate sign change inside the step."""
    if MP[MP_KIND] == KIND_HYSTERESIS:
        for i in range(NL):
            c = MP[MP_L0 + i] + LS[i * LS_SIZE + LS_SHIFT] - kw[KW_L + i]
            cd = -kw[KW_LD + i]
            i0 = i * hk.I_SIZE
            f0 = i * hk.F_SIZE
            st = hk.hyst_update(table, toff[i], hist_i, i0, hist_f, f0, c, cd, t)
            if st == hk.ST_ILLEGAL:
                # the rate changed sign inside the step: replay as two legal rows
                st = hk.hyst_update(table, toff[i], hist_i, i0, hist_f, f0, c, -cd, t)
                if st == hk.ST_OK:
                    st = hk.hyst_update(table, toff[i], hist_i, i0, hist_f, f0, c, cd, t)
            if st != hk.ST_OK:
                return ST_HYSTERESIS, i
        return ST_OK, -1
    for i in range(NL):
        o = i * LS_SIZE
        c = MP[MP_L0 + i] + LS[o + LS_SHIFT] - kw[KW_L + i]
        if c > MP[MP_CSLIP_C]:
            d = c - MP[MP_CSLIP_C]
            LS[o + LS_SHIFT] -= d
            LS[o + LS_BRAKE_WORK] += MP[MP_FBC] * d
        elif c < -MP[MP_CSLIP_T]:
            d = -MP[MP_CSLIP_T] - c
            LS[o + LS_SHIFT] += d
            LS[o + LS_BRAKE_WORK] += MP[MP_FBT] * d
    return ST_OK, -1


@njit(**NJIT_LEAF)
def _linear_stored(MP, c):
    """Energy [J] stored in the caged preloaded spring at compression ``c`` [m] (inside the
    slip points): the integral of :func:`_linear_absorber` from 0 to ``c``."""
    cp = MP[MP_CP]
    a = abs(c)
    if a <= cp:
        return 0.5 * MP[MP_KP] * c * c
    d = a - cp
    return 0.5 * MP[MP_F0] * cp + MP[MP_F0] * d + 0.5 * MP[MP_K] * d * d


@njit(**NJIT_LEAF)
def legs_energy(MP, kw, LS, table, toff, hist_i, hist_f, out):
    """Energy of the legs at the lengths in ``kw``: ``out[0]`` stored in the absorber springs
    and end stops [J], ``out[1]`` brake work [J] (committed plus the slip of the current step
    not yet committed; ``KIND_LINEAR`` only, 0 for ``KIND_HYSTERESIS`` whose dissipation is
    the absorber work minus ``out[0]``).

    For ``KIND_LINEAR`` the stored energy, with ``c'`` the compression clipped to the slip
    points, is ``k_p c'^2 / 2`` inside the cage (``|c'| <= c_p``) and
    ``F0 c_p / 2 + F0 (|c'| - c_p) + k (|c'| - c_p)^2 / 2`` beyond (the work of
    :func:`_linear_absorber` from 0; ``c_p = 0``: ``F0 |c'| + k c'^2 / 2``); for
    ``KIND_HYSTERESIS`` it is the energy returned on unloading along the backward branch (the
    probe-cone unit's convention)."""
    hyst = MP[MP_KIND] == KIND_HYSTERESIS
    e = 0.0
    w = 0.0
    for i in range(NL):
        o = i * LS_SIZE
        L = kw[KW_L + i]
        c = MP[MP_L0 + i] + LS[o + LS_SHIFT] - L
        if hyst:
            e += hk.hyst_stored(table, toff[i], hist_i, i * hk.I_SIZE, hist_f, i * hk.F_SIZE, c)
        else:
            w += LS[o + LS_BRAKE_WORK]
            if c > MP[MP_CSLIP_C]:
                w += MP[MP_FBC] * (c - MP[MP_CSLIP_C])
                c = MP[MP_CSLIP_C]
            elif c < -MP[MP_CSLIP_T]:
                w += MP[MP_FBT] * (-MP[MP_CSLIP_T] - c)
                c = -MP[MP_CSLIP_T]
            e += _linear_stored(MP, c)
        if L < MP[MP_LMIN]:
            e += 0.5 * MP[MP_KSTOP] * (MP[MP_LMIN] - L) ** 2
        elif L > MP[MP_LMAX]:
            e += 0.5 * MP[MP_KSTOP] * (L - MP[MP_LMAX]) ** 2
    out[0] = e
    out[1] = w


# ---------------------------------------------------------------------------------------------
# wrenches and the ring's equation of motion
@njit(**NJIT_LEAF)
def ring_wrench(kw, F, out):
    """Wrench of the leg forces ``F`` [N] on the ring: ``out[0:3]`` force, ``out[3:6]`` moment
    about the ring centre [N m], AU axes."""
    for k in range(6):
        out[k] = 0.0
    for i in range(NL):
        f = F[i]
        ux = kw[KW_U + 3 * i] * f; uy = kw[KW_U + 3 * i + 1] * f; uz = kw[KW_U + 3 * i + 2] * f
        px = kw[KW_P + 3 * i]; py = kw[KW_P + 3 * i + 1]; pz = kw[KW_P + 3 * i + 2]
        out[0] += ux; out[1] += uy; out[2] += uz
        out[3] += py * uz - pz * uy
        out[4] += pz * ux - px * uz
        out[5] += px * uy - py * ux


@njit(**NJIT_LEAF)
def base_wrench(MP, kw, F, out):
    """Reaction of the legs on the active vehicle: ``out[0:3]`` force [N] and ``out[3:6]``
    moment about the AU origin [N m], AU axes (each leg pushes its base joint along
    ``-u_i``)."""
    for k in range(6):
        out[k] = 0.0
    for i in range(NL):
        f = -F[i]
        ux = kw[KW_U + 3 * i] * f; uy = kw[KW_U + 3 * i + 1] * f; uz = kw[KW_U + 3 * i + 2] * f
        bx = MP[MP_BASE + 3 * i]; by = MP[MP_BASE + 3 * i + 1]; bz = MP[MP_BASE + 3 * i + 2]
        out[0] += ux; out[1] += uy; out[2] += uz
        out[3] += by * uz - bz * uy
        out[4] += bz * ux - bx * uz
        out[5] += bx * uy - by * ux


@njit(**NJIT_LEAF)
def ring_accel(MP, q, dq, kw, F, f_ext, m_ext, omega, alpha, a_o, ddq, ain):
    """Ring accelerations ``ddq`` (6) [m/s^2, rad/s^2] from Newton-Euler in inertial space.

    Parameters
    ----------
    MP : ndarray
        Packed parameters (``MP_*``).
    q, dq : ndarray
        Ring pose [m, rad] and rates [m/s, rad/s] (6 each).
    kw : ndarray
        Workspace filled by :func:`leg_kinematics` at ``(q, dq)``.
    F : ndarray
        Leg forces [N] (compression positive), e.g. from :func:`leg_forces`.
    f_ext, m_ext : ndarray
        External force [N] and moment about the ring centre [N m] on the ring (contacts,
        latches), AU axes.
    omega, alpha : ndarray
        Inertial angular velocity [rad/s] and acceleration [rad/s^2] of the AU frame, AU
        axes.
    a_o : ndarray
        Inertial acceleration of the AU origin, AU axes [m/s^2].
    ddq : ndarray
        Output, ``q''`` (6) [m/s^2, rad/s^2].
    ain : ndarray
        Output, the ring's inertial accelerations (6), AU axes: of its centre [m/s^2] and
        angular [rad/s^2].

    The transport, Coriolis, centrifugal and Euler terms and the Euler-angle rate terms
    ``G' q_a'`` enter exactly (module docstring); the only division is by ``cos q5``.
    """
    a = kw[KW_A:KW_A + 9]
    # leg wrench
    fx = f_ext[0]; fy = f_ext[1]; fz = f_ext[2]
    mx = m_ext[0]; my = m_ext[1]; mz = m_ext[2]
    for i in range(NL):
        f = F[i]
        ux = kw[KW_U + 3 * i] * f; uy = kw[KW_U + 3 * i + 1] * f; uz = kw[KW_U + 3 * i + 2] * f
        px = kw[KW_P + 3 * i]; py = kw[KW_P + 3 * i + 1]; pz = kw[KW_P + 3 * i + 2]
        fx += ux; fy += uy; fz += uz
        mx += py * uz - pz * uy
        my += pz * ux - px * uz
        mz += px * uy - py * ux
    # translation: r'' = f/m - a_O - 2 Omega x r' - alpha x r - Omega x (Omega x r)
    ox = omega[0]; oy = omega[1]; oz = omega[2]
    rx = q[0]; ry = q[1]; rz = q[2]
    vx = dq[0]; vy = dq[1]; vz = dq[2]
    cx = oy * rz - oz * ry; cy = oz * rx - ox * rz; cz = ox * ry - oy * rx   # Omega x r
    im = MP[MP_INV_MASS]
    ddq[0] = fx * im - a_o[0] - 2.0 * (oy * vz - oz * vy) - (alpha[1] * rz - alpha[2] * ry) \
        - (oy * cz - oz * cy)
    ddq[1] = fy * im - a_o[1] - 2.0 * (oz * vx - ox * vz) - (alpha[2] * rx - alpha[0] * rz) \
        - (oz * cx - ox * cz)
    ddq[2] = fz * im - a_o[2] - 2.0 * (ox * vy - oy * vx) - (alpha[0] * ry - alpha[1] * rx) \
        - (ox * cy - oy * cx)
    # rotation, in ring axes: w_R = A (Omega + omega_R), eps_R = J^-1 (M_R - w_R x J w_R)
    wrx = kw[KW_OMEGA]; wry = kw[KW_OMEGA + 1]; wrz = kw[KW_OMEGA + 2]
    wix = ox + wrx; wiy = oy + wry; wiz = oz + wrz
    w0 = a[0] * wix + a[1] * wiy + a[2] * wiz
    w1 = a[3] * wix + a[4] * wiy + a[5] * wiz
    w2 = a[6] * wix + a[7] * wiy + a[8] * wiz
    J = MP[MP_J:MP_J + 9]
    h0 = J[0] * w0 + J[1] * w1 + J[2] * w2
    h1 = J[3] * w0 + J[4] * w1 + J[5] * w2
    h2 = J[6] * w0 + J[7] * w1 + J[8] * w2
    t0 = a[0] * mx + a[1] * my + a[2] * mz - (w1 * h2 - w2 * h1)
    t1 = a[3] * mx + a[4] * my + a[5] * mz - (w2 * h0 - w0 * h2)
    t2 = a[6] * mx + a[7] * my + a[8] * mz - (w0 * h1 - w1 * h0)
    Ji = MP[MP_JINV:MP_JINV + 9]
    e0 = Ji[0] * t0 + Ji[1] * t1 + Ji[2] * t2
    e1 = Ji[3] * t0 + Ji[4] * t1 + Ji[5] * t2
    e2 = Ji[6] * t0 + Ji[7] * t1 + Ji[8] * t2
    # back to AU
    ex = a[0] * e0 + a[3] * e1 + a[6] * e2
    ey = a[1] * e0 + a[4] * e1 + a[7] * e2
    ez = a[2] * e0 + a[5] * e1 + a[8] * e2
    ain[0] = fx * im; ain[1] = fy * im; ain[2] = fz * im
    ain[3] = ex; ain[4] = ey; ain[5] = ez
    # b = G q_a'' = eps - alpha - G' q_a' - Omega x omega_R
    s4 = math.sin(q[3]); c4 = math.cos(q[3])
    s5 = math.sin(q[4]); c5 = math.cos(q[4])
    d4 = dq[3]; d5 = dq[4]; d6 = dq[5]
    gd0 = c4 * d4 * d5 - (s4 * c5 * d4 + c4 * s5 * d5) * d6
    gd1 = c5 * d5 * d6
    gd2 = -s4 * d4 * d5 + (-c4 * c5 * d4 + s4 * s5 * d5) * d6
    b0 = ex - alpha[0] - gd0 - (oy * wrz - oz * wry)
    b1 = ey - alpha[1] - gd1 - (oz * wrx - ox * wrz)
    b2 = ez - alpha[2] - gd2 - (ox * wry - oy * wrx)
    # G = [[0, s4, c4 c5], [1, 0, s5], [0, c4, -s4 c5]]
    ddq[4] = s4 * b0 + c4 * b2
    ddq[5] = (c4 * b0 - s4 * b2) / c5
    ddq[3] = b1 - s5 * ddq[5]


@njit(**NJIT_LEAF)
def ring_kinetic_energy(MP, q, dq, kw, v_o, omega):
    """Inertial kinetic energy of the ring [J]; ``v_o`` [m/s] and ``omega`` [rad/s] are the
    inertial velocity of the AU origin and angular velocity of the AU frame (AU axes; zeros
    for a fixed base). ``kw`` filled at ``(q, dq)``."""
    ox = omega[0]; oy = omega[1]; oz = omega[2]
    vx = v_o[0] + dq[0] + oy * q[2] - oz * q[1]
    vy = v_o[1] + dq[1] + oz * q[0] - ox * q[2]
    vz = v_o[2] + dq[2] + ox * q[1] - oy * q[0]
    wix = ox + kw[KW_OMEGA]; wiy = oy + kw[KW_OMEGA + 1]; wiz = oz + kw[KW_OMEGA + 2]
    a = kw[KW_A:KW_A + 9]
    w0 = a[0] * wix + a[1] * wiy + a[2] * wiz
    w1 = a[3] * wix + a[4] * wiy + a[5] * wiz
    w2 = a[6] * wix + a[7] * wiy + a[8] * wiz
    J = MP[MP_J:MP_J + 9]
    rot = w0 * (J[0] * w0 + J[1] * w1 + J[2] * w2) + w1 * (J[3] * w0 + J[4] * w1 + J[5] * w2) \
        + w2 * (J[6] * w0 + J[7] * w1 + J[8] * w2)
    return 0.5 * (MP[MP_MASS] * (vx * vx + vy * vy + vz * vz) + rot)


# ---------------------------------------------------------------------------------------------
# forward kinematics
@njit(**NJIT_LEAF)
def _solve6(fkw, o, b, x):
    """Solve the 6x6 system stored row-major at ``fkw[o:o+36]`` (destroyed) for the right-hand
    side ``b`` (destroyed) into ``x``, Gaussian elimination with partial pivoting. Returns
    False when a pivot vanishes."""
    for k in range(6):
        piv = k
        big = abs(fkw[o + 6 * k + k])
        for r in range(k + 1, 6):
            v = abs(fkw[o + 6 * r + k])
            if v > big:
                big = v
                piv = r
        if big < 1e-300:
            return False
        if piv != k:
            for c in range(6):
                t = fkw[o + 6 * k + c]
                fkw[o + 6 * k + c] = fkw[o + 6 * piv + c]
                fkw[o + 6 * piv + c] = t
            t = b[k]
            b[k] = b[piv]
            b[piv] = t
        inv = 1.0 / fkw[o + 6 * k + k]
        for r in range(k + 1, 6):
            m = fkw[o + 6 * r + k] * inv
            if m != 0.0:
                for c in range(k, 6):
                    fkw[o + 6 * r + c] -= m * fkw[o + 6 * k + c]
                b[r] -= m * b[k]
    for k in range(5, -1, -1):
        s = b[k]
        for c in range(k + 1, 6):
            s -= fkw[o + 6 * k + c] * x[c]
        x[k] = s / fkw[o + 6 * k + k]
    return True


@njit(**NJIT_LEAF)
def _fk_residual(MP, q, lengths, fkw):
    """Fill ``fkw``'s kinematics for ``q`` (zero rates) and the residual ``L(q) - lengths``;
    returns its largest magnitude [m]."""
    leg_kinematics(MP, q, fkw[_FK_ZERO:_FK_ZERO + 6], fkw)
    big = 0.0
    for i in range(NL):
        r = fkw[KW_L + i] - lengths[i]
        fkw[_FK_RES + i] = r
        if abs(r) > big:
            big = abs(r)
    return big


@njit(**NJIT_LEAF)
def forward_kinematics(MP, lengths, q, tol, max_iter, fkw):
    """Ring pose from the six leg lengths ``lengths`` [m] by damped Newton iteration on
    ``L(q) = lengths`` (Jacobian :func:`leg_jacobian`), starting from and overwriting ``q``.

    Each Newton step is halved (up to 30 times) until the largest length residual decreases,
    so a start some distance away (the ready pose for a flight's telemetry) converges to the
    assembly mode nearest to it. Converged when the largest residual is below ``tol`` [m].
    ``fkw`` is scratch of ``FK_SIZE``. Returns ``(status, iterations, residual [m])``."""
    for k in range(6):
        fkw[_FK_ZERO + k] = 0.0
    res = _fk_residual(MP, q, lengths, fkw)
    it = 0
    while res > tol:
        if it >= max_iter:
            return FK_NO_CONVERGENCE, it, res
        it += 1
        jac = fkw[_FK_JAC:_FK_JAC + 36].reshape((6, 6))
        leg_jacobian(fkw, jac)
        for k in range(6):
            fkw[_FK_QT + k] = -fkw[_FK_RES + k]
        if not _solve6(fkw, _FK_JAC, fkw[_FK_QT:_FK_QT + 6], fkw[_FK_DQ:_FK_DQ + 6]):
            return FK_SINGULAR, it, res
        lam = 1.0
        accepted = False
        for _ in range(31):
            for k in range(6):
                fkw[_FK_QT + k] = q[k] + lam * fkw[_FK_DQ + k]
            trial = _fk_residual(MP, fkw[_FK_QT:_FK_QT + 6], lengths, fkw)
            if trial < res:
                accepted = True
                break
            lam *= 0.5
        if not accepted:
            _fk_residual(MP, q, lengths, fkw)
            return FK_NO_CONVERGENCE, it, res
        for k in range(6):
            q[k] = fkw[_FK_QT + k]
        res = trial
    return FK_OK, it, res
