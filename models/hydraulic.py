"""Hydraulic actuator of the 6-DOF docking test rig: servo valve, spool valve, double-acting
cylinder, coupled to rigid bodies by sequential impulses (Strashnov & Mironenko 2023; seed
digest ``shared/seeds/hydraulic-actuator.md``).

Governing equations (digest Section 3; all reconstructed, the scraped paper lost its formulas):

.. math::

    m \\dot v_p = p_A S_A - p_B S_B - k v_p - F_l - F_f, \\quad |F_f| \\le F_{f\\max}      (1)

    \\frac{V_A + S_A x_p}{\\beta} \\dot p_A = Q_A - S_A v_p, \\quad
    \\frac{V_B - S_B x_p}{\\beta} \\dot p_B = Q_B + S_B v_p                                (2)

    Q_A = K_Q [f_P(x_v) \\sigma(p_S - p_A) - f_T(x_v) \\sigma(p_A - p_T)]                  (3)

    \\ddot x_v + 2 D_v \\omega_v \\dot x_v + \\omega_v^2 x_v = K_v \\omega_v^2 u            (5)

with ``f_P(x) = max(0, x - c1)``, ``f_T(x) = max(0, c2 - x)`` (positive supply overlap ``c1``,
negative tank overlap ``c2``: both chambers vented to tank at neutral, as the paper says) and the
signed square root ``sigma`` with a laminar segment below ``transition_pressure``.

Choices (documented where the digest leaves them open, checked against the Russian original):

* The original (line 136) says the hydraulics are integrated "until the piston velocities at
  t + dt are obtained", with the order x_v, then p_A, p_B, then v_p: that is the literal
  scheme ``scheme="paper"``. As the digest warns (N3) it under-drives a heavy load when the
  piston is light and ``dt >> dt1``; ``scheme="loaded"`` (default, not in the paper) keeps the
  sequential-impulse structure but lets the sub-step pressures see the loaded motion and hands
  the exact hydraulic impulse to the impulse stage (see
  :func:`models._kernels.hydraulic.cosim_run`).
* Pressure update: ``"robust"`` (linearly implicit, default) or ``"literal"`` (explicit, the
  paper's (E); stable only for ``omega_h dt1 < 2`` and ``dt1 < 2 V / (beta |G|)``).
* Chamber volumes depend on position (``volume_model="variable"``) or not (``"constant"``).
* Drift of constraint (6) is removed by re-projecting the piston coordinate on the geometry
  after each body step (the split-impulse details are not given in the paper).
* Dry friction in the coupled model is always set-valued (impulse row); in the stand-alone
  model it may be smoothed (``friction_velocity > 0``: ``F_c tanh(v / v_s)``), as identification
  needs outputs smooth in the parameters.
"""
from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass, field, fields
from typing import Any, Mapping

import numpy as np

from models._kernels import hydraulic as K
from models.rigid_body import euler_from_quat, quat_from_euler, quat_to_dcm
from models.errors import InputError
from models.limits import check_memory, check_range
from models.schema import Key, Table, keys

__all__ = [
    "ActuatorParams", "SolverSettings", "LoadSettings", "HexapodGeometry", "RigConfig",
    "Command", "ActuatorTrajectory", "CoupledTrajectory",
    "initial_state", "simulate_actuator", "lift_load", "hexapod_legs", "hexapod_leg_lengths",
    "simulate_hexapod", "hydraulic_natural_frequency", "simulate_rig",
    "POSE_COLUMNS", "UNDERDRIVE_LIMIT", "ACTUATOR", "SOLVER", "LOAD", "HEXAPOD", "RIG",
]

# ------------------------------------------------------------------------------------------
# declared schema of a rig configuration TOML (models.schema); the readers below take their
# key sets from it, and the dataclasses' defaults are the declared ones (tests/test_schema.py)
ACTUATOR = Table("actuator", "One valve-controlled double-acting cylinder "
                 "(models.hydraulic.ActuatorParams).", keys("""
piston_area             | number | m^2   | required   | >0  | S_A, piston (cap) side area
rod_side_area           | number | m^2   | required   | >0  | S_B, annulus area
stroke_min              | number | m     | required   | >=0 | lower stroke limit x_pmin (below
| stroke_max)
stroke_max              | number | m     | required   | >=0 | upper stroke limit x_pmax
dead_volume_a           | number | m^3   | required   | >0  | V_A, cap-side chamber volume at
| x_p = 0 incl. lines
dead_volume_b           | number | m^3   | required   | >0  | V_B, rod-side chamber volume at
| x_p = 0 incl. lines (with volume_model "variable": above rod_side_area * stroke_max)
bulk_modulus            | number | Pa    | required   | >0  | effective bulk modulus beta
supply_pressure         | number | Pa    | required   | >=0 | p_S (above tank_pressure)
tank_pressure           | number | Pa    | required   | >=0 | p_T
valve_gain              | number | 1/V   | required   | >=0 | servo valve gain K_v
valve_natural_frequency | number | rad/s | required   | >0  | servo valve omega_v
valve_damping           | number | -     | required   | >=0 | servo valve damping ratio D_v
supply_overlap          | number | -     | required   | [0, 1) | c1, positive overlap of the
| supply edges (fraction of the spool stroke)
tank_overlap            | number | -     | required   | [0, 1) | c2, negative overlap
| (underlap) of the tank edges (fraction of the spool stroke)
flow_coefficient        | number | m^3/(s Pa^0.5) | required | >0 | K_Q, lumped orifice
| coefficient
viscous_friction        | number | N s/m | required   | >=0 | k, viscous friction
dry_friction            | number | N     | required   | >=0 | F_fmax, dry friction bound
piston_mass             | number | kg    | required   | >0  | m, moving mass not inside the
| attached bodies
transition_pressure     | number | Pa    | 10000.0    | >0  | laminar regularisation of the
| orifice law
friction_velocity       | number | m/s   | 0.0        | >=0 | v_s: 0 set-valued Coulomb
| friction, > 0 F_c tanh(v / v_s)
internal_leakage        | number | m^3/(s Pa) | 0.0   | >=0 | C_in, across the piston
external_leakage        | number | m^3/(s Pa) | 0.0   | >=0 | C_ex, to the outside
volume_model            | choice:variable,constant | - | 'variable' | - | chamber volumes
| V + S x_p ("variable") or constant capacitances
pressure_floor          | number | Pa    | 0.0        | >=0 | lower clamp of the chamber
| pressures (cavitation)
brake_force             | number | N     | 0.0        | >=0 | force bound of the brake clutch
| when engaged
transport_delay         | number | s     | 0.0        | >=0 | delay between command and valve
| input
"""), required=True, source=False)

