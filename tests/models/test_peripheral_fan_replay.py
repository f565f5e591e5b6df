"""The fan-vs-circle dichotomy inside the peripheral kernel finds the
contact that exhaustive search over the generators finds, at every fan search of every RK4
stage of every step of a seeded set of random dockings.

Route: each docking runs with the trace group ``search`` over its whole duration and pruning
off, so the kernel writes one row per fan search (three active petals against the passive
inner circle and three passive petals against the active one, at every stage), whatever the
result, with the fan frame (origin and the full PU -> fan matrix), the circle (centre, axis,
radius) and the detector's result (status, generator, penetration, normal, point). Every row
is replayed through :func:`models._kernels.contact_segments.fan_vs_circle` twice:

* with the dichotomy, which must give the traced result bit for bit: the row holds every
  input the search used (the fan table, the circle's side and ``dn_max`` are the run's);
* with exhaustive search over all 257 generators, which must find the same contact: the
  same status and, on a contact, the same generator, penetration, normal and point, exactly
  (the same generator goes through the same arithmetic), or both nothing.

The draws are the reference docking's initial conditions perturbed (seeded): captures inside
the preset's envelope, and glancing approaches, slow and drifting sideways, in which a petal
meets the mating circle and slides off without a capture. Measured on these six: 1.68
million searches, 154 thousand of them contacts and 174 thousand whose farthest generator
crosses the circle plane outside the circle; no disagreement. CPU: ~12 s with the kernel
cached, ~90 s when it compiles.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from numba import njit

from models._kernels import contact_layout as ck
from models.peripheral._kernels import run_layout as R
from models._kernels import trace_layout as TL
from models._kernels.contact_segments import fan_search, fan_vs_circle
from models.peripheral.simulate import load_scenario, simulate
from models.unit import InitialConditions
from models.trace import TraceSettings


@pytest.fixture(scope="module")
def scenario():
    scn = load_scenario("reference")
    # pruning skips the petal pairs that bounding spheres prove apart; off, every stage
    # searches all six fans (the same contacts: tests/models/test_peripheral_prune.py). The
    # 0.4-ms contact step with the latches on the RK4 step (the shipped records' integration)
    # is kept: the draws and the counts in the module docstring were chosen and measured on
    # it, and a smaller step only means more searches to replay (the detector is checked
    # search by search, whatever the step)
    return dataclasses.replace(scn, integration=dataclasses.replace(
        scn.integration, prune=False, dt_contact=4.0e-4, dt_latch=None))


SEARCH = (TL.R_FAN_SEARCH_ACTIVE, TL.R_FAN_SEARCH_PASSIVE)
# value columns of a search row, by the field names of the routine table
_F = {f: TL.TR_V0 + k for k, f in enumerate(TL.ROUTINES[TL.R_FAN_SEARCH_ACTIVE][2])}
assert TL.ROUTINES[TL.R_FAN_SEARCH_PASSIVE][2] == TL.ROUTINES[TL.R_FAN_SEARCH_ACTIVE][2]
V_ORIGIN, V_AXES, V_CIRCLE = _F["fan_origin_x"], _F["fan_axes_11"], _F["circle_centre_x"]
V_RADIUS, V_RESULT = _F["circle_radius"], _F["penetration"]
assert (_F["fan_axes_33"], _F["circle_axis_z"], _F["point_z"]) == (
    V_AXES + 8, V_CIRCLE + 5, V_RESULT + 6)     # contiguous blocks, as read below
DURATION = 2.5       # [s] the capture draws capture within it (the reference at 1.61 s)
N_CAPTURE, N_GLANCING = 3, 3


def _draws(scn, seed=1918):
    """``(initial conditions, kind)`` of the random dockings, from the reference's distance
    (``rel_pos_x``). ``capture``: the preset's envelope (closing 0.06-0.10 m/s, lateral
    offsets within 5 cm, lateral rates 5 mm/s, angles 0.01 rad, rates 2 mrad/s).
    ``glancing``: a lateral offset of 3-5 cm in a random direction and a lateral velocity of
    1-3 cm/s within 90 degrees of it (drifting away from the axis), closing at 12-30 mm/s: a
    petal meets the mating circle and slides or bounces off without a capture (closing
    energy near or below the six latches' trigger work: 18 mm/s when aligned,
    tests/models/test_peripheral_behaviour.py)."""
    rng = np.random.default_rng(seed)
    u = rng.uniform
    out = []
    for kind in ("capture",) * N_CAPTURE + ("glancing",) * N_GLANCING:
        if kind == "capture":
            y, z = u(-0.05, 0.05, 2)
            vy, vz = u(-0.005, 0.005, 2)
            vx = u(0.06, 0.10)
        else:
            a, r = u(0.0, 2.0 * np.pi), u(0.03, 0.05)
            b, w = a + u(-0.5 * np.pi, 0.5 * np.pi), u(0.01, 0.03)   # drifting outwards
            y, z, vy, vz = r * np.cos(a), r * np.sin(a), w * np.cos(b), w * np.sin(b)
            vx = u(0.012, 0.03)
        out.append((InitialConditions(
            rel_pos_x=scn.initial.rel_pos_x, rel_pos_y=y, rel_pos_z=z, rel_vel_x=vx,
            rel_vel_y=vy, rel_vel_z=vz, rel_roll=u(-0.01, 0.01), rel_pitch=u(-0.01, 0.01),
            rel_yaw=u(-0.01, 0.01), rel_rate_x=u(-0.002, 0.002),
            rel_rate_y=u(-0.002, 0.002), rel_rate_z=u(-0.002, 0.002)), kind))
    return out


@njit(cache=False)
def _replay_rows(rows, fa, fp, ca, cp, dn_max, dich, exh, d2max):
    """Replay every fan-search row of ``rows`` (trace layout) through the kernel's
    ``fan_vs_circle``: the dichotomy into ``dich``, exhaustive search into ``exh`` (``n x 9``:
    status, penetration, normal, point, generator) and the largest squared characteristic
    distance over all the fan's generators into ``d2max`` [m^2]. ``fa``/``fp`` the active /
    passive fans, ``ca``/``cp`` the circles (radius and side; centre and axis come from the
    row). Compiled: a trace holds ~10^5 searches a simulated second."""
    circ = np.empty(ck.C_SIZE)
    o = np.empty(3)
    R = np.empty((3, 3))
    for m in range(rows.shape[0]):
        active = rows[m, TL.TR_ROUTINE] == TL.R_FAN_SEARCH_ACTIVE
        k = int(rows[m, TL.TR_I])
        fan = fa[k] if active else fp[k]
        # an active petal meets the passive inner circle, a passive petal the active one
        src = cp if active else ca
        for c in range(ck.C_SIZE):
            circ[c] = src[c]
        for c in range(6):      # centre and axis (C_BX..C_UZ)
            circ[c] = rows[m, V_CIRCLE + c]
        circ[ck.C_R] = rows[m, V_RADIUS]
        for c in range(3):
            o[c] = rows[m, V_ORIGIN + c]
            for d in range(3):
                R[c, d] = rows[m, V_AXES + 3 * c + d]
        r1 = fan_vs_circle(fan, o, R, circ, dn_max, False)
        r2 = fan_vs_circle(fan, o, R, circ, dn_max, True)
        dich[m, 0] = r1[0]; dich[m, 1] = r1[1]; dich[m, 2] = r1[2]; dich[m, 3] = r1[3]
        dich[m, 4] = r1[4]; dich[m, 5] = r1[5]; dich[m, 6] = r1[6]; dich[m, 7] = r1[7]
        dich[m, 8] = r1[8]
        exh[m, 0] = r2[0]; exh[m, 1] = r2[1]; exh[m, 2] = r2[2]; exh[m, 3] = r2[3]
        exh[m, 4] = r2[4]; exh[m, 5] = r2[5]; exh[m, 6] = r2[6]; exh[m, 7] = r2[7]
        exh[m, 8] = r2[8]
        d2max[m] = fan_search(fan, o, R, circ, True)[1]


def _replay(scn, rows):
    """``(dich, exh, d2max)`` of :func:`_replay_rows` for the fan-search rows ``rows``."""
    geo = scn.geometry
    n = rows.shape[0]
    dich, exh, d2max = np.empty((n, 9)), np.empty((n, 9)), np.empty(n)
    _replay_rows(np.ascontiguousarray(rows), geo.active_fans, geo.passive_fans,
                 geo.active_circle, geo.passive_circle, scn.contact.max_penetration, dich,
                 exh, d2max)
    return dich, exh, d2max


def _traced_result(rows):
    """The traced detector results in :func:`fan_vs_circle`'s order (``n x 9``)."""
    v = V_RESULT        # penetration, normal, point
    return np.column_stack([rows[:, TL.TR_STATUS], rows[:, v:v + 7], rows[:, TL.TR_J]])


