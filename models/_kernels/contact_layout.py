"""Contact kernels, part 1: status codes, packed layouts of the passive primitives, the
contact law and the twists, tolerances, and the status helper every detector returns through.

The contract of the detectors (the contact tuple, the resume pattern) is in
:mod:`models._kernels.contact`, which re-exports everything the unit kernels and the readable
layer use."""
from __future__ import annotations

from numba import njit

from models._kernels import NJIT, NJIT_LEAF

__all__ = [
    "NONE", "CONTACT", "PENETRATION_EXCEEDED", "GEOMETRY_RANGE",
    "M_X", "M_RHO", "M_TX", "M_TRHO", "M_LEN", "M_KIND", "M_NCOL",
    "KIND_END", "KIND_CONVEX", "KIND_CONCAVE", "KIND_STRAIGHT",
    "C_BX", "C_BY", "C_BZ", "C_UX", "C_UY", "C_UZ", "C_R", "C_SIDE", "C_SIZE",
    "PL_X", "PL_RMIN", "PL_RMAX", "PL_SIDE", "PL_SIZE",
    "S45_RHO0", "S45_X0", "S45_SIGMA", "S45_XLO", "S45_XHI", "S45_XCREST", "S45_RCREST",
    "S45_SIZE",
    "SL_VX", "SL_EX", "SL_ET", "SL_EN", "SL_DLL1", "SL_DLX1", "SL_DLX2", "SL_TANB", "SL_SINB",
    "SL_COSB", "SL_DLL2", "SL_SIZE", "SLOT_STOP", "SLOT_NARROW", "SLOT_INCLINED", "SLOT_WIDE",
    "SLOT_EDGE", "SLOT_BORE",
    "F_PX", "F_PY", "F_PZ", "F_LX", "F_LY", "F_LZ", "F_NCOL",
    "LAW_K", "LAW_C", "LAW_MU", "LAW_VEPS", "LAW_MODEL", "LAW_SIZE", "MODEL_LINEAR",
    "MODEL_HUNT_CROSSLEY",
    "TW_V", "TW_W", "TW_O", "TW_SIZE",
    "AXIS_EPS", "PARALLEL_EPS", "PERP_MIN",
    "check_penetration",
]

# --------------------------------------------------------------------------------------------
# status codes
NONE = 0
CONTACT = 1
PENETRATION_EXCEEDED = 2
GEOMETRY_RANGE = 3

# --------------------------------------------------------------------------------------------
# meridian table of a surface of revolution: mer[k, col], one row per polyline vertex k.
# The polyline runs in the meridian half-plane (x, rho) of PU; its unit tangent t_k = (tx, trho)
# goes from vertex k to k+1 and the material lies on the side of n_k = (-trho, tx) (for a funnel
# listed from the interface plane towards the socket bottom, n_k points into the metal).
M_X = 0          # vertex abscissa x_k [m]
M_RHO = 1        # vertex radius rho_k [m]
M_TX = 2         # tangent of segment k (vertex k -> k+1), x component [-] (0 on the last row)
M_TRHO = 3       # tangent of segment k, rho component [-]
M_LEN = 4        # length of segment k [m] (0 on the last row)
M_KIND = 5       # vertex kind: KIND_END, KIND_CONVEX (a rim), KIND_CONCAVE, KIND_STRAIGHT
M_NCOL = 6
KIND_END = 0.0
KIND_CONVEX = 1.0
KIND_CONCAVE = -1.0
KIND_STRAIGHT = 2.0  # collinear neighbours: no feature of its own

# circle: centre P_B, unit axis u from P_B towards the material of the body that carries the
# circle (towards the cone vertex P_T for the mouth of the receiving cone), radius R_C, and
# SIDE = +1 if the circle is on the passive body (segment active), -1 if it is on the active one.
C_BX, C_BY, C_BZ = 0, 1, 2
C_UX, C_UY, C_UZ = 3, 4, 5
C_R = 6
C_SIDE = 7
C_SIZE = 8

# plane fragment normal to X_PU (annulus rho_min <= rho <= rho_max in the plane x = x_p);
# SIDE = +1 if the material is at x > x_p (socket bottom, passive interface plane).
PL_X = 0
PL_RMIN = 1
PL_RMAX = 2
PL_SIDE = 3
PL_SIZE = 4

# 45-degree stop surface rho_s(x) = rho0 + sigma (x - x0), material at rho > rho_s(x), the
# fragment spanning x_lo <= x <= x_hi (abscissa of the foot of the perpendicular), and its crest
# circle (x_crest, r_crest), the edge used by the segment test (plane P_Stop is x = x_crest).
S45_RHO0 = 0
S45_X0 = 1
S45_SIGMA = 2
S45_XLO = 3
S45_XHI = 4
S45_XCREST = 5
S45_RCREST = 6
S45_SIZE = 7

# socket slot (digest 8.5 reconstruction): vertex V (3), axial unit e_x (3, from the stop
# towards the slot mouth), lateral unit e_t (3), plane normal e_n (3), half-width of the narrow
# part d_LL1, axial start / end of the inclined faces d_LX1 < d_LX2, tan, sin, cos of beta, and
# the half-width of the wide part d_LL2 = d_LL1 + (d_LX2 - d_LX1) tan(beta).
SL_VX = 0
SL_EX = 3
SL_ET = 6
SL_EN = 9
SL_DLL1 = 12
SL_DLX1 = 13
SL_DLX2 = 14
SL_TANB = 15
SL_SINB = 16
SL_COSB = 17
SL_DLL2 = 18
SL_SIZE = 19
# features of segment_vs_slot
SLOT_STOP = 0
SLOT_NARROW = 1
SLOT_INCLINED = 2
SLOT_WIDE = 3
SLOT_EDGE = 4
SLOT_BORE = 5

# generator fan: fan[i, col] = start point and direction vector of generator i in the fan's
# home frame (e.g. the active ring frame X_A).
F_PX, F_PY, F_PZ = 0, 1, 2
F_LX, F_LY, F_LZ = 3, 4, 5
F_NCOL = 6

# contact law: stiffness k_S [N/m], damping c_D [N s/m] (MODEL_LINEAR) or [N s/m^2]
# (MODEL_HUNT_CROSSLEY), friction coefficient k_Fr [-], regularization speed v_eps [m/s].
LAW_K = 0
LAW_C = 1
LAW_MU = 2
LAW_VEPS = 3
LAW_MODEL = 4
LAW_SIZE = 5
MODEL_LINEAR = 0.0        # paper: f = k dn + c dn_dot
MODEL_HUNT_CROSSLEY = 1.0  # f = k dn + c dn dn_dot (no force jump at touch-down)

# twist of a body in PU axes: velocity of its reference point, angular velocity, the point.
TW_V = 0
TW_W = 3
TW_O = 6
TW_SIZE = 9

# tolerances
AXIS_EPS = 1e-12      # [m] a point nearer the axis than this has no radial direction
PARALLEL_EPS = 1e-12  # [-] sine of the angle below which a segment is parallel to a plane/segment
PERP_MIN = 1e-9       # [m] common perpendicular shorter than this is ignored (paper: 1e-6 mm)

_SQRT1_2 = 0.7071067811865476


@njit(**NJIT_LEAF)
def _none():
    return (NONE, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1)


@njit(**NJIT_LEAF)
def check_penetration(depth, dn_max):
    """Status of a penetration: CONTACT if ``0 < depth <= dn_max``, PENETRATION_EXCEEDED above,
    NONE otherwise."""
    if depth <= 0.0:
        return NONE
    if depth > dn_max:
        return PENETRATION_EXCEEDED
    return CONTACT
