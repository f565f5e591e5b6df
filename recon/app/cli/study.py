"""``dockrecon study calibration``: simulation-based calibration of the reconstruction on a
Dask cluster (:mod:`recon.app.study`)."""
from __future__ import annotations

from pathlib import Path

import click

from recon.app.cli.campaign import (check_executor, dashboard_printer, executor_options,
                                    progress_printer)
from recon.app.cli.options import (Group, common_options, config_option, end_with_report,
                                   input_path, mcmc_choice, mcmc_options, output_option, say,
                                   seed_option)

__all__ = ["COMMANDS", "study", "calibration_cmd", "merge_cmd"]


@click.group(cls=Group)
@common_options
def study() -> None:
    """Validation studies of the reconstruction over simulated flights."""


@study.command("calibration")
@common_options
@click.option("--scenario", required=True, callback=input_path,
              type=click.Path(dir_okay=False, path_type=str),
              help="Scenario TOML: names the docking unit; the flights are simulated from it.")
@config_option("the run TOML whose priors the truths are drawn from and with which every "
               "flight is reconstructed", required=True)
@click.option("--flights", type=click.IntRange(min=1, max=100_000), required=True,
              help="Number of flights.")
@output_option("the study directory (telemetry/ with the simulated flights and their truth, "
               "one result directory per flight, catalog.parquet, calibration.json, the "
               "report)", file_okay=False, dir_okay=True, metavar="DIR")
@seed_option()
@click.option("--records", type=click.Choice(["realistic", "cut"]), default="realistic",
              show_default=True,
              help="Flight records as a flight recorder makes them (approach, 20 s after "
                   "capture, own clock) or cut to the model window.")
@mcmc_options("on each flight (as reconstruct)")
@click.option("--steps", type=click.IntRange(min=1), default=None,
              help="emcee step limit per ensemble (as reconstruct).")
@click.option("--only", "only", default=None, metavar="RANGES",
              help="Run only these flights of the study, by 0-based index ('20-39', "
                   "'0-4,10'): each is the same draw, record and reconstruction as in the "
                   "whole study; join the parts with 'study merge'.")
@executor_options
@click.pass_context
def calibration_cmd(ctx: click.Context, scenario: str, config: str, flights: int, output: str,
                    seed: int, records: str, mcmc: str | None, no_mcmc: bool,
                    mcmc_below_ess: float | None,
                    steps: int | None, only: str | None, workers: int | None,
                    scheduler: str | None, scheduler_file: str | None,
                    resume: bool, dashboard: bool) -> None:
    """Draw FLIGHTS truths from the priors of --config, simulate and record each flight with
    the unit's observation model, reconstruct every one (a campaign on Dask) and write the
    coverage of the 68 % and 95 % intervals (DIR/calibration.json) and its report.

    Exit 0 when every flight is reconstructed and no parameter's coverage is low for the
    table as a whole (family-wise at 5 %); 3 otherwise (calibration.json says which)."""
    from recon.calibration import StudySettings, format_only, parse_only
    from recon.app.study import run_study

    scheduler = check_executor(workers, scheduler, scheduler_file)
    show_dashboard = dashboard_printer(dashboard)
    indices = None if only is None else parse_only(only, flights)
    mode, mcmc_below_ess = mcmc_choice(mcmc, no_mcmc, mcmc_below_ess)
    # stored as the earlier flag was (true / false) where it can be, so that a study made
    # before --mcmc resumes and merges with its settings unchanged
    options: dict = {"mcmc": {"auto": True, "never": False}.get(mode, mode)}
    if mcmc_below_ess is not None:
        options["mcmc_below_ess"] = float(mcmc_below_ess)
    if steps is not None:
        options["steps"] = int(steps)
    settings = StudySettings(scenario=str(Path(scenario).resolve()),
                             config=str(Path(config).resolve()), flights=flights, seed=seed,
                             records=records, options=options, only=indices)
    part = "" if indices is None else f", only {format_only(indices)}"
    say(f"study calibration: {flights} flights ({records} records{part}), seed {seed}")
    doc = run_study(settings, output, workers=workers, scheduler=scheduler, resume=resume,
                    progress=progress_printer("study calibration"), dashboard=show_dashboard)
    end_with_report(output)
    say(f"{output}/calibration.json written")
    _verdict(ctx, doc, output)


