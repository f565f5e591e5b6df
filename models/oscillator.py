"""Forced nonlinear oscillators of the resonance test (readable layer over
:mod:`models._kernels.oscillator`).

* :class:`SingleModeOscillator`: one quasi-normal coordinate,
  :math:`\\mu\\ddot x + H(\\dot x) + D(x)\\dot x + \\varphi(x) = F(t)` (the resonance paper's
  (2.2) with :math:`\\varepsilon = 1`, and its test equation (4.1) with :math:`\\mu = 1`),
  characteristics as piecewise-linear tables (a repeated abscissa is a jump).
* :class:`TwoModeSystem`: modes p and s with linear own characteristics and the conservative
  polynomial coupling of digest B.2 (pair potential ``W = x_s f_sp(x_p)``), for non-own
  resonance tests (B.8).

Both integrate with fixed-step RK4 inside one numba kernel; the force is given at the half
steps so that every RK4 stage sees the exact forcing.

References
----------
Digest ``shared/seeds/hysteresis-and-resonance-identification.md``, sections B.2, B.3, B.8, B.9.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from models._kernels import oscillator as K
from models.errors import InputError

__all__ = ["pack_table", "SingleModeOscillator", "TwoModeSystem", "half_step_times"]


def pack_table(x, f, key: str = "table") -> np.ndarray:
    """Pack a piecewise-linear table ``(x, f)`` into the kernel layout ``[x, f, slope]``.

    ``x`` must be non-decreasing; a value may repeat once (a jump). End segments of zero length
    are extended flat so that extrapolation is always defined.
    """
    x = np.asarray(x, float).ravel()
    f = np.asarray(f, float).ravel()
    if x.shape != f.shape or len(x) < 2:
        raise InputError("a table needs at least two points and one value per point", key=key)
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(f))):
        raise InputError("table values must be finite", key=key)
    dx = np.diff(x)
    if np.any(dx < 0):
        raise InputError("table abscissae must be non-decreasing", key=key)
    if np.any((dx[1:] == 0) & (dx[:-1] == 0)):
        raise InputError("an abscissa may repeat only once (one jump)", key=key)
    if dx[0] == 0:
        x, f = np.r_[x[0] - 1.0, x], np.r_[f[0], f]
    if x[-1] == x[-2]:
        x, f = np.r_[x, x[-1] + 1.0], np.r_[f, f[-1]]
    dx = np.diff(x)
    slope = np.zeros(len(x))
    pos = dx > 0
    slope[:-1][pos] = np.diff(f)[pos] / dx[pos]
    return np.ascontiguousarray(np.column_stack([x, f, slope]))


_ZERO = (np.array([-1.0, 1.0]), np.array([0.0, 0.0]))


def half_step_times(t0: float, h: float, n_steps: int) -> np.ndarray:
    """Times ``t0 + j h / 2``, ``j = 0..2 n_steps``, at which the kernels need the force [s]."""
    return t0 + 0.5 * h * np.arange(2 * n_steps + 1)


@dataclass(frozen=True)
class SingleModeOscillator:
    """One mode of a resonance test.

    Attributes
    ----------
    mass
        Reduced mass :math:`\\mu` [kg].
    restoring
        ``(x [m], phi [N])`` table of the restoring force :math:`\\varphi(x)`.
    velocity_damping
        ``(v [m/s], H [N])`` table of the damping force :math:`H(\\dot x)`; default none.
    displacement_damping
        ``(x [m], D [N s/m])`` table of the damping coefficient :math:`D(x)`; default none.
    """

    mass: float
    restoring: tuple
    velocity_damping: tuple = field(default=_ZERO)
    displacement_damping: tuple = field(default=_ZERO)

    def __post_init__(self):
        if not (np.isfinite(self.mass) and self.mass > 0):
            raise InputError("must be a positive mass [kg]", key="mass")

    def pack(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(phi, H, D, par1)`` kernel arrays."""
        return (pack_table(*self.restoring, key="restoring"),
                pack_table(*self.velocity_damping, key="velocity_damping"),
                pack_table(*self.displacement_damping, key="displacement_damping"),
                np.array([1.0 / self.mass]))

    def simulate(self, force: np.ndarray | Callable, *, t0: float, h: float, n_steps: int,
                 x0: float = 0.0, v0: float = 0.0, stride: int = 1,
                 packed=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Integrate by RK4.

        Parameters
        ----------
        force
            Callable ``F(t)`` [N] (vectorised) or the force at :func:`half_step_times`.
        t0, h, n_steps
            Start [s], step [s], number of steps.
        x0, v0
            Initial displacement [m] and velocity [m/s].
        stride
            Output every ``stride`` steps.
        packed
            Result of :meth:`pack` to reuse (refinement loops).

        Returns
        -------
        t, x, v : numpy.ndarray
            Output times [s], displacement [m], velocity [m/s].
        """
        f = force(half_step_times(t0, h, n_steps)) if callable(force) else np.asarray(force, float)
        if f.shape != (2 * n_steps + 1,):
            raise InputError(f"force needs {2 * n_steps + 1} half-step samples", key="force")
        phi, hv, dx, par1 = packed if packed is not None else self.pack()
        n_out = n_steps // stride + 1
        x = np.empty(n_out)
        v = np.empty(n_out)
        status = K.simulate_single(phi, hv, dx, par1, float(x0), float(v0), float(h),
                                   np.ascontiguousarray(f), int(stride), x, v)
        if status != K.STATUS_OK:
            raise FloatingPointError("oscillator state became non-finite")
        return t0 + h * stride * np.arange(n_out), x, v


@dataclass(frozen=True)
class TwoModeSystem:
    """Two quasi-normal modes, linear own characteristics, polynomial coupling (digest B.8).

    .. math::

        \\mu_p\\ddot x_p + h_p\\dot x_p + \\gamma_p x_p = x_s f_{sp}'(x_p) + F(t),\\qquad
        \\mu_s\\ddot x_s + h_s\\dot x_s + \\gamma_s x_s = f_{sp}(x_p)

    Attributes
    ----------
    mu_p, mu_s
        Reduced masses [kg].
    gamma_p, gamma_s
        Modal stiffnesses [N/m].
    h_p, h_s
        Viscous coefficients [N s/m].
    coupling
        ``{power k: coefficient [N/m^k]}`` of :math:`f_{sp}(x_p)`.
    """

    mu_p: float
    gamma_p: float
    h_p: float
    mu_s: float
    gamma_s: float
    h_s: float
    coupling: dict

    def pack(self) -> tuple[np.ndarray, np.ndarray]:
        par2 = np.array([self.mu_p, self.h_p, self.gamma_p, self.mu_s, self.h_s, self.gamma_s])
        if np.any(par2[[0, 2, 3, 5]] <= 0) or np.any(par2[[1, 4]] < 0):
            raise InputError("masses and stiffnesses must be positive, damping non-negative",
                             key="two_mode")
        deg = max(self.coupling) if self.coupling else 0
        coef = np.zeros(deg + 1)
        for k, a in self.coupling.items():
            coef[int(k)] = a
        return par2, coef

    def simulate(self, force: np.ndarray | Callable, *, t0: float, h: float, n_steps: int,
                 y0=(0.0, 0.0, 0.0, 0.0), stride: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """Integrate by RK4; returns ``t`` [s] and the states ``[x_p, v_p, x_s, v_s]``."""
        f = force(half_step_times(t0, h, n_steps)) if callable(force) else np.asarray(force, float)
        par2, coef = self.pack()
        out = np.empty((n_steps // stride + 1, 4))
        status = K.simulate_two_mode(par2, coef, np.asarray(y0, float), float(h),
                                     np.ascontiguousarray(f), int(stride), out)
        if status != K.STATUS_OK:
            raise FloatingPointError("two-mode state became non-finite")
        return t0 + h * stride * np.arange(len(out)), out
