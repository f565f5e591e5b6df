"""Geometry of the peripheral unit: closed forms of the petal construction, the androgynous
turn, three-fold symmetry, interleaving, the design checks, and the generator fans fed to the
contact detector (dichotomy against exhaustive search).

Tolerances: 1e-12 m for identities that hold exactly in real arithmetic and are computed with
a few trigonometric evaluations and products of O(1 m) numbers (rounding ~1e-16 m per
operation, a few dozen operations); anything looser is stated where it is used."""
from __future__ import annotations

import copy
import math
import tomllib
from importlib import resources

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from models._kernels import contact as K
from models._kernels import contact_layout as ck
from models.peripheral._kernels import layout as L
from models.errors import InputError
from models.peripheral.config import PeripheralConfig, RingDesign, RingGeometry
from models.peripheral.geometry import (ANDROGYNOUS_TURN, Geometry, build_geometry,
                                        interleave_clearances, passive_from_active)

TOL = 1e-12


def _preset() -> dict:
    path = resources.files("models.peripheral") / "presets" / "reference.toml"
    with path.open("rb") as fh:
        return tomllib.load(fh)


RAW = _preset()
CFG = PeripheralConfig.from_dict(RAW, source="reference.toml")
GEO = build_geometry(CFG.design)
RING = CFG.design.ring


def _design(**ring_changes) -> RingDesign:
    d = copy.deepcopy(RAW["ring"])
    for k, v in ring_changes.items():
        if "." in k:
            sub, key = k.split(".")
            d[sub][key] = v
        else:
            d[k] = v
    return RingDesign.from_dict(d, source="test.toml")


def _cone_distance(p, ring):
    """Distance of points p (..., 3) from the cone rho = R_R - x tan(alpha) [m] (meridian
    half-plane: the cone is the line x sin(a) + rho cos(a) = R_R cos(a))."""
    a = ring.cone_angle
    rho = np.hypot(p[..., 1], p[..., 2])
    return np.abs(p[..., 0] * math.sin(a) + rho * math.cos(a) - ring.inner_radius * math.cos(a))


def _rot_x(angle):
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


# --------------------------------------------------------------------------------------------
# layouts
@pytest.mark.parametrize("prefix, ncol", [("SEG_", "SEG_NCOL"), ("RG_", "RG_SIZE"),
                                          ("ST_", "ST_NCOL"), ("LA_", "LA_NCOL"),
                                          ("SE_", "SE_NCOL"), ("PT_", "PT_NCOL")])
def test_layout_offsets_tile_their_rows(prefix, ncol):
    n = getattr(L, ncol)
    offs = {getattr(L, k) for k in L.__all__ if k.startswith(prefix) and k != ncol}
    if prefix == "ST_":       # the two stop surfaces span S45_SIZE columns each
        offs |= {L.ST_GUIDE + i for i in range(ck.S45_SIZE)}
        offs |= {L.ST_LOCK + i for i in range(ck.S45_SIZE)}
    assert offs == set(range(n))


def test_table_shapes_follow_the_layouts():
    n = 2 ** 8 + 1                       # the paper's N = 8
    assert GEO.n_generators == n
    assert GEO.active_fans.shape == GEO.passive_fans.shape == (3, n, ck.F_NCOL)
    assert GEO.active_edges.shape == (3 * L.EDGES_PER_PETAL, L.SEG_NCOL)
    assert GEO.active_points.shape == (3 * L.POINTS_PER_PETAL, L.PT_NCOL)
    assert GEO.stops.shape == (3, L.ST_NCOL)
    assert GEO.latches.shape == (3 * L.LATCHES_PER_PAIR, L.LA_NCOL)
    assert GEO.sensors.shape == (L.N_SENSORS, L.SE_NCOL)
    assert GEO.active_circle.shape == (ck.C_SIZE,) and GEO.passive_plane.shape == (ck.PL_SIZE,)
    for k in range(3):
        assert GEO.active_fans[k].flags.c_contiguous


@pytest.mark.parametrize("bits", [1, 3, 8])
def test_generator_count_is_two_to_the_n_plus_one(bits):
    g = build_geometry(_design(generator_bits=bits))
    assert g.active_fans.shape[1] == g.passive_fans.shape[1] == 2 ** bits + 1


