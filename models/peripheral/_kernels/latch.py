"""Peripheral unit: latches with mass, their stops, the capture sensors and the capture logic,
as numba kernels (contact-paper digest 9.1, 9.7, 9.8, 7.4 and 5).

Every quantity is in the axes of the passive unit (PU, SI units; ``X_PU`` points from the
passive interface plane into the passive craft, along the approach). The unit's time-loop
kernel transforms each latch's base point ``A`` and unit direction ``n_L`` (base -> tip) into PU
every step and calls these functions; the undeformed tip is ``E0 = A + L n_L`` and the tip at
retraction ``x_L`` is ``E = E0 - x_L n_L``.

The stop (a solid 45/45 ridge on the passive ring's inner wall), its layout ``SP_*`` /
``FEAT_*`` and the tip-vs-stop detectors live in :mod:`models.peripheral._kernels.stop`; they
are re-exported here.

Latch dynamics (9.7)
--------------------
``m_L dv/dt = -k_L x_L - f_L0 + f_RL``, ``dx_L/dt = v`` with implicit Euler and the dev note's
linearised contact: ``f_RL(x) ~ f_RL(x_n) - k_c (x - x_n)``, ``k_c = k_LS (n_L . n_R)^2``
(:func:`latch_implicit_step`). Internal stop at ``x_L = 0`` and stroke limit: a step that ends
outside ``[0, stroke]`` ends on the limit at rest (an inelastic stop); the kinetic and spring
energy it removes is booked as stop dissipation. Trigger (a flag, permanent): the segment from
``A`` to the current tip crosses ``P_Stop`` inside ``R_Stop,min`` and within the stop's angular
width; from then on the guide contact is no longer computed (``f_RL = 0``) and the spring
returns the latch to its internal stop.

Latch sub-steps (:func:`latches_between_sub`): the latch on its guide contact is a 0.5 kg
plunger on a 1e6 N/m contact in the reference (1414 rad/s), and implicit Euler at the RK4
step damps and delays it at first order in ``omega h``: the reference preset's 0.4-ms
contact step was bound by the latches' own energy ledger, and at 0.8-1 ms the latch strikes
of the shipped misaligned flight moved its event times by 3-10 sigma of the records' switch
timing (docs/design/peripheral_contact_step.rst: each contact step against small-step runs).
The latch's state is its own (the vehicles see it only through the forces held over the
next step), so it can take shorter steps than the vehicles: the step is cut into ``n``
sub-steps over the latch geometry interpolated linearly from the step's start to its end
(exact for a uniform relative motion; the last sub-step at the end geometry itself), each
the implicit step above with its trigger test and its ledger, which closes at every
sub-step as it does at every step. The held forces come from the end state as before. A
trigger is timed at its sub-step. What remains of the RK4 step's bound is the held-force
lag, first order in ``h`` on the vehicles (docs/design/peripheral_contact_step.rst, sub-steps).

Forces between the ring and the passive unit from a latch (held over the next RK4 step):
along ``n_L`` the force that the latch actually transmits, ``F``: the spring ``k_L x_L + f_L0``
while the latch is displaced and in contact; the axial contact component ``f_RL`` while it rests
on its internal stop (the stop carries ``f_L0 - f_RL``, an internal force of the ring); the
larger of the two when it is bottomed at its stroke limit. The ring receives ``-F n_L`` and the
passive unit ``+F n_L`` at the tip ``E`` (one point for both, so angular momentum is kept).
With no contact nothing is transmitted to the passive unit, so no force is applied (reading:
the dev note's "while displaced" would push the passive unit through a latch that does not
touch it; the latch's own momentum is not a state of the vehicles). Switch ``full_normal``:
the component of the contact force normal to the latch axis, carried by the latch guide,
``f_n (n_R - (n_L . n_R) n_L)``, is added (ring ``-``, passive ``+``). The paper transmits only
the axial part (kept as the option ``full_normal`` off); the unit's run sets it on
(``P_FULL_NORMAL = 1`` in :func:`models.peripheral.simulate.pack`) because only the full normal
keeps the energy ledger: for a tip sliding on a frictionless face with normal ``n_R`` the
latch spring absorbs the power ``f_n (n_R . v_rel)`` while the axial-only transmission takes
``f_n (n_L . n_R)(n_L . v_rel)`` from the vehicles; the difference is work done on the latch
that no vehicle supplies.

Post-trigger contacts act inside the RK4 stages (:func:`latches_stage`): once triggered the
latch rests on its internal stop and is a rigid part of the ring, so its contacts with the
locking face are ordinary stiff penalty contacts between the two vehicles (contact law of 5,
with damping and friction). Holding such a force constant over a step of the explicit
integrator (as is done for the soft latch spring) is the explicit Euler treatment of a stiff
spring and is unstable for a step near the contact period; evaluating it at every stage with
the ring's and passive unit's twists is the same treatment as every other contact of the unit.
The contacts are the latch tip against the solid stop (usually its locking face; the guide face
if a triggered tip re-enters from the front) and the segment ``A E`` against the crest circle
(digest: "separately or simultaneously"). The reaction goes into the internal stop: ``x_L`` is
not changed by them.

Capture sensors (9.8): zero-mass plungers, sphere against the passive ring plane (7.4):
stroke ``delta = max(0, x_S - x_C,min)`` capped at travel, force ``f_s0 + k_s delta`` along
``X_PU`` on the passive unit (the ring gets the opposite), switched when ``delta >= delta_trig``.
They have no state and are stiff only as the mechanism is, so :func:`sensors_force` can be
called at every stage (recommended: no lag) or between steps.

Capture (9.1): with the ring planes aligned (relative angle and axial gap within tolerances)
and at least one latch of each duplicated pair triggered (:func:`capture_state`).

Packed layouts (offsets named below; the readable layer :mod:`models.peripheral.latches` builds
the constant tables):

* latch parameters ``lat[i, LP_*]`` (one row per latch);
* latch geometry in PU, per step, ``lg[i, LG_*]``: ``A`` (3), ``n_L`` (3, unit);
* stop parameters ``stp[j, SP_*]`` (latch ``i`` engages stop ``lat[i, LP_STOP]``);
* latch state ``ls[i, LS_*]`` (float) and the trigger flags ``trig[i]`` (int64, 0/1);
* held latch forces ``hf[i, HF_*]`` and the totals ``tot[T_*]`` written by
  :func:`latches_between`;
* stage accumulator ``acc[A_*]`` (added to by :func:`latches_stage` and :func:`sensors_force`);
* sensor parameters ``sen[k, SN_*]``, per-step sphere centres ``ps[k, 0:3]``, sensor output
  ``so[k, SO_*]`` and switch flags ``sw[k]`` (int64).

Status: every function that can fail returns ``(status, index)`` with the contact codes of
:mod:`models._kernels.contact` (``NONE``/0 = fine, ``PENETRATION_EXCEEDED``, ``GEOMETRY_RANGE``)
and the latch or sensor index at fault.

References
----------
Seed digest ``docking-contact-models.md`` 5, 7.4, 9.1, 9.7, 9.8 (Golubev & Yaskevich, Keldysh
preprint 4, 2020, doi:10.20948/prepr-2020-4).
"""
from __future__ import annotations

