"""Every command the reconstruction's theory page (``docs/theory/reconstruction.rst``) shows
runs, or, for the long studies, is a valid command line.

The commands are the lines of the page's ``.. code-block:: console`` blocks (a line ending in
a backslash goes on in the next). Each is one of three kinds:

* run here: ``dockrecon validate`` (a few seconds) and ``python benchmarks/plot_calibration.py``
  (the figure from the stored study results; its printed summary must be the page's table);
* run among the slow tests: ``dockrecon reconstruct`` of a shipped flight (about a minute on
  2 cores) and ``dockrecon show`` of its result;
* parsed only: ``dockrecon study calibration`` and ``dockrecon study merge`` (tens of minutes
  to hours). The click command is resolved and its ``make_context`` parses the arguments
  (unknown commands and options, missing required ones and bad values fail; option callbacks
  run, output locations are checked for writability), without invoking it; every repository
  path the line names exists, and a study's run configuration passes the study's own check
  against its scenario. Placeholders (``STUDY``, ``PART_1``: words in capitals) become
  directories of the test's own.
"""
from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "theory" / "reconstruction.rst"

#: first words of each kind of command (module docstring)
RUN = ("dockrecon validate", "python benchmarks/plot_calibration.py")
SLOW = ("dockrecon reconstruct", "dockrecon show")
PARSE = ("dockrecon study calibration", "dockrecon study merge")
OUTPUT_FLAGS = ("--output", "-o")


def console_commands(text: str) -> list[str]:
    """The command lines of the ``code-block:: console`` blocks of a page, continuation
    lines joined."""
    lines, indent = [], None
    for line in text.splitlines():
        if indent is not None:
            if line.strip() and len(line) - len(line.lstrip()) <= indent:
                indent = None
            elif line.strip():
                lines.append(line.strip())
                continue
        if line.strip().startswith(".. code-block:: console"):
            indent = len(line) - len(line.lstrip())
    out: list[str] = []
    for line in lines:
        if out and out[-1].endswith("\\"):
            out[-1] = out[-1][:-1].rstrip() + " " + line
        else:
            out.append(line)
    return out


def _kind(command: str) -> str | None:
    for kind, prefixes in (("run", RUN), ("slow", SLOW), ("parse", PARSE)):
        if command.startswith(prefixes):
            return kind
    return None


def _commands(kind: str) -> list[str]:
    return [c for c in console_commands(PAGE.read_text()) if _kind(c) == kind]


def _outputs(words: list[str]) -> set[int]:
    """Indices of the words that follow an output flag."""
    return {i + 1 for i, w in enumerate(words[:-1]) if w in OUTPUT_FLAGS}


def _with_placeholders(words: list[str], tmp: Path) -> list[str]:
    """Placeholders (words in capitals) as directories under ``tmp``: made when an input,
    left to the command when an output."""
    outs = _outputs(words)
    out = []
    for i, w in enumerate(words):
        if re.fullmatch(r"[A-Z][A-Z0-9_]*", w):
            p = tmp / w
            if i not in outs:
                p.mkdir(exist_ok=True)
            w = str(p)
        out.append(w)
    return out


def _repository_paths_exist(words: list[str]) -> list[str]:
    """The repository paths an input word names (``models/...``, ``telemetry_samples/...``,
    ``benchmarks/...``, each part of a ``LABEL=FILE+FILE`` study) that do not exist."""
    outs = _outputs(words)
    missing = []
    for i, w in enumerate(words):
        if i in outs:
            continue
        for part in re.split(r"[=+]", w):
            if re.match(r"(models|telemetry_samples|benchmarks|docs|recon|identification)/",
                        part) and not (ROOT / part).exists():
                missing.append(part)
    return missing


def parse_dockrecon(args: list[str]) -> click.Context:
    """Resolve ``dockrecon ARGS`` to its command and parse the arguments with the command's
    own ``make_context`` (types, ranges, required options, callbacks), without invoking it."""
    from recon.app.cli import cli

    cmd, name, ctx, rest = cli, "dockrecon", None, list(args)
    while isinstance(cmd, click.Group):
        ctx = click.Context(cmd, info_name=name, parent=ctx)
        assert rest, f"dockrecon {shlex.join(args)}: no command after {name}"
        name = rest.pop(0)
        sub = cmd.get_command(ctx, name)
        assert sub is not None, f"dockrecon {shlex.join(args)}: no command {name!r}"
        cmd = sub
    parsed = cmd.make_context(name, rest, parent=ctx)
    parsed.close()
    return parsed


def test_the_page_shows_commands_of_every_kind_and_no_other():
    """Every console command of the page is one of the three kinds (so none goes unchecked),
    and each kind is there (so the checks cannot pass on nothing)."""
    commands = console_commands(PAGE.read_text())
    assert commands
    unknown = [c for c in commands if _kind(c) is None]
    assert not unknown, f"commands of the page that no test checks: {unknown}"
    kinds = {_kind(c) for c in commands}
    assert kinds == {"run", "slow", "parse"}
    for prefix in (*RUN, *SLOW, *PARSE):
        assert any(c.startswith(prefix) for c in commands), prefix


