"""The model of a hysteresis element's branch tables fitted to a quasi-static load-deflection
record: its parameters, their bounds and start values, and the force residual.

The record is a sequence of samples ``(q, force)`` in the order they were taken (any sequence
of loading and unloading cycles); the model is the element's state machine driven by that
sequence (:meth:`models.hysteresis.HysteresisElement.trace` of a sampled history: the rate
sign is the backward difference of q, and each reversal is anchored at the record's turning
point, :func:`models.hysteresis.sampled_history`), so the transition segments and, for a friction brake, the irreversible
shifts are reproduced exactly as in simulation. The fit (:func:`identify_hysteresis`)
minimises the force residual

.. math::  \\min_p \\sum_k \\bigl(Q_{model}(q_{1..k}; p) - F_k\\bigr)^2 .

Reported parameters per side (names ``pos_*`` / ``neg_*``; the negative side in magnitudes,
i.e. the mirrored frame of digest A.6, so all values and bounds are positive):

* ``q0`` end of the backlash, ``q1`` end of the common first segment and ``Q1`` its force
  (shared by both branches, digest A.3);
* ``qF{j}``, ``QF{j}`` interior forward nodes (j = 2 .. N-2); ``qB{j}``, ``QB{j}`` interior
  backward nodes (j = 2 .. N-3) and ``qB{N-2}``;
* ``qN``, ``QN`` the working-range limit and its force (shared), ``k3`` the maximum
  (transition) stiffness; for the constant variant this is also the beyond-range slope, for
  the friction brake the beyond-range slope is 0 and ``QN`` is the slip level.

``QB{N-2} = QN - k3 (qN - qB{N-2})`` is derived, so the last backward segment has the maximum
stiffness (assumption 5) by construction. The segment stiffnesses ``kF{j}``, ``kB{j}``
(``j = 1 ..``, segment ``j`` from node ``j`` to ``j+1``; segment 0 is the common first one,
``k0``) are derived parameters.

The fitted (internal) parameters are the backlash end ``q0``, the common length ``c``, the
working length ``L``, the interior breakpoints as fractions ``fF{j}``, ``fB{j}`` of the range
left, the node forces and ``k3`` (:func:`internal_parameters`). Their bounds keep the tables
valid: lengths stay positive and fractions in (0, 1), so the breakpoints stay strictly
monotone and the shared nodes shared; forces and ``k3`` are non-negative. The constraints
that are not boxes (every segment no stiffer than ``k3``; loading above unloading) hold at the
truth with a margin; the residual uses ``max(k3, steepest segment)`` as transition slope so
that a trial point never breaks the state machine, and the fitted element is validated at the
end (:func:`element_from_parameters`).

References
----------
Seed digest ``hysteresis-and-resonance-identification.md``, A.3, A.10, A.12.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from models._kernels import hysteresis as _k
from models.errors import DataError, InputError
from models.hysteresis import (HysteresisElement, IllegalTransition, element_from_dict,
                               sampled_history)

from identification.engines import laplace, least_squares
from identification.ground_test import box_space, derived_parameters, reweight
from identification.lmfit_bridge import (INTERVALS, apply_parameters, attach_profile,
                                         check_profile_names, minimizer_result,
                                         profile_intervals, result_parameters)
from identification.problem import ResidualProblem
from identification.result import Result, summarize

__all__ = ["parameter_values", "reported_values", "internal_parameters", "parameter_bounds",
           "parameter_unit", "breakpoint_parameters", "element_from_parameters",
           "check_record", "LoopResidual", "identify_hysteresis"]


# --------------------------------------------------------------------------------------------
# parameterization
# --------------------------------------------------------------------------------------------
def _side_frame(element: HysteresisElement, side: str):
    s = getattr(element, side)
    sgn = 1.0 if side == "positive" else -1.0
    qF = sgn * np.asarray(s.forward.q)
    QF = sgn * np.asarray(s.forward.Q)
    qB = sgn * np.asarray(s.backward.q)
    QB = sgn * np.asarray(s.backward.Q)
    return qF, QF, qB, QB, s.k3


def _prefix(side: str) -> str:
    return "pos" if side == "positive" else "neg"


def parameter_values(element: HysteresisElement) -> dict[str, float]:
    """The fit parameters (free and derived) of an element, by name, in SI (magnitudes)."""
    nodes = {}
    for side in ("positive", "negative"):
        qF, QF, qB, QB, k3 = _side_frame(element, side)
        nodes[_prefix(side)] = (qF, QF, qB, QB, k3)
    return _values_from_nodes(nodes)


def _values_from_nodes(nodes) -> dict[str, float]:
    out: dict[str, float] = {}
    for p, (qF, QF, qB, QB, k3) in nodes.items():
        qF, QF, qB, QB = (np.asarray(a, dtype=float) for a in (qF, QF, qB, QB))
        n = qF.size
        out[f"{p}_q0"] = qF[0]
        out[f"{p}_q1"] = qF[1]
        out[f"{p}_Q1"] = QF[1]
        for j in range(2, n - 1):
            out[f"{p}_qF{j}"] = qF[j]
            out[f"{p}_QF{j}"] = QF[j]
        for j in range(2, n - 1):
            out[f"{p}_qB{j}"] = qB[j]
            out[f"{p}_QB{j}"] = QB[j]
        out[f"{p}_qN"] = qF[-1]
        out[f"{p}_QN"] = QF[-1]
        out[f"{p}_k3"] = k3
        with np.errstate(divide="ignore", invalid="ignore"):
            out[f"{p}_k0"] = (QF[1] - QF[0]) / (qF[1] - qF[0])
            for j in range(1, n - 1):
                out[f"{p}_kF{j}"] = (QF[j + 1] - QF[j]) / (qF[j + 1] - qF[j])
                out[f"{p}_kB{j}"] = (QB[j + 1] - QB[j]) / (qB[j + 1] - qB[j])
    return {k: float(v) for k, v in out.items()}


def reported_values(free: Mapping[str, float], like: HysteresisElement) -> dict[str, float]:
    """Every reported parameter (breakpoints, forces, stiffnesses) from the internal ones
    (:func:`internal_parameters`), without validation."""
    nodes = {}
    for side in ("positive", "negative"):
        p = _prefix(side)
        nodes[p] = (*_nodes_internal(free, p, getattr(like, side).n), free[f"{p}_k3"])
    return _values_from_nodes(nodes)


def _nodes(values: Mapping[str, float], p: str, n: int):
    """Node arrays (side frame) from the reported parameters."""
    qF = [values[f"{p}_q0"], values[f"{p}_q1"]]
    QF = [0.0, values[f"{p}_Q1"]]
    qB, QB = list(qF), list(QF)
    for j in range(2, n - 1):
        qF.append(values[f"{p}_qF{j}"])
        QF.append(values[f"{p}_QF{j}"])
        qB.append(values[f"{p}_qB{j}"])
        QB.append(values[f"{p}_QB{j}"])
    qF.append(values[f"{p}_qN"])
    qB.append(values[f"{p}_qN"])
    QF.append(values[f"{p}_QN"])
    QB.append(values[f"{p}_QN"])
    QB[n - 2] = values[f"{p}_QN"] - values[f"{p}_k3"] * (qB[n - 1] - qB[n - 2])  # assumption 5
    return qF, QF, qB, QB


def _nodes_internal(v: Mapping[str, float], p: str, n: int):
    """Node arrays (side frame) from the internal parameters: backlash end ``q0``, common
    length ``c``, working length ``L``; interior nodes as fractions of the remaining range
    (``q_j = q_{j-1} + f_j (q_N - q_{j-1})``, ``0 < f_j < 1``), so every box point of the
    internal parameters is a strictly monotone table sharing its common nodes.
    ``QB(N-1) = QN - k3 (qN - qB(N-1))``: the last backward segment has the maximum
    stiffness (assumption 5) by construction."""
    q0 = v[f"{p}_q0"]
    q1 = q0 + v[f"{p}_c"]
    qn = q1 + v[f"{p}_L"]
    qF, qB = [q0, q1], [q0, q1]
    QF, QB = [0.0, v[f"{p}_Q1"]], [0.0, v[f"{p}_Q1"]]
    for j in range(2, n - 1):
        qF.append(qF[-1] + v[f"{p}_fF{j}"] * (qn - qF[-1]))
        qB.append(qB[-1] + v[f"{p}_fB{j}"] * (qn - qB[-1]))
        QF.append(v[f"{p}_QF{j}"])
        QB.append(v.get(f"{p}_QB{j}", 0.0))  # QB(N-1) is derived below
    qF.append(qn)
    qB.append(qn)
    QF.append(v[f"{p}_QN"])
    QB.append(v[f"{p}_QN"])
    QB[n - 2] = v[f"{p}_QN"] - v[f"{p}_k3"] * (qn - qB[n - 2])
    return qF, QF, qB, QB


def internal_parameters(element: HysteresisElement) -> dict[str, float]:
    """The fitted (internal) parameters of an element, by name (inverse of
    :func:`_nodes_internal`)."""
    out: dict[str, float] = {}
    for side in ("positive", "negative"):
        p = _prefix(side)
        qF, QF, qB, QB, k3 = _side_frame(element, side)
        n = qF.size
        out[f"{p}_q0"] = qF[0]
        out[f"{p}_c"] = qF[1] - qF[0]
        out[f"{p}_L"] = qF[-1] - qF[1]
        for j in range(2, n - 1):
            out[f"{p}_fF{j}"] = (qF[j] - qF[j - 1]) / (qF[-1] - qF[j - 1])
            out[f"{p}_fB{j}"] = (qB[j] - qB[j - 1]) / (qB[-1] - qB[j - 1])
        out[f"{p}_Q1"] = QF[1]
        for j in range(2, n - 1):
            out[f"{p}_QF{j}"] = QF[j]
        for j in range(2, n - 2):
            out[f"{p}_QB{j}"] = QB[j]
        out[f"{p}_QN"] = QF[-1]
        out[f"{p}_k3"] = k3
    return {k: float(v) for k, v in out.items()}


def element_from_parameters(values: Mapping[str, float], like: HysteresisElement,
                            ) -> HysteresisElement:
    """The (validated) element with the given parameter values, shaped like ``like``."""
    brake = like.kind == _k.KIND_BRAKE
    d: dict[str, Any] = {"name": like.name, "variant": like.variant, "dof": like.dof,
                         "tolerance": like.tolerance, "policy": like.policy,
                         "initial_shift": like.initial_shift}
    for side in ("positive", "negative"):
        p = _prefix(side)
        sgn = 1.0 if side == "positive" else -1.0
        n = getattr(like, side).n
        qF, QF, qB, QB = _nodes(values, p, n)
        sd: dict[str, Any] = {
            "forward": {"q": [sgn * v for v in qF], "Q": [sgn * v for v in QF]},
            "backward": {"q": [sgn * v for v in qB], "Q": [sgn * v for v in QB]},
        }
        sd["k3" if brake else "k_max"] = values[f"{p}_k3"]
        d[side] = sd
    return element_from_dict(d)


def _trial_table(values: Mapping[str, float], like: HysteresisElement, out: np.ndarray) -> None:
    """Write the kernel table of a trial point (internal parameters) into ``out`` without
    validation (the fast path of the residual), transition slope max(k3, steepest segment)."""
    brake = like.kind == _k.KIND_BRAKE
    out[_k.H_KIND] = like.kind
    pos = _k.H_SIZE
    for side, hk3 in (("positive", _k.H_K3P), ("negative", _k.H_K3N)):
        p = _prefix(side)
        n = getattr(like, side).n
        qF, QF, qB, QB = _nodes_internal(values, p, n)
        k3 = values[f"{p}_k3"]
        steep = 0.0
        for q, Q in ((qF, QF), (qB, QB)):
            qa, Qa = np.asarray(q), np.asarray(Q)
            dq = np.diff(qa)
            dq = np.where(dq > 0, dq, np.finfo(float).tiny)
            k = np.diff(Qa) / dq
            steep = max(steep, float(k.max()))
            out[pos:pos + n] = qa
            out[pos + n:pos + 2 * n] = Qa
            out[pos + 2 * n:pos + 3 * n - 1] = k
            out[pos + 3 * n - 1] = 0.0 if brake else k3
            pos += 3 * n
        out[hk3] = max(k3, steep)
    out[_k.H_NP] = like.positive.n
    out[_k.H_NN] = like.negative.n
    out[_k.H_TOL] = like.tolerance


def parameter_bounds(start: HysteresisElement) -> dict[str, tuple[float, float]]:
    """Boxes of the internal parameters. Lengths stay positive and fractions in (0, 1), so
    the breakpoints are strictly monotone and the shared nodes shared for every box point;
    forces and k3 are non-negative. Lengths may range from 1/5 to 3 times the start."""
    v = internal_parameters(start)
    out: dict[str, tuple[float, float]] = {}
    eps = 1e-6
    for side in ("positive", "negative"):
        p = _prefix(side)
        n = getattr(start, side).n
        c0, L0 = v[f"{p}_c"], v[f"{p}_L"]
        out[f"{p}_q0"] = (0.0, max(3.0 * v[f"{p}_q0"], 0.5 * c0))
        out[f"{p}_c"] = (0.2 * c0, 3.0 * c0)
        out[f"{p}_L"] = (0.2 * L0, 3.0 * L0)
        for j in range(2, n - 1):
            out[f"{p}_fF{j}"] = (eps, 1.0 - eps)
            out[f"{p}_fB{j}"] = (eps, 1.0 - eps)
        top = 10.0 * max(v[f"{p}_QN"], 1e-300)
        out[f"{p}_Q1"] = (0.0, top)
        for j in range(2, n - 1):
            out[f"{p}_QF{j}"] = (0.0, top)
        for j in range(2, n - 2):
            out[f"{p}_QB{j}"] = (0.0, top)
        out[f"{p}_QN"] = (0.0, top)
        out[f"{p}_k3"] = (0.0, 100.0 * v[f"{p}_k3"])
    return out


def parameter_unit(name: str, like: HysteresisElement) -> str:
    """SI unit of a reported or internal parameter: that of q (``q*``, ``c``, ``L``), of the
    force (``Q*``), of a stiffness (``k*``), or none (a fraction ``f*``)."""
    qu, Qu, ku = like.units
    base = name.split("_", 1)[1]
    return {"q": qu, "c": qu, "L": qu, "Q": Qu, "k": ku}.get(base[0], "")


def breakpoint_parameters(names: Sequence[str]) -> tuple[str, ...]:
    """The internal parameters among ``names`` that place breakpoints (``q0``, ``c``, ``L``,
    ``f*``): held while the node forces settle in the first stage of a staged polish. With
    the abscissas fixed the force is nearly linear in the remaining parameters, so the first
    stage converges from a rough start and puts the branches in place before the kinks move."""
    return tuple(n for n in names if n.split("_", 1)[1][0] in "qcLf")


#: largest residual rms of a plausible fit, as a fraction of the record's force range: static
#: tests measure forces to a few per cent of their range (the shipped records' fits leave
#: 0.2-0.7 %); a loop the tables miss by a tenth of its height is not described by them
MAX_RELATIVE_RESIDUAL = 0.10


def check_record(q: Sequence[float] | np.ndarray, force: Sequence[float] | np.ndarray,
                 start: HysteresisElement) -> tuple[np.ndarray, np.ndarray]:
    """Validate a record against the start tables; return ``q``, ``force`` as float arrays.

    Raises
    ------
    InputError
        Arrays of different lengths, fewer than 10 samples, non-finite values.
    DataError
        The record does not follow the element's state table at the start tables.
    """
    q = np.ascontiguousarray(q, dtype=float)
    f = np.ascontiguousarray(force, dtype=float)
    if q.ndim != 1 or f.shape != q.shape:
        raise InputError("q and force must be one-dimensional and of equal length", key="q")
    if q.size < 10:
        raise InputError(f"needs at least 10 samples, got {q.size}", key="q")
    if not (np.isfinite(q).all() and np.isfinite(f).all()):
        raise InputError("q and force must be finite", key="force")
    if not np.ptp(q) > 1e-9 * max(1.0, float(np.abs(q).max())):
        raise DataError(f"the deformation does not vary (every sample {q[0]:g}): a static "
                        "test sweeps the element through its stroke", key="q")
    if not np.ptp(f) > 0.0:
        raise DataError(f"the force does not vary (every sample {f[0]:g})", key="force")
    try:
        start.trace(q)
    except IllegalTransition as exc:
        raise DataError(f"the record does not follow the element's state table at the start "
                        f"tables: {exc}", key="q") from None
    return q, f


class LoopResidual:
    """Force residual ``model - force`` [N or N m] of a batch of internal parameter vectors.

    Parameters
    ----------
    q, force
        The record (:func:`check_record`).
    start
        Start element: fixes N_P, N_N, the variant, the tolerance and the initial shift.
    names
        Order of the internal parameters in a parameter vector (every one of
        :func:`internal_parameters`).

    Calling it with ``(n, len(names))`` returns ``(n, len(q))``; a trial point the state
    machine rejects gives the residual of a zero force from the failing sample on (large and
    finite, so an optimizer steps back).
    """

    def __init__(self, q: np.ndarray, force: np.ndarray, start: HysteresisElement,
                 names: Sequence[str]) -> None:
        self.q, self.force, self.start = q, force, start
        self.names = tuple(names)
        self._table = start.table().copy()
        self._istate = np.zeros(_k.I_SIZE, dtype=np.int64)
        self._fstate = np.zeros(_k.F_SIZE)
        # the state machine's steps: the samples plus each turning point (sampled_history)
        self._q, self._qd, self._at, self._t = sampled_history(q)
        self._states = np.zeros(self._q.size, dtype=np.int64)

    def trace(self, values: Mapping[str, float]) -> tuple[np.ndarray, int, float]:
        """Model force [N or N m] at each sample for internal parameter ``values``, the number
        of brake slips and the final shift [m or rad]."""
        model = np.zeros_like(self._q)
        _trial_table(values, self.start, self._table)
        _k.hyst_reset(self._istate, 0, self._fstate, 0, float(self.start.initial_shift))
        status, k = _k.hyst_trace(self._table, 0, self._istate, 0, self._fstate, 0, self._q,
                                  self._qd, self._t, model, self._states)
        if status != _k.ST_OK:
            model[k:] = 0.0
        return model[self._at], int(self._istate[_k.I_NSLIP]), float(self._fstate[_k.S_SHIFT])

    def __call__(self, params: np.ndarray) -> np.ndarray:
        params = np.atleast_2d(np.asarray(params, float))
        out = np.empty((params.shape[0], self.q.size))
        for i, row in enumerate(params):
            out[i] = self.trace(dict(zip(self.names, row)))[0] - self.force
        return out


def identify_hysteresis(q: Sequence[float] | np.ndarray, force: Sequence[float] | np.ndarray,
                        start, *, fixed: Sequence[str] = (), n_starts: int = 4,
                        rel_spread: float = 0.08, seed: int = 0,
                        max_nfev: int | None = None, n_draws: int = 4000, params=None,
                        intervals: str = "laplace",
                        profile: Sequence[str] | None = None) -> Result:
    """Fit the branch tables of ``start`` to a quasi-static record
    (:mod:`identification.hysteresis_fit`).

    Parameters
    ----------
    q
        Deformation samples [m or rad], in the order they were taken.
    force
        Measured generalized force [N or N m] at each sample.
    start : HysteresisElement or FrictionBrakeElement
        Start tables; fix N_P, N_N, the variant and the parameter boxes (uniform priors).
    fixed
        Internal parameters held at their start value.
    params : lmfit.Parameters, optional
        Start values, bounds (``min``, ``max``) and ``vary`` of any of the internal parameters
        (:func:`internal_parameters`; :func:`identification.lmfit_bridge.apply_parameters`),
        replacing those the start tables give; ``vary = False`` holds one, as ``fixed`` does.
        ``result.params`` of an earlier fit is one.
    n_starts
        Local fits: from the start tables, then from seeded draws within ``rel_spread``
        (relative) of them. Each is a staged polish (breakpoints held, then all free;
        :func:`identification.hysteresis_fit.breakpoint_parameters`): the piecewise-linear
        model has local minima where a kink sits on the wrong side of a data feature.
    seed
        Seed of the draws and of the Laplace draws.
    max_nfev
        Limit on residual evaluations of each stage of each local fit.
    n_draws
        Laplace draws behind the intervals.
    intervals
        ``"laplace"``, or ``"profile"``: also the profile-likelihood intervals of the fitted
        parameters (:func:`identification.lmfit_bridge.profile_intervals`).
    profile
        With ``"profile"``: the internal parameters to profile (default: every free one).

    Returns
    -------
    Result
        Kind ``"hysteresis_fit"``. ``result.params``: the fitted internal parameters as
        :class:`lmfit.Parameters` (Laplace ``stderr`` and ``correl``);
        ``result.fit_report()``: lmfit's report of them. With ``intervals="profile"``:
        ``diagnostics.profile`` and, in the entries of the reported parameters that are
        fitted ones, ``profile_ci68``, ``profile_ci95`` and ``profile_parabolic``
        (:func:`identification.lmfit_bridge.attach_profile`). ``parameters``: every
        reported parameter (breakpoints, node forces, stiffnesses; derived ones with
        ``prior: {"kind": "derived"}``) with its start value (``start``); sections
        ``element`` (the fitted, validated tables), ``residual_rms`` [N or N m] and its
        unit, ``n_points``, ``optimizer``, ``brake`` (slips and final shift of a friction
        brake, else None) and ``fitted`` (``q``, ``force``, ``model``: the record and the
        fitted element's force along it).
        ``diagnostics.noise`` holds the force noise estimated from the residuals, which
        scales the intervals.

    Raises
    ------
    InputError
        Bad arrays or parameter names.
    DataError
        The record does not follow the element's state table at the start tables, or the
        fit converges to tables that violate the paper's constraints.
    """
    if intervals not in INTERVALS:
        raise InputError(f"unknown intervals {intervals!r} ({' or '.join(INTERVALS)})",
                         key="intervals")
    q, f = check_record(q, force, start)
    values0 = internal_parameters(start)
    boxes = parameter_bounds(start)
    names = list(boxes)
    unknown = set(fixed) - set(names)
    if unknown:
        raise InputError(f"unknown parameter (free ones: {', '.join(names)})",
                         key=f"fixed.{sorted(unknown)[0]}")
    space = box_space(names, [parameter_unit(n, start) for n in names],
                   [values0[n] for n in names], [boxes[n] for n in names], fixed)
    space = apply_parameters(space, params)
    profile = check_profile_names(space, profile)
    loop = LoopResidual(q, f, start, names)
    problem = ResidualProblem(space, loop, q.size)
    rng = np.random.default_rng(seed)
    x0 = space.start()
    starts = [x0] + [x0 * (1.0 + rng.uniform(-rel_spread, rel_spread, x0.size))
                     for _ in range(max(1, n_starts) - 1)]
    result = least_squares(problem, starts=0, first_guess=np.array(starts), seed=seed,
                           max_nfev=max_nfev, origin="start tables", x_scale="jac",
                           hold=breakpoint_parameters(space.free_names),
                           kind="hysteresis_fit")
    result.seed = seed
    free_vals = dict(zip(names, space.full(result.x_opt[None, :])[0]))
    vals = reported_values(free_vals, start)
    try:
        element = element_from_parameters(vals, start)
    except InputError as exc:
        raise DataError(f"the fit converged to invalid tables ({exc}); adjust the start "
                        "tables", key="element") from None
    problem = reweight(problem, result)
    laplace(problem, result, rng=rng, n_draws=n_draws)

    order = list(parameter_values(element))
    units = {k: parameter_unit(k, start) for k in order}
    derived = derived_parameters(
        result, space, lambda full: reported_values(dict(zip(names, full)), start), units)
    free = summarize(space, result.posterior.samples, result.posterior.x_map,
                     result.posterior.stderr)
    start_vals = parameter_values(start)
    entries = {}
    for k in order:
        entry = dict(derived[k])
        entry["map"] = vals[k]
        entry["prior"] = free[k]["prior"] if k in free else {"kind": "derived"}
        entry["start"] = start_vals.get(k)
        entries[k] = entry
    result.parameters = entries
    result.params = result_parameters(space, result)
    result.lmfit_result = minimizer_result(
        problem, result, result.params,
        method="multi-start staged least squares (trust-region reflective)")
    if intervals == "profile":
        attach_profile(result, profile_intervals(problem, result, profile))

    fitted = element.trace(q)
    _, slips, shift = loop.trace(free_vals)
    best = result.best
    result.sections.update({
        "element": element.to_dict(),
        "residual_rms": float(np.sqrt(np.mean((fitted - f) ** 2))),
        "residual_rms_unit": element.units[1],
        "n_points": int(q.size),
        "optimizer": {"method": "multi-start staged least squares (identification.engines."
                                "least_squares: trust-region reflective, breakpoints held, "
                                "then all free)",
                      "n_starts": len(result.starts),
                      "nfev": int(sum(s.nfev for s in result.starts)),
                      "success": bool(best.success), "message": best.message},
        "brake": ({"slips": slips, "final_shift": shift}
                  if element.variant == "friction_brake" else None),
        "fitted": {"q": q, "force": f, "model": np.asarray(fitted, float)},
    })
    result.settings.update({"starts": int(max(1, n_starts)), "seed": seed,
                            "rel_spread": rel_spread,
                            "fixed": [p.name for p in space.parameters if p.fixed],
                            "max_nfev": max_nfev, "n_draws": n_draws,
                            "intervals": intervals, "profile": profile})
    rms, span = result.sections["residual_rms"], float(np.ptp(f))
    if rms > MAX_RELATIVE_RESIDUAL * span:
        # a converged optimizer is not a fit: the tables miss the loop
        result.status = "implausible"
        result.status_reason = (
            f"the fitted tables miss the record by {rms:.4g} {element.units[1]} rms, "
            f"{100 * rms / span:.0f} % of its {span:.4g} {element.units[1]} force range "
            f"(at most {100 * MAX_RELATIVE_RESIDUAL:.0f} % for a fit): the element's "
            "form (N_P, N_N, variant) or its start tables do not describe this record")
    return result