import math

from numba import njit

from models._kernels import NJIT, NJIT_LEAF
from models._kernels.contact_force import contact_force
from models._kernels.contact_layout import (
    CONTACT, LAW_K, LAW_SIZE, NONE, PENETRATION_EXCEEDED, TW_O, TW_V, TW_W, check_penetration)
from models._kernels.contact_revolution import sphere_vs_plane
from models.peripheral._kernels.stop import (  # noqa: F401  (re-exported)
    FEAT_CREST, FEAT_EDGE, FEAT_FACE, FEAT_GUIDE, FEAT_LOCK, FEAT_WALL, SP_CPHI,
    SP_COSHW, SP_FILLET, SP_GUIDE, SP_LOCK, SP_RMAX, SP_RMIN, SP_SIZE, SP_SPHI, SP_X0,
    SP_XTOP, SP_XWALL, latch_crossing, stop_solid_contact)

__all__ = [
    # latch parameters
    "LP_LEN", "LP_MASS", "LP_IMASS", "LP_K", "LP_F0", "LP_STROKE", "LP_KLS", "LP_STOP",
    "LP_PAIR", "LP_DNMAX", "LP_LAW", "LP_SIZE",
    # latch geometry per step
    "LG_A", "LG_N", "LG_SIZE",
    # stops (models.peripheral._kernels.stop, re-exported)
    "SP_CPHI", "SP_SPHI", "SP_COSHW", "SP_RMIN", "SP_RMAX", "SP_X0", "SP_XTOP", "SP_GUIDE",
    "SP_LOCK", "SP_XWALL", "SP_FILLET", "SP_SIZE", "FEAT_GUIDE", "FEAT_LOCK", "FEAT_CREST",
    "FEAT_WALL", "FEAT_FACE", "FEAT_EDGE",
    # latch state, held forces, totals, stage accumulator
    "LS_X", "LS_V", "LS_WC", "LS_DNUM", "LS_DSTOP", "LS_FRL", "LS_DN", "LS_SIZE",
    "HF_F", "HF_P", "HF_MR", "HF_MP", "HF_SIZE",
    "T_FR", "T_MR", "T_FP", "T_MP", "T_ESPRING", "T_EKIN", "T_WC", "T_DNUM", "T_DSTOP",
    "T_SIZE",
    "A_FR", "A_MR", "A_FP", "A_MP", "A_PDISS", "A_PEL", "A_ESENS", "A_SIZE",
    # sensors
    "SN_R", "SN_F0", "SN_K", "SN_TRAVEL", "SN_TRIG", "SN_SIZE",
    "SO_DELTA", "SO_F", "SO_P", "SO_SIZE",
    # kernels
    "stop_solid_contact", "latch_crossing", "latch_implicit_step", "latch_energy",
    "latches_between", "latches_between_sub", "latches_stage", "latches_touch",
    "sensors_force", "capture_state",
]

