"""Segment detectors (digest 7.6, 7.7), 45-degree stops (9.7) and slots (8.5)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from models.contact import (Circle, Segment, Slot, StopSurface45, point_vs_stop45,
                            segment_vs_circle, segment_vs_segment, segment_vs_slot,
                            segment_vs_stop45_crest)
from tests.models._contact_oracles import line_circle_distance, segment_segment_distance

MOUTH = Circle((0.0, 0.0, 0.0), (1.0, 0.0, 0.0), 0.4)   # mouth of the receiving cone
EXACT = 1e-12  # [m] closed forms of O(1 m) quantities


def _radial(phi):
    return np.array([0.0, math.cos(phi), math.sin(phi)])


@pytest.mark.parametrize("gamma", [0.0, -0.3, -0.9])
@pytest.mark.parametrize("delta", [1e-4, 2e-3])
def test_segment_crossing_a_circle_in_a_meridian_plane(gamma, delta):
    """A segment in the meridian plane crossing the rim plane at R + delta and converging
    towards the axis at angle gamma: depth delta cos(gamma) (exact point-line distance of the
    rim point), normal (-sin gamma, cos gamma rho_hat)."""
    phi = 1.1
    d = math.cos(gamma) * np.array([1.0, 0, 0]) + math.sin(gamma) * _radial(phi)
    p_c = (0.4 + delta) * _radial(phi)
    seg = Segment(p_c - 0.05 * d, 0.1 * d)
    c = segment_vs_circle(seg, MOUTH, 0.01)
    assert c.depth == pytest.approx(delta * math.cos(gamma), abs=EXACT)
    assert np.allclose(c.normal, -math.sin(gamma) * np.array([1.0, 0, 0])
                       + math.cos(gamma) * _radial(phi), atol=1e-12)
    assert np.allclose(c.point, p_c, atol=EXACT)


def test_segment_inside_or_missing_the_circle_plane_is_no_contact():
    assert segment_vs_circle(Segment((-0.05, 0.3, 0), (0.1, 0, 0)), MOUTH, 0.01) is None
    assert segment_vs_circle(Segment((0.01, 0.5, 0), (0.1, 0, 0)), MOUTH, 0.01) is None
    assert segment_vs_circle(Segment((0.0, 0.5, 0), (0.0, 0.1, 0)), MOUTH, 0.01) is None


def test_active_circle_reverses_the_normal():
    ring = Circle((0.0, 0.0, 0.0), (-1.0, 0.0, 0.0), 0.4, on_active=True)
    seg = Segment((-0.05, 0.41, 0.0), (0.1, 0.0, 0.0))
    c = segment_vs_circle(seg, ring, 0.1)
    assert c.depth == pytest.approx(0.01, abs=EXACT)
    # the passive segment sits in the active ring's material; it is pushed inwards
    assert np.allclose(c.normal, (0.0, -1.0, 0.0))


@settings(max_examples=150, deadline=None)
@given(phi=st.floats(-math.pi, math.pi), delta=st.floats(1e-4, 5e-3),
       polar=st.floats(0.0, math.radians(60)), azim=st.floats(-math.pi, math.pi),
       tc=st.floats(0.1, 0.9))
def test_segment_circle_matches_dense_line_circle_distance(phi, delta, polar, azim, tc):
    """digest 7.6 check: |depth - exact distance| <= 1 % of delta for crossings 0.1 to 5 mm
    outside a 0.4 m circle (first-order tangent-line approximation, error O(delta^2 / R)
    times the tilt); the contact exists exactly when the exact common normal, oriented into
    the passive side (+X), lies in the rim's normal cone (radial component > 0)."""
    p_c = (0.4 + delta) * _radial(phi)
    d = np.array([math.cos(polar), math.sin(polar) * math.cos(azim),
                  math.sin(polar) * math.sin(azim)])
    seg = Segment(p_c - tc * 0.2 * d, 0.2 * d)
    c = segment_vs_circle(seg, MOUTH, 1.0)
    dist, q, foot = line_circle_distance(np.asarray(seg.start), np.asarray(seg.vector),
                                         np.zeros(3), (1.0, 0, 0), 0.4)
    n_exact = (foot - q) / np.linalg.norm(foot - q)
    if n_exact[0] < 0:
        n_exact = -n_exact
    radial = np.dot(n_exact, q / np.linalg.norm(q))
    assume(abs(radial) > 0.05 and abs(n_exact[0]) > 0.05)   # away from the sign switches
    if radial < 0:
        assert c is None
        return
    assert c is not None
    assert abs(c.depth - dist) <= 0.01 * delta
    assert np.dot(c.normal, n_exact) > 0.99


