"""Penalty force law (digest 5): third law, moments, friction bounds, no tension."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from models.contact import Contact, ContactLaw, Twist, contact_wrench
from models.errors import InputError

_v3 = st.tuples(*[st.floats(-2.0, 2.0)] * 3)
_unit = st.tuples(*[st.floats(-1.0, 1.0)] * 3).filter(
    lambda v: 0.1 < math.sqrt(sum(x * x for x in v)))


def _contact(depth, normal, point):
    n = np.asarray(normal) / np.linalg.norm(normal)
    return Contact(depth, tuple(n), tuple(point), 0, "test")


@settings(max_examples=200, deadline=None)
@given(depth=st.floats(1e-6, 1e-2), normal=_unit, point=_v3, va=_v3, wa=_v3, oa=_v3,
       vp=_v3, wp=_v3, op=_v3, k=st.floats(1e3, 1e8), c=st.floats(0.0, 1e5),
       mu=st.one_of(st.just(0.0), st.floats(0.01, 1.0)), veps=st.floats(1e-5, 1e-2),
       model=st.sampled_from(["linear", "hunt-crossley"]), q=_v3)
def test_force_law_properties(depth, normal, point, va, wa, oa, vp, wp, op, k, c, mu, veps,
                              model, q):
    con = _contact(depth, normal, point)
    law = ContactLaw(k, c, mu, veps, model)
    act, pas = Twist(va, wa, oa), Twist(vp, wp, op)
    w = contact_wrench(con, act, pas, law)
    n = np.asarray(con.normal)
    p = np.asarray(point)
    # independent kinematics: relative velocity of the material points at p
    vrel = act.point_velocity(p) - pas.point_velocity(p)
    dd = n @ vrel
    assert w.depth_rate == pytest.approx(dd, rel=1e-12, abs=1e-12)
    raw = k * depth + (c * dd if model == "linear" else c * depth * dd)
    f = w.force_passive
    scale = max(abs(raw), 1.0)
    # no tensile normal force: the clamp
    assert w.normal_force == pytest.approx(max(raw, 0.0), rel=1e-12, abs=1e-12 * scale)
    assert f @ n == pytest.approx(w.normal_force, rel=1e-9, abs=1e-9 * scale)
    # friction: tangential part along the active body's slip on the passive body (opposes
    # the active body's slip), never above mu * N
    ft = f - (f @ n) * n
    vt = vrel - dd * n
    assert np.linalg.norm(ft) <= mu * w.normal_force * (1 + 1e-12) + 1e-12 * scale
    if np.linalg.norm(vt) > 1e-9 and w.normal_force > 0 and mu > 0:
        # on the active body it opposes the slip (tolerance: rounding of f - (f.n) n)
        assert (-ft) @ vt <= 1e-9 * scale * np.linalg.norm(vt)
        expected = mu * w.normal_force * np.linalg.norm(vt) / math.hypot(np.linalg.norm(vt),
                                                                         veps)
        assert np.linalg.norm(ft) == pytest.approx(expected, rel=1e-9, abs=1e-9 * scale)
    # third law and moments: equal and opposite forces at one point; moment about any point
    # equals r x f, and the pair's total moment vanishes
    assert np.allclose(w.force_active, -f)
    assert np.allclose(w.moment_passive, np.cross(p - np.asarray(op), f),
                       atol=1e-9 * scale * 10)
    assert np.allclose(w.moment_active, np.cross(p - np.asarray(oa), -f),
                       atol=1e-9 * scale * 10)
    total = w.moment_about(q, on="passive") + w.moment_about(q, on="active")
    assert np.allclose(total, 0.0, atol=1e-9 * scale * 10)
    # transfer of the moment between reference points: M_q = M_o + (o - q) x f
    assert np.allclose(w.moment_about(q), w.moment_passive + np.cross(np.asarray(op)
                                                                      - np.asarray(q), f),
                       atol=1e-9 * scale * 10)


def test_separating_contact_pulls_nothing():
    con = _contact(1e-3, (1, 0, 0), (0, 0, 0))
    law = ContactLaw(1e6, 1e4, 0.3)
    w = contact_wrench(con, Twist((-1.0, 0.5, 0)), Twist(), law)   # k d + c dd = 1e3 - 1e4
    assert w.normal_force == 0.0
    assert np.all(w.force_passive == 0.0)


def test_known_numbers_and_frames():
    """k = 1e6 N/m, c = 1e3 N s/m, depth 1 mm closing at 0.1 m/s: f_n = 1100 N; sliding at
    0.2 m/s >> v_eps: friction 0.3 * 1100 N along the slip within (v_eps/v)^2 / 2."""
    con = _contact(1e-3, (1, 0, 0), (0.5, 0.0, 0.0))
    law = ContactLaw(1e6, 1e3, 0.3, 1e-4)
    w = contact_wrench(con, Twist((0.1, 0.2, 0.0)), Twist(), law)
    assert w.normal_force == pytest.approx(1100.0)
    assert w.force_passive[1] == pytest.approx(330.0, rel=(1e-4 / 0.2) ** 2)
    # link axes: a frame turned 90 degrees about X
    a = np.array([[1.0, 0, 0], [0, 0, 1], [0, -1, 0]])
    f_link, m_link = w.in_frame(a, on="active")
    assert np.allclose(f_link, a @ -w.force_passive)
    assert np.allclose(m_link, a @ np.cross(np.asarray(con.point), -w.force_passive))


def test_hunt_crossley_has_no_jump_at_touch_down():
    law = ContactLaw(1e6, 1e5, model="hunt-crossley")
    w = contact_wrench(_contact(1e-12, (1, 0, 0), (0, 0, 0)), Twist((1.0, 0, 0)), Twist(), law)
    assert w.normal_force < 1e-5
    lin = contact_wrench(_contact(1e-12, (1, 0, 0), (0, 0, 0)), Twist((1.0, 0, 0)), Twist(),
                         ContactLaw(1e6, 1e5))
    assert lin.normal_force == pytest.approx(1e5)   # the paper's law jumps by c * dd


@pytest.mark.parametrize("kwargs, key", [
    ({"stiffness": 0.0}, "law.stiffness"), ({"stiffness": 1.0, "friction": -0.1},
                                            "law.friction"),
    ({"stiffness": 1.0, "model": "hertz"}, "law.model"),
    ({"stiffness": 1.0, "slip_regularization": 0.0}, "law.slip_regularization")])
def test_bad_law_names_its_key(kwargs, key):
    with pytest.raises(InputError) as info:
        ContactLaw(**kwargs)
    assert info.value.key == key
