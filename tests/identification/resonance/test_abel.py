"""Abel-type quadratures and the own-resonance inversions against the analytic transform pairs.

Oracles: the closed forms of :mod:`identification.resonance.analytic` (digest B.7), themselves
checked here against direct quadrature of the forward relations (F1)-(F5).
"""
import numpy as np
import pytest

from identification.resonance import analytic as A
from identification.resonance import inversion as inv
from identification.resonance.abel import abel_integral, power_tail, wallis
from identification.resonance.product import abel_product
from identification.resonance.stieltjes import abel_stieltjes

MU, C = 1.3, 2.0
NU = 1.1


def _invert(kind, pair, b, method):
    n = len(b)
    if kind == "odd":
        return inv.restoring_odd(b, pair.forward(b), MU, method=method)
    if kind == "even":
        return inv.restoring_even(b, pair.forward(b), np.full(n, C / MU), MU, method=method)
    if kind == "Deven":
        return inv.damping_even(b, pair.forward(b), method=method)
    if kind == "Dodd":
        return inv.damping_odd(b, pair.forward(b), np.full(n, C / MU), MU, method=method)
    if kind == "Dodd_nu":
        return inv.damping_odd(b, pair.forward(b), np.full(n, C / MU), MU, nu=NU, method=method)
    if kind == "H":
        return inv.velocity_damping(b, pair.forward(b), method=method)
    raise AssertionError(kind)


CASES = [
    ("odd", A.linear_stiffness(C, MU)), ("odd", A.duffing(C, 3.0, MU)),
    ("odd", A.preload(0.5, C, MU)), ("odd", A.dead_zone(2.0, 0.3, MU)),
    ("even", A.quadratic_even(0.7, C)), ("even", A.abs_even(0.4, C)),
    ("Deven", A.viscous(0.3)), ("Deven", A.viscous_plus_square(0.2, 1.5)),
    ("Deven", A.abs_damping(0.8)),
    ("Dodd", A.linear_odd_damping(0.5, MU, C / MU)),
    ("Dodd_nu", A.linear_odd_damping(0.5, MU, C / MU, NU)),
    ("H", A.linear_velocity(0.3)), ("H", A.quadratic_velocity(0.5)), ("H", A.coulomb(0.2)),
]
# Characteristics with a V(b) that is linear in b above the first amplitude: product integration
# is exact for them (error at rounding level).
EXACT = {"abs d=0.4", "coulomb Fc=0.2"}
# Dead zone: V(b) = b^2 omega^2 rises like (b - delta)^{3/2} at the kink; the observed product
# order drops to about 1 there (measured 0.97-1.0 over 40..320 points).
ORDER_PRODUCT = {"dead zone g=2.0 delta=0.3": 0.85}


def _error(kind, pair, n, method):
    b = np.linspace(0.05, 1.0, n)
    ch = _invert(kind, pair, b, method)
    sel = ch.x > 0.2  # away from the law below the first amplitude and the x -> 0 end of 1/x
    ref = pair.characteristic(ch.x)
    return np.max(np.abs(ch.value[sel] - ref[sel])) / np.max(np.abs(ref))


@pytest.mark.parametrize(("kind", "pair"), CASES, ids=[p.name for _, p in CASES])
def test_observed_order_of_each_inversion(kind, pair):
    grids = (40, 80, 160, 320)
    for method in ("product", "stieltjes"):
        errs = np.array([_error(kind, pair, n, method) for n in grids])
        if method == "product" and pair.name in EXACT:
            assert errs.max() < 1e-12  # exact for piecewise-linear V: rounding only
            continue
        # observed order = slope of log(error) vs log(points), least squares over 4 grids
        order = -np.polyfit(np.log(grids), np.log(errs), 1)[0]
        if method == "product":
            # theory 1.5 (last interval next to the kernel singularity); 1.3 leaves room for the
            # finite-difference outer derivative of D+-; measured 1.38-1.50
            assert order > ORDER_PRODUCT.get(pair.name, 1.3), (method, order, errs)
            assert errs[-1] < 2e-3  # 320 points: measured <= 6e-4
        else:
            # theory 0.5: the midpoint kernel of (4.2) on the last interval misses a fixed
            # fraction (sqrt 2 - 1) of its sqrt(db/x)-sized contribution; measured 0.50-0.51
            assert 0.4 < order < 0.65, (method, order, errs)
            # the paper's property: the relative error decreases along b_h
        assert np.all(np.diff(errs) < 0)