SOLVER = Table("solver", "Time stepping of the coupled model "
               "(models.hydraulic.SolverSettings).", keys("""
dt_hydraulic       | number  | s   | 0.0001      | >0  | hydraulic sub-step dt1 (at most
| dt_body)
dt_body            | number  | s   | 0.001       | >0  | body step dt (dt_body = dt_hydraulic:
| single-rate)
scheme             | choice:loaded,paper | - | 'loaded' | - | "loaded" (sub-step pressures
| see the loaded motion) or "paper" (unloaded piston sub-steps, literal)
pressure_update    | choice:robust,literal | - | 'robust' | - | "robust" (linearly implicit)
| or "literal" (explicit)
piston_in_substeps | choice:integrate,hold | - | 'integrate' | - | "integrate" the piston
| coordinate with the sub-step velocity or "hold" it
tolerance          | number  | N s | 1e-07       | >0  | impulse tolerance epsilon
max_sweeps         | integer | -   | 100         | [1, ] | Gauss-Seidel sweep cap
"""), source=False)

LOAD = Table("load", "Single-actuator load: a rigid mass on the rod end, moving along the "
             "actuator axis (models.hydraulic.LoadSettings).", keys("""
mass             | number | kg    | 100.0 | >0 | the load's mass
gravity          | number | m/s^2 | 9.81  | -  | acting against extension (the lifting
| scenario)
initial_position | number | m     | 0.0   | -  | initial piston position
"""), source=False)

HEXAPOD = Table("hexapod", "Stewart platform of six identical actuators "
                "(models.hydraulic.HexapodGeometry); present: the 6-DOF rig.", keys("""
base_radius      | number   | m      | 1.0                  | >0 | radius of the base joint
| circle
platform_radius  | number   | m      | 0.6                  | >0 | radius of the platform joint
| circle
base_spread      | number   | rad    | 0.35                 | -  | split of a base joint pair
| (pairs around 0, 120, 240 deg)
platform_spread  | number   | rad    | 1.6                  | -  | split of a platform joint pair
home_height      | number   | m      | 1.2                  | >0 | platform frame above the base
| frame at home pose (every leg at mid-stroke)
platform_mass    | number   | kg     | 400.0                | >0 | platform mass
platform_inertia | vector:3 | kg m^2 | [60.0, 60.0, 100.0]  | -  | principal moments of the
| platform (positive)
controller_gain  | number   | 1/m    | 60.0                 | -  | position controller gain
| u = sat(gain (l_cmd - l) + feedforward dl_cmd/dt)
feedforward      | number   | s/m    | 3.0                  | -  | feedforward of the commanded
| leg rate
gravity          | number   | m/s^2  | 9.81                 | -  | gravity along -z
"""), source=False)

#: a rig configuration (``dockrecon simulate rig``, ``identify rig --config``); its
#: ``[identify]`` table is declared by its reader, :data:`identification.rig.IDENTIFY`
RIG = Table("rig", "Hydraulic test-rig configuration (models.hydraulic.RigConfig): [load] "
            "for a single actuator, [hexapod] for the 6-DOF platform.",
            (ACTUATOR, SOLVER, LOAD, HEXAPOD,
             Key("identify", "table", help="identification settings of identify rig "
                 "(identification.rig.IdentifySettings)")), source=False)


def _check_keys(d: Mapping[str, Any], allowed: set[str], prefix: str) -> None:
    if not isinstance(d, Mapping):
        raise InputError("expected a table", key=prefix or None)
    for key in d:
        if key not in allowed:
            raise InputError(f"unknown key (allowed: {', '.join(sorted(allowed))})",
                             key=f"{prefix}.{key}" if prefix else key)


