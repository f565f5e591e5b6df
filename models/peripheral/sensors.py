"""The peripheral unit's flight recorder (its sensor suite, as data). Illustrative: a plausible
suite for a six-leg ring mechanism, not a flight unit's.

* a 200 Hz recorder frame (NaN where a channel has no sample);
* leg lengths ``leg_1..6`` from LVDTs at 50 Hz: 0.1 mm white noise, 0.05 mm steps (a 12-bit
  converter over a 0.2 m stroke);
* the ring pose ``ring_x/y/z``, ``ring_roll/pitch/yaw`` (the unit electronics' solution of the
  leg kinematics, recorded as channels of their own) at 25 Hz: 0.2 mm noise, 0.1 mm steps;
  1 mrad noise, 0.5 mrad steps;
* the flags ``contact``, ``capture_sensor_1..3``, ``capture``, ``latch_1..6`` at 50 Hz, a
  switch timed to 2 ms;
* the six body rates as the probe-cone recorder's gyros: 10 Hz, 2e-4 rad/s noise,
  1e-4 rad/s steps;
* the leg and ring-pose channels drop out together;
* file units mm, deg, deg/s (converted back to SI on read);
* a record cut to the model window starts at the start plane (telemetry time = the clock
  offset).

How a simulation becomes a record with it: :mod:`recon.recording`. A reconstruction fits the
ring pose, the capture and latch flags and the gyros
(:attr:`models.peripheral.unit.PeripheralUnit.fitted_channels`); the legs are recorded but
not fitted: the ring pose is a function of them, and fitting both would count the ring's
motion twice.
"""
from __future__ import annotations

from models.unit import Sensor, SensorSuite

__all__ = ["SENSORS"]

_POSE = ("ring_x", "ring_y", "ring_z", "ring_roll", "ring_pitch", "ring_yaw")
_LEGS = tuple(f"leg_{i}" for i in range(1, 7))
_RATES = tuple(f"{b}_rate_{a}" for b in ("active", "passive") for a in "xyz")
_FLAGS = ("contact", "capture_sensor_1", "capture_sensor_2", "capture_sensor_3", "capture",
          *(f"latch_{i}" for i in range(1, 7)))

#: The recorder's sensor suite (module docstring), SI
SENSORS = SensorSuite(
    (*(Sensor(c, 2e-4, quantum=1e-4, every=8, file_unit="mm", dropout=True)
       for c in _POSE[:3]),
     *(Sensor(c, 1e-3, quantum=5e-4, every=8, file_unit="deg", dropout=True)
       for c in _POSE[3:]),
     *(Sensor(c, 1e-4, quantum=5e-5, every=4, file_unit="mm", dropout=True) for c in _LEGS),
     *(Sensor(c, 2e-3, every=4) for c in _FLAGS),
     *(Sensor(r, 2e-4, quantum=1e-4, every=20, file_unit="deg/s") for r in _RATES)),
    dt_frame=0.005, cut_start="start_plane")
