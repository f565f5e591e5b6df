"""Generate the synthetic resonance-test records of this directory from stated truth.

Run ``python -m telemetry_samples.resonance.generate`` (seeded; rewrites every file). Each case
is one mode ``mu x'' + H(x') + phi(x) = F(t)`` (:class:`models.oscillator.SingleModeOscillator`,
RK4 at 256 steps per period, recorded at 32 samples per period) driven at constant frequency
``nu`` with a slowly growing amplitude, ``F = e(t) sin(nu t)``,
``e(t) = e_min (e_max/e_min)^(t/T)`` (exponential ramp: the same relative rate everywhere,
about 0.04 per damping time constant) or, for the preload cases, ``e`` programmed for a
geometric amplitude sweep ``b_min -> b_max`` (:func:`ramp`); a half-cosine taper over the first
6 periods avoids a start-up drift. Gaussian noise (seeded) is added to ``x`` and ``force``.

Files: ``<case>.csv`` with columns ``t[s], x[mm], force[N]`` and ``<case>.truth.json``
(``{"parameters": {...}, "description": ...}``). The two-mode case ``two_mode_l3.csv`` has
``t[s], x_p[mm], x_s[mm], force[N]`` and a sweep of force levels (see :func:`two_mode`).
The added-mass pair ``added_mass_a.csv`` (the mode) and ``added_mass_b.csv`` (with
``delta_mass`` attached, driven at ``nu_b``) share ``added_mass.truth.json``. ``coupling_l3.csv`` is the two-mode record in physical
coordinates ``q1, q2`` (``q = PHI [x_p, x_s]``), with ``coupling_l3.modes.toml`` (the modal
matrix and mode s's own characteristics) and ``coupling_l3.truth.json``.
"""
from __future__ import annotations

import json
from math import pi
from pathlib import Path

import numpy as np

from identification.resonance.laws import damping_law, discontinuities, restoring_law

from models.oscillator import SingleModeOscillator, TwoModeSystem

__all__ = ["CASES", "ADDED_MASS", "PHI", "coupling_record", "added_mass_cases", "restoring_truth", "damping_truth",
           "discontinuities", "simulate_case", "two_mode", "main"]

HERE = Path(__file__).resolve().parent
SPP_SIM, STRIDE, PERIODS, TAPER = 256, 8, 200, 6
NOISE_X, NOISE_F = 2e-6, 2e-3  # [m], [N] standard deviations

# name: parameters (SI). kind of restoring force and damping in "phi" and "H".
CASES = {
    "dead_zone": dict(phi="dead_zone", H="linear", mass=2.0, g=2000.0, delta=0.01, h=5.0,
                      nu=35.0, e_min=3.0, e_max=60.0, seed=1),
    "preload": dict(phi="preload", H="linear", mass=2.0, c=800.0, F0=2.0, h=15.0, nu=18.0,
                    b_min=0.004, b_max=0.05, seed=2),
    "asymmetric": dict(phi="asymmetric", H="linear", mass=2.0, c=800.0, d=100.0, h=4.0,
                       nu=16.0, e_min=0.75, e_max=15.0, seed=3),
    "quadratic_damping": dict(phi="preload", H="quadratic", mass=2.0, c=800.0, F0=2.0,
                              kappa=20.0, nu=18.0, b_min=0.006, b_max=0.05, seed=4),
    # low damping and nu below the hardening backbone's limit: the amplitude jumps from the
    # lower to the upper branch of the amplitude-frequency curve during the ramp
    "jump": dict(phi="dead_zone", H="linear", mass=2.0, g=2000.0, delta=0.01, h=5.0, nu=28.0,
                 e_min=1.25, e_max=25.0, seed=5),
}


# added-mass method (digest B.6): the preload mode without (A) and with (B) an added mass
# DM at its reference point (rho = 1), B driven at nu_A sqrt(mu / (mu + DM)) so that both
# tests sit equally far from their own resonance
ADDED_MASS = dict(CASES["preload"], seed=7, delta_mass=0.2, rho=1.0)


def added_mass_cases(p: dict = ADDED_MASS) -> dict:
    """The two cases (``"a"``, ``"b"``) of the added-mass records."""
    a = {k: v for k, v in p.items() if k not in ("delta_mass", "rho")}
    m = p["mass"] + p["rho"] ** 2 * p["delta_mass"]
    b = dict(a, mass=m, nu=p["nu"] * (p["mass"] / m) ** 0.5, seed=p["seed"] + 1)
    return {"a": a, "b": b}


# the laws live with the identification (the report compares against them by name)
restoring_truth = restoring_law
damping_truth = damping_law



