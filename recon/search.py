"""Starts of a docking reconstruction's search: the analytic first guess and the
cross-entropy screen of the prior box.

The first guess (:func:`first_guess`) is the post-flight tradition (digest section 11): the
docking unit's own guess from its mechanism channels (the closing velocity from the peak
stroke of a probe, say; :meth:`models.unit.DockingUnit.first_guess`), the clock offset from
the record's first capture (else contact) edge (:meth:`recon.problem.ReconstructionProblem.
profile_clock`) and the relative angular rates from the gyros before first contact
(:func:`rates_from_gyros`). The screen (:func:`screened_starts`) searches the rest.
"""
from __future__ import annotations

import numpy as np

from recon.problem import ReconstructionProblem
from recon.span import first_edge

__all__ = ["first_guess", "rates_from_gyros", "rates_pinned", "screened_starts"]

#: the relative angular rates of the initial conditions (every unit's)
RATE_PARAMETERS = ("rel_rate_x", "rel_rate_y", "rel_rate_z")


def first_guess(problem: ReconstructionProblem, unit) -> np.ndarray:
    """The analytic first guess of ``problem``'s free parameters (module docstring)."""
    sp = problem.space
    x = np.clip(unit.first_guess(problem), sp.lower, sp.upper)
    _, x1 = problem.profile_clock(x[None, :])
    return rates_from_gyros(problem, unit, np.clip(x1[0], sp.lower, sp.upper))


def rates_from_gyros(problem: ReconstructionProblem, unit, x: np.ndarray, *,
                     step: float = 1e-3, margin: float = 0.05) -> np.ndarray:
    """Relative angular rates from the gyros before first contact (linear least squares).

    Before the first contact the vehicles fly free, so the body rates the gyros record (the
    unit's channels of kind ``"rate"``) are a linear function of the relative rate (the
    passive rates are given; torque-free motion over a few seconds at these rates is linear
    to 1e-6 rad/s). The map is measured with the forward model itself (3 extra runs, steps
    ``step`` [rad/s]) at the fitted telemetry stamps before ``first contact - margin`` [s],
    and the rates solving the whitened least-squares problem replace those of ``x``. This
    pins ``rel_rate_*`` to about the gyro noise over the pre-contact samples, where the prior
    allows +-1 deg/s.
    """
    names = problem.names
    sp = problem.space
    tel = problem.telemetry
    cols = [names.index(n) for n in RATE_PARAMETERS if n in names]
    gyros = _gyros(problem, unit)
    t_c = first_edge(tel, unit.contact_flag)
    if not cols or not gyros or not np.isfinite(t_c):
        return x
    batch = np.repeat(x[None, :], 1 + len(cols), axis=0)
    for i, j in enumerate(cols):
        batch[1 + i, j] += step
    pred = problem.predict(batch)
    rows, rhs = [], []
    for c in gyros:
        t, y = tel.samples(c)
        keep = t < t_c - margin
        if keep.sum() < 1:
            continue
        sig = problem.observation.channel(c).sigma_eff
        p = pred[c][:, keep]
        rows.append(((p[1:] - p[0]) / step).T / sig)
        rhs.append((y[keep] - p[0]) / sig)
    if not rows:
        return x
    a = np.vstack(rows)
    b = np.concatenate(rhs)
    if not np.all(np.isfinite(a)) or not np.all(np.isfinite(b)) or a.shape[0] < len(cols):
        return x
    d = np.linalg.lstsq(a, b, rcond=None)[0]
    out = x.copy()
    out[cols] = np.clip(x[cols] + d, sp.lower[cols], sp.upper[cols])
    return out


def _gyros(problem: ReconstructionProblem, unit) -> list[str]:
    """The fitted channels of kind ``"rate"`` (the gyros)."""
    return [c for c in problem.observation.names
            if c in unit.channels and unit.channels[c].kind == "rate"]


