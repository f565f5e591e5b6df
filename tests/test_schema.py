"""The declared schemas (models.schema, recon.schema) against the readers and the shipped files.

* the shipped JSON Schema files are what the declarations generate, and valid JSON Schemas;
* every shipped scenario, run, rig and appendage configuration validates against its JSON
  Schema, and every shipped TOML is of a kind with a schema (or named as one without);
* the readers and the declarations agree on the keys, both ways: every declared key (added to
  a valid document with its default or a value of its type) is accepted by the reader and by
  the JSON Schema; an unknown key in any declared table is refused by both, and the keys a
  reader's error lists are exactly the declared ones;
* a number outside its declared bounds is refused by the reader (naming the key) and by the
  JSON Schema;
* declared defaults are the readers' (the dataclasses' defaults where a dataclass holds them).
"""
from __future__ import annotations

import copy
import dataclasses
import json
import math
import re
from collections.abc import Mapping
from pathlib import Path

import jsonschema
import pytest

from models.errors import InputError
from models.schema import Key, Table, walk
from recon.config import RunConfig
from recon.io import load_toml
from recon.schema import dumps, document, documents, json_document, schema_path

ROOT = Path(__file__).resolve().parents[1]
UNITS = {"probe_cone": ROOT / "models/probe_cone/presets/reference.toml",
         "peripheral": ROOT / "models/peripheral/presets/reference.toml"}
RUNS = sorted(p for p in (ROOT / "telemetry_samples").rglob("*.toml") if p.name.endswith(
    "run.toml"))
UNKNOWN = "zz_not_a_key"


def _beyond(limits) -> list[float]:
    """Finite values a key's ``limits()`` ``(lo, lo_exclusive, hi, hi_exclusive)`` refuse: one
    step beyond each bound, and the bound itself where it is exclusive."""
    lo, lo_x, hi, hi_x = limits
    out = [lo - (abs(lo) or 1.0)] + ([lo] if lo_x else []) + [hi + (abs(hi) or 1.0)] + (
        [hi] if hi_x else [])
    return [v for v in out if math.isfinite(v)]


def _validator(kind, unit=None):
    return jsonschema.Draft202012Validator(json_document(kind, unit))


# ------------------------------------------------------------------------------------------
# the shipped files
@pytest.mark.parametrize("kind,unit", documents())
def test_shipped_schema_file_is_what_the_declarations_generate(kind, unit):
    path = schema_path(kind, unit)
    assert path.exists(), f"{path} missing: run python -m recon.schema"
    assert path.read_text() == dumps(json_document(kind, unit)), \
        f"{path.name} is stale: regenerate it with python -m recon.schema"
    jsonschema.Draft202012Validator.check_schema(json.loads(path.read_text()))