def _tables(p):
    L, V = 1.0, 10.0
    if p["phi"] == "dead_zone":
        g, d = p["g"], p["delta"]
        phi = (np.array([-L, -d, d, L]), np.array([-g * (L - d), 0.0, 0.0, g * (L - d)]))
    elif p["phi"] == "preload":
        F0, c = p["F0"], p["c"]
        phi = (np.array([-L, 0.0, 0.0, L]), np.array([-F0 - c * L, -F0, F0, F0 + c * L]))
    else:
        c, d = p["c"], p["d"]
        phi = (np.array([-L, 0.0, L]), np.array([-(c - d) * L, 0.0, (c + d) * L]))
    if p["H"] == "linear":
        H = (np.array([-V, V]), np.array([-p["h"] * V, p["h"] * V]))
    else:
        v = np.linspace(-V, V, 4001)  # node spacing 5 mm/s: table error < 1e-5 relative
        H = (v, p["kappa"] * v * np.abs(v))
    return phi, H


def _force_amplitude_for(p: dict, b: np.ndarray) -> np.ndarray:
    """First-approximation force amplitude that holds amplitude ``b`` at ``nu`` [N]:
    ``e^2 = [mu (omega^2(b) - nu^2) b]^2 + (lambda nu b)^2`` with ``omega^2``, ``lambda`` from
    the forward relations (F1), (F5) of the truth (digest B.4)."""
    from identification.resonance.analytic import forward_quadrature

    mu, nu = p["mass"], p["nu"]
    w2 = forward_quadrature("omega2", restoring_truth(p), b, mu=mu)
    lam = forward_quadrature("lambda_H", damping_truth(p), b * nu)
    return np.hypot(mu * (w2 - nu * nu) * b, lam * nu * b)


def ramp(p: dict, periods: int = PERIODS):
    """The force ``F(t)`` [N] of a case.

    With ``b_min, b_max`` in the case the force amplitude is programmed so that the response
    amplitude grows geometrically from ``b_min`` to ``b_max`` (by the first approximation of
    the truth; this keeps the relative amplitude rate small where ``e(b)`` is steep, e.g. just
    above the breakaway force of a preload). Otherwise ``e`` grows exponentially from
    ``e_min`` to ``e_max``.
    """
    nu = p["nu"]
    T = periods * 2 * pi / nu
    t_on = TAPER * 2 * pi / nu
    if "b_min" in p:
        tt = np.linspace(0.0, T, 2001)
        ee = _force_amplitude_for(p, p["b_min"] * (p["b_max"] / p["b_min"]) ** (tt / T))
        amp = lambda t: np.interp(t, tt, ee)  # noqa: E731
    else:
        rate = np.log(p["e_max"] / p["e_min"]) / T
        amp = lambda t: p["e_min"] * np.exp(rate * t)  # noqa: E731

    def force(t):
        t = np.asarray(t, float)
        taper = np.where(t < t_on, 0.5 * (1 - np.cos(np.pi * t / t_on)), 1.0)
        return amp(t) * np.sin(nu * t) * taper

    return force


def simulate_case(p: dict, periods: int = PERIODS, noise: bool = True):
    """Simulate a case; returns ``t`` [s], ``x`` [m], ``force`` [N] (noisy when ``noise``)."""
    phi, H = _tables(p)
    osc = SingleModeOscillator(p["mass"], phi, H)
    P = 2 * pi / p["nu"]
    F = ramp(p, periods)
    t, x, _ = osc.simulate(F, t0=0.0, h=P / SPP_SIM, n_steps=SPP_SIM * periods, stride=STRIDE)
    f = F(t)
    if noise:
        rng = np.random.default_rng(p["seed"])
        x = x + NOISE_X * rng.standard_normal(len(t))
        f = f + NOISE_F * rng.standard_normal(len(t))
    return t, x, f


# two-mode system for the non-own resonance l = 3 (digest B.8): f_sp = beta x^3 + gamma x^5
TWO_MODE = dict(mu_p=1.0, gamma_p=400.0, h_p=2.0, mu_s=1.5, gamma_s=1.5 * 900.0, h_s=3.0,
                coupling={3: 2.0e5, 5: -1.0e8}, l=3, e_min=0.3, e_max=6.0, periods=240,
                seed=6)


def two_mode(p: dict = TWO_MODE, noise: bool = True):
    """Two-mode record driven on mode p at ``nu_p = omega_s / l`` with an exponential ramp.

    Returns ``t`` [s], ``x_p`` [m], ``x_s`` [m], ``force`` [N].
    """
    sys = TwoModeSystem(p["mu_p"], p["gamma_p"], p["h_p"], p["mu_s"], p["gamma_s"], p["h_s"],
                        p["coupling"])
    omega_s = np.sqrt(p["gamma_s"] / p["mu_s"])
    nu = omega_s / p["l"]
    q = dict(nu=nu, e_min=p["e_min"], e_max=p["e_max"])
    F = ramp(q, p["periods"])
    P = 2 * pi / nu
    t, y = sys.simulate(F, t0=0.0, h=P / SPP_SIM, n_steps=SPP_SIM * p["periods"],
                        stride=2 * STRIDE)  # 16 samples per period of nu_p: file < 250 kB
    xp, xs, f = y[:, 0], y[:, 2], F(t)
    if noise:
        rng = np.random.default_rng(p["seed"])
        xp = xp + NOISE_X * rng.standard_normal(len(t))
        xs = xs + 1e-8 * rng.standard_normal(len(t))
        f = f + NOISE_F * rng.standard_normal(len(t))
    return t, xp, xs, f