def rates_pinned(problem: ReconstructionProblem, unit, *, margin: float = 0.05) -> bool:
    """Whether the gyros before first contact determine the relative rates: the record has
    a first contact edge and at least as many gyro samples before ``first contact -
    margin`` [s] as there are free relative rates (:func:`rates_from_gyros` solves for them
    then)."""
    names = problem.names
    n_rates = sum(n in names for n in RATE_PARAMETERS)
    tel = problem.telemetry
    t_c = first_edge(tel, unit.contact_flag)
    if n_rates == 0 or not np.isfinite(t_c):
        return False
    n = sum(int(np.sum(tel.samples(c)[0] < t_c - margin)) for c in _gyros(problem, unit))
    return n >= n_rates


def screened_starts(problem: ReconstructionProblem, unit, *, n_screen: int = 512,
                    keep: int = 3, seed: int = 0, n_local: int = 256, rounds: int = 3,
                    elite: float = 0.05, progress=None) -> np.ndarray:
    """Starts for the least-squares polish: the analytic :func:`first_guess` and a
    cross-entropy screen with the clock offset profiled
    (:meth:`~recon.problem.ReconstructionProblem.profile_clock`).

    A screen with the closing velocity held at the analytic (peak-stroke) value fails when
    that value is off by a few mm/s (the shipped slow flight: 0.0745 against 0.080, because at
    low speed the peak stroke is set by the latch and sensor resistance as much as by the
    speed), since the clock guess made from it is then off by 0.3 s and the polish settles in
    a wrong basin. So only the relative rates, which the gyros pin before first contact, are
    held at the analytic guess (when the record has gyro samples before first contact,
    :func:`rates_pinned`; those of a record that starts in contact are searched too);
    everything else is searched:

    1. ``n_screen`` Latin-hypercube draws over the prior box, each with its clock offset
       profiled on the capture time, plus the analytic guess;
    2. ``rounds`` cross-entropy rounds: the best ``elite`` fraction of everything evaluated so
       far (at least 8 draws) gives a mean and a covariance (inflated by 1.5^2, floored at 1 %
       of the prior spread) from which ``n_local`` new draws are made and profiled. This
       follows the narrow, curved valleys in (lateral offset, lateral velocity, angles) that a
       box screen misses; the probe-cone cost has many shallow local minima there (rebounds
       in the cone switch on and off), which defeat a gradient polish started far away.

    The ``keep`` best draws, and the analytic guess, are returned best first, each to be
    polished (:func:`identification.engines.multistart`). ``progress(stage, done, total)`` gets
    stage
    ``"screen"`` after each round.

    Returns
    -------
    ndarray
        ``(<= keep + 1, ndim)`` starts [SI].
    """
    g = first_guess(problem, unit)
    if n_screen <= 0 or keep <= 0:
        return g[None, :]
    sp = problem.space
    names = problem.names
    held = ([names.index(n) for n in RATE_PARAMETERS if n in names]
            if rates_pinned(problem, unit) else [])
    rng = np.random.default_rng(seed)
    x1 = sp.latin_hypercube(n_screen, rng)
    x1[:, held] = g[held]
    n_rounds = max(0, rounds) if n_local > 0 else 0
    c, x = problem.profile_clock(np.vstack([g[None, :], x1]))
    if progress is not None:
        progress("screen", 1, 1 + n_rounds)
    g = x[0]
    spread = sp.upper - sp.lower
    for r in range(n_rounds):
        ok = np.flatnonzero(np.isfinite(c))
        if ok.size < 2:
            break
        n_el = max(8, int(elite * ok.size))
        el = x[ok[np.argsort(c[ok], kind="stable")[:n_el]]]
        mu = el.mean(axis=0)
        cov = np.cov(el, rowvar=False) * 1.5 ** 2 + np.diag((0.01 * spread) ** 2)
        xn = rng.multivariate_normal(mu, cov, size=n_local, method="cholesky")
        xn[:, held] = g[held]
        xn = np.clip(xn, sp.lower, sp.upper)
        cn, xn = problem.profile_clock(xn)
        x = np.vstack([x, xn])
        c = np.concatenate([c, cn])
        if progress is not None:
            progress("screen", 2 + r, 1 + n_rounds)
    order = np.argsort(c, kind="stable")
    best = [x[i] for i in order[:keep] if np.isfinite(c[i])]
    if not any(np.array_equal(b, g) for b in best):
        best.append(g)
    return np.array(best)
