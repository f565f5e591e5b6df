"""The importance-sampling engine: adaptive, multi-mode importance sampling of the posterior
from a Student-t mixture proposal over the optima the search found.
"""
from __future__ import annotations

import itertools
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy.special import logsumexp

from identification.engines.laplace import laplace, laplace_covariance
from identification.engines.least_squares import add_runs, jacobian, multistart
from identification.result import Posterior, Result

__all__ = ["importance", "importance_samples", "find_modes", "quadratic_fit"]

log = logging.getLogger("dockrecon.engines")


def _scaled_eigh(cov) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(sd, w, v)`` with ``cov = D v diag(w) v^T D``, ``D = diag(sd)`` (``cov``
    symmetrized; a zero standard deviation taken as 1, eigenvalues held above 1e-300).

    Factorized as D R D with D the standard deviations: the eigenvalues of the
    correlation-scaled R stay resolved when the parameters' SI magnitudes differ by many
    orders (those of ``cov`` itself only to eps times the largest). ``D v sqrt(w)`` is a
    square root of ``cov``."""
    c = 0.5 * (np.asarray(cov, float) + np.asarray(cov, float).T)
    sd = np.sqrt(np.clip(np.diag(c), 0.0, None))
    sd = np.where(sd > 0, sd, 1.0)
    w, v = np.linalg.eigh(c / np.outer(sd, sd))
    return sd, np.clip(w, 1e-300, None), v


class _MixtureT:
    """Mixture of multivariate Student-t densities (shared ``df``), for importance sampling."""

    def __init__(self, means, covs, alphas, df: float) -> None:
        self.df = float(df)
        self.means = [np.asarray(m, float) for m in means]
        self.alphas = np.asarray(alphas, float) / np.sum(alphas)
        self.roots, self.precs, self.logdets = [], [], []
        for c in covs:
            sd, w, v = _scaled_eigh(c)
            self.roots.append(sd[:, None] * v * np.sqrt(w)[None, :])
            self.precs.append(((v / w[None, :]) @ v.T) / np.outer(sd, sd))
            self.logdets.append(float(np.sum(np.log(w)) + 2.0 * np.sum(np.log(sd))))

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        d = self.means[0].size
        k = rng.choice(len(self.means), size=n, p=self.alphas)
        z = rng.standard_normal((n, d))
        u = rng.chisquare(self.df, n) / self.df
        out = np.empty((n, d))
        for j in range(len(self.means)):
            m = k == j
            out[m] = self.means[j][None, :] + (z[m] @ self.roots[j].T) / np.sqrt(u[m])[:, None]
        return out

    def component_logpdf(self, x: np.ndarray) -> np.ndarray:
        """``(n, K)`` log densities of each component (normalized)."""
        from scipy.special import gammaln

        n, d = x.shape
        nu = self.df
        const = gammaln(0.5 * (nu + d)) - gammaln(0.5 * nu) - 0.5 * d * np.log(nu * np.pi)
        out = np.empty((n, len(self.means)))
        for j, (m, p, ld) in enumerate(zip(self.means, self.precs, self.logdets)):
            dev = x - m[None, :]
            maha = np.einsum("ij,jk,ik->i", dev, p, dev)
            out[:, j] = const - 0.5 * ld - 0.5 * (nu + d) * np.log1p(maha / nu)
        return out

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        from scipy.special import logsumexp

        return logsumexp(self.component_logpdf(x) + np.log(self.alphas)[None, :], axis=1)


def quadratic_fit(x: np.ndarray, log_p: np.ndarray, centre: np.ndarray, cov: np.ndarray, *,
                  max_step: float = 3.0, max_zoom: float = 5.0
                  ) -> tuple[np.ndarray, np.ndarray] | None:
    """Centre and covariance of the Gaussian that a quadratic fit of the log density implies.

    The draws ``x`` (n, d) are whitened by ``centre`` and ``cov`` (``z = R^-1 (x - centre)``,
    ``cov = R R^T``) and

    .. math:: \\log p(z) \\approx a + b^T z - \\tfrac12 z^T H z

    is fitted by least squares over the draws with a finite ``log_p`` within
    ``chi2_d(0.999)`` of the largest (a shell twice the width of the posterior's 99.9 % region:
    the fit is local, and the far tail of a Student-t proposal, where the log density need not
    be quadratic, does not steer it). ``H``'s eigenvalues are held to
    ``[1 / max_zoom^2, max_zoom^2]`` (at most ``max_zoom`` times wider or narrower than
    ``cov`` per call; a flat or upward direction of the fit becomes the widest allowed) and the
    new centre ``H^-1 b`` to at most ``max_step`` from ``centre`` (whitened units), as a
    trust region.

    Returns ``(centre, covariance)`` in the units of ``x``, the covariance
    ``R H^-1 R^T`` (the inverse of the fitted curvature, not inflated), or None when fewer
    than twice as many draws as coefficients, ``(d + 1)(d + 2) / 2``, qualify or the design is
    rank-deficient.
    """
    from scipy.stats import chi2

    x = np.asarray(x, float)
    log_p = np.asarray(log_p, float)
    n, d = x.shape
    ncoef = (d + 1) * (d + 2) // 2
    ok = np.isfinite(log_p)
    if ok.sum() < 2 * ncoef:
        return None
    ok &= log_p >= log_p[ok].max() - chi2.ppf(0.999, d)
    if ok.sum() < 2 * ncoef:
        return None
    sd, ev, vec = _scaled_eigh(cov)
    root = sd[:, None] * vec * np.sqrt(ev)[None, :]
    z = np.linalg.solve(root, (x[ok] - np.asarray(centre, float)[None, :]).T).T
    iu, ju = np.triu_indices(d)
    design = np.column_stack([np.ones(len(z)), z, z[:, iu] * z[:, ju]])
    coef, _, rank, _ = np.linalg.lstsq(design, log_p[ok], rcond=None)
    if rank < ncoef:
        return None
    b = coef[1:d + 1]
    hess = np.zeros((d, d))
    hess[iu, ju] = -coef[d + 1:]
    hess = hess + hess.T  # off-diagonal: -c_ij; diagonal: -2 c_ii
    w, v = np.linalg.eigh(hess)
    w = np.clip(w, 1.0 / max_zoom ** 2, max_zoom ** 2)
    zc = (v / w[None, :]) @ (v.T @ b)
    step = float(np.linalg.norm(zc))
    if step > max_step:
        zc *= max_step / step
    new_cov = root @ ((v / w[None, :]) @ v.T) @ root.T
    return np.asarray(centre, float) + root @ zc, 0.5 * (new_cov + new_cov.T)


def _mixture_log_weights(all_x, all_lp, mixes, counts) -> np.ndarray:
    """Log importance weights of all the draws so far against the average of the proposals
    that drew them, each weighted by its share of the draws (the deterministic-mixture
    weights of adaptive multiple importance sampling); -inf where the posterior is 0."""
    from scipy.special import logsumexp

    draws, log_p = np.vstack(all_x), np.concatenate(all_lp)
    frac = np.log(np.asarray(counts, float) / sum(counts))
    log_q = logsumexp(np.column_stack([m.logpdf(draws) for m in mixes]) + frac[None, :],
                      axis=1)
    return np.where(np.isfinite(log_p), log_p - log_q, -np.inf)


def _kish(log_w: np.ndarray) -> float:
    """Kish effective sample size of log weights (0 when none is finite)."""
    ok = np.isfinite(log_w)
    if not ok.any():
        return 0.0
    w = np.exp(log_w[ok] - log_w[ok].max())
    return float(w.sum() ** 2 / np.sum(w * w))


#: Least share of a round's importance weight a component must carry to be refitted by the
#: quadratic rule (otherwise the moments rule).
_MIN_SHARE = 0.05


def pareto_k(log_w: np.ndarray) -> float:
    """The Pareto shape estimate ``k-hat`` of the importance weights' upper tail (Pareto-
    smoothed importance sampling, Vehtari et al.; ArviZ's ``psislw``): how far the weights
    can be trusted. Below :func:`pareto_k_limit` the self-normalised estimates converge at
    a practical rate; above it a few draws carry the estimate and its effective sample size
    overstates it. NaN for fewer than 10 finite weights."""
    lw = np.asarray(log_w, float)
    lw = lw[np.isfinite(lw)]
    if lw.size < 10:
        return float("nan")
    import warnings

    from arviz import psislw

    with warnings.catch_warnings():   # ArviZ warns for k > 0.7 itself; the caller decides
        warnings.simplefilter("ignore")
        _, k = psislw(lw - lw.max())
    return float(k)


def pareto_k_limit(n: int) -> float:
    """The k-hat above which ``n`` importance draws cannot be trusted: ``min(1 - 1/log10 n,
    0.7)`` (Vehtari et al., "Pareto smoothed importance sampling", 2024 revision)."""
    return float(min(1.0 - 1.0 / np.log10(max(n, 11)), 0.7))


def importance_samples(problem, x: np.ndarray | Sequence[np.ndarray],
                       jac_all: np.ndarray | Sequence[np.ndarray], n: int,
                       rng: np.random.Generator, *, n_out: int = 4000, df: float = 4.0,
                       inflate: float = 1.5, rounds: int = 4, adapt: str = "moments",
                       fit_inflate: float = 1.2, n_max: int | None = None,
                       ess_target: float | None = None, stop_above: float | None = None,
                       ess_enough: float | None = None,
                       progress=None) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """Posterior draws by adaptive importance sampling over one or several modes.

    The first proposal is a mixture of multivariate Student t (``df`` degrees of freedom), one
    component per mode ``x[k]`` with scale ``inflate^2 (J_k^T J_k)^+``
    (:func:`~identification.engines.laplace.laplace_covariance`; ``jac_all[k]``
    includes the prior rows). Each of ``rounds`` rounds draws ``n / rounds`` points, weights
    them by posterior / proposal, and refits every component's centre, scale and mixture
    weight to the weighted draws it is responsible for (population Monte Carlo; the new scale
    is the weighted covariance plus 10 % of the previous one; a component with fewer than
    ``ndim + 2`` effective draws moves to its heaviest draw and shrinks to 0.3 of its
    variance instead, which zooms in on a posterior much narrower than the Laplace scale).
    All draws are then weighted against the average of the proposals used (the
    deterministic-mixture weights of adaptive multiple importance sampling) and ``n_out`` are
    resampled (systematic resampling).

    ``adapt = "quadratic"`` refits each component instead from a response surface
    (:func:`quadratic_fit`): a full quadratic least-squares fit of the log posterior over every
    draw so far that the component owns, whose maximum and inverse Hessian (times
    ``fit_inflate^2``) become the next centre and scale. A regression uses every draw's value,
    not only the heavy ones, so it adapts when the weights are degenerate: when the first
    proposal is several times too narrow in a few directions, the weighted moments rest on
    one or two draws (and the zoom-in above shrinks the component further). A component the
    fit cannot serve (too few draws, a singular design), or that carries less than 5 % of the
    round's weight, is refitted by the moments rule. The fit is whitened by the component's
    *first* proposal, so its limits hold for all rounds together: the fitted scale stays
    within a factor 5 of the first proposal's in every direction (0.3-7.5 times the Laplace
    scale at ``inflate`` 1.5), the centre within 3 of its whitened units of the last one, and
    no marginal standard deviation exceeds the prior box's ``(upper - lower) / sqrt(12)``
    (a uniform prior's). Why: whitened by the last proposal instead, a direction the fit
    finds flat was widened 5 times per round with nothing to stop it; on the low-energy
    flight a proposal so refitted had a round ESS of 4.8 of 500
    (docs/design/importance_sampling.rst).

    Why: on the low-energy peripheral flight the finite-difference Jacobian overstates the
    curvature. A quadratic fit of the log posterior over 200 draws from the Laplace Gaussian
    at 1.5 of its scale leaves residuals of 0.3 (sd) and has Hessian eigenvalues 0.0-1.6 in
    units of ``J^T J``: five directions 2.5-6 times wider than Laplace
    (docs/design/importance_sampling.rst). There the moments rule's rounds had effective sample
    sizes of 2-17 of 100 draws each (total ESS 10 of 2000 in the engine: emcee, hours); the
    quadratic refit's had 3, 13, 86 and 186 of 500 (total 358 with ``fit_inflate`` 1.2, 249 with
    1.5; the truth inside the joint 95 % region). On the nominal and misaligned flights, where the
    moments rule is healthy (ESS 975 and 867), the quadratic refit gives 572 (``fit_inflate`` 1.5)
    and 864 (1.2). The fit is local and approximate, hence a scale wider than the fitted one, but
    narrower than ``inflate``: the efficiency of a Gaussian proposal ``s`` times wider than a
    Gaussian posterior is ``(sqrt(2 s^2 - 1) / s^2)^d``, for ``d = 12`` 0.55 at ``s = 1.2``
    and 0.11 at 1.5.

    With ``ess_target`` and ``n_max > n``, the sampler goes on after its ``rounds`` rounds,
    one round of ``n / rounds`` draws at a time (refitted as before), while the effective
    sample size of all the draws so far (deterministic-mixture weights) is below
    ``ess_target`` and another round stays within ``n_max`` draws in all. Why: a proposal
    that starts several times too narrow spends its first rounds learning its scale (on the
    low-energy peripheral flight, round ESS 1-16 of 500 in the first two), and one refit in
    three then fell back (ESS 83 then 53; total 97, below the 100 at which the engine runs
    emcee, hours on that record). A few hundred more draws cost a minute.

    With ``ess_enough``, the sampler stops before its ``rounds`` rounds are done once, after
    at least two rounds (one refit of the proposal), the effective sample size of all the
    draws so far reaches ``ess_enough`` and their Pareto k-hat is below its limit
    (:func:`pareto_k_limit`): the estimates are then as good as an MCMC run asked for that
    effective sample size, and the remaining rounds would only polish them. On the peripheral
    nominal flight the full 2 000 draws had ESS 919 (80 s of a 5-minute reconstruction).

    With ``stop_above``, the sampler stops after the first round that drew a point whose log
    posterior exceeds it (``info["stopped"]`` is then True): the caller's optimum was not the
    optimum (:func:`importance` polishes again from that draw and samples anew), so the rest
    of the rounds would be spent on a proposal about to be replaced. On the shipped slow
    probe-cone flight two such re-polishes each came after a whole 2 000-draw run.

    Why: the probe-cone posterior is neither one mode nor a Gaussian. The cost is a bowl with a
    roughness of a few units on top (events snap to the integration step) and, in roll,
    separate modes about 2.6 deg apart whose costs differ by less than one unit (the latches
    can enter their slots against either wall): on the nominal shipped flight the optimizer's
    best start (roll -2.6 deg, cost 341.2) and the truth's own mode (roll +0.5 deg, cost
    340.9) are both there, at a Laplace Mahalanobis distance of 50. Plain Laplace draws at the
    best start exclude the truth; an MCMC started there does not find the other modes either.

    Returns
    -------
    samples : ndarray (n_out, ndim)
    stderr : ndarray (ndim,)
        Weighted standard deviations.
    info : dict
        ``n_proposal``, ``ess`` (Kish effective sample size of the weights), ``ess_fraction``,
        ``pareto_k`` and ``pareto_k_limit`` (:func:`pareto_k`: the weights' tail; the
        estimates are the self-normalised ones, the k-hat is the gate of their trust),
        ``df``, ``inflate``, ``finite``, ``modes`` (count), ``mode_weights`` (posterior
        mass of each mode: the share of the final weights its component accounts for),
        ``best_draw`` and ``best_log_prob`` (the most probable proposal draw), ``adapt``,
        ``round_ess`` (each round's effective sample size against its own proposal) and
        ``refits`` (per round, the rule each component was refitted by: ``"quadratic"``,
        ``"moments"`` or ``"zoom"``), ``extra_rounds`` (rounds beyond ``rounds``),
        ``proposal_sd`` (each component's marginal scales in the last round) and
        ``weighted`` (arrays, not for a JSON document: every proposal draw ``draws``, its
        self-normalised ``log_weight``, ``log_prob``, and where the problem has
        ``log_likelihood_terms`` its log-likelihood by part ``terms`` and their
        ``term_names``; :func:`distinct_resample`).
    """
    if adapt not in ("moments", "quadratic"):
        raise ValueError(f"adapt must be 'moments' or 'quadratic', got {adapt!r}")
    xs = [np.asarray(x, float)] if np.ndim(x) == 1 else [np.asarray(v, float) for v in x]
    js = [jac_all] if np.ndim(jac_all) == 2 else list(jac_all)
    covs = [laplace_covariance(j) * inflate ** 2 for j in js]
    covs0 = list(covs)
    space = getattr(problem, "space", None)
    box_sd = (None if space is None else (np.asarray(space.upper, float)
                                          - np.asarray(space.lower, float)) / np.sqrt(12.0))
    mix = _MixtureT(xs, covs, np.ones(len(xs)), df)
    rounds = max(1, int(rounds))
    per = max(1, n // rounds)
    n_max = per * rounds if n_max is None else max(int(n_max), per * rounds)
    all_x, all_lp, mixes, counts = [], [], [], []
    round_ess, refits = [], []
    # each draw's log-likelihood by part (telemetry channel) where the problem tells them
    terms_of = getattr(problem, "log_likelihood_terms", None)
    all_terms: list[np.ndarray] = []
    for r in itertools.count():
        xr = mix.sample(per, rng)
        if terms_of is not None:
            lp, tr = terms_of(xr)
            all_terms.append(tr)
        else:
            lp = problem.log_probability(xr)
        all_x.append(xr)
        all_lp.append(lp)
        mixes.append(mix)
        counts.append(per)
        if progress is not None:
            progress("importance", r + 1, max(rounds, r + 1))
        lq = mix.logpdf(xr)
        lw = np.where(np.isfinite(lp), lp - lq, -np.inf)
        round_ess.append(_kish(lw))
        stopped = bool(stop_above is not None and np.any(lp > stop_above))
        if stopped:
            break
        if ess_enough is not None and 1 <= r < rounds - 1:
            lw_all = _mixture_log_weights(all_x, all_lp, mixes, counts)
            ok = np.isfinite(lw_all)
            if (_kish(lw_all) >= ess_enough
                    and pareto_k(lw_all[ok]) <= pareto_k_limit(int(ok.sum()))):
                break
        if r >= rounds - 1:
            if (ess_target is None or sum(counts) + per > n_max
                    or _kish(_mixture_log_weights(all_x, all_lp, mixes, counts)) >= ess_target):
                break
        if not np.isfinite(lw).any():
            continue
        w = np.exp(lw - lw[np.isfinite(lw)].max())
        # refit each component to the draws it is responsible for
        comp = mix.component_logpdf(xr) + np.log(mix.alphas)[None, :]
        resp = np.exp(comp - lq[:, None])
        if adapt == "quadratic":
            xa, lpa = np.vstack(all_x), np.concatenate(all_lp)
            own = np.argmax(mix.component_logpdf(xa) + np.log(mix.alphas)[None, :], axis=1)
        means, cvs, alphas, how = [], [], [], []
        for j in range(len(xs)):
            wj = w * resp[:, j]
            sw = wj.sum()
            if sw <= 0:
                means.append(mix.means[j])
                cvs.append(covs[j])
                alphas.append(mix.alphas[j])
                how.append("kept")
                continue
            # a component with little of the round's weight is left to the moments rule: its
            # own draws lie mostly on its border with the others, a poor base for a fit
            weak = sw < _MIN_SHARE * w.sum()
            fit = (quadratic_fit(xa[own == j], lpa[own == j], mix.means[j], covs0[j])
                   if adapt == "quadratic" and not weak else None)
            if fit is not None:
                cq = fit[1] * fit_inflate ** 2
                if box_sd is not None:
                    # no wider than the prior box: a uniform prior's sd is width / sqrt(12)
                    sq = np.sqrt(np.clip(np.diag(cq), 0.0, None))
                    f = np.minimum(1.0, box_sd / np.where(sq > 0, sq, 1.0))
                    cq = cq * np.outer(f, f)
                means.append(fit[0])
                cvs.append(cq)
                alphas.append(max(sw, 1e-3 * w.sum()))
                how.append("quadratic")
                continue
            s2 = float(np.sum(wj * wj))
            # a component none of whose draws carries weight has no effective draws either
            few = s2 == 0.0 or sw * sw / s2 < xr.shape[1] + 2
            if few and adapt == "quadratic" and weak:
                # under the quadratic refit a weak component with too few effective draws
                # keeps its centre and scale (its mixture weight follows the round): they say
                # that its mode holds little mass, not that the posterior is narrower than it
                means.append(mix.means[j])
                cvs.append(covs[j])
                alphas.append(max(sw, 1e-3 * w.sum()))
                how.append("kept")
                continue
            if few:
                # too few effective draws to refit: the posterior is narrower than this
                # component (or off its centre). Zoom in: centre on its heaviest draw,
                # shrink the scale to 0.3 of the variance.
                means.append(xr[int(np.argmax(wj))])
                cvs.append(0.3 * covs[j])
                alphas.append(max(sw, 1e-3 * w.sum()))
                how.append("zoom")
                continue
            mj = wj @ xr / sw
            dev = xr - mj[None, :]
            cj = (wj[:, None] * dev).T @ dev / sw
            means.append(mj)
            cvs.append(cj + 0.1 * covs[j])
            alphas.append(max(sw, 1e-3 * w.sum()))
            how.append("moments")
        refits.append(how)
        covs = cvs
        mix = _MixtureT(means, cvs, alphas, df)
    draws = np.vstack(all_x)
    log_p = np.concatenate(all_lp)
    log_w = _mixture_log_weights(all_x, all_lp, mixes, counts)
    finite = np.isfinite(log_w)
    if not finite.any():
        raise RuntimeError("importance sampling: no proposal draw has a finite posterior")
    w = np.exp(log_w - log_w[finite].max())
    w /= w.sum()
    ess = float(1.0 / np.sum(w * w))
    k_hat = pareto_k(log_w[finite])
    pos = (rng.random() + np.arange(n_out)) / n_out
    idx = np.minimum(np.searchsorted(np.cumsum(w), pos), draws.shape[0] - 1)
    samples = draws[idx]
    mean = w @ draws
    stderr = np.sqrt(np.clip(w @ (draws - mean) ** 2, 0.0, None))
    # posterior share of each mode: responsibilities under the first proposal's components
    resp0 = mixes[0].component_logpdf(draws) + np.log(mixes[0].alphas)[None, :]
    owner = np.argmax(resp0, axis=1)
    shares = [float(w[owner == j].sum()) for j in range(len(xs))]
    ib = int(np.argmax(np.where(np.isfinite(log_p), log_p, -np.inf)))
    info = {"best_draw": draws[ib], "best_log_prob": float(log_p[ib]),
            "n_proposal": int(draws.shape[0]), "ess": ess,
            "ess_fraction": ess / draws.shape[0], "pareto_k": k_hat,
            "pareto_k_limit": pareto_k_limit(int(finite.sum())), "df": df, "inflate": inflate,
            "rounds": r + 1, "extra_rounds": max(0, r + 1 - rounds), "stopped": stopped,
            "finite": int(finite.sum()),
            "modes": len(xs), "mode_weights": shares, "adapt": adapt, "round_ess": round_ess,
            "refits": refits,
            "proposal_sd": [np.sqrt(np.clip(np.diag(c), 0.0, None)).tolist() for c in covs],
            "weighted": {"draws": draws, "log_weight": np.where(
                finite, log_w - logsumexp(log_w[finite]), -np.inf), "log_prob": log_p,
                "terms": np.vstack(all_terms) if all_terms else None,
                "term_names": (tuple(problem.likelihood_groups()) if all_terms else ())}}
    return samples, stderr, info


def distinct_resample(weighted: Mapping[str, Any], rng: np.random.Generator, *,
                      chains: int = 4) -> dict[str, np.ndarray]:
    """As many distinct draws as the weights' effective sample size, resampled without
    repeats (with probability proportional to weight, in random order) and cut into
    ``chains`` chains: draws that ArviZ reads as they are, so that its effective sample size
    of them is the weights' (Kish) one and its R-hat compares four independent sets.

    A resample *with* repeats (the ``n_out`` systematic resample) shows ArviZ several
    thousand draws of which a few hundred are distinct, which it cannot tell from a
    sampler with that many independent draws. Without repeats, a draw of weight above
    ``1 / ESS`` counts once where its weight asks for more, so the resample is flatter than
    the posterior in its heaviest draws; the medians and intervals of ``result.json`` come
    from the weights, not from this resample.

    Parameters
    ----------
    weighted
        ``info["weighted"]`` of :func:`importance_samples`: ``draws`` ``(N, d)``,
        ``log_weight`` ``(N,)`` (self-normalised), ``log_prob`` ``(N,)``, ``terms``
        ``(N, parts)`` or None.

    Returns
    -------
    dict
        ``draws`` ``(chains, m, d)``, ``log_prob`` ``(chains, m)`` and ``terms``
        ``(chains, m, parts)`` (or None), ``m = floor(round(ESS) / chains)``.
    """
    lw = np.asarray(weighted["log_weight"], float)
    ok = np.isfinite(lw)
    w = np.where(ok, np.exp(lw - (lw[ok].max() if ok.any() else 0.0)), 0.0)
    w /= w.sum()
    ess = 1.0 / float(np.sum(w * w))
    n = int(min(max(1, round(ess)), int(ok.sum())))
    chains = chains if n >= 4 * chains else 1
    m = n // chains
    idx = rng.choice(w.size, chains * m, replace=False, p=w)
    rng.shuffle(idx)
    terms = weighted.get("terms")
    return {"draws": weighted["draws"][idx].reshape(chains, m, -1),
            "log_prob": np.asarray(weighted["log_prob"])[idx].reshape(chains, m),
            "terms": None if terms is None else terms[idx].reshape(chains, m, -1)}


def find_modes(problem, result: Result, *, diff_step: float, delta: float = 25.0,
               max_modes: int = 5) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Distinct optima among the result's least-squares runs, for a multi-mode proposal.

    A run counts if its cost is within ``delta`` of the best (a density ratio of e^-25:
    anything worse carries no posterior mass) and it lies outside the 99.9 % Laplace
    ellipsoid of every mode already kept; its Jacobian (with the prior rows) is computed at
    its end point. Returns the mode centres and Jacobians, best first (the first is the
    optimum itself, with ``result.jacobian``).
    """
    from scipy.stats import chi2

    best = result.best
    jac_best = result.jacobian
    modes = [np.asarray(best.x, float)]
    jacs = [jac_best]
    precs = [jac_best.T @ jac_best]
    limit = float(chi2.ppf(0.999, best.x.size))
    for s in sorted(result.starts, key=lambda s: s.cost):
        if len(modes) >= max_modes:
            break
        if not np.isfinite(s.cost) or s.cost > best.cost + delta:
            continue
        x = np.asarray(s.x, float)
        if any(float((x - m) @ p @ (x - m)) < limit for m, p in zip(modes, precs)):
            continue
        j = jacobian(problem, x, diff_step=diff_step, with_prior=True)
        modes.append(x)
        jacs.append(j)
        precs.append(j.T @ j)
    return modes, jacs


def importance(problem, result: Result, *, n: int, rng: np.random.Generator,
               diff_step: float = 1e-4, max_nfev: int | None = None,
               repolish: int = 2, polish_step: float | None = None,
               adapt: str = "moments", n_max: int | None = None,
               ess_target: float | None = None, ess_enough: float | None = None,
               progress=None) -> Result:
    """The importance-sampling engine: :func:`importance_samples` over the modes of the
    result's runs (:func:`find_modes`), as the ``"importance"`` posterior.

    A proposal draw more probable than the optimum by more than e^2 means the polish stopped
    short (rough cost, slow flights): the engine polishes again from that draw (origin
    ``"importance"``; at most ``repolish`` times; finite-difference step ``polish_step``, or
    ``diff_step`` when None), redoes the Laplace engine at the new optimum and samples again.
    The sampling of an attempt stops at the first round holding such a draw (``stop_above``
    of :func:`importance_samples`), the last attempt's runs whole. ``diagnostics.importance``
    records the effective sample size, the modes and their weights, the re-polishes
    (``restarts``) and the draws of the attempts they cut short (``discarded``). ``adapt`` is
    the proposal's refit rule, ``n_max`` and ``ess_target`` its extra rounds, ``ess_enough``
    its early end (:func:`importance_samples`). When no proposal draw has a finite posterior the result is
    ``failed``.
    """
    n_spent = 0
    for attempt in range(repolish + 1):
        modes, jacs = find_modes(problem, result, diff_step=diff_step)
        lp_opt = float(problem.log_probability(result.x_opt[None, :])[0])
        # a draw that beats the optimum ends the sampling at once when a re-polish may follow
        beat = lp_opt + 2.0 if attempt < repolish and np.isfinite(lp_opt) else None
        try:
            draws, se, info = importance_samples(problem, modes, jacs, n, rng, adapt=adapt,
                                                 n_max=n_max, ess_target=ess_target,
                                                 stop_above=beat, ess_enough=ess_enough,
                                                 progress=progress)
        except RuntimeError as exc:
            return result.fail(f"importance sampling around the optimum: {exc}")
        if not info["stopped"]:
            break
        n_spent += info["n_proposal"]
        extra = multistart(problem, 0, first_guess=info["best_draw"], max_nfev=max_nfev,
                           diff_step=polish_step or diff_step, origin="importance")
        log.info("importance draw beats the optimum by %.1f: polished again to cost %.2f",
                 info["best_log_prob"] - lp_opt, min(s.cost for s in extra))
        add_runs(problem, result, extra)
        laplace(problem, result, rng=rng, diff_step=diff_step)
    info["mode_x"] = modes
    info["restarts"] = attempt
    # draws of the attempts a re-polish cut short (not in the posterior)
    info["discarded"] = n_spent
    weighted = info.pop("weighted")
    # a child stream: the resample draws nothing from ``rng``, so that whatever the caller
    # draws from it next (the posterior products) is as it would be without the resample
    distinct = distinct_resample(weighted, rng.spawn(1)[0])
    result.diagnostics["importance"] = info
    result.set_posterior(Posterior(
        "importance", draws, se, np.asarray(result.x_opt, float), chains=distinct["draws"],
        log_prob=distinct["log_prob"], log_likelihood=distinct["terms"],
        likelihood_names=weighted["term_names"], proposal=weighted["draws"],
        proposal_log_weight=weighted["log_weight"]))
    return result
