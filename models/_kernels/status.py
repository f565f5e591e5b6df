"""Status codes a docking unit's kernel returns: one table for every unit.

A kernel cannot raise an exception that carries data; it returns one of these codes (and
records where it stopped in its run information), and the readable layer turns a code other
than :data:`ST_OK` into a :class:`models.errors.SimulationError` in one place
(:func:`models.trace.kernel_failure`, with :data:`STATUS_TEXT`).

The hysteresis elements' own transition codes (:mod:`models._kernels.hysteresis`,
``ST_ILLEGAL`` / ``ST_NO_INTERSECTION``) are a level below these: a unit's kernel reports a
refused transition of any of its elements as :data:`ST_HYSTERESIS`.
"""
from __future__ import annotations

__all__ = ["ST_OK", "ST_PENETRATION", "ST_GEOMETRY", "ST_HYSTERESIS", "ST_BAD_TABLE",
           "ST_START_CONTACT", "STATUS_TEXT"]

ST_OK = 0
ST_PENETRATION = 1      # a contact exceeded its admissible penetration
ST_GEOMETRY = 2         # a contact detector met a configuration outside its range
ST_HYSTERESIS = 3       # a hysteresis element refused a transition
ST_BAD_TABLE = 4        # a hysteresis table the kernel cannot use
ST_START_CONTACT = 5    # in contact at t = 0: no free flight to extend backwards

#: what each code means, with what the user can do about it
STATUS_TEXT = {
    ST_PENETRATION: "penetration exceeded the contact's max_penetration (reduce "
                    "integration.dt_contact or raise contact.stiffness)",
    ST_GEOMETRY: "a contact detector met a configuration outside its range",
    ST_HYSTERESIS: "a hysteresis element refused a transition (reduce the step or enlarge "
                   "the common first segment)",
    ST_BAD_TABLE: "the brake slip force is not above the spring-stage nodes",
    ST_START_CONTACT: "the unit is in contact at the start of the simulation, so there is "
                      "no free flight to extend backwards (start further out)",
}
