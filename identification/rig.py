"""The hydraulic test rig's output-error model for rig records (seed digest
``hydraulic-actuator.md`` Section 8): fittable parameters, their boxes and start values, the
noise-weighted channel residuals, the identifiability report, and the fit
(:func:`identify_rig`).

Two record kinds:

* ``"actuator"``: one actuator on the bench. Channels ``t`` [s], ``u`` [V] (commanded valve
  signal), ``F_load`` [N] (optional, positive resists extension), and measured ``x_v`` [-]
  (spool LVDT, optional), ``p_A``, ``p_B`` [Pa], ``x_p`` [m]. The stand-alone model
  (:func:`models.hydraulic.simulate_actuator`, single-rate reference, robust update, smoothed dry
  friction) is driven by ``u`` and ``F_load`` from the record's first sample; the initial
  piston position and chamber pressures are nuisance parameters fitted with the rest
  (taking the first noisy sample would bias every parameter).
* ``"platform"``: the 6-DOF rig. Channels ``t``, commanded pose ``cmd_x``, ``cmd_y``, ``cmd_z``
  [m], ``cmd_roll``, ``cmd_pitch``, ``cmd_yaw`` [rad], measured leg lengths ``len_1..6`` [m] and
  chamber pressures ``p_A_1..6`` [Pa]. The coupled model
  (:func:`models.hydraulic.simulate_hexapod`) is re-run for each parameter vector; the transport
  delay of the valve commands is fitted.

Residuals are ``model - record`` per channel [channel units]; the noise level of each channel
starts from ``[identify.noise]`` and is re-estimated from the residuals of the fit.

Identifiability (:func:`identifiability_report`): the Jacobian columns are normalised, the
singular values give the numerical rank, and pairs with ``|rho| > 0.95`` or parameters whose
relative standard error exceeds 50 % are listed as not separable by this record.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from models import hydraulic as H
from models.errors import DataError, InputError
from models.schema import Key, Table, keys

from identification.engines import laplace, least_squares
from identification.ground_test import box_space, reweight
from identification.lmfit_bridge import (INTERVALS, apply_parameters, attach_profile,
                                         check_profile_names, minimizer_result,
                                         profile_intervals, result_parameters)
from identification.problem import ResidualProblem
from identification.result import Result, summarize

__all__ = ["FITTABLE", "NUISANCE", "RECORD_UNITS", "METHOD", "IdentifySettings", "RigRecord",
           "actuator_model_channels", "platform_model_channels", "parameter_boxes",
           "nuisance_parameters", "record_channels", "noise_of", "RigResidual",
           "identifiability_report", "identify_rig", "IDENTIFY"]

#: Actuator parameters that can be fitted: name -> unit.
FITTABLE = {
    "bulk_modulus": "Pa", "valve_gain": "1/V", "valve_natural_frequency": "rad/s",
    "valve_damping": "", "supply_overlap": "", "tank_overlap": "",
    "flow_coefficient": "m^3/(s*Pa^0.5)", "viscous_friction": "N*s/m", "dry_friction": "N",
    "internal_leakage": "m^3/(s*Pa)", "external_leakage": "m^3/(s*Pa)",
    "transport_delay": "s",
}
_ACT_CHANNELS = ("x_v", "p_A", "p_B", "x_p")
#: SI unit of every record column (for :func:`recon.io.read_table`).
RECORD_UNITS = {"t": "s", "u": "V", "F_load": "N", "x_v": "", "p_A": "Pa", "p_B": "Pa",
                "x_p": "m", "cmd_x": "m", "cmd_y": "m", "cmd_z": "m", "cmd_roll": "rad",
                "cmd_pitch": "rad", "cmd_yaw": "rad"}
RECORD_UNITS.update({f"len_{k}": "m" for k in range(1, 7)})
RECORD_UNITS.update({f"p_A_{k}": "Pa" for k in range(1, 7)})
RECORD_UNITS.update({f"p_B_{k}": "Pa" for k in range(1, 7)})
_DEFAULT_NOISE = {"x_v": 0.01, "p_A": 5e4, "p_B": 5e4, "x_p": 1e-4, "len": 1e-4}
RHO_LIMIT = 0.95
REL_SE_LIMIT = 0.5

#: declared schema of a rig configuration's ``[identify]`` table (models.schema), which
#: :meth:`IdentifySettings.from_dict` takes its keys from; ``[identify.bounds]`` and
#: ``[identify.noise]`` take the names of :data:`FITTABLE` and of the noise channels
IDENTIFY = Table("identify", "Identification settings of dockrecon identify rig "
                 "(identification.rig.IdentifySettings).", keys("""
