"""Truth checks of a reconstruction result: where the truth of a synthetic flight (or of a
calibration draw) lies against the reported posterior, per parameter and jointly. Used by the
validation studies (``benchmarks/``), the tests and campaigns with known truth.
"""
from __future__ import annotations

import numpy as np

__all__ = ["check", "joint_check"]


def check(result: dict, truth: dict) -> dict:
    """Per-parameter comparison of a result.json ``parameters`` table with a truth table."""
    out = {}
    for n, v in truth.items():
        p = result["parameters"].get(n)
        if p is None or (p.get("prior") or {}).get("kind") == "fixed":
            continue
        half = 0.5 * (p["ci68"][1] - p["ci68"][0])
        out[n] = {"truth": v, "map": p["map"], "median": p["median"], "ci68": p["ci68"],
                  "ci95": p["ci95"], "in68": bool(p["ci68"][0] <= v <= p["ci68"][1]),
                  "in95": bool(p["ci95"][0] <= v <= p["ci95"][1]),
                  "z": (v - p["median"]) / half if half > 0 else None}
    return out


def joint_check(result: dict, truth: dict, names: list[str]) -> dict:
    """The truth of ``names`` jointly against the posterior's Gaussian 95 % region.

    Eleven marginal 95 % intervals all hold the truth with probability 0.95^11 = 0.57 for a
    calibrated posterior (fewer when the parameters are correlated), so "every initial
    condition inside its interval" fails on about 43 % of well-reconstructed flights. The joint
    statement that does have 95 % probability is that the truth lies inside the posterior's
    95 % region. Here the region is the Gaussian one of the posterior's median, standard
    deviations (``stderr``) and sample correlation (``identifiability.correlation``):
    ``d2 = (t - m)^T C^-1 (t - m)`` against the chi-square quantile with ``len(names)``
    degrees of freedom (``limit95``). ``p`` is the chi-square tail probability of ``d2``.

    A result whose status is not ``ok`` (an implausible fit is not a reconstruction) and a
    degenerate posterior (a standard deviation that is not positive, or a correlation matrix
    that is not positive definite: a posterior of one effective draw) hold nothing: ``d2`` is
    infinite and ``reason`` says why.
    """
    from scipy.stats import chi2

    ident = result["identifiability"]
    idx = [ident["names"].index(n) for n in names]
    corr = np.asarray(ident["correlation"], float)[np.ix_(idx, idx)]
    sd = np.array([result["parameters"][n]["stderr"] for n in names], float)
    dev = np.array([truth[n] - result["parameters"][n]["median"] for n in names], float)
    k = len(names)
    limit95 = float(chi2.ppf(0.95, k))
    reason = None
    if result.get("status", "ok") != "ok":
        reason = f"status {result.get('status')}"
    elif not (np.all(np.isfinite(sd)) and np.all(sd > 0) and np.all(np.isfinite(corr))):
        reason = "degenerate posterior (a standard deviation not positive)"
    else:
        try:
            chol = np.linalg.cholesky(corr)
        except np.linalg.LinAlgError:
            reason = "degenerate posterior (correlation not positive definite)"
    if reason is not None:
        return {"names": list(names), "d2": float("inf"), "dof": k, "p": 0.0,
                "limit95": limit95, "in68": False, "in95": False, "reason": reason}
    w = np.linalg.solve(chol, dev / sd)
    d2 = float(w @ w)
    return {"names": list(names), "d2": d2, "dof": k, "p": float(chi2.sf(d2, k)),
            "limit95": limit95, "in68": bool(d2 <= chi2.ppf(0.68, k)), "in95": d2 <= limit95}
