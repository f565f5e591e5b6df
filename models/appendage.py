"""Free spacecraft with a planar chain of elastic rods: full and reduced (quasi-static bending)
formulations of Russkikh.

A rigid spacecraft (mass :math:`M_0`, inertia :math:`J_0` about its centre of mass C) moves freely
in the plane; at the attachment point :math:`(x_0, y_0)` of its body frame Cxy hangs a chain of
``n`` inextensible Euler-Bernoulli rods joined by elastic-viscous hinges. Rod k turns as a rigid
chord by :math:`\\varphi_k` (from the body x axis, never wrapped) and bends by a cubic Hermite
shape given by its end slopes :math:`\\alpha_k, \\beta_k` relative to the chord.

.. math::

    \\mathbf M(\\mathbf q)\\dot{\\mathbf p} + \\mathbf h(\\mathbf q, \\mathbf p)
    + \\mathbf D\\mathbf p + \\mathbf K\\mathbf q = \\mathbf Q, \\qquad
    \\dot{\\mathbf q} = \\mathbf G(\\mathbf q)\\mathbf p

(the paper's (14), ``h = N z``). The *reduced* formulation (15) drops the bending accelerations
and rates and the bending dependence of the inertia coefficients, solves the bending rows for
:math:`(\\alpha, \\beta)` and substitutes them: ``n + 3`` equations, fast bending removed.

Choices where the paper is silent (digest ``shared/seeds/flexible-rod-appendage.md``; checked
against the Russian original ``004_aa75cdc31d1eb2b1``, which agrees with the digest on every
point used here):

* The operator coefficients of (8)-(13) are not in the paper (they are in the author's [15]);
  they are assembled numerically from the kinetic energy of the stated kinematics (digest 10.3,
  10.6 form B), keeping every term: energy-exact (default). ``second_order_bending_terms=False``
  drops the O(bending^2) bias terms that do not fit the paper's ``N z`` form (digest 10.7
  item 4); the paper's printed structure implies its model lacks them. The two differ by
  O(bending^2) only.
* Hinge springs act on the jump of the *tangent* angle across the hinge,
  :math:`\\vartheta_k = (\\varphi_{k+1} + \\alpha_{k+1}) - (\\varphi_k + \\beta_k)`, neutral 0
  (the only reading that reproduces the signs of (4)-(6)).
* A node mass at node 0 is not modelled (lump it into the spacecraft); ``tip_mass`` of rod k is
  the paper's :math:`\\mu_k` at node k.
* Loads: force in body axes applied at C (a follower force), moment about C, piecewise constant.
* Clamps (the paper's elastic-viscous latches): when the relative *chord* angle
  :math:`|\\varphi_{k+1} - \\varphi_k|` (:math:`\\varphi_0 = 0`) first falls below the threshold,
  hinge k's stiffness and damping are replaced permanently; the spring keeps neutral angle 0.
  A clamp whose condition holds at t = 0 engages at t = 0.
* The full formulation starts with zero bending and bending rates (digest O8).

The integrator is an adaptive Dormand-Prince 5(4) inside the numba kernel (no per-step Python);
the paper used MathCAD's AdamsBDF.

References
----------
S. V. Russkikh, nonlinear dynamics of an elastic rod system attached to a spacecraft in a
reduced quasi-static bending statement (2018); digest sections 3-7 and 10.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from models._kernels import appendage as _k
from models._kernels.appendage_integrate import integrate as _integrate
from models.errors import InputError
from models.limits import check_memory, check_range
from models.schema import Table, keys

__all__ = [
    "Spacecraft", "Rod", "Hinge", "Load", "Clamp", "InitialState", "AppendageConfig",
    "AppendageResult", "ClampEvent", "APPENDAGE", "simulate", "linear_frequencies", "COLUMN_UNITS",
    "column_names", "preset_path",
]

FORMULATIONS = ("full", "reduced")

# --------------------------------------------------------------------------------------------
# declared schema of the configuration TOML (models.schema): AppendageConfig.from_dict takes
# its key sets, their order in its messages and the required keys from it
# --------------------------------------------------------------------------------------------
SPACECRAFT = Table("spacecraft", "The rigid spacecraft (models.appendage.Spacecraft).", keys("""
mass    | number   | kg     | required   | >0 | M_0
inertia | number   | kg m^2 | required   | >0 | J_0, moment of inertia about the centre of
| mass C
attach  | vector:2 | m      | [0.0, 0.0] | -  | attachment point (node 0) in body axes Cxy
"""), required=True, source=False)

RODS = Table("rods", "One inextensible Euler-Bernoulli rod per entry, from the spacecraft "
             "outwards (models.appendage.Rod).", keys("""
