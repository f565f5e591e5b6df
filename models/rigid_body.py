"""Rigid spacecraft: mass properties, attitude helpers and Newton-Euler (readable layer).

The compiled versions live in :mod:`models._kernels.rigid_body`; this module gives the
frozen dataclass the scenario files build and small numpy helpers (Euler angles of the
relative attitude used by the initial-condition files and the telemetry).

Frames and conventions are those of the contact digest (§2, §12.1): a direction-cosine matrix
"of frame Y relative to frame X" maps X components to Y components; spacecraft attitude is a
scalar-first unit quaternion whose DCM maps inertial to body components.

References
----------
Golubev & Yaskevich (2020), digest ``docking-contact-models.md`` §2, §3, §12.1.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import math

import numpy as np

from models.errors import InputError
from models.limits import check_range

__all__ = [
    "RigidBody",
    "quat_from_euler",
    "euler_from_quat",
    "rot_x",
    "rot_y",
    "rot_z",
    "dcm_from_euler",
    "euler_from_dcm",
    "dcm_to_quat",
    "quat_to_dcm",
]


def rot_x(a: float) -> np.ndarray:
    """Frame rotation about X by ``a`` [rad] (maps old to new components)."""
    c, s = np.cos(a), np.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, s], [0.0, -s, c]])


def rot_y(a: float) -> np.ndarray:
    """Frame rotation about Y by ``a`` [rad]."""
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0.0, -s], [0.0, 1.0, 0.0], [s, 0.0, c]])


def rot_z(a: float) -> np.ndarray:
    """Frame rotation about Z by ``a`` [rad]."""
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])


def dcm_from_euler(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """DCM of the 3-2-1 (yaw Z, pitch Y, roll X) sequence: ``A = Rx(roll) Ry(pitch) Rz(yaw)``.

    The returned matrix maps parent components to child components. This is the convention of
    ``rel_roll``, ``rel_pitch``, ``rel_yaw`` (attitude of the active unit frame relative to the
    passive unit frame).
    """
    return rot_x(roll) @ rot_y(pitch) @ rot_z(yaw)


def euler_from_dcm(A: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Inverse of :func:`dcm_from_euler`; works on one (3, 3) or a stack (..., 3, 3) [rad]."""
    A = np.asarray(A, dtype=float)
    pitch = np.arcsin(np.clip(-A[..., 0, 2], -1.0, 1.0))
    yaw = np.arctan2(A[..., 0, 1], A[..., 0, 0])
    roll = np.arctan2(A[..., 1, 2], A[..., 2, 2])
    return roll, pitch, yaw


def quat_to_dcm(q: np.ndarray) -> np.ndarray:
    """Inertial->body DCM of a scalar-first quaternion (numpy; the kernel has its own)."""
    from models._kernels.rigid_body import quat_to_dcm as _k

    A = np.empty((3, 3))
    _k(np.asarray(q, dtype=float), 0, A)
    return A


def dcm_to_quat(A: np.ndarray) -> np.ndarray:
    """Scalar-first unit quaternion (w >= 0) of an inertial->body DCM."""
    from models._kernels.rigid_body import dcm_to_quat as _k

    q = np.empty(4)
    _k(np.ascontiguousarray(A, dtype=float), q)
    return q


