"""Six-leg ring mechanism of the peripheral unit: kinematics, leg forces, ring dynamics.

Oracles: a plain numpy leg computation (own elementary rotations), central finite
differences, the virtual-power identity, inverse-then-forward kinematics, the closed-form
stiffness ``J^T diag(k) J`` and mass matrix, energy conservation under RK4, an independent
inertial Newton-Euler computation from a prescribed motion, and the hand-computed brake work.
"""
import math

import numpy as np
import pytest

from models.peripheral._kernels import mechanism as km
from models.errors import InputError, SimulationError
from models.peripheral.mechanism import (ILLUSTRATIVE, Mechanism, leg_lengths,
                                         pose_from_leg_lengths, ready_pose)

NOBRAKE = {"brake_force_compression": math.inf, "brake_force_extension": math.inf}
ELASTIC = {**NOBRAKE, "spring_preload": 0.0, "damping": 0.0}
EMPTY = (np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0))


def _mech(**over):
    return Mechanism.from_dict({**ILLUSTRATIVE, **over})


def _kin(mp, q, dq=None):
    kw = np.zeros(km.KW_SIZE)
    km.leg_kinematics(mp, np.asarray(q, float), np.zeros(6) if dq is None
                      else np.asarray(dq, float), kw)
    return kw


def _jac(kw):
    J = np.zeros((6, 6))
    km.leg_jacobian(kw, J)
    return J


def _rot(axis, a):
    """Elementary frame rotation (old -> new components), written out independently."""
    c, s = math.cos(a), math.sin(a)
    if axis == 0:
        return np.array([[1, 0, 0], [0, c, s], [0, -s, c]])
    if axis == 1:
        return np.array([[c, 0, -s], [0, 1, 0], [s, 0, c]])
    return np.array([[c, s, 0], [-s, c, 0], [0, 0, 1]])


def _a_ring(q):
    """A_R = R_x(q6) R_z(q5) R_y(q4), AU -> ring."""
    return _rot(0, q[5]) @ _rot(2, q[4]) @ _rot(1, q[3])


def _random_poses(mech, rng, n):
    """Poses within the stroke: the ready pose moved by up to -0.15/+0.04 m axially,
    0.05 m laterally and 0.08 rad in each angle, kept when every leg length lies between
    the end stops."""
    q0 = mech.nominal_pose()
    lo = np.array([-0.15, -0.05, -0.05, -0.08, -0.08, -0.08])
    hi = np.array([0.04, 0.05, 0.05, 0.08, 0.08, 0.08])
    mp = mech.pack()
    out = []
    while len(out) < n:
        q = q0 + lo + (hi - lo) * rng.random(6)
        L = _kin(mp, q)[km.KW_L:km.KW_L + 6]
        if np.all(L > mp[km.MP_LMIN]) and np.all(L < mp[km.MP_LMAX]):
            out.append(q)
    return np.array(out)


@pytest.fixture(scope="module")
def mech():
    return _mech()


# ------------------------------------------------------------------------------------------
# kinematics
def test_leg_lengths_match_a_plain_numpy_computation(mech):
    # l_i = r + A_R^T rho_i - b_i with an independently built A_R: equal to rounding (1e-14 m)
    rng = np.random.default_rng(1)
    base, ring = mech.joints()
    mp = mech.pack()
    for q in _random_poses(mech, rng, 20):
        kw = _kin(mp, q)
        l = q[:3] + ring @ _a_ring(q) - base
        np.testing.assert_allclose(kw[km.KW_L:km.KW_L + 6], np.linalg.norm(l, axis=1),
                                   rtol=0, atol=1e-14)
        assert np.all(kw[km.KW_L:km.KW_L + 6] > mp[km.MP_LMIN])
        assert np.all(kw[km.KW_L:km.KW_L + 6] < mp[km.MP_LMAX])
    # three-fold symmetry of the layout: joints rotated by 120 deg about X map onto legs i+2
    R = _rot(0, 2 * math.pi / 3).T   # active rotation by +120 deg about X
    np.testing.assert_allclose(base @ R.T, np.roll(base, -2, axis=0), atol=1e-15)
    np.testing.assert_allclose(ring @ R.T, np.roll(ring, -2, axis=0), atol=1e-15)