length            | number | m      | required | >0  | l_k
linear_mass       | number | kg/m   | required | >0  | m_k
bending_stiffness | number | N m^2  | required | >0  | EI_k
tip_mass          | number | kg     | 0.0      | >=0 | point mass at the rod's outer node
"""), required=True, source=False, array=True)

HINGES = Table("hinges", "One elastic-viscous hinge per rod: hinge 0 joins the spacecraft to "
               "rod 1, hinge k rod k to rod k+1 (models.appendage.Hinge).", keys("""
stiffness | number | N m/rad   | 0.0 | >=0 | kappa_k
damping   | number | N m s/rad | 0.0 | >=0 | nu_k
"""), required=True, source=False, array=True)

LOADS = Table("loads", "Constant force and moment on the spacecraft for t_start <= t < t_end "
              "(models.appendage.Load).", keys("""
t_start | number   | s   | required   | >=0 | start of the window
t_end   | number   | s   | required   | -   | end of the window (after t_start)
force   | vector:2 | N   | [0.0, 0.0] | -   | (X_C, Y_C) in body axes, at C
moment  | number   | N m | 0.0        | -   | M_C
"""), source=False, array=True)

INITIAL = Table("initial", "Initial state; bending and its rates start at zero "
                "(models.appendage.InitialState).", keys("""
phi      | vector   | rad   | required   | - | chord angles from the body x axis, one per rod
phi_rate | vector   | rad/s | -          | - | chord angle rates, one per rod (zeros when
| absent)
Omega    | number   | rad/s | 0.0        | - | spacecraft angular velocity
v_C      | vector:2 | m/s   | [0.0, 0.0] | - | velocity of C in body axes
"""), required=True, source=False)

CLAMPS = Table("clamps", "Elastic-viscous clamp of one hinge, at most one per hinge "
               "(models.appendage.Clamp).", keys("""
hinge     | integer | -         | required | >=0 | hinge index k (0 .. n-1)
threshold | number  | rad       | required | >0  | engages when the hinge's relative chord
| angle first falls below it
stiffness | number  | N m/rad   | required | >=0 | hinge stiffness after engagement
damping   | number  | N m s/rad | required | >=0 | hinge damping after engagement
"""), source=False, array=True)

#: the configuration of ``dockrecon simulate appendage`` (:meth:`AppendageConfig.from_dict`)
APPENDAGE = Table("appendage", "Spacecraft with a chain of elastic rods "
                  "(models.appendage.AppendageConfig).", keys("""
formulation   | choice:full,reduced | - | required | -      | "full" (3n + 3 equations) or
| "reduced" (n + 3, quasi-static bending)
duration      | number  | s | required | >0     | simulated time
output_points | integer | - | required | [2, ]  | equally spaced output times on [0, duration]
| (both ends included)
""") + (SPACECRAFT, RODS, HINGES, LOADS, INITIAL, CLAMPS), source=False)


def _spec(t: Table) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The keys of ``t`` (declaration order) and its required ones, as :func:`_table` takes
    them."""
    return t.order(), tuple(e.name for e in t.entries if e.required)


def preset_path(name: str) -> Path:
    """Path of a shipped example configuration in ``models/presets`` (e.g.
    ``"appendage_pulse.toml"``)."""
    return Path(__file__).parent / "presets" / name


