"""Refinement beyond the first approximation: the model of the oscillator fitted to the whole
record, and the fit (:func:`refine_resonance`).

The Abel inversions invert the *first approximation* of the periodic response; their bias
(higher harmonics, offset-stiffness coupling, the law below the first amplitude) is of second
order in the nonlinearity. The refinement removes it by simulating the single-mode oscillator

.. math::

    \\mu\\ddot x + H(\\dot x) + \\varphi(x) = F(t)

(:class:`models.oscillator.SingleModeOscillator`, numba RK4) driven by the *measured* force and
fitting the simulated displacement to the measured one over the analysed part of the record
(after the hold time), starting from the Abel estimate (:func:`refinement_model`).

Model ([impl]):

* :math:`\\varphi(x) = F_0\\,\\mathrm{sign}\\,x + p(x)`, ``p`` piecewise linear on
  ``2 n_x`` equal segments over ``[-1.02 b_max, 1.02 b_max]`` with ``p(0) = 0``; the node
  values are free (monotonicity is not imposed: a slope parameterisation with bounds was
  tried and converged far slower); ``F0`` (a preload) starts from the intercept of the Abel
  estimate's first measured points;
* :math:`H(v) = F_c\\,\\mathrm{sign}\\,v + q(v)`, ``q`` odd, piecewise linear on ``n_v``
  equal segments over ``[0, 1.05 v_max]``, ``F_c`` (Coulomb) likewise;
* the initial displacement and velocity are fitted too.

Between samples the force is a cubic spline of the record; the oscillator is integrated with
``substeps`` RK4 steps per sample interval.

:func:`curve_change` measures how much the refinement changed a characteristic (largest
relative change where the refined value exceeds 10 % of its maximum).
"""
from __future__ import annotations


import numpy as np

from models.oscillator import SingleModeOscillator, half_step_times

from identification.engines import laplace, least_squares
from identification.ground_test import box_space, reweight
from identification.problem import ResidualProblem
from identification.result import Result, summarize

from .own import ResonanceCurves

__all__ = ["RefinementModel", "refinement_model", "restoring_force", "damping_force",
           "curve_change", "refine_resonance"]


def restoring_force(x, nodes: np.ndarray, values: np.ndarray, preload: float) -> np.ndarray:
    """Refined restoring force :math:`\\varphi(x) = F_0 \\mathrm{sign}\\,x + p(x)` [N] at
    ``x`` [m]: ``p`` piecewise linear through ``(nodes, values)``."""
    x = np.asarray(x, float)
    return np.interp(x, nodes, values) + preload * np.sign(x)


def damping_force(v, nodes: np.ndarray, values: np.ndarray, coulomb: float) -> np.ndarray:
    """Refined damping force :math:`H(v) = F_c \\mathrm{sign}\\,v + q(v)` [N] at ``v``
    [m/s]: ``q`` odd, piecewise linear through ``(nodes >= 0, values)``."""
    v = np.asarray(v, float)
    return np.sign(v) * (np.interp(np.abs(v), nodes, values) + coulomb * (v != 0))


def curve_change(new: np.ndarray, old: np.ndarray) -> float:
    """Largest relative change ``|new - old| / |new|`` where ``|new|`` exceeds 10 % of its
    maximum [-]."""
    new, old = np.asarray(new, float), np.asarray(old, float)
    m = np.abs(new) > 0.1 * np.abs(new).max()
    return float(np.max(np.abs(new - old)[m] / np.abs(new[m])))