def test_jacobian_matches_central_differences_and_the_leg_rates(mech):
    # J = dL/dq: central differences with h = 1e-6 have truncation ~h^2 L''' ~ 1e-12 and
    # rounding ~1e-16/1e-6 = 1e-10 against entries of order 0.1-1: rel. 1e-7 (the brief)
    rng = np.random.default_rng(2)
    mp = mech.pack()
    h = 1e-6
    for q in _random_poses(mech, rng, 10):
        dq = rng.normal(size=6) * 0.3
        kw = _kin(mp, q, dq)
        J = _jac(kw)
        Jfd = np.empty((6, 6))
        for j in range(6):
            e = np.zeros(6)
            e[j] = h
            Jfd[:, j] = (_kin(mp, q + e)[km.KW_L:km.KW_L + 6]
                         - _kin(mp, q - e)[km.KW_L:km.KW_L + 6]) / (2 * h)
        np.testing.assert_allclose(J, Jfd, rtol=1e-7, atol=1e-7 * np.abs(J).max())
        np.testing.assert_allclose(kw[km.KW_LD:km.KW_LD + 6], J @ dq, rtol=1e-13, atol=1e-15)


def test_virtual_power_of_the_leg_forces_equals_the_wrench_twist_product(mech):
    # sum F_i L_i' = f . r' + m . omega_R (moment about the ring centre), to rounding
    rng = np.random.default_rng(3)
    mp = mech.pack()
    for q in _random_poses(mech, rng, 10):
        dq = rng.normal(size=6)
        F = rng.normal(size=6) * 1e3
        kw = _kin(mp, q, dq)
        w = np.zeros(6)
        km.ring_wrench(kw, F, w)
        lhs = F @ kw[km.KW_LD:km.KW_LD + 6]
        rhs = w[:3] @ dq[:3] + w[3:] @ kw[km.KW_OMEGA:km.KW_OMEGA + 3]
        assert abs(lhs - rhs) <= 1e-11 * np.abs(F).sum() * np.abs(dq).sum()
        # massless legs: the base reaction balances the ring wrench (moments about the AU
        # origin: m_base + m_ring + r x f_ring = 0)
        b = np.zeros(6)
        km.base_wrench(mp, kw, F, b)
        np.testing.assert_allclose(b[:3], -w[:3], atol=1e-9)
        np.testing.assert_allclose(b[3:] + w[3:] + np.cross(q[:3], w[:3]), 0.0, atol=1e-9)


def test_forward_kinematics_inverts_the_inverse_kinematics(mech):
    # Newton to 1e-12 m on the lengths; with cond(J) ~ 2.4 the pose is within 1e-10 (brief)
    rng = np.random.default_rng(4)
    poses = _random_poses(mech, rng, 60)
    for q in poses:
        back = pose_from_leg_lengths(mech, leg_lengths(mech, q))
        np.testing.assert_allclose(back, q, rtol=0, atol=1e-10)
    # a telemetry history in one call (each sample warm-started from the previous one)
    L = np.array([leg_lengths(mech, q) for q in poses])
    np.testing.assert_allclose(pose_from_leg_lengths(mech, L), poses, rtol=0, atol=1e-10)
    # lengths no pose can have: a clear error, not a wrong pose
    with pytest.raises(SimulationError, match="sample 0"):
        pose_from_leg_lengths(mech, np.array([0.3, 2.0, 0.3, 2.0, 0.3, 2.0]))


def test_ready_pose_puts_every_leg_at_its_free_length():
    m = _mech(leg_free_length=0.70)
    q = ready_pose(m)
    np.testing.assert_allclose(leg_lengths(m, q), 0.70, rtol=0, atol=1e-12)
    # equal lengths on a three-fold symmetric hexapod: a pure axial shift of the nominal pose
    np.testing.assert_allclose(q[1:], 0.0, atol=1e-12)
    assert q[0] > m.ring_height   # longer legs than at the nominal height: the ring is higher


# ------------------------------------------------------------------------------------------
# stiffness, frequencies, energy
def _gen_force(mp, q, dq=None, ls=None):
    kw = _kin(mp, q, dq)
    F = np.zeros(6)
    km.leg_forces(mp, kw, np.zeros(12) if ls is None else ls, *EMPTY, F)
    return _jac(kw).T @ F


def _fd_stiffness(mp, q0, h=1e-6):
    """Stiffness matrix of the generalized leg force at ``q0`` by central differences of
    step ``h`` [m, rad]: ``K[:, j] = -dQ/dq_j``."""
    K = np.empty((6, 6))
    for j in range(6):
        e = np.zeros(6)
        e[j] = h
        K[:, j] = -(_gen_force(mp, q0 + e) - _gen_force(mp, q0 - e)) / (2 * h)
    return K


def test_small_deflection_stiffness_is_jt_diag_k_j():
    # at the free-length pose the leg forces vanish, so -dQ/dq = J^T diag(k) J exactly;
    # central differences (h = 1e-6, piecewise-smooth only away from the preload, here 0):
    # rel. 1e-6 covers truncation h^2 and rounding
    m = _mech(**ELASTIC)
    mp = m.pack()
    q0 = ready_pose(m)
    J = _jac(_kin(mp, q0))
    K = J.T @ np.diag(np.full(6, m.spring_rate)) @ J
    np.testing.assert_allclose(_fd_stiffness(mp, q0), K, rtol=0, atol=1e-6 * np.abs(K).max())


