"""Own-resonance inversions (2.4) and (2.6) of [P]: restoring force and damping from the
amplitude dependence of the equivalent-linearization quantities.

With :math:`I[V](x) = \\int_0^x dV(b)/\\sqrt{x^2-b^2}` (:func:`~.abel.abel_integral`):

.. math::

    \\varphi^-(x) = \\tfrac12 I[\\mu b^2\\omega^2](x), \\qquad
    \\varphi^+(x) = -\\tfrac{x}{2} I[\\mu a_0 \\omega^2](x),

    D^+(x) = \\tfrac12 \\frac{d}{dx} I[b^2\\lambda](x), \\qquad
    D^-(x) = \\tfrac34\\frac{\\mu}{x}\\frac{d}{dx} I[b^2 b_2\\,\\omega](x), \\qquad
    H(v) = \\tfrac12 I[\\lambda v^2](v).

Readings (digest B.3-B.5, checked against the Russian original): ``a0`` is twice the mean
displacement (``a0 = c0`` of (4.3), not ``c0/2``: the literal reading halves
:math:`\\varphi^+`); the damping term of (2.2) is :math:`\\dot x D(x)` with ``D`` a coefficient
[N s/m]; in (2.6) ``H`` is the damping *force* and :math:`\\lambda(v) = e\\sin\\theta/v`,
``v = b nu``. When ``b2`` is measured away from phase resonance (constant ``nu``, the usual
test) ``b2 omega`` is replaced by ``b2 (4 nu^2 - omega^2) / (3 nu)`` (digest B.5
"Generalization"; equal at ``nu = omega``).

The outer operations (``d/dx``, the factors ``x`` and ``1/x``), unspecified in [P], are
second-order finite differences (:func:`numpy.gradient`) on the evaluation grid (points below
the first amplitude, then the measured amplitudes).

References
----------
Digest ``shared/seeds/hysteresis-and-resonance-identification.md``, sections B.4, B.5, B.7.
"""
from __future__ import annotations

import numpy as np

from models.errors import InputError

from .abel import Characteristic, abel_integral
from .conditioning import isotonic

__all__ = ["evaluation_grid", "restoring_odd", "restoring_even", "damping_even", "damping_odd",
           "velocity_damping", "N_BELOW"]

N_BELOW = 8


def evaluation_grid(b: np.ndarray, n_below: int = N_BELOW) -> np.ndarray:
    """``n_below`` evenly spaced points in ``(0, b[0])`` followed by the amplitudes ``b``."""
    b = np.asarray(b, float)
    return np.r_[b[0] * np.arange(1, n_below + 1) / (n_below + 1), b]


def _check(b, *arrays):
    b = np.asarray(b, float)
    out = [np.asarray(a, float) for a in arrays]
    for a in out:
        if a.shape != b.shape:
            raise InputError("every measured quantity needs one value per amplitude", key="b")
        if not np.all(np.isfinite(a)):
            raise InputError("measured quantities must be finite", key="b")
    return (b, *out)


def _run(b, V, name, parity, method, below, n_below, outer, monotone=False, weights=None,
         gaps=(), kink=False):
    x = evaluation_grid(b, n_below)
    if monotone:
        V = isotonic(V, weights)
    integral, p = abel_integral(b, V, x, method=method, below=below, kink=kink)
    return Characteristic(x=x, value=outer(x, integral), x_first=float(b[0]), parity=parity,
                          name=name, method=method, below=below, exponent=p,
                          gaps=tuple((float(lo), float(hi)) for lo, hi in gaps))


def restoring_odd(b, omega2, mu, *, method="product", below="power", n_below=N_BELOW,
                  monotone=False, weights=None, gaps=()):
    """Odd restoring force :math:`\\varphi^-(x)` [N] from the backbone :math:`\\omega^2(b)`.

    Parameters
    ----------
    b
        Measured first-harmonic amplitudes, increasing [m].
    omega2
        :math:`\\omega^2(b) = \\nu^2 + e\\cos\\theta/(\\mu b)` [rad^2/s^2].
    mu
        Reduced mass of the mode [kg].
    method, below, n_below
        Quadrature, law below ``b[0]`` (:mod:`~.abel`), points below ``b[0]``.
    monotone, weights
        Replace :math:`\\mu b^2\\omega^2` by its weighted non-decreasing least-squares fit
        (:func:`~.conditioning.isotonic`, ``weights`` per amplitude: windows merged) before the
        inversion: every increment is then non-negative, so :math:`\\varphi^- \\ge 0` on
        ``x > 0`` (a restoring force that does not decrease with displacement).
    gaps
        ``(b_lo, b_hi)`` amplitude gaps [m]: the result is flagged as interpolated there.

    With ``below="power"`` a dead zone is recognised below the first amplitude
    (:func:`~.abel.abel_integral` with ``kink=True``): when the first measured points follow
    the dead zone's backbone much better than a power of ``b``, the law below ``b[0]`` is
    the dead zone's (zero force up to the fitted gap, then linear), and
    :attr:`~.abel.Characteristic.exponent` is None.
    """
    b, omega2 = _check(b, omega2)
    return _run(b, mu * b * b * omega2, "restoring_odd", -1, method, below, n_below,
                lambda x, i: 0.5 * i, monotone, weights, gaps, kink=True)


