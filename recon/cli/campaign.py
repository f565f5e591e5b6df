"""``dockrecon campaign``: many flights reconstructed on a Dask cluster (:mod:`recon.campaign`)."""
from __future__ import annotations

import time
from pathlib import Path

import click

from recon.cli.options import common_options, input_path, output_option, quiet, say

__all__ = ["COMMANDS", "reconstruct_one"]


def reconstruct_one(spec, out: str) -> dict:
    """The campaign's per-flight job (runs on a Dask worker): what ``dockrecon reconstruct``
    does for one flight, into ``out/<flight>`` replaced whole, with its report; returns the
    flight's stamp (also written beside its result). A flight whose input is refused returns
    status ``error`` with the one-line reason instead of raising: the campaign goes on."""
    from models.errors import InputError
    from recon.campaign import FLIGHT_STAMP, spec_digest
    from recon.flight import reconstruct_flight
    from recon.io import write_json
    from recon.outputs import replaced_whole
    from reports.build import rebuild_report

    target = Path(out) / spec.name
    t0 = time.time()
    digest = spec_digest(spec)
    opts = dict(spec.options)
    try:
        with replaced_whole(target) as stage:
            res = reconstruct_flight(list(spec.telemetry), spec.scenario, stage,
                                     config=spec.config, seed=spec.seed,
                                     walkers=opts.get("walkers"), steps=opts.get("steps"),
                                     mcmc=opts.get("mcmc", True),
                                     mcmc_below_ess=opts.get("mcmc_below_ess"),
                                     starts=opts.get("starts"), max_nfev=opts.get("max_nfev"))
            rebuild_report(stage)
            stamp = {"digest": digest, "status": res.status, "reason": res.status_reason,
                     "warnings": list(res.warnings), "wall_s": round(time.time() - t0, 2)}
            write_json(stamp, stage / FLIGHT_STAMP)
    except InputError as exc:     # DataError too: the flight's input, not the campaign
        return {"digest": digest, "status": "error", "reason": str(exc),
                "wall_s": round(time.time() - t0, 2)}
    return stamp


def _progress_line(c: dict) -> str:
    eta = c.get("eta_s")
    left = "" if eta is None else f", about {eta / 60:.0f} min left"
    return (f"campaign: {c['done']}/{c['total']} done, {c.get('running', 0)} running, "
            f"{c['failed']} failed{left}")


@click.command("campaign")
@common_options
@click.argument("manifest", callback=input_path, type=click.Path(dir_okay=False, path_type=str))
@output_option("the campaign directory (one result directory per flight, catalog.parquet, "
               "campaign.json)", file_okay=False, dir_okay=True, metavar="DIR")
@click.option("--workers", type=click.IntRange(min=1, max=4096), default=None,
              help="Worker processes of the embedded Dask cluster [default: the cores].")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="An existing Dask scheduler (tcp://host:port) instead of the embedded one.")
@click.option("--resume", is_flag=True,
              help="Keep the flights already complete in DIR (same specification); redo "
                   "the rest.")
@click.pass_context
def campaign_cmd(ctx: click.Context, manifest: str, output: str, workers: int | None,
                 scheduler: str | None, resume: bool) -> None:
    """Reconstruct every flight of MANIFEST (TOML: recon.campaign) into DIR/<flight>/, as
    reconstruct would, on a Dask cluster, and write DIR/catalog.parquet.

    Exit 0 when every flight is reconstructed (status ok); 3 when the campaign finished but a
    flight is not (implausible, failed, refused input or lost worker: see campaign.json)."""
    from models.errors import InputError
    from recon.campaign import load_manifest, run_campaign

    if workers is not None and scheduler is not None:
        raise InputError("give either --workers (embedded cluster) or --scheduler",
                         key="--workers")
    specs = load_manifest(manifest)
    say(f"campaign: {len(specs)} flights from {manifest}")
    last = [0.0]

    def progress(c: dict) -> None:
        if quiet():
            return
        now = time.time()
        if now - last[0] > 2.0 or c["done"] + c["failed"] == c["total"]:
            last[0] = now
            click.echo(_progress_line(c), err=True)

    doc = run_campaign(specs, output, reconstruct_one, workers=workers, scheduler=scheduler,
                       resume=resume, settings={"manifest": str(Path(manifest).resolve())},
                       progress=progress)
    c = doc["counts"]
    say(f"{output}/catalog.parquet written: {c['done']} of {c['total']} flights reconstructed"
        f", {c['failed']} failed, {c['implausible']} implausible")
    not_ok = [n for n, f in doc["flights"].items() if f.get("status") != "ok"]
    if not_ok:
        click.echo(f"error: {output}: {len(not_ok)} flight(s) not reconstructed: "
                   f"{', '.join(not_ok)} (campaign.json says why)", err=True)
        ctx.exit(3)


COMMANDS = (campaign_cmd,)
