"""Trace buffer of the docking-unit kernels: its columns, the routine table that names every
value column, and the allocation-free writer (the paper's debugging practice, digest 10:
record every selected routine's inputs, intermediates and outputs per step in a time window).

A unit's ``run`` kernel takes a buffer ``tr`` (float64[n_rows, TR_NCOL]) and a counter
``trn`` (int64[2]: rows written, rows dropped because the buffer was full), and the window
``[T0, T1]`` [s] with a group bit mask (``G_*``) in its packed parameters. Once per RK4 stage
(and once before the between-steps routines) the kernel calls :func:`trace_stage`, which puts
the groups to record now into the trace context ``tx`` (``TX_*``; ``tx[TX_MASK] = 0`` outside
the window or with tracing off), so a hook costs one float comparison when tracing is off.
A hook writes a row with :func:`trace_open` (fixed columns, value columns set to NaN) and then
its value columns ``TR_V0 + k``. Tracing only reads the model's state: it never changes a
result.

Fixed columns: ``TR_T`` model time of the stage [s], ``TR_STEP`` index of the step (0 = the
step that starts at t = 0), ``TR_STAGE`` RK4 stage 0-3 or -1 for the between-steps routines,
``TR_ROUTINE`` a routine code (:data:`ROUTINES`), ``TR_I``, ``TR_J`` primitive / element
indices (-1: none), ``TR_STATUS`` the routine's status (contacts: the detector's code of
:mod:`models._kernels.contact_layout`; see each routine), then ``TR_NV`` value columns.

:data:`ROUTINES` maps each code to ``(group, name, fields, units)``: the name of every value
column of the routine, in order, and its unit (SI; ``"1"`` for flags and pure numbers).
Frames: both units' contact and latch quantities are in PU axes (positions from the PU
origin); the peripheral unit's leg unit vectors are in AU axes. The probe-cone hysteresis
elements' coordinates are the stroke [m], the housing tangents ``psi``, ``theta`` [-] and
the torsion angle [rad] (element 0-3), with their rates.

Groups: ``contact`` the contacts each detector reports (what the model applies), ``latch``,
``mechanism``, and ``search`` (peripheral unit, not in :data:`DEFAULT_GROUPS`): every fan
search of a stage whatever its result, with the full fan frame and circle, so that a test
can replay it against exhaustive search (``tests/models/test_peripheral_fan_replay.py``).
A contact row's value columns are the routine's ``CONTACT_NIN`` inputs and then
:data:`CONTACT_OUT`, written by :func:`contact_open` and :func:`contact_force_columns` for
both units.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from models._kernels import NJIT, NJIT_LEAF
from models._kernels.contact_force import point_velocity  # noqa: F401  (re-exported)

__all__ = [
    "TR_T", "TR_STEP", "TR_STAGE", "TR_ROUTINE", "TR_I", "TR_J", "TR_STATUS", "TR_V0", "TR_NV",
    "TR_NCOL", "TRN_ROWS", "TRN_DROPPED", "TRN_SIZE",
    "TX_MASK", "TX_T", "TX_STEP", "TX_STAGE", "TX_SAVE", "TX_NSAVE", "TX_SIZE",
    "G_CONTACT", "G_LATCH", "G_MECHANISM", "G_SEARCH", "GROUPS", "DEFAULT_GROUPS",
    "STAGE_BETWEEN", "R_FAN_ACTIVE", "R_FAN_PASSIVE", "R_EDGE_EDGE", "R_EDGE_ACTIVE_CIRCLE",
    "R_EDGE_PASSIVE_CIRCLE", "R_POINT_PASSIVE_PLANE", "R_POINT_ACTIVE_PLANE",
    "R_LATCH_BETWEEN", "R_LATCH_STAGE", "R_LATCH_STAGE_TOTAL", "R_SENSOR", "R_CAPTURE",
    "R_LEG_FORCES", "R_LEGS_BETWEEN", "R_RING", "R_FAN_SEARCH_ACTIVE", "R_FAN_SEARCH_PASSIVE",
    "R_PC_HEAD", "R_PC_HOUSING", "R_PC_PAD_MOUTH", "R_PC_LATCH_SLOT", "R_PC_PLUNGER",
    "R_PC_SENSOR_FRICTION", "R_PC_IMPLICIT_FRICTION",
    "R_PC_MECHANISM", "R_PC_ELEMENTS",
    "CONTACT_NIN", "CONTACT_OUT", "ROUTINES", "group_mask", "trace_begin", "trace_stage", "traced",
    "trace_open", "contact_open", "contact_force_columns", "point_velocity",
]

# ---- columns of tr --------------------------------------------------------------------------
TR_T = 0            # model time of the stage / between-steps update [s]
TR_STEP = 1         # step index
TR_STAGE = 2        # RK4 stage 0-3, or STAGE_BETWEEN
TR_ROUTINE = 3      # routine code (ROUTINES)
TR_I = 4            # first primitive / element index (-1: none)
TR_J = 5            # second primitive index (-1: none)
TR_STATUS = 6       # status of the routine
TR_V0 = 7           # first value column
TR_NV = 26          # value columns
TR_NCOL = TR_V0 + TR_NV

TRN_ROWS = 0        # rows written
TRN_DROPPED = 1     # rows dropped because the buffer was full
TRN_SIZE = 2

STAGE_BETWEEN = -1

# ---- trace context tx (one per run) ---------------------------------------------------------
TX_MASK = 0         # groups recorded now (0: none; float holding the bit mask)
TX_T = 1            # time of the current stage [s]
TX_STEP = 2         # step index
TX_STAGE = 3        # stage
TX_SAVE = 4         # scratch of the hooks: values saved before a routine runs (TX_NSAVE)
TX_NSAVE = 12
TX_SIZE = TX_SAVE + TX_NSAVE

# ---- groups ---------------------------------------------------------------------------------
G_CONTACT = 1
G_LATCH = 2
G_MECHANISM = 4
G_SEARCH = 8        # every fan search with its full inputs (replayable; peripheral unit)
GROUPS = {"contact": G_CONTACT, "latch": G_LATCH, "mechanism": G_MECHANISM,
          "search": G_SEARCH}
#: the groups a trace records unless told otherwise: the model's routines (``search`` is a
#: verification record, six rows per stage)
DEFAULT_GROUPS = ("contact", "latch", "mechanism")

# ---- routine codes --------------------------------------------------------------------------
# peripheral unit, contact group: the codes equal the unit's PAIR_* codes
R_FAN_ACTIVE = 1
R_FAN_PASSIVE = 2
R_EDGE_EDGE = 3
R_EDGE_ACTIVE_CIRCLE = 4
R_EDGE_PASSIVE_CIRCLE = 5
R_POINT_PASSIVE_PLANE = 6
R_POINT_ACTIVE_PLANE = 7
# peripheral unit, latch group
R_LATCH_BETWEEN = 20
R_LATCH_STAGE = 21
R_LATCH_STAGE_TOTAL = 22
R_SENSOR = 23
R_CAPTURE = 24
# peripheral unit, mechanism group
R_LEG_FORCES = 30
R_LEGS_BETWEEN = 31
R_RING = 32
# peripheral unit, search group: every fan_vs_circle call of a stage, whatever its result
R_FAN_SEARCH_ACTIVE = 40
R_FAN_SEARCH_PASSIVE = 41
# probe-cone unit: contact group
R_PC_HEAD = 101         # head sphere vs the receiving cone, socket and bottom
R_PC_HOUSING = 102      # limiter-pad end point or alignment roller vs the cone
R_PC_PAD_MOUTH = 103    # limiter-pad segment vs the mouth circle
R_PC_LATCH_SLOT = 104   # triggered latch's reverse segment vs its socket slot
# probe-cone unit: latch group
R_PC_PLUNGER = 120      # latch / capture-sensor plunger between steps
R_PC_SENSOR_FRICTION = 121  # capture sensors' axial friction on the socket wall after capture
R_PC_IMPLICIT_FRICTION = 122  # the implicit head friction's correction on the passive unit
# probe-cone unit: mechanism group
R_PC_MECHANISM = 130    # stroke, gimbal and torsion coordinates and the absorber forces
R_PC_ELEMENTS = 131     # hysteresis elements' states between steps

_XYZ = ("x", "y", "z")


def _v(name: str, unit: str) -> tuple:
    return tuple((f"{name}_{a}", unit) for a in _XYZ)


#: input columns of a contact row (the routine's own inputs, NaN where unused)
CONTACT_NIN = 12
#: outputs of every contact row, after its CONTACT_NIN input columns
CONTACT_OUT = (("penetration", "m"), *_v("normal", "1"), *_v("point", "m"),
               *_v("rel_velocity", "m/s"), ("force_normal", "N"), *_v("force", "N"))
_NO_IN = tuple((f"unused_{k}", "1") for k in range(CONTACT_NIN))


def _contact(inputs: tuple) -> tuple:
    return tuple(inputs) + _NO_IN[len(inputs):] + CONTACT_OUT


_RING_IN = (*_v("ring_centre", "m"), *_v("ring_axis", "1"))
_CIRC_IN = (*_v("circle_centre", "m"), *_v("circle_axis", "1"))
_SEG_IN = (*_v("seg_start", "m"), *_v("seg_vector", "m"))
#: a fan search: the fan frame (origin, PU -> fan-frame matrix row by row), the circle, and
#: the detector's result (status in TR_STATUS, generator in TR_J)
_SEARCH = (*_v("fan_origin", "m"), *((f"fan_axes_{a}{b}", "1") for a in "123" for b in "123"),
           *_v("circle_centre", "m"), *_v("circle_axis", "1"), ("circle_radius", "m"),
           ("penetration", "m"), *_v("normal", "1"), *_v("point", "m"))

_TABLE = {
    R_FAN_ACTIVE: ("contact", "fan_active_vs_passive_circle", _contact(_RING_IN + _CIRC_IN)),
    R_FAN_PASSIVE: ("contact", "fan_passive_vs_active_circle", _contact(_RING_IN + _CIRC_IN)),
    R_EDGE_EDGE: ("contact", "edge_active_vs_edge_passive",
                  _contact((*_v("active_start", "m"), *_v("active_vector", "m"),
                            *_v("passive_start", "m"), *_v("passive_vector", "m")))),
    R_EDGE_ACTIVE_CIRCLE: ("contact", "edge_passive_vs_active_circle",
                           _contact(_SEG_IN + _CIRC_IN)),
    R_EDGE_PASSIVE_CIRCLE: ("contact", "edge_active_vs_passive_circle",
                            _contact(_SEG_IN + _CIRC_IN)),
    R_POINT_PASSIVE_PLANE: ("contact", "point_active_vs_passive_plane",
                            _contact(_v("point_pu", "m"))),
    R_POINT_ACTIVE_PLANE: ("contact", "point_passive_vs_active_plane",
                           _contact(_v("point_pu", "m") + _v("point_ring_axes", "m"))),
    R_LATCH_BETWEEN: ("latch", "latch_between",
                      (("h", "s"), ("x_before", "m"), ("v_before", "m/s"), *_v("base", "m"),
                       *_v("direction", "1"), ("triggered", "1"), ("x", "m"), ("v", "m/s"),
                       ("guide_force_axial", "N"), ("guide_penetration", "m"),
                       *_v("held_force_ring", "N"), *_v("held_point", "m"))),
    R_LATCH_STAGE: ("latch", "latch_stage",
                    (("x_held", "m"), *_v("tip", "m"), ("tip_penetration", "m"),
                     *_v("tip_normal", "1"), *_v("tip_point", "m"), ("feature", "1"),
                     ("crest_crossing", "1"), ("crest_distance", "m"))),
    R_LATCH_STAGE_TOTAL: ("latch", "latch_stage_total",
                          (*_v("force_passive", "N"), *_v("moment_passive", "N m"))),
    R_SENSOR: ("latch", "capture_sensor",
               (("stroke", "m"), ("force", "N"), *_v("point", "m"), ("switched", "1"))),
    R_CAPTURE: ("latch", "capture_state",
                (("cos_rel", "1"), ("gap", "m"), ("captured", "1"), ("n_triggered", "1"))),
    R_LEG_FORCES: ("mechanism", "leg_forces",
                   (("length", "m"), ("rate", "m/s"), ("shift", "m"), ("compression", "m"),
                    ("force_absorber", "N"), ("force_stop", "N"), ("force_damper", "N"),
                    ("force", "N"), *_v("unit", "1"))),
    R_LEGS_BETWEEN: ("mechanism", "legs_between",
                     (("length", "m"), ("rate", "m/s"), ("shift_before", "m"), ("shift", "m"),
                      ("compression", "m"), ("brake_work", "J"))),
    R_RING: ("mechanism", "ring",
             (("q1", "m"), ("q2", "m"), ("q3", "m"), ("q4", "rad"), ("q5", "rad"),
              ("q6", "rad"), *_v("force_ext", "N"), *_v("moment_ext", "N m"),
              ("ddq1", "m/s^2"), ("ddq2", "m/s^2"), ("ddq3", "m/s^2"), ("ddq4", "rad/s^2"),
              ("ddq5", "rad/s^2"), ("ddq6", "rad/s^2"))),
    R_FAN_SEARCH_ACTIVE: ("search", "fan_search_active", _SEARCH),
    R_FAN_SEARCH_PASSIVE: ("search", "fan_search_passive", _SEARCH),
    R_PC_HEAD: ("contact", "head_vs_cone",
                _contact((*_v("centre", "m"), ("radius", "m"), ("feature", "1")))),
    R_PC_HOUSING: ("contact", "housing_vs_cone",
                   _contact((*_v("centre", "m"), ("radius", "m"), ("feature", "1")))),
    R_PC_PAD_MOUTH: ("contact", "pad_vs_mouth", _contact(_SEG_IN)),
    R_PC_LATCH_SLOT: ("contact", "latch_vs_slot", _contact(_SEG_IN + (("feature", "1"),))),
    R_PC_PLUNGER: ("latch", "plunger_between",
                   (("triggered", "1"), ("retraction", "m"), *_v("force", "N"),
                    *_v("point", "m"))),
    R_PC_SENSOR_FRICTION: ("latch", "sensor_friction",
                           (("slip_velocity", "m/s"), ("force_x", "N"), *_v("point", "m"))),
    R_PC_IMPLICIT_FRICTION: ("contact", "head_friction_implicit",
                             (*_v("force", "N"), *_v("point", "m"))),
    R_PC_MECHANISM: ("mechanism", "probe_mechanism",
                     (("stroke", "m"), ("stroke_rate", "m/s"), ("psi", "1"), ("theta", "1"),
                      ("psi_rate", "1/s"), ("theta_rate", "1/s"), ("gimbal_q1", "rad"),
                      ("gimbal_q2", "rad"), ("torsion", "rad"), ("torsion_rate", "rad/s"),
                      ("force_axial_spring", "N"), ("force_axial", "N"),
                      ("moment_psi_spring", "N m"), ("moment_theta_spring", "N m"),
                      ("moment_psi", "N m"), ("moment_theta", "N m"),
                      ("moment_torsion_spring", "N m"), ("moment_torsion", "N m"))),
    R_PC_ELEMENTS: ("mechanism", "hysteresis_between",
                    (("coordinate", "1"), ("rate", "1/s"), ("state", "1"))),
}

#: routine code -> (group, name, field names, field units)
ROUTINES = {code: (g, name, tuple(f for f, _ in fu), tuple(u for _, u in fu))
            for code, (g, name, fu) in _TABLE.items()}
for _code, (_g, _n, _f, _u) in ROUTINES.items():
    assert _g in GROUPS and len(_f) <= TR_NV, (_code, _n)


def group_mask(groups) -> int:
    """Bit mask of group names (``contact``, ``latch``, ``mechanism``); raises ``KeyError`` on
    an unknown name."""
    m = 0
    for g in groups:
        m |= GROUPS[g]
    return m


# ---- kernels --------------------------------------------------------------------------------
@njit(**NJIT)
def trace_begin(P, o_mask, o_t0, o_t1, trn):
    """Start of a run: zero the counters ``trn`` and return a fresh context ``tx``
    (``float64[TX_SIZE]``) with the group mask and the window ``[t0, t1]`` [s] read from the
    unit's parameter row ``P`` at the offsets ``o_mask``, ``o_t0``, ``o_t1``."""
    tx = np.zeros(TX_SIZE)
    trn[TRN_ROWS] = 0
    trn[TRN_DROPPED] = 0
    return tx, P[o_mask], P[o_t0], P[o_t1]


