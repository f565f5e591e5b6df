"""The generated reference of the documentation (docs/_ext/dockrecon_files.py) names every
command, option and configuration key a user can write.

The checks enumerate the command line and the configuration schemas here, independently of
the generator, and look each name up in the generated text; no Sphinx needed.
"""
from __future__ import annotations

import dataclasses
import importlib
import sys
from pathlib import Path
from typing import Any, Mapping

import click
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))

import dockrecon_files  # noqa: E402


@pytest.fixture(scope="module")
def page() -> str:
    return dockrecon_files.render()


def _commands(group, path=("dockrecon",)):
    yield path, group
    if isinstance(group, click.Group):
        for name, cmd in group.commands.items():
            yield from _commands(cmd, path + (name,))


def test_every_command_and_option_is_in_the_page(page):
    from recon.app.cli import cli

    missing = []
    for path, cmd in _commands(cli):
        title = " ".join(path)
        if f"``{title}``" not in page:
            missing.append(title)
        for p in cmd.params:
            names = p.opts + p.secondary_opts if isinstance(p, click.Option) \
                else [p.human_readable_name]
            for n in names:
                if n not in page:
                    missing.append(f"{title} {n}")
    assert not missing, f"not in the generated page: {missing}"


def test_every_exit_code_is_in_the_page(page):
    codes = [c for c, _ in dockrecon_files.exit_codes()]
    # the codes of the CLI's docstring, which the README's table repeats
    assert sorted(codes) == [0, 1, 2, 3, 4, 65, 74, 75, 130, 143]
    section = page.split("Exit codes\n", 1)[1]
    for c in codes:
        assert f"* - {c}\n" in section


def test_every_run_configuration_key_is_in_the_page(page):
    from recon.config import DEFAULT_RUN, OPTIMIZER_KEYS, RUN_TABLES
    from identification.engines.mcmc import SamplerSettings
    from recon.observation import ChannelModel
    from identification import space

    keys = [f"[{t}]" for t in RUN_TABLES]
    keys += [f"``optimizer.{k}``" for k in OPTIMIZER_KEYS]
    keys += [f"``{t}.{k}``" for t, table in DEFAULT_RUN.items() for k in table]
    keys += [f"``sampler.{f.name}``" for f in dataclasses.fields(SamplerSettings)]
    keys += [f"``observation.channels.NAME.{f.name}``" for f in dataclasses.fields(ChannelModel)
             if f.name != "name"]
    keys += ["``observation.clock_offset``"]
    keys += [f"``parameters.NAME.{k}``" for k in space._KEYS]
    keys += ["``model.duration``", "``model.rate``", "``model.fit_after_capture``",
             "``model.fit_before_contact``"]
    missing = [k for k in keys if k not in page]
    assert not missing, f"not in the generated page: {missing}"


def _dotted_keys(d: Mapping[str, Any], prefix: str = ""):
    """Every key of a TOML dict, dotted; the keys of an array of tables as ``name.key``."""
    for k, v in d.items():
        dotted = f"{prefix}{k}"
        yield dotted
        if isinstance(v, Mapping):
            yield from _dotted_keys(v, dotted + ".")
        elif isinstance(v, list):
            for e in v:
                if isinstance(e, Mapping):
                    yield from _dotted_keys(e, dotted + ".")


def test_every_key_of_the_shipped_scenarios_and_configs_is_in_the_page(page):
    from recon.config import RUN_TABLES
    from recon.io import load_toml

    files = [ROOT / p for p in dockrecon_files.UNIT_PRESETS.values()]
    files += [ROOT / s for *_, samples in dockrecon_files.OTHER_FILES for s in samples]
    missing = []
    for f in files:
        d = load_toml(f)
        for k in RUN_TABLES:
            d.pop(k, None)
        for dotted in _dotted_keys(d):
            if f"``{dotted}``" not in page:
                missing.append(f"{f.name}: {dotted}")
    assert not missing, f"not in the generated page: {missing}"


def test_every_field_of_the_probe_cone_tables_is_in_the_page(page):
    """The dataclasses a probe-cone scenario is built from: each field a reader takes from a
    key of the same name appears (fields built from differently named keys are checked by
    the preset test above)."""
    cfg = importlib.import_module("models.probe_cone.config")
    tables = {"Latches": "latches", "Slots": "slots", "CaptureSensors": "capture_sensors",
              "Integration": "integration", "ContactLaw": "contact", "Thrust": "thrust",
              "InitialConditions": "initial", "AxialAbsorber": "probe.axial_absorber",
              "LateralAbsorber": "probe.lateral_absorber",
              "TorsionAbsorber": "probe.torsion_absorber"}
    missing = []
    for cls_name, table in tables.items():
        for f in dataclasses.fields(getattr(cfg, cls_name)):
            if f"``{table}.{f.name}``" not in page:
                missing.append(f"{table}.{f.name}")
    assert not missing, f"not in the generated page: {missing}"


