"""Report builders, one module per result kind; importing this package registers them all
with :func:`reports.build.register_builder`."""
from reports.builders import (campaign, hysteresis, reconstruction,  # noqa: F401
                              resonance, rig)

__all__: list[str] = []
