"""The ground-test fits through the project's least-squares engine or through lmfit's
Minimizer, from the same start: final cost, residual evaluations and CPU time.

The problems are those :func:`identification.hysteresis_fit.identify_hysteresis` and
:func:`identification.rig.identify_rig` build (unit noise for the hysteresis records, the
stated noise for the rig record). The project's engine runs one start as the
identifications do (the hysteresis fit staged: breakpoints held, then all free; scipy's
trust-region reflective with ``x_scale="jac"``); lmfit runs its ``least_squares`` (the same
scipy solver, one stage, bounds passed through) and its default ``leastsq`` (MINPACK, bounds by
lmfit's sine transform). Prints one line per problem and engine.

    python benchmarks/lmfit_engine.py
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import lmfit
import numpy as np

from identification.engines import least_squares
from identification.ground_test import box_space
from identification.hysteresis_fit import (LoopResidual, breakpoint_parameters,
                                           internal_parameters, parameter_bounds,
                                           parameter_unit)
from identification.lmfit_bridge import to_parameters
from identification.problem import ResidualProblem
from identification.rig import (FITTABLE, NUISANCE, RECORD_UNITS, IdentifySettings,
                                RigRecord, RigResidual, noise_of, nuisance_parameters,
                                parameter_boxes, record_channels)
from models.hydraulic import RigConfig
from models.hysteresis import element_from_dict
from recon.io import load_toml, read_table

ROOT = Path(__file__).resolve().parents[1] / "telemetry_samples"


def hysteresis_problem(name: str, units):
    frame, _ = read_table(ROOT / "static" / f"{name}.csv", dict(zip(("q", "force"), units)))
    start = element_from_dict(load_toml(ROOT / "static" / f"{name}.start.toml"))
    q, f = frame["q"].to_numpy(), frame["force"].to_numpy()
    v0, boxes = internal_parameters(start), parameter_bounds(start)
    names = list(boxes)
    space = box_space(names, [parameter_unit(n, start) for n in names], [v0[n] for n in names],
                      [boxes[n] for n in names])
    return (ResidualProblem(space, LoopResidual(q, f, start, names), q.size),
            breakpoint_parameters(space.free_names))


def rig_problem(record: str, config: str):
    cfg = RigConfig.from_dict(load_toml(ROOT / "rig" / config))
    frame, _ = read_table(ROOT / "rig" / record, RECORD_UNITS)
    settings = IdentifySettings.from_dict(cfg.identify)
    rec = RigRecord.from_frame(frame, settings.kind)
    names, start, lo, hi = parameter_boxes(cfg, settings)
    nui, nui0, nlo, nhi = nuisance_parameters(rec, settings.kind)
    channels = record_channels(rec, settings.kind)
    residual = RigResidual(cfg, rec, settings.kind, names + nui, channels)
    n = rec.t.size
    sigma = np.concatenate([np.full(n, noise_of(c, settings)) for c in channels])
    space = box_space(names + nui, [FITTABLE[m] for m in names] + [NUISANCE[m] for m in nui],
                      np.r_[start, nui0], list(zip(np.r_[lo, nlo], np.r_[hi, nhi])))
    return ResidualProblem(space, residual, residual.n_residuals, sigma=sigma), ()


def run(label, problem, hold, max_nfev):
    x0 = problem.space.start()
    t = time.process_time()
    res = least_squares(problem, starts=0, first_guess=x0, max_nfev=max_nfev, x_scale="jac",
                        hold=hold)
    engine = "project TRF staged" if hold else "project TRF"
    print(f"{label:28s} {engine:19s} cost {res.best.cost:12.6g}  nfev "
          f"{res.best.nfev:5d}  cpu {time.process_time() - t:7.2f} s")
    for method, kw in (("least_squares", {"x_scale": "jac", "max_nfev": max_nfev}),
                       ("leastsq", {"max_nfev": max_nfev})):
        params = to_parameters(problem.space)

        def fcn(p):
            return problem.least_squares_residuals(
                np.array([p[n].value for n in problem.space.free_names]))

        t = time.process_time()
        out = lmfit.minimize(fcn, params, method=method, **kw)
        print(f"{label:28s} lmfit {method:13s} cost {0.5 * out.chisqr:12.6g}  nfev "
              f"{out.nfev:5d}  cpu {time.process_time() - t:7.2f} s")


def four_starts(label, problem, hold):
    """The hysteresis fit's own multi-start (four starts, seed 0, as identify_hysteresis),
    then lmfit's least_squares from its optimum: what a final lmfit polish would gain."""
    x0 = problem.space.start()
    rng = np.random.default_rng(0)
    starts = [x0] + [x0 * (1.0 + rng.uniform(-0.08, 0.08, x0.size)) for _ in range(3)]
    t = time.process_time()
    res = least_squares(problem, starts=0, first_guess=np.array(starts), x_scale="jac",
                        hold=hold)
    print(f"{label:28s} project 4 starts    cost {res.best.cost:12.10g}  nfev "
          f"{sum(s.nfev for s in res.starts):5d}  cpu {time.process_time() - t:7.2f} s")
    sp = problem.space
    params = to_parameters(sp, dict(zip(sp.free_names, res.x_opt)))

    def fcn(p):
        return problem.least_squares_residuals(np.array([p[n].value for n in sp.free_names]))

    t = time.process_time()
    out = lmfit.minimize(fcn, params, method="least_squares", x_scale="jac")
    print(f"{label:28s}   + lmfit polish    cost {0.5 * out.chisqr:12.10g}  nfev "
          f"{out.nfev:5d}  cpu {time.process_time() - t:7.2f} s")


def main(argv=None) -> int:
    """Run every problem through both engines (no options)."""
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    for name, units in (("lateral_double_loop", ("m", "N")),
                        ("axial_brake_two_slips", ("rad", "N*m"))):
        problem, hold = hysteresis_problem(name, units)
        run(name, problem, hold, None)
        four_starts(name, problem, hold)
    problem, hold = rig_problem("step.parquet", "actuator.toml")
    run("rig step.parquet", problem, hold, 200)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