def _differ(a, b):
    """Rows where two result arrays differ in any column (exact comparison)."""
    return np.flatnonzero(np.any(a != b, axis=1))


@pytest.fixture(scope="module")
def dockings(scenario):
    """Per draw: its kind, events, and what the replay found (kept small: a docking's trace
    holds ~3e5 rows, so each is replayed and dropped before the next runs)."""
    it = scenario.integration
    # every step writes 6 searches at each of 4 stages; no step is shorter than dt_contact
    max_rows = 24 * (int(DURATION / it.dt_contact) + 10)
    out = []
    for ic, kind in _draws(scenario):
        tr = simulate(scenario, ic, duration=DURATION,
                      trace=TraceSettings(0.0, DURATION + 1.0, ("search",), max_rows=max_rows))
        rows = tr.trace.rows
        assert tr.trace.dropped == 0 and set(np.unique(rows[:, TL.TR_ROUTINE])) <= set(SEARCH)
        geo = scenario.geometry
        radius = np.where(rows[:, TL.TR_ROUTINE] == TL.R_FAN_SEARCH_ACTIVE,
                          geo.passive_circle[ck.C_R], geo.active_circle[ck.C_R])
        assert np.array_equal(rows[:, V_RADIUS], radius)
        dich, exh, d2max = _replay(scenario, rows)
        key = rows[:, TL.TR_STEP] * 4 + rows[:, TL.TR_STAGE]
        _, per_stage = np.unique(key, return_counts=True)
        out.append(dict(
            kind=kind, events=tr.events, latched=[int(tr[f"latch_{i + 1}"].max())
                                                  for i in range(6)],
            steps=int(tr.info[R.INFO_STEPS]),
            traced_steps=np.unique(rows[:, TL.TR_STEP]).astype(int),
            per_stage=per_stage,
            petals=[sorted(rows[(key == key[0]) & (rows[:, TL.TR_ROUTINE] == c), TL.TR_I])
                    for c in SEARCH],
            n=rows.shape[0], n_contact=int(np.sum(exh[:, 0] == ck.CONTACT)),
            n_reach=int(np.sum(d2max > radius ** 2)),
            replay_bad=_differ(dich, _traced_result(rows)),
            disagree=_differ(dich, exh),
            examples=[(rows[k], dich[k], exh[k]) for k in _differ(dich, exh)[:3]]))
    return out