def _number(d: Mapping[str, Any], key: str, prefix: str, default: Any = None) -> float:
    if key not in d:
        if default is None:
            raise InputError("missing key", key=f"{prefix}.{key}")
        return float(default)
    v = d[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(float(v)):
        raise InputError(f"expected a finite number, got {v!r}", key=f"{prefix}.{key}")
    return check_range(f"{prefix}.{key}", float(v))


@dataclass(frozen=True)
class ActuatorParams:
    """Parameters of one valve-controlled double-acting cylinder (SI).

    Attributes
    ----------
    piston_area : S_A, piston (cap) side area [m^2].
    rod_side_area : S_B, annulus area [m^2].
    stroke_min, stroke_max : stroke limits x_pmin, x_pmax [m].
    dead_volume_a, dead_volume_b : V_A, V_B, chamber volumes at x_p = 0 incl. lines [m^3].
    bulk_modulus : effective bulk modulus beta [Pa].
    supply_pressure, tank_pressure : p_S, p_T [Pa].
    valve_gain : K_v [1/V]; valve_natural_frequency : omega_v [rad/s]; valve_damping : D_v [-].
    supply_overlap : c1, positive overlap of the supply edges [-] (normalised spool stroke).
    tank_overlap : c2, negative overlap (underlap) of the tank edges [-].
    flow_coefficient : K_Q, lumped orifice coefficient [m^3/(s sqrt(Pa))].
    transition_pressure : laminar regularisation of the orifice law [Pa].
    viscous_friction : k [N s/m]; dry_friction : F_fmax [N].
    friction_velocity : v_s [m/s]; 0 = set-valued Coulomb, > 0 = ``F_c tanh(v/v_s)``.
    piston_mass : m, moving mass not inside the attached bodies [kg] (digest N2).
    internal_leakage, external_leakage : C_in, C_ex [m^3/(s Pa)] (not in the paper).
    volume_model : ``"variable"`` (V_A + S_A x_p) or ``"constant"`` capacitances.
    pressure_floor : lower clamp of the chamber pressures [Pa] (cavitation, digest N7).
    brake_force : force bound of the brake clutch when engaged [N].
    transport_delay : delay between command and valve input [s].
    """

    piston_area: float
    rod_side_area: float
    stroke_min: float
    stroke_max: float
    dead_volume_a: float
    dead_volume_b: float
    bulk_modulus: float
    supply_pressure: float
    tank_pressure: float
    valve_gain: float
    valve_natural_frequency: float
    valve_damping: float
    supply_overlap: float
    tank_overlap: float
    flow_coefficient: float
    viscous_friction: float
    dry_friction: float
    piston_mass: float
    transition_pressure: float = 1.0e4
    friction_velocity: float = 0.0
    internal_leakage: float = 0.0
    external_leakage: float = 0.0
    volume_model: str = "variable"
    pressure_floor: float = 0.0
    brake_force: float = 0.0
    transport_delay: float = 0.0

    def __post_init__(self) -> None:
        p = "actuator"
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "volume_model":
                if v not in ("variable", "constant"):
                    raise InputError("must be 'variable' or 'constant'", key=f"{p}.{f.name}")
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise InputError(f"expected a finite number, got {v!r}", key=f"{p}.{f.name}")
            if f.name not in ("stroke_min",) and v < 0:
                raise InputError("must be >= 0", key=f"{p}.{f.name}")
        for name in ("piston_area", "rod_side_area", "bulk_modulus", "valve_natural_frequency",
                     "piston_mass", "transition_pressure", "dead_volume_a", "dead_volume_b",
                     "flow_coefficient"):
            if getattr(self, name) <= 0:
                raise InputError("must be > 0", key=f"{p}.{name}")
        if self.stroke_min < 0 or self.stroke_max <= self.stroke_min:
            raise InputError("need 0 <= stroke_min < stroke_max",
                             key=f"{p}.stroke_min" if self.stroke_min < 0 else f"{p}.stroke_max")
        if self.supply_pressure <= self.tank_pressure:
            raise InputError("supply pressure must exceed tank pressure",
                             key=f"{p}.supply_pressure")
        if not (0 <= self.supply_overlap < 1 and 0 <= self.tank_overlap < 1):
            raise InputError("overlaps are fractions of the spool stroke in [0, 1)",
                             key=f"{p}.supply_overlap" if not 0 <= self.supply_overlap < 1
                             else f"{p}.tank_overlap")
        if (self.volume_model == "variable"
                and self.dead_volume_b <= self.rod_side_area * self.stroke_max):
            raise InputError("with volume_model='variable' the rod-side volume at x_p = 0 must "
                             "exceed rod_side_area * stroke_max", key=f"{p}.dead_volume_b")

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], prefix: str = "actuator") -> "ActuatorParams":
        """Build from a plain dict in SI; unknown or missing keys name the dotted key."""
        names = {f.name: f for f in fields(cls)}
        _check_keys(d, ACTUATOR.names(), prefix)
        kw: dict[str, Any] = {}
        for name, f in names.items():
            if name == "volume_model":
                kw[name] = str(d.get(name, f.default))
                continue
            default = None if f.default is dataclasses.MISSING else f.default
            kw[name] = _number(d, name, prefix, default)
        try:
            return cls(**kw)
        except InputError as exc:
            if exc.key and exc.key.startswith("actuator.") and prefix != "actuator":
                exc.key = prefix + exc.key[len("actuator"):]
            raise

    def replace(self, **values: float) -> "ActuatorParams":
        """A copy with some fields changed (validated)."""
        return dataclasses.replace(self, **values)

    def pack(self) -> np.ndarray:
        """Packed parameter row (layout ``models._kernels.hydraulic.P_*``)."""
        p = np.zeros(K.N_PAR)
        p[K.P_SA] = self.piston_area
        p[K.P_SB] = self.rod_side_area
        p[K.P_XMIN] = self.stroke_min
        p[K.P_XMAX] = self.stroke_max
        p[K.P_VA] = self.dead_volume_a
        p[K.P_VB] = self.dead_volume_b
        p[K.P_BETA] = self.bulk_modulus
        p[K.P_PS] = self.supply_pressure
        p[K.P_PT] = self.tank_pressure
        p[K.P_KV] = self.valve_gain
        p[K.P_WV] = self.valve_natural_frequency
        p[K.P_DV] = self.valve_damping
        p[K.P_C1] = self.supply_overlap
        p[K.P_C2] = self.tank_overlap
        p[K.P_KQ] = self.flow_coefficient
        p[K.P_PTR] = self.transition_pressure
        p[K.P_K] = self.viscous_friction
        p[K.P_FC] = self.dry_friction
        p[K.P_VS] = self.friction_velocity
        p[K.P_M] = self.piston_mass
        p[K.P_CIN] = self.internal_leakage
        p[K.P_CEX] = self.external_leakage
        p[K.P_VOLCONST] = 1.0 if self.volume_model == "constant" else 0.0
        p[K.P_PMIN] = self.pressure_floor
        p[K.P_BRAKE] = self.brake_force
        p[K.P_DELAY] = self.transport_delay
        return p


