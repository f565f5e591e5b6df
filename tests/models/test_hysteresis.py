"""Hysteresis elements of Yaskevich (seed digest Part A): state table, transition segment,
continuity, loop energy, brake shifts, illegal sequences, validation.

Numbers are in arbitrary consistent units unless stated; the physics is scale-free.
"""
import math

import numpy as np
import pytest

from models._kernels import hysteresis as K
from models.errors import InputError
from models.hysteresis import (FrictionBrakeElement, HysteresisElement, IllegalTransition,
                               element_from_dict, loop_energy, pack_elements)

# An asymmetric element: backlash on both sides, different tables per side, so that a mirror
# bug (wrong side's table, wrong sign) changes numbers. N_P = 5, N_N = 4.
ASYM = {
    "name": "asym",
    "positive": {
        "k_max": 10.0,
        "forward": {"q": [0.2, 1.0, 3.0, 4.0, 5.0], "Q": [0.0, 0.8, 4.8, 7.8, 13.0]},
        "backward": {"q": [0.2, 1.0, 2.5, 4.2, 5.0], "Q": [0.0, 0.8, 1.55, 5.0, 13.0]},
    },
    "negative": {
        "k_max": 6.0,
        "forward": {"q": [-0.1, -0.5, -2.0, -4.0], "Q": [0.0, -0.5, -4.0, -12.0]},
        "backward": {"q": [-0.1, -0.5, -3.0, -4.0], "Q": [0.0, -0.5, -6.0, -12.0]},
    },
}

# The simple element of the loop-area test: no backlash, two working segments per branch.
SIMPLE = {
    "name": "simple",
    "positive": {
        "k_max": 10.0,
        "forward": {"q": [0.0, 1.0, 3.0, 5.0], "Q": [0.0, 1.0, 5.0, 13.0]},
        "backward": {"q": [0.0, 1.0, 4.0, 5.0], "Q": [0.0, 1.0, 3.0, 13.0]},
    },
    "negative": "mirror",
}

BRAKE = {
    "name": "brake",
    "variant": "friction_brake",
    "positive": {
        "forward": {"q": [0.0, 0.5, 2.0, 3.0], "Q": [0.0, 1.0, 5.0, 9.0]},
        "backward": {"q": [0.0, 0.5, 2.5, 3.0], "Q": [0.0, 1.0, 3.0, 9.0]},
    },
    "negative": {
        "forward": {"q": [0.0, -0.4, -1.5, -2.0], "Q": [0.0, -1.0, -4.0, -6.0]},
        "backward": {"q": [0.0, -0.4, -1.8, -2.0], "Q": [0.0, -1.0, -2.0, -6.0]},
    },
}


def _elem(d):
    return element_from_dict(d)


class _Machine:
    """One element on the raw kernel, to set states directly and read them back."""

    def __init__(self, element):
        self.e = element
        p = pack_elements([element])
        self.table = p.table
        self.ist, self.fst = p.fresh_state()

    @property
    def state(self):
        return int(self.ist[K.I_STATE])

    def set(self, state, seg=None):
        self.ist[K.I_STATE] = state
        if seg is not None:
            self.fst[K.S_X3B:K.S_Y3E + 1] = seg

    def update(self, q, qdot, t=0.0):
        return K.hyst_update(self.table, 0, self.ist, 0, self.fst, 0, q, qdot, t)

    def force(self, q):
        return K.hyst_force(self.table, 0, self.ist, 0, self.fst, 0, q)


def _points(element, sign):
    """Named abscissas on one side (signed): inside the state-0 band, in the working range,
    beyond the range."""
    side = element.positive if sign > 0 else element.negative
    qf = np.asarray(side.forward.q)
    return {
        "band": 0.5 * qf[1],
        "working": 0.5 * (qf[2] + qf[-2]),
        "beyond": qf[-1] + 0.5 * (qf[-1] - qf[-2]),
        "top": qf[-1],
    }


# -- Table 1 of [Y] (digest A.5) and its mirror (A.6), row by row --------------------------
# (current state, where q is, sign of qdot, new state); the mirror rows negate all three.
ROWS = [
    (0, "working", +1, 1),
    (1, "working", +1, 1),
    (1, "beyond", +1, 10),
    (1, "working", -1, 3),
    (10, "beyond", +1, 10),
    (10, "beyond", -1, 2),
    (10, "working", -1, 2),
    (2, "working", -1, 2),
    (2, "beyond", +1, 10),
    (2, "working", +1, 3),
]