def test_every_stage_of_every_step_searches_all_six_fans(dockings):
    """The trace holds every stage the run evaluated: the four stages of each of its
    ``INFO_STEPS`` steps and stage 0 at the end (the last sample's derivative, whose contacts
    the recorded channels hold), each with the three active and three passive petals'
    searches."""
    for d in dockings:
        n = d["steps"]
        np.testing.assert_array_equal(d["traced_steps"], np.arange(n + 1))
        assert d["per_stage"].size == 4 * n + 1 and np.all(d["per_stage"] == 6)
        assert d["petals"] == [[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]
        assert d["n"] == 24 * n + 6


def test_replay_reproduces_the_traced_search_bit_for_bit(dockings):
    """The row carries every input of the search: the dichotomy replayed on it gives the
    kernel's result exactly (status, penetration, normal, point, generator)."""
    for d in dockings:
        assert d["replay_bad"].size == 0, d["replay_bad"][:5]


def test_dichotomy_finds_the_contact_exhaustive_search_finds(dockings):
    """On every traced search the dichotomy and exhaustive search over
    all 257 generators give the same result, exactly: both nothing, or the same generator
    with the same penetration, normal and point (one generator, one arithmetic)."""
    for d in dockings:
        assert d["disagree"].size == 0, (d["kind"], d["disagree"].size, d["examples"])


def test_the_draws_capture_and_glance_and_the_searches_matter(dockings):
    """The set is what it claims: the capture draws capture within the run; the glancing
    ones touch petal on circle without any latch triggering; every docking has fan contacts
    and thousands of searches whose farthest generator crosses the circle plane outside the
    circle (where the search's choice decides the contact), so the agreement above is not
    a count of trivial misses."""
    for d in dockings:
        assert d["n_contact"] > 1000 and d["n_reach"] > 3000, d
        if d["kind"] == "capture":
            assert d["events"]["capture"] < DURATION
        else:
            assert np.isnan(d["events"]["capture"]) and sum(d["latched"]) == 0
            assert d["events"]["first_contact"] < DURATION
