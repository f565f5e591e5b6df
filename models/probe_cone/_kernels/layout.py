"""Probe-cone kernel, part 1: packed layouts and the small allocation-free helpers shared by the
stage derivative, the between-step updates and the output. The model is described in
:mod:`models.probe_cone._kernels.kernel`.

Every offset into a packed array of the unit is named here, once: parameters ``P_*``, state
``Y_*``, output channels ``O_*``, events ``EV_*``, status ``ST_*``, run information
``INFO_*``, the work array ``WK_*``, the held latch forces ``LF_*``, the 3x3 matrices ``M_*``,
and the float scratch of one evaluation ``SC_*`` with its parts: unit frames ``FR_*``,
mechanism coordinates ``MC_*``, contact sums ``ACC_*``. The scratch regions (and the parts)
are checked at import to tile their arrays without gap or overlap (:func:`_check_tiling`)."""
from __future__ import annotations

from numba import njit

from models._kernels import NJIT, NJIT_LEAF
from models._kernels import hysteresis as hk
from models._kernels.contact_layout import TW_SIZE as _TW_SIZE
from models._kernels.status import (  # noqa: F401  (re-exported)
    ST_BAD_TABLE, ST_GEOMETRY, ST_HYSTERESIS, ST_OK, ST_PENETRATION, ST_START_CONTACT)

# --------------------------------------------------------------------------------------------
# packed parameters P
P_M1 = 0      # active mass [kg]
P_J1 = 1      # active inertia, body axes, row-major (9) [kg m^2]
P_JI1 = 10    # its inverse (9)
P_L1 = 19     # AU origin from the active CoM, body axes (3) [m]
P_G1 = 22     # body -> AU DCM (9)
P_M2 = 31     # passive: same fields
P_J2 = 32
P_JI2 = 41
P_L2 = 50
P_G2 = 53
P_MH = 62     # probe head mass [kg]
P_L0 = 63     # joint -> head centre, probe extended [m]
P_RH = 64     # head sphere radius [m]
P_CAX = 65    # axial magnetic damper [N s/m]
P_CD1 = 66    # lateral damper in the +45 deg plane [N m s/rad]
P_CD2 = 67    # lateral damper in the -45 deg plane [N m s/rad]
P_LAW = 68    # contact law (ck.LAW_SIZE = 5): k_S [N/m], c_D [N s/m], k_Fr [-], v_eps, model
P_DNMAX = 73  # largest admissible penetration [m]
P_LATCH_X = 74     # latch tip abscissa in the head frame [m]
P_LATCH_R = 75     # latch tip radius, undeflected [m]
P_LATCH_RIN = 76   # inner end of the reverse segment (radius) [m]
P_LATCH_F0 = 77    # latch spring preload, at the tip [N]
P_LATCH_K = 78     # latch spring stiffness, at the tip [N/m]
P_LATCH_TRAVEL = 79  # largest tip retraction [m]
P_THRUST = 80      # active thrust, body axes (3) [N]
P_T_ON = 83        # thrust interval [s]
P_T_OFF = 84
P_H_SMALL = 85     # step near contact [s]
P_H_LARGE = 86     # step elsewhere [s]
P_GAP = 87         # gap margin for the small step [m]
P_T_END = 88       # duration [s]
P_DT_OUT = 89      # output interval [s]
P_S_AX = 90        # axial absorber force scale [-]
P_S_LAT = 91       # lateral absorber force scale [-]
P_F_SLIP = 92      # brake slip force [N] (applied with apply_slip_force; <= 0: table value)
P_W2 = 93          # passive initial body rates (3) [rad/s]
P_IC = 96          # the 12 initial conditions (IC_NAMES order)
P_IM1 = 108        # derived by run(): 1/m1, 1/m2, 1/m_H (never set by the caller)
P_IM2 = 109
P_IMH = 110
P_SENS_X = 111     # head capture sensors (2, at +Z_H and -Z_H): tip abscissa [m]
P_SENS_R = 112     # undeflected tip radius [m]
P_SENS_F0 = 113    # spring preload at the tip [N]
P_SENS_K = 114     # spring rate at the tip [N/m]
P_SENS_TRAVEL = 115  # largest retraction [m]
P_SENS_FR = 116    # total axial friction of the sensors on the socket wall after capture [N]
P_JT = 117         # axial moment of inertia of the head and probe (torsion DOF) [kg m^2]
P_CTOR = 118       # torsion damping (structural) [N m s/rad]
P_IJT = 119        # derived by run(): 1/J_t
P_LM = 120         # joint -> probe output support bearing B, along the housing axis [m]
P_JM = 121         # transverse moment of inertia of the movable housing about the joint [kg m^2]
P_IJM = 122        # derived by run(): 1/J_M
P_KB = 123         # probe bending stiffness about B (isotropic) [N m/rad]
P_CB = 124         # probe bending damping (structural, on the relative rate) [N m s/rad]
P_MOUTH_X = 125    # mouth circle of the receiving cone (limiter-pad segments vs it): abscissa [m]
P_MOUTH_R = 126    # its radius [m] (<= 0: no segment-vs-mouth test)
P_HC_REACH = 127   # largest distance of a housing contact primitive from the joint [m]
P_T_PRE = 128      # free-flight extension before t = 0 [s] (output rows before the start)
P_H_CAPT = 129     # step after capture [s] (the head latched in the socket)
P_IMPLICIT = 130   # the head's contact friction implicit: IMPLICIT_NEVER / _ALWAYS / _CAPTURED
P_H_NOW = 131      # derived by run(): step of the implicit friction in this phase, 0 = explicit
P_TR_T0 = 132      # trace window start [s] (models._kernels.trace_layout)
P_TR_T1 = 133      # trace window end [s]
P_TR_MASK = 134    # traced groups (G_* bit mask as a float; 0: no trace)
P_AXC = 135        # axial absorber's characteristic numbers (7, absorbers.AXIAL_FIELDS)
P_LATC = 142       # lateral absorbers' (7, absorbers.LATERAL_FIELDS; both planes)
P_TORC = 149       # torsion absorber's (7, absorbers.LATERAL_FIELDS)
P_REBUILD = 156    # tables run() rebuilds from those numbers (REBUILD_* bit mask as a float;
                   # 0: the packed tables as they are)