@pytest.mark.parametrize("command", _commands("parse"))
def test_the_study_commands_are_valid_command_lines(command, tmp_path, monkeypatch):
    """A study's command line parses as its click command would parse it, and the files it
    names exist (module docstring)."""
    monkeypatch.chdir(ROOT)
    words = shlex.split(command)
    assert not _repository_paths_exist(words), _repository_paths_exist(words)
    ctx = parse_dockrecon(_with_placeholders(words[1:], tmp_path))
    assert ctx.params, command
    if words[1:3] == ["study", "calibration"]:
        # the study's own check of its run configuration against the scenario, made before
        # any flight is drawn: every initial condition given, mechanism numbers by path
        from recon.app.study import _study_config
        from recon.config import load_scenario, scenario_document

        scenario, config = ctx.params["scenario"], ctx.params["config"]
        _, free, _ = _study_config(config, load_scenario(scenario)[0],
                                   scenario_document(scenario))
        assert len(free) == 12, free


def test_a_wrong_option_or_value_does_not_parse(tmp_path, monkeypatch):
    """The parse above refuses what the command would refuse: an unknown option, a bad
    choice, a missing required option (so the check is not vacuous)."""
    monkeypatch.chdir(ROOT)
    good = shlex.split(_commands("parse")[0])[1:]
    good = _with_placeholders(good, tmp_path)
    parse_dockrecon(good)
    for bad in (good + ["--no-such-option"],
                [w if w != "never" else "sometimes" for w in good],
                [w for i, w in enumerate(good) if w != "--flights"
                 and (i == 0 or good[i - 1] != "--flights")]):
        with pytest.raises(click.UsageError):
            parse_dockrecon(bad)


@pytest.mark.parametrize("command", [c for c in _commands("run")
                                     if c.startswith("dockrecon")])
def test_the_cheap_dockrecon_commands_run(command, cli_run, monkeypatch):
    monkeypatch.chdir(ROOT)
    words = shlex.split(command)
    assert not _repository_paths_exist(words), _repository_paths_exist(words)
    res = cli_run(*words[1:])
    assert res.exit_code == 0, f"{command}: {res.output}"
    assert ": usable" in res.stdout


def test_the_figure_command_runs_and_its_numbers_are_the_page_table(tmp_path):
    """``benchmarks/plot_calibration.py`` as the page shows it (the figure written to a
    temporary file instead of the committed one): it runs, writes a PNG of the committed
    figure's size, and the summary it computes from the stored studies with
    :func:`recon.calibration.coverage` is what the page's table states."""
    import matplotlib.image as mpimg

    (command,) = [c for c in _commands("run") if c.startswith("python ")]
    words = shlex.split(command)
    assert not _repository_paths_exist(words), _repository_paths_exist(words)
    i = words.index("--output")
    committed = ROOT / words[i + 1]
    assert committed.is_file()
    words[i + 1] = str(tmp_path / "fig.png")
    res = subprocess.run([sys.executable, *words[1:]], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert mpimg.imread(tmp_path / "fig.png").shape == mpimg.imread(committed).shape
    page = PAGE.read_text()
    lines = res.stdout.strip().splitlines()
    assert len(lines) == 3
    for line in lines:
        pooled = re.search(r"pooled coverage (\d\.\d{3} / \d\.\d{3})", line).group(1)
        assert f"- {pooled}\n" in page, (pooled, line)
        mean, ks = re.search(r"likelihood-ratio statistic mean (\d+\.\d).*?KS p (\d\.\d\d)",
                             line).groups()
        assert re.search(rf"- {re.escape(mean)}; \d+ of 40; {re.escape(ks)}\n", page), line
        hpd = re.search(r"HPD .*KS p (\d\.\d\d) against the uniform", line)
        if hpd:
            assert re.search(rf"- \d+ of 40; {re.escape(hpd.group(1))}\n", page), line


@pytest.mark.slow
def test_the_reconstruction_commands_run(cli_run, tmp_path, monkeypatch):
    """``dockrecon reconstruct`` of the shipped flight as the page shows it (into a temporary
    directory), then ``dockrecon show`` of its result: a plausible fit, importance sampling
    only, and the table of every free parameter."""
    import json

    monkeypatch.chdir(ROOT)
    rec, show = (shlex.split(c) for c in _commands("slow"))
    assert rec[1] == "reconstruct" and show[1] == "show"
    assert not _repository_paths_exist(rec), _repository_paths_exist(rec)
    out = rec[rec.index("--output") + 1]
    assert show[2] == out
    rec[rec.index("--output") + 1] = str(tmp_path / "nominal")
    res = cli_run(*rec[1:])
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "nominal" / "result.json").read_text())
    assert doc["status"] == "ok"
    assert doc["diagnostics"]["method"] == "importance"
    res = cli_run("show", str(tmp_path / "nominal"))
    assert res.exit_code == 0, res.output
    free = [n for n, p in doc["parameters"].items() if p["prior"].get("kind") != "fixed"]
    assert len(free) == 12
    for name in free:
        assert name in res.stdout
