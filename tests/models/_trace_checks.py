"""Checks shared by the trace tests of both docking units (tests/models/test_trace*.py): row
selection, the coverage of the window step by step and stage by stage, tracing leaving the
result unchanged, and the contact rows' force re-derived from the law in plain NumPy."""
from __future__ import annotations

import numpy as np

from models._kernels import contact_layout as ck
from models._kernels import trace_layout as TL

__all__ = ["select", "assert_same_channels", "assert_rows_cover_window", "assert_contact_law",
           "CONTACT_OUT0"]

#: first output column of a contact row (penetration; then normal, point, relative velocity,
#: normal force, force)
CONTACT_OUT0 = TL.TR_V0 + TL.CONTACT_NIN


def select(rows, step=None, stage=None, code=None):
    """The rows of one step, stage and routine code (``None``: any)."""
    m = np.ones(rows.shape[0], dtype=bool)
    for col, v in ((TL.TR_STEP, step), (TL.TR_STAGE, stage), (TL.TR_ROUTINE, code)):
        if v is not None:
            m &= rows[:, col] == v
    return rows[m]


def assert_same_channels(plain, traced):
    """Every channel of the traced run equals the plain run's bit for bit."""
    assert set(plain.channels) == set(traced.channels)
    np.testing.assert_array_equal(plain.t, traced.t)
    for k, v in plain.channels.items():
        np.testing.assert_array_equal(v, traced.channels[k], err_msg=k)


def assert_rows_cover_window(trace, window, min_rows):
    """The trace kept every row (none dropped, at least ``min_rows``), its rows lie in the
    window ``(t0, t1)`` [s], in step order, the steps are consecutive, and every step strictly
    inside the window has its between-steps rows and the four RK4 stages, each at one time:
    ``t`` for the between-steps rows and stage 0, ``t + h/2`` for stages 1 and 2, ``t + h``
    for stage 3 (relative 1e-9: the kernel forms ``t + h/2`` and ``t + h`` separately).
    Returns the inner steps and the rows."""
    rows = trace.rows
    assert trace.dropped == 0 and len(trace) > min_rows
    t = rows[:, TL.TR_T]
    assert t.min() >= window[0] and t.max() <= window[1]
    assert np.all(np.diff(rows[:, TL.TR_STEP]) >= 0)
    steps = np.unique(rows[:, TL.TR_STEP]).astype(int)
    np.testing.assert_array_equal(steps, np.arange(steps[0], steps[-1] + 1))
    for s in steps[1:-1]:
        r = select(rows, step=s)
        assert set(r[:, TL.TR_STAGE].astype(int)) == {-1, 0, 1, 2, 3}, s
        ts = {int(g): r[r[:, TL.TR_STAGE] == g, TL.TR_T] for g in (-1, 0, 1, 2, 3)}
        for g in ts:
            assert np.ptp(ts[g]) == 0.0
        t0 = ts[0][0]
        assert ts[-1][0] == t0 and ts[1][0] == ts[2][0] and ts[3][0] > ts[1][0] > t0
        assert abs((ts[3][0] - t0) - 2 * (ts[1][0] - t0)) <= 1e-9 * (ts[3][0] - t0)
    return steps[1:-1], rows


def assert_contact_law(rows, codes, law):
    """Each contact row (routine in ``codes``, status CONTACT) holds the law of digest 5 on
    its own penetration and relative velocity, re-derived here for the linear model
    (``law``: the scenario's contact law): ``f_n = max(0, k dn + c n.v)``, friction
    ``mu f_n v_T / sqrt(|v_T|^2 + v_eps^2)``; its normal is a unit vector and ``f_n`` the
    force's projection on it. Tolerance 1e-9 relative (plus 1e-6 N): the same formula in
    another order. Returns the number of rows checked."""
    assert law.model == "linear"
    sel = rows[np.isin(rows[:, TL.TR_ROUTINE], codes) & (rows[:, TL.TR_STATUS] == ck.CONTACT)]
    o = CONTACT_OUT0
    dn, n, rv = sel[:, o], sel[:, o + 1:o + 4], sel[:, o + 7:o + 10]
    fn, f = sel[:, o + 10], sel[:, o + 11:o + 14]
    np.testing.assert_allclose(np.linalg.norm(n, axis=1), 1.0, rtol=0, atol=1e-12)
    assert np.all(dn > 0.0)
    np.testing.assert_allclose((f * n).sum(axis=1), fn, rtol=1e-9, atol=1e-9)
    vn = (rv * n).sum(axis=1)
    expect = np.maximum(law.stiffness * dn + law.damping * vn, 0.0)
    np.testing.assert_allclose(fn, expect, rtol=1e-9, atol=1e-6)
    vt = rv - vn[:, None] * n
    fric = law.friction * expect[:, None] * vt / np.sqrt(
        (vt ** 2).sum(axis=1) + law.friction_velocity ** 2)[:, None]
    np.testing.assert_allclose(f, expect[:, None] * n + fric, rtol=1e-9, atol=1e-6)
    return sel.shape[0]