NP = 157

REBUILD_AXIAL = 1         # P_REBUILD bits
REBUILD_LATERAL = 2
REBUILD_TORSION = 4

IMPLICIT_NEVER = 0.0      # P_IMPLICIT codes ([integration] implicit_friction)
IMPLICIT_ALWAYS = 1.0
IMPLICIT_CAPTURED = 2.0
#: the implicit friction is taken at v + gamma h a (probe_cone_stage._implicit_head): 1/2
#: (trapezoidal-like) halved the median error of 1 ms runs against 0.25 ms ones from 1 (0.088
#: -> 0.068 sigma rms, 41 envelope draws, benchmarks/accuracy_docking.py); any gamma > 0.36
#: keeps a stiff slip relaxation inside RK4's bound, h lambda / (1 + gamma h lambda) < 1/gamma
IMPLICIT_GAMMA = 0.5

IC_NAMES = ("rel_pos_x", "rel_pos_y", "rel_pos_z", "rel_vel_x", "rel_vel_y", "rel_vel_z",
            "rel_roll", "rel_pitch", "rel_yaw", "rel_rate_x", "rel_rate_y", "rel_rate_z")

# --------------------------------------------------------------------------------------------
# continuous state Y
Y_R1 = 0
Y_V1 = 3
Y_Q1 = 6
Y_W1 = 10
Y_R2 = 13
Y_V2 = 16
Y_Q2 = 19
Y_W2 = 23
Y_RH = 26
Y_VH = 29
Y_W_AX = 32     # work done on the axial absorber element [J]
Y_W_BRAKE = 33  # part of it done while the brake slips (state +-10)
Y_W_LAT = 34    # work done on the lateral elements
Y_E_DAMP = 35   # dissipated by the viscous dampers
Y_E_CONT = 36   # dissipated by contacts (damping, friction, tensile clamp)
Y_W_CK = 37     # elastic contact work, integral of k dn d(dn)
Y_W_LATCH = 38  # work done on the latch and sensor springs (zero-inertia items)
Y_W_THRUST = 39  # work done by the thrust
Y_SPIN = 40     # head spin rate about the probe axis (absolute) [rad/s]
Y_PHI = 41      # probe torsion angle (head relative to the housing) [rad]
Y_TC = 42       # cos and sin of the torsion angle, integrated (no trig on the common path)
Y_TS = 43
Y_W_TOR = 44    # work done on the torsion element
Y_UM = 45       # housing axis X_M, unit vector, inertial axes (3)
Y_WM = 48       # housing angular velocity normal to X_M, inertial axes (3) [rad/s]
NY = 51

