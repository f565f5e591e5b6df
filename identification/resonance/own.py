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
from .conditioning import node_scatter
from .harmonics import AmplitudeSequence
from .inversion import (damping_even, damping_odd, restoring_even, restoring_odd,
                        velocity_damping)

__all__ = ["ResonanceCurves", "identify_own_resonance", "Bands", "bootstrap_bands",
           "window_replicates"]


@dataclass(frozen=True)
class ResonanceCurves:
    """The own characteristics of one mode from the Abel inversions of an amplitude sequence
    (an inversion, not a fit: the fitted refinement is
    :func:`identification.resonance.refine.refine_resonance`).

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

    def interpolated(self, x) -> np.ndarray:
        """True where ``|x|`` [m] lies inside the gap of an amplitude jump."""
        return self.restoring_odd.interpolated(x)


def identify_own_resonance(seq: AmplitudeSequence, *, method: str = "product",
                           below: str = "power", stiffness: str = "secant",
                           monotone: bool = True, offset: bool = True) -> ResonanceCurves:
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
    monotone
        Regularise :math:`\\mu b^2\\omega^2` and :math:`\\lambda v^2` to non-decreasing before
        the inversions of :math:`\\varphi^-` and :math:`H` (:mod:`~.conditioning`), weighted by
        the windows merged in each node: neither can then take the wrong sign.
    offset
        Correct the restoring force for the offset's coupling with the first harmonic
        (:mod:`~.offset`, beyond the first approximation); zero for a symmetric
        characteristic up to noise.
    """
    gaps = seq.gaps
    kw = {"method": method, "below": below, "gaps": gaps}
    mono = {"monotone": monotone, "weights": seq.n_windows}
    vgaps = [(lo * seq.nu, hi * seq.nu) for lo, hi in gaps]
    curves = ResonanceCurves(
        sequence=seq,
        restoring_odd=restoring_odd(seq.b, seq.omega2, seq.mu, **kw, **mono),
        restoring_even=restoring_even(seq.b, seq.a0, seq.omega2, seq.mu, stiffness=stiffness, **kw),
        velocity_damping=velocity_damping(seq.v, seq.lam, method=method, below=below,
                                          gaps=vgaps, **mono),
        damping_even=damping_even(seq.b, seq.lam, **kw),
        damping_odd=damping_odd(seq.b, seq.b2, seq.omega2, seq.mu, nu=seq.nu, **kw),
    )
    if not offset:
        return curves
    from .offset import offset_corrected

    return offset_corrected(curves, lambda s: identify_own_resonance(
        s, method=method, below=below, stiffness=stiffness, monotone=monotone, offset=False))


@dataclass(frozen=True)
class Bands:
    """Pointwise bootstrap quantiles of the identified curves (:func:`bootstrap_bands`).

    Attributes
    ----------
    x, v
        Abscissae of the restoring force [m] (both signs) and of the damping force [m/s].
    restoring, damping
        ``(4, n)`` arrays: the 2.5, 16, 84 and 97.5 % quantiles [N].
    n_draws, seed
        Bootstrap replicates and their seed.
    """

    x: np.ndarray
    v: np.ndarray
    restoring: np.ndarray
    damping: np.ndarray
    n_draws: int
    seed: int

    QUANTILES = (2.5, 16.0, 84.0, 97.5)

    def as_dict(self) -> dict:
        r, d = self.restoring, self.damping
        return {"x": self.x, "restoring_lo95": r[0], "restoring_lo68": r[1],
                "restoring_hi68": r[2], "restoring_hi95": r[3], "v": self.v,
                "damping_lo95": d[0], "damping_lo68": d[1], "damping_hi68": d[2],
                "damping_hi95": d[3], "n_draws": self.n_draws, "seed": self.seed,
                "method": "residual moving-block bootstrap over the analysis windows "
                          "(blocks of 2k windows): omega2, lambda and a0 of every window "
                          "redrawn about their local smooth, merged into the nodes and "
                          "inverted again (own.window_replicates)"}


