"""``dockrecon identify``: characteristics of mechanisms and of the test rig from ground-test
records (static hysteresis loops, rig records, resonance tests)."""
from __future__ import annotations

import logging
import math
from pathlib import Path

import click

from models.errors import InputError
from recon.app.cli.options import (EXIT_STATUS, Finite, Group, common_options, config_option,
                                   end_with_report, input_path, output_option, say, seed_option)
from recon.app.cli.simulate import rig_config

__all__ = ["COMMANDS", "identify"]

log = logging.getLogger("dockrecon")


def intervals_option(fn):
    """``--intervals laplace|profile`` and ``--profile NAME,...`` of the ground-test fits."""
    fn = click.option(
        "--profile", "profile", default=None, metavar="NAME,...",
        help="With --intervals profile: only these fitted parameters (default: every one).")(fn)
    return click.option(
        "--intervals", type=click.Choice(["laplace", "profile"]), default="laplace",
        show_default=True,
        help="laplace: the Gaussian at the optimum; profile: also the profile-likelihood "
             "intervals (lmfit.conf_interval, each parameter held and the others refitted; "
             "slower), recorded beside the Laplace ones and shown side by side where the "
             "profile is not parabolic.")(fn)


def _profile_names(intervals: str, profile: str | None) -> list[str] | None:
    """The names of ``--profile``, which goes with ``--intervals profile``."""
    if profile is None:
        return None
    if intervals != "profile":
        raise InputError("goes with --intervals profile", source="--profile")
    names = [n.strip() for n in profile.split(",") if n.strip()]
    if not names:
        raise InputError("expected parameter names separated by commas", source="--profile")
    return names


def _show_profiles(result) -> None:
    """Say the profile and the Laplace intervals side by side where they differ."""
    from identification.lmfit_bridge import profile_lines

    prof = result.diagnostics.get("profile")
    if not prof:
        return
    lines = profile_lines(result)
    for line in lines:
        say(line)
    if not lines:
        say(f"profile intervals of {len(prof['intervals'])} parameter(s): every one "
            "parabolic (the Laplace intervals stand)")


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
@intervals_option
@seed_option()
def identify_hysteresis(record: str, element_path: str, output: str, plot: str | None,
                        starts: int, intervals: str, profile: str | None, seed: int) -> None:
    """Fit a hysteresis element's branch tables to a static load-deflection RECORD.

    RECORD is CSV (headers ``q[unit]``, ``force[unit]``) or Parquet (field metadata ``unit``),
    samples in the order they were taken.
    """
    from models.hysteresis import element_from_dict
    from identification.hysteresis_fit import identify_hysteresis
    from recon.io import atomic_path, load_toml, read_table
    from recon.results import write_result

    profile = _profile_names(intervals, profile)
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
                                     n_starts=starts, seed=seed, intervals=intervals,
                                     profile=profile)
    except InputError as exc:
        if exc.key is not None and exc.key.startswith("profile."):
            raise InputError(exc.what, source="--profile",
                             key=exc.key.split(".", 1)[1]) from None
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
    _show_profiles(result)
    if result.status != "ok":
        click.echo(f"error: {output}: fit {result.status.upper()}: {result.status_reason}",
                   err=True)
        raise SystemExit(EXIT_STATUS[result.status])


@identify.command("rig")
@common_options
@click.argument("record_path", metavar="RECORD", callback=input_path,
                type=click.Path(dir_okay=False))
@config_option("the rig TOML with [actuator] start values and [identify]", required=True)
@output_option("the result directory (fitted.parquet, then result.json, written last)",
               file_okay=False, dir_okay=True, metavar="DIR")
