"""The reference part of the documentation page on files, generated from the code.

:func:`render` returns reStructuredText listing

* every command of the ``dockrecon`` command line with its arguments and options, read from the
  click objects (:data:`recon.app.cli.cli`);
* the exit codes, read from the docstring of :mod:`recon.app.cli`;
* every key of the run configuration (``--config RUN.toml``, or the same tables in a scenario)
  and of each docking unit's scenario, from the declared schemas the readers validate with
  (:mod:`recon.schema`, :mod:`models.schema`): type, unit, default, bounds and meaning, and
  :data:`recon.config.DEFAULT_RUN`;
* the keys of the other input files (rig, appendage, hysteresis element, modes file,
  campaign and fleet manifests), from their declared schemas too
  (:func:`recon.schema.document`);
* the telemetry channels of each registered docking unit (:attr:`models.unit.DockingUnit.
  channels`) and the columns of ground-test records (:data:`models.limits.COLUMN_RANGES`).

Nothing here needs Sphinx: ``tests/test_docs.py`` calls :func:`render` and checks the page
against the command line and the configuration schemas. :func:`setup` is the Sphinx
extension hook; it writes the page to ``docs/_generated/files_reference.inc`` when the build
starts.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable, Mapping

ROOT = Path(__file__).resolve().parents[2]
#: the shipped scenario each unit's keys are read from (unit name -> path from the repository)
UNIT_PRESETS = {"probe_cone": "models/probe_cone/presets/reference.toml",
                "peripheral": "models/peripheral/presets/reference.toml"}


# ------------------------------------------------------------------------------------------
# reStructuredText helpers
def _heading(text: str, ch: str) -> str:
    return f"{text}\n{ch * len(text)}\n\n"


def _cell(text: Any) -> str:
    s = " ".join(str(text).split())
    return s.replace("|", "\\|") if s else " "


def _table(header: list[str], rows: Iterable[list[Any]], widths: list[int] | None = None
           ) -> str:
    rows = list(rows)
    out = [".. list-table::", "   :header-rows: 1"]
    if widths:
        out.append(f"   :widths: {' '.join(str(w) for w in widths)}")
    out.append("")
    for row in [header] + rows:
        out.append(f"   * - {_cell(row[0])}")
        for c in row[1:]:
            out.append(f"     - {_cell(c)}")
    return "\n".join(out) + "\n\n"


def _literal(v: Any) -> str:
    if v is None or v == "":
        return ""
    return f"``{v!r}``" if isinstance(v, str) else f"``{v}``"


# ------------------------------------------------------------------------------------------
# the command line
def iter_commands(group=None, path: tuple[str, ...] = ("dockrecon",)):
    """``(path, command)`` for every command and group under ``group`` (depth first)."""
    import click

    if group is None:
        from recon.app.cli import cli as group
    yield path, group
    if isinstance(group, click.Group):
        for name in sorted(group.commands):
            yield from iter_commands(group.commands[name], path + (name,))


def _param_row(p) -> list[str]:
    import click

    if isinstance(p, click.Argument):
        names = p.human_readable_name
        kind = "argument" + (" (repeatable)" if p.nargs == -1 else "")
    else:
        names = ", ".join(p.opts + p.secondary_opts)
        kind = "flag" if p.is_flag else "option"
    typ = p.type
    if isinstance(typ, click.Choice):
        tname = " | ".join(str(c) for c in typ.choices)
    else:
        tname = getattr(typ, "name", str(typ))
    default = ""
    if not p.required and p.default is not None and not callable(p.default) \
            and "UNSET" not in repr(p.default) \
            and not (isinstance(p, click.Option) and p.is_flag and p.default is False):
        default = repr(p.default) if isinstance(p.default, str) else str(p.default)
    help_ = getattr(p, "help", None) or ""
    req = "required" if p.required else ""
    return [f"``{names}``", kind, tname, req or default, help_]


def _usage(path: tuple[str, ...], cmd) -> str:
    """The usage line click prints for ``path`` (``dockrecon simulate docking ...``)."""
    import click

    from recon.app.cli import cli

    ctx = click.Context(cli, info_name=path[0])
    group = cli
    for name in path[1:]:
        group = group.commands[name]
        ctx = click.Context(group, info_name=name, parent=ctx)
    pieces = " ".join(cmd.collect_usage_pieces(ctx))
    return f"{ctx.command_path} {pieces}".strip()


def cli_section() -> str:
    import click

    out = [_heading("Commands", "-")]
    out.append("Every command and option of ``dockrecon``, read from the command line itself "
               "(``dockrecon COMMAND --help`` prints the same). ``-v`` / ``-q`` work before or "
               "after the subcommand.\n\n")
    for path, cmd in iter_commands():
        if len(path) == 1:
            title = "dockrecon"
        else:
            title = " ".join(path)
        out.append(_heading(f"``{title}``", "~"))
        out.append(f"Usage: ``{_usage(path, cmd)}``\n\n")
        doc = (cmd.help or "").strip()
        if doc:
            out.append("::\n\n" + "\n".join("   " + line for line in doc.splitlines())
                       + "\n\n")
        if isinstance(cmd, click.Group):
            subs = ", ".join(f"``{n}``" for n in sorted(cmd.commands))
            out.append(f"Subcommands: {subs}.\n\n")
        params = [p for p in cmd.params if getattr(p, "expose_value", True) or p.opts]
        if params:
            out.append(_table(["name", "kind", "type", "default", "meaning"],
                              (_param_row(p) for p in params), [22, 8, 12, 10, 48]))
    return "".join(out)


# ------------------------------------------------------------------------------------------
# exit codes (the docstring of recon.app.cli)
def exit_codes() -> list[tuple[int, str]]:
    """``(code, meaning)`` from the "Exit codes" section of :mod:`recon.app.cli`'s docstring."""
    import recon.app.cli

    doc = recon.app.cli.__doc__ or ""
    sec = doc.split("Exit codes", 1)[1].split("\n\n", 2)
    body = "\n\n".join(sec[1:]) if sec[0].strip("-\n ") == "" else doc.split("Exit codes", 1)[1]
    codes: list[tuple[int, str]] = []
    cur: list[str] | None = None
    for line in body.splitlines():
        m = re.fullmatch(r"(\d+)\s*", line)
        if m:
            cur = []
            codes.append((int(m.group(1)), ""))
            continue
        if cur is not None and line.startswith("    "):
            code, text = codes[-1]
            codes[-1] = (code, (text + " " + line.strip()).strip())
        elif cur is not None and line.strip() and not line.startswith(" "):
            cur = None
    return codes


