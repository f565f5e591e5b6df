"""Generate the synthetic hydraulic-rig records (seeded) and their truth.

Run ``python telemetry_samples/rig/generate.py`` from the repository root. Writes, beside this
script:

* ``actuator.toml``: one-actuator bench configuration; the ``[actuator]`` values are the
  *nominal* (start) values, not the truth;
* ``step.parquet``, ``chirp.parquet``: one actuator, valve steps / a chirp, 1 kHz, with noise;
* ``platform.toml``, ``platform.parquet``: the hexapod manoeuvre, 250 Hz, with noise;
* ``command_lift.csv`` (the paper's lift: u = 1 from t = 1 s), ``command_platform.csv``: commands
  for ``dockrecon simulate rig``;
* ``truth.json``: ``{"parameters": {NAME: value}}`` (actuator truth; the platform's
  ``transport_delay`` under ``platform.transport_delay``).
"""
from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import tomli_w

from models import hydraulic as H
from recon.io import atomic_path, write_json, write_table

HERE = Path(__file__).resolve().parent
#: Noise seed of the shipped files. Disclosure: 0 is the first seed tried; it is the seed for
#: which all 23 shipped estimates (11 + 11 actuator parameters, 1 platform delay) lie inside
#: their 95 % intervals. Seeds 1, 2, 3 each had one estimate at |z| = 2.1-2.5, consistent with
#: 95 % coverage (1.15 misses expected per seed); the calibration over 12 seeds
#: (tests/identification/test_rig.py::test_interval_calibration, slow) gives z-score standard
#: deviations 0.6-1.2 per parameter.
SEED = 0
DT_RECORD = 1e-3

AREA_A = float(np.pi * 0.025 ** 2)
AREA_B = float(np.pi * (0.025 ** 2 - 0.015 ** 2))

#: Nominal values (the configuration's start values).
NOMINAL = dict(
    piston_area=AREA_A, rod_side_area=AREA_B, stroke_min=0.0, stroke_max=0.5,
    dead_volume_a=1.0e-4, dead_volume_b=1.0e-4 + AREA_B * 0.5, bulk_modulus=1.0e9,
    supply_pressure=1.0e7, tank_pressure=2.0e5, valve_gain=1.0,
    valve_natural_frequency=2 * np.pi * 40, valve_damping=0.7, supply_overlap=0.04,
    tank_overlap=0.03, flow_coefficient=1.5e-7, viscous_friction=1000.0, dry_friction=100.0,
    piston_mass=5.0, transition_pressure=1.0e4, friction_velocity=0.005,
    internal_leakage=1.0e-12, transport_delay=0.002,
)
#: Truth of the single-actuator records.
TRUTH = dict(NOMINAL, bulk_modulus=1.3e9, valve_gain=0.9, valve_natural_frequency=2 * np.pi * 35,
             valve_damping=0.75, supply_overlap=0.05, tank_overlap=0.02,
             flow_coefficient=1.8e-7, viscous_friction=1500.0, dry_friction=150.0,
             internal_leakage=3.0e-12, transport_delay=0.004)
FITTED = ["bulk_modulus", "valve_gain", "valve_natural_frequency", "valve_damping",
          "supply_overlap", "tank_overlap", "flow_coefficient", "viscous_friction",
          "dry_friction", "internal_leakage", "transport_delay"]
NOISE = {"x_v": 0.005, "p_A": 3.0e4, "p_B": 3.0e4, "x_p": 5.0e-5, "len": 5.0e-5}
LOAD_MASS = 100.0
PLATFORM_DELAY = 0.012


def actuator_config() -> dict:
    return {
        "actuator": dict(NOMINAL),
        "load": {"mass": LOAD_MASS, "gravity": 9.81, "initial_position": 0.1},
        "solver": {"dt_hydraulic": 1e-4, "dt_body": 1e-3},
        "identify": {"kind": "actuator", "parameters": FITTED,
                     "noise": {k: NOISE[k] for k in ("x_v", "p_A", "p_B", "x_p")}},
    }


def platform_config() -> dict:
    act = dict(TRUTH, transport_delay=0.0, piston_mass=2.0)
    return {
        "actuator": act,
        "solver": {"dt_hydraulic": 1e-4, "dt_body": 1e-3},
        "hexapod": {"platform_mass": 400.0, "controller_gain": 60.0, "feedforward": 3.0},
        "identify": {"kind": "platform", "parameters": ["transport_delay"],
                     "bounds": {"transport_delay": [0.0, 0.05]},
                     "noise": {"len": NOISE["len"], "p_A": NOISE["p_A"]}},
    }


def step_command() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    t = np.arange(0.0, 2.0 + 1e-12, DT_RECORD)
    u = np.zeros_like(t)
    u[t >= 0.1] = 0.6
    u[t >= 0.6] = -0.5
    u[t >= 1.1] = 0.3
    u[t >= 1.6] = 0.0
    force = 2000.0 + 0.0 * t
    return t, u, force


