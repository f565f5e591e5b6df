"""Typed failures of the contact model (digest section 12, item 8).

Kernels cannot raise exceptions that carry data; they return a status code
(:data:`models._kernels.contact.PENETRATION_EXCEEDED`, ``GEOMETRY_RANGE``) and the readable
layer, or the unit model that drives the kernel, raises one of these.
"""
from __future__ import annotations

from typing import Any

from models.errors import DockreconError

__all__ = ["ContactError", "PenetrationExceeded", "GeometryRangeError"]


class ContactError(DockreconError):
    """Base class of contact-model failures (a simulation cannot continue)."""


class PenetrationExceeded(ContactError):
    """A penetration larger than its allowed maximum: reduce the step (the paper aborts here).

    Parameters
    ----------
    pair
        Primitive pair, e.g. ``"head sphere / receiving cone"``.
    depth
        Penetration found [m].
    limit
        Allowed maximum :math:`\\Delta_{n,\\max}` [m].
    time
        Model time [s], when known.
    poses
        Poses of both bodies (any mapping of names to arrays), recorded for the run log.
    feature
        Feature id of the passive primitive.
    step
        Integration step [s] in use, when known.
    """

    def __init__(self, pair: str, depth: float, limit: float, *, time: float | None = None,
                 poses: dict[str, Any] | None = None, feature: int = -1,
                 step: float | None = None) -> None:
        self.step = step
        self.pair = pair
        self.depth = float(depth)
        self.limit = float(limit)
        self.time = time
        self.poses = dict(poses or {})
        self.feature = int(feature)
        when = f"t = {time:.6g} s: " if time is not None else ""
        super().__init__(f"{when}{pair}: penetration {self.depth:.6g} m exceeds its maximum "
                         f"{self.limit:.6g} m (feature {self.feature}); reduce the step")


class GeometryRangeError(ContactError):
    """A closed-form contact solution used outside its range of validity (paper principle 6).

    Parameters
    ----------
    pair
        Primitive pair.
    what
        What is outside the range.
    time
        Model time [s], when known.
    """

    def __init__(self, pair: str, what: str, *, time: float | None = None) -> None:
        self.pair = pair
        self.what = what
        self.time = time
        when = f"t = {time:.6g} s: " if time is not None else ""
        super().__init__(f"{when}{pair}: {what}")
