"""Androgyny of the peripheral unit's ring-ring contact: swapping the active and passive rings
gives the mirrored wrench.

Both rings are the same design: the passive tables are the active ones turned by the half-turn
``T = diag(-1, -1, 1)`` (:data:`models.peripheral.geometry.ANDROGYNOUS_TURN`, checked equal
to 1e-12 in ``test_peripheral_geometry.py``). So the kernel's contact stage
(:func:`models.peripheral._kernels.stage._ring_contacts`) must give the same forces whichever
ring plays "active" (pose ``(c, R)`` relative to PU, twist) and which "passive" (at PU).

Swap map (derivation; ``x_R = R (p - c)`` takes a PU point ``p`` to active ring axes):

* the new active ring is the old passive ring, with ring axes ``x' = T p``: its own points
  there are ``T fp = fa`` -- the same tables in the same argument slots;
* the new passive unit frame is the old active ring turned, ``x_PU' = T R (p - c)``;
* hence the new pose ``c' = -T R c`` and ``R' = T R^T T`` (PU' -> new ring axes), vectors map
  PU -> PU' by ``T R``;
* twists: the new ring's is the old passive one's (velocity of the PU origin, which is the
  new ring centre ``c'``), the new passive one's is the old ring's (velocity of its centre,
  which is the PU' origin), both turned by ``T R``.

Expected: force and moment on the old ring (about its centre) = those on the new passive unit
(about the PU' origin, the same point) turned back by ``R^T T``, and vice versa; the elastic
and dissipated contact powers and the number of contacts equal. The relative velocity at a
contact is frame-independent, so damping and friction are part of the check.

What this does not claim: only the active unit's latches, stops and capture sensors operate
(as in flight, where the passive unit's latches stay retracted), and the ring's legs are on
the active vehicle; so a swap of whole units is a different mechanical system unless the
vehicles and the mechanisms are also swapped. The androgynous part of the model is the ring
geometry and its contact, which this test covers for every primitive pair type on random
relative poses and twists.
"""
from __future__ import annotations

import numpy as np
import pytest

from models.peripheral._kernels import latch as pl
from models._kernels import trace_layout as TL
from models._kernels.contact_layout import TW_O, TW_V, TW_W
from models.peripheral._kernels.run_layout import ST_OK
from models.peripheral._kernels.stage import (M_APR, M_I, NM, NSC, SC_ACC, SC_TWP, SC_TWR,
                                              _ring_contacts, ring_bounds)
from models.peripheral.geometry import ANDROGYNOUS_TURN as T
from models.peripheral.simulate import load_scenario, pack


def _rot(roll, pitch, yaw):
    cr, sr, cp, sp, cy, sy = (np.cos(roll), np.sin(roll), np.cos(pitch), np.sin(pitch),
                              np.cos(yaw), np.sin(yaw))
    rx = np.array([[1, 0, 0], [0, cr, sr], [0, -sr, cr]])
    ry = np.array([[cp, 0, -sp], [0, 1, 0], [sp, 0, cp]])
    rz = np.array([[cy, sy, 0], [-sy, cy, 0], [0, 0, 1]])
    return rx @ ry @ rz


@pytest.fixture(scope="module")
def packed():
    pk = pack(load_scenario("reference"))
    fa, fp, eaa, ep, pa, pp, ca, cp, plane = pk.arrays[:9]
    return pk.P, (fa, fp, eaa, ep, pa, pp, ca, cp, plane)


