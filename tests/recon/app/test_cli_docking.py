"""`dockrecon simulate docking` and `dockrecon bench docking`."""
import json

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from models.probe_cone import preset_path
from models.unit import IC_NAMES
from recon.app.cli import cli

REF = str(preset_path("reference"))


def test_simulate_docking_writes_channels_with_units_and_events(tmp_path):
    out = tmp_path / "traj.parquet"
    evp = tmp_path / "events.json"
    r = CliRunner().invoke(cli, ["simulate", "docking", REF, "--output", str(out),
                                 "--events", str(evp), "--rate", "50", "--duration", "4"])
    assert r.exit_code == 0, r.output
    table = pq.read_table(out)
    units = {f.name: (f.metadata or {}).get(b"unit", b"").decode() for f in table.schema}
    assert table.num_rows == 201
    expected = {"t": "s", "stroke": "m", "gimbal_pitch": "rad", "gimbal_yaw": "rad",
                "contact": "0/1", "bottom_contact": "0/1", "capture": "0/1", "latch_1": "0/1",
                "latch_4": "0/1", "active_rate_x": "rad/s", "passive_rate_z": "rad/s",
                "rel_pos_x": "m", "rel_vel_y": "m/s", "rel_roll": "rad", "rel_rate_z": "rad/s",
                "interface_force_x": "N", "interface_moment_z": "N m",
                "energy_kinetic": "J", "energy_stored": "J", "energy_dissipated_brake": "J",
                "energy_dissipated_dampers": "J", "energy_dissipated_hysteresis": "J",
                "energy_dissipated_contact": "J"}
    for name, unit in expected.items():
        assert units[name] == unit, name
    ev = json.loads(evp.read_text())
    assert ev["kind"] == "docking_events"
    names = [e["name"] for e in ev["events"]]
    assert names[0] == "first_contact"
    assert {"latch_1", "latch_2", "latch_3", "latch_4", "capture", "bottom_contact"} <= set(names)
    times = [e["t"] for e in ev["events"]]
    assert times == sorted(times)
    stroke = table.column("stroke").to_numpy()
    assert np.nanmax(stroke) > 0.05


def test_initial_file_overrides_and_unknown_key_is_exit_2(tmp_path):
    ics = tmp_path / "ics.toml"
    vals = {n: 0.0 for n in IC_NAMES}
    vals.update(rel_pos_x=-3.0, rel_vel_x=0.1)
    ics.write_text("\n".join(f"{k} = {v}" for k, v in vals.items()) + "\n")
    out = tmp_path / "t.csv"
    r = CliRunner().invoke(cli, ["simulate", "docking", REF, "--initial", str(ics),
                                 "--output", str(out), "--duration", "1", "--rate", "10"])
    assert r.exit_code == 0, r.output
    head = out.read_text().splitlines()[0]
    assert "stroke[m]" in head and "rel_pos_x[m]" in head
    ics.write_text(ics.read_text() + "rel_spin = 1.0\n")
    r = CliRunner().invoke(cli, ["simulate", "docking", REF, "--initial", str(ics),
                                 "--output", str(tmp_path / "u.parquet")])
    assert r.exit_code == 2
    assert r.stderr.strip().startswith(f"error: {ics}: 'rel_spin': unknown key")
    assert not (tmp_path / "u.parquet").exists()


def test_bad_scenario_key_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(open(REF).read().replace("head_mass = 10.0", "head_mas = 10.0"))
    r = CliRunner().invoke(cli, ["simulate", "docking", str(bad), "--output",
                                 str(tmp_path / "x.parquet")])
    assert r.exit_code == 2
    assert r.stderr.strip().startswith(f"error: {bad}: 'probe.head_mas': unknown key (expected "
                                       "one of: axial_absorber, axial_damping, ")
    assert len(r.stderr.strip().splitlines()) == 1
    assert "Traceback" not in r.output


def test_missing_scenario_file_exit_2(tmp_path):
    r = CliRunner().invoke(cli, ["simulate", "docking", str(tmp_path / "none.toml"),
                                 "--output", str(tmp_path / "x.parquet")])
    assert r.exit_code == 2
    assert "no such file" in r.stderr


def test_bench_docking_json(monkeypatch):
    # figures only (never timed assertions): the keys exist and are positive
    r = CliRunner().invoke(cli, ["bench", "docking", "--json", "--repeats", "1", "--batch", "2"])
    assert r.exit_code == 0, r.output
    fig = json.loads(r.output.strip().splitlines()[-1])
    for k in ("simulated_s", "wall_s_median", "realtime_factor", "batch_evals_per_s"):
        assert fig[k] > 0
    assert fig["simulated_s"] == pytest.approx(20.0)
