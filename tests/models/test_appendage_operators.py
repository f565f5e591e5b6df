"""Operators of the rod-appendage model against independent derivations.

* inertia matrix and velocity-quadratic bias against a Lagrangian oracle written here from the
  geometry alone (Form A of the digest, section 10.6: Boltzmann-Hamel equations in body-axis
  quasi-velocities, partial velocities by complex-step differentiation of the positions,
  6-point Gauss quadrature, dM/dq by central differences);
* stiffness and damping terms against equations (4)-(6) as printed in the paper;
* inertia at zero bending against the paper's closed forms (7) (M, J, M_k).
"""
import numpy as np
import pytest

from models._kernels import appendage as K


def _random_system(rng, n):
    body = np.array([rng.uniform(50, 200), rng.uniform(20, 100), rng.uniform(-1, 1),
                     rng.uniform(-1, 1)])
    rods = np.column_stack([rng.uniform(0.5, 3, n), rng.uniform(0.5, 2, n),
                            rng.uniform(50, 500, n), rng.uniform(0, 2, n)])
    hinges = np.column_stack([rng.uniform(0, 100, n), rng.uniform(0, 10, n)])
    N = 3 * n + 3
    q = rng.normal(size=N)
    q[3 + n:] *= 0.2  # bending angles: small but not tiny, so every bending term is exercised
    p = rng.normal(size=N)
    return body, rods, hinges, q, p


# ---------------------------------------------------------------------------------------------
# oracle
# ---------------------------------------------------------------------------------------------
def _points(q, body, rods):
    """Mass points ``(mass, position)`` of the chain in body axes, complex-safe in q."""
    n = rods.shape[0]
    xg, wg = np.polynomial.legendre.leggauss(6)
    xi_all = 0.5 * (xg + 1)
    w_all = 0.5 * wg
    r = np.array([body[2], body[3]], dtype=q.dtype)
    pts = []
    for k in range(n):
        l, m, _, mu = rods[k]
        e = np.array([np.cos(q[3 + k]), np.sin(q[3 + k])])
        nv = np.array([-np.sin(q[3 + k]), np.cos(q[3 + k])])
        a, b = q[3 + n + k], q[3 + 2 * n + k]
        for xi, w in zip(xi_all, w_all):
            eta = l * (a * xi * (1 - xi) ** 2 + b * xi ** 2 * (xi - 1))
            pts.append((m * l * w, r + xi * l * e + eta * nv))
        r = r + l * e
        pts.append((mu, r))
    return pts


def _oracle_mass(q, body, rods):
    n = rods.shape[0]
    N = 3 * n + 3
    npts = len(_points(q.astype(complex), body, rods))
    A = np.zeros((npts, 2, N))
    masses = np.zeros(npts)
    base = _points(q.astype(complex), body, rods)
    for i, (m, rho) in enumerate(base):
        masses[i] = m
        A[i, :, 0] = (1, 0)
        A[i, :, 1] = (0, 1)
        A[i, :, 2] = (-rho[1].real, rho[0].real)
    hstep = 1e-30
    for j in range(3, N):
        qc = q.astype(complex)
        qc[j] += 1j * hstep
        for i, (_, rho) in enumerate(_points(qc, body, rods)):
            A[i, :, j] = rho.imag / hstep
    M = np.einsum("p,pai,paj->ij", masses, A, A)
    M[0, 0] += body[0]
    M[1, 1] += body[0]
    M[2, 2] += body[1]
    return M


def _oracle_bias(q, p, body, rods):
    """h = d/dt(M) p - dT/dq + [-Om P_y, Om P_x, v x P] (Form A), velocity terms only."""
    N = q.size
    M = _oracle_mass(q, body, rods)
    dM = np.zeros((N, N, N))
    d = 1e-6
    for j in range(3, N):
        qp, qm = q.copy(), q.copy()
        qp[j] += d
        qm[j] -= d
        dM[j] = (_oracle_mass(qp, body, rods) - _oracle_mass(qm, body, rods)) / (2 * d)
    qdot = np.zeros(N)
    qdot[3:] = p[3:]
    h = np.einsum("kij,k,j->i", dM, qdot, p)
    h[3:] -= 0.5 * np.einsum("kij,i,j->k", dM, p, p)[3:]
    P = M @ p
    h[0] += -p[2] * P[1]
    h[1] += p[2] * P[0]
    h[2] += p[0] * P[1] - p[1] * P[0]
    return M, h


@pytest.mark.parametrize("n,seed", [(1, 0), (2, 1), (3, 2)])
def test_inertia_and_bias_match_lagrangian_oracle(n, seed):
    rng = np.random.default_rng(seed)
    body, rods, _, q, p = _random_system(rng, n)
    N = 3 * n + 3
    M = np.zeros((N, N))
    h = np.zeros(N)
    K.assemble(q, p, body, rods, M, h)
    Mo, ho = _oracle_bias(q, p, body, rods)
    # M: both quadratures are exact for the degree-6 integrands, complex step is exact:
    # agreement to rounding (1e-12 of the largest entry).
    np.testing.assert_allclose(M, Mo, rtol=0, atol=1e-12 * np.abs(Mo).max())
    # h: dM/dq by central differences (step 1e-6): truncation ~1e-12, rounding ~1e-10 of |M|;
    # 1e-7 of the largest bias entry is far below any missing or mis-signed term.
    np.testing.assert_allclose(h, ho, rtol=0, atol=1e-7 * np.abs(ho).max())
    assert np.allclose(M, M.T)
    assert np.all(np.linalg.eigvalsh(M) > 0)


