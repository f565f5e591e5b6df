"""``dockrecon simulate``: run a forward model and write its channels.

``simulate docking --trace T0:T1 [--trace-what contact,latch,mechanism]`` also writes the
trace of every selected routine at every RK4 stage in that window of model time (the long
table of :meth:`models.trace.Trace.frame`) to ``--trace-out`` (default: the output's stem +
``.trace.parquet``), written even when the run aborts, since an abort's message proposes the
window to rerun with.
"""
from __future__ import annotations

import logging

import click

from models.errors import InputError
from recon.app.cli.options import Finite, Group, common_options, input_path, output_option, say

__all__ = ["COMMANDS", "simulate", "rig_config", "TraceWindow", "TraceGroups",
           "default_trace_path"]

log = logging.getLogger("dockrecon")


class TraceWindow(click.ParamType):
    """``T0:T1`` [s] with ``0 <= T0 < T1`` (:func:`models.trace.parse_window`)."""

    name = "T0:T1"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        from models.trace import parse_window

        try:
            return parse_window(value)
        except InputError as exc:
            self.fail(exc.what, param, ctx)


class TraceGroups(click.ParamType):
    """Comma-separated trace groups (:func:`models.trace.parse_groups`)."""

    name = "GROUPS"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        from models.trace import parse_groups

        try:
            return parse_groups(value)
        except InputError as exc:
            self.fail(exc.what, param, ctx)


def default_trace_path(output: str) -> str:
    """The trace file beside the trajectory: ``DIR/STEM.trace.parquet``."""
    from pathlib import Path

    p = Path(output)
    return str(p.with_name(p.stem + ".trace.parquet"))


def _write_trace(trace, path: str) -> None:
    from recon import io

    frame = trace.frame()
    io.write_table(frame, path, trace.units())
    if trace.dropped:
        log.warning("trace: %d rows dropped (the buffer of %d rows was full); narrow the "
                    "window or raise --trace-max-rows", trace.dropped, trace.settings.max_rows)
    log.info("trace: %d kernel rows, %d values -> %s", len(trace), len(frame), path)


@click.group(cls=Group)
@common_options
def simulate() -> None:
    """Run a forward model and write its channels."""


@simulate.command("docking")
@common_options
@click.argument("scenario_path", metavar="SCENARIO.toml", callback=input_path,
                type=click.Path(dir_okay=False))
@click.option("--initial", "initial_path", metavar="ICS.toml", callback=input_path,
              type=click.Path(dir_okay=False),
              help="Initial conditions (the unit's rel_* keys, SI); default: the scenario's "
                   "[initial] table.")
@output_option("the trajectory file (.parquet or .csv)", metavar="TRAJ.parquet")
@output_option("also the event times, to this JSON file", required=False,
               metavar="EVENTS.json", flag="--events", short=None, dest="events_path")
@click.option("--rate", type=Finite(0.01, 1e5, min_open=False), default=None, metavar="HZ",
              help="Output rate [Hz], 0.01 ... 1e5; default: the scenario's "
                   "integration.output_rate.")
@click.option("--duration", type=Finite(0.0, 1e4, min_open=True), default=None, metavar="S",
              help="Simulated time [s], up to 1e4; default: the scenario's "
                   "integration.duration.")
@click.option("--trace", "trace_window", type=TraceWindow(), default=None, metavar="T0:T1",
              help="Trace every selected routine's inputs, intermediates and outputs at every "
                   "RK4 stage with model time in [T0, T1] s (e.g. the window an abort "
                   "message proposes).")
@click.option("--trace-what", "trace_what", type=TraceGroups(),
              default="contact,latch,mechanism", show_default=True, metavar="GROUPS",
              help="Routines to trace, comma-separated: contact, latch, mechanism, search "
                   "(peripheral: every fan search with its full inputs, six rows a stage).")
@output_option("the trace (long table: t, step, stage, group, routine, i, j, status, field, "
               "value, unit); default: the output's stem + .trace.parquet", required=False,
               metavar="TRACE.parquet", flag="--trace-out", short=None, dest="trace_out")
@click.option("--trace-max-rows", type=click.IntRange(1, 100_000_000), default=1_000_000,
              show_default=True, metavar="N",
              help="Cap on the traced kernel rows (264 bytes each); rows past it are dropped "
                   "with a warning.")
def simulate_docking(scenario_path, initial_path, output, events_path, rate, duration,
                     trace_window, trace_what, trace_out, trace_max_rows):
    """Simulate a docking (the unit the scenario names) and write its telemetry, loads and
    energy ledger; with --trace, also the trace of a window (the contact paper's section 10
    practice)."""
    from identification.provenance import versions
    from models.errors import SimulationError
    from recon import io
    from recon.config import load_scenario

    unit, scn, _ = load_scenario(scenario_path)
    kw = {}
    if trace_window is not None:
        from models.trace import TraceSettings

        if not getattr(unit, "supports_trace", False):
            raise InputError(f"the {unit.name} unit cannot trace yet", key="--trace")
        kw["trace"] = TraceSettings(trace_window[0], trace_window[1], trace_what,
                                    trace_max_rows)
        trace_out = trace_out or default_trace_path(output)
    elif trace_out is not None:
        raise InputError("needs --trace T0:T1", key="--trace-out")
    initial = None
    if initial_path is not None:
        d = io.load_toml(initial_path)
        try:
            initial = unit.initial(d["initial"] if set(d) == {"initial"} else d)
        except InputError as exc:
            raise exc.with_source(initial_path)
    try:
        traj = unit.simulate(scn, initial, rate=rate, duration=duration, **kw)
    except SimulationError as exc:
        msg = str(exc)
        if getattr(exc, "trace", None) is not None:
            _write_trace(exc.trace, trace_out)
            msg += f" (trace written to {trace_out})"
        raise InputError(msg, source=scenario_path) from None
    except InputError as exc:
        raise exc.with_source(scenario_path)
    frame = traj.to_frame()
    io.write_table(frame, output,
                   {c: unit.channels[c].file_unit if c in unit.channels else "s"
                    for c in frame.columns})
    if events_path is not None:
        io.write_json({"kind": "docking_events", "events": traj.event_list(), "unit": unit.name,
                       "scenario": str(scenario_path),
                       "settings": {"rate": rate, "duration": duration,
                                    "initial": str(initial_path) if initial_path else None},
                       "versions": versions()}, events_path)
    if kw:
        _write_trace(traj.trace, trace_out)
    log.info("docking: %d samples, capture %s", len(traj.t), traj.events.get("capture"))


