"""A fleet of flights of one as-built unit whose mechanism is not the preset
(:mod:`telemetry_samples.fleet.generate`)."""
