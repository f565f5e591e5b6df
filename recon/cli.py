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


# ---- hydraulic test rig (models.hydraulic, identification.rig) ------------------------------
def _rig_config(path: str):
    from models.hydraulic import RigConfig
    from recon.io import load_toml

    try:
        return RigConfig.from_dict(load_toml(path))
    except InputError as exc:
        raise exc.with_source(path)


@simulate.command("rig")
@click.argument("config_path", metavar="RIG.toml", type=click.Path(dir_okay=False))
@click.option("--command", "command_path", required=True, type=click.Path(dir_okay=False),
              help="CSV/Parquet: t, u [, F_load, brake] (one actuator) or t, x, y, z, roll, "
                   "pitch, yaw (hexapod, relative to home).")
@click.option("--output", required=True, type=click.Path(dir_okay=False),
              help="Output table (.parquet or .csv), SI units in the metadata / headers.")
@click.option("--model", type=click.Choice(["coupled", "reference"]), default="coupled",
              show_default=True, help="One actuator: sequential-impulse co-simulation or the "
                                      "single-rate stand-alone reference.")
@click.option("--t-end", type=float, default=None, help="Duration [s] (default: the command's).")
def simulate_rig_cmd(config_path, command_path, output, model, t_end):
    """Simulate the hydraulic rig (one actuator or the 6-DOF hexapod) on a command."""
    import numpy as np

    from models.hydraulic import POSE_COLUMNS, Command, simulate_rig
    from recon.io import read_table, write_table

    config = _rig_config(config_path)
    hexapod = config.hexapod is not None
    units = ({"t": "s", "x": "m", "y": "m", "z": "m", "roll": "rad", "pitch": "rad",
              "yaw": "rad"} if hexapod else {"t": "s", "u": "V", "F_load": "N", "brake": ""})
    required = ("t",) + (POSE_COLUMNS if hexapod else ("u",))
    frame, _ = read_table(command_path, units, required=required, allow_nan=False)
    t = frame["t"].to_numpy()
    back = np.flatnonzero(np.diff(t) <= 0)
    if back.size:
        raise InputError("time must increase", source=command_path, key="t",
                         row=int(back[0]) + 2)
    try:
        if hexapod:
            cmd = Command(t=t, pose=frame[list(POSE_COLUMNS)].to_numpy())
        else:
            cmd = Command(t=t, u=frame["u"].to_numpy(),
                          load_force=frame["F_load"].to_numpy() if "F_load" in frame else None,
                          brake=frame["brake"].to_numpy() if "brake" in frame else None)
        cols, col_units = simulate_rig(config, cmd, model=model, t_end=t_end)
    except InputError as exc:
        raise exc.with_source(command_path)
    write_table(cols, output, col_units)
    click.echo(f"wrote {output} ({len(cols['t'])} rows)", err=True)


@identify.command("rig")
@click.argument("record_path", metavar="RECORD", type=click.Path(dir_okay=False))
@click.option("--config", "config_path", required=True, type=click.Path(dir_okay=False),
              help="Rig TOML with [actuator] start values and [identify].")
@click.option("--output", required=True, type=click.Path(file_okay=False),
              help="Result directory: fitted.parquet, then result.json (written last).")
def identify_rig_cmd(record_path, config_path, output):
    """Identify actuator characteristics / the platform's transport delay from a rig record."""
    from pathlib import Path

    from identification.rig import (RECORD_UNITS, IdentifySettings, RigRecord, identify_rig,
                                    result_document)
    from recon.io import read_table, versions, write_json, write_table

    config = _rig_config(config_path)
    try:
        kind = IdentifySettings.from_dict(config.identify).kind
    except InputError as exc:
        raise exc.with_source(config_path)
    frame, _ = read_table(record_path, RECORD_UNITS)
    try:
        record = RigRecord.from_frame(frame, kind, source=record_path)
        fit = identify_rig(config, record)
    except InputError as exc:
        raise exc.with_source(record_path)
    out = Path(output)
    write_table(fit.fitted, out / "fitted.parquet")
    doc = result_document(fit, config, record=str(record_path), config_path=str(config_path),
                          versions=versions())
    write_json(doc, out / "result.json")
    for name, p in doc["parameters"].items():
        click.echo(f"{name:26s} {p['map']:.6g} [{p['ci95'][0]:.6g}, {p['ci95'][1]:.6g}] "
                   f"{p['unit']}", err=True)
    if fit.identifiability["not_separable"]:
        click.echo("not separable by this record: "
                   + ", ".join(fit.identifiability["not_separable"]), err=True)


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="dockrecon")


if __name__ == "__main__":  # pragma: no cover
    main()
