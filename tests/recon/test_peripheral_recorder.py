"""The peripheral unit's flight recorder (telemetry_samples/flights/peripheral/generate.py)
and its shipped flights: truth, units, noise statistics, flag timing, bit-identical
regeneration, the run configuration and the capture thresholds the flights are chosen by.

One ``dockrecon samples generate flights --unit peripheral`` run (about 3 s of CPU) serves
every test of the records; the comparisons use a separate noiseless simulation of each flight
and numpy interpolation, not the observation model that made the records.
"""
import dataclasses
import json

import numpy as np
import pyarrow.parquet as pq
import pytest

from models.errors import InputError
from models.peripheral import simulate as ps
from recon.telemetry import load_telemetry
from telemetry_samples import SAMPLES_DIR
from models.peripheral.unit import UNIT
from recon.recording import record_study_flight, recorder_table
from telemetry_samples.flights.peripheral import generate as pg

#: the unit's recorder (its sensor suite as the recorder uses it)
RECORDER = recorder_table(UNIT)

SHIPPED = SAMPLES_DIR / "flights" / "peripheral"
SEED = 2026


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """The three flights as the command writes them with the shipped seed."""
    from click.testing import CliRunner

    from recon.app.cli import cli

    out = tmp_path_factory.mktemp("peripheral_flights")
    r = CliRunner().invoke(cli, ["samples", "generate", "flights", "--unit", "peripheral",
                                 "-o", str(out), "--seed", str(SEED), "-q"])
    assert r.exit_code == 0, r.output
    return out


@pytest.fixture(scope="module")
def simulated():
    """Noiseless simulation of each flight (1000 Hz, with the integration the records were
    made with, as the recorder simulates it)."""
    scn = pg.record_scenario()
    out = {}
    for name, spec in pg.FLIGHTS.items():
        ic = dataclasses.replace(scn.initial, **spec["initial"])
        out[name] = (ic, ps.simulate(scn, ic, 1000.0, spec["duration"]))
    return out


def _truth(directory, name):
    return json.loads((directory / f"{name}.truth.json").read_text())


def test_regenerated_bit_identical_to_the_shipped_files(generated):
    names = sorted(p.name for p in SHIPPED.glob("*.parquet")) + \
        sorted(p.name for p in SHIPPED.glob("*.truth.json"))
    assert len(names) == 2 * len(pg.FLIGHTS)
    for n in names:
        assert (generated / n).read_bytes() == (SHIPPED / n).read_bytes(), n
    # small enough to ship
    assert all((SHIPPED / n).stat().st_size < 60_000 for n in names)


@pytest.mark.parametrize("name", list(pg.FLIGHTS))
def test_truth_is_the_simulated_state(generated, simulated, name):
    ic, traj = simulated[name]
    doc = _truth(generated, name)
    spec = pg.FLIGHTS[name]
    expect = {n: getattr(ic, n) for n in ps.R.IC_NAMES}
    assert doc["parameters"] == {**expect, "clock_offset": spec["clock_offset"]}
    for k, v in spec["initial"].items():        # the stated truth, not the preset's
        assert doc["parameters"][k] == v
    ev = {k: (None if np.isnan(v) else v) for k, v in traj.events.items()}
    assert doc["events"] == ev
    assert doc["events"]["capture"] is not None       # every shipped flight captures
    # the record covers capture and at least 1.5 s after it
    t_end = spec["duration"]
    assert doc["events"]["capture"] < t_end - 1.5
    assert doc["settings"]["observation"]["leg_1"]["sigma"] == 1e-4


def test_channels_read_back_with_their_units(generated, simulated):
    """File units in the Parquet metadata; load_telemetry converts them back to SI: every
    continuous sample lies within 5 sigma_eff (+ half a step) of the noiseless simulation
    (a unit slip, mm for m or deg for rad, misses by orders of magnitude)."""
    path = generated / "misaligned.parquet"
    meta = {f.name: (f.metadata or {}).get(b"unit", b"").decode()
            for f in pq.read_schema(path)}
    assert meta["t"] == "s" and meta["ring_x"] == "mm" and meta["leg_6"] == "mm"
    assert meta["ring_yaw"] == "deg" and meta["passive_rate_z"] == "deg/s"
    assert all(meta[f] == "0/1" for f in ("contact", "capture", "capture_sensor_2", "latch_5"))
    tel = load_telemetry(path)
    ic, traj = simulated["misaligned"]
    off = pg.FLIGHTS["misaligned"]["clock_offset"]
    for c in RECORDER.channels:
        t, y = tel.samples(c.name)
        assert t.size > 10, c.name
        x = np.interp(t - off, traj.t, traj.channels[c.name])
        if c.binary:
            assert set(np.unique(y)) <= {0.0, 1.0}
            continue
        assert np.max(np.abs(y - x)) < 5 * c.sigma_eff + 0.5 * c.quantum, c.name