# ---------------------------------------------------------------------------------------------
# paper's printed stiffness / damping terms (4)-(6)
# ---------------------------------------------------------------------------------------------
def _printed_elastic(q, p, rods, hinges):
    """Equations (4)-(6) term by term (kappa_n = nu_n = 0; phi_0 = beta_0 = phi_{n+1} =
    alpha_{n+1} = 0)."""
    n = rods.shape[0]
    ph = np.r_[0.0, q[3:3 + n], 0.0]           # phi_0..phi_{n+1}
    al = np.r_[0.0, q[3 + n:3 + 2 * n], 0.0]   # alpha_0..alpha_{n+1}
    be = np.r_[0.0, q[3 + 2 * n:], 0.0]        # beta_0..beta_{n+1}
    dph = np.r_[0.0, p[3:3 + n], 0.0]
    dal = np.r_[0.0, p[3 + n:3 + 2 * n], 0.0]
    dbe = np.r_[0.0, p[3 + 2 * n:], 0.0]
    ka = np.r_[hinges[:, 0], 0.0]              # kappa_0..kappa_n
    nu = np.r_[hinges[:, 1], 0.0]
    f = np.zeros(3 * n + 3)
    for k in range(1, n + 1):
        c = rods[k - 1, 2] / rods[k - 1, 0]
        f[2 + k] = (-ka[k - 1] * ph[k - 1] + (ka[k - 1] + ka[k]) * ph[k] - ka[k] * ph[k + 1]
                    + ka[k - 1] * al[k] - ka[k] * al[k + 1] - ka[k - 1] * be[k - 1]
                    + ka[k] * be[k]
                    - nu[k - 1] * dph[k - 1] + (nu[k - 1] + nu[k]) * dph[k] - nu[k] * dph[k + 1]
                    + nu[k - 1] * dal[k] - nu[k] * dal[k + 1] - nu[k - 1] * dbe[k - 1]
                    + nu[k] * dbe[k])
        f[2 + n + k] = (-ka[k - 1] * ph[k - 1] + ka[k - 1] * ph[k]
                        + (ka[k - 1] + 4 * c) * al[k] - ka[k - 1] * be[k - 1] + 2 * c * be[k]
                        - nu[k - 1] * dph[k - 1] + nu[k - 1] * dph[k] + nu[k - 1] * dal[k]
                        - nu[k - 1] * dbe[k - 1])
        f[2 + 2 * n + k] = (ka[k] * ph[k] - ka[k] * ph[k + 1] + 2 * c * al[k]
                            - ka[k] * al[k + 1] + (ka[k] + 4 * c) * be[k]
                            + nu[k] * dph[k] - nu[k] * dph[k + 1] - nu[k] * dal[k + 1]
                            + nu[k] * dbe[k])
    return f


@pytest.mark.parametrize("n,seed", [(1, 3), (2, 4), (4, 5)])
def test_stiffness_and_damping_reproduce_printed_equations(n, seed):
    rng = np.random.default_rng(seed)
    _, rods, hinges, q, p = _random_system(rng, n)
    N = 3 * n + 3
    f = np.zeros(N)
    K._elastic_forces(q, p, rods, hinges, f)
    expected = _printed_elastic(q, p, rods, hinges)
    np.testing.assert_allclose(f, expected, rtol=1e-12, atol=1e-12)
    Km, Dm = np.zeros((N, N)), np.zeros((N, N))
    K.elastic_matrices(rods, hinges, Km, Dm)
    np.testing.assert_allclose(Km @ q + Dm @ p, expected, rtol=1e-12, atol=1e-12)
    assert np.allclose(Km, Km.T) and np.allclose(Dm, Dm.T)  # symmetric, as the paper says