@pytest.mark.parametrize("path", RUNS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_shipped_run_configuration_validates(path):
    d = load_toml(path)
    errors = [f"{'.'.join(map(str, e.path))}: {e.message}"
              for e in _validator("run").iter_errors(d)]
    assert not errors
    RunConfig.from_dict({**d, "parameters": d.get("parameters", {"x": {"fixed": 0.0}}),
                         "observation": d.get("observation",
                                              {"channels": {"stroke": {"sigma": 1.0}}})})


@pytest.mark.parametrize("unit", UNITS)
def test_every_shipped_scenario_validates(unit):
    shipped = sorted(p for p in ROOT.joinpath("models").rglob("*.toml")
                     if load_toml(p).get("unit") == unit)
    assert UNITS[unit] in shipped
    for path in shipped:
        errors = [f"{'.'.join(map(str, e.path))}: {e.message}"
                  for e in _validator("scenario", unit).iter_errors(load_toml(path))]
        assert not errors, path


#: the shipped TOML files of each kind without a docking unit (recon.schema.KINDS)
OTHER_FILES = {
    "rig": sorted(ROOT.joinpath("telemetry_samples/rig").glob("*.toml")),
    "appendage": sorted(ROOT.joinpath("models/presets").glob("appendage_*.toml")),
    # the constant-parameter element first: the cases below start from it
    "hysteresis": [ROOT / "telemetry_samples/static/lateral_double_loop.start.toml",
                   ROOT / "telemetry_samples/static/axial_brake_two_slips.start.toml"],
    "modes": sorted(ROOT.joinpath("telemetry_samples/resonance").glob("*.modes.toml")),
    "campaign": [ROOT / "telemetry_samples/flights/campaign.toml"],
    "fleet": [ROOT / "telemetry_samples/fleet/fleet.toml"],
}


def test_every_shipped_toml_is_a_covered_kind_or_a_known_other_kind():
    """A new kind of shipped TOML must be given a schema or named here."""
    others: set[str] = set()
    covered = {p for files in OTHER_FILES.values() for p in files}
    for path in list(ROOT.joinpath("models").rglob("*.toml")) + list(
            ROOT.joinpath("telemetry_samples").rglob("*.toml")):
        d = load_toml(path)
        assert (path.name in others or path in RUNS or d.get("unit") in UNITS
                or path in covered), path


@pytest.mark.parametrize("kind,path", [(k, p) for k, ps in OTHER_FILES.items() for p in ps],
                         ids=lambda v: v if isinstance(v, str) else v.name)
def test_every_shipped_file_of_the_other_kinds_validates(kind, path):
    d = load_toml(path)
    errors = [f"{'.'.join(map(str, e.path))}: {e.message}"
              for e in _validator(kind).iter_errors(d)]
    assert not errors
    OTHER_READERS[kind](d)


def test_the_schema_command_knows_every_kind():
    from recon.app.cli.tools import schema_cmd
    from recon.schema import KINDS

    kind = next(p for p in schema_cmd.params if p.name == "kind")
    assert tuple(kind.type.choices) == KINDS


# ------------------------------------------------------------------------------------------
# agreement of the readers and the declarations
def _example(key: Key, present=None):
    """A value of ``key``'s type the reader accepts on its own."""
    if present is not None:
        return present
    if key.default is not None and not key.required:
        return copy.deepcopy(key.default)
    base = key.type.split(":")[0]
    lim = key.limits()
    if base.startswith("number") or base == "integer":
        lo, _, hi, _ = lim if lim is not None else (-math.inf, False, math.inf, False)
        v = min(max(0.5 * (max(lo, -1.0) + min(hi, 1.0)), lo), hi)
        v = v if v not in (lo, hi) or v == 0.0 else 0.5 * (lo + hi)
        return int(max(lo, 1)) if base == "integer" else float(v)
    if base == "string":
        return "m/s" if key.name == "unit" else "text"
    if base == "boolean":
        return True
    if base == "choice":
        return key.choices[-1]
    if key.name == "absorber":       # a leg absorber: a constant-parameter hysteresis element
        return {"variant": "constant", "dof": "linear", "negative": "mirror",
                "positive": {"k_max": 1e5,
                             "forward": {"q": [0.0, 0.005, 0.05, 0.1],
                                         "Q": [0.0, 100.0, 700.0, 2000.0]},
                             "backward": {"q": [0.0, 0.005, 0.087, 0.1],
                                          "Q": [0.0, 100.0, 700.0, 2000.0]}}}
    raise AssertionError(f"no example of {key}")


def _tables(table: Table, path=()):
    """``(path, table)`` of every fixed (not user-named) table under ``table``."""
    yield path, table
    for t in table.tables():
        yield from _tables(t, path + (t.name,))


def _at(d, path, create=False):
    for p in path:
        d = d.setdefault(p, {}) if create else d[p]
    return d


def _refuses(read, d, key):
    """The InputError of ``read(d)``, asserting that it names ``key``."""
    with pytest.raises(InputError) as info:
        read(d)
    assert str(info.value.key) == key, str(info.value)
    return info.value


def _listed(message: str) -> set[str]:
    m = re.search(r"(?:expected one of:?|allowed:)\s*(.*)", message)
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", m.group(1).split(")")[0])) if m else set()


def _scenario_cases(unit):
    base = load_toml(UNITS[unit])
    for k in ("model", "parameters", "observation", "optimizer", "sampler", "envelope"):
        base.pop(k, None)
    return base, document("scenario", unit), (lambda d: get_scenario(unit, d))


