"""Probe-cone mechanism links: movable housing (J_M on the universal joint), probe bending,
limiter pads and alignment rollers.

Closed forms: static bending under a known lateral head load, the two free-oscillation
frequencies of housing + bent probe, the penalty force of a pad endpoint / pad segment / roller
against the receiving cone computed by hand from the meridian geometry.
"""
import dataclasses as dc

import numpy as np
import pytest
import scipy.linalg as sl
from scipy.optimize import least_squares

from models._kernels import contact as ck
from models.probe_cone._kernels import kernel as kp
from models.probe_cone._kernels.layout import _housing_rot
from models.probe_cone._kernels.stage import _housing_contacts
from models.errors import InputError
from models.probe_cone import Scenario, load_preset, pack, preset_path, simulate
from models.probe_cone.config import AlignmentRollers, LimiterPads

AT_REST = {"rel_pos_x": -3.0, "rel_pos_y": 0.0, "rel_pos_z": 0.0, "rel_vel_x": 0.0,
           "rel_vel_y": 0.0, "rel_vel_z": 0.0, "rel_roll": 0.0, "rel_pitch": 0.0,
           "rel_yaw": 0.0, "rel_rate_x": 0.0, "rel_rate_y": 0.0, "rel_rate_z": 0.0}


@pytest.fixture(scope="module")
def scn():
    return load_preset("reference")


def _grounded(scn, accel, **probe):
    """Vehicles 1e6 times heavier (the base follows the thrust without turning), a constant
    thrust giving the active vehicle the body-axes acceleration ``accel`` [m/s^2], far from
    the cone."""
    big = 1e6
    act = dc.replace(scn.active, mass=scn.active.mass * big,
                     inertia=np.asarray(scn.active.inertia) * big)
    pas = dc.replace(scn.passive, mass=scn.passive.mass * big,
                     inertia=np.asarray(scn.passive.inertia) * big)
    th = dc.replace(scn.thrust, force=np.asarray(accel, dtype=float) * act.mass, start=0.0,
                    stop=1e3)
    return dc.replace(scn, active=act, passive=pas, thrust=th,
                      probe=dc.replace(scn.probe, **probe))


def _unit(pitch, yaw):
    """Unit vector of the gimbal angles (q1 = pitch about Y, q2 = yaw about Z)."""
    return np.array([np.cos(pitch) * np.cos(yaw), np.sin(yaw), -np.sin(pitch) * np.cos(yaw)])


# ------------------------------------------------------------------------------------------
# probe bending and the housing
def test_static_bending_under_a_known_lateral_head_load(scn):
    # constant base acceleration a (22 m/s^2 lateral): in the base frame the head carries the
    # load -m_H a; at rest the bending moment about the bearing B balances its moment arm:
    # k_b (u.w) |u x w| = m_H |d| |w x a|, i.e. bending angle = load * |d| / k_b (3.1 mrad).
    # Structural and lateral damping settle the transient in 4 s; the remaining error is the
    # residual oscillation (measured 1e-7 relative; tolerance 1e-5)
    a = np.array([0.0, 20.0, -10.0])
    tr = simulate(_grounded(scn, a), overrides=AT_REST, duration=4.0, rate=100.0)
    p = scn.probe
    u = _unit(tr["gimbal_pitch"][-1], tr["gimbal_yaw"][-1])
    w = np.array(_housing_rot(*u, *_unit(tr["bending_pitch"][-1], tr["bending_yaw"][-1])))
    ell = p.extended_length - p.bearing_offset - tr["stroke"][-1]
    moment = p.bending_stiffness * (u @ w) * np.linalg.norm(np.cross(u, w))
    assert moment == pytest.approx(p.head_mass * ell * np.linalg.norm(np.cross(w, a)),
                                   rel=1e-5)
    gamma = np.arccos(np.clip(u @ w, -1, 1))
    assert gamma == pytest.approx(p.head_mass * np.linalg.norm(a) * ell / p.bending_stiffness,
                                  rel=2e-2)   # small-angle form; the load is not exactly normal
    # the bending strain energy is in the stored energy and the ledger closes (thrust input)
    budget = tr["thrust_work"][-1]
    assert np.abs(tr.ledger_residual()).max() <= 1e-3 * budget


