"""Branch tables of a hysteresis element from a quasi-static load-deflection record.

The record is a sequence of samples ``(q, force)`` in the order they were taken (any sequence
of loading and unloading cycles); the model is the element's state machine driven by that
sequence (:meth:`models.hysteresis.HysteresisElement.trace`: the rate sign is the backward
difference of q), so the transition segments and, for a friction brake, the irreversible
shifts are reproduced exactly as in simulation. The fit is bounded least squares on the force
residual (lmfit, ``least_squares`` / trust-region reflective):

.. math::  \\min_p \\sum_k \\bigl(Q_{model}(q_{1..k}; p) - F_k\\bigr)^2 .

Parameters per side (names ``pos_*`` / ``neg_*``; the negative side in magnitudes, i.e. the
mirrored frame of digest A.6, so all values and bounds are positive):

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
``k0``) are derived parameters; their standard errors come from the covariance.

Bounds keep the tables valid: every breakpoint is boxed between the midpoints to its
neighbours in the start table (so the breakpoints stay strictly monotone and the shared
nodes stay shared), forces and ``k3`` are non-negative. The constraints that are not boxes
(every segment no stiffer than ``k3``; loading above unloading) hold at the truth with a
margin; during the search the kernel uses ``max(k3, steepest segment)`` as transition slope
so that a trial point never breaks the state machine, and the fitted element is validated at
the end (an invalid result is reported, not returned).

Standard errors are lmfit's (covariance from the Jacobian at the optimum, scaled by the
reduced chi-square), i.e. the noise level is estimated from the residual unless ``sigma`` is
given and ``scale_covar=False``.

References
----------
Seed digest ``hysteresis-and-resonance-identification.md``, A.3, A.10, A.12.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from models._kernels import hysteresis as _k
from models.errors import DataError, InputError
from models.hysteresis import HysteresisElement, IllegalTransition, element_from_dict

__all__ = ["HysteresisFit", "fit_hysteresis", "parameter_values", "element_from_parameters"]


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


def _all_values(free: Mapping[str, float], like: HysteresisElement) -> dict[str, float]:
    """Every reported parameter (breakpoints, forces, stiffnesses) from the internal ones,
    without validation."""
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


def _internal(element: HysteresisElement) -> dict[str, float]:
    """Internal parameters of an element (inverse of :func:`_nodes_internal`)."""
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


# --------------------------------------------------------------------------------------------
# result
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class HysteresisFit:
    """Result of :func:`fit_hysteresis`.

    Attributes
    ----------
    element : HysteresisElement
        The fitted, validated element.
    values, stderr : dict
        Every parameter (free and derived, magnitudes in SI) and its standard error (NaN when
        the covariance is not available).
    bounds : dict
        ``name -> (lo, hi)`` of the free parameters.
    free : tuple of str
        Names of the free parameters (the rest are derived).
    residual_rms : float
        RMS of ``model - force`` [N or N m].
    force_model : numpy.ndarray
        Fitted force at each sample.
    """

    element: HysteresisElement
    values: dict[str, float]
    stderr: dict[str, float]
    bounds: dict[str, tuple[float, float]]
    free: tuple[str, ...]
    start: dict[str, float]
    residual_rms: float
    n_points: int
    nfev: int
    success: bool
    message: str
    force_model: np.ndarray = field(repr=False)
    n_starts: int = 1
    seed: int | None = None
    slips: int = 0
    final_shift: float = 0.0

    def unit(self, name: str) -> str:
        qu, Qu, ku = self.element.units
        base = name.split("_", 1)[1]
        return qu if base.startswith("q") else Qu if base.startswith("Q") else ku

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary: fitted tables, parameters with uncertainties, residual RMS."""
        return {
            "element": self.element.to_dict(),
            "parameters": self.parameter_table(),
            "residual_rms": self.residual_rms,
            "residual_rms_unit": self.element.units[1],
            "n_points": self.n_points,
            "optimizer": {"method": "lmfit least_squares (trust-region reflective), "
                                    "staged, multi-start",
                          "n_starts": self.n_starts, "nfev": self.nfev,
                          "success": self.success, "message": self.message},
            "seed": self.seed,
            "brake": ({"slips": self.slips, "final_shift": self.final_shift}
                      if self.element.variant == "friction_brake" else None),
        }

    def parameter_table(self) -> dict[str, dict[str, Any]]:
        """Parameters in the project's result schema (``map``, ``median``, ``ci68``, ``ci95``,
        ``stderr``, ``unit``, ``prior``); intervals are the Gaussian ones of least squares."""
        out = {}
        for name, v in self.values.items():
            se = self.stderr.get(name, float("nan"))
            ok = np.isfinite(se)
            lo, hi = self.bounds.get(name, (None, None))
            out[name] = {
                "map": v,
                "median": v,
                "stderr": se if ok else None,
                "ci68": [v - se, v + se] if ok else None,
                "ci95": [v - 1.959964 * se, v + 1.959964 * se] if ok else None,
                "unit": self.unit(name),
                "prior": (f"uniform[{lo:.6g}, {hi:.6g}]" if name in self.free else "derived"),
                "start": self.start.get(name),
            }
        return out