@intervals_option
@seed_option()
def identify_rig_cmd(record_path, config, output, intervals, profile, seed):
    """Identify actuator characteristics / the platform's transport delay from a rig record."""
    from identification.rig import RECORD_UNITS, IdentifySettings, RigRecord
    from identification.rig import identify_rig
    from recon.io import read_table
    from recon.app.outputs import replaced_whole
    from recon.results import write_result

    profile = _profile_names(intervals, profile)
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
        result = identify_rig(config, record, seed=seed, intervals=intervals,
                              profile=profile)
    except InputError as exc:
        if exc.key is not None and exc.key.startswith("profile."):
            raise InputError(exc.what, source="--profile",
                             key=exc.key.split(".", 1)[1]) from None
        raise exc.with_source(record_path)
    result.sections = {"record": str(record_path), "config": str(config_path),
                       **result.sections}
    with replaced_whole(output) as stage:      # the directory replaced whole (recon.app.outputs)
        write_result(stage, result)
        end_with_report(stage, shown_as=output)
    for name, p in result.parameters.items():
        say(f"{name:26s} {p['map']:.6g} [{p['ci95'][0]:.6g}, {p['ci95'][1]:.6g}] {p['unit']}")
    not_sep = result.identifiability["not_separable"]
    if not_sep:
        say("not separable by this record: " + ", ".join(not_sep))
    _show_profiles(result)


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


def _read_resonance_record(record: str):
    from recon.io import read_table

    frame, _ = read_table(record, {"t": "s", "x": "m", "force": "N"},
                          required=("t", "x", "force"), allow_nan=False, min_rows=10,
                          increasing="t")
    return tuple(frame[c].to_numpy() for c in ("t", "x", "force"))


def _sequence(record, t, x, f, frequency, mass, periods, skip, rel_step):
    from identification.resonance.harmonics import amplitude_sequence, estimate_frequency

    try:
        nu = _frequency(frequency) if frequency is not None else estimate_frequency(t, f)
    except InputError as exc:     # the record's fault: it names the file
        raise exc.with_source(str(record))
    if not nu > 0:
        raise InputError("must be positive", source="--frequency")
    if skip is not None:
        window = periods * 2 * math.pi / nu
        left = float(t[-1] - t[0]) - skip
        if left < window:
            # the option's fault, not the record's: say so
            raise InputError(f"{skip:g} s leaves {max(left, 0.0):.4g} s of the "
                             f"{float(t[-1] - t[0]):.4g}-s record, less than one window of "
                             f"{periods} periods ({window:.4g} s)", key="--skip")
    try:
        return nu, amplitude_sequence(t, x, f, nu, mass, k=periods, skip=skip,
                                      rel_step=rel_step)
    except InputError as exc:
        raise exc.with_source(str(record))


@identify.command("resonance")
@common_options
@click.argument("record", callback=input_path, type=click.Path(dir_okay=False))
@click.option("--frequency", "frequency", default=None,
              help="Excitation frequency nu [rad/s] (or '2.5Hz'); estimated from the force if absent.")
@click.option("--mass", type=Finite(0.0, 1e9, min_open=True), default=None,
              help="Reduced mass mu [kg] (default 1; with --added-mass: identified).")
@click.option("--added-mass", "added", default=None, callback=input_path,
              type=click.Path(dir_okay=False),
              help="Record B: the same test with --delta-mass attached (added-mass method: "
                   "the reduced mass is identified from RECORD and B).")
@click.option("--delta-mass", type=Finite(0.0, 1e9, min_open=True), default=None,
              help="The added mass of record B [kg].")
@click.option("--rho", type=Finite(0.0, 1e3, min_open=True), default=1.0, show_default=True,
              help="Amplitude at the added mass over the mode's reference amplitude.")
@click.option("--frequency-b", "frequency_b", default=None,
              help="Excitation frequency of record B (default: estimated from its force).")
@click.option("--method", type=click.Choice(["product", "stieltjes"]), default="product",
              show_default=True, help="Abel quadrature: product integration or the paper's (4.2).")
@click.option("--below", type=click.Choice(["power", "linear", "chord"]), default="power",
              show_default=True, help="Law below the first measured amplitude.")
@click.option("--periods", type=click.IntRange(1, 600), default=6, show_default=True,
              help="Periods per window.")
@click.option("--skip", type=Finite(0.0, 1e9), default=None,
              help="Hold time before the first window [s].")
@click.option("--rel-step", type=Finite(0.0, 0.5), default=0.01, show_default=True,
              help="Relative width of the amplitude bins the windows are merged in.")