def test_housing_and_probe_free_oscillation_frequencies(scn):
    # Undamped small oscillation after a 4-ms lateral base-acceleration pulse; amplitude 4 mrad,
    # inside the lateral element's elastic common segment (rate k = stage1_rate). Housing angle
    # alpha (inertia J_M about the joint) and probe angle beta, head at L_M alpha + l beta:
    #   M = [[J_M + m L_M^2, m L_M l], [m L_M l, m l^2]],  K = [[k + k_b, -k_b], [-k_b, k_b]].
    # The bending angle (beta - alpha) carries both modes; each frequency is located on the
    # zero-padded spectrum and refined by a two-sinusoid least-squares fit. Tolerance 1e-3
    # (RK4 phase error at h = 1 ms: (w h)^4 / 120 = 3e-5 for the 249 rad/s mode; measured
    # 4e-4 for the low mode, the small-angle nonlinearity at 4 mrad)
    s2 = _grounded(scn, [0.0, 15.0, 0.0], lateral_damping=(0.0, 0.0), bending_damping=0.0)
    s2 = dc.replace(s2, integration=dc.replace(s2.integration, dt_free=1e-3, dt_captured=1e-3),
                    thrust=dc.replace(s2.thrust, stop=0.004))
    tr = simulate(s2, overrides=AT_REST, duration=10.0, rate=250.0)
    assert np.abs(tr["gimbal_yaw"]).max() < scn.probe.lateral.common_angle
    p = scn.probe
    m, lm = p.head_mass, p.bearing_offset
    ell = p.extended_length - lm
    k, kb = p.lateral.stage1_rate, p.bending_stiffness
    M = np.array([[p.housing_inertia + m * lm ** 2, m * lm * ell], [m * lm * ell, m * ell ** 2]])
    K = np.array([[k + kb, -kb], [-kb, kb]])
    w_an = np.sqrt(sl.eigh(K, M, eigvals_only=True))
    keep = tr.t > 0.01
    t = tr.t[keep]
    y = tr["bending_yaw"][keep]
    nfft = 16 * len(y)
    spec = np.abs(np.fft.rfft((y - y.mean()) * np.hanning(len(y)), nfft))
    w_grid = 2 * np.pi * np.fft.rfftfreq(nfft, t[1] - t[0])
    guess = []
    for w in w_an:
        win = (w_grid > 0.7 * w) & (w_grid < 1.3 * w)
        guess.append(w_grid[win][np.argmax(spec[win])])

    def model(th):
        c, w1, a1, b1, w2, a2, b2 = th
        return (c + a1 * np.cos(w1 * t) + b1 * np.sin(w1 * t) + a2 * np.cos(w2 * t)
                + b2 * np.sin(w2 * t)) - y

    fit = least_squares(model, [y.mean(), guess[0], 0, 0, guess[1], 0, 0])
    assert fit.x[1] == pytest.approx(w_an[0], rel=1e-3)
    assert fit.x[4] == pytest.approx(w_an[1], rel=1e-3)
    # the fit explains the signal: the two modes are all there is (2 %)
    assert np.abs(fit.fun).max() < 2e-2 * np.abs(y).max()


def test_bending_overrides_equal_the_scenario_values(scn):
    # the packed-parameter overrides (reconstruction contract) act like the scenario fields;
    # same arithmetic: identical to the last bit. No housing primitives at all also runs.
    s2 = dc.replace(scn, probe=dc.replace(scn.probe, bending_stiffness=8e4,
                                          bending_damping=30.0, housing_inertia=3.0),
                    pads=LimiterPads(), rollers=AlignmentRollers())
    a = simulate(s2, duration=3.0)
    b = simulate(dc.replace(scn, pads=LimiterPads(), rollers=AlignmentRollers()), duration=3.0,
                 overrides={"bending_stiffness": 8e4, "bending_damping": 30.0,
                            "housing_inertia": 3.0})
    assert np.array_equal(a["bending_pitch"], b["bending_pitch"])
    assert np.array_equal(a["gimbal_yaw"], b["gimbal_yaw"])


