"""Contact detectors and the penalty force law of the contact paper, as numba kernels.

Everything here works in the axes of the passive docking unit (PU, SI units): the caller
transforms the active primitive's characteristic points into PU first (eq. 2.1 of the digest,
:mod:`models._kernels.frames`) and calls a detector. The probe-cone and peripheral unit kernels
call these functions from inside their own ``@njit`` RK4 loops at every stage, so each detector

* is a plain ``@njit(**NJIT)`` function of float scalars and packed float64 arrays;
* allocates nothing and raises nothing;
* returns one 9-tuple, the **contact tuple**::

      (status, depth, nx, ny, nz, px, py, pz, feature)

  ``status`` (int64): :data:`NONE` (0, no contact; the floats are zero and ``feature`` is
  -1), :data:`CONTACT`
  (1), :data:`PENETRATION_EXCEEDED` (2: a contact whose ``depth > dn_max``; all fields are
  filled so the caller can report them) or :data:`GEOMETRY_RANGE` (3: a closed form used
  outside its validity, e.g. a sphere centre on the axis of a cylinder; the other fields are
  zero). ``depth`` [m] is the penetration :math:`\\Delta_n > 0`; ``(nx, ny, nz)`` is the unit
  contact normal :math:`\\mathbf n_R`, pointing **from the active into the passive body** (the
  force on the passive body is :math:`+\\mathbf n_R f_R`); ``(px, py, pz)`` [m] is the single
  contact point in PU (the point at which both bodies' forces act); ``feature`` (int64) says
  which feature of the passive primitive (or which generator of a fan) touched.

Call pattern inside a unit kernel (sphere of the probe head against the receiving cone, which
may touch in two places at a concave corner, so the detector is resumed after each hit)::

    feat = 0
    while True:
        st, dn, nx, ny, nz, px, py, pz, f = sphere_vs_revolution(xs, ys, zs, r_head, mer,
                                                                 dn_max, feat)
        if st == NONE:
            break
        if st >= PENETRATION_EXCEEDED:
            return st          # the readable wrapper raises PenetrationExceeded / GeometryRangeError
        (fn, dd, fx, fy, fz, mpx, mpy, mpz, max_, may, maz) = contact_wrench(
            dn, nx, ny, nz, px, py, pz, twist_head, twist_pu, law)
        ...accumulate...
        feat = f + 1

Detectors that can give several simultaneous contacts (:func:`sphere_vs_revolution`,
:func:`segment_vs_slot`) take a ``start`` feature index and are resumed like this; the others
give at most one contact.

Packed layouts (row / column constants below; built once by the readable layer's ``pack()``):

* meridian table of a surface of revolution, ``mer[k, :]`` for vertex ``k`` of the meridian
  polyline (``M_*``);
* circle ``circ[:]`` (``C_*``); plane fragment ``plane[:]`` (``PL_*``); 45-degree stop surface
  ``stop[:]`` (``S45_*``); socket slot ``slot[:]`` (``SL_*``); generator fan ``fan[i, :]``
  (``F_*``); contact law ``law[:]`` (``LAW_*``); twist ``tw[:]`` (``TW_*``).

References
----------
Seed digest ``docking-contact-models.md`` sections 5, 7, 8.5, 9.5, 9.7 and 12 (Golubev &
Yaskevich, Keldysh preprint 4, 2020, doi:10.20948/prepr-2020-4).
"""
from __future__ import annotations

import math

from numba import njit

from models._kernels import NJIT

__all__ = [
    "NONE", "CONTACT", "PENETRATION_EXCEEDED", "GEOMETRY_RANGE",
    "M_X", "M_RHO", "M_TX", "M_TRHO", "M_LEN", "M_KIND", "M_NCOL",
    "KIND_END", "KIND_CONVEX", "KIND_CONCAVE", "KIND_STRAIGHT",
    "C_BX", "C_BY", "C_BZ", "C_UX", "C_UY", "C_UZ", "C_R", "C_SIDE", "C_SIZE",
    "PL_X", "PL_RMIN", "PL_RMAX", "PL_SIDE", "PL_SIZE",
    "S45_RHO0", "S45_X0", "S45_SIGMA", "S45_XLO", "S45_XHI", "S45_XCREST", "S45_RCREST",
    "S45_SIZE",
    "SL_VX", "SL_EX", "SL_ET", "SL_EN", "SL_DLL1", "SL_DLX1", "SL_DLX2", "SL_TANB", "SL_SINB",
    "SL_COSB", "SL_DLL2", "SL_SIZE", "SLOT_STOP", "SLOT_NARROW", "SLOT_INCLINED", "SLOT_WIDE",
    "SLOT_EDGE", "SLOT_BORE",
    "F_PX", "F_PY", "F_PZ", "F_LX", "F_LY", "F_LZ", "F_NCOL",
    "LAW_K", "LAW_C", "LAW_MU", "LAW_VEPS", "LAW_MODEL", "LAW_SIZE", "MODEL_LINEAR",
    "MODEL_HUNT_CROSSLEY",
    "TW_V", "TW_W", "TW_O", "TW_SIZE",
    "AXIS_EPS", "PARALLEL_EPS", "PERP_MIN",
    "check_penetration", "sphere_vs_revolution", "sphere_vs_plane", "segment_vs_circle",
    "segment_vs_circle_xyz", "segment_vs_segment", "point_vs_stop45", "segment_vs_stop45_crest",
    "segment_vs_slot", "fan_search", "fan_vs_circle", "contact_force", "contact_wrench",
]

# --------------------------------------------------------------------------------------------
# status codes
NONE = 0
CONTACT = 1
PENETRATION_EXCEEDED = 2
GEOMETRY_RANGE = 3

# --------------------------------------------------------------------------------------------
# meridian table of a surface of revolution: mer[k, col], one row per polyline vertex k.
# The polyline runs in the meridian half-plane (x, rho) of PU; its unit tangent t_k = (tx, trho)
# goes from vertex k to k+1 and the material lies on the side of n_k = (-trho, tx) (for a funnel
# listed from the interface plane towards the socket bottom, n_k points into the metal).
M_X = 0          # vertex abscissa x_k [m]
M_RHO = 1        # vertex radius rho_k [m]
M_TX = 2         # tangent of segment k (vertex k -> k+1), x component [-] (0 on the last row)
M_TRHO = 3       # tangent of segment k, rho component [-]
M_LEN = 4        # length of segment k [m] (0 on the last row)
M_KIND = 5       # vertex kind: KIND_END, KIND_CONVEX (a rim), KIND_CONCAVE, KIND_STRAIGHT
M_NCOL = 6
KIND_END = 0.0
KIND_CONVEX = 1.0
KIND_CONCAVE = -1.0
KIND_STRAIGHT = 2.0  # collinear neighbours: no feature of its own