# --------------------------------------------------------------------------------------------
# housing contact primitives (float64[n, HC_SIZE], housing frame X_M Y_M Z_M, origin at the joint)
HC_KIND = 0     # HC_PAD (limiter-pad segment P1 -> P2) or HC_ROLLER (sphere, centre P1)
HC_P1 = 1       # (3) [m]
HC_P2 = 4       # (3) [m] (pads)
HC_R = 7        # roller radius [m]
HC_SIZE = 8
HC_PAD = 0.0
HC_ROLLER = 1.0

# --------------------------------------------------------------------------------------------
# hysteresis elements (index into toff)
E_AX = 0
E_PSI = 1
E_THETA = 2
E_TOR = 3
N_ELEM = 4

N_LATCH = 4
N_SENS = 2
N_PL = N_LATCH + N_SENS   # zero-inertia spring items: latches 0..3, capture sensors 4, 5

# events
EV_FIRST = 0
EV_BOTTOM = 1
EV_LATCH = 2   # 2..5
EV_CAPTURE = 6
EV_SEPARATION = 7
N_EV = 8

# status ST_*: models._kernels.status, one table for every unit

# output channels
O_T = 0
O_STROKE = 1
O_GPITCH = 2
O_GYAW = 3
O_CONTACT = 4
O_BOTTOM = 5
O_CAPTURE = 6
O_LATCH = 7      # 7..10
O_AR = 11        # active rates (3)
O_PR = 14        # passive rates (3)
O_REL = 17       # relative state (12), IC_NAMES order
O_FIF = 29       # interface force on the passive unit, PU axes (3)
O_MIF = 32       # interface moment about the PU origin, PU axes (3)
O_EK = 35
O_ES = 36
O_EBRAKE = 37
O_EDAMP = 38
O_EHYST = 39
O_ECONT = 40
O_WTHRUST = 41   # work done by thrust (ledger input)
O_PLIN = 42      # total linear momentum, inertial (3)
O_PANG = 45      # total angular momentum about the inertial origin, inertial (3)
O_FAX = 48       # axial absorber force on the stroke: element + magnetic damper [N]
O_MPITCH = 49    # lateral absorber generalized moment on theta (gimbal pitch) [N m]
O_MYAW = 50      # lateral absorber generalized moment on psi (gimbal yaw) [N m]
O_BPITCH = 51    # probe bending angles relative to the housing (pitch, yaw as the gimbal) [rad]
O_BYAW = 52
O_HCONTACT = 53  # a limiter pad or alignment roller touches the cone [0/1]
NCH = 54

# work array (per simulation scratch, float64[NWK])
WK_FIF = 0      # interface force (3) and moment (3) of the last rhs evaluation
WK_MIF = 3
WK_ESC = 6      # sum of 1/2 k dn^2 over current contacts
WK_CONTACT = 7  # any contact (1.0 / 0.0)
WK_BOTTOM = 8   # head on the socket bottom
WK_STATUS = 9
WK_FAX = 10     # absorber loads of the last rhs evaluation: axial force, pitch and yaw moments
WK_MPITCH = 11
WK_MYAW = 12
WK_HCONTACT = 13  # any housing (limiter pad, roller) contact
NWK = 14

# latch / sensor scratch LF (float64[N_PL, NLF]): held force on the passive unit and its point (PU)
LF_F = 0
LF_P = 3
LF_DELTA = 6
NLF = 7

# run information (float64[NINFO], written by run())
INFO_T_FAIL = 0       # time of the failure [s] (0 when the run ends normally)
INFO_ELEMENT = 1      # failing hysteresis element (E_*), with ST_HYSTERESIS
INFO_DETAIL = 2       # its hysteresis status (hysteresis.ST_*)
INFO_STEPS = 3        # number of steps taken
INFO_SMALL_STEPS = 4  # of which near contact (step P_H_SMALL)
INFO_T_END = 5        # time reached [s]
NINFO = 8             # 6, 7 reserved (zero)

# --------------------------------------------------------------------------------------------
# 3x3 matrices (float64[NM, 3, 3], one set per simulation)
M_A1 = 0     # inertial -> body-1 DCM, from the quaternion (each evaluation)
M_A2 = 1     # inertial -> body-2 DCM (each evaluation)
M_AAU = 2    # inertial -> AU DCM, G1 A1 (each evaluation)
M_APU = 3    # inertial -> PU DCM, G2 A2 (each evaluation)
M_G1 = 4     # body-1 -> AU DCM (P_G1, loaded once)
M_G2 = 5     # body-2 -> PU DCM (P_G2, loaded once)
M_J1 = 6     # body-1 inertia, body axes [kg m^2] (P_J1, loaded once)
M_J2 = 7     # body-2 inertia [kg m^2]
M_JI1 = 8    # inverse of J1 [1/(kg m^2)] (P_JI1, derived by run())
M_JI2 = 9    # inverse of J2 [1/(kg m^2)]
M_ROT_HOUSING = 10  # work: housing -> PU rotation (stage); A_PAU = A_AU A_PU^T (sample)
M_ROT_HEAD = 11     # work: head -> PU rotation (stage, once a latch has triggered)
NM = 12