# --------------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------------
def _num(value: Any, key: str, *, positive: bool = False, nonneg: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"expected a number, got {value!r}", key=key)
    v = float(value)
    if not math.isfinite(v):
        raise InputError("must be finite", key=key)
    if positive and not v > 0:
        raise InputError(f"must be > 0, got {v:g}", key=key)
    if nonneg and v < 0:
        raise InputError(f"must be >= 0, got {v:g}", key=key)
    return check_range(key, v)


def _vec(value: Any, key: str, size: int | None = None) -> tuple[float, ...]:
    if not isinstance(value, (list, tuple)):
        raise InputError(f"expected a list of numbers, got {value!r}", key=key)
    if size is not None and len(value) != size:
        raise InputError(f"expected {size} numbers, got {len(value)}", key=key)
    return tuple(_num(v, f"{key}[{i}]") for i, v in enumerate(value))


def _table(d: Any, key: str, allowed: tuple[str, ...], required: tuple[str, ...]) -> Mapping:
    if not isinstance(d, Mapping):
        raise InputError("expected a table", key=key)
    for name in d:
        if name not in allowed:
            raise InputError(f"unknown key (allowed: {', '.join(allowed)})",
                             key=f"{key}.{name}" if key else name)
    for name in required:
        if name not in d:
            raise InputError("missing", key=f"{key}.{name}" if key else name)
    return d


def _array_of_tables(d: Mapping, key: str) -> list:
    v = d.get(key, [])
    if not isinstance(v, list) or not all(isinstance(x, Mapping) for x in v):
        raise InputError("expected an array of tables ([[...]])", key=key)
    return v


# --------------------------------------------------------------------------------------------
# parameters
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Spacecraft:
    """Rigid spacecraft.

    Attributes
    ----------
    mass : float
        :math:`M_0` [kg].
    inertia : float
        :math:`J_0`, moment of inertia about the centre of mass C [kg m^2].
    attach : tuple of float
        Attachment point (node 0) :math:`(x_0, y_0)` in body axes Cxy [m].
    """

    mass: float
    inertia: float
    attach: tuple[float, float] = (0.0, 0.0)

    def __post_init__(self) -> None:
        _num(self.mass, "spacecraft.mass", positive=True)
        _num(self.inertia, "spacecraft.inertia", positive=True)
        _vec(self.attach, "spacecraft.attach", 2)


@dataclass(frozen=True)
class Rod:
    """One inextensible Euler-Bernoulli rod.

    Attributes
    ----------
    length : float
        :math:`l_k` [m].
    linear_mass : float
        :math:`m_k` [kg/m].
    bending_stiffness : float
        :math:`EI_k` [N m^2].
    tip_mass : float
        :math:`\\mu_k`, point mass at the rod's outer node k [kg].
    """

    length: float
    linear_mass: float
    bending_stiffness: float
    tip_mass: float = 0.0

    def __post_init__(self) -> None:
        _num(self.length, "rods.length", positive=True)
        _num(self.linear_mass, "rods.linear_mass", positive=True)
        _num(self.bending_stiffness, "rods.bending_stiffness", positive=True)
        _num(self.tip_mass, "rods.tip_mass", nonneg=True)


@dataclass(frozen=True)
class Hinge:
    """Elastic-viscous hinge k (hinge 0: spacecraft to rod 1; hinge k: rod k to rod k+1).

    Attributes
    ----------
    stiffness : float
        :math:`\\kappa_k` [N m/rad].
    damping : float
        :math:`\\nu_k` [N m s/rad].
    """

    stiffness: float = 0.0
    damping: float = 0.0

    def __post_init__(self) -> None:
        _num(self.stiffness, "hinges.stiffness", nonneg=True)
        _num(self.damping, "hinges.damping", nonneg=True)


@dataclass(frozen=True)
class Load:
    """Constant force (body axes, at C) and moment on the spacecraft for
    ``t_start <= t < t_end``.

    Attributes
    ----------
    t_start, t_end : float
        Window [s].
    force : tuple of float
        :math:`(X_C, Y_C)` in body axes [N].
    moment : float
        :math:`M_C` [N m].
    """

    t_start: float
    t_end: float
    force: tuple[float, float] = (0.0, 0.0)
    moment: float = 0.0

    def __post_init__(self) -> None:
        t0 = _num(self.t_start, "loads.t_start", nonneg=True)
        t1 = _num(self.t_end, "loads.t_end")
        if not t1 > t0:
            raise InputError(f"must be > t_start ({t0:g}), got {t1:g}", key="loads.t_end")
        _vec(self.force, "loads.force", 2)
        _num(self.moment, "loads.moment")