def chirp_command() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    t = np.arange(0.0, 2.5 + 1e-12, DT_RECORD)
    f0, f1, tc = 0.5, 40.0, 2.5
    phase = 2 * np.pi * (f0 * t + 0.5 * (f1 - f0) / tc * t ** 2)
    u = 0.5 * np.sin(phase)
    force = 1500.0 + 500.0 * np.sin(2 * np.pi * 1.3 * t)
    return t, u, force


def platform_pose() -> tuple[np.ndarray, np.ndarray]:
    t = np.arange(0.0, 3.0 + 1e-12, 4e-3)
    pose = np.zeros((t.size, 6))
    s = np.clip(t - 0.5, 0, None)
    pose[:, 0] = 0.03 * np.sin(2 * np.pi * 0.8 * s)
    pose[:, 2] = 0.04 * (1 - np.cos(2 * np.pi * 0.5 * s)) / 2
    pose[:, 3] = 0.03 * np.sin(2 * np.pi * 1.1 * s)
    pose[:, 5] = 0.04 * np.sin(2 * np.pi * 0.6 * s)
    return t, pose


def _actuator_record(t, u, force, rng) -> dict:
    truth = H.ActuatorParams.from_dict(TRUTH)
    x0 = 0.2
    s0 = H.initial_state(truth, x_p=x0, p_a=2e5 + force[0] / AREA_A, p_b=2e5)
    traj = H.simulate_actuator(truth, H.Command(t=t, u=u, load_force=force),
                               mass=truth.piston_mass + LOAD_MASS, t_end=float(t[-1]), dt=1e-4,
                               state0=s0)
    out = {"t": t, "u": u, "F_load": force}
    for c in ("x_v", "p_A", "p_B", "x_p"):
        clean = np.interp(t, traj["t"], traj[c])
        out[c] = clean + NOISE[c] * rng.standard_normal(t.size)
    return out


def main(seed: int = SEED, out: Path = HERE) -> None:
    """Write every sample file into ``out`` using noise seed ``seed``."""
    HERE = Path(out)  # noqa: N806 - the files go beside this script by default
    rng = np.random.default_rng(seed)
    units = {"t": "s", "u": "V", "F_load": "N", "x_v": "", "p_A": "Pa", "p_B": "Pa", "x_p": "m"}
    for name, maker in (("step", step_command), ("chirp", chirp_command)):
        t, u, force = maker()
        rec = _actuator_record(t, u, force, rng)
        write_table(rec, HERE / f"{name}.parquet", units)
    # the paper's lifting scenario: full valve command from t = 1 s
    t = np.array([0.0, 1.0, 1.0 + 1e-6, 4.0])
    write_table({"t": t, "u": np.array([0.0, 0.0, 1.0, 1.0])}, HERE / "command_lift.csv",
                {"t": "s", "u": "V"})
    # platform manoeuvre
    pcfg = platform_config()
    cfg = H.RigConfig.from_dict(pcfg)
    truth_act = cfg.actuator.replace(transport_delay=PLATFORM_DELAY)
    t, pose = platform_pose()
    traj = H.simulate_hexapod(cfg.hexapod, truth_act, H.Command(t=t, pose=pose),
                              solver=cfg.solver, t_end=float(t[-1]))
    names = ("cmd_x", "cmd_y", "cmd_z", "cmd_roll", "cmd_pitch", "cmd_yaw")
    rec = {"t": t}
    punits = {"t": "s"}
    for k, n in enumerate(names):
        rec[n] = pose[:, k]
        punits[n] = "m" if k < 3 else "rad"
    for k in range(6):
        rec[f"len_{k + 1}"] = (np.interp(t, traj.t, traj.actuator("length", k))
                               + NOISE["len"] * rng.standard_normal(t.size))
        rec[f"p_A_{k + 1}"] = (np.interp(t, traj.t, traj.actuator("p_A", k))
                               + NOISE["p_A"] * rng.standard_normal(t.size))
        punits[f"len_{k + 1}"] = "m"
        punits[f"p_A_{k + 1}"] = "Pa"
    write_table(rec, HERE / "platform.parquet", punits)
    cmd = {"t": t}
    cmd.update({n: pose[:, k] for k, n in enumerate(names)})
    write_table({k.removeprefix("cmd_"): v for k, v in cmd.items()},
                HERE / "command_platform.csv",
                {"t": "s", "x": "m", "y": "m", "z": "m", "roll": "rad", "pitch": "rad",
                 "yaw": "rad"})
    for name, conf in (("actuator.toml", actuator_config()), ("platform.toml", pcfg)):
        with atomic_path(HERE / name) as tmp:
            tmp.write_text("# generated by telemetry_samples/rig/generate.py (SI units)\n"
                           + tomli_w.dumps(copy.deepcopy(conf)), encoding="utf-8")
    write_json({"parameters": {k: TRUTH[k] for k in FITTED},
                "platform": {"parameters": {"transport_delay": PLATFORM_DELAY}},
                "seed": seed, "noise_sigma": NOISE,
                "records": {"step.parquet": "actuator.toml", "chirp.parquet": "actuator.toml",
                            "platform.parquet": "platform.toml"}},
               HERE / "truth.json")


if __name__ == "__main__":
    main()
