"""Kinematics of the docking-unit frames (contact paper, section 3) as allocation-free kernels.

Convention (digest section 2): a direction-cosine matrix ``A`` that "defines the orientation of
frame Y relative to frame X" maps X components to Y components, ``u_Y = A u_X``; then the
angular velocity of Y relative to X is ``skew(omega_Y) = -Adot A^T`` (Y components) and
``skew(omega_X) = -A^T Adot`` (X components). Elementary *frame* rotations::

    R_x(q) = [[1, 0, 0], [0, c, s], [0, -s, c]]
    R_y(q) = [[c, 0, -s], [0, 1, 0], [s, 0, c]]
    R_z(q) = [[c, s, 0], [-s, c, 0], [0, 0, 1]]

Every function writes into caller-provided ``out`` arrays (float64, shape (3,) or (3, 3)) or
returns a tuple of floats, so unit kernels can call them at every RK4 stage. Outputs must not
alias inputs.

Corrections of the printed formulas used here (digest 8.2, 9.2, 14; checked by the tests in
``tests/models/test_contact_frames.py`` against central finite differences):

* housing ``A_AUB,1 = R_z(q2) R_y(q1)``: entry (1,2) is ``+s2`` (printed ``-s2`` is not
  orthogonal); the printed vector ``[s1 q2', q1', c1 q2']`` is the angular velocity in **AU**
  components, not in link components;
* head ``A_AUB,2 = R_x(q5) R_z(q4) R_y(q3) A_AUB,1`` with entry (1,1) ``c4 c3``;
* ring ``A_R = R_x(q6) R_z(q5) R_y(q4)``; column 2 of the printed angular-velocity matrix is
  ``[s4, 0, c4]`` (printed ``[c4, 0, -s4]``).
"""
from __future__ import annotations

import math

from numba import njit

from models._kernels import NJIT, NJIT_LEAF

__all__ = [
    "axis_rotation",
    "frame_rot_x", "frame_rot_y", "frame_rot_z", "housing_dcm", "housing_omega_au",
    "head_rel_dcm", "head_rel_omega_head", "ring_dcm", "ring_omega_au", "relative_pose",
    "unit_velocities", "link_pose", "link_velocity", "point_velocity", "wrench_to_c2",
]


@njit(**NJIT_LEAF)
def frame_rot_x(q, out):
    c = math.cos(q)
    s = math.sin(q)
    out[0, 0] = 1.0; out[0, 1] = 0.0; out[0, 2] = 0.0
    out[1, 0] = 0.0; out[1, 1] = c; out[1, 2] = s
    out[2, 0] = 0.0; out[2, 1] = -s; out[2, 2] = c


@njit(**NJIT_LEAF)
def frame_rot_y(q, out):
    c = math.cos(q)
    s = math.sin(q)
    out[0, 0] = c; out[0, 1] = 0.0; out[0, 2] = -s
    out[1, 0] = 0.0; out[1, 1] = 1.0; out[1, 2] = 0.0
    out[2, 0] = s; out[2, 1] = 0.0; out[2, 2] = c


@njit(**NJIT_LEAF)
def frame_rot_z(q, out):
    c = math.cos(q)
    s = math.sin(q)
    out[0, 0] = c; out[0, 1] = s; out[0, 2] = 0.0
    out[1, 0] = -s; out[1, 1] = c; out[1, 2] = 0.0
    out[2, 0] = 0.0; out[2, 1] = 0.0; out[2, 2] = 1.0


@njit(**NJIT_LEAF)
def _yzx(qy, qz, qx, out):
    """out = R_x(qx) R_z(qz) R_y(qy) (the ring / head-bending sequence)."""
    cy = math.cos(qy); sy = math.sin(qy)
    cz = math.cos(qz); sz = math.sin(qz)
    cx = math.cos(qx); sx = math.sin(qx)
    out[0, 0] = cz * cy; out[0, 1] = sz; out[0, 2] = -cz * sy
    out[1, 0] = -cx * sz * cy + sx * sy; out[1, 1] = cx * cz; out[1, 2] = cx * sz * sy + sx * cy
    out[2, 0] = sx * sz * cy + cx * sy; out[2, 1] = -sx * cz; out[2, 2] = -sx * sz * sy + cx * cy


@njit(**NJIT_LEAF)
def housing_dcm(q1, q2, out):
    """``A_AUB,1 = R_z(q2) R_y(q1)`` (AU -> movable housing), corrected (1,2) entry."""
    c1 = math.cos(q1); s1 = math.sin(q1)
    c2 = math.cos(q2); s2 = math.sin(q2)
    out[0, 0] = c1 * c2; out[0, 1] = s2; out[0, 2] = -s1 * c2
    out[1, 0] = -c1 * s2; out[1, 1] = c2; out[1, 2] = s1 * s2
    out[2, 0] = s1; out[2, 1] = 0.0; out[2, 2] = c1


