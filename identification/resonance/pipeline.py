"""Resonance-test identification end to end: the conditioned Abel inversion with its bands,
the refinement policy and the added-mass method (:func:`identify_resonance`, a
:class:`~identification.result.Result` of kind ``"resonance"``), and the cross-coupling from a
non-own resonance (:func:`identify_coupling_record`, kind ``"resonance_coupling"``). The
curves, bands and sequences are the result's sections; the caller writes it.

Refinement policy (:func:`refinement_policy`). The refinement (simulating the oscillator
against the whole record, :func:`identification.resonance.refine.refine_resonance`) removes the
first approximation's second-order bias, but it is a local fit that can also move a good estimate
somewhere worse (a preload's node next to 0 trades off against the preload itself). With
``refine="auto"`` (the default) it is run and **applied only when both** hold:

* it lowers the misfit to the record (RMS of simulated minus measured displacement over the
  fitted samples, after below before), and
* the refined restoring force and damping force stay within the 95 % bands of the Abel
  estimate (:func:`identification.resonance.own.bootstrap_bands`) wherever they were
  identified (measured amplitudes, gaps of jumps excluded).

Otherwise the Abel estimate is written. Either way OUT.json and the log say by how much the
refinement changed the curves ("refinement changed the restoring force by up to X %",
:func:`identification.resonance.refine.curve_change`). ``"always"`` applies it, ``"never"``
does not run it.

Added mass (:func:`added_mass`). Record A is the structure, record B the same structure with a
mass ``dm`` attached where the mode's amplitude is ``rho`` times its reference amplitude. At
an amplitude ``b`` measured in both, the restoring force's first harmonic is the same, so with
:math:`K(b) = e\\cos\\theta/b` (in-phase force per displacement, measured without knowing
:math:`\\mu`):

.. math::

    \\mu\\,\\nu_A^2 + K_A(b) = (\\mu + \\rho^2\\Delta m)\\,\\nu_B^2 + K_B(b)
    \\;\\Rightarrow\\;
    \\mu(b) = \\frac{\\rho^2\\Delta m\\,\\nu_B^2 + K_B(b) - K_A(b)}{\\nu_A^2 - \\nu_B^2}.

At phase resonance in both tests (``K = 0``, :math:`\\nu_A = \\omega`,
:math:`\\nu_B = \\omega'`) this is the exact form of (2.5),
:math:`\\mu = \\rho^2\\Delta m\\,\\omega'^2/(\\omega^2 - \\omega'^2)` (digest B.6), of which
(2.5) is the first-order expansion; away from it the in-phase terms correct it, so the two
tests need not be tuned to phase resonance, only run at two different frequencies. The
estimate is the median of :math:`\\mu(b)` over the common amplitudes, its intervals the
quantiles of a bootstrap over those amplitudes (whole nodes resampled) widened by the spread
of :math:`\\mu(b)` itself (a trend of :math:`\\mu(b)` with ``b`` is model error, and is kept
inside the interval rather than averaged away).
"""
from __future__ import annotations

import logging

import numpy as np

from identification.modes_schema import MODE_S, MODES
from identification.result import Result
from models.errors import DataError, InputError

__all__ = ["REFINE", "identify_resonance", "refinement_policy", "added_mass", "coupling_settings",
           "identify_coupling_record"]

log = logging.getLogger("dockrecon.resonance")

REFINE = ("auto", "always", "never")


def _grids(seq):
    return (np.linspace(-seq.b[-1], seq.b[-1], 201), np.linspace(0.0, seq.v[-1], 101))


