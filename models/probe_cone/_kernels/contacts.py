"""Probe-cone kernel, stage contacts: the head and housing (limiter pads, alignment rollers)
against the receiving cone, and the force law that sums every contact of a stage into the
contact accumulator ``ACC_*`` (:func:`_contact_apply`). Called by the stage derivative
(:func:`models.probe_cone._kernels.stage._rhs`); contact detectors in
:mod:`models._kernels.contact`, layouts in :mod:`models.probe_cone._kernels.layout`.
Private to the probe-cone kernel (names with a leading underscore)."""
from __future__ import annotations

import math

from numba import njit

from models._kernels import NJIT, NJIT_LEAF
from models._kernels import contact as ck
from models.probe_cone._kernels import trace as pct
from models._kernels.contact_force import point_velocity
from models.probe_cone._kernels.layout import *  # noqa: F401,F403  (the ACC_/HC_/ST_ layouts)
from models._kernels.trace_layout import R_PC_HOUSING, R_PC_PAD_MOUTH, TX_MASK

__all__ = ["acc_add3", "_contact_apply", "_sphere_contacts", "_housing_contacts"]


@njit(inline="always", **NJIT)
def acc_add3(acc, o, x, y, z):
    """Add the vector ``(x, y, z)`` to ``acc[o:o + 3]`` (a force or moment sum)."""
    acc[o] += x
    acc[o + 1] += y
    acc[o + 2] += z


@njit(**NJIT_LEAF)
def _contact_apply(st, dn, nx, ny, nz, cpx, cpy, cpz, twa, twp, law, acc, link):
    """Force law for one contact (PU axes) and accumulation into the contact sums ``acc``
    (``ACC_*``): force on the passive unit and its moment, dissipated and elastic power,
    stored energy, count; for a head contact (``link`` 0) the moment of the head's force
    about the head centre, for a housing contact (``link`` 1) its force on the passive unit,
    the moment of the housing's force about the joint and the housing count."""
    fn, dd, fx, fy, fz, mpx, mpy, mpz, max_, may, maz = ck.contact_wrench(
        dn, nx, ny, nz, cpx, cpy, cpz, twa, twp, law)
    # relative velocity at the point (active - passive) to get the absorbed power f.v_rel
    vax, vay, vaz = point_velocity(twa, 0, cpx, cpy, cpz)
    vpx, vpy, vpz = point_velocity(twp, 0, cpx, cpy, cpz)
    p_abs = fx * (vax - vpx) + fy * (vay - vpy) + fz * (vaz - vpz)
    kel = law[ck.LAW_K] * dn
    acc_add3(acc, ACC_F, fx, fy, fz)
    acc_add3(acc, ACC_M, mpx, mpy, mpz)
    if link == 0:
        acc_add3(acc, ACC_M_HEAD, max_, may, maz)
        if fn > 0.0 and law[ck.LAW_MU] > 0.0:
            # velocity Jacobian of the regularized friction on the head: g (I - n n^T), with
            # g = k_Fr f_n / sqrt(|v_T|^2 + v_eps^2) the friction's viscous slope (its largest
            # eigenvalue; along the slip it is smaller), for the implicit treatment in _rhs
            rvx = vax - vpx
            rvy = vay - vpy
            rvz = vaz - vpz
            rn = rvx * nx + rvy * ny + rvz * nz
            tx = rvx - rn * nx
            ty = rvy - rn * ny
            tz = rvz - rn * nz
            ve = law[ck.LAW_VEPS]
            q = 1.0 / (tx * tx + ty * ty + tz * tz + ve * ve)
            g = law[ck.LAW_MU] * fn * math.sqrt(q)
            # g (I - n n^T - v_T v_T^T / (|v_T|^2 + v_eps^2)): symmetric, v_T normal to n
            acc[ACC_D] += g * (1.0 - nx * nx - tx * tx * q)
            acc[ACC_D + 1] -= g * (nx * ny + tx * ty * q)
            acc[ACC_D + 2] -= g * (nx * nz + tx * tz * q)
            acc[ACC_D + 3] += g * (1.0 - ny * ny - ty * ty * q)
            acc[ACC_D + 4] -= g * (ny * nz + ty * tz * q)
            acc[ACC_D + 5] += g * (1.0 - nz * nz - tz * tz * q)
    else:
        acc_add3(acc, ACC_F_HOUSING, fx, fy, fz)
        acc_add3(acc, ACC_M_HOUSING, max_, may, maz)
        acc[ACC_N_HOUSING] += 1.0
    acc[ACC_P_DISS] += p_abs - kel * dd
    acc[ACC_P_EL] += kel * dd
    acc[ACC_E_EL] += 0.5 * kel * dn
    acc[ACC_N] += 1.0


