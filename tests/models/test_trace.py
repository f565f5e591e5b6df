"""Trace mode of the docking kernels (models/trace.py, models/_kernels/trace_layout.py): tracing
changes no result; the rows cover the window step by step and stage by stage; the traced
contact, latch and sensor forces add up to the interface force channel and the traced leg
lengths are the leg channels; an abort names its time, pair and the window to trace, and
that window's trace holds the failing pair."""
import dataclasses
import math
import re

import numpy as np
import pytest

from models._kernels import contact_layout as ck
from models._kernels import trace_layout as TL
from models.errors import InputError, SimulationError
from models.peripheral import simulate as ps
from models.trace import Trace, TraceSettings, parse_groups, parse_window
from tests.models._trace_checks import (CONTACT_OUT0, assert_contact_law,
                                        assert_rows_cover_window, assert_same_channels, select)

DURATION = 0.75   # [s] the reference docking's first contact is at 0.575 s
RATE = 1000.0     # [Hz] output every 1 ms, which the contact steps reach in
                  # ceil(1 ms / dt_contact) steps (the last one shortened to land): many samples
SPAN = 0.03       # [s] traced window after first contact


@pytest.fixture(scope="module")
def scn():
    return ps.load_scenario("reference")


@pytest.fixture(scope="module")
def plain(scn):
    return ps.simulate(scn, rate=RATE, duration=DURATION)


@pytest.fixture(scope="module")
def window(plain):
    t_first = plain.events["first_contact"]
    assert 0.5 < t_first < 0.7
    return t_first, t_first + SPAN


@pytest.fixture(scope="module")
def traced(scn, window):
    return ps.simulate(scn, rate=RATE, duration=DURATION,
                       trace=TraceSettings(window[0], window[1]))


def test_tracing_changes_no_result_bit_for_bit(plain, traced):
    assert plain.trace is None and isinstance(traced.trace, Trace)
    assert_same_channels(plain, traced)
    assert plain.events == traced.events or all(
        (math.isnan(a) and math.isnan(traced.events[k])) or a == traced.events[k]
        for k, a in plain.events.items())
    np.testing.assert_array_equal(plain.info, traced.info)
    assert plain.status == traced.status == 0


def test_rows_lie_in_the_window_steps_are_consecutive_every_stage_appears(traced, window):
    # and every stage has the six legs and the ring
    steps, rows = assert_rows_cover_window(traced.trace, window, 1000)
    for s in steps:
        for stage in range(4):
            legs = select(rows, s, stage, TL.R_LEG_FORCES)
            assert sorted(legs[:, TL.TR_I].astype(int)) == list(range(6))
            assert select(rows, s, stage, TL.R_RING).shape[0] == 1


def test_traced_forces_add_up_to_the_interface_force_and_legs_are_the_channels(traced):
    """At each output sample in the window (a step start, stage 0 is the recorded state):
    interface force on the passive unit = sum of the ring-ring contact forces + the
    post-trigger latch contacts + the capture sensors (along +X_PU) - the held latch forces
    on the ring. Tolerance 1e-9 of the largest term plus 1e-9 N: the kernel adds the same
    numbers in another order (rounding only)."""
    rows = traced.trace.rows
    f_if = np.column_stack([traced.channels[f"interface_force_{a}"] for a in "xyz"])
    out = CONTACT_OUT0 + 11          # force_x of a contact row
    n_checked = n_contact = 0
    for k, tk in enumerate(traced.t):
        st0 = rows[(rows[:, TL.TR_STAGE] == 0) & (rows[:, TL.TR_T] == tk)]
        if st0.shape[0] == 0:
            continue
        step = st0[0, TL.TR_STEP]
        total = np.zeros(3)
        scale = 1.0
        for code, (group, *_rest) in TL.ROUTINES.items():
            if group != "contact":
                continue
            c = select(rows, step, 0, code)
            c = c[c[:, TL.TR_STATUS] == ck.CONTACT]
            if c.shape[0]:
                n_contact += 1
                total += c[:, out:out + 3].sum(axis=0)
                scale = max(scale, np.abs(c[:, out:out + 3]).max())
        lt = select(rows, step, 0, TL.R_LATCH_STAGE_TOTAL)
        assert lt.shape[0] == 1
        total += lt[0, TL.TR_V0:TL.TR_V0 + 3]
        sen = select(rows, step, 0, TL.R_SENSOR)
        assert sen.shape[0] == 3
        total[0] += sen[:, TL.TR_V0 + 1].sum()
        held = select(rows, step, TL.STAGE_BETWEEN, TL.R_LATCH_BETWEEN)
        assert held.shape[0] == 6
        total -= held[:, TL.TR_V0 + 14:TL.TR_V0 + 17].sum(axis=0)
        scale = max(scale, np.abs(total).max())
        np.testing.assert_allclose(total, f_if[k], rtol=0, atol=1e-9 * scale + 1e-9,
                                   err_msg=f"t = {tk}")
        legs = select(rows, step, 0, TL.R_LEG_FORCES)
        legs = legs[np.argsort(legs[:, TL.TR_I])]
        for i in range(6):
            assert legs[i, TL.TR_V0] == traced.channels[f"leg_{i + 1}"][k]
        n_checked += 1
    assert n_checked >= 20 and n_contact >= 10   # the check saw contacts, not only zeros


