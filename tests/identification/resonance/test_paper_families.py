"""The four families of the resonance paper's computer study (digest B.9), simulated from
stated truth (:mod:`paper_cases`: unit mass, constant frequency, slow linear force ramp), and
a record with an amplitude jump; plus the conditioning of the amplitude sequence.

Acceptance: over the measured amplitude range (both signs of x), mean relative error of the
identified restoring force (and of the damping force for the fourth family) at most 2 %, and
no point off by more than 10 % outside the lowest tenth of the range. The denominator is the
true value floored at 5 % of its largest value in the range (the dead zone's force is 0 at
its edge, where a relative error has no meaning). The paper reports mean errors of several
percent on such cases.
"""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import paper_cases as PC  # noqa: E402

from identification.resonance.conditioning import isotonic, merge_windows, node_scatter  # noqa: E402,E501
from identification.resonance.harmonics import amplitude_sequence  # noqa: E402
from identification.resonance.own import bootstrap_bands, identify_own_resonance  # noqa: E402

FAMILIES = ["dead_zone", "preload", "asymmetric", "quadratic_damping"]


def identify(name, **kw):
    p = PC.CASES[name]
    t, x, f = PC.simulate(p)
    seq = amplitude_sequence(t, x, f, p["nu"], p["mass"], **kw)
    return p, seq, identify_own_resonance(seq)


def mean_and_max(curve, truth, lo, hi):
    x, err = PC.relative_errors(curve, truth, lo, hi)
    upper = x >= lo + 0.1 * (hi - lo)
    return float(err.mean()), float(err[upper].max())


@pytest.mark.parametrize("name", FAMILIES)
def test_family_meets_acceptance(name):
    p, seq, cur = identify(name)
    phi, H = PC.truth_of(p)
    assert not seq.jumps
    mean_f, max_f = mean_and_max(cur.restoring_force, phi, seq.b[0], seq.b[-1])
    # measured (mean / max above the lowest tenth): dead zone 0.12 / 0.91 %, preload
    # 0.17 / 0.70 %, asymmetric (d/c = 0.2) 0.38 / 0.43 % (3.3 / 3.3 % without the offset
    # correction, offset.py), quadratic damping 0.29 / 0.57 %
    assert mean_f < 0.02 and max_f < 0.10, (mean_f, max_f)
    if name == "quadratic_damping":
        mean_h, max_h = mean_and_max(cur.damping_force, H, seq.v[0], seq.v[-1])
        # measured 1.64 / 5.37 %: the preload's third harmonic adds dissipation the first
        # approximation gives to the first harmonic (largest at small amplitude)
        assert mean_h < 0.02 and max_h < 0.10, (mean_h, max_h)


def test_jump_record_has_no_wrong_sign_and_flags_the_gap():
    """Sign-type preload driven above its linear frequency: the amplitude jumps from the
    stuck lower branch to the upper branch at breakaway."""
    p, seq, cur = identify("preload_jump")
    phi, _ = PC.truth_of(p)
    # one jump: the beating within its settling time is not taken for further jumps
    assert len(seq.jumps) == 1 and len(seq.gaps) == 1
    lo, hi = max(seq.gaps, key=lambda g: g[1] - g[0])
    # stuck (< 0.1 mm) to the upper branch, where the first windows after the settling time
    # 3 * 2 mu / lambda = 120 s sit (measured 0.39; the response landed at about 0.3)
    assert lo < 0.01 and hi > 0.3
    x = np.linspace(-seq.b[-1], seq.b[-1], 2001)
    f = cur.restoring_force(x)
    assert np.all(np.sign(f[x != 0]) == np.sign(phi(x[x != 0])))
    # the force in the gap is flagged as interpolated, and only there
    inside = (np.abs(x) > lo) & (np.abs(x) < hi)
    assert np.array_equal(cur.interpolated(x), inside)
    # above the gap the curve is identified again: within 10 % beyond 1.5x the gap's end
    # (the interpolated stretch still enters the integral there: measured 2.9 %)
    far = np.abs(x) > min(1.5 * hi, 0.9 * seq.b[-1])
    assert np.max(np.abs(f[far] / phi(x[far]) - 1)) < 0.10
    # the same record without the conditioning (no settling, no merging: only sorting) has
    # the spikes: measured 75 of 2000 points of the wrong sign, down to -3.8x the
    # truth (the pipeline before the conditioning: 20 points, down to -0.12x)
    t, xr, fr = PC.simulate(p)
    raw = identify_own_resonance(amplitude_sequence(t, xr, fr, p["nu"], p["mass"],
                                                    rel_step=0.0, n_tau=0.0), monotone=False,
                                 offset=False)
    g = raw.restoring_force(x)
    assert np.sum(np.sign(g[x != 0]) != np.sign(phi(x[x != 0]))) > 20