# --------------------------------------------------------------------------------------------
# latch parameters lat[i, :]
LP_LEN = 0       # latch length L, base A -> undeformed tip E0 [m]
LP_MASS = 1      # reduced mass m_L,x [kg]
LP_IMASS = 2     # 1 / m_L [1/kg] (derived by the packer)
LP_K = 3         # spring stiffness k_L [N/m]
LP_F0 = 4        # spring preload f_L0 [N]
LP_STROKE = 5    # largest retraction x_L [m]
LP_KLS = 6       # latch-stop (guide) contact stiffness k_LS [N/m]
LP_STOP = 7      # index of the stop this latch engages (float holding an int)
LP_PAIR = 8      # index of its duplicated pair (float holding an int)
LP_DNMAX = 9     # largest admissible penetration of its contacts [m]
LP_LAW = 10      # contact law of the post-trigger contacts (LAW_SIZE): k_S, c_D, k_Fr, v_eps,
#                  model (models._kernels.contact_layout LAW_*)
LP_SIZE = LP_LAW + LAW_SIZE

# latch geometry in PU, per step, lg[i, :]
LG_A = 0         # base point A (3) [m]
LG_N = 3         # unit direction n_L, base -> tip (3) [-]
LG_SIZE = 6

_SQRT1_2 = 0.7071067811865476     # 1 / sqrt 2: the 45-degree faces

# latch state ls[i, :]
LS_X = 0         # retraction x_L [m] (0 = extended, on the internal stop)
LS_V = 1         # its rate v_L [m/s]
LS_WC = 2        # work done on the latch by the guide contact, cumulative [J]
LS_DNUM = 3      # implicit-Euler numerical dissipation, cumulative [J]
LS_DSTOP = 4     # energy removed at the internal stop / stroke limit, cumulative [J]
LS_FRL = 5       # guide contact force along n_L at the end of the last step [N]
LS_DN = 6        # guide contact penetration at the end of the last step [m]
LS_SIZE = 7

# held forces of one latch hf[i, :] (PU axes)
HF_F = 0         # force on the ring (3) [N]; the passive unit gets the opposite
HF_P = 3         # application point (3) [m]
HF_MR = 6        # moment of the ring force about the ring reference point (3) [N m]
HF_MP = 9        # moment of the passive force about the passive reference point (3) [N m]
HF_SIZE = 12

# totals over the latches tot[:], written by latches_between
T_FR = 0         # force on the ring (3) [N]
T_MR = 3         # its moment about the ring reference point (3) [N m]
T_FP = 6         # force on the passive unit (3) [N]
T_MP = 9         # its moment about the passive reference point (3) [N m]
T_ESPRING = 12   # spring energy sum(k_L x^2 / 2 + f_L0 x) [J]
T_EKIN = 13      # latch kinetic energy sum(m_L v^2 / 2) [J]
T_WC = 14        # work done by the guide contacts on the latches, cumulative [J]
T_DNUM = 15      # implicit-Euler numerical dissipation, cumulative [J]
T_DSTOP = 16     # dissipated at the internal stops / stroke limits, cumulative [J]
T_SIZE = 17

# stage accumulator acc[:] (added to; the caller zeroes it at each stage)
A_FR = 0         # force on the ring (3) [N]
A_MR = 3         # its moment about the ring twist's reference point (3) [N m]
A_FP = 6         # force on the passive unit (3) [N]
A_MP = 9         # its moment about the passive twist's reference point (3) [N m]
A_PDISS = 12     # power dissipated by the post-trigger contacts (damping, friction) [W]
A_PEL = 13       # elastic power k_S dn d(dn)/dt of the post-trigger contacts [W]
A_ESENS = 14     # potential energy of the capture-sensor springs [J]
A_SIZE = 15

# capture sensors sen[k, :]
SN_R = 0         # sphere radius R_S [m]
SN_F0 = 1        # spring preload f_s0 [N]
SN_K = 2         # spring rate k_s [N/m]
SN_TRAVEL = 3    # plunger travel [m]
SN_TRIG = 4      # switching stroke delta_trig [m]
SN_SIZE = 5
# sensor output so[k, :]
SO_DELTA = 0     # stroke delta [m]
SO_F = 1         # force magnitude on the passive unit, along the plane normal [N]
SO_P = 2         # application point on the passive plane (3) [m]
SO_SIZE = 5

# --------------------------------------------------------------------------------------------
# latch dynamics
@njit(**NJIT_LEAF)
def latch_implicit_step(x, v, h, m_inv, k_l, f0, f_r, k_c):
    """One implicit-Euler step of the latch with the linearised contact (digest 9.7).

    .. math::

        \\begin{bmatrix}1 & h(k_L+k_c)/m\\\\ -h & 1\\end{bmatrix}
        \\begin{bmatrix}v_{n+1}\\\\ x_{n+1}\\end{bmatrix} =
        \\begin{bmatrix}v_n + (f_{RL}(x_n) + k_c x_n - f_{L0})h/m\\\\ x_n\\end{bmatrix}

    solved by Cramer's rule: ``Delta0 = 1 + h^2 (k_L + k_c)/m``,
    ``v = (v_n + h (f_RL - f_L0 - k_L x_n)/m) / Delta0``,
    ``x = (x_n + h (v_n + (f_RL + k_c x_n - f_L0) h/m)) / Delta0``.

    Parameters
    ----------
    x, v : float
        Retraction [m] and its rate [m/s] at the start of the step.
    h : float
        Step [s].
    m_inv : float
        ``1 / m_L`` [1/kg].
    k_l, f0 : float
        Spring stiffness [N/m] and preload [N].
    f_r : float
        Contact force along ``n_L`` at ``x`` [N] (compressing the spring when > 0).
    k_c : float
        Linearised contact stiffness ``k_LS (n_L . n_R)^2`` [N/m] (0 without contact).

    Returns
    -------
    (x_new, v_new) : the unconstrained end state (no internal stop, no stroke limit).
    """
    hm = h * m_inv
    d0 = 1.0 + h * hm * (k_l + k_c)
    inv = 1.0 / d0
    v_new = (v + hm * (f_r - f0 - k_l * x)) * inv
    x_new = (x + h * (v + (f_r + k_c * x - f0) * hm)) * inv
    return x_new, v_new


