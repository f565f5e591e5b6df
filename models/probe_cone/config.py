"""Probe-cone docking configuration: frozen dataclasses built from plain (SI) dicts.

The scenario TOML (see ``presets/reference.toml``) has the tables ``[meta]``, ``[active]``,
``[passive]``, ``[probe]`` (with ``[probe.axial_absorber]`` and ``[probe.lateral_absorber]``),
``[cone]``, ``[latches]``, ``[slots]``, ``[contact]``, ``[thrust]``, ``[integration]`` and an
optional ``[initial]`` table of the twelve initial conditions. Every value is SI; unknown keys
are errors naming the dotted key; the file is read by :func:`recon.io.load_toml` and the CLI
adds the file name to any error.

References
----------
Digest ``docking-contact-models.md`` §2 (frames), §5 (force law), §8 (probe-cone unit),
§12 (choices); digest ``hysteresis-and-resonance-identification.md`` A.3, A.10, A.11.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Mapping

import numpy as np

from models.errors import InputError
from models.rigid_body import RigidBody

__all__ = [
    "IC_NAMES",
    "InitialConditions",
    "AxialAbsorber",
    "LateralAbsorber",
    "Probe",
    "Cone",
    "Latches",
    "Slots",
    "ContactLaw",
    "Thrust",
    "Integration",
    "Scenario",
]

IC_NAMES = ("rel_pos_x", "rel_pos_y", "rel_pos_z", "rel_vel_x", "rel_vel_y", "rel_vel_z",
            "rel_roll", "rel_pitch", "rel_yaw", "rel_rate_x", "rel_rate_y", "rel_rate_z")


# --------------------------------------------------------------------------------------------
# dict helpers
def _check_keys(d: Mapping[str, Any], known: set[str], prefix: str) -> None:
    if not isinstance(d, Mapping):
        raise InputError("expected a table", key=prefix.rstrip("."))
    for k in d:
        if k not in known:
            raise InputError(f"unknown key (expected one of: {', '.join(sorted(known))})",
                             key=f"{prefix}{k}")


def _num(d: Mapping[str, Any], key: str, prefix: str, default: float | None = None, *,
         positive: bool = False, nonneg: bool = False) -> float:
    if key not in d:
        if default is None:
            raise InputError("missing", key=prefix + key)
        return float(default)
    v = d[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise InputError(f"expected a number, got {v!r}", key=prefix + key)
    v = float(v)
    if not np.isfinite(v):
        raise InputError("must be finite", key=prefix + key)
    if positive and v <= 0.0:
        raise InputError("must be positive", key=prefix + key)
    if nonneg and v < 0.0:
        raise InputError("must not be negative", key=prefix + key)
    return v


def _arr(d: Mapping[str, Any], key: str, prefix: str, shape: tuple, default=None) -> np.ndarray:
    if key not in d:
        if default is None:
            raise InputError("missing", key=prefix + key)
        return np.asarray(default, dtype=float)
    try:
        a = np.asarray(d[key], dtype=float)
    except (TypeError, ValueError):
        raise InputError("expected numbers", key=prefix + key) from None
    if shape and a.shape != shape:
        raise InputError(f"expected shape {shape}, got {a.shape}", key=prefix + key)
    if not np.all(np.isfinite(a)):
        raise InputError("must be finite", key=prefix + key)
    return a


def _dataclass_from(cls, d: Mapping[str, Any], prefix: str, **special):
    """Numbers for every float field of ``cls`` (defaults from the dataclass)."""
    names = {f.name for f in fields(cls)}
    _check_keys(d, names | {"source"}, prefix)
    kw = {}
    for f in fields(cls):
        if f.name in special:
            kw[f.name] = special[f.name]
            continue
        default = f.default if f.default is not f.default_factory else None  # noqa: E721
        if f.default.__class__.__name__ == "_MISSING_TYPE":
            default = None
        kw[f.name] = _num(d, f.name, prefix, default)
    return cls(**kw)


# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class InitialConditions:
    """Relative state of the active unit frame (AU) in the passive unit frame (PU) at t = 0.

    ``rel_pos_*`` [m]: AU origin in PU axes. ``rel_vel_*`` [m/s]: inertial velocity of the AU
    origin minus that of the PU origin, in PU axes. ``rel_roll``, ``rel_pitch``, ``rel_yaw``
    [rad]: ``A_PAU = R_x(roll) R_y(pitch) R_z(yaw)`` (PU -> AU components). ``rel_rate_*``
    [rad/s]: angular velocity of AU minus that of PU, in PU axes.
    """

    rel_pos_x: float
    rel_pos_y: float
    rel_pos_z: float
    rel_vel_x: float
    rel_vel_y: float
    rel_vel_z: float
    rel_roll: float
    rel_pitch: float
    rel_yaw: float
    rel_rate_x: float
    rel_rate_y: float
    rel_rate_z: float

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], prefix: str = "initial.") -> "InitialConditions":
        """All twelve names required, in SI; unknown keys are errors."""
        _check_keys(d, set(IC_NAMES), prefix)
        return cls(**{n: _num(d, n, prefix) for n in IC_NAMES})

    def as_array(self) -> np.ndarray:
        """The twelve values in :data:`IC_NAMES` order."""
        return np.array([getattr(self, n) for n in IC_NAMES], dtype=float)

    @classmethod
    def from_array(cls, a) -> "InitialConditions":
        a = np.asarray(a, dtype=float).reshape(-1)
        if a.size != 12:
            raise InputError("expected 12 initial conditions")
        return cls(**dict(zip(IC_NAMES, map(float, a))))

    def mirrored_y(self) -> "InitialConditions":
        """Mirror image in the plane y = 0 of PU: polar vectors flip y, axial vectors (angles,
        rates) flip x and z."""
        a = self.as_array()
        sign = np.array([1, -1, 1, 1, -1, 1, -1, 1, -1, -1, 1, -1], dtype=float)
        return InitialConditions.from_array(a * sign)


# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AxialAbsorber:
    """Spring mechanism SMx in series with the friction brake FB: one variable-parameter
    hysteresis element (digest A.10) on the probe stroke ``s`` [m], force [N].

    Forward (loading) branch: backlash 0, common segment to (``common_stroke``,
    ``common_force``), spring stage to (``spring_stroke``, ``spring_force``), a stiff segment of
    slope ``stiff_rate`` up to ``slip_force``, then slip (zero slope). Backward (unloading)
    branch: the same common segment, then a straight line to ``unloading_force`` at the foot of
    the last stiff segment (slope ``stiff_rate``, assumption 5 of A.2), meeting the forward
    branch at the slip point. Tension (negative stroke): a short stiff stop that slips only at
    ``tension_slip_force``.
    """

    common_stroke: float
    common_force: float
    spring_stroke: float
    spring_force: float
    unloading_force: float
    stiff_rate: float
    slip_force: float
    tension_slip_force: float = 5000.0

    def __post_init__(self) -> None:
        p = "probe.axial_absorber."
        if not 0.0 < self.common_stroke < self.spring_stroke:
            raise InputError("need 0 < common_stroke < spring_stroke", key=p + "common_stroke")
        if not 0.0 < self.common_force < self.unloading_force < self.spring_force < self.slip_force:
            raise InputError("need 0 < common_force < unloading_force < spring_force < slip_force",
                             key=p + "slip_force")
        k_spring = (self.spring_force - self.common_force) / (self.spring_stroke - self.common_stroke)
        if self.stiff_rate <= max(k_spring, self.common_force / self.common_stroke):
            raise InputError("must exceed every other slope of the characteristic",
                             key=p + "stiff_rate")
        if self.tension_slip_force <= 0.0:
            raise InputError("must be positive", key=p + "tension_slip_force")

    def branches(self) -> dict[str, np.ndarray]:
        """Tables of the element in the hysteresis-kernel convention (0-based nodes, node 0 the
        end of the backlash): ``qFP, QFP, kFP, qBP, QBP, kBP`` and the same ``*N`` (signed)."""
        k0 = self.common_force / self.common_stroke
        ks = self.stiff_rate
        q_slip = self.spring_stroke + (self.slip_force - self.spring_force) / ks
        qb2 = q_slip - (self.slip_force - self.unloading_force) / ks
        qF = np.array([0.0, self.common_stroke, self.spring_stroke, q_slip])
        QF = np.array([0.0, self.common_force, self.spring_force, self.slip_force])
        qB = np.array([0.0, self.common_stroke, qb2, q_slip])
        QB = np.array([0.0, self.common_force, self.unloading_force, self.slip_force])
        kF = np.append(np.diff(QF) / np.diff(qF), 0.0)
        kB = np.append(np.diff(QB) / np.diff(qB), 0.0)
        kF[0] = kB[0] = k0
        # tension: a stiff stop (slope ks/2) with a small loop, slipping at tension_slip_force;
        # the last backward segment has slope ks (assumption 5)
        qe = 0.5 * self.common_stroke
        Fe = k0 * qe
        ka = 0.5 * ks
        qs = qe + (self.tension_slip_force - Fe) / ka
        qm = 0.5 * (qe + qs)
        qb = qs - 0.25 * (qs - qe)
        Fb = self.tension_slip_force - ks * (qs - qb)
        qFN = -np.array([0.0, qe, qm, qs])
        QFN = -np.array([0.0, Fe, Fe + ka * (qm - qe), self.tension_slip_force])
        qBN = -np.array([0.0, qe, qb, qs])
        QBN = -np.array([0.0, Fe, Fb, self.tension_slip_force])
        kFN = np.append(np.diff(QFN) / np.diff(qFN), 0.0)
        kBN = np.append(np.diff(QBN) / np.diff(qBN), 0.0)
        kFN[0] = kBN[0] = k0
        return dict(qFP=qF, QFP=QF, kFP=kF, qBP=qB, QBP=QB, kBP=kB,
                    qFN=qFN, QFN=QFN, kFN=kFN, qBN=qBN, QBN=QBN, kBN=kBN,
                    k3P=ks, k3N=ks, kind=1.0)


@dataclass(frozen=True)
class LateralAbsorber:
    """Two-stage spring mechanism (SM1 or SM2) with hysteresis, constant parameters
    (digest A.2-A.8), moment [N m] against the housing angle (its tangent) [rad]; symmetric."""

    common_angle: float
    stage1_rate: float
    stage1_angle: float
    stage2_rate: float
    range_angle: float
    stop_rate: float
    unloading_ratio: float = 0.7

    def __post_init__(self) -> None:
        p = "probe.lateral_absorber."
        if not 0.0 < self.common_angle < self.stage1_angle < self.range_angle:
            raise InputError("need 0 < common_angle < stage1_angle < range_angle",
                             key=p + "stage1_angle")
        if min(self.stage1_rate, self.stage2_rate) <= 0.0:
            raise InputError("rates must be positive", key=p + "stage2_rate")
        if self.stop_rate <= max(self.stage1_rate, self.stage2_rate):
            raise InputError("must exceed the stage rates", key=p + "stop_rate")
        if not 0.0 < self.unloading_ratio < 1.0:
            raise InputError("must be in (0, 1)", key=p + "unloading_ratio")

    def branches(self) -> dict[str, np.ndarray]:
        """Tables (see :meth:`AxialAbsorber.branches`); the last backward segment has the stop
        slope (assumption 5)."""
        q0, q1, qr = self.common_angle, self.stage1_angle, self.range_angle
        k1, k2, kmax = self.stage1_rate, self.stage2_rate, self.stop_rate
        F0 = k1 * q0
        F1 = F0 + k1 * (q1 - q0)
        q_top = qr
        q_pre = qr - 0.04 * (qr - q1)  # foot of the last stiff backward segment
        F_pre = F1 + k2 * (q_pre - q1)
        F_top = F1 + k2 * (qr - q1)
        FB1 = F0 + self.unloading_ratio * (F1 - F0)
        FBpre = F_top - kmax * (q_top - q_pre)
        if not (FB1 < FBpre < F_pre):
            FBpre = 0.5 * (FB1 + F_pre)
            q_pre = q_top - (F_top - FBpre) / kmax
            F_pre = F1 + k2 * (q_pre - q1)
        if not (q1 < q_pre < q_top and FB1 < FBpre < F_pre):
            raise InputError("cannot build a valid loop (raise stop_rate or range_angle)",
                             key="probe.lateral_absorber.stop_rate")
        qF = np.array([0.0, q0, q1, q_pre, q_top])
        QF = np.array([0.0, F0, F1, F_pre, F_top])
        qB = qF.copy()
        QB = np.array([0.0, F0, FB1, FBpre, F_top])
        kF = np.append(np.diff(QF) / np.diff(qF), kmax)
        kB = np.append(np.diff(QB) / np.diff(qB), kmax)
        return dict(qFP=qF, QFP=QF, kFP=kF, qBP=qB, QBP=QB, kBP=kB,
                    qFN=-qF, QFN=-QF, kFN=kF.copy(), qBN=-qB, QBN=-QB, kBN=kB.copy(),
                    k3P=kmax, k3N=kmax, kind=0.0)


@dataclass(frozen=True)
class Probe:
    """Probe mechanism of the active unit (digest §8.2, A.1, A.11).

    ``head_mass`` [kg] (effective), ``extended_length`` [m] joint -> head centre at zero
    stroke, ``head_radius`` [m], ``axial_damping`` [N s/m], ``lateral_damping`` (2) [N m s/rad]
    for the dampers in the planes at +45 and -45 degrees.
    """

    head_mass: float
    extended_length: float
    head_radius: float
    axial_damping: float
    lateral_damping: tuple
    axial: AxialAbsorber
    lateral: LateralAbsorber

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Probe":
        p = "probe."
        _check_keys(d, {"head_mass", "extended_length", "head_radius", "axial_damping",
                        "lateral_damping", "axial_absorber", "lateral_absorber", "source"}, p)
        lat = _arr(d, "lateral_damping", p, (2,))
        if np.any(lat < 0):
            raise InputError("must not be negative", key=p + "lateral_damping")
        if "axial_absorber" not in d:
            raise InputError("missing", key=p + "axial_absorber")
        if "lateral_absorber" not in d:
            raise InputError("missing", key=p + "lateral_absorber")
        return cls(head_mass=_num(d, "head_mass", p, positive=True),
                   extended_length=_num(d, "extended_length", p, positive=True),
                   head_radius=_num(d, "head_radius", p, positive=True),
                   axial_damping=_num(d, "axial_damping", p, nonneg=True),
                   lateral_damping=tuple(float(x) for x in lat),
                   axial=_dataclass_from(AxialAbsorber, d["axial_absorber"],
                                         p + "axial_absorber."),
                   lateral=_dataclass_from(LateralAbsorber, d["lateral_absorber"],
                                           p + "lateral_absorber."))


@dataclass(frozen=True)
class Cone:
    """Receiving cone, socket cylinder and bottom: meridian polyline ``(x, rho)`` [m] in PU,
    from the interface plane to the bottom centre (digest §7.2 note, §8.1)."""

    meridian: np.ndarray

    def __post_init__(self) -> None:
        m = np.asarray(self.meridian, dtype=float)
        if m.ndim != 2 or m.shape[1] != 2 or m.shape[0] < 3:
            raise InputError("expected a list of at least 3 [x, rho] pairs", key="cone.meridian")
        seg = np.diff(m, axis=0)
        if np.any(np.hypot(seg[:, 0], seg[:, 1]) <= 0.0):
            raise InputError("repeated vertex", key="cone.meridian")
        if np.any(m[:, 1] < 0.0):
            raise InputError("radius must not be negative", key="cone.meridian")
        if m[-1, 1] != 0.0 or m[-2, 0] != m[-1, 0]:
            raise InputError("must end with the bottom: a last segment in a plane x = const "
                             "down to rho = 0", key="cone.meridian")
        if np.any(seg[:, 0] < 0.0):
            raise InputError("x must not decrease along the polyline", key="cone.meridian")

    @property
    def socket_radius(self) -> float:
        return float(self.meridian[-2, 1])

    def meridian_table(self) -> np.ndarray:
        """Meridian table in the contact-kernel layout (``M_*`` columns)."""
        from models._kernels import contact as ck

        m = np.asarray(self.meridian, dtype=float)
        n = m.shape[0]
        tab = np.zeros((n, ck.M_NCOL))
        tab[:, ck.M_X] = m[:, 0]
        tab[:, ck.M_RHO] = m[:, 1]
        seg = np.diff(m, axis=0)
        ln = np.hypot(seg[:, 0], seg[:, 1])
        tab[:-1, ck.M_TX] = seg[:, 0] / ln
        tab[:-1, ck.M_TRHO] = seg[:, 1] / ln
        tab[:-1, ck.M_LEN] = ln
        tab[0, ck.M_KIND] = ck.KIND_END
        tab[-1, ck.M_KIND] = ck.KIND_END
        for k in range(1, n - 1):
            tp = tab[k - 1, [ck.M_TX, ck.M_TRHO]]
            tn = tab[k, [ck.M_TX, ck.M_TRHO]]
            c = tp[0] * tn[1] - tp[1] * tn[0]
            tab[k, ck.M_KIND] = (ck.KIND_CONVEX if c > 1e-12 else
                                 ck.KIND_CONCAVE if c < -1e-12 else ck.KIND_STRAIGHT)
        return tab


@dataclass(frozen=True)
class Latches:
    """Four head latches (digest §8.1, §8.4) as radially retracting zero-inertia spring
    latches: tip at ``axial_offset`` [m] in the head frame and radius ``tip_radius`` [m]
    (undeflected), reverse segment from ``reverse_inner_radius`` to ``tip_radius``, spring
    ``preload`` [N] and ``stiffness`` [N/m] at the tip, largest retraction ``travel`` [m].

    The paper's latch is a pivoting lever whose exact shape was in a missing figure (Fig. 3c);
    for a small rotation the tip moves radially, so a radial plunger of the same preload and
    rate at the tip is used. The paper's iteration on the latch angle then has a closed form:
    retraction ``delta = dn / (n . e_r)``, contact force ``(f0 + k delta) / (n . e_r)`` along
    the contact normal (the guide takes the rest), computed between steps (digest §8.4).
    """

    axial_offset: float
    tip_radius: float
    reverse_inner_radius: float
    preload: float
    stiffness: float
    travel: float

    def __post_init__(self) -> None:
        if not 0.0 < self.reverse_inner_radius < self.tip_radius:
            raise InputError("need 0 < reverse_inner_radius < tip_radius",
                             key="latches.reverse_inner_radius")
        for k in ("preload", "stiffness"):
            if getattr(self, k) < 0.0:
                raise InputError("must not be negative", key=f"latches.{k}")
        if self.travel <= 0.0:
            raise InputError("must be positive", key="latches.travel")


@dataclass(frozen=True)
class Slots:
    """Four socket slots (windows in the socket wall, digest §8.5 reconstruction): the stop
    at ``stop_x`` [m], narrow half-width ``half_width`` (d_LL1) [m], ``narrow_length`` (d_LX1)
    and ``inclined_end`` (d_LX2) [m] from the stop, incline ``beta`` [rad]."""

    stop_x: float
    half_width: float
    narrow_length: float
    inclined_end: float
    incline: float

    def __post_init__(self) -> None:
        if not 0.0 < self.narrow_length < self.inclined_end:
            raise InputError("need 0 < narrow_length < inclined_end", key="slots.inclined_end")
        if self.half_width <= 0.0:
            raise InputError("must be positive", key="slots.half_width")
        if not 0.0 < self.incline < 1.5:
            raise InputError("must be in (0, 1.5) rad", key="slots.incline")

    def slot_table(self, socket_radius: float) -> np.ndarray:
        """(4, SL_SIZE) in the contact-kernel layout. Slot i lies in the socket wall plane
        tangent at the latch i azimuth (slot 1 at +Y, 2 at +Z, 3 at -Y, 4 at -Z), vertex on
        the stop, ``e_x = +X_PU``, ``e_t`` along the wall, ``e_n`` radial outward."""
        from models._kernels import contact as ck

        out = np.zeros((4, ck.SL_SIZE))
        dirs = [(1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0)]
        for i, (ey, ez) in enumerate(dirs):
            out[i, ck.SL_VX:ck.SL_VX + 3] = [self.stop_x, socket_radius * ey, socket_radius * ez]
            out[i, ck.SL_EX:ck.SL_EX + 3] = [1.0, 0.0, 0.0]
            out[i, ck.SL_ET:ck.SL_ET + 3] = [0.0, -ez, ey]
            out[i, ck.SL_EN:ck.SL_EN + 3] = [0.0, ey, ez]
            out[i, ck.SL_DLL1] = self.half_width
            out[i, ck.SL_DLX1] = self.narrow_length
            out[i, ck.SL_DLX2] = self.inclined_end
            out[i, ck.SL_TANB] = np.tan(self.incline)
            out[i, ck.SL_SINB] = np.sin(self.incline)
            out[i, ck.SL_COSB] = np.cos(self.incline)
        return out


@dataclass(frozen=True)
class ContactLaw:
    """Penalty law (digest §5): ``stiffness`` k_S [N/m], ``damping`` c_D [N s/m] (or
    [N s/m^2] for Hunt-Crossley), ``friction`` k_Fr [-], ``friction_velocity`` v_eps [m/s],
    ``model`` ("linear" = the paper, or "hunt-crossley"), ``max_penetration`` [m]."""

    stiffness: float
    damping: float
    friction: float
    friction_velocity: float
    max_penetration: float
    model: str = "linear"

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "ContactLaw":
        p = "contact."
        _check_keys(d, {"stiffness", "damping", "friction", "friction_velocity", "model",
                        "max_penetration", "source"}, p)
        model = d.get("model", "linear")
        if model not in ("linear", "hunt-crossley"):
            raise InputError("expected 'linear' or 'hunt-crossley'", key=p + "model")
        return cls(stiffness=_num(d, "stiffness", p, positive=True),
                   damping=_num(d, "damping", p, nonneg=True),
                   friction=_num(d, "friction", p, nonneg=True),
                   friction_velocity=_num(d, "friction_velocity", p, 1e-3, positive=True),
                   max_penetration=_num(d, "max_penetration", p, positive=True),
                   model=model)


@dataclass(frozen=True)
class Thrust:
    """Constant thrust of the active vehicle, body axes ``force`` [N], on ``[start, stop)`` [s]."""

    force: np.ndarray = field(default_factory=lambda: np.zeros(3))
    start: float = 0.0
    stop: float = 0.0

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Thrust":
        p = "thrust."
        _check_keys(d, {"force", "start", "stop", "source"}, p)
        return cls(force=_arr(d, "force", p, (3,), np.zeros(3)),
                   start=_num(d, "start", p, 0.0), stop=_num(d, "stop", p, 0.0))


@dataclass(frozen=True)
class Integration:
    """RK4 steps ``dt_contact`` (within ``gap_margin`` [m] of contact) and ``dt_free`` [s],
    ``duration`` [s], ``output_rate`` [Hz]."""

    dt_contact: float = 5e-4
    dt_free: float = 2e-3
    gap_margin: float = 0.05
    duration: float = 20.0
    output_rate: float = 100.0

    def __post_init__(self) -> None:
        for k in ("dt_contact", "dt_free", "duration", "output_rate"):
            if not getattr(self, k) > 0.0:
                raise InputError("must be positive", key=f"integration.{k}")
        if self.gap_margin < 0.0:
            raise InputError("must not be negative", key="integration.gap_margin")
        if self.dt_contact > self.dt_free:
            raise InputError("must not exceed dt_free", key="integration.dt_contact")
        if 1.0 / self.output_rate < self.dt_contact * (1 - 1e-9):
            raise InputError("output interval shorter than dt_contact",
                             key="integration.output_rate")


@dataclass(frozen=True)
class Scenario:
    """A probe-cone docking: two spacecraft, the unit, contact, thrust, integration and
    (optionally) the initial conditions."""

    active: RigidBody
    passive: RigidBody
    probe: Probe
    cone: Cone
    latches: Latches
    slots: Slots
    contact: ContactLaw
    thrust: Thrust = field(default_factory=Thrust)
    integration: Integration = field(default_factory=Integration)
    passive_initial_rate: np.ndarray = field(default_factory=lambda: np.zeros(3))
    initial: InitialConditions | None = None
    name: str = "scenario"

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Scenario":
        """Build from the plain dict of a scenario TOML (SI). Unknown keys are errors."""
        _check_keys(d, {"meta", "active", "passive", "probe", "cone", "latches", "slots",
                        "contact", "thrust", "integration", "initial"}, "")
        for k in ("active", "passive", "probe", "cone", "latches", "slots", "contact"):
            if k not in d:
                raise InputError("missing table", key=k)
        meta = d.get("meta", {})
        _check_keys(meta, {"name", "description", "source"}, "meta.")
        passive = dict(d["passive"])
        rate = _arr(passive, "initial_rate", "passive.", (3,), np.zeros(3))
        passive.pop("initial_rate", None)
        cone_d = d["cone"]
        _check_keys(cone_d, {"meridian", "source"}, "cone.")
        if "meridian" not in cone_d:
            raise InputError("missing", key="cone.meridian")
        try:
            mer = np.asarray(cone_d["meridian"], dtype=float)
        except (TypeError, ValueError):
            raise InputError("expected a list of [x, rho] pairs", key="cone.meridian") from None
        return cls(
            active=RigidBody.from_dict(d["active"], "active"),
            passive=RigidBody.from_dict(passive, "passive"),
            probe=Probe.from_dict(d["probe"]),
            cone=Cone(mer),
            latches=_dataclass_from(Latches, d["latches"], "latches."),
            slots=_dataclass_from(Slots, d["slots"], "slots."),
            contact=ContactLaw.from_dict(d["contact"]),
            thrust=Thrust.from_dict(d.get("thrust", {})),
            integration=_dataclass_from(Integration, d.get("integration", {}), "integration."),
            passive_initial_rate=rate,
            initial=(InitialConditions.from_dict(d["initial"]) if "initial" in d else None),
            name=str(meta.get("name", "scenario")),
        )
