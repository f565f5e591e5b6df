"""``dockrecon validate``, ``dockrecon reconstruct`` and ``dockrecon train``: flight telemetry
checked, the post-flight reconstruction of a docking, and the learned proposal that starts
its search."""
from __future__ import annotations

import logging
from pathlib import Path

import click

from recon.app.cli.options import (EXIT_STATUS, Progress, common_options, config_option,
                                   input_path, mcmc_choice, mcmc_options, output_option,
                                   quiet, say, seed_option)

__all__ = ["COMMANDS", "validate_cmd", "reconstruct_cmd", "train_cmd"]

log = logging.getLogger("dockrecon")


@click.command("validate")
@common_options
@click.argument("telemetry", nargs=-1, required=True, callback=input_path,
                type=click.Path(dir_okay=True, path_type=str))
@click.option("--max-gap", type=float, default=0.5, show_default=True,
              help="Longest accepted interval between samples of a channel [s].")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON on stdout.")
@click.option("--scenario", default=None, callback=input_path, type=click.Path(path_type=str),
              help="Also check the record against this scenario's docking unit and run "
                   "tables exactly as reconstruct would (its channels, contact and capture "
                   "edges, the fitted span, noise from the record).")
@config_option("the run TOML reconstruct would use (with --scenario)")
@click.pass_context
def validate_cmd(ctx: click.Context, telemetry: tuple[str, ...], max_gap: float,
                 as_json: bool, scenario: str | None, config: str | None) -> None:
    """Check telemetry files (Parquet or CSV, one or several on separate time bases); exit 0
    when all are usable, 65 when one is not. With --scenario (and --config) a record that
    passes is one that reconstruct accepts with them, and the reverse."""
    import json as _json

    from recon.telemetry import Telemetry, read_telemetry

    if config is not None and scenario is None:
        from models.errors import InputError

        raise InputError("needs --scenario", key="--config")
    read = [read_telemetry(path, max_gap=max_gap) for path in telemetry]
    reports = [report for _, report in read]
    if scenario is not None and all(r.usable for r in reports):
        # what reconstruct does before its first model evaluation: an InputError here is
        # what reconstruct would refuse, with the same message and exit code (the record as
        # read above: read once, its findings said once)
        from recon.flight import flight_problem

        flight_problem(Telemetry.merge([tel for tel, _ in read]), scenario, config=config)
    if as_json:
        docs = [r.to_dict() for r in reports]
        click.echo(_json.dumps(docs[0] if len(docs) == 1 else docs, indent=2))
    else:
        for path, report in zip(telemetry, reports):
            # findings on stderr (with -q the errors only), the verdict on stdout
            for f in (report.errors if quiet() else report.findings):
                click.echo(f.line(report.source), err=True)
            verdict = "usable" if report.usable else "NOT usable"
            click.echo(f"{path}: {report.n_rows} rows, {len(report.channels)} channels, "
                       f"{len(report.errors)} errors, {len(report.warnings)} warnings: "
                       f"{verdict}")
    if not all(r.usable for r in reports):
        from models.errors import DataError

        ctx.exit(DataError.exit_code)


@click.command("reconstruct")
@common_options
@click.argument("telemetry", nargs=-1, required=True, callback=input_path,
                type=click.Path(dir_okay=True, path_type=str))
@click.option("--scenario", required=True, callback=input_path, type=click.Path(path_type=str),
              help="Scenario TOML: names the docking unit (may hold the run tables too).")
@output_option("the result directory (result.json, fit.parquet, trajectory.parquet, "
               "posterior.nc, chains.h5, the report)", file_okay=False, dir_okay=True,
               metavar="DIR")
@config_option("the run TOML: [parameters], [observation], [model], [optimizer], [sampler]; "
               "without it (and without run tables in the scenario) the documented "
               "defaults: priors from the scenario's [envelope], noise estimated from the "
               "record (recon.config)")
@seed_option()
@click.option("--walkers", type=click.IntRange(min=2), default=None, help="Walkers per ensemble.")
@click.option("--steps", type=click.IntRange(min=1), default=None, help="Step limit per ensemble.")
@click.option("--resume", is_flag=True, help="Continue the chains of an interrupted run in DIR.")
@mcmc_options("after the importance sampling")
@click.option("--starts", type=click.IntRange(min=0), default=None,
              help="Latin-hypercube starts besides the first guess (overrides [optimizer]).")
@click.option("--max-nfev", type=click.IntRange(min=1), default=None,
              help="Residual evaluations per start (overrides [optimizer]).")
