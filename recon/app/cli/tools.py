"""``dockrecon samples``, ``dockrecon report``, ``dockrecon bench``: the shipped synthetic
samples, reports of results, speed of the kernels."""
from __future__ import annotations

import click

from models.errors import InputError
from recon.app.cli.options import (Group, Progress, common_options, input_path, output_option,
                                   seed_option)

__all__ = ["COMMANDS", "samples", "report_cmd", "show_cmd", "bench", "schema_cmd"]


@click.group(cls=Group)
@common_options
def samples() -> None:
    """Generate the shipped synthetic samples."""


@samples.command("generate")
@common_options
@click.argument("kind", type=click.Choice(["flights"]), default="flights")
@click.option("--unit", "unit_name", type=click.Choice(["probe_cone", "peripheral"]),
              default="probe_cone", show_default=True,
              help="Docking unit of the flights (peripheral: telemetry_samples/flights/"
                   "peripheral).")
@output_option("the directory (default: samples/KIND in the working directory, "
               "samples/flights/peripheral for --unit peripheral; never the installed "
               "package's telemetry_samples/ unless named)",
               required=False, file_okay=False, dir_okay=True, metavar="DIR")
@seed_option()
def samples_generate(kind: str, unit_name: str, output: str | None, seed: int) -> None:
    """Simulate and record the synthetic samples of KIND, each with its truth (flights: the
    5-s records cut to the model, and the realistic-span records in realistic/; with
    --unit peripheral the peripheral unit's records cut to the model). The shipped samples
    are those of --seed 2026 (they regenerate bit for bit)."""
    from pathlib import Path

    progress = Progress("samples generate")
    # without -o, a directory of the user's, so that the shipped samples (the truth of the
    # tests and the docs) are only ever rewritten on purpose (-o telemetry_samples/flights)
    base = Path("samples") / kind
    if unit_name == "peripheral":
        from telemetry_samples.flights.peripheral.generate import generate as generate_peripheral

        out = Path(output) if output else base / "peripheral"
        paths = generate_peripheral(out, seed)
        progress("flights", 1, 1)
    else:
        from telemetry_samples.flights.generate import generate, generate_realistic

        out = Path(output) if output else base
        paths = generate(out, seed)
        progress("flights", 1, 2)
        paths += generate_realistic(out / "realistic", seed)
        progress("flights", 2, 2)
    for path in paths:
        click.echo(str(path))


@click.command("report")
@common_options
@click.argument("result", callback=input_path, type=click.Path(path_type=str))
@click.option("--format", "formats", default="html,pdf", show_default=True,
              help="Comma-separated report formats: html, pdf.")
@output_option("the directory the report is written to (default: beside the result)",
               required=False, file_okay=False, dir_okay=True, metavar="DIR")
def report_cmd(result: str, formats: str, output: str | None) -> None:
    """Rebuild the report of a RESULT directory (its result.json) or result file."""
    from reports.build import parse_formats, rebuild_report

    for path in rebuild_report(result, parse_formats(formats), directory=output):
        click.echo(str(path))


@click.command("show")
@common_options
@click.argument("result", callback=input_path, type=click.Path(path_type=str))
@click.option("--json", "as_json", is_flag=True,
              help="The status and every parameter's map, median, 68 and 95 % intervals and "
                   "unit as JSON (SI, as result.json holds them), for machines.")
def show_cmd(result: str, as_json: bool) -> None:
    """Print the status and the parameter table of a RESULT directory (its result.json):
    median and 95 % interval of each parameter in the units of its run configuration, as
    reconstruct prints them at the end."""
    import json

    from recon.app.summary import machine_summary, parameter_table, read_result

    doc = read_result(result)
    if as_json:
        click.echo(json.dumps(machine_summary(doc), indent=1))
    else:
        click.echo(parameter_table(doc))


@click.group(cls=Group)
@common_options
def bench() -> None:
    """Measure the speed of the compiled kernels."""


@bench.command("docking")
@common_options
@click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON object.")
@click.option("--repeats", type=int, default=5, show_default=True)
@click.option("--batch", type=int, default=16, show_default=True)
@click.option("--unit", "unit_name", default=None,
              help="Docking unit (default: the first registered).")
def bench_docking(as_json, repeats, batch, unit_name):
    """A unit's reference docking (20 s) on one core, the batch on two cores."""
    import json

    from models.unit import get_unit, unit_names
    from recon.config import load_scenario

    if repeats < 1 or batch < 1:
        raise InputError("must be at least 1", key="--repeats/--batch")
    unit = get_unit(unit_name or unit_names()[0], key="--unit")
    _, scn, _ = load_scenario(unit.preset("reference"))
    fig = unit.benchmark(scn, repeats=repeats, batch=batch)
    if as_json:
        click.echo(json.dumps(fig))
    else:
        for k, v in fig.items():
            click.echo(f"{k:20s} {v}")


@click.command("schema")
@common_options
@click.argument("kind", type=click.Choice(["run", "scenario", "rig", "appendage",
                                           "hysteresis", "modes", "campaign", "fleet"]))
@click.option("--unit", "unit_name", default="probe_cone", show_default=True,
              help="The docking unit of a scenario (models.unit registry); only with "
                   "scenario.")
@output_option("the JSON Schema file (default: standard output)", required=False,
               metavar="FILE")
def schema_cmd(kind: str, unit_name: str, output: str | None) -> None:
    """Print (or write) the JSON Schema of an input TOML of KIND: a run configuration, a
    scenario of a docking unit, a hydraulic rig configuration (simulate rig, identify rig
    --config), an appendage configuration (simulate appendage), a hysteresis element
    (identify hysteresis --element), a modes file (identify resonance-coupling --modes), a
    campaign or a fleet manifest. Every key with its type,
    unit, default, bounds and meaning, as the readers check them. Editors complete and check TOML files against it (Taplo / Even Better TOML: a first
    line ``#:schema PATH``); the repository ships them in recon/schemas/."""
    from models.unit import get_unit
    from recon.schema import dumps, json_document

    if kind == "scenario":
        get_unit(unit_name, key="--unit")
    text = dumps(json_document(kind, unit_name if kind == "scenario" else None))
    if output is None:
        click.echo(text, nl=False)
    else:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text)
        click.echo(output)


COMMANDS = (samples, report_cmd, show_cmd, bench, schema_cmd)
