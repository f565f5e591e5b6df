"""Piecewise-linear hysteresis elements of docking mechanisms (Yaskevich; seed digest Part A).

Two elements, one state machine:

* :class:`HysteresisElement`: constant parameters (digest A.2-A.9). Springs, rods, covers,
  roll stiffness: forward (loading) and backward (unloading) branches per side, backlash
  (segment 0), a short common first segment, a common beyond-range segment of maximum
  stiffness, and a straight transition segment of that stiffness between the branches.
* :class:`FrictionBrakeElement`: variable parameters (digest A.10). A transmission driving a
  friction brake: zero stiffness beyond the last segment (the brake slips at the force
  ``Q(N)``), and every time the slip ends all branch tables are shifted irreversibly by the
  slipped amount, any number of times, in both directions.

The generalized reaction is

.. math::  Q = Q_X(i) + k_X(i)\\,(q - s - q_X(i)),

where ``X`` is the branch selected by the state (0, +-1, +-2, +-3, +-10 of the paper), ``i``
the segment containing ``q - s`` and ``s`` the cumulative brake shift (0 for constant
parameters). The state changes by Table 1 of [Y] and its mirror (digest A.5, A.6).

Units: SI. ``q`` in [m] (``dof = "linear"``) or [rad] (``"angular"``); ``Q`` in [N] or
[N m]; stiffnesses in [N/m] or [N m/rad].

Element tables (``from_dict``)
------------------------------
::

    name = "lateral_sm1"
    variant = "constant"        # or "friction_brake"
    dof = "linear"              # or "angular"
    tolerance = 1e-9            # end-point tolerance on q [m or rad]; optional
    [positive]
    k_max = 2.0e5               # beyond-range slope = transition slope (constant variant)
    forward = { q = [0.002, 0.004, 0.03, 0.06], Q = [0.0, 40.0, 600.0, 4000.0] }
    backward = { q = [0.002, 0.004, 0.045, 0.06], Q = [0.0, 40.0, 1000.0, 4000.0] }
    [negative]                  # signed values (q <= 0, Q <= 0), or: negative = "mirror"
    ...

A branch gives ``q`` (N breakpoints, increasing in magnitude, the first is the backlash end)
and either ``Q`` (N forces, ``Q[0] = 0``) or ``k`` (the N-1 working-segment stiffnesses,
forces by continuity). The friction-brake variant has no ``k_max`` (it is 0) and an optional
``k3`` (the transition slope; default: the largest working-segment slope, digest A.10
"open point").

Choices where the digest and the Russian original leave room (see also the kernel module
:mod:`models._kernels.hysteresis`):

* The 2 -> 3 search runs over the positive forward segments (``N_P``; the OCR's ``N_N`` is a
  misprint, digest A.13); the brake's ``phi_{N,max}`` is read as the extreme negative angle.
* The brake's transition slope is not defined by [Y] (its ``k_max`` is 0): it is ``k3``,
  defaulting to the largest working-segment slope, and validation requires it to be at least
  every working slope so that the transition line always meets the other branch.
* A sampled history (a static-test record, no rates) reverses at its turning point, where the
  rate changes sign (the paper's definition), not one sample later where a backward difference
  would first see the new sign: :func:`sampled_history` gives the state machine the turning
  point with both rates before the next sample.
* ``qdot == 0`` keeps the state; bounds are inclusive with ``tolerance``; the brake shift is
  held as one number subtracted from q rather than rewritten into the tables (same
  arithmetic, read-only tables).

References
----------
Seed digest ``hysteresis-and-resonance-identification.md``, Part A (A.3 tables, A.5/A.6
transition tables, A.7 transition segment, A.9 illegal transitions, A.10 friction brake).
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from models._kernels import hysteresis as _k
from models.errors import DockreconError, InputError
from models.schema import Table, keys

__all__ = [
    "ELEMENT",
    "Branch",
    "Side",
    "HysteresisElement",
    "FrictionBrakeElement",
    "IllegalTransition",
    "PackedElements",
    "element_from_dict",
    "pack_elements",
    "loop_energy",
    "sampled_history",
    "ADVICE",
]

ADVICE = ("enlarge the common first segment of the element or reduce the integration step "
          "(Yaskevich, Table 1)")

_STATES = (0, 1, 2, 3, 10, -1, -2, -3, -10)


class IllegalTransition(DockreconError):
    """A state change not admitted by Table 1 of [Y] (or its mirror), or a transition segment
    that meets no segment of the target branch.

    Attributes
    ----------
    q : float
        Deformation at the failing update [m or rad].
    qdot : float
        Deformation rate [m/s or rad/s] (only its sign is used by the model).
    state : int
        The state before the update (0, +-1, +-2, +-3, +-10).
    time : float
        Time of the update [s] (sample index when no time was given).
    element : str
        Element name.
    code : int
        Kernel status (``ST_ILLEGAL`` or ``ST_NO_INTERSECTION``).
    advice : str
        The paper's remedy.
    """

    def __init__(self, *, q: float, qdot: float, state: int, time: float, element: str = "",
                 code: int = _k.ST_ILLEGAL) -> None:
        self.q = float(q)
        self.qdot = float(qdot)
        self.state = int(state)
        self.time = float(time)
        self.element = element
        self.code = int(code)
        self.advice = ADVICE
        what = ("illegal state transition" if code == _k.ST_ILLEGAL
                else "transition segment meets no segment of the target branch")
        super().__init__(
            f"{element or 'hysteresis element'}: {what} at t={self.time:.6g} s: state "
            f"{self.state}, q={self.q:.6g}, qdot={self.qdot:.6g}; {self.advice}")


# --------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------
def _floats(value: Any, key: str) -> tuple[float, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence | np.ndarray):
        raise InputError("expected a list of numbers", key=key)
    try:
        out = tuple(float(v) for v in value)
    except (TypeError, ValueError):
        raise InputError("expected a list of numbers", key=key) from None
    if not all(math.isfinite(v) for v in out):
        raise InputError("values must be finite", key=key)
    return out


@dataclass(frozen=True)
class Branch:
    """One branch (forward or backward) of one side, in signed SI values.

    Parameters
    ----------
    q : tuple of float
        Breakpoints [m or rad], N of them, strictly increasing in magnitude; ``q[0]`` is the
        end of the backlash (0 for none), ``q[1]`` the end of the common first segment,
        ``q[N-1]`` the working-range limit.
    Q : tuple of float
        Force at each breakpoint [N or N m]; ``Q[0] = 0``.
    k : tuple of float
        Stiffness of the segment starting at each breakpoint [N/m or N m/rad]; ``k[N-1]`` is
        the beyond-range slope.
    """

    q: tuple[float, ...]
    Q: tuple[float, ...]
    k: tuple[float, ...]

    def force(self, q: np.ndarray | float) -> np.ndarray:
        """Force on this branch [N or N m] (backlash, segments, beyond line), vectorised."""
        qa = np.asarray(q, dtype=float)
        qs, Qs, ks = (np.asarray(a) for a in (self.q, self.Q, self.k))
        sgn = 1.0 if qs[-1] > 0 else -1.0
        x = sgn * qa
        xs = sgn * qs
        j = np.clip(np.searchsorted(xs, x, side="right") - 1, 0, len(qs) - 1)
        out = Qs[j] + ks[j] * (qa - qs[j])
        return np.where(x <= xs[0], 0.0, out)


@dataclass(frozen=True)
class Side:
    """Forward and backward branch of one side (positive or negative deformations).

    Parameters
    ----------
    forward, backward : Branch
        Same number of points N >= 3.
    k3 : float
        Slope of the transition segment [N/m or N m/rad] (the maximum stiffness).
    """

    forward: Branch
    backward: Branch
    k3: float

    @property
    def n(self) -> int:
        return len(self.forward.q)


def _branch_from_dict(d: Any, key: str, k_beyond: float) -> Branch:
    if not isinstance(d, Mapping):
        raise InputError("expected a table with 'q' and 'Q' (or 'k')", key=key)
    unknown = set(d) - BRANCH.names()
    if unknown:
        raise InputError(f"unknown key '{sorted(unknown)[0]}' (allowed: "
                         f"{', '.join(BRANCH.order())})",
                         key=f"{key}.{sorted(unknown)[0]}")
    if "q" not in d:
        raise InputError("missing breakpoints", key=f"{key}.q")
    q = _floats(d["q"], f"{key}.q")
    n = len(q)
    if n < 3:
        raise InputError(f"needs at least 3 breakpoints (backlash end, common-segment end, "
                         f"range limit), got {n}", key=f"{key}.q")
    if ("Q" in d) == ("k" in d):
        raise InputError("give exactly one of 'Q' (forces) or 'k' (segment stiffnesses)",
                         key=key)
    if "Q" in d:
        Q = _floats(d["Q"], f"{key}.Q")
        if len(Q) != n:
            raise InputError(f"has {len(Q)} values, 'q' has {n}", key=f"{key}.Q")
        dq = np.diff(q)
        with np.errstate(divide="ignore", invalid="ignore"):
            k = tuple(float(v) for v in np.diff(Q) / dq) + (float(k_beyond),)
    else:
        kk = _floats(d["k"], f"{key}.k")
        if len(kk) != n - 1:
            raise InputError(f"has {len(kk)} values, expected {n - 1} (one per working "
                             "segment; the beyond-range slope is the side's k_max)",
                             key=f"{key}.k")
        Q = [0.0]
        for j in range(n - 1):
            Q.append(Q[-1] + kk[j] * (q[j + 1] - q[j]))
        Q = tuple(Q)
        k = kk + (float(k_beyond),)
    return Branch(q=q, Q=Q, k=k)


def _validate_side(side: Side, key: str, sign: float, brake: bool) -> None:
    """The consistency constraints of digest A.3 (signed values; ``sign`` = +1 / -1)."""
    f, b = side.forward, side.backward
    n = len(f.q)
    if len(b.q) != n:
        raise InputError(f"has {len(b.q)} breakpoints, the forward branch {n}",
                         key=f"{key}.backward.q")
    scale = max(abs(v) for v in f.q + b.q) or 1.0
    fscale = max(abs(v) for v in f.Q + b.Q) or 1.0
    for name, br in (("forward", f), ("backward", b)):
        xs = sign * np.asarray(br.q)
        if xs[0] < 0.0:
            raise InputError(f"backlash end must be {'>= 0' if sign > 0 else '<= 0'}",
                             key=f"{key}.{name}.q")
        if np.any(np.diff(xs) <= 0.0):
            j = int(np.flatnonzero(np.diff(xs) <= 0.0)[0])
            raise InputError(f"breakpoints must {'increase' if sign > 0 else 'decrease'} "
                             f"strictly (entries {j + 1} and {j + 2})", key=f"{key}.{name}.q")
        if abs(br.Q[0]) > 1e-12 * fscale:
            raise InputError("force at the backlash end must be 0", key=f"{key}.{name}.Q")
        if np.any(sign * np.asarray(br.Q[1:]) < -1e-12 * fscale):
            raise InputError(f"forces must be {'>= 0' if sign > 0 else '<= 0'} on this side",
                             key=f"{key}.{name}.Q")
        ks = np.asarray(br.k[:-1])
        if np.any(ks < 0.0):
            j = int(np.flatnonzero(ks < 0.0)[0])
            raise InputError(f"segment {j + 1} has negative stiffness {ks[j]:.6g}",
                             key=f"{key}.{name}")
    rq = 1e-9 * scale
    rQ = 1e-9 * fscale
    # the common first segment and the common beyond-range segment (assumption 3)
    for j, what in ((0, "backlash end"), (1, "end of the common first segment"),
                    (n - 1, "working-range limit")):
        if abs(f.q[j] - b.q[j]) > rq:
            raise InputError(f"forward and backward branches must share the {what} "
                             f"(q {f.q[j]:.6g} vs {b.q[j]:.6g})", key=f"{key}.backward.q")
        if abs(f.Q[j] - b.Q[j]) > rQ:
            raise InputError(f"forward and backward branches must meet at the {what} "
                             f"(Q {f.Q[j]:.6g} vs {b.Q[j]:.6g})", key=f"{key}.backward.Q")
    k3 = side.k3
    if not (k3 > 0.0 and math.isfinite(k3)):
        raise InputError("maximum (transition) stiffness must be positive",
                         key=f"{key}.{'k3' if brake else 'k_max'}")
    kmax_work = max(max(f.k[:-1]), max(b.k[:-1]))
    if kmax_work > k3 * (1 + 1e-9):
        raise InputError(f"a working segment is stiffer ({kmax_work:.6g}) than the "
                         f"{'transition slope k3' if brake else 'maximum stiffness k_max'} "
                         f"({k3:.6g}); the transition line could miss the other branch",
                         key=f"{key}.{'k3' if brake else 'k_max'}")
    if not brake and abs(b.k[n - 2] - k3) > 1e-6 * k3:
        raise InputError(f"the last backward segment must have the maximum stiffness "
                         f"{k3:.6g} (assumption 5), has {b.k[n - 2]:.6g}",
                         key=f"{key}.backward")
    # loading above unloading (digest A.3), checked at every node of both branches
    nodes = np.union1d(np.asarray(f.q[1:]), np.asarray(b.q[1:]))
    gap = sign * (f.force(nodes) - b.force(nodes))
    if np.any(gap < -1e-9 * fscale):
        j = int(np.argmin(gap))
        raise InputError(f"the forward branch must lie {'above' if sign > 0 else 'below'} "
                         f"the backward branch (not at q = {nodes[j]:.6g})", key=key)


# declared schema of an element table (models.schema): element_from_dict takes its key sets
# from it. A side takes k_max (constant variant) or k3 (friction brake), not both.
BRANCH = Table("forward", "A branch: breakpoints q and either the forces Q or the working "
               "segments' stiffnesses k (forces by continuity).", keys("""
