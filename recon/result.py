"""Result of a reconstruction: parameter summaries, identifiability, and the result directory.

DIR/result.json::

    {"kind": "reconstruction",
     "status": "ok" | "implausible" | "failed", "status_reason": "...",
     "parameters": {NAME: {"map", "median", "ci68": [lo, hi], "ci95": [lo, hi], "unit",
                           "prior", "stderr"}},
     "diagnostics": {...}, "identifiability": {...}, "loads": {...}, "energy": {...},
     "settings": {...}, "versions": {...}, "seed": N,
     "events": [...], "trajectory": {...}}      # when the forward model gives histories

DIR/chains.h5 (emcee HDF5 backend, one group per ensemble), DIR/fit.parquet (telemetry,
best-fit model and 95 % posterior predictive band per channel) and DIR/trajectory.parquet
(reconstructed histories at the MAP with 68 / 95 % posterior bands; layout, ``events`` and
``trajectory`` in :mod:`recon.trajectory`). ``result.json`` is written last: a directory is
complete exactly when it has one.

``status`` says whether the result is a reconstruction: ``ok``; ``implausible`` (the best fit's
cost exceeds what a correct fit of that many residuals plausibly has,
:func:`recon.pipeline.gof_limit`: the intervals describe the best fit found, not the flight;
no MCMC is run); ``failed`` (no finite likelihood anywhere the search went, or no posterior
draw: no intervals, ``median`` / ``ci68`` / ``ci95`` null, no fit or trajectory file).
``dockrecon reconstruct`` exits with 0, 3 and 4 for them.

Intervals are central (equal-tailed) posterior quantiles. Without MCMC (``--no-mcmc``) they are
the Laplace approximation at the optimum (Gaussian with the inverse Gauss-Newton Hessian,
clipped to the bounds), and ``diagnostics.method`` says so.
"""
from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from recon.io import versions, write_json, write_table
from recon.problem import ParameterSpace, ReconstructionProblem

__all__ = ["Identifiability", "ReconstructionResult", "summarize", "identifiability",
           "laplace_samples", "importance_samples", "fit_table", "summarize_derived", "write_result"]

_Z68, _Z95 = 0.9944578832097535, 1.959963984540054  # normal quantiles of 0.84, 0.975


def _q(x: np.ndarray, level: float) -> list[float]:
    a = 0.5 * (1 - level)
    lo, hi = np.quantile(x, [a, 1 - a])
    return [float(lo), float(hi)]


def summarize(space: ParameterSpace, samples: np.ndarray, x_map: np.ndarray,
              stderr: np.ndarray | None = None) -> dict[str, dict[str, Any]]:
    """Per-parameter summary in the project schema, fixed parameters included
    (``prior: {"kind": "fixed"}``, zero-width intervals)."""
    out: dict[str, dict[str, Any]] = {}
    j = 0
    for p in space.parameters:
        if p.fixed:
            v = float(p.value)
            out[p.name] = {"map": v, "median": v, "ci68": [v, v], "ci95": [v, v], "unit": p.unit,
                           "prior": {"kind": "fixed", "value": v}, "stderr": 0.0}
            continue
        s = samples[:, j]
        out[p.name] = {"map": float(x_map[j]), "median": float(np.median(s)),
                       "ci68": _q(s, 0.68), "ci95": _q(s, 0.95), "unit": p.unit,
                       "prior": p.prior.to_dict(),
                       "stderr": float(stderr[j]) if stderr is not None else float(np.std(s))}
        j += 1
    return out


@dataclasses.dataclass(frozen=True)
class Identifiability:
    """What the data constrain.

    Attributes
    ----------
    correlation
        Posterior correlation matrix of the free parameters.
    fisher
        Fisher information :math:`J^T J` of the whitened data residuals at the optimum
        [1 / (SI unit_i SI unit_j)].
    fisher_sd
        :math:`\\sqrt{\\mathrm{diag}(F^{+})}` (pseudo-inverse): the data-only standard error; inf
        where the data carry no information on the parameter.
    width_ratio
        Width of the posterior 95 % interval over that of the prior.
    flagged
        Names whose ``width_ratio`` exceeds the threshold, or whose data-only standard error
        exceeds the prior spread: the data cannot constrain them.
    """

    names: tuple[str, ...]
    correlation: np.ndarray
    fisher: np.ndarray
    fisher_sd: np.ndarray
    fisher_eigenvalues: np.ndarray
    width_ratio: np.ndarray
    flagged: tuple[str, ...]
    threshold: float

    def to_dict(self) -> dict[str, Any]:
        return {"names": list(self.names), "correlation": self.correlation,
                "fisher": self.fisher, "fisher_sd": dict(zip(self.names, self.fisher_sd)),
                "fisher_eigenvalues": self.fisher_eigenvalues,
                "width_ratio": dict(zip(self.names, self.width_ratio)),
                "threshold": self.threshold, "unconstrained": list(self.flagged)}


