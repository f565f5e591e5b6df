"""Independent brute-force references for the contact tests (plain NumPy, no kernel code)."""
from __future__ import annotations

import numpy as np
from matplotlib.path import Path

__all__ = ["polyline_distance", "funnel_material", "line_circle_distance",
           "segment_segment_distance"]


def polyline_distance(q, pts):
    """Distance from 2-D points ``q`` (m, 2) to the polyline ``pts`` (n, 2), and the nearest
    polyline point, by the closed-form point-to-segment distance of every segment."""
    q = np.atleast_2d(q)
    a = pts[:-1][None, :, :]
    d = (pts[1:] - pts[:-1])[None, :, :]
    t = np.clip(np.sum((q[:, None, :] - a) * d, axis=2) / np.sum(d * d, axis=2), 0.0, 1.0)
    foot = a + t[:, :, None] * d
    dist = np.linalg.norm(q[:, None, :] - foot, axis=2)
    k = np.argmin(dist, axis=1)
    rows = np.arange(len(q))
    return dist[rows, k], foot[rows, k]


def funnel_material(q, pts, x_far=10.0, rho_far=10.0):
    """True where the 2-D points lie in the material behind a funnel meridian that starts on
    the plane x = pts[0, 0] and ends on the axis."""
    closing = np.array([[x_far, 0.0], [x_far, rho_far], [pts[0, 0], rho_far]])
    poly = Path(np.vstack([pts, closing]), closed=False)
    return poly.contains_points(np.atleast_2d(q))


def line_circle_distance(p1, lvec, center, axis, radius, n=20_000):
    """Minimum distance between the infinite line ``p1 + t lvec`` and a circle, from a dense
    sampling of the circle (each sample's exact distance to the line), refined by a second
    sampling around the best sample. Returns (distance, circle point, line point)."""
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    e1 = np.cross(axis, [1.0, 0.0, 0.0])
    if np.linalg.norm(e1) < 0.5:
        e1 = np.cross(axis, [0.0, 1.0, 0.0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(axis, e1)
    u = np.asarray(lvec, float) / np.linalg.norm(lvec)

    def dist(phi):
        c = center + radius * (np.cos(phi)[:, None] * e1 + np.sin(phi)[:, None] * e2)
        w = c - p1
        t = w @ u
        foot = p1 + t[:, None] * u
        return np.linalg.norm(c - foot, axis=1), c, foot

    phi = np.linspace(0.0, 2 * np.pi, n, endpoint=False)
    d, _, _ = dist(phi)
    k = np.argmin(d)
    phi2 = phi[k] + np.linspace(-2 * np.pi / n, 2 * np.pi / n, 4001)
    d2, c2, f2 = dist(phi2)
    j = np.argmin(d2)
    return d2[j], c2[j], f2[j]


def segment_segment_distance(oa, la, op, lp, n=4001):
    """Minimum distance between two segments: sample segment A densely, project each sample
    exactly (clamped) onto segment P, then refine around the best sample with a bounded scalar
    search (the distance from a point moving along a line to a segment is convex in t, so the
    bracket [t_(k-1), t_(k+1)] holds the minimum; without the refinement the sampling error
    (|L_A| / n)^2 / (8 d) reaches a few 1e-6 m for distances of a few mm).
    Returns (distance, t_a, t_p)."""
    from scipy.optimize import minimize_scalar

    t = np.linspace(0.0, 1.0, n)
    pa = oa + t[:, None] * la
    s = np.clip(((pa - op) @ lp) / (lp @ lp), 0.0, 1.0)
    pp = op + s[:, None] * lp
    d = np.linalg.norm(pa - pp, axis=1)
    k = int(np.argmin(d))

    def dist(tt):
        a = oa + tt * la
        ss = min(max(float((a - op) @ lp / (lp @ lp)), 0.0), 1.0)
        return float(np.linalg.norm(a - (op + ss * lp)))

    lo, hi = t[max(k - 1, 0)], t[min(k + 1, n - 1)]
    res = minimize_scalar(dist, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12})
    if res.fun < d[k]:
        tk = float(res.x)
        a = oa + tk * la
        sk = min(max(float((a - op) @ lp / (lp @ lp)), 0.0), 1.0)
        return float(res.fun), tk, sk
    return d[k], t[k], s[k]
