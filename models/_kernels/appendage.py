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

Time integration is an adaptive Dormand-Prince 5(4) pair with Shampine's quartic dense output
(the coefficients of scipy's RK45) inside the kernel, no per-step Python. Adaptive rather than
the project's usual fixed-step RK4 because the point of the reduced formulation is the step
size: the full one is limited by the rods' bending frequencies, the reduced one by the rigid
motion, and each gets the step its own dynamics allow.

Status codes returned by :func:`integrate`: ``STATUS_OK``, ``STATUS_MAX_STEPS``,
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
    "invariants", "integrate",
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

# Dormand-Prince 5(4) with Shampine's quartic dense output (coefficients as scipy's RK45)
_RK_C = np.array([0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0])
_RK_A = np.array([
    [0.0, 0.0, 0.0, 0.0, 0.0],
    [1 / 5, 0.0, 0.0, 0.0, 0.0],
    [3 / 40, 9 / 40, 0.0, 0.0, 0.0],
    [44 / 45, -56 / 15, 32 / 9, 0.0, 0.0],
    [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0.0],
    [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656]])
_RK_B = np.array([35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84])
_RK_E = np.array([-71 / 57600, 0.0, 71 / 16695, -71 / 1920, 17253 / 339200, -22 / 525, 1 / 40])
_RK_P = np.array([
    [1.0, -8048581381 / 2820520608, 8663915743 / 2820520608, -12715105075 / 11282082432],
    [0.0, 0.0, 0.0, 0.0],
    [0.0, 131558114200 / 32700410799, -68118460800 / 10900136933, 87487479700 / 32700410799],
    [0.0, -1754552775 / 470086768, 14199869525 / 1410260304, -10690763975 / 1880347072],
    [0.0, 127303824393 / 49829197408, -318862633887 / 49829197408, 701980252875 / 199316789632],
    [0.0, -282668133 / 205662961, 2019193451 / 616988883, -1453857185 / 822651844],
    [0.0, 40617522 / 29380423, -110615467 / 29380423, 69997945 / 29380423]])


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


# --------------------------------------------------------------------------------------------
# time integration
# --------------------------------------------------------------------------------------------
@njit(**NJIT)
def _rhs(form, y, body, rods, hinges, Q, G, Kt, Dt, Kbb_inv, Kbr, Dbr, dy, bend, W2, W1, I1):
    if form == FORM_FULL:
        return _full_rhs_ws(y, body, rods, hinges, Q, dy, W2, W1, I1, True)
    if form == FORM_FULL_PAPER:
        return _full_rhs_ws(y, body, rods, hinges, Q, dy, W2, W1, I1, False)
    return _reduced_rhs_ws(y, body, rods, Q, G, Kt, Dt, Kbb_inv, Kbr, Dbr, dy, bend,
                           W2, W1, I1)


@njit(**NJIT)
def _load_vector(loads, t0, t1, Q):
    """Applied generalised forces on the segment ``[t0, t1)`` (constant there by construction)."""
    for i in range(Q.shape[0]):
        Q[i] = 0.0
    tm = 0.5 * (t0 + t1)
    for i in range(loads.shape[0]):
        if loads[i, LOAD_T0] <= tm < loads[i, LOAD_T1]:
            Q[0] += loads[i, LOAD_X]
            Q[1] += loads[i, LOAD_Y]
            Q[2] += loads[i, LOAD_M]


@njit(**NJIT)
def _rel_angle(y, off, k):
    """Relative chord angle across hinge k: ``phi_{k+1} - phi_k`` with ``phi_0 = 0``."""
    d = y[off + k]
    if k > 0:
        d -= y[off + k - 1]
    return d


@njit(**NJIT)
def _dense(yold, Kst, hs, theta, out):
    """Quartic dense output of the last Dormand-Prince step at ``t_old + theta h``."""
    ny = yold.shape[0]
    th1 = theta
    th2 = theta * theta
    th3 = th2 * theta
    th4 = th3 * theta
    for i in range(ny):
        s = 0.0
        for st in range(7):
            c = (_RK_P[st, 0] * th1 + _RK_P[st, 1] * th2 + _RK_P[st, 2] * th3
                 + _RK_P[st, 3] * th4)
            s += Kst[st, i] * c
        out[i] = yold[i] + hs * s


@njit(**NJIT)
def _dense_rel(yold, Kst, hs, theta, off, k):
    th1 = theta
    th2 = theta * theta
    th3 = th2 * theta
    th4 = th3 * theta
    d = 0.0
    for st in range(7):
        c = _RK_P[st, 0] * th1 + _RK_P[st, 1] * th2 + _RK_P[st, 2] * th3 + _RK_P[st, 3] * th4
        d += Kst[st, off + k] * c
        if k > 0:
            d -= Kst[st, off + k - 1] * c
    return _rel_angle(yold, off, k) + hs * d


@njit(**NJIT)
def _first_entry(y, Kst, hs, off, k, thr):
    """First ``theta`` in (0, 1] of the last step where ``|rel angle of hinge k| < thr``.

    The dense output is sampled at 8 points per step, and a sign change of the relative angle
    between samples (the chord passing straight through the window) is resolved too, so a
    window narrower than the step is not skipped. The entry is then located by bisection to
    1e-12 s. Returns ``(lo, hi)`` with ``hi < 0`` when the condition is not met in the step.
    """
    lo = 0.0
    vprev = _rel_angle(y, off, k)
    for j in range(1, 9):
        th = j / 8.0
        v = _dense_rel(y, Kst, hs, th, off, k)
        if abs(v) < thr or v * vprev < 0.0:
            hi = th
            if not abs(v) < thr:  # passed through zero: bracket the zero crossing first
                a = lo
                va = vprev
                for _ in range(100):
                    if (hi - a) * hs <= 1e-13:
                        break
                    mid = 0.5 * (a + hi)
                    vm = _dense_rel(y, Kst, hs, mid, off, k)
                    if abs(vm) < thr:
                        hi = mid
                        break
                    if vm * va < 0.0:
                        hi = mid
                    else:
                        a = mid
                        va = vm
                if not abs(_dense_rel(y, Kst, hs, hi, off, k)) < thr:
                    vprev = v
                    lo = th
                    continue
            for _ in range(100):
                if (hi - lo) * hs <= 1e-12:
                    break
                mid = 0.5 * (lo + hi)
                if abs(_dense_rel(y, Kst, hs, mid, off, k)) < thr:
                    hi = mid
                else:
                    lo = mid
            return lo, hi
        vprev = v
        lo = th
    return 0.0, -1.0


@njit(**NJIT)
def _write_output(form, y, t, body, rods, hinges, Q, G, Kt, Dt, Kbb_inv, Kbr, Dbr,
                  Y, bend_out, io, dy, bend, W2, W1, I1):
    ny = y.shape[0]
    n = rods.shape[0]
    for i in range(ny):
        Y[io, i] = y[i]
    if form == FORM_REDUCED:
        _rhs(form, y, body, rods, hinges, Q, G, Kt, Dt, Kbb_inv, Kbr, Dbr, dy, bend, W2, W1, I1)
        for i in range(2 * n):
            bend_out[io, i] = bend[i]
    else:
        N = 3 * n + 3
        for i in range(2 * n):
            bend_out[io, i] = y[N + 3 + n + i]


@njit(**NJIT)
def integrate(y0, t_out, body, rods, hinges0, loads, clamps, form, rtol, atol, max_step,
              max_steps, Y, bend_out, clamp_t, stats):
    """Integrate from ``t_out[0]`` to ``t_out[-1]`` with adaptive Dormand-Prince 5(4).

    Parameters
    ----------
    y0 : float64[ny]
        Initial state, full (``ny = 6n + 6``) or reduced (``ny = 2n + 6``) layout.
    t_out : float64[n_out]
        Increasing output times [s].
    form : int
        ``FORM_FULL``, ``FORM_FULL_PAPER`` (full without the second-order bending terms of
        the bias) or ``FORM_REDUCED``.
    rtol, atol : float
        Error control per component (scipy's RMS norm); ``max_step`` [s]; ``max_steps``.
    Y : float64[n_out, ny]
        Output: state at ``t_out``.
    bend_out : float64[n_out, 2n]
        Output: bending angles (alpha, beta) -- state (full) or quasi-static solution (reduced).
    clamp_t : float64[C]
        Output: engagement time of each clamp [s]; NaN if it never engaged.
    stats : int64[STAT_SIZE]
        Output: RHS evaluations, accepted and rejected steps.

    Steps never cross a load window edge (the right-hand side jumps there). A clamp engages
    when ``|phi_{k+1} - phi_k|`` first falls below its threshold: the dense output of each
    accepted step is sampled at 8 points (and zero crossings of the relative angle between
    samples are resolved), the entry is located by bisection to 1e-12 s; the hinge stiffness
    and damping are then replaced (permanently) and the integration restarts from the event
    state. A clamp whose condition holds at
    ``t_out[0]`` engages at ``t_out[0]``.
    """
    n = rods.shape[0]
    N = 3 * n + 3
    R = n + 3
    B = 2 * n
    ny = y0.shape[0]
    off = ny // 2 + 3  # index of phi_1 in the state (both layouts: [p, q])
    hinges = hinges0.copy()
    nclamp = clamps.shape[0]
    engaged = np.zeros(nclamp, dtype=np.int64)
    for c in range(nclamp):
        clamp_t[c] = np.nan
    for i in range(STAT_SIZE):
        stats[i] = 0
    G = np.zeros((R, B))
    Kt = np.zeros((R, R))
    Dt = np.zeros((R, R))
    Kbb_inv = np.zeros((B, B))
    Kbr = np.zeros((B, R))
    Dbr = np.zeros((B, R))
    bend = np.zeros(B)
    Q = np.zeros(N)
    W2, W1, I1 = _Workspace(n)
    y = y0.copy()
    t = t_out[0]
    tf = t_out[t_out.shape[0] - 1]
    n_out = t_out.shape[0]

    # clamps already satisfied at the start
    for c in range(nclamp):
        k = int(clamps[c, CLAMP_HINGE])
        if abs(_rel_angle(y, off, k)) < clamps[c, CLAMP_THRESHOLD]:
            engaged[c] = 1
            clamp_t[c] = t
            hinges[k, HINGE_K] = clamps[c, CLAMP_K]
            hinges[k, HINGE_NU] = clamps[c, CLAMP_NU]
    if form == FORM_REDUCED:
        st = reduced_operators(rods, hinges, G, Kt, Dt, Kbb_inv, Kbr, Dbr)
        if st != STATUS_OK:
            return st

    # load-window edges
    nb = 0
    bps = np.empty(2 * loads.shape[0] + 1)
    for i in range(loads.shape[0]):
        for e in (loads[i, LOAD_T0], loads[i, LOAD_T1]):
            if t < e < tf:
                bps[nb] = e
                nb += 1
    bps[nb] = tf
    nb += 1
    bps = np.sort(bps[:nb])

    ib = 0
    while ib < nb - 1 and bps[ib] <= t:
        ib += 1
    seg_end = bps[ib]
    _load_vector(loads, t, seg_end, Q)

    Kst = np.empty((7, ny))
    ytmp = np.empty(ny)
    ynew = np.empty(ny)
    ydense = np.empty(ny)
    f0 = np.empty(ny)
    st = _rhs(form, y, body, rods, hinges, Q, G, Kt, Dt, Kbb_inv, Kbr, Dbr, f0, bend, W2, W1, I1)
    stats[STAT_NFEV] += 1
    if st != STATUS_OK:
        return st
    io = 0
    while io < n_out and t_out[io] <= t:
        _write_output(form, y, t, body, rods, hinges, Q, G, Kt, Dt, Kbb_inv, Kbr, Dbr,
                      Y, bend_out, io, ytmp, bend, W2, W1, I1)
        io += 1

    # initial step (Hairer, Norsett & Wanner II.4, as scipy's select_initial_step)
    d0 = 0.0
    d1 = 0.0
    for i in range(ny):
        sc = atol + abs(y[i]) * rtol
        d0 += (y[i] / sc) ** 2
        d1 += (f0[i] / sc) ** 2
    d0 = math.sqrt(d0 / ny)
    d1 = math.sqrt(d1 / ny)
    hh = 1e-6 if (d0 < 1e-5 or d1 < 1e-5) else 0.01 * d0 / d1
    hh = min(hh, seg_end - t)
    for i in range(ny):
        ytmp[i] = y[i] + hh * f0[i]
    st = _rhs(form, ytmp, body, rods, hinges, Q, G, Kt, Dt,
              Kbb_inv, Kbr, Dbr, ynew, bend, W2, W1, I1)
    stats[STAT_NFEV] += 1
    if st != STATUS_OK:
        return st
    d2 = 0.0
    for i in range(ny):
        sc = atol + abs(y[i]) * rtol
        d2 += ((ynew[i] - f0[i]) / sc) ** 2
    d2 = math.sqrt(d2 / ny) / hh
    dm = max(d1, d2)
    h1 = max(1e-6, hh * 1e-3) if dm <= 1e-15 else (0.01 / dm) ** 0.2
    h = min(100.0 * hh, h1, max_step)

    nsteps = 0
    while t < tf:
        if nsteps >= max_steps:
            return STATUS_MAX_STEPS
        nsteps += 1
        hs = min(h, max_step)
        hit = False
        if t + hs >= seg_end or seg_end - (t + hs) < 1e-12 * max(1.0, abs(seg_end)):
            hs = seg_end - t
            hit = True
        if hs < 1e-14 * max(1.0, abs(t)):
            return STATUS_STEP_UNDERFLOW
        for i in range(ny):
            Kst[0, i] = f0[i]
        for s_ in range(1, 6):
            for i in range(ny):
                acc = 0.0
                for j in range(s_):
                    acc += _RK_A[s_, j] * Kst[j, i]
                ytmp[i] = y[i] + hs * acc
            st = _rhs(form, ytmp, body, rods, hinges, Q, G, Kt, Dt, Kbb_inv, Kbr, Dbr,
                      Kst[s_], bend, W2, W1, I1)
            stats[STAT_NFEV] += 1
            if st != STATUS_OK:
                return st
        for i in range(ny):
            acc = 0.0
            for j in range(6):
                acc += _RK_B[j] * Kst[j, i]
            ynew[i] = y[i] + hs * acc
        st = _rhs(form, ynew, body, rods, hinges, Q, G, Kt, Dt,
                  Kbb_inv, Kbr, Dbr, Kst[6], bend, W2, W1, I1)
        stats[STAT_NFEV] += 1
        if st != STATUS_OK:
            return st
        err = 0.0
        for i in range(ny):
            e = 0.0
            for j in range(7):
                e += _RK_E[j] * Kst[j, i]
            sc = atol + max(abs(y[i]), abs(ynew[i])) * rtol
            err += (hs * e / sc) ** 2
        err = math.sqrt(err / ny)
        if not err <= 1.0:  # also rejects NaN
            stats[STAT_NREJECT] += 1
            fac = 0.9 * err ** -0.2 if err == err else 0.2
            h = hs * max(0.2, fac)
            continue
        stats[STAT_NACCEPT] += 1

        # clamp events inside the step: earliest first crossing
        te_theta = 2.0
        te_c = -1
        for c in range(nclamp):
            if engaged[c] == 1:
                continue
            k = int(clamps[c, CLAMP_HINGE])
            thr = clamps[c, CLAMP_THRESHOLD]
            lo, hi = _first_entry(y, Kst, hs, off, k, thr)
            if hi >= 0.0:
                if hi < te_theta:
                    te_theta = hi
                    te_c = c
        if te_c >= 0:
            te = t + te_theta * hs
            _dense(y, Kst, hs, te_theta, ydense)
            while io < n_out and t_out[io] <= te:
                _dense(y, Kst, hs, (t_out[io] - t) / hs, ytmp)
                _write_output(form, ytmp, t_out[io], body, rods, hinges, Q, G, Kt, Dt,
                              Kbb_inv, Kbr, Dbr, Y, bend_out, io, ynew, bend, W2, W1, I1)
                io += 1
            k = int(clamps[te_c, CLAMP_HINGE])
            engaged[te_c] = 1
            clamp_t[te_c] = te
            hinges[k, HINGE_K] = clamps[te_c, CLAMP_K]
            hinges[k, HINGE_NU] = clamps[te_c, CLAMP_NU]
            if form == FORM_REDUCED:
                st = reduced_operators(rods, hinges, G, Kt, Dt, Kbb_inv, Kbr, Dbr)
                if st != STATUS_OK:
                    return st
            t = te
            for i in range(ny):
                y[i] = ydense[i]
            st = _rhs(form, y, body, rods, hinges, Q, G, Kt, Dt,
                      Kbb_inv, Kbr, Dbr, f0, bend, W2, W1, I1)
            stats[STAT_NFEV] += 1
            if st != STATUS_OK:
                return st
            h = max(te_theta * hs, 1e-6 * hs)  # the stiffened hinge needs a fresh step size
            continue

        tnew = seg_end if hit else t + hs
        while io < n_out and t_out[io] <= tnew:
            _dense(y, Kst, hs, (t_out[io] - t) / hs, ytmp)
            _write_output(form, ytmp, t_out[io], body, rods, hinges, Q, G, Kt, Dt,
                          Kbb_inv, Kbr, Dbr, Y, bend_out, io, ydense, bend, W2, W1, I1)
            io += 1
        t = tnew
        for i in range(ny):
            y[i] = ynew[i]
            f0[i] = Kst[6, i]
        if hit and ib < nb - 1:
            ib += 1
            seg_end = bps[ib]
            _load_vector(loads, t, seg_end, Q)
            st = _rhs(form, y, body, rods, hinges, Q, G, Kt, Dt,
                      Kbb_inv, Kbr, Dbr, f0, bend, W2, W1, I1)
            stats[STAT_NFEV] += 1
            if st != STATUS_OK:
                return st
        fac = 10.0 if err == 0.0 else min(10.0, 0.9 * err ** -0.2)
        h = hs * max(0.2, fac)
    return STATUS_OK
