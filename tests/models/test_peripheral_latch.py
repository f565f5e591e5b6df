"""Peripheral latches with mass, stops, capture sensors and capture logic (digest 9.1, 9.7, 9.8):
closed forms, brute force and exact energy ledgers against the kernels of
:mod:`models.peripheral._kernels.latch`."""
from __future__ import annotations

import math

import numpy as np
import pytest

from models.peripheral._kernels import latch as K
from models._kernels.contact_layout import CONTACT, NONE, PENETRATION_EXCEEDED, TW_SIZE
from models.errors import InputError
from models.peripheral import latches as L

S2 = math.sqrt(0.5)
R_MIN, R_MAX, X_GUIDE = 0.80, 0.85, 0.0
X_TOP = X_GUIDE + R_MAX - R_MIN          # 0.05: the crest plane P_Stop
PHI_S, HALF_W = 0.3, 0.2                 # stop azimuth and half-width [rad]
GAMMA = math.radians(60.0)               # latch inclination from the ring plane: tip ahead
ZERO3 = np.zeros(3)


def _rhat(phi):
    return np.array([0.0, math.cos(phi), math.sin(phi)])


def _pt(x, rho, phi=PHI_S):
    return np.array([x, 0.0, 0.0]) + rho * _rhat(phi)


def _stops():
    return L.pack_stops(L.stops_from_list([{"angle": PHI_S, "half_width": HALF_W,
                                            "r_min": R_MIN, "r_max": R_MAX,
                                            "x_guide": X_GUIDE}]))


def _latch(**kw):
    d = {"length": 0.06, "mass": 0.2, "stiffness": 2000.0, "preload": 10.0, "stroke": 0.03,
         "contact_stiffness": 1e5, "stop": 0, "pair": 0, "max_penetration": 0.01}
    d.update(kw)
    return L.Latch.from_dict(d)


def _n_l(phi=PHI_S, gamma=GAMMA):
    return math.sin(gamma) * np.array([1.0, 0.0, 0.0]) + math.cos(gamma) * _rhat(phi)


def _geom(tip, length, phi=PHI_S, gamma=GAMMA):
    """Latch geometry row with its undeformed tip at ``tip``."""
    n = _n_l(phi, gamma)
    return np.concatenate([tip - length * n, n])[None, :]


def _between(h, lg, lat, stp, ls, trig, full=False, o_r=ZERO3, o_p=ZERO3):
    hf = np.zeros((lat.shape[0], K.HF_SIZE))
    tot = np.zeros(K.T_SIZE)
    st = K.latches_between(h, lg, lat, stp, ls, trig, hf, tot, o_r, o_p, full)
    return st, hf, tot


# --------------------------------------------------------------------------------------------
# the stop
def _face_distance_brute(p, x0, rho0, sigma, x_lo, x_hi, n=201, levels=6):
    """Smallest distance from ``p`` to a 45-degree face patch (all azimuths of the stop's
    width): a 201 x 201 grid over the patch, refined five times around its best node (each
    level spans +-2 cells of the previous one, so the last spacing is below 1e-12 m)."""
    s_lo, s_hi, f_lo, f_hi = x_lo, x_hi, PHI_S - HALF_W, PHI_S + HALF_W
    best = math.inf
    for _ in range(levels):
        s = np.linspace(s_lo, s_hi, n)
        f = np.linspace(f_lo, f_hi, n)
        xs = s[:, None] * np.ones_like(f)[None, :]
        rs = rho0 + sigma * (xs - x0)
        pts = np.stack([xs, rs * np.cos(f)[None, :], rs * np.sin(f)[None, :]], -1)
        d = np.linalg.norm(pts - p, axis=-1)
        k = np.unravel_index(np.argmin(d), d.shape)
        best = min(best, d[k])
        ds, df = s[1] - s[0], f[1] - f[0]
        s_lo, s_hi = max(x_lo, s[k[0]] - 2 * ds), min(x_hi, s[k[0]] + 2 * ds)
        f_lo, f_hi = (max(PHI_S - HALF_W, f[k[1]] - 2 * df),
                      min(PHI_S + HALF_W, f[k[1]] + 2 * df))
    return best


def test_penetration_is_exact_distance_to_the_nearer_face():
    """Inside the ridge the depth equals the brute-force distance to the nearer 45-degree
    face patch (1e-10 m: the refined grid's spacing ends far below that, so what remains is
    rounding in the distances of O(1 m) points); outside the triangle or the width: no contact."""
    stp = _stops()
    rng = np.random.default_rng(7)
    n_in = 0
    for _ in range(40):
        x = rng.uniform(X_GUIDE - 0.01, X_TOP + 0.06)
        rho = rng.uniform(R_MIN - 0.01, R_MAX + 0.01)
        phi = PHI_S + rng.uniform(-0.9, 0.9) * HALF_W
        p = _pt(x, rho, phi)
        st, dn, nx, ny, nz, px, py, pz, feat = K.stop_solid_contact(*p, stp, 0, 1.0)
        rho_g = R_MAX - (x - X_GUIDE)
        rho_l = R_MIN + (x - X_TOP)
        inside = rho > max(rho_g, rho_l) and rho <= R_MAX
        assert (st == CONTACT) == inside
        if not inside:
            continue
        n_in += 1
        dg = _face_distance_brute(p, X_GUIDE, R_MAX, -1.0, X_GUIDE, X_TOP)
        dl = _face_distance_brute(p, X_TOP, R_MIN, 1.0, X_TOP, X_TOP + R_MAX - R_MIN)
        assert dn == pytest.approx(min(dg, dl), abs=1e-10)
        assert feat == (K.FEAT_GUIDE if dg < dl else K.FEAT_LOCK)
        sigma = -1.0 if feat == K.FEAT_GUIDE else 1.0
        assert np.allclose([nx, ny, nz], S2 * (np.array([-sigma, 0, 0]) + _rhat(phi)),
                           atol=1e-12)
        # moving the point by -depth along the normal puts it on the face
        q = p - dn * np.array([nx, ny, nz])
        rq = math.hypot(q[1], q[2])
        face = R_MAX - (q[0] - X_GUIDE) if sigma < 0 else R_MIN + (q[0] - X_TOP)
        assert rq == pytest.approx(face, abs=1e-12)
    assert n_in >= 5


def test_no_contact_outside_the_angular_width():
    stp = _stops()
    deep = (0.02, 0.84)            # well inside the triangle
    for dphi, expect in ((0.9 * HALF_W, CONTACT), (-0.9 * HALF_W, CONTACT),
                         (1.1 * HALF_W, NONE), (-1.1 * HALF_W, NONE), (math.pi, NONE)):
        st = K.stop_solid_contact(*_pt(*deep, PHI_S + dphi), stp, 0, 1.0)[0]
        assert st == expect


def test_stop_from_dict_derives_and_checks_x_top():
    d = {"angle": 0.0, "half_width": 0.1, "r_min": 0.8, "r_max": 0.85, "x_guide": 0.01}
    assert L.Stop.from_dict(d).x_top == pytest.approx(0.06)
    with pytest.raises(InputError) as e:
        L.Stop.from_dict({**d, "x_top": 0.07}, "stops[1].")
    assert e.value.key == "stops[1].x_top"


