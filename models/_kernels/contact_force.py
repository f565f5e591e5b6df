"""Contact kernels, part 4: the penalty force law of one contact and its wrench on both bodies
(digest 3.5 and 5). Contract and layouts: :mod:`models._kernels.contact`."""
from __future__ import annotations

import math

from numba import njit

from models._kernels import NJIT, NJIT_LEAF
from models._kernels.contact_layout import (
    LAW_K, LAW_C, LAW_MU, LAW_VEPS, LAW_MODEL, MODEL_HUNT_CROSSLEY, TW_V, TW_W, TW_O)

__all__ = ["contact_force", "contact_wrench", "point_velocity"]


@njit(**NJIT_LEAF)
def point_velocity(tw, o, px, py, pz):
    """Velocity of the material point ``p`` [m] of the body whose twist (contact layout
    ``TW_*``: velocity of the reference point [m/s], omega [rad/s], the reference point [m])
    starts at ``tw[o]``: ``v_O + omega x (p - O)`` [m/s]."""
    rx = px - tw[o + TW_O]; ry = py - tw[o + TW_O + 1]; rz = pz - tw[o + TW_O + 2]
    wx = tw[o + TW_W]; wy = tw[o + TW_W + 1]; wz = tw[o + TW_W + 2]
    return (tw[o + TW_V] + wy * rz - wz * ry, tw[o + TW_V + 1] + wz * rx - wx * rz,
            tw[o + TW_V + 2] + wx * ry - wy * rx)


@njit(**NJIT_LEAF)
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


@njit(**NJIT_LEAF)
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