@njit(**NJIT_LEAF)
def latch_energy(x, v, m, k_l, f0):
    """Spring energy ``k_L x^2/2 + f_L0 x`` [J] (the potential of ``k_L x + f_L0``, zero on
    the internal stop) and kinetic energy ``m v^2 / 2`` [J] of one latch."""
    return 0.5 * k_l * x * x + f0 * x, 0.5 * m * v * v


@njit(**NJIT_LEAF)
def _guide_contact(lg, lat, stp, i, x):
    """Tip of latch ``i`` at retraction ``x`` against its stop: (status, depth, n.n_L, f_RL,
    k_c, nx, ny, nz, ex, ey, ez)."""
    j = int(lat[i, LP_STOP])
    nlx = lg[i, LG_N]
    nly = lg[i, LG_N + 1]
    nlz = lg[i, LG_N + 2]
    s = lat[i, LP_LEN] - x
    ex = lg[i, LG_A] + s * nlx
    ey = lg[i, LG_A + 1] + s * nly
    ez = lg[i, LG_A + 2] + s * nlz
    st, dn, nx, ny, nz, px, py, pz, f = stop_solid_contact(ex, ey, ez, stp, j, lat[i, LP_DNMAX])
    if st == NONE:
        return NONE, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, ex, ey, ez
    c = nlx * nx + nly * ny + nlz * nz
    kls = lat[i, LP_KLS]
    return st, dn, c, c * kls * dn, kls * c * c, nx, ny, nz, ex, ey, ez


@njit(**NJIT_LEAF)
def latches_touch(lg, lat, stp, ls, trig):
    """True when a latch touches its stop: triggered, retracted, or its tip (at its current
    retraction, geometry ``lg`` in PU) within the solid stop. Reads only."""
    for i in range(lat.shape[0]):
        if trig[i] != 0 or ls[i, LS_X] != 0.0:
            return True
        if _guide_contact(lg, lat, stp, i, ls[i, LS_X])[0] != NONE:
            return True
    return False


@njit(**NJIT_LEAF)
def latches_between(h, lg, lat, stp, ls, trig, hf, tot, o_ring, o_pass, full_normal):
    """Advance every latch by one step ``h`` and set the forces held over the next step.

    For each latch: the trigger test at the start of the step (segment ``A -> E`` across
    ``P_Stop`` inside ``R_Stop,min``, within the stop's angular width; sets ``trig[i] = 1``
    for good); before trigger the tip against the solid stop gives ``f_RL = (n_L . n_R) k_LS
    dn`` and ``k_c = k_LS (n_L . n_R)^2``; :func:`latch_implicit_step`; the internal stop and
    the stroke limit; the energy ledger; the transmitted force at the new retraction (see the
    module docstring).

    Parameters
    ----------
    h : float
        Step [s].
    lg : float64[:, LG_SIZE]
        Latch base points and unit directions in PU, at the end of the RK4 step just taken.
    lat : float64[:, LP_SIZE]
        Latch parameters.
    stp : float64[:, SP_SIZE]
        Stops.
    ls : float64[:, LS_SIZE]
        Latch state, updated in place.
    trig : int64[:]
        Trigger flags (0/1), updated in place.
    hf : float64[:, HF_SIZE]
        Held forces per latch, overwritten.
    tot : float64[T_SIZE]
        Totals over the latches, overwritten (forces, moments, energies).
    o_ring, o_pass : float64[3]
        Reference points of the moments on the ring and on the passive unit, PU [m].
    full_normal : bool
        Also transmit the contact force's component normal to the latch axis (the unit's
        run: on, it keeps the energy ledger; off: the paper's axial-only reading).

    Returns
    -------
    (status, index)
        ``NONE`` (0) and -1, or ``PENETRATION_EXCEEDED`` with the latch index (the state is
        updated all the same, so the wrapper can report it).

    Notes
    -----
    Energy ledger, per latch and exactly (to rounding) at every step: with
    ``E = k_L x^2/2 + f_L0 x + m v^2/2``, ``E_n - E_0 = W_c - D_num - D_stop``. ``W_c`` sums
    ``f_lin (x_{n+1} - x_n)``, the work of the linearised contact force at the end of the step
    (which is what the implicit step applies); ``D_num`` sums implicit Euler's own loss
    ``m (v_{n+1}-v_n)^2/2 + k_L (x_{n+1}-x_n)^2/2`` (which vanishes as ``O(h)`` for a smooth
    motion); a step that ends on a limit books whatever energy it removes as ``D_stop``.
    """
    for i in range(lat.shape[0]):
        _advance(h, lg, lat, stp, ls, trig, i)
    return _transmit_all(lg, lat, stp, ls, trig, hf, tot, o_ring, o_pass, full_normal)


