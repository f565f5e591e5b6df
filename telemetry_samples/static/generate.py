"""Generate the synthetic static (quasi-static load-deflection) test records.

Run from the repository root: ``python telemetry_samples/static/generate.py``. Seeded; running
it again reproduces every file byte for byte.

Records
-------
``lateral_double_loop.csv``
    Lateral absorber of a probe-cone unit (rod + two-stage spring mechanism, digest A.1):
    lateral head displacement ``q[mm]`` against lateral force ``force[N]``. Constant-parameter
    element with backlash (2 mm / 1.5 mm), two-stage branches on both sides ("double loop"),
    different tables for positive and negative deflection. Test programme: symmetric cycles
    of growing amplitude (20, 40 mm, then beyond the 60 mm working range to 66 mm) and two
    partial unload-reload loops, at a constant 0.25 mm per sample.
``axial_brake_two_slips.csv``
    Axial transmission driving the friction brake (digest A.10): input-shaft angle
    ``q[rad]`` against moment ``force[N*m]``. Loaded past the slip level twice (the brake
    slips 0.8 rad, then 0.5 rad more: approach), then driven back through the shifted
    negative range until it slips once in reverse (0.2 rad: retraction), and returned, at
    a constant 2 mrad per sample. The truth records the slips and the final cumulative shift.

Each record is a continuous test sampled, as a rig's logger samples it: the programme is
driven at a constant rate through its turning points, the samples are taken at a fixed
interval from a start that is not the programme's, and the turning points fall between
samples (:func:`continuous_test`). The force at a sample is the element's along the
continuous history (each turning point given with both rates, so the transition segment
starts where the motion turned), not along the samples.

Noise: zero-mean Gaussian on the force channel only, standard deviation ``NOISE[name]``
(15 N lateral, 1.5 N m axial: load-cell noise of a static rig); the deflection channel is
taken as exact (an encoder / LVDT whose error is small against the force noise). The truth
(``<name>.truth.json``: ``{"parameters": {NAME: value}, "element": ..., "noise": ...}``, names
as in :func:`identification.hysteresis_fit.parameter_values`) and the start tables for the
fit (``<name>.start.toml``: every value of the truth perturbed by a seeded 5-12 %, then
repaired to a valid table) are written beside each record.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from identification.hysteresis_fit import (element_from_parameters,  # noqa: E402
                                           parameter_values)
from models.hysteresis import element_from_dict, pack_elements  # noqa: E402
from identification.provenance import versions  # noqa: E402
from recon.io import write_json, write_table  # noqa: E402

SEED = 20260521

LATERAL = {
    "name": "lateral_absorber",
    "variant": "constant",
    "dof": "linear",
    "positive": {
        "k_max": 250000.0,
        "forward": {"q": [0.002, 0.004, 0.030, 0.045, 0.060],
                    "Q": [0.0, 30.0, 550.0, 1450.0, 2800.0]},
        "backward": {"q": [0.002, 0.004, 0.025, 0.052, 0.060],
                     "Q": [0.0, 30.0, 282.0, 800.0, 2800.0]},
    },
    "negative": {
        "k_max": 240000.0,
        "forward": {"q": [-0.0015, -0.0035, -0.028, -0.044, -0.058],
                    "Q": [0.0, -28.0, -493.5, -1373.5, -2563.5]},
        "backward": {"q": [-0.0015, -0.0035, -0.024, -0.050, -0.058],
                     "Q": [0.0, -28.0, -253.5, -643.5, -2563.5]},
    },
}

BRAKE = {
    "name": "axial_brake_transmission",
    "variant": "friction_brake",
    "dof": "angular",
    "positive": {
        "k3": 200.0,
        "forward": {"q": [0.05, 0.15, 1.5, 3.0], "Q": [0.0, 2.0, 56.0, 146.0]},
        "backward": {"q": [0.05, 0.15, 2.6, 3.0], "Q": [0.0, 2.0, 66.0, 146.0]},
    },
    "negative": {
        "k3": 150.0,
        "forward": {"q": [-0.05, -0.15, -1.2, -2.0], "Q": [0.0, -2.0, -33.5, -69.5]},
        "backward": {"q": [-0.05, -0.15, -1.7, -2.0], "Q": [0.0, -2.0, -24.5, -69.5]},
    },
}

NOISE = {"lateral_double_loop": 15.0, "axial_brake_two_slips": 1.5}
UNITS = {"lateral_double_loop": ("mm", "N", 1e-3), "axial_brake_two_slips": ("rad", "N*m", 1.0)}


def continuous_test(peaks, step, start=0.4):
    """A constant-rate programme from 0 through ``peaks`` [m or rad], moving ``step`` per
    sample interval and starting ``start`` intervals after the first sample, sampled at the
    interval up to its end.

    Returns ``(q_path, rate_path, sample)``: the points where the element is stepped (every
    sample, and each turning point twice, arriving with the old rate and leaving with the
    new) with their rate signs, and the index of each sample among them.
    """
    turns = np.r_[0.0, np.asarray(peaks, dtype=float)]
    times = start + np.r_[0.0, np.cumsum(np.abs(np.diff(turns)) / step)]
    n = int(np.floor(times[-1])) + 1
    q_path, rate, sample = [], [], []
    k = 0
    while k < n and k <= times[0]:           # at rest before the programme starts
        sample.append(len(q_path))
        q_path.append(0.0)
        rate.append(0.0)
        k += 1
    for i in range(turns.size - 1):
        d = float(np.sign(turns[i + 1] - turns[i]))
        q_path.append(turns[i])              # leaving the turning point with the new rate
        rate.append(d)
        while k < n and k < times[i + 1]:
            sample.append(len(q_path))
            q_path.append(float(np.interp(k, times, turns)))
            rate.append(d)
            k += 1
        q_path.append(turns[i + 1])          # arriving with the old rate
        rate.append(d)
        if k < n and k == times[i + 1]:
            sample.append(len(q_path) - 1)
            k += 1
    return np.asarray(q_path), np.asarray(rate), np.asarray(sample)


# Turning points that are not whole numbers of steps from each other: with the programme's
# start between two samples they fall between samples
PROGRAMMES = {
    "lateral_double_loop": (LATERAL, continuous_test(
        [0.0201, -0.0198, 0.0402, -0.0397, 0.0661, 0.0303, 0.0552, -0.0659, -0.0322, -0.0501,
         0.0], 0.25e-3)),
    "axial_brake_two_slips": (BRAKE, continuous_test([3.8013, 1.5007, 4.3011, 1.2995, -0.9009,
                                                      1.3], 2e-3)),
}


def perturbed_start(element, rng):
    """A start table: every breakpoint, node force and k3 of the truth scaled by
    1 + U(+-5..12 %); drawn again until the table is valid."""
    values = parameter_values(element)
    names = [k for k in values if k.split("_", 1)[1][0] in "qQ" or k.endswith("_k3")]
    for _ in range(500):
        trial = dict(values)
        for name in names:
            f = rng.uniform(0.05, 0.12) * rng.choice([-1.0, 1.0])
            trial[name] = values[name] * (1.0 + f)
        try:
            return element_from_parameters(trial, element)
        except Exception:  # an invalid perturbation: draw again
            continue
    raise RuntimeError("no valid perturbed start table found")


def slips(element, q_path, rate):
    """Number of brake slips and the final cumulative shift along the continuous programme."""
    from models._kernels import hysteresis as K

    p = pack_elements([element])
    ist, fst = p.fresh_state()
    for k in range(q_path.size):
        K.hyst_update(p.table, 0, ist, 0, fst, 0, q_path[k], rate[k], k)
    return int(ist[K.I_NSLIP]), float(fst[K.S_SHIFT])


def rounded(d):
    """Start tables as a person would type them: 4 significant digits (tolerance dropped),
    the last backward force recomputed so that assumption 5 still holds exactly."""
    def r(v):
        return float(f"{v:.4g}") + 0.0

    d = {k: v for k, v in d.items() if k != "tolerance"}
    for side in ("positive", "negative"):
        sd = d[side]
        kk = "k3" if "k3" in sd else "k_max"
        sd[kk] = r(sd[kk])
        for br in ("forward", "backward"):
            sd[br] = {"q": [r(v) for v in sd[br]["q"]], "Q": [r(v) for v in sd[br]["Q"]]}
        qb, Qb = sd["backward"]["q"], sd["backward"]["Q"]
        Qb[-2] = float(f"{Qb[-1] - sd[kk] * (qb[-1] - qb[-2]):.12g}") + 0.0
    return d


def toml_text(d, header):
    import tomli_w

    return header + tomli_w.dumps(d)


def main() -> None:
    rng = np.random.default_rng(SEED)
    for name, (spec, (q_path, rate, sample)) in PROGRAMMES.items():
        element = element_from_dict(spec)
        force = element.trace(q_path, qdot=rate)[sample]
        q = q_path[sample]
        sigma = NOISE[name]
        noisy = force + rng.normal(0.0, sigma, q.size)
        qunit, funit, qscale = UNITS[name]
        write_table({"q": q / qscale, "force": noisy}, HERE / f"{name}.csv",
                    {"q": qunit, "force": funit})
        truth = {
            "parameters": parameter_values(element),
            "element": element.to_dict(),
            "noise": {"force_sigma": sigma, "unit": element.units[1],
                      "q_sigma": 0.0, "distribution": "normal, independent"},
            "seed": SEED,
            "generator": "telemetry_samples/static/generate.py",
            "versions": {k: v for k, v in versions().items() if k in ("numpy", "dockrecon")},
        }
        truth["slips"], truth["final_shift"] = slips(element, q_path, rate)
        write_json(truth, HERE / f"{name}.truth.json")
        start = perturbed_start(element, rng)
        sd = rounded(start.to_dict())
        sd["name"] = element.name
        element_from_dict(sd)  # still valid after rounding
        head = (f"# Start tables for `dockrecon identify hysteresis {name}.csv`.\n"
                f"# The truth perturbed by 5-12 % (seed {SEED}); SI units: q "
                f"[{element.units[0]}], Q [{element.units[1]}], k [{element.units[2]}].\n")
        (HERE / f"{name}.start.toml").write_text(toml_text(sd, head))
        print(f"{name}: {q.size} samples, noise {sigma} {element.units[1]}")


if __name__ == "__main__":
    main()