def exit_section() -> str:
    return (_heading("Exit codes", "-")
            + "Every command, the same way (from the docstring of :mod:`recon.app.cli`).\n\n"
            + _table(["code", "meaning"], ([str(c), t] for c, t in exit_codes()), [8, 92]))


# ------------------------------------------------------------------------------------------
# the other input files: their declared schemas (recon.schema)
#: other input TOML files: (title, command, kind of recon.schema.KINDS, shipped samples)
OTHER_FILES = (
    ("Rod appendage configuration", "dockrecon simulate appendage CONFIG.toml", "appendage",
     ("models/presets/appendage_pulse.toml", "models/presets/appendage_deploy.toml")),
    ("Hydraulic rig configuration", "dockrecon simulate rig RIG.toml, dockrecon identify rig "
     "--config RIG.toml", "rig", ("telemetry_samples/rig/actuator.toml",
                                  "telemetry_samples/rig/platform.toml")),
    ("Campaign manifest", "dockrecon campaign MANIFEST.toml", "campaign",
     ("telemetry_samples/flights/campaign.toml",)),
    ("Fleet manifest: a campaign manifest with a [fleet] table", "dockrecon fleet "
     "MANIFEST.toml", "fleet", ("telemetry_samples/fleet/fleet.toml",)),
)