def test_stiff_bending_recovers_a_rigid_probe_on_the_housing(scn):
    # with 20 times the bending stiffness the probe bends 20 times less under the same load
    # (linear elastic, 2 % for the small-angle and settling residue)
    a = np.array([0.0, 20.0, 0.0])
    soft = simulate(_grounded(scn, a), overrides=AT_REST, duration=3.0, rate=50.0)
    s2 = _grounded(scn, a, bending_stiffness=20 * scn.probe.bending_stiffness,
                   bending_damping=np.sqrt(20) * scn.probe.bending_damping)
    s2 = dc.replace(s2, integration=dc.replace(s2.integration, dt_free=1e-3, dt_captured=1e-3))
    stiff = simulate(s2, overrides=AT_REST, duration=3.0, rate=50.0)
    assert stiff["bending_yaw"][-1] == pytest.approx(soft["bending_yaw"][-1] / 20, rel=2e-2)
    # the housing deflection is set by the lateral absorber alone: it hardly changes
    assert stiff["gimbal_yaw"][-1] == pytest.approx(soft["gimbal_yaw"][-1], rel=2e-2)


def _stage(scn, seed):
    """A random contact-free state (mechanism deflected and moving, vehicles turning) and
    the kernel's stage derivative at it: (P, y, dy)."""
    from models._kernels import hysteresis as hk
    from models.probe_cone._kernels.kernel import initial_state
    from models.probe_cone._kernels.layout import apply_slip_force
    from models.probe_cone._kernels.stage import _rhs
    from models._kernels.rigid_body import quat_to_dcm

    rng = np.random.default_rng(seed)
    pk = pack(scn)
    P = pk.P.copy()
    P[kp.P_IC:kp.P_IC + 12] = [-3.0, 0.1, -0.05, 0.2, 0.01, -0.02, 0.05, -0.03, 0.02, 0.01,
                               -0.02, 0.015]
    P[kp.P_IM1] = 1 / P[kp.P_M1]
    P[kp.P_IM2] = 1 / P[kp.P_M2]
    P[kp.P_IMH] = 1 / P[kp.P_MH]
    P[kp.P_IJT] = 1 / P[kp.P_JT]
    P[kp.P_IJM] = 1 / P[kp.P_JM]
    M = np.zeros((kp.NM, 3, 3))
    for (oj, mj, mi) in ((kp.P_J1, kp.M_J1, kp.M_JI1), (kp.P_J2, kp.M_J2, kp.M_JI2)):
        J = P[oj:oj + 9].reshape(3, 3)
        M[mj] = J
        M[mi] = np.linalg.inv(J)
    M[kp.M_G1] = P[kp.P_G1:kp.P_G1 + 9].reshape(3, 3)
    M[kp.M_G2] = P[kp.P_G2:kp.P_G2 + 9].reshape(3, 3)
    table = pk.table.copy()
    assert apply_slip_force(table, pk.toff[kp.E_AX], P[kp.P_F_SLIP]) == 0
    y = np.zeros(kp.NY)
    initial_state(P, y)
    # deflect the housing (~2 deg), bend the probe (~1 deg, stroke 3 cm), set rates
    u = y[kp.Y_UM:kp.Y_UM + 3] + rng.normal(0, 0.035, 3)
    u /= np.linalg.norm(u)
    y[kp.Y_UM:kp.Y_UM + 3] = u
    wm = rng.normal(0, 0.3, 3)
    y[kp.Y_WM:kp.Y_WM + 3] = wm - (wm @ u) * u
    A1 = np.empty((3, 3))
    quat_to_dcm(y, kp.Y_Q1, A1)
    rO = y[kp.Y_R1:kp.Y_R1 + 3] + A1.T @ P[kp.P_L1:kp.P_L1 + 3]
    w = u + rng.normal(0, 0.02, 3)
    w /= np.linalg.norm(w)
    lm = P[kp.P_LM]
    y[kp.Y_RH:kp.Y_RH + 3] = rO + lm * u + (P[kp.P_L0] - lm - 0.03) * w
    y[kp.Y_VH:kp.Y_VH + 3] += rng.normal(0, 0.2, 3)
    y[kp.Y_SPIN] += 0.3
    y[kp.Y_W1:kp.Y_W1 + 3] += rng.normal(0, 0.01, 3)
    y[kp.Y_W2:kp.Y_W2 + 3] += rng.normal(0, 0.01, 3)
    y[kp.Y_PHI] = 0.001
    dy = np.zeros(kp.NY)
    wk = np.zeros(kp.NWK)
    sc = np.zeros(kp.NSC)
    st = _rhs(0.0, y, P, pk.mer, pk.slots, pk.hc, table, pk.toff,
              np.zeros(kp.N_ELEM * hk.I_SIZE, dtype=np.int64), np.zeros(kp.N_ELEM * hk.F_SIZE),
              np.zeros(kp.N_LATCH, dtype=np.int64), np.zeros((kp.N_PL, kp.NLF)), dy, wk, M, sc,
              *_no_trace())
    assert st == kp.ST_OK and wk[kp.WK_CONTACT] == 0.0
    return P, y, dy, M, sc


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_mechanism_power_and_momentum_balance_at_a_state(scn, seed):
    # Pointwise virtual-work check of the internal loads (no contact, no thrust): the rate of
    # kinetic energy plus the power into the absorber elements, the bending strain-energy
    # rate and the damper dissipation is zero, and the total linear and angular momentum do
    # not change, at an arbitrary deflected, moving state. Rounding only: 1e-9 of the largest
    # power term / momentum rate term.
    from models._kernels.rigid_body import quat_to_dcm

    P, y, dy, M, sc = _stage(scn, seed)
    m1, m2, mh = P[kp.P_M1], P[kp.P_M2], P[kp.P_MH]
    J1, J2 = M[kp.M_J1], M[kp.M_J2]
    v1, v2, vh = (y[o:o + 3] for o in (kp.Y_V1, kp.Y_V2, kp.Y_VH))
    a1, a2, ah = (dy[o:o + 3] for o in (kp.Y_V1, kp.Y_V2, kp.Y_VH))
    w1, w2 = y[kp.Y_W1:kp.Y_W1 + 3], y[kp.Y_W2:kp.Y_W2 + 3]
    dw1, dw2 = dy[kp.Y_W1:kp.Y_W1 + 3], dy[kp.Y_W2:kp.Y_W2 + 3]
    wm, dwm = y[kp.Y_WM:kp.Y_WM + 3], dy[kp.Y_WM:kp.Y_WM + 3]
    terms = [m1 * v1 @ a1, m2 * v2 @ a2, mh * vh @ ah, w1 @ J1 @ dw1, w2 @ J2 @ dw2,
             P[kp.P_JM] * wm @ dwm, P[kp.P_JT] * y[kp.Y_SPIN] * dy[kp.Y_SPIN],
             dy[kp.Y_W_AX], dy[kp.Y_W_LAT], dy[kp.Y_W_TOR], dy[kp.Y_E_DAMP]]
    # bending strain-energy rate k_b b . b_dot, b = u x w (w, w_dot from the state)
    A1 = np.empty((3, 3))
    quat_to_dcm(y, kp.Y_Q1, A1)
    l1 = A1.T @ P[kp.P_L1:kp.P_L1 + 3]
    w1I = A1.T @ w1
    u, du = y[kp.Y_UM:kp.Y_UM + 3], dy[kp.Y_UM:kp.Y_UM + 3]
    lm = P[kp.P_LM]
    d = y[kp.Y_RH:kp.Y_RH + 3] - y[kp.Y_R1:kp.Y_R1 + 3] - l1 - lm * u
    dd = vh - v1 - np.cross(w1I, l1) - lm * du
    ell = np.linalg.norm(d)
    w = d / ell
    dw = (dd - w * (w @ dd)) / ell
    b = np.cross(u, w)
    terms.append(P[kp.P_KB] * b @ (np.cross(du, w) + np.cross(u, dw)))
    terms = np.array(terms)
    assert abs(terms.sum()) <= 1e-9 * np.abs(terms).max()
    assert np.abs(terms[5:]).max() > 1.0   # the mechanism is really loaded and moving
    # momentum: sum of forces and of angular-momentum rates about the inertial origin
    F = m1 * a1 + m2 * a2 + mh * ah
    assert np.abs(F).max() <= 1e-9 * np.abs(mh * ah).max()
    A2 = np.empty((3, 3))
    quat_to_dcm(y, kp.Y_Q2, A2)
    Ldot = (A1.T @ (J1 @ dw1 + np.cross(w1, J1 @ w1)) + A2.T @ (J2 @ dw2 + np.cross(w2, J2 @ w2))
            + P[kp.P_JM] * dwm + P[kp.P_JT] * (dy[kp.Y_SPIN] * w + y[kp.Y_SPIN] * dw))
    for (ro, m, a) in ((kp.Y_R1, m1, a1), (kp.Y_R2, m2, a2), (kp.Y_RH, mh, ah)):
        Ldot = Ldot + m * np.cross(y[ro:ro + 3], a)
    scale = np.abs(A1.T @ (J1 @ dw1)).max() + np.abs(np.cross(y[kp.Y_RH:kp.Y_RH + 3],
                                                                mh * ah)).max()
    assert np.abs(Ldot).max() <= 1e-9 * scale


