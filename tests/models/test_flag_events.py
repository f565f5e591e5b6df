"""The flags a unit times itself (:attr:`models.unit.DockingUnit.flag_events`): the kernel's
event time is the flag's first rise, so that a reconstruction may take the edge from the event
instead of from the output samples around it (recon.observation, Simulated.first_rise)."""
from pathlib import Path

import numpy as np
import pytest

from models.unit import get_unit, unit_names
from recon.config import load_scenario
from recon.forward import UnitForward

ROOT = Path(__file__).resolve().parents[2]
TIMED = [n for n in unit_names() if get_unit(n).flag_events]


def test_some_unit_times_its_flags():
    assert "peripheral" in TIMED


@pytest.mark.parametrize("name", TIMED)
def test_each_timed_flag_first_rises_at_its_event(name):
    """Reference docking and three variations (slower, offset, rolled), output at 1 kHz: where
    the event happened, the flag is 0 at the output sample before the event and 1 at the one
    after (the kernel records an output sample at the first step at or after its time, so the
    event may lie up to one step, <= 1 ms, past the sample: tolerance 1 ms); where it did not,
    the flag never rises. Every flag must rise in at least one run (the test is not empty)."""
    unit, scn, _ = load_scenario(ROOT / "models" / name / "presets" / "reference.toml")
    flags = [f for f, _ in unit.flag_events]
    ics = list(unit.initial_conditions)
    fwd = UnitForward(unit, scn, ics, flags, duration=6.0, rate=1000.0)
    base = fwd.runner.base
    theta = np.repeat(base[None, :], 4, axis=0)
    theta[1, ics.index("rel_vel_x")] *= 0.6
    theta[2, ics.index("rel_pos_z")] -= 0.02
    theta[3, ics.index("rel_roll")] += 0.02
    sim = fwd(theta, ics)
    assert np.isfinite(sim.channels[flags[0]]).all()      # every run went through
    t = sim.t
    for f, e in unit.flag_events:
        assert unit.channels[f].binary and e in unit.events
        ev = sim.first_rise[f]
        assert np.array_equal(ev, fwd.last_events[:, unit.events.index(e)], equal_nan=True)
        for i in range(theta.shape[0]):
            x = sim.channels[f][i]
            on = np.flatnonzero(np.nan_to_num(x) > 0.5)
            if np.isnan(ev[i]):
                assert on.size == 0, (f, i)
                continue
            k = on[0]
            assert k > 0 and x[k - 1] == 0.0, (f, i)
            assert t[k - 1] < ev[i] <= t[k] + 1e-3, (f, i, ev[i], t[k])
        assert np.isfinite(ev).any(), f
