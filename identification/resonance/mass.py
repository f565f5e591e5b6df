"""Reduced mass by the added-mass method, (2.5) of [P] (digest B.6).

.. math::

    \\mu = \\rho^2\\,\\omega\\,\\Delta m\\,(2\\Delta\\omega)^{-1}

``omega``: phase-resonance frequency without the added mass [rad/s]; ``d_omega``: its decrease
with the added mass ``d_m`` [kg]; ``rho``: amplitude ratio of the attachment point to the
mode's reference point. ``exact=True`` uses
:math:`\\mu = \\rho^2\\Delta m\\,\\omega'^2/(\\omega^2-\\omega'^2)`, exact for any ``d_m`` (the
modal mass becomes :math:`\\mu + \\rho^2\\Delta m` at unchanged stiffness). For a nonlinear
mode compare both frequencies at the same amplitude.
"""
from __future__ import annotations

from models.errors import InputError

__all__ = ["reduced_mass"]


def reduced_mass(omega: float, d_omega: float, d_m: float, rho: float = 1.0, *,
                 exact: bool = False) -> float:
    """Reduced mass [kg] from two phase-resonance tests (see module docstring)."""
    if not (omega > 0 and 0 < d_omega < omega and d_m > 0):
        raise InputError("need omega > d_omega > 0 [rad/s] and d_m > 0 [kg]", key="added_mass")
    if exact:
        w1 = omega - d_omega
        return rho * rho * d_m * w1 * w1 / (omega * omega - w1 * w1)
    return rho * rho * omega * d_m / (2.0 * d_omega)
