"""Peripheral (androgynous ring) docking kernel: two rigid spacecraft, the docking ring on its
six-leg mechanism, petal contacts, latches with mass and capture sensors.

One compiled function, :func:`run`, holds the whole time loop (fixed-step RK4, two rates, a
third step after capture); :func:`run_batch` evaluates many packed parameter rows in parallel
(``prange``). The readable layer is :mod:`models.peripheral.simulate`; the layouts are in
:mod:`models.peripheral._kernels.run_layout` (``P``, ``Y``, ``O``, ``EV``, ``ST``, ``INFO``)
and :mod:`models.peripheral._kernels.layout` (geometry tables).

Model
-----
* Active (1) and passive (2) spacecraft: rigid bodies as in the probe-cone kernel (inertial
  centre of mass and velocity, scalar-first quaternion inertial -> body, body rates,
  Newton-Euler in body axes), the same initial-condition convention (:func:`initial_state`)
  and optional constant thrust of the active vehicle through its centre of mass.
* Docking ring: pose ``q`` in AU (digest 9.2) on the six massless legs of
  :mod:`models.peripheral._kernels.mechanism`; the legs' base reaction acts on vehicle 1.
  Stage order and the frames: :mod:`models.peripheral._kernels.stage`.
* Contacts every stage, in PU axes, with the penalty law of digest 5 (``P[P_LAW:]``, friction
  regularised as in the probe-cone unit): active fans vs the passive inner circle and passive
  fans vs the active inner circle (``fan_vs_circle``, dichotomy or, with ``P_EXHAUSTIVE``,
  brute force), active vs passive side-face edges (segment-segment, the force at the middle
  of the common perpendicular so that the contact does not depend on which ring is active),
  edges vs the mating inner circle (segment-circle), ring-plane points of each ring vs the
  other ring plane. Reading:
  the digest lists only the active points vs the passive plane (9.4); by the unit's androgyny
  the passive points vs the active plane are added, which changes nothing while the active
  points carry the load and keeps a tilted mated ring from passing through. With ``P_PRUNE``
  the pairs that bounding spheres prove apart are skipped (exact: the same contacts, summed in
  the same order; :func:`~models.peripheral._kernels.stage.ring_bounds`).
* Latches (digest 9.7) and capture sensors (9.8): :mod:`models.peripheral._kernels.latch`.
  Between steps :func:`~models.peripheral._kernels.latch.latches_between` advances the latches
  implicitly with the step just taken and sets the forces held over the next step; with
  ``P_H_LATCH`` > 0 a step longer than it is cut into sub-steps of at most ``P_H_LATCH``
  over the latch geometry interpolated from the step's start to its end
  (:func:`~models.peripheral._kernels.latch.latches_between_sub`), and a latch's trigger is
  timed at its sub-step (``EV_LATCH``). Triggered latches' contacts and the sensors act
  inside the stages. ``P_FULL_NORMAL`` (1 in the unit's
  run) makes the latches transmit their contact force's full normal, not only its component
  along the latch axis as the paper does (kept as the option 0): for a tip sliding on a
  frictionless face with normal ``n_R`` the latch spring absorbs ``f_n (n_R . v_rel)`` while the
  axial-only transmission takes ``f_n (n_L . n_R)(n_L . v_rel)`` from the vehicles, so only the
  full normal keeps the energy ledger.
* Between steps: leg brake slips / hysteresis (``legs_between``), latches, capture
  (``capture_state``: ring planes aligned within ``P_COS_TOL``, ``P_GAP_TOL`` and one latch of
  each pair triggered), events, and the two-rate switch: the small step while the active
  geometry's bounding band along ``X_PU`` reaches within ``P_MARGIN`` of the passive petals'
  tops (or a leg is within ``P_LEG_MARGIN`` of an end stop), the large step otherwise, the
  captured step ``P_H_CAPT`` after capture, and ``P_H_SETTLED`` from ``P_T_SETTLE`` after
  capture on. With ``P_FREE_TOUCH`` the large step is taken, whatever the band, until a step
  would make the first touch: a ring-ring contact or a capture sensor at any of its stages,
  or any of those or a latch on its stop at its end (:func:`~models._kernels.
  peripheral_latch.latches_touch`); that step is retaken from its start (state, sensor
  flags and trace rows restored) at the switch's step, which rules from then on
  (``INFO_T_TOUCH``). The band is a box around interleaved petals that overlap from the
  start in the reference, so alone it takes the small step from ``t = 0``; before the touch
  the vehicles fly free and the ring sits on its unloaded legs.

  Physics reading of the captured phase: the ring is held on its seat (the twelve
  ring-plane points, the fans and edges on the inner circles, 20-60 um deep) only by the
  legs' forces, the triggered latches rarely touching their locking faces; the vehicles'
  swing on the legs moves that load, and the light ring rocks on its seat, its contacts
  opening and closing hundreds of times a second. Each onset is a jump ``c_D dn'`` of the
  linear law that a fixed step crosses at first order, and with the contacts' damping and
  regularised friction explicit a step of a few milliseconds books dissipation the motion
  never lost. With ``P_IMPLICIT`` the stages after capture take those velocity terms
  implicitly on the ring (:mod:`models.peripheral._kernels.implicit`, ``sc[SC_HIMP]`` =
  ``gamma h``, the step known before the first stage), so that the seat's stiffness bounds
  the step; the captured transient (while the vehicles still swing) and the settled motion
  each take their own (``docs/design/peripheral_captured_step.rst``: ledger and symmetry by step).

Energy ledger (channels of the probe-cone unit where the quantity is the same)::

    energy_kinetic + energy_stored + energy_dissipated_brake + energy_dissipated_dampers
        + energy_dissipated_contact - thrust_work - latch_work = constant

``energy_kinetic``: both vehicles and the ring; ``energy_stored``: leg springs and end stops,
the contacts' elastic energy (integral of ``k dn d(dn)/dt``), the sensor springs;
``latch_work``: the work of the held latch forces on the vehicles and the ring (the latches
have their own exact ledger, ``energy_latch + energy_dissipated_latch = -latch_work`` up to
the held-force discretisation of order ``h``).

Event times are step ends. An abort stores the model time, the primitive pair (``PAIR_*``)
and its index in ``info``.

Trace (digest 10): with ``P[P_TR_MASK] != 0`` every stage whose time lies in
``[P[P_TR_T0], P[P_TR_T1]]`` records the selected groups' routines (contacts, latches and
sensors, mechanism) into the buffer ``tr`` (:mod:`models._kernels.trace_layout`, hooks in
:mod:`models.peripheral._kernels.trace`); tracing only reads the state, so the results are the
same with it on or off, and with it off each hook costs one comparison. With ``P_IMPLICIT``
the interface loads and the ring's traced external wrench after capture include the implicit
correction, which no contact row carries.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from models._kernels import NJIT, NJIT_LEAF
from models.peripheral._kernels import latch as pl
from models.peripheral._kernels import mechanism as km
from models.peripheral._kernels import trace as pt
from models._kernels.contact_layout import C_SIZE, NONE, TW_O
from models.peripheral._kernels.run_layout import *  # noqa: F401,F403  (re-exported)
from models.peripheral._kernels.run_layout import (EV_CAPTURE, EV_FIRST, EV_LATCH, EV_SEPARATION,
                                                   INFO_INDEX, INFO_PAIR, INFO_SMALL_STEPS,
                                                   INFO_STEPS, INFO_T_END, INFO_T_FAIL, N_EV, NCH,
                                                   NY, O_AR, O_CAPTURE, O_CONTACT, O_DLATCH,
                                                   O_EBRAKE, O_ECONT, O_EDAMP, O_EK, O_ELATCH,
                                                   O_ES, O_FIF, O_LATCH, O_LEG, O_LEGF, O_MIF,
                                                   O_PANG, O_PLIN, O_PR, O_REL, O_RING, O_RING_ANG,
                                                   O_SENSOR, O_T, O_WLATCH, O_WTHRUST, P_COS_TOL,
                                                   P_DT_OUT, P_FULL_NORMAL, P_G1, P_G2, P_GAP_TOL,
                                                   P_H_CAPT, P_H_LARGE, P_H_LATCH, P_H_SMALL, P_IC,
                                                   P_IM1, P_IM2, P_J1, P_J2, P_JI1, P_JI2, P_L1,
                                                   P_L2, P_LEG_MARGIN, P_M1, P_M2, P_MARGIN, P_MP,
                                                   P_Q0, P_RA, P_T_END, P_TR_MASK, P_TR_T0,
                                                   P_TR_T1, P_W2, P_XA_HI, P_XA_LO, P_XP_LO,
                                                   PAIR_LATCH_GUIDE, PAIR_LEG, ST_HYSTERESIS,
                                                   ST_OK, ST_PENETRATION, ST_START_CONTACT, Y_DQR,
                                                   Y_ECDISS, Y_ECEL, Y_EDAMP, Y_Q1, Y_Q2, Y_QR,
                                                   Y_R1, Y_R2, Y_V1, Y_V2, Y_W1, Y_W2, Y_WLATCH,
                                                   Y_WTHR)
from models.peripheral._kernels.stage import (M_A1, M_A2, M_AAU, M_APAU, M_APR, M_APU, M_G1, M_G2,
                                              M_I, M_J1, M_J2, M_JI1, M_JI2, NM, NSC, SC_ACC,
                                              SC_FIF, SC_HIMP, SC_MIF, SC_NCONT, SC_OM, SC_RAU,
                                              SC_RC, SC_RPU, SC_TWR, SC_VAU, SC_VC, SC_VOA, SC_VPU,
                                              SC_W1I, SC_W2I, SC_WRI, frames, moving_geometry,
                                              ring_bounds, stage)
from models._kernels.free_flight import fill_before_start
from models.peripheral._kernels.implicit import GAMMA
from models.peripheral._kernels.run_layout import (INFO_T_TOUCH, P_FREE_TOUCH, P_H_SETTLED,
                                                   P_IMPLICIT, P_T_PRE, P_T_SETTLE)
from models._kernels.frames import axis_rotation
from models._kernels.rigid_body import dcm_to_quat, quat_normalize, quat_to_dcm
from models._kernels.trace_layout import STAGE_BETWEEN, TR_NCOL, TRN_DROPPED, TRN_ROWS, \
    TRN_SIZE, TX_MASK, trace_begin, trace_stage

__all__ = ["initial_state", "run", "run_batch"]


@njit(**NJIT_LEAF)
def _m3(P, o, A):
    for i in range(3):
        for j in range(3):
            A[i, j] = P[o + 3 * i + j]


@njit(**NJIT)
def initial_state(P, y, M):
    """Fill ``y`` (NY) from the 12 initial conditions ``P[P_IC:]`` (the probe-cone unit's
    convention): the passive vehicle at the inertial origin, axes aligned, body rates
    ``P[P_W2:]``; the AU origin at ``rel_pos`` (PU axes) with ``A_PAU = R_x(roll) R_y(pitch)
    R_z(yaw)``, relative velocity and rate in PU axes; the ring at its ready pose ``P[P_Q0:]``
    at rest relative to AU; ledger accumulators zero. ``M`` must hold ``M_G1``, ``M_G2``."""
    ic = P[P_IC:P_IC + 12]
    for k in range(NY):
        y[k] = 0.0
    y[Y_Q2] = 1.0
    for k in range(3):
        y[Y_W2 + k] = P[P_W2 + k]
    G1 = M[M_G1]
    APU = M[M_G2]                      # A2 = I
    w2 = P[P_W2:P_W2 + 3]
    l2 = P[P_L2:P_L2 + 3]
    vpu = np.array([w2[1] * l2[2] - w2[2] * l2[1], w2[2] * l2[0] - w2[0] * l2[2],
                    w2[0] * l2[1] - w2[1] * l2[0]])
    Rx = np.empty((3, 3)); Ry = np.empty((3, 3)); Rz = np.empty((3, 3))
    axis_rotation(0, ic[6], Rx)
    axis_rotation(1, ic[7], Ry)
    axis_rotation(2, ic[8], Rz)
    APAU = Rx @ (Ry @ Rz)
    AAU = APAU @ APU
    A1 = G1.T @ AAU
    q = np.empty(4)
    dcm_to_quat(A1, q)
    for k in range(4):
        y[Y_Q1 + k] = q[k]
    quat_to_dcm(y, Y_Q1, A1)
    rau = l2 + APU.T @ ic[0:3]
    w1i = w2 + APU.T @ ic[9:12]
    vau = vpu + APU.T @ ic[3:6]
    l1i = A1.T @ P[P_L1:P_L1 + 3]
    w1b = A1 @ w1i
    for k in range(3):
        y[Y_W1 + k] = w1b[k]
        y[Y_R1 + k] = rau[k] - l1i[k]
    y[Y_V1] = vau[0] - (w1i[1] * l1i[2] - w1i[2] * l1i[1])
    y[Y_V1 + 1] = vau[1] - (w1i[2] * l1i[0] - w1i[0] * l1i[2])
    y[Y_V1 + 2] = vau[2] - (w1i[0] * l1i[1] - w1i[1] * l1i[0])
    for k in range(6):
        y[Y_QR + k] = P[P_Q0 + k]


@njit(**NJIT_LEAF)
def _legs_near(P, kw):
    """True when a leg is within its margin ``P_LEG_MARGIN`` of an end stop."""
    lo = P[P_MP + km.MP_LMIN] + P[P_LEG_MARGIN]
    up = P[P_MP + km.MP_LMAX] - P[P_LEG_MARGIN]
    for i in range(km.NL):
        L = kw[km.KW_L + i]
        if L < lo or L > up:
            return True
    return False


@njit(**NJIT_LEAF)
def _near(P, M, sc, kw):
    """Two-rate switch: True when the active geometry's band along X_PU reaches within the gap
    margin of the passive petals' tops, or a leg is within its margin of an end stop."""
    R = M[M_APR]
    cx = sc[SC_TWR + TW_O]
    a = R[0, 0] * P[P_XA_LO]
    b = R[0, 0] * P[P_XA_HI]
    hi = cx + (a if a > b else b) + P[P_RA] * math.sqrt(R[1, 0] ** 2 + R[2, 0] ** 2)
    if hi > P[P_XP_LO] - P[P_MARGIN]:
        return True
    return _legs_near(P, kw)


