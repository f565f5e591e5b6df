"""The one result type of every fit in the project, its parameter summaries and its files.

Every engine (:mod:`identification.engines`) takes a problem and a :class:`Result` and returns the
result with its own part added, so a fit reads as a short chain of engines (a reconstruction:
:func:`recon.pipeline.reconstruct`; the ground-test identifications:
:mod:`identification.ground_test`). A result is written as one JSON document, the same schema for
every kind (``result.json`` of a reconstruction or rig identification, ``OUT.json`` of a hysteresis
identification)::

    {"kind": "reconstruction" | "hysteresis_fit" | "rig" | ...,
     "status": "ok" | "implausible" | "failed", "status_reason": "...",
     "warnings": ["..."],         # what qualifies an ok result (e.g. an unconverged sampler)
     "parameters": {NAME: {"map", "median", "ci68": [lo, hi], "ci95": [lo, hi], "unit",
                           "prior", "stderr"}},
     "diagnostics": {...},        # one entry per engine that ran: "optimizer", "search",
                                  # "laplace", "importance", "mcmc"; "method": which one
                                  # gave the intervals
     "settings": {...}, "versions": {...}, "seed": N,
     ...}                         # the kind's own sections (a reconstruction: identifiability,
                                  # loads, energy, events, trajectory)

beside the tables the result holds (:attr:`Result.tables`: ``fit.parquet``,
``trajectory.parquet``, ``fitted.parquet``, ...) and the posterior as ArviZ InferenceData
(``posterior.nc``, when a posterior was sampled). The JSON document is written last: a result
directory is complete exactly when it has one.

``status`` says whether the result is an answer: ``ok``; ``implausible`` (the best fit's cost
exceeds what a correct fit of that many residuals plausibly has,
:func:`identification.engines.gof_limit`: the intervals describe the best fit found, not the data's
source); ``failed`` (no finite likelihood anywhere the search went, or no posterior draw: no
intervals, ``median`` / ``ci68`` / ``ci95`` null). ``dockrecon reconstruct`` exits with 0, 3
and 4 for them. ``warnings`` qualify an answer without withdrawing it: an MCMC that stopped
at its step limit before its convergence criteria held (the intervals are provisional: resume
the chains with more steps). They do not change the status or the exit code; the report leads
with them.

Intervals are central (equal-tailed) posterior quantiles of the posterior the last sampling
engine produced (``diagnostics.method``: ``laplace``, ``importance`` or ``mcmc``).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from identification.provenance import versions
from identification.space import ParameterSpace

__all__ = ["Result", "Posterior", "Start", "Identifiability", "summarize", "identifiability",
           "directions", "summarize_derived"]


@dataclasses.dataclass(frozen=True)
class Start:
    """One least-squares run: start point, end point [SI], cost = 0.5 sum r^2, status."""

    x0: np.ndarray
    x: np.ndarray
    cost: float
    success: bool
    message: str
    nfev: int
    origin: str  # "first_guess", "lhs", "search k", "refine", "importance"


@dataclasses.dataclass(frozen=True)
class Posterior:
    """Equally weighted posterior draws of the free parameters.

    Attributes
    ----------
    method
        The engine that made them: ``"laplace"``, ``"importance"`` or ``"mcmc"``.
    samples
        ``(N, d)`` draws [SI].
    stderr
        ``(d,)`` posterior standard deviations [SI].
    x_map
        ``(d,)`` the most probable point found [SI].
    chains
        ``(chains, draws, d)`` draws that ArviZ reads right as they are, what the posterior
        group of ``posterior.nc`` holds: MCMC, every walker's chain after burn-in;
        importance, as many distinct draws as the effective sample size, resampled without
        repeats in 4 chains; None for a Laplace posterior (``samples`` then).
    log_prob
        ``(chains, draws)`` the log posterior of ``chains`` (unnormalized), or None.
    covariance
        ``(d, d)`` the Gaussian's covariance [SI_i SI_j] when the posterior is one (Laplace),
        else None.
    log_likelihood
        ``(chains, draws, parts)`` the log-likelihood of each part of the problem's
        likelihood (:meth:`identification.problem.GaussianProblem.likelihood_groups`: one per
        telemetry channel in a reconstruction) at ``chains``, or None.
    likelihood_names
        The parts' names.
    proposal, proposal_log_weight
        Importance sampling's weighted draws ``(N, d)`` [SI] and their self-normalised log
        weights ``(N,)`` (``sum(exp) = 1``; -inf where the posterior is zero), or None.
    """

    method: str
    samples: np.ndarray
    stderr: np.ndarray
    x_map: np.ndarray
    chains: np.ndarray | None = None
    log_prob: np.ndarray | None = None
    covariance: np.ndarray | None = None
    log_likelihood: np.ndarray | None = None
    likelihood_names: tuple[str, ...] = ()
    proposal: np.ndarray | None = None
    proposal_log_weight: np.ndarray | None = None


@dataclasses.dataclass
class Result:
    """The result of a fit (module docstring).

    The written part: :attr:`kind`, :attr:`status`, :attr:`status_reason`,
    :attr:`parameters`, :attr:`diagnostics`, :attr:`settings`, :attr:`seed`,
    :attr:`versions`, the kind's :attr:`sections` and the :attr:`tables`. The engines' working
    state, not written: :attr:`starts` (every least-squares run), :attr:`x_opt` and
    :attr:`jacobian` (the optimum and its whitened Jacobian with the prior rows),
    :attr:`posterior` (the current one) and :attr:`posteriors` (every one made, by method).
    A ground-test fit also holds :attr:`params`, its fitted parameters as
    :class:`lmfit.Parameters` (estimate, start, Laplace ``stderr`` and ``correl``), and
    :attr:`lmfit_result`, the :class:`lmfit.minimizer.MinimizerResult` behind
    :meth:`fit_report` (:mod:`identification.lmfit_bridge`).
    """

    kind: str
    names: tuple[str, ...] = ()
    status: str = "ok"
    status_reason: str = ""
    warnings: list[str] = dataclasses.field(default_factory=list)
    parameters: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    diagnostics: dict[str, Any] = dataclasses.field(default_factory=dict)
    settings: dict[str, Any] = dataclasses.field(default_factory=dict)
    seed: int | None = None
    versions: dict[str, str] = dataclasses.field(default_factory=dict)
    sections: dict[str, Any] = dataclasses.field(default_factory=dict)
    tables: dict[str, tuple[Any, Mapping[str, str]]] = dataclasses.field(default_factory=dict)
    starts: list[Start] = dataclasses.field(default_factory=list)
    x_opt: np.ndarray | None = None
    jacobian: np.ndarray | None = None
    posterior: Posterior | None = None
    posteriors: dict[str, Posterior] = dataclasses.field(default_factory=dict)
    params: Any = None
    lmfit_result: Any = None

    # -- engine state ------------------------------------------------------------------------
    @property
    def best(self) -> Start:
        """The least-squares run with the lowest cost."""
        return min(self.starts, key=lambda s: s.cost)

    def set_posterior(self, posterior: Posterior) -> None:
        """Make ``posterior`` the current one (and remember it by its method)."""
        self.posterior = posterior
        self.posteriors[posterior.method] = posterior
        self.diagnostics["method"] = posterior.method

    def fit_report(self, *, min_correl: float = 0.1) -> str:
        """lmfit's ``fit_report`` text of a ground-test fit, with the profile intervals when
        they were computed (:func:`identification.lmfit_bridge.fit_report`)."""
        from identification.lmfit_bridge import fit_report

        return fit_report(self, min_correl=min_correl)

    def fail(self, reason: str) -> "Result":
        """Mark the result failed (no posterior), with ``reason``."""
        self.status, self.status_reason = "failed", reason
        self.diagnostics["method"] = "none"
        return self

    # -- files -------------------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        sections = self.__dict__.get("sections")
        if sections is not None and name in sections:
            return sections[name]
        raise AttributeError(name)

    def to_dict(self) -> dict[str, Any]:
        d = {"kind": self.kind, "status": self.status, "status_reason": self.status_reason,
             "warnings": list(self.warnings), "parameters": self.parameters,
             "diagnostics": self.diagnostics}
        d.update(self.sections)
        d.update({"settings": self.settings, "versions": self.versions or versions(),
                  "seed": self.seed,
                  # the tables written beside it: a report names any that went missing
                  "files": sorted(self.tables)})
        return d


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
    directions
        What the record determines, direction by direction (:func:`directions`): each
        eigen-direction of the data's information in units of the prior spreads, its width
        against the prior's and the parameters it is made of, best determined first.
    """

    names: tuple[str, ...]
    correlation: np.ndarray
    fisher: np.ndarray
    fisher_sd: np.ndarray
    fisher_eigenvalues: np.ndarray
    width_ratio: np.ndarray
    flagged: tuple[str, ...]
    threshold: float
    directions: tuple[dict[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"names": list(self.names), "correlation": self.correlation,
                "fisher": self.fisher, "fisher_sd": dict(zip(self.names, self.fisher_sd)),
                "fisher_eigenvalues": self.fisher_eigenvalues,
                "width_ratio": dict(zip(self.names, self.width_ratio)),
                "threshold": self.threshold, "unconstrained": list(self.flagged),
                "directions": list(self.directions)}


#: a direction whose width is at most this fraction of the prior's is determined by the data
DETERMINED = 0.5
#: loadings of a direction below this (unit vector) are left out of its description
LOADING_SHOWN = 0.2


def directions(names: Sequence[str], fisher: np.ndarray, prior_sd: np.ndarray, *,
               threshold: float = 0.8) -> tuple[dict[str, Any], ...]:
    """What the data determine and what stays at the prior, by direction.

    In coordinates scaled by the prior spreads (``z_i = x_i / prior_sd_i``) the data's
    information is ``D F D`` (``D = diag(prior_sd)``, ``F`` the Fisher information of the
    whitened data residuals); along its eigenvector ``v`` with eigenvalue ``mu`` a Gaussian
    prior of unit variance and the data give the posterior variance ``1 / (1 + mu)``, so
    ``width = 1 / sqrt(1 + mu)`` is the posterior's width against the prior's along that
    combination (uniform priors read as their spread). Each direction: ``width``, ``verdict``
    (``"determined"`` at most :data:`DETERMINED`, ``"at prior"`` above ``threshold``, else
    ``"partly"``), ``loadings``, the unit vector in the scaled coordinates in the order of
    ``names`` (sign fixed so the largest is positive), and ``combination``, its loadings of at
    least :data:`LOADING_SHOWN` by name, largest first. Sorted best determined first. A parameter with a wide prior and strong
    data is one determined direction; two parameters the record sees only through their sum
    give one determined and one "at prior" direction, their difference."""
    d = len(names)
    if d == 0:
        return ()
    D = np.asarray(prior_sd, float)
    A = (fisher * D[:, None]) * D[None, :]
    A = 0.5 * (A + A.T)
    mu, V = np.linalg.eigh(A)
    mu = np.clip(mu, 0.0, None)
    out = []
    for k in np.argsort(-mu, kind="stable"):
        v = V[:, k]
        j = int(np.argmax(np.abs(v)))
        v = v if v[j] >= 0 else -v
        width = float(1.0 / np.sqrt(1.0 + mu[k]))
        verdict = ("determined" if width <= DETERMINED else
                   "at prior" if width > threshold else "partly")
        order = np.argsort(-np.abs(v), kind="stable")
        combo = {names[i]: float(v[i]) for i in order if abs(v[i]) >= LOADING_SHOWN}
        out.append({"width": width, "verdict": verdict, "combination": combo,
                    "loadings": [float(x) for x in v]})
    return tuple(out)


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
    return Identifiability(space.free_names, corr, F, fsd, ev, ratio, flagged, threshold,
                           directions(space.free_names, F, prior_sd, threshold=threshold))


def summarize_parameters(space: ParameterSpace, result: Result) -> Result:
    """Fill ``result.parameters`` from its current posterior (and, beside another posterior,
    ``diagnostics.laplace``: the Laplace intervals at the optimum, for comparison)."""
    post = result.posterior
    result.parameters = summarize(space, post.samples, post.x_map, post.stderr)
    lap = result.posteriors.get("laplace")
    if post.method != "laplace" and lap is not None:
        lp_sum = summarize(space, lap.samples, lap.x_map, lap.stderr)
        result.diagnostics["laplace"] = {n: {k: v[k] for k in ("median", "ci68", "ci95")}
                                         for n, v in lp_sum.items()
                                         if v["prior"].get("kind") != "fixed"}
    return result


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
