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


# ---- identify resonance (issue 5) ----------------------------------------------------------
def _frequency(text: str) -> float:
    """``--frequency``: angular frequency [rad/s], or a value ending in ``Hz``."""
    t = text.strip()
    try:
        if t.lower().endswith("hz"):
            import math
            return 2 * math.pi * float(t[:-2])
        return float(t.removesuffix("rad/s"))
    except ValueError:
        raise InputError(f"not a frequency: '{text}' (rad/s, or e.g. '2.5Hz')",
                         source="--frequency") from None


@identify.command("resonance")
@click.argument("record", type=click.Path(dir_okay=False))
@click.option("--frequency", "frequency", default=None,
              help="Excitation frequency nu [rad/s] (or '2.5Hz'); estimated from the force if absent.")
@click.option("--mass", type=float, default=1.0, show_default=True, help="Reduced mass mu [kg].")
@click.option("--method", type=click.Choice(["product", "stieltjes"]), default="product",
              show_default=True, help="Abel quadrature: product integration or the paper's (4.2).")
@click.option("--below", type=click.Choice(["power", "linear", "chord"]), default="power",
              show_default=True, help="Law below the first measured amplitude.")
@click.option("--periods", type=int, default=6, show_default=True, help="Periods per window.")
@click.option("--skip", type=float, default=None, help="Hold time before the first window [s].")
@click.option("--refine", is_flag=True, help="Refine by fitting the simulated oscillator to the record.")
@click.option("--output", required=True, type=click.Path(dir_okay=False), help="OUT.json")
def identify_resonance_cmd(record, frequency, mass, method, below, periods, skip, refine, output):
    """Restoring force and damping of one mode from a resonance-test RECORD (t, x, force)."""
    import numpy as np

    from identification.resonance.harmonics import amplitude_sequence, estimate_frequency
    from identification.resonance.own import identify_own_resonance
    from recon.io import read_table, versions, write_json

    frame, _ = read_table(record, {"t": "s", "x": "m", "force": "N"},
                          required=("t", "x", "force"), allow_nan=False)
    t, x, f = (frame[c].to_numpy() for c in ("t", "x", "force"))
    bad = np.flatnonzero(np.diff(t) <= 0)
    if len(bad):
        raise InputError("time is not strictly increasing", source=str(record), key="t",
                         row=int(bad[0]) + 2)
    nu = _frequency(frequency) if frequency is not None else estimate_frequency(t, f)
    if not nu > 0:
        raise InputError("must be positive", source="--frequency")
    if not mass > 0:
        raise InputError("must be a positive mass [kg]", source="--mass")
    try:
        seq = amplitude_sequence(t, x, f, nu, mass, k=periods, skip=skip)
    except InputError as exc:
        raise exc.with_source(str(record))
    res = identify_own_resonance(seq, method=method, below=below)
    xs = np.linspace(-seq.b[-1], seq.b[-1], 201)
    vs = np.linspace(0.0, seq.v[-1], 101)
    fx, hv = res.restoring_force(xs), res.damping_force(vs)
    settings = {"record": str(record), "frequency_rad_s": nu,
                "frequency_source": "given" if frequency is not None else "estimated",
                "mass_kg": mass, "method": method, "below": below, "periods": periods,
                "skip_s": skip, "refine": bool(refine)}
    if refine:
        from identification.resonance.refine import refine as do_refine
        ref = do_refine(res, t, x, f)
        fx, hv = ref.restoring_force(xs), ref.damping_force(vs)
        settings["refinement"] = ref.summary()
        log.info("refinement changed the restoring force by %.2f %% and the damping by %.2f %%",
                 100 * ref.change_restoring, 100 * ref.change_damping)
    out = {
        "restoring_force": {"x": xs, "f": fx},
        "damping": {"v": vs, "H": hv},
        "amplitude_sequence": {"b": seq.b, "theta": seq.theta, "omega2": seq.omega2,
                               "lambda": seq.lam, "a0": seq.a0},
        "jumps": [j.as_dict() for j in seq.jumps],
        "settings": settings,
        "versions": versions(),
    }
    for j in seq.jumps:
        log.warning("amplitude jump from %.4g m to %.4g m at t = %.4g s: no data in between",
                    j.b_before, j.b_after, j.t_before)
    write_json(out, output)
    click.echo(f"{len(seq.b)} amplitudes, {len(seq.jumps)} jump(s); wrote {output}", err=True)


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="dockrecon")


if __name__ == "__main__":  # pragma: no cover
    main()