@njit(**NJIT_LEAF)
def _sensed(so):
    """True when a capture sensor touches the passive ring plane (its stroke is positive)."""
    for k in range(so.shape[0]):
        if so[k, pl.SO_DELTA] > 0.0:
            return True
    return False


#: output channels that keep their t = 0 value in free flight before the start
#: (:func:`_free_flight_before`): ring pose, leg lengths, the 0/1 flags, interface loads
_HELD_BEFORE_START = np.array(
    [O_RING, O_RING + 1, O_RING + 2, O_RING_ANG, O_RING_ANG + 1, O_RING_ANG + 2,
     O_LEG, O_LEG + 1, O_LEG + 2, O_LEG + 3, O_LEG + 4, O_LEG + 5, O_CONTACT,
     O_SENSOR, O_SENSOR + 1, O_SENSOR + 2, O_CAPTURE,
     O_LATCH, O_LATCH + 1, O_LATCH + 2, O_LATCH + 3, O_LATCH + 4, O_LATCH + 5,
     O_FIF, O_FIF + 1, O_FIF + 2, O_MIF, O_MIF + 1, O_MIF + 2,
     O_LEGF, O_LEGF + 1, O_LEGF + 2, O_LEGF + 3, O_LEGF + 4, O_LEGF + 5], dtype=np.int64)


