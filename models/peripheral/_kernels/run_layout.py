"""Peripheral unit time-loop kernel: packed layouts of its parameters, state, outputs, events,
status and run information (every offset of :mod:`models.peripheral._kernels.kernel` is named
here).

``P`` (float64[NP]) parameters ``P_*``; the ring mechanism's own parameter block ``MP`` of
:mod:`models.peripheral._kernels.mechanism` sits at ``P[P_MP:P_MP + MP_SIZE]``.
``Y`` (float64[NY]) continuous state ``Y_*``: both spacecraft (inertial centre of mass,
velocity, scalar-first quaternion inertial -> body, body rates), the ring pose ``q`` and its
rates relative to AU (digest 9.2), and the energy accumulators integrated with the motion.
Output row ``O_*`` (``NCH`` channels, names :func:`channel_names`); events ``EV_*``; status
``ST_*``; run information ``INFO_*`` with the primitive-pair codes ``PAIR_*``.
"""
from __future__ import annotations

from models._kernels.status import (  # noqa: F401  (re-exported)
    ST_GEOMETRY, ST_HYSTERESIS, ST_OK, ST_PENETRATION, ST_START_CONTACT)
from models.peripheral._kernels.mechanism import MP_SIZE

__all__ = [
    "P_M1", "P_IM1", "P_J1", "P_JI1", "P_L1", "P_G1", "P_M2", "P_IM2", "P_J2", "P_JI2",
    "P_L2", "P_G2", "P_W2", "P_THRUST", "P_T_ON", "P_T_OFF", "P_IC", "P_LAW", "P_DNMAX",
    "P_H_SMALL", "P_H_LARGE", "P_H_LATCH", "P_H_CAPT", "P_DT_OUT", "P_T_END", "P_MARGIN",
    "P_LEG_MARGIN",
    "P_EXHAUSTIVE", "P_COS_TOL", "P_GAP_TOL", "P_FULL_NORMAL", "P_Q0", "P_XA_LO", "P_XA_HI",
    "P_RA", "P_XP_LO", "P_PRUNE", "P_MP", "P_TR_T0", "P_TR_T1", "P_TR_MASK", "P_T_PRE",
    "P_H_SETTLED", "P_T_SETTLE", "P_IMPLICIT", "P_FREE_TOUCH", "NP",
    "Y_R1", "Y_V1", "Y_Q1", "Y_W1", "Y_R2", "Y_V2", "Y_Q2", "Y_W2", "Y_QR", "Y_DQR",
    "Y_EDAMP", "Y_ECDISS", "Y_ECEL", "Y_WTHR", "Y_WLATCH", "NY",
    "O_T", "O_RING", "O_RING_ANG", "O_LEG", "O_CONTACT", "O_SENSOR", "O_CAPTURE", "O_LATCH",
    "O_AR", "O_PR", "O_REL", "O_FIF", "O_MIF", "O_EK", "O_ES", "O_EBRAKE", "O_EDAMP",
    "O_ECONT", "O_WTHRUST", "O_WLATCH", "O_ELATCH", "O_DLATCH", "O_PLIN", "O_PANG", "O_LEGF",
    "NCH",
    "EV_FIRST", "EV_CAPTURE", "EV_SEPARATION", "EV_LATCH", "N_EV",
    "ST_OK", "ST_PENETRATION", "ST_GEOMETRY", "ST_HYSTERESIS", "ST_START_CONTACT",
    "INFO_T_FAIL", "INFO_PAIR", "INFO_INDEX", "INFO_STEPS", "INFO_SMALL_STEPS", "INFO_T_END",
    "INFO_T_TOUCH",
    "NINFO",
    "PAIR_NONE", "PAIR_FAN_ACTIVE", "PAIR_FAN_PASSIVE", "PAIR_EDGE_EDGE",
    "PAIR_EDGE_ACTIVE_CIRCLE", "PAIR_EDGE_PASSIVE_CIRCLE", "PAIR_POINT_PASSIVE_PLANE",
    "PAIR_POINT_ACTIVE_PLANE", "PAIR_LATCH_GUIDE", "PAIR_LATCH_LOCK", "PAIR_LEG",
    "PAIR_NAMES", "IC_NAMES", "channel_names", "channel_units",
]