@njit(**NJIT_LEAF)
def latches_between_sub(h, n_sub, lg0, lg, lgs, lat, stp, ls, trig, hf, tot, o_ring, o_pass,
                        full_normal, tfrac):
    """:func:`latches_between` with the step ``h`` [s] cut into ``n_sub`` equal sub-steps
    (see the module docstring).

    Parameters
    ----------
    h : float
        Step [s].
    n_sub : int
        Number of sub-steps (>= 1; 1 is :func:`latches_between` to the last bit).
    lg0, lg : float64[:, LG_SIZE]
        Latch geometry in PU at the start and at the end of the RK4 step just taken; at
        sub-step ``k`` the geometry is ``lg0 + (k/n)(lg - lg0)`` with ``n_L`` renormalised,
        the last sub-step ``lg`` itself.
    lgs : float64[:, LG_SIZE]
        Scratch, overwritten.
    lat, stp, ls, trig, hf, tot, o_ring, o_pass, full_normal
        As in :func:`latches_between` (held forces and totals from the end state).
    tfrac : float64[:]
        Where in the step a latch triggered, written only for a latch that triggers in this
        step: ``k/n`` of its sub-step (its trigger time is ``t_end - h (1 - tfrac)``).

    Returns
    -------
    (status, index) as :func:`latches_between`.
    """
    hs = h / n_sub
    # The latches do not act on each other within a step (each reads only its own state and
    # geometry), so each is taken through all its sub-steps in turn; one that rests on its
    # internal stop after its trigger stays there (:func:`_at_rest`), and is left.
    for i in range(lat.shape[0]):
        for s_ in range(1, n_sub + 1):
            if _at_rest(ls, trig, i):
                break
            w = s_ / n_sub
            g = lgs if s_ < n_sub else lg
            if s_ < n_sub:
                for k in range(LG_SIZE):
                    lgs[i, k] = lg0[i, k] + w * (lg[i, k] - lg0[i, k])
                nn = math.sqrt(lgs[i, LG_N] ** 2 + lgs[i, LG_N + 1] ** 2
                               + lgs[i, LG_N + 2] ** 2)
                for k in range(3):
                    lgs[i, LG_N + k] /= nn
            was = trig[i]
            _advance(hs, g, lat, stp, ls, trig, i)
            if trig[i] != was:
                tfrac[i] = w
    return _transmit_all(lg, lat, stp, ls, trig, hf, tot, o_ring, o_pass, full_normal)


@njit(**NJIT_LEAF)
def _transmit_all(lg, lat, stp, ls, trig, hf, tot, o_ring, o_pass, full_normal):
    """:func:`_transmit` for every latch, ``tot`` zeroed first; ``(status, index)`` of the
    first latch whose guide contact is beyond ``LP_DNMAX``."""
    status = NONE
    bad = -1
    for k in range(T_SIZE):
        tot[k] = 0.0
    for i in range(lat.shape[0]):
        if _transmit(lg, lat, stp, ls, trig, hf, tot, i, o_ring, o_pass, full_normal) \
                and status == NONE:
            status = PENETRATION_EXCEEDED
            bad = i
    return status, bad


@njit(**NJIT_LEAF)
def _at_rest(ls, trig, i):
    """True when latch ``i`` has triggered and rests on its internal stop (``x_L = 0``,
    ``v_L = 0``). Its step is then exactly nothing: no guide contact after the trigger, the
    implicit step from rest under the preload ends below 0, and the internal stop puts it
    back at rest, booking ``0 + 0 + 0 - 0 - 0 = 0`` to every ledger term. So it may be
    skipped, bit for bit; after capture all six latches are there, and the 5-ms settled step
    at 0.2-ms latch sub-steps would otherwise run 150 such latch steps."""
    return trig[i] != 0 and ls[i, LS_X] == 0.0 and ls[i, LS_V] == 0.0