def test_contact_rows_hold_the_law_and_the_geometry(scn, traced):
    """A contact row's force is the law of digest 5 on its own penetration and relative
    velocity (:func:`_trace_checks.assert_contact_law`, NumPy)."""
    codes = [c for c, v in TL.ROUTINES.items() if v[0] == "contact" and c < 100]
    assert assert_contact_law(traced.trace.rows, codes, scn.contact) > 50


def test_abort_names_time_pair_and_the_window_that_traces_it(scn):
    bad = dataclasses.replace(scn, contact=dataclasses.replace(scn.contact,
                                                               max_penetration=2e-5))
    with pytest.raises(SimulationError) as ei:
        ps.simulate(bad, duration=DURATION)
    msg = str(ei.value)
    m = re.search(r"at t = ([0-9.e+-]+) s: .*\(pair: (.+), index (-?\d+)\); .*"
                  r"rerun with --trace ([0-9.e+-]+):([0-9.e+-]+)", msg)
    assert m, msg
    t_fail = float(m.group(1))
    t0, t1 = float(m.group(4)), float(m.group(5))
    assert t0 < t_fail <= t1 and t_fail - t0 == pytest.approx(0.005, abs=1e-6)
    assert ei.value.trace is None
    # the proposed window's trace holds the failing pair at the failure time
    with pytest.raises(SimulationError) as e2:
        ps.simulate(bad, duration=DURATION, trace=TraceSettings(t0, t1, ("contact",)))
    assert str(e2.value) == msg
    rows = e2.value.trace.rows
    fail = rows[rows[:, TL.TR_STATUS] == ck.PENETRATION_EXCEEDED]
    assert fail.shape[0] >= 1
    last = fail[-1]
    assert t_fail - 1e-6 <= last[TL.TR_T] <= t1      # a stage of the failing step
    name = TL.ROUTINES[int(last[TL.TR_ROUTINE])][1]
    assert int(last[TL.TR_I]) == int(m.group(3)) or name.startswith("edge_active_vs_edge")
    assert last[CONTACT_OUT0] > 2e-5                       # its penetration beyond the limit
    assert set(rows[:, TL.TR_ROUTINE].astype(int)) <= set(range(1, 8))   # contact group only