# --------------------------------------------------------------------------------------------
# the petal construction (digest 9.1)
def test_generators_start_on_the_max_circle_and_end_on_the_petal():
    """Starts: on the R_R,max circle and on the cone (so the generator lies on the cone).
    Ends: on the cone and either on the top edge (x = h) or on a side-face plane."""
    rmax, h = RING.max_radius, RING.petal_height
    for k in range(3):
        fan = GEO.active_fans[k]
        s = fan[:, ck.F_PX:ck.F_PX + 3]
        e = s + fan[:, ck.F_LX:ck.F_LX + 3]
        assert np.abs(np.hypot(s[:, 1], s[:, 2]) - rmax).max() < TOL
        assert np.abs(s[:, 0] - GEO.ring[L.RG_X_START]).max() < TOL
        assert np.all(s[:, 0] < 0.0)                       # below the ring plane
        assert _cone_distance(s, RING).max() < TOL
        assert _cone_distance(e, RING).max() < TOL
        planes = GEO.active_side_planes[k]
        d_side = np.min(np.abs(e @ planes[:, :3].T - planes[:, 3]), axis=1)
        d_top = np.abs(e[:, 0] - h)
        assert np.minimum(d_side, d_top).max() < TOL
        # and never beyond: every end is inside or on both side planes and at or below the top
        assert np.all(e @ planes[:, :3].T - planes[:, 3] < TOL)
        assert np.all(e[:, 0] < h + TOL)


def test_generator_lengths_closed_forms_and_monotone_in_the_side_regions():
    lmin = RING.max_lateral_penetration / math.sin(RING.cone_angle)
    x0 = -RING.max_lateral_penetration / math.tan(RING.cone_angle)
    lmax = (RING.petal_height - x0) / math.cos(RING.cone_angle)
    for fans in (GEO.active_fans, GEO.passive_fans):
        for fan in fans:
            ln = np.linalg.norm(fan[:, ck.F_LX:ck.F_LX + 3], axis=1)
            mid = len(ln) // 2
            assert abs(ln[0] - lmin) < TOL and abs(ln[-1] - lmin) < TOL
            assert abs(ln.max() - lmax) < TOL and abs(ln[mid] - lmax) < TOL
            assert np.all(np.diff(ln[:mid + 1]) >= -TOL)     # rises from L_min ...
            assert np.all(np.diff(ln[mid:]) <= TOL)          # ... and falls back to it
            assert ln[1] > ln[0] + 1e-6                      # strictly in the side regions
            # the middle generators (between A1 and A2) have L_max: as many as the top span
            # covers of the base span (+-1 for the grid): 16/50 of 256 intervals = 82 +- 2
            n_top = np.count_nonzero(np.abs(ln - lmax) < TOL)
            expect = RING.petal_top_span / RING.petal_span * (len(ln) - 1)
            assert abs(n_top - expect) <= 2


def test_upper_edges_pass_through_b_and_a_and_start_on_the_max_circle():
    e = GEO.active_edges.reshape(3, L.EDGES_PER_PETAL, L.SEG_NCOL)
    b = GEO.active_points.reshape(3, 2, 3)
    h, rr = RING.petal_height, RING.inner_radius
    for k in range(3):
        phi = GEO.active_petal_azimuths[k]
        for j, (up, low) in enumerate(((L.EDGE_UPPER_1, L.EDGE_LOWER_1),
                                       (L.EDGE_UPPER_2, L.EDGE_LOWER_2))):
            c, v = e[k, up, :3], e[k, up, 3:]
            a = c + v
            # A: on the cone at the top, at phi -+ top_span / 2 (closed form)
            th = phi + (2 * j - 1) * 0.5 * RING.petal_top_span
            assert np.abs(a - [h, RING.top_radius * math.cos(th),
                               RING.top_radius * math.sin(th)]).max() < TOL
            # B: in the ring plane on the R_R circle at phi -+ span / 2, on the segment
            th = phi + (2 * j - 1) * 0.5 * RING.petal_span
            bj = b[k, j]
            assert np.abs(bj - [0.0, rr * math.cos(th), rr * math.sin(th)]).max() < TOL
            t = (bj - c) @ v / (v @ v)
            assert 0.0 < t < 1.0
            assert np.linalg.norm(c + t * v - bj) < TOL
            # C: on the R_R,max circle, below the ring plane
            assert abs(math.hypot(c[1], c[2]) - RING.max_radius) < TOL and c[0] < 0.0
            # lower edge E -> A, E from the design
            assert np.linalg.norm(e[k, low, :3] + e[k, low, 3:] - a) < TOL
            assert abs(math.hypot(*e[k, low, 1:3]) - RING.lower_point_radius) < TOL
            # side face j contains C, A, E (edges bound it)
            n, d = GEO.active_side_planes[k, j, :3], GEO.active_side_planes[k, j, 3]
            for p in (c, a, e[k, low, :3], bj):
                assert abs(n @ p - d) < TOL


