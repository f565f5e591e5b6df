"""Report builders, one module per result kind; importing this package registers them all
with :func:`reports.build.register_builder`."""
from reports.builders import (calibration, campaign, hysteresis,  # noqa: F401
                              reconstruction, resonance, resonance_coupling, rig)

__all__: list[str] = []