@njit(**NJIT_LEAF)
def housing_omega_au(q1, q2, dq1, dq2):
    """Angular velocity of the housing relative to AU, **AU components** [rad/s]:
    ``(s1 q2', q1', c1 q2')`` (the paper's printed vector, re-labelled)."""
    return math.sin(q1) * dq2, dq1, math.cos(q1) * dq2


@njit(**NJIT_LEAF)
def head_rel_dcm(q3, q4, q5, out):
    """``R_x(q5) R_z(q4) R_y(q3)``: housing -> head (probe bending q3, q4, torsion q5)."""
    _yzx(q3, q4, q5, out)


@njit(**NJIT_LEAF)
def head_rel_omega_head(q3, q4, q5, dq3, dq4, dq5):
    """Angular velocity of the head relative to the housing, head components [rad/s]."""
    s4 = math.sin(q4); c4 = math.cos(q4)
    s5 = math.sin(q5); c5 = math.cos(q5)
    return (s4 * dq3 + dq5, c5 * c4 * dq3 + s5 * dq4, -s5 * c4 * dq3 + c5 * dq4)


@njit(**NJIT_LEAF)
def ring_dcm(q4, q5, q6, out):
    """Ring ``A_R = R_x(q6) R_z(q5) R_y(q4)`` (yaw, pitch, roll), AU -> ring."""
    _yzx(q4, q5, q6, out)


@njit(**NJIT_LEAF)
def ring_omega_au(q4, q5, q6, dq4, dq5, dq6):
    """Ring angular velocity relative to AU, AU components [rad/s], corrected column 2::

        [[0, s4, c4 c5], [1, 0, s5], [0, c4, -s4 c5]] @ [q4', q5', q6']
    """
    s4 = math.sin(q4); c4 = math.cos(q4)
    s5 = math.sin(q5); c5 = math.cos(q5)
    return (s4 * dq5 + c4 * c5 * dq6, dq4 + s5 * dq6, c4 * dq5 - s4 * c5 * dq6)


@njit(**NJIT_LEAF)
def relative_pose(r_c1, a_c1, r_c2, a_c2, r_1a, a_1a, r_2p, a_2p, r_out, a_out):
    """Pose of the active unit in the passive unit (digest 3.2).

    ``r_PAU = A_2P [-r_2P + A_C2 (-r_C2 + r_C1 + A_C1^T r_1A)]`` [m] (PU axes) and
    ``A_PAU = A_1A A_C1 A_C2^T A_2P^T`` (PU -> AU). ``r_c1, r_c2`` inertial [m]; ``a_c1,
    a_c2`` inertial -> body; ``r_1a, a_1a`` pose of AU in C1; ``r_2p, a_2p`` pose of PU in C2.
    """
    # w = -r_C2 + r_C1 + A_C1^T r_1A (inertial)
    w0 = r_c1[0] - r_c2[0]
    w1 = r_c1[1] - r_c2[1]
    w2 = r_c1[2] - r_c2[2]
    for i in range(3):
        w0 += a_c1[i, 0] * r_1a[i]
        w1 += a_c1[i, 1] * r_1a[i]
        w2 += a_c1[i, 2] * r_1a[i]
    # u = -r_2P + A_C2 w (C2)
    u0 = -r_2p[0] + a_c2[0, 0] * w0 + a_c2[0, 1] * w1 + a_c2[0, 2] * w2
    u1 = -r_2p[1] + a_c2[1, 0] * w0 + a_c2[1, 1] * w1 + a_c2[1, 2] * w2
    u2 = -r_2p[2] + a_c2[2, 0] * w0 + a_c2[2, 1] * w1 + a_c2[2, 2] * w2
    for i in range(3):
        r_out[i] = a_2p[i, 0] * u0 + a_2p[i, 1] * u1 + a_2p[i, 2] * u2
    # A_PAU = A_1A A_C1 A_C2^T A_2P^T = A_1A (A_C1 A_C2^T) (A_2P)^T
    for i in range(3):
        for j in range(3):
            # m_ij = (A_C1 A_C2^T A_2P^T)_ij = sum_k A_C1[i,k] (A_2P A_C2)_jk
            s = 0.0
            for k in range(3):
                t = 0.0
                for l in range(3):
                    t += a_2p[j, l] * a_c2[l, k]
                s += a_c1[i, k] * t
            a_out[i, j] = s
    # left-multiply by A_1A in place through a scalar copy of each column
    for j in range(3):
        c0 = a_out[0, j]
        c1 = a_out[1, j]
        c2 = a_out[2, j]
        for i in range(3):
            a_out[i, j] = a_1a[i, 0] * c0 + a_1a[i, 1] * c1 + a_1a[i, 2] * c2


