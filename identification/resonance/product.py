"""Product integration of the Abel-type integral (default method).

.. math::

    I(x) = \\int_{b_0}^{x} \\frac{dV(b)}{\\sqrt{x^2 - b^2}}
    = \\sum_i \\frac{V_i - V_{i-1}}{b_i - b_{i-1}}
      \\Bigl[\\arcsin\\frac{\\min(b_i, x)}{x} - \\arcsin\\frac{b_{i-1}}{x}\\Bigr]

exact for piecewise-linear :math:`V` (the kernel is integrated exactly over each interval,
only :math:`V` is interpolated). For smooth :math:`V` the last interval limits the order to
1.5 in the node spacing (measured in ``tests/identification/resonance/test_abel.py``), against
0.5 for the paper's quadrature (4.2); that is why it is the default.

Same call shape as :mod:`identification.resonance.stieltjes`.

References
----------
Digest ``shared/seeds/hysteresis-and-resonance-identification.md``, section B.9 ([impl]
product-integration variant).
"""
from __future__ import annotations

import numpy as np

__all__ = ["abel_product", "product_weights"]


#: the kernel weights of the last few (nodes, query points) pairs: the bootstrap bands and the
#: offset correction invert many integrators on the same amplitudes, and the weights depend on
#: the amplitudes only (as PyAbel caches its basis for one image size)
_CACHE: dict = {}
_CACHE_SIZE = 16


def product_weights(b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Weights ``w`` with ``I(x) = w @ slope`` (``slope`` of V on each node interval): the
    kernel integrated exactly over each interval, ``arcsin(min(b_i, x)/x) -
    arcsin(b_{i-1}/x)`` where ``b_{i-1} < x``, else 0; rows of ``x <= b[0]`` are 0.

    Parameters
    ----------
    b
        Increasing nodes [any length unit].
    x
        Query points [same unit].

    Returns
    -------
    numpy.ndarray
        ``(len(x), len(b) - 1)``, read-only (shared by the cache).
    """
    b = np.ascontiguousarray(b, float)
    x = np.ascontiguousarray(np.atleast_1d(x), float)
    key = (b.tobytes(), x.tobytes())
    w = _CACHE.get(key)
    if w is not None:
        return w
    lo = b[:-1][None, :]
    hi = b[1:][None, :]
    xx = x[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        r_hi = np.clip(np.minimum(hi, xx) / xx, 0.0, 1.0)
        r_lo = np.clip(lo / xx, 0.0, 1.0)
        w = np.where(lo < xx, np.arcsin(r_hi) - np.arcsin(r_lo), 0.0)
    w[x <= b[0]] = 0.0
    w.setflags(write=False)
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = w
    return w


def abel_product(b: np.ndarray, V: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Stieltjes integral :math:`\\int_{b_0}^{x} dV(b)/\\sqrt{x^2-b^2}` for piecewise-linear V.

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
    slope = np.diff(V) / np.diff(b)
    return product_weights(b, x) @ slope
