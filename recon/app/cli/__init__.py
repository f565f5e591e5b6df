"""The ``dockrecon`` command line: parse, call one library function, print.

One module per command group (:mod:`recon.app.cli.simulate`, :mod:`recon.app.cli.identify`,
:mod:`recon.app.cli.flight` (validate, reconstruct), :mod:`recon.app.cli.campaign`,
:mod:`recon.app.cli.study`, :mod:`recon.app.cli.tools` (samples, report, bench)); the options every
command shares and the progress report are
:mod:`recon.app.cli.options`.

Exit codes
----------
0
    success.
1
    internal failure (a bug or an environment problem); the traceback is shown with ``-v``.
2
    the user's input is wrong (a path, an option, a configuration or scenario key): one line
    ``error: <file or option>: [row R, ]['key': ]<what>``.
3
    ``reconstruct``: the fit is implausible (``result.json`` ``"status": "implausible"``: the
    best fit's cost exceeds what a correct fit plausibly has; the result and its report are
    written, but they are not a reconstruction). ``campaign`` and ``study calibration``: a
    flight is not reconstructed (``campaign.json`` says why), or (study) a parameter's
    coverage is low for the table as a whole.
4
    ``reconstruct``: the reconstruction failed (``"status": "failed"``: no finite likelihood
    anywhere the search went; ``result.json`` and the report say why).
65
    a data file is there but cannot be read or trusted (empty, corrupt, time backwards, values
    non-finite or beyond their physical range, a wrong unit), as ``sysexits`` EX_DATAERR; the
    same file gets the same code from every command (README, "Exit codes and errors").
74
    an output could not be written for want of room (device full, quota used), as
    ``sysexits`` EX_IOERR: one line naming the file; the earlier output is left as it was
    (a result directory is swapped in whole or not at all; chains stop, resumable, before
    HDF5 meets the full device).
75
    the output directory is being written by another run (``reconstruct``, ``identify rig``,
    ``campaign``): one line naming the holder (process, host, command, start), as
    ``sysexits`` EX_TEMPFAIL.
130
    interrupted (Ctrl-C).
143
    terminated (SIGTERM), unwound as Ctrl-C is: the earlier result intact, a run with chains
    kept for ``--resume``.

Data go to files or stdout (``--json``); logs and progress go to stderr. ``-v`` / ``-q`` work
before or after the subcommand.
"""
from __future__ import annotations

import click

from recon.app.cli.options import EXIT_STATUS, Group, common_options, configure_logging, version

__all__ = ["cli", "main", "EXIT_STATUS"]


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version(), "--version", prog_name="dockrecon")
@common_options
@click.pass_context
def cli(ctx: click.Context) -> None:
    """dockrecon: post-flight reconstruction and parameter identification of spacecraft docking."""
    ctx.ensure_object(dict)
    configure_logging(ctx)


def _register() -> None:
    from recon.app.cli import campaign, flight, identify, simulate, study, tools

    for module in (simulate, identify, flight, campaign, study, tools):
        for command in module.COMMANDS:
            cli.add_command(command)


_register()


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="dockrecon")
