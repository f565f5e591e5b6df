"""Declared schemas of the input TOML files: one declaration per key.

A :class:`Key` declares one key of a table (type, SI unit, default, bounds, help); a
:class:`Table` a table of keys and subtables. The readers take their key sets and bounds
from these declarations (:meth:`Table.names`, :meth:`Key.limits`); the configuration
reference of the documentation is rendered from them (``docs/_ext/dockrecon_files.py``);
:func:`json_schema` exports them as a JSON Schema (draft 2020-12) that editors complete
and check TOML files with (``recon/schemas/*.schema.json``, ``dockrecon schema``).

Keys are written one a line, ``name | type | unit | default | bounds | help``
(:func:`keys`):

type
    ``number``, ``integer``, ``boolean``, ``string``, ``choice:A,B`` (one of the strings),
    ``vector:N`` (N numbers; ``vector``: any number of them), ``rows:N`` (a list of rows of
    N numbers; ``rows``: a matrix), ``strings`` (a list of strings), ``files`` (a string or a list of strings:
    one file or several), ``inertia``
    (3 principal moments, 9 numbers or a 3x3 matrix), ``number/WORD`` (a number or the
    string WORD: ``number/record``, ``number/auto``), ``interval`` (a number or
    ``[lower, upper]``), ``table`` (a table its reader checks, e.g. a
    hysteresis element), ``table/WORD`` (such a table or the string WORD), ``boolean/A/B``
    (true, false or one of the strings).
unit
    SI unit, ``-`` for none.
default
    ``required``; ``-`` (optional, the reader derives the value: the help says how); or a
    Python literal (``0.0``, ``'linear'``, ``[0.0, 0.0, 0.0]``).
bounds
    ``-`` (none), ``>0``, ``>=0``, or an interval ``[lo, hi]``, ``(lo, hi]`` ...; a
    ``number`` key is also held to its row of the physical ranges
    (:data:`models.limits.RANGES`, by the key's name) unless the bounds end with ``~``
    (its reader does not apply them).
"""
from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Union

from models.limits import RANGES

__all__ = ["REQUIRED", "Key", "Table", "keys", "json_schema", "walk", "physical_range",
           "META", "BODY", "PASSIVE_BODY", "CONTACT", "THRUST", "INITIAL"]

#: the default of a key that must be given
REQUIRED = "required"

_JSON_SCHEMA = "https://json-schema.org/draft/2020-12/schema"


def physical_range(name: str) -> tuple[float, float] | None:
    """``(lowest, highest)`` of the row of :data:`models.limits.RANGES` that checks a key
    named ``name`` (signed rows: ``(-highest, highest)``), or None."""
    for pat, lo, hi, _unit, signed in RANGES:
        if re.search(pat, name):
            return (-hi, hi) if signed else (lo, hi)
    return None


