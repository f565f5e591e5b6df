"""The joint posterior of parameters shared by several records (a fleet of flights of one
unit): per-record posteriors combined, then corrected by importance sampling on the joint
likelihood.

Record ``i`` has its own parameters ``theta_i`` (a flight's initial conditions and clock) and
shares ``m`` (the unit's mechanism numbers) with the others. With independent records and
priors ``p(m)``, ``p(theta_i)``, the joint posterior is

    p(m, theta_1..n | y) ∝ p(m) prod_i p(theta_i) L_i(m, theta_i)
                         = prod_i pi_i(m, theta_i) / p(m)^(n-1),

``pi_i = p(m) p(theta_i) L_i`` being record ``i``'s own unnormalized posterior, the one its
reconstruction sampled. The method (:func:`combine`) is exact in the limit of many draws:

1. Each record's posterior gives a Gaussian over ``(m, theta_i)`` (its Laplace approximation,
   or the weighted moments of its draws: :func:`gaussian_of`).
   Their ``m`` marginals multiplied, the prior divided out ``n - 1`` times (a normal prior
   exactly; a uniform one has no precision to remove), give the proposal ``q(m)``, a
   multivariate t (``df``, scale inflated by ``inflate``).
2. For each of ``M`` draws ``m_j`` from ``q`` and each record, ``K`` draws ``theta_ijk`` from
   the (nearly Gaussian) t of that record's Gaussian conditioned on ``m_j`` estimate the
   record's marginal
   likelihood at ``m_j`` without bias,

       w_i(m_j) = (1/K) sum_k pi_i(m_j, theta_ijk) / q_i(theta_ijk | m_j),

   with the exact likelihood (one forward run per draw). The records are independent given
   ``m``: each record's ``M K`` runs are one task, and the tasks of a round run in parallel
   (the campaign's Dask cluster).
3. ``m_j`` carries ``W_j = prod_i w_i(m_j) / (p(m_j)^(n-1) q(m_j))``: importance sampling with
   unbiased random weights (pseudo-marginal), consistent for the joint posterior. Each
   record's ``theta_i`` given the fleet is drawn, for each ``m_j``, among its ``K`` draws in
   proportion to their inner weights, so ``(m_j, theta_1j .. theta_nj)`` with weight ``W_j``
   is a weighted draw of the joint posterior.
4. A second round refits ``q(m)`` to the first round's weighted moments (population Monte
   Carlo) and repeats 2-3; the last round is the result. Its effective sample size and the
   Pareto k-hat of ``log W`` (:func:`identification.engines.importance.pareto_k`) say how far
   it can be trusted.

The variance of ``log w_i`` falls as ``1/K``, so ``K`` trades forward runs against the noise
the estimated weights add (their product over ``n`` records): ``inner`` defaults to 24.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy.special import gammaln, logsumexp

from identification.engines.importance import pareto_k, pareto_k_limit

__all__ = ["FleetSettings", "FlightGaussian", "FleetResult", "gaussian_of", "fleet_proposal",
           "flight_draws", "combine", "t_logpdf", "t_draws"]


@dataclasses.dataclass(frozen=True)
class FleetSettings:
    """How the records' posteriors are combined (module docstring)."""

    shared_draws: int = 400    # M: draws of the shared parameters per round
    inner: int = 24            # K: draws of each record's own parameters per shared draw
    rounds: int = 2
    df: float = 5.0            # degrees of freedom of the shared parameters' t proposal
    inflate: float = 1.2       # scale factor on its Gaussian spread
    # each record's own parameters given the shared ones: nearly Gaussian, not inflated. In
    # 12-13 dimensions heavier tails put most draws where the likelihood is negligible: on two
    # shipped flights t(5) x 1.2 spread their log weights by 7-16, t(50) x 1.0 by 1.4-1.9
    inner_df: float = 50.0
    inner_inflate: float = 1.0
    n_out: int = 2000          # equally weighted joint draws resampled from the last round

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class FlightGaussian:
    """One record's posterior as a Gaussian over its free parameters ``names``, with the
    indices of the shared ones (in the order of the fleet's shared names) and of its own."""

    names: tuple[str, ...]
    mean: np.ndarray
    cov: np.ndarray
    shared: np.ndarray      # indices into names, in the fleet's shared order
    own: np.ndarray         # indices of the record's own parameters

    def conditional(self, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mean ``(M, d_own)`` and covariance ``(d_own, d_own)`` of the own parameters given
        shared values ``m`` ``(M, k)``."""
        s, o = self.shared, self.own
        Css = self.cov[np.ix_(s, s)]
        Cos = self.cov[np.ix_(o, s)]
        A = np.linalg.solve(Css, Cos.T).T            # C_os C_ss^-1
        mean = self.mean[o][None, :] + (m - self.mean[s][None, :]) @ A.T
        cov = self.cov[np.ix_(o, o)] - A @ Cos.T
        return mean, 0.5 * (cov + cov.T)


def gaussian_of(names: Sequence[str], samples: np.ndarray, shared: Sequence[str],
                weights: np.ndarray | None = None) -> FlightGaussian:
    """The Gaussian of a record's posterior draws ``samples`` ``(N, d)`` over ``names``
    (weighted moments with ``weights``), split into the ``shared`` names and the others."""
    x = np.asarray(samples, float)
    w = np.full(x.shape[0], 1.0 / x.shape[0]) if weights is None else weights / weights.sum()
    mean = w @ x
    dx = x - mean
    cov = (dx * w[:, None]).T @ dx
    names = tuple(names)
    missing = [n for n in shared if n not in names]
    if missing:
        raise ValueError(f"shared parameters not free in this record: {missing}")
    s = np.array([names.index(n) for n in shared], int)
    o = np.array([j for j, n in enumerate(names) if n not in shared], int)
    # a parameter the draws do not move (a degenerate direction) keeps a tiny spread
    floor = 1e-12 * np.maximum(np.abs(mean), 1.0) ** 2
    cov = cov + np.diag(np.maximum(floor - np.diag(cov), 0.0))
    return FlightGaussian(names, mean, cov, s, o)


def t_logpdf(x: np.ndarray, mean: np.ndarray, cov: np.ndarray, df: float) -> np.ndarray:
    """Log density of the multivariate t (location ``mean``, scale ``cov``) at rows of ``x``;
    ``mean`` may be ``(d,)`` or one row per ``x`` row."""
    d = x.shape[-1]
    L = np.linalg.cholesky(cov)
    z = np.linalg.solve(L, (x - mean).T).T
    q = np.sum(z * z, axis=-1)
    logdet = 2.0 * np.sum(np.log(np.diag(L)))
    return (gammaln(0.5 * (df + d)) - gammaln(0.5 * df) - 0.5 * d * math.log(df * math.pi)
            - 0.5 * logdet - 0.5 * (df + d) * np.log1p(q / df))


def t_draws(mean: np.ndarray, cov: np.ndarray, df: float, n: int,
            rng: np.random.Generator) -> np.ndarray:
    """``n`` draws of the multivariate t; ``mean`` ``(d,)`` or ``(n, d)``."""
    d = cov.shape[0]
    L = np.linalg.cholesky(cov)
    z = rng.standard_normal((n, d)) @ L.T
    u = rng.chisquare(df, size=n) / df
    return mean + z / np.sqrt(u)[:, None]


def fleet_proposal(gaussians: Sequence[FlightGaussian], prior_precision: np.ndarray,
                   prior_mean: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The product of the records' Gaussian marginals of the shared parameters with the prior
    divided out ``n - 1`` times (module docstring, step 1): mean and covariance. Where that
    precision is not positive (a record's draws narrower than its own prior allows, by
    sampling error) the prior is not divided out."""
    n = len(gaussians)
    P = np.zeros_like(prior_precision)
    b = np.zeros(prior_mean.shape)
    for g in gaussians:
        Pi = np.linalg.inv(g.cov[np.ix_(g.shared, g.shared)])
        P += Pi
        b += Pi @ g.mean[g.shared]
    Pc = P - (n - 1) * prior_precision
    bc = b - (n - 1) * prior_precision @ prior_mean
    try:
        np.linalg.cholesky(Pc)
    except np.linalg.LinAlgError:
        Pc, bc = P, b
    cov = np.linalg.inv(Pc)
    return cov @ bc, 0.5 * (cov + cov.T)


def flight_draws(log_posterior: Callable[[np.ndarray], np.ndarray], g: FlightGaussian,
                 m: np.ndarray, inner: int, rng: np.random.Generator, *, df: float = 50.0,
                 inflate: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """One record's task of a round (module docstring, step 2): for each shared draw
    ``m_j`` (rows of ``m``), ``inner`` draws of the record's own parameters from the t of its
    Gaussian conditioned on ``m_j``, and their log weights ``log pi_i - log q_i``. Returns
    ``(log_w (M, K), own (M, K, d_own))``; ``log_posterior`` takes full vectors ``(n, d)``
    in the record's ``names`` order (one forward run each) and gives -inf outside the
    prior."""
    M = m.shape[0]
    mean, cov = g.conditional(m)
    cov = cov * inflate ** 2
    d_own = g.own.size
    own = t_draws(np.repeat(mean, inner, axis=0), cov, df, M * inner, rng)
    lq = t_logpdf(own, np.repeat(mean, inner, axis=0), cov, df)
    full = np.empty((M * inner, len(g.names)))
    full[:, g.shared] = np.repeat(m, inner, axis=0)
    full[:, g.own] = own
    lp = np.asarray(log_posterior(full), float)
    lw = np.where(np.isfinite(lp), lp - lq, -np.inf)
    return lw.reshape(M, inner), own.reshape(M, inner, d_own)


@dataclasses.dataclass
class FleetResult:
    """The combined posterior: ``shared`` ``(N, k)`` and each record's ``own`` ``(N, d_i)``
    equally weighted joint draws, with the last round's diagnostics."""

    shared_names: tuple[str, ...]
    shared: np.ndarray
    own: list[np.ndarray]
    diagnostics: dict[str, Any]


def combine(gaussians: Sequence[FlightGaussian], shared_names: Sequence[str],
            log_prior_shared: Callable[[np.ndarray], np.ndarray],
            run_round: Callable[[np.ndarray, int], Sequence[tuple[np.ndarray, np.ndarray]]],
            *, prior_precision: np.ndarray | None = None, prior_mean: np.ndarray | None = None,
            settings: FleetSettings = FleetSettings(), rng: np.random.Generator,
            progress: Callable[[int, int], None] | None = None) -> FleetResult:
    """The joint posterior of a fleet (module docstring).

    ``gaussians`` are the records' posteriors (:func:`gaussian_of`); ``log_prior_shared``
    the shared parameters' log prior ``(M, k) -> (M,)`` (-inf outside it); ``run_round(m,
    seed)`` runs every record's :func:`flight_draws` for the shared draws ``m`` (in parallel
    where it can) and returns their ``(log_w, own)`` in the records' order.
    ``prior_precision`` / ``prior_mean``: the shared parameters' prior as a Gaussian (zero
    precision for uniform priors)."""
    k = len(shared_names)
    n = len(gaussians)
    P0 = np.zeros((k, k)) if prior_precision is None else np.asarray(prior_precision, float)
    mu0 = np.zeros(k) if prior_mean is None else np.asarray(prior_mean, float)
    mean, cov = fleet_proposal(gaussians, P0, mu0)
    rounds = []
    for r in range(settings.rounds):
        scale = cov * settings.inflate ** 2
        m = t_draws(mean, scale, settings.df, settings.shared_draws, rng)
        lq = t_logpdf(m, mean, scale, settings.df)
        lpm = np.asarray(log_prior_shared(m), float)
        inside = np.isfinite(lpm)
        parts = run_round(m, int(rng.integers(2 ** 31)))
        log_wi = np.column_stack([logsumexp(lw, axis=1) - math.log(lw.shape[1])
                                  for lw, _ in parts])
        logW = np.where(inside, log_wi.sum(axis=1) - (n - 1) * np.where(inside, lpm, 0.0)
                        - lq, -np.inf)
        ok = np.isfinite(logW)
        if not ok.any():
            raise RuntimeError("no shared draw has a finite joint weight: the records' "
                               "posteriors do not overlap")
        w = np.exp(logW - logW[ok].max())
        w[~ok] = 0.0
        w /= w.sum()
        ess = float(1.0 / np.sum(w ** 2))
        rounds.append({"draws": int(m.shape[0]), "inner": settings.inner,
                       "ess": ess, "pareto_k": pareto_k(logW[ok]),
                       "log_weight_sd": [float(np.std(lw[np.isfinite(lw)]))
                                         if np.isfinite(lw).any() else None
                                         for lw, _ in parts]})
        if progress is not None:
            progress(r + 1, settings.rounds)
        # the next round's proposal: the weighted moments (population Monte Carlo)
        mean = w @ m
        dm = m - mean
        new = (dm * w[:, None]).T @ dm
        if ess >= 2 * k + 2 and np.all(np.linalg.eigvalsh(new) > 0):
            cov = new
    # each record's own parameters given the fleet: one of its K draws per shared draw
    own_sel = []
    for lw, own in parts:
        sel = np.empty((m.shape[0], own.shape[2]))
        for j in range(m.shape[0]):
            row = lw[j]
            if not np.isfinite(row).any():
                sel[j] = np.nan
                continue
            p = np.exp(row - row[np.isfinite(row)].max())
            p[~np.isfinite(row)] = 0.0
            sel[j] = own[j, rng.choice(row.size, p=p / p.sum())]
        own_sel.append(sel)
    idx = rng.choice(m.shape[0], size=settings.n_out, p=w)
    last = rounds[-1]
    diag = {"rounds": rounds, "ess": last["ess"], "pareto_k": last["pareto_k"],
            "pareto_k_limit": pareto_k_limit(int(ok.sum())),
            "evaluations": int(settings.rounds * settings.shared_draws * settings.inner * n),
            "settings": settings.to_dict()}
    return FleetResult(tuple(shared_names), m[idx], [s[idx] for s in own_sel], diag)