@pytest.mark.parametrize("key, value, where", [
    ("mass", 0.0, "latches[0].mass"), ("stroke", -1.0, "latches[0].stroke"),
    ("pair", 1.5, "latches[0].pair"), ("colour", 1.0, "latches[0].colour"),
    ("lock_model", "soft", "latches[0].lock_model"), ("stop", 3, "latches[0].stop")])
def test_latch_from_dict_names_the_key(key, value, where):
    d = {"length": 0.06, "mass": 0.2, "stiffness": 2000.0, "preload": 10.0, "stroke": 0.03,
         "contact_stiffness": 1e5, "stop": 0, "pair": 0, "max_penetration": 0.01}
    d[key] = value
    with pytest.raises(InputError) as e:
        L.latches_from_list([d, {**d, key: 0} if key in ("pair", "stop") else d], n_stops=1)
    assert e.value.key == where


def test_latches_must_come_in_duplicated_pairs():
    d = {"length": 0.06, "mass": 0.2, "stiffness": 2000.0, "preload": 10.0, "stroke": 0.03,
         "contact_stiffness": 1e5, "stop": 0, "pair": 0, "max_penetration": 0.01}
    with pytest.raises(InputError) as e:
        L.latches_from_list([d, d, {**d, "pair": 1}], n_stops=1)
    assert e.value.key == "latches[2].pair"
    assert len(L.latches_from_list([d, d, {**d, "pair": 1}, {**d, "pair": 1}], 1)) == 4


def test_sensor_and_tolerance_from_dict_name_the_key():
    with pytest.raises(InputError) as e:
        L.sensors_from_list([{"radius": 0.01, "preload": 1.0, "stiffness": 1.0,
                              "travel": 0.01, "trigger": 0.02}])
    assert e.value.key == "capture_sensors[0].trigger"
    with pytest.raises(InputError) as e:
        L.CaptureTolerance.from_dict({"angle": 2.0, "gap": 0.01})
    assert e.value.key == "capture.angle"


# --------------------------------------------------------------------------------------------
# latch dynamics
def test_implicit_step_equals_cramers_rule():
    """The kernel's closed form against Cramer's rule on the 2x2 system of digest 9.7 with
    k_L + k_c in the matrix, to 1e-14 of the size of the terms each formula adds (Cramer's
    numerator of v subtracts k_c x h/m, which the kernel's form never adds, so the
    reference itself carries rounding of that size)."""
    rng = np.random.default_rng(3)
    for _ in range(50):
        x, v = rng.uniform(0, 0.02), rng.uniform(-0.5, 0.5)
        h, m = rng.uniform(1e-5, 1e-3), rng.uniform(0.05, 2.0)
        kl, f0, fr, kc = (rng.uniform(100, 5e3), rng.uniform(0, 50), rng.uniform(0, 200),
                          rng.uniform(0, 1e6))
        a = np.array([[1.0, h * (kl + kc) / m], [-h, 1.0]])
        b = np.array([v + (fr + kc * x - f0) * h / m, x])
        det = a[0, 0] * a[1, 1] - a[0, 1] * a[1, 0]
        v_c = (b[0] * a[1, 1] - a[0, 1] * b[1]) / det
        x_c = (a[0, 0] * b[1] - b[0] * a[1, 0]) / det
        x_k, v_k = K.latch_implicit_step(x, v, h, 1.0 / m, kl, f0, fr, kc)
        scale_v = (abs(b[0]) + abs(a[0, 1] * b[1])) / det
        scale_x = (abs(b[1]) + abs(b[0] * a[1, 0])) / det
        assert abs(x_k - x_c) <= 1e-14 * scale_x
        assert abs(v_k - v_c) <= 1e-14 * scale_v


def _free_run(h, t_end, x0, lat, stp):
    """A latch beside its stop (no contact) released from ``x0`` at rest."""
    lg = _geom(_pt(0.02, 0.83, PHI_S + 1.0), 0.06, PHI_S + 1.0)
    ls, trig, _, _ = L.new_latch_state(1)
    ls[0, K.LS_X] = x0
    n = int(round(t_end / h))
    for _ in range(n):
        st, hf, tot = _between(h, lg, lat, stp, ls, trig)
        assert st == (NONE, -1)
        assert np.all(hf[0, :3] == 0.0)    # nothing touches it
    return ls, tot


def test_free_latch_tracks_the_exact_solution_at_first_order():
    """No contact: m x'' = -k_L x - f_L0 from x0 at rest, x(t) = -f0/k + (x0 + f0/k) cos wt
    (w = 100 rad/s; the internal stop is reached at wt = acos(0.2) ~ 1.37, the check is at
    wt = 1). Implicit Euler's global error is O(h): halving h halves it (ratio within
    2 +- 0.15 at these steps, h w <= 0.01)."""
    lt = _latch()
    lat, stp = L.pack_latches([lt]), _stops()
    w = math.sqrt(lt.stiffness / lt.mass)
    x0, t_end = 0.02, 0.01
    exact = -lt.preload / lt.stiffness + (x0 + lt.preload / lt.stiffness) * math.cos(w * t_end)
    errs = []
    for h in (1e-4, 5e-5, 2.5e-5):
        ls, tot = _free_run(h, t_end, x0, lat, stp)
        errs.append(abs(ls[0, K.LS_X] - exact))
        # ledger with no contact and no stop: E_n + D_num = E_0 (rounding only)
        e0 = 0.5 * lt.stiffness * x0 ** 2 + lt.preload * x0
        assert tot[K.T_ESPRING] + tot[K.T_EKIN] + tot[K.T_DNUM] == pytest.approx(e0, rel=1e-12)
        assert tot[K.T_DSTOP] == 0.0 and tot[K.T_WC] == 0.0
    assert errs[0] < 1e-2 * x0
    for a, b in zip(errs, errs[1:]):
        assert 1.85 < a / b < 2.15


def test_numerical_dissipation_is_first_order_and_stop_takes_the_impact_energy():
    """Released from x0, the latch hits its internal stop: D_num halves with h (it is
    implicit Euler's O(h) loss) and the stop takes the rest, so that D_num + D_stop equals
    the initial energy exactly (the latch ends at rest on the stop)."""
    lt = _latch()
    lat, stp = L.pack_latches([lt]), _stops()
    x0 = 0.02
    e0 = 0.5 * lt.stiffness * x0 ** 2 + lt.preload * x0
    d_num = []
    for h in (1e-4, 5e-5, 2.5e-5):
        ls, tot = _free_run(h, 0.03, x0, lat, stp)
        assert ls[0, K.LS_X] == 0.0 and ls[0, K.LS_V] == 0.0
        assert tot[K.T_DNUM] + tot[K.T_DSTOP] == pytest.approx(e0, rel=1e-12)
        d_num.append(tot[K.T_DNUM])
        assert tot[K.T_DSTOP] > 0.9 * e0      # most of it is the impact's kinetic energy
    for a, b in zip(d_num, d_num[1:]):
        assert 1.8 < a / b < 2.2