@pytest.mark.parametrize("elem_d", [ASYM, SIMPLE], ids=["asym", "simple"])
@pytest.mark.parametrize("sign", [1, -1], ids=["positive", "mirror"])
@pytest.mark.parametrize(("s0", "where", "v", "s1"), ROWS)
def test_table_rows(elem_d, sign, s0, where, v, s1):
    m = _Machine(_elem(elem_d))
    q = _points(m.e, sign)[where]
    m.set(sign * s0)
    assert m.update(q, sign * v) == K.ST_OK
    assert m.state == sign * s1


@pytest.mark.parametrize("sign", [1, -1], ids=["positive", "mirror"])
@pytest.mark.parametrize("s0", [0, 1, 2, 3, 10])
@pytest.mark.parametrize("v", [1, -1, 0])
def test_any_state_to_zero_inside_band(sign, s0, v):
    """Row "any -> 0": inside (q_FN(2), q_FP(2)) the state is 0 whatever the rate."""
    m = _Machine(_elem(ASYM))
    m.set(sign * s0, seg=(1.0, 1.0, 2.0, 2.0))
    assert m.update(_points(m.e, sign)["band"], v) == K.ST_OK
    assert m.state == 0


@pytest.mark.parametrize("sign", [1, -1], ids=["positive", "mirror"])
@pytest.mark.parametrize("start", [1, 2])
def test_transition_state_rows(sign, start):
    """State 3 rows: inside the segment either rate keeps 3; above its end with qdot > 0 -> 1;
    below its beginning with qdot < 0 -> 2. Entered from 1 (and 2) at a working point."""
    e = _elem(ASYM)
    m = _Machine(e)
    q = _points(e, sign)["working"]
    m.set(sign * start)
    assert m.update(q, -sign if start == 1 else sign) == K.ST_OK
    assert m.state == sign * 3
    xb, yb, xe, ye = m.fst[K.S_X3B:K.S_Y3E + 1]
    assert xb < xe
    mid = sign * 0.5 * (xb + xe)  # back to signed q (segment stored in the side frame)
    for v in (1, -1, 1):
        assert m.update(mid, v) == K.ST_OK and m.state == sign * 3
    saved = (m.ist.copy(), m.fst.copy())
    assert m.update(sign * (xe + 0.01), sign) == K.ST_OK
    assert m.state == sign * 1
    m.ist[:], m.fst[:] = saved
    assert m.update(sign * (xb - 0.01), -sign) == K.ST_OK
    assert m.state == sign * 2


@pytest.mark.parametrize("sign", [1, -1], ids=["positive", "mirror"])
def test_transition_segment_geometry(sign):
    """1 -> 3: the segment's end is the reversal point on the forward branch, its beginning on
    the backward branch, both on one line of slope k3 (digest A.7). 2 -> 3 symmetrically."""
    e = _elem(ASYM)
    side = e.positive if sign > 0 else e.negative
    for start, here, there in ((1, side.forward, side.backward), (2, side.backward,
                                                                   side.forward)):
        for qr in np.linspace(abs(side.forward.q[1]) * 1.01, abs(side.forward.q[-1]) * 0.999,
                              37):
            m = _Machine(e)
            m.set(sign * start)
            v = -sign if start == 1 else sign
            assert m.update(sign * qr, v) == K.ST_OK
            xb, yb, xe, ye = m.fst[K.S_X3B:K.S_Y3E + 1]
            own = (xe, ye) if start == 1 else (xb, yb)
            other = (xb, yb) if start == 1 else (xe, ye)
            # stored in the side frame (q' = sign q, Q' = sign Q)
            assert own[0] == pytest.approx(qr, abs=1e-15)
            assert sign * own[1] == pytest.approx(float(here.force(sign * qr)), rel=1e-12)
            assert sign * other[1] == pytest.approx(float(there.force(sign * other[0])),
                                                    rel=1e-9, abs=1e-12)
            assert (ye - yb) == pytest.approx(side.k3 * (xe - xb), rel=1e-9, abs=1e-12)


