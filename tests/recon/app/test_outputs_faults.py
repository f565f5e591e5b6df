"""Outputs under faults: a full device, two runs into one directory, SIGTERM, a campaign
flight named like the campaign's own files. Each refusal is one line naming the file or key,
with its exit code, and what was there before is left byte for byte."""
from __future__ import annotations

import hashlib
import importlib
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from models.errors import OutputError
from recon.app import outputs

ROOT = Path(__file__).resolve().parents[3]
FLIGHTS = ROOT / "telemetry_samples" / "flights"
SCENARIO = ROOT / "models" / "probe_cone" / "presets" / "reference.toml"
CLI = "import sys; from recon.app.cli import main; sys.argv[0] = 'dockrecon'; main()"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _can_mount_tmpfs() -> bool:
    if shutil.which("unshare") is None:
        return False
    r = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
                       capture_output=True)
    return r.returncode == 0


needs_tmpfs = pytest.mark.skipif(not _can_mount_tmpfs(), reason="no user namespace to mount a "
                                 "small tmpfs in (unshare -rm): a full device cannot be made")


def _in_small_device(tmp_path: Path, size: str, script: str) -> dict:
    """Run ``script`` (Python, with ``DEV``: a directory on a fresh tmpfs of ``size``) in a
    user namespace; it prints one JSON line, returned."""
    dev = tmp_path / "dev"
    dev.mkdir()
    body = f"import json, os, subprocess, sys\nDEV = {str(dev)!r}\n" + textwrap.dedent(script)
    drv = tmp_path / "driver.py"
    drv.write_text(body)
    r = subprocess.run(["unshare", "-rm", "sh", "-c",
                        f"mount -t tmpfs -o size={size} tmpfs {dev} && "
                        f"{sys.executable} {drv}"],
                       capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


@needs_tmpfs
def test_simulate_into_a_full_device_names_the_file_and_keeps_the_earlier_one(tmp_path):
    """``simulate docking -o FILE`` on a device with room for the earlier file only: exit 74,
    one line naming FILE, the earlier file byte for byte, no temporary left."""
    out = _in_small_device(tmp_path, "96k", f"""
        out = os.path.join(DEV, "run.parquet")
        with open(out, "wb") as fh:
            fh.write(b"earlier" * 1000)
        before = open(out, "rb").read()
        r = subprocess.run([sys.executable, "-c", {CLI!r}, "simulate", "docking",
                            {str(SCENARIO)!r}, "-o", out, "--duration", "20"],
                           capture_output=True, text=True)
        print(json.dumps({{"code": r.returncode, "err": r.stderr,
                          "same": open(out, "rb").read() == before,
                          "files": sorted(os.listdir(DEV))}}))
    """)
    lines = out["err"].strip().splitlines()
    assert out["code"] == 74, out["err"]
    assert len(lines) == 1 and "run.parquet" in lines[0] and "no space" in lines[0], lines
    assert out["same"] and out["files"] == ["run.parquet"]


@needs_tmpfs
def test_chains_stop_before_hdf5_meets_a_full_device(tmp_path):
    """libhdf5 meeting ENOSPC can kill the process (SIGSEGV, exit 139) after pages of
    tracebacks. The chain backend asks for room before every step: the sampler stops with
    OutputError naming the chain file, the steps so far readable."""
    out = _in_small_device(tmp_path, "3m", """
        import emcee, numpy as np
        from identification.engines.mcmc import _guarded_backend
        from models.errors import OutputError
        path = os.path.join(DEV, "chains.h5")
        b = _guarded_backend(emcee)(path, name="ensemble_0")
        b.reset(32, 12)
        s = emcee.EnsembleSampler(32, 12, lambda x: -0.5 * x @ x, backend=b)
        try:
            s.run_mcmc(np.random.default_rng(1).standard_normal((32, 12)), 100000)
            msg, code = "", 0
        except OutputError as exc:
            msg, code = str(exc), exc.exit_code
        r = emcee.backends.HDFBackend(path, name="ensemble_0", read_only=True)
        print(json.dumps({"msg": msg, "code": code, "steps": int(r.iteration),
                          "finite": bool(np.isfinite(r.get_chain()).all())}))
    """)
    assert out["code"] == 74 and "chains.h5" in out["msg"] and "not enough room" in out["msg"]
    assert out["steps"] > 100 and out["finite"]


def test_sampling_that_cannot_fit_on_the_device_is_refused_before_the_first_step(
        tmp_path, monkeypatch):
    """The chain file's size for the whole run is asked for before sampling starts: with
    less room than that, OutputError (exit 74) with the estimate, and no file."""
    import models.errors
    mcmc = importlib.import_module("identification.engines.mcmc")

    monkeypatch.setattr(models.errors, "free_bytes", lambda d: 5_000_000)
    settings = mcmc.SamplerSettings(walkers=32, ensembles=2, max_steps=5000, check_every=50)
    gen = mcmc.sample_rounds(lambda x: -0.5 * np.sum(x * x, axis=1), np.zeros(4), np.ones(4),
                             -10 * np.ones(4), 10 * np.ones(4), tmp_path / "chains.h5",
                             names=list("abcd"), settings=settings, seed=1)
    with pytest.raises(OutputError) as err:
        next(gen)
    assert err.value.exit_code == 74
    # 2 ensembles x 5000 steps x 32 walkers x (5 x 8 + 16) bytes = 17.9 MB
    assert "17.9 MB" in str(err.value) and "5 MB free" in str(err.value)
    assert not (tmp_path / "chains.h5").exists()


def test_a_full_device_inside_a_library_is_one_line_with_exit_74(cli_run, tmp_path,
                                                                   monkeypatch):
    """A write that meets ENOSPC (here the Parquet writer) is reported on one line naming the
    file, exit 74; the earlier file is left byte for byte."""
    import errno

    import pyarrow.parquet as pq

    out = tmp_path / "run.parquet"
    out.write_bytes(b"earlier")

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pq, "write_table", full)
    r = cli_run("simulate", "docking", SCENARIO, "-o", out, "--duration", "2")
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 74, r.output
    assert len(lines) == 1 and str(out) in lines[0] and "no space left" in lines[0]
    assert out.read_bytes() == b"earlier" and sorted(p.name for p in tmp_path.iterdir()) == [
        "run.parquet"]