@pytest.mark.parametrize("h", [1e-6, 0.003, 0.2])
@pytest.mark.parametrize("roll", [0.0, 0.7, 2.5])
def test_skew_segments_at_known_distance(h, roll):
    """Active edge along Y at x = h across a passive edge along Z at x = 0 (then both rolled
    about X): common perpendicular of length h along +X, acting at the passive foot."""
    c_, s_ = math.cos(roll), math.sin(roll)
    rot = np.array([[1, 0, 0], [0, c_, -s_], [0, s_, c_]])
    a = Segment(rot @ [h, -0.3, 0.02], rot @ [0, 0.5, 0])
    p = Segment(rot @ [0, 0.05, -0.2], rot @ [0, 0, 0.6])
    c = segment_vs_segment(a, p, 1.0)
    assert c.depth == pytest.approx(h, abs=EXACT)
    # the normal is a difference of O(1 m) coordinates divided by h: rounding ~ 1e-16 / h
    assert np.allclose(c.normal, (1, 0, 0), atol=1e-15 / h)
    assert np.allclose(c.point, rot @ [0, 0.05, 0.02], atol=EXACT)
    # not yet past the passive edge (projection on X_PU < 0): no contact
    a_back = Segment(rot @ [-h, -0.3, 0.02], rot @ [0, 0.5, 0])
    assert segment_vs_segment(a_back, p, 1.0) is None


def test_parallel_and_degenerate_segments_give_no_contact():
    p = Segment((0, 0, 0), (0, 1, 0))
    assert segment_vs_segment(Segment((0.01, 0, 0), (0, 1, 0)), p, 1.0) is None
    assert segment_vs_segment(Segment((1e-10, -0.5, 0.5), (0, 0, -1)), p, 1.0) is None


_vec = st.tuples(*[st.floats(-1.0, 1.0)] * 3).map(np.array)


@settings(max_examples=200, deadline=None)
@given(oa=_vec, la=_vec, op=_vec, lp=_vec)
def test_segment_segment_matches_brute_force(oa, la, op, lp):
    """Against dense sampling of one segment with exact clamped projection on the other, refined
    by a bounded scalar search around the best sample (oracle exact to ~1e-10 m), so 1e-6 m is
    the detector's own closed-form error budget."""
    assume(np.linalg.norm(la) > 0.1 and np.linalg.norm(lp) > 0.1)
    sin2 = np.linalg.norm(np.cross(la, lp)) ** 2 / (la @ la) / (lp @ lp)
    assume(sin2 > 1e-2)
    c = segment_segment_distance(oa, la, op, lp)
    d, ta, tp = c
    res = segment_vs_segment(Segment(oa, la), Segment(op, lp), 10.0)
    interior = 0.002 < ta < 0.998 and 0.002 < tp < 0.998
    ca = oa + ta * la
    cp = op + tp * lp
    if res is not None:
        assert res.depth == pytest.approx(d, abs=1e-6)
        assert res.normal[0] >= 0.0
    elif interior and (ca - cp)[0] > 1e-3 and d > 1e-6:
        pytest.fail(f"missed: distance {d} at interior feet {ta}, {tp}")


GUIDE = StopSurface45(rho0=0.5, x0=0.0, sigma=-1, x_lo=-0.05, x_hi=0.05, x_crest=0.05,
                      r_crest=0.45)


@pytest.mark.parametrize("x, dlat", [(0.0, 0.002), (0.02, 0.01), (-0.03, 0.005)])
def test_latch_point_on_45_degree_guide(x, dlat):
    """digest 9.7: depth = Delta_L / sqrt 2 is the exact distance to the generator line
    rho = R_max - x; normal (1, rho_hat)/sqrt 2."""
    phi = 0.4
    rho = 0.5 - x + dlat
    p = np.array([x, 0, 0]) + rho * _radial(phi)
    c = point_vs_stop45(p, GUIDE, 0.1)
    # exact distance from (x, rho) to the line through (0, 0.5) with direction (1, -1)/sqrt2
    u = np.array([1.0, -1.0]) / math.sqrt(2)
    w = np.array([x, rho - 0.5])
    exact = np.linalg.norm(w - (w @ u) * u)
    assert c.depth == pytest.approx(exact, abs=EXACT)
    assert np.allclose(c.normal, (np.array([1.0, 0, 0]) + _radial(phi)) / math.sqrt(2))
    assert point_vs_stop45(np.array([x, 0, 0]) + (0.5 - x - 0.001) * _radial(phi), GUIDE,
                           0.1) is None


