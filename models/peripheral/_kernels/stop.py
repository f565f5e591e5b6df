"""Peripheral unit: the stops that catch the latches, as numba kernels (contact-paper digest
9.7): their packed layout and the two detectors the latch kernel
(:mod:`models.peripheral._kernels.latch`) uses, the latch tip against the solid stop
(:func:`stop_solid_contact`) and the latch segment across the stop's crest plane
(:func:`latch_crossing`, the trigger test). Every quantity is in the axes of the passive unit
(PU, SI units; ``X_PU`` points from the passive interface plane into the passive craft).

A stop is a **solid** 45/45 ridge of finite angular width about ``X_PU`` (digest 9.7 with the
[reading] on the locking surface): in the meridian half-plane ``(x, rho)`` it is the right
isosceles triangle bounded by

* the guide face ``rho_g(x) = R_max - (x - x_0)``, which faces the approaching active unit
  (``-X_PU``), from its ``R_Stop,max`` edge at ``x_0 = x_Stop,0`` down to the crest;
* the locking face ``rho_l(x) = R_min + (x - x_top)``, which faces ``+X_PU`` (the free space
  behind the stop), from the crest back out to ``R_max``;
* the base ``rho = R_max``, where the stop joins the passive structure;

with the crest at ``(x_top, R_Stop,min)`` in the plane ``P_Stop: x = x_top``, and it spans the
azimuths within ``half_width`` of its angular position. Each face is the digest's parameterised
45-degree primitive ``rho_s(x) = rho_0 + sigma (x - x_0)`` (:func:`~models._kernels.contact.
point_vs_stop45`, ``sigma = -1`` guide, ``+1`` locking), material at ``rho > rho_s``.

Why a solid and not the two infinite cones: the paper tests the guide cone before trigger and
the locking cone after it, each as an unbounded surface. An unbounded guide cone pushes a latch
tip that has passed the crest (``x > x_top``) back and inwards with a penetration that grows
without bound, and an unbounded locking cone catches tips that are in front of the stop or
beside it; with three stops the latch beside a stop would also feel it. The solid gives each
tip the penetration of the face it is nearest to (its depth below that face), nothing outside
the triangle or outside the angular width, and a penetration continuous across the crest.
The parameters must satisfy ``x_top = x_0 + R_max - R_min`` (the two faces meet at the crest
at ``R_min``); the readable layer checks it.

References
----------
Seed digest ``docking-contact-models.md`` 9.7 (Golubev & Yaskevich, Keldysh preprint 4, 2020,
doi:10.20948/prepr-2020-4).
"""
from __future__ import annotations

import math

from numba import njit

from models._kernels import NJIT, NJIT_LEAF
from models._kernels.contact_layout import (
    AXIS_EPS, NONE, PARALLEL_EPS, S45_SIZE, check_penetration)
from models._kernels.contact_revolution import point_vs_stop45

__all__ = [
    "SP_CPHI", "SP_SPHI", "SP_COSHW", "SP_RMIN", "SP_RMAX", "SP_X0", "SP_XTOP", "SP_GUIDE",
    "SP_LOCK", "SP_XWALL", "SP_FILLET", "SP_SIZE", "FEAT_GUIDE", "FEAT_LOCK", "FEAT_CREST",
    "FEAT_WALL", "FEAT_FACE", "FEAT_EDGE",
    "stop_solid_contact", "latch_crossing",
]

# stops stp[j, :]
SP_CPHI = 0      # cos of the stop's angular position about X_PU (azimuth from Y_PU to Z_PU)
SP_SPHI = 1      # its sin
SP_COSHW = 2     # cos of the angular half-width
SP_RMIN = 3      # crest radius R_Stop,min [m]
SP_RMAX = 4      # base radius R_Stop,max [m]
SP_X0 = 5        # x_Stop,0: abscissa of the guide face's R_Stop,max edge [m]
SP_XTOP = 6      # x_Stop,top: abscissa of the crest, the plane P_Stop [m]
SP_GUIDE = 7     # the guide face as a 45-degree primitive (S45_SIZE, contact_layout S45_*)
SP_LOCK = SP_GUIDE + S45_SIZE    # the locking face (S45_SIZE)
SP_XWALL = SP_LOCK + S45_SIZE    # abscissa where the passive inner wall rho = R_max begins
#                                  (the passive ring plane) [m]; +inf: no wall
SP_FILLET = SP_XWALL + 1  # radius r_f of the fillet rounding the wall / ring-plane edge [m]
SP_SIZE = SP_FILLET + 1
# features of a latch-stop contact
FEAT_GUIDE = 0   # tip below the guide face
FEAT_LOCK = 1    # tip below the locking face
FEAT_CREST = 2   # segment A-E across the crest circle
FEAT_WALL = 3    # tip beyond the passive inner wall rho = R_max
FEAT_FACE = 4    # tip behind the passive ring plane, outside the inner wall
FEAT_EDGE = 5    # tip in the fillet rounding the edge between ring plane and inner wall

