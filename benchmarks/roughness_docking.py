"""Roughness of the reconstruction cost along one parameter, per telemetry channel.

The probe-cone cost is a bowl with small-scale structure on top (contact, latch, brake and
hysteresis switching; late post-capture impacts). This study measures that structure on one
flight: the cost at ``--points`` values of ``--parameter`` spaced evenly over
``truth +- --span`` (all other parameters at the truth), a least-squares parabola through
them, and the rms and largest deviation of the cost from the parabola, in total and per
channel. ``--dt-contact`` repeats the scan with other contact-phase integration steps (the
telemetry is not re-recorded: the flight is the one on disk); ``--window`` evaluates the cost
on the record cut ``fit_after_capture`` seconds after the capture edge as well as on the
whole record.

A smooth likelihood has rms deviation << 1 (cost units, i.e. -log likelihood); deviations of
order 1 within one posterior sd are what make local optimizers stall and importance weights
uneven.

Usage::

    .venv/bin/python benchmarks/roughness_docking.py FLIGHT.parquet [--config RUN.toml]
        [--parameter rel_pos_z] [--span 3e-4] [--points 201] [--dt-contact 5e-4 1.25e-4]
        [--window 1.0]

``FLIGHT.truth.json`` must lie beside the telemetry (as ``dockrecon samples generate`` and
``dockrecon study calibration`` writes them in ``DIR/telemetry/``). Prints a table; writes nothing.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import numpy as np


def _scan(problem, x0, i, offsets):
    xs = np.repeat(x0[None, :], offsets.size, axis=0)
    xs[:, i] += offsets
    r = problem.residuals(xs)
    total = 0.5 * np.sum(r * r, axis=1)
    parts = {name: 0.5 * np.sum(r[:, cols] ** 2, axis=1)
             for name, cols in problem.bound.channel_slices().items()}
    return total, parts


def _rough(offsets, cost):
    """(sd of the fitted parabola's Gaussian [parameter unit], rms and max deviation)."""
    q = np.polyfit(offsets, cost, 2)
    dev = cost - np.polyval(q, offsets)
    sd = 1.0 / np.sqrt(2.0 * q[0]) if q[0] > 0 else float("nan")
    return sd, float(np.std(dev)), float(np.max(np.abs(dev)))


def main(argv=None) -> int:
    from models.probe_cone import preset_path
    from recon.config import load_scenario
    from recon.flight import flight_problem
    from recon.io import load_toml
    from telemetry_samples import SAMPLES_DIR

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("telemetry")
    ap.add_argument("--config", default=str(SAMPLES_DIR / "flights" / "run.toml"))
    ap.add_argument("--parameter", default="rel_pos_z")
    ap.add_argument("--span", type=float, default=3e-4, help="half width [SI]")
    ap.add_argument("--points", type=int, default=201)
    ap.add_argument("--dt-contact", type=float, nargs="+", default=[None])
    ap.add_argument("--window", type=float, help="also end the fitted span fit_after_capture "
                                                 "[s] after capture")
    args = ap.parse_args(argv)

    tel_path = Path(args.telemetry)
    truth = json.loads(tel_path.with_suffix(".truth.json").read_text())["parameters"]
    unit, scn0, run = load_scenario(preset_path("reference"))
    run = {**run, **load_toml(args.config)}
    model = {k: v for k, v in run.get("model", {}).items() if k != "fit_after_capture"}
    spans = {"whole record": model}
    if args.window is not None:
        spans[f"capture + {args.window:g} s"] = {**model, "fit_after_capture": args.window}
    offsets = np.linspace(-args.span, args.span, args.points)
    print(f"{tel_path.name}: cost along {args.parameter} = truth +- {args.span:g}, "
          f"{args.points} points; rms / max deviation from the fitted parabola [cost units]")
    for dtc in args.dt_contact:
        scn = scn0 if dtc is None else dataclasses.replace(
            scn0, integration=dataclasses.replace(scn0.integration, dt_contact=dtc))
        step = scn.integration.dt_contact
        for label, m in spans.items():
            prob = flight_problem(tel_path, scn, unit=unit, config={**run, "model": m}).problem
            x0 = np.array([truth[n] for n in prob.names])
            total, parts = _scan(prob, x0, prob.names.index(args.parameter), offsets)
            sd, rms, mx = _rough(offsets, total)
            print(f"\ndt_contact {step * 1e3:g} ms, {label} (t <= {prob.span.stop:.3f} s): "
                  f"parabola sd {sd:.3g}, deviation rms {rms:.3f} max {mx:.3f}")
            for name, c in parts.items():
                _, rms_c, mx_c = _rough(offsets, c)
                print(f"    {name:16s} rms {rms_c:.3f}  max {mx_c:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
