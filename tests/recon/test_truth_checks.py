"""The truth checks of the validation studies (recon.validation), on a Gaussian posterior
whose answers are known in closed form."""
import numpy as np
from scipy.stats import chi2

from recon import validation as fd


def _gaussian_result(rng, k=11):
    names = [f"p{i}" for i in range(k)]
    a = rng.standard_normal((k, k))
    cov = a @ a.T + 0.5 * np.eye(k)          # strongly correlated
    sd = np.sqrt(np.diag(cov))
    corr = cov / np.outer(sd, sd)
    m = rng.standard_normal(k)
    params = {n: {"median": m[i], "stderr": sd[i], "map": m[i],
                  "ci68": [m[i] - sd[i], m[i] + sd[i]],
                  "ci95": [m[i] - 1.96 * sd[i], m[i] + 1.96 * sd[i]], "prior": {}}
              for i, n in enumerate(names)}
    return {"parameters": params,
            "identifiability": {"names": names, "correlation": corr.tolist()}}, names, m, cov


def test_joint_check_has_nominal_coverage_where_marginals_all_in_do_not():
    rng = np.random.default_rng(5)
    res, names, m, cov = _gaussian_result(rng)
    truths = rng.multivariate_normal(m, cov, size=2000)
    joint, all_in = [], []
    for t in truths:
        tr = dict(zip(names, t))
        j = fd.joint_check(res, tr, names)
        joint.append(j["in95"])
        par = fd.check(res, tr)
        all_in.append(all(par[n]["in95"] for n in names))
    # 2000 draws: se of a 0.95 proportion 0.005 -> 3 se = 0.015
    assert abs(np.mean(joint) - 0.95) < 0.015
    # "every marginal 95 % interval holds the truth" is much rarer (0.95^11 = 0.57 if
    # independent; correlation raises it a little): the reason the joint check exists
    assert np.mean(all_in) < 0.75


def test_joint_check_closed_form_d2():
    rng = np.random.default_rng(6)
    res, names, m, cov = _gaussian_result(rng, k=3)
    t = m + np.array([0.3, -0.2, 0.5])
    j = fd.joint_check(res, dict(zip(names, t)), names)
    d2 = (t - m) @ np.linalg.solve(cov, t - m)
    assert abs(j["d2"] - d2) < 1e-9 * max(1.0, d2)
    assert abs(j["p"] - chi2.sf(d2, 3)) < 1e-12 and j["dof"] == 3


def test_joint_check_holds_nothing_for_a_failed_or_degenerate_posterior():
    """An implausible fit, or a posterior of one effective draw (the correlation of identical
    draws is singular; solving with it gave d2 = -2.6e21, "inside"), is a miss, never a hit."""
    rng = np.random.default_rng(7)
    res, names, m, _ = _gaussian_result(rng, k=3)
    tr = dict(zip(names, m))                           # the truth at the median: d2 = 0
    assert fd.joint_check(res, tr, names)["in95"]
    bad = {**res, "status": "implausible"}
    j = fd.joint_check(bad, tr, names)
    assert not j["in95"] and not j["in68"] and j["d2"] == np.inf and "implausible" in j["reason"]
    sing = {**res, "identifiability": {"names": names, "correlation": np.ones((3, 3)).tolist()}}
    assert "not positive definite" in fd.joint_check(sing, tr, names)["reason"]
    zero = {**res, "parameters": {**res["parameters"],
                                  names[0]: {**res["parameters"][names[0]], "stderr": 0.0}}}
    assert not fd.joint_check(zero, tr, names)["in95"]