# --------------------------------------------------------------------------------------------
# unit frames of one evaluation (float64[NFR], written by _frames; inertial axes)
FR_R_AU = 0   # AU origin O (the housing joint) [m] (3)
FR_V_AU = 3   # its velocity [m/s] (3)
FR_W1 = 6     # body-1 angular velocity [rad/s] (3)
FR_R_PU = 9   # PU origin [m] (3)
FR_V_PU = 12  # its velocity [m/s] (3)
FR_W2 = 15    # body-2 angular velocity [rad/s] (3)
FR_L1 = 18    # body-1 centre of mass -> AU origin [m] (3)
FR_L2 = 21    # body-2 centre of mass -> PU origin [m] (3)
NFR = 24

# mechanism coordinates and rates of one state (float64[NMC], written by _mech)
MC_U = 0      # housing axis u, inertial (3) [-]
MC_UA = 3     # u in AU axes (3) [-]
MC_PSI = 6    # lateral coordinates psi = u_y / u_x, theta = -u_z / u_x (AU) [-]
MC_TH = 7
MC_PSID = 8   # their rates [1/s]
MC_THD = 9
MC_RX = 10    # 1 / u_x (AU) [-]
MC_W = 11     # probe direction w (bearing B -> head), inertial (3) [-]
MC_IL = 14    # 1 / |d|, d = head - B [1/m]
MC_S = 15     # stroke [m]
MC_SD = 16    # stroke rate [m/s]
MC_WD = 17    # w_dot, inertial (3) [1/s]
MC_PHID = 20  # torsion rate [rad/s]
MC_W1U = 21   # vehicle-1 angular velocity along u [rad/s]
MC_WA = 22    # w in AU axes (3) [-]
NMC = 25

# contact sums of one evaluation (float64[NACC], accumulated by _contact_apply; PU axes)
ACC_F = 0           # force on the passive unit [N] (3)
ACC_M = 3           # its moment about the PU origin [N m] (3)
ACC_M_HEAD = 6      # moment of the head's contact forces about the head centre [N m] (3)
ACC_P_DISS = 9      # power dissipated by contacts (damping, friction) [W]
ACC_P_EL = 10       # elastic contact power k dn dn_dot [W]
ACC_E_EL = 11       # stored contact energy, sum of 1/2 k dn^2 [J]
ACC_N = 12          # number of contacts [-]
ACC_F_HOUSING = 13  # force of the housing contacts on the passive unit [N] (3)
ACC_M_HOUSING = 16  # moment of their forces on the housing about the joint [N m] (3)
ACC_N_HOUSING = 19  # number of housing contacts [-]
ACC_D = 20          # velocity Jacobian of the head's contact friction, symmetric, PU axes
                    # [N s/m] (6: xx, xy, xz, yy, yz, zz)
NACC = 26

# --------------------------------------------------------------------------------------------
# float scratch of one simulation (float64[NSC]), reused by every evaluation: offset and size
# of each region
SC_FRAMES = 0                    # unit frames (FR_*)
SC_FRAMES_SIZE = NFR
SC_TW_HEAD = 24                  # twist of the head (active link of the head contacts),
SC_TW_HEAD_SIZE = _TW_SIZE       # PU axes (contact TW_* layout) [m/s, rad/s, m]
SC_TW_PU = 33                    # twist of the passive unit, PU axes (TW_*)
SC_TW_PU_SIZE = _TW_SIZE
SC_ACC = 42                      # contact sums (ACC_*)
SC_ACC_SIZE = NACC
SC_RATES = 68                    # body rates handed to euler_rhs, body axes [rad/s] (3)
SC_RATES_SIZE = 3
SC_MECH = 71                     # mechanism coordinates and rates (MC_*)
SC_MECH_SIZE = NMC
SC_TW_HOUSING = 96               # twist of the housing (active link of the housing
SC_TW_HOUSING_SIZE = _TW_SIZE    # contacts), PU axes (TW_*)
SC_TORQUE = 105                   # torque on a body, body axes [N m] (3)
SC_TORQUE_SIZE = 3
SC_RATES_DOT = 108               # its angular acceleration, body axes [rad/s^2] (3)
SC_RATES_DOT_SIZE = 3
SC_ROW = 111                     # one output sample, every channel (O_*), before the
SC_ROW_SIZE = NCH                # chosen channels are copied out
NSC = 165

