"""What every ``dockrecon`` command shares: the error handling and exit codes, the options
(``-v``, ``-q`` everywhere, before or after the subcommand; ``-o/--output``, ``--seed``,
``--config`` where a command has them, with one meaning each), logging, the progress report
on stderr and the report that ends a main job.
"""
from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
import traceback

import click

from models.errors import InputError, OutputError, is_no_space, no_space

__all__ = ["EXIT_STATUS", "SEED_DEFAULT", "Finite", "Group", "common_options", "output_option", "input_path",
           "seed_option",
           "config_option", "configure_logging", "version", "Progress", "say", "quiet",
           "mcmc_options", "mcmc_choice",
           "end_with_report"]

log = logging.getLogger("dockrecon")

#: exit code of ``reconstruct`` for a result that is not a reconstruction
EXIT_STATUS = {"implausible": 3, "failed": 4}


def version() -> str:
    """The dockrecon version (:data:`models.__version__`)."""
    from models import __version__

    return __version__


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


class Terminated(KeyboardInterrupt):
    """SIGTERM (a scheduler's or ``kill``'s stop), raised where the program is, so that it
    unwinds as Ctrl-C does: staging directories cleaned or kept for ``--resume``, the earlier
    result intact, one line, exit 143 (128 + 15)."""


def _raise_terminated(signum, frame):
    raise Terminated()


def _interrupted(exc: BaseException) -> tuple[str, int]:
    """The line and exit code of an interruption."""
    if isinstance(exc, Terminated):
        return "error: terminated (SIGTERM)", 128 + signal.SIGTERM
    return "error: interrupted", 130


class Group(click.Group):
    """A click group that turns every error into one line on stderr and an exit code: the
    user's (a wrong option, a bad file) 2 or 65, an internal failure 1 (traceback with
    ``-v``)."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True,
             **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        previous = None
        if threading.current_thread() is threading.main_thread():
            previous = signal.signal(signal.SIGTERM, _raise_terminated)
        try:
            self._main_standalone(args, prog_name, complete_var, **extra)
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)

    def _main_standalone(self, args, prog_name, complete_var, **extra):
        try:
            rv = super().main(args, prog_name, complete_var, False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:    # a bare group: its help
            click.echo(exc.ctx.get_help() if exc.ctx is not None else exc.format_message(),
                       err=True)
            sys.exit(exc.exit_code)
        except click.UsageError as exc:       # click's own: usage + hint + error, made one line
            where = exc.ctx.command_path if exc.ctx is not None else (prog_name or self.name)
            click.echo(f"error: {exc.format_message()} (see '{where} --help')", err=True)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            click.echo(f"error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except (click.exceptions.Abort, KeyboardInterrupt, EOFError) as exc:
            line, code = _interrupted(exc)
            click.echo(line, err=True)
            sys.exit(code)
        sys.exit(rv if isinstance(rv, int) else 0)

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
        except KeyboardInterrupt as exc:
            line, code = _interrupted(exc)
            click.echo(line, err=True)
            ctx.exit(code)
        except Exception as exc:
            if is_no_space(exc):   # a full device met outside the guarded writes
                if verbosity(ctx) > 0:
                    traceback.print_exc()
                where = getattr(exc, "filename", None)
                click.echo(f"error: {no_space(where) if where else _no_space_line(exc)}",
                           err=True)
                ctx.exit(OutputError.exit_code)
            # an internal failure, not the user's
            if verbosity(ctx) > 0:
                traceback.print_exc()
            else:
                click.echo(f"error: internal failure: {exc.__class__.__name__}: {exc} "
                           "(run with -v for the traceback)", err=True)
            ctx.exit(1)


def _no_space_line(exc: BaseException) -> str:
    """The one line of a full device whose file the library did not name."""
    return ("no space left on the device of the output (the library writing it did not name "
            f"the file: {str(exc).splitlines()[0][:200]}); the earlier output is left as it was")


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


def _writable(directory: bool | None):
    """Click callback: the output location checked before any work
    (:func:`recon.app.outputs.check_writable`); the message names the option and the path."""
    def check(ctx: click.Context, param: click.Parameter, value):
        if value is None:
            return value
        from recon.app.outputs import check_writable

        opt = max(param.opts, key=len)
        check_writable(value, directory=directory, option=opt)
        for other, _ in ctx.meta.setdefault("dockrecon.inputs", []):
            _distinct(other, value, opt)
        ctx.meta.setdefault("dockrecon.outputs", []).append((value, opt))
        return value
    return check


def _distinct(inp, out, opt) -> None:
    if _same_file(inp, out):
        raise InputError(f"is also an input of this command ({inp}): an output may not "
                         "overwrite an input", key=opt, source=str(out))


def _same_file(a, b) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def input_path(ctx: click.Context, param: click.Parameter, value):
    """Click callback of an input path: remembered, so that no output may name it (whichever
    of the two click reads second makes the check)."""
    vals = [v for v in (value if isinstance(value, tuple) else (value,)) if v is not None]
    for v in vals:
        for out, opt in ctx.meta.get("dockrecon.outputs", []):
            _distinct(v, out, opt)
        ctx.meta.setdefault("dockrecon.inputs", []).append((v, param.name))
    return value


def output_option(what: str, *, required: bool = True, file_okay: bool = True,
                  dir_okay: bool = False, metavar: str | None = None, default=None,
                  flag: str = "--output", short: str | None = "-o", dest: str = "output"):
    """``-o/--output`` (or another ``flag``): where the command writes (``what`` says what is
    written there). The location is checked for writability when the command line is read,
    before any work, and may not be one of the command's inputs."""
    names = ([short] if short else []) + [flag, dest]
    return click.option(*names, required=required, default=default,
                        metavar=metavar,
                        callback=_writable(directory=(None if dir_okay and file_okay
                                                      else dir_okay)),
                        type=click.Path(file_okay=file_okay, dir_okay=dir_okay, path_type=str),
                        help=f"Output: {what}.")


