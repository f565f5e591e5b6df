"""The MCMC engine: several independent emcee ensembles, HDF5 checkpoints, ArviZ diagnostics.

Every ensemble is an ``emcee.EnsembleSampler(..., vectorize=True)`` whose chain lives in its
own group (``ensemble_0``, ``ensemble_1``, ...) of one HDF5 file through
:class:`emcee.backends.HDFBackend`. The backend writes every step together with the sampler's
random state, so a run killed at any step resumes (``resume=True``) exactly where it stopped:
the resumed chain is bit-for-bit the chain an uninterrupted run would have produced.

The loop is a generator, in emcee's own style: :func:`sample_rounds` advances the ensembles
in step (each through emcee's ``sample`` generator) and yields a :class:`Round` every
``check_every`` steps (rounds end at multiples of ``check_every``, so an interrupted and
resumed run makes the same checks); its consumers are the progress report, the convergence
check and the stop (:func:`run_ensembles`). After each round:

* integrated autocorrelation time :math:`\\tau` per parameter (emcee's estimator on each
  ensemble, the largest over ensembles), which sets the burn-in (``2 tau``) and the thinning;
* rank-normalised split :math:`\\hat R` and the bulk and tail effective sample sizes of
  ArviZ (Vehtari et al. 2021) over the post-burn-in chains: R-hat between the ensembles
  (each one's walkers pooled, split in halves of steps), the ESS with every walker a chain
  (:func:`_arviz_stats` says why);
* acceptance fraction per ensemble.

The walkers move by emcee's differential-evolution moves (``moves = "de-snooker"``, the
default: 80 % :class:`emcee.moves.DEMove`, 20 % :class:`emcee.moves.DESnookerMove`, the
mixture emcee's documentation suggests) or by its affine-invariant stretch move
(``"stretch"``, emcee's default). Both leave the posterior invariant; they differ in how fast
the chains decorrelate. On the reconstruction posteriors, twelve parameters with correlations
up to 0.99 and curved ridges, the stretch move's autocorrelation time grew to 160-280 steps
(the short-ended record of ``tests/recon/test_record_shapes.py``, 32 walkers, steps 1000-4000
of a 4000-step run) where the DE mixture's was 50-63 steps from the same walkers' end state
(1000 steps; ``docs/design/emcee_moves.rst``: autocorrelation time by move).

The run stops ``"converged"`` when the chain is longer than ``tau_factor`` :math:`\\tau`,
:math:`\\tau` changed by less than ``tau_rtol`` since the previous round, every
:math:`\\hat R < ` ``rhat_max`` and every bulk and tail ESS :math:`\\ge` ``min_ess``; otherwise
at ``max_steps`` with status ``"step_limit"``.

The log-likelihood of each part of the problem's likelihood (each telemetry channel) is
kept at every position as emcee's blobs, and the posterior is written as ArviZ
InferenceData (``posterior.nc``: the walkers as chains, post-burn-in, with those parts as its
``log_likelihood`` group; :func:`recon.results.inference_data`), for users' own Bayesian
tooling.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import os
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from models.errors import InputError, check_room
from models.limits import checked_table
from models.schema import Table, keys
from identification.result import Posterior, Result

__all__ = ["SamplerSettings", "Diagnostics", "Round", "Chains", "mcmc", "run_ensembles",
           "sample_rounds", "diagnose", "read_chains", "initial_ball",
           "MIN_START_ESS", "MOVES"]

log = logging.getLogger("dockrecon.engines")

#: Importance sampling below this effective sample size does not seed the MCMC walkers (they
#: start from a wide ball instead; :func:`mcmc`)
MIN_START_ESS = 100


#: ``[sampler] moves``: name -> emcee moves (module docstring)
MOVES = {"de-snooker": lambda m: [(m.DEMove(), 0.8), (m.DESnookerMove(), 0.2)],
         "stretch": lambda m: None}

#: the ``[sampler]`` table of a run configuration (:mod:`models.schema`): the keys of
#: :class:`SamplerSettings`, their defaults and accepted ranges (finite but absurd values are
#: refused: :func:`models.limits.checked_table`)
SAMPLER = Table("sampler", "The emcee ensembles (identification.engines.SamplerSettings).",
                keys(f"""