@njit(**NJIT_LEAF)
def unit_velocities(v_c1, w_1, a_c1, r_1a, v_c2, w_2, a_c2, r_2p, a_2p, out):
    """Absolute velocities of the unit frames in PU axes (digest 3.3, rigid spacecraft).

    ``out[0:3] = v_PU = A_2P (A_C2 v_C2 + w_2 x r_2P)``, ``out[3:6] = omega_PU = A_2P w_2``,
    ``out[6:9] = v_AU = A_2P A_C2 [v_C1 + A_C1^T (w_1 x r_1A)]``,
    ``out[9:12] = omega_AU = A_2P A_C2 A_C1^T w_1``. ``v_c1, v_c2`` inertial [m/s]; ``w_1,
    w_2`` body rates in their own body axes [rad/s]. (The elastic terms of the paper are zero
    here; add them to ``w`` and to the cross products before calling if needed.)
    """
    # passive
    t0 = w_2[1] * r_2p[2] - w_2[2] * r_2p[1]
    t1 = w_2[2] * r_2p[0] - w_2[0] * r_2p[2]
    t2 = w_2[0] * r_2p[1] - w_2[1] * r_2p[0]
    for i in range(3):
        t = a_c2[i, 0] * v_c2[0] + a_c2[i, 1] * v_c2[1] + a_c2[i, 2] * v_c2[2]
        if i == 0:
            t0 += t
        elif i == 1:
            t1 += t
        else:
            t2 += t
    for i in range(3):
        out[i] = a_2p[i, 0] * t0 + a_2p[i, 1] * t1 + a_2p[i, 2] * t2
        out[3 + i] = a_2p[i, 0] * w_2[0] + a_2p[i, 1] * w_2[1] + a_2p[i, 2] * w_2[2]
    # active: inertial vectors first
    c0 = w_1[1] * r_1a[2] - w_1[2] * r_1a[1]
    c1 = w_1[2] * r_1a[0] - w_1[0] * r_1a[2]
    c2 = w_1[0] * r_1a[1] - w_1[1] * r_1a[0]
    vi0 = v_c1[0] + a_c1[0, 0] * c0 + a_c1[1, 0] * c1 + a_c1[2, 0] * c2
    vi1 = v_c1[1] + a_c1[0, 1] * c0 + a_c1[1, 1] * c1 + a_c1[2, 1] * c2
    vi2 = v_c1[2] + a_c1[0, 2] * c0 + a_c1[1, 2] * c1 + a_c1[2, 2] * c2
    wi0 = a_c1[0, 0] * w_1[0] + a_c1[1, 0] * w_1[1] + a_c1[2, 0] * w_1[2]
    wi1 = a_c1[0, 1] * w_1[0] + a_c1[1, 1] * w_1[1] + a_c1[2, 1] * w_1[2]
    wi2 = a_c1[0, 2] * w_1[0] + a_c1[1, 2] * w_1[1] + a_c1[2, 2] * w_1[2]
    v20 = a_c2[0, 0] * vi0 + a_c2[0, 1] * vi1 + a_c2[0, 2] * vi2
    v21 = a_c2[1, 0] * vi0 + a_c2[1, 1] * vi1 + a_c2[1, 2] * vi2
    v22 = a_c2[2, 0] * vi0 + a_c2[2, 1] * vi1 + a_c2[2, 2] * vi2
    w20 = a_c2[0, 0] * wi0 + a_c2[0, 1] * wi1 + a_c2[0, 2] * wi2
    w21 = a_c2[1, 0] * wi0 + a_c2[1, 1] * wi1 + a_c2[1, 2] * wi2
    w22 = a_c2[2, 0] * wi0 + a_c2[2, 1] * wi1 + a_c2[2, 2] * wi2
    for i in range(3):
        out[6 + i] = a_2p[i, 0] * v20 + a_2p[i, 1] * v21 + a_2p[i, 2] * v22
        out[9 + i] = a_2p[i, 0] * w20 + a_2p[i, 1] * w21 + a_2p[i, 2] * w22