def _accel(mp, q, dq, F=None, fe=None, me=None, om=None, al=None, ao=None, ls=None,
           ain=None):
    z = np.zeros(3)
    kw = _kin(mp, q, dq)
    if F is None:
        F = np.zeros(6)
        km.leg_forces(mp, kw, np.zeros(12) if ls is None else ls, *EMPTY, F)
    ddq = np.zeros(6)
    ain = np.zeros(6) if ain is None else ain
    km.ring_accel(mp, np.asarray(q, float), np.asarray(dq, float), kw, F,
                  z if fe is None else fe, z if me is None else me, z if om is None else om,
                  z if al is None else al, z if ao is None else ao, ddq, ain)
    return ddq


def _linear_modes(m):
    """Closed form at the ready pose (all angles 0): M = diag(m I, G0^T J_R G0), K."""
    mp = m.pack()
    q0 = ready_pose(m)
    J = _jac(_kin(mp, q0))
    K = J.T @ J * m.spring_rate
    G0 = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    M = np.zeros((6, 6))
    M[:3, :3] = np.eye(3) * m.ring_mass
    M[3:, 3:] = G0.T @ m.inertia_matrix() @ G0
    return q0, M, K


def test_natural_frequencies_of_the_linearised_ring_are_eig_m_inv_k():
    # ring_accel linearised by central differences (h = 1e-7 rad/m) around the ready pose:
    # its eigenvalues equal eig(M^-1 K) of the closed form to rel. 1e-6 (FD truncation)
    m = _mech(**ELASTIC, ring_inertia=[22.0, 12.0, 14.0])
    mp = m.pack()
    q0, M, K = _linear_modes(m)
    h = 1e-7
    A = np.empty((6, 6))
    for j in range(6):
        e = np.zeros(6)
        e[j] = h
        A[:, j] = -(_accel(mp, q0 + e, np.zeros(6)) - _accel(mp, q0 - e, np.zeros(6))) / (2 * h)
    lam = np.sort(np.linalg.eigvals(A).real)
    lam_ref = np.sort(np.linalg.eigvals(np.linalg.solve(M, K)).real)
    np.testing.assert_allclose(lam, lam_ref, rtol=1e-6)
    f = np.sqrt(lam_ref) / (2 * np.pi)
    assert 1.0 < f.min() and f.max() < 20.0   # soft-capture ring: a few Hz


def _rk4_run(m, q, dq, h, n, between=False):
    """Fixed-frame RK4 of the ring with the leg forces; state (q, dq, damper work); brake
    slips committed between steps when ``between``. Returns the ledger terms per step."""
    mp = m.pack()
    ls = m.fresh_leg_state()
    y = np.concatenate([q, dq, [0.0]])

    def rhs(y):
        kw = _kin(mp, y[:6], y[6:12])
        F = np.zeros(6)
        p = km.leg_forces(mp, kw, ls, *EMPTY, F)
        return np.concatenate([y[6:12], _accel(mp, y[:6], y[6:12], F=F), [p]])

    out = np.empty((n + 1, 4))
    e = np.zeros(2)
    for k in range(n + 1):
        kw = _kin(mp, y[:6], y[6:12])
        km.legs_energy(mp, kw, ls, *EMPTY, e)
        ke = km.ring_kinetic_energy(mp, y[:6], y[6:12], kw, np.zeros(3), np.zeros(3))
        out[k] = ke, e[0], e[1], y[12]
        if k == n:
            break
        k1 = rhs(y)
        k2 = rhs(y + 0.5 * h * k1)
        k3 = rhs(y + 0.5 * h * k2)
        k4 = rhs(y + h * k3)
        y = y + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        if between:
            km.legs_between(mp, _kin(mp, y[:6], y[6:12]), ls, *EMPTY, k * h)
    return out, ls


def test_free_undamped_vibration_conserves_ring_ke_plus_spring_energy():
    # RK4 on an oscillator of angular frequency w loses (w h)^6 / 72 of the energy per step;
    # with h = T_min / 60 over n = 1200 steps the bound is n (w_max h)^6 / 72 = 1.2e-5
    # relative (measured 1.3e-5); geometric nonlinearity is weak at these amplitudes:
    # tolerance 3x the bound. The end stops are moved out of reach (their 2e6 N/m would need
    # a far smaller step: with them in reach the same run drifts by 6 %).
    m = _mech(**ELASTIC, leg_stroke_extension=0.3)
    q0, M, K = _linear_modes(m)
    w_max = math.sqrt(np.linalg.eigvals(np.linalg.solve(M, K)).real.max())
    h = 2 * math.pi / w_max / 60
    n = 1200
    q = q0 + np.array([-0.03, 0.01, -0.02, 0.03, -0.02, 0.04])
    dq = np.array([0.1, -0.05, 0.02, 0.1, 0.05, -0.1])
    out, _ = _rk4_run(m, q, dq, h, n)
    E = out[:, 0] + out[:, 1]
    bound = n * (w_max * h) ** 6 / 72
    assert np.abs(E - E[0]).max() <= 3 * bound * E[0]
    assert out[:, 1].max() > 0.5 * E[0] and out[:, 0].max() > 0.5 * E[0]  # it does vibrate