def test_paper_quadrature_error_grows_absolutely_and_falls_relatively():
    """[P] after (4.2): along b_h the absolute error rises, the relative error falls (V = b^2)."""
    b = np.linspace(0.0, 1.0, 41)
    f = abel_stieltjes(b, b * b, b[1:])
    exact = 2 * b[1:]
    abs_err = np.abs(f - exact)
    assert np.all(np.diff(abs_err) > 0)
    assert np.all(np.diff(abs_err / exact) < 0)


def test_product_rule_is_exact_for_linear_V_and_matches_wallis_for_powers():
    b = np.linspace(0.0, 2.0, 11)
    np.testing.assert_allclose(abel_product(b, 3 * b, b[1:]), 3 * np.pi / 2, rtol=1e-14)
    # V = b^n -> n W_{n-1} x^{n-1}; 4000 nodes, product error O(h^1.5) ~ 1e-5 relative
    bb = np.linspace(0, 1, 4000)
    for n in (2, 3, 4):
        got = abel_product(bb, bb ** n, np.array([0.5, 1.0]))
        want = n * wallis(n - 1) * np.array([0.5, 1.0]) ** (n - 1)
        np.testing.assert_allclose(got, want, rtol=2e-4)


def test_power_tail_closed_form_against_dense_product_rule():
    b1, V1, p = 0.3, 1.7, 2.6
    x = np.array([0.1, 0.3, 0.5, 1.0])
    ref = []
    for xi in x:
        bb = np.linspace(0, min(xi, b1), 200001)
        VV = V1 * (bb / b1) ** p
        if xi > b1:  # a flat segment [b1, x] adds nothing to the integral
            bb, VV = np.r_[bb, xi], np.r_[VV, V1]
        ref.append(abel_product(bb, VV, np.array([xi]))[0])
    # dense product rule: relative error ~ (h/x)^1.5 < 1e-6
    np.testing.assert_allclose(power_tail(b1, V1, p, x), ref, rtol=1e-5)


def test_below_laws_are_all_exact_in_their_own_class():
    b = np.linspace(0.2, 1.0, 60)
    lin = A.linear_stiffness(C, MU)
    pre = A.preload(0.5, C, MU)
    x = np.array([0.1, 0.5])
    # linear stiffness: V = c b^2, the "power" and "linear" laws are exact below b1
    for below in ("power", "linear"):
        ch = inv.restoring_odd(b, lin.forward(b), MU, below=below)
        np.testing.assert_allclose(ch(x), lin.characteristic(x), rtol=3e-3)
    # "chord" (V linear from 0 to b1, the paper's b0 = 0) is wrong for it below b1
    ch = inv.restoring_odd(b, lin.forward(b), MU, below="chord")
    assert abs(ch(0.1) / 0.2 - 1) > 0.2
    # preload: V = c b^2 + 4 F0 b / pi is ~linear near 0; the fitted exponent is close to 1
    ch = inv.restoring_odd(b, pre.forward(b), MU, below="power")
    assert 1.0 <= ch.exponent < 1.5  # local slope of c b^2 + 0.64 b at b = 0.2..0.25: 1.41
    assert ch.exponent == pytest.approx(
        np.polyfit(np.log(b[:4]), np.log(b[:4] ** 2 * pre.forward(b[:4])), 1)[0])