def _pushed(delta_l0, **kw):
    """A latch whose undeformed tip is ``delta_l0`` (lateral) below the guide face at
    x = 0.02; returns lat, stp, lg, c = n_L . n_R, the normal depth dn0."""
    lt = _latch(**kw)
    lat, stp = L.pack_latches([lt]), _stops()
    tip = _pt(0.02, R_MAX - 0.02 + delta_l0)
    lg = _geom(tip, lt.length)
    n_r = S2 * (np.array([1.0, 0, 0]) + _rhat(PHI_S))
    c = float(_n_l() @ n_r)
    return lt, lat, stp, lg, c, delta_l0 * S2


@pytest.mark.parametrize("full", [False, True])
def test_static_equilibrium_against_a_fixed_guide_face(full):
    """Guide face held fixed, tip penetrating dn0 when undeformed: the depth falls as
    dn0 - c x (c = n_L . n_R, exact for a face in the latch's meridian plane), so equilibrium
    k_L x + f_L0 = k_LS c (dn0 - c x) gives x = (k_c x_push - f_L0)/(k_L + k_c) with
    k_c = k_LS c^2, x_push = dn0 / c. Implicit Euler's fixed point is exact (the linearised
    force is the force), so after the transient decays (600 steps at a decay of 8 % per step)
    the retraction agrees to 1e-12 relative. Ring force: -(k_L x + f_L0) n_L, or with the
    full-normal switch -f_n n_R, which at equilibrium is the same axial part plus the
    transverse part."""
    lt, lat, stp, lg, c, dn0 = _pushed(0.004)
    kc = lt.contact_stiffness * c * c
    x_eq = (kc * dn0 / c - lt.preload) / (lt.stiffness + kc)
    assert 0.0 < x_eq < lt.stroke
    ls, trig, _, _ = L.new_latch_state(1)
    for _ in range(600):
        st, hf, tot = _between(1e-3, lg, lat, stp, ls, trig, full)
    assert st == (NONE, -1) and trig[0] == 0
    assert ls[0, K.LS_X] == pytest.approx(x_eq, rel=1e-12)
    f_spring = lt.stiffness * x_eq + lt.preload
    assert ls[0, K.LS_FRL] == pytest.approx(f_spring, rel=1e-9)
    fn = lt.contact_stiffness * (dn0 - c * x_eq)
    n_r = S2 * (np.array([1.0, 0, 0]) + _rhat(PHI_S))
    expect = -fn * n_r if full else -f_spring * _n_l()
    assert np.allclose(hf[0, K.HF_F:K.HF_F + 3], expect, rtol=1e-9, atol=1e-9)
    assert np.allclose(tot[K.T_FP:K.T_FP + 3], -expect, rtol=1e-9, atol=1e-9)
    # application point: the deformed tip
    tip = lg[0, :3] + (lt.length - x_eq) * _n_l()
    assert np.allclose(hf[0, K.HF_P:K.HF_P + 3], tip, atol=1e-12)


def test_internal_stop_holds_while_contact_force_is_below_preload():
    """f_RL = c k_LS dn0 below f_L0: x_L = v_L = 0 exactly and the ring gets the contact's
    axial part f_RL (the internal stop carries the rest of the preload); just above f_L0 the
    latch starts to retract."""
    lt = _latch()
    c = float(_n_l() @ (S2 * (np.array([1.0, 0, 0]) + _rhat(PHI_S))))
    dl_at_preload = lt.preload / (c * lt.contact_stiffness) / S2
    for factor, moves in ((0.7, False), (0.999, False), (1.05, True)):
        lt, lat, stp, lg, c, dn0 = _pushed(factor * dl_at_preload)
        ls, trig, _, _ = L.new_latch_state(1)
        for _ in range(50):
            st, hf, tot = _between(1e-4, lg, lat, stp, ls, trig)
        if moves:
            assert ls[0, K.LS_X] > 0.0
            continue
        assert ls[0, K.LS_X] == 0.0 and ls[0, K.LS_V] == 0.0
        f_rl = c * lt.contact_stiffness * dn0
        assert np.allclose(hf[0, :3], -f_rl * _n_l(), rtol=1e-12)
        assert tot[K.T_DSTOP] == 0.0 and tot[K.T_WC] == 0.0


def test_stroke_limit_bottoms_the_latch_and_passes_the_contact_force():
    """Pushed beyond its stroke, the latch rests at the limit and the ring gets the larger of
    the spring force and the contact's axial part."""
    lt, lat, stp, lg, c, dn0 = _pushed(0.02, stroke=0.005)
    ls, trig, _, _ = L.new_latch_state(1)
    for _ in range(200):
        st, hf, tot = _between(1e-4, lg, lat, stp, ls, trig)
    assert ls[0, K.LS_X] == lt.stroke and ls[0, K.LS_V] == 0.0
    f_rl = c * lt.contact_stiffness * (dn0 - c * lt.stroke)
    assert f_rl > lt.stiffness * lt.stroke + lt.preload
    assert np.allclose(hf[0, :3], -f_rl * _n_l(), rtol=1e-12)


def test_penetration_limit_is_reported():
    lt, lat, stp, lg, c, dn0 = _pushed(0.02, max_penetration=1e-3, stroke=0.001)
    ls, trig, _, _ = L.new_latch_state(1)
    st, hf, tot = _between(1e-4, lg, lat, stp, ls, trig)
    assert st == (PENETRATION_EXCEEDED, 0)


# --------------------------------------------------------------------------------------------
# trigger
def test_trigger_at_the_hand_computed_axial_position():
    """Latch at 60 degrees to the ring plane, base at rho_A = 0.78 < R_min, tip at 0.86 >
    R_max (so it never touches the stop and x_L stays 0). Its segment crosses P_Stop at
    d_C = rho_A + (x_top - x_A) cot(gamma), inside R_min for
    x_A > x_top - (R_min - rho_A) tan(gamma) = 0.015359...; 1e-9 m either side decides."""
    lt = _latch(length=0.16)
    lat, stp = L.pack_latches([lt]), _stops()
    rho_a = 0.78
    x_star = X_TOP - (R_MIN - rho_a) * math.tan(GAMMA)
    for dx, expect in ((-1e-9, 0), (1e-9, 1)):
        a = _pt(x_star + dx, rho_a)
        lg = np.concatenate([a, _n_l()])[None, :]
        ls, trig, _, _ = L.new_latch_state(1)
        st, hf, tot = _between(1e-4, lg, lat, stp, ls, trig)
        assert trig[0] == expect
        assert ls[0, K.LS_X] == 0.0 and np.all(hf[0, :3] == 0.0)


