"""Added-mass method (2.5): exact form exact, first-order form converges as d_m -> 0."""
import numpy as np
import pytest

from identification.resonance.mass import reduced_mass


@pytest.mark.parametrize("rho", [1.0, 0.6])
def test_added_mass(rho):
    mu, gamma = 2.5, 900.0
    w = np.sqrt(gamma / mu)
    errs = []
    for dm in (0.2, 0.1, 0.05):
        w1 = np.sqrt(gamma / (mu + rho ** 2 * dm))
        assert reduced_mass(w, w - w1, dm, rho, exact=True) == pytest.approx(mu, rel=1e-12)
        errs.append(abs(reduced_mass(w, w - w1, dm, rho) / mu - 1))
    # first-order form: error ~ (3/4) rho^2 dm / mu, halves with dm
    assert errs[0] > errs[1] > errs[2] and errs[1] / errs[2] == pytest.approx(2, rel=0.1)
