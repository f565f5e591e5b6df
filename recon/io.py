"""File boundary of dockrecon: TOML configurations, tables (CSV / Parquet) with units, JSON
results, atomic writes and provenance.

Everything that opens a file goes through here (or through :mod:`recon.telemetry`, which builds
on it). Units are converted to SI on read and from SI on write, with pint, and nowhere else.

Writes never leave a half-written file that looks whole: they go to a temporary name in the
same directory and are renamed into place (:func:`atomic_path`).
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import re
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from models.errors import DataError, InputError, is_no_space, no_space
from models.units import dimensionless, to_si

__all__ = [
    "atomic_path",
    "load_toml",
    "read_table",
    "write_table",
    "write_json",
    "read_json",
    "parse_header",
]

_HEADER = re.compile(r"^\s*(?P<name>[^\[\]]+?)\s*(?:\[(?P<unit>[^\[\]]*)\])?\s*$")


# --------------------------------------------------------------------------------------------
# atomic writes
# --------------------------------------------------------------------------------------------
@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` if the block succeeds.

    The temporary file is removed when the block raises, so an interrupted write leaves either
    the previous file or nothing.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        try:
            yield tmp
            with contextlib.suppress(OSError):
                fd = os.open(tmp, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
            os.replace(tmp, path)
        except Exception as exc:
            if is_no_space(exc):
                raise no_space(path) from None
            raise
    finally:
        if tmp.exists():
            tmp.unlink()


def parse_header(header: str) -> tuple[str, str | None]:
    """Split a CSV header ``"stroke[mm]"`` into ``("stroke", "mm")``; no brackets: unit None."""
    m = _HEADER.match(str(header))
    if not m:
        return str(header).strip(), None
    return m.group("name"), m.group("unit")


# --------------------------------------------------------------------------------------------
# TOML
# --------------------------------------------------------------------------------------------
def load_toml(path: str | os.PathLike) -> dict[str, Any]:
    """Read a TOML file; a missing file or a syntax error is an :class:`InputError` naming it."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise InputError("no such file", source=str(path)) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a TOML file", source=str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"invalid TOML: {exc}", source=str(path)) from None
    except UnicodeDecodeError:
        raise InputError("not a text (UTF-8) TOML file", source=str(path)) from None