def hydraulic_natural_frequency(params: ActuatorParams, x_p: float, mass: float) -> float:
    """Hydraulic natural frequency ``omega_h`` [rad/s] at stroke ``x_p`` [m] for the total
    moving mass ``mass`` [kg] (digest 8.1):
    ``omega_h^2 = beta/m (S_A^2 / V_A(x_p) + S_B^2 / V_B(x_p))``."""
    va = params.dead_volume_a + (params.piston_area * x_p if params.volume_model == "variable" else 0)
    vb = params.dead_volume_b - (params.rod_side_area * x_p if params.volume_model == "variable" else 0)
    return math.sqrt(params.bulk_modulus / mass * (params.piston_area ** 2 / va
                                                   + params.rod_side_area ** 2 / vb))


@dataclass(frozen=True)
class SolverSettings:
    """Time stepping of the coupled model.

    Attributes
    ----------
    dt_hydraulic : hydraulic sub-step dt1 [s] (paper: 0.1 ms).
    dt_body : body step dt [s] (paper: 1-10 ms); ``dt_body == dt_hydraulic`` is single-rate.
    scheme : ``"loaded"`` (default) or ``"paper"`` (unloaded piston sub-steps, literal).
    pressure_update : ``"robust"`` (linearly implicit) or ``"literal"`` (explicit (E)).
    piston_in_substeps : ``"integrate"`` x_p with the sub-step velocity, or ``"hold"`` it (N6).
    tolerance : impulse tolerance epsilon [N s]; max_sweeps : Gauss-Seidel sweep cap.
    """

    dt_hydraulic: float = 1e-4
    dt_body: float = 1e-3
    scheme: str = "loaded"
    pressure_update: str = "robust"
    piston_in_substeps: str = "integrate"
    tolerance: float = 1e-7
    max_sweeps: int = 100

    def __post_init__(self) -> None:
        if not (self.dt_hydraulic > 0 and self.dt_body >= self.dt_hydraulic):
            raise InputError("need 0 < dt_hydraulic <= dt_body", key="solver.dt_body")
        for name, allowed in (("scheme", ("loaded", "paper")),
                              ("pressure_update", ("robust", "literal")),
                              ("piston_in_substeps", ("integrate", "hold"))):
            if getattr(self, name) not in allowed:
                raise InputError(f"must be one of {allowed}", key=f"solver.{name}")
        if not self.tolerance > 0 or int(self.max_sweeps) < 1:
            raise InputError("need tolerance > 0 and max_sweeps >= 1",
                             key="solver.tolerance" if not self.tolerance > 0
                             else "solver.max_sweeps")

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "SolverSettings":
        names = {f.name: f for f in fields(cls)}
        _check_keys(d, SOLVER.names(), "solver")
        kw = {}
        for name, f in names.items():
            if name in d:
                kw[name] = d[name] if isinstance(f.default, str) else (
                    int(_number(d, name, "solver")) if name == "max_sweeps"
                    else _number(d, name, "solver"))
        return cls(**kw)


@dataclass(frozen=True)
class LoadSettings:
    """Single-actuator load: a rigid mass on the rod end, moving along the actuator axis.

    mass [kg]; gravity [m/s^2] acting against extension (the lifting scenario);
    initial_position [m] of the piston.
    """

    mass: float = 100.0
    gravity: float = 9.81
    initial_position: float = 0.0

    def __post_init__(self) -> None:
        if not self.mass > 0:
            raise InputError("must be > 0", key="load.mass")

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "LoadSettings":
        _check_keys(d, LOAD.names(), "load")
        return cls(**{k: _number(d, k, "load") for k in d})