@click.option("--refine", type=click.Choice(["auto", "always", "never"]), default="auto",
              show_default=True, is_flag=False, flag_value="always",
              help="Refinement by fitting the simulated oscillator to the record: auto "
                   "applies it only where it lowers the misfit and stays within the bands; "
                   "a bare --refine means always.")
@click.option("--draws", type=click.IntRange(10, 100000), default=200, show_default=True,
              help="Bootstrap replicates of the uncertainty bands.")
@click.option("--offset/--no-offset", default=True, show_default=True,
              help="Correct the restoring force for the mean offset's coupling with the first "
                   "harmonic (beyond the paper's first approximation).")
@seed_option()
@output_option("the result JSON (curves with bands and gaps, amplitude sequence, jumps, "
               "refinement policy and fit)", metavar="OUT.json")
def identify_resonance_cmd(record, frequency, mass, added, delta_mass, rho, frequency_b, method,
                           below, periods, skip, rel_step, refine, draws, offset, seed, output):
    """Restoring force and damping of one mode from a resonance-test RECORD (t, x, force).

    With --added-mass B --delta-mass M the reduced mass is identified first from RECORD and
    B (the same mode with M attached, run at another frequency) and used for the curves.
    """
    from identification.resonance.pipeline import added_mass, identify_resonance
    from recon.results import write_result

    if (added is None) != (delta_mass is None):
        raise InputError("--added-mass and --delta-mass go together", source="--added-mass")
    if added is not None and mass is not None:
        raise InputError("is identified by the added-mass method; leave it out",
                         source="--mass")
    t, x, f = _read_resonance_record(record)
    mu = 1.0 if mass is None else mass
    nu, seq = _sequence(record, t, x, f, frequency, mu, periods, skip, rel_step)
    am = None
    if added is not None:
        tb, xb, fb = _read_resonance_record(added)
        nu_b, seq_b = _sequence(added, tb, xb, fb, frequency_b, mu, periods, skip, rel_step)
        try:
            am = added_mass(seq, seq_b, delta_mass, rho=rho, seed=seed)
        except InputError as exc:
            raise exc.with_source(f"{record}, {added}")
        mu = am["reduced_mass"]["map"]
        am = {**am, "record_b": str(added)}
        say(f"reduced mass {mu:.5g} kg, 95 % [{am['reduced_mass']['ci95'][0]:.5g}, "
            f"{am['reduced_mass']['ci95'][1]:.5g}] (added-mass method, "
            f"{len(am['per_amplitude']['b'])} common amplitudes)")
    try:
        res = identify_resonance(t, x, f, nu, mu, method=method, below=below, periods=periods,
                                 skip=skip, rel_step=rel_step, refine=refine, n_draws=draws,
                                 seed=seed, offset=offset, added=am)
    except InputError as exc:
        raise exc.with_source(str(record))
    res.settings = {"record": str(record), "frequency_rad_s": nu,
                    "frequency_source": "given" if frequency is not None else "estimated",
                    "mass_kg": mu,
                    "mass_source": "added-mass method" if added else
                    ("given" if mass is not None else "default"),
                    "method": method, "below": below, "periods": periods, "skip_s": skip,
                    "rel_step": rel_step, "refine": refine, "draws": draws,
                    "offset_correction": offset, "seed": seed}
    write_result(Path(output).parent, res, name=Path(output).name)
    pol = res.sections["refinement_policy"]
    gaps = res.sections["gaps"]
    say(f"{len(res.sections['amplitude_sequence']['b'])} amplitudes, {len(gaps)} gap(s) from jumps"
        + "".join(f" [{lo * 1e3:.4g}, {hi * 1e3:.4g}] mm (interpolated)" for lo, hi in gaps)
        + f"; wrote {output}")
    if "change_restoring_percent" in pol:
        say(f"refinement changed the restoring force by up to "
            f"{pol['change_restoring_percent']:.2f} % and the damping by up to "
            f"{pol['change_damping_percent']:.2f} %: "
            f"{'applied' if pol['applied'] else 'not applied'} ({pol['reason']})")
    end_with_report(output)


