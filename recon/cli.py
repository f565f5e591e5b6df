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


@cli.command("reconstruct")
@click.argument("telemetry", type=click.Path(dir_okay=True, path_type=str))
@click.option("--scenario", required=True, type=click.Path(path_type=str),
              help="Scenario TOML (may hold the run tables too).")
@click.option("--output", "-o", required=True, type=click.Path(file_okay=False, path_type=str),
              help="Result directory (result.json, chains.h5, fit.parquet).")
@click.option("--config", type=click.Path(path_type=str), default=None,
              help="Run TOML: [parameters], [observation], [model], [optimizer], [sampler].")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--walkers", type=click.IntRange(min=2), default=None, help="Walkers per ensemble.")
@click.option("--steps", type=click.IntRange(min=1), default=None, help="Step limit per ensemble.")
@click.option("--resume", is_flag=True, help="Continue the chains of an interrupted run in DIR.")
@click.option("--no-mcmc", is_flag=True, help="Optimizer and Laplace intervals only.")
@click.pass_context
def reconstruct_cmd(ctx: click.Context, telemetry: str, scenario: str, output: str,
                    config: str | None, seed: int, walkers: int | None, steps: int | None,
                    resume: bool, no_mcmc: bool) -> None:
    """Reconstruct initial conditions and parameters of a probe-cone docking from TELEMETRY."""
    from recon.docking import reconstruct_flight

    bars: dict = {}

    def progress(stage: str, done: int, total: int) -> None:
        if not progress_enabled(ctx):
            log.info("%s: %d / %d", stage, done, total)
            return
        bar = bars.get(stage)
        if bar is None:
            bar = bars[stage] = click.progressbar(length=total, label=stage, file=sys.stderr)
            bar.__enter__()
        bar.update(done - bar.pos)
        if done >= total:
            bar.__exit__(None, None, None)

    res = reconstruct_flight(telemetry, scenario, output, config=config, seed=seed,
                             walkers=walkers, steps=steps, resume=resume, mcmc=not no_mcmc,
                             progress=progress)
    for bar in bars.values():
        if bar.pos < bar.length:
            bar.__exit__(None, None, None)
    diag = res.diagnostics
    how = diag["method"]
    if how == "mcmc":
        how += f" ({diag['mcmc']['status']}: {diag['mcmc']['reason']})"
    click.echo(f"{output}/result.json written; intervals from {how}", err=True)


@cli.group(cls=_Group)
def samples() -> None:
    """Generate the shipped synthetic samples."""


@samples.command("generate")
@click.argument("kind", type=click.Choice(["flights"]), default="flights")
@click.option("--output", "-o", type=click.Path(file_okay=False, path_type=str), default=None,
              help="Directory (default: telemetry_samples/KIND in the package).")
@click.option("--seed", type=int, default=2026, show_default=True)
def samples_generate(kind: str, output: str | None, seed: int) -> None:
    """Simulate and record the synthetic samples of KIND, each with its truth."""
    from telemetry_samples import SAMPLES_DIR
    from telemetry_samples.flights.generate import generate

    for path in generate(output or SAMPLES_DIR / kind, seed):
        click.echo(str(path))


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="dockrecon")


if __name__ == "__main__":  # pragma: no cover
    main()
