"""Step counters of the peripheral kernel (``INFO_STEPS``, ``INFO_SMALL_STEPS``) against the
step sizes of the run: what the speed figures of ``benchmarks/README.md`` count."""
from __future__ import annotations

import math

import pytest

from models._kernels import peripheral_run_layout as R
from models.peripheral.simulate import load_scenario, simulate


@pytest.fixture(scope="module")
def scenario():
    return load_scenario("reference")


def test_small_steps_are_the_contact_steps_before_capture(scenario):
    # the reference starts with the petals interleaved (inside the gap margin), so every step
    # before capture is a contact step and none after it: small = t_capture / dt_contact, and
    # the rest are captured steps, dt_captured each except the steps shortened to land on an
    # output time (at most one per output interval)
    it = scenario.integration
    T = 4.0
    tr = simulate(scenario, duration=T)
    tc = tr.events["capture"]
    assert 1.0 < tc < 3.0
    small = int(tr.info[R.INFO_SMALL_STEPS])
    steps = int(tr.info[R.INFO_STEPS])
    assert small == round(tc / it.dt_contact)
    n_capt = steps - small
    lo = math.floor((T - tc) / it.dt_captured)
    assert lo <= n_capt <= lo + math.ceil((T - tc) * it.output_rate) + 1
