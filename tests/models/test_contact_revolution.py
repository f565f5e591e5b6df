"""Sphere / point against surfaces of revolution (digest 7.1-7.4): closed forms, brute force,
and the no-gap sweep of a funnel."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

from models._kernels import contact as K
from models.contact import (GeometryRangeError, PenetrationExceeded, PlaneFragment, Sphere,
                            SurfaceOfRevolution, sphere_vs_plane, sphere_vs_revolution)
from tests.models._contact_oracles import funnel_material, polyline_distance

# test funnel of the digest's check (7.2 note): interface plane, cone 60 deg, cone 35 deg,
# socket cylinder, bottom.
_A60, _A35 = math.radians(60.0), math.radians(35.0)
_X1 = 0.15 / math.tan(_A60)
_X2 = _X1 + 0.15 / math.tan(_A35)
_X3 = _X2 + 0.30
FUNNEL_PTS = np.array([(0.0, 1.0), (0.0, 0.5), (_X1, 0.35), (_X2, 0.2), (_X3, 0.2), (_X3, 0.0)])
FUNNEL = SurfaceOfRevolution(tuple(map(tuple, FUNNEL_PTS)))
CONCAVE_PAIRS = {(6, 8)}  # faces 3 (cylinder) and 4 (bottom) around the concave vertex 4
EXACT = 1e-9  # [m] closed forms vs closed forms: only rounding (values are O(1 m))


def _radial(phi):
    return np.array([0.0, math.cos(phi), math.sin(phi)])


@pytest.mark.parametrize("face, alpha", [(2, _A60), (4, _A35)])
@pytest.mark.parametrize("depth", [1e-4, 5e-3, 0.02])
def test_sphere_on_cone_generator_at_known_depth(face, alpha, depth):
    r_s, phi = 0.05, 0.9
    k = face // 2
    v = FUNNEL_PTS[k]
    t = FUNNEL_PTS[k + 1] - v
    t /= np.linalg.norm(t)
    n2 = np.array([math.sin(alpha), math.cos(alpha)])     # digest 7.1 normal in (x, rho)
    assert np.allclose(n2, [-t[1], t[0]])
    c2 = v + 0.5 * np.linalg.norm(FUNNEL_PTS[k + 1] - v) * t - (r_s - depth) * n2
    centre = np.array([c2[0], 0.0, 0.0]) + c2[1] * _radial(phi)
    (c,) = sphere_vs_revolution(Sphere(centre, r_s), FUNNEL, 0.05)
    normal = np.array([math.sin(alpha), 0.0, 0.0]) + math.cos(alpha) * _radial(phi)
    assert c.feature == face
    assert c.depth == pytest.approx(depth, abs=EXACT)
    assert np.allclose(c.normal, normal, atol=EXACT)
    assert np.allclose(c.point, centre + r_s * normal, atol=EXACT)
    # the paper's own closed form, step 1-2 of 7.1 with the corrected signs
    r_max, r_min, alpha_p, x_t = FUNNEL.cone_parameters(k)
    d_l = c2[1]
    d_s = (x_t - d_l / math.tan(alpha_p) - c2[0]) * math.sin(alpha_p)
    assert r_s - d_s == pytest.approx(depth, abs=EXACT)


@pytest.mark.parametrize("depth", [1e-4, 3e-3, 0.03])
def test_sphere_under_rim_at_45_degrees(depth):
    """Plane (90 deg) to cylinder (0 deg) rim; centre on the 45-degree line below the rim."""
    surf = SurfaceOfRevolution(((0.0, 1.0), (0.0, 0.5), (0.4, 0.5)))
    r_s, phi = 0.05, -2.0
    c2 = np.array([0.0, 0.5]) + (r_s - depth) * np.array([-1.0, -1.0]) / math.sqrt(2)
    centre = np.array([c2[0], 0, 0]) + c2[1] * _radial(phi)
    (c,) = sphere_vs_revolution(Sphere(centre, r_s), surf, 0.05)
    normal = (np.array([1.0, 0, 0]) + _radial(phi)) / math.sqrt(2)
    assert c.feature == 1  # the rim vertex
    assert c.depth == pytest.approx(depth, abs=EXACT)
    assert np.allclose(c.normal, normal, atol=EXACT)


@pytest.mark.parametrize("e", [0.16, 0.17, 0.19])
def test_sphere_in_socket_at_lateral_offset(e):
    r_s = 0.05
    centre = np.array([_X2 + 0.15, 0.0, 0.0]) + e * _radial(0.3)
    (c,) = sphere_vs_revolution(Sphere(centre, r_s), FUNNEL, 0.1)
    assert c.feature == 6
    assert c.depth == pytest.approx(e + r_s - 0.2, abs=EXACT)   # digest 16.2: e + R_S - R_CYL
    assert np.allclose(c.normal, _radial(0.3), atol=EXACT)


@pytest.mark.parametrize("x_s", [_X3 - 0.049, _X3 - 0.03, _X3 - 0.001])
def test_sphere_on_bottom_plane(x_s):
    r_s = 0.05
    centre = (x_s, 0.05, -0.02)
    (c,) = sphere_vs_revolution(Sphere(centre, r_s), FUNNEL, 0.1)
    assert c.feature == 8 and np.allclose(c.normal, (1, 0, 0))
    assert c.depth == pytest.approx(x_s + r_s - _X3, abs=EXACT)   # digest 16.2 plane case
    plane = PlaneFragment(_X3, 0.0, 0.2)
    c2 = sphere_vs_plane(Sphere(centre, r_s), plane, 0.1)
    assert c2.depth == pytest.approx(c.depth, abs=EXACT) and c2.normal == (1.0, 0.0, 0.0)
    assert c2.point == pytest.approx((x_s + r_s, 0.05, -0.02))


def test_plane_annulus_bounds_and_side():
    plane = PlaneFragment(0.0, 0.3, 0.4)
    assert sphere_vs_plane(Sphere((0.01, 0.35, 0), 0.0), plane, 0.1).depth == pytest.approx(0.01)
    assert sphere_vs_plane(Sphere((0.01, 0.45, 0), 0.0), plane, 0.1) is None
    assert sphere_vs_plane(Sphere((-0.01, 0.35, 0), 0.0), plane, 0.1) is None
    back = PlaneFragment(0.0, 0.3, 0.4, material_side=-1)
    c = sphere_vs_plane(Sphere((-0.01, 0.35, 0), 0.0), back, 0.1)
    assert c.depth == pytest.approx(0.01) and c.normal == (-1.0, 0.0, 0.0)


def test_corner_gives_two_contacts_wall_and_bottom():
    r_s = 0.05
    centre = np.array([_X3 - 0.04, 0.19, 0.0])
    cs = sphere_vs_revolution(Sphere(centre, r_s), FUNNEL, 0.1)
    assert [c.feature for c in cs] == [6, 8]
    assert cs[0].depth == pytest.approx(0.04, abs=EXACT)
    assert cs[1].depth == pytest.approx(0.01, abs=EXACT)


def test_penetration_exceeded_and_geometry_range():
    with pytest.raises(PenetrationExceeded) as info:
        sphere_vs_revolution(Sphere((_X2 + 0.1, 0.19, 0.0), 0.05), FUNNEL, 0.01, time=1.25)
    err = info.value
    assert err.depth == pytest.approx(0.04) and err.limit == 0.01 and err.time == 1.25
    assert "1.25" in str(err) and err.feature == 6
    # sphere centred on the axis of a cylinder it fills: the radial direction is undefined
    with pytest.raises(GeometryRangeError):
        sphere_vs_revolution(Sphere((_X2 + 0.1, 0.0, 0.0), 0.21), FUNNEL, 1.0)


def test_on_axis_sphere_in_cone_keeps_the_axial_part():
    """Centre on the axis: ring contact; the normal is axial and the depth is the axial
    component (digest 12.9 choice), continuous with the axial resultant off the axis."""
    r_s = 0.36
    x = 0.05
    (c,) = sphere_vs_revolution(Sphere((x, 0.0, 0.0), r_s), FUNNEL, 1.0)
    (c_off,) = sphere_vs_revolution(Sphere((x, 1e-9, 0.0), r_s), FUNNEL, 1.0)
    assert c.normal == (1.0, 0.0, 0.0)
    # 1e-9 m off the axis changes the depth by < 1e-9 m
    assert c.depth == pytest.approx(c_off.depth * c_off.normal[0], abs=2e-9)


def _reference(x, rho, r_s):
    """Exact penetration of a sphere with centre (x, rho) in the meridian plane."""
    q = np.array([[x, rho]])
    dist, foot = polyline_distance(q, FUNNEL_PTS)
    inside = funnel_material(q, FUNNEL_PTS)[0]
    signed = -dist[0] if inside else dist[0]
    return r_s - signed, foot[0]


def _check_contacts(x, rho, phi, r_s, contacts, pen, foot):
    """The deepest contact equals the exact penetration; a second one only at the corner."""
    tol = 1e-9  # [m] both sides are closed forms of O(1 m) quantities
    if pen <= tol:
        assert contacts == [] or max(c.depth for c in contacts) <= tol
        return
    assert contacts, f"missed contact at x={x}, rho={rho}, R={r_s}, penetration {pen}"
    deepest = max(contacts, key=lambda c: c.depth)
    assert deepest.depth == pytest.approx(pen, abs=tol)
    feats = tuple(c.feature for c in contacts)
    assert len(feats) == 1 or (len(feats) == 2 and feats in CONCAVE_PAIRS), feats
    if r_s > 0.0 and pen < r_s:
        # normal: from the centre towards the nearest surface point (meridian), lifted to 3-D
        d2 = (foot - np.array([x, rho])) / np.linalg.norm(foot - np.array([x, rho]))
        normal = np.array([d2[0], 0.0, 0.0]) + d2[1] * _radial(phi)
        assert np.allclose(deepest.normal, normal, atol=1e-7)


@settings(max_examples=300, deadline=None)
@given(x=st.floats(-0.2, _X3 + 0.05), rho=st.floats(1e-3, 0.8), phi=st.floats(-math.pi, math.pi),
       r_s=st.floats(0.01, 0.15))
@example(x=-0.0625, rho=0.5, phi=1.375, r_s=0.125)  # centre on the rim's radius: rounding put
#   it in both the front face's and the rim vertex's region (two contacts, double the force)
def test_sphere_matches_exact_meridian_distance(x, rho, phi, r_s):
    pen, foot = _reference(x, rho, r_s)
    if pen >= r_s:      # centre inside the metal: not a state a simulation reaches
        return
    centre = np.array([x, 0.0, 0.0]) + rho * _radial(phi)
    contacts = sphere_vs_revolution(Sphere(centre, r_s), FUNNEL, 10.0)
    _check_contacts(x, rho, phi, r_s, contacts, pen, foot)


@settings(max_examples=300, deadline=None)
@given(x=st.floats(-0.1, _X3 + 0.05), rho=st.floats(1e-3, 0.8), phi=st.floats(-math.pi, math.pi))
def test_point_matches_exact_meridian_distance(x, rho, phi):
    """Points (limiter-pad ends): penetration = distance to the surface from inside the
    metal; near a rim the two face slabs overlap and only the shallower face may answer."""
    pen, foot = _reference(x, rho, 0.0)
    if pen > 0.02:      # shallow penetrations only (deeper ones abort the run)
        return
    centre = np.array([x, 0.0, 0.0]) + rho * _radial(phi)
    contacts = sphere_vs_revolution(Sphere(centre, 0.0), FUNNEL, 10.0)
    _check_contacts(x, rho, phi, 0.0, contacts, pen, foot)


def test_sweep_of_a_funnel_misses_no_shallow_contact():
    """Dense seeded sweep of sphere centres over the free space of the funnel: every
    penetrating position (0 < penetration < 0.3 R) gives a contact of the exact depth; two
    contacts only at the concave socket corner (the digest's box ranges missed ~5 %)."""
    rng = np.random.default_rng(20201)
    r_s = 0.06
    x = rng.uniform(-0.1, _X3, 200_000)
    rho = rng.uniform(0.0, 0.8, 200_000)
    q = np.stack([x, rho], axis=1)
    dist, _ = polyline_distance(q, FUNNEL_PTS)
    free = ~funnel_material(q, FUNNEL_PTS)
    pen = r_s - dist
    band = free & (pen > 1e-9) & (pen < 0.3 * r_s)
    assert band.sum() > 5000
    mer = FUNNEL.packed
    n_double = 0
    for xi, ri, pi in zip(x[band], rho[band], pen[band]):
        st1 = K.sphere_vs_revolution(xi, ri, 0.0, r_s, mer, 1.0, 0)
        assert st1[0] == K.CONTACT, (xi, ri, pi)
        st2 = K.sphere_vs_revolution(xi, ri, 0.0, r_s, mer, 1.0, st1[8] + 1)
        depths = [st1[1]]
        if st2[0] != K.NONE:
            assert (st1[8], st2[8]) in CONCAVE_PAIRS
            assert K.sphere_vs_revolution(xi, ri, 0.0, r_s, mer, 1.0, st2[8] + 1)[0] == K.NONE
            depths.append(st2[1])
            n_double += 1
        assert max(depths) == pytest.approx(pi, abs=1e-9)
    assert n_double > 0   # the corner was visited
    # and no contact at all outside the band of penetration
    clear = free & (pen < -1e-9)
    for xi, ri in zip(x[clear][:3000], rho[clear][:3000]):
        assert K.sphere_vs_revolution(xi, ri, 0.0, r_s, mer, 1.0, 0)[0] == K.NONE


GRADIENT_CHECKS: list[int] = []


def _feature_depth(centre, r_s, feature):
    res = K.sphere_vs_revolution(centre[0], centre[1], centre[2], r_s, FUNNEL.packed, 10.0,
                                 feature)
    return res[1] if res[0] == K.CONTACT and res[8] == feature else 0.0


def _near_surface(k, s, frac, r_s, rim, turn):
    """A centre at distance frac*r_s from face k (foot at fraction s) or, with rim=True, from
    the convex vertex k+1, in the direction a fraction ``turn`` across its normal wedge."""
    pts = FUNNEL_PTS
    if not rim:
        t = (pts[k + 1] - pts[k]) / np.linalg.norm(pts[k + 1] - pts[k])
        return pts[k] + s * (pts[k + 1] - pts[k]) - frac * r_s * np.array([-t[1], t[0]])
    v = pts[k + 1]
    t0 = (pts[k + 1] - pts[k]) / np.linalg.norm(pts[k + 1] - pts[k])
    t1 = (pts[k + 2] - pts[k + 1]) / np.linalg.norm(pts[k + 2] - pts[k + 1])
    a0 = math.atan2(-t0[0], t0[1])     # -n of the previous face
    a1 = math.atan2(-t1[0], t1[1])     # -n of the next face
    if a1 < a0:
        a1 += 2 * math.pi
    ang = a0 + turn * (a1 - a0)
    return v + frac * r_s * np.array([math.cos(ang), math.sin(ang)])


@settings(max_examples=200, deadline=None)
@given(k=st.integers(0, 4), s=st.floats(0.02, 0.98), frac=st.floats(0.5, 0.999),
       phi=st.floats(-math.pi, math.pi), r_s=st.floats(0.02, 0.1), rim=st.booleans(),
       turn=st.floats(0.0, 1.0))
def test_normal_is_the_gradient_of_the_depth(k, s, frac, phi, r_s, rim, turn):
    """The penalty force k*depth*n derives from the potential k*depth^2/2 only if n is the
    gradient of the depth with respect to the active body's position: check it by central
    differences (h = 1e-7 m; truncation O(h^2 / R) and rounding 1e-16 / h, both < 1e-6)."""
    if rim and k > 2:       # convex vertices are 1, 2, 3 (faces 0-1, 1-2, 2-3)
        rim = False
    c2 = _near_surface(k, s, frac, r_s, rim, turn)
    x, rho = c2
    if rho <= 1e-3:
        return
    pen, _ = _reference(x, rho, r_s)
    if not 1e-6 < pen < 0.5 * r_s:
        return
    GRADIENT_CHECKS.append(1)
    centre = np.array([x, 0.0, 0.0]) + rho * _radial(phi)
    for c in sphere_vs_revolution(Sphere(centre, r_s), FUNNEL, 10.0):
        h = 1e-7
        grad = np.array([(_feature_depth(centre + h * e, r_s, c.feature)
                          - _feature_depth(centre - h * e, r_s, c.feature)) / (2 * h)
                         for e in np.eye(3)])
        if min(_feature_depth(centre + h * e * s, r_s, c.feature)
               for e in np.eye(3) for s in (1, -1)) == 0.0:
            continue   # a step left the feature's region (on a region boundary)
        assert np.allclose(grad, c.normal, atol=1e-6)


def test_rolling_over_a_rim_is_continuous():
    """Sphere centre moved along a path at constant distance 0.9 R from the polyline across the
    mouth rim (plane -> 60-degree cone): depth stays 0.1 R and the normal turns smoothly from
    the plane's to the cone's (digest 16.2 item 4: no drop-out, no spike)."""
    r_s = 0.05
    dist = 0.9 * r_s
    v = FUNNEL_PTS[1]
    a_plane = math.pi                         # rim -> centre over the plane: (-1, 0)
    a_cone = math.pi + (math.pi / 2 - _A60)   # rim -> centre over the cone: -(sin a, cos a)
    t = np.array([math.cos(_A60), -math.sin(_A60)])
    n2 = np.array([math.sin(_A60), math.cos(_A60)])
    normals = []
    for ang in np.linspace(a_plane - 0.3, a_cone + 0.3, 400):
        if ang < a_plane:        # before the rim: along the plane face, outwards
            c2 = np.array([-dist, v[1] + (a_plane - ang) * 0.2])
        elif ang > a_cone:       # past the rim: along the cone face
            c2 = v + (ang - a_cone) * 0.2 * t - dist * n2
        else:                    # around the rim at constant distance
            c2 = v + dist * np.array([math.cos(ang), math.sin(ang)])
        cs = sphere_vs_revolution(Sphere((c2[0], c2[1], 0.0), r_s), FUNNEL, 1.0)
        assert len(cs) == 1
        assert cs[0].depth == pytest.approx(0.1 * r_s, abs=1e-12)
        normals.append(cs[0].normal)
    steps = np.linalg.norm(np.diff(np.array(normals), axis=0), axis=1)
    assert steps.max() < 0.02      # 400 samples over ~1.7 rad of normal turn: ~0.005 each


@pytest.mark.parametrize("roll", [0.3, 2.0, -1.0])
def test_axisymmetry_and_mirror(roll):
    """Rotating the sphere about X_PU rotates the contact; y -> -y mirrors it."""
    centre = np.array([_X1 + 0.02, 0.25, 0.1])
    c_, s_ = math.cos(roll), math.sin(roll)
    rot = np.array([[1, 0, 0], [0, c_, -s_], [0, s_, c_]])
    (a,) = sphere_vs_revolution(Sphere(centre, 0.06), FUNNEL, 1.0)
    (b,) = sphere_vs_revolution(Sphere(rot @ centre, 0.06), FUNNEL, 1.0)
    assert b.depth == pytest.approx(a.depth, abs=1e-12) and b.feature == a.feature
    assert np.allclose(b.normal, rot @ a.normal, atol=1e-12)
    assert np.allclose(b.point, rot @ a.point, atol=1e-12)
    m = np.diag([1.0, -1.0, 1.0])
    (c,) = sphere_vs_revolution(Sphere(m @ centre, 0.06), FUNNEL, 1.0)
    assert np.allclose(c.normal, m @ a.normal, atol=1e-12)


def test_gradient_check_was_exercised():
    """Guard against a vacuous property test: the sampled region hits contacts."""
    GRADIENT_CHECKS.clear()
    test_normal_is_the_gradient_of_the_depth()
    assert len(GRADIENT_CHECKS) >= 10