@dataclass(frozen=True)
class Clamp:
    """Elastic-viscous clamp of one hinge.

    Attributes
    ----------
    hinge : int
        Hinge index k (0 .. n-1).
    threshold : float
        Engages when :math:`|\\varphi_{k+1} - \\varphi_k|` first falls below it [rad].
    stiffness, damping : float
        New hinge stiffness [N m/rad] and damping [N m s/rad] after engagement.
    """

    hinge: int
    threshold: float
    stiffness: float
    damping: float

    def __post_init__(self) -> None:
        if isinstance(self.hinge, bool) or not isinstance(self.hinge, int) or self.hinge < 0:
            raise InputError(f"expected a hinge index >= 0, got {self.hinge!r}",
                             key="clamps.hinge")
        _num(self.threshold, "clamps.threshold", positive=True)
        _num(self.stiffness, "clamps.stiffness", nonneg=True)
        _num(self.damping, "clamps.damping", nonneg=True)


@dataclass(frozen=True)
class InitialState:
    """Initial state (bending and its rates start at zero).

    Attributes
    ----------
    phi : tuple of float
        Chord angles :math:`\\varphi_k` from the body x axis [rad].
    phi_rate : tuple of float or None
        :math:`\\dot\\varphi_k` [rad/s]; zeros when None.
    Omega : float
        Spacecraft angular velocity [rad/s].
    v_C : tuple of float
        Velocity of C in body axes :math:`(\\upsilon_{Cx}, \\upsilon_{Cy})` [m/s].
    """

    phi: tuple[float, ...]
    phi_rate: tuple[float, ...] | None = None
    Omega: float = 0.0
    v_C: tuple[float, float] = (0.0, 0.0)

    def __post_init__(self) -> None:
        _vec(self.phi, "initial.phi")
        if self.phi_rate is not None:
            _vec(self.phi_rate, "initial.phi_rate", len(self.phi))
        _num(self.Omega, "initial.Omega")
        _vec(self.v_C, "initial.v_C", 2)