@njit(**NJIT_LEAF)
def link_pose(r_pau, a_pau, r_aub, a_aub, r_out, a_out):
    """Eq. (1.1): ``r_PUB = r_PAU + A_PAU^T r_AUB`` [m], ``A_PUB = A_AUB A_PAU`` (PU -> link)."""
    for i in range(3):
        r_out[i] = r_pau[i] + a_pau[0, i] * r_aub[0] + a_pau[1, i] * r_aub[1] \
            + a_pau[2, i] * r_aub[2]
    for i in range(3):
        for j in range(3):
            a_out[i, j] = a_aub[i, 0] * a_pau[0, j] + a_aub[i, 1] * a_pau[1, j] \
                + a_aub[i, 2] * a_pau[2, j]


@njit(**NJIT_LEAF)
def link_velocity(v_au, w_au, a_pau, r_aub, v_b_a, w_b_a, out):
    """Eq. (1.2), PU axes: ``out[0:3] = v_B = v_AU + w_AU x (A_PAU^T r_AUB) + A_PAU^T v_B^(A)``,
    ``out[3:6] = omega_B = w_AU + A_PAU^T w_B^(A)``. ``v_b_a, w_b_a``: link velocity and angular
    velocity relative to AU, AU components."""
    r0 = a_pau[0, 0] * r_aub[0] + a_pau[1, 0] * r_aub[1] + a_pau[2, 0] * r_aub[2]
    r1 = a_pau[0, 1] * r_aub[0] + a_pau[1, 1] * r_aub[1] + a_pau[2, 1] * r_aub[2]
    r2 = a_pau[0, 2] * r_aub[0] + a_pau[1, 2] * r_aub[1] + a_pau[2, 2] * r_aub[2]
    out[0] = v_au[0] + w_au[1] * r2 - w_au[2] * r1
    out[1] = v_au[1] + w_au[2] * r0 - w_au[0] * r2
    out[2] = v_au[2] + w_au[0] * r1 - w_au[1] * r0
    for i in range(3):
        out[i] += a_pau[0, i] * v_b_a[0] + a_pau[1, i] * v_b_a[1] + a_pau[2, i] * v_b_a[2]
        out[3 + i] = w_au[i] + a_pau[0, i] * w_b_a[0] + a_pau[1, i] * w_b_a[1] \
            + a_pau[2, i] * w_b_a[2]


@njit(**NJIT_LEAF)
def point_velocity(v, w, o, px, py, pz):
    """Velocity of the material point ``p`` of a body whose point ``o`` moves at ``v`` and
    which turns at ``w`` (digest 3.5): ``v + w x (p - o)``."""
    rx = px - o[0]
    ry = py - o[1]
    rz = pz - o[2]
    return (v[0] + w[1] * rz - w[2] * ry, v[1] + w[2] * rx - w[0] * rz,
            v[2] + w[0] * ry - w[1] * rx)


@njit(**NJIT_LEAF)
def wrench_to_c2(f_pu, m_pu, a_c2, r_2p, a_2p, out):
    """Passive total wrench reduced to C2 (digest 5, assembly): ``out[0:3] = F_2 = A_C2^T
    A_2P^T f`` (inertial) [N], ``out[3:6] = M_2 = A_2P^T m + r_2P x (A_2P^T f)`` (C2) [N m];
    ``m_pu`` is the moment about the PU origin."""
    f0 = a_2p[0, 0] * f_pu[0] + a_2p[1, 0] * f_pu[1] + a_2p[2, 0] * f_pu[2]
    f1 = a_2p[0, 1] * f_pu[0] + a_2p[1, 1] * f_pu[1] + a_2p[2, 1] * f_pu[2]
    f2 = a_2p[0, 2] * f_pu[0] + a_2p[1, 2] * f_pu[1] + a_2p[2, 2] * f_pu[2]
    for i in range(3):
        out[i] = a_c2[0, i] * f0 + a_c2[1, i] * f1 + a_c2[2, i] * f2
        out[3 + i] = a_2p[0, i] * m_pu[0] + a_2p[1, i] * m_pu[1] + a_2p[2, i] * m_pu[2]
    out[3] += r_2p[1] * f2 - r_2p[2] * f1
    out[4] += r_2p[2] * f0 - r_2p[0] * f2
    out[5] += r_2p[0] * f1 - r_2p[1] * f0


@njit(**NJIT_LEAF)
def axis_rotation(axis, a, R):
    """Frame rotation about axis 0/1/2 by ``a`` [rad] into ``R`` (3, 3) (maps old to new
    components): the elementary rotations of the initial relative attitude
    ``A_PAU = R_x(roll) R_y(pitch) R_z(yaw)``."""
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