@dataclass(frozen=True)
class Key:
    """One key of a table.

    Attributes
    ----------
    name
        The key.
    type
        See the module docstring.
    unit
        SI unit ("" for none).
    default
        The value a missing key takes, :data:`REQUIRED`, or None (optional; the reader
        derives it, as ``help`` says).
    minimum, maximum
        Declared bounds (None: unbounded) [unit]; ``exclusive_minimum`` /
        ``exclusive_maximum``: the bound itself is refused.
    physical
        A number also held to :data:`models.limits.RANGES` (by the key's name).
    help
        What the key means.
    """

    name: str
    type: str
    unit: str = ""
    default: Any = None
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    exclusive_maximum: bool = False
    physical: bool = True
    help: str = ""

    @property
    def required(self) -> bool:
        return isinstance(self.default, str) and self.default == REQUIRED

    @property
    def choices(self) -> tuple[str, ...]:
        """The strings a ``choice`` key takes (``number+record``: ``("record",)``)."""
        if self.type.startswith("choice:"):
            return tuple(self.type.split(":", 1)[1].split(","))
        if self.type.startswith(("number/", "table/", "boolean/")):
            return tuple(self.type.split("/")[1:])
        return ()

    @property
    def size(self) -> int | None:
        """N of ``vector:N`` and ``rows:N`` (None for ``vector``: any length)."""
        parts = self.type.split(":", 1)
        return int(parts[1]) if parts[0] in ("vector", "rows") and len(parts) == 2 else None

    def limits(self) -> tuple[float, bool, float, bool] | None:
        """``(lowest, exclusive?, highest, exclusive?)`` a number or integer key is held to:
        its declared bounds, narrowed by its physical range; None when unbounded."""
        if self.type.split("/")[0] not in ("number", "integer"):
            return None
        lo, lo_x = -math.inf, False
        hi, hi_x = math.inf, False
        if self.minimum is not None:
            lo, lo_x = self.minimum, self.exclusive_minimum
        if self.maximum is not None:
            hi, hi_x = self.maximum, self.exclusive_maximum
        phys = physical_range(self.name) if self.physical and self.type == "number" else None
        if phys is not None:
            if phys[0] > lo or (phys[0] == lo and not lo_x):
                lo, lo_x = phys[0], lo_x and phys[0] == lo
            if phys[1] < hi:
                hi, hi_x = phys[1], False
        if lo == -math.inf and hi == math.inf:
            return None
        return lo, lo_x, hi, hi_x

    def bounds_text(self) -> str:
        """The accepted values in words (for the documentation)."""
        if self.type.startswith("choice:"):
            return " | ".join(repr(c) for c in self.choices)
        lim = self.limits()
        kind = {"integer": "whole number", "vector": "numbers", "rows": "rows of numbers",
                "strings": "list of strings", "files": "a file or a list of files"}.get(
            self.type.split(":")[0], self.type.split(":")[0])
        if self.type.startswith("boolean/"):
            kind = "true, false or " + " or ".join(f'"{w}"' for w in self.choices)
        if self.type.startswith("table/"):
            kind = "a table or " + " or ".join(f'"{w}"' for w in self.choices)
        if self.type.startswith("number/"):
            kind = " or ".join(f'"{w}"' for w in self.choices) + " or a number"
        if self.size is not None:
            kind = (f"{self.size} numbers" if self.type.startswith("vector")
                    else f"list of [{self.size} numbers]")
        if self.type == "interval":
            kind = "a number or [lower, upper]"
        if self.type == "inertia":
            kind = "3 principal moments or a 3x3 matrix"
        if lim is None:
            return kind
        lo, lo_x, hi, hi_x = lim
        if lo == -math.inf:
            return f"{kind} {'<' if hi_x else '<='} {hi:g}"
        if hi == math.inf:
            return f"{kind} {'>' if lo_x else '>='} {lo:g}"
        return f"{kind} in {'(' if lo_x else '['}{lo:g}, {hi:g}{')' if hi_x else ']'}"

    def schema(self) -> dict[str, Any]:
        """The JSON Schema of the key's value."""
        base = self.type.split(":")[0]
        num: dict[str, Any] = {"type": "integer" if base == "integer" else "number"}
        if base.startswith("number/"):
            num = {"type": "number"}
        lim = self.limits()
        if lim is not None:
            lo, lo_x, hi, hi_x = lim
            if lo != -math.inf:
                num["exclusiveMinimum" if lo_x else "minimum"] = lo
            if hi != math.inf:
                num["exclusiveMaximum" if hi_x else "maximum"] = hi
        vec = {"type": "array", "items": {"type": "number"}}
        if base in ("number", "integer"):
            out = num
        elif base.startswith("number/"):
            out = {"anyOf": [{"enum": list(self.choices)}, num]}
        elif base == "boolean":
            out = {"type": "boolean"}
        elif base == "string":
            out = {"type": "string"}
        elif base == "choice":
            out = {"enum": list(self.choices)}
        elif base == "vector":
            out = (dict(vec) if self.size is None
                   else {**vec, "minItems": self.size, "maxItems": self.size})
        elif base == "strings":
            out = {"type": "array", "items": {"type": "string"}}
        elif base == "files":
            out = {"anyOf": [{"type": "string"},
                             {"type": "array", "items": {"type": "string"}, "minItems": 1}]}
        elif base == "rows":
            out = {"type": "array", "items": (dict(vec) if self.size is None else
                                              {**vec, "minItems": self.size,
                                               "maxItems": self.size})}
        elif base == "inertia":
            row3 = {**vec, "minItems": 3, "maxItems": 3}
            out = {"anyOf": [row3, {**vec, "minItems": 9, "maxItems": 9},
                             {"type": "array", "items": row3, "minItems": 3, "maxItems": 3}]}
        elif base == "interval":
            out = {"anyOf": [{"type": "number"}, {**vec, "minItems": 2, "maxItems": 2}]}
        elif base == "table":
            out = {"type": "object"}
        elif base.startswith("boolean/"):
            out = {"anyOf": [{"type": "boolean"}, {"enum": list(self.choices)}]}
        elif base.startswith("table/"):
            out = {"anyOf": [{"type": "object"}, {"enum": list(self.choices)}]}
        else:  # pragma: no cover - a declaration with a type this module does not know
            raise ValueError(f"unknown type {self.type!r} of key {self.name!r}")
        desc = f"[{self.unit}] {self.help}" if self.unit else self.help
        out["description"] = desc.strip()
        if self.default is not None and not self.required:
            out["default"] = self.default
        return out