def get_scenario(unit, d):
    from models.unit import get_unit
    return get_unit(unit).scenario(copy.deepcopy(d))


@pytest.mark.parametrize("unit", UNITS)
def test_scenario_reader_and_declaration_agree_on_every_key(unit):
    base, doc, read = _scenario_cases(unit)
    read(base)
    own = get_scenario_schema(unit)
    for path, table in _tables(own):
        if path and path[0] in ("envelope",):
            continue
        dotted = ".".join(path)
        # an unknown key: refused by the reader, naming it, and by the JSON Schema
        d = copy.deepcopy(base)
        present = _at(d, path, create=True) if path else d
        fill = {k.name: _example(k) for k in table.keys() if k.required and k.name not in present}
        present.update(fill)
        d_ok = copy.deepcopy(d)
        read(d_ok)                                           # the table, as filled, is valid
        present[UNKNOWN] = 1.0
        prefix = f"{dotted}." if dotted else ""
        exc = _refuses(read, d, prefix + UNKNOWN)
        listed = _listed(exc.what)
        if listed:
            want = table.names() | ({"envelope"} if not path and unit == "probe_cone" else set())
            if path == ("passive",):     # taken out before the vehicle's keys are checked
                want -= {"initial_rate"}
            # the peripheral latch and sensor readers list the keys the scenario takes from
            # the ring design; the scenario refuses them in its own tables
            from_ring = {("latches",): {"length", "stop", "pair"},
                         ("capture_sensors",): {"radius"}}.get(path, set())
            if unit == "peripheral" and from_ring:
                want |= from_ring
                for k in from_ring:
                    bad = copy.deepcopy(d_ok)
                    _at(bad, path)[k] = 1.0
                    _refuses(read, bad, f"{dotted}.{k}")
                    assert not _validator("scenario", unit).is_valid(bad)
            assert listed == want, dotted
        assert not _validator("scenario", unit).is_valid(d), dotted
        # every declared key: accepted by both
        for key in table.keys():
            d = copy.deepcopy(d_ok)
            t = _at(d, path) if path else d
            t[key.name] = _example(key, t.get(key.name))
            read(d)
            errors = [e.message for e in _validator("scenario", unit).iter_errors(d)]
            assert not errors, f"{prefix}{key.name}: {errors}"


def get_scenario_schema(unit):
    from models.unit import get_unit
    return get_unit(unit).scenario_schema


@pytest.mark.parametrize("unit", UNITS)
def test_scenario_value_out_of_declared_bounds_is_refused_by_both(unit):
    base, _doc, read = _scenario_cases(unit)
    checked = 0
    for path, table in _tables(get_scenario_schema(unit)):
        if path and path[0] not in base:
            continue
        for key in table.keys():
            lim = key.limits()
            if lim is None:
                continue
            for bad in _beyond(lim):
                d = copy.deepcopy(base)
                _at(d, path)[key.name] = int(bad) if key.type == "integer" else float(bad)
                dotted = ".".join(path + (key.name,))
                with pytest.raises(InputError) as info:
                    read(d)
                assert str(info.value.key) == dotted, (dotted, bad, str(info.value))
                assert not _validator("scenario", unit).is_valid(d), (dotted, bad)
                checked += 1
    assert checked > 40


RUN_BASE = {"parameters": {"rel_vel_x": {"lower": 0.1, "upper": 0.2}},
            "observation": {"channels": {"stroke": {"sigma": 1e-3}}},
            "optimizer": {"importance": 100, "mcmc_below_ess": 50.0}}