@identify.command("resonance-coupling")
@common_options
@click.argument("record", callback=input_path, type=click.Path(dir_okay=False))
@click.option("--modes", "modes_path", required=True, callback=input_path,
              type=click.Path(dir_okay=False), metavar="MODES.toml",
              help="Modal matrix, record columns, modes p and s, order l and mode s's own "
                   "characteristics (see identification.resonance.pipeline.coupling_settings).")
@click.option("--frequency", "frequency", default=None,
              help="Excitation frequency nu_p [rad/s] (or '2.5Hz'); default: the modes file's, "
                   "else estimated from the force.")
@click.option("--powers", default=None, metavar="N,N,...",
              help="Powers of the fitted coupling polynomial (default 3,5 for l = 3; 2,4 for l = 2).")
@click.option("--periods", type=click.IntRange(1, 600), default=6, show_default=True,
              help="Periods per window.")
@click.option("--skip", type=Finite(0.0, 1e9), default=None,
              help="Hold time before the first window [s].")
@click.option("--draws", type=click.IntRange(10, 100000), default=400, show_default=True,
              help="Block-bootstrap replicates of the coefficients' intervals.")
@seed_option()
@output_option("the result JSON (coupling coefficients with intervals, the coupling curve, "
               "the measured harmonic)", metavar="OUT.json")
def identify_resonance_coupling_cmd(record, modes_path, frequency, powers, periods, skip, draws,
                                    seed, output):
    """Cross-coupling f_sp of two modes from a non-own resonance RECORD (t, the physical
    coordinates named in MODES.toml, force on mode p), excited at l nu_p = omega_s."""
    import numpy as np

    from identification.resonance.harmonics import estimate_frequency
    from models.errors import DataError
    from models.limits import COLUMN_RANGES
    from identification.resonance.pipeline import coupling_settings, identify_coupling_record
    from recon.io import load_toml, read_table
    from recon.results import write_result

    try:
        settings = coupling_settings(load_toml(modes_path))
    except InputError as exc:
        raise exc.with_source(str(modes_path)) from None
    pw = None
    if powers is not None:
        try:
            pw = tuple(int(v) for v in powers.split(","))
        except ValueError:
            raise InputError(f"not a list of integers: '{powers}'", source="--powers") from None
    cols = settings["coordinates"]
    frame, _ = read_table(record, {"t": "s", **{c: "m" for c in cols}, "force": "N"},
                          required=("t", *cols, "force"), allow_nan=False, min_rows=10,
                          increasing="t")
    t, f = frame["t"].to_numpy(), frame["force"].to_numpy()
    q = np.column_stack([frame[c].to_numpy() for c in cols])
    top, unit = COLUMN_RANGES["x"]     # the coordinates are displacements, named by the user
    for j, c in enumerate(cols):
        big = np.flatnonzero(np.abs(q[:, j]) > top)
        if big.size:
            raise DataError(f"{q[big[0], j]:g} m is beyond the physical range of a "
                            f"displacement (|value| <= {top:g} {unit}; a unit in the header "
                            "missing or wrong?)", source=str(record), key=c,
                            row=int(big[0]) + 1)
    if frequency is not None:
        nu, source = _frequency(frequency), "given"
    elif settings["frequency"] is not None:
        nu, source = settings["frequency"], str(modes_path)
    else:
        nu, source = estimate_frequency(t, f), "estimated"
    try:
        res = identify_coupling_record(t, q, f, settings, nu=nu, powers=pw, periods=periods,
                                       skip=skip, n_draws=draws, seed=seed)
    except InputError as exc:
        raise exc.with_source(str(record) if exc.key != "powers" else "--powers") from None
    res.settings = {"record": str(record), "modes": str(modes_path),
                    "frequency_rad_s": nu, "frequency_source": source,
                    "order": settings["order"], "p": settings["p"], "s": settings["s"],
                    "periods": periods, "skip_s": skip, "draws": draws, "seed": seed,
                    "modal_matrix": settings["Phi"].tolist()}
    write_result(Path(output).parent, res, name=Path(output).name)
    for name, c in res.parameters.items():
        say(f"{name:8s} {c['map']:.6g} [{c['ci95'][0]:.6g}, {c['ci95'][1]:.6g}] {c['unit']}")
    say(f"wrote {output}")
    end_with_report(output)


COMMANDS = (identify,)