@click.pass_context
def reconstruct_cmd(ctx: click.Context, telemetry: tuple[str, ...], scenario: str, output: str,
                    config: str | None, seed: int, walkers: int | None, steps: int | None,
                    resume: bool, mcmc: str | None, no_mcmc: bool,
                    mcmc_below_ess: float | None, starts: int | None,
                    max_nfev: int | None) -> None:
    """Reconstruct the initial conditions and parameters of a docking from TELEMETRY
    (one file, or several files on separate time bases of one clock).

    Exit 0 with a reconstruction; 3 when the fit is implausible and 4 when it failed (the
    result and its report are written and say why)."""
    from models.errors import InputError
    from recon.app.jobs import reconstruct_into
    from recon.app.outputs import resumable

    mode, mcmc_below_ess = mcmc_choice(mcmc, no_mcmc, mcmc_below_ess)
    if resume and not resumable(output):
        raise InputError("nothing to resume: no chains of an earlier run (chains.h5) here "
                         "or in its interrupted run", key="--resume", source=output)
    progress = Progress("reconstruct")
    # built in .DIR.partial, report included, and swapped in whole at the end
    # (recon.app.outputs): a kill leaves DIR as it was and the staging directory for --resume
    try:
        res, report = reconstruct_into(output, list(telemetry), scenario, config=config,
                                       seed=seed, walkers=walkers, steps=steps, resume=resume,
                                       mcmc=mode, mcmc_below_ess=mcmc_below_ess,
                                       starts=starts, max_nfev=max_nfev, progress=progress)
    finally:
        progress.close()
    diag = res.diagnostics
    how = diag["method"]
    if how == "mcmc":
        how += f" ({diag['mcmc']['status']}: {diag['mcmc']['reason']})"
    elif "mcmc_skipped" in diag:
        how += f" (no MCMC: {diag['mcmc_skipped']})"
    for name in report:
        say(f"report: {Path(output) / name}")
    say(f"{output}/result.json written; intervals from {how}")
    if res.status == "ok" and not quiet():
        # the answer itself, on stdout (dockrecon show DIR prints it again)
        from recon.app.summary import parameter_table, read_result

        click.echo(parameter_table(read_result(output)))
    if res.status != "ok":
        click.echo(f"error: {output}: reconstruction {res.status.upper()}: {res.status_reason}",
                   err=True)
        ctx.exit(EXIT_STATUS[res.status])



@click.command("train")
@common_options
@click.argument("scenario", callback=input_path, type=click.Path(dir_okay=False, path_type=str))
@config_option("the run TOML whose priors and fitted channels the proposal serves "
               "([parameters], [observation]; without it the scenario's [envelope] and the "
               "unit's channels and sensor noise)")
@output_option("the proposal file, or an existing directory to write it into under its "
               "digest's name, as a cache holds it (default: the user cache, where "
               "reconstruct finds it)", required=False, dir_okay=True, metavar="FILE.npz|DIR")
@click.option("--flights", type=click.IntRange(min=500, max=1_000_000), default=20000,
              show_default=True, help="Simulated flights to learn from.")
@click.option("--epochs", type=click.IntRange(min=1, max=100_000), default=200,
              show_default=True, help="Most training epochs (stops earlier when the held-out "
                                      "loss stops improving).")
@seed_option()
def train_cmd(scenario: str, config: str | None, output: str | None, flights: int,
              epochs: int, seed: int) -> None:
    """Train the learned proposal of SCENARIO (and a run configuration's priors): simulated
    flights of its envelope, a network from a record's summary to where its initial
    conditions lie. ``reconstruct`` then starts its search there for every record of the
    scenario with those priors (recon.amortized), instead of screening the prior box."""
    from recon.amortized import cache_dir, train_scenario

    progress = Progress("train")
    try:
        prop = train_scenario(scenario, config=config, flights=flights, seed=seed,
                              epochs=epochs, progress=progress)
    finally:
        progress.close()
    path = Path(output) if output else cache_dir()
    if path.is_dir() or not output:
        path = path / f"{prop.digest}.npz"
    path.parent.mkdir(parents=True, exist_ok=True)
    prop.save(path)
    rec = prop.record
    bank = rec["bank"]
    say(f"learned from {bank['kept']} of {bank['drawn']} simulated flights "
        f"({bank['no_contact']} without contact, {bank['failed']} failed, {bank['short']} "
        f"not covering the summary), {rec['epochs']} epochs")
    worst = max(rec["rms_error"], key=rec["rms_error"].get)
    say(f"held-out rms error, fraction of the prior box: median "
        f"{sorted(rec['rms_error'].values())[len(rec['rms_error']) // 2]:.3f}, largest "
        f"{rec['rms_error'][worst]:.3f} ({worst})")
    click.echo(f"proposal {prop.digest[:16]} written to {path}")

COMMANDS = (validate_cmd, reconstruct_cmd, train_cmd)
