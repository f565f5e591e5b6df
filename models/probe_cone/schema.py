"""Declared schema of a probe-cone scenario TOML (:mod:`models.schema`): every table and key
:meth:`models.probe_cone.config.Scenario.from_dict` reads, with unit, default, bounds and
meaning. The readers take their key sets from here."""
from __future__ import annotations

from models.schema import BODY, CONTACT, INITIAL, META, PASSIVE_BODY, THRUST, Table, keys

__all__ = ["AXIAL_ABSORBER", "LATERAL_ABSORBER", "TORSION_ABSORBER", "PROBE", "CONE",
           "LATCHES", "SLOTS", "CAPTURE_SENSORS", "LIMITER_PADS", "ALIGNMENT_ROLLERS",
           "INTEGRATION", "SCENARIO"]

AXIAL_ABSORBER = Table("axial_absorber", "Spring mechanism in series with the friction brake "
                       "on the probe stroke (models.probe_cone.config.AxialAbsorber).", keys("""
common_stroke      | number | m   | required | - | end of the common (loading = unloading)
| segment
common_force       | number | N   | required | - | force at the end of the common segment
spring_stroke      | number | m   | required | - | end of the spring stage
spring_force       | number | N   | required | - | force at the end of the spring stage
unloading_force    | number | N   | required | - | unloading branch's force at the foot of the
| last stiff segment
stiff_rate         | number | N/m | required | - | slope of the stiff segment up to the slip
| force (must exceed every other slope)
slip_force         | number | N   | required | - | brake slip force
tension_slip_force | number | N   | 5000.0   | - | slip force of the tension stop
"""), required=True)

LATERAL_ABSORBER = Table("lateral_absorber", "Two-stage lateral spring mechanism with "
                         "hysteresis, moment against the housing angle "
                         "(models.probe_cone.config.LateralAbsorber).", keys("""
common_angle    | number | rad     | required | - | end of the common segment
stage1_rate     | number | N m/rad | required | - | rate of the first stage
stage1_angle    | number | rad     | required | - | end of the first stage
stage2_rate     | number | N m/rad | required | - | rate of the second stage
range_angle     | number | rad     | required | - | end of the working range (the stop)
stop_rate       | number | N m/rad | required | - | rate of the stop (must exceed the stage
| rates)
unloading_ratio | number | -       | 0.7      | - | unloading force of the first stage as a
| fraction of its loading rise, in (0, 1)
"""), required=True)

TORSION_ABSORBER = LATERAL_ABSORBER.replace(
    name="torsion_absorber", help="Roll (torsion) deformation of the mechanism, moment "
    "against the torsion angle; the layout of the lateral absorber "
    "(models.probe_cone.config.TorsionAbsorber).")

PROBE = Table("probe", "Probe mechanism of the active unit (models.probe_cone.config.Probe).",
              keys("""
head_mass         | number   | kg        | required | >0  | effective mass of the probe head
extended_length   | number   | m         | required | >0  | joint to head centre at zero
| stroke
head_radius       | number   | m         | required | >0  | radius of the probe head
axial_damping     | number   | N s/m     | required | >=0 | axial damper
lateral_damping   | vector:2 | N m s/rad | required | -   | the dampers in the planes at +45
| and -45 degrees (not negative)
spin_inertia      | number   | kg m^2    | required | >0  | head and probe about the probe
| axis (torsion)
torsion_damping   | number   | N m s/rad | 0.0      | >=0 | structural torsion damping
bearing_offset    | number   | m         | required | >=0 | output support bearing from the
| joint along the housing axis
housing_inertia   | number   | kg m^2    | required | >0  | movable housing's transverse moment
| of inertia about the joint
bending_stiffness | number   | N m/rad   | required | >0  | probe bending stiffness about the
| bearing
bending_damping   | number   | N m s/rad | required | >=0 | structural bending damping
""") + (AXIAL_ABSORBER, LATERAL_ABSORBER, TORSION_ABSORBER), required=True)