def quat_from_euler(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """Scalar-first quaternion of the 3-2-1 (yaw Z, pitch Y, roll X) angles [rad] of
    :func:`dcm_from_euler`: ``quat_to_dcm(quat_from_euler(r, p, y)) = dcm_from_euler(r, p, y)``
    (the half-angle product, without forming the matrix)."""
    cr, sr = math.cos(0.5 * roll), math.sin(0.5 * roll)
    cp, sp = math.cos(0.5 * pitch), math.sin(0.5 * pitch)
    cy, sy = math.cos(0.5 * yaw), math.sin(0.5 * yaw)
    return np.array([cr * cp * cy + sr * sp * sy,
                     sr * cp * cy - cr * sp * sy,
                     cr * sp * cy + sr * cp * sy,
                     cr * cp * sy - sr * sp * cy])


def euler_from_quat(q: np.ndarray) -> tuple[float, float, float]:
    """Inverse of :func:`quat_from_euler`: (roll, pitch, yaw) [rad] of a scalar-first
    quaternion, as :func:`euler_from_dcm` of its DCM."""
    w, x, y, z = (float(v) for v in q)
    roll = math.atan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    pitch = math.asin(max(-1.0, min(1.0, 2.0 * (w * y - z * x))))
    yaw = math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return roll, pitch, yaw


def _vec(d: Mapping[str, Any], key: str, n: int, prefix: str, default=None) -> np.ndarray:
    if key not in d:
        if default is None:
            raise InputError("missing", key=f"{prefix}{key}")
        return np.asarray(default, dtype=float)
    try:
        a = np.asarray(d[key], dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"expected {n} numbers", key=f"{prefix}{key}") from None
    if a.size != n or not np.all(np.isfinite(a)):
        raise InputError(f"expected {n} finite numbers", key=f"{prefix}{key}")
    return a.reshape(-1)


@dataclass(frozen=True)
class RigidBody:
    """A rigid spacecraft and the mounting of its docking unit.

    Parameters
    ----------
    mass
        Mass [kg].
    inertia
        Inertia tensor about the centre of mass in body axes [kg m^2], (3, 3), symmetric,
        positive definite.
    unit_offset
        Position of the docking-unit frame origin relative to the centre of mass, in body axes
        [m] (the paper's ``l_1A`` / ``l_2P``).
    unit_orientation
        Roll, pitch, yaw [rad] of the unit frame relative to the body frame (3-2-1, see
        :func:`dcm_from_euler`); its DCM is the paper's ``gamma_1A`` / ``gamma_2P``.
    """

    mass: float
    inertia: np.ndarray
    unit_offset: np.ndarray = field(default_factory=lambda: np.zeros(3))
    unit_orientation: np.ndarray = field(default_factory=lambda: np.zeros(3))
    name: str = "body"

    def __post_init__(self) -> None:
        p = f"{self.name}."
        if not np.isfinite(self.mass):
            raise InputError(f"mass must be a finite number [kg], got {self.mass!r}",
                             key=p + "mass")
        if not self.mass > 0.0:
            raise InputError("mass must be positive [kg]", key=p + "mass")
        check_range(p + "mass", float(self.mass))
        J = np.asarray(self.inertia, dtype=float)
        if J.shape != (3, 3) or not np.all(np.isfinite(J)):
            raise InputError("inertia must be a 3x3 matrix [kg m^2]", key=p + "inertia")
        if not np.allclose(J, J.T, rtol=1e-12, atol=1e-9 * max(1.0, np.abs(J).max())):
            raise InputError("inertia must be symmetric", key=p + "inertia")
        if np.linalg.eigvalsh(J).min() <= 0.0:
            raise InputError("inertia must be positive definite", key=p + "inertia")
        ev = np.linalg.eigvalsh(J)
        for e in ev:
            check_range(p + "inertia", float(e))
        # principal moments of a body obey the triangle inequality (J1 <= J2 + J3 with
        # equality for a plane lamina): a set that violates it is no mass distribution
        if ev[2] > (ev[0] + ev[1]) * (1.0 + 1e-9):
            raise InputError(f"principal moments {ev[0]:.6g}, {ev[1]:.6g}, {ev[2]:.6g} kg m^2 "
                             "violate the triangle inequality (the largest exceeds the sum "
                             "of the other two): no body has them", key=p + "inertia")

    @property
    def unit_dcm(self) -> np.ndarray:
        """Body->unit DCM (``gamma``)."""
        r, pch, y = self.unit_orientation
        return dcm_from_euler(r, pch, y)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], name: str) -> "RigidBody":
        """Build from a plain dict (SI): ``mass``, ``inertia`` (3 principal values or 3x3),
        ``unit_offset`` (3), ``unit_orientation`` (3). Unknown keys are errors."""
        from models.schema import BODY

        known = BODY.names()
        for k in d:
            if k not in known:
                raise InputError(f"unknown key (expected one of {sorted(known)})", key=f"{name}.{k}")
        if "mass" not in d:
            raise InputError("missing", key=f"{name}.mass")
        if "inertia" not in d:
            raise InputError("missing", key=f"{name}.inertia")
        try:
            mass = float(d["mass"])
            J = np.asarray(d["inertia"], dtype=float)
        except (TypeError, ValueError):
            raise InputError("not a number", key=f"{name}.mass or {name}.inertia") from None
        if J.shape == (3,):
            J = np.diag(J)
        if J.shape == (9,):
            J = J.reshape(3, 3)
        return cls(mass=mass, inertia=J,
                   unit_offset=_vec(d, "unit_offset", 3, f"{name}.", np.zeros(3)),
                   unit_orientation=_vec(d, "unit_orientation", 3, f"{name}.", np.zeros(3)),
                   name=name)