def test_collinear_reversal_on_last_backward_segment_meets_forward_at_node():
    """Digest A.7 note 2: reversing from state 2 on the last backward segment (slope k_max)
    gives a transition line collinear with it, meeting the forward branch at q(N)."""
    e = _elem(SIMPLE)
    m = _Machine(e)
    m.set(2)
    assert m.update(4.6, +1) == K.ST_OK
    assert m.state == 3
    assert m.fst[K.S_X3E] == pytest.approx(5.0, abs=1e-12)
    assert m.fst[K.S_Y3E] == pytest.approx(13.0, abs=1e-12)


def test_reversal_at_zero_force_and_at_node():
    """Reversal where the force is zero and exactly at a node (digest verification 3)."""
    d = {"positive": {"k_max": 4.0,
                      "forward": {"q": [0.0, 1.0, 2.0, 3.0], "Q": [0.0, 0.0, 2.0, 6.0]},
                      "backward": {"q": [0.0, 1.0, 2.0, 3.0], "Q": [0.0, 0.0, 2.0, 6.0]}},
         "negative": "mirror"}
    # a zero-width loop: forward == backward; the paper's coefficients vanish at zero force
    m = _Machine(_elem(d))
    m.set(1)
    assert m.update(1.0, -1) == K.ST_OK  # exactly at the node q(2), force 0
    m.set(1)
    assert m.update(2.0, -1) == K.ST_OK and m.state == 3  # exactly at an interior node
    assert m.fst[K.S_X3B] == pytest.approx(2.0)
    assert m.force(2.0) == pytest.approx(2.0)


@pytest.mark.parametrize("sign", [1, -1], ids=["positive", "mirror"])
def test_illegal_rows(sign):
    """Combinations not in Table 1 return ST_ILLEGAL and leave the state unchanged."""
    e = _elem(ASYM)
    p = _points(e, sign)
    cases = [(0, p["working"], -sign),          # 0, qdot < 0, q > q_FP(2)
             (10, p["working"], sign),          # 10, qdot > 0, q < q_FP(N)
             (1, p["beyond"] + sign * 1.0, -sign),  # 1: reversal past q_F(N), never in 10
             (1, _points(e, -sign)["working"], -sign)]  # band jumped over in one step
    for s0, q, v in cases:
        m = _Machine(e)
        m.set(sign * s0)
        assert m.update(q, v) == K.ST_ILLEGAL, (s0, q, v)
        assert m.state == sign * s0
    # 3 with qdot > 0 below its beginning, and qdot < 0 above its end
    for v, where in ((sign, "below"), (-sign, "above")):
        m = _Machine(e)
        m.set(sign * 1)
        m.update(p["working"], -sign)
        xb, _, xe, _ = m.fst[K.S_X3B:K.S_Y3E + 1]
        q = sign * (xb - 0.05 if where == "below" else xe + 0.05)
        before = m.fst.copy()
        assert m.update(q, v) == K.ST_ILLEGAL
        assert m.state == sign * 3
        np.testing.assert_array_equal(m.fst, before)


def test_zero_rate_keeps_state():
    m = _Machine(_elem(ASYM))
    for s in (1, 2, 10, -1, -2, -10):
        m.set(s)
        q = _points(m.e, 1 if s > 0 else -1)["working"]
        assert m.update(q, 0.0) == K.ST_OK and m.state == s


# -- histories ------------------------------------------------------------------------------
def _rich_history(amplitudes, n=400):
    """Triangle waves of the given peak values (signed), sampled n per leg."""
    q = [0.0]
    for a in amplitudes:
        q.extend(np.linspace(q[-1], a, n)[1:])
    return np.asarray(q)


HIST_ASYM = np.r_[
    _rich_history([4.5, 2.0, 3.5, 1.5, 6.0, 4.8, 5.5, 0.0, -3.0, -1.0, -5.0, -2.5, -3.5, 1.2,
                   2.8, 0.5, -4.5, 0.0]),
    # one coarse step from a transition segment straight into the band (3 -> 0), both sides:
    # the reversal at 1.2 (the extreme sample), 1.19 still on its transition segment
    np.linspace(0.0, 1.2, 50)[1:], 1.19, 0.3, np.linspace(0.0, -1.2, 50), -1.19, -0.3]


