"""The absorbers' tables rebuilt inside the probe-cone kernel from their characteristic numbers
(models.probe_cone._kernels.absorbers) against the Python construction they stand in for
(config.AxialAbsorber / LateralAbsorber -> models.hysteresis element -> packed table):
bit-identical tables, the same numbers refused, and a run that rebuilds its tables from a
changed number identical to a run of the scenario with that number changed."""
from __future__ import annotations

import copy
import dataclasses
import importlib

import numpy as np
import pytest

from models.errors import InputError
from models.probe_cone._kernels import kernel as kp
from models.probe_cone._kernels.absorbers import (AXIAL_FIELDS, LATERAL_FIELDS, axial_table,
                                                  lateral_table)
from models.probe_cone.config import LateralAbsorber
from models.probe_cone import load_preset

S = importlib.import_module("models.probe_cone.simulate")   # the package exports simulate()


def _python_table(absorber):
    """The packed table of the element Python builds, or None when it refuses the numbers."""
    try:
        return absorber.element().table()
    except InputError:
        return None


def _draws(base, fields, n, rng, spread):
    """``n`` absorbers with every number of ``fields`` scaled by a factor between
    ``exp(-spread)`` and ``exp(spread)`` (many invalid: stages crossing, ratios beyond 1)."""
    return [{f: getattr(base, f) * np.exp(rng.uniform(-spread, spread)) for f in fields}
            for _ in range(n)]


def _agree(base, fields, draws, build) -> int:
    """For the preset's numbers and each of ``draws``: the compiled ``build(table, numbers)``
    refuses exactly the numbers the Python construction refuses, and its table is the Python
    one bit for bit (every entry written: the table starts as NaN). Returns how many were
    valid."""
    size = base.element().table().size
    valid = 0
    for vals in [{f: getattr(base, f) for f in fields}, *draws]:
        try:
            ab = dataclasses.replace(base, **vals)
        except InputError:
            ab = None
        ref = None if ab is None else _python_table(ab)
        table = np.full(size, np.nan)
        status = build(table, vals)
        assert (status == 0) == (ref is not None), vals
        if ref is not None:
            valid += 1
            assert np.array_equal(table, ref), (vals, table - ref)
    return valid


def test_rebuilt_axial_table_is_bit_identical_and_refuses_the_same_numbers():
    base = load_preset("reference").probe.axial
    fields = AXIAL_FIELDS + ("slip_force",)
    draws = _draws(base, fields, 400, np.random.default_rng(3), 0.6)
    valid = _agree(base, fields, draws, lambda table, v: axial_table(
        table, 0, np.array([v[f] for f in AXIAL_FIELDS]), v["slip_force"]))
    # both kinds of case were exercised
    assert 50 < valid < len(draws) - 50, valid


@pytest.mark.parametrize("which", ["lateral", "torsion"])
def test_rebuilt_lateral_table_is_bit_identical_and_refuses_the_same_numbers(which):
    base = getattr(load_preset("reference").probe, which)
    draws = _draws(base, LATERAL_FIELDS, 400, np.random.default_rng(4), 1.2)
    valid = _agree(base, LATERAL_FIELDS, draws, lambda table, v: lateral_table(
        table, 0, np.array([v[f] for f in LATERAL_FIELDS])))
    assert 50 < valid < len(draws) - 50, valid
    assert isinstance(base, LateralAbsorber)


def _changed(scn, **paths):
    """The scenario with absorber numbers changed (``axial_absorber__spring_force=...``)."""
    probe = scn.probe
    for key, value in paths.items():
        part, field = key.split("__")
        attr = {"axial_absorber": "axial", "lateral_absorber": "lateral",
                "torsion_absorber": "torsion"}[part]
        probe = dataclasses.replace(probe, **{attr: dataclasses.replace(getattr(probe, attr),
                                                                         **{field: value})})
    return dataclasses.replace(scn, probe=probe)


