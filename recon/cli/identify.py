"""``dockrecon identify``: characteristics of mechanisms and of the test rig from ground-test
records (static hysteresis loops, rig records, resonance tests)."""
from __future__ import annotations

import logging
from pathlib import Path

import click

from models.errors import InputError
from recon.cli.options import (Group, common_options, config_option, end_with_report, input_path,
                               output_option, say, seed_option)
from recon.cli.simulate import rig_config

__all__ = ["COMMANDS", "identify"]

log = logging.getLogger("dockrecon")


@click.group(cls=Group)
@common_options
def identify() -> None:
    """Identify characteristics from ground-test records."""


@identify.command("hysteresis")
@common_options
@click.argument("record", callback=input_path, type=click.Path())
@click.option("--element", "element_path", required=True, callback=input_path, type=click.Path(),
              help="Start tables of the element (TOML, SI units; see models.hysteresis).")
@output_option("the result JSON (fitted tables, uncertainties, residual RMS)",
               metavar="OUT.json")
@output_option("also the loop, the fitted model and the residual, drawn to this PNG",
               required=False, metavar="PLOT.png", flag="--plot", short=None, dest="plot")
@click.option("--starts", type=click.IntRange(1, 64), default=4, show_default=True,
              help="Local fits (the start tables, then seeded draws around them).")
@seed_option()
def identify_hysteresis(record: str, element_path: str, output: str, plot: str | None,
                        starts: int, seed: int) -> None:
    """Fit a hysteresis element's branch tables to a static load-deflection RECORD.

    RECORD is CSV (headers ``q[unit]``, ``force[unit]``) or Parquet (field metadata ``unit``),
    samples in the order they were taken.
    """
    from models.hysteresis import element_from_dict
    from recon.identify import identify_hysteresis
    from recon.io import atomic_path, load_toml, read_table
    from recon.result import write_result

    try:
        start = element_from_dict(load_toml(element_path))
    except InputError as exc:
        raise exc.with_source(str(element_path)) from None
    q_unit, f_unit, _ = start.units
    frame, file_units = read_table(record, {"q": q_unit, "force": f_unit},
                                   required=("q", "force"), allow_nan=False, min_rows=10)
    log.info("%s: %d samples; fitting %s (%s)", record, len(frame), start.name, start.variant)
    try:
        result = identify_hysteresis(frame["q"].to_numpy(), frame["force"].to_numpy(), start,
                                     n_starts=starts, seed=seed)
    except InputError as exc:
        raise exc.with_source(str(record)) from None
    result.sections = {"record": str(record), "record_units": file_units,
                       "start_element": str(element_path), **result.sections}
    if plot is not None:
        import matplotlib.pyplot as plt

        from reports.figures_hysteresis import hysteresis_fit_figure

        fitted = result.fitted
        fig = hysteresis_fit_figure(fitted["q"], fitted["force"], fitted["model"],
                                    element_from_dict(result.element), rms=result.residual_rms,
                                    title=f"{start.name}: {record}")
        with atomic_path(plot) as tmp:
            fig.savefig(tmp, format="png", dpi=120)
        plt.close(fig)
        result.sections["plot"] = str(plot)
    out = Path(output)
    write_result(out.parent, result, name=out.name)  # last: complete when it exists
    end_with_report(output)
    opt = result.optimizer
    say(f"{output}: residual RMS {result.residual_rms:.4g} {result.residual_rms_unit} over "
        f"{result.n_points} samples "
        f"({'converged' if opt['success'] else 'NOT converged: ' + opt['message']})")


@identify.command("rig")
@common_options
@click.argument("record_path", metavar="RECORD", callback=input_path,
                type=click.Path(dir_okay=False))
@config_option("the rig TOML with [actuator] start values and [identify]", required=True)
@output_option("the result directory (fitted.parquet, then result.json, written last)",
               file_okay=False, dir_okay=True, metavar="DIR")
def identify_rig_cmd(record_path, config, output):
    """Identify actuator characteristics / the platform's transport delay from a rig record."""
    from identification.rig import RECORD_UNITS, IdentifySettings, RigRecord
    from recon.identify import identify_rig
    from recon.io import read_table
    from recon.outputs import replaced_whole
    from recon.result import write_result

    config_path = config
    config = rig_config(config_path)
    try:
        kind = IdentifySettings.from_dict(config.identify).kind
    except InputError as exc:
        raise exc.with_source(config_path)
    frame, _ = read_table(record_path, RECORD_UNITS, required=("t",), min_rows=10,
                          increasing="t")
    try:
        record = RigRecord.from_frame(frame, kind, source=record_path)
        result = identify_rig(config, record)
    except InputError as exc:
        raise exc.with_source(record_path)
    result.sections = {"record": str(record_path), "config": str(config_path),
                       **result.sections}
    with replaced_whole(output) as stage:      # the directory replaced whole (recon.outputs)
        write_result(stage, result)
        end_with_report(stage, shown_as=output)
    for name, p in result.parameters.items():
        say(f"{name:26s} {p['map']:.6g} [{p['ci95'][0]:.6g}, {p['ci95'][1]:.6g}] {p['unit']}")
    not_sep = result.identifiability["not_separable"]
    if not_sep:
        say("not separable by this record: " + ", ".join(not_sep))


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
@common_options
@click.argument("record", callback=input_path, type=click.Path(dir_okay=False))
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
@output_option("the result JSON (curves, amplitude sequence, jumps; with --refine also the "
               "refinement's fit result)", metavar="OUT.json")
def identify_resonance_cmd(record, frequency, mass, method, below, periods, skip, refine, output):
    """Restoring force and damping of one mode from a resonance-test RECORD (t, x, force)."""
    import numpy as np

    from identification.resonance.harmonics import amplitude_sequence, estimate_frequency
    from identification.resonance.own import identify_own_resonance
    from recon.io import read_table, versions, write_json

    frame, _ = read_table(record, {"t": "s", "x": "m", "force": "N"},
                          required=("t", "x", "force"), allow_nan=False, min_rows=10,
                          increasing="t")
    t, x, f = (frame[c].to_numpy() for c in ("t", "x", "force"))
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
    refined = None
    if refine:
        from identification.resonance.refine import damping_force, restoring_force
        from recon.identify import refine_resonance

        refined = refine_resonance(res, t, x, f)
        c = refined.curves
        fx = restoring_force(xs, c["x"], c["restoring"], c["preload"])
        hv = damping_force(vs, c["v"], c["damping"], c["coulomb"])
        settings["refinement"] = refined.refinement
        log.info("refinement changed the restoring force by %.2f %% and the damping by %.2f %%",
                 100 * refined.refinement["change_restoring"],
                 100 * refined.refinement["change_damping"])
    out = {
        "restoring_force": {"x": xs, "f": fx},
        "damping": {"v": vs, "H": hv},
        "amplitude_sequence": {"b": seq.b, "theta": seq.theta, "omega2": seq.omega2,
                               "lambda": seq.lam, "a0": seq.a0},
        "jumps": [j.as_dict() for j in seq.jumps],
        "settings": settings,
        "versions": versions(),
    }
    if refined is not None:  # the fit behind the refined curves, in the one result schema
        out["refinement"] = {k: v for k, v in refined.to_dict().items()
                             if k not in ("settings", "versions")}
    for j in seq.jumps:
        log.warning("amplitude jump from %.4g m to %.4g m at t = %.4g s: no data in between",
                    j.b_before, j.b_after, j.t_before)
    write_json(out, output)
    say(f"{len(seq.b)} amplitudes, {len(seq.jumps)} jump(s); wrote {output}")
    end_with_report(output)


COMMANDS = (identify,)
