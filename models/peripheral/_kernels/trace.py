"""Peripheral unit kernel, trace hooks: write the trace rows (:mod:`models._kernels.
trace_layout`) of the ring-ring contacts, the latches and capture sensors, and the ring
mechanism.

The time loop (:mod:`models.peripheral._kernels.kernel`) and the stage
(:mod:`models.peripheral._kernels.stage`) call these hooks right after (or around) the routine
they record, only when ``tx[TX_MASK] != 0`` (tracing on and the stage inside the window); each
hook then checks its group. A hook recomputes nothing the model keeps: where a routine's
intermediate is not stored (a contact's relative velocity and law force, a leg's absorber,
stop and damper forces) it re-evaluates the same pure function on the same inputs, so the
traced value is the one the model used, and the model's arrays are only read.

Twists: ``tw`` is ``sc[SC_TWR:SC_TWP + TW_SIZE]`` of the stage scratch, the ring's twist at
``0`` and the passive unit's at ``TW_SIZE`` (velocity of the reference point, omega, the
reference point; PU axes).
"""
from __future__ import annotations

from numba import njit

from models._kernels import NJIT, NJIT_LEAF
from models._kernels import hysteresis as hk
from models.peripheral._kernels import latch as pl
from models.peripheral._kernels import mechanism as km
from models._kernels.contact_force import contact_force
from models._kernels.contact_layout import C_BX, C_R, C_UX, NONE, TW_SIZE
from models._kernels.trace_layout import (
    G_LATCH, G_MECHANISM, G_SEARCH, R_CAPTURE, R_EDGE_EDGE, R_LATCH_BETWEEN, R_LATCH_STAGE,
    R_LATCH_STAGE_TOTAL, R_LEG_FORCES, R_LEGS_BETWEEN, R_RING, R_SENSOR, TR_V0, TX_SAVE,
    contact_force_columns, contact_open, trace_open, traced)

__all__ = ["contact_row", "fan_row", "fan_search_row", "seg_seg_row", "seg_circle_row",
           "point_row", "legs_row", "save_shifts", "legs_between_row", "ring_row", "save_latches",
           "latches_between_row", "save_acc", "latches_stage_row", "sensors_row",
           "capture_row"]


@njit(**NJIT_LEAF)
def contact_row(tr, trn, tx, law, tw, code, i, j, st, dn, nx, ny, nz, px, py, pz):
    """One ring-ring contact row: the detector's outputs, the relative velocity (ring minus
    passive at ``p``) and the force of the law ``law`` (digest 5) on the passive unit. Returns
    the row (-1: none written) for the caller's 12 input columns."""
    r, rvx, rvy, rvz = contact_open(tr, trn, tx, code, i, j, st, dn, nx, ny, nz, px, py, pz,
                                    tw, 0, tw, TW_SIZE)
    if r >= 0 and st == 1:     # CONTACT: the force the model applies (none on a failure)
        fn, dd, fx, fy, fz = contact_force(dn, nx, ny, nz, rvx, rvy, rvz, law)
        contact_force_columns(tr, r, fn, fx, fy, fz)
    return r


@njit(**NJIT_LEAF)
def _put3(tr, r, k, a, o):
    tr[r, TR_V0 + k] = a[o]
    tr[r, TR_V0 + k + 1] = a[o + 1]
    tr[r, TR_V0 + k + 2] = a[o + 2]


@njit(**NJIT_LEAF)
def fan_row(tr, trn, tx, law, tw, code, k, res, o, R, circ):
    """A fan-vs-circle contact (petal ``k``, generator ``res[8]``): inputs the fan frame's origin
    ``o`` and axis (row 0 of ``R``, PU) and the circle's centre and axis (PU)."""
    r = contact_row(tr, trn, tx, law, tw, code, k, res[8], res[0], res[1], res[2], res[3],
                    res[4], res[5], res[6], res[7])
    if r >= 0:
        _put3(tr, r, 0, o, 0)
        for m in range(3):
            tr[r, TR_V0 + 3 + m] = R[0, m]
        _put3(tr, r, 6, circ, C_BX)
        _put3(tr, r, 9, circ, C_UX)


