"""Contact detectors and force law: evaluations per second per primitive pair (single core).

Each pair is timed inside a compiled loop over 200 000 pre-generated query poses near contact
(about half of them touching), the way a unit kernel calls it from its RK4 loop; the result is
accumulated so nothing is optimized away. ``compile_s`` is the cold compile time of the kernels
(a private numba cache directory is used, so the on-disk cache does not hide it). Prints one
JSON object on its last line.
"""
from __future__ import annotations

import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench_contact_")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from numba import njit  # noqa: E402

from models._kernels import contact as K  # noqa: E402

N = 200_000
REPEAT = 5


@njit(cache=False)
def _loop_revolution(q, rs, mer, out):
    acc = 0.0
    for i in range(q.shape[0]):
        f = 0
        while True:
            res = K.sphere_vs_revolution(q[i, 0], q[i, 1], q[i, 2], rs, mer, 1.0, f)
            if res[0] == K.NONE:
                break
            acc += res[1]
            f = res[8] + 1
    out[0] = acc


@njit(cache=False)
def _loop_plane(q, rs, plane, out):
    acc = 0.0
    for i in range(q.shape[0]):
        acc += K.sphere_vs_plane(q[i, 0], q[i, 1], q[i, 2], rs, plane, 1.0)[1]
    out[0] = acc


@njit(cache=False)
def _loop_seg_circle(s, circ, out):
    acc = 0.0
    for i in range(s.shape[0]):
        acc += K.segment_vs_circle(s[i, 0], s[i, 1], s[i, 2], s[i, 3], s[i, 4], s[i, 5], circ,
                                   1.0)[1]
    out[0] = acc


@njit(cache=False)
def _loop_seg_seg(s, p, out):
    acc = 0.0
    for i in range(s.shape[0]):
        acc += K.segment_vs_segment(s[i, 0], s[i, 1], s[i, 2], s[i, 3], s[i, 4], s[i, 5],
                                    p[0], p[1], p[2], p[3], p[4], p[5], 1.0)[1]
    out[0] = acc


@njit(cache=False)
def _loop_stop_point(q, stop, out):
    acc = 0.0
    for i in range(q.shape[0]):
        acc += K.point_vs_stop45(q[i, 0], q[i, 1], q[i, 2], stop, 1.0)[1]
    out[0] = acc


@njit(cache=False)
def _loop_stop_crest(s, stop, out):
    acc = 0.0
    for i in range(s.shape[0]):
        acc += K.segment_vs_stop45_crest(s[i, 0], s[i, 1], s[i, 2], s[i, 3], s[i, 4], s[i, 5],
                                         stop, 1.0)[1]
    out[0] = acc


@njit(cache=False)
def _loop_slot(s, slot, out):
    acc = 0.0
    for i in range(s.shape[0]):
        f = 0
        while True:
            res = K.segment_vs_slot(s[i, 0], s[i, 1], s[i, 2], s[i, 3], s[i, 4], s[i, 5], slot,
                                    1.0, f)
            if res[0] == K.NONE:
                break
            acc += res[1]
            f = res[8] + 1
    out[0] = acc


@njit(cache=False)
def _loop_fan(poses, rots, fan, circ, exhaustive, out):
    acc = 0.0
    for i in range(poses.shape[0]):
        acc += K.fan_vs_circle(fan, poses[i], rots[i], circ, 1.0, exhaustive)[1]
    out[0] = acc


@njit(cache=False)
def _loop_wrench(q, tw_a, tw_p, law, out):
    acc = 0.0
    for i in range(q.shape[0]):
        r = K.contact_wrench(1e-3, 0.6, 0.8, 0.0, q[i, 0], q[i, 1], q[i, 2], tw_a, tw_p, law)
        acc += r[2] + r[5] + r[8]
    out[0] = acc


def _rate(fun, args, n):
    out = np.zeros(1)
    fun(*args, out)                      # warm (already compiled)
    best = math.inf
    for _ in range(REPEAT):
        t0 = time.perf_counter()
        fun(*args, out)
        best = min(best, time.perf_counter() - t0)
    return n / best


