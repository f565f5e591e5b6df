"""The result of a reconstruction as a table for people: status, then each parameter's median
and 95 % interval in the units its run configuration stated (``dockrecon reconstruct`` prints
it at the end, ``dockrecon show`` again), or as a JSON document for machines (SI)."""
from __future__ import annotations

import json
import math
from pathlib import Path
from collections.abc import Mapping
from typing import Any

from models.errors import InputError

__all__ = ["read_result", "display_units", "parameter_table", "machine_summary"]


def read_result(directory: str | Path) -> dict[str, Any]:
    """``DIR/result.json`` (or that file named directly); an :class:`InputError` naming the
    path when it is not a reconstruction's result."""
    path = Path(directory)
    if path.is_dir():
        path = path / "result.json"
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise InputError("no result.json here (not a result directory, or its run did not "
                         "finish)", source=str(path)) from None
    except (OSError, ValueError) as exc:
        raise InputError(f"not a result file ({exc})", source=str(path)) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("parameters"), dict):
        raise InputError("not a reconstruction's result: no parameters", source=str(path))
    return doc


def display_units(doc: Mapping[str, Any]) -> dict[str, str]:
    """Each parameter's unit as its run configuration stated it (``[parameters.NAME] unit``,
    read from the configuration file the result names), else the result's SI unit."""
    units = {n: str(p.get("unit") or "") for n, p in doc["parameters"].items()}
    config = (doc.get("settings") or {}).get("config")
    if not config:
        return units
    try:
        from recon.io import load_toml

        table = load_toml(config).get("parameters", {})
    except Exception:            # the configuration moved or changed: SI, as stored
        return units
    for name in units:
        u = (table.get(name) or {}).get("unit") if isinstance(table.get(name), dict) else None
        if isinstance(u, str) and u:
            units[name] = u
    return units


def _convert(value: float, si: str, unit: str) -> float:
    from models.units import from_si

    if not unit or unit == si:
        return float(value)
    return float(from_si(value, si, unit))


def _num(x: float) -> str:
    if x is None or not math.isfinite(x):
        return "nan"
    return f"{x:.4g}"


def parameter_table(doc: Mapping[str, Any]) -> str:
    """The status line and a table of every free parameter: median, 95 % interval, unit (the
    run configuration's), and the method the intervals came from."""
    units = display_units(doc)
    fixed = {n for n, s in ((doc.get("settings") or {}).get("parameters") or {}).items()
             if isinstance(s, Mapping) and s.get("fixed")}
    rows = [("parameter", "median", "95 % interval", "unit")]
    for name, p in doc["parameters"].items():
        if p.get("median") is None:
            continue
        si = str(p.get("unit") or "")
        u = units.get(name, si)
        try:
            med = _convert(p["median"], si, u)
            lo, hi = (_convert(v, si, u) for v in p["ci95"])
        except Exception:        # a unit the registry cannot convert: SI
            u, med, (lo, hi) = si, p["median"], p["ci95"]
        rows.append((name, _num(med), "fixed" if name in fixed else
                     f"[{_num(lo)}, {_num(hi)}]", u))
    width = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = [f"status {doc.get('status', '?')}: {doc.get('status_reason', '')}"]
    method = (doc.get("diagnostics") or {}).get("method")
    if method:
        lines.append(f"intervals from {method}")
    for r in rows:
        lines.append(f"{r[0]:<{width[0]}}  {r[1]:>{width[1]}}  {r[2]:<{width[2]}}  {r[3]}"
                     .rstrip())
    return "\n".join(lines)


def machine_summary(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The status and each parameter's map, median, 68 and 95 % intervals and unit, SI (as
    result.json holds them): ``dockrecon show --json``."""
    return {"status": doc.get("status"), "status_reason": doc.get("status_reason"),
            "method": (doc.get("diagnostics") or {}).get("method"),
            "parameters": {n: {k: p.get(k) for k in ("map", "median", "ci68", "ci95", "unit")}
                           for n, p in doc["parameters"].items()}}