@dataclass(frozen=True)
class AppendageConfig:
    """A complete appendage run, as the TOML configuration of ``dockrecon simulate appendage``.

    Attributes
    ----------
    formulation : str
        ``"full"`` (3n + 3 equations) or ``"reduced"`` (n + 3).
    duration : float
        Simulated time [s].
    output_points : int
        Number of equally spaced output times on ``[0, duration]`` (both ends included).
    """

    formulation: str
    duration: float
    output_points: int
    spacecraft: Spacecraft
    rods: tuple[Rod, ...]
    hinges: tuple[Hinge, ...]
    initial: InitialState
    loads: tuple[Load, ...] = ()
    clamps: tuple[Clamp, ...] = ()

    def __post_init__(self) -> None:
        if self.formulation not in FORMULATIONS:
            raise InputError(f"must be one of {FORMULATIONS}, got {self.formulation!r}",
                             key="formulation")
        _num(self.duration, "duration", positive=True)
        if (isinstance(self.output_points, bool) or not isinstance(self.output_points, int)
                or self.output_points < 2):
            raise InputError(f"must be an integer >= 2, got {self.output_points!r}",
                             key="output_points")
        n = len(self.rods)
        if n < 1:
            raise InputError("at least one [[rods]] entry is needed", key="rods")
        if len(self.hinges) != n:
            raise InputError(f"expected one hinge per rod ({n}), got {len(self.hinges)}",
                             key="hinges")
        if len(self.initial.phi) != n:
            raise InputError(f"expected {n} angles (one per rod), got {len(self.initial.phi)}",
                             key="initial.phi")
        seen = set()
        for i, c in enumerate(self.clamps):
            if c.hinge >= n:
                raise InputError(f"hinge index must be < {n}, got {c.hinge}",
                                 key=f"clamps[{i}].hinge")
            if c.hinge in seen:
                raise InputError(f"hinge {c.hinge} has two clamps", key=f"clamps[{i}].hinge")
            seen.add(c.hinge)

    @property
    def n(self) -> int:
        """Number of rods."""
        return len(self.rods)

    # ---- construction from a plain dict (TOML) ------------------------------------------
    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "AppendageConfig":
        """Build from the appendage TOML layout (module docstring; SI units); unknown keys are
        errors."""
        _table(d, "", *_spec(APPENDAGE))
        sc = _table(d["spacecraft"], "spacecraft", *_spec(SPACECRAFT))
        spacecraft = Spacecraft(_num(sc["mass"], "spacecraft.mass"),
                                _num(sc["inertia"], "spacecraft.inertia"),
                                _vec(sc.get("attach", [0.0, 0.0]), "spacecraft.attach", 2))
        rods = []
        for i, r in enumerate(_array_of_tables(d, "rods")):
            key = f"rods[{i}]"
            _table(r, key, *_spec(RODS))
            rods.append(_with_key(key, lambda r=r, key=key: Rod(
                _num(r["length"], f"{key}.length"),
                _num(r["linear_mass"], f"{key}.linear_mass"),
                _num(r["bending_stiffness"], f"{key}.bending_stiffness"),
                _num(r.get("tip_mass", 0.0), f"{key}.tip_mass"))))
        hinges = []
        for i, h in enumerate(_array_of_tables(d, "hinges")):
            key = f"hinges[{i}]"
            _table(h, key, *_spec(HINGES))
            hinges.append(_with_key(key, lambda h=h, key=key: Hinge(
                _num(h.get("stiffness", 0.0), f"{key}.stiffness"),
                _num(h.get("damping", 0.0), f"{key}.damping"))))
        loads = []
        for i, ld in enumerate(_array_of_tables(d, "loads")):
            key = f"loads[{i}]"
            _table(ld, key, *_spec(LOADS))
            loads.append(_with_key(key, lambda ld=ld, key=key: Load(
                _num(ld["t_start"], f"{key}.t_start"), _num(ld["t_end"], f"{key}.t_end"),
                _vec(ld.get("force", [0.0, 0.0]), f"{key}.force", 2),
                _num(ld.get("moment", 0.0), f"{key}.moment"))))
        clamps = []
        for i, c in enumerate(_array_of_tables(d, "clamps")):
            key = f"clamps[{i}]"
            _table(c, key, *_spec(CLAMPS))
            clamps.append(_with_key(key, lambda c=c, key=key: Clamp(
                c["hinge"], _num(c["threshold"], f"{key}.threshold"),
                _num(c["stiffness"], f"{key}.stiffness"), _num(c["damping"], f"{key}.damping"))))
        ini = _table(d["initial"], "initial", *_spec(INITIAL))
        initial = InitialState(
            _vec(ini["phi"], "initial.phi"),
            _vec(ini["phi_rate"], "initial.phi_rate") if "phi_rate" in ini else None,
            _num(ini.get("Omega", 0.0), "initial.Omega"),
            _vec(ini.get("v_C", [0.0, 0.0]), "initial.v_C", 2))
        form = d["formulation"]
        if not isinstance(form, str):
            raise InputError(f"expected a string, got {form!r}", key="formulation")
        return cls(form, _num(d["duration"], "duration"), d["output_points"], spacecraft,
                   tuple(rods), tuple(hinges), initial, tuple(loads), tuple(clamps))

    # ---- packed arrays --------------------------------------------------------------------
    def pack(self) -> dict[str, np.ndarray]:
        """Packed kernel arrays (layouts in :mod:`models._kernels.appendage`)."""
        body = np.zeros(_k.BODY_SIZE)
        body[_k.BODY_M0] = self.spacecraft.mass
        body[_k.BODY_J0] = self.spacecraft.inertia
        body[_k.BODY_X0], body[_k.BODY_Y0] = self.spacecraft.attach
        rods = np.zeros((self.n, _k.ROD_SIZE))
        for i, r in enumerate(self.rods):
            rods[i, [_k.ROD_L, _k.ROD_M, _k.ROD_EI, _k.ROD_MU]] = (
                r.length, r.linear_mass, r.bending_stiffness, r.tip_mass)
        hinges = np.zeros((self.n, _k.HINGE_SIZE))
        for i, h in enumerate(self.hinges):
            hinges[i, [_k.HINGE_K, _k.HINGE_NU]] = (h.stiffness, h.damping)
        loads = np.zeros((len(self.loads), _k.LOAD_SIZE))
        for i, ld in enumerate(self.loads):
            loads[i] = (ld.t_start, ld.t_end, ld.force[0], ld.force[1], ld.moment)
        clamps = np.zeros((len(self.clamps), _k.CLAMP_SIZE))
        for i, c in enumerate(self.clamps):
            clamps[i] = (c.hinge, c.threshold, c.stiffness, c.damping)
        return {"body": body, "rods": rods, "hinges": hinges, "loads": loads, "clamps": clamps}

    def initial_vector(self, formulation: str | None = None) -> np.ndarray:
        """ODE initial state ``[p, q]`` (full layout ``6n+6`` or reduced ``2n+6``), C at the
        origin, theta_C = 0, zero bending."""
        form = formulation or self.formulation
        n = self.n
        m = 3 * n + 3 if form == "full" else n + 3
        y = np.zeros(2 * m)
        y[0], y[1] = self.initial.v_C
        y[2] = self.initial.Omega
        if self.initial.phi_rate is not None:
            y[3:3 + n] = self.initial.phi_rate
        y[m + 3:m + 3 + n] = self.initial.phi
        return y


