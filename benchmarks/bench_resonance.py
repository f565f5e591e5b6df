"""Speed of the resonance-identification hot paths: oscillator kernel, Abel inversion, refinement
residual. Prints one JSON object on its last line."""
import json
import time

import numpy as np

from models.oscillator import SingleModeOscillator


def main():
    osc = SingleModeOscillator(2.0, (np.array([-1.0, 0.0, 0.0, 1.0]), np.array([-802, -2, 2, 802.0])),
                               (np.array([-10.0, 10.0]), np.array([-150.0, 150.0])))
    F = lambda t: 10 * np.sin(18 * t)  # noqa: E731
    n = 25600  # 200 periods at 128 steps: one refinement residual
    t0 = time.perf_counter()
    osc.simulate(F, t0=0.0, h=2 * np.pi / 18 / 128, n_steps=n)
    compile_s = time.perf_counter() - t0
    f = F(0.5 * 2 * np.pi / 18 / 128 * np.arange(2 * n + 1))
    pk = osc.pack()
    reps = 50
    t0 = time.perf_counter()
    for _ in range(reps):
        osc.simulate(f, t0=0.0, h=2 * np.pi / 18 / 128, n_steps=n, packed=pk)
    sim = (time.perf_counter() - t0) / reps
    from identification.resonance import analytic as A
    from identification.resonance.inversion import restoring_odd
    b = np.linspace(0.001, 0.05, 200)
    w2 = A.duffing(800.0, 1e5, 2.0).forward(b)
    t0 = time.perf_counter()
    for _ in range(20):
        restoring_odd(b, w2, 2.0)
    inv = (time.perf_counter() - t0) / 20
    print(json.dumps({"compile_s": round(compile_s, 3),
                      "oscillator_25600_steps_ms": round(1e3 * sim, 3),
                      "ns_per_rk4_step": round(1e9 * sim / n, 1),
                      "abel_restoring_odd_200_amplitudes_ms": round(1e3 * inv, 3)}))


if __name__ == "__main__":
    main()