def _transitions(states):
    return {(int(a), int(b)) for a, b in zip(states[:-1], states[1:]) if a != b}


@pytest.mark.parametrize("elem_d,hist", [(ASYM, HIST_ASYM)], ids=["asym"])
def test_history_visits_every_transition_and_force_is_continuous(elem_d, hist):
    """Every listed transition (and mirror) occurs along the history, and the force is
    continuous: a jump between samples is at most the largest stiffness times the step
    (tolerance 1e-9 relative: rounding)."""
    e = _elem(elem_d)
    f, s = e.trace(hist, return_states=True)
    seen = _transitions(s)
    want = {(0, 1), (1, 10), (1, 3), (10, 2), (2, 3), (3, 1), (3, 2), (2, 0), (3, 0)}
    want |= {(-a, -b) for a, b in want}
    assert want <= seen, want - seen
    kmax = max(e.positive.k3, e.negative.k3)
    jumps = np.abs(np.diff(f))
    bound = kmax * np.abs(np.diff(hist)) * (1 + 1e-9) + 1e-12
    assert np.all(jumps <= bound)


def test_monotone_loading_reproduces_the_forward_branch_exactly():
    """0 -> 1 -> 10 on loading: force equals the forward table to rounding (1e-12 relative);
    unloading from beyond the range follows the backward table (10 -> 2 -> 0)."""
    e = _elem(ASYM)
    up = np.linspace(0.0, 6.0, 2001)
    f, s = e.trace(up, return_states=True)
    np.testing.assert_allclose(f, e.positive.forward.force(up), rtol=1e-12, atol=1e-13)
    assert [k for i, k in enumerate(s) if i == 0 or s[i - 1] != k] == [0, 1, 10]
    down = np.r_[up, up[::-1][1:]]
    f2, s2 = e.trace(down, return_states=True)
    back = down[up.size:]
    np.testing.assert_allclose(f2[up.size:], e.positive.backward.force(back), rtol=1e-12,
                               atol=1e-13)
    assert [k for i, k in enumerate(s2) if i == 0 or s2[i - 1] != k] == [0, 1, 10, 2, 0]
    neg = np.linspace(0.0, -5.0, 2001)
    np.testing.assert_allclose(e.trace(neg), e.negative.forward.force(neg), rtol=1e-12,
                               atol=1e-13)


def _shoelace(xy):
    x, y = np.asarray(xy, dtype=float).T
    return 0.5 * float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))


def test_loop_energy_equals_hand_polygon_full_range():
    """0 -> 6 -> 0 on SIMPLE: the loop is the polygon (1,1) (3,5) (5,13) (4,3), area 10 by
    hand (shoelace: (2 + 14 - 37 + 1) / 2 = -10, clockwise, i.e. energy +10 dissipated).
    Corners are sample points, so the trapezoid rule is exact to rounding (1e-12)."""
    e = _elem(SIMPLE)
    q = np.r_[np.linspace(0, 6, 601), np.linspace(6, 0, 601)[1:]]
    assert loop_energy(q, e.trace(q)) == pytest.approx(10.0, rel=1e-12)
    assert -_shoelace([(1, 1), (3, 5), (5, 13), (4, 3)]) == pytest.approx(10.0)
    # the mirrored side dissipates the same on a full symmetric cycle
    q2 = np.r_[q, np.linspace(0, -6, 601)[1:], np.linspace(-6, 0, 601)[1:]]
    assert loop_energy(q2, e.trace(q2)) == pytest.approx(20.0, rel=1e-12)