def test_latch_beside_its_stop_neither_touches_nor_triggers():
    lt = _latch(length=0.16)
    lat, stp = L.pack_latches([lt]), _stops()
    phi = PHI_S + 1.5 * HALF_W
    for x_a in np.linspace(-0.05, 0.06, 23):
        lg = np.concatenate([_pt(x_a, 0.78, phi), _n_l(phi)])[None, :]
        ls, trig, _, _ = L.new_latch_state(1)
        st, hf, tot = _between(1e-4, lg, lat, stp, ls, trig)
        assert trig[0] == 0 and np.all(hf[0, :3] == 0.0) and ls[0, K.LS_X] == 0.0


def _drive(h, u=0.05, t_end=0.75, full=False):
    """The ring (and so the latch base) driven at u along +X_PU over the ridge; the undeformed
    tip starts at (0.035, 0.81), 5 mm in front of the guide face (rho_g(0.04) = 0.81).
    Returns the latch, its tables, the per-step history and the moment reference points."""
    lt = _latch()
    lat, stp = L.pack_latches([lt]), _stops()
    tip0 = _pt(0.035, 0.81)
    ls, trig, _, _ = L.new_latch_state(1)
    hist = []
    n = int(round(t_end / h))
    o_r, o_p = np.array([0.1, -0.2, 0.3]), np.array([-0.4, 0.5, 0.05])
    for k in range(1, n + 1):
        lg = _geom(tip0 + np.array([u * k * h, 0, 0]), lt.length)
        was = trig[0]
        st, hf, tot = _between(h, lg, lat, stp, ls, trig, full, o_r, o_p)
        assert st == (NONE, -1)
        hist.append((k * h, ls[0, K.LS_X], ls[0, K.LS_V], trig[0], was, tot.copy(), hf.copy(),
                     lg.copy()))
    return lt, lat, stp, hist, o_r, o_p


def test_driven_latch_triggers_just_past_the_crest_and_ledger_closes():
    """Driven over the ridge at u = 0.05 m/s: the guide contact starts after X_c = 5 mm of
    drive; on the face the tip (x, rho) = (0.035 + X - x_L sin g, 0.81 - x_L cos g) stays
    on rho = 0.85 - x, so the quasi-static retraction is x_L = (X - X_c)/(sin g + cos g) and
    the tip reaches the crest (rho = R_min, x_L = 0.01 / cos g = 0.02) at
    X = X_c + 0.02 (sin g + cos g), up to the contact's static deflection. Past the crest the
    tip leaves both faces and the spring throws the latch out along its own line, which does
    not move the line: its crossing with P_Stop stays at the radius rho_E the tip had when it
    crossed P_Stop (R_min plus the lateral contact deflection) and moves inwards only with
    the drive, so the trigger comes at X_cross + (rho_E - R_min) tan(g) (within two steps of
    drive, 1e-5 m). The ledger E_n - E_0 = W_c - D_num - D_stop holds at every step to
    1e-12 J (rounding of sums of O(0.1) J terms); after the release no work comes in and the
    internal stop takes most of the released energy."""
    h, u, x_c, sc = 1e-4, 0.05, 0.005, math.sin(GAMMA) + math.cos(GAMMA)
    lt, lat, stp, hist, o_r, o_p = _drive(h)

    def tip(r):
        return r[7][0, :3] + (lt.length - r[1]) * r[7][0, 3:]
    t_crest = (x_c + 0.02 * sc) / u
    k_cross = next(i for i, r in enumerate(hist) if tip(r)[0] >= X_TOP)
    # the tip penetrates the face laterally by Delta_L < 1 mm, so it reaches P_Stop
    # Delta_L tan(g) / u < 0.035 s before the rigid-face estimate
    assert t_crest - 0.035 < hist[k_cross][0] <= t_crest
    assert all(r[3] == 0 for r in hist[:k_cross + 1])
    p = tip(hist[k_cross])
    rho_cross = math.hypot(p[1], p[2]) - (p[0] - X_TOP) / math.tan(GAMMA)   # on P_Stop
    x_pred = u * hist[k_cross][0] + (rho_cross - R_MIN) * math.tan(GAMMA)
    k_trig = next(i for i, r in enumerate(hist) if r[3] == 1)
    assert u * hist[k_trig][0] == pytest.approx(x_pred, abs=2 * u * h)
    # quasi-static retraction half-way down the face, less the contact's static deflection
    # along the latch (k_L x + f0)/(k_LS c^2) (exact for a face: 5e-5 m covers the drag of
    # the moving latch, m x'' ~ 0 and no damping, so only the transient's residue)
    k_half = int(round(0.5 * (x_c / u + t_crest) / h)) - 1
    x_qs = (u * hist[k_half][0] - x_c) / sc
    defl = (lt.stiffness * x_qs + lt.preload) / (lt.contact_stiffness * sc * sc / 2.0)
    assert hist[k_half][1] == pytest.approx(x_qs - defl, abs=5e-5)
    # ends at rest on the internal stop
    assert hist[-1][1] == 0.0 and hist[-1][2] == 0.0
    for t, x, v, tr, was, tot, hf, lg in hist:
        e = tot[K.T_ESPRING] + tot[K.T_EKIN]
        assert e == pytest.approx(tot[K.T_WC] - tot[K.T_DNUM] - tot[K.T_DSTOP], abs=1e-12)
    k_free = next(i for i in range(k_cross, len(hist)) if not hist[i][6][0, :3].any())
    tot_free, tot_end = hist[k_free][5], hist[-1][5]
    e_free = tot_free[K.T_ESPRING] + tot_free[K.T_EKIN]
    assert e_free > 0.3
    assert tot_end[K.T_WC] == tot_free[K.T_WC]
    assert tot_end[K.T_DSTOP] - tot_free[K.T_DSTOP] > 0.8 * e_free


def _drive_sub(h, n_sub, u=0.05, t_end=0.75, full=False):
    """:func:`_drive` with ``latches_between_sub``: steps ``h`` cut into ``n_sub`` sub-steps
    over the linearly moving geometry; also the trigger fractions."""
    lt = _latch()
    lat, stp = L.pack_latches([lt]), _stops()
    tip0 = _pt(0.035, 0.81)
    ls, trig, _, _ = L.new_latch_state(1)
    hf = np.zeros((1, K.HF_SIZE))
    tot = np.zeros(K.T_SIZE)
    lgs = np.zeros((1, K.LG_SIZE))
    tfrac = np.ones(1)
    o_r, o_p = np.array([0.1, -0.2, 0.3]), np.array([-0.4, 0.5, 0.05])
    hist = []
    lg0 = _geom(tip0, lt.length)
    for k in range(1, int(round(t_end / h)) + 1):
        lg = _geom(tip0 + np.array([u * k * h, 0, 0]), lt.length)
        st = K.latches_between_sub(h, n_sub, lg0, lg, lgs, lat, stp, ls, trig, hf, tot, o_r,
                                   o_p, full, tfrac)
        assert st == (NONE, -1)
        hist.append((k * h, ls[0].copy(), trig[0], tot.copy(), hf.copy(), tfrac[0]))
        lg0 = lg
    return hist