_SQRT1_2 = 0.7071067811865476


# --------------------------------------------------------------------------------------------
# the stop
@njit(**NJIT_LEAF)
def stop_solid_contact(x, y, z, stp, j, dn_max):
    """A point (latch tip) against the solid 45/45 ridge of stop ``j``.

    Parameters
    ----------
    x, y, z : float
        The point in PU [m].
    stp : float64[:, SP_SIZE]
        Stop table.
    j : int
        Stop index.
    dn_max : float
        Largest admissible penetration [m].

    Returns
    -------
    contact tuple ``(status, depth, nx, ny, nz, px, py, pz, feature)`` of
    :mod:`models._kernels.contact`: the penetration ``depth = Delta_L / sqrt 2`` below the
    nearer face (``FEAT_GUIDE`` or ``FEAT_LOCK``), its normal ``(-sigma, rho_hat) / sqrt 2``
    (active -> passive) and the point itself. No contact outside the triangle
    ``rho > max(rho_g(x), rho_l(x)), rho <= R_max`` or outside the angular width, except in
    the passive structure beyond the inner wall when the stop has one (``SP_XWALL`` finite):

    * a point with ``rho > R_max`` and ``x >= x_wall`` inside the angular width with
      ``x_0 < x < x_back`` is in the stop's base: the depth below the nearer face line;
    * elsewhere with ``rho > R_max`` and ``x >= x_wall`` (in front of the stop, beside it or
      behind it) it is in the ring's wall: ``FEAT_WALL``, depth ``rho - R_max``, normal
      ``(0, rho_hat)``; or, when ``x - x_wall`` is smaller, ``FEAT_FACE``, that depth, normal
      ``(1, 0, 0)`` (back out through the passive ring plane);
    * the convex edge where ring plane and wall meet is rounded by a fillet of radius
      ``r_f = SP_FILLET`` (a torus about ``X``, centre circle ``x_c = x_wall + r_f``,
      ``rho_c = R_max + r_f``): a point with ``x - x_wall < r_f`` and ``rho - R_max < r_f`` is
      in contact with the fillet, ``FEAT_EDGE``, depth ``r_f - d_c`` with ``d_c`` its distance
      to the centre circle in the ``(x, rho)`` half-plane, normal towards that circle
      (``(x_c - x, rho_c - rho) / d_c`` in ``(X, rho_hat)``); no contact where ``d_c >= r_f``
      (the rounded-off corner).

    Why the fillet: with a sharp edge the depth ``min(x - x_wall, rho - R_max)`` is
    continuous but its normal jumps from ``X`` to ``rho_hat`` across the diagonal, so a tip
    striking the edge gets its force direction from a tie that rounding decides (rotated runs
    of one docking parted). On the fillet the normal turns continuously; its depth meets the
    flats' depths on the square's sides. The flats' diagonal ``x - x_wall = rho - R_max``
    still switches normals beyond the square, at depths above ``r_f``; with ``r_f`` at least
    the penetration limit that lies beyond the abort depth.

    Why the wall: the stop's ``R_Stop,max`` edge lies on the passive ring's inner wall, which
    runs from the ring plane ``x_wall`` to the guide face. A laterally offset ring (the petals
    allow up to their 30 mm base clearance) carries a latch tip, 11 mm inside the wall when
    centred, beyond the wall radius; without the wall it travelled inside the passive
    structure unseen and met the stop through the triangle's base, already deeper than the
    penetration limit below the guide face. With the wall it is pushed in radially (the latch
    retracts: ``n_L . n_R = cos 30``) and slides along the wall onto the guide face, where the
    depths agree at the ``R_max`` edge.
    """
    rho = math.sqrt(y * y + z * z)
    if rho < AXIS_EPS:
        return (NONE, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1)
    inside = y * stp[j, SP_CPHI] + z * stp[j, SP_SPHI] >= rho * stp[j, SP_COSHW]
    if rho > stp[j, SP_RMAX]:
        xw = stp[j, SP_XWALL]
        if x < xw:
            return (NONE, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1)
        x_back = stp[j, SP_XTOP] + stp[j, SP_RMAX] - stp[j, SP_RMIN]
        if not (inside and stp[j, SP_X0] < x < x_back):
            # in the passive structure beside or in front of the stop: out through the wall
            # (radially) or, when nearer, back through the ring plane
            dw = rho - stp[j, SP_RMAX]
            df = x - xw
            rf = stp[j, SP_FILLET]
            if df < rf and dw < rf:
                # the fillet: (ax, ar) from the point to the fillet's centre circle
                ax = rf - df
                ar = rf - dw
                dc = math.sqrt(ax * ax + ar * ar)
                if dc >= rf:
                    return (NONE, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1)
                if dc < AXIS_EPS:
                    ax, ar, dc = 1.0, 0.0, 1.0
                inv = 1.0 / dc
                nr = ar * inv / rho
                st = check_penetration(rf - dc, dn_max)
                return (st, rf - dc, ax * inv, y * nr, z * nr, x, y, z, FEAT_EDGE)
            if df < dw:
                st = check_penetration(df, dn_max)
                return (st, df, 1.0, 0.0, 0.0, x, y, z, FEAT_FACE)
            inv = 1.0 / rho
            st = check_penetration(dw, dn_max)
            return (st, dw, 0.0, y * inv, z * inv, x, y, z, FEAT_WALL)
        # in the stop's base (behind its faces' R_max edges): out through the nearer face,
        # depth from the face lines extended (their feet may lie beyond the R_max edges)
        dg = rho - (stp[j, SP_RMAX] - (x - stp[j, SP_X0]))
        dlk = rho - (stp[j, SP_RMIN] + (x - stp[j, SP_XTOP]))
        inv = _SQRT1_2 / rho
        if dg <= dlk:
            st = check_penetration(dg * _SQRT1_2, dn_max)
            return (st, dg * _SQRT1_2, _SQRT1_2, y * inv, z * inv, x, y, z, FEAT_GUIDE)
        st = check_penetration(dlk * _SQRT1_2, dn_max)
        return (st, dlk * _SQRT1_2, -_SQRT1_2, y * inv, z * inv, x, y, z, FEAT_LOCK)
    if not inside:
        return (NONE, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1)
    g = point_vs_stop45(x, y, z, stp[j, SP_GUIDE:SP_GUIDE + S45_SIZE], 1e300)
    if g[0] == NONE:
        return (NONE, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1)
    lk = point_vs_stop45(x, y, z, stp[j, SP_LOCK:SP_LOCK + S45_SIZE], 1e300)
    if lk[0] == NONE:
        return (NONE, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1)
    if g[1] <= lk[1]:
        st = check_penetration(g[1], dn_max)
        return (st, g[1], g[2], g[3], g[4], x, y, z, FEAT_GUIDE)
    st = check_penetration(lk[1], dn_max)
    return (st, lk[1], lk[2], lk[3], lk[4], x, y, z, FEAT_LOCK)