@njit(**NJIT_LEAF)
def _advance(h, lg, lat, stp, ls, trig, i):
    """Latch ``i`` over one step ``h`` at geometry ``lg``: the trigger test, the implicit
    step with the linearised guide contact, the internal stop and stroke limit, the ledger.
    Nothing for a latch :func:`_at_rest`."""
    if _at_rest(ls, trig, i):
        return
    m_inv = lat[i, LP_IMASS]
    m = lat[i, LP_MASS]
    kl = lat[i, LP_K]
    f0 = lat[i, LP_F0]
    stroke = lat[i, LP_STROKE]
    j = int(lat[i, LP_STOP])
    x = ls[i, LS_X]
    v = ls[i, LS_V]
    nlx = lg[i, LG_N]
    nly = lg[i, LG_N + 1]
    nlz = lg[i, LG_N + 2]
    fr = 0.0
    kc = 0.0
    if trig[i] == 0:
        s = lat[i, LP_LEN] - x
        ax = lg[i, LG_A]
        ay = lg[i, LG_A + 1]
        az = lg[i, LG_A + 2]
        cr, dc, cy, cz = latch_crossing(ax, ay, az, ax + s * nlx, ay + s * nly,
                                        az + s * nlz, stp, j)
        if cr and dc < stp[j, SP_RMIN]:
            trig[i] = 1
        else:
            st, dn, c, fr, kc, nx, ny, nz, ex, ey, ez = _guide_contact(lg, lat, stp, i, x)
    # implicit step, then the limits
    xn, vn = latch_implicit_step(x, v, h, m_inv, kl, f0, fr, kc)
    es0, ek0 = latch_energy(x, v, m, kl, f0)
    if xn <= 0.0 or xn >= stroke:
        xl = 0.0 if xn <= 0.0 else stroke
        work = (fr - kc * (xl - x)) * (xl - x)
        es1, ek1 = latch_energy(xl, 0.0, m, kl, f0)
        ls[i, LS_DSTOP] += es0 + ek0 + work - es1 - ek1
        xn = xl
        vn = 0.0
    else:
        work = (fr - kc * (xn - x)) * (xn - x)
        dv = vn - v
        dx = xn - x
        ls[i, LS_DNUM] += 0.5 * m * dv * dv + 0.5 * kl * dx * dx
    ls[i, LS_WC] += work
    ls[i, LS_X] = xn
    ls[i, LS_V] = vn


@njit(**NJIT_LEAF)
def _transmit(lg, lat, stp, ls, trig, hf, tot, i, o_ring, o_pass, full_normal):
    """The force latch ``i`` transmits at its current state and geometry ``lg`` into
    ``hf[i]``, added to ``tot``; True when its guide contact is beyond ``LP_DNMAX``."""
    bad = False
    m = lat[i, LP_MASS]
    kl = lat[i, LP_K]
    f0 = lat[i, LP_F0]
    stroke = lat[i, LP_STROKE]
    xn = ls[i, LS_X]
    vn = ls[i, LS_V]
    nlx = lg[i, LG_N]
    nly = lg[i, LG_N + 1]
    nlz = lg[i, LG_N + 2]
    # transmitted force at the new state
    ftr = 0.0
    fnorm = 0.0
    c = 0.0
    nx = 0.0
    ny = 0.0
    nz = 0.0
    s = lat[i, LP_LEN] - xn
    ex = lg[i, LG_A] + s * nlx
    ey = lg[i, LG_A + 1] + s * nly
    ez = lg[i, LG_A + 2] + s * nlz
    ls[i, LS_FRL] = 0.0
    ls[i, LS_DN] = 0.0
    if trig[i] == 0:
        st, dn, c, fr1, kc1, nx, ny, nz, ex, ey, ez = _guide_contact(lg, lat, stp, i, xn)
        if st != NONE:
            if st == PENETRATION_EXCEEDED:
                bad = True
            ls[i, LS_FRL] = fr1
            ls[i, LS_DN] = dn
            fnorm = lat[i, LP_KLS] * dn
            if xn <= 0.0:
                ftr = fr1 if fr1 > 0.0 else 0.0
            elif xn >= stroke:
                ftr = kl * xn + f0
                if fr1 > ftr:
                    ftr = fr1
            else:
                ftr = kl * xn + f0
    fx = -ftr * nlx
    fy = -ftr * nly
    fz = -ftr * nlz
    if full_normal and fnorm > 0.0:
        fx -= fnorm * (nx - c * nlx)
        fy -= fnorm * (ny - c * nly)
        fz -= fnorm * (nz - c * nlz)
    rx = ex - o_ring[0]
    ry = ey - o_ring[1]
    rz = ez - o_ring[2]
    px = ex - o_pass[0]
    py = ey - o_pass[1]
    pz = ez - o_pass[2]
    hf[i, HF_F] = fx
    hf[i, HF_F + 1] = fy
    hf[i, HF_F + 2] = fz
    hf[i, HF_P] = ex
    hf[i, HF_P + 1] = ey
    hf[i, HF_P + 2] = ez
    hf[i, HF_MR] = ry * fz - rz * fy
    hf[i, HF_MR + 1] = rz * fx - rx * fz
    hf[i, HF_MR + 2] = rx * fy - ry * fx
    hf[i, HF_MP] = -(py * fz - pz * fy)
    hf[i, HF_MP + 1] = -(pz * fx - px * fz)
    hf[i, HF_MP + 2] = -(px * fy - py * fx)
    for k in range(3):
        tot[T_FR + k] += hf[i, HF_F + k]
        tot[T_MR + k] += hf[i, HF_MR + k]
        tot[T_FP + k] -= hf[i, HF_F + k]
        tot[T_MP + k] += hf[i, HF_MP + k]
    es, ek = latch_energy(xn, vn, m, kl, f0)
    tot[T_ESPRING] += es
    tot[T_EKIN] += ek
    tot[T_WC] += ls[i, LS_WC]
    tot[T_DNUM] += ls[i, LS_DNUM]
    tot[T_DSTOP] += ls[i, LS_DSTOP]
    return bad