def test_every_key_of_the_shipped_run_configurations_is_in_the_page(page):
    """The shipped run TOMLs, with parameter and channel names generalized to ``NAME``."""
    from recon.io import load_toml

    flights = ROOT / "telemetry_samples" / "flights"
    files = sorted(flights.glob("*run.toml")) + sorted((flights / "realistic").glob("*.toml"))
    assert files
    missing = []
    for f in files:
        for dotted in _dotted_keys(load_toml(f)):
            parts = dotted.split(".")
            for i, p in enumerate(parts[:-1]):
                if p in ("parameters", "channels") and i + 1 < len(parts):
                    parts[i + 1] = "NAME"
            key = ".".join(parts)
            if key.endswith(".NAME") or key in ("parameters", "observation.channels"):
                continue                            # a user-chosen name: checked above
            if f"``{key}``" not in page and f"[{key}]" not in page:
                missing.append(f"{f.name}: {dotted}")
    assert not missing, f"not in the generated page: {missing}"


def test_the_code_the_theory_pages_point_to_exists():
    """Every module, function or class a theory page names (``:mod:``, ``:func:``,
    ``:class:`` roles) imports, and every file path it quotes exists."""
    import re

    missing = []
    for page_path in sorted((ROOT / "docs" / "theory").glob("*.rst")):
        text = page_path.read_text()
        for role, target in re.findall(r":(mod|func|class):`~?([A-Za-z0-9_.]+)`", text):
            parts = target.split(".")
            for cut in range(len(parts), 0, -1):   # longest importable module prefix
                try:
                    obj = importlib.import_module(".".join(parts[:cut]))
                except ImportError:
                    continue
                try:
                    for attr in parts[cut:]:
                        obj = getattr(obj, attr)
                except AttributeError:
                    missing.append(f"{page_path.name}: {target}")
                break
            else:
                missing.append(f"{page_path.name}: {target}")
        for path in re.findall(r"``((?:models|identification|recon|reports|telemetry_samples)"
                               r"/[A-Za-z0-9_./-]+)``", text):
            if not (ROOT / path).exists():
                missing.append(f"{page_path.name}: {path}")
        # kernel modules quoted by file name next to their package path
        for name in re.findall(r"``([a-z_]+\.py)``", text):
            if not list(ROOT.glob(f"*/**/{name}")):
                missing.append(f"{page_path.name}: {name}")
    assert not missing, f"theory pages point to code that is not there: {missing}"


def test_the_readme_synopsis_names_every_command_and_option():
    """The README's command synopsis is written by hand: it must not fall behind the CLI
    (``-h`` / ``-v`` / ``-q`` and ``--version`` are explained once, above it)."""
    from recon.app.cli import cli

    readme = (ROOT / "README.md").read_text()
    synopsis = readme.split("## The command line", 1)[1].split("```", 2)[1]
    shared = {"-h", "--help", "-v", "--verbose", "-q", "--quiet", "--version"}
    missing = []
    for path, cmd in _commands(cli):
        if isinstance(cmd, click.Group):
            continue
        title = " ".join(path)
        if title not in synopsis:
            missing.append(title)
        for p in cmd.params:
            if not isinstance(p, click.Option):
                continue
            names = [n for n in p.opts + p.secondary_opts if n not in shared]
            # a flag pair is written --[no-]flag
            if names and not any(n in synopsis or n.replace("--no-", "--[no-]") in synopsis
                                 or n.replace("--", "--[no-]", 1) in synopsis for n in names):
                missing.append(f"{title} {'/'.join(names)}")
    assert not missing, f"not in the README's synopsis: {missing}"


def test_no_formula_in_a_docstring_has_a_doubled_backslash():
    r"""A raw docstring written as if it were not raw keeps ``\\omega``, which
    MathJax shows as a line break and the letters "omega". Every ``:math:`` role and
    ``.. math::`` block of every docstring in the packages is checked for a doubled backslash
    before a command name (a TeX line break is followed by a space or a newline here)."""
    import ast
    import re

    role = re.compile(r":math:`([^`]*)`")
    block = re.compile(r"\.\. math::\n((?:[ \t]*\n|[ \t]+\S.*\n?)+)")
    doubled = re.compile(r"\\\\[A-Za-z]")
    bad = []
    for pkg in ("models", "identification", "recon", "reports", "telemetry_samples"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            tree = ast.parse(path.read_text(), filename=str(path))
            for node in ast.walk(tree):
                if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                         ast.AsyncFunctionDef)):
                    continue
                doc = ast.get_docstring(node, clean=False)
                if not doc:
                    continue
                for tex in role.findall(doc) + block.findall(doc):
                    if doubled.search(tex):
                        bad.append(f"{path.relative_to(ROOT)}: {tex.strip()[:60]}")
    assert not bad, f"formulas with a doubled backslash (raw docstring?): {bad}"
