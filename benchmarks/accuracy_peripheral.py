"""The peripheral unit's contact step against a small-step run, on the shipped flights, in the
units a reconstruction judges it by: the records' noise sigmas (issue 21).

The shipped peripheral records spend most of their span between the first touch and capture
(68-84 % of a 4-7 s record's steps), where the preset steps at ``dt_contact`` = 0.4 ms
(bound by the latches' guide contacts: their force is held over the step, and the latches'
own energy ledger on random captures reaches 1.3 of its acceptance limit at 0.5 ms;
``models/peripheral/presets/reference.toml``). So a reconstruction's cost per evaluation is
about proportional to the contact steps. This script asks what a longer contact step does to
what a reconstruction fits.

For each shipped flight (``telemetry_samples/flights/peripheral``: its truth's initial
conditions and record span, output at the run configuration's 100 Hz) each variant is
compared with the same docking integrated explicitly at ``dt_contact`` 0.05 ms and every
captured step 0.25 ms (``peripheral_speed.SMALL``, its small-step reference):

* per fitted channel group (ring position 0.2 mm, ring angles 1 mrad, body rates 0.2 mrad/s:
  the run configuration's sigmas) the largest over its channels of the root-mean-square
  difference, and of the largest difference, in sigmas;
* the event times (capture, each latch: the switch timing sigma 2 ms), the largest
  difference in sigmas;
* the latches' own energy ledger, as a fraction of its acceptance limit
  (``tests/models/test_peripheral_behaviour.py``);
* steps and CPU time (``process_time``, median of ``--repeats`` runs, compiled).

    python benchmarks/accuracy_peripheral.py [--steps 4e-4,5e-4,8e-4,1e-3,2e-3] [--repeats 3]

Writes ``benchmarks/results/accuracy_peripheral.json`` (``--output``), with the machine, commit
and command (``benchmarks/_record.py``).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FLIGHTS = ROOT / "telemetry_samples" / "flights" / "peripheral"
RATE = 100.0   # [Hz] the run configuration's model output rate
GROUPS = {"ring position": (("ring_x", "ring_y", "ring_z"), 2e-4),
          "ring angles": (("ring_roll", "ring_pitch", "ring_yaw"), 1e-3),
          "body rates": (tuple(f"{v}_rate_{a}" for v in ("active", "passive") for a in "xyz"),
                         2e-4)}
EVENT_SIGMA = 2e-3   # [s]
def _events(tr) -> dict:
    """Capture and latch times [s] (None where the event did not happen)."""
    return {k: (float(v) if v is not None and np.isfinite(v) else None)
            for k, v in tr.events.items() if k == "capture" or k.startswith("latch_")}


def compare(tr, ref) -> dict:
    """Differences of ``tr`` from ``ref`` in sigmas (see the module docstring)."""
    row = {}
    for label, (chans, sigma) in GROUPS.items():
        d = [(tr[c] - ref[c]) / sigma for c in chans]
        row[label] = {"rms": round(max(float(np.sqrt(np.mean(x ** 2))) for x in d), 4),
                      "max": round(max(float(np.max(np.abs(x))) for x in d), 4)}
    ev, er = _events(tr), _events(ref)
    diffs = [abs(ev[k] - er[k]) / EVENT_SIGMA for k in er
             if er[k] is not None and ev.get(k) is not None]
    missing = sorted(set(k for k in er if er[k] is not None)
                     ^ set(k for k in ev if ev[k] is not None))
    row["events"] = {"max": round(max(diffs), 4) if diffs else None, "missing": missing}
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", default="4e-4,5e-4,8e-4,1e-3,2e-3",
                    help="contact steps [s], comma-separated")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--latch-step", type=float, default=None,
                    help="latch sub-step dt_latch [s] of every variant (default: none, one "
                         "latch step per RK4 step)")
    ap.add_argument("--output", type=Path,
                    default=ROOT / "benchmarks" / "results" / "accuracy_peripheral.json")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from models.peripheral.simulate import load_scenario, simulate
    from identification.provenance import versions
    from recon.io import write_json
    from models.peripheral._kernels import run_layout as R
    from peripheral_speed import SMALL, _variant, latch_ledger_fraction

    base = load_scenario("reference")
    steps = [float(s) for s in args.steps.split(",")]
    results = {"settings": {"steps": steps, "repeats": args.repeats, "rate": RATE,
                            "small": SMALL, "preset_dt_contact": base.integration.dt_contact,
                            "dt_latch": args.latch_step},
               "flights": {}}
    for truth_path in sorted(FLIGHTS.glob("*.truth.json")):
        name = truth_path.name.removesuffix(".truth.json")
        doc = json.loads(truth_path.read_text())
        ic = dataclasses.replace(base.initial, **{k: v for k, v in doc["parameters"].items()
                                                  if k != "clock_offset"})
        dur = float(doc["settings"]["duration"])
        ref = simulate(_variant(base, **SMALL), ic, RATE, dur)
        rows = {}
        for h in steps:
            scn = _variant(base, dt_contact=h, dt_latch=args.latch_step)
            cpus = []
            tr = None
            for _ in range(max(1, args.repeats)):
                c0 = time.process_time()
                tr = simulate(scn, ic, RATE, dur, raise_on_failure=False)
                cpus.append(time.process_time() - c0)
            row = {"status": int(tr.status), "steps": int(tr.info[R.INFO_STEPS]),
                   "cpu_s": round(float(np.median(cpus)), 4)}
            if tr.status == 0:
                row.update(compare(tr, ref))
                row["latch_ledger"] = round(latch_ledger_fraction(tr), 3)
            rows[f"{h * 1e3:g} ms"] = row
            print(f"{name:11s} contact {h * 1e3:5.3g} ms  steps {row['steps']:6d}  "
                  f"cpu {row['cpu_s'] * 1e3:6.1f} ms  "
                  + ("  ".join(f"{g} {row[g]['rms']:.3f}/{row[g]['max']:.2f}"
                               for g in GROUPS)
                     + f"  events {row['events']['max']}  missing {row['events']['missing']}"
                       f"  latch ledger {row['latch_ledger']}"
                     if tr.status == 0 else f"status {tr.status}"), flush=True)
        results["flights"][name] = {"duration": dur, "events": _events(ref), "variants": rows}
    from _record import provenance

    results["versions"] = versions()
    results["provenance"] = provenance(__file__, argv)
    write_json(results, args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