def test_shipped_dead_zone_jump_has_no_wrong_sign():
    from telemetry_samples import sample_path
    from telemetry_samples.resonance import generate as G
    from recon.io import read_table

    fr, _ = read_table(sample_path("resonance", "jump.csv"), {"t": "s", "x": "m", "force": "N"})
    p = G.CASES["jump"]
    seq = amplitude_sequence(fr.t.to_numpy(), fr.x.to_numpy(), fr.force.to_numpy(), p["nu"],
                             p["mass"])
    cur = identify_own_resonance(seq)
    x = np.linspace(1e-4, seq.b[-1], 2000)
    f, true = cur.restoring_force(x), G.restoring_truth(p)(x)
    # no point of the wrong sign where the truth is non-zero (outside the dead zone)
    assert np.all(f[true > 0] > 0)
    assert len(seq.gaps) == 1 and cur.interpolated(0.5 * sum(seq.gaps[0]))


def test_near_duplicate_amplitudes_are_merged_and_give_no_spike():
    """The issue's situation built directly: two windows 0.30129 and 0.30131 with omega^2 off
    by 2 % between them, in an otherwise linear sequence."""
    b = np.r_[np.linspace(0.1, 0.30129, 40), 0.30131, np.linspace(0.31, 0.6, 30)]
    w2 = np.full(len(b), 1.3)
    w2[40] *= 0.98
    merged, q, count, _ = merge_windows(b, {"omega2": w2})
    assert np.all(np.diff(merged) >= 0.01 * merged[:-1] * 0.999)  # 1 % apart (bin width)
    assert count.max() >= 2
    from identification.resonance.inversion import restoring_odd

    raw = restoring_odd(b, w2, 1.0)  # unconditioned: the spike of the issue
    cond = restoring_odd(merged, q["omega2"], 1.0, monotone=True, weights=count)
    xs = np.linspace(0.1, 0.6, 500)
    assert np.min(raw(xs) / (1.3 * xs)) < 0.5  # a spike of well over 50 %
    # merged: the 2 % outlier is averaged with its twin (1 % error in V at one node) and the
    # nodes are >= 1.7 % apart, so the kernel amplifies it to about 1 % * sqrt(2 / 0.017)
    # = 11 % at most; measured 5.4 %, and never the wrong sign
    err = cond(xs) / (1.3 * xs) - 1
    assert np.max(np.abs(err)) < 0.11 and np.all(cond(xs) > 0)


def test_offset_correction_removes_the_asymmetric_bias():
    p, seq, _ = identify("asymmetric")
    phi, _ = PC.truth_of(p)
    plain = identify_own_resonance(seq, offset=False)
    mean_plain, _ = mean_and_max(plain.restoring_force, phi, seq.b[0], seq.b[-1])
    # the first approximation's 8 d^2 / (pi^2 c) = 3.2 % in the odd part (measured 3.3 %)
    assert 0.025 < mean_plain < 0.04


def test_offset_balance_against_brute_force():
    """c x + d |x|: the offset solves c a + d <|a + b sin psi|> = 0, with the closed form
    <|a + b sin psi|> = (2 / pi) (sqrt(b^2 - a^2) + a arcsin(a / b)); omega^2 against a
    200 000-point quadrature; a symmetric force has a = 0 and the (F1) value."""
    from scipy.optimize import brentq

    from identification.resonance.analytic import forward_quadrature
    from identification.resonance.offset import offset_balance

    c, d, mu = 1.0, 0.2, 1.3
    b = np.array([0.1, 0.5, 2.0])

    def phi(x):
        return c * x + d * np.abs(x)

    a0, w2 = offset_balance(phi, b, mu)
    for bi, a0i, w2i in zip(b, a0, w2):
        a = brentq(lambda a: c * a + d * 2 / np.pi * (np.sqrt(bi * bi - a * a)
                                                      + a * np.arcsin(a / bi)), -bi, bi)
        # the mean of the kinked |a + b sin psi| by the 256-point midpoint rule: ~1e-5
        assert a0i == pytest.approx(2 * a, rel=1e-4)
        s = np.sin((np.arange(200000) + 0.5) * 2 * np.pi / 200000)
        w2_ref = 2 * np.mean(phi(a + bi * s) * s) / (bi * mu)
        # midpoint rule on the kinked integrand: first order, 256 points -> ~1e-4
        assert w2i == pytest.approx(w2_ref, rel=5e-4)
        assert w2i < c / mu  # the offset lowers the equivalent odd stiffness
    a0, w2 = offset_balance(lambda x: x + x ** 3, b, mu)
    assert np.all(np.abs(a0) < 1e-12)
    np.testing.assert_allclose(w2, forward_quadrature("omega2", lambda x: x + x ** 3, b, mu=mu),
                               rtol=1e-9)