kind       | choice:actuator,platform | - | 'actuator' | - | the record's kind: one actuator
| on the bench or the 6-DOF platform
parameters | strings | - | required | - | the fitted parameters (names of [identify.bounds])
max_nfev   | integer | - | 200      | [1, ] | largest number of model evaluations of the fit
""") + (Table("bounds", "Box of a fitted parameter, NAME = [lower, upper] with lower < upper "
              "[SI] (default start/5 .. start*5, delay 0 .. 0.05 s, leakage 0 .. 1e-10).",
              tuple(Key(n, "vector:2", u, help=f"box of {n}") for n, u in FITTABLE.items()),
              source=False),
        Table("noise", "Start value of a channel's noise level (re-estimated from the "
              "residuals of the fit) [channel units].",
              tuple(Key(n, "number", "", v, 0.0, exclusive_minimum=True, physical=False,
                        help=f"sigma of {n}") for n, v in _DEFAULT_NOISE.items()),
              source=False)), source=False)


@dataclass(frozen=True)
class IdentifySettings:
    """``[identify]`` table: ``kind`` ("actuator" | "platform"), ``parameters`` (names from
    :data:`FITTABLE`), ``[identify.bounds]`` NAME = [lo, hi] (default start/5 .. start*5, delay
    0 .. 0.05 s, leakage 0 .. 1e-10), ``[identify.noise]`` channel = sigma (SI), ``max_nfev``."""

    kind: str
    parameters: tuple[str, ...]
    bounds: Mapping[str, tuple[float, float]]
    noise: Mapping[str, float]
    max_nfev: int = 200

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "IdentifySettings":
        allowed = IDENTIFY.names()
        for k in d:
            if k not in allowed:
                raise InputError(f"unknown key (allowed: {', '.join(sorted(allowed))})",
                                 key=f"identify.{k}")
        kind = d.get("kind", "actuator")
        if kind not in ("actuator", "platform"):
            raise InputError("must be 'actuator' or 'platform'", key="identify.kind")
        names = d.get("parameters")
        if not isinstance(names, list) or not names:
            raise InputError("a non-empty list of parameter names", key="identify.parameters")
        for n in names:
            if n not in FITTABLE:
                raise InputError(f"unknown parameter {n!r} (fittable: {', '.join(FITTABLE)})",
                                 key="identify.parameters")
        bounds = {}
        for n, b in dict(d.get("bounds", {})).items():
            if n not in IDENTIFY["bounds"].names() or not isinstance(b, list) or len(b) != 2 or not b[0] < b[1]:
                raise InputError("expected NAME = [lower, upper] with lower < upper",
                                 key=f"identify.bounds.{n}")
            bounds[n] = (float(b[0]), float(b[1]))
        noise = {}
        for n, v in dict(d.get("noise", {})).items():
            if n not in IDENTIFY["noise"].names() or not isinstance(v, (int, float)) or not v > 0:
                raise InputError(f"expected a positive sigma for one of {list(_DEFAULT_NOISE)}",
                                 key=f"identify.noise.{n}")
            noise[n] = float(v)
        nfev = d.get("max_nfev", IDENTIFY["max_nfev"].default)
        if isinstance(nfev, bool) or not isinstance(nfev, int) or nfev < 1:
            raise InputError(f"expected a whole number >= 1, got {nfev!r}",
                             key="identify.max_nfev")
        return cls(kind, tuple(names), bounds, noise, nfev)


@dataclass(frozen=True)
class RigRecord:
    """A rig record in SI: ``columns`` name -> array, all the length of ``t``."""

    t: np.ndarray
    columns: Mapping[str, np.ndarray]

    @classmethod
    def from_frame(cls, frame, kind: str, source: str | None = None) -> "RigRecord":
        need = (("t", "u", "p_A", "p_B", "x_p") if kind == "actuator" else
                ("t", "cmd_x", "cmd_y", "cmd_z", "cmd_roll", "cmd_pitch", "cmd_yaw")
                + tuple(f"len_{k}" for k in range(1, 7)))
        for n in need:
            if n not in frame.columns:
                raise DataError(f"missing column of a '{kind}' record", source=source, key=n)
        cols = {c: np.asarray(frame[c], float) for c in frame.columns}
        t = cols["t"]
        if t.size < 10:
            raise DataError("fewer than 10 samples", source=source, key="t")
        dt = np.diff(t)
        if (dt <= 0).any():
            row = int(np.flatnonzero(dt <= 0)[0]) + 2
            raise DataError("time does not increase", source=source, key="t", row=row)
        for n in need:
            bad = ~np.isfinite(cols[n])
            if bad.any():
                raise DataError("missing or non-finite value", source=source, key=n,
                                row=int(np.flatnonzero(bad)[0]) + 1)
        return cls(t - t[0], cols)


def actuator_model_channels(params: H.ActuatorParams, config: H.RigConfig,
                            record: RigRecord, initial: np.ndarray | None = None
                            ) -> dict[str, np.ndarray]:
    """Simulate the stand-alone actuator on the record's inputs; channels at the record times.

    ``initial`` = (x_p0 [m], p_A0 [Pa], p_B0 [Pa]); default: the record's first sample. The
    spool starts at rest at ``K_v u(0)`` (valve settled before the record starts).
    """
    c = record.columns
    dt = config.solver.dt_hydraulic
    cmd = H.Command(t=record.t, u=c["u"], load_force=c.get("F_load"))
    if initial is None:
        initial = (float(c["x_p"][0]), float(c["p_A"][0]), float(c["p_B"][0]))
    s0 = H.initial_state(params, x_p=float(initial[0]), p_a=float(initial[1]),
                         p_b=float(initial[2]))
    s0[0] = min(1.0, max(-1.0, params.valve_gain * float(c["u"][0])))
    mass = params.piston_mass + config.load.mass
    traj = H.simulate_actuator(params, cmd, mass=mass, t_end=float(record.t[-1]), dt=dt,
                               state0=s0)
    tt = traj["t"]
    return {n: np.interp(record.t, tt, traj[n]) for n in _ACT_CHANNELS}


def platform_model_channels(params: H.ActuatorParams, config: H.RigConfig,
                            record: RigRecord, initial: np.ndarray | None = None
                            ) -> dict[str, np.ndarray]:
    """Simulate the hexapod on the record's commanded pose; leg lengths and pressures."""
    c = record.columns
    pose = np.column_stack([c[k] for k in ("cmd_x", "cmd_y", "cmd_z", "cmd_roll", "cmd_pitch",
                                           "cmd_yaw")])
    traj = H.simulate_hexapod(config.hexapod, params, H.Command(t=record.t, pose=pose),
                              solver=config.solver, t_end=float(record.t[-1]))
    out = {}
    for k in range(6):
        out[f"len_{k + 1}"] = np.interp(record.t, traj.t, traj.actuator("length", k))
        out[f"p_A_{k + 1}"] = np.interp(record.t, traj.t, traj.actuator("p_A", k))
    return out


