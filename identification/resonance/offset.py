"""Offset correction of the restoring-force inversions (beyond [P]'s first approximation).

The inversions (2.4) read the sin-harmonic balance (F1) and the mean balance (F3) of the
response ``x = a + b sin(psi)`` with the offset ``a`` left out of the first: an even part
:math:`\\varphi^+` shifts the mean, and the shifted motion samples :math:`\\varphi` off-centre,
which changes its first harmonic at second order,

.. math::

    \\mu\\omega^2(b) = \\frac{1}{\\pi b}\\int_0^{2\\pi}\\varphi(a + b\\sin\\psi)\\sin\\psi\\,d\\psi,
    \\qquad \\langle\\varphi(a + b\\sin\\psi)\\rangle = 0, \\qquad a_0 = 2a

(harmonic balance of the zero and first harmonics with the offset kept). For an asymmetric
stiffness :math:`c x + d|x|` the first approximation gives the odd part as
:math:`(c - 8d^2/(\\pi^2 c)) x`: 3.2 % low at ``d/c = 0.2``, against an exact bilinear
frequency 3.0 % low (so the offset balance holds almost all of the first approximation's
error; the rest is in the higher harmonics).

Correction: with :math:`\\mathcal I` the inversions (2.4), :math:`\\mathcal G_a` the offset
balance above and :math:`\\mathcal G_0` the same quadrature of (F1) and (F3) without the offset
(the forward relations the inversions invert),

.. math::

    \\varphi_{k+1} = \\varphi_0 - \\bigl(\\mathcal I[\\mathcal G_a(\\varphi_k)]
                                - \\mathcal I[\\mathcal G_0(\\varphi_k)]\\bigr),
    \\qquad \\varphi_0 = \\mathcal I[\\text{measured}],

so that a fixed point reproduces the measured :math:`\\omega^2(b)`, :math:`a_0(b)` through the
offset balance to first order in the correction. Taking the difference of two predictions by
the same quadrature of the same tabulated :math:`\\varphi_k` cancels the tabulation's own error
(a preload's jump at 0 resolved on the evaluation grid, the law below the first amplitude);
the plain defect correction :math:`\\varphi_k + \\mathcal I[\\text{measured}] -
\\mathcal I[\\mathcal G_a(\\varphi_k)]` did not (it raised the preload family's largest error
from 0.7 % to 1.5 %). Each step is a
quadrature at the measured amplitudes and two inversions (no simulation). For a symmetric
characteristic :math:`a = 0` and :math:`\\mathcal G` equals (F1), so the correction is zero up
to noise. The damping inversions are not changed.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

__all__ = ["offset_balance", "offset_corrected"]

N_PSI = 256


def offset_balance(phi, b: np.ndarray, mu: float, n_psi: int = N_PSI, newton: int = 8,
                   offset: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Zero and first harmonic balance with the offset kept (module docstring).

    Parameters
    ----------
    phi
        Restoring force ``phi(x)`` [N], vectorised, non-decreasing.
    b
        First-harmonic amplitudes [m].
    mu
        Reduced mass [kg].
    offset
        False: the first approximation's (F1) and (F3) by the same quadrature (``a`` = 0 in
        the first harmonic, ``a0 = -2 <phi(b sin psi)> / (mu omega^2)``).

    Returns
    -------
    a0, omega2 : numpy.ndarray
        Twice the offset [m] and :math:`\\omega^2` [rad^2/s^2] at each ``b``.
    """
    b = np.asarray(b, float)
    s = np.sin((np.arange(n_psi) + 0.5) * 2 * np.pi / n_psi)[None, :]
    if not offset:
        f = phi(b[:, None] * s)
        w2 = 2.0 * (f * s).mean(axis=1) / (b * mu)
        return -2.0 * f.mean(axis=1) / (mu * w2), w2
    a = np.zeros(len(b))
    lo, hi = -b.copy(), b.copy()
    for _ in range(newton):  # Newton safeguarded by a bisection bracket
        g = phi(a[:, None] + b[:, None] * s).mean(axis=1)
        h = 1e-6 * b
        dg = (phi((a + h)[:, None] + b[:, None] * s).mean(axis=1) - g) / h
        hi = np.where(g > 0, a, hi)
        lo = np.where(g <= 0, a, lo)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(dg > 0, a - g / dg, 0.5 * (lo + hi))
        a = np.where((step >= lo) & (step <= hi), step, 0.5 * (lo + hi))
    w2 = 2.0 * (phi(a[:, None] + b[:, None] * s) * s).mean(axis=1) / (b * mu)
    return 2.0 * a, w2


