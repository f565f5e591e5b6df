"""Rigid-body helpers: DCM / quaternion / Euler conversions and torque-free Newton-Euler."""
import numpy as np
import pytest

from models._kernels.rigid_body import euler_rhs, quat_deriv
from models.errors import InputError
from models.rigid_body import (RigidBody, dcm_from_euler, dcm_to_quat, euler_from_dcm,
                               quat_to_dcm, rot_x, rot_y, rot_z)


def test_dcm_quaternion_round_trip():
    rng = np.random.default_rng(1)
    for _ in range(50):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        q *= np.sign(q[0])
        A = quat_to_dcm(q)
        # orthonormal, proper (1e-12: a handful of roundings of unit-size numbers)
        assert np.allclose(A @ A.T, np.eye(3), atol=1e-12)
        assert np.linalg.det(A) == pytest.approx(1.0, abs=1e-12)
        assert np.allclose(dcm_to_quat(A), q, atol=1e-12)


def test_quaternion_dcm_is_inertial_to_body():
    # a body turned by +a about inertial Z: the inertial X axis seen in body axes is
    # (cos a, -sin a, 0), i.e. A = Rz(a) as a frame rotation
    a = 0.3
    q = np.array([np.cos(a / 2), 0.0, 0.0, np.sin(a / 2)])
    assert np.allclose(quat_to_dcm(q), rot_z(a), atol=1e-14)


def test_euler_round_trip():
    rng = np.random.default_rng(2)
    for _ in range(50):
        r, p, y = rng.uniform(-1.2, 1.2, 3)
        A = dcm_from_euler(r, p, y)
        assert np.allclose(A, rot_x(r) @ rot_y(p) @ rot_z(y))
        assert np.allclose(euler_from_dcm(A), (r, p, y), atol=1e-12)


def test_torque_free_rotation_conserves_energy_and_momentum():
    # asymmetric body spinning near its intermediate axis: RK4 with a 1 ms step keeps the
    # kinetic energy and the inertial angular momentum to 1e-9 relative over 20 s (RK4
    # error ~ (w h)^4 per step with |w| h ~ 1e-3)
    J = np.diag([10.0, 20.0, 30.0])
    Ji = np.linalg.inv(J)
    w = np.array([0.01, 0.5, 0.02])
    q = np.array([1.0, 0.0, 0.0, 0.0])
    y = np.concatenate([q, w])

    def f(y):
        d = np.empty(7)
        dw = np.empty(3)
        euler_rhs(J, Ji, y[4:], np.zeros(3), dw)
        quat_deriv(y, 0, y[4:], d, 0)
        d[4:] = dw
        return d

    def invariants(y):
        A = quat_to_dcm(y[:4] / np.linalg.norm(y[:4]))
        return 0.5 * y[4:] @ J @ y[4:], A.T @ (J @ y[4:])

    e0, L0 = invariants(y)
    h = 1e-3
    for _ in range(20000):
        k1 = f(y)
        k2 = f(y + 0.5 * h * k1)
        k3 = f(y + 0.5 * h * k2)
        k4 = f(y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        y[:4] /= np.linalg.norm(y[:4])
    e1, L1 = invariants(y)
    assert e1 == pytest.approx(e0, rel=1e-9)
    assert np.allclose(L1, L0, rtol=0, atol=1e-9 * np.linalg.norm(L0))


def test_rigid_body_validation_names_keys():
    with pytest.raises(InputError, match="'active.mass'"):
        RigidBody.from_dict({"mass": -1.0, "inertia": [1, 2, 3]}, "active")
    with pytest.raises(InputError, match="'passive.colour'"):
        RigidBody.from_dict({"mass": 1.0, "inertia": [1, 2, 3], "colour": 1}, "passive")
    with pytest.raises(InputError, match="positive definite"):
        RigidBody.from_dict({"mass": 1.0, "inertia": [1, -2, 3]}, "active")
