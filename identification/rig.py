"""Identification of the hydraulic test rig from rig records (seed digest
``hydraulic-actuator.md`` Section 8): output-error least squares with uncertainties and an
identifiability report.

Two record kinds:

* ``"actuator"``: one actuator on the bench. Channels ``t`` [s], ``u`` [V] (commanded valve
  signal), ``F_load`` [N] (optional, positive resists extension), and measured ``x_v`` [-]
  (spool LVDT, optional), ``p_A``, ``p_B`` [Pa], ``x_p`` [m]. The stand-alone model
  (:func:`models.hydraulic.simulate_actuator`, single-rate reference, robust update, smoothed dry
  friction) is driven by ``u`` and ``F_load`` from the record's first sample.
* ``"platform"``: the 6-DOF rig. Channels ``t``, commanded pose ``cmd_x``, ``cmd_y``, ``cmd_z``
  [m], ``cmd_roll``, ``cmd_pitch``, ``cmd_yaw`` [rad], measured leg lengths ``len_1..6`` [m] and
  chamber pressures ``p_A_1..6`` [Pa]. The coupled model (:func:`models.hydraulic.simulate_hexapod`)
  is re-run for each parameter vector; the transport delay of the valve commands is fitted.

Estimator
---------
Weighted residuals ``(model - record) / sigma_c`` per channel are minimised with
``scipy.optimize.least_squares`` (trust-region reflective, bounds, parameters scaled by their
start values). ``sigma_c`` starts from ``[identify.noise]`` and is re-estimated from the
residuals of the fit (one refit with the estimated noise). The covariance is the inverse Fisher
information ``(J^T J)^-1`` of the weighted residuals at the optimum (Gauss-Newton, linearised).
Reported ``map`` = least-squares estimate; ``median`` = the same value (the linearised
posterior under a flat prior is Gaussian, so median = mode); ``ci68`` / ``ci95`` = ``map +/- 1``
and ``+/- 1.96`` standard errors; ``prior`` = the uniform box of the fit bounds.

Identifiability: the Jacobian columns are normalised, the singular values of the normalised
Fisher matrix give its numerical rank, and pairs with ``|rho| > 0.95`` or parameters whose
relative standard error exceeds 50 % are listed as not separable by this record.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
from scipy.optimize import least_squares

from models import hydraulic as H
from models.errors import DataError, InputError

__all__ = ["FITTABLE", "RECORD_UNITS", "METHOD", "IdentifySettings", "RigRecord", "RigFit",
           "identify_rig", "result_document",
           "actuator_model_channels", "platform_model_channels"]

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
        allowed = {"kind", "parameters", "bounds", "noise", "max_nfev"}
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
            if n not in FITTABLE or not isinstance(b, list) or len(b) != 2 or not b[0] < b[1]:
                raise InputError("expected NAME = [lower, upper] with lower < upper",
                                 key=f"identify.bounds.{n}")
            bounds[n] = (float(b[0]), float(b[1]))
        noise = {}
        for n, v in dict(d.get("noise", {})).items():
            if n not in _DEFAULT_NOISE or not isinstance(v, (int, float)) or not v > 0:
                raise InputError(f"expected a positive sigma for one of {list(_DEFAULT_NOISE)}",
                                 key=f"identify.noise.{n}")
            noise[n] = float(v)
        return cls(kind, tuple(names), bounds, noise, int(d.get("max_nfev", 200)))


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
                raise InputError(f"missing column of a '{kind}' record", source=source, key=n)
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


@dataclass(frozen=True)
class RigFit:
    """Result of :func:`identify_rig`: estimates, covariance and diagnostics."""

    names: tuple[str, ...]
    estimate: np.ndarray
    covariance: np.ndarray
    units: tuple[str, ...]
    bounds: tuple[tuple[float, float], ...]
    identifiability: dict
    diagnostics: dict
    fitted: dict

    def parameters(self) -> dict:
        """The project's ``parameters`` schema (map, median, ci68, ci95, unit, prior, stderr)."""
        out = {}
        se = np.sqrt(np.clip(np.diag(self.covariance), 0, None))
        for k, name in enumerate(self.names):
            m = float(self.estimate[k])
            s = float(se[k])
            out[name] = {"map": m, "median": m, "ci68": [m - s, m + s],
                         "ci95": [m - 1.959964 * s, m + 1.959964 * s], "unit": self.units[k],
                         "prior": {"type": "uniform", "bounds": list(self.bounds[k])},
                         "stderr": s}
        return out