def main() -> None:
    from models.contact import (Circle, GeneratorFan, PlaneFragment, Slot, StopSurface45,
                                SurfaceOfRevolution)
    rng = np.random.default_rng(0)
    a60, a35 = math.radians(60), math.radians(35)
    x1 = 0.15 / math.tan(a60)
    x2 = x1 + 0.15 / math.tan(a35)
    funnel = SurfaceOfRevolution(((0.0, 1.0), (0.0, 0.5), (x1, 0.35), (x2, 0.2), (x2 + 0.3, 0.2),
                                  (x2 + 0.3, 0.0))).packed
    phi = rng.uniform(-math.pi, math.pi, N)
    rho = rng.uniform(0.0, 0.45, N)
    q = np.ascontiguousarray(np.stack([rng.uniform(-0.05, x2 + 0.3, N), rho * np.cos(phi),
                                       rho * np.sin(phi)], axis=1))
    seg = np.ascontiguousarray(np.hstack([
        np.stack([np.full(N, -0.05), 0.41 * np.cos(phi), 0.41 * np.sin(phi)], axis=1)
        + rng.normal(scale=0.005, size=(N, 3)),
        np.tile([0.1, 0.0, 0.0], (N, 1)) + rng.normal(scale=0.02, size=(N, 3))]))
    circ = Circle((0, 0, 0), (1, 0, 0), 0.4).packed
    plane = PlaneFragment(0.0, 0.0, 0.5).packed
    passive_seg = np.array([0.0, 0.3, -0.3, 0.0, 0.0, 0.6])
    stop = StopSurface45(0.5, 0.0, -1, -0.05, 0.05, 0.05, 0.45).packed
    slot = Slot((0.3, 0, 0), (1, 0, 0), (0, 0, 1), 0.01, 0.02, 0.05, math.radians(30)).packed
    slot_seg = np.ascontiguousarray(np.hstack([
        np.stack([0.3 + rng.uniform(-0.005, 0.06, N), np.full(N, -0.02),
                  rng.uniform(-0.03, 0.03, N)], axis=1), np.tile([0.0, 0.04, 0.0], (N, 1))]))
    fan = GeneratorFan.petal(n_bits=8, start_radius=0.42, start_x=-0.02, apex_x=0.9,
                             phi_min=-math.radians(50), phi_max=math.radians(50),
                             length_max=0.25, length_min=0.05).packed
    nf = N // 10
    poses = np.ascontiguousarray(np.stack([rng.uniform(-0.2, 0.05, nf),
                                           *rng.uniform(-0.08, 0.08, (2, nf))], axis=1))
    rots = np.empty((nf, 3, 3))
    for i in range(nf):
        ang = rng.uniform(-1, 1, 3) * math.radians(8)
        cx, sx, cy, sy, cz, sz = (math.cos(ang[0]), math.sin(ang[0]), math.cos(ang[1]),
                                  math.sin(ang[1]), math.cos(ang[2]), math.sin(ang[2]))
        rots[i] = (np.array([[1, 0, 0], [0, cx, sx], [0, -sx, cx]])
                   @ np.array([[cy, 0, -sy], [0, 1, 0], [sy, 0, cy]])
                   @ np.array([[cz, sz, 0], [-sz, cz, 0], [0, 0, 1]]))
    law = np.array([1e7, 1e3, 0.3, 1e-3, 0.0])
    tw_a = rng.normal(size=9)
    tw_p = rng.normal(size=9)

    cases = {
        "sphere_vs_revolution": (_loop_revolution, (q, 0.06, funnel), N),
        "sphere_vs_plane": (_loop_plane, (q, 0.06, plane), N),
        "segment_vs_circle": (_loop_seg_circle, (seg, circ), N),
        "segment_vs_segment": (_loop_seg_seg, (seg, passive_seg), N),
        "point_vs_stop45": (_loop_stop_point, (q, stop), N),
        "segment_vs_stop45_crest": (_loop_stop_crest, (seg, stop), N),
        "segment_vs_slot": (_loop_slot, (slot_seg, slot), N),
        "fan_vs_circle_dichotomy": (_loop_fan, (poses, rots, fan, circ, False), nf),
        "fan_vs_circle_exhaustive": (_loop_fan, (poses, rots, fan, circ, True), nf),
        "contact_wrench": (_loop_wrench, (q, tw_a, tw_p, law), N),
    }
    t0 = time.perf_counter()
    for fun, args, _ in cases.values():
        fun(*args, np.zeros(1))
    compile_s = time.perf_counter() - t0
    figures: dict[str, float] = {"compile_s": round(compile_s, 2)}
    for name, (fun, args, n) in cases.items():
        figures[f"{name}_per_s"] = float(f"{_rate(fun, args, n):.3g}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