class Finite(click.FloatRange):
    """A float option within ``[min, max]`` (``min_open``: above ``min``), never NaN or
    infinite: ``--rate inf`` or ``--rtol nan`` are the user's input, refused with the option's
    name (exit 2), not an overflow deep in a kernel."""

    name = "number"

    def convert(self, value, param, ctx):
        import math

        rv = click.FloatRange.convert(self, value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return rv


#: the one default of ``--seed``, whatever the command
SEED_DEFAULT = 0


def seed_option():
    """``--seed``: the seed of every random choice the command makes (default
    :data:`SEED_DEFAULT` for every command)."""
    return click.option("--seed", type=int, default=SEED_DEFAULT, show_default=True,
                        help="Seed of every random choice (results record it).")


def config_option(what: str, *, required: bool = False):
    """``--config``: a TOML file of settings (``what`` says which)."""
    return click.option("--config", "config", required=required, default=None,
                        callback=input_path,
                        type=click.Path(dir_okay=False, path_type=str), metavar="FILE.toml",
                        help=f"Configuration: {what}.")


def mcmc_options(what: str):
    """``--mcmc auto|always|never`` (when emcee runs, ``what`` says of what), with the
    earlier spellings ``--no-mcmc`` and ``--mcmc-below-ess N`` still accepted, each with a
    deprecation line (:func:`mcmc_choice`)."""
    def decorate(f):
        f = click.option("--mcmc-below-ess", type=click.FloatRange(min=0, min_open=True),
                         default=None, metavar="N", hidden=True,
                         help="Deprecated: [optimizer] mcmc_below_ess of the run "
                              "configuration.")(f)
        f = click.option("--no-mcmc", is_flag=True, hidden=True,
                         help="Deprecated: --mcmc never.")(f)
        return click.option(
            "--mcmc", "mcmc", type=click.Choice(["auto", "always", "never"]), default=None,
            help=f"When emcee runs {what}: auto (default) where the run configuration's rule "
                 "says (importance effective sample size below [optimizer] mcmc_below_ess, "
                 "or untrustworthy weights: Pareto k-hat over its limit; without "
                 "mcmc_below_ess, always), always, or never (intervals from importance "
                 "sampling or the Laplace approximation).")(f)
    return decorate


def mcmc_choice(mcmc: str | None, no_mcmc: bool, mcmc_below_ess: float | None
                ) -> tuple[str, float | None]:
    """``(mode, mcmc_below_ess)`` of :func:`mcmc_options`' values: the deprecated spellings
    say so on stderr and map to ``--mcmc never`` and to the threshold they set; a
    contradiction (``--no-mcmc`` with ``--mcmc auto|always``, a threshold with ``--mcmc
    never|always``) is refused naming the option."""
    from models.errors import InputError

    if no_mcmc:
        say("warning: --no-mcmc is deprecated; use --mcmc never")
        if mcmc not in (None, "never"):
            raise InputError(f"--no-mcmc contradicts --mcmc {mcmc}", key="--mcmc")
        mcmc = "never"
    if mcmc_below_ess is not None:
        say("warning: --mcmc-below-ess is deprecated; set [optimizer] mcmc_below_ess in the "
            "run configuration (applied here)")
        if mcmc in ("never", "always"):
            raise InputError(f"--mcmc-below-ess contradicts --mcmc {mcmc}", key="--mcmc")
    return mcmc or "auto", mcmc_below_ess


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


def end_with_report(result: str, *, shown_as: str | None = None) -> None:
    """Every main job ends in a report: HTML and PDF beside its result (``shown_as``: the
    directory the user named, when ``result`` is its staging directory)."""
    from pathlib import Path

    from reports.build import rebuild_report

    for path in rebuild_report(result):
        say(f"report: {Path(shown_as) / path.name if shown_as else path}")
