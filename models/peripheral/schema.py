"""Declared schema of a peripheral scenario TOML (:mod:`models.schema`): every table and key
:meth:`models.peripheral.simulate.Scenario.from_dict` reads, with unit, default, bounds and
meaning. The readers take their key sets from here."""
from __future__ import annotations

from models.schema import BODY, CONTACT, INITIAL, META, PASSIVE_BODY, THRUST, Table, keys

__all__ = ["GEOMETRY_KEYS", "RING", "STOPS", "RING_LATCHES", "RING_CAPTURE_SENSORS", "MECHANISM",
           "LATCHES", "CAPTURE_SENSORS", "CAPTURE", "INTEGRATION", "SCENARIO"]

#: keys of a latch's table (models.peripheral.latches.Latch) that a scenario takes from the
#: ring design, not from its [latches] table (one source of truth)
GEOMETRY_KEYS = ("length", "stop", "pair")

STOPS = Table("stops", "One stop per gap between the ring's own petals "
              "(models.peripheral.config.StopGeometry).", keys("""
azimuths      | vector:3 | rad | required | -         | azimuths of the three stops
min_radius    | number   | m   | required | -         | crest radius R_Stop,min
max_radius    | number   | m   | required | -         | R_Stop,max
guide_depth   | number   | m   | required | >=0       | guide face's start behind the ring
| plane
locking_depth | number   | m   | required | -         | locking face's end behind the ring
| plane (beyond the crest)
half_width    | number   | rad | required | (0, pi/3) | angular half-width of a stop
"""), required=True)

RING_LATCHES = Table("latches", "Geometry of the latches, two per petal "
                     "(models.peripheral.config.LatchGeometry).", keys("""
base_x          | number | m   | required | -          | plunger base above the ring plane
base_radius     | number | m   | required | >0         | plunger base radius
pair_half_angle | number | rad | required | [0, pi/3)  | half the angle between a pair
elevation       | number | rad | required | (0, pi/2)  | plunger lean towards the mating unit
extended_length | number | m   | required | >0         | plunger length when extended
"""), required=True)

RING_CAPTURE_SENSORS = Table("capture_sensors", "Geometry of the three spherical capture "
                             "sensors on the ring face (models.peripheral.config."
                             "CaptureSensorGeometry).", keys("""
radius         | number | m   | required | >0     | sphere radius
centre_x       | number | m   | required | (, 0)  | sphere centre's abscissa (below the ring
| plane, the sphere protruding beyond it)
centre_radius  | number | m   | required | >0     | sphere centre's radius
azimuth_offset | number | rad | 0.0      | -      | azimuth from the petals' centre lines
"""), required=True)

RING = Table("ring", "The ring design, the same for both rings (models.peripheral.config."
             "RingGeometry).", keys("""
inner_radius            | number | m   | required | >0         | ring inner radius R_R
max_lateral_penetration | number | m   | required | >0         | penetration limit scale
| Delta_max of the ring contact
face_outer_radius       | number | m   | required | -          | outer radius of the mating
| face (beyond inner_radius)
petal_height            | number | m   | required | >0         | petal height h
petal_span              | number | rad | required | (0, 2*pi/3) | petal span at its base
petal_top_span          | number | rad | required | >0         | petal span at its top edge
| (below petal_span)
cone_angle              | number | rad | required | (0, 80*pi/180) | petal cone angle alpha
lower_point_radius      | number | m   | required | >0         | radius of the petal base's
| inner corners E1, E2 (below inner_radius)
lower_point_x           | number | m   | 0.0      | -          | abscissa of E1, E2 (within
| +- petal_height)
lower_point_span        | number | rad | 0.0      | (, 2*pi/3) | span of E1, E2 (0: petal_span)
generator_bits          | number | -   | 8        | [1, 16]    | N: 2^N + 1 generators per
| petal (a whole number)
petal_count             | number | -   | 3        | [3, 3]     | petals per ring (3)
first_petal_azimuth     | number | rad | 0.0      | -          | azimuth of petal 1 from +Y
""") + (STOPS, RING_LATCHES, RING_CAPTURE_SENSORS), required=True)

