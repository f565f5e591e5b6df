"""
Simulate a probe-cone docking and read its energy ledger
========================================================

The shipped reference scenario (``models/probe_cone/presets/reference.toml``, every value
SI, each marked published or illustrative) brings a Soyuz-class vehicle to a Salyut-class
station at 0.25 m/s with lateral and angular misalignments. We simulate 6 s of it, the same
run as::

    dockrecon simulate docking models/probe_cone/presets/reference.toml \\
        --output traj.parquet --events events.json --duration 6

and read the events, the probe stroke and the energy ledger: the kinetic energy of the
relative motion goes into the axial absorber's spring and brake, the dampers, the
hysteresis of the springs and the contacts; the ledger residual (initial kinetic energy
plus thrust work minus everything accounted for) measures the integration error.

**Run time**: about 1 s once the kernels are compiled; the first run on a machine compiles
them (about 30 s on 2 cores) and caches the result.
"""

# %%
import time

import matplotlib.pyplot as plt
import numpy as np

from models.probe_cone import load_preset, simulate

t0 = time.perf_counter()
scenario = load_preset("reference")
traj = simulate(scenario, duration=6.0)
elapsed = time.perf_counter() - t0
print(f"simulated 6 s in {elapsed:.1f} s ({traj.steps} RK4 steps, "
      f"{traj.small_steps} of them with the contact step)")

# %%
# Events
# ------
# Event times [s] from the start plane; ``None`` for an event that did not happen.
for ev in traj.event_list():
    print(f"{ev['name']:>20s}  {ev['t']:.3f} s")
print("captured:", traj.captured)

# %%
# The energy ledger
# -----------------
# Every channel is in joules. The dissipated parts only grow; the stored part is what the
# springs and contacts would give back.
names = ["energy_kinetic", "energy_stored", "energy_dissipated_brake",
         "energy_dissipated_dampers", "energy_dissipated_hysteresis",
         "energy_dissipated_contact", "thrust_work"]
for n in names:
    print(f"{n:>30s}  start {traj[n][0]:9.3f} J   end {traj[n][-1]:9.3f} J")
# %%
# Not all of the initial kinetic energy can be absorbed: the total momentum is conserved, so
# after capture the two vehicles keep moving together with the kinetic energy
# :math:`|\mathbf P|^2 / 2(m_1 + m_2)` of their common motion.
P = np.array([traj[f"momentum_{a}"][-1] for a in "xyz"])
m_total = scenario.active.mass + scenario.passive.mass
print(f"kinetic energy of the common motion: {P @ P / (2 * m_total):.1f} J "
      f"(total kinetic energy at the end {traj['energy_kinetic'][-1]:.1f} J)")

res = traj.ledger_residual()
print(f"ledger residual: largest |{np.max(np.abs(res)):.3g}| J "
      f"of {traj['energy_kinetic'][0]:.3g} J initial kinetic energy")

# %%
fig, (ax1, ax2) = plt.subplots(2, 1, sharex=True, figsize=(7, 6))
ax1.plot(traj.t, traj["stroke"] * 1e3)
ax1.set_ylabel("probe stroke [mm]")
for n in names[:-1]:
    ax2.plot(traj.t, traj[n], label=n.replace("energy_", ""))
ax2.set_xlabel("t [s]")
ax2.set_ylabel("energy [J]")
ax2.legend(fontsize=8)
fig.tight_layout()