def test_minor_loop_energy_equals_polygon_through_transition_segments():
    """Cycle 2 <-> 4.5 inside the range of SIMPLE. Hand geometry (slope 10 transitions):
    from (4.5, 11) down to the backward segment 1 + 2/3 (q - 1) at (103/28, 39/14); from
    (2, 5/3) up to the forward segment 1 + 2 (q - 1) at (13/6, 10/3). The loop polygon is
    (9/2, 11) (103/28, 39/14) (2, 5/3) (13/6, 10/3) (3, 5). Reversals are fed with explicit
    rates at the turning points; the corners at the intersections are not samples, so the
    trapezoid error is <= k3 dq^2 per corner (dq = 1e-4: ~1e-7) -> rel. tolerance 1e-6."""
    e = _elem(SIMPLE)
    legs = [(0.0, 4.5), (4.5, 2.0), (2.0, 4.5), (4.5, 2.0)]
    q, v = [], []
    for a, b in legs:
        seg = np.linspace(a, b, int(round(abs(b - a) / 1e-4)) + 1)
        q.extend(seg)
        v.extend([np.sign(b - a)] * seg.size)  # the turning point is repeated with the new rate
    q, v = np.asarray(q), np.asarray(v)
    f = e.trace(q, qdot=v)
    n1 = int(round(4.5 / 1e-4)) + 1 + int(round(2.5 / 1e-4)) + 1  # start of the 2nd up-leg
    cyc = slice(n1 - 1, None)
    poly = [(4.5, 11.0), (103 / 28, 39 / 14), (2.0, 5 / 3), (13 / 6, 10 / 3), (3.0, 5.0)]
    assert loop_energy(q[cyc], f[cyc]) == pytest.approx(-_shoelace(poly), rel=1e-6)
    assert -_shoelace(poly) > 0


def test_small_oscillation_inside_transition_is_reversible():
    e = _elem(ASYM)
    # reversal at 3.5 (the extreme sample: the turning point of the record), then
    # oscillations between 3.40 and 3.45 stay on its transition segment: Q changes by k3 dq
    # both ways
    q = np.r_[np.linspace(0, 3.5, 351), 3.45 - 0.05 * np.abs(np.sin(np.linspace(0, 20, 400)))]
    f, s = e.trace(q, return_states=True)
    assert np.all(s[351:] == 3)
    k3 = e.positive.k3
    np.testing.assert_allclose(np.diff(f[351:]), k3 * np.diff(q[351:]), rtol=1e-9, atol=1e-12)


def test_mirror_symmetry_on_symmetric_element():
    """Negative tables = negated positive ones: Q(-q(t)) = -Q(q(t)), states negated."""
    e = _elem(SIMPLE)
    rng = np.random.default_rng(7)
    peaks = rng.uniform(-6, 6, 25)
    q = _rich_history(list(peaks), n=200)
    f1, s1 = e.trace(q, return_states=True)
    f2, s2 = e.trace(-q, return_states=True)
    np.testing.assert_array_equal(s2, -s1)
    np.testing.assert_allclose(f2, -f1, rtol=1e-13, atol=1e-13)


# -- friction brake (digest A.10) -----------------------------------------------------------
def _run_brake(q):
    e = _elem(BRAKE)
    m = _Machine(e)
    f = np.zeros_like(q)
    s = np.zeros(q.size, dtype=np.int64)
    qd = np.r_[0.0, np.diff(q)]
    st, k = K.hyst_trace(m.table, 0, m.ist, 0, m.fst, 0, q, qd, np.arange(q.size) * 1.0, f, s)
    assert st == K.ST_OK
    return e, m, f, s


def test_brake_slips_accumulate_in_both_directions():
    """Two positive slips of 0.7 and 0.4 beyond q(N) = 3, then a negative slip of 0.5 beyond
    the shifted q_FN(N): the shift is 0.7 + 0.4 - 0.5; the force stays at the slip level
    while slipping and is continuous everywhere."""
    q = _rich_history([3.7, 2.0, 3.7 + 0.4, 1.0, 0.0, -2.0 + 1.1 - 0.5, 0.5 + 1.1], n=2000)
    e, m, f, s = _run_brake(q)
    assert m.ist[K.I_NSLIP] == 3
    assert m.fst[K.S_SHIFT] == pytest.approx(0.7 + 0.4 - 0.5, abs=1e-9)
    slipping = np.abs(s) == 10
    np.testing.assert_allclose(f[slipping & (s > 0)], 9.0, rtol=1e-12)
    np.testing.assert_allclose(f[slipping & (s < 0)], -6.0, rtol=1e-12)
    k3 = max(e.positive.k3, e.negative.k3)
    assert np.all(np.abs(np.diff(f)) <= k3 * np.abs(np.diff(q)) * (1 + 1e-9) + 1e-12)