IC_NAMES = ("rel_pos_x", "rel_pos_y", "rel_pos_z", "rel_vel_x", "rel_vel_y", "rel_vel_z",
            "rel_roll", "rel_pitch", "rel_yaw", "rel_rate_x", "rel_rate_y", "rel_rate_z")

# ---- parameters P ----------------------------------------------------------------------------
P_M1 = 0            # active mass [kg]
P_IM1 = 1           # 1 / active mass [1/kg]
P_J1 = 2            # active inertia, body axes, row-major (9) [kg m^2]
P_JI1 = 11          # its inverse (9)
P_L1 = 20           # CoM -> AU origin, body axes (3) [m]
P_G1 = 23           # body -> AU DCM, row-major (9)
P_M2 = 32           # passive: the same block
P_IM2 = 33
P_J2 = 34
P_JI2 = 43
P_L2 = 52           # CoM -> PU origin, body axes (3) [m]
P_G2 = 55           # body -> PU DCM (9)
P_W2 = 64           # passive body rates at t = 0 (3) [rad/s]
P_THRUST = 67       # active thrust, body axes, through the centre of mass (3) [N]
P_T_ON = 70         # thrust on over [t_on, t_off) [s]
P_T_OFF = 71
P_IC = 72           # the 12 initial conditions (IC_NAMES order)
P_LAW = 84          # contact law of the ring-ring contacts (contact_layout LAW_*, 5)
P_DNMAX = 89        # largest admissible penetration of the ring-ring contacts [m]
P_H_SMALL = 90      # step near contact [s]
P_H_LARGE = 91      # step in free flight [s]
P_H_CAPT = 92       # step after capture [s]
P_DT_OUT = 93       # output interval [s]
P_T_END = 94        # end time [s]
P_MARGIN = 95       # gap margin of the two-rate switch [m]
P_LEG_MARGIN = 96   # leg-length margin to an end stop of the two-rate switch [m]
P_EXHAUSTIVE = 97   # 1: fan search by brute force over every generator, 0: dichotomy
P_COS_TOL = 98      # capture: cos of the largest relative angle of the ring planes [-]
P_GAP_TOL = 99      # capture: largest axial gap of the ring planes [m]
P_FULL_NORMAL = 100  # 1: latches also transmit the contact force normal to their axis
P_Q0 = 101          # ring pose at t = 0 (ready pose), AU (6) [m, rad]
P_XA_LO = 107       # active ring geometry's abscissa range in ring axes [m] (bounding box
P_XA_HI = 108       #   of petals, edges, fans, latches and sensors)
P_RA = 109          # largest distance of that geometry from the ring axis [m]
P_XP_LO = 110       # lowest abscissa of the passive geometry in PU [m] (petal tops)
P_PRUNE = 111       # 1: skip ring-ring primitive pairs whose bounding spheres prove them apart
                    # (exact: the same contacts as 0, which tests every pair)
P_MP = 112          # ring mechanism parameters (peripheral_mechanism MP_*)
P_TR_T0 = P_MP + MP_SIZE    # trace window start [s] (models._kernels.trace_layout)
P_TR_T1 = P_TR_T0 + 1       # trace window end [s]
P_TR_MASK = P_TR_T0 + 2     # traced groups (G_* bit mask as a float; 0: no trace)
P_T_PRE = P_TR_MASK + 1     # free-flight extension before t = 0 [s] (output rows before the
                            # start, a whole number of output intervals)
P_H_SETTLED = P_T_PRE + 1   # step once the captured motion has settled [s]
P_T_SETTLE = P_T_PRE + 2    # time after capture from which P_H_SETTLED replaces P_H_CAPT [s]
P_IMPLICIT = P_T_PRE + 3    # 1: the ring-ring contacts' damping and friction implicit on the
                            # ring after capture (models.peripheral._kernels.implicit), 0: never