@pytest.mark.parametrize("preload, kp, tol", [(0.0, math.inf, 2e-6), (100.0, math.inf, 3e-3),
                                               (100.0, 5.0e5, 1e-4)])
def test_energy_ledger_closes_with_brake_slip_and_damping(preload, kp, tol):
    # KE + stored + brake work + damper work = initial energy (82 J; the brakes take ~20 J).
    # The brake force is exactly its threshold inside a step and the slip is booked at that
    # force, so without preload the ledger error is RK4's, degraded to O(h^3) locally by the
    # force kinks where a brake starts or stops slipping: measured 3e-7 at h = 0.2 ms
    # (3e-8 at 0.1 ms), tolerance 2e-6. The preload is a force step F0 at c = 0; an RK4 step
    # across it errs by up to F0 |L'| h ~ 0.02 J per crossing: measured 8e-4 (2.3e-4 at
    # 0.1 ms, first order), tolerance 3e-3. A caged preload (k_p = 5e5 N/m, c_p = 0.2 mm)
    # is continuous: what is left are the kinks at +-c_p, crossed at up to 2 m/s (0.4 mm per
    # step, more than c_p): measured 2.8e-5 (9.7e-6 at 0.1 ms), tolerance 1e-4, 30x below
    # the force step's error at the same step.
    m = _mech(brake_force_compression=400.0, brake_force_extension=400.0, damping=50.0,
              spring_preload=preload, preload_stiffness=kp)
    q0 = ready_pose(m)
    dq = np.array([-2.0, 0.15, -0.1, 0.2, -0.1, 0.3])   # a hard push: the brakes slip
    out, ls = _rk4_run(m, q0, dq, 2e-4, 2500, between=True)
    total = out.sum(axis=1)
    assert out[-1, 2] > 0.15 * total[0]          # the brakes took a good share
    assert np.all(ls[km.LS_SHIFT::km.LS_SIZE] < 0.0)
    assert np.abs(total - total[0]).max() <= tol * total[0]


# ------------------------------------------------------------------------------------------
# moving frame
def _fd(f, t, h):
    """5-point central first derivative."""
    return (-f(t + 2 * h) + 8 * f(t + h) - 8 * f(t - h) + f(t - 2 * h)) / (12 * h)


def _fd2(f, t, h):
    """5-point central second derivative."""
    return (-f(t + 2 * h) + 16 * f(t + h) - 30 * f(t) + 16 * f(t - h) - f(t - 2 * h)) / (
        12 * h * h)


