"""What every ``dockrecon`` command shares: the error handling and exit codes, the options
(``-v``, ``-q`` everywhere, before or after the subcommand; ``-o/--output``, ``--seed``,
``--config`` where a command has them, with one meaning each), logging, the progress report
on stderr and the report that ends a main job.
"""
from __future__ import annotations

import logging
import sys
import time
import traceback
from importlib import metadata

import click

from models.errors import InputError

__all__ = ["EXIT_STATUS", "Group", "common_options", "output_option", "seed_option",
           "config_option", "configure_logging", "version", "Progress", "say", "quiet",
           "end_with_report"]

log = logging.getLogger("dockrecon")

#: exit code of ``reconstruct`` for a result that is not a reconstruction
EXIT_STATUS = {"implausible": 3, "failed": 4}


def version() -> str:
    try:
        return metadata.version("dockrecon")
    except metadata.PackageNotFoundError:  # running from a source tree without install
        return "0+unknown"


def _root_obj(ctx: click.Context) -> dict:
    root = ctx.find_root()
    if not isinstance(root.obj, dict):
        root.obj = {}
    root.obj.setdefault("verbose", 0)
    root.obj.setdefault("quiet", False)
    return root.obj


def verbosity(ctx: click.Context) -> int:
    return int(_root_obj(ctx)["verbose"])


def quiet(ctx: click.Context | None = None) -> bool:
    """Whether ``-q`` was given (anywhere on the command line)."""
    ctx = ctx or click.get_current_context(silent=True)
    return bool(ctx is not None and _root_obj(ctx)["quiet"])


def configure_logging(ctx: click.Context) -> None:
    """Log level from ``-v`` (INFO; twice: DEBUG) and ``-q`` (errors only), to stderr."""
    obj = _root_obj(ctx)
    level = (logging.ERROR if obj["quiet"] else logging.DEBUG if obj["verbose"] > 1 else
             logging.INFO if obj["verbose"] else logging.WARNING)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s",
                        stream=sys.stderr, force=True)


class Group(click.Group):
    """A click group that turns dockrecon errors into one line and an exit code."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except InputError as exc:
            if verbosity(ctx) > 0:
                traceback.print_exc()
            click.echo(f"error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo("error: interrupted", err=True)
            ctx.exit(130)
        except Exception as exc:  # an internal failure, not the user's
            if verbosity(ctx) > 0:
                traceback.print_exc()
            else:
                click.echo(f"error: internal failure: {exc.__class__.__name__}: {exc} "
                           "(run with -v for the traceback)", err=True)
            ctx.exit(1)


def _verbose(ctx: click.Context, param, value):
    if value:
        _root_obj(ctx)["verbose"] += value
        configure_logging(ctx)


def _quiet(ctx: click.Context, param, value):
    if value:
        _root_obj(ctx)["quiet"] = True
        configure_logging(ctx)


def common_options(f):
    """``-v/--verbose`` and ``-q/--quiet``, accepted by the root group and by every command
    (so before or after the subcommand, with the same effect)."""
    f = click.option("-q", "--quiet", is_flag=True, expose_value=False, callback=_quiet,
                     help="Only errors on stderr: no log lines, no progress.")(f)
    f = click.option("-v", "--verbose", count=True, expose_value=False, callback=_verbose,
                     help="More logging (twice: debug); tracebacks on errors.")(f)
    return f


def output_option(what: str, *, required: bool = True, file_okay: bool = True,
                  dir_okay: bool = False, metavar: str | None = None, default=None):
    """``-o/--output``: where the command writes (``what`` says what is written there)."""
    return click.option("-o", "--output", "output", required=required, default=default,
                        metavar=metavar,
                        type=click.Path(file_okay=file_okay, dir_okay=dir_okay, path_type=str),
                        help=f"Output: {what}.")


def seed_option(default: int = 0):
    """``--seed``: the seed of every random choice the command makes."""
    return click.option("--seed", type=int, default=default, show_default=True,
                        help="Seed of every random choice (results record it).")


def config_option(what: str, *, required: bool = False):
    """``--config``: a TOML file of settings (``what`` says which)."""
    return click.option("--config", "config", required=required, default=None,
                        type=click.Path(dir_okay=False, path_type=str), metavar="FILE.toml",
                        help=f"Configuration: {what}.")


def say(message: str) -> None:
    """A log line for the user on stderr (not with ``-q``)."""
    if not quiet():
        click.echo(message, err=True)


class Progress:
    """``progress(stage, done, total)`` on stderr: bars on a terminal, plain lines elsewhere
    (one per stage start and end, and at most one every ``every`` seconds between), nothing
    with ``-q``.

    Parameters
    ----------
    label
        What runs (the command), prefixed to plain lines.
    every
        Seconds between plain progress lines of one stage.
    """

    def __init__(self, label: str, *, every: float = 10.0,
                 stream=None, tty: bool | None = None) -> None:
        self.label = label
        self.every = every
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.silent = quiet()
        self._bars: dict[str, object] = {}
        self._last: dict[str, float] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self.silent:
            return
        if self.tty:
            bar = self._bars.get(stage)
            if bar is None:
                bar = click.progressbar(length=max(total, 1), label=f"{self.label}: {stage}",
                                        file=self.stream)
                bar.__enter__()
                self._bars[stage] = bar
            bar.update(done - bar.pos)
            if done >= total:
                bar.__exit__(None, None, None)
            return
        now = time.monotonic()
        first = stage not in self._last
        if first or done >= total or now - self._last[stage] >= self.every:
            self._last[stage] = now
            print(f"{self.label}: {stage} {done}/{total}", file=self.stream, flush=True)

    def close(self) -> None:
        for bar in self._bars.values():
            if bar.pos < bar.length:
                bar.__exit__(None, None, None)
        self._bars.clear()


def end_with_report(result: str) -> None:
    """Every main job ends in a report: HTML and PDF beside its result."""
    from reports.build import rebuild_report

    for path in rebuild_report(result):
        say(f"report: {path}")