def refinement_policy(curves, bands, refined, xs: np.ndarray, vs: np.ndarray) -> dict:
    """Whether the refinement ``refined`` (a ``resonance_refinement`` result) may replace the
    Abel estimate ``curves`` (module docstring), with the changes it makes.

    Returns
    -------
    dict
        ``lowers_misfit``, ``inside_bands``, ``applied`` (bool), ``change_restoring_percent``,
        ``change_damping_percent`` [%], ``rms_before_m``, ``rms_after_m`` [m], ``reason``.
    """
    from identification.resonance.refine import curve_change, damping_force, restoring_force

    c = refined.curves
    fx_ref = restoring_force(xs, c["x"], c["restoring"], c["preload"])
    hv_ref = damping_force(vs, c["v"], c["damping"], c["coulomb"])
    seq = curves.sequence
    fx, hv = curves.restoring_force(xs), curves.damping_force(vs)
    ax = np.abs(xs)
    mx = (ax >= seq.b[0]) & ~curves.interpolated(xs)
    mv = vs >= seq.v[0]
    inside_f = np.all((fx_ref[mx] >= bands.restoring[0][mx])
                      & (fx_ref[mx] <= bands.restoring[3][mx]))
    inside_h = np.all((hv_ref[mv] >= bands.damping[0][mv])
                      & (hv_ref[mv] <= bands.damping[3][mv]))
    ref = refined.refinement
    lowers = bool(ref["rms_after_m"] < ref["rms_before_m"])
    inside = bool(inside_f and inside_h)
    reasons = []
    if not lowers:
        reasons.append("it does not lower the misfit to the record")
    if not inside:
        reasons.append("it leaves the 95 % band of the "
                       + ("restoring force" if not inside_f else "damping force"))
    return {"lowers_misfit": lowers, "inside_bands": inside, "applied": lowers and inside,
            "change_restoring_percent": 100.0 * curve_change(fx_ref, fx),
            "change_damping_percent": 100.0 * curve_change(hv_ref[1:], hv[1:]),
            "rms_before_m": float(ref["rms_before_m"]),
            "rms_after_m": float(ref["rms_after_m"]),
            "reason": ("lowers the misfit and stays within the bands" if not reasons
                       else "; ".join(reasons)),
            "fx": fx_ref, "hv": hv_ref}