q | vector | m or rad         | required | - | N breakpoints, increasing in magnitude (the
| first is the backlash end; at least 3)
Q | vector | N or N m         | -        | - | N forces, Q[0] = 0 (or give k)
k | vector | N/m or N m/rad   | -        | - | the N-1 working-segment stiffnesses (or give Q)
"""), required=True, source=False)

SIDE = Table("positive", "One side of the element: its loading (forward) and unloading "
             "(backward) branches, signed (the negative side: q <= 0, Q <= 0).", keys("""
k_max | number | N/m or N m/rad | - | >0~ | beyond-range and transition slope, at least every
| working slope (variant "constant": required)
k3    | number | N/m or N m/rad | - | >0~ | transition slope (variant "friction_brake"; default
| the largest working-segment slope)
""") + (BRANCH, BRANCH.replace(name="backward")), required=True, source=False)

#: a hysteresis element table (:func:`element_from_dict`; ``identify hysteresis --element``)
ELEMENT = Table("hysteresis", "A piecewise-linear hysteresis element (models.hysteresis).",
                keys("""
name          | string | - | 'element' | - | element id (in diagnostics)
variant       | choice:constant,friction_brake | - | 'constant' | - | constant parameters or a
| transmission driving a friction brake (tables shifted by every slip)
dof           | choice:linear,angular | - | 'linear' | - | q in m and Q in N ("linear") or
| rad and N m ("angular")
tolerance     | number | m or rad | - | >=0~ | end-point tolerance on q (default 1e-9 of the
| largest breakpoint; small against the common first segment)
policy        | choice:stop,warn | - | 'stop' | - | at an illegal transition: raise ("stop",
| the paper) or warn and go on ("warn")
initial_shift | number | m or rad | 0.0 | - | the brake's shift at the start
""") + (SIDE, SIDE.replace(name="negative", word="mirror", help="The negative side, or "
                          "\"mirror\": the positive side mirrored.")), source=False)

_TOP_KEYS = ELEMENT.names()


@dataclass(frozen=True)
class HysteresisElement:
    """Constant-parameter piecewise-linear hysteresis element (digest A.2-A.9).

    Parameters
    ----------
    positive, negative : Side
        Branch tables in signed SI values (the negative side has q <= 0, Q <= 0).
    name : str
        Element id (used in diagnostics).
    dof : str
        ``"linear"`` (q [m], Q [N]) or ``"angular"`` (q [rad], Q [N m]).
    tolerance : float
        End-point tolerance on q [m or rad]; default 1e-9 of the largest breakpoint.
    policy : str
        ``"stop"`` (the paper: raise :class:`IllegalTransition`) or ``"warn"`` (warn, keep the
        state, go on; for noisy telemetry).
    """

    positive: Side
    negative: Side
    name: str = "element"
    dof: str = "linear"
    tolerance: float | None = None
    policy: str = "stop"
    initial_shift: float = 0.0

    kind = _k.KIND_CONSTANT
    variant = "constant"

    def __post_init__(self) -> None:
        brake = self.kind == _k.KIND_BRAKE
        if self.dof not in ("linear", "angular"):
            raise InputError(f"unknown dof '{self.dof}' (linear, angular)", key="dof")
        if self.policy not in ("stop", "warn"):
            raise InputError(f"unknown policy '{self.policy}' (stop, warn)", key="policy")
        _validate_side(self.positive, "positive", 1.0, brake)
        _validate_side(self.negative, "negative", -1.0, brake)
        if self.tolerance is None:
            scale = max(abs(v) for v in self.positive.forward.q + self.negative.forward.q)
            object.__setattr__(self, "tolerance", 1e-9 * scale)
        if not (self.tolerance >= 0.0 and math.isfinite(self.tolerance)):
            raise InputError("must be a finite number >= 0", key="tolerance")
        if self.tolerance >= 0.5 * min(self.positive.forward.q[1] - self.positive.forward.q[0],
                                       self.negative.forward.q[0] - self.negative.forward.q[1]):
            raise InputError("tolerance must be small against the common first segment",
                             key="tolerance")

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "HysteresisElement":
        """Build from a plain dict in SI units (the layout in the module docstring)."""
        return element_from_dict(d, expect=cls)

    @property
    def units(self) -> tuple[str, str, str]:
        """(q, Q, stiffness) SI units."""
        return (("m", "N", "N/m") if self.dof == "linear" else ("rad", "N*m", "N*m/rad"))

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form (round-trips through :func:`element_from_dict`)."""
        def side(s: Side) -> dict[str, Any]:
            out: dict[str, Any] = {
                "forward": {"q": list(s.forward.q), "Q": list(s.forward.Q)},
                "backward": {"q": list(s.backward.q), "Q": list(s.backward.Q)},
            }
            if self.kind == _k.KIND_BRAKE:
                out["k3"] = s.k3
            else:
                out["k_max"] = s.k3
            return out

        return {"name": self.name, "variant": self.variant, "dof": self.dof,
                "tolerance": self.tolerance, "positive": side(self.positive),
                "negative": side(self.negative)}

    # -- kernel ------------------------------------------------------------------------------
    def table(self) -> np.ndarray:
        """This element's packed float64 table (layout: :mod:`models._kernels.hysteresis`)."""
        p, n = self.positive, self.negative
        out = np.zeros(_k.element_size(p.n, n.n))
        out[_k.H_KIND] = self.kind
        out[_k.H_NP] = p.n
        out[_k.H_NN] = n.n
        out[_k.H_K3P] = p.k3
        out[_k.H_K3N] = n.k3
        out[_k.H_TOL] = self.tolerance
        pos = 0
        for side, sgn in ((p, 1.0), (n, -1.0)):
            for br in (side.forward, side.backward):
                m = side.n
                base = _k.H_SIZE + pos
                out[base:base + m] = sgn * np.asarray(br.q)
                out[base + m:base + 2 * m] = sgn * np.asarray(br.Q)
                out[base + 2 * m:base + 3 * m] = np.asarray(br.k)
                pos += 3 * m
        return out

    def trace(self, q_history: Sequence[float] | np.ndarray, t: Sequence[float] | None = None,
              *, qdot: Sequence[float] | None = None,
              return_states: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """Forces [N or N m] along a deformation history ``q_history`` [m or rad].

        The state is updated at each sample with the rate sign of ``qdot``, then the force is
        evaluated (digest A.9: state changes once per accepted step). The element starts in
        state 0 with its ``initial_shift``. Without ``qdot`` the history is a sampled one
        (a static-test record): the rate is the backward difference of ``q`` and each reversal
        is anchored at the record's turning point (:func:`sampled_history`), so that the
        transition segment starts where the motion turned, not at the first sample after it.
        With ``qdot`` (an integrator's rates) the samples are taken as they are.

        Raises
        ------
        IllegalTransition
            With policy ``"stop"``, at the first sample that breaks Table 1.
        """
        q = np.ascontiguousarray(q_history, dtype=float)
        if q.ndim != 1:
            raise InputError("q history must be one-dimensional", key="q")
        tt = (np.arange(q.size, dtype=float) if t is None
              else np.ascontiguousarray(t, dtype=float))
        at = None
        if qdot is None:
            if tt.shape != q.shape:
                raise InputError("q and t must have the same length", key="q")
            n_rec = q.size
            q, qd, at, pos = sampled_history(q)
            tt = np.interp(pos, np.arange(n_rec, dtype=float), tt)
        else:
            qd = np.ascontiguousarray(qdot, dtype=float)
        if qd.shape != q.shape or tt.shape != q.shape:
            raise InputError("q, qdot and t must have the same length", key="q")
        force = np.zeros_like(q)
        states = np.zeros(q.size, dtype=np.int64)
        table = self.table()
        istate = np.zeros(_k.I_SIZE, dtype=np.int64)
        fstate = np.zeros(_k.F_SIZE)
        _k.hyst_reset(istate, 0, fstate, 0, float(self.initial_shift))
        start = 0
        while start < q.size:
            prev_state = int(istate[_k.I_STATE])
            status, k = _k.hyst_trace(table, 0, istate, 0, fstate, 0, q[start:], qd[start:],
                                      tt[start:], force[start:], states[start:])
            if status == _k.ST_OK:
                break
            k += start
            prev_state = int(istate[_k.I_STATE])
            err = IllegalTransition(q=q[k], qdot=qd[k], state=prev_state, time=tt[k],
                                    element=self.name, code=status)
            if self.policy == "stop" or status != _k.ST_ILLEGAL:
                raise err
            warnings.warn(str(err), RuntimeWarning, stacklevel=2)
            force[k] = _k.hyst_force(table, 0, istate, 0, fstate, 0, q[k])
            states[k] = istate[_k.I_STATE]
            start = k + 1
        if at is not None:
            force, states = force[at], states[at]
        return (force, states) if return_states else force

    def branch_force(self, side: str, branch: str, q: np.ndarray | float) -> np.ndarray:
        """Force on one branch (``side`` "positive"/"negative", ``branch`` "forward"/
        "backward") at ``q`` [m or rad], without state logic."""
        return getattr(getattr(self, side), branch).force(q)


@dataclass(frozen=True)
class FrictionBrakeElement(HysteresisElement):
    """Variable-parameter element of a transmission with a friction brake (digest A.10).

    Same tables as :class:`HysteresisElement`, except that the slope beyond the working range
    is 0 (the brake slips at ``Q(N)``) and the transition slope is ``Side.k3`` (default: the
    largest working-segment slope). Each time a slip episode ends (rate reversal in state
    +-10) every abscissa is shifted by the slipped amount; the shifts accumulate, in both
    directions.
    """

    kind = _k.KIND_BRAKE
    variant = "friction_brake"


def _side_from_dict(d: Any, key: str, sign: float, brake: bool) -> Side:
    if not isinstance(d, Mapping):
        raise InputError("expected a table with 'forward' and 'backward'", key=key)
    allowed = SIDE.names() - ({"k_max"} if brake else {"k3"})
    unknown = set(d) - allowed
    if unknown:
        u = sorted(unknown)[0]
        hint = (" (a friction brake has zero stiffness beyond its range; give k3)"
                if u == "k_max" else " (k3 is for variant = 'friction_brake')" if u == "k3"
                else "")
        raise InputError(f"unknown key{hint}", key=f"{key}.{u}")
    for name in ("forward", "backward"):
        if name not in d:
            raise InputError("missing branch", key=f"{key}.{name}")
    if brake:
        k_beyond = 0.0
    else:
        if "k_max" not in d:
            raise InputError("missing maximum (beyond-range and transition) stiffness",
                             key=f"{key}.k_max")
        try:
            k_beyond = float(d["k_max"])
        except (TypeError, ValueError):
            raise InputError("expected a number", key=f"{key}.k_max") from None
    fwd = _branch_from_dict(d["forward"], f"{key}.forward", k_beyond)
    bwd = _branch_from_dict(d["backward"], f"{key}.backward", k_beyond)
    if brake:
        if "k3" in d:
            try:
                k3 = float(d["k3"])
            except (TypeError, ValueError):
                raise InputError("expected a number", key=f"{key}.k3") from None
        else:
            k3 = max(max(fwd.k[:-1]), max(bwd.k[:-1]))
    else:
        k3 = k_beyond
    return Side(forward=fwd, backward=bwd, k3=k3)


def _mirror(d: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in d.items():
        if key in ("forward", "backward") and isinstance(value, Mapping):
            out[key] = {kk: ([-float(v) for v in vv] if kk in ("q", "Q") else list(vv))
                        for kk, vv in value.items()}
        else:
            out[key] = value
    return out


def element_from_dict(d: Mapping[str, Any], *, expect: type | None = None) -> HysteresisElement:
    """Build a :class:`HysteresisElement` or :class:`FrictionBrakeElement` (by ``variant``)
    from a plain dict in SI units. Unknown keys are errors; every error names its key."""
    if not isinstance(d, Mapping):
        raise InputError("expected a table describing one hysteresis element")
    unknown = set(d) - _TOP_KEYS
    if unknown:
        raise InputError("unknown key", key=sorted(unknown)[0])
    variant = d.get("variant", "constant")
    if variant not in ("constant", "friction_brake"):
        raise InputError(f"unknown variant '{variant}' (constant, friction_brake)",
                         key="variant")
    brake = variant == "friction_brake"
    cls = FrictionBrakeElement if brake else HysteresisElement
    if expect is FrictionBrakeElement and not brake:
        raise InputError("expected variant = 'friction_brake'", key="variant")
    for name in ("positive", "negative"):
        if name not in d:
            raise InputError("missing side", key=name)
    pos = _side_from_dict(d["positive"], "positive", 1.0, brake)
    neg_d = d["negative"]
    if neg_d == "mirror":
        neg_d = _mirror(d["positive"])
    neg = _side_from_dict(neg_d, "negative", -1.0, brake)
    kwargs: dict[str, Any] = {}
    for key in ("name", "dof", "policy"):
        if key in d:
            if not isinstance(d[key], str):
                raise InputError("expected a string", key=key)
            kwargs[key] = d[key]
    for key in ("tolerance", "initial_shift"):
        if key in d:
            try:
                kwargs[key] = float(d[key])
            except (TypeError, ValueError):
                raise InputError("expected a number", key=key) from None
    return cls(positive=pos, negative=neg, **kwargs)


# --------------------------------------------------------------------------------------------
# several elements in one set of arrays
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PackedElements:
    """Several elements packed for the kernels (layout in :mod:`models._kernels.hysteresis`).

    ``table`` is read-only parameters; ``toff[e]`` is element ``e``'s offset in it; element
    ``e``'s state sits at ``e * I_SIZE`` in ``istate`` and ``e * F_SIZE`` in ``fstate``.
    ``fresh_state()`` returns new initial state arrays (state 0, initial shifts).
    """

    table: np.ndarray
    toff: np.ndarray
    istate: np.ndarray
    fstate: np.ndarray
    names: tuple[str, ...] = field(default=())

    def fresh_state(self) -> tuple[np.ndarray, np.ndarray]:
        return self.istate.copy(), self.fstate.copy()


def pack_elements(elements: Sequence[HysteresisElement]) -> PackedElements:
    """Pack elements into one float64 table, int64 offsets and initial state arrays."""
    tables = [e.table() for e in elements]
    toff = np.zeros(len(tables), dtype=np.int64)
    pos = 0
    for i, tab in enumerate(tables):
        toff[i] = pos
        pos += tab.size
    table = np.concatenate(tables) if tables else np.zeros(0)
    istate = np.zeros(len(tables) * _k.I_SIZE, dtype=np.int64)
    fstate = np.zeros(len(tables) * _k.F_SIZE)
    for i, e in enumerate(elements):
        _k.hyst_reset(istate, i * _k.I_SIZE, fstate, i * _k.F_SIZE, float(e.initial_shift))
    table.setflags(write=False)
    return PackedElements(table=table, toff=toff, istate=istate, fstate=fstate,
                          names=tuple(e.name for e in elements))


def sampled_history(q: Sequence[float] | np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A sampled deformation history [m or rad] as the state machine's steps, each reversal at
    the record's turning point.

    A record is samples of a continuous test; its rate is not recorded, and the backward
    difference ``q[k] - q[k-1]`` first shows a reversal one sample after the turning point.
    Updating the state there would start the transition segment (digest A.7) at that sample,
    below the turning point, and shift the whole transition line by ``(k3 - k_F) dq`` (about
    47 N for a 250 kN/m element at 0.25 mm per sample). The paper starts it where the rate
    changes sign. So at each reversal two steps are added: the turning point with the old rate
    (the branch carried up to it) and with the new one (the reversal).

    The turning point: the extreme sample ``e`` of the reversal, moved to where the straight
    lines through the two samples before it (``e-2``, ``e-1``) and the two after it (``e+1``,
    ``e+2``) meet, when they meet between ``e-1`` and ``e+1`` and beyond ``q[e]`` by at most
    half the shorter of the two steps. For a constant-rate test (a static rig's programme) that is the
    commanded turning point whatever the sampling phase; for a smooth reversal the samples
    crowd at the extreme and the extreme sample is already close. Otherwise (a plateau, fewer
    than two samples on a side, noise that breaks the lines) it is the extreme sample itself.
    The sample ``e`` is taken after the reversal when the lines meet before it.

    Returns
    -------
    q_steps, rate_steps
        The steps and their rates (backward differences; ``+-1`` at an added step) for
        :func:`models._kernels.hysteresis.hyst_trace`.
    at
        Index of each record sample among the steps (``q_steps[at] == q``).
    position
        Fractional sample index of each step (for times: ``np.interp(position, ...)``).
    """
    q = np.ascontiguousarray(q, dtype=float)
    n = q.size
    qd = np.zeros(n)
    if n > 1:
        qd[1:] = np.diff(q)
    moves = np.flatnonzero(qd)           # samples reached by a nonzero step
    direction = np.sign(qd[moves])
    turns = np.flatnonzero(direction[1:] != direction[:-1])
    if turns.size == 0:
        return q.copy(), qd, np.arange(n), np.arange(n, dtype=float)
    q_out: list[np.ndarray] = []
    qd_out: list[np.ndarray] = []
    pos_out: list[np.ndarray] = []
    at = np.empty(n, dtype=np.int64)
    done = 0       # record samples copied so far
    size = 0
    for i in turns:
        e = int(moves[i])                # the extreme sample (last of the old direction)
        new_first = int(moves[i + 1])    # first sample reached in the new direction
        old, new = float(direction[i]), float(direction[i + 1])
        q_turn, j = q[e], 0.0
        if new_first == e + 1 and e >= 2 and e + 2 < n:
            s1 = q[e - 1] - q[e - 2]
            s2 = q[e + 2] - q[e + 1]
            if np.sign(s1) == old and np.sign(s2) == new:
                jj = (q[e + 1] - q[e - 1] - s1 - s2) / (s1 - s2)
                qt = q[e - 1] + s1 * (jj + 1.0)
                beyond = old * (qt - q[e])
                if -1.0 < jj < 1.0 and 0.0 <= beyond <= 0.5 * min(abs(s1), abs(s2)):
                    q_turn, j = qt, jj
        # record samples up to the insertion point, then the two steps at the turning point
        stop = e if j < 0.0 else e + 1
        seg = slice(done, stop)
        m = stop - done
        q_out.append(q[seg])
        qd_out.append(qd[seg].copy())
        pos_out.append(np.arange(done, stop, dtype=float))
        at[seg] = np.arange(size, size + m)
        size += m
        q_out.append(np.array([q_turn, q_turn]))
        qd_out.append(np.array([old, new]))
        pos_out.append(np.array([e + j, e + j]))
        size += 2
        if j < 0.0:
            # the extreme sample comes after the turn: it moves with the new rate
            q_out.append(q[e:e + 1])
            qd_out.append(np.array([new]))
            pos_out.append(np.array([float(e)]))
            at[e] = size
            size += 1
            stop = e + 1
        done = stop
    seg = slice(done, n)
    q_out.append(q[seg])
    qd_out.append(qd[seg].copy())
    pos_out.append(np.arange(done, n, dtype=float))
    at[seg] = np.arange(size, size + (n - done))
    return (np.concatenate(q_out), np.concatenate(qd_out), at, np.concatenate(pos_out))


def loop_energy(q: np.ndarray, force: np.ndarray) -> float:
    """Work done on the element along a path, :math:`\\oint Q\\,dq` [J] (trapezoid rule;
    exact for piecewise-linear paths sampled at their corners). For a closed loop this is the
    energy dissipated per cycle (positive for a clockwise Q(q) loop)."""
    q = np.asarray(q, dtype=float)
    f = np.asarray(force, dtype=float)
    return float(np.sum(0.5 * (f[1:] + f[:-1]) * np.diff(q)))