def identifiability(space: ParameterSpace, samples: np.ndarray, jac: np.ndarray, *,
                    threshold: float = 0.8) -> Identifiability:
    """Correlations, Fisher information and flags from posterior ``samples`` ``(N, d)`` and
    the data-residual Jacobian ``jac`` ``(m, d)`` at the optimum."""
    d = samples.shape[1]
    corr = np.corrcoef(samples, rowvar=False).reshape(d, d) if samples.shape[0] > 1 else np.eye(d)
    F = jac.T @ jac
    ev, V = np.linalg.eigh(F)
    tol = max(ev.max(), 1e-300) * 1e-10
    inv_ev = np.where(ev > tol, 1.0 / np.where(ev > tol, ev, 1.0), np.inf)
    # diag of the pseudo-inverse; a direction with no information makes the variance of every
    # parameter that loads on it infinite
    loads = V ** 2
    with np.errstate(invalid="ignore"):
        var = np.where(loads > 1e-12, loads * inv_ev[None, :], 0.0).sum(axis=1)
    fsd = np.sqrt(var)
    prior_w = np.diff(space.prior_interval(0.95), axis=1)[:, 0]
    post_w = np.array([np.diff(_q(samples[:, j], 0.95))[0] for j in range(d)])
    ratio = post_w / prior_w
    prior_sd = space.prior_scale()
    flagged = tuple(n for j, n in enumerate(space.free_names)
                    if ratio[j] > threshold or fsd[j] > prior_sd[j])
    return Identifiability(space.free_names, corr, F, fsd, ev, ratio, flagged, threshold)


