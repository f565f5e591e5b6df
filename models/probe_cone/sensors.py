"""The probe-cone unit's flight recorder (its sensor suite, as data).

* a 200 Hz recorder frame; stroke and gimbal angles at 25 Hz, contact / capture / latch flags
  at 50 Hz, the six body rates at 10 Hz (NaN where a channel has no sample);
* white noise and quantization: stroke 0.2 mm noise, 0.5 mm steps; gimbal angles 1 mrad,
  1 mrad steps; gyros 2e-4 rad/s, 1e-4 rad/s steps; a flag's switch seen to 2 ms;
* the stroke and gimbal channels drop out together;
* file units mm, deg, deg/s (converted back to SI on read);
* a record cut to the model window starts at telemetry time 0, so with a positive clock
  offset its first samples lie before the start plane, where the model's free flight covers
  them.

How a simulation becomes a record with it: :mod:`recon.recording`.
"""
from __future__ import annotations

from models.unit import Sensor, SensorSuite

__all__ = ["SENSORS"]

_RATES = tuple(f"{b}_rate_{a}" for b in ("active", "passive") for a in "xyz")

#: The recorder's sensor suite (module docstring), SI
SENSORS = SensorSuite(
    (Sensor("stroke", 2e-4, quantum=5e-4, every=8, file_unit="mm", dropout=True),
     Sensor("gimbal_pitch", 1e-3, quantum=1e-3, every=8, file_unit="deg", dropout=True),
     Sensor("gimbal_yaw", 1e-3, quantum=1e-3, every=8, file_unit="deg", dropout=True),
     Sensor("capture", 2e-3, every=4),
     *(Sensor(r, 2e-4, quantum=1e-4, every=20, file_unit="deg/s") for r in _RATES),
     *(Sensor(c, 2e-3, every=4) for c in ("contact", "bottom_contact", "latch_1", "latch_2",
                                           "latch_3", "latch_4"))),
    dt_frame=0.005, cut_start="record")
