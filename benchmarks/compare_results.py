"""Two runs of the same reconstructions compared bit for bit: for each named flight, every value
of ``result.json`` (but the versions and the wall times), every column of its Parquet tables
and every dataset of ``posterior.nc``. What "behaviour unchanged" means for a change that
must not move a result (a refactoring, a move of code).

    python benchmarks/compare_results.py BEFORE_DIR AFTER_DIR FLIGHT [FLIGHT ...]

where ``BEFORE_DIR/FLIGHT`` and ``AFTER_DIR/FLIGHT`` are result directories of
``dockrecon reconstruct`` with the same inputs and seed. Prints each flight's differences and
``ALL IDENTICAL`` or ``DIFFERENCES`` last; exits 1 on a difference.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

#: result.json keys whose values differ between two runs of the same computation
VOLATILE = {"versions", "timing", "wall_s"}


def compare_json(a, b, path: str, out: list[str]) -> None:
    """Append to ``out`` every place where ``a`` and ``b`` differ (NaN equals NaN)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k in VOLATILE:
                continue
            if k not in a or k not in b:
                out.append(f"{path}.{k}: only in {'after' if k in b else 'before'}")
            else:
                compare_json(a[k], b[k], f"{path}.{k}", out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: length {len(a)} against {len(b)}")
            return
        for i, (x, y) in enumerate(zip(a, b)):
            compare_json(x, y, f"{path}[{i}]", out)
    elif not (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)):
        if a != b:
            out.append(f"{path}: {a!r} against {b!r}")


def compare_tables(a: Path, b: Path, out: list[str]) -> None:
    ta, tb = pq.read_table(a), pq.read_table(b)
    if ta.column_names != tb.column_names:
        out.append(f"{a.name}: other columns")
        return
    for c in ta.column_names:
        x = ta[c].to_numpy(zero_copy_only=False)
        y = tb[c].to_numpy(zero_copy_only=False)
        if not np.array_equal(x, y, equal_nan=True):
            out.append(f"{a.name}: column {c} differs")


def compare_hdf5(a: Path, b: Path, out: list[str]) -> None:
    import h5py

    with h5py.File(a) as ha, h5py.File(b) as hb:
        names: list[str] = []
        ha.visititems(lambda name, obj: names.append(name)
                      if isinstance(obj, h5py.Dataset) else None)
        for name in names:
            if name not in hb or not np.array_equal(ha[name][()], hb[name][()]):
                out.append(f"{a.name}: {name} differs")


def compare_flight(before: Path, after: Path) -> list[str]:
    out: list[str] = []
    compare_json(json.loads((before / "result.json").read_text()),
                 json.loads((after / "result.json").read_text()), "result", out)
    files = {p.name for p in before.iterdir()} | {p.name for p in after.iterdir()}
    for name in sorted(files):
        if not ((before / name).exists() and (after / name).exists()):
            if name.endswith((".json", ".parquet", ".nc")):
                out.append(f"{name}: only in one run")
        elif name.endswith(".parquet"):
            compare_tables(before / name, after / name, out)
        elif name == "posterior.nc":
            compare_hdf5(before / name, after / name, out)
    return out


def main(before: str, after: str, flights: list[str]) -> int:
    same = True
    for name in flights:
        out = compare_flight(Path(before) / name, Path(after) / name)
        print(f"{name}: {'IDENTICAL' if not out else f'{len(out)} differences'}")
        for line in out[:15]:
            print("   ", line)
        same &= not out
    print("ALL IDENTICAL" if same else "DIFFERENCES")
    return 0 if same else 1


if __name__ == "__main__":
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