MECHANISM = Table("mechanism", "Docking ring and its six-leg mechanism "
                  "(models.peripheral.mechanism.Mechanism).", keys("""
ring_mass               | number  | kg     | required | >0~           | moving ring with
| petals and latches
ring_inertia            | inertia | kg m^2 | required | -             | ring inertia about its
| centre, ring axes (3 principal values or 9 entries)
base_radius             | number  | m      | required | >0~           | base-joint circle
ring_radius             | number  | m      | required | >0~           | ring-joint circle
base_pair_angle         | number  | rad    | required | [0, 2*pi/3)~  | angle between the joints
| of a base pair
ring_pair_angle         | number  | rad    | required | [0, 2*pi/3)~  | angle between the joints
| of a ring pair
pair_phase              | number  | rad    | required | -~            | centre of base pair 0
| from Y_AU towards Z_AU
ring_joint_offset       | number  | m      | required | -~            | ring-joint plane in ring
| axes (negative: below the ring plane)
ring_height             | number  | m      | required | >0~           | ring centre abscissa at
| the ready position
spring_rate             | number  | N/m    | required | -~            | leg spring rate (linear
| absorber; positive)
spring_preload          | number  | N      | required | >=0~          | preload of the spring
| cartridge
damping                 | number  | N s/m  | required | >=0~          | leg damper
brake_force_compression | number  | N      | required | -~            | leg brake slip force
| shortening (above spring_preload; inf: no brake)
brake_force_extension   | number  | N      | required | -~            | leg brake slip force
| lengthening (above spring_preload; inf: no brake)
leg_stroke_compression  | number  | m      | required | >0~           | travel to the
| shortening end stop
leg_stroke_extension    | number  | m      | required | >0~           | travel to the
| lengthening end stop
stop_rate               | number  | N/m    | required | >0~           | end-stop stiffness
leg_free_length         | number  | m      | -        | >0~           | free length of every
| leg (default: the leg length at the ready position)
preload_stiffness       | number  | N/m    | -        | >0~           | stiffness of the cage
| holding the preload (default: infinite, a rigid cage)
absorber                | table   | -      | -        | -             | a hysteresis element
| table (models.hysteresis) used as every leg's absorber instead of the linear spring and
| brake
"""), required=True)

LATCHES = Table("latches", "Dynamics of every latch; geometry from [ring.latches] "
                "(models.peripheral.latches.Latch).", keys("""
mass                   | number | kg    | required | >0  | mass reduced to the plunger
stiffness              | number | N/m   | required | >=0 | spring rate k_L
preload                | number | N     | required | >=0 | spring preload f_L0
stroke                 | number | m     | required | >0  | plunger stroke
contact_stiffness      | number | N/m   | required | >0  | guide contact stiffness k_LS
max_penetration        | number | m     | required | >0  | penetration limit of the latch
| contacts
lock_stiffness         | number | N/m   | -        | >0  | stiffness of the post-trigger
| contacts (default: contact_stiffness)
lock_damping           | number | N s/m | 0.0      | >=0 | damping of the post-trigger contacts
lock_friction          | number | -     | 0.0      | >=0 | friction of the post-trigger
| contacts
lock_friction_velocity | number | m/s   | 0.001    | >0  | slip velocity of that friction
lock_model             | choice:linear,hunt-crossley | - | 'linear' | - | force law of the
| post-trigger contacts
"""), required=True)

CAPTURE_SENSORS = Table("capture_sensors", "Spring plungers of the capture sensors; sphere "
                        "from [ring.capture_sensors] (models.peripheral.latches."
                        "CaptureSensor).", keys("""
preload   | number | N   | required | >=0 | spring preload
stiffness | number | N/m | required | >=0 | spring rate
travel    | number | m   | required | >0  | largest travel
trigger   | number | m   | required | >0  | travel at which the sensor triggers (at most
| travel)
"""), required=True)

CAPTURE = Table("capture", "Capture tolerance: ring planes aligned "
                "(models.peripheral.latches.CaptureTolerance).", keys("""
angle | number | rad | required | (0, pi/2) | largest angle between the ring planes
gap   | number | m   | required | >0        | largest gap between the ring planes
"""), required=True)

INTEGRATION = Table("integration", "RK4 steps and output (models.peripheral.simulate."
                    "Integration).", keys("""
dt_contact       | number  | s  | required | >0  | step near contact
dt_free          | number  | s  | required | >0  | step otherwise (not below dt_contact)
dt_captured      | number  | s  | -        | >0  | step after capture (default: dt_contact)
dt_settled       | number  | s  | -        | >0  | step from settle_time after capture on
| (default: dt_captured)
settle_time      | number  | s  | 0.0      | >=0 | time after capture from which dt_settled
| applies
duration         | number  | s  | required | >0  | simulated time
output_rate      | number  | Hz | required | >0  | output samples per second
gap_margin       | number  | m  | 0.02     | >=0 | ring gap below which the contact step
| applies
leg_margin       | number  | m  | 0.005    | >=0 | leg distance to an end stop below which
| the contact step applies
exhaustive       | boolean | -  | False    | -   | brute-force fan search (acceptance tests)
prune            | boolean | -  | True     | -   | skip primitive pairs bounding spheres
| prove apart
implicit_contact | choice:never,captured | - | 'never' | - | where the ring-ring contacts'
| damping and friction act implicitly
free_until_touch | boolean | -  | False    | -   | the free step until a step would make
| the first touch
dt_latch         | number  | s  | -        | >0  | the latches' sub-step (default: one per
| RK4 step)
"""), required=True)

#: a peripheral scenario's own tables (the run tables and the envelope: recon.schema)
SCENARIO = Table("peripheral", "A peripheral (androgynous ring) docking scenario "
                 "(models.peripheral.simulate.Scenario).", keys("""
unit | choice:peripheral | - | required | - | the docking unit (models.unit registry)
""") + (META, BODY, PASSIVE_BODY, RING, MECHANISM, LATCHES, CAPTURE_SENSORS, CAPTURE, CONTACT,
        INTEGRATION, INITIAL.replace(required=True), THRUST), source=False)