class RefinementModel:
    """Displacement residual of the simulated oscillator against a record (module docstring).

    A parameter vector is ``[x0, v0, F0, phi at the nodes except x = 0 (2 n_x), Fc, q at the
    nodes v > 0 (n_v)]`` [m, m/s, N ...] (:attr:`names`, :attr:`units`); :attr:`p0` is the
    start from the Abel estimate and :attr:`lower`, :attr:`upper` the boxes around it
    (:func:`refinement_model`). Calling the model with ``(n, len(names))`` returns the
    residuals ``(n, n_residuals)``: simulated minus measured displacement of the fitted
    samples over the std of x [-], followed by the smoothing rows of the damping nodes.
    """

    def __init__(self, t, x, force, mu, hold, xn, vn, substeps, decimate, smooth=0.0):
        from scipy.interpolate import CubicSpline

        self.t, self.x, self.mu = t, x, mu
        dt = np.diff(t)
        if np.ptp(dt) > 1e-4 * dt.mean():  # CSV rounding of t is far below this
            raise ValueError("refinement needs uniformly sampled records")
        self.h = dt.mean() / substeps
        self.substeps = substeps
        self.n_steps = (len(t) - 1) * substeps
        self.force = CubicSpline(t, force)(half_step_times(t[0], self.h, self.n_steps))
        self.fit = t >= t[0] + hold
        self.fit[np.arange(len(t)) % decimate != 0] = False
        self.xn, self.vn = xn, vn
        self.nx = len(xn) - 1
        self.nv = len(vn) - 1
        self.scale = np.std(x[self.fit])
        self.smooth = smooth
        self._G = None

    # parameter vector: [x0, v0, F0, phi at the nodes except x = 0 (nx), Fc, q at v > 0 (nv)]
    def tables(self, p):
        mid = self.nx // 2
        F0 = p[2]
        phi = np.r_[p[3:3 + mid], 0.0, p[3 + mid:3 + self.nx]]
        Fc = p[3 + self.nx]
        qv = np.r_[0.0, p[4 + self.nx:]]
        return F0, phi, Fc, qv

    def oscillator(self, p):
        F0, phi, Fc, qv = self.tables(p)
        xn = self.xn
        mid = self.nx // 2
        xt = np.r_[xn[:mid + 1], xn[mid:]]
        ft = np.r_[phi[:mid + 1] - F0, phi[mid:] + F0]
        vt = np.r_[-self.vn[::-1], self.vn[1:]] if Fc == 0 else \
            np.r_[-self.vn[::-1], self.vn]
        ht = np.r_[-(qv[::-1] + Fc), qv[1:] + Fc] if Fc == 0 else \
            np.r_[-(qv[::-1] + Fc), qv + Fc]
        return SingleModeOscillator(self.mu, (xt, ft), (vt, ht))

    def simulate(self, p):
        osc = self.oscillator(p)
        _, xs, _ = osc.simulate(self.force, t0=self.t[0], h=self.h, n_steps=self.n_steps,
                                x0=p[0], v0=p[1], stride=self.substeps)
        return xs

    def _rows(self, p):
        """Abscissae and values of the two tables of ``p``, the jump rows at 0 always present
        (a zero jump is a zero-length segment): the same functions as :meth:`oscillator`'s,
        with row values linear in ``p``."""
        F0, phi, Fc, qv = self.tables(p)
        xn, mid = self.xn, self.nx // 2
        xt = np.r_[xn[:mid + 1], xn[mid:]]
        ft = np.r_[phi[:mid + 1] - F0, phi[mid:] + F0]
        vt = np.r_[-self.vn[::-1], self.vn]
        ht = np.r_[-(qv[::-1] + Fc), qv + Fc]
        return xt, ft, vt, ht

    def jacobian(self, p):
        """Exact derivative of :meth:`residual` with respect to ``p``, ``(n_residuals,
        len(p))``: the displacement rows from the sensitivities of the RK4 map
        (:func:`models._kernels.oscillator.simulate_single_sensitivity`, one run instead of
        the ``2 len(p)`` of central differences), the smoothing rows in closed form. None when
        the simulation fails."""
        from models._kernels import oscillator as K
        from models.oscillator import pack_table

        p = np.asarray(p, float)
        if self._G is None:  # d(x0, v0, table rows)/dp: the rows are linear in p
            P = p.size
            base = np.concatenate(self._rows(np.zeros(P))[1::2])
            G = np.zeros((2 + base.size, P))
            G[0, 0] = G[1, 1] = 1.0
            for j in range(2, P):
                e = np.zeros(P)
                e[j] = 1.0
                G[2:, j] = np.concatenate(self._rows(e)[1::2]) - base
            self._G = G
        xt, ft, vt, ht = self._rows(p)
        phi, hv = pack_table(xt, ft), pack_table(vt, ht)
        dx = pack_table(np.array([-1.0, 1.0]), np.zeros(2))
        if phi.shape[0] != xt.size or hv.shape[0] != vt.size:
            raise ValueError("refinement tables changed length when packed")
        n_out = self.n_steps // self.substeps + 1
        xs = np.empty(n_out)
        S = np.empty((n_out, 2 + phi.shape[0] + hv.shape[0]))
        status = K.simulate_single_sensitivity(phi, hv, dx, np.array([1.0 / self.mu]),
                                               float(p[0]), float(p[1]), float(self.h),
                                               self.force, int(self.substeps), xs, S)
        if status != K.STATUS_OK:
            return None
        J = S[self.fit] @ self._G / self.scale
        if self.smooth > 0:
            q = np.r_[0.0, p[4 + self.nx:]]
            D2 = np.diff(np.eye(q.size), 2, axis=0)
            m = max(np.abs(q).max(), 1e-300)
            dq = D2 / m
            if m > 1e-300:
                js = int(np.argmax(np.abs(q)))
                dq[:, js] -= (D2 @ q) * np.sign(q[js]) / m ** 2
            Js = np.zeros((q.size - 2, p.size))
            Js[:, 4 + self.nx:] = self.smooth * dq[:, 1:]
            J = np.r_[J, Js]
        return J

    @property
    def n_residuals(self) -> int:
        return int(self.fit.sum()) + (self.nv - 1 if self.smooth > 0 else 0)

    @property
    def names(self) -> tuple[str, ...]:
        return (("x0", "v0", "preload") + tuple(f"restoring_{k:02d}" for k in range(self.nx))
                + ("coulomb",) + tuple(f"damping_{k:02d}" for k in range(1, self.nv + 1)))

    @property
    def units(self) -> tuple[str, ...]:
        return ("m", "m/s") + ("N",) * (self.nx + 2 + self.nv)

    def __call__(self, params: np.ndarray) -> np.ndarray:
        params = np.atleast_2d(np.asarray(params, float))
        return np.array([self.residual(p) for p in params]).reshape(params.shape[0], -1)

    def residual(self, p):
        """Residuals of one parameter vector (a failed simulation: 1e3 each)."""
        try:
            xs = self.simulate(p)
        except FloatingPointError:
            return np.full(self.n_residuals, 1e3)
        r = (xs[self.fit] - self.x[self.fit]) / self.scale
        if self.smooth > 0:
            # second differences of H at the nodes, relative to its largest value: low
            # velocities are seen only in the few small-amplitude windows, and without this
            # the nodes there alternate by a few % (dead zone: 3.8 % at 0.17 v_max)
            q = np.r_[0.0, p[4 + self.nx:]]
            r = np.r_[r, self.smooth * np.diff(q, 2) / max(np.abs(q).max(), 1e-300)]
        return r