def test_ring_accel_in_a_moving_frame_matches_inertial_newton_euler():
    # Prescribed AU-frame motion (R_AU(t): inertial -> AU, O(t)) and ring motion q(t). The
    # inertial oracle: x_c = O + R_AU^T r, C = A_R R_AU (inertial -> ring); from finite
    # differences a_c = x_c'', w (ring axes) from skew(w) = -C' C^T, eps = w'; the wrench that
    # makes this motion is f = m a_c, M = J eps + w x J w. Fed to ring_accel (no legs) with
    # the frame's Omega, alpha, a_O (also by differences) it must return q''(t) analytically.
    # 5-point stencils with h = 1e-3: truncation ~h^4 = 1e-12, rounding ~1e-16 / h^2 = 1e-10
    # (nested for eps): tolerance 1e-7 of the acceleration scale.
    m = _mech(ring_inertia=[22.0, 1.0, -0.5, 1.0, 12.0, 0.3, -0.5, 0.3, 14.0])
    mp = m.pack()
    Jr = m.inertia_matrix()
    q0 = m.nominal_pose()
    amp = np.array([0.05, 0.03, 0.04, 0.2, 0.15, 0.3])
    wq = np.array([3.0, 2.0, 2.5, 1.7, 2.2, 3.1])
    ph = np.array([0.1, 0.5, 0.9, 1.3, 1.7, 2.1])

    def q(t):
        return q0 + amp * np.sin(wq * t + ph)

    def ddq_true(t):
        return -amp * wq ** 2 * np.sin(wq * t + ph)

    def R_au(t):
        return _rot(0, 0.4 * t + 0.3 * math.sin(2 * t)) @ _rot(2, 0.7 * math.sin(1.3 * t)) \
            @ _rot(1, 0.2 + 0.5 * t)

    def O(t):
        return np.array([0.3 * t * t, math.sin(1.1 * t), 0.2 * math.cos(2 * t)])

    def x_c(t):
        return O(t) + R_au(t).T @ q(t)[:3]

    def C(t):
        return _a_ring(q(t)) @ R_au(t)

    def unskew(S):
        return 0.5 * np.array([S[2, 1] - S[1, 2], S[0, 2] - S[2, 0], S[1, 0] - S[0, 1]])

    h = 1e-3

    def w_ring(t):
        return unskew(-_fd(C, t, h) @ C(t).T)

    def Om(t):
        return unskew(-_fd(R_au, t, h) @ R_au(t).T)

    for t in (0.3, 1.1, 2.7):
        a_c = _fd2(x_c, t, h)
        w = w_ring(t)
        eps = _fd(w_ring, t, h)
        f_I = m.ring_mass * a_c
        M_R = Jr @ eps + np.cross(w, Jr @ w)
        Ra = R_au(t)
        A = _a_ring(q(t))
        fe = Ra @ f_I
        me = A.T @ M_R
        om = Om(t)
        al = _fd(Om, t, h)
        ao = Ra @ _fd2(O, t, h)
        dq = _fd(q, t, h)
        ain = np.zeros(6)
        got = _accel(mp, q(t), dq, F=np.zeros(6), fe=fe, me=me, om=om, al=al, ao=ao, ain=ain)
        ref = ddq_true(t)
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-7 * np.abs(ref).max())
        # the inertial accelerations it reports: a_c and eps, AU axes
        np.testing.assert_allclose(ain[:3], Ra @ a_c, rtol=0, atol=1e-7 * np.abs(a_c).max())
        np.testing.assert_allclose(ain[3:], Ra @ C(t).T @ eps, rtol=0,
                                   atol=1e-7 * np.abs(eps).max())
        # and the inertial kinetic energy from the same prescribed motion
        kw = _kin(mp, q(t), dq)
        v_o = Ra @ _fd(O, t, h)
        ke = 0.5 * m.ring_mass * _fd(x_c, t, h) @ _fd(x_c, t, h) + 0.5 * w @ Jr @ w
        assert km.ring_kinetic_energy(mp, q(t), dq, kw, v_o, om) == pytest.approx(ke, rel=1e-9)


# ------------------------------------------------------------------------------------------
# brake
def _leg_kw(mp, L, ld):
    kw = np.zeros(km.KW_SIZE)
    kw[km.KW_L:km.KW_L + 6] = L
    kw[km.KW_LD:km.KW_LD + 6] = ld
    return kw


def test_brake_sticks_then_slips_at_its_threshold_and_dissipates_threshold_times_slip():
    # one leg (all six alike) shortened at a constant rate v, no damper: the force follows
    # the preloaded spring F0 + k c up to F_BC, then stays at F_BC while the brake slips; the
    # brake work is F_BC x slip distance, and the spring stores F0 c_s + k c_s^2 / 2, c_s the
    # slip compression: both exact to rounding. Then pulled back: the spring unloads with
    # slope k from the shifted free length (digest A.10 shift), the brake holding.
    m = _mech(damping=0.0)
    mp = m.pack()
    L0 = mp[km.MP_L0]
    F0, k, fbc = m.spring_preload, m.spring_rate, m.brake_force_compression
    c_s = (fbc - F0) / k
    v, h, n = 0.05, 1e-3, 3000                      # 0.15 m in 3 s; slip starts at 0.07 m
    ls = m.fresh_leg_state()
    F = np.zeros(6)
    e = np.zeros(2)
    for j in range(1, n + 1):
        L = L0 - v * j * h
        kw = _leg_kw(mp, L, -v)
        km.leg_forces(mp, kw, ls, *EMPTY, F)
        c = v * j * h
        expect = min(F0 + k * c, fbc)
        assert F[0] == pytest.approx(expect, rel=1e-12)
        km.legs_between(mp, kw, ls, *EMPTY, j * h)
    slip = v * n * h - c_s
    np.testing.assert_allclose(ls[km.LS_SHIFT::km.LS_SIZE], -slip, rtol=1e-12)
    km.legs_energy(mp, kw, ls, *EMPTY, e)
    assert e[1] == pytest.approx(6 * fbc * slip, rel=1e-12)
    assert e[0] == pytest.approx(6 * (F0 * c_s + 0.5 * k * c_s ** 2), rel=1e-12)
    # work done on the legs (closed form) = stored + dissipated
    work = 6 * (F0 * c_s + 0.5 * k * c_s ** 2 + fbc * slip)
    assert e[0] + e[1] == pytest.approx(work, rel=1e-12)
    # pull back by 3 cm: elastic unloading from the slip point with slope k, no new slip
    L_end = L0 - v * n * h
    kw = _leg_kw(mp, L_end + 0.03, +v)
    km.leg_forces(mp, kw, ls, *EMPTY, F)
    assert F[0] == pytest.approx(fbc - k * 0.03, rel=1e-12)
    km.legs_between(mp, kw, ls, *EMPTY, 4.0)
    np.testing.assert_allclose(ls[km.LS_SHIFT::km.LS_SIZE], -slip, rtol=1e-12)