@njit(inline="always", **NJIT)
def _sphere_contacts(xs, ys, zs, rs, mer, dnmax, tw_link, twp, law, acc, link, tr, trn, tcx,
                     code, i, j):
    """Every contact of a sphere (a point for ``rs = 0``) with the surface of revolution
    ``mer``, the detector resumed feature by feature (:mod:`models._kernels.contact`), each
    applied by :func:`_contact_apply` for ``link`` (twist ``tw_link``). Returns
    ``(status, n, bottom)``: ``ST_OK``, or ``ST_PENETRATION`` / ``ST_GEOMETRY`` at the first
    such contact (the ones before it are applied); the number of contacts applied; whether
    one is on the socket bottom (the last face of the meridian). Inlined at numba IR level
    (``inline="always"``), as :func:`_unit_frame` (five array arguments). With tracing on
    (``tcx[TX_MASK] != 0``) every contact the detector reports is written to ``tr`` as
    routine ``code`` with the indices ``i``, ``j`` (:mod:`models.probe_cone._kernels.trace`)."""
    nmer = mer.shape[0]
    n = 0
    bottom = False
    feat = 0
    while True:
        st, dn, nx, ny, nz, cpx, cpy, cpz, f = ck.sphere_vs_revolution(
            xs, ys, zs, rs, mer, dnmax, feat)
        if st == ck.NONE:
            return ST_OK, n, bottom
        if tcx[TX_MASK] != 0.0:
            pct.point_contact_row(tr, trn, tcx, law, tw_link, twp, code, i, j, st, dn, nx, ny,
                                  nz, cpx, cpy, cpz, xs, ys, zs, rs, f)
        if st == ck.PENETRATION_EXCEEDED:
            return ST_PENETRATION, n, bottom
        if st == ck.GEOMETRY_RANGE:
            return ST_GEOMETRY, n, bottom
        if f == 2 * (nmer - 2):
            bottom = True
        _contact_apply(st, dn, nx, ny, nz, cpx, cpy, cpz, tw_link, twp, law, acc, link)
        n += 1
        feat = f + 1


@njit(inline="always", **NJIT)
def _housing_point(hc, i, col, C, ox, oy, oz):
    """Point ``hc[i, col:col + 3]`` (housing frame) in PU: ``o + C p`` [m]."""
    a = hc[i, col]
    b = hc[i, col + 1]
    c = hc[i, col + 2]
    return (ox + C[0, 0] * a + C[0, 1] * b + C[0, 2] * c,
            oy + C[1, 0] * a + C[1, 1] * b + C[1, 2] * c,
            oz + C[2, 0] * a + C[2, 1] * b + C[2, 2] * c)


@njit(**NJIT_LEAF)
def _housing_contacts(hc, mer, P, C, ox, oy, oz, twm, twp, law, dnmax, acc, tr, trn, tcx):
    """Limiter pads and alignment rollers (housing primitives ``hc``, housing frame) against
    the receiving cone; ``C`` the housing -> PU rotation, ``o`` the joint in PU. Pad
    endpoints are points (``R_S = 0``) against the surface of revolution (digest 7.1-7.4);
    pad segments against the mouth circle (7.6); rollers are spheres (7.1, 7.2). Forces and
    moments go into the contact sums ``acc`` (``ACC_*``, link 1). Returns a status."""
    mx = P[P_MOUTH_X]
    mr = P[P_MOUTH_R]
    for i in range(hc.shape[0]):
        kind = hc[i, HC_KIND]
        p1x, p1y, p1z = _housing_point(hc, i, HC_P1, C, ox, oy, oz)
        if kind == HC_ROLLER:
            npt = 1
            rs = hc[i, HC_R]
        else:
            npt = 2
            rs = 0.0
            p2x, p2y, p2z = _housing_point(hc, i, HC_P2, C, ox, oy, oz)
        deep_far = False   # the pad end beyond the mouth plane touches the cone itself
        for j in range(npt):
            if j == 0:
                qx = p1x
                qy = p1y
                qz = p1z
            else:
                qx = p2x
                qy = p2y
                qz = p2z
            st, n, _ = _sphere_contacts(qx, qy, qz, rs, mer, dnmax, twm, twp, law, acc, 1, tr,
                                        trn, tcx, R_PC_HOUSING, i, j)
            if st != ST_OK:
                return st
            if n > 0 and qx > mx:
                deep_far = True
        # segment vs mouth circle (7.6): only when the pad wraps round the rim, i.e. its end
        # beyond the mouth plane is free (inside the cone). Otherwise that end is in the
        # interface-plane material and its point contact is the contact; the tangent-line
        # depth of 7.6 would then be the distance from the rim, not a penetration.
        if kind != HC_ROLLER and mr > 0.0 and not deep_far:
            st, dn, nx, ny, nz, cpx, cpy, cpz, f = ck.segment_vs_circle_xyz(
                p1x, p1y, p1z, p2x - p1x, p2y - p1y, p2z - p1z, mx, 0.0, 0.0, 1.0, 0.0, 0.0,
                mr, 1.0, dnmax)
            if st != ck.NONE and tcx[TX_MASK] != 0.0:
                pct.segment_contact_row(tr, trn, tcx, law, twm, twp, R_PC_PAD_MOUTH, i, -1, st,
                                        dn, nx, ny, nz, cpx, cpy, cpz, p1x, p1y, p1z, p2x - p1x,
                                        p2y - p1y, p2z - p1z, math.nan)
            if st == ck.PENETRATION_EXCEEDED:
                return ST_PENETRATION
            if st == ck.GEOMETRY_RANGE:
                return ST_GEOMETRY
            if st == ck.CONTACT:
                _contact_apply(st, dn, nx, ny, nz, cpx, cpy, cpz, twm, twp, law, acc, 1)
    return ST_OK