def _with_key(key: str, build):
    """Run ``build()`` re-keying an InputError raised by a dataclass onto the entry ``key``."""
    try:
        return build()
    except InputError as exc:
        if exc.key and "." in exc.key:
            exc.key = f"{key}.{exc.key.split('.', 1)[1]}"
        raise


# --------------------------------------------------------------------------------------------
# results
# --------------------------------------------------------------------------------------------
COLUMN_UNITS = {"t": "s", "u_Cx": "m", "u_Cy": "m", "theta_C": "rad", "v_Cx": "m/s",
                "v_Cy": "m/s", "Omega": "rad/s", "phi": "rad", "alpha": "rad", "beta": "rad"}


def column_names(n: int) -> list[str]:
    """Output columns: ``t, u_Cx, u_Cy, theta_C, v_Cx, v_Cy, Omega, phi_1..n, alpha_1..n,
    beta_1..n``."""
    return (["t", "u_Cx", "u_Cy", "theta_C", "v_Cx", "v_Cy", "Omega"]
            + [f"{s}_{k}" for s in ("phi", "alpha", "beta") for k in range(1, n + 1)])


@dataclass(frozen=True)
class ClampEvent:
    """Engagement of a clamp: hinge index and time [s]."""

    hinge: int
    t: float


@dataclass(frozen=True)
class AppendageResult:
    """Trajectory of one run.

    Attributes
    ----------
    config : AppendageConfig
    formulation : str
    t : ndarray
        Output times [s].
    state : ndarray [n_out, ny]
        ODE state ``[p, q]`` at ``t`` (full or reduced layout).
    bending : ndarray [n_out, 2n]
        ``(alpha_1..n, beta_1..n)`` [rad]: state (full) or quasi-static solution (reduced).
    clamps : tuple of ClampEvent
        Engaged clamps in time order.
    stats : dict
        ``nfev``, ``n_accepted``, ``n_rejected``, ``wall_s``, ``rtol``, ``atol``.
    """

    config: AppendageConfig
    formulation: str
    t: np.ndarray
    state: np.ndarray
    bending: np.ndarray
    clamps: tuple[ClampEvent, ...]
    stats: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return self.config.n

    def full_state(self) -> np.ndarray:
        """States in the full layout ``[p, q]`` (6n+6); for the reduced formulation the
        bending angles are the quasi-static ones and their rates are set to zero."""
        n = self.n
        if self.formulation == "full":
            return self.state
        R, N = n + 3, 3 * n + 3
        out = np.zeros((len(self.t), 2 * N))
        out[:, :R] = self.state[:, :R]
        out[:, N:N + R] = self.state[:, R:]
        out[:, N + R:] = self.bending
        return out

    def columns(self) -> dict[str, np.ndarray]:
        """The output table as named SI columns (see :func:`column_names`)."""
        n = self.n
        m = self.state.shape[1] // 2
        s = self.state
        cols = {"t": self.t, "u_Cx": s[:, m], "u_Cy": s[:, m + 1], "theta_C": s[:, m + 2],
                "v_Cx": s[:, 0], "v_Cy": s[:, 1], "Omega": s[:, 2]}
        for k in range(n):
            cols[f"phi_{k + 1}"] = s[:, m + 3 + k]
        for k in range(n):
            cols[f"alpha_{k + 1}"] = self.bending[:, k]
        for k in range(n):
            cols[f"beta_{k + 1}"] = self.bending[:, n + k]
        return cols

    def units(self) -> dict[str, str]:
        """Unit of every column."""
        return {c: COLUMN_UNITS[c] if c in COLUMN_UNITS else COLUMN_UNITS[c.split("_")[0]]
                for c in column_names(self.n)}

    def invariants(self, rigid: bool | None = None) -> dict[str, np.ndarray]:
        """Energies [J] and inertial momenta at the output times.

        Returns ``kinetic``, ``strain``, ``hinge``, ``energy`` (their sum), ``P_X``, ``P_Y``
        [kg m/s] and ``L`` [kg m^2/s] (about the initial position of C, inertial axes = body
        axes at t = 0). ``rigid=True`` (default for the reduced formulation) evaluates them
        with zero bending: for the reduced model with all hinge stiffnesses zero this is the
        exact invariant set of its rigid-chain dynamics.
        """
        rigid = self.formulation == "reduced" if rigid is None else rigid
        packed = self.config.pack()
        ys = self.full_state().copy()
        n = self.n
        N = 3 * n + 3
        if rigid:
            ys[:, 3 + n:N] = 0.0
            ys[:, N + 3 + n:] = 0.0
        out = np.zeros((len(self.t), 6))
        hinges = packed["hinges"].copy()
        lock = {c.hinge: c for c in self.config.clamps}
        for i, y in enumerate(ys):
            for e in self.clamps:  # hinge energy with the stiffness in force at t
                if self.t[i] >= e.t:
                    hinges[e.hinge] = (lock[e.hinge].stiffness, lock[e.hinge].damping)
            _k.invariants(np.ascontiguousarray(y), packed["body"], packed["rods"], hinges, out[i])
        return {"kinetic": out[:, 0], "strain": out[:, 1], "hinge": out[:, 2],
                "energy": out[:, 0] + out[:, 1] + out[:, 2], "P_X": out[:, 3],
                "P_Y": out[:, 4], "L": out[:, 5]}


