"""`dockrecon simulate docking` and `dockrecon bench docking` with the peripheral unit."""
import json

import pyarrow.parquet as pq
from click.testing import CliRunner

from models.peripheral.simulate import PRESETS
from recon.app.cli import cli

REF = str(PRESETS / "reference.toml")


def test_simulate_peripheral_writes_channels_with_units_and_events(tmp_path):
    out = tmp_path / "traj.parquet"
    evp = tmp_path / "events.json"
    r = CliRunner().invoke(cli, ["simulate", "docking", REF, "--output", str(out),
                                 "--events", str(evp), "--rate", "50", "--duration", "2"])
    assert r.exit_code == 0, r.output
    table = pq.read_table(out)
    units = {f.name: (f.metadata or {}).get(b"unit", b"").decode() for f in table.schema}
    assert table.num_rows == 101
    expected = {"t": "s", "ring_x": "m", "ring_roll": "rad", "leg_6": "m", "contact": "0/1",
                "capture_sensor_3": "0/1", "capture": "0/1", "latch_6": "0/1",
                "active_rate_x": "rad/s", "passive_rate_z": "rad/s", "rel_vel_x": "m/s",
                "interface_force_x": "N", "interface_moment_z": "N m", "energy_kinetic": "J",
                "energy_dissipated_brake": "J"}
    for name, unit in expected.items():
        assert units[name] == unit, name
    ev = json.loads(evp.read_text())
    assert ev["unit"] == "peripheral"
    names = [e["name"] for e in ev["events"]]
    assert names[0] == "first_contact"
    assert {f"latch_{i}" for i in range(1, 7)} | {"capture"} <= set(names)
    times = [e["t"] for e in ev["events"]]
    assert times == sorted(times)


def test_bad_peripheral_scenario_key_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "bad.toml"
    text = open(REF).read()
    assert "\ndt_free = " in text
    bad.write_text(text.replace("\ndt_free = ", "\ndt_fre = "))
    r = CliRunner().invoke(cli, ["simulate", "docking", str(bad), "--output",
                                 str(tmp_path / "x.parquet")])
    assert r.exit_code == 2
    assert r.stderr.strip().startswith(f"error: {bad}: 'integration.dt_fre'")
    assert len(r.stderr.strip().splitlines()) == 1
    assert "Traceback" not in r.output
    assert not (tmp_path / "x.parquet").exists()


def test_bench_docking_peripheral_json():
    r = CliRunner().invoke(cli, ["bench", "docking", "--unit", "peripheral", "--json",
                                 "--repeats", "1", "--batch", "2"])
    assert r.exit_code == 0, r.output
    fig = json.loads(r.output.strip().splitlines()[-1])
    assert fig["simulated_s"] == 20.0 and fig["batch_failed"] == 0


def test_a_record_of_the_other_unit_is_refused_in_one_line(tmp_path, cli_run):
    """A peripheral record given a probe-cone scenario, and a probe-cone flight given the
    peripheral scenario: exit 2 before any fit, one line naming the record's file, the unit
    it belongs to and the scenario's unit; no result directory. A record of the scenario's
    own unit passes the same check."""
    from models.probe_cone import preset_path
    from models.unit import get_unit
    from recon.flight import check_record_unit
    from recon.telemetry import load_telemetry
    from telemetry_samples import SAMPLES_DIR

    ring = tmp_path / "ring.parquet"
    r = cli_run("simulate", "docking", REF, "--output", ring, "--rate", "50",
                "--duration", "1")
    assert r.exit_code == 0, r.output
    nominal = SAMPLES_DIR / "flights" / "nominal.parquet"
    for record, scenario, theirs, ours in (
            (ring, preset_path("reference"), "peripheral", "probe_cone"),
            (nominal, REF, "probe_cone", "peripheral")):
        out = tmp_path / f"fit_{ours}"
        r = cli_run("reconstruct", record, "--scenario", scenario, "--output", out)
        assert r.exit_code == 2, r.output
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1, lines
        assert lines[0].startswith(f"error: {record}: a record of the {theirs} unit ("), lines
        assert f"the scenario is for the {ours} unit" in lines[0]
        assert "Traceback" not in r.output and not out.exists()
    # each record with its own unit is accepted by the check
    check_record_unit(load_telemetry(ring), get_unit("peripheral"))
    check_record_unit(load_telemetry(nominal), get_unit("probe_cone"))