def identify_resonance(t: np.ndarray, x: np.ndarray, force: np.ndarray, nu: float, mu: float, *,
                       method: str = "product", below: str = "power", periods: int = 6,
                       skip: float | None = None, rel_step: float = 0.01,
                       refine: str = "auto", n_draws: int = 200, seed: int = 0,
                       offset: bool = True, added: dict | None = None) -> Result:
    """Identify one mode from a record.

    Parameters
    ----------
    t, x, force
        Record [s], [m], [N].
    nu
        Excitation frequency [rad/s].
    mu
        Reduced mass [kg].
    method, below, periods, skip, rel_step
        Quadrature, law below the first amplitude, periods per window, hold time [s],
        relative amplitude bin width
        (:func:`~identification.resonance.harmonics.amplitude_sequence`).
    refine
        ``"auto"``, ``"always"`` or ``"never"`` (module docstring).
    n_draws, seed
        Bootstrap replicates of the bands and their seed.
    offset
        Offset correction of the restoring force (:mod:`identification.resonance.offset`).
    added
        The added-mass identification of ``mu`` (:func:`added_mass`), when it was made:
        its reduced mass becomes the result's parameter and the whole analysis its section
        ``added_mass``.

    Returns
    -------
    Result
        Kind ``"resonance"``; sections ``restoring_force`` (``x`` [m], ``f`` [N],
        ``interpolated`` (bool per point: inside the gap of a jump), ``lo95``, ``lo68``,
        ``hi68``, ``hi95`` [N]), ``damping`` (``v`` [m/s], ``H`` [N], the same bands),
        ``amplitude_sequence`` (``b``, ``theta``, ``omega2``, ``lambda``, ``a0``,
        ``n_windows``), ``jumps`` (each with its ``gap``), ``gaps`` (``[b_lo, b_hi]`` [m]),
        ``bands``, ``refinement_policy``, with a refinement run its fit (``refinement``, the
        project's result schema), and ``added_mass`` when given; ``parameters`` the reduced
        mass when the added-mass method identified it; ``seed`` the bands' seed.
    """
    from identification.resonance.harmonics import amplitude_sequence
    from identification.resonance.own import bootstrap_bands, identify_own_resonance

    if refine not in REFINE:
        raise InputError(f"unknown refinement mode '{refine}' ({', '.join(REFINE)})",
                         key="refine")
    seq = amplitude_sequence(t, x, force, nu, mu, k=periods, skip=skip, rel_step=rel_step)
    kw = {"method": method, "below": below}
    curves = identify_own_resonance(seq, offset=offset, **kw)
    xs, vs = _grids(seq)
    bands = bootstrap_bands(curves, xs, vs, n_draws=n_draws, seed=seed, **kw)
    fx, hv = curves.restoring_force(xs), curves.damping_force(vs)
    policy = {"mode": refine, "applied": False, "reason": "not run (--refine never)"}
    refined = None
    if refine != "never":
        from identification.resonance.refine import refine_resonance

        # started from the first approximation without the offset correction: the polish is
        # sensitive to its start (on the shipped dead-zone record a 0.03 % change of the start
        # stops it at 3.5x the misfit), and this start is the one its tests measure
        start = identify_own_resonance(seq, offset=False, **kw)
        refined = refine_resonance(start, t, x, force, seed=seed)
        decision = refinement_policy(curves, bands, refined, xs, vs)
        fx_ref, hv_ref = decision.pop("fx"), decision.pop("hv")
        if refine == "always":
            decision["applied"] = True
            decision["reason"] = "applied on request (--refine always); " + decision["reason"]
        policy = {"mode": refine, **decision}
        if decision["applied"]:
            fx, hv = fx_ref, hv_ref
        log.info("refinement changed the restoring force by up to %.2f %% and the damping by "
                 "up to %.2f %%: %s (%s)", decision["change_restoring_percent"],
                 decision["change_damping_percent"],
                 "applied" if decision["applied"] else "not applied", decision["reason"])
    rb, db = bands.restoring, bands.damping
    sections = {
        "restoring_force": {"x": xs, "f": fx, "interpolated": curves.interpolated(xs),
                            "lo95": rb[0], "lo68": rb[1], "hi68": rb[2], "hi95": rb[3]},
        "damping": {"v": vs, "H": hv, "lo95": db[0], "lo68": db[1], "hi68": db[2],
                    "hi95": db[3]},
        "amplitude_sequence": {"b": seq.b, "theta": seq.theta, "omega2": seq.omega2,
                               "lambda": seq.lam, "a0": seq.a0, "n_windows": seq.n_windows},
        "jumps": [j.as_dict() for j in seq.jumps],
        "gaps": [[lo, hi] for lo, hi in seq.gaps],
        "bands": {"n_draws": bands.n_draws, "seed": bands.seed,
                  "method": bands.as_dict()["method"]},
        "refinement_policy": policy,
    }
    if refined is not None:  # the fit behind the refined curves, in the one result schema
        sections["refinement"] = {k: v for k, v in refined.to_dict().items()
                                  if k not in ("settings", "versions")}
    parameters = {}
    if added is not None:
        sections["added_mass"] = dict(added)
        parameters["reduced_mass"] = dict(added["reduced_mass"])
    for lo, hi in seq.gaps:
        log.warning("amplitude jump: no data between %.4g m and %.4g m; the forces there are "
                    "interpolated, not identified", lo, hi)
    return Result("resonance", tuple(parameters), parameters=parameters, seed=seed,
                  sections=sections)


