"""The checks every shipped-flight reconstruction test makes, whatever the docking unit."""
from __future__ import annotations

import numpy as np

from identification.engines import multistart, refine
from identification.result import Result
from recon.validation import hpd_check, joint_check


def check_search(problem, truth: dict, result) -> None:
    """Assert that the polish found the truth's basin: its best cost is at most that of a
    polish started at the truth (with the engine's steps: ``jac_step``, then ``polish_step``
    if set) plus 1, and the truth's excess over it is within chi2_12 99.9 % / 2 = 16.4."""
    xt = np.array([truth[n] for n in problem.names])
    r = problem.least_squares_residuals(xt)
    engine = result.settings["engine"]
    from_truth = Result("fit", names=tuple(problem.names))
    from_truth.starts.extend(multistart(problem, 0, first_guess=xt, max_nfev=100,
                                        diff_step=engine["jac_step"]))
    if engine.get("polish_step") is not None:
        refine(problem, from_truth, diff_step=engine["polish_step"], max_nfev=100)
    at_truth = from_truth.best.cost
    best = result.diagnostics["optimizer"]["best_cost"]
    assert best <= at_truth + 1.0 and 0.5 * r @ r - best < 16.4, (best, at_truth, 0.5 * r @ r)


def hpd_of_result(problem, truth: dict, result) -> dict:
    """:func:`recon.validation.hpd_check` of the truth against a result's posterior: an MCMC
    posterior's chains with the log posterior the sampler kept, else the equally weighted
    draws (an importance posterior's with its ESS)."""
    post = result.posterior
    if post.chains is not None and post.log_prob is not None:
        x = post.chains.reshape(-1, post.chains.shape[-1])
        return hpd_check(problem, x, truth, log_prob=np.ravel(post.log_prob))
    ess = (result.diagnostics.get("importance") or {}).get("ess")
    return hpd_check(problem, post.samples, truth,
                     ess=ess if post.method == "importance" else None)


def check_shipped_reconstruction(problem, truth: dict, result, doc: dict) -> list[str]:
    """Assert what must hold if the method is right, whatever the noise draw, and return the
    names of the free initial conditions.

    * the engine took emcee exactly when the importance ESS was below 100 or the weights'
      Pareto k-hat above its limit (the hybrid rule);
    * the polish found the truth's basin (:func:`check_search`);
    * the closing velocity's 68 % interval is narrower than 0.01 m/s;
    * the truth lies inside the posterior's joint 95 % region: the highest-density region
      of all the free parameters (:func:`hpd_of_result`), which needs no covariance
      estimate (importance posteriors of ESS ~100-900 in 12 dimensions make the Gaussian
      distance depend on the sampler's seed: docs/design/shipped_records.rst, the streams, and
      the probe-cone nominal flight's posterior has several roll modes). The initial
      conditions' Gaussian region (:func:`recon.validation.joint_check`) is reported with a
      miss, not asserted.

    ``problem`` is the flight's :class:`recon.problem.ReconstructionProblem`, ``truth`` the
    truth file's parameters, ``result`` what ``reconstruct_flight`` returned and ``doc`` its
    result.json."""
    imp = result.diagnostics["importance"]
    trusted = imp["ess"] >= 100 and not imp["pareto_k"] > imp["pareto_k_limit"]
    assert result.diagnostics["method"] == ("importance" if trusted else "mcmc")
    check_search(problem, truth, result)
    out = doc["parameters"]
    lo, hi = out["rel_vel_x"]["ci68"]
    assert hi - lo < 0.01
    ics = [n for n in out if n.startswith("rel_") and n != "rel_pos_x"]
    hpd = hpd_of_result(problem, truth, result)
    assert hpd["in95"], (hpd, joint_check(doc, truth, ics))
    return ics