# circle: centre P_B, unit axis u from P_B towards the material of the body that carries the
# circle (towards the cone vertex P_T for the mouth of the receiving cone), radius R_C, and
# SIDE = +1 if the circle is on the passive body (segment active), -1 if it is on the active one.
C_BX, C_BY, C_BZ = 0, 1, 2
C_UX, C_UY, C_UZ = 3, 4, 5
C_R = 6
C_SIDE = 7
C_SIZE = 8

# plane fragment normal to X_PU (annulus rho_min <= rho <= rho_max in the plane x = x_p);
# SIDE = +1 if the material is at x > x_p (socket bottom, passive interface plane).
PL_X = 0
PL_RMIN = 1
PL_RMAX = 2
PL_SIDE = 3
PL_SIZE = 4

# 45-degree stop surface rho_s(x) = rho0 + sigma (x - x0), material at rho > rho_s(x), the
# fragment spanning x_lo <= x <= x_hi (abscissa of the foot of the perpendicular), and its crest
# circle (x_crest, r_crest), the edge used by the segment test (plane P_Stop is x = x_crest).
S45_RHO0 = 0
S45_X0 = 1
S45_SIGMA = 2
S45_XLO = 3
S45_XHI = 4
S45_XCREST = 5
S45_RCREST = 6
S45_SIZE = 7

# socket slot (digest 8.5 reconstruction): vertex V (3), axial unit e_x (3, from the stop
# towards the slot mouth), lateral unit e_t (3), plane normal e_n (3), half-width of the narrow
# part d_LL1, axial start / end of the inclined faces d_LX1 < d_LX2, tan, sin, cos of beta, and
# the half-width of the wide part d_LL2 = d_LL1 + (d_LX2 - d_LX1) tan(beta).
SL_VX = 0
SL_EX = 3
SL_ET = 6
SL_EN = 9
SL_DLL1 = 12
SL_DLX1 = 13
SL_DLX2 = 14
SL_TANB = 15
SL_SINB = 16
SL_COSB = 17
SL_DLL2 = 18
SL_SIZE = 19
# features of segment_vs_slot
SLOT_STOP = 0
SLOT_NARROW = 1
SLOT_INCLINED = 2
SLOT_WIDE = 3
SLOT_EDGE = 4
SLOT_BORE = 5

# generator fan: fan[i, col] = start point and direction vector of generator i in the fan's
# home frame (e.g. the active ring frame X_A).
F_PX, F_PY, F_PZ = 0, 1, 2
F_LX, F_LY, F_LZ = 3, 4, 5
F_NCOL = 6

# contact law: stiffness k_S [N/m], damping c_D [N s/m] (MODEL_LINEAR) or [N s/m^2]
# (MODEL_HUNT_CROSSLEY), friction coefficient k_Fr [-], regularization speed v_eps [m/s].
LAW_K = 0
LAW_C = 1
LAW_MU = 2
LAW_VEPS = 3
LAW_MODEL = 4
LAW_SIZE = 5
MODEL_LINEAR = 0.0        # paper: f = k dn + c dn_dot
MODEL_HUNT_CROSSLEY = 1.0  # f = k dn + c dn dn_dot (no force jump at touch-down)

# twist of a body in PU axes: velocity of its reference point, angular velocity, the point.
TW_V = 0
TW_W = 3
TW_O = 6
TW_SIZE = 9

# tolerances
AXIS_EPS = 1e-12      # [m] a point nearer the axis than this has no radial direction
PARALLEL_EPS = 1e-12  # [-] sine of the angle below which a segment is parallel to a plane/segment
PERP_MIN = 1e-9       # [m] common perpendicular shorter than this is ignored (paper: 1e-6 mm)

_SQRT1_2 = 0.7071067811865476


@njit(**NJIT)
def _none():
    return (NONE, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1)


@njit(**NJIT)
def check_penetration(depth, dn_max):
    """Status of a penetration: CONTACT if ``0 < depth <= dn_max``, PENETRATION_EXCEEDED above,
    NONE otherwise."""
    if depth <= 0.0:
        return NONE
    if depth > dn_max:
        return PENETRATION_EXCEEDED
    return CONTACT


@njit(**NJIT)
def _meridian_to_3d(xs, ys, zs, rs, depth, nxm, nrm, dn_max, feature):
    """Lift a meridian-plane contact (depth, normal (nxm, nrm)) to 3-D at the sphere centre."""
    dl = math.sqrt(ys * ys + zs * zs)
    if dl > AXIS_EPS:
        inv = 1.0 / dl
        nx = nxm
        ny = nrm * ys * inv
        nz = nrm * zs * inv
    else:
        # centre on the axis: a ring contact whose radial parts cancel. Keep the axial part:
        # normal along +-X, depth = axial component of the penetration (digest 12.9).
        if abs(nxm) < 1e-9:
            return (GEOMETRY_RANGE, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, feature)
        depth = depth * abs(nxm)
        nx = 1.0 if nxm > 0.0 else -1.0
        ny = 0.0
        nz = 0.0
    st = check_penetration(depth, dn_max)
    return (st, depth, nx, ny, nz, xs + rs * nx, ys + rs * ny, zs + rs * nz, feature)


@njit(**NJIT)
def _face_free_distance(mer, k, xs, dl):
    """Foot parameter s and free-side distance h of (xs, dl) from meridian segment k."""
    ax = xs - mer[k, M_X]
    ar = dl - mer[k, M_RHO]
    tx = mer[k, M_TX]
    tr = mer[k, M_TRHO]
    s = ax * tx + ar * tr
    h = ax * tr - ar * tx  # = -(S - V) . n, n = (-tr, tx)
    return s, h