@pytest.mark.parametrize("group", [tuple(f"leg_{i}" for i in range(1, 7)),
                                   ("ring_x", "ring_y", "ring_z"),
                                   ("ring_roll", "ring_pitch", "ring_yaw")])
def test_noise_statistics_match_the_recorder_table(generated, simulated, group):
    """Residuals against the noiseless simulation, pooled over a channel group and the three
    flights: mean 0 and standard deviation sqrt(sigma^2 + q^2/12) (noise then rounding; the
    Sheppard variance holds to < 1 % for q <= sigma). Tolerance 4 standard errors: of the
    mean sigma_eff/sqrt(N), of the sd sigma_eff/sqrt(2N) (N = 1000-3300 samples: 5-9 %)."""
    models = {c.name: c for c in RECORDER.channels}
    seff = {models[c].sigma_eff for c in group}
    assert len(seff) == 1
    seff = seff.pop()
    res = []
    for name in pg.FLIGHTS:
        tel = load_telemetry(generated / f"{name}.parquet")
        traj = simulated[name][1]
        off = pg.FLIGHTS[name]["clock_offset"]
        for c in group:
            t, y = tel.samples(c)
            res.append(y - np.interp(t - off, traj.t, traj.channels[c]))
    r = np.concatenate(res)
    n = r.size
    assert n > 1000
    assert abs(r.mean()) < 4 * seff / np.sqrt(n)
    assert abs(r.std(ddof=1) / seff - 1.0) < 4 / np.sqrt(2 * n)


@pytest.mark.parametrize("name", list(pg.FLIGHTS))
def test_flags_switch_at_the_simulated_events_within_one_sample(generated, simulated, name):
    """The first rising edge of each flag is bracketed by the two samples around its event
    time on the telemetry clock (1 ms slack: the 1000 Hz simulated flag is read by linear
    interpolation), and those samples are one flag period (20 ms) apart."""
    tel = load_telemetry(generated / f"{name}.parquet")
    traj = simulated[name][1]
    off = pg.FLIGHTS[name]["clock_offset"]
    pairs = {"contact": "first_contact", "capture": "capture",
             **{f"latch_{i}": f"latch_{i}" for i in range(1, 7)}}
    for flag, event in pairs.items():
        t, y = tel.samples(flag)
        on = np.flatnonzero(y > 0.5)
        t_ev = traj.events[event]
        assert np.isfinite(t_ev) and on.size and on[0] > 0, flag
        lo, hi = t[on[0] - 1], t[on[0]]
        assert lo < t_ev + off + 1e-3 and hi >= t_ev + off - 1e-3, (flag, lo, hi, t_ev + off)
        assert hi - lo == pytest.approx(0.02, abs=1e-9)


def test_study_recorder_cut(tmp_path):
    """The study's recorder of the unit is the flight recorder with the unit's sensor suite; a
    cut record starts at the start plane on the telemetry clock and carries its truth."""
    from recon.calibration import flight_recorder

    record = flight_recorder(UNIT)
    assert record.func is record_study_flight and record.args == (UNIT,)
    scn = ps.load_scenario("reference")
    ic = {"rel_vel_x": 0.12, "rel_pos_y": 0.02}
    paths, truth = record("s1", tmp_path, ic, scenario=scn, seed=5,
                          rng=np.random.default_rng(0), records="cut", clock_offset=-0.3,
                          duration=2.5)
    assert truth["rel_vel_x"] == 0.12 and truth["clock_offset"] == -0.3
    tel = load_telemetry(paths[0])
    assert tel.t[0] == pytest.approx(-0.3) and tel.t[-1] < 2.5 - 0.3
    with pytest.raises(InputError) as exc:
        record("s2", tmp_path, ic, scenario=scn, seed=5, rng=np.random.default_rng(0),
               records="both")
    assert "records" in str(exc.value)