def other_files_section() -> str:
    from recon.schema import document, schema_path

    out = [_heading("Other input files", "-")]
    for title, command, kind, samples in OTHER_FILES:
        out.append(_heading(title, "~"))
        out.append(f"``{command}``. Shipped samples: " + ", ".join(f"``{s}``" for s in samples)
                   + f". JSON Schema: ``{schema_path(kind).relative_to(ROOT)}`` "
                   f"(``dockrecon schema {kind}``). The keys are the declared schema the "
                   "readers validate with; unknown keys are errors (exit code 2) naming the "
                   "dotted key.\n\n")
        # a fleet manifest: only the table it adds to a campaign manifest
        rows = (_declared_rows(document(kind)["fleet"], "fleet.") if kind == "fleet"
                else _declared_rows(document(kind)))
        out.append(_table(["key", "required", "unit", "default", "accepted values", "meaning"],
                          rows, [26, 7, 9, 10, 18, 30]))
    out.append(_heading("Hysteresis element tables", "~"))
    out.append("``dockrecon identify hysteresis RECORD --element START.toml`` (samples "
               "``telemetry_samples/static/*.start.toml``). The layout, from the docstring of "
               ":mod:`models.hysteresis`:\n\n")
    import models.hysteresis as H

    layout = (H.__doc__ or "").split("Element tables (``from_dict``)", 1)[-1]
    layout = layout.split("::", 1)[-1].split("\n\n", 2)
    block = layout[1] if len(layout) > 1 else ""
    out.append("::\n\n" + block.rstrip() + "\n\n")
    out.append("The keys, the declared schema the reader validates with (JSON Schema "
               f"``{schema_path('hysteresis').relative_to(ROOT)}``, ``dockrecon schema "
               "hysteresis``; ``positive.forward`` stands for every branch, "
               "``negative`` takes the keys of ``positive``):\n\n")
    rows = [r for r in _declared_rows(document("hysteresis"))
            if not r[0].startswith(("``negative.", "``positive.backward."))]
    out.append(_table(["key", "required", "unit", "default", "accepted values", "meaning"],
                      rows, [26, 7, 9, 10, 18, 30]))
    out.append(_heading("Modes file of a non-own resonance test", "~"))
    out.append("``dockrecon identify resonance-coupling RECORD --modes MODES.toml`` (sample "
               "``telemetry_samples/resonance/coupling_l3.modes.toml``; "
               ":func:`identification.resonance.pipeline.coupling_settings`; JSON Schema "
               f"``{schema_path('modes').relative_to(ROOT)}``, ``dockrecon schema modes``). "
               "The keys:\n\n")
    out.append(_table(["key", "required", "unit", "default", "accepted values", "meaning"],
                      _declared_rows(document("modes")), [26, 7, 9, 10, 18, 30]))
    return "".join(out)


def _short(v: Any, n: int = 40) -> str:
    s = repr(v) if isinstance(v, str) else str(v)
    return s if len(s) <= n else s[: n - 3] + "..."


def _declared_rows(table, prefix: str = "", defaults: Mapping[str, Any] | None = None
                   ) -> list[list[str]]:
    """Rows ``key, required, unit, default, accepted values, meaning`` of every key under the
    declared ``table`` (:mod:`models.schema`; user-chosen names as ``NAME``)."""
    from models.schema import Key, walk

    rows = []
    for dotted, e in walk(table, prefix):
        if not isinstance(e, Key):
            rows.append([f"``{dotted}``" + (" (array of tables)" if e.array else " (table)"),
                         "yes" if e.required else "", "", "", "", e.help])
            continue
        if defaults is not None:
            d = defaults.get(dotted, "")
        else:
            d = "" if e.default is None or e.required else e.default
        rows.append([f"``{dotted}``", "yes" if e.required else "", e.unit,
                     _short(d) if d != "" else "", e.bounds_text(), e.help])
    return rows