@dataclass(frozen=True)
class HexapodGeometry:
    """Stewart platform: six identical actuators between a fixed base and the platform.

    Joint points lie on circles: base radius / platform radius [m]; legs in pairs around
    0, 120, 240 deg, the pair split by ``base_spread`` / ``platform_spread`` [rad].
    ``home_height`` [m] of the platform frame above the base frame at home pose, where every
    leg sits at mid-stroke. ``platform_mass`` [kg], ``platform_inertia`` (3) principal [kg m^2].
    Position controller ``u = sat(controller_gain (l_cmd - l) + feedforward dl_cmd/dt)``
    [1/m], [s/m]; gravity [m/s^2] along -z.
    """

    base_radius: float = 1.0
    platform_radius: float = 0.6
    base_spread: float = 0.35
    platform_spread: float = 1.6
    home_height: float = 1.2
    platform_mass: float = 400.0
    platform_inertia: tuple[float, float, float] = (60.0, 60.0, 100.0)
    controller_gain: float = 60.0
    feedforward: float = 3.0
    gravity: float = 9.81

    def __post_init__(self) -> None:
        for name in ("base_radius", "platform_radius", "home_height", "platform_mass"):
            if not getattr(self, name) > 0:
                raise InputError("must be > 0", key=f"hexapod.{name}")
        if len(self.platform_inertia) != 3 or min(self.platform_inertia) <= 0:
            raise InputError("three positive principal inertias", key="hexapod.platform_inertia")

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "HexapodGeometry":
        _check_keys(d, HEXAPOD.names(), "hexapod")
        kw: dict[str, Any] = {}
        for k, v in d.items():
            if k == "platform_inertia":
                if not isinstance(v, (list, tuple)) or len(v) != 3:
                    raise InputError("expected three numbers", key="hexapod.platform_inertia")
                kw[k] = tuple(float(x) for x in v)
            else:
                kw[k] = _number(d, k, "hexapod")
        return cls(**kw)


@dataclass(frozen=True)
class RigConfig:
    """A rig configuration file: ``[actuator]``, ``[solver]``, ``[load]`` (single actuator) or
    ``[hexapod]`` (platform), and an ``[identify]`` table read by :mod:`identification.rig`."""

    actuator: ActuatorParams
    solver: SolverSettings = field(default_factory=SolverSettings)
    load: LoadSettings = field(default_factory=LoadSettings)
    hexapod: HexapodGeometry | None = None
    identify: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "RigConfig":
        _check_keys(d, RIG.names(), "")
        if "actuator" not in d:
            raise InputError("missing table", key="actuator")
        return cls(actuator=ActuatorParams.from_dict(d["actuator"]),
                   solver=SolverSettings.from_dict(d.get("solver", {})),
                   load=LoadSettings.from_dict(d.get("load", {})),
                   hexapod=HexapodGeometry.from_dict(d["hexapod"]) if "hexapod" in d else None,
                   identify=dict(d.get("identify", {})))


@dataclass(frozen=True)
class Command:
    """Piecewise-linear command table: time [s], valve input u [V] (one column per actuator),
    load force [N] (stand-alone), brake 0/1, and for the hexapod the commanded platform pose
    (x, y, z [m], roll, pitch, yaw [rad]) relative to home."""

    t: np.ndarray
    u: np.ndarray | None = None
    load_force: np.ndarray | None = None
    brake: np.ndarray | None = None
    pose: np.ndarray | None = None

    def column(self, values: np.ndarray | None, n_act: int = 1) -> np.ndarray:
        """``values`` as a (n_t, n_act) array; zeros when absent."""
        t = np.asarray(self.t, float)
        if values is None:
            return np.zeros((t.size, n_act))
        v = np.asarray(values, float)
        return v.reshape(t.size, -1) if v.ndim == 1 else v


@dataclass(frozen=True)
class ActuatorTrajectory:
    """Stand-alone output: ``data`` (n, N_OUT) with columns ``models._kernels.hydraulic.O_*``."""

    data: np.ndarray

    def __getitem__(self, name: str) -> np.ndarray:
        idx = {"t": K.O_T, "x_v": K.O_XV, "w_v": K.O_WV, "p_A": K.O_PA, "p_B": K.O_PB,
               "x_p": K.O_XP, "v_p": K.O_VP, "Q_A": K.O_QA, "Q_B": K.O_QB, "q_PA": K.O_QPA,
               "q_AT": K.O_QAT, "q_PB": K.O_QPB, "q_BT": K.O_QBT, "q_leak": K.O_QLEAK,
               "F_h": K.O_FH, "F_r": K.O_FR, "u": K.O_U, "F_load": K.O_FL}[name]
        return self.data[:, idx]


def initial_state(params: ActuatorParams, x_p: float | None = None, v_p: float = 0.0,
                  p_a: float | None = None, p_b: float | None = None) -> np.ndarray:
    """Packed state: spool at rest at neutral, pressures at tank (the neutral valve vents both
    chambers), piston at ``x_p`` (default ``stroke_min``)."""
    s = np.zeros(K.N_ST)
    s[K.S_PA] = params.tank_pressure if p_a is None else p_a
    s[K.S_PB] = params.tank_pressure if p_b is None else p_b
    s[K.S_XP] = params.stroke_min if x_p is None else x_p
    s[K.S_VP] = v_p
    return s