# ------------------------------------------------------------------------------------------
# caged preload (continuous law)
KP = 5.0e5        # cage stiffness [N/m]: c_p = 100 N / KP = 0.2 mm


def _absorber_closed_form(c, F0, k, kp, fbc, fbt):
    """Force [N] and stored energy [J] of the caged preloaded spring with the brake, written
    out independently of the kernel (numpy, vectorised): ``(force, stored, slip work)`` with
    the slip work of the not yet committed slip beyond the slip points."""
    c = np.asarray(c, float)
    cp = F0 / kp if np.isfinite(kp) else 0.0
    a = np.abs(c)
    f_spring = np.where(a <= cp, (kp if cp > 0 else 0.0) * c,
                        np.sign(c) * F0 + k * (c - np.sign(c) * cp))
    f = np.clip(f_spring, -fbt, fbc)
    cs_c, cs_t = cp + (fbc - F0) / k, cp + (fbt - F0) / k
    cc = np.clip(c, -cs_t, cs_c)
    ac = np.abs(cc)
    e = np.where(ac <= cp, 0.5 * (kp if cp > 0 else 0.0) * cc ** 2,
                 0.5 * F0 * cp + F0 * (ac - cp) + 0.5 * k * (ac - cp) ** 2)
    w = np.where(c > cs_c, fbc * (c - cs_c), 0.0) + np.where(c < -cs_t, fbt * (-cs_t - c), 0.0)
    return f, e, w


def _leg0_at(mp, c):
    """Leg lengths with leg 0 compressed by ``c`` [m], the others at their free length
    (compression exactly 0), and the compression the kernel reads for leg 0 (``L0 + 0 - L``,
    rounded as the kernel rounds it)."""
    L = mp[km.MP_L0:km.MP_L0 + 6].copy()
    L[0] = L[0] - c
    return L, (mp[km.MP_L0] + 0.0) - L[0]


def _one_leg(mp, c):
    """Kernel force, stored energy and slip work of leg 0 at compression ``c`` [m] (no
    damper), and the compression the kernel read."""
    L, c_read = _leg0_at(mp, c)
    kw = _leg_kw(mp, L, 0.0)
    F = np.zeros(6)
    e = np.zeros(2)
    ls = np.zeros(12)
    km.leg_forces(mp, kw, ls, *EMPTY, F)
    km.legs_energy(mp, kw, ls, *EMPTY, e)
    return F[0], e[0], e[1], c_read


def test_caged_preload_force_and_energy_match_the_closed_form():
    # k_p c inside |c| <= c_p, sign(c) F0 + k (c - sign(c) c_p) beyond, clipped at the brake;
    # stored energy k_p c^2/2, F0 c_p/2 + F0 (|c| - c_p) + k (|c| - c_p)^2/2, slip work
    # beyond the slip points c_p + (F_B - F0)/k: the same arithmetic up to association, so
    # rel. 1e-12. The grid includes +-c_p, the slip points and both sides of each.
    m = _mech(damping=0.0, preload_stiffness=KP, brake_force_extension=500.0)
    mp = m.pack()
    F0, k, fbc, fbt = m.spring_preload, m.spring_rate, 800.0, 500.0
    cp = F0 / KP
    assert mp[km.MP_CP] == cp and mp[km.MP_KP] == KP
    assert mp[km.MP_CSLIP_C] == pytest.approx(cp + (fbc - F0) / k, rel=1e-15)
    assert mp[km.MP_CSLIP_T] == pytest.approx(cp + (fbt - F0) / k, rel=1e-15)
    special = [cp, -cp, mp[km.MP_CSLIP_C], -mp[km.MP_CSLIP_T]]
    cs = np.concatenate([np.linspace(-0.045, 0.09, 271), np.linspace(-3 * cp, 3 * cp, 61),
                         special, np.array(special) * (1 + 1e-9),
                         np.array(special) * (1 - 1e-9)])
    got = np.array([_one_leg(mp, c) for c in cs])
    f, e, w = _absorber_closed_form(got[:, 3], F0, k, KP, fbc, fbt)
    np.testing.assert_allclose(got[:, 0], f, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[:, 1], e, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got[:, 2], w, rtol=1e-12, atol=1e-15)
    # the stored energy is the work of the force: its central difference (h = 1e-8 m, at
    # points farther than h from the kinks) is the force. The energy is piecewise quadratic,
    # so the difference has no truncation error, only rounding, eps e / h < 1e-6 N
    # (e < 20 J): tolerance 1e-5 N
    h = 1e-8
    for c in np.concatenate([np.linspace(-0.9 * cp, 0.9 * cp, 7), [1.5 * cp, 0.03, -0.02,
                                                                  -1.5 * cp]]):
        de = (_one_leg(mp, c + h)[1] - _one_leg(mp, c - h)[1]) / (2 * h)
        assert de == pytest.approx(_one_leg(mp, c)[0], abs=1e-5)


