"""The peripheral kernel's free flight before the start plane (``t_pre``): the run from
``t = 0`` on is unchanged bit for bit, the body rates before it are Euler's torque-free motion
backwards (against scipy), the ring and the flags hold their ``t = 0`` values, and the other
channels are NaN. Everything runs through the batch kernel (one compile)."""
import tomllib

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from models.peripheral._kernels import run_layout as R
from models.peripheral import simulate as ps
from models.unit import get_unit

U = get_unit("peripheral")
DURATION = 1.0      # [s] first contact ~0.4 s in: contacts and petal sliding included
T_PRE = 2.0         # [s] 100 rows at the preset's 50 Hz
HELD = ("ring_x", "ring_y", "ring_z", "ring_roll", "ring_pitch", "ring_yaw",
        *(f"leg_{i}" for i in range(1, 7)), "contact",
        *(f"capture_sensor_{i}" for i in range(1, 4)), "capture",
        *(f"latch_{i}" for i in range(1, 7)),
        *(f"interface_{q}_{a}" for q in ("force", "moment") for a in "xyz"),
        *(f"leg_force_{i}" for i in range(1, 7)))
RATES = tuple(f"{b}_rate_{a}" for b in ("active", "passive") for a in "xyz")


@pytest.fixture(scope="module")
def scn():
    """The reference docking with tumbling vehicles: relative rates of 1-2e-2 rad/s and a
    station turning at 1e-2 rad/s, so that Euler's gyroscopic terms change the rates by
    1e-4 .. 1e-3 rad/s over ``T_PRE`` (the test below checks they do)."""
    with open(ps.PRESETS / "reference.toml", "rb") as fh:
        d = tomllib.load(fh)
    d["passive"]["initial_rate"] = [0.01, -0.012, 0.008]
    d["initial"].update(rel_rate_x=0.02, rel_rate_y=-0.015, rel_rate_z=0.012)
    return ps.Scenario.from_dict(d)


@pytest.fixture(scope="module")
def runs(scn):
    """Two rows (the scenario's start and a perturbed one) without and with the extension."""
    chans = [c for c in ps.CHANNELS if c != "t"] + ["t"]
    b0 = U.batch(scn, R.IC_NAMES, chans, duration=DURATION)
    b1 = U.batch(scn, R.IC_NAMES, chans, duration=DURATION, t_pre=T_PRE)
    d = np.array([0.0, 0.01, -0.005, -0.01, 0.002, 0.0, 0.003, 0.0, -0.002, 0.0, 0.0, 0.001])
    theta = np.vstack([b0.base, b0.base + d])
    return b0, b1, theta, b0.evaluate(theta), b1.evaluate(theta)


def test_from_the_start_on_the_rows_are_those_without_the_extension(runs):
    b0, b1, theta, (o0, e0, s0), (o1, e1, s1) = runs
    n = b1.n_pre
    assert n == 100 and list(s0) == [0, 0] and list(s1) == [0, 0]
    # the grid: -n dt .. -dt, then the run's own grid, exactly
    np.testing.assert_array_equal(b1.t[:n], np.arange(-n, 0) * 0.02)
    np.testing.assert_array_equal(b1.t[n:], b0.t)
    np.testing.assert_array_equal(o1[:, n:], o0)          # bit for bit, NaN where NaN
    np.testing.assert_array_equal(e1, e0)
    assert np.isfinite(e0[:, 0]).all()                     # the span includes contact
    # the t channel the kernel writes is the grid
    np.testing.assert_array_equal(o1[0, :, b1.channels.index("t")], b1.t)
    # derive: another extension, or none, of the same runner gives the same rows
    np.testing.assert_array_equal(b0.derive(t_pre=T_PRE).evaluate(theta)[0], o1)
    np.testing.assert_array_equal(b1.derive(t_pre=0.0).evaluate(theta)[0], o0)
    kept = b1.derive(["ring_x", "passive_rate_x"])
    assert kept.n_pre == n
    np.testing.assert_array_equal(kept.evaluate(theta)[0][..., 1],
                                  o1[..., b1.channels.index("passive_rate_x")])


def _euler_backwards(J, w0, t):
    """Body rates of a torque-free rigid body at the times ``t`` (< 0, increasing) from
    ``w0`` at ``t = 0``: scipy DOP853 on ``J w_dot = -w x J w``, integrated from 0 down."""
    Ji = np.linalg.inv(J)

    def rhs(_, w):
        return Ji @ (-np.cross(w, J @ w))

    sol = solve_ivp(rhs, (0.0, t[0]), w0, method="DOP853", t_eval=t[::-1], rtol=1e-13,
                    atol=1e-16)
    assert sol.success
    return sol.y[:, ::-1].T


