"""Cross-coupling from non-own resonances (digest B.8, [P] section 3) and quasi-normal
coordinates.

* :func:`coupling_harmonic`: :math:`f_{spl} = b_{sl}/B_{sl}` from the measured ``l``-th
  harmonic of mode s, with (3.5) read with :math:`\\mu_s^2` (the OCR's :math:`\\mu_s` is
  dimensionally inconsistent; digest B.8 reading, confirmed there by a detuned simulation).
* :func:`coupling_even_l2`: the Abel equation (3.8) and its solution (3.9) for ``l = 2``,
  read as a solution for :math:`f^+_{sp}` itself (outer Stieltjes integral), with
  :math:`f^+_{sp}(0) = 0` (a constant is invisible at ``l = 2``).
* :func:`coupling_odd_l3`: the Volterra equation of the first kind (3.10) for ``l = 3``, solved
  as a regularised linear system. **Null space:** :math:`z \\mapsto c_{n,3} b^n z^n` maps a
  linear term to 0, so the linear part of :math:`f^-_{sp}` is unobservable. It is fixed by the
  basis: a cubic first interval :math:`f_1 (z/z_1)^3` then hat functions (so
  :math:`f'(0) = 0`: no linear cross-coupling, which quasi-normal coordinates exclude anyway),
  with a small Tikhonov penalty on second differences; the naive piecewise-linear basis with
  ``f(0) = 0`` has an exactly zero first row.
* :func:`to_quasinormal`: ``X = Phi^{-1} q`` (1.2).
"""
from __future__ import annotations

import numpy as np

from models.errors import InputError

from .abel import abel_integral

__all__ = ["coupling_harmonic", "coupling_even_l2", "coupling_odd_l3", "volterra_matrix",
           "to_quasinormal"]


def coupling_harmonic(b_sl, l, nu_p, omega_s2, lam_s, mu_s, b_dot=None):
    """:math:`f_{spl}` [N] from the measured amplitude ``b_sl`` [m] of mode s at ``l nu_p``.

    ``omega_s2`` [rad^2/s^2] and ``lam_s`` [N s/m] are the own characteristics of mode s at
    ``b_sl`` (numbers or arrays); ``mu_s`` [kg]. ``b_dot`` [m/s], the rate of ``b_sl`` under a
    ramped excitation, adds the drift term of first-order averaging
    (``2 mu_s w b_dot = f sin(theta) - lambda w b``, [impl]): ``lam_s + 2 mu_s b_dot / b``.
    """
    b = np.asarray(b_sl, float)
    w = l * nu_p
    if b_dot is not None:
        lam_s = np.asarray(lam_s, float) + 2.0 * mu_s * np.asarray(b_dot, float) / b
    return b * np.hypot(mu_s * (np.asarray(omega_s2) - w * w), w * np.asarray(lam_s))


def coupling_even_l2(b_p, f_sp2, *, method="product", below="power"):
    """:math:`f^+_{sp}(x)` [N] at ``x = b_p`` from (3.9):
    :math:`f^+(x) = \\tfrac12\\int_0^x \\xi^{-1}\\,d_\\xi I(\\xi)`,
    :math:`I = \\int_0^\\xi d[b^2 f_{sp2}]/\\sqrt{\\xi^2-b^2}`."""
    from .inversion import evaluation_grid

    b = np.asarray(b_p, float)
    x = evaluation_grid(b, 16)
    I, p = abel_integral(b, b * b * np.asarray(f_sp2, float), x, method=method, below=below)
    # below x[0]: I ~ xi^q, q = p - 1, so int_0^x0 xi^-1 dI = I(x0)/x0 * q/(q-1)
    q = (p - 1.0) if p is not None else 2.0
    first = 0.5 * I[0] / x[0] * (q / (q - 1.0) if q > 1.0 else 1.0)
    inc = 0.5 * np.diff(I) / (0.5 * (x[1:] + x[:-1]))
    return np.r_[first, first + np.cumsum(inc)][16:]


def volterra_matrix(z: np.ndarray, l: int = 3, n_quad: int = 64) -> np.ndarray:
    """Matrix ``A`` with ``f_spl(z_i) = sum_j A_ij f(z_j)`` for the basis: cubic on
    ``[0, z_1]``, hats on ``z_1 < ... < z_n`` (collocation at the nodes). Kernel
    :math:`\\frac{4}{\\pi b} T_l(z/b)(1 - z^2/b^2)^{-1/2}`, integrated in
    :math:`\\psi` (``z = b cos psi``) by Gauss-Legendre per node interval."""
    z = np.asarray(z, float)
    n = len(z)
    g, w = np.polynomial.legendre.leggauss(n_quad)
    A = np.zeros((n, n))
    for i, b in enumerate(z):
        # f_spl(b) = 4/pi int_0^{pi/2} f(b cos psi) cos(l psi) dpsi, split at the nodes
        edges = np.r_[0.0, z[:i + 1]]
        for a, c in zip(edges[:-1], edges[1:]):
            p_hi, p_lo = np.arccos(a / b), np.arccos(min(c / b, 1.0))
            psi = 0.5 * (p_hi - p_lo) * g + 0.5 * (p_hi + p_lo)
            ww = 0.5 * (p_hi - p_lo) * w * 4 / np.pi * np.cos(l * psi)
            zz = b * np.cos(psi)
            for j in range(i + 1):
                if j == 0:
                    phi = np.where(zz <= z[0], (zz / z[0]) ** 3,
                                   np.clip((z[1] - zz) / (z[1] - z[0]), 0, 1) if n > 1 else 0)
                else:
                    left = (zz - z[j - 1]) / (z[j] - z[j - 1])
                    right = (z[j + 1] - zz) / (z[j + 1] - z[j]) if j + 1 < n else np.zeros_like(zz)
                    phi = np.where((zz >= z[j - 1]) & (zz <= z[j]), left,
                                   np.where(zz > z[j], np.clip(right, 0, 1), 0.0))
                A[i, j] += np.sum(ww * phi)
    return A


def coupling_odd_l3(b_p, f_sp3, *, alpha: float = 1e-6):
    """:math:`f^-_{sp}` [N] at the nodes ``b_p`` from ``l = 3`` data, (3.10).

    Solves :math:`\\min \\|A f - y\\|^2 + \\alpha^2 \\|A\\|^2 \\|D_2 f\\|^2` (module docstring).
    """
    z = np.asarray(b_p, float)
    y = np.asarray(f_sp3, float)
    if len(z) < 4 or z[0] <= 0 or np.any(np.diff(z) <= 0):
        raise InputError("need >= 4 positive increasing amplitudes", key="b_p")
    A = volterra_matrix(z, 3)
    D = np.diff(np.eye(len(z)), 2, axis=0)
    lam = alpha * np.linalg.norm(A, 2)
    M = np.vstack([A, lam * D])
    return np.linalg.lstsq(M, np.r_[y, np.zeros(len(D))], rcond=None)[0]


def to_quasinormal(q: np.ndarray, Phi: np.ndarray) -> np.ndarray:
    """Quasi-normal coordinates ``X = Phi^{-1} q`` (1.2); ``q`` shape ``(n_samples, N)``."""
    Phi = np.asarray(Phi, float)
    return np.linalg.solve(Phi, np.asarray(q, float).T).T