def test_brake_unloading_follows_shifted_backward_branch():
    """After a slip of delta, unloading follows the backward table translated by delta."""
    delta = 0.6
    q = _rich_history([3.0 + delta, 0.0 + delta], n=3000)
    e, m, f, s = _run_brake(q)
    down = slice(3000, None)
    np.testing.assert_allclose(f[down], e.positive.backward.force(q[down] - delta),
                               rtol=1e-12, atol=1e-12)
    assert m.fst[K.S_SHIFT] == pytest.approx(delta, abs=1e-12)


def test_brake_trace_api_and_class():
    e = _elem(BRAKE)
    assert isinstance(e, FrictionBrakeElement)
    assert e.positive.forward.k[-1] == 0.0
    assert e.positive.k3 == pytest.approx(max(e.positive.backward.k[:-1]))


# -- errors ---------------------------------------------------------------------------------
def test_illegal_sequence_raises_typed_error_with_fields():
    e = _elem(ASYM)
    q = np.array([0.0, 0.5, 2.0])
    qd = np.array([0.0, 1.0, -1.0])  # state 0, then q beyond q_FP(2) with qdot < 0
    t = np.array([0.0, 0.1, 0.2])
    with pytest.raises(IllegalTransition) as info:
        e.trace(q, t, qdot=qd)
    err = info.value
    assert (err.q, err.qdot, err.state, err.time) == (2.0, -1.0, 0, 0.2)
    assert "enlarge the common first segment" in str(err) and "reduce the integration step" \
        in str(err)


def test_warn_policy_keeps_going():
    e = _elem(dict(ASYM, policy="warn"))
    with pytest.warns(RuntimeWarning, match="illegal state transition"):
        f = e.trace(np.array([0.0, 0.5, 2.0, 2.5]), qdot=np.array([0.0, 1.0, -1.0, 1.0]))
    assert np.isfinite(f).all()


BAD = [
    ({"positive": {"k_max": 10.0, "forward": {"q": [0.2, 1.0, 0.9, 5.0],
                                              "Q": [0, 1, 2, 13]},
                   "backward": {"q": [0.2, 1.0, 4.2, 5.0], "Q": [0, 1, 5, 13]}}},
     "positive.forward.q"),
    ({"positive": {"k_max": 10.0, "forward": {"q": [0.2, 1.0, 3.0, 5.0], "Q": [0, 1, 5, 13]},
                   "backward": {"q": [0.2, 1.1, 4.2, 5.0], "Q": [0, 1, 5, 13]}}},
     "positive.backward.q"),
    ({"positive": {"k_max": 1.0, "forward": {"q": [0.2, 1.0, 3.0, 5.0], "Q": [0, 1, 5, 13]},
                   "backward": {"q": [0.2, 1.0, 4.2, 5.0], "Q": [0, 1, 5, 13]}}},
     "positive.k_max"),
    ({"positive": {"k_max": 10.0, "forward": {"q": [0.2, 1.0, 3.0, 5.0], "Q": [0, 1, 5, 13]},
                   "backward": {"q": [0.2, 1.0, 4.2, 5.0], "Q": [0, 1, 6, 13]}}},
     "positive.backward"),
    ({"positive": {"k_max": 10.0, "forward": {"q": [0.2, 1.0, 3.0, 5.0], "Q": [0, 1, 2, 13]},
                   "backward": {"q": [0.2, 1.0, 4.8, 5.0], "Q": [0, 1, 11, 13]}}},
     "positive"),
    ({"positive": {"k_max": 10.0, "forward": {"q": [0.2, 1.0, 3.0, 5.0], "Q": [0, 1, 5]},
                   "backward": {"q": [0.2, 1.0, 4.2, 5.0], "Q": [0, 1, 5, 13]}}},
     "positive.forward.Q"),
    ({"positive": {"k_max": 10.0, "forward": {"q": [0.2, 1.0, 3.0, 5.0], "Q": [0, 1, 5, 13]},
                   "backward": {"q": [0.2, 1.0, 4.2, 5.0], "Q": [0, 1, 5, 13]},
                   "stiffness": 3}},
     "positive.stiffness"),
    ({"positive": {"forward": {"q": [0.2, 1.0, 3.0, 5.0], "Q": [0, 1, 5, 13]},
                   "backward": {"q": [0.2, 1.0, 4.2, 5.0], "Q": [0, 1, 5, 13]}}},
     "positive.k_max"),
    ({"variant": "brake"}, "variant"),
    ({"colour": "red"}, "colour"),
]