P_FREE_TOUCH = P_T_PRE + 4  # 1: the free step until a step would make the first touch (a
                            # ring-ring contact, a capture sensor, a latch on its stop); that
                            # step is retaken at P_H_SMALL and the two-rate switch rules after
P_H_LATCH = P_T_PRE + 5     # latch sub-step between RK4 steps [s] (0: one latch step per RK4
                            # step; models.peripheral._kernels.latch.latches_between_sub)
NP = P_T_PRE + 6

# ---- state Y -----------------------------------------------------------------------------------
Y_R1 = 0            # active centre of mass, inertial (3) [m]
Y_V1 = 3            # its velocity (3) [m/s]
Y_Q1 = 6            # quaternion inertial -> body 1 (4)
Y_W1 = 10           # body rates (3) [rad/s]
Y_R2 = 13
Y_V2 = 16
Y_Q2 = 19
Y_W2 = 23
Y_QR = 26           # ring pose q1..q6 in AU (digest 9.2) [m, rad]
Y_DQR = 32          # its rates (6) [m/s, rad/s]
Y_EDAMP = 38        # energy dissipated in the leg dampers [J]
Y_ECDISS = 39       # energy dissipated by contact damping and friction [J]
Y_ECEL = 40         # elastic energy of the contacts, integral of k dn d(dn)/dt [J]
Y_WTHR = 41         # work done by thrust [J]
Y_WLATCH = 42       # work done on the vehicles and the ring by the held latch forces [J]
NY = 43

# ---- output channels O -------------------------------------------------------------------------
O_T = 0
O_RING = 1          # ring_x, ring_y, ring_z = q1..q3 [m]
O_RING_ANG = 4      # ring_roll, ring_pitch, ring_yaw = q6, q5, q4 [rad]
O_LEG = 7           # leg lengths (6) [m]
O_CONTACT = 13      # any ring-ring contact [0/1]
O_SENSOR = 14       # capture sensors switched (3) [0/1]
O_CAPTURE = 17      # captured [0/1]
O_LATCH = 18        # latch behind its stop (6) [0/1]
O_AR = 24           # active body rates (3) [rad/s]
O_PR = 27           # passive body rates (3) [rad/s]
O_REL = 30          # relative state (12), IC_NAMES order
O_FIF = 42          # interface force on the passive unit, PU axes (3) [N]
O_MIF = 45          # interface moment about the PU origin, PU axes (3) [N m]
O_EK = 48           # kinetic energy of both vehicles and the ring [J]
O_ES = 49           # stored: leg springs and stops, contact elasticity, sensor springs [J]
O_EBRAKE = 50       # leg brake work [J]
O_EDAMP = 51        # leg damper dissipation [J]
O_ECONT = 52        # contact dissipation [J]
O_WTHRUST = 53      # thrust work [J]
O_WLATCH = 54       # work of the held latch forces on the vehicles and the ring [J]
O_ELATCH = 55       # latch springs and latch kinetic energy [J]
O_DLATCH = 56       # latch dissipation: implicit Euler and the internal stops [J]
O_PLIN = 57         # total linear momentum, inertial (3) [kg m/s]
O_PANG = 60         # total angular momentum about the inertial origin, inertial (3) [kg m^2/s]
O_LEGF = 63         # axial leg forces, compression positive: absorber + end stop + damper (6) [N]
NCH = 69

# ---- events, status, run information -------------------------------------------------------
EV_FIRST = 0        # first ring-ring contact [s]
EV_CAPTURE = 1      # capture [s]
EV_SEPARATION = 2   # last contact lost without capture [s]
EV_LATCH = 3        # each latch behind its stop (6) [s]
N_EV = 9

# status ST_*: models._kernels.status, one table for every unit