@njit(**NJIT_LEAF)
def fan_search_row(tr, trn, tx, code, k, res, o, R, circ):
    """Any fan search of petal ``k`` (group ``search``), whatever its result: the inputs of
    :func:`~models._kernels.contact_segments.fan_vs_circle` that vary (the fan frame's origin
    ``o`` [m] and matrix ``R`` (PU -> fan frame), the circle's centre [m], axis and radius
    [m], PU) and its result ``res``: status, generator (``TR_J``), penetration [m], normal and
    point [m] (PU). With the fan table, the circle's side and ``dn_max`` of the run the row
    replays the search exactly."""
    if not traced(tx, G_SEARCH):
        return
    r = trace_open(tr, trn, tx, code, k, res[8], res[0])
    if r < 0:
        return
    _put3(tr, r, 0, o, 0)
    for a in range(3):
        for b in range(3):
            tr[r, TR_V0 + 3 + 3 * a + b] = R[a, b]
    _put3(tr, r, 12, circ, C_BX)
    _put3(tr, r, 15, circ, C_UX)
    tr[r, TR_V0 + 18] = circ[C_R]
    v = TR_V0 + 19
    tr[r, v] = res[1]
    tr[r, v + 1] = res[2]; tr[r, v + 2] = res[3]; tr[r, v + 3] = res[4]
    tr[r, v + 4] = res[5]; tr[r, v + 5] = res[6]; tr[r, v + 6] = res[7]


@njit(**NJIT_LEAF)
def seg_seg_row(tr, trn, tx, law, tw, i, j, res, ea, ep):
    """Active edge ``i`` vs passive edge ``j``: inputs both segments (start, vector; PU)."""
    r = contact_row(tr, trn, tx, law, tw, R_EDGE_EDGE, i, j, res[0], res[1], res[2], res[3],
                    res[4], res[5], res[6], res[7])
    if r >= 0:
        for m in range(6):
            tr[r, TR_V0 + m] = ea[i, m]
            tr[r, TR_V0 + 6 + m] = ep[j, m]


@njit(**NJIT_LEAF)
def seg_circle_row(tr, trn, tx, law, tw, code, i, res, seg, circ):
    """Edge ``i`` (``seg``: start, vector; PU) vs a boundary circle (centre, axis; PU)."""
    r = contact_row(tr, trn, tx, law, tw, code, i, -1, res[0], res[1], res[2], res[3],
                    res[4], res[5], res[6], res[7])
    if r >= 0:
        for m in range(6):
            tr[r, TR_V0 + m] = seg[m]
        _put3(tr, r, 6, circ, C_BX)
        _put3(tr, r, 9, circ, C_UX)


@njit(**NJIT_LEAF)
def point_row(tr, trn, tx, law, tw, code, i, st, dn, nx, ny, nz, px, py, pz, qx, qy, qz):
    """A ring-plane point vs a ring plane: inputs the point (PU) and the point as the plane
    test saw it (``q``; NaN to omit)."""
    r = contact_row(tr, trn, tx, law, tw, code, i, -1, st, dn, nx, ny, nz, px, py, pz)
    if r >= 0:
        tr[r, TR_V0] = px; tr[r, TR_V0 + 1] = py; tr[r, TR_V0 + 2] = pz
        tr[r, TR_V0 + 3] = qx; tr[r, TR_V0 + 4] = qy; tr[r, TR_V0 + 5] = qz


# ---- mechanism ------------------------------------------------------------------------------
@njit(**NJIT_LEAF)
def legs_row(tr, trn, tx, MP, kw, LS, table, toff, hist_i, hist_f, F):
    """Per leg, after :func:`~models.peripheral._kernels.mechanism.leg_forces`: length, rate,
    brake shift, compression, the absorber / end-stop / damper parts and the total ``F``;
    status: +1 the linear absorber's brake slips in compression, -1 in extension, 0 holds."""
    if not traced(tx, G_MECHANISM):
        return
    hyst = MP[km.MP_KIND] == km.KIND_HYSTERESIS
    for i in range(km.NL):
        L = kw[km.KW_L + i]
        ld = kw[km.KW_LD + i]
        s = LS[i * km.LS_SIZE + km.LS_SHIFT]
        c = MP[km.MP_L0 + i] + s - L
        st = 0
        if hyst:
            fa = hk.hyst_force(table, toff[i], hist_i, i * hk.I_SIZE, hist_f, i * hk.F_SIZE, c)
        else:
            fa = km._linear_absorber(MP, c)
            if c > MP[km.MP_CSLIP_C]:
                st = 1
            elif c < -MP[km.MP_CSLIP_T]:
                st = -1
        r = trace_open(tr, trn, tx, R_LEG_FORCES, i, -1, st)
        if r < 0:
            return
        v = TR_V0
        tr[r, v] = L; tr[r, v + 1] = ld; tr[r, v + 2] = s; tr[r, v + 3] = c
        tr[r, v + 4] = fa
        tr[r, v + 5] = km._stop_force(MP, L)
        tr[r, v + 6] = -MP[km.MP_C] * ld
        tr[r, v + 7] = F[i]
        for m in range(3):
            tr[r, v + 8 + m] = kw[km.KW_U + 3 * i + m]


