"""The computations of the benchmark scripts whose figures ``docs/design/*.rst`` quote as
findings (not their timings): checked against closed forms on seeded draws."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from scipy.special import ndtr

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


def _script(name):
    import sys

    if str(BENCH) not in sys.path:      # as when run: the scripts import benchmarks/_record.py
        sys.path.append(str(BENCH))
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


FLIGHTS = BENCH.parent / "telemetry_samples" / "flights"


def _before_manifest(tmp_path, names):
    """A copy of the shipped campaign.toml with only the flights ``names`` (paths made
    absolute, as a manifest in another checkout would give them)."""
    import re

    text = (FLIGHTS / "campaign.toml").read_text()
    head, *blocks = text.split("[[flight]]")
    head = re.sub(r'"(\.\./[^"]+|run\.toml)"', lambda m: f'"{FLIGHTS / m.group(1)}"', head)
    keep = []
    for b in blocks:
        name = re.search(r'name = "([^"]+)"', b).group(1)
        if name in names:
            keep.append(re.sub(r'(telemetry|truth|config) = "([^"]+)"',
                               lambda m: f'{m.group(1)} = "{FLIGHTS / m.group(2)}"', b))
    path = tmp_path / "campaign.toml"
    path.write_text(head + "".join("[[flight]]" + b for b in keep))
    return path


def test_shipped_walls_pairs_each_flight_with_its_before_and_refuses_a_missing_one(
        tmp_path, capsys):
    """``shipped_walls.pair_flights``: manifest order, each flight with the before manifest's
    flight of the same name (its own paths); ``main`` refuses a flight the before manifest
    lacks, naming it, before any flight runs (no results file)."""
    import sys

    sys.path.insert(0, str(BENCH.parent))
    from recon.app.campaign import load_manifest

    m = _script("shipped_walls")
    after = load_manifest(FLIGHTS / "campaign.toml")
    before = load_manifest(_before_manifest(tmp_path, {"slow", "nominal"}))
    pairs = m.pair_flights(after, before, ["slow", "nominal"])
    assert [(a.name, b.name) for a, b in pairs] == [("nominal", "nominal"), ("slow", "slow")]
    assert pairs[1][1].config == str(FLIGHTS / "slow.run.toml")
    assert [b for _, b in m.pair_flights(after, None, ["slow"])] == [None]
    with pytest.raises(ValueError, match="not in the before manifest: misaligned$"):
        m.pair_flights(after, before, ["nominal", "misaligned"])
    with pytest.raises(ValueError, match="not in the manifest: nosuch$"):
        m.pair_flights(after, before, ["nosuch"])
    results = tmp_path / "results"
    with pytest.raises(SystemExit) as exc:
        m.main(["--flights", "misaligned", "--before-cli", sys.executable,
                "--before-manifest", str(tmp_path / "campaign.toml"),
                "--results", str(results)])
    assert exc.value.code == 2
    assert "--flights: not in the before manifest: misaligned" in capsys.readouterr().err
    assert not results.exists()
    with pytest.raises(SystemExit) as exc:
        m.main(["--flights", "nominal", "--before-cli", str(tmp_path / "nosuch"),
                "--before-manifest", str(tmp_path / "campaign.toml"),
                "--results", str(results)])
    assert exc.value.code == 2
    assert f"--before-cli: not an executable file: {tmp_path / 'nosuch'}" in (
        capsys.readouterr().err)
    assert not results.exists()


@pytest.mark.slow
def test_shipped_walls_runs_each_flight_after_then_before_and_writes_both_files(tmp_path):
    """``shipped_walls --before-cli``: two flights with fast settings (the shipped run.toml
    with a small search, emcee only when the importance weights' k-hat exceeds its limit, as
    the ESS is never below 1, and then a short one), this checkout's CLI on both sides.
    Each flight runs after, then before, flight by flight (the start times interleave), and each
    side's file holds both flights with the same posterior (same command, same seed) and the joint
    check."""
    import json
    import re
    import sys

    from tests.recon._fast import fast_config

    cli = str(Path(sys.executable).parent / "dockrecon")
    # ESS >= 1: emcee only on the weights' k-hat (the script runs the hybrid engine, not
    # --no-mcmc), then 100 steps
    fast_config(tmp_path, extra={"mcmc_below_ess": "1", "max_steps": "100",
                                 "check_every": "50"})
    manifest = _before_manifest(tmp_path, {"nominal", "misaligned"})
    manifest.write_text(re.sub(r'config = "[^"]+"', f'config = "{tmp_path / "run.toml"}"',
                               manifest.read_text()))
    m = _script("shipped_walls")
    assert m.main(["--manifest", str(manifest), "--before-cli", cli,
                   "--before-manifest", str(manifest), "--cli", cli, "--tag", "t",
                   "--output", str(tmp_path / "out"), "--results", str(tmp_path)]) == 0
    after = json.loads((tmp_path / "shipped_walls_t_after.json").read_text())
    before = json.loads((tmp_path / "shipped_walls_t_before.json").read_text())
    assert before["cli"] == after["cli"] == cli
    assert list(after["flights"]) == list(before["flights"]) == ["nominal", "misaligned"]
    starts = [side["flights"][f]["started"] for f in ("nominal", "misaligned")
              for side in (after, before)]
    assert starts == sorted(starts)
    for f in ("nominal", "misaligned"):
        a, b = after["flights"][f], before["flights"][f]
        assert a["exit"] in (0, 3) and a["method"] == b["method"]
        assert a["method"] in ("importance", "mcmc")
        assert a["ess"] == b["ess"] and a["joint_d2"] == b["joint_d2"]
        assert isinstance(a["joint_in95"], bool) and a["n_proposal"] == 200
        doc_a = json.loads((tmp_path / "out" / "after" / f / "result.json").read_text())
        doc_b = json.loads((tmp_path / "out" / "before" / f / "result.json").read_text())
        assert doc_a["parameters"] == doc_b["parameters"]


def test_shipped_walls_records_a_refused_flight_on_both_sides_as_it_goes(tmp_path):
    """``shipped_walls --before-cli`` with the real CLI on two unreadable records (empty
    files: reconstruct refuses each in about a second): each flight runs after, then before,
    each row holds the exit code and reconstruct's one-line reason naming the file, and both
    files are written."""
    import json
    import sys

    cli = str(Path(sys.executable).parent / "dockrecon")
    for name in ("a", "b"):
        (tmp_path / f"{name}.parquet").write_bytes(b"")
    manifest = tmp_path / "campaign.toml"
    manifest.write_text(
        f'[defaults]\nscenario = "{BENCH.parent / "models/probe_cone/presets/reference.toml"}"\n'
        '[[flight]]\nname = "a"\ntelemetry = "a.parquet"\n'
        '[[flight]]\nname = "b"\ntelemetry = "b.parquet"\n')
    m = _script("shipped_walls")
    assert m.main(["--manifest", str(manifest), "--cli", cli, "--before-cli", cli,
                   "--before-manifest", str(manifest), "--tag", "t",
                   "--results", str(tmp_path)]) == 0
    after = json.loads((tmp_path / "shipped_walls_t_after.json").read_text())
    before = json.loads((tmp_path / "shipped_walls_t_before.json").read_text())
    starts = [side["flights"][f]["started"] for f in ("a", "b") for side in (after, before)]
    assert starts == sorted(starts)
    for side in (after, before):
        for f in ("a", "b"):
            row = side["flights"][f]
            assert row["exit"] != 0 and f"{f}.parquet" in row["stderr"], row
            assert "Traceback" not in row["stderr"] and "method" not in row


def _study_part(path: Path, flights: dict, study: Path | None = None) -> Path:
    """A calibration.json holding ``flights`` {name: (best_cost, cost_truth, ess, d2,
    in95 flags, evaluations)} with two parameters, and their result.json under ``study``."""
    import json

    entries = []
    for name, (best, truth, ess, d2, in95, evals) in flights.items():
        entries.append({
            "flight": name, "status": "ok", "best_cost": best, "cost_truth": truth, "ess": ess,
            "joint": {"d2": d2, "in95": d2 < 6.0},
            "parameters": {p: {"in95": ok, "in68": False} for p, ok in zip("ab", in95)}})
        if study is not None:
            (study / name).mkdir(parents=True)
            (study / name / "result.json").write_text(json.dumps({"diagnostics": {"timing": {
                s: {"wall_s": 1.0, "evaluations": n}
                for s, n in zip(("search", "polish", "importance", "products"), evals)}}}))
    path.write_text(json.dumps({"kind": "calibration", "flights": entries
                                + [{"flight": "failed", "status": "failed"}]}))
    return path


def test_study_compare_flags_a_lost_basin_and_refuses_different_problems(tmp_path, capsys):
    """``study_compare``: flight for flight, A's best cost above B's by more than ``--lost``
    is a lost basin (below: a gained one); evaluations are search + polish + importance from
    each flight's result.json (not the products); a flight whose truth's cost differs is not
    the same problem and is refused, as is a flight scored twice on one side."""
    m = _script("study_compare")
    a = _study_part(tmp_path / "a.json", {
        "f0": (501.0, 510.0, 100.0, 30.0, (False, True), (10, 2, 5, 99)),
        "f1": (400.0, 405.0, 300.0, 2.0, (True, True), (20, 3, 6, 99))}, tmp_path / "sa")
    b1 = _study_part(tmp_path / "b1.json", {
        "f0": (499.0, 510.0, 10.0, 3.0, (True, True), (40, 5, 9, 1))}, tmp_path / "sb")
    b2 = _study_part(tmp_path / "b2.json", {
        "f1": (401.0, 405.0, 500.0, 1.0, (True, True), (30, 4, 7, 1)),
        "f2": (1.0, 1.0, 1.0, 1.0, (True, True), (1, 1, 1, 1))}, tmp_path / "sb")
    rows = m.compare(m.load_side([f"{a}:{tmp_path / 'sa'}"], _raise),
                     m.load_side([f"{b1}:{tmp_path / 'sb'}", f"{b2}:{tmp_path / 'sb'}"], _raise),
                     0.5)
    s = rows["summary"]
    assert s["n"] == 2 and s["only_b"] == ["f2"] and s["only_a"] == []
    assert s["lost"] == ["f0"] and s["gained"] == ["f1"]
    assert s["evaluations"] == {"a": 17 + 29, "b": 54 + 41}
    assert s["out_joint95"] == {"a": ["f0"], "b": []}
    assert s["miss95"] == {"a": 1, "b": 0} and s["median_ess"] == {"a": 200.0, "b": 255.0}
    assert rows["rows"][0]["diff"] == pytest.approx(2.0)
    assert m.main(["--a", str(a), "--b", str(b1), str(b2)]) == 0    # no study dirs: blanks
    assert "f0" in capsys.readouterr().out

    other = _study_part(tmp_path / "o.json", {
        "f0": (499.0, 512.0, 10.0, 3.0, (True, True), (1, 1, 1, 1))})
    with pytest.raises(SystemExit) as exc:
        m.main(["--a", str(a), "--b", str(other)])
    assert exc.value.code == 2 and "not the same problem" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        m.main(["--a", str(a), str(a), "--b", str(b1)])
    assert exc.value.code == 2 and "f0: scored in both" in capsys.readouterr().err


def _raise(message):
    raise AssertionError(message)