@njit(**NJIT_LEAF)
def latch_crossing(ax, ay, az, ex, ey, ez, stp, j):
    """Crossing of the latch segment ``A -> E`` with the plane ``P_Stop`` of stop ``j``.

    Returns
    -------
    (crosses, d_C, cy, cz)
        ``crosses`` is True when the segment meets ``x = x_top`` (parameter in ``[0, 1]``,
        not parallel) at a point ``C`` within the stop's angular width; ``d_C`` [m] is the
        distance of ``C`` from ``X_PU`` and ``(cy, cz)`` its lateral coordinates [m].
    """
    lx = ex - ax
    ly = ey - ay
    lz = ez - az
    llen = math.sqrt(lx * lx + ly * ly + lz * lz)
    if abs(lx) <= PARALLEL_EPS * llen:
        return False, 0.0, 0.0, 0.0
    t = (stp[j, SP_XTOP] - ax) / lx
    if t < 0.0 or t > 1.0:
        return False, 0.0, 0.0, 0.0
    cy = ay + t * ly
    cz = az + t * lz
    dc = math.sqrt(cy * cy + cz * cz)
    if cy * stp[j, SP_CPHI] + cz * stp[j, SP_SPHI] < dc * stp[j, SP_COSHW]:
        return False, dc, cy, cz
    return True, dc, cy, cz