def test_a_full_buffer_drops_rows_and_changes_nothing(scn, plain, window):
    tr = ps.simulate(scn, rate=RATE, duration=DURATION,
                     trace=TraceSettings(window[0], window[1], ("mechanism",), max_rows=100))
    # once the 100 rows are full, every step drops one row per mechanism routine call (each
    # call stops at its first refused row): legs_between once and leg_forces and ring at each
    # of the 4 stages, 9 a step. A step writes 34 rows (6 + 4 x (6 + 1)), so the buffer is
    # full within the first 3 steps of the window, which holds SPAN x RATE output intervals
    # of ceil(1 / (RATE dt_contact)) steps each (0.4 ms: 30 x 3 = 90 steps, > 9 x 87 = 783
    # drops; 0.2 ms: 150 steps)
    n_steps = round(SPAN * RATE) * math.ceil(1.0 / (RATE * scn.integration.dt_contact) - 1e-9)
    assert len(tr.trace) == 100 and tr.trace.dropped >= 9 * (n_steps - 3)
    np.testing.assert_array_equal(tr.channels["ring_x"], plain.channels["ring_x"])
    assert set(tr.trace.rows[:, TL.TR_ROUTINE].astype(int)) <= {TL.R_LEG_FORCES,
                                                                 TL.R_LEGS_BETWEEN, TL.R_RING}


def test_long_frame_holds_every_value_of_the_wide_tables(traced):
    tr = traced.trace
    fr = tr.frame()
    assert list(fr.columns) == ["t", "step", "stage", "group", "routine", "i", "j", "status",
                                "field", "value", "unit"]
    legs = tr.routine("leg_forces")
    sub = fr[(fr.routine == "leg_forces") & (fr.field == "length")]
    np.testing.assert_array_equal(np.sort(sub.value.to_numpy()), np.sort(legs.length))
    assert set(fr[fr.field == "force_x"].unit) == {"N"}
    n_values = int(np.sum(~np.isnan(tr.rows[:, TL.TR_V0:])))
    n_unused = sum(int(np.sum(~np.isnan(tr.rows[tr.rows[:, TL.TR_ROUTINE] == c,
                                                 TL.TR_V0 + k])))
                   for c, (_, _, f, _) in TL.ROUTINES.items() for k, name in enumerate(f)
                   if name.startswith("unused_"))
    assert len(fr) == n_values - n_unused and n_unused == 0


@pytest.mark.parametrize("text", ["1", "a:b", "0.2:0.1", "0.1:0.1", "-1:2", "1:inf", "1:2:3"])
def test_bad_windows_are_refused(text):
    with pytest.raises(InputError):
        parse_window(text)


def test_groups_parse_and_refuse_unknown_names():
    assert parse_groups("mechanism, contact") == ("contact", "mechanism")
    with pytest.raises(InputError, match="unknown group 'legs'"):
        parse_groups("contact,legs")
    with pytest.raises(InputError):
        parse_groups(" , ")
    with pytest.raises(InputError):
        TraceSettings(0.0, 1.0, max_rows=0)


@pytest.mark.parametrize("t_fail, step", [(0.5912, 2e-3), (0.003, 2e-3), (0.1234567, 1e-4),
                                          (0.0, 1e-3), (12.3456789, 5e-4)])
def test_rerun_hint_covers_the_span_before_and_the_failing_step(t_fail, step):
    """The proposed window holds [t_fail - 5 ms, t_fail + h] (clipped at 0) and is at most
    2 us wider (printed to 1 us, rounded outwards)."""
    from models.trace import HINT_SPAN, rerun_hint

    t0, t1 = parse_window(rerun_hint(t_fail, step).split()[1])
    lo = max(0.0, t_fail - HINT_SPAN)
    assert t0 <= lo + 1e-12 and t1 >= t_fail + step - 1e-12
    assert lo - t0 <= 1e-6 + 1e-12 and t1 - (t_fail + step) <= 1e-6 + 1e-12


def test_peripheral_contact_routine_codes_are_the_pair_codes():
    """The stage writes each contact row with the unit's PAIR_* code as its routine code."""
    from models.peripheral._kernels import run_layout as R

    for name in ("FAN_ACTIVE", "FAN_PASSIVE", "EDGE_EDGE", "EDGE_ACTIVE_CIRCLE",
                 "EDGE_PASSIVE_CIRCLE", "POINT_PASSIVE_PLANE", "POINT_ACTIVE_PLANE"):
        code = getattr(TL, f"R_{name}")
        assert code == getattr(R, f"PAIR_{name}")
        assert TL.ROUTINES[code][0] == "contact"
    assert len({v[1] for v in TL.ROUTINES.values()}) == len(TL.ROUTINES)   # unique names