def laplace_samples(space: ParameterSpace, x: np.ndarray, jac_all: np.ndarray, n: int,
                    rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Draws of the Laplace approximation N(x, (J^T J)^+) clipped to the bounds, and the
    standard errors; ``jac_all`` includes the prior residual rows."""
    cov = np.linalg.pinv(jac_all.T @ jac_all)
    se = np.sqrt(np.clip(np.diag(cov), 0, None))
    draws = rng.multivariate_normal(x, cov, size=n, method="eigh")
    return np.clip(draws, space.lower, space.upper), se


class _MixtureT:
    """Mixture of multivariate Student-t densities (shared ``df``), for importance sampling."""

    def __init__(self, means, covs, alphas, df: float) -> None:
        self.df = float(df)
        self.means = [np.asarray(m, float) for m in means]
        self.alphas = np.asarray(alphas, float) / np.sum(alphas)
        self.roots, self.precs, self.logdets = [], [], []
        for c in covs:
            c = 0.5 * (np.asarray(c, float) + np.asarray(c, float).T)
            w, v = np.linalg.eigh(c)
            w = np.clip(w, 1e-300, None)
            self.roots.append(v * np.sqrt(w)[None, :])
            self.precs.append((v / w[None, :]) @ v.T)
            self.logdets.append(float(np.sum(np.log(w))))

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


def importance_samples(problem: ReconstructionProblem, x: np.ndarray | Sequence[np.ndarray],
                       jac_all: np.ndarray | Sequence[np.ndarray], n: int,
                       rng: np.random.Generator, *, n_out: int = 4000, df: float = 4.0,
                       inflate: float = 1.5, rounds: int = 4
                       ) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """Posterior draws by adaptive importance sampling over one or several modes.

    The first proposal is a mixture of multivariate Student t (``df`` degrees of freedom), one
    component per mode ``x[k]`` with scale ``inflate^2 (J_k^T J_k)^+`` (``jac_all[k]``
    includes the prior rows). Each of ``rounds`` rounds draws ``n / rounds`` points, weights
    them by posterior / proposal, and refits every component's centre, scale and mixture
    weight to the weighted draws it is responsible for (population Monte Carlo; the new scale
    is the weighted covariance plus 10 % of the previous one; a component with fewer than
    ``ndim + 2`` effective draws moves to its heaviest draw and shrinks to 0.3 of its
    variance instead, which zooms in on a posterior much narrower than the Laplace scale). All draws are then weighted
    against the average of the proposals used (the deterministic-mixture weights of adaptive
    multiple importance sampling) and ``n_out`` are resampled (systematic resampling).

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
        ``df``, ``inflate``, ``finite``, ``modes`` (count), ``mode_weights`` (posterior
        mass of each mode: the share of the final weights its component accounts for),
        ``best_draw`` and ``best_log_prob`` (the most probable proposal draw).
    """
    xs = [np.asarray(x, float)] if np.ndim(x) == 1 else [np.asarray(v, float) for v in x]
    js = [jac_all] if np.ndim(jac_all) == 2 else list(jac_all)
    covs = [np.linalg.pinv(j.T @ j) * inflate ** 2 for j in js]
    mix = _MixtureT(xs, covs, np.ones(len(xs)), df)
    rounds = max(1, int(rounds))
    per = max(1, n // rounds)
    all_x, all_lp, mixes, counts = [], [], [], []
    for r in range(rounds):
        xr = mix.sample(per, rng)
        lp = problem.log_probability(xr)
        all_x.append(xr)
        all_lp.append(lp)
        mixes.append(mix)
        counts.append(per)
        if r == rounds - 1:
            break
        # refit each component to the draws it is responsible for
        lq = mix.logpdf(xr)
        lw = np.where(np.isfinite(lp), lp - lq, -np.inf)
        if not np.isfinite(lw).any():
            continue
        w = np.exp(lw - lw[np.isfinite(lw)].max())
        comp = mix.component_logpdf(xr) + np.log(mix.alphas)[None, :]
        resp = np.exp(comp - lq[:, None])
        means, cvs, alphas = [], [], []
        for j in range(len(xs)):
            wj = w * resp[:, j]
            sw = wj.sum()
            if sw <= 0:
                means.append(mix.means[j])
                cvs.append(covs[j])
                alphas.append(mix.alphas[j])
                continue
            if (sw * sw / np.sum(wj * wj)) < xr.shape[1] + 2:
                # too few effective draws to refit: the posterior is narrower than this
                # component (or off its centre). Zoom in: centre on its heaviest draw,
                # shrink the scale to 0.3 of the variance.
                means.append(xr[int(np.argmax(wj))])
                cvs.append(0.3 * covs[j])
                alphas.append(max(sw, 1e-3 * w.sum()))
                continue
            mj = wj @ xr / sw
            dev = xr - mj[None, :]
            cj = (wj[:, None] * dev).T @ dev / sw
            means.append(mj)
            cvs.append(cj + 0.1 * covs[j])
            alphas.append(max(sw, 1e-3 * w.sum()))
        covs = cvs
        mix = _MixtureT(means, cvs, alphas, df)
    draws = np.vstack(all_x)
    log_p = np.concatenate(all_lp)
    from scipy.special import logsumexp

    frac = np.log(np.asarray(counts, float) / sum(counts))
    log_q = logsumexp(np.column_stack([m.logpdf(draws) for m in mixes]) + frac[None, :],
                      axis=1)
    log_w = np.where(np.isfinite(log_p), log_p - log_q, -np.inf)
    finite = np.isfinite(log_w)
    if not finite.any():
        raise RuntimeError("importance sampling: no proposal draw has a finite posterior")
    w = np.exp(log_w - log_w[finite].max())
    w /= w.sum()
    ess = float(1.0 / np.sum(w * w))
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
            "ess_fraction": ess / draws.shape[0], "df": df, "inflate": inflate,
            "rounds": rounds, "finite": int(finite.sum()), "modes": len(xs),
            "mode_weights": shares}
    return samples, stderr, info


def summarize_derived(values: Mapping[str, np.ndarray], units: Mapping[str, str],
                      at_map: Mapping[str, float] | None = None) -> dict[str, dict[str, Any]]:
    """Summaries of derived quantities (peak loads, energies) from posterior draws
    ``{name: (N,)}``: map (value at the MAP), median, ci68, ci95, unit."""
    out = {}
    for k, v in values.items():
        v = np.asarray(v, float)
        v = v[np.isfinite(v)]
        out[k] = {"map": None if at_map is None else float(at_map[k]),
                  "median": float(np.median(v)) if v.size else None,
                  "ci68": _q(v, 0.68) if v.size else None,
                  "ci95": _q(v, 0.95) if v.size else None, "unit": units.get(k, "")}
    return out


def fit_table(problem: ReconstructionProblem, x_map: np.ndarray, draws: np.ndarray,
              rng: np.random.Generator) -> tuple[Any, dict[str, str]]:
    """Telemetry, best-fit model and 95 % posterior predictive band per channel.

    Rows: the whole record; ``fitted`` is 1 inside the fitted span (:mod:`recon.span`), 0
    outside, where the model columns are NaN (the model was not compared with those samples).
    Columns: ``t``, ``fitted``; per channel ``NAME`` (telemetry), ``NAME_fit`` (noise-free
    model at the MAP), ``NAME_lo`` / ``NAME_hi`` (2.5 / 97.5 % of model + sensor noise over
    ``draws``). NaN where the channel has no sample. Binary channels: the band is the range
    of the flag.
    """
    import pandas as pd

    from recon.telemetry import known_channels

    tel = problem.telemetry
    record = problem.record
    t = np.asarray(record.t, float)
    rows = np.searchsorted(t, np.asarray(tel.t, float))  # the span's rows in the record
    best = problem.predict(x_map)
    band = problem.predict(draws) if len(draws) else {}
    fitted = np.zeros(t.size)
    fitted[rows] = 1.0
    channel_units = known_channels()
    cols: dict[str, np.ndarray] = {"t": t, "fitted": fitted}
    units = {"t": "s", "fitted": ""}
    for c in problem.observation.channels:
        name = c.name
        mask = rows[np.isfinite(np.asarray(tel.channels[name], float))]
        cols[name] = np.asarray(record.channels[name], float)
        unit = channel_units.get(name, "")
        for suffix, vals in (("fit", best[name][0]),):
            col = np.full(t.size, np.nan)
            col[mask] = vals
            cols[f"{name}_{suffix}"] = col
        if band:
            pred = band[name]
            if not c.binary:
                pred = pred + rng.normal(0.0, c.sigma_eff, pred.shape)
            lo, hi = np.nanquantile(pred, [0.025, 0.975], axis=0)
            for suffix, vals in (("lo", lo), ("hi", hi)):
                col = np.full(t.size, np.nan)
                col[mask] = vals
                cols[f"{name}_{suffix}"] = col
        for suffix in ("", "_fit", "_lo", "_hi"):
            if unit:
                units[f"{name}{suffix}"] = unit
    return pd.DataFrame(cols), units


@dataclasses.dataclass
class ReconstructionResult:
    """Everything result.json holds (see the module docstring)."""

    parameters: dict[str, dict[str, Any]]
    diagnostics: dict[str, Any]
    identifiability: dict[str, Any]
    loads: dict[str, Any]
    energy: dict[str, Any]
    settings: dict[str, Any]
    seed: int | None
    versions: dict[str, str] = dataclasses.field(default_factory=versions)
    events: list[dict[str, Any]] | None = None
    trajectory: dict[str, Any] | None = None
    status: str = "ok"
    status_reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        d = {"kind": "reconstruction", "status": self.status,
             "status_reason": self.status_reason, "parameters": self.parameters,
             "diagnostics": self.diagnostics, "identifiability": self.identifiability,
             "loads": self.loads, "energy": self.energy, "settings": self.settings,
             "versions": self.versions, "seed": self.seed}
        if self.events is not None:
            d["events"] = self.events
        if self.trajectory is not None:
            d["trajectory"] = self.trajectory
        return d


def write_result(directory: str | os.PathLike, result: ReconstructionResult,
                 fit: tuple[Any, Mapping[str, str]] | None = None,
                 trajectory: tuple[Any, Mapping[str, str]] | None = None) -> Path:
    """Write fit.parquet and trajectory.parquet (if given), then result.json last, all
    atomically."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for table, name in ((fit, "fit.parquet"), (trajectory, "trajectory.parquet")):
        if table is not None:
            frame, units = table
            write_table(frame, directory / name, units)
    return write_json(result.to_dict(), directory / "result.json")
