"""Truth checks of a reconstruction result: where the truth of a synthetic flight (or of a
calibration draw) lies against the reported posterior, per parameter and jointly. Used by the
validation studies (``benchmarks/``), the tests and campaigns with known truth.
"""
from __future__ import annotations

import numpy as np

__all__ = ["check", "joint_check", "hpd_check"]


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


def hpd_check(problem, samples: np.ndarray, truth: dict, *,
              log_prob: np.ndarray | None = None, ess: float | None = None) -> dict:
    """The truth against the posterior's highest-density 95 % region, from its draws.

    The credible region of level ``a`` is the set where the posterior density is above the
    level that holds mass ``a``; the truth lies inside it when the posterior mass at higher
    density than the truth's, ``mass_above``, is at most ``a``. From equally weighted draws
    that mass is the share of draws whose log posterior exceeds the truth's (ties count
    half). For a Gaussian posterior it is the chi-square CDF of the truth's Mahalanobis
    distance, so the region is the one :func:`joint_check` describes; it differs where the
    posterior is not Gaussian, and it needs no covariance estimate. That is what matters on
    an importance posterior of ESS ~100 in 12 dimensions: the draws' correlation matrix is
    so noisy that the Gaussian distance of one truth moved from 12.8 to 29.1 between two
    sampler seeds of the same posterior (the low-energy peripheral flight,
    docs/design/shipped_records.rst), while ``mass_above`` is a one-dimensional share with binomial
    error.

    The region is that of all of ``problem``'s free parameters (with the clock offset, which
    the truth also holds), not of a subset: the density of a marginal is not available from
    the draws without a density estimate.

    ``samples`` are ``(N, d)`` equally weighted draws in ``problem.names`` order. Their log
    posterior is ``log_prob`` when the sampler kept it (MCMC); else it is evaluated here,
    once per distinct draw (an importance posterior's draws repeat: resampled from ESS
    ~100-1000). ``truth`` maps every free parameter to its true value [SI].

    Returns ``mass_above``, its binomial standard error ``se`` over ``ess`` effective draws
    (the sampler's effective sample size: an importance posterior's, an MCMC chain's; N when
    not given), the truth's log posterior ``lp_truth``, ``in68`` and ``in95``.
    """
    names = list(problem.names)
    missing = [n for n in names if n not in truth]
    if missing:
        raise KeyError(f"truth has no {', '.join(missing)}")
    samples = np.atleast_2d(np.asarray(samples, float))
    xt = np.array([truth[n] for n in names], float)
    lp_truth = float(problem.log_probability(xt[None, :])[0])
    if log_prob is None:
        uniq, inv = np.unique(samples, axis=0, return_inverse=True)
        lp = np.asarray(problem.log_probability(uniq), float)[np.ravel(inv)]
    else:
        lp = np.ravel(np.asarray(log_prob, float))
        if lp.size != samples.shape[0]:
            raise ValueError(f"log_prob has {lp.size} values for {samples.shape[0]} draws")
    n_eff = float(samples.shape[0] if ess is None else ess)
    mass = float(np.mean(lp > lp_truth) + 0.5 * np.mean(lp == lp_truth))
    se = float(np.sqrt(max(mass * (1.0 - mass), 1e-12) / max(n_eff, 1.0)))
    return {"names": names, "mass_above": mass, "se": se, "n": int(samples.shape[0]),
            "ess": n_eff, "lp_truth": lp_truth,
            "in68": bool(mass <= 0.68), "in95": bool(mass <= 0.95)}