def test_run_reader_and_declaration_agree_on_every_key():
    run = document("run")
    v = _validator("run")
    cases = [(("model",), run["model"]), (("optimizer",), run["optimizer"]),
             (("sampler",), run["sampler"]), (("observation",), run["observation"]),
             (("observation", "channels", "stroke"), run["observation"]["channels"].item),
             (("parameters", "rel_vel_x"), run["parameters"].item)]
    RunConfig.from_dict(copy.deepcopy(RUN_BASE))
    for path, table in cases:
        d = copy.deepcopy(RUN_BASE)
        _at(d, path, create=True)[UNKNOWN] = 1.0
        exc = _refuses(RunConfig.from_dict, d, ".".join(path + (UNKNOWN,)))
        assert _listed(exc.what) == table.names(), path
        assert not v.is_valid(d), path
        for key in table.keys():
            if key.name in ("fixed", "anchor", "mean", "sd", "median", "sigma") and \
                    path[0] == "parameters":
                continue          # these belong to another prior or a fixed parameter
            d = copy.deepcopy(RUN_BASE)
            t = _at(d, path, create=True)
            if key.name == "importance_max":
                t[key.name] = 200
            elif key.name == "start":
                t[key.name] = 0.15
            elif key.name == "step":
                t[key.name] = 0.01
            elif key.name == "proposal":
                t[key.name] = "off"
            else:
                t[key.name] = _example(key, t.get(key.name))
            RunConfig.from_dict(d)
            assert not list(v.iter_errors(d)), (path, key.name)
    # the parameter keys of the other prior families and of a fixed parameter
    for spec in ({"prior": "normal", "mean": 0.1, "sd": 0.01},
                 {"prior": "lognormal", "median": 0.1, "sigma": 0.5},
                 {"fixed": 0.1, "unit": "m/s"}):
        d = {**copy.deepcopy(RUN_BASE), "parameters": {"rel_vel_x": spec,
                                                        "rel_vel_y": {"lower": 0, "upper": 1}}}
        RunConfig.from_dict(d)
        assert v.is_valid(d)
    d = {**copy.deepcopy(RUN_BASE), "parameters": {
        "clock_offset": {"anchor": "contact", "lower": -1.0, "upper": 0.0, "step": 0.01}}}
    RunConfig.from_dict(d)
    assert v.is_valid(d)
    d = {**copy.deepcopy(RUN_BASE), UNKNOWN: {}}
    _refuses(RunConfig.from_dict, d, UNKNOWN)
    assert not v.is_valid(d)


def test_run_value_out_of_declared_bounds_is_refused_by_both():
    run = document("run")
    v = _validator("run")
    checked = 0
    for table in ("model", "optimizer", "sampler"):
        for key in run[table].keys():
            lim = key.limits()
            if lim is None:
                continue
            lo, lo_x, hi, hi_x = lim
            for bad in ([lo] if lo_x else [lo - (abs(lo) or 1.0)]) + \
                    ([hi] if hi_x else [hi * 2 + 1]):
                d = copy.deepcopy(RUN_BASE)
                d.setdefault(table, {})[key.name] = (int(bad) if key.type == "integer"
                                                     else float(bad))
                _refuses(RunConfig.from_dict, d, f"{table}.{key.name}")
                assert not v.is_valid(d), (table, key.name, bad)
                checked += 1
    assert checked >= 40


def test_declared_defaults_are_the_readers():
    from identification.engines import SamplerSettings
    from recon.observation import ChannelModel

    run = document("run")
    for f in dataclasses.fields(SamplerSettings):
        assert run["sampler"][f.name].default == f.default, f.name
    chan = run["observation"]["channels"].item
    for f in dataclasses.fields(ChannelModel):
        if f.name not in ("name", "sigma"):
            assert chan[f.name].default == f.default, f.name
    # the run reader's defaults: a run configuration without [optimizer] and [model]
    cfg = RunConfig.from_dict(copy.deepcopy({k: v for k, v in RUN_BASE.items()
                                             if k != "optimizer"}))
    opt = run["optimizer"]
    assert cfg.settings.starts == opt["starts"].default
    assert (cfg.screen, cfg.keep) == (opt["screen"].default, opt["keep"].default)
    assert cfg.settings.draws == opt["draws"].default
    assert cfg.settings.jac_step == opt["jac_step"].default
    assert cfg.settings.importance == opt["importance"].default
    assert cfg.settings.search_retries == opt["search_retries"].default
    assert cfg.settings.importance_adapt == opt["importance_adapt"].default
    assert cfg.proposal == opt["proposal"].default
    assert cfg.duration == run["model"]["duration"].default
    # the scenario dataclasses' defaults
    from models.probe_cone import config as pc
    from models.probe_cone import schema as S

    for cls, table in ((pc.CaptureSensors, S.CAPTURE_SENSORS), (pc.Integration, S.INTEGRATION),
                       (pc.AxialAbsorber, S.AXIAL_ABSORBER),
                       (pc.LateralAbsorber, S.LATERAL_ABSORBER)):
        for f in dataclasses.fields(cls):
            if f.default is not dataclasses.MISSING and table[f.name].default is not None:
                assert table[f.name].default == f.default, (cls.__name__, f.name)