@njit(**NJIT)
def sphere_vs_revolution(xs, ys, zs, rs, mer, dn_max, start):
    """Sphere (or point, ``rs = 0``) against a surface of revolution about X_PU.

    Nearest-feature (Voronoi) classification in the meridian half-plane of the centre
    (digest 7.2 note): feature ``2k`` is face ``k`` (segment from vertex ``k`` to ``k+1``:
    truncated cone 7.1, cylinder 7.3 or annular plane 7.4), feature ``2k-1`` is interior vertex
    ``k`` (a convex rim, 7.2, when the centre is on the free side; a concave corner's own region
    lies inside the material and only matters for deep points). A sphere whose centre is on the
    free side touches face ``k`` when the foot of its perpendicular lies on the segment and the
    free-side distance ``h < rs``; it touches convex vertex ``V`` when
    ``(S-V).t_prev > 0 > (S-V).t_next`` and ``|S-V| < rs``. These regions tile the free side,
    so no shallow contact falls between them; at a concave corner the two faces overlap and give
    two contacts (both physical). For a centre inside the material (points, or deep spheres)
    the face slabs overlap at convex vertices: the face with the smaller penetration is kept.

    Parameters
    ----------
    xs, ys, zs : float
        Sphere centre in PU [m].
    rs : float
        Sphere radius [m] (0 for a point).
    mer : float64[:, M_NCOL]
        Meridian table (``M_*`` columns).
    dn_max : float
        Largest allowed penetration [m].
    start : int
        First feature index to examine (0, then ``feature + 1`` to resume).

    Returns
    -------
    contact tuple (see module docstring). The contact point is the deepest point of the sphere,
    ``P_S + rs n_R``.
    """
    n = mer.shape[0]
    nseg = n - 1
    dl = math.sqrt(ys * ys + zs * zs)
    nfeat = 2 * nseg - 1
    for j in range(start, nfeat):
        if j % 2 == 0:
            k = j // 2
            s, h = _face_free_distance(mer, k, xs, dl)
            if s < 0.0 or s > mer[k, M_LEN]:
                continue
            depth = rs - h
            if depth <= 0.0:
                continue
            if h < 0.0:
                # centre inside the material: at a convex vertex the neighbouring slab
                # overlaps; keep the face with the smaller penetration (lower index on a tie)
                if k > 0 and mer[k, M_KIND] == KIND_CONVEX:
                    s2, h2 = _face_free_distance(mer, k - 1, xs, dl)
                    if 0.0 <= s2 <= mer[k - 1, M_LEN] and h2 < 0.0 and h2 >= h:
                        continue
                if k + 1 < nseg and mer[k + 1, M_KIND] == KIND_CONVEX:
                    s2, h2 = _face_free_distance(mer, k + 1, xs, dl)
                    if 0.0 <= s2 <= mer[k + 1, M_LEN] and h2 < 0.0 and h2 > h:
                        continue
            return _meridian_to_3d(xs, ys, zs, rs, depth, -mer[k, M_TRHO], mer[k, M_TX],
                                   dn_max, j)
        else:
            k = (j + 1) // 2
            kind = mer[k, M_KIND]
            if kind != KIND_CONVEX and kind != KIND_CONCAVE:
                continue
            ax = xs - mer[k, M_X]
            ar = dl - mer[k, M_RHO]
            if ax * mer[k - 1, M_TX] + ar * mer[k - 1, M_TRHO] <= 0.0:
                continue
            if ax * mer[k, M_TX] + ar * mer[k, M_TRHO] >= 0.0:
                continue
            dist = math.sqrt(ax * ax + ar * ar)
            if kind == KIND_CONVEX:
                depth = rs - dist        # rim 7.2: centre on the free side
                if depth <= 0.0:
                    continue
                if dist < AXIS_EPS:
                    return (GEOMETRY_RANGE, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, j)
                inv = 1.0 / dist
                return _meridian_to_3d(xs, ys, zs, rs, depth, -ax * inv, -ar * inv, dn_max, j)
            depth = rs + dist            # concave corner: centre inside the material
            if dist < AXIS_EPS:
                return (GEOMETRY_RANGE, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, j)
            inv = 1.0 / dist
            return _meridian_to_3d(xs, ys, zs, rs, depth, ax * inv, ar * inv, dn_max, j)
    return _none()


@njit(**NJIT)
def sphere_vs_plane(xs, ys, zs, rs, plane, dn_max):
    """Sphere (or point, ``rs = 0``) against a plane fragment normal to X_PU (digest 7.4, 9.4).

    Contact when ``rho_min <= sqrt(y^2+z^2) <= rho_max`` (bounds inclusive) and
    ``depth = side (x_S - x_p) + rs > 0``; normal ``(side, 0, 0)``; the contact point is the
    sphere's deepest point. Feature 0.
    """
    dl = math.sqrt(ys * ys + zs * zs)
    if dl < plane[PL_RMIN] or dl > plane[PL_RMAX]:
        return _none()
    side = plane[PL_SIDE]
    depth = side * (xs - plane[PL_X]) + rs
    if depth <= 0.0:
        return _none()
    st = check_penetration(depth, dn_max)
    return (st, depth, side, 0.0, 0.0, xs + rs * side, ys, zs, 0)


@njit(**NJIT)
def segment_vs_circle_xyz(p1x, p1y, p1z, lx, ly, lz, bx, by, bz, ux, uy, uz, rc, side, dn_max):
    """Segment ``P1 + t L, t in [0, 1]`` against a boundary circle (digest 7.6), scalar form.

    Circle: centre ``B``, unit axis ``u`` pointing into the material of the body that carries
    the circle, radius ``rc``, ``side`` = +1 (circle passive) or -1 (circle active). Algorithm:
    intersect the segment with the circle plane at ``P_C`` (none if the segment is parallel to
    the plane or ``t_C`` is outside [0, 1]); lateral penetration ``Delta = |P_C - B| - rc``
    (none if ``<= 0``: the segment passes inside); ``m`` = unit common normal of the segment and
    the circle tangent at the nearest rim point, ``m = L x (u x (P_C - B))``, oriented into the
    circle body (``m.u > 0``; ``m.n_C > 0`` when ``m`` is perpendicular to ``u``);
    ``depth = Delta (m . n_C)`` with ``n_C`` the radial unit vector through ``P_C`` (general
    form, valid off-axis). A non-positive depth (normal outside the rim's normal cone) is no
    contact: the paper's formula would give an attractive force there. ``n_R = side * m``;
    contact point ``P_C``. First-order (tangent-line) approximation of the line-circle distance:
    exact to ``O(Delta^2 / rc)``. Feature 0.
    """
    den = ux * lx + uy * ly + uz * lz
    llen2 = lx * lx + ly * ly + lz * lz
    if den * den <= PARALLEL_EPS * PARALLEL_EPS * llen2:
        return _none()
    tc = (ux * (bx - p1x) + uy * (by - p1y) + uz * (bz - p1z)) / den
    if tc < 0.0 or tc > 1.0:
        return _none()
    cx = p1x + tc * lx
    cy = p1y + tc * ly
    cz = p1z + tc * lz
    rx = cx - bx
    ry = cy - by
    rz = cz - bz
    dl = math.sqrt(rx * rx + ry * ry + rz * rz)
    delta = dl - rc
    if delta <= 0.0:
        return _none()
    inv = 1.0 / dl
    ncx = rx * inv
    ncy = ry * inv
    ncz = rz * inv
    # n_S = u x n_C (meridian-plane normal, parallel to the rim tangent); m = L x n_S
    sx = uy * ncz - uz * ncy
    sy = uz * ncx - ux * ncz
    sz = ux * ncy - uy * ncx
    mx = ly * sz - lz * sy
    my = lz * sx - lx * sz
    mz = lx * sy - ly * sx
    mm = math.sqrt(mx * mx + my * my + mz * mz)
    if mm <= PARALLEL_EPS * math.sqrt(llen2):
        return (GEOMETRY_RANGE, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0)
    inv = 1.0 / mm
    mx *= inv
    my *= inv
    mz *= inv
    mu = mx * ux + my * uy + mz * uz
    if mu < -1e-12 or (mu <= 1e-12 and mx * ncx + my * ncy + mz * ncz < 0.0):
        mx = -mx
        my = -my
        mz = -mz
    depth = delta * (mx * ncx + my * ncy + mz * ncz)
    if depth <= 0.0:
        return _none()
    st = check_penetration(depth, dn_max)
    return (st, depth, side * mx, side * my, side * mz, cx, cy, cz, 0)