SC_REGIONS = ((SC_FRAMES, SC_FRAMES_SIZE), (SC_TW_HEAD, SC_TW_HEAD_SIZE),
              (SC_TW_PU, SC_TW_PU_SIZE), (SC_ACC, SC_ACC_SIZE), (SC_RATES, SC_RATES_SIZE),
              (SC_MECH, SC_MECH_SIZE), (SC_TW_HOUSING, SC_TW_HOUSING_SIZE),
              (SC_TORQUE, SC_TORQUE_SIZE), (SC_RATES_DOT, SC_RATES_DOT_SIZE),
              (SC_ROW, SC_ROW_SIZE))


def _check_tiling(regions, n, what):
    """Raise ``AssertionError`` unless the ``(offset, size)`` pairs cover ``range(n)`` exactly
    once (no gap, no overlap, nothing outside)."""
    end = 0
    for off, size in sorted(regions):
        if size <= 0 or off != end:
            raise AssertionError(f"{what}: region at {off} (size {size}) does not start where "
                                 f"the previous one ends ({end})")
        end = off + size
    if end != n:
        raise AssertionError(f"{what}: the regions end at {end}, the array has {n} entries")


_check_tiling(SC_REGIONS, NSC, "scratch SC_*")
_check_tiling(((FR_R_AU, 3), (FR_V_AU, 3), (FR_W1, 3), (FR_R_PU, 3), (FR_V_PU, 3), (FR_W2, 3),
               (FR_L1, 3), (FR_L2, 3)), NFR, "frames FR_*")
_check_tiling(((MC_U, 3), (MC_UA, 3), (MC_PSI, 1), (MC_TH, 1), (MC_PSID, 1), (MC_THD, 1),
               (MC_RX, 1), (MC_W, 3), (MC_IL, 1), (MC_S, 1), (MC_SD, 1), (MC_WD, 3),
               (MC_PHID, 1), (MC_W1U, 1), (MC_WA, 3)), NMC, "mechanism MC_*")
_check_tiling(((ACC_F, 3), (ACC_M, 3), (ACC_M_HEAD, 3), (ACC_P_DISS, 1), (ACC_P_EL, 1),
               (ACC_E_EL, 1), (ACC_N, 1), (ACC_F_HOUSING, 3), (ACC_M_HOUSING, 3),
               (ACC_N_HOUSING, 1), (ACC_D, 6)), NACC, "contact sums ACC_*")
_check_tiling(tuple((m, 1) for m in (M_A1, M_A2, M_AAU, M_APU, M_G1, M_G2, M_J1, M_J2, M_JI1,
                                     M_JI2, M_ROT_HOUSING, M_ROT_HEAD)), NM, "matrices M_*")

_SQRT1_2 = 0.7071067811865476


def channel_names() -> tuple:
    """Names of the output channels in column order (``O_*``)."""
    names = ["t", "stroke", "gimbal_pitch", "gimbal_yaw", "contact", "bottom_contact",
             "capture", "latch_1", "latch_2", "latch_3", "latch_4",
             "active_rate_x", "active_rate_y", "active_rate_z",
             "passive_rate_x", "passive_rate_y", "passive_rate_z", *IC_NAMES,
             "interface_force_x", "interface_force_y", "interface_force_z",
             "interface_moment_x", "interface_moment_y", "interface_moment_z",
             "energy_kinetic", "energy_stored", "energy_dissipated_brake",
             "energy_dissipated_dampers", "energy_dissipated_hysteresis",
             "energy_dissipated_contact", "thrust_work",
             "momentum_x", "momentum_y", "momentum_z",
             "angular_momentum_x", "angular_momentum_y", "angular_momentum_z",
             "absorber_axial_force", "absorber_pitch_moment", "absorber_yaw_moment",
             "bending_pitch", "bending_yaw", "housing_contact"]
    assert len(names) == NCH
    return tuple(names)


# --------------------------------------------------------------------------------------------
# small helpers
@njit(**NJIT_LEAF)
def _m3(P, o, M):
    for i in range(3):
        for j in range(3):
            M[i, j] = P[o + 3 * i + j]