# --------------------------------------------------------------------------------------------
# post-trigger contacts, inside the RK4 stages
@njit(**NJIT_LEAF)
def _apply_contact(dn, nx, ny, nz, px, py, pz, tw_r, tw_p, lat, i, acc):
    """Contact law of 5 for one post-trigger contact; adds to ``acc``."""
    rax = px - tw_r[TW_O]
    ray = py - tw_r[TW_O + 1]
    raz = pz - tw_r[TW_O + 2]
    rpx = px - tw_p[TW_O]
    rpy = py - tw_p[TW_O + 1]
    rpz = pz - tw_p[TW_O + 2]
    wx, wy, wz = tw_r[TW_W], tw_r[TW_W + 1], tw_r[TW_W + 2]
    vax = tw_r[TW_V] + wy * raz - wz * ray
    vay = tw_r[TW_V + 1] + wz * rax - wx * raz
    vaz = tw_r[TW_V + 2] + wx * ray - wy * rax
    wx, wy, wz = tw_p[TW_W], tw_p[TW_W + 1], tw_p[TW_W + 2]
    vpx = tw_p[TW_V] + wy * rpz - wz * rpy
    vpy = tw_p[TW_V + 1] + wz * rpx - wx * rpz
    vpz = tw_p[TW_V + 2] + wx * rpy - wy * rpx
    rvx = vax - vpx
    rvy = vay - vpy
    rvz = vaz - vpz
    law = lat[i, LP_LAW:LP_LAW + LAW_SIZE]
    fn, dd, fx, fy, fz = contact_force(dn, nx, ny, nz, rvx, rvy, rvz, law)
    acc[A_FP] += fx
    acc[A_FP + 1] += fy
    acc[A_FP + 2] += fz
    acc[A_FR] -= fx
    acc[A_FR + 1] -= fy
    acc[A_FR + 2] -= fz
    acc[A_MP] += rpy * fz - rpz * fy
    acc[A_MP + 1] += rpz * fx - rpx * fz
    acc[A_MP + 2] += rpx * fy - rpy * fx
    acc[A_MR] -= ray * fz - raz * fy
    acc[A_MR + 1] -= raz * fx - rax * fz
    acc[A_MR + 2] -= rax * fy - ray * fx
    pel = law[LAW_K] * dn * dd
    acc[A_PEL] += pel
    acc[A_PDISS] += fx * rvx + fy * rvy + fz * rvz - pel


@njit(**NJIT_LEAF)
def latches_stage(lg, lat, stp, ls, trig, tw_r, tw_p, acc):
    """Post-trigger contacts of every triggered latch, at one RK4 stage (see the module
    docstring for why they act inside the stages).

    For a triggered latch ``i`` with its tip ``E = A + (L - x_L) n_L`` (``x_L`` from ``ls``,
    held over the step): the tip against the solid stop (:func:`stop_solid_contact`, normal
    ``(+1, rho_hat)/sqrt 2`` below the guide face, ``(-1, rho_hat)/sqrt 2`` below the locking
    face), and the segment ``A E`` against the crest circle: where it crosses ``P_Stop`` at
    ``C`` within the angular width with ``d_C > R_Stop,min``, ``depth = (d_C - R_min)/sqrt 2``,
    normal ``(-1, rho_hat_C)/sqrt 2`` (locking orientation), point ``C``. Each contact goes
    through the contact law of 5 (``lat[i, LP_LAW:]``) with the twists; the forces and moments
    on both bodies and the powers are added to ``acc``.

    Parameters
    ----------
    lg, lat, stp, ls, trig
        As in :func:`latches_between` (``lg`` at this stage's configuration).
    tw_r, tw_p : float64[TW_SIZE]
        Twists of the ring and of the passive unit in PU (``v_O``, ``omega``, ``O``; the
        moments in ``acc`` are about these ``O``).
    acc : float64[A_SIZE]
        Stage accumulator, added to.

    Returns
    -------
    (status, index) as :func:`latches_between`; a penetration beyond ``LP_DNMAX`` still adds
    its force.
    """
    status = NONE
    bad = -1
    for i in range(lat.shape[0]):
        if trig[i] == 0:
            continue
        j = int(lat[i, LP_STOP])
        dn_max = lat[i, LP_DNMAX]
        ax = lg[i, LG_A]
        ay = lg[i, LG_A + 1]
        az = lg[i, LG_A + 2]
        s = lat[i, LP_LEN] - ls[i, LS_X]
        ex = ax + s * lg[i, LG_N]
        ey = ay + s * lg[i, LG_N + 1]
        ez = az + s * lg[i, LG_N + 2]
        st, dn, nx, ny, nz, px, py, pz, f = stop_solid_contact(ex, ey, ez, stp, j, dn_max)
        if st != NONE:
            if st != CONTACT and status == NONE:
                status = st
                bad = i
            _apply_contact(dn, nx, ny, nz, px, py, pz, tw_r, tw_p, lat, i, acc)
        cr, dc, cy, cz = latch_crossing(ax, ay, az, ex, ey, ez, stp, j)
        if cr and dc > stp[j, SP_RMIN]:
            dn = (dc - stp[j, SP_RMIN]) * _SQRT1_2
            st = check_penetration(dn, dn_max)
            if st != CONTACT and status == NONE:
                status = st
                bad = i
            inv = _SQRT1_2 / dc
            _apply_contact(dn, -_SQRT1_2, cy * inv, cz * inv, stp[j, SP_XTOP], cy, cz,
                           tw_r, tw_p, lat, i, acc)
    return status, bad


