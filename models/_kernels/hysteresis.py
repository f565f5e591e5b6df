"""numba kernels of the piecewise-linear hysteresis elements of Yaskevich (seed digest Part A).

Several elements (constant-parameter springs, friction-brake transmissions) are packed into
three flat arrays, built once by :func:`models.hysteresis.pack_elements`:

``table`` (float64, parameters, never written by a kernel)
    Element ``e`` starts at ``toff[e]`` (call it ``t0``) and occupies
    ``H_SIZE + 6 * (N_P + N_N)`` entries::

        t0 + H_KIND     0.0 constant parameters, 1.0 friction brake (KIND_CONSTANT, KIND_BRAKE)
        t0 + H_NP       N_P, number of points of each positive branch (float holding an int)
        t0 + H_NN       N_N, the same for the negative side
        t0 + H_K3P      transition slope k3 of the positive side [N/m or N m/rad], > 0
        t0 + H_K3N      transition slope of the negative side (a positive number), > 0
        t0 + H_TOL      end-point tolerance on q [m or rad] (inclusive bounds, digest A.5)
        t0 + H_SIZE     positive block: qF[N_P], QF[N_P], kF[N_P], qB[N_P], QB[N_P], kB[N_P]
        + 6 N_P         negative block, same six arrays of length N_N, stored MIRRORED:
                        q' = -q_N, Q' = -Q_N, k' = k_N (digest A.6, "mirror implementation"),
                        so one positive-side state machine serves both sides.

    Inside a block (``b`` = its start, ``n`` its length): ``q[j] = table[b + j]``,
    ``Q[j] = table[b + n + j]``, ``k[j] = table[b + 2n + j]`` for the forward branch and the
    same at ``b + 3n`` for the backward branch; 0-based ``j``. Node 0 is the end of the
    backlash (segment "0" of the paper, force 0 on ``[0, q[0]]``), segment ``j`` spans
    ``[q[j], q[j+1]]`` with ``Q = Q[j] + k[j] (q - q[j])``, segment 0 is the common first
    segment, ``k[n-1]`` is the slope beyond the working range (0 for a brake).

``istate`` (int64, mutated by :func:`hyst_update` only)
    Element ``e`` at ``i0`` (``pack_elements`` uses ``i0 = e * I_SIZE``)::

        i0 + I_STATE    the paper's state: 0, +-1, +-2, +-3, +-10
        i0 + I_NSLIP    number of brake slips so far (both directions)
        i0 + I_STATUS   status of the last update (ST_OK, ST_ILLEGAL, ST_NO_INTERSECTION)

``fstate`` (float64, mutated by :func:`hyst_update` only)
    Element ``e`` at ``f0`` (``pack_elements`` uses ``f0 = e * F_SIZE``)::

        f0 + S_X3B, S_Y3B   beginning (lower q) of the current transition segment
        f0 + S_X3E, S_Y3E   its end (higher q); both in the frame of the active side
                            (mirrored q', Q' when the state is negative) and unshifted
        f0 + S_SHIFT        cumulative irreversible brake shift of all abscissas [m or rad]
        f0 + S_QEXT         extreme q (side frame, shifted) of the current slip episode

Call pattern inside a fixed-step integrator (digest A.9 [impl]: the stages see a frozen
state, the state changes once per accepted step)::

    for step in range(n_steps):
        # RK4 stages: pure force evaluations, nothing is mutated
        f = hyst_force(table, toff[e], istate, e * I_SIZE, fstate, e * F_SIZE, q_stage)
        ...
        # after the step is accepted, with q and qdot at the end of the step:
        status = hyst_update(table, toff[e], istate, e * I_SIZE, fstate, e * F_SIZE,
                             q_end, qdot_end, t_end)
        if status != ST_OK:
            # stop: return status, step, e to Python; the wrapper raises IllegalTransition
            ...

``hyst_step`` does both (update, then force at the same q) and returns ``(force, status)``;
its common case (the state stays) is one pass, bit-identical to update-then-force (tested).

Cached callers inside :mod:`models._kernels` are recompiled after an edit of this module by
the package's cache guard; a cached ``@njit`` caller elsewhere (a benchmark driver) is not
covered by it and needs its own fresh ``NUMBA_CACHE_DIR``.

``hyst_trace`` runs one element over a whole history (q, qdot, t) for loops and fits.
No function here allocates.

Choices where the paper is silent (the digest's [impl] points; also in the module docstring
of :mod:`models.hysteresis`):

* ``qdot == 0`` keeps the state (after the "any -> 0" row, which has no rate condition).
* Bounds are inclusive with the tolerance ``H_TOL``: e.g. state 1 with ``qdot < 0`` at
  ``q <= q_F(N) + tol`` enters the transition segment; state 3 keeps ``q`` in
  ``[q3B - tol, q3E + tol]``.
* Listed rows are applied repeatedly with the same ``(q, qdot)`` until the state is stable,
  so one step may cross several listed rows (0 -> 1 -> 10, 3 -> 1 -> 10). An unlisted
  combination (including jumping across the whole state-0 band) is illegal: the state is
  left unchanged and ``ST_ILLEGAL`` returned (the paper stops; its advice: enlarge the
  common first segment or reduce the integration step).
* The transition line is intersected with the target branch by bracketing the sign change of
  "line minus branch" at the nodes and solving the line pair in that segment. This is the
  paper's Cramer intersection restricted to the one segment where it can lie (digest A.7
  note 3), and it handles the collinear case (reversal on the last backward segment meets the
  forward branch at the node q(N)) and a zero force at reversal.
* The brake shift is held in ``fstate[S_SHIFT]`` and subtracted from q, instead of rewriting
  every abscissa of the four tables (digest A.10 step 3): identical arithmetic, and the table
  stays read-only so one table can serve many parallel simulations.
"""
from __future__ import annotations

