"""Trace mode of the probe-cone kernel: tracing changes no result; the rows cover the window
step by step and stage by stage; the traced contact forces and held plunger forces add up to
the interface force channel and the traced mechanism is the recorded one; an abort's message
gives the window to trace, and that window's trace holds the failing contact."""
import dataclasses
import re

import numpy as np
import pytest

from models._kernels import contact_layout as ck
from models._kernels import trace_layout as TL
from models.probe_cone import load_preset, simulate
from models.probe_cone.simulate import SimulationError
from models.trace import TraceSettings
from tests.models._trace_checks import (CONTACT_OUT0, assert_contact_law,
                                        assert_rows_cover_window, assert_same_channels, select)

RATE = 1000.0     # [Hz] many output samples in the window
# [s] traced window about capture: in the reference docking the latch plungers ride the cone
# from 1.2 s, capture is at 1.95 s and the head meets the socket from 1.98 s
BEFORE, AFTER = 0.01, 0.06
PC_CONTACT = (TL.R_PC_HEAD, TL.R_PC_HOUSING, TL.R_PC_PAD_MOUTH, TL.R_PC_LATCH_SLOT)


@pytest.fixture(scope="module")
def scn():
    return load_preset("reference")


@pytest.fixture(scope="module")
def plain(scn):
    cap = simulate(scn, duration=3.0).events["capture"]
    assert cap is not None
    return simulate(scn, rate=RATE, duration=cap + AFTER + 0.02)


@pytest.fixture(scope="module")
def window(plain):
    t_cap = plain.events["capture"]
    return t_cap - BEFORE, t_cap + AFTER


@pytest.fixture(scope="module")
def traced(scn, plain, window):
    return simulate(scn, rate=RATE, duration=float(plain.t[-1]),
                    trace=TraceSettings(window[0], window[1]))


def test_tracing_changes_no_result_bit_for_bit(plain, traced):
    assert plain.trace is None and traced.trace is not None
    assert_same_channels(plain, traced)
    assert plain.events == traced.events
    assert (plain.steps, plain.small_steps) == (traced.steps, traced.small_steps)


def test_rows_lie_in_the_window_and_every_stage_appears(traced, window):
    # and every stage has the mechanism row, the between-steps rows the four hysteresis
    # elements and the six plungers
    steps, rows = assert_rows_cover_window(traced.trace, window, 500)
    for s in steps:
        for stage in range(4):
            assert select(rows, s, stage, TL.R_PC_MECHANISM).shape[0] == 1
        b = select(rows, s, -1)
        assert sorted(b[b[:, TL.TR_ROUTINE] == TL.R_PC_ELEMENTS, TL.TR_I].astype(int)) == \
            [0, 1, 2, 3]
        assert (b[:, TL.TR_ROUTINE] == TL.R_PC_PLUNGER).sum() == 6


