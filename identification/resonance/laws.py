"""The closed-form restoring and damping laws of the resonance paper's computer study
(digest Part B.9), by name: what a shipped synthetic resonance record was generated with and
what its identification is compared against.

A truth file (``<record>.truth.json``) names its laws and their parameters
(``{"phi": "dead_zone", "g": ..., "delta": ..., "H": "linear", "h": ...}``); the functions
here turn that into the curves, so a report compares an identification with the truth by
reading data, never by importing the sample generator.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

__all__ = ["restoring_law", "damping_law", "discontinuities", "RESTORING", "DAMPING"]

#: restoring laws phi(x) [N] of x [m]
RESTORING = ("dead_zone", "preload", "asymmetric")
#: damping laws H(v) [N] of v [m/s]
DAMPING = ("linear", "quadratic")


def restoring_law(p: Mapping[str, Any]) -> Callable[[np.ndarray], np.ndarray]:
    """The restoring force ``phi(x)`` [N] named by ``p["phi"]``, vectorised: ``dead_zone``
    (stiffness ``g`` [N/m] outside a gap ``+-delta`` [m]), ``preload`` (``F0 sign(x) + c x``),
    ``asymmetric`` (``c x + d |x|``)."""
    if p["phi"] == "dead_zone":
        return lambda x: p["g"] * np.sign(x) * np.maximum(0.0, np.abs(x) - p["delta"])
    if p["phi"] == "preload":
        return lambda x: p["F0"] * np.sign(x) + p["c"] * np.asarray(x)
    if p["phi"] == "asymmetric":
        return lambda x: p["c"] * np.asarray(x) + p["d"] * np.abs(x)
    raise KeyError(p["phi"])


def damping_law(p: Mapping[str, Any]) -> Callable[[np.ndarray], np.ndarray]:
    """The damping force ``H(v)`` [N] named by ``p["H"]``, vectorised: ``linear`` (``h v``),
    ``quadratic`` (``kappa v |v|``)."""
    if p["H"] == "linear":
        return lambda v: p["h"] * np.asarray(v)
    if p["H"] == "quadratic":
        return lambda v: p["kappa"] * np.asarray(v) * np.abs(v)
    raise KeyError(p["H"])


def discontinuities(p: Mapping[str, Any]) -> list[float]:
    """Abscissae [m] where the restoring force (or its slope) is discontinuous."""
    if p["phi"] == "dead_zone":
        return [-p["delta"], p["delta"]]
    return [0.0]