def test_one_latch_sub_step_is_the_plain_latch_step():
    """``n_sub = 1`` is :func:`latches_between` to the last bit (state, held forces,
    totals), over the whole drive across the ridge and the release."""
    h = 2e-4
    lt, lat, stp, hist, o_r, o_p = _drive(h, full=True)
    sub = _drive_sub(h, 1, full=True)
    assert len(sub) == len(hist)
    for (t, x, v, tr, was, tot, hf, lg), (_, ls, trs, tots, hfs, _) in zip(hist, sub):
        assert (x, v, tr) == (ls[K.LS_X], ls[K.LS_V], trs)
        assert np.array_equal(tot, tots) and np.array_equal(hf, hfs)


@pytest.mark.parametrize("full", [False, True])
def test_sub_stepped_latch_is_the_fine_stepped_latch(full):
    """Steps of 1 ms cut into 10 sub-steps over the linearly driven geometry are the 0.1-ms
    plain steps at every 1-ms mark: retraction, rate, ledger and held forces to 1e-9 of
    their scale (the interpolated geometry differs from the directly computed one by
    rounding only, which the stiff contact (1e5 N/m) amplifies to ~1e-11 m), the trigger
    in the same sub-step and its time from the fraction to rounding. Without the sub-steps
    the 1-ms step is millimetres off after the release and dissipates several times more."""
    fine = _drive(1e-4, full=full)[3]
    sub = _drive_sub(1e-3, 10, full=full)
    assert len(fine) == 10 * len(sub)
    for k, (t, ls, tr, tot, hf, tf) in enumerate(sub):
        tf_, x, v, trf, was, totf, hff, lg = fine[10 * k + 9]
        assert t == pytest.approx(tf_, abs=1e-15)
        assert trf == tr
        assert ls[K.LS_X] == pytest.approx(x, abs=1e-11)
        assert ls[K.LS_V] == pytest.approx(v, abs=1e-9)
        assert np.allclose(tot, totf, rtol=1e-9, atol=1e-9)
        assert np.allclose(hf, hff, rtol=1e-9, atol=1e-7)
        e = tot[K.T_ESPRING] + tot[K.T_EKIN]
        assert e == pytest.approx(tot[K.T_WC] - tot[K.T_DNUM] - tot[K.T_DSTOP], abs=1e-12)
    k_fine = next(i for i, r in enumerate(fine) if r[3] == 1)
    k_sub = next(i for i, r in enumerate(sub) if r[2] == 1)
    assert k_sub == k_fine // 10
    t_trig = sub[k_sub][0] - 1e-3 * (1.0 - sub[k_sub][5])
    assert t_trig == pytest.approx(fine[k_fine][0], abs=1e-12)
    # the plain 1-ms step: the release (the spring throwing the latch out against the
    # contact, 707 rad/s: omega h = 0.7) is off by millimetres and its numerical
    # dissipation is several times the fine steps' (measured: 4.7 mm, 8.8 times)
    coarse = _drive(1e-3, full=full)[3]
    err = max(abs(c[1] - fine[10 * k + 9][1]) for k, c in enumerate(coarse))
    assert err > 1e-3
    assert coarse[-1][5][K.T_DNUM] > 5.0 * fine[-1][5][K.T_DNUM]
    assert sub[-1][3][K.T_DNUM] == pytest.approx(fine[-1][5][K.T_DNUM], rel=1e-9)


@pytest.mark.parametrize("f0", [0.0, 40.0])
@pytest.mark.parametrize("k_l", [0.0, 2.0e3])
@pytest.mark.parametrize("h", [1e-5, 2e-4, 5e-3])
def test_a_triggered_latch_at_rest_steps_to_rest_with_nothing_booked(f0, k_l, h):
    """The premise of the kernels' skip (``peripheral_latch._at_rest``): a triggered latch
    (no guide contact) resting on its internal stop is a fixed point of the step. The
    implicit step from rest under a preload >= 0 (the loader refuses a negative one) ends at
    or below the stop, the stop puts it back at rest, and every ledger term it books is
    exactly zero, so skipping the step changes no bit."""
    m = 0.5
    xn, vn = K.latch_implicit_step(0.0, 0.0, h, 1.0 / m, k_l, f0, 0.0, 0.0)
    # ends at or below the stop, so _advance takes its limit branch back to (0, 0) ...
    assert xn <= 0.0 and vn <= 0.0
    # ... whose booking, es0 + ek0 + work - es1 - ek1 with work = 0 (no contact, no motion),
    # is zero exactly because the energy at rest on the stop is exactly zero
    assert K.latch_energy(0.0, 0.0, m, k_l, f0) == (0.0, 0.0)


def test_released_latch_comes_to_rest_and_stays_there_bit_for_bit():
    """Driven across the ridge, the latch triggers, its spring returns it to the internal
    stop and it rests there: from that step on its state is (0, 0) and its ledger totals do
    not change by a bit, sub-stepped or not (the skip of ``_at_rest`` and the steps it
    replaces agree)."""
    sub = [(ls[K.LS_X], ls[K.LS_V], tr, tot) for _, ls, tr, tot, _, _ in
           _drive_sub(1e-3, 5, full=True)]
    plain = [(x, v, tr, tot) for _, x, v, tr, _, tot, _, _ in _drive(2e-4, full=True)[3]]
    for hist in (sub, plain):
        k0 = next((k for k, (x, v, tr, _) in enumerate(hist)
                   if tr == 1 and x == 0.0 and v == 0.0), None)
        assert k0 is not None and k0 < len(hist) - 10, "the drive must bring it to rest"
        ledger = slice(K.T_ESPRING, K.T_DSTOP + 1)
        for x, v, tr, tot in hist[k0:]:
            assert (x, v, tr) == (0.0, 0.0, 1)
            assert np.array_equal(tot[ledger], hist[k0][3][ledger])


@pytest.mark.parametrize("full", [False, True])
def test_latch_forces_are_equal_and_opposite(full):
    """Momentum: F_ring + F_passive = 0 and, with moments about different reference points,
    M_ring + M_passive + (o_ring - o_passive) x F_ring = 0 (1e-12 relative) at every step."""
    lt, lat, stp, hist, o_r, o_p = _drive(2e-4, full=full)
    nonzero = 0
    for t, x, v, tr, was, tot, hf, lg in hist:
        fr, fp = tot[K.T_FR:K.T_FR + 3], tot[K.T_FP:K.T_FP + 3]
        mr, mp = tot[K.T_MR:K.T_MR + 3], tot[K.T_MP:K.T_MP + 3]
        scale = 1.0 + np.abs(fr).max()
        assert np.allclose(fr + fp, 0.0, atol=1e-12 * scale)
        assert np.allclose(mr + mp + np.cross(o_r - o_p, fr), 0.0, atol=1e-12 * scale)
        p = hf[0, K.HF_P:K.HF_P + 3]
        assert np.allclose(mr, np.cross(p - o_r, fr), atol=1e-12 * scale)
        nonzero += np.abs(fr).max() > 1.0
    assert nonzero > 100


