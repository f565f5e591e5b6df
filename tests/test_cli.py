"""The command-line skeleton: version, error lines, exit codes."""
import click
import pytest
from click.testing import CliRunner

from models.errors import DataError, InputError
from recon.app.cli import cli
from recon.app.cli.options import Group as _Group


def _group_raising(exc: Exception) -> click.Group:
    @click.group(cls=_Group)
    @click.option("-v", "--verbose", count=True)
    @click.pass_context
    def root(ctx, verbose):
        ctx.obj = {"verbose": verbose, "quiet": False}

    @root.command()
    def boom():
        raise exc

    return root


def test_version():
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.output.startswith("dockrecon, version ")


def test_help_lists_groups():
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    for name in ("simulate", "identify"):
        assert name in result.output


@pytest.mark.parametrize(("exc", "code", "line"), [
    (InputError("missing column", source="rec.csv", key="force"), 2,
     "error: rec.csv: 'force': missing column"),
    (InputError("not a number: 'x'", source="rec.csv", key="q", row=7), 2,
     "error: rec.csv: row 7, 'q': not a number: 'x'"),
    (DataError("backwards time", source="tm.parquet", key="t", row=3), 65,
     "error: tm.parquet: row 3, 't': backwards time"),
])
def test_input_errors_are_one_line_with_exit_code(exc, code, line):
    result = CliRunner().invoke(_group_raising(exc), ["boom"])
    assert result.exit_code == code
    assert result.stderr.strip() == line
    assert "Traceback" not in result.output


def test_internal_failure_exits_1_without_traceback_unless_verbose():
    root = _group_raising(RuntimeError("kaput"))
    quiet = CliRunner().invoke(root, ["boom"])
    assert quiet.exit_code == 1
    assert "Traceback" not in quiet.stderr
    assert "kaput" in quiet.stderr
    loud = CliRunner().invoke(root, ["-v", "boom"])
    assert loud.exit_code == 1
    assert "Traceback" in loud.stderr


def test_validate_quiet_prints_the_verdict_and_errors_only(cli_run):
    """``validate -q`` of a record with warnings (the realistic records' gyro gaps): the
    verdict on stdout, nothing on stderr; without -q the warnings are there."""
    from pathlib import Path

    rec = Path(__file__).resolve().parents[1] / "telemetry_samples" / "flights" / \
        "realistic" / "nominal.parquet"
    loud = cli_run("validate", rec)
    assert loud.exit_code == 0 and "warning:" in loud.stderr
    r = cli_run("-q", "validate", rec)
    assert r.exit_code == 0 and r.stderr == ""
    assert r.stdout.strip().endswith("warnings: usable")
