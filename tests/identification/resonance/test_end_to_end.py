"""End to end on the shipped synthetic records: read -> harmonics -> Abel inversion -> truth.

What the default method (product integration, no refinement) must reach: restoring force
within 3 % wherever the true force exceeds 10 % of its maximum and the point is more than 5 %
of the amplitude range from a discontinuity of the characteristic (value or slope); damping
force H(v) within 5 % wherever the true damping force exceeds 10 % of its maximum.
"""
import numpy as np
import pytest

from identification.resonance.harmonics import amplitude_sequence
from identification.resonance.own import identify_own_resonance
from recon.io import read_table
from telemetry_samples import sample_path
from telemetry_samples.resonance import generate as G

SMOOTH = ["dead_zone", "preload", "asymmetric", "quadratic_damping"]


def load(name):
    frame, _ = read_table(sample_path("resonance", f"{name}.csv"),
                          {"t": "s", "x": "m", "force": "N"}, required=("t", "x", "force"))
    return frame.t.to_numpy(), frame.x.to_numpy(), frame.force.to_numpy()


def errors(name, result):
    """Largest relative errors of the restoring force and of H(v) in the acceptance regions."""
    p = G.CASES[name]
    seq = result.sequence
    x = np.linspace(-seq.b[-1], seq.b[-1], 801)
    f_true = G.restoring_truth(p)(x)
    mask = np.abs(f_true) > 0.1 * np.abs(f_true).max()
    for d in G.discontinuities(p):
        mask &= np.abs(x - d) > 0.05 * (2 * seq.b[-1])
    v = np.linspace(0, seq.v[-1], 401)[1:]
    h_true = G.damping_truth(p)(v)
    mh = np.abs(h_true) > 0.1 * np.abs(h_true).max()
    ef = np.abs(result.restoring_force(x[mask]) - f_true[mask]) / np.abs(f_true[mask])
    eh = np.abs(result.damping_force(v[mh]) - h_true[mh]) / np.abs(h_true[mh])
    return ef.max(), eh.max()


@pytest.mark.parametrize("name", SMOOTH)
def test_identification_without_refinement_meets_acceptance(name):
    p = G.CASES[name]
    t, x, f = load(name)
    seq = amplitude_sequence(t, x, f, p["nu"], p["mass"])
    assert not seq.jumps
    ef, eh = errors(name, identify_own_resonance(seq))
    # measured: dead zone 0.33 % / 1.95 %, preload 0.70 / 1.91, asymmetric 1.25 / 0.70,
    # quadratic damping 1.63 / 2.13
    assert ef < 0.03, ef
    assert eh < 0.05, eh


def test_paper_quadrature_is_coarser_on_the_same_record():
    """(4.2) at the same 182 amplitudes: order 0.5, errors several times larger."""
    p = G.CASES["dead_zone"]
    t, x, f = load("dead_zone")
    seq = amplitude_sequence(t, x, f, p["nu"], p["mass"])
    ef_p, _ = errors("dead_zone", identify_own_resonance(seq, method="product"))
    ef_s, _ = errors("dead_zone", identify_own_resonance(seq, method="stieltjes"))
    assert ef_s > 3 * ef_p  # measured 11.8 % against 0.33 %


def test_amplitude_jump_is_reported_not_smoothed():
    p = G.CASES["jump"]
    t, x, f = load("jump")
    seq = amplitude_sequence(t, x, f, p["nu"], p["mass"])
    assert len(seq.jumps) == 1
    jump = seq.jumps[0]
    # lower branch just outside the dead zone (delta = 10 mm) to the upper branch
    assert 0.011 < jump.b_before < 0.016 and jump.b_after > 0.07
    assert jump.windows_dropped >= 1
    # no measured amplitude inside the gap: the sequence is not filled in
    assert not np.any((seq.b > jump.b_before) & (seq.b < jump.b_after))
    # the records without a jump report none (same detector settings)
    for name in SMOOTH:
        q = G.CASES[name]
        assert not amplitude_sequence(*load(name), q["nu"], q["mass"]).jumps


@pytest.mark.parametrize("name", ["preload", "jump"])
def test_shipped_records_regenerate_from_the_script(name):
    t, x, f = G.simulate_case(G.CASES[name])
    t0, x0, f0 = load(name)
    # CSV holds 10 significant digits
    np.testing.assert_allclose(t0, t, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(x0, x, rtol=1e-8, atol=1e-14)
    np.testing.assert_allclose(f0, f, rtol=1e-8, atol=1e-12)


def test_dead_zone_restoring_force_at_the_record_amplitudes():
    """The shipped dead-zone record, default inversion, at every measured amplitude beyond the
    gap (both signs), against its truth. The error is first order in the amplitude spacing
    over the distance to the gap's edge, ``C db / (b - delta)`` (a piecewise-linear
    integrator and window averages across a ``(b - delta)^(3/2)`` rise misplace the kink by
    up to one interval), plus the first approximation's floor away from it; the amplitudes
    are sparse exactly there (``db / (b - delta)`` 1.4 at the first one). Measured: C 0.47
    at most (0.16 beyond 1.2 delta), floor 0.2 % (largest error beyond twice the gap);
    bound ``0.5 db / (b - delta) + 0.5 %``. Also a mean over the amplitudes beyond 1.2 delta:
    measured 0.39 %, bound 1 %."""
    p = G.CASES["dead_zone"]
    t, x, f = load("dead_zone")
    seq = amplitude_sequence(t, x, f, p["nu"], p["mass"])
    cur = identify_own_resonance(seq)
    d = p["delta"]
    b = seq.b[seq.b > d]
    db = np.gradient(seq.b)[seq.b > d]
    truth = G.restoring_truth(p)(b)
    err = np.maximum(np.abs(cur.restoring_force(b) - truth),
                     np.abs(cur.restoring_force(-b) + truth)) / truth
    bound = 0.5 * db / (b - d) + 0.005
    assert np.all(err < bound), (b[err >= bound] / d, err[err >= bound])
    assert err[b > 1.2 * d].mean() < 0.01
