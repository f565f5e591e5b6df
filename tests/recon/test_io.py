"""File boundary: units converted on read, atomic writes, errors naming file, row, column."""
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from models.errors import InputError
from recon.io import atomic_path, load_toml, read_table, write_json, write_table
from models.units import to_si


def test_csv_headers_with_units_are_converted_to_si(tmp_path):
    path = tmp_path / "rec.csv"
    path.write_text("q[mm],force[kN],angle[deg]\n1.5,2,90\n-3,0.5,-45\n")
    frame, units = read_table(path, {"q": "m", "force": "N", "angle": "rad"})
    assert units == {"q": "mm", "force": "kN", "angle": "deg"}
    np.testing.assert_allclose(frame["q"], [1.5e-3, -3e-3])
    np.testing.assert_allclose(frame["force"], [2000.0, 500.0])
    np.testing.assert_allclose(frame["angle"], [np.pi / 2, -np.pi / 4])


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_round_trip_keeps_values_and_units(tmp_path, suffix):
    path = tmp_path / f"t{suffix}"
    data = pd.DataFrame({"t": [0.0, 0.1, 0.2], "stroke": [0.0, 0.01, np.nan]})
    write_table(data, path, {"t": "s", "stroke": "m"})
    back, units = read_table(path, {"t": "s", "stroke": "m"})
    assert units == {"t": "s", "stroke": "m"}
    np.testing.assert_array_equal(back["stroke"].to_numpy(), data["stroke"].to_numpy())


def test_parquet_unit_metadata_is_converted(tmp_path):
    path = tmp_path / "t.parquet"
    write_table(pd.DataFrame({"t": [0.0, 1.0], "stroke": [10.0, 20.0]}), path,
                {"t": "ms", "stroke": "mm"})
    frame, _ = read_table(path, {"t": "s", "stroke": "m"})
    np.testing.assert_allclose(frame["t"], [0.0, 1e-3])
    np.testing.assert_allclose(frame["stroke"], [0.01, 0.02])


def test_incompatible_unit_names_file_and_column(tmp_path):
    path = tmp_path / "rec.csv"
    path.write_text("q[kg],force[N]\n1,2\n")
    with pytest.raises(InputError) as err:
        read_table(path, {"q": "m", "force": "N"})
    assert str(err.value) == f"{path}: 'q': unit 'kg' is not compatible with 'm'"


@pytest.mark.parametrize("unit,expected,factor", [
    ("deg", "rad", np.pi / 180), ("mrad", "rad", 1e-3), ("deg/s", "rad/s", np.pi / 180),
    ("rpm", "rad/s", 2 * np.pi / 60), ("N*m/deg", "N*m/rad", 180 / np.pi),
    ("%", "rad", None), ("Hz", "rad/s", None), ("1/s", "rad/s", None), ("N*m", "N*m/rad", None),
    ("%", "1", 0.01)])
def test_angles_are_counted_though_pint_takes_them_as_dimensionless(unit, expected, factor):
    """pint converts "%" to "rad" (x 0.01) and "Hz" to "rad/s" (x 1): both refused, naming
    the angle expected; units that name their angles convert."""
    if factor is None:
        with pytest.raises(InputError, match=re.escape(f"unit '{unit}' is not compatible")
                           + ".*angle"):
            to_si(1.0, unit, expected, key="gyro")
    else:
        assert to_si(1.0, unit, expected) == pytest.approx(factor, rel=1e-12)


def test_an_angle_column_labelled_percent_is_refused(tmp_path):
    path = tmp_path / "rec.csv"
    path.write_text("t[s],gimbal_pitch[%]\n0,2\n1,3\n")
    with pytest.raises(InputError) as err:
        read_table(path, {"t": "s", "gimbal_pitch": "rad"})
    assert "'gimbal_pitch'" in str(err.value) and "angle" in str(err.value)


def test_unknown_unit(tmp_path):
    path = tmp_path / "rec.csv"
    path.write_text("q[furlongz],force[N]\n1,2\n")
    with pytest.raises(InputError, match="unknown unit 'furlongz'"):
        read_table(path, {"q": "m"})


def test_non_number_names_row_and_column(tmp_path):
    path = tmp_path / "rec.csv"
    path.write_text("q,force\n1,2\n3,abc\n")
    with pytest.raises(InputError) as err:
        read_table(path)
    assert err.value.row == 2 and err.value.key == "force"


def test_missing_required_column_and_empty_and_missing_file(tmp_path):
    path = tmp_path / "rec.csv"
    path.write_text("q\n1\n")
    with pytest.raises(InputError, match="missing column"):
        read_table(path, required=("q", "force"))
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(InputError, match="empty"):
        read_table(empty)
    with pytest.raises(InputError, match="no such file"):
        read_table(tmp_path / "nope.parquet")


def test_truncated_parquet_is_an_input_error(tmp_path):
    path = tmp_path / "t.parquet"
    write_table(pd.DataFrame({"t": np.arange(100.0)}), path)
    path.write_bytes(path.read_bytes()[:50])
    with pytest.raises(InputError, match="not a readable Parquet"):
        read_table(path)


def test_atomic_path_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "out.json"
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("interrupted")
    assert list(tmp_path.iterdir()) == []
    write_json({"a": np.float64(1.5), "b": np.arange(2), "c": float("nan")}, target)
    assert target.read_text() == '{\n  "a": 1.5,\n  "b": [\n    0,\n    1\n  ],\n  "c": null\n}\n'


def test_toml_errors_name_the_file(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("a = [1,\n")
    with pytest.raises(InputError, match="invalid TOML") as err:
        load_toml(bad)
    assert err.value.source == str(bad)


def test_to_si_scalar():
    assert to_si(180.0, "deg", "rad") == pytest.approx(np.pi)
    assert to_si(1.0, "deg/s", "rad/s") == pytest.approx(np.pi / 180)


def test_columns_without_expected_unit_go_to_si_base_units(tmp_path):
    path = tmp_path / "rec.csv"
    path.write_text("t[ms],stroke[mm],flag\n0,5,1\n10,6,0\n")
    frame, _ = read_table(path)
    np.testing.assert_allclose(frame["t"], [0.0, 0.01])
    np.testing.assert_allclose(frame["stroke"], [0.005, 0.006])
    np.testing.assert_allclose(frame["flag"], [1.0, 0.0])


def test_column_without_unit_is_taken_as_si(tmp_path):
    path = tmp_path / "rec.csv"
    path.write_text("t,u\n0,0.5\n1,0.25\n")
    frame, units = read_table(path, {"t": "s", "u": "1"})
    assert units == {"t": None, "u": None}
    np.testing.assert_allclose(frame["u"], [0.5, 0.25])


def test_versions_name_the_source_commit_in_a_git_checkout():
    import subprocess

    import arviz  # noqa: F401  (versions() names the libraries loaded, as a run's are)

    from identification.provenance import versions

    root = Path(__file__).resolve().parents[2]
    v = versions()
    assert v["numpy"] == np.__version__ and v["arviz"] != "not installed"
    if not (root / ".git").exists():
        pytest.skip("not a git checkout")
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    assert v["dockrecon_source"].split("+")[0] == head[:12]
