"""Speed of the hydraulic-rig kernels: stand-alone actuator, coupled lift (sequential impulses),
hexapod, and one identification of the shipped step record.

Compile time is measured with an empty numba cache (a temporary ``NUMBA_CACHE_DIR``), so
``compile_s`` is the true first-use cost on a fresh machine. Prints one JSON object on its last
line.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="numba-bench-")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402


def _best(fn, repeat=3):
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    t0 = time.perf_counter()
    from models import hydraulic as H
    import_s = time.perf_counter() - t0
    from identification.rig import RECORD_UNITS, RigRecord
    from identification.rig import identify_rig
    from recon.io import load_toml, read_table

    area_a = np.pi * 0.025 ** 2
    area_b = np.pi * (0.025 ** 2 - 0.015 ** 2)
    p = H.ActuatorParams(piston_area=area_a, rod_side_area=area_b, stroke_min=0.0,
                         stroke_max=0.5, dead_volume_a=2e-5, dead_volume_b=2e-5 + area_b * 0.5,
                         bulk_modulus=1.2e9, supply_pressure=1e7, tank_pressure=2e5,
                         valve_gain=1.0, valve_natural_frequency=2 * np.pi * 40,
                         valve_damping=0.8, supply_overlap=0.05, tank_overlap=0.02,
                         flow_coefficient=1.8e-7, viscous_friction=1500.0, dry_friction=150.0,
                         piston_mass=5.0)
    lift = H.Command(t=np.array([0, 1, 1 + 1e-9, 10.0]), u=np.array([0, 0, 1, 1.0]),
                     load_force=np.full(4, 981.0))
    t_sim = 4.0

    def standalone():
        H.simulate_actuator(p, lift, mass=105.0, t_end=t_sim, dt=1e-4)

    def coupled(dt):
        return lambda: H.lift_load(p, H.Command(t=lift.t, u=lift.u), t_end=t_sim,
                                   solver=H.SolverSettings(dt_body=dt))

    geom = H.HexapodGeometry()
    tp = np.linspace(0, 3, 301)
    pose = np.zeros((tp.size, 6))
    pose[:, 2] = 0.04 * np.clip(tp - 0.5, 0, 1)
    hexcmd = H.Command(t=tp, pose=pose)

    def hexapod():
        H.simulate_hexapod(geom, p.replace(piston_mass=2.0), hexcmd, t_end=3.0)

    t0 = time.perf_counter()
    standalone()
    coupled(1e-3)()
    hexapod()
    compile_s = time.perf_counter() - t0

    sa = _best(standalone)
    c1 = _best(coupled(1e-3))
    c10 = _best(coupled(1e-2))
    c01 = _best(coupled(1e-4), repeat=1)
    hx = _best(hexapod)
    samples = ROOT / "telemetry_samples" / "rig"
    cfg = H.RigConfig.from_dict(load_toml(samples / "actuator.toml"))
    frame, _ = read_table(samples / "step.parquet", RECORD_UNITS)
    rec = RigRecord.from_frame(frame, "actuator")
    t0 = time.perf_counter()
    fit = identify_rig(cfg, rec)
    ident_s = time.perf_counter() - t0
    figures = {
        "compile_s": round(compile_s, 2),
        "import_s": round(import_s, 2),
        "standalone_steps_per_s": round(t_sim / 1e-4 / sa),
        "standalone_realtime_factor": round(t_sim / sa, 1),
        "lift_coupled_dt1ms_realtime_factor": round(t_sim / c1, 1),
        "lift_coupled_dt10ms_realtime_factor": round(t_sim / c10, 1),
        "lift_coupled_single_rate_realtime_factor": round(t_sim / c01, 1),
        "hexapod_dt1ms_realtime_factor": round(3.0 / hx, 1),
        "identify_step_record_s": round(ident_s, 2),
        "identify_step_record_nfev_last_pass": fit.diagnostics["nfev"],
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
