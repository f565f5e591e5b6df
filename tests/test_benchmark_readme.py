"""``benchmarks/README.md`` is generated, and every command it or a design page shows runs.

* the committed page is what ``benchmarks/make_readme.py`` writes from ``benchmarks/results/``;
* every command line in it and in the design pages (``docs/design/*.rst``) names a script
  that exists and options its parser accepts: ``python benchmarks/NAME.py ...`` is parsed by
  the script's own ``argparse`` parser (its ``main`` is stopped right after parsing, so
  nothing runs), ``dockrecon ...`` by the click command with ``--help`` appended (an unknown
  option or command fails), ``make TARGET`` against the Makefile, ``pytest`` by its test
  files;
* every design page is in the design toctree, which is in the site's, and no code,
  configuration or documentation page cites the benchmark page as its reason.

Nothing here runs a benchmark: a few imports, a few seconds.
"""
from __future__ import annotations

import argparse
import importlib.util
import inspect
import re
import shlex
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"
DESIGN = ROOT / "docs" / "design"
README = BENCH / "README.md"
#: first words of a command line (after an optional ``.venv/bin/``)
PROGRAMS = ("python", "dockrecon", "make", "pytest")


def _make_readme():
    spec = importlib.util.spec_from_file_location("bench_make_readme", BENCH / "make_readme.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_committed_readme_is_the_generated_one(tmp_path):
    """Regenerated into a temporary file, the page equals the committed one (rerun
    ``make bench-readme`` after changing a results file or the generator)."""
    out = tmp_path / "README.md"
    assert _make_readme().main(["--output", str(out)]) == 0
    assert out.read_text() == README.read_text(), (
        "benchmarks/README.md is not what benchmarks/make_readme.py writes: run "
        "`make bench-readme` (or `python benchmarks/make_readme.py`) and commit the page")
    assert len(out.read_text().splitlines()) < 300


def _blocks(text: str) -> list[str]:
    """The lines of the literal blocks of a page: Markdown ``` fences; reStructuredText blocks
    after a line ending in ``::`` or a ``code-block`` directive (the indented lines that
    follow). A line ending in a backslash goes on in the next."""
    out, fence, block_indent = [], False, None
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip())
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        if block_indent is not None:
            if line.strip() and indent <= block_indent:
                block_indent = None
            elif line.strip():
                out.append(line.strip())
                continue
        if fence:
            out.append(line.strip())
        elif line.rstrip().endswith("::") or line.lstrip().startswith(".. code-block::"):
            block_indent = indent
    joined = []
    for line in out:
        if joined and joined[-1].endswith("\\"):
            joined[-1] = joined[-1][:-1].rstrip() + " " + line
        else:
            joined.append(line)
    return joined


def _commands(path: Path) -> list[str]:
    """The command lines of a Markdown or reStructuredText page: inline literals and lines
    of literal blocks whose first word (after ``.venv/bin/``) is in :data:`PROGRAMS`."""
    text = path.read_text()
    found = re.findall(r"``([^`\n]+)``", text) + re.findall(r"(?<!`)`([^`\n]+)`(?!`)", text)
    found += [x.removeprefix("$ ") for x in _blocks(text)]
    out = []
    for cmd in found:
        words = cmd.split()
        if words and words[0].removeprefix(".venv/bin/") in PROGRAMS and len(words) > 1:
            out.append(cmd.strip())
    return sorted(set(out))


def _pages() -> list[Path]:
    return [README] + sorted(DESIGN.glob("*.rst"))


def _all_commands() -> list[tuple[str, str]]:
    return [(p.relative_to(ROOT).as_posix(), c) for p in _pages() for c in _commands(p)]


class _Parsed(Exception):
    """Raised right after a script's parser accepted its arguments."""


