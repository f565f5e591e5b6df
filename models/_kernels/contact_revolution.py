"""Contact kernels, part 2: primitives against surfaces of revolution about X_PU (digest 7.1-7.4,
9.4, 9.7): a sphere or point against a meridian polyline (receiving cone, socket, bottom), a
plane fragment normal to X_PU, and the 45-degree stop surfaces of a peripheral unit (latch
point and latch segment against the crest circle). Contract and layouts:
:mod:`models._kernels.contact`."""
from __future__ import annotations

import math

from numba import njit

from models._kernels import NJIT, NJIT_LEAF
from models._kernels.contact_layout import (
    GEOMETRY_RANGE, M_X, M_RHO, M_TX, M_TRHO, M_LEN, M_KIND, KIND_CONVEX, KIND_CONCAVE, PL_X,
    PL_RMIN, PL_RMAX, PL_SIDE, S45_RHO0, S45_X0, S45_SIGMA, S45_XLO, S45_XHI, S45_XCREST,
    S45_RCREST, AXIS_EPS, PARALLEL_EPS, _SQRT1_2, _none, check_penetration)

__all__ = ["sphere_vs_revolution", "sphere_vs_plane", "point_vs_stop45", "segment_vs_stop45_crest"]


@njit(**NJIT_LEAF)
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


@njit(**NJIT_LEAF)
def _face_free_distance(mer, k, xs, dl):
    """Foot parameter s and free-side distance h of (xs, dl) from meridian segment k."""
    ax = xs - mer[k, M_X]
    ar = dl - mer[k, M_RHO]
    tx = mer[k, M_TX]
    tr = mer[k, M_TRHO]
    s = ax * tx + ar * tr
    h = ax * tr - ar * tx  # = -(S - V) . n, n = (-tr, tx)
    return s, h


@njit(**NJIT_LEAF)
def sphere_vs_revolution(xs, ys, zs, rs, mer, dn_max, start):
    """Sphere (or point, ``rs = 0``) against a surface of revolution about X_PU.

    Nearest-feature (Voronoi) classification in the meridian half-plane of the centre
    (digest 7.2 note): feature ``2k`` is face ``k`` (segment from vertex ``k`` to ``k+1``:
    truncated cone 7.1, cylinder 7.3 or annular plane 7.4), feature ``2k-1`` is interior vertex
    ``k`` (a convex rim, 7.2, when the centre is on the free side; a concave corner's own region
    lies inside the material and only matters for deep points). A sphere whose centre is on the
    free side touches face ``k`` when the foot of its perpendicular lies on the segment and the
    free-side distance ``h < rs``; it touches convex vertex ``V`` when
    ``(S-V).t_prev > 0 > (S-V).t_next`` (evaluated as the neighbouring faces' foot
    parameters, so face and vertex regions cannot overlap by rounding) and ``|S-V| < rs``.
    These regions tile the free side, so no shallow contact falls between them; at a concave corner the two faces overlap and give
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
    contact tuple (see :mod:`models._kernels.contact`). The contact point is the deepest point
    of the sphere, ``P_S + rs n_R``.
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
            # the vertex's region is where neither neighbouring face's foot lies on it, with
            # the feet computed exactly as the face tests compute them: (S-V).t_prev > 0
            # written as s_prev > len_prev, so that rounding cannot put a centre in both a
            # face's and its vertex's region (a sphere centred on the rim's own radius gave
            # the face contact and the rim contact at once)
            s_prev, _h = _face_free_distance(mer, k - 1, xs, dl)
            if s_prev <= mer[k - 1, M_LEN]:
                continue
            s_next, _h = _face_free_distance(mer, k, xs, dl)
            if s_next >= 0.0:
                continue
            ax = xs - mer[k, M_X]
            ar = dl - mer[k, M_RHO]
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


@njit(**NJIT_LEAF)
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


@njit(**NJIT_LEAF)
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


@njit(**NJIT_LEAF)
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
