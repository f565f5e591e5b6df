"""Contact detectors and the penalty force law of the contact paper, as numba kernels.

This module is the one import point of the contact kernels; the code lives in four modules by
job: :mod:`~models._kernels.contact_layout` (status codes, packed layouts, tolerances),
:mod:`~models._kernels.contact_revolution` (primitives against surfaces of revolution),
:mod:`~models._kernels.contact_segments` (segments against circles, segments, slots; generator
fans) and :mod:`~models._kernels.contact_force` (the force law).

Everything here works in the axes of the passive docking unit (PU, SI units): the caller
transforms the active primitive's characteristic points into PU first (eq. 2.1 of the digest,
:mod:`models._kernels.frames`) and calls a detector. The probe-cone and peripheral unit kernels
call these functions from inside their own ``@njit`` RK4 loops at every stage, so each detector

* is a plain ``@njit(**NJIT)`` function of float scalars and packed float64 arrays;
* allocates nothing and raises nothing;
* returns one 9-tuple, the **contact tuple**::

      (status, depth, nx, ny, nz, px, py, pz, feature)

  ``status`` (int64): :data:`NONE` (0, no contact; the floats are zero and ``feature`` is
  -1), :data:`CONTACT`
  (1), :data:`PENETRATION_EXCEEDED` (2: a contact whose ``depth > dn_max``; all fields are
  filled so the caller can report them) or :data:`GEOMETRY_RANGE` (3: a closed form used
  outside its validity, e.g. a sphere centre on the axis of a cylinder; the other fields are
  zero). ``depth`` [m] is the penetration :math:`\\Delta_n > 0`; ``(nx, ny, nz)`` is the unit
  contact normal :math:`\\mathbf n_R`, pointing **from the active into the passive body** (the
  force on the passive body is :math:`+\\mathbf n_R f_R`); ``(px, py, pz)`` [m] is the single
  contact point in PU (the point at which both bodies' forces act); ``feature`` (int64) says
  which feature of the passive primitive (or which generator of a fan) touched.

Call pattern inside a unit kernel (sphere of the probe head against the receiving cone, which
may touch in two places at a concave corner, so the detector is resumed after each hit)::

    feat = 0
    while True:
        st, dn, nx, ny, nz, px, py, pz, f = sphere_vs_revolution(xs, ys, zs, r_head, mer,
                                                                 dn_max, feat)
        if st == NONE:
            break
        if st >= PENETRATION_EXCEEDED:
            return st          # the readable wrapper raises PenetrationExceeded / GeometryRangeError
        (fn, dd, fx, fy, fz, mpx, mpy, mpz, max_, may, maz) = contact_wrench(
            dn, nx, ny, nz, px, py, pz, twist_head, twist_pu, law)
        ...accumulate...
        feat = f + 1

Detectors that can give several simultaneous contacts (:func:`sphere_vs_revolution`,
:func:`segment_vs_slot`) take a ``start`` feature index and are resumed like this; the others
give at most one contact.

Packed layouts (row / column constants of :mod:`~models._kernels.contact_layout`; built once by
the readable layer's ``pack()``):

* meridian table of a surface of revolution, ``mer[k, :]`` for vertex ``k`` of the meridian
  polyline (``M_*``);
* circle ``circ[:]`` (``C_*``); plane fragment ``plane[:]`` (``PL_*``); 45-degree stop surface
  ``stop[:]`` (``S45_*``); socket slot ``slot[:]`` (``SL_*``); generator fan ``fan[i, :]``
  (``F_*``); contact law ``law[:]`` (``LAW_*``); twist ``tw[:]`` (``TW_*``).

References
----------
Seed digest ``docking-contact-models.md`` sections 5, 7, 8.5, 9.5, 9.7 and 12 (Golubev &
Yaskevich, Keldysh preprint 4, 2020, doi:10.20948/prepr-2020-4).
"""
from __future__ import annotations

from models._kernels import contact_layout as _layout
from models._kernels.contact_force import contact_force, contact_wrench
from models._kernels.contact_layout import *  # noqa: F403  (the layouts, re-exported)
from models._kernels.contact_revolution import (point_vs_stop45, segment_vs_stop45_crest,
                                                sphere_vs_plane, sphere_vs_revolution)
from models._kernels.contact_segments import (fan_search, fan_vs_circle, segment_vs_circle,
                                              segment_vs_circle_xyz, segment_vs_segment,
                                              segment_vs_slot)

__all__ = [
    *_layout.__all__,
    "sphere_vs_revolution", "sphere_vs_plane", "segment_vs_circle", "segment_vs_circle_xyz",
    "segment_vs_segment", "point_vs_stop45", "segment_vs_stop45_crest", "segment_vs_slot",
    "fan_search", "fan_vs_circle", "contact_force", "contact_wrench",
]