def _hold_lock(directory: Path) -> subprocess.Popen:
    code = ("import sys, time; from recon.app.outputs import locked\n"
            f"with locked({str(directory)!r}):\n"
            "    print('held', flush=True); time.sleep(120)")
    p = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE,
                         text=True)
    assert p.stdout.readline().strip() == "held"
    return p


def test_a_second_run_into_a_locked_directory_refuses_naming_the_holder(cli_run, tmp_path):
    """``reconstruct -o DIR`` while another process writes DIR: exit 75 at once, one line
    naming DIR and the holder's process; DIR and its staging untouched. When the holder ends
    (any way: here killed), the lock is free again."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "result.json").write_text("{}")
    holder = _hold_lock(out)
    try:
        t0 = time.monotonic()
        r = cli_run("reconstruct", FLIGHTS / "nominal.parquet", "--scenario", SCENARIO,
                    "-o", out)
        assert time.monotonic() - t0 < 30
        lines = r.stderr.strip().splitlines()
        assert r.exit_code == 75, r.output
        assert len(lines) == 1 and str(out) in lines[0]
        assert f"pid {holder.pid}" in lines[0] and "another run" in lines[0]
        assert (out / "result.json").read_text() == "{}"
        assert not (tmp_path / ".out.partial").exists()
    finally:
        holder.kill()
        holder.wait()
    with outputs.locked(out):        # the kernel dropped the dead holder's lock
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_campaign_into_a_locked_directory_refuses(tmp_path):
    from recon.app.campaign import load_manifest, reconstruct_one, run_campaign

    manifest = tmp_path / "m.toml"
    manifest.write_text(f'[defaults]\nscenario = "{SCENARIO}"\n[[flight]]\nname = "a"\n'
                        f'telemetry = "{FLIGHTS / "nominal.parquet"}"\n')
    out = tmp_path / "camp"
    holder = _hold_lock(out)
    try:
        with pytest.raises(outputs.OutputBusy, match=f"pid {holder.pid}"):
            run_campaign(load_manifest(manifest), out, reconstruct_one, workers=1)
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize("name", ["campaign.json", "catalog.parquet", "report.html",
                                  ".hidden"])
def test_a_campaign_flight_named_like_the_campaigns_own_files_is_refused(cli_run, tmp_path,
                                                                         name):
    """Refused when the manifest is read (exit 2, naming the manifest and the key), not after
    the flight was computed."""
    manifest = tmp_path / "m.toml"
    manifest.write_text(f'[defaults]\nscenario = "{SCENARIO}"\n[[flight]]\nname = "{name}"\n'
                        f'telemetry = "{FLIGHTS / "nominal.parquet"}"\n')
    r = cli_run("campaign", manifest, "-o", tmp_path / "camp")
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2, r.output
    assert len(lines) == 1 and str(manifest) in lines[0] and "flight[0].name" in lines[0]
    assert not (tmp_path / "camp").exists()


def test_sigterm_unwinds_as_ctrl_c(tmp_path):
    """SIGTERM during ``reconstruct``: one line, exit 143, the earlier result byte for byte,
    no staging directory and no lock left."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "result.json").write_text('{"earlier": true}')
    p = subprocess.Popen([sys.executable, "-c", CLI, "reconstruct",
                          str(FLIGHTS / "nominal.parquet"), "--scenario", str(SCENARIO),
                          "-o", str(out)], cwd=ROOT, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (tmp_path / ".out.partial").exists() and time.monotonic() < deadline:
        time.sleep(0.05)                      # the run has started writing
    assert p.poll() is None
    time.sleep(1.0)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 128 + signal.SIGTERM, err
    lines = [ln for ln in err.strip().splitlines() if ln.startswith("error")]
    assert lines == ["error: terminated (SIGTERM)"], err
    assert "Traceback" not in err
    assert json.loads((out / "result.json").read_text()) == {"earlier": True}
    assert sorted(q.name for q in tmp_path.iterdir()) == ["out"]


def _chains_of(flight: Path, config: Path, out: Path) -> None:
    """``out/chains.h5`` as a finished run with MCMC leaves it for ``flight`` under
    ``config``: the sampler's own file (header with the problem's digests, one group per
    ensemble), its walkers placed at the prior's centre (no log probability is evaluated)."""
    import importlib

    from recon.flight import flight_problem

    mcmc = importlib.import_module("identification.engines.mcmc")
    fl = flight_problem(flight, SCENARIO, config=config)
    prob, st = fl.problem, fl.config.settings.sampler
    sp = prob.space
    centre = 0.5 * (sp.lower + sp.upper)
    out.mkdir(parents=True, exist_ok=True)
    mcmc._samplers(prob.log_probability, centre, (sp.upper - sp.lower) / 10, sp.lower,
                   sp.upper, out / "chains.h5", prob.names, st, 5, False, centre[None],
                   prob.fingerprint())
    (out / "result.json").write_text('{"earlier": true}')


def test_reconstruct_resume_of_another_problem_is_refused_before_the_fit(cli_run, tmp_path):
    """``reconstruct --resume`` continues chains only for the same record, priors and
    sampler: another flight's record, a changed prior or another walker count is refused at
    once (exit 2, one line naming the chain file and what differs), DIR byte for byte."""
    import tomllib

    import tomli_w

    from tests.recon.app.test_outputs import _quick_config

    cfg = _quick_config(tmp_path)
    out = tmp_path / "out"
    _chains_of(FLIGHTS / "nominal.parquet", cfg, out)
    before = {p.name: _digest(p) for p in out.iterdir()}
    run = tomllib.loads(cfg.read_text())
    run["parameters"]["rel_vel_x"]["upper"] = 0.5
    wider = tmp_path / "wider.toml"
    wider.write_bytes(tomli_w.dumps(run).encode())
    cases = [(FLIGHTS / "misaligned.parquet", cfg, (), "different record"),
             (FLIGHTS / "nominal.parquet", wider, (), "different parameters"),
             (FLIGHTS / "nominal.parquet", cfg, ("--walkers", "32"), "'walkers' was 24")]
    for record, config, extra, says in cases:
        t0 = time.monotonic()
        r = cli_run("reconstruct", record, "--scenario", SCENARIO, "--config", config, "-o",
                    out, "--resume", *extra)
        lines = [ln for ln in r.stderr.strip().splitlines() if ln.startswith("error")]
        assert r.exit_code == 2, r.output
        assert len(lines) == 1 and "chains.h5" in lines[0] and says in lines[0], r.stderr
        assert "WARNING" not in r.stderr and time.monotonic() - t0 < 60
        assert {p.name: _digest(p) for p in out.iterdir()} == before
        assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "quick.toml",
                                                              "wider.toml"]