def noise_of(channel: str, settings: IdentifySettings) -> float:
    """Stated noise standard deviation of a record channel [channel unit]
    (``[identify.noise]``, else the default of its kind)."""
    base = channel
    for prefix in ("len", "p_A", "p_B"):
        if channel.startswith(prefix):
            base = prefix
    return settings.noise.get(base, _DEFAULT_NOISE[base])


def parameter_boxes(config: H.RigConfig, settings: IdentifySettings
                    ) -> tuple[tuple[str, ...], np.ndarray, np.ndarray, np.ndarray]:
    """Names, start values and boxes ``(lower, upper)`` [SI] of the fitted parameters.

    Boxes: ``[identify.bounds]``, else start/5 .. start*5 (0 .. 0.05 s for the delay,
    0 .. 1e-10 for a leakage). A start on (or next to) a bound is moved 5 % of the box
    inside: trust-region steps and finite differences stall on the bound.
    """
    names = settings.parameters
    start = np.array([getattr(config.actuator, n) for n in names], float)
    lo, hi = [], []
    for n, s0 in zip(names, start):
        if n in settings.bounds:
            b = settings.bounds[n]
        elif n == "transport_delay":
            b = (0.0, 0.05)
        elif n in ("internal_leakage", "external_leakage"):
            b = (0.0, 1e-10)
        else:
            b = (s0 / 5.0, s0 * 5.0) if s0 > 0 else (0.0, 1.0)
        lo.append(b[0])
        hi.append(b[1])
    lo, hi = np.array(lo), np.array(hi)
    start = np.clip(start, lo + 0.05 * (hi - lo), hi - 0.05 * (hi - lo))
    return tuple(names), start, lo, hi