def test_straight_edge_deviates_from_the_true_edge_by_millimetres():
    """The side face cuts the cone along a conic (digest 9.1: 4.65 mm from the straight edge
    on the paper's unit). Brute force: the farthest of 2001 points of the exact curve
    cone x side plane between B and A from the line B A is of that order (1-10 mm) here."""
    k, j = 0, 0
    n, d = GEO.active_side_planes[k, j, :3], GEO.active_side_planes[k, j, 3]
    b = GEO.active_points[0]
    a = GEO.active_edges[L.EDGE_UPPER_1, :3] + GEO.active_edges[L.EDGE_UPPER_1, 3:]
    ta = math.tan(RING.cone_angle)
    # azimuths between B and A: on each generator the plane crossing (a line, once)
    phis = np.linspace(math.atan2(b[2], b[1]), math.atan2(a[2], a[1]), 2001)
    apex = np.array([RING.inner_radius / ta, 0.0, 0.0])
    base = np.stack([np.zeros_like(phis), RING.inner_radius * np.cos(phis),
                     RING.inner_radius * np.sin(phis)], axis=1)
    u = apex - base
    t = (d - base @ n) / (u @ n)
    curve = base + t[:, None] * u
    w = (a - b) / np.linalg.norm(a - b)
    rel = curve - b
    dev = np.linalg.norm(rel - (rel @ w)[:, None] * w, axis=1).max()
    assert 1e-3 < dev < 1e-2


# --------------------------------------------------------------------------------------------
# androgynous turn and three-fold symmetry
def test_turn_is_a_proper_half_turn_about_z():
    assert np.allclose(ANDROGYNOUS_TURN @ ANDROGYNOUS_TURN.T, np.eye(3), atol=0)
    assert np.linalg.det(ANDROGYNOUS_TURN) == 1.0
    half_turn = Rotation.from_euler("z", math.pi).as_matrix()
    assert np.abs(ANDROGYNOUS_TURN - half_turn).max() < TOL


def test_passive_tables_are_the_active_ones_turned_over():
    """Passive tables are built on their own (facing -X, mirrored azimuths); they must equal
    the active tables under T = diag(-1, -1, 1), row for row."""
    assert np.abs(GEO.passive_fans - passive_from_active(GEO.active_fans)).max() < TOL
    assert np.abs(GEO.passive_edges - passive_from_active(GEO.active_edges)).max() < TOL
    assert np.abs(GEO.passive_points - passive_from_active(GEO.active_points)).max() < TOL
    n_a = GEO.active_side_planes[..., :3]
    assert np.abs(GEO.passive_side_planes[..., :3] - passive_from_active(n_a)).max() < TOL
    assert np.abs(GEO.passive_side_planes[..., 3] - GEO.active_side_planes[..., 3]).max() < TOL
    # the circle: centre and axis turned, and the carrying body swapped
    c_a, c_p = GEO.active_circle, GEO.passive_circle
    axis_a = c_a[ck.C_UX:ck.C_UX + 3]
    assert np.array_equal(c_p[ck.C_UX:ck.C_UX + 3], ANDROGYNOUS_TURN @ axis_a)
    assert c_p[ck.C_R] == c_a[ck.C_R] and c_p[ck.C_SIDE] == -c_a[ck.C_SIDE] == 1.0
    # passive petals protrude towards -X_PU, active ones towards +X_A
    assert GEO.passive_fans[..., ck.F_LX].max() < 0.0 < GEO.active_fans[..., ck.F_LX].min()


