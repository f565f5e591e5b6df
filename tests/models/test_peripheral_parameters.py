"""The peripheral unit's parameters a reconstruction may set per evaluation, by their scenario
paths and short names, against the scenario with that number changed in its TOML: the path
names the number it claims to, and the packed entries derived from it (the slip deflections
with the preload cage's deflection, the inverse masses) are recomputed exactly as the
scenario's packing computes them."""
from __future__ import annotations

import copy
import tomllib

import numpy as np

from models.peripheral import simulate as ps
from models.peripheral.simulate import PeripheralBatch, Scenario

PRESET = ps.PRESETS / "reference.toml"
CHANNELS = ("ring_x", "ring_y", "ring_z", "ring_pitch", "capture", "active_rate_y")


def _doc():
    with PRESET.open("rb") as fh:
        return tomllib.load(fh)


def _run(doc, name, value, duration=2.0):
    """The preset's initial conditions, ``name`` set to ``value`` per row (None: no row
    override, the scenario ``doc`` as it stands)."""
    scn = Scenario.from_dict(doc)
    if name is None:
        bm = PeripheralBatch(scn, ["rel_vel_x"], CHANNELS, duration=duration)
        theta = bm.base[None, :]
    else:
        bm = PeripheralBatch(scn, [name], CHANNELS, duration=duration)
        theta = np.array([[value]])
    out, ev, status = bm.evaluate(theta)
    return out[0], ev[0], int(status[0])


def test_every_scenario_path_a_run_may_set_is_that_number_of_the_scenario():
    doc = _doc()
    paths = [p for p in ps.PARAMETERS if "." in p]
    assert len(paths) >= 12
    for path in paths:
        *tables, key = path.split(".")
        changed = copy.deepcopy(doc)
        node = changed
        for t in tables:
            node = node[t]
        # the slip forces low enough that the legs slip within the run (so that the slip
        # deflections derived from them matter); the other numbers 10 % up
        value = (0.3 if key.startswith("brake_force") else 1.1) * node[key]
        node[key] = value
        ref = _run(changed, None, None)
        got = _run(doc, path, value)
        assert got[2] == ref[2] == 0, path
        np.testing.assert_array_equal(got[0], ref[0], err_msg=path)
        np.testing.assert_array_equal(got[1], ref[1], err_msg=path)


def test_leg_brake_force_is_both_slip_forces_of_the_scenario():
    """The short name sets compression and extension slip forces together; with the preset's
    preload cage (its deflection 0.2 mm at the preload) the slip deflections must include it,
    as the scenario's packing does. At 250 N the legs slip within 3 s; slip deflections
    without the cage's deflection move the ring by 0.26 mm against this scenario."""
    doc = _doc()
    assert doc["mechanism"]["preload_stiffness"] < float("inf")
    changed = copy.deepcopy(doc)
    changed["mechanism"]["brake_force_compression"] = 250.0
    changed["mechanism"]["brake_force_extension"] = 250.0
    ref = _run(changed, None, None, duration=3.0)
    got = _run(doc, "leg_brake_force", 250.0, duration=3.0)
    np.testing.assert_array_equal(got[0], ref[0])