@njit(**NJIT)
def segment_vs_circle(p1x, p1y, p1z, lx, ly, lz, circ, dn_max):
    """Segment ``P1 + t L`` against the packed circle ``circ`` (``C_*``); see
    :func:`segment_vs_circle_xyz`."""
    return segment_vs_circle_xyz(p1x, p1y, p1z, lx, ly, lz, circ[C_BX], circ[C_BY], circ[C_BZ],
                                 circ[C_UX], circ[C_UY], circ[C_UZ], circ[C_R], circ[C_SIDE],
                                 dn_max)


@njit(**NJIT)
def segment_vs_segment(oax, oay, oaz, lax, lay, laz, opx, opy, opz, lpx, lpy, lpz, dn_max):
    """Active segment ``O_A + t L_A`` against passive segment ``O_P + s L_P`` (digest 7.7).

    The feet ``C_A``, ``C_P`` of the common perpendicular (closed form, equal to the paper's
    four-plane construction) must both lie on the segments (``t, s in [0, 1]``); the contact
    needs ``(C_A - C_P).X_PU >= 0`` (the active edge has passed the passive one along the
    approach direction) and ``|C_A - C_P| >= PERP_MIN``. ``depth = |C_A - C_P|``,
    ``n_R = (C_A - C_P) / depth``, contact point ``C_P``. Parallel segments (sine of the angle
    below ``PARALLEL_EPS``) have no unique common perpendicular: no contact. Feature 0.
    """
    w0x = oax - opx
    w0y = oay - opy
    w0z = oaz - opz
    a = lax * lax + lay * lay + laz * laz
    b = lax * lpx + lay * lpy + laz * lpz
    c = lpx * lpx + lpy * lpy + lpz * lpz
    d = lax * w0x + lay * w0y + laz * w0z
    e = lpx * w0x + lpy * w0y + lpz * w0z
    den = a * c - b * b
    if den <= PARALLEL_EPS * PARALLEL_EPS * a * c:
        return _none()
    inv = 1.0 / den
    ta = (b * e - c * d) * inv
    tp = (a * e - b * d) * inv
    if ta < 0.0 or ta > 1.0 or tp < 0.0 or tp > 1.0:
        return _none()
    cpx = opx + tp * lpx
    cpy = opy + tp * lpy
    cpz = opz + tp * lpz
    vx = oax + ta * lax - cpx
    vy = oay + ta * lay - cpy
    vz = oaz + ta * laz - cpz
    if vx < 0.0:
        return _none()
    depth = math.sqrt(vx * vx + vy * vy + vz * vz)
    if depth < PERP_MIN:
        return _none()
    inv = 1.0 / depth
    st = check_penetration(depth, dn_max)
    return (st, depth, vx * inv, vy * inv, vz * inv, cpx, cpy, cpz, 0)


@njit(**NJIT)
def point_vs_stop45(x, y, z, stop, dn_max):
    """Latch end point against a 45-degree stop surface (digest 9.7).

    Surface ``rho_s(x) = rho0 + sigma (x - x0)`` (``sigma = -1``: guide face, ``+1``: locking
    face), material at ``rho > rho_s``. ``Delta_L = rho - rho_s(x)``, ``depth = Delta_L/sqrt 2``
    (exact distance to the generator line), ``n_R = (-sigma, rho_hat)/sqrt 2``; the foot of the
    perpendicular must lie in ``x_lo <= x_f <= x_hi``. Contact point: the latch point. A point
    on the axis has no radial direction: GEOMETRY_RANGE. Feature 0.
    """
    dl = math.sqrt(y * y + z * z)
    sigma = stop[S45_SIGMA]
    dlat = dl - (stop[S45_RHO0] + sigma * (x - stop[S45_X0]))
    if dlat <= 0.0:
        return _none()
    # foot of the perpendicular on the generator (x, rho) = (x0, rho0) + s (1, sigma)/sqrt2
    s = ((x - stop[S45_X0]) + sigma * (dl - stop[S45_RHO0])) * _SQRT1_2
    xf = stop[S45_X0] + s * _SQRT1_2
    if xf < stop[S45_XLO] or xf > stop[S45_XHI]:
        return _none()
    if dl < AXIS_EPS:
        return (GEOMETRY_RANGE, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0)
    depth = dlat * _SQRT1_2
    inv = _SQRT1_2 / dl
    st = check_penetration(depth, dn_max)
    return (st, depth, -sigma * _SQRT1_2, y * inv, z * inv, x, y, z, 0)


@njit(**NJIT)
def segment_vs_stop45_crest(p1x, p1y, p1z, lx, ly, lz, stop, dn_max):
    """Latch segment against the crest circle of a 45-degree stop (digest 9.7, locking surface).

    Intersect the segment with the plane ``x = x_crest`` at ``C`` (none if parallel or outside
    the segment); ``Delta_C = rho_C - r_crest`` (none if ``<= 0``: the latch is inside the
    crest), ``depth = Delta_C / sqrt 2``, ``n_R = (-sigma, rho_hat)/sqrt 2``, point ``C``.
    Feature 1 (feature 0 is the end-point test :func:`point_vs_stop45`).
    """
    llen = math.sqrt(lx * lx + ly * ly + lz * lz)
    if abs(lx) <= PARALLEL_EPS * llen:
        return _none()
    t = (stop[S45_XCREST] - p1x) / lx
    if t < 0.0 or t > 1.0:
        return _none()
    cy = p1y + t * ly
    cz = p1z + t * lz
    dl = math.sqrt(cy * cy + cz * cz)
    dlat = dl - stop[S45_RCREST]
    if dlat <= 0.0:
        return _none()
    depth = dlat * _SQRT1_2
    inv = _SQRT1_2 / dl
    st = check_penetration(depth, dn_max)
    return (st, depth, -stop[S45_SIGMA] * _SQRT1_2, cy * inv, cz * inv,
            stop[S45_XCREST], cy, cz, 1)


