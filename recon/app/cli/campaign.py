"""``dockrecon campaign``: many flights reconstructed on a Dask cluster
(:mod:`recon.app.campaign`)."""
from __future__ import annotations

import time
from pathlib import Path

import click

from recon.app.cli.options import (common_options, end_with_report, input_path, output_option,
                                   quiet, say, seed_option)

__all__ = ["COMMANDS", "progress_printer", "executor_options", "check_executor"]


def _progress_line(c: dict, what: str = "campaign") -> str:
    eta = c.get("eta_s")
    left = "" if eta is None else f", about {eta / 60:.0f} min left"
    return (f"{what}: {c['done']}/{c['total']} done, {c.get('running', 0)} running, "
            f"{c['failed']} failed{left}")


def progress_printer(what: str = "campaign", every: float = 2.0):
    """The progress callback of :func:`recon.app.campaign.run_campaign` for the command line: a
    line on stderr at most every ``every`` seconds and at the end, nothing with ``-q``."""
    last = [0.0]

    def progress(c: dict) -> None:
        if quiet():
            return
        now = time.time()
        if now - last[0] > every or c["done"] + c["failed"] == c["total"]:
            last[0] = now
            click.echo(_progress_line(c, what), err=True)

    return progress


def executor_options(f):
    """``--workers`` / ``--scheduler`` / ``--scheduler-file`` / ``--resume`` of the commands
    that run on Dask (:func:`check_executor` makes the address of them)."""
    f = click.option("--resume", is_flag=True,
                     help="Keep the flights already complete in DIR (same specification); "
                          "redo the rest.")(f)
    f = click.option("--dashboard", is_flag=True,
                     help="Serve the embedded cluster's Dask dashboard (127.0.0.1:8787, or "
                          "the next free port) and print its address; with --scheduler, "
                          "print the scheduler's. Needs Bokeh (dockrecon[dashboard]).")(f)
    f = click.option("--scheduler-file", "scheduler_file", default=None, metavar="FILE",
                     type=click.Path(dir_okay=False, path_type=str),
                     help="An existing Dask scheduler by the file it wrote (dask scheduler "
                          "--scheduler-file FILE; dask-jobqueue and dask-mpi write one too) "
                          "instead of the embedded one.")(f)
    f = click.option("--scheduler", default=None, metavar="ADDRESS",
                     help="An existing Dask scheduler (tcp://host:port) instead of the "
                          "embedded one.")(f)
    return click.option("--workers", type=click.IntRange(min=1, max=4096), default=None,
                        help="Worker processes of the embedded Dask cluster [default: the "
                             "cores].")(f)


def dashboard_printer(dashboard: bool):
    """``--dashboard``: None without it; else (Bokeh checked) the callback that prints the
    dashboard's address on stderr (-q does not silence it: it was asked for)."""
    if not dashboard:
        return None
    from recon.app.campaign import check_dashboard

    check_dashboard()

    def show(link: str) -> None:
        click.echo(f"Dask dashboard: {link}", err=True)

    return show


def check_executor(workers, scheduler, scheduler_file=None) -> str | None:
    """The scheduler address of :func:`executor_options`' values (None: the embedded
    cluster): ``--scheduler``, or the ``address`` of the ``--scheduler-file`` Dask wrote;
    more than one of ``--workers``, ``--scheduler`` and ``--scheduler-file`` is refused, and
    a scheduler file that is not one, naming it."""
    import json

    from models.errors import InputError

    given = [o for o, v in (("--workers", workers), ("--scheduler", scheduler),
                            ("--scheduler-file", scheduler_file)) if v is not None]
    if len(given) > 1:
        raise InputError(f"give one of --workers (embedded cluster), --scheduler or "
                         f"--scheduler-file, not {' and '.join(given)}", key=given[0])
    if scheduler_file is None:
        return scheduler
    try:
        doc = json.loads(Path(scheduler_file).read_text())
    except FileNotFoundError:
        raise InputError("no such file (start the scheduler with --scheduler-file FILE first)",
                         key="--scheduler-file", source=scheduler_file) from None
    except (OSError, ValueError) as exc:
        raise InputError(f"not a Dask scheduler file ({exc})", key="--scheduler-file",
                         source=scheduler_file) from None
    address = doc.get("address") if isinstance(doc, dict) else None
    if not isinstance(address, str) or "://" not in address:
        raise InputError("not a Dask scheduler file: no \"address\" of a scheduler in it",
                         key="--scheduler-file", source=scheduler_file)
    return address


