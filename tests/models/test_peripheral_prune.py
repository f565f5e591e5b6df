"""Pruning of the peripheral unit's ring-ring primitive pairs (``Integration.prune``,
``P_PRUNE``): bounding spheres skip pairs that cannot touch, and nothing else may change.

Oracles: the same kernel with every pair tested (prune off) must give bit-identical histories,
events, status and run information; the circle bound is checked against the segment-circle
detector itself on random segments inside random balls; the petal spheres against every end
point they must hold.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from models.peripheral._kernels import mechanism as km
from models.peripheral._kernels import run_layout as R
from models.peripheral._kernels import stage as S
from models._kernels import trace_layout as TL
from models._kernels.contact_layout import C_SIZE, NONE
from models._kernels.contact_segments import segment_vs_circle
from models.peripheral._kernels.kernel import initial_state
from models.peripheral.simulate import load_scenario, pack, simulate
from models.unit import InitialConditions


@pytest.fixture(scope="module")
def scenario():
    return load_scenario("reference")


def _pruned(scenario, on):
    return dataclasses.replace(scenario, integration=dataclasses.replace(
        scenario.integration, prune=on))


def _same_run(a, b):
    assert a.status == b.status
    np.testing.assert_array_equal(a.info, b.info)
    for k, v in a.events.items():
        assert (np.isnan(v) and np.isnan(b.events[k])) or v == b.events[k], k
    for name, v in a.channels.items():
        # bit for bit: the pairs tested keep their order, so every sum is the same sum
        np.testing.assert_array_equal(v, b.channels[name], err_msg=name)


def _draws(n, seed):
    rng = np.random.default_rng(seed)
    u = rng.uniform
    return [InitialConditions(
        rel_pos_x=-0.75, rel_pos_y=u(-0.07, 0.07), rel_pos_z=u(-0.07, 0.07),
        rel_vel_x=u(0.08, 0.16), rel_vel_y=u(-0.01, 0.01), rel_vel_z=u(-0.01, 0.01),
        rel_roll=u(-0.03, 0.03), rel_pitch=u(-0.02, 0.02), rel_yaw=u(-0.02, 0.02),
        rel_rate_x=u(-0.003, 0.003), rel_rate_y=u(-0.003, 0.003),
        rel_rate_z=u(-0.003, 0.003)) for _ in range(n)]


def test_reference_20s_is_bit_identical_with_pruning(scenario):
    on = simulate(_pruned(scenario, True))
    off = simulate(_pruned(scenario, False))
    assert on.events["capture"] < 20.0
    _same_run(on, off)


@pytest.mark.parametrize("k", range(4))
def test_random_dockings_are_bit_identical_with_pruning(scenario, k):
    # wider than the behaviour tests' envelope (7 cm lateral, 0.08-0.16 m/s, 1-2 deg, from
    # 0.2 m): first contacts on different petals and primitive kinds, all captured by 2 s
    ic = _draws(4, 3)[k]
    on = simulate(_pruned(scenario, True), ic, duration=4.0, raise_on_failure=False)
    off = simulate(_pruned(scenario, False), ic, duration=4.0, raise_on_failure=False)
    _same_run(on, off)


def test_circle_bound_never_skips_a_detector_result():
    # brute force: random balls about the passive inner circle; every segment inside a ball
    # the bound calls apart must get NONE from the detector (which is what the skip assumes)
    rng = np.random.default_rng(7)
    circ = np.zeros(C_SIZE)
    circ[0:3] = [0.01, 0.02, -0.01]
    u = rng.normal(size=3)
    circ[3:6] = u / np.linalg.norm(u)
    circ[6] = 0.52
    circ[7] = 1.0
    n_apart = 0
    n_hits_near = 0
    for _ in range(4000):
        m = circ[0:3] + rng.uniform(-0.8, 0.8, size=3)
        rad = rng.uniform(0.0, 0.3)
        apart = S._apart_from_circle(m[0], m[1], m[2], rad, circ)
        for _ in range(5):
            d = rng.normal(size=3)
            d *= rad * rng.uniform(0.0, 1.0) / np.linalg.norm(d)
            p1 = m - d
            res = segment_vs_circle(p1[0], p1[1], p1[2], 2 * d[0], 2 * d[1], 2 * d[2], circ,
                                    0.01)
            if apart:
                assert res[0] == NONE
            elif res[0] != NONE:
                n_hits_near += 1
        n_apart += apart
    # the bound does skip, and the draws do reach the detector's contacts
    assert 500 < n_apart < 3500 and n_hits_near > 100


def test_petal_spheres_hold_their_petals_and_prune_at_the_ready_pose(scenario):
    pk = pack(scenario)
    fa, fp, eaa, ep = pk.arrays[0:4]
    sc = np.zeros(S.NSC)
    S.ring_bounds(fa, fp, eaa, ep, sc)
    b = S.SC_BV
    for fan, edges, o in ((fa, eaa, S.BV_SPH_A), (fp, ep, S.BV_SPH_P)):
        for k in range(3):
            c = sc[b + o + 4 * k:b + o + 4 * k + 3]
            r = sc[b + o + 4 * k + 3]
            e = edges[4 * k:4 * k + 4]
            pts = np.concatenate([fan[k, :, 0:3], fan[k, :, 0:3] + fan[k, :, 3:6],
                                  e[:, 0:3], e[:, 0:3] + e[:, 3:6]])
            dist = np.linalg.norm(pts - c, axis=1)
            assert dist.max() <= r * (1 + 1e-12)
            # no larger than the sphere through the bounding box's corners
            assert r <= 0.5 * np.linalg.norm(np.ptp(pts, axis=0)) * (1 + 1e-12)
    np.testing.assert_allclose(sc[b + S.BV_EH_A:b + S.BV_EH_A + 12],
                               0.5 * np.linalg.norm(eaa[:, 3:6], axis=1), rtol=1e-15)
    # at t = 0 (petals interleaved, 0.15 m apart) some petal pairs are already out of reach
    st_on, st_off, near, _ = _contacts_both_ways(pk, pk.P[R.P_IC:R.P_IC + 12])
    assert st_on == st_off
    assert 0 < near.sum() < 9


def _contacts_both_ways(pk, ic):
    """``_ring_contacts`` at the configuration of the initial conditions ``ic``, pruned and
    not: both returns, the petal-pair gate and whether the accumulators agree bit for bit."""
    P = pk.P.copy()
    P[R.P_IC:R.P_IC + 12] = ic
    fa, fp, eaa, ep = pk.arrays[0:4]
    sc = np.zeros(S.NSC)
    S.ring_bounds(fa, fp, eaa, ep, sc)
    y = np.empty(R.NY)
    M = np.zeros((S.NM, 3, 3))
    for o, m in ((R.P_G1, S.M_G1), (R.P_G2, S.M_G2)):
        M[m] = P[o:o + 9].reshape(3, 3)
    M[S.M_I] = np.eye(3)
    initial_state(P, y, M)
    kw = np.zeros(km.KW_SIZE)
    S.frames(y, P, M, sc, kw)
    # tracing off: empty buffer, counters, a context with mask 0
    args = (M, sc, fa, fp, eaa, ep, *pk.arrays[4:9], np.zeros_like(eaa), np.zeros(C_SIZE),
            np.zeros((0, TL.TR_NCOL)), np.zeros(TL.TRN_SIZE, dtype=np.int64),
            np.zeros(TL.TX_SIZE))
    a = slice(S.SC_ACC, S.SC_ACC + 15)
    sc[a] = 0.0
    on = S._ring_contacts(P, *args)
    near = sc[S.SC_BV + S.BV_PNEAR:S.SC_BV + S.BV_PNEAR + 9].copy()
    acc = sc[a].copy()
    P[R.P_PRUNE] = 0.0
    sc[a] = 0.0
    off = S._ring_contacts(P, *args)
    return on, off, near, np.array_equal(acc, sc[a])


def test_random_poses_give_the_same_contacts_pruned_and_not(scenario):
    # brute-force oracle over the whole pair list: 1500 ring poses from 0.15 m apart to mated
    # (and beyond, into penetration aborts), laterally offset and tilted; the pruned call must
    # return the same status, pair, index and contact count and the same forces bit for bit
    pk = pack(scenario)
    rng = np.random.default_rng(11)
    n_contact = n_fail = 0
    for _ in range(1500):
        ic = np.zeros(12)
        ic[0] = rng.uniform(-0.70, -0.53)
        ic[1:3] = rng.uniform(-0.06, 0.06, size=2)
        ic[6:9] = rng.uniform(-0.03, 0.03, size=3)
        on, off, near, same = _contacts_both_ways(pk, ic)
        assert on == off and same
        n_contact += on[0] == R.ST_OK and on[3] > 0
        n_fail += on[0] != R.ST_OK
    # the draws reach contacts and aborts, not only free configurations
    assert n_contact > 100 and n_fail > 10
