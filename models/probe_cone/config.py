"""Probe-cone docking configuration: frozen dataclasses built from plain (SI) dicts.

The scenario TOML (see ``presets/reference.toml``) has the tables ``[meta]``, ``[active]``,
``[passive]``, ``[probe]`` (with ``[probe.axial_absorber]`` and ``[probe.lateral_absorber]``),
``[cone]``, ``[latches]``, ``[slots]``, optional ``[capture_sensors]``, ``[limiter_pads]``,
``[alignment_rollers]``, ``[contact]``, ``[thrust]``, ``[integration]`` and an
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

from models.probe_cone._kernels import layout as _kl
from models.errors import InputError
from models.limits import check_keys, check_range, number, vector
from models.rigid_body import RigidBody
from models.probe_cone import schema as S
from models.unit import IC_NAMES, ContactLaw, InitialConditions, Thrust

__all__ = [
    "IC_NAMES",
    "InitialConditions",
    "AxialAbsorber",
    "LateralAbsorber",
    "TorsionAbsorber",
    "Probe",
    "LimiterPads",
    "AlignmentRollers",
    "housing_primitives",
    "Cone",
    "Latches",
    "CaptureSensors",
    "Slots",
    "ContactLaw",
    "Thrust",
    "Integration",
    "IMPLICIT_FRICTION",
    "Scenario",
]



# --------------------------------------------------------------------------------------------
# dict helpers
_check_keys = check_keys
_num = number
_arr = vector


def _dataclass_from(cls, table, d: Mapping[str, Any], prefix: str, **special):
    """Numbers for every float field of ``cls`` (defaults from the dataclass) from ``d``,
    whose keys are those the declaration ``table`` (:mod:`models.probe_cone.schema`)
    names."""
    _check_keys(d, table.names(), prefix)
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


def _element(b: dict, name: str, dof: str, *, brake: bool):
    """Build a hysteresis element of :mod:`models.hysteresis` from branch tables; its own
    validation (A.3 consistency constraints) applies, and an error names the absorber."""
    from models.hysteresis import element_from_dict

    def side(sfx: str) -> dict:
        d = {"forward": {"q": list(b["qF" + sfx]), "Q": list(b["QF" + sfx])},
             "backward": {"q": list(b["qB" + sfx]), "Q": list(b["QB" + sfx])}}
        if brake:
            d["k3"] = float(b["k3" + sfx])
        else:
            d["k_max"] = float(b["k3" + sfx])
        return d

    d = {"name": name, "variant": "friction_brake" if brake else "constant", "dof": dof,
         "positive": side("P"), "negative": side("N")}
    try:
        return element_from_dict(d)
    except InputError as exc:
        raise InputError(f"absorber characteristic rejected by the hysteresis model: {exc}",
                         key=f"probe.{name}") from None


# --------------------------------------------------------------------------------------------
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
    branch at the slip point. Tension (negative element deformation): a stiff stop, slope
    ``stiff_rate / 2`` after the common segment, that slips only at ``tension_slip_force``.

    The element deformation is the stroke minus the accumulated brake slip: after the brake
    slipped by ``delta`` in compression the whole characteristic, tension side included, is
    shifted by ``delta`` (digest A.10 step 3, the brake is a friction clutch in a rigid
    transmission), the spring returns the probe only to ``delta``, and pulling the probe out
    from there (the vehicles rebounding apart after capture, latches on their slot stops)
    loads the tension side at POSITIVE stroke. On the reference nominal flight that is the
    -2.8 kN rebound load around 10-15 mm stroke at t = 5.0-5.2 s: a real load, not a stop at
    the wrong place (test ``test_axial_tension_after_brake_slip_is_the_shifted_tension_branch``).
    With the reference values the "stop" is soft: it reaches ``tension_slip_force`` only
    ``(tension_slip_force - F_e) / (stiff_rate / 2)`` ~ 49 mm beyond its zero.
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

    def element(self):
        """The :class:`models.hysteresis.FrictionBrakeElement` (validated by that module)."""
        return _element(self.branches(), "axial_absorber", "linear", brake=True)


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

    _key = "probe.lateral_absorber"

    def __post_init__(self) -> None:
        p = self._key + "."
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
                             key=self._key + ".stop_rate")
        qF = np.array([0.0, q0, q1, q_pre, q_top])
        QF = np.array([0.0, F0, F1, F_pre, F_top])
        qB = qF.copy()
        QB = np.array([0.0, F0, FB1, FBpre, F_top])
        kF = np.append(np.diff(QF) / np.diff(qF), kmax)
        kB = np.append(np.diff(QB) / np.diff(qB), kmax)
        return dict(qFP=qF, QFP=QF, kFP=kF, qBP=qB, QBP=QB, kBP=kB,
                    qFN=-qF, QFN=-QF, kFN=kF.copy(), qBN=-qB, QBN=-QB, kBN=kB.copy(),
                    k3P=kmax, k3N=kmax, kind=0.0)

    def element(self, name: str = "lateral_absorber"):
        """The :class:`models.hysteresis.HysteresisElement` (validated by that module)."""
        return _element(self.branches(), name, "angular", brake=False)


@dataclass(frozen=True)
class TorsionAbsorber(LateralAbsorber):
    """Roll (torsion) deformation of the whole mechanism: a constant-parameter hysteresis
    element (digest A.11), moment [N m] against the torsion angle [rad]; same table form as
    :class:`LateralAbsorber`."""

    _key = "probe.torsion_absorber"

    def element(self, name: str = "torsion_absorber"):
        return _element(self.branches(), name, "angular", brake=False)


@dataclass(frozen=True)
class Probe:
    """Probe mechanism of the active unit (digest §8.2, A.1, A.11).

    ``head_mass`` [kg] (effective), ``extended_length`` [m] joint -> head centre at zero
    stroke, ``head_radius`` [m], ``axial_damping`` [N s/m], ``lateral_damping`` (2) [N m s/rad]
    for the dampers in the planes at +45 and -45 degrees (acting on the housing angles),
    ``spin_inertia`` [kg m^2] of head and probe about the probe axis (torsion DOF),
    ``torsion_damping`` [N m s/rad] (structural), the absorber characteristics (axial spring +
    brake, lateral, torsion), and the two link DOF groups of digest §8.2:

    * movable housing (link 1, angles q1, q2 on the universal joint): ``housing_inertia``
      J_M [kg m^2], its transverse moment of inertia about the joint (its mass is lumped into
      the active vehicle: centre of mass taken at the joint);
    * probe bending (link 2, angles q3, q4 relative to the housing) about the output support
      bearing B at ``bearing_offset`` L_M [m] from the joint along the housing axis:
      isotropic ``bending_stiffness`` k_b [N m/rad] and structural ``bending_damping``
      c_b [N m s/rad] on the relative transverse angular rate.
    """

    head_mass: float
    extended_length: float
    head_radius: float
    axial_damping: float
    lateral_damping: tuple
    axial: AxialAbsorber
    lateral: LateralAbsorber
    torsion: TorsionAbsorber
    spin_inertia: float = 0.1
    torsion_damping: float = 0.0
    bearing_offset: float = 0.3
    housing_inertia: float = 2.0
    bending_stiffness: float = 5.0e4
    bending_damping: float = 50.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.bearing_offset < self.extended_length - self.head_radius:
            raise InputError("need 0 <= bearing_offset < extended_length - head_radius",
                             key="probe.bearing_offset")
        if self.housing_inertia <= 0.0:
            raise InputError("must be positive", key="probe.housing_inertia")
        if self.bending_stiffness <= 0.0:
            raise InputError("must be positive", key="probe.bending_stiffness")
        if self.bending_damping < 0.0:
            raise InputError("must not be negative", key="probe.bending_damping")

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Probe":
        p = "probe."
        _check_keys(d, S.PROBE.names(), p)
        lat = _arr(d, "lateral_damping", p, (2,))
        if np.any(lat < 0):
            raise InputError("must not be negative", key=p + "lateral_damping")
        if "axial_absorber" not in d:
            raise InputError("missing", key=p + "axial_absorber")
        for k in ("lateral_absorber", "torsion_absorber"):
            if k not in d:
                raise InputError("missing", key=p + k)
        return cls(head_mass=_num(d, "head_mass", p, positive=True),
                   extended_length=_num(d, "extended_length", p, positive=True),
                   head_radius=_num(d, "head_radius", p, positive=True),
                   axial_damping=_num(d, "axial_damping", p, nonneg=True),
                   lateral_damping=tuple(float(x) for x in lat),
                   axial=_dataclass_from(AxialAbsorber, S.AXIAL_ABSORBER, d["axial_absorber"],
                                         p + "axial_absorber."),
                   lateral=_dataclass_from(LateralAbsorber, S.LATERAL_ABSORBER,
                                           d["lateral_absorber"],
                                           p + "lateral_absorber."),
                   torsion=_dataclass_from(TorsionAbsorber, S.TORSION_ABSORBER,
                                           d["torsion_absorber"],
                                           p + "torsion_absorber."),
                   spin_inertia=_num(d, "spin_inertia", p, positive=True),
                   torsion_damping=_num(d, "torsion_damping", p, 0.0, nonneg=True),
                   bearing_offset=_num(d, "bearing_offset", p, nonneg=True),
                   housing_inertia=_num(d, "housing_inertia", p, positive=True),
                   bending_stiffness=_num(d, "bending_stiffness", p, positive=True),
                   bending_damping=_num(d, "bending_damping", p, nonneg=True))


def _points(d: Mapping[str, Any], key: str, prefix: str, width: int) -> np.ndarray:
    """A list of rows of ``width`` numbers (an empty list is allowed)."""
    if key not in d:
        raise InputError("missing", key=prefix + key)
    v = d[key]
    if not isinstance(v, (list, tuple)):
        raise InputError(f"expected a list of [{width} numbers] rows", key=prefix + key)
    if len(v) == 0:
        return np.zeros((0, width))
    a = _arr(d, key, prefix, ())
    if a.ndim != 2 or a.shape[1] != width:
        raise InputError(f"expected a list of rows of {width} numbers, got shape {a.shape}",
                         key=prefix + key)
    return a


@dataclass(frozen=True)
class LimiterPads:
    """Pads of the relative-rotation limiter on the movable housing (digest §8.1, §8.3):
    ``segments`` (n, 6) [m], each ``[x1, y1, z1, x2, y2, z2]`` in the housing frame
    ``X_M Y_M Z_M`` (origin at the joint, ``X_M`` along the housing axis towards the head).
    The segment endpoints are points (``R_S = 0``) against every face and rim of the
    receiving cone (digest 7.1-7.4); the segments against the mouth circle (7.6)."""

    segments: np.ndarray = field(default_factory=lambda: np.zeros((0, 6)))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "LimiterPads":
        _check_keys(d, S.LIMITER_PADS.names(), "limiter_pads.")
        seg = _points(d, "segments", "limiter_pads.", 6)
        if seg.shape[0] and np.any(np.linalg.norm(seg[:, 3:] - seg[:, :3], axis=1) <= 0.0):
            raise InputError("segment of zero length", key="limiter_pads.segments")
        return cls(segments=seg)


@dataclass(frozen=True)
class AlignmentRollers:
    """Rollers of the alignment levers (digest §8.1, §8.2 link 3): spheres of ``radius`` [m]
    with ``centres`` (n, 3) [m] in the housing frame. The lever kinematics is not in the
    papers (digest §8.2, dev note); here the levers are **fixed** in their docking position
    (the rollers move with the housing): an illustrative choice, valid before the retraction
    drive moves the levers."""

    centres: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    radius: float = 0.0

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "AlignmentRollers":
        p = "alignment_rollers."
        _check_keys(d, S.ALIGNMENT_ROLLERS.names(), p)
        c = _points(d, "centres", p, 3)
        r = _num(d, "radius", p, positive=True)
        return cls(centres=c, radius=r)


def housing_primitives(pads: "LimiterPads", rollers: "AlignmentRollers") -> np.ndarray:
    """Packed housing contact primitives (kernel layout ``HC_*``) and their reach [m]."""
    from models.probe_cone._kernels import layout as L

    n = pads.segments.shape[0] + rollers.centres.shape[0]
    hc = np.zeros((n, L.HC_SIZE))
    k = 0
    for s in pads.segments:
        hc[k, L.HC_KIND] = L.HC_PAD
        hc[k, L.HC_P1:L.HC_P1 + 3] = s[:3]
        hc[k, L.HC_P2:L.HC_P2 + 3] = s[3:]
        k += 1
    for c in rollers.centres:
        hc[k, L.HC_KIND] = L.HC_ROLLER
        hc[k, L.HC_P1:L.HC_P1 + 3] = c
        hc[k, L.HC_R] = rollers.radius
        k += 1
    return np.ascontiguousarray(hc)


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

    def surface(self):
        """The :class:`models.contact.primitives.SurfaceOfRevolution` of the contact library."""
        from models.contact.primitives import SurfaceOfRevolution

        return SurfaceOfRevolution(meridian=tuple(map(tuple, np.asarray(self.meridian))))

    def meridian_table(self) -> np.ndarray:
        """Meridian table in the contact-kernel layout (``M_*`` columns)."""
        return np.ascontiguousarray(self.surface().packed)


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
class CaptureSensors:
    """The two head capture sensors (digest §8.1, §8.4), in the plane ``X_H Z_H`` at ``+Z_H``
    and ``-Z_H``: zero-inertia spring items like the latches (tip at ``axial_offset`` [m],
    ``tip_radius`` [m], ``preload`` [N], ``stiffness`` [N/m], ``travel`` [m]) before capture;
    after capture they rub on the socket wall with a total axial ``friction_force`` [N] (the
    paper's experimentally determined constant). The paper's sensor contact surface is a
    circle of radius R_DSG on a pivoting link; its tip point is used here, as for the latches.
    Absent table: no sensors."""

    axial_offset: float = 0.0
    tip_radius: float = 0.0
    preload: float = 0.0
    stiffness: float = 0.0
    travel: float = 0.01
    friction_force: float = 0.0

    def __post_init__(self) -> None:
        for k in ("tip_radius", "preload", "stiffness", "friction_force"):
            if getattr(self, k) < 0.0:
                raise InputError("must not be negative", key=f"capture_sensors.{k}")
        if self.travel <= 0.0:
            raise InputError("must be positive", key="capture_sensors.travel")


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
        """(4, SL_SIZE) packed :class:`models.contact.primitives.Slot` s. Slot i lies in the
        socket-wall plane tangent at the latch i azimuth (slot 1 at +Y, 2 at +Z, 3 at -Y,
        4 at -Z), vertex on the stop, ``axial = +X_PU``, ``lateral`` along the wall, so the
        plane normal (axial x lateral) points radially outward."""
        from models.contact.primitives import Slot

        out = []
        for ey, ez in [(1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0)]:
            sl = Slot(vertex=(self.stop_x, socket_radius * ey, socket_radius * ez),
                      axial=(1.0, 0.0, 0.0), lateral=(0.0, ez, -ey), d_ll1=self.half_width,
                      d_lx1=self.narrow_length, d_lx2=self.inclined_end, beta=self.incline)
            out.append(sl.packed)
        return np.ascontiguousarray(np.stack(out))


@dataclass(frozen=True)
class Integration:
    """RK4 steps ``dt_contact`` (within ``gap_margin`` [m] of contact) and ``dt_free`` [s],
    ``dt_captured`` [s] after capture (default ``dt_contact``), ``duration`` [s],
    ``output_rate`` [Hz], and ``implicit_friction``: where the head's contact friction is
    integrated implicitly (linearized, :func:`models.probe_cone._kernels.stage._implicit_head`)
    instead of explicitly: ``"never"`` (default), ``"captured"`` (the steps after capture) or
    ``"always"``.

    Why: the regularized friction's viscous slope ``k_Fr f_n / v_eps`` on the light head
    bounds an explicit RK4 step (``h k_Fr f_n / (v_eps m_H) < 2.8``); after capture the head
    sits on the socket bottom and the latch stops with normal forces up to ~3 kN, so the
    explicit step cannot grow and, where it is near the bound, the friction chatters, before
    or after capture (3 of 41 envelope draws differ by 1.4 to 51 noise sigmas rms from a
    0.25 ms reference at 1 ms). The implicit treatment removes that bound and the chatter
    (none of those draws above 0.5 sigma at 1 ms); it does not make a longer step after
    capture as accurate (2 ms: median 0.09 sigma against 0.07, and runs whose output
    interval is not a multiple of the step may fail on hysteresis transitions). Figures:
    ``benchmarks/accuracy_docking.py``, ``docs/design/probe_cone_step.rst`` (the accuracy
    table)."""

    dt_contact: float = 5e-4
    dt_free: float = 2e-3
    gap_margin: float = 0.05
    duration: float = 20.0
    output_rate: float = 100.0
    dt_captured: float | None = None
    implicit_friction: str = "never"

    def __post_init__(self) -> None:
        if self.dt_captured is None:
            object.__setattr__(self, "dt_captured", self.dt_contact)
        for k in ("dt_contact", "dt_free", "dt_captured", "duration", "output_rate"):
            if not getattr(self, k) > 0.0:
                raise InputError("must be positive", key=f"integration.{k}")
        if self.gap_margin < 0.0:
            raise InputError("must not be negative", key="integration.gap_margin")
        if self.dt_contact > self.dt_free:
            raise InputError("must not exceed dt_free", key="integration.dt_contact")
        if self.dt_captured > self.dt_free:
            raise InputError("must not exceed dt_free", key="integration.dt_captured")
        if 1.0 / self.output_rate < self.dt_contact * (1 - 1e-9):
            raise InputError("output interval shorter than dt_contact",
                             key="integration.output_rate")
        if self.implicit_friction not in IMPLICIT_FRICTION:
            raise InputError(f"expected one of {', '.join(map(repr, IMPLICIT_FRICTION))}, got "
                             f"{self.implicit_friction!r}", key="integration.implicit_friction")

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Integration":
        p = "integration."
        _check_keys(d, S.INTEGRATION.names(), p)
        kw = {k: _num(d, k, p, getattr(cls, k))
              for k in ("dt_contact", "dt_free", "gap_margin", "duration", "output_rate")}
        if "dt_captured" in d:
            kw["dt_captured"] = _num(d, "dt_captured", p)
        mode = d.get("implicit_friction", "never")
        if not isinstance(mode, str):
            raise InputError(f"expected one of {', '.join(map(repr, IMPLICIT_FRICTION))}, got "
                             f"{mode!r}", key=p + "implicit_friction")
        return cls(**kw, implicit_friction=mode)


#: values of ``[integration] implicit_friction`` and their kernel codes (``P_IMPLICIT``)
IMPLICIT_FRICTION = {"never": _kl.IMPLICIT_NEVER, "always": _kl.IMPLICIT_ALWAYS,
                     "captured": _kl.IMPLICIT_CAPTURED}


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
    sensors: CaptureSensors = field(default_factory=CaptureSensors)
    pads: LimiterPads = field(default_factory=LimiterPads)
    rollers: AlignmentRollers = field(default_factory=AlignmentRollers)
    thrust: Thrust = field(default_factory=Thrust)
    integration: Integration = field(default_factory=Integration)
    passive_initial_rate: np.ndarray = field(default_factory=lambda: np.zeros(3))
    initial: InitialConditions | None = None
    name: str = "scenario"

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Scenario":
        """Build from the plain dict of a scenario TOML (SI). Unknown keys are errors."""
        _check_keys(d, S.SCENARIO.names() | {"envelope"}, "")
        if d.get("unit", "probe_cone") != "probe_cone":
            raise InputError(f"a probe-cone scenario has unit = \"probe_cone\", not "
                             f"{d['unit']!r}", key="unit")
        for k in ("active", "passive", "probe", "cone", "latches", "slots", "contact"):
            if k not in d:
                raise InputError("missing table", key=k)
        meta = d.get("meta", {})
        _check_keys(meta, S.META.names(), "meta.")
        passive = dict(d["passive"])
        rate = _arr(passive, "initial_rate", "passive.", (3,), np.zeros(3))
        passive.pop("initial_rate", None)
        cone_d = d["cone"]
        _check_keys(cone_d, S.CONE.names(), "cone.")
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
            latches=_dataclass_from(Latches, S.LATCHES, d["latches"], "latches."),
            slots=_dataclass_from(Slots, S.SLOTS, d["slots"], "slots."),
            sensors=_dataclass_from(CaptureSensors, S.CAPTURE_SENSORS,
                                    d.get("capture_sensors", {}),
                                    "capture_sensors."),
            pads=(LimiterPads.from_dict(d["limiter_pads"]) if "limiter_pads" in d
                  else LimiterPads()),
            rollers=(AlignmentRollers.from_dict(d["alignment_rollers"])
                     if "alignment_rollers" in d else AlignmentRollers()),
            contact=ContactLaw.from_dict(d["contact"]),
            thrust=Thrust.from_dict(d.get("thrust", {})),
            integration=Integration.from_dict(d.get("integration", {})),
            passive_initial_rate=rate,
            initial=(InitialConditions.from_dict(d["initial"]) if "initial" in d else None),
            name=str(meta.get("name", "scenario")),
        )