def _check_script(script: Path, args: list[str], monkeypatch) -> None:
    """``script``'s argparse parser accepts ``args`` (SystemExit 2 otherwise); the script's
    ``main`` is stopped at the parse. A ``bench_*.py`` takes no arguments (it is not
    imported: it sets up its own numba cache)."""
    if script.name.startswith("bench_"):
        assert not args, f"{script.name} takes no arguments"
        return
    monkeypatch.syspath_prepend(str(BENCH))
    monkeypatch.syspath_prepend(str(ROOT))
    spec = importlib.util.spec_from_file_location(f"bench_cmd_{script.stem}", script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    parse = argparse.ArgumentParser.parse_args

    def parse_and_stop(self, a=None, namespace=None):
        parse(self, a, namespace)
        raise _Parsed

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_and_stop)
    monkeypatch.setattr(sys, "argv", [str(script), *args])
    main = mod.main
    with pytest.raises(_Parsed):
        main(args) if inspect.signature(main).parameters else main()


def _check_dockrecon(args: list[str]) -> None:
    from click.testing import CliRunner

    from recon.app.cli import cli

    res = CliRunner().invoke(cli, [*args, "--help"])
    assert res.exit_code == 0, f"dockrecon {shlex.join(args)}: {res.output}"


@pytest.mark.parametrize("page,command", _all_commands())
def test_every_command_of_the_readme_and_the_design_pages_runs(page, command, monkeypatch):
    """The script exists and accepts the options (see the module docstring)."""
    words = shlex.split(command)
    program = words[0].removeprefix(".venv/bin/")
    if program == "python":
        script = ROOT / words[1]
        assert script.is_file() and script.parent == BENCH, f"{page}: no script {words[1]}"
        _check_script(script, words[2:], monkeypatch)
    elif program == "dockrecon":
        _check_dockrecon(words[1:])
    elif program == "pytest":
        paths = [w.split("::")[0] for w in words[1:] if w.startswith("tests/")]
        assert paths and all((ROOT / p).exists() for p in paths), f"{page}: {command}"
    else:
        targets = re.findall(r"^([A-Za-z][\w-]*):", (ROOT / "Makefile").read_text(), re.M)
        assert all(w in targets for w in words[1:]), f"{page}: {command}: no such target"


def test_the_readme_and_the_design_pages_show_commands():
    """The extraction above finds the commands (so that the test cannot pass on nothing)."""
    cmds = [c for _, c in _all_commands()]
    assert any(c.startswith("python benchmarks/run.py") for c in cmds)
    assert any(c.startswith("dockrecon study calibration") for c in cmds)


def test_every_design_page_is_in_the_toctree():
    """docs/index.rst holds design/index, whose toctree holds every page of docs/design/, and
    every page the README's index names exists."""
    assert "design/index" in (ROOT / "docs" / "index.rst").read_text()
    index = (DESIGN / "index.rst").read_text()
    toc = set(re.findall(r"^   (\w+)\s*$", index, re.M))
    pages = {p.stem for p in DESIGN.glob("*.rst")} - {"index"}
    assert pages and pages == toc, (pages - toc, toc - pages)
    named = {page for _, page in _make_readme().FILES.values() if page}
    assert {n.removesuffix(".rst") for n in named} <= pages


def test_no_code_cites_the_benchmark_page_as_its_reason():
    """Reasons live in docs/design/ (with the figures and the commands); the benchmark page is
    generated and holds current figures only, so no code, configuration, test or page of the
    documentation cites it (the design pages point to its tables as the current figures)."""
    diary = "benchmarks/" + "README"
    hits = []
    for top in ("models", "identification", "recon", "reports", "telemetry_samples", "tests",
                "docs"):
        for path in (ROOT / top).rglob("*"):
            if (path.suffix not in (".py", ".toml", ".rst") or "_build" in path.parts
                    or path == Path(__file__).resolve() or path.parent == DESIGN):
                continue
            for k, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                if diary in line:
                    hits.append(f"{path.relative_to(ROOT)}:{k}")
    assert not hits, f"cite docs/design/ instead: {hits}"