@njit(**NJIT_LEAF)
def _mv(A, x, y, z):
    return (A[0, 0] * x + A[0, 1] * y + A[0, 2] * z,
            A[1, 0] * x + A[1, 1] * y + A[1, 2] * z,
            A[2, 0] * x + A[2, 1] * y + A[2, 2] * z)


@njit(**NJIT_LEAF)
def _mtv(A, x, y, z):
    return (A[0, 0] * x + A[1, 0] * y + A[2, 0] * z,
            A[0, 1] * x + A[1, 1] * y + A[2, 1] * z,
            A[0, 2] * x + A[1, 2] * y + A[2, 2] * z)


@njit(**NJIT_LEAF)
def _diff_pu(APU, a, i, b, j):
    """``A_PU (a[i:i+3] - b[j:j+3])``: the difference of two inertial vectors in PU axes."""
    return _mv(APU, a[i] - b[j], a[i + 1] - b[j + 1], a[i + 2] - b[j + 2])


@njit(**NJIT_LEAF)
def _cr(ax, ay, az, bx, by, bz):
    return (ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx)


@njit(**NJIT_LEAF)
def _matmul(A, B, C):
    for i in range(3):
        for j in range(3):
            C[i, j] = A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + A[i, 2] * B[2, j]


@njit(**NJIT_LEAF)
def _housing_rot(ux, uy, uz, vx, vy, vz):
    """Rotate ``v`` (housing axes) into AU axes by the minimal rotation taking ``X`` onto the
    unit vector ``u`` (no twist about the probe axis): ``v + k x v + k x (k x v)/(1 + c)`` with
    ``k = X x u``, ``c = u_x``."""
    kx = 0.0
    ky = -uz
    kz = uy
    c1 = 1.0 / (1.0 + ux)
    ax, ay, az = _cr(kx, ky, kz, vx, vy, vz)
    bx, by, bz = _cr(kx, ky, kz, ax, ay, az)
    return vx + ax + bx * c1, vy + ay + by * c1, vz + az + bz * c1


@njit(**NJIT_LEAF)
def _latch_dirs(i):
    if i == 0:
        return 1.0, 0.0
    if i == 1:
        return 0.0, 1.0
    if i == 2:
        return -1.0, 0.0
    return 0.0, -1.0


@njit(**NJIT_LEAF)
def _plunger(P, i):
    """(tip abscissa, tip radius, preload, rate, travel, e_y, e_z) of zero-inertia spring item
    ``i`` (latches 0..3, capture sensors 4 at +Z_H and 5 at -Z_H, in the plane X_H Z_H)."""
    if i < N_LATCH:
        ey, ez = _latch_dirs(i)
        return (P[P_LATCH_X], P[P_LATCH_R], P[P_LATCH_F0], P[P_LATCH_K], P[P_LATCH_TRAVEL],
                ey, ez)
    ez = 1.0 if i == N_LATCH else -1.0
    return (P[P_SENS_X], P[P_SENS_R], P[P_SENS_F0], P[P_SENS_K], P[P_SENS_TRAVEL], 0.0, ez)


@njit(**NJIT_LEAF)
def apply_slip_force(table, t0, f_slip):
    """Set the slip level of a brake element (positive side) to ``f_slip`` (table units),
    keeping the stiff last working segments (slope ``k`` of node ``n-2``, assumption 5): moves
    the common node ``q[n-1]`` and the backward node ``q_B[n-2]``. Returns 0, or 1 when the
    requested level is not above the nodes it must clear (the table is left unchanged)."""
    n = int(table[t0 + hk.H_NP])
    b = t0 + hk.H_SIZE
    bb = b + 3 * n
    kf = table[b + 2 * n + n - 2]
    kb = table[bb + 2 * n + n - 2]
    if kf <= 0.0 or kb <= 0.0 or n < 4:
        return 1
    qn = table[b + n - 2] + (f_slip - table[b + n + n - 2]) / kf
    qb = qn - (f_slip - table[bb + n + n - 2]) / kb
    if qn <= table[b + n - 2] or qb <= table[bb + n - 3] or qb >= qn:
        return 1
    table[b + n - 1] = qn
    table[b + n + n - 1] = f_slip
    table[bb + n - 1] = qn
    table[bb + n + n - 1] = f_slip
    table[bb + n - 2] = qb
    table[bb + 2 * n + n - 3] = (table[bb + n + n - 2] - table[bb + n + n - 3]) / (
        qb - table[bb + n - 3])
    return 0