# --------------------------------------------------------------------------------------------
# simulation
# --------------------------------------------------------------------------------------------
_STATUS = {_k.STATUS_MAX_STEPS: "too many steps (raise max_steps or loosen rtol)",
           _k.STATUS_STEP_UNDERFLOW: "step size underflow (the system is too stiff for the "
                                     "tolerance)",
           _k.STATUS_SINGULAR: "singular inertia or stiffness matrix"}


def simulate(config: AppendageConfig, *, formulation: str | None = None, rtol: float = 1e-8,
             atol: float = 1e-10, max_step: float = math.inf, max_steps: int = 10_000_000,
             second_order_bending_terms: bool = True) -> AppendageResult:
    """Integrate the appendage configuration.

    Parameters
    ----------
    config : AppendageConfig
    formulation : {"full", "reduced"}, optional
        Overrides ``config.formulation``.
    rtol, atol : float
        Error tolerances of the adaptive Dormand-Prince 5(4) integrator (RMS norm over the
        state, per component ``atol + rtol |y|``); angles [rad], velocities [m/s, rad/s].
    max_step : float
        Largest step [s].
    max_steps : int
        Step budget; exceeding it raises ``RuntimeError``.
    second_order_bending_terms : bool
        Full formulation only: keep (default, energy-exact) or drop the bias terms of second
        order in bending that the paper's ``N z`` structure lacks. The reduced formulation
        has no such terms (zero bending in its inertia operators).

    Returns
    -------
    AppendageResult
    """
    form = formulation or config.formulation
    if form not in FORMULATIONS:
        raise InputError(f"must be one of {FORMULATIONS}, got {form!r}", key="formulation")
    for name, v in (("rtol", rtol), ("atol", atol)):
        if not (isinstance(v, (int, float)) and v > 0 and math.isfinite(v)):
            raise InputError(f"must be a positive number, got {v!r}", key=name)
    packed = config.pack()
    y0 = config.initial_vector(form)
    # the state, bending and output table at every output point, and the table's copy
    check_memory(8.0 * config.output_points * (2 * (len(y0) + 2 * config.n) + 8),
                 key="output_points",
                 what=f"{config.output_points} output points of {len(y0)} states")
    t_out = np.linspace(0.0, config.duration, config.output_points)
    n = config.n
    Y = np.zeros((len(t_out), len(y0)))
    bend = np.zeros((len(t_out), 2 * n))
    clamp_t = np.zeros(len(config.clamps))
    stats = np.zeros(_k.STAT_SIZE, dtype=np.int64)
    code = (_k.FORM_REDUCED if form == "reduced" else
            _k.FORM_FULL if second_order_bending_terms else _k.FORM_FULL_PAPER)
    t0 = time.perf_counter()
    status = _integrate(y0, t_out, packed["body"], packed["rods"], packed["hinges"],
                        packed["loads"], packed["clamps"], code, float(rtol), float(atol),
                        float(max_step), int(max_steps), Y, bend, clamp_t, stats)
    wall = time.perf_counter() - t0
    if status != _k.STATUS_OK:
        raise RuntimeError(f"appendage integration failed: {_STATUS.get(status, status)}")
    events = sorted((ClampEvent(c.hinge, float(tc)) for c, tc in zip(config.clamps, clamp_t)
                     if np.isfinite(tc)), key=lambda e: e.t)
    return AppendageResult(config, form, t_out, Y, bend, tuple(events),
                           {"nfev": int(stats[_k.STAT_NFEV]),
                            "n_accepted": int(stats[_k.STAT_NACCEPT]),
                            "n_rejected": int(stats[_k.STAT_NREJECT]), "wall_s": wall,
                            "rtol": rtol, "atol": atol,
                            "second_order_bending_terms": bool(second_order_bending_terms)})