@njit(**NJIT)
def _free_flight_before(M, w1_0, w2_0, chan, out, n_pre, dt_out):
    """Fill the ``n_pre`` output rows before ``t = 0`` from the recorded row at ``t = 0``
    (:func:`~models._kernels.free_flight.fill_before_start`).

    Before the start plane the vehicles fly free with the rings apart (a run whose rings touch
    at ``t = 0`` stops with ``ST_START_CONTACT`` and writes no row). Held at their ``t = 0``
    values (:data:`_HELD_BEFORE_START`), each the model's own free flight:

    * ring pose ``ring_*`` and ``leg_*``: :func:`initial_state` puts the ring at its ready
      pose, every leg at its free length (no spring force), at rest relative to AU, so the
      legs carry no load and the ring stays there. Left out: the ring's inertial load while
      vehicle 1 turns, ``m_R |w|^2 r`` = 40 kg x (3e-2 rad/s)^2 x 4 m = 0.14 N (reference
      preset) on the legs' caged preload (5e5 N/m each): the ring moves 8e-8 m after the
      start (``tests/models/test_peripheral_free_flight.py``).
    * ``contact``, ``capture_sensor_*``, ``capture``, ``latch_*``: 0, nothing touches.
    * ``interface_force_*``, ``interface_moment_*``: 0, no contact and no latch holds.
    * ``leg_force_*``: the legs' forces at ``t = 0`` (0: at their free lengths and at rest).

    The body rates follow Euler's torque-free equations backwards from their ``t = 0`` values,
    each vehicle with its own inertia: the ring moves with vehicle 1 but is not added to its
    inertia (reference preset: 40 kg about 4 m from the centre of mass, 1.4 % of the
    transverse 4.5e4 kg m^2; against a run started 2 s earlier with the vehicles turning at
    1-3e-2 rad/s the active rates differ by 2.6e-6 rad/s of a 3.5e-4 rad/s change, the
    passive ones by 6e-17). The relative state, the energies and the momenta are NaN before
    the start.
    """
    fill_before_start(M[M_J1], M[M_JI1], M[M_J2], M[M_JI2], w1_0, w2_0, chan,
                      _HELD_BEFORE_START, O_T, O_AR, O_PR, out, n_pre, dt_out)