@njit(**NJIT)
def segment_vs_slot(p1x, p1y, p1z, lx, ly, lz, slot, dn_max, start):
    """Latch reverse segment against a socket slot after capture (digest 8.5, reconstruction).

    Intersect the segment with the slot plane (through the vertex ``V``, normal ``e_n``) at
    ``P_C``; ``d1 = (P_C - V).e_x``, ``t = (P_C - V).e_t``, ``d2 = |t|``. In the half-plane
    ``(d1, d2)`` the side walls are the profile polyline ``d2 = w(d1)``: the narrow wall
    ``w = d_LL1`` for ``d1 <= d_LX1`` (continued past the stop), the inclined wall from
    ``(d_LX1, d_LL1)`` to ``(d_LX2, d_LL2)`` at angle ``beta``, and the wide wall ``w = d_LL2``
    for ``d1 >= d_LX2``. Two independent contacts, resumable with ``start`` (the stop and a
    side wall can act together: tension plus torsion):

    * :data:`SLOT_STOP` (0): ``d1 < 0``: ``depth = -d1``, ``n_R = -e_x``;
    * the side walls, when ``P_C`` lies in the wall material (``d2 > w(d1)``): ``depth`` is
      the distance of ``(d1, d2)`` from the profile, the nearest profile point deciding the
      feature: :data:`SLOT_NARROW` (1), ``n_R = sign(t) e_t``; :data:`SLOT_INCLINED` (2),
      ``n_R = -sin(beta) e_x + sign(t) cos(beta) e_t``; :data:`SLOT_WIDE` (3),
      ``n_R = sign(t) e_t``; or :data:`SLOT_EDGE` (4), the edge ``(d_LX2, d_LL2)`` where the
      inclined and wide walls meet (it juts into the slot), ``n_R`` along the line from the
      edge to ``P_C``;
    * :data:`SLOT_BORE` (5), instead of both of those: when ``P_C`` is in the wall beside the
      window (stop or side-wall depth ``> 0``) but the latch reaches only ``h_b`` beyond the
      wall plane, with ``h_b`` smaller than the deeper of the two in-plane depths, the
      latch is pushed back radially into the socket bore: ``depth = h_b``, ``n_R = e_n``, at
      the foot on the wall plane of the segment end beyond it. The penetration is thus the
      smaller of the two ways out of the wall material (back into the window, or back into
      the bore).

    The digest's reconstruction calls the wide part "never touched" and gives no wall there
    (nor an edge); a latch that went deep into the socket and swung sideways then met no
    resistance and, coming back into the inclined part, found itself suddenly deep in the
    wall (a 35 kN spike, "penetration exceeded"). With the wide walls and the
    distance-to-profile penetration the depth is a continuous (1-Lipschitz) function of
    ``P_C`` everywhere: at ``d1 = d_LX1`` it is ``min`` of the narrow and inclined distances
    (the wall material is convex there), at ``d_LX2`` the edge's circular zone joins the
    inclined and wide walls. Inside a single part it equals the digest's formulas
    (``d2 - d_LL1``, ``(d2 - w) cos(beta)``). Contact point ``P_C``.

    Nor does the digest say what happens when the latch leaves the window: with the head
    off-centre and tilted in the socket its tip can fall back inside the bore (the segment no
    longer reaches the wall plane: no contact, correctly), and the probe can then slide back
    past the stop. When the tip reaches the wall plane again it does so beside the window,
    where the stop depth ``-d1`` is already ~1-2 cm (every "penetration exceeded" after
    capture in the random envelope cases was this). :data:`SLOT_BORE` makes that re-entry
    continuous: the depth starts from ``h_b = 0``.
    """
    enx = slot[SL_EN]
    eny = slot[SL_EN + 1]
    enz = slot[SL_EN + 2]
    vx = slot[SL_VX]
    vy = slot[SL_VX + 1]
    vz = slot[SL_VX + 2]
    den = enx * lx + eny * ly + enz * lz
    llen2 = lx * lx + ly * ly + lz * lz
    if den * den <= PARALLEL_EPS * PARALLEL_EPS * llen2:
        return _none()
    tc = (enx * (vx - p1x) + eny * (vy - p1y) + enz * (vz - p1z)) / den
    if tc < 0.0 or tc > 1.0:
        return _none()
    cx = p1x + tc * lx
    cy = p1y + tc * ly
    cz = p1z + tc * lz
    ex = slot[SL_EX]
    ey = slot[SL_EX + 1]
    ez = slot[SL_EX + 2]
    tx = slot[SL_ET]
    ty = slot[SL_ET + 1]
    tz = slot[SL_ET + 2]
    d1 = (cx - vx) * ex + (cy - vy) * ey + (cz - vz) * ez
    t = (cx - vx) * tx + (cy - vy) * ty + (cz - vz) * tz
    d2 = abs(t)
    sg = 1.0 if t >= 0.0 else -1.0
    # how far the latch reaches beyond the wall plane (the end of the segment outside it)
    h1 = (p1x - vx) * enx + (p1y - vy) * eny + (p1z - vz) * enz
    h2 = h1 + den
    if h2 >= h1:
        hb = h2
        bx = p1x + lx - h2 * enx
        by = p1y + ly - h2 * eny
        bz = p1z + lz - h2 * enz
    else:
        hb = h1
        bx = p1x - h1 * enx
        by = p1y - h1 * eny
        bz = p1z - h1 * enz
    stop_depth = -d1 if d1 < 0.0 else 0.0
    lat, lnx, lny, lnz, lf = _slot_walls(d1, t, slot)
    deepest = stop_depth if stop_depth > lat else lat
    if deepest <= 0.0:
        return _none()
    if hb < deepest:
        # the latch is in the wall beside the window, reaching only hb beyond the wall
        # plane: it is pushed back into the socket bore (radially) rather than along the wall
        if start > SLOT_BORE or hb <= 0.0:
            return _none()
        st = check_penetration(hb, dn_max)
        return (st, hb, enx, eny, enz, bx, by, bz, SLOT_BORE)
    if start <= SLOT_STOP and stop_depth > 0.0:
        st = check_penetration(stop_depth, dn_max)
        return (st, stop_depth, -ex, -ey, -ez, cx, cy, cz, SLOT_STOP)
    if lat <= 0.0 or lf < start:
        return _none()
    st = check_penetration(lat, dn_max)
    return (st, lat, lnx, lny, lnz, cx, cy, cz, lf)