def test_three_fold_symmetry():
    """Petal k+1 (and its latches, sensor, stop) is petal k turned by 120 deg about X; on
    the passive ring (the turned design, azimuths pi - phi_k) by -120 deg."""
    r = _rot_x(2.0 * math.pi / 3.0)
    rp = _rot_x(-2.0 * math.pi / 3.0)
    fa = GEO.active_fans
    ea = GEO.active_edges.reshape(3, -1, L.SEG_NCOL)
    pa = GEO.active_points.reshape(3, 2, 3)
    la = GEO.latches.reshape(3, 2, L.LA_NCOL)
    for k in range(2):
        for tab, rot in ((fa, r), (GEO.passive_fans, rp)):
            m = np.concatenate([tab[k, :, :3] @ rot.T, tab[k, :, 3:] @ rot.T], axis=1)
            assert np.abs(m - tab[k + 1]).max() < TOL
        m = np.concatenate([ea[k, :, :3] @ r.T, ea[k, :, 3:] @ r.T], axis=1)
        assert np.abs(m - ea[k + 1]).max() < TOL
        assert np.abs(pa[k] @ r.T - pa[k + 1]).max() < TOL
        assert np.abs(la[k, :, :3] @ r.T - la[k + 1, :, :3]).max() < TOL
        assert np.abs(la[k, :, 3:6] @ r.T - la[k + 1, :, 3:6]).max() < TOL
        assert np.abs(GEO.sensors[k, :3] @ r.T - GEO.sensors[k + 1, :3]).max() < TOL
        ey = GEO.stops[:, [L.ST_EY, L.ST_EZ]]      # stop k faces active petal k
        assert np.abs(r[1:, 1:] @ ey[k] - ey[k + 1]).max() < TOL
        assert np.array_equal(GEO.stops[k, :L.ST_EY], GEO.stops[k + 1, :L.ST_EY])


# --------------------------------------------------------------------------------------------
# interleaving
def test_preset_interleaves_with_the_closed_form_clearance():
    """Three active and three passive petals of span s at 60-degree pitch: each clearance is
    60 deg - s (= 10 deg for the preset's 50 deg)."""
    cl = interleave_clearances(GEO)
    assert cl.shape == (3, 2)
    assert np.abs(cl - (math.pi / 3.0 - RING.petal_span)).max() < TOL


def test_interleave_check_fails_for_a_petal_span_too_wide():
    wide = math.radians(65.0)
    with pytest.raises(ValueError, match=r"active petal 1 and passive petal \d overlap by "
                                         r"5\.00 deg") as err:
        build_geometry(_design(petal_span=wide, lower_point_span=wide))
    assert err.value.key == "ring.petal_span"


def test_interleave_check_fails_when_the_turn_lands_petals_on_petals():
    # petal 1 on +Z: the half-turn about Z maps each petal onto a petal
    with pytest.raises(ValueError, match="do not interleave"):
        build_geometry(_design(first_petal_azimuth=math.pi / 2.0))