def scenario_section() -> str:
    from models.unit import get_unit
    from recon.schema import ENVELOPE, schema_path

    out = [_heading("Scenario files", "-")]
    out.append(
        "A scenario TOML names its docking unit (``unit = \"NAME\"``) and holds the unit's "
        "tables; it may also hold the run tables (next section), which ``--config`` overrides "
        "table by table, and an ``[envelope]`` table. Every value is SI. Unknown keys are "
        "errors (exit code 2) naming the dotted key. The keys below are the declared schema "
        "the scenario readers validate with (``models/<unit>/schema.py``, "
        ":mod:`models.schema`): *default* is the value a missing optional key takes, "
        "*accepted values* the type and bounds, with a number's physical range "
        "(:data:`models.limits.RANGES`: a value outside is refused as a typo or a unit slip, "
        "exit code 2).\n\n")
    for unit_name in UNIT_PRESETS:
        unit = get_unit(unit_name)
        out.append(_heading(f"Unit ``{unit_name}`` ({unit.title})", "~"))
        out.append(f"Shipped scenario: ``{UNIT_PRESETS[unit_name]}``. JSON Schema: "
                   f"``{schema_path('scenario', unit_name).relative_to(ROOT)}``.\n\n")
        out.append(_table(["key", "required", "unit", "default", "accepted values", "meaning"],
                          _declared_rows(unit.scenario_schema.replace(extra=(ENVELOPE,))),
                          [26, 7, 9, 10, 18, 30]))
        params = getattr(unit, "parameters", ())
        if params:
            out.append(
                f"**[envelope]** ({ENVELOPE.help} A number fixes the parameter, ``[lower, "
                "upper]`` gives it a uniform prior; ``clock_offset`` counts from the record's "
                "first contact edge). Its keys are the unit's parameters and ``clock_offset``; "
                "the same names are what a run configuration's ``[parameters.NAME]`` may free: "
                "the short names and the scenario paths (a number of the scenario by its dotted "
                "key, the absorbers' characteristic numbers included, their tables then "
                "rebuilt in the kernel per evaluation; any other path is refused with the "
                "reason):\n\n")
            out.append(", ".join(f"``envelope.{p}``" for p in list(params)
                                 + (["clock_offset"] if "clock_offset" not in params else []))
                       + ".\n\n")
    out.append(_heading("Editor support", "~"))
    out.append(
        "The declarations are exported as JSON Schema files (draft 2020-12) under "
        "``recon/schemas/``: ``run.schema.json`` for a run configuration and "
        "``scenario.<unit>.schema.json`` for a scenario (``python -m recon.schema`` "
        "regenerates them; a test checks that the shipped files are current). Taplo and the VS "
        "Code extension *Even Better TOML* complete and check a TOML file against one named on "
        "its first line, relative to the file::\n\n"
        "   #:schema ../../recon/schemas/run.schema.json\n\n"
        "or for every matching file in a ``.taplo.toml``::\n\n"
        "   [[rule]]\n"
        "   include = [\"**/*run.toml\"]\n"
        "   schema.path = \"recon/schemas/run.schema.json\"\n\n")
    return "".join(out)


# ------------------------------------------------------------------------------------------
# the run configuration
def _numpydoc_params(doc: str) -> dict[str, str]:
    out: dict[str, str] = {}
    m = re.search(r"Parameters\n\s*-+\n(.*?)(?:\n\s*\n\s*[A-Z][a-z]+\n\s*-+\n|\Z)", doc or "",
                  re.S)
    if not m:
        return out
    name = None
    for line in m.group(1).splitlines():
        if re.match(r"^\s{4}\S", line) and not re.match(r"^\s{8}", line):
            name = line.strip().split(":")[0].strip()
            out[name] = ""
        elif name and line.strip():
            out[name] = (out[name] + " " + line.strip()).strip()
    return out


def run_section() -> str:
    from recon.config import DEFAULT_RUN, RUN_TABLES
    from recon.schema import run_tables

    out = [_heading("Run configuration", "-")]
    out.append(
        "``dockrecon reconstruct ... --config RUN.toml`` (or the same tables inside the "
        "scenario) holds the tables " + ", ".join(f"``[{t}]``" for t in RUN_TABLES)
        + " (:data:`recon.config.RUN_TABLES`). Without any run table the engine tables of "
        ":data:`recon.config.DEFAULT_RUN` apply (" + ", ".join(f"``[{t}]``" for t in DEFAULT_RUN)
        + "), the priors come from the scenario's ``[envelope]`` and the noise of every "
        "channel the record has from its pre-contact segment (``sigma = \"auto\"``). The keys "
        "are the declared schema the readers validate with (:mod:`recon.schema`; JSON Schema "
        "``recon/schemas/run.schema.json``). The column *no run table* gives the value of "
        ":data:`~recon.config.DEFAULT_RUN`, *default* the value a missing key takes in a "
        "stated table; ``NAME`` is a parameter or channel name. The meaning of each table is "
        "in the docstring of :mod:`recon.config`.\n\n")
    from models.unit import get_unit

    no_table = {f"{t}.{k}": v for t, table in DEFAULT_RUN.items() for k, v in table.items()}
    for table in run_tables():
        out.append(f"**[{table.name}]** ({table.help})\n\n")
        if table.name == "parameters":
            for unit_name in UNIT_PRESETS:
                unit = get_unit(unit_name)
                names = list(getattr(unit, "parameters", ()))
                chans = [c for c in unit.fitted_channels]
                out.append(
                    f"``NAME`` for the ``{unit_name}`` unit: "
                    + ", ".join(f"``{n}``" for n in names)
                    + ", ``clock_offset``, and for a fitted channel ``CH`` (" +
                    ", ".join(f"``{c}``" for c in chans) + "): ``CH_bias``, ``CH_scale``, "
                    "``CH_latency`` (:mod:`recon.observation`).\n\n")
        rows = [[r[0], _short(no_table[r[0].strip("`")]) if r[0].strip("`") in no_table
                 else "", *r[3:]] for r in _declared_rows(table, f"{table.name}.")]
        out.append(_table(["key", "no run table", "default", "accepted values", "meaning"],
                          rows, [30, 10, 10, 20, 30]))
    return "".join(out)