INFO_T_FAIL = 0     # model time of the failure [s]
INFO_PAIR = 1       # primitive pair (PAIR_*) of the failure
INFO_INDEX = 2      # index within the pair kind (petal, edge 12 i + j, point, latch, leg)
INFO_STEPS = 3      # steps taken
INFO_SMALL_STEPS = 4  # of which at the contact step P_H_SMALL (near contact, not captured)
INFO_T_END = 5      # time reached [s]
INFO_T_TOUCH = 6    # start of the free step retaken at the contact step (P_FREE_TOUCH) [s];
                    # NaN: none
NINFO = 7

PAIR_NONE = 0
PAIR_FAN_ACTIVE = 1             # active petal k's fan vs the passive inner circle
PAIR_FAN_PASSIVE = 2            # passive petal k's fan vs the active inner circle
PAIR_EDGE_EDGE = 3              # active edge i vs passive edge j (index 12 i + j)
PAIR_EDGE_ACTIVE_CIRCLE = 4     # passive edge vs the active inner circle
PAIR_EDGE_PASSIVE_CIRCLE = 5    # active edge vs the passive inner circle
PAIR_POINT_PASSIVE_PLANE = 6    # active ring-plane point vs the passive ring plane
PAIR_POINT_ACTIVE_PLANE = 7     # passive ring-plane point vs the active ring plane
PAIR_LATCH_GUIDE = 8            # latch tip vs its stop's guide face (before trigger)
PAIR_LATCH_LOCK = 9             # triggered latch vs its stop (locking face, crest)
PAIR_LEG = 10                   # leg absorber (hysteresis element)
PAIR_NAMES = ("none", "active fan / passive circle", "passive fan / active circle",
              "active edge / passive edge", "passive edge / active circle",
              "active edge / passive circle", "active point / passive plane",
              "passive point / active plane", "latch / guide face", "latch / stop",
              "leg absorber")


def channel_names() -> tuple:
    """Names of the ``NCH`` output channels in ``O_*`` order."""
    return ("t", "ring_x", "ring_y", "ring_z", "ring_roll", "ring_pitch", "ring_yaw",
            *(f"leg_{i + 1}" for i in range(6)), "contact",
            *(f"capture_sensor_{i + 1}" for i in range(3)), "capture",
            *(f"latch_{i + 1}" for i in range(6)),
            "active_rate_x", "active_rate_y", "active_rate_z",
            "passive_rate_x", "passive_rate_y", "passive_rate_z", *IC_NAMES,
            "interface_force_x", "interface_force_y", "interface_force_z",
            "interface_moment_x", "interface_moment_y", "interface_moment_z",
            "energy_kinetic", "energy_stored", "energy_dissipated_brake",
            "energy_dissipated_dampers", "energy_dissipated_contact", "thrust_work",
            "latch_work", "energy_latch", "energy_dissipated_latch",
            "momentum_x", "momentum_y", "momentum_z",
            "angular_momentum_x", "angular_momentum_y", "angular_momentum_z",
            *(f"leg_force_{i + 1}" for i in range(6)))


def channel_units() -> dict:
    """Unit of each channel (SI symbols; ``"1"`` for flags)."""
    u = {}
    for n in channel_names():
        if n == "t":
            u[n] = "s"
        elif n.startswith("leg_force"):
            u[n] = "N"
        elif n in ("ring_x", "ring_y", "ring_z") or n.startswith(("leg_", "rel_pos")):
            u[n] = "m"
        elif n in ("ring_roll", "ring_pitch", "ring_yaw", "rel_roll", "rel_pitch", "rel_yaw"):
            u[n] = "rad"
        elif "rate" in n:
            u[n] = "rad/s"
        elif n.startswith("rel_vel"):
            u[n] = "m/s"
        elif n.startswith("interface_force"):
            u[n] = "N"
        elif n.startswith("interface_moment"):
            u[n] = "N m"
        elif n.startswith(("energy", "thrust_work", "latch_work")):
            u[n] = "J"
        elif n.startswith("momentum"):
            u[n] = "kg m/s"
        elif n.startswith("angular_momentum"):
            u[n] = "kg m^2/s"
        else:
            u[n] = "1"
    return u