def test_traced_forces_add_up_to_the_interface_force_and_mechanism_is_recorded(traced):
    """At each output sample in the window (stage 0 of the step that starts there, the state
    the sample records): interface force = sum of the contact forces + the held plunger forces
    (those with a retraction, latches not triggered) + the capture sensors' friction after
    capture (along X_PU) + the implicit head friction's correction on the passive unit (the
    reference integrates the head friction implicitly); nothing else acts.
    Tolerance 1e-9 of the largest term plus 1e-9 N (the same numbers added in another order).
    The mechanism row's stroke, absorber force and moments and gimbal angles are the recorded
    channels, bit for bit (same arithmetic)."""
    rows = traced.trace.rows
    f_if = np.column_stack([traced.channels[f"interface_force_{a}"] for a in "xyz"])
    o = CONTACT_OUT0 + 11      # force_x of a contact row
    n_checked = n_contact = n_friction = n_implicit = 0
    for k, tk in enumerate(traced.t):
        st0 = rows[(rows[:, TL.TR_STAGE] == 0) & (rows[:, TL.TR_T] == tk)]
        if st0.shape[0] == 0:
            continue
        step = st0[0, TL.TR_STEP]
        same = rows[rows[:, TL.TR_STEP] == step]
        c = same[(same[:, TL.TR_STAGE] == 0) & np.isin(same[:, TL.TR_ROUTINE], PC_CONTACT)
                 & (same[:, TL.TR_STATUS] == ck.CONTACT)]
        total = c[:, o:o + 3].sum(axis=0)
        scale = max(1.0, np.abs(c[:, o:o + 3]).max()) if c.shape[0] else 1.0
        n_contact += c.shape[0] > 0
        pl = same[(same[:, TL.TR_STAGE] == -1) & (same[:, TL.TR_ROUTINE] == TL.R_PC_PLUNGER)]
        held = pl[(pl[:, TL.TR_V0 + 1] > 0.0) & (pl[:, TL.TR_V0] == 0.0)]
        total += held[:, TL.TR_V0 + 2:TL.TR_V0 + 5].sum(axis=0)
        sf = same[(same[:, TL.TR_STAGE] == 0)
                  & (same[:, TL.TR_ROUTINE] == TL.R_PC_SENSOR_FRICTION)]
        total[0] += sf[:, TL.TR_V0 + 1].sum()
        n_friction += sf.shape[0]
        im = same[(same[:, TL.TR_STAGE] == 0)
                  & (same[:, TL.TR_ROUTINE] == TL.R_PC_IMPLICIT_FRICTION)]
        assert im.shape[0] <= 1
        total += im[:, TL.TR_V0:TL.TR_V0 + 3].sum(axis=0)
        n_implicit += im.shape[0]
        np.testing.assert_allclose(total, f_if[k], rtol=0,
                                   atol=1e-9 * max(scale, np.abs(total).max()) + 1e-9,
                                   err_msg=f"t = {tk}")
        m = same[(same[:, TL.TR_STAGE] == 0) & (same[:, TL.TR_ROUTINE] == TL.R_PC_MECHANISM)]
        v = dict(zip(TL.ROUTINES[TL.R_PC_MECHANISM][2], m[0, TL.TR_V0:]))
        assert v["stroke"] == traced.channels["stroke"][k]
        assert v["force_axial"] == traced.channels["absorber_axial_force"][k]
        assert v["moment_theta"] == traced.channels["absorber_pitch_moment"][k]
        assert v["moment_psi"] == traced.channels["absorber_yaw_moment"][k]
        assert v["gimbal_q1"] == traced.channels["gimbal_pitch"][k]
        assert v["gimbal_q2"] == traced.channels["gimbal_yaw"][k]
        n_checked += 1
    assert n_checked >= 50 and n_contact >= 15 and n_friction >= 15 and n_implicit >= 15


def test_abort_gives_the_window_and_its_trace_holds_the_failing_contact(scn):
    c = dataclasses.replace(scn.contact, max_penetration=2e-5)
    bad = dataclasses.replace(scn, contact=c)
    with pytest.raises(SimulationError) as ei:
        simulate(bad, duration=3.0)
    msg = str(ei.value)
    m = re.search(r"at t = ([0-9.]+) s: .*rerun with --trace ([0-9.e+-]+):([0-9.e+-]+)", msg)
    assert m, msg
    t_fail, t0, t1 = (float(m.group(k)) for k in (1, 2, 3))
    assert t0 < t_fail <= t1
    with pytest.raises(SimulationError) as e2:
        simulate(bad, duration=3.0, trace=TraceSettings(t0, t1, ("contact",)))
    assert str(e2.value) == msg
    rows = e2.value.trace.rows
    fail = rows[rows[:, TL.TR_STATUS] == ck.PENETRATION_EXCEEDED]
    assert fail.shape[0] >= 1
    assert t_fail - 1e-6 <= fail[-1, TL.TR_T] <= t1      # a stage of the failing step
    assert fail[-1, CONTACT_OUT0] > 2e-5
    # the contact group only: the contacts and the implicit head friction's correction
    assert set(rows[:, TL.TR_ROUTINE].astype(int)) <= {*PC_CONTACT, TL.R_PC_IMPLICIT_FRICTION}
    assert all(TL.ROUTINES[c][0] == "contact" for c in (*PC_CONTACT, TL.R_PC_IMPLICIT_FRICTION))


def test_contact_rows_hold_the_law(traced, scn):
    """Each traced head / latch contact's force is the law of digest 5 on its own penetration
    and relative velocity (:func:`_trace_checks.assert_contact_law`, NumPy)."""
    assert assert_contact_law(traced.trace.rows, PC_CONTACT, scn.contact) > 50