# ------------------------------------------------------------------------------------------
# housing contact primitives against the cone (the kernel function, by hand)
def _call(scn, hc, C, o, law=None):
    pk = pack(scn)
    P = pk.P.copy()
    if law is None:
        law = np.array([2e6, 0.0, 0.0, 1e-3, 0.0])  # elastic only: f = k dn n
    acc = np.zeros(kp.NACC)
    twm = np.zeros(ck.TW_SIZE)
    twm[ck.TW_O:ck.TW_O + 3] = o
    twp = np.zeros(ck.TW_SIZE)
    st = _housing_contacts(np.ascontiguousarray(hc, dtype=float), pk.mer, P,
                           np.ascontiguousarray(C, dtype=float), o[0], o[1], o[2], twm, twp,
                           law, 0.01, acc, *_no_trace())
    return st, acc


def _no_trace():
    """The trace arguments of a stage with tracing off: an empty buffer, its counters and a
    context whose mask is 0 (models._kernels.trace_layout)."""
    from models._kernels import trace_layout as TL

    return (np.empty((0, TL.TR_NCOL)), np.zeros(TL.TRN_SIZE, dtype=np.int64),
            np.zeros(TL.TX_SIZE))


def _vec(acc, o):
    """The 3-vector of the contact sums ``acc`` at offset ``o`` (``ACC_*``)."""
    return acc[o:o + 3]