from numba import njit

from models._kernels import NJIT, NJIT_LEAF

__all__ = [
    "H_KIND", "H_NP", "H_NN", "H_K3P", "H_K3N", "H_TOL", "H_SIZE",
    "KIND_CONSTANT", "KIND_BRAKE",
    "I_STATE", "I_NSLIP", "I_STATUS", "I_SIZE",
    "S_X3B", "S_Y3B", "S_X3E", "S_Y3E", "S_SHIFT", "S_QEXT", "F_SIZE",
    "ST_OK", "ST_ILLEGAL", "ST_NO_INTERSECTION",
    "element_size", "branch_side", "hyst_force", "hyst_update", "hyst_step", "hyst_trace",
    "hyst_reset", "branch_potential", "hyst_stored",
]

# ---- table header -------------------------------------------------------------------------
H_KIND = 0
H_NP = 1
H_NN = 2
H_K3P = 3
H_K3N = 4
H_TOL = 5
H_SIZE = 8  # 6, 7 reserved

KIND_CONSTANT = 0
KIND_BRAKE = 1

# ---- int state ----------------------------------------------------------------------------
I_STATE = 0
I_NSLIP = 1
I_STATUS = 2
I_SIZE = 4  # 3 reserved

# ---- float state --------------------------------------------------------------------------
S_X3B = 0
S_Y3B = 1
S_X3E = 2
S_Y3E = 3
S_SHIFT = 4
S_QEXT = 5
F_SIZE = 8  # 6, 7 reserved

# ---- status codes -------------------------------------------------------------------------
ST_OK = 0
ST_ILLEGAL = 1          # a combination of state, q, sign(qdot) not in Table 1 or its mirror
ST_NO_INTERSECTION = 2  # the transition line meets no segment of the target branch (bad table)


def element_size(n_p: int, n_n: int) -> int:
    """Number of float64 entries of one element in ``table``."""
    return H_SIZE + 6 * (n_p + n_n)


@njit(**NJIT_LEAF)
def _branch(table, b, n, x):
    """Force of the branch whose q array starts at ``table[b]`` (length ``n``) at ``x``
    (side frame): 0 in the backlash, the segment containing x, the beyond line past q[n-1]."""
    if x <= table[b]:
        return 0.0
    j = n - 1
    while j > 0 and x < table[b + j]:
        j -= 1
    return table[b + n + j] + table[b + 2 * n + j] * (x - table[b + j])


@njit(**NJIT_LEAF)
def branch_side(table, t0, positive):
    """The side of element ``t0`` whose branches apply: ``(sign, base, n, k3)``, with
    ``base`` the table index of that side's forward branch, ``n`` its node count and ``k3``
    the slope of its transition segments. The positive side when ``positive`` (sign +1),
    else the negative side (sign -1), stored mirrored: its deformation is ``sign * x`` and
    its force ``sign * f`` in the side frame."""
    n_p = int(table[t0 + H_NP])
    if positive:
        return 1.0, t0 + H_SIZE, n_p, table[t0 + H_K3P]
    return -1.0, t0 + H_SIZE + 6 * n_p, int(table[t0 + H_NN]), table[t0 + H_K3N]


