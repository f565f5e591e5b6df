"""Campaign fault handling, on real ``dockrecon campaign`` processes with
a 2-worker embedded Dask cluster and the shipped flights at fast settings:

* a worker process killed (SIGKILL) while it reconstructs a flight: the scheduler gives the
  flight to the restarted worker and every flight completes, nothing lost;
* the campaign interrupted (SIGINT, as Ctrl-C) after its first flight: exit 130, the finished
  flight complete on disk, and ``--resume`` finishes the campaign without redoing it.

Slow: each runs whole reconstructions (about 1 CPU-minute per flight with the report).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.recon._fast import fast_config
from tests.recon.app.test_campaign import FLIGHTS, SCENARIO

pytestmark = pytest.mark.slow

DOCKRECON = str(Path(sys.executable).with_name("dockrecon"))
#: [s] longest wait for a campaign stage (a loaded 2-core machine)
PATIENCE = 1800.0


def _manifest(tmp_path: Path, names: list[str]) -> Path:
    fast_config(tmp_path)
    body = [f'[defaults]\nscenario = "{SCENARIO}"\nconfig = "run.toml"\nseed = 4\n'
            "[defaults.options]\nmcmc = false\n"]
    for i, name in enumerate(names):
        src = name.split("#")[0]
        body.append(f'[[flight]]\nname = "f{i}_{src}"\n'
                    f'telemetry = "{FLIGHTS / (src + ".parquet")}"\n'
                    f'truth = "{FLIGHTS / (src + ".truth.json")}"\n')
    path = tmp_path / "campaign.toml"
    path.write_text("\n".join(body))
    return path


def _wait(what: str, ok, proc: subprocess.Popen) -> None:
    t0 = time.time()
    while not ok():
        if proc.poll() is not None:
            raise AssertionError(f"campaign ended (exit {proc.returncode}) before {what}:\n"
                                 + proc.stderr.read())
        if time.time() - t0 > PATIENCE:
            proc.kill()
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.5)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _state(out: Path) -> dict:
    try:
        return json.loads((out / "campaign.json").read_text())
    except (OSError, ValueError):
        return {}


def _workers(proc: subprocess.Popen) -> list[psutil.Process]:
    """The Dask worker processes of a campaign: the processes its nannies spawned
    (``multiprocessing`` spawn), not the resource tracker."""
    kids = psutil.Process(proc.pid).children(recursive=True)
    return [p for p in kids if any("spawn_main" in part for part in p.cmdline())]


def test_a_killed_worker_loses_no_flight(tmp_path):
    m = _manifest(tmp_path, ["nominal", "misaligned"])
    out = tmp_path / "camp"
    proc = subprocess.Popen([DOCKRECON, "campaign", str(m), "-o", str(out), "--workers", "2"],
                            stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    # both flights running: their staging directories exist (recon.app.outputs)
    _wait("both flights to start", lambda: len(list(out.glob(".f*.partial"))) == 2, proc)
    time.sleep(5.0)
    victims = _workers(proc)
    assert len(victims) == 2, [p.cmdline() for p in victims]
    victims[0].send_signal(signal.SIGKILL)
    _, err = proc.communicate(timeout=PATIENCE)
    assert proc.returncode in (0, 3), err        # 3: a fast-settings fit may be implausible
    doc = _state(out)
    assert doc["counts"]["done"] == 2 and doc["counts"]["failed"] == 0, doc["counts"]
    for name, f in doc["flights"].items():
        assert f["state"] == "done", (name, f)
        assert (out / name / "result.json").exists() and (out / name / "report.pdf").exists()
    assert not list(out.glob(".*.partial")), "a staging directory was left behind"


def test_an_interrupted_campaign_resumes_without_redoing_finished_flights(tmp_path):
    m = _manifest(tmp_path, ["nominal", "misaligned", "slow"])
    out = tmp_path / "camp"
    # as at a terminal: SIGINT at its default in the campaign process, even when this test
    # runs in a background job (a shell starts those with SIGINT ignored, and Python keeps an
    # inherited SIG_IGN, so the campaign would never see the Ctrl-C)
    proc = subprocess.Popen([DOCKRECON, "campaign", str(m), "-o", str(out), "--workers", "2"],
                            stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=_default_sigint)
    _wait("a first flight to finish",
          lambda: _state(out).get("counts", {}).get("done", 0) >= 1, proc)
    done_before = {n for n, f in _state(out)["flights"].items() if f.get("state") == "done"}
    os.killpg(proc.pid, signal.SIGINT)          # Ctrl-C reaches the whole process group
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    doc = _state(out)
    finished = {n for n, f in doc["flights"].items() if f.get("state") == "done"}
    assert done_before <= finished and len(finished) < 3
    for n in finished:
        assert (out / n / "result.json").exists()
    stamps = {n: (out / n / "result.json").stat().st_mtime_ns for n in finished}
    r = subprocess.run([DOCKRECON, "campaign", str(m), "-o", str(out), "--workers", "2",
                        "--resume"], capture_output=True, text=True, timeout=PATIENCE)
    assert r.returncode in (0, 3), r.stderr      # 3: a fast-settings fit may be implausible
    doc = _state(out)
    assert all(f["state"] == "done" for f in doc["flights"].values()), doc["flights"]
    for n in finished:
        assert doc["flights"][n].get("resumed"), n
        assert (out / n / "result.json").stat().st_mtime_ns == stamps[n], f"{n} was redone"