def simulate_actuator(params: ActuatorParams, command: Command, *, mass: float, t_end: float,
                      dt: float = 1e-4, out_every: int = 1, pressure_update: str = "robust",
                      state0: np.ndarray | None = None) -> ActuatorTrajectory:
    """Stand-alone actuator (1)-(5) with lumped moving mass ``mass`` [kg] (piston + load) and
    load force ``command.load_force`` [N], single-rate at ``dt`` [s]; the reference model.

    See :func:`models._kernels.hydraulic.simulate_actuator`."""
    t = np.ascontiguousarray(command.t, float)
    s0 = initial_state(params) if state0 is None else np.asarray(state0, float)
    out = K.simulate_actuator(params.pack(), s0, t,
                              np.ascontiguousarray(command.column(command.u)[:, 0]),
                              np.ascontiguousarray(command.column(command.load_force)[:, 0]),
                              np.ascontiguousarray(command.column(command.brake)[:, 0]),
                              float(mass), float(t_end), float(dt), int(out_every),
                              pressure_update == "robust")
    return ActuatorTrajectory(out)


@dataclass(frozen=True)
class CoupledTrajectory:
    """Coupled output: ``t`` (n,), ``bodies`` (n, n_b, 13) = pos [m], quat, vel [m/s],
    omega [rad/s]; ``actuators`` (n, n_a, N_AO) columns ``AO_*``; ``diag`` (n_steps, 3) =
    Gauss-Seidel sweeps, last max incremental impulse [N s], under-drive ratio (sub-step
    hydraulic impulse / step-start pressure force x dt; ~1 when the scheme transmits the
    load, << 1 under the N3 under-drive)."""

    t: np.ndarray
    bodies: np.ndarray
    actuators: np.ndarray
    diag: np.ndarray

    def actuator(self, name: str, a: int = 0) -> np.ndarray:
        idx = {"x_v": K.AO_XV, "p_A": K.AO_PA, "p_B": K.AO_PB, "x_p": K.AO_XP,
               "v_p": K.AO_VP, "u": K.AO_U, "F_h": K.AO_FH, "length": K.AO_LEN,
               "Q_A": K.AO_QA, "Q_B": K.AO_QB}[name]
        return self.actuators[:, a, idx]


def _body_row(inv_mass: float, inv_inertia, pos, quat=(1.0, 0.0, 0.0, 0.0), force=(0, 0, 0)):
    b = np.zeros(K.N_BODY)
    b[K.B_INVM] = inv_mass
    b[K.B_IINV:K.B_IINV + 3] = inv_inertia
    b[K.B_POS:K.B_POS + 3] = pos
    b[K.B_Q:K.B_Q + 4] = quat
    b[K.B_FORCE:K.B_FORCE + 3] = force
    return b


def _run(bodies, geo, geoi, par, state, command: Command, n_act: int, len_cmd, t_end,
         solver: SolverSettings, control: int, out_every: int) -> CoupledTrajectory:
    t = np.ascontiguousarray(command.t, float)
    u = np.ascontiguousarray(command.column(command.u, n_act))
    br = np.ascontiguousarray(command.column(command.brake, n_act))
    lc = np.ascontiguousarray(len_cmd if len_cmd is not None else np.zeros((t.size, n_act)))
    bo, ao, to, dg = K.cosim_run(bodies, geo, geoi, par, state, t, u, br, lc, float(t_end),
                                 float(solver.dt_body), float(solver.dt_hydraulic),
                                 float(solver.tolerance), int(solver.max_sweeps),
                                 1 if solver.scheme == "loaded" else 0,
                                 solver.pressure_update == "robust",
                                 1 if solver.piston_in_substeps == "integrate" else 0,
                                 control, int(out_every))
    guard = dg[:, 2]
    guard = guard[np.isfinite(guard)]
    if guard.size and np.percentile(guard, 10) < UNDERDRIVE_LIMIT:
        warnings.warn(f"multi-rate under-drive (digest N3): in 10 % of the steps the sub-steps "
                      f"delivered less than {np.percentile(guard, 10):.2f} of the step-start "
                      "hydraulic impulse; use scheme='loaded', a smaller dt_body or a heavier "
                      "piston", RuntimeWarning, stacklevel=3)
    return CoupledTrajectory(to, bo, ao, dg)


#: Under-drive guard: warn when the 10th percentile of the per-step ratio (sub-step hydraulic
#: impulse / step-start pressure force x dt) is below this.
UNDERDRIVE_LIMIT = 0.5