# --------------------------------------------------------------------------------------------
# tables
# --------------------------------------------------------------------------------------------
def read_table(path: str | os.PathLike, units: Mapping[str, str | None] | None = None, *,
               required: tuple[str, ...] = (), allow_nan: bool = True, min_rows: int = 1,
               increasing: str | None = None) -> tuple[Any, dict[str, str | None]]:
    """Read a CSV or Parquet table and convert known columns to SI.

    Units come from CSV headers ``name[unit]`` or from the Parquet field metadata key ``unit``.
    A column without a unit is taken to be in SI already.

    Parameters
    ----------
    path
        ``.csv`` or ``.parquet`` file.
    units
        Expected SI unit per column name (``{"q": "m", "force": "N"}``); listed columns present
        in the file are converted to it. Other columns are converted to pint base units.
    required
        Columns that must be present.
    allow_nan
        When False, a NaN or infinite value is an error naming its row and column.
    min_rows
        Fewest rows of a usable table.
    increasing
        A column (time) that must increase strictly from row to row.

    Every column named in :data:`models.limits.COLUMN_RANGES` must lie within its physical
    magnitude (in SI, after the unit conversion).

    Raises
    ------
    InputError
        The path is wrong: no such file, a directory, an unknown suffix (exit 2).
    DataError
        The file is there but its content cannot be read or trusted: empty, not the format
        its suffix says, a column missing, a value not a number, an unknown or wrong unit
        (exit 65, as :func:`recon.telemetry.validate` reports the same file).

    Returns
    -------
    frame : pandas.DataFrame
        Columns named without units, float64 values in SI.
    file_units : dict
        The unit each column had in the file (None where it had none).
    """
    import pandas as pd

    path = Path(path)
    src = str(path)
    if not path.exists():
        raise InputError("no such file", source=src)
    if path.is_dir():
        raise InputError("is a directory, expected a CSV or Parquet file", source=src)
    if path.stat().st_size == 0:
        raise DataError("file is empty", source=src)
    suffix = path.suffix.lower()
    file_units: dict[str, str | None] = {}
    if suffix in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        try:
            pfile = pq.ParquetFile(path)
        except Exception as exc:
            raise DataError(f"not a readable Parquet file ({exc.__class__.__name__})",
                             source=src) from None
        with pfile:
            seen_names: set[str] = set()
            for name in pfile.schema_arrow.names:   # Arrow allows a name twice, pandas not
                if name in seen_names:
                    raise DataError("column appears twice", source=src, key=name)
                seen_names.add(name)
            try:
                table = pfile.read()
            except Exception as exc:
                raise DataError(f"not a readable Parquet file ({exc.__class__.__name__})",
                                 source=src) from None
        import pyarrow.types as pat

        for field in table.schema:
            if field.name in file_units:
                raise DataError("column appears twice", source=src, key=field.name)
            if (pat.is_timestamp(field.type) or pat.is_date(field.type)
                    or pat.is_time(field.type) or pat.is_duration(field.type)):
                # pandas would read it as integer nanoseconds since 1970
                raise DataError(f"a date-time column ({field.type}): expected numbers (seconds "
                                "for a time column)", source=src, key=field.name)
            meta = field.metadata or {}
            unit = meta.get(b"unit")
            file_units[field.name] = unit.decode() if unit is not None else None
        frame = table.to_pandas()
    elif suffix in (".csv", ".txt"):
        try:
            frame = pd.read_csv(path, comment="#", skipinitialspace=True)
        except pd.errors.EmptyDataError:
            raise DataError("file is empty", source=src) from None
        except (pd.errors.ParserError, UnicodeDecodeError) as exc:
            raise DataError(f"not a readable CSV file: {exc}", source=src) from None
        # pandas renames a repeated header ("x", "x.1"): the duplicates are found on the
        # header line itself
        seen: set[str] = set()
        for raw in _header_names(path):
            name = parse_header(raw)[0]
            if name in seen:
                raise DataError("column appears twice", source=src, key=name)
            seen.add(name)
        renamed = {}
        for col in frame.columns:
            name, unit = parse_header(col)
            file_units[name] = unit
            renamed[col] = name
        frame = frame.rename(columns=renamed)
        with open(path, "rb") as fh:   # a cut inside the last row can still parse as numbers
            fh.seek(0, os.SEEK_END)
            if fh.tell() > 0:
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) not in (b"\n", b"\r"):
                    raise DataError("the last line has no line end: the file looks cut off "
                                    "(truncated?); if it is complete, end its last line with "
                                    "a line break", source=src, row=len(frame))
    else:
        raise InputError(f"unknown table format '{suffix}' (expected .csv or .parquet)", source=src)

    if len(frame) == 0:
        raise DataError("table has no rows", source=src)
    for name in required:
        if name not in frame.columns:
            have = ", ".join(map(str, frame.columns))
            raise DataError(f"missing column (have: {have})", source=src, key=name)

    expected = dict(units or {})
    out = {}
    for name in frame.columns:
        col = frame[name]
        values = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
        bad = np.isnan(values) & col.notna().to_numpy()
        if bad.any():
            row = int(np.flatnonzero(bad)[0]) + 1
            raise DataError(f"not a number: {col.iloc[row - 1]!r}", source=src, key=name, row=row)
        if not allow_nan:
            nonfinite = ~np.isfinite(values)
            if nonfinite.any():
                row = int(np.flatnonzero(nonfinite)[0]) + 1
                raise DataError("missing or non-finite value", source=src, key=name, row=row)
        unit = file_units.get(name)
        if unit is None:
            pass  # no unit in the file: the column is taken to be in SI already
        else:
            try:
                if name in expected:
                    values = to_si(values, unit, expected[name], source=src, key=name)
                elif not dimensionless(unit):
                    values = to_si(values, unit, None, source=src, key=name)
            except InputError as exc:     # the file's unit: its content, as the rest
                raise DataError(exc.what, source=src, key=name) from None
        out[name] = values
    from models.limits import COLUMN_RANGES

    if len(frame) < min_rows:
        raise DataError(f"{len(frame)} row(s): at least {min_rows} needed", source=src)
    for name, values in out.items():
        if name in COLUMN_RANGES:
            top, unit = COLUMN_RANGES[name]
            big = np.abs(values) > top
            if big.any():
                row = int(np.flatnonzero(big)[0]) + 1
                raise DataError(f"{values[row - 1]:g} {unit} is beyond the physical range of "
                                f"this column (|value| <= {top:g} {unit}; a unit in the header "
                                "missing or wrong?)", source=src, key=name, row=row)
    if increasing is not None and increasing in out:
        v = out[increasing]
        bad = np.flatnonzero(~(np.diff(v) > 0))
        if bad.size:
            raise DataError(f"must increase strictly ({v[bad[0] + 1]:g} after {v[bad[0]]:g})",
                            source=src, key=increasing, row=int(bad[0]) + 2)
    return pd.DataFrame(out), file_units