@njit(**NJIT_LEAF)
def hyst_force(table, t0, istate, i0, fstate, f0, q):
    """Generalized force [N or N m] of one element at deformation ``q`` [m or rad].

    Pure: reads the state, mutates nothing, so it may be called at every integrator stage.
    """
    x = q - fstate[f0 + S_SHIFT]
    s = istate[i0 + I_STATE]
    sign, base, n, k3 = branch_side(table, t0, s > 0 or (s == 0 and x >= 0.0))
    xs = sign * x
    ss = abs(s)
    if ss == 3:
        f = fstate[f0 + S_Y3B] + k3 * (xs - fstate[f0 + S_X3B])
    elif ss == 10:
        f = table[base + n + n - 1] + table[base + 3 * n - 1] * (xs - table[base + n - 1])
    elif ss == 2:
        f = _branch(table, base + 3 * n, n, xs)
    else:
        f = _branch(table, base, n, xs)
    return sign * f


@njit(**NJIT_LEAF)
def _transition_down(table, base, n, k3, tol, xe, ye, fstate, f0):
    """Case 1 -> 3: line of slope k3 through (xe, ye) on the forward branch, meeting the
    backward branch at its beginning (x3B <= xe). Returns ST_OK or ST_NO_INTERSECTION."""
    b = base + 3 * n
    ftol = k3 * tol
    j = n - 2
    while j >= 0:
        qj = table[b + j]
        if qj < xe + tol:
            d_lo = ye + k3 * (qj - xe) - table[b + n + j]
            if d_lo <= ftol:
                hi = table[b + j + 1]
                if hi > xe:
                    hi = xe
                s = k3 - table[b + 2 * n + j]
                if d_lo >= 0.0:       # meets at the lower node (within the tolerance)
                    xc = qj
                elif s > 0.0:
                    xc = qj - d_lo / s
                    if xc > hi:
                        xc = hi
                else:                 # parallel and below: only for invalid tables
                    xc = hi
                fstate[f0 + S_X3B] = xc
                fstate[f0 + S_Y3B] = ye + k3 * (xc - xe)
                fstate[f0 + S_X3E] = xe
                fstate[f0 + S_Y3E] = ye
                return ST_OK
        j -= 1
    return ST_NO_INTERSECTION


@njit(**NJIT_LEAF)
def _transition_up(table, base, n, k3, tol, xb, yb, fstate, f0):
    """Case 2 -> 3: line of slope k3 through (xb, yb) on the backward branch, meeting the
    forward branch at its end (x3E >= xb). Returns ST_OK or ST_NO_INTERSECTION."""
    b = base
    ftol = k3 * tol
    for j in range(n - 1):
        qj1 = table[b + j + 1]
        if qj1 > xb - tol:
            d_hi = yb + k3 * (qj1 - xb) - table[b + n + j + 1]
            if d_hi >= -ftol:
                lo = table[b + j]
                if lo < xb:
                    lo = xb
                s = k3 - table[b + 2 * n + j]
                if d_hi <= 0.0:       # meets at the upper node (within the tolerance)
                    xc = qj1
                elif s > 0.0:
                    xc = qj1 - d_hi / s
                    if xc < lo:
                        xc = lo
                else:                 # parallel and above: only for invalid tables
                    xc = lo
                fstate[f0 + S_X3B] = xb
                fstate[f0 + S_Y3B] = yb
                fstate[f0 + S_X3E] = xc
                fstate[f0 + S_Y3E] = yb + k3 * (xc - xb)
                return ST_OK
    return ST_NO_INTERSECTION