@njit(**NJIT)
def _slot_walls(d1, t, slot):
    """Side-wall contact of the slot-plane point ``(d1, t)``: ``(depth, nx, ny, nz, feature)``,
    depth 0 and feature -1 when the point is inside the slot (see :func:`segment_vs_slot`)."""
    ex = slot[SL_EX]
    ey = slot[SL_EX + 1]
    ez = slot[SL_EX + 2]
    tx = slot[SL_ET]
    ty = slot[SL_ET + 1]
    tz = slot[SL_ET + 2]
    d2 = abs(t)
    sg = 1.0 if t >= 0.0 else -1.0
    dll1 = slot[SL_DLL1]
    dll2 = slot[SL_DLL2]
    dlx1 = slot[SL_DLX1]
    dlx2 = slot[SL_DLX2]
    sb = slot[SL_SINB]
    cb = slot[SL_COSB]
    # side-wall material test d2 > w(d1)
    if d1 <= dlx1:
        if d2 <= dll1:
            return (0.0, 0.0, 0.0, 0.0, -1)
    elif d1 >= dlx2:
        if d2 <= dll2:
            return (0.0, 0.0, 0.0, 0.0, -1)
    elif d2 <= dll1 + (d1 - dlx1) * slot[SL_TANB]:
        return (0.0, 0.0, 0.0, 0.0, -1)
    # distance to the profile: the narrow ray (only its foot d1 <= d_LX1 matters: beyond it
    # the corner (d_LX1, d_LL1) is also an end of the inclined segment), the inclined segment,
    # the wide ray
    best = 1e300
    feat = -1
    if d1 <= dlx1:
        best = d2 - dll1
        feat = SLOT_NARROW
    # inclined segment from A = (dlx1, dll1) along (cb, sb), length L = (dlx2 - dlx1) / cb
    s_a = (d1 - dlx1) * cb + (d2 - dll1) * sb
    ln = (dlx2 - dlx1) / cb
    if 0.0 <= s_a <= ln:
        di = (d2 - dll1) * cb - (d1 - dlx1) * sb
        if di < best:
            best = di
            feat = SLOT_INCLINED
    if d1 >= dlx2:
        dw = d2 - dll2
        if dw < best:
            best = dw
            feat = SLOT_WIDE
    qx = 0.0
    qy = 0.0
    if feat < 0:
        # the edge (d_LX2, d_LL2) (or, for a degenerate profile, the corner (d_LX1, d_LL1))
        if s_a > ln:
            qx = d1 - dlx2
            qy = d2 - dll2
            feat = SLOT_EDGE
        else:
            qx = d1 - dlx1
            qy = d2 - dll1
            feat = SLOT_INCLINED
        best = math.sqrt(qx * qx + qy * qy)
        if best <= 0.0:
            return (0.0, 0.0, 0.0, 0.0, -1)
    if feat == SLOT_NARROW or feat == SLOT_WIDE:
        ax_ = 0.0
        at_ = sg
    elif feat == SLOT_INCLINED and qx == 0.0 and qy == 0.0:
        ax_ = -sb
        at_ = sg * cb
    else:
        inv = 1.0 / best
        ax_ = qx * inv
        at_ = sg * qy * inv
    return (best, ax_ * ex + at_ * tx, ax_ * ey + at_ * ty, ax_ * ez + at_ * tz, feat)


# --------------------------------------------------------------------------------------------
# generator fan vs circle (digest 9.5)

@njit(**NJIT)
def _circle_in_frame(circ, r, a):
    """Circle centre and axis in a body frame: b_f = A (b - r), u_f = A u."""
    qx = circ[C_BX] - r[0]
    qy = circ[C_BY] - r[1]
    qz = circ[C_BZ] - r[2]
    bx = a[0, 0] * qx + a[0, 1] * qy + a[0, 2] * qz
    by = a[1, 0] * qx + a[1, 1] * qy + a[1, 2] * qz
    bz = a[2, 0] * qx + a[2, 1] * qy + a[2, 2] * qz
    ux = a[0, 0] * circ[C_UX] + a[0, 1] * circ[C_UY] + a[0, 2] * circ[C_UZ]
    uy = a[1, 0] * circ[C_UX] + a[1, 1] * circ[C_UY] + a[1, 2] * circ[C_UZ]
    uz = a[2, 0] * circ[C_UX] + a[2, 1] * circ[C_UY] + a[2, 2] * circ[C_UZ]
    return bx, by, bz, ux, uy, uz


@njit(**NJIT)
def _fan_char(fan, i, bx, by, bz, ux, uy, uz):
    """Squared characteristic distance d^2 of generator i (distance from the circle centre to
    the generator line's crossing of the circle plane) and the crossing parameter t_C. A line
    parallel to the plane gets d^2 = -1 (never the maximum) and t_C = nan."""
    lx = fan[i, F_LX]
    ly = fan[i, F_LY]
    lz = fan[i, F_LZ]
    den = ux * lx + uy * ly + uz * lz
    if den * den <= PARALLEL_EPS * PARALLEL_EPS * (lx * lx + ly * ly + lz * lz):
        return -1.0, math.nan
    tc = (ux * (bx - fan[i, F_PX]) + uy * (by - fan[i, F_PY]) + uz * (bz - fan[i, F_PZ])) / den
    cx = fan[i, F_PX] + tc * lx - bx
    cy = fan[i, F_PY] + tc * ly - by
    cz = fan[i, F_PZ] + tc * lz - bz
    return cx * cx + cy * cy + cz * cz, tc


