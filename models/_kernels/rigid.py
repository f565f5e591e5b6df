"""Minimal rigid-body helpers for the hydraulic-rig kernels (quaternions, world inertia).

Kept small and self-contained so that it can be merged with the docking rigid-body module
(``models/rigid_body.py``, written separately) later. Quaternions are scalar-first
``(w, x, y, z)``, unit norm, and rotate body-frame vectors into the world frame.
Angular velocities are in the world frame.

Merge note: the docking kernels (``models/_kernels/rigid_body.py`` on the probe branch) use the
same quaternion (scalar first, Hamilton product, body relative to inertial) but the opposite
matrix, ``quat_to_dcm(q) = quat_to_matrix(q).T`` (inertial -> body), and body-frame angular
velocity ``w_B = R^T omega``. Replacing these helpers by theirs needs exactly those two
transposes in :mod:`models._kernels.hydraulic` (``_row_geometry``, the gyroscopic term and the
attitude update).

Body row layout (one float64 row per body, used by :mod:`models._kernels.hydraulic`):

* ``B_INVM``: inverse mass [1/kg] (0 = fixed body)
* ``B_IINV`` .. +3: inverse principal inertia in the body frame [1/(kg m^2)] (0 = fixed)
* ``B_POS`` .. +3: centre-of-mass position, world [m]
* ``B_Q`` .. +4: attitude quaternion body -> world
* ``B_VEL`` .. +3: centre-of-mass velocity, world [m/s]
* ``B_OMEGA`` .. +3: angular velocity, world [rad/s]
* ``B_FORCE`` .. +3: constant applied force, world [N] (gravity times mass, loads)
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from models._kernels import NJIT

__all__ = [
    "B_INVM", "B_IINV", "B_POS", "B_Q", "B_VEL", "B_OMEGA", "B_FORCE", "N_BODY",
    "quat_mul", "quat_rotate", "quat_to_matrix", "quat_integrate", "world_inverse_inertia",
    "euler_to_quat", "quat_to_euler",
]

B_INVM = 0
B_IINV = 1
B_POS = 4
B_Q = 7
B_VEL = 11
B_OMEGA = 14
B_FORCE = 17
N_BODY = 20


@njit(**NJIT)
def quat_mul(a, b):
    """Hamilton product ``a * b`` of two scalar-first quaternions."""
    out = np.empty(4)
    out[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3]
    out[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2]
    out[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1]
    out[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]
    return out


@njit(**NJIT)
def quat_to_matrix(q):
    """Rotation matrix (body -> world) of a unit quaternion."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    r = np.empty((3, 3))
    r[0, 0] = 1.0 - 2.0 * (y * y + z * z)
    r[0, 1] = 2.0 * (x * y - w * z)
    r[0, 2] = 2.0 * (x * z + w * y)
    r[1, 0] = 2.0 * (x * y + w * z)
    r[1, 1] = 1.0 - 2.0 * (x * x + z * z)
    r[1, 2] = 2.0 * (y * z - w * x)
    r[2, 0] = 2.0 * (x * z - w * y)
    r[2, 1] = 2.0 * (y * z + w * x)
    r[2, 2] = 1.0 - 2.0 * (x * x + y * y)
    return r


@njit(**NJIT)
def quat_rotate(q, v):
    """Rotate the body-frame vector ``v`` into the world frame."""
    return quat_to_matrix(q) @ v


@njit(**NJIT)
def quat_integrate(q, omega, dt):
    """Advance ``q`` by the world angular velocity ``omega`` [rad/s] over ``dt`` [s]
    (exact exponential map for constant ``omega``), renormalised."""
    wn = math.sqrt(omega[0] ** 2 + omega[1] ** 2 + omega[2] ** 2)
    half = 0.5 * wn * dt
    dq = np.empty(4)
    if wn * dt < 1e-12:
        dq[0] = 1.0
        dq[1] = 0.5 * dt * omega[0]
        dq[2] = 0.5 * dt * omega[1]
        dq[3] = 0.5 * dt * omega[2]
    else:
        s = math.sin(half) / wn
        dq[0] = math.cos(half)
        dq[1] = s * omega[0]
        dq[2] = s * omega[1]
        dq[3] = s * omega[2]
    out = quat_mul(dq, q)
    n = math.sqrt(out[0] ** 2 + out[1] ** 2 + out[2] ** 2 + out[3] ** 2)
    return out / n


@njit(**NJIT)
def world_inverse_inertia(q, iinv_body):
    """World-frame inverse inertia ``R diag(iinv_body) R^T`` [1/(kg m^2)]."""
    r = quat_to_matrix(q)
    out = np.zeros((3, 3))
    for a in range(3):
        for b in range(3):
            s = 0.0
            for k in range(3):
                s += r[a, k] * iinv_body[k] * r[b, k]
            out[a, b] = s
    return out


def euler_to_quat(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """Quaternion of the z-y-x (yaw, pitch, roll) Tait-Bryan angles [rad] (plain numpy)."""
    cr, sr = math.cos(0.5 * roll), math.sin(0.5 * roll)
    cp, sp = math.cos(0.5 * pitch), math.sin(0.5 * pitch)
    cy, sy = math.cos(0.5 * yaw), math.sin(0.5 * yaw)
    return np.array([cr * cp * cy + sr * sp * sy,
                     sr * cp * cy - cr * sp * sy,
                     cr * sp * cy + sr * cp * sy,
                     cr * cp * sy - sr * sp * cy])


def quat_to_euler(q: np.ndarray) -> tuple[float, float, float]:
    """Inverse of :func:`euler_to_quat`: (roll, pitch, yaw) [rad]."""
    w, x, y, z = (float(v) for v in q)
    roll = math.atan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    pitch = math.asin(max(-1.0, min(1.0, 2.0 * (w * y - z * x))))
    yaw = math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return roll, pitch, yaw