@njit(**NJIT)
def _record(t, y, P, M, sc, kw, LS, table, toff, hist_i, hist_f, sw, latch_out, captured,
            tot, row):
    """One output row (``O_*``) of the state ``y`` after :func:`stage` was evaluated on it."""
    row[O_T] = t
    for k in range(3):
        row[O_RING + k] = y[Y_QR + k]
    row[O_RING_ANG] = y[Y_QR + 5]
    row[O_RING_ANG + 1] = y[Y_QR + 4]
    row[O_RING_ANG + 2] = y[Y_QR + 3]
    for i in range(6):
        row[O_LEG + i] = kw[km.KW_L + i]
    row[O_CONTACT] = 1.0 if sc[SC_NCONT] > 0.0 else 0.0
    for k in range(3):
        row[O_SENSOR + k] = sw[k]
    row[O_CAPTURE] = 1.0 if captured else 0.0
    for i in range(6):
        row[O_LATCH + i] = latch_out[i]
    for k in range(3):
        row[O_AR + k] = y[Y_W1 + k]
        row[O_PR + k] = y[Y_W2 + k]
    APU = M[M_APU]
    for (a, b, base) in ((SC_RAU, SC_RPU, O_REL), (SC_VAU, SC_VPU, O_REL + 3),
                         (SC_W1I, SC_W2I, O_REL + 9)):
        dx = sc[a] - sc[b]
        dy = sc[a + 1] - sc[b + 1]
        dz = sc[a + 2] - sc[b + 2]
        for k in range(3):
            row[base + k] = APU[k, 0] * dx + APU[k, 1] * dy + APU[k, 2] * dz
    B = M[M_APAU]
    sp = -B[0, 2]
    sp = 1.0 if sp > 1.0 else (-1.0 if sp < -1.0 else sp)
    row[O_REL + 6] = math.atan2(B[1, 2], B[2, 2])
    row[O_REL + 7] = math.asin(sp)
    row[O_REL + 8] = math.atan2(B[0, 1], B[0, 0])
    for k in range(3):
        row[O_FIF + k] = sc[SC_FIF + k]
        row[O_MIF + k] = sc[SC_MIF + k]
    # energies
    m1 = P[P_M1]
    m2 = P[P_M2]
    MP = P[P_MP:]
    ek = 0.0
    for k in range(3):
        ek += 0.5 * (m1 * y[Y_V1 + k] ** 2 + m2 * y[Y_V2 + k] ** 2)
    for (jo, wo) in ((M_J1, Y_W1), (M_J2, Y_W2)):
        J = M[jo]
        for i in range(3):
            ek += 0.5 * y[wo + i] * (J[i, 0] * y[wo] + J[i, 1] * y[wo + 1] + J[i, 2] * y[wo + 2])
    ek += km.ring_kinetic_energy(MP, y[Y_QR:Y_QR + 6], y[Y_DQR:Y_DQR + 6], kw,
                                 sc[SC_VOA:SC_VOA + 3], sc[SC_OM:SC_OM + 3])
    le = np.empty(2)
    km.legs_energy(MP, kw, LS, table, toff, hist_i, hist_f, le)
    row[O_EK] = ek
    F = np.empty(km.NL)
    km.leg_forces(MP, kw, LS, table, toff, hist_i, hist_f, F)
    for i in range(km.NL):
        row[O_LEGF + i] = F[i]
    row[O_ES] = le[0] + y[Y_ECEL] + sc[SC_ACC + pl.A_ESENS]
    row[O_EBRAKE] = le[1]
    row[O_EDAMP] = y[Y_EDAMP]
    row[O_ECONT] = y[Y_ECDISS]
    row[O_WTHRUST] = y[Y_WTHR]
    row[O_WLATCH] = y[Y_WLATCH]
    row[O_ELATCH] = tot[pl.T_ESPRING] + tot[pl.T_EKIN]
    row[O_DLATCH] = tot[pl.T_DNUM] + tot[pl.T_DSTOP]
    # momenta: vehicles and ring
    mr = MP[km.MP_MASS]
    for k in range(3):
        row[O_PLIN + k] = m1 * y[Y_V1 + k] + m2 * y[Y_V2 + k] + mr * sc[SC_VC + k]
    hx = 0.0; hy = 0.0; hz = 0.0
    for (ro, vo, m) in ((Y_R1, Y_V1, m1), (Y_R2, Y_V2, m2)):
        hx += m * (y[ro + 1] * y[vo + 2] - y[ro + 2] * y[vo + 1])
        hy += m * (y[ro + 2] * y[vo] - y[ro] * y[vo + 2])
        hz += m * (y[ro] * y[vo + 1] - y[ro + 1] * y[vo])
    r = sc[SC_RC:SC_RC + 3]
    v = sc[SC_VC:SC_VC + 3]
    hx += mr * (r[1] * v[2] - r[2] * v[1])
    hy += mr * (r[2] * v[0] - r[0] * v[2])
    hz += mr * (r[0] * v[1] - r[1] * v[0])
    for (ao, jo, wo) in ((M_A1, M_J1, Y_W1), (M_A2, M_J2, Y_W2)):
        A = M[ao]
        J = M[jo]
        for i in range(3):
            hb = J[i, 0] * y[wo] + J[i, 1] * y[wo + 1] + J[i, 2] * y[wo + 2]
            hx += A[i, 0] * hb
            hy += A[i, 1] * hb
            hz += A[i, 2] * hb
    # ring: inertial DCM A_R A_AU, spin angular momentum (A_R A_AU)^T J_R (A_R A_AU) w
    AR = kw[km.KW_A:km.KW_A + 9].reshape((3, 3))
    AA = M[M_AAU]
    w = sc[SC_WRI:SC_WRI + 3]
    wb = np.empty(3)
    for i in range(3):
        s = 0.0
        for j in range(3):
            aij = AR[i, 0] * AA[0, j] + AR[i, 1] * AA[1, j] + AR[i, 2] * AA[2, j]
            s += aij * w[j]
        wb[i] = s
    for i in range(3):
        hb = MP[km.MP_J + 3 * i] * wb[0] + MP[km.MP_J + 3 * i + 1] * wb[1] \
            + MP[km.MP_J + 3 * i + 2] * wb[2]
        for j in range(3):
            aij = AR[i, 0] * AA[0, j] + AR[i, 1] * AA[1, j] + AR[i, 2] * AA[2, j]
            if j == 0:
                hx += aij * hb
            elif j == 1:
                hy += aij * hb
            else:
                hz += aij * hb
    row[O_PANG] = hx
    row[O_PANG + 1] = hy
    row[O_PANG + 2] = hz