@pytest.mark.parametrize(("patch", "key"), BAD)
def test_validation_names_the_key(patch, key):
    d = dict(SIMPLE)
    d.update(patch)
    if "positive" in patch:
        d["negative"] = "mirror"
    with pytest.raises(InputError) as info:
        element_from_dict(d)
    assert info.value.key == key, str(info.value)


def test_stiffness_form_equals_force_form():
    a = _elem(SIMPLE)
    d = {"positive": {"k_max": 10.0, "forward": {"q": [0.0, 1.0, 3.0, 5.0], "k": [1, 2, 4]},
                      "backward": {"q": [0.0, 1.0, 4.0, 5.0], "k": [1, 2 / 3, 10]}},
         "negative": "mirror"}
    b = _elem(d)
    np.testing.assert_allclose(a.table(), b.table(), rtol=1e-12, atol=1e-14)
    assert _elem(a.to_dict()).table().tolist() == a.table().tolist()


# -- the kernel API the docking kernels use -------------------------------------------------
def test_force_is_pure_and_packed_elements_are_independent():
    e1, e2, e3 = _elem(ASYM), _elem(BRAKE), _elem(SIMPLE)
    p = pack_elements([e1, e2, e3])
    ist, fst = p.fresh_state()
    ist0, fst0 = ist.copy(), fst.copy()
    for q in (-5.0, -1.0, 0.0, 0.3, 2.0, 7.0):
        for e in range(3):
            K.hyst_force(p.table, p.toff[e], ist, e * K.I_SIZE, fst, e * K.F_SIZE, q)
    np.testing.assert_array_equal(ist, ist0)
    np.testing.assert_array_equal(fst, fst0)
    # stepping element 1 (the brake) through a slip leaves elements 0 and 2 untouched, and
    # the packed run equals the element's own trace
    q = _rich_history([3.5, 1.0], n=500)
    qd = np.r_[0.0, np.diff(q)]
    forces = [K.hyst_step(p.table, p.toff[1], ist, 1 * K.I_SIZE, fst, 1 * K.F_SIZE,
                          qk, vk, 0.0) for qk, vk in zip(q, qd)]
    assert all(st == K.ST_OK for _, st in forces)
    np.testing.assert_allclose([f for f, _ in forces], e2.trace(q), rtol=0, atol=0)
    np.testing.assert_array_equal(ist[:K.I_SIZE], ist0[:K.I_SIZE])
    np.testing.assert_array_equal(fst[2 * K.F_SIZE:], fst0[2 * K.F_SIZE:])
    assert not p.table.flags.writeable


def test_equivalent_stiffness_and_energy_bridge():
    """Digest B.11 cross-check: for a symmetric cycle the loop energy is positive and grows
    with amplitude; at amplitudes below the common segment the loop has no area."""
    e = _elem(SIMPLE)
    energies = []
    for b in (0.5, 2.0, 3.0, 4.0):
        ph = np.linspace(0, 4 * math.pi, 8001)
        q = b * np.sin(ph)
        f = e.trace(q)
        half = ph >= 2 * math.pi
        energies.append(loop_energy(q[half], f[half]))
    assert abs(energies[0]) < 1e-9
    assert all(b > a > -1e-9 for a, b in zip(energies, energies[1:]))


@pytest.mark.parametrize("elem_d", [ASYM, BRAKE], ids=["asym", "brake"])
def test_fused_step_equals_update_then_force(elem_d):
    """hyst_step's one-pass common case gives exactly update-then-force, both sides."""
    e = _elem(elem_d)
    scale = 1.0 if elem_d is ASYM else 0.7
    q = HIST_ASYM * scale
    qd = np.r_[0.0, np.diff(q)]
    a, b = _Machine(e), _Machine(e)
    for qk, vk in zip(q, qd):
        f1, st1 = K.hyst_step(a.table, 0, a.ist, 0, a.fst, 0, qk, vk, 0.0)
        st2 = b.update(qk, vk)
        assert (f1, st1) == (b.force(qk), st2)
        np.testing.assert_array_equal(a.ist, b.ist)
        np.testing.assert_array_equal(a.fst, b.fst)