walkers     | integer | - | 32     | [2, 100000]    | walkers per ensemble
ensembles   | integer | - | 2      | [1, 64]        | independent ensembles (for R-hat)
max_steps   | integer | - | 5000   | [1, 10000000]  | most steps per ensemble
check_every | integer | - | 100    | [1, 10000000]  | steps between convergence checks
tau_factor  | number  | - | 50.0   | [1.0, 1e4]     | converged: chain length above this many
| autocorrelation times
tau_rtol    | number  | - | 0.05   | [1e-6, 1.0]    | converged: autocorrelation time changed
| by less than this fraction between checks
rhat_max    | number  | - | 1.02   | [1.0, 10.0]    | converged: split R-hat below this
min_ess     | number  | - | 400.0  | [1.0, 1e9]     | converged: effective sample size above
| this
moves       | choice:{",".join(MOVES)} | - | 'de-snooker' | - | emcee's moves:
| differential-evolution with snooker (default) or the stretch move
"""), source=False)

#: accepted range of each number of ``[sampler]``: (whole number?, lowest, highest)
_SAMPLER_RANGE = {k.name: (k.type == "integer", k.minimum, k.maximum) for k in SAMPLER.keys()
                  if k.type in ("integer", "number")}


def _check_moves(moves: Any, key: str) -> str:
    if not isinstance(moves, str) or moves not in MOVES:
        raise InputError(f"must be one of {', '.join(map(repr, MOVES))}, got {moves!r}",
                         key=key)
    return moves


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
    moves: str = "de-snooker"

    def __post_init__(self) -> None:
        for k in ("walkers", "ensembles", "max_steps", "check_every"):
            if getattr(self, k) < 1:
                raise InputError(f"must be >= 1, got {getattr(self, k)}", key=f"sampler.{k}")
        _check_moves(self.moves, "sampler.moves")

    @classmethod
    def from_dict(cls, d: dict[str, Any], *, key: str = "sampler") -> "SamplerSettings":
        if not isinstance(d, dict):
            raise InputError("must be a table", key=key)
        d = dict(d)
        moves = _check_moves(d.pop("moves", cls.moves), f"{key}.moves")
        return cls(**checked_table(d, _SAMPLER_RANGE, key, others=("moves",)), moves=moves)


@dataclasses.dataclass(frozen=True)
class Diagnostics:
    """Convergence diagnostics of a set of ensembles (module docstring)."""

    steps: int
    burn: int
    thin: int
    tau: np.ndarray
    rhat: np.ndarray
    ess_bulk: np.ndarray
    ess_tail: np.ndarray
    acceptance: np.ndarray
    converged: bool
    status: str  # "converged" | "step_limit" | "running"
    reason: str

    @property
    def ess(self) -> np.ndarray:
        """The smaller of the bulk and tail effective sample sizes."""
        return np.minimum(self.ess_bulk, self.ess_tail)

    def to_dict(self, names: Sequence[str]) -> dict[str, Any]:
        names = list(names)
        return {"status": self.status, "reason": self.reason, "steps": self.steps,
                "burn": self.burn, "thin": self.thin,
                "tau": dict(zip(names, self.tau.tolist())),
                "ess": dict(zip(names, self.ess.tolist())),
                "ess_bulk": dict(zip(names, self.ess_bulk.tolist())),
                "ess_tail": dict(zip(names, self.ess_tail.tolist())),
                "rhat": dict(zip(names, self.rhat.tolist())),
                "rhat_method": "rank-normalised split R-hat (ArviZ) between the ensembles",
                "acceptance_fraction": self.acceptance.tolist()}


@dataclasses.dataclass(frozen=True)
class Round:
    """What :func:`sample_rounds` yields after each round: the chains so far ``(K, S, W,
    d)``, their log-probabilities ``(K, S, W)``, the diagnostics, and the log-likelihood
    parts stored with the chains ``(K, S, W, parts)`` with their names (None and ``()`` when
    none are)."""

    steps: int
    chains: np.ndarray
    log_prob: np.ndarray
    diagnostics: Diagnostics
    blobs: np.ndarray | None = None
    blob_names: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class Chains:
    """The chains of a finished run and their kept samples.

    Attributes
    ----------
    chains
        ``(K, S, W, d)`` positions [SI] of K ensembles, S steps, W walkers.
    log_prob
        ``(K, S, W)``.
    samples, samples_log_prob
        Post-burn-in, thinned samples pooled over ensembles and walkers, ``(N, d)``, ``(N,)``.
    blobs, blob_names
        ``(K, S, W, parts)`` the log-likelihood of each part of the problem's likelihood at
        every position (one per telemetry channel in a reconstruction) and the parts' names,
        or None and ``()``.
    """

    names: tuple[str, ...]
    chains: np.ndarray
    log_prob: np.ndarray
    diagnostics: Diagnostics
    samples: np.ndarray
    samples_log_prob: np.ndarray
    path: Path | None
    blobs: np.ndarray | None = None
    blob_names: tuple[str, ...] = ()

    def walker_chains(self, of: np.ndarray | None = None) -> np.ndarray:
        """Post-burn-in chains with every walker of every ensemble a chain,
        ``(K W, S - burn, ...)`` (the layout of ArviZ's posterior group), of the positions or
        of ``of`` ``(K, S, W, ...)`` (the log probabilities, the blobs)."""
        a = self.chains if of is None else of
        kept = a[:, self.diagnostics.burn:]
        K, S, W = kept.shape[:3]
        return np.swapaxes(kept, 1, 2).reshape(K * W, S, *kept.shape[3:])


# --------------------------------------------------------------------------------------------
def _arviz():
    with warnings.catch_warnings():  # the package announces its refactor on import
        warnings.simplefilter("ignore", FutureWarning)
        import arviz

    return arviz


def _walkers_as_chains(chains: np.ndarray) -> np.ndarray:
    K, S, W, d = chains.shape
    return chains.transpose(0, 2, 1, 3).reshape(K * W, S, d)


def _arviz_stats(chains: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rank-normalised split R-hat, bulk and tail ESS of ``(K, S, W, d)`` chains; NaN when
    the chains are too short to split (and R-hat NaN for a single ensemble).

    R-hat compares the ensembles: each ensemble's walkers pooled step by step is one chain,
    split in its first and second half of steps. The walkers of one ensemble are not
    independent chains (each stretch move uses the others), and a single walker over S steps
    holds only S / tau draws, so R-hat over single walkers stays above 1.02 on a Gaussian
    target long after the ensembles agree (1.04 at S = 1500, tau = 46). The ESS takes every
    walker as a chain: it is the autocorrelation along each walker that limits it.
    """
    K, S, W, d = chains.shape
    if S < 4:
        nan = np.full(d, np.nan)
        return nan, nan, nan
    az = _arviz()
    pooled = az.convert_to_dataset({"theta": chains.reshape(K, S * W, d)})
    walkers = az.convert_to_dataset({"theta": _walkers_as_chains(chains)})
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        # between ensembles: undefined for one (ArviZ would refuse the shape)
        rhat = (az.rhat(pooled, method="rank")["theta"].values if K >= 2
                else np.full(d, np.nan))
        bulk = az.ess(walkers, method="bulk")["theta"].values
        tail = az.ess(walkers, method="tail")["theta"].values
    return (np.asarray(rhat, float).reshape(d), np.asarray(bulk, float).reshape(d),
            np.asarray(tail, float).reshape(d))


def _tau(chains: np.ndarray) -> np.ndarray:
    import emcee

    taus = []
    for k in range(chains.shape[0]):
        taus.append(emcee.autocorr.integrated_time(chains[k], c=5, tol=0, quiet=True))
    return np.max(np.array(taus), axis=0)


def diagnose(chains: np.ndarray, accepted: np.ndarray, settings: SamplerSettings,
             previous_tau: np.ndarray | None = None, *, final: bool = False) -> Diagnostics:
    """Diagnostics of ``chains`` ``(K, S, W, d)``; ``accepted`` ``(K, W)`` acceptance counts
    (module docstring)."""
    K, S, W, d = chains.shape
    tau = _tau(chains) if S >= 4 else np.full(d, np.inf)
    tmax = float(np.max(tau))
    burn = int(min(np.ceil(2 * tmax), S // 2)) if np.isfinite(tmax) else S // 2
    thin = max(1, int(0.5 * np.min(tau))) if np.all(np.isfinite(tau)) else 1
    rhat, bulk, tail = _arviz_stats(chains[:, burn:])
    acc = accepted.mean(axis=1) / max(S, 1)
    reasons = []
    if S < settings.tau_factor * tmax:
        reasons.append(f"chain {S} steps < {settings.tau_factor:g} tau ({tmax:.1f})")
    if previous_tau is None:
        reasons.append("tau not yet checked twice")
    elif np.any(np.abs(tau - previous_tau) > settings.tau_rtol * tau):
        reasons.append("tau still changing")
    if not np.all(rhat < settings.rhat_max):
        if K < 2:
            reasons.append("R-hat not available (one ensemble: it compares ensembles)")
        elif np.all(np.isnan(rhat)):   # chains too short to split
            reasons.append("R-hat not available (chains too short)")
        else:
            reasons.append(f"max R-hat {np.nanmax(rhat):.4f} >= {settings.rhat_max}")
    ess = np.minimum(bulk, tail)
    if not np.all(ess >= settings.min_ess):
        reasons.append(f"min ESS {np.nanmin(ess) if np.isfinite(ess).any() else 0:.0f} < "
                       f"{settings.min_ess:g}")
    converged = not reasons
    status = "converged" if converged else ("step_limit" if final else "running")
    reason = "all criteria met" if converged else "; ".join(reasons)
    return Diagnostics(S, burn, thin, tau, rhat, bulk, tail, acc, converged, status, reason)


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


#: how far the log probability at a resumed chain's last positions may be from the stored one:
#: the same inputs give the same number to rounding (1e-9 relative covers another BLAS's
#: summation order); another record, prior or model moves it by far more
RESUME_LOG_PROB_RTOL = 1e-9
RESUME_LOG_PROB_ATOL = 1e-6


def _check_resumed(log_prob, state, path: Path, k: int) -> None:
    """Refuse to continue ensemble ``k`` unless ``log_prob`` at its stored last positions is
    the log probability stored with them: the chains were sampled from this posterior."""
    now = np.asarray(log_prob(np.asarray(state.coords, float)), float)
    then = np.asarray(state.log_prob, float)
    same = np.isclose(now, then, rtol=RESUME_LOG_PROB_RTOL, atol=RESUME_LOG_PROB_ATOL) | (
        np.isneginf(now) & np.isneginf(then))
    if not same.all():
        diff = np.abs(np.where(np.isfinite(now) & np.isfinite(then), now - then, np.inf))
        raise ResumeRefused(
            f"cannot resume: at the last positions of ensemble {k}'s chains the log "
            f"probability is not the one they were sampled with ({int((~same).sum())} of "
            f"{same.size} walkers differ, by up to {float(diff.max()):.3g}): the record, the "
            "priors, the noise model or the forward model changed since; start without "
            "--resume", source=str(path))


#: bytes HDF5 writes per walker-step beyond the position and log probability (acceptance,
#: chunk and group bookkeeping), and the room kept free under every write [bytes]
_STEP_OVERHEAD = 16
_ROOM_MARGIN = 1 << 20


def _chain_bytes(walkers: int, d: int, steps: int) -> int:
    """Bytes of ``steps`` steps of one ensemble's chain file group: positions, log
    probabilities and bookkeeping, float64."""
    return int(steps) * int(walkers) * (8 * (d + 1) + _STEP_OVERHEAD)


def _guarded_backend(emcee):
    """emcee's HDF5 backend that checks its device's room before every write.

    libhdf5 does not fail cleanly on a full device: after the first failed write the file's
    objects cannot be closed and the process can die in the library (SIGSEGV) without a word.
    So no write is started without room for it plus a margin; when the room is not there the
    run stops with :class:`models.errors.OutputError` (exit 74) naming the chain file, its steps
    so far intact for ``--resume``."""
    class GuardedHDFBackend(emcee.backends.HDFBackend):
        def grow(self, ngrow, blobs):
            check_room(self.filename, _chain_bytes(self.shape[0], self.shape[1], 1),
                       margin=_ROOM_MARGIN)
            return super().grow(ngrow, blobs)

        def save_step(self, state, accepted):
            walkers, d = np.shape(state.coords)
            check_room(self.filename, _chain_bytes(walkers, d, 1), margin=_ROOM_MARGIN)
            return super().save_step(state, accepted)

    return GuardedHDFBackend


class ResumeRefused(InputError):
    """``--resume`` refused: no chains, or chains of another problem or sampler shape."""

    #: the chain file was not touched (the application keeps its staging as it was)
    refused_resume = True


def check_resumable(path: str | os.PathLike, *, names: Sequence[str],
                    settings: SamplerSettings,
                    fingerprint: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The stored settings of the chain file ``path`` when ``--resume`` may continue it: the
    same parameter names and sampler shape, and the same problem by content digest
    (``fingerprint``: record, parameters and priors, sensor models, span); otherwise
    :class:`InputError` naming the file and what differs. Cheap: a caller checks before any
    fitting (the log probability at the last positions is checked when sampling resumes)."""
    path = Path(path)
    old = _read_meta(path)
    if old is None:
        raise ResumeRefused("nothing to resume: no chain file from an earlier run",
                         source=str(path))
    old.setdefault("moves", "stretch")   # chain files written before moves were chosen
    now = {"names": list(names), "walkers": settings.walkers, "ensembles": settings.ensembles,
           "check_every": settings.check_every, "moves": settings.moves}
    for k, v in now.items():
        if old[k] != v:
            raise ResumeRefused(f"cannot resume: '{k}' was {old[k]}, now {v}", source=str(path))
    # what the chains were sampled for (a file without it is checked by the log probability
    # alone)
    was = old.get("problem") or {}
    digests = dict(fingerprint or {})
    changed = [k for k, v in digests.items() if k in was and was[k] != v]
    if changed:
        pairs = ", ".join(f"{k} {was[k]} -> {digests[k]}" for k in changed)
        raise ResumeRefused(f"cannot resume: the chains were sampled with a different "
                         f"{' and '.join(changed)} (digest {pairs}); start without --resume",
                         source=str(path))
    return old


def _samplers(log_prob, x0, scale, lower, upper, path: Path, names, settings, seed, resume,
              start, fingerprint=None, log_prob_terms=None, term_names=()):
    """The ensembles' samplers over their HDF5 groups, each one's initial state (None
    when it continues from its backend) and the names of the log-likelihood parts stored as
    the chains' blobs (empty when none are: no ``log_prob_terms``, or chains begun without
    them)."""
    import emcee
    import h5py

    d = len(names)
    term_names = list(term_names) if log_prob_terms is not None else []
    meta = {"names": list(names), "walkers": settings.walkers, "ensembles": settings.ensembles,
            "seed": seed, "check_every": settings.check_every, "moves": settings.moves,
            "problem": dict(fingerprint or {}), "blobs": term_names}
    if resume:
        old = check_resumable(path, names=names, settings=settings, fingerprint=fingerprint)
        seed = old["seed"]
        if old.get("blobs") != term_names:
            # chains begun without these blobs go on without them: a blob of the earlier
            # steps cannot be made up
            term_names = []
    else:
        if path.exists():
            path.unlink()
        path.parent.mkdir(parents=True, exist_ok=True)
        # the whole run's chains, asked for before the first step: a device that cannot hold
        # them is refused now, not after hours of sampling
        check_room(path, settings.ensembles * _chain_bytes(settings.walkers, d,
                                                           settings.max_steps),
                   margin=_ROOM_MARGIN)
        with h5py.File(path, "w") as f:
            f.attrs["dockrecon"] = json.dumps(meta)
    # one independent stream per ensemble: its initial ball and its emcee generator
    child = np.random.SeedSequence(seed).spawn(settings.ensembles)
    if term_names:
        def fn(x):
            lp, terms = log_prob_terms(x)
            return np.column_stack([lp, terms])
    else:
        fn = log_prob
    out = []
    backend_type = _guarded_backend(emcee)
    for k in range(settings.ensembles):
        backend = backend_type(str(path), name=f"ensemble_{k}")
        fresh = not (resume and backend.initialized and backend.iteration > 0)
        if fresh:
            backend.reset(settings.walkers, d)
        sampler = emcee.EnsembleSampler(settings.walkers, d, fn, vectorize=True,
                                        backend=backend,
                                        moves=MOVES[settings.moves](emcee.moves))
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
            state = sampler._previous_state   # the backend's last sample and random state
            _check_resumed(log_prob, state, path, k)
        out.append((sampler, state))
    return out, term_names


def sample_rounds(log_prob: Callable[[np.ndarray], np.ndarray], x0: np.ndarray,
                  scale: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                  path: str | os.PathLike, *, names: Sequence[str],
                  settings: SamplerSettings = SamplerSettings(), seed: int = 0,
                  resume: bool = False, start: np.ndarray | None = None,
                  fingerprint: Mapping[str, str] | None = None,
                  log_prob_terms: Callable | None = None,
                  term_names: Sequence[str] = ()) -> Iterator[Round]:
    """Run (or resume) ``settings.ensembles`` emcee ensembles into the HDF5 file ``path`` and
    yield a :class:`Round` after every ``check_every`` steps, up to ``max_steps``; the
    consumer stops the run by closing the generator (leaving the loop).

    Parameters are those of :func:`run_ensembles`.
    """
    path = Path(path)
    samplers, term_names = _samplers(log_prob, x0, scale, lower, upper, path, names,
                                     settings, seed, resume, start, fingerprint,
                                     log_prob_terms, term_names)
    ce = settings.check_every
    done = min(s.backend.iteration for s, _ in samplers)
    prev_tau = None
    last_check = (done // ce) * ce
    if last_check >= 4:  # a resumed run repeats the check it made before the interruption
        prev_tau = _tau(np.stack([s.backend.get_chain()[:last_check] for s, _ in samplers]))
    steppers = [sampler.sample(state, iterations=max(0, settings.max_steps
                                                     - sampler.backend.iteration), store=True)
                for sampler, state in samplers]
    step = done
    while True:
        if step < settings.max_steps:
            step += 1
            # every ensemble takes the step (one interrupted ahead of the others waits)
            for (sampler, _), stepper in zip(samplers, steppers):
                if sampler.backend.iteration < step:
                    next(stepper)
            if step % ce and step < settings.max_steps:
                continue
        chains = np.stack([s.backend.get_chain()[:step] for s, _ in samplers])
        lp = np.stack([s.backend.get_log_prob()[:step] for s, _ in samplers])
        accepted = np.stack([s.backend.accepted for s, _ in samplers])
        final = step >= settings.max_steps
        diag = diagnose(chains, accepted, settings, prev_tau, final=final)
        prev_tau = diag.tau
        blobs = None
        if term_names:
            c = len(term_names)
            blobs = np.stack([np.asarray(s.backend.get_blobs()[:step], float).reshape(
                step, settings.walkers, c) for s, _ in samplers])
        yield Round(step, chains, lp, diag, blobs, tuple(term_names))
        if final:
            return


def run_ensembles(log_prob: Callable[[np.ndarray], np.ndarray], x0: np.ndarray, scale: np.ndarray,
                  lower: np.ndarray, upper: np.ndarray, path: str | os.PathLike, *,
                  names: Sequence[str], settings: SamplerSettings = SamplerSettings(),
                  seed: int = 0, resume: bool = False, start: np.ndarray | None = None,
                  fingerprint: Mapping[str, str] | None = None,
                  progress: Callable[[int, int], None] | None = None,
                  log_prob_terms: Callable | None = None,
                  term_names: Sequence[str] = ()) -> Chains:
    """Run (or resume) the ensembles until converged or at the step limit (module docstring).

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
        Continue the chains in ``path``: refused when the names or sampler settings differ,
        when a part of ``fingerprint`` differs from the one stored, and when ``log_prob`` at
        the chains' last positions is not the log probability stored with them (another
        record, prior or model), so that a resumed posterior is never a mixture.
    start
        Optional ``(m, d)`` posterior draws (e.g. importance-resampled) to start the walkers
        from instead of the ball: each ensemble takes ``walkers`` of them at random, jittered
        by 1e-3 ``scale`` so that no two walkers coincide.
    fingerprint
        Digests of what the posterior depends on, by part (e.g.
        :meth:`recon.problem.ReconstructionProblem.fingerprint`), stored with the chains.
    progress
        Called ``progress(steps_done, max_steps)`` (per-ensemble step counts) after each round.
    log_prob_terms, term_names
        ``log_prob_terms(x) -> (log_prob (n,), parts (n, len(term_names)))``: the log
        probability and its log-likelihood parts, stored with the chains as emcee's blobs
        (``Chains.blobs``). A resume of chains begun without them goes on without them.
    """
    rnd = None
    for rnd in sample_rounds(log_prob, x0, scale, lower, upper, path, names=names,
                             settings=settings, seed=seed, resume=resume, start=start,
                             fingerprint=fingerprint, log_prob_terms=log_prob_terms,
                             term_names=term_names):
        if progress is not None:
            progress(rnd.steps, settings.max_steps)
        if rnd.diagnostics.converged:
            break
    diag = rnd.diagnostics
    d = len(names)
    kept = rnd.chains[:, diag.burn::diag.thin]
    kept_lp = rnd.log_prob[:, diag.burn::diag.thin]
    return Chains(tuple(names), rnd.chains, rnd.log_prob, diag, kept.reshape(-1, d),
                  kept_lp.reshape(-1), Path(path), rnd.blobs, rnd.blob_names)


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


def mcmc(problem, result: Result, *, settings: SamplerSettings, path: str | os.PathLike,
         seed: int = 0, resume: bool = False,
         progress: Callable[[str, int, int], None] | None = None) -> Result:
    """The MCMC engine: emcee ensembles (:func:`run_ensembles`) on ``problem``'s
    log-probability, as the ``"mcmc"`` posterior.

    The walkers start from the current posterior: from its draws when it is an importance
    posterior with an effective sample size of at least :data:`MIN_START_ESS`; from a wide
    ball (4 x the larger of the Laplace and importance standard deviations) when that ESS is
    smaller: importance draws with a small ESS sit on a few points, often in one narrow pocket
    of a rough posterior, and walkers started there stay there (calibration study, 24 flights,
    seed 7: the 21 flights with ESS >= 100 cover at 0.70 / 0.95, the 3 below it at 0.47 /
    0.72; on flight cal04 the wide start converged, split R-hat <= 1.013 after 1500 steps,
    with every truth inside its 95 % interval); from a ball of 1 Laplace sd otherwise. The MAP
    becomes the most probable sample when it beats the optimum. ``diagnostics.mcmc`` holds
    the sampler's diagnostics and where the walkers started.
    """
    sp = problem.space
    lap = result.posteriors.get("laplace")
    se = lap.stderr if lap is not None else result.posterior.stderr
    imp = result.posteriors.get("importance")
    is_ess = (result.diagnostics.get("importance") or {}).get("ess") if imp else None
    if is_ess is None:
        start, start_how = None, "ball of 1 sd"
        width = np.where(np.isfinite(se), se, np.inf)
    elif is_ess >= MIN_START_ESS:
        start, start_how = imp.samples, "importance draws"
        width = np.where(np.isfinite(se), se, np.inf)
    else:
        start = None
        start_how = f"ball of 4 sd (importance ESS {is_ess:.0f} < {MIN_START_ESS})"
        width = 4.0 * np.fmax(np.where(np.isfinite(se), se, 0.0), imp.stderr)
        log.info("MCMC walkers start from a %s", start_how)
    x_opt = np.asarray(result.x_opt, float)
    scale = np.clip(width, 1e-6 * sp.prior_scale(), 0.5 * sp.prior_scale())
    fp = problem.fingerprint() if hasattr(problem, "fingerprint") else None
    terms_of = getattr(problem, "log_likelihood_terms", None)
    res = run_ensembles(problem.log_probability, x_opt, scale, sp.lower, sp.upper, path,
                        names=problem.names, settings=settings, seed=seed, resume=resume,
                        start=start, fingerprint=fp,
                        progress=(lambda d, t: progress("sample", d, t)) if progress else None,
                        log_prob_terms=terms_of,
                        term_names=tuple(problem.likelihood_groups()) if terms_of else ())
    samples = res.samples
    lp_opt = float(problem.log_probability(x_opt[None, :])[0])
    i = int(np.argmax(res.samples_log_prob)) if res.samples_log_prob.size else -1
    x_map = samples[i] if i >= 0 and res.samples_log_prob[i] > lp_opt else x_opt
    diag = res.diagnostics.to_dict(problem.names)
    diag["n_samples"] = int(samples.shape[0])
    diag["start"] = start_how
    result.diagnostics["mcmc"] = diag
    log.info("sampling stopped: %s (%s)", res.diagnostics.status, res.diagnostics.reason)
    if not res.diagnostics.converged:
        result.warnings.append(
            f"the MCMC stopped at its step limit ({res.diagnostics.steps} steps per walker) "
            f"before converging ({res.diagnostics.reason}): the intervals are provisional; "
            "resume the chains with more steps (reconstruct --resume --steps N)")
        log.warning("%s", result.warnings[-1])
    result.set_posterior(Posterior(
        "mcmc", samples, np.std(samples, axis=0), x_map, chains=res.walker_chains(),
        log_prob=res.walker_chains(res.log_prob),
        log_likelihood=None if res.blobs is None else res.walker_chains(res.blobs),
        likelihood_names=res.blob_names))
    return result
