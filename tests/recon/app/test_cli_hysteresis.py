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


def test_profile_intervals_beside_laplace(tmp_path):
    """``--intervals profile``: the profile intervals of the fitted parameters recorded beside
    the Laplace ones (which stay), and printed side by side with them for every parameter
    whose profile is not parabolic. ``--profile`` limits the run to three parameters: the
    backlash end ``pos_q0``, whose profile is skewed (the kink at the end of the backlash
    sits between samples; its lower side is twice the Laplace half-width), the common length
    ``pos_c`` and the limit force ``pos_QN``, nearly linear in the force (parabolic within
    2 %)."""
    out = tmp_path / "fit.json"
    res = CliRunner().invoke(cli, ["identify", "hysteresis", str(REC), "--element", str(START),
                                   "--output", str(out), "--starts", "1",
                                   "--intervals", "profile", "--profile",
                                   "pos_q0,pos_c,pos_QN"])
    assert res.exit_code == 0, res.output
    d = json.loads(out.read_text())
    prof = d["diagnostics"]["profile"]
    assert d["settings"]["intervals"] == "profile"
    assert d["settings"]["profile"] == ["pos_q0", "pos_c", "pos_QN"]
    assert "lmfit" in d["versions"]          # the library behind the intervals, recorded
    assert list(prof["intervals"]) == ["pos_q0", "pos_c", "pos_QN"]
    assert "pos_q0" in prof["not_parabolic"] and "pos_QN" not in prof["not_parabolic"]
    for name, iv in prof["intervals"].items():
        lo, hi = iv["ci95"]
        assert lo <= iv["ci68"][0] < iv["ci68"][1] <= hi
    # the internal parameters that are reported carry both kinds of interval
    for name in ("pos_q0", "pos_QN"):
        p = d["parameters"][name]
        assert {"ci68", "ci95", "profile_ci68", "profile_ci95", "profile_parabolic"} <= set(p)
        assert p["profile_ci95"] == prof["intervals"][name]["ci95"]
        assert p["profile_parabolic"] == (name not in prof["not_parabolic"])
    assert "profile_ci95" not in d["parameters"]["pos_q1"]     # reported, not profiled
    err = res.stderr.splitlines()
    side = [ln for ln in err if ln.startswith("pos_q0 ")]
    assert len(side) == 2 and all("profile [" in ln and "Laplace [" in ln for ln in side)
    lo, hi = prof["intervals"]["pos_q0"]["ci95"]
    assert f"{lo:.5g}" in side[1] and f"{hi:.5g}" in side[1]
    lap = d["parameters"]["pos_q0"]["ci95"]
    assert f"{lap[0]:.5g}" in side[1] and f"{lap[1]:.5g}" in side[1]
    assert not [ln for ln in err if ln.startswith("pos_QN ")]   # parabolic: not shown


@pytest.mark.parametrize(("args", "expect"), [
    (["--intervals", "bootstrap"], "'--intervals'"),
    (["--profile", "pos_q0"], "--profile: goes with --intervals profile"),
    (["--intervals", "profile", "--profile", "pos_q1"],
     "--profile: 'pos_q1': not a fitted parameter that can be profiled (those: pos_q0, pos_c"),
])
def test_bad_intervals_options_are_one_clear_line(tmp_path, args, expect):
    out = tmp_path / "fit.json"
    res = CliRunner().invoke(cli, ["identify", "hysteresis", str(REC), "--element", str(START),
                                   "--output", str(out), "--starts", "1", *args])
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and expect in lines[0], lines
    assert "Traceback" not in res.output and not out.exists()
