"""Peripheral unit kernel: the ring-ring contacts' damping and friction taken implicitly on the
ring (linearised), for the steps after capture.

Why
---
Captured, the 40 kg ring sits on its seat: the twelve ring-plane points, the six fans on the
inner circles and the side-face edges on the circles, ~20-60 um deep at 20-150 N each, pressed
there only by the legs' forces (the triggered latches rarely touch their locking faces). The
vehicles' swing on the legs (0.3 Hz) moves that load, the ring rocks on its seat and its
contacts open and close some hundreds of times a second. Each onset is a jump ``c_D dn'`` of
the linear law, and the seat's modes (the ring on ~12 contacts of 2e6 N/m, ~550-780 rad/s,
with the contacts' damping ``-300 +- 710 i`` 1/s) are barely resolved at a millisecond step:
the explicit damping and regularised friction (slope ``k_Fr f_n / v_eps`` per contact, up to
~300 1/s summed on the ring) then book dissipation that the integrated motion never lost,
and the energy ledger sees the step. Integrated implicitly the contacts' velocity terms
relax within the step whatever their rate, so that the step is bounded by the seat's
stiffness alone.

Model
-----
The stage's contact forces are the explicit law at the state; the ring's accelerations are
then solved with the contacts' velocity Jacobian taken at the velocity the ring reaches in
``h_g = gamma h`` (``gamma = 1/2``, the same in every stage), relative to the passive unit's
point moving with it::

    (M + h_g D) A = M A_0 + h_g D A_P

``A = [a_c, eps]`` the ring's inertial acceleration (centre) and angular acceleration, PU axes;
``A_0`` the same from the explicit forces; ``A_P`` the passive unit's material point at the ring
centre (from this stage's explicit forces: ``a_O2 + alpha_2 x r + w_2 x (w_2 x r)``) and its
angular acceleration; ``M = diag(m_R I, J_R,PU)``;
``D = sum_c J_c^T D_c J_c`` over the contacts, ``J_c = [I, -[r_c]x]`` (``r_c`` the contact point
from the ring centre) and, for the law of :func:`models._kernels.contact_force.contact_force`
with ``f_n > 0``::

    D_c = c n n^T + g (I - n n^T - t t^T / s^2),   g = k_Fr f_n / s,   s^2 = |t|^2 + v_eps^2

(``c = c_D``, or ``c_D dn`` for Hunt-Crossley; ``t`` the tangential relative velocity; the
dependence of the friction on ``f_n``'s rate and the velocity-product terms of the point
accelerations are left out: they do not make the step stiff). The change of the ring's
wrench ``dW = M (A - A_0) = -h_g D (A - A_P)`` acts between the ring and the passive unit along
the contacts: the passive unit gets ``-dW`` (about the ring centre), the interface loads and
the contact dissipation include it, so momenta and the energy ledger stay exact and only the
integration of the contacts' velocity terms changes (to first order in ``h``, as the implicit
head friction of the probe-cone unit, :func:`models.probe_cone._kernels.stage._implicit_head`).
A mode of rate ``lambda`` of those terms enters RK4 as ``lambda / (1 + h_g lambda)``.

What the step then resolves: on the seat's normal mode the implicit damping acts as an added
inertia ``h_g c_D`` per closed contact (5 kg at a 5-ms step, ~60 kg on twelve seat points
against the ring's 40 kg), so that mode (~780 rad/s on twelve 2e6 N/m contacts) runs near
~490 rad/s in the integration and RK4's bound on it, ``omega h = 2.8``, lies near 6 ms
(the reference and random captures keep the ledger at 6 ms and lose it at 6.7 ms,
``docs/design/peripheral_captured_step.rst``). That mode is not resolved at such a step; the
channels a reconstruction fits (ring pose, legs, body rates) stay within a few tenths of a
millimetre and milliradian of a small-step run, as at the explicit steps before.

Layout: ``D`` is float64[36], row-major, only ``i <= j`` written by :func:`add_contact`
(:func:`ring_correction` mirrors it); ``wk`` float64[NW] work.
"""
from __future__ import annotations

import math

from numba import njit

from models._kernels import NJIT, NJIT_LEAF
from models._kernels.contact_layout import LAW_C, LAW_MODEL, LAW_MU, LAW_VEPS, \
    MODEL_HUNT_CROSSLEY

__all__ = ["GAMMA", "ND", "NW", "add_contact", "ring_correction"]

#: the contacts' velocity terms are taken at v + GAMMA h a (the probe-cone unit's choice)
GAMMA = 0.5
ND = 36            # D, 6 x 6 row-major [N s/m, N s, N m s]
NW = 36 + 6 + 6    # work: the matrix M + h_g D, the right-hand side, the solution


@njit(**NJIT_LEAF)
def _rank1(D, s, u0, u1, u2, u3, u4, u5):
    """``D += s u u^T`` (upper triangle)."""
    u = (u0, u1, u2, u3, u4, u5)
    for i in range(6):
        a = s * u[i]
        for j in range(i, 6):
            D[6 * i + j] += a * u[j]


