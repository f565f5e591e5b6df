"""Kernels of the hydraulic actuator (servo valve + spool valve + double-acting cylinder) and its
coupling to rigid bodies by sequential impulses (seed digest ``hydraulic-actuator.md``).

Everything here is SI and flat arrays; the readable layer is :mod:`models.hydraulic`.

Sign conventions (digest N9, the paper's figure is lost): positive ``x_p``/``v_p`` = extension
(chamber A grows); positive load force ``F_l`` resists extension; flows are positive *into* the
chambers; in the piston row body ``i`` is the barrel and body ``j`` the rod end.

Packed layouts
--------------
Actuator parameters (one row of ``N_PAR`` floats):
``P_SA`` piston area S_A [m^2], ``P_SB`` annulus area S_B [m^2], ``P_XMIN``/``P_XMAX`` stroke
limits [m], ``P_VA``/``P_VB`` chamber volumes at x_p = 0 incl. dead volumes [m^3], ``P_BETA``
effective bulk modulus [Pa], ``P_PS``/``P_PT`` supply and tank pressure [Pa], ``P_KV`` valve gain
[1/V], ``P_WV`` valve natural frequency [rad/s], ``P_DV`` valve damping [-], ``P_C1`` supply
overlap [-], ``P_C2`` tank underlap [-], ``P_KQ`` flow coefficient [m^3/(s sqrt(Pa))], ``P_PTR``
laminar transition pressure [Pa], ``P_K`` viscous friction [N s/m], ``P_FC`` dry friction bound
[N], ``P_VS`` friction smoothing velocity [m/s] (0 = set-valued Coulomb), ``P_M`` moving mass of
the piston [kg], ``P_CIN`` internal leakage [m^3/(s Pa)], ``P_CEX`` external leakage
[m^3/(s Pa)], ``P_VOLCONST`` 1 = constant chamber capacitances, ``P_PMIN`` pressure floor [Pa],
``P_BRAKE`` brake force bound [N], ``P_DELAY`` transport delay of the valve command [s].

Actuator state (``N_ST``): ``S_XV`` spool position [-], ``S_WV`` spool velocity [1/s],
``S_PA``/``S_PB`` chamber pressures [Pa], ``S_XP`` piston position [m], ``S_VP`` piston velocity
[m/s].

Actuator geometry for the coupled model (``N_GEO`` floats): ``G_PI`` (3) joint point in body i
frame [m], ``G_PJ`` (3) joint point in body j frame [m], ``G_AXIS`` (3) axis n_i in body i frame,
``G_X0`` length n.PiPj at x_p = 0 [m], ``G_KP`` position-controller gain [1/m], ``G_KFF``
velocity feed-forward [s/m]. Integers (``N_GEOI``): ``GI_I``, ``GI_J`` body indices,
``GI_AXIS`` 0 = axis fixed in body i, 1 = leg axis PiPj/|PiPj| (digest N10), ``GI_JAC`` 0 =
exact Jacobian t_i' = (r_i + PiPj) x n, 1 = the paper's t_i = r_i x n.

Rigid bodies of the coupled model, one float64 row (``N_BODY``) each: ``B_INVM`` inverse
mass [1/kg] (0 = fixed body); ``B_IINV`` (3) inverse principal inertia in the body frame
[1/(kg m^2)] (0 = fixed); ``B_POS`` (3) centre-of-mass position, inertial [m]; ``B_Q`` (4)
attitude quaternion (:mod:`models._kernels.rigid_body`: scalar first, the body relative to the
inertial frame); ``B_VEL`` (3) centre-of-mass velocity, inertial [m/s]; ``B_OMEGA`` (3) angular
velocity in inertial components [rad/s] (the impulses act there); ``B_FORCE`` (3) constant
applied force, inertial [N] (gravity times mass, loads).

Stand-alone output channels (``N_OUT``): ``O_T`` .. ``O_FL`` (see the constants).
Coupled actuator output (``N_AO``): ``AO_XV`` .. ``AO_QB``.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from models._kernels import NJIT
from models._kernels.rigid_body import body_to_inertial, quat_integrate_inertial

__all__ = [
    "B_INVM", "B_IINV", "B_POS", "B_Q", "B_VEL", "B_OMEGA", "B_FORCE", "N_BODY",
    "P_SA", "P_SB", "P_XMIN", "P_XMAX", "P_VA", "P_VB", "P_BETA", "P_PS", "P_PT", "P_KV",
    "P_WV", "P_DV", "P_C1", "P_C2", "P_KQ", "P_PTR", "P_K", "P_FC", "P_VS", "P_M", "P_CIN",
    "P_CEX", "P_VOLCONST", "P_PMIN", "P_BRAKE", "P_DELAY", "N_PAR",
    "S_XV", "S_WV", "S_PA", "S_PB", "S_XP", "S_VP", "N_ST",
    "G_PI", "G_PJ", "G_AXIS", "G_X0", "G_KP", "G_KFF", "N_GEO", "GI_I", "GI_J", "GI_AXIS",
    "GI_JAC", "N_GEOI",
    "O_T", "O_XV", "O_WV", "O_PA", "O_PB", "O_XP", "O_VP", "O_QA", "O_QB", "O_QPA", "O_QAT",
    "O_QPB", "O_QBT", "O_QLEAK", "O_FH", "O_FR", "O_U", "O_FL", "N_OUT",
    "AO_XV", "AO_PA", "AO_PB", "AO_XP", "AO_VP", "AO_U", "AO_FH", "AO_LEN", "AO_QA", "AO_QB",
    "N_AO",
    "openings", "signed_root", "chamber_flows", "valve_step", "pressure_step",
    "simulate_actuator", "cosim_run",
]

# rigid-body rows (module docstring)
B_INVM = 0
B_IINV = 1
B_POS = 4
B_Q = 7
B_VEL = 11
B_OMEGA = 14
B_FORCE = 17
N_BODY = 20

# ---- actuator parameters -------------------------------------------------------------------
P_SA, P_SB, P_XMIN, P_XMAX, P_VA, P_VB, P_BETA, P_PS, P_PT = 0, 1, 2, 3, 4, 5, 6, 7, 8
P_KV, P_WV, P_DV, P_C1, P_C2, P_KQ, P_PTR = 9, 10, 11, 12, 13, 14, 15
P_K, P_FC, P_VS, P_M, P_CIN, P_CEX, P_VOLCONST, P_PMIN, P_BRAKE, P_DELAY = (
    16, 17, 18, 19, 20, 21, 22, 23, 24, 25)
N_PAR = 26
# ---- actuator state ------------------------------------------------------------------------
S_XV, S_WV, S_PA, S_PB, S_XP, S_VP = 0, 1, 2, 3, 4, 5
N_ST = 6
# ---- coupled geometry ----------------------------------------------------------------------
G_PI, G_PJ, G_AXIS, G_X0, G_KP, G_KFF = 0, 3, 6, 9, 10, 11
N_GEO = 12
GI_I, GI_J, GI_AXIS, GI_JAC = 0, 1, 2, 3
N_GEOI = 4
# ---- stand-alone output --------------------------------------------------------------------
(O_T, O_XV, O_WV, O_PA, O_PB, O_XP, O_VP, O_QA, O_QB, O_QPA, O_QAT, O_QPB, O_QBT, O_QLEAK,
 O_FH, O_FR, O_U, O_FL) = range(18)
N_OUT = 18
# ---- coupled actuator output ---------------------------------------------------------------
AO_XV, AO_PA, AO_PB, AO_XP, AO_VP, AO_U, AO_FH, AO_LEN, AO_QA, AO_QB = range(10)
N_AO = 10


@njit(**NJIT)
def openings(xv, c1, c2):
    """Edge openings (P->A, A->T, P->B, B->T) of the normalised spool position, digest (OV).

    ``f_P(x) = max(0, x - c1)`` (positive supply overlap = dead band),
    ``f_T(x) = max(0, c2 - x)`` (tank underlap: both chambers vented at neutral).
    """
    fpa = xv - c1
    fat = c2 - xv
    fpb = -xv - c1
    fbt = c2 + xv
    return (fpa if fpa > 0.0 else 0.0, fat if fat > 0.0 else 0.0,
            fpb if fpb > 0.0 else 0.0, fbt if fbt > 0.0 else 0.0)


@njit(**NJIT)
def signed_root(dp, ptr):
    """Regularised signed square root ``sgn(dp) sqrt|dp|`` and its derivative.

    Linear (laminar) for ``|dp| < ptr``: ``dp / sqrt(ptr)``; continuous at ``|dp| = ptr``,
    odd and monotone (digest 5.1, N8).
    """
    a = abs(dp)
    if a < ptr:
        r = 1.0 / math.sqrt(ptr)
        return dp * r, r
    s = math.sqrt(a)
    return (s if dp > 0.0 else -s), 0.5 / s


@njit(**NJIT)
def chamber_flows(xv, pa, pb, par):
    """Flows into the chambers, digest (3), (4) with the optional leakage terms.

    Returns ``(QA, QB, dQA/dpA, dQB/dpB, q_PA, q_AT, q_PB, q_BT, q_leak_in)``; edge flows are
    positive in their nominal direction (supply -> chamber -> tank), ``q_leak_in`` from A to B.
    """
    kq = par[P_KQ]
    ptr = par[P_PTR]
    ps = par[P_PS]
    pt = par[P_PT]
    fpa, fat, fpb, fbt = openings(xv, par[P_C1], par[P_C2])
    s1, d1 = signed_root(ps - pa, ptr)
    s2, d2 = signed_root(pa - pt, ptr)
    s3, d3 = signed_root(ps - pb, ptr)
    s4, d4 = signed_root(pb - pt, ptr)
    qpa = kq * fpa * s1
    qat = kq * fat * s2
    qpb = kq * fpb * s3
    qbt = kq * fbt * s4
    cin = par[P_CIN]
    cex = par[P_CEX]
    qin = cin * (pa - pb)
    qa = qpa - qat - qin - cex * (pa - pt)
    qb = qpb - qbt + qin - cex * (pb - pt)
    ga = -kq * (fpa * d1 + fat * d2) - cin - cex
    gb = -kq * (fpb * d3 + fbt * d4) - cin - cex
    return qa, qb, ga, gb, qpa, qat, qpb, qbt, qin


@njit(**NJIT)
def _volumes(xp, par):
    x = min(max(xp, par[P_XMIN]), par[P_XMAX])
    if par[P_VOLCONST] > 0.5:
        return par[P_VA], par[P_VB]
    return par[P_VA] + par[P_SA] * x, par[P_VB] - par[P_SB] * x


@njit(**NJIT)
def valve_step(xv, wv, u, dt, par):
    """Semi-implicit Euler step of the servo valve (5): velocity first, then position,
    saturated to [-1, 1] (an outward velocity at the stop is zeroed)."""
    wvn = par[P_WV]
    wv = wv + dt * (wvn * wvn * (par[P_KV] * u - xv) - 2.0 * par[P_DV] * wvn * wv)
    xv = xv + dt * wv
    if xv > 1.0:
        xv = 1.0
        if wv > 0.0:
            wv = 0.0
    elif xv < -1.0:
        xv = -1.0
        if wv < 0.0:
            wv = 0.0
    return xv, wv


@njit(**NJIT)
def pressure_step(pa, pb, xv, xp, vp, dt, par, robust):
    """Pressure build-up (2) over ``dt``: explicit (the paper's literal (E)) or linearly
    implicit in the orifice flows (``robust``; digest 5.1): ``p+ = p + c (Q -/+ S v)/(1 - c G)``,
    ``c = dt beta / V``. Pressures are floored at ``P_PMIN`` (digest N7)."""
    va, vb = _volumes(xp, par)
    qa, qb, ga, gb, _, _, _, _, _ = chamber_flows(xv, pa, pb, par)
    ca = dt * par[P_BETA] / va
    cb = dt * par[P_BETA] / vb
    ra = qa - par[P_SA] * vp
    rb = qb + par[P_SB] * vp
    if robust:
        pa_n = pa + ca * ra / (1.0 - ca * ga)
        pb_n = pb + cb * rb / (1.0 - cb * gb)
    else:
        pa_n = pa + ca * ra
        pb_n = pb + cb * rb
    pmin = par[P_PMIN]
    return max(pa_n, pmin), max(pb_n, pmin)


@njit(**NJIT)
def _interp(tg, y, t, k):
    """Linear interpolation of ``y(tg)`` at ``t`` (held constant outside), with a monotone
    cursor ``k`` for O(1) sequential access. Returns ``(value, k)``."""
    n = tg.shape[0]
    if t <= tg[0]:
        return y[0], 0
    if t >= tg[n - 1]:
        return y[n - 1], n - 2 if n > 1 else 0
    if k > n - 2 or tg[k] > t:
        k = 0
    while k < n - 2 and tg[k + 1] <= t:
        k += 1
    w = (t - tg[k]) / (tg[k + 1] - tg[k])
    return y[k] + w * (y[k + 1] - y[k]), k


@njit(**NJIT)
def _friction_update(v_star, dt_over_m, bound, damp):
    """Implicit set-valued Coulomb/brake friction with implicit viscous damping:
    solve ``v+ (1 + damp) = v* - dt/m * F sgn(v+)``, ``|F| <= bound``."""
    lim = dt_over_m * bound
    if abs(v_star) <= lim:
        return 0.0
    if v_star > 0.0:
        return (v_star - lim) / (1.0 + damp)
    return (v_star + lim) / (1.0 + damp)


@njit(**NJIT)
def simulate_actuator(par, state0, t_cmd, u_cmd, fl_cmd, brake_cmd, mass, t_end, dt1,
                      out_every, robust):
    """Stand-alone actuator (1)-(5) with a lumped moving mass: the single-rate reference.

    Valve, pressures and piston are advanced with the semi-implicit Euler order of the paper
    (x_v, then p_A and p_B, then v_p, then x_p); with ``robust`` the pressures are linearly
    implicit and the viscous term implicit. Dry friction and the brake are set-valued (implicit
    stick/slip) unless ``P_VS > 0`` (then ``F_c tanh(v/v_s)``, explicit). Stroke limits are
    perfectly plastic stops.

    Parameters
    ----------
    par : (N_PAR,) actuator parameters.
    state0 : (N_ST,) initial state.
    t_cmd, u_cmd, fl_cmd, brake_cmd : command table [s], valve input [V], load force [N]
        (positive resists extension), brake signal (0/1); linearly interpolated.
    mass : total moving mass (piston + load) [kg].
    t_end, dt1 : duration and step [s]; ``out_every`` steps per output row.

    Returns
    -------
    out : (n_out, N_OUT) channels at the output instants.
    """
    n_steps = int(round(t_end / dt1))
    n_out = n_steps // out_every + 1
    out = np.zeros((n_out, N_OUT))
    xv, wv, pa, pb, xp, vp = (state0[S_XV], state0[S_WV], state0[S_PA], state0[S_PB],
                              state0[S_XP], state0[S_VP])
    sa = par[P_SA]
    sb = par[P_SB]
    k = par[P_K]
    fc = par[P_FC]
    vs = par[P_VS]
    inv_m = 1.0 / mass
    delay = par[P_DELAY]
    ku = 0
    kf = 0
    kb = 0
    t = 0.0
    u = 0.0
    fl = 0.0
    fr = 0.0
    row = 0
    for step in range(n_steps + 1):
        if step % out_every == 0 and row < n_out:
            qa, qb, _, _, qpa, qat, qpb, qbt, qin = chamber_flows(xv, pa, pb, par)
            o = out[row]
            o[O_T] = t
            o[O_XV] = xv
            o[O_WV] = wv
            o[O_PA] = pa
            o[O_PB] = pb
            o[O_XP] = xp
            o[O_VP] = vp
            o[O_QA] = qa
            o[O_QB] = qb
            o[O_QPA] = qpa
            o[O_QAT] = qat
            o[O_QPB] = qpb
            o[O_QBT] = qbt
            o[O_QLEAK] = qin
            o[O_FH] = pa * sa - pb * sb
            o[O_FR] = fr
            o[O_U], ku = _interp(t_cmd, u_cmd, t - delay, ku)
            o[O_FL], kf = _interp(t_cmd, fl_cmd, t, kf)
            row += 1
        if step == n_steps:
            break
        u, ku = _interp(t_cmd, u_cmd, t - delay, ku)
        fl, kf = _interp(t_cmd, fl_cmd, t, kf)
        br, kb = _interp(t_cmd, brake_cmd, t, kb)
        xv, wv = valve_step(xv, wv, u, dt1, par)
        pa, pb = pressure_step(pa, pb, xv, xp, vp, dt1, par, robust)
        fh = pa * sa - pb * sb
        v_star = vp + dt1 * inv_m * (fh - fl)
        bound = br * par[P_BRAKE]
        if vs > 0.0:
            v_star -= dt1 * inv_m * fc * math.tanh(vp / vs)
        else:
            bound += fc
        if robust:
            v_new = _friction_update(v_star, dt1 * inv_m, bound, dt1 * inv_m * k)
        else:
            v_new = _friction_update(v_star - dt1 * inv_m * k * vp, dt1 * inv_m, bound, 0.0)
        x_new = xp + dt1 * v_new
        if x_new >= par[P_XMAX]:
            x_new = par[P_XMAX]
            if v_new > 0.0:
                v_new = 0.0
        elif x_new <= par[P_XMIN]:
            x_new = par[P_XMIN]
            if v_new < 0.0:
                v_new = 0.0
        # resisting force actually applied (viscous + dry + brake + stop reaction) [N]
        fr = fh - fl - mass * (v_new - vp) / dt1
        vp = v_new
        xp = x_new
        t = (step + 1) * dt1
    return out


# --------------------------------------------------------------------------------------------
# coupling with rigid bodies: sequential impulses
# --------------------------------------------------------------------------------------------
@njit(**NJIT)
def _cross(a, b):
    out = np.empty(3)
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]
    return out


@njit(**NJIT)
def _inertia_term(body, rot, src, t_w, it_w):
    """Store ``t`` and ``I^-1 t`` (world) and return ``t . I^-1 t``."""
    tb = rot.T @ src
    for a in range(3):
        tb[a] *= body[B_IINV + a]
    itw = rot @ tb
    out = 0.0
    for a in range(3):
        t_w[a] = src[a]
        it_w[a] = itw[a]
        out += src[a] * itw[a]
    return out


@njit(**NJIT)
def _row_geometry(bodies, geo, geoi, n_out, ti, tj, iti, itj):
    """Axis ``n``, angular Jacobians ``t_i``, ``t_j`` (world), ``I^-1 t`` and the inverse
    effective mass of the bodies ``K_b = J_b M^-1 J_b^T``; returns ``(K_b, n.PiPj)``."""
    bi = geoi[GI_I]
    bj = geoi[GI_J]
    ri_b = bodies[bi]
    rj_b = bodies[bj]
    qi = ri_b[B_Q:B_Q + 4]
    qj = rj_b[B_Q:B_Q + 4]
    rot_i = body_to_inertial(qi)
    rot_j = body_to_inertial(qj)
    r_i = rot_i @ geo[G_PI:G_PI + 3]
    r_j = rot_j @ geo[G_PJ:G_PJ + 3]
    d = rj_b[B_POS:B_POS + 3] + r_j - ri_b[B_POS:B_POS + 3] - r_i
    if geoi[GI_AXIS] == 1:
        ln = math.sqrt(d[0] ** 2 + d[1] ** 2 + d[2] ** 2)
        for a in range(3):
            n_out[a] = d[a] / ln
    else:
        n = rot_i @ geo[G_AXIS:G_AXIS + 3]
        for a in range(3):
            n_out[a] = n[a]
    if geoi[GI_JAC] == 1:
        t1 = _cross(r_i, n_out)
    else:
        t1 = _cross(r_i + d, n_out)
    t2 = _cross(r_j, n_out)
    kb = ri_b[B_INVM] + rj_b[B_INVM]
    kb += _inertia_term(ri_b, rot_i, t1, ti, iti)
    kb += _inertia_term(rj_b, rot_j, t2, tj, itj)
    length = n_out[0] * d[0] + n_out[1] * d[1] + n_out[2] * d[2]
    return kb, length


@njit(**NJIT)
def _jb_v(bodies, bi, bj, n, ti, tj):
    """Relative axial velocity of the joint points, ``J_b V`` of (8) without the piston."""
    s = 0.0
    for a in range(3):
        s += n[a] * (bodies[bj, B_VEL + a] - bodies[bi, B_VEL + a])
        s += tj[a] * bodies[bj, B_OMEGA + a] - ti[a] * bodies[bi, B_OMEGA + a]
    return s


@njit(**NJIT)
def _apply(bodies, bi, bj, n, iti, itj, p):
    """Apply the impulse pair ``-p n`` at P_i and ``+p n`` at P_j, update (I)."""
    for a in range(3):
        bodies[bi, B_VEL + a] -= p * bodies[bi, B_INVM] * n[a]
        bodies[bi, B_OMEGA + a] -= p * iti[a]
        bodies[bj, B_VEL + a] += p * bodies[bj, B_INVM] * n[a]
        bodies[bj, B_OMEGA + a] += p * itj[a]


@njit(**NJIT)
def cosim_run(bodies, geo, geoi, par, state, t_cmd, u_cmd, brake_cmd, len_cmd, t_end, dt, dt1,
              eps, max_sweeps, scheme, robust, xp_substep, control, out_every):
    """Multi-rate co-simulation of actuators and rigid bodies (digest Algorithm H1).

    Each body step of ``dt``: (1) applied forces and gyroscopic terms into the body
    velocities; (2) ``N = round(dt/dt1)`` hydraulic sub-steps per actuator; (3) sequential
    impulses (projected Gauss-Seidel) over the piston rows (9), dry-friction/brake rows and
    stroke-limit rows until every incremental impulse is ``<= eps`` [N s] or ``max_sweeps``;
    (4) positions by semi-implicit Euler; (5) drift: the piston coordinate is re-projected on
    the joint geometry, ``x_p = n.PiPj - x0`` (constraint (6)).

    ``scheme`` 0 = the paper: sub-steps move the piston alone (mass m) without load or dry
    friction. ``scheme`` 1 = loaded predictor (not in the paper; fixes the under-drive of
    digest N3): the sub-step pressures see the piston moving with the effective mass
    ``m + m_b`` of the attached bodies (``m_b = 1/K_b``), their applied-force acceleration and
    dry friction; the piston then enters the impulse stage with ``v_p0 + H/m``, ``H`` the
    hydraulic-minus-viscous impulse of the sub-steps, so the impulse stage transmits exactly
    the hydraulic impulse. With ``dt == dt1`` both schemes are the single-rate scheme.

    ``control`` 0: valve input from ``u_cmd`` (t - delay). 1: position control
    ``u = sat(K_p (l_cmd - l) + K_ff dl_cmd/dt)`` evaluated every body step from the
    commanded joint lengths ``len_cmd``, applied after the transport delay ``P_DELAY``.

    Returns ``(body_out (n_out, n_b, 13) [pos, quat, vel, omega], act_out (n_out, n_a, N_AO),
    t_out (n_out,), diag (n_steps, 3) [sweeps, last max |dp|, min over actuators of the
    sub-step hydraulic impulse over |F_h(step start)| dt (under-drive guard, digest N3)])``.
    """
    n_b = bodies.shape[0]
    n_a = par.shape[0]
    n_steps = int(round(t_end / dt))
    n_sub = max(1, int(round(dt / dt1)))
    h = dt / n_sub
    n_out = n_steps // out_every + 1
    body_out = np.zeros((n_out, n_b, 13))
    act_out = np.zeros((n_out, n_a, N_AO))
    t_out = np.zeros(n_out)
    diag = np.zeros((n_steps, 3))
    nvec = np.zeros((n_a, 3))
    ti = np.zeros((n_a, 3))
    tj = np.zeros((n_a, 3))
    iti = np.zeros((n_a, 3))
    itj = np.zeros((n_a, 3))
    kb = np.zeros(n_a)
    length = np.zeros(n_a)
    vrel0 = np.zeros(n_a)
    hyd = np.zeros(n_a)
    fh0 = np.zeros(n_a)
    u_now = np.zeros(n_a)
    u_hist = np.zeros((n_steps + 1, n_a))
    cursor = np.zeros(n_a, dtype=np.int64)
    lam_p = np.zeros(n_a)
    lam_f = np.zeros(n_a)
    lam_lo = np.zeros(n_a)
    lam_hi = np.zeros(n_a)
    bias_lo = np.zeros(n_a)
    bias_hi = np.zeros(n_a)
    act_lo = np.zeros(n_a, dtype=np.bool_)
    act_hi = np.zeros(n_a, dtype=np.bool_)
    fbound = np.zeros(n_a)
    row = 0
    for step in range(n_steps + 1):
        t = step * dt
        for a in range(n_a):
            kb[a], length[a] = _row_geometry(bodies, geo[a], geoi[a], nvec[a], ti[a], tj[a],
                                             iti[a], itj[a])
        if step % out_every == 0 and row < n_out:
            t_out[row] = t
            for b in range(n_b):
                for c in range(13):
                    body_out[row, b, c] = bodies[b, B_POS + c]
            for a in range(n_a):
                s = state[a]
                qa, qb, _, _, _, _, _, _, _ = chamber_flows(s[S_XV], s[S_PA], s[S_PB], par[a])
                o = act_out[row, a]
                o[AO_XV] = s[S_XV]
                o[AO_PA] = s[S_PA]
                o[AO_PB] = s[S_PB]
                o[AO_XP] = s[S_XP]
                o[AO_VP] = s[S_VP]
                o[AO_U] = u_now[a]
                o[AO_FH] = s[S_PA] * par[a, P_SA] - s[S_PB] * par[a, P_SB]
                o[AO_LEN] = length[a]
                o[AO_QA] = qa
                o[AO_QB] = qb
            row += 1
        if step == n_steps:
            break
        # (0) controller, evaluated at the step start
        if control == 1:
            for a in range(n_a):
                lc, cursor[a] = _interp(t_cmd, len_cmd[:, a], t, cursor[a])
                lc2, _ = _interp(t_cmd, len_cmd[:, a], t + dt, cursor[a])
                uc = geo[a, G_KP] * (lc - length[a]) + geo[a, G_KFF] * (lc2 - lc) / dt
                u_hist[step, a] = min(1.0, max(-1.0, uc))
        # (1) applied forces and gyroscopic terms
        for a in range(n_a):
            vrel0[a] = _jb_v(bodies, geoi[a, GI_I], geoi[a, GI_J], nvec[a], ti[a], tj[a])
        for b in range(n_b):
            body = bodies[b]
            if body[B_INVM] > 0.0:
                for c in range(3):
                    body[B_VEL + c] += dt * body[B_INVM] * body[B_FORCE + c]
            if body[B_IINV] > 0.0 and body[B_IINV + 1] > 0.0 and body[B_IINV + 2] > 0.0:
                rot = body_to_inertial(body[B_Q:B_Q + 4])
                wb = rot.T @ body[B_OMEGA:B_OMEGA + 3]
                lb = np.empty(3)
                for c in range(3):
                    lb[c] = wb[c] / body[B_IINV + c]
                tau = -_cross(wb, lb)
                for c in range(3):
                    tau[c] *= dt * body[B_IINV + c]
                dw = rot @ tau
                for c in range(3):
                    body[B_OMEGA + c] += dw[c]
        # (2) hydraulic sub-steps, actuator by actuator
        for a in range(n_a):
            p = par[a]
            s = state[a]
            bi = geoi[a, GI_I]
            bj = geoi[a, GI_J]
            vrel1 = _jb_v(bodies, bi, bj, nvec[a], ti[a], tj[a])
            m = p[P_M]
            if scheme == 1:
                mb = 1.0 / kb[a] if kb[a] > 0.0 else 1e30
                aext = (vrel1 - vrel0[a]) / dt
            else:
                mb = 0.0
                aext = 0.0
            mt = m + mb
            xv, wv, pa, pb = s[S_XV], s[S_WV], s[S_PA], s[S_PB]
            fh0[a] = abs(pa * p[P_SA] - pb * p[P_SB]) * dt
            x_start = s[S_XP]
            x_pred = x_start
            v_pred = s[S_VP]
            v0 = v_pred
            br, _ = _interp(t_cmd, brake_cmd[:, a], t, 0)
            bound = p[P_FC] + br * p[P_BRAKE]
            fbound[a] = bound
            hsum = 0.0
            fsum = 0.0
            for sub in range(n_sub):
                ts = t + sub * h - p[P_DELAY]
                if control == 1:
                    kf = ts / dt
                    if kf <= 0.0:
                        u = u_hist[0, a]
                    elif kf >= step:
                        u = u_hist[step, a]
                    else:
                        k0 = int(kf)
                        w = kf - k0
                        u = (1.0 - w) * u_hist[k0, a] + w * u_hist[k0 + 1, a]
                else:
                    u, cursor[a] = _interp(t_cmd, u_cmd[:, a], ts, cursor[a])
                u_now[a] = u
                xv, wv = valve_step(xv, wv, u, h, p)
                x_vol = x_pred if xp_substep == 1 else x_start
                pa, pb = pressure_step(pa, pb, xv, x_vol, v_pred, h, p, robust)
                fh = pa * p[P_SA] - pb * p[P_SB]
                v_star = v_pred + h / mt * (fh + mb * aext)
                # viscous term: implicit in the loaded predictor with the robust update; the
                # paper's (E) is explicit (-k v_p(t)), kept so for scheme 0
                implicit_visc = robust and scheme == 1
                if implicit_visc:
                    damp = h * p[P_K] / mt
                else:
                    v_star -= h * p[P_K] / mt * v_pred
                    damp = 0.0
                if scheme == 1:
                    v_new = _friction_update(v_star, h / mt, bound, damp)
                else:
                    v_new = v_star / (1.0 + damp)
                x_new = x_pred + h * v_new
                if x_new >= p[P_XMAX] and v_new > 0.0:
                    x_new = p[P_XMAX]
                    v_new = 0.0
                elif x_new <= p[P_XMIN] and v_new < 0.0:
                    x_new = p[P_XMIN]
                    v_new = 0.0
                hsum += h * (fh - p[P_K] * (v_new if implicit_visc else v_pred))
                fsum += h * fh
                v_pred = v_new
                x_pred = x_new
            s[S_XV] = xv
            s[S_WV] = wv
            s[S_PA] = pa
            s[S_PB] = pb
            s[S_VP] = v0 + hsum / m
            hyd[a] = abs(fsum)
            # reaction of the hydraulic and viscous forces on the barrel (body i) at P_i
            if bodies[bi, B_INVM] > 0.0:
                for c in range(3):
                    bodies[bi, B_VEL + c] -= hsum * bodies[bi, B_INVM] * nvec[a, c]
                    bodies[bi, B_OMEGA + c] -= hsum * iti[a, c]
        # (3) sequential impulses
        for a in range(n_a):
            lam_p[a] = 0.0
            lam_f[a] = 0.0
            lam_lo[a] = 0.0
            lam_hi[a] = 0.0
            x = length[a] - geo[a, G_X0]
            vr = _jb_v(bodies, geoi[a, GI_I], geoi[a, GI_J], nvec[a], ti[a], tj[a])
            # a limit row is active when the stop is reached or would be within this step
            act_lo[a] = x + dt * min(vr, 0.0) <= par[a, P_XMIN]
            act_hi[a] = x + dt * max(vr, 0.0) >= par[a, P_XMAX]
            bias_lo[a] = (par[a, P_XMIN] - x) / dt
            bias_hi[a] = (par[a, P_XMAX] - x) / dt
        sweeps = 0
        dmax = 0.0
        for sweep in range(max_sweeps):
            dmax = 0.0
            for a in range(n_a):
                bi = geoi[a, GI_I]
                bj = geoi[a, GI_J]
                s = state[a]
                if kb[a] <= 0.0:
                    continue
                inv_m = 1.0 / par[a, P_M]
                # piston row (9)
                cdot = _jb_v(bodies, bi, bj, nvec[a], ti[a], tj[a]) - s[S_VP]
                dp = -cdot / (kb[a] + inv_m)
                _apply(bodies, bi, bj, nvec[a], iti[a], itj[a], dp)
                s[S_VP] -= dp * inv_m
                lam_p[a] += dp
                dmax = max(dmax, abs(dp))
                # dry friction / brake row on the relative axial velocity, |lambda| <= F dt
                if fbound[a] > 0.0:
                    vr = _jb_v(bodies, bi, bj, nvec[a], ti[a], tj[a])
                    old = lam_f[a]
                    lim = fbound[a] * dt
                    lam_f[a] = min(lim, max(-lim, old - vr / kb[a]))
                    dl = lam_f[a] - old
                    _apply(bodies, bi, bj, nvec[a], iti[a], itj[a], dl)
                    dmax = max(dmax, abs(dl))
                # stroke limits (unilateral)
                if act_lo[a]:
                    vr = _jb_v(bodies, bi, bj, nvec[a], ti[a], tj[a])
                    old = lam_lo[a]
                    lam_lo[a] = max(0.0, old + (bias_lo[a] - vr) / kb[a])
                    dl = lam_lo[a] - old
                    _apply(bodies, bi, bj, nvec[a], iti[a], itj[a], dl)
                    dmax = max(dmax, abs(dl))
                if act_hi[a]:
                    vr = _jb_v(bodies, bi, bj, nvec[a], ti[a], tj[a])
                    old = lam_hi[a]
                    lam_hi[a] = min(0.0, old + (bias_hi[a] - vr) / kb[a])
                    dl = lam_hi[a] - old
                    _apply(bodies, bi, bj, nvec[a], iti[a], itj[a], dl)
                    dmax = max(dmax, abs(dl))
            sweeps = sweep + 1
            if dmax <= eps:
                break
        # under-drive guard (digest N3): impulse the sub-steps delivered over the impulse of the
        # step-start pressure force; << 1 means the column collapsed during the sub-steps
        ratio = 1e300
        for a in range(n_a):
            if fh0[a] > 0.0:
                ratio = min(ratio, hyd[a] / fh0[a])
        diag[step, 0] = sweeps
        diag[step, 1] = dmax
        diag[step, 2] = ratio if ratio < 1e300 else np.nan
        # (4) positions
        for b in range(n_b):
            body = bodies[b]
            for c in range(3):
                body[B_POS + c] += dt * body[B_VEL + c]
            body[B_Q:B_Q + 4] = quat_integrate_inertial(body[B_Q:B_Q + 4],
                                                        body[B_OMEGA:B_OMEGA + 3], dt)
        # (5) drift: piston coordinate re-projected on the geometry (constraint (6))
        for a in range(n_a):
            kb[a], length[a] = _row_geometry(bodies, geo[a], geoi[a], nvec[a], ti[a], tj[a],
                                             iti[a], itj[a])
            state[a, S_XP] = length[a] - geo[a, G_X0]
    return body_out, act_out, t_out, diag
