"""Sensor model against closed forms: bias, scale, latency, clock offset, hold, quantization,
binary channels through their switching times."""
import numpy as np
import pytest

from models.errors import InputError
from recon.observation import ChannelModel, ObservationModel, Simulated, edges
from recon.telemetry import Telemetry

T_SIM = np.linspace(0.0, 2.0, 2001)  # 1 ms grid


def _tel(t, **ch):
    return Telemetry.from_arrays(t, {k: np.full(len(t), 0.0) if v is None else v
                                     for k, v in ch.items()})


def test_continuous_prediction_matches_closed_form():
    # x(s) = s^2 on a 1 ms grid: linear interpolation error <= h^2/4 = 2.5e-7 m, the tolerance
    t = np.linspace(0.2, 1.8, 33)
    obs = ObservationModel((ChannelModel("stroke", 1e-3),))
    bound = obs.bind(_tel(t, stroke=None))
    sim = Simulated(T_SIM, {"stroke": np.vstack([T_SIM ** 2, T_SIM ** 2])})
    params = {"clock_offset": np.array([0.0, 0.05]), "stroke_latency": np.array([0.0, 0.02]),
              "stroke_bias": np.array([0.0, 1e-3]), "stroke_scale": np.array([1.0, 1.1])}
    pred = bound.predict(sim, params)["stroke"]
    np.testing.assert_allclose(pred[0], t ** 2, atol=2.5e-7)
    np.testing.assert_allclose(pred[1], 1.1 * (t - 0.07) ** 2 + 1e-3, atol=1.1 * 2.5e-7)


def test_sample_and_hold_is_a_staircase():
    t = np.array([0.31, 0.349, 0.351, 0.52])
    obs = ObservationModel((ChannelModel("stroke", 1e-3, hold=0.05),))
    pred = obs.bind(_tel(t, stroke=None)).predict(Simulated(T_SIM, {"stroke": T_SIM[None, :]}))
    np.testing.assert_allclose(pred["stroke"][0], [0.30, 0.30, 0.35, 0.50], atol=1e-12)


def test_edges_are_midpoints_of_bracketing_samples():
    t = np.array([0.0, 0.1, 0.2, 0.3, 0.4, 0.5])
    y = np.array([0, 0, 1, 1, 0, 1])
    r, f, wr, wf = edges(t, y)
    np.testing.assert_allclose(r, [0.15, 0.45])
    np.testing.assert_allclose(f, [0.35])
    np.testing.assert_allclose(wr, [0.1, 0.1])


def test_binary_residuals_measure_switch_time_errors():
    # telemetry at 50 Hz: contact samples 1 from 0.52 to 1.18 s -> edges at 0.51 and 1.19 s
    i = np.arange(100)
    t = i * 0.02
    y = ((i > 25) & (i < 60)).astype(float)
    sig = 0.004
    obs = ObservationModel((ChannelModel("contact", sig),))
    bound = obs.bind(_tel(t, contact=y))
    assert bound.n_residuals == 3  # one rising, one falling, one "extra simulated edges"
    j = np.arange(T_SIM.size)
    sim_flag = ((j >= 530) & (j < 1210)).astype(float)
    r = bound.residuals(Simulated(T_SIM, {"contact": sim_flag[None, :]}))[0]
    # telemetry edges at 0.51 and 1.19 s; simulated at 0.5295 and 1.2095 s (grid midpoints)
    s_t = np.sqrt(sig ** 2 + (0.02 ** 2 + 0.001 ** 2) / 12)
    np.testing.assert_allclose(r[:2], [0.0195 / s_t, 0.0195 / s_t], rtol=1e-9)
    assert r[2] == 0.0
    # a clock offset of -0.0195 s puts the simulated edges on the telemetry ones
    r = bound.residuals(Simulated(T_SIM, {"contact": sim_flag[None, :]}),
                        {"clock_offset": np.array([-0.0195])})[0]
    np.testing.assert_allclose(r, 0.0, atol=1e-9)


def test_binary_residual_is_continuous_when_an_edge_leaves_the_record():
    t = np.arange(0.0, 2.0, 0.02)
    y = ((t > 0.5) & (t < 1.9)).astype(float)
    bound = ObservationModel((ChannelModel("contact", 0.005),)).bind(_tel(t, contact=y))
    # falling edge of the simulation just inside and just outside the end of the record
    flag_in = ((T_SIM > 0.5) & (T_SIM < t[-1] - 0.0005)).astype(float)
    flag_out = ((T_SIM > 0.5) & (T_SIM < t[-1] + 0.0015)).astype(float)
    r_in = bound.residuals(Simulated(T_SIM, {"contact": flag_in[None, :]}))[0]
    r_out = bound.residuals(Simulated(T_SIM, {"contact": flag_out[None, :]}))[0]
    # both are (edge or end of record - 1.89) / sigma_t: differ by < 2 ms / sigma_t
    assert abs(r_in[1] - r_out[1]) < 0.002 / 0.005
    # an extra simulated pulse inside the record adds a positive penalty
    flag_extra = flag_in + ((T_SIM > 0.1) & (T_SIM < 0.2))
    r_extra = bound.residuals(Simulated(T_SIM, {"contact": flag_extra[None, :]}))[0]
    assert r_extra[-1] > 100


