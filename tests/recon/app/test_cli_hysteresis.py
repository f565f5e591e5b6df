"""``dockrecon identify hysteresis``: a full run on a shipped record, and bad input."""
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from recon.app.cli import cli

STATIC = Path(__file__).resolve().parents[3] / "telemetry_samples" / "static"
REC = STATIC / "lateral_double_loop.csv"
START = STATIC / "lateral_double_loop.start.toml"


def test_identify_hysteresis_writes_json_and_png(tmp_path):
    out, png = tmp_path / "r" / "fit.json", tmp_path / "loop.png"
    res = CliRunner().invoke(cli, ["identify", "hysteresis", str(REC), "--element", str(START),
                                   "--output", str(out), "--plot", str(png), "--starts", "1"])
    assert res.exit_code == 0, res.output
    d = json.loads(out.read_text())
    assert d["kind"] == "hysteresis_fit"
    assert d["element"]["positive"]["forward"]["q"][-1] == pytest.approx(0.06, rel=0.01)
    p = d["parameters"]["pos_kF2"]
    assert p["unit"] == "N/m" and p["stderr"] > 0 and p["ci68"][0] < p["map"] < p["ci68"][1]
    assert 12.0 < d["residual_rms"] < 18.0  # noise 15 N
    assert {"numpy", "scipy", "dockrecon"} <= d["versions"].keys()
    # the one result schema: status, engine diagnostics, the force noise behind the intervals
    assert d["status"] == "ok" and d["diagnostics"]["method"] == "laplace"
    assert 12.0 < d["diagnostics"]["noise"]["sigma_estimated"]["all"] < 18.0
    assert len(d["fitted"]["model"]) == len(d["fitted"]["q"]) == d["n_points"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _bad(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(("record", "element", "expect"), [
    ("missing.csv", None, "missing.csv: no such file"),
    ("q[mm],load[N]\n0,1\n1,2\n", None, "'force': missing column"),
    ("q[mm],force[N]\n0,1\n1,x\n", None, "row 2, 'force': not a number"),
    ("q[mm],force[N]\n0,1\n1,\n", None, "row 2, 'force': missing or non-finite value"),
    ("q[bogus],force[N]\n0,1\n1,2\n", None, "'q': unknown unit"),
    ("q[s],force[N]\n0,1\n1,2\n", None, "'q': unit 's' is not compatible with 'm'"),
    (None, "name = 'x'\n", "start.toml: 'positive': missing side"),
    (None, START.read_text().replace("k_max", "kmax", 1), "'positive.kmax': unknown key"),
    (None, "this is not toml", "start.toml: invalid TOML"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_written(tmp_path, record, element, expect):
    rec = REC if record is None else (
        tmp_path / record if record.endswith(".csv") else _bad(tmp_path, "rec.csv", record))
    el = START if element is None else _bad(tmp_path, "start.toml", element)
    out = tmp_path / "fit.json"
    res = CliRunner().invoke(cli, ["identify", "hysteresis", str(rec), "--element", str(el),
                                   "--output", str(out), "--plot", str(tmp_path / "p.png")])
    # the record's content wrong: 65 (data that cannot be trusted); a path or the start
    # tables wrong: 2 (README, "Exit codes")
    content = record is not None and not record.endswith(".csv")
    assert res.exit_code == (65 if content else 2), res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and expect in lines[0], lines
    assert "Traceback" not in res.output
    assert not out.exists() and not (tmp_path / "p.png").exists()