# --------------------------------------------------------------------------------------------
# post-trigger contacts
def _triggered(tip, length=0.06, law=None):
    lt = _latch(length=length, **(law or {}))
    lat, stp = L.pack_latches([lt]), _stops()
    ls, trig, _, _ = L.new_latch_state(1)
    trig[0] = 1
    return lt, lat, stp, _geom(tip, length), ls, trig


def _stage(lg, lat, stp, ls, trig, tw_r=None, tw_p=None):
    acc = np.zeros(K.A_SIZE)
    tw_r = np.zeros(TW_SIZE) if tw_r is None else tw_r
    tw_p = np.zeros(TW_SIZE) if tw_p is None else tw_p
    st = K.latches_stage(lg, lat, stp, ls, trig, tw_r, tw_p, acc)
    return st, acc


def test_locking_face_resists_separation_not_approach():
    """Triggered latch (60 degrees, 0.06 m), tip behind the stop at (x_top + 0.01, R_min +
    0.004), clear of the locking face by 0.006 (lateral). Moving the unit back by s
    (separating, -X): the tip penetrates the locking face by (s - 0.006)/sqrt 2, and the
    latch segment, whose crossing with P_Stop is at d_C = 0.804 - (0.01 - s) cot(g), meets the
    crest circle by (d_C - R_min)/sqrt 2; both push the passive unit along
    (-1, rho_hat)/sqrt 2 (towards -X) and the ring towards +X, and grow with s. Moving it
    forward (s < 0) gives nothing. The printed orientation (locking face like the guide
    face, normal +X) would do the opposite."""
    n_r = S2 * (np.array([-1.0, 0, 0]) + _rhat(PHI_S))
    totals = []
    for s in (-0.004, -0.001, 0.0, 0.004, 0.006, 0.007, 0.008):
        tip = _pt(X_TOP + 0.01 - s, R_MIN + 0.004)
        lt, lat, stp, lg, ls, trig = _triggered(tip)
        st, acc = _stage(lg, lat, stp, ls, trig)
        assert st[0] in (NONE, CONTACT)
        dn_tip = max(0.0, (s - 0.006) * S2)
        d_c = R_MIN + 0.004 - (0.01 - s) / math.tan(GAMMA)
        dn_crest = max(0.0, (d_c - R_MIN) * S2)
        fp = acc[K.A_FP:K.A_FP + 3]
        assert np.allclose(fp, lt.contact_stiffness * (dn_tip + dn_crest) * n_r, atol=1e-9)
        totals.append(dn_tip + dn_crest)
        if s <= 0.0:
            assert np.all(acc == 0.0)
        else:
            assert acc[K.A_FR] > 0.0 and fp[0] < 0.0
    assert all(a < b for a, b in zip(totals[2:], totals[3:]))


def test_segment_across_the_crest():
    """A triggered latch whose segment crosses P_Stop outside R_min: depth
    (d_C - R_min)/sqrt 2 at C, normal (-1, rho_hat)/sqrt 2 (the tip itself is beyond the
    ridge's base, so it is the only contact)."""
    lt = _latch(length=0.16)
    lat, stp = L.pack_latches([lt]), _stops()
    rho_a = 0.785
    x_a = X_TOP - 0.02 * math.tan(GAMMA)     # crossing at rho_a + 0.02 = 0.805
    lg = np.concatenate([_pt(x_a, rho_a), _n_l()])[None, :]
    ls, trig, _, _ = L.new_latch_state(1)
    trig[0] = 1
    st, acc = _stage(lg, lat, stp, ls, trig)
    dn = (rho_a + 0.02 - R_MIN) * S2
    n_r = S2 * (np.array([-1.0, 0, 0]) + _rhat(PHI_S))
    assert np.allclose(acc[K.A_FP:K.A_FP + 3], lt.contact_stiffness * dn * n_r, rtol=1e-9)
    c = _pt(X_TOP, rho_a + 0.02)
    assert np.allclose(acc[K.A_MP:K.A_MP + 3], np.cross(c, acc[K.A_FP:K.A_FP + 3]),
                       rtol=1e-9, atol=1e-12)


def test_stage_contact_law_momentum_and_dissipated_power():
    """Post-trigger contact through the law of 5 with damping and friction, moving bodies:
    forces equal and opposite, moments consistent about the twists' points, and the powers
    close: elastic k dn dn_dot, dissipated c dn_dot^2 + friction power (>= 0), their sum the
    power f . v_rel transferred at the contact."""
    law = {"lock_stiffness": 2e5, "lock_damping": 300.0, "lock_friction": 0.2,
           "lock_friction_velocity": 1e-3}
    # 0.003 (lateral) below the locking face; the short latch's base is behind P_Stop too,
    # so the tip is the only contact
    tip = _pt(X_TOP + 0.03, R_MIN + 0.033)
    lt, lat, stp, lg, ls, trig = _triggered(tip, length=0.03, law=law)
    tw_r = np.array([-0.03, 0.01, 0.02, 0.05, -0.02, 0.1, 0.2, 0.1, -0.1])
    tw_p = np.array([0.01, 0.0, -0.01, -0.01, 0.03, 0.0, -0.3, 0.2, 0.4])
    st, acc = _stage(lg, lat, stp, ls, trig, tw_r, tw_p)
    assert st[0] in (NONE, CONTACT)
    fr, fp = acc[K.A_FR:K.A_FR + 3], acc[K.A_FP:K.A_FP + 3]
    assert np.allclose(fr + fp, 0.0, atol=1e-12)
    o_r, o_p = tw_r[6:9], tw_p[6:9]
    assert np.allclose(acc[K.A_MR:K.A_MR + 3], np.cross(tip - o_r, fr), atol=1e-12)
    assert np.allclose(acc[K.A_MP:K.A_MP + 3], np.cross(tip - o_p, fp), atol=1e-12)
    v_rel = (tw_r[:3] + np.cross(tw_r[3:6], tip - o_r)) - (tw_p[:3] + np.cross(tw_p[3:6],
                                                                                 tip - o_p))
    n_r = S2 * (np.array([-1.0, 0, 0]) + _rhat(PHI_S))
    dn, dd = 0.003 * S2, float(n_r @ v_rel)
    assert acc[K.A_PEL] == pytest.approx(2e5 * dn * dd, rel=1e-12)
    vt = v_rel - dd * n_r
    fn = 2e5 * dn + 300.0 * dd
    assert fn > 0
    p_fric = 0.2 * fn * float(vt @ vt) / math.sqrt(float(vt @ vt) + 1e-6)
    assert acc[K.A_PDISS] == pytest.approx(300.0 * dd * dd + p_fric, rel=1e-9)
    assert acc[K.A_PEL] + acc[K.A_PDISS] == pytest.approx(float(fp @ v_rel), rel=1e-12)


def test_untriggered_latches_have_no_stage_contact():
    tip = _pt(0.02, 0.84)          # deep under the guide face
    lt, lat, stp, lg, ls, trig = _triggered(tip)
    trig[0] = 0
    st, acc = _stage(lg, lat, stp, ls, trig)
    assert st == (NONE, -1) and np.all(acc == 0.0)