# --------------------------------------------------------------------------------------------
# stops, latches, sensors
def test_stops_face_the_active_petals_and_latches_sit_behind_the_crests():
    s = CFG.design.stops
    assert np.abs(_wrap(GEO.stops[:, L.ST_AZ] - GEO.active_petal_azimuths)).max() < TOL
    g = GEO.stops[:, L.ST_GUIDE:L.ST_GUIDE + ck.S45_SIZE]
    lk = GEO.stops[:, L.ST_LOCK:L.ST_LOCK + ck.S45_SIZE]
    crest = g[:, ck.S45_XCREST]
    # the two 45-degree faces meet at the crest (R_Stop,min) and the guide starts at R_Stop,max
    rho = lambda t, x: t[:, ck.S45_RHO0] + t[:, ck.S45_SIGMA] * (x - t[:, ck.S45_X0])  # noqa
    assert np.abs(rho(g, crest) - s.min_radius).max() < TOL
    assert np.abs(rho(lk, crest) - s.min_radius).max() < TOL
    assert np.abs(rho(g, g[:, ck.S45_XLO]) - s.max_radius).max() < TOL
    assert np.all(g[:, ck.S45_SIGMA] == -1.0) and np.all(lk[:, ck.S45_SIGMA] == 1.0)
    # mated rings (ring axes = PU): each latch tip is behind the crest, outside R_Stop,min,
    # off the locking face; the segment crosses the crest plane inside R_Stop,min
    for m in range(6):
        a, n = GEO.latches[m, L.LA_AX:L.LA_AX + 3], GEO.latches[m, L.LA_NX:L.LA_NX + 3]
        assert abs(np.linalg.norm(n) - 1.0) < TOL
        k = int(GEO.latches[m, L.LA_STOP])
        tip = a + GEO.latches[m, L.LA_LEN] * n
        rt = math.hypot(tip[1], tip[2])
        assert tip[0] > crest[k] and s.min_radius < rt < rho(lk, tip[0])[k]
        t = (crest[k] - a[0]) / (tip[0] - a[0])
        assert 0.0 < t < 1.0 and math.hypot(*(a + t * (tip - a))[1:]) < s.min_radius
        # in the stop's sector
        y, z = tip[1], tip[2]
        st = GEO.stops[k]
        assert y * st[L.ST_EY] + z * st[L.ST_EZ] >= st[L.ST_COS_HW] * rt


def test_capture_sensors_protrude_onto_the_mating_face():
    cs = CFG.design.sensors
    c = GEO.sensors[:, :3]
    assert np.all(c[:, 0] + GEO.sensors[:, L.SE_R] > 0.0)
    assert abs(cs.protrusion - 0.005) < TOL
    rho = np.hypot(c[:, 1], c[:, 2])
    pl = GEO.passive_plane
    assert np.all(rho - cs.radius >= pl[ck.PL_RMIN]) and np.all(rho + cs.radius <= pl[ck.PL_RMAX])


def _wrap(a):
    return np.angle(np.exp(1j * np.asarray(a)))


@pytest.mark.parametrize("change, key, what", [
    ({"stops.min_radius": 0.53}, "ring.stops.min_radius", "R_Stop,min < R_Stop,max"),
    ({"latches.extended_length": 0.02}, "ring.latches.base_x", "span the stop's crest"),
    ({"latches.elevation": 1.2}, "ring.latches.extended_length", "tip radius"),
    ({"stops.guide_depth": 0.01, "stops.locking_depth": 0.05}, "ring.stops.min_radius",
     "would hit the stop ridge"),
    ({"latches.pair_half_angle": 0.2}, "ring.latches.pair_half_angle", "outside the sector"),
    ({"capture_sensors.centre_radius": 0.59}, "ring.capture_sensors.centre_radius",
     "mating ring face"),
    ({"petal_top_span": 0.9}, "ring.petal_top_span", "below ring.petal_span"),
])
def test_inconsistent_designs_are_refused_with_the_key(change, key, what):
    with pytest.raises(InputError, match=what) as err:
        build_geometry(_design(**change))
    assert err.value.key == key


# --------------------------------------------------------------------------------------------
# configuration
def test_from_dict_rejects_a_bad_key_naming_it_and_the_file():
    bad = copy.deepcopy(RAW)
    bad["ring"]["petal_hieght"] = 0.3
    with pytest.raises(InputError) as err:
        PeripheralConfig.from_dict(bad, source="reference.toml")
    assert err.value.key == "ring.petal_hieght" and err.value.source == "reference.toml"
    assert "reference.toml: 'ring.petal_hieght': unknown key" in str(err.value)
    bad = copy.deepcopy(RAW)
    bad["ring"]["latches"]["length"] = 0.3
    with pytest.raises(InputError, match="unknown key") as err:
        PeripheralConfig.from_dict(bad, source="x.toml")
    assert err.value.key == "ring.latches.length"
    bad = copy.deepcopy(RAW)
    bad["unit"] = "probe_cone"
    with pytest.raises(InputError, match="peripheral") as err:
        PeripheralConfig.from_dict(bad)
    assert err.value.key == "unit"
    with pytest.raises(InputError) as err:
        RingGeometry.from_dict({**RAW["ring"], "cone_angle": "steep"}, source="f.toml")
    assert err.value.key == "ring.cone_angle" and err.value.source == "f.toml"


