"""Kernels of the spacecraft + planar elastic rod chain (Russkikh), full and reduced formulations.

The equations are assembled numerically at every right-hand-side call (route (b) of the digest
``shared/seeds/flexible-rod-appendage.md``, section 10.8): d'Alembert / Kane form with the
partial velocities of every mass point, 4-point Gauss-Legendre per rod (exact: all integrands
are polynomials of degree <= 6 in the arc length), point masses at the nodes.

Generalised coordinates and velocities (the paper's (14); ``n`` rods, ``N = 3n + 3``)::

    q = [u_Cx, u_Cy, theta_C, phi_1..phi_n, alpha_1..alpha_n, beta_1..beta_n]
    p = [v_Cx, v_Cy, Omega,   dphi_1..dphi_n, dalpha_1..dalpha_n, dbeta_1..dbeta_n]

Full ODE state ``y = [p, q]`` (length ``2N``); reduced state (the paper's (15), ``R = n + 3``)
``y = [p_r, q_r]`` with ``p_r = p[:R]``, ``q_r = q[:R]`` (length ``2R``).

Packed arrays (SI units; column constants below)
------------------------------------------------
``body``   float64[4]          ``[M_0 kg, J_0 kg m^2, x_0 m, y_0 m]``
``rods``   float64[n, 4]       ``[l_k m, m_k kg/m, EI_k N m^2, mu_k kg]`` (mu_k: mass at node k)
``hinges`` float64[n, 2]       ``[kappa_k N m/rad, nu_k N m s/rad]``; hinge k joins rod k (the
                               spacecraft x axis for k = 0) to rod k+1; no hinge at the free tip
``loads``  float64[L, 5]       ``[t_start s, t_end s, X_C N, Y_C N, M_C N m]``, body axes, active
                               on ``t_start <= t < t_end``, summed where windows overlap
``clamps`` float64[C, 4]       ``[hinge index, threshold rad, kappa_lock, nu_lock]``

Time integration (adaptive Dormand-Prince with clamp events) is in
:mod:`models._kernels.appendage_integrate`.

Status codes returned by the right-hand sides and the integrator: ``STATUS_OK``, ``STATUS_MAX_STEPS``,
``STATUS_STEP_UNDERFLOW``, ``STATUS_SINGULAR`` (inertia matrix not positive definite / reduced
inertia singular).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from models._kernels import NJIT

__all__ = [
    "BODY_M0", "BODY_J0", "BODY_X0", "BODY_Y0", "BODY_SIZE",
    "ROD_L", "ROD_M", "ROD_EI", "ROD_MU", "ROD_SIZE",
    "HINGE_K", "HINGE_NU", "HINGE_SIZE",
    "LOAD_T0", "LOAD_T1", "LOAD_X", "LOAD_Y", "LOAD_M", "LOAD_SIZE",
    "CLAMP_HINGE", "CLAMP_THRESHOLD", "CLAMP_K", "CLAMP_NU", "CLAMP_SIZE",
    "FORM_FULL", "FORM_REDUCED", "FORM_FULL_PAPER",
    "STATUS_OK", "STATUS_MAX_STEPS", "STATUS_STEP_UNDERFLOW", "STATUS_SINGULAR",
    "STAT_NFEV", "STAT_NACCEPT", "STAT_NREJECT", "STAT_SIZE",
    "assemble", "drop_second_order_bending", "elastic_matrices", "full_rhs", "reduced_operators", "reduced_rhs",
    "invariants",
]

BODY_M0, BODY_J0, BODY_X0, BODY_Y0, BODY_SIZE = 0, 1, 2, 3, 4
ROD_L, ROD_M, ROD_EI, ROD_MU, ROD_SIZE = 0, 1, 2, 3, 4
HINGE_K, HINGE_NU, HINGE_SIZE = 0, 1, 2
LOAD_T0, LOAD_T1, LOAD_X, LOAD_Y, LOAD_M, LOAD_SIZE = 0, 1, 2, 3, 4, 5
CLAMP_HINGE, CLAMP_THRESHOLD, CLAMP_K, CLAMP_NU, CLAMP_SIZE = 0, 1, 2, 3, 4
FORM_FULL, FORM_REDUCED, FORM_FULL_PAPER = 0, 1, 2
STATUS_OK, STATUS_MAX_STEPS, STATUS_STEP_UNDERFLOW, STATUS_SINGULAR = 0, 1, 2, 3
STAT_NFEV, STAT_NACCEPT, STAT_NREJECT, STAT_SIZE = 0, 1, 2, 3

# 4-point Gauss-Legendre on [0, 1]
_G_A = math.sqrt(3.0 / 7.0 - 2.0 / 7.0 * math.sqrt(6.0 / 5.0))
_G_B = math.sqrt(3.0 / 7.0 + 2.0 / 7.0 * math.sqrt(6.0 / 5.0))
_W_A = (18.0 + math.sqrt(30.0)) / 36.0
_W_B = (18.0 - math.sqrt(30.0)) / 36.0
GAUSS_X = np.array([0.5 * (1 - _G_B), 0.5 * (1 - _G_A), 0.5 * (1 + _G_A), 0.5 * (1 + _G_B)])
GAUSS_W = np.array([0.5 * _W_B, 0.5 * _W_A, 0.5 * _W_A, 0.5 * _W_B])

# --------------------------------------------------------------------------------------------
# inertia operators
# --------------------------------------------------------------------------------------------
@njit(**NJIT)
def assemble(q, p, body, rods, M, h):
    """Inertia matrix ``M(q)`` and bias ``h(q, p)``; see :func:`_assemble_ws`."""
    n = rods.shape[0]
    _assemble_ws(q, p, body, rods, M, h, np.empty(n + 5, dtype=np.int64), np.empty(n + 5),
                 np.empty(n + 5), np.empty(n), np.empty(n))


@njit(**NJIT)
def _assemble_ws(q, p, body, rods, M, h, cols, ax, ay, lnx, lny):
    """Inertia matrix ``M(q)`` [N x N] and velocity-quadratic bias ``h(q, p)`` [N] of (14).

    ``M p_dot + h`` is the vector of inertial generalised forces (the operators L_r of (8)-(13));
    rows 0, 1 are the body-axis momentum balance [N], row 2 the moment balance about C [N m],
    the others the d'Alembert-Lagrange rows of phi, alpha, beta [N m].
    For the reduced model call it with zero alpha, beta and rates (the superscript-0 operators).
    """
    n = rods.shape[0]
    N = 3 * n + 3
    for i in range(N):
        h[i] = 0.0
        for j in range(N):
            M[i, j] = 0.0
    m0 = body[BODY_M0]
    vx = p[0]
    vy = p[1]
    om = p[2]
    om2 = om * om
    M[0, 0] = m0
    M[1, 1] = m0
    M[2, 2] = body[BODY_J0]
    h[0] = -m0 * om * vy
    h[1] = m0 * om * vx
    # cols, ax, ay: partial-velocity columns of one mass point (indices, x, y components);
    # lnx, lny: l_j n_j of the rods already passed (scratch, sizes n + 5 and n)
    rx = body[BODY_X0]   # node k-1 position
    ry = body[BODY_Y0]
    vrx = 0.0            # node k-1 velocity relative to the body frame
    vry = 0.0
    arx = 0.0            # velocity-quadratic part of its relative acceleration
    ary = 0.0
    for k in range(n):
        lk = rods[k, ROD_L]
        mk = rods[k, ROD_M]
        mu = rods[k, ROD_MU]
        ex = math.cos(q[3 + k])
        ey = math.sin(q[3 + k])
        nx = -ey
        ny = ex
        dphi = p[3 + k]
        dphi2 = dphi * dphi
        al = q[3 + n + k]
        be = q[3 + 2 * n + k]
        dal = p[3 + n + k]
        dbe = p[3 + 2 * n + k]
        npts = 5 if mu != 0.0 else 4
        for g in range(npts):
            if g < 4:
                xi = GAUSS_X[g]
                w = GAUSS_W[g] * mk * lk
                sg = xi * lk
                om1 = 1.0 - xi
                ha = xi * om1 * om1
                hb = xi * xi * (xi - 1.0)
                eta = lk * (al * ha + be * hb)
                deta = lk * (dal * ha + dbe * hb)
            else:  # node mass mu_k at the rod's outer end (chord end: eta = 0)
                w = mu
                sg = lk
                ha = 0.0
                hb = 0.0
                eta = 0.0
                deta = 0.0
            px_ = rx + sg * ex + eta * nx
            py_ = ry + sg * ey + eta * ny
            t1 = sg * dphi + deta
            dx = vrx + t1 * nx - eta * dphi * ex
            dy = vry + t1 * ny - eta * dphi * ey
            t2 = sg * dphi2 + 2.0 * deta * dphi
            qx = arx - t2 * ex - eta * dphi2 * nx
            qy = ary - t2 * ey - eta * dphi2 * ny
            # a = v_dot + Om S v + Om_dot S rho - Om^2 rho + 2 Om S rho_dot + rho_ddot
            bx = -om * vy - om2 * px_ - 2.0 * om * dy + qx
            by = om * vx - om2 * py_ + 2.0 * om * dx + qy
            cols[0] = 0
            ax[0] = 1.0
            ay[0] = 0.0
            cols[1] = 1
            ax[1] = 0.0
            ay[1] = 1.0
            cols[2] = 2
            ax[2] = -py_
            ay[2] = px_
            nc = 3
            for j in range(k):
                cols[nc] = 3 + j
                ax[nc] = lnx[j]
                ay[nc] = lny[j]
                nc += 1
            cols[nc] = 3 + k
            ax[nc] = sg * nx - eta * ex
            ay[nc] = sg * ny - eta * ey
            nc += 1
            if g < 4:
                cols[nc] = 3 + n + k
                ax[nc] = lk * ha * nx
                ay[nc] = lk * ha * ny
                nc += 1
                cols[nc] = 3 + 2 * n + k
                ax[nc] = lk * hb * nx
                ay[nc] = lk * hb * ny
                nc += 1
            for a in range(nc):
                ca = cols[a]
                wax = w * ax[a]
                way = w * ay[a]
                h[ca] += wax * bx + way * by
                for b in range(a, nc):
                    M[ca, cols[b]] += wax * ax[b] + way * ay[b]
        lnx[k] = lk * nx
        lny[k] = lk * ny
        rx += lk * ex
        ry += lk * ey
        vrx += lk * dphi * nx
        vry += lk * dphi * ny
        arx -= lk * dphi2 * ex
        ary -= lk * dphi2 * ey
    for i in range(N):  # columns were visited in ascending order: the upper triangle is filled
        for j in range(i):
            M[i, j] = M[j, i]


@njit(**NJIT)
def drop_second_order_bending(q, p, rods, h):
    """Remove from the bias ``h`` the terms of second order in bending that do not fit the
    paper's ``N z`` form (digest 10.7 item 4): ``2 (Omega + dphi_k) m_k int eta eta_dot ds``
    from row phi_k and their sum from row theta_C, with
    ``int eta eta_dot ds = l^3 [a a'/105 - (a b' + b a')/140 + b b'/105]``.

    What remains is exactly ``N(q) z(p)`` with the first ``n + 3`` columns of ``N``
    antisymmetric, as the paper states; energy is then conserved only up to these terms.
    """
    n = rods.shape[0]
    om = p[2]
    for k in range(n):
        lk = rods[k, ROD_L]
        a = q[3 + n + k]
        b = q[3 + 2 * n + k]
        da = p[3 + n + k]
        db = p[3 + 2 * n + k]
        ie = lk * lk * lk * (a * da / 105.0 - (a * db + b * da) / 140.0 + b * db / 105.0)
        term = 2.0 * (om + p[3 + k]) * rods[k, ROD_M] * ie
        h[3 + k] -= term
        h[2] -= term


# --------------------------------------------------------------------------------------------
# elastic and dissipative terms
# --------------------------------------------------------------------------------------------
@njit(**NJIT)
def _elastic_forces(q, p, rods, hinges, f):
    """``f = K q + D p`` [N]: rod bending (4EI/l, 2EI/l) and hinge springs / dampers acting on
    the tangent-angle jump ``theta_k = (phi_{k+1} + alpha_{k+1}) - (phi_k + beta_k)``."""
    n = rods.shape[0]
    N = 3 * n + 3
    for i in range(N):
        f[i] = 0.0
    for k in range(n):
        c = rods[k, ROD_EI] / rods[k, ROD_L]
        a = q[3 + n + k]
        b = q[3 + 2 * n + k]
        f[3 + n + k] += c * (4.0 * a + 2.0 * b)
        f[3 + 2 * n + k] += c * (2.0 * a + 4.0 * b)
    for k in range(n):  # hinge k: outer side rod index k (0-based), inner side rod k-1
        th = q[3 + k] + q[3 + n + k]
        dth = p[3 + k] + p[3 + n + k]
        if k > 0:
            th -= q[3 + k - 1] + q[3 + 2 * n + k - 1]
            dth -= p[3 + k - 1] + p[3 + 2 * n + k - 1]
        m = hinges[k, HINGE_K] * th + hinges[k, HINGE_NU] * dth
        f[3 + k] += m
        f[3 + n + k] += m
        if k > 0:
            f[3 + k - 1] -= m
            f[3 + 2 * n + k - 1] -= m


@njit(**NJIT)
def elastic_matrices(rods, hinges, K, D):
    """Stiffness ``K`` and damping ``D`` [N x N] of (14); zero in the u and theta rows."""
    n = rods.shape[0]
    N = 3 * n + 3
    for i in range(N):
        for j in range(N):
            K[i, j] = 0.0
            D[i, j] = 0.0
    for k in range(n):
        c = rods[k, ROD_EI] / rods[k, ROD_L]
        ia = 3 + n + k
        ib = 3 + 2 * n + k
        K[ia, ia] += 4.0 * c
        K[ia, ib] += 2.0 * c
        K[ib, ia] += 2.0 * c
        K[ib, ib] += 4.0 * c
    idx = np.empty(4, dtype=np.int64)
    sgn = np.empty(4)
    for k in range(n):
        idx[0] = 3 + k
        sgn[0] = 1.0
        idx[1] = 3 + n + k
        sgn[1] = 1.0
        m = 2
        if k > 0:
            idx[2] = 3 + k - 1
            sgn[2] = -1.0
            idx[3] = 3 + 2 * n + k - 1
            sgn[3] = -1.0
            m = 4
        for a in range(m):
            for b in range(m):
                K[idx[a], idx[b]] += hinges[k, HINGE_K] * sgn[a] * sgn[b]
                D[idx[a], idx[b]] += hinges[k, HINGE_NU] * sgn[a] * sgn[b]


# --------------------------------------------------------------------------------------------
# small dense solvers (no LAPACK call overhead for these sizes)
# --------------------------------------------------------------------------------------------
@njit(**NJIT)
def _cholesky_solve(A, b, x):
    """Solve ``A x = b`` for symmetric positive definite ``A`` (overwritten). 0 = ok."""
    m = A.shape[0]
    for j in range(m):
        s = A[j, j]
        for k in range(j):
            s -= A[j, k] * A[j, k]
        if not s > 0.0:
            return STATUS_SINGULAR
        d = math.sqrt(s)
        A[j, j] = d
        inv = 1.0 / d
        for i in range(j + 1, m):
            s = A[i, j]
            for k in range(j):
                s -= A[i, k] * A[j, k]
            A[i, j] = s * inv
    for i in range(m):
        s = b[i]
        for k in range(i):
            s -= A[i, k] * x[k]
        x[i] = s / A[i, i]
    for i in range(m - 1, -1, -1):
        s = x[i]
        for k in range(i + 1, m):
            s -= A[k, i] * x[k]
        x[i] = s / A[i, i]
    return STATUS_OK


@njit(**NJIT)
def _lu_solve(A, b, x):
    """Solve ``A x = b`` by Gaussian elimination with partial pivoting (A, b overwritten)."""
    m = A.shape[0]
    for j in range(m):
        piv = j
        big = abs(A[j, j])
        for i in range(j + 1, m):
            if abs(A[i, j]) > big:
                big = abs(A[i, j])
                piv = i
        if big == 0.0:
            return STATUS_SINGULAR
        if piv != j:
            for k in range(m):
                tmp = A[j, k]
                A[j, k] = A[piv, k]
                A[piv, k] = tmp
            tmp = b[j]
            b[j] = b[piv]
            b[piv] = tmp
        inv = 1.0 / A[j, j]
        for i in range(j + 1, m):
            f = A[i, j] * inv
            if f != 0.0:
                for k in range(j + 1, m):
                    A[i, k] -= f * A[j, k]
                b[i] -= f * b[j]
    for i in range(m - 1, -1, -1):
        s = b[i]
        for k in range(i + 1, m):
            s -= A[i, k] * x[k]
        x[i] = s / A[i, i]
    return STATUS_OK


# --------------------------------------------------------------------------------------------
# right-hand sides
# --------------------------------------------------------------------------------------------
@njit(**NJIT)
def full_rhs(y, body, rods, hinges, Q, dy, exact=True):
    """Full formulation (14): ``dy = [M^-1 (Q - h - K q - D p), G(q) p]``. Returns a status.

    ``exact=False`` drops the second-order bending terms of the bias
    (:func:`drop_second_order_bending`).
    """
    ws = _Workspace(rods.shape[0])
    return _full_rhs_ws(y, body, rods, hinges, Q, dy, ws[0], ws[1], ws[2], exact)


@njit(**NJIT)
def _Workspace(n):
    """Scratch arrays of the right-hand sides: matrices [2, N, N], vectors [12, N+5], ints."""
    N = 3 * n + 3
    return np.empty((2, N, N)), np.empty((12, N + 5)), np.empty(n + 5, dtype=np.int64)


@njit(**NJIT)
def _full_rhs_ws(y, body, rods, hinges, Q, dy, W2, W1, I1, exact):
    n = rods.shape[0]
    N = 3 * n + 3
    p = y[:N]
    q = y[N:]
    M = W2[0]
    h = W1[0, :N]
    f = W1[1, :N]
    _assemble_ws(q, p, body, rods, M, h, I1, W1[2], W1[3], W1[4, :n], W1[5, :n])
    if not exact:
        drop_second_order_bending(q, p, rods, h)
    _elastic_forces(q, p, rods, hinges, f)
    for i in range(N):
        f[i] = Q[i] - h[i] - f[i]
    st = _cholesky_solve(M, f, dy[:N])
    dy[N] = p[0] + p[2] * q[1]
    dy[N + 1] = p[1] - p[2] * q[0]
    for i in range(2, N):
        dy[N + i] = p[i]
    return st


@njit(**NJIT)
def reduced_operators(rods, hinges, G, Kt, Dt, Kbb_inv, Kbr, Dbr):
    """Constant operators of the reduced formulation (15) for the current hinge parameters.

    Rigid block ``r`` = (u, theta, phi) [R = n + 3], bending block ``b`` = (alpha, beta) [2n]:
    ``G = K_rb K_bb^-1``, ``Kt = K_rr - G K_br``, ``Dt = D_rr - G D_br``; also ``K_bb^-1``,
    ``K_br`` and ``D_br`` for the bending output. ``K_bb`` is positive definite whenever every
    ``EI_k > 0``. Returns a status.
    """
    n = rods.shape[0]
    N = 3 * n + 3
    R = n + 3
    B = 2 * n
    K = np.empty((N, N))
    D = np.empty((N, N))
    elastic_matrices(rods, hinges, K, D)
    col = np.empty(B)
    x = np.empty(B)
    A = np.empty((B, B))
    for j in range(B):  # K_bb^-1 column by column
        for i in range(B):
            col[i] = 1.0 if i == j else 0.0
            for k in range(B):
                A[i, k] = K[R + i, R + k]
        st = _cholesky_solve(A, col, x)
        if st != STATUS_OK:
            return st
        for i in range(B):
            Kbb_inv[i, j] = x[i]
    for i in range(B):
        for j in range(R):
            Kbr[i, j] = K[R + i, j]
            Dbr[i, j] = D[R + i, j]
    for i in range(R):
        for j in range(B):
            s = 0.0
            for k in range(B):
                s += K[i, R + k] * Kbb_inv[k, j]
            G[i, j] = s
    for i in range(R):
        for j in range(R):
            sk = K[i, j]
            sd = D[i, j]
            for k in range(B):
                sk -= G[i, k] * K[R + k, j]
                sd -= G[i, k] * D[R + k, j]
            Kt[i, j] = sk
            Dt[i, j] = sd
    return STATUS_OK


@njit(**NJIT)
def reduced_rhs(y, body, rods, Q, G, Kt, Dt, Kbb_inv, Kbr, Dbr, dy, bend):
    """Reduced formulation (15) with quasi-static bending; ``bend`` [2n] receives the bending
    angles ``(alpha, beta) = -K_bb^-1 (M0_br p_dot + h0_b + D_br p + K_br q)``. Returns a status.

    ``Mt = M0_rr - G M0_br`` is not symmetric (as the paper says); it is solved by LU.
    """
    ws = _Workspace(rods.shape[0])
    return _reduced_rhs_ws(y, body, rods, Q, G, Kt, Dt, Kbb_inv, Kbr, Dbr, dy, bend,
                           ws[0], ws[1], ws[2])


@njit(**NJIT)
def _reduced_rhs_ws(y, body, rods, Q, G, Kt, Dt, Kbb_inv, Kbr, Dbr, dy, bend, W2, W1, I1):
    n = rods.shape[0]
    N = 3 * n + 3
    R = n + 3
    B = 2 * n
    qf = W1[6, :N]
    pf = W1[7, :N]
    for i in range(N):
        pf[i] = y[i] if i < R else 0.0
        qf[i] = y[R + i] if i < R else 0.0
    M0 = W2[0]
    h0 = W1[0, :N]
    _assemble_ws(qf, pf, body, rods, M0, h0, I1, W1[2], W1[3], W1[4, :n], W1[5, :n])
    Mt = W2[1, :R, :R]
    rhs = W1[1, :R]
    for i in range(R):
        s = Q[i] - h0[i]
        for k in range(B):
            s += G[i, k] * h0[R + k]
        for j in range(R):
            s -= Kt[i, j] * y[R + j] + Dt[i, j] * y[j]
            m = M0[i, j]
            for k in range(B):
                m -= G[i, k] * M0[R + k, j]
            Mt[i, j] = m
        rhs[i] = s
    st = _lu_solve(Mt, rhs, dy[:R])
    dy[R] = y[0] + y[2] * y[R + 1]
    dy[R + 1] = y[1] - y[2] * y[R]
    for i in range(2, R):
        dy[R + i] = y[i]
    tmp = W1[8, :B]
    for i in range(B):
        s = h0[R + i]
        for j in range(R):
            s += M0[R + i, j] * dy[j] + Dbr[i, j] * y[j] + Kbr[i, j] * y[R + j]
        tmp[i] = s
    for i in range(B):
        s = 0.0
        for k in range(B):
            s -= Kbb_inv[i, k] * tmp[k]
        bend[i] = s
    return st


# --------------------------------------------------------------------------------------------
# invariants
# --------------------------------------------------------------------------------------------
@njit(**NJIT)
def invariants(y, body, rods, hinges, out):
    """Energies and inertial momenta of a full-layout state ``y = [p, q]``.

    ``out = [T, U, V_h, P_X, P_Y, L_O]``: kinetic energy [J], rod strain energy [J], hinge spring
    energy [J], inertial linear momentum [kg m/s] (inertial axes = body axes at t = 0) and
    angular momentum about the inertial origin (the initial position of C) [kg m^2/s].
    """
    n = rods.shape[0]
    N = 3 * n + 3
    p = y[:N]
    q = y[N:]
    M = np.empty((N, N))
    h = np.empty(N)
    assemble(q, p, body, rods, M, h)
    mp = M @ p
    T = 0.5 * (p @ mp)
    U = 0.0
    for k in range(n):
        a = q[3 + n + k]
        b = q[3 + 2 * n + k]
        U += 2.0 * rods[k, ROD_EI] / rods[k, ROD_L] * (a * a + a * b + b * b)
    V = 0.0
    for k in range(n):
        th = q[3 + k] + q[3 + n + k]
        if k > 0:
            th -= q[3 + k - 1] + q[3 + 2 * n + k - 1]
        V += 0.5 * hinges[k, HINGE_K] * th * th
    c = math.cos(q[2])
    s = math.sin(q[2])
    PX = c * mp[0] - s * mp[1]
    PY = s * mp[0] + c * mp[1]
    XX = c * q[0] - s * q[1]
    XY = s * q[0] + c * q[1]
    out[0] = T
    out[1] = U
    out[2] = V
    out[3] = PX
    out[4] = PY
    out[5] = mp[2] + XX * PY - XY * PX
