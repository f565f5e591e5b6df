"""`dockrecon simulate docking --trace`: the trace Parquet (long table, units in the field
metadata, rows in the window), the abort message's window, and bad trace options refused in
one line with exit 2 before anything is written."""
import re

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from models.peripheral.simulate import PRESETS
from recon.app.cli import cli

REF = str(PRESETS / "reference.toml")


def test_trace_parquet_beside_the_trajectory(tmp_path):
    out = tmp_path / "traj.parquet"
    r = CliRunner().invoke(cli, ["simulate", "docking", REF, "-o", str(out), "--rate", "50",
                                 "--duration", "0.7", "--trace", "0.58:0.6",
                                 "--trace-what", "contact,mechanism"])
    assert r.exit_code == 0, r.output
    path = tmp_path / "traj.trace.parquet"
    table = pq.read_table(path)
    units = {f.name: (f.metadata or {}).get(b"unit", b"").decode() for f in table.schema}
    assert units["t"] == "s"
    fr = table.to_pandas()
    assert list(fr.columns) == ["t", "step", "stage", "group", "routine", "i", "j", "status",
                                "field", "value", "unit"]
    assert fr.t.min() >= 0.58 and fr.t.max() <= 0.6
    assert set(fr.group) == {"contact", "mechanism"}
    assert {"leg_forces", "legs_between", "ring"} <= set(fr.routine)
    pen = fr[(fr.group == "contact") & (fr.field == "penetration")]
    assert len(pen) > 0 and (pen.value > 0).all() and set(pen.unit) == {"m"}
    # the leg lengths at the output sample t = 0.6 s are the trajectory's
    traj = pq.read_table(out).to_pandas()
    row = traj[np.isclose(traj.t, 0.6, rtol=0, atol=1e-12)].iloc[0]
    legs = fr[(fr.routine == "leg_forces") & (fr.field == "length") & (fr.stage == 0)
              & (fr.t == row.t)].sort_values("i")
    np.testing.assert_array_equal(legs.value.to_numpy(),
                                  [row[f"leg_{i}"] for i in range(1, 7)])


def test_abort_message_proposes_the_window_and_the_rerun_writes_its_trace(tmp_path):
    bad = tmp_path / "tight.toml"
    text = open(REF).read()
    old = "max_penetration = 0.01     # = Delta_max of [ring]"
    assert old in text
    bad.write_text(text.replace(old, "max_penetration = 2.0e-5"))
    out = tmp_path / "x.parquet"
    r = CliRunner().invoke(cli, ["simulate", "docking", str(bad), "-o", str(out),
                                 "--duration", "0.75"])
    assert r.exit_code == 2, r.output
    line = r.stderr.strip()
    assert len(line.splitlines()) == 1 and "simulation stopped at t = " in line
    assert "penetration exceeded" in line and "pair: " in line
    m = re.search(r"--trace ([0-9.e+-]+:[0-9.e+-]+)", line)
    assert m, line
    tp = tmp_path / "abort.trace.parquet"
    r = CliRunner().invoke(cli, ["simulate", "docking", str(bad), "-o", str(out),
                                 "--duration", "0.75", "--trace", m.group(1),
                                 "--trace-out", str(tp)])
    assert r.exit_code == 2 and f"trace written to {tp}" in r.stderr
    fr = pq.read_table(tp).to_pandas()
    assert (fr.status == 2).any()      # the pair beyond its penetration limit is in it
    assert not out.exists()


@pytest.mark.parametrize("args, what", [
    (["--trace", "0.6:0.5"], "T1 must be greater than T0"),
    (["--trace", "0.5"], "expected T0:T1"),
    (["--trace", "a:b"], "expected T0:T1"),
    (["--trace", "0.5:0.6", "--trace-what", "contact,legs"], "unknown group 'legs'"),
    (["--trace-out", "t.parquet"], "needs --trace"),
])
def test_bad_trace_options_one_line_exit_2(tmp_path, args, what):
    out = tmp_path / "x.parquet"
    args = [a.replace("t.parquet", str(tmp_path / "t.parquet")) for a in args]
    r = CliRunner().invoke(cli, ["simulate", "docking", REF, "-o", str(out), *args])
    assert r.exit_code == 2, r.output
    assert len(r.stderr.strip().splitlines()) == 1 and what in r.stderr, r.stderr
    assert "Traceback" not in r.output
    assert not out.exists() and not (tmp_path / "x.trace.parquet").exists()


def test_row_cap_drops_with_a_warning_and_keeps_the_first_rows(tmp_path):
    out = tmp_path / "traj.parquet"
    tp = tmp_path / "cap.parquet"
    r = CliRunner().invoke(cli, ["simulate", "docking", REF, "-o", str(out), "--rate", "50",
                                 "--duration", "0.7", "--trace", "0.58:0.6",
                                 "--trace-what", "mechanism", "--trace-max-rows", "10",
                                 "--trace-out", str(tp)])
    assert r.exit_code == 0, r.output
    assert "rows dropped (the buffer of 10 rows was full)" in r.stderr
    fr = pq.read_table(tp).to_pandas()
    # 10 kernel rows: the six legs' between-steps rows and four leg rows of stage 0
    assert fr.groupby(["routine", "i", "stage"], observed=True).ngroups == 10
    assert fr.t.nunique() == 1