def test_isotonic_is_the_least_squares_monotone_fit():
    y = np.array([1.0, 3.0, 2.0, 4.0, 3.5, 3.0, 6.0])
    w = np.array([1.0, 1.0, 3.0, 1.0, 1.0, 2.0, 1.0])
    z = isotonic(y, w)
    assert np.all(np.diff(z) >= 0)
    # brute force: the weighted mean of each pooled block
    np.testing.assert_allclose(z, [1.0, 2.25, 2.25, 3.375, 3.375, 3.375, 6.0])
    np.testing.assert_array_equal(isotonic(np.arange(5.0)), np.arange(5.0))


def test_node_scatter_estimates_independent_noise():
    rng = np.random.default_rng(1)
    b = np.linspace(0.1, 1.0, 400)
    q = 1.0 + 0.3 * b ** 2 + 0.01 * rng.standard_normal(400)
    s = node_scatter(b, q)
    # 11-node RMS of 400 draws: within 25 % of the true 0.01 on average over the nodes
    assert abs(np.median(s) / 0.01 - 1) < 0.25


def test_bands_match_the_spread_over_noise_seeds_and_are_seeded():
    p = PC.CASES["preload"]
    est, dmp = [], []
    for seed in range(8):
        t, x, f = PC.simulate(p, noise=0.002, seed=seed)
        seq = amplitude_sequence(t, x, f, p["nu"], p["mass"])
        cur = identify_own_resonance(seq)
        if seed == 0:
            xs = np.linspace(1.1 * seq.b[0], 0.95 * seq.b[-1], 40)
            vs = xs * p["nu"]
            bands = bootstrap_bands(cur, xs, vs, n_draws=100, seed=1)
            again = bootstrap_bands(cur, xs, vs, n_draws=100, seed=1)
        est.append(cur.restoring_force(xs))
        dmp.append(cur.damping_force(vs))
    np.testing.assert_array_equal(bands.restoring, again.restoring)
    assert np.all(bands.restoring[0] <= bands.restoring[1])
    assert np.all(bands.restoring[2] <= bands.restoring[3])
    for q, spread in ((bands.restoring, np.std(est, axis=0, ddof=1)),
                      (bands.damping, np.std(dmp, axis=0, ddof=1))):
        ratio = np.median(0.5 * (q[2] - q[1]) / spread)
        # measured 0.97 (restoring) and 1.06 (damping); the spread of 8 seeds is itself
        # uncertain by ~25 %, so a factor 2 either way is the bound of a calibrated band
        assert 0.5 < ratio < 2.0, ratio


def test_the_paper_faithful_configuration_is_several_times_coarser():
    """[P]'s own numerical method on the same records (quadrature (4.2) with b_0 = 0, the
    stationary formulas, every window kept, no regularisation or offset correction) has the
    mean errors of several percent the paper reports; ours is at least 5x lower on the
    restoring force of every family."""
    paper = {"ramp_correction": False, "rel_step": 0.0}
    inv = {"method": "stieltjes", "below": "chord", "monotone": False, "offset": False}
    for name in FAMILIES:
        p = PC.CASES[name]
        t, x, f = PC.simulate(p)
        phi, _ = PC.truth_of(p)
        seq = amplitude_sequence(t, x, f, p["nu"], p["mass"])
        ours, _ = mean_and_max(identify_own_resonance(seq).restoring_force, phi, seq.b[0],
                               seq.b[-1])
        seq = amplitude_sequence(t, x, f, p["nu"], p["mass"], **paper)
        theirs, _ = mean_and_max(identify_own_resonance(seq, **inv).restoring_force, phi,
                                 seq.b[0], seq.b[-1])
        # measured mean errors, ours / paper's: dead zone 0.12 / 3.05 %, preload 0.17 / 2.95,
        # asymmetric 0.38 / 6.70, quadratic damping 0.29 / 3.62
        assert theirs > 0.02 and ours < theirs / 5, (name, ours, theirs)
