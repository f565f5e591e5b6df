"""Forward models with known answers for the reconstruction engines (shared by tests and the
subprocess of the resume test).

* :func:`linear_problem`: stroke(t) = a + b t + c sin(3 t) (+ d g(t), g zero on the record
  when ``unidentifiable``), Gaussian noise, normal priors -> the posterior is Gaussian with the
  closed form of :func:`linear_posterior`.
* :func:`flat_linear_problem`: ``d = A theta + e`` as a bare residual problem under wide
  flat priors -> a Gaussian posterior of closed-form mean and covariance, with the exact
  Jacobian.
* :func:`oscillator_problem`: free damped oscillation of the probe (stroke) with a contact flag
  (stroke > 0) and a clock offset; truth known, recovered from seeded data.
"""
from __future__ import annotations

import numpy as np

from recon.observation import ChannelModel, ObservationModel, Simulated
from identification.space import Parameter, ParameterSpace, Prior
from recon.problem import ReconstructionProblem, parameter_space
from identification.problem import ResidualProblem
from recon.telemetry import Telemetry

SIGMA = 0.01      # stroke noise [m]
PRIOR_SD = 1.0    # normal prior sd of each linear coefficient [m]
T_LIN = np.linspace(0.0, 2.0, 41)


def _basis(t, unidentifiable):
    cols = [np.ones_like(t), t, np.sin(3.0 * t)]
    if unidentifiable:
        cols.append(np.where(t > 2.5, t - 2.5, 0.0))  # acts only after the record ends
    return np.column_stack(cols)


def linear_forward(unidentifiable=False):
    t_sim = np.linspace(0.0, 3.0, 61)  # contains T_LIN exactly (step 0.05 s)

    def forward(params, names, t_end=None):
        A = _basis(t_sim, unidentifiable)
        return Simulated(t_sim, {"stroke": params @ A.T})

    return forward


def linear_problem(seed=1, truth=(0.3, -0.2, 0.5, 0.0), unidentifiable=False):
    k = 4 if unidentifiable else 3
    truth = np.asarray(truth[:k], float)
    rng = np.random.default_rng(seed)
    A = _basis(T_LIN, unidentifiable)
    y = A @ truth + rng.normal(0.0, SIGMA, T_LIN.size)
    tel = Telemetry.from_arrays(T_LIN, {"stroke": y}, source="linear")
    table = {n: {"prior": "normal", "mean": 0.0, "sd": PRIOR_SD, "unit": "m"}
             for n in "abc"}
    if unidentifiable:
        table["d"] = {"prior": "uniform", "lower": -1.0, "upper": 1.0, "unit": "m"}
    space = parameter_space(table)
    obs = ObservationModel((ChannelModel("stroke", SIGMA),))
    return ReconstructionProblem(linear_forward(unidentifiable), tel, space, obs), truth, A, y


def linear_posterior(A, y):
    """Closed-form posterior mean and covariance of the 3 linear coefficients (normal priors
    N(0, PRIOR_SD^2); the 6-sd truncation changes them by < 1e-8 relative)."""
    A = A[:, :3]
    P = A.T @ A / SIGMA ** 2 + np.eye(3) / PRIOR_SD ** 2
    cov = np.linalg.inv(P)
    return cov @ (A.T @ y / SIGMA ** 2), cov


def flat_linear_problem(k=8, m=120, seed=5):
    """``d = A theta + e`` with ``k`` parameters under wide flat priors: a Gaussian posterior
    with the closed-form mean and covariance. Returns the problem, the posterior mean and
    covariance, and the exact Jacobian (the residuals over their sigma)."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(m, k))
    truth = rng.normal(size=k)
    d = A @ truth + 0.5 * rng.standard_normal(m)
    space = ParameterSpace([Parameter(f"p{i}", "", float(v), Prior("uniform", -50.0, 50.0))
                            for i, v in enumerate(truth)])
    problem = ResidualProblem(space, lambda th: th @ A.T - d[None, :], m, sigma=0.5)
    J = A / 0.5
    cov = np.linalg.inv(J.T @ J)
    return problem, cov @ J.T @ (d / 0.5), cov, J


# ---- damped oscillator ---------------------------------------------------------------------
OSC_TRUTH = {"omega": 6.0, "zeta": 0.08, "x0": 0.05, "clock_offset": 0.037}
OSC_NAMES = ("omega", "zeta", "x0")


def oscillator_forward(params, names, t_end=None):
    """x(t) = x0 e^{-zeta w t} (cos wd t + zeta w / wd sin wd t), released from rest at t = 0
    (held at x0 before: the model's own state before the release, like the free flight
    before a docking's start plane)."""
    t = np.linspace(-0.5, 4.0, 4501)
    p = dict(zip(names, np.asarray(params).T))
    w, z, x0 = (p[n][:, None] for n in OSC_NAMES)
    wd = w * np.sqrt(1 - z ** 2)
    tp = np.maximum(t, 0.0)
    x = x0 * np.exp(-z * w * tp) * (np.cos(wd * tp) + z * w / wd * np.sin(wd * tp))
    return Simulated(t, {"stroke": x, "contact": (x > 0).astype(float)})


def oscillator_space():
    return parameter_space({
        "omega": {"prior": "uniform", "lower": 3.0, "upper": 10.0, "unit": "rad/s"},
        "zeta": {"prior": "lognormal", "median": 0.1, "sigma": 0.7},
        "x0": {"prior": "uniform", "lower": 0.01, "upper": 0.1, "unit": "m"},
        "clock_offset": {"prior": "normal", "mean": 0.0, "sd": 0.05, "unit": "s"},
    })


def oscillator_problem(seed=3):
    obs = ObservationModel((ChannelModel("stroke", 1e-3, quantum=5e-4, hold=0.0),
                            ChannelModel("contact", 2e-3)), clock_offset=0.0)
    truth = dict(OSC_TRUTH)
    # telemetry: stroke at 20 Hz, contact at 50 Hz, a dropout 1.0-1.3 s of the stroke
    i = np.arange(350)
    i = i[(i % 5 == 0) | (i % 2 == 0)]          # rows of a 100 Hz recorder that hold a sample
    t = i * 0.01
    template = {"stroke": np.where((i % 5 == 0) & ~((t > 1.0) & (t < 1.3)), 0.0, np.nan),
                "contact": np.where(i % 2 == 0, 0.0, np.nan)}
    tel0 = Telemetry.from_arrays(t, template, source="oscillator")
    true_obs = ObservationModel(obs.channels, clock_offset=truth["clock_offset"])
    sim = oscillator_forward(np.array([[truth[n] for n in OSC_NAMES]]), OSC_NAMES)
    tel = true_obs.bind(tel0).synthesize(sim.t, {k: v[0] for k, v in sim.channels.items()},
                                         np.random.default_rng(seed))
    return ReconstructionProblem(oscillator_forward, tel, oscillator_space(), obs), truth
