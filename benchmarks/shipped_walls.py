"""Wall time of every shipped flight from the command line, with its shipped run configuration
(the figure asked of the engine: each flight's calibrated posterior in at most 5 minutes on
2 cores).

Usage::

    .venv/bin/python benchmarks/shipped_walls.py [--flights nominal,slow,...] [--tag TAG]
        [--cli PATH/TO/dockrecon] [--manifest PATH/TO/campaign.toml] [--output DIR]
        [--proposals DIR]
        [--before-cli PATH/TO/OTHER/dockrecon [--before-manifest PATH/TO/OTHER/campaign.toml]]

The flights, their scenarios, run configurations, truths and seeds are those of
``telemetry_samples/flights/campaign.toml`` (every shipped flight of both units), except that
the campaign's ``mcmc = false`` is not applied: each flight runs as an analyst would run it,

    dockrecon reconstruct TELEMETRY --scenario SCENARIO --config CONFIG --seed SEED -o DIR

with the hybrid engine of its run configuration (emcee where the importance sampling's
effective sample size stays below ``mcmc_below_ess``). One flight at a time, so each has the
machine's cores (numba's threads). ``--cli`` runs another checkout's command; ``--manifest``
takes the flights, truths and run configurations from another checkout's campaign.toml (its
shipped run configurations, so that a past commit runs what an analyst ran then).

A before/after comparison runs both in one call: make the "before" checkout
(``git clone . /tmp/before && git -C /tmp/before checkout COMMIT && make -C /tmp/before
venv``, then warm its numba cache with ``dockrecon bench docking`` for each unit) and pass
``--before-cli /tmp/before/.venv/bin/dockrecon`` (``--before-manifest`` defaults to the
campaign.toml beside that checkout's ``.venv``). Each flight then runs "after" (``--cli``,
``--manifest``) and at once "before", flight by flight, so that a drift of the machine's state
over the hours of the comparison falls on both sides alike; a flight that the before manifest
does not name is refused before anything runs.

Writes ``benchmarks/results/shipped_walls[_TAG].json``, or with ``--before-cli`` the pair
``shipped_walls[_TAG]_after.json`` and ``shipped_walls[_TAG]_before.json`` (``--results``
writes them elsewhere). Per flight: the command, its start time [UTC], wall time, exit code,
the search's starts (``"learned"`` or ``"screen"``; ``--proposals DIR`` names the learned
proposals' cache, ``dockrecon train``; without it an empty one, so every search screens) and
best cost, the method that gave the posterior, the importance ESS, emcee's steps and the
Gaussian joint check of the truth (:func:`recon.validation.joint_check`; the slow tests check the
highest-density region); the wall time and forward evaluations of each engine
(``diagnostics.timing``) where the CLI records them; the load average at the start and end of
the flight; and the provenance (``benchmarks/_record.py``): the machine, this command line and
the commit of the checkout whose CLI ran (``CHECKOUT/.venv/bin/dockrecon``). A table is
printed, and the files rewritten, as each flight ends (an interrupted
comparison keeps the flights it finished). ``--output DIR`` keeps the result
directories (``DIR/FLIGHT``, or ``DIR/after/FLIGHT`` and ``DIR/before/FLIGHT``).
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
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def pair_flights(specs, before_specs, want=None):
    """The flights to run, in manifest order, each with its "before" flight of the same name
    (``None`` for every flight when ``before_specs`` is ``None``). ``want`` (names) picks some.
    Raises ``ValueError`` naming the flights that ``want`` or the before manifest lack."""
    names = [s.name for s in specs]
    if want is not None:
        unknown = [n for n in want if n not in names]
        if unknown:
            raise ValueError(f"not in the manifest: {', '.join(unknown)}")
        specs = [s for s in specs if s.name in want]
    if before_specs is None:
        return [(s, None) for s in specs]
    before = {s.name: s for s in before_specs}
    missing = [s.name for s in specs if s.name not in before]
    if missing:
        raise ValueError(f"not in the before manifest: {', '.join(missing)}")
    return [(s, before[s.name]) for s in specs]


def run_flight(cli: str, spec, out: Path, proposals: str) -> dict:
    """Reconstruct one flight from the command line ``cli`` into ``out``, with the learned
    proposals of the cache directory ``proposals`` (``DOCKRECON_CACHE``); the row of the
    results file (see the module docstring)."""
    from recon.validation import joint_check

    cmd = [cli, "reconstruct", *spec.telemetry, "--scenario", spec.scenario,
           "--seed", str(spec.seed), "-o", str(out), "-q"]
    if spec.config:
        cmd += ["--config", spec.config]
    load0 = _load()
    started = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True,
                          env={**os.environ, "DOCKRECON_CACHE": proposals})
    wall = time.perf_counter() - t0
    row = {"command": " ".join(os.path.relpath(c, ROOT) if os.path.isabs(c) else c
                               for c in cmd),
           "started": started, "wall_s": round(wall, 1), "exit": proc.returncode,
           "load_start": load0, "load_end": _load()}
    doc_path = out / "result.json"
    if doc_path.exists():
        doc = json.loads(doc_path.read_text())
        diag = doc.get("diagnostics", {})
        imp = diag.get("importance") or {}
        mc = diag.get("mcmc") or {}
        row.update(status=doc.get("status"), method=diag.get("method"),
                   ess=imp.get("ess"), n_proposal=imp.get("n_proposal"),
                   pareto_k=imp.get("pareto_k"), mcmc_steps=mc.get("steps"), timing=diag.get("timing"),
                   search=((diag.get("search") or {}).get("starts") or {}).get("path"),
                   best_cost=(diag.get("optimizer") or {}).get("best_cost"))
        if spec.truth:
            truth = json.loads(Path(spec.truth).read_text())["parameters"]
            ics = [n for n, p in doc["parameters"].items()
                   if n.startswith("rel_") and p["prior"]["kind"] != "fixed"]
            joint = joint_check(doc, truth, ics)
            row.update(joint_d2=round(joint["d2"], 2), joint_in95=joint["in95"])
    else:
        row["stderr"] = proc.stderr[-2000:]
    return row


def _print_row(name: str, side: str, row: dict) -> None:
    ess = row.get("ess")
    print(f"{name:24s} {side:6s} {row['wall_s']:7.1f} s  exit {row['exit']}  "
          f"{row.get('method')}  ESS {ess if ess is None else round(ess, 1)}  "
          f"d2 {row.get('joint_d2')}  load {row['load_start']} -> {row['load_end']}",
          flush=True)


def main(argv=None) -> int:
    sys.path.insert(0, str(ROOT))
    from _record import provenance
    from models.errors import InputError
    from recon.app.campaign import load_manifest
    from identification.provenance import versions
    from recon.io import write_json

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flights", default=None,
                    help="comma-separated names from campaign.toml (default: all)")
    ap.add_argument("--cli", default=str(ROOT / ".venv" / "bin" / "dockrecon"))
    ap.add_argument("--manifest",
                    default=str(ROOT / "telemetry_samples" / "flights" / "campaign.toml"),
                    help="the campaign manifest naming the flights (default: this checkout's)")
    ap.add_argument("--before-cli", default=None,
                    help="the other checkout's dockrecon: run each flight with it too, "
                         "right after --cli")
    ap.add_argument("--before-manifest", default=None,
                    help="the other checkout's campaign.toml (default: "
                         "telemetry_samples/flights/campaign.toml beside --before-cli's .venv)")
    ap.add_argument("--proposals", default=None, metavar="DIR",
                    help="the learned proposals' cache the runs use (DOCKRECON_CACHE; "
                         "dockrecon train); default: an empty one, so every search screens")
    ap.add_argument("--tag", default=None, help="suffix of the results file")
    ap.add_argument("--output", default=None, help="keep the result directories here")
    ap.add_argument("--results", default=str(HERE / "results"),
                    help="directory of the results files (default: benchmarks/results)")
    args = ap.parse_args(argv)
    if args.before_manifest and not args.before_cli:
        ap.error("--before-manifest needs --before-cli")
    for option, cli in (("--cli", args.cli), ("--before-cli", args.before_cli)):
        # checked before any flight runs: a wrong "before" path would otherwise end the
        # comparison with a traceback after the first "after" run
        if cli is not None and shutil.which(cli) is None:
            ap.error(f"{option}: not an executable file: {cli}")

    def manifest(path, option):
        try:
            return load_manifest(Path(path))
        except InputError as exc:
            ap.error(f"{option}: {exc}")

    specs = manifest(args.manifest, "--manifest")
    before_specs = None
    if args.before_cli:
        if args.before_manifest is None:
            # CHECKOUT/.venv/bin/dockrecon -> CHECKOUT/telemetry_samples/flights/campaign.toml
            args.before_manifest = str(Path(args.before_cli).resolve().parents[2]
                                       / "telemetry_samples" / "flights" / "campaign.toml")
        before_specs = manifest(args.before_manifest, "--before-manifest")
    try:
        pairs = pair_flights(specs, before_specs,
                             args.flights.split(",") if args.flights else None)
    except ValueError as exc:
        ap.error(f"--flights: {exc}")
    work = Path(args.output) if args.output else Path(tempfile.mkdtemp(prefix="dockrecon-sw-"))
    stem = "shipped_walls" + (f"_{args.tag}" if args.tag else "")
    results = Path(args.results)
    sides = ({"": (args.cli, args.manifest)} if before_specs is None else
             {"after": (args.cli, args.manifest),
              "before": (args.before_cli, args.before_manifest)})
    rows = {side: {} for side in sides}
    proposals = (str(Path(args.proposals).resolve()) if args.proposals
                 else tempfile.mkdtemp(prefix="dockrecon-no-proposals-"))

    def write():
        # after every flight, so that an interrupted comparison keeps the flights it ran
        for side, (cli, man) in sides.items():
            doc = {"cli": cli, "manifest": man, "flights": rows[side], "versions": versions(),
                   # the checkout whose CLI ran: CHECKOUT/.venv/bin/dockrecon
                   "provenance": provenance(__file__, argv,
                                            tree=Path(cli).absolute().parents[2])}
            if side:
                doc["interleaved"] = "each flight after, then before (--before-cli)"
            write_json(doc, results / (f"{stem}_{side}.json" if side else f"{stem}.json"))

    try:
        for spec, before in pairs:
            for side in sides:
                s = before if side == "before" else spec
                rows[side][spec.name] = row = run_flight(sides[side][0], s,
                                                         work / side / spec.name, proposals)
                _print_row(spec.name, side, row)
            write()
    finally:
        if not args.output:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
