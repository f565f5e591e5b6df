"""The six-leg mechanism that carries the docking ring of the peripheral unit.

The ring is a rigid body on a 6-6 parallel manipulator (Gough-Stewart platform) of six
massless legs, each an absorber (a preloaded linear spring in series with a friction brake,
or a hysteresis element of :mod:`models.hysteresis`), a viscous damper and end stops. The
model, its equations and the choices made are stated in
:mod:`models.peripheral._kernels.mechanism`, whose kernels this module packs arrays for.

Joint layout (APAS-89-like hexapod): three pairs of base joints on a circle of radius
``base_radius`` in the plane ``x = 0`` of AU, pair ``k`` centred at
``pair_phase + 120 deg k`` (angle from ``Y_AU`` towards ``Z_AU``), its two joints
``base_pair_angle`` apart; three pairs of ring joints on a circle of radius ``ring_radius``
in the plane ``x = ring_joint_offset`` of the ring axes, centred half-way between the base
pairs (``+60 deg``), ``ring_pair_angle`` apart. Leg ``2k`` joins the second joint of base
pair ``k`` to the first joint of ring pair ``k``; leg ``2k+1`` the first joint of base pair
``k+1`` to the second joint of ring pair ``k``, so each ring pair is carried by two adjacent
base pairs and the layout is three-fold symmetric about ``X_AU``.

Telemetry: a flight's ring-position channels are the ring pose ``q`` of this model
(``ring_x, ring_y, ring_z`` = ``q1..q3`` [m], ``ring_yaw, ring_pitch, ring_roll`` =
``q4..q6`` [rad]); leg-length channels ``leg_1..leg_6`` are the joint-to-joint lengths
``L_i``, and :func:`pose_from_leg_lengths` converts them to the pose.

Values: the defaults of :data:`ILLUSTRATIVE` are plausible for an APAS-89 / IDSS-class
soft-capture system (ring about 1.4 m across, ring stroke about 0.4 m, attenuation loads of
a few kN) and marked ``illustrative``: no published leg-level data were found.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from models.peripheral._kernels import mechanism as km
from models.errors import InputError, SimulationError
from models.peripheral import schema as S

__all__ = ["Mechanism", "ILLUSTRATIVE", "leg_lengths", "ready_pose", "pose_from_leg_lengths"]

_PREFIX = "mechanism."


@dataclass(frozen=True)
class Mechanism:
    """Docking ring and its six-leg mechanism (SI units).

    Parameters
    ----------
    ring_mass : float
        Mass of the moving ring with its petals and latches ``m_R`` [kg].
    ring_inertia : tuple
        Inertia of the ring about its centre in ring axes ``J_R`` [kg m^2]: three principal
        values (``X`` along the unit axis) or nine entries row-major.
    base_radius, ring_radius : float
        Radii of the base-joint and ring-joint circles [m].
    base_pair_angle, ring_pair_angle : float
        Angle between the two joints of a base pair / ring pair [rad].
    pair_phase : float
        Angle of the centre of base pair 0 from ``Y_AU`` towards ``Z_AU`` [rad].
    ring_joint_offset : float
        Abscissa of the ring-joint plane in ring axes [m] (negative: below the ring plane).
    ring_height : float
        Ring-centre abscissa in AU at the ready position [m]; it also defines the legs' free
        length when ``leg_free_length`` is not given.
    leg_free_length : float or None
        Free length of every leg [m]; ``None``: the leg length at ``(ring_height, 0, ...)``.
    spring_rate : float
        Leg spring rate ``k`` [N/m] (linear absorber).
    spring_preload : float
        Preload ``F0`` of the double-acting spring cartridge [N] (linear absorber).
    preload_stiffness : float
        Stiffness ``k_p`` of the cage that holds the spring at its preload [N/m] (linear
        absorber): below ``F0`` the leg deflects by ``c = F / k_p`` up to
        ``c_p = F0 / k_p``, beyond it the spring moves (law in
        :mod:`models.peripheral._kernels.mechanism`). ``math.inf`` (default): a rigid cage,
        the force step ``sign(c) F0`` at zero compression. The cage stiffness, not ``c_p``,
        is the parameter: it is the hardware's property, it alone sets the cage mode that
        limits the integration step, and with ``F0 = 0`` the cage drops out by itself
        (``c_p = 0``) instead of leaving a dead band ``+-c_p``.
    damping : float
        Leg damper ``c`` [N s/m].
    brake_force_compression, brake_force_extension : float
        Slip forces of the leg brake, ``F_BC`` and ``F_BT`` [N] (linear absorber; must exceed
        the preload). ``math.inf`` for no brake.
    leg_stroke_compression, leg_stroke_extension : float
        Leg travel from the free length to the end stops, shortening / lengthening [m].
    stop_rate : float
        End-stop stiffness [N/m].
    absorber : object or None
        A :class:`models.hysteresis.HysteresisElement` (or ``FrictionBrakeElement``) on the
        leg compression (q [m], Q [N], compression positive) used as every leg's absorber
        instead of the linear spring and brake; ``None``: the linear absorber.
    source : str
        Where the values come from.
    """

    ring_mass: float
    ring_inertia: tuple
    base_radius: float
    ring_radius: float
    base_pair_angle: float
    ring_pair_angle: float
    pair_phase: float
    ring_joint_offset: float
    ring_height: float
    spring_rate: float
    spring_preload: float
    damping: float
    brake_force_compression: float
    brake_force_extension: float
    leg_stroke_compression: float
    leg_stroke_extension: float
    stop_rate: float
    leg_free_length: float | None = None
    preload_stiffness: float = math.inf
    absorber: Any = None
    source: str = "illustrative"

    def __post_init__(self) -> None:
        p = _PREFIX
        for name in ("ring_mass", "base_radius", "ring_radius", "ring_height",
                     "leg_stroke_compression", "leg_stroke_extension", "stop_rate"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0.0):
                raise InputError("must be a finite number > 0", key=p + name)
        for name in ("base_pair_angle", "ring_pair_angle"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and 0.0 <= v < 2.0 * math.pi / 3.0):
                raise InputError("must be in [0, 120 deg) (radians)", key=p + name)
        for name in ("pair_phase", "ring_joint_offset"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v)):
                raise InputError("must be a finite number", key=p + name)
        for name in ("spring_preload", "damping"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0.0):
                raise InputError("must be a finite number >= 0", key=p + name)
        if not (isinstance(self.preload_stiffness, (int, float))
                and self.preload_stiffness > 0.0):
            raise InputError("must be a number > 0 (inf: a rigid cage)",
                             key=p + "preload_stiffness")
        if self.absorber is None:
            if not (math.isfinite(self.spring_rate) and self.spring_rate > 0.0):
                raise InputError("must be a finite number > 0", key=p + "spring_rate")
            for name in ("brake_force_compression", "brake_force_extension"):
                v = getattr(self, name)
                if not (isinstance(v, (int, float)) and v > self.spring_preload):
                    raise InputError("must exceed spring_preload (math.inf: no brake)",
                                     key=p + name)
        J = self.inertia_matrix()
        if not (np.all(np.isfinite(J)) and np.allclose(J, J.T, rtol=1e-12, atol=0.0)):
            raise InputError("must be symmetric and finite", key=p + "ring_inertia")
        ev = np.linalg.eigvalsh(J)
        if ev[0] <= 0.0 or ev[1] + ev[0] < ev[2] * (1.0 - 1e-12):
            raise InputError("must be positive definite and satisfy the triangle inequality",
                             key=p + "ring_inertia")
        if self.leg_free_length is not None and not (
                math.isfinite(self.leg_free_length) and self.leg_free_length > 0.0):
            raise InputError("must be a finite number > 0", key=p + "leg_free_length")
        if self.leg_stroke_compression >= self.free_lengths().min():
            raise InputError("must be shorter than the leg free length",
                             key=p + "leg_stroke_compression")

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, d: Mapping[str, Any], prefix: str = _PREFIX) -> "Mechanism":
        """Build from a plain dict in SI units (keys = field names; ``absorber`` a hysteresis
        element table for :func:`models.hysteresis.element_from_dict`). Unknown or missing
        keys and bad values raise :class:`InputError` naming the key."""
        if not isinstance(d, Mapping):
            raise InputError("expected a table", key=prefix.rstrip("."))
        names = S.MECHANISM.names()
        for k in d:
            if k not in names:
                raise InputError("unknown key", key=prefix + str(k))
        kw: dict[str, Any] = {}
        optional = {"leg_free_length", "preload_stiffness", "absorber", "source"}
        for f in fields(cls):
            if f.name not in d:
                if f.name in optional:
                    continue
                raise InputError("missing", key=prefix + f.name)
            v = d[f.name]
            if f.name == "source":
                kw[f.name] = str(v)
            elif f.name == "absorber":
                from models.hysteresis import element_from_dict
                try:
                    kw[f.name] = element_from_dict(v)
                except InputError as exc:
                    raise InputError(exc.what, key=prefix + "absorber."
                                     + (exc.key or "")) from None
            elif f.name == "ring_inertia":
                try:
                    a = tuple(float(x) for x in v)
                except (TypeError, ValueError):
                    raise InputError("expected 3 or 9 numbers", key=prefix + f.name) from None
                if len(a) not in (3, 9):
                    raise InputError("expected 3 or 9 numbers", key=prefix + f.name)
                kw[f.name] = a
            else:
                try:
                    kw[f.name] = float(v)
                except (TypeError, ValueError):
                    raise InputError("expected a number", key=prefix + f.name) from None
        try:
            return cls(**kw)
        except InputError as exc:
            if exc.key and exc.key.startswith(_PREFIX) and prefix != _PREFIX:
                exc.key = prefix + exc.key[len(_PREFIX):]
            raise

    # -- derived geometry --------------------------------------------------------------------
    def inertia_matrix(self) -> np.ndarray:
        """``J_R`` (3x3) [kg m^2], ring axes."""
        a = np.asarray(self.ring_inertia, dtype=float)
        if a.size == 3:
            return np.diag(a)
        if a.size == 9:
            return a.reshape(3, 3)
        raise InputError("expected 3 or 9 numbers", key=_PREFIX + "ring_inertia")

    def joint_angles(self) -> tuple[np.ndarray, np.ndarray]:
        """Angles of leg ``i``'s base joint and ring joint, from ``Y`` towards ``Z`` [rad]."""
        tb = np.empty(6)
        tr = np.empty(6)
        hb = 0.5 * self.base_pair_angle
        hr = 0.5 * self.ring_pair_angle
        third = 2.0 * math.pi / 3.0
        for k in range(3):
            phi = self.pair_phase + third * k
            tb[2 * k] = phi + hb
            tr[2 * k] = phi + 0.5 * third - hr
            tb[2 * k + 1] = phi + third - hb
            tr[2 * k + 1] = phi + 0.5 * third + hr
        return tb, tr

    def joints(self) -> tuple[np.ndarray, np.ndarray]:
        """Base joints ``b_i`` in AU and ring joints ``rho_i`` in ring axes, (6, 3) [m]."""
        tb, tr = self.joint_angles()
        base = np.column_stack([np.zeros(6), self.base_radius * np.cos(tb),
                                self.base_radius * np.sin(tb)])
        ring = np.column_stack([np.full(6, self.ring_joint_offset),
                                self.ring_radius * np.cos(tr), self.ring_radius * np.sin(tr)])
        return base, ring

    def nominal_pose(self) -> np.ndarray:
        """``(ring_height, 0, 0, 0, 0, 0)`` [m, rad]: the starting guess of the ready pose."""
        return np.array([self.ring_height, 0.0, 0.0, 0.0, 0.0, 0.0])

    def free_lengths(self) -> np.ndarray:
        """Leg free lengths ``L0_i`` (6) [m]."""
        if self.leg_free_length is not None:
            return np.full(6, float(self.leg_free_length))
        base, ring = self.joints()
        return np.linalg.norm(self.nominal_pose()[:3] + ring - base, axis=1)

    def preload_compliance(self) -> float:
        """Cage deflection at the preload ``c_p = F0 / k_p`` [m]; 0 for a rigid cage, for
        ``F0 = 0`` and for a hysteresis absorber."""
        if self.absorber is not None or math.isinf(self.preload_stiffness):
            return 0.0
        return self.spring_preload / self.preload_stiffness

    # -- packing ------------------------------------------------------------------------------
    def pack(self) -> np.ndarray:
        """The parameter array ``MP`` (``MP_SIZE``, layout ``MP_*`` of
        :mod:`models.peripheral._kernels.mechanism`)."""
        mp = np.zeros(km.MP_SIZE)
        J = self.inertia_matrix()
        mp[km.MP_MASS] = self.ring_mass
        mp[km.MP_INV_MASS] = 1.0 / self.ring_mass
        mp[km.MP_J:km.MP_J + 9] = J.ravel()
        mp[km.MP_JINV:km.MP_JINV + 9] = np.linalg.inv(J).ravel()
        base, ring = self.joints()
        mp[km.MP_BASE:km.MP_BASE + 18] = base.ravel()
        mp[km.MP_RING:km.MP_RING + 18] = ring.ravel()
        L0 = self.free_lengths()
        mp[km.MP_L0:km.MP_L0 + 6] = L0
        mp[km.MP_K] = self.spring_rate
        mp[km.MP_F0] = self.spring_preload
        mp[km.MP_C] = self.damping
        # an infinite threshold is stored as a huge finite one (no brake, no inf arithmetic)
        fbc = min(self.brake_force_compression, 1e300)
        fbt = min(self.brake_force_extension, 1e300)
        mp[km.MP_FBC] = fbc
        mp[km.MP_FBT] = fbt
        if self.absorber is None:
            cp = self.preload_compliance()
            if cp > 0.0:
                mp[km.MP_CP] = cp
                mp[km.MP_KP] = self.preload_stiffness
            mp[km.MP_CSLIP_C] = cp + (fbc - self.spring_preload) / self.spring_rate
            mp[km.MP_CSLIP_T] = cp + (fbt - self.spring_preload) / self.spring_rate
            mp[km.MP_KIND] = km.KIND_LINEAR
        else:
            mp[km.MP_CSLIP_C] = mp[km.MP_CSLIP_T] = 1e300
            mp[km.MP_KIND] = km.KIND_HYSTERESIS
        mp[km.MP_LMIN] = L0.min() - self.leg_stroke_compression
        mp[km.MP_LMAX] = L0.max() + self.leg_stroke_extension
        mp[km.MP_KSTOP] = self.stop_rate
        return mp

    def absorber_arrays(self):
        """``(table, toff, hist_i, hist_f)`` of the legs' hysteresis elements (one per leg,
        ``models.hysteresis.pack_elements``), or four empty arrays for the linear absorber."""
        if self.absorber is None:
            return (np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64),
                    np.zeros(0))
        from models.hysteresis import pack_elements
        pe = pack_elements([self.absorber] * 6)
        hi, hf = pe.fresh_state()
        return pe.table, pe.toff, hi, hf

    @staticmethod
    def fresh_leg_state() -> np.ndarray:
        """Initial per-leg discrete state ``LS`` (no brake shift, no brake work)."""
        return np.zeros(km.NL * km.LS_SIZE)