@study.command("merge")
@common_options
@click.argument("parts", nargs=-1, required=True,
                type=click.Path(exists=True, path_type=str))
@output_option("the merged study's directory (calibration.json, catalog.parquet, the report)",
               file_okay=False, dir_okay=True, metavar="DIR")
@click.pass_context
def merge_cmd(ctx: click.Context, parts: tuple[str, ...], output: str) -> None:
    """Join the parts of one calibration study (PARTS: study directories or their
    calibration.json, made with --only or by separate runs) into the coverage table of all
    their flights, with its report.

    Refused: parts of different studies (seed, records, options, scenario, configuration)
    and a flight scored in two parts; parts run with different --flights are parts of one
    study. Exit codes as 'study calibration'."""
    from recon.app.study import merge_studies

    doc = merge_studies(parts, output)
    say(f"study merge: {len(parts)} parts, {doc['n_flights']} flights")
    end_with_report(output)
    say(f"{output}/calibration.json written")
    _verdict(ctx, doc, output)


def _verdict(ctx: click.Context, doc: dict, output: str) -> None:
    """The coverage table on stdout; exit 3 when a parameter's coverage is low for the
    table as a whole or a flight was not reconstructed."""
    click.echo(summary_text(doc))
    low = [n for n, r in doc["table"].items() if r["low_familywise"]]
    counts = doc.get("campaign") or {}
    failed = counts.get("failed", 0) + counts.get("implausible", 0)
    if low or failed:
        why = []
        if low:
            why.append(f"coverage low for the table as a whole: {', '.join(low)}")
        if failed:
            why.append(f"{failed} flight(s) not reconstructed")
        click.echo(f"error: {output}: {'; '.join(why)}", err=True)
        ctx.exit(3)


def summary_text(doc: dict) -> str:
    """The coverage table of a study as text (stdout)."""
    n = doc["n_flights"]
    lines = []
    lr = doc["pooled"].get("likelihood_ratio")
    if lr:
        lines.append(f"likelihood ratio of the truth over {lr['n']} flights: mean "
                     f"{lr['mean']:.1f} (chi2_{lr['dof']}: {lr['dof']}), inside chi2 95 %: "
                     f"{lr['inside95']:.2f}, search failures {lr['search_failures']}"
                     + (f"; against chi2_{lr['dof']}: KS p {lr['chi2_p']:.3f}"
                        if lr.get("chi2_p") is not None else ""))
    joint = doc.get("joint")
    if joint:
        lines.append(f"joint region of the initial conditions (chi2_{joint['dof']}): 68 % "
                     f"{joint['coverage68']:.2f}, 95 % {joint['coverage95']:.2f} over "
                     f"{joint['n']} flights")
    hpd = doc.get("hpd")
    if hpd:
        lines.append(f"highest-density region of all free parameters: 68 % "
                     f"{hpd['coverage68']:.2f}, 95 % {hpd['coverage95']:.2f} over {hpd['n']} "
                     f"flights (p low 95 % {hpd['p_low95']:.3f}; mean mass above the truth "
                     f"{hpd['mass_above_mean']:.2f}, 0.5 if calibrated"
                     + (f"; uniform: KS p {hpd['uniform_p']:.3f}"
                        if hpd.get("uniform_p") is not None else "") + ")")
    if n:
        lines.append(f"coverage over {n} flights (sampling error at nominal: 68 %: "
                     f"{(0.68 * 0.32 / n) ** 0.5:.3f}, 95 %: {(0.95 * 0.05 / n) ** 0.5:.3f})")
    lines.append(f"{'parameter':14s} {'ci68':>6s} {'ci95':>6s} {'p_low68':>8s} {'p_low95':>8s}")
    for name, row in doc["table"].items():
        lines.append(f"{name:14s} {row['coverage68']:6.2f} {row['coverage95']:6.2f} "
                     f"{row['p_low68']:8.3f} {row['p_low95']:8.3f}"
                     + ("  LOW" if row["low"] else "")
                     + (" (also family-wise)" if row["low_familywise"] else ""))
    return "\n".join(lines)


COMMANDS = (study,)
