"""Step counters of the peripheral kernel (``INFO_STEPS``, ``INFO_SMALL_STEPS``,
``INFO_T_TOUCH``) against the step sizes of the run: what the speed figures of
``docs/design/peripheral_contact_step.rst`` and ``peripheral_captured_step.rst`` count."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from models.peripheral._kernels import run_layout as R
from models.peripheral.simulate import load_scenario, simulate
from models.trace import TraceSettings


@pytest.fixture(scope="module")
def scenario():
    return load_scenario("reference")


@pytest.fixture(scope="module")
def run(scenario):
    return simulate(scenario, duration=4.0)


def test_free_steps_until_the_touch_then_contact_steps_until_capture(scenario, run):
    # free_until_touch: free steps (dt_free) from t = 0 to the touch, each on the 2-ms grid
    # (dt_free divides the 20-ms output interval, so no free step is shortened); the step from
    # t_touch is retaken at dt_contact (the petals interleave from t = 0, inside the gap
    # margin); contact steps from t_touch to capture: small = (t_capture - t_touch) /
    # dt_contact; the rest are captured steps, dt_captured each except the steps shortened to
    # land on an output time (at most one per output interval)
    it = scenario.integration
    assert it.free_until_touch
    T = 4.0
    tc = run.events["capture"]
    assert 1.0 < tc < 3.0
    t_touch = float(run.info[R.INFO_T_TOUCH])
    assert 0.0 < t_touch < run.events["first_contact"]
    n_free = round(t_touch / it.dt_free)
    assert t_touch == pytest.approx(n_free * it.dt_free, abs=1e-9)
    small = int(run.info[R.INFO_SMALL_STEPS])
    steps = int(run.info[R.INFO_STEPS])
    assert small == round((tc - t_touch) / it.dt_contact)
    n_capt = steps - n_free - small
    lo = math.floor((T - tc) / it.dt_captured)
    assert lo <= n_capt <= lo + math.ceil((T - tc) * it.output_rate) + 1


def test_the_touch_is_the_first_latch_on_its_guide_face(scenario, run):
    # the reference's first touch is a latch tip on its guide face (the ring-ring contacts
    # begin at 0.576 s): with the contact step from t = 0 the first step end at which a
    # latch's guide penetration is positive lies within the free step retaken at t_touch,
    # (t_touch, t_touch + dt_free]
    it = scenario.integration
    t_touch = float(run.info[R.INFO_T_TOUCH])
    s = dataclasses.replace(scenario, integration=dataclasses.replace(it,
                                                                      free_until_touch=False))
    tr = simulate(s, duration=0.6, trace=TraceSettings(t_touch - 0.01, t_touch + 0.01,
                                                       ("latch",), max_rows=100000))
    assert np.isnan(tr.info[R.INFO_T_TOUCH])
    lb = tr.trace.routine("latch_between")
    t_first = float(lb.t[lb.guide_penetration > 0.0].min())
    assert t_touch < t_first <= t_touch + it.dt_free + 1e-9
    # and without the free steps every step before capture is a contact step
    n = round(0.6 / it.dt_contact)
    assert int(tr.info[R.INFO_SMALL_STEPS]) == int(tr.info[R.INFO_STEPS]) == n


def test_free_steps_change_the_run_by_rounding_only(scenario, run):
    # before the touch the vehicles fly free and the ring sits on its unloaded legs: RK4 at
    # 2 ms and at 0.4 ms agree to ~1e-12 m (found 1e-12 on the ring and legs over 4 s)
    s = dataclasses.replace(scenario, integration=dataclasses.replace(
        scenario.integration, free_until_touch=False))
    ref = simulate(s, duration=4.0)
    assert run.events["capture"] == pytest.approx(ref.events["capture"], abs=1e-9)
    for n in ("ring_x", "ring_y", "ring_z", "leg_1", "leg_4"):
        assert np.max(np.abs(run[n] - ref[n])) < 1e-9