def _cone_point(x_depth, s_along, rho_sign=1.0):
    """A point ``x_depth`` inside the first cone (mouth (0, 0.40) -> (0.25, 0.15), 45 deg), at
    meridian arc ``s_along`` from the mouth, in the plane z = 0, and the cone's normal."""
    t = np.array([1.0, -1.0]) / np.sqrt(2)       # meridian tangent (x, rho)
    n = np.array([1.0, 1.0]) / np.sqrt(2)        # into the material
    xr = np.array([0.0, 0.40]) + s_along * t + x_depth * n
    return np.array([xr[0], rho_sign * xr[1], 0.0]), np.array([n[0], rho_sign * n[1], 0.0])


def test_pad_endpoint_on_the_cone_pushes_along_the_surface_normal(scn):
    # a pad with one endpoint 2 mm inside the 45-degree cone, the other in free space; the
    # housing frame turned 30 deg about Z and its joint at o: force on the passive unit
    # k dn n_R at the endpoint, the housing gets the opposite force and its moment about the
    # joint; stored 1/2 k dn^2 (all to 1e-12)
    c, s = np.cos(0.5236), np.sin(0.5236)
    C = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    o = np.array([-0.4, 0.05, 0.0])
    p_in, n = _cone_point(0.002, 0.1)
    p_out = p_in + np.array([-0.05, 0.02, 0.01])
    hc = np.zeros((1, kp.HC_SIZE))
    hc[0, kp.HC_KIND] = kp.HC_PAD
    hc[0, kp.HC_P1:kp.HC_P1 + 3] = C.T @ (p_out - o)
    hc[0, kp.HC_P2:kp.HC_P2 + 3] = C.T @ (p_in - o)
    st, acc = _call(scn, hc, C, o)
    assert st == kp.ST_OK
    f = 2e6 * 0.002 * n
    assert np.allclose(_vec(acc, kp.ACC_F_HOUSING), f, atol=1e-9)
    assert np.allclose(_vec(acc, kp.ACC_F), f, atol=1e-9)
    assert np.allclose(_vec(acc, kp.ACC_M_HOUSING), np.cross(p_in - o, -f), atol=1e-9)
    assert np.allclose(_vec(acc, kp.ACC_M), np.cross(p_in, f), atol=1e-9)
    assert acc[kp.ACC_E_EL] == pytest.approx(0.5 * 2e6 * 0.002 ** 2, rel=1e-9)
    assert acc[kp.ACC_N_HOUSING] == 1.0