# --------------------------------------------------------------------------------------------
ILLUSTRATIVE: dict[str, Any] = {
    # ring with petals and latches: ~40 kg, a 1.4 m ring (thin-ring inertia m r^2, m r^2/2,
    # raised for the petals); illustrative
    "ring_mass": 40.0,
    "ring_inertia": [22.0, 12.0, 12.0],
    # hexapod: base joints on 0.70 m, ring joints on 0.62 m, pairs 20 deg apart; illustrative
    "base_radius": 0.70,
    "ring_radius": 0.62,
    "base_pair_angle": math.radians(20.0),
    "ring_pair_angle": math.radians(20.0),
    "pair_phase": math.radians(-90.0),
    "ring_joint_offset": -0.05,
    # ready position 0.55 m above the base-joint plane; the legs' 0.20 m compression travel
    # gives the ring about 0.4 m of axial stroke (APAS-89 class); illustrative
    "ring_height": 0.55,
    "spring_rate": 1.0e4,
    "spring_preload": 100.0,
    "damping": 200.0,
    "brake_force_compression": 800.0,
    "brake_force_extension": 800.0,
    "leg_stroke_compression": 0.20,
    "leg_stroke_extension": 0.05,
    "stop_rate": 2.0e6,
    "source": "illustrative: plausible APAS-89 / IDSS-class values, no published leg data",
}


