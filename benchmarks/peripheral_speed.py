"""Speed and step-size figures of the peripheral unit's 20-s reference run
(docs/design/peripheral_contact_step.rst, peripheral_captured_step.rst).

``python benchmarks/peripheral_speed.py prune [--repeats N]``: CPU time of the reference run
with the primitive-pair pruning on and off, interleaved in one process (median and minimum of
``process_time``), steps, contact steps and the energy ledger.

``python benchmarks/peripheral_speed.py captured [--laws caged,rigid,zero]``: the captured
step ``dt_captured`` swept (0.5, 1, 2 ms) for each leg-preload law -- ``caged``: the preset
(preload in its compliant cage, ``preload_stiffness``), ``rigid``: the same preload with a
rigid cage (the force step ``sign(c) F0``), ``zero``: no preload -- each against a 0.125-ms
captured step of the same law: largest differences of the ring position, ring angles and
leg lengths over the samples, capture time, energy-ledger residual over the run (of the
initial kinetic energy), steps and CPU time (``process_time`` of one run, compiled).

``python benchmarks/peripheral_speed.py preset [--repeats N]``: CPU time of the 20-s
reference run as the preset had it (rigid-cage preload, 0.5-ms captured step) and as it is
(caged preload, its ``dt_captured``), interleaved in one process like ``prune``.

``python benchmarks/peripheral_speed.py draws``: the energy-ledger residual over 5 s (of the
initial kinetic energy) of the 8 random captures of the acceptance test
(``tests/models/test_peripheral_behaviour.py::test_energy_ledger_random_captures``, its
draws), for ``dt_captured`` = 0.5, 1, 2 ms with the caged and the rigid-cage preload.

``python benchmarks/peripheral_speed.py cage``: the linearised ring on its legs at the ready
pose with the preset's cage stiffness and dampers: cage-mode angular frequencies, the largest
eigenvalue magnitude and ``|lambda| h`` at the preset's captured step.

``python benchmarks/peripheral_speed.py steps [--repeats N] [--variants a,b]``: CPU time of the
20-s reference run with the step settings of :data:`STEPS` (``before``: 0.2 ms contact and
1 ms captured steps throughout; ``contact``: the 0.25-ms contact step alone; ``settled``: the
2-ms settled step alone; ``previous``: both, the preset before the implicit contacts;
``contact0.4``: ``previous`` with a 0.4-ms contact step; ``implicit``: that with the
contacts' velocity terms implicit after capture, 2-ms captured and 5-ms settled steps;
``preset``: the preset as it is), interleaved in one process like ``prune``, with the load
average before and after.

``python benchmarks/peripheral_speed.py accuracy [--variants a,b] [--draws N] [--duration S]``:
each variant of :data:`STEPS` on the reference and the first ``N`` random captures of the
acceptance test (``_draws`` of ``tests/models/test_peripheral_behaviour.py``) against a
small-step reference of each docking (``dt_contact`` 0.05 ms, every captured step 0.25 ms):
largest differences of the channels a reconstruction fits (ring position ``ring_x..z``, ring
angles ``ring_roll..yaw``, leg lengths ``leg_1..6``, both vehicles' body rates) over the
samples up to 3 s after capture (the span of the shipped flights' records) and over the whole
run, and of the capture time; the energy-ledger residual and the latches' own ledger
mismatch (of the acceptance tests' limits) over the run; steps of the reference docking.

``python benchmarks/peripheral_speed.py settle [--pairs 4:2e-3,5:2.5e-3] [--draws N]
[--seed S]``: the settled step swept (``settle_time`` [s] : ``dt_settled`` [s] pairs, the
preset's other steps), on the reference and ``N`` random captures (``_draws(N, seed=S)``)
over 20 s: the largest energy-ledger residual (and each docking's, or the 90 % quantile),
the latches' own ledger (of its limit), the largest ring-position, ring-angle and body-rate
differences from an explicit run with every captured step 0.25 ms, and the reference's steps.

``python benchmarks/peripheral_speed.py implicit [--steps 2e-3,3e-3]``: the captured step swept
(no settled step) with the ring-ring contacts' velocity terms explicit (``never``) and
implicit after capture: the energy-ledger residual over 5 s of the 8 random captures of the
acceptance test and the latches' own ledger (of its limit).

``python benchmarks/peripheral_speed.py latches [--variants plain0.4,latch1,latch2] [--draws 40]
[--seeds 7,11]``: over the random captures ``_draws(N, seed)`` (5 s each) of each seed, the
largest latches' own ledger (of its acceptance limit) and energy-ledger residual (of the
initial kinetic energy), the captures and the failed runs, for step settings of
:data:`STEPS` (``latch1`` / ``latch2`` / ``latch3``: 1 / 2 / 3-ms contact steps with the
latches sub-stepped at 0.2 ms, ``latch2q`` at 0.4 ms; ``plain0.4``: 0.4 ms, each latch on
the RK4 step).

``python benchmarks/peripheral_speed.py symmetry [--steps 2e-3,3e-3]``: the same sweep on the
three-fold symmetry acceptance test (``test_three_fold_symmetry``: the turned run against the
base run turned, 4 s): the largest differences of the ring position, interface force and
moment, each of its group's largest value (the test's limit: 1e-6).
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import time

import numpy as np

from models.peripheral._kernels import mechanism as km
from models.peripheral._kernels import run_layout as R
from models.peripheral.mechanism import ready_pose
from models.peripheral.simulate import load_scenario, simulate

# leg-preload laws of the captured-step sweep: mechanism fields replaced in the preset
LAWS = {"caged": {}, "rigid": {"preload_stiffness": math.inf}, "zero": {"spring_preload": 0.0}}

# step settings of ``steps`` and ``accuracy``: integration fields replaced in the preset
# (``preset``: none). ``previous`` .. ``implicit`` name every field they set, so that they
# stay what they say when the preset moves
_OLD = {"implicit_contact": "never", "free_until_touch": False}
STEPS = {
    "before": {"dt_contact": 2e-4, "dt_captured": 1e-3, "dt_settled": None, "settle_time": 0.0,
               **_OLD},
    "contact": {"dt_contact": 2.5e-4, "dt_captured": 1e-3, "dt_settled": None,
                "settle_time": 0.0, **_OLD},
    "settled": {"dt_contact": 2e-4, "dt_captured": 1e-3, "dt_settled": 2e-3, "settle_time": 4.0,
                **_OLD},
    "previous": {"dt_contact": 2.5e-4, "dt_captured": 1e-3, "dt_settled": 2e-3,
                 "settle_time": 4.0, **_OLD},
    "contact0.4": {"dt_contact": 4e-4, "dt_captured": 1e-3, "dt_settled": 2e-3,
                   "settle_time": 4.0, **_OLD},
    "implicit": {"dt_contact": 4e-4, "dt_captured": 2e-3, "dt_settled": 5e-3, "settle_time": 4.0,
                 "implicit_contact": "captured", "free_until_touch": False},
    "preset": {},
    "plain0.4": {"dt_contact": 4e-4, "dt_latch": None},
    "latch1": {"dt_contact": 1e-3, "dt_latch": 2e-4},
    "latch2": {"dt_contact": 2e-3, "dt_latch": 2e-4},
    "latch2q": {"dt_contact": 2e-3, "dt_latch": 4e-4},
    "latch3": {"dt_contact": 3e-3, "dt_latch": 2e-4},
}
# windows of ``accuracy``: up to CAPTURE_WINDOW [s] after the small-step reference's capture
# (the span of the shipped flights' records), and the whole run
CAPTURE_WINDOW = 3.0
WINDOWS = {"capture": f"to capture + {CAPTURE_WINDOW:g} s:", "run": "whole run:"}
# the small-step reference of ``accuracy``
SMALL = {"dt_contact": 5e-5, "dt_captured": 2.5e-4, "dt_settled": None, "settle_time": 0.0,
         **_OLD}
# channel groups of ``accuracy``: (label, channels, unit scale, unit)
FITTED = (("ring position", ("ring_x", "ring_y", "ring_z"), 1e3, "mm"),
          ("ring angles", ("ring_roll", "ring_pitch", "ring_yaw"), 1e3, "mrad"),
          ("legs", tuple(f"leg_{i}" for i in range(1, 7)), 1e3, "mm"),
          ("body rates", tuple(f"{v}_rate_{a}" for v in ("active", "passive") for a in "xyz"),
           1e6, "urad/s"))


def _variant(base, *, preload=None, mechanism=None, **integration):
    s = dataclasses.replace(base, integration=dataclasses.replace(base.integration,
                                                                  **integration))
    over = dict(mechanism or {})
    if preload is not None:
        over["spring_preload"] = preload
    if over:
        s = dataclasses.replace(s, mechanism=dataclasses.replace(s.mechanism, **over))
    return s


def _ledger_pct(tr) -> float:
    c = tr.channels
    e = (c["energy_kinetic"] + c["energy_stored"] + c["energy_dissipated_brake"]
         + c["energy_dissipated_dampers"] + c["energy_dissipated_contact"]
         - c["thrust_work"] - c["latch_work"])
    return 100.0 * float(np.max(np.abs(e - e[0]))) / float(c["energy_kinetic"][0])


def latch_ledger_fraction(tr) -> float:
    """The latches' own energy-ledger mismatch over the run of ``tr``, as a fraction of the
    acceptance tests' limit (5 % of the peak latch energy, + 1 mJ;
    ``tests/models/test_peripheral_behaviour.py``)."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository's tests
    from tests.models.test_peripheral_behaviour import _latch_mismatch
    m = np.max(np.abs(_latch_mismatch(tr.channels)))
    return float(m / (0.05 * tr["energy_latch"].max() + 1e-3))


