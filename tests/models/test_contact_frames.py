"""Frame kinematics (digest 3, 8.2, 9.2): orthonormal DCMs, angular velocities equal central
finite differences of the rotation matrices, point velocities equal differences of positions."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.linalg import expm

from models.contact import frames as F

H = 1e-6        # [s] central-difference step
FD_TOL = 1e-7   # truncation O(H^2 * |q''|) ~ 1e-12 plus rounding ~ 1e-16 / H ~ 1e-10

_ang = st.floats(-1.2, 1.2)
_rate = st.floats(-2.0, 2.0)


def _fd(fun, t=0.0):
    return (fun(t + H) - fun(t - H)) / (2 * H)


@settings(max_examples=60, deadline=None)
@given(q=st.tuples(*[_ang] * 6))
def test_dcms_are_rotations(q):
    for a in (F.housing_dcm(q[0], q[1]), F.head_rel_dcm(q[2], q[3], q[4]), F.head_dcm(q[:5]),
              F.ring_dcm(q[3], q[4], q[5]), F.frame_rotation("x", q[0]),
              F.frame_rotation("y", q[1]), F.frame_rotation("z", q[2])):
        assert F.is_rotation(a, 1e-12)


def test_housing_matrix_is_rz_ry_and_printed_one_is_not_orthogonal():
    q1, q2 = 0.3, -0.5
    assert np.allclose(F.housing_dcm(q1, q2),
                       F.frame_rotation("z", q2) @ F.frame_rotation("y", q1), atol=1e-15)
    printed = F.housing_dcm(q1, q2).copy()
    printed[0, 1] = -printed[0, 1]          # the printed (1,2) entry -s2
    assert not F.is_rotation(printed, 1e-3)
    assert np.allclose(F.ring_dcm(0.1, 0.2, 0.3), F.frame_rotation("x", 0.3)
                       @ F.frame_rotation("z", 0.2) @ F.frame_rotation("y", 0.1), atol=1e-15)


@settings(max_examples=60, deadline=None)
@given(q=st.tuples(*[_ang] * 6), dq=st.tuples(*[_rate] * 6))
def test_angular_velocities_equal_finite_differences(q, dq):
    q = np.array(q)
    dq = np.array(dq)

    def path(t):
        return q + dq * t

    # housing: the printed vector is the angular velocity in AU (parent) components
    a = F.housing_dcm(q[0], q[1])
    a_dot = _fd(lambda t: F.housing_dcm(*path(t)[:2]))
    w_au = F.housing_omega_au(q[0], q[1], dq[0], dq[1])
    assert np.allclose(w_au, F.omega_from_dcm_rate(a, a_dot, axes="parent"), atol=FD_TOL)
    # head relative to the housing, head components
    r = F.head_rel_dcm(*q[2:5])
    r_dot = _fd(lambda t: F.head_rel_dcm(*path(t)[2:5]))
    assert np.allclose(F.head_rel_omega_head(*q[2:5], *dq[2:5]),
                       F.omega_from_dcm_rate(r, r_dot, axes="child"), atol=FD_TOL)
    # head total, AU components: omega_B2 = omega_B1 + A_AUB2^T omega_rel
    a2 = F.head_dcm(q[:5])
    a2_dot = _fd(lambda t: F.head_dcm(path(t)[:5]))
    w2 = w_au + a2.T @ F.head_rel_omega_head(*q[2:5], *dq[2:5])
    assert np.allclose(w2, F.omega_from_dcm_rate(a2, a2_dot, axes="parent"), atol=FD_TOL)
    # ring (corrected column 2), AU components
    ar = F.ring_dcm(*q[3:6])
    ar_dot = _fd(lambda t: F.ring_dcm(*path(t)[3:6]))
    w_fd = F.omega_from_dcm_rate(ar, ar_dot, axes="parent")
    assert np.allclose(F.ring_omega_au(*q[3:6], *dq[3:6]), w_fd, atol=FD_TOL)


def test_printed_ring_rate_matrix_fails_finite_differences():
    q4, q5, q6, d4, d5, d6 = 0.4, 0.3, -0.2, 0.0, 1.0, 0.0
    s4, c4, s5, c5 = math.sin(q4), math.cos(q4), math.sin(q5), math.cos(q5)
    printed = np.array([[0, c4, c4 * c5], [1, 0, s5], [0, -s4, -s4 * c5]]) @ [d4, d5, d6]
    a = F.ring_dcm(q4, q5, q6)
    a_dot = _fd(lambda t: F.ring_dcm(q4 + d4 * t, q5 + d5 * t, q6 + d6 * t))
    w_fd = F.omega_from_dcm_rate(a, a_dot, axes="parent")
    assert np.linalg.norm(printed - w_fd) > 0.1
    assert np.allclose(F.ring_omega_au(q4, q5, q6, d4, d5, d6), w_fd, atol=FD_TOL)


def _attitude(a0, w_body, t):
    """Exact attitude for a constant body rate: Adot = -skew(w) A."""
    return expm(-F.skew(w_body) * t) @ a0


def _random_rotation(rng):
    q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    return q * np.sign(np.linalg.det(q))


@pytest.mark.parametrize("seed", range(5))
def test_unit_velocities_and_links_equal_finite_differences(seed):
    """Two spacecraft in uniform motion (constant body rates), mounting offsets, a housing
    link turning with q1, q2 and a head link at the probe tip: the section-3 velocities equal
    central differences of the section-3 poses."""
    rng = np.random.default_rng(seed)
    r_c1, r_c2 = rng.normal(size=3), rng.normal(size=3)
    v_c1, v_c2 = rng.normal(size=3), rng.normal(size=3)
    w1, w2 = rng.normal(size=3) * 0.3, rng.normal(size=3) * 0.3
    a_c1, a_c2 = _random_rotation(rng), _random_rotation(rng)
    r_1a, r_2p = rng.normal(size=3), rng.normal(size=3)
    a_1a, a_2p = _random_rotation(rng), _random_rotation(rng)
    q0, dq = rng.uniform(-0.5, 0.5, 5), rng.uniform(-1, 1, 5)
    l_m = 0.8

    def state(t):
        a1 = _attitude(a_c1, w1, t)
        a2 = _attitude(a_c2, w2, t)
        pose = F.relative_pose(r_c1 + v_c1 * t, a1, r_c2 + v_c2 * t, a2, r_1a, a_1a, r_2p,
                               a_2p)
        q = q0 + dq * t
        a_aub = F.head_dcm(q)
        r_aub = F.housing_dcm(q[0], q[1]).T @ [l_m, 0, 0]     # head at the end of the probe
        link = F.link_pose(pose.r, pose.a, r_aub, a_aub)
        return a1, a2, pose, link, a_2p @ a2, a_1a @ a1

    a1, a2, pose, link, a_pu, a_au = state(0.0)
    vel = F.unit_velocities(v_c1, w1, a1, r_1a, v_c2, w2, a2, r_2p, a_2p)
    # frame angular velocities: omega_PU in PU = -Adot A^T of the PU attitude
    a_pu_dot = _fd(lambda t: state(t)[4])
    assert np.allclose(vel.omega_pu, F.omega_from_dcm_rate(a_pu, a_pu_dot), atol=FD_TOL)
    a_au_dot = _fd(lambda t: state(t)[5])
    assert np.allclose(vel.omega_au, pose.a.T @ F.omega_from_dcm_rate(a_au, a_au_dot),
                       atol=FD_TOL)
    # relative motion seen in the rotating PU axes
    r_dot = _fd(lambda t: state(t)[2].r)
    assert np.allclose(r_dot, vel.v_au - vel.v_pu - np.cross(vel.omega_pu, pose.r), atol=1e-6)
    a_pau_dot = _fd(lambda t: state(t)[2].a)
    assert np.allclose(vel.omega_au - vel.omega_pu,
                       F.omega_from_dcm_rate(pose.a, a_pau_dot, axes="parent"), atol=FD_TOL)
    # eq. (1.2) for the head link: relative to AU it moves with q(t)
    q = q0
    w_b1 = F.housing_omega_au(q[0], q[1], dq[0], dq[1])
    a_b1 = F.housing_dcm(q[0], q[1])
    a_b2 = F.head_dcm(q)
    w_b2 = w_b1 + a_b2.T @ F.head_rel_omega_head(*q[2:5], *dq[2:5])
    v_b_a = np.cross(w_b1, a_b1.T @ [l_m, 0, 0])         # v of the head centre, AU axes
    v_b, w_b = F.link_velocity(vel.v_au, vel.omega_au, pose.a, a_b1.T @ [l_m, 0, 0], v_b_a,
                               w_b2)
    r_b_dot = _fd(lambda t: state(t)[3].r)
    assert np.allclose(r_b_dot, v_b - vel.v_pu - np.cross(vel.omega_pu, link.r), atol=1e-6)
    a_pub_dot = _fd(lambda t: state(t)[3].a)
    assert np.allclose(w_b - vel.omega_pu,
                       F.omega_from_dcm_rate(link.a, a_pub_dot, axes="parent"), atol=FD_TOL)


def test_wrench_reduced_to_c2():
    rng = np.random.default_rng(1)
    a_c2, a_2p = _random_rotation(rng), _random_rotation(rng)
    r_2p, p, f = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
    force, moment = F.wrench_to_c2(f, np.cross(p, f), a_c2, r_2p, a_2p)
    # the same force applied at the same point, expressed directly in C2
    assert np.allclose(force, a_c2.T @ a_2p.T @ f)
    assert np.allclose(moment, np.cross(r_2p + a_2p.T @ p, a_2p.T @ f))