#: Nuisance parameters of an actuator record (initial piston position and chamber pressures)
#: and their SI units.
NUISANCE = {"initial_x_p": "m", "initial_p_A": "Pa", "initial_p_B": "Pa"}
# half-widths of their boxes around the record's first samples: 20 mm and 2 MPa, several
# hundred noise levels (effectively unbounded); pressures stay >= 0
_NUISANCE_HALF = np.array([0.02, 2e6, 2e6])


def nuisance_parameters(record: RigRecord, kind: str
                        ) -> tuple[tuple[str, ...], np.ndarray, np.ndarray, np.ndarray]:
    """Names, start values and boxes of the nuisance parameters of a record (none for a
    platform record): the mean of the first three piston positions and the first pressures."""
    if kind != "actuator":
        return (), np.zeros(0), np.zeros(0), np.zeros(0)
    c = record.columns
    x0 = np.array([np.mean(c["x_p"][:3]), c["p_A"][0], c["p_B"][0]], float)
    lo = x0 - _NUISANCE_HALF
    lo[1:] = np.maximum(lo[1:], 0.0)
    return tuple(NUISANCE), x0, lo, x0 + _NUISANCE_HALF


def record_channels(record: RigRecord, kind: str) -> list[str]:
    """The measured channels of a record that enter the residual, in order.

    Raises
    ------
    DataError
        A channel with a missing or non-finite value.
    """
    channels = ([c for c in _ACT_CHANNELS if c in record.columns] if kind == "actuator"
                else [f"len_{k}" for k in range(1, 7)]
                + [f"p_A_{k}" for k in range(1, 7) if f"p_A_{k}" in record.columns])
    for c in channels:
        if not np.isfinite(record.columns[c]).all():
            raise DataError("missing or non-finite value", key=c)
    return channels


class RigResidual:
    """``model - record`` of a batch of parameter vectors, channel after channel.

    Parameters
    ----------
    config
        The rig configuration (start values of every actuator parameter).
    record
        The rig record.
    kind
        ``"actuator"`` or ``"platform"``.
    names
        Order of a parameter vector: fitted actuator parameters, then the nuisance ones of
        :func:`nuisance_parameters` (if any).
    channels
        Measured channels (:func:`record_channels`).

    Calling it with ``(n, len(names))`` returns ``(n, len(channels) * len(record.t))``
    [channel units]; :meth:`channels_of` gives the simulated channels of one vector.
    """

    def __init__(self, config: H.RigConfig, record: RigRecord, kind: str,
                 names: Sequence[str], channels: Sequence[str]) -> None:
        if kind == "platform" and config.hexapod is None:
            raise InputError("a platform identification needs a [hexapod] table", key="hexapod")
        self.config, self.record, self.kind = config, record, kind
        self.names = tuple(names)
        self.channels = tuple(channels)
        self._model = actuator_model_channels if kind == "actuator" else platform_model_channels
        self._nuisance = [self.names.index(n) for n in NUISANCE if n in self.names]
        self._physical = [k for k, n in enumerate(self.names) if n not in NUISANCE]
        self._meas = np.concatenate([record.columns[c] for c in self.channels])

    @property
    def n_residuals(self) -> int:
        return self._meas.size

    def channels_of(self, row: np.ndarray) -> dict[str, np.ndarray]:
        """Simulated channels at the record times for one parameter vector [SI]."""
        params = self.config.actuator.replace(
            **{self.names[k]: float(row[k]) for k in self._physical})
        init = row[self._nuisance] if self._nuisance else None
        return self._model(params, self.config, self.record, init)

    def __call__(self, params: np.ndarray) -> np.ndarray:
        params = np.atleast_2d(np.asarray(params, float))
        out = np.empty((params.shape[0], self._meas.size))
        for i, row in enumerate(params):
            sim = self.channels_of(row)
            out[i] = np.concatenate([sim[c] for c in self.channels]) - self._meas
        return out