@njit(**NJIT_LEAF)
def hyst_update(table, t0, istate, i0, fstate, f0, q, qdot, t):
    """Commit the state change of one element for an accepted step ending at
    ``(q [m or rad], qdot [m/s or rad/s], t [s])``: Table 1 of [Y] and its mirror, the
    transition segment (A.7), the brake slip shift (A.10).

    Returns ``ST_OK`` or an error code; on error nothing is changed except
    ``istate[i0 + I_STATUS]``. ``t`` is not used by the logic (it is for the caller's
    diagnostics) and is kept in the signature so that every call site passes it.
    """
    n_p = int(table[t0 + H_NP])
    tol = table[t0 + H_TOL]
    x = q - fstate[f0 + S_SHIFT]
    s = istate[i0 + I_STATE]
    band_hi = table[t0 + H_SIZE + 1]              # q_FP(2)
    band_lo = -table[t0 + H_SIZE + 6 * n_p + 1]   # q_FN(2)
    # "any -> 0" row, first (digest A.5 note)
    if x > band_lo and x < band_hi:
        istate[i0 + I_STATE] = 0
        istate[i0 + I_STATUS] = ST_OK
        return ST_OK
    if qdot == 0.0:
        istate[i0 + I_STATUS] = ST_OK
        return ST_OK
    sign, base, n, k3 = branch_side(table, t0, s > 0 or (s == 0 and x >= band_hi))
    xs = sign * x
    v = sign * qdot
    ss = abs(s)
    c = table[base + 1]      # end of the common first segment of this side
    qn = table[base + n - 1]  # working-range limit q_F(N) = q_B(N)
    if xs < c:
        # a side state, q on the other side of the state-0 band: the band was jumped over
        istate[i0 + I_STATUS] = ST_ILLEGAL
        return ST_ILLEGAL
    # fast path, the common case of a step: the state stays (rows 1->1, 2->2, 3->3)
    if (ss == 1 and v > 0.0 and xs < qn) or (ss == 2 and v < 0.0) or (
            ss == 3 and xs >= fstate[f0 + S_X3B] - tol and xs <= fstate[f0 + S_X3E] + tol):
        istate[i0 + I_STATUS] = ST_OK
        return ST_OK
    status = ST_OK
    qext = fstate[f0 + S_QEXT]
    shift_add = 0.0
    nslip_add = 0
    for _ in range(6):
        if ss == 0:
            if v > 0.0:
                ss = 1
                continue
            if xs <= c + tol:
                break
            status = ST_ILLEGAL
            break
        elif ss == 1:
            if v > 0.0:
                if xs >= qn:
                    ss = 10
                    qext = xs
                break
            if xs <= qn + tol:
                ye = _branch(table, base, n, xs)
                status = _transition_down(table, base, n, k3, tol, xs, ye, fstate, f0)
                if status == ST_OK:
                    ss = 3
                break
            status = ST_ILLEGAL
            break
        elif ss == 10:
            if v > 0.0:
                if xs >= qn - tol:
                    if xs > qext:
                        qext = xs
                    break
                status = ST_ILLEGAL
                break
            if table[t0 + H_KIND] == KIND_BRAKE:
                if xs > qext:
                    qext = xs
                delta = qext - qn
                if delta > 0.0:
                    shift_add = delta
                    nslip_add = 1
                    xs -= delta
            ss = 2
            break
        elif ss == 2:
            if v < 0.0:
                break
            if xs >= qn:
                ss = 10
                qext = xs
                break
            yb = _branch(table, base + 3 * n, n, xs)
            status = _transition_up(table, base, n, k3, tol, xs, yb, fstate, f0)
            if status == ST_OK:
                ss = 3
            break
        else:  # ss == 3
            x3b = fstate[f0 + S_X3B]
            x3e = fstate[f0 + S_X3E]
            if xs >= x3b - tol and xs <= x3e + tol:
                break
            if v > 0.0 and xs > x3e:
                ss = 1
                continue
            if v < 0.0 and xs < x3b:
                ss = 2
                break
            status = ST_ILLEGAL
            break
    if status != ST_OK:
        # the state is left as it was (the transition helpers write only on success, and
        # every transition ends the loop)
        istate[i0 + I_STATUS] = status
        return status
    istate[i0 + I_STATE] = int(sign) * ss
    istate[i0 + I_STATUS] = ST_OK
    fstate[f0 + S_QEXT] = qext - shift_add
    if nslip_add:
        fstate[f0 + S_SHIFT] += sign * shift_add
        istate[i0 + I_NSLIP] += nslip_add
    return ST_OK


