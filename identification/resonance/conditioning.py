"""Conditioning of the amplitude sequence before the Abel inversions, and its uncertainty.

Why. Every inversion weights the *increments* of a measured quantity ``V(b)`` by the singular
kernel :math:`(x^2 - b^2)^{-1/2}`; with product integration an interval ``[b_{i-1}, b_i]``
contributes :math:`\\approx \\Delta V\\sqrt{2/(b_i\\,\\Delta b)}` at ``x = b_i``. Two windows
with almost the same amplitude and slightly different ``V`` (a transient just after an
amplitude jump, or plain noise: 0.30129 and 0.30131 in the record that motivated this module)
therefore produce a spike of any size and either sign. Three measures, in this order:

1. **Settling after a jump** (:func:`settling_time`, used by
   :func:`~.harmonics.amplitude_sequence`): after the response leaves one branch of the
   amplitude-frequency curve for another it beats about the new branch with the free decay time
   :math:`\\tau = 2\\mu/\\lambda`; windows that start within ``n_tau`` (default 3) such times
   of the first window past the jump are dropped (amplitude error of the beating
   ``e^{-3}`` = 5 % of the jump at most, further reduced by the drift terms of the ramp
   correction).
2. **Merging** (:func:`merge_windows`): the kept windows are sorted by amplitude and pooled in
   bins of relative width ``rel_step`` (default 1 %); each node is the mean of its windows
   (amplitude and every quantity), so consecutive nodes are at least about ``rel_step * b``
   apart. This bounds the kernel's amplification of a window-to-window error
   :math:`\\delta V` to about :math:`\\delta V\\sqrt{2/\\mathrm{rel\\_step}}/b`. A window whose
   amplitude falls below the previous one (non-monotone) is not dropped but pooled with the
   windows of its own amplitude. (Chosen over a smoothing fit of ``V(b)``: a dead zone's or a
   preload's ``V`` has a kink or a ``sqrt`` edge that any global smoother would round off.)
   [P] asks for a *small* amplitude step (the accuracy of its quadrature (4.2), of order
   :math:`\\sqrt{\\Delta b/b}`); the floor set here is no contradiction: product integration
   is of order 1.5 and accurate on 1 % steps, and the floor only stops the step from
   collapsing to noise level.
3. **Monotone regularisation** (:func:`isotonic`, applied by the inversions of the odd
   restoring force and of the velocity damping): ``V = mu b^2 omega^2`` and ``lambda v^2`` are
   non-decreasing for any restoring (damping) force that does not decrease with displacement
   (velocity), which is the model class of [P]'s computer study and of passive mechanisms; the
   weighted least-squares non-decreasing fit (pool-adjacent-violators) then makes every
   increment non-negative, so the identified odd force can never take the wrong sign. The
   even parts (``a0``) carry no such constraint and are not regularised.

Gaps. An amplitude jump leaves no node between the last amplitude before it and the first
after it (:class:`~.harmonics.Jump` ``b_lo``, ``b_hi``). The quadratures interpolate ``V``
linearly across; the characteristic there is *interpolated*, not identified, and is flagged
(:attr:`~.abel.Characteristic.gaps`).

Uncertainty: the bands (:func:`~.own.bootstrap_bands`) come from a residual moving-block
bootstrap over the analysis windows (:func:`~.own.window_replicates`): each window's quantities
are redrawn about their local smooth with residuals resampled in blocks of ``2 k`` windows
(neighbouring six-period windows sliding by one period are correlated), merged into the nodes
as above and inverted again. :func:`node_scatter` (the RMS deviation of each node from the
chord of its neighbours, over :math:`\\sqrt{1.5}`) is the fallback for a sequence without its
windows; it sees only the high-frequency part of correlated errors.

References
----------
Digest ``shared/seeds/hysteresis-and-resonance-identification.md``, section B.9 (amplitude
step, jumps).
"""
from __future__ import annotations

import numpy as np

__all__ = ["REL_STEP", "N_TAU", "settling_time", "merge_windows", "isotonic", "node_scatter"]

