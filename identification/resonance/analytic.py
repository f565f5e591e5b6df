"""Analytic transform pairs: characteristic <-> equivalent-linearization quantity.

These closed forms (digest B.7, B.8; each checked by hand with the Wallis integrals and, in
the tests, against direct quadrature of the forward relations (F1)-(F5)) ship with the package
as the oracles of the inversions, PyAbel style. Every pair has ``characteristic(x)`` (the
function the inversion must return, ``x > 0``) and ``forward(b)`` (the quantity the inversion
takes, at amplitude ``b > 0``).

Forward relations (digest B.4, ``psi`` the phase, ``<.>`` the average over it):

* (F1) :math:`\\mu\\omega^2(b) = \\frac{1}{\\pi b}\\int_0^{2\\pi}\\varphi(b\\sin\\psi)\\sin\\psi\\,d\\psi`
* (F2) :math:`\\lambda(b) = \\frac{1}{\\pi}\\int_0^{2\\pi}D(b\\sin\\psi)\\cos^2\\psi\\,d\\psi`
* (F3) :math:`-\\tfrac12\\mu a_0\\omega^2 = \\langle\\varphi^+(b\\sin\\psi)\\rangle`
* (F4) :math:`\\mu(4\\nu^2-\\omega^2)b_2 = \\frac{1}{\\pi}\\int_0^{2\\pi}b\\nu\\cos\\psi\\,D(b\\sin\\psi)\\sin 2\\psi\\,d\\psi`
* (F5) :math:`\\lambda(V)V = \\frac{1}{\\pi}\\int_0^{2\\pi}H(V\\cos\\psi)\\cos\\psi\\,d\\psi`
* coupling: :math:`f_{spl}(b) = \\frac{4}{\\pi}\\int_0^{\\pi/2} f(b\\cos\\psi)\\cos l\\psi\\,d\\psi`,
  ``z^n -> c_{n,l} b^n`` with :math:`c_{n,l} = 2^{1-n}\\binom{n}{(n-l)/2}`.

:func:`forward_quadrature` evaluates the same relations numerically for any callable.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import comb, pi

import numpy as np

__all__ = [
    "TransformPair", "linear_stiffness", "duffing", "odd_power", "preload", "dead_zone",
    "quadratic_even", "abs_even", "viscous", "viscous_plus_square", "abs_damping",
    "linear_odd_damping", "linear_velocity", "quadratic_velocity", "coulomb",
    "chebyshev_coefficient", "coupling_power", "forward_quadrature",
]


@dataclass(frozen=True)
class TransformPair:
    """A characteristic and its forward (measured) quantity.

    Attributes
    ----------
    name
        Family and parameters.
    kind
        Which inversion it tests: ``restoring_odd``, ``restoring_even``, ``damping_even``,
        ``damping_odd``, ``velocity_damping``, ``coupling``.
    characteristic
        ``x -> value`` for ``x > 0``.
    forward
        ``b -> quantity`` (``omega2`` [rad^2/s^2], ``a0`` [m], ``lam`` [N s/m], ``b2`` [m] or
        ``f_spl`` [N]).
    """

    name: str
    kind: str
    characteristic: Callable[[np.ndarray], np.ndarray]
    forward: Callable[[np.ndarray], np.ndarray]


def _arr(x):
    return np.asarray(x, float)


# ---- odd restoring force: forward = omega^2(b) -------------------------------------------
def linear_stiffness(c: float, mu: float = 1.0) -> TransformPair:
    """:math:`\\varphi = cx`, :math:`\\mu\\omega^2 = c`."""
    return TransformPair(f"linear c={c}", "restoring_odd", lambda x: c * _arr(x),
                         lambda b: np.full_like(_arr(b), c / mu))


def duffing(c: float, beta: float, mu: float = 1.0) -> TransformPair:
    """:math:`\\varphi = cx + \\beta x^3`, :math:`\\mu\\omega^2 = c + \\tfrac34\\beta b^2`."""
    return TransformPair(f"duffing c={c} beta={beta}", "restoring_odd",
                         lambda x: c * _arr(x) + beta * _arr(x) ** 3,
                         lambda b: (c + 0.75 * beta * _arr(b) ** 2) / mu)


def odd_power(n: int, mu: float = 1.0) -> TransformPair:
    """:math:`\\varphi = x^n` (n odd), :math:`\\mu\\omega^2 = \\tfrac{4}{\\pi}W_{n+1}b^{n-1}`."""
    from .abel import wallis

    k = 4.0 / pi * float(wallis(n + 1))
    return TransformPair(f"x^{n}", "restoring_odd", lambda x: _arr(x) ** n,
                         lambda b: k * _arr(b) ** (n - 1) / mu)


def preload(F0: float, c: float, mu: float = 1.0) -> TransformPair:
    """:math:`\\varphi = F_0\\,\\mathrm{sign}\\,x + cx`, :math:`\\mu\\omega^2 = c + 4F_0/(\\pi b)`."""
    return TransformPair(f"preload F0={F0} c={c}", "restoring_odd",
                         lambda x: F0 * np.sign(_arr(x)) + c * _arr(x),
                         lambda b: (c + 4.0 * F0 / (pi * _arr(b))) / mu)


def dead_zone(g: float, delta: float, mu: float = 1.0) -> TransformPair:
    """Dead zone: 0 for :math:`|x|\\le\\delta`, :math:`g(x - \\delta\\,\\mathrm{sign}\\,x)` outside;
    :math:`\\mu\\omega^2 = g[1 - \\tfrac2\\pi(\\arcsin r + r\\sqrt{1-r^2})]`, ``r = delta/b``."""
    def fwd(b):
        b = _arr(b)
        r = np.minimum(1.0, delta / b)
        return g * (1.0 - 2.0 / pi * (np.arcsin(r) + r * np.sqrt(1.0 - r * r))) / mu

    return TransformPair(f"dead zone g={g} delta={delta}", "restoring_odd",
                         lambda x: g * np.maximum(0.0, np.abs(_arr(x)) - delta) * np.sign(_arr(x)),
                         fwd)


# ---- even restoring force: forward = a0(b), odd part linear c --------------------------------
def quadratic_even(alpha: float, c: float) -> TransformPair:
    """:math:`\\varphi^+ = \\alpha x^2` with :math:`\\mu\\omega^2 = c`: :math:`a_0 = -\\alpha b^2/c`."""
    return TransformPair(f"quadratic alpha={alpha}", "restoring_even",
                         lambda x: alpha * _arr(x) ** 2, lambda b: -alpha * _arr(b) ** 2 / c)


def abs_even(d: float, c: float) -> TransformPair:
    """:math:`\\varphi^+ = d|x|` (stiffness ``c +- d``): :math:`a_0 = -4db/(\\pi c)`."""
    return TransformPair(f"abs d={d}", "restoring_even", lambda x: d * np.abs(_arr(x)),
                         lambda b: -4.0 * d * _arr(b) / (pi * c))


# ---- displacement damping: forward = lambda(b) ----------------------------------------------
def viscous(h: float) -> TransformPair:
    """:math:`D^+ = h`, :math:`\\lambda = h`."""
    return TransformPair(f"viscous h={h}", "damping_even", lambda x: np.full_like(_arr(x), h),
                         lambda b: np.full_like(_arr(b), h))


def viscous_plus_square(h: float, kappa: float) -> TransformPair:
    """:math:`D^+ = h + \\kappa x^2`, :math:`\\lambda = h + \\kappa b^2/4`."""
    return TransformPair(f"h+kx^2 h={h} k={kappa}", "damping_even",
                         lambda x: h + kappa * _arr(x) ** 2, lambda b: h + 0.25 * kappa * _arr(b) ** 2)


def abs_damping(kappa: float) -> TransformPair:
    """:math:`D^+ = \\kappa|x|`, :math:`\\lambda = 4\\kappa b/(3\\pi)`."""
    return TransformPair(f"k|x| k={kappa}", "damping_even", lambda x: kappa * np.abs(_arr(x)),
                         lambda b: 4.0 * kappa * _arr(b) / (3.0 * pi))


def linear_odd_damping(kappa: float, mu: float, omega2: float, nu: float | None = None) -> TransformPair:
    """:math:`D^- = \\kappa x`: :math:`b_2 = \\kappa b^2\\nu/(2\\mu(4\\nu^2-\\omega^2))`
    (``nu=None``: phase resonance, :math:`\\kappa b^2/(6\\mu\\omega)`)."""
    n = np.sqrt(omega2) if nu is None else nu
    return TransformPair(f"D-=kx k={kappa}", "damping_odd", lambda x: kappa * _arr(x),
                         lambda b: kappa * _arr(b) ** 2 * n / (2.0 * mu * (4 * n * n - omega2)))


# ---- velocity damping: forward = lambda(V) --------------------------------------------------
def linear_velocity(h: float) -> TransformPair:
    """:math:`H = hv`, :math:`\\lambda = h`."""
    return TransformPair(f"H=hv h={h}", "velocity_damping", lambda v: h * _arr(v),
                         lambda V: np.full_like(_arr(V), h))


def quadratic_velocity(kappa: float) -> TransformPair:
    """:math:`H = \\kappa v|v|`, :math:`\\lambda = 8\\kappa V/(3\\pi)`."""
    return TransformPair(f"H=kv|v| k={kappa}", "velocity_damping",
                         lambda v: kappa * _arr(v) * np.abs(_arr(v)),
                         lambda V: 8.0 * kappa * _arr(V) / (3.0 * pi))


def coulomb(Fc: float) -> TransformPair:
    """:math:`H = F_c\\,\\mathrm{sign}\\,v`, :math:`\\lambda = 4F_c/(\\pi V)`."""
    return TransformPair(f"coulomb Fc={Fc}", "velocity_damping", lambda v: Fc * np.sign(_arr(v)),
                         lambda V: 4.0 * Fc / (pi * _arr(V)))


# ---- cross-coupling ------------------------------------------------------------------------
def chebyshev_coefficient(n: int, l: int) -> float:
    """:math:`c_{n,l}`: the ``l``-th cosine harmonic amplitude of :math:`(b\\cos\\psi)^n` over
    :math:`b^n` (:math:`2^{1-n}\\binom{n}{(n-l)/2}` for ``n >= l``, same parity; else 0)."""
    if n < l or (n - l) % 2:
        return 0.0
    return 2.0 ** (1 - n) * comb(n, (n - l) // 2)


def coupling_power(coefficients: dict[int, float], l: int) -> TransformPair:
    """Coupling :math:`f(z) = \\sum_n a_n z^n` and its ``l``-th harmonic amplitude
    :math:`f_{spl}(b) = \\sum_n a_n c_{n,l} b^n`."""
    def f(z):
        return sum(a * _arr(z) ** n for n, a in coefficients.items())

    def F(b):
        return sum(a * chebyshev_coefficient(n, l) * _arr(b) ** n for n, a in coefficients.items())

    return TransformPair(f"coupling {coefficients} l={l}", "coupling", f, F)


def forward_quadrature(kind: str, func: Callable, b: np.ndarray, *, mu: float = 1.0,
                       l: int = 2, n: int = 4096) -> np.ndarray:
    """Forward relations (F1), (F2), (F5), coupling, by the midpoint rule in ``psi`` (``n``
    points; spectrally accurate for smooth ``func``, first order at a discontinuity).

    ``kind``: ``"omega2"`` (F1, returns :math:`\\omega^2`), ``"lambda_D"`` (F2),
    ``"lambda_H"`` (F5, ``b`` is the velocity amplitude), ``"coupling"`` (``l``-th harmonic).
    """
    b = np.atleast_1d(_arr(b))[:, None]
    psi = (np.arange(n) + 0.5) * 2 * pi / n
    s, c = np.sin(psi)[None, :], np.cos(psi)[None, :]
    if kind == "omega2":
        return (func(b * s) * s).mean(axis=1) * 2.0 / b[:, 0] / mu
    if kind == "lambda_D":
        return 2.0 * (func(b * s) * c * c).mean(axis=1)
    if kind == "lambda_H":
        return 2.0 * (func(b * c) * c).mean(axis=1) / b[:, 0]
    if kind == "coupling":
        return 2.0 * (func(b * c) * np.cos(l * psi)[None, :]).mean(axis=1)
    raise ValueError(f"unknown kind {kind}")