@pytest.mark.parametrize(("pair", "kind"), [
    (A.duffing(C, 3.0, MU), "omega2"), (A.preload(0.5, C, MU), "omega2"),
    (A.dead_zone(2.0, 0.3, MU), "omega2"), (A.odd_power(5, MU), "omega2"),
    (A.viscous_plus_square(0.2, 1.5), "lambda_D"), (A.abs_damping(0.8), "lambda_D"),
    (A.quadratic_velocity(0.5), "lambda_H"), (A.coulomb(0.2), "lambda_H"),
], ids=lambda p: getattr(p, "name", p))
def test_analytic_pairs_match_forward_quadrature(pair, kind):
    b = np.array([0.2, 0.45, 1.0])
    got = A.forward_quadrature(kind, pair.characteristic, b, mu=MU)
    # midpoint rule in psi on 4096 points: first order at jumps (preload, Coulomb) ~ 1e-4
    np.testing.assert_allclose(got, pair.forward(b), rtol=5e-4)


def test_coupling_coefficients_match_quadrature():
    for coeffs, l in (({2: 1.3, 4: -0.4}, 2), ({3: 0.7, 5: 0.2, 1: 2.0}, 3)):
        pair = A.coupling_power(coeffs, l)
        b = np.array([0.3, 1.2])
        np.testing.assert_allclose(A.forward_quadrature("coupling", pair.characteristic, b, l=l),
                                   pair.forward(b), rtol=1e-9, atol=1e-12)
    assert A.chebyshev_coefficient(5, 3) == 5 / 16 and A.chebyshev_coefficient(1, 3) == 0


def test_even_part_halves_with_the_literal_ocr_a0():
    """Convention a0 = c0 = 2 mean(x): the literal a0 = c0/2 returns half of phi+."""
    b = np.linspace(0.05, 1, 200)
    pair = A.quadratic_even(0.7, C)
    full = inv.restoring_even(b, pair.forward(b), np.full(200, C / MU), MU)
    half = inv.restoring_even(b, 0.5 * pair.forward(b), np.full(200, C / MU), MU)
    np.testing.assert_allclose(half.value / full.value, 0.5)
    np.testing.assert_allclose(full(0.8), 0.7 * 0.64, rtol=1e-3)


def test_bad_input_names_the_key():
    from models.errors import InputError
    with pytest.raises(InputError, match="method"):
        abel_integral(np.array([1.0, 2.0]), np.array([1.0, 2.0]), np.array([1.5]), method="x")
    with pytest.raises(InputError, match="increasing"):
        inv.restoring_odd(np.array([1.0, 0.5]), np.array([1.0, 1.0]), 1.0)


def test_dead_zone_law_below_the_first_amplitude():
    """A dead zone whose first measured amplitude lies beyond the gap's edge (b_1 = 1.13
    delta): the exact backbone V = g B(b; delta) at 120 amplitudes. The power law (its
    exponent clipped at 6) spreads the rise over [0, b_1] and gives the force at b_1 36 % off;
    the dead-zone law recognised from the first 8 points gives it to the product rule's own
    error on this grid (measured 0.78 % at most beyond 1.1 delta; 1 % bounds it)."""
    from identification.resonance.abel import abel_integral, dead_zone_backbone, dead_zone_fit

    g, d = 3.0, 0.1
    b = np.linspace(0.113, 0.4, 120)
    V = g * dead_zone_backbone(b, d)
    g_fit, d_fit, r = dead_zone_fit(b[:8], V[:8])
    assert d_fit == pytest.approx(d, rel=0.01) and r < 1e-3
    x = np.r_[np.linspace(0.101, 0.112, 8), b]
    truth = g * np.maximum(x - d, 0.0)
    sel = x > 1.1 * d
    I_pow, p = abel_integral(b, V, x, kink=False)
    I_dz, p_dz = abel_integral(b, V, x, kink=True)
    assert p == 6.0 and p_dz is None
    assert np.max(np.abs(0.5 * I_pow - truth)[sel] / truth[sel]) > 0.3
    assert np.max(np.abs(0.5 * I_dz - truth)[sel] / truth[sel]) < 0.01
    # a linear spring (V = c b^2) and a preload (V = c b^2 + 4 F0 b / pi) keep the power law
    for V2 in (2.0 * b * b, 2.0 * b * b + 4 * 0.1 * b / np.pi):
        assert abel_integral(b, V2, x, kink=True)[1] is not None