def test_walk_names_every_declared_key_once():
    for kind, unit in documents():
        names = [n for n, _ in walk(document(kind, unit))]
        assert len(names) == len(set(names))


# ------------------------------------------------------------------------------------------
# the kinds without a docking unit: rig and appendage configurations
def _read_rig(d):
    """The rig configuration and its identification settings as the fit takes them (each
    channel's noise level: the given one or the default, :func:`identification.rig.noise_of`)."""
    from identification.rig import IDENTIFY, IdentifySettings, noise_of
    from models.hydraulic import RigConfig

    d = copy.deepcopy(d)
    cfg = RigConfig.from_dict(d)           # its [identify], as given, read by IdentifySettings
    settings = IdentifySettings.from_dict(d["identify"]) if "identify" in d else None
    if settings is not None:
        settings = dataclasses.replace(settings, noise={
            n: noise_of(n, settings) for n in sorted(IDENTIFY["noise"].names())})
    return dataclasses.replace(cfg, identify={}), settings


def _read_appendage(d):
    from models.appendage import AppendageConfig

    return AppendageConfig.from_dict(copy.deepcopy(d))


def _manifest_reader(kind):
    """A reader of a manifest's parsed tables: the manifest's reader on the shipped file, its
    tables replaced by the given ones (paths stay relative to the shipped file)."""
    from unittest import mock

    from recon.app.campaign import load_manifest
    from recon.app.fleet import load_fleet

    def read(d):
        with mock.patch("recon.io.load_toml", lambda _path: copy.deepcopy(d)):
            return (load_manifest if kind == "campaign" else load_fleet)(OTHER_FILES[kind][0])
    return read


def _read_hysteresis(d):
    from models.hysteresis import element_from_dict

    return element_from_dict(copy.deepcopy(d))


def _read_modes(d):
    from identification.resonance.pipeline import coupling_settings

    return coupling_settings(copy.deepcopy(d))


OTHER_READERS = {"rig": _read_rig, "appendage": _read_appendage, "hysteresis": _read_hysteresis,
                 "modes": _read_modes,
                 "campaign": _manifest_reader("campaign"), "fleet": _manifest_reader("fleet")}


def _other_bases(kind):
    """The shipped files of ``kind`` and, for a manifest, the tables they lack: a flight's
    own options, a [[glob]] (alone: its flights are named by their files)."""
    out = [load_toml(f) for f in OTHER_FILES[kind]]
    if kind in ("campaign", "fleet"):
        d = copy.deepcopy(out[0])
        d["flight"][0]["options"] = {"mcmc": "auto"}
        out.append(d)
        d = {k: v for k, v in copy.deepcopy(out[0]).items() if k != "flight"}
        d["glob"] = [{"pattern": "realistic/*.parquet", "config": "realistic/run.toml",
                      "options": {"mcmc": False}} if kind == "campaign" else
                     {"pattern": "flight_*.mechanism.parquet", "options": {"mcmc": False}}]
        out.append(d)
    return out


def _other_tables(table: Table, path=()):
    """``(path, table)`` of every fixed table under ``table``; an array of tables by its first
    entry (``("rods", 0)``)."""
    for t in table.tables():
        p = path + ((t.name, 0) if t.array else (t.name,))
        yield p, t
        yield from _other_tables(t, p)


def _dotted_of(path) -> str:
    """The dotted key the readers name: ``rods[0].length``."""
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
    return out


