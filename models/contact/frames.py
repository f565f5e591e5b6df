"""Frames and kinematics of docking units (contact paper, section 3 and 8.2, 9.2).

Readable wrappers of :mod:`models._kernels.frames` (which unit kernels call directly). DCM
convention: ``A`` maps parent-frame components to child-frame components, ``u_child = A
u_parent``; the angular velocity of the child relative to the parent is
``skew(omega_child) = -Adot A^T`` and ``skew(omega_parent) = -A^T Adot``
(:func:`omega_from_dcm_rate`). The printed formulas' errors and their corrections are listed in
the kernel module's docstring (digest 14, items 1, 12, 13, 16).

References
----------
Seed digest ``docking-contact-models.md`` sections 2, 3, 8.2 and 9.2.
"""
from __future__ import annotations

from typing import Literal, NamedTuple, Sequence

import numpy as np

from models._kernels import frames as _f

__all__ = ["frame_rotation", "housing_dcm", "housing_omega_au", "head_rel_dcm",
           "head_rel_omega_head", "head_dcm", "ring_dcm", "ring_omega_au", "skew", "unskew",
           "omega_from_dcm_rate", "is_rotation", "RelativePose", "UnitVelocities",
           "relative_pose", "unit_velocities", "link_pose", "link_velocity", "wrench_to_c2"]


def _m() -> np.ndarray:
    return np.empty((3, 3))


def frame_rotation(axis: Literal["x", "y", "z"], q: float) -> np.ndarray:
    """Elementary frame rotation ``R_axis(q)`` (parent -> child components) [rad]."""
    out = _m()
    {"x": _f.frame_rot_x, "y": _f.frame_rot_y, "z": _f.frame_rot_z}[axis](float(q), out)
    return out


def housing_dcm(q1: float, q2: float) -> np.ndarray:
    """Movable housing ``A_AUB,1 = R_z(q2) R_y(q1)`` (AU -> housing), angles [rad]."""
    out = _m()
    _f.housing_dcm(float(q1), float(q2), out)
    return out


def housing_omega_au(q1: float, q2: float, dq1: float, dq2: float) -> np.ndarray:
    """Housing angular velocity relative to AU, AU components [rad/s]."""
    return np.array(_f.housing_omega_au(q1, q2, dq1, dq2))


def head_rel_dcm(q3: float, q4: float, q5: float) -> np.ndarray:
    """Head relative to housing ``R_x(q5) R_z(q4) R_y(q3)``."""
    out = _m()
    _f.head_rel_dcm(float(q3), float(q4), float(q5), out)
    return out


def head_rel_omega_head(q3: float, q4: float, q5: float, dq3: float, dq4: float,
                        dq5: float) -> np.ndarray:
    """Head angular velocity relative to the housing, head components [rad/s]."""
    return np.array(_f.head_rel_omega_head(q3, q4, q5, dq3, dq4, dq5))


def head_dcm(q: Sequence[float]) -> np.ndarray:
    """Probe head ``A_AUB,2 = R_x(q5) R_z(q4) R_y(q3) A_AUB,1`` for ``q = (q1, .., q5)``."""
    return head_rel_dcm(q[2], q[3], q[4]) @ housing_dcm(q[0], q[1])


def ring_dcm(q4: float, q5: float, q6: float) -> np.ndarray:
    """Docking ring ``A_R = R_x(q6) R_z(q5) R_y(q4)`` (yaw, pitch, roll) [rad]."""
    out = _m()
    _f.ring_dcm(float(q4), float(q5), float(q6), out)
    return out


def ring_omega_au(q4: float, q5: float, q6: float, dq4: float, dq5: float,
                  dq6: float) -> np.ndarray:
    """Ring angular velocity relative to AU, AU components (corrected column 2) [rad/s]."""
    return np.array(_f.ring_omega_au(q4, q5, q6, dq4, dq5, dq6))


def skew(w: Sequence[float]) -> np.ndarray:
    """``skew(w) @ b == cross(w, b)``."""
    x, y, z = (float(v) for v in w)
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def unskew(m: np.ndarray) -> np.ndarray:
    """Vector of the skew-symmetric part of ``m``."""
    m = 0.5 * (np.asarray(m) - np.asarray(m).T)
    return np.array([m[2, 1], m[0, 2], m[1, 0]])