def linear_frequencies(config: AppendageConfig, *, spacecraft_fixed: bool = True) -> np.ndarray:
    """Natural frequencies [rad/s] of the full formulation linearised about the initial
    configuration at rest, sorted ascending.

    The configuration must be an equilibrium without loads (e.g. straight along the body x
    axis, where every hinge spring is unstressed). With ``spacecraft_fixed`` the spacecraft
    coordinates are held (the limit :math:`M_0, J_0 \\to \\infty`); otherwise the three rigid
    modes of the free system (zero frequency) are dropped.
    """
    from scipy.linalg import eigh

    packed = config.pack()
    n = config.n
    N = 3 * n + 3
    y = config.initial_vector("full")
    M = np.zeros((N, N))
    h = np.zeros(N)
    Kmat = np.zeros((N, N))
    D = np.zeros((N, N))
    _k.assemble(y[N:].copy(), np.zeros(N), packed["body"], packed["rods"], M, h)
    _k.elastic_matrices(packed["rods"], packed["hinges"], Kmat, D)
    s = slice(3, N) if spacecraft_fixed else slice(0, N)
    w2 = eigh(Kmat[s, s], M[s, s], eigvals_only=True)
    if not spacecraft_fixed:
        w2 = np.sort(w2)[3:]
    return np.sqrt(np.clip(np.sort(w2), 0.0, None))