def _other_cases(kind):
    """``(path, table, base)``: each fixed table of ``kind``'s declaration with a shipped file
    that holds it (the first such file)."""
    doc = document(kind)
    yield (), doc, _other_bases(kind)[0]
    for path, table in _other_tables(doc):
        for d in _other_bases(kind):
            try:
                _at(d, path)
            except (KeyError, IndexError):
                continue
            yield path, table, d
            break
        else:
            raise AssertionError(f"no shipped {kind} file has {_dotted_of(path)}")


_SKIP = object()


def _other_example(key: Key, table: Mapping, present=None, kind=None):
    """A value of ``key`` the reader accepts in ``table`` as it stands."""
    if present is None and key.type == "vector:2" and key.default is None:
        return [0.0, 1.0]                     # an [identify.bounds] box: lower < upper
    if present is None and key.name == "phi_rate":
        return [0.1] * len(table["phi"])      # one rate per rod
    if kind == "hysteresis" and present is None:
        # the keys of the other variant (k3), the other form of a branch (k) and the tolerance
        # (bounded by the element's first segment): test_hysteresis_alternatives_and_variants
        return {"tolerance": 1e-9}.get(key.name, _SKIP)
    if present is None and key.name == "truth":   # a file beside the manifest
        return {"campaign": "nominal.truth.json", "fleet": "flight_1.truth.json"}[kind]
    if present is None and key.name == "config":
        return "run.toml"
    if present is None and key.name == "scenario":
        return "../../models/probe_cone/presets/reference.toml"
    return _example(key, present)


@pytest.mark.parametrize("kind", OTHER_FILES)
def test_other_reader_and_declaration_agree_on_every_key(kind):
    read, v = OTHER_READERS[kind], _validator(kind)
    for path, table, base in _other_cases(kind):
        read(base)
        d = copy.deepcopy(base)
        _at(d, path)[UNKNOWN] = 1.0
        exc = _refuses(read, d, _dotted_of(path + (UNKNOWN,)))
        listed = _listed(exc.what)
        if listed:
            assert listed == table.names(), path
        assert not v.is_valid(d), path
        for key in table.keys():
            d = copy.deepcopy(base)
            t = _at(d, path)
            t[key.name] = _other_example(key, t, t.get(key.name), kind)
            if t[key.name] is _SKIP:
                continue
            read(d)
            assert not [e.message for e in v.iter_errors(d)], (path, key.name)
        # every table the declaration requires: refused by both when missing
        for sub in table.tables():
            if sub.required:
                d = copy.deepcopy(base)
                _at(d, path).pop(sub.name)
                _refuses(read, d, _dotted_of(path + (sub.name,)))
                assert not v.is_valid(d), (path, sub.name)
        for key in table.keys():
            if key.required:
                d = copy.deepcopy(base)
                _at(d, path).pop(key.name)
                with pytest.raises(InputError):
                    read(d)
                assert not v.is_valid(d), (path, key.name)


@pytest.mark.parametrize("kind,least", [("rig", 40), ("appendage", 15), ("hysteresis", 8),
                                        ("modes", 10),
                                        ("campaign", 30),
                                        ("fleet", 45)])
def test_other_value_out_of_declared_bounds_is_refused_by_both(kind, least):
    read, v = OTHER_READERS[kind], _validator(kind)
    checked = 0
    for path, table, base in _other_cases(kind):
        for key in table.keys():
            lim = key.limits()
            if lim is None:
                continue
            for bad in _beyond(lim):
                d = copy.deepcopy(base)
                _at(d, path)[key.name] = int(bad) if key.type == "integer" else float(bad)
                _refuses(read, d, _dotted_of(path + (key.name,)))
                assert not v.is_valid(d), (path, key.name, bad)
                checked += 1
    assert checked >= least