def _wrench(P, tables, c, R, v_ring, w_ring, v_pass, w_pass):
    """Contact accumulator (``A_*``, PU axes), status and count for the active ring at
    ``(c, R)`` with its centre's velocity and its angular velocity, the passive unit's
    origin velocity and angular velocity (all PU axes)."""
    fa, fp, eaa, ep, pa, pp, ca, cp, plane = tables
    M = np.zeros((NM, 3, 3))
    M[M_APR] = R
    M[M_I] = np.eye(3)
    sc = np.zeros(NSC)
    ring_bounds(fa, fp, eaa, ep, sc)       # the pruning's bounding spheres (P_PRUNE = 1)
    sc[SC_TWR + TW_O:SC_TWR + TW_O + 3] = c
    sc[SC_TWR + TW_V:SC_TWR + TW_V + 3] = v_ring
    sc[SC_TWR + TW_W:SC_TWR + TW_W + 3] = w_ring
    sc[SC_TWP + TW_V:SC_TWP + TW_V + 3] = v_pass
    sc[SC_TWP + TW_W:SC_TWP + TW_W + 3] = w_pass
    ea = np.zeros((eaa.shape[0], eaa.shape[1]))
    cap = np.zeros(ca.shape[0])
    # tracing off: an empty buffer, its counters, a context with mask 0
    st, pair, idx, n = _ring_contacts(P, M, sc, fa, fp, eaa, ep, pa, pp, ca, cp, plane, ea, cap,
                                      np.zeros((0, TL.TR_NCOL)), np.zeros(TL.TRN_SIZE, dtype=np.int64),
                                      np.zeros(TL.TX_SIZE))
    return st, n, sc[SC_ACC:SC_ACC + pl.A_SIZE].copy()


def _swapped(c, R, v_ring, w_ring, v_pass, w_pass):
    TR = T @ R
    return (-TR @ c, T @ R.T @ T, TR @ v_pass, TR @ w_pass, TR @ v_ring, TR @ w_ring)


def _draws(seed, n):
    """Random relative poses of the rings from first touch to mated, and random twists."""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        c = np.array([rng.uniform(-0.32, -0.02), rng.uniform(-0.1, 0.1),
                      rng.uniform(-0.1, 0.1)])
        R = _rot(rng.uniform(-0.15, 0.15), rng.uniform(-0.06, 0.06), rng.uniform(-0.06, 0.06))
        yield (c, R, rng.normal(0.0, 0.05, 3), rng.normal(0.0, 0.02, 3),
               rng.normal(0.0, 0.05, 3), rng.normal(0.0, 0.02, 3))


def test_swap_map_is_an_involution():
    # the map applied twice is the identity (R'' = T (T R^T T)^T T = R, c'' = c): a check of
    # the algebra the main test relies on
    for draw in _draws(3, 20):
        back = _swapped(*_swapped(*draw))
        for a, b in zip(draw, back):
            np.testing.assert_allclose(b, a, atol=1e-14)


def test_swapping_active_and_passive_rings_mirrors_the_contact_wrench(packed):
    P, tables = packed
    counts = []
    n_fail = 0
    for draw in _draws(20261125, 6000):
        st, n, acc = _wrench(P, tables, *draw)
        st2, n2, acc2 = _wrench(P, tables, *_swapped(*draw))
        assert st2 == st
        if st != ST_OK:                 # beyond the penetration limit: both refuse
            n_fail += 1
            continue
        assert n2 == n
        if n == 0:
            continue
        counts.append(n)
        back = draw[1].T @ T            # PU' -> PU for vectors
        scale = max(np.abs(acc[:12]).max(), 1.0)
        # rounding only: the two evaluations take different but equivalent arithmetic paths;
        # 1e-9 of the largest force/moment leaves three orders above double-precision noise
        # of ~1e3 operations and is far below any model-level difference (a missing pair is
        # a whole contact force)
        tol = 1e-9 * scale
        np.testing.assert_allclose(back @ acc2[pl.A_FP:pl.A_FP + 3], acc[pl.A_FR:pl.A_FR + 3],
                                   atol=tol)
        np.testing.assert_allclose(back @ acc2[pl.A_MP:pl.A_MP + 3], acc[pl.A_MR:pl.A_MR + 3],
                                   atol=tol)
        np.testing.assert_allclose(back @ acc2[pl.A_FR:pl.A_FR + 3], acc[pl.A_FP:pl.A_FP + 3],
                                   atol=tol)
        np.testing.assert_allclose(back @ acc2[pl.A_MR:pl.A_MR + 3], acc[pl.A_MP:pl.A_MP + 3],
                                   atol=tol)
        pscale = max(abs(acc[pl.A_PEL]), abs(acc[pl.A_PDISS]), 1e-3)
        assert acc2[pl.A_PEL] == pytest.approx(acc[pl.A_PEL], abs=1e-9 * pscale)
        assert acc2[pl.A_PDISS] == pytest.approx(acc[pl.A_PDISS], abs=1e-9 * pscale)
    # the draws must exercise the contact: many touching poses, single and multiple contacts
    assert len(counts) >= 300, len(counts)
    assert max(counts) >= 3