@njit(**NJIT_LEAF)
def hyst_step(table, t0, istate, i0, fstate, f0, q, qdot, t):
    """Update the state at ``(q, qdot, t)`` then return ``(force, status)`` at ``q``.

    Same result as ``hyst_update`` followed by ``hyst_force``; the common case (the state
    stays on its branch or transition segment) is evaluated in one pass.
    """
    s = istate[i0 + I_STATE]
    if s != 0 and qdot != 0.0:
        x = q - fstate[f0 + S_SHIFT]
        sign, base, n, k3 = branch_side(table, t0, s > 0)
        xs = sign * x
        v = sign * qdot
        ss = abs(s)
        if xs >= table[base + 1]:  # outside the state-0 band, on this side
            if ss == 1 and v > 0.0 and xs < table[base + n - 1]:
                istate[i0 + I_STATUS] = ST_OK
                return sign * _branch(table, base, n, xs), ST_OK
            if ss == 2 and v < 0.0:
                istate[i0 + I_STATUS] = ST_OK
                return sign * _branch(table, base + 3 * n, n, xs), ST_OK
            if ss == 3:
                tol = table[t0 + H_TOL]
                if xs >= fstate[f0 + S_X3B] - tol and xs <= fstate[f0 + S_X3E] + tol:
                    istate[i0 + I_STATUS] = ST_OK
                    return sign * (fstate[f0 + S_Y3B] + k3 * (xs - fstate[f0 + S_X3B])), ST_OK
            if ss == 10 and v > 0.0:
                qn = table[base + n - 1]
                if xs >= qn - table[t0 + H_TOL]:
                    # row 10 -> 10: beyond the working range, extend the slip extreme
                    if xs > fstate[f0 + S_QEXT]:
                        fstate[f0 + S_QEXT] = xs
                    istate[i0 + I_STATUS] = ST_OK
                    return sign * (table[base + n + n - 1]
                                   + table[base + 3 * n - 1] * (xs - qn)), ST_OK
    elif s == 0:
        # "any -> 0" row: inside the state-0 band the state stays 0 whatever qdot
        x = q - fstate[f0 + S_SHIFT]
        n_p = int(table[t0 + H_NP])
        nb = t0 + H_SIZE + 6 * n_p
        if x > -table[nb + 1] and x < table[t0 + H_SIZE + 1]:
            istate[i0 + I_STATUS] = ST_OK
            if x >= 0.0:
                return 1.0 * _branch(table, t0 + H_SIZE, n_p, x), ST_OK
            return -1.0 * _branch(table, nb, int(table[t0 + H_NN]), -x), ST_OK
    status = hyst_update(table, t0, istate, i0, fstate, f0, q, qdot, t)
    return hyst_force(table, t0, istate, i0, fstate, f0, q), status


@njit(**NJIT_LEAF)
def hyst_reset(istate, i0, fstate, f0, shift):
    """Initial state: state 0, no slips, the given cumulative shift, no transition segment."""
    istate[i0 + I_STATE] = 0
    istate[i0 + I_NSLIP] = 0
    istate[i0 + I_STATUS] = ST_OK
    for j in range(F_SIZE):
        fstate[f0 + j] = 0.0
    fstate[f0 + S_SHIFT] = shift


@njit(**NJIT_LEAF)
def hyst_trace(table, t0, istate, i0, fstate, f0, q, qdot, t, force, states):
    """Drive one element through a history: for each sample ``k`` update at
    ``(q[k], qdot[k], t[k])`` and write ``force[k]`` and ``states[k]``.

    Returns ``(status, k)``: ``(ST_OK, len(q))`` or the first failing status and its sample.
    The state arrays are left as they were after the last good sample.
    """
    for k in range(q.shape[0]):
        status = hyst_update(table, t0, istate, i0, fstate, f0, q[k], qdot[k], t[k])
        if status != ST_OK:
            return status, k
        force[k] = hyst_force(table, t0, istate, i0, fstate, f0, q[k])
        states[k] = istate[i0 + I_STATE]
    return ST_OK, q.shape[0]


@njit(**NJIT_LEAF)
def branch_potential(table, b, n, x):
    """Integral from 0 to ``x`` (side frame, x >= 0) of the branch whose ``q`` array starts at
    ``table[b]`` (this module's table layout)."""
    if x <= table[b]:
        return 0.0
    e = 0.0
    for j in range(n):
        lo = table[b + j]
        if x <= lo:
            break
        hi = x
        if j + 1 < n and table[b + j + 1] < x:
            hi = table[b + j + 1]
        Q0 = table[b + n + j]
        k = table[b + 2 * n + j]
        d = hi - lo
        e += Q0 * d + 0.5 * k * d * d
    return e


@njit(**NJIT_LEAF)
def hyst_stored(table, t0, istate, i0, fstate, f0, q):
    """Energy an element would return when unloaded along its backward (unloading) branch from
    ``q`` (table units: [J] for a force-displacement table); for a brake, deformation beyond
    the slip point stores nothing. Same arguments as :func:`hyst_force`."""
    x = q - fstate[f0 + S_SHIFT]
    s = istate[i0 + I_STATE]
    sign, base, n, _ = branch_side(table, t0, s > 0 or (s == 0 and x >= 0.0))
    xs = sign * x
    if table[t0 + H_KIND] == KIND_BRAKE and xs > table[base + n - 1]:
        xs = table[base + n - 1]
    return branch_potential(table, base + 3 * n, n, xs)