# --------------------------------------------------------------------------------------------
def leg_lengths(mech: Mechanism, q) -> np.ndarray:
    """Inverse kinematics: the six leg lengths [m] of the ring pose ``q`` (6) [m, rad]."""
    mp = mech.pack()
    kw = np.zeros(km.KW_SIZE)
    km.leg_kinematics(mp, np.asarray(q, dtype=float), np.zeros(6), kw)
    return kw[km.KW_L:km.KW_L + 6].copy()


def pose_from_leg_lengths(mech: Mechanism, lengths, guess=None, *, tol: float = 1e-12,
                          max_iter: int = 50) -> np.ndarray:
    """Forward kinematics: ring pose(s) [m, rad] from leg lengths [m].

    ``lengths`` is (6,) or (n, 6) (a telemetry history: each sample starts from the previous
    solution). ``guess`` (6,) starts the first sample (default: the nominal ready pose).
    Raises :class:`SimulationError` naming the sample when Newton's method does not converge
    to ``tol`` [m] (lengths outside the workspace, or a singular pose)."""
    L = np.asarray(lengths, dtype=float)
    one = L.ndim == 1
    L2 = np.atleast_2d(L)
    if L2.shape[1] != 6:
        raise InputError("expected six leg lengths per sample", key="lengths")
    mp = mech.pack()
    fkw = np.zeros(km.FK_SIZE)
    q = (mech.nominal_pose() if guess is None else np.asarray(guess, dtype=float)).copy()
    out = np.empty((L2.shape[0], 6))
    for n in range(L2.shape[0]):
        row = np.ascontiguousarray(L2[n])
        status, it, res = km.forward_kinematics(mp, row, q, tol, max_iter, fkw)
        if status != km.FK_OK:
            why = "singular Jacobian" if status == km.FK_SINGULAR else "no convergence"
            raise SimulationError(f"forward kinematics of sample {n}: {why} after {it} "
                                  f"iterations (largest length residual {res:.3g} m)")
        out[n] = q
    return out[0] if one else out


def ready_pose(mech: Mechanism) -> np.ndarray:
    """The ring pose [m, rad] at which every leg is at its free length (the ready position):
    forward kinematics of the free lengths from the nominal pose."""
    return pose_from_leg_lengths(mech, mech.free_lengths(), mech.nominal_pose())