@njit(**NJIT_LEAF)
def save_shifts(tx, LS):
    """Keep the legs' brake shifts before :func:`~models.peripheral._kernels.mechanism.
    legs_between` (for :func:`legs_between_row`)."""
    for i in range(km.NL):
        tx[TX_SAVE + i] = LS[i * km.LS_SIZE + km.LS_SHIFT]


@njit(**NJIT_LEAF)
def legs_between_row(tr, trn, tx, MP, kw, LS, st, leg):
    """Per leg, after the between-steps update: the brake shift before and after, the
    compression and the committed brake work; status 1 on the leg whose hysteresis element
    refused its transition."""
    if not traced(tx, G_MECHANISM):
        return
    for i in range(km.NL):
        o = i * km.LS_SIZE
        r = trace_open(tr, trn, tx, R_LEGS_BETWEEN, i, -1, 1 if (st != 0 and i == leg) else 0)
        if r < 0:
            return
        L = kw[km.KW_L + i]
        v = TR_V0
        tr[r, v] = L
        tr[r, v + 1] = kw[km.KW_LD + i]
        tr[r, v + 2] = tx[TX_SAVE + i]
        tr[r, v + 3] = LS[o + km.LS_SHIFT]
        tr[r, v + 4] = MP[km.MP_L0 + i] + LS[o + km.LS_SHIFT] - L
        tr[r, v + 5] = LS[o + km.LS_BRAKE_WORK]


@njit(**NJIT_LEAF)
def ring_row(tr, trn, tx, q, f_ext, m_ext, ddq):
    """The ring after :func:`~models.peripheral._kernels.mechanism.ring_accel`: pose ``q``,
    the external force and moment (AU axes, moment about the ring centre) and ``q''``."""
    if not traced(tx, G_MECHANISM):
        return
    r = trace_open(tr, trn, tx, R_RING, -1, -1, 0)
    if r < 0:
        return
    for m in range(6):
        tr[r, TR_V0 + m] = q[m]
        tr[r, TR_V0 + 12 + m] = ddq[m]
    for m in range(3):
        tr[r, TR_V0 + 6 + m] = f_ext[m]
        tr[r, TR_V0 + 9 + m] = m_ext[m]


# ---- latches, sensors, capture --------------------------------------------------------------
@njit(**NJIT_LEAF)
def save_latches(tx, ls):
    """Keep each latch's retraction and rate before :func:`~models.peripheral._kernels.latch.
    latches_between` (at most ``TX_NSAVE / 2`` latches)."""
    for i in range(ls.shape[0]):
        if 2 * i + 1 < 12:
            tx[TX_SAVE + 2 * i] = ls[i, pl.LS_X]
            tx[TX_SAVE + 2 * i + 1] = ls[i, pl.LS_V]


@njit(**NJIT_LEAF)
def latches_between_row(tr, trn, tx, h, lg, ls, trig, hf, st, bad):
    """Per latch, after the between-steps update: the step, the state before and after, the
    geometry (PU), the trigger flag, the guide contact and the force held over the next step
    (on the ring, at its point); status the update's status on the latch at fault."""
    if not traced(tx, G_LATCH):
        return
    for i in range(ls.shape[0]):
        r = trace_open(tr, trn, tx, R_LATCH_BETWEEN, i, -1, st if i == bad else NONE)
        if r < 0:
            return
        v = TR_V0
        tr[r, v] = h
        if 2 * i + 1 < 12:
            tr[r, v + 1] = tx[TX_SAVE + 2 * i]
            tr[r, v + 2] = tx[TX_SAVE + 2 * i + 1]
        _put3(tr, r, 3, lg[i], pl.LG_A)
        _put3(tr, r, 6, lg[i], pl.LG_N)
        tr[r, v + 9] = trig[i]
        tr[r, v + 10] = ls[i, pl.LS_X]
        tr[r, v + 11] = ls[i, pl.LS_V]
        tr[r, v + 12] = ls[i, pl.LS_FRL]
        tr[r, v + 13] = ls[i, pl.LS_DN]
        _put3(tr, r, 14, hf[i], pl.HF_F)
        _put3(tr, r, 17, hf[i], pl.HF_P)


