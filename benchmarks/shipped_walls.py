"""Wall time of every shipped flight from the command line, with its shipped run configuration
(issue 21's figure: each flight's calibrated posterior in at most 5 minutes on 2 cores).

Usage::

    .venv/bin/python benchmarks/shipped_walls.py [--flights nominal,slow,...] [--tag TAG]
        [--cli PATH/TO/dockrecon] [--manifest PATH/TO/campaign.toml] [--output DIR]

The flights, their scenarios, run configurations, truths and seeds are those of
``telemetry_samples/flights/campaign.toml`` (every shipped flight of both units), except that
the campaign's ``mcmc = false`` is not applied: each flight runs as an analyst would run it,

    dockrecon reconstruct TELEMETRY --scenario SCENARIO --config CONFIG --seed SEED -o DIR

with the hybrid engine of its run configuration (emcee where the importance sampling's
effective sample size stays below ``mcmc_below_ess``). One flight at a time, so each has the
machine's cores (numba's threads). ``--cli`` runs another checkout's command (the "before" of
a before/after comparison: ``git worktree add /tmp/before COMMIT``, ``make -C /tmp/before
venv``, ``--cli /tmp/before/.venv/bin/dockrecon``). The flights, truths and run
configurations are this checkout's, or with ``--manifest
/tmp/before/telemetry_samples/flights/campaign.toml`` the other checkout's (its shipped run
configurations, so that "before" is what an analyst ran then).

Writes ``benchmarks/results/shipped_walls[_TAG].json`` (per flight: the command, wall time,
exit code, the method that gave the posterior, the importance ESS, emcee's steps and the
Gaussian joint check of the truth, :func:`recon.validation.joint_check`; the slow tests
check the highest-density region; the wall time and forward evaluations of each engine,
``diagnostics.timing``, where the CLI records them) and prints a table. The load average at the start and
end of each flight is recorded with it.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def main(argv=None) -> int:
    sys.path.insert(0, str(ROOT))
    from models.errors import InputError
    from recon.campaign import load_manifest
    from recon.io import versions, write_json
    from recon.validation import joint_check

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flights", default=None,
                    help="comma-separated names from campaign.toml (default: all)")
    ap.add_argument("--cli", default=str(ROOT / ".venv" / "bin" / "dockrecon"))
    ap.add_argument("--manifest",
                    default=str(ROOT / "telemetry_samples" / "flights" / "campaign.toml"),
                    help="the campaign manifest naming the flights (default: this checkout's)")
    ap.add_argument("--tag", default=None, help="suffix of the results file")
    ap.add_argument("--output", default=None, help="keep the result directories here")
    args = ap.parse_args(argv)

    try:
        specs = load_manifest(Path(args.manifest))
    except InputError as exc:
        ap.error(f"--manifest: {exc}")
    if args.flights:
        want = args.flights.split(",")
        unknown = sorted(set(want) - {s.name for s in specs})
        if unknown:
            ap.error(f"--flights: not in campaign.toml: {', '.join(unknown)}")
        specs = [s for s in specs if s.name in want]
    work = Path(args.output) if args.output else Path(tempfile.mkdtemp(prefix="dockrecon-sw-"))
    rows = {}
    try:
        for spec in specs:
            out = work / spec.name
            cmd = [args.cli, "reconstruct", *spec.telemetry, "--scenario", spec.scenario,
                   "--seed", str(spec.seed), "-o", str(out), "-q"]
            if spec.config:
                cmd += ["--config", spec.config]
            load0 = _load()
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True)
            wall = time.perf_counter() - t0
            row = {"command": " ".join(os.path.relpath(c, ROOT) if os.path.isabs(c) else c
                                       for c in cmd),
                   "wall_s": round(wall, 1), "exit": proc.returncode,
                   "load_start": load0, "load_end": _load()}
            doc_path = out / "result.json"
            if doc_path.exists():
                doc = json.loads(doc_path.read_text())
                diag = doc.get("diagnostics", {})
                imp = diag.get("importance") or {}
                mc = diag.get("mcmc") or {}
                row.update(status=doc.get("status"), method=diag.get("method"),
                           ess=imp.get("ess"), n_proposal=imp.get("n_proposal"),
                           mcmc_steps=mc.get("steps"), timing=diag.get("timing"))
                if spec.truth:
                    truth = json.loads(Path(spec.truth).read_text())["parameters"]
                    ics = [n for n, p in doc["parameters"].items()
                           if n.startswith("rel_") and p["prior"]["kind"] != "fixed"]
                    joint = joint_check(doc, truth, ics)
                    row.update(joint_d2=round(joint["d2"], 2), joint_in95=joint["in95"])
            else:
                row["stderr"] = proc.stderr[-2000:]
            rows[spec.name] = row
            ess = row.get("ess")
            print(f"{spec.name:24s} {row['wall_s']:7.1f} s  exit {row['exit']}  "
                  f"{row.get('method')}  ESS {ess if ess is None else round(ess, 1)}  "
                  f"d2 {row.get('joint_d2')}  "
                  f"load {load0} -> {row['load_end']}", flush=True)
    finally:
        if not args.output:
            shutil.rmtree(work, ignore_errors=True)
    name = "shipped_walls" + (f"_{args.tag}" if args.tag else "") + ".json"
    write_json({"cli": args.cli, "manifest": args.manifest, "flights": rows,
                "versions": versions()},
               HERE / "results" / name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
