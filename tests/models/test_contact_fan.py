"""Generator fan vs boundary circle (digest 9.5): guarded dichotomy against exhaustive search."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from models._kernels import contact as K
from models.contact import Circle, GeneratorFan, fan_search, fan_vs_circle

# a petal of 2^8 + 1 generators (the paper's N = 8), spanning 100 degrees, leaning inwards to
# an apex on the axis, with generators shortened towards both ends (side-face regions)
FAN = GeneratorFan.petal(n_bits=8, start_radius=0.42, start_x=-0.02, apex_x=0.9,
                         phi_min=-math.radians(50), phi_max=math.radians(50), length_max=0.25,
                         length_min=0.05)
RING = Circle((0.0, 0.0, 0.0), (1.0, 0.0, 0.0), 0.40)   # passive inner boundary circle


def _random_pose(rng):
    """Fan frame in PU: axial offset, lateral misalignment <= 8 cm, angles <= 8 degrees."""
    r = np.array([rng.uniform(-0.2, 0.05), *rng.uniform(-0.08, 0.08, 2)])
    a = Rotation.from_euler("xyz", rng.uniform(-1, 1, 3) * math.radians(8)).as_matrix()
    return np.ascontiguousarray(r), np.ascontiguousarray(a)


def test_fan_search_equals_exhaustive_search_on_10000_cases():
    rng = np.random.default_rng(95)
    fan, circ = FAN.packed, RING.packed
    evals = []
    n_contact = 0
    for _ in range(10_000):
        r, a = _random_pose(rng)
        i1, d1, n1 = K.fan_search(fan, r, a, circ, False)
        i2, d2, n2 = K.fan_search(fan, r, a, circ, True)
        assert d1 == d2            # same maximum of the characteristic distance (ties allowed)
        assert n2 == len(fan)
        evals.append(n1)
        c1 = K.fan_vs_circle(fan, r, a, circ, 1.0, False)
        c2 = K.fan_vs_circle(fan, r, a, circ, 1.0, True)
        assert c1[0] == c2[0] and c1[1] == c2[1]
        n_contact += c1[0] == K.CONTACT
    assert 2000 < n_contact < 8000          # both outcomes well represented
    assert max(evals) <= 2 * 8 + 8          # log-time: at most ~24 of 257 generators
    assert np.mean(evals) < 0.1 * len(fan)


def test_fan_depth_close_to_deepest_generator():
    """For shallow contacts the fan's depth is within 0.1 % of the deepest single generator
    (the search picks the largest characteristic distance d, the deepest generator maximizes
    Delta * cos(angle); they differ by the change of the cosine between neighbours) and no
    penetrating configuration is missed."""
    rng = np.random.default_rng(7)
    fan, circ = FAN.packed, RING.packed
    checked = 0
    for _ in range(1500):
        r, a = _random_pose(rng)
        starts = r + fan[:, 0:3] @ a
        vecs = fan[:, 3:6] @ a
        depths = np.zeros(len(fan))
        for i in range(len(fan)):
            c = K.segment_vs_circle(*starts[i], *vecs[i], circ, 1.0)
            depths[i] = c[1] if c[0] == K.CONTACT else 0.0
        best = depths.max()
        if not 0.0 < best < 0.01:
            continue
        checked += 1
        got = K.fan_vs_circle(fan, r, a, circ, 1.0, False)
        assert got[0] == K.CONTACT
        assert best - 1e-3 * best - 1e-12 <= got[1] <= best + 1e-12
    assert checked > 50


def test_valley_profile_terminates_at_the_larger_end():
    """Parallel generators whose crossings lie on a straight line past the circle centre:
    d is smallest in the middle (the digest's "valley"); the paper's keep-the-two-largest rule
    would keep both ends forever. The guarded search returns the larger end."""
    z = np.linspace(-1.0, 1.2, 257)
    starts = np.stack([np.full_like(z, -0.1), np.full_like(z, 0.3), z], axis=1)
    fan = GeneratorFan(starts, np.tile([0.2, 0.0, 0.0], (257, 1)))
    i, d, n = fan_search(fan, np.zeros(3), np.eye(3), RING)
    assert i == 256 and d == pytest.approx(math.hypot(0.3, 1.2))
    c = fan_vs_circle(fan, np.zeros(3), np.eye(3), RING, 10.0)
    assert c.feature == 256


def test_search_terminates_on_arbitrary_profiles():
    """Random fans (any profile): the search returns a local maximum after a bounded number of
    evaluations."""
    rng = np.random.default_rng(3)
    circ = RING.packed
    eye, zero = np.eye(3), np.zeros(3)
    for _ in range(2000):
        n = int(rng.integers(2, 300))
        fan = np.ascontiguousarray(np.hstack([rng.normal(size=(n, 3)),
                                              rng.normal(size=(n, 3))]))
        i, d2, evals = K.fan_search(fan, zero, eye, circ, False)
        assert 0 <= i < n
        assert evals <= 2 * math.ceil(math.log2(n)) + 5 + 2 * n
        _, d_ref, _ = K.fan_search(fan, zero, eye, circ, True)
        assert d2 <= d_ref
        nb = [K.fan_search(fan[j:j + 1], zero, eye, circ, True)[1]
              for j in (i - 1, i + 1) if 0 <= j < n]
        assert all(d2 >= v for v in nb)


def test_fan_contact_in_pu_matches_single_generator():
    """The fan result (fan frame -> PU) equals the segment/circle detector applied in PU to the
    chosen generator."""
    rng = np.random.default_rng(11)
    found = 0
    while found < 20:
        r, a = _random_pose(rng)
        c = fan_vs_circle(FAN, r, a, RING, 1.0)
        if c is None:
            continue
        found += 1
        i = c.feature
        st = K.segment_vs_circle(*(r + a.T @ FAN.starts[i]), *(a.T @ FAN.vectors[i]),
                                 RING.packed, 1.0)
        assert st[0] == K.CONTACT
        assert c.depth == pytest.approx(st[1], abs=1e-12)
        assert np.allclose(c.normal, st[2:5], atol=1e-12)
        assert np.allclose(c.point, st[5:8], atol=1e-12)