def test_synthesis_applies_noise_and_quantization():
    t = np.arange(0.0, 2.0, 0.001)
    obs = ObservationModel((ChannelModel("stroke", 2e-4, quantum=1e-4, bias=5e-4),))
    bound = obs.bind(_tel(t, stroke=None))
    x = 0.01 * np.sin(3 * T_SIM)
    tel = bound.synthesize(T_SIM, {"stroke": x}, np.random.default_rng(0))
    y = tel.channels["stroke"]
    np.testing.assert_allclose(y / 1e-4, np.round(y / 1e-4), atol=1e-9)
    resid = y - (np.interp(t, T_SIM, x) + 5e-4)
    # std of noise + quantization: sqrt(sigma^2 + q^2/12); 2000 samples -> 3 % (2 sigma) tol
    assert abs(resid.std() / np.sqrt(2e-4 ** 2 + 1e-4 ** 2 / 12) - 1) < 0.04
    assert abs(resid.mean()) < 3 * 2.1e-4 / np.sqrt(t.size)


def test_config_errors_name_the_key():
    with pytest.raises(InputError) as exc:
        ObservationModel.from_dict({"channels": {"stroke": {"sigma": 1e-3, "gain": 2}}})
    assert exc.value.key == "observation.channels.stroke.gain"
    with pytest.raises(InputError) as exc:
        ObservationModel.from_dict({"channels": {"stroke": {"sigma": -1}}})
    assert exc.value.key == "observation.channels.stroke.sigma"
    with pytest.raises(InputError):
        ObservationModel((ChannelModel("stroke", 1e-3),)).bind(
            _tel(np.arange(3.0), gimbal_yaw=None))


def test_quantized_likelihood_is_exact_and_unbiased_where_sheppard_is_not():
    # a constant true value read 4000 times through sigma = q/4 noise and rounding to q: the
    # readings are 0 or q, and their mean (the Sheppard-Gaussian estimate) is biased by about
    # 0.07 q (7 standard errors). The exact interval likelihood recovers the value.
    from scipy.stats import norm

    from recon.observation import quantized_residuals

    q, sigma, mu = 1.0, 0.25, 0.37
    rng = np.random.default_rng(5)
    y = np.round((mu + sigma * rng.standard_normal(4000)) / q) * q
    grid = np.linspace(0.2, 0.55, 701)
    r = quantized_residuals(grid[:, None], y[None, :], sigma, q)
    # -r^2/2 is the exact log-probability up to a constant (checked against scipy)
    p = norm.cdf((y + q / 2 - grid[300]) / sigma) - norm.cdf((y - q / 2 - grid[300]) / sigma)
    lp = np.log(p)
    np.testing.assert_allclose(-0.5 * r[300] ** 2 - (-0.5 * r[300] ** 2).max(),
                               lp - lp.max(), atol=1e-9)
    mle = grid[np.argmin(np.sum(r * r, axis=1))]
    # the MLE's standard error here is about 0.006 q (Fisher information of the two-bin
    # model); 4 se = 0.025 q
    assert abs(mle - mu) < 0.025
    assert abs(y.mean() - mu) > 0.05          # the Gaussian (Sheppard) answer is off
    # residuals are odd in (prediction - reading) and zero at the reading
    r_pm = quantized_residuals(np.array([0.1, -0.1, 0.0]), 0.0, sigma, q)
    assert r_pm[0] > 0 and abs(r_pm[0] + r_pm[1]) < 1e-12 and r_pm[2] == 0.0


def test_a_timed_first_rising_edge_replaces_the_output_bracket():
    """A forward model that times a flag's first rise (Simulated.first_rise) gives that edge
    exactly: the residual is (timed edge - telemetry edge) / sigma_t with no output-step term
    in sigma_t, linear in the timed edge (no 10-ms staircase), and a timed edge outside the
    output bracket of the simulated rise (a forward model's inconsistency) is not used."""
    i = np.arange(100)
    t = i * 0.02
    y = (i > 25).astype(float)          # telemetry rising edge at 0.51 s, 20 ms bracket
    sig = 0.002
    bound = ObservationModel((ChannelModel("latch_1", sig),)).bind(_tel(t, latch_1=y))
    t_sim = np.arange(0.0, 2.0, 0.01)   # 10-ms output
    flag = (t_sim > 0.525).astype(float)  # rises between 0.52 and 0.53 s
    s_exact = np.sqrt(sig ** 2 + 0.02 ** 2 / 12)
    s_grid = np.sqrt(sig ** 2 + (0.02 ** 2 + 0.01 ** 2) / 12)
    r_grid = bound.residuals(Simulated(t_sim, {"latch_1": flag[None, :]}))[0]
    np.testing.assert_allclose(r_grid[0], (0.525 - 0.51) / s_grid, rtol=1e-9)
    timed = np.array([0.5201, 0.5233, 0.5266, 0.5299, 0.6])
    rows = np.repeat(flag[None, :], timed.size, axis=0)
    r = bound.residuals(Simulated(t_sim, {"latch_1": rows}, {"latch_1": timed}))
    np.testing.assert_allclose(r[:4, 0], (timed[:4] - 0.51) / s_exact, rtol=1e-9)
    # 70 ms from the bracket: the grid edge, with the sigma of a timed channel
    np.testing.assert_allclose(r[4, 0], (0.525 - 0.51) / s_exact, rtol=1e-9)
    assert np.all(r[:, 1:] == 0.0)    # no falling edge either side; no extra edges