def lift_load(params: ActuatorParams, command: Command, *, load: LoadSettings = LoadSettings(),
              solver: SolverSettings = SolverSettings(), t_end: float = 4.0,
              out_every: int = 1) -> CoupledTrajectory:
    """The paper's demonstration: a vertical actuator between the fixed ground (body i, the
    barrel) and a load (body j, rigid, ``load.mass``) under gravity, coupled by sequential
    impulses. The load starts on the lower stop at rest with both chambers at tank pressure.

    The axis is fixed in the ground (``n_i = e_z``); ``x_p = z_load - x0`` with ``x0 = 0``.
    """
    m = load.mass
    ground = _body_row(0.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    inertia = 1.0 / (m * 0.1 ** 2)  # a 0.2 m cube-ish load; irrelevant for axial motion
    body = _body_row(1.0 / m, (inertia, inertia, inertia), (0.0, 0.0, load.initial_position),
                     force=(0.0, 0.0, -m * load.gravity))
    bodies = np.vstack([ground, body])
    geo = np.zeros((1, K.N_GEO))
    geo[0, K.G_AXIS + 2] = 1.0
    geoi = np.array([[0, 1, 0, 0]], dtype=np.int64)
    par = params.pack()[None, :].copy()
    state = initial_state(params, x_p=load.initial_position)[None, :].copy()
    return _run(bodies, geo, geoi, par, state, command, 1, None, t_end, solver, 0, out_every)


def hexapod_legs(geom: HexapodGeometry, params: ActuatorParams) -> tuple[np.ndarray, np.ndarray,
float]:
    """Joint points: base (6, 3) in the base frame, platform (6, 3) in the platform frame
    [m], and the leg length at x_p = 0, ``x0`` [m], chosen so that home is mid-stroke."""
    base = np.zeros((6, 3))
    plat = np.zeros((6, 3))
    for k in range(3):
        c = 2.0 * math.pi * k / 3.0
        for s, sign in enumerate((-1.0, 1.0)):
            ab = c + sign * 0.5 * geom.base_spread
            ap = c + sign * 0.5 * geom.platform_spread
            base[2 * k + s] = (geom.base_radius * math.cos(ab), geom.base_radius * math.sin(ab), 0)
            plat[2 * k + s] = (geom.platform_radius * math.cos(ap),
                               geom.platform_radius * math.sin(ap), 0)
    home = np.linalg.norm(plat + np.array([0, 0, geom.home_height]) - base, axis=1)
    if np.ptp(home) > 1e-9:
        raise InputError("legs differ in length at home; use a symmetric geometry",
                         key="hexapod.platform_spread")
    x0 = float(home[0] - 0.5 * (params.stroke_min + params.stroke_max))
    return base, plat, x0


def hexapod_leg_lengths(geom: HexapodGeometry, params: ActuatorParams,
                        pose: np.ndarray) -> np.ndarray:
    """Inverse kinematics: leg lengths (n, 6) [m] for platform poses (n, 6) relative to home
    (x, y, z [m], roll, pitch, yaw [rad])."""
    base, plat, _ = hexapod_legs(geom, params)
    pose = np.atleast_2d(np.asarray(pose, float))
    out = np.empty((pose.shape[0], 6))
    for i, row in enumerate(pose):
        rot = quat_to_dcm(quat_from_euler(*row[3:6])).T
        pos = row[:3] + np.array([0.0, 0.0, geom.home_height])
        out[i] = np.linalg.norm(pos + plat @ rot.T - base, axis=1)
    return out


def simulate_hexapod(geom: HexapodGeometry, params: ActuatorParams, command: Command, *,
                     solver: SolverSettings = SolverSettings(), t_end: float,
                     out_every: int = 1, leg_params: list[ActuatorParams] | None = None
                     ) -> CoupledTrajectory:
    """6-DOF rig: fixed base (body 0), platform (body 1) under gravity, six legs (axis along
    the leg, digest N10), each leg's valve driven by the position controller following the
    commanded pose ``command.pose`` (n, 6) relative to home (inverse kinematics per sample).

    The platform starts at home, at rest; the chambers start at the pressures that hold it
    (``p_A = p_T + F/S_A`` from the static leg forces, ``p_B = p_T``).

    Step size: the loaded predictor of each leg uses that leg's own effective mass and ignores
    the coupling between legs through the platform. Measured with the default geometry: at
    ``dt_body`` = 1 and 2 ms the platform agrees with the single-rate run (0.1 ms) to 0.5 mm;
    at 3 ms and above it diverges. Keep ``dt_body <= 2 ms`` for the hexapod.
    """
    if command.pose is None:
        raise InputError("the hexapod needs a commanded pose (x, y, z, roll, pitch, yaw)",
                         key="pose")
    legs = leg_params or [params] * 6
    base, plat, x0 = hexapod_legs(geom, params)
    iinv = tuple(1.0 / np.asarray(geom.platform_inertia))
    bodies = np.vstack([
        _body_row(0.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
        _body_row(1.0 / geom.platform_mass, iinv, (0.0, 0.0, geom.home_height),
                  force=(0.0, 0.0, -geom.platform_mass * geom.gravity))])
    geo = np.zeros((6, K.N_GEO))
    geo[:, K.G_PI:K.G_PI + 3] = base
    geo[:, K.G_PJ:K.G_PJ + 3] = plat
    geo[:, K.G_X0] = x0
    geo[:, K.G_KP] = geom.controller_gain
    geo[:, K.G_KFF] = geom.feedforward
    geoi = np.zeros((6, K.N_GEOI), dtype=np.int64)
    geoi[:, K.GI_I] = 0
    geoi[:, K.GI_J] = 1
    geoi[:, K.GI_AXIS] = 1
    par = np.vstack([lp.pack() for lp in legs])
    # static leg forces at home: J^T f = m g e_z (6x6 solve)
    home_pos = np.array([0.0, 0.0, geom.home_height])
    ncols = np.zeros((6, 6))
    for k in range(6):
        d = home_pos + plat[k] - base[k]
        n = d / np.linalg.norm(d)
        ncols[:3, k] = n
        ncols[3:, k] = np.cross(plat[k], n)
    wrench = np.array([0, 0, geom.platform_mass * geom.gravity, 0, 0, 0])
    f = np.linalg.solve(ncols, wrench)
    state = np.zeros((6, K.N_ST))
    for k, lp in enumerate(legs):
        mid = 0.5 * (lp.stroke_min + lp.stroke_max)
        state[k] = initial_state(lp, x_p=mid, p_a=lp.tank_pressure + (f[k] + lp.tank_pressure
                                 * (lp.rod_side_area - lp.piston_area)) / lp.piston_area)
        state[k, K.S_PA] = max(state[k, K.S_PA], lp.tank_pressure)
    len_cmd = hexapod_leg_lengths(geom, params, command.pose)
    return _run(bodies, geo, geoi, par, state, command, 6, len_cmd, t_end, solver, 1, out_every)


POSE_COLUMNS = ("x", "y", "z", "roll", "pitch", "yaw")


def simulate_rig(config: RigConfig, command: Command, *, model: str = "coupled",
                 t_end: float | None = None) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Simulate a rig configuration on a command; returns ``(columns, units)`` (SI).

    * ``[hexapod]`` present: the 6-DOF rig following ``command.pose`` (always coupled).
    * otherwise one actuator lifting ``load.mass`` under gravity: ``model="coupled"`` runs the
      sequential-impulse co-simulation with ``[solver]``; ``model="reference"`` the single-rate
      stand-alone model with load force ``command.load_force`` (default ``m g``).
    """
    given = t_end is not None
    t_end = float(command.t[-1]) if t_end is None else float(t_end)
    if not t_end > 0:
        raise InputError("the command must span a positive time", key="t")
    names = (("x_v", ""), ("p_A", "Pa"), ("p_B", "Pa"), ("x_p", "m"), ("v_p", "m/s"),
             ("Q_A", "m^3/s"), ("Q_B", "m^3/s"), ("F_h", "N"), ("u", "V"))
    # output every millisecond from t = 0: the columns (t, the pose and five per leg, or t and
    # the actuator's) and the trace they are taken from
    n_cols = 1 + (len(POSE_COLUMNS) + 6 * 5 if config.hexapod is not None else len(names))
    check_memory(8.0 * 2 * n_cols * (t_end / 1e-3 + 1), key="--t-end" if given else "t",
                 what=f"{t_end:.6g} s of rig output at 1 kHz from t = 0")
    cols: dict[str, np.ndarray] = {}
    units: dict[str, str] = {"t": "s"}
    if config.hexapod is not None:
        out_every = max(1, int(round(1e-3 / config.solver.dt_body)))
        tr = simulate_hexapod(config.hexapod, config.actuator, command, solver=config.solver,
                              t_end=t_end, out_every=out_every)
        cols["t"] = tr.t
        pos = tr.bodies[:, 1, 0:3] - np.array([0.0, 0.0, config.hexapod.home_height])
        eul = np.array([euler_from_quat(q) for q in tr.bodies[:, 1, 3:7]])
        for k, n in enumerate(POSE_COLUMNS):
            cols[n] = pos[:, k] if k < 3 else eul[:, k - 3]
            units[n] = "m" if k < 3 else "rad"
        for a in range(6):
            for name, unit in (("length", "m"), ("p_A", "Pa"), ("p_B", "Pa"), ("x_v", ""),
                               ("u", "V")):
                key = ("len" if name == "length" else name) + f"_{a + 1}"
                cols[key] = tr.actuator(name, a)
                units[key] = unit
        return cols, units
    if model == "reference":
        load_force = command.load_force
        if load_force is None:
            load_force = np.full(np.asarray(command.t).shape, config.load.mass
                                 * config.load.gravity)
        cmd = dataclasses.replace(command, load_force=load_force)
        dt = config.solver.dt_hydraulic
        tr = simulate_actuator(config.actuator, cmd, mass=config.actuator.piston_mass
                               + config.load.mass, t_end=t_end, dt=dt,
                               out_every=max(1, int(round(1e-3 / dt))),
                               state0=initial_state(config.actuator,
                                                    x_p=config.load.initial_position))
        cols["t"] = tr["t"]
        for n, u in names:
            cols[n] = tr[n]
            units[n] = u
        return cols, units
    if model != "coupled":
        raise InputError("model must be 'coupled' or 'reference'", key="model")
    if command.load_force is not None:
        raise InputError("a load-force column needs --model reference (the coupled model "
                         "applies gravity to load.mass)", key="F_load")
    out_every = max(1, int(round(1e-3 / config.solver.dt_body)))
    tr = lift_load(config.actuator, command, load=config.load, solver=config.solver,
                   t_end=t_end, out_every=out_every)
    cols["t"] = tr.t
    for n, u in names:
        cols[n] = tr.actuator(n)
        units[n] = u
    return cols, units