@njit(**NJIT_LEAF)
def add_contact(D, law, fn, dd, depth, nx, ny, nz, rvx, rvy, rvz, rx, ry, rz):
    """Add one contact's ``J_c^T D_c J_c`` to ``D`` (module docstring): normal ``n``, relative
    velocity ``rv`` (active - passive) [m/s], penetration ``depth`` [m] and its rate ``dd``
    [m/s], normal force ``fn`` [N], contact point ``r`` from the ring centre [m], PU axes."""
    if fn <= 0.0:
        return
    c = law[LAW_C] * depth if law[LAW_MODEL] == MODEL_HUNT_CROSSLEY else law[LAW_C]
    tx = rvx - dd * nx
    ty = rvy - dd * ny
    tz = rvz - dd * nz
    s2 = tx * tx + ty * ty + tz * tz + law[LAW_VEPS] ** 2
    g = law[LAW_MU] * fn / math.sqrt(s2)
    # g J^T J: [[I, -[r]x], [[r]x, |r|^2 I - r r^T]]
    D[0] += g; D[7] += g; D[14] += g
    D[4] += g * rz; D[5] -= g * ry      # row 0: -[r]x = [[0, rz, -ry], ...]
    D[9] -= g * rz; D[11] += g * rx     # row 1: [-rz, 0, rx]
    D[15] += g * ry; D[16] -= g * rx    # row 2: [ry, -rx, 0]
    r2 = rx * rx + ry * ry + rz * rz
    D[21] += g * (r2 - rx * rx); D[22] -= g * rx * ry; D[23] -= g * rx * rz
    D[28] += g * (r2 - ry * ry); D[29] -= g * ry * rz
    D[35] += g * (r2 - rz * rz)
    # (c - g) u u^T, u = [n, r x n]; -(g / s^2) v v^T, v = [t, r x t]
    _rank1(D, c - g, nx, ny, nz, ry * nz - rz * ny, rz * nx - rx * nz, rx * ny - ry * nx)
    _rank1(D, -g / s2, tx, ty, tz, ry * tz - rz * ty, rz * tx - rx * tz, rx * ty - ry * tx)


@njit(**NJIT_LEAF)
def ring_correction(D, hg, m, JR, R, x0, wk, dw):
    """The ring's wrench correction ``dW = -h_g D x`` [N, N m] into ``dw`` (6, PU axes, moment
    about the ring centre), with ``x = A - A_P`` from ``(M + h_g D) x = M x0``, ``x0 = A_0 - A_P``
    [m/s^2, rad/s^2] (module docstring). ``m`` [kg], ``JR`` the ring's inertia in ring axes
    (9, row-major) [kg m^2], ``R`` PU -> ring axes. Cholesky on ``wk``; ``dw`` zero when the
    matrix is not positive definite (never for ``h_g D`` positive semi-definite)."""
    A = wk
    b = wk[36:42]
    x = wk[42:48]
    for i in range(6):
        for j in range(i, 6):
            v = hg * D[6 * i + j]
            A[6 * i + j] = v
            A[6 * j + i] = v
    # J_PU = R^T J_R R (symmetric): its upper triangle into x first, then into A and b
    n = 0
    for i in range(3):
        for j in range(i, 3):
            s = 0.0
            for k in range(3):
                t = JR[3 * k] * R[0, j] + JR[3 * k + 1] * R[1, j] + JR[3 * k + 2] * R[2, j]
                s += R[k, i] * t
            x[n] = s
            n += 1
    j00 = x[0]; j01 = x[1]; j02 = x[2]; j11 = x[3]; j12 = x[4]; j22 = x[5]
    A[21] += j00; A[22] += j01; A[23] += j02
    A[27] += j01; A[28] += j11; A[29] += j12
    A[33] += j02; A[34] += j12; A[35] += j22
    for i in range(3):
        A[7 * i] += m
        b[i] = m * x0[i]
    b[3] = j00 * x0[3] + j01 * x0[4] + j02 * x0[5]
    b[4] = j01 * x0[3] + j11 * x0[4] + j12 * x0[5]
    b[5] = j02 * x0[3] + j12 * x0[4] + j22 * x0[5]
    # Cholesky A = L L^T in place (lower triangle)
    for j in range(6):
        s = A[7 * j]
        for k in range(j):
            s -= A[6 * j + k] ** 2
        if s <= 0.0:
            for i in range(6):
                dw[i] = 0.0
            return
        d = math.sqrt(s)
        A[7 * j] = d
        for i in range(j + 1, 6):
            s = A[6 * i + j]
            for k in range(j):
                s -= A[6 * i + k] * A[6 * j + k]
            A[6 * i + j] = s / d
    for i in range(6):
        s = b[i]
        for k in range(i):
            s -= A[6 * i + k] * x[k]
        x[i] = s / A[7 * i]
    for i in range(5, -1, -1):
        s = x[i]
        for k in range(i + 1, 6):
            s -= A[6 * k + i] * x[k]
        x[i] = s / A[7 * i]
    for i in range(6):
        s = 0.0
        for j in range(6):
            s += D[6 * min(i, j) + max(i, j)] * x[j]
        dw[i] = -hg * s