def test_study_recorder_realistic(tmp_path, simulated):
    """A realistic record of the reference docking: the simulation starts during the approach
    (approach_start), so the truth is the state at the start plane and the events count from
    there: they match the cut simulation from that state (within 2 ms: the two runs' step
    grids are offset by the crossing time), the record starts at the drawn record start, runs
    20 s past capture, and its capture flag switches within one flag period of the truth's
    capture on the record's clock."""
    scn = pg.record_scenario()
    rng = np.random.default_rng(3)
    paths, truth = record_study_flight(UNIT, "r1", tmp_path, {}, scenario=scn, seed=11,
                                       rng=rng, records="realistic")
    doc = _truth(tmp_path, "r1")
    ic, traj = simulated["nominal"]
    assert {k: truth[k] for k in ps.R.IC_NAMES} == {k: getattr(ic, k) for k in ps.R.IC_NAMES}
    st = doc["settings"]
    assert 3.0 <= st["approach"] <= 10.0
    assert truth["clock_offset"] == pytest.approx(st["record_start"]
                                                  + st["start_plane_crossing"], abs=1e-9)
    assert st["start_plane_crossing"] == pytest.approx(st["approach"], rel=0.05)
    for k in ("first_contact", "capture"):
        assert doc["events"][k] == pytest.approx(traj.events[k], abs=2e-3), k
    tel = load_telemetry(paths[0])
    t_cap = doc["events"]["capture"] + truth["clock_offset"]
    assert tel.t[0] == pytest.approx(st["record_start"])
    assert tel.t[-1] == pytest.approx(t_cap + 20.0, abs=0.01)
    t, y = tel.samples("capture")
    on = np.flatnonzero(y > 0.5)[0]
    assert t[on - 1] < t_cap + 1e-3 and t[on] >= t_cap - 1e-3 and t[on] - t[on - 1] < 0.0201


def test_run_configuration_fits_the_shipped_flights():
    """run.toml: the sensor models of the records, the start plane of the scenario, and every
    flight's truth inside the prior box."""
    from recon.config import RunConfig
    from recon.io import load_toml

    cfg = RunConfig.from_dict(load_toml(SHIPPED / "run.toml"))
    fitted = (*(f"ring_{a}" for a in ("x", "y", "z", "roll", "pitch", "yaw")), "capture",
              *(f"latch_{i}" for i in range(1, 7)),
              *(f"{b}_rate_{a}" for b in ("active", "passive") for a in "xyz"))
    assert cfg.observation.channels == tuple(c for c in RECORDER.channels if c.name in fitted)
    sp = cfg.space
    scn = ps.load_scenario("reference")
    for name in pg.FLIGHTS:
        truth = _truth(SHIPPED, name)["parameters"]
        assert truth["rel_pos_x"] == scn.initial.rel_pos_x
        for j, n in enumerate(sp.free_names):
            assert sp.lower[j] <= truth[n] <= sp.upper[j], (name, n)


def test_capture_and_latch_thresholds():
    """The brackets the low-energy flight is chosen by (reference scenario, closing speed
    only, 20 s): below CAPTURE_THRESHOLD no capture, above it capture; below
    LATCH_THRESHOLD no latch, above it a latch; the flight lies above the capture bracket.
    The brackets are the records' model's (RECORD_INTEGRATION), the one the flight was made
    with."""
    scn = pg.record_scenario()

    def events(v):
        tr = ps.simulate(scn, dataclasses.replace(scn.initial, rel_vel_x=v), 50.0, 20.0)
        latched = any(np.isfinite(tr.events[f"latch_{i}"]) for i in range(1, 7))
        return latched, bool(np.isfinite(tr.events["capture"]))

    lo, hi = pg.CAPTURE_THRESHOLD
    assert events(lo) == (True, False) and events(hi) == (True, True)
    lo, hi = pg.LATCH_THRESHOLD
    assert events(lo) == (False, False) and events(hi) == (True, False)
    v = pg.FLIGHTS["low_energy"]["initial"]["rel_vel_x"]
    assert pg.CAPTURE_THRESHOLD[1] < v < 1.1 * pg.CAPTURE_THRESHOLD[1]
