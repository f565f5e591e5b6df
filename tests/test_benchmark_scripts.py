"""The computations of the benchmark scripts whose figures ``benchmarks/README.md`` quotes as
findings (not their timings): checked against closed forms on seeded draws."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from scipy.special import ndtr

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


def _script(name):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_marginal_shape_of_a_gaussian_and_of_a_peaked_marginal():
    """``study_marginals.marginal_scores``: a Gaussian marginal has 68 % / 95 % half-widths of
    1 and 1.96 sd, no excess kurtosis, and ranks a truth at ``z`` sd at Phi(z); a Laplace
    marginal (excess kurtosis 3) has the narrower 68 % half-width ln(1/0.32) / sqrt(2) = 0.806
    sd and the 95 % one ln(1/0.05) / sqrt(2) = 2.118 sd. 200 000 draws: the quantiles'
    sampling error is under 0.01 sd, the kurtosis' under 0.05 (Gaussian) and 0.2 (Laplace)."""
    m = _script("study_marginals")
    rng = np.random.default_rng(3)
    g = m.marginal_scores(rng.normal(2.0, 0.5, 200_000), 2.0 + 0.5 * 1.3)
    assert g["w68"] == pytest.approx(0.9945, abs=0.01)      # Phi^-1(0.84)
    assert g["w95"] == pytest.approx(1.96, abs=0.02)
    assert g["kurtosis"] == pytest.approx(0.0, abs=0.05)
    assert g["z"] == pytest.approx(1.3, abs=0.01)
    assert g["pit"] == pytest.approx(ndtr(1.3), abs=0.005)
    lap = m.marginal_scores(rng.laplace(0.0, 1.0, 200_000), 0.0)
    assert lap["w68"] == pytest.approx(np.log(1 / 0.32) / np.sqrt(2), abs=0.01)
    assert lap["w95"] == pytest.approx(np.log(1 / 0.05) / np.sqrt(2), abs=0.02)
    assert lap["kurtosis"] == pytest.approx(3.0, abs=0.2)
    assert lap["pit"] == pytest.approx(0.5, abs=0.005)


def test_flight_look_splits_the_mahalanobis_distance_over_the_correlation_directions():
    """``study_flight_look.look``: ``d2`` is the truth's squared Mahalanobis distance in the
    draws' covariance (computed here by a direct solve), the shares over the eigenvectors of
    the correlation matrix are non-negative and sum to it, and a truth displaced along one
    eigenvector puts all of ``d2`` on that direction."""
    m = _script("study_flight_look")
    rng = np.random.default_rng(5)
    a = rng.normal(size=(4, 4))
    cov = a @ a.T + 0.5 * np.eye(4)
    draws = rng.multivariate_normal([1.0, -2.0, 0.5, 3.0], cov, 50_000)
    truth = np.array([2.0, -1.0, 0.0, 3.5])
    r = m.look(draws, truth)
    mu, c = draws.mean(axis=0), np.cov(draws.T)
    assert r["d2"] == pytest.approx((truth - mu) @ np.linalg.solve(c, truth - mu), rel=1e-9)
    assert np.all(r["share"] >= 0.0)
    assert r["share"].sum() == pytest.approx(r["d2"], rel=1e-12)
    sd = np.sqrt(np.diag(c))
    along = mu + sd * r["vectors"][:, 1] * 2.0      # z = 2 v_1 in standardised units
    one = m.look(draws, along)
    assert one["share"][1] == pytest.approx(one["d2"], rel=1e-9)
    assert one["d2"] == pytest.approx(4.0 / r["eigenvalues"][1], rel=1e-9)


def test_search_start_margins_count_the_analytic_guess_and_the_first_starts_only():
    """``study_search_starts.margins``: the screened starts come best first and the analytic
    guess last; a smaller ``keep`` sees the first ``keep`` and the guess, never the refine
    runs (origin ``refine``), and a keep at least the screen's sees every start."""
    m = _script("study_search_starts")
    costs = [30.0, 12.0, 11.0, 10.0, 10.5, 9.0]
    origins = ["first_guess"] * 5 + ["refine"]
    # screened starts 30, 12, 11, 10; analytic guess 10.5 (last first_guess)
    got = m.margins(costs, origins, [1, 2, 3, 4, 8])
    assert got == {1: 0.5, 2: 0.5, 3: 0.5, 4: 0.0, 8: 0.0}
    got = m.margins([5.0, 7.0, 9.0], ["first_guess"] * 3, [1])
    assert got == {1: 0.0}      # the first screened start (5) is the best of all


def test_search_starts_leaves_out_a_flight_whose_screen_kept_the_guess(tmp_path, capsys):
    """``study_search_starts`` main: a flight with one start fewer than the others (the
    screen kept the analytic guess, whose place is not recorded) is named and left out of
    the counts, not read as if its last start were the guess."""
    import json

    m = _script("study_search_starts")
    flights = {"cal00": [3.0, 1.0, 2.0], "cal01": [1.0, 4.0, 2.0], "cal02": [5.0, 1.0]}
    for name, costs in flights.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "result.json").write_text(json.dumps({"diagnostics": {"optimizer": {
            "costs": costs, "origins": ["first_guess"] * len(costs)}}}))
    assert m.main([str(tmp_path), "--keep", "1"]) == 0
    out = capsys.readouterr().out
    assert "cal02: 2 starts, not 3" in out
    assert "keep 1: 1 of 2 flights more than 0.5 above the best (largest 1.00: cal00)" in out
