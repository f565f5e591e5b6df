"""Probe-cone docking kernel: two rigid spacecraft, the probe mechanism, penalty contact.

One compiled function, :func:`run`, holds the whole time loop (fixed-step RK4, two rates);
:func:`run_batch` evaluates many packed parameter vectors in parallel (``prange``).
The readable layer is :mod:`models.probe_cone`; the layouts below are its contract.

Model (what the kernel integrates)
----------------------------------
* Active (1) and passive (2) spacecraft: rigid 6-DOF bodies, inertial position and velocity of
  the centre of mass, scalar-first quaternion (inertial -> body DCM ``A``), body rates
  ``w``; Newton-Euler in body axes. Optional constant thrust of the active vehicle (body axes)
  on ``[t_on, t_off)``.
* Probe mechanism on the active unit (frame AU, origin O at the housing universal joint),
  the buffer links of digest §8.2:

  - **Movable housing** (link 1, angles q1, q2): a rigid body on the universal joint whose
    axis ``u`` (unit, inertial; state ``Y_UM``) and transverse angular velocity ``w_M``
    (inertial, normal to ``u``; state ``Y_WM``) are integrated with
    ``J_M w_M_dot = tau_perp``, ``u_dot = w_M x u``. Its mass is lumped into vehicle 1 (centre
    of mass taken at the joint); its twist rate about ``u`` is that of vehicle 1 (the joint
    passes the axial torque ``(tau.u) u`` to vehicle 1 and does no work). Choice: this is a
    homokinetic joint; the paper's Cardan joint ``A_AUB,1 = R_z(q2) R_y(q1)`` (digest 8.2,
    corrected matrix) adds a relative twist of second order, ``q1 q2 / 2`` (1 mrad at the
    reference's largest deflection, 0.2 mm at the pad radius), neglected. The housing
    frame that carries the pads and rollers is the minimal rotation of ``X_AU`` onto ``u``. With
    ``u_A = A_AU u`` the lateral coordinates are ``psi = u_Ay / u_Ax`` and ``theta = -u_Az / u_Ax``
    (tangents of the yaw and pitch housing angles); the telemetry gimbal angles are
    ``q1 = atan2(-u_Az, u_Ax)``, ``q2 = asin(u_Ay)``. Lateral absorber: two
    constant-parameter hysteresis elements on ``psi`` and ``theta`` (SM1, SM2 in
    perpendicular planes), times ``P_S_LAT``, and two viscous dampers on
    ``(psi +- theta)/sqrt2`` (planes at 45 degrees); their generalized forces act as the
    torque pair ``u_A x g`` on the housing and ``-u_A x g`` on vehicle 1,
    ``g = -(m_psi grad psi + m_theta grad theta)`` (exact gradients).
  - **Probe** (link 2): from the output support bearing ``B = O + L_M u`` to the head point
    mass ``m_H`` (state ``Y_RH``, ``Y_VH``, inertial), ``d = r_H - B``, direction
    ``w = d/|d|``, stroke ``s = L_0 - L_M - |d|`` (the outer length ``L_H`` of the paper is
    ``|d|``). Bending (q3, q4) is the angle between ``w`` and ``u``: isotropic elastic
    potential ``V_b = k_b |u x w|^2 / 2`` (moment ``-k_b (u.w) u x w`` on the probe, the
    opposite on the housing) and a structural damper ``-c_b Omega_perp`` on the relative
    transverse rate ``Omega = w x w_dot - w_M - (w_1.u) u`` (normal to ``w``), which damps
    no rigid rotation. Axial absorber along ``w`` between the head and B: the friction-brake
    hysteresis element (spring mechanism SMx + brake FB, variable parameters, digest A.10)
    on ``s`` times ``P_S_AX``, plus the magnetic damper ``c_ax s_dot``. Torsion (q5) about
    ``w``: a spin DOF (axial inertia ``J_t``) with the constant-parameter torsion element
    ("roll deformation of the whole mechanism", digest A.11) and a structural damper, on
    ``phi_dot = spin - w.(w_M + (w_1.u) u)``.
  - The probe has no transverse inertia apart from the head point: its moment balance gives
    the head force ``(m_net x w)/|d|`` with ``m_net`` the transverse part of the head
    contact couples plus the bending moment minus the gyroscopic ``J_t spin w_dot``; the
    housing takes the opposite force at B. All internal loads are action-reaction pairs at
    common points or torque pairs, so the mechanism is conservative apart from its
    dissipative elements and momentum is conserved to rounding.
  - **Limiter pads** and **alignment rollers** on the housing (primitives ``hc`` in the
    housing frame, the minimal rotation of ``X_AU`` onto ``u``): pad endpoints as points
    and rollers as spheres against the receiving-cone meridian (digest 7.1-7.4), pad
    segments against the mouth circle (7.6, only when the pad wraps round the rim). Their
    forces act on the housing (moment about the joint) and, at the same points, on the
    passive unit. The alignment-lever kinematics is not published: the rollers are fixed in
    the housing frame (levers in their docking position).
* Passive unit: receiving cone, socket cylinder and bottom as one surface of revolution
  (meridian table of :mod:`models._kernels.contact`), four slots. Head sphere vs that surface
  (penalty law of the contact paper, digest §5); four latches and two head capture sensors:
  before triggering (latches) / before capture (sensors), zero-inertia spring items
  (radially retracting tips, preload and rate at the tip) whose resistance is computed
  between steps and held during the next step (digest §8.4); a latch triggers when its
  reverse segment crosses its slot plane inside the narrow part of the window; capture when
  all four have triggered; after triggering, the latch's reverse segment contacts its slot
  (digest §8.5); after capture the sensors rub on the socket wall with a constant total
  axial friction.
* Energy ledger integrated with the motion (RK4, the same forces): work into each absorber
  element, brake work while slipping, damper and contact dissipation, elastic contact work,
  latch-spring work and thrust work.

Choices where the papers are silent (see the docstrings at the code):

* stored energy of a hysteresis element = work it returns when unloaded along its backward
  branch (a brake stores nothing beyond its slip point); ``energy_dissipated_hysteresis`` is
  the element work minus that and minus the brake's slip work;
* an illegal hysteresis transition is replayed once as a rate reversal inside the step
  (two legal rows) before the run stops with ``ST_HYSTERESIS`` (workaround, see _between);
* event times are step ends (resolution ``dt_contact``);
* after capture the step is ``dt_captured``; with ``[integration] implicit_friction``
  (``always``, or ``captured``: only after capture; the reference preset keeps ``never``,
  the explicit law its shipped flights were generated with) the head's
  contact friction is integrated implicitly (linearized: the friction at the
  relative velocity reached over the step, :func:`~models.probe_cone._kernels.stage.
  _implicit_head`). The explicit regularized friction bounds the step by its viscous slope
  ``k_Fr f_n / v_eps`` on the 10 kg head (2.25 of RK4's 2.8 at 1 ms and 3 kN) and chatters
  near that bound; the implicit form has no such bound, and its correction is an exact
  action-reaction pair between the head centre and the passive unit (momenta, ledger).

Common path: one reciprocal for ``1/|d|``, one for ``1/u_Ax``, one square root for ``|d|``,
one reciprocal per housing/head rotation built; no transcendental function (``atan2``/``asin``
only when a sample is written). Step check (reference preset): the fastest mechanism mode is
the housing against the bending spring with the head held, ``sqrt(k_b (1 + L_M/l)^2 / J_M)``
= 226 rad/s (249 rad/s free, two-mode analysis in the tests): ``omega h`` = 0.25 at 1 ms and
1.0 at 4 ms, inside RK4's stability bound 2.8. After capture (1 ms in the reference preset,
whose friction is explicit) the head contacts (2e6 N/m on 10 kg, several in parallel on the
latch stops and the bottom) bound the step even with the implicit friction: 3.3 ms diverged
on the reference docking, 2.5 ms failed 1 of 41 envelope draws (an illegal hysteresis
transition), 2 ms none (``docs/design/probe_cone_step.rst``: accuracy of each setting).

Layouts
-------
``P`` (float64[NP]) packed parameters, indices ``P_*``; ``Y`` state ``Y_*``; output channels
``O_*`` (``NCH`` columns); events ``EV_*``; status ``ST_*``; run information ``INFO_*``.
Inside the kernel: the 3x3 matrices ``M_*``, the float scratch ``SC_*`` (unit frames
``FR_*``, mechanism coordinates ``MC_*``, contact sums ``ACC_*``), the work array ``WK_*``
and the held latch forces ``LF_*``; all are defined in
:mod:`~models.probe_cone._kernels.layout`.

Modules: :mod:`~models.probe_cone._kernels.layout` (layouts, helpers),
:mod:`~models.probe_cone._kernels.stage` (stage derivative),
:mod:`~models.probe_cone._kernels.between` (initial state, between-step updates),
:mod:`~models.probe_cone._kernels.output` (samples, ledger),
:mod:`~models.probe_cone._kernels.trace` (trace hooks); this module holds the time loop and
re-exports the layouts.

Trace (digest 10): with ``P[P_TR_MASK] != 0`` every stage whose time lies in
``[P[P_TR_T0], P[P_TR_T1]]`` records the selected groups' routines (contacts, latch and sensor
plungers, mechanism and its hysteresis elements) into the buffer ``tr``
(:mod:`models._kernels.trace_layout`); tracing only reads the state, so the results are the
same with it on or off, and with it off each hook costs one comparison.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from models._kernels import NJIT, NJIT_LEAF
from models._kernels import hysteresis as hk
from models.probe_cone._kernels import trace as pct
from models.probe_cone._kernels.absorbers import axial_table, lateral_table
from models.probe_cone._kernels.between import _between, initial_state
from models.probe_cone._kernels.layout import *  # noqa: F401,F403  (re-exported layouts)
from models.probe_cone._kernels.layout import _m3, apply_slip_force, channel_names
from models.probe_cone._kernels.output import _record
from models.probe_cone._kernels.stage import _rhs
from models._kernels.free_flight import fill_before_start
from models._kernels.rigid_body import quat_normalize
from models._kernels.trace_layout import STAGE_BETWEEN, TR_NCOL, TRN_SIZE, TX_MASK, \
    trace_begin, trace_stage

__all__ = [
    "NP", "NY", "NCH", "N_EV", "N_LATCH",
    "run", "run_batch", "apply_slip_force", "initial_state", "channel_names",
]


# the time loop
@njit(**NJIT_LEAF)
def _inv3(A, B):
    det = (A[0, 0] * (A[1, 1] * A[2, 2] - A[1, 2] * A[2, 1])
           - A[0, 1] * (A[1, 0] * A[2, 2] - A[1, 2] * A[2, 0])
           + A[0, 2] * (A[1, 0] * A[2, 1] - A[1, 1] * A[2, 0]))
    idet = 1.0 / det
    B[0, 0] = (A[1, 1] * A[2, 2] - A[1, 2] * A[2, 1]) * idet
    B[0, 1] = (A[0, 2] * A[2, 1] - A[0, 1] * A[2, 2]) * idet
    B[0, 2] = (A[0, 1] * A[1, 2] - A[0, 2] * A[1, 1]) * idet
    B[1, 0] = (A[1, 2] * A[2, 0] - A[1, 0] * A[2, 2]) * idet
    B[1, 1] = (A[0, 0] * A[2, 2] - A[0, 2] * A[2, 0]) * idet
    B[1, 2] = (A[0, 2] * A[1, 0] - A[0, 0] * A[1, 2]) * idet
    B[2, 0] = (A[1, 0] * A[2, 1] - A[1, 1] * A[2, 0]) * idet
    B[2, 1] = (A[0, 1] * A[2, 0] - A[0, 0] * A[2, 1]) * idet
    B[2, 2] = (A[0, 0] * A[1, 1] - A[0, 1] * A[1, 0]) * idet


#: output channels that keep their t = 0 value in free flight before the start (the
#: mechanism at rest: sensors, flags, loads); the body rates are propagated, everything else
#: (relative state, energies, momenta) is NaN there
_HELD_BEFORE_START = np.array(
    [O_STROKE, O_GPITCH, O_GYAW, O_CONTACT, O_BOTTOM, O_CAPTURE, O_LATCH, O_LATCH + 1,
     O_LATCH + 2, O_LATCH + 3, O_FIF, O_FIF + 1, O_FIF + 2, O_MIF, O_MIF + 1, O_MIF + 2,
     O_FAX, O_MPITCH, O_MYAW, O_BPITCH, O_BYAW, O_HCONTACT], dtype=np.int64)


@njit(**NJIT)
def _free_flight_before(w1_0, w2_0, M, chan, out, n_pre, dt_out):
    """Fill the ``n_pre`` output rows before ``t = 0`` from the row at ``t = 0``
    (:func:`~models._kernels.free_flight.fill_before_start`).

    Before the start plane the two vehicles fly free and nothing touches the docking unit, so
    the mechanism is at rest and its channels (:data:`_HELD_BEFORE_START`) keep their
    ``t = 0`` values, which is the model's own free flight, not a held end value. The body
    rates of each vehicle follow Euler's torque-free equations backwards from their ``t = 0``
    values. The reaction of the mechanism on the active vehicle is left out (the probe moves
    with the vehicle; at 1e-2 rad/s its centripetal load is a few mN). Other channels are NaN
    before the start.
    """
    fill_before_start(M[M_J1], M[M_JI1], M[M_J2], M[M_JI2], w1_0, w2_0, chan,
                      _HELD_BEFORE_START, O_T, O_AR, O_PR, out, n_pre, dt_out)


@njit(**NJIT)
def run(P_in, mer, slots, hc, table_in, toff, chan, out, ev, info, tr, trn):
    """Simulate one docking.

    Parameters
    ----------
    P_in : float64[NP]
        Packed parameters (``P_*``); not modified.
    mer : float64[n, ck.M_NCOL]
        Meridian table of the receiving cone, socket and bottom (last face = bottom).
    slots : float64[N_LATCH, ck.SL_SIZE]
        The four socket slots.
    hc : float64[n, HC_SIZE]
        Housing contact primitives (limiter-pad segments, alignment rollers) in the housing
        frame (``HC_*``); ``n`` may be 0.
    table_in, toff : float64[:], int64[N_ELEM]
        Hysteresis elements (axial brake element, lateral psi, lateral theta); not modified.
    chan : int64[:]
        Output channels to record (``O_*`` indices).
    out : float64[n_out, len(chan)]
        Samples (written): ``n_pre = round(P[P_T_PRE] / dt_out)`` rows of the free-flight
        extension at ``t = -n_pre dt_out .. -dt_out`` (see :func:`_free_flight_before`), then
        ``t = k dt_out`` for ``k = 0, 1, ...`` while ``k dt_out <= P[P_T_END]`` and rows are
        left; the rows after the end stay NaN (a batch shares one ``out`` shape, each row may
        end at its own ``P_T_END``).
    ev : float64[N_EV]
        Event times [s] (written; NaN = did not happen).
    info : float64[NINFO]
        Run information (``INFO_*``): time and element of a failure, steps taken (all, near
        contact), time reached.
    tr : float64[n_rows, TR_NCOL]
        Trace buffer (:mod:`models._kernels.trace_layout`), written from row 0 when
        ``P[P_TR_MASK] != 0`` for the stages in ``[P[P_TR_T0], P[P_TR_T1]]``
        (:mod:`models.probe_cone._kernels.trace`); ``(0, TR_NCOL)`` with tracing off.
    trn : int64[TRN_SIZE]
        Rows written and rows dropped (buffer full); zeroed here.

    Returns
    -------
    int
        ``ST_OK`` or the first failure (``ST_PENETRATION``, ``ST_GEOMETRY``,
        ``ST_HYSTERESIS``, ``ST_BAD_TABLE``, ``ST_START_CONTACT``); samples after a failure
        are NaN.
    """
    P = P_in.copy()
    P[P_IM1] = 1.0 / P[P_M1]
    P[P_IM2] = 1.0 / P[P_M2]
    P[P_IMH] = 1.0 / P[P_MH]
    P[P_IJT] = 1.0 / P[P_JT]
    P[P_IJM] = 1.0 / P[P_JM]
    J = np.empty((3, 3))
    JI = np.empty((3, 3))
    for (oj, oi) in ((P_J1, P_JI1), (P_J2, P_JI2)):
        _m3(P, oj, J)
        _inv3(J, JI)
        for i in range(3):
            for j in range(3):
                P[oi + 3 * i + j] = JI[i, j]
    table = table_in.copy()
    for k in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[k, j] = np.nan
    for k in range(N_EV):
        ev[k] = np.nan
    for k in range(info.shape[0]):
        info[k] = 0.0
    rebuild = int(P[P_REBUILD])
    if rebuild != 0:
        # absorber characteristics fitted per evaluation: their tables from the numbers
        if rebuild & REBUILD_AXIAL and P[P_F_SLIP] > 0.0:
            if axial_table(table, toff[E_AX], P[P_AXC:P_AXC + 7], P[P_F_SLIP] / P[P_S_AX]):
                return ST_BAD_TABLE
        if rebuild & REBUILD_LATERAL:
            for e in (E_PSI, E_THETA):
                if lateral_table(table, toff[e], P[P_LATC:P_LATC + 7]):
                    return ST_BAD_TABLE
        if rebuild & REBUILD_TORSION:
            if lateral_table(table, toff[E_TOR], P[P_TORC:P_TORC + 7]):
                return ST_BAD_TABLE
    if P[P_F_SLIP] > 0.0:
        if apply_slip_force(table, toff[E_AX], P[P_F_SLIP] / P[P_S_AX]) != 0:
            return ST_BAD_TABLE
    istate = np.zeros(N_ELEM * hk.I_SIZE, dtype=np.int64)
    fstate = np.zeros(N_ELEM * hk.F_SIZE)
    latch = np.zeros(N_LATCH, dtype=np.int64)
    LF = np.zeros((N_PL, NLF))
    M = np.empty((NM, 3, 3))    # M_*: the per-evaluation DCMs are written by _kinematics
    _m3(P, P_G1, M[M_G1])
    _m3(P, P_G2, M[M_G2])
    _m3(P, P_J1, M[M_J1])
    _m3(P, P_J2, M[M_J2])
    _m3(P, P_JI1, M[M_JI1])
    _m3(P, P_JI2, M[M_JI2])
    sc = np.zeros(NSC)
    wk = np.zeros(NWK)
    tcx, tr_mask, tr_t0, tr_t1 = trace_begin(P, P_TR_MASK, P_TR_T0, P_TR_T1, trn)
    y = np.empty(NY)
    initial_state(P, y)
    k1 = np.empty(NY)
    k2 = np.empty(NY)
    k3 = np.empty(NY)
    k4 = np.empty(NY)
    yt = np.empty(NY)
    n_out = out.shape[0]
    dt_out = P[P_DT_OUT]
    n_pre = int(P[P_T_PRE] / dt_out + 0.5)
    t_stop = P[P_T_END] + 1e-9 * dt_out
    w1_0 = y[Y_W1:Y_W1 + 3].copy()
    w2_0 = y[Y_W2:Y_W2 + 3].copy()
    h_small = P[P_H_SMALL]
    h_large = P[P_H_LARGE]
    h_capt = P[P_H_CAPT]
    t = 0.0
    k_out = 0
    n_steps = 0
    n_small = 0
    was_contact = False
    status = ST_OK
    while True:
        st, near = _between(t, y, P, mer, slots, hc, table, toff, istate, fstate, latch, LF, ev,
                            M, sc, info)
        trace_stage(tcx, tr_mask, tr_t0, tr_t1, t, n_steps, STAGE_BETWEEN)
        if tcx[TX_MASK] != 0.0:
            pct.element_rows(tr, trn, tcx, sc[SC_MECH:SC_MECH + SC_MECH_SIZE], y[Y_PHI],
                             istate, st)
            pct.plunger_rows(tr, trn, tcx, latch, LF)
        if st != ST_OK:
            status = st
            break
        # after capture the step is h_capt; P_H_NOW is the implicit friction's gamma h (0:
        # explicit), fixed per phase so that all four stages integrate the same equation
        captured = not math.isnan(ev[EV_CAPTURE])
        mode = P[P_IMPLICIT]
        if mode == IMPLICIT_ALWAYS or (mode == IMPLICIT_CAPTURED and captured):
            P[P_H_NOW] = IMPLICIT_GAMMA * (h_capt if captured else h_small)
        else:
            P[P_H_NOW] = 0.0
        trace_stage(tcx, tr_mask, tr_t0, tr_t1, t, n_steps, 0)
        st = _rhs(t, y, P, mer, slots, hc, table, toff, istate, fstate, latch, LF, k1, wk, M, sc,
                  tr, trn, tcx)
        if st != ST_OK:
            status = st
            info[INFO_T_FAIL] = t
            break
        contact = wk[WK_CONTACT] > 0.0
        if contact:
            near = True
            if math.isnan(ev[EV_FIRST]):
                ev[EV_FIRST] = t
            ev[EV_SEPARATION] = np.nan
        elif was_contact:
            ev[EV_SEPARATION] = t
        was_contact = contact
        if wk[WK_BOTTOM] > 0.0 and math.isnan(ev[EV_BOTTOM]):
            ev[EV_BOTTOM] = t
        t_next = k_out * dt_out
        if t >= t_next - 1e-9 * dt_out:
            _record(t, y, P, table, toff, istate, fstate, latch, LF, wk, M, sc, chan,
                    out[n_pre + k_out])
            if k_out == 0 and n_pre > 0:
                if contact:
                    status = ST_START_CONTACT
                    info[INFO_T_FAIL] = t
                    break
                _free_flight_before(w1_0, w2_0, M, chan, out, n_pre, dt_out)
            k_out += 1
            if n_pre + k_out >= n_out or k_out * dt_out > t_stop:
                break
            t_next = k_out * dt_out
        h = h_small if near else h_large
        if captured:
            h = h_capt
        land = False
        if t + h >= t_next - 1e-9 * dt_out:
            h = t_next - t
            land = True
        hh = 0.5 * h
        for i in range(NY):
            yt[i] = y[i] + hh * k1[i]
        trace_stage(tcx, tr_mask, tr_t0, tr_t1, t + hh, n_steps, 1)
        st = _rhs(t + hh, yt, P, mer, slots, hc, table, toff, istate, fstate, latch, LF, k2, wk,
                  M, sc, tr, trn, tcx)
        if st == ST_OK:
            for i in range(NY):
                yt[i] = y[i] + hh * k2[i]
            trace_stage(tcx, tr_mask, tr_t0, tr_t1, t + hh, n_steps, 2)
            st = _rhs(t + hh, yt, P, mer, slots, hc, table, toff, istate, fstate, latch, LF, k3,
                      wk, M, sc, tr, trn, tcx)
        if st == ST_OK:
            for i in range(NY):
                yt[i] = y[i] + h * k3[i]
            trace_stage(tcx, tr_mask, tr_t0, tr_t1, t + h, n_steps, 3)
            st = _rhs(t + h, yt, P, mer, slots, hc, table, toff, istate, fstate, latch, LF, k4,
                      wk, M, sc, tr, trn, tcx)
        if st != ST_OK:
            status = st
            info[INFO_T_FAIL] = t
            break
        h6 = h / 6.0
        for i in range(NY):
            y[i] += h6 * (k1[i] + 2.0 * (k2[i] + k3[i]) + k4[i])
        quat_normalize(y, Y_Q1)
        quat_normalize(y, Y_Q2)
        # housing axis back to unit length, its transverse rate back normal to it
        nu = 1.0 / math.sqrt(y[Y_UM] ** 2 + y[Y_UM + 1] ** 2 + y[Y_UM + 2] ** 2)
        y[Y_UM] *= nu
        y[Y_UM + 1] *= nu
        y[Y_UM + 2] *= nu
        wu = y[Y_WM] * y[Y_UM] + y[Y_WM + 1] * y[Y_UM + 1] + y[Y_WM + 2] * y[Y_UM + 2]
        for i in range(3):
            y[Y_WM + i] -= wu * y[Y_UM + i]
        nt = 1.0 / math.sqrt(y[Y_TC] * y[Y_TC] + y[Y_TS] * y[Y_TS])
        y[Y_TC] *= nt
        y[Y_TS] *= nt
        t = t_next if land else t + h
        n_steps += 1
        if near:
            n_small += 1
    if math.isnan(ev[EV_CAPTURE]) is False:
        ev[EV_SEPARATION] = np.nan
    info[INFO_STEPS] = n_steps
    info[INFO_SMALL_STEPS] = n_small
    info[INFO_T_END] = t
    return status


@njit(cache=True, nogil=True, error_model="numpy", parallel=True)
def run_batch(Pb, mer, slots, hc, table, toff, chan, out, ev, info, status):
    """:func:`run` over the rows of ``Pb`` (n, NP) in parallel; ``out`` (n, n_out, n_chan),
    ``ev`` (n, N_EV), ``info`` (n, NINFO), ``status`` int64 (n) are written. Never traces
    (an empty trace buffer per row)."""
    for b in prange(Pb.shape[0]):
        tr = np.empty((0, TR_NCOL))
        trn = np.zeros(TRN_SIZE, dtype=np.int64)
        status[b] = run(Pb[b], mer, slots, hc, table, toff, chan, out[b], ev[b], info[b], tr,
                        trn)
