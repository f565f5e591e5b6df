"""The importance proposal's refit rules on a shipped peripheral flight, from a finished
reconstruction's optimum (docs/design/importance_sampling.rst, shipped_records.rst).

    .venv/bin/python benchmarks/importance_refit.py OUT/result.json low_energy \
        [--adapt moments|quadratic] [--n 2000] [--n-max 4000 --ess-target 100] [--seed 1]
        [--curvature 200]

Takes the modes the reconstruction's importance stage used
(``diagnostics.importance.mode_x``), their Jacobians at the run's ``jac_step`` (1e-2), and runs
:func:`identification.engines.importance_samples` with the given refit rule: prints each round's
effective sample size, the rules used, the total ESS, and every parameter's weighted mean and
sd against the truth with the joint d2 of the 11 initial conditions (the posterior's Gaussian
region, as :func:`recon.validation.joint_check`).

``--truth-lr BEST`` prints the truth's likelihood-ratio statistic against the best cost
``BEST``: ``2 (cost(truth) - BEST)`` for all the free parameters, and with the clock offset
re-fitted (a bounded 1-d search) for the initial conditions, with their chi-square tail
probabilities: how far inside its 95 % region a calibrated posterior puts the truth.

``--hpd`` also prints the truth's place in the highest-density region of the weighted draws
(:func:`recon.validation.hpd_check`'s statistic: the posterior mass at higher log posterior
than the truth's, all 12 parameters), beside the Gaussian d2 from the weighted draws'
median and covariance: the one depends on a 12 x 12 covariance estimate from ESS ~100, the
other does not.

``--curvature N`` first draws N points from the Laplace Gaussian at 1.5 of its scale and fits
a full quadratic to their log posterior in the Laplace-whitened coordinates: the fit's
residual sd and the eigenvalues of its Hessian in units of the Laplace one (``J^T J``), the
measure of how far the finite-difference Jacobian is from the posterior's curvature.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
from scipy.stats import chi2

from identification.engines import importance_samples, jacobian
from identification.engines.laplace import laplace_covariance
from recon.flight import flight_problem
from telemetry_samples import SAMPLES_DIR

FLIGHTS = SAMPLES_DIR / "flights" / "peripheral"
SCENARIO = "models/peripheral/presets/reference.toml"


def curvature(problem, x0, jac, n, rng):
    """Quadratic fit of the log posterior over ``n`` draws from the Laplace Gaussian at 1.5 of
    its scale: (residual sd, Hessian eigenvalues in units of J^T J)."""
    cov = laplace_covariance(jac)
    root = np.linalg.cholesky(cov)
    z = 1.5 * rng.standard_normal((n, x0.size))
    lp = problem.log_probability(x0[None, :] + z @ root.T)
    ok = np.isfinite(lp)
    z, lp = z[ok], lp[ok]
    iu, ju = np.triu_indices(x0.size)
    design = np.column_stack([np.ones(len(z)), z, z[:, iu] * z[:, ju]])
    coef, *_ = np.linalg.lstsq(design, lp, rcond=None)
    hess = np.zeros((x0.size, x0.size))
    hess[iu, ju] = -coef[x0.size + 1:]
    return float(np.std(lp - design @ coef)), np.linalg.eigvalsh(hess + hess.T)


def truth_lr(problem, truth, best):
    """Print the truth's likelihood-ratio statistics against the best cost ``best``."""
    from scipy.optimize import minimize_scalar

    names = list(problem.names)
    xt = np.array([truth[n] for n in names])

    def cost(x):
        r = problem.least_squares_residuals(x)
        return 0.5 * float(r @ r)

    k = names.index("clock_offset")

    def with_clock(c):
        x = xt.copy()
        x[k] = c
        return cost(x)

    fit = minimize_scalar(with_clock, bounds=(xt[k] - 0.02, xt[k] + 0.02), method="bounded",
                          options={"xatol": 1e-5})
    all_lr, ic_lr = 2 * (cost(xt) - best), 2 * (fit.fun - best)
    print(f"truth cost {cost(xt):.2f}, {fit.fun:.2f} with the clock at {fit.x:.5f} s; "
          f"LR {all_lr:.2f} for {len(names)} (p {chi2.sf(all_lr, len(names)):.3f}), "
          f"{ic_lr:.2f} for the {len(names) - 1} initial conditions "
          f"(p {chi2.sf(ic_lr, len(names) - 1):.3f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("result")
    ap.add_argument("flight")
    ap.add_argument("--adapt", default="quadratic", choices=("moments", "quadratic"))
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--n-max", type=int, default=None)
    ap.add_argument("--ess-target", type=float, default=None)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--curvature", type=int, default=0)
    ap.add_argument("--truth-lr", type=float, default=None, metavar="BEST")
    ap.add_argument("--hpd", action="store_true")
    a = ap.parse_args()
    doc = json.loads(open(a.result).read())
    step = float(doc["settings"]["engine"]["jac_step"])
    problem = flight_problem(FLIGHTS / f"{a.flight}.parquet", SCENARIO,
                             config=FLIGHTS / "run.toml").problem
    truth = json.loads((FLIGHTS / f"{a.flight}.truth.json").read_text())["parameters"]
    if a.truth_lr is not None:
        truth_lr(problem, truth, a.truth_lr)
    modes = [np.asarray(m, float) for m in doc["diagnostics"]["importance"]["mode_x"]]
    jacs = [jacobian(problem, m, diff_step=step, with_prior=True) for m in modes]
    rng = np.random.default_rng(a.seed)
    if a.curvature:
        rsd, eig = curvature(problem, modes[0], jacs[0], a.curvature, rng)
        print(f"quadratic fit over {a.curvature} Laplace draws at 1.5 scale: residual sd "
              f"{rsd:.2f}; Hessian eigenvalues / J^T J: {np.round(eig, 3)}")
    kept = {}
    if a.hpd:   # keep the weighted draws the resampled ones come from
        mod = sys.modules["identification.engines.importance"]
        weights = mod._mixture_log_weights

        def keep(all_x, all_lp, mixes, counts):
            lw = weights(all_x, all_lp, mixes, counts)
            kept.update(x=np.vstack(all_x), lp=np.concatenate(all_lp), lw=lw)
            return lw
        mod._mixture_log_weights = keep
    t0 = time.time()
    draws, _, info = importance_samples(problem, modes, jacs, a.n, rng, adapt=a.adapt,
                                        n_max=a.n_max, ess_target=a.ess_target)
    print(f"{a.flight} {a.adapt}: ESS {info['ess']:.1f} of {info['n_proposal']}; rounds "
          f"{np.round(info['round_ess'], 1).tolist()}; refits {info['refits']}; "
          f"mode weights {np.round(info['mode_weights'], 4).tolist()} ({time.time() - t0:.0f} s)")
    names = list(problem.names)
    ics = [n for n in names if n.startswith("rel_") and n in truth]
    idx = [names.index(n) for n in ics]
    med = np.median(draws, axis=0)
    dev = np.array([truth[n] for n in ics]) - med[idx]
    d2 = float(dev @ np.linalg.solve(np.cov(draws[:, idx].T), dev))
    print(f"joint d2 of {len(ics)} initial conditions {d2:.2f} "
          f"(95 % limit {chi2.ppf(0.95, len(ics)):.2f})")
    if a.hpd:
        x, lp, lw = kept["x"], kept["lp"], kept["lw"]
        ok = np.isfinite(lw)
        w = np.where(ok, np.exp(lw - lw[ok].max()), 0.0)
        w /= w.sum()
        xt = np.array([truth[n] for n in names])
        lpt = float(problem.log_probability(xt[None, :])[0])
        mu = w @ x
        cw = ((x - mu) * w[:, None]).T @ (x - mu)
        wmed = np.array([np.interp(0.5, np.cumsum(w[o]), x[o, j])
                         for j, o in enumerate(np.argsort(x, axis=0).T)])
        dv = (xt - wmed)[idx]
        wd2 = float(dv @ np.linalg.solve(cw[np.ix_(idx, idx)], dv))
        print(f"weighted draws: Gaussian d2 {wd2:.1f} (p {chi2.sf(wd2, len(idx)):.3f}); "
              f"HPD mass above the truth {float(w[lp > lpt].sum()):.3f}; max weight "
              f"{w.max():.3f}; 2 (lp max - lp truth) {2 * (np.nanmax(lp) - lpt):.2f}")
    mean, sd = draws.mean(axis=0), draws.std(axis=0)
    for i, n in enumerate(names):
        if n in truth:
            print(f"  {n:13s} truth {truth[n]:+.5f} mean {mean[i]:+.5f} sd {sd[i]:.2e} "
                  f"z {(truth[n] - mean[i]) / sd[i]:+.2f}")


if __name__ == "__main__":
    main()