def _header_names(path: Path) -> list[str]:
    """The column names of a CSV file's header line (the first line that is not blank or a
    ``#`` comment), as written."""
    import csv

    with open(path, newline="", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            text = line.split("#", 1)[0].strip()
            if text:
                return [c.strip() for c in next(csv.reader([text]))]
    return []


def write_table(frame: Any, path: str | os.PathLike, units: Mapping[str, str | None] | None = None) -> Path:
    """Write a table atomically: Parquet with the field metadata key ``unit``, or CSV with
    headers ``name[unit]``. Values are written as given (SI)."""
    import pandas as pd

    path = Path(path)
    units = dict(units or {})
    frame = pd.DataFrame(frame)
    suffix = path.suffix.lower()
    with atomic_path(path) as tmp:
        if suffix in (".parquet", ".pq"):
            import pyarrow as pa
            import pyarrow.parquet as pq

            table = pa.Table.from_pandas(frame, preserve_index=False)
            fields = []
            for field in table.schema:
                unit = units.get(field.name)
                fields.append(field.with_metadata({"unit": unit}) if unit is not None else field)
            table = table.cast(pa.schema(fields))
            pq.write_table(table, tmp)
        elif suffix in (".csv", ".txt"):
            header = [f"{c}[{units[c]}]" if units.get(c) else str(c) for c in frame.columns]
            frame.to_csv(tmp, index=False, header=header, float_format="%.10g")
        else:
            raise InputError(f"unknown table format '{suffix}' (expected .csv or .parquet)",
                             source=str(path))
    return path


# --------------------------------------------------------------------------------------------
# JSON
# --------------------------------------------------------------------------------------------
def _jsonable(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [_jsonable(v) for v in obj.tolist()]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        f = float(obj)
        return f if math.isfinite(f) else None
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, Path):
        return str(obj)
    return obj


def write_json(obj: Any, path: str | os.PathLike) -> Path:
    """Write ``obj`` as indented JSON atomically; numpy scalars and arrays become plain JSON,
    non-finite floats become ``null``."""
    path = Path(path)
    text = json.dumps(_jsonable(obj), indent=2, sort_keys=False, allow_nan=False)
    with atomic_path(path) as tmp:
        tmp.write_text(text + "\n", encoding="utf-8")
    return path


def read_json(path: str | os.PathLike) -> Any:
    """Read a JSON file; errors name the file."""
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("no such file", source=str(path)) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"invalid JSON: {exc}", source=str(path)) from None
