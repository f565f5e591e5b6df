"""Where commands write (recon.app.outputs): output locations checked before the work, no output
over an input, result directories replaced whole, and a reconstruction killed at random
moments leaving the earlier result complete (or a resumable run), never a mix."""
from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from models.errors import InputError
from recon.app import outputs

ROOT = Path(__file__).resolve().parents[3]
FLIGHTS = ROOT / "telemetry_samples" / "flights"
SCENARIO = ROOT / "models" / "probe_cone" / "presets" / "reference.toml"


def _tree(path: Path) -> dict[str, str]:
    """Every file under ``path`` (relative name -> sha256)."""
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}


def test_check_writable_names_the_option_and_the_path(tmp_path):
    assert outputs.check_writable(tmp_path / "new" / "deeper" / "out.csv") \
        == tmp_path / "new" / "deeper" / "out.csv"              # parents are created later
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(InputError, match="not a directory") as err:
        outputs.check_writable(f, directory=True, option="--output")
    assert err.value.key == "--output" and err.value.source == str(f)
    with pytest.raises(InputError, match="is a directory"):
        outputs.check_writable(tmp_path, option="--events")
    with pytest.raises(InputError, match="not a directory"):
        outputs.check_writable(f / "below" / "out.json")          # under a file
    with pytest.raises(InputError, match="cannot write"):
        outputs.check_writable("/proc/dockrecon/out.json")
    assert not any(p.name.startswith(".dockrecon-write-test") for p in tmp_path.iterdir())


def test_a_directory_is_replaced_whole_or_not_at_all(tmp_path, monkeypatch):
    d = tmp_path / "res"
    d.mkdir()
    (d / "result.json").write_text("old")
    (d / "report.html").write_text("old report")
    with outputs.replaced_whole(d) as stage:
        assert stage.name == ".res.partial" and stage.parent == tmp_path
        (stage / "result.json").write_text("new")
        assert (d / "result.json").read_text() == "old"          # untouched until the end
    assert _tree(d).keys() == {"result.json"} and (d / "result.json").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["res"]
    # a failure: the earlier directory untouched, no staging left (nothing to resume) ...
    before = _tree(d)
    with pytest.raises(RuntimeError), outputs.replaced_whole(d) as stage:
        (stage / "result.json").write_text("half")
        raise RuntimeError("killed")
    assert _tree(d) == before and sorted(p.name for p in tmp_path.iterdir()) == ["res"]
    # ... or kept when it holds chains to resume
    with pytest.raises(KeyboardInterrupt), outputs.replaced_whole(d) as stage:
        (stage / "chains.h5").write_text("chains")
        raise KeyboardInterrupt
    assert _tree(d) == before and outputs.resumable(d)
    with outputs.replaced_whole(d, resume=True) as stage:
        assert (stage / "chains.h5").read_text() == "chains"
        (stage / "result.json").write_text("resumed")
    assert (d / "result.json").read_text() == "resumed" and (d / "chains.h5").exists()
    # without the atomic exchange (not Linux): two renames, and recover() finishes a swap
    # killed between them
    monkeypatch.setattr(outputs, "_exchange", lambda a, b: False)
    with outputs.replaced_whole(d) as stage:
        (stage / "result.json").write_text("two renames")
    assert _tree(d).keys() == {"result.json"}
    stage = outputs.staging(d)
    (stage / "result.json").write_text("newest")
    (stage / ".complete").touch()
    os.rename(d, tmp_path / ".res.replaced")                      # killed after this rename
    outputs.recover(d)
    assert (d / "result.json").read_text() == "newest"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["res"]


def test_a_swap_killed_after_the_exchange_leaves_nothing_old_to_resume(tmp_path, monkeypatch):
    """Killed after the atomic exchange but before the earlier result (now where the staging
    directory was) is removed: that directory carries the swapped-out mark, so recover()
    removes it and --resume has nothing older than DIR to continue; killed after the mark but
    before the exchange: DIR is the earlier result, unmarked again, and the finished run
    stays staged."""
    d = tmp_path / "res"
    d.mkdir()
    (d / "result.json").write_text("earlier")
    (d / "chains.h5").write_text("earlier chains")
    monkeypatch.setattr(outputs.shutil, "rmtree", lambda *a, **k: None)   # killed there
    with outputs.replaced_whole(d) as stage:
        (stage / "result.json").write_text("new")
    monkeypatch.undo()
    left = tmp_path / ".res.partial"
    assert (left / "chains.h5").read_text() == "earlier chains"            # what a kill left
    assert outputs.resumable(d) and not (d / "chains.h5").exists()
    outputs.recover(d)
    assert not left.exists() and not outputs.resumable(d)
    assert _tree(d).keys() == {"result.json"}
    assert (d / "result.json").read_text() == "new"
    # killed between the mark and the exchange
    stage = outputs.staging(d)
    (stage / "result.json").write_text("newer")
    (stage / ".complete").touch()
    (d / ".swapped-out").touch()
    outputs.recover(d)
    assert _tree(d).keys() == {"result.json"} and (d / "result.json").read_text() == "new"
    assert (stage / "result.json").read_text() == "newer"