@simulate.command("appendage")
@common_options
@click.argument("config", callback=input_path, type=click.Path(dir_okay=False))
@output_option("the trajectory table, .csv or .parquet (units in headers / field metadata)")
@output_option('also the clamp engagements, to this JSON file ({"clamps": [{"hinge": k, '
               '"t": ...}]})', required=False, metavar="EVENTS.json", flag="--events",
               short=None, dest="events")
@click.option("--formulation", type=click.Choice(["full", "reduced"]),
              help="Override the configuration's formulation.")
@click.option("--rtol", type=Finite(1e-14, 0.1, min_open=False), default=1e-8,
              show_default=True, help="Relative tolerance of the integrator, 1e-14 ... 0.1.")
@click.option("--atol", type=Finite(0.0, 1.0, min_open=True), default=1e-10,
              show_default=True,
              help="Absolute tolerance of the integrator (rad, m, rad/s, m/s), up to 1.")
@click.option("--second-order-bending/--no-second-order-bending", default=True,
              show_default=True,
              help="Full formulation: keep the O(bending^2) inertia terms the paper's N z form "
                   "lacks (energy-exact) or drop them.")
def simulate_appendage(config: str, output: str, events: str | None, formulation: str | None,
                       rtol: float, atol: float, second_order_bending: bool) -> None:
    """Simulate a spacecraft with an elastic rod appendage (full or reduced formulation)."""
    from pathlib import Path

    from models.appendage import AppendageConfig, simulate as run
    from recon.io import load_toml, write_json, write_table
    from identification.provenance import versions

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
        write_json({"kind": "appendage_events",
                    "clamps": [{"hinge": e.hinge, "t": e.t} for e in res.clamps],
                    "units": {"t": "s"},
                    "settings": {"config": str(config), "formulation": res.formulation,
                                 "rtol": rtol, "atol": atol,
                                 "second_order_bending_terms": second_order_bending},
                    "stats": res.stats, "versions": versions()}, events)
    log.info("appendage: %s, %d points, %d RHS evaluations, %.3f s", res.formulation,
             len(res.t), res.stats["nfev"], res.stats["wall_s"])


def rig_config(path: str):
    from models.hydraulic import RigConfig
    from recon.io import load_toml

    try:
        return RigConfig.from_dict(load_toml(path))
    except InputError as exc:
        raise exc.with_source(path)


@simulate.command("rig")
@common_options
@click.argument("config_path", metavar="RIG.toml", callback=input_path,
                type=click.Path(dir_okay=False))
@click.option("--command", "command_path", required=True, callback=input_path,
              type=click.Path(dir_okay=False),
              help="CSV/Parquet: t, u [, F_load, brake] (one actuator) or t, x, y, z, roll, "
                   "pitch, yaw (hexapod, relative to home).")
@output_option("the simulated table (.parquet or .csv), SI units in the metadata / headers")
@click.option("--model", type=click.Choice(["coupled", "reference"]), default="coupled",
              show_default=True, help="One actuator: sequential-impulse co-simulation or the "
                                      "single-rate stand-alone reference.")
@click.option("--t-end", type=Finite(0.0, 1e4, min_open=True), default=None,
              help="Duration [s], up to 1e4 (default: the command's).")
def simulate_rig_cmd(config_path, command_path, output, model, t_end):
    """Simulate the hydraulic rig (one actuator or the 6-DOF hexapod) on a command."""

    from models.hydraulic import POSE_COLUMNS, Command, simulate_rig
    from recon.io import read_table, write_table

    config = rig_config(config_path)
    hexapod = config.hexapod is not None
    units = ({"t": "s", "x": "m", "y": "m", "z": "m", "roll": "rad", "pitch": "rad",
              "yaw": "rad"} if hexapod else {"t": "s", "u": "V", "F_load": "N", "brake": ""})
    required = ("t",) + (POSE_COLUMNS if hexapod else ("u",))
    frame, _ = read_table(command_path, units, required=required, allow_nan=False,
                          min_rows=2, increasing="t")
    t = frame["t"].to_numpy()
    span = (t_end if t_end is not None else t[-1])
    if t[0] > max(1.0, t[-1] - t[0]) and t[0] < span:
        # the rig starts at rest at t = 0 and holds the first command until it begins
        log.warning("%s: the command starts at t = %.6g s; the rig is simulated from t = 0 "
                    "holding its first value until then (%.3g of the %.3g s simulated); "
                    "shift the command's time to start near 0", command_path, t[0], t[0],
                    span)
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
    say(f"wrote {output} ({len(cols['t'])} rows)")


COMMANDS = (simulate,)
