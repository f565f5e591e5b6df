"""The declared schemas of the documents a reconstruction reads, and their JSON Schema files.

The kinds of document (:data:`KINDS`):

``run``
    a run configuration (``--config RUN.toml``): the tables of
    :data:`recon.config.RUN_TABLES`, each optional (a missing one is filled in:
    :func:`recon.config.complete_run`);
``scenario``
    a scenario of one docking unit: the unit's own tables
    (:attr:`models.unit.DockingUnit.scenario_schema`), the ``[envelope]`` and, optionally,
    the run tables;
``rig``
    a hydraulic test-rig configuration (``dockrecon simulate rig``, ``identify rig
    --config``): :data:`models.hydraulic.RIG` with the ``[identify]`` table of
    :data:`identification.rig.IDENTIFY`;
``appendage``
    a rod appendage configuration (``dockrecon simulate appendage``):
    :data:`models.appendage.APPENDAGE`;
``hysteresis``
    a hysteresis element table (``dockrecon identify hysteresis --element``):
    :data:`models.hysteresis.ELEMENT`;
``modes``
    the modes file of a non-own resonance test (``dockrecon identify resonance-coupling
    --modes``): :data:`identification.modes_schema.MODES`;
``campaign``, ``fleet``
    a campaign manifest (``dockrecon campaign``) and a fleet manifest (``dockrecon fleet``,
    a campaign manifest with a ``[fleet]`` table): :mod:`recon.manifest`.

Every key is declared once, beside its reader (:mod:`models.schema`): the scenario tables in
``models/<unit>/schema.py`` and :mod:`models.schema`, ``[model]`` and ``[optimizer]`` in
:mod:`recon.config`, ``[parameters.NAME]`` in :mod:`identification.space`,
``[observation]`` in :mod:`recon.observation`, ``[sampler]`` in
:mod:`identification.engines.mcmc`, the other kinds beside their readers (named above). :func:`document` assembles them, :func:`json_document`
exports one as a JSON Schema, :func:`write_all` writes the shipped files
(:data:`SCHEMA_DIR`), which an editor points a TOML file at::

    #:schema ../../recon/schemas/run.schema.json

(the first line of the file: Taplo and the VS Code extension Even Better TOML validate and
complete the file from it).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from models.schema import Key, Table, json_schema
from models.unit import get_unit, unit_names

__all__ = ["KINDS", "SCHEMA_DIR", "ENVELOPE", "run_tables", "document", "json_document",
           "schema_path", "write_all"]

#: the kinds of document with a declared schema
KINDS = ("run", "scenario", "rig", "appendage", "hysteresis", "modes", "campaign", "fleet")
#: the kinds whose document does not depend on a docking unit: title and description
_OTHER = {
    "rig": ("dockrecon hydraulic rig configuration",
            "dockrecon simulate rig RIG.toml, dockrecon identify rig --config RIG.toml: the "
            "actuator, the time stepping, the load (one actuator) or the hexapod, and the "
            "identification settings (models.hydraulic, identification.rig)."),
    "appendage": ("dockrecon appendage configuration",
                  "dockrecon simulate appendage CONFIG.toml: a spacecraft with a chain of "
                  "elastic rods, their hinges, loads, clamps and initial state "
                  "(models.appendage)."),
    "hysteresis": ("dockrecon hysteresis element",
                   "dockrecon identify hysteresis RECORD --element START.toml: a "
                   "piecewise-linear hysteresis element, its two sides' branch tables "
                   "(models.hysteresis). A side takes k_max (variant constant) or k3 "
                   "(variant friction_brake), a branch Q or k."),
    "modes": ("dockrecon modes file of a non-own resonance test",
              "dockrecon identify resonance-coupling RECORD --modes MODES.toml: the modal "
              "matrix, the record columns of the quasi-normal coordinates, the excited and "
              "observed modes, the resonance's order and the observed mode's own "
              "characteristics (identification.resonance.pipeline.coupling_settings)."),
    "campaign": ("dockrecon campaign manifest",
                 "dockrecon campaign MANIFEST.toml: the flights ([[flight]], [[glob]]) and "
                 "their shared settings ([defaults]); paths relative to the manifest "
                 "(recon.app.campaign)."),
    "fleet": ("dockrecon fleet manifest",
              "dockrecon fleet MANIFEST.toml: a campaign manifest with a [fleet] table, the "
              "shared parameters and the fit's settings (recon.app.fleet)."),
}
#: where the JSON Schema files are shipped (package data of recon)
SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"

#: a scenario's ``[envelope]``: the unit's first-contact envelope (recon.config)
ENVELOPE = Table("envelope", "The unit's first-contact envelope, used when a run has no "
                 "[parameters] table (recon.config.envelope_parameters).", source=False,
                 item=Key("NAME", "interval", help="a parameter of the unit (or "
                          "clock_offset, counted from the record's first contact edge): a "
                          "number fixes it, [lower, upper] gives it a uniform prior [SI]"))


def run_tables() -> tuple[Table, ...]:
    """The run tables, in :data:`recon.config.RUN_TABLES` order, each optional."""
    from recon.config import MODEL, OPTIMIZER, RUN_TABLES
    from recon.observation import OBSERVATION
    from identification.engines.mcmc import SAMPLER as sampler
    from identification.space import PARAMETER

    parameters = Table("parameters", "The fitted parameters and their priors, one table per "
                       "parameter: the unit's parameters (initial conditions, scenario "
                       "paths such as \"contact.friction\"), clock_offset and "
                       "<channel>_bias / _scale / _latency (identification.space).",
                       source=False, item=PARAMETER)
    tables = {t.name: t for t in (MODEL, parameters, OBSERVATION, OPTIMIZER, sampler)}
    return tuple(tables[n].replace(required=False) for n in RUN_TABLES)


def document(kind: str, unit: str | None = None) -> Table:
    """The declared schema of a document of ``kind`` (:data:`KINDS`); a scenario's of the
    docking unit ``unit``."""
    if kind == "run":
        return Table("run", "Run configuration of a reconstruction (recon.config).",
                     run_tables(), source=False)
    if kind == "scenario":
        if unit is None:
            raise ValueError("a scenario schema needs the docking unit")
        own = get_unit(unit).scenario_schema
        return own.replace(extra=(ENVELOPE,) + run_tables())
    if kind == "rig":
        from identification.rig import IDENTIFY
        from models.hydraulic import RIG

        return RIG.replace(entries=tuple(IDENTIFY if e.name == "identify" else e
                                         for e in RIG.entries))
    if kind == "appendage":
        from models.appendage import APPENDAGE

        return APPENDAGE
    if kind == "hysteresis":
        from models.hysteresis import ELEMENT

        return ELEMENT
    if kind == "modes":
        from identification.modes_schema import MODES

        return MODES
    if kind in ("campaign", "fleet"):
        from recon.manifest import CAMPAIGN, FLEET

        return CAMPAIGN if kind == "campaign" else FLEET
    raise ValueError(f"unknown kind {kind!r} (known: {', '.join(KINDS)})")


def schema_path(kind: str, unit: str | None = None) -> Path:
    """The shipped JSON Schema file of ``kind`` (and ``unit``)."""
    name = f"scenario.{unit}" if kind == "scenario" else kind
    return SCHEMA_DIR / f"{name}.schema.json"


def json_document(kind: str, unit: str | None = None) -> dict[str, Any]:
    """The JSON Schema of :func:`document`."""
    table = document(kind, unit)
    if kind in _OTHER:
        title, desc = _OTHER[kind]
    elif kind == "run":
        title = "dockrecon run configuration"
        desc = ("dockrecon reconstruct --config RUN.toml: the run tables (each optional; "
                "recon.config).")
    else:
        title = f"dockrecon scenario ({unit})"
        desc = (f"A scenario of the {get_unit(unit).title}: its tables, the [envelope] and, "
                "optionally, the run tables (recon.config).")
    return json_schema(table, title=title, description=desc)


def dumps(schema: dict[str, Any]) -> str:
    """The text of a JSON Schema file (stable: sorted by declaration, 2-space indent)."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def documents() -> list[tuple[str, str | None]]:
    """``(kind, unit)`` of every document with a shipped schema."""
    return ([("run", None)] + [("scenario", u) for u in unit_names()
                               if get_unit(u).scenario_schema is not None]
            + [(k, None) for k in _OTHER])


def write_all(directory: Path | None = None) -> list[Path]:
    """Write the JSON Schema file of every document to ``directory`` (default
    :data:`SCHEMA_DIR`); returns the paths."""
    out = []
    for kind, unit in documents():
        path = schema_path(kind, unit)
        if directory is not None:
            path = Path(directory) / path.name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dumps(json_document(kind, unit)))
        out.append(path)
    return out


if __name__ == "__main__":  # pragma: no cover - regenerates the shipped files
    for written in write_all():
        print(written)