# --------------------------------------------------------------------------------------------
# capture sensors
def _sensor_run(x_s, travel=0.01, trig=0.004):
    sen = L.pack_sensors(L.sensors_from_list([{"radius": 0.015, "preload": 5.0,
                                               "stiffness": 800.0, "travel": travel,
                                               "trigger": trig}]))
    plane = L.ring_plane(0.0, 0.6, 0.9)
    ps = np.array([[x_s, 0.7 * math.cos(1.0), 0.7 * math.sin(1.0)]])
    sw = np.zeros(1, np.int64)
    so = np.zeros((1, K.SO_SIZE))
    acc = np.zeros(K.A_SIZE)
    o_r, o_p = np.array([0.3, 0.1, -0.2]), np.array([-0.5, 0.2, 0.1])
    K.sensors_force(ps, sen, plane, sw, so, acc, o_r, o_p)
    return sw[0], so[0], acc, ps[0], o_r, o_p


def test_sensor_switches_at_the_hand_computed_position():
    """Sphere R_S = 15 mm against the plane x = 0: stroke x_S + R_S; switching at 4 mm, i.e.
    x_S = -0.011 (1e-9 m either side decides); force f_s0 + k_s delta, capped at travel."""
    x_sw = 0.0 - 0.015 + 0.004
    assert _sensor_run(x_sw - 1e-9)[0] == 0
    sw, so, acc, p, o_r, o_p = _sensor_run(x_sw + 1e-9)
    assert sw == 1
    assert so[K.SO_DELTA] == pytest.approx(0.004, abs=2e-9)
    assert so[K.SO_F] == pytest.approx(5.0 + 800.0 * 0.004, rel=1e-6)
    assert _sensor_run(-0.016)[1][K.SO_F] == 0.0       # not touching: no preload either
    sw, so, acc, p, o_r, o_p = _sensor_run(0.01)        # 25 mm > travel
    assert so[K.SO_DELTA] == 0.01 and so[K.SO_F] == pytest.approx(5.0 + 800.0 * 0.01)
    fr, fp = acc[K.A_FR:K.A_FR + 3], acc[K.A_FP:K.A_FP + 3]
    assert np.allclose(fp, [so[K.SO_F], 0, 0]) and np.allclose(fr + fp, 0.0)
    q = np.array([0.0, p[1], p[2]])
    assert np.allclose(acc[K.A_MR:K.A_MR + 3], np.cross(q - o_r, fr), atol=1e-12)
    assert np.allclose(acc[K.A_MP:K.A_MP + 3], np.cross(q - o_p, fp), atol=1e-12)


@pytest.mark.parametrize("x_s", [-0.012, -0.008, 0.0, 0.004])
def test_sensor_potential_is_the_force_potential(x_s):
    """The force on the passive unit is dU/dx_S (central difference, step 1e-7 m: error
    below 1e-6 N for the piecewise-quadratic U away from its kinks)."""
    e = 1e-7
    u_p = _sensor_run(x_s + e)[2][K.A_ESENS]
    u_m = _sensor_run(x_s - e)[2][K.A_ESENS]
    assert (u_p - u_m) / (2 * e) == pytest.approx(_sensor_run(x_s)[1][K.SO_F], abs=1e-6)


# --------------------------------------------------------------------------------------------
# capture
CASES = [
    # triggered latches (pairs: 0,0,1,1,2,2), aligned, expected capture
    ((0, 0, 0, 0, 0, 0), True, 0),
    ((1, 0, 1, 0, 1, 0), True, 1),
    ((0, 1, 1, 0, 0, 1), True, 1),
    ((1, 1, 1, 1, 0, 0), True, 0),     # pair 2 has none
    ((1, 1, 1, 1, 1, 1), True, 1),
    ((1, 0, 0, 0, 1, 1), True, 0),     # pair 1 has none
    ((1, 1, 1, 1, 1, 1), False, 0),    # all triggered, planes not aligned
]


@pytest.mark.parametrize("flags, aligned, expect", CASES)
def test_capture_needs_one_latch_of_each_pair(flags, aligned, expect):
    d = {"length": 0.06, "mass": 0.2, "stiffness": 2000.0, "preload": 10.0, "stroke": 0.03,
         "contact_stiffness": 1e5, "stop": 0, "max_penetration": 0.01}
    lats = L.latches_from_list([{**d, "pair": p} for p in (0, 0, 1, 1, 2, 2)], n_stops=1)
    lat = L.pack_latches(lats)
    tol = L.CaptureTolerance(angle=math.radians(1.0), gap=0.002)
    trig = np.array(flags, dtype=np.int64)
    out = np.full(6, -1, dtype=np.int64)
    cos_rel = math.cos(math.radians(0.5))
    cap = K.capture_state(trig, lat, L.n_pairs(lats), cos_rel, 0.001 if aligned else 0.003,
                          tol.cos_angle, tol.gap, out)
    assert cap == expect
    assert list(out) == list(flags)
    if aligned and expect:
        # the angle bound alone also refuses
        assert K.capture_state(trig, lat, 3, math.cos(math.radians(1.5)), 0.0,
                               tol.cos_angle, tol.gap, out) == 0


def test_direct_construction_is_validated_too():
    with pytest.raises(InputError) as e:
        L.Latch(length=0.06, mass=-1.0, stiffness=1.0, preload=0.0, stroke=0.01,
                contact_stiffness=1e5, stop=0, pair=0, max_penetration=1e-3)
    assert e.value.key == "latch.mass"
    with pytest.raises(InputError) as e:
        L.CaptureSensor(radius=0.01, preload=1.0, stiffness=1.0, travel=0.01, trigger=0.0)
    assert e.value.key == "sensor.trigger"
    with pytest.raises(InputError) as e:
        L.Stop(angle=0.0, half_width=0.1, r_min=0.8, r_max=0.85, x_guide=0.0, x_top=0.06)
    assert e.value.key == "stop.x_top"


# ---- the passive inner wall in front of, beside and behind the stop ------------------------
X_WALL = -0.03


def _walled():
    return L.pack_stops(L.stops_from_list([{"angle": PHI_S, "half_width": HALF_W,
                                            "r_min": R_MIN, "r_max": R_MAX,
                                            "x_guide": X_GUIDE, "x_wall": X_WALL}]))


