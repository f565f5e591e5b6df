"""Penalty contact force law of the contact paper (digest section 5), readable layer.

.. math::

    \\dot\\Delta_n = \\mathbf n_R^T(\\mathbf v_{B,k} - \\mathbf v_{PU,k}),\\qquad
    f_R = \\max\\big(0,\\ k_S\\Delta_n + c_D\\dot\\Delta_n\\big),\\qquad
    \\mathbf f_{PU} = f_R\\,\\mathbf n_R + k_{Fr} f_R\\,
        \\frac{\\mathbf v_T}{\\sqrt{|\\mathbf v_T|^2 + v_\\varepsilon^2}},\\qquad
    \\mathbf f_B = -\\mathbf f_{PU},

with :math:`\\mathbf v_T` the tangential part of the relative velocity of the active point.
Both forces act at the single contact point, so the pair carries no net force or moment
(third law, angular momentum conserved). The tensile clamp, the friction regularization and the
optional Hunt-Crossley damping :math:`c_D\\Delta_n\\dot\\Delta_n` are the digest's dev-note
choices; the default is the paper's linear spring-damper. See
:func:`models._kernels.contact.contact_force` for the regularization's accuracy.

References
----------
Seed digest ``docking-contact-models.md`` sections 3.5, 5 and 12 (items 5, 7).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Literal, Sequence

import numpy as np

from models._kernels import contact as _k
from models.contact.detectors import Contact
from models.contact.primitives import vec3
from models.errors import InputError

__all__ = ["ContactLaw", "Twist", "ContactWrench", "contact_wrench"]


@dataclass(frozen=True)
class ContactLaw:
    """Parameters of the penalty law of one primitive pair.

    Parameters
    ----------
    stiffness
        :math:`k_S` [N/m], about 100 times the mechanism stiffness (digest 5).
    damping
        :math:`c_D` [N s/m] (``model="linear"``) or [N s/m^2] (``"hunt-crossley"``).
    friction
        Coulomb coefficient :math:`k_{Fr}` [-].
    slip_regularization
        :math:`v_\\varepsilon` [m/s] (digest suggests 1e-4 to 1e-3).
    model
        ``"linear"`` (the paper's :math:`k\\Delta + c\\dot\\Delta`) or ``"hunt-crossley"``.
    """

    stiffness: float
    damping: float = 0.0
    friction: float = 0.0
    slip_regularization: float = 1e-3
    model: Literal["linear", "hunt-crossley"] = "linear"

    def __post_init__(self) -> None:
        for key in ("stiffness", "damping", "friction", "slip_regularization"):
            v = float(getattr(self, key))
            if not np.isfinite(v) or v < 0.0:
                raise InputError(f"must be a finite number >= 0, got {v!r}", key=f"law.{key}")
        if not self.stiffness > 0.0:
            raise InputError("must be > 0", key="law.stiffness")
        if not self.slip_regularization > 0.0:
            raise InputError("must be > 0", key="law.slip_regularization")
        if self.model not in ("linear", "hunt-crossley"):
            raise InputError("must be 'linear' or 'hunt-crossley'", key="law.model")

    @cached_property
    def packed(self) -> np.ndarray:
        """``LAW_*`` layout of :mod:`models._kernels.contact`."""
        p = np.empty(_k.LAW_SIZE)
        p[_k.LAW_K] = self.stiffness
        p[_k.LAW_C] = self.damping
        p[_k.LAW_MU] = self.friction
        p[_k.LAW_VEPS] = self.slip_regularization
        p[_k.LAW_MODEL] = (_k.MODEL_LINEAR if self.model == "linear"
                           else _k.MODEL_HUNT_CROSSLEY)
        return p

    def pack(self) -> np.ndarray:
        return self.packed


@dataclass(frozen=True)
class Twist:
    """Velocity state of a body in PU axes.

    Parameters
    ----------
    velocity
        Velocity of the reference point [m/s].
    angular_velocity
        Angular velocity [rad/s].
    origin
        Reference point in PU [m] (link origin; PU origin for the passive unit).
    """

    velocity: tuple[float, float, float] = (0.0, 0.0, 0.0)
    angular_velocity: tuple[float, float, float] = (0.0, 0.0, 0.0)
    origin: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "velocity", vec3(self.velocity, "twist.velocity"))
        object.__setattr__(self, "angular_velocity",
                           vec3(self.angular_velocity, "twist.angular_velocity"))
        object.__setattr__(self, "origin", vec3(self.origin, "twist.origin"))

    @cached_property
    def packed(self) -> np.ndarray:
        """``TW_*`` layout."""
        return np.array(self.velocity + self.angular_velocity + self.origin, dtype=float)

    def point_velocity(self, p: Sequence[float]) -> np.ndarray:
        """Velocity of the body's material point ``p`` [m/s]."""
        return np.asarray(self.velocity) + np.cross(self.angular_velocity,
                                                    np.asarray(p) - np.asarray(self.origin))


@dataclass(frozen=True)
class ContactWrench:
    """Forces and moments of one contact, PU axes.

    Attributes
    ----------
    normal_force
        :math:`f_R` [N] (>= 0).
    depth_rate
        :math:`\\dot\\Delta_n` [m/s].
    force_passive
        Force on the passive body [N]; the active body gets ``-force_passive``.
    moment_passive
        Moment of ``force_passive`` about the passive reference point [N m].
    moment_active
        Moment of ``-force_passive`` about the active reference point [N m].
    point
        Application point in PU [m].
    """

    normal_force: float
    depth_rate: float
    force_passive: np.ndarray
    moment_passive: np.ndarray
    moment_active: np.ndarray
    point: np.ndarray

    @property
    def force_active(self) -> np.ndarray:
        """Force on the active body [N] (third law)."""
        return -self.force_passive

    def moment_about(self, q: Sequence[float], *, on: Literal["passive", "active"] = "passive"
                     ) -> np.ndarray:
        """Moment [N m] of the force on one body about the point ``q`` (PU)."""
        f = self.force_passive if on == "passive" else -self.force_passive
        return np.cross(self.point - np.asarray(q, float), f)

    def in_frame(self, a: np.ndarray, *, on: Literal["passive", "active"] = "active"
                 ) -> tuple[np.ndarray, np.ndarray]:
        """Force and moment (about that body's reference point) on one body in the axes of a
        frame with DCM ``a`` (PU -> frame), e.g. ``A_PUB,j`` for link axes (digest 5, step 7).
        """
        a = np.asarray(a, float)
        if on == "passive":
            return a @ self.force_passive, a @ self.moment_passive
        return a @ -self.force_passive, a @ self.moment_active


def contact_wrench(contact: Contact, active: Twist, passive: Twist, law: ContactLaw
                   ) -> ContactWrench:
    """Penalty wrench of one contact on both bodies (digest 5, steps 1-7)."""
    r = _k.contact_wrench(contact.depth, *contact.normal, *contact.point, active.packed,
                          passive.packed, law.packed)
    return ContactWrench(float(r[0]), float(r[1]), np.array(r[2:5]), np.array(r[5:8]),
                         np.array(r[8:11]), np.array(contact.point, dtype=float))