def restoring_even(b, a0, omega2, mu, *, stiffness="secant", method="product", below="power",
                   n_below=N_BELOW, gaps=()):
    """Even restoring force :math:`\\varphi^+(x)` [N] from the zero harmonic.

    Parameters
    ----------
    b
        Measured amplitudes [m].
    a0
        Zero harmonic, ``a0 = 2 * mean(x)`` [m].
    omega2
        Backbone [rad^2/s^2].
    mu
        Reduced mass [kg].
    stiffness
        Stiffness that converts the offset into force: ``"secant"`` :math:`\\mu\\omega^2(b)`
        (the paper's (2.4)) or ``"tangent"``
        :math:`\\langle\\varphi'(b\\sin\\psi)\\rangle = \\frac{\\mu}{2b}\\frac{d(b^2\\omega^2)}{db}`,
        the exact first-order factor (digest B.4 (F3)); they differ when :math:`\\varphi^-` is
        nonlinear.
    """
    b, a0, omega2 = _check(b, a0, omega2)
    if stiffness == "secant":
        k = omega2
    elif stiffness == "tangent":
        k = np.gradient(b * b * omega2, b, edge_order=2) / (2.0 * b)
    else:
        raise InputError(f"unknown offset stiffness '{stiffness}' (secant or tangent)",
                         key="stiffness")
    return _run(b, mu * a0 * k, "restoring_even", +1, method, below, n_below,
                lambda x, i: -0.5 * x * i, gaps=gaps)


def damping_even(b, lam, *, method="product", below="power", n_below=N_BELOW, gaps=()):
    """Even part :math:`D^+(x)` [N s/m] of a displacement-dependent damping coefficient.

    ``lam`` is :math:`\\lambda(b) = e\\sin\\theta/(b\\nu)` [N s/m].
    """
    b, lam = _check(b, lam)
    return _run(b, b * b * lam, "damping_even", +1, method, below, n_below,
                lambda x, i: 0.5 * np.gradient(i, x, edge_order=2), gaps=gaps)


def damping_odd(b, b2, omega2, mu, *, nu=None, method="product", below="power",
                n_below=N_BELOW, gaps=()):
    """Odd part :math:`D^-(x)` [N s/m^2 * m] of the damping coefficient from the second harmonic.

    Parameters
    ----------
    b2
        Second-harmonic coefficient of :math:`\\sin 2\\psi` [m].
    omega2
        Backbone [rad^2/s^2].
    mu
        Reduced mass [kg].
    nu
        Excitation frequency [rad/s] when the data were taken at constant ``nu`` (general form
        ``b2 (4 nu^2 - omega^2)/(3 nu)``); None: phase resonance, ``b2 * omega``.
    """
    b, b2, omega2 = _check(b, b2, omega2)
    if nu is None:
        w = b2 * np.sqrt(omega2)
    else:
        w = b2 * (4.0 * nu * nu - omega2) / (3.0 * nu)
    return _run(b, b * b * w, "damping_odd", -1, method, below, n_below,
                lambda x, i: 0.75 * mu / x * np.gradient(i, x, edge_order=2), gaps=gaps)


def velocity_damping(v, lam, *, method="product", below="power", n_below=N_BELOW,
                     monotone=False, weights=None, gaps=()):
    """Velocity-dependent damping force :math:`H(v)` [N], (2.6).

    Parameters
    ----------
    v
        Velocity amplitudes ``b * nu``, increasing [m/s].
    lam
        :math:`\\lambda = e\\sin\\theta/v` [N s/m].
    """
    v, lam = _check(v, lam)
    return _run(v, lam * v * v, "velocity_damping", -1, method, below, n_below,
                lambda x, i: 0.5 * i)
