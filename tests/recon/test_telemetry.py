"""Telemetry: units to SI, every validation finding with row and column, exit codes."""
import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from models.errors import DataError, InputError
from recon.app.cli import cli
from recon.io import write_table
from recon.telemetry import load_telemetry, read_telemetry


def _good_frame(n=50):
    t = np.arange(n) * 0.02
    stroke = np.where(np.arange(n) % 2 == 0, 100.0 * np.sin(t), np.nan)  # 25 Hz of 50 Hz rows
    return pd.DataFrame({"t": t, "stroke": stroke, "gimbal_pitch": 2.0 * t,
                         "contact": (t > 0.3).astype(float), "active_rate_x": 0.5 + 0 * t})


def _write(tmp_path, frame, units, name="tel.parquet"):
    path = tmp_path / name
    write_table(frame, path, units)
    return path


UNITS = {"t": "s", "stroke": "mm", "gimbal_pitch": "deg", "contact": "", "active_rate_x": "deg/s"}


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_good_telemetry_is_converted_to_si_and_usable(tmp_path, suffix):
    frame = _good_frame()
    path = _write(tmp_path, frame, UNITS, f"tel{suffix}")
    tel, report = read_telemetry(path)
    assert report.usable and report.findings == ()
    # conversion factors exact: mm -> m, deg -> rad (tolerance: float round-off of the CSV
    # %.10g format, 1e-9 relative)
    np.testing.assert_allclose(tel.channels["stroke"], frame["stroke"] * 1e-3, rtol=1e-9)
    np.testing.assert_allclose(tel.channels["gimbal_pitch"], np.deg2rad(frame["gimbal_pitch"]),
                               rtol=1e-9)
    np.testing.assert_allclose(tel.channels["active_rate_x"], np.deg2rad(0.5), rtol=1e-9)
    ts, ys = tel.samples("stroke")
    assert ts.size == 25 and np.all(np.isfinite(ys))


def _codes(report):
    return {(f.severity, f.code, f.column, f.row) for f in report.findings}


def test_each_defect_is_reported_with_row_and_column(tmp_path):
    frame = _good_frame()
    frame.loc[10, "t"] = frame.loc[9, "t"]            # duplicate (row 11)
    frame.loc[20, "t"] = frame.loc[18, "t"] - 0.01    # backwards (row 21)
    frame.loc[30, "gimbal_pitch"] = np.inf            # non-finite (row 31)
    frame["mystery"] = 1.0                            # unknown channel
    frame["latch_1"] = np.nan                         # all NaN
    frame.loc[5, "contact"] = 0.5                     # not a flag (row 6)
    path = _write(tmp_path, frame, UNITS)
    _, report = read_telemetry(path)
    got = _codes(report)
    assert ("error", "duplicate_time", "t", 11) in got
    assert ("error", "backwards_time", "t", 21) in got
    assert ("error", "nonfinite", "gimbal_pitch", 31) in got
    assert ("warning", "unknown_channel", "mystery", None) in got
    assert ("error", "all_nan", "latch_1", None) in got
    assert ("error", "not_binary", "contact", 6) in got
    assert not report.usable
    with pytest.raises(DataError) as exc:
        report.raise_if_unusable()
    assert exc.value.exit_code == 65 and "more errors" in str(exc.value)


def test_gap_and_saturation_are_warnings(tmp_path):
    frame = _good_frame(200)
    frame.loc[60:120, "stroke"] = np.nan              # 1.2 s without a stroke sample
    p = np.sin(frame["t"].to_numpy() * 3)
    frame["gimbal_pitch"] = np.minimum(p, 0.8)        # clipped at 0.8: flat interior runs
    _, report = read_telemetry(_write(tmp_path, frame, UNITS), max_gap=0.5)
    got = _codes(report)
    assert ("warning", "gap", "stroke", 123) in got   # index 122 (row 123): next sample
    assert any(g[:3] == ("warning", "saturation", "gimbal_pitch") for g in got)
    assert report.usable


def test_warnings_are_logged_once_each_with_the_level_as_their_only_severity(tmp_path,
                                                                           caplog):
    frame = _good_frame(200)
    frame.loc[60:120, "stroke"] = np.nan
    path = _write(tmp_path, frame, UNITS)
    with caplog.at_level("WARNING", logger="dockrecon.telemetry"):
        load_telemetry(path, max_gap=0.5)
    lines = [r.getMessage() for r in caplog.records if r.name == "dockrecon.telemetry"]
    assert lines and all(r.levelname == "WARNING" for r in caplog.records)
    # "WARNING dockrecon.telemetry: <file>: row 123, 'stroke': ...", not "...: warning: ..."
    assert any(m.startswith(f"{path}: row 123, 'stroke'") for m in lines), lines
    assert not any(m.startswith("warning") for m in lines)


def test_rest_at_start_is_not_saturation(tmp_path):
    frame = _good_frame()
    frame["gimbal_pitch"] = np.where(frame["t"] < 0.3, 0.0, frame["t"] - 0.3)
    _, report = read_telemetry(_write(tmp_path, frame, UNITS))
    assert report.findings == ()