def test_caged_preload_is_continuous_at_the_cage_limits():
    # force and energy across +-c_p: over 2e-12 m the force changes by at most k_p 2e-12 =
    # 1e-6 N and the energy by F0 2e-12 = 2e-10 J, tolerance 1e-9 J (plus rounding of the
    # 0.01 J); a rigid cage jumps by 2 F0 = 200 N at 0, the contrast the check must see.
    # (The grid stays inside the end stops: extension stroke 0.05 m.)
    mp = _mech(damping=0.0, preload_stiffness=KP).pack()
    cp = mp[km.MP_CP]
    for c0 in (cp, -cp):
        lo, hi = _one_leg(mp, c0 - 1e-12), _one_leg(mp, c0 + 1e-12)
        assert abs(hi[0] - lo[0]) < 1e-6 and abs(hi[1] - lo[1]) < 1e-9
        assert abs(abs(_one_leg(mp, c0)[0]) - 100.0) < 1e-9     # k_p c_p = F0
    rigid = _mech(damping=0.0).pack()
    assert _one_leg(rigid, 1e-12)[0] - _one_leg(rigid, -1e-12)[0] == pytest.approx(200.0)


def _old_law(c, F0, k, fbc, fbt):
    """The rigid-cage law as it stood: sign(c) (F0 + k |c|) clipped, energy F0 |c'| +
    k c'^2 / 2, slip work beyond (F_B - F0) / k (scalar, same operation order)."""
    if c > 0.0:
        f = min(F0 + k * c, fbc)
    elif c < 0.0:
        f = max(-F0 + k * c, -fbt)
    else:
        f = 0.0
    cs_c, cs_t = (fbc - F0) / k, (fbt - F0) / k
    w = 0.0
    if c > cs_c:
        w = fbc * (c - cs_c)
        c = cs_c
    elif c < -cs_t:
        w = fbt * (-cs_t - c)
        c = -cs_t
    return f, F0 * abs(c) + 0.5 * k * c * c, w


@pytest.mark.parametrize("over", [{}, {"preload_stiffness": math.inf},
                                  {"preload_stiffness": KP, "spring_preload": 0.0}])
def test_rigid_cage_reproduces_the_force_step_exactly(over):
    # c_p = 0 (k_p = inf, the default; or F0 = 0 whatever k_p) packs c_p = k_p = 0 and the
    # kernel returns the old law bit for bit (==, no tolerance)
    m = _mech(damping=0.0, brake_force_extension=500.0, **over)
    mp = m.pack()
    assert m.preload_compliance() == 0.0 and mp[km.MP_CP] == 0.0 and mp[km.MP_KP] == 0.0
    F0, k = m.spring_preload, m.spring_rate
    for c in np.concatenate([np.linspace(-0.045, 0.1, 146), [0.0, 1e-9, -1e-9]]):
        f, e, w, _ = _one_leg(mp, c)
        assert (f, e, w) == _old_law(_one_leg(mp, c)[3], F0, k, 800.0, 500.0)


def test_caged_brake_slips_at_the_shifted_slip_point():
    # pushed at constant rate, no damper: the force follows the caged law up to F_BC, the
    # brake then holds it at F_BC; slip = stroke - (c_p + (F_BC - F0)/k), brake work
    # F_BC x slip, stored F0 c_p/2 + F0 c_s' + k c_s'^2/2 (c_s' = (F_BC - F0)/k): rel. 1e-12
    m = _mech(damping=0.0, preload_stiffness=KP)
    mp = m.pack()
    L0 = mp[km.MP_L0]
    F0, k, fbc = m.spring_preload, m.spring_rate, m.brake_force_compression
    cp = F0 / KP
    v, h, n = 0.05, 1e-3, 3000
    ls = m.fresh_leg_state()
    F = np.zeros(6)
    e = np.zeros(2)
    for j in range(1, n + 1):
        kw = _leg_kw(mp, L0 - v * j * h, -v)
        km.leg_forces(mp, kw, ls, *EMPTY, F)
        c = v * j * h
        expect = min(F0 + k * (c - cp), fbc) if c > cp else KP * c
        assert F[0] == pytest.approx(expect, rel=1e-12)
        km.legs_between(mp, kw, ls, *EMPTY, j * h)
    slip = v * n * h - (cp + (fbc - F0) / k)
    np.testing.assert_allclose(ls[km.LS_SHIFT::km.LS_SIZE], -slip, rtol=1e-12)
    km.legs_energy(mp, kw, ls, *EMPTY, e)
    d = (fbc - F0) / k
    assert e[1] == pytest.approx(6 * fbc * slip, rel=1e-12)
    assert e[0] == pytest.approx(6 * (0.5 * F0 * cp + F0 * d + 0.5 * k * d * d), rel=1e-12)


