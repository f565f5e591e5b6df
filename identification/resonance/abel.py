"""The Abel-type integral of [P] with an explicit law below the first measured amplitude.

Every inversion of [P] ((2.4), (2.6), (3.9)) is built on

.. math::

    I(x) = \\int_0^x \\frac{dV(b)}{\\sqrt{x^2 - b^2}},

where ``V`` is a measured quantity known only at the measured amplitudes
``b_1 < b_2 < ... < b_n`` (``b_1 > 0``). The integral needs ``V`` on ``[0, b_1]`` too, where
nothing was measured. That part is handled explicitly by ``below``:

``"power"`` (default)
    ``V(b) = V(b_1) (b / b_1)^p`` on ``[0, b_1]``, with the exponent ``p`` fitted (least squares
    in log-log) to the first ``n_fit`` measured points and clipped to ``[1, 6]``; when those
    points are zero or change sign (a dead zone, noise) ``p = 2``. A pure power law is exactly
    the form the analytic families produce (linear stiffness and viscous damping: ``p = 2``;
    preload and Coulomb friction: ``p = 1``; quadratic damping: ``p = 3``; ``D^- = kx``:
    ``p = 4``), so for those the tail is exact, and it is integrated in closed form
    (incomplete beta function). Values of the characteristic at ``x < b_1`` are what this
    law implies; they are flagged by :attr:`Characteristic.x_first`.
    For the odd restoring force (:func:`~.inversion.restoring_odd`, ``kink=True``) a dead
    zone is recognised too: the dead zone's backbone
    ``V = g b^2 [1 - (2/pi)(arcsin(delta/b) + (delta/b) sqrt(1 - delta^2/b^2))]`` (zero up to
    the gap's edge ``delta``, then rising as ``(b - delta)^(3/2)``, which no power of ``b``
    follows) is fitted to the first :data:`N_KINK_FIT` points, and when it fits them
    :data:`KINK_GAIN` times better (relative RMS) than a power law through the same points
    it is the law below ``b_1`` (scaled through ``V(b_1)``; :func:`dead_zone_tail`). A record
    whose first amplitude lies beyond the gap's edge is then inverted as if the gap had been
    measured; with the power law the force just beyond ``b_1`` came out up to a third low
    (the power, clipped at 6, spreads the rise over ``[0, b_1]``).
``"linear"``
    the same with ``p = 2`` fixed: the system is taken as equivalent-linear (constant
    :math:`\\omega^2`, :math:`\\lambda`) below the first amplitude.
``"chord"``
    the paper's literal reading of (4.2): ``b_0 = 0``, ``V(b_0) = 0``, and the first interval
    ``[0, b_1]`` is an ordinary quadrature interval (``V`` linear on it).

The quadrature above ``b_1`` is chosen by ``method``: ``"product"`` (default,
:mod:`~identification.resonance.product`) or ``"stieltjes"`` (paper (4.2),
:mod:`~identification.resonance.stieltjes`).

References
----------
Digest ``shared/seeds/hysteresis-and-resonance-identification.md``, sections B.4, B.9.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from models.errors import InputError

from .product import abel_product
from .stieltjes import abel_stieltjes

__all__ = ["METHODS", "BELOW", "abel_integral", "tail_exponent", "power_tail", "wallis",
           "dead_zone_backbone", "dead_zone_fit", "dead_zone_tail", "Characteristic"]

METHODS = {"product": abel_product, "stieltjes": abel_stieltjes}
BELOW = ("power", "linear", "chord")
P_MIN, P_MAX = 1.0, 6.0


def wallis(a: float | np.ndarray) -> float | np.ndarray:
    """:math:`W_a = \\int_0^{\\pi/2} \\sin^a t\\,dt = \\tfrac12 B(\\tfrac{a+1}{2}, \\tfrac12)`
    (``W_0 = pi/2``, ``W_1 = 1``, ``W_2 = pi/4``, ``W_3 = 2/3``, ...)."""
    return 0.5 * special.beta(0.5 * (np.asarray(a, float) + 1.0), 0.5)


def tail_exponent(b: np.ndarray, V: np.ndarray, n_fit: int = 4) -> float:
    """Exponent ``p`` of ``V ~ b^p`` from the first ``n_fit`` points (see module docstring)."""
    b = np.asarray(b, float)[:n_fit]
    V = np.asarray(V, float)[:n_fit]
    if len(b) < 2 or np.any(V == 0) or np.any(np.sign(V) != np.sign(V[0])):
        return 2.0
    p = np.polyfit(np.log(b), np.log(np.abs(V)), 1)[0]
    return float(np.clip(p, P_MIN, P_MAX))


def power_tail(b1: float, V1: float, p: float, x: np.ndarray) -> np.ndarray:
    """:math:`\\int_0^{\\min(x, b_1)} dV/\\sqrt{x^2-b^2}` for ``V = V_1 (b/b_1)^p``.

    With ``b = x sin t``: ``p V_1 b_1^{-p} x^{p-1} * 1/2 B(s; p/2, 1/2)``,
    ``s = min(1, b_1/x)^2`` (incomplete beta).
    """
    x = np.atleast_1d(np.asarray(x, float))
    out = np.zeros_like(x)
    pos = x > 0
    xp = x[pos]
    s = np.minimum(1.0, b1 / xp) ** 2
    part = 0.5 * special.beta(0.5 * p, 0.5) * special.betainc(0.5 * p, 0.5, s)
    out[pos] = p * V1 * (xp / b1) ** p / xp * part
    return out


def dead_zone_backbone(b: np.ndarray, delta: float) -> np.ndarray:
    """:math:`V(b)/g` of a dead zone: ``b^2 [1 - (2/pi)(arcsin u + u sqrt(1 - u^2))]``,
    ``u = delta / b`` (0 for ``b <= delta``; digest B.4 table), the integrator whose Abel
    inversion is ``(x - delta)_+``. It rises as ``(b - delta)^(3/2)`` from the gap's edge,
    which no power of ``b`` follows."""
    b = np.asarray(b, float)
    u = np.clip(delta / np.maximum(b, 1e-300), 0.0, 1.0)
    return b * b * (1.0 - (2.0 / np.pi) * (np.arcsin(u) + u * np.sqrt(1.0 - u * u)))


def dead_zone_fit(b: np.ndarray, V: np.ndarray, d_max: float | None = None,
                  n_scan: int = 200) -> tuple[float, float, float]:
    """Best ``(g, delta)`` of ``V = g * dead_zone_backbone(b, delta)`` through the points
    (``delta`` scanned over ``[0, d_max)``, default ``d_max = b[0]``, ``g`` by linear least
    squares for each) and its RMS residual relative to the RMS of ``V``."""
    b, V = np.asarray(b, float), np.asarray(V, float)
    d_max = b[0] if d_max is None else d_max
    d = d_max * np.linspace(0.0, 0.995, n_scan)
    B = dead_zone_backbone(b[None, :], d[:, None])
    BB = np.einsum("ij,ij->i", B, B)
    g = np.where(BB > 0, B @ V / np.where(BB > 0, BB, 1.0), 0.0)
    r = np.sqrt(np.mean((V[None, :] - g[:, None] * B) ** 2, axis=1))
    k = int(np.argmin(r))
    return float(g[k]), float(d[k]), float(r[k]) / max(float(np.sqrt(np.mean(V * V))), 1e-300)


def dead_zone_tail(b1: float, g: float, delta: float, x: np.ndarray,
                   n: int = 400) -> np.ndarray:
    """:math:`\\int_0^{\\min(x, b_1)} dV/\\sqrt{x^2-b^2}` for ``V = g *
    dead_zone_backbone(b, delta)`` on ``[0, b_1]``: product integration on ``n`` nodes from
    ``delta`` to ``b_1`` clustered at the edge (``b = delta + (b_1 - delta) s^2``, which
    makes the ``(b - delta)^(3/2)`` rise nearly linear in ``s``); below ``delta`` V is 0."""
    x = np.atleast_1d(np.asarray(x, float))
    nodes = delta + (b1 - delta) * np.linspace(0.0, 1.0, n) ** 2
    Vn = g * dead_zone_backbone(nodes, delta)
    xc = np.clip(x, nodes[0], None)
    out = np.zeros_like(x)
    inside = x > nodes[0]
    if inside.any():
        # the integral over [nodes[0], min(x, b1)] of the piecewise-linear V: the kernel is
        # integrated exactly per interval (product rule), x beyond b1 taken as is
        slope = np.diff(Vn) / np.diff(nodes)
        lo, hi = nodes[:-1][None, :], nodes[1:][None, :]
        xx = xc[inside][:, None]
        w = np.where(lo < xx, np.arcsin(np.clip(np.minimum(hi, xx) / xx, 0, 1))
                     - np.arcsin(np.clip(lo / xx, 0, 1)), 0.0)
        out[inside] = w @ slope
    return out


#: dead-zone law below the first amplitude (``kink=True`` of :func:`abel_integral`): points
#: fitted, and the relative RMS misfit it must beat the power law's by
N_KINK_FIT = 8
KINK_GAIN = 3.0


def abel_integral(b: np.ndarray, V: np.ndarray, x: np.ndarray, *, method: str = "product",
                  below: str = "power", n_fit: int = 4,
                  kink: bool = False) -> tuple[np.ndarray, float | None]:
    """:math:`I(x) = \\int_0^x dV(b)/\\sqrt{x^2-b^2}` from ``V`` at measured amplitudes.

    Parameters
    ----------
    b
        Increasing measured amplitudes, ``b[0] > 0`` [m] (or [m/s] for (2.6)).
    V
        Integrator at ``b``.
    x
        Query points in ``(0, b[-1]]``.
    method
        ``"product"`` or ``"stieltjes"``.
    below
        Law below ``b[0]``: ``"power"``, ``"linear"`` or ``"chord"`` (module docstring).
    n_fit
        Points used to fit the exponent of the ``"power"`` law.
    kink
        With ``"power"``: also fit the dead-zone law (:func:`dead_zone_fit`) to the first
        :data:`N_KINK_FIT` points and use it below ``b[0]`` when its relative misfit is
        :data:`KINK_GAIN` times smaller than the power law's (module docstring).

    Returns
    -------
    I : numpy.ndarray
        The integral at ``x``.
    p : float or None
        Exponent of the law used below ``b[0]`` (None for ``"chord"``).
    """
    if method not in METHODS:
        raise InputError(f"unknown method '{method}' (expected one of {', '.join(METHODS)})",
                         key="method")
    if below not in BELOW:
        raise InputError(f"unknown below-first-amplitude law '{below}' "
                         f"(expected one of {', '.join(BELOW)})", key="below")
    b = np.asarray(b, float)
    V = np.asarray(V, float)
    if b.ndim != 1 or b.shape != V.shape or len(b) < 2:
        raise InputError("need at least two amplitudes with one value each", key="b")
    if b[0] <= 0 or np.any(np.diff(b) <= 0):
        raise InputError("amplitudes must be positive and strictly increasing", key="b")
    quad = METHODS[method]
    if below == "chord":
        return quad(np.r_[0.0, b], np.r_[0.0, V], x), None
    p = 2.0 if below == "linear" else tail_exponent(b, V, n_fit)
    if kink and below == "power" and len(b) >= N_KINK_FIT and V[0] > 0:
        bb, VV = b[:N_KINK_FIT], V[:N_KINK_FIT]
        g, delta, r_dz = dead_zone_fit(bb, VV)
        if np.all(VV > 0):  # the power law through the same points, two parameters too
            pw = np.exp(np.polyval(np.polyfit(np.log(bb), np.log(VV), 1), np.log(bb)))
        else:
            pw = VV[0] * (bb / bb[0]) ** p
        r_pw = float(np.sqrt(np.mean((VV - pw) ** 2)) / np.sqrt(np.mean(VV * VV)))
        if delta > 0.0 and g > 0 and KINK_GAIN * r_dz < r_pw:
            # V(b_1) is kept: the law is scaled to pass through the first measured point
            g *= V[0] / (g * dead_zone_backbone(b[0], delta))
            return quad(b, V, x) + dead_zone_tail(b[0], g, delta, x), None
    return quad(b, V, x) + power_tail(b[0], V[0], p, x), p


@dataclass(frozen=True)
class Characteristic:
    """One identified characteristic on ``x > 0`` (its parity gives ``x < 0``).

    Attributes
    ----------
    x
        Evaluation points, increasing, ``> 0`` [m] or [m/s].
    value
        The characteristic at ``x`` [N], [N s/m] ...
    x_first
        First measured amplitude: values at ``x < x_first`` follow from the ``below`` law, not
        from data.
    parity
        ``+1`` even, ``-1`` odd.
    name, method, below, exponent
        What it is and how it was computed (``exponent``: ``p`` of the power law below
        ``x_first``).
    gaps
        ``(lo, hi)`` ranges of ``|x|`` left by amplitude jumps: no measured amplitude there,
        the value is interpolated (the quadrature takes the measured quantity linear across),
        not identified (:meth:`interpolated`).
    """

    x: np.ndarray
    value: np.ndarray
    x_first: float
    parity: int
    name: str
    method: str
    below: str
    exponent: float | None = None
    gaps: tuple = ()

    def interpolated(self, x: np.ndarray | float) -> np.ndarray:
        """True where ``|x|`` lies strictly inside a gap (interpolated, not identified)."""
        ax = np.abs(np.asarray(x, float))
        out = np.zeros(ax.shape, bool)
        for lo, hi in self.gaps:
            out |= (ax > lo) & (ax < hi)
        return out

    def __call__(self, x: np.ndarray | float) -> np.ndarray:
        """Evaluate at any ``x`` in ``[-x_max, x_max]`` by linear interpolation and parity;
        between 0 and the first point the value goes linearly to 0 (odd) or is held (even)."""
        x = np.asarray(x, float)
        ax = np.abs(x)
        if self.parity < 0:
            xs, vs = np.r_[0.0, self.x], np.r_[0.0, self.value]
        else:
            xs, vs = np.r_[0.0, self.x], np.r_[self.value[0], self.value]
        v = np.interp(ax, xs, vs)
        return np.where(x < 0, self.parity * v, v) if self.parity < 0 else v