@njit(**NJIT_LEAF)
def save_acc(tx, acc):
    """Keep the passive unit's force and moment in the stage accumulator before
    :func:`~models.peripheral._kernels.latch.latches_stage`."""
    for m in range(3):
        tx[TX_SAVE + m] = acc[pl.A_FP + m]
        tx[TX_SAVE + 3 + m] = acc[pl.A_MP + m]


@njit(**NJIT_LEAF)
def latches_stage_row(tr, trn, tx, lg, lat, stp, ls, trig, acc, st, bad):
    """After :func:`~models.peripheral._kernels.latch.latches_stage`: per triggered latch its
    held retraction, tip, the tip-vs-stop contact (re-evaluated) and the crest crossing; then
    the total force and moment (about the PU origin) these contacts put on the passive unit
    (the accumulator's change since :func:`save_acc`)."""
    if not traced(tx, G_LATCH):
        return
    for i in range(lat.shape[0]):
        if trig[i] == 0:
            continue
        j = int(lat[i, pl.LP_STOP])
        ax = lg[i, pl.LG_A]; ay = lg[i, pl.LG_A + 1]; az = lg[i, pl.LG_A + 2]
        s = lat[i, pl.LP_LEN] - ls[i, pl.LS_X]
        ex = ax + s * lg[i, pl.LG_N]
        ey = ay + s * lg[i, pl.LG_N + 1]
        ez = az + s * lg[i, pl.LG_N + 2]
        cst, dn, nx, ny, nz, px, py, pz, f = pl.stop_solid_contact(ex, ey, ez, stp, j,
                                                                   lat[i, pl.LP_DNMAX])
        cr, dc, cy, cz = pl.latch_crossing(ax, ay, az, ex, ey, ez, stp, j)
        r = trace_open(tr, trn, tx, R_LATCH_STAGE, i, j, cst)
        if r < 0:
            return
        v = TR_V0
        tr[r, v] = ls[i, pl.LS_X]
        tr[r, v + 1] = ex; tr[r, v + 2] = ey; tr[r, v + 3] = ez
        if cst != NONE:
            tr[r, v + 4] = dn
            tr[r, v + 5] = nx; tr[r, v + 6] = ny; tr[r, v + 7] = nz
            tr[r, v + 8] = px; tr[r, v + 9] = py; tr[r, v + 10] = pz
            tr[r, v + 11] = f
        tr[r, v + 12] = 1.0 if cr else 0.0
        if cr:
            tr[r, v + 13] = dc
    r = trace_open(tr, trn, tx, R_LATCH_STAGE_TOTAL, bad, -1, st)
    if r < 0:
        return
    for m in range(3):
        tr[r, TR_V0 + m] = acc[pl.A_FP + m] - tx[TX_SAVE + m]
        tr[r, TR_V0 + 3 + m] = acc[pl.A_MP + m] - tx[TX_SAVE + 3 + m]


@njit(**NJIT_LEAF)
def sensors_row(tr, trn, tx, so, sw):
    """Per capture sensor after :func:`~models.peripheral._kernels.latch.sensors_force`:
    stroke, force on the passive unit along ``X_PU``, its point (PU) and the switch."""
    if not traced(tx, G_LATCH):
        return
    for k in range(so.shape[0]):
        r = trace_open(tr, trn, tx, R_SENSOR, k, -1, 0)
        if r < 0:
            return
        tr[r, TR_V0] = so[k, pl.SO_DELTA]
        tr[r, TR_V0 + 1] = so[k, pl.SO_F]
        _put3(tr, r, 2, so[k], pl.SO_P)
        tr[r, TR_V0 + 5] = sw[k]


@njit(**NJIT_LEAF)
def capture_row(tr, trn, tx, cos_rel, gap, captured, trig):
    """The capture test between steps: cosine of the ring planes' relative angle, the axial gap
    [m], the capture flag and the number of triggered latches."""
    if not traced(tx, G_LATCH):
        return
    r = trace_open(tr, trn, tx, R_CAPTURE, -1, -1, 0)
    if r < 0:
        return
    n = 0
    for i in range(trig.shape[0]):
        n += trig[i]
    tr[r, TR_V0] = cos_rel
    tr[r, TR_V0 + 1] = gap
    tr[r, TR_V0 + 2] = captured
    tr[r, TR_V0 + 3] = n