@njit(**NJIT_LEAF)
def _fail(info, t, pair, index):
    info[INFO_T_FAIL] = t
    info[INFO_PAIR] = pair
    info[INFO_INDEX] = index


@njit(**NJIT)
def run(P, fa, fp, eaa, ep, pa, pp, ca, cp, plane, latg, lat, stp, seng, sen, table_in, toff,
        hist_i0, hist_f0, chan, out, ev, info, tr, trn):
    """Simulate one docking.

    Parameters
    ----------
    P : float64[NP]
        Packed parameters (``P_*``); not modified.
    fa, fp : float64[3, n_gen, F_NCOL]
        Generator fans of the active petals (ring axes) and of the passive petals (PU).
    eaa, ep : float64[12, SEG_NCOL]
        Side-face edges, active (ring axes) and passive (PU).
    pa, pp : float64[6, 3]
        Ring-plane points ``B1, B2``, active (ring axes) and passive (PU).
    ca, cp : float64[C_SIZE]
        Inner boundary circles, active (ring axes) and passive (PU).
    plane : float64[PL_SIZE]
        The ring-plane annulus (passive in PU; the same table serves the active ring in its
        own axes with ``x`` reversed).
    latg : float64[6, LA_NCOL]
        Latch base points and directions in ring axes (geometry ``LA_*``).
    lat, stp : float64[6, LP_SIZE], float64[3, SP_SIZE]
        Latch and stop parameters (:mod:`models.peripheral._kernels.latch`).
    seng, sen : float64[3, SE_NCOL], float64[3, SN_SIZE]
        Capture-sensor spheres in ring axes and their spring parameters.
    table_in, toff, hist_i0, hist_f0
        Leg hysteresis elements and their fresh state (empty for the linear absorber); not
        modified.
    chan : int64[:]
        Output channels to record (``O_*``).
    out : float64[n_out, len(chan)]
        Samples (written): ``n_pre = round(P[P_T_PRE] / P[P_DT_OUT])`` rows of the free flight
        before the start at ``t = -n_pre dt_out .. -dt_out`` (:func:`_free_flight_before`),
        then ``t = k P[P_DT_OUT]`` for ``k = 0, 1, ...`` while ``t <= P[P_T_END]``; NaN after a
        failure or the end (a run that fails at ``t = 0`` writes no row).
    ev : float64[N_EV]
        Event times [s] (NaN: did not happen).
    info : float64[NINFO]
        Run information (``INFO_*``).
    tr : float64[n_rows, TR_NCOL]
        Trace buffer (:mod:`models._kernels.trace_layout`), written from row 0 when
        ``P[P_TR_MASK] != 0``; ``(0, TR_NCOL)`` with tracing off.
    trn : int64[TRN_SIZE]
        Rows written and rows dropped (buffer full); zeroed here.

    Returns
    -------
    int : ``ST_OK`` or the first failure (``ST_*``).
    """
    MP = P[P_MP:]
    M = np.zeros((NM, 3, 3))
    _m3(P, P_G1, M[M_G1])
    _m3(P, P_G2, M[M_G2])
    _m3(P, P_J1, M[M_J1])
    _m3(P, P_JI1, M[M_JI1])
    _m3(P, P_J2, M[M_J2])
    _m3(P, P_JI2, M[M_JI2])
    for k in range(3):
        M[M_I, k, k] = 1.0
    for k in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[k, j] = np.nan
    for k in range(N_EV):
        ev[k] = np.nan
    for k in range(info.shape[0]):
        info[k] = 0.0
    info[INFO_T_TOUCH] = np.nan
    table = table_in.copy()
    hist_i = hist_i0.copy()
    hist_f = hist_f0.copy()
    LS = np.zeros(km.NL * km.LS_SIZE)
    nl = lat.shape[0]
    ls = np.zeros((nl, pl.LS_SIZE))
    trig = np.zeros(nl, dtype=np.int64)
    hf = np.zeros((nl, pl.HF_SIZE))
    tot = np.zeros(pl.T_SIZE)
    latch_out = np.zeros(nl, dtype=np.int64)
    lg = np.zeros((nl, pl.LG_SIZE))
    lg_prev = np.zeros((nl, pl.LG_SIZE))
    lgs = np.zeros((nl, pl.LG_SIZE))
    tfrac = np.ones(nl)    # where in the last step a latch triggered (1: at its end)
    ns = sen.shape[0]
    sw = np.zeros(ns, dtype=np.int64)
    so = np.zeros((ns, pl.SO_SIZE))
    ps = np.zeros((ns, 3))
    ea = np.zeros((eaa.shape[0], eaa.shape[1]))
    cap = np.zeros(C_SIZE)
    kw = np.zeros(km.KW_SIZE)
    sc = np.zeros(NSC)
    ring_bounds(fa, fp, eaa, ep, sc)
    row = np.zeros(NCH)
    o_pass = np.zeros(3)
    n_pair = 0
    for i in range(nl):
        if int(lat[i, pl.LP_PAIR]) + 1 > n_pair:
            n_pair = int(lat[i, pl.LP_PAIR]) + 1
    tx, tr_mask, tr_t0, tr_t1 = trace_begin(P, P_TR_MASK, P_TR_T0, P_TR_T1, trn)
    y = np.empty(NY)
    initial_state(P, y, M)
    k1 = np.empty(NY)
    k2 = np.empty(NY)
    k3 = np.empty(NY)
    k4 = np.empty(NY)
    yt = np.empty(NY)
    kc = np.empty(NY)
    y_save = np.empty(NY)
    sw_save = np.zeros(ns, dtype=np.int64)
    rows0 = 0
    dropped0 = 0
    free_touch = P[P_FREE_TOUCH] != 0.0
    touched = False
    full_normal = P[P_FULL_NORMAL] != 0.0
    dt_out = P[P_DT_OUT]
    t_stop = P[P_T_END] + 1e-9 * dt_out
    n_out = out.shape[0]
    n_pre = int(P[P_T_PRE] / dt_out + 0.5)
    w1_0 = y[Y_W1:Y_W1 + 3].copy()
    w2_0 = y[Y_W2:Y_W2 + 3].copy()
    h_small = P[P_H_SMALL]
    h_latch = P[P_H_LATCH]
    h_large = P[P_H_LARGE]
    h_capt = P[P_H_CAPT]
    h_settled = P[P_H_SETTLED]
    t_settle = P[P_T_SETTLE]
    implicit = P[P_IMPLICIT] != 0.0
    t = 0.0
    h_prev = 0.0
    k_out = 0
    n_steps = 0
    n_small = 0
    captured = False
    was_contact = False
    status = ST_OK
    while True:
        # ---- between steps (state at the end of the step just taken)
        frames(y, P, M, sc, kw)
        trace_stage(tx, tr_mask, tr_t0, tr_t1, t, n_steps, STAGE_BETWEEN)
        if tx[TX_MASK] != 0.0:
            pt.save_shifts(tx, LS)
        st, leg = km.legs_between(MP, kw, LS, table, toff, hist_i, hist_f, t)
        if tx[TX_MASK] != 0.0:
            pt.legs_between_row(tr, trn, tx, MP, kw, LS, st, leg)
        if st != km.ST_OK:
            status = ST_HYSTERESIS
            _fail(info, t, PAIR_LEG, leg)
            break
        moving_geometry(M, sc, latg, seng, lg, ps)
        if tx[TX_MASK] != 0.0:
            pt.save_latches(tx, ls)
        if h_latch > 0.0 and h_prev > h_latch:
            n_sub = int(math.ceil(h_prev / h_latch - 1e-9))
            lst, li = pl.latches_between_sub(h_prev, n_sub, lg_prev, lg, lgs, lat, stp, ls,
                                             trig, hf, tot,
                                             sc[SC_TWR + TW_O:SC_TWR + TW_O + 3], o_pass,
                                             full_normal, tfrac)
        else:
            lst, li = pl.latches_between(h_prev, lg, lat, stp, ls, trig, hf, tot,
                                         sc[SC_TWR + TW_O:SC_TWR + TW_O + 3], o_pass,
                                         full_normal)
        if h_latch > 0.0:
            for i in range(nl):
                for k in range(pl.LG_SIZE):
                    lg_prev[i, k] = lg[i, k]
        if tx[TX_MASK] != 0.0:
            pt.latches_between_row(tr, trn, tx, h_prev, lg, ls, trig, hf, lst, li)
        if lst != NONE:
            status = ST_PENETRATION
            _fail(info, t, PAIR_LATCH_GUIDE, li)
            break
        R = M[M_APR]
        c = pl.capture_state(trig, lat, n_pair, R[0, 0], sc[SC_TWR + TW_O], P[P_COS_TOL],
                             P[P_GAP_TOL], latch_out)
        if tx[TX_MASK] != 0.0:
            pt.capture_row(tr, trn, tx, R[0, 0], sc[SC_TWR + TW_O], c, trig)
        for i in range(nl):
            if latch_out[i] != 0 and math.isnan(ev[EV_LATCH + i]):
                ev[EV_LATCH + i] = t - h_prev * (1.0 - tfrac[i])
        if c == 1 and not captured:
            captured = True
            ev[EV_CAPTURE] = t
        near = _near(P, M, sc, kw)
        if captured and implicit:
            # the step is known before the first stage: every stage takes gamma h
            hc = h_capt if t - ev[EV_CAPTURE] < t_settle else h_settled
            tn = k_out * dt_out
            if t >= tn - 1e-9 * dt_out:
                tn = (k_out + 1) * dt_out
            if t + hc >= tn - 1e-9 * dt_out:
                hc = tn - t
            sc[SC_HIMP] = GAMMA * hc
        # ---- first stage at t (also what is recorded; frames of y from above)
        trace_stage(tx, tr_mask, tr_t0, tr_t1, t, n_steps, 0)
        st, pair, idx = stage(t, y, P, M, sc, kw, LS, table, toff, hist_i, hist_f, fa, fp, eaa,
                              ep, pa, pp, ca, cp, plane, ea, cap, latg, lat, stp, ls, trig, hf,
                              seng, sen, sw, so, lg, ps, k1, tr, trn, tx)
        if st != ST_OK:
            status = st
            _fail(info, t, pair, idx)
            break
        contact = sc[SC_NCONT] > 0.0
        if contact:
            near = True
            if math.isnan(ev[EV_FIRST]):
                ev[EV_FIRST] = t
            ev[EV_SEPARATION] = np.nan
        elif was_contact:
            ev[EV_SEPARATION] = t
        was_contact = contact
        t_next = k_out * dt_out
        if t >= t_next - 1e-9 * dt_out:
            if k_out == 0 and contact:
                status = ST_START_CONTACT
                _fail(info, t, 0, -1)
                break
            _record(t, y, P, M, sc, kw, LS, table, toff, hist_i, hist_f, sw, latch_out,
                    captured, tot, row)
            for j in range(chan.shape[0]):
                out[n_pre + k_out, j] = row[chan[j]]
            k_out += 1
            if n_pre + k_out >= n_out or k_out * dt_out > t_stop:
                break
            t_next = k_out * dt_out
        if free_touch and not touched and (contact or _sensed(so)
                                           or pl.latches_touch(lg, lat, stp, ls, trig)):
            touched = True
        # a free step before the first touch is tentative: retaken at the two-rate switch's
        # step when it ends (or a stage of it finds) a touch
        tent = free_touch and not touched and not captured and not _legs_near(P, kw)
        h = h_large if (tent or not near) else h_small
        if captured:
            h = h_capt if t - ev[EV_CAPTURE] < t_settle else h_settled
        for attempt in range(2):
            land = False
            if t + h >= t_next - 1e-9 * dt_out:
                h = t_next - t
                land = True
            if tent:
                for i in range(NY):
                    y_save[i] = y[i]
                for k in range(ns):
                    sw_save[k] = sw[k]
                rows0 = trn[TRN_ROWS]
                dropped0 = trn[TRN_DROPPED]
            hit = False
            hh = 0.5 * h
            for i in range(NY):
                yt[i] = y[i] + hh * k1[i]
            trace_stage(tx, tr_mask, tr_t0, tr_t1, t + hh, n_steps, 1)
            frames(yt, P, M, sc, kw)
            st, pair, idx = stage(t + hh, yt, P, M, sc, kw, LS, table, toff, hist_i, hist_f, fa,
                                  fp, eaa, ep, pa, pp, ca, cp, plane, ea, cap, latg, lat, stp,
                                  ls, trig, hf, seng, sen, sw, so, lg, ps, k2, tr, trn, tx)
            hit = tent and (sc[SC_NCONT] > 0.0 or _sensed(so))
            if st == ST_OK and not hit:
                for i in range(NY):
                    yt[i] = y[i] + hh * k2[i]
                trace_stage(tx, tr_mask, tr_t0, tr_t1, t + hh, n_steps, 2)
                frames(yt, P, M, sc, kw)
                st, pair, idx = stage(t + hh, yt, P, M, sc, kw, LS, table, toff, hist_i,
                                      hist_f, fa, fp, eaa, ep, pa, pp, ca, cp, plane, ea, cap,
                                      latg, lat, stp, ls, trig, hf, seng, sen, sw, so, lg, ps,
                                      k3, tr, trn, tx)
                hit = tent and (sc[SC_NCONT] > 0.0 or _sensed(so))
            if st == ST_OK and not hit:
                for i in range(NY):
                    yt[i] = y[i] + h * k3[i]
                trace_stage(tx, tr_mask, tr_t0, tr_t1, t + h, n_steps, 3)
                frames(yt, P, M, sc, kw)
                st, pair, idx = stage(t + h, yt, P, M, sc, kw, LS, table, toff, hist_i, hist_f,
                                      fa, fp, eaa, ep, pa, pp, ca, cp, plane, ea, cap, latg,
                                      lat, stp, ls, trig, hf, seng, sen, sw, so, lg, ps, k4,
                                      tr, trn, tx)
                hit = tent and (sc[SC_NCONT] > 0.0 or _sensed(so))
            if st != ST_OK and not tent:
                break
            if st == ST_OK and not hit:
                h6 = h / 6.0
                for i in range(NY):
                    y[i] += h6 * (k1[i] + 2.0 * (k2[i] + k3[i]) + k4[i])
                quat_normalize(y, Y_Q1)
                quat_normalize(y, Y_Q2)
                if not tent:
                    break
                # the end of the free step, untraced: no contact, sensor or latch touches
                trace_stage(tx, 0.0, tr_t0, tr_t1, t + h, n_steps, 0)
                frames(y, P, M, sc, kw)
                st, pair, idx = stage(t + h, y, P, M, sc, kw, LS, table, toff, hist_i, hist_f,
                                      fa, fp, eaa, ep, pa, pp, ca, cp, plane, ea, cap, latg,
                                      lat, stp, ls, trig, hf, seng, sen, sw, so, lg, ps, kc,
                                      tr, trn, tx)
                if st == ST_OK and sc[SC_NCONT] == 0.0 and not _sensed(so) \
                        and not pl.latches_touch(lg, lat, stp, ls, trig):
                    break
            # the free step touched: back to its start, the switch's step from here on
            for i in range(NY):
                y[i] = y_save[i]
            for k in range(ns):
                sw[k] = sw_save[k]
            trn[TRN_ROWS] = rows0
            trn[TRN_DROPPED] = dropped0
            st = ST_OK
            touched = True
            tent = False
            info[INFO_T_TOUCH] = t
            h = h_small if near else h_large
        if st != ST_OK:
            status = st
            _fail(info, t, pair, idx)
            break
        t = t_next if land else t + h
        h_prev = h
        n_steps += 1
        if near and not tent and not captured:
            n_small += 1
    if n_pre > 0 and k_out > 0:
        _free_flight_before(M, w1_0, w2_0, chan, out, n_pre, dt_out)
    if captured:
        ev[EV_SEPARATION] = np.nan
    info[INFO_STEPS] = n_steps
    info[INFO_SMALL_STEPS] = n_small
    info[INFO_T_END] = t
    return status


@njit(cache=True, nogil=True, error_model="numpy", parallel=True)
def run_batch(Pb, fa, fp, eaa, ep, pa, pp, ca, cp, plane, latg, lat, stp, seng, sen, table,
              toff, hist_i, hist_f, chan, out, ev, info, status):
    """:func:`run` over the rows of ``Pb`` (n, NP) in parallel; ``out`` (n, n_out, n_chan),
    ``ev`` (n, N_EV), ``info`` (n, NINFO), ``status`` int64 (n) are written. Never traces
    (an empty trace buffer per row)."""
    for b in prange(Pb.shape[0]):
        tr = np.empty((0, TR_NCOL))
        trn = np.zeros(TRN_SIZE, dtype=np.int64)
        status[b] = run(Pb[b], fa, fp, eaa, ep, pa, pp, ca, cp, plane, latg, lat, stp, seng,
                        sen, table, toff, hist_i, hist_f, chan, out[b], ev[b], info[b], tr, trn)