@click.command("campaign")
@common_options
@click.argument("manifest", callback=input_path, type=click.Path(dir_okay=False, path_type=str))
@output_option("the campaign directory (one result directory per flight, catalog.parquet, "
               "campaign.json)", file_okay=False, dir_okay=True, metavar="DIR")
@click.option("--mcmc", "mcmc", type=click.Choice(["auto", "always", "never"]), default=None,
              help="When emcee runs on every flight, over the manifest's mcmc option (as "
                   "reconstruct --mcmc; default: the manifest's, else auto).")
@executor_options
@seed_option()
@click.pass_context
def campaign_cmd(ctx: click.Context, manifest: str, output: str, mcmc: str | None,
                 workers: int | None, scheduler: str | None, scheduler_file: str | None,
                 resume: bool, dashboard: bool, seed: int) -> None:
    """Reconstruct every flight of MANIFEST (TOML: recon.app.campaign) into DIR/<flight>/, as
    reconstruct would, on a Dask cluster, and write DIR/catalog.parquet, DIR/campaign.json
    and the campaign's report (DIR/report.html, report.pdf). --seed is the seed of each
    flight the manifest gives none (its own seed, else [defaults] seed, comes first).

    Exit 0 when every flight is reconstructed (status ok); 3 when the campaign finished but a
    flight is not (implausible, failed, refused input or lost worker: see campaign.json)."""
    from recon.app.campaign import load_manifest, reconstruct_one, run_campaign

    scheduler = check_executor(workers, scheduler, scheduler_file)
    show_dashboard = dashboard_printer(dashboard)
    specs = load_manifest(manifest, seed=seed)
    if mcmc is not None:
        import dataclasses

        specs = [dataclasses.replace(sp, options={**sp.options, "mcmc": mcmc}) for sp in specs]
    say(f"campaign: {len(specs)} flights from {manifest}")
    doc = run_campaign(specs, output, reconstruct_one, workers=workers, scheduler=scheduler,
                       resume=resume, settings={"manifest": str(Path(manifest).resolve())},
                       progress=progress_printer(), dashboard=show_dashboard)
    c = doc["counts"]
    end_with_report(output)
    say(f"{output}/catalog.parquet written: {c['done']} of {c['total']} flights reconstructed"
        f", {c['failed']} failed, {c['implausible']} implausible")
    not_ok = [n for n, f in doc["flights"].items() if f.get("status") != "ok"]
    if not_ok:
        click.echo(f"error: {output}: {len(not_ok)} flight(s) not reconstructed: "
                   f"{', '.join(not_ok)} (campaign.json says why)", err=True)
        ctx.exit(3)


@click.command("fleet")
@common_options
@click.argument("manifest", callback=input_path, type=click.Path(dir_okay=False, path_type=str))
@output_option("the fleet directory (one result directory per flight, fleet.json, "
               "fleet_draws.parquet, the campaign's catalog.parquet and campaign.json)",
               file_okay=False, dir_okay=True, metavar="DIR")
@executor_options
@seed_option()
def fleet_cmd(manifest: str, output: str, workers: int | None, scheduler: str | None,
              scheduler_file: str | None, resume: bool, dashboard: bool, seed: int) -> None:
    """Fit the mechanism a fleet of flights of one unit shares: MANIFEST is a campaign's
    (recon.app.campaign) with a [fleet] table naming the shared parameters (shared = [...],
    free in every flight's run configuration with the same prior). Each flight is
    reconstructed on its own into DIR/<flight>/, then their posteriors are combined into the
    joint posterior of the shared parameters and of each flight's own given them
    (recon.app.fleet), on the same Dask cluster; DIR/fleet.json, fleet_draws.parquet and the
    report."""
    from recon.app.fleet import run_fleet

    scheduler = check_executor(workers, scheduler, scheduler_file)

    def progress(stage: str, done: int, total: int) -> None:
        if not quiet():
            click.echo(f"fleet: {stage} {done}/{total}", err=True)

    show_dashboard = dashboard_printer(dashboard)
    doc = run_fleet(manifest, output, workers=workers, scheduler=scheduler, resume=resume,
                    dashboard=show_dashboard,
                    seed=seed, progress=progress)
    end_with_report(output)
    for name, s in doc["shared"].items():
        say(f"{name}: {s['median']:.6g} (95 %: {s['ci95'][0]:.6g} ... {s['ci95'][1]:.6g})"
            + (f", {s['narrowing']:.1f}x narrower than the best flight" if s.get("narrowing")
               else ""))
    say(f"{output}/fleet.json written; {doc['status_reason']}")


COMMANDS = (campaign_cmd, fleet_cmd)