def _sim_time(record: RigRecord, dt: float) -> tuple[float, int]:
    t_end = float(record.t[-1])
    return t_end, int(round(t_end / dt))


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


def _noise_of(channel: str, settings: IdentifySettings) -> float:
    base = channel
    for prefix in ("len", "p_A", "p_B"):
        if channel.startswith(prefix):
            base = prefix
    return settings.noise.get(base, _DEFAULT_NOISE[base])


def identify_rig(config: H.RigConfig, record: RigRecord, *, progress=None) -> RigFit:
    """Fit the ``[identify]`` parameters of ``config`` to ``record`` (see module docstring)."""
    settings = IdentifySettings.from_dict(config.identify)
    model = actuator_model_channels if settings.kind == "actuator" else platform_model_channels
    if settings.kind == "platform" and config.hexapod is None:
        raise InputError("a platform identification needs a [hexapod] table", key="hexapod")
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
    lo = np.array(lo)
    hi = np.array(hi)
    # a start on (or next to) a bound is moved 5 % of the box inside: trust-region steps and
    # finite differences stall on the bound
    start = np.clip(start, lo + 0.05 * (hi - lo), hi - 0.05 * (hi - lo))
    scale = np.where(np.abs(start) > 0, np.abs(start), hi - lo)
    # which measured channels enter the residual
    channels = ([c for c in _ACT_CHANNELS if c in record.columns] if settings.kind == "actuator"
                else [f"len_{k}" for k in range(1, 7)]
                + [f"p_A_{k}" for k in range(1, 7) if f"p_A_{k}" in record.columns])
    meas = {c: record.columns[c] for c in channels}
    for c in channels:
        if not np.isfinite(meas[c]).all():
            raise DataError("missing or non-finite value", key=c)
    sigma = {c: _noise_of(c, settings) for c in channels}

    # nuisance: the initial piston position and chamber pressures of an actuator record are
    # fitted too (taking the first noisy sample would bias every parameter)
    n_par = len(names)
    if settings.kind == "actuator":
        c0 = record.columns
        init0 = np.array([np.mean(c0["x_p"][:3]), c0["p_A"][0], c0["p_B"][0]])
        init_scale = np.array([1e-3, 1e5, 1e5])
    else:
        init0 = np.zeros(0)
        init_scale = np.zeros(0)
    n_nui = init0.size

    def params_of(z: np.ndarray) -> H.ActuatorParams:
        return config.actuator.replace(**{n: float(v) for n, v in zip(names, z[:n_par] * scale)})

    def init_of(z: np.ndarray):
        return init0 + z[n_par:] * init_scale if n_nui else None

    def resid(z: np.ndarray, sig: dict) -> np.ndarray:
        sim = model(params_of(z), config, record, init_of(z))
        return np.concatenate([(sim[c] - meas[c]) / sig[c] for c in channels])

    z0 = np.concatenate([start / scale, np.zeros(n_nui)])
    bounds = (np.concatenate([lo / scale, np.full(n_nui, -np.inf)]),
              np.concatenate([hi / scale, np.full(n_nui, np.inf)]))
    opts = dict(bounds=bounds, x_scale="jac", max_nfev=settings.max_nfev, diff_step=1e-5,
                ftol=1e-12, xtol=1e-12, gtol=1e-12)
    sol = least_squares(resid, z0, args=(sigma,), **opts)
    # re-estimate the noise per channel from the residuals and refit once
    n = record.t.size
    r = sol.fun
    sig_hat = {}
    for k, c in enumerate(channels):
        rc = r[k * n:(k + 1) * n] * sigma[c]
        sig_hat[c] = float(max(np.sqrt(np.mean(rc ** 2)), 1e-12))
    sol = least_squares(resid, sol.x, args=(sig_hat,), **opts)
    jac_all = np.asarray(sol.jac)             # d r / d z, z = theta / scale (well scaled)
    cov_all = np.linalg.pinv(jac_all.T @ jac_all, rcond=1e-13)
    # marginal covariance of the physical parameters (nuisance integrated out)
    cov = cov_all[:n_par, :n_par] * np.outer(scale, scale)
    jac = jac_all[:, :n_par]
    theta = sol.x[:n_par] * scale
    # identifiability on column-normalised Jacobian
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
    at_bound = [nm for nm, v, a, b in zip(names, theta, lo, hi)
                if min(v - a, b - v) < 1e-6 * (b - a)]
    not_sep = sorted(set([p for pr in pairs for p in pr[:2]] + poor))
    ident = {
        "fisher_rank": rank, "n_parameters": len(names),
        "singular_values_normalised": sv.tolist(),
        "condition_number": float(sv[0] / sv[-1]) if sv[-1] > 0 else math.inf,
        "correlation": {"names": list(names), "matrix": corr.tolist()},
        "confounded_pairs": pairs, "poorly_determined": poor, "at_bound": at_bound,
        "not_separable": not_sep,
        "criteria": f"|rho| > {RHO_LIMIT}, relative stderr > {REL_SE_LIMIT}, "
                    "singular value < 1e-6 of the largest (normalised columns)",
    }
    final = model(params_of(sol.x), config, record, init_of(sol.x))
    resid_rms = {c: float(np.sqrt(np.mean((final[c] - meas[c]) ** 2))) for c in channels}
    diag = {"success": bool(sol.success), "message": str(sol.message), "nfev": int(sol.nfev),
            "cost": float(sol.cost), "n_samples": int(n), "channels": channels,
            "noise_sigma_start": sigma, "noise_sigma_estimated": sig_hat,
            "residual_rms": resid_rms, "kind": settings.kind,
            "nuisance": ({"initial_x_p": float(init_of(sol.x)[0]),
                          "initial_p_A": float(init_of(sol.x)[1]),
                          "initial_p_B": float(init_of(sol.x)[2])} if n_nui else {})}
    fitted = {"t": record.t}
    for c in channels:
        fitted[c] = meas[c]
        fitted[c + "_fit"] = final[c]
    return RigFit(tuple(names), theta, cov, tuple(FITTABLE[n] for n in names),
                  tuple(zip(lo.tolist(), hi.tolist())), ident, diag, fitted)


METHOD = ("output-error weighted least squares (scipy.optimize.least_squares, trf); "
          "covariance = inverse Fisher information (J^T J)^-1 of the noise-weighted residuals "
          "at the optimum, noise re-estimated per channel from the residuals; map = estimate; "
          "median = map (linearised Gaussian posterior under the flat prior of the bounds); "
          "ci68 / ci95 = map -/+ 1 / 1.96 standard errors; nuisance initial conditions "
          "(actuator records) marginalised")


def result_document(fit: RigFit, config: H.RigConfig, *, record: str, config_path: str,
                    versions: Mapping[str, str]) -> dict:
    """The ``result.json`` document of a rig identification."""
    settings = IdentifySettings.from_dict(config.identify)
    return {
        "kind": "rig", "record_kind": settings.kind, "record": record, "config": config_path,
        "parameters": fit.parameters(), "method": METHOD,
        "identifiability": fit.identifiability, "diagnostics": fit.diagnostics,
        "settings": {"identify": dataclasses.asdict(settings),
                     "solver": dataclasses.asdict(config.solver)},
        "versions": dict(versions), "seed": None,
    }