def omega_from_dcm_rate(a: np.ndarray, a_dot: np.ndarray, *,
                        axes: Literal["child", "parent"] = "child") -> np.ndarray:
    """Angular velocity of the child frame relative to the parent from a DCM and its rate:
    ``-Adot A^T`` (child components) or ``-A^T Adot`` (parent components)."""
    a = np.asarray(a)
    a_dot = np.asarray(a_dot)
    return unskew(-a_dot @ a.T) if axes == "child" else unskew(-a.T @ a_dot)


def is_rotation(a: np.ndarray, tol: float = 1e-12) -> bool:
    """``A A^T = I`` and ``det A = +1`` to ``tol``."""
    a = np.asarray(a, float)
    return bool(np.allclose(a @ a.T, np.eye(3), atol=tol, rtol=0)
                and abs(np.linalg.det(a) - 1.0) < tol)


class RelativePose(NamedTuple):
    """Pose of a frame in PU: position [m] (PU axes) and DCM PU -> frame."""

    r: np.ndarray
    a: np.ndarray


class UnitVelocities(NamedTuple):
    """Absolute velocities of the unit frames, PU axes (digest 3.3)."""

    v_pu: np.ndarray
    omega_pu: np.ndarray
    v_au: np.ndarray
    omega_au: np.ndarray


def _v(x: Sequence[float]) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=float).reshape(3)


def _a(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=float).reshape(3, 3)


def relative_pose(r_c1: Sequence[float], a_c1: np.ndarray, r_c2: Sequence[float],
                  a_c2: np.ndarray, r_1a: Sequence[float], a_1a: np.ndarray,
                  r_2p: Sequence[float], a_2p: np.ndarray) -> RelativePose:
    """Active unit in the passive unit, ``(r_PAU, A_PAU)`` (digest 3.2).

    ``r_ci`` [m] inertial positions, ``a_ci`` inertial -> body DCMs; ``(r_1a, a_1a)`` the AU
    mounting in C1, ``(r_2p, a_2p)`` the PU mounting in C2 (with elastic terms already
    composed in, digest 3.1).
    """
    r = np.empty(3)
    a = _m()
    _f.relative_pose(_v(r_c1), _a(a_c1), _v(r_c2), _a(a_c2), _v(r_1a), _a(a_1a), _v(r_2p),
                     _a(a_2p), r, a)
    return RelativePose(r, a)


def unit_velocities(v_c1: Sequence[float], omega_1: Sequence[float], a_c1: np.ndarray,
                    r_1a: Sequence[float], v_c2: Sequence[float], omega_2: Sequence[float],
                    a_c2: np.ndarray, r_2p: Sequence[float], a_2p: np.ndarray
                    ) -> UnitVelocities:
    """Absolute velocities of the PU and AU frames in PU axes (digest 3.3, rigid craft).

    ``v_ci`` inertial [m/s]; ``omega_i`` body rates in body axes [rad/s] (what the gyros
    measure).
    """
    out = np.empty(12)
    _f.unit_velocities(_v(v_c1), _v(omega_1), _a(a_c1), _v(r_1a), _v(v_c2), _v(omega_2),
                       _a(a_c2), _v(r_2p), _a(a_2p), out)
    return UnitVelocities(out[0:3], out[3:6], out[6:9], out[9:12])


def link_pose(r_pau: Sequence[float], a_pau: np.ndarray, r_aub: Sequence[float],
              a_aub: np.ndarray) -> RelativePose:
    """Buffer link in PU, eq. (1.1) with the corrected ``A_PUB = A_AUB A_PAU``."""
    r = np.empty(3)
    a = _m()
    _f.link_pose(_v(r_pau), _a(a_pau), _v(r_aub), _a(a_aub), r, a)
    return RelativePose(r, a)


def link_velocity(v_au: Sequence[float], omega_au: Sequence[float], a_pau: np.ndarray,
                  r_aub: Sequence[float], v_b_a: Sequence[float], omega_b_a: Sequence[float]
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Buffer-link velocity and angular velocity in PU axes, eq. (1.2)."""
    out = np.empty(6)
    _f.link_velocity(_v(v_au), _v(omega_au), _a(a_pau), _v(r_aub), _v(v_b_a), _v(omega_b_a),
                     out)
    return out[0:3], out[3:6]


def wrench_to_c2(f_pu: Sequence[float], m_pu: Sequence[float], a_c2: np.ndarray,
                 r_2p: Sequence[float], a_2p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Passive wrench reduced to C2: force in inertial axes [N], moment in C2 axes [N m]."""
    out = np.empty(6)
    _f.wrench_to_c2(_v(f_pu), _v(m_pu), _a(a_c2), _v(r_2p), _a(a_2p), out)
    return out[0:3], out[3:6]