def test_a_run_rebuilding_its_tables_equals_the_scenario_with_the_numbers_changed():
    """The preset run with its absorbers' numbers set by their paths (the kernel rebuilds the
    tables) is bit-identical to a run of the scenario whose TOML had those numbers, and the
    preset's own numbers set that way leave the run as it was. A docking that strokes the
    axial absorber into its brake and swings the lateral ones."""
    scn = load_preset("reference")
    ref = S.simulate(scn, duration=3.0)
    same = S.simulate(scn, duration=3.0, overrides={
        "probe.axial_absorber.spring_force": scn.probe.axial.spring_force,
        "probe.lateral_absorber.stage2_rate": scn.probe.lateral.stage2_rate,
        "probe.torsion_absorber.common_angle": scn.probe.torsion.common_angle})
    for name, v in ref.channels.items():
        np.testing.assert_array_equal(same.channels[name], v, err_msg=name)
    new = {"probe.axial_absorber.spring_force": 950.0,
           "probe.axial_absorber.unloading_force": 520.0,
           "probe.lateral_absorber.stage2_rate": 7500.0,
           "probe.lateral_absorber.unloading_ratio": 0.55,
           "probe.torsion_absorber.stage1_rate": 0.8 * scn.probe.torsion.stage1_rate}
    by_paths = S.simulate(scn, duration=3.0, overrides=new)
    other = _changed(scn, **{k.split(".", 1)[1].replace(".", "__"): v for k, v in new.items()})
    by_scenario = S.simulate(other, duration=3.0)
    moved = 0
    for name, v in by_scenario.channels.items():
        np.testing.assert_array_equal(by_paths.channels[name], v, err_msg=name)
        moved += not np.array_equal(v, ref.channels[name], equal_nan=True)
    assert moved > 5        # the change did reach the dynamics
    assert by_paths.events == by_scenario.events


def test_numbers_that_make_no_element_end_the_run_as_a_bad_table():
    """An unloading force above the loading one is no hysteresis loop: the batch row fails
    with the bad-table status (zero likelihood in a reconstruction), the others run."""
    scn = load_preset("reference")
    bm = S.BatchModel(scn, parameters=["probe.axial_absorber.unloading_force"],
                      channels=["stroke"], duration=1.0)
    assert bm.P[kp.P_REBUILD] == kp.REBUILD_AXIAL
    out, ev, status = bm.evaluate(np.array([[600.0], [900.0]]))
    assert status[0] == 0 and status[1] == kp.ST_BAD_TABLE
    assert S.BatchModel(scn, parameters=["rel_vel_x"], duration=1.0).P[kp.P_REBUILD] == 0.0


def test_every_scenario_path_a_run_may_set_is_that_number_of_the_scenario():
    """Each scenario path among the packed parameters (``probe.axial_absorber.spring_force``,
    ``contact.friction``, ...) set to 1.1 times the preset's value gives, bit for bit, the run
    of the scenario whose TOML holds that value at that path: the path names the number it
    claims to, whether the kernel takes it as a packed entry or rebuilds a table from it.
    The slip level is the exception by design: the kernel moves it on the packed table along
    the table's own last stiff slope (``apply_slip_force``), which equals the scenario's
    ``stiff_rate`` to rounding, so that run agrees to rounding (1e-9 of each channel's range;
    measured: a few units in the last place after 2.5 s)."""
    import tomllib

    from models.probe_cone import Scenario, preset_path

    with preset_path("reference").open("rb") as fh:
        doc = tomllib.load(fh)
    scn = Scenario.from_dict(doc)
    paths = [p for p in S.PARAMETERS if "." in p]
    assert len(paths) >= 35
    for path in paths:
        node = doc
        *tables, key = path.split(".")
        for t in tables:
            node = node[t]
        value = 1.1 * node[key]
        changed = copy.deepcopy(doc)
        node = changed
        for t in tables:
            node = node[t]
        node[key] = value
        by_scenario = S.simulate(Scenario.from_dict(changed), duration=2.5)
        by_path = S.simulate(scn, duration=2.5, overrides={path: value})
        slip = S.PARAMETERS[path] == kp.P_F_SLIP
        for name, v in by_scenario.channels.items():
            if slip:
                np.testing.assert_allclose(by_path.channels[name], v, rtol=0, err_msg=path,
                                           atol=1e-9 * max(np.nanmax(np.abs(v)), 1e-300))
            else:
                np.testing.assert_array_equal(by_path.channels[name], v, err_msg=f"{path}: "
                                              f"{name}")
        if not slip:
            assert by_path.events == by_scenario.events, path