# --------------------------------------------------------------------------------------------
# capture sensors
@njit(**NJIT_LEAF)
def sensors_force(ps, sen, plane, sw, so, acc, o_ring, o_pass):
    """Capture sensors (digest 9.8): zero-mass spring plungers with spherical tips against the
    passive ring plane (7.4).

    Parameters
    ----------
    ps : float64[:, 3]
        Sphere centres of the undeflected sensors in PU [m].
    sen : float64[:, SN_SIZE]
        Sensor parameters.
    plane : float64[PL_SIZE]
        The passive ring plane as a plane fragment (contact_layout ``PL_*``; side +1, the
        material at ``x > x_p``).
    sw : int64[:]
        Switch flags, overwritten: 1 where ``delta >= delta_trig`` (``capture_sensor_k``).
    so : float64[:, SO_SIZE]
        Per-sensor stroke, force and point, overwritten.
    acc : float64[A_SIZE]
        Forces, moments (about ``o_ring`` / ``o_pass``) and ``A_ESENS`` added to.
    o_ring, o_pass : float64[3]
        Moment reference points [m].

    Notes
    -----
    ``delta = min(max(0, x_S - x_C,min), travel)`` with ``x_C,min = x_p - R_S`` (the depth the
    undeflected sphere would have); force ``F = f_s0 + k_s delta`` when ``delta > 0``, on the
    passive unit ``+F n`` (``n = (side, 0, 0)``) and on the ring ``-F n``, both at the point
    of the plane under the sphere centre. Past the travel the force stays at its largest value.
    Potential, added to ``A_ESENS``: ``f_s0 d + k_s delta^2/2 + k_s travel (d - delta)`` with
    ``d`` the uncapped stroke, so that ``F = dU/dd``.
    """
    for k in range(sen.shape[0]):
        st, d, nx, ny, nz, px, py, pz, f = sphere_vs_plane(ps[k, 0], ps[k, 1], ps[k, 2],
                                                           sen[k, SN_R], plane, 1e300)
        so[k, SO_P] = plane[0]
        so[k, SO_P + 1] = ps[k, 1]
        so[k, SO_P + 2] = ps[k, 2]
        if st == NONE:
            so[k, SO_DELTA] = 0.0
            so[k, SO_F] = 0.0
            sw[k] = 0
            continue
        tr = sen[k, SN_TRAVEL]
        dl = d if d < tr else tr
        fmag = sen[k, SN_F0] + sen[k, SN_K] * dl
        so[k, SO_DELTA] = dl
        so[k, SO_F] = fmag
        sw[k] = 1 if dl >= sen[k, SN_TRIG] else 0
        fx = fmag * nx
        rpy = ps[k, 1] - o_pass[1]
        rpz = ps[k, 2] - o_pass[2]
        ray = ps[k, 1] - o_ring[1]
        raz = ps[k, 2] - o_ring[2]
        acc[A_FP] += fx
        acc[A_FR] -= fx
        # moment of (fx, 0, 0) at r: (0, rz fx, -ry fx)
        acc[A_MP + 1] += rpz * fx
        acc[A_MP + 2] -= rpy * fx
        acc[A_MR + 1] -= raz * fx
        acc[A_MR + 2] += ray * fx
        acc[A_ESENS] += sen[k, SN_F0] * d + 0.5 * sen[k, SN_K] * dl * dl + sen[k, SN_K] * tr * (
            d - dl)


# --------------------------------------------------------------------------------------------
# capture
@njit(**NJIT_LEAF)
def capture_state(trig, lat, n_pair, cos_rel, gap, cos_tol, gap_tol, latch_out):
    """Capture flag of the unit (digest 9.1).

    Parameters
    ----------
    trig : int64[:]
        Latch trigger flags.
    lat : float64[:, LP_SIZE]
        Latch parameters (``LP_PAIR``: pair index ``0 .. n_pair-1``).
    n_pair : int
        Number of duplicated pairs.
    cos_rel : float
        Cosine of the angle between the two ring planes' normals (active ring axis . X_PU).
    gap : float
        Axial gap between the ring planes [m] (any sign).
    cos_tol : float
        Cosine of the largest relative angle that counts as aligned.
    gap_tol : float
        Largest ``|gap|`` that counts as aligned [m].
    latch_out : int64[:]
        Per-latch flags, overwritten: 1 where the latch is behind its stop (``latch_k``).

    Returns
    -------
    int : 1 when the planes are aligned and at least one latch of each pair is triggered.
    """
    n = lat.shape[0]
    for i in range(n):
        latch_out[i] = 1 if trig[i] != 0 else 0
    if cos_rel < cos_tol or abs(gap) > gap_tol:
        return 0
    for p in range(n_pair):
        held = False
        for i in range(n):
            if int(lat[i, LP_PAIR]) == p and trig[i] != 0:
                held = True
                break
        if not held:
            return 0
    return 1