def test_an_output_may_not_overwrite_an_input(cli_run, tmp_path):
    cfg = tmp_path / "cfg.toml"
    cfg.write_bytes((ROOT / "models" / "presets" / "appendage_pulse.toml").read_bytes())
    before = cfg.read_bytes()
    for args in (("simulate", "appendage", cfg, "-o", tmp_path / "o.csv", "--events", cfg),
                 ("simulate", "appendage", "--events", cfg, "-o", tmp_path / "o.csv", cfg)):
        r = cli_run(*args)
        assert r.exit_code == 2, r.output
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "'--events'" in lines[0] and "also an input" in lines[0]
    assert cfg.read_bytes() == before and not (tmp_path / "o.csv").exists()


def test_an_unwritable_output_is_refused_before_the_work(cli_run, tmp_path):
    """``reconstruct`` into a path under a file: refused when the command line is read (the
    fit would take minutes), one line naming the option and the user's path."""
    f = tmp_path / "file"
    f.write_text("x")
    t0 = time.monotonic()
    r = cli_run("reconstruct", FLIGHTS / "nominal.parquet", "--scenario", SCENARIO,
                "-o", f / "out")
    assert r.exit_code == 2 and time.monotonic() - t0 < 30
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(f / "out") in lines[0] and "'--output'" in lines[0]
    assert "partial" not in lines[0] and "Traceback" not in r.output
    r = cli_run("reconstruct", FLIGHTS / "nominal.parquet", "--scenario", SCENARIO,
                "-o", tmp_path / "new", "--resume")
    assert r.exit_code == 2 and "nothing to resume" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def _quick_config(tmp_path: Path) -> Path:
    import tomli_w

    from recon.io import load_toml

    run = load_toml(FLIGHTS / "run.toml")
    run["optimizer"] = {"starts": 0, "screen": 32, "keep": 1, "max_nfev": 8, "jac_step": 1e-2,
                        "draws": 4, "importance": 60, "search_retries": 0,
                        "mcmc_below_ess": 1e9}
    run["sampler"] = {"walkers": 24, "ensembles": 2, "max_steps": 60, "check_every": 20}
    path = tmp_path / "quick.toml"
    path.write_bytes(tomli_w.dumps(run).encode())
    return path


def _reconstruct(cfg: Path, out: Path, seed: int, *extra: str) -> subprocess.Popen:
    code = "import sys; from recon.app.cli import main; sys.argv[0] = 'dockrecon'; main()"
    return subprocess.Popen(
        [sys.executable, "-c", code, "-q", "reconstruct", str(FLIGHTS / "nominal.parquet"),
         "--scenario", str(SCENARIO), "--config", str(cfg), "-o", str(out), "--seed",
         str(seed), *extra],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        env={**os.environ, "NUMBA_NUM_THREADS": "1"})


@pytest.mark.slow
def test_reconstruct_killed_at_random_moments_never_leaves_a_mix(tmp_path):
    """A complete earlier result in DIR; ``reconstruct`` into DIR killed (SIGKILL: no
    clean-up runs) at five seeded random moments of a run with MCMC (reading, search,
    sampling, report). After each kill DIR holds exactly the earlier result, byte for byte;
    the run so far sits in .DIR.partial, and ``--resume`` finishes it into a complete new
    result (result.json, tables, posterior, chains and both reports from one run). About 3
    minutes on 2 cores."""
    cfg = _quick_config(tmp_path)
    out = tmp_path / "out"
    t0 = time.monotonic()
    p = _reconstruct(cfg, out, 1)
    _, err = p.communicate(timeout=900)
    full = time.monotonic() - t0
    assert p.returncode == 0, err.decode()
    earlier = _tree(out)
    assert {"result.json", "report.html", "report.pdf", "fit.parquet",
            "chains.h5"} <= earlier.keys()
    rng = np.random.default_rng(17)
    resumable = False
    for delay in np.sort(rng.uniform(0.2, 0.95, 5)) * full:
        p = _reconstruct(cfg, out, 2)
        try:
            p.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        if p.returncode == 0:                     # finished before the kill: a whole new one
            doc = json.loads((out / "result.json").read_text())
            assert doc["seed"] == 2 and {"report.html", "report.pdf"} <= _tree(out).keys()
            return
        assert _tree(out) == earlier, f"killed at {delay:.1f} s of {full:.1f} s: a mix"
        resumable = outputs.resumable(out)
    # the last kill came in the sampling or later: --resume completes that run
    if resumable:
        p = _reconstruct(cfg, out, 2, "--resume")
        _, err = p.communicate(timeout=900)
        assert p.returncode == 0, err.decode()
        new = _tree(out)
        assert new != earlier and {"result.json", "report.html", "report.pdf"} <= new.keys()
        doc = json.loads((out / "result.json").read_text())
        assert doc["seed"] == 2 and doc["settings"]["resume"] is True
        assert sorted(q.name for q in tmp_path.iterdir()) == ["out", "quick.toml"]