def prune(repeats: int) -> None:
    base = load_scenario("reference")
    _interleaved({"prune on": _variant(base, prune=True),
                  "prune off": _variant(base, prune=False)}, repeats)


def preset(repeats: int) -> None:
    base = load_scenario("reference")
    runs = {"rigid cage, 0.5 ms": _variant(base, mechanism=LAWS["rigid"], dt_captured=5e-4,
                                           dt_settled=None),
            f"caged, {base.integration.dt_captured * 1e3:g} ms": base}
    _interleaved(runs, repeats)


def _steps_variant(base, name):
    return _variant(base, **STEPS[name])


def steps(repeats: int, names) -> None:
    import os
    base = load_scenario("reference")
    print(f"load average before: {os.getloadavg()}")
    _interleaved({k: _steps_variant(base, k) for k in names}, repeats)
    print(f"load average after: {os.getloadavg()}")


def accuracy(names, n_draws: int, duration: float) -> None:
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository's tests
    from tests.models.test_peripheral_behaviour import _draws
    base = load_scenario("reference")
    ics = [None] + list(_draws(n_draws))
    small = _variant(base, **SMALL)
    refs = [simulate(small, ic, duration=duration) for ic in ics]
    print(f"small-step reference: dt_contact {SMALL['dt_contact'] * 1e3:g} ms, captured "
          f"{SMALL['dt_captured'] * 1e3:g} ms; reference and draws 0-{n_draws - 1}, "
          f"{duration:g} s each; captures at "
          + " ".join(f"{r.events['capture']:.4f}" for r in refs) + " s")
    for name in names:
        s = _steps_variant(base, name)
        it = s.integration
        err = {(g[0], w): 0.0 for g in FITTED for w in WINDOWS}
        dcap = ledger = latch = 0.0
        steps_ref = 0
        for k, (ic, ref) in enumerate(zip(ics, refs)):
            tr = simulate(s, ic, duration=duration)
            if k == 0:
                steps_ref = int(tr.info[R.INFO_STEPS])
            for w in WINDOWS:
                n = (len(tr.t) if w == "run" else
                     int(np.searchsorted(tr.t, ref.events["capture"] + CAPTURE_WINDOW)))
                for label, chans, _, _ in FITTED:
                    e = max(float(np.max(np.abs(tr[c][:n] - ref[c][:n]))) for c in chans)
                    err[label, w] = max(err[label, w], e)
            dcap = max(dcap, abs(tr.events["capture"] - ref.events["capture"]))
            ledger = max(ledger, _ledger_pct(tr))
            latch = max(latch, latch_ledger_fraction(tr))
        print(f"{name:8s} (contact {it.dt_contact * 1e3:g} ms, captured "
              f"{it.dt_captured * 1e3:g} ms, settled {it.step_settled * 1e3:g} ms from "
              f"{it.settle_time:g} s): capture {dcap * 1e3:.3f} ms, ledger {ledger:.3f} %, "
              f"latch ledger {latch:.3f} of its limit, steps {steps_ref}", flush=True)
        for w in WINDOWS:
            print(f"    {WINDOWS[w]:28s} "
                  + ", ".join(f"{label} {err[label, w] * sc:.4g} {u}"
                              for label, _, sc, u in FITTED), flush=True)