def _other_dataclasses():
    from identification import rig as R
    from models import appendage as A
    from models import hydraulic as H

    from identification.engines.fleet import FleetSettings
    from recon.manifest import FLEET_TABLE

    ident = R.IDENTIFY
    fleet = FLEET_TABLE.replace(entries=tuple(e for e in FLEET_TABLE.entries
                                              if e.name != "shared"))
    return {"campaign": (), "fleet": ((FleetSettings, fleet),), "hysteresis": (), "modes": (),
            "rig": ((H.ActuatorParams, H.ACTUATOR), (H.SolverSettings, H.SOLVER),
                    (H.LoadSettings, H.LOAD), (H.HexapodGeometry, H.HEXAPOD),
                    (R.IdentifySettings, ident)),
            "appendage": ((A.AppendageConfig, A.APPENDAGE), (A.Spacecraft, A.SPACECRAFT),
                          (A.Rod, A.RODS), (A.Hinge, A.HINGES), (A.Load, A.LOADS),
                          (A.Clamp, A.CLAMPS), (A.InitialState, A.INITIAL))}


@pytest.mark.parametrize("kind", OTHER_FILES)
def test_other_declarations_are_the_dataclasses(kind):
    """Each table's keys are the fields of the dataclass it builds, and a declared default
    is the field's default (a field without one is a required key, or one whose default the
    reader supplies: checked by the next test)."""
    for cls, table in _other_dataclasses()[kind]:
        fields = {f.name: f for f in dataclasses.fields(cls)}
        assert set(fields) == table.names(), cls.__name__
        for name, f in fields.items():
            e = table[name]
            if not isinstance(e, Key):
                continue
            if f.default is not dataclasses.MISSING:
                want = list(f.default) if isinstance(f.default, tuple) else f.default
                assert e.default == want, (cls.__name__, name)
    if kind == "rig":
        from identification.rig import _DEFAULT_NOISE, FITTABLE, IDENTIFY

        assert IDENTIFY["bounds"].names() == set(FITTABLE)
        assert {k.name: k.default for k in IDENTIFY["noise"].keys()} == _DEFAULT_NOISE


@pytest.mark.parametrize("kind,least", [("rig", 8), ("appendage", 8), ("hysteresis", 4),
                                        ("campaign", 1),
                                        ("fleet", 9)])
def test_declared_other_defaults_are_what_the_reader_takes(kind, least):
    """The file read without an optional key is the file read with the key at its declared
    default."""
    read = OTHER_READERS[kind]
    checked = 0
    for path, table, base in _other_cases(kind):
        for key in table.keys():
            if key.required or key.default is None:
                continue
            without = copy.deepcopy(base)
            _at(without, path).pop(key.name, None)
            with_default = copy.deepcopy(without)
            _at(with_default, path)[key.name] = copy.deepcopy(key.default)
            assert repr(read(without)) == repr(read(with_default)), (path, key.name)
            checked += 1
    assert checked >= least


def test_the_modes_reader_takes_the_declared_keys():
    """The modes reader's key sets (identification.resonance.pipeline) are the declared ones,
    and it refuses a key the declaration lacks, naming it."""
    from identification.modes_schema import MODE_S, MODES
    from identification.resonance.pipeline import MODE_S_KEYS, MODES_KEYS

    assert set(MODES_KEYS) == MODES.names()
    assert set(MODE_S_KEYS) == MODE_S.names()
    from identification.resonance.pipeline import coupling_settings
    from models.errors import InputError

    with pytest.raises(InputError) as e:
        coupling_settings({"modal_shapes": [[1.0]]})
    assert e.value.key == "modal_shapes"


def test_hysteresis_alternatives_and_variants():
    """What the declaration gives as alternatives is accepted by both: a branch by its
    stiffnesses k instead of its forces Q, a side's k3 on a friction brake, the negative side
    as "mirror"; a side's k3 on a constant element and k_max on a brake are refused by the
    reader, naming the key (the JSON Schema does not tell the variants apart)."""
    import numpy as np

    const, brake = (load_toml(p) for p in OTHER_FILES["hysteresis"])
    v = _validator("hysteresis")
    fwd = const["positive"]["forward"]
    d = copy.deepcopy(const)
    d["positive"]["forward"] = {"q": fwd["q"],
                                "k": (np.diff(fwd["Q"]) / np.diff(fwd["q"])).tolist()}
    assert repr(_read_hysteresis(d)) == repr(_read_hysteresis(const))
    assert v.is_valid(d)
    assert "k3" in brake["positive"] and v.is_valid(brake)
    _read_hysteresis(brake)
    d = copy.deepcopy(const)
    d["negative"] = "mirror"
    _read_hysteresis(d)
    assert v.is_valid(d)
    d["negative"] = "mirrored"
    assert not v.is_valid(d)
    for base, key in ((const, "k3"), (brake, "k_max")):
        d = copy.deepcopy(base)
        d["positive"][key] = 1e9
        _refuses(_read_hysteresis, d, f"positive.{key}")