#: default relative width of the amplitude bins
REL_STEP = 0.01
#: default settling time after a jump, in free-decay time constants 2 mu / lambda
N_TAU = 3.0


def settling_time(mu: float, lam: np.ndarray, n_tau: float = N_TAU) -> float:
    """``n_tau * 2 mu / lambda`` [s] with ``lambda`` the median of the positive values of
    ``lam`` [N s/m] (0 when none is positive)."""
    lam = np.asarray(lam, float)
    pos = lam[np.isfinite(lam) & (lam > 0)]
    if not len(pos):
        return 0.0
    return float(n_tau * 2.0 * mu / np.median(pos))


def merge_windows(b: np.ndarray, quantities: dict[str, np.ndarray],
                  rel_step: float = REL_STEP) -> tuple[np.ndarray, dict[str, np.ndarray],
                                                       np.ndarray, np.ndarray]:
    """Pool windows into amplitude bins of relative width ``rel_step``.

    Parameters
    ----------
    b
        Amplitudes of the kept windows [m], any order.
    quantities
        Per-window arrays (same length as ``b``) to average per bin.
    rel_step
        Relative bin width (0: no merging, only sorting; exact duplicates are still pooled).

    Returns
    -------
    b_nodes : numpy.ndarray
        Mean amplitude of each bin, strictly increasing [m].
    nodes : dict
        Mean of each quantity per bin.
    count : numpy.ndarray
        Windows per bin.
    member : numpy.ndarray
        Bin index of each window (input order).
    """
    b = np.asarray(b, float)
    order = np.argsort(b, kind="stable")
    bs = b[order]
    member_sorted = np.zeros(len(bs), int)
    k, start = 0, bs[0]
    for i in range(1, len(bs)):
        if bs[i] > start * (1.0 + rel_step) and bs[i] > bs[i - 1]:
            k += 1
            start = bs[i]
        member_sorted[i] = k
    n = k + 1
    count = np.bincount(member_sorted, minlength=n)
    b_nodes = np.bincount(member_sorted, weights=bs, minlength=n) / count
    nodes = {name: np.bincount(member_sorted, weights=np.asarray(q, float)[order],
                               minlength=n) / count for name, q in quantities.items()}
    member = np.empty(len(b), int)
    member[order] = member_sorted
    return b_nodes, nodes, count, member


def isotonic(y: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
    """Weighted least-squares non-decreasing fit of ``y`` (pool adjacent violators)."""
    y = np.asarray(y, float)
    w = np.ones_like(y) if w is None else np.asarray(w, float)
    vals, wts, lens = [], [], []
    for yi, wi in zip(y, w):
        vals.append(yi)
        wts.append(wi)
        lens.append(1)
        while len(vals) > 1 and vals[-2] > vals[-1]:
            wsum = wts[-2] + wts[-1]
            v = (vals[-2] * wts[-2] + vals[-1] * wts[-1]) / wsum
            n = lens[-2] + lens[-1]
            del vals[-1], wts[-1], lens[-1]
            vals[-1], wts[-1], lens[-1] = v, wsum, n
    return np.repeat(vals, lens)


def node_scatter(b: np.ndarray, q: np.ndarray, half_width: int = 5) -> np.ndarray:
    """Window-to-window scatter of a quantity ``q`` at the nodes ``b`` (module docstring):
    RMS over ``+-half_width`` nodes of the deviation from the neighbours' chord, over
    ``sqrt(1.5)`` [unit of q]."""
    b = np.asarray(b, float)
    q = np.asarray(q, float)
    n = len(b)
    if n < 3:
        return np.zeros(n)
    w = (b[2:] - b[1:-1]) / (b[2:] - b[:-2])
    r = q[1:-1] - (w * q[:-2] + (1.0 - w) * q[2:])
    r = np.r_[r[0], r, r[-1]]
    r2 = r * r
    c = np.r_[0.0, np.cumsum(r2)]
    lo = np.clip(np.arange(n) - half_width, 0, n)
    hi = np.clip(np.arange(n) + half_width + 1, 0, n)
    return np.sqrt((c[hi] - c[lo]) / (hi - lo) / 1.5)
