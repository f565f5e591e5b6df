"""Posterior sampling with emcee: several independent ensembles, HDF5 checkpoints, diagnostics.

Every ensemble is an ``emcee.EnsembleSampler(..., vectorize=True)`` whose chain lives in its
own group (``ensemble_0``, ``ensemble_1``, ...) of one HDF5 file through
:class:`emcee.backends.HDFBackend`. The backend writes every step together with the sampler's
random state, so a run killed at any step resumes (``resume=True``) exactly where it stopped:
the resumed chain is bit-for-bit the chain an uninterrupted run would have produced.

The ensembles advance in rounds of ``check_every`` steps (rounds end at multiples of
``check_every``, so an interrupted and resumed run makes the same checks). After each round:

* integrated autocorrelation time :math:`\\tau` per parameter (emcee's estimator on each
  ensemble, the largest over ensembles);
* effective sample size :math:`\\mathrm{ESS} = K W (S - b) / \\tau` over :math:`K` ensembles of
  :math:`W` walkers after burn-in :math:`b`;
* split :math:`\\hat R` across ensembles (Gelman et al., BDA3 section 11.4): each ensemble's
  post-burn-in samples, pooled over walkers, are split in a first and a second half, giving
  :math:`2K` chains;
* acceptance fraction per ensemble.

The run stops ``"converged"`` when the chain is longer than ``tau_factor`` :math:`\\tau`,
:math:`\\tau` changed by less than ``tau_rtol`` since the previous round, every
:math:`\\hat R < ` ``rhat_max`` and every ESS :math:`\\ge` ``min_ess``; otherwise at
``max_steps`` with status ``"step_limit"``.
"""
from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from models.errors import InputError

__all__ = ["SamplerSettings", "Diagnostics", "SampleResult", "run_ensembles", "diagnose",
           "split_rhat", "read_chains", "initial_ball"]


@dataclasses.dataclass(frozen=True)
class SamplerSettings:
    """Settings of :func:`run_ensembles` (all counts per ensemble)."""

    walkers: int = 32
    ensembles: int = 2
    max_steps: int = 5000
    check_every: int = 100
    tau_factor: float = 50.0
    tau_rtol: float = 0.05
    rhat_max: float = 1.02
    min_ess: float = 400.0

    def __post_init__(self) -> None:
        for k in ("walkers", "ensembles", "max_steps", "check_every"):
            if getattr(self, k) < 1:
                raise InputError(f"must be >= 1, got {getattr(self, k)}", key=f"sampler.{k}")

    @classmethod
    def from_dict(cls, d: dict[str, Any], *, key: str = "sampler") -> "SamplerSettings":
        fields = {f.name: f.type for f in dataclasses.fields(cls)}
        for k in d:
            if k not in fields:
                raise InputError(f"unknown key (allowed: {', '.join(fields)})", key=f"{key}.{k}")
        kw = {}
        for k, v in d.items():
            want = int if k in ("walkers", "ensembles", "max_steps", "check_every") else float
            if isinstance(v, bool) or not isinstance(v, (int, float)) or (want is int and v != int(v)):
                raise InputError(f"expected {want.__name__}, got {v!r}", key=f"{key}.{k}")
            kw[k] = want(v)
        return cls(**kw)


@dataclasses.dataclass(frozen=True)
class Diagnostics:
    """Convergence diagnostics of a set of ensembles."""

    steps: int
    burn: int
    thin: int
    tau: np.ndarray
    ess: np.ndarray
    rhat: np.ndarray
    acceptance: np.ndarray
    converged: bool
    status: str  # "converged" | "step_limit" | "running"
    reason: str

    def to_dict(self, names: tuple[str, ...]) -> dict[str, Any]:
        return {"status": self.status, "reason": self.reason, "steps": self.steps,
                "burn": self.burn, "thin": self.thin,
                "tau": dict(zip(names, self.tau.tolist())),
                "ess": dict(zip(names, self.ess.tolist())),
                "rhat": dict(zip(names, self.rhat.tolist())),
                "acceptance_fraction": self.acceptance.tolist()}


@dataclasses.dataclass(frozen=True)
class SampleResult:
    """Chains of all ensembles and their diagnostics.

    Attributes
    ----------
    chains
        ``(K, S, W, d)`` positions [SI] of K ensembles, S steps, W walkers.
    log_prob
        ``(K, S, W)``.
    samples
        Post-burn-in, thinned samples pooled over ensembles and walkers, ``(N, d)``.
    samples_log_prob
        ``(N,)``.
    """

    names: tuple[str, ...]
    chains: np.ndarray
    log_prob: np.ndarray
    diagnostics: Diagnostics
    samples: np.ndarray
    samples_log_prob: np.ndarray
    path: Path | None