@njit(**NJIT)
def _fan_search_local(fan, bx, by, bz, ux, uy, uz, exhaustive):
    n = fan.shape[0]
    if exhaustive:
        best = 0
        dbest, _ = _fan_char(fan, 0, bx, by, bz, ux, uy, uz)
        for i in range(1, n):
            d2, _ = _fan_char(fan, i, bx, by, bz, ux, uy, uz)
            if d2 > dbest:
                dbest = d2
                best = i
        return best, dbest, n
    # bisection on the sign of the forward difference: for a unimodal profile it brackets the
    # peak; for any profile the bracket halves every pass, so the loop ends in <= log2(n) passes
    # (no "valley" stall of the paper's keep-the-two-largest rule).
    lo = 0
    hi = n - 1
    evals = 0
    while hi - lo > 2:
        m = (lo + hi) // 2
        dm, _ = _fan_char(fan, m, bx, by, bz, ux, uy, uz)
        dm1, _ = _fan_char(fan, m + 1, bx, by, bz, ux, uy, uz)
        evals += 2
        if dm < dm1:
            lo = m + 1
        else:
            hi = m
    best = lo
    dbest, _ = _fan_char(fan, lo, bx, by, bz, ux, uy, uz)
    evals += 1
    for i in range(lo + 1, hi + 1):
        d2, _ = _fan_char(fan, i, bx, by, bz, ux, uy, uz)
        evals += 1
        if d2 > dbest:
            dbest = d2
            best = i
    # the two ends (a profile with an interior minimum has its maximum at an end)
    for i in (0, n - 1):
        d2, _ = _fan_char(fan, i, bx, by, bz, ux, uy, uz)
        evals += 1
        if d2 > dbest or (d2 == dbest and i < best):
            dbest = d2
            best = i
    # hill-climb to a local maximum (bounded by n steps)
    for _ in range(n):
        moved = False
        if best > 0:
            d2, _ = _fan_char(fan, best - 1, bx, by, bz, ux, uy, uz)
            evals += 1
            if d2 > dbest:
                dbest = d2
                best = best - 1
                moved = True
        if not moved and best < n - 1:
            d2, _ = _fan_char(fan, best + 1, bx, by, bz, ux, uy, uz)
            evals += 1
            if d2 > dbest:
                dbest = d2
                best = best + 1
                moved = True
        if not moved:
            break
    return best, dbest, evals


@njit(**NJIT)
def fan_search(fan, r, a, circ, exhaustive):
    """Generator of a fan with the largest characteristic distance to a circle.

    Parameters
    ----------
    fan : float64[:, F_NCOL]
        Generators in the fan's home frame.
    r : float64[3]
        Origin of the fan frame in PU [m].
    a : float64[3, 3]
        Direction-cosine matrix PU -> fan frame (``u_fan = a @ u_PU``).
    circ : float64[C_SIZE]
        Circle in PU.
    exhaustive : bool
        True: examine every generator (reference mode).

    Returns
    -------
    (index, d2, evaluations): the generator index, its squared characteristic distance [m^2]
    (-1 if every generator is parallel to the circle plane) and the number of generators
    evaluated.
    """
    bx, by, bz, ux, uy, uz = _circle_in_frame(circ, r, a)
    return _fan_search_local(fan, bx, by, bz, ux, uy, uz, exhaustive)


@njit(**NJIT)
def fan_vs_circle(fan, r, a, circ, dn_max, exhaustive):
    """Generator fan of a petal's conical surface against a boundary circle (digest 9.5).

    Only the generators visited are used, and the circle is moved into the fan frame once
    (cheaper than moving generators into PU). Steps: (1) :func:`fan_search` finds the generator
    ``i`` with the largest characteristic distance ``d``; (2) if ``d <= rc`` there is no
    contact; (3) if its crossing parameter ``t_C`` is in [0, 1], evaluate
    :func:`segment_vs_circle_xyz` for it; (4) otherwise (variable-length generators near the
    side faces) scan the neighbours in the direction in which ``t_C`` moves back towards
    [0, 1]; the first generator with ``t_C`` in [0, 1] decides: contact if it crosses outside
    the circle, none if inside; reaching the end of the fan is no contact. (5) Valley guard:
    if the maximum is at one end of the fan and the other end is also a local maximum of
    ``d`` (a profile with an interior minimum, ~7 % of the digest's trials), steps 3-4 are
    applied to both ends and the deeper contact is kept. The normal and point are returned in
    PU; ``feature`` is the generator index.
    """
    bx, by, bz, ux, uy, uz = _circle_in_frame(circ, r, a)
    n = fan.shape[0]
    i, d2, _ = _fan_search_local(fan, bx, by, bz, ux, uy, uz, exhaustive)
    rc2 = circ[C_R] * circ[C_R]
    if d2 <= rc2:
        return _none()
    best = _fan_candidate(fan, i, bx, by, bz, ux, uy, uz, circ, dn_max)
    # valley guard: when the maximum is at one end and the other end is a local maximum too
    # (a profile with an interior minimum), the other end is a second candidate
    j = -1
    if i == 0:
        j = n - 1
    elif i == n - 1:
        j = 0
    if j >= 0:
        dj, _ = _fan_char(fan, j, bx, by, bz, ux, uy, uz)
        dn_, _ = _fan_char(fan, j + 1 if j == 0 else j - 1, bx, by, bz, ux, uy, uz)
        if dj > rc2 and dj > dn_:
            other = _fan_candidate(fan, j, bx, by, bz, ux, uy, uz, circ, dn_max)
            if other[0] != NONE and (best[0] == NONE or other[1] > best[1]):
                best = other
    st = best[0]
    if st != CONTACT and st != PENETRATION_EXCEEDED:
        return best
    nfx, nfy, nfz, pfx, pfy, pfz = best[2], best[3], best[4], best[5], best[6], best[7]
    # back to PU: n = A^T n_f, p = r + A^T p_f
    nx = a[0, 0] * nfx + a[1, 0] * nfy + a[2, 0] * nfz
    ny = a[0, 1] * nfx + a[1, 1] * nfy + a[2, 1] * nfz
    nz = a[0, 2] * nfx + a[1, 2] * nfy + a[2, 2] * nfz
    px = r[0] + a[0, 0] * pfx + a[1, 0] * pfy + a[2, 0] * pfz
    py = r[1] + a[0, 1] * pfx + a[1, 1] * pfy + a[2, 1] * pfz
    pz = r[2] + a[0, 2] * pfx + a[1, 2] * pfy + a[2, 2] * pfz
    return (st, best[1], nx, ny, nz, px, py, pz, best[8])


