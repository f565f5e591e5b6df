"""Own-resonance identification: amplitude sequence -> restoring force and damping.

Runs the inversions of :mod:`~.inversion` on an :class:`~.harmonics.AmplitudeSequence` and
assembles the full characteristics by parity (digest B.5):
:math:`\\varphi(x) = \\varphi^+(|x|) + \\mathrm{sign}(x)\\,\\varphi^-(|x|)`, damping force
:math:`H(v)` (odd) from (2.6), and the displacement-damping parts :math:`D^\\pm` from (2.4)
(the second harmonic taken at constant ``nu``, general form).

At one excitation frequency :math:`\\lambda(b)` cannot tell :math:`\\dot x D^+(x)` from
:math:`H(\\dot x)` (digest B.5, model-class caution); both are returned and the user chooses
the model class. The command line reports :math:`H(v)`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .abel import Characteristic
from .harmonics import AmplitudeSequence
from .inversion import (damping_even, damping_odd, restoring_even, restoring_odd,
                        velocity_damping)

__all__ = ["ResonanceCurves", "identify_own_resonance"]


@dataclass(frozen=True)
class ResonanceCurves:
    """The own characteristics of one mode from the Abel inversions of an amplitude sequence
    (an inversion, not a fit: the fitted refinement is :func:`recon.identify.refine_resonance`).

    Attributes
    ----------
    sequence
        The amplitude sequence used.
    restoring_odd, restoring_even
        :math:`\\varphi^-`, :math:`\\varphi^+` [N] on ``x > 0``.
    velocity_damping
        :math:`H(v)` [N] on ``v > 0``.
    damping_even, damping_odd
        :math:`D^+` [N s/m], :math:`D^-` [N s/m] on ``x > 0``.
    """

    sequence: AmplitudeSequence
    restoring_odd: Characteristic
    restoring_even: Characteristic
    velocity_damping: Characteristic
    damping_even: Characteristic
    damping_odd: Characteristic

    @property
    def b_max(self) -> float:
        return float(self.sequence.b[-1])

    @property
    def v_max(self) -> float:
        return float(self.sequence.v[-1])

    def restoring_force(self, x) -> np.ndarray:
        """Full restoring force :math:`\\varphi(x) = \\varphi^+(x) + \\varphi^-(x)` [N]."""
        return self.restoring_odd(x) + self.restoring_even(x)

    def damping_force(self, v) -> np.ndarray:
        """Velocity damping force :math:`H(v)` [N]."""
        return self.velocity_damping(v)


def identify_own_resonance(seq: AmplitudeSequence, *, method: str = "product",
                           below: str = "power", stiffness: str = "secant") -> ResonanceCurves:
    """Invert an amplitude sequence (constant excitation frequency ``seq.nu``).

    Parameters
    ----------
    seq
        From :func:`~.harmonics.amplitude_sequence`.
    method
        ``"product"`` (default) or ``"stieltjes"`` (paper (4.2)).
    below
        Law below the first amplitude (:mod:`~.abel`).
    stiffness
        Offset-to-force stiffness of :func:`~.inversion.restoring_even`.
    """
    kw = {"method": method, "below": below}
    return ResonanceCurves(
        sequence=seq,
        restoring_odd=restoring_odd(seq.b, seq.omega2, seq.mu, **kw),
        restoring_even=restoring_even(seq.b, seq.a0, seq.omega2, seq.mu, stiffness=stiffness, **kw),
        velocity_damping=velocity_damping(seq.v, seq.lam, **kw),
        damping_even=damping_even(seq.b, seq.lam, **kw),
        damping_odd=damping_odd(seq.b, seq.b2, seq.omega2, seq.mu, nu=seq.nu, **kw),
    )
