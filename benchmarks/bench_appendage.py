"""Full (3n+3) vs reduced (n+3) appendage formulations on the same cases.

Cases
-----
pulse
    The shipped preset ``models/presets/appendage_pulse.toml`` (2 rods, 20 s, force/moment
    pulse): the acceptance case of issue 9.
deploy
    ``models/presets/appendage_deploy.toml``: two folded rods deployed by the spin of the
    spacecraft, free hinges, both clamps engage (30 s).

Numba compiles into a private cache directory first, so ``compile_s`` is a cold compile of
every kernel; timings (kernel call) are the median and minimum of 7 runs after that, at the CLI default tolerances
(rtol 1e-8, atol 1e-10). The last stdout line is one JSON object.
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time

os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench_appendage_numba_")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

from models import appendage as ap  # noqa: E402
from recon.io import load_toml  # noqa: E402


def _time(cfg, form, repeats=7):
    """Median and minimum wall time of the kernel call (the machine is shared: the minimum is
    the least disturbed figure)."""
    walls = []
    for _ in range(repeats):
        res = ap.simulate(cfg, formulation=form)
        walls.append(res.stats["wall_s"])
    return statistics.median(walls), min(walls), res


def main() -> None:
    pulse = ap.AppendageConfig.from_dict(load_toml(ap.preset_path("appendage_pulse.toml")))
    short = ap.AppendageConfig(**{**pulse.__dict__, "duration": 0.01, "output_points": 2})
    t0 = time.perf_counter()
    ap.simulate(short, formulation="full")  # one kernel serves both formulations
    ap.simulate(short, formulation="reduced")
    compile_s = time.perf_counter() - t0
    fig: dict[str, float] = {"compile_s": round(compile_s, 2)}
    deploy = ap.AppendageConfig.from_dict(load_toml(ap.preset_path("appendage_deploy.toml")))
    for name, cfg in (("pulse", pulse), ("deploy", deploy)):
        wf, mf, rf = _time(cfg, "full")
        wr, mr, rr = _time(cfg, "reduced")
        cf, cr = rf.columns(), rr.columns()
        fig[f"{name}_full_wall_ms"] = round(1e3 * wf, 2)
        fig[f"{name}_reduced_wall_ms"] = round(1e3 * wr, 2)
        fig[f"{name}_speedup"] = round(wf / wr, 2)
        fig[f"{name}_speedup_min"] = round(mf / mr, 2)
        fig[f"{name}_full_nfev"] = rf.stats["nfev"]
        fig[f"{name}_reduced_nfev"] = rr.stats["nfev"]
        worst = max(np.max(np.abs(cf[c] - cr[c])) / np.max(np.abs(cf[c]))
                    for c in ("u_Cx", "u_Cy", "theta_C", "v_Cx", "v_Cy", "Omega"))
        fig[f"{name}_spacecraft_max_rel_diff"] = float(f"{worst:.3g}")
        fig[f"{name}_full_clamps"] = [[e.hinge, round(e.t, 4)] for e in rf.clamps]
        fig[f"{name}_reduced_clamps"] = [[e.hinge, round(e.t, 4)] for e in rr.clamps]
    print(json.dumps(fig))


if __name__ == "__main__":
    main()
