"""Paper-faithful Stieltjes quadrature (4.2) of the Abel-type integral.

.. math::

    I(x) = \\int_{b_1}^{x} \\frac{dV(b)}{\\sqrt{x^2 - b^2}}
    \\approx \\sum_i \\bigl(V(b_i) - V(b_{i-1})\\bigr)
    \\Bigl(x^2 - \\bigl(\\tfrac{b_i + b_{i-1}}{2}\\bigr)^2\\Bigr)^{-1/2}

The increments of :math:`V` are exact and the singular kernel is taken at the interval
midpoints ([P] eq. (4.2), called a "trapezoid formula" there). At a node :math:`x = b_h` this is
(4.2) literally. Between nodes, ``b_{h-1} < x < b_h``, the last (partial) interval is
``[b_{h-1}, x]`` with the increment ``V(x) - V(b_{h-1})`` taken from linear interpolation of
``V``: the natural extension, which reduces to (4.2) at the nodes.

The error is dominated by the last interval next to the kernel singularity and falls only like
:math:`\\sqrt{\\Delta b / x}` (observed order 0.5, measured in
``tests/identification/resonance/test_abel.py``), so the amplitude grid must be dense.

This module has the same call shape as :mod:`identification.resonance.product` (PyAbel
style: one module per quadrature, one function ``abel_<method>(b, V, x)``).

References
----------
Digest ``shared/seeds/hysteresis-and-resonance-identification.md``, section B.9, eq. (4.2).
"""
from __future__ import annotations

import numpy as np

__all__ = ["abel_stieltjes"]


def abel_stieltjes(b: np.ndarray, V: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Stieltjes integral :math:`\\int_{b_0}^{x} dV(b)/\\sqrt{x^2-b^2}` by quadrature (4.2).

    Parameters
    ----------
    b
        Increasing nodes (amplitudes) ``b_0 < b_1 < ... < b_n`` [any length unit].
    V
        The integrator function at the nodes [any unit].
    x
        Query points, each in ``[b_0, b_n]``. Points ``x <= b_0`` give 0.

    Returns
    -------
    numpy.ndarray
        The integral at every ``x`` [unit of V / unit of b].
    """
    b = np.asarray(b, float)
    V = np.asarray(V, float)
    x = np.atleast_1d(np.asarray(x, float))
    out = np.zeros_like(x)
    mid = 0.5 * (b[1:] + b[:-1])
    dV = np.diff(V)
    for j, xj in enumerate(x):
        if xj <= b[0]:
            continue
        h = int(np.searchsorted(b, xj, side="left"))  # b[h-1] < xj <= b[h]
        h = min(h, len(b) - 1)
        full = slice(0, h - 1)  # intervals [b_{i-1}, b_i] with b_i <= b[h-1]
        acc = float(np.sum(dV[full] / np.sqrt(xj * xj - mid[full] ** 2)))
        lo = b[h - 1]
        frac = (xj - lo) / (b[h] - lo)
        inc = frac * dV[h - 1]
        m = 0.5 * (lo + xj)
        acc += inc / np.sqrt(xj * xj - m * m)
        out[j] = acc
    return out