def test_preset_vehicles_and_geometry_pack():
    assert CFG.active.mass == 12000.0 and CFG.passive.mass == 420000.0
    assert CFG.name == "reference"
    g = Geometry.pack(CFG.design)
    assert np.array_equal(g.active_fans, GEO.active_fans)
    with pytest.raises(ValueError):
        g.active_fans[0, 0, 0] = 1.0          # read-only tables


# --------------------------------------------------------------------------------------------
# the fans in the contact detector (digest 9.5): dichotomy == exhaustive search
def _pose(rng):
    """Active ring frame in PU: axial -0.30 .. +0.02 m, lateral <= 0.12 m, angles <= 6 deg."""
    r = np.array([rng.uniform(-0.30, 0.02), *rng.uniform(-0.12, 0.12, 2)])
    a = Rotation.from_euler("xyz", rng.uniform(-1, 1, 3) * math.radians(6)).as_matrix()
    return np.ascontiguousarray(r), np.ascontiguousarray(a)


def test_fan_dichotomy_agrees_with_exhaustive_search_active_on_passive_circle():
    rng = np.random.default_rng(18)
    circ = GEO.passive_circle
    outcomes = {K.NONE: 0, K.CONTACT: 0}
    for _ in range(1500):
        r, a = _pose(rng)
        for k in range(3):
            fan = GEO.active_fans[k]
            c1 = K.fan_vs_circle(fan, r, a, circ, 1.0, False)
            c2 = K.fan_vs_circle(fan, r, a, circ, 1.0, True)
            assert c1[0] == c2[0] and c1[1] == c2[1], (r, a, k)
            if c1[0] == K.CONTACT:
                assert np.allclose(c1[2:8], c2[2:8], rtol=0, atol=0)
            outcomes[c1[0]] = outcomes.get(c1[0], 0) + 1
    assert outcomes[K.CONTACT] > 500 and outcomes[K.NONE] > 500   # both well represented


def test_fan_dichotomy_agrees_with_exhaustive_search_passive_on_active_circle():
    """Passive fans (in PU: origin 0, identity DCM) against the active ring's circle moved
    into PU (digest eq. 2.1), the other half of the androgynous pair."""
    rng = np.random.default_rng(81)
    eye, zero = np.eye(3), np.zeros(3)
    n_contact = 0
    for _ in range(1500):
        r, a = _pose(rng)
        c = GEO.active_circle.copy()
        c[ck.C_BX:ck.C_BX + 3] = r + a.T @ GEO.active_circle[ck.C_BX:ck.C_BX + 3]
        c[ck.C_UX:ck.C_UX + 3] = a.T @ GEO.active_circle[ck.C_UX:ck.C_UX + 3]
        for k in range(3):
            c1 = K.fan_vs_circle(GEO.passive_fans[k], zero, eye, c, 1.0, False)
            c2 = K.fan_vs_circle(GEO.passive_fans[k], zero, eye, c, 1.0, True)
            assert c1[0] == c2[0] and c1[1] == c2[1]
            n_contact += c1[0] == K.CONTACT
            if c1[0] == K.CONTACT:
                assert c1[2] > 0.0        # normal from the active into the passive body
    assert n_contact > 500


def test_coaxial_mated_rings_touch_nothing_but_the_plane():
    """Rings coaxial and aligned with the ring planes 1 mm apart: no active generator crosses
    the passive circle outside it (the cone meets the ring plane exactly on R_R, and the
    exhaustive search finds no crossing beyond it)."""
    r, a = np.array([-0.001, 0.0, 0.0]), np.eye(3)
    for k in range(3):
        c = K.fan_vs_circle(GEO.active_fans[k], r, a, GEO.passive_circle, 1.0, True)
        assert c[0] == K.NONE