def test_latch_segment_against_locking_crest():
    lock = StopSurface45(rho0=0.45, x0=0.05, sigma=1, x_lo=0.05, x_hi=0.1, x_crest=0.05,
                         r_crest=0.45)
    seg = Segment((0.0, 0.47, 0.0), (0.1, 0.0, 0.0))
    c = segment_vs_stop45_crest(seg, lock, 0.1)
    assert c.depth == pytest.approx(0.02 / math.sqrt(2), abs=EXACT)
    assert np.allclose(c.normal, np.array([-1.0, 1.0, 0.0]) / math.sqrt(2))
    assert np.allclose(c.point, (0.05, 0.47, 0.0))
    assert segment_vs_stop45_crest(Segment((0.0, 0.44, 0.0), (0.1, 0, 0)), lock, 0.1) is None


SLOT = Slot(vertex=(0.3, 0.0, 0.0), axial=(1, 0, 0), lateral=(0, 0, 1), d_ll1=0.01,
            d_lx1=0.02, d_lx2=0.05, beta=math.radians(30))


def _latch_at(d1, t, reach=0.02):
    """A latch segment along -Y_PU crossing the slot plane (y = 0) at (d1, t), its tip
    ``reach`` [m] beyond the plane on the outer side (e_n = axial x lateral = -Y)."""
    return Segment((0.3 + d1, 0.02, t), (0.0, -0.02 - reach, 0.0))


def test_slot_stop_and_side_wall_act_together():
    cs = segment_vs_slot(_latch_at(-0.002, 0.013), SLOT, 0.1)
    assert [c.feature for c in cs] == [0, 1]
    assert cs[0].depth == pytest.approx(0.002) and np.allclose(cs[0].normal, (-1, 0, 0))
    assert cs[1].depth == pytest.approx(0.003) and np.allclose(cs[1].normal, (0, 0, 1))


def test_slot_inclined_wall_and_free_positions():
    d1, t = 0.03, -0.018
    w = 0.01 + (d1 - 0.02) * math.tan(math.radians(30))
    (c,) = segment_vs_slot(_latch_at(d1, t), SLOT, 0.1)
    b = math.radians(30)
    assert c.feature == 2
    assert c.depth == pytest.approx((abs(t) - w) * math.cos(b))
    assert np.allclose(c.normal, (-math.sin(b), 0, -math.cos(b)))
    assert segment_vs_slot(_latch_at(0.01, 0.005), SLOT, 0.1) == []
    assert segment_vs_slot(_latch_at(0.06, 0.02), SLOT, 0.1) == []   # inside the wide part
    assert SLOT.d_ll2 == pytest.approx(0.01 + 0.03 * math.tan(b))


def _slot_profile_distance(d1, d2, n=200001):
    """Brute force: distance of (d1, d2) from the densely sampled side-wall profile of SLOT
    (narrow wall continued past the stop, inclined wall, wide wall), the nearest sample, and
    whether the point is in the wall material (above the profile)."""
    b = math.radians(30)
    dll2 = 0.01 + 0.03 * math.tan(b)
    s = np.linspace(-0.2, 0.3, n)
    w = np.where(s <= 0.02, 0.01, np.where(s >= 0.05, dll2, 0.01 + (s - 0.02) * math.tan(b)))
    dist = np.hypot(s - d1, w - d2)
    k = int(np.argmin(dist))
    w_here = np.interp(d1, s, w)
    return dist[k], (s[k], w[k]), d2 > w_here