@njit(**NJIT)
def _fan_candidate(fan, i, bx, by, bz, ux, uy, uz, circ, dn_max):
    """Contact of the fan at candidate generator i (steps 3-4 of fan_vs_circle), fan frame."""
    n = fan.shape[0]
    rc = circ[C_R]
    d2i, tc = _fan_char(fan, i, bx, by, bz, ux, uy, uz)
    if not (0.0 <= tc <= 1.0):
        # direction in which t_C moves towards [0, 1]
        step = 0
        if i == 0:
            step = 1
        elif i == n - 1:
            step = -1
        else:
            _, tl = _fan_char(fan, i - 1, bx, by, bz, ux, uy, uz)
            _, tr = _fan_char(fan, i + 1, bx, by, bz, ux, uy, uz)
            if tc > 1.0:
                step = -1 if tl < tr else 1
            else:
                step = -1 if tl > tr else 1
        j = i + step
        found = -1
        while 0 <= j < n:
            d2j, tcj = _fan_char(fan, j, bx, by, bz, ux, uy, uz)
            if 0.0 <= tcj <= 1.0:
                if d2j <= rc * rc:
                    return _none()
                found = j
                break
            j += step
        if found < 0:
            return _none()
        i = found
    res = segment_vs_circle_xyz(fan[i, F_PX], fan[i, F_PY], fan[i, F_PZ], fan[i, F_LX],
                                fan[i, F_LY], fan[i, F_LZ], bx, by, bz, ux, uy, uz, rc,
                                circ[C_SIDE], dn_max)
    return (res[0], res[1], res[2], res[3], res[4], res[5], res[6], res[7], i)


# --------------------------------------------------------------------------------------------
# force law (digest 5)

@njit(**NJIT)
def contact_force(depth, nx, ny, nz, rvx, rvy, rvz, law):
    """Penalty force of one contact on the **passive** body, PU axes.

    Parameters
    ----------
    depth : float
        Penetration :math:`\\Delta_n` [m] (> 0).
    nx, ny, nz : float
        Unit normal :math:`\\mathbf n_R` (active -> passive).
    rvx, rvy, rvz : float
        Velocity of the active body's material point at the contact minus that of the
        passive body's point [m/s], PU axes.
    law : float64[LAW_SIZE]
        ``k_S, c_D, k_Fr, v_eps, model``.

    Returns
    -------
    (f_n, dn_dot, fx, fy, fz)
        Normal force magnitude [N] (>= 0), penetration rate [m/s], force on the passive body
        [N]; the active body gets ``-f`` at the same point.

    Notes
    -----
    .. math::

        \\dot\\Delta_n = \\mathbf n_R\\cdot\\mathbf v_{rel},\\quad
        f_n = \\max(0,\\ k_S\\Delta_n + c_D\\dot\\Delta_n)\\ \\text{(or } c_D\\Delta_n\\dot\\Delta_n
        \\text{, Hunt-Crossley)},\\quad
        \\mathbf v_T = \\mathbf v_{rel} - \\dot\\Delta_n\\mathbf n_R,\\quad
        \\mathbf f = f_n\\mathbf n_R + k_{Fr} f_n\\,\\mathbf v_T/\\sqrt{|\\mathbf v_T|^2+v_\\varepsilon^2}.

    Friction regularization: the Coulomb direction ``v_T/|v_T|`` is undefined at zero slip;
    ``v_T / sqrt(|v_T|^2 + v_eps^2)`` is a smooth saturation, equal to Coulomb within a relative
    ``v_eps^2 / (2 |v_T|^2)`` for ``|v_T| >> v_eps``, linear (viscous, coefficient
    ``k_Fr f_n / v_eps``) for ``|v_T| << v_eps``, and never exceeds ``k_Fr f_n``. No sticking
    is modelled (digest 5, dev note). Friction on the passive body acts along the active body's
    slip; on the active body it opposes its slip.
    """
    dd = nx * rvx + ny * rvy + nz * rvz
    if law[LAW_MODEL] == MODEL_HUNT_CROSSLEY:
        fn = law[LAW_K] * depth + law[LAW_C] * depth * dd
    else:
        fn = law[LAW_K] * depth + law[LAW_C] * dd
    if fn < 0.0:
        fn = 0.0
    tx = rvx - dd * nx
    ty = rvy - dd * ny
    tz = rvz - dd * nz
    ve = law[LAW_VEPS]
    g = law[LAW_MU] * fn / math.sqrt(tx * tx + ty * ty + tz * tz + ve * ve)
    return fn, dd, fn * nx + g * tx, fn * ny + g * ty, fn * nz + g * tz


@njit(**NJIT)
def contact_wrench(depth, nx, ny, nz, px, py, pz, tw_a, tw_p, law):
    """Force and moments of one contact on both bodies, PU axes (digest 3.5 and 5).

    Parameters
    ----------
    depth, nx, ny, nz, px, py, pz : float
        Fields of a contact tuple (``p`` is the common contact point in PU [m]).
    tw_a, tw_p : float64[TW_SIZE]
        Twists of the active body (buffer link) and the passive unit, PU axes:
        ``[v_O (3) [m/s], omega (3) [rad/s], O (3) [m]]`` with ``O`` the body's reference
        point (link origin; PU origin) and ``v_O`` its velocity. Point velocities are
        ``v_O + omega x (p - O)``.
    law : float64[LAW_SIZE]

    Returns
    -------
    (f_n, dn_dot, fx, fy, fz, m_px, m_py, m_pz, m_ax, m_ay, m_az)
        ``f`` [N] is the force on the passive body (the active body gets ``-f``);
        ``m_p`` [N m] the moment of ``f`` about ``O_p``; ``m_a`` the moment of ``-f`` about
        ``O_a``; all in PU axes (rotate with ``A_PUB`` for link axes).
    """
    ax_ = px - tw_a[TW_O]
    ay_ = py - tw_a[TW_O + 1]
    az_ = pz - tw_a[TW_O + 2]
    bx_ = px - tw_p[TW_O]
    by_ = py - tw_p[TW_O + 1]
    bz_ = pz - tw_p[TW_O + 2]
    wax, way, waz = tw_a[TW_W], tw_a[TW_W + 1], tw_a[TW_W + 2]
    wpx, wpy, wpz = tw_p[TW_W], tw_p[TW_W + 1], tw_p[TW_W + 2]
    vax = tw_a[TW_V] + way * az_ - waz * ay_
    vay = tw_a[TW_V + 1] + waz * ax_ - wax * az_
    vaz = tw_a[TW_V + 2] + wax * ay_ - way * ax_
    vpx = tw_p[TW_V] + wpy * bz_ - wpz * by_
    vpy = tw_p[TW_V + 1] + wpz * bx_ - wpx * bz_
    vpz = tw_p[TW_V + 2] + wpx * by_ - wpy * bx_
    fn, dd, fx, fy, fz = contact_force(depth, nx, ny, nz, vax - vpx, vay - vpy, vaz - vpz, law)
    mpx = by_ * fz - bz_ * fy
    mpy = bz_ * fx - bx_ * fz
    mpz = bx_ * fy - by_ * fx
    max_ = -(ay_ * fz - az_ * fy)
    may = -(az_ * fx - ax_ * fz)
    maz = -(ax_ * fy - ay_ * fx)
    return fn, dd, fx, fy, fz, mpx, mpy, mpz, max_, may, maz