@dataclass(frozen=True)
class Table:
    """A table of keys and subtables.

    ``item`` makes it a table of entries named by the user (``[parameters.NAME]``,
    ``[observation.channels.NAME]``, ``[envelope]``): each entry is ``item`` (a
    :class:`Table` or a :class:`Key`), ``item_name`` its placeholder in the documentation,
    ``entries`` the table's fixed keys beside them. ``source``: the table also takes a
    free-text ``source`` (where its values come from). ``array``: the document holds a list
    of such tables (``[[name]]``, an array of tables), each entry checked alike. ``word``: the
    string that may stand for the table (a hysteresis element's ``negative = "mirror"``)."""

    name: str
    help: str = ""
    entries: tuple[Union[Key, "Table"], ...] = ()
    required: bool = False
    source: bool = True
    item: Union[Key, "Table", None] = None
    item_name: str = "NAME"
    array: bool = False
    word: str = ""

    def __post_init__(self) -> None:
        if self.source and "source" not in {e.name for e in self.entries}:
            object.__setattr__(self, "entries", self.entries + (SOURCE,))

    def names(self) -> set[str]:
        """The keys and subtables the table takes (the user's names of ``item`` aside)."""
        return {e.name for e in self.entries}

    def order(self) -> tuple[str, ...]:
        """The names of :meth:`names` in declaration order (for messages that list them so)."""
        return tuple(e.name for e in self.entries)

    def __getitem__(self, name: str) -> Union[Key, "Table"]:
        for e in self.entries:
            if e.name == name:
                return e
        raise KeyError(name)

    def keys(self) -> tuple[Key, ...]:
        return tuple(e for e in self.entries if isinstance(e, Key))

    def tables(self) -> tuple["Table", ...]:
        return tuple(e for e in self.entries if isinstance(e, Table))

    def replace(self, **kw) -> "Table":
        """A copy with some attributes changed (``name``, ``help``, ``required``, or
        ``entries`` added with ``extra``)."""
        extra = tuple(kw.pop("extra", ()))
        d = dict(name=self.name, help=self.help, entries=self.entries + extra,
                 required=self.required, source=self.source, item=self.item,
                 item_name=self.item_name, array=self.array, word=self.word)
        d.update(kw)
        return Table(**d)

    def schema(self) -> dict[str, Any]:
        """The JSON Schema of the table."""
        props = {e.name: e.schema() for e in self.entries}
        out: dict[str, Any] = {"type": "object", "description": self.help,
                               "properties": props}
        req = [e.name for e in self.entries if e.required]
        if req:
            out["required"] = req
        out["additionalProperties"] = (False if self.item is None else self.item.schema())
        if self.array:
            return {"type": "array", "description": out.pop("description"), "items": out}
        if self.word:
            return {"description": out.pop("description"),
                    "anyOf": [out, {"enum": [self.word]}]}
        return out


#: the free-text provenance every scenario table may carry
SOURCE = Key("source", "string", help="where the table's values come from (free text)")


_INTERVAL = re.compile(r"([\[(])\s*([^,]*),\s*([^\])]*)([\])])")


def _value(text: str) -> float:
    """A bound of a declaration: a number, or arithmetic on ``pi`` (``2*pi/3``)."""
    return float(eval(text, {"__builtins__": {}, "pi": math.pi}))  # noqa: S307 - our literal


def _bounds(text: str) -> dict[str, Any]:
    text = text.strip()
    out: dict[str, Any] = {}
    if text.endswith("~"):
        out["physical"] = False
        text = text[:-1].strip()
    if text in ("", "-"):
        return out
    if text == ">0":
        return {**out, "minimum": 0.0, "exclusive_minimum": True}
    if text == ">=0":
        return {**out, "minimum": 0.0}
    m = _INTERVAL.fullmatch(text)
    if not m:
        raise ValueError(f"bounds {text!r}")
    lo, hi = m.group(2).strip(), m.group(3).strip()
    if lo:
        out.update(minimum=_value(lo), exclusive_minimum=m.group(1) == "(")
    if hi:
        out.update(maximum=_value(hi), exclusive_maximum=m.group(4) == ")")
    return out


def keys(spec: str) -> tuple[Key, ...]:
    """Keys from lines ``name | type | unit | default | bounds | help`` (module docstring);
    a line starting with ``|`` continues the help of the line above."""
    out: list[Key] = []
    for line in spec.strip().splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith("|"):
            k = out.pop()
            out.append(Key(**{**k.__dict__, "help": k.help + " " + line[1:].strip()}))
            continue
        parts = [p.strip() for p in line.split("|", 5)]
        if len(parts) != 6:
            raise ValueError(f"declaration {line!r}: expected 6 columns")
        name, typ, unit, default, bounds, help_ = parts
        dflt: Any = (REQUIRED if default == REQUIRED else None if default == "-"
                     else ast.literal_eval(default))
        out.append(Key(name, typ, "" if unit == "-" else unit, dflt, help=help_,
                       **_bounds(bounds)))
    return tuple(out)