# ------------------------------------------------------------------------------------------
# the command line
@pytest.mark.parametrize("kind,unit", documents())
def test_schema_command_writes_the_shipped_file(kind, unit, tmp_path):
    from click.testing import CliRunner

    from recon.app.cli import cli

    out = tmp_path / "s.json"
    args = ["schema", kind, "-o", str(out)] + (["--unit", unit] if unit else [])
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert out.read_text() == schema_path(kind, unit).read_text()


def test_schema_command_refuses_an_unknown_unit():
    from click.testing import CliRunner

    from recon.app.cli import cli

    result = CliRunner().invoke(cli, ["schema", "scenario", "--unit", "nope"])
    assert result.exit_code == 2
    assert "'--unit': unknown docking unit 'nope'" in result.output


@pytest.mark.parametrize("unit", UNITS)
def test_declared_scenario_defaults_are_what_the_reader_takes(unit):
    """For every optional key with a declared default: the scenario read without the key is
    the scenario read with the key set to the declared default (an optional table the
    shipped scenario lacks is tried only where it can be given with its defaults alone)."""
    base, _doc, read = _scenario_cases(unit)
    checked = 0
    for path, table in _tables(get_scenario_schema(unit)):
        if not path or path[0] in ("meta",):
            continue                                  # names and text: nothing is built
        d0 = copy.deepcopy(base)
        try:
            _at(d0, path)
        except KeyError:
            if any(k.required for k in table.keys()) or table.tables():
                continue
            _at(d0, path, create=True)
        for key in table.keys():
            if key.required or key.default is None or key.name == "source":
                continue
            without = copy.deepcopy(d0)
            _at(without, path).pop(key.name, None)
            with_default = copy.deepcopy(without)
            _at(with_default, path)[key.name] = copy.deepcopy(key.default)
            assert repr(read(without)) == repr(read(with_default)), ".".join(path + (key.name,))
            checked += 1
    assert checked >= 10


def _perturbed(key: Key, v):
    """Values of ``key``'s type near ``v`` but different from it."""
    import numpy as np

    base = key.type.split(":")[0]
    if isinstance(v, bool):
        return [not v]
    if base == "choice":
        return [c for c in key.choices if c != v]
    if isinstance(v, str):
        return ["other"]
    if isinstance(v, (int, float)):
        return ([v + 1, v - 1] if base == "integer" else
                [v * 1.01 + 1e-6, v * 0.99 - 1e-6, v * 1.0001 + 1e-9])
    if isinstance(v, list):
        a = np.asarray(v, dtype=float)
        return [(a * 1.01 + 1e-6).tolist(), (a * 0.99).tolist()]
    return []


@pytest.mark.parametrize("unit", UNITS)
def test_every_declared_scenario_key_is_read(unit):
    """A declared key the reader took among its keys but never read would be silently
    ignored: changing any key's value in the shipped scenario (or adding an optional one
    with another value than its default) changes the scenario read, or is refused."""
    base, _doc, read = _scenario_cases(unit)
    dead = []
    for path, table in _tables(get_scenario_schema(unit)):
        if path and path[0] == "meta":
            continue
        try:
            present = _at(base, path)
        except KeyError:
            continue
        ref = repr(read(base))
        for key in table.keys():
            if key.name in ("source", "unit") or key.type == "table":
                continue
            v = present.get(key.name, key.default)
            if v is None:
                continue
            live = False
            for w in _perturbed(key, v):
                d = copy.deepcopy(base)
                _at(d, path)[key.name] = w
                try:
                    live = repr(read(d)) != ref
                except InputError:
                    live = True
                if live:
                    break
            if not live:
                dead.append(".".join(path + (key.name,)))
    assert not dead, f"declared but without effect: {dead}"
