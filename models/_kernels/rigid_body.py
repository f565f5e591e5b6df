"""Rigid-body kernels: unit quaternions, direction-cosine matrices, Newton-Euler.

Conventions (as the contact digest §2 and §12.1):

* a quaternion ``q = [w, x, y, z]`` (scalar first, Hamilton product) describes the attitude of
  a body frame B relative to the inertial frame I;
* the direction-cosine matrix ``A(q)`` maps **inertial components to body components**,
  ``u_B = A u_I`` (the paper's ``A_C1``, ``A_C2``); ``A^T`` maps body to inertial;
* the body angular velocity ``w`` is in body components; kinematics
  ``q_dot = 1/2 q (x) [0, w]``;
* Newton-Euler in body axes: ``J w_dot = M - w x J w``.

Every model uses these: the docking units on their RK4 stages, the hydraulic test rig's
sequential-impulse solver between its steps (whose body rows keep the angular velocity in
inertial components, ``omega = A^T w``, where its impulses act: :func:`body_to_inertial`,
:func:`quat_integrate_inertial`).

Everything works on flat float64 arrays with explicit offsets, allocation-free, so the
docking kernels can call these at every RK4 stage.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from models._kernels import NJIT, NJIT_LEAF

__all__ = [
    "quat_to_dcm",
    "body_to_inertial",
    "quat_mul",
    "quat_integrate_inertial",
    "quat_deriv",
    "quat_normalize",
    "dcm_to_quat",
    "euler_rhs",
    "torque_free_rates",
    "mat_vec",
    "mat_t_vec",
    "cross",
]


@njit(**NJIT_LEAF)
def quat_to_dcm(q, o, A):
    """Write into ``A`` (3x3) the inertial->body DCM of quaternion ``q[o:o+4]``."""
    w = q[o]
    x = q[o + 1]
    y = q[o + 2]
    z = q[o + 3]
    # body->inertial rotation R; A = R^T
    A[0, 0] = 1.0 - 2.0 * (y * y + z * z)
    A[1, 0] = 2.0 * (x * y - w * z)
    A[2, 0] = 2.0 * (x * z + w * y)
    A[0, 1] = 2.0 * (x * y + w * z)
    A[1, 1] = 1.0 - 2.0 * (x * x + z * z)
    A[2, 1] = 2.0 * (y * z - w * x)
    A[0, 2] = 2.0 * (x * z - w * y)
    A[1, 2] = 2.0 * (y * z + w * x)
    A[2, 2] = 1.0 - 2.0 * (x * x + y * y)


@njit(**NJIT)
def body_to_inertial(q):
    """The body->inertial rotation ``A(q)^T`` (a new contiguous 3x3 array) of the quaternion
    ``q[0:4]``: body components to inertial ones."""
    A = np.empty((3, 3))
    quat_to_dcm(q, 0, A)
    R = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            R[i, j] = A[j, i]
    return R


@njit(**NJIT)
def quat_mul(a, b):
    """Hamilton product ``a (x) b`` of two scalar-first quaternions (a new array)."""
    out = np.empty(4)
    out[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3]
    out[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2]
    out[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1]
    out[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]
    return out


@njit(**NJIT)
def quat_integrate_inertial(q, omega, dt):
    """Advance ``q`` by the angular velocity ``omega`` [rad/s] in *inertial* components over
    ``dt`` [s] (exact exponential map for constant ``omega``: ``q <- exp(omega dt / 2) q``,
    the same motion as ``q_dot = 1/2 q (x) [0, w]`` with ``w = A omega``), renormalised;
    returns a new array."""
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


@njit(**NJIT_LEAF)
def quat_deriv(q, o, w, dq, od):
    """``dq[od:od+4] = 1/2 q (x) [0, w]`` with ``w`` the body angular velocity (3,)."""
    qw = q[o]
    qx = q[o + 1]
    qy = q[o + 2]
    qz = q[o + 3]
    dq[od] = 0.5 * (-qx * w[0] - qy * w[1] - qz * w[2])
    dq[od + 1] = 0.5 * (qw * w[0] + qy * w[2] - qz * w[1])
    dq[od + 2] = 0.5 * (qw * w[1] + qz * w[0] - qx * w[2])
    dq[od + 3] = 0.5 * (qw * w[2] + qx * w[1] - qy * w[0])


@njit(**NJIT)
def quat_normalize(q, o):
    """Renormalise ``q[o:o+4]`` in place (between steps only: one sqrt and one division)."""
    n = np.sqrt(q[o] ** 2 + q[o + 1] ** 2 + q[o + 2] ** 2 + q[o + 3] ** 2)
    inv = 1.0 / n
    for i in range(4):
        q[o + i] *= inv


@njit(**NJIT)
def dcm_to_quat(A, q):
    """Quaternion (scalar first, w >= 0) of the inertial->body DCM ``A`` (Shepperd's method)."""
    R00 = A[0, 0]
    R11 = A[1, 1]
    R22 = A[2, 2]
    # R = A^T
    R10 = A[0, 1]
    R01 = A[1, 0]
    R20 = A[0, 2]
    R02 = A[2, 0]
    R21 = A[1, 2]
    R12 = A[2, 1]
    tr = R00 + R11 + R22
    if tr > 0.0:
        s = 2.0 * np.sqrt(1.0 + tr)
        q[0] = 0.25 * s
        q[1] = (R21 - R12) / s
        q[2] = (R02 - R20) / s
        q[3] = (R10 - R01) / s
    elif R00 > R11 and R00 > R22:
        s = 2.0 * np.sqrt(1.0 + R00 - R11 - R22)
        q[0] = (R21 - R12) / s
        q[1] = 0.25 * s
        q[2] = (R01 + R10) / s
        q[3] = (R02 + R20) / s
    elif R11 > R22:
        s = 2.0 * np.sqrt(1.0 + R11 - R00 - R22)
        q[0] = (R02 - R20) / s
        q[1] = (R01 + R10) / s
        q[2] = 0.25 * s
        q[3] = (R12 + R21) / s
    else:
        s = 2.0 * np.sqrt(1.0 + R22 - R00 - R11)
        q[0] = (R10 - R01) / s
        q[1] = (R02 + R20) / s
        q[2] = (R12 + R21) / s
        q[3] = 0.25 * s
    if q[0] < 0.0:
        for i in range(4):
            q[i] = -q[i]


@njit(**NJIT_LEAF)
def euler_rhs(J, Jinv, w, M, dw):
    """Newton-Euler in body axes: ``dw = J^-1 (M - w x J w)``; ``J``, ``Jinv`` 3x3."""
    h0 = J[0, 0] * w[0] + J[0, 1] * w[1] + J[0, 2] * w[2]
    h1 = J[1, 0] * w[0] + J[1, 1] * w[1] + J[1, 2] * w[2]
    h2 = J[2, 0] * w[0] + J[2, 1] * w[1] + J[2, 2] * w[2]
    r0 = M[0] - (w[1] * h2 - w[2] * h1)
    r1 = M[1] - (w[2] * h0 - w[0] * h2)
    r2 = M[2] - (w[0] * h1 - w[1] * h0)
    dw[0] = Jinv[0, 0] * r0 + Jinv[0, 1] * r1 + Jinv[0, 2] * r2
    dw[1] = Jinv[1, 0] * r0 + Jinv[1, 1] * r1 + Jinv[1, 2] * r2
    dw[2] = Jinv[2, 0] * r0 + Jinv[2, 1] * r1 + Jinv[2, 2] * r2


@njit(**NJIT)
def torque_free_rates(J, Jinv, w0, h, out, col):
    """Body rates of a torque-free rigid body at ``t = k h``, ``k = 1 .. n``, from ``w0`` at
    ``t = 0`` (Euler's equations ``J w_dot = -w x J w``, RK4 with the step ``h`` [s], which may
    be negative: the rates *before* ``t = 0``).

    Writes ``out[n - k, col:col+3]`` for ``k = 1 .. n`` with ``n = out.shape[0]``, so that
    the rows of ``out`` are in increasing time when ``h < 0`` (row ``n - 1`` is ``t = h``,
    row 0 is ``t = n h``).
    """
    zero = np.zeros(3)
    w = w0.copy()
    k1 = np.empty(3)
    k2 = np.empty(3)
    k3 = np.empty(3)
    k4 = np.empty(3)
    wt = np.empty(3)
    n = out.shape[0]
    for k in range(1, n + 1):
        euler_rhs(J, Jinv, w, zero, k1)
        for i in range(3):
            wt[i] = w[i] + 0.5 * h * k1[i]
        euler_rhs(J, Jinv, wt, zero, k2)
        for i in range(3):
            wt[i] = w[i] + 0.5 * h * k2[i]
        euler_rhs(J, Jinv, wt, zero, k3)
        for i in range(3):
            wt[i] = w[i] + h * k3[i]
        euler_rhs(J, Jinv, wt, zero, k4)
        for i in range(3):
            w[i] += h / 6.0 * (k1[i] + 2.0 * (k2[i] + k3[i]) + k4[i])
            out[n - k, col + i] = w[i]


@njit(**NJIT_LEAF)
def mat_vec(A, v, out):
    """``out = A v`` for 3x3 ``A``."""
    a = A[0, 0] * v[0] + A[0, 1] * v[1] + A[0, 2] * v[2]
    b = A[1, 0] * v[0] + A[1, 1] * v[1] + A[1, 2] * v[2]
    c = A[2, 0] * v[0] + A[2, 1] * v[1] + A[2, 2] * v[2]
    out[0] = a
    out[1] = b
    out[2] = c


@njit(**NJIT_LEAF)
def mat_t_vec(A, v, out):
    """``out = A^T v`` for 3x3 ``A``."""
    a = A[0, 0] * v[0] + A[1, 0] * v[1] + A[2, 0] * v[2]
    b = A[0, 1] * v[0] + A[1, 1] * v[1] + A[2, 1] * v[2]
    c = A[0, 2] * v[0] + A[1, 2] * v[1] + A[2, 2] * v[2]
    out[0] = a
    out[1] = b
    out[2] = c


@njit(**NJIT_LEAF)
def cross(a, b, out):
    """``out = a x b`` (3,)."""
    x = a[1] * b[2] - a[2] * b[1]
    y = a[2] * b[0] - a[0] * b[2]
    z = a[0] * b[1] - a[1] * b[0]
    out[0] = x
    out[1] = y
    out[2] = z