# --------------------------------------------------------------------------------------------
def split_rhat(chains: np.ndarray) -> np.ndarray:
    """Split R-hat across ensembles of ``chains`` ``(K, S, W, d)`` (see module docstring)."""
    K, S, W, d = chains.shape
    half = S // 2
    if half < 2:
        return np.full(d, np.nan)
    parts = []
    for k in range(K):
        parts.append(chains[k, :half].reshape(-1, d))
        parts.append(chains[k, S - half:].reshape(-1, d))
    parts = np.stack(parts)  # (2K, n, d)
    n = parts.shape[1]
    means = parts.mean(axis=1)
    B = n * means.var(axis=0, ddof=1)
    Wv = parts.var(axis=1, ddof=1).mean(axis=0)
    var_plus = (n - 1) / n * Wv + B / n
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sqrt(var_plus / Wv)


def _tau(chains: np.ndarray) -> np.ndarray:
    import emcee

    taus = []
    for k in range(chains.shape[0]):
        taus.append(emcee.autocorr.integrated_time(chains[k], c=5, tol=0, quiet=True))
    return np.max(np.array(taus), axis=0)


def diagnose(chains: np.ndarray, accepted: np.ndarray, settings: SamplerSettings,
             previous_tau: np.ndarray | None = None, *, final: bool = False) -> Diagnostics:
    """Diagnostics of ``chains`` ``(K, S, W, d)``; ``accepted`` ``(K, W)`` acceptance counts."""
    K, S, W, d = chains.shape
    tau = _tau(chains) if S >= 4 else np.full(d, np.inf)
    tmax = float(np.max(tau))
    burn = int(min(np.ceil(2 * tmax), S // 2)) if np.isfinite(tmax) else S // 2
    thin = max(1, int(0.5 * np.min(tau))) if np.all(np.isfinite(tau)) else 1
    kept = chains[:, burn:]
    ess = K * W * kept.shape[1] / tau
    rhat = split_rhat(kept)
    acc = accepted.mean(axis=1) / max(S, 1)
    reasons = []
    if S < settings.tau_factor * tmax:
        reasons.append(f"chain {S} steps < {settings.tau_factor:g} tau ({tmax:.1f})")
    if previous_tau is None:
        reasons.append("tau not yet checked twice")
    elif np.any(np.abs(tau - previous_tau) > settings.tau_rtol * tau):
        reasons.append("tau still changing")
    if not np.all(rhat < settings.rhat_max):
        if np.all(np.isnan(rhat)):   # chains too short to split (or a single ensemble)
            reasons.append("R-hat not available (chains too short)")
        else:
            reasons.append(f"max R-hat {np.nanmax(rhat):.4f} >= {settings.rhat_max}")
    if not np.all(ess >= settings.min_ess):
        reasons.append(f"min ESS {np.min(ess):.0f} < {settings.min_ess:g}")
    converged = not reasons
    status = "converged" if converged else ("step_limit" if final else "running")
    reason = "all criteria met" if converged else "; ".join(reasons)
    return Diagnostics(S, burn, thin, tau, ess, rhat, acc, converged, status, reason)


def initial_ball(log_prob: Callable[[np.ndarray], np.ndarray], x0: np.ndarray, scale: np.ndarray,
                 lower: np.ndarray, upper: np.ndarray, n: int, rng: np.random.Generator,
                 *, tries: int = 50) -> np.ndarray:
    """``n`` points ``x0 + scale * N(0, 1)`` inside the bounds with finite log-probability
    (redrawing the others, shrinking the ball each try)."""
    x0 = np.asarray(x0, float)
    span = upper - lower
    lo, hi = lower + 1e-9 * span, upper - 1e-9 * span
    pts = np.clip(x0 + scale * rng.standard_normal((n, x0.size)), lo, hi)
    bad = ~np.isfinite(log_prob(pts))
    s = scale
    for _ in range(tries):
        if not bad.any():
            return pts
        s = 0.7 * s
        pts[bad] = np.clip(x0 + s * rng.standard_normal((bad.sum(), x0.size)), lo, hi)
        bad[bad] = ~np.isfinite(log_prob(pts[bad]))
    if bad.any():
        raise InputError("cannot find starting points with finite log-probability around the "
                         "optimum")
    return pts


def _read_meta(path: Path) -> dict | None:
    import h5py

    if not path.exists():
        return None
    try:
        with h5py.File(path, "r") as f:
            raw = f.attrs.get("dockrecon")
    except OSError:
        raise InputError("chain file is not a readable HDF5 file (interrupted while writing "
                         "its header?); start without --resume", source=str(path)) from None
    return json.loads(raw) if raw is not None else None


def run_ensembles(log_prob: Callable[[np.ndarray], np.ndarray], x0: np.ndarray, scale: np.ndarray,
                  lower: np.ndarray, upper: np.ndarray, path: str | os.PathLike, *,
                  names: tuple[str, ...], settings: SamplerSettings = SamplerSettings(),
                  seed: int = 0, resume: bool = False, start: np.ndarray | None = None,
                  progress: Callable[[int, int], None] | None = None) -> SampleResult:
    """Run (or resume) ``settings.ensembles`` emcee ensembles into the HDF5 file ``path``.

    Parameters
    ----------
    log_prob
        Vectorized log-probability ``(n, d) -> (n,)``.
    x0, scale
        Centre and spread [SI] of the initial ball (the optimum and e.g. its standard errors).
    lower, upper
        Bounds [SI] (the ball is kept inside).
    path
        HDF5 chain file. Without ``resume`` an existing file is replaced.
    names
        Parameter names (stored; a resume with other names or settings is refused).
    seed
        Seeds the initial ball and each ensemble's generator (independent streams).
    resume
        Continue the chains in ``path``.
    start
        Optional ``(m, d)`` posterior draws (e.g. importance-resampled) to start the walkers
        from instead of the ball: each ensemble takes ``walkers`` of them at random, jittered by
        1e-3 ``scale`` so that no two walkers coincide. Walkers that start spread over the
        posterior's modes need no burn-in to find them.
    progress
        Called ``progress(steps_done, max_steps)`` (per-ensemble step counts) after each round.
    """
    import emcee
    import h5py

    path = Path(path)
    d = len(names)
    meta = {"names": list(names), "walkers": settings.walkers, "ensembles": settings.ensembles,
            "seed": seed, "check_every": settings.check_every}
    if resume:
        old = _read_meta(path)
        if old is None:
            raise InputError("nothing to resume: no chain file from an earlier run",
                             source=str(path))
        for k in ("names", "walkers", "ensembles", "check_every"):
            if old[k] != meta[k]:
                raise InputError(f"cannot resume: '{k}' was {old[k]}, now {meta[k]}",
                                 source=str(path))
        seed = old["seed"]
    else:
        if path.exists():
            path.unlink()
        path.parent.mkdir(parents=True, exist_ok=True)
        with h5py.File(path, "w") as f:
            f.attrs["dockrecon"] = json.dumps(meta)

    # one independent stream per ensemble: its initial ball and its emcee generator
    child = np.random.SeedSequence(seed).spawn(settings.ensembles)
    samplers = []
    for k in range(settings.ensembles):
        backend = emcee.backends.HDFBackend(str(path), name=f"ensemble_{k}")
        fresh = not (resume and backend.initialized and backend.iteration > 0)
        if fresh:
            backend.reset(settings.walkers, d)
        sampler = emcee.EnsembleSampler(settings.walkers, d, log_prob, vectorize=True,
                                        backend=backend)
        if fresh:
            rng = np.random.default_rng(child[k])
            if start is not None and len(start) > 0:
                pick = rng.choice(len(start), settings.walkers,
                                  replace=len(start) < settings.walkers)
                p0 = np.clip(start[pick] + 1e-3 * scale * rng.standard_normal(
                    (settings.walkers, d)), lower, upper)
            else:
                p0 = initial_ball(log_prob, x0, scale, lower, upper, settings.walkers, rng)
            rs = np.random.RandomState(int(rng.integers(2**31)))
            state = emcee.State(p0, random_state=rs.get_state())
        else:
            state = None  # emcee continues from the backend's last sample and random state
        samplers.append([sampler, state])

    ce = settings.check_every
    prev_tau = None
    done = min(s.backend.iteration for s, _ in samplers)
    last_check = (done // ce) * ce
    if last_check >= 4:  # a resumed run repeats the check it made before the interruption
        prev_tau = _tau(np.stack([s.backend.get_chain()[:last_check] for s, _ in samplers]))
    while True:
        done = min(s.backend.iteration for s, _ in samplers)
        target = min(settings.max_steps, (done // ce + 1) * ce)
        if done >= settings.max_steps:
            target = done
        for pair in samplers:
            sampler, state = pair
            todo = target - sampler.backend.iteration
            if todo > 0:
                pair[1] = sampler.run_mcmc(state, todo, store=True, progress=False)
        steps = target
        if progress is not None:
            progress(steps, settings.max_steps)
        chains = np.stack([s.backend.get_chain()[:steps] for s, _ in samplers])
        accepted = np.stack([s.backend.accepted for s, _ in samplers])
        final = steps >= settings.max_steps
        diag = diagnose(chains, accepted, settings, prev_tau, final=final)
        prev_tau = diag.tau
        if diag.converged or final:
            break

    lp = np.stack([s.backend.get_log_prob()[:steps] for s, _ in samplers])
    kept = chains[:, diag.burn::diag.thin]
    kept_lp = lp[:, diag.burn::diag.thin]
    return SampleResult(tuple(names), chains, lp, diag, kept.reshape(-1, d),
                        kept_lp.reshape(-1), path)


def read_chains(path: str | os.PathLike) -> tuple[dict, np.ndarray, np.ndarray]:
    """Metadata, chains ``(K, S, W, d)`` and log-probabilities ``(K, S, W)`` of a chain file
    (ensembles truncated to the shortest)."""
    import emcee

    path = Path(path)
    meta = _read_meta(path)
    if meta is None:
        raise InputError("not a dockrecon chain file", source=str(path))
    backs = [emcee.backends.HDFBackend(str(path), name=f"ensemble_{k}", read_only=True)
             for k in range(meta["ensembles"])]
    s = min(b.iteration for b in backs)
    return (meta, np.stack([b.get_chain()[:s] for b in backs]),
            np.stack([b.get_log_prob()[:s] for b in backs]))