def test_pad_segment_across_the_mouth_circle(scn):
    # segment crossing the mouth plane 2 mm outside the 0.40 m rim, both endpoints in free
    # space: the only contact is segment vs circle (digest 7.6); normal = the common normal of
    # the segment and the rim tangent (z), oriented into the passive body, depth
    # Delta (n_R . n_C) with Delta = 2 mm
    C = np.eye(3)
    o = np.array([-0.5, 0.0, 0.0])
    p1 = np.array([-0.01, 0.452, 0.0])
    p2 = np.array([0.01, 0.352, 0.0])
    hc = np.zeros((1, kp.HC_SIZE))
    hc[0, kp.HC_P1:kp.HC_P1 + 3] = p1 - o
    hc[0, kp.HC_P2:kp.HC_P2 + 3] = p2 - o
    st, acc = _call(scn, hc, C, o)
    assert st == kp.ST_OK and acc[kp.ACC_N_HOUSING] == 1.0
    L = p2 - p1
    m = np.cross(L, [0.0, 0.0, 1.0])
    m = m / np.linalg.norm(m)
    m = m if m[0] > 0 else -m
    depth = 0.002 * m[1]
    assert np.allclose(_vec(acc, kp.ACC_F), 2e6 * depth * m, rtol=1e-9, atol=1e-9)
    assert np.allclose(_vec(acc, kp.ACC_M), np.cross([0.0, 0.402, 0.0], 2e6 * depth * m),
                       atol=1e-9)


def test_roller_against_the_cone(scn):
    # roller (sphere, r = 25 mm) 3 mm into the cone face: the contact point is its deepest
    # point, force k dn n_R there, moment of the opposite force about the joint on the housing
    C = np.eye(3)
    o = np.array([-0.3, 0.0, 0.0])
    r = 0.025
    p_surf, n = _cone_point(0.0, 0.12, rho_sign=-1.0)
    centre = p_surf - (r - 0.003) * n
    hc = np.zeros((1, kp.HC_SIZE))
    hc[0, kp.HC_KIND] = kp.HC_ROLLER
    hc[0, kp.HC_P1:kp.HC_P1 + 3] = centre - o
    hc[0, kp.HC_R] = r
    st, acc = _call(scn, hc, C, o)
    assert st == kp.ST_OK and acc[kp.ACC_N_HOUSING] == 1.0
    f = 2e6 * 0.003 * n
    cp = centre + r * n
    assert np.allclose(_vec(acc, kp.ACC_F), f, atol=1e-9)
    assert np.allclose(_vec(acc, kp.ACC_M_HOUSING), np.cross(cp - o, -f), atol=1e-9)