def added_mass(a, b, dm: float, *, rho: float = 1.0, n_draws: int = 2000,
               seed: int = 0) -> dict:
    """Reduced mass [kg] from two amplitude sequences (module docstring).

    Parameters
    ----------
    a, b : identification.resonance.harmonics.AmplitudeSequence
        Without and with the added mass (their ``mu`` is not used).
    dm
        Added mass [kg].
    rho
        Amplitude at the attachment point over the reference amplitude [-].
    n_draws, seed
        Bootstrap replicates and seed.

    Returns
    -------
    dict
        ``reduced_mass`` in the parameter schema (``map``, ``median``, ``ci68``, ``ci95``,
        ``unit``, ``prior``, ``stderr``), ``per_amplitude`` (``b`` [m], ``mu`` [kg]),
        ``frequencies`` [rad/s], ``common_range`` [m].
    """
    if not (np.isfinite(dm) and dm > 0):
        raise InputError("must be a positive mass [kg]", key="--delta-mass")
    if not (np.isfinite(rho) and rho > 0):
        raise InputError("must be positive", key="--rho")
    if abs(a.nu - b.nu) < 1e-6 * a.nu:
        raise DataError("both records were taken at the same frequency: the added mass then "
                        "changes only the in-phase force, not the frequency, and the reduced "
                        "mass cannot be separated (run B nearer its own phase resonance)",
                        key="frequency")
    lo, hi = max(a.b[0], b.b[0]), min(a.b[-1], b.b[-1])
    sel = (a.b >= lo) & (a.b <= hi)
    for gap in a.gaps + b.gaps:
        sel &= ~((a.b > gap[0]) & (a.b < gap[1]))
    if sel.sum() < 5:
        raise DataError(f"the two records share fewer than 5 amplitudes ({lo:.4g} to "
                        f"{hi:.4g} m)", key="x")
    bb = a.b[sel]
    KA = (a.e * np.cos(a.theta) / a.b)[sel]
    KB = np.interp(bb, b.b, b.e * np.cos(b.theta) / b.b)
    m = rho * rho * dm
    mu_b = (m * b.nu ** 2 + KB - KA) / (a.nu ** 2 - b.nu ** 2)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(mu_b), size=(n_draws, len(mu_b)))
    boot = np.median(mu_b[idx], axis=1)
    med = float(np.median(mu_b))
    spread = np.percentile(mu_b, [2.5, 16, 84, 97.5])
    q = np.percentile(boot, [2.5, 16, 84, 97.5])
    ci95 = [float(min(q[0], spread[0])), float(max(q[3], spread[3]))]
    ci68 = [float(min(q[1], spread[1])), float(max(q[2], spread[2]))]
    return {"reduced_mass": {"map": med, "median": med, "ci68": ci68, "ci95": ci95,
                             "unit": "kg", "prior": {"kind": "derived"},
                             "stderr": float(np.std(boot, ddof=1))},
            "per_amplitude": {"b": bb, "mu": mu_b},
            "frequencies": {"without_rad_s": a.nu, "with_rad_s": b.nu},
            "common_range": [float(lo), float(hi)],
            "added_mass": {"delta_mass_kg": dm, "rho": rho},
            "method": "amplitude-matched in-phase balance of the two records; exact (2.5) at "
                      "phase resonance"}


#: keys of the modes file of ``identify resonance-coupling`` (SI), as declared
#: (:mod:`identification.modes_schema`)
MODES_KEYS = frozenset(MODES.names())
MODE_S_KEYS = frozenset(MODE_S.names())


