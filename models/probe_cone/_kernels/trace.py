"""Probe-cone unit kernel, trace hooks: write the trace rows (:mod:`models._kernels.
trace_layout`) of the head, housing and latch contacts, the latch and capture-sensor
plungers, and the probe mechanism.

The time loop (:mod:`models.probe_cone._kernels.kernel`) and the stage derivative
(:mod:`models.probe_cone._kernels.stage`) call these hooks next to the routine they record,
only when ``tcx[TX_MASK] != 0`` (tracing on and the stage inside the window); each hook then
checks its group. A contact's relative velocity and law force are re-evaluated with the same
pure function the model uses (:func:`~models._kernels.contact_force.contact_wrench` on the
same twists), so the traced values are the ones applied; the model's arrays are only read.
"""
from __future__ import annotations

import math

from numba import njit

from models._kernels import NJIT, NJIT_LEAF
from models._kernels import hysteresis as hk
from models._kernels.contact_force import contact_wrench
from models.probe_cone._kernels.layout import (LF_DELTA, LF_F, LF_P, MC_PHID, MC_PSI, MC_PSID,
                                               MC_S, MC_SD, MC_TH, MC_THD, MC_UA, N_ELEM, N_LATCH,
                                               N_PL)
from models._kernels.trace_layout import (
    G_CONTACT, G_LATCH, G_MECHANISM, R_PC_ELEMENTS, R_PC_IMPLICIT_FRICTION, R_PC_MECHANISM,
    R_PC_PLUNGER, R_PC_SENSOR_FRICTION, TR_V0, contact_force_columns, contact_open, trace_open,
    traced)

__all__ = ["contact_row", "point_contact_row", "segment_contact_row", "mechanism_row",
           "plunger_rows", "element_rows", "sensor_friction_row", "implicit_friction_row"]


@njit(**NJIT_LEAF)
def contact_row(tr, trn, tcx, law, twa, twp, code, i, j, st, dn, nx, ny, nz, px, py, pz):
    """One contact row: the detector's outputs, the relative velocity (active link minus
    passive at ``p``) and the law's force on the passive unit (only for ``st`` = CONTACT).
    Returns the row (-1: none written) for the caller's input columns."""
    r, rvx, rvy, rvz = contact_open(tr, trn, tcx, code, i, j, st, dn, nx, ny, nz, px, py, pz,
                                    twa, 0, twp, 0)
    if r >= 0 and st == 1:     # CONTACT
        fn, dd, fx, fy, fz, a, b, c, d, e, f = contact_wrench(dn, nx, ny, nz, px, py, pz,
                                                             twa, twp, law)
        contact_force_columns(tr, r, fn, fx, fy, fz)
    return r


@njit(**NJIT_LEAF)
def point_contact_row(tr, trn, tcx, law, twa, twp, code, i, j, st, dn, nx, ny, nz, px, py,
                      pz, xs, ys, zs, rs, feat):
    """A sphere (head, roller) or point (pad end) vs the surface of revolution: inputs its
    centre (PU), radius and the meridian feature the detector reported."""
    r = contact_row(tr, trn, tcx, law, twa, twp, code, i, j, st, dn, nx, ny, nz, px, py, pz)
    if r >= 0:
        tr[r, TR_V0] = xs; tr[r, TR_V0 + 1] = ys; tr[r, TR_V0 + 2] = zs
        tr[r, TR_V0 + 3] = rs
        tr[r, TR_V0 + 4] = feat


@njit(**NJIT_LEAF)
def segment_contact_row(tr, trn, tcx, law, twa, twp, code, i, j, st, dn, nx, ny, nz, px, py,
                        pz, p1x, p1y, p1z, lx, ly, lz, feat):
    """A segment ``P1 + t L`` (pad vs mouth, latch reverse segment vs slot): inputs ``P1``,
    ``L`` (PU) and the feature (NaN: none)."""
    r = contact_row(tr, trn, tcx, law, twa, twp, code, i, j, st, dn, nx, ny, nz, px, py, pz)
    if r >= 0:
        tr[r, TR_V0] = p1x; tr[r, TR_V0 + 1] = p1y; tr[r, TR_V0 + 2] = p1z
        tr[r, TR_V0 + 3] = lx; tr[r, TR_V0 + 4] = ly; tr[r, TR_V0 + 5] = lz
        tr[r, TR_V0 + 6] = feat