def test_body_rates_before_the_start_are_torque_free_motion(scn, runs):
    """Against an independent integration (scipy's DOP853, rtol 1e-13) from the kernel's own
    rates at t = 0. The kernel's RK4 at 0.02 s has |w| h = 5e-4, a global error of order
    (|w| h)^4 |w| = 1e-15 rad/s; the tolerance 1e-11 rad/s is 1e7 below the change of the
    rates over the extension (checked: above 1e-4 rad/s for both vehicles), so rates held
    constant, integrated forwards or with the other vehicle's inertia all fail."""
    _, b1, theta, _, (o1, _, _) = runs
    n = b1.n_pre
    col = {c: b1.channels.index(c) for c in RATES}
    cfg = scn.config
    for body, J in (("active", cfg.active.inertia), ("passive", cfg.passive.inertia)):
        J = np.diag(J) if np.ndim(J) == 1 else np.asarray(J, float)
        idx = [col[f"{body}_rate_{a}"] for a in "xyz"]
        for row in range(theta.shape[0]):
            got = o1[row, :n][:, idx]
            ref = _euler_backwards(J, o1[row, n, idx], b1.t[:n])
            assert np.max(np.abs(got - ref)) < 1e-11, (body, row)
            assert np.max(np.abs(got[0] - o1[row, n, idx])) > 1e-4, (body, row)


def test_held_channels_keep_their_start_values_and_the_rest_is_nan(runs):
    b0, b1, theta, (o0, e0, _), (o1, _, _) = runs
    n = b1.n_pre
    for j, c in enumerate(b1.channels):
        before = o1[:, :n, j]
        if c in HELD:
            np.testing.assert_array_equal(before, np.repeat(o1[:, n:n + 1, j], n, axis=1),
                                          err_msg=c)
            if not c.startswith(("ring_", "leg_")) or c.startswith("leg_force"):
                assert np.all(before == 0.0), c        # nothing touches before the start
        elif c not in RATES and c != "t":
            assert np.all(np.isnan(before)), c


def test_held_ring_is_the_models_own_free_flight(runs):
    """The held ring pose and leg lengths are what the model itself does in free flight: from
    t = 0 until 0.2 s before the first ring-ring contact (the latches and capture sensors
    reach the mating petals earlier) the ring stays at its t = 0 pose (ready pose, legs at
    free length, no leg force) to 1e-6 m / 1e-6 rad. What moves it is the vehicle's turn:
    here the active vehicle turns at about 3e-2 rad/s, a centripetal load of
    40 kg x (3e-2 rad/s)^2 x 4 m = 0.14 N, 3e-7 m on one caged leg (5e5 N/m) alone."""
    b0, _, theta, (o0, e0, _), _ = runs
    for row in range(theta.shape[0]):
        free = b0.t < e0[row, 0] - 0.2
        assert free.sum() >= 5
        for c in HELD[:12]:
            x = o0[row, free, b0.channels.index(c)]
            assert np.max(np.abs(x - x[0])) < 1e-6, (c, row, np.ptp(x))


def test_extension_matches_a_run_started_earlier():
    """The extension against the model itself: a run started ``T_PRE`` further out (0.2 m at
    the 0.1 m/s closing speed; no contact within ``T_PRE``) passes through a state at
    ``t = T_PRE``; the run started in that state with the extension must reproduce the
    earlier run's first ``T_PRE`` seconds. Passive rates agree to 1e-13 rad/s (the station's
    free flight is the torque-free motion; RK4 at 2 ms there, 20 ms here, both with errors
    below 1e-15 at these rates; measured 6e-17). The active rates differ by the ring's inertia
    that the extension leaves out (40 kg some 4 m out, 1.4 % of the transverse inertia):
    measured 2.6e-6 rad/s of a 3.5e-4 rad/s change, bound 1e-5 rad/s (1.4 % of the change
    plus margin; gyro noise is of order 1e-4 rad/s). The ring pose and legs agree to 1e-6
    (m, rad): the ring's settling under the turn, 8e-8 m measured."""
    with open(ps.PRESETS / "reference.toml", "rb") as fh:
        base = tomllib.load(fh)

    def scenario(w2):
        d = {k: (dict(v) if isinstance(v, dict) else v) for k, v in base.items()}
        d["passive"]["initial_rate"] = [float(v) for v in w2]
        return ps.Scenario.from_dict(d)

    chans = [*R.IC_NAMES, *RATES, *HELD[:12]]
    early = U.batch(scenario([0.01, -0.012, 0.008]), R.IC_NAMES, chans,
                    duration=T_PRE + 0.2)
    ic0 = early.base.copy()
    ic0[R.IC_NAMES.index("rel_pos_x")] -= 0.1 * T_PRE
    ic0[9:12] = [0.02, -0.015, 0.012]
    oa, ea, sa = early.evaluate(ic0[None, :])
    k = int(round(T_PRE * 50))
    assert sa[0] == 0 and early.t[k] == pytest.approx(T_PRE) and not ea[0, 0] <= T_PRE
    state = oa[0, k]
    w2 = [state[chans.index(f"passive_rate_{a}")] for a in "xyz"]
    late = U.batch(scenario(w2), R.IC_NAMES, chans, duration=0.2, t_pre=T_PRE)
    ob, _, sb = late.evaluate(state[None, :12])
    assert sb[0] == 0 and late.n_pre == k
    for j, c in enumerate(chans[12:], start=12):
        got, ref = ob[0, :k, j], oa[0, :k, j]
        tol = 1e-13 if c.startswith("passive") else 1e-5 if c in RATES else 1e-6
        assert np.max(np.abs(got - ref)) < tol, (c, np.max(np.abs(got - ref)))
