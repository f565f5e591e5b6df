"""The ``dockrecon`` command line: parse, call one library function, print.

Exit codes
----------
0
    success.
1
    internal failure (a bug or an environment problem); the traceback is shown with ``-v``.
2
    bad user input (a file, a key, a column, an option): one line ``error: <file>: <what>``.
65
    the input reads but cannot be trusted (unusable telemetry), as ``sysexits`` EX_DATAERR.

Data go to files or stdout (``--json``); logs and progress go to stderr.
"""
from __future__ import annotations

import logging
import sys
import traceback
from importlib import metadata

import click

from models.errors import InputError

__all__ = ["cli", "main"]

log = logging.getLogger("dockrecon")


def _version() -> str:
    try:
        return metadata.version("dockrecon")
    except metadata.PackageNotFoundError:  # running from a source tree without install
        return "0+unknown"


class _Group(click.Group):
    """A click group that turns dockrecon errors into one line and an exit code."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except InputError as exc:
            if _verbosity(ctx) > 0:
                traceback.print_exc()
            click.echo(f"error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo("error: interrupted", err=True)
            ctx.exit(130)
        except Exception as exc:  # an internal failure, not the user's
            if _verbosity(ctx) > 0:
                traceback.print_exc()
            else:
                click.echo(f"error: internal failure: {exc.__class__.__name__}: {exc} "
                           "(run with -v for the traceback)", err=True)
            ctx.exit(1)


def _verbosity(ctx: click.Context) -> int:
    root = ctx.find_root()
    return int((root.obj or {}).get("verbose", 0)) if isinstance(root.obj, dict) else 0


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(_version(), "--version", prog_name="dockrecon")
@click.option("-v", "--verbose", count=True, help="More logging; tracebacks on errors.")
@click.option("-q", "--quiet", is_flag=True, help="Only errors on stderr; no progress bars.")
@click.pass_context
def cli(ctx: click.Context, verbose: int, quiet: bool) -> None:
    """dockrecon: post-flight reconstruction and parameter identification of spacecraft docking."""
    ctx.obj = {"verbose": verbose, "quiet": quiet}
    level = logging.ERROR if quiet else (logging.DEBUG if verbose > 1 else
                                         logging.INFO if verbose else logging.WARNING)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s",
                        stream=sys.stderr, force=True)


@cli.group(cls=_Group)
def simulate() -> None:
    """Run a forward model and write its channels."""


@cli.group(cls=_Group)
def identify() -> None:
    """Identify characteristics from ground-test records."""


def progress_enabled(ctx: click.Context) -> bool:
    """Whether progress bars may be drawn (not with ``-q``, and only on a terminal)."""
    root = ctx.find_root()
    return not root.obj.get("quiet", False) and sys.stderr.isatty()


# Commands are added below, one block per capability.


# ---- reconstruction (issue 6) ---------------------------------------------------------------
@cli.command("validate")
@click.argument("telemetry", type=click.Path(dir_okay=True, path_type=str))
@click.option("--max-gap", type=float, default=0.5, show_default=True,
              help="Longest accepted interval between samples of a channel [s].")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON on stdout.")
@click.pass_context
def validate_cmd(ctx: click.Context, telemetry: str, max_gap: float, as_json: bool) -> None:
    """Check a telemetry file (Parquet or CSV); exit 0 when usable, 65 when not."""
    import json as _json

    from recon.telemetry import read_telemetry

    _, report = read_telemetry(telemetry, max_gap=max_gap)
    if as_json:
        click.echo(_json.dumps(report.to_dict(), indent=2))
    else:
        for line in report.lines():
            click.echo(line)
        verdict = "usable" if report.usable else "NOT usable"
        click.echo(f"{telemetry}: {report.n_rows} rows, {len(report.channels)} channels, "
                   f"{len(report.errors)} errors, {len(report.warnings)} warnings: {verdict}")
    if not report.usable:
        from models.errors import DataError

        ctx.exit(DataError.exit_code)


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="dockrecon")


if __name__ == "__main__":  # pragma: no cover
    main()