def window_replicates(seq, rng: np.random.Generator | None, names=("omega2", "lam", "a0")):
    """One bootstrap replicate of the node values of ``names``: residual moving-block
    bootstrap over the windows.

    Within each stretch between jumps the per-window values (time order) are smoothed by a
    local quadratic over ``4 k + 1`` windows (Savitzky-Golay, ``k`` the periods per window);
    the residuals are resampled in moving blocks of ``2 k`` windows (six-period windows
    sliding by one period are correlated over ``k`` windows), added back to the smooth, and
    merged into the nodes as the sequence's windows were. A kink (a dead zone's edge) leaves
    residuals of the smoother: the bands widen there, conservatively. ``rng=None``: the
    smooth alone (the centre of the replicates).
    """
    from scipy.signal import savgol_filter

    w = seq.windows
    member = w["member"]
    count = np.bincount(member, minlength=len(seq.b))
    gaps = seq.gaps
    stretch = np.zeros(len(member), int)
    for lo, hi in gaps:
        stretch += w["b"] >= hi
    L = max(2, 2 * int(seq.periods))
    out = {}
    for name in names:
        q = np.asarray(w[name], float)
        new = np.empty_like(q)
        for s_id in np.unique(stretch):
            ii = np.flatnonzero(stretch == s_id)
            qi = q[ii]
            width = min(4 * int(seq.periods) + 1, len(ii) if len(ii) % 2 else len(ii) - 1)
            smooth = savgol_filter(qi, width, min(2, width - 1)) if width >= 3 else qi
            r = qi - smooth
            n = len(ii)
            Lb = min(L, n)
            if rng is None:
                new[ii] = smooth
                continue
            starts = rng.integers(0, n - Lb + 1, size=int(np.ceil(n / Lb)))
            rs = np.concatenate([r[a:a + Lb] for a in starts])[:n]
            new[ii] = smooth + rs
        out[name] = np.bincount(member, weights=new, minlength=len(seq.b)) / count
    return out


def bootstrap_bands(curves: ResonanceCurves, x: np.ndarray, v: np.ndarray, *,
                    n_draws: int = 200, seed: int = 0, **inversion_kw) -> Bands:
    """Uncertainty bands of the restoring and damping forces from the window-to-window
    scatter of the measured quantities.

    Each replicate redraws ``omega2``, ``lam`` and ``a0`` at the nodes
    (:func:`window_replicates`: residual moving-block bootstrap over the windows; for a
    sequence without its windows, independent normal draws with
    :func:`~.conditioning.node_scatter`) and repeats :func:`identify_own_resonance` (the same
    ``inversion_kw``); the quantiles of the replicates at ``x`` [m] and ``v`` [m/s] are the
    bands. They describe the noise, not the method's bias (the first approximation's
    second-order error is not in them). The replicates include the offset correction (it
    carries noise of its own). Calibration (``test_paper_families.py``): on the preload family
    at 0.2 % displacement noise the 68 % half-width over the spread of the estimates over 8
    noise seeds has median 0.97 (restoring) and 1.06 (damping) along the curve (10-90 %:
    0.7-1.7 and 0.2-2.0); at 0.3 % noise the 95 % band holds the true restoring force at 97 %
    of the measured points of the dead-zone family and 79 % of the asymmetric one (whose
    remaining 0.4 % bias is not noise).
    """
    from dataclasses import replace

    seq = curves.sequence
    rng = np.random.default_rng(seed)
    kw = dict(inversion_kw)
    sig = None
    shift_r = shift_h = 0.0
    if seq.windows is None:
        sig = {k: node_scatter(seq.b, getattr(seq, k)) for k in ("omega2", "lam", "a0")}
    else:
        # the replicates scatter about the inversion of the smoothed windows: their
        # deviations from it are put about the estimate (bands centred on ``curves``)
        centre = identify_own_resonance(replace(seq, **window_replicates(seq, None)), **kw)
        shift_r = curves.restoring_force(x) - centre.restoring_force(x)
        shift_h = curves.damping_force(v) - centre.damping_force(v)
    R = np.empty((n_draws, len(x)))
    H = np.empty((n_draws, len(v)))
    for r in range(n_draws):
        if sig is None:
            pert = window_replicates(seq, rng)
        else:
            pert = {k: getattr(seq, k) + sig[k] * rng.standard_normal(len(seq.b))
                    for k in sig}
        c = identify_own_resonance(replace(seq, **pert), **kw)
        R[r] = c.restoring_force(x) + shift_r
        H[r] = c.damping_force(v) + shift_h
    q = Bands.QUANTILES
    return Bands(x=np.asarray(x, float), v=np.asarray(v, float),
                 restoring=np.percentile(R, q, axis=0), damping=np.percentile(H, q, axis=0),
                 n_draws=int(n_draws), seed=int(seed))