@njit(**NJIT_LEAF)
def trace_stage(tx, mask, t0, t1, t, step, stage):
    """Set the context ``tx`` for one stage at time ``t`` [s]: the groups ``mask`` when
    ``t0 <= t <= t1`` [s], none otherwise."""
    tx[TX_MASK] = mask if (mask != 0.0 and t >= t0 and t <= t1) else 0.0
    tx[TX_T] = t
    tx[TX_STEP] = step
    tx[TX_STAGE] = stage


@njit(**NJIT_LEAF)
def traced(tx, group):
    """True when the group ``G_*`` is recorded at the current stage."""
    m = tx[TX_MASK]
    return m != 0.0 and (int(m) & group) != 0


@njit(**NJIT_LEAF)
def trace_open(tr, trn, tx, code, i, j, status):
    """Append a row (fixed columns from ``tx`` and the arguments, values NaN); returns its index,
    or -1 when the buffer is full (the drop is counted in ``trn[TRN_DROPPED]``)."""
    r = trn[TRN_ROWS]
    if r >= tr.shape[0]:
        trn[TRN_DROPPED] += 1
        return -1
    trn[TRN_ROWS] = r + 1
    tr[r, TR_T] = tx[TX_T]
    tr[r, TR_STEP] = tx[TX_STEP]
    tr[r, TR_STAGE] = tx[TX_STAGE]
    tr[r, TR_ROUTINE] = code
    tr[r, TR_I] = i
    tr[r, TR_J] = j
    tr[r, TR_STATUS] = status
    for k in range(TR_V0, TR_NCOL):
        tr[r, k] = np.nan
    return r