def identifiability_report(names: Sequence[str], theta: np.ndarray, cov: np.ndarray,
                           jac: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> dict:
    """What a record separates (module docstring).

    Parameters
    ----------
    names, theta, cov
        Fitted parameters, their estimates [SI] and covariance [SI_i SI_j] (nuisance
        parameters integrated out).
    jac
        ``(m, len(names))`` Jacobian of the noise-weighted residuals [1 / SI].
    lower, upper
        The boxes [SI].
    """
    norms = np.linalg.norm(jac, axis=0)
    jn = jac / np.where(norms > 0, norms, 1.0)
    sv = np.linalg.svd(jn, compute_uv=False)
    rank = int(np.sum(sv > 1e-6 * sv[0])) if sv.size else 0
    se = np.sqrt(np.clip(np.diag(cov), 0, None))
    corr = cov / np.outer(np.where(se > 0, se, 1), np.where(se > 0, se, 1))
    pairs = []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            if abs(corr[i, j]) > RHO_LIMIT:
                pairs.append([names[i], names[j], float(corr[i, j])])
    rel = se / np.maximum(np.abs(theta), 1e-300)
    poor = [nm for nm, rv, nr in zip(names, rel, norms) if rv > REL_SE_LIMIT or nr == 0]
    at_bound = [nm for nm, v, a, b in zip(names, theta, lower, upper)
                if min(v - a, b - v) < 1e-6 * (b - a)]
    not_sep = sorted(set([p for pr in pairs for p in pr[:2]] + poor))
    return {
        "fisher_rank": rank, "n_parameters": len(names),
        "singular_values_normalised": sv.tolist(),
        "condition_number": float(sv[0] / sv[-1]) if sv[-1] > 0 else math.inf,
        "correlation": {"names": list(names), "matrix": corr.tolist()},
        "confounded_pairs": pairs, "poorly_determined": poor, "at_bound": at_bound,
        "not_separable": not_sep,
        "criteria": f"|rho| > {RHO_LIMIT}, relative stderr > {REL_SE_LIMIT}, "
                    "singular value < 1e-6 of the largest (normalised columns)",
    }


METHOD = ("output-error least squares on the noise-weighted channel residuals "
          "(identification.engines.least_squares, trust-region reflective, uniform priors on the "
          "boxes), noise re-estimated per channel from the residuals and refitted once; "
          "intervals = central quantiles of the Laplace posterior at the optimum (Gaussian "
          "with the inverse Fisher information (J^T J)^-1, clipped to the boxes); map = "
          "estimate; nuisance initial conditions (actuator records) marginalised")


def identify_rig(config, record, *, seed: int = 0, diff_step: float = 1e-5,
                 n_draws: int = 4000, params=None, intervals: str = "laplace",
                 profile: Sequence[str] | None = None) -> Result:
    """Fit the ``[identify]`` parameters of a rig configuration to a rig record
    (:mod:`identification.rig`).

    Parameters
    ----------
    config : models.hydraulic.RigConfig
        Start values of the actuator parameters and the ``[identify]`` table.
    record : identification.rig.RigRecord
        The record, in SI.
    seed
        Seed of the Laplace draws.
    diff_step
        Finite-difference step of the Jacobian, as a fraction of each box's spread.
    n_draws
        Laplace draws behind the intervals.
    params : lmfit.Parameters, optional
        Start values, bounds (``min``, ``max``) and ``vary`` of any of the fitted parameters
        (the ``[identify]`` ones and, for an actuator record, the nuisance ones of
        :data:`NUISANCE`), replacing the configuration's
        (:func:`identification.lmfit_bridge.apply_parameters`); ``vary = False`` holds one.
    intervals
        ``"laplace"``, or ``"profile"``: also the profile-likelihood intervals of the
        ``[identify]`` parameters, the nuisance ones refitted at every point
        (:func:`identification.lmfit_bridge.profile_intervals`).
    profile
        With ``"profile"``: the ``[identify]`` parameters to profile (default: every free
        one).

    Returns
    -------
    Result
        Kind ``"rig"``: ``parameters`` (the fitted actuator parameters, uniform priors on
        their boxes; with ``intervals="profile"`` also ``profile_ci68``, ``profile_ci95``,
        ``profile_parabolic``, and ``diagnostics.profile``); ``result.params`` (every fitted
        parameter as :class:`lmfit.Parameters`, Laplace ``stderr`` and ``correl``) and
        ``result.fit_report()``; ``diagnostics`` with the engines' entries and ``success``,
        ``message``, ``nfev``, ``cost``, ``n_samples``, ``channels``, ``noise_sigma_start``,
        ``noise_sigma_estimated``, ``residual_rms`` (per channel), ``kind`` and ``nuisance``
        (the fitted initial conditions of an actuator record); sections ``record_kind``,
        ``method`` and ``identifiability``
        (:func:`identification.rig.identifiability_report`); the table ``fitted.parquet``
        (``t``, each channel and its ``_fit``).
    """
    import pandas as pd


    if intervals not in INTERVALS:
        raise InputError(f"unknown intervals {intervals!r} ({' or '.join(INTERVALS)})",
                         key="intervals")
    settings = IdentifySettings.from_dict(config.identify)
    names, start, lo, hi = parameter_boxes(config, settings)
    nui, nui0, nlo, nhi = nuisance_parameters(record, settings.kind)
    channels = record_channels(record, settings.kind)
    residual = RigResidual(config, record, settings.kind, names + nui, channels)
    n = record.t.size
    groups = {c: slice(k * n, (k + 1) * n) for k, c in enumerate(channels)}
    sigma = np.concatenate([np.full(n, noise_of(c, settings)) for c in channels])
    units = [FITTABLE[nm] for nm in names] + [NUISANCE[nm] for nm in nui]
    space = box_space(names + nui, units, np.r_[start, nui0],
                   list(zip(np.r_[lo, nlo], np.r_[hi, nhi])))
    space = apply_parameters(space, params)
    profile = check_profile_names(space, profile, names)
    problem = ResidualProblem(space, residual, residual.n_residuals, sigma=sigma,
                              groups=groups)
    fit_kw = dict(starts=0, max_nfev=settings.max_nfev, diff_step=diff_step, x_scale="jac",
                  kind="rig")
    first = least_squares(problem, first_guess=space.start(), origin="start values",
                          **fit_kw)
    # the noise of each channel from the residuals, and one refit with it
    problem = reweight(problem, first)
    result = least_squares(problem, first_guess=first.x_opt,
                           origin="refit with the estimated noise", **fit_kw)
    result.diagnostics["noise"] = first.diagnostics["noise"]
    result.seed = seed
    laplace(problem, result, rng=np.random.default_rng(seed), diff_step=diff_step,
            n_draws=n_draws)
    post = result.posterior
    summary = summarize(space, post.samples, post.x_map, post.stderr)
    result.parameters = {nm: summary[nm] for nm in names}
    # the fitted physical parameters (a parameter held by ``params`` is neither fitted nor
    # judged for identifiability)
    phys = [j for j, nm in enumerate(space.free_names) if nm in names]
    ident = identifiability_report([space.free_names[j] for j in phys], post.x_map[phys],
                                   post.covariance[np.ix_(phys, phys)],
                                   result.jacobian[:, phys], space.lower[phys],
                                   space.upper[phys])
    full_opt = dict(zip(space.names, space.full(result.x_opt[None, :])[0]))
    result.params = result_parameters(space, result)
    result.lmfit_result = minimizer_result(
        problem, result, result.params,
        method="output-error least squares (trust-region reflective)")
    if intervals == "profile":
        attach_profile(result, profile_intervals(
            problem, result,
            profile if profile is not None else [nm for nm in names if nm in space.free_names]))
    final = residual.channels_of(space.full(result.x_opt[None, :])[0])
    meas = {c: record.columns[c] for c in channels}
    best = result.best
    noise = result.diagnostics["noise"]
    result.diagnostics.update({
        "success": bool(best.success), "message": best.message,
        "nfev": int(sum(s.nfev for s in result.starts)),
        "forward_runs": int(problem.n_evaluations),
        "cost": float(best.cost), "n_samples": int(n), "channels": channels,
        "noise_sigma_start": noise["sigma_start"],
        "noise_sigma_estimated": noise["sigma_estimated"],
        "residual_rms": {c: float(np.sqrt(np.mean((final[c] - meas[c]) ** 2)))
                         for c in channels},
        "kind": settings.kind,
        "nuisance": {nm: float(full_opt[nm]) for nm in nui}})
    result.sections.update({"record_kind": settings.kind, "method": METHOD,
                            "identifiability": ident})
    table = {"t": record.t}
    for c in channels:
        table[c] = meas[c]
        table[c + "_fit"] = final[c]
    table_units = {c: RECORD_UNITS.get(c.removesuffix("_fit"), "") for c in table}
    result.tables["fitted.parquet"] = (pd.DataFrame(table), table_units)
    result.settings.update({"identify": {"kind": settings.kind,
                                         "parameters": list(settings.parameters),
                                         "bounds": {k_: list(v) for k_, v in
                                                    settings.bounds.items()},
                                         "noise": dict(settings.noise),
                                         "max_nfev": settings.max_nfev},
                            "diff_step": diff_step, "n_draws": n_draws,
                            "intervals": intervals, "profile": profile})
    return result
