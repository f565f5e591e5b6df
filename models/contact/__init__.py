"""Contact geometry and penalty forces of docking units (Golubev & Yaskevich 2020).

Primitives (:mod:`.primitives`), one detector per primitive pair (:mod:`.detectors`), the force
law (:mod:`.force`), frame kinematics (:mod:`.frames`) and the typed failures
(:mod:`.errors`). The numba kernels behind them, which unit models call inside their own time
loops, are :mod:`models._kernels.contact` and :mod:`models._kernels.frames`.
"""
from models.contact.detectors import (Contact, fan_search, fan_vs_circle, point_vs_stop45,
                                      raise_for_status, segment_vs_circle, segment_vs_segment,
                                      segment_vs_slot, segment_vs_stop45_crest, sphere_vs_plane,
                                      sphere_vs_revolution)
from models.contact.errors import ContactError, GeometryRangeError, PenetrationExceeded
from models.contact.force import ContactLaw, ContactWrench, Twist, contact_wrench
from models.contact.primitives import (Circle, GeneratorFan, PlaneFragment, Segment, Slot,
                                       Sphere, StopSurface45, SurfaceOfRevolution)

__all__ = [
    "Contact", "fan_search", "fan_vs_circle", "point_vs_stop45", "raise_for_status",
    "segment_vs_circle", "segment_vs_segment", "segment_vs_slot", "segment_vs_stop45_crest",
    "sphere_vs_plane", "sphere_vs_revolution", "ContactError", "GeometryRangeError",
    "PenetrationExceeded", "ContactLaw", "ContactWrench", "Twist", "contact_wrench", "Circle",
    "GeneratorFan", "PlaneFragment", "Segment", "Slot", "Sphere", "StopSurface45",
    "SurfaceOfRevolution",
]