@njit(**NJIT_LEAF)
def mechanism_row(tr, trn, tcx, mc, phi, q_ax, f_ax, q_psi, q_th, m_psi, m_th, q_tor, m_tor,
                  istate):
    """The probe mechanism at one stage: stroke, housing tangents, gimbal angles
    ``q1 = atan2(-u_Az, u_Ax)``, ``q2 = asin(u_Ay)``, torsion, their rates, the absorbers'
    spring parts and totals (with dampers); status: the axial element's state (+-10: the
    brake slips)."""
    if not traced(tcx, G_MECHANISM):
        return
    st = istate[0 * hk.I_SIZE + hk.I_STATE]
    r = trace_open(tr, trn, tcx, R_PC_MECHANISM, -1, -1, st)
    if r < 0:
        return
    v = TR_V0
    tr[r, v] = mc[MC_S]; tr[r, v + 1] = mc[MC_SD]
    tr[r, v + 2] = mc[MC_PSI]; tr[r, v + 3] = mc[MC_TH]
    tr[r, v + 4] = mc[MC_PSID]; tr[r, v + 5] = mc[MC_THD]
    uy = mc[MC_UA + 1]
    uy = 1.0 if uy > 1.0 else (-1.0 if uy < -1.0 else uy)
    tr[r, v + 6] = math.atan2(-mc[MC_UA + 2], mc[MC_UA])
    tr[r, v + 7] = math.asin(uy)
    tr[r, v + 8] = phi; tr[r, v + 9] = mc[MC_PHID]
    tr[r, v + 10] = q_ax; tr[r, v + 11] = f_ax
    tr[r, v + 12] = q_psi; tr[r, v + 13] = q_th
    tr[r, v + 14] = m_psi; tr[r, v + 15] = m_th
    tr[r, v + 16] = q_tor; tr[r, v + 17] = m_tor


@njit(**NJIT_LEAF)
def element_rows(tr, trn, tcx, mc, phi, istate, st):
    """Between steps, after the hysteresis updates: each element's coordinate, rate and state
    (status 1 on all rows when an update was refused)."""
    if not traced(tcx, G_MECHANISM):
        return
    for e in range(N_ELEM):
        r = trace_open(tr, trn, tcx, R_PC_ELEMENTS, e, -1, 0 if st == 0 else 1)
        if r < 0:
            return
        if e == 0:
            q = mc[MC_S]; qd = mc[MC_SD]
        elif e == 1:
            q = mc[MC_PSI]; qd = mc[MC_PSID]
        elif e == 2:
            q = mc[MC_TH]; qd = mc[MC_THD]
        else:
            q = phi; qd = mc[MC_PHID]
        tr[r, TR_V0] = q
        tr[r, TR_V0 + 1] = qd
        tr[r, TR_V0 + 2] = istate[e * hk.I_SIZE + hk.I_STATE]


@njit(**NJIT_LEAF)
def plunger_rows(tr, trn, tcx, latch, LF):
    """Between steps: each latch (0..N_LATCH-1) and capture sensor plunger, its trigger flag,
    retraction and the force it holds over the next step on the passive unit at its tip
    (PU); status the trigger flag."""
    if not traced(tcx, G_LATCH):
        return
    for i in range(N_PL):
        trig = latch[i] if i < N_LATCH else 0
        r = trace_open(tr, trn, tcx, R_PC_PLUNGER, i, -1, trig)
        if r < 0:
            return
        tr[r, TR_V0] = trig
        tr[r, TR_V0 + 1] = LF[i, LF_DELTA]
        if LF[i, LF_DELTA] > 0.0:
            for m in range(3):
                tr[r, TR_V0 + 2 + m] = LF[i, LF_F + m]
                tr[r, TR_V0 + 5 + m] = LF[i, LF_P + m]


@njit(**NJIT_LEAF)
def sensor_friction_row(tr, trn, tcx, vr, fx, hx, hy, hz):
    """After capture: the capture sensors' regularised axial friction on the socket wall, the
    head's axial slip velocity ``vr`` relative to the passive unit, the force ``fx`` on the
    passive unit along ``X_PU`` and its point (the head centre, PU)."""
    if not traced(tcx, G_LATCH):
        return
    r = trace_open(tr, trn, tcx, R_PC_SENSOR_FRICTION, -1, -1, 0)
    if r < 0:
        return
    tr[r, TR_V0] = vr
    tr[r, TR_V0 + 1] = fx
    tr[r, TR_V0 + 2] = hx
    tr[r, TR_V0 + 3] = hy
    tr[r, TR_V0 + 4] = hz


@njit(**NJIT_LEAF)
def implicit_friction_row(tr, trn, tcx, fx, fy, fz, hx, hy, hz):
    """With the head's contact friction implicit: the correction ``-dF`` it puts on the
    passive unit (PU axes; ``models.probe_cone._kernels.stage._implicit_head``), beside the
    explicit contact rows whose friction it corrects, at its point (the head centre, PU)."""
    if not traced(tcx, G_CONTACT):
        return
    r = trace_open(tr, trn, tcx, R_PC_IMPLICIT_FRICTION, -1, -1, 0)
    if r < 0:
        return
    tr[r, TR_V0] = fx
    tr[r, TR_V0 + 1] = fy
    tr[r, TR_V0 + 2] = fz
    tr[r, TR_V0 + 3] = hx
    tr[r, TR_V0 + 4] = hy
    tr[r, TR_V0 + 5] = hz