# ---------------------------------------------------------------------------------------------
# closed forms (7)
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n,seed", [(1, 6), (3, 7)])
def test_inertia_at_zero_bending_matches_paper_closed_forms(n, seed):
    rng = np.random.default_rng(seed)
    body, rods, _, q, _ = _random_system(rng, n)
    q[3 + n:] = 0.0
    N = 3 * n + 3
    M = np.zeros((N, N))
    K.assemble(q, np.zeros(N), body, rods, M, np.zeros(N))
    l, m, mu = rods[:, 0], rods[:, 1], rods[:, 3]
    phi = q[3:3 + n]
    c, s = np.cos(phi), np.sin(phi)
    x0, y0 = body[2], body[3]
    Mtot = body[0] + np.sum(mu + m * l)
    Mk = np.array([np.sum(mu[k:] + m[k:] * l[k:]) - m[k] * l[k] / 2 for k in range(n)])
    J = body[1]
    for k in range(n):
        X = x0 + np.sum(l[:k + 1] * c[:k + 1])
        Y = y0 + np.sum(l[:k + 1] * s[:k + 1])
        J += ((mu[k] + m[k] * l[k]) * (X ** 2 + Y ** 2)
              - m[k] * l[k] ** 2 * (c[k] * x0 + s[k] * y0
                                    + np.sum(l[:k + 1] * np.cos(phi[k] - phi[:k + 1])))
              + m[k] * l[k] ** 3 / 3)
    # closed forms of the paper: rounding-level agreement
    assert M[0, 0] == pytest.approx(Mtot, rel=1e-13)
    assert M[1, 1] == pytest.approx(Mtot, rel=1e-13)
    assert M[2, 2] == pytest.approx(J, rel=1e-12)
    np.testing.assert_allclose(M[0, 3:3 + n], -Mk * l * s, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(M[1, 3:3 + n], Mk * l * c, rtol=1e-12, atol=1e-12)
    # digest 10.7 reference values in the alpha_k row
    for k in range(n):
        ia, ib = 3 + n + k, 3 + 2 * n + k
        assert M[ia, ia] == pytest.approx(m[k] * l[k] ** 3 / 105, rel=1e-12)
        assert M[ia, ib] == pytest.approx(-m[k] * l[k] ** 3 / 140, rel=1e-12)
        assert M[ia, 3 + k] == pytest.approx(m[k] * l[k] ** 3 / 30, rel=1e-12)
        assert M[ib, 3 + k] == pytest.approx(-m[k] * l[k] ** 3 / 20, rel=1e-12)


# ---------------------------------------------------------------------------------------------
# the paper's N z structure of the velocity-quadratic terms (14)
# ---------------------------------------------------------------------------------------------
def _quadratic_form(q, body, rods, exact):
    """Coefficients c[i, a, b] (a <= b) of h_i(p) = sum c[i, a, b] p_a p_b, by polarisation
    (h is a homogeneous quadratic in the velocities)."""
    N = q.size
    M = np.zeros((N, N))

    def h(p):
        out = np.zeros(N)
        K.assemble(q, p, body, rods, M, out)
        if not exact:
            K.drop_second_order_bending(q, p, rods, out)
        return out

    E = np.eye(N)
    diag = [h(E[a]) for a in range(N)]
    c = np.zeros((N, N, N))
    for a in range(N):
        c[:, a, a] = diag[a]
        for b in range(a + 1, N):
            c[:, a, b] = h(E[a] + E[b]) - diag[a] - diag[b]
    return c


def _z_form_residual(c, n):
    """Largest coefficient violating h = N z, z = [Om vx, Om vy, Om^2, 2 Om dphi + dphi^2,
    (dalpha - dbeta)(Om + dphi)], and the N matrix built from the allowed ones."""
    N = 3 * n + 3
    OM = 2
    allowed = np.zeros((N, N), bool)
    bad = []
    Nmat = np.zeros((N, 2 * n + 3))
    Nmat[:, 0], Nmat[:, 1], Nmat[:, 2] = c[:, 0, OM], c[:, 1, OM], c[:, OM, OM]
    allowed[0, OM] = allowed[1, OM] = allowed[OM, OM] = True
    for j in range(n):
        f, a, b = 3 + j, 3 + n + j, 3 + 2 * n + j
        Nmat[:, 3 + j] = c[:, f, f]
        bad.append(c[:, OM, f] - 2 * c[:, f, f])
        allowed[OM, f] = allowed[f, f] = True
        g = c[:, OM, a]
        Nmat[:, 3 + n + j] = g
        bad += [c[:, f, a] - g, c[:, OM, b] + g, c[:, f, b] + g]
        allowed[OM, a] = allowed[f, a] = allowed[OM, b] = allowed[f, b] = True
    iu = np.triu_indices(N)
    for a, b in zip(*iu):
        if not allowed[a, b]:
            bad.append(c[:, a, b])
    return np.max(np.abs(bad)), Nmat


@pytest.mark.parametrize("n,seed", [(1, 8), (3, 9)])
def test_bias_without_second_order_terms_is_paper_nz_form_with_antisymmetric_block(n, seed):
    rng = np.random.default_rng(seed)
    body, rods, _, q, _ = _random_system(rng, n)
    scale = np.abs(_quadratic_form(q, body, rods, True)).max()
    res_exact, _ = _z_form_residual(_quadratic_form(q, body, rods, True), n)
    res, Nmat = _z_form_residual(_quadratic_form(q, body, rods, False), n)
    # without the second-order bending terms: exactly N z, and the leading (n+3) x (n+3)
    # block of N is antisymmetric, as the paper states (rounding-level checks) ...
    assert res < 1e-12 * scale
    # ... while the exact bias breaks the z form by O(bending^2) (digest 10.7 item 4), far
    # above rounding
    assert res_exact > 1e3 * max(res, 1e-13 * scale)
    A = Nmat[:n + 3, :n + 3]
    np.testing.assert_allclose(A, -A.T, atol=1e-12 * scale)
