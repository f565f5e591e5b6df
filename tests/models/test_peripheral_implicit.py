"""The implicit ring-ring contact terms of the peripheral kernel
(models/peripheral/_kernels/implicit.py): the velocity Jacobian of one contact against the
contact law by central differences, its 6 x 6 form on the ring, and the linear solve of the
wrench correction against numpy."""
from __future__ import annotations

import numpy as np
import pytest

from models._kernels import contact_layout as ck
from models.peripheral._kernels import implicit as pi
from models._kernels.contact_force import contact_force


def _law(k=2e6, c=2000.0, mu=0.1, veps=0.01, model=ck.MODEL_LINEAR):
    law = np.zeros(ck.LAW_SIZE)
    law[ck.LAW_K], law[ck.LAW_C], law[ck.LAW_MU], law[ck.LAW_VEPS] = k, c, mu, veps
    law[ck.LAW_MODEL] = model
    return law


def _skew(r):
    return np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])


def _d6(law, depth, n, rv, r):
    fn, dd, *_ = contact_force(depth, *n, *rv, law)
    D = np.zeros(pi.ND)
    pi.add_contact(D, law, fn, dd, depth, *n, *rv, *r)
    D = D.reshape(6, 6)
    return np.triu(D) + np.triu(D, 1).T


def _fd_jacobian(law, depth, n, rv, h=1e-7):
    """-d(force on the ring)/d(relative velocity) = d(force on the passive)/d(rv)."""
    out = np.zeros((3, 3))
    for j in range(3):
        e = np.zeros(3)
        e[j] = h
        fp = np.array(contact_force(depth, *n, *(rv + e), law)[2:])
        fm = np.array(contact_force(depth, *n, *(rv - e), law)[2:])
        out[:, j] = (fp - fm) / (2 * h)
    return out


@pytest.mark.parametrize("model", [ck.MODEL_LINEAR, ck.MODEL_HUNT_CROSSLEY])
def test_contact_jacobian_is_the_laws(model):
    # D_c = c n n^T + g (I - n n^T - t t^T / s^2): without friction the law's velocity
    # Jacobian is c n n^T exactly, without damping it is the friction's (f_n then does not
    # depend on the velocity); mapped to the ring's twist by J_c = [I, -[r]x]. Central
    # differences with h = 1e-7 m/s: truncation ~ h^2 f''' ~ 1e-9 of the entries, rounding
    # ~ eps f_n / h ~ 1e-7 N s/m (f_n ~ 100 N), which the Hunt-Crossley damping's 0.1 N s/m
    # entries see: atol 1e-6 of the largest entry plus 1e-6 N s/m.
    rng = np.random.default_rng(3)
    for _ in range(5):
        n = rng.normal(size=3)
        n /= np.linalg.norm(n)
        rv = rng.normal(scale=0.02, size=3)
        rv -= 0.7 * (rv @ n) * n                     # keep f_n > 0 at the depth below
        r = rng.normal(scale=0.5, size=3)
        depth = 5e-5
        Jc = np.hstack([np.eye(3), -_skew(r)])
        for law in (_law(mu=0.0, model=model), _law(c=0.0, model=model)):
            Dc = _fd_jacobian(law, depth, n, rv)
            want = Jc.T @ Dc @ Jc
            got = _d6(law, depth, n, rv, r)
            np.testing.assert_allclose(got, want, rtol=0,
                                       atol=1e-6 * np.abs(want).max() + 1e-6)
        # both terms: the damping's part and the friction's at the normal force with damping
        # (the friction's dependence on f_n's rate is left out)
        law = _law(model=model)
        fn = contact_force(depth, *n, *rv, law)[0]
        fn0 = contact_force(depth, *n, *rv, _law(c=0.0, model=model))[0]
        want = _d6(_law(mu=0.0, model=model), depth, n, rv, r) \
            + _d6(_law(c=0.0, model=model), depth, n, rv, r) * (fn / fn0)
        got = _d6(law, depth, n, rv, r)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9 * np.abs(want).max())


def test_no_force_no_jacobian():
    law = _law()
    D = np.zeros(pi.ND)
    pi.add_contact(D, law, 0.0, -0.01, 1e-6, 1.0, 0.0, 0.0, -0.01, 0.0, 0.0, 0.1, 0.2, 0.3)
    assert not D.any()


def test_ring_correction_solves_the_implicit_system():
    # dW = -h_g D x with (M + h_g D) x = M x0, M = diag(m I, R^T J_R R)
    rng = np.random.default_rng(5)
    B = rng.normal(size=(6, 6))
    D = B @ B.T * 1e3
    m = 40.0
    JR = np.array([[22.0, 0.5, -0.2], [0.5, 12.0, 0.1], [-0.2, 0.1, 12.5]])
    q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    x0 = rng.normal(size=6)
    hg = 1e-3
    M = np.zeros((6, 6))
    M[:3, :3] = m * np.eye(3)
    M[3:, 3:] = q.T @ JR @ q
    want = -hg * D @ np.linalg.solve(M + hg * D, M @ x0)
    dw = np.zeros(6)
    pi.ring_correction(np.triu(D).ravel().copy(), hg, m, JR.ravel().copy(), q, x0,
                       np.zeros(pi.NW), dw)
    np.testing.assert_allclose(dw, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())


def test_integration_refuses_an_unknown_mode():
    from models.errors import InputError
    from models.peripheral.simulate import Integration
    d = {"dt_contact": 4e-4, "dt_free": 2e-3, "dt_captured": 2e-3, "duration": 1.0,
         "output_rate": 50.0}
    assert Integration.from_dict(d).implicit_contact == "never"
    assert Integration.from_dict({**d, "implicit_contact": "captured"}).implicit_contact \
        == "captured"
    with pytest.raises(InputError, match="integration.implicit_contact"):
        Integration.from_dict({**d, "implicit_contact": "always"})