# --------------------------------------------------------------------------------------------
# fit
# --------------------------------------------------------------------------------------------
def _bounds(start: HysteresisElement) -> dict[str, tuple[float, float]]:
    """Boxes of the internal parameters. Lengths stay positive and fractions in (0, 1), so
    the breakpoints are strictly monotone and the shared nodes shared for every box point;
    forces and k3 are non-negative. Lengths may range from 1/5 to 3 times the start."""
    v = _internal(start)
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


def fit_hysteresis(q: Sequence[float] | np.ndarray, force: Sequence[float] | np.ndarray,
                   start: HysteresisElement, *, fixed: Sequence[str] = (),
                   n_starts: int = 4, rel_spread: float = 0.08, seed: int = 0,
                   max_nfev: int | None = None) -> HysteresisFit:
    """Fit the branch tables of ``start`` to a quasi-static record.

    Parameters
    ----------
    q : array
        Deformation samples [m or rad], in the order they were taken.
    force : array
        Measured generalized force [N or N m] at each sample.
    start : HysteresisElement or FrictionBrakeElement
        Start tables; fixes N_P, N_N, the variant and the parameter bounds (see module doc).
    fixed : sequence of str
        Names of parameters held at their start value.
    n_starts : int
        Local fits to run: from the start tables, then from seeded draws around them.
    rel_spread : float
        Relative half-width of the draws around the start values.
    seed : int
        Seed of the draws (``numpy.random.default_rng``).
    max_nfev : int, optional
        Limit on residual evaluations of each local fit.

    Returns
    -------
    HysteresisFit

    Raises
    ------
    InputError
        Bad arrays or parameter names. ``DataError`` when the record does not follow the
        element's state table (illegal transition at the start tables) or the fit converges
        to tables that violate the paper's constraints.
    """
    import lmfit

    q = np.ascontiguousarray(q, dtype=float)
    f = np.ascontiguousarray(force, dtype=float)
    if q.ndim != 1 or f.shape != q.shape:
        raise InputError("q and force must be one-dimensional and of equal length", key="q")
    if q.size < 10:
        raise InputError(f"needs at least 10 samples, got {q.size}", key="q")
    if not (np.isfinite(q).all() and np.isfinite(f).all()):
        raise InputError("q and force must be finite", key="force")

    values0 = _internal(start)
    bounds = _bounds(start)
    free_names = list(bounds)
    unknown = set(fixed) - set(free_names)
    if unknown:
        raise InputError(f"unknown parameter (free ones: {', '.join(free_names)})",
                         key=f"fixed.{sorted(unknown)[0]}")
    try:
        start.trace(q)
    except IllegalTransition as exc:
        raise DataError(f"the record does not follow the element's state table at the start "
                        f"tables: {exc}", key="q") from None

    params = lmfit.Parameters()
    for name in free_names:
        lo, hi = bounds[name]
        val = min(max(values0[name], lo), hi)
        params.add(name, value=val, min=lo, max=hi, vary=name not in fixed)

    table = start.table().copy()
    istate = np.zeros(_k.I_SIZE, dtype=np.int64)
    fstate = np.zeros(_k.F_SIZE)
    qd = np.empty_like(q)
    qd[0] = 0.0
    qd[1:] = np.diff(q)
    t = np.arange(q.size, dtype=float)
    model = np.zeros_like(q)
    states = np.zeros(q.size, dtype=np.int64)
    shift0 = float(start.initial_shift)

    def simulate(vals: Mapping[str, float]) -> np.ndarray:
        _trial_table(vals, start, table)
        _k.hyst_reset(istate, 0, fstate, 0, shift0)
        status, k = _k.hyst_trace(table, 0, istate, 0, fstate, 0, q, qd, t, model, states)
        if status != _k.ST_OK:
            model[k:] = 0.0  # an impossible trial point: a large, finite residual
        return model

    def residual(pars: lmfit.Parameters) -> np.ndarray:
        return simulate(pars.valuesdict()) - f

    kws: dict[str, Any] = {"x_scale": "jac", "tr_solver": "lsmr"}
    if max_nfev is not None:
        kws["max_nfev"] = max_nfev

    def local_fit(p0: lmfit.Parameters):
        # Stage 1: breakpoints held, forces and k3 free. With the abscissas fixed the force
        # is nearly linear in the remaining parameters, so this converges from a rough start
        # and puts the branches in place before the kinks may move (stage 2, all free).
        stage1 = p0.copy()
        for name in free_names:
            if name.split("_", 1)[1][0] in "qcLf":
                stage1[name].set(vary=False)
        out1 = lmfit.minimize(residual, stage1, method="least_squares", **kws)
        p1 = p0.copy()
        for name in free_names:
            p1[name].set(value=out1.params[name].value)
        out2 = lmfit.minimize(residual, p1, method="least_squares", **kws)
        return out2, out1.nfev + out2.nfev

    # Multi-start: the piecewise-linear model has local minima where a kink sits on the
    # wrong side of a data feature; the start table plus (n_starts - 1) seeded draws within
    # +-rel_spread of it (inside the bounds), keep the lowest chi-square.
    rng = np.random.default_rng(seed)
    best, nfev = None, 0
    for i in range(max(1, n_starts)):
        p0 = params.copy()
        if i > 0:
            for name in free_names:
                if name in fixed:
                    continue
                lo, hi = bounds[name]
                v = values0[name] * (1.0 + rng.uniform(-rel_spread, rel_spread))
                p0[name].set(value=min(max(v, lo), hi))
        out, n = local_fit(p0)
        nfev += n
        if best is None or out.chisqr < best.chisqr:
            best = out
    out = best
    free_vals = {k: float(v) for k, v in out.params.valuesdict().items()}
    vals = _all_values(free_vals, start)
    try:
        element = element_from_parameters(vals, start)
    except InputError as exc:
        raise DataError(f"the fit converged to invalid tables ({exc}); adjust the start "
                        "tables", key="element") from None
    fitted = element.trace(q)
    _trial_table(free_vals, start, table)
    _k.hyst_reset(istate, 0, fstate, 0, shift0)
    _k.hyst_trace(table, 0, istate, 0, fstate, 0, q, qd, t, model, states)
    stderr = _propagate(out, free_vals, start)
    rms = float(np.sqrt(np.mean((fitted - f) ** 2)))
    order = list(parameter_values(element))
    return HysteresisFit(
        element=element,
        values={k: vals[k] for k in order},
        stderr={k: stderr.get(k, float("nan")) for k in order},
        bounds={k: bounds[k] for k in free_names},
        free=tuple(n for n in free_names if n not in fixed),
        start=parameter_values(start),
        residual_rms=rms,
        n_points=int(q.size),
        nfev=int(nfev),
        success=bool(out.success),
        message=str(out.message),
        force_model=fitted,
        n_starts=int(max(1, n_starts)),
        seed=seed,
        slips=int(istate[_k.I_NSLIP]),
        final_shift=float(fstate[_k.S_SHIFT]),
    )


def _propagate(out, free_vals: Mapping[str, float], like: HysteresisElement) -> dict[str, float]:
    """Standard errors of every parameter: lmfit's for the free ones, J C J^T for the derived
    ones (J by central differences of the derived quantities, relative step 1e-6)."""
    names = list(out.var_names)
    covar = out.covar
    allv = _all_values(free_vals, like)
    if covar is None:
        return {k: float("nan") for k in allv}
    jac = np.zeros((len(allv), len(names)))
    keys = list(allv)
    for c, name in enumerate(names):
        h = 1e-6 * max(abs(free_vals[name]), 1e-12)
        up, dn = dict(free_vals), dict(free_vals)
        up[name] += h
        dn[name] -= h
        vu, vd = _all_values(up, like), _all_values(dn, like)
        jac[:, c] = [(vu[k] - vd[k]) / (2 * h) for k in keys]
    var = np.einsum("ij,jk,ik->i", jac, covar, jac)
    return {k: float(np.sqrt(v)) if v >= 0 else float("nan") for k, v in zip(keys, var)}
