"""Contact kernels, part 3: segments against circles, segments and slots (digest 7.6, 7.7,
8.5, 9.5): a segment against a boundary circle, two segments, a latch reverse segment against
a socket slot, and a petal's generator fan against a circle. Contract and layouts:
:mod:`models._kernels.contact`."""
from __future__ import annotations

import math

from numba import njit

from models._kernels import NJIT, NJIT_LEAF
from models._kernels.contact_layout import (
    NONE, CONTACT, PENETRATION_EXCEEDED, GEOMETRY_RANGE, C_BX, C_BY, C_BZ, C_UX, C_UY, C_UZ, C_R,
    C_SIDE, SL_VX, SL_EX, SL_ET, SL_EN, SL_DLL1, SL_DLX1, SL_DLX2, SL_TANB, SL_SINB, SL_COSB,
    SL_DLL2, SLOT_STOP, SLOT_NARROW, SLOT_INCLINED, SLOT_WIDE, SLOT_EDGE, SLOT_BORE, F_PX, F_PY,
    F_PZ, F_LX, F_LY, F_LZ, PARALLEL_EPS, PERP_MIN, _none, check_penetration)

__all__ = [
    "segment_vs_circle_xyz", "segment_vs_circle", "segment_vs_segment", "segment_vs_slot",
    "fan_search", "fan_vs_circle",
]


@njit(**NJIT_LEAF)
def _plane_crossing(p1x, p1y, p1z, lx, ly, lz, bx, by, bz, ux, uy, uz):
    """Where the segment ``P1 + t L, t in [0, 1]`` crosses the plane through ``B`` with unit
    normal ``u``: ``(found, P_C (3), L.u, |L|^2)``. Not found when the segment is parallel to
    the plane (``(L.u)^2 <= PARALLEL_EPS^2 |L|^2``) or crosses it outside ``[0, 1]``."""
    den = ux * lx + uy * ly + uz * lz
    llen2 = lx * lx + ly * ly + lz * lz
    if den * den <= PARALLEL_EPS * PARALLEL_EPS * llen2:
        return False, 0.0, 0.0, 0.0, den, llen2
    tc = (ux * (bx - p1x) + uy * (by - p1y) + uz * (bz - p1z)) / den
    if tc < 0.0 or tc > 1.0:
        return False, 0.0, 0.0, 0.0, den, llen2
    return True, p1x + tc * lx, p1y + tc * ly, p1z + tc * lz, den, llen2


@njit(**NJIT_LEAF)
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
    found, cx, cy, cz, _, llen2 = _plane_crossing(p1x, p1y, p1z, lx, ly, lz, bx, by, bz, ux,
                                                  uy, uz)
    if not found:
        return _none()
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


@njit(**NJIT_LEAF)
def segment_vs_circle(p1x, p1y, p1z, lx, ly, lz, circ, dn_max):
    """Segment ``P1 + t L`` against the packed circle ``circ`` (``C_*``); see
    :func:`segment_vs_circle_xyz`."""
    return segment_vs_circle_xyz(p1x, p1y, p1z, lx, ly, lz, circ[C_BX], circ[C_BY], circ[C_BZ],
                                 circ[C_UX], circ[C_UY], circ[C_UZ], circ[C_R], circ[C_SIDE],
                                 dn_max)


@njit(**NJIT_LEAF)
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


@njit(**NJIT_LEAF)
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
    found, cx, cy, cz, den, _ = _plane_crossing(p1x, p1y, p1z, lx, ly, lz, vx, vy, vz, enx,
                                                eny, enz)
    if not found:
        return _none()
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


@njit(**NJIT_LEAF)
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

@njit(**NJIT_LEAF)
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


@njit(**NJIT_LEAF)
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


@njit(**NJIT_LEAF)
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


@njit(**NJIT_LEAF)
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


@njit(**NJIT_LEAF)
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


@njit(**NJIT_LEAF)
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