def latches(names, n_draws: int, seeds) -> None:
    """Random captures' latch ledger (fraction of its acceptance limit) and energy ledger
    (% of the initial kinetic energy), largest over ``_draws(n_draws, seed)``, 5 s each."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository's tests
    from tests.models.test_peripheral_behaviour import _draws
    base = load_scenario("reference")
    for seed in seeds:
        ics = _draws(n_draws, seed=seed)
        for name in names:
            s = _steps_variant(base, name)
            lat, led, caps, failed = 0.0, 0.0, 0, 0
            for ic in ics:
                tr = simulate(s, ic, duration=5.0, raise_on_failure=False)
                if tr.status != 0:
                    failed += 1
                    continue
                lat = max(lat, latch_ledger_fraction(tr))
                led = max(led, _ledger_pct(tr))
                caps += int(np.isfinite(tr.events["capture"]))
            it = s.integration
            print(f"seed {seed:3d} {name:9s} (contact {it.dt_contact * 1e3:g} ms, latch "
                  f"sub-step {'none' if it.dt_latch is None else f'{it.dt_latch * 1e3:g} ms'})"
                  f": latch ledger {lat:.3f} of its limit, ledger {led:.3f} %, captures "
                  f"{caps} of {n_draws}, failed {failed}", flush=True)


def settle(pairs, n_draws: int = 8, seed: int = 18) -> None:
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository's tests
    from tests.models.test_peripheral_behaviour import _draws
    base = load_scenario("reference")
    ics = [None] + list(_draws(n_draws, seed=seed))
    refs = [simulate(_variant(base, dt_captured=2.5e-4, dt_settled=None, **_OLD), ic)
            for ic in ics]
    for st, hs in pairs:
        s = _variant(base, settle_time=st, dt_settled=hs)
        led, pos, ang, rates, steps, latch = [], 0.0, 0.0, 0.0, 0, 0.0
        for k, (ic, ref) in enumerate(zip(ics, refs)):
            tr = simulate(s, ic)
            led.append(_ledger_pct(tr))
            pos = max(pos, max(float(np.max(np.abs(tr[n] - ref[n]))) for n in FITTED[0][1]))
            ang = max(ang, max(float(np.max(np.abs(tr[n] - ref[n]))) for n in FITTED[1][1]))
            rates = max(rates, max(float(np.max(np.abs(tr[n] - ref[n])))
                                   for n in FITTED[3][1]))
            latch = max(latch, latch_ledger_fraction(tr))
            if k == 0:
                steps = int(tr.info[R.INFO_STEPS])
        detail = f" ({' '.join(f'{x:.3f}' for x in led)})" if len(led) <= 9 else \
            f" (90 % {np.quantile(led, 0.9):.3f})"
        print(f"settled {hs * 1e3:g} ms from {st:g} s after capture: ledger {max(led):.3f} %"
              f"{detail}, latch ledger {latch:.2f} of its limit, ring position "
              f"{pos * 1e3:.4f} mm, ring angles {ang * 1e3:.4f} mrad, body rates "
              f"{rates * 1e6:.1f} urad/s, steps {steps}", flush=True)


def implicit(steps_) -> None:
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository's tests
    from tests.models.test_peripheral_behaviour import _draws
    base = load_scenario("reference")
    ics = _draws(8)
    for mode in ("never", "captured"):
        for h in steps_:
            s = _variant(base, dt_captured=h, dt_settled=None, implicit_contact=mode)
            led, latch = [], 0.0
            for ic in ics:
                tr = simulate(s, ic, duration=5.0)
                led.append(_ledger_pct(tr))
                latch = max(latch, latch_ledger_fraction(tr))
            print(f"implicit_contact {mode:8s} dt_captured {h * 1e3:g} ms: ledger over 5 s "
                  f"[% of KE0], draws 0-7: " + " ".join(f"{x:.3f}" for x in led)
                  + f" (largest {max(led):.3f}); latch ledger {latch:.2f} of its limit",
                  flush=True)


def symmetry(steps_) -> None:
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository's tests
    import tests.models.test_peripheral_behaviour as tb
    sym = tb._symmetric(load_scenario("reference"))
    rv = tb._rx(tb.TURN)
    groups = (("ring", [f"ring_{a}" for a in "xyz"]),
              ("force", [f"interface_force_{a}" for a in "xyz"]),
              ("moment", [f"interface_moment_{a}" for a in "xyz"]))
    for mode in ("never", "captured"):
        for h in steps_:
            s = _variant(sym, dt_captured=h, dt_settled=None, implicit_contact=mode)
            base = simulate(s, duration=tb.SYM_DURATION, rate=100.0)
            turned = simulate(s, tb._rotated_ic(s.initial, tb.TURN), duration=tb.SYM_DURATION,
                              rate=100.0)
            out = []
            for name, names in groups:
                a = tb._vec(base, names)
                b = tb._vec(turned, names)
                out.append(f"{name} {np.max(np.abs(b - a @ rv.T)) / np.max(np.abs(a)):.2g}")
            print(f"implicit_contact {mode:8s} dt_captured {h * 1e3:g} ms: turned run's largest "
                  f"difference (of the group's largest value; the test's limit 1e-6): "
                  + ", ".join(out), flush=True)


def _interleaved(runs, repeats: int) -> None:
    cpu = {k: [] for k in runs}
    last = {}
    for s in runs.values():
        simulate(s)                      # compile or load the cache
    for _ in range(repeats):
        for k, s in runs.items():
            c0 = time.process_time()
            last[k] = simulate(s)
            cpu[k].append(time.process_time() - c0)
    for k, tr in last.items():
        print(f"{k:18s} CPU median {np.median(cpu[k]):.3f} s (min {min(cpu[k]):.3f} s), "
              f"steps {int(tr.info[R.INFO_STEPS])}, contact steps "
              f"{int(tr.info[R.INFO_SMALL_STEPS])}, ledger {_ledger_pct(tr):.3f} %, "
              f"capture {tr.events['capture']:.4f} s")


def captured(laws) -> None:
    base = load_scenario("reference")
    print(f"preset: preload {base.mechanism.spring_preload:g} N, cage "
          f"{base.mechanism.preload_stiffness:g} N/m (c_p "
          f"{base.mechanism.preload_compliance() * 1e3:.3f} mm)")
    for law in laws:
        over = LAWS[law]
        ref = simulate(_variant(base, mechanism=over, dt_captured=1.25e-4, dt_settled=None))
        print(f"{law}: 0.125-ms reference: capture {ref.events['capture']:.4f} s, ledger "
              f"{_ledger_pct(ref):.3f} %, steps {int(ref.info[R.INFO_STEPS])}")
        for h in (5e-4, 1e-3, 2e-3):
            s = _variant(base, mechanism=over, dt_captured=h, dt_settled=None)
            c0 = time.process_time()
            tr = simulate(s)
            cpu = time.process_time() - c0
            pos = max(np.max(np.abs(tr[n] - ref[n])) for n in ("ring_x", "ring_y", "ring_z"))
            ang = max(np.max(np.abs(tr[n] - ref[n]))
                      for n in ("ring_roll", "ring_pitch", "ring_yaw"))
            leg = max(np.max(np.abs(tr[f"leg_{i}"] - ref[f"leg_{i}"])) for i in range(1, 7))
            dtc = abs(tr.events["capture"] - ref.events["capture"])
            print(f"{law:5s} dt_captured {h * 1e3:.3g} ms: ring position "
                  f"{pos * 1e3:.3f} mm, ring angles {ang * 1e3:.3f} mrad, legs "
                  f"{leg * 1e3:.3f} mm, capture {dtc * 1e3:.2f} ms, ledger "
                  f"{_ledger_pct(tr):.3f} %, steps {int(tr.info[R.INFO_STEPS])}, "
                  f"CPU {cpu:.3f} s", flush=True)


def draws() -> None:
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository's tests
    from tests.models.test_peripheral_behaviour import _draws, _ledger
    base = load_scenario("reference")
    ics = _draws(8)
    for law in ("caged", "rigid"):
        for h in (5e-4, 1e-3, 2e-3):
            s = _variant(base, mechanism=LAWS[law], dt_captured=h, dt_settled=None)
            out = []
            for ic in ics:
                c = simulate(s, ic, duration=5.0).channels
                e = _ledger(c)
                out.append(100.0 * np.max(np.abs(e - e[0])) / c["energy_kinetic"][0])
            print(f"{law:5s} dt_captured {h * 1e3:.3g} ms: ledger over 5 s [% of KE0], draws "
                  f"0-7: " + " ".join(f"{x:.3f}" for x in out) + f" (largest {max(out):.3f})",
                  flush=True)


def cage() -> None:
    sc = load_scenario("reference")
    m = sc.mechanism
    mp = m.pack()
    q0 = ready_pose(m)
    kw = np.zeros(km.KW_SIZE)
    km.leg_kinematics(mp, q0, np.zeros(6), kw)
    jac = np.zeros((6, 6))
    km.leg_jacobian(kw, jac)
    g = kw[km.KW_G:km.KW_G + 9].reshape(3, 3)
    M = np.zeros((6, 6))
    M[:3, :3] = m.ring_mass * np.eye(3)
    M[3:, 3:] = g.T @ m.inertia_matrix() @ g          # A_R = I at the ready pose
    K = m.preload_stiffness * jac.T @ jac
    C = m.damping * jac.T @ jac
    w = np.sqrt(np.sort(np.linalg.eigvals(np.linalg.solve(M, K)).real))
    A = np.block([[np.zeros((6, 6)), np.eye(6)],
                  [-np.linalg.solve(M, K), -np.linalg.solve(M, C)]])
    lam = np.abs(np.linalg.eigvals(A)).max()
    h = sc.integration.dt_captured
    print(f"cage k_p {m.preload_stiffness:g} N/m, c_p {m.preload_compliance() * 1e3:.3f} mm; "
          f"undamped cage modes {np.round(w, 1)} rad/s; with the dampers max |lambda| "
          f"{lam:.1f} 1/s; dt_captured {h * 1e3:g} ms: omega_max h {w.max() * h:.3f}, "
          f"|lambda| h {lam * h:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("prune", "captured", "preset", "draws", "cage", "steps",
                                     "accuracy", "settle", "implicit", "symmetry", "latches"))
    ap.add_argument("--repeats", type=int, default=11)
    ap.add_argument("--variants", default="before,contact,settled,preset",
                    help="comma-separated step settings of steps / accuracy: " + ", ".join(STEPS))
    ap.add_argument("--draws", type=int, default=8,
                    help="random captures of accuracy and settle (besides the reference)")
    ap.add_argument("--seed", type=int, default=18, help="settle: seed of the random captures")
    ap.add_argument("--seeds", default="7,11", help="latches: comma-separated draw seeds")
    ap.add_argument("--steps", default="2e-3,2.5e-3,3e-3,3.5e-3,4e-3,5e-3",
                    help="implicit / symmetry: comma-separated captured steps [s]")
    ap.add_argument("--duration", type=float, default=20.0, help="simulated time of accuracy [s]")
    ap.add_argument("--pairs", default="2:2e-3,4:2e-3,5:2.5e-3,3:3e-3",
                    help="settle: comma-separated settle_time:dt_settled pairs [s]")
    ap.add_argument("--laws", default="caged,rigid,zero",
                    help="comma-separated leg-preload laws of the captured sweep: "
                         + ", ".join(LAWS))
    a = ap.parse_args()
    if a.what == "prune":
        prune(a.repeats)
    elif a.what == "captured":
        captured([x for x in a.laws.split(",") if x])
    elif a.what == "preset":
        preset(a.repeats)
    elif a.what == "draws":
        draws()
    elif a.what == "steps":
        steps(a.repeats, [x for x in a.variants.split(",") if x])
    elif a.what == "accuracy":
        accuracy([x for x in a.variants.split(",") if x], a.draws, a.duration)
    elif a.what == "settle":
        settle([tuple(float(v) for v in x.split(":")) for x in a.pairs.split(",") if x],
               a.draws, a.seed)
    elif a.what == "latches":
        latches([x for x in a.variants.split(",") if x], a.draws,
                [int(x) for x in a.seeds.split(",") if x])
    elif a.what in ("implicit", "symmetry"):
        hs = [float(x) for x in a.steps.split(",") if x]
        implicit(hs) if a.what == "implicit" else symmetry(hs)
    else:
        cage()


if __name__ == "__main__":
    main()
