"""Geometry tables of the peripheral (androgynous ring) unit: petals, stops, latches and
capture sensors of both rings, built once from the ring design (digest 9.1, 9.3-9.8).

Readable numpy, run at initialisation; the packed arrays of :class:`Geometry` are what the
unit's kernel and the contact detectors of :mod:`models._kernels.contact_segments` take
(layouts: :mod:`models.peripheral._kernels.layout`).

Frames
------
* **Active ring axes** ``X_A Y_A Z_A``: origin at the ring centre, ``X_A`` along the ring axis
  towards the mating unit, ring plane ``x = 0``, petals protruding towards ``+X_A``. These are
  the ring design's own axes (:mod:`models.peripheral.config`).
* **Passive unit axes** ``X_PU Y_PU Z_PU`` (digest section 2): ``X_PU`` into the passive craft,
  passive ring plane ``x = 0``, passive petals protruding towards ``-X_PU``.

Androgynous symmetry
--------------------
The digest (9.1) calls the ring "symmetric about ``Z`` and anti-symmetric about ``Y``". The
reading used here: the passive ring is the same design turned over by a half-turn about its
``Z`` axis, so that it faces the active ring. In components,

.. math::  \\mathbf p^{(PU)} = \\mathbf T\\,\\mathbf p^{(own)},\\qquad
           \\mathbf T = \\mathrm{diag}(-1, -1, +1) = \\mathbf R_z(\\pi)

for points and vectors alike (``T`` is a proper rotation, ``det T = +1``): ``Z`` is kept
(symmetric), ``Y`` reversed (anti-symmetric), and ``X`` reversed, so the passive petals face
``-X_PU``. An azimuth ``phi`` (from ``Y`` towards ``Z``) becomes ``pi - phi``. With petal 1 on
``+Y`` (``first_petal_azimuth = 0``) the active petals sit at 0, 120, 240 deg and the passive
ones at 180, 60, 300 deg: each passive petal lands in an active gap, and each passive stop (in
the gaps of its own ring) in front of an active petal. When the rings are coaxial and aligned,
ring axes and PU coincide (``A_PAU = I``). :func:`passive_from_active` applies ``T`` to any
active table; the builder constructs the passive tables on their own (facing ``-1``, mirrored
azimuths) and the tests compare the two.

Petal (digest 9.1, with the dev note's generator construction)
--------------------------------------------------------------
In a ring's own axes, petal ``k`` is centred at azimuth ``phi_k``; its conical surface is
``rho(x) = R_R - x tan(alpha)`` for ``0 <= x <= h``. ``B1, B2`` lie on the ``R_R`` circle in
the ring plane at ``phi_k -+ span/2``; the side-face apexes ``A1, A2`` on the cone at height
``h`` at ``phi_k -+ top_span/2``; the lower points ``E1, E2`` from the design. Side face ``j`` is
the plane through ``B_j, A_j, E_j``. Tables:

* **upper boundary** ``C_j -> A_j``: the line ``A_j B_j`` extended back beyond ``B_j`` to
  ``C_j`` on the ``R_R,max`` circle (``R_R,max = R_R + Delta_max``, below the ring plane);
* **lower boundary** ``E_j -> A_j``;
* **generator fan**: ``2^N + 1`` generators at azimuths uniform over ``[phi_B1, phi_B2]``,
  starting on the ``R_R,max`` circle in the plane ``x_0 = -Delta_max / tan(alpha)`` (where the
  cone has radius ``R_R,max``, so each generator lies on the cone), directed along the cone
  generator towards the apex, of length ``min(L_max, distance to the side-face planes)`` with
  ``L_max = (h - x_0) / cos(alpha)`` (up to the top edge). The first and last generators are cut
  at ``B1``, ``B2``: ``L_min = Delta_max / sin(alpha)``. (The true cone/side-face edge is a
  hyperbola; the fan's ends follow it exactly, the straight edge ``B A`` within a few mm.)
* **ring-plane points** ``B1, B2``; **inner boundary circle** of radius ``R_R``, axis into the
  ring's own material (``-X`` of its own axes), ``C_SIDE = -1`` on the active ring, ``+1`` on
  the passive one.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from models._kernels import contact_layout as ck
from models.peripheral._kernels import layout as L
from models.errors import InputError
from models.peripheral.config import RingDesign

__all__ = [
    "ANDROGYNOUS_TURN",
    "Geometry",
    "build_geometry",
    "passive_from_active",
    "interleave_clearances",
    "petal_footprints",
]

#: half-turn about Z taking a ring's own axes to the mating unit's axes (points and vectors)
ANDROGYNOUS_TURN = np.diag([-1.0, -1.0, 1.0])
ANDROGYNOUS_TURN.setflags(write=False)


def passive_from_active(table: np.ndarray) -> np.ndarray:
    """Apply :data:`ANDROGYNOUS_TURN` to every (x, y, z) triple of a table whose last axis
    holds whole 3-vectors (points or direction vectors) [m] or [-]."""
    a = np.asarray(table, dtype=float)
    if a.shape[-1] % 3:
        raise ValueError("last axis must hold whole 3-vectors")
    return (a.reshape(*a.shape[:-1], -1, 3) * np.diag(ANDROGYNOUS_TURN)).reshape(a.shape)


# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Geometry:
    """Packed geometry of both rings (layouts in :mod:`models.peripheral._kernels.layout`).

    Active tables in active ring axes, passive ones in PU (module docstring). All float64,
    C-contiguous, read-only.

    Attributes
    ----------
    ring : (RG_SIZE,)
        Ring scalars (``RG_*``) [m, -].
    active_fans, passive_fans : (3, 2^N + 1, F_NCOL)
        Generator fans per petal (``F_*``): ``fans[k]`` goes to ``fan_vs_circle``.
    active_edges, passive_edges : (3 * EDGES_PER_PETAL, SEG_NCOL)
        Side-face boundary segments (``SEG_*``), row ``EDGES_PER_PETAL * k + EDGE_*``.
    active_points, passive_points : (6, PT_NCOL)
        Ring-plane points ``B1, B2`` of each petal, row ``2 k + j``.
    active_circle, passive_circle : (C_SIZE,)
        Inner boundary circles (``C_*``).
    passive_plane : (PL_SIZE,)
        Passive ring-plane annulus ``R_R .. R_face`` in ``x = 0`` of PU (``PL_*``).
    stops : (3, ST_NCOL)
        Passive stops in PU; row ``k`` faces active petal ``k`` when aligned.
    latches : (6, LA_NCOL)
        Active latches in ring axes, latch ``2 k + j`` of pair ``k`` on petal ``k``.
    sensors : (3, SE_NCOL)
        Active capture-sensor spheres in ring axes.
    active_side_planes, passive_side_planes : (3, 2, 4)
        Side-face planes ``(n, d)`` with outward unit normal ``n`` and ``n . p = d`` [m].
    active_petal_azimuths, passive_petal_azimuths : (3,)
        Petal centre azimuths in the table's axes [rad]. Passive petal ``k`` is active petal
        ``k`` turned over (azimuth ``pi - phi_k``): the passive azimuths step by -120 deg.
    design : RingDesign
        The design the tables were built from.
    """

    ring: np.ndarray
    active_fans: np.ndarray
    passive_fans: np.ndarray
    active_edges: np.ndarray
    passive_edges: np.ndarray
    active_points: np.ndarray
    passive_points: np.ndarray
    active_circle: np.ndarray
    passive_circle: np.ndarray
    passive_plane: np.ndarray
    stops: np.ndarray
    latches: np.ndarray
    sensors: np.ndarray
    active_side_planes: np.ndarray
    passive_side_planes: np.ndarray
    active_petal_azimuths: np.ndarray
    passive_petal_azimuths: np.ndarray
    design: RingDesign = field(repr=False)

    def __post_init__(self) -> None:
        for name in self.__dataclass_fields__:
            v = getattr(self, name)
            if isinstance(v, np.ndarray):
                a = np.ascontiguousarray(v, dtype=np.float64)
                a.setflags(write=False)
                object.__setattr__(self, name, a)

    @classmethod
    def pack(cls, design: RingDesign) -> "Geometry":
        """Build the tables of both rings from ``design`` (:func:`build_geometry`)."""
        return build_geometry(design)

    @property
    def n_generators(self) -> int:
        """Generators per petal, ``2^N + 1``."""
        return int(self.ring[L.RG_NGEN])


# --------------------------------------------------------------------------------------------
# one ring's petals in given axes
def _petal(ring, psi: float, facing: float, handed: float) -> dict[str, np.ndarray]:
    """Characteristic points, side planes and generator fan of one petal.

    The petal's centre is at azimuth ``psi`` in the table's axes; a point of the design at
    own abscissa ``x``, radius ``rho`` and azimuth ``theta`` from the petal centre is placed at
    ``(facing x, rho cos(psi + handed theta), rho sin(psi + handed theta))``: ``facing =
    handed = +1`` for the active ring in its own axes, ``-1, -1`` for the passive ring in PU
    (the half-turn about Z).
    """
    def pt(x, rho, theta):
        a = psi + handed * theta
        return np.array([facing * x, rho * math.cos(a), rho * math.sin(a)])

    rr, h, ta = ring.inner_radius, ring.petal_height, math.tan(ring.cone_angle)
    half, top, low = 0.5 * ring.petal_span, 0.5 * ring.petal_top_span, 0.5 * ring.lower_point_span
    b = [pt(0.0, rr, -half), pt(0.0, rr, half)]
    a = [pt(h, ring.top_radius, -top), pt(h, ring.top_radius, top)]
    e = [pt(ring.lower_point_x, ring.lower_point_radius, -low),
         pt(ring.lower_point_x, ring.lower_point_radius, low)]
    inside = pt(0.5 * h, ring.surface_radius(0.5 * h) - 0.5 * (rr - ring.lower_point_radius), 0.0)
    rmax = ring.max_radius
    planes, c = [], []
    for j in range(2):
        n = np.cross(a[j] - b[j], e[j] - b[j])
        nn = np.linalg.norm(n)
        if nn < 1e-9:
            raise InputError(f"side face {j + 1}: B, A and E are collinear",
                             key="ring.lower_point_radius")
        n /= nn
        d = float(n @ b[j])
        if n @ inside > d:          # outward normal: the petal's inside has n . p < d
            n, d = -n, -d
        planes.append(np.array([*n, d]))
        # C_j: on the line A_j -> B_j beyond B_j, radius R_R,max (the larger root)
        u = b[j] - a[j]
        qa = u[1] ** 2 + u[2] ** 2
        qb = 2.0 * (b[j][1] * u[1] + b[j][2] * u[2])
        qc = b[j][1] ** 2 + b[j][2] ** 2 - rmax ** 2
        s = (-qb + math.sqrt(qb * qb - 4.0 * qa * qc)) / (2.0 * qa)
        c.append(b[j] + s * u)
    # generator fan
    ngen = 2 ** ring.generator_bits + 1
    theta = np.linspace(-half, half, ngen)
    x0 = -ring.max_lateral_penetration / ta
    starts = np.stack([pt(x0, rmax, t) for t in theta])
    apex = np.array([facing * rr / ta, 0.0, 0.0])
    dirs = apex - starts
    dirs /= np.linalg.norm(dirs, axis=1)[:, None]
    lmax = (h - x0) / math.cos(ring.cone_angle)
    lengths = np.full(ngen, lmax)
    for pl in planes:
        n, d = pl[:3], pl[3]
        un = dirs @ n
        if np.any(starts @ n > d + 1e-12):
            raise InputError("a generator starts outside a side face: the side faces cut "
                             "the petal's base (check ring.lower_point_*)",
                             key="ring.lower_point_radius")
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(un > 0.0, (d - starts @ n) / un, np.inf)
        lengths = np.minimum(lengths, t)
    # the first and last generators pass through B1, B2 (on the side planes): exact L_min
    lmin = ring.max_lateral_penetration / math.sin(ring.cone_angle)
    if abs(lengths[0] - lmin) > 1e-9 or abs(lengths[-1] - lmin) > 1e-9:
        raise InputError(f"the first / last generator is cut at {lengths[0]:.6f} / "
                         f"{lengths[-1]:.6f} m, not at B1 / B2 ({lmin:.6f} m): a side face "
                         "cuts the petal's base", key="ring.lower_point_radius")
    lengths[0] = lengths[-1] = lmin     # remove the rounding of the plane intersection
    fan = np.empty((ngen, ck.F_NCOL))
    fan[:, ck.F_PX:ck.F_PX + 3] = starts
    fan[:, ck.F_LX:ck.F_LX + 3] = dirs * lengths[:, None]
    edges = np.empty((L.EDGES_PER_PETAL, L.SEG_NCOL))
    for j, (row_u, row_l) in enumerate(((L.EDGE_UPPER_1, L.EDGE_LOWER_1),
                                       (L.EDGE_UPPER_2, L.EDGE_LOWER_2))):
        edges[row_u, L.SEG_PX:L.SEG_PX + 3] = c[j]
        edges[row_u, L.SEG_LX:L.SEG_LX + 3] = a[j] - c[j]
        edges[row_l, L.SEG_PX:L.SEG_PX + 3] = e[j]
        edges[row_l, L.SEG_LX:L.SEG_LX + 3] = a[j] - e[j]
    return {"A": np.array(a), "B": np.array(b), "C": np.array(c), "E": np.array(e),
            "planes": np.array(planes), "fan": fan, "lengths": lengths, "edges": edges}


def _ring_tables(ring, azimuths: np.ndarray, facing: float, handed: float) -> dict:
    petals = [_petal(ring, float(psi), facing, handed) for psi in azimuths]
    fans = np.stack([p["fan"] for p in petals])
    for k, p in enumerate(petals):
        ln = p["lengths"]
        mid = len(ln) // 2
        if np.any(np.diff(ln[:mid + 1]) < -1e-12) or np.any(np.diff(ln[mid:]) > 1e-12):
            raise InputError(f"petal {k + 1}: generator lengths are not monotone towards the "
                             "side faces (the side faces cut the conical surface more than "
                             "once: check ring.petal_top_span and ring.lower_point_*)",
                             key="ring.petal_top_span")
    return {"petals": petals, "fans": fans,
            "edges": np.concatenate([p["edges"] for p in petals]),
            "points": np.concatenate([p["B"] for p in petals]),
            "planes": np.stack([p["planes"] for p in petals])}


def _wrap(a):
    """Angle(s) wrapped to (-pi, pi] [rad]."""
    return np.angle(np.exp(1j * np.asarray(a, dtype=float)))


# --------------------------------------------------------------------------------------------
def build_geometry(design: RingDesign) -> Geometry:
    """Tables of both rings, stops, latches and sensors from the ring design.

    Checks the design's consistency and raises :class:`models.errors.InputError` (a
    ``ValueError``) naming the key to change when: the side faces cut the conical surface
    irregularly (non-monotone generator lengths); the rings do not interleave
    (:func:`interleave_clearances`); a stop does not face an active petal, or a latch lies
    outside its stop's sector; a petal would hit a stop ridge; a latch, with the rings mated
    (coaxial, aligned, ring planes together), is not behind its stop's crest with its tip
    between ``R_Stop,min`` and ``R_Stop,max``, or would not cross the crest plane inside
    ``R_Stop,min`` (the trigger test of digest 9.7), or starts outside its petal; a capture
    sensor does not land on the mating ring face.
    """
    ring, stops, latches, sensors = design.ring, design.stops, design.latches, design.sensors
    third = 2.0 * math.pi / 3.0
    az_own = ring.first_petal_azimuth + third * np.arange(3)
    act = _ring_tables(ring, az_own, 1.0, 1.0)
    az_pas = _wrap(math.pi - az_own)
    pas = _ring_tables(ring, az_pas, -1.0, -1.0)

    ta = math.tan(ring.cone_angle)
    rg = np.empty(L.RG_SIZE)
    rg[L.RG_RR] = ring.inner_radius
    rg[L.RG_DMAX] = ring.max_lateral_penetration
    rg[L.RG_RRMAX] = ring.max_radius
    rg[L.RG_RFACE] = ring.face_outer_radius
    rg[L.RG_HEIGHT] = ring.petal_height
    rg[L.RG_COS_ALPHA] = math.cos(ring.cone_angle)
    rg[L.RG_SIN_ALPHA] = math.sin(ring.cone_angle)
    rg[L.RG_X_START] = -ring.max_lateral_penetration / ta
    rg[L.RG_LMAX] = (ring.petal_height - rg[L.RG_X_START]) / rg[L.RG_COS_ALPHA]
    rg[L.RG_LMIN] = ring.max_lateral_penetration / rg[L.RG_SIN_ALPHA]
    rg[L.RG_NGEN] = 2 ** ring.generator_bits + 1

    a_circ = np.zeros(ck.C_SIZE)
    a_circ[ck.C_UX] = -1.0                  # into the active ring's material (-X_A)
    a_circ[ck.C_R] = ring.inner_radius
    a_circ[ck.C_SIDE] = -1.0
    p_circ = np.zeros(ck.C_SIZE)
    p_circ[ck.C_UX] = 1.0                   # into the passive ring's material (+X_PU)
    p_circ[ck.C_R] = ring.inner_radius
    p_circ[ck.C_SIDE] = 1.0
    plane = np.zeros(ck.PL_SIZE)
    plane[ck.PL_X] = 0.0
    plane[ck.PL_RMIN] = ring.inner_radius
    plane[ck.PL_RMAX] = ring.face_outer_radius
    plane[ck.PL_SIDE] = 1.0

    geo_kw = dict(ring=rg, active_fans=act["fans"], passive_fans=pas["fans"],
                  active_edges=act["edges"], passive_edges=pas["edges"],
                  active_points=act["points"], passive_points=pas["points"],
                  active_circle=a_circ, passive_circle=p_circ, passive_plane=plane,
                  active_side_planes=act["planes"], passive_side_planes=pas["planes"],
                  active_petal_azimuths=_wrap(az_own), passive_petal_azimuths=az_pas,
                  design=design)
    # interleaving first: the stop and latch checks assume it
    interleave_clearances(Geometry(stops=np.zeros((3, L.ST_NCOL)),
                                   latches=np.zeros((6, L.LA_NCOL)),
                                   sensors=np.zeros((3, L.SE_NCOL)), **geo_kw))
    st = _stop_table(design, az_own)
    la = _latch_table(design, az_own, st)
    se = _sensor_table(design, az_own)
    return Geometry(stops=st, latches=la, sensors=se, **geo_kw)


def _stop_table(design: RingDesign, az_active: np.ndarray) -> np.ndarray:
    """Stops of the passive ring in PU, row k facing active petal k (aligned rings)."""
    ring, s = design.ring, design.stops
    # the stops lie in the gaps of their own ring
    own_petals = ring.first_petal_azimuth + 2.0 * math.pi / 3.0 * np.arange(3)
    foot = 0.5 * max(ring.petal_span, ring.lower_point_span)
    for i, a in enumerate(s.azimuths):
        off = np.abs(_wrap(a - own_petals)).min()
        if off < foot + s.half_width:
            raise InputError(f"stop {i + 1} (azimuth {math.degrees(a):.1f} deg) overlaps a "
                             f"petal of its own ring: its sector must clear the petal "
                             f"footprint by {math.degrees(foot + s.half_width - off):.2f} deg",
                             key="ring.stops.azimuths")
    az_pu = _wrap(math.pi - np.asarray(s.azimuths))
    crest = s.crest_depth
    # the petal cone must pass inside the stop ridge over its axial extent
    clear = s.min_radius - ring.surface_radius(s.guide_depth)
    if clear <= 0.0:
        raise InputError(f"the petals' conical surface at the stop's depth "
                         f"{s.guide_depth:g} m has radius {ring.surface_radius(s.guide_depth):.4f}"
                         f" m, not inside R_Stop,min = {s.min_radius:g} m: a petal would hit "
                         "the stop ridge", key="ring.stops.min_radius")
    tab = np.empty((3, L.ST_NCOL))
    for k, phi in enumerate(az_active):
        d = np.abs(_wrap(az_pu - phi))
        i = int(np.argmin(d))
        if d[i] > s.half_width:
            raise InputError(f"no stop faces active petal {k + 1} (nearest stop {i + 1} is "
                             f"{math.degrees(d[i]):.1f} deg away, half-width "
                             f"{math.degrees(s.half_width):.1f} deg)", key="ring.stops.azimuths")
        g = tab[k, L.ST_GUIDE:L.ST_GUIDE + ck.S45_SIZE]
        g[ck.S45_RHO0], g[ck.S45_X0], g[ck.S45_SIGMA] = s.max_radius, s.guide_depth, -1.0
        g[ck.S45_XLO], g[ck.S45_XHI] = s.guide_depth, crest
        g[ck.S45_XCREST], g[ck.S45_RCREST] = crest, s.min_radius
        lk = tab[k, L.ST_LOCK:L.ST_LOCK + ck.S45_SIZE]
        lk[ck.S45_RHO0], lk[ck.S45_X0], lk[ck.S45_SIGMA] = s.min_radius, crest, 1.0
        lk[ck.S45_XLO], lk[ck.S45_XHI] = crest, s.locking_depth
        lk[ck.S45_XCREST], lk[ck.S45_RCREST] = crest, s.min_radius
        tab[k, L.ST_AZ] = az_pu[i]
        tab[k, L.ST_EY], tab[k, L.ST_EZ] = math.cos(az_pu[i]), math.sin(az_pu[i])
        tab[k, L.ST_HW] = s.half_width
        tab[k, L.ST_COS_HW] = math.cos(s.half_width)
    if len({round(float(a), 9) for a in tab[:, L.ST_AZ]}) != 3:
        raise InputError("two active petals face the same stop", key="ring.stops.azimuths")
    return tab


def _latch_table(design: RingDesign, az_active: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """Latches of the active ring in ring axes; checked against the stops with the rings
    mated (ring axes = PU)."""
    ring, la, s = design.ring, design.latches, design.stops
    crest = s.crest_depth
    ce, se = math.cos(la.elevation), math.sin(la.elevation)
    tab = np.empty((6, L.LA_NCOL))
    for k, phi in enumerate(az_active):
        for j, sgn in enumerate((-1.0, 1.0)):
            m = 2 * k + j
            az = phi + sgn * la.pair_half_angle
            er = np.array([0.0, math.cos(az), math.sin(az)])
            base = np.array([la.base_x, 0.0, 0.0]) + la.base_radius * er
            n = np.array([se, 0.0, 0.0]) + ce * er
            tab[m, L.LA_AX:L.LA_AX + 3] = base
            tab[m, L.LA_NX:L.LA_NX + 3] = n
            tab[m, L.LA_LEN] = la.extended_length
            tab[m, L.LA_PAIR] = k
            tab[m, L.LA_STOP] = k
            tip = base + la.extended_length * n
            rt = math.hypot(tip[1], tip[2])
            name = f"latch {j + 1} of pair {k + 1}"
            if abs(_wrap(az - stops[k, L.ST_AZ])) >= s.half_width:
                raise InputError(f"{name} lies outside the sector of its stop",
                                 key="ring.latches.pair_half_angle")
            if la.base_radius >= ring.surface_radius(la.base_x):
                raise InputError(f"{name}: the base is outside its petal (petal surface radius "
                                 f"{ring.surface_radius(la.base_x):.4f} m there)",
                                 key="ring.latches.base_radius")
            if not la.base_x < crest < tip[0]:
                raise InputError(f"{name}: with the rings mated the latch must span the "
                                 f"stop's crest plane x = {crest:g} m (base at "
                                 f"{la.base_x:g} m, tip at {tip[0]:.4f} m)",
                                 key="ring.latches.base_x")
            if not s.min_radius < rt < s.max_radius:
                raise InputError(f"{name}: tip radius {rt:.4f} m must lie between R_Stop,min "
                                 f"= {s.min_radius:g} and R_Stop,max = {s.max_radius:g} m",
                                 key="ring.latches.extended_length")
            if rt > s.min_radius + (tip[0] - crest):
                raise InputError(f"{name}: with the rings mated the tip is inside the locking "
                                 "surface", key="ring.latches.extended_length")
            tc = (crest - la.base_x) / (la.extended_length * se)
            rc = la.base_radius + tc * la.extended_length * ce
            if not rc < s.min_radius:
                raise InputError(f"{name}: crosses the crest plane at radius {rc:.4f} m, not "
                                 f"inside R_Stop,min = {s.min_radius:g} m (never triggered)",
                                 key="ring.latches.elevation")
    return tab


def _sensor_table(design: RingDesign, az_active: np.ndarray) -> np.ndarray:
    ring, cs = design.ring, design.sensors
    if not ring.inner_radius + cs.radius <= cs.centre_radius <= ring.face_outer_radius - cs.radius:
        raise InputError(f"the sensor sphere must land on the mating ring face "
                         f"({ring.inner_radius:g} .. {ring.face_outer_radius:g} m) with its "
                         "whole radius", key="ring.capture_sensors.centre_radius")
    tab = np.empty((3, L.SE_NCOL))
    for k, phi in enumerate(az_active):
        az = phi + cs.azimuth_offset
        tab[k, L.SE_CX:L.SE_CX + 3] = (cs.centre_x, cs.centre_radius * math.cos(az),
                                       cs.centre_radius * math.sin(az))
        tab[k, L.SE_R] = cs.radius
    return tab


# --------------------------------------------------------------------------------------------
def petal_footprints(points: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Angular footprint of each petal on the ring plane.

    Parameters
    ----------
    points : (3, m, 3)
        Characteristic points of each petal [m] (``B``, ``A``, ``E``).
    centres : (3,)
        Petal centre azimuths [rad].

    Returns
    -------
    (3, 2) array of the lowest and highest azimuth of each petal's points [rad], unwrapped
    about its centre.
    """
    out = np.empty((len(centres), 2))
    for k, c in enumerate(centres):
        az = c + _wrap(np.arctan2(points[k, :, 2], points[k, :, 1]) - c)
        out[k] = az.min(), az.max()
    return out