def coupling_settings(d: dict) -> dict:
    """Validate the modes file of ``identify resonance-coupling`` (a plain dict, SI).

    Keys: ``modal_matrix`` (``N x N``, columns the mode shapes, ``q = Phi X``),
    ``coordinates`` (the N record columns of ``q``), ``p`` and ``s`` (excited and observed
    mode, 0-based columns), ``order`` (2 or 3), optional ``frequency`` [rad/s], and
    ``[mode_s]`` ``mass`` [kg], ``stiffness`` [N/m], ``damping`` [N s/m]. Unknown keys are
    errors; :class:`~models.errors.InputError` names the key.
    """
    unknown = set(d) - MODES_KEYS
    if unknown:
        raise InputError("unknown key", key=sorted(unknown)[0])
    for key in ("modal_matrix", "coordinates", "p", "s", "order", "mode_s"):
        if key not in d:
            raise InputError("missing", key=key)
    try:
        Phi = np.asarray(d["modal_matrix"], float)
    except (TypeError, ValueError):
        raise InputError("must be a square matrix of numbers", key="modal_matrix") from None
    n = Phi.shape[0] if Phi.ndim == 2 else 0
    if Phi.ndim != 2 or Phi.shape != (n, n) or n < 2 or not np.all(np.isfinite(Phi)):
        raise InputError("must be a finite square matrix, at least 2 x 2", key="modal_matrix")
    if abs(np.linalg.det(Phi)) < 1e-12 * np.abs(Phi).max() ** n:
        raise InputError("is singular: the quasi-normal coordinates are not defined",
                         key="modal_matrix")
    coords = d["coordinates"]
    if (not isinstance(coords, list) or len(coords) != n
            or not all(isinstance(c, str) for c in coords) or len(set(coords)) != n):
        raise InputError(f"must name {n} distinct record columns", key="coordinates")
    for key in ("p", "s"):
        if not isinstance(d[key], int) or not 0 <= d[key] < n:
            raise InputError(f"must be a mode index 0..{n - 1}", key=key)
    if d["p"] == d["s"]:
        raise InputError("must differ from p (a non-own resonance)", key="s")
    if d["order"] not in (2, 3):
        raise InputError("must be 2 or 3", key="order")
    ms = d["mode_s"]
    if not isinstance(ms, dict):
        raise InputError("must be a table", key="mode_s")
    unknown = set(ms) - MODE_S_KEYS
    if unknown:
        raise InputError("unknown key", key=f"mode_s.{sorted(unknown)[0]}")
    for key in sorted(MODE_S_KEYS):
        v = ms.get(key)
        if not isinstance(v, (int, float)) or not np.isfinite(v) or v < 0 or \
                (v == 0 and key != "damping"):
            raise InputError("must be a positive number (damping: >= 0)", key=f"mode_s.{key}")
    freq = d.get("frequency")
    if freq is not None and (not isinstance(freq, (int, float)) or not freq > 0):
        raise InputError("must be positive [rad/s]", key="frequency")
    return {"Phi": Phi, "coordinates": list(coords), "p": d["p"], "s": d["s"],
            "order": d["order"], "frequency": None if freq is None else float(freq),
            "mu_s": float(ms["mass"]), "gamma_s": float(ms["stiffness"]),
            "lam_s": float(ms["damping"])}


def identify_coupling_record(t: np.ndarray, q: np.ndarray, force: np.ndarray, settings: dict,
                             *, nu: float, powers=None, periods: int = 6,
                             skip: float | None = None, n_draws: int = 400,
                             seed: int = 0) -> Result:
    """Cross-coupling from a non-own resonance record in physical coordinates ``q``
    ``(n, N)`` [m]: quasi-normal coordinates ``X = Phi^-1 q`` (1.2), then
    :func:`identification.resonance.coupling.identify_coupling`. A
    :class:`~identification.result.Result` of kind ``"resonance_coupling"``: the coupling
    coefficients are its parameters; sections ``coupling`` (the fitted curve and the
    inverted nodes), ``harmonic`` (the measured one) and ``method``."""
    from identification.resonance.coupling import identify_coupling, to_quasinormal

    X = to_quasinormal(q, settings["Phi"])
    res = identify_coupling(t, X, force, p=settings["p"], s=settings["s"],
                            l=settings["order"], nu=nu, mu_s=settings["mu_s"],
                            gamma_s=settings["gamma_s"], lam_s=settings["lam_s"],
                            powers=powers, k=periods, skip=skip, n_draws=n_draws, seed=seed)
    xs = np.linspace(0.0, res["b_p"][-1], 101)
    coef = res["coefficients"]
    fitted = sum(c["map"] * xs ** int(k.split("_")[1]) for k, c in coef.items())
    return Result("resonance_coupling", tuple(coef), parameters=coef, seed=seed, sections={
        "coupling": {"x": xs, "f": fitted, "nodes_x": res["nodes"]["x"],
                     "nodes_f": res["nodes"]["f"]},
        "harmonic": {"b_p": res["b_p"], "f_spl": res["f_spl"], "l": res["l"]},
        "method": ("non-own resonance l nu_p = omega_s (digest B.8): f_spl = b_sl / B_sl "
                       "with the ramp's drift term, pointwise inversion ("
                       + ("(3.9)" if res["l"] == 2 else "Volterra (3.10)")
                       + ") and a relative least-squares fit of the powers "
                       + ", ".join(str(n) for n in res["powers"])
                   + " (intervals: block bootstrap and the drift of the lower-half fit)")})