def _extended(curves):
    """The restoring force of ``curves``, continued linearly (the slope of its last grid
    interval on each side) beyond the largest amplitude: the offset balance at the last
    amplitudes samples ``|x|`` up to ``b + |a|``, and the tabulated curve would be held flat
    there (which made the corrected force swing by 6 % over the top tenth of the range).

    Both parts are piecewise linear on the same nodes (``0`` and ``+-`` the evaluation grid),
    so their sum is tabulated once on those nodes and each call is one interpolation (the
    balance evaluates it some twenty times per correction step on every amplitude and
    quadrature angle)."""
    xg = curves.restoring_odd.x
    X = np.r_[-xg[::-1], 0.0, xg]
    F = curves.restoring_force(X)
    x2 = X[-1]
    s_hi = (F[-1] - F[-2]) / (X[-1] - X[-2])
    s_lo = (F[1] - F[0]) / (X[1] - X[0])

    def phi(x):
        x = np.asarray(x, float)
        out = np.interp(x, X, F)
        out = np.where(x > x2, out + s_hi * (x - x2), out)
        return np.where(x < -x2, out + s_lo * (x + x2), out)
    return phi


def offset_corrected(curves, invert, iterations: int = 3, n_coarse: int = 24):
    """The restoring-force parts of ``curves`` after ``iterations`` defect-correction steps.

    Parameters
    ----------
    curves : identification.resonance.own.ResonanceCurves
        The first-approximation inversion of the measured sequence.
    invert
        ``invert(sequence) -> ResonanceCurves``: the same inversion (same settings) applied to
        a sequence with other ``omega2`` and ``a0``.
    iterations
        Correction steps (the change after the third is below 1e-4 relative on the
        asymmetric family at ``d/c = 0.2``).
    n_coarse
        Amplitudes (evenly spaced in index) at which the correction is computed; linear
        interpolation in between.

    Returns
    -------
    ResonanceCurves
        ``curves`` with corrected ``restoring_odd`` and ``restoring_even``.
    """
    seq = curves.sequence
    odd0, even0 = curves.restoring_odd.value, curves.restoring_even.value
    xg = curves.restoring_odd.x
    # the correction is computed on at most n_coarse amplitudes and interpolated: it is a
    # smooth second-order term, and inverting the predictions of a noisy estimate node by
    # node amplified the noise (asymmetric family at 0.3 % noise: odd part scattered by 10 %
    # on the full grid, 1.5 % on the coarse one)
    sub = np.unique(np.linspace(0, len(seq.b) - 1, min(n_coarse, len(seq.b))).astype(int))
    coarse = replace(seq, b=seq.b[sub], omega2=seq.omega2[sub], a0=seq.a0[sub],
                     lam=seq.lam[sub], b2=seq.b2[sub], a2=seq.a2[sub],
                     n_windows=None if seq.n_windows is None else seq.n_windows[sub],
                     jumps=[], windows=None)
    cur = curves
    for _ in range(iterations):
        phi = _extended(cur)
        with_a = invert(replace(coarse, **dict(zip(("a0", "omega2"), offset_balance(
            phi, coarse.b, seq.mu)))))
        without = invert(replace(coarse, **dict(zip(("a0", "omega2"), offset_balance(
            phi, coarse.b, seq.mu, offset=False)))))
        xc = with_a.restoring_odd.x
        d_odd = np.interp(xg, xc, with_a.restoring_odd.value - without.restoring_odd.value)
        d_even = np.interp(xg, xc, with_a.restoring_even.value - without.restoring_even.value)
        cur = replace(cur, restoring_odd=replace(cur.restoring_odd, value=odd0 - d_odd),
                      restoring_even=replace(cur.restoring_even, value=even0 - d_even))
    return cur