def test_caged_small_deflection_stiffness_and_the_cage_mode_at_the_preset_step():
    # Inside the cage (deflections 1e-6 << c_p = 0.2 mm) the ring sits on k_p:
    # -dQ/dq = k_p J^T J (central differences, rel. 1e-6 as for the spring). The preset's
    # cage modes with its dampers: the largest |lambda| of the linearised ring times the
    # preset's captured step must stay <= 0.5 (the resolution the preset states, RK4's
    # stability limit is 2.8).
    from models.peripheral.simulate import load_scenario
    sc = load_scenario("reference")
    m = sc.mechanism
    mp = m.pack()
    q0 = ready_pose(m)
    J = _jac(_kin(mp, q0))
    K = m.preload_stiffness * J.T @ J
    np.testing.assert_allclose(_fd_stiffness(mp, q0), K, rtol=0, atol=1e-6 * np.abs(K).max())
    _, M, _ = _linear_modes(m)
    C = m.damping * J.T @ J
    A = np.block([[np.zeros((6, 6)), np.eye(6)],
                  [-np.linalg.solve(M, K), -np.linalg.solve(M, C)]])
    lam = np.abs(np.linalg.eigvals(A)).max()
    assert lam * sc.integration.dt_captured <= 0.5
    assert m.preload_compliance() == pytest.approx(m.spring_preload / m.preload_stiffness)


def test_hysteresis_absorber_kind_drives_the_element_with_the_leg_compression():
    # KIND_HYSTERESIS: each leg's absorber force is the element's force at c = L0 - L
    from models.hysteresis import element_from_dict
    el = {"variant": "constant", "dof": "linear",
          "positive": {"k_max": 1e5,
                       "forward": {"q": [0.0, 0.005, 0.05, 0.1], "Q": [0.0, 100.0, 700.0, 2000.0]},
                       "backward": {"q": [0.0, 0.005, 0.087, 0.1],
                                    "Q": [0.0, 100.0, 700.0, 2000.0]}},
          "negative": "mirror"}
    element = element_from_dict(el)
    m = Mechanism.from_dict({**ILLUSTRATIVE, "damping": 0.0, "absorber": el})
    mp = m.pack()
    arrays = m.absorber_arrays()
    L0 = mp[km.MP_L0]
    ls = m.fresh_leg_state()
    F = np.zeros(6)
    cs = np.concatenate([np.linspace(0, 0.07, 36), np.linspace(0.07, 0.03, 21)[1:]])
    forces = []
    for j in range(1, cs.size):
        rate = (cs[j] - cs[j - 1]) / 1e-2
        kw = _leg_kw(mp, L0 - cs[j], -rate)
        km.legs_between(mp, kw, ls, *arrays, j * 1e-2)
        km.leg_forces(mp, kw, ls, *arrays, F)
        forces.append(F[0])
    ref = element.trace(cs[1:], qdot=np.diff(cs) / 1e-2)
    np.testing.assert_allclose(forces, ref, rtol=1e-12, atol=1e-9)
    assert forces[-1] < forces[34]   # unloaded along the transition / backward branch


# ------------------------------------------------------------------------------------------
# configuration
@pytest.mark.parametrize("change, key", [
    ({"ring_mas": 40.0}, "mechanism.ring_mas"),
    ({"ring_mass": -1.0}, "mechanism.ring_mass"),
    ({"brake_force_compression": 50.0}, "mechanism.brake_force_compression"),
    ({"ring_inertia": [1.0, 1.0, 5.0]}, "mechanism.ring_inertia"),
    ({"leg_stroke_compression": 2.0}, "mechanism.leg_stroke_compression"),
    ({"base_pair_angle": 3.0}, "mechanism.base_pair_angle"),
    ({"preload_stiffness": 0.0}, "mechanism.preload_stiffness"),
    ({"preload_stiffness": "stiff"}, "mechanism.preload_stiffness"),
])
def test_from_dict_names_the_bad_key(change, key):
    with pytest.raises(InputError) as exc:
        Mechanism.from_dict({**ILLUSTRATIVE, **change})
    assert exc.value.key == key
    d = dict(ILLUSTRATIVE)
    del d["spring_rate"]
    with pytest.raises(InputError) as exc:
        Mechanism.from_dict(d)
    assert exc.value.key == "mechanism.spring_rate"