def walk(table: Table, prefix: str = "") -> Iterator[tuple[str, Union[Key, Table]]]:
    """``(dotted name, entry)`` of every entry under ``table``, depth first (user-named
    entries as ``item_name``)."""
    for e in table.entries:
        dotted = f"{prefix}{e.name}"
        yield dotted, e
        if isinstance(e, Table):
            yield from walk(e, dotted + ".")
    if table.item is not None:
        dotted = f"{prefix}{table.item_name}"
        yield dotted, table.item
        if isinstance(table.item, Table):
            yield from walk(table.item, dotted + ".")


def json_schema(table: Table, *, title: str, description: str = "",
                schema_id: str | None = None) -> dict[str, Any]:
    """``table`` as a JSON Schema document (draft 2020-12)."""
    out: dict[str, Any] = {"$schema": _JSON_SCHEMA}
    if schema_id:
        out["$id"] = schema_id
    out["title"] = title
    body = table.schema()
    body["description"] = description or body.get("description", "")
    out.update(body)
    return out


# ------------------------------------------------------------------------------------------
# tables every docking unit's scenario shares (readers: models.rigid_body, models.unit)
META = Table("meta", "Name and description of the scenario.", keys("""
name        | string | - | 'scenario' | - | the scenario's name (in reports)
description | string | - | ''         | - | free text
"""))

BODY = Table("active", "A spacecraft: rigid body with its docking unit's frame "
             "(models.rigid_body.RigidBody).", keys("""
mass             | number    | kg     | required        | >0 | mass of the vehicle
inertia          | inertia   | kg m^2 | required        | -  | principal moments about the
| centre of mass (3 values) or the 3x3 matrix in body axes (symmetric, positive definite)
unit_offset      | vector:3  | m      | [0.0, 0.0, 0.0] | -  | centre of mass to the docking
| unit's origin, body axes
unit_orientation | vector:3  | rad    | [0.0, 0.0, 0.0] | -  | roll, pitch, yaw of the unit's
| axes in the body frame
"""), required=True)

#: the passive vehicle: a :data:`BODY` that may also spin at the start
PASSIVE_BODY = BODY.replace(name="passive", extra=keys("""
initial_rate | vector:3 | rad/s | [0.0, 0.0, 0.0] | - | body rates of the passive vehicle at
| the start
"""))

CONTACT = Table("contact", "Penalty contact law (digest section 5; models.unit.ContactLaw).",
                keys("""
stiffness         | number | N/m   | required | >0  | contact stiffness k_S
damping           | number | N s/m | required | >=0 | contact damping c_D (N s/m^2 for
| Hunt-Crossley)
friction          | number | -     | required | >=0 | friction coefficient k_Fr
friction_velocity | number | m/s   | 0.001    | >0  | slip velocity of the regularised
| friction v_eps
max_penetration   | number | m     | required | >0  | penetration limit Delta_max
model             | choice:linear,hunt-crossley | - | 'linear' | - | force law: "linear" (the
| paper's) or "hunt-crossley"
"""), required=True)

THRUST = Table("thrust", "Constant thrust of the active vehicle (models.unit.Thrust).",
               keys("""
force | vector:3 | N | [0.0, 0.0, 0.0] | - | thrust in the active vehicle's body axes
start | number   | s | 0.0             | - | start of the thrust window
stop  | number   | s | 0.0             | - | end of the thrust window (none when not after
| start)
"""))

INITIAL = Table("initial", "The twelve initial conditions (models.unit.InitialConditions): "
                "the active unit relative to the passive one, in the passive unit's axes.",
                keys("""
rel_pos_x  | number | m     | required | - | axial position of the AU origin (start plane)
rel_pos_y  | number | m     | required | - | lateral position of the AU origin
rel_pos_z  | number | m     | required | - | lateral position of the AU origin
rel_vel_x  | number | m/s   | required | - | closing velocity (positive: approaching)
rel_vel_y  | number | m/s   | required | - | lateral velocity
rel_vel_z  | number | m/s   | required | - | lateral velocity
rel_roll   | number | rad   | required | - | roll of AU against PU
rel_pitch  | number | rad   | required | - | pitch of AU against PU
rel_yaw    | number | rad   | required | - | yaw of AU against PU
rel_rate_x | number | rad/s | required | - | relative angular rate, PU axes
rel_rate_y | number | rad/s | required | - | relative angular rate, PU axes
rel_rate_z | number | rad/s | required | - | relative angular rate, PU axes
"""), source=False)