def test_slot_side_walls_against_brute_force_distance():
    """The side-wall penetration is the distance of P_C from the slot profile, in every part
    (narrow, inclined, wide, and the edge where inclined and wide walls meet), the normal
    points from the nearest profile point to P_C, and there is no contact inside the slot.
    Tolerance 2e-6 m: the brute-force profile is sampled every 2.5e-6 m, so its nearest sample
    is within 1.25e-6 m of the true foot (distance error <= that, plus rounding)."""
    rng = np.random.default_rng(7)
    b = math.radians(30)
    dll2 = 0.01 + 0.03 * math.tan(b)
    pts = np.column_stack([rng.uniform(-0.003, 0.09, 400), rng.uniform(-0.045, 0.045, 400)])
    # and points crowding the edge (d_LX2, d_LL2): its zone spans the directions between the
    # wide-wall normal (90 deg) and the inclined-wall normal (90 deg + beta)
    ang = np.radians(rng.uniform(60.0, 150.0, 80))
    r = rng.uniform(1e-4, 5e-3, 80)
    pts = np.vstack([pts, np.column_stack([0.05 + r * np.cos(ang), dll2 + r * np.sin(ang)])])
    seen = set()
    for d1, t in pts:
        ref, foot, inside_wall = _slot_profile_distance(d1, abs(t))
        cs = [c for c in segment_vs_slot(_latch_at(d1, t, reach=0.1), SLOT, 0.1)
              if c.feature != 0]
        if not inside_wall:
            assert cs == [], (d1, t)
            continue
        (c,) = cs
        seen.add(c.feature)
        assert c.depth == pytest.approx(ref, abs=2e-6), (d1, t, c.feature)
        if ref > 1e-4:   # the direction of a shorter vector is resolved worse by the samples
            want = np.array([d1 - foot[0], 0.0, math.copysign(abs(t) - foot[1], t)]) / ref
            assert np.allclose(c.normal, want, atol=0.03), (d1, t, c.feature)
    assert seen == {1, 2, 3, 4}   # narrow, inclined, wide, edge all exercised


def test_slot_penetration_continuous_from_wide_part_back_into_incline():
    """The failure mode of the first model: a latch swung wide in the wide part (d1 > d_LX2)
    and moved back into the inclined part. Along such a path the depth must change by no more
    than the distance moved (it is a distance function, Lipschitz 1)."""
    b = math.radians(30)
    dll2 = 0.01 + 0.03 * math.tan(b)
    path = np.column_stack([np.linspace(0.07, 0.03, 2001), np.full(2001, dll2 + 0.002)])
    depth = []
    for d1, t in path:
        cs = [c for c in segment_vs_slot(_latch_at(d1, t, reach=0.1), SLOT, 0.1)
              if c.feature != 0]
        depth.append(cs[0].depth if cs else 0.0)
    depth = np.array(depth)
    step = abs(path[1, 0] - path[0, 0])
    assert np.max(np.abs(np.diff(depth))) <= step * (1 + 1e-9)
    assert depth[0] == pytest.approx(0.002)   # the wide wall holds the latch


def test_latch_back_from_the_bore_beside_the_window():
    """A latch whose tip fell back into the socket bore and slid past the stop comes out
    again beside the window (the failure of the first model: 1-2 cm stop depth at once). The
    penetration is the shorter way out of the wall: radially back into the bore, depth = the
    reach beyond the wall plane, normal e_n (-Y here), at the wall-plane foot of the tip; it
    grows from zero. With a deep reach it is the stop again (and the stop plus side wall in
    tension with torsion, as before)."""
    for reach in (1e-4, 0.004, 0.009):
        (c,) = segment_vs_slot(_latch_at(-0.01, 0.0, reach=reach), SLOT, 0.1)
        assert c.feature == 5
        assert c.depth == pytest.approx(reach, abs=EXACT)
        assert np.allclose(c.normal, (0, -1, 0))
        assert np.allclose(c.point, (0.29, 0.0, 0.0))
    (c,) = segment_vs_slot(_latch_at(-0.01, 0.0, reach=0.011), SLOT, 0.1)
    assert c.feature == 0 and c.depth == pytest.approx(0.01, abs=EXACT)
    # beside the narrow part: side-wall depth 0.003 against a 0.002 reach
    (c,) = segment_vs_slot(_latch_at(0.01, 0.013, reach=0.002), SLOT, 0.1)
    assert c.feature == 5 and c.depth == pytest.approx(0.002, abs=EXACT)
    assert [c.feature for c in segment_vs_slot(_latch_at(-0.002, 0.013, reach=0.004), SLOT,
                                               0.1)] == [0, 1]
    # continuity along the re-entry (tip crossing the wall plane beside the window)
    reaches = np.linspace(-0.002, 0.015, 1701)
    depth = np.array([sum(c.depth for c in segment_vs_slot(_latch_at(-0.01, 0.0, reach=r),
                                                           SLOT, 0.1)) for r in reaches])
    assert np.max(np.abs(np.diff(depth))) <= (reaches[1] - reaches[0]) * (1 + 1e-6)
