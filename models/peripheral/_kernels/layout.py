"""Peripheral (androgynous ring) unit: packed layouts of the geometry tables.

Every offset into a geometry table of the peripheral unit is named here, once. The tables are
built by :func:`models.peripheral.geometry.build_geometry` (readable Python, run once at
initialisation) and read by the unit's kernel. Frames (digest sections 2, 9.1):

* active tables are in the **active ring axes** ``X_A Y_A Z_A``: origin at the ring centre,
  ``X_A`` along the ring axis towards the mating unit (the petals protrude towards ``+X_A``),
  ring plane ``x = 0``;
* passive tables are in the **passive unit axes** ``X_PU Y_PU Z_PU``: ``X_PU`` into the
  passive craft, passive ring plane ``x = 0``, passive petals protruding towards ``-X_PU``.

Tables the contact detectors take as they are:

* generator fans, ``fan[k, i, F_*]`` (petal ``k``, generator ``i``; ``F_*`` of
  :mod:`models._kernels.contact_layout`): ``fan[k]`` is the 2-D fan
  :func:`models._kernels.contact_segments.fan_vs_circle` takes;
* boundary circles, ``C_*`` of :mod:`models._kernels.contact_layout`;
* the passive ring-plane annulus, ``PL_*``;
* the stop surfaces, ``S45_*`` (inside the stop rows below).

Tables of this unit (row layouts below): side-face boundary segments ``edges[row, SEG_*]``
with ``row = EDGES_PER_PETAL * k + EDGE_*``; ring-plane points ``points[2 k + j, 0:3]``;
ring scalars ``ring[RG_*]``; stops ``stops[k, ST_*]``; latches ``latches[m, LA_*]``;
capture-sensor spheres ``sensors[s, SE_*]``.
"""
from __future__ import annotations

from models._kernels.contact_layout import S45_SIZE as _S45_SIZE

__all__ = [
    "N_PETALS", "EDGES_PER_PETAL", "EDGE_UPPER_1", "EDGE_UPPER_2", "EDGE_LOWER_1",
    "EDGE_LOWER_2", "SEG_PX", "SEG_PY", "SEG_PZ", "SEG_LX", "SEG_LY", "SEG_LZ", "SEG_NCOL",
    "POINTS_PER_PETAL", "PT_X", "PT_Y", "PT_Z", "PT_NCOL",
    "RG_RR", "RG_DMAX", "RG_RRMAX", "RG_RFACE", "RG_HEIGHT", "RG_COS_ALPHA", "RG_SIN_ALPHA",
    "RG_X_START", "RG_LMAX", "RG_LMIN", "RG_NGEN", "RG_SIZE",
    "ST_GUIDE", "ST_LOCK", "ST_EY", "ST_EZ", "ST_COS_HW", "ST_AZ", "ST_HW", "ST_NCOL",
    "LATCHES_PER_PAIR", "LA_AX", "LA_AY", "LA_AZ", "LA_NX", "LA_NY", "LA_NZ", "LA_LEN",
    "LA_PAIR", "LA_STOP", "LA_NCOL",
    "N_SENSORS", "SE_CX", "SE_CY", "SE_CZ", "SE_R", "SE_NCOL",
]

N_PETALS = 3             # petals per ring (digest 9.1, 13)

# --------------------------------------------------------------------------------------------
# side-face boundary segments of a petal: start point and vector (end = start + vector) [m]
EDGES_PER_PETAL = 4
EDGE_UPPER_1 = 0         # C1 -> A1: the edge cone / side face 1, extended back from B1 to C1
EDGE_UPPER_2 = 1         # C2 -> A2
EDGE_LOWER_1 = 2         # E1 -> A1: the lower boundary of side face 1
EDGE_LOWER_2 = 3         # E2 -> A2
SEG_PX, SEG_PY, SEG_PZ = 0, 1, 2
SEG_LX, SEG_LY, SEG_LZ = 3, 4, 5
SEG_NCOL = 6

# ring-plane points B1, B2 of each petal (row 2 k + j, j = 0 for B1, 1 for B2) [m]
POINTS_PER_PETAL = 2
PT_X, PT_Y, PT_Z = 0, 1, 2
PT_NCOL = 3

# --------------------------------------------------------------------------------------------
# ring scalars (the same design for both rings)
RG_RR = 0           # inner boundary radius R_R [m]
RG_DMAX = 1         # largest admissible lateral penetration Delta_max [m]
RG_RRMAX = 2        # R_R,max = R_R + Delta_max [m]
RG_RFACE = 3        # outer radius of the ring face (ring-plane annulus R_R .. R_face) [m]
RG_HEIGHT = 4       # petal height above the ring plane [m]
RG_COS_ALPHA = 5    # cos, sin of the cone generator angle alpha (to the ring axis) [-]
RG_SIN_ALPHA = 6
RG_X_START = 7      # abscissa of the generator starts, on the R_R,max circle [m] (< 0, ring axes)
RG_LMAX = 8         # longest generator (start -> top edge) [m]
RG_LMIN = 9         # shortest generator (start -> B1 or B2, first and last of a fan) [m]
RG_NGEN = 10        # generators per petal, 2^N + 1 [-]
RG_SIZE = 11

# --------------------------------------------------------------------------------------------
# stops of the passive ring, one row per stop (row k receives the latch pair of active petal k
# when the rings are coaxial and aligned), in PU
ST_GUIDE = 0                    # guide surface, S45_* (sigma = -1)
ST_LOCK = ST_GUIDE + _S45_SIZE  # locking surface, S45_* (sigma = +1)
ST_EY = ST_LOCK + _S45_SIZE     # unit radial vector of the stop's mid-azimuth (y, z) [-]
ST_EZ = ST_EY + 1
ST_COS_HW = ST_EZ + 1           # cos of the angular half-width: a point (y, z) is in the
                                # stop's sector iff (y e_y + z e_z) >= cos_hw * rho
ST_AZ = ST_COS_HW + 1           # mid-azimuth from Y_PU towards Z_PU [rad]
ST_HW = ST_AZ + 1               # angular half-width [rad]
ST_NCOL = ST_HW + 1

# --------------------------------------------------------------------------------------------
# latches of the active ring, in ring axes: pair k (two latches) on petal k; latch m = 2 k + j
LATCHES_PER_PAIR = 2
LA_AX, LA_AY, LA_AZ = 0, 1, 2   # base point A [m]
LA_NX, LA_NY, LA_NZ = 3, 4, 5   # unit direction n_L, base -> tip [-]
LA_LEN = 6                      # extended length |A E_0| (spring at its internal stop) [m]
LA_PAIR = 7                     # pair index (= petal index k) [-]
LA_STOP = 8                     # index of the stop row it engages [-]
LA_NCOL = 9

# --------------------------------------------------------------------------------------------
# capture-sensor spheres of the active ring (one near the base of each petal), ring axes
N_SENSORS = 3
SE_CX, SE_CY, SE_CZ = 0, 1, 2   # sphere centre [m]
SE_R = 3                        # sphere radius [m]
SE_NCOL = 4