CONE = Table("cone", "Receiving cone, socket and bottom (models.probe_cone.config.Cone).",
             keys("""
meridian | rows:2 | m | required | - | polyline [x, rho] from the interface plane to the
| bottom centre (at least 3 points, x not decreasing, ending on the axis)
"""), required=True)

LATCHES = Table("latches", "Four head latches (models.probe_cone.config.Latches).", keys("""
axial_offset         | number | m   | required | - | tip position along the head axis
tip_radius           | number | m   | required | - | undeflected tip radius
reverse_inner_radius | number | m   | required | - | inner end of the reverse segment
preload              | number | N   | required | - | spring preload at the tip
stiffness            | number | N/m | required | - | spring rate at the tip
travel               | number | m   | required | - | largest retraction
"""), required=True)

SLOTS = Table("slots", "Four socket slots (models.probe_cone.config.Slots).", keys("""
stop_x        | number | m   | required | - | axial position of the slot stop
half_width    | number | m   | required | - | narrow half-width d_LL1
narrow_length | number | m   | required | - | narrow part's length from the stop d_LX1
inclined_end  | number | m   | required | - | inclined part's end from the stop d_LX2
incline       | number | rad | required | - | incline beta, in (0, 1.5)
"""), required=True)

CAPTURE_SENSORS = Table("capture_sensors", "The two head capture sensors; absent: no sensors "
                        "(models.probe_cone.config.CaptureSensors).", keys("""
axial_offset   | number | m   | 0.0  | - | tip position along the head axis
tip_radius     | number | m   | 0.0  | - | undeflected tip radius
preload        | number | N   | 0.0  | - | spring preload at the tip
stiffness      | number | N/m | 0.0  | - | spring rate at the tip
travel         | number | m   | 0.01 | - | largest retraction
friction_force | number | N   | 0.0  | - | total axial friction on the socket wall after
| capture
"""))

LIMITER_PADS = Table("limiter_pads", "Pads of the relative-rotation limiter on the housing; "
                     "absent: none (models.probe_cone.config.LimiterPads).", keys("""
segments | rows:6 | m | required | - | [x1, y1, z1, x2, y2, z2] segments in the housing frame
"""))

ALIGNMENT_ROLLERS = Table("alignment_rollers", "Rollers of the alignment levers; absent: none "
                          "(models.probe_cone.config.AlignmentRollers).", keys("""
centres | rows:3 | m | required | -  | roller centres in the housing frame
radius  | number | m | required | >0 | roller radius
"""))

INTEGRATION = Table("integration", "RK4 steps and output (models.probe_cone.config."
                    "Integration).", keys("""
dt_contact        | number | s  | 0.0005  | >0  | step within gap_margin of contact
dt_free           | number | s  | 0.002   | >0  | step in free flight
gap_margin        | number | m  | 0.05    | >=0 | gap below which the contact step applies
duration          | number | s  | 20.0    | >0  | simulated time
output_rate       | number | Hz | 100.0   | >0  | output samples per second
dt_captured       | number | s  | -       | >0  | step after capture (default: dt_contact)
implicit_friction | choice:never,captured,always | - | 'never' | - | where the head's contact
| friction is integrated implicitly
"""))

#: a probe-cone scenario's own tables (the run tables and the envelope: recon.schema)
SCENARIO = Table("probe_cone", "A probe-cone docking scenario (models.probe_cone.config."
                 "Scenario).", keys("""
unit | choice:probe_cone | - | required | - | the docking unit (models.unit registry)
""") + (META, BODY, PASSIVE_BODY, PROBE, CONE, LATCHES, SLOTS, CAPTURE_SENSORS, LIMITER_PADS,
        ALIGNMENT_ROLLERS, CONTACT, THRUST, INTEGRATION, INITIAL), source=False)
