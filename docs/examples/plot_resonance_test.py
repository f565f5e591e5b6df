"""
Nonlinear stiffness and damping from a resonance test
=====================================================

``telemetry_samples/resonance/dead_zone.csv`` is a resonance test of one mode (reduced mass
2 kg) with a dead-zone (backlash) restoring force and linear damping, excited at a constant
frequency :math:`\\nu` = 35 rad/s with a slowly increasing force amplitude. From the first
harmonic of the response window by window we get the amplitude dependence of the
equivalent stiffness and damping, and the Abel-type inversions of Plakhtienko
(:doc:`/theory/resonance`) turn it into the restoring force :math:`\\varphi(x)` and the
damping force :math:`H(v)`, with 68 / 95 % bands. This is::

    dockrecon identify resonance telemetry_samples/resonance/dead_zone.csv \\
        --frequency 35 --mass 2 --refine never --output out/dead_zone.json

The refinement (simulating the oscillator against the record) is left out here to keep the
example short; ``--refine auto`` (the default) runs it.

**Run time**: about 10 s on 2 cores.
"""

# %%
import json
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import telemetry_samples
from identification.resonance.laws import damping_law, restoring_law
from recon.io import read_table
from identification.resonance.pipeline import identify_resonance

res = Path(telemetry_samples.__file__).parent / "resonance"
frame, file_units = read_table(res / "dead_zone.csv", {"t": "s", "x": "m", "force": "N"},
                               required=("t", "x", "force"))
print(f"{len(frame)} samples; file units {file_units}")

t0 = time.perf_counter()
out = identify_resonance(frame["t"].to_numpy(), frame["x"].to_numpy(),
                         frame["force"].to_numpy(), nu=35.0, mu=2.0, refine="never")
print(f"identified in {time.perf_counter() - t0:.1f} s; "
      f"{len(out.amplitude_sequence['b'])} amplitude nodes, {len(out.jumps)} jumps")

# %%
# Against the laws the record was generated with
truth = json.loads((res / "dead_zone.truth.json").read_text())["parameters"]
phi, H = restoring_law(truth), damping_law(truth)
rf, dm = out.restoring_force, out.damping
x, v = np.asarray(rf["x"]), np.asarray(dm["v"])
big = np.abs(phi(x)) > 0.1 * np.max(np.abs(phi(x)))
err = np.max(np.abs(np.asarray(rf["f"])[big] - phi(x)[big]) / np.abs(phi(x)[big]))
print(f"restoring force: largest relative error {100 * err:.1f} % where |phi| > 10 % of "
      "its maximum")

fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 4))
a1.fill_between(x, rf["lo95"], rf["hi95"], alpha=0.3, label="95 % band")
a1.plot(x, rf["f"], label="identified")
a1.plot(x, phi(x), "k--", label="truth")
a1.set_xlabel("x [m]")
a1.set_ylabel("restoring force [N]")
a1.legend()
a2.fill_between(v, dm["lo95"], dm["hi95"], alpha=0.3)
a2.plot(v, dm["H"])
a2.plot(v, H(v), "k--")
a2.set_xlabel("v [m/s]")
a2.set_ylabel("damping force [N]")
fig.tight_layout()