def _touching(scn, which="both"):
    """The reference docking with pads (and/or) rollers placed so that they reach the cone
    at the deepest stroke (joint at x = -0.39 m): 4 pads on the interface plane, 4 rollers on
    the mouth rim."""
    pads, rollers = [], []
    for k in range(4):
        a = 0.25 * np.pi + 0.5 * np.pi * k
        e = np.array([0.0, np.cos(a), np.sin(a)])
        pads.append(np.r_[np.array([0.30, 0, 0]) + 0.55 * e, np.array([0.40, 0, 0]) + 0.45 * e])
        b = 0.5 * np.pi * k
        rollers.append(np.array([0.36, 0, 0]) + 0.40 * np.array([0.0, np.cos(b), np.sin(b)]))
    return dc.replace(scn, pads=LimiterPads(np.array(pads)) if which != "rollers" else
                      LimiterPads(),
                      rollers=AlignmentRollers(np.array(rollers), 0.03) if which != "pads"
                      else AlignmentRollers())


@pytest.mark.parametrize("which", ["pads", "rollers"])
def test_housing_contacts_in_a_docking_close_the_ledger_and_conserve_momentum(scn, which):
    # the pads (rollers) touch the interface plane (mouth rim) near the deepest stroke; their
    # contact work is in the ledger (1 %; measured 0.06 %) and momentum is conserved (1e-6),
    # as for the head contacts
    s2 = _touching(scn, which)
    tr = simulate(s2, duration=6.0)
    assert tr["housing_contact"].max() == 1.0
    ref = simulate(scn, duration=6.0)
    assert ref["housing_contact"].max() == 0.0
    # the housing bears on the passive unit: less stroke
    assert tr["stroke"].max() < ref["stroke"].max() - 0.005
    ke0 = tr["energy_kinetic"][0]
    assert np.abs(tr.ledger_residual()).max() <= 0.01 * ke0
    P = np.stack([tr[f"momentum_{a}"] for a in "xyz"], 1)
    L = np.stack([tr[f"angular_momentum_{a}"] for a in "xyz"], 1)
    assert np.abs(P - P[0]).max() <= 1e-6 * np.linalg.norm(P[0])
    assert np.abs(L - L[0]).max() <= 1e-6 * np.linalg.norm(L[0])


def test_housing_contacts_keep_mirror_symmetry(scn):
    # pads at 45 + k 90 deg and rollers at k 90 deg are their own mirror image in y = 0: the
    # mirrored initial conditions give the mirrored history with the housing contacts active
    # (1e-9 of each channel's range, as for the head-only docking)
    s2 = _touching(scn, "pads")
    a = simulate(s2, duration=4.0)
    b = simulate(s2, s2.initial.mirrored_y(), duration=4.0)
    assert a["housing_contact"].max() == 1.0
    for name, sg in {"stroke": 1, "gimbal_pitch": 1, "gimbal_yaw": -1, "bending_pitch": 1,
                     "bending_yaw": -1, "interface_force_y": -1, "interface_moment_z": -1,
                     "housing_contact": 1}.items():
        scale = max(np.abs(a[name]).max(), 1e-12)
        assert np.abs(b[name] - sg * a[name]).max() <= 1e-9 * scale + 1e-9, name


# ------------------------------------------------------------------------------------------
# loaders
def _preset_dict():
    import tomllib

    with preset_path("reference").open("rb") as fh:
        return tomllib.load(fh)


def test_new_keys_are_validated():
    d = _preset_dict()
    d["probe"]["bending_stifness"] = 1.0
    with pytest.raises(InputError, match="'probe.bending_stifness'"):
        Scenario.from_dict(d)
    d = _preset_dict()
    d["probe"]["bearing_offset"] = 2.0
    with pytest.raises(InputError, match="'probe.bearing_offset'"):
        Scenario.from_dict(d)
    d = _preset_dict()
    d["limiter_pads"]["segments"] = [[0.0, 0.1, 0.2]]
    with pytest.raises(InputError, match="'limiter_pads.segments'"):
        Scenario.from_dict(d)
    d = _preset_dict()
    d["alignment_rollers"]["radiuss"] = 0.1
    with pytest.raises(InputError, match="'alignment_rollers.radiuss'"):
        Scenario.from_dict(d)