def interleave_clearances(geometry: Geometry) -> np.ndarray:
    """Angular clearances between the active and the passive petals when the rings are
    coaxial and aligned (ring axes = PU).

    A petal's footprint is the azimuth range of its points ``B``, ``A`` and ``E``
    (:func:`petal_footprints`). Both rings' petals occupy the annulus inside ``R_R`` once the
    rings close, so the footprints must alternate active / passive around the axis without
    overlap; the radial extent is not used (an angular overlap is a collision).

    Returns
    -------
    (3, 2) array [rad]: ``[k, 0]`` the clearance between active petal ``k`` and its passive
    neighbour at lower azimuth, ``[k, 1]`` at higher azimuth.

    Raises
    ------
    InputError (a ValueError)
        Naming the petals that overlap (or are out of order) and by how much.
    """
    def pts(edges, points):
        e = edges.reshape(3, L.EDGES_PER_PETAL, L.SEG_NCOL)
        up = e[:, L.EDGE_UPPER_1:L.EDGE_UPPER_2 + 1]
        a = up[..., :3] + up[..., 3:]
        low = e[:, L.EDGE_LOWER_1:L.EDGE_LOWER_2 + 1, :3]
        return np.concatenate([points.reshape(3, 2, 3), a, low], axis=1)

    fa = petal_footprints(pts(geometry.active_edges, geometry.active_points),
                          geometry.active_petal_azimuths)
    fp = petal_footprints(pts(geometry.passive_edges, geometry.passive_points),
                          geometry.passive_petal_azimuths)
    out = np.empty((3, 2))
    problems = []
    for k in range(3):
        # nearest passive petal below and above petal k's centre
        rel = _wrap(geometry.passive_petal_azimuths - geometry.active_petal_azimuths[k])
        lo = int(np.argmax(np.where(rel < 0.0, rel, -np.inf)))
        hi = int(np.argmin(np.where(rel > 0.0, rel, np.inf)))
        if not (rel < 0.0).any() or not (rel > 0.0).any() or lo == hi:
            problems.append(f"active petal {k + 1} has no passive petal on one side")
            continue
        c = geometry.active_petal_azimuths[k]
        below = _wrap(fp[lo, 1] - c)          # upper edge of the lower neighbour, rel. to c
        above = _wrap(fp[hi, 0] - c)
        out[k, 0] = (fa[k, 0] - c) - below
        out[k, 1] = above - (fa[k, 1] - c)
        for side, (gap, other) in enumerate(((out[k, 0], lo), (out[k, 1], hi))):
            if gap <= 0.0:
                problems.append(f"active petal {k + 1} and passive petal {other + 1} overlap "
                                f"by {math.degrees(-gap):.2f} deg")
    if problems:
        raise InputError("the rings do not interleave when coaxial and aligned: "
                         + "; ".join(problems) + " (reduce ring.petal_span / "
                         "ring.lower_point_span, or check ring.first_petal_azimuth)",
                         key="ring.petal_span")
    return out
