"""Write ``benchmarks/README.md`` from the results files in ``benchmarks/results/``.

    python benchmarks/make_readme.py [--output PATH]     # or: make bench-readme

The page holds the current figures only, one table per benchmark, each with the machine, the
commit and the command of the results file it is read from (their ``"provenance"``, written
by ``benchmarks/_record.py``). The reasons for the settings these figures support, with the
figures of the variants that were measured and not kept, are in the documentation's design
pages (``docs/design/``). Every file in ``benchmarks/results/`` must be listed in
:data:`FILES`, so that no results file is left without a reader. Standard library only;
``tests/test_benchmark_readme.py`` checks that the committed page is this script's output.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
README = HERE / "README.md"

#: every results file: what it holds, and the design page that uses it (``docs/design/``)
FILES = {
    "hysteresis.json": ("hysteresis kernel speed", ""),
    "contact.json": ("contact detectors' speed", ""),
    "appendage.json": ("rod appendage: full against reduced formulation", ""),
    "hydraulic.json": ("hydraulic actuator and test-rig kernels", ""),
    "resonance.json": ("resonance identification hot paths", ""),
    "resonance_records.json": ("`identify resonance` on every shipped single-mode record", ""),
    "docking.json": ("docking units' 20-s reference runs", "probe_cone_step.rst"),
    "recon.json": ("log-probability evaluations of the nominal flight", "probe_cone_step.rst"),
    "before_after_forward.json": ("probe-cone forward model and log-probability, two checkouts "
                                  "interleaved", "reconstruction_speed.rst"),
    "before_after_peripheral_forward.json": ("peripheral 20-s reference run, two checkouts "
                                             "interleaved", "reconstruction_speed.rst"),
    "accuracy_docking.json": ("probe-cone integration settings against 0.25-ms runs, 41 "
                              "envelope draws", "probe_cone_step.rst"),
    "implicit_normal_experiment.patch": ("the implicit normal law of the head contacts: the "
                                         "kernel change and its script (not kept)",
                                         "probe_cone_step.rst"),
    "accuracy_peripheral.json": ("peripheral contact steps, latches on the RK4 step, against "
                                 "small-step runs of the shipped flights",
                                 "peripheral_contact_step.rst"),
    "accuracy_peripheral_latch.json": ("the same with 0.2-ms latch sub-steps",
                                       "peripheral_contact_step.rst"),
    "shipped_walls_cut_after.json": ("shipped probe-cone cut flights from the CLI",
                                     "reconstruction_speed.rst"),
    "shipped_walls_cut_before.json": ("the same with the moments importance refit",
                                      "reconstruction_speed.rst"),
    "shipped_walls_realistic_peripheral_after.json": ("shipped realistic-span and peripheral "
                                                      "flights from the CLI",
                                                      "reconstruction_speed.rst"),
    "shipped_walls_realistic_peripheral_before.json": ("the same before the quadratic refit "
                                                       "and the 1-ms peripheral step",
                                                       "reconstruction_speed.rst"),
    "shipped_walls_realistic_slow_after.json": ("the realistic slow flight, after",
                                                "reconstruction_speed.rst"),
    "shipped_walls_realistic_slow_before.json": ("the realistic slow flight, before",
                                                 "reconstruction_speed.rst"),
    "shipped_walls_lever_k4_i1000.json": ("peripheral flights with keep = 4, importance = 1000 "
                                          "(not kept)", "search.rst"),
    "shipped_walls_learned_probe_cone.json": ("shipped probe-cone flights from the CLI, search "
                                              "started from the learned proposal",
                                              "search.rst"),
    "shipped_walls_screen_probe_cone.json": ("the same flights screened, the same day",
                                             "search.rst"),
    "shipped_walls_head.json": ("every shipped flight from the CLI against the wall-time "
                                "targets, screened", "reconstruction_speed.rst"),
    "shipped_walls_head_learned.json": ("the flights of the run configuration a proposal was "
                                        "trained for, from the learned proposal",
                                        "reconstruction_speed.rst"),
    "shipped_walls_learned_all.json": ("every shipped flight from the CLI: the probe-cone "
                                       "flights from the shipped proposal, the peripheral "
                                       "ones screened", "reconstruction_speed.rst"),
    "flights_docking_mcmc.json": ("emcee on the shipped probe-cone flights", "emcee_moves.rst"),
    "flights_docking_hybrid.json": ("the hybrid engine on the shipped probe-cone flights",
                                    "importance_sampling.rst"),
    "calibration_docking.json": ("probe-cone study, 24 flights, importance sampling, whole "
                                 "record", "fit_window.rst"),
    "calibration_docking_window1.json": ("the same flights fitted to 1 s after capture",
                                         "fit_window.rst"),
    "calibration_docking_hybrid40.json": ("probe-cone study, 40 flights, emcee below ESS 100",
                                          "importance_sampling.rst"),
    "calibration_docking_realistic.json": ("probe-cone study, 24 realistic-span records",
                                           "calibration_studies.rst"),
    "calibration_study40.json": ("probe-cone study, 40 flights, moments importance refit",
                                 "importance_sampling.rst"),
    "calibration_study40_quadratic.json": ("probe-cone study, 40 flights, quadratic refit "
                                           "(screened starts)", "calibration_studies.rst"),
    "calibration_study40_learned.json": ("the same 40 flights from the shipped learned "
                                         "proposal", "calibration_studies.rst"),
    "calibration_peripheral_1ms_cal00-09.json": ("peripheral study at the 1-ms step, part 1 of "
                                                 "4", "calibration_studies.rst"),
    "calibration_peripheral_1ms_cal10-19.json": ("part 2 of 4", "calibration_studies.rst"),
    "calibration_peripheral_1ms_cal20-37.json": ("part 3 of 4", "calibration_studies.rst"),
    "calibration_peripheral_1ms_cal38-39.json": ("part 4 of 4", "calibration_studies.rst"),
    "calibration_peripheral_k4_i1000_cal00.json": ("peripheral study flight cal00 with keep = "
                                                   "4, importance = 1000 (not kept)",
                                                   "search.rst"),
    "calibration_peripheral_k4_i1000_hard.json": ("its seven other multi-modal flights",
                                                  "search.rst"),
    "campaign_scaling.json": ("campaign throughput at 1 and 2 workers, 8 flights",
                              "campaign_executor.rst"),
    "campaign_scaling_repeat2.json": ("the same, 4 flights, and 1 worker of 2 threads",
                                      "campaign_executor.rst"),
}

PARAMETERS = ("rel_pos_y", "rel_pos_z", "rel_vel_x", "rel_vel_y", "rel_vel_z", "rel_roll",
              "rel_pitch", "rel_yaw", "rel_rate_x", "rel_rate_y", "rel_rate_z", "clock_offset")
#: chi-square 95 % quantile for 12 degrees of freedom (the truth's likelihood-ratio statistic)
CHI2_12_95 = 21.026


def load(name: str) -> dict:
    return json.loads((RESULTS / name).read_text())


# -- formatting ----------------------------------------------------------------------------

def num(x, digits: int = 3) -> str:
    """``x`` to ``digits`` significant digits, plain (no exponent) where that is short."""
    if x is None:
        return "-"
    x = float(x)
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    mag = math.floor(math.log10(abs(x)))
    if mag >= 6 or mag < -4:
        return f"{x:.{digits - 1}e}".replace("e+0", "e").replace("e-0", "e-").replace("e+", "e")
    return f"{round(x, max(0, digits - 1 - mag)):,.{max(0, digits - 1 - mag)}f}".replace(",", " ")


def table(head: list[str], rows: list[list]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def machine(m) -> str:
    if isinstance(m, str):
        return m
    cpu = m.get("cpu") or "CPU not recorded"
    return f"{cpu}, {m.get('cpus')} CPUs, {m.get('platform')}"


def provenance(name: str, doc: dict | None = None) -> list[str]:
    """The lines under a table: the machine, the commit and the command of one results
    file."""
    p = (doc if doc is not None else load(name))["provenance"]
    commit = p.get("commit") or "not recorded"
    if p.get("before_commit"):
        commit += f" (before: {p['before_commit']})"
    return [f"`results/{name}`: {machine(p['machine'])}; commit {commit}; "
            f"command `{p['command']}`"]


def section(title: str, text: str, body: list[str], names: list[str]) -> list[str]:
    out = [f"### {title}", ""]
    if text:
        out += [text, ""]
    out += body + [""]
    for n in names:
        out += provenance(n) + [""]
    return out


# -- kernels -------------------------------------------------------------------------------

def kernels() -> list[str]:
    out = ["## Kernels", "",
           "`make bench` reruns these: `python benchmarks/run.py` runs each `bench_NAME.py` "
           "in its own process (`python benchmarks/run.py hysteresis`: that one only).", ""]
    h = load("hysteresis.json")["figures"]
    out += section("hysteresis (`bench_hysteresis.py`)", "", table(["figure", "value"], [
        ["`hyst_step`, element-steps per second, one core (median wall / thread CPU of "
         f"{h['repeats_median_of']})",
         f"{num(h['element_steps_per_s'])} / {num(h['element_steps_per_cpu_s'])}"],
        ["RK4 pattern (4 force evaluations + 1 update), element-steps per second",
         num(h["rk4_element_steps_per_s"])],
        ["`trace` from Python, samples per second", num(h["trace_samples_per_s"])],
        ["brake slips in the run / load average", f"{h['brake_slips_in_run']} / "
         f"{h['load_avg_1min'][0]}"],
        ["cold compile [s]", h["compile_s"]]]), ["hysteresis.json"])
    c = load("contact.json")["figures"]
    labels = {"sphere_vs_revolution_per_s": "sphere vs surface of revolution",
              "sphere_vs_plane_per_s": "sphere vs plane fragment",
              "segment_vs_circle_per_s": "segment vs circle",
              "segment_vs_segment_per_s": "segment vs segment",
              "point_vs_stop45_per_s": "latch point vs 45-degree stop",
              "segment_vs_stop45_crest_per_s": "latch segment vs stop crest",
              "segment_vs_slot_per_s": "latch segment vs slot",
              "fan_vs_circle_dichotomy_per_s": "257-generator fan vs circle, dichotomy",
              "fan_vs_circle_exhaustive_per_s": "257-generator fan vs circle, exhaustive",
              "contact_wrench_per_s": "contact wrench (force law, both moments)"}
    out += section("contact detectors (`bench_contact.py`)",
                   "Evaluations per second on one core, from a compiled loop over poses near "
                   "contact.",
                   table(["pair", "evaluations / s"],
                         [[v, num(c[k], 2)] for k, v in labels.items()]
                         + [["cold compile [s]", c["compile_s"]]]), ["contact.json"])
    a = load("appendage.json")["figures"]
    out += section("rod appendage (`bench_appendage.py`)",
                   "Full (3n+3) against reduced (n+3) equations, same tolerances; wall time of "
                   "the kernel call, median of 7.",
                   table(["case", "full [ms]", "reduced [ms]", "speed-up (median / min)",
                          "right-hand sides full / reduced", "spacecraft channels, max rel. "
                          "difference"],
                         [[case, a[f"{case}_full_wall_ms"], a[f"{case}_reduced_wall_ms"],
                           f"{a[f'{case}_speedup']} / {a[f'{case}_speedup_min']}",
                           f"{a[f'{case}_full_nfev']} / {a[f'{case}_reduced_nfev']}",
                           a[f"{case}_spacecraft_max_rel_diff"]]
                          for case in ("pulse", "deploy")]), ["appendage.json"])
    y = load("hydraulic.json")["figures"]
    out += section("hydraulic actuator and rig (`bench_hydraulic.py`)", "", table(
        ["figure", "value"],
        [["stand-alone actuator, steps per second (real-time factor)",
          f"{num(y['standalone_steps_per_s'])} ({num(y['standalone_realtime_factor'])})"],
         ["coupled lift, sequential impulses, 1 ms / 0.1 ms, real-time factor",
          y["lift_coupled_dt1ms_realtime_factor"]],
         ["coupled lift, 10 ms, real-time factor", y["lift_coupled_dt10ms_realtime_factor"]],
         ["coupled lift, single rate 0.1 ms, real-time factor",
          y["lift_coupled_single_rate_realtime_factor"]],
         ["hexapod, 1 ms, real-time factor", y["hexapod_dt1ms_realtime_factor"]],
         ["identification of `telemetry_samples/rig/step.parquet` [s]",
          y["identify_step_record_s"]],
         ["cold compile [s]", y["compile_s"]]]), ["hydraulic.json"])
    r = load("resonance.json")["figures"]
    out += section("resonance identification (`bench_resonance.py`)", "", table(
        ["figure", "value"],
        [["oscillator, 25 600 RK4 steps [ms]", r["oscillator_25600_steps_ms"]],
         ["per RK4 step [ns]", r["ns_per_rk4_step"]],
         ["Abel inversion, 200 amplitudes [ms]", r["abel_restoring_odd_200_amplitudes_ms"]]]),
        ["resonance.json"])
    w = load("resonance_records.json")["figures"]
    out += section(
        "`identify resonance` on the shipped records (`bench_resonance_records.py`)",
        "Wall time of the command as a user runs it (a fresh process: imports, bands of "
        + f"{w['draws']} bootstrap replicates, `--refine auto`, the report), the reduced mass "
        "from each record's truth file.",
        table(["record", "wall [s]"],
              [[f"`{k}.csv`", num(v)] for k, v in w["wall_s"].items()]
              + [["**largest**", num(w["max_wall_s"])]]),
        ["resonance_records.json"])
    return out


def docking_units() -> list[str]:
    out = ["## Docking units", ""]
    d = load("docking.json")["figures"]
    toy = d.get("toy_ms")

    def ratio(f):
        return f"{f['ratio_to_toy']}x" if "ratio_to_toy" in f else "-"

    rows = [[label, f"{num(d[k]['cpu_s_median'] * 1e3)} ms ({d[k]['steps']:,} steps)".replace(
                 ",", " "), ratio(d[k]),
             f"{num(d[k]['short_cpu_s_per_eval'] * 1e3)} ms",
             f"{num(d[k]['batch_cpu_s_per_eval'] * 1e3)} ms"]
            for k, label in (("preset", "preset: implicit friction, 2 ms after capture"),
                             ("explicit_1ms", "explicit friction, 1 ms after capture"))]
    yard = (f" The C toy yardstick (`../shared/calib/toy-ms`) took {num(toy)} ms in the same "
            "run; the ratio is the 20-s run's CPU time over it." if toy else "")
    out += section("probe-cone unit (`bench_docking.py`)",
                   "CPU time of the reference preset's runs and of the explicit friction it "
                   "replaced (`docs/design/probe_cone_step.rst`)." + yard,
                   table(["integration", "20-s reference run, one core", "ratio to the C toy",
                          "6-s window, per evaluation in the 2-thread batch",
                          "20-s run, per evaluation in the batch"], rows), ["docking.json"])
    if "peripheral" in d:
        p, name = d["peripheral"], "docking.json"
        text = "The reference preset's 20-s run (the last `make bench`)."
    else:   # recorded by the side-by-side comparison: the "after" runs, median of the repeats
        name = "before_after_peripheral_forward.json"
        runs = load(name)["runs"]["after"]
        p = {k: statistics.median(r[k] for r in runs)
             for k in ("cpu_s_median", "batch_cpu_s_per_eval", "steps", "small_steps")}
        text = (f"The reference preset's 20-s run, median of {len(runs)} repeats "
                "(`dockrecon bench docking --unit peripheral --json`).")
    out += section("peripheral unit", text, table(
        ["20-s reference run, one core", "ratio to the C toy", "steps (contact steps)",
         "per evaluation in the 2-thread batch"],
        [[f"{num(p['cpu_s_median'] * 1e3)} ms", ratio(p),
          f"{int(p['steps'])} ({int(p['small_steps'])})",
          f"{num(p['batch_cpu_s_per_eval'] * 1e3)} ms"]]), [name])
    r = load("recon.json")["figures"]
    rows = [[label, num(f["evals_per_s"]), f"{num(f['cpu_s_per_eval'] * 1e3)} ms",
             f"{f['idle_minutes_for_1e5_evals']} min"]
            for label, f in (("preset: implicit friction, 2 ms after capture", r),
                             ("explicit friction, 1 ms after capture", r["explicit_1ms"]))]
    out += section("log probability of the nominal probe-cone flight (`bench_recon.py`)",
                   "Batches of 16, as one emcee call evaluates them, on all cores.",
                   table(["integration", "evaluations / s (wall)", "CPU per evaluation",
                          "1e5 evaluations on 2 idle cores"], rows), ["recon.json"])
    return out


# -- accuracy ------------------------------------------------------------------------------

#: the probe-cone preset's integration, as ``accuracy_docking.py`` names its variants
PROBE_CONE_PRESET_VARIANT = "implicit, 2 ms after capture"


def _preset_mark(label: str) -> str:
    return label + " (preset)" if label == PROBE_CONE_PRESET_VARIANT else label


def accuracy() -> list[str]:
    out = ["## Integration accuracy against small-step runs", ""]
    s = load("accuracy_docking.json")["summary"]
    # the preset's settings are marked here, not in the file: the variants are stated by their
    # settings, and the file's keys stay valid when the preset moves
    rows = [[_preset_mark(k.removesuffix(" (preset)")), v["median"], v["q90"], v["above_0.5"],
             v["above_1"], v["failed"]] for k, v in s.items()]
    n = next(iter(s.values()))["n"]
    out += section("probe-cone unit (`accuracy_docking.py`)",
                   f"{n} dockings of the preset's envelope that capture: per docking, the "
                   "largest rms difference over the fitted channels from the same docking at "
                   "0.25 ms, in the shipped flights' noise sigmas.",
                   table(["integration", "median", "90 %", "dockings > 0.5", "dockings > 1",
                          "runs failed"], rows), ["accuracy_docking.json"])
    d = load("accuracy_peripheral_latch.json")
    rows = []
    for flight, f in d["flights"].items():
        for step, v in f["variants"].items():
            rows.append([flight, step, v["ring position"]["rms"], v["ring angles"]["rms"],
                         v["body rates"]["rms"], v["events"]["max"], v["latch_ledger"],
                         f"{num(v['cpu_s'] * 1e3)} ms"])
    out += section("peripheral unit (`accuracy_peripheral.py`)",
                   "Each shipped flight's truth at the contact step, latches sub-stepped at "
                   f"{d['settings']['dt_latch'] * 1e3:g} ms, against the same docking at 0.05 "
                   "ms: the largest rms difference in each group's noise sigmas, the largest "
                   "event-time difference in the 2-ms switch sigma, the latches' ledger as a "
                   "fraction of its limit, the CPU time of a run.",
                   table(["flight", "contact step", "ring position", "ring angles",
                          "body rates", "events", "latch ledger", "CPU"], rows),
                   ["accuracy_peripheral_latch.json"])
    return out


# -- shipped flights -----------------------------------------------------------------------

def _stage(row: dict, stage: str) -> str:
    t = (row.get("timing") or {}).get(stage)
    return "-" if not t else f"{round(t['wall_s'])} s ({t['evaluations']})"


def shipped() -> list[str]:
    names = ["shipped_walls_cut_after.json", "shipped_walls_realistic_peripheral_after.json"]
    rows = []
    for name in names:
        for flight, r in load(name)["flights"].items():
            ess = "-" if r.get("ess") is None else f"{num(r['ess'], 4)} of {r['n_proposal']}"
            rows.append([flight, f"{r.get('method')} ({ess})", r.get("joint_d2"),
                         f"**{round(r['wall_s'])} s**", _stage(r, "search"),
                         _stage(r, "polish"), _stage(r, "importance"),
                         _stage(r, "products")])
    out = ["## Shipped flights from the command line", "",
           "`dockrecon reconstruct` of every shipped flight with its shipped run configuration "
           "and the hybrid engine (emcee where the importance ESS stays below 100), one flight "
           "at a time on an otherwise idle machine. Gaussian joint check of the truth over the "
           "11 initial conditions: limit d2 19.7. Stages: wall (forward evaluations).", ""]
    out += table(["flight", "engine (importance ESS)", "d2", "wall", "search", "polish",
                  "importance", "products"], rows) + [""]
    for name in names:
        out += provenance(name) + [""]
    return out


#: wall-time target of a flight's calibrated posterior from the CLI [s], per unit
WALL_TARGET = {"probe_cone": 60.0, "peripheral": 120.0}


def _unit_of(flight: str) -> str:
    return "peripheral" if flight.startswith("peripheral") else "probe_cone"


def targets() -> list[str]:
    screened = load("shipped_walls_head.json")
    now = load("shipped_walls_learned_all.json")["flights"]
    rows, walls = [], {u: [] for u in WALL_TARGET}
    for flight, b in screened["flights"].items():
        unit = _unit_of(flight)
        r = now.get(flight, b)
        walls[unit].append(r["wall_s"])
        rows.append([flight, f"{WALL_TARGET[unit]:.0f} s", f"{round(b['wall_s'])} s",
                     f"**{round(r['wall_s'])} s**",
                     "yes" if r["wall_s"] <= WALL_TARGET[unit] else "no",
                     r.get("search") or "-", r.get("method"), num(r.get("ess"), 3),
                     num(r.get("pareto_k"), 2), _stage(r, "search"), _stage(r, "polish"),
                     _stage(r, "importance"), r.get("joint_d2")])
    text = ("`dockrecon reconstruct` of every shipped flight with its shipped run "
            "configuration and the hybrid engine, one flight at a time: before, screened (no "
            "learned proposal), and now: the probe-cone flights from the shipped learned "
            "proposal, the peripheral flights screened (no proposal ships for them yet), with "
            "the importance stage's early ends. The targets are a calibrated posterior "
            "in 60 s (probe-cone) and 120 s (peripheral) on 2 cores, the median of each unit "
            "at most half that.")
    med = {u: statistics.median(w) for u, w in walls.items() if w}
    text += " Median wall now: " + ", ".join(
        f"{u} {m:.0f} s (target {WALL_TARGET[u] / 2:.0f} s)" for u, m in med.items()) + "."
    out = ["## Shipped flights against the targets", "", text, ""]
    out += table(["flight", "target", "before (screened)", "now", "met", "starts", "engine",
                  "ESS", "k-hat", "search", "polish", "importance", "d2 (limit 19.7)"],
                 rows) + [""]
    for name in ("shipped_walls_head.json", "shipped_walls_learned_all.json"):
        out += provenance(name) + [""]
    return out


def learned() -> list[str]:
    learned_doc = load("shipped_walls_learned_probe_cone.json")
    screen_doc = load("shipped_walls_screen_probe_cone.json")
    rows, ratios = [], []
    for flight, r in learned_doc["flights"].items():
        b = screen_doc["flights"].get(flight)
        if b is None:
            continue
        ratio = b["wall_s"] / r["wall_s"]
        ratios.append(ratio)
        rows.append([flight, f"{round(b['wall_s'])} s", f"**{round(r['wall_s'])} s**",
                     f"{ratio:.2f}", f"{_stage(b, 'search')} / {_stage(r, 'search')}",
                     f"{num(b.get('best_cost'), 5)} / {num(r.get('best_cost'), 5)}",
                     f"{num(b.get('ess'), 3)} / {num(r.get('ess'), 3)}",
                     f"{b.get('joint_d2')} / {r.get('joint_d2')}", r.get("search")])
    text = ("`dockrecon reconstruct` of the shipped probe-cone flights (shipped run "
            "configurations, hybrid engine), screened (an empty proposal cache) and started "
            "from the proposal `dockrecon train` made for the preset and priors "
            "(`--proposals`), one flight at a time. Per cell: screened / learned.")
    if ratios:
        text += f" Median speed-up {statistics.median(ratios):.2f}."
    out = ["## Learned starts", "", text, ""]
    out += table(["flight", "screened", "learned", "ratio", "search wall (evaluations)",
                  "best cost", "importance ESS", "joint d2 (limit 19.7)", "starts"],
                 rows) + [""]
    for name in ("shipped_walls_screen_probe_cone.json", "shipped_walls_learned_probe_cone.json"):
        out += provenance(name) + [""]
    return out


# -- calibration ---------------------------------------------------------------------------

def _binom_cdf(k: int, n: int, p: float) -> float:
    return sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k + 1))


def _study(docs: list[dict]) -> dict:
    """Coverage of the 12 parameters, pooled, the joint and highest-density regions and the
    truth's likelihood-ratio statistic over the flights of ``docs`` (the parts of one study;
    a flight whose fit is not ``ok`` counts as a miss everywhere)."""
    flights = [f for d in docs for f in d["flights"]]
    n = len(flights)
    ok = [f for f in flights if f.get("status", "ok") == "ok"]
    hits = {(p, lv): sum(bool(f.get("status", "ok") == "ok"
                              and f["parameters"].get(p, {}).get(f"in{lv}")) for f in flights)
            for p in PARAMETERS for lv in (68, 95)}
    cells = {key: _binom_cdf(k, n, key[1] / 100) for key, k in hits.items()}
    lowest = min(cells, key=cells.get)
    lr = [f["lr"] for f in ok if f.get("lr") is not None]
    joint = [f for f in ok if f.get("joint")]
    hpd = [f for f in ok if f.get("hpd")]
    return {"n": n, "hits": hits, "cells": cells, "lowest": lowest,
            "familywise": sum(p < 0.05 / len(cells) for p in cells.values()),
            "pooled": tuple(sum(hits[(p, lv)] for p in PARAMETERS) / (n * len(PARAMETERS))
                            for lv in (68, 95)),
            "joint95": sum(bool(f["joint"]["in95"]) for f in joint) / n if joint else None,
            "hpd95": sum(bool(f["hpd"]["in95"]) for f in hpd) / n if hpd else None,
            "lr_mean": statistics.fmean(lr) if lr else None,
            "lr_in95": sum(x <= CHI2_12_95 for x in lr) / n if lr else None,
            "ess_below_100": sum(1 for f in ok if (f.get("ess") or 0) < 100),
            "khat_over": sum(1 for f in ok if f.get("pareto_k") is not None
                             and f.get("pareto_k_limit") is not None
                             and f["pareto_k"] > f["pareto_k_limit"]),
            "learned": sum(1 for f in flights if f.get("search_path") == "learned"
                           and (f.get("search_rounds") or 1) <= 1),
            "learned_then_screen": sum(1 for f in flights if f.get("search_path") == "learned"
                                       and (f.get("search_rounds") or 1) > 1),
            "not_ok": n - len(ok)}


STUDIES = (
    ("probe-cone, cut records, screened", ["calibration_study40_quadratic.json"]),
    ("probe-cone, cut records, learned starts", ["calibration_study40_learned.json"]),
    ("peripheral, cut records", ["calibration_peripheral_1ms_cal00-09.json",
                                 "calibration_peripheral_1ms_cal10-19.json",
                                 "calibration_peripheral_1ms_cal20-37.json",
                                 "calibration_peripheral_1ms_cal38-39.json"]),
    ("probe-cone, realistic-span records", ["calibration_docking_realistic.json"]),
)


def calibration() -> list[str]:
    studies = [(label, names, _study([load(n) for n in names])) for label, names in STUDIES]
    head = ["parameter"] + [f"{label} ({s['n']}): 68 / 95 %" for label, _, s in studies]
    rows = [[p] + [f"{s['hits'][(p, 68)] / s['n']:.2f} / {s['hits'][(p, 95)] / s['n']:.2f}"
                   for _, _, s in studies] for p in PARAMETERS]

    def frac(x):
        return "-" if x is None else f"{x:.2f}"

    rows += [
        ["**pooled**"] + [f"**{s['pooled'][0]:.3f} / {s['pooled'][1]:.3f}**"
                          for _, _, s in studies],
        ["lowest cell (p of so few hits)"] + [
            f"{s['lowest'][0]} {s['lowest'][1]} % ({s['cells'][s['lowest']]:.3f})"
            for _, _, s in studies],
        ["cells low family-wise (p < 0.05 / 24)"] + [str(s["familywise"]) for _, _, s in studies],
        ["truth in the Gaussian joint 95 % region (11 initial conditions)"] + [
            frac(s["joint95"]) for _, _, s in studies],
        ["truth in the highest-density 95 % region"] + [frac(s["hpd95"]) for _, _, s in studies],
        ["truth's likelihood-ratio statistic: mean (chi2_12: 12), inside its 95 % limit"] + [
            f"{s['lr_mean']:.1f}, {s['lr_in95']:.2f}" for _, _, s in studies],
        ["flights below importance ESS 100 / fits not ok"] + [
            f"{s['ess_below_100']} / {s['not_ok']}" for _, _, s in studies],
        ["importance k-hat over its limit (the hybrid engine: emcee)"] + [
            str(s["khat_over"]) for _, _, s in studies],
        ["search from the learned proposal / learned, then screened"] + [
            f"{s['learned']} / {s['learned_then_screen']}" for _, _, s in studies],
    ]
    out = ["## Calibration studies", "",
           "`dockrecon study calibration`: flights drawn from the run configuration's priors, "
           "recorded with the shipped sensor effects and reconstructed; the share of flights "
           "whose 68 % and 95 % intervals hold the truth. Sampling error at 40 flights: 0.074 "
           "at 68 %, 0.034 at 95 %; at 24: 0.095 and 0.044. The cut-record studies ran "
           "without emcee (`--no-mcmc`: importance intervals on every flight); the "
           "realistic-span study with emcee below ESS 100. What the studies showed: "
           "`docs/design/calibration_studies.rst`.", ""]
    out += table(head, rows) + [""]
    for label, names, _ in studies:
        for n in names:
            out += provenance(n) + [""]
    return out


# -- campaigns -----------------------------------------------------------------------------

def campaigns() -> list[str]:
    d = load("campaign_scaling.json")
    rows = [[f"{r['workers']} x {r['threads_per_worker']}", r["flights"], f"{r['wall_s']} s",
             r["flights_per_hour"],
             f"{statistics.fmean(r['flight_wall_s']):.0f} s"] for r in d["runs"]]
    text = ("The shipped flights as a campaign (`run.toml` budget, emcee off) on an embedded "
            "Dask cluster of 1 and 2 single-threaded workers. Efficiency of 2 workers: "
            f"{d['efficiency_2_workers']:.2f} from the campaigns' walls, "
            f"{d['efficiency_2_workers_steady']:.2f} from the mean flight alone and two at a "
            "time.")
    return ["## Campaigns", ""] + section(
        "flights per hour (`campaign_scaling.py`)", text,
        table(["workers x threads", "flights", "wall", "flights / h", "mean flight wall"],
              rows), ["campaign_scaling.json"])


def files() -> list[str]:
    present = sorted(p.name for p in RESULTS.iterdir() if not p.name.startswith("."))
    unknown = [n for n in present if n not in FILES]
    gone = [n for n in FILES if n not in present]
    if unknown or gone:
        raise SystemExit(f"make_readme.py: results files not described in FILES: {unknown}; "
                         f"described but absent: {gone}")
    pages: dict[str, list[str]] = {}
    for n, (_, page) in FILES.items():
        pages.setdefault(page, []).append(f"`{n}`")
    return ["## Results files", "",
            "Each JSON file in `results/` holds its `provenance` (machine, commit, command; "
            "`_record.py`); what each holds: `FILES` in `make_readme.py`. The design pages "
            "(`docs/design/`) that use them:", ""] + [
        f"- {f'`{page}`' if page else 'no design page'}: {', '.join(names)}"
        for page, names in sorted(pages.items(), key=lambda kv: (not kv[0], kv[0]))] + [""]


HEADER = """# Benchmarks

<!-- Generated by benchmarks/make_readme.py from benchmarks/results/: do not edit by hand. -->
*Generated by `python benchmarks/make_readme.py` (`make bench-readme`) from the results files
in `benchmarks/results/`; do not edit it by hand.* `make bench` reruns the kernel benchmarks
and regenerates this page; the other tables are refreshed by the command under each (minutes to
hours on 2 cores), then `make bench-readme`. Each table names the machine, the commit of the
source tree that produced it and the command that reproduces it. The machines were shared
2-core virtual machines: compare CPU times, read wall times as upper bounds. Why the settings
are what they are, with these figures and the variants that were measured and not kept: the
documentation's design pages, `docs/design/`.
"""


def render() -> str:
    lines = HEADER.splitlines() + [""]
    for part in (kernels, docking_units, accuracy, targets, shipped, learned, calibration,
                 campaigns, files):
        lines += part()
    while lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--output", type=Path, default=README,
                    help="where to write the page (default: benchmarks/README.md)")
    args = ap.parse_args(argv)
    text = render()
    tmp = args.output.with_name(args.output.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(args.output)
    print(f"{args.output}: {len(text.splitlines())} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