def _intercept(ch) -> float:
    """Positive intercept at 0 of the least-squares line through the measured points in
    ``[x_first, 2 x_first]`` (at least 3): a preload or Coulomb force; else 0."""
    sel = (ch.x >= ch.x_first) & (ch.x <= 2 * ch.x_first)
    if sel.sum() < 3:
        sel = np.flatnonzero(ch.x >= ch.x_first)[:3]
    slope, icpt = np.polyfit(ch.x[sel], ch.value[sel], 1)
    return max(0.0, float(icpt))


def _kink(xs: np.ndarray, ys: np.ndarray) -> tuple[float, float]:
    """Best single breakpoint of a continuous two-segment line through ``(xs, ys)``.

    Returns ``(c, gain)``: the breakpoint [m] and the ratio of the residual of a cubic
    polynomial (4 parameters) to that of the hinge fit (3 parameters, plus ``c``). A kink
    (dead zone, gap, stop) gives gain >> 1; a smooth hardening spring gives gain <~ 1.
    """
    best, c_best = np.inf, float(xs[len(xs) // 2])
    for c in xs[2:-2]:
        A = np.c_[np.ones_like(xs), xs, np.maximum(xs - c, 0.0)]
        r = ys - A @ np.linalg.lstsq(A, ys, rcond=None)[0]
        ss = float(r @ r)
        if ss < best:
            best, c_best = ss, float(c)
    rc = ys - np.polyval(np.polyfit(xs, ys, 3), xs)
    return c_best, float(rc @ rc) / max(best, 1e-300)


def _kink_nodes(xn: np.ndarray, c: float) -> np.ndarray:
    """Move the uniform nodes nearest to ``+-c`` onto ``+-c`` (symmetric grid, 0 and the ends
    stay), so the piecewise-linear restoring force can represent the kink exactly."""
    xn = xn.copy()
    mid = len(xn) // 2
    j = mid + int(np.argmin(np.abs(xn[mid:] - c)))
    if mid < j < len(xn) - 1:
        xn[j] = c
        xn[2 * mid - j] = -c
    return xn


def refinement_model(curves: ResonanceCurves, t: np.ndarray, x: np.ndarray,
                     force: np.ndarray, *, hold: float | None = None, n_x: int = 24,
                     n_v: int = 24, substeps: int = 4, decimate: int = 4,
                     smooth: float = 1.0) -> RefinementModel:
    """The refinement's model of a record, its start from the Abel estimate and its boxes.

    Parameters
    ----------
    curves
        Abel estimate (its sequence gives ``mu``, ``nu``, ``b_max``, ``v_max``).
    t, x, force
        The record [s], [m], [N], uniformly sampled.
    hold
        Samples before ``t[0] + hold`` are simulated but not fitted [s]; default 12 periods.
    n_x, n_v
        Segments per side of the restoring-force spline; segments of the damping spline.
    substeps
        RK4 steps per sample interval.
    decimate
        Every ``decimate``-th sample enters the residual (8 per period at 32 samples per
        period is ample, and keeps the solver's linear algebra small).
    smooth
        Weight of the second differences of the damping nodes (relative to max H) appended
        to the residual (normalised by the std of x); 0 switches it off. At 1 a smooth curve
        (quadratic damping) costs ~1e-4 against a residual sum ~1e-2, an alternating 3 %
        wiggle ~0.3: it removes the wiggle without bending real curvature.

    A kink in the odd part of the Abel estimate (best hinge fit at least 10x better than a cubic
    in squared residual) moves the nearest restoring-force nodes onto +-kink. The start is the
    Abel estimate at the nodes, preload and Coulomb force from its limit at 0+, the record's
    first displacement and velocity. The boxes are wide (three times the largest start force
    each side, ten standard deviations of x for x0): they only keep a trial point finite.
    """
    seq = curves.sequence
    t = np.asarray(t, float)
    x = np.asarray(x, float)
    force = np.asarray(force, float)
    if hold is None:
        hold = 12 * 2 * np.pi / seq.nu
    X = 1.02 * seq.b[-1]
    V = 1.05 * seq.v[-1]
    xn = np.linspace(-X, X, 2 * n_x + 1)
    # a kink in the Abel estimate (dead-zone edge, stop) becomes a node: the uniform grid
    # otherwise smears it over one segment and the damping absorbs the misfit (dead zone:
    # 1.34 % damping error without this). Gain 10: a kink fits the hinge at least 10x better
    # (in squares) than a cubic; measured dead zone >> 10, preload < 10.
    xk = np.linspace(0.05, 1.0, 96) * seq.b[-1]
    c, gain = _kink(xk, 0.5 * (curves.restoring_force(xk) - curves.restoring_force(-xk)))
    if gain > 10.0:
        xn = _kink_nodes(xn, c)
    vn = np.linspace(0.0, V, n_v + 1)
    model = RefinementModel(t, x, force, seq.mu, hold, xn, vn, substeps, decimate, smooth)
    F0 = _intercept(curves.restoring_odd)
    phi0 = curves.restoring_force(xn) - F0 * np.sign(xn)
    sx = np.delete(phi0, n_x)
    Fc = _intercept(curves.velocity_damping)
    q0 = curves.damping_force(vn) - Fc * (vn > 0)
    sv = q0[1:]
    v0 = (x[1] - x[0]) / (t[1] - t[0])
    model.p0 = np.r_[x[0], v0, F0, sx, Fc, sv]
    fm = 3.0 * max(float(np.abs(phi0).max()), F0, 1e-12)
    hm = 3.0 * max(float(np.abs(q0).max()), Fc, 1e-12)
    dx = 10.0 * float(np.std(x))
    half = np.r_[dx, dx * seq.nu, fm, np.full(sx.size, fm), hm, np.full(sv.size, hm)]
    model.lower, model.upper = model.p0 - half, model.p0 + half
    return model


def refine_resonance(curves, t: np.ndarray, x: np.ndarray, force: np.ndarray, *,
                     max_nfev: int = 100, seed: int = 0, n_draws: int = 4000,
                     diff_step: float = 1e-8, exact_jacobian: bool = True,
                     params=None, **model_kw) -> Result:
    """Refine the Abel estimate ``curves`` by fitting the simulated oscillator to the record
    (:mod:`identification.resonance.refine`).

    Parameters
    ----------
    curves : identification.resonance.own.ResonanceCurves
        The Abel estimate.
    t, x, force
        The record [s], [m], [N], uniformly sampled.
    max_nfev
        Budget of residual evaluations of the least-squares polish.
    seed
        Seed of the Laplace draws.
    n_draws
        Laplace draws behind the intervals.
    diff_step
        Finite-difference step of the Jacobian, as a fraction of each box's spread (about
        1e-6 N on a node force). The simulated response is rough on a coarser scale (the
        preload jump at x = 0): on the shipped preload record a step of 1e-4 stops the
        polish at 6x the cost a step of 1e-8 reaches, with 1.2 % damping error against 0.2 %.
        Used only with ``exact_jacobian=False`` and for prior rows.
    exact_jacobian
        Jacobians from the sensitivities of the simulation
        (:meth:`RefinementModel.jacobian`: one run each, against ``2 n`` runs of central
        differences in ``n`` parameters); False: central differences.
    params : lmfit.Parameters, optional
        Start values, bounds and ``vary`` of any of the fitted parameters (``x0``, ``v0``,
        ``preload``, ``restoring_NN``, ``coulomb``, ``damping_NN``; by default the Abel
        estimate's values in boxes about them: ``result.params`` of an earlier refinement
        is one); :func:`identification.lmfit_bridge.apply_parameters`.
    **model_kw
        ``hold``, ``n_x``, ``n_v``, ``substeps``, ``decimate``, ``smooth`` of
        :func:`identification.resonance.refine.refinement_model`.

    Returns
    -------
    Result
        Kind ``"resonance_refinement"``: ``parameters`` (initial state, preload, node values
        of the restoring force, Coulomb force, node values of the damping force); sections
        ``curves`` (``x`` nodes [m], ``restoring`` [N], ``preload`` [N], ``v`` nodes [m/s],
        ``damping`` [N], ``coulomb`` [N]: evaluate them with
        :func:`~identification.resonance.refine.restoring_force` and
        :func:`~identification.resonance.refine.damping_force`) and ``refinement``
        (``change_restoring``, ``change_damping`` [-] from the Abel estimate,
        ``rms_before_m``, ``rms_after_m`` [m], ``simulations``, ``preload_N``,
        ``coulomb_N``). The noise (one level for the displacement and the smoothing rows,
        so their balance and the optimum stay as fitted) is estimated from the residuals.
        ``result.params``: the fit as :class:`lmfit.Parameters` (Laplace ``stderr`` and
        ``correl``); ``result.fit_report()`` lmfit's report of it.
    """
    from identification.lmfit_bridge import apply_parameters, minimizer_result, result_parameters

    model = refinement_model(curves, t, x, force, **model_kw)
    space = box_space(model.names, model.units, model.p0, list(zip(model.lower, model.upper)))
    space = apply_parameters(space, params)
    problem = ResidualProblem(space, model, model.n_residuals,
                              jacobian_fn=model.jacobian if exact_jacobian else None)
    result = least_squares(problem, starts=0, first_guess=space.start(), max_nfev=max_nfev,
                           diff_step=diff_step, origin="Abel estimate",
                           kind="resonance_refinement")
    result.seed = seed
    full = space.full(result.x_opt[None, :])[0]        # every parameter, fixed ones too
    r0 = model.residual(model.p0)
    r1 = model.residual(full)
    problem = reweight(problem, result)
    laplace(problem, result, rng=np.random.default_rng(seed), diff_step=diff_step,
            n_draws=n_draws)
    post = result.posterior
    result.parameters = summarize(space, post.samples, post.x_map, post.stderr)
    F0, phi, Fc, qv = model.tables(full)
    seq = curves.sequence
    xs = np.linspace(-seq.b[-1], seq.b[-1], 401)
    vs = np.linspace(0, seq.v[-1], 201)[1:]
    n_fit = int(model.fit.sum())
    result.sections["curves"] = {"x": model.xn, "restoring": phi, "preload": float(F0),
                                 "v": model.vn, "damping": qv, "coulomb": float(Fc)}
    result.sections["refinement"] = {
        "change_restoring": curve_change(restoring_force(xs, model.xn, phi, F0),
                                           curves.restoring_force(xs)),
        "change_damping": curve_change(damping_force(vs, model.vn, qv, Fc),
                                         curves.damping_force(vs)),
        "rms_before_m": float(np.sqrt(np.mean(r0[:n_fit] ** 2)) * model.scale),
        "rms_after_m": float(np.sqrt(np.mean(r1[:n_fit] ** 2)) * model.scale),
        "simulations": int(problem.n_evaluations), "preload_N": float(F0),
        "coulomb_N": float(Fc)}
    result.settings.update({"max_nfev": max_nfev, "diff_step": diff_step,
                            "n_draws": n_draws, **model_kw})
    result.params = result_parameters(space, result)
    result.lmfit_result = minimizer_result(problem, result, result.params,
                                           method="least squares (trust-region reflective)")
    return result
