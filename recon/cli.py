"""The ``dockrecon`` command line: parse, call one library function, print.

Exit codes
----------
0
    success.
1
    internal failure (a bug or an environment problem); the traceback is shown with ``-v``.
2
    bad user input (a file, a key, a column, an option): one line ``error: <file>: <what>``.
3
    ``reconstruct``: the fit is implausible (``result.json`` ``"status": "implausible"``: the
    best fit's cost exceeds what a correct fit plausibly has; the result and its report are
    written, but they are not a reconstruction).
4
    ``reconstruct``: the reconstruction failed (``"status": "failed"``: no finite likelihood
    anywhere the search went; ``result.json`` and the report say why).
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

__all__ = ["cli", "main", "EXIT_STATUS"]

#: exit code of ``reconstruct`` for a result that is not a reconstruction (module docstring)
EXIT_STATUS = {"implausible": 3, "failed": 4}

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

# --- reports --------------------------------------------------------------------------------
def _end_with_report(result: str) -> None:
    """Every main job ends in a report: HTML and PDF beside its result."""
    from reports.build import rebuild_report

    for path in rebuild_report(result):
        click.echo(f"report: {path}", err=True)


@cli.command("report")
@click.argument("result", type=click.Path(path_type=str))
@click.option("--format", "formats", default="html,pdf", show_default=True,
              help="Comma-separated report formats: html, pdf.")
def report_cmd(result: str, formats: str) -> None:
    """Rebuild the report of a RESULT directory (its result.json) or result file."""
    from reports.build import parse_formats, rebuild_report

    for path in rebuild_report(result, parse_formats(formats)):
        click.echo(str(path))


# --------------------------------------------------------------------------------------------
# docking: simulate docking, bench docking (any registered docking unit)
@simulate.command("docking")
@click.argument("scenario_path", metavar="SCENARIO.toml", type=click.Path(dir_okay=False))
@click.option("--initial", "initial_path", metavar="ICS.toml", type=click.Path(dir_okay=False),
              help="Initial conditions (the unit's rel_* keys, SI); default: the scenario's "
                   "[initial] table.")
@click.option("--output", "output_path", metavar="TRAJ.parquet", required=True,
              type=click.Path(dir_okay=False), help="Trajectory file (.parquet or .csv).")
@click.option("--events", "events_path", metavar="EVENTS.json", type=click.Path(dir_okay=False),
              help="Write the event times here.")
@click.option("--rate", type=float, default=None, metavar="HZ",
              help="Output rate [Hz]; default: the scenario's integration.output_rate.")
@click.option("--duration", type=float, default=None, metavar="S",
              help="Simulated time [s]; default: the scenario's integration.duration.")
def simulate_docking(scenario_path, initial_path, output_path, events_path, rate, duration):
    """Simulate a docking (the unit the scenario names) and write its telemetry, loads and
    energy ledger."""
    from models.errors import SimulationError
    from recon import io
    from recon.config import load_scenario

    unit, scn, _ = load_scenario(scenario_path)
    initial = None
    if initial_path is not None:
        d = io.load_toml(initial_path)
        try:
            initial = unit.initial(d["initial"] if set(d) == {"initial"} else d)
        except InputError as exc:
            raise exc.with_source(initial_path)
    if rate is not None and not rate > 0.0:
        raise InputError("must be positive", key="--rate")
    if duration is not None and not duration > 0.0:
        raise InputError("must be positive", key="--duration")
    try:
        traj = unit.simulate(scn, initial, rate=rate, duration=duration)
    except SimulationError as exc:
        raise InputError(str(exc), source=scenario_path) from None
    except InputError as exc:
        raise exc.with_source(scenario_path)
    frame = traj.to_frame()
    io.write_table(frame, output_path,
                   {c: unit.channels[c].file_unit if c in unit.channels else "s"
                    for c in frame.columns})
    if events_path is not None:
        io.write_json({"events": traj.event_list(), "unit": unit.name,
                       "scenario": str(scenario_path),
                       "settings": {"rate": rate, "duration": duration,
                                    "initial": str(initial_path) if initial_path else None},
                       "versions": io.versions()}, events_path)
    log.info("docking: %d samples, capture %s", len(traj.t), traj.events.get("capture"))


@cli.group(cls=_Group)
def bench() -> None:
    """Measure the speed of the compiled kernels."""


@bench.command("docking")
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

# --- hysteresis (issue 2) --------------------------------------------------------------------
@identify.command("hysteresis")
@click.argument("record", type=click.Path())
@click.option("--element", "element_path", required=True, type=click.Path(),
              help="Start tables of the element (TOML, SI units; see models.hysteresis).")
@click.option("--output", required=True, type=click.Path(dir_okay=False),
              help="Result JSON: fitted tables, uncertainties, residual RMS.")
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="Also draw the loop, the fitted model and the residual (PNG).")
@click.option("--starts", type=click.IntRange(1, 64), default=4, show_default=True,
              help="Local fits (the start tables, then seeded draws around them).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the draws.")
def identify_hysteresis(record: str, element_path: str, output: str, plot: str | None,
                        starts: int, seed: int) -> None:
    """Fit a hysteresis element's branch tables to a static load-deflection RECORD.

    RECORD is CSV (headers ``q[unit]``, ``force[unit]``) or Parquet (field metadata ``unit``),
    samples in the order they were taken.
    """
    from identification.hysteresis_fit import fit_hysteresis
    from models.hysteresis import element_from_dict
    from recon.io import atomic_path, load_toml, read_table, versions, write_json

    try:
        start = element_from_dict(load_toml(element_path))
    except InputError as exc:
        raise exc.with_source(str(element_path)) from None
    q_unit, f_unit, _ = start.units
    frame, file_units = read_table(record, {"q": q_unit, "force": f_unit},
                                   required=("q", "force"), allow_nan=False)
    log.info("%s: %d samples; fitting %s (%s)", record, len(frame), start.name, start.variant)
    try:
        fit = fit_hysteresis(frame["q"].to_numpy(), frame["force"].to_numpy(), start,
                             n_starts=starts, seed=seed)
    except InputError as exc:
        raise exc.with_source(str(record)) from None
    result = {
        "kind": "hysteresis_fit",
        "record": str(record),
        "record_units": file_units,
        "start_element": str(element_path),
        **fit.to_dict(),
        "settings": {"starts": starts, "seed": seed, "rel_spread": 0.08},
        "versions": versions(),
    }
    if plot is not None:
        import matplotlib.pyplot as plt

        from reports.figures_hysteresis import hysteresis_fit_figure

        fig = hysteresis_fit_figure(frame["q"].to_numpy(), frame["force"].to_numpy(), fit,
                                    title=f"{start.name}: {record}")
        with atomic_path(plot) as tmp:
            fig.savefig(tmp, format="png", dpi=120)
        plt.close(fig)
        result["plot"] = str(plot)
    write_json(result, output)  # last: the result exists only when complete
    _end_with_report(output)
    unit = fit.element.units[1]
    click.echo(f"{output}: residual RMS {fit.residual_rms:.4g} {unit} over {fit.n_points} "
               f"samples ({'converged' if fit.success else 'NOT converged: ' + fit.message})",
               err=True)
# ---- appendage (issue 9): spacecraft with an elastic rod chain -------------------------------
@simulate.command("appendage")
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--output", "-o", required=True, type=click.Path(dir_okay=False),
              help="Trajectory table, .csv or .parquet (units in headers / field metadata).")
@click.option("--events", type=click.Path(dir_okay=False),
              help='Clamp engagements as JSON: {"clamps": [{"hinge": k, "t": ...}]}.')
@click.option("--formulation", type=click.Choice(["full", "reduced"]),
              help="Override the configuration's formulation.")
@click.option("--rtol", type=float, default=1e-8, show_default=True,
              help="Relative tolerance of the integrator.")
@click.option("--atol", type=float, default=1e-10, show_default=True,
              help="Absolute tolerance of the integrator (rad, m, rad/s, m/s).")
@click.option("--second-order-bending/--no-second-order-bending", default=True,
              show_default=True,
              help="Full formulation: keep the O(bending^2) inertia terms the paper's N z form "
                   "lacks (energy-exact) or drop them.")
def simulate_appendage(config: str, output: str, events: str | None, formulation: str | None,
                       rtol: float, atol: float, second_order_bending: bool) -> None:
    """Simulate a spacecraft with an elastic rod appendage (full or reduced formulation)."""
    from pathlib import Path

    from models.appendage import AppendageConfig, simulate as run
    from recon.io import load_toml, versions, write_json, write_table

    for path, what in ((output, "--output"), (events, "--events")):
        if path is not None and Path(path).suffix.lower() not in (
                (".csv", ".parquet") if what == "--output" else (".json",)):
            raise InputError(f"unsupported file type '{Path(path).suffix}'", source=what)
    try:
        cfg = AppendageConfig.from_dict(load_toml(config))
        res = run(cfg, formulation=formulation, rtol=rtol, atol=atol,
                  second_order_bending_terms=second_order_bending)
    except InputError as exc:
        raise exc.with_source(config)
    write_table(res.columns(), output, res.units())
    if events is not None:
        write_json({"clamps": [{"hinge": e.hinge, "t": e.t} for e in res.clamps],
                    "units": {"t": "s"},
                    "settings": {"config": str(config), "formulation": res.formulation,
                                 "rtol": rtol, "atol": atol,
                                 "second_order_bending_terms": second_order_bending},
                    "stats": res.stats, "versions": versions()}, events)
    log.info("appendage: %s, %d points, %d RHS evaluations, %.3f s", res.formulation,
             len(res.t), res.stats["nfev"], res.stats["wall_s"])
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
    _end_with_report(output)


# ---- reconstruction (issue 6) ---------------------------------------------------------------
@cli.command("validate")
@click.argument("telemetry", nargs=-1, required=True, type=click.Path(dir_okay=True, path_type=str))
@click.option("--max-gap", type=float, default=0.5, show_default=True,
              help="Longest accepted interval between samples of a channel [s].")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON on stdout.")
@click.pass_context
def validate_cmd(ctx: click.Context, telemetry: tuple[str, ...], max_gap: float,
                 as_json: bool) -> None:
    """Check telemetry files (Parquet or CSV, one or several on separate time bases); exit 0
    when all are usable, 65 when one is not."""
    import json as _json

    from recon.telemetry import read_telemetry

    reports = [read_telemetry(path, max_gap=max_gap)[1] for path in telemetry]
    if as_json:
        docs = [r.to_dict() for r in reports]
        click.echo(_json.dumps(docs[0] if len(docs) == 1 else docs, indent=2))
    else:
        for path, report in zip(telemetry, reports):
            for line in report.lines():
                click.echo(line)
            verdict = "usable" if report.usable else "NOT usable"
            click.echo(f"{path}: {report.n_rows} rows, {len(report.channels)} channels, "
                       f"{len(report.errors)} errors, {len(report.warnings)} warnings: "
                       f"{verdict}")
    if not all(r.usable for r in reports):
        from models.errors import DataError

        ctx.exit(DataError.exit_code)


@cli.command("reconstruct")
@click.argument("telemetry", nargs=-1, required=True, type=click.Path(dir_okay=True, path_type=str))
@click.option("--scenario", required=True, type=click.Path(path_type=str),
              help="Scenario TOML (may hold the run tables too).")
@click.option("--output", "-o", required=True, type=click.Path(file_okay=False, path_type=str),
              help="Result directory (result.json, chains.h5, fit.parquet, "
                   "trajectory.parquet).")
@click.option("--config", type=click.Path(path_type=str), default=None,
              help="Run TOML: [parameters], [observation], [model], [optimizer], [sampler].")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--walkers", type=click.IntRange(min=2), default=None, help="Walkers per ensemble.")
@click.option("--steps", type=click.IntRange(min=1), default=None, help="Step limit per ensemble.")
@click.option("--resume", is_flag=True, help="Continue the chains of an interrupted run in DIR.")
@click.option("--no-mcmc", is_flag=True, help="No emcee: intervals from importance sampling "
              "([optimizer] importance > 0) or the Laplace approximation.")
@click.option("--mcmc-below-ess", type=click.FloatRange(min=0, min_open=True), default=None,
              metavar="N", help="Run emcee only when importance sampling's effective sample "
                                "size is below N (the calibrated engine: 100; overrides "
                                "[optimizer] mcmc_below_ess).")
@click.option("--starts", type=click.IntRange(min=0), default=None,
              help="Latin-hypercube starts besides the first guess (overrides [optimizer]).")
@click.option("--max-nfev", type=click.IntRange(min=1), default=None,
              help="Residual evaluations per start (overrides [optimizer]).")
@click.pass_context
def reconstruct_cmd(ctx: click.Context, telemetry: tuple[str, ...], scenario: str, output: str,
                    config: str | None, seed: int, walkers: int | None, steps: int | None,
                    resume: bool, no_mcmc: bool, mcmc_below_ess: float | None,
                    starts: int | None, max_nfev: int | None) -> None:
    """Reconstruct the initial conditions and parameters of a docking from TELEMETRY
    (one file, or several files on separate time bases of one clock).

    Exit 0 with a reconstruction; 3 when the fit is implausible and 4 when it failed (the
    result and its report are written and say why)."""
    from recon.flight import reconstruct_flight

    bars: dict = {}

    def progress(stage: str, done: int, total: int) -> None:
        if not progress_enabled(ctx):
            log.info("%s: %d / %d", stage, done, total)
            return
        bar = bars.get(stage)
        if bar is None:
            bar = bars[stage] = click.progressbar(length=total, label=stage, file=sys.stderr)
            bar.__enter__()
        bar.update(done - bar.pos)
        if done >= total:
            bar.__exit__(None, None, None)

    res = reconstruct_flight(list(telemetry), scenario, output, config=config, seed=seed,
                             walkers=walkers, steps=steps, resume=resume, mcmc=not no_mcmc,
                             mcmc_below_ess=mcmc_below_ess, starts=starts, max_nfev=max_nfev,
                             progress=progress)
    for bar in bars.values():
        if bar.pos < bar.length:
            bar.__exit__(None, None, None)
    diag = res.diagnostics
    how = diag["method"]
    if how == "mcmc":
        how += f" ({diag['mcmc']['status']}: {diag['mcmc']['reason']})"
    elif "mcmc_skipped" in diag:
        how += f" (no MCMC: {diag['mcmc_skipped']})"
    click.echo(f"{output}/result.json written; intervals from {how}", err=True)
    _end_with_report(output)
    if res.status != "ok":
        click.echo(f"error: {output}: reconstruction {res.status.upper()}: {res.status_reason}",
                   err=True)
        ctx.exit(EXIT_STATUS[res.status])


@cli.group(cls=_Group)
def samples() -> None:
    """Generate the shipped synthetic samples."""


@samples.command("generate")
@click.argument("kind", type=click.Choice(["flights"]), default="flights")
@click.option("--output", "-o", type=click.Path(file_okay=False, path_type=str), default=None,
              help="Directory (default: telemetry_samples/KIND in the package).")
@click.option("--seed", type=int, default=2026, show_default=True)
def samples_generate(kind: str, output: str | None, seed: int) -> None:
    """Simulate and record the synthetic samples of KIND, each with its truth (flights: the
    5-s records cut to the model, and the realistic-span records in realistic/)."""
    from pathlib import Path

    from telemetry_samples import SAMPLES_DIR
    from telemetry_samples.flights.generate import generate, generate_realistic

    out = Path(output) if output else SAMPLES_DIR / kind
    for path in generate(out, seed) + generate_realistic(out / "realistic", seed):
        click.echo(str(path))


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
    _end_with_report(output)


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="dockrecon")


if __name__ == "__main__":  # pragma: no cover
    main()