def test_missing_t_and_wrong_units(tmp_path):
    frame = _good_frame().drop(columns="t")
    _, report = read_telemetry(_write(tmp_path, frame, UNITS))
    assert ("error", "missing_t", "t", None) in _codes(report)
    _, report = read_telemetry(_write(tmp_path, _good_frame(), {**UNITS, "stroke": "s"}))
    assert [(f.code, f.column) for f in report.errors] == [("unit", "stroke")]
    _, report = read_telemetry(_write(tmp_path, _good_frame(), {**UNITS, "stroke": "furlongz"}))
    assert [(f.code, f.column) for f in report.errors] == [("unit", "stroke")]


def test_empty_truncated_and_missing_files(tmp_path):
    empty = tmp_path / "e.csv"
    empty.write_text("")
    _, report = read_telemetry(empty)
    assert [f.code for f in report.errors] == ["empty"]
    good = _write(tmp_path, _good_frame(), UNITS)
    data = good.read_bytes()
    trunc = tmp_path / "trunc.parquet"
    trunc.write_bytes(data[: len(data) // 2])
    _, report = read_telemetry(trunc)
    assert [f.code for f in report.errors] == ["unreadable"]
    with pytest.raises(DataError):
        load_telemetry(trunc)
    with pytest.raises(InputError) as exc:
        read_telemetry(tmp_path / "nope.parquet")
    assert exc.value.exit_code == 2


def test_cli_validate_exit_codes_and_json(tmp_path):
    runner = CliRunner()
    good = _write(tmp_path, _good_frame(), UNITS)
    r = runner.invoke(cli, ["validate", str(good)])
    assert r.exit_code == 0, r.output
    assert "usable" in r.output
    frame = _good_frame()
    frame.loc[20, "t"] = 0.0
    bad = _write(tmp_path, frame, UNITS, "bad.csv")
    r = runner.invoke(cli, ["validate", str(bad), "--json"])
    assert r.exit_code == 65
    doc = json.loads(r.stdout)
    assert doc["usable"] is False and doc["findings"][0]["row"] == 21
    r = runner.invoke(cli, ["validate", str(tmp_path / "missing.csv")])
    assert r.exit_code == 2 and "no such file" in r.output and "Traceback" not in r.output


def test_files_of_one_record_must_share_a_clock(tmp_path, caplog):
    """Files on separate time bases merge when their spans overlap; a gyro file whose clock is
    1000 s off (no overlap) is refused naming it and 't' (it would stretch the fitted span
    over the gap), and one that overlaps less than half the shorter span is a warning."""
    import logging

    t = np.arange(0.0, 20.0, 0.01)
    mech = pd.DataFrame({"t": t, "stroke": 0.01 * np.sin(t), "contact": (t > 5).astype(float)})
    tg = np.arange(0.003, 20.0, 0.1)
    gyro = pd.DataFrame({"t": tg, "active_rate_x": 0.001 * np.cos(tg)})
    a = write_table(mech, tmp_path / "mech.parquet", {"t": "s", "stroke": "m", "contact": ""})
    b = write_table(gyro, tmp_path / "gyro.parquet", {"t": "s", "active_rate_x": "rad/s"})
    merged = load_telemetry([a, b])
    assert set(merged.channels) == {"stroke", "contact", "active_rate_x"}
    off = write_table(gyro.assign(t=tg + 1000.0), tmp_path / "gyro_off.parquet",
                      {"t": "s", "active_rate_x": "rad/s"})
    with pytest.raises(DataError) as e:
        load_telemetry([a, off])
    assert "gyro_off.parquet" in str(e.value) and "'t'" in str(e.value)
    assert "do not overlap" in str(e.value)
    late = write_table(gyro.assign(t=tg + 15.0), tmp_path / "gyro_late.parquet",
                       {"t": "s", "active_rate_x": "rad/s"})
    with caplog.at_level(logging.WARNING, logger="dockrecon.telemetry"):
        load_telemetry([a, late])
    assert "gyro_late.parquet" in caplog.text and "one clock" in caplog.text


def test_flags_in_an_order_no_docking_makes_are_warnings():
    """Capture before the first contact, and latches that close while the capture flag stays
    off, are warnings naming the flag and row; the shipped records of both units (the
    peripheral's latches close just before its capture) raise none."""
    from recon.telemetry import Telemetry, validate
    from telemetry_samples import SAMPLES_DIR

    t = np.arange(0.0, 10.0, 0.01)
    flags = {"stroke": 0.01 * np.sin(t), "contact": (t > 2).astype(float),
             "capture": (t > 1).astype(float), "latch_1": (t > 3).astype(float)}
    codes = {f.code: f for f in validate(Telemetry.from_arrays(t, flags)).findings}
    assert codes["capture_before_contact"].column == "capture"
    assert codes["capture_before_contact"].row == 102   # t = 1.01 s, 1-based
    flags["capture"] = np.zeros_like(t)
    codes = {f.code: f for f in validate(Telemetry.from_arrays(t, flags)).findings}
    assert codes["latch_without_capture"].column == "latch_1"
    assert "capture_before_contact" not in codes
    flags["capture"] = (t > 3.5).astype(float)
    codes = {f.code for f in validate(Telemetry.from_arrays(t, flags)).findings}
    assert not codes & {"capture_before_contact", "latch_without_capture"}
    for rec in ("nominal", "misaligned", "slow", "realistic/nominal", "peripheral/nominal",
                "peripheral/low_energy"):
        tel, report = read_telemetry(SAMPLES_DIR / "flights" / f"{rec}.parquet")
        codes = {f.code for f in report.findings}
        assert not codes & {"capture_before_contact", "latch_without_capture"}, rec