@njit(**NJIT_LEAF)
def contact_open(tr, trn, tx, code, i, j, st, dn, nx, ny, nz, px, py, pz, twa, oa, twp, op):
    """Open a contact row (group ``contact``) and write the detector's outputs after the
    routine's 12 input columns (:data:`CONTACT_OUT`): penetration ``dn`` [m], normal, point
    ``p`` [m] and the relative velocity at ``p`` [m/s] of the active body (twist at
    ``twa[oa]``) minus the passive one (``twp[op]``). Returns ``(row, rvx, rvy, rvz)``; the
    row is -1 when the group is off or the buffer is full. The unit's law gives the force
    columns (:func:`contact_force_columns`)."""
    if not traced(tx, G_CONTACT):
        return -1, 0.0, 0.0, 0.0
    r = trace_open(tr, trn, tx, code, i, j, st)
    if r < 0:
        return -1, 0.0, 0.0, 0.0
    vax, vay, vaz = point_velocity(twa, oa, px, py, pz)
    vpx, vpy, vpz = point_velocity(twp, op, px, py, pz)
    rvx = vax - vpx
    rvy = vay - vpy
    rvz = vaz - vpz
    o = TR_V0 + CONTACT_NIN
    tr[r, o] = dn
    tr[r, o + 1] = nx; tr[r, o + 2] = ny; tr[r, o + 3] = nz
    tr[r, o + 4] = px; tr[r, o + 5] = py; tr[r, o + 6] = pz
    tr[r, o + 7] = rvx; tr[r, o + 8] = rvy; tr[r, o + 9] = rvz
    return r, rvx, rvy, rvz


@njit(**NJIT_LEAF)
def contact_force_columns(tr, r, fn, fx, fy, fz):
    """The law's normal force ``fn`` [N] and total force ``f`` [N] on the passive unit in the
    contact row ``r`` (:data:`CONTACT_OUT`)."""
    o = TR_V0 + CONTACT_NIN
    tr[r, o + 10] = fn
    tr[r, o + 11] = fx; tr[r, o + 12] = fy; tr[r, o + 13] = fz