@pytest.mark.parametrize("x, rho, phi, feat, depth, normal", [
    # in front of the guide face, 4 mm beyond the wall radius, 25 mm behind the ring plane
    (-0.005, R_MAX + 0.004, PHI_S, K.FEAT_WALL, 0.004, (0.0, 1.0)),
    # beside the stop (outside its angular width), behind the crest: wall
    (0.06, R_MAX + 0.002, PHI_S + HALF_W + 0.1, K.FEAT_WALL, 0.002, (0.0, 1.0)),
    # 1 mm behind the ring plane, 8 mm beyond the wall (past the 5 mm fillet): the plane
    (X_WALL + 0.001, R_MAX + 0.008, PHI_S, K.FEAT_FACE, 0.001, (1.0, 0.0)),
    # 3 mm beyond the wall, 8 mm behind the plane (past the fillet): the wall
    (X_WALL + 0.008, R_MAX + 0.003, PHI_S, K.FEAT_WALL, 0.003, (0.0, 1.0)),
    # in the stop's base just behind its R_max edge: below the guide face line
    (X_GUIDE + 0.002, R_MAX + 0.001, PHI_S, K.FEAT_GUIDE, 0.003 * S2, (S2, S2)),
])
def test_wall_closed_forms(x, rho, phi, feat, depth, normal):
    # depths and normals by hand: wall rho - R_max, plane x - x_wall, guide line
    # (rho - (R_max - (x - x_0))) / sqrt 2; normals (n_x, n_rho) active -> passive
    p = _pt(x, rho, phi)
    st, dn, nx, ny, nz, px, py, pz, f = K.stop_solid_contact(*p, _walled(), 0, 1.0)
    assert st == CONTACT and f == feat
    assert dn == pytest.approx(depth, rel=1e-9, abs=1e-12)
    n = np.array([nx, ny, nz])
    assert np.allclose(n, normal[0] * np.array([1.0, 0, 0]) + normal[1] * _rhat(phi),
                       atol=1e-12)


def test_wall_is_continuous_onto_the_guide_face():
    # a tip sliding along the wall at 1 mm beyond it meets the guide face at the R_max edge
    # with the same penetration scale: depth 1 mm on the wall, 1/sqrt 2 mm just past the edge
    # (the face is 45 deg), never the jump to the full triangle depth of the bare ridge
    stp = _walled()
    xs = np.linspace(X_WALL + 0.002, X_GUIDE + 0.003, 200)
    d = np.array([K.stop_solid_contact(*_pt(x, R_MAX + 0.001), stp, 0, 1.0)[1] for x in xs])
    assert np.all(d > 0.0) and d.max() < 0.001 + 0.003 * S2 + 1e-12
    # without the wall the same path has no contact in front of the face and none past it
    # while rho > R_max: the tip could later enter through the base at any depth
    bare = np.array([K.stop_solid_contact(*_pt(x, R_MAX + 0.001), _stops(), 0, 1.0)[0]
                     for x in xs])
    assert np.all(bare == NONE)


def test_wall_without_x_wall_and_validation():
    # no x_wall: the bare ridge (no contact beyond R_max), as before
    p = _pt(-0.005, R_MAX + 0.004)
    assert K.stop_solid_contact(*p, _stops(), 0, 1.0)[0] == NONE
    with pytest.raises(InputError) as e:
        L.stops_from_list([{"angle": 0.0, "half_width": 0.1, "r_min": R_MIN, "r_max": R_MAX,
                            "x_guide": 0.0, "x_wall": 0.01}])
    assert e.value.key == "stops[0].x_wall"


# ---- the fillet rounding the ring plane / inner wall edge ----------------------------------
RF = 0.005  # the default fillet radius [m]


@pytest.mark.parametrize("u, w", [(0.0005, 0.001), (0.002, 0.003), (0.004, 0.0035), (0.0049, 0.0001),
                                  (0.0025, 0.0025)])
def test_fillet_closed_form(u, w):
    # a point u behind the ring plane, w beyond the wall (both < r_f): depth r_f - d_c with
    # d_c = |(r_f - u, r_f - w)|, normal (r_f - u, r_f - w) / d_c in (X, rho_hat); or no
    # contact in the rounded-off corner (d_c >= r_f). Exact up to rounding (1e-12 m).
    p = _pt(X_WALL + u, R_MAX + w, PHI_S + 0.3)
    st, dn, nx, ny, nz, px, py, pz, f = K.stop_solid_contact(*p, _walled(), 0, 1.0)
    dc = math.hypot(RF - u, RF - w)
    if dc >= RF:
        assert st == NONE
        return
    assert st == CONTACT and f == K.FEAT_EDGE
    assert dn == pytest.approx(RF - dc, abs=1e-12)
    n = (RF - u) / dc * np.array([1.0, 0, 0]) + (RF - w) / dc * _rhat(PHI_S + 0.3)
    assert np.allclose([nx, ny, nz], n, atol=1e-12)


def test_fillet_normal_is_continuous_across_the_diagonal():
    # a tip crossing the corner quadrant's diagonal at 1 mm depth: with the sharp edge the
    # normal jumps by |X - rho_hat| = sqrt 2; on the fillet each step of h (arc length at
    # radius r_f - 1 mm) turns it by at most h / (r_f - 1 mm) (+ rounding). Also the depth
    # joins the flats' depths where the path leaves the square (continuity of the contact).
    d = 0.001
    a = np.linspace(-0.3, 0.5 * math.pi + 0.3, 401)
    rc = RF - d
    pts = []
    for ang in a:   # a path at depth d parallel to the rounded surface, arc length rc * da
        if ang < 0.0:                   # on the face flat, sliding towards the edge
            uu, ww = d, RF - rc * ang
        elif ang > 0.5 * math.pi:       # on the wall flat, away from the edge
            uu, ww = RF + rc * (ang - 0.5 * math.pi), d
        else:                           # on the fillet
            uu, ww = RF - rc * math.cos(ang), RF - rc * math.sin(ang)
        pts.append((uu, ww))
    stp = _walled()
    out = [K.stop_solid_contact(*_pt(X_WALL + uu, R_MAX + ww, PHI_S + 0.3), stp, 0, 1.0)
           for uu, ww in pts]
    assert all(o[0] == CONTACT for o in out)
    dn = np.array([o[1] for o in out])
    assert np.allclose(dn, d, atol=1e-12)
    n = np.array([o[2:5] for o in out])
    h = rc * (a[1] - a[0])
    jump = np.linalg.norm(np.diff(n, axis=0), axis=1)
    assert jump.max() <= h / rc * (1 + 1e-9) + 1e-12
    assert np.allclose(n[0], [1.0, 0, 0], atol=1e-12)
    assert np.allclose(n[-1], _rhat(PHI_S + 0.3), atol=1e-12)


def test_sharp_edge_when_fillet_zero_and_fillet_validation():
    # fillet 0: the sharp edge, min(x - x_wall, rho - R_max) with the normal switch
    stp = L.pack_stops(L.stops_from_list([{"angle": PHI_S, "half_width": HALF_W,
                                           "r_min": R_MIN, "r_max": R_MAX, "x_guide": X_GUIDE,
                                           "x_wall": X_WALL, "fillet": 0.0}]))
    st, dn, *_, f = K.stop_solid_contact(*_pt(X_WALL + 0.001, R_MAX + 0.002), stp, 0, 1.0)
    assert st == CONTACT and f == K.FEAT_FACE and dn == pytest.approx(0.001, abs=1e-12)
    for bad in (-0.001, X_GUIDE - X_WALL + 0.001):
        with pytest.raises(InputError) as e:
            L.stops_from_list([{"angle": 0.0, "half_width": 0.1, "r_min": R_MIN,
                                "r_max": R_MAX, "x_guide": X_GUIDE, "x_wall": X_WALL,
                                "fillet": bad}])
        assert e.value.key == "stops[0].fillet"