# ------------------------------------------------------------------------------------------
# telemetry and record columns
def telemetry_section() -> str:
    from models.limits import COLUMN_RANGES
    from models.unit import get_unit

    out = [_heading("Telemetry and record columns", "-")]
    out.append(
        "Parquet (units in the field metadata ``unit``) or CSV (headers ``name[unit]``); "
        "column ``t`` in seconds; NaN where a channel has no sample. Units are converted to "
        "SI on reading. A reading outside a channel's physical range is refused with its row "
        "and column (exit code 65).\n\n")
    for unit_name in UNIT_PRESETS:
        unit = get_unit(unit_name)
        out.append(_heading(f"Flight channels of ``{unit_name}``", "~"))
        rows = []
        for name, ch in unit.channels.items():
            rng = "" if ch.range is None else f"[{ch.range[0]:g}, {ch.range[1]:g}]"
            rows.append([f"``{name}``", ch.unit, ch.kind, "yes" if ch.sensor else "", rng,
                         ch.description])
        out.append(_table(["channel", "SI unit", "kind", "sensor", "range", "description"],
                          rows, [16, 8, 10, 6, 14, 46]))
    out.append(_heading("Ground-test record columns", "~"))
    out.append("Static load-deflection, resonance and rig records (limits of "
               ":data:`models.limits.COLUMN_RANGES`, by magnitude):\n\n")
    out.append(_table(["column", "largest magnitude", "unit"],
                      ([f"``{k}``", f"{v:g}", u] for k, (v, u) in COLUMN_RANGES.items()),
                      [20, 20, 60]))
    return "".join(out)


def result_section() -> str:
    """The JSON schema of every result, quoted from the docstring of
    :mod:`identification.result`."""
    import identification.result

    doc = identification.result.__doc__ or ""
    head, _, rest = doc.partition("::\n")
    lines = rest.splitlines()
    block: list[str] = []
    for i, line in enumerate(lines):
        if line and not line.startswith(" "):
            rest = "\n".join(lines[i:])
            break
        block.append(line)
    status = next((p for p in rest.split("\n\n") if p.startswith("``status``")), "")
    return (_heading("Result files", "-")
            + "Every fit is a :class:`identification.result.Result`, written as one JSON "
            "document with the same schema for every kind (from the docstring of "
            ":mod:`identification.result`)::\n"
            + "\n".join(block).rstrip() + "\n\n" + " ".join(status.split()) + "\n\n")


def render() -> str:
    """The whole generated reference (reStructuredText, no page title)."""
    head = (".. This file is generated by docs/_ext/dockrecon_files.py at build time. "
            "Do not edit.\n\n")
    return head + "".join([cli_section(), exit_section(), scenario_section(), run_section(),
                           other_files_section(),
                           telemetry_section(), result_section()])


def write(path: Path | None = None) -> Path:
    path = path or ROOT / "docs" / "_generated" / "files_reference.inc"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = render()
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    return path


def setup(app):  # pragma: no cover - exercised by the Sphinx build
    def _on_init(app):
        write()

    app.connect("builder-inited", _on_init)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}


if __name__ == "__main__":  # pragma: no cover
    print(write())