#: modal matrix of the coupling record: physical coordinates q = PHI [x_p, x_s]
PHI = [[1.0, 0.8], [0.5, -1.5]]


def coupling_record(p: dict = TWO_MODE):
    """The two-mode record in physical coordinates ``q = PHI X``: ``t`` [s], ``q`` ``(n, 2)``
    [m], the modal excitation force of mode p [N]."""
    t, xp, xs, f = two_mode(p)
    return t, np.c_[xp, xs] @ np.asarray(PHI).T, f


def _write_coupling(p: dict = TWO_MODE) -> None:
    from recon.io import write_json

    t, q, f = coupling_record(p)
    _write_csv(HERE / "coupling_l3.csv", [("t", "s"), ("q1", "mm"), ("q2", "mm"),
                                          ("force", "N")], [t, q[:, 0] * 1e3, q[:, 1] * 1e3, f])
    ws = (p["gamma_s"] / p["mu_s"]) ** 0.5
    (HERE / "coupling_l3.modes.toml").write_text(
        "# modes of coupling_l3.csv (SI): q = modal_matrix @ [x_p, x_s]\n"
        f"modal_matrix = {PHI}\n"
        'coordinates = ["q1", "q2"]\n'
        "p = 0  # excited mode (column of the modal matrix)\n"
        "s = 1  # observed mode\n"
        f"order = {p['l']}  # superharmonic resonance l nu_p = omega_s\n"
        f"frequency = {ws / p['l']!r}  # nu_p [rad/s]\n\n"
        "[mode_s]  # own characteristics of mode s (linear)\n"
        f"mass = {p['mu_s']!r}  # [kg]\n"
        f"stiffness = {p['gamma_s']!r}  # [N/m]\n"
        f"damping = {p['h_s']!r}  # [N s/m]\n")
    write_json({"parameters": {f"beta_{k}": v for k, v in p["coupling"].items()},
                "two_mode": dict(p), "modal_matrix": PHI,
                "description": "f_sp(x_p) = sum beta_k x_p^k; the two-mode record of "
                               "two_mode_l3.csv seen in the coordinates q = PHI [x_p, x_s]"},
               HERE / "coupling_l3.truth.json")


def _write_csv(path, header, cols):
    import pandas as pd

    from recon.io import write_table
    frame = pd.DataFrame({name: col for (name, _), col in zip(header, cols)})
    write_table(frame, path, units=dict(header))


def main() -> None:
    from recon.io import write_json
    for name, p in CASES.items():
        t, x, f = simulate_case(p)
        _write_csv(HERE / f"{name}.csv", [("t", "s"), ("x", "mm"), ("force", "N")],
                   [t, x * 1e3, f])
        write_json({"parameters": p, "periods": PERIODS, "samples_per_period": SPP_SIM // STRIDE,
                    "noise": {"x_m": NOISE_X, "force_N": NOISE_F},
                    "description": f"restoring force {p['phi']}, damping {p['H']}; "
                                   "mu x'' + H(x') + phi(x) = e(t) sin(nu t)"},
                   HERE / f"{name}.truth.json")
    for key, q in added_mass_cases().items():
        t, x, f = simulate_case(q)
        _write_csv(HERE / f"added_mass_{key}.csv", [("t", "s"), ("x", "mm"), ("force", "N")],
                   [t, x * 1e3, f])
    write_json({"parameters": {**ADDED_MASS, "nu_b": added_mass_cases()["b"]["nu"]},
                "records": {"a": "added_mass_a.csv", "b": "added_mass_b.csv"},
                "description": "the preload mode (mass = reduced mass mu) without (a) and with "
                               "(b) delta_mass at rho = 1; b driven at nu_b"},
               HERE / "added_mass.truth.json")
    t, xp, xs, f = two_mode()
    _write_csv(HERE / "two_mode_l3.csv", [("t", "s"), ("x_p", "mm"), ("x_s", "mm"), ("force", "N")],
               [t, xp * 1e3, xs * 1e3, f])
    write_json({"parameters": {k: v for k, v in TWO_MODE.items()},
                "description": "mu_p x_p'' + h_p x_p' + gamma_p x_p = x_s f'(x_p) + F(t); "
                               "mu_s x_s'' + h_s x_s' + gamma_s x_s = f(x_p); "
                               "f(x) = sum coupling[k] x^k; nu_p = omega_s / l"},
               HERE / "two_mode_l3.truth.json")
    _write_coupling()


if __name__ == "__main__":
    main()
